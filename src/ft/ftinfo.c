/*-------------------------------------------------------------------------
 *
 * ftinfo.c
 *	  ft.info, ft.get, ft.keymap_buckets, ft.snapshot and ft.verify: what
 *	  an index holds, found through its manifest and keymap.
 *
 * src/ft/ftinfo.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "compact/compact.h"
#include "graph/graph.h"
#include "hooks/testhooks.h"
#include "jobs/jobs.h"
#include "keymap/keymap.h"
#include "merge/merge.h"
#include "store/store.h"

/* ----------------
 * Finding docs
 * ----------------
 */

/* Where a doc was found, and what it is */
typedef struct FoundDoc
{
	SegvecDocInfo doc;
	float	   *vector;
	int32		segno;			/* 0: the mutable segment */
	bool		found;
} FoundDoc;

typedef struct FindState
{
	uint64		docid;
	FoundDoc   *out;
} FindState;

static void
find_in_mutable(const SegvecDocInfo *doc, const float *vector, int dim,
				void *arg)
{
	FindState  *fs = (FindState *) arg;

	if (doc->docid == fs->docid && !fs->out->found)
	{
		fs->out->doc = *doc;
		fs->out->vector = palloc(sizeof(float) * dim);
		memcpy(fs->out->vector, vector, sizeof(float) * dim);
		fs->out->segno = 0;
		fs->out->found = true;
	}
}

static bool
tombstoned(Relation index, const SegvecSegment *seg, uint32 node)
{
	uint8	   *tomb = GraphGetTombstones(index, seg);
	bool		result;

	result = GraphTombstoneIsSet(tomb, node);
	pfree(tomb);
	return result;
}

/*
 * Find the live doc with this doc id: in an immutable segment (binary
 * search of its doc area, not tombstoned) or the mutable segment.
 */
static bool
find_doc(Relation index, SegvecMetaInfo *info, uint64 docid, FoundDoc *out)
{
	int			i;
	FindState	fs;

	memset(out, 0, sizeof(FoundDoc));
	for (i = 0; i < info->nsegments; i++)
	{
		SegvecSegment *seg = &info->segments[i];
		int64		node = GraphFindDoc(index, seg, docid);

		if (node < 0 || tombstoned(index, seg, (uint32) node))
			continue;
		GraphReadDocs(index, seg, (uint32) node, 1, &out->doc);
		out->vector = palloc(sizeof(float) * info->dimensions);
		GraphReadVector(index, seg, (uint32) node, info->dimensions, out->vector);
		out->segno = seg->segno;
		out->found = true;
		return true;
	}
	fs.docid = docid;
	fs.out = out;
	if (info->dimensions > 0)
		SegvecMutableScanDocs(index, info, find_in_mutable, &fs);
	return out->found;
}

/*
 * Is the heap row the doc points at visible to the snapshot, with this id
 * key?  (Compares the send forms, as the key hash does.)  *found gets the
 * TID of the visible member of the HOT chain.
 */
static bool
heap_row_matches(Relation heap, Relation index, ItemPointer tid,
				 Snapshot snapshot, bytea *keybin, ItemPointer found)
{
	IndexFetchTableData *fetch = table_index_fetch_begin(heap);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	ItemPointerData t = *tid;
	bool		call_again = false;
	bool		all_dead = false;
	bool		match = false;

	if (table_index_fetch_tuple(fetch, &t, snapshot, slot, &call_again,
								&all_dead))
	{
		AttrNumber	attno = index->rd_index->indkey.values[1];
		bool		isnull;
		Datum		value = slot_getattr(slot, attno, &isnull);

		if (!isnull)
		{
			bytea	   *bin = SendFunctionCall(SegvecKeySendProc(index), value);

			match = VARSIZE(bin) == VARSIZE(keybin) &&
				memcmp(VARDATA(bin), VARDATA(keybin), VARSIZE(bin) - VARHDRSZ) == 0;
		}
		*found = slot->tts_tid;
	}
	ExecDropSingleTupleTableSlot(slot);
	table_index_fetch_end(fetch);
	return match;
}

static Relation
open_keyed_index(Oid relid, Relation *heap)
{
	Relation	index;

	*heap = relation_open(SegvecIndexGetHeap(relid), AccessShareLock);
	index = SegvecOpenIndex(relid, AccessShareLock, false);
	if (!SegvecIndexHasKey(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" has no id key",
						RelationGetRelationName(index)),
				 errhint("Create the index with INCLUDE (id), or with ft.create.")));
	return index;
}

/*
 * The id given as text, read as the id type.  A domain is read as its base
 * type (SegvecUncheckedType): its constraint is the table owner's code,
 * which a lookup by id must not run as the caller, and the key hash is of
 * the base type's send form anyway.  An id type that nests a domain is
 * read by its own input function as the table's owner, in a
 * security-restricted operation.
 */
static Datum
key_from_text(Relation heap, Relation index, text *id)
{
	Oid			typid = TupleDescAttr(RelationGetDescr(index), 1)->atttypid;
	Oid			unchecked = SegvecUncheckedType(typid);
	Oid			infunc;
	Oid			ioparam;
	Datum		key;
	SavedIdentity saved;

	if (OidIsValid(unchecked))
	{
		getTypeInputInfo(unchecked, &infunc, &ioparam);
		return OidInputFunctionCall(infunc, text_to_cstring(id), ioparam, -1);
	}
	getTypeInputInfo(typid, &infunc, &ioparam);
	MergeIdentityPush(&saved, heap->rd_rel->relowner);
	key = OidInputFunctionCall(infunc, text_to_cstring(id), ioparam, -1);
	MergeIdentityPop(&saved);
	return key;
}

/*
 * Does row-level security let the current user see the heap row at tid?
 * Asks a query on the table, to which the policies apply as to any query
 * of the caller (a TID scan: one row).
 */
static bool
row_passes_policies(Relation heap, ItemPointer tid)
{
	Oid			argtype = TIDOID;
	Datum		arg = PointerGetDatum(tid);
	bool		visible;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT 1 FROM ONLY %s t WHERE t.ctid OPERATOR(pg_catalog.=) $1",
									   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(heap)),
																  RelationGetRelationName(heap))),
							  1, &argtype, &arg, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not check the row-level security of table \"%s\"",
			 RelationGetRelationName(heap));
	visible = SPI_processed > 0;
	SPI_finish();
	return visible;
}

/* the id's canonical text form (its type's output function) */
static char *
key_to_text(Relation index, Datum key)
{
	Oid			typid = TupleDescAttr(RelationGetDescr(index), 1)->atttypid;
	Oid			outfunc;
	bool		isvarlena;

	getTypeOutputInfo(typid, &outfunc, &isvarlena);
	return OidOutputFunctionCall(outfunc, key);
}

static ArrayType *
vector_array(const float *v, int dim)
{
	Datum	   *elems = palloc(sizeof(Datum) * dim);
	int			i;

	for (i = 0; i < dim; i++)
		elems[i] = Float4GetDatum(v[i]);
	return construct_array(elems, dim, FLOAT4OID, sizeof(float4), true,
						   TYPALIGN_INT);
}

/*
 * ft.get(index regclass, id text) -> (id text, vector real[], segment text,
 *	 docid bigint)
 *
 * The indexed vector of the row with this id that the caller's snapshot
 * sees, and where it lives ('mutable' or 'segment N'); no row if none.
 * The id is given as text and read with the id column type's input
 * function (see key_from_text); the id returned is its canonical text
 * form.  Finds the doc through the keymap, then checks the heap (MVCC, and
 * hash collisions: the id itself is compared) and, when row-level security
 * applies to the caller, that the policies let the caller see the row.
 * Needs SELECT on the table.
 */
PG_FUNCTION_INFO_V1(ft_get);
Datum
ft_get(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	text	   *idtext = PG_GETARG_TEXT_PP(1);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	heap;
	Relation	index;
	Datum		key;
	bytea	   *keybin;
	uint64		key_hash;
	KeymapEntry *entries;
	int			nentries,
				i;
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	ItemPointerData visible_tid;
	bool		rls;

	InitMaterializedSRF(fcinfo, 0);
	index = open_keyed_index(relid, &heap);

	if (pg_class_aclcheck(RelationGetRelid(heap), GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(heap));
	/* errors, as a query would, if row_security = off and policies apply */
	rls = check_enable_rls(RelationGetRelid(heap), InvalidOid, false) ==
		RLS_ENABLED;

	key = key_from_text(heap, index, idtext);
	keybin = SendFunctionCall(SegvecKeySendProc(index), key);
	key_hash = SegvecKeyHashBytes(keybin);
	SegvecGetMetaInfo(index, info);

	nentries = KeymapLookup(index, key_hash, &entries);
	for (i = 0; i < nentries; i++)
	{
		FoundDoc	fd;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		if (!find_doc(index, info, entries[i].docid, &fd))
			continue;
		if (!heap_row_matches(heap, index, &fd.doc.heaptid,
							  GetActiveSnapshot(), keybin, &visible_tid))
			continue;
		if (rls && !row_passes_policies(heap, &visible_tid))
			continue;

		values[0] = CStringGetTextDatum(key_to_text(index, key));
		values[1] = PointerGetDatum(vector_array(fd.vector, info->dimensions));
		values[2] = CStringGetTextDatum(fd.segno == 0 ? "mutable" :
										psprintf("segment %d", fd.segno));
		values[3] = Int64GetDatum((int64) fd.doc.docid);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		break;
	}

	relation_close(index, AccessShareLock);
	relation_close(heap, AccessShareLock);
	return (Datum) 0;
}

/* ----------------
 * ft.info
 * ----------------
 */

typedef struct CountState
{
	int64		n;
} CountState;

static void
count_entry(const KeymapEntry *entry, void *arg)
{
	((CountState *) arg)->n++;
}

/*
 * ft.index_stats(index regclass): the figures behind ft.info (see the SQL
 * definition for the columns).  Needs ownership of the table or
 * pg_read_all_stats (SegvecCheckStatsPrivilege).
 */
PG_FUNCTION_INFO_V1(ft_index_stats);
Datum
ft_index_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	TupleDesc	tupdesc;
	Datum		values[16];
	bool		nulls[16];
	int64		mutable_docs;
	CountState	entries = {0};
	int64		immutable = 0,
				tombstones = 0;
	StringInfoData segs;
	KeymapBucketStat *bstats;
	uint32		epoch = 0;
	int			changed = 0;
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = SegvecOpenIndex(relid, AccessShareLock, false);
	SegvecCheckStatsPrivilege(index);
	SegvecGetMetaInfo(index, info);

	mutable_docs = SegvecMutableCountDocs(index, -1);

	initStringInfo(&segs);
	appendStringInfoChar(&segs, '[');
	for (i = 0; i < info->nsegments; i++)
	{
		SegvecSegment *seg = &info->segments[i];
		int64		codes,
					vectors,
					graph,
					docs;

		immutable += seg->ndocs - seg->ntombstones;
		tombstones += seg->ntombstones;
		GraphSegmentSplit(seg, info->dimensions, &codes, &vectors, &graph,
						  &docs);
		appendStringInfo(&segs, "%s{\"segment\": %u, \"docs\": %u, \"tombstones\": %u, \"pages\": %u, \"bytes\": " INT64_FORMAT ", \"quantization\": \"%s\", \"code_bytes\": " INT64_FORMAT ", \"vector_bytes\": " INT64_FORMAT ", \"graph_bytes\": " INT64_FORMAT ", \"doc_bytes\": " INT64_FORMAT "}",
						 i > 0 ? ", " : "", seg->segno, seg->ndocs,
						 seg->ntombstones, seg->npages,
						 (int64) seg->npages * BLCKSZ,
						 seg->quant == SEGVEC_QUANT_SQ8 ? "sq8" : "none",
						 codes, vectors, graph, docs);
	}
	appendStringInfoChar(&segs, ']');

	bstats = palloc(sizeof(KeymapBucketStat) * SEGVEC_KEYMAP_BUCKETS);
	KeymapBucketStats(index, bstats, &epoch);
	for (i = 0; i < SEGVEC_KEYMAP_BUCKETS; i++)
		if (bstats[i].changes > 0)
			changed++;
	if (SegvecIndexHasKey(index))
		KeymapForEach(index, count_entry, &entries);

	memset(nulls, 0, sizeof(nulls));
	values[0] = Int64GetDatum(mutable_docs + immutable);
	values[1] = Int64GetDatum(mutable_docs);
	values[2] = Int64GetDatum(immutable);
	values[3] = Int64GetDatum(tombstones);
	values[4] = Int32GetDatum(info->nsegments);
	values[5] = DirectFunctionCall1(jsonb_in, CStringGetDatum(segs.data));
	values[6] = Int64GetDatum(entries.n);
	nulls[6] = !SegvecIndexHasKey(index);
	values[7] = Int32GetDatum((int32) epoch);
	values[8] = Int32GetDatum(changed);
	values[9] = Int64GetDatum((int64) RelationGetNumberOfBlocks(index) * BLCKSZ);
	values[10] = Int32GetDatum(info->dimensions);
	values[11] = CStringGetTextDatum(SegvecMetricName(SegvecGetMetric(index)));
	values[12] = Int32GetDatum(info->opts.m);
	values[13] = Int32GetDatum(info->opts.ef_construction);
	values[14] = Int32GetDatum(SegvecCompactThreshold(index));
	values[15] = BoolGetDatum(SegvecJobsEnabled());

	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * ft.keymap_buckets(index regclass) -> (bucket int, snapshot_block bigint,
 *	 snapshot_pages int, snapshot_entries int, changes int)
 *
 * One row per keymap bucket: where its snapshot run is, and how many
 * changes it has had since.  Needs ownership of the table or
 * pg_read_all_stats.
 */
PG_FUNCTION_INFO_V1(ft_keymap_buckets);
Datum
ft_keymap_buckets(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	KeymapBucketStat *bstats;
	uint32		epoch;
	int			b;

	InitMaterializedSRF(fcinfo, 0);
	index = SegvecOpenIndex(relid, AccessShareLock, false);
	SegvecCheckStatsPrivilege(index);
	bstats = palloc(sizeof(KeymapBucketStat) * SEGVEC_KEYMAP_BUCKETS);
	KeymapBucketStats(index, bstats, &epoch);
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = Int32GetDatum(b);
		values[1] = Int64GetDatum((int64) bstats[b].snapshot_start);
		nulls[1] = bstats[b].snapshot_start == InvalidBlockNumber;
		values[2] = Int32GetDatum((int32) bstats[b].snapshot_pages);
		values[3] = Int32GetDatum((int32) bstats[b].snapshot_entries);
		values[4] = Int32GetDatum((int32) bstats[b].changes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}

/*
 * ft.snapshot(index regclass) -> int: write a keymap snapshot now (the
 * snapshot job, in the foreground); returns the new snapshot epoch.
 * Requires ownership of the table.
 */
PG_FUNCTION_INFO_V1(ft_snapshot);
Datum
ft_snapshot(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	heap;
	Relation	index;
	KeymapBucketStat *bstats = palloc(sizeof(KeymapBucketStat) * SEGVEC_KEYMAP_BUCKETS);
	uint32		epoch;

	heap = relation_open(SegvecIndexGetHeap(relid), AccessShareLock);
	index = SegvecOpenIndex(relid, RowExclusiveLock, true);
	SegvecKeymapSnapshot(index);
	KeymapBucketStats(index, bstats, &epoch);
	relation_close(index, RowExclusiveLock);
	relation_close(heap, AccessShareLock);
	PG_RETURN_INT32((int32) epoch);
}

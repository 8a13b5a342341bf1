/*-------------------------------------------------------------------------
 *
 * ftinfo.c
 *	  ft.info, ft.index_stats, ft.get, ft.keymap_buckets, ft.keymap_runs,
 *	  ft.storage_stats and ft.snapshot: what an index holds, found
 *	  through its manifest and keymap (and its docs through
 *	  am/segvecdocs.c).  ft.verify is in ftverify.c.
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
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
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
#include "utils/syscache.h"

#include "am/am.h"
#include "compact/compact.h"
#include "ft/ftquery.h"
#include "hooks/testhooks.h"
#include "jobs/jobs.h"
#include "keymap/keymap.h"
#include "merge/merge.h"
#include "store/store.h"

/* ----------------
 * Finding docs
 * ----------------
 */

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
		AttrNumber	attno = index->rd_index->indkey.values[SegvecIndexKeyColumn(index)];
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
	Oid			typid = TupleDescAttr(RelationGetDescr(index), SegvecIndexKeyColumn(index))->atttypid;
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
 * of the caller (a TID scan: one row).  policyrel is heap, or the
 * partitioned table heap is a partition of: then the query reads the
 * partitioned table (whose policies apply, not the partition's), limited
 * to heap by tableoid.
 */
static bool
row_passes_policies(Relation policyrel, Relation heap, ItemPointer tid)
{
	Oid			argtypes[2] = {TIDOID, OIDOID};
	Datum		args[2];
	bool		visible;
	const char *sql;

	args[0] = PointerGetDatum(tid);
	args[1] = ObjectIdGetDatum(RelationGetRelid(heap));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (policyrel == heap)
		sql = psprintf("SELECT 1 FROM ONLY %s t WHERE t.ctid OPERATOR(pg_catalog.=) $1",
					   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(heap)),
												  RelationGetRelationName(heap)));
	else
		sql = psprintf("SELECT 1 FROM %s t WHERE t.tableoid OPERATOR(pg_catalog.=) $2"
					   " AND t.ctid OPERATOR(pg_catalog.=) $1",
					   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(policyrel)),
												  RelationGetRelationName(policyrel)));
	if (SPI_execute_with_args(sql, policyrel == heap ? 1 : 2, argtypes, args,
							  NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not check the row-level security of table \"%s\"",
			 RelationGetRelationName(policyrel));
	visible = SPI_processed > 0;
	SPI_finish();
	return visible;
}

/* the id's canonical text form (its type's output function) */
static char *
key_to_text(Relation index, Datum key)
{
	Oid			typid = TupleDescAttr(RelationGetDescr(index), SegvecIndexKeyColumn(index))->atttypid;
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
 * get_one: ft.get on the (not partitioned) segvec index relid: put the row
 * with this id that the caller's snapshot sees into rsinfo's tuplestore;
 * returns whether there was one.  policyrel, when not NULL, is the
 * partitioned table whose privileges (checked by the caller) and
 * row-level security (rls: whether it applies) stand for the index's
 * table, a partition of it; when NULL, the index's own table's are
 * checked here.
 */
static bool
get_one(Oid relid, text *idtext, Relation policyrel, bool rls,
		ReturnSetInfo *rsinfo)
{
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
	bool		found = false;

	index = open_keyed_index(relid, &heap);

	if (policyrel == NULL)
	{
		if (pg_class_aclcheck(RelationGetRelid(heap), GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(heap));
		/* errors, as a query would, if row_security = off and policies apply */
		rls = check_enable_rls(RelationGetRelid(heap), InvalidOid, false) ==
			RLS_ENABLED;
	}

	key = key_from_text(heap, index, idtext);
	keybin = SendFunctionCall(SegvecKeySendProc(index), key);
	key_hash = SegvecKeyHashBytes(keybin);
	SegvecGetMetaInfo(index, info);

	nentries = KeymapLookup(index, key_hash, &entries);
	for (i = 0; i < nentries; i++)
	{
		SegvecFoundDoc fd;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		if (!SegvecFetchDoc(index, info, entries[i].docid, &fd))
			continue;
		if (!heap_row_matches(heap, index, &fd.doc.heaptid,
							  GetActiveSnapshot(), keybin, &visible_tid))
			continue;
		if (rls && !row_passes_policies(policyrel ? policyrel : heap, heap,
										&visible_tid))
			continue;

		values[0] = CStringGetTextDatum(key_to_text(index, key));
		values[1] = PointerGetDatum(vector_array(fd.vector, info->dimensions));
		values[2] = CStringGetTextDatum(fd.segno != 0 ?
										psprintf("segment %d", fd.segno) :
										(fd.doc.flags & SEGVEC_DOC_ALIAS) ?
										"mutable (alias)" : "mutable");
		values[3] = Int64GetDatum((int64) fd.doc.docid);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		found = true;
		break;
	}

	relation_close(index, AccessShareLock);
	relation_close(heap, AccessShareLock);
	return found;
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
	Relation	parent = NULL;
	Relation	policyrel;
	List	   *leaves;
	ListCell   *lc;
	bool		rls;

	/*
	 * A Citus table: the shard that holds the id answers (through
	 * Citus, as the caller: the shard's privileges and policies are the
	 * table's, which Citus propagates)
	 */
	if (FtFanOutKind(relid) == FT_FANOUT_CITUS)
		return FtFanOut(fcinfo,
						psprintf("SELECT g.id, g.vector, g.segment, g.docid FROM %s g"
								 " ORDER BY g.ord LIMIT 1",
								 FtFanOutSource(fcinfo, FT_FANOUT_CITUS,
												psprintf("ft.get(%%s, %s)",
														 FtTextLiteral(text_to_cstring(idtext))),
												NULL, false)));

	InitMaterializedSRF(fcinfo, 0);

	/*
	 * A partitioned index: the privileges and policies are those of the
	 * partitioned table (a query of it checks no partition's), and the id
	 * is looked up in each partition's keymap until one holds it.
	 */
	if (SegvecRelidIsPartitionedIndex(relid))
	{
		leaves = SegvecPartitionIndexes(relid);
		parent = relation_open(IndexGetRelation(relid, false),
							   AccessShareLock);
		policyrel = parent;
	}
	else
	{
		leaves = list_make1_oid(relid);
		policyrel = NULL;
	}

	rls = false;
	if (parent != NULL)
	{
		if (pg_class_aclcheck(RelationGetRelid(parent), GetUserId(),
							  ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE,
						   RelationGetRelationName(parent));
		rls = check_enable_rls(RelationGetRelid(parent), InvalidOid, false) ==
			RLS_ENABLED;
	}

	foreach(lc, leaves)
	{
		if (get_one(lfirst_oid(lc), idtext, policyrel, rls, rsinfo))
			break;
	}

	if (parent != NULL)
		relation_close(parent, AccessShareLock);
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
	int			kind;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/*
	 * A partitioned index: the partitions' figures, counts and sizes
	 * summed, their segments listed in partition order (each with its
	 * index), the newest keymap epoch; the options are the same in every
	 * partition.
	 */
	kind = FtFanOutKind(relid);
	if (kind != FT_FANOUT_NONE)
	{
		FtCheckPartitionedOwner(relid, true);
		return FtFanOut(fcinfo,
						psprintf("WITH s AS MATERIALIZED (SELECT * FROM %s f)"
								 " SELECT COALESCE(sum(s.num_docs), 0)::pg_catalog.int8,"
								 " COALESCE(sum(s.mutable_docs), 0)::pg_catalog.int8,"
								 " COALESCE(sum(s.immutable_docs), 0)::pg_catalog.int8,"
								 " COALESCE(sum(s.tombstones), 0)::pg_catalog.int8,"
								 " COALESCE(sum(s.num_segments), 0)::pg_catalog.int4,"
								 " COALESCE((SELECT pg_catalog.jsonb_agg(e.v OPERATOR(pg_catalog.||)"
								 "   pg_catalog.jsonb_build_object('index', s2.idx)"
								 "   ORDER BY s2.ord, e.o)"
								 "  FROM s s2, pg_catalog.jsonb_array_elements(s2.segments)"
								 "   WITH ORDINALITY e(v, o)), '[]'::pg_catalog.jsonb),"
								 " sum(s.keymap_entries)::pg_catalog.int8,"
								 " COALESCE(max(s.keymap_epoch), 0),"
								 " COALESCE(sum(s.keymap_buckets_changed), 0)::pg_catalog.int4,"
								 " COALESCE(sum(s.index_bytes), 0)::pg_catalog.int8,"
								 " COALESCE(max(s.dimensions), 0),"
								 " min(s.metric), min(s.m), min(s.ef_construction),"
								 " min(s.compact_threshold), ft.background_enabled()"
								 " FROM s",
								 FtFanOutSource(fcinfo, kind, "ft.index_stats(%s)",
												NULL, false)));
	}

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
		SegvecSegmentBytes(seg, info->dimensions, &codes, &vectors, &graph,
						   &docs);
		appendStringInfo(&segs, "%s{\"segment\": %u, \"docs\": %u, \"tombstones\": %u, \"pages\": %u, \"bytes\": " INT64_FORMAT ", \"quantization\": \"%s\", \"code_bytes\": " INT64_FORMAT ", \"vector_bytes\": " INT64_FORMAT ", \"graph_bytes\": " INT64_FORMAT ", \"doc_bytes\": " INT64_FORMAT "}",
						 i > 0 ? ", " : "", seg->segno, seg->ndocs,
						 seg->ntombstones, seg->npages,
						 (int64) seg->npages * BLCKSZ,
						 seg->quant == SEGVEC_QUANT_SQ8 ? "sq8" :
						 seg->quant == SEGVEC_QUANT_RABITQ ? "rabitq" : "none",
						 codes, vectors, graph, docs);
	}
	appendStringInfoChar(&segs, ']');

	bstats = palloc(sizeof(KeymapBucketStat) * SEGVEC_KEYMAP_BUCKETS);
	KeymapBucketStats(index, bstats, &epoch, false);
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
	/* none yet if the first insert rolled back (SegvecSetDimensions) */
	values[10] = Int32GetDatum(SegvecDimensionsXidAborted(info->dimensions_xid) ?
							   0 : info->dimensions);
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
 * ft.info(index regclass) -> one row: ft.index_stats, the index's queued
 * upserts and merges (ft.merge_stats) and the server's background work
 * (ft.job_stats summed); see src/sql/70_info.sql for the columns.
 *
 * In C rather than PL/pgSQL only so that the common mistakes, an index of
 * another access method or a table, or an index the caller may not read,
 * get their error (and a hint) alone, checked before any SQL runs, not
 * under a CONTEXT of the SQL inside.
 * Runs with the search_path its definition pins.
 */
PG_FUNCTION_INFO_V1(ft_info);
Datum
ft_info(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	TupleDesc	tupdesc;
	HeapTuple	tp;
	char		relkind;
	Oid			relam;
	char	   *name;
	char	   *amname;
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		args[1];
	HeapTupleHeader result;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tp))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", relid)));
	relkind = ((Form_pg_class) GETSTRUCT(tp))->relkind;
	relam = ((Form_pg_class) GETSTRUCT(tp))->relam;
	name = pstrdup(NameStr(((Form_pg_class) GETSTRUCT(tp))->relname));
	ReleaseSysCache(tp);
	amname = OidIsValid(relam) ? get_am_name(relam) : NULL;
	if ((relkind != RELKIND_INDEX && relkind != RELKIND_PARTITIONED_INDEX) ||
		amname == NULL || strcmp(amname, "segvec") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a segvec index", name),
				 errhint("ft.info takes an index created USING segvec, or a partitioned index of such indexes.")));

	/* what ft.index_stats checks, before any SQL runs (see above) */
	if (FtFanOutKind(relid) != FT_FANOUT_NONE)
		FtCheckPartitionedOwner(relid, true);
	else
	{
		Relation	index = SegvecOpenIndex(relid, AccessShareLock, false);

		SegvecCheckStatsPrivilege(index);
		relation_close(index, AccessShareLock);
	}

	args[0] = ObjectIdGetDatum(relid);
	SPI_connect();
	if (SPI_execute_with_args("SELECT s.num_docs, s.mutable_docs, s.immutable_docs,"
							  " s.tombstones, s.num_segments, s.segments,"
							  " s.keymap_entries, s.keymap_epoch,"
							  " s.keymap_buckets_changed, s.index_bytes,"
							  " s.dimensions, s.metric, s.m, s.ef_construction,"
							  " s.compact_threshold, s.background_work,"
							  " ms.pending, ms.oldest_pending_at,"
							  " ms.merge_index_built_total, ms.merges_total,"
							  " j.run, j.coalesced, j.failed,"
							  " ARRAY(SELECT pg_catalog.pg_get_indexdef($1, k, true)"
							  "  FROM pg_catalog.generate_series(2,"
							  "   (SELECT i.indnkeyatts FROM pg_catalog.pg_index i"
							  "     WHERE i.indexrelid = $1)) k ORDER BY k)"
							  " FROM ft.index_stats($1) s"
							  " LEFT JOIN LATERAL (SELECT * FROM ft.merge_stats($1)"
							  " LIMIT 1) ms ON true,"
							  " (SELECT COALESCE(sum(j.run), 0)::bigint AS run,"
							  " COALESCE(sum(j.coalesced), 0)::bigint AS coalesced,"
							  " COALESCE(sum(j.failed), 0)::bigint AS failed"
							  " FROM ft.job_stats() j) j",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "ft.info: ft.index_stats returned no row");
	result = SPI_returntuple(SPI_tuptable->vals[0], BlessTupleDesc(tupdesc));
	SPI_finish();
	PG_RETURN_HEAPTUPLEHEADER(result);
}

/*
 * ft.keymap_buckets(index regclass) -> (bucket int, snapshot_entries bigint,
 *	 changes int)
 *
 * One row per keymap bucket: the entries the snapshot's runs hold for it,
 * and how many changes it has had since.  Needs ownership of the table or
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
	int			kind;

	/* a partitioned index: each bucket's figures summed over partitions */
	kind = FtFanOutKind(relid);
	if (kind != FT_FANOUT_NONE)
	{
		FtCheckPartitionedOwner(relid, true);
		return FtFanOut(fcinfo,
						psprintf("SELECT b.bucket,"
								 " sum(b.snapshot_entries)::pg_catalog.int8,"
								 " sum(b.changes)::pg_catalog.int4"
								 " FROM %s b GROUP BY b.bucket ORDER BY b.bucket",
								 FtFanOutSource(fcinfo, kind, "ft.keymap_buckets(%s)",
												NULL, false)));
	}

	InitMaterializedSRF(fcinfo, 0);
	index = SegvecOpenIndex(relid, AccessShareLock, false);
	SegvecCheckStatsPrivilege(index);
	bstats = palloc(sizeof(KeymapBucketStat) * SEGVEC_KEYMAP_BUCKETS);
	KeymapBucketStats(index, bstats, &epoch, true);
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum(b);
		values[1] = Int64GetDatum((int64) bstats[b].snapshot_entries);
		values[2] = Int32GetDatum((int32) bstats[b].changes);
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
	int			kind;

	/* a partitioned index: a snapshot of each; the newest epoch */
	kind = FtFanOutKind(relid);
	if (kind != FT_FANOUT_NONE)
	{
		FtCheckPartitionedOwner(relid, false);
		return FtFanOut(fcinfo,
						psprintf("SELECT COALESCE(max(s.snapshot), 0) FROM %s s",
								 FtFanOutSource(fcinfo, kind,
												"(SELECT ft.snapshot(%s) AS snapshot)",
												"snapshot pg_catalog.int4", true)));
	}

	heap = relation_open(SegvecIndexGetHeap(relid), AccessShareLock);
	index = SegvecOpenIndex(relid, RowExclusiveLock, true);
	SegvecKeymapSnapshot(index);
	KeymapBucketStats(index, bstats, &epoch, false);
	relation_close(index, RowExclusiveLock);
	relation_close(heap, AccessShareLock);
	PG_RETURN_INT32((int32) epoch);
}

/*
 * ft.keymap_runs(index regclass) -> (run int, tier int, block bigint,
 *	 pages int, entries bigint, removes bigint)
 *
 * The runs of the keymap snapshot, oldest first.  Needs ownership of the
 * table or pg_read_all_stats.
 */
PG_FUNCTION_INFO_V1(ft_keymap_runs);
Datum
ft_keymap_runs(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	uint32		r;

	InitMaterializedSRF(fcinfo, 0);
	index = SegvecOpenIndex(relid, AccessShareLock, false);
	SegvecCheckStatsPrivilege(index);
	SegvecGetMetaInfo(index, info);
	for (r = 0; r < info->keymap_nruns; r++)
	{
		SegvecKeymapRun *run = &info->keymap_runs[r];
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		values[0] = Int32GetDatum((int32) run->runno);
		values[1] = Int32GetDatum(KeymapRunTier(run));
		values[2] = Int64GetDatum((int64) run->start);
		values[3] = Int32GetDatum((int32) run->npages);
		values[4] = Int64GetDatum((int64) run->nentries);
		values[5] = Int64GetDatum((int64) run->nremoves);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SegvecFreeMetaInfo(info);
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}

/*
 * ft.storage_stats(index regclass): the index's lifecycle counters and its
 * free space (see the SQL definition for the columns).  Needs ownership of
 * the table or pg_read_all_stats.
 */
PG_FUNCTION_INFO_V1(ft_storage_stats);
Datum
ft_storage_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	TupleDesc	tupdesc;
	Datum		values[13];
	bool		nulls[13];
	int64		free_pages = 0;
	int64		waiting_pages = 0;
	int64		run_pages = 0;
	int64		segment_pages = 0;
	int64		mutable_pages = 0;
	int64		delta_pages = 0;
	int64		recyclable_pages = 0;
	BlockNumber nblocks,
				blkno;
	BufferAccessStrategy strategy;
	uint32		i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = SegvecOpenIndex(relid, AccessShareLock, false);
	SegvecCheckStatsPrivilege(index);
	SegvecGetMetaInfo(index, info);
	for (i = 0; i < info->nfree; i++)
	{
		free_pages += info->free[i].npages;
		if (!SegvecFreeExtentReusable(&info->free[i]))
			waiting_pages += info->free[i].npages;
	}
	for (i = 0; i < info->keymap_nruns; i++)
		run_pages += info->keymap_runs[i].npages;

	/* what the other pages are, from their flags (a pass over the index) */
	strategy = GetAccessStrategy(BAS_BULKREAD);
	nblocks = RelationGetNumberOfBlocks(index);
	for (blkno = SEGVEC_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		uint16		flags;

		CHECK_FOR_INTERRUPTS();
		if (SegvecBlockIsFree(info->free, info->nfree, blkno))
			continue;
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
								 strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		flags = PageIsNew(page) ? 0 : SegvecPageGetOpaque(page)->flags;
		UnlockReleaseBuffer(buf);
		if (flags == 0 || (flags & SEGVEC_PAGE_DELETED))
			recyclable_pages++;
		else if (flags & SEGVEC_PAGE_MUTABLE)
			mutable_pages++;
		else if (flags & SEGVEC_PAGE_KEYMAP_DELTA)
			delta_pages++;
		else if (flags & SEGVEC_PAGE_SEGMENT)
			segment_pages++;
	}
	FreeAccessStrategy(strategy);

	memset(nulls, 0, sizeof(nulls));
	values[0] = Int64GetDatum((int64) info->ncompactions);
	values[1] = Int64GetDatum((int64) info->nmerges);
	values[2] = Int64GetDatum((int64) info->nrun_merges);
	values[3] = Int32GetDatum((int32) info->keymap_nruns);
	values[4] = Int64GetDatum(run_pages);
	values[5] = Int32GetDatum((int32) info->nfree);
	values[6] = Int64GetDatum(free_pages);
	values[7] = Int64GetDatum(segment_pages);
	values[8] = Int64GetDatum(mutable_pages);
	values[9] = Int64GetDatum(delta_pages);
	values[10] = Int64GetDatum(recyclable_pages);
	values[11] = Int64GetDatum((int64) nblocks);
	values[12] = Int64GetDatum(waiting_pages);

	SegvecFreeMetaInfo(info);
	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* One row of ft.storage_map under construction: a run of like blocks */
typedef struct StorageRun
{
	BlockNumber start;
	BlockNumber npages;
	const char *kind;
	int64		segno;			/* -1: none */
} StorageRun;

static void
storage_map_emit(ReturnSetInfo *rsinfo, const StorageRun *run)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (run->npages == 0)
		return;
	values[0] = Int64GetDatum((int64) run->start);
	values[1] = Int64GetDatum((int64) run->npages);
	values[2] = CStringGetTextDatum(run->kind);
	if (run->segno >= 0)
		values[3] = Int64GetDatum(run->segno);
	else
		nulls[3] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * ft.storage_map(index regclass) -> (block bigint, pages bigint, kind text,
 *	 segment bigint)
 *
 * The index's blocks in order, as runs of blocks of one kind: the
 * metapage; a graph segment's extent (segment: its number); free extents,
 * reusable or not yet; keymap snapshot runs; and, from their page flags,
 * mutable-segment pages, keymap change pages, manifest overflow pages,
 * pages of a segment that no manifest lists (a merge under way, or one a
 * crash cut short), and pages deleted or never used.  What keeps an index
 * bigger than its pages in use shows here: which blocks split its free
 * space.  One pass over the index; needs ownership of the table or
 * pg_read_all_stats.
 */
PG_FUNCTION_INFO_V1(ft_storage_map);
Datum
ft_storage_map(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	BufferAccessStrategy strategy;
	BlockNumber nblocks,
				blkno;
	StorageRun	run = {0, 0, NULL, -1};

	InitMaterializedSRF(fcinfo, 0);
	index = SegvecOpenIndex(relid, AccessShareLock, false);
	SegvecCheckStatsPrivilege(index);
	SegvecGetMetaInfo(index, info);

	strategy = GetAccessStrategy(BAS_BULKREAD);
	nblocks = RelationGetNumberOfBlocks(index);
	for (blkno = 0; blkno < nblocks; blkno++)
	{
		const char *kind = NULL;
		int64		segno = -1;
		BlockNumber span = 1;
		uint32		i;

		CHECK_FOR_INTERRUPTS();
		if (blkno == SEGVEC_METAPAGE_BLKNO)
			kind = "metapage";
		for (i = 0; kind == NULL && i < info->nfree; i++)
		{
			const SegvecFreeExtent *f = &info->free[i];

			if (blkno >= f->start && blkno < f->start + f->npages)
			{
				kind = SegvecFreeExtentReusable(f) ? "free" : "free (waiting)";
				span = f->start + f->npages - blkno;
			}
		}
		for (i = 0; kind == NULL && i < info->nsegments; i++)
		{
			const SegvecSegment *s = &info->segments[i];

			if (blkno >= s->start && blkno < s->start + s->npages)
			{
				kind = "segment";
				segno = s->segno;
				span = s->start + s->npages - blkno;
			}
		}
		for (i = 0; kind == NULL && i < info->keymap_nruns; i++)
		{
			const SegvecKeymapRun *r = &info->keymap_runs[i];

			if (blkno >= r->start && blkno < r->start + r->npages)
			{
				kind = "keymap run";
				span = r->start + r->npages - blkno;
			}
		}
		if (kind == NULL)
		{
			Buffer		buf;
			Page		page;
			uint16		flags;

			buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
									 strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			flags = PageIsNew(page) ? 0 : SegvecPageGetOpaque(page)->flags;
			UnlockReleaseBuffer(buf);
			if (flags == 0 || (flags & SEGVEC_PAGE_DELETED))
				kind = "recyclable";
			else if (flags & SEGVEC_PAGE_MUTABLE)
				kind = "mutable";
			else if (flags & SEGVEC_PAGE_KEYMAP_DELTA)
				kind = "keymap changes";
			else if (flags & SEGVEC_PAGE_MANIFEST)
				kind = "manifest";
			else if (flags & SEGVEC_PAGE_SEGMENT)
				kind = "segment (unlisted)";
			else if (flags & SEGVEC_PAGE_KEYMAP_RUN)
				kind = "keymap run (unlisted)";
			else
				kind = "other";
		}

		/* extend the current run, or emit it and start another */
		if (run.kind != NULL && strcmp(run.kind, kind) == 0 &&
			run.segno == segno && run.start + run.npages == blkno)
			run.npages += span;
		else
		{
			if (run.kind != NULL)
				storage_map_emit(rsinfo, &run);
			run.start = blkno;
			run.npages = span;
			run.kind = kind;
			run.segno = segno;
		}
		blkno += span - 1;
	}
	if (run.kind != NULL)
		storage_map_emit(rsinfo, &run);
	FreeAccessStrategy(strategy);
	SegvecFreeMetaInfo(info);
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}

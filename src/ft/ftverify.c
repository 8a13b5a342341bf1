/*-------------------------------------------------------------------------
 *
 * ftverify.c
 *	  ft.verify: check an index against its table and its own invariants,
 *	  and optionally repair it; ft._stage_phantom, a test hook that breaks
 *	  an index the way a lost doc would.
 *
 * ft.verify checks that
 *	- every heap row visible to the caller's snapshot with a non-NULL vector
 *	  is indexed exactly once (by its HOT chain's root TID, as the heap scan
 *	  of CREATE INDEX CONCURRENTLY and amcheck see it);
 *	- no doc id is held twice (two live segments, or a segment and the
 *	  mutable segment);
 *	- every keymap entry is backed by a live doc with the same key hash and
 *	  vector checksum (else it is a phantom), and every keyed doc has one;
 *	- every alias of the mutable segment resolves to a vector with its
 *	  checksum (counted as a mismatch otherwise);
 *	- in an index with filter columns, each checked row's doc holds the
 *	  filter values an insert forms from the row (a mismatch otherwise);
 *	- a graph segment's postings hold what its filter values give (a
 *	  mismatch otherwise);
 *	- each checked row is found by its own vector with k = 1 (or a row at
 *	  distance 0, an identical vector), for up to search_limit rows;
 *	- every live node of every graph segment is reachable on layer 0 from
 *	  the segment's entry point (else no search can return it).
 * With repair => true it drops phantom entries, adds missing entries and
 * indexes missing rows from the heap.
 *
 * XXX: the docs' identities are held in memory (48 bytes a doc); a very
 * big index would want a tuplesort here.
 *
 * src/ft/ftverify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "catalog/index.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "am/am.h"
#include "ft/ftquery.h"
#include "hooks/testhooks.h"
#include "keymap/keymap.h"
#include "merge/merge.h"
#include "store/store.h"


#define MAX_EXAMPLES 10

typedef struct VerifyDoc
{
	SegvecDocInfo doc;
	int32		segno;			/* 0: mutable segment */
	bool		has_entry;
	int64		fidx;			/* its filter entry in filters, or -1 */
} VerifyDoc;

typedef struct VerifyState
{
	Relation	heap;
	Relation	index;
	SegvecMetaInfo *info;
	bool		repair;
	int64		search_limit;

	VerifyDoc  *docs;			/* sorted by doc id */
	int64		ndocs;
	int64		maxdocs;
	VerifyDoc **bytid;			/* the same, sorted by heap TID */
	KeymapEntry *entries;		/* the keymap, read first */
	int64		nentries;
	int64		maxentries;
	int32		cur_segno;
	Size		fbytes;			/* a filter entry's bytes, 0: no filters */
	char	   *filters;		/* the docs' filter entries */
	int64		nfilters;
	int64		maxfilters;
	const char *cur_filter;		/* a segment doc's entry, for collect_doc */

	int64		heap_rows;
	int64		missing_docs;
	int64		duplicate_docs;
	int64		docs_twice;
	int64		keymap_entries;
	int64		phantoms;
	int64		mismatches;
	int64		missing_entries;
	int64		search_checked;
	int64		search_misses;
	int64		unreachable;
	int64		repaired;
	List	   *examples;

	IndexScanDesc scan;			/* for the k = 1 checks */
	ScanKeyData orderby;
} VerifyState;

static void
example(VerifyState *vs, const char *fmt,...) pg_attribute_printf(2, 3);

static void
example(VerifyState *vs, const char *fmt,...)
{
	va_list		args;
	char		buf[256];

	if (list_length(vs->examples) >= MAX_EXAMPLES)
		return;
	va_start(args, fmt);
	vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	vs->examples = lappend(vs->examples, pstrdup(buf));
}

static void
collect_doc(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;

	/* an alias shares its target's vector: the checksums must agree */
	if ((doc->flags & SEGVEC_DOC_ALIAS) &&
		SegvecVectorChecksum(vector, dim) != doc->checksum)
	{
		vs->mismatches++;
		example(vs, "alias doc id " UINT64_FORMAT " has another vector than its checksum says",
				doc->docid);
	}

	if (vs->ndocs >= vs->maxdocs)
	{
		vs->maxdocs = Max(1024, vs->maxdocs * 2);
		vs->docs = vs->docs == NULL ?
			MemoryContextAllocHuge(CurrentMemoryContext, sizeof(VerifyDoc) * vs->maxdocs) :
			repalloc_huge(vs->docs, sizeof(VerifyDoc) * vs->maxdocs);
	}
	vs->docs[vs->ndocs].doc = *doc;
	vs->docs[vs->ndocs].segno = vs->cur_segno;
	vs->docs[vs->ndocs].has_entry = false;
	vs->docs[vs->ndocs].fidx = -1;

	/* its filter entry: after a mutable doc's vector, or the segment's */
	if (vs->fbytes > 0 && (vector != NULL || vs->cur_filter != NULL))
	{
		if (vs->nfilters >= vs->maxfilters)
		{
			vs->maxfilters = Max(1024, vs->maxfilters * 2);
			vs->filters = vs->filters == NULL ?
				MemoryContextAllocHuge(CurrentMemoryContext,
									   vs->fbytes * vs->maxfilters) :
				repalloc_huge(vs->filters, vs->fbytes * vs->maxfilters);
		}
		memcpy(vs->filters + vs->fbytes * vs->nfilters,
			   vector != NULL ? SegvecDocFilterEntry(vector, dim) :
			   vs->cur_filter, vs->fbytes);
		vs->docs[vs->ndocs].fidx = vs->nfilters++;
	}
	vs->ndocs++;
}

/*
 * SegvecDocGoneCallback: an alias whose target and row are gone, or a
 * stale doc (a rolled-back vector of another length).  Neither is
 * searched, but each is in the mutable segment with its keymap entry
 * until VACUUM or the next compaction removes both: a doc, not a phantom.
 */
static void
collect_gone(const SegvecDocInfo *doc, void *arg)
{
	SegvecDocInfo d = *doc;

	d.flags &= ~SEGVEC_DOC_ALIAS;
	collect_doc(&d, NULL, 0, arg);
}

static int
docid_cmp(const void *a, const void *b)
{
	uint64		da = ((const VerifyDoc *) a)->doc.docid;
	uint64		db = ((const VerifyDoc *) b)->doc.docid;

	return da < db ? -1 : (da > db ? 1 : 0);
}

static int
tid_cmp(const void *a, const void *b)
{
	const VerifyDoc *da = *(VerifyDoc *const *) a;
	const VerifyDoc *db = *(VerifyDoc *const *) b;

	return ItemPointerCompare((ItemPointer) &da->doc.heaptid,
							  (ItemPointer) &db->doc.heaptid);
}

static VerifyDoc *
find_docid(VerifyState *vs, uint64 docid)
{
	int64		lo = 0,
				hi = vs->ndocs - 1;

	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (vs->docs[mid].doc.docid == docid)
			return &vs->docs[mid];
		if (vs->docs[mid].doc.docid < docid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* KeymapForEach callback: keep the entry */
static void
collect_entry(const KeymapEntry *entry, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;

	if (vs->nentries >= vs->maxentries)
	{
		vs->maxentries = Max(1024, vs->maxentries * 2);
		vs->entries = vs->entries == NULL ?
			MemoryContextAllocHuge(CurrentMemoryContext, sizeof(KeymapEntry) * vs->maxentries) :
			repalloc_huge(vs->entries, sizeof(KeymapEntry) * vs->maxentries);
	}
	vs->entries[vs->nentries++] = *entry;
}

/* Does the keymap have this doc's entry now? */
static bool
entry_exists(VerifyState *vs, const SegvecDocInfo *doc)
{
	KeymapEntry *entries;
	int			n = KeymapLookup(vs->index, doc->key_hash, &entries);
	int			i;

	for (i = 0; i < n; i++)
		if (entries[i].docid == doc->docid)
			return true;
	return false;
}

/* Does the snapshot see the heap row (or its HOT chain) at tid? */
static bool
row_visible(VerifyState *vs, const ItemPointerData *tid, Snapshot snapshot)
{
	IndexFetchTableData *fetch = table_index_fetch_begin(vs->heap);
	TupleTableSlot *slot = table_slot_create(vs->heap, NULL);
	ItemPointerData t = *tid;
	bool		call_again = false;
	bool		all_dead = false;
	bool		found;

	found = table_index_fetch_tuple(fetch, &t, snapshot, slot, &call_again,
									&all_dead);
	ExecDropSingleTupleTableSlot(slot);
	table_index_fetch_end(fetch);
	return found;
}

/* Is the entry backed by a live doc? */
static void
check_entry(const KeymapEntry *entry, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;
	VerifyDoc  *d = find_docid(vs, entry->docid);

	vs->keymap_entries++;
	if (d == NULL)
	{
		vs->phantoms++;
		example(vs, "phantom keymap entry: key hash %016llx, doc id " UINT64_FORMAT,
				(unsigned long long) entry->key_hash, entry->docid);
		if (vs->repair)
		{
			KeymapRemove(vs->index, entry);
			vs->repaired++;
		}
		return;
	}
	if (d->doc.key_hash != entry->key_hash || d->doc.checksum != entry->checksum)
	{
		vs->mismatches++;
		example(vs, "keymap entry of doc id " UINT64_FORMAT " does not match the doc's key hash or vector checksum",
				entry->docid);
	}
	d->has_entry = true;
}

/* Index a heap row the index lacks, as aminsert would */
static void
reindex_row(VerifyState *vs, ItemPointer tid, Datum *values, bool *isnull)
{
	SegvecDocInfo doc;
	bool		page_added;
	float	   *vector;
	int			dim;

	int			keycol = SegvecIndexKeyColumn(vs->index);
	int			nfilters = SegvecIndexFilterCount(vs->index);
	char	   *filters = NULL;

	vector = SegvecDatumGetVector(vs->index, values[0], &dim);
	memset(&doc, 0, sizeof(doc));
	doc.heaptid = *tid;
	doc.checksum = SegvecVectorChecksum(vector, dim);
	if (SegvecIndexHasKey(vs->index) && !isnull[keycol])
	{
		doc.key_hash = SegvecKeyHash(vs->index, values[keycol]);
		doc.flags |= SEGVEC_DOC_HAS_KEY;
	}
	if (nfilters > 0)
	{
		filters = palloc0(SEGVEC_FILTER_ENTRY_BYTES(nfilters));
		SegvecFilterFormEntry(vs->index, values, isnull, filters);
	}
	doc.docid = SegvecMutableAppendFiltered(vs->index, &doc, vector, dim,
											filters, &page_added);
	KeymapAddDoc(vs->index, &doc);
	vs->repaired++;
}

/* Per visible heap row (table_index_build_scan callback) */
static void
check_row(Relation index, ItemPointer tid, Datum *values, bool *isnull,
		  bool tupleIsAlive, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;
	VerifyDoc	key;
	VerifyDoc  *keyp = &key;
	VerifyDoc **hit;
	VerifyDoc **first = NULL;
	int64		n = 0;

	if (isnull[0])
		return;
	vs->heap_rows++;
	CHECK_FOR_INTERRUPTS();

	key.doc.heaptid = *tid;
	hit = bsearch(&keyp, vs->bytid, vs->ndocs, sizeof(VerifyDoc *), tid_cmp);
	if (hit != NULL)
	{
		VerifyDoc **lo = hit,
				  **hi = hit;

		while (lo > vs->bytid && tid_cmp(lo - 1, &keyp) == 0)
			lo--;
		while (hi < vs->bytid + vs->ndocs - 1 && tid_cmp(hi + 1, &keyp) == 0)
			hi++;
		n = hi - lo + 1;
		first = lo;
	}

	if (n == 0)
	{
		vs->missing_docs++;
		example(vs, "heap row (%u,%u) is not indexed",
				ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
		if (vs->repair)
			reindex_row(vs, tid, values, isnull);
		return;
	}
	if (n > 1)
	{
		vs->duplicate_docs += n - 1;
		example(vs, "heap row (%u,%u) is indexed %lld times",
				ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
				(long long) n);
	}

	/* the doc's filter values are the row's */
	if (vs->fbytes > 0)
	{
		char		entry[SEGVEC_FILTER_MAX_BYTES];
		int64		k;

		SegvecFilterFormEntry(index, values, isnull, entry);
		for (k = 0; k < n; k++)
		{
			VerifyDoc  *d = first[k];

			if (d->fidx >= 0 &&
				memcmp(vs->filters + vs->fbytes * d->fidx, entry,
					   vs->fbytes) != 0)
			{
				vs->mismatches++;
				example(vs, "doc id " UINT64_FORMAT " has other filter values than its heap row (%u,%u)",
						d->doc.docid, ItemPointerGetBlockNumber(tid),
						ItemPointerGetOffsetNumber(tid));
			}
		}
	}

	/* found by its own vector with k = 1? */
	if (vs->search_checked < vs->search_limit)
	{
		ItemPointer found;

		vs->orderby.sk_argument = values[0];
		vs->orderby.sk_flags = 0;
		index_rescan(vs->scan, NULL, 0, &vs->orderby, 1);
		found = index_getnext_tid(vs->scan, ForwardScanDirection);
		vs->search_checked++;
		if (found == NULL ||
			(!ItemPointerEquals(found, tid) && !(SegvecScanLastDistance(vs->scan) <= 0)))
		{
			vs->search_misses++;
			example(vs, "heap row (%u,%u) is not found by its own vector",
					ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
		}
	}
}

/*
 * ft.verify(index regclass, repair boolean DEFAULT false,
 *	 search_limit bigint DEFAULT 10000) -> one row of counts and examples
 *
 * Needs ownership of the table (it counts every row, which row-level
 * security may hide from others, and scans the whole table); runs as the
 * table's owner in a security-restricted operation.
 */
PG_FUNCTION_INFO_V1(ft_verify);
Datum
ft_verify(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	VerifyState vs;
	TupleDesc	tupdesc;
	Datum		values[14];
	bool		nulls[14];
	IndexInfo  *indexInfo;
	Snapshot	snapshot;
	TableScanDesc hscan;
	int64		i;
	int			s;
	Datum	   *ex;
	ListCell   *lc;
	SavedIdentity saved;
	int			kind;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/*
	 * A partitioned index: each partition's index checked (search_limit
	 * applies to each), the counts summed, the examples prefixed with the
	 * partition's index.
	 */
	kind = FtFanOutKind(relid);
	if (kind != FT_FANOUT_NONE)
	{
		char	   *call;

		FtCheckPartitionedOwner(relid, false);
		call = psprintf("ft.verify(%%s, %s, %s)",
						PG_ARGISNULL(1) ? "NULL" :
						PG_GETARG_BOOL(1) ? "true" : "false",
						PG_ARGISNULL(2) ? "NULL" :
						psprintf(INT64_FORMAT "::pg_catalog.int8", PG_GETARG_INT64(2)));
		return FtFanOut(fcinfo,
						psprintf("WITH v AS MATERIALIZED (SELECT * FROM %s f)"
								 " SELECT COALESCE(sum(heap_rows), 0)::pg_catalog.int8,"
								 " COALESCE(sum(indexed_docs), 0)::pg_catalog.int8,"
								 " COALESCE(sum(missing_docs), 0)::pg_catalog.int8,"
								 " COALESCE(sum(duplicate_docs), 0)::pg_catalog.int8,"
								 " COALESCE(sum(docs_in_two_segments), 0)::pg_catalog.int8,"
								 " COALESCE(sum(keymap_entries), 0)::pg_catalog.int8,"
								 " COALESCE(sum(phantom_entries), 0)::pg_catalog.int8,"
								 " COALESCE(sum(checksum_mismatches), 0)::pg_catalog.int8,"
								 " COALESCE(sum(missing_keymap_entries), 0)::pg_catalog.int8,"
								 " COALESCE(sum(search_checked), 0)::pg_catalog.int8,"
								 " COALESCE(sum(search_misses), 0)::pg_catalog.int8,"
								 " COALESCE(sum(repaired), 0)::pg_catalog.int8,"
								 " COALESCE((SELECT pg_catalog.array_agg(v2.idx"
								 "   OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||) e.x"
								 "   ORDER BY v2.ord, e.o)"
								 "  FROM v v2, pg_catalog.unnest(v2.examples) WITH ORDINALITY e(x, o)),"
								 "  '{}'::pg_catalog.text[]),"
								 " COALESCE(sum(unreachable_nodes), 0)::pg_catalog.int8"
								 " FROM v",
								 FtFanOutSource(fcinfo, kind, call, NULL, false)));
	}

	memset(&vs, 0, sizeof(vs));
	vs.repair = PG_GETARG_BOOL(1);
	vs.search_limit = PG_ARGISNULL(2) ? PG_INT64_MAX : PG_GETARG_INT64(2);
	vs.heap = relation_open(SegvecIndexGetHeap(relid), AccessShareLock);
	vs.index = SegvecOpenIndex(relid, vs.repair ? RowExclusiveLock : AccessShareLock,
							   true);
	vs.info = palloc(sizeof(SegvecMetaInfo));
	vs.fbytes = SEGVEC_FILTER_ENTRY_BYTES(SegvecIndexFilterCount(vs.index));

	/*
	 * The heap scan evaluates the index's expressions and predicate, the
	 * table owner's code: run everything as the owner, in a
	 * security-restricted operation with a safe search_path, as REINDEX
	 * and VACUUM do (CVE-2022-1552), whoever calls.
	 */
	MergeIdentityPush(&saved, vs.heap->rd_rel->relowner);

	/*
	 * The snapshot first: a row it sees committed before it, so its doc was
	 * appended before we collect the docs.  Then, under the compaction lock
	 * (no compaction, snapshot or VACUUM moves or removes anything), the
	 * keymap before the docs: an insert appends its doc before its entry,
	 * so an entry we read has its doc among those we collect after.
	 */
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	LockPage(vs.index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	if (SegvecIndexHasKey(vs.index))
		KeymapForEach(vs.index, collect_entry, &vs);
	SegvecGetMetaInfo(vs.index, vs.info);
	if (vs.info->dimensions > 0)
	{
		vs.cur_segno = 0;
		SegvecScanMutableDocs(vs.index, vs.info, collect_doc, collect_gone,
							  &vs);
		for (s = 0; s < vs.info->nsegments; s++)
		{
			SegvecSegment *seg = &vs.info->segments[s];
			int			ndocs;
			SegvecDocInfo *docs = SegvecSegmentLiveDocs(vs.index, seg, &ndocs);
			char	   *filters = NULL;
			int			n;
			int64		unreached;
			uint64		unreached_docid;

			/* a segment without entries (none should be) is not checked */
			if (vs.fbytes > 0 &&
				SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters) == vs.fbytes)
				filters = SegvecSegmentLiveFilters(vs.index, seg);
			vs.cur_segno = seg->segno;
			for (n = 0; n < ndocs; n++)
			{
				vs.cur_filter = filters ? filters + vs.fbytes * n : NULL;
				collect_doc(&docs[n], NULL, 0, &vs);
			}
			vs.cur_filter = NULL;
			if (filters)
				pfree(filters);

			/* the postings against the filter values they come from */
			if (!SegvecSegmentPostingsOk(vs.index, seg, vs.info->dimensions))
			{
				vs.mismatches++;
				example(&vs, "segment %d: its postings do not match its filter values",
						seg->segno);
			}

			/* layer-0 reachability from the entry point */
			unreached = SegvecSegmentUnreachable(vs.index, seg,
												 &unreached_docid);
			if (unreached > 0)
			{
				vs.unreachable += unreached;
				example(&vs, "segment %d: " INT64_FORMAT " of %u nodes are not reachable from the entry point (doc id " UINT64_FORMAT " is one)",
						seg->segno, unreached, seg->ndocs, unreached_docid);
			}
			pfree(docs);
		}
	}

	if (vs.ndocs > 1)
		qsort(vs.docs, vs.ndocs, sizeof(VerifyDoc), docid_cmp);
	for (i = 1; i < vs.ndocs; i++)
	{
		if (vs.docs[i].doc.docid == vs.docs[i - 1].doc.docid)
		{
			vs.docs_twice++;
			example(&vs, "doc id " UINT64_FORMAT " is held twice (segments %d and %d; 0 is the mutable segment)",
					vs.docs[i].doc.docid, vs.docs[i - 1].segno, vs.docs[i].segno);
		}
	}

	/* keymap entries against docs, and docs without an entry */
	if (SegvecIndexHasKey(vs.index))
	{
		for (i = 0; i < vs.nentries; i++)
		{
			CHECK_FOR_INTERRUPTS();
			check_entry(&vs.entries[i], &vs);
		}
		for (i = 0; i < vs.ndocs; i++)
		{
			VerifyDoc  *d = &vs.docs[i];

			CHECK_FOR_INTERRUPTS();

			/*
			 * A doc whose entry is not there yet: its insert may still be
			 * adding it (look again), or it may have been cut short by a
			 * crash, which only leaves rows that never committed: count
			 * only docs of rows the snapshot sees.
			 */
			if ((d->doc.flags & SEGVEC_DOC_HAS_KEY) && !d->has_entry &&
				!entry_exists(&vs, &d->doc) &&
				row_visible(&vs, &d->doc.heaptid, snapshot))
			{
				vs.missing_entries++;
				example(&vs, "doc id " UINT64_FORMAT " has no keymap entry",
						d->doc.docid);
				if (vs.repair)
				{
					KeymapEntry entry;

					entry.key_hash = d->doc.key_hash;
					entry.docid = d->doc.docid;
					entry.checksum = d->doc.checksum;
					KeymapAdd(vs.index, &entry);
					vs.repaired++;
				}
			}
		}
	}
	UnlockPage(vs.index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	/* every visible heap row: indexed once, found by its own vector */
	vs.bytid = MemoryContextAllocHuge(CurrentMemoryContext,
									  sizeof(VerifyDoc *) * Max(vs.ndocs, 1));
	for (i = 0; i < vs.ndocs; i++)
		vs.bytid[i] = &vs.docs[i];
	if (vs.ndocs > 1)
		qsort(vs.bytid, vs.ndocs, sizeof(VerifyDoc *), tid_cmp);

	vs.scan = SegvecIndexBeginScan(vs.heap, vs.index, snapshot, 0, 1);
	/* the subtype says how the scan reads the heap's vector datums */
	ScanKeyEntryInitialize(&vs.orderby, 0, 1, SEGVEC_ORDERBY_STRATEGY,
						   SegvecIndexVectorType(vs.index), InvalidOid,
						   InvalidOid, (Datum) 0);

	indexInfo = BuildIndexInfo(vs.index);
	indexInfo->ii_Concurrent = true;	/* only rows the snapshot sees */
	hscan = table_beginscan_strat(vs.heap, snapshot, 0, NULL, true, false);
	table_index_build_scan(vs.heap, vs.index, indexInfo, false, false,
						   check_row, &vs, hscan);
	index_endscan(vs.scan);
	UnregisterSnapshot(snapshot);
	MergeIdentityPop(&saved);

	memset(nulls, 0, sizeof(nulls));
	values[0] = Int64GetDatum(vs.heap_rows);
	values[1] = Int64GetDatum(vs.ndocs);
	values[2] = Int64GetDatum(vs.missing_docs);
	values[3] = Int64GetDatum(vs.duplicate_docs);
	values[4] = Int64GetDatum(vs.docs_twice);
	values[5] = Int64GetDatum(vs.keymap_entries);
	values[6] = Int64GetDatum(vs.phantoms);
	values[7] = Int64GetDatum(vs.mismatches);
	values[8] = Int64GetDatum(vs.missing_entries);
	values[9] = Int64GetDatum(vs.search_checked);
	values[10] = Int64GetDatum(vs.search_misses);
	values[11] = Int64GetDatum(vs.repaired);
	values[13] = Int64GetDatum(vs.unreachable);
	ex = palloc(sizeof(Datum) * Max(list_length(vs.examples), 1));
	i = 0;
	foreach(lc, vs.examples)
		ex[i++] = CStringGetTextDatum((char *) lfirst(lc));
	values[12] = PointerGetDatum(construct_array(ex, (int) i, TEXTOID, -1,
												 false, TYPALIGN_INT));

	relation_close(vs.index, vs.repair ? RowExclusiveLock : AccessShareLock);
	relation_close(vs.heap, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * ft._stage_phantom(index regclass, id text) -> bigint
 *
 * Test hook (needs segvec.enable_test_hooks = on): removes the doc of the
 * row with this id from the index without touching its keymap entry, the
 * state a lost doc leaves: a phantom entry and an unindexed row.  Returns
 * the doc id.  Only for docs in an immutable segment (it tombstones them)
 * or single-piece docs of the mutable segment.  Like ft.add: the caller must
 * own the table, and the id is read as the owner in a security-restricted
 * operation.
 */
PG_FUNCTION_INFO_V1(ft_stage_phantom);
Datum
ft_stage_phantom(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	text	   *idtext = PG_GETARG_TEXT_PP(1);
	Relation	heap,
				index;
	KeymapEntry *entries;
	int			nentries;
	Oid			typid,
				infunc,
				ioparam;
	Datum		key;
	uint64		key_hash;
	uint64		docid;
	SegvecSavedIdentity saved;

	SegvecCheckTestHooks("ft._stage_phantom");

	/* a partitioned index: the partition whose index holds the id */
	if (SegvecRelidIsPartitionedIndex(relid))
	{
		FtCheckPartitionedOwner(relid, false);
		return FtFanOut(fcinfo,
						"SELECT ft._stage_phantom(l, $2)"
						" FROM ft._partition_indexes($1) l"
						" WHERE EXISTS (SELECT FROM ft.get(l, $2)) LIMIT 1");
	}

	heap = relation_open(SegvecIndexGetHeap(relid), AccessShareLock);
	index = SegvecOpenIndex(relid, RowExclusiveLock, true);
	typid = TupleDescAttr(RelationGetDescr(index), SegvecIndexKeyColumn(index))->atttypid;

	/*
	 * The id's input and send functions may be the owner's code (a domain's
	 * constraint, a type of its own): run them as the owner in a
	 * security-restricted operation, as ft.add does (SegvecOpenIndex has
	 * checked that the caller owns the table).
	 */
	SegvecIdentityPush(&saved, heap->rd_rel->relowner);
	getTypeInputInfo(typid, &infunc, &ioparam);
	key = OidInputFunctionCall(infunc, text_to_cstring(idtext), ioparam, -1);
	key_hash = SegvecKeyHash(index, key);
	SegvecIdentityPop(&saved);

	nentries = KeymapLookup(index, key_hash, &entries);
	if (nentries == 0)
		elog(ERROR, "no keymap entry for that id");
	docid = entries[nentries - 1].docid;

	SegvecDropDoc(index, docid);

	relation_close(index, RowExclusiveLock);
	relation_close(heap, AccessShareLock);
	PG_RETURN_INT64((int64) docid);
}

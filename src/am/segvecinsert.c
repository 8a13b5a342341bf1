/*-------------------------------------------------------------------------
 *
 * segvecinsert.c
 *	  aminsert for segvec: append the doc to the mutable segment (or, for
 *	  an UPDATE that kept the row's id and vector, an alias of the doc that
 *	  already holds them).
 *
 * src/am/segvecinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_am_d.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/am.h"
#include "compact/compact.h"
#include "graph/graph.h"
#include "jobs/jobs.h"
#include "keymap/keymap.h"
#include "store/store.h"

/*
 * What an INSERT or UPDATE statement's inserts keep from row to row
 * (IndexInfo's ii_AmCache, in its ii_Context): a memory context for one
 * row's work, reset after each row; the index's size in blocks as last
 * read (see SegvecMutableReadAlias), valid while the statement holds its
 * lock on the index; the heap's likewise (see GraphHeapKeepsValue); the
 * doc-area page where the last alias target was found (GraphDocHint).
 */
typedef struct SegvecInsertCache
{
	MemoryContext rowctx;
	BlockNumber nblocks;
	BlockNumber heap_nblocks;
	GraphDocHint hint;			/* where the last target's doc was found */
} SegvecInsertCache;

/*
 * After an insert that started a new mutable page: a mutable segment over
 * the threshold asks for a compaction, a smaller one for a settle once the
 * index is quiet (not for a temporary index: no worker can read it).  The
 * check reads the metapage only once a page fills.
 */
static void
request_compaction(Relation index, bool alias)
{
	SegvecMetaInfo *info;
	int			threshold;

	if (!SegvecJobsEnabled() || RelationUsesLocalBuffers(index))
		return;
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(index, info);
	threshold = SegvecCompactThreshold(index);

	/*
	 * The estimate counts pages as full of docs; a page of aliases holds
	 * many more (an alias counts as a doc: scoring one costs about as
	 * much), so after an alias's page, count.
	 */
	if (SegvecMutableDocsEstimate(index, info) >= threshold ||
		(alias && SegvecMutableCountDocs(index, threshold) >= threshold))
		SegvecSubmitJob(RelationGetRelid(index), SEGVEC_JOB_COMPACT);
	else
	{
		/*
		 * Below the threshold: once the inserts stop, a settle compacts
		 * what they left (a pending compaction or settle covers it).
		 */
		SegvecSubmitSettle(RelationGetRelid(index), 0, 1);
	}
	SegvecFreeMetaInfo(info);
	pfree(info);
}

/* The metapage's manifest, read at the first need into *info */
static SegvecMetaInfo *
insert_meta(Relation index, SegvecMetaInfo **info)
{
	if (*info == NULL)
	{
		*info = palloc(sizeof(SegvecMetaInfo));
		SegvecGetMetaInfo(index, *info);
	}
	return *info;
}

/*
 * Whether find_alias_by_pointer can judge this index's datums: the index
 * is on a plain varlena column of heap.
 */
static bool
datum_comparable(Relation index, Relation heap)
{
	AttrNumber	attnum = index->rd_index->indkey.values[0];

	return heap != NULL && attnum > 0 &&
		TupleDescAttr(RelationGetDescr(heap), attnum - 1)->attlen == -1;
}

/*
 * Whether the heap tuple at tid is the new version made by an UPDATE (an
 * upsert's, a MERGE's: HEAP_UPDATED), for a heap table; one share-locked
 * heap page, the one the executor just wrote.  Other table access methods:
 * false.
 */
static bool
heap_version_is_update(Relation heap, ItemPointer tid)
{
	Buffer		buf;
	Page		page;
	ItemId		lp;
	bool		updated = false;

	if (heap == NULL || heap->rd_rel->relam != HEAP_TABLE_AM_OID)
		return false;
	buf = SegvecReadBufferHinted(heap, ItemPointerGetBlockNumber(tid));
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (ItemPointerGetOffsetNumber(tid) <= PageGetMaxOffsetNumber(page))
	{
		lp = PageGetItemId(page, ItemPointerGetOffsetNumber(tid));
		if (ItemIdIsNormal(lp))
			updated = (((HeapTupleHeader) PageGetItem(page, lp))->t_infomask &
					   HEAP_UPDATED) != 0;
	}
	UnlockReleaseBuffer(buf);
	return updated;
}

/*
 * An alias target for a doc about to be inserted, without reading its
 * vector: value, the indexed datum of the row version at doc->heaptid (a
 * plain varlena column), is an on-disk TOAST pointer or inline bytes that
 * the old version holds too, and an immutable segment's
 * doc among entries (the keymap's entries for doc->key_hash), newest first,
 * indexes a row version from which the update chain leads to the new one
 * keeping that very datum (GraphHeapKeepsValue).  Then the vectors are
 * equal without un-TOASTing the new one; doc->checksum is set from the
 * target's.  First the alias loc names (the newest located keymap add of
 * the key, if it is still that alias's page), then at most two segment
 * docs.  cache's sizes as for SegvecMutableReadAlias and
 * GraphHeapKeepsValue.  See "Aliases" in src/README.md.
 */
static bool
find_alias_by_pointer(Relation index, Relation heap, Datum value,
					  KeymapEntry *entries, int n,
					  const KeymapDocLocation *loc, SegvecMetaInfo **info,
					  SegvecDocInfo *doc, uint64 *target,
					  SegvecInsertCache *cache)
{
	AttrNumber	attnum = index->rd_index->indkey.values[0];
	bool	   *tried;
	int			ntried = 0;
	SegvecDocInfo a;
	uint64		a_target;

	if (!datum_comparable(index, heap))
		return false;

	/*
	 * The row's current version is usually indexed by the alias its last
	 * UPDATE made, whose page the keymap change names: alias to its target.
	 */
	if (loc->docid != 0 &&
		SegvecMutableReadAlias(index, loc->doc_blkno, loc->docid, &a,
							   &a_target, &cache->nblocks) &&
		GraphHeapKeepsValue(heap, &a.heaptid, &doc->heaptid, attnum, value,
							&cache->heap_nblocks))
	{
		*target = a_target;
		doc->checksum = a.checksum;
		return true;
	}
	tried = palloc0(sizeof(bool) * Max(n, 1));
	while (ntried < 2)
	{
		int			best = -1;
		int			i;
		SegvecDocInfo d;

		/* the newest entry not tried yet */
		for (i = 0; i < n; i++)
			if (!tried[i] && entries[i].key_hash == doc->key_hash &&
				(best < 0 || entries[i].docid > entries[best].docid))
				best = i;
		if (best < 0)
			break;
		tried[best] = true;
		insert_meta(index, info);
		if (!GraphFindDocInfo(index, (*info)->segments, (*info)->nsegments,
							  entries[best].docid, &d, &cache->hint))
			continue;
		ntried++;
		if (GraphHeapKeepsValue(heap, &d.heaptid, &doc->heaptid, attnum,
								value, &cache->heap_nblocks))
		{
			*target = d.docid;
			doc->checksum = d.checksum;
			return true;
		}
	}
	return false;
}

/*
 * An alias target for a doc about to be inserted: an immutable segment's
 * doc with the same id key hash and a vector equal to vector (checksum,
 * then every float), found among entries (the keymap's entries for
 * doc->key_hash; tried ones are taken out), newest doc id first.  Returns
 * true and sets *target if there is one.  Docs of the mutable segment are
 * not taken (finding one by doc id means walking the chain); the row then
 * gets a copy.  See "Aliases" in src/README.md.
 */
static bool
find_alias_target(Relation index, const SegvecDocInfo *doc,
				  const float *vector, int dim, KeymapEntry *entries, int n,
				  SegvecMetaInfo *info, uint64 *target, GraphDocHint *hint)
{
	float	   *other = NULL;
	bool		found = false;

	while (n > 0 && !found)
	{
		int			best = -1;
		int			i;

		/* the newest matching entry not tried yet */
		for (i = 0; i < n; i++)
			if (entries[i].checksum == doc->checksum &&
				entries[i].key_hash == doc->key_hash &&
				(best < 0 || entries[i].docid > entries[best].docid))
				best = i;
		if (best < 0)
			break;

		if (other == NULL)
			other = palloc(sizeof(float) * dim);
		if (info->dimensions == dim &&
			GraphFindVector(index, info->segments, info->nsegments,
							entries[best].docid, dim, other, hint) &&
			memcmp(other, vector, sizeof(float) * dim) == 0)
		{
			*target = entries[best].docid;
			found = true;
		}
		entries[best] = entries[--n];
	}
	return found;
}

/*
 * segvecinsert: aminsert callback.  NULL vectors are not indexed; a vector
 * of another dimension than the index's raises an error before anything is
 * written.  With an id key (INCLUDE), the doc's keymap entry is added after
 * the doc (an alias gets one too, under its own doc id).
 */
bool
segvecinsert(Relation index, Datum *values, bool *isnull,
			 ItemPointer ht_ctid, Relation heapRel,
			 IndexUniqueCheck checkUnique,
			 bool indexUnchanged,
			 IndexInfo *indexInfo)
{
	MemoryContext oldCtx;
	float	   *vector;
	int			dim;
	SegvecDocInfo doc;
	bool		page_added;
	uint64		target;
	bool		alias = false;
	KeymapEntry *entries = NULL;
	int			nentries = 0;
	KeymapDocLocation loc;
	SegvecMetaInfo *info = NULL;
	SegvecInsertCache *cache;
	int			nfilters = SegvecIndexFilterCount(index);
	int			keycol = nfilters + 1;
	char		filters[SEGVEC_FILTER_MAX_BYTES];

	if (isnull[0])
		return false;

	cache = (SegvecInsertCache *) indexInfo->ii_AmCache;
	if (cache == NULL)
	{
		cache = MemoryContextAlloc(indexInfo->ii_Context,
								   sizeof(SegvecInsertCache));
		cache->rowctx = AllocSetContextCreate(indexInfo->ii_Context,
											  "segvec insert temporary context",
											  ALLOCSET_DEFAULT_SIZES);
		cache->nblocks = InvalidBlockNumber;
		cache->heap_nblocks = InvalidBlockNumber;
		cache->hint.valid = false;
		indexInfo->ii_AmCache = cache;
	}

	oldCtx = MemoryContextSwitchTo(cache->rowctx);

	memset(&doc, 0, sizeof(doc));
	doc.heaptid = *ht_ctid;
	if (SegvecIndexHasKey(index) && !isnull[keycol])
	{
		doc.key_hash = SegvecKeyHash(index, values[keycol]);
		doc.flags |= SEGVEC_DOC_HAS_KEY;
	}
	if (nfilters > 0)
		SegvecFilterFormEntry(index, values, isnull, filters);

	/*
	 * A non-HOT UPDATE whose vector an immutable segment's doc of the same
	 * id holds appends an alias rather than a copy.  The executor's hint,
	 * indexUnchanged, says the UPDATE assigned none of the index's key
	 * columns (the vector and the filter columns; INCLUDE columns are not
	 * checked); without it the new heap tuple still says whether this is an
	 * UPDATE's new version (an UPDATE of a filter column, an upsert, a
	 * MERGE, SET v = v).  First without reading the vector, when the datum
	 * can be the one the old version held (the hint, or a datum in a form
	 * only a stored tuple gives, a TOAST pointer, compressed or with a short
	 * header: a value the UPDATE assigned anew is a plain one yet), else by
	 * comparing floats.  An alias carries the new version's own filter
	 * entry, never its target's.
	 */
	if ((doc.flags & SEGVEC_DOC_HAS_KEY) &&
		(indexUnchanged || heap_version_is_update(heapRel, ht_ctid)))
	{
		bool		by_pointer = datum_comparable(index, heapRel) &&
			(indexUnchanged ||
			 VARATT_IS_EXTENDED(DatumGetPointer(values[0])));

		nentries = KeymapLookupAt(index, doc.key_hash, &entries, &loc,
								  by_pointer);
		if (nentries < 0)
		{
			/* the chains named the row's alias: try it before the runs */
			alias = find_alias_by_pointer(index, heapRel, values[0], NULL, 0,
										  &loc, &info, &doc, &target, cache);
			if (!alias)
			{
				nentries = KeymapLookupAt(index, doc.key_hash, &entries,
										  &loc, false);
				loc.docid = 0;	/* tried */
			}
		}
		if (!alias && by_pointer && nentries > 0)
			alias = find_alias_by_pointer(index, heapRel, values[0],
										  entries, nentries, &loc, &info,
										  &doc, &target, cache);
	}
	if (!alias)
	{
		vector = SegvecDatumGetVector(index, values[0], &dim);
		doc.checksum = SegvecVectorChecksum(vector, dim);
		if (nentries > 0 &&
			find_alias_target(index, &doc, vector, dim, entries, nentries,
							  insert_meta(index, &info), &target,
							  &cache->hint))
			alias = true;
	}

	/*
	 * The keymap entry goes with or after its doc: never an entry without
	 * a doc.  A doc (its last piece) or an alias and its entry are usually
	 * one WAL record.
	 */
	if (alias)
		KeymapAppendAlias(index, &doc, target,
						  nfilters > 0 ? filters : NULL, &page_added);
	else
		KeymapAppendDoc(index, &doc, vector, dim,
						nfilters > 0 ? filters : NULL, &page_added);

	if (page_added)
		request_compaction(index, alias);

	MemoryContextSwitchTo(oldCtx);
	MemoryContextReset(cache->rowctx);

	return false;
}

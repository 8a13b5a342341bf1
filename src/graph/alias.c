/*-------------------------------------------------------------------------
 *
 * alias.c
 *	  Aliases: mutable-segment docs that share the vector of an immutable
 *	  segment's doc instead of holding a copy.
 *
 * An UPDATE that leaves a row's id key and vector alone (a non-HOT update
 * of another column) appends an alias (new heap TID -> the doc id of a doc
 * with the same vector, its *target*) rather than a copy of the vector;
 * see src/README.md, "Aliases".  Everyone who reads the mutable segment's
 * docs with their vectors (scans, compaction, ft.verify, ft.get) reads
 * them through GraphMutableForEachDoc, which resolves each alias to its
 * target's vector: in an immutable segment of the caller's manifest when
 * it is there (tombstoned or not: tombstones never erase a node, and a
 * merge compacts the aliases before it drops a doc one targets), else from
 * the heap row the alias indexes, formed as an insert forms it (the
 * caller's manifest is older than the target's segment), with the alias's
 * own filter entry (in an index with filter columns: the values of the
 * row version the alias indexes, never its target's).  An alias whose
 * heap row is gone (pruned: dead to every snapshot) is passed over: no
 * scan may return it.
 *
 * src/graph/alias.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "graph/graph.h"

/*
 * GraphFindVector: copy the vector of doc id docid into vector (dim
 * floats) if one of the nsegs segments holds it, tombstoned or not, and
 * return true; else false.  Reads the doc areas by binary search (or the
 * page hint names, see GraphFindDocEntry; hint may be NULL) and one node,
 * with pins only (checked on standbys, see "Standbys").
 */
bool
GraphFindVector(Relation index, const SegvecSegment *segs, int nsegs,
				uint64 docid, int dim, float *vector, GraphDocHint *hint)
{
	int			i;

	for (i = 0; i < nsegs; i++)
	{
		const SegvecSegment *seg = &segs[i];
		int64		node;

		if (docid < seg->min_docid || docid > seg->max_docid)
			continue;
		node = GraphFindDocEntry(index, seg, docid, NULL, hint);
		if (node < 0)
			continue;
		GraphReadVector(index, seg, (uint32) node, dim, vector);
		return true;
	}
	return false;
}

/*
 * GraphFindDocInfo: the doc-area entry of doc id docid into *info if one of
 * the nsegs segments holds it, tombstoned or not, and true; else false.
 * hint (or NULL) as for GraphFindDocEntry.
 */
bool
GraphFindDocInfo(Relation index, const SegvecSegment *segs, int nsegs,
				 uint64 docid, SegvecDocInfo *info, GraphDocHint *hint)
{
	int			i;

	for (i = 0; i < nsegs; i++)
	{
		const SegvecSegment *seg = &segs[i];
		int64		node;

		if (docid < seg->min_docid || docid > seg->max_docid)
			continue;
		node = GraphFindDocEntry(index, seg, docid, info, hint);
		if (node < 0)
			continue;
		return true;
	}
	return false;
}

/*
 * GraphHeapKeepsValue: does the heap row version at start hold, in its
 * attribute attnum, the same value as value, the indexed datum (an on-disk
 * TOAST pointer, or a value stored inline) of the row version at newtid
 * that the current transaction's UPDATE has just made?  True when, from
 * start, an update chain of at most GRAPH_ALIAS_MAX_HOPS versions (each the
 * one its predecessor's updater made: its xmin is that updater, as
 * heap_get_latest_tid checks) leads to a version that the current
 * transaction updated into newtid, and every version on it holds a datum
 * byte-equal to value (the pointer, or the inline bytes).  Reads each version
 * under a share lock on its buffer, one at a time; false at the first
 * doubt (a version pruned, locked only, deleted, a pointer that differs),
 * so the caller then compares floats.  Why equal pointers on such a chain
 * are equal values: see "Aliases" in src/README.md.
 *
 * *nblocks is the heap's size in blocks as last read (InvalidBlockNumber:
 * not read), read again only for a block past it: the caller keeps it
 * while it holds a lock on the heap (an UPDATE's RowExclusiveLock), under
 * which the heap never shrinks (VACUUM truncates it only under an
 * AccessExclusiveLock), so that one size serves a whole statement instead
 * of an lseek per row.
 */
bool
GraphHeapKeepsValue(Relation heap, const ItemPointerData *start,
					const ItemPointerData *newtid, AttrNumber attnum,
					Datum value, BlockNumber *nblocks)
{
	struct varlena *ptr = (struct varlena *) DatumGetPointer(value);
	bool		ondisk = VARATT_IS_EXTERNAL_ONDISK(ptr);
	Size		size = ondisk ? VARSIZE_EXTERNAL(ptr) : VARSIZE_ANY(ptr);
	ItemPointerData tid = *start;
	ItemPointerData newt = *newtid;
	TransactionId prev_xmax = InvalidTransactionId;
	int			hop;

	if (VARATT_IS_EXTERNAL(ptr) && !ondisk)
		return false;
	for (hop = 0; hop < GRAPH_ALIAS_MAX_HOPS; hop++)
	{
		BlockNumber blkno = ItemPointerGetBlockNumber(&tid);
		OffsetNumber off = ItemPointerGetOffsetNumber(&tid);
		Buffer		buf;
		Page		page;
		ItemId		lp;
		HeapTupleData tuple;
		Datum		old;
		bool		isnull;
		bool		ok;
		TransactionId xmax = InvalidTransactionId;
		ItemPointerData next;

		if (!ItemPointerIsValid(&tid))
			return false;
		if (*nblocks == InvalidBlockNumber || blkno >= *nblocks)
			*nblocks = RelationGetNumberOfBlocks(heap);
		if (blkno >= *nblocks)
			return false;
		buf = SegvecReadBufferHinted(heap, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		ok = off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page);
		if (ok)
		{
			lp = PageGetItemId(page, off);
			ok = ItemIdIsNormal(lp);
		}
		if (ok)
		{
			tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
			tuple.t_len = ItemIdGetLength(lp);
			tuple.t_tableOid = RelationGetRelid(heap);
			tuple.t_self = tid;

			/* the version its predecessor's updater made */
			ok = hop == 0 ||
				TransactionIdEquals(prev_xmax,
									HeapTupleHeaderGetXmin(tuple.t_data));
		}
		if (ok)
		{
			old = heap_getattr(&tuple, attnum, RelationGetDescr(heap), &isnull);
			ok = !isnull &&
				VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(old)) == ondisk &&
				(ondisk ?
				 VARSIZE_EXTERNAL(DatumGetPointer(old)) :
				 VARSIZE_ANY(DatumGetPointer(old))) == size &&
				memcmp(DatumGetPointer(old), ptr, size) == 0;
		}
		if (ok)
		{
			/* updated (not deleted, not only locked) into next */
			next = tuple.t_data->t_ctid;
			ok = !(tuple.t_data->t_infomask & HEAP_XMAX_INVALID) &&
				!HEAP_XMAX_IS_LOCKED_ONLY(tuple.t_data->t_infomask) &&
				!ItemPointerEquals(&next, &tid) &&
				!HeapTupleHeaderIndicatesMovedPartitions(tuple.t_data);
			if (ok)
			{
				xmax = HeapTupleHeaderGetUpdateXid(tuple.t_data);
				ok = TransactionIdIsValid(xmax);
			}
		}
		UnlockReleaseBuffer(buf);
		if (!ok)
			return false;
		if (ItemPointerEquals(&next, &newt))
			return TransactionIdIsCurrentTransactionId(xmax);
		prev_xmax = xmax;
		tid = next;
	}
	return false;
}

/* State of GraphMutableForEachDoc */
typedef struct AliasWalk
{
	Relation	index;
	const SegvecSegment *segs;
	int			nsegs;
	int			dim;
	SegvecDocCallback callback;
	GraphAliasGoneCallback gone;	/* or NULL */
	void	   *arg;
	float	   *vector;			/* dim floats: the resolved vector; then
								 * the alias's filter entry */
	Size		fbytes;			/* bytes of a filter entry, 0: none */
	GraphDocHint hint;			/* where the last target was found */
	MemoryContext tmpctx;		/* reset after each heap read */
	/* set up at the first heap read */
	Relation	heap;
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;
	IndexInfo  *indexinfo;		/* how an insert forms the index's datums */
	EState	   *estate;			/* for FormIndexDatum's expressions */
} AliasWalk;

/*
 * The vector that the index holds for the heap row at tid (any version:
 * the alias was made from that row's vector, whatever its visibility),
 * into w->vector, formed as an insert forms it: FormIndexDatum (the index
 * expression, if any, evaluated as the table's owner in a
 * security-restricted operation, as VACUUM and REINDEX evaluate it), the
 * operator class's input function (support function 2) for a type other
 * than real[], and the index's dimension, which the vector must have (an
 * error otherwise: the alias claims a vector the row does not hold).
 * False if the row is gone (its line pointer dead: no snapshot sees it)
 * or its indexed value is NULL (an insert would not have indexed it).
 */
static bool
heap_vector(AliasWalk *w, const ItemPointerData *tid)
{
	ItemPointerData t = *tid;
	bool		call_again = false;
	bool		all_dead = false;
	bool		found = false;
	MemoryContext oldctx;

	if (w->heap == NULL)
	{
		w->heap = relation_open(IndexGetRelation(RelationGetRelid(w->index),
												 false),
								AccessShareLock);
		w->fetch = table_index_fetch_begin(w->heap);
		w->slot = table_slot_create(w->heap, NULL);
		w->indexinfo = BuildIndexInfo(w->index);
		w->estate = CreateExecutorState();
		GetPerTupleExprContext(w->estate)->ecxt_scantuple = w->slot;
	}

	oldctx = MemoryContextSwitchTo(w->tmpctx);
	if (table_index_fetch_tuple(w->fetch, &t, SnapshotAny, w->slot,
								&call_again, &all_dead))
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		if (w->indexinfo->ii_Expressions != NIL)
		{
			SegvecSavedIdentity saved;
			bool		snap = !ActiveSnapshotSet();

			/* a compaction job has no snapshot; a SQL function needs one */
			if (snap)
				PushActiveSnapshot(GetTransactionSnapshot());
			SegvecIdentityPush(&saved, w->heap->rd_rel->relowner);
			FormIndexDatum(w->indexinfo, w->slot, w->estate, values, isnull);
			SegvecIdentityPop(&saved);
			if (snap)
				PopActiveSnapshot();
		}
		else
			FormIndexDatum(w->indexinfo, w->slot, w->estate, values, isnull);
		if (!isnull[0])
		{
			int			d;
			float	   *v = SegvecDatumReadVector(w->index, values[0], &d);

			if (d != w->dim)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("heap row (%u,%u) of an alias in index \"%s\" has a vector of %d dimensions, not %d",
								ItemPointerGetBlockNumber(tid),
								ItemPointerGetOffsetNumber(tid),
								RelationGetRelationName(w->index), d,
								w->dim),
						 errhint("REINDEX the index.")));
			memcpy(w->vector, v, sizeof(float) * w->dim);
			found = true;
		}
		ExecClearTuple(w->slot);
	}
	ResetExprContext(GetPerTupleExprContext(w->estate));
	MemoryContextSwitchTo(oldctx);
	MemoryContextReset(w->tmpctx);
	return found;
}

/* SegvecDocCallback: hand a doc on */
static void
pass_doc(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
	AliasWalk  *w = (AliasWalk *) arg;

	w->callback(doc, vector, dim, w->arg);
}

/*
 * SegvecAliasCallback: resolve the alias, hand it on as a doc with its own
 * filter entry (filters, or zeros: all NULL), never its target's
 */
static void
resolve_alias(const SegvecDocInfo *doc, uint64 target, const char *filters,
			  void *arg)
{
	AliasWalk  *w = (AliasWalk *) arg;

	/* a stale doc: never searched, but its keymap entry is gone too */
	if (target == SEGVEC_STALE_TARGET)
	{
		if (w->gone)
			w->gone(doc, w->arg);
		return;
	}
	if (GraphFindVector(w->index, w->segs, w->nsegs, target, w->dim,
						w->vector, &w->hint) ||
		heap_vector(w, &doc->heaptid))
	{
		if (w->fbytes > 0)
		{
			if (filters != NULL)
				memcpy(w->vector + w->dim, filters, w->fbytes);
			else
				memset(w->vector + w->dim, 0, w->fbytes);
		}
		w->callback(doc, w->vector, w->dim, w->arg);
	}
	else if (w->gone)
		w->gone(doc, w->arg);
}

/* Set up *w for a walk; walk_end releases what it took */
static void
walk_begin(AliasWalk *w, Relation index, const SegvecSegment *segs,
		   int nsegs, int dim, SegvecDocCallback callback, void *arg)
{
	memset(w, 0, sizeof(AliasWalk));
	w->index = index;
	w->segs = segs;
	w->nsegs = nsegs;
	w->dim = dim;
	w->callback = callback;
	w->arg = arg;
	/* room for the alias's filter entry after the vector */
	w->fbytes = SEGVEC_FILTER_ENTRY_BYTES(SegvecIndexFilterCount(index));
	w->vector = palloc0(sizeof(float) * dim + SEGVEC_FILTER_MAX_BYTES);
	w->tmpctx = AllocSetContextCreate(CurrentMemoryContext,
									  "segvec alias heap read",
									  ALLOCSET_SMALL_SIZES);
}

static void
walk_end(AliasWalk *w)
{
	if (w->heap)
	{
		FreeExecutorState(w->estate);
		ExecDropSingleTupleTableSlot(w->slot);
		table_index_fetch_end(w->fetch);
		relation_close(w->heap, AccessShareLock);
	}
	MemoryContextDelete(w->tmpctx);
	pfree(w->vector);
}

/*
 * GraphMutableForEachDoc: SegvecMutableForEachDoc (the docs of the mutable
 * segment from head up to stop, in chain order) with the aliases too, each
 * passed to callback with its own identity (flags with SEGVEC_DOC_ALIAS)
 * and its target's vector, found in segs (the caller's manifest) or read
 * from the alias's heap row.  Opens the table (AccessShareLock, which any
 * caller already holds or may take) only when a heap read is needed.
 * An alias whose target is in no segment of segs (a merge or a rewrite
 * dropped it, tombstoned) and whose heap row is gone is passed to gone
 * instead, if not NULL (compaction's freeze drops its keymap entry, as
 * VACUUM would have with the alias), and so is a stale doc (a vector of
 * another length, SEGVEC_STALE_TARGET), whose row is gone too (its
 * transaction rolled back).  Holds no buffer lock during callbacks.
 */
void
GraphMutableForEachDoc(Relation index, const SegvecSegment *segs, int nsegs,
					   BlockNumber head, BlockNumber stop, int dim,
					   SegvecDocCallback callback, GraphAliasGoneCallback gone,
					   void *arg)
{
	AliasWalk	w;

	walk_begin(&w, index, segs, nsegs, dim, callback, arg);
	w.gone = gone;
	SegvecMutableForEachItem(index, head, stop, dim, pass_doc, resolve_alias,
							 &w);
	walk_end(&w);
}

/*
 * GraphMutableScanDocs: GraphMutableForEachDoc over the whole mutable
 * segment of info (the caller's metapage read, whose manifest resolves the
 * aliases), with the checks SegvecMutableScanDocs makes on a standby; for
 * scans and the ft functions.  gone (or NULL) as for GraphMutableForEachDoc.
 */
void
GraphMutableScanDocs(Relation index, const SegvecMetaInfo *info,
					 SegvecDocCallback callback, GraphAliasGoneCallback gone,
					 void *arg)
{
	AliasWalk	w;

	walk_begin(&w, index, info->segments, info->nsegments, info->dimensions,
			   callback, arg);
	w.gone = gone;
	SegvecMutableScanItems(index, info, pass_doc, resolve_alias, &w);
	walk_end(&w);
}

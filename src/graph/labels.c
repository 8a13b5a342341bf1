/*-------------------------------------------------------------------------
 *
 * labels.c
 *	  The labels of mutable-segment docs in label array columns, read from
 *	  their heap rows when compaction's freeze writes them into a graph
 *	  segment, for the segment's label postings (store/format.h, "Postings
 *	  of a segment's filter columns").
 *
 * A mutable doc keeps only a signature of its labels (its filter entry).
 * The freeze reads each doc's row by its heap TID (any version: the doc
 * indexes that version, whatever its visibility) and forms the index's
 * values as an insert does (FormIndexDatum, an index expression evaluated
 * as the table's owner in a security-restricted operation, as alias.c
 * reads an alias's vector).  The row must give the doc's signature in
 * every label column: a TID reads the root of a HOT chain, whose members
 * all have the same labels (a HOT update changes no index column), but
 * the chain is followed to a member that gives the signature in case one
 * does not.  A doc whose row is gone (its line pointer dead or unused, the
 * block truncated away: no snapshot sees it, and VACUUM removes the doc)
 * gets no labels: no label filter returns it, as none may.  When a row is
 * there but no version of it gives the doc's signature (which no known
 * path produces), or keeps a label array out of line (TOAST, see
 * add_if_same), the segment's columns get bit postings instead: the
 * labels are not known.
 *
 * src/graph/labels.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "graph/graph.h"

struct GraphLabelReader
{
	Relation	index;
	int			nfilters;
	uint32		postable[SEGVEC_MAX_FILTERS];	/* SegvecIndexFilterPostable */
	bool		any;			/* a column with label postings? */
	MemoryContext tmpctx;		/* reset after each row */
	/* set up at the first heap read */
	Relation	heap;
	BlockNumber nblocks;		/* the heap's blocks when last looked */
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;
	IndexInfo  *indexinfo;
	EState	   *estate;
};

/*
 * GraphLabelReaderBegin: a reader of the index's docs' labels; NULL when
 * the index has no label array column
 */
GraphLabelReader *
GraphLabelReaderBegin(Relation index)
{
	GraphLabelReader *r = palloc0(sizeof(GraphLabelReader));
	int			c;

	r->index = index;
	r->nfilters = SegvecIndexFilterCount(index);
	SegvecIndexFilterPostable(index, r->postable);
	for (c = 0; c < r->nfilters; c++)
		if (r->postable[c] == SEGVEC_POSTINGS_COLUMN_BITS)
			r->any = true;
	if (!r->any)
	{
		pfree(r);
		return NULL;
	}
	r->tmpctx = AllocSetContextCreate(CurrentMemoryContext,
									  "segvec label heap read",
									  ALLOCSET_SMALL_SIZES);
	return r;
}

/*
 * GraphLabelReaderKeep: builder (new, with the index's filter columns)
 * keeps the labels of the label array columns; r may be NULL
 */
void
GraphLabelReaderKeep(GraphLabelReader *r, HnswBuilder *builder)
{
	int			c;

	if (r == NULL)
		return;
	for (c = 0; c < r->nfilters; c++)
		if (r->postable[c] == SEGVEC_POSTINGS_COLUMN_BITS)
			HnswBuilderKeepLabels(builder, c);
}

/* the index's values of the row version in r->slot, into values/isnull */
static void
form_values(GraphLabelReader *r, Datum *values, bool *isnull)
{
	if (r->indexinfo->ii_Expressions != NIL)
	{
		SegvecSavedIdentity saved;
		bool		snap = !ActiveSnapshotSet();

		/* a compaction job has no snapshot; a SQL function needs one */
		if (snap)
			PushActiveSnapshot(GetTransactionSnapshot());
		SegvecIdentityPush(&saved, r->heap->rd_rel->relowner);
		FormIndexDatum(r->indexinfo, r->slot, r->estate, values, isnull);
		SegvecIdentityPop(&saved);
		if (snap)
			PopActiveSnapshot();
	}
	else
		FormIndexDatum(r->indexinfo, r->slot, r->estate, values, isnull);
}

/*
 * Do values/isnull give filter entry filters in every label column?  If
 * so, add each column's labels to builder's last doc.  A label array
 * stored out of line (TOAST) is not read: a compaction job has no
 * snapshot to read it with, and the TOAST rows of a row version dead to
 * every snapshot may be gone before the version itself; such a doc makes
 * its segment's labels unknown (bit postings), as a row that gives
 * another signature does.
 */
static bool
add_if_same(GraphLabelReader *r, HnswBuilder *builder, const char *filters,
			const Datum *values, const bool *isnull)
{
	uint64		present;
	uint64	   *hashes[SEGVEC_MAX_FILTERS];
	int			nhashes[SEGVEC_MAX_FILTERS];
	int			c;

	memcpy(&present, filters, sizeof(uint64));
	for (c = 0; c < r->nfilters; c++)
	{
		uint64		sig;

		hashes[c] = NULL;
		nhashes[c] = 0;
		if (r->postable[c] != SEGVEC_POSTINGS_COLUMN_BITS)
			continue;
		if (isnull[c + 1] != !(present & (UINT64CONST(1) << c)))
			return false;
		if (isnull[c + 1])
			continue;
		if (VARATT_IS_EXTERNAL(DatumGetPointer(values[c + 1])))
			return false;		/* toasted out of line: see above */
		memcpy(&sig, filters + sizeof(uint64) * (c + 1), sizeof(uint64));
		if (SegvecLabelHashes(values[c + 1], &hashes[c], &nhashes[c]) != sig)
			return false;
	}
	for (c = 0; c < r->nfilters; c++)
		if (hashes[c] != NULL)
			HnswBuilderAddLabels(builder, c, hashes[c], nhashes[c]);
	return true;
}

/*
 * GraphLabelReaderAdd: the labels of doc (whose filter entry is filters,
 * the last doc added to builder) from its heap row, added to builder (see
 * the top of the file); r may be NULL (no label column).  Takes no lock
 * but the heap pages' content locks, one at a time; opens the table with
 * AccessShareLock (which the caller holds or may take) at the first call.
 */
void
GraphLabelReaderAdd(GraphLabelReader *r, HnswBuilder *builder,
					const SegvecDocInfo *doc, const char *filters)
{
	ItemPointerData tid = doc->heaptid;
	BlockNumber blkno = ItemPointerGetBlockNumber(&tid);
	bool		call_again = false;
	bool		all_dead = false;
	bool		seen = false;
	bool		added = false;
	MemoryContext oldctx;
	int			c;

	if (r == NULL || filters == NULL)
		return;
	if (r->heap == NULL)
	{
		r->heap = relation_open(IndexGetRelation(RelationGetRelid(r->index),
												 false),
								AccessShareLock);
		r->fetch = table_index_fetch_begin(r->heap);
		r->slot = table_slot_create(r->heap, NULL);
		r->indexinfo = BuildIndexInfo(r->index);
		r->estate = CreateExecutorState();
		GetPerTupleExprContext(r->estate)->ecxt_scantuple = r->slot;
		r->nblocks = RelationGetNumberOfBlocks(r->heap);
	}
	if (!ItemPointerIsValid(&tid))
		return;
	if (blkno >= r->nblocks)
	{
		r->nblocks = RelationGetNumberOfBlocks(r->heap);
		if (blkno >= r->nblocks)
			return;				/* truncated away: gone */
	}

	oldctx = MemoryContextSwitchTo(r->tmpctx);
	do
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		if (!table_index_fetch_tuple(r->fetch, &tid, SnapshotAny, r->slot,
									 &call_again, &all_dead))
			break;
		seen = true;
		form_values(r, values, isnull);
		added = add_if_same(r, builder, filters, values, isnull);
		ExecClearTuple(r->slot);
		ResetExprContext(GetPerTupleExprContext(r->estate));
	} while (!added && call_again);
	MemoryContextSwitchTo(oldctx);
	MemoryContextReset(r->tmpctx);

	if (seen && !added)
	{
		/* a row that does not give the doc's labels: not known */
		for (c = 0; c < r->nfilters; c++)
			if (r->postable[c] == SEGVEC_POSTINGS_COLUMN_BITS)
				HnswBuilderForgetLabels(builder, c);
	}
}

/* GraphLabelReaderEnd: release what r holds (r may be NULL) */
void
GraphLabelReaderEnd(GraphLabelReader *r)
{
	if (r == NULL)
		return;
	if (r->heap)
	{
		FreeExecutorState(r->estate);
		ExecDropSingleTupleTableSlot(r->slot);
		table_index_fetch_end(r->fetch);
		relation_close(r->heap, AccessShareLock);
	}
	MemoryContextDelete(r->tmpctx);
	pfree(r);
}

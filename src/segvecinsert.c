/*-------------------------------------------------------------------------
 *
 * segvecinsert.c
 *	  aminsert for segvec: append the doc to the mutable segment.
 *
 * src/segvecinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/rel.h"

#include "segvec.h"

/*
 * segvecinsert: aminsert callback.  NULL vectors are not indexed; a vector
 * of another dimension than the index's raises an error before anything is
 * written.
 */
bool
segvecinsert(Relation index, Datum *values, bool *isnull,
			 ItemPointer ht_ctid, Relation heapRel,
			 IndexUniqueCheck checkUnique,
			 bool indexUnchanged,
			 IndexInfo *indexInfo)
{
	MemoryContext insertCtx;
	MemoryContext oldCtx;
	float	   *vector;
	int			dim;

	if (isnull[0])
		return false;

	insertCtx = AllocSetContextCreate(CurrentMemoryContext,
									  "segvec insert temporary context",
									  ALLOCSET_DEFAULT_SIZES);
	oldCtx = MemoryContextSwitchTo(insertCtx);

	vector = SegvecDatumGetVector(index, values[0], &dim);
	SegvecMutableAppend(index, ht_ctid, vector, dim);

	MemoryContextSwitchTo(oldCtx);
	MemoryContextDelete(insertCtx);

	return false;
}

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

#include "keymap.h"
#include "segvec.h"

/*
 * segvecinsert: aminsert callback.  NULL vectors are not indexed; a vector
 * of another dimension than the index's raises an error before anything is
 * written.  With an id key (INCLUDE), the doc's keymap entry is added after
 * the doc.
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
	SegvecDocInfo doc;

	if (isnull[0])
		return false;

	insertCtx = AllocSetContextCreate(CurrentMemoryContext,
									  "segvec insert temporary context",
									  ALLOCSET_DEFAULT_SIZES);
	oldCtx = MemoryContextSwitchTo(insertCtx);

	vector = SegvecDatumGetVector(index, values[0], &dim);

	memset(&doc, 0, sizeof(doc));
	doc.heaptid = *ht_ctid;
	doc.checksum = SegvecVectorChecksum(vector, dim);
	if (SegvecIndexHasKey(index) && !isnull[1])
	{
		doc.key_hash = SegvecKeyHash(index, values[1]);
		doc.flags |= SEGVEC_DOC_HAS_KEY;
	}
	doc.docid = SegvecMutableAppend(index, &doc, vector, dim);

	/* the keymap entry goes after its doc: never an entry without a doc */
	if (doc.flags & SEGVEC_DOC_HAS_KEY)
	{
		KeymapEntry entry;

		entry.key_hash = doc.key_hash;
		entry.docid = doc.docid;
		entry.checksum = doc.checksum;
		KeymapAdd(index, &entry);
	}

	MemoryContextSwitchTo(oldCtx);
	MemoryContextDelete(insertCtx);

	return false;
}

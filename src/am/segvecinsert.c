/*-------------------------------------------------------------------------
 *
 * segvecinsert.c
 *	  aminsert for segvec: append the doc to the mutable segment.
 *
 * src/am/segvecinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/am.h"
#include "compact/compact.h"
#include "jobs/jobs.h"
#include "keymap/keymap.h"
#include "store/store.h"

/*
 * After an insert that started a new mutable page: a mutable segment over
 * the threshold asks for a compaction (not for a temporary index: no worker
 * can read it).  The check reads the metapage only once a page fills.
 */
static void
request_compaction(Relation index)
{
	SegvecMetaInfo *info;

	if (!SegvecJobsEnabled() || RelationUsesLocalBuffers(index))
		return;
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(index, info);
	if (SegvecMutableDocsEstimate(index, info) >= SegvecCompactThreshold(index))
		SegvecSubmitJob(RelationGetRelid(index), SEGVEC_JOB_COMPACT);
	SegvecFreeMetaInfo(info);
	pfree(info);
}

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
	bool		page_added;

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
	doc.docid = SegvecMutableAppend(index, &doc, vector, dim, &page_added);

	/* the keymap entry goes after its doc: never an entry without a doc */
	KeymapAddDoc(index, &doc);

	if (page_added)
		request_compaction(index);

	MemoryContextSwitchTo(oldCtx);
	MemoryContextDelete(insertCtx);

	return false;
}

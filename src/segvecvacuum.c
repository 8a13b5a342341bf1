/*-------------------------------------------------------------------------
 *
 * segvecvacuum.c
 *	  VACUUM for segvec: remove dead docs, recycle unlinked pages.
 *
 * src/segvecvacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/transam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "utils/snapmgr.h"

#include "segvec.h"

/*
 * segvecbulkdelete: ambulkdelete callback.  Deletes the docs whose heap
 * rows are dead from the mutable segment and unlinks pages it empties.
 */
IndexBulkDeleteResult *
segvecbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				 IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/* counted afresh by every pass */
	stats->num_index_tuples = 0;
	SegvecMutableBulkDelete(info->index, stats, callback, callback_state);
	return stats;
}

/* SegvecDocCallback that counts docs */
static void
count_doc(ItemPointer heaptid, const float *vector, int dim, void *arg)
{
	*(double *) arg += 1;
}

/*
 * segvecvacuumcleanup: amvacuumcleanup callback.  Gives the free space map
 * every page that is unused or was unlinked long enough ago that no scan
 * can still be on its way to it, and reports the index's size.
 */
IndexBulkDeleteResult *
segvecvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BlockNumber npages,
				blkno;
	BlockNumber nfree = 0;

	if (info->analyze_only)
		return stats;

	if (stats == NULL)
	{
		SegvecMetaInfo meta;

		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		SegvecGetMetaInfo(index, &meta);
		if (meta.dimensions > 0)
			SegvecMutableForEachDoc(index, meta.mutable_head, meta.dimensions,
									count_doc, &stats->num_index_tuples);
	}

	npages = RelationGetNumberOfBlocks(index);
	stats->pages_deleted = 0;
	for (blkno = SEGVEC_METAPAGE_BLKNO + 1; blkno < npages; blkno++)
	{
		Buffer		buf;
		Page		page;

		vacuum_delay_point();

		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
								 info->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);

		if (PageIsNew(page))
		{
			RecordFreeIndexPage(index, blkno);
			nfree++;
		}
		else if (SegvecPageIsDeleted(page))
		{
			stats->pages_deleted++;
			if (GlobalVisCheckRemovableFullXid(NULL,
											   FullTransactionIdFromU64(SegvecPageGetOpaque(page)->seqno)))
			{
				RecordFreeIndexPage(index, blkno);
				nfree++;
			}
		}
		UnlockReleaseBuffer(buf);
	}

	IndexFreeSpaceMapVacuum(index);

	stats->num_pages = npages;
	stats->pages_free = nfree;
	return stats;
}

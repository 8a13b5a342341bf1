/*-------------------------------------------------------------------------
 *
 * segvecvacuum.c
 *	  VACUUM for segvec: remove dead docs, recycle unlinked pages.
 *
 * src/am/segvecvacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/generic_xlog.h"
#include "access/parallel.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "am/am.h"
#include "compact/compact.h"
#include "graph/graph.h"
#include "hooks/testhooks.h"
#include "jobs/jobs.h"
#include "keymap/keymap.h"
#include "store/store.h"

/*
 * Tombstone the docs of one immutable segment whose heap rows are dead
 * (GraphSetTombstones: per tombstone page, one WAL record on that page and
 * the manifest page holding the segment), each after its keymap entry is
 * removed.  Caller holds the compaction lock.
 */
static void
tombstone_segment(Relation index, SegvecSegment *seg,
				  IndexBulkDeleteResult *stats,
				  IndexBulkDeleteCallback callback, void *callback_state)
{
	uint8	   *tomb = GraphGetTombstones(index, seg);
	SegvecDocInfo *docs = palloc(sizeof(SegvecDocInfo) * SEGVEC_TOMB_PER_PAGE);
	uint32	   *dead = palloc(sizeof(uint32) * SEGVEC_TOMB_PER_PAGE);
	uint32		first;

	for (first = 0; first < seg->ndocs; first += SEGVEC_TOMB_PER_PAGE)
	{
		uint32		count = Min((uint32) SEGVEC_TOMB_PER_PAGE, seg->ndocs - first);
		uint32		ndead = 0;
		uint32		i;

		SegvecVacuumDelayPoint();
		GraphReadDocs(index, seg, first, count, docs);
		for (i = 0; i < count; i++)
		{
			uint32		node = first + i;

			if (GraphTombstoneIsSet(tomb, node))
				continue;
			if (callback(&docs[i].heaptid, callback_state))
			{
				/* the keymap entry goes before its doc */
				KeymapRemoveDoc(index, &docs[i]);
				dead[ndead++] = node;
			}
			else
				stats->num_index_tuples += 1;
		}

		if (ndead > 0)
		{
			GraphSetTombstones(index, seg, dead, ndead);
			stats->tuples_removed += ndead;
		}
	}
	pfree(dead);
	pfree(docs);
	pfree(tomb);
}

/* SegvecDocRemovedFn: the keymap entry goes before its doc */
static void
mutable_doc_removed(Relation index, const SegvecDocInfo *doc, void *arg)
{
	KeymapRemoveDoc(index, doc);
}

/*
 * segvecbulkdelete: ambulkdelete callback.  Deletes the docs whose heap
 * rows are dead from the mutable segment (unlinking pages it empties) and
 * tombstones them in the immutable segments.  Holds the compaction lock,
 * so the manifest does not change meanwhile.
 */
IndexBulkDeleteResult *
segvecbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				 IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	SegvecMetaInfo *meta = palloc(sizeof(SegvecMetaInfo));
	int			i;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	/* counted afresh by every pass */
	stats->num_index_tuples = 0;
	SegvecMutableBulkDelete(index, stats, callback, callback_state,
							mutable_doc_removed, NULL);

	SegvecGetMetaInfo(index, meta);
	for (i = 0; i < meta->nsegments; i++)
		tombstone_segment(index, &meta->segments[i], stats,
						  callback, callback_state);

	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	SegvecFreeMetaInfo(meta);
	pfree(meta);
	return stats;
}

/*
 * The blocks of every keymap delta chain (head and frozen), and of the
 * manifest overflow chain
 */
static List *
delta_pages(Relation index)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	BlockNumber *heads = palloc(sizeof(BlockNumber) *
								(2 * SEGVEC_KEYMAP_BUCKETS + 1));
	SegvecMetaPage meta;
	List	   *result = NIL;
	int			b;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	memcpy(heads, meta->delta_head, sizeof(BlockNumber) * SEGVEC_KEYMAP_BUCKETS);
	memcpy(heads + SEGVEC_KEYMAP_BUCKETS, meta->delta_frozen,
		   sizeof(BlockNumber) * SEGVEC_KEYMAP_BUCKETS);
	heads[2 * SEGVEC_KEYMAP_BUCKETS] = meta->nsegments > SEGVEC_META_SEGMENTS ?
		meta->manifest_head : InvalidBlockNumber;
	UnlockReleaseBuffer(metabuf);

	for (b = 0; b < 2 * SEGVEC_KEYMAP_BUCKETS + 1; b++)
	{
		BlockNumber blkno = heads[b];

		while (blkno != InvalidBlockNumber)
		{
			Buffer		buf = ReadBuffer(index, blkno);

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			result = lappend_int(result, (int) blkno);
			blkno = SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno;
			UnlockReleaseBuffer(buf);
		}
	}
	pfree(heads);
	return result;
}

/*
 * Is this live (not deleted) page reachable from the metapage?  Mutable
 * pages are, from the head's sequence number on; segment and keymap run
 * pages when inside a live extent; delta and manifest pages when in a
 * chain (the list "delta").
 */
static bool
reachable(Page page, BlockNumber blkno, SegvecMetaInfo *meta, List *delta)
{
	SegvecPageOpaque opaque = SegvecPageGetOpaque(page);
	int			i;

	if (opaque->flags & SEGVEC_PAGE_META)
		return true;
	if (opaque->flags & SEGVEC_PAGE_MUTABLE)
		return opaque->seqno >= meta->mutable_head_seqno;
	if (opaque->flags & SEGVEC_PAGE_SEGMENT)
	{
		for (i = 0; i < meta->nsegments; i++)
			if (blkno >= meta->segments[i].start &&
				blkno < meta->segments[i].start + meta->segments[i].npages)
				return true;
		return false;
	}
	if (opaque->flags & SEGVEC_PAGE_KEYMAP_RUN)
	{
		for (i = 0; i < meta->keymap_nruns; i++)
			if (blkno >= meta->keymap_runs[i].start &&
				blkno < meta->keymap_runs[i].start + meta->keymap_runs[i].npages)
				return true;
		return false;
	}
	if (opaque->flags & (SEGVEC_PAGE_KEYMAP_DELTA | SEGVEC_PAGE_MANIFEST))
		return list_member_int(delta, (int) blkno);
	return true;				/* unknown: leave it alone */
}

/* bit blkno of a bitmap of blocks */
#define BLOCK_BIT_SET(bits, b)	((bits)[(b) / 8] |= (uint8) (1 << ((b) % 8)))
#define BLOCK_BIT_IS_SET(bits, b)	(((bits)[(b) / 8] & (1 << ((b) % 8))) != 0)

/*
 * The blocks below npages that the metapage reaches by where they are,
 * whatever they hold: the metapage, the live segments' extents and keymap
 * runs, the change and manifest chains (delta) and the mutable chain from
 * its head (read here).  A bitmap of npages bits.  The cleanup scan reads
 * every other block with RBM_ZERO_ON_ERROR: only a page that nothing
 * reaches may be taken as free when it cannot be read (see
 * segvecvacuumcleanup); a page that something reaches and cannot be read
 * is an error.  Pages appended after this (a mutable or change page an
 * insert adds) were written in this server's run, so they read.
 */
static uint8 *
known_blocks(Relation index, SegvecMetaInfo *meta, List *delta,
			 BlockNumber npages)
{
	uint8	   *bits = palloc0(npages / 8 + 1);
	BlockNumber blkno;
	ListCell   *lc;
	int			i;

	if (npages > SEGVEC_METAPAGE_BLKNO)
		BLOCK_BIT_SET(bits, SEGVEC_METAPAGE_BLKNO);
	for (i = 0; i < meta->nsegments; i++)
		for (blkno = meta->segments[i].start;
			 blkno < meta->segments[i].start + meta->segments[i].npages &&
			 blkno < npages; blkno++)
			BLOCK_BIT_SET(bits, blkno);
	for (i = 0; i < meta->keymap_nruns; i++)
		for (blkno = meta->keymap_runs[i].start;
			 blkno < meta->keymap_runs[i].start + meta->keymap_runs[i].npages &&
			 blkno < npages; blkno++)
			BLOCK_BIT_SET(bits, blkno);
	foreach(lc, delta)
	{
		blkno = (BlockNumber) lfirst_int(lc);
		if (blkno < npages)
			BLOCK_BIT_SET(bits, blkno);
	}
	blkno = meta->mutable_head;
	while (blkno != InvalidBlockNumber && blkno < npages &&
		   !BLOCK_BIT_IS_SET(bits, blkno))
	{
		Buffer		buf = ReadBuffer(index, blkno);

		BLOCK_BIT_SET(bits, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		blkno = SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno;
		UnlockReleaseBuffer(buf);
	}
	return bits;
}

/*
 * Run a compaction (or, merge_only, just the merges that are due) for
 * VACUUM's cleanup in a subtransaction, turning its
 * error into a WARNING: VACUUM goes on (dead docs are removed by then,
 * pages are recycled, relfrozenxid advances) and the docs stay in the
 * mutable segment for the next try.  A cancel or a shutdown request is
 * not turned into a WARNING: it ends the VACUUM as it would anywhere else.
 * Not in a parallel VACUUM, which cannot start a subtransaction.  The
 * subtransaction's abort releases the compaction lock and any buffer lock;
 * what the compaction installed before the error stays (each install is
 * atomic), and what it left in the garbage list is finished by the cleanup
 * below or by the next compaction.
 */
static void
compact_for_vacuum(Relation index, bool merge_only)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	MemoryContext cctx;

	/*
	 * A parallel VACUUM (a worker, or the leader while it runs one) cannot
	 * start a subtransaction: leave the compaction to the background
	 * workers, ft.compact or the next VACUUM.
	 */
	if (IsInParallelMode())
	{
		elog(DEBUG1, "segvec index \"%s\": no compaction in a parallel VACUUM",
			 RelationGetRelationName(index));
		if (SegvecJobsRunnable() && !RelationUsesLocalBuffers(index))
			(void) SegvecSubmitJob(RelationGetRelid(index), SEGVEC_JOB_COMPACT);
		return;
	}

	/* what the compaction allocates goes with it, error or not */
	cctx = AllocSetContextCreate(oldcontext, "segvec VACUUM compaction",
								 ALLOCSET_DEFAULT_SIZES);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cctx);

	PG_TRY();
	{
		if (merge_only)
			SegvecMergeSegments(index, NULL);
		else
			SegvecCompact(index, NULL);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		MemoryContextDelete(cctx);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();

		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;

		MemoryContextDelete(cctx);

		if (edata->elevel >= FATAL ||
			edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			ReThrowError(edata);

		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("could not compact segvec index \"%s\" during VACUUM",
						RelationGetRelationName(index)),
				 errdetail("%s", edata->message),
				 merge_only ?
				 errhint("VACUUM went on; the segments stay as they are until a later merge.") :
				 errhint("VACUUM went on; the docs stay in the mutable segment until a later compaction.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

/*
 * Clear the metapage's dimensions_xid once its transaction is known
 * committed (one WAL record, only when that changes anything).  Caller
 * holds the compaction lock.
 */
static void
freeze_metapage(Relation index)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	if (SegvecMetaNeedsFreeze(SegvecPageGetMeta(BufferGetPage(metabuf))))
	{
		GenericXLogState *state = GenericXLogStart(index);
		Page		page = GenericXLogRegisterBuffer(state, metabuf, 0);

		SegvecMetaFreeze(SegvecPageGetMeta(page));
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);
}

/*
 * free_unreachable: give back the blocks[0 .. nblocks) that nothing points
 * at (found by the cleanup's scan, under the compaction lock and with no
 * merge running), freed at xid.  Each is marked deleted in a full page
 * image first: an errored merge's pages were never WAL-logged, so after a
 * crash or on a standby the block holds zeros, or nothing (a delta record
 * would patch a few bytes into them), and an OS crash may have torn one;
 * the image makes every copy whole and the same.  Then they go on the
 * free-extent list, in one metapage record, so that a run of them (a lost
 * copy of a segment, an errored merge's output) is reused whole, by a
 * merge or a move, or truncated: one by one through the free space map,
 * a big segment could never move down into them.  When the list has no
 * room, they stay deleted pages, for the free space map once no scan can
 * read them.  Returns true when they went on the list.
 */
static bool
free_unreachable(Relation index, BlockNumber *blocks, int nblocks, uint64 xid)
{
	Buffer		metabuf;
	GenericXLogState *state;
	SegvecMetaPage meta;
	bool		listed;

	if (nblocks == 0)
		return false;
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	listed = SegvecFreePagesAdd(meta, blocks, nblocks, xid);
	if (listed)
		GenericXLogFinish(state);
	else
		GenericXLogAbort(state);
	UnlockReleaseBuffer(metabuf);
	return listed;
}

/*
 * segvecvacuumcleanup: amvacuumcleanup callback.  Gives the free space map
 * every page that is unused or was unlinked long enough ago that no scan
 * can still be on its way to it, except the blocks on the free-extent list
 * (which new extents reuse whole), truncates a free extent at the end
 * (SegvecTruncateFreeTail), and reports the index's size.
 */
IndexBulkDeleteResult *
segvecvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BlockNumber npages,
				blkno;
	BlockNumber nfree = 0;

	SegvecMetaInfo *meta;
	double		nmutable = 0;
	int			i;
	List	   *delta_before;
	List	   *unreachable = NIL;
	List	   *zeroed = NIL;
	uint8	   *known;
	bool		no_merge;
	bool		submit_rewrite = false;
	bool		freed_unreachable = false;

	if (info->analyze_only)
		return stats;

	/*
	 * Without background workers, VACUUM is where a big mutable segment gets
	 * compacted.  VACUUM must not fail because of that (it has removed the
	 * dead docs already, and has relfrozenxid to advance): see
	 * compact_for_vacuum.
	 */
	meta = palloc(sizeof(SegvecMetaInfo));
	nmutable = SegvecMutableCountDocs(index, -1);
	if (nmutable >= SegvecCompactThreshold(index) && nmutable > 0)
	{
		compact_for_vacuum(index, false);
		nmutable = SegvecMutableCountDocs(index, -1);
	}
	else if (SegvecMergeDue(index))
	{
		/*
		 * The tombstones this VACUUM set may have passed
		 * segvec.merge_deletes_pct of a segment: its rewrite (or another
		 * merge that is due) is left to a background compaction job, or,
		 * without background workers, done here, as a compaction would be.
		 * The job is submitted at the end, once the scan below has let go
		 * of the merge lock (see there).
		 */
		if (SegvecJobsRunnable())
			submit_rewrite = true;
		else
			compact_for_vacuum(index, true);
	}
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * The physical scan runs under the compaction lock, so no compaction or
	 * snapshot is writing pages that nothing points at yet, and counts the
	 * pages under the extension lock, so every page it sees has been locked
	 * by whoever added it (as nbtree does).
	 */
	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	/*
	 * A merge builds its segment without the compaction lock, in blocks
	 * nothing points at until its install (compact.c): while one runs, in
	 * either lane, take no never-initialised page and mark no unreachable
	 * page.  Without waiting: the merge waits for the compaction lock we
	 * hold to install.
	 */
	no_merge = ConditionalLockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ShareLock);
	if (no_merge &&
		!ConditionalLockPage(index, SEGVEC_MINOR_LOCK_BLKNO, ShareLock))
	{
		UnlockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ShareLock);
		no_merge = false;
	}
	SegvecTestPoint("vacuum-cleanup-scan");

	/*
	 * Finish what an interrupted install left in the garbage list (we hold
	 * the compaction lock, so we may clear it), and freeze the dimension's
	 * xid: VACUUM FREEZE is what lets pg_xact be truncated.
	 */
	SegvecProcessGarbage(index);
	freeze_metapage(index);

	SegvecGetMetaInfo(index, meta);	/* what is reachable, now */

	/*
	 * The docs, counted under the compaction lock: a background compaction
	 * (or the one this cleanup submitted) between a count of the mutable
	 * segment and a read of the manifest would count its docs twice.
	 */
	nmutable = SegvecMutableCountDocs(index, -1);
	stats->num_index_tuples = nmutable;
	for (i = 0; i < meta->nsegments; i++)
		stats->num_index_tuples += meta->segments[i].ndocs -
			meta->segments[i].ntombstones;
	if (!RELATION_IS_LOCAL(index))
		LockRelationForExtension(index, ExclusiveLock);
	npages = RelationGetNumberOfBlocks(index);
	if (!RELATION_IS_LOCAL(index))
		UnlockRelationForExtension(index, ExclusiveLock);

	delta_before = delta_pages(index);
	known = known_blocks(index, meta, delta_before, npages);
	stats->pages_deleted = 0;
	for (blkno = SEGVEC_METAPAGE_BLKNO + 1; blkno < npages; blkno++)
	{
		Buffer		buf;
		Page		page;
		bool		is_known = BLOCK_BIT_IS_SET(known, blkno);

		SegvecVacuumDelayPoint();

		if (SegvecBlockIsFree(meta->free, meta->nfree, blkno))
			continue;			/* on the free-extent list: neither live nor
								 * for the FSM */

		/*
		 * A block nothing reaches may hold a page that fails its checksum:
		 * a merge's output page, which the merge writes and changes
		 * without WAL until its end, torn by an OS crash during the merge.
		 * Such a page is read as zeros (with a WARNING) and becomes free
		 * below, through a logged image, not an error in every VACUUM.
		 */
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno,
								 is_known ? RBM_NORMAL : RBM_ZERO_ON_ERROR,
								 info->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);

		if (PageIsNew(page))
		{
			if (no_merge && is_known)
			{
				RecordFreeIndexPage(index, blkno);
				nfree++;
			}
			else if (no_merge)
				zeroed = lappend_int(zeroed, (int) blkno);
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
		else if (no_merge && !reachable(page, blkno, meta, delta_before))
			unreachable = lappend_int(unreachable, (int) blkno);
		UnlockReleaseBuffer(buf);
	}

	/*
	 * Never-initialised pages nothing reaches (a crash after an extension;
	 * or a page that failed its checksum, zeroed only in its buffer by the
	 * read above): each is written as a logged zero page first, so that
	 * its block holds zeros on disk, after recovery and on standbys too,
	 * before the free space map hands it to an insert, which reads it
	 * normally.
	 */
	if (zeroed != NIL)
	{
		ListCell   *lc;

		foreach(lc, zeroed)
		{
			BlockNumber b = (BlockNumber) lfirst_int(lc);
			Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, b,
												 RBM_ZERO_ON_ERROR, NULL);

			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			if (PageIsNew(BufferGetPage(buf)))
			{
				START_CRIT_SECTION();
				MarkBufferDirty(buf);
				if (RelationNeedsWAL(index))
					log_newpage_buffer(buf, false);
				END_CRIT_SECTION();
				RecordFreeIndexPage(index, b);
				nfree++;
			}
			UnlockReleaseBuffer(buf);
		}
	}

	/*
	 * Pages nothing points at: what a crash between an install and the
	 * marking of what it replaced leaves, what a crash in the middle of a
	 * move leaves (the copy), and what an errored merge built.  A delta
	 * page is linked in the same WAL record that initialises it, so one
	 * that is linked now was in a chain when we saw it; look again before
	 * freeing.
	 */
	if (unreachable != NIL)
	{
		List	   *delta_after = delta_pages(index);
		uint64		xid = U64FromFullTransactionId(ReadNextFullTransactionId());
		BlockNumber *blocks = palloc(sizeof(BlockNumber) * list_length(unreachable));
		int			nblocks = 0;
		ListCell   *lc;

		foreach(lc, unreachable)
		{
			BlockNumber b = (BlockNumber) lfirst_int(lc);
			Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, b,
												 RBM_ZERO_ON_ERROR, NULL);
			Page		page;

			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			page = BufferGetPage(buf);
			if (!PageIsNew(page) && !reachable(page, b, meta, delta_after) &&
				SegvecMarkPageDeletedImage(index, buf, xid))
			{
				stats->pages_newly_deleted++;
				stats->pages_deleted++;
				blocks[nblocks++] = b;
			}
			UnlockReleaseBuffer(buf);
		}
		freed_unreachable = free_unreachable(index, blocks, nblocks, xid);
		pfree(blocks);
	}
	if (no_merge)
	{
		UnlockPage(index, SEGVEC_MINOR_LOCK_BLKNO, ShareLock);
		UnlockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ShareLock);
	}
	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	/*
	 * The rewrite's job, submitted only now: a job that ran while the scan
	 * above held the merge lock (share) would find it taken and leave the
	 * merges to whoever held it, which for this scan is no one, and the
	 * rewrite would never happen.  The job also gives way
	 * and retries then (jobrun.c), for other VACUUMs' scans.  If the table
	 * has no room for it, merge here.
	 */
	if (submit_rewrite && SegvecMergeDue(index) &&
		!SegvecSubmitJob(RelationGetRelid(index), SEGVEC_JOB_COMPACT))
		compact_for_vacuum(index, true);

	/*
	 * The tombstones set and the docs removed leave a remainder that a
	 * settle takes once the index is quiet (jobs/jobrun.c).  Freed
	 * unreachable blocks ask for one too: with nothing to settle, it moves
	 * the segment at the end down into them and gives the tail back, which
	 * VACUUM does not do (compact/shrink.c).
	 */
	if (SegvecJobsRunnable() && !RelationUsesLocalBuffers(index))
	{
		int			naps;

		if (SegvecSettleDue(index, &naps))
			(void) SegvecSubmitSettle(RelationGetRelid(index),
									  SegvecMutableChangeMark(index), naps);
		else if (freed_unreachable)
			(void) SegvecSubmitSettle(RelationGetRelid(index),
									  SegvecMutableChangeMark(index), 1);
	}

	/*
	 * Give a free extent at the end back, unless the table says VACUUM must
	 * not truncate (vacuum_truncate: its AccessExclusiveLock is replayed on
	 * standbys).
	 */
	if (IsInParallelMode())
	{
		/*
		 * The leader of a parallel VACUUM (segvec's cleanup never runs in
		 * a worker: segvechandler.c) cannot truncate: the lock's WAL
		 * record needs an xid.  A settle does it (jobs/jobrun.c).
		 */
		if (SegvecJobsRunnable() && !RelationUsesLocalBuffers(index) &&
			SegvecMayTruncate(index))
			(void) SegvecSubmitSettle(RelationGetRelid(index),
									  SegvecMutableChangeMark(index), 1);
	}
	else if (SegvecMayTruncate(index))
	{
		/*
		 * The slack a background job keeps after the big segment for its
		 * next move (compact/shrink.c) stays when workers run; without
		 * them nothing moves, and the whole tail goes.
		 */
		BlockNumber new_end = SegvecTruncateFreeTail(index, 1,
													 SegvecJobsRunnable());

		if (new_end != InvalidBlockNumber)
			npages = new_end;
	}

	IndexFreeSpaceMapVacuum(index);

	stats->num_pages = npages;
	stats->pages_free = nfree;
	return stats;
}

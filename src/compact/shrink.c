/*-------------------------------------------------------------------------
 *
 * shrink.c
 *	  Giving space back after merges: moving the segment at the end of the
 *	  index down into free space below it, and truncating the free tail.
 *
 * A segment is one contiguous extent, and a merge writes its output before
 * it frees its inputs.  Under a stream the big segment is rewritten each
 * time the small ones below it have grown to 1/segvec.merge_ratio of it;
 * each output is a little bigger than the copy it replaces, so it never
 * fits where that copy was, and goes to the end of the relation.  The copy
 * before the last then leaves a hole below the big segment, and the next
 * output, which does not fit in it either, goes to the end again: the
 * index held about three times the big segment.
 *
 * After a background job's installs (SegvecShrink): when the segment that
 * ends the index (followed by free blocks only) fits in a reusable free run
 * below it, its pages are copied there (full page images), and one install
 * record replaces its descriptor by the copy's and frees its old extent,
 * which is now the free tail, given back at once by
 * SegvecTruncateFreeTailWait (store/extent.c).  Only a segment of at least
 * 1/SEGVEC_TRUNCATE_FRACTION of the index is moved: a move costs a write
 * (and the WAL) of the segment, like a merge of it.  So the index is about
 * the size of its pages in use after one rewrite of the big segment in two,
 * and twice that after the other.
 *
 * When no segment at the end can be moved, a keymap run or a small segment
 * may be what ends the used part (unpin_tail): one written when no hole
 * below was reusable yet goes after the big segment, and, an old keymap
 * run never being rewritten, would keep the free space above the big
 * segment inside the index for good.  It is moved down likewise (a run by
 * KeymapMoveRun, keymap/keymaprun.c, under the compaction lock; an empty
 * mutable segment's page by SegvecMutableRelocate, compact.c).
 *
 * The copy is a segment like any other: same number, docs, graph, stamp
 * (a hash of its doc ids and size, not of its place), areas at the same
 * offsets from its first block; no page of a segment holds a block number.
 * Locks: the merge lock (exclusive, without waiting) and a claim on the
 * segment (compact.c) for the whole move, so no merge of either lane takes
 * the segment and VACUUM's cleanup marks none of the copy's pages
 * unreachable meanwhile; the compaction lock for the tombstone pages
 * (the only pages of a segment that change, under that lock) and the
 * install.  A crash before the install leaves the old descriptor and the
 * copy's blocks neither free nor reachable (VACUUM recycles them, as after
 * a crashed merge); a scan that read the old manifest reads the old extent,
 * which stays as it was until no snapshot can see that manifest (the
 * free-extent list's reuse rule).
 *
 * src/compact/shrink.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compact/compact.h"
#include "compact/compact_int.h"
#include "graph/graph.h"
#include "hooks/testhooks.h"
#include "keymap/keymap.h"

/* What move_tail_segment did */
typedef enum MoveOutcome
{
	MOVE_NONE,					/* nothing to move, or nowhere to */
	MOVE_WAIT,					/* room once what was freed last is
								 * reusable, or the merge lock is taken */
	MOVE_DONE
} MoveOutcome;

/* SegvecFillExtent's callback: page k is a copy of the source's page k */
typedef struct CopyState
{
	Relation	index;
	const SegvecSegment *seg;
	BlockNumber from;			/* source block of page 0 */
} CopyState;

static void
copy_page(Page page, uint32 k, void *arg)
{
	CopyState  *c = (CopyState *) arg;
	Buffer		buf = ReadBuffer(c->index, c->from + k);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	GraphCheckPage(c->index, c->seg, buf, true);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
}

/*
 * The segment whose extent ends the index, followed by free-extent entries
 * only, if it holds at least min_pages blocks: its descriptor in *seg.
 * Reads the manifest and the free-extent list (the metapage, share lock).
 */
static bool
tail_segment(Relation index, BlockNumber min_pages, SegvecSegment *seg)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber end = nblocks;
	bool		found = false;
	int			i;
	int			k;

	SegvecGetMetaInfo(index, info);
	/* free entries at the end: sorted, disjoint */
	for (k = (int) info->nfree - 1; k >= 0; k--)
	{
		if ((uint64) info->free[k].start + info->free[k].npages != end)
			break;
		end = info->free[k].start;
	}
	for (i = 0; i < info->nsegments; i++)
	{
		const SegvecSegment *s = &info->segments[i];

		if ((uint64) s->start + s->npages == end && s->npages >= min_pages)
		{
			*seg = *s;
			found = true;
		}
	}
	SegvecFreeMetaInfo(info);
	pfree(info);
	return found;
}

/*
 * find_segment: the manifest's descriptor of segment segno, in *seg, if
 * the manifest lists it.  Reads the metapage (share lock).
 */
static bool
find_segment(Relation index, uint32 segno, SegvecSegment *seg)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	bool		found = false;
	int			i;

	SegvecGetMetaInfo(index, info);
	for (i = 0; i < info->nsegments; i++)
		if (info->segments[i].segno == segno)
		{
			*seg = info->segments[i];
			found = true;
		}
	SegvecFreeMetaInfo(info);
	pfree(info);
	return found;
}

/*
 * move_segment: copy segment seg into the lowest reusable free run below
 * it that holds it, and install the copy in its place.  MOVE_NONE if no
 * run holds it, MOVE_WAIT if one would once what was freed last is
 * reusable.  Caller holds the merge lock and the segment's claim, and no
 * compaction lock.
 */
static MoveOutcome
move_segment(Relation index, const SegvecSegment *seg)
{
	SegvecSegment now;
	CopyState	c;
	BlockNumber start;
	BlockNumber ntomb;
	int64		delta;
	bool		wait;

	start = SegvecExtentTakeBelow(index, seg->npages, seg->start, &wait);
	if (start == InvalidBlockNumber)
		return wait ? MOVE_WAIT : MOVE_NONE;

	/* everything but the tombstone pages, which may change meanwhile */
	ntomb = seg->doc_start - seg->start;
	c.index = index;
	c.seg = seg;
	c.from = seg->start + ntomb;
	SegvecFillExtent(index, start + ntomb, seg->npages - ntomb, copy_page, &c);
	SegvecTestPoint("move-copied");

	/* the tombstone pages and the descriptor as they are now, then install */
	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	if (!find_segment(index, seg->segno, &now))
		elog(ERROR, "segvec index \"%s\": segment %u vanished during its move",
			 RelationGetRelationName(index), seg->segno);
	c.from = now.start;
	c.seg = &now;
	SegvecFillExtent(index, start, ntomb, copy_page, &c);
	delta = (int64) start - (int64) now.start;
	now.start = start;
	now.doc_start = (BlockNumber) ((int64) now.doc_start + delta);
	now.upper_start = (BlockNumber) ((int64) now.upper_start + delta);
	now.node_start = (BlockNumber) ((int64) now.node_start + delta);
	if (now.qparam_start != InvalidBlockNumber)
		now.qparam_start = (BlockNumber) ((int64) now.qparam_start + delta);
	if (now.vec_start != InvalidBlockNumber)
		now.vec_start = (BlockNumber) ((int64) now.vec_start + delta);
	SegvecInstallMoved(index, &now);
	SegvecProcessGarbage(index);
	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	ereport(DEBUG1,
			(errmsg_internal("segvec moved segment %u of index \"%s\" (%u pages) from block %u to %u",
							 seg->segno, RelationGetRelationName(index),
							 seg->npages, seg->start, start)));
	return MOVE_DONE;
}

/*
 * move_tail_segment: move the segment that ends the index (tail_segment)
 * into a reusable free run below it, if there is one.  Caller holds no
 * compaction or merge lock.
 */
static MoveOutcome
move_tail_segment(Relation index, BlockNumber min_pages)
{
	SegvecSegment seg;
	SegvecSegment now;
	MoveOutcome mv;

	if (!tail_segment(index, min_pages, &seg))
		return MOVE_NONE;
	if (!ConditionalLockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock))
		return MOVE_WAIT;
	/*
	 * Again, under the merge lock: only merges drop segments, and a minor
	 * merge (compact.c) may run beside us; once we hold the segment's claim
	 * and find it still there, no merge takes it.
	 */
	if (!tail_segment(index, min_pages, &seg))
	{
		UnlockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock);
		return MOVE_NONE;
	}
	if (!SegvecClaimSegment(index, seg.segno))
	{
		UnlockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock);
		return MOVE_WAIT;
	}
	if (!tail_segment(index, min_pages, &now) || now.segno != seg.segno)
		mv = MOVE_NONE;
	else
		mv = move_segment(index, &now);
	SegvecReleaseSegment(index, seg.segno);
	UnlockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock);
	return mv;
}

/*
 * What ends the used part of the index, under the free entries at its end
 * (tail_pin)
 */
typedef enum TailPin
{
	PIN_NONE,					/* nothing worth moving */
	PIN_RUN,					/* a keymap run: *run */
	PIN_SEGMENT,				/* a segment under min_pages: *seg */
	PIN_MUTABLE					/* the mutable segment, one empty page */
} TailPin;

/*
 * tail_pin: the keymap run, small segment (under min_pages blocks) or
 * one-page mutable segment that ends the used part of the index, if moving it down would let the free
 * tail be given back: the free blocks right below it, its own and the
 * free tail hold at least min_pages more than the slack a truncation
 * keeps, or a segment of at least min_pages ends where it starts (which
 * move_tail_segment can then move).  Reads the metapage (share lock).
 */
static TailPin
tail_pin(Relation index, BlockNumber min_pages, SegvecSegment *seg,
		 SegvecKeymapRun *run)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber end = nblocks;
	BlockNumber start = InvalidBlockNumber;
	BlockNumber below;
	bool		big_below = false;
	TailPin		pin = PIN_NONE;
	int			i;
	int			k;

	SegvecGetMetaInfo(index, info);
	for (k = (int) info->nfree - 1; k >= 0; k--)
	{
		if ((uint64) info->free[k].start + info->free[k].npages != end)
			break;
		end = info->free[k].start;
	}
	for (i = 0; i < (int) info->keymap_nruns; i++)
	{
		const SegvecKeymapRun *r = &info->keymap_runs[i];

		if (r->npages > 0 && (uint64) r->start + r->npages == end)
		{
			*run = *r;
			start = r->start;
			pin = PIN_RUN;
		}
	}
	if (pin == PIN_NONE && info->mutable_head == info->mutable_tail &&
		info->mutable_head != InvalidBlockNumber &&
		(uint64) info->mutable_head + 1 == end)
	{
		start = info->mutable_head;
		pin = PIN_MUTABLE;
	}
	for (i = 0; i < (int) info->nsegments; i++)
	{
		const SegvecSegment *sg = &info->segments[i];

		if (pin == PIN_NONE && sg->npages < min_pages &&
			(uint64) sg->start + sg->npages == end)
		{
			*seg = *sg;
			start = sg->start;
			pin = PIN_SEGMENT;
		}
	}
	if (pin != PIN_NONE)
	{
		/* the free blocks right below it */
		below = start;
		for (; k >= 0; k--)
		{
			if ((uint64) info->free[k].start + info->free[k].npages != below)
				break;
			below = info->free[k].start;
		}
		for (i = 0; i < (int) info->nsegments; i++)
			if (info->segments[i].npages >= min_pages &&
				(uint64) info->segments[i].start + info->segments[i].npages == start)
				big_below = true;
		if (!big_below &&
			(uint64) nblocks - below <
			(uint64) min_pages + below / SEGVEC_TAIL_SLACK_FRACTION)
			pin = PIN_NONE;
	}
	SegvecFreeMetaInfo(info);
	pfree(info);
	return pin;
}

/*
 * unpin_tail: move the keymap runs, small segments and one-page mutable
 * segment that end the used part of the index down into the lowest
 * reusable free runs that hold them, while moving them lets the free tail
 * be given back (tail_pin).
 * They are placed low when written (store/extent.c), but one written when
 * no hole below was reusable yet goes after the big segment, and would
 * keep the free space above the big segment from being truncated, and the
 * big segment from being moved, for as long as it lives (an old keymap
 * run: for good).  Returns whether it moved anything.  Caller holds no
 * compaction or merge lock.
 */
static bool
unpin_tail(Relation index, BlockNumber min_pages)
{
	bool		moved = false;
	int			i;

	for (i = 0; i < SEGVEC_KEYMAP_MAX_RUNS; i++)
	{
		SegvecSegment seg;
		SegvecKeymapRun run;
		TailPin		pin;
		bool		done = false;

		memset(&seg, 0, sizeof(seg));
		memset(&run, 0, sizeof(run));
		pin = tail_pin(index, min_pages, &seg, &run);

		if (pin == PIN_RUN)
		{
			/* only the compaction lock's holder installs runs */
			if (!ConditionalLockPage(index, SEGVEC_METAPAGE_BLKNO,
									 ExclusiveLock))
				break;
			done = KeymapMoveRun(index, run.runno, run.start, run.start);
			UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
		}
		else if (pin == PIN_SEGMENT)
			done = move_tail_segment(index, 1) == MOVE_DONE;
		else if (pin == PIN_MUTABLE)
			done = SegvecMutableRelocate(index);
		if (!done)
			break;
		moved = true;
	}
	return moved;
}

/*
 * pack_below: when the segment that ends the index (tail_segment) cannot
 * be moved for want of room, but the free blocks below it, counted down
 * from it across keymap runs (and the mutable segment, when it is one
 * page) only, would hold it if those were out of the way, move them down
 * (each into the lowest reusable free run below it, first fit; the
 * mutable page by SegvecMutableRelocate), so that the free blocks join
 * into one hole the
 * segment is moved into at the next shrink, once what the moves freed is
 * reusable.  Not when the runs are more than a quarter of the segment
 * (the copies would cost more than they bring).
 *
 * Likewise when the free blocks would not hold the segment but are at
 * least min_pages and four times the runs' pages: joined, and right below
 * the segment, they join the segment's extent once its next rewrite frees
 * it, and that rewrite's output is moved down into them.  Left split, the
 * free blocks below a run written early (a build's keymap run, which is
 * never rewritten, right after the built segment) would stay inside the
 * index for good: each output is moved into the lowest run that holds it,
 * which starts above that keymap run.
 *
 * Returns whether it moved anything.  Caller holds no compaction or merge
 * lock.
 */
static bool
pack_below(Relation index, BlockNumber min_pages)
{
	SegvecMetaInfo *info;
	SegvecSegment seg;
	SegvecKeymapRun *runs;
	int			nruns = 0;
	BlockNumber b;
	uint64		nfree = 0,
				nrun_pages = 0;
	bool		found = false;
	bool		join;
	bool		moved = false;
	bool		mutable_in = false;
	int			i;

	if (!tail_segment(index, min_pages, &seg))
		return false;
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(index, info);
	runs = palloc(sizeof(SegvecKeymapRun) * SEGVEC_KEYMAP_MAX_RUNS);
	b = seg.start;
	while (!found)
	{
		bool		step = false;

		for (i = 0; !step && i < (int) info->nfree; i++)
			if (info->free[i].npages > 0 &&
				(uint64) info->free[i].start + info->free[i].npages == b)
			{
				nfree += info->free[i].npages;
				b = info->free[i].start;
				step = true;
			}
		for (i = 0; !step && i < (int) info->keymap_nruns; i++)
			if (info->keymap_runs[i].npages > 0 &&
				(uint64) info->keymap_runs[i].start +
				info->keymap_runs[i].npages == b)
			{
				runs[nruns++] = info->keymap_runs[i];
				nrun_pages += info->keymap_runs[i].npages;
				b = info->keymap_runs[i].start;
				step = true;
			}
		/* the mutable segment, when it is one page (see SegvecMutableRelocate) */
		if (!step && !mutable_in &&
			info->mutable_head == info->mutable_tail &&
			info->mutable_head != InvalidBlockNumber &&
			(uint64) info->mutable_head + 1 == b)
		{
			mutable_in = true;
			b = info->mutable_head;
			step = true;
		}
		if (!step)
			break;
		found = nfree >= seg.npages;
	}
	SegvecFreeMetaInfo(info);
	pfree(info);

	if (found)
		join = nrun_pages <= seg.npages / 4;
	else
		join = nfree >= min_pages && nrun_pages <= nfree / 4;
	if (join && nruns > 0 &&
		ConditionalLockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock))
	{
		/* the lowest first: each goes as low as it fits */
		for (i = nruns - 1; i >= 0; i--)
			moved |= KeymapMoveRun(index, runs[i].runno, runs[i].start,
								   runs[i].start);
		UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	}
	if (join && mutable_in)
		moved |= SegvecMutableRelocate(index);
	pfree(runs);
	return moved;
}

/* qsort comparator: segments by first block */
static int
segment_start_cmp(const void *a, const void *b)
{
	BlockNumber x = ((const SegvecSegment *) a)->start;
	BlockNumber y = ((const SegvecSegment *) b)->start;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * pack_built: in a build, when the segment that ends the index fits in no
 * free run below it although the free blocks below it, taken together,
 * would hold it, move the lowest segment that a free run below it holds
 * down into it (first fit), so that the free runs above it join.  A build
 * whose docs do not fit in one merge leaves such a layout: a later merge
 * round writes its output into the hole an earlier one left, and the
 * hole's rest and the space of the later round's inputs are apart.
 * Returns whether it moved a segment.  Caller holds no compaction or merge
 * lock; everything a build frees is reusable at once.
 */
static bool
pack_built(Relation index)
{
	SegvecMetaInfo *info;
	SegvecSegment tail;
	SegvecSegment *segs;
	uint64		free_below = 0;
	int			nsegs = 0;
	bool		moved = false;
	int			i;

	if (!tail_segment(index, 1, &tail))
		return false;
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(index, info);
	for (i = 0; i < (int) info->nfree; i++)
		if ((uint64) info->free[i].start + info->free[i].npages <= tail.start)
			free_below += info->free[i].npages;
	segs = palloc(sizeof(SegvecSegment) * Max(info->nsegments, 1));
	for (i = 0; i < info->nsegments; i++)
		if (info->segments[i].segno != tail.segno)
			segs[nsegs++] = info->segments[i];
	SegvecFreeMetaInfo(info);
	pfree(info);

	if (free_below >= tail.npages)
	{
		qsort(segs, nsegs, sizeof(SegvecSegment), segment_start_cmp);
		for (i = 0; i < nsegs && !moved; i++)
		{
			SegvecSegment seg;

			if (!ConditionalLockPage(index, SEGVEC_MERGE_LOCK_BLKNO,
									 ExclusiveLock))
				break;
			if (SegvecClaimSegment(index, segs[i].segno))
			{
				if (find_segment(index, segs[i].segno, &seg))
					moved = move_segment(index, &seg) == MOVE_DONE;
				SegvecReleaseSegment(index, segs[i].segno);
			}
			UnlockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock);
		}
	}
	pfree(segs);
	return moved;
}

/*
 * SegvecShrinkBuilt: at the end of a CREATE INDEX (or REINDEX) whose
 * pieces were merged, move the merged segment down into the space the
 * pieces left below it (a build that merged in rounds: its segments, the
 * lower ones first when the free space must be joined, pack_built), and
 * give the free tail back: a build would otherwise end at about twice its
 * pages in use.  What the build's merges
 * freed is reusable at once (SegvecFreeStamp; the caller marks the build
 * with SegvecSetBuilding), and the builder holds every lock the move and
 * the truncation take.  Costs a copy of the segment; its WAL replaces the
 * merge output's, which is logged only if it stays (SegvecBuildSkipWAL).
 */
void
SegvecShrinkBuilt(Relation index)
{
	int			i;
	SegvecMetaInfo *info;

	/*
	 * One move normally; a few when several segments are left, and when
	 * the free space below the last one must be joined first (pack_built).
	 * Each move takes a segment lower, so this ends.
	 */
	for (i = 0; i < 64 && !SegvecTestSkip("build-move"); i++)
		if (move_tail_segment(index, 1) != MOVE_DONE &&
			!pack_built(index))
			break;

	/* the merge outputs left where they were written: logged now */
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(index, info);
	SegvecBuildLogLeft(index, info->segments, info->nsegments);
	SegvecFreeMetaInfo(info);
	pfree(info);

	(void) SegvecTruncateFreeTail(index, 1, false);
}

/*
 * SegvecShrink: after a background job's installs, move the segment at the
 * end of the index down when a reusable run below it holds it, then give
 * the free tail back, less the slack (SegvecTruncateFreeTailWait); waits
 * up to timeout_ms, in naps, for what the installs freed to become
 * reusable and for the locks (all taken without waiting).  Not if the
 * table's vacuum_truncate is off: the move would only be paid for by the
 * truncation.  (VACUUM does not move: it does not wait for reusability,
 * and with transactions held across its rounds a move put the big segment
 * where the next output could not follow, test/t/087_free_reuse.pl.)
 * Returns true when it moved a segment (or keymap run, or the mutable
 * segment's page): the old extent is reusable, and given back or used by
 * the next move, only once the xid that was next at the move's install is
 * older than every snapshot (the caller may take one and shrink again
 * after its commit, jobs/jobrun.c; each move takes a structure lower, so
 * this ends); and
 * when it waited in vain for an extent freed after the last xid was taken
 * (SegvecFreeAwaitsXid: a VACUUM's merge on a server that then went
 * quiet), which only a new xid makes reusable.  The xid the caller takes
 * then is that very xid, so the next shrink cannot ask again for the
 * same extents: this ends.
 * Caller holds no compaction or merge lock, and a lock on the index.
 */
bool
SegvecShrink(Relation index, int timeout_ms)
{
	BlockNumber min_pages;
	int			waited = 0;
	bool		moved = false;
	bool		blocked = false;
	bool		awaits;
	bool		truncated;

	if (IsInParallelMode() || RecoveryInProgress() ||
		!SegvecMayTruncate(index))
		return false;
	min_pages = Max(RelationGetNumberOfBlocks(index) / SEGVEC_TRUNCATE_FRACTION,
					1);
	for (;;)
	{
		MoveOutcome mv;

		/*
		 * Without an active snapshot (a background job) drop the catalog
		 * snapshot, as the merge loop does: its xmin would keep what the
		 * installs freed from becoming reusable while we wait.
		 */
		if (!ActiveSnapshotSet())
			InvalidateCatalogSnapshot();
		mv = move_tail_segment(index, min_pages);
		moved |= (mv == MOVE_DONE);

		/* what keeps the free tail, or the big segment, where they are */
		if (mv != MOVE_DONE && unpin_tail(index, min_pages))
		{
			moved = true;
			continue;
		}
		/* what splits the free space below the big segment */
		if (mv == MOVE_NONE && pack_below(index, min_pages))
			moved = true;
		blocked = mv == MOVE_WAIT;
		if (mv != MOVE_WAIT || waited >= timeout_ms)
			break;
		/* not the latch: a wake-up for the worker's loop must stay set */
		(void) WaitLatch(NULL, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 SEGVEC_TRUNCATE_NAP_MS, PG_WAIT_EXTENSION);
		waited += SEGVEC_TRUNCATE_NAP_MS;
		CHECK_FOR_INTERRUPTS();
	}
	/* before the truncation, whose lock takes an xid */
	awaits = SegvecFreeAwaitsXid(index);
	truncated = SegvecTruncateFreeTailWait(index,
										   Max(timeout_ms - waited,
											   SEGVEC_TRUNCATE_NAP_MS)) !=
		InvalidBlockNumber;
	/* a move's old extent waits for an xid after the move's install */
	if (moved)
		return true;
	return (blocked || !truncated) && awaits;
}

/*-------------------------------------------------------------------------
 *
 * extent.c
 *	  The free-extent list of a segvec index: contiguous runs of blocks that
 *	  an install freed (a dropped segment, a replaced keymap run, a replaced
 *	  manifest overflow chain), reused for new extents (big ones best fit,
 *	  small ones first fit) once no scan can still read them.
 *
 * The list lives in the metapage (SegvecMetaPageData.free), sorted by start
 * block, disjoint.  Adjacent entries are merged when they were freed at
 * the same xid; otherwise they stay apart until both are reusable (a
 * *run*: consecutive entries, each ending where the next starts, all
 * reusable), and are merged when a taker uses the run or the list is
 * full.  Merging them at once would give the old, reusable blocks the new
 * blocks' xid: under a steady stream of transactions a merge frees the
 * previous big segment next to the free space it left, and that space
 * would never be reusable when the next merge looks for room.  Every
 * change to the list is made under the metapage's exclusive lock, inside
 * a metapage WAL record:
 *
 *	- an install that drops an extent adds it, in the install's own record,
 *	  with the install's FullTransactionId (SegvecFreeExtentAdd); so do
 *	  the records that drop a compaction's frozen mutable pages and a
 *	  snapshot's frozen keymap change pages (SegvecFreePagesAdd);
 *	- SegvecExtentTake removes the blocks a new extent will use, in a
 *	  record of its own, before they are written (by the holder of the
 *	  compaction lock or the merge lock, or CREATE INDEX).  Nothing points at them until the
 *	  writer's install record; a crash or an error in between leaves them
 *	  neither free nor reachable, and VACUUM's cleanup finds them by kind
 *	  (unreachable pages) and puts them back on the list;
 *	- an insert that adds a mutable or keymap change page takes a single
 *	  page (SegvecFreePageTake) in the same record that links the page in.
 *
 * Reuse rule: an extent freed at xid is reused only once
 * GlobalVisCheckRemovableFullXid says xid is older than every running
 * snapshot.  A scan that read a manifest (or keymap directory) listing the
 * freed structure took its snapshot before the install, so its xmin is at
 * most xid and holds the horizon back; it is the rule nbtree and VACUUM's
 * page recycling use.  Hot standby queries do not hold the primary's
 * horizon back (without hot_standby_feedback): their pin-only reads check
 * each page's kind and stamp and cancel on a mismatch (graph/segpage.c,
 * keymap/keymap.c).
 *
 * Blocks on the list are never in the free space map, and VACUUM leaves
 * them alone (SegvecBlockIsFree), so a block is in at most one of: a live
 * structure, the free space map, the free-extent list.  VACUUM's cleanup
 * and a background job after its installs give the extent that ends at the
 * relation's end back to the operating system, less a slack
 * (SegvecTruncateFreeTail, under an AccessExclusiveLock taken without
 * waiting); nothing else ever shrinks the index.
 *
 * src/store/extent.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/storage.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#include "hooks/testhooks.h"
#include "store/store.h"

/* Can no scan read the blocks of free extent f any more? */
static bool
extent_reusable(const SegvecFreeExtent *f)
{
	return GlobalVisCheckRemovableFullXid(NULL,
										  FullTransactionIdFromU64(f->xid));
}

/*
 * SegvecFreeExtentReusable: may a new extent take the blocks of free
 * extent f now (for ft.storage_stats; callers that take blocks go by the
 * same rule under the metapage lock)?
 */
bool
SegvecFreeExtentReusable(const SegvecFreeExtent *f)
{
	SegvecRefreshHorizon();
	return extent_reusable(f);
}

/*
 * SegvecFreeAwaitsXid: is an extent on the free-extent list stamped with
 * the xid that is next now, so that no transaction took an xid since it
 * was freed?  On a quiet server it then never becomes reusable (a snapshot
 * taken now has that xid as its xmin) until someone takes one
 * (jobs/jobrun.c takes it after a shrink that waited for such an extent).
 */
bool
SegvecFreeAwaitsXid(Relation index)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	SegvecMetaPage meta;
	uint64		next;
	bool		awaits = false;
	uint32		k;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	next = U64FromFullTransactionId(ReadNextFullTransactionId());
	for (k = 0; k < meta->nfree && !awaits; k++)
		awaits = meta->free[k].xid >= next;
	UnlockReleaseBuffer(metabuf);
	return awaits;
}

/*
 * The index this backend is building (ambuild), if any.  No other backend
 * can read an index while it is built: CREATE INDEX and REINDEX create
 * its storage in their own transaction, and CREATE INDEX CONCURRENTLY
 * builds it while it is neither ready nor valid.  So what a build's merges
 * free is reusable at once (SegvecFreeStamp).
 */
static Oid	building_index = InvalidOid;

/*
 * The extents of the build's merge outputs, not WAL-logged yet
 * (SegvecBuildSkipWAL): most of them are moved down (a logged copy) or
 * merged again, and only those still in the manifest at the end are
 * logged (SegvecBuildLogLeft).
 */
#define SEGVEC_BUILD_UNLOGGED 64
static SegvecFreeExtent build_unlogged[SEGVEC_BUILD_UNLOGGED];
static int	build_nunlogged = 0;

/* SegvecSetBuilding: this backend builds indexid now (InvalidOid: none) */
void
SegvecSetBuilding(Oid indexid)
{
	building_index = indexid;
	build_nunlogged = 0;
}

/*
 * SegvecBuildSkipWAL: may the pages of the extent just written at start be
 * left unlogged for now?  During the index's build no one reads them
 * before the build ends, and it ends by logging what is left of them
 * (SegvecBuildLogLeft), before its commit; a crash before that discards
 * the index.  Records the extent and returns true, or returns false (not
 * building it, or the list is full): the caller logs them.
 */
bool
SegvecBuildSkipWAL(Relation index, BlockNumber start, BlockNumber npages)
{
	if (!OidIsValid(building_index) ||
		RelationGetRelid(index) != building_index ||
		build_nunlogged >= SEGVEC_BUILD_UNLOGGED)
		return false;
	build_unlogged[build_nunlogged].start = start;
	build_unlogged[build_nunlogged].npages = npages;
	build_unlogged[build_nunlogged].xid = 0;
	build_nunlogged++;
	return true;
}

/*
 * SegvecBuildLogLeft: at the end of the build, log as full page images the
 * unlogged extents that are still a live segment's (of the nsegs in segs).
 */
void
SegvecBuildLogLeft(Relation index, const SegvecSegment *segs, int nsegs)
{
	int			i,
				j;

	for (i = 0; i < build_nunlogged; i++)
		for (j = 0; j < nsegs; j++)
			if (segs[j].start == build_unlogged[i].start &&
				segs[j].npages == build_unlogged[i].npages &&
				RelationNeedsWAL(index))
				log_newpage_range(index, MAIN_FORKNUM, segs[j].start,
								  segs[j].start + segs[j].npages, true);
	build_nunlogged = 0;
}

/*
 * SegvecFreeStamp: the xid to stamp an extent that an install frees with,
 * read under the metapage's exclusive lock: the next xid, so that the
 * extent is reusable once no snapshot that could read the old manifest is
 * left; during the index's build, the first normal xid, reusable at once.
 */
uint64
SegvecFreeStamp(Relation index)
{
	if (OidIsValid(building_index) &&
		RelationGetRelid(index) == building_index)
		return U64FromFullTransactionId(FirstNormalFullTransactionId);
	return U64FromFullTransactionId(ReadNextFullTransactionId());
}

/* Does free extent a end where b starts? */
static inline bool
extents_adjacent(const SegvecFreeExtent *a, const SegvecFreeExtent *b)
{
	return (uint64) a->start + a->npages == b->start;
}

/*
 * Does a background job place extents for moves (compact/shrink.c)?  Then
 * the free tail is kept for the slack (tail_slack), and the big segment's
 * next output goes after it.  Foreground compactions and merges (VACUUM,
 * ft.compact) do not wait for what they free to become reusable, so moves
 * seldom follow them: they place extents as before moves existed.
 */
static bool
placing_for_moves(Relation index)
{
	return MyBackendType == B_BG_WORKER && SegvecMayTruncate(index);
}

/*
 * Merge entries first .. first + count - 1 of the list (adjacent ones)
 * into one, with the latest of their xids.
 */
static void
join_entries(SegvecMetaPage meta, uint32 first, uint32 count)
{
	SegvecFreeExtent *f = meta->free;
	uint32		k;

	if (count <= 1)
		return;
	for (k = 1; k < count; k++)
	{
		Assert(extents_adjacent(&f[first + k - 1], &f[first + k]));
		f[first].npages += f[first + k].npages;
		f[first].xid = Max(f[first].xid, f[first + k].xid);
	}
	memmove(&f[first + 1], &f[first + count],
			sizeof(SegvecFreeExtent) * (meta->nfree - first - count));
	meta->nfree -= count - 1;
}

static bool small_extent(Relation index, uint32 npages);
static BlockNumber extent_take(Relation index, uint32 npages,
							   BlockNumber limit, bool lowest, bool *wait);
static bool best_run_below(const SegvecFreeExtent *free, uint32 nfree,
						   uint64 npages, BlockNumber nblocks,
						   BlockNumber limit, bool reusable, bool lowest,
						   uint32 *first, uint32 *count);

/*
 * The best run of free[0 .. nfree) for npages blocks: among the runs
 * (maximal sequences of adjacent reusable entries) holding at least npages
 * blocks, the smallest, the lowest of equals; a run that ends at the
 * relation's end (nblocks) only when no other run holds npages, so that
 * the free tail stays free for SegvecTruncateFreeTail to give back
 * (nblocks InvalidBlockNumber: no such preference).  Sets *first and
 * *count to its entries and returns true, or returns false if no run holds
 * npages.  Each entry's reusability is judged once.
 */
static bool
best_run(const SegvecFreeExtent *free, uint32 nfree, uint64 npages,
		 BlockNumber nblocks, uint32 *first, uint32 *count)
{
	return best_run_below(free, nfree, npages, nblocks, InvalidBlockNumber,
						  true, false, first, count);
}

/*
 * best_run_below: best_run among the runs that end at or below block
 * limit (InvalidBlockNumber: anywhere); with !reusable, entries count
 * whether or not they are reusable yet (would a run hold npages once they
 * are?); with lowest, the lowest run that holds npages (first fit).
 */
static bool
best_run_below(const SegvecFreeExtent *free, uint32 nfree, uint64 npages,
			   BlockNumber nblocks, BlockNumber limit, bool reusable,
			   bool lowest, uint32 *first, uint32 *count)
{
	uint32		i = 0;
	uint64		best = 0;
	bool		found = false;
	bool		tail_found = false;
	uint32		tail_first = 0,
				tail_count = 0;

	while (i < nfree)
	{
		uint32		j;
		uint64		size;

		if ((reusable && !extent_reusable(&free[i])) || free[i].start >= limit)
		{
			i++;
			continue;
		}
		size = free[i].npages;
		for (j = i + 1; j < nfree && extents_adjacent(&free[j - 1], &free[j]); j++)
		{
			if ((reusable && !extent_reusable(&free[j])) ||
				(uint64) free[j].start + free[j].npages > limit)
				break;
			size += free[j].npages;
		}
		if ((uint64) free[i].start + free[i].npages > limit)
		{
			i = j;
			continue;
		}
		if (size >= npages &&
			(uint64) free[j - 1].start + free[j - 1].npages == nblocks)
		{
			tail_found = true;
			tail_first = i;
			tail_count = j - i;
		}
		else if (size >= npages && (!found || size < best))
		{
			found = true;
			best = size;
			*first = i;
			*count = j - i;
			if (lowest)
				break;
		}
		i = j;
	}
	if (!found && tail_found)
	{
		*first = tail_first;
		*count = tail_count;
		found = true;
	}
	return found;
}

/*
 * SegvecFreeExtentAdd: on the writable copy of the metapage, put blocks
 * [start, start + npages) on the free-extent list, freed at xid.  They join
 * an adjacent entry freed at the same xid; an adjacent entry freed at
 * another xid stays apart (see the file's header).  When the list is full,
 * two adjacent reusable entries are merged to make room (which costs
 * nothing); failing that the blocks join an adjacent entry anyway (which
 * then waits for the later xid); failing that any two adjacent entries
 * are merged.  Returns false, changing nothing, when the list is full and
 * nothing could be merged: the caller then hands the pages to page-level
 * recycling instead.
 */
bool
SegvecFreeExtentAdd(SegvecMetaPage meta, BlockNumber start, uint32 npages,
					uint64 xid)
{
	uint32		i;
	SegvecFreeExtent *f = meta->free;
	SegvecFreeExtent add;
	bool		prev_adj,
				next_adj;
	bool		full = meta->nfree >= SEGVEC_MAX_FREE_EXTENTS;

	if (npages == 0 || start == InvalidBlockNumber)
		return true;
	add.start = start;
	add.npages = npages;
	add.xid = xid;

	/* position: the first entry starting after start */
	for (i = 0; i < meta->nfree; i++)
		if (f[i].start > start)
			break;
	prev_adj = i > 0 && extents_adjacent(&f[i - 1], &add);
	next_adj = i < meta->nfree && extents_adjacent(&add, &f[i]);

	/* joins the previous entry? */
	if (prev_adj && f[i - 1].xid == xid)
	{
		f[i - 1].npages += npages;
		/* and now the next one too? */
		if (next_adj && f[i].xid == xid)
			join_entries(meta, i - 1, 2);
		return true;
	}
	/* joins the next entry? */
	if (next_adj && f[i].xid == xid)
	{
		f[i].start = start;
		f[i].npages += npages;
		return true;
	}
	if (full)
	{
		uint32		k;

		/* make room at no cost: two adjacent reusable entries become one */
		for (k = 1; k < meta->nfree; k++)
			if (extents_adjacent(&f[k - 1], &f[k]) &&
				extent_reusable(&f[k - 1]) && extent_reusable(&f[k]))
				break;
		if (k >= meta->nfree)
		{
			/* else join a neighbour, which then waits for the later xid */
			if (prev_adj || next_adj)
			{
				uint32		j = prev_adj ? i - 1 : i;

				if (prev_adj)
					f[j].npages += npages;
				else
				{
					f[j].start = start;
					f[j].npages += npages;
				}
				f[j].xid = Max(f[j].xid, xid);
				return true;
			}
			/* else any two adjacent entries */
			for (k = 1; k < meta->nfree; k++)
				if (extents_adjacent(&f[k - 1], &f[k]))
					break;
			if (k >= meta->nfree)
				return false;
		}
		join_entries(meta, k - 1, 2);
		if (k < i)
			i--;
	}
	memmove(&f[i + 1], &f[i], sizeof(SegvecFreeExtent) * (meta->nfree - i));
	f[i] = add;
	meta->nfree++;
	return true;
}

/*
 * SegvecExtentTake: take npages contiguous free blocks from the free-extent
 * list, among the runs of blocks no scan can read any more: for a big
 * extent (a rewrite of the big segment) best fit (the smallest run that
 * holds them, the lowest of equals), so that the big extents a big merge
 * needs stay whole; for a small one (small_extent) first fit (the lowest
 * run that holds them), so that small structures gather low and leave
 * the holes above them whole (src/README.md, "Free extents").  Either
 * takes its run's first blocks, or the free tail's last; returns the first
 * block, or InvalidBlockNumber if none fits (the caller extends the
 * relation).  The run's entries become one.  One WAL record on the
 * metapage, under its exclusive lock, so concurrent takers get different
 * blocks.  Caller holds the compaction lock or, for a merge's output, the
 * merge lock (or builds the index).
 */
BlockNumber
SegvecExtentTake(Relation index, uint32 npages)
{
	return extent_take(index, npages, InvalidBlockNumber,
					   small_extent(index, npages), NULL);
}

/*
 * SegvecExtentTakeBelow: SegvecExtentTake from the runs that end at or
 * below block limit only, and the lowest that holds npages (first fit):
 * for a segment moved down (compact/shrink.c), as low as it goes, so
 * that what is free above it joins the free tail.
 * When none holds npages, sets *wait (if not NULL) to whether one would
 * once the entries freed last are reusable.
 */
BlockNumber
SegvecExtentTakeBelow(Relation index, uint32 npages, BlockNumber limit,
					  bool *wait)
{
	return extent_take(index, npages, limit, true, wait);
}

/*
 * Is an extent of npages blocks small: below what a move would bring down
 * (SEGVEC_TRUNCATE_FRACTION of the index, compact/shrink.c)?  Small
 * extents are never moved, so they are placed as low as they fit.
 */
static bool
small_extent(Relation index, uint32 npages)
{
	return npages < RelationGetNumberOfBlocks(index) / SEGVEC_TRUNCATE_FRACTION;
}

/*
 * extent_take: take npages blocks from the runs that end at or below limit
 * (InvalidBlockNumber: anywhere); with lowest, from the lowest run that
 * holds them (first fit), else from the smallest (best fit).  See
 * SegvecExtentTakeBelow for wait.
 */
static BlockNumber
extent_take(Relation index, uint32 npages, BlockNumber limit, bool lowest,
			bool *wait)
{
	Buffer		metabuf;
	SegvecMetaPage meta;
	GenericXLogState *state;
	BlockNumber start = InvalidBlockNumber;
	BlockNumber nblocks;
	uint32		first,
				count;

	if (wait)
		*wait = false;
	if (npages == 0)
		return InvalidBlockNumber;

	SegvecRefreshHorizon();
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	/* for best_run's preference only: a size out of date does no harm */
	nblocks = placing_for_moves(index) ? RelationGetNumberOfBlocks(index) :
		InvalidBlockNumber;
	if (best_run_below(meta->free, meta->nfree, npages, nblocks, limit, true,
					   lowest, &first, &count))
	{
		SegvecFreeExtent *f;

		state = GenericXLogStart(index);
		meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		join_entries(meta, first, count);
		f = &meta->free[first];
		Assert(f->npages >= npages);
		if ((uint64) f->start + f->npages == nblocks)
		{
			/* the free tail: its last blocks (see SegvecFreePageTake) */
			start = f->start + f->npages - npages;
		}
		else
		{
			start = f->start;
			f->start += npages;
		}
		f->npages -= npages;
		if (f->npages == 0)
		{
			memmove(f, f + 1,
					sizeof(SegvecFreeExtent) * (meta->nfree - first - 1));
			meta->nfree--;
		}
		SegvecMetaFreeze(meta);
		GenericXLogFinish(state);
	}
	else if (wait)
		*wait = best_run_below(meta->free, meta->nfree, npages,
							   InvalidBlockNumber, limit, false, true,
							   &first, &count);
	UnlockReleaseBuffer(metabuf);
	return start;
}

/*
 * SegvecFreePageAvailable: would SegvecFreePageTake find a page?  Caller
 * holds the metapage locked.
 */
bool
SegvecFreePageAvailable(SegvecMetaPage meta)
{
	uint32		first,
				count;

	return best_run(meta->free, meta->nfree, 1, InvalidBlockNumber,
					&first, &count);
}

/*
 * SegvecFreePageTake: on the writable copy of the metapage (so in the
 * caller's WAL record), take one free page.  With lowest (mutable pages,
 * which come and go by the hundred), the lowest reusable block (address
 * order), so that they gather low and leave the holes above them whole,
 * to join the holes merges free next to them; otherwise (keymap change
 * pages) the last block of the smallest reusable run, so that a hole a
 * single page left is filled first (the chains a keymap snapshot frees
 * are reused by the next ones).  A mutable page takes the free tail of the
 * relation only when there is no other run, and then its last block: the
 * free tail is mostly the slack a truncation leaves after the big segment
 * (tail_slack), and a live page next to that segment would split the hole
 * it leaves at its next rewrite, too small then for the output to be moved
 * down (compact/shrink.c).  Returns InvalidBlockNumber if there is none.
 * Callers that add a mutable or keymap change page use it (they hold the
 * metapage exclusively and register it in their record anyway); nothing
 * else can reach the page, so the caller may lock it next
 * (SegvecLockFreePage).
 */
BlockNumber
SegvecFreePageTake(Relation index, SegvecMetaPage meta, bool lowest)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	SegvecFreeExtent *f = meta->free;
	uint32		first,
				count;
	int			i = -1;
	BlockNumber blkno;

	if (lowest)
	{
		uint32		k;

		for (k = 0; k < meta->nfree; k++)
			if (extent_reusable(&f[k]) &&
				(uint64) f[k].start + f[k].npages != nblocks)
			{
				i = (int) k;
				break;
			}
	}
	if (i >= 0)
	{
		blkno = f[i].start;
		f[i].start++;
	}
	else
	{
		/* keymap change pages: no preference against the free tail */
		if (!best_run(f, meta->nfree, 1, lowest ? nblocks : InvalidBlockNumber,
					  &first, &count))
			return InvalidBlockNumber;
		i = (int) (first + count - 1);
		blkno = f[i].start + f[i].npages - 1;
	}
	f[i].npages--;
	if (f[i].npages == 0)
	{
		memmove(&f[i], &f[i + 1], sizeof(SegvecFreeExtent) * (meta->nfree - i - 1));
		meta->nfree--;
	}
	return blkno;
}

/*
 * SegvecLockFreePage: the buffer of a page SegvecFreePageTake gave,
 * exclusively locked and zeroed (its old contents are of no use).
 */
Buffer
SegvecLockFreePage(Relation index, BlockNumber blkno)
{
	return ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_ZERO_AND_LOCK,
							  NULL);
}

static int
block_cmp(const void *a, const void *b)
{
	BlockNumber ba = *(const BlockNumber *) a;
	BlockNumber bb = *(const BlockNumber *) b;

	return ba < bb ? -1 : ba > bb ? 1 : 0;
}

/*
 * SegvecFreePagesAdd: on the writable copy of the metapage, put the pages
 * blocks[0 .. nblocks) (sorted here; consecutive ones become one extent) on
 * the free-extent list, freed at xid.  All or nothing: returns false,
 * changing nothing, when the list has no room for them.
 */
bool
SegvecFreePagesAdd(SegvecMetaPage meta, BlockNumber *blocks, int nblocks,
				   uint64 xid)
{
	SegvecFreeExtent *saved;
	uint32		nsaved = meta->nfree;
	int			i = 0;
	bool		ok = true;

	if (nblocks == 0)
		return true;
	qsort(blocks, nblocks, sizeof(BlockNumber), block_cmp);
	saved = palloc(sizeof(SegvecFreeExtent) * Max(nsaved, 1));
	memcpy(saved, meta->free, sizeof(SegvecFreeExtent) * nsaved);
	while (ok && i < nblocks)
	{
		int			j = i + 1;

		while (j < nblocks && blocks[j] == blocks[j - 1] + 1)
			j++;
		ok = SegvecFreeExtentAdd(meta, blocks[i], (uint32) (j - i), xid);
		i = j;
	}
	if (!ok)
	{
		memcpy(meta->free, saved, sizeof(SegvecFreeExtent) * nsaved);
		meta->nfree = nsaved;
	}
	pfree(saved);
	return ok;
}

/*
 * The free blocks a truncation leaves at the end of an index whose used
 * part ends at block end: 1/SEGVEC_TAIL_SLACK_FRACTION of it.  The next
 * rewrite of the big segment goes after them (SegvecAllocExtent), so that
 * once its input is freed, the input, the slack and what lies free next to
 * them hold the output, which is then moved down (compact/shrink.c) and
 * its old extent truncated.  Without the slack the hole the input leaves
 * is smaller than the output, a little bigger, and the index stays at
 * twice its big segment until the next rewrite.
 */
static BlockNumber
tail_slack(BlockNumber end)
{
	return end / SEGVEC_TAIL_SLACK_FRACTION;
}

/* What the free-extent list says of the relation's end (free_tail) */
typedef enum FreeTail
{
	FREE_TAIL_NONE,				/* no free extent of min_pages ends there */
	FREE_TAIL_WAIT,				/* one does, not reusable yet */
	FREE_TAIL_READY				/* one does, reusable */
} FreeTail;

/*
 * Does the free-extent list end with an extent of at least min_pages
 * blocks (with the reusable entries adjacent to it) that ends at the
 * relation's end, so that SegvecTruncateFreeTail would truncate it?
 * Sorted and disjoint: only the last entry can end there.
 */
static FreeTail
free_tail(Relation index, BlockNumber min_pages, bool keep_slack)
{
	Buffer		metabuf;
	SegvecMetaPage meta;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	FreeTail	result = FREE_TAIL_NONE;

	SegvecRefreshHorizon();
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	if (meta->nfree > 0)
	{
		SegvecFreeExtent *f = meta->free;
		uint32		k = meta->nfree - 1;
		uint64		size = f[k].npages;

		if ((uint64) f[k].start + f[k].npages == nblocks &&
			f[k].start > SEGVEC_METAPAGE_BLKNO)
		{
			if (!extent_reusable(&f[k]))
				result = size >= min_pages +
					(keep_slack ? tail_slack(f[k].start) : 0) ?
					FREE_TAIL_WAIT : FREE_TAIL_NONE;
			else
			{
				while (k > 0 && extents_adjacent(&f[k - 1], &f[k]) &&
					   f[k - 1].start > SEGVEC_METAPAGE_BLKNO &&
					   extent_reusable(&f[k - 1]))
					size += f[--k].npages;
				if (keep_slack)
					size -= Min(size, tail_slack(f[k].start));
				result = size >= min_pages ? FREE_TAIL_READY : FREE_TAIL_NONE;
			}
		}
	}
	UnlockReleaseBuffer(metabuf);
	return result;
}

/*
 * SegvecTruncateFreeTail: give the free extent at the relation's end (with
 * the reusable entries adjacent to it) back to the operating system, if it
 * holds at least min_pages blocks.  Nothing else ever shrinks the index:
 * what a merge frees stays on the free-extent list until a new extent
 * reuses it.  Returns the new size in blocks, or InvalidBlockNumber if
 * nothing was truncated.
 *
 * Only with an AccessExclusiveLock on the index, taken without waiting
 * (VACUUM truncates a heap the same way): every reader and writer of the
 * index holds a lock on it for as long as it may touch its pages (a scan
 * holding an old manifest, an insert, a compaction, a merge, a background
 * job), so none can be reading the blocks, extending the relation or
 * taking from the list meanwhile.  A hot standby replays the lock (it is
 * WAL-logged), which cancels the standby's scans of the index first.  The
 * extent must also be reusable (GlobalVisCheckRemovableFullXid), as for
 * SegvecExtentTake, although the lock alone would do.
 *
 * Order: one metapage record takes the extent off the list, then
 * RelationTruncate logs and does the truncation.  A crash in between
 * leaves the blocks neither free nor reachable; VACUUM's cleanup puts
 * them back on the list (as for a crashed merge).
 * Callers are VACUUM's cleanup (not a parallel worker) and a background
 * compaction job after its installs (SegvecTruncateFreeTailWait), holding
 * no buffer lock; a lock on the index they already hold is no conflict.
 */
BlockNumber
SegvecTruncateFreeTail(Relation index, BlockNumber min_pages, bool keep_slack)
{
	Buffer		metabuf;
	SegvecMetaPage meta;
	GenericXLogState *state;
	BlockNumber nblocks;
	BlockNumber new_end = InvalidBlockNumber;

	if (IsInParallelMode() || RecoveryInProgress())
		return InvalidBlockNumber;

	/*
	 * Only if there is something to truncate: the lock is WAL-logged, and
	 * a standby's replay of it cancels the standby's scans of the index.
	 */
	if (free_tail(index, min_pages, keep_slack) != FREE_TAIL_READY)
		return InvalidBlockNumber;
	if (!ConditionalLockRelation(index, AccessExclusiveLock))
		return InvalidBlockNumber;

	nblocks = RelationGetNumberOfBlocks(index);
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	if (meta->nfree > 0)
	{
		SegvecFreeExtent *f = meta->free;
		uint32		k = meta->nfree - 1;

		/* again, under the lock; with the reusable entries adjacent to it */
		if (f[k].start + f[k].npages == nblocks && extent_reusable(&f[k]))
		{
			while (k > 0 && extents_adjacent(&f[k - 1], &f[k]) &&
				   extent_reusable(&f[k - 1]))
				k--;
			if (f[k].start <= SEGVEC_METAPAGE_BLKNO)
				k++;
		}
		else
			k = meta->nfree;
		if (k < meta->nfree)
		{
			BlockNumber keep = keep_slack ? tail_slack(f[k].start) : 0;

			if (nblocks - f[k].start >= (uint64) min_pages + keep)
				new_end = f[k].start + keep;
		}
		if (new_end != InvalidBlockNumber)
		{
			state = GenericXLogStart(index);
			meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
			f = meta->free;
			/* the slack stays on the list, one entry */
			join_entries(meta, k, meta->nfree - k);
			if (new_end > f[k].start)
			{
				f[k].npages = new_end - f[k].start;
				meta->nfree = k + 1;
			}
			else
				meta->nfree = k;
			SegvecMetaFreeze(meta);
			GenericXLogFinish(state);
		}
	}
	UnlockReleaseBuffer(metabuf);

	if (new_end != InvalidBlockNumber)
	{
		SegvecTestPoint("truncate-unlisted");
		RelationTruncate(index, new_end);
	}
	UnlockRelation(index, AccessExclusiveLock);
	return new_end;
}

/*
 * SegvecMayTruncate: may the index be truncated?  Not if its table's
 * vacuum_truncate option is off (its AccessExclusiveLock is replayed on
 * standbys, where it cancels queries).  Caller holds a lock on the table.
 */
bool
SegvecMayTruncate(Relation index)
{
	Relation	heap;
	bool		ok;

	heap = relation_open(index->rd_index->indrelid, NoLock);
	ok = heap->rd_options == NULL ||
		((StdRdOptions *) heap->rd_options)->vacuum_truncate;
	relation_close(heap, NoLock);
	return ok;
}

/*
 * SegvecTruncateFreeTailWait: after a background job's installs, give back
 * a free tail of at least 1/SEGVEC_TRUNCATE_FRACTION of the relation (a
 * merge's input, when its output went below it), waiting up to timeout_ms
 * for it to become reusable (the transactions that were running at the
 * install end within milliseconds under a stream of short ones) and for
 * the lock (taken without waiting, retried, as VACUUM's heap truncation
 * does).  Small tails are left to VACUUM: each truncation's lock is
 * replayed on standbys, where it cancels the scans of the index.  Returns
 * the new size in blocks, or InvalidBlockNumber.
 */
BlockNumber
SegvecTruncateFreeTailWait(Relation index, int timeout_ms)
{
	BlockNumber min_pages;
	int			waited = 0;

	if (IsInParallelMode() || RecoveryInProgress() ||
		!SegvecMayTruncate(index))
		return InvalidBlockNumber;
	min_pages = Max(RelationGetNumberOfBlocks(index) / SEGVEC_TRUNCATE_FRACTION,
					1);
	for (;;)
	{
		FreeTail	tail;
		BlockNumber new_end;

		/* no catalog snapshot holding the horizon back (see SegvecShrink) */
		if (!ActiveSnapshotSet())
			InvalidateCatalogSnapshot();
		tail = free_tail(index, min_pages, true);

		if (tail == FREE_TAIL_NONE)
			return InvalidBlockNumber;
		if (tail == FREE_TAIL_READY)
		{
			new_end = SegvecTruncateFreeTail(index, min_pages, true);
			if (new_end != InvalidBlockNumber)
				return new_end;
		}
		if (waited >= timeout_ms)
			return InvalidBlockNumber;
		/* not the latch: a wake-up for the worker's loop must stay set */
		(void) WaitLatch(NULL, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 SEGVEC_TRUNCATE_NAP_MS, PG_WAIT_EXTENSION);
		waited += SEGVEC_TRUNCATE_NAP_MS;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * SegvecBlockIsFree: is blkno on the free-extent list free[0 .. nfree)
 * (sorted by start)?
 */
bool
SegvecBlockIsFree(const SegvecFreeExtent *free, uint32 nfree,
				  BlockNumber blkno)
{
	uint32		lo = 0,
				hi = nfree;

	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (blkno < free[mid].start)
			hi = mid;
		else if (blkno >= free[mid].start + free[mid].npages)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/*
 * extend_from_free_tail: when the free-extent list ends with a reusable run
 * that ends at the relation's end but is too small for npages blocks (so
 * best fit missed it), extend the relation by the blocks missing and take
 * the run: the new extent is the run plus the new blocks, and the relation
 * grows by npages less the run, not by npages.  Returns the first block,
 * or InvalidBlockNumber when the list has no such run.
 *
 * Under the size-ratio merge policy this is the common case: each merge of
 * the big segment writes an output a little bigger than the input it
 * frees, so the freed copy, often the relation's last extent, never holds
 * the next output; without this the next output went after it and the
 * index kept both.
 *
 * Locks: the metapage exclusively, then the relation extension lock (the
 * order of keymap change pages: see the locking rules), so no one extends
 * the relation or changes the list between looking at its end and taking
 * the run.  The metapage stays locked while the missing blocks are added
 * (zero pages, none written), which is as long as an insert that needs a
 * new page already waits for the extension lock during any extent's
 * extension.  The blocks are added before the record that takes the run:
 * an error while adding them leaves the list as it was and the new blocks
 * zeroes (VACUUM's cleanup gives those to the free space map); from the
 * record on, the run is the caller's, as after SegvecExtentTake.
 */
static BlockNumber
extend_from_free_tail(Relation index, uint32 npages)
{
	bool		needLock = !RELATION_IS_LOCAL(index);
	Buffer		metabuf;
	SegvecMetaPage meta;
	SegvecFreeExtent *f;
	BlockNumber nblocks;
	BlockNumber start = InvalidBlockNumber;
	uint64		tail = 0;
	uint32		first = 0;

	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	nblocks = RelationGetNumberOfBlocks(index);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	f = meta->free;
	if (meta->nfree > 0 &&
		(uint64) f[meta->nfree - 1].start + f[meta->nfree - 1].npages == nblocks &&
		extent_reusable(&f[meta->nfree - 1]))
	{
		first = meta->nfree - 1;
		tail = f[first].npages;
		while (first > 0 && extents_adjacent(&f[first - 1], &f[first]) &&
			   extent_reusable(&f[first - 1]))
		{
			first--;
			tail += f[first].npages;
		}
		if (f[first].start <= SEGVEC_METAPAGE_BLKNO)
			tail = 0;			/* cannot happen: block 0 is the metapage */
	}
	if (tail > 0 && tail < npages)
	{
		GenericXLogState *state;
		uint32		k;

		start = f[first].start;
		for (k = 0; k < npages - tail; k++)
		{
			Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW,
												 RBM_NORMAL, NULL);

			if (BufferGetBlockNumber(buf) != nblocks + k)
				elog(ERROR, "segvec index \"%s\": extent is not contiguous",
					 RelationGetRelationName(index));
			ReleaseBuffer(buf);
		}
		SegvecTestPoint("extent-tail-extended");

		/* the run is the list's last entries */
		state = GenericXLogStart(index);
		meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		meta->nfree = first;
		SegvecMetaFreeze(meta);
		GenericXLogFinish(state);
	}
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	UnlockReleaseBuffer(metabuf);
	return start;
}

/*
 * SegvecAllocExtent: npages contiguous blocks for a new extent, nothing in
 * them reachable: from the free-extent list (SegvecExtentTake: best fit,
 * or first fit for a small extent),
 * else added at the end of the relation.  Returns the first block.  The
 * caller fills them and WAL-logs them as full page images before anything
 * points at them (SegvecFillExtent; a merge fills and changes them over the
 * length of its build, then logs them: graph/graphmerge.c), and then
 * installs them.
 *
 * The relation extension lock is held only while the blocks are added
 * (PostgreSQL 15 has no ExtendBufferedRelBy: one block at a time, none
 * written), so that they are contiguous; the pages are filled and logged
 * after it is released, so backends that extend the index meanwhile (an
 * insert adding a mutable page under its tail lock) wait for a few
 * zero-page extensions, not for the whole write.  The blocks are neither
 * reachable nor in the free space map, so no one else touches them
 * meanwhile.  A crash in between leaves them all zeroes; VACUUM's cleanup
 * gives those to the free space map, and it runs under the compaction
 * lock, which every extent writer holds, or the merge lock, which a merge
 * holds (CREATE INDEX excludes VACUUM by its table lock), so it never
 * takes blocks still being written.
 */
BlockNumber
SegvecAllocExtent(Relation index, uint32 npages)
{
	bool		needLock = !RELATION_IS_LOCAL(index);
	BlockNumber start;
	uint32		k;

	if (npages == 0)
		return InvalidBlockNumber;

	start = SegvecExtentTake(index, npages);
	if (start != InvalidBlockNumber)
		return start;

	/*
	 * A background job moves the big segment down after its installs
	 * (compact/shrink.c), for which the free tail, mostly the slack a
	 * truncation keeps (tail_slack), must stay between the big segment
	 * and the output of its next rewrite: the extent goes after it.
	 * Foreground compactions and merges (VACUUM, ft.compact) do not wait
	 * for what they freed to become reusable, so moves seldom follow
	 * them: they start the extent in the free tail.
	 */
	if (!placing_for_moves(index))
		start = extend_from_free_tail(index, npages);
	if (start != InvalidBlockNumber)
		return start;

	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	for (k = 0; k < npages; k++)
	{
		Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW,
											 RBM_NORMAL, NULL);

		if (k == 0)
			start = BufferGetBlockNumber(buf);
		else if (BufferGetBlockNumber(buf) != start + k)
			elog(ERROR, "segvec index \"%s\": extent is not contiguous",
				 RelationGetRelationName(index));
		ReleaseBuffer(buf);
	}
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return start;
}

/*
 * SegvecFillExtent: write the npages blocks from start (from
 * SegvecAllocExtent): fill(page, k, arg) fills page k, in increasing order,
 * into a zeroed private page (outside any critical section, so it may read
 * buffers and fail); the page is then copied into the buffer and logged as
 * a full page image, so the extent is durable before anything points at
 * it.
 */
void
SegvecFillExtent(Relation index, BlockNumber start, uint32 npages,
				 SegvecFillPageFn fill, void *arg)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKWRITE);
	PGAlignedBlock local;
	uint32		k;

	for (k = 0; k < npages; k++)
	{
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();

		MemSet(local.data, 0, BLCKSZ);
		fill((Page) local.data, k, arg);

		/* zeroed and locked, without reading it */
		buf = ReadBufferExtended(index, MAIN_FORKNUM, start + k,
								 RBM_ZERO_AND_LOCK, strategy);

		START_CRIT_SECTION();
		memcpy(BufferGetPage(buf), local.data, BLCKSZ);
		MarkBufferDirty(buf);
		if (RelationNeedsWAL(index))
			log_newpage_buffer(buf, true);
		END_CRIT_SECTION();

		UnlockReleaseBuffer(buf);
	}

	FreeAccessStrategy(strategy);
}

/*
 * SegvecWriteExtent: SegvecAllocExtent and SegvecFillExtent in one; returns
 * the first block.
 */
BlockNumber
SegvecWriteExtent(Relation index, uint32 npages, SegvecFillPageFn fill,
				  void *arg)
{
	BlockNumber start = SegvecAllocExtent(index, npages);

	if (start != InvalidBlockNumber)
		SegvecFillExtent(index, start, npages, fill, arg);
	return start;
}

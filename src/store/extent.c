/*-------------------------------------------------------------------------
 *
 * extent.c
 *	  The free-extent list of a segvec index: contiguous runs of blocks that
 *	  an install freed (a dropped segment, a replaced keymap run, a replaced
 *	  manifest overflow chain), reused best fit for new extents once no
 *	  scan can still read them.
 *
 * The list lives in the metapage (SegvecMetaPageData.free), sorted by start
 * block, neighbours coalesced.  Every change to it is made under the
 * metapage's exclusive lock, inside a metapage WAL record:
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
 *	  (unreachable pages) and recycles them page by page;
 *	- an insert that adds a mutable or keymap change page takes a single
 *	  page (SegvecFreePageTake, the last page of the smallest reusable
 *	  extent) in the same record that links the page in.
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
 * gives the extent that ends at the relation's end back to the operating
 * system (SegvecTruncateFreeTail, under an AccessExclusiveLock it gets
 * without waiting); nothing else ever shrinks the index.
 *
 * src/store/extent.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/storage.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "hooks/testhooks.h"
#include "store/store.h"

/*
 * SegvecFreeExtentAdd: on the writable copy of the metapage, put blocks
 * [start, start + npages) on the free-extent list, freed at xid (merging
 * with an adjacent entry, which then takes the later xid).  Returns false,
 * changing nothing, when the list is full and nothing could be merged: the
 * caller then hands the pages to page-level recycling instead.
 */
bool
SegvecFreeExtentAdd(SegvecMetaPage meta, BlockNumber start, uint32 npages,
					uint64 xid)
{
	uint32		i;
	SegvecFreeExtent *f = meta->free;

	if (npages == 0 || start == InvalidBlockNumber)
		return true;

	/* position: the first entry starting after start */
	for (i = 0; i < meta->nfree; i++)
		if (f[i].start > start)
			break;

	/* joins the previous entry? */
	if (i > 0 && f[i - 1].start + f[i - 1].npages == start)
	{
		f[i - 1].npages += npages;
		f[i - 1].xid = Max(f[i - 1].xid, xid);
		/* and now the next one too? */
		if (i < meta->nfree &&
			f[i - 1].start + f[i - 1].npages == f[i].start)
		{
			f[i - 1].npages += f[i].npages;
			f[i - 1].xid = Max(f[i - 1].xid, f[i].xid);
			memmove(&f[i], &f[i + 1],
					sizeof(SegvecFreeExtent) * (meta->nfree - i - 1));
			meta->nfree--;
		}
		return true;
	}
	/* joins the next entry? */
	if (i < meta->nfree && start + npages == f[i].start)
	{
		f[i].start = start;
		f[i].npages += npages;
		f[i].xid = Max(f[i].xid, xid);
		return true;
	}
	if (meta->nfree >= SEGVEC_MAX_FREE_EXTENTS)
		return false;
	memmove(&f[i + 1], &f[i], sizeof(SegvecFreeExtent) * (meta->nfree - i));
	f[i].start = start;
	f[i].npages = npages;
	f[i].xid = xid;
	meta->nfree++;
	return true;
}

/*
 * SegvecExtentTake: take npages contiguous free blocks from the free-extent
 * list, best fit among the extents no scan can read any more (the smallest
 * that holds them, the lowest of equals; its first blocks), so that the
 * big extents a big merge needs stay whole; returns the
 * first block, or InvalidBlockNumber if none fits (the caller extends the
 * relation).  One WAL record on the metapage, under its exclusive lock,
 * so concurrent takers get different blocks.  Caller holds the compaction
 * lock or, for a merge's output, the merge lock (or builds the index).
 */
BlockNumber
SegvecExtentTake(Relation index, uint32 npages)
{
	Buffer		metabuf;
	SegvecMetaPage meta;
	GenericXLogState *state;
	BlockNumber start = InvalidBlockNumber;
	uint32		i;
	int			best = -1;

	if (npages == 0)
		return InvalidBlockNumber;

	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	/* best fit: the smallest reusable extent that holds npages */
	for (i = 0; i < meta->nfree; i++)
	{
		if (meta->free[i].npages < npages ||
			(best >= 0 && meta->free[i].npages >= meta->free[best].npages))
			continue;
		if (GlobalVisCheckRemovableFullXid(NULL,
										   FullTransactionIdFromU64(meta->free[i].xid)))
			best = (int) i;
	}
	if (best >= 0)
	{
		i = (uint32) best;
		state = GenericXLogStart(index);
		meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		start = meta->free[i].start;
		meta->free[i].start += npages;
		meta->free[i].npages -= npages;
		if (meta->free[i].npages == 0)
		{
			memmove(&meta->free[i], &meta->free[i + 1],
					sizeof(SegvecFreeExtent) * (meta->nfree - i - 1));
			meta->nfree--;
		}
		SegvecMetaFreeze(meta);
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);
	return start;
}

/*
 * Index of the smallest extent of free[] that no scan can read any more, or
 * -1: where a single page is taken from, so that big extents stay whole.
 */
static int
smallest_reusable(SegvecMetaPage meta)
{
	int			best = -1;
	uint32		i;

	for (i = 0; i < meta->nfree; i++)
	{
		if (best >= 0 && meta->free[i].npages >= meta->free[best].npages)
			continue;
		if (GlobalVisCheckRemovableFullXid(NULL,
										   FullTransactionIdFromU64(meta->free[i].xid)))
			best = (int) i;
	}
	return best;
}

/*
 * SegvecFreePageAvailable: would SegvecFreePageTake find a page?  Caller
 * holds the metapage locked.
 */
bool
SegvecFreePageAvailable(SegvecMetaPage meta)
{
	return smallest_reusable(meta) >= 0;
}

/*
 * SegvecFreePageTake: on the writable copy of the metapage (so in the
 * caller's WAL record), take one free page: the last block of the smallest
 * reusable free extent.  Returns InvalidBlockNumber if there is none.
 * Callers that add a mutable or keymap change page use it (they hold the
 * metapage exclusively and register it in their record anyway); nothing
 * else can reach the page, so the caller may lock it next
 * (SegvecLockFreePage).
 */
BlockNumber
SegvecFreePageTake(SegvecMetaPage meta)
{
	int			i = smallest_reusable(meta);
	BlockNumber blkno;

	if (i < 0)
		return InvalidBlockNumber;
	blkno = meta->free[i].start + meta->free[i].npages - 1;
	meta->free[i].npages--;
	if (meta->free[i].npages == 0)
	{
		memmove(&meta->free[i], &meta->free[i + 1],
				sizeof(SegvecFreeExtent) * (meta->nfree - i - 1));
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
 * Does the free-extent list end with a reusable extent that ends at the
 * relation's end (so that SegvecTruncateFreeTail would truncate it)?
 * Sorted, disjoint and coalesced: only the last entry can end there.
 */
static bool
tail_is_free(Relation index)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	SegvecMetaPage meta;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	bool		result = false;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	if (meta->nfree > 0)
	{
		SegvecFreeExtent *last = &meta->free[meta->nfree - 1];

		result = last->start + last->npages == nblocks &&
			last->start > SEGVEC_METAPAGE_BLKNO &&
			GlobalVisCheckRemovableFullXid(NULL,
										   FullTransactionIdFromU64(last->xid));
	}
	UnlockReleaseBuffer(metabuf);
	return result;
}

/*
 * SegvecTruncateFreeTail: give the free extent at the relation's end back
 * to the operating system.  The index never shrinks otherwise: what a
 * merge frees stays on the free-extent list until a new extent reuses it.
 * Returns the new size in blocks, or InvalidBlockNumber if nothing was
 * truncated.
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
 * leaves the blocks neither free nor reachable; VACUUM's cleanup marks
 * them deleted and recycles them page by page (as for a crashed merge).
 * Caller is VACUUM's cleanup (not a parallel worker), holding no buffer
 * lock.
 */
BlockNumber
SegvecTruncateFreeTail(Relation index)
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
	if (!tail_is_free(index))
		return InvalidBlockNumber;
	if (!ConditionalLockRelation(index, AccessExclusiveLock))
		return InvalidBlockNumber;

	nblocks = RelationGetNumberOfBlocks(index);
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	if (meta->nfree > 0)
	{
		SegvecFreeExtent *last = &meta->free[meta->nfree - 1];

		/* again, under the lock */
		if (last->start + last->npages == nblocks &&
			last->start > SEGVEC_METAPAGE_BLKNO &&
			GlobalVisCheckRemovableFullXid(NULL,
										   FullTransactionIdFromU64(last->xid)))
		{
			new_end = last->start;
			state = GenericXLogStart(index);
			meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
			meta->nfree--;
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
 * SegvecAllocExtent: npages contiguous blocks for a new extent, nothing in
 * them reachable: best fit from the free-extent list (SegvecExtentTake),
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

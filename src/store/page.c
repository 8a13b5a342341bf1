/*-------------------------------------------------------------------------
 *
 * page.c
 *	  Pages and extents of a segvec index: initialising a page, getting a
 *	  free one, writing a contiguous extent of fresh pages (in blocks from
 *	  the free-extent list, extent.c, or at the end of the relation),
 *	  marking pages deleted so that a later VACUUM recycles them,
 *	  WAL-logging the append of a small item (SegvecLogAppendedItems), and
 *	  reading a page through a hint of its buffer (SegvecReadBufferHinted).
 *
 * A deleted page keeps its kind and its nextblkno (a scan that was on its
 * way to it carries on) and records in its opaque seqno the
 * FullTransactionId after which no snapshot can still be reading it;
 * SegvecNewBuffer reuses it only once that is older than every snapshot,
 * the way nbtree recycles pages.  See src/README.md, "Page recycling".
 *
 * src/store/page.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/rmgr.h"
#include "access/transam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "store/store.h"

/*
 * Buffer hints of SegvecReadBufferHinted: direct-mapped by block number,
 * for the few pages an insert reads again and again (the mutable tail, the
 * change chain's pages, the heap page of the row version being updated).
 */
#define SEGVEC_BUFFER_HINTS		64

typedef struct SegvecBufferHint
{
	SegvecRelFileId node;
	BlockNumber blkno;
	Buffer		buf;
} SegvecBufferHint;

static SegvecBufferHint buffer_hints[SEGVEC_BUFFER_HINTS];

/*
 * SegvecReadBufferHinted: block blkno of rel's main fork, pinned (not
 * locked), as ReadBuffer(rel, blkno) returns it; but first through the
 * buffer that held that block when this backend last read it here,
 * checked by ReadRecentBuffer under the buffer header's lock (the tag and
 * BM_VALID), which skips the buffer mapping table's look-up and its
 * partition lock.  A stale hint only costs the look-up.  The block must
 * exist, as for ReadBuffer.  (An aliased UPDATE reads about six pages that
 * the previous row read too: their look-ups were an eighth of its time.)
 */
Buffer
SegvecReadBufferHinted(Relation rel, BlockNumber blkno)
{
	SegvecBufferHint *h;
	Buffer		buf;

	if (RelationUsesLocalBuffers(rel))
		return ReadBuffer(rel, blkno);
	h = &buffer_hints[blkno % SEGVEC_BUFFER_HINTS];
	if (h->buf != InvalidBuffer && h->blkno == blkno &&
		SegvecRelFileIdEquals(h->node, SegvecRelFileIdOf(rel)) &&
		ReadRecentBuffer(SegvecRelFileIdOf(rel), MAIN_FORKNUM, blkno, h->buf))
	{
		/* as ReadBuffer counts a hit */
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		return h->buf;
	}
	buf = ReadBuffer(rel, blkno);
	h->node = SegvecRelFileIdOf(rel);
	h->blkno = blkno;
	h->buf = buf;
	return buf;
}

/*
 * SegvecInitPage: initialise a page of the given kind (SEGVEC_PAGE_*).
 */
void
SegvecInitPage(Page page, uint16 flags)
{
	SegvecPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(SegvecPageOpaqueData));
	opaque = SegvecPageGetOpaque(page);
	opaque->nextblkno = InvalidBlockNumber;
	opaque->flags = flags;
	opaque->page_id = SEGVEC_PAGE_ID;
	opaque->seqno = 0;
	opaque->next_docno = 1;
	opaque->stamp = 0;
}

/*
 * SegvecRefreshHorizon: bring this backend's view of the xmin horizon (the
 * GlobalVisState that GlobalVisCheckRemovableFullXid asks) up to date.
 * GlobalVisCheckRemovableFullXid only recomputes the horizon when this
 * backend took a snapshot since it last did, and treats every xid newer
 * than its last snapshot as running without looking: a background worker
 * that compacts and merges without taking snapshots would find nothing its
 * own earlier installs freed reusable, however long ago the readers ended,
 * and extend the relation.  Computing the horizons (one pass over the proc
 * array, under ProcArrayLock shared) updates that state as a side effect.
 * Called before a judgement of many pages or extents, not per entry.
 */
void
SegvecRefreshHorizon(void)
{
	(void) GetOldestNonRemovableTransactionId(NULL);
}

/*
 * SegvecNewBuffer: get an exclusively locked, unused page, from the free
 * space map when it has one that is safe to reuse, else by extending the
 * relation.  The caller initialises the page and WAL-logs it.  (Callers
 * that hold the metapage try the free-extent list first:
 * SegvecFreePageTake.)
 */
Buffer
SegvecNewBuffer(Relation index)
{
	Buffer		buf;
	bool		needLock;
	bool		refreshed = false;

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(index);
		Page		page;

		if (blkno == InvalidBlockNumber)
			break;

		buf = ReadBuffer(index, blkno);

		/* someone else may be reusing it; then just try another */
		if (ConditionalLockBuffer(buf))
		{
			page = BufferGetPage(buf);
			if (PageIsNew(page))
				return buf;
			if (SegvecPageIsDeleted(page))
			{
				FullTransactionId xid =
					FullTransactionIdFromU64(SegvecPageGetOpaque(page)->seqno);

				/*
				 * The free space map forgets the page once it handed it
				 * out: judge it by a fresh horizon (once per call) before
				 * giving up on it until the next VACUUM.
				 */
				if (!GlobalVisCheckRemovableFullXid(NULL, xid) && !refreshed)
				{
					SegvecRefreshHorizon();
					refreshed = true;
				}
				if (GlobalVisCheckRemovableFullXid(NULL, xid))
					return buf;
			}
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}

	needLock = !RELATION_IS_LOCAL(index);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);

	return buf;
}

/*
 * Append to *ptr the header of one fragment of a generic WAL delta
 * (offset, length: the format generic_xlog.c writes and generic_redo
 * applies), and, with copy, its bytes from page.
 */
static char *
delta_fragment(char *ptr, Page page, Size offset, Size length, bool copy)
{
	OffsetNumber o = (OffsetNumber) offset;
	OffsetNumber l = (OffsetNumber) length;

	Assert(offset + length <= BLCKSZ);
	memcpy(ptr, &o, sizeof(o));
	ptr += sizeof(o);
	memcpy(ptr, &l, sizeof(l));
	ptr += sizeof(l);
	if (!copy)
		return ptr;
	memcpy(ptr, (char *) page + offset, length);
	return ptr + length;
}

/*
 * SegvecLogAppendedItems: WAL-log n pages (bufs, exclusively locked,
 * SEGVEC_LOG_MAX_PAGES at most) on each of which the caller, inside a
 * critical section, has just added one item (offs[i], by PageAddItem) and
 * changed nothing else but, where opaque[i], the opaque next_docno (a
 * mutable page's doc counter).  One generic WAL record (the resource
 * manager and delta format of generic_xlog.c, so replay, standbys and
 * wal_consistency_checking are generic_redo's), whose delta for each page
 * is the header fields PageAddItem sets (pd_flags, pd_lower, pd_upper), the
 * item's line pointer, maybe next_docno, and the item, registered in place
 * (not copied): what GenericXLogFinish would log for the same change,
 * without copying the pages and comparing them byte by byte.  The hole
 * between pd_lower and pd_upper is zero on these pages, as generic_redo
 * leaves it: every other change to them goes through GenericXLog, which
 * zeroes it, or through here, and the new item came out of it.  Marks the buffers dirty; for an index that is not
 * WAL-logged, only that.  See "WAL" in src/README.md.
 */
void
SegvecLogAppendedItems(Relation index, int n, const Buffer *bufs,
					   const OffsetNumber *offs, const bool *opaque)
{
	/* per page: three fragments copied, and the item's fragment header */
	char		delta[SEGVEC_LOG_MAX_PAGES][4 * 2 * sizeof(OffsetNumber) +
											SizeOfPageHeaderData +
											sizeof(ItemIdData) +
											sizeof(uint32)];
	int			i;
	XLogRecPtr	lsn;

	Assert(CritSectionCount > 0);
	Assert(n >= 1 && n <= SEGVEC_LOG_MAX_PAGES);
	for (i = 0; i < n; i++)
		MarkBufferDirty(bufs[i]);
	if (!RelationNeedsWAL(index))
		return;

	XLogBeginInsert();
	for (i = 0; i < n; i++)
	{
		Page		page = BufferGetPage(bufs[i]);
		ItemId		iid = PageGetItemId(page, offs[i]);
		Size		len = MAXALIGN(ItemIdGetLength(iid));
		char	   *ptr = delta[i];

		ptr = delta_fragment(ptr, page, offsetof(PageHeaderData, pd_flags),
							 offsetof(PageHeaderData, pd_special) -
							 offsetof(PageHeaderData, pd_flags), true);
		ptr = delta_fragment(ptr, page, (char *) iid - (char *) page,
							 sizeof(ItemIdData), true);
		if (opaque[i])
			ptr = delta_fragment(ptr, page,
								 (char *) &SegvecPageGetOpaque(page)->next_docno -
								 (char *) page,
								 sizeof(SegvecPageGetOpaque(page)->next_docno),
								 true);
		ptr = delta_fragment(ptr, page, ItemIdGetOffset(iid), len, false);
		XLogRegisterBuffer(i, bufs[i], REGBUF_STANDARD);
		XLogRegisterBufData(i, delta[i], ptr - delta[i]);
		XLogRegisterBufData(i, (char *) page + ItemIdGetOffset(iid), len);
	}
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	for (i = 0; i < n; i++)
		PageSetLSN(BufferGetPage(bufs[i]), lsn);
}

/*
 * SegvecLogRanges: WAL-log n pages (bufs, exclusively locked,
 * SEGVEC_LOG_MAX_RANGE_PAGES at most) that the caller changed inside a
 * critical section: a page with full[i] is new (initialised, maybe filled)
 * and is logged as a full image; on each other page it changed only the
 * nranges byte ranges of ranges[] that name it (their total length small:
 * fields of a header or opaque data, not items), which the record carries.
 * One generic WAL record, as SegvecLogAppendedItems writes: what
 * GenericXLogFinish would log for the same change, without copying the
 * pages and comparing them.  The changed pages' holes stay as they were
 * (zero: see SegvecLogAppendedItems).  Marks the buffers dirty; for an
 * index that is not WAL-logged, only that.
 */
void
SegvecLogRanges(Relation index, int n, const Buffer *bufs, const bool *full,
				int nranges, const SegvecLogRange *ranges)
{
	char		delta[SEGVEC_LOG_MAX_RANGE_PAGES][256];
	int			i;
	XLogRecPtr	lsn;

	Assert(CritSectionCount > 0);
	Assert(n >= 1 && n <= SEGVEC_LOG_MAX_RANGE_PAGES);
	for (i = 0; i < n; i++)
		MarkBufferDirty(bufs[i]);
	if (!RelationNeedsWAL(index))
		return;

	XLogBeginInsert();
	for (i = 0; i < n; i++)
	{
		Page		page = BufferGetPage(bufs[i]);
		char	   *ptr = delta[i];
		int			k;

		if (full[i])
		{
			XLogRegisterBuffer(i, bufs[i], REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
			continue;
		}
		for (k = 0; k < nranges; k++)
		{
			if (ranges[k].page != i)
				continue;
			if (ptr - delta[i] + 2 * sizeof(OffsetNumber) + ranges[k].length >
				sizeof(delta[i]))
				elog(PANIC, "segvec: too many bytes changed for a range record");
			ptr = delta_fragment(ptr, page, ranges[k].offset, ranges[k].length,
								 true);
		}
		XLogRegisterBuffer(i, bufs[i], REGBUF_STANDARD);
		XLogRegisterBufData(i, delta[i], ptr - delta[i]);
	}
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	for (i = 0; i < n; i++)
		PageSetLSN(BufferGetPage(bufs[i]), lsn);
}

/*
 * SegvecPageSetDeleted: flag a page deleted, recyclable once xid (a
 * FullTransactionId as uint64) is older than every snapshot.  The page is
 * the caller's GenericXLog copy of a locked buffer.
 */
void
SegvecPageSetDeleted(Page page, uint64 xid)
{
	SegvecPageOpaque opaque = SegvecPageGetOpaque(page);

	opaque->flags |= SEGVEC_PAGE_DELETED;
	opaque->seqno = xid;
}

/*
 * SegvecMarkPageDeleted: mark the exclusively locked page buf deleted in
 * its own WAL record, unless it already is.  Returns true if it marked it.
 */
bool
SegvecMarkPageDeleted(Relation index, Buffer buf, uint64 xid)
{
	GenericXLogState *state;

	if (SegvecPageIsDeleted(BufferGetPage(buf)))
		return false;
	state = GenericXLogStart(index);
	SegvecPageSetDeleted(GenericXLogRegisterBuffer(state, buf, 0), xid);
	GenericXLogFinish(state);
	return true;
}

/*
 * SegvecMarkPageDeletedImage: SegvecMarkPageDeleted that logs the whole
 * page as a full image, for a page whose contents WAL may never have
 * seen (VACUUM's marking of unreachable pages: an errored merge's).
 */
bool
SegvecMarkPageDeletedImage(Relation index, Buffer buf, uint64 xid)
{
	GenericXLogState *state;

	if (SegvecPageIsDeleted(BufferGetPage(buf)))
		return false;
	state = GenericXLogStart(index);
	SegvecPageSetDeleted(GenericXLogRegisterBuffer(state, buf,
												   GENERIC_XLOG_FULL_IMAGE),
						 xid);
	GenericXLogFinish(state);
	return true;
}

/*
 * SegvecMarkPagesDeleted: mark deleted either the chain of pages from
 * first up to (not including) stop, following nextblkno (chain = true), or
 * the npages blocks of an extent from first (chain = false).  Pages already
 * deleted are left as they are.  Returns how many pages it marked.  The
 * caller makes sure nothing live can be among them (the pages were
 * unlinked by an install it serialises with).
 */
uint32
SegvecMarkPagesDeleted(Relation index, BlockNumber first, BlockNumber stop,
					   uint32 npages, bool chain, uint64 xid)
{
	BlockNumber blkno = first;
	uint32		done = 0;
	uint32		marked = 0;

	while (blkno != InvalidBlockNumber &&
		   (chain ? blkno != stop : done < npages))
	{
		Buffer		buf;
		BlockNumber next;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		next = SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno;
		if (SegvecMarkPageDeleted(index, buf, xid))
			marked++;
		UnlockReleaseBuffer(buf);
		done++;
		blkno = chain ? next : blkno + 1;
	}
	return marked;
}

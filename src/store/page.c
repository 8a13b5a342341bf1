/*-------------------------------------------------------------------------
 *
 * page.c
 *	  Pages and extents of a segvec index: initialising a page, getting a
 *	  free one, writing a contiguous extent of fresh pages (in blocks from
 *	  the free-extent list, extent.c, or at the end of the relation), and
 *	  marking pages deleted so that a later VACUUM recycles them.
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
#include "access/transam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "store/store.h"

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
			if (SegvecPageIsDeleted(page) &&
				GlobalVisCheckRemovableFullXid(NULL,
											   FullTransactionIdFromU64(SegvecPageGetOpaque(page)->seqno)))
				return buf;
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

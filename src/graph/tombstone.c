/*-------------------------------------------------------------------------
 *
 * tombstone.c
 *	  The tombstone bitmap of an immutable segment: the only part of a
 *	  segment that changes after install.
 *
 * Bit n of the bitmap (ndocs bits, on the segment's first pages) is set
 * once VACUUM found node n's heap row dead; searches step through a
 * tombstoned node but never return it, and a merge drops it.  Bits are
 * only ever set, never cleared, each change in one WAL record together
 * with the metapage, whose manifest counts each segment's tombstones.
 *
 * src/graph/tombstone.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "graph/graph.h"

/*
 * GraphReadTombstones: copy the segment's tombstone bitmap (ndocs bits)
 * into bitmap, page by page under a share lock.
 */
void
GraphReadTombstones(Relation index, const SegvecSegment *seg, uint8 *bitmap)
{
	Size		nbytes = (seg->ndocs + 7) / 8;
	Size		done = 0;
	BlockNumber blk = seg->start;

	while (done < nbytes)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE, nbytes - done);
		Buffer		buf = ReadBuffer(index, blk++);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		GraphCheckPage(index, seg, buf, true);
		memcpy(bitmap + done, PageGetContents(BufferGetPage(buf)), len);
		UnlockReleaseBuffer(buf);
		done += len;
	}
}

/*
 * GraphGetTombstones: the segment's tombstone bitmap, palloc'd in the
 * current memory context (one spare byte, so a reader may look one node
 * past the end).
 */
uint8 *
GraphGetTombstones(Relation index, const SegvecSegment *seg)
{
	uint8	   *bitmap = palloc0((seg->ndocs + 7) / 8 + 1);

	GraphReadTombstones(index, seg, bitmap);
	return bitmap;
}

/*
 * Set the bits of nodes[*i ..] that fall on tombstone page `page` in its
 * contents bits; advance *i past them and return how many.
 */
static uint32
set_page_bits(uint8 *bits, uint32 page, const uint32 *nodes, int nnodes,
			  int *i)
{
	uint32		n = 0;

	for (; *i < nnodes && nodes[*i] / SEGVEC_TOMB_PER_PAGE == page; (*i)++)
	{
		uint32		bit = nodes[*i] % SEGVEC_TOMB_PER_PAGE;

		bits[bit >> 3] |= (uint8) (1 << (bit & 7));
		n++;
	}
	return n;
}

/*
 * GraphSetTombstones: set the tombstone bits of nodes[0 .. nnodes - 1]
 * (node numbers of seg, in ascending order) and add them to the segment's
 * tombstone count in the manifest: one WAL record per tombstone page, on
 * that page and the manifest page holding the segment's descriptor (the
 * metapage, or an overflow page).  Lock order: tombstone page, then
 * manifest page.
 * The caller holds the compaction lock (the manifest cannot change) and
 * makes sure no node is tombstoned twice.
 */
void
GraphSetTombstones(Relation index, const SegvecSegment *seg,
				   const uint32 *nodes, int nnodes)
{
	int			i = 0;

	while (i < nnodes)
	{
		uint32		page = nodes[i] / SEGVEC_TOMB_PER_PAGE;
		Buffer		buf,
					metabuf;
		GenericXLogState *state;
		uint8	   *bits;
		Page		manifest;
		uint32		n = 0;

		buf = ReadBuffer(index, seg->start + page);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		metabuf = SegvecManifestLockSegment(index, seg->segno);

		state = GenericXLogStart(index);
		bits = (uint8 *) PageGetContents(GenericXLogRegisterBuffer(state, buf, 0));
		manifest = GenericXLogRegisterBuffer(state, metabuf, 0);
		n = set_page_bits(bits, page, nodes, nnodes, &i);
		SegvecManifestAddTombstones(manifest, seg->segno, n);
		GenericXLogFinish(state);

		UnlockReleaseBuffer(metabuf);
		UnlockReleaseBuffer(buf);
	}
}

/*
 * GraphSetTombstonesUninstalled: the same for a segment written but not
 * installed yet (a merge carrying over the tombstones VACUUM set on its
 * inputs while it built): one WAL record per tombstone page, and the count
 * goes into the caller's descriptor *seg, which the install record writes.
 * nodes[] ascending, none set yet.
 */
void
GraphSetTombstonesUninstalled(Relation index, SegvecSegment *seg,
							  const uint32 *nodes, int nnodes)
{
	int			i = 0;

	while (i < nnodes)
	{
		uint32		page = nodes[i] / SEGVEC_TOMB_PER_PAGE;
		Buffer		buf;
		GenericXLogState *state;
		uint8	   *bits;

		buf = ReadBuffer(index, seg->start + page);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		bits = (uint8 *) PageGetContents(GenericXLogRegisterBuffer(state, buf, 0));
		seg->ntombstones += set_page_bits(bits, page, nodes, nnodes, &i);
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buf);
	}
}

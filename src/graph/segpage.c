/*-------------------------------------------------------------------------
 *
 * segpage.c
 *	  The identity stamp of an immutable segment's pages, written by the
 *	  build (graphbuild.c) and checked by every pin-only read (graphsearch.c,
 *	  tombstone.c).
 *
 * src/graph/segpage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <xxhash.h>

#include "access/xlog.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "graph/graph.h"

/*
 * Segment page stamps.
 *
 * Segment pages are read with a pin only: on the primary they never change
 * while a scan can reach them (recycling waits for every snapshot that
 * could).  A hot standby's queries do not hold the primary's horizon back
 * (unless hot_standby_feedback is on), so replay can reuse the extent of a
 * dropped segment (as mutable or keymap pages today) under a standby scan
 * that still walks it.  Every segment page carries its segment's flags
 * and stamp; on a standby a pin-only read checks them under a share lock
 * when it pins the page and again before it lets the page go: replay
 * changes a page under an exclusive lock, so a reuse that overlaps the
 * reads made in between is seen by the second check.  The query is then
 * cancelled like any recovery conflict, never answered from a reused
 * page.
 */

/*
 * GraphSegmentStamp: the stamp of seg's pages, from what identifies the
 * segment (its doc id range and size: two segments of one index never
 * share all three, since doc ids are never reused); never 0.
 */
uint32
GraphSegmentStamp(const SegvecSegment *seg)
{
	uint64		key[3];
	uint32		h;

	key[0] = seg->min_docid;
	key[1] = seg->max_docid;
	key[2] = seg->ndocs;
	h = (uint32) XXH3_64bits(key, sizeof(key));
	return h != 0 ? h : 1;
}

/*
 * GraphCheckPage: error unless the page in buf is a page of seg (a stamp
 * of 0 is a page written before stamps, judged by its flags alone).  On a
 * standby the caller holds a share lock (locked), or it takes one.
 */
void
GraphCheckPage(Relation index, const SegvecSegment *seg, Buffer buf,
			   bool locked)
{
	bool		standby = RecoveryInProgress();
	SegvecPageOpaque opaque;
	bool		ok;

	if (standby && !locked)
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	opaque = SegvecPageGetOpaque(BufferGetPage(buf));
	ok = (opaque->flags & SEGVEC_PAGE_SEGMENT) != 0 &&
		opaque->page_id == SEGVEC_PAGE_ID &&
		(opaque->stamp == 0 || opaque->stamp == GraphSegmentStamp(seg));
	if (standby && !locked)
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (ok)
		return;
	if (standby)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("canceling statement due to conflict with recovery"),
				 errdetail("Block %u of index \"%s\" was reused by the primary while this query was reading segment %u, which it belonged to.",
						   BufferGetBlockNumber(buf),
						   RelationGetRelationName(index), seg->segno),
				 errhint("Set hot_standby_feedback = on so that the primary keeps the pages that queries on this standby read.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("segvec index \"%s\": block %u is not a page of segment %u",
					RelationGetRelationName(index), BufferGetBlockNumber(buf),
					seg->segno)));
}

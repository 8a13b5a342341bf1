/*-------------------------------------------------------------------------
 *
 * segpage.c
 *	  The identity stamp of an immutable segment's pages, written by the
 *	  build (graphbuild.c) and checked by every pin-only read (graphsearch.c,
 *	  tombstone.c); and GraphPinPage, the pin of the searches' reads, with
 *	  the backend's hints of which buffer holds which index block.
 *
 * src/graph/segpage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <xxhash.h>

#include "access/xlog.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "compat.h"
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

/*
 * Buffer hints.
 *
 * A graph search pins one random page per node it scores, and with the
 * page already in shared buffers, finding it there (hashing its tag and
 * looking it up in the shared buffer table under a partition lock) costs
 * about as much as the distance itself.  So each backend remembers, per
 * index relfilenode and block, the buffer that held the block when it
 * last read it, and pins through ReadRecentBuffer, which checks under the
 * buffer header's lock that the buffer still holds that block (and
 * pins it) without the table look-up.  A hint that went stale (the block
 * was evicted, the relation dropped, the relfilenode reused) just fails
 * that check, and the read goes through ReadBuffer and renews the hint:
 * hints never change what is read, only how fast.  ReadRecentBuffer
 * counts the hit in EXPLAIN's BUFFERS but not in the relation's pg_statio
 * figures, as ReadBuffer does, so GraphPinPage counts it there itself.
 *
 * The hints of a relation are chunks of HINT_CHUNK buffers, allocated as
 * blocks in them are first read: 4 bytes per block read, 1/2048 of the
 * data.  When all hints together pass HINT_MAX_BYTES, they are all
 * dropped and gathered afresh (nothing outside this file points into
 * them).  Temporary relations (local buffers) go through ReadBuffer.
 */
#define HINT_CHUNK_BITS 10
#define HINT_CHUNK		(1 << HINT_CHUNK_BITS)
#define HINT_MAX_BYTES	((Size) 64 * 1024 * 1024)

/*
 * GraphPrefetchPage prefetches at most this many bytes of a record: all of
 * an SQ8 record of up to 1,016 dimensions, the first lines of a float4
 * vector (the CPU's own prefetcher follows a stream of lines once it sees
 * one)
 */
#define GRAPH_PREFETCH_BYTES 1024

typedef struct HintRel
{
	SegvecRelFileId node;			/* hash key */
	uint32		nchunks;		/* length of chunks */
	Buffer	  **chunks;			/* [blkno >> HINT_CHUNK_BITS], or NULL */
} HintRel;

static MemoryContext hint_cxt = NULL;
static HTAB *hint_rels = NULL;
static HintRel *hint_last = NULL;	/* the relation of the last call */
static Size hint_bytes = 0;

/* The hint slot of block blkno of index, allocating it */
static Buffer *
hint_slot(Relation index, BlockNumber blkno)
{
	uint32		c = blkno >> HINT_CHUNK_BITS;
	HintRel    *h = hint_last;

	if (h == NULL || !SegvecRelFileIdEquals(h->node, SegvecRelFileIdOf(index)))
	{
		bool		found;

		if (hint_rels == NULL)
		{
			HASHCTL		ctl;

			if (hint_cxt == NULL)
				hint_cxt = AllocSetContextCreate(TopMemoryContext,
												 "segvec buffer hints",
												 ALLOCSET_DEFAULT_SIZES);
			ctl.keysize = sizeof(SegvecRelFileId);
			ctl.entrysize = sizeof(HintRel);
			ctl.hcxt = hint_cxt;
			hint_rels = hash_create("segvec buffer hints", 16, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		}
		h = hash_search(hint_rels, &SegvecRelFileIdOf(index), HASH_ENTER, &found);
		if (!found)
		{
			h->nchunks = 0;
			h->chunks = NULL;
		}
		hint_last = h;
	}
	if (c >= h->nchunks)
	{
		uint32		most = (MaxBlockNumber >> HINT_CHUNK_BITS) + 1;
		uint32		n = Max(c + 1, Min(2 * h->nchunks, most));
		Buffer	  **chunks;

		chunks = MemoryContextAllocZero(hint_cxt, sizeof(Buffer *) * n);

		if (h->chunks)
		{
			memcpy(chunks, h->chunks, sizeof(Buffer *) * h->nchunks);
			pfree(h->chunks);
		}
		hint_bytes += sizeof(Buffer *) * (n - h->nchunks);
		h->chunks = chunks;
		h->nchunks = n;
	}
	if (h->chunks[c] == NULL)
	{
		/* InvalidBuffer is 0 */
		h->chunks[c] = MemoryContextAllocZero(hint_cxt,
											  sizeof(Buffer) * HINT_CHUNK);
		hint_bytes += sizeof(Buffer) * HINT_CHUNK;
	}
	return &h->chunks[c][blkno & (HINT_CHUNK - 1)];
}

/*
 * GraphPinPage: pin block blkno of index (no content lock) and return the
 * buffer, as ReadBuffer does, through the backend's hint of the buffer that
 * holds it when there is one.
 */
Buffer
GraphPinPage(Relation index, BlockNumber blkno)
{
	Buffer	   *slot;
	Buffer		buf;

	if (RelationUsesLocalBuffers(index))
		return ReadBuffer(index, blkno);
	if (hint_bytes > HINT_MAX_BYTES)
	{
		/* the hash table's own context, a child, goes too */
		MemoryContextReset(hint_cxt);
		hint_rels = NULL;
		hint_last = NULL;
		hint_bytes = 0;
	}
	slot = hint_slot(index, blkno);
	if (*slot != InvalidBuffer &&
		ReadRecentBuffer(SegvecRelFileIdOf(index), MAIN_FORKNUM, blkno, *slot))
	{
		pgstat_count_buffer_read(index);
		pgstat_count_buffer_hit(index);
		return *slot;
	}
	buf = ReadBuffer(index, blkno);
	*slot = buf;
	return buf;
}

/*
 * GraphPrefetchPage: ask the CPU to bring into its caches what a coming
 * GraphPinPage(index, blkno) and a read of len bytes at offset (from the
 * page's start) will touch, when the backend has a hint for the block: the
 * buffer header and the first lines of the bytes.  Only a hint: nothing is
 * pinned, and a stale hint costs a wasted prefetch.
 */
void
GraphPrefetchPage(Relation index, BlockNumber blkno, Size offset, Size len)
{
#if defined(__GNUC__)
	HintRel    *h = hint_last;
	uint32		c = blkno >> HINT_CHUNK_BITS;
	Buffer		buf;
	const char *p;
	Size		i;

	if (h == NULL || !SegvecRelFileIdEquals(h->node, SegvecRelFileIdOf(index)) ||
		c >= h->nchunks || h->chunks[c] == NULL)
		return;
	buf = h->chunks[c][blkno & (HINT_CHUNK - 1)];
	if (buf <= 0 || buf > NBuffers)
		return;
	__builtin_prefetch(GetBufferDescriptor(buf - 1));
	p = BufferBlocks + (Size) (buf - 1) * BLCKSZ + offset;
	len = Min(len, GRAPH_PREFETCH_BYTES);
	for (i = 0; i < len; i += 64)
		__builtin_prefetch(p + i);
#endif
}

/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  Compaction: freeze the mutable segment into immutable graph segments,
 *	  merge small segments, and install the result in the manifest.
 *
 * Compactions of one index, and VACUUM's bulk delete, are serialised by a
 * heavyweight lock on the metapage's block number (LockPage, as GIN does
 * for its pending list); inserts and scans never take it.  So while a
 * compaction runs no doc it read can be deleted under it, and no other
 * compaction changes the manifest.  Merges run in two lanes, each
 * serialised by a lock of its own (the merge lock and the minor merge
 * lock, compact.h), take disjoint inputs (segment claims), and take the
 * compaction lock only to install, so a long merge never holds up
 * compaction, nor the merges of the segments compactions make meanwhile.
 *
 * A compaction:
 *	1. freezes the prefix: appends a fresh page P after the current tail
 *	   (one WAL record); docs from the head up to P are the frozen prefix,
 *	   new inserts go to P and after;
 *	2. builds HNSW graphs from the frozen docs and writes them as new
 *	   extents (full-page WAL images), unreachable so far; a frozen alias
 *	   becomes a doc of its own with a copy of its target's vector
 *	   (graph/alias.c), so segments hold no aliases;
 *	3. installs: one GenericXLog record on the metapage adds the new
 *	   segments, moves mutable_head to P, and records the frozen pages as
 *	   garbage;
 *	4. marks garbage pages deleted with the install's next FullTransactionId
 *	   (VACUUM recycles them once that is older than every snapshot) and
 *	   clears the garbage entries;
 *	5. releases the compaction lock and merges segments by the merge
 *	   policy (below), under the merge lock, or if another backend holds
 *	   it, the small segments under the minor merge lock (merge_loop),
 *	   each merge holding claims on its inputs: each merge builds without the
 *	   compaction lock (graph/graphmerge.c, vectors read from pages), then
 *	   takes it to carry over the tombstones VACUUM set on its inputs
 *	   meanwhile and to install, the same way.  A merge that would drop a
 *	   doc an alias of the mutable segment targets runs steps 1-4 first
 *	   (merge_segments), so that no alias outlives its target.
 * A crash before 3 leaves the old manifest and only unreachable pages; after
 * 3, the new one.  A scan reads the manifest once, so it sees either the
 * frozen docs in the mutable segment or the new segments, never both.
 *
 * Merge policy (choose_merge): a segment whose tombstones reach
 * segvec.merge_deletes_pct (20%) of its docs is rewritten on its own
 * (tombstoned docs dropped, its extent freed); otherwise a segment is
 * merged with all smaller ones once they hold 1/segvec.merge_ratio of its
 * docs, so
 * there are at most 1 + log_R(docs) segments (segvec.merge_ratio = 0: the
 * tiered policy, SEGVEC_MERGE_FACTOR segments of one tier, floor(log4(live
 * docs)), merged into one).  Merges whose graph (not vectors:
 * SegvecMaxMergeDocs) would not fit in maintenance_work_mem are not done.
 * An index that has gone quiet is settled (SegvecSettle, run by a
 * background job): its mutable segment compacted whatever it holds, and
 * its segments merged into one once what lies outside the biggest (and
 * the tombstones) reach 1/segvec.settle_ratio of it (choose_settle).
 *
 * src/compact/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compact/compact.h"
#include "compact/compact_int.h"
#include "graph/graph.h"
#include "hooks/testhooks.h"
#include "keymap/keymap.h"

#define SEGVEC_MERGE_FACTOR		4

SegvecMergeBuildHook segvec_merge_build_hook = NULL;

int			segvec_compact_threshold = -1;
static int	segvec_max_merge_docs = -1;
int			segvec_compact_threshold_kb = 1024;
int			segvec_merge_ratio = 16;
int			segvec_merge_deletes_pct = 20;
int			segvec_settle_ratio = 1024;

static void compact_mutable(Relation index, SegvecCompactStats *stats,
							bool relocate);
static void install_ext(Relation index, SegvecSegment *add, int nadd,
						uint32 *drop, int ndrop, BlockNumber new_head,
						uint64 new_head_seqno, bool moved);

/*
 * SegvecCompactInit: from _PG_init, define segvec.compact_threshold.
 */
void
SegvecCompactInit(void)
{
	DefineCustomIntVariable("segvec.compact_threshold",
							"Docs in the mutable segment that make compaction worthwhile (-1: segvec.compact_threshold_size decides).",
							"An override for tests; CREATE INDEX keeps smaller tables in the mutable segment, searched exactly.",
							&segvec_compact_threshold, -1, -1, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.compact_threshold_size",
							"Size of the mutable segment's vectors that makes compaction worthwhile.",
							"Every search scores the mutable segment exactly, so this bounds that work whatever the dimension.",
							&segvec_compact_threshold_kb, 1024, 8, INT_MAX / 1024,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomBoolVariable("segvec.merge_in_memory",
							 "Lets a segment merge copy vectors and links to memory when they fit in maintenance_work_mem.",
							 "Off makes every merge read vectors from pages, as merges bigger than memory do (for measurements and tests).",
							 &segvec_merge_in_memory, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.merge_ratio",
							"Size ratio between consecutive segments below which they are merged (0: merge by tiers).",
							"A segment is merged with all smaller ones once they hold 1/merge_ratio of its docs, so an index has at most 1 + log_merge_ratio(docs) segments; higher values rewrite docs more often.",
							&segvec_merge_ratio, 16, 0, 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.merge_deletes_pct",
							"Percentage of a segment's docs that are tombstones at which the segment is rewritten without them.",
							"The rewrite drops the tombstoned docs and frees the old extent, so a segment's dead docs stay below this share of its size; lower values rewrite more often.",
							&segvec_merge_deletes_pct, 20, 1, 100,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.settle_ratio",
							"Merges a quiet index's segments into one once the docs outside its biggest segment and the tombstones reach 1/settle_ratio of it (0: never).",
							"Background workers compact the mutable segment of an index that has gone quiet and merge its segments, so that it searches like a fresh build; higher values settle smaller remainders, at the price of rewriting the biggest segment for them.",
							&segvec_settle_ratio, 1024, 0, 1 << 20,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.max_merge_docs",
							"Most docs one segment merge produces (-1: as many as maintenance_work_mem allows).",
							"A merge holds about 56 bytes per doc, whatever the dimension; segments bigger than this are not merged further.",
							&segvec_max_merge_docs, -1, -1, PG_INT32_MAX / 4,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * SegvecCompactThreshold: docs in the mutable segment that make compaction
 * worthwhile: the index's compact_threshold option, else the
 * segvec.compact_threshold setting (doc counts, overrides for tests), else
 * as many docs as segvec.compact_threshold_size holds at the index's
 * dimension (mutable items: header and floats), at least 1.  Every search
 * scores the mutable segment exactly, so the size bounds that work for any
 * dimension.  Before the index has a dimension, the size is taken as docs
 * of 128 floats.
 */
int
SegvecCompactThreshold(Relation index)
{
	SegvecOptions *opts = (SegvecOptions *) index->rd_options;
	int			dim;
	Size		itemsz;
	double		docs;

	if (opts && opts->compact_threshold >= 0)
		return opts->compact_threshold;
	if (segvec_compact_threshold >= 0)
		return segvec_compact_threshold;
	dim = SegvecIndexDimensions(index);
	if (dim <= 0)
		dim = 128;
	itemsz = MAXALIGN(SEGVEC_MUTABLE_HDRSZ + sizeof(float4) * dim) +
		sizeof(ItemIdData);
	docs = (double) segvec_compact_threshold_kb * 1024.0 / itemsz;
	return (int) Max(1.0, Min(docs, (double) INT_MAX));
}
/* Most segments one merge takes: each needs a garbage entry at install */
#define SEGVEC_MAX_MERGE_INPUTS	(SEGVEC_MAX_GARBAGE - 2)

/*
 * SegvecMaxBuildDocs: how many docs of dim floats one in-memory graph
 * build may hold within maintenance_work_mem.
 */
int
SegvecMaxBuildDocs(int dim, int m)
{
	double		budget = (double) maintenance_work_mem * 1024.0;
	double		n = budget / (double) HnswBuilderNodeBytes(dim, m);

	return (int) Max(Min(n, (double) (PG_INT32_MAX / 4)), 1000.0);
}

/*
 * SegvecMaxMergeDocs: how many docs one merge may produce within
 * maintenance_work_mem: a merge holds no vectors (graph/graphmerge.c), so
 * this depends on M only (GraphMergeDocBytes: 55 bytes a doc at M = 16,
 * so 1.2 million docs at the default 64 MB).
 */
int
SegvecMaxMergeDocs(int m)
{
	double		budget = (double) maintenance_work_mem * 1024.0;
	double		n = budget / (double) GraphMergeDocBytes(m);

	if (segvec_max_merge_docs >= 0)
		return segvec_max_merge_docs;
	return (int) Max(Min(n, (double) (PG_INT32_MAX / 4)), 1000.0);
}

/*
 * Does this page belong to garbage entry g: the kind of page g names, not
 * yet deleted, with an identity in g's range?
 */
static bool
garbage_page_matches(Page page, const SegvecGarbage *g)
{
	SegvecPageOpaque opaque = SegvecPageGetOpaque(page);

	if (PageIsNew(page) || opaque->page_id != SEGVEC_PAGE_ID)
		return false;
	if ((opaque->flags & g->pageflag) == 0 ||
		(opaque->flags & SEGVEC_PAGE_DELETED) != 0)
		return false;
	return opaque->seqno >= g->id_lo && opaque->seqno < g->id_hi;
}

/*
 * Free the pages of every garbage entry, then clear the entries.
 *
 * A chain's pages (a frozen mutable prefix; a manifest chain the
 * free-extent list had no room for) go to the free-extent list, in the
 * same WAL record that clears the entries, with the entry's xid: reused
 * once no scan can read them.  An extent's pages (a dropped segment the
 * list had no room for), and chain pages when the list is full, are
 * marked deleted instead, for VACUUM to recycle page by page.
 *
 * Safe to repeat, and safe after some of an entry's pages were reused (see
 * SegvecGarbage): a page is freed only if it still carries the entry's
 * kind and identity and is not on the free-extent list already.  A chain
 * is walked from its first page while the pages match; the first one that
 * does not ends it (a page already marked by an earlier, interrupted pass,
 * or the new head): pages of the chain past that point are unreachable,
 * and VACUUM's cleanup scan marks them by their kind.  Caller holds the
 * compaction lock, which is what lets it clear the list: VACUUM's cleanup
 * and compactions both call this, and no one else touches the list (or
 * frees pages onto the free-extent list).
 */
void
SegvecProcessGarbage(Relation index)
{
	Buffer		metabuf;
	SegvecMetaPage meta;
	SegvecGarbage garbage[SEGVEC_MAX_GARBAGE];
	SegvecFreeExtent *free = palloc(sizeof(SegvecFreeExtent) * SEGVEC_MAX_FREE_EXTENTS);
	uint32		nfree;
	uint32		ngarbage;
	uint32		i;
	GenericXLogState *state;
	BlockNumber *pages = NULL;
	int			npages = 0,
				maxpages = 0;
	uint64		maxxid = 0;

	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	ngarbage = meta->ngarbage;
	memcpy(garbage, meta->garbage, sizeof(SegvecGarbage) * ngarbage);
	nfree = meta->nfree;
	memcpy(free, meta->free, sizeof(SegvecFreeExtent) * nfree);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	if (ngarbage == 0)
	{
		ReleaseBuffer(metabuf);
		pfree(free);
		return;
	}

	for (i = 0; i < ngarbage; i++)
	{
		const SegvecGarbage *g = &garbage[i];
		BlockNumber blkno = g->first;
		uint32		done = 0;

		for (;;)
		{
			Buffer		buf;
			BlockNumber next;
			bool		matches;

			if (blkno == InvalidBlockNumber)
				break;
			if (g->kind == SEGVEC_GARBAGE_EXTENT && done >= g->npages)
				break;

			CHECK_FOR_INTERRUPTS();
			buf = ReadBuffer(index, blkno);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			next = SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno;
			matches = garbage_page_matches(BufferGetPage(buf), g) &&
				!SegvecBlockIsFree(free, nfree, blkno);

			if (matches && g->kind == SEGVEC_GARBAGE_CHAIN)
			{
				if (npages >= maxpages)
				{
					maxpages = Max(64, maxpages * 2);
					pages = pages ? repalloc(pages, sizeof(BlockNumber) * maxpages) :
						palloc(sizeof(BlockNumber) * maxpages);
				}
				pages[npages++] = blkno;
				maxxid = Max(maxxid, g->xid);
			}
			else if (matches)
				(void) SegvecMarkPageDeleted(index, buf, g->xid);
			UnlockReleaseBuffer(buf);

			if (g->kind == SEGVEC_GARBAGE_CHAIN)
			{
				if (!matches)
					break;
				blkno = next;
			}
			else
				blkno++;
			done++;
		}
	}

	/*
	 * Clear the entries we handled (no one else adds any: we hold the
	 * lock), putting the chains' pages on the free-extent list in the same
	 * record; if it has no room, mark them deleted first.
	 */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (npages > 0 && !SegvecFreePagesAdd(meta, pages, npages, maxxid))
	{
		GenericXLogAbort(state);
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
		for (i = 0; i < npages; i++)
		{
			Buffer		buf = ReadBuffer(index, pages[i]);

			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			(void) SegvecMarkPageDeleted(index, buf, maxxid);
			UnlockReleaseBuffer(buf);
		}
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	}
	meta->ngarbage = 0;
	SegvecMetaFreeze(meta);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	if (pages)
		pfree(pages);
	pfree(free);
}

/* Record a garbage entry in the writable metapage copy */
static void
add_garbage(SegvecMetaPage meta, uint16 kind, uint16 pageflag,
			BlockNumber first, uint32 npages, uint64 id_lo, uint64 id_hi,
			uint64 xid)
{
	SegvecGarbage *g;

	Assert(meta->ngarbage < SEGVEC_MAX_GARBAGE);
	g = &meta->garbage[meta->ngarbage++];
	memset(g, 0, sizeof(SegvecGarbage));
	g->kind = kind;
	g->pageflag = pageflag;
	g->first = first;
	g->npages = npages;
	g->id_lo = id_lo;
	g->id_hi = id_hi;
	g->xid = xid;
}

/* What fill_manifest_page needs */
typedef struct ManifestWriter
{
	SegvecSegment *segs;
	uint32		nsegs;
	uint32		npages;
	uint32		gen;
	BlockNumber start;
} ManifestWriter;

/* SegvecFillPageFn: page k of a manifest overflow chain */
static void
fill_manifest_page(Page page, uint32 k, void *arg)
{
	ManifestWriter *w = (ManifestWriter *) arg;
	SegvecPageOpaque opaque;
	uint32		first = k * SEGVEC_MANIFEST_PER_PAGE;
	uint32		n = Min((uint32) SEGVEC_MANIFEST_PER_PAGE, w->nsegs - first);

	SegvecInitPage(page, SEGVEC_PAGE_MANIFEST);
	opaque = SegvecPageGetOpaque(page);
	opaque->seqno = w->gen;
	opaque->next_docno = n;		/* descriptors on this page */
	opaque->nextblkno = k + 1 < w->npages ? w->start + k + 1 : InvalidBlockNumber;
	memcpy(PageGetContents(page), w->segs + first, sizeof(SegvecSegment) * n);
	((PageHeader) page)->pd_lower = ((PageHeader) page)->pd_upper;
}

/* Pages of a manifest overflow chain holding nsegs descriptors */
static uint32
manifest_chain_pages(uint32 nsegs)
{
	return (nsegs + SEGVEC_MANIFEST_PER_PAGE - 1) / SEGVEC_MANIFEST_PER_PAGE;
}

/*
 * Write segs[0 .. nsegs) as a new manifest overflow chain of generation
 * gen: one extent (its pages also linked by nextblkno), logged as full
 * images; returns its first block.  Nothing points at the chain until the
 * install record.
 */
static BlockNumber
write_manifest_chain(Relation index, SegvecSegment *segs, uint32 nsegs,
					 uint32 gen)
{
	ManifestWriter w;

	w.segs = segs;
	w.nsegs = nsegs;
	w.npages = manifest_chain_pages(nsegs);
	w.gen = gen;
	w.start = SegvecAllocExtent(index, w.npages);
	SegvecFillExtent(index, w.start, w.npages, fill_manifest_page, &w);
	return w.start;
}

/*
 * Install: in one WAL record on the metapage, remove the segments numbered
 * in drop[], add the segments in add[] (numbered by whoever wrote them),
 * put the dropped segments' extents on the free-extent list, and if
 * new_head is valid, move the mutable segment's head there, recording the
 * chain before it as garbage.  When the new manifest has more than
 * SEGVEC_META_SEGMENTS segments, the rest go to a new overflow chain (an
 * extent), written before the record (unreachable until it), and the old
 * chain's extent is freed.  Caller holds
 * the compaction lock, so the manifest (tombstone counts included) does not
 * change between our read of it and the record.
 */
static void
install(Relation index, SegvecSegment *add, int nadd,
		uint32 *drop, int ndrop, BlockNumber new_head, uint64 new_head_seqno)
{
	install_ext(index, add, nadd, drop, ndrop, new_head, new_head_seqno,
				false);
}

/*
 * install_ext: install, or with moved, replace the segment add[0] (drop[0]
 * is its number) by its copy in another extent, which frees the old one
 * and counts as no merge.
 */
static void
install_ext(Relation index, SegvecSegment *add, int nadd,
			uint32 *drop, int ndrop, BlockNumber new_head,
			uint64 new_head_seqno, bool moved)
{
	Buffer		metabuf;
	GenericXLogState *state;
	SegvecMetaPage meta;
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	SegvecSegment *segs;
	uint64		xid;
	uint32		nsegs = 0;
	uint32		i,
				j;
	uint32		next_segno;
	uint32		old_gen;
	BlockNumber old_chain;
	BlockNumber new_chain = InvalidBlockNumber;
	uint32		ngarbage;

	/* room for the garbage entries this install adds */
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	ngarbage = SegvecPageGetMeta(BufferGetPage(metabuf))->ngarbage;
	UnlockReleaseBuffer(metabuf);
	Assert(ndrop + 2 <= SEGVEC_MAX_GARBAGE);
	if (ngarbage + ndrop + 2 > SEGVEC_MAX_GARBAGE)
		SegvecProcessGarbage(index);

	/* the new manifest: the kept segments, then the new ones */
	SegvecGetMetaInfo(index, info);
	segs = palloc(sizeof(SegvecSegment) * (info->nsegments + nadd + 1));
	for (i = 0; i < info->nsegments; i++)
	{
		bool		dropped = false;

		for (j = 0; j < ndrop; j++)
			if (info->segments[i].segno == drop[j])
				dropped = true;
		if (!dropped)
			segs[nsegs++] = info->segments[i];
	}
	for (i = 0; i < nadd; i++)
		segs[nsegs++] = add[i];

	old_gen = info->manifest_gen;
	old_chain = info->nsegments > SEGVEC_META_SEGMENTS ?
		info->manifest_head : InvalidBlockNumber;
	if (nsegs > SEGVEC_META_SEGMENTS)
		new_chain = write_manifest_chain(index, segs + SEGVEC_META_SEGMENTS,
										 nsegs - SEGVEC_META_SEGMENTS,
										 old_gen + 1);

	if (ndrop > 0)
		SegvecTestPoint("install-dropping-segments");
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);

	/*
	 * What this install frees is stamped with the next xid as read under
	 * the metapage lock: a scan that can still read the old manifest read
	 * it before we took the lock, so its snapshot's xmin is no newer than
	 * this (read before the lock, a snapshot taken in between could be
	 * newer, and the extent reusable while that scan reads it).  During
	 * the index's build no scan reads it: reusable at once
	 * (SegvecFreeStamp).
	 */
	xid = SegvecFreeStamp(index);
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));

	/*
	 * Dropped segments: their extents go to the free-extent list (or, if it
	 * is full, to the garbage list, to be recycled page by page).
	 */
	for (i = 0; i < info->nsegments; i++)
	{
		SegvecSegment *seg = &info->segments[i];

		for (j = 0; j < ndrop; j++)
			if (seg->segno == drop[j] &&
				!SegvecFreeExtentAdd(meta, seg->start, seg->npages, xid))
				add_garbage(meta, SEGVEC_GARBAGE_EXTENT, SEGVEC_PAGE_SEGMENT,
							seg->start, seg->npages,
							seg->segno, (uint64) seg->segno + 1, xid);
	}

	/* the manifest; the old overflow chain (one extent) is freed likewise */
	meta->nsegments = nsegs;
	memcpy(meta->segments, segs,
		   sizeof(SegvecSegment) * Min(nsegs, SEGVEC_META_SEGMENTS));
	if (old_chain != InvalidBlockNumber &&
		!SegvecFreeExtentAdd(meta, old_chain,
							 manifest_chain_pages(info->nsegments -
												  SEGVEC_META_SEGMENTS),
							 xid))
		add_garbage(meta, SEGVEC_GARBAGE_CHAIN, SEGVEC_PAGE_MANIFEST,
					old_chain, 0, old_gen, (uint64) old_gen + 1, xid);
	if (new_chain != InvalidBlockNumber)
	{
		meta->manifest_gen = old_gen + 1;
		meta->manifest_head = new_chain;
	}
	else
		meta->manifest_head = InvalidBlockNumber;

	/*
	 * Segment numbers given out by the writers: a compaction's (from
	 * next_segno, under the compaction lock it still holds) or a merge's
	 * (reserved by reserve_segno before it started).
	 */
	next_segno = meta->next_segno;
	for (i = 0; i < nadd; i++)
		next_segno = Max(next_segno, add[i].segno + 1);
	meta->next_segno = next_segno;

	/* doc ids given out by a build */
	if (new_head == InvalidBlockNumber && new_head_seqno > meta->next_seqno)
		meta->next_seqno = new_head_seqno;

	/* the counters that ft.storage_stats shows */
	if (ndrop > 0 && !moved)
		meta->nmerges++;
	if (new_head != InvalidBlockNumber)
		meta->ncompactions++;

	/* drop the frozen prefix of the mutable segment */
	if (new_head != InvalidBlockNumber && new_head != meta->mutable_head)
	{
		add_garbage(meta, SEGVEC_GARBAGE_CHAIN, SEGVEC_PAGE_MUTABLE,
					meta->mutable_head, 0,
					meta->mutable_head_seqno, new_head_seqno, xid);
		meta->mutable_head = new_head;
		meta->mutable_head_seqno = new_head_seqno;
	}

	SegvecMetaFreeze(meta);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	SegvecFreeMetaInfo(info);
	pfree(info);
	pfree(segs);
}

/*
 * SegvecInstallSegments: install freshly written segments (CREATE INDEX).
 */
void
SegvecInstallSegments(Relation index, SegvecSegment *segs, int nsegs,
					  uint64 next_seqno)
{
	install(index, segs, nsegs, NULL, 0, InvalidBlockNumber, next_seqno);
}

/*
 * SegvecInstallMoved: replace a segment by its copy *moved (same number,
 * same docs, another extent; compact/shrink.c), freeing the old extent.
 * Caller holds the compaction lock, the merge lock and a claim on the
 * segment.
 */
void
SegvecInstallMoved(Relation index, SegvecSegment *moved)
{
	uint32		segno = moved->segno;

	install_ext(index, moved, 1, &segno, 1, InvalidBlockNumber, 0, true);
}

/* State of feeding docs into graph builders, a segment per full builder */
typedef struct SegmentWriter
{
	Relation	index;
	SegvecMetric metric;
	int			dim;
	int			m;
	int			ef_construction;
	int			quant;			/* SEGVEC_QUANT_* of the segments written */
	int			nfilters;		/* the index's filter columns */
	int			maxdocs;
	uint32		next_segno;		/* number of the next segment written */
	HnswBuilder *builder;
	GraphLabelReader *labels;	/* the docs' labels, or NULL: none */
	SegvecSegment *segs;		/* written, not installed */
	int			nsegs;
	int64		ndocs;
} SegmentWriter;

static void
writer_flush(SegmentWriter *w)
{
	if (w->builder == NULL)
		return;
	if (HnswBuilderCount(w->builder) > 0)
	{
		HnswBuilderFinish(w->builder, NULL);
		w->segs = w->nsegs == 0 ? palloc(sizeof(SegvecSegment)) :
			repalloc(w->segs, sizeof(SegvecSegment) * (w->nsegs + 1));
		HnswBuilderWrite(w->builder, w->index, w->next_segno++,
						 &w->segs[w->nsegs]);
		w->nsegs++;
	}
	HnswBuilderFree(w->builder);
	w->builder = NULL;
}

/* a new builder for the docs that follow; it keeps their labels */
static void
writer_new_builder(SegmentWriter *w)
{
	w->builder = HnswBuilderCreate(w->metric, w->dim, w->m,
								   w->ef_construction, w->maxdocs);
	HnswBuilderSetQuantization(w->builder, w->quant);
	HnswBuilderSetFilters(w->builder, w->nfilters);
	GraphLabelReaderKeep(w->labels, w->builder);
}

/* SegvecDocCallback: add a doc to the current builder */
static void
writer_add(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
	SegmentWriter *w = (SegmentWriter *) arg;

	/* the walk passes a doc's filter entry after its vector */
	const char *filters = w->nfilters > 0 ?
		SegvecDocFilterEntry(vector, dim) : NULL;

	if (w->builder == NULL)
		writer_new_builder(w);
	if (!HnswBuilderAddFiltered(w->builder, doc, vector, filters))
	{
		writer_flush(w);
		writer_new_builder(w);
		HnswBuilderAddFiltered(w->builder, doc, vector, filters);
	}
	GraphLabelReaderAdd(w->labels, w->builder, doc, filters);
	w->ndocs++;
}

/*
 * SegvecDocCallback of the freeze: add a frozen doc; an alias becomes a doc
 * of the new segment with its own doc id, key, checksum and heap TID and a
 * copy of its target's vector (the vector the heap row holds).
 */
static void
freeze_add(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
	SegvecDocInfo d = *doc;

	d.flags &= ~SEGVEC_DOC_ALIAS;
	writer_add(&d, vector, dim, arg);
}

/*
 * GraphAliasGoneCallback of the freeze: an alias whose target a merge or a
 * rewrite dropped and whose heap row is gone (no snapshot sees it; VACUUM
 * would have removed the alias and its entry) is not frozen, so its keymap
 * entry goes now: VACUUM will find no doc to remove it with.  A crash
 * before the install leaves the alias in the mutable segment without its
 * entry, which no scan misses (its row is dead), and the next freeze
 * removes the entry again (removing an absent entry changes nothing).
 */
static void
freeze_gone(const SegvecDocInfo *doc, void *arg)
{
	SegmentWriter *w = (SegmentWriter *) arg;

	KeymapRemoveDoc(w->index, doc);
}

static void
writer_init(SegmentWriter *w, Relation index, int dim)
{
	SegvecFrozenOptions opts;

	SegvecGetFrozenOptions(index, &opts);
	memset(w, 0, sizeof(SegmentWriter));
	w->index = index;
	w->metric = SegvecGetMetric(index);
	w->dim = dim;
	w->m = opts.m;
	w->ef_construction = opts.ef_construction;
	w->quant = SegvecIndexQuantization(index);
	w->nfilters = SegvecIndexFilterCount(index);
	w->maxdocs = SegvecMaxBuildDocs(dim, opts.m);
	w->next_segno = SegvecNextSegno(index);
	w->labels = GraphLabelReaderBegin(index);
}

static int64
live_docs(const SegvecSegment *seg)
{
	return (int64) seg->ndocs - seg->ntombstones;
}

static int
tier_of(int64 ndocs)
{
	return ndocs < 1 ? 0 : (int) floor(log((double) ndocs) / log(4.0));
}

/* a segment and its live docs, for sorting by size */
typedef struct SegSize
{
	uint32		segno;
	int64		live;
} SegSize;

/* by live docs, biggest first; ties by segment number, oldest first */
static int
segsize_cmp(const void *a, const void *b)
{
	const SegSize *x = (const SegSize *) a;
	const SegSize *y = (const SegSize *) b;

	if (x->live != y->live)
		return x->live > y->live ? -1 : 1;
	return x->segno < y->segno ? -1 : (x->segno > y->segno ? 1 : 0);
}

/*
 * The ratio policy (segvec.merge_ratio = R > 0): with the segments that
 * may still grow sorted by live docs, biggest first (s1 >= s2 >= ... >=
 * sn), merge s_j with every smaller one for the first j (the biggest)
 * whose smaller ones hold at least 1/R of its docs: s_j <= R * (s_j+1 +
 * ... + s_n).  When none qualifies, each segment holds more than R times
 * all the smaller ones together, so n <= 1 + log_R(live docs): a streamed
 * index stays at its big segment plus a few much smaller ones, and a new
 * compaction's segment is folded into the next smaller one at once.  The
 * price: a segment is rewritten each time 1/R of its size has arrived
 * below it, so each new doc costs about R copies of older docs per level
 * (a tiered policy copies each doc about once per tier).  A segment that,
 * with all the smaller ones, would not fit in one merge (maxdocs) is left
 * out.  When s_j has more smaller ones than one merge takes, the smallest
 * SEGVEC_MAX_MERGE_INPUTS are merged together instead.
 */
static int
choose_merge_ratio(SegvecMetaInfo *info, int maxdocs, uint32 *drop)
{
	SegSize    *s = palloc(sizeof(SegSize) * (info->nsegments + 1));
	int64	   *smaller = palloc(sizeof(int64) * (info->nsegments + 1));
	int			n = 0,
				ndrop = 0,
				j,
				i;

	for (i = 0; i < info->nsegments; i++)
	{
		s[n].segno = info->segments[i].segno;
		s[n].live = live_docs(&info->segments[i]);
		n++;
	}
	qsort(s, n, sizeof(SegSize), segsize_cmp);

	/* smaller[j] = s_j+1 + ... + s_n */
	smaller[n] = 0;
	if (n > 0)
		smaller[n - 1] = 0;
	for (j = n - 2; j >= 0; j--)
		smaller[j] = smaller[j + 1] + s[j + 1].live;

	for (j = 0; j < n - 1; j++)
	{
		/* too big to merge with all the smaller ones: leave it out */
		if (s[j].live + smaller[j] > maxdocs)
			continue;
		if (s[j].live <= (int64) segvec_merge_ratio * smaller[j])
		{
			/*
			 * More segments than one merge takes (the workers fell behind
			 * a stream): merge the smallest ones together first, so that
			 * s_j is rewritten once for all of them rather than once per
			 * SEGVEC_MAX_MERGE_INPUTS - 1 of them.
			 */
			i = n - j > SEGVEC_MAX_MERGE_INPUTS ? n - SEGVEC_MAX_MERGE_INPUTS : j;
			for (; i < n && ndrop < SEGVEC_MAX_MERGE_INPUTS; i++)
				drop[ndrop++] = s[i].segno;
			break;
		}
	}
	pfree(s);
	pfree(smaller);
	return ndrop;
}

/*
 * A segment whose tombstones reach segvec.merge_deletes_pct of its docs is
 * rewritten alone, the most dead docs first (if its live docs fit in one
 * merge; a segment with no live doc left is dropped without a build).
 * Merges by size drop tombstones too, but a big segment may wait long for
 * one (or never merge, being the biggest): without this, an UPDATE of
 * every row leaves the index twice its live size.  Sets drop[0] and
 * returns true if one is due.
 */
static bool
choose_rewrite(SegvecMetaInfo *info, int maxdocs, uint32 *drop)
{
	int			best = -1;
	int64		best_dead = 0;
	int			i;

	for (i = 0; i < info->nsegments; i++)
	{
		const SegvecSegment *seg = &info->segments[i];

		if (seg->ntombstones == 0 ||
			(int64) seg->ntombstones * 100 <
			(int64) segvec_merge_deletes_pct * seg->ndocs ||
			live_docs(seg) > maxdocs)
			continue;
		if (best < 0 || seg->ntombstones > best_dead)
		{
			best = i;
			best_dead = seg->ntombstones;
		}
	}
	if (best < 0)
		return false;
	drop[0] = info->segments[best].segno;
	return true;
}

/*
 * Pick segments to merge: fills drop[] with segment numbers and returns
 * how many (0: nothing to do).  A segment whose tombstones reach
 * segvec.merge_deletes_pct of its docs is rewritten alone; then the ratio
 * policy (above), or with segvec.merge_ratio = 0 the
 * tiered one: tiers are floor(log4(live docs)), and SEGVEC_MERGE_FACTOR
 * segments of one tier are merged.
 */
static int
choose_merge(SegvecMetaInfo *info, int maxdocs, uint32 *drop)
{
	int			tier,
				i;

	if (choose_rewrite(info, maxdocs, drop))
		return 1;

	if (segvec_merge_ratio > 0)
		return choose_merge_ratio(info, maxdocs, drop);

	for (tier = 0; tier < 32; tier++)
	{
		int			n = 0;
		int64		total = 0;

		for (i = 0; i < info->nsegments && n < SEGVEC_MAX_MERGE_INPUTS; i++)
		{
			if (tier_of(live_docs(&info->segments[i])) == tier &&
				total + live_docs(&info->segments[i]) <= maxdocs)
			{
				drop[n++] = info->segments[i].segno;
				total += live_docs(&info->segments[i]);
			}
		}
		if (n >= SEGVEC_MERGE_FACTOR)
			return n;
	}
	return 0;
}

/*
 * What a quiet index still owes a fresh build (the settle policy): *big,
 * the live docs of its biggest segment; *work, the live docs of all the
 * other segments and the tombstones of all of them (a second graph
 * segment costs a search about as much as the first, and a tombstoned
 * node is expanded and skipped); *total, all live docs.  Returns the
 * number of segments.
 */
static int
settle_work(SegvecMetaInfo *info, int64 *big, int64 *work, int64 *total)
{
	int			i;

	*big = 0;
	*work = 0;
	*total = 0;
	for (i = 0; i < info->nsegments; i++)
	{
		int64		live = live_docs(&info->segments[i]);

		*total += live;
		*work += info->segments[i].ntombstones;
		if (live > *big)
			*big = live;
	}
	*work += *total - *big;
	return info->nsegments;
}

/*
 * The settle policy (SegvecSettle, for an index that has gone quiet): all
 * segments merged into one, seeded from the biggest, once the unsettled
 * work (settle_work) reaches 1/segvec.settle_ratio of the biggest segment's
 * live docs, if they fit in one merge.  A smaller remainder is left: it
 * costs searches next to nothing (a few tombstones, a segment small enough
 * to be scored exactly), and rewriting the biggest segment for it would
 * cost more than settle_ratio copies per doc.  Returns how many segments
 * (0: nothing to do).
 */
static int
choose_settle(SegvecMetaInfo *info, int maxdocs, uint32 *drop)
{
	int64		big,
				work,
				total;
	int			n,
				i;

	if (segvec_settle_ratio <= 0)
		return 0;
	n = settle_work(info, &big, &work, &total);
	if (n == 0 || n > SEGVEC_MAX_MERGE_INPUTS || work == 0 ||
		work * segvec_settle_ratio < big || total > maxdocs)
		return 0;
	for (i = 0; i < n; i++)
		drop[i] = info->segments[i].segno;
	return n;
}

/*
 * Reserve a segment number for a merge: next_segno moves past it in one
 * metapage record, under the compaction lock, so a compaction that runs
 * while the merge builds numbers its segments after it.  A number a merge
 * reserved and did not install is never used.
 */
static uint32
reserve_segno(Relation index)
{
	Buffer		metabuf;
	GenericXLogState *state;
	SegvecMetaPage meta;
	uint32		segno;

	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	segno = meta->next_segno++;
	SegvecMetaFreeze(meta);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	return segno;
}

static int
uint32_cmp(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * The tombstones VACUUM set on the inputs after the merge read their
 * bitmaps (before[]): find those docs in the merged segment *out (by doc
 * id) and set them there too, before the install, so that the merged
 * segment never holds a live doc whose heap row VACUUM removed.  Returns
 * false if an input is no longer in the manifest.  Caller holds the
 * compaction lock (no VACUUM sets more meanwhile).
 */
static bool
carry_tombstones(Relation index, const SegvecSegment *inputs,
				 uint8 *const *before, int ninputs, SegvecSegment *out)
{
	SegvecMetaInfo *now = palloc(sizeof(SegvecMetaInfo));
	uint32	   *nodes = NULL;
	int			nnodes = 0,
				maxnodes = 0;
	int			i,
				k;

	SegvecGetMetaInfo(index, now);
	for (i = 0; i < ninputs; i++)
	{
		const SegvecSegment *cur = NULL;
		uint8	   *bits;
		uint32		j;

		for (k = 0; k < now->nsegments; k++)
			if (now->segments[k].segno == inputs[i].segno)
				cur = &now->segments[k];
		if (cur == NULL)
			return false;
		if (out->ndocs == 0 || cur->ntombstones == inputs[i].ntombstones)
			continue;			/* nothing new (counts are set with bits) */
		bits = GraphGetTombstones(index, cur);
		for (j = 0; j < cur->ndocs; j++)
		{
			SegvecDocInfo doc;
			int64		node;

			if (!GraphTombstoneIsSet(bits, j) ||
				(before[i] && GraphTombstoneIsSet(before[i], j)))
				continue;
			GraphReadDocs(index, cur, j, 1, &doc);
			node = GraphFindDoc(index, out, doc.docid);
			if (node < 0)
				continue;
			if (nnodes >= maxnodes)
			{
				maxnodes = Max(64, maxnodes * 2);
				nodes = nodes ? repalloc_huge(nodes, sizeof(uint32) * maxnodes) :
					palloc(sizeof(uint32) * maxnodes);
			}
			nodes[nnodes++] = (uint32) node;
		}
		pfree(bits);
	}
	if (nnodes > 0)
	{
		qsort(nodes, nnodes, sizeof(uint32), uint32_cmp);
		GraphSetTombstonesUninstalled(index, out, nodes, nnodes);
	}
	SegvecFreeMetaInfo(now);
	return true;
}

/* State of aliases_target_dropped's walk */
typedef struct TargetCheck
{
	Relation	index;
	const SegvecSegment *inputs;
	uint8	   *const *tombs;
	int			ninputs;
	bool		found;
} TargetCheck;

/* SegvecDocCallback of that walk: docs do not matter */
static void
skip_doc(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
}

/* SegvecAliasCallback of that walk: is target a tombstoned input doc? */
static void
check_target(const SegvecDocInfo *doc, uint64 target, const char *filters,
			 void *arg)
{
	TargetCheck *c = (TargetCheck *) arg;
	int			i;

	for (i = 0; i < c->ninputs && !c->found; i++)
	{
		const SegvecSegment *seg = &c->inputs[i];
		int64		node;

		if (c->tombs[i] == NULL ||
			target < seg->min_docid || target > seg->max_docid)
			continue;
		node = GraphFindDoc(c->index, seg, target);
		if (node >= 0 && GraphTombstoneIsSet(c->tombs[i], (uint32) node))
			c->found = true;
	}
}

/*
 * aliases_target_dropped: does an alias of the mutable segment target a
 * doc that the merge of inputs would drop (tombstoned in tombs, the
 * bitmaps the merge read)?  Reads the mutable segment's pages, not its
 * vectors.
 */
static bool
aliases_target_dropped(Relation index, const SegvecSegment *inputs,
					   uint8 *const *tombs, int ninputs)
{
	SegvecMetaInfo *now = palloc(sizeof(SegvecMetaInfo));
	TargetCheck c;
	int			i;

	c.index = index;
	c.inputs = inputs;
	c.tombs = tombs;
	c.ninputs = ninputs;
	c.found = false;
	for (i = 0; i < ninputs; i++)
		if (tombs[i] != NULL && inputs[i].ntombstones > 0)
			break;
	if (i < ninputs)
	{
		SegvecGetMetaInfo(index, now);
		if (now->dimensions > 0)
			SegvecMutableForEachItem(index, now->mutable_head,
									 InvalidBlockNumber, now->dimensions,
									 skip_doc, check_target, &c);
		SegvecFreeMetaInfo(now);
	}
	pfree(now);
	return c.found;
}

/*
 * Merge the segments numbered in drop[] (descriptors as in info) into one
 * (graph/graphmerge.c: seeded from the largest, vectors read from pages).
 * Caller holds a merge lock (of either lane) and claims on the inputs,
 * which info lists (read after the claims), not the compaction lock: the
 * build runs
 * while compactions, VACUUM and snapshots go on; only the install takes
 * the compaction lock, carrying over the tombstones set meanwhile.
 *
 * A doc that an alias targets is not dropped while the alias lives: when
 * an alias of the mutable segment targets a tombstoned doc of the inputs,
 * the mutable segment is compacted first, which turns every alias into a
 * doc with a copy of its vector (see "Aliases" in src/README.md).  Adds
 * what that compaction did to *stats if not NULL.
 *
 * Returns the number of segments merged away (0 if it gave up).
 */
static int
merge_segments(Relation index, SegvecMetaInfo *info, uint32 *drop, int ndrop,
			   SegvecCompactStats *stats)
{
	SegvecSegment *inputs = palloc(sizeof(SegvecSegment) * ndrop);
	uint8	  **tombs = palloc(sizeof(uint8 *) * ndrop);
	SegvecFrozenOptions opts;
	SegvecSegment out;
	GraphMergeStats ms;
	bool		have;
	uint32		segno;
	int			i,
				j;

	for (j = 0; j < ndrop; j++)
	{
		for (i = 0; i < info->nsegments; i++)
			if (info->segments[i].segno == drop[j])
				inputs[j] = info->segments[i];

		/*
		 * The bitmap after the count (info was read first): bits are only
		 * ever added, each with the count, so an unchanged count at install
		 * means no bit was added since (carry_tombstones).
		 */
		tombs[j] = GraphGetTombstones(index, &inputs[j]);
	}
	if (aliases_target_dropped(index, inputs, tombs, ndrop))
		compact_mutable(index, stats, false);
	SegvecGetFrozenOptions(index, &opts);
	segno = reserve_segno(index);

	/*
	 * A compaction of the index may run beside the build (after an error
	 * the job's slot is freed or made pending, which ends that too)
	 */
	if (segvec_merge_build_hook)
		segvec_merge_build_hook(true);
	have = GraphMergeSegments(index, info->metric, info->dimensions, opts.m,
							  opts.ef_construction,
							  SegvecIndexQuantization(index), inputs, tombs,
							  ndrop, segno, &out, &ms);

	ereport(DEBUG1,
			(errmsg_internal("segvec merge of %d segments of index \"%s\": " INT64_FORMAT " docs, " INT64_FORMAT " seeded from input %d (" INT64_FORMAT " repaired, " INT64_FORMAT " relinked above layer 0), vectors %s, peak memory %zu bytes, bound %zu bytes, quantization %d (codes of " INT64_FORMAT " docs reused from input %d)",
							 ndrop, RelationGetRelationName(index), ms.ndocs,
							 ms.nseeded, ms.seed, ms.seed_repaired,
							 ms.upper_relinked,
							 ms.in_memory ? "in memory" : "in pages",
							 ms.peak_bytes, ms.bound_bytes,
							 out.quant, ms.codes_reused, ms.codes_from)));
	SegvecTestPoint("merge-built");
	if (segvec_merge_build_hook)
		segvec_merge_build_hook(false);

	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	if (!carry_tombstones(index, inputs, tombs, ndrop, &out))
	{
		/* cannot happen: we hold claims on the inputs; drop our work */
		if (have)
			(void) SegvecMarkPagesDeleted(index, out.start, InvalidBlockNumber,
										  out.npages, false,
										  U64FromFullTransactionId(ReadNextFullTransactionId()));
		UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
		elog(LOG, "segvec merge of index \"%s\" gave up: an input segment is gone",
			 RelationGetRelationName(index));
		return 0;
	}
	install(index, &out, have ? 1 : 0, drop, ndrop, InvalidBlockNumber, 0);
	SegvecTestPoint("merge-installed");
	SegvecProcessGarbage(index);
	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	return ndrop;
}

/*
 * SegvecMergeDue: is a segment due for its rewrite by
 * segvec.merge_deletes_pct (choose_rewrite)?  Then SegvecMergeSegments
 * does it (and any other merge that is due).  For the callers that run
 * merges without a compaction: VACUUM's cleanup after it set tombstones,
 * and the compaction job VACUUM submits for that, whose mutable segment is
 * below the threshold.  Size merges are left to compactions, as before.
 * Reads the manifest only.
 */
bool
SegvecMergeDue(Relation index)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	uint32		drop[SEGVEC_MAX_MERGE_INPUTS];
	bool		due = false;

	SegvecGetMetaInfo(index, info);
	if (info->dimensions > 0 && info->nsegments > 0)
		due = choose_rewrite(info,
							 SegvecMaxMergeDocs(SegvecGetFrozenM(index)),
							 drop);
	SegvecFreeMetaInfo(info);
	pfree(info);
	return due;
}

/*
 * Segment claims.  Every merge holds a claim on each of its inputs, from
 * choosing them to its install, and takes only segments no one else has
 * claimed, so that the two merge lanes (below) never take the same segment
 * and nothing drops a segment a merge reads (the extent of a dropped
 * segment may be reused as soon as no snapshot can read it, and a
 * background merge holds no snapshot).  A claim is a heavyweight lock on a
 * tag no one else uses: a tuple lock on the index (PostgreSQL locks no
 * tuples of an index), the segment number as block, offset
 * SEGVEC_CLAIM_OFFNUM.  Claims are only ever taken without waiting, so
 * they cannot deadlock; an error releases them with the transaction.
 */
#define SEGVEC_CLAIM_OFFNUM		((OffsetNumber) 1)

static void
claim_tag(LOCKTAG *tag, Relation index, uint32 segno)
{
	SET_LOCKTAG_TUPLE(*tag, index->rd_lockInfo.lockRelId.dbId,
					  index->rd_lockInfo.lockRelId.relId, segno,
					  SEGVEC_CLAIM_OFFNUM);
}

/*
 * SegvecClaimSegment: claim segment segno, without waiting.  Returns false
 * if another backend holds the claim.
 */
bool
SegvecClaimSegment(Relation index, uint32 segno)
{
	LOCKTAG		tag;

	claim_tag(&tag, index, segno);
	return LockAcquire(&tag, ExclusiveLock, false, true) !=
		LOCKACQUIRE_NOT_AVAIL;
}

/* SegvecReleaseSegment: let go of a claim SegvecClaimSegment took */
void
SegvecReleaseSegment(Relation index, uint32 segno)
{
	LOCKTAG		tag;

	claim_tag(&tag, index, segno);
	LockRelease(&tag, ExclusiveLock, false);
}

/*
 * Claim every segment in drop[], or none: false if one was claimed by
 * someone else.
 */
static bool
claim_inputs(Relation index, const uint32 *drop, int ndrop)
{
	int			i;

	for (i = 0; i < ndrop; i++)
	{
		if (!SegvecClaimSegment(index, drop[i]))
		{
			while (--i >= 0)
				SegvecReleaseSegment(index, drop[i]);
			return false;
		}
	}
	return true;
}

static void
release_inputs(Relation index, const uint32 *drop, int ndrop)
{
	int			i;

	for (i = 0; i < ndrop; i++)
		SegvecReleaseSegment(index, drop[i]);
}

/* Is every segment in drop[] in the manifest info? */
static bool
inputs_present(const SegvecMetaInfo *info, const uint32 *drop, int ndrop)
{
	int			i,
				j;

	for (j = 0; j < ndrop; j++)
	{
		for (i = 0; i < info->nsegments; i++)
			if (info->segments[i].segno == drop[j])
				break;
		if (i == info->nsegments)
			return false;
	}
	return true;
}

/*
 * The biggest segment the minor lane merges, in live docs: R compactions'
 * worth (R = segvec.merge_ratio, or SEGVEC_MERGE_FACTOR under tiers), or
 * 1/R of the biggest segment if that is more.  See "Merge lanes" in
 * src/README.md.
 */
static int64
minor_cap(Relation index, const SegvecMetaInfo *info)
{
	int64		ratio = segvec_merge_ratio > 0 ? segvec_merge_ratio :
		SEGVEC_MERGE_FACTOR;
	int64		biggest = 0;
	int			i;

	for (i = 0; i < info->nsegments; i++)
		biggest = Max(biggest, live_docs(&info->segments[i]));
	return Max(ratio * SegvecCompactThreshold(index), biggest / ratio);
}

/*
 * The segments a merge of a lane may choose from: a copy of info that
 * lists only the segments no one has claimed (tried and let go at once:
 * the merge claims what it chooses, and looks again if that fails), and
 * for the minor lane only those of at most minor_cap live docs.
 */
static SegvecMetaInfo *
available_segments(Relation index, const SegvecMetaInfo *info, bool minor)
{
	SegvecMetaInfo *avail = palloc(sizeof(SegvecMetaInfo));
	int64		cap = minor ? minor_cap(index, info) : PG_INT64_MAX;
	int			i;

	*avail = *info;
	avail->segments = palloc(sizeof(SegvecSegment) *
							 Max(info->nsegments, 1));
	avail->nsegments = 0;
	for (i = 0; i < info->nsegments; i++)
	{
		const SegvecSegment *seg = &info->segments[i];

		if (live_docs(seg) > cap || !SegvecClaimSegment(index, seg->segno))
			continue;
		SegvecReleaseSegment(index, seg->segno);
		avail->segments[avail->nsegments++] = *seg;
	}
	return avail;
}

/*
 * Take the merge lock for a merge loop.  Without waiting, unless drain (an
 * ft.compact) and a segment is due for its rewrite: then wait for whoever
 * holds it, a merge (whose install may be that rewrite) or VACUUM's cleanup
 * scan (share), since ft.compact promises the rewrite when it returns.
 * Waiting is safe: the caller holds no compaction lock, and no holder of
 * the merge lock waits for anything but the compaction lock and the minor
 * merge lock, whose holder waits for nothing but the compaction lock.
 * Otherwise
 * returns false when it is taken, setting stats->merge_lock_busy.
 */
static bool
lock_for_merges(Relation index, SegvecCompactStats *stats, bool drain)
{
	if (ConditionalLockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock))
		return true;
	if (drain && SegvecMergeDue(index))
	{
		LockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock);
		return true;
	}
	if (stats)
		stats->merge_lock_busy = true;
	return false;
}

/* Looks a merge loop gives up after, when its choice was claimed meanwhile */
#define SEGVEC_MERGE_CLAIM_TRIES	3

/*
 * The merge loop: merge segments by the merge policy until it finds
 * nothing to do, each merge installed on its own, or until the mutable
 * segment is due for compaction after a merge (with drain, once no rewrite
 * is due either).  With settle, once the merge policy finds nothing, the
 * settle policy (choose_settle) too.  If another backend holds the merge
 * lock (lock_for_merges), this is the minor lane: if no one holds the
 * minor merge lock either, the loop merges only segments of at most
 * minor_cap live docs, and never settles; else it returns at once.  Each
 * merge takes only segments no other merge has claimed, and claims them
 * (see "Merge lanes" in src/README.md).  With drain and the merge lock,
 * the loop also waits for the minor merge lock, so that no segment due for
 * its rewrite is left to a minor merge still running when it returns.
 */
static void
merge_loop(Relation index, SegvecCompactStats *stats, bool drain,
		   bool settle)
{
	MemoryContext ctx,
				oldctx;
	bool		minor = false;
	int			tries = 0;

	if (lock_for_merges(index, stats, drain))
	{
		/*
		 * Safe to wait: a minor merge never waits for the merge lock, and
		 * holds nothing but its claims while it waits for the compaction
		 * lock.
		 */
		if (drain)
			LockPage(index, SEGVEC_MINOR_LOCK_BLKNO, ExclusiveLock);
	}
	else if (ConditionalLockPage(index, SEGVEC_MINOR_LOCK_BLKNO,
								 ExclusiveLock))
		minor = true;
	else
		return;
	ctx = AllocSetContextCreate(CurrentMemoryContext, "segvec merge",
								ALLOCSET_DEFAULT_SIZES);
	oldctx = MemoryContextSwitchTo(ctx);
	for (;;)
	{
		SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
		SegvecMetaInfo *avail;
		uint32		drop[SEGVEC_MAX_MERGE_INPUTS];
		int			maxdocs;
		int			ndrop;
		int			merged;

		/*
		 * Without an active snapshot (a background job, VACUUM) drop the
		 * catalog snapshot too, so that this backend holds back no xmin
		 * horizon during the merge: what the installs free meanwhile
		 * becomes reusable (store/extent.c).  The merge reads no catalog.
		 */
		if (!ActiveSnapshotSet())
			InvalidateCatalogSnapshot();

		SegvecGetMetaInfo(index, info);
		if (info->dimensions == 0)
			break;
		maxdocs = SegvecMaxMergeDocs(SegvecGetFrozenM(index));
		avail = available_segments(index, info, minor);
		ndrop = choose_merge(avail, maxdocs, drop);
		/* settling merges every segment: not while a minor merge runs */
		if (ndrop == 0 && settle && !minor &&
			avail->nsegments == info->nsegments)
			ndrop = choose_settle(avail, maxdocs, drop);
		if (ndrop == 0)
			break;

		/*
		 * Claim the inputs, then read the manifest again: whoever claimed
		 * one of them before us may have dropped it since we read it, and
		 * once claimed and present no one drops them.
		 */
		if (!claim_inputs(index, drop, ndrop))
		{
			MemoryContextReset(ctx);
			if (++tries >= SEGVEC_MERGE_CLAIM_TRIES)
				break;
			continue;
		}
		SegvecFreeMetaInfo(info);
		SegvecGetMetaInfo(index, info);
		if (!inputs_present(info, drop, ndrop))
		{
			release_inputs(index, drop, ndrop);
			MemoryContextReset(ctx);
			if (++tries >= SEGVEC_MERGE_CLAIM_TRIES)
				break;
			continue;
		}
		tries = 0;
		merged = merge_segments(index, info, drop, ndrop, stats);
		release_inputs(index, drop, ndrop);
		if (stats)
			stats->segments_merged += merged;
		MemoryContextReset(ctx);
		if (merged == 0)
			break;

		/*
		 * A compaction job runs its merges, and no other compaction of the
		 * index can be taken by a worker meanwhile.  If the inserts made
		 * while this merge built are due for compaction, stop here and say
		 * so: the job queues another compaction (jobrun.c), which compacts
		 * them and then does the next merge (the policy puts the most
		 * urgent first).  So a
		 * compaction waits for at most one merge, and under a steady
		 * stream of inserts a job still ends (releasing its snapshot and
		 * its worker's turn).  An ft.compact (drain) goes on while a
		 * rewrite is due (choose_merge puts it first), which holds up no
		 * compaction and is bounded: only VACUUM adds tombstones.
		 */
		if (SegvecMutableCountDocs(index, SegvecCompactThreshold(index)) >=
			SegvecCompactThreshold(index) &&
			!(drain && SegvecMergeDue(index)))
		{
			if (stats)
				stats->merges_deferred = true;
			break;
		}
	}
	MemoryContextSwitchTo(oldctx);
	MemoryContextDelete(ctx);
	if (minor || drain)
		UnlockPage(index, SEGVEC_MINOR_LOCK_BLKNO, ExclusiveLock);
	if (!minor)
		UnlockPage(index, SEGVEC_MERGE_LOCK_BLKNO, ExclusiveLock);
}

/*
 * SegvecMergeSegments: the merge loop of a background job, VACUUM or
 * CREATE INDEX: merge segments by the merge policy until it finds nothing
 * to do, each merge installed on its own, or until the mutable segment is
 * due for compaction after a merge (stats->merges_deferred).  If another
 * backend holds the merge lock (stats->merge_lock_busy), runs the minor
 * lane instead (merge_loop), or returns at once if that is taken too: a
 * merge there looks at the policy again after each of its installs; a
 * job that meant to rewrite gives way and retries (jobrun.c).  Caller must
 * not hold the compaction lock.  Adds to stats->segments_merged if stats
 * is not NULL.
 */
void
SegvecMergeSegments(Relation index, SegvecCompactStats *stats)
{
	merge_loop(index, stats, false, false);
}

/*
 * compact_mutable: steps 1-4 of a compaction (see the file header): freeze
 * the mutable segment, build its graphs, install them and mark the frozen
 * pages deleted.  Takes and releases the compaction lock (waiting for any
 * other compaction or VACUUM of the index).  Adds to *stats if not NULL.
 */
static void
compact_mutable(Relation index, SegvecCompactStats *stats, bool relocate)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	MemoryContext ctx,
				oldctx;
	Buffer		buf;
	BlockNumber frozen_stop;
	uint64		frozen_seqno = 0;
	SegmentWriter w;

	ctx = AllocSetContextCreate(CurrentMemoryContext, "segvec compaction",
								ALLOCSET_DEFAULT_SIZES);
	oldctx = MemoryContextSwitchTo(ctx);

	/* no xmin held while we wait and compact: see SegvecMergeSegments */
	if (!ActiveSnapshotSet())
		InvalidateCatalogSnapshot();

	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	/* finish what a crashed compaction left */
	SegvecProcessGarbage(index);

	/* 1. freeze: a fresh tail page; everything before it is frozen */
	buf = SegvecMutableLockTail(index);
	SegvecGetMetaInfo(index, info);
	if ((info->mutable_head == BufferGetBlockNumber(buf) &&
		 PageGetMaxOffsetNumber(BufferGetPage(buf)) == 0) != relocate)
	{
		/*
		 * Nothing in the mutable segment; or, relocating, something (the
		 * next compaction moves it anyway)
		 */
		UnlockReleaseBuffer(buf);
		frozen_stop = InvalidBlockNumber;
	}
	else
	{
		SegvecMutableAppendPage(index, &buf);
		frozen_stop = BufferGetBlockNumber(buf);
		frozen_seqno = SegvecPageGetOpaque(BufferGetPage(buf))->seqno;
		UnlockReleaseBuffer(buf);
	}

	if (frozen_stop != InvalidBlockNumber)
	{
		/* 2. build graphs from the frozen prefix */
		SegvecGetMetaInfo(index, info);
		writer_init(&w, index, info->dimensions);
		if (info->dimensions > 0)
			GraphMutableForEachDoc(index, info->segments, info->nsegments,
								   info->mutable_head, frozen_stop,
								   info->dimensions, freeze_add, freeze_gone,
								   &w);
		writer_flush(&w);
		GraphLabelReaderEnd(w.labels);

		/* test-only pause of a background job (segvec.job_delay_ms) */
		SegvecDelayPoint();

		/* 3. install, 4. mark the frozen pages deleted */
		install(index, w.segs, w.nsegs, NULL, 0, frozen_stop, frozen_seqno);
		SegvecTestPoint("compact-installed");
		SegvecProcessGarbage(index);

		if (stats)
		{
			stats->docs_compacted += w.ndocs;
			stats->segments_created += w.nsegs;
		}
	}

	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	MemoryContextSwitchTo(oldctx);
	MemoryContextDelete(ctx);
}

/*
 * SegvecMutableRelocate: when the mutable segment is one empty page and a
 * reusable free block lies below it, move it there: a compaction of
 * nothing (a fresh tail page, taken at the lowest reusable block, then
 * the install that makes it the head and frees the old page), so an
 * insert that waits for the old page's lock follows its link to the new
 * one, as after any compaction.  For compact/shrink.c: a page that never
 * moves would keep the free tail from being given back, or split the free
 * space below the big segment, until the next compaction.  Returns whether
 * the page went lower.  Takes the compaction lock.
 */
bool
SegvecMutableRelocate(Relation index)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber old;
	bool		lower = false;
	uint32		k;

	SegvecGetMetaInfo(index, info);
	old = info->mutable_head;
	if (old == info->mutable_tail && old != InvalidBlockNumber)
		for (k = 0; k < info->nfree && !lower; k++)
			lower = info->free[k].start < old &&
				(uint64) info->free[k].start + info->free[k].npages != nblocks &&
				SegvecFreeExtentReusable(&info->free[k]);
	SegvecFreeMetaInfo(info);
	if (lower)
	{
		compact_mutable(index, NULL, true);
		SegvecGetMetaInfo(index, info);
		lower = info->mutable_head < old;
		SegvecFreeMetaInfo(info);
	}
	pfree(info);
	return lower;
}

/*
 * SegvecCompact: compact the index (see the file header), then merge
 * segments (SegvecMergeSegments).  Waits for any other compaction or
 * VACUUM of the index to finish first.  Fills *stats if not NULL.
 */
void
SegvecCompact(Relation index, SegvecCompactStats *stats)
{
	if (stats)
		memset(stats, 0, sizeof(SegvecCompactStats));

	compact_mutable(index, stats, false);

	/* 5. merges, without the compaction lock */
	merge_loop(index, stats, false, false);
}

/*
 * SegvecCompactDrain: SegvecCompact for ft.compact.  When a segment is
 * due for its rewrite and another backend holds the merge lock, it waits
 * for it and looks at the policy again, and its merge loop does not stop
 * for a compaction due while a rewrite is, so that no segment is left due
 * for its rewrite when it returns (README: ft.compact rewrites them).
 */
void
SegvecCompactDrain(Relation index, SegvecCompactStats *stats)
{
	if (stats)
		memset(stats, 0, sizeof(SegvecCompactStats));

	compact_mutable(index, stats, false);
	merge_loop(index, stats, true, false);
}

/*
 * SegvecMergeBuiltSegments: the merges at the end of a CREATE INDEX that
 * gave several segments: by the merge policy, then by the settle policy
 * (choose_settle), so that an index whose segments fit in one merge ends
 * the build as one graph segment, as a settled index would, rather than
 * leaving that last merge to the background settle job.
 */
void
SegvecMergeBuiltSegments(Relation index)
{
	merge_loop(index, NULL, false, true);
}


/*
 * SegvecSettleDue: does an index that has gone quiet still owe a fresh
 * build some work?  True when its mutable segment holds a doc, when a
 * merge is due by the merge policy, or when the settle policy
 * (choose_settle) would merge.  Then *quiet_naps (if not NULL) says how
 * many segvec.naptime the index should have been quiet before
 * SegvecSettle does it: 1 when the unsettled work (mutable docs counted)
 * holds 1/segvec.merge_ratio of the biggest segment or more, up to
 * SEGVEC_SETTLE_MAX_NAPS as it gets smaller, so that an index that is
 * written a little at a time rewrites its biggest segment for it rarely.
 * Reads the manifest and the mutable segment's first pages.
 */
bool
SegvecSettleDue(Relation index, int *quiet_naps)
{
	SegvecMetaInfo *info;
	uint32		drop[SEGVEC_MAX_MERGE_INPUTS];
	int64		mutable_docs,
				big,
				work,
				total;
	int			maxdocs;
	bool		due;

	if (quiet_naps)
		*quiet_naps = 1;
	if (segvec_settle_ratio <= 0)
		return false;
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(index, info);
	if (info->dimensions <= 0)
	{
		SegvecFreeMetaInfo(info);
		pfree(info);
		return false;
	}
	mutable_docs = SegvecMutableCountDocs(index, SegvecCompactThreshold(index));
	maxdocs = SegvecMaxMergeDocs(SegvecGetFrozenM(index));
	settle_work(info, &big, &work, &total);
	work += mutable_docs;
	due = mutable_docs > 0 || choose_merge(info, maxdocs, drop) > 0 ||
		choose_settle(info, maxdocs, drop) > 0;
	if (due && quiet_naps && work > 0 && segvec_merge_ratio > 0)
	{
		double		naps = (double) big / ((double) work * segvec_merge_ratio);

		*quiet_naps = (int) Max(1.0, Min(naps, (double) SEGVEC_SETTLE_MAX_NAPS));
	}
	SegvecFreeMetaInfo(info);
	pfree(info);
	return due;
}

/*
 * SegvecSettle: the work of an index that has gone quiet (the background
 * settle job, jobs/jobrun.c): compact the mutable segment, whatever it
 * holds, then merge by the merge policy and then by the settle policy
 * (choose_settle), so that a search costs about what it costs in a fresh
 * build of the same rows.  Waits for any other compaction or VACUUM of
 * the index first; returns at once from the merges if another backend
 * holds the merge lock (stats->merge_lock_busy).  Fills *stats if not
 * NULL.
 */
void
SegvecSettle(Relation index, SegvecCompactStats *stats)
{
	if (stats)
		memset(stats, 0, sizeof(SegvecCompactStats));

	if (SegvecMutableCountDocs(index, 1) > 0)
		compact_mutable(index, stats, false);
	merge_loop(index, stats, false, true);
}

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
 * compaction changes the manifest.
 *
 * A compaction:
 *	1. freezes the prefix: appends a fresh page P after the current tail
 *	   (one WAL record); docs from the head up to P are the frozen prefix,
 *	   new inserts go to P and after;
 *	2. builds HNSW graphs from the frozen docs and writes them as new
 *	   extents (full-page WAL images), unreachable so far;
 *	3. installs: one GenericXLog record on the metapage adds the new
 *	   segments, moves mutable_head to P, and records the frozen pages as
 *	   garbage;
 *	4. marks garbage pages deleted with the install's next FullTransactionId
 *	   (VACUUM recycles them once that is older than every snapshot) and
 *	   clears the garbage entries;
 *	5. merges segments by the tiered policy (below), each merge installed
 *	   the same way.
 * A crash before 3 leaves the old manifest and only unreachable pages; after
 * 3, the new one.  A scan reads the manifest once, so it sees either the
 * frozen docs in the mutable segment or the new segments, never both.
 *
 * Tiered merging: a segment's tier is floor(log4(live docs)).  When
 * SEGVEC_MERGE_FACTOR segments share a tier, they are merged into one
 * (dropping tombstoned docs), which lands in a higher tier; so the number
 * of segments grows like the logarithm of the number of docs.  A segment
 * whose docs are more than half tombstones is rewritten on its own.
 * Merges that would not fit in maintenance_work_mem are not done.
 *
 * src/compact/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "compact/compact.h"
#include "graph/graph.h"
#include "hooks/testhooks.h"

#define SEGVEC_MERGE_FACTOR		4

int			segvec_compact_threshold = -1;
int			segvec_compact_threshold_kb = 1024;

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
 * Mark the pages of every garbage entry deleted, then clear the entries.
 * Caller holds the compaction lock.
 */
void
SegvecProcessGarbage(Relation index)
{
	Buffer		metabuf;
	SegvecMetaPage meta;
	SegvecGarbage garbage[SEGVEC_MAX_GARBAGE];
	uint32		ngarbage;
	uint32		i;
	GenericXLogState *state;

	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	ngarbage = meta->ngarbage;
	memcpy(garbage, meta->garbage, sizeof(SegvecGarbage) * ngarbage);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	if (ngarbage == 0)
	{
		ReleaseBuffer(metabuf);
		return;
	}

	for (i = 0; i < ngarbage; i++)
		(void) SegvecMarkPagesDeleted(index, garbage[i].first, garbage[i].stop,
									  garbage[i].npages,
									  garbage[i].kind == SEGVEC_GARBAGE_CHAIN,
									  garbage[i].xid);

	/* clear the entries we handled (no one else adds any: we hold the lock) */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->ngarbage = 0;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Install: in one WAL record on the metapage, remove the segments numbered
 * in drop[], add the segments in add[] (numbering them), record the dropped
 * segments' extents as garbage, and if new_head is valid, move the mutable
 * segment's head there, recording the chain before it as garbage.
 */
static void
install(Relation index, SegvecSegment *add, int nadd,
		uint32 *drop, int ndrop, BlockNumber new_head, uint64 new_head_seqno)
{
	Buffer		metabuf;
	GenericXLogState *state;
	SegvecMetaPage meta;
	uint64		xid = U64FromFullTransactionId(ReadNextFullTransactionId());
	uint32		i,
				j,
				keep;

	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));

	if (meta->nsegments - ndrop + nadd > SEGVEC_MAX_SEGMENTS ||
		meta->ngarbage + ndrop + 1 > SEGVEC_MAX_GARBAGE)
	{
		GenericXLogAbort(state);
		UnlockReleaseBuffer(metabuf);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("segvec index \"%s\" has too many segments",
						RelationGetRelationName(index)),
				 errdetail("An index holds at most %d immutable segments.",
						   SEGVEC_MAX_SEGMENTS),
				 errhint("Increase maintenance_work_mem, or REINDEX the index.")));
	}

	/* drop */
	keep = 0;
	for (i = 0; i < meta->nsegments; i++)
	{
		bool		dropped = false;

		for (j = 0; j < ndrop; j++)
		{
			if (meta->segments[i].segno == drop[j])
			{
				SegvecGarbage *g = &meta->garbage[meta->ngarbage++];

				g->kind = SEGVEC_GARBAGE_EXTENT;
				g->first = meta->segments[i].start;
				g->stop = InvalidBlockNumber;
				g->npages = meta->segments[i].npages;
				g->xid = xid;
				dropped = true;
				break;
			}
		}
		if (!dropped)
			meta->segments[keep++] = meta->segments[i];
	}
	meta->nsegments = keep;

	/* add */
	for (i = 0; i < nadd; i++)
	{
		add[i].segno = meta->next_segno++;
		meta->segments[meta->nsegments++] = add[i];
	}

	/* doc ids given out by a build */
	if (new_head == InvalidBlockNumber && new_head_seqno > meta->next_seqno)
		meta->next_seqno = new_head_seqno;

	/* drop the frozen prefix of the mutable segment */
	if (new_head != InvalidBlockNumber && new_head != meta->mutable_head)
	{
		SegvecGarbage *g = &meta->garbage[meta->ngarbage++];

		g->kind = SEGVEC_GARBAGE_CHAIN;
		g->first = meta->mutable_head;
		g->stop = new_head;
		g->npages = 0;
		g->xid = xid;
		meta->mutable_head = new_head;
		meta->mutable_head_seqno = new_head_seqno;
	}

	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
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

/* State of feeding docs into graph builders, a segment per full builder */
typedef struct SegmentWriter
{
	Relation	index;
	SegvecMetric metric;
	int			dim;
	int			m;
	int			ef_construction;
	int			maxdocs;
	HnswBuilder *builder;
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
		HnswBuilderWrite(w->builder, w->index, &w->segs[w->nsegs]);
		w->nsegs++;
	}
	HnswBuilderFree(w->builder);
	w->builder = NULL;
}

/* SegvecDocCallback: add a doc to the current builder */
static void
writer_add(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
	SegmentWriter *w = (SegmentWriter *) arg;

	if (w->builder == NULL)
		w->builder = HnswBuilderCreate(w->metric, w->dim, w->m,
									   w->ef_construction, w->maxdocs);
	if (!HnswBuilderAdd(w->builder, doc, vector))
	{
		writer_flush(w);
		w->builder = HnswBuilderCreate(w->metric, w->dim, w->m,
									   w->ef_construction, w->maxdocs);
		HnswBuilderAdd(w->builder, doc, vector);
	}
	w->ndocs++;
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
	w->maxdocs = SegvecMaxBuildDocs(dim, opts.m);
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

/*
 * Pick segments to merge by the tiered policy: fills drop[] with segment
 * numbers and returns how many (0: nothing to do).
 */
static int
choose_merge(SegvecMetaInfo *info, int maxdocs, uint32 *drop)
{
	int			tier,
				i;

	/* a segment mostly tombstones is rewritten alone */
	for (i = 0; i < info->nsegments; i++)
	{
		if (info->segments[i].ntombstones * 2 > info->segments[i].ndocs)
		{
			drop[0] = info->segments[i].segno;
			return 1;
		}
	}

	for (tier = 0; tier < 32; tier++)
	{
		int			n = 0;
		int64		total = 0;

		for (i = 0; i < info->nsegments; i++)
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
 * Merge the segments numbered in drop[] into new ones.
 */
static void
merge_segments(Relation index, SegvecMetaInfo *info, uint32 *drop, int ndrop)
{
	SegmentWriter w;
	int			i,
				j;

	writer_init(&w, index, info->dimensions);
	for (j = 0; j < ndrop; j++)
	{
		for (i = 0; i < info->nsegments; i++)
		{
			SegvecSegment *seg = &info->segments[i];
			uint8	   *tomb;

			if (seg->segno != drop[j])
				continue;
			tomb = GraphGetTombstones(index, seg);
			GraphForEachNode(index, seg, info->dimensions, tomb, writer_add, &w);
			pfree(tomb);
		}
	}
	writer_flush(&w);
	install(index, w.segs, w.nsegs, drop, ndrop, InvalidBlockNumber, 0);
	SegvecProcessGarbage(index);
}

/*
 * SegvecCompact: compact the index (see the file header).  Waits for any
 * other compaction or VACUUM of the index to finish first.  Fills *stats
 * if not NULL.
 */
void
SegvecCompact(Relation index, SegvecCompactStats *stats)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	MemoryContext ctx,
				oldctx;
	Buffer		buf;
	BlockNumber frozen_stop;
	uint64		frozen_seqno = 0;
	SegmentWriter w;
	uint32		drop[SEGVEC_MAX_SEGMENTS];
	int			ndrop;

	if (stats)
		memset(stats, 0, sizeof(SegvecCompactStats));

	ctx = AllocSetContextCreate(CurrentMemoryContext, "segvec compaction",
								ALLOCSET_DEFAULT_SIZES);
	oldctx = MemoryContextSwitchTo(ctx);

	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	/* finish what a crashed compaction left */
	SegvecProcessGarbage(index);

	/* 1. freeze: a fresh tail page; everything before it is frozen */
	buf = SegvecMutableLockTail(index);
	SegvecGetMetaInfo(index, info);
	if (info->mutable_head == BufferGetBlockNumber(buf) &&
		PageGetMaxOffsetNumber(BufferGetPage(buf)) == 0)
	{
		/* nothing in the mutable segment */
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
			SegvecMutableForEachDoc(index, info->mutable_head, frozen_stop,
									info->dimensions, writer_add, &w);
		writer_flush(&w);

		/* test-only pause of a background job (segvec.job_delay_ms) */
		SegvecDelayPoint();

		/* 3. install, 4. mark the frozen pages deleted */
		install(index, w.segs, w.nsegs, NULL, 0, frozen_stop, frozen_seqno);
		SegvecProcessGarbage(index);

		if (stats)
		{
			stats->docs_compacted = w.ndocs;
			stats->segments_created = w.nsegs;
		}
	}

	/* 5. tiered merges */
	for (;;)
	{
		SegvecGetMetaInfo(index, info);
		if (info->dimensions == 0)
			break;
		ndrop = choose_merge(info,
							 SegvecMaxBuildDocs(info->dimensions,
												SegvecGetFrozenM(index)),
							 drop);
		if (ndrop == 0)
			break;
		merge_segments(index, info, drop, ndrop);
		if (stats)
			stats->segments_merged += ndrop;
		MemoryContextReset(ctx);
		info = palloc(sizeof(SegvecMetaInfo));
	}

	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	MemoryContextSwitchTo(oldctx);
	MemoryContextDelete(ctx);
}

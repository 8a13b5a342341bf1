/*-------------------------------------------------------------------------
 *
 * segvecbuild.c
 *	  CREATE INDEX for segvec.
 *
 * Every heap row with a non-NULL vector is collected in memory, up to what
 * maintenance_work_mem allows; each time that fills up, the docs become an
 * immutable HNSW segment, written straight away, so a table bigger than
 * memory gives several segments, which are then merged by the merge
 * policy and the settle policy (reading vectors from their pages,
 * compact/compact.c), into one segment when they fit in one merge.  A table
 * smaller than segvec.compact_threshold docs is written to the mutable
 * segment instead, where scans are exact.  The segments are installed in
 * the manifest at the end, in one WAL record.
 *
 * src/am/segvecbuild.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/am.h"
#include "compact/compact.h"
#include "graph/graph.h"
#include "keymap/keymap.h"
#include "store/store.h"

typedef struct SegvecBuildState
{
	Relation	index;
	MemoryContext tmpCtx;		/* reset after every heap row */
	double		indtuples;
	SegvecMetric metric;
	SegvecFrozenOptions opts;
	HnswBuilder *builder;		/* docs not yet in a segment */
	int			maxdocs;
	SegvecSegment *segs;		/* written, not installed */
	int			nsegs;
	bool		haskey;
	int			nfilters;		/* filter columns (keys after the vector) */
	uint32		postable[SEGVEC_MAX_FILTERS];	/* their postings (format.h) */
	KeymapEntry *entries;		/* keymap of the docs so far */
	int64		nentries;
	int64		maxentries;
	int64		ndocs;			/* doc ids given so far */
	int			nworkers;		/* parallel workers for each graph */
} SegvecBuildState;

/* a segment of fewer docs gets its graph built serially */
#define PARALLEL_MIN_DOCS	1000

/*
 * Doc ids of a build: the metapage's mutable head page has sequence number
 * 0, so the build numbers its docs from sequence number 1 on, 65,535 docs
 * per sequence number, and moves next_seqno past them at install.
 */
#define BUILD_DOCS_PER_SEQNO	65535
#define BuildDocId(n) \
	SegvecMakeDocId(1 + (n) / BUILD_DOCS_PER_SEQNO, 1 + (n) % BUILD_DOCS_PER_SEQNO)
#define BuildNextSeqno(n)	(2 + (n) / BUILD_DOCS_PER_SEQNO)

static void
add_entry(SegvecBuildState *bs, const SegvecDocInfo *doc)
{
	if (!(doc->flags & SEGVEC_DOC_HAS_KEY))
		return;
	if (bs->nentries >= bs->maxentries)
	{
		bs->maxentries = Max(1024, bs->maxentries * 2);
		bs->entries = bs->entries == NULL ?
			MemoryContextAllocHuge(CurrentMemoryContext,
								   sizeof(KeymapEntry) * bs->maxentries) :
			repalloc_huge(bs->entries, sizeof(KeymapEntry) * bs->maxentries);
	}
	KeymapEntryOfDoc(doc, &bs->entries[bs->nentries++]);
}

static void
report_graph_progress(int done)
{
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
}

/*
 * Turn the builder's docs into a segment: build the graph, write it.
 */
static void
flush_segment(SegvecBuildState *bs)
{
	int			n = HnswBuilderCount(bs->builder);

	if (n > 0)
	{
		int			i;

		for (i = 0; i < n; i++)
		{
			SegvecDocInfo doc;

			HnswBuilderGetDoc(bs->builder, i, &doc);
			add_entry(bs, &doc);
		}
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 SEGVEC_PHASE_GRAPH);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, n);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, 0);
		if (bs->nworkers > 0 && n >= PARALLEL_MIN_DOCS)
			HnswBuilderFinishParallel(bs->builder, bs->nworkers,
									  report_graph_progress);
		else
			HnswBuilderFinish(bs->builder, report_graph_progress);

		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 SEGVEC_PHASE_WRITE);
		bs->segs = bs->nsegs == 0 ? palloc(sizeof(SegvecSegment)) :
			repalloc(bs->segs, sizeof(SegvecSegment) * (bs->nsegs + 1));
		HnswBuilderWrite(bs->builder, bs->index,
						 SegvecNextSegno(bs->index) + bs->nsegs,
						 &bs->segs[bs->nsegs]);
		bs->nsegs++;
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 SEGVEC_PHASE_SCAN);
	}
	HnswBuilderFree(bs->builder);
	bs->builder = NULL;
}

/*
 * A small table: append the builder's docs to the mutable segment.
 */
static void
flush_mutable(SegvecBuildState *bs, int dim)
{
	int			n = HnswBuilderCount(bs->builder);
	int			i;

	for (i = 0; i < n; i++)
	{
		SegvecDocInfo doc;
		const float *v = HnswBuilderGetDoc(bs->builder, i, &doc);
		bool		page_added;

		doc.docid = SegvecMutableAppendFiltered(bs->index, &doc, v, dim,
												HnswBuilderGetFilters(bs->builder, i),
												&page_added);
		add_entry(bs, &doc);
	}
	HnswBuilderFree(bs->builder);
	bs->builder = NULL;
}

static void
frozen_options(Relation index, SegvecFrozenOptions *opts)
{
	SegvecOptions *relopts = (SegvecOptions *) index->rd_options;

	opts->m = relopts ? relopts->m : SEGVEC_DEFAULT_M;
	opts->ef_construction = relopts ? relopts->ef_construction :
		SEGVEC_DEFAULT_EF_CONSTRUCTION;
	opts->dimensions = relopts ? relopts->dimensions : 0;
	opts->quantization = SegvecQuantizationOption(relopts);
}

/*
 * Refuse a second INCLUDE column: the only one segvec reads is the id key,
 * and one it silently ignored would look like a covering column.  Key
 * columns after the vector must be filter columns segvec can keep.
 */
static void
check_columns(Relation index)
{
	if (IndexRelationGetNumberOfAttributes(index) >
		IndexRelationGetNumberOfKeyAttributes(index) + 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("access method \"segvec\" supports at most one INCLUDE column"),
				 errdetail("The INCLUDE column is the id key of the index's rows."),
				 errhint("To filter on a column inside the index, make it a key column after the vector, as in USING segvec (embedding, tenant_id) INCLUDE (id).")));
	SegvecFilterCheckColumns(index);
}

/*
 * Write the metapage and the empty head page of the mutable segment into
 * the given fork, which must be empty.  Both are logged as full pages.
 */
static void
init_index_fork(Relation index, ForkNumber fork)
{
	SegvecFrozenOptions opts;
	SegvecMetric metric = SegvecGetMetric(index);
	Buffer		metabuf,
				headbuf;

	frozen_options(index, &opts);

	metabuf = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	headbuf = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(headbuf, BUFFER_LOCK_EXCLUSIVE);

	if (BufferGetBlockNumber(metabuf) != SEGVEC_METAPAGE_BLKNO ||
		BufferGetBlockNumber(headbuf) != SEGVEC_METAPAGE_BLKNO + 1)
		elog(ERROR, "segvec index \"%s\" is not empty",
			 RelationGetRelationName(index));

	START_CRIT_SECTION();
	SegvecInitMetaPage(BufferGetPage(metabuf), metric, &opts);
	SegvecInitPage(BufferGetPage(headbuf), SEGVEC_PAGE_MUTABLE);
	MarkBufferDirty(metabuf);
	MarkBufferDirty(headbuf);
	if (fork == INIT_FORKNUM || RelationNeedsWAL(index))
	{
		log_newpage_buffer(metabuf, true);
		log_newpage_buffer(headbuf, true);
	}
	END_CRIT_SECTION();

	UnlockReleaseBuffer(headbuf);
	UnlockReleaseBuffer(metabuf);
}

/*
 * A builder for the docs that follow, of dim dimensions; it keeps the
 * labels of label array columns, for their label postings.
 */
static HnswBuilder *
new_builder(SegvecBuildState *buildstate, int dim)
{
	HnswBuilder *b;
	int			c;

	b = HnswBuilderCreate(buildstate->metric, dim, buildstate->opts.m,
						  buildstate->opts.ef_construction,
						  buildstate->maxdocs);
	HnswBuilderSetQuantization(b, buildstate->opts.quantization);
	HnswBuilderSetFilters(b, buildstate->nfilters);
	for (c = 0; c < buildstate->nfilters; c++)
		if (buildstate->postable[c] == SEGVEC_POSTINGS_COLUMN_BITS)
			HnswBuilderKeepLabels(b, c);
	return b;
}

/*
 * Per heap row callback of table_index_build_scan.
 */
static void
build_callback(Relation index, ItemPointer tid, Datum *values,
			   bool *isnull, bool tupleIsAlive, void *state)
{
	SegvecBuildState *buildstate = (SegvecBuildState *) state;
	MemoryContext oldCtx;
	float	   *vector;
	int			dim;
	SegvecDocInfo doc;
	char		filters[SEGVEC_FILTER_MAX_BYTES];
	int			keycol = buildstate->nfilters + 1;
	int			c;

	/* NULL vectors are not indexed */
	if (isnull[0])
		return;

	oldCtx = MemoryContextSwitchTo(buildstate->tmpCtx);
	vector = SegvecDatumGetVector(index, values[0], &dim);

	memset(&doc, 0, sizeof(doc));
	doc.docid = BuildDocId(buildstate->ndocs);
	doc.heaptid = *tid;
	doc.checksum = SegvecVectorChecksum(vector, dim);
	if (buildstate->haskey && !isnull[keycol])
	{
		doc.key_hash = SegvecKeyHash(index, values[keycol]);
		doc.flags |= SEGVEC_DOC_HAS_KEY;
	}
	if (buildstate->nfilters > 0)
		SegvecFilterFormEntry(index, values, isnull, filters);
	MemoryContextSwitchTo(oldCtx);
	buildstate->ndocs++;

	if (buildstate->builder == NULL)
	{
		buildstate->maxdocs = SegvecMaxBuildDocs(dim, buildstate->opts.m);
		buildstate->builder = new_builder(buildstate, dim);
	}
	if (!HnswBuilderAddFiltered(buildstate->builder, &doc, vector, filters))
	{
		flush_segment(buildstate);
		buildstate->builder = new_builder(buildstate, dim);
		HnswBuilderAddFiltered(buildstate->builder, &doc, vector, filters);
	}

	/* the labels of label array columns, for the segment's label postings */
	for (c = 0; c < buildstate->nfilters; c++)
	{
		uint64	   *hashes;
		int			n;

		if (buildstate->postable[c] != SEGVEC_POSTINGS_COLUMN_BITS ||
			isnull[c + 1])
			continue;
		oldCtx = MemoryContextSwitchTo(buildstate->tmpCtx);
		SegvecLabelHashes(values[c + 1], &hashes, &n);
		MemoryContextSwitchTo(oldCtx);
		HnswBuilderAddLabels(buildstate->builder, c, hashes, n);
	}
	buildstate->indtuples += 1;
	MemoryContextReset(buildstate->tmpCtx);
}

/*
 * The merges at the end of a build, and the move of what they made into
 * the space the pieces left (SegvecShrinkBuilt), with what they free
 * reusable at once (SegvecSetBuilding).
 */
static void
merge_built_segments(Relation index)
{
	SegvecSetBuilding(RelationGetRelid(index));
	PG_TRY();
	{
		SegvecMergeBuiltSegments(index);
		SegvecShrinkBuilt(index);
	}
	PG_FINALLY();
	{
		SegvecSetBuilding(InvalidOid);
	}
	PG_END_TRY();
}

/*
 * segvecbuild: ambuild callback.
 */
IndexBuildResult *
segvecbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	SegvecBuildState buildstate;
	double		reltuples;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	check_columns(index);
	SegvecRecordInputDependency(index);
	init_index_fork(index, MAIN_FORKNUM);

	memset(&buildstate, 0, sizeof(buildstate));
	buildstate.index = index;
	buildstate.metric = SegvecGetMetric(index);
	buildstate.haskey = SegvecIndexHasKey(index);
	buildstate.nfilters = SegvecIndexFilterCount(index);
	SegvecIndexFilterPostable(index, buildstate.postable);
	frozen_options(index, &buildstate.opts);
	buildstate.tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
											  "segvec build temporary context",
											  ALLOCSET_DEFAULT_SIZES);

	/*
	 * Workers for the graphs, planned as for a btree (PG 15 plans them for
	 * btree only): none for a small table, an unsafe expression or
	 * predicate, max_parallel_maintenance_workers = 0, or within a parallel
	 * operation already.  The heap scan stays the leader's.
	 */
	if (IsNormalProcessingMode() && !IsInParallelMode())
		buildstate.nworkers = plan_create_index_workers(RelationGetRelid(heap),
														RelationGetRelid(index));

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 SEGVEC_PHASE_SCAN);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, (void *) &buildstate,
									   NULL);

	if (buildstate.builder != NULL)
	{
		if (buildstate.nsegs == 0 &&
			buildstate.indtuples < SegvecCompactThreshold(index))
		{
			SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));

			SegvecGetMetaInfo(index, info);
			flush_mutable(&buildstate, info->dimensions);
		}
		else
			flush_segment(&buildstate);
	}
	SegvecInstallSegments(index, buildstate.segs, buildstate.nsegs,
						  BuildNextSeqno(buildstate.ndocs));
	KeymapWriteInitialSnapshot(index, buildstate.entries, buildstate.nentries);

	/*
	 * A table bigger than one in-memory build gave several segments: merge
	 * them now, by the merge policy and then as a quiet index settles, so
	 * that a build whose segments fit in one merge ends as one graph
	 * segment (a merge holds no vectors in memory; it keeps doc ids, so the
	 * keymap stays as it is); then move it down into the pieces' space and
	 * give the rest back, so that the index is about its pages in use.
	 */
	if (buildstate.nsegs >= 2)
		merge_built_segments(index);

	MemoryContextDelete(buildstate.tmpCtx);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = buildstate.indtuples;
	return result;
}

/*
 * segvecbuildempty: ambuildempty callback, the init fork of an index on an
 * unlogged table (copied over the main fork at the end of crash recovery).
 */
void
segvecbuildempty(Relation index)
{
	check_columns(index);
	init_index_fork(index, INIT_FORKNUM);
}

/*
 * segvecbuildphasename: ambuildphasename callback.
 */
char *
segvecbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case SEGVEC_PHASE_SCAN:
			return "scanning table";
		case SEGVEC_PHASE_GRAPH:
			return "building graph";
		case SEGVEC_PHASE_WRITE:
			return "writing segment";
		default:
			return NULL;
	}
}

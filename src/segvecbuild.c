/*-------------------------------------------------------------------------
 *
 * segvecbuild.c
 *	  CREATE INDEX for segvec: the metapage, the mutable segment, and every
 *	  heap row with a non-NULL vector.
 *
 * src/segvecbuild.c
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
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "segvec.h"

typedef struct SegvecBuildState
{
	MemoryContext tmpCtx;		/* reset after every heap row */
	double		indtuples;
} SegvecBuildState;

static void
frozen_options(Relation index, SegvecFrozenOptions *opts)
{
	SegvecOptions *relopts = (SegvecOptions *) index->rd_options;

	opts->m = relopts ? relopts->m : SEGVEC_DEFAULT_M;
	opts->ef_construction = relopts ? relopts->ef_construction :
		SEGVEC_DEFAULT_EF_CONSTRUCTION;
	opts->dimensions = relopts ? relopts->dimensions : 0;
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

	/* NULL vectors are not indexed */
	if (isnull[0])
		return;

	oldCtx = MemoryContextSwitchTo(buildstate->tmpCtx);
	vector = SegvecDatumGetVector(index, values[0], &dim);
	SegvecMutableAppend(index, tid, vector, dim);
	buildstate->indtuples += 1;
	MemoryContextSwitchTo(oldCtx);
	MemoryContextReset(buildstate->tmpCtx);
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

	init_index_fork(index, MAIN_FORKNUM);

	buildstate.indtuples = 0;
	buildstate.tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
											  "segvec build temporary context",
											  ALLOCSET_DEFAULT_SIZES);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, (void *) &buildstate,
									   NULL);

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
	init_index_fork(index, INIT_FORKNUM);
}

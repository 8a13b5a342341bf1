/*-------------------------------------------------------------------------
 *
 * graphpbuild.c
 *	  Parallel build of an in-memory builder's graph (CREATE INDEX).
 *
 * The leader has collected a segment's docs in an in-memory builder (the
 * heap scan stays serial: it is a few percent of a build).  It prepares
 * the insertion as the serial build does (doc id order, duplicates, every
 * node's level and the random insertion order, drawn from the same
 * generator), copies what the insertions read and write into a DSM segment
 * of a ParallelContext (vectors, levels, upper-layer offsets, duplicates,
 * the insertion order, the lists of every layer, in-degrees, a lock per
 * node) and then it and the workers insert the nodes, each claiming the
 * next node of the insertion order from a shared counter.
 * Exact duplicates are left to the leader, after the workers are done (a
 * duplicate copies its first node's finished list); so is the
 * connectivity repair, and the writing of the segment (graphwrite.c), from
 * the builder, into which the graph is copied back.
 *
 * Locking (src/README.md, "Parallel build"): a node's neighbour lists, on
 * every layer, are read under its LWLock in shared mode (copied out) and
 * changed under it in exclusive mode; no one holds two node locks.  The
 * entry point and the top level are read and changed under entry_lock.
 * In-degrees are atomics.  Vectors, levels and the rest are written by the
 * leader before the workers start and only read afterwards.
 *
 * The workers run no user code: the index's expressions and predicate are
 * evaluated by the leader's heap scan, so nothing here needs the table
 * owner's identity (the leader's user and security context are restored
 * in the workers anyway, by the parallel machinery).
 *
 * The graph depends on the interleaving of the participants, so a parallel
 * build is not deterministic; a serial one (no workers planned) is the
 * serial build, bit for bit.
 *
 * src/graph/graphpbuild.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/shm_toc.h"
#include "utils/memutils.h"

#include "graph/graph_int.h"

/* shm_toc key of the GraphParallelShared */
#define GRAPH_PARALLEL_KEY_SHARED	UINT64CONST(0x5E6F0C0000000001)

/* alignment of the arrays in the segment (a cache line) */
#define GRAPH_SHARED_ALIGN(len)	TYPEALIGN(64, (len))

PGDLLEXPORT void SegvecGraphBuildMain(dsm_segment *seg, shm_toc *toc);

static int	graph_build_tranche = 0;

/* the node locks' tranche, made on first use and registered here */
static int
build_tranche(void)
{
	if (graph_build_tranche == 0)
		graph_build_tranche = LWLockNewTrancheId();
	LWLockRegisterTranche(graph_build_tranche, "segvec_graph_build");
	return graph_build_tranche;
}

/* where everything goes in the shared chunk; sets the offsets and total */
static void
plan_shared(GraphParallelShared *sh)
{
	Size		n = sh->n;
	Size		off = GRAPH_SHARED_ALIGN(sizeof(GraphParallelShared));

#define PLACE(field, bytes) \
	do { sh->field = off; off = GRAPH_SHARED_ALIGN(add_size(off, (bytes))); } while (0)

	PLACE(off_vectors, mul_size(mul_size(n, sh->dim), sizeof(float)));
	PLACE(off_extra, sh->metric == SEGVEC_METRIC_IP ? mul_size(n, sizeof(float)) : 0);
	PLACE(off_levels, n);
	PLACE(off_upper_off, mul_size(n, sizeof(uint32)));
	PLACE(off_dupof, mul_size(n, sizeof(int32)));
	PLACE(off_order, mul_size(Max(sh->norder, 1), sizeof(uint32)));
	PLACE(off_flat_upper, mul_size(Max(sh->upper_size, 1), sizeof(uint32)));
	PLACE(off_nbr0, mul_size(mul_size(n, 2 * sh->m), sizeof(uint32)));
	PLACE(off_nnbr0, mul_size(n, sizeof(uint16)));
	PLACE(off_indeg0, mul_size(n, sizeof(pg_atomic_uint32)));
	PLACE(off_locks, mul_size(n, sizeof(LWLock)));
#undef PLACE
	sh->total = off;
}

#define SHARED_ARRAY(sh, type, field) ((type *) ((char *) (sh) + (sh)->field))

/*
 * Make v one participant's builder over the shared graph: the arrays in
 * the segment, its own visited set and search scratch space (in the
 * current memory context).
 */
static void
attach_view(HnswBuilder *v, GraphParallelShared *sh)
{
	memset(v, 0, sizeof(HnswBuilder));
	v->ctx = CurrentMemoryContext;
	v->metric = sh->metric;
	v->dim = sh->dim;
	v->m = sh->m;
	v->m0 = 2 * sh->m;
	v->ef_construction = sh->ef_construction;
	v->ml = 1.0 / log((double) sh->m);
	v->n = sh->n;
	v->maxn = sh->n;
	v->vectors = SHARED_ARRAY(sh, float, off_vectors);
	v->extra = sh->metric == SEGVEC_METRIC_IP ?
		SHARED_ARRAY(sh, float, off_extra) : NULL;
	v->levels = SHARED_ARRAY(sh, uint8, off_levels);
	v->upper_off = SHARED_ARRAY(sh, uint32, off_upper_off);
	v->dupof = SHARED_ARRAY(sh, int32, off_dupof);
	v->flat_upper = SHARED_ARRAY(sh, uint32, off_flat_upper);
	v->upper_size = sh->upper_size;
	v->nbr0 = SHARED_ARRAY(sh, uint32, off_nbr0);
	v->nnbr0 = SHARED_ARRAY(sh, uint16, off_nnbr0);
	v->aindeg0 = SHARED_ARRAY(sh, pg_atomic_uint32, off_indeg0);
	v->nodelocks = SHARED_ARRAY(sh, LWLock, off_locks);
	v->shared = sh;
	v->entry = -1;
	v->maxlevel = -1;
	v->vid[0] = v->vid[1] = -1;
	v->visited = MemoryContextAllocHuge(CurrentMemoryContext,
										mul_size(Max(sh->n, 1), sizeof(uint32)));
	memset(v->visited, 0, sizeof(uint32) * sh->n);
	v->stamp = 0;
	GraphInitScratch(v);
}

/*
 * Insert the nodes of the insertion order until none is left to claim (it
 * holds no duplicates: the leader inserts them afterwards).  progress, if
 * not NULL, gets the number of nodes inserted by all participants now and
 * then.
 */
static void
participate(GraphParallelShared *sh, void (*progress) (int done))
{
	HnswBuilder v;
	GraphCand  *eps;
	const uint32 *order = SHARED_ARRAY(sh, uint32, off_order);
	int			mine = 0;

	attach_view(&v, sh);
	eps = palloc(sizeof(GraphCand) * (Max(v.ef_construction, v.m0) + 2));
	for (;;)
	{
		uint32		k = pg_atomic_fetch_add_u32(&sh->next, 1);

		if (k >= (uint32) sh->norder)
			break;
		CHECK_FOR_INTERRUPTS();
		GraphInsertNode(&v, order[k], eps);
		pg_atomic_fetch_add_u32(&sh->ndone, 1);
		if (progress && (++mine % 256) == 0)
			progress((int) pg_atomic_read_u32(&sh->ndone));
	}
	pfree(eps);
	pfree(v.visited);
}

/*
 * SegvecGraphBuildMain: a parallel worker's entry point.
 */
void
SegvecGraphBuildMain(dsm_segment *seg, shm_toc *toc)
{
	GraphParallelShared *sh = shm_toc_lookup(toc, GRAPH_PARALLEL_KEY_SHARED,
											 false);

	LWLockRegisterTranche(sh->tranche, "segvec_graph_build");
	participate(sh, NULL);
}

/* copy_back copies this much at a time */
#define COPY_BACK_CHUNK		((Size) 16 * 1024 * 1024)

/*
 * Copy len bytes of the segment at src to dst, giving the segment's pages
 * back to the system as they are copied (MADV_REMOVE frees the pages of
 * a shared mapping: the segment is a tmpfs file with the usual posix
 * dynamic_shared_memory_type; elsewhere the advice fails and nothing
 * changes).  The pages read as zeros afterwards, which no one does: the
 * workers are done and the segment is destroyed next.  So the vectors are
 * not held twice, in the segment and in the builder, at the end.
 */
static void
copy_back(void *dst, void *src, Size len)
{
	Size		done;

	for (done = 0; done < len; done += COPY_BACK_CHUNK)
	{
		Size		n = Min(COPY_BACK_CHUNK, len - done);

		memcpy((char *) dst + done, (char *) src + done, n);
#if defined(MADV_REMOVE)
		{
			uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);
			uintptr_t	start = TYPEALIGN(page, (uintptr_t) src + done);
			uintptr_t	end = TYPEALIGN_DOWN(page, (uintptr_t) src + done + n);

			if (end > start)
				(void) madvise((void *) start, end - start, MADV_REMOVE);
		}
#endif
	}
}

/*
 * HnswBuilderFinishParallel: HnswBuilderFinish with up to nworkers
 * parallel workers besides the leader (the caller's process).  The graph
 * is as good as the serial one but not the same: it depends on how the
 * participants' insertions interleave.  If no worker can be launched, the
 * leader inserts every node itself.
 */
void
HnswBuilderFinishParallel(HnswBuilder *b, int nworkers,
						  void (*progress) (int done))
{
	MemoryContext oldctx = MemoryContextSwitchTo(b->ctx);
	GraphCand  *eps = palloc(sizeof(GraphCand) * (Max(b->ef_construction, b->m0) + 2));
	GraphParallelShared plan;
	GraphParallelShared *sh;
	ParallelContext *pcxt;
	pg_atomic_uint32 *indeg;
	LWLock	   *locks;
	int			nlaunched;
	int			i;

	Assert(!b->paged);
	GraphPrepareInsert(b);

	memset(&plan, 0, sizeof(plan));
	plan.metric = b->metric;
	plan.dim = b->dim;
	plan.m = b->m;
	plan.ef_construction = b->ef_construction;
	plan.n = b->n;
	plan.norder = b->norder;
	plan.upper_size = b->upper_size;
	plan.tranche = build_tranche();
	plan_shared(&plan);

	EnterParallelMode();
	pcxt = CreateParallelContext("segvec", "SegvecGraphBuildMain", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, plan.total);
	shm_toc_estimate_keys(&pcxt->estimator, 1);
	InitializeParallelDSM(pcxt);

	sh = shm_toc_allocate(pcxt->toc, plan.total);
	memcpy(sh, &plan, sizeof(plan));
	/*
	 * Huge pages for the segment's vectors and lists, as the serial
	 * builder asks for its own (only where the system gives shared memory
	 * transparent huge pages: shmem_enabled = advise)
	 */
	GraphAdviseHugePages(SHARED_ARRAY(sh, float, off_vectors),
						 sizeof(float) * (Size) b->n * b->dim);
	GraphAdviseHugePages(SHARED_ARRAY(sh, uint32, off_nbr0),
						 sizeof(uint32) * (Size) b->n * b->m0);
	memcpy(SHARED_ARRAY(sh, float, off_vectors), b->vectors,
		   sizeof(float) * (Size) b->n * b->dim);
	if (b->metric == SEGVEC_METRIC_IP)
		memcpy(SHARED_ARRAY(sh, float, off_extra), b->extra,
			   sizeof(float) * b->n);
	memcpy(SHARED_ARRAY(sh, uint8, off_levels), b->levels, b->n);
	memcpy(SHARED_ARRAY(sh, uint32, off_upper_off), b->upper_off,
		   sizeof(uint32) * b->n);
	memcpy(SHARED_ARRAY(sh, int32, off_dupof), b->dupof, sizeof(int32) * b->n);
	memcpy(SHARED_ARRAY(sh, uint32, off_order), b->order,
		   sizeof(uint32) * b->norder);
	memset(SHARED_ARRAY(sh, uint32, off_flat_upper), 0,
		   sizeof(uint32) * b->upper_size);
	memset(SHARED_ARRAY(sh, uint16, off_nnbr0), 0, sizeof(uint16) * b->n);
	indeg = SHARED_ARRAY(sh, pg_atomic_uint32, off_indeg0);
	locks = SHARED_ARRAY(sh, LWLock, off_locks);
	for (i = 0; i < b->n; i++)
	{
		pg_atomic_init_u32(&indeg[i], 0);
		LWLockInitialize(&locks[i], plan.tranche);
	}
	LWLockInitialize(&sh->entry_lock, plan.tranche);

	/* the first node of the order is the first entry point */
	Assert(b->norder > 0);
	sh->entry = (int) b->order[0];
	sh->maxlevel = b->levels[b->order[0]];
	pg_atomic_init_u32(&sh->next, 1);
	pg_atomic_init_u32(&sh->ndone, 1);
	shm_toc_insert(pcxt->toc, GRAPH_PARALLEL_KEY_SHARED, sh);

	/* the builder's vectors and lists are in the segment meanwhile */
	pfree(b->vectors);
	b->vectors = NULL;
	pfree(b->nbr0);
	b->nbr0 = NULL;
	pfree(b->order);
	b->order = NULL;

	LaunchParallelWorkers(pcxt);
	nlaunched = pcxt->nworkers_launched;
	participate(sh, progress);
	WaitForParallelWorkersToFinish(pcxt);

	/* the graph back into the builder */
	b->nbr0 = MemoryContextAllocHuge(b->ctx, mul_size(mul_size(b->maxn, b->m0),
													  sizeof(uint32)));
	GraphAdviseHugePages(b->nbr0, sizeof(uint32) * (Size) b->maxn * b->m0);
	copy_back(b->nbr0, SHARED_ARRAY(sh, uint32, off_nbr0),
			  sizeof(uint32) * (Size) b->n * b->m0);
	b->vectors = MemoryContextAllocHuge(b->ctx, mul_size(mul_size(b->maxn, b->dim),
														 sizeof(float)));
	GraphAdviseHugePages(b->vectors, sizeof(float) * (Size) b->maxn * b->dim);
	copy_back(b->vectors, SHARED_ARRAY(sh, float, off_vectors),
			  sizeof(float) * (Size) b->n * b->dim);
	memcpy(b->nnbr0, SHARED_ARRAY(sh, uint16, off_nnbr0), sizeof(uint16) * b->n);
	memcpy(b->flat_upper, SHARED_ARRAY(sh, uint32, off_flat_upper),
		   sizeof(uint32) * b->upper_size);
	for (i = 0; i < b->n; i++)
		b->indeg0[i] = pg_atomic_read_u32(&indeg[i]);
	b->entry = sh->entry;
	b->maxlevel = sh->maxlevel;
	b->peak_bytes = Max(b->peak_bytes, plan.total);

	DestroyParallelContext(pcxt);
	ExitParallelMode();

	elog(DEBUG1, "segvec parallel graph build: %d docs, %d of %d workers launched, %zu bytes of shared memory",
		 b->n, nlaunched, nworkers, plan.total);

	GraphFinishInsert(b, eps, progress);
	pfree(eps);
	MemoryContextSwitchTo(oldctx);
}

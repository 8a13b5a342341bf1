/*-------------------------------------------------------------------------
 *
 * graphbuild.c
 *	  Build an HNSW graph in memory (graphwrite.c writes it out as an
 *	  immutable segment).
 *
 * The algorithms are those of Malkov & Yashunin (2016/2018): INSERT
 * (algorithm 1) with SEARCH-LAYER (algorithm 2) and the neighbour selection
 * heuristic SELECT-NEIGHBORS-HEURISTIC (algorithm 4, keeping pruned
 * connections, without extending the candidates).  Level assignment uses
 * mL = 1 / ln(M).  Layer 0 keeps up to 2*M neighbours, the others M.
 *
 * Nodes are inserted in a random order (GraphShuffleInsertion), not in doc
 * id order: the docs come in the table's physical order, which is often
 * grouped (rows loaded cluster by cluster, tenant by tenant), and a graph
 * built one cluster after another reaches some clusters only from a few
 * nodes of others, so the greedy descent of a search misses them (see
 * "Connectivity" in src/README.md).
 *
 * Three additions keep the graph connected on data full of near-identical
 * and identical vectors, where the plain algorithm leaves nodes that no
 * search can reach (ibid.):
 *	- exact duplicates are not inserted as nodes of their own: each joins a
 *	  ring through the first node with that vector, taking one slot of that
 *	  node's list (instead of one slot of every neighbour's list each);
 *	- pruning a full layer-0 list for a back link never drops the last link
 *	  into a node (in-degrees are counted);
 *	- after the build, every node not reachable from the entry point on
 *	  layer 0 is linked from its nearest reachable node, as the NSG builder
 *	  does (Fu et al., "Fast Approximate Nearest Neighbor Search With The
 *	  Navigating Spreading-out Graph", VLDB 2019).
 *
 * Reading vectors is most of a build's cost (they are far bigger than the
 * caches and read at random), so distances that are only wanted below a
 * bound stop reading once they cannot be (node_distance_below), a search
 * step prefetches the next candidates' vectors, and the in-memory
 * builder's vectors and lists are advised to huge pages; none of it
 * changes a decision, so the graph is the same bit for bit (src/README.md,
 * "Build speed").
 *
 * HnswBuilderCreate's builder holds every vector in memory; callers bound
 * the number of docs (its maxdocs) from maintenance_work_mem with
 * HnswBuilderNodeBytes and start another segment when it is reached.  A
 * merge's builder (graphmerge.c) keeps vectors and layer-0 lists in the
 * pages of the segment it writes instead; the algorithm here reaches both
 * through builder_vector, builder_list and builder_store_list (graph_int.h).
 *
 * src/graph/graphbuild.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/mman.h>

#include "access/xloginsert.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "graph/graph_int.h"
#include "graph/quant.h"


/* ----------------
 * Graph access
 * ----------------
 */

/*
 * Distance between two stored docs, for building.  NaN (a zero vector with
 * cosine) counts as farthest.
 *
 * Inner product is not a metric (a vector is not its own nearest
 * neighbour), which hurts a graph built on it.  So for ip the graph is built
 * on the usual reduction of maximum inner product search to Euclidean search
 * (Bachrach et al., "Speeding up the Xbox recommender system using a
 * Euclidean transformation for inner-product spaces", RecSys 2014): each
 * vector x gets one more coordinate sqrt(N^2 - |x|^2), N the largest norm,
 * and neighbours are chosen by squared L2 between the extended vectors.  A
 * query q extended with 0 is at squared L2 |q|^2 + N^2 - 2 q.x from x, which
 * orders docs exactly as -q.x does, so searches use the ip distance itself.
 */
static inline const float *
builder_vector(HnswBuilder *b, uint32 id, int slot)
{
	if (!b->paged)
		return b->vectors + (Size) id * b->dim;
	return GraphPagedVector(b, id, slot);
}

static inline double
node_distance(HnswBuilder *b, uint32 a, uint32 c)
{
	const float *va = builder_vector(b, a, 0);
	const float *vc = builder_vector(b, c, 1);
	double		d;

	if (b->metric == SEGVEC_METRIC_IP)
	{
		double		e = (double) b->extra[a] - b->extra[c];

		return (double) SegvecL2SquaredKernel(va, vc, b->dim) + e * e;
	}
	d = SegvecDistance(b->metric, va, vc, b->dim);
	return isnan(d) ? get_float8_infinity() : d;
}

/* bytes of a transparent huge page (x86-64) */
#define HUGE_PAGE_BYTES	((Size) 2 * 1024 * 1024)

/* bytes of a CPU cache line (x86-64, arm64; PG_CACHE_LINE_SIZE is 128) */
#define CPU_CACHE_LINE	64

/* a search step prefetches the vectors of this many nodes ahead ... */
#define PREFETCH_AHEAD	3

/* ... and the first this many bytes of each (the bounded kernel's first
 * check, BOUND_CHECK_BLOCKS in distance.c); what it reads past that, the
 * CPU's own prefetcher follows */
#define PREFETCH_BYTES	512

/*
 * Ask the CPU to bring node id's vector into its caches (in-memory builders
 * only; a merge's builder reads vectors through the buffer manager).  The
 * builder's vectors are far bigger than the caches, and the distances of a
 * search step read them in an order no hardware prefetcher can guess.
 */
static inline void
prefetch_vector(HnswBuilder *b, uint32 id)
{
	const char *p;
	const char *end;

	if (b->paged)
		return;
	p = (const char *) (b->vectors + (Size) id * b->dim);
	end = p + Min(sizeof(float) * b->dim, PREFETCH_BYTES);
	p = (const char *) TYPEALIGN_DOWN(CPU_CACHE_LINE, p);
	for (; p < end; p += CPU_CACHE_LINE)
		__builtin_prefetch(p);
}

/*
 * node_distance(b, a, c) when it is below bound; otherwise some value of at
 * least bound (for a caller that only keeps a node nearer than bound, so
 * its decisions are exactly those node_distance would give).  For l2 and
 * ip the kernel stops reading the vectors once its partial sum, which
 * never exceeds the whole, already reaches the bound: most of the nodes a
 * search step scores are farther than its ef-th result, and with
 * high-dimensional vectors the reads are most of the cost.
 */
static inline double
node_distance_below(HnswBuilder *b, uint32 a, uint32 c, double bound)
{
	const float *va;
	const float *vc;
	double		e2 = 0;
	float		fbound;
	float		f;
	double		low;

	if (b->metric == SEGVEC_METRIC_COSINE)
		return node_distance(b, a, c);
	va = builder_vector(b, a, 0);
	vc = builder_vector(b, c, 1);
	if (b->metric == SEGVEC_METRIC_IP)
	{
		double		e = (double) b->extra[a] - b->extra[c];

		e2 = e * e;
		fbound = (float) (bound - e2);
	}
	else
		fbound = (float) (bound * bound);

	f = SegvecL2SquaredBoundedKernel(va, vc, b->dim, fbound);
	if (f < fbound)
	{
		/* the kernel did not stop early: f is the whole sum */
		return b->metric == SEGVEC_METRIC_IP ? (double) f + e2 :
			sqrt((double) f);
	}
	if (isfinite(f))
	{
		/* f may be a partial sum: a lower bound of the distance */
		low = b->metric == SEGVEC_METRIC_IP ? (double) f + e2 :
			sqrt((double) f);
		if (low >= bound)
			return low;
	}
	/* rounding left it open (or the float sum overflowed): the whole way */
	return node_distance(b, a, c);
}

/* node_distance for graphmerge.c */
double
GraphNodeDistance(HnswBuilder *b, uint32 a, uint32 c)
{
	return node_distance(b, a, c);
}

/* builder_vector for graphmerge.c */
const float *
GraphBuilderVector(HnswBuilder *b, uint32 id, int slot)
{
	return builder_vector(b, id, slot);
}

/* node id's upper-layer list of the layer (>= 1): count, then M ids */
static inline uint32 *
upper_list(HnswBuilder *b, uint32 id, int layer)
{
	return b->flat_upper + b->upper_off[id] +
		(Size) (layer - 1) * SEGVEC_UPPER_LIST_SIZE(b->m);
}

/*
 * Node id's neighbour list on the layer, *count entries of at most *max.
 * Layer 0 in paged mode is a copy, in list slot `slot` (0 or 1, so that two
 * lists can be held at once), valid until the slot's next use; a caller
 * that changes a list writes it back with store_neighbors.
 */
static inline uint32 *
neighbors(HnswBuilder *b, uint32 id, int layer, int *count, int *max,
		  int slot)
{
	if (layer == 0)
	{
		*max = b->m0;
		if (b->paged)
			return GraphPagedList(b, id, count, slot);
		*count = b->nnbr0[id];
		return b->nbr0 + (Size) id * b->m0;
	}
	else
	{
		uint32	   *list = upper_list(b, id, layer);

		*count = list[0];
		*max = b->m;
		return list + 1;
	}
}

/*
 * Make list[0 .. count) node id's neighbour list on the layer; list is what
 * neighbors returned for it (changed in place) or another array.
 */
static inline void
store_neighbors(HnswBuilder *b, uint32 id, int layer, const uint32 *list,
				int count)
{
	uint32	   *dst;

	if (layer == 0 && b->paged)
	{
		GraphPagedStoreList(b, id, list, count);
		return;
	}
	if (layer == 0)
	{
		dst = b->nbr0 + (Size) id * b->m0;
		b->nnbr0[id] = count;
	}
	else
	{
		dst = upper_list(b, id, layer);
		dst[0] = count;
		dst++;
	}
	if (dst != list)
		memmove(dst, list, sizeof(uint32) * count);
}

/* layer-0 lists for graphmerge.c (neighbors, store_neighbors) */
uint32 *
GraphGetList(HnswBuilder *b, uint32 id, int *count, int slot)
{
	int			max;

	return neighbors(b, id, 0, count, &max, slot);
}

void
GraphStoreList(HnswBuilder *b, uint32 id, const uint32 *list, int count)
{
	store_neighbors(b, id, 0, list, count);
}

/* the first node holding the same vector as id (id itself if none) */
static inline uint32
dup_root(HnswBuilder *b, uint32 id)
{
	return b->dupof[id] >= 0 ? (uint32) b->dupof[id] : id;
}

/*
 * A parallel build's participants (graphpbuild.c) share the graph: a
 * node's neighbour lists (every layer) are read under its lock in shared
 * mode and changed under it in exclusive mode, and the in-degrees are
 * atomics.  A serial builder (b->nodelocks NULL) takes no locks.
 */
static inline void
node_lock(HnswBuilder *b, uint32 id, LWLockMode mode)
{
	if (b->nodelocks)
		LWLockAcquire(&b->nodelocks[id], mode);
}

static inline void
node_unlock(HnswBuilder *b, uint32 id)
{
	if (b->nodelocks)
		LWLockRelease(&b->nodelocks[id]);
}

static inline void
indeg_inc(HnswBuilder *b, uint32 id)
{
	if (b->aindeg0)
		pg_atomic_fetch_add_u32(&b->aindeg0[id], 1);
	else
		b->indeg0[id]++;
}

static inline void
indeg_dec(HnswBuilder *b, uint32 id)
{
	if (b->aindeg0)
		pg_atomic_fetch_sub_u32(&b->aindeg0[id], 1);
	else
		b->indeg0[id]--;
}

/* take one from id's in-degree if it is above 1; true if done */
static inline bool
indeg_dec_above_one(HnswBuilder *b, uint32 id)
{
	if (b->aindeg0)
	{
		uint32		old = pg_atomic_read_u32(&b->aindeg0[id]);

		while (old > 1)
		{
			if (pg_atomic_compare_exchange_u32(&b->aindeg0[id], &old, old - 1))
				return true;
		}
		return false;
	}
	if (b->indeg0[id] > 1)
	{
		b->indeg0[id]--;
		return true;
	}
	return false;
}

/*
 * SEARCH-LAYER: the ef nodes of the given layer nearest to q, found from the
 * entry points, into b->found (sorted ascending); returns their count.
 */
static int
search_layer(HnswBuilder *b, uint32 q, GraphCand *eps, int nep, int ef,
			 int layer)
{
	GraphHeap   *cand = &b->cand;
	GraphHeap   *result = &b->result;
	uint32		todo[2 * SEGVEC_MAX_M];
	int			ntodo;
	int			i,
				n;

	if (++b->stamp == 0)
	{
		memset(b->visited, 0, sizeof(uint32) * b->maxn);
		b->stamp = 1;
	}
	cand->count = 0;
	result->count = 0;

	/*
	 * In a parallel build others may have linked q already (from a layer
	 * where it is linked first): it is not its own neighbour
	 */
	if (b->shared)
		b->visited[q] = b->stamp;

	for (i = 0; i < nep; i++)
	{
		b->visited[eps[i].id] = b->stamp;
		cand_heap_push(cand, eps[i].distance, eps[i].id);
		cand_heap_push(result, eps[i].distance, eps[i].id);
		if (result->count > ef)
			cand_heap_pop(result);
	}

	while (cand->count > 0)
	{
		GraphCand	c = cand_heap_pop(cand);
		uint32	   *nbrs;
		int			count,
					max;

		if (result->count >= ef && c.distance > result->items[0].distance)
			break;

		/*
		 * The neighbours not seen yet, into todo; then their distances, the
		 * vector PREFETCH_AHEAD places on prefetched meanwhile.
		 */
		node_lock(b, c.id, LW_SHARED);
		nbrs = neighbors(b, c.id, layer, &count, &max, 0);
		ntodo = 0;
		for (i = 0; i < count; i++)
		{
			uint32		e = nbrs[i];

			if (b->visited[e] == b->stamp)
				continue;
			b->visited[e] = b->stamp;
			todo[ntodo++] = e;
		}
		node_unlock(b, c.id);
		for (i = 0; i < Min(ntodo, PREFETCH_AHEAD); i++)
			prefetch_vector(b, todo[i]);
		for (i = 0; i < ntodo; i++)
		{
			uint32		e = todo[i];
			double		d;

			if (i + PREFETCH_AHEAD < ntodo)
				prefetch_vector(b, todo[i + PREFETCH_AHEAD]);
			if (result->count < ef)
				d = node_distance(b, q, e);
			else
				d = node_distance_below(b, q, e, result->items[0].distance);
			if (result->count < ef || d < result->items[0].distance)
			{
				cand_heap_push(cand, d, e);
				cand_heap_push(result, d, e);
				if (result->count > ef)
					cand_heap_pop(result);
			}
		}
	}

	n = result->count;
	for (i = 0; i < n; i++)
		b->found[i] = result->items[i];
	qsort(b->found, n, sizeof(GraphCand), cand_cmp);
	return n;
}

/*
 * SELECT-NEIGHBORS-HEURISTIC: from candidates sorted by distance to the
 * base node, keep a candidate only if it is nearer to the base than to every
 * candidate kept so far; at most max.  Writes ids to out, returns the count.
 */
static int
select_neighbors(HnswBuilder *b, GraphCand *cands, int ncands, int max,
				 uint32 *out, bool keep_pruned)
{
	int			nout = 0;
	int			npruned = 0;
	int			i,
				j;

	for (i = 0; i < ncands && nout < max; i++)
	{
		bool		good = true;

		for (j = 0; j < nout; j++)
		{
			if (node_distance_below(b, cands[i].id, out[j],
									cands[i].distance) < cands[i].distance)
			{
				good = false;
				break;
			}
		}
		if (good)
			out[nout++] = cands[i].id;
		else
			b->pruned[npruned++] = cands[i].id;
	}

	/*
	 * keepPrunedConnections: fill what is left with the nearest pruned
	 * candidates.  Done for a new node's own list (better connected graphs,
	 * fewer nodes searches cannot reach), not when a full list is pruned to
	 * take a back link: that list would stay full, and every later back
	 * link would prune it again, which triples the build time.
	 */
	for (i = 0; keep_pruned && i < npruned && nout < max; i++)
	{
		uint32		root = dup_root(b, b->pruned[i]);

		/* a copy of a kept vector adds no way out */
		for (j = 0; j < nout; j++)
			if (dup_root(b, out[j]) == root)
				break;
		if (j == nout)
			out[nout++] = b->pruned[i];
	}
	return nout;
}

/* select_neighbors for graphmerge.c */
int
GraphSelectNeighbors(HnswBuilder *b, GraphCand *cands, int ncands, int max,
					 uint32 *out, bool keep_pruned)
{
	return select_neighbors(b, cands, ncands, max, out, keep_pruned);
}

/* is id among the first n entries of list? */
static inline bool
in_list(const uint32 *list, int n, uint32 id)
{
	int			i;

	for (i = 0; i < n; i++)
		if (list[i] == id)
			return true;
	return false;
}

/*
 * Add a link from node e to node q on the layer, pruning e's neighbour list
 * with the heuristic when it is full.
 *
 * On layer 0 the pruning never drops the last link into a node: an old
 * neighbour that the heuristic drops but that no other list points at is
 * kept (in a slot the heuristic freed; failing that, instead of q).  So a
 * node, once linked, stays reachable from the nodes that reach e.
 */
static void
add_link(HnswBuilder *b, uint32 e, uint32 q, double dist_eq, int layer)
{
	int			count,
				max,
				i;
	uint32	   *nbrs;
	GraphCand   *cands = b->selected;
	uint32		kept[2 * SEGVEC_MAX_M + 1];
	int			nkept;
	bool		q_kept;

	node_lock(b, e, LW_EXCLUSIVE);
	nbrs = neighbors(b, e, layer, &count, &max, 1);
	if (in_list(nbrs, count, q))
	{
		node_unlock(b, e);
		return;
	}
	if (count < max)
	{
		nbrs[count] = q;
		store_neighbors(b, e, layer, nbrs, count + 1);
		node_unlock(b, e);
		if (layer == 0)
			indeg_inc(b, q);
		return;
	}

	for (i = 0; i < count; i++)
	{
		cands[i].id = nbrs[i];
		cands[i].distance = node_distance(b, e, nbrs[i]);
	}
	cands[count].id = q;
	cands[count].distance = dist_eq;
	qsort(cands, count + 1, sizeof(GraphCand), cand_cmp);
	nkept = select_neighbors(b, cands, count + 1, max, kept, false);

	if (layer == 0)
	{
		q_kept = in_list(kept, nkept, q);
		for (i = 0; i < count; i++)
		{
			uint32		x = nbrs[i];
			int			j;

			if (in_list(kept, nkept, x))
				continue;
			if (indeg_dec_above_one(b, x))
				continue;
			/* e holds the last link into x: keep it */
			if (nkept < max)
				kept[nkept++] = x;
			else if (q_kept)
			{
				for (j = 0; j < nkept; j++)
					if (kept[j] == q)
						kept[j] = x;
				q_kept = false;
			}
			else
				indeg_dec(b, x);	/* XXX: left to the connectivity repair */
		}
		if (q_kept)
			indeg_inc(b, q);
	}
	store_neighbors(b, e, layer, kept, nkept);
	node_unlock(b, e);
}

/*
 * Insert q, whose vector equals that of the earlier node f, as a
 * duplicate (serial builders only): on layer 0 only, with a copy of f's list, and linked from f in
 * the one slot of f's list that points at f's latest duplicate (that one
 * stays reachable through q's copy).  So k identical vectors form a ring
 * f -> q_k -> ... -> q_1 -> f and take one slot in f's list, not one slot of
 * every neighbour's list each (where they would crowd out every other
 * link and the heuristic could not tell them apart).  Costs no search.
 */
void
GraphInsertDuplicate(HnswBuilder *b, uint32 q, uint32 f)
{
	int			n,
				fn,
				qn,
				max;
	uint32	   *fl = neighbors(b, f, 0, &n, &max, 0);
	uint32	   *ql = neighbors(b, q, 0, &qn, &max, 1);
	int			i,
				slot = -1;

	b->levels[q] = 0;
	b->nduplicates++;

	memcpy(ql, fl, sizeof(uint32) * n);
	qn = n;
	fn = n;
	for (i = 0; i < n; i++)
		b->indeg0[ql[i]]++;

	/* f's link to its latest duplicate, else a free slot, else its farthest */
	for (i = 0; i < n; i++)
		if (b->dupof[fl[i]] == (int32) f)
			slot = i;

	/*
	 * The first duplicate closes the ring: q_1 -> f, so that a search that
	 * enters the chain anywhere (other lists may link any copy) walks all
	 * of it.
	 */
	if (slot < 0)
	{
		int			qslot = qn;

		if (qslot >= b->m0)
		{
			double		far = -1;

			for (i = 0; i < qn; i++)
			{
				double		d = node_distance(b, q, ql[i]);

				if (d > far)
				{
					far = d;
					qslot = i;
				}
			}
			b->indeg0[ql[qslot]]--;
		}
		else
			qn++;
		ql[qslot] = f;
		b->indeg0[f]++;
	}
	if (slot < 0 && n < b->m0)
	{
		slot = n;
		fn = n + 1;
	}
	else if (slot < 0)
	{
		double		far = -1;

		for (i = 0; i < n; i++)
		{
			double		d = node_distance(b, f, fl[i]);

			if (d > far)
			{
				far = d;
				slot = i;
			}
		}
	}
	if (slot < n)
		b->indeg0[fl[slot]]--;
	fl[slot] = q;
	b->indeg0[q]++;
	store_neighbors(b, q, 0, ql, qn);
	store_neighbors(b, f, 0, fl, fn);
}

/* ----------------
 * Public interface
 * ----------------
 */

/*
 * HnswBuilderNodeBytes: memory one doc takes in a builder (for sizing
 * maxdocs from maintenance_work_mem).
 */
Size
HnswBuilderNodeBytes(int dim, int m)
{
	return sizeof(float) * dim + sizeof(SegvecDocInfo) + 1 +
		sizeof(uint32) * 2 * m + sizeof(uint16) + sizeof(uint32) +
		sizeof(uint32) +		/* visited */
		sizeof(uint32) + sizeof(int32) + 1 +	/* indeg0, dupof, reach */
		sizeof(uint32) +		/* queue */
		sizeof(uint32) +		/* insertion order */
		sizeof(uint32) * SEGVEC_UPPER_LIST_SIZE(m) / 4 + 8;
}

/*
 * Ask the kernel to back the whole pages of [p, p + len) with huge pages
 * (transparent huge pages, where the system allows them): the build reads
 * the vectors and lists at random, and with 4 kB pages nearly every read
 * of a vector misses the TLB.  Only a hint; nothing changes if refused.
 */
void
GraphAdviseHugePages(void *p, Size len)
{
#if defined(MADV_HUGEPAGE)
	uintptr_t	start = TYPEALIGN(HUGE_PAGE_BYTES, (uintptr_t) p);
	uintptr_t	end = TYPEALIGN_DOWN(HUGE_PAGE_BYTES, (uintptr_t) p + len);

	if (end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}

/*
 * HnswBuilderCreate: an empty builder for up to maxdocs vectors of dim
 * floats, in its own memory context under the current one.
 */
HnswBuilder *
HnswBuilderCreate(SegvecMetric metric, int dim, int m, int ef_construction,
				  int maxdocs)
{
	MemoryContext ctx;
	MemoryContext oldctx;
	HnswBuilder *b;

	ctx = AllocSetContextCreate(CurrentMemoryContext, "segvec graph build",
								ALLOCSET_DEFAULT_SIZES);
	oldctx = MemoryContextSwitchTo(ctx);

	b = palloc0(sizeof(HnswBuilder));
	b->ctx = ctx;
	GraphBuilderInitCommon(b, metric, dim, m, ef_construction, maxdocs);
	b->vectors = MemoryContextAllocHuge(ctx, mul_size(mul_size(b->maxn, dim),
													  sizeof(float)));
	b->docs = MemoryContextAllocHuge(ctx, mul_size(b->maxn,
												   sizeof(SegvecDocInfo)));
	b->nbr0 = MemoryContextAllocHuge(ctx, mul_size(mul_size(b->maxn, b->m0),
												   sizeof(uint32)));
	GraphAdviseHugePages(b->vectors, sizeof(float) * (Size) b->maxn * dim);
	GraphAdviseHugePages(b->nbr0, sizeof(uint32) * (Size) b->maxn * b->m0);
	b->nnbr0 = MemoryContextAllocHuge(ctx, mul_size(b->maxn, sizeof(uint16)));
	b->visited = MemoryContextAllocHuge(ctx, mul_size(b->maxn, sizeof(uint32)));
	memset(b->visited, 0, sizeof(uint32) * b->maxn);

	MemoryContextSwitchTo(oldctx);
	return b;
}

/*
 * GraphBuilderInitCommon: set up what both kinds of builder have (the
 * per-node arrays levels, upper_off, indeg0 and dupof for maxn nodes, and
 * the search's scratch space), in the current memory context, which must
 * be b->ctx.
 */
void
GraphBuilderInitCommon(HnswBuilder *b, SegvecMetric metric, int dim, int m,
					   int ef_construction, int maxn)
{
	MemoryContext ctx = b->ctx;

	b->metric = metric;
	b->dim = dim;
	b->m = m;
	b->m0 = 2 * m;
	b->ef_construction = ef_construction;
	b->ml = 1.0 / log((double) m);
	b->maxn = Max(maxn, 1);
	b->levels = MemoryContextAllocHuge(ctx, b->maxn);
	b->upper_off = MemoryContextAllocHuge(ctx, mul_size(b->maxn,
														sizeof(uint32)));
	b->indeg0 = MemoryContextAllocHuge(ctx, mul_size(b->maxn, sizeof(uint32)));
	memset(b->indeg0, 0, sizeof(uint32) * b->maxn);
	b->dupof = MemoryContextAllocHuge(ctx, mul_size(b->maxn, sizeof(int32)));
	b->stamp = 0;
	b->entry = -1;
	b->maxlevel = -1;
	b->vid[0] = b->vid[1] = -1;
	pg_prng_seed(&b->rng, 0x5e6f3c);
	GraphInitScratch(b);
}

/*
 * GraphInitScratch: the insertion's scratch space for b (its m0 and
 * ef_construction set), in the current memory context.
 */
void
GraphInitScratch(HnswBuilder *b)
{
	int			ef_construction = b->ef_construction;

	cand_heap_init(&b->cand, Max(ef_construction, b->m0) * 4, false);
	cand_heap_init(&b->result, Max(ef_construction, b->m0) + 2, true);
	b->found = palloc(sizeof(GraphCand) * (Max(ef_construction, b->m0) + 2));
	b->selected = palloc(sizeof(GraphCand) * (b->m0 + 2));
	b->pruned = palloc(sizeof(uint32) * (Max(ef_construction, b->m0) + 2));
	b->backlinks = palloc(sizeof(GraphCand) *
						  (b->m0 + SEGVEC_MAX_LEVEL * b->m));
}

/*
 * GraphNotePeak: remember the memory the builder's context holds now, if
 * it is the most so far (b->peak_bytes; merges report it).
 */
void
GraphNotePeak(HnswBuilder *b)
{
	Size		now = MemoryContextMemAllocated(b->ctx, true);

	b->peak_bytes = Max(b->peak_bytes, now);
}

/*
 * HnswBuilderSetQuantization: write the segment with node records of this
 * SEGVEC_QUANT_* kind (the default is SEGVEC_QUANT_NONE).  The graph itself
 * is built on exact distances either way.
 */
void
HnswBuilderSetQuantization(HnswBuilder *b, int quant)
{
	b->quant = quant;
}

int
HnswBuilderCount(HnswBuilder *b)
{
	return b->n;
}

/*
 * HnswBuilderAdd: store one doc (heap TID and dim floats).  The graph is
 * built by HnswBuilderFinish.  Returns false, storing nothing, when the
 * builder is full.
 */
bool
HnswBuilderAdd(HnswBuilder *b, const SegvecDocInfo *doc, const float *vector)
{
	uint32		q;

	if (b->n >= b->maxn)
		return false;
	q = b->n++;
	memcpy(b->vectors + (Size) q * b->dim, vector, sizeof(float) * b->dim);
	b->docs[q] = *doc;
	return true;
}

/*
 * HnswBuilderSetFilters: the docs carry filter entries for nfilters filter
 * columns (format.h), written to the segment's filter area.  Call before
 * the first HnswBuilderAdd.
 */
void
HnswBuilderSetFilters(HnswBuilder *b, int nfilters)
{
	Assert(b->n == 0);
	b->nfilters = nfilters;
	if (nfilters > 0)
		b->filters = MemoryContextAllocHuge(b->ctx,
											mul_size(b->maxn,
													 SEGVEC_FILTER_ENTRY_BYTES(nfilters)));
}

/*
 * HnswBuilderAddFiltered: HnswBuilderAdd with the doc's filter entry (NULL:
 * every value NULL); the builder must have had HnswBuilderSetFilters.
 */
bool
HnswBuilderAddFiltered(HnswBuilder *b, const SegvecDocInfo *doc,
					   const float *vector, const char *filters)
{
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(b->nfilters);

	if (!HnswBuilderAdd(b, doc, vector))
		return false;
	if (fbytes > 0)
	{
		char	   *to = b->filters + (Size) (b->n - 1) * fbytes;

		if (filters)
			memcpy(to, filters, fbytes);
		else
			memset(to, 0, fbytes);
	}
	return true;
}

/*
 * HnswBuilderKeepLabels: the caller gives the labels of each doc it adds
 * in filter column col, a label array (HnswBuilderAddLabels right after
 * each HnswBuilderAddFiltered, none for a doc without labels), so that
 * the segment can have label postings (format.h).  Call after
 * HnswBuilderSetFilters, before the first doc.
 */
void
HnswBuilderKeepLabels(HnswBuilder *b, int col)
{
	Assert(b->n == 0 && col >= 0 && col < b->nfilters);
	if (b->labels == NULL)
		b->labels = MemoryContextAllocZero(b->ctx,
										   sizeof(GraphLabels) * b->nfilters);
	b->labels[col].known = true;
}

/*
 * HnswBuilderAddLabels: the last doc added has the n labels of hashes
 * hashes (SegvecLabelHash) in column col
 */
void
HnswBuilderAddLabels(HnswBuilder *b, int col, const uint64 *hashes, int n)
{
	MemoryContext oldctx;
	int			i;

	Assert(b->n > 0);
	if (b->labels == NULL || !b->labels[col].known)
		return;
	oldctx = MemoryContextSwitchTo(b->ctx);
	for (i = 0; i < n; i++)
		GraphLabelsAdd(&b->labels[col], hashes[i], (uint32) (b->n - 1));
	MemoryContextSwitchTo(oldctx);
}

/*
 * HnswBuilderForgetLabels: the labels of a doc in column col cannot be
 * known; the segment gets bit postings for it
 */
void
HnswBuilderForgetLabels(HnswBuilder *b, int col)
{
	if (b->labels != NULL)
		GraphLabelsForget(&b->labels[col]);
}

/* HnswBuilderGetFilters: doc i's filter entry, or NULL without filters */
const char *
HnswBuilderGetFilters(HnswBuilder *b, int i)
{
	if (b->nfilters == 0)
		return NULL;
	return b->filters + (Size) i * SEGVEC_FILTER_ENTRY_BYTES(b->nfilters);
}

/*
 * HnswBuilderGetDoc: the stored vector of doc i, and its identity.
 */
const float *
HnswBuilderGetDoc(HnswBuilder *b, int i, SegvecDocInfo *doc)
{
	*doc = b->docs[i];
	return b->vectors + (Size) i * b->dim;
}

/* greedy descent from the entry point through the layers above tolevel: the
 * node nearest q found there */
static GraphCand
descend(HnswBuilder *b, uint32 q, int tolevel)
{
	GraphCand	ep;
	int			layer;

	ep.id = b->entry;
	ep.distance = node_distance(b, q, ep.id);
	for (layer = b->maxlevel; layer > tolevel; layer--)
	{
		bool		changed = true;

		while (changed)
		{
			int			count,
						max,
						i;
			uint32		nbrs[SEGVEC_MAX_M];
			uint32	   *list;

			/* a copy: a parallel build's others may change the list */
			node_lock(b, ep.id, LW_SHARED);
			list = neighbors(b, ep.id, layer, &count, &max, 0);
			memcpy(nbrs, list, sizeof(uint32) * count);
			node_unlock(b, ep.id);

			changed = false;
			for (i = 0; i < count; i++)
			{
				double		d;

				if (i + 1 < count)
					prefetch_vector(b, nbrs[i + 1]);
				if (b->shared && nbrs[i] == q)
					continue;	/* linked by others already (search_layer) */
				d = node_distance_below(b, q, nbrs[i], ep.distance);
				if (d < ep.distance)
				{
					ep.distance = d;
					ep.id = nbrs[i];
					changed = true;
				}
			}
		}
	}
	return ep;
}

/*
 * A parallel build's step of INSERT that makes q's list on the layer: the
 * heuristic's choice from found[0 .. nfound), into sel (returned count).
 * Other participants may have linked q already (a search that reached q
 * from an upper layer, where q is linked first): those links are kept in
 * the slots the choice leaves free, the rest dropped.  All under q's lock.
 */
static int
store_own_list(HnswBuilder *b, uint32 q, int layer, GraphCand *found,
			   int nfound, uint32 *sel)
{
	uint32		out[2 * SEGVEC_MAX_M];
	uint32	   *cur;
	int			max = layer == 0 ? b->m0 : b->m;
	int			nsel,
				ncur,
				nout,
				i;

	nsel = select_neighbors(b, found, nfound, max, sel, true);

	node_lock(b, q, LW_EXCLUSIVE);
	cur = neighbors(b, q, layer, &ncur, &max, 0);
	memcpy(out, sel, sizeof(uint32) * nsel);
	nout = nsel;
	for (i = 0; i < ncur; i++)
	{
		if (in_list(sel, nsel, cur[i]))
			continue;
		if (nout < max)
			out[nout++] = cur[i];
		else if (layer == 0)
			indeg_dec(b, cur[i]);
	}
	if (layer == 0)
		for (i = 0; i < nsel; i++)
			if (!in_list(cur, ncur, sel[i]))
				indeg_inc(b, sel[i]);
	store_neighbors(b, q, layer, out, nout);
	node_unlock(b, q);
	return nsel;
}

/*
 * Choose node q's lists anew on its upper layers (1 .. its level), as an
 * insert does, and link back to it: for a merge's seed node whose upper
 * lists lost neighbours to tombstones (layer 0 has its own repair,
 * graphmerge.c).  Without it the upper layers thin out merge after merge
 * under deletes and updates, and the descent lands far from rows that the
 * layer-0 search then does not reach at the usual ef_search.  q is in the
 * graph already, so the searches leave it out of what they find.  Serial
 * builders only (a merge).
 */
void
GraphRelinkUpper(HnswBuilder *b, uint32 q, GraphCand *eps)
{
	int			level = b->levels[q];
	int			layer;
	int			neps;

	Assert(b->shared == NULL);
	if (level < 1 || b->entry < 0 || b->dupof[q] >= 0)
		return;
	eps[0] = descend(b, q, level);
	neps = 1;
	for (layer = Min(level, b->maxlevel); layer >= 1; layer--)
	{
		int			nfound;
		int			count,
					max,
					i,
					k;
		uint32	   *nbrs;
		uint32		sel[2 * SEGVEC_MAX_M];

		nfound = search_layer(b, q, eps, neps, b->ef_construction, layer);
		for (i = 0, k = 0; i < nfound; i++)
			if (b->found[i].id != q)
				b->found[k++] = b->found[i];
		nfound = k;
		if (nfound == 0)
			break;
		nbrs = neighbors(b, q, layer, &count, &max, 0);
		count = select_neighbors(b, b->found, nfound, max, sel, true);
		memcpy(nbrs, sel, sizeof(uint32) * count);
		store_neighbors(b, q, layer, nbrs, count);
		for (i = 0; i < count; i++)
		{
			double		d = 0;

			for (k = 0; k < nfound; k++)
				if (b->found[k].id == sel[i])
				{
					d = b->found[k].distance;
					break;
				}
			add_link(b, sel[i], q, d, layer);
		}
		memcpy(eps, b->found, sizeof(GraphCand) * nfound);
		neps = nfound;
	}
}

/*
 * Insert stored doc q into the graph (INSERT, algorithm 1).  Its level
 * (b->levels[q]) and upper-layer lists (empty, in flat_upper) are set up
 * already; its layer-0 list is empty.  The b->nhints nodes of b->hints
 * (nodes of the graph the caller knows to be near q; none but in a merge)
 * join the entry points of every layer they are on, so eps must have room
 * for Max(ef_construction, m0) + 2 + nhints entries.
 */
void
GraphInsertNode(HnswBuilder *b, uint32 q, GraphCand *eps)
{
	int			level;
	int			layer;
	GraphCand	ep;
	int			neps;
	int			top;
	int			nback;
	int			nlinks[SEGVEC_MAX_LEVEL + 1];
	uint32		sel[2 * SEGVEC_MAX_M];
	int			i;

	b->visited[q] = 0;

	if (b->dupof[q] >= 0)
	{
		GraphInsertDuplicate(b, q, (uint32) b->dupof[q]);
		return;
	}

	level = b->levels[q];
	if (b->shared)
	{
		LWLockAcquire(&b->shared->entry_lock, LW_SHARED);
		b->entry = b->shared->entry;
		b->maxlevel = b->shared->maxlevel;
		LWLockRelease(&b->shared->entry_lock);
	}
	if (b->entry < 0)
	{
		b->entry = q;
		b->maxlevel = level;
		return;
	}

	/* greedy descent through the layers above the new node's level */
	ep = descend(b, q, level);

	/*
	 * q's own list on every layer from min(level, maxlevel) down to 0,
	 * then the links back to q on all of them.  No one can reach q before
	 * its back links exist, so in a parallel build no search enters q on
	 * an upper layer while its lists below are still empty (a search that
	 * descended into it would start layer 0 from a node without
	 * neighbours, find nothing else, and give its node a list of one).
	 * A serial build's graph is the same in either order: a back link
	 * changes a list of its own layer only, and the search of the layer
	 * below reads none of those.
	 */
	eps[0] = ep;
	neps = 1;
	top = Min(level, b->maxlevel);
	nback = 0;
	for (i = 0; i < b->nhints; i++)
		b->hintdist[i] = node_distance(b, q, b->hints[i]);
	for (layer = top; layer >= 0; layer--)
	{
		int			nfound;
		int			count,
					max;
		uint32	   *nbrs;

		/* the hints that are on this layer join the entry points */
		for (i = 0; i < b->nhints; i++)
		{
			int			j;

			if (b->levels[b->hints[i]] < layer)
				continue;
			for (j = 0; j < neps; j++)
				if (eps[j].id == b->hints[i])
					break;
			if (j < neps)
				continue;
			eps[neps].id = b->hints[i];
			eps[neps++].distance = b->hintdist[i];
		}
		nfound = search_layer(b, q, eps, neps, b->ef_construction, layer);
		if (b->shared)
		{
			count = store_own_list(b, q, layer, b->found, nfound, sel);
			nbrs = sel;
		}
		else
		{
			nbrs = neighbors(b, q, layer, &count, &max, 0);
			count = select_neighbors(b, b->found, nfound, max, nbrs, true);
			store_neighbors(b, q, layer, nbrs, count);
			if (layer == 0)
				for (i = 0; i < count; i++)
					b->indeg0[nbrs[i]]++;
		}

		nlinks[layer] = count;
		for (i = 0; i < count; i++)
		{
			double		d = 0;
			int			j;

			for (j = 0; j < nfound; j++)
			{
				if (b->found[j].id == nbrs[i])
				{
					d = b->found[j].distance;
					break;
				}
			}
			b->backlinks[nback].id = nbrs[i];
			b->backlinks[nback++].distance = d;
		}

		/* the found nodes are the next layer's entry points */
		memcpy(eps, b->found, sizeof(GraphCand) * nfound);
		neps = nfound;
	}

	/* the links back to q, top layer first */
	nback = 0;
	for (layer = top; layer >= 0; layer--)
	{
		for (i = 0; i < nlinks[layer]; i++, nback++)
			add_link(b, b->backlinks[nback].id, q,
					 b->backlinks[nback].distance, layer);
	}

	if (level > b->maxlevel && b->shared)
	{
		LWLockAcquire(&b->shared->entry_lock, LW_EXCLUSIVE);
		if (level > b->shared->maxlevel)
		{
			b->shared->maxlevel = level;
			b->shared->entry = q;
		}
		LWLockRelease(&b->shared->entry_lock);
	}
	else if (level > b->maxlevel)
	{
		b->maxlevel = level;
		b->entry = q;
	}
}

/* compare (doc id, position) pairs by doc id */
static int
pair_cmp(const void *a, const void *b)
{
	uint64		da = ((const uint64 *) a)[0];
	uint64		db = ((const uint64 *) b)[0];

	return da < db ? -1 : (da > db ? 1 : 0);
}

/*
 * Put the docs in doc id order (the doc area of a segment is sorted, for
 * binary search).  They usually are already; else sort (doc, position)
 * pairs and move the vectors along the permutation's cycles, one spare
 * vector at a time.
 */
static void
sort_by_docid(HnswBuilder *b)
{
	SegvecDocInfo *sorted;
	uint32	   *from;
	bool	   *done;
	float	   *spare;
	int			i;

	for (i = 1; i < b->n; i++)
		if (b->docs[i - 1].docid > b->docs[i].docid)
			break;
	if (i >= b->n)
		return;

	sorted = MemoryContextAllocHuge(b->ctx, mul_size(b->n, sizeof(SegvecDocInfo)));
	from = MemoryContextAllocHuge(b->ctx, mul_size(b->n, sizeof(uint32)));

	/* sort (doc id, position) pairs */
	{
		uint64	   *keys = MemoryContextAllocHuge(b->ctx, mul_size(b->n, sizeof(uint64) * 2));

		for (i = 0; i < b->n; i++)
		{
			keys[2 * i] = b->docs[i].docid;
			keys[2 * i + 1] = i;
		}
		qsort(keys, b->n, sizeof(uint64) * 2, pair_cmp);
		for (i = 0; i < b->n; i++)
		{
			from[i] = (uint32) keys[2 * i + 1];
			sorted[i] = b->docs[from[i]];
		}
		pfree(keys);
	}
	memcpy(b->docs, sorted, sizeof(SegvecDocInfo) * b->n);
	pfree(sorted);

	/* filter entries: position i gets the entry now at from[i] */
	if (b->nfilters > 0)
	{
		Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(b->nfilters);
		char	   *fsorted = MemoryContextAllocHuge(b->ctx,
													 mul_size(b->n, fbytes));

		for (i = 0; i < b->n; i++)
			memcpy(fsorted + (Size) i * fbytes,
				   b->filters + (Size) from[i] * fbytes, fbytes);
		memcpy(b->filters, fsorted, fbytes * b->n);
		pfree(fsorted);
	}

	/* labels: the doc at from[i] is node i */
	if (b->labels != NULL)
	{
		uint32	   *to = MemoryContextAllocHuge(b->ctx,
												mul_size(b->n, sizeof(uint32)));
		int			c;

		for (i = 0; i < b->n; i++)
			to[from[i]] = i;
		for (c = 0; c < b->nfilters; c++)
		{
			uint32		j;

			for (j = 0; j < b->labels[c].npairs; j++)
				b->labels[c].pairs[j].node = to[b->labels[c].pairs[j].node];
		}
		pfree(to);
	}

	/* vectors: position i must receive the vector now at from[i] */
	done = palloc0(sizeof(bool) * b->n);
	spare = palloc(sizeof(float) * b->dim);
	for (i = 0; i < b->n; i++)
	{
		int			j;

		if (done[i] || from[i] == (uint32) i)
			continue;
		memcpy(spare, b->vectors + (Size) i * b->dim, sizeof(float) * b->dim);
		j = i;
		for (;;)
		{
			int			k = from[j];

			done[j] = true;
			if (k == i)
			{
				memcpy(b->vectors + (Size) j * b->dim, spare,
					   sizeof(float) * b->dim);
				break;
			}
			memcpy(b->vectors + (Size) j * b->dim,
				   b->vectors + (Size) k * b->dim, sizeof(float) * b->dim);
			j = k;
		}
	}
	pfree(done);
	pfree(spare);
	pfree(from);
}

/*
 * Find exact duplicates: b->dupof[i] = the first node whose vector is the
 * same as node i's, or -1.  An open-addressing table keyed by the docs'
 * vector checksums (XXH3 of the floats), confirmed with memcmp.
 */
static void
find_duplicates(HnswBuilder *b)
{
	uint32		size = 16;
	int32	   *slots;
	int			i;

	while (size < (uint32) b->n * 2 && size < (1U << 31))
		size <<= 1;
	slots = MemoryContextAllocHuge(b->ctx, mul_size(size, sizeof(int32)));
	memset(slots, 0xFF, sizeof(int32) * size);

	for (i = 0; i < b->n; i++)
	{
		uint64		h = b->docs[i].checksum;
		uint32		pos = (uint32) (h ^ (h >> 32)) & (size - 1);
		const float *v = b->vectors + (Size) i * b->dim;

		b->dupof[i] = -1;
		for (;;)
		{
			int32		j = slots[pos];

			if (j < 0)
			{
				slots[pos] = i;
				break;
			}
			if (b->docs[j].checksum == h &&
				memcmp(b->vectors + (Size) j * b->dim, v,
					   sizeof(float) * b->dim) == 0)
			{
				b->dupof[i] = j;
				break;
			}
			pos = (pos + 1) & (size - 1);
		}
	}
	pfree(slots);
}

/*
 * Mark every node reachable on layer 0 from start in b->reach (breadth
 * first); returns how many were newly marked.
 */
static int64
mark_reachable(HnswBuilder *b, uint32 start)
{
	int64		head = 0,
				tail = 0;

	if (b->reach[start])
		return 0;
	b->reach[start] = 1;
	b->queue[tail++] = start;
	while (head < tail)
	{
		uint32		id = b->queue[head++];
		int			count,
					max,
					i;
		uint32	   *nbrs = neighbors(b, id, 0, &count, &max, 0);

		if ((head & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		for (i = 0; i < count; i++)
		{
			if (!b->reach[nbrs[i]])
			{
				b->reach[nbrs[i]] = 1;
				b->queue[tail++] = nbrs[i];
			}
		}
	}
	return tail;
}

/*
 * Give node u, which no walk from the entry point reaches yet, an in-link
 * from node r, which one does.  In a free slot of r's layer-0 list if it
 * has one; otherwise u takes the slot of r's farthest neighbour x and x
 * goes into u's list (a free slot, else in place of u's farthest
 * neighbour), so that x stays reachable through r -> u -> x.  Nothing that
 * was reachable stops being so: the only links dropped are r -> x, which
 * r -> u -> x replaces, and one of u's, which no walk from the entry point
 * used (u was unreachable).  A replaced link cannot be judged by in-degree
 * alone: on clustered data the farthest neighbour is often the one link
 * into another cluster, whose nodes all have other in-links, from each
 * other, so dropping it cut the whole cluster off.
 */
static void
link_from_reachable(HnswBuilder *b, uint32 r, uint32 u)
{
	uint32	   *rl;
	uint32	   *ul;
	uint32		x;
	int			rcount,
				rmax,
				ucount,
				umax,
				i,
				slot;
	double		far;

	rl = neighbors(b, r, 0, &rcount, &rmax, 1);
	if (rcount < b->m0)
	{
		rl[rcount++] = u;
		store_neighbors(b, r, 0, rl, rcount);
		b->indeg0[u]++;
		return;
	}
	slot = 0;
	far = -1;
	for (i = 0; i < rcount; i++)
	{
		double		d = node_distance(b, r, rl[i]);

		if (d > far)
		{
			far = d;
			slot = i;
		}
	}
	x = rl[slot];
	rl[slot] = u;
	store_neighbors(b, r, 0, rl, rcount);
	b->indeg0[u]++;

	/* x loses its in-link from r and gets one from u */
	ul = neighbors(b, u, 0, &ucount, &umax, 1);
	for (i = 0; i < ucount; i++)
		if (ul[i] == x)
		{
			b->indeg0[x]--;
			return;
		}
	if (ucount < b->m0)
		ul[ucount++] = x;
	else
	{
		slot = 0;
		far = -1;
		for (i = 0; i < ucount; i++)
		{
			double		d = node_distance(b, u, ul[i]);

			if (d > far)
			{
				far = d;
				slot = i;
			}
		}
		b->indeg0[ul[slot]]--;
		ul[slot] = x;
	}
	store_neighbors(b, u, 0, ul, ucount);
}

/*
 * Connectivity repair (as NSG's builder does): link every node that is not
 * reachable from the entry point on layer 0 from the nearest reachable node
 * a search finds for it (link_from_reachable: one with a free slot among
 * the nearest eight, else the nearest; the entry point when the search
 * finds none), then mark what it reaches.  A link never cuts off what was
 * reachable, so one pass reaches every node; the next one finds nothing to
 * do (a few passes are allowed all the same).
 */
void
GraphRepairConnectivity(HnswBuilder *b, GraphCand *eps)
{
	int			pass;

	if (b->entry < 0)
		return;
	b->reach = MemoryContextAllocHuge(b->ctx, b->n);
	b->queue = MemoryContextAllocHuge(b->ctx, mul_size(b->n, sizeof(uint32)));

	for (pass = 0; pass < 4; pass++)
	{
		int64		nreached;
		int			u;

		memset(b->reach, 0, b->n);
		nreached = mark_reachable(b, b->entry);
		if (nreached == b->n)
			break;

		for (u = 0; u < b->n; u++)
		{
			GraphCand	ep;
			int			nfound,
						i,
						best = -1;
			uint32		r;

			if (b->reach[u])
				continue;
			CHECK_FOR_INTERRUPTS();

			ep = descend(b, u, 0);
			eps[0] = ep;
			nfound = search_layer(b, u, eps, 1, b->ef_construction, 0);

			/* the nearest reachable node with a free slot, among the nearest */
			for (i = 0; i < nfound && i < 8; i++)
			{
				int			rc,
							rcmax;

				if (b->found[i].id == (uint32) u || !b->reach[b->found[i].id])
					continue;
				if (best < 0)
					best = i;
				(void) neighbors(b, b->found[i].id, 0, &rc, &rcmax, 1);
				if (rc < b->m0)
				{
					best = i;
					break;
				}
			}
			r = best >= 0 ? b->found[best].id : (uint32) b->entry;
			link_from_reachable(b, r, u);
			b->nrepaired++;
			mark_reachable(b, u);
		}
	}
	if (b->nduplicates > 0 || b->nrepaired > 0)
		elog(DEBUG1, "segvec graph build: %d docs, " INT64_FORMAT " exact duplicates chained, " INT64_FORMAT " links added to reach every node",
			 b->n, b->nduplicates, b->nrepaired);
}

/*
 * HnswBuilderFinish: build the graph over every stored doc, inserted in a
 * random order (GraphShuffleInsertion), exact duplicates last.  progress,
 * if not NULL, is called every 1,000 docs with the number inserted so far,
 * and once at the end.
 */
void
HnswBuilderFinish(HnswBuilder *b, void (*progress) (int done))
{
	MemoryContext oldctx = MemoryContextSwitchTo(b->ctx);
	GraphCand   *eps = palloc(sizeof(GraphCand) * (Max(b->ef_construction, b->m0) + 2));
	int			i;

	GraphPrepareInsert(b);
	for (i = 0; i < b->norder; i++)
	{
		CHECK_FOR_INTERRUPTS();
		GraphInsertNode(b, b->order[i], eps);
		if (progress && (i + 1) % 1000 == 0)
			progress(i + 1);
	}
	pfree(b->order);
	b->order = NULL;

	GraphFinishInsert(b, eps, progress);
	pfree(eps);
	MemoryContextSwitchTo(oldctx);
}

/*
 * GraphFinishInsert: after the nodes of the insertion order, the
 * duplicates, in order, each from its first node's list; then the
 * connectivity repair (serial and parallel builds).
 */
void
GraphFinishInsert(HnswBuilder *b, GraphCand *eps, void (*progress) (int done))
{
	int			i;

	for (i = 0; i < b->n; i++)
	{
		if (b->dupof[i] >= 0)
		{
			CHECK_FOR_INTERRUPTS();
			GraphInsertDuplicate(b, i, (uint32) b->dupof[i]);
		}
	}
	if (progress)
		progress(b->n);
	GraphRepairConnectivity(b, eps);
}

/*
 * GraphShuffleInsertion: b->order (allocated in the current memory context)
 * and b->norder: the nodes that are neither in the graph already (a merge's
 * seed) nor duplicates of an earlier node, in a random order drawn from
 * b->rng (Fisher-Yates).  The caller inserts them in that order and the
 * duplicates afterwards (each copies its first node's list).
 *
 * Doc id order is the table's physical order, often grouped by cluster
 * (rows loaded one source, tenant or topic after another): inserted so,
 * each cluster is built before the next exists, its nodes link only among
 * themselves and to the few nodes of earlier clusters that the descent of
 * its first inserts happened to reach, and on the upper layers a cluster
 * without a node of the top layers is reached from a handful of links or
 * none.  The search's greedy descent then lands in another cluster, which
 * layer 0 at the usual ef_search does not leave.  A random order gives
 * every cluster links from the others as the graph grows (the analysis of
 * HNSW assumes one).
 */
void
GraphShuffleInsertion(HnswBuilder *b)
{
	int			i;
	int			n = 0;

	b->order = MemoryContextAllocHuge(CurrentMemoryContext,
									  mul_size(Max(b->n, 1), sizeof(uint32)));
	for (i = 0; i < b->n; i++)
	{
		if (b->dupof[i] >= 0 ||
			(b->seeded && ((b->seeded[i >> 3] >> (i & 7)) & 1)))
			continue;
		b->order[n++] = (uint32) i;
	}
	for (i = n - 1; i > 0; i--)
	{
		int			j = (int) pg_prng_uint64_range(&b->rng, 0, (uint64) i);
		uint32		t = b->order[i];

		b->order[i] = b->order[j];
		b->order[j] = t;
	}
	b->norder = n;
}

/*
 * GraphPrepareInsert: what comes before the insertions of an in-memory
 * builder's docs (in b->ctx): docs in doc id order, ip's extra coordinate,
 * duplicates found, every node's level and its empty lists, and the
 * insertion order (GraphShuffleInsertion).
 */
void
GraphPrepareInsert(HnswBuilder *b)
{
	Size		upper = 0;
	int			i;

	sort_by_docid(b);
	GraphComputeExtra(b);
	find_duplicates(b);

	/*
	 * Levels first (a duplicate gets none of its own: it joins a ring on
	 * layer 0), drawn in insertion order, then the upper-layer lists of all
	 * nodes back to back, as the segment stores them.
	 */
	for (i = 0; i < b->n; i++)
	{
		int			level = 0;

		if (b->dupof[i] < 0)
		{
			level = (int) floor(-log(1.0 - pg_prng_double(&b->rng)) * b->ml);
			level = Min(level, SEGVEC_MAX_LEVEL);
		}
		b->levels[i] = level;
		b->upper_off[i] = upper;
		upper += (Size) level * SEGVEC_UPPER_LIST_SIZE(b->m);
		b->nnbr0[i] = 0;
	}
	b->upper_size = upper;
	b->flat_upper = MemoryContextAllocHuge(b->ctx,
										   mul_size(Max(upper, 1),
													sizeof(uint32)));
	memset(b->flat_upper, 0, sizeof(uint32) * upper);
	GraphShuffleInsertion(b);
}

/*
 * GraphComputeExtra: for ip, each node's extra coordinate (see
 * node_distance), from every node's vector; nothing for other metrics.
 */
void
GraphComputeExtra(HnswBuilder *b)
{
	double		maxnorm2 = 0;
	int			i;

	if (b->metric != SEGVEC_METRIC_IP)
		return;
	b->extra = MemoryContextAllocHuge(b->ctx, mul_size(Max(b->n, 1), sizeof(float)));
	for (i = 0; i < b->n; i++)
	{
		const float *v = builder_vector(b, i, 0);
		double		n2 = SegvecDotKernel(v, v, b->dim);

		b->extra[i] = (float) n2;
		maxnorm2 = Max(maxnorm2, n2);
	}
	for (i = 0; i < b->n; i++)
		b->extra[i] = (float) sqrt(Max(maxnorm2 - b->extra[i], 0.0));
}

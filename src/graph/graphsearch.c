/*-------------------------------------------------------------------------
 *
 * graphsearch.c
 *	  Searching and reading an immutable segment.
 *
 * Segment pages never change after install except the tombstone pages, so
 * node, TID and upper-layer pages are read with a pin and no content lock.
 * Tombstone pages are copied under a share lock when a scan starts.
 *
 * A search descends the upper layers greedily from the entry point, then
 * runs SEARCH-LAYER (Malkov & Yashunin, algorithm 2) on layer 0 with
 * ef = segvec.ef_search, incrementally, for as long as the caller asks:
 * the scan holds every discovered live node it has not returned, the ef
 * nearest of them in a sorted window and the rest in a heap; it returns
 * the window's nearest once the search has settled for the window (no
 * unexpanded candidate is nearer than the window's farthest, algorithm 2's
 * stopping rule), and goes on expanding when it has not.  So results come
 * out in non-decreasing distance as far as the graph search can tell, each
 * costs work in proportion to what it discovers, and no discovered doc is
 * ever dropped: one found after a farther one was returned (which takes a
 * path through farther nodes) is returned next.  A scan stops expanding
 * once it has computed segvec.max_scan_tuples distances over all its
 * segments (GraphScanBudget); it then returns what it holds, in order.
 *
 * The searches of one scan may share a bound (GraphScanBound): the k-th
 * smallest distance of the live docs found by any of them.  A bounded
 * search also stops expanding when nothing it holds is within the bound,
 * its nearest unexpanded candidate is farther than the bound, and its own
 * nearest few held nodes are settled; it then answers GRAPH_SCAN_BOUNDED
 * with a distance no row it returns later is nearer than (as far as the
 * search can tell), and keeps its state whole, so once the bound is lifted
 * it goes on exactly where an unbounded search would have been.
 *
 * src/graph/graphsearch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "graph/candheap.h"
#include "graph/graph.h"
#include "store/store.h"

int			segvec_exact_scan_factor = 16;

struct GraphScan
{
	Relation	index;
	SegvecSegment seg;
	SegvecMetric metric;
	int			dim;
	const float *query;
	int			ef;
	int			m0;

	uint8	   *visited;		/* bitmap: distance computed */
	uint8	   *emitted;		/* bitmap: returned or skipped */
	uint8	   *tombstones;		/* bitmap copied at start */

	GraphHeap	cand;			/* min-heap: discovered, not expanded */
	GraphCand  *window;			/* the ef nearest held nodes, ascending */
	int			nwindow;
	GraphHeap	overflow;		/* min-heap: the other held nodes */
	double		last;			/* distance last returned */
	int64		nreturned;		/* nodes returned from graph mode */
	GraphScanBudget *budget;	/* distances this scan may still compute */
	GraphScanBound *bound;		/* shared k-th distance, or NULL */
	int			bound_floor;	/* the bound never stops the search before
								 * this many nearest held are settled */

	/* exact mode: every live node scored, ascending */
	bool		exact;
	int64		exact_limit;	/* switch to exact mode up to this size */
	GraphCand  *ranked;
	uint32		nranked;
	uint32		rankpos;

	char	   *nodebuf;		/* for nodes that span pages */
	Buffer		buf;			/* pinned page, or InvalidBuffer */
};

#define BIT_IS_SET(map, i)	(((map)[(i) >> 3] >> ((i) & 7)) & 1)
#define BIT_SET(map, i)		((map)[(i) >> 3] |= (uint8) (1 << ((i) & 7)))

/* Release a page read by read_block, checking it once more on a standby */
static void
release_block(Relation index, const SegvecSegment *seg, Buffer *buf)
{
	if (!BufferIsValid(*buf))
		return;
	if (RecoveryInProgress())
		GraphCheckPage(index, seg, *buf, false);
	ReleaseBuffer(*buf);
	*buf = InvalidBuffer;
}

/*
 * Pin block blkno of seg and return its data area, after checking (on a
 * standby) that it is still a page of seg; keeps one page pinned between
 * calls so neighbouring reads of the same page cost nothing.
 */
static char *
read_block(Relation index, const SegvecSegment *seg, Buffer *buf,
		   BlockNumber blkno)
{
	if (!BufferIsValid(*buf) || BufferGetBlockNumber(*buf) != blkno)
	{
		release_block(index, seg, buf);
		*buf = ReadBuffer(index, blkno);
		/* on a primary nothing reuses the page while a scan can reach it */
		if (RecoveryInProgress())
			GraphCheckPage(index, seg, *buf, false);
	}
	return PageGetContents(BufferGetPage(*buf));
}

/* The record of node id: header, layer-0 neighbours, vector */
static const char *
read_node(GraphScan *gs, uint32 id)
{
	const SegvecSegment *seg = &gs->seg;

	if (seg->nodes_per_page > 0)
	{
		char	   *data = read_block(gs->index, seg, &gs->buf,
									  seg->node_start + id / seg->nodes_per_page);

		return data + (Size) (id % seg->nodes_per_page) * seg->node_size;
	}
	else
	{
		BlockNumber blk = seg->node_start + id * seg->pages_per_node;
		Size		done = 0;

		while (done < seg->node_size)
		{
			Size		len = Min(SEGVEC_SEGPAGE_USABLE, seg->node_size - done);

			memcpy(gs->nodebuf + done,
				   read_block(gs->index, seg, &gs->buf, blk++), len);
			done += len;
		}
		return gs->nodebuf;
	}
}

static inline const float *
node_vector(const GraphScan *gs, const char *rec)
{
	return (const float *) (rec + sizeof(SegvecNodeHeader) +
							sizeof(uint32) * gs->m0);
}

static inline const uint32 *
node_neighbors(const char *rec, int *count)
{
	*count = ((const SegvecNodeHeader *) rec)->nneighbors;
	return (const uint32 *) (rec + sizeof(SegvecNodeHeader));
}

/* distance for navigation: NaN counts as farthest */
static inline double
nav_distance(GraphScan *gs, const float *v)
{
	double		d = SegvecDistance(gs->metric, gs->query, v, gs->dim);

	return isnan(d) ? get_float8_infinity() : d;
}

static double
distance_to(GraphScan *gs, uint32 id)
{
	return nav_distance(gs, node_vector(gs, read_node(gs, id)));
}

/* Read entry pos of the upper-layer area */
static uint32
read_upper(GraphScan *gs, Size pos)
{
	const SegvecSegment *seg = &gs->seg;
	char	   *data = read_block(gs->index, seg, &gs->buf,
								  seg->upper_start + pos / SEGVEC_UPPER_PER_PAGE);

	return ((uint32 *) data)[pos % SEGVEC_UPPER_PER_PAGE];
}

/*
 * GraphReadDocs: the doc-area entries of nodes first .. first + count - 1.
 */
void
GraphReadDocs(Relation index, const SegvecSegment *seg, uint32 first,
			  uint32 count, SegvecDocInfo *docs)
{
	Buffer		buf = InvalidBuffer;
	uint32		i;

	for (i = 0; i < count; i++)
	{
		uint32		node = first + i;
		char	   *data = read_block(index, seg, &buf,
									  seg->doc_start + node / SEGVEC_DOCS_PER_PAGE);

		memcpy(&docs[i],
			   data + (node % SEGVEC_DOCS_PER_PAGE) * sizeof(SegvecDocInfo),
			   sizeof(SegvecDocInfo));
	}
	release_block(index, seg, &buf);
}

/*
 * GraphFindDoc: the node holding doc id docid, or -1 (binary search of the
 * sorted doc area).
 */
int64
GraphFindDoc(Relation index, const SegvecSegment *seg, uint64 docid)
{
	int64		lo = 0,
				hi = (int64) seg->ndocs - 1;

	if (seg->ndocs == 0 || docid < seg->min_docid || docid > seg->max_docid)
		return -1;
	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		SegvecDocInfo doc;

		GraphReadDocs(index, seg, (uint32) mid, 1, &doc);
		if (doc.docid == docid)
			return mid;
		if (doc.docid < docid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * GraphReadVector: copy node's vector (dim floats) into vector.
 */
void
GraphReadVector(Relation index, const SegvecSegment *seg, uint32 node,
				int dim, float *vector)
{
	GraphScan	gs;

	memset(&gs, 0, sizeof(gs));
	gs.index = index;
	gs.seg = *seg;
	gs.dim = dim;
	gs.m0 = 2 * seg->m;
	gs.buf = InvalidBuffer;
	if (seg->pages_per_node > 0)
		gs.nodebuf = palloc(seg->node_size);
	memcpy(vector, node_vector(&gs, read_node(&gs, node)), sizeof(float) * dim);
	release_block(index, seg, &gs.buf);
	if (gs.nodebuf)
		pfree(gs.nodebuf);
}

/*
 * GraphForEachNode: call callback for every node not in tombstones (may be
 * NULL), in node (= doc id) order, with its doc-area entry and vector.
 */
void
GraphForEachNode(Relation index, const SegvecSegment *seg, int dim,
				 const uint8 *tombstones, SegvecDocCallback callback,
				 void *arg)
{
	GraphScan	gs;
	uint32		i;
	SegvecDocInfo doc;

	memset(&gs, 0, sizeof(gs));
	gs.index = index;
	gs.seg = *seg;
	gs.dim = dim;
	gs.m0 = 2 * seg->m;
	gs.buf = InvalidBuffer;
	if (seg->pages_per_node > 0)
		gs.nodebuf = palloc(seg->node_size);

	for (i = 0; i < seg->ndocs; i++)
	{
		if (tombstones && BIT_IS_SET(tombstones, i))
			continue;
		CHECK_FOR_INTERRUPTS();
		GraphReadDocs(index, seg, i, 1, &doc);
		callback(&doc, node_vector(&gs, read_node(&gs, i)), dim, arg);
	}
	release_block(index, seg, &gs.buf);
	if (gs.nodebuf)
		pfree(gs.nodebuf);
}

/*
 * GraphCountUnreachable: how many live nodes (not in tombstones, which may
 * be NULL) no search can reach: nodes that a breadth-first walk of layer 0
 * from the entry point, through every node (tombstoned ones too, as
 * searches go), never meets.  *first gets the lowest such node, or -1.
 * Reads each node page once per node, with a pin only.
 */
int64
GraphCountUnreachable(Relation index, const SegvecSegment *seg,
					  const uint8 *tombstones, int64 *first)
{
	GraphScan	gs;
	uint8	   *seen;
	uint32	   *queue;
	uint32		head = 0,
				tail = 0,
				i;
	int64		unreached = 0;

	*first = -1;
	if (seg->ndocs == 0 || seg->entry_point < 0)
		return 0;

	memset(&gs, 0, sizeof(gs));
	gs.index = index;
	gs.seg = *seg;
	gs.m0 = 2 * seg->m;
	gs.buf = InvalidBuffer;
	if (seg->pages_per_node > 0)
		gs.nodebuf = palloc(seg->node_size);
	seen = palloc0((seg->ndocs + 7) / 8 + 1);
	queue = MemoryContextAllocHuge(CurrentMemoryContext,
								   sizeof(uint32) * seg->ndocs);

	BIT_SET(seen, (uint32) seg->entry_point);
	queue[tail++] = (uint32) seg->entry_point;
	while (head < tail)
	{
		const uint32 *nbrs;
		int			count;
		int			k;

		if ((head & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		nbrs = node_neighbors(read_node(&gs, queue[head++]), &count);
		count = Min(count, gs.m0);
		for (k = 0; k < count; k++)
		{
			uint32		e = nbrs[k];

			if (e < seg->ndocs && !BIT_IS_SET(seen, e))
			{
				BIT_SET(seen, e);
				queue[tail++] = e;
			}
		}
	}
	for (i = 0; i < seg->ndocs; i++)
	{
		if (BIT_IS_SET(seen, i) || (tombstones && BIT_IS_SET(tombstones, i)))
			continue;
		if (*first < 0)
			*first = i;
		unreached++;
	}
	release_block(index, seg, &gs.buf);
	pfree(seen);
	pfree(queue);
	return unreached;
}

/*
 * Exact mode: score every live node not yet returned, sort, and return
 * them in order from there on.  Nodes nearer than the last one returned
 * (which the graph search missed) come first: late, never dropped.
 */
static void
start_exact(GraphScan *gs)
{
	uint32		i;

	gs->ranked = MemoryContextAllocHuge(CurrentMemoryContext,
										sizeof(GraphCand) * Max(gs->seg.ndocs, 1));
	gs->nranked = 0;
	for (i = 0; i < gs->seg.ndocs; i++)
	{
		if (BIT_IS_SET(gs->tombstones, i) || BIT_IS_SET(gs->emitted, i))
			continue;
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		gs->ranked[gs->nranked].id = i;
		gs->ranked[gs->nranked].distance = distance_to(gs, i);
		gs->nranked++;
	}
	/* on a standby, every page the scores came from checked again */
	if (RecoveryInProgress())
		release_block(gs->index, &gs->seg, &gs->buf);
	qsort(gs->ranked, gs->nranked, sizeof(GraphCand), cand_cmp);
	gs->rankpos = 0;
	gs->exact = true;
}

/*
 * GraphBoundInit: an empty, active bound on the k (>= 1) smallest
 * distances, allocated in the current memory context.
 */
void
GraphBoundInit(GraphScanBound *bound, int k)
{
	bound->active = true;
	bound->k = Max(k, 1);
	bound->count = 0;
	bound->heap = palloc(sizeof(double) * bound->k);
}

/*
 * GraphBoundOffer: a live doc at distance was found; keep it if it is among
 * the k smallest offered so far.  NaN (a zero vector under cosine) is
 * never kept.
 */
void
GraphBoundOffer(GraphScanBound *bound, double distance)
{
	double	   *h = bound->heap;
	int			i;

	if (isnan(distance))
		return;
	if (bound->count < bound->k)
	{
		/* sift up */
		i = bound->count++;
		while (i > 0 && h[(i - 1) / 2] < distance)
		{
			h[i] = h[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		h[i] = distance;
		return;
	}
	if (distance >= h[0])
		return;
	/* replace the largest and sift down */
	i = 0;
	for (;;)
	{
		int			l = 2 * i + 1;
		int			r = l + 1;
		int			big = l;

		if (l >= bound->count)
			break;
		if (r < bound->count && h[r] > h[l])
			big = r;
		if (h[big] <= distance)
			break;
		h[i] = h[big];
		i = big;
	}
	h[i] = distance;
}

/*
 * Hold a discovered live node until it is returned: in the sorted window
 * of the ef nearest, pushing the window's farthest out to the overflow heap
 * when full, or straight into the overflow heap.  Every node in the
 * overflow heap is at least as far as every node in the window.
 */
static void
hold(GraphScan *gs, double distance, uint32 id)
{
	int			pos;

	if (gs->bound)
		GraphBoundOffer(gs->bound, distance);
	if (gs->nwindow >= gs->ef &&
		distance >= gs->window[gs->nwindow - 1].distance)
	{
		cand_heap_push(&gs->overflow, distance, id);
		return;
	}
	if (gs->nwindow >= gs->ef)
	{
		GraphCand	far = gs->window[--gs->nwindow];

		cand_heap_push(&gs->overflow, far.distance, far.id);
	}
	pos = gs->nwindow;
	while (pos > 0 && gs->window[pos - 1].distance > distance)
	{
		gs->window[pos] = gs->window[pos - 1];
		pos--;
	}
	gs->window[pos].distance = distance;
	gs->window[pos].id = id;
	gs->nwindow++;
}

/*
 * GraphScanBegin: start a search of the segment for the query (dim floats,
 * must stay valid during the scan), descending the upper layers at once.
 * A segment of at most ef_search * SEGVEC_EXACT_FACTOR docs is scored
 * exactly instead; and once ef rows came from the graph, a segment of at
 * most exact_limit docs is (so filtered and long scans of it are complete
 * and exact from there on; exact scoring is not charged to the budget,
 * which bounds the graph walk of the scan's segments).
 */
GraphScan *
GraphScanBegin(Relation index, const SegvecSegment *seg, SegvecMetric metric,
			   int dim, const float *query, int ef_search, int64 exact_limit,
			   GraphScanBudget *budget)
{
	GraphScan  *gs = palloc0(sizeof(GraphScan));
	Size		mapbytes = (seg->ndocs + 7) / 8 + 1;
	GraphCand	ep;
	int			layer;

	gs->index = index;
	gs->seg = *seg;
	gs->metric = metric;
	gs->dim = dim;
	gs->query = query;
	gs->ef = Max(ef_search, 1);
	gs->m0 = 2 * seg->m;
	gs->buf = InvalidBuffer;
	gs->last = -get_float8_infinity();
	if (seg->pages_per_node > 0)
		gs->nodebuf = palloc(seg->node_size);

	gs->visited = palloc0(mapbytes);
	gs->emitted = palloc0(mapbytes);
	gs->tombstones = palloc0(mapbytes);
	GraphReadTombstones(index, seg, gs->tombstones);

	cand_heap_init(&gs->cand, 256, false);
	cand_heap_init(&gs->overflow, 256, false);
	gs->window = palloc(sizeof(GraphCand) * (gs->ef + 1));
	gs->budget = budget;

	gs->exact_limit = exact_limit;

	if (seg->entry_point < 0 || seg->ndocs == 0)
	{
		gs->exact = true;		/* nothing ranked: returns nothing */
		return gs;
	}

	/* a small segment is cheaper to score whole than to search */
	if ((int64) seg->ndocs <= (int64) gs->ef * SEGVEC_EXACT_FACTOR)
	{
		start_exact(gs);
		return gs;
	}

	ep.id = seg->entry_point;
	ep.distance = distance_to(gs, ep.id);

	/* greedy descent to layer 1 */
	for (layer = seg->max_level; layer >= 1; layer--)
	{
		bool		changed = true;

		while (changed)
		{
			const SegvecNodeHeader *hdr;
			Size		list;
			uint32		count,
						i;
			uint32		ids[SEGVEC_MAX_M];

			changed = false;
			hdr = (const SegvecNodeHeader *) read_node(gs, ep.id);
			if (hdr->level < layer)
				break;
			list = hdr->upper_off + (Size) (layer - 1) * SEGVEC_UPPER_LIST_SIZE(seg->m);

			/*
			 * The list first, then the distances: reading them in turn
			 * would switch between the upper-layer page and node pages for
			 * every neighbour, two buffer accesses each.
			 */
			count = Min(read_upper(gs, list), (uint32) seg->m);
			for (i = 0; i < count; i++)
				ids[i] = read_upper(gs, list + 1 + i);
			for (i = 0; i < count; i++)
			{
				uint32		e = ids[i];
				double		d;

				if (e >= seg->ndocs)
					continue;
				d = distance_to(gs, e);
				if (d < ep.distance)
				{
					ep.distance = d;
					ep.id = e;
					changed = true;
				}
			}
		}
	}

	BIT_SET(gs->visited, ep.id);
	cand_heap_push(&gs->cand, ep.distance, ep.id);
	if (!BIT_IS_SET(gs->tombstones, ep.id))
		hold(gs, ep.distance, ep.id);

	return gs;
}

/*
 * GraphScanSetBound: share bound with the scan's other searches (before the
 * first GraphScanNext), or stop using one (NULL): from then on the search
 * runs as if it had never been bounded.  A segment scored exactly offers
 * its k nearest at once.
 */
void
GraphScanSetBound(GraphScan *gs, GraphScanBound *bound)
{
	if (bound && gs->bound == NULL && gs->exact)
	{
		uint32		i;

		for (i = gs->rankpos; i < gs->nranked && i < gs->rankpos + bound->k; i++)
			GraphBoundOffer(bound, gs->ranked[i].distance);
	}
	gs->bound = bound;
	/* a quarter of ef, at least 10 (or ef, if smaller) */
	gs->bound_floor = Max(Min(gs->ef, 10), gs->ef / 4);
}

/*
 * Expand the nearest unexpanded candidate: compute the distance of each
 * neighbour not seen yet, make it a candidate, and hold it if it is live.
 * Charges the distances to the scan's budget.
 */
static void
expand(GraphScan *gs)
{
	GraphCand	c = cand_heap_pop(&gs->cand);
	const char *rec;
	const uint32 *nbrs;
	uint32		ids[2 * SEGVEC_MAX_M];
	int			count,
				i;

	CHECK_FOR_INTERRUPTS();
	rec = read_node(gs, c.id);
	nbrs = node_neighbors(rec, &count);
	count = Min(count, gs->m0);
	memcpy(ids, nbrs, sizeof(uint32) * count);

	for (i = 0; i < count; i++)
	{
		uint32		e = ids[i];
		double		d;

		if (e >= gs->seg.ndocs || BIT_IS_SET(gs->visited, e))
			continue;
		BIT_SET(gs->visited, e);
		d = distance_to(gs, e);
		gs->budget->visited++;
		cand_heap_push(&gs->cand, d, e);
		if (!BIT_IS_SET(gs->tombstones, e))
			hold(gs, d, e);
	}
}

/*
 * Has the scan used up its budget of distances?  Says so with a NOTICE,
 * once per scan.
 */
static bool
budget_spent(GraphScan *gs)
{
	GraphScanBudget *b = gs->budget;

	if (b->visited < b->limit)
		return false;
	if (!b->noticed)
	{
		b->noticed = true;
		ereport(NOTICE,
				(errmsg("segvec index scan stopped searching after visiting segvec.max_scan_tuples docs"),
				 errdetail("It visited " INT64_FORMAT " docs; rows the search had not reached are not returned.",
						   b->visited),
				 errhint("Raise segvec.max_scan_tuples to let a filtered or long scan go on.")));
	}
	return true;
}

/*
 * The next node of the graph search in distance order, into *c.  Expands
 * candidates until the window is settled (SEARCH-LAYER's stopping rule: the
 * nearest unexpanded candidate is farther than the ef-th nearest node
 * held), then returns the window's nearest node: GRAPH_SCAN_ROW, or
 * GRAPH_SCAN_DONE when the search has nothing more.  A bounded search also
 * stops expanding when the nearest candidate is farther than the bound; if
 * the window's nearest is farther than the bound too, it returns
 * GRAPH_SCAN_BOUNDED with c->distance the nearer of the two (no row found
 * later is nearer, as far as the search can tell) and leaves the window as
 * it is.
 */
static GraphScanResult
graph_next(GraphScan *gs, GraphCand *c)
{
	double		limit = GraphBoundValue(gs->bound);
	bool		bounded = false;

	while (gs->cand.count > 0 &&
		   (gs->nwindow < gs->ef ||
			gs->cand.items[0].distance <= gs->window[gs->nwindow - 1].distance))
	{
		/*
		 * The bound stops a search only when nothing it holds is within
		 * the bound, and its nearest bound_floor held nodes are settled
		 * (as Lucene's multi-leaf collector keeps a segment's own best few
		 * competitive): a search that starts far from the query, as in a
		 * segment where the query sits in a hole, must be able to walk in
		 * through farther nodes, and a segment that holds a node within
		 * the bound is searched as if unbounded.
		 */
		if (gs->cand.items[0].distance > limit &&
			gs->nwindow >= gs->bound_floor &&
			gs->window[0].distance > limit &&
			gs->cand.items[0].distance > gs->window[gs->bound_floor - 1].distance)
		{
			bounded = true;
			break;
		}
		if (budget_spent(gs))
			break;
		expand(gs);
		limit = GraphBoundValue(gs->bound);
	}
	/* on a standby, every page the expansions came from checked again */
	if (RecoveryInProgress())
		release_block(gs->index, &gs->seg, &gs->buf);
	if (bounded && (gs->nwindow == 0 || gs->window[0].distance > limit))
	{
		c->distance = gs->cand.items[0].distance;
		if (gs->nwindow > 0)
			c->distance = Min(c->distance, gs->window[0].distance);
		return GRAPH_SCAN_BOUNDED;
	}
	if (gs->nwindow == 0)
		return GRAPH_SCAN_DONE;
	*c = gs->window[0];
	gs->nwindow--;
	memmove(gs->window, gs->window + 1, sizeof(GraphCand) * gs->nwindow);
	if (gs->overflow.count > 0)
		gs->window[gs->nwindow++] = cand_heap_pop(&gs->overflow);
	return GRAPH_SCAN_ROW;
}

/*
 * GraphScanNext: the next node in distance order: GRAPH_SCAN_ROW with its
 * distance (as the SQL operator computes it; NaN reported as +Infinity) and
 * heap TID; GRAPH_SCAN_DONE when the segment has nothing more; or, for a
 * bounded search (GraphScanSetBound), GRAPH_SCAN_BOUNDED with in *distance
 * a distance no later row of the segment is nearer than: call again after
 * lifting the bound to get the row.
 */
GraphScanResult
GraphScanNext(GraphScan *gs, double *distance, ItemPointer heaptid)
{
	GraphCand	c;
	SegvecDocInfo doc;
	GraphScanResult r;

	for (;;)
	{
		if (gs->exact)
		{
			if (gs->rankpos >= gs->nranked)
				goto done;
			c = gs->ranked[gs->rankpos++];
			if (BIT_IS_SET(gs->emitted, c.id))
				continue;
			BIT_SET(gs->emitted, c.id);
			break;
		}

		/*
		 * Once the first ef rows are out, a segment of at most exact_limit
		 * docs is scored whole: exact from there on, and cheaper than a long
		 * graph walk through most of it.
		 */
		if (gs->nreturned >= gs->ef &&
			(int64) gs->seg.ndocs <= gs->exact_limit)
		{
			start_exact(gs);
			continue;
		}
		r = graph_next(gs, &c);
		if (r == GRAPH_SCAN_DONE)
			goto done;
		if (r == GRAPH_SCAN_BOUNDED)
		{
			*distance = c.distance;
			return GRAPH_SCAN_BOUNDED;
		}
		BIT_SET(gs->emitted, c.id);
		gs->nreturned++;
		break;
	}

	*distance = c.distance;
	gs->last = Max(gs->last, c.distance);
	GraphReadDocs(gs->index, &gs->seg, c.id, 1, &doc);
	*heaptid = doc.heaptid;
	return GRAPH_SCAN_ROW;

done:
	release_block(gs->index, &gs->seg, &gs->buf);
	return GRAPH_SCAN_DONE;
}

/*
 * GraphScanEnd: release what the scan holds (its memory is the caller's
 * context's).
 */
void
GraphScanEnd(GraphScan *gs)
{
	release_block(gs->index, &gs->seg, &gs->buf);
}

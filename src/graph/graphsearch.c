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
 * ef = segvec.ef_search (at least SEGVEC_MIN_SEARCH_WIDTH, in a quantized
 * segment SEGVEC_MIN_QUANT_SEARCH_WIDTH), incrementally,
 * for as long as the caller asks:
 * the scan holds every discovered live node it has not returned, the ef
 * nearest of them in a sorted window and the rest in a heap; it returns
 * the window's nearest once the search has settled for the window (no
 * unexpanded candidate is nearer than the window's farthest, algorithm 2's
 * stopping rule), and goes on expanding when it has not.  So results come
 * out in non-decreasing distance as far as the graph search can tell, each
 * costs work in proportion to what it discovers, and no discovered doc is
 * ever dropped here.  The order is not guaranteed: going on with the search
 * can discover a node nearer than one already returned (reached only
 * through farther nodes), a "late find".  Under segvec.scan_order =
 * strict a reorder stage holds a few rows back (a look-ahead, GraphScanNext)
 * so that a late find within it is returned in its place; one beyond it is
 * skipped (GraphScanBudget.skip_late: not returned, and not counted as a
 * row toward the switch to exact scoring) and the look-ahead grows; under
 * relaxed the search returns it next, and the scan (am/segvecscan.c)
 * passes it on.  The scan's merge checks the order again across all its sources
 * and is what guarantees it.  Late finds are the search's own misses, so
 * they grow rare as the window widens; the minimum width spares the
 * smallest ef_search values the worst of them (src/README.md, "Scans",
 * has the figures).  A scan stops expanding
 * once it has computed segvec.max_scan_tuples distances over all its
 * segments (GraphScanBudget); it then returns what it holds, in order.
 *
 * The searches of one scan may share a bound (GraphScanBound): the k-th
 * smallest distance of the live docs found by any of them.  A bounded
 * search also stops expanding when nothing it holds is within the bound,
 * its nearest unexpanded candidate is farther than the bound, and its own
 * nearest few held nodes are settled (a small segment, one of at most 1/8
 * of the scan's live docs: fewer, in proportion to its share, and even
 * while it holds nodes within the bound, which it returns first); it then
 * answers GRAPH_SCAN_BOUNDED with a distance no row it returns later is
 * nearer than (as far as the search can tell), and keeps its state whole,
 * so once the bound is lifted it goes on exactly where an unbounded search
 * would have been.
 *
 * In a quantized segment (graph/quant.c, graph/rabitq.c) the search runs
 * on the codes of the node records: the window, the heaps and the stopping
 * rule all use estimated distances (RaBitQ: each node's lower bound).  What it yields goes into a rerank pool instead of
 * out, each node with its exact distance from the float4 vector in the
 * segment's vector area; the scan returns the pool's nearest once the pool
 * holds segvec.rerank nodes (ef_search when 0) and that nearest is no
 * farther than a lower bound on the exact distance of anything the graph
 * search can yield later (GraphQuantLowerBound of the last estimate it
 * yielded).  So every distance returned is exact, the rerank adds no
 * disorder of its own, and the continuation stays complete: a node leaves
 * the graph search only into the pool, and the pool only to the caller (or
 * back to the graph, unmarked, when the scan switches to exact scoring).
 *
 * src/graph/graphsearch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "graph/candheap.h"
#include "graph/graph.h"
#include "graph/quant.h"
#include "store/store.h"

/*
 * sort_cands(): an inlined quicksort on GraphCand by distance (the
 * algorithm of qsort, so candidates at equal distances keep its order)
 */
#define ST_SORT sort_cands
#define ST_ELEMENT_TYPE GraphCand
#define ST_COMPARE(a, b) cand_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* by distance, then node number */
static inline int
cand_id_cmp(const GraphCand *a, const GraphCand *b)
{
	int			c = cand_cmp(a, b);

	if (c != 0)
		return c;
	return a->id < b->id ? -1 : (a->id > b->id ? 1 : 0);
}

/* sort_cands_by_id(): sort_cands, equal distances in node order */
#define ST_SORT sort_cands_by_id
#define ST_ELEMENT_TYPE GraphCand
#define ST_COMPARE(a, b) cand_id_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

int			segvec_exact_scan_factor = 16;

/*
 * The shared bound treats a segment of at most 1/SEGVEC_BOUND_SMALL_DIV of
 * a scan's live docs as small, and settles at least
 * SEGVEC_BOUND_SMALL_FLOOR of its nearest held nodes (GraphScanSetBound).
 */
#define SEGVEC_BOUND_SMALL_DIV 8
#define SEGVEC_BOUND_SMALL_FLOOR 3
int			segvec_rerank = 0;

struct GraphScan
{
	Relation	index;
	SegvecSegment seg;
	SegvecMetric metric;
	int			dim;
	const float *query;
	int			ef;
	int			m0;

	uint8	   *visited;		/* bitmap: distance computed (a walk only) */
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
	bool		bound_small;	/* a small segment: the bound stops it even
								 * while it holds nodes within the bound */

	/* exact mode: every live node scored, ascending */
	bool		exact;
	bool		exact_est;		/* ranked by sq8 estimates, returned through
								 * the rerank pool */
	int64		exact_limit;	/* switch to exact mode up to this size */
	GraphCand  *ranked;
	uint32		nranked;
	uint32		rankpos;

	char	   *nodebuf;		/* for nodes that span pages */
	Buffer		buf;			/* pinned page, or InvalidBuffer */

	/* a quantized segment: traversal on codes, exact rerank */
	bool		quant;
	GraphQuantQuery qq;			/* the query prepared for the codes */
	GraphHeap	pool;			/* min-heap by exact distance: taken from
								 * the graph search, not returned yet */
	int			rerank;			/* pool size */
	double		floor;			/* no node the graph search yields from
								 * now on is nearer than this */
	char	   *vecbuf;			/* for vectors that span pages */
	Buffer		vbuf;			/* pinned vector page, or InvalidBuffer */

	/* a filtered scan: nodes that fail the filter are in tombstones */
	bool		filtered;
	int64		npass;			/* live nodes that pass */
	int64		nvisited;		/* distances the graph walk computed */
	int64		nchecked;		/* of them, to nodes checked when met */
	int64		nvisited_pass;	/* of those, to nodes that pass */
	bool		switch_exact;	/* the walk gave way to exact scoring */
	bool		far;			/* a far walk (start_far): failing nodes
								 * route only next to passing ones */
	int			ef_scan;		/* ef before filter_width narrowed it */

	/*
	 * a lazy filter (GraphScanBeginLazy): a node's entry is checked when
	 * the search first meets it, and remembered
	 */
	GraphFilterFn match;		/* or NULL: failing nodes in tombstones */
	void	   *match_arg;
	uint8	   *fknown;			/* bitmap: entry checked */
	uint8	   *ffail;			/* bitmap: checked and failed */
	Buffer		fbuf;			/* pinned filter-area page, or Invalid */
	BlockNumber farea;			/* the filter area's first block */
	uint32		fper_page;		/* filter entries a page */

	/* the reorder stage (strict order): rows taken, not returned yet */
	GraphHeap	ahead;			/* min-heap by distance */
	int			lookahead;		/* rows held before the nearest goes */
	bool		inner_done;		/* the search has nothing more */
};

/*
 * Under strict order a search holds SEGVEC_LOOKAHEAD_INIT rows beyond the
 * one it returns, so that a late find within that many rows of its place
 * is returned there; a late find beyond the look-ahead (nearer than a row
 * already returned) doubles it, up to SEGVEC_LOOKAHEAD_MAX.
 */
#define SEGVEC_LOOKAHEAD_INIT	2
#define SEGVEC_LOOKAHEAD_MAX	1024

/*
 * An unquantized node's vector is prefetched up to this many bytes (the
 * size measured best with the buffer hints); a quantized node's code whole
 */
#define GRAPH_PREFETCH_VECTOR_BYTES 512

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
		*buf = GraphPinPage(index, blkno);
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

/* Where a node record's vector (or, quantized, its norm and code) starts */
static inline const char *
node_payload(const GraphScan *gs, const char *rec)
{
	return rec + sizeof(SegvecNodeHeader) + sizeof(uint32) * gs->m0;
}

/*
 * The float4 vector of node id: in its node record, or in a quantized
 * segment in the vector area (read through gs->vbuf, so a vector read
 * leaves the node page pinned).
 */
static const float *
read_vector(GraphScan *gs, uint32 id)
{
	const SegvecSegment *seg = &gs->seg;
	Size		vbytes = sizeof(float) * gs->dim;
	Size		off;
	Size		done = 0;
	BlockNumber blk;

	if (seg->quant == SEGVEC_QUANT_NONE)
		return (const float *) node_payload(gs, read_node(gs, id));

	/* the packed vector area: the vector may cross a page boundary */
	off = (Size) id * vbytes;
	blk = seg->vec_start + off / SEGVEC_SEGPAGE_USABLE;
	off %= SEGVEC_SEGPAGE_USABLE;
	if (off + vbytes <= SEGVEC_SEGPAGE_USABLE)
		return (const float *) (read_block(gs->index, seg, &gs->vbuf, blk) + off);
	while (done < vbytes)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE - off, vbytes - done);

		memcpy(gs->vecbuf + done,
			   read_block(gs->index, seg, &gs->vbuf, blk++) + off, len);
		done += len;
		off = 0;
	}
	return (const float *) gs->vecbuf;
}

/*
 * Prefetch the start of node id's vector in a quantized segment's vector
 * area (the page's buffer header and first lines, GraphPrefetchPage)
 */
static void
prefetch_vector(GraphScan *gs, uint32 id)
{
	const SegvecSegment *seg = &gs->seg;
	Size		vbytes = sizeof(float) * gs->dim;
	Size		off = (Size) id * vbytes;
	BlockNumber blk = seg->vec_start + off / SEGVEC_SEGPAGE_USABLE;

	off %= SEGVEC_SEGPAGE_USABLE;
	GraphPrefetchPage(gs->index, blk, MAXALIGN(SizeOfPageHeaderData) + off,
					  Min(vbytes, SEGVEC_SEGPAGE_USABLE - off));
}

/*
 * Set up gs for reading nodes and vectors of seg (no search state); undone
 * by reader_release.
 */
static void
reader_init(GraphScan *gs, Relation index, const SegvecSegment *seg, int dim)
{
	gs->index = index;
	gs->seg = *seg;
	gs->dim = dim;
	gs->m0 = 2 * seg->m;
	gs->buf = InvalidBuffer;
	gs->vbuf = InvalidBuffer;
	gs->quant = (seg->quant != SEGVEC_QUANT_NONE);
	if (seg->pages_per_node > 0)
		gs->nodebuf = palloc(seg->node_size);
	if (gs->quant)
		gs->vecbuf = palloc(sizeof(float) * Max(dim, 1));
}

static void
reader_release(GraphScan *gs)
{
	release_block(gs->index, &gs->seg, &gs->buf);
	release_block(gs->index, &gs->seg, &gs->vbuf);
	release_block(gs->index, &gs->seg, &gs->fbuf);
}

/*
 * Prefetch what scoring the nodes ids[0 .. count - 1] not visited yet will
 * read (their records' payloads: the first GRAPH_PREFETCH_VECTOR_BYTES of
 * the vector, or the code, up to GraphPrefetchPage's limit), so that the
 * cache misses of a node's neighbours overlap instead of following one
 * another.
 */
static void
reader_prefetch(GraphScan *gs, const uint32 *ids, int count)
{
	const SegvecSegment *seg = &gs->seg;
	Size		payload = sizeof(SegvecNodeHeader) + sizeof(uint32) * gs->m0;
	Size		len = gs->quant ? GraphQuantRecordBytes(seg->quant, gs->dim) :
		Min(sizeof(float) * gs->dim, GRAPH_PREFETCH_VECTOR_BYTES);
	int			i;

	if (seg->nodes_per_page <= 0)
		return;
	for (i = 0; i < count; i++)
	{
		uint32		e = ids[i];

		if (e >= seg->ndocs || BIT_IS_SET(gs->visited, e))
			continue;
		GraphPrefetchPage(gs->index, seg->node_start + e / seg->nodes_per_page,
						  MAXALIGN(SizeOfPageHeaderData) +
						  (Size) (e % seg->nodes_per_page) * seg->node_size +
						  payload, len);
	}
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

/* The exact distance to node id (NaN as farthest) */
static double
exact_distance(GraphScan *gs, uint32 id)
{
	return nav_distance(gs, read_vector(gs, id));
}

/*
 * The distance the graph search goes by: exact, or in a quantized segment
 * the estimate from the node's code (NaN as farthest).
 */
static double
distance_to(GraphScan *gs, uint32 id)
{
	double		d;

	if (!gs->quant)
		return exact_distance(gs, id);
	d = GraphQuantDistance(&gs->qq, node_payload(gs, read_node(gs, id)));
	return isnan(d) ? get_float8_infinity() : d;
}

/*
 * Read the quantizer parameters of the segment (one float array across the
 * parameter pages) and prepare the query for its codes.
 */
static void
prepare_quant(GraphScan *gs)
{
	const SegvecSegment *seg = &gs->seg;
	Size		total = sizeof(float) * GraphQuantParamFloats(seg->quant, gs->dim);
	char	   *params = palloc(total);
	Size		done = 0;
	BlockNumber blk = seg->qparam_start;

	while (done < total)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE, total - done);

		memcpy(params + done, read_block(gs->index, seg, &gs->vbuf, blk++),
			   len);
		done += len;
	}
	release_block(gs->index, seg, &gs->vbuf);
	GraphQuantPrepare(&gs->qq, seg->quant, (const float *) params,
					  gs->metric, gs->query, gs->dim);
	pfree(params);
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
 * GraphPinFilterPage: page pageno (0 .. GraphFilterPages - 1) of seg's
 * filter area, pinned in *buf (which keeps its pin if it holds that page,
 * else drops its old one; checked on a standby): returns its first entry
 * (format.h), the node number of that entry in *first and the entries on
 * the page in *count.  No lock: segment pages never change.  Release with
 * GraphReleaseFilterPage.
 */
const char *
GraphPinFilterPage(Relation index, const SegvecSegment *seg, uint32 pageno,
				   Buffer *buf, uint32 *first, uint32 *count)
{
	uint32		per_page = SEGVEC_FILTERS_PER_PAGE(seg->nfilters);
	BlockNumber area = seg->start + seg->npages - GraphFilterPages(seg);

	Assert(seg->nfilters > 0 && pageno < GraphFilterPages(seg));
	*first = pageno * per_page;
	*count = Min(per_page, seg->ndocs - *first);
	return read_block(index, seg, buf, area + pageno);
}

/* GraphReleaseFilterPage: drop the pin GraphPinFilterPage left in *buf */
void
GraphReleaseFilterPage(Relation index, const SegvecSegment *seg, Buffer *buf)
{
	release_block(index, seg, buf);
}

/*
 * GraphFindDoc: the node holding doc id docid, or -1 (binary search of the
 * sorted doc area).
 */
int64
GraphFindDoc(Relation index, const SegvecSegment *seg, uint64 docid)
{
	return GraphFindDocEntry(index, seg, docid, NULL, NULL);
}

/* Doc id of entry k (0-based, of this page) of a doc-area page's data */
static inline uint64
doc_area_docid(const char *data, int64 k)
{
	uint64		docid;

	memcpy(&docid, data + k * sizeof(SegvecDocInfo) +
		   offsetof(SegvecDocInfo, docid), sizeof(uint64));
	return docid;
}

/*
 * GraphFindDocEntry: GraphFindDoc that also copies the doc-area entry of
 * the node into *info (unless NULL).  One page stays pinned from step to
 * step, so the search pins about log2 of the doc area's pages, not one
 * page per step.  With hint (or NULL), a doc id within the range of the
 * page the hint names, or of the page after it, is looked for on that
 * page only (the area is sorted: a doc id in a page's range is on that
 * page or nowhere); the hint is then set to the page the doc was found on.
 */
int64
GraphFindDocEntry(Relation index, const SegvecSegment *seg, uint64 docid,
				  SegvecDocInfo *info, GraphDocHint *hint)
{
	Buffer		buf = InvalidBuffer;
	int64		lo = 0,
				hi = (int64) seg->ndocs - 1;
	int64		found = -1;
	int64		npages = ((int64) seg->ndocs + SEGVEC_DOCS_PER_PAGE - 1) /
		SEGVEC_DOCS_PER_PAGE;

	if (seg->ndocs == 0 || docid < seg->min_docid || docid > seg->max_docid)
		return -1;
	if (hint && hint->valid && hint->segno == seg->segno &&
		hint->page < npages && docid >= hint->first)
	{
		int64		page = hint->page;

		/* the page the hint names, or the next one */
		if (docid > hint->last && page + 1 < npages)
		{
			const char *data = read_block(index, seg, &buf,
										  seg->doc_start + page + 1);
			int64		n = Min((int64) SEGVEC_DOCS_PER_PAGE,
								(int64) seg->ndocs - (page + 1) * SEGVEC_DOCS_PER_PAGE);

			if (docid <= doc_area_docid(data, n - 1))
				page++;
		}
		if (docid <= hint->last || page != hint->page)
		{
			lo = page * SEGVEC_DOCS_PER_PAGE;
			hi = Min(lo + SEGVEC_DOCS_PER_PAGE, (int64) seg->ndocs) - 1;
		}
	}
	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		char	   *data = read_block(index, seg, &buf,
									  seg->doc_start + mid / SEGVEC_DOCS_PER_PAGE);
		SegvecDocInfo doc;

		memcpy(&doc,
			   data + (mid % SEGVEC_DOCS_PER_PAGE) * sizeof(SegvecDocInfo),
			   sizeof(SegvecDocInfo));
		if (doc.docid == docid)
		{
			if (info)
				*info = doc;
			found = mid;
			if (hint)
			{
				int64		first = mid - mid % SEGVEC_DOCS_PER_PAGE;
				int64		last = Min(first + SEGVEC_DOCS_PER_PAGE,
									   (int64) seg->ndocs) - 1;

				hint->valid = true;
				hint->segno = seg->segno;
				hint->page = (uint32) (mid / SEGVEC_DOCS_PER_PAGE);
				hint->first = doc_area_docid(data, 0);
				hint->last = doc_area_docid(data, last - first);
			}
			break;
		}
		if (doc.docid < docid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	release_block(index, seg, &buf);
	return found;
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
	reader_init(&gs, index, seg, dim);
	memcpy(vector, read_vector(&gs, node), sizeof(float) * dim);
	reader_release(&gs);
	if (gs.nodebuf)
		pfree(gs.nodebuf);
	if (gs.vecbuf)
		pfree(gs.vecbuf);
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
	reader_init(&gs, index, seg, dim);

	for (i = 0; i < seg->ndocs; i++)
	{
		if (tombstones && BIT_IS_SET(tombstones, i))
			continue;
		CHECK_FOR_INTERRUPTS();
		GraphReadDocs(index, seg, i, 1, &doc);
		callback(&doc, read_vector(&gs, i), dim, arg);
	}
	reader_release(&gs);
	if (gs.nodebuf)
		pfree(gs.nodebuf);
	if (gs.vecbuf)
		pfree(gs.vecbuf);
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
	reader_init(&gs, index, seg, 0);
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
	reader_release(&gs);
	pfree(seen);
	pfree(queue);
	return unreached;
}

/*
 * Is node i out of the search's results: tombstoned, or failing the
 * filter?  A lazy filter checks the node's entry the first time it is
 * asked (a page of the filter area stays pinned from call to call).
 */
static inline bool
node_out(GraphScan *gs, uint32 i)
{
	const char *entries;
	uint32		per_page;
	bool		pass;

	if (BIT_IS_SET(gs->tombstones, i))
		return true;
	if (gs->match == NULL)
		return false;
	if (BIT_IS_SET(gs->fknown, i))
		return BIT_IS_SET(gs->ffail, i);
	per_page = gs->fper_page;
	entries = read_block(gs->index, &gs->seg, &gs->fbuf,
						 gs->farea + i / per_page);
	pass = gs->match(entries + (Size) (i % per_page) *
					 SEGVEC_FILTER_ENTRY_BYTES(gs->seg.nfilters),
					 gs->match_arg);
	BIT_SET(gs->fknown, i);
	if (!pass)
		BIT_SET(gs->ffail, i);
	return !pass;
}

/*
 * An sq8 segment's exact mode ranks by the codes' estimates only when more
 * than this many times the rerank pool's size of nodes are left (start_exact)
 */
#define GRAPH_EXACT_EST_MIN_FACTOR	2

/*
 * The bits of nodes 8 * b .. 8 * b + 63 that are returned or out (set),
 * bytes past the bitmaps' nbytes counting as out
 */
static inline uint64
out_word(GraphScan *gs, Size b, Size nbytes)
{
	uint64		e = ~UINT64CONST(0);
	uint64		t = ~UINT64CONST(0);

	if (likely(b + sizeof(uint64) <= nbytes))
	{
		/* a whole word: one load each */
		memcpy(&e, gs->emitted + b, sizeof(uint64));
		memcpy(&t, gs->tombstones + b, sizeof(uint64));
	}
	else
	{
		memcpy(&e, gs->emitted + b, nbytes - b);
		memcpy(&t, gs->tombstones + b, nbytes - b);
	}
	return e | t;
}

/* Rank node i in exact mode (start_exact), growing gs->ranked as needed */
static inline void
rank_node(GraphScan *gs, uint32 i, Size *maxranked)
{
	if (gs->nranked >= *maxranked)
	{
		*maxranked *= 2;
		gs->ranked = repalloc_huge(gs->ranked, sizeof(GraphCand) * *maxranked);
	}
	gs->ranked[gs->nranked].id = i;
	gs->ranked[gs->nranked].distance = gs->exact_est ?
		distance_to(gs, i) : exact_distance(gs, i);
	gs->nranked++;
}

/*
 * Exact mode: score every live node not yet returned, sort, and return
 * them in order from there on.  Nodes nearer than the last one returned
 * (which the graph search missed) come first: late finds, skipped under
 * segvec.scan_order = strict.  An sq8 segment ranks its nodes by their
 * estimates, read from the node records (a byte a dimension, not the four
 * of the float4 vectors), and returns them through the rerank pool
 * (rerank_next), which scores them exactly in estimated order and returns
 * them in exact order, as it does for the graph search; unless they are
 * few (at most GRAPH_EXACT_EST_MIN_FACTOR times the pool, as the passing
 * nodes of a narrow filter): the pool would score nearly all of them
 * before its first row, so the estimates would only add the reads of
 * their codes, and they are scored from their vectors at once.  Without a
 * lazy filter the nodes left are found a 64-bit word of the bitmaps at a
 * time, so a narrow filter's few in a big segment cost little more than
 * their scores.
 */
static void
start_exact(GraphScan *gs)
{
	uint32		ndocs = gs->seg.ndocs;
	Size		nbytes = ((Size) ndocs + 7) / 8;
	Size		maxranked;
	int			rerank;

	/*
	 * The nodes left, about: without a lazy filter, the live nodes that
	 * pass less those returned (gs->ranked grows if there are more)
	 */
	maxranked = ndocs;
	if (gs->match == NULL)
	{
		int64		live = gs->filtered ? gs->npass :
			(int64) ndocs - gs->seg.ntombstones;

		maxranked = Min(Max(live - gs->nreturned, 0) + 16, (int64) ndocs + 1);
	}

	/*
	 * sq8 only: its floor is proven (or fails with probability 1e-9 a node),
	 * while RaBitQ's holds with the probability of its bound, and a whole
	 * segment ranked by it lost rows of a full scan
	 */
	rerank = gs->rerank > 0 ? gs->rerank :
		(segvec_rerank > 0 ? segvec_rerank : gs->ef);
	gs->exact_est = (gs->seg.quant == SEGVEC_QUANT_SQ8 &&
					 (gs->match != NULL ||
					  maxranked > (Size) rerank * GRAPH_EXACT_EST_MIN_FACTOR));
	if (gs->exact_est && gs->rerank == 0)
	{
		/* scored exactly from the start: the codes are not prepared yet */
		prepare_quant(gs);
		gs->rerank = rerank;
		cand_heap_init(&gs->pool, Min(gs->rerank + 1, 1024), false);
	}
	if (gs->exact_est)
		gs->floor = -get_float8_infinity();

	gs->ranked = MemoryContextAllocHuge(CurrentMemoryContext,
										sizeof(GraphCand) * maxranked);
	gs->nranked = 0;
	if (gs->match == NULL)
	{
		Size		b;

		for (b = 0; b < nbytes; b += sizeof(uint64))
		{
			uint64		left = ~out_word(gs, b, nbytes);
			uint32		base;

			if ((b & 1023) == 0)
				CHECK_FOR_INTERRUPTS();

			/*
			 * a byte at a time through pg_rightmost_one_pos[]: a count of
			 * trailing zeros compiles to TZCNT, beyond the x86-64
			 * baseline (test/check-portable.sh)
			 */
			for (base = b * 8; left != 0; left >>= 8, base += 8)
			{
				uint8		bits = (uint8) left;

				while (bits != 0)
				{
					uint32		i = base + pg_rightmost_one_pos[bits];

					bits &= bits - 1;
					if (i >= ndocs)
						break;
					rank_node(gs, i, &maxranked);
				}
			}
		}
	}
	else
	{
		uint32		i;

		for (i = 0; i < ndocs; i++)
		{
			if (BIT_IS_SET(gs->emitted, i) || node_out(gs, i))
				continue;
			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			rank_node(gs, i, &maxranked);
		}
	}
	/* on a standby, every page the scores came from checked again */
	if (RecoveryInProgress())
		reader_release(gs);

	/*
	 * A quantized segment's nodes scored from their vectors at once go out
	 * at equal distances in node order (a compaction writes them in the
	 * order they were inserted); the rerank pool's order among them is its
	 * heap's
	 */
	if (gs->quant && !gs->exact_est)
		sort_cands_by_id(gs->ranked, gs->nranked);
	else
		sort_cands(gs->ranked, gs->nranked);
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
	bound->live_docs = 0;
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
 * Keep a discovered live node until it is returned: in the sorted window
 * of the ef nearest, pushing the window's farthest out to the overflow heap
 * when full, or straight into the overflow heap.  Every node in the
 * overflow heap is at least as far as every node in the window.
 */
static void
keep(GraphScan *gs, double distance, uint32 id)
{
	int			pos;

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

/* keep(), offering the node to the shared bound first */
static void
hold(GraphScan *gs, double distance, uint32 id)
{
	if (gs->bound)
		GraphBoundOffer(gs->bound, distance);
	keep(gs, distance, id);
}

/*
 * What the greedy descent of GraphScanBegin keeps: the nodes it scored
 * (marked in gs->emitted, cleared after it: marked, or all of the bitmap
 * when more than GRAPH_DESCENT_MARKS were), and the first
 * GRAPH_DESCENT_SEEDS of layer 1 with their distances.
 */
#define GRAPH_DESCENT_MARKS 256
#define GRAPH_DESCENT_SEEDS 128

typedef struct GraphDescent
{
	uint32		marked[GRAPH_DESCENT_MARKS];
	int			nmarked;
	bool		overflow;
	GraphCand	seeds[GRAPH_DESCENT_SEEDS];
	int			nseeds;
} GraphDescent;

static inline void
desc_mark(GraphScan *gs, GraphDescent *desc, uint32 id)
{
	BIT_SET(gs->emitted, id);
	if (desc->nmarked < GRAPH_DESCENT_MARKS)
		desc->marked[desc->nmarked++] = id;
	else
		desc->overflow = true;
}

static GraphScan *scan_begin(Relation index, const SegvecSegment *seg,
							 SegvecMetric metric, int dim,
							 const float *query, int ef_search,
							 int64 exact_limit, GraphScanBudget *budget,
							 const uint8 *fail, int64 npass,
							 GraphFilterFn match, void *arg);

/*
 * GraphScanBegin: start a search of the segment for the query (dim floats,
 * must stay valid during the scan), descending the upper layers at once.
 * A segment of at most ef_search * SEGVEC_EXACT_FACTOR docs is scored
 * exactly instead; and once ef rows and 1/SEGVEC_EXACT_SWITCH_DIV of its
 * docs came from the graph, a segment of at most exact_limit docs is (so
 * filtered and long scans of it are complete
 * and exact from there on; exact scoring is not charged to the budget,
 * which bounds the graph walk of the scan's segments).
 */
GraphScan *
GraphScanBegin(Relation index, const SegvecSegment *seg, SegvecMetric metric,
			   int dim, const float *query, int ef_search, int64 exact_limit,
			   GraphScanBudget *budget)
{
	return GraphScanBeginFiltered(index, seg, metric, dim, query, ef_search,
								  exact_limit, budget, NULL, -1);
}

/*
 * What a distance of exact scoring costs against one of a graph walk: in
 * a quantized segment exact scoring reads every node's record (its code)
 * and reranks the nearest through the vector area, and is counted as 4
 * walk distances, as when it scored the float4 vectors (1 measured the
 * same on Fashion-MNIST 20,000 at every selectivity of
 * test/bench/filter.sh, so the ratio that the cost model also uses
 * stayed); in an unquantized one both read the node's vector.
 */
static inline int64
exact_cost_ratio(GraphScan *gs)
{
	return gs->quant ? 4 : 1;
}

/*
 * The window of a filtered walk: ef * s passing nodes at selectivity s, at
 * least SEGVEC_MIN_SEARCH_WIDTH.  Returning the nearest passing nodes of
 * an unfiltered search at ef takes about ef * s of them; a window of ef
 * passing nodes searches as an unfiltered search at ef / s would.
 */
static int
filter_width(GraphScan *gs)
{
	double		w = ceil((double) gs->ef * gs->npass / Max(gs->seg.ndocs, 1));

	return (int) Max(Min(w, (double) gs->ef), (double) SEGVEC_MIN_SEARCH_WIDTH);
}

/*
 * Should a filtered search score its passing nodes exactly from the start?
 * When few pass (at most what a small segment has), or when a walk would
 * cost more.  At selectivity s = npass / ndocs a walk that holds W =
 * filter_width passing nodes expands about W / s nodes, each bringing in
 * about M new neighbours (a list of 2M, half of them seen already): W * M
 * / s distances, against npass exact ones, each costing exact_cost_ratio
 * walk distances.  W is ef * s while that is at least
 * SEGVEC_MIN_SEARCH_WIDTH, so a wide filter walks for about ef * M
 * distances whatever s; a narrow one pays 1 / s for its minimum window.
 * On 20,000 quantized docs at ef 40 and M 16, exact wins below about 4%
 * passing; on 1,000,000, below about 0.6%.
 */
static bool
filter_prefers_exact(GraphScan *gs)
{
	double		s = (double) gs->npass / Max(gs->seg.ndocs, 1);
	double		walk;

	if (gs->npass <= (int64) Max(gs->ef, SEGVEC_MIN_SEARCH_WIDTH) * SEGVEC_EXACT_FACTOR)
		return true;
	walk = (double) filter_width(gs) / s * gs->seg.m;
	return (double) gs->npass * exact_cost_ratio(gs) <= walk;
}

/*
 * A filtered walk judges the filter against the query's region once it has
 * computed this many distances (an unfiltered search at the minimum width
 * computes about as many): enough that a region where a quarter of the
 * expected share of nodes pass is told from an even one.
 */
#define SEGVEC_FILTER_PROBE		(SEGVEC_MIN_SEARCH_WIDTH * 32)

/*
 * Has a filtered walk, past SEGVEC_FILTER_PROBE checked nodes, met a
 * region where nodes pass at under a quarter of the segment's rate?  The
 * filter is then anti-correlated with the query: its passing nodes lie
 * away from it, maybe in several regions, and a walk that must cross the
 * failing ones first expands every failing node nearer than the passing
 * ones, fills its window in the first region it reaches and settles
 * before the others (recall@10 0.90 on test/sql/filter_recall.sql's 50%
 * far filter).  Judged once: a far walk (start_far) is not judged again.
 */
static inline bool
filter_region_far(GraphScan *gs)
{
	return gs->filtered && !gs->far &&
		gs->nchecked >= SEGVEC_FILTER_PROBE &&
		(double) gs->nvisited_pass * 4 * gs->seg.ndocs <
		(double) gs->nchecked * gs->npass;
}

/*
 * A far walk is counted as SEGVEC_FAR_WALK_COST times the distances of an
 * unfiltered search of its width (ef_scan * M): its seeds, and the failing
 * nodes next to passing ones that it scores to route through them.
 */
#define SEGVEC_FAR_WALK_COST	4

/*
 * Would a far walk cost less than scoring the passing nodes exactly (each
 * exact_cost_ratio walk distances)?  On 20,000 quantized docs at ef 40
 * and M 16, from about 3% passing; unquantized, from about 13%.
 */
static inline bool
far_walk_pays(GraphScan *gs)
{
	return (double) gs->npass * exact_cost_ratio(gs) >
		(double) SEGVEC_FAR_WALK_COST * gs->ef_scan * gs->seg.m;
}

/*
 * Should a filtered search's walk give way to exact scoring?  When it has
 * computed as many distances as exact scoring of the passing nodes would,
 * or used up the scan's budget (a filtered scan is complete: the budget
 * never cuts it short); or when its region is far (filter_region_far) and
 * a far walk would cost more than exact scoring.
 */
static inline bool
filter_walk_over(GraphScan *gs)
{
	if (!gs->filtered)
		return false;
	if (gs->nvisited > gs->npass * exact_cost_ratio(gs) ||
		gs->budget->visited >= gs->budget->limit)
		return true;
	return filter_region_far(gs) && !far_walk_pays(gs);
}

/*
 * GraphScanBeginFiltered: GraphScanBegin for a scan with a filter: fail
 * (NULL: no filter) marks the nodes that fail it, npass counts the live
 * nodes that pass.  Failing nodes are treated as tombstoned: the graph
 * walk goes through them but never returns them, and exact scoring
 * skips them.  When few pass, or a walk would cost more, the passing nodes
 * are scored exactly at once (filter_prefers_exact); a walk that comes to
 * cost as much, or reaches the budget, turns to exact scoring.
 */
GraphScan *
GraphScanBeginFiltered(Relation index, const SegvecSegment *seg,
					   SegvecMetric metric, int dim, const float *query,
					   int ef_search, int64 exact_limit,
					   GraphScanBudget *budget, const uint8 *fail,
					   int64 npass)
{
	return scan_begin(index, seg, metric, dim, query, ef_search, exact_limit,
					  budget, fail, npass, NULL, NULL);
}

/*
 * GraphScanBeginLazy: GraphScanBeginFiltered for a filter whose failing
 * nodes are not known yet: match (called with a node's filter entry and
 * arg) says whether a node passes, asked the first time the search meets
 * the node; npass is an estimate of the live nodes that pass.  For a wide
 * filter walked through its graph, which meets a few thousand nodes of a
 * segment: a pass over every entry would cost more than the walk.  Exact
 * scoring, if the walk turns to it, checks every node.  seg must have
 * filter entries.
 */
GraphScan *
GraphScanBeginLazy(Relation index, const SegvecSegment *seg,
				   SegvecMetric metric, int dim, const float *query,
				   int ef_search, int64 exact_limit, GraphScanBudget *budget,
				   GraphFilterFn match, void *arg, int64 npass)
{
	return scan_begin(index, seg, metric, dim, query, ef_search, exact_limit,
					  budget, NULL, npass, match, arg);
}

/*
 * GraphFilterPrefersExact: would a filtered scan of seg at ef_search with
 * npass passing nodes score them exactly from the start
 * (filter_prefers_exact)?  For the scan layer's choice of a lazy filter.
 */
bool
GraphFilterPrefersExact(const SegvecSegment *seg, int ef_search, int64 npass)
{
	GraphScan	gs;

	memset(&gs, 0, sizeof(gs));
	gs.seg = *seg;
	gs.quant = (seg->quant != SEGVEC_QUANT_NONE);
	gs.ef = Max(ef_search, gs.quant ?
				SEGVEC_MIN_QUANT_SEARCH_WIDTH : SEGVEC_MIN_SEARCH_WIDTH);
	gs.npass = npass;
	return filter_prefers_exact(&gs);
}

/* GraphScanBeginFiltered and GraphScanBeginLazy */
static GraphScan *
scan_begin(Relation index, const SegvecSegment *seg, SegvecMetric metric,
		   int dim, const float *query, int ef_search, int64 exact_limit,
		   GraphScanBudget *budget, const uint8 *fail, int64 npass,
		   GraphFilterFn match, void *arg)
{
	GraphScan  *gs = palloc0(sizeof(GraphScan));
	Size		mapbytes = (seg->ndocs + 7) / 8 + 1;
	GraphCand	ep;
	int			layer;
	int			k;
	GraphDescent desc;

	desc.nmarked = 0;
	desc.overflow = false;
	desc.nseeds = 0;
	reader_init(gs, index, seg, dim);
	gs->metric = metric;
	gs->query = query;
	gs->ef = Max(ef_search, seg->quant != SEGVEC_QUANT_NONE ?
				 SEGVEC_MIN_QUANT_SEARCH_WIDTH : SEGVEC_MIN_SEARCH_WIDTH);
	gs->last = -get_float8_infinity();

	gs->emitted = palloc0(mapbytes);
	gs->tombstones = palloc0(mapbytes);
	GraphReadTombstones(index, seg, gs->tombstones);
	gs->fbuf = InvalidBuffer;
	if (fail)
	{
		Size		nbytes = ((Size) seg->ndocs + 7) / 8;
		Size		b;

		/* a word at a time: a big segment's bitmap is some kilobytes */
		for (b = 0; b + sizeof(uint64) <= nbytes; b += sizeof(uint64))
		{
			uint64		t;
			uint64		f;

			memcpy(&t, gs->tombstones + b, sizeof(uint64));
			memcpy(&f, fail + b, sizeof(uint64));
			t |= f;
			memcpy(gs->tombstones + b, &t, sizeof(uint64));
		}
		for (; b < nbytes; b++)
			gs->tombstones[b] |= fail[b];
		gs->filtered = true;
		gs->npass = npass;
	}
	else if (match)
	{
		Assert(seg->nfilters > 0);
		gs->match = match;
		gs->match_arg = arg;
		gs->fknown = palloc0(mapbytes);
		gs->ffail = palloc0(mapbytes);
		gs->fper_page = SEGVEC_FILTERS_PER_PAGE(seg->nfilters);
		gs->farea = seg->start + seg->npages - GraphFilterPages(seg);
		gs->filtered = true;
		gs->npass = npass;
	}

	cand_heap_init(&gs->cand, 256, false);
	cand_heap_init(&gs->overflow, 256, false);
	cand_heap_init(&gs->ahead, 16, false);
	gs->lookahead = budget->skip_late ? SEGVEC_LOOKAHEAD_INIT : 0;
	gs->inner_done = false;
	/* room for a far walk's window too (SEGVEC_FAR_WIDTH) */
	gs->window = palloc(sizeof(GraphCand) * (gs->ef + gs->ef / 2 + 1));
	gs->budget = budget;

	gs->exact_limit = exact_limit;

	if (seg->entry_point < 0 || seg->ndocs == 0)
	{
		gs->exact = true;		/* nothing ranked: returns nothing */
		return gs;
	}

	/*
	 * a small segment is cheaper to score whole than to search (at the
	 * unquantized minimum width, whatever the segment's: which segments
	 * are scored whole does not depend on their quantization)
	 */
	if ((int64) seg->ndocs <=
		(int64) Max(gs->ef, SEGVEC_MIN_SEARCH_WIDTH) * SEGVEC_EXACT_FACTOR ||
		(gs->filtered && filter_prefers_exact(gs)))
	{
		start_exact(gs);
		return gs;
	}
	/* the walk's (exact scoring, above, never reads it) */
	gs->visited = palloc0(mapbytes);
	gs->ef_scan = gs->ef;
	if (gs->filtered)
		gs->ef = filter_width(gs);

	if (gs->quant)
	{
		prepare_quant(gs);
		gs->rerank = segvec_rerank > 0 ? segvec_rerank : gs->ef;
		gs->floor = -get_float8_infinity();
		cand_heap_init(&gs->pool, Min(gs->rerank + 1, 1024), false);
	}

	ep.id = seg->entry_point;
	ep.distance = distance_to(gs, ep.id);

	/*
	 * Greedy descent to layer 1.  A node scored once is not scored again
	 * (gs->emitted, unused until layer 0, marks them): ep is the nearest
	 * of all scored so far, so a second score could never move it, and
	 * the hops of one layer, and the layers, share many neighbours (on
	 * Fashion-MNIST 60,000 a third of the descent's distances were
	 * repeats).
	 */
	desc_mark(gs, &desc, ep.id);
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

				if (e >= seg->ndocs || BIT_IS_SET(gs->emitted, e))
					continue;
				desc_mark(gs, &desc, e);
				d = distance_to(gs, e);
				if (layer == 1 && gs->quant && desc.nseeds < lengthof(desc.seeds))
				{
					desc.seeds[desc.nseeds].id = e;
					desc.seeds[desc.nseeds++].distance = d;
				}
				if (d < ep.distance)
				{
					ep.distance = d;
					ep.id = e;
					changed = true;
				}
			}
		}
	}
	if (desc.overflow)
		memset(gs->emitted, 0, mapbytes);
	else
		for (k = 0; k < desc.nmarked; k++)
			gs->emitted[desc.marked[k] >> 3] = 0;

	BIT_SET(gs->visited, ep.id);
	cand_heap_push(&gs->cand, ep.distance, ep.id);
	if (!node_out(gs, ep.id))
		hold(gs, ep.distance, ep.id);

	/*
	 * A quantized segment's search on layer 0 starts from every node the
	 * descent scored on layer 1, not from ep alone: their distances are
	 * known, and most of them are near ep, where layer 0's search would
	 * score them again (2-3% of its distances on Fashion-MNIST).
	 */
	for (k = 0; k < desc.nseeds; k++)
	{
		uint32		e = desc.seeds[k].id;

		if (BIT_IS_SET(gs->visited, e))
			continue;
		BIT_SET(gs->visited, e);
		cand_heap_push(&gs->cand, desc.seeds[k].distance, e);
		if (!node_out(gs, e))
			hold(gs, desc.seeds[k].distance, e);
	}

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
	/*
	 * A quantized segment's search holds estimated distances, which must
	 * not tighten the bound of the others; it is searched unbounded.
	 * XXX: offer the exact distances of its rerank pool instead.
	 */
	if (gs->quant)
		bound = NULL;
	if (bound && gs->bound == NULL && gs->exact)
	{
		uint32		i;

		for (i = gs->rankpos; i < gs->nranked && i < gs->rankpos + bound->k; i++)
			GraphBoundOffer(bound, gs->ranked[i].distance);
	}
	gs->bound = bound;
	/* a quarter of ef, at least 10 (or ef, if smaller) */
	gs->bound_floor = Max(Min(gs->ef, 10), gs->ef / 4);
	gs->bound_small = false;

	/*
	 * A segment holding at most 1/SEGVEC_BOUND_SMALL_DIV of the scan's live
	 * docs is expected to give k * share of the first k rows: its floor is
	 * twice that (at least SEGVEC_BOUND_SMALL_FLOOR), and it may stop while
	 * it holds nodes within the bound, which it returns first (as Lucene's
	 * per-leaf k).  Under the size-ratio merge policy the segments next to
	 * the biggest are that small, and a full search of each cost a
	 * streamed-into index 1.4 times a fresh one's buffer accesses at
	 * ef_search 10 (src/README.md, "The shared bound").
	 */
	if (bound && bound->live_docs > 0)
	{
		int64		live = gs->filtered ? gs->npass :
			(int64) gs->seg.ndocs - gs->seg.ntombstones;

		if (live * SEGVEC_BOUND_SMALL_DIV <= bound->live_docs)
		{
			double		expected = 2.0 * bound->k * live / bound->live_docs;
			int			floor = (int) ceil(expected);

			floor = Max(floor, SEGVEC_BOUND_SMALL_FLOOR);
			if (floor < gs->bound_floor)
			{
				gs->bound_floor = floor;
				gs->bound_small = true;
			}
		}
	}
}

/*
 * May a lazy filter's check of a node met at distance d wait?  Once the
 * window is full, a node farther than all of it goes to the overflow heap,
 * and most of a walk's nodes do (at 10% passing, a window of 10 passing
 * nodes is the nearest hundred or so of the 1,600 nodes the walk meets):
 * such a node is held unchecked and checked only if it comes into the
 * window (graph_next), so its filter entry is usually never read.  The
 * first SEGVEC_FILTER_PROBE nodes are checked at once, for
 * filter_walk_over's judgement of the region.  A node held unchecked is
 * not offered to the shared bound until it passes its check (fewer offers
 * leave the bound farther: a search stops no earlier than it would have).
 */
static inline bool
defer_check(GraphScan *gs, double d)
{
	return gs->match != NULL &&
		gs->nchecked >= SEGVEC_FILTER_PROBE &&
		gs->nwindow >= gs->ef &&
		d >= gs->window[gs->nwindow - 1].distance;
}

/*
 * expand() in a far walk (start_far): node's neighbours ids[0 .. count - 1]
 * not visited yet are checked before they are scored, and the passing ones
 * scored, made candidates and held.  A failing one is scored and made a
 * candidate only when node passes, has fewer than M passing neighbours (so
 * fewer than a node of the graph has on each upper layer: its passing
 * neighbours alone may not lead on, which is why ACORN expands the
 * neighbours of failing neighbours) and passing_only is false; otherwise
 * it is left alone, not marked visited (another passing node may route
 * through it later).  *nearest gets the nearest node scored (+Infinity if
 * none); the expansion stops at the first node nearer than improve (-Inf:
 * never), leaving the rest of the list for when node is expanded again.
 */
static void
expand_far(GraphScan *gs, uint32 node, const uint32 *ids, int count,
		   bool passing_only, double improve, GraphCand *nearest)
{
	bool		route;
	int			npassing = 0;
	int			i;

	nearest->distance = get_float8_infinity();

	if (!passing_only && !node_out(gs, node))
		for (i = 0; i < count; i++)
			if (ids[i] < gs->seg.ndocs && !node_out(gs, ids[i]))
				npassing++;
	route = !passing_only && !node_out(gs, node) && npassing < gs->seg.m;

	for (i = 0; i < count; i++)
	{
		uint32		e = ids[i];
		bool		out;
		double		d;

		if (e >= gs->seg.ndocs || BIT_IS_SET(gs->visited, e))
			continue;
		out = node_out(gs, e);
		if (out && !route)
			continue;
		if (gs->budget->visited >= gs->budget->limit)
			break;
		BIT_SET(gs->visited, e);
		d = distance_to(gs, e);
		gs->budget->visited++;
		gs->nvisited++;
		cand_heap_push(&gs->cand, d, e);
		if (!out)
			hold(gs, d, e);
		if (d < nearest->distance)
		{
			nearest->distance = d;
			nearest->id = e;
		}
		if (d < improve)
			break;
	}
}

/*
 * Expand node in a far walk: read its neighbour list and expand_far it.
 */
static void
far_step(GraphScan *gs, uint32 node, bool passing_only, double improve,
		 GraphCand *nearest)
{
	const uint32 *nbrs;
	uint32		ids[2 * SEGVEC_MAX_M];
	int			count;

	CHECK_FOR_INTERRUPTS();
	nbrs = node_neighbors(read_node(gs, node), &count);
	count = Min(count, gs->m0);
	memcpy(ids, nbrs, sizeof(uint32) * count);
	reader_prefetch(gs, ids, count);
	expand_far(gs, node, ids, count, passing_only, improve, nearest);
}

/*
 * Turn a filtered walk whose region is far (filter_region_far) into a far
 * walk, after ACORN (Patel et al., 2024): from here on a node's entry is
 * checked before it is scored, and a failing node routes only when it is
 * met from a passing one with few passing neighbours (expand_far), so the
 * walk goes from passing node to passing node, through at most one
 * failing node between two (ACORN's two-hop expansion), and never spreads
 * through the failing region around the query.  It starts afresh from
 * passing nodes: those it holds, and seeds, SEGVEC_FAR_SEEDS passing nodes
 * spread evenly over the segment's node numbers (so over every region the
 * passing nodes form, as far as doc id order is unrelated to the
 * vectors), met by checking every (npass / seeds)-th node's entry; from
 * each seed a greedy path through passing nodes goes to the nearest one it
 * reaches, so that the walk holds the near side of every region a seed
 * fell in, not only of the nearest seed's region: the best-first walk
 * after it expands no candidate farther than its window, and a region
 * whose seed lies on its far side would otherwise never be walked (on
 * test/sql/filter_recall.sql's 50% far filter, 10 clusters, recall@10
 * 0.88 without the paths).  Its window widens to 1.5 times the scan's ef
 * (SEGVEC_FAR_WIDTH: the top 100 of that filter at ef 40 had recall 0.946
 * with a window of ef, 0.952 with 1.5 ef).  What was returned, or is
 * in the rerank pool or the look-ahead (emitted), is never met again; the
 * candidates of the walk so far (most of them failing, near the query)
 * are dropped.  A far walk that runs dry gives way to exact scoring
 * (graph_next), so the scan stays complete.
 */
#define SEGVEC_FAR_SEEDS(gs)	((gs)->ef_scan)
#define SEGVEC_FAR_WIDTH(gs)	((gs)->ef_scan + (gs)->ef_scan / 2)

static void
start_far(GraphScan *gs)
{
	const SegvecSegment *seg = &gs->seg;
	Size		mapbytes = (seg->ndocs + 7) / 8 + 1;
	GraphCand  *held;
	GraphCand  *seeds;
	int			nheld = 0;
	int			nseeds = 0;
	int			want = Max(SEGVEC_FAR_SEEDS(gs), 1);
	int64		stride = Max(gs->npass / want, 1);
	int64		id;
	int			i;

	gs->far = true;
	memcpy(gs->visited, gs->emitted, mapbytes);
	gs->cand.count = 0;

	/* what the walk holds stays held, each node a candidate */
	held = palloc(sizeof(GraphCand) * (gs->nwindow + gs->overflow.count + 1));
	for (i = 0; i < gs->nwindow; i++)
		held[nheld++] = gs->window[i];
	for (i = 0; i < gs->overflow.count; i++)
	{
		GraphCand	o = gs->overflow.items[i];

		if (gs->match != NULL && !BIT_IS_SET(gs->fknown, o.id))
		{
			/* held unchecked (defer_check): checked now, as graph_next does */
			if (node_out(gs, o.id))
				continue;
			if (gs->bound)
				GraphBoundOffer(gs->bound, o.distance);
		}
		held[nheld++] = o;
	}
	gs->nwindow = 0;
	gs->overflow.count = 0;
	gs->ef = Max(gs->ef, SEGVEC_FAR_WIDTH(gs));
	for (i = 0; i < nheld; i++)
	{
		BIT_SET(gs->visited, held[i].id);
		cand_heap_push(&gs->cand, held[i].distance, held[i].id);
		keep(gs, held[i].distance, held[i].id);
	}
	pfree(held);

	/* the seeds */
	seeds = palloc(sizeof(GraphCand) * want);
	for (id = stride / 2; id < seg->ndocs && nseeds < want; id += stride)
	{
		double		d;

		if (BIT_IS_SET(gs->visited, id) || node_out(gs, (uint32) id))
			continue;
		if (gs->budget->visited >= gs->budget->limit)
			break;
		BIT_SET(gs->visited, id);
		d = distance_to(gs, (uint32) id);
		gs->budget->visited++;
		gs->nvisited++;
		cand_heap_push(&gs->cand, d, (uint32) id);
		hold(gs, d, (uint32) id);
		seeds[nseeds].distance = d;
		seeds[nseeds++].id = (uint32) id;
	}

	/*
	 * From each seed (nearest first), greedily through passing nodes to
	 * the nearest it reaches: each step takes the first neighbour nearer
	 * than the path's node, and a path ends where no neighbour not visited
	 * yet is nearer (so it stops soon once it meets an earlier path)
	 */
	sort_cands(seeds, nseeds);
	for (i = 0; i < nseeds; i++)
	{
		GraphCand	cur = seeds[i];
		GraphCand	next;

		for (;;)
		{
			if (gs->budget->visited >= gs->budget->limit)
				break;
			far_step(gs, cur.id, true, cur.distance, &next);
			if (!(next.distance < cur.distance))
				break;
			cur = next;
		}
	}
	pfree(seeds);
}

/*
 * Expand the nearest unexpanded candidate: compute the distance of each
 * neighbour not seen yet, make it a candidate, and hold it if it is live.
 * Charges the distances to the scan's budget, and stops when it is spent
 * (so a scan visits at most segvec.max_scan_tuples docs).
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

	if (gs->far)
	{
		GraphCand	nearest;

		far_step(gs, c.id, false, -get_float8_infinity(), &nearest);
		return;
	}

	CHECK_FOR_INTERRUPTS();
	rec = read_node(gs, c.id);
	nbrs = node_neighbors(rec, &count);
	count = Min(count, gs->m0);
	memcpy(ids, nbrs, sizeof(uint32) * count);
	reader_prefetch(gs, ids, count);

	for (i = 0; i < count; i++)
	{
		uint32		e = ids[i];
		double		d;

		if (e >= gs->seg.ndocs || BIT_IS_SET(gs->visited, e))
			continue;
		/* the budget is exact: the rest of the list stays unvisited */
		if (gs->budget->visited >= gs->budget->limit)
			break;
		BIT_SET(gs->visited, e);
		d = distance_to(gs, e);
		gs->budget->visited++;
		gs->nvisited++;
		cand_heap_push(&gs->cand, d, e);
		if (defer_check(gs, d))
		{
			/* held unchecked: checked if it ever comes into the window */
			if (!BIT_IS_SET(gs->tombstones, e))
				cand_heap_push(&gs->overflow, d, e);
			continue;
		}
		gs->nchecked++;
		if (!node_out(gs, e))
		{
			hold(gs, d, e);
			gs->nvisited_pass++;
		}
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
			(gs->bound_small || gs->window[0].distance > limit) &&
			gs->cand.items[0].distance > gs->window[gs->bound_floor - 1].distance)
		{
			bounded = true;
			break;
		}
		if (filter_walk_over(gs))
		{
			/* give way to exact scoring (pull_next), returning nothing */
			gs->switch_exact = true;
			if (RecoveryInProgress())
				release_block(gs->index, &gs->seg, &gs->buf);
			return GRAPH_SCAN_DONE;
		}
		if (filter_region_far(gs))
		{
			start_far(gs);
			continue;
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
	{
		/*
		 * A far walk that has run dry may have missed passing nodes that
		 * only a path through two failing ones reaches: exact scoring
		 * returns the rest (whatever the budget, as filter_walk_over).
		 */
		if (gs->far)
		{
			gs->switch_exact = true;
			if (RecoveryInProgress())
				release_block(gs->index, &gs->seg, &gs->buf);
		}
		return GRAPH_SCAN_DONE;
	}
	*c = gs->window[0];
	gs->nwindow--;
	memmove(gs->window, gs->window + 1, sizeof(GraphCand) * gs->nwindow);
	while (gs->overflow.count > 0)
	{
		GraphCand	o = cand_heap_pop(&gs->overflow);

		if (gs->match != NULL && !BIT_IS_SET(gs->fknown, o.id))
		{
			/*
			 * held unchecked (defer_check): checked now, and a passing
			 * node offered to the shared bound, as hold() would have
			 */
			if (node_out(gs, o.id))
				continue;
			if (gs->bound)
				GraphBoundOffer(gs->bound, o.distance);
		}
		gs->window[gs->nwindow++] = o;
		break;
	}
	return GRAPH_SCAN_ROW;
}

/*
 * Quantized segment: the next node in exact distance order: take nodes
 * from the graph search into the rerank pool (each marked emitted and
 * scored exactly) until the pool holds gs->rerank nodes and its nearest is
 * no farther than gs->floor, then take that nearest.  False when graph and
 * pool are both empty.
 */
static bool
rerank_next(GraphScan *gs, GraphCand *c)
{
	GraphCand	g;

	for (;;)
	{
		/*
		 * The pool's nearest may go once the pool is full and nothing the
		 * graph search yields later can be nearer: it yields in estimated
		 * order, and GraphQuantLowerBound bounds the exact distances from
		 * an estimate.
		 */
		if (gs->pool.count > 0 && gs->pool.count >= gs->rerank &&
			gs->pool.items[0].distance <= gs->floor)
			break;
		if (gs->exact)
		{
			/* exact mode (exact_est): the nodes ranked by their estimates */
			if (gs->rankpos >= gs->nranked)
			{
				gs->floor = get_float8_infinity();
				break;
			}
			g = gs->ranked[gs->rankpos++];
			if (BIT_IS_SET(gs->emitted, g.id))
				continue;
			if (gs->rankpos < gs->nranked)
				prefetch_vector(gs, gs->ranked[gs->rankpos].id);
		}
		else if (graph_next(gs, &g) != GRAPH_SCAN_ROW)
		{
			if (gs->switch_exact)
				return false;	/* the pool goes back to exact scoring */
			gs->floor = get_float8_infinity();
			break;
		}
		/* the window's new nearest is most likely the next to be scored */
		else if (gs->nwindow > 0)
			prefetch_vector(gs, gs->window[0].id);
		BIT_SET(gs->emitted, g.id);
		cand_heap_push(&gs->pool, exact_distance(gs, g.id), g.id);
		gs->floor = GraphQuantLowerBound(&gs->qq, g.distance);
	}
	/* on a standby, every vector page the scores came from checked again */
	if (RecoveryInProgress())
		release_block(gs->index, &gs->seg, &gs->vbuf);
	if (gs->pool.count == 0)
		return false;
	*c = cand_heap_pop(&gs->pool);
	return true;
}

/*
 * Before exact scoring takes over: give the pool's nodes back (unmark
 * them), so that exact scoring ranks them with the rest.
 */
static void
unpool(GraphScan *gs)
{
	int			i;

	for (i = 0; i < gs->pool.count; i++)
	{
		uint32		id = gs->pool.items[i].id;

		gs->emitted[id >> 3] &= (uint8) ~(1 << (id & 7));
	}
	gs->pool.count = 0;
}

/*
 * Before exact scoring takes over: give the reorder stage's rows back
 * (unmark them), so that exact scoring ranks them with the rest.
 */
static void
unahead(GraphScan *gs)
{
	int			i;

	for (i = 0; i < gs->ahead.count; i++)
	{
		uint32		id = gs->ahead.items[i].id;

		gs->emitted[id >> 3] &= (uint8) ~(1 << (id & 7));
	}
	gs->ahead.count = 0;
}

/* the docs a scan of the segment can return: the passing ones if filtered */
static inline int64
scan_size(GraphScan *gs)
{
	return gs->filtered ? gs->npass : (int64) gs->seg.ndocs;
}

/*
 * The next node the search itself yields (graph, rerank pool or exact
 * ranking), marked emitted: GRAPH_SCAN_ROW, GRAPH_SCAN_DONE, or
 * GRAPH_SCAN_BOUNDED with c->distance the bound.
 */
static GraphScanResult
pull_next(GraphScan *gs, GraphCand *c)
{
	GraphScanResult r;

	for (;;)
	{
		if (gs->exact && gs->exact_est)
			return rerank_next(gs, c) ? GRAPH_SCAN_ROW : GRAPH_SCAN_DONE;
		if (gs->exact)
		{
			if (gs->rankpos >= gs->nranked)
				return GRAPH_SCAN_DONE;
			*c = gs->ranked[gs->rankpos++];
			if (BIT_IS_SET(gs->emitted, c->id))
				continue;
			BIT_SET(gs->emitted, c->id);
			return GRAPH_SCAN_ROW;
		}

		/*
		 * Once the first ef rows and 1/SEGVEC_EXACT_SWITCH_DIV of the
		 * segment's docs are out, a segment of at most exact_limit docs is
		 * scored whole: exact from there on, and cheaper than a long graph
		 * walk through most of it.  What the rerank pool and the reorder
		 * stage hold is given back first.
		 */
		if (gs->nreturned >= gs->ef && scan_size(gs) <= gs->exact_limit)
		{
			/*
			 * Heading for the switch: the docs the walk missed and that are
			 * nearer than the last row returned would be late finds there,
			 * so under strict order the look-ahead keeps half of the
			 * rows returned, which exact scoring then ranks again.
			 */
			if (gs->budget->skip_late && gs->lookahead < gs->nreturned / 2)
				gs->lookahead = Min(gs->nreturned / 2, SEGVEC_LOOKAHEAD_MAX);
		}
		if (gs->nreturned >= gs->ef &&
			gs->nreturned * SEGVEC_EXACT_SWITCH_DIV >= scan_size(gs) &&
			scan_size(gs) <= gs->exact_limit)
		{
			if (gs->quant)
				unpool(gs);
			unahead(gs);
			start_exact(gs);
			continue;
		}
		if (gs->quant)
			r = rerank_next(gs, c) ? GRAPH_SCAN_ROW : GRAPH_SCAN_DONE;
		else
			r = graph_next(gs, c);
		if (r == GRAPH_SCAN_DONE && gs->switch_exact)
		{
			/* a filtered walk gave way: what it holds is ranked again */
			if (gs->quant)
				unpool(gs);
			unahead(gs);
			start_exact(gs);
			continue;
		}
		if (r == GRAPH_SCAN_ROW)
			BIT_SET(gs->emitted, c->id);
		return r;
	}
}

/*
 * GraphScanNext: the next node in distance order: GRAPH_SCAN_ROW with its
 * distance (as the SQL operator computes it; NaN reported as +Infinity) and
 * heap TID; GRAPH_SCAN_DONE when the segment has nothing more; or, for a
 * bounded search (GraphScanSetBound), GRAPH_SCAN_BOUNDED with in *distance
 * a distance no later row of the segment is nearer than: call again after
 * lifting the bound to get the row.
 *
 * The reorder stage: what the search yields goes into gs->ahead, and the
 * nearest held row is returned once more than gs->lookahead rows are held
 * (in exact mode at once: the ranking is sorted), or the search has
 * nothing more.  A late find within the look-ahead is so returned in its
 * place.  One nearer than the row returned last (beyond the look-ahead) is
 * counted in budget->late, doubles the look-ahead and is skipped under
 * strict order; under relaxed (look-ahead 0) rows go out as found.
 */
GraphScanResult
GraphScanNext(GraphScan *gs, double *distance, ItemPointer heaptid)
{
	GraphCand	c;
	SegvecDocInfo doc;
	GraphScanResult r;

	for (;;)
	{
		if (gs->ahead.count > 0 &&
			(gs->inner_done || gs->exact ||
			 gs->ahead.count > gs->lookahead))
		{
			c = cand_heap_pop(&gs->ahead);
			break;
		}
		if (gs->inner_done)
			goto done;
		r = pull_next(gs, &c);
		if (r == GRAPH_SCAN_DONE)
		{
			gs->inner_done = true;
			continue;
		}
		if (r == GRAPH_SCAN_BOUNDED)
		{
			/* nothing the search yields later is nearer than c.distance */
			if (gs->ahead.count > 0 &&
				float8_cmp_internal(gs->ahead.items[0].distance, c.distance) <= 0)
			{
				c = cand_heap_pop(&gs->ahead);
				break;
			}
			*distance = c.distance;
			return GRAPH_SCAN_BOUNDED;
		}
		if (gs->budget->skip_late &&
			float8_cmp_internal(c.distance, gs->last) < 0)
		{
			/* a late find beyond the look-ahead (the merge counts relaxed's) */
			gs->budget->late++;
			gs->lookahead = Min(Max(gs->lookahead * 2, 1),
								SEGVEC_LOOKAHEAD_MAX);
			continue;
		}
		cand_heap_push(&gs->ahead, c.distance, c.id);
	}

	gs->nreturned++;
	*distance = c.distance;
	if (float8_cmp_internal(c.distance, gs->last) > 0)
		gs->last = c.distance;
	GraphReadDocs(gs->index, &gs->seg, c.id, 1, &doc);
	*heaptid = doc.heaptid;
	return GRAPH_SCAN_ROW;

done:
	reader_release(gs);
	return GRAPH_SCAN_DONE;
}

/*
 * GraphSegmentSplit: the bytes of seg's extent by what they hold: codes
 * (the quantized part of the node records, and the quantizer's pages),
 * float4 vectors, graph (neighbour lists, node headers, padding, the
 * upper-layer area) and docs (doc area, tombstone pages and the filter
 * area).  They add up to the extent's size.
 */
void
GraphSegmentSplit(const SegvecSegment *seg, int dim, int64 *codes,
				  int64 *vectors, int64 *graph, int64 *docs)
{
	/*
	 * the filter area, the extent's last pages, and the postings before
	 * it count with the docs
	 */
	uint32		npost = GraphPostingsBlock(seg, dim) != InvalidBlockNumber ?
		seg->npostpages : 0;
	BlockNumber end = seg->start + seg->npages - GraphFilterPages(seg) - npost;
	int64		nodebytes;

	*docs = (int64) (seg->upper_start - seg->start + GraphFilterPages(seg) +
					 npost) * BLCKSZ;
	if (seg->quant != SEGVEC_QUANT_NONE)
	{
		nodebytes = (int64) (seg->vec_start - seg->node_start) * BLCKSZ;
		*codes = (int64) seg->ndocs * GraphQuantRecordBytes(seg->quant, dim) +
			(int64) (seg->node_start - seg->qparam_start) * BLCKSZ;
		*vectors = (int64) (end - seg->vec_start) * BLCKSZ;
		*graph = nodebytes - (int64) seg->ndocs * GraphQuantRecordBytes(seg->quant, dim) +
			(int64) (seg->qparam_start - seg->upper_start) * BLCKSZ;
	}
	else
	{
		nodebytes = (int64) (end - seg->node_start) * BLCKSZ;
		*codes = 0;
		*vectors = (int64) seg->ndocs * dim * sizeof(float);
		*graph = nodebytes - *vectors +
			(int64) (seg->node_start - seg->upper_start) * BLCKSZ;
	}
}

/*
 * GraphScanEnd: release what the scan holds (its memory is the caller's
 * context's).
 */
void
GraphScanEnd(GraphScan *gs)
{
	reader_release(gs);
}

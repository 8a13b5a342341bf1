/*-------------------------------------------------------------------------
 *
 * graphmerge.c
 *	  Merge immutable segments into one, with memory that does not depend
 *	  on the vectors' dimension.
 *
 * The merged graph is seeded from the largest input's graph and the other
 * inputs' live docs are inserted into it, as Lucene merges HNSW segments
 * ("initializing from the biggest segment"), instead of building it from
 * nothing:
 *
 *	1. Plan.  The inputs' doc areas are merged in doc id order, skipping
 *	   tombstoned nodes (as of the tombstone bitmaps the caller read): that
 *	   order is the output's node order.  A seed node keeps its level; the
 *	   others draw one (an exact duplicate of an earlier node, by vector
 *	   checksum, gets none: it joins a ring on layer 0, see graphbuild.c).
 *	   The layout follows, and the extent is added (SegvecAllocExtent).
 *	2. Copy.  A second pass writes the doc area and every node record: its
 *	   vector read from its input's node page or, for a quantized input,
 *	   its vector area, and for a seed node its layer-0 list and
 *	   upper-layer lists with node numbers mapped to the output's,
 *	   tombstoned neighbours dropped.  The output has the quantization the
 *	   caller asks for (the index's option), whatever its inputs': a
 *	   quantized output gets its vectors in its vector area and a code per
 *	   node, computed with the output's quantizer (trained before this pass:
 *	   SQ8 from the union of the inputs' ranges, RaBitQ a fresh seed and the
 *	   mean of the output's vectors) or, for SQ8, copied from an input whose
 *	   quantizer covers that union; SQ8's error bound and least norm are
 *	   measured over the output's vectors here (src/README.md, "Merging
 *	   quantized segments").
 *	3. Repair the seed.  A seed node that lost neighbours to tombstones gets
 *	   a new list chosen by the heuristic from what it kept and the live
 *	   neighbours of the neighbours it lost (the local repair of deletions
 *	   in FreshDiskANN, Singh et al., 2021).
 *	4. Insert every other node (INSERT, algorithm 1, graphbuild.c), in a
 *	   random order (GraphShuffleInsertion; exact duplicates last), then
 *	   run the connectivity repair over the whole graph.  A node's
 *	   neighbours in its own input's graph that are in the output's graph
 *	   already join its insertion's entry points (input_hints).
 *	5. Write the upper-layer pages from memory and WAL-log every page of the
 *	   extent as a full image.  The caller installs the segment.
 *
 * From step 2 on the builder is *paged*: vectors and layer-0 lists live in
 * the output's node pages only, in shared buffers, and are read and
 * written there (pin and, to write, an exclusive lock per access; no other
 * backend can reach these pages).  Memory holds per node its level,
 * upper-layer lists, in-degree, duplicate link and search stamp, so a
 * merge's memory is a number of bytes per doc that depends on M, never on
 * the dimension (src/README.md, "Merge memory"; GraphMergeMemoryBound).
 * Input segments are read with a pin only: they are installed and never
 * change, and only merges (which the caller serialises) drop them.
 *
 * src/graph/graphmerge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xloginsert.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "graph/graph_int.h"
#include "graph/quant.h"
#include "hooks/testhooks.h"

#define NO_NODE		PG_UINT32_MAX

/* segvec.merge_in_memory: keep vectors in memory when they fit */
bool		segvec_merge_in_memory = true;

#define BIT_IS_SET(map, i)	(((map)[(i) >> 3] >> ((i) & 7)) & 1)
#define BIT_SET(map, i)		((map)[(i) >> 3] |= (uint8) (1 << ((i) & 7)))

/* ----------------
 * Reading an input segment (installed, immutable: pin only)
 * ----------------
 */
typedef struct SegReader
{
	Relation	index;
	const SegvecSegment *seg;
	Buffer		nodebuf;		/* pinned node page */
	Buffer		docbuf;			/* pinned doc-area page */
	Buffer		upbuf;			/* pinned upper-layer page */
	Buffer		vecbuf;			/* pinned vector-area page (quantized) */
	Buffer		filtbuf;		/* pinned filter-area page */
	char	   *spanbuf;		/* a record spanning pages, copied */
	float	   *veccopy;		/* a vector crossing pages, copied */
	int			dim;
} SegReader;

static void
unpin(Buffer *buf)
{
	if (BufferIsValid(*buf))
		ReleaseBuffer(*buf);
	*buf = InvalidBuffer;
}

static void
reader_init(SegReader *r, Relation index, const SegvecSegment *seg, int dim)
{
	r->index = index;
	r->seg = seg;
	r->dim = dim;
	r->nodebuf = r->docbuf = r->upbuf = r->vecbuf = InvalidBuffer;
	r->filtbuf = InvalidBuffer;
	r->spanbuf = seg->pages_per_node > 0 ? palloc(seg->node_size) : NULL;
	r->veccopy = seg->quant != SEGVEC_QUANT_NONE ?
		palloc(sizeof(float) * Max(dim, 1)) : NULL;
}

static void
reader_end(SegReader *r)
{
	unpin(&r->nodebuf);
	unpin(&r->docbuf);
	unpin(&r->upbuf);
	unpin(&r->vecbuf);
	unpin(&r->filtbuf);
}

/* node id's record, valid until the reader's next record */
static char *
reader_node(SegReader *r, uint32 id)
{
	const SegvecSegment *seg = r->seg;
	Size		off;
	BlockNumber blk = GraphNodeBlock(seg, id, &off);
	Size		done = 0;

	if (seg->nodes_per_page > 0)
		return GraphPinBlock(r->index, &r->nodebuf, blk) + off;
	while (done < seg->node_size)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE, seg->node_size - done);

		memcpy(r->spanbuf + done, GraphPinBlock(r->index, &r->nodebuf, blk++), len);
		done += len;
	}
	return r->spanbuf;
}

/*
 * node id's float4 vector, valid until the reader's next record or vector:
 * in its node record, or in a quantized segment in the packed vector area
 * (copied when it crosses a page boundary)
 */
static const float *
reader_vector(SegReader *r, uint32 id)
{
	const SegvecSegment *seg = r->seg;

	if (seg->quant == SEGVEC_QUANT_NONE)
		return (const float *) (reader_node(r, id) +
								GraphRecVectorOffset(seg->m));
	return GraphAreaVector(r->index, seg, id, r->dim, &r->vecbuf, r->veccopy);
}

/* a quantized segment's quantizer parameters, into params */
static void
reader_params(SegReader *r, float *params)
{
	Size		total = sizeof(float) * GraphQuantParamFloats(r->seg->quant, r->dim);
	Size		done = 0;
	BlockNumber blk = r->seg->qparam_start;

	while (done < total)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE, total - done);

		memcpy((char *) params + done,
			   GraphPinBlock(r->index, &r->vecbuf, blk++), len);
		done += len;
	}
	unpin(&r->vecbuf);
}

static const SegvecDocInfo *
reader_doc(SegReader *r, uint32 id)
{
	char	   *data = GraphPinBlock(r->index, &r->docbuf,
								 r->seg->doc_start + id / SEGVEC_DOCS_PER_PAGE);

	return (const SegvecDocInfo *) data + id % SEGVEC_DOCS_PER_PAGE;
}

/* node id's filter entry (format.h), valid until the reader's next one */
static const char *
reader_filters(SegReader *r, uint32 id)
{
	const SegvecSegment *seg = r->seg;
	uint32		per_page = SEGVEC_FILTERS_PER_PAGE(seg->nfilters);
	BlockNumber area = seg->start + seg->npages - GraphFilterPages(seg);

	return GraphPinBlock(r->index, &r->filtbuf, area + id / per_page) +
		(Size) (id % per_page) * SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);
}

static uint32
reader_upper(SegReader *r, Size pos)
{
	char	   *data = GraphPinBlock(r->index, &r->upbuf,
								 r->seg->upper_start + pos / SEGVEC_UPPER_PER_PAGE);

	return ((uint32 *) data)[pos % SEGVEC_UPPER_PER_PAGE];
}

/* ----------------
 * The inputs merged in doc id order
 * ----------------
 */
typedef struct MergeCursor
{
	SegReader	r;
	const uint8 *tombstones;
	uint32		pos;			/* current node */
	bool		done;
	uint64		docid;			/* its doc id */
} MergeCursor;

static void
cursor_settle(MergeCursor *c)
{
	while (c->pos < c->r.seg->ndocs &&
		   c->tombstones && BIT_IS_SET(c->tombstones, c->pos))
		c->pos++;
	c->done = c->pos >= c->r.seg->ndocs;
	if (!c->done)
		c->docid = reader_doc(&c->r, c->pos)->docid;
}

static void
cursors_start(MergeCursor *cs, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		cs[i].pos = 0;
		cursor_settle(&cs[i]);
	}
}

/* the input whose current doc has the lowest doc id, or -1 when all done */
static int
cursors_next(MergeCursor *cs, int n)
{
	int			best = -1;
	int			i;

	for (i = 0; i < n; i++)
		if (!cs[i].done && (best < 0 || cs[i].docid < cs[best].docid))
			best = i;
	return best;
}

static void
cursor_advance(MergeCursor *c)
{
	c->pos++;
	cursor_settle(c);
}

/* ----------------
 * Paged storage of the builder (graphwrite.c): releasing its pins
 * ----------------
 */

static void
paged_release(HnswBuilder *b)
{
	unpin(&b->vpin[0]);
	unpin(&b->vpin[1]);
	unpin(&b->lpin);
	b->vid[0] = b->vid[1] = -1;
}

/* ----------------
 * Writing the output's pages sequentially in the copy pass
 * ----------------
 */
typedef struct PageFiller
{
	Relation	index;
	const SegvecSegment *seg;
	Buffer		buf;			/* locked exclusively, or Invalid */
} PageFiller;

/* The data area of fresh page blkno of the output, initialised */
static char *
filler_page(PageFiller *f, BlockNumber blkno)
{
	if (BufferIsValid(f->buf) && BufferGetBlockNumber(f->buf) == blkno)
		return PageGetContents(BufferGetPage(f->buf));
	if (BufferIsValid(f->buf))
	{
		MarkBufferDirty(f->buf);
		UnlockReleaseBuffer(f->buf);
	}
	f->buf = ReadBufferExtended(f->index, MAIN_FORKNUM, blkno,
								RBM_ZERO_AND_LOCK, NULL);
	GraphInitSegmentPage(BufferGetPage(f->buf), f->seg);
	return PageGetContents(BufferGetPage(f->buf));
}

static void
filler_end(PageFiller *f)
{
	if (BufferIsValid(f->buf))
	{
		MarkBufferDirty(f->buf);
		UnlockReleaseBuffer(f->buf);
	}
	f->buf = InvalidBuffer;
}

/* write node record rec (node_size bytes) of node o into the node pages */
static void
write_record(PageFiller *f, uint32 o, const char *rec)
{
	const SegvecSegment *seg = f->seg;
	Size		off;
	BlockNumber blk = GraphNodeBlock(seg, o, &off);
	Size		done = 0;

	if (seg->nodes_per_page > 0)
	{
		memcpy(filler_page(f, blk) + off, rec, seg->node_size);
		return;
	}
	while (done < seg->node_size)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE, seg->node_size - done);

		memcpy(filler_page(f, blk++), rec + done, len);
		done += len;
	}
}

/*
 * write node o's filter entry (entry, or zeros when NULL) into the filter
 * area (nodes are written in order, so pages fill in order)
 */
static void
write_filters(PageFiller *f, uint32 o, const char *entry)
{
	const SegvecSegment *seg = f->seg;
	uint32		per_page = SEGVEC_FILTERS_PER_PAGE(seg->nfilters);
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);
	BlockNumber area = seg->start + seg->npages - GraphFilterPages(seg);
	char	   *to = filler_page(f, area + o / per_page) +
		(Size) (o % per_page) * fbytes;

	if (entry)
		memcpy(to, entry, fbytes);
	else
		memset(to, 0, fbytes);
}

/*
 * write vector vec (dim floats) of node o into the packed vector area of a
 * quantized output (nodes are written in order, so pages fill in order)
 */
static void
write_vector(PageFiller *f, uint32 o, const float *vec, int dim)
{
	Size		vlen = sizeof(float) * dim;
	Size		off = (Size) o * vlen;
	BlockNumber blk = f->seg->vec_start + off / SEGVEC_SEGPAGE_USABLE;
	Size		done = 0;

	off %= SEGVEC_SEGPAGE_USABLE;
	while (done < vlen)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE - off, vlen - done);

		memcpy(filler_page(f, blk++) + off, (const char *) vec + done, len);
		done += len;
		off = 0;
	}
}

/* ----------------
 * Memory
 * ----------------
 */

/*
 * GraphMergeMemoryBound: the most memory a merge into n docs with M = m,
 * ef_construction, upper_size upper-layer entries and ninputs inputs
 * takes: per doc 42 bytes
 * (46 for ip) in the plan step — level 1, upper-layer offset 4, in-degree
 * 4, duplicate link 4, checksum 8, duplicate table at most 16, input maps
 * 4, bitmaps 1/4 — and later at most 34 (38): level, offset, in-degree
 * and duplicate link (13), the search stamps (4), the input maps (4), each
 * node's input doc (8), bitmaps (3/8) and the insertion order (4), or once
 * the last three are freed the connectivity repair's queue and marks (5);
 * the caller adds 4 bytes per tombstoned input doc (the input maps have a
 * slot for every input doc); plus 4 bytes per upper-layer
 * entry, plus a constant for the inputs' readers, the candidate heaps and
 * the repair's candidate lists and an insertion's back links (which do
 * not grow with n), and the
 * vector-sized buffers (a vector copy per input and four for the builder,
 * a quantizer's parameters per input and for the output, a RaBitQ
 * output's centroid sum and transform: dim-sized, not n-sized).  node_size is the output's record size, dim the dimension.
 */
Size
GraphMergeMemoryBound(int64 n, int m, int ef_construction, Size upper_size,
					  int ninputs, SegvecMetric metric, Size node_size,
					  int dim)
{
	Size		vbytes = sizeof(float) * (Size) dim;
	Size		pbytes = sizeof(float) *
		Max(GraphSq8ParamFloats(dim), GraphRabitqParamFloats(dim));
	Size		rbytes = sizeof(double) * (Size) dim +
		sizeof(float) * GraphRabitqPadded(dim) +
		sizeof(uint64) * GRAPH_RABITQ_ROUNDS * GraphRabitqPadded(dim) / 64;
	Size		perdoc = metric == SEGVEC_METRIC_IP ? 46 : 42;
	Size		fixed;
	int			m0 = 2 * m;
	int			wide = Max(ef_construction, m0) + 2;

	fixed = 64 * 1024 +			/* contexts, chunk headers, small arrays */
		ninputs * (sizeof(MergeCursor) + node_size + vbytes + pbytes) +
		4 * node_size +			/* record buffers */
		4 * vbytes + pbytes +	/* vector buffers, the output's quantizer */
		rbytes +				/* RaBitQ: centroid sum, transform */
		(Size) (m0 + m0 * m0) * sizeof(GraphCand) * 2 +	/* seed repair */
		(Size) wide * 16 * sizeof(GraphCand) +	/* heaps (which grow),
												 * found, pruned, eps */
		(Size) (m0 + SEGVEC_MAX_LEVEL * m) * sizeof(GraphCand);	/* back links */
	return (Size) n * perdoc + upper_size * sizeof(uint32) + fixed;
}

/*
 * GraphMergeDocBytes: memory per doc of a merge at M = m, for the merge
 * policy (a bound on the expected upper-layer share: a node has on average
 * 1 / (M - 1) upper layers, each 4 * (M + 1) bytes; counted twice).
 */
Size
GraphMergeDocBytes(int m)
{
	return 46 + (Size) ceil(2.0 * 4 * (m + 1) / Max(m - 1, 1));
}

/* ----------------
 * The merge
 * ----------------
 */

/*
 * Seed repair: node o of the output, which was seed node j, lost the
 * neighbours its source list held that are gone (tombstoned); choose its
 * list anew from what it kept and the live neighbours of those it lost.
 */
static void
repair_seed_node(HnswBuilder *b, SegReader *seed, const uint32 *seedmap,
				 uint32 j, uint32 o, GraphCand *cands, uint32 *lost)
{
	int			ncands = 0;
	int			nlost = 0;
	int			count,
				k,
				i,
				nnew;
	uint32	   *cur;
	uint32		old[2 * SEGVEC_MAX_M];
	int			nold;
	uint32		newl[2 * SEGVEC_MAX_M];
	char	   *rec;
	int			limit = Max(b->ef_construction, b->m0);

	if (++b->stamp == 0)
	{
		memset(b->visited, 0, sizeof(uint32) * b->maxn);
		b->stamp = 1;
	}
	b->visited[o] = b->stamp;

	cur = GraphGetList(b, o, &nold, 0);
	memcpy(old, cur, sizeof(uint32) * nold);
	for (i = 0; i < nold; i++)
	{
		b->visited[old[i]] = b->stamp;
		cands[ncands].id = old[i];
		cands[ncands++].distance = GraphNodeDistance(b, o, old[i]);
	}

	/* the source list's neighbours that are gone */
	rec = reader_node(seed, j);
	count = Min(((SegvecNodeHeader *) rec)->nneighbors, b->m0);
	for (k = 0; k < count; k++)
	{
		uint32		t = GraphRecNeighbors(rec)[k];

		if (t < seed->seg->ndocs && seedmap[t] == NO_NODE)
			lost[nlost++] = t;
	}
	for (k = 0; k < nlost; k++)
	{
		int			tc;

		rec = reader_node(seed, lost[k]);
		tc = ((SegvecNodeHeader *) rec)->nneighbors;
		for (i = 0; i < tc && i < b->m0; i++)
		{
			uint32		u = GraphRecNeighbors(rec)[i];
			uint32		mu;

			if (u >= seed->seg->ndocs || (mu = seedmap[u]) == NO_NODE ||
				b->visited[mu] == b->stamp)
				continue;
			b->visited[mu] = b->stamp;
			cands[ncands].id = mu;
			cands[ncands++].distance = GraphNodeDistance(b, o, mu);
		}
	}

	qsort(cands, ncands, sizeof(GraphCand), cand_cmp);
	ncands = Min(ncands, limit);
	nnew = GraphSelectNeighbors(b, cands, ncands, b->m0, newl, true);

	/* in-degrees: links dropped and added */
	for (i = 0; i < nold; i++)
	{
		for (k = 0; k < nnew; k++)
			if (newl[k] == old[i])
				break;
		if (k == nnew)
			b->indeg0[old[i]]--;
	}
	for (k = 0; k < nnew; k++)
	{
		for (i = 0; i < nold; i++)
			if (newl[k] == old[i])
				break;
		if (i == nold)
			b->indeg0[newl[k]]++;
	}
	GraphStoreList(b, o, newl, nnew);
}

/*
 * Can the output of a merge of inputs have label postings?  Yes when some
 * column may (postable, SegvecIndexFilterPostable) and every input has
 * label postings in it.
 */
static bool
merge_has_labels(Relation index, const SegvecSegment *inputs, int ninputs,
				 int dim, int nfilters, const uint32 *postable)
{
	bool		some = false;
	int			c;
	int			i;

	for (c = 0; c < nfilters; c++)
	{
		bool		all = true;

		if (postable[c] != SEGVEC_POSTINGS_COLUMN_BITS)
			continue;
		for (i = 0; i < ninputs && all; i++)
		{
			GraphPostings p;

			if (inputs[i].nfilters != nfilters ||
				!GraphPostingsOpen(index, &inputs[i], dim, &p))
			{
				all = false;
				break;
			}
			all = GraphPostingsHasLabels(&p, c);
			GraphPostingsClose(&p);
		}
		some = some || all;
	}
	return some;
}

/*
 * The labels of the output's nodes in the label array columns where every
 * input has label postings: their pairs, renumbered by maps (per input,
 * its nodes' numbers in the output, NO_NODE for those dropped), rather
 * than read again; the other columns' labels not known.
 */
static GraphLabels *
merge_labels(Relation index, const SegvecSegment *inputs, int ninputs,
			 int dim, int nfilters, const uint32 *postable, uint32 **maps)
{
	GraphLabels *labels = palloc0(sizeof(GraphLabels) * nfilters);
	int			c;
	int			i;

	for (c = 0; c < nfilters; c++)
	{
		if (postable[c] != SEGVEC_POSTINGS_COLUMN_BITS)
			continue;
		labels[c].known = true;
		for (i = 0; i < ninputs && labels[c].known; i++)
		{
			GraphPostings p;

			if (!GraphPostingsOpen(index, &inputs[i], dim, &p))
			{
				GraphLabelsForget(&labels[c]);
				break;
			}
			if (GraphPostingsHasLabels(&p, c))
				GraphPostingsLabelPairs(&p, c, maps[i], &labels[c]);
			else
				GraphLabelsForget(&labels[c]);
			GraphPostingsClose(&p);
		}
	}
	return labels;
}

/*
 * Set b->hints for the insertion of the doc that is node j of the input
 * read by r (map: that input's nodes to the output's): its neighbours in
 * the input's graph that are in the output's graph already (set in
 * ingraph).  An input's graph holds what a search of the growing output
 * graph may not find: where the output has none of a cluster's docs yet,
 * that search ends in another cluster, and the docs of the new cluster,
 * each linked to nodes of others only, never find one another.
 */
static void
input_hints(HnswBuilder *b, SegReader *r, const uint32 *map, uint32 j,
			const uint8 *ingraph)
{
	char	   *rec = reader_node(r, j);
	int			count = Min(((SegvecNodeHeader *) rec)->nneighbors, b->m0);
	int			k;

	b->nhints = 0;
	for (k = 0; k < count; k++)
	{
		uint32		t = GraphRecNeighbors(rec)[k];
		uint32		u;

		if (t >= r->seg->ndocs || (u = map[t]) == NO_NODE ||
			!BIT_IS_SET(ingraph, u))
			continue;
		b->hints[b->nhints++] = u;
	}
}

/*
 * GraphMergeSegments: merge the live docs of inputs[0 .. ninputs) (those
 * not set in tombstones[i], which may be NULL) into one new segment
 * numbered segno, written to a new extent and WAL-logged, described in
 * *out (absolute block numbers; nothing points at it yet: the caller
 * installs it).  Returns false, writing nothing, when no doc is live.
 * Fills *stats.  Memory: GraphMergeMemoryBound; the inputs' vectors are
 * read from their pages, never held.  The caller makes sure no one drops
 * the inputs meanwhile (the merge lock) and that VACUUM does not take the
 * new extent's pages (it skips unreachable pages while a merge runs).
 */
bool
GraphMergeSegments(Relation index, SegvecMetric metric, int dim, int m,
				   int ef_construction, int quant, const SegvecSegment *inputs,
				   uint8 *const *tombstones, int ninputs, uint32 segno,
				   SegvecSegment *out, GraphMergeStats *stats)
{
	MemoryContext ctx,
				oldctx;
	HnswBuilder *b;
	MergeCursor *cs;
	int64		n = 0;
	int64		seedlive = -1;
	int			seed = -1;
	int			i;
	uint32		o;
	uint64	   *checksums;
	uint32	  **inmap;			/* per input: its docs' output nodes */
	uint32	   *seedmap = NULL; /* the seed's */
	uint64	   *source;			/* per output node: input << 32 | its doc */
	uint8	   *ingraph;		/* bitmap: node in the graph already */
	int64		ninputdocs = 0;
	uint8	   *damaged;
	uint8	   *udamaged;
	uint64		min_docid = 0,
				max_docid = 0;
	SegvecSegment *seg;
	PageFiller	f;
	char	   *rec;
	GraphCand  *eps;
	BlockNumber blk;
	Size		inmem_bytes;
	Size		bound;
	BlockNumber upper_end;
	float	   *qparams = NULL;
	GraphQuantEncoder *qenc = NULL;
	int			codes_from = -1;
	int			nfilters;
	Size		fbytes;
	char	   *entries = NULL;
	char	   *postings = NULL;
	Size		postings_len = 0;
	uint32	   *postable = NULL;
	uint32	  **nodemap = NULL;

	memset(stats, 0, sizeof(GraphMergeStats));
	stats->codes_from = -1;
	memset(out, 0, sizeof(SegvecSegment));

	/* live docs, and the seed: the input with the most */
	for (i = 0; i < ninputs; i++)
	{
		int64		live = inputs[i].ndocs;
		uint32		j;

		if (tombstones[i])
			for (j = 0; j < inputs[i].ndocs; j++)
				if (BIT_IS_SET(tombstones[i], j))
					live--;
		n += live;
		ninputdocs += inputs[i].ndocs;
		if (live > seedlive && inputs[i].m == m && inputs[i].entry_point >= 0)
		{
			seedlive = live;
			seed = i;
		}
	}
	if (n == 0)
		return false;
	if (n > PG_INT32_MAX / 4)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot merge segments of more than %d docs",
						PG_INT32_MAX / 4)));

	ctx = AllocSetContextCreate(CurrentMemoryContext, "segvec graph merge",
								ALLOCSET_DEFAULT_SIZES);
	oldctx = MemoryContextSwitchTo(ctx);
	b = palloc0(sizeof(HnswBuilder));
	b->ctx = ctx;
	GraphBuilderInitCommon(b, metric, dim, m, ef_construction, (int) n);

	/*
	 * Levels drawn from a sequence of the merge's own (deterministic: the
	 * segment number), not the one every build starts with: with one
	 * sequence, the k-th doc a merge inserts always drew the same level,
	 * and when docs arrive in a repeating pattern (round-robin over
	 * sources, tenants, clusters) the same kinds of docs got the upper
	 * layers merge after merge, and the others none.
	 */
	pg_prng_seed(&b->rng, hash_bytes_uint32_extended(segno, 0x5e6f3c));
	b->n = (int) n;
	b->seeded = palloc0(n / 8 + 1);
	damaged = palloc0(n / 8 + 1);
	udamaged = palloc0(n / 8 + 1);
	checksums = MemoryContextAllocHuge(ctx, mul_size(n, sizeof(uint64)));
	inmap = palloc(sizeof(uint32 *) * ninputs);
	for (i = 0; i < ninputs; i++)
	{
		inmap[i] = MemoryContextAllocHuge(ctx,
										  mul_size(Max(inputs[i].ndocs, 1),
												   sizeof(uint32)));
		memset(inmap[i], 0xFF, sizeof(uint32) * inputs[i].ndocs);
	}
	if (seed >= 0)
		seedmap = inmap[seed];
	cs = palloc0(sizeof(MergeCursor) * ninputs);
	for (i = 0; i < ninputs; i++)
	{
		reader_init(&cs[i].r, index, &inputs[i], dim);
		cs[i].tombstones = tombstones[i];
	}

	/*
	 * 1. plan: the output's order, levels of seed nodes; with filter
	 * columns, the output's filter entries, for its postings
	 */
	nfilters = SegvecIndexFilterCount(index);
	fbytes = SEGVEC_FILTER_ENTRY_BYTES(nfilters);
	if (nfilters > 0)
	{
		entries = MemoryContextAllocHuge(ctx, mul_size(n, fbytes));
		postable = palloc(sizeof(uint32) * nfilters);
		SegvecIndexFilterPostable(index, postable);
		if (merge_has_labels(index, inputs, ninputs, dim, nfilters, postable))
			nodemap = inmap;
	}
	cursors_start(cs, ninputs);
	o = 0;
	while ((i = cursors_next(cs, ninputs)) >= 0)
	{
		uint32		j = cs[i].pos;

		CHECK_FOR_INTERRUPTS();
		if (o == 0)
			min_docid = cs[i].docid;
		max_docid = cs[i].docid;
		checksums[o] = reader_doc(&cs[i].r, j)->checksum;
		inmap[i][j] = o;
		if (entries)
		{
			if (inputs[i].nfilters == nfilters)
				memcpy(entries + (Size) o * fbytes, reader_filters(&cs[i].r, j),
					   fbytes);
			else
				memset(entries + (Size) o * fbytes, 0, fbytes);
		}
		if (i == seed)
		{
			BIT_SET(b->seeded, o);
			rec = reader_node(&cs[i].r, j);
			b->levels[o] = Min(((SegvecNodeHeader *) rec)->level,
							   SEGVEC_MAX_LEVEL);
		}
		else
			b->levels[o] = 0;
		o++;
		cursor_advance(&cs[i]);
	}
	Assert(o == n);
	if (entries)
	{
		GraphLabels *labels = NULL;

		if (nodemap)
			labels = merge_labels(index, inputs, ninputs, dim, nfilters,
								  postable, nodemap);
		postings = GraphPostingsBuild(entries, (uint32) n, nfilters, postable,
									  labels, &postings_len);
		if (labels)
		{
			int			c;

			for (c = 0; c < nfilters; c++)
				if (labels[c].pairs)
					pfree(labels[c].pairs);
			pfree(labels);
		}
		pfree(postable);
		pfree(entries);
	}

	/*
	 * Exact duplicates by checksum, seed nodes first, so that a node's
	 * first copy is always in the graph before it (confirmed with the
	 * vectors once they are in the output's pages); levels for the others.
	 */
	{
		uint32		size = 16;
		uint32	   *slots;
		int			pass;

		while (size < (uint32) n * 2 && size < (1U << 31))
			size <<= 1;
		slots = MemoryContextAllocHuge(ctx, mul_size(size, sizeof(uint32)));
		memset(slots, 0xFF, sizeof(uint32) * size);
		for (pass = 0; pass < 2; pass++)
		{
			for (o = 0; o < n; o++)
			{
				uint64		h = checksums[o];
				uint32		pos = (uint32) (h ^ (h >> 32)) & (size - 1);

				if ((BIT_IS_SET(b->seeded, o) != 0) != (pass == 0))
					continue;
				b->dupof[o] = -1;
				for (;;)
				{
					uint32		s = slots[pos];

					if (s == NO_NODE)
					{
						slots[pos] = o;
						break;
					}
					if (checksums[s] == h)
					{
						b->dupof[o] = (int32) s;
						break;
					}
					pos = (pos + 1) & (size - 1);
				}
				if (pass == 1 && b->dupof[o] < 0)
				{
					int			level;

					level = (int) floor(-log(1.0 - pg_prng_double(&b->rng)) * b->ml);
					b->levels[o] = Min(level, SEGVEC_MAX_LEVEL);
				}
			}
		}
		GraphNotePeak(b);
		pfree(slots);
		pfree(checksums);
	}

	/* the layout and the extent */
	seg = &b->seg;
	GraphPlanLayout(seg, (int) n, b->levels, m, dim, min_docid, max_docid,
					b->upper_off);
	GraphPlanQuantLayout(seg, (int) n, m, dim, quant);
	GraphPlanPostingsLayout(seg, postings_len);
	GraphPlanFilterLayout(seg, (int) n, nfilters);
	seg->segno = segno;
	seg->start = SegvecAllocExtent(index, seg->npages);
	seg->doc_start += seg->start;
	seg->upper_start += seg->start;
	seg->node_start += seg->start;
	if (seg->quant != SEGVEC_QUANT_NONE)
	{
		seg->qparam_start += seg->start;
		seg->vec_start += seg->start;
	}
	/* the upper-layer area ends where the quantizer's (or the nodes') starts */
	upper_end = seg->quant != SEGVEC_QUANT_NONE ? seg->qparam_start :
		seg->node_start;
	b->upper_size = seg->upper_size;
	b->flat_upper = MemoryContextAllocHuge(ctx, mul_size(Max(seg->upper_size, 1),
														 sizeof(uint32)));
	memset(b->flat_upper, 0, sizeof(uint32) * seg->upper_size);

	/*
	 * When the vectors and layer-0 lists fit in maintenance_work_mem next to
	 * the rest, keep a copy of them in memory, which is faster: the pages
	 * still get the same records, the lists at the end.
	 */
	inmem_bytes = (Size) n * (sizeof(float) * dim + sizeof(uint32) * b->m0 +
							  sizeof(uint16));
	bound = GraphMergeMemoryBound(n, m, ef_construction, seg->upper_size,
								  ninputs, metric, seg->node_size, dim);
	bound = add_size(bound, mul_size(ninputdocs - n, sizeof(uint32)));
	if (segvec_merge_in_memory &&
		(double) inmem_bytes + bound <= (double) maintenance_work_mem * 1024.0)
	{
		b->vectors = MemoryContextAllocHuge(ctx, mul_size(mul_size(n, dim),
														  sizeof(float)));
		b->nbr0 = MemoryContextAllocHuge(ctx, mul_size(mul_size(n, b->m0),
													   sizeof(uint32)));
		b->nnbr0 = MemoryContextAllocHuge(ctx, mul_size(n, sizeof(uint16)));
		bound += inmem_bytes;
	}

	/*
	 * The output's quantizer: lo and step from the union of the inputs'
	 * ranges (a quantized input's from its parameters, an unquantized
	 * one's from its live vectors), or an input's own parameters when they
	 * cover that union (the seed's first), whose codes are then copied, not
	 * computed; the error bound and the least norm are measured over the
	 * output's vectors in the copy pass.
	 *
	 * A RaBitQ output gets a fresh rotation seed and its own centroid, the
	 * mean of its live vectors (a pass over them, read from the inputs'
	 * pages), and every doc's code is computed in the copy pass: a code
	 * depends on the centroid, so no input's codes are kept (not even a
	 * rabitq seed's, whose centroid is that of other vectors).  It has no
	 * segment-wide bounds to measure.
	 */
	if (seg->quant == SEGVEC_QUANT_SQ8)
	{
		float	  **iparams = palloc0(sizeof(float *) * ninputs);
		Size		pbytes = sizeof(float) * GraphSq8ParamFloats(dim);
		int			k;

		qparams = palloc(pbytes);
		GraphSq8TrainBegin(qparams, dim);
		for (i = 0; i < ninputs; i++)
		{
			uint32		j;

			if (inputs[i].quant == SEGVEC_QUANT_SQ8)
			{
				iparams[i] = palloc(pbytes);
				reader_params(&cs[i].r, iparams[i]);
				GraphSq8TrainUnion(qparams, dim, iparams[i]);
				continue;
			}
			/* unquantized or RaBitQ: from its live vectors */
			for (j = 0; j < inputs[i].ndocs; j++)
			{
				if (tombstones[i] && BIT_IS_SET(tombstones[i], j))
					continue;
				CHECK_FOR_INTERRUPTS();
				GraphSq8TrainAdd(qparams, dim, reader_vector(&cs[i].r, j));
			}
		}
		for (k = -1; k < ninputs && codes_from < 0; k++)
		{
			int			c = k < 0 ? seed : k;

			if (c >= 0 && iparams[c] != NULL &&
				GraphSq8Covers(iparams[c], qparams, dim))
				codes_from = c;
		}
		if (codes_from >= 0)
			memcpy(qparams, iparams[codes_from], sizeof(float) * 2 * dim);
		else
			GraphSq8TrainEnd(qparams, dim);
		GraphSq8BoundsBegin(qparams, dim);
		for (i = 0; i < ninputs; i++)
			if (iparams[i])
				pfree(iparams[i]);
		pfree(iparams);
	}
	else if (seg->quant == SEGVEC_QUANT_RABITQ)
	{
		double	   *sum = palloc0(sizeof(double) * Max(dim, 1));
		uint64		nsum = 0;

		qparams = palloc0(sizeof(float) * GraphRabitqParamFloats(dim));
		for (i = 0; i < ninputs; i++)
		{
			uint32		j;

			for (j = 0; j < inputs[i].ndocs; j++)
			{
				if (tombstones[i] && BIT_IS_SET(tombstones[i], j))
					continue;
				CHECK_FOR_INTERRUPTS();
				GraphRabitqTrainAdd(sum, dim, reader_vector(&cs[i].r, j));
				nsum++;
			}
		}
		Assert(nsum == (uint64) n);
		GraphRabitqTrainEnd(qparams, dim, sum, nsum);
		pfree(sum);
	}
	else if (seg->quant != SEGVEC_QUANT_NONE)
		elog(ERROR, "unknown segvec quantization %d", (int) seg->quant);
	if (qparams)
		qenc = GraphQuantEncoderMake(seg->quant, qparams, dim);

	/*
	 * 2. copy: tombstone and upper-layer pages empty, docs, node records,
	 * and for a quantized output the vector area and the parameters
	 */
	f.index = index;
	f.seg = seg;
	f.buf = InvalidBuffer;
	for (blk = seg->start; blk < seg->doc_start; blk++)
		(void) filler_page(&f, blk);
	for (blk = seg->upper_start; blk < upper_end; blk++)
		(void) filler_page(&f, blk);
	filler_end(&f);
	source = MemoryContextAllocHuge(ctx, mul_size(n, sizeof(uint64)));
	{
		PageFiller	df;
		PageFiller	vf;
		PageFiller	ff;
		char	   *outrec = palloc0(seg->node_size);

		df.index = index;
		df.seg = seg;
		df.buf = InvalidBuffer;
		vf = df;
		ff = df;
		cursors_start(cs, ninputs);
		o = 0;
		while ((i = cursors_next(cs, ninputs)) >= 0)
		{
			uint32		j = cs[i].pos;
			SegvecNodeHeader *hdr = (SegvecNodeHeader *) outrec;
			uint32	   *nbrs = GraphRecNeighbors(outrec);
			int			nn = 0;
			char	   *data;
			const float *vec;

			CHECK_FOR_INTERRUPTS();
			source[o] = ((uint64) i << 32) | j;
			data = filler_page(&df, seg->doc_start + o / SEGVEC_DOCS_PER_PAGE);
			memcpy(data + (o % SEGVEC_DOCS_PER_PAGE) * sizeof(SegvecDocInfo),
				   reader_doc(&cs[i].r, j), sizeof(SegvecDocInfo));
			if (seg->nfilters > 0)
				write_filters(&ff, o,
							  inputs[i].nfilters == seg->nfilters ?
							  reader_filters(&cs[i].r, j) : NULL);

			rec = reader_node(&cs[i].r, j);
			memset(outrec, 0, seg->node_size);
			if (i == seed)
			{
				SegvecNodeHeader *src = (SegvecNodeHeader *) rec;
				int			count = Min(src->nneighbors, b->m0);
				int			k,
							l;

				for (k = 0; k < count; k++)
				{
					uint32		t = GraphRecNeighbors(rec)[k];

					if (t < inputs[seed].ndocs && seedmap[t] != NO_NODE)
					{
						nbrs[nn++] = seedmap[t];
						b->indeg0[seedmap[t]]++;
					}
					else
						BIT_SET(damaged, o);
				}

				/* its upper-layer lists, mapped */
				for (l = 1; l <= b->levels[o]; l++)
				{
					Size		from = src->upper_off +
						(Size) (l - 1) * SEGVEC_UPPER_LIST_SIZE(m);
					uint32	   *to = b->flat_upper + b->upper_off[o] +
						(Size) (l - 1) * SEGVEC_UPPER_LIST_SIZE(m);
					uint32		uc = Min(reader_upper(&cs[i].r, from), (uint32) m);
					uint32		kept = 0;
					uint32		u;

					for (u = 0; u < uc; u++)
					{
						uint32		t = reader_upper(&cs[i].r, from + 1 + u);

						if (t < inputs[seed].ndocs && seedmap[t] != NO_NODE)
							to[1 + kept++] = seedmap[t];
					}
					to[0] = kept;
					if (kept < uc)
						BIT_SET(udamaged, o);
				}
			}
			hdr->upper_off = b->upper_off[o];
			hdr->level = b->levels[o];
			hdr->nneighbors = nn;
			if (i == codes_from)
			{
				/* same parameters: the input's codes are the output's */
				memcpy(outrec + GraphRecVectorOffset(m),
					   rec + GraphRecVectorOffset(inputs[i].m),
					   seg->code_size);
				stats->codes_reused++;
			}
			vec = reader_vector(&cs[i].r, j);
			if (seg->quant == SEGVEC_QUANT_NONE)
				memcpy(outrec + GraphRecVectorOffset(m), vec,
					   sizeof(float) * dim);
			else
			{
				if (i != codes_from)
					GraphQuantEncode(qenc, vec,
									 outrec + GraphRecVectorOffset(m));
				if (seg->quant == SEGVEC_QUANT_SQ8)
					GraphSq8BoundsAdd(qparams, dim, vec);
				write_vector(&vf, o, vec, dim);
			}
			if (b->vectors)
			{
				memcpy(b->vectors + (Size) o * dim, vec, sizeof(float) * dim);
				memcpy(b->nbr0 + (Size) o * b->m0, nbrs, sizeof(uint32) * nn);
				b->nnbr0[o] = nn;
			}
			write_record(&f, o, outrec);
			o++;
			cursor_advance(&cs[i]);
		}
		filler_end(&df);
		filler_end(&vf);
		filler_end(&ff);
		filler_end(&f);
		pfree(outrec);
	}
	if (seg->quant != SEGVEC_QUANT_NONE)
	{
		Size		total = sizeof(float) *
			GraphQuantParamFloats(seg->quant, dim);
		Size		done = 0;

		if (seg->quant == SEGVEC_QUANT_SQ8)
			GraphSq8BoundsEnd(qparams, dim);
		blk = seg->qparam_start;
		while (done < total)
		{
			Size		len = Min(SEGVEC_SEGPAGE_USABLE, total - done);

			memcpy(filler_page(&f, blk++), (char *) qparams + done, len);
			done += len;
		}
		filler_end(&f);
	}
	if (seg->npostpages > 0)
	{
		/* the postings area, packed across its pages */
		BlockNumber pstart = seg->start + seg->npages -
			GraphFilterPages(seg) - seg->npostpages;
		uint32		k;

		for (k = 0; k < seg->npostpages; k++)
			GraphPostingsFillPage(filler_page(&f, pstart + k), postings,
								  postings_len, k);
		filler_end(&f);
		pfree(postings);
	}

	/* from here on, the builder works on the output's pages (or its copy) */
	b->paged = (b->vectors == NULL);
	b->index = index;
	b->vpin[0] = b->vpin[1] = b->lpin = InvalidBuffer;
	b->lbuf[0] = palloc(sizeof(uint32) * (b->m0 + 1));
	b->lbuf[1] = palloc(sizeof(uint32) * (b->m0 + 1));
	if (seg->pages_per_node > 0 || seg->quant != SEGVEC_QUANT_NONE)
	{
		b->vbuf[0] = palloc(sizeof(float) * dim);
		b->vbuf[1] = palloc(sizeof(float) * dim);
	}
	GraphComputeExtra(b);

	/* duplicates confirmed by their vectors */
	for (o = 0; o < n; o++)
	{
		if (b->dupof[o] >= 0 &&
			memcmp(GraphBuilderVector(b, o, 0),
				   GraphBuilderVector(b, (uint32) b->dupof[o], 1),
				   sizeof(float) * dim) != 0)
			b->dupof[o] = -1;
	}

	/* the entry point: the seed's, or its highest live node */
	if (seed >= 0)
	{
		uint32		ep = (uint32) inputs[seed].entry_point;

		if (ep < inputs[seed].ndocs && seedmap[ep] != NO_NODE)
			b->entry = (int) seedmap[ep];
		else
		{
			for (o = 0; o < n; o++)
				if (BIT_IS_SET(b->seeded, o) &&
					(b->entry < 0 || b->levels[o] > b->levels[b->entry]))
					b->entry = (int) o;
		}
		if (b->entry >= 0)
			b->maxlevel = b->levels[b->entry];
	}
	b->visited = MemoryContextAllocHuge(ctx, mul_size(n, sizeof(uint32)));
	memset(b->visited, 0, sizeof(uint32) * n);
	GraphNotePeak(b);

	/* 3. repair the seed nodes that lost neighbours */
	if (seed >= 0)
	{
		GraphCand  *cands = palloc(sizeof(GraphCand) *
								   (b->m0 + b->m0 * b->m0 + 1));
		uint32	   *lost = palloc(sizeof(uint32) * (b->m0 + 1));
		uint32		j;

		for (j = 0; j < inputs[seed].ndocs; j++)
		{
			if (seedmap[j] == NO_NODE || !BIT_IS_SET(damaged, seedmap[j]))
				continue;
			CHECK_FOR_INTERRUPTS();
			repair_seed_node(b, &cs[seed].r, seedmap, j, seedmap[j], cands,
							 lost);
			stats->seed_repaired++;
		}
		pfree(cands);
		pfree(lost);
		stats->nseeded = seedlive;
	}
	pfree(damaged);

	/*
	 * 4. the upper-layer lists of the seed nodes that lost neighbours
	 * there, chosen anew; then insert the other inputs' docs, and reach
	 * every node
	 */
	eps = palloc(sizeof(GraphCand) * (Max(ef_construction, b->m0) + 2 + b->m0));
	b->hints = palloc(sizeof(uint32) * b->m0);
	b->hintdist = palloc(sizeof(double) * b->m0);
	for (o = 0; o < n; o++)
	{
		if (!BIT_IS_SET(udamaged, o))
			continue;
		CHECK_FOR_INTERRUPTS();
		GraphRelinkUpper(b, o, eps);
		stats->upper_relinked++;
	}
	pfree(udamaged);
	GraphShuffleInsertion(b);
	ingraph = palloc(n / 8 + 1);
	memcpy(ingraph, b->seeded, n / 8 + 1);
	GraphNotePeak(b);
	for (o = 0; o < (uint32) b->norder; o++)
	{
		uint32		q = b->order[o];

		CHECK_FOR_INTERRUPTS();
		i = (int) (source[q] >> 32);
		input_hints(b, &cs[i].r, inmap[i], (uint32) source[q], ingraph);
		GraphInsertNode(b, q, eps);
		BIT_SET(ingraph, q);
	}
	b->nhints = 0;
	pfree(b->order);
	b->order = NULL;
	pfree(ingraph);
	pfree(source);
	for (i = 0; i < ninputs; i++)
	{
		reader_end(&cs[i].r);
		pfree(inmap[i]);
	}
	pfree(inmap);
	/* the duplicates, in order, each from its first node's list */
	for (o = 0; o < n; o++)
	{
		if (BIT_IS_SET(b->seeded, o) || b->dupof[o] < 0)
			continue;
		CHECK_FOR_INTERRUPTS();
		GraphInsertDuplicate(b, o, (uint32) b->dupof[o]);
	}
	GraphNotePeak(b);
	GraphRepairConnectivity(b, eps);
	GraphNotePeak(b);
	paged_release(b);

	/* the pages are written, none logged yet */
	SegvecTestPoint("merge-linked");

	/* 5. the lists kept in memory, the upper-layer pages, then every page
	 * as a full image */
	if (!b->paged)
	{
		Buffer		buf = InvalidBuffer;

		for (o = 0; o < n; o++)
		{
			Size		off;
			BlockNumber nb = GraphNodeBlock(seg, o, &off);
			char	   *orec;

			CHECK_FOR_INTERRUPTS();
			if (!BufferIsValid(buf) || BufferGetBlockNumber(buf) != nb)
			{
				if (BufferIsValid(buf))
				{
					MarkBufferDirty(buf);
					UnlockReleaseBuffer(buf);
				}
				buf = ReadBuffer(index, nb);
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			}
			orec = PageGetContents(BufferGetPage(buf)) + off;
			((SegvecNodeHeader *) orec)->nneighbors = b->nnbr0[o];
			memcpy(GraphRecNeighbors(orec), b->nbr0 + (Size) o * b->m0,
				   sizeof(uint32) * b->nnbr0[o]);
		}
		if (BufferIsValid(buf))
		{
			MarkBufferDirty(buf);
			UnlockReleaseBuffer(buf);
		}
	}
	for (blk = seg->upper_start; blk < upper_end; blk++)
	{
		Buffer		buf = ReadBuffer(index, blk);
		Size		first = (Size) (blk - seg->upper_start) * SEGVEC_UPPER_PER_PAGE;
		Size		count = Min((Size) SEGVEC_UPPER_PER_PAGE,
								seg->upper_size - first);

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		memcpy(PageGetContents(BufferGetPage(buf)), b->flat_upper + first,
			   sizeof(uint32) * count);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
	/* in a build, logged at its end if not moved (SegvecBuildSkipWAL) */
	if (RelationNeedsWAL(index) &&
		!SegvecBuildSkipWAL(index, seg->start, seg->npages))
		log_newpage_range(index, MAIN_FORKNUM, seg->start,
						  seg->start + seg->npages, true);

	*out = *seg;
	out->entry_point = b->entry;
	out->max_level = Max(b->maxlevel, 0);
	out->ntombstones = 0;

	stats->ndocs = n;
	stats->seed = seed;
	stats->codes_from = codes_from;
	stats->peak_bytes = b->peak_bytes;
	stats->bound_bytes = bound;
	stats->in_memory = !b->paged;
	stats->nrepaired = b->nrepaired;
	stats->nduplicates = b->nduplicates;

	MemoryContextSwitchTo(oldctx);
	MemoryContextDelete(ctx);
	return true;
}

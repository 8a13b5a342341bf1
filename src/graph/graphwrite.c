/*-------------------------------------------------------------------------
 *
 * graphwrite.c
 *	  Write a built HNSW graph out as an immutable segment: plan the
 *	  extent's layout (tombstones, doc area, upper layers, node records,
 *	  quantizer parameters and vectors), write and WAL-log its pages; and
 *	  the paged storage of a merge's builder, whose vectors and layer-0
 *	  lists live in the pages of the segment it writes (graph_int.h).
 *
 * src/graph/graphwrite.c
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
 * Writing a segment
 * ----------------
 */


/*
 * How seg's node records of seg->node_size bytes go on pages: whole
 * records on a page (nodes_per_page), or one record over pages_per_node
 * pages; sets both and returns the node pages that n records take.
 */
static uint32
plan_node_pages(SegvecSegment *seg, int n)
{
	if (seg->node_size <= SEGVEC_SEGPAGE_USABLE)
	{
		seg->nodes_per_page = SEGVEC_SEGPAGE_USABLE / seg->node_size;
		seg->pages_per_node = 0;
		return (n + seg->nodes_per_page - 1) / seg->nodes_per_page;
	}
	seg->nodes_per_page = 0;
	seg->pages_per_node = (seg->node_size + SEGVEC_SEGPAGE_USABLE - 1) /
		SEGVEC_SEGPAGE_USABLE;
	return n * seg->pages_per_node;
}

/*
 * GraphPlanLayout: where everything of a segment of n nodes with the given
 * levels goes in its extent (all but seg->start: positions are relative to
 * it, the writer adds it), and each node's offset in the upper-layer area
 * into upper_off.  Fills the rest of *seg but the entry point.
 */
void
GraphPlanLayout(SegvecSegment *seg, int n, const uint8 *levels, int m,
				int dim, uint64 min_docid, uint64 max_docid,
				uint32 *upper_off)
{
	uint32		ntomb,
				ndocpages,
				nupper,
				nnode;
	Size		upper = 0;
	int			i;

	memset(seg, 0, sizeof(SegvecSegment));
	seg->ndocs = n;
	seg->entry_point = -1;
	seg->m = m;
	seg->node_size = GraphRecSize(m, dim);

	for (i = 0; i < n; i++)
	{
		upper_off[i] = upper;
		upper += (Size) levels[i] * SEGVEC_UPPER_LIST_SIZE(m);
	}
	seg->upper_size = upper;

	nnode = plan_node_pages(seg, n);
	ntomb = (n + SEGVEC_TOMB_PER_PAGE - 1) / SEGVEC_TOMB_PER_PAGE;
	ndocpages = (n + SEGVEC_DOCS_PER_PAGE - 1) / SEGVEC_DOCS_PER_PAGE;
	nupper = (upper + SEGVEC_UPPER_PER_PAGE - 1) / SEGVEC_UPPER_PER_PAGE;

	seg->doc_start = ntomb;
	seg->min_docid = min_docid;
	seg->max_docid = max_docid;
	seg->upper_start = ntomb + ndocpages;
	seg->node_start = ntomb + ndocpages + nupper;
	seg->npages = ntomb + ndocpages + nupper + nnode;
}

/* Work out where everything goes in the extent (all but seg->start) */
static void
plan_layout(HnswBuilder *b, SegvecSegment *seg, uint32 *upper_off,
			Size postings_len)
{
	GraphPlanLayout(seg, b->n, b->levels, b->m, b->dim,
					b->n > 0 ? b->docs[0].docid : 0,
					b->n > 0 ? b->docs[b->n - 1].docid : 0, upper_off);
	seg->entry_point = b->entry;
	seg->max_level = Max(b->maxlevel, 0);

	GraphPlanQuantLayout(seg, b->n, b->m, b->dim, b->quant);
	GraphPlanPostingsLayout(seg, postings_len);
	GraphPlanFilterLayout(seg, b->n, b->nfilters);
}

/*
 * GraphPlanFilterLayout: add the filter area of a segment of n nodes with
 * nfilters filter columns (nothing when 0) to the layout planned so far:
 * its last pages, SEGVEC_FILTERS_PER_PAGE entries a page (format.h).
 * Call last: the area is found from the extent's end (GraphFilterPages).
 */
void
GraphPlanFilterLayout(SegvecSegment *seg, int n, int nfilters)
{
	seg->nfilters = nfilters;
	seg->npages += GraphFilterPages(seg);
}

/*
 * GraphFilterPages: the pages of seg's filter area, the last of its extent
 * (0 without filter columns).
 */
uint32
GraphFilterPages(const SegvecSegment *seg)
{
	uint32		per_page;

	if (seg->nfilters == 0)
		return 0;
	per_page = SEGVEC_FILTERS_PER_PAGE(seg->nfilters);
	return (seg->ndocs + per_page - 1) / per_page;
}

/*
 * GraphPlanQuantLayout: turn the layout GraphPlanLayout planned for a
 * segment of n nodes into that of a segment quantized with quant
 * (SEGVEC_QUANT_*; nothing changes for SEGVEC_QUANT_NONE but the areas a
 * quantized segment has, set Invalid): smaller node records (codes instead
 * of the vector), then [parameter pages] before the nodes and the packed
 * [vector pages] after them (src/README.md, "Quantized segments").
 */
void
GraphPlanQuantLayout(SegvecSegment *seg, int n, int m, int dim, int quant)
{
	if (quant != SEGVEC_QUANT_NONE)
	{
		Size		pbytes = sizeof(float) * GraphQuantParamFloats(quant, dim);
		uint32		nparam = (pbytes + SEGVEC_SEGPAGE_USABLE - 1) /
			SEGVEC_SEGPAGE_USABLE;
		Size		vbytes = mul_size(sizeof(float) * dim, n);
		uint32		nvec = (vbytes + SEGVEC_SEGPAGE_USABLE - 1) /
			SEGVEC_SEGPAGE_USABLE;
		uint32		nnode;

		seg->quant = quant;
		seg->code_size = GraphQuantRecordBytes(quant, dim);
		seg->node_size = TYPEALIGN(sizeof(uint32),
								   GraphRecVectorOffset(m) + seg->code_size);
		nnode = plan_node_pages(seg, n);
		seg->qparam_start = seg->node_start;
		seg->node_start = seg->qparam_start + nparam;
		seg->vec_start = seg->node_start + nnode;
		seg->npages = seg->vec_start + nvec;
	}
	else
	{
		seg->qparam_start = InvalidBlockNumber;
		seg->vec_start = InvalidBlockNumber;
	}
}

/*
 * GraphInitSegmentPage: make a zeroed page an (empty) page of segment seg:
 * its flags, stamp and identity (seg's number, for garbage processing; see
 * format.h), and no hole (the whole page is data, so a full-page image
 * keeps all of it).
 */
void
GraphInitSegmentPage(Page page, const SegvecSegment *seg)
{
	SegvecInitPage(page, SEGVEC_PAGE_SEGMENT);
	SegvecPageGetOpaque(page)->stamp = GraphSegmentStamp(seg);
	SegvecPageGetOpaque(page)->seqno = seg->segno;
	memset(PageGetContents(page), 0, SEGVEC_SEGPAGE_USABLE);
	((PageHeader) page)->pd_lower = ((PageHeader) page)->pd_upper;
}

/* Serialise node i's record into buf (seg->node_size bytes) */
static void
node_record(HnswBuilder *b, SegvecSegment *seg, uint32 i, char *buf)
{
	SegvecNodeHeader *hdr = (SegvecNodeHeader *) buf;
	uint32	   *nbrs = GraphRecNeighbors(buf);
	float	   *vec = (float *) (buf + GraphRecVectorOffset(b->m));

	memset(buf, 0, seg->node_size);
	hdr->upper_off = b->upper_off[i];
	hdr->level = b->levels[i];
	hdr->nneighbors = b->nnbr0[i];
	memcpy(nbrs, b->nbr0 + (Size) i * b->m0, sizeof(uint32) * b->nnbr0[i]);
	if (b->quant != SEGVEC_QUANT_NONE)
		GraphQuantEncode(b->qenc, b->vectors + (Size) i * b->dim, (char *) vec);
	else
		memcpy(vec, b->vectors + (Size) i * b->dim, sizeof(float) * b->dim);
}

/* Fill page k (relative to the extent) of the segment */
static void
fill_page(HnswBuilder *b, SegvecSegment *seg, uint32 k, Page page,
		  char *nodebuf)
{
	char	   *data;

	GraphInitSegmentPage(page, seg);
	data = PageGetContents(page);

	if (seg->npostpages > 0 &&
		k >= seg->npages - GraphFilterPages(seg) - seg->npostpages &&
		k < seg->npages - GraphFilterPages(seg))
	{
		/* the postings area, packed across its pages */
		GraphPostingsFillPage(data, b->postings, b->postings_len,
							  k - (seg->npages - GraphFilterPages(seg) -
								   seg->npostpages));
	}
	else if (seg->nfilters > 0 && k >= seg->npages - GraphFilterPages(seg))
	{
		/* filter entries, whole entries on each page */
		uint32		per_page = SEGVEC_FILTERS_PER_PAGE(seg->nfilters);
		uint32		first = (k - (seg->npages - GraphFilterPages(seg))) * per_page;
		uint32		count = Min(per_page, b->n - first);
		Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);

		memcpy(data, b->filters + (Size) first * fbytes, fbytes * count);
	}
	else if (k < seg->doc_start)
	{
		/* tombstone page: no tombstones yet */
	}
	else if (k < seg->upper_start)
	{
		uint32		first = (k - seg->doc_start) * SEGVEC_DOCS_PER_PAGE;
		uint32		count = Min((uint32) SEGVEC_DOCS_PER_PAGE, b->n - first);

		memcpy(data, b->docs + first, sizeof(SegvecDocInfo) * count);
	}
	else if (k < (seg->quant != SEGVEC_QUANT_NONE ? seg->qparam_start :
				  seg->node_start))
	{
		Size		first = (Size) (k - seg->upper_start) * SEGVEC_UPPER_PER_PAGE;
		Size		count = Min((Size) SEGVEC_UPPER_PER_PAGE,
								seg->upper_size - first);

		memcpy(data, b->flat_upper + first, sizeof(uint32) * count);
	}
	else if (k < seg->node_start)
	{
		/* quantizer parameters, as one float array across the pages */
		Size		off = (Size) (k - seg->qparam_start) * SEGVEC_SEGPAGE_USABLE;
		Size		total = sizeof(float) * GraphQuantParamFloats(b->quant, b->dim);

		memcpy(data, (char *) b->qparams + off,
			   Min(SEGVEC_SEGPAGE_USABLE, total - off));
	}
	else if (seg->quant != SEGVEC_QUANT_NONE && k >= seg->vec_start)
	{
		/* the float4 vectors, for the rerank, packed across the pages */
		Size		off = (Size) (k - seg->vec_start) * SEGVEC_SEGPAGE_USABLE;
		Size		total = sizeof(float) * b->dim * (Size) b->n;

		memcpy(data, (char *) b->vectors + off,
			   Min(SEGVEC_SEGPAGE_USABLE, total - off));
	}
	else if (seg->nodes_per_page > 0)
	{
		uint32		first = (k - seg->node_start) * seg->nodes_per_page;
		uint32		i;

		for (i = first; i < first + seg->nodes_per_page && i < b->n; i++)
			node_record(b, seg, i, data + (Size) (i - first) * seg->node_size);
	}
	else
	{
		uint32		node = (k - seg->node_start) / seg->pages_per_node;
		uint32		part = (k - seg->node_start) % seg->pages_per_node;
		Size		off = (Size) part * SEGVEC_SEGPAGE_USABLE;

		node_record(b, seg, node, nodebuf);
		memcpy(data, nodebuf + off,
			   Min(SEGVEC_SEGPAGE_USABLE, seg->node_size - off));
	}
}

/* What fill_segment_page needs */
typedef struct SegmentWriter
{
	HnswBuilder *b;
	SegvecSegment *seg;
	char	   *nodebuf;
} SegmentWriter;

/* SegvecFillPageFn: page k of the segment's extent */
static void
fill_segment_page(Page page, uint32 k, void *arg)
{
	SegmentWriter *w = (SegmentWriter *) arg;

	fill_page(w->b, w->seg, k, page, w->nodebuf);
}

/*
 * HnswBuilderWrite: write the graph as segment number segno in a new
 * extent at the end of the relation, every page logged as a full page
 * image and stamped with segno, and describe it in *seg.  Nothing points
 * at the extent yet: the caller installs *seg in the manifest with one
 * metapage WAL record (until then a crash leaves only unreachable pages).
 * SegvecWriteExtent holds the extension lock only while it adds the
 * blocks, not while it writes them.
 */
void
HnswBuilderWrite(HnswBuilder *b, Relation index, uint32 segno,
				 SegvecSegment *seg)
{
	char	   *nodebuf;
	SegmentWriter w;
	MemoryContext oldctx = MemoryContextSwitchTo(b->ctx);

	/* the postings of the filter columns, from the docs' entries */
	b->postings = NULL;
	b->postings_len = 0;
	if (b->nfilters > 0)
	{
		uint32	   *postable = palloc(sizeof(uint32) * b->nfilters);

		SegvecIndexFilterPostable(index, postable);
		b->postings = GraphPostingsBuild(b->filters, b->n, b->nfilters,
										 postable, b->labels,
										 &b->postings_len);
		pfree(postable);
	}
	plan_layout(b, seg, b->upper_off, b->postings_len);
	Assert(seg->upper_size == b->upper_size);
	nodebuf = palloc(seg->node_size);

	/* the quantizer is trained on the segment's vectors, once per write */
	if (b->quant != SEGVEC_QUANT_NONE)
	{
		b->qparams = GraphQuantTrain(b->quant, b->dim, b->vectors, b->n);
		b->qenc = GraphQuantEncoderMake(b->quant, b->qparams, b->dim);
	}

	w.b = b;
	w.seg = seg;
	w.nodebuf = nodebuf;
	seg->segno = segno;
	seg->start = SegvecWriteExtent(index, seg->npages, fill_segment_page, &w);

	seg->doc_start += seg->start;
	seg->upper_start += seg->start;
	seg->node_start += seg->start;
	if (seg->quant != SEGVEC_QUANT_NONE)
	{
		seg->qparam_start += seg->start;
		seg->vec_start += seg->start;
	}

	MemoryContextSwitchTo(oldctx);
}

void
HnswBuilderFree(HnswBuilder *b)
{
	MemoryContextDelete(b->ctx);
}

/*
 * GraphPinBlock: the contents of block blkno, pinned in *buf (which keeps
 * its pin if it already holds that block, else drops its old one); no lock.
 * Through the backend's buffer hints (GraphPinPage): a merge reads its
 * output's and inputs' pages over and over in no order, and finding each in
 * the shared buffer table took about half of its time.
 */
char *
GraphPinBlock(Relation index, Buffer *buf, BlockNumber blkno)
{
	if (!BufferIsValid(*buf) || BufferGetBlockNumber(*buf) != blkno)
	{
		if (BufferIsValid(*buf))
			ReleaseBuffer(*buf);
		*buf = GraphPinPage(index, blkno);
	}
	return PageGetContents(BufferGetPage(*buf));
}

/* ----------------
 * Paged storage of the builder (graph_int.h): a merge's builder keeps
 * vectors and layer-0 lists in the output's node pages (graphmerge.c)
 * ----------------
 */

/*
 * GraphAreaVector: node id's vector (dim float4) in quantized segment seg's
 * packed vector area, pinned in *buf (the pin is moved as needed); a vector
 * crossing a page boundary is copied into copy (dim float4).  Valid until
 * *buf or copy is next used.
 */
const float *
GraphAreaVector(Relation index, const SegvecSegment *seg, uint32 id, int dim,
				Buffer *buf, float *copy)
{
	Size		vlen = sizeof(float) * dim;
	Size		off = (Size) id * vlen;
	BlockNumber blk = seg->vec_start + off / SEGVEC_SEGPAGE_USABLE;
	Size		done = 0;

	off %= SEGVEC_SEGPAGE_USABLE;
	if (off + vlen <= SEGVEC_SEGPAGE_USABLE)
		return (const float *) (GraphPinBlock(index, buf, blk) + off);
	while (done < vlen)
	{
		Size		len = Min(SEGVEC_SEGPAGE_USABLE - off, vlen - done);

		memcpy((char *) copy + done, GraphPinBlock(index, buf, blk++) + off,
			   len);
		done += len;
		off = 0;
	}
	return copy;
}

/*
 * Node id's vector, in vector slot `slot`, valid until the slot's next use:
 * in its node record, or in a quantized segment in the packed vector area
 * (a vector crossing a page boundary is copied into the slot's buffer).
 */
const float *
GraphPagedVector(HnswBuilder *b, uint32 id, int slot)
{
	const SegvecSegment *seg = &b->seg;
	Size		vlen = sizeof(float) * b->dim;
	Size		off;
	BlockNumber blk;

	if (b->vid[slot] == (int64) id)
		return b->vptr[slot];
	if (seg->quant != SEGVEC_QUANT_NONE)
	{
		b->vptr[slot] = GraphAreaVector(b->index, seg, id, b->dim,
										&b->vpin[slot], b->vbuf[slot]);
		b->vid[slot] = id;
		return b->vptr[slot];
	}
	blk = GraphNodeBlock(seg, id, &off);
	if (seg->nodes_per_page > 0)
		b->vptr[slot] = (const float *)
			(GraphPinBlock(b->index, &b->vpin[slot], blk) + off +
			 GraphRecVectorOffset(b->m));
	else
	{
		/* the vector starts on the record's first page and runs on */
		Size		voff = GraphRecVectorOffset(b->m);
		Size		done = 0;

		while (done < vlen)
		{
			Size		at = voff + done;
			Size		inpage = at % SEGVEC_SEGPAGE_USABLE;
			Size		len = Min(SEGVEC_SEGPAGE_USABLE - inpage, vlen - done);
			char	   *data = GraphPinBlock(b->index, &b->vpin[slot],
										 blk + at / SEGVEC_SEGPAGE_USABLE);

			memcpy((char *) b->vbuf[slot] + done, data + inpage, len);
			done += len;
		}
		b->vptr[slot] = b->vbuf[slot];
	}
	b->vid[slot] = id;
	return b->vptr[slot];
}

/* the header and list of node id, on its record's first page (pinned) */
static char *
paged_record(HnswBuilder *b, uint32 id)
{
	Size		off;
	BlockNumber blk = GraphNodeBlock(&b->seg, id, &off);

	return GraphPinBlock(b->index, &b->lpin, blk) + off;
}

/* A copy of node id's layer-0 list in list slot `slot` */
uint32 *
GraphPagedList(HnswBuilder *b, uint32 id, int *count, int slot)
{
	char	   *rec = paged_record(b, id);

	*count = ((SegvecNodeHeader *) rec)->nneighbors;
	memcpy(b->lbuf[slot], GraphRecNeighbors(rec), sizeof(uint32) * *count);
	return b->lbuf[slot];
}

/* Make list[0 .. count) node id's layer-0 list, in its page */
void
GraphPagedStoreList(HnswBuilder *b, uint32 id, const uint32 *list, int count)
{
	char	   *rec = paged_record(b, id);

	LockBuffer(b->lpin, BUFFER_LOCK_EXCLUSIVE);
	((SegvecNodeHeader *) rec)->nneighbors = count;
	memmove(GraphRecNeighbors(rec), list, sizeof(uint32) * count);
	MarkBufferDirty(b->lpin);
	LockBuffer(b->lpin, BUFFER_LOCK_UNLOCK);
}

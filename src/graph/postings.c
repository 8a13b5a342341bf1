/*-------------------------------------------------------------------------
 *
 * postings.c
 *	  Postings of an immutable segment's filter columns: for each column
 *	  with few distinct values, every value its nodes have, how many
 *	  nodes have it, and (when they are few) which.  Built from the
 *	  segment's filter entries when the segment is written (graphwrite.c,
 *	  graphmerge.c), read by a filtered scan to count, skip or list a
 *	  segment's passing nodes without reading its filter area.  The format
 *	  is in store/format.h ("Postings of a segment's filter columns").
 *
 * src/graph/postings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

#include "graph/graph_int.h"

/* a node's value of one column, for sorting (a label's, too) */
typedef GraphLabelPair PostingPair;

static int
pair_cmp(const void *a, const void *b)
{
	const PostingPair *x = (const PostingPair *) a;
	const PostingPair *y = (const PostingPair *) b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->node < y->node ? -1 : (x->node > y->node ? 1 : 0);
}

/*
 * GraphLabelsAdd: node has the label of hash hash (labels palloc'd in
 * the current memory context as they grow)
 */
void
GraphLabelsAdd(GraphLabels *labels, uint64 hash, uint32 node)
{
	if (!labels->known)
		return;
	if (labels->npairs == labels->maxpairs)
	{
		uint32		grow;

		if (labels->maxpairs >= PG_UINT32_MAX / 2)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many labels for one segment")));
		grow = Max(labels->maxpairs * 2, 64);
		labels->pairs = labels->pairs == NULL ?
			MemoryContextAllocHuge(CurrentMemoryContext,
								   sizeof(GraphLabelPair) * (Size) grow) :
			repalloc_huge(labels->pairs, sizeof(GraphLabelPair) * (Size) grow);
		labels->maxpairs = grow;
	}
	labels->pairs[labels->npairs].value = (int64) hash;
	labels->pairs[labels->npairs].node = node;
	labels->npairs++;
}

/*
 * GraphLabelsForget: some node's labels are not known; the column gets bit
 * postings
 */
void
GraphLabelsForget(GraphLabels *labels)
{
	if (labels->pairs)
		pfree(labels->pairs);
	labels->pairs = NULL;
	labels->npairs = labels->maxpairs = 0;
	labels->known = false;
}

/*
 * Label postings (format.h) of a label array column of n nodes from its
 * known labels l: sorts l's pairs by (label, node), drops repeated ones,
 * and returns the count of distinct labels, or -1 when they are too many
 * (the column then gets bit postings).
 */
static int64
plan_labels(GraphLabels *l, uint32 n)
{
	uint32		max_values = Max(SEGVEC_POSTINGS_MIN_VALUES,
								 n / SEGVEC_POSTINGS_VALUES_DIV);
	uint32		i;
	uint32		k = 0;
	int64		distinct = 0;

	if (l->npairs > (uint64) n * SEGVEC_POSTINGS_BITS_PER_NODE)
		return -1;
	if (l->npairs > 0)
		qsort(l->pairs, l->npairs, sizeof(PostingPair), pair_cmp);
	for (i = 0; i < l->npairs; i++)
	{
		if (l->pairs[i].node >= n)
			elog(ERROR, "segvec label of node %u of %u", l->pairs[i].node, n);
		if (k > 0 && l->pairs[i].value == l->pairs[k - 1].value &&
			l->pairs[i].node == l->pairs[k - 1].node)
			continue;			/* a label twice in one array */
		if (k == 0 || l->pairs[i].value != l->pairs[k - 1].value)
			distinct++;
		l->pairs[k++] = l->pairs[i];
	}
	l->npairs = k;
	CHECK_FOR_INTERRUPTS();
	return distinct > max_values ? -1 : distinct;
}

/* A column's bit postings, as GraphPostingsBuild plans them */
typedef struct PostingBits
{
	uint32		count[64];		/* nodes with each bit */
	uint64		listed;			/* the bits that get a list */
	uint32		distinct;		/* bits some node has */
	uint32		nids;			/* node numbers in the listed bits' lists */
	uint32	   *lists;			/* the listed bits' lists, by bit */
} PostingBits;

/*
 * The bit postings (format.h) of column c of the n filter entries: each
 * bit's count, which bits get lists (by ascending count, then bit, as
 * long as a bit has at most n / SEGVEC_POSTINGS_BITS_DIV nodes and the
 * lists stay within SEGVEC_POSTINGS_BITS_PER_NODE node numbers per node),
 * and those lists, palloc'd.
 */
static void
plan_bits(const char *entries, uint32 n, int nfilters, int c, PostingBits *b)
{
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(nfilters);
	uint64		budget = (uint64) n * SEGVEC_POSTINGS_BITS_PER_NODE;
	uint64		used = 0;
	uint32		off[64];
	uint32		i;
	int			bit;

	memset(b, 0, sizeof(PostingBits));
	for (i = 0; i < n; i++)
	{
		const char *e = entries + (Size) i * fbytes;
		uint64		present;
		uint64		sig;

		memcpy(&present, e, sizeof(uint64));
		if (!(present & (UINT64CONST(1) << c)))
			continue;			/* NULL: no key matches it */
		memcpy(&sig, e + sizeof(uint64) * (c + 1), sizeof(uint64));
		for (bit = 0; sig != 0; bit++, sig >>= 1)
			b->count[bit] += (uint32) (sig & 1);
	}
	CHECK_FOR_INTERRUPTS();

	/* the least common bits first, while they fit */
	for (;;)
	{
		int			next = -1;

		for (bit = 0; bit < 64; bit++)
			if (b->count[bit] > 0 && !(b->listed & (UINT64CONST(1) << bit)) &&
				(next < 0 || b->count[bit] < b->count[next]))
				next = bit;
		if (next < 0 || b->count[next] > n / SEGVEC_POSTINGS_BITS_DIV ||
			used + b->count[next] > budget)
			break;
		b->listed |= UINT64CONST(1) << next;
		used += b->count[next];
	}
	for (bit = 0; bit < 64; bit++)
	{
		if (b->count[bit] > 0)
			b->distinct++;
		off[bit] = b->nids;
		if (b->listed & (UINT64CONST(1) << bit))
			b->nids += b->count[bit];
	}
	if (b->nids == 0)
		return;

	/* the lists: nodes in order, so each list ascends */
	b->lists = MemoryContextAllocHuge(CurrentMemoryContext,
									  mul_size(b->nids, sizeof(uint32)));
	for (i = 0; i < n; i++)
	{
		const char *e = entries + (Size) i * fbytes;
		uint64		present;
		uint64		sig;

		memcpy(&present, e, sizeof(uint64));
		if (!(present & (UINT64CONST(1) << c)))
			continue;
		memcpy(&sig, e + sizeof(uint64) * (c + 1), sizeof(uint64));
		sig &= b->listed;
		for (bit = 0; sig != 0; bit++, sig >>= 1)
			if (sig & 1)
				b->lists[off[bit]++] = i;
	}
}

/*
 * GraphPostingsBuild: the postings area (format.h) of a segment of n
 * nodes whose filter entries for nfilters columns are entries, in node
 * order; postable[c] says which postings column c may have
 * (SEGVEC_POSTINGS_COLUMN_HAS: value postings; _BITS: a label array's bit
 * postings, or its label postings when labels (NULL: none) has its nodes'
 * labels, labels[c].known, and they are not too many; their pairs are
 * sorted in place).  Returns the area's bytes, palloc'd, and their length
 * in *len; NULL and 0 when no column gets postings.
 */
char *
GraphPostingsBuild(const char *entries, uint32 n, int nfilters,
				   const uint32 *postable, const GraphLabels *labels,
				   Size *len)
{
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(nfilters);
	uint32		max_values = Max(SEGVEC_POSTINGS_MIN_VALUES,
								 n / SEGVEC_POSTINGS_VALUES_DIV);
	SegvecPostingsColumn *cols;
	PostingPair **pairs;
	PostingBits **bits;
	uint32		ndir = 0;
	uint32		nids = 0;
	bool		any = false;
	SegvecPostingsHeader *hdr;
	SegvecPostingsEntry *dir;
	uint32	   *ids;
	char	   *image;
	int			c;

	*len = 0;
	if (nfilters <= 0 || n == 0)
		return NULL;
	cols = palloc0(sizeof(SegvecPostingsColumn) * nfilters);
	pairs = palloc0(sizeof(PostingPair *) * nfilters);
	bits = palloc0(sizeof(PostingBits *) * nfilters);

	/* each column's (value, node) pairs, sorted; its distinct values */
	for (c = 0; c < nfilters; c++)
	{
		PostingPair *p;
		uint32		np = 0;
		uint32		distinct = 0;
		int64		ldistinct;
		uint32		i;

		if (postable[c] == SEGVEC_POSTINGS_COLUMN_BITS &&
			labels != NULL && labels[c].known &&
			(ldistinct = plan_labels((GraphLabels *) &labels[c], n)) >= 0)
		{
			/* label postings: the (label, node) pairs, sorted */
			cols[c].flags = SEGVEC_POSTINGS_COLUMN_LABELS;
			cols[c].first = ndir;
			cols[c].count = (uint32) ldistinct;
			cols[c].ids_first = nids;
			cols[c].nids = labels[c].npairs;
			ndir += (uint32) ldistinct;
			nids += labels[c].npairs;
			pairs[c] = labels[c].pairs;
			any = true;
			continue;
		}
		if (postable[c] == SEGVEC_POSTINGS_COLUMN_BITS)
		{
			PostingBits *b = palloc(sizeof(PostingBits));

			/* (no node with a label: an empty directory says so) */
			plan_bits(entries, n, nfilters, c, b);
			cols[c].flags = SEGVEC_POSTINGS_COLUMN_BITS;
			cols[c].first = ndir;
			cols[c].count = b->distinct;
			cols[c].ids_first = nids;
			cols[c].nids = b->nids;
			ndir += b->distinct;
			nids += b->nids;
			bits[c] = b;
			any = true;
			continue;
		}
		if (postable[c] != SEGVEC_POSTINGS_COLUMN_HAS)
			continue;
		p = MemoryContextAllocHuge(CurrentMemoryContext,
								   mul_size(Max(n, 1), sizeof(PostingPair)));
		for (i = 0; i < n; i++)
		{
			const char *e = entries + (Size) i * fbytes;
			uint64		present;

			memcpy(&present, e, sizeof(uint64));
			if (!(present & (UINT64CONST(1) << c)))
				continue;		/* NULL: no key matches it */
			memcpy(&p[np].value, e + sizeof(uint64) * (c + 1), sizeof(int64));
			p[np].node = i;
			np++;
		}
		CHECK_FOR_INTERRUPTS();
		qsort(p, np, sizeof(PostingPair), pair_cmp);
		for (i = 0; i < np && distinct <= max_values; i++)
			if (i == 0 || p[i].value != p[i - 1].value)
				distinct++;
		if (distinct > max_values)
		{
			pfree(p);
			continue;			/* too many values: no postings */
		}
		cols[c].flags = SEGVEC_POSTINGS_COLUMN_HAS;
		cols[c].first = ndir;
		cols[c].count = distinct;
		cols[c].ids_first = nids;
		cols[c].nids = np;
		ndir += distinct;
		nids += np;
		pairs[c] = p;
		any = true;
	}
	if (!any)
	{
		pfree(bits);
		pfree(pairs);
		pfree(cols);
		return NULL;
	}

	*len = SEGVEC_POSTINGS_IDS_OFF(nfilters, ndir) + sizeof(uint32) * (Size) nids;
	image = MemoryContextAllocHuge(CurrentMemoryContext, *len);
	memset(image, 0, *len);
	hdr = (SegvecPostingsHeader *) image;
	hdr->magic = SEGVEC_POSTINGS_MAGIC;
	hdr->nfilters = nfilters;
	hdr->ndir = ndir;
	hdr->nids = nids;
	memcpy(image + sizeof(SegvecPostingsHeader), cols,
		   sizeof(SegvecPostingsColumn) * nfilters);
	dir = (SegvecPostingsEntry *) (image + SEGVEC_POSTINGS_DIR_OFF(nfilters));
	ids = (uint32 *) (image + SEGVEC_POSTINGS_IDS_OFF(nfilters, ndir));

	for (c = 0; c < nfilters; c++)
	{
		uint32		d = cols[c].first;
		uint32		i;

		if (bits[c] != NULL)
		{
			PostingBits *b = bits[c];
			uint32		list = cols[c].ids_first;
			int			bit;

			/* every bit some node has; a listed one's nodes */
			for (bit = 0; bit < 64; bit++)
			{
				if (b->count[bit] == 0)
					continue;
				dir[d].value = bit;
				dir[d].count = b->count[bit];
				if (b->listed & (UINT64CONST(1) << bit))
				{
					dir[d].list = list;
					list += b->count[bit];
				}
				else
					dir[d].list = SEGVEC_POSTINGS_NO_LIST;
				d++;
			}
			Assert(d == cols[c].first + cols[c].count);
			Assert(list == cols[c].ids_first + cols[c].nids);
			if (b->nids > 0)
			{
				memcpy(ids + cols[c].ids_first, b->lists,
					   sizeof(uint32) * (Size) b->nids);
				pfree(b->lists);
			}
			pfree(b);
			continue;
		}
		if (pairs[c] == NULL)
			continue;
		for (i = 0; i < cols[c].nids; i++)
		{
			const PostingPair *pp = &pairs[c][i];

			if (i == 0 || pp->value != pairs[c][i - 1].value)
			{
				dir[d].value = pp->value;
				dir[d].count = 0;
				dir[d].list = cols[c].ids_first + i;
				d++;
			}
			dir[d - 1].count++;
			ids[cols[c].ids_first + i] = pp->node;
		}
		Assert(d == cols[c].first + cols[c].count);
		if (!(cols[c].flags & SEGVEC_POSTINGS_COLUMN_LABELS))
			pfree(pairs[c]);	/* (label pairs stay the caller's) */
	}
	pfree(bits);
	pfree(pairs);
	pfree(cols);
	return image;
}

/* The pages a postings area of len bytes takes */
static uint32
postings_pages(Size len)
{
	return (uint32) ((len + SEGVEC_SEGPAGE_USABLE - 1) / SEGVEC_SEGPAGE_USABLE);
}

/*
 * GraphPostingsFillPage: page k of a postings area image (len bytes) into
 * data, a segment page's zeroed data area.
 */
void
GraphPostingsFillPage(char *data, const char *image, Size len, uint32 k)
{
	Size		off = (Size) k * SEGVEC_SEGPAGE_USABLE;

	Assert(off < len);
	memcpy(data, image + off, Min(SEGVEC_SEGPAGE_USABLE, len - off));
}

/*
 * GraphPlanPostingsLayout: add a postings area of len bytes (none when 0)
 * to the layout planned so far; call just before GraphPlanFilterLayout,
 * as the area ends where the filter area starts.
 */
void
GraphPlanPostingsLayout(SegvecSegment *seg, Size len)
{
	seg->npostpages = len > 0 ? postings_pages(len) : 0;
	seg->npages += seg->npostpages;
}

/*
 * The first block after seg's node records or, quantized, its vector area
 * (dim dimensions): where the postings area starts.
 */
static BlockNumber
data_end(const SegvecSegment *seg, int dim)
{
	if (seg->quant != SEGVEC_QUANT_NONE)
	{
		Size		vbytes = (Size) seg->ndocs * dim * sizeof(float);

		return seg->vec_start +
			(BlockNumber) ((vbytes + SEGVEC_SEGPAGE_USABLE - 1) /
						   SEGVEC_SEGPAGE_USABLE);
	}
	if (seg->nodes_per_page > 0)
		return seg->node_start +
			(seg->ndocs + seg->nodes_per_page - 1) / seg->nodes_per_page;
	return seg->node_start + seg->ndocs * seg->pages_per_node;
}

/*
 * GraphPostingsBlock: the first block of seg's postings area, or
 * InvalidBlockNumber when it has none: npostpages is 0, or (the padding
 * of a descriptor that an older build wrote) the areas before it and the
 * filter area after it do not leave exactly that many pages.
 */
BlockNumber
GraphPostingsBlock(const SegvecSegment *seg, int dim)
{
	BlockNumber filter_start;

	if (seg->npostpages == 0 || seg->nfilters == 0 || seg->ndocs == 0)
		return InvalidBlockNumber;
	filter_start = seg->start + seg->npages - GraphFilterPages(seg);
	if (data_end(seg, dim) + seg->npostpages != filter_start)
		return InvalidBlockNumber;
	return data_end(seg, dim);
}

/* pin block blkno (on a standby: checked to still be seg's), see graphsearch.c */
static void
postings_release(GraphPostings *p)
{
	if (!BufferIsValid(p->buf))
		return;
	if (RecoveryInProgress())
		GraphCheckPage(p->index, p->seg, p->buf, false);
	ReleaseBuffer(p->buf);
	p->buf = InvalidBuffer;
}

/* copy len bytes at byte off of the area into to */
static void
postings_read(GraphPostings *p, Size off, void *to, Size len)
{
	Size		done = 0;

	while (done < len)
	{
		BlockNumber blkno = p->start + (BlockNumber) (off / SEGVEC_SEGPAGE_USABLE);
		Size		inpage = off % SEGVEC_SEGPAGE_USABLE;
		Size		n = Min(SEGVEC_SEGPAGE_USABLE - inpage, len - done);

		if (!BufferIsValid(p->buf) || BufferGetBlockNumber(p->buf) != blkno)
		{
			postings_release(p);
			p->buf = GraphPinPage(p->index, blkno);
			if (RecoveryInProgress())
				GraphCheckPage(p->index, p->seg, p->buf, false);
		}
		memcpy((char *) to + done,
			   PageGetContents(BufferGetPage(p->buf)) + inpage, n);
		done += n;
		off += n;
	}
}

/*
 * GraphPostingsOpen: open seg's postings (dim: the index's dimensions, to
 * find the area); false, and nothing held, when it has none.  An area
 * whose header does not describe the segment is an error (corruption).
 */
bool
GraphPostingsOpen(Relation index, const SegvecSegment *seg, int dim,
				  GraphPostings *p)
{
	Size		len;

	memset(p, 0, sizeof(GraphPostings));
	p->buf = InvalidBuffer;
	p->start = GraphPostingsBlock(seg, dim);
	if (p->start == InvalidBlockNumber)
		return false;
	p->index = index;
	p->seg = seg;
	postings_read(p, 0, &p->hdr, sizeof(SegvecPostingsHeader));
	len = SEGVEC_POSTINGS_IDS_OFF(p->hdr.nfilters, p->hdr.ndir) +
		sizeof(uint32) * (Size) p->hdr.nids;
	if (p->hdr.magic != SEGVEC_POSTINGS_MAGIC ||
		p->hdr.nfilters != seg->nfilters ||
		postings_pages(len) != seg->npostpages)
	{
		postings_release(p);
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("postings area of segment %u of index \"%s\" is corrupted",
						seg->segno, RelationGetRelationName(index))));
	}
	p->cols = palloc(sizeof(SegvecPostingsColumn) * p->hdr.nfilters);
	postings_read(p, sizeof(SegvecPostingsHeader), p->cols,
				  sizeof(SegvecPostingsColumn) * p->hdr.nfilters);
	return true;
}

/* GraphPostingsHasColumn: does column col (0-based) have postings? */
bool
GraphPostingsHasColumn(GraphPostings *p, int col)
{
	return col >= 0 && col < (int) p->hdr.nfilters &&
		(p->cols[col].flags & SEGVEC_POSTINGS_COLUMN_HAS) != 0;
}

/* the postings area is corrupted */
static void
postings_corrupted(GraphPostings *p)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("postings area of segment %u of index \"%s\" is corrupted",
					p->seg->segno, RelationGetRelationName(p->index))));
}

/* GraphPostingsHasBits: does column col (0-based) have bit postings? */
bool
GraphPostingsHasBits(GraphPostings *p, int col)
{
	return col >= 0 && col < (int) p->hdr.nfilters &&
		(p->cols[col].flags & SEGVEC_POSTINGS_COLUMN_BITS) != 0;
}


/*
 * GraphPostingsBits: the directory of column col (which has bit postings)
 * by bit, into bits[0 .. 63]: a bit's count of nodes (0: no node has it)
 * and where its list starts among the nids (SEGVEC_POSTINGS_NO_LIST: it
 * has none); read a list with GraphPostingsReadIds.
 */
void
GraphPostingsBits(GraphPostings *p, int col, SegvecPostingsEntry *bits)
{
	const SegvecPostingsColumn *pc = &p->cols[col];
	SegvecPostingsEntry *dir;
	uint32		i;

	Assert(GraphPostingsHasBits(p, col));
	memset(bits, 0, sizeof(SegvecPostingsEntry) * 64);
	for (i = 0; i < 64; i++)
		bits[i].list = SEGVEC_POSTINGS_NO_LIST;
	if (pc->count > 64 || (uint64) pc->first + pc->count > p->hdr.ndir ||
		(uint64) pc->ids_first + pc->nids > p->hdr.nids)
		postings_corrupted(p);
	if (pc->count == 0)
		return;
	dir = palloc(sizeof(SegvecPostingsEntry) * pc->count);
	postings_read(p, SEGVEC_POSTINGS_DIR_OFF(p->hdr.nfilters) +
				  sizeof(SegvecPostingsEntry) * (Size) pc->first,
				  dir, sizeof(SegvecPostingsEntry) * pc->count);
	for (i = 0; i < pc->count; i++)
	{
		int64		bit = dir[i].value;

		if (bit < 0 || bit >= 64 || bits[bit].count != 0 ||
			dir[i].count == 0 ||
			(dir[i].list != SEGVEC_POSTINGS_NO_LIST &&
			 (dir[i].list < pc->ids_first ||
			  (uint64) dir[i].list + dir[i].count >
			  (uint64) pc->ids_first + pc->nids)))
			postings_corrupted(p);
		bits[bit] = dir[i];
	}
	pfree(dir);
}

/* directory entry i (0-based) of column col */
static void
dir_entry(GraphPostings *p, int col, uint32 i, SegvecPostingsEntry *e)
{
	postings_read(p, SEGVEC_POSTINGS_DIR_OFF(p->hdr.nfilters) +
				  sizeof(SegvecPostingsEntry) * (Size) (p->cols[col].first + i),
				  e, sizeof(SegvecPostingsEntry));
}

/* GraphPostingsHasLabels: does column col (0-based) have label postings? */
bool
GraphPostingsHasLabels(GraphPostings *p, int col)
{
	return col >= 0 && col < (int) p->hdr.nfilters &&
		(p->cols[col].flags & SEGVEC_POSTINGS_COLUMN_LABELS) != 0;
}

/*
 * The directory and lists of column col lie within the area (their
 * entries' lists are checked as they are read)
 */
static void
check_column(GraphPostings *p, int col)
{
	const SegvecPostingsColumn *pc = &p->cols[col];

	if ((uint64) pc->first + pc->count > p->hdr.ndir ||
		(uint64) pc->ids_first + pc->nids > p->hdr.nids)
		postings_corrupted(p);
}

/*
 * GraphPostingsLabel: the nodes of column col (which has label postings)
 * that have the label of hash hash are node numbers *first .. *first +
 * *count - 1 among the nids (*count 0: no node has it); read them with
 * GraphPostingsReadIds.
 */
void
GraphPostingsLabel(GraphPostings *p, int col, uint64 hash, uint32 *first,
				   uint32 *count)
{
	const SegvecPostingsColumn *pc = &p->cols[col];
	uint32		lo = 0;
	uint32		hi = pc->count;
	SegvecPostingsEntry e;

	Assert(GraphPostingsHasLabels(p, col));
	check_column(p, col);
	*first = 0;
	*count = 0;
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		dir_entry(p, col, mid, &e);
		if (e.value < (int64) hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= pc->count)
		return;
	dir_entry(p, col, lo, &e);
	if (e.value != (int64) hash)
		return;
	if (e.count == 0 || e.list < pc->ids_first ||
		(uint64) e.list + e.count > (uint64) pc->ids_first + pc->nids)
		postings_corrupted(p);
	*first = e.list;
	*count = e.count;
}

/*
 * GraphPostingsLabelPairs: the (label, node) pairs of column col (which
 * has label postings), each node numbered map[node] (map NULL: as it is;
 * a node mapped to PG_UINT32_MAX left out), added to out.
 */
void
GraphPostingsLabelPairs(GraphPostings *p, int col, const uint32 *map,
						GraphLabels *out)
{
	const SegvecPostingsColumn *pc = &p->cols[col];
	SegvecPostingsEntry *dir;
	uint32	   *ids;
	uint32		i;

	Assert(GraphPostingsHasLabels(p, col));
	check_column(p, col);
	if (pc->count == 0)
		return;
	dir = MemoryContextAllocHuge(CurrentMemoryContext,
								 sizeof(SegvecPostingsEntry) * (Size) pc->count);
	postings_read(p, SEGVEC_POSTINGS_DIR_OFF(p->hdr.nfilters) +
				  sizeof(SegvecPostingsEntry) * (Size) pc->first,
				  dir, sizeof(SegvecPostingsEntry) * (Size) pc->count);
	ids = MemoryContextAllocHuge(CurrentMemoryContext,
								 sizeof(uint32) * (Size) Max(pc->nids, 1));
	GraphPostingsReadIds(p, pc->ids_first, pc->nids, ids);
	for (i = 0; i < pc->count; i++)
	{
		uint32		j;

		if (dir[i].count == 0 || dir[i].list < pc->ids_first ||
			(uint64) dir[i].list + dir[i].count >
			(uint64) pc->ids_first + pc->nids)
			postings_corrupted(p);
		for (j = dir[i].list; j < dir[i].list + dir[i].count; j++)
		{
			uint32		node = ids[j - pc->ids_first];

			if (node >= p->seg->ndocs)
				postings_corrupted(p);
			if (map != NULL)
				node = map[node];
			if (node != PG_UINT32_MAX)
				GraphLabelsAdd(out, (uint64) dir[i].value, node);
		}
		CHECK_FOR_INTERRUPTS();
	}
	pfree(ids);
	pfree(dir);
}

/*
 * The first directory entry of column col whose value is at least value
 * (upper: greater than value), as int64; the column's count if none is.
 */
static uint32
dir_bound(GraphPostings *p, int col, int64 value, bool upper)
{
	uint32		lo = 0;
	uint32		hi = p->cols[col].count;
	SegvecPostingsEntry e;

	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		dir_entry(p, col, mid, &e);
		if (e.value < value || (upper && e.value == value))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* where the list of directory entry i of column col starts among the nids */
static uint32
dir_list(GraphPostings *p, int col, uint32 i)
{
	SegvecPostingsEntry e;

	if (i >= p->cols[col].count)
		return p->cols[col].ids_first + p->cols[col].nids;
	dir_entry(p, col, i, &e);
	return e.list;
}

/*
 * GraphPostingsRange: the directory entries of column col (which has
 * postings) whose value v satisfies "v op value" (op: a btree strategy;
 * compared as int64, as the scan keys compare them) are entries *from ..
 * *to - 1 of the column (0-based; none when *from >= *to).
 */
void
GraphPostingsRange(GraphPostings *p, int col, int strategy, int64 value,
				   uint32 *from, uint32 *to)
{
	Assert(GraphPostingsHasColumn(p, col));
	switch (strategy)
	{
		case BTLessStrategyNumber:
			*from = 0;
			*to = dir_bound(p, col, value, false);
			break;
		case BTLessEqualStrategyNumber:
			*from = 0;
			*to = dir_bound(p, col, value, true);
			break;
		case BTEqualStrategyNumber:
			*from = dir_bound(p, col, value, false);
			*to = *from;
			if (*from < p->cols[col].count)
			{
				SegvecPostingsEntry e;

				dir_entry(p, col, *from, &e);
				if (e.value == value)
					*to = *from + 1;
			}
			break;
		case BTGreaterEqualStrategyNumber:
			*from = dir_bound(p, col, value, false);
			*to = p->cols[col].count;
			break;
		case BTGreaterStrategyNumber:
			*from = dir_bound(p, col, value, true);
			*to = p->cols[col].count;
			break;
		default:
			elog(ERROR, "unknown segvec postings strategy %d", strategy);
	}
}

/* GraphPostingsValues: the directory entries of column col */
uint32
GraphPostingsValues(GraphPostings *p, int col)
{
	Assert(GraphPostingsHasColumn(p, col));
	return p->cols[col].count;
}

/*
 * GraphPostingsRun: the nodes of directory entries from .. to - 1 of
 * column col are node numbers *first .. *first + *count - 1 among the
 * nids (each value's list ascending, the values' lists one after the
 * other); read them with GraphPostingsReadIds.
 */
void
GraphPostingsRun(GraphPostings *p, int col, uint32 from, uint32 to,
				 uint32 *first, uint32 *count)
{
	if (from >= to)
	{
		*first = 0;
		*count = 0;
		return;
	}
	*first = dir_list(p, col, from);
	*count = dir_list(p, col, to) - *first;
	if ((uint64) *first + *count > p->hdr.nids)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("postings area of segment %u of index \"%s\" is corrupted",
						p->seg->segno, RelationGetRelationName(p->index))));
}

/*
 * GraphPostingsReadIds: node numbers first .. first + count - 1 (as
 * GraphPostingsRun gives them) into ids.
 */
void
GraphPostingsReadIds(GraphPostings *p, uint32 first, uint32 count,
					 uint32 *ids)
{
	if (count == 0)
		return;
	postings_read(p, SEGVEC_POSTINGS_IDS_OFF(p->hdr.nfilters, p->hdr.ndir) +
				  sizeof(uint32) * (Size) first,
				  ids, sizeof(uint32) * (Size) count);
}

/* GraphPostingsClose: release what GraphPostingsOpen holds */
void
GraphPostingsClose(GraphPostings *p)
{
	postings_release(p);
	if (p->cols)
		pfree(p->cols);
	p->cols = NULL;
}

/*
 * Do the label pairs l of column c agree with the n nodes' filter entries:
 * each node with labels not NULL in c and its signature their bits'
 * union?  (A node with none may have any signature: its row was gone when
 * its segment was written.)
 */
static bool
labels_match_entries(const GraphLabels *l, const char *entries, uint32 n,
					 int nfilters, int c)
{
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(nfilters);
	uint64	   *sigs = MemoryContextAllocHuge(CurrentMemoryContext,
											  sizeof(uint64) * (Size) Max(n, 1));
	bool		ok = true;
	uint32		i;

	memset(sigs, 0, sizeof(uint64) * (Size) Max(n, 1));
	for (i = 0; i < l->npairs; i++)
		sigs[l->pairs[i].node] |= SEGVEC_LABEL_BITS((uint64) l->pairs[i].value);
	for (i = 0; i < n && ok; i++)
	{
		const char *e = entries + (Size) i * fbytes;
		uint64		present;
		uint64		sig;

		if (sigs[i] == 0)
			continue;
		memcpy(&present, e, sizeof(uint64));
		memcpy(&sig, e + sizeof(uint64) * (c + 1), sizeof(uint64));
		ok = (present & (UINT64CONST(1) << c)) && sig == sigs[i];
	}
	pfree(sigs);
	return ok;
}

/*
 * GraphPostingsCheck: does seg's postings area hold what its filter
 * entries give (GraphPostingsBuild over every node's entry, tombstoned
 * ones included, as when the segment was written)?  True for a segment
 * without postings; a label array column without bit postings is taken
 * for one written before them.  A column with label postings is rebuilt
 * from its own pairs, each node's labels checked against its signature.
 * For ft.verify.
 */
bool
GraphPostingsCheck(Relation index, const SegvecSegment *seg, int dim)
{
	GraphPostings p;
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);
	uint32		npages = GraphFilterPages(seg);
	GraphLabels *labels;
	Buffer		buf = InvalidBuffer;
	char	   *entries;
	uint32	   *postable;
	char	   *image;
	Size		len;
	Size		stored_len;
	char	   *stored;
	uint32		pageno;
	int			c;
	bool		ok;

	if (!GraphPostingsOpen(index, seg, dim, &p))
		return true;
	entries = MemoryContextAllocHuge(CurrentMemoryContext,
									 mul_size(Max(seg->ndocs, 1), fbytes));
	for (pageno = 0; pageno < npages; pageno++)
	{
		uint32		first;
		uint32		count;
		const char *page;

		CHECK_FOR_INTERRUPTS();
		page = GraphPinFilterPage(index, seg, pageno, &buf, &first, &count);
		memcpy(entries + (Size) first * fbytes, page, (Size) count * fbytes);
	}
	GraphReleaseFilterPage(index, seg, &buf);

	postable = palloc(sizeof(uint32) * seg->nfilters);
	labels = palloc0(sizeof(GraphLabels) * seg->nfilters);
	SegvecIndexFilterPostable(index, postable);
	ok = true;
	for (c = 0; c < (int) seg->nfilters; c++)
	{
		if (postable[c] == SEGVEC_POSTINGS_COLUMN_BITS &&
			p.cols[c].flags == 0)
			postable[c] = 0;	/* written before bit postings */
		if (postable[c] == SEGVEC_POSTINGS_COLUMN_BITS &&
			GraphPostingsHasLabels(&p, c))
		{
			labels[c].known = true;
			GraphPostingsLabelPairs(&p, c, NULL, &labels[c]);
			ok = ok && labels_match_entries(&labels[c], entries, seg->ndocs,
											seg->nfilters, c);
		}
	}
	image = GraphPostingsBuild(entries, seg->ndocs, seg->nfilters, postable,
							   labels, &len);
	stored_len = (Size) seg->npostpages * SEGVEC_SEGPAGE_USABLE;
	stored = MemoryContextAllocHuge(CurrentMemoryContext, stored_len);
	postings_read(&p, 0, stored, stored_len);
	GraphPostingsClose(&p);

	ok = ok && (image != NULL && len <= stored_len &&
				memcmp(image, stored, len) == 0);
	if (ok)
	{
		Size		i;

		/* and nothing after it */
		for (i = len; i < stored_len && ok; i++)
			ok = (stored[i] == 0);
	}
	if (image)
		pfree(image);
	pfree(stored);
	for (c = 0; c < (int) seg->nfilters; c++)
		if (labels[c].pairs)
			pfree(labels[c].pairs);
	pfree(labels);
	pfree(postable);
	pfree(entries);
	return ok;
}

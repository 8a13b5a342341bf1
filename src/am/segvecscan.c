/*-------------------------------------------------------------------------
 *
 * segvecscan.c
 *	  Ordered index scans: ORDER BY vector <op> query.
 *
 * A scan reads the manifest once (its view of the segments) and merges
 * streams of candidates (heap TID and distance), one per segment, each in
 * non-decreasing distance: the mutable segment is scored exactly, doc by
 * doc (an alias with the vector of its target, graph/alias.c), and
 * sorted; each immutable segment is searched through its HNSW graph
 * (graphsearch.c), incrementally for as long as the executor asks,
 * so a WHERE filter above the scan still gets LIMIT rows when that many
 * qualify.  The graph searches of one scan share a budget of
 * segvec.max_scan_tuples visited docs (distances computed); once it is
 * spent they stop expanding, return what they hold, and a NOTICE says so.
 *
 * The first rows cost what the nearest docs of all segments together
 * need, not what each segment's own nearest need: the mutable segment is
 * scored first, then the graph segments are searched biggest first, all
 * sharing one bound (GraphScanBound), the k-th smallest distance found so
 * far (k = segvec.ef_search: the executor does not tell an index scan its
 * LIMIT).  A segment whose candidates are all farther stops early; its
 * stream then has a *provisional* head, a distance none of its rows is
 * nearer than.  When a provisional head is the nearest of all heads, or
 * once k rows are out, that segment's search goes on unbounded from where
 * it stopped, so long and filtered scans still get every row it finds.
 *
 * Order.  PostgreSQL trusts an ordering index scan's order (no recheck of
 * ORDER BY; a Merge Append over partitions relies on it too), but a graph
 * search only approximates it: a search that goes on can find a doc nearer
 * than one it already returned, exact scoring that takes over a segment
 * after ef_search rows ranks first the docs its graph search missed, and a
 * quantized segment's search yields in estimated order; a search stopped
 * at the shared bound reports a lower bound that is as good as the search.
 * Each such "late find" is nearer than a row already returned.  Under
 * segvec.scan_order = strict (the default) each graph search holds a
 * look-ahead of rows and returns the nearest it holds, so most late finds
 * go out in their place (graphsearch.c, GraphScanNext).  The merge
 * compares every row with the row returned last: under strict a nearer one
 * is skipped, so the output is in
 * non-decreasing distance (float8 order, NaN last) whatever the sources
 * did; under relaxed it is returned where it was found.  Either way the
 * scan counts them and reports the count at DEBUG1 when it ends, or at
 * NOTICE when strict order skipped some and the executor read the scan to
 * its end: that query needed every row, so the skipped ones are missing
 * from its answer, not just ranked out of its first k.
 *
 * Rules for odd queries (see README.md, "Vectors and distances"):
 *	- rows whose vector is NULL are not in the index, so no index scan
 *	  returns them;
 *	- a NULL query vector (or a scan without ORDER BY) returns every
 *	  indexed row, in index order;
 *	- with cosine distance, a zero vector's distance is NaN and NaN sorts
 *	  after every number, as float8 comparison does; a zero query vector
 *	  makes every distance NaN, so it is treated like a NULL query.
 *
 * src/am/segvecscan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/am.h"
#include "graph/graph.h"
#include "hooks/testhooks.h"
#include "store/store.h"

/* One candidate of an ordered scan: distance and heap TID */
typedef struct SegvecCandidate
{
	double		distance;
	ItemPointerData heaptid;
} SegvecCandidate;

/* An immutable segment's stream of candidates in a scan */
typedef struct SegvecGraphSource
{
	struct GraphScan *scan;
	SegvecCandidate head;		/* next candidate, unless done */
	bool		done;
	bool		provisional;	/* head is only a lower bound (the search
								 * stopped at the shared bound) */
	int64		returned;
} SegvecGraphSource;

/* State of an index scan */
typedef struct SegvecScanOpaqueData
{
	MemoryContext scanCtx;		/* reset at every amrescan */
	bool		started;		/* candidates computed for this rescan? */
	SegvecMetric metric;
	int			dimensions;
	float	   *query;			/* the ORDER BY argument, or NULL */
	bool		query_isnull;	/* no usable ORDER BY argument */

	/* candidates from every segment, sorted by distance */
	SegvecCandidate *cands;
	int64		ncands;
	int64		maxcands;
	int64		next;			/* next candidate to return */
	double		last_distance;	/* distance of the row last returned */

	/* one source per immutable segment */
	SegvecGraphSource *graphs;
	int			ngraphs;
	int			advance_graph;	/* source to advance before the next row */
	GraphScanBudget budget;		/* shared by the graph searches */
	GraphScanBound bound;		/* k-th distance, shared likewise */
	int64		nreturned;		/* rows returned since the rescan */
	int64		nlate;			/* late finds since the rescan: skipped
								 * (strict) or returned (relaxed) */
	int			order;			/* segvec.scan_order at the scan's start */

	/* the scan keys on filter columns, evaluated on every doc */
	SegvecFilter filter;
	bool		filtered;		/* any key at all */
} SegvecScanOpaqueData;

typedef SegvecScanOpaqueData *SegvecScanOpaque;

/* float8 order with NaN after every number (float8_cmp_internal's order) */
static inline int
candidate_cmp(const SegvecCandidate *a, const SegvecCandidate *b)
{
	return float8_cmp_internal(a->distance, b->distance);
}

/* sort_candidates(): an inlined quicksort on SegvecCandidate */
#define ST_SORT sort_candidates
#define ST_ELEMENT_TYPE SegvecCandidate
#define ST_COMPARE(a, b) candidate_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Say at DEBUG1 how many late finds the scan met since its last rescan
 * (rows nearer than a row it had already returned): skipped under
 * segvec.scan_order = strict, returned out of order under relaxed.
 */
static void
report_late(SegvecScanOpaque so)
{
	int64		late = so->nlate + so->budget.late;

	if (late > 0)
		ereport(DEBUG1,
				(errmsg(so->order == SEGVEC_SCAN_ORDER_STRICT ?
						"segvec index scan skipped " INT64_FORMAT " rows found after a farther row was returned" :
						"segvec index scan returned " INT64_FORMAT " rows after a farther row",
						late),
				 errdetail("It returned " INT64_FORMAT " rows.", so->nreturned)));
	so->nlate = 0;
	so->budget.late = 0;
}

/*
 * The executor read the scan to its end (or to where
 * segvec.max_scan_tuples stopped it): the query needed every row the index
 * holds (a filter that few rows pass, or no LIMIT).  Rows that
 * strict order skipped as late finds are then missing from its answer,
 * not merely ranked out of the first k, so say so at NOTICE, as the scan
 * does when segvec.max_scan_tuples stops it.
 */
static void
report_skipped_at_end(SegvecScanOpaque so)
{
	int64		late = so->nlate + so->budget.late;

	if (so->order != SEGVEC_SCAN_ORDER_STRICT || late == 0)
		return;
	ereport(NOTICE,
			(errmsg("segvec index scan skipped " INT64_FORMAT " rows found after a farther row had been returned",
					late),
			 so->budget.noticed ?
			 errdetail("The scan returned " INT64_FORMAT " rows before segvec.max_scan_tuples stopped it; under segvec.scan_order = strict, rows that the graph search found out of distance order are skipped, so any of them that the query's conditions accept is missing from its result.",
					   so->nreturned) :
			 errdetail("The scan returned " INT64_FORMAT " rows and ran to its end; under segvec.scan_order = strict, rows that the graph search found out of distance order are skipped, so any of them that the query's conditions accept is missing from its result.",
					   so->nreturned),
			 errhint("Raise segvec.ef_search, or set segvec.scan_order = relaxed and sort the rows again in an outer query.")));
	so->nlate = 0;
	so->budget.late = 0;
}

/* Release the graph sources' buffers */
static void
end_graphs(SegvecScanOpaque so)
{
	int			i;

	for (i = 0; i < so->ngraphs; i++)
		if (!so->graphs[i].done)
			GraphScanEnd(so->graphs[i].scan);
	so->ngraphs = 0;
	so->graphs = NULL;
}

/*
 * segvecbeginscan: ambeginscan callback.
 */
IndexScanDesc
segvecbeginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	SegvecScanOpaque so = palloc0(sizeof(SegvecScanOpaqueData));

	so->scanCtx = AllocSetContextCreate(CurrentMemoryContext,
										"segvec scan context",
										ALLOCSET_DEFAULT_SIZES);
	so->metric = SegvecGetMetric(index);
	so->advance_graph = -1;
	scan->opaque = so;
	return scan;
}

/*
 * segvecrescan: amrescan callback.  Only remembers the keys; the work is
 * done by the first amgettuple call.
 */
void
segvecrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
			 ScanKey orderbys, int norderbys)
{
	SegvecScanOpaque so = (SegvecScanOpaque) scan->opaque;

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey,
				scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys,
				scan->numberOfOrderBys * sizeof(ScanKeyData));

	report_late(so);
	end_graphs(so);
	MemoryContextReset(so->scanCtx);
	so->started = false;
	so->advance_graph = -1;
	so->query = NULL;
	so->cands = NULL;
	so->ncands = 0;
	so->maxcands = 0;
	so->next = 0;
	so->nreturned = 0;
	so->nlate = 0;
	so->order = segvec_scan_order;
	memset(&so->bound, 0, sizeof(so->bound));	/* its heap was in scanCtx */
}

/*
 * Add a candidate to the scan's array, growing it as needed.
 */
static void
add_candidate(SegvecScanOpaque so, ItemPointer heaptid, double distance)
{
	if (so->ncands >= so->maxcands)
	{
		int64		newmax = Max(1024, so->maxcands * 2);

		if (so->cands == NULL)
			so->cands = MemoryContextAllocHuge(so->scanCtx,
											   mul_size(newmax, sizeof(SegvecCandidate)));
		else
			so->cands = repalloc_huge(so->cands,
									  mul_size(newmax, sizeof(SegvecCandidate)));
		so->maxcands = newmax;
	}
	so->cands[so->ncands].distance = distance;
	so->cands[so->ncands].heaptid = *heaptid;
	so->ncands++;
}

/* SegvecDocCallback of the mutable segment's exact scan */
static void
score_doc(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
	SegvecScanOpaque so = (SegvecScanOpaque) arg;
	double		distance;

	if (so->filtered &&
		!SegvecFilterMatch(&so->filter, SegvecDocFilterEntry(vector, dim)))
		return;
	if (so->query_isnull)
		distance = 0;
	else
		distance = SegvecDistance(so->metric, so->query, vector, dim);
	add_candidate(so, (ItemPointer) &doc->heaptid, distance);
	GraphBoundOffer(&so->bound, distance);
}

/* SegvecDocCallback listing docs in index order (NULL query) */
static void
list_doc(const SegvecDocInfo *doc, const float *vector, int dim, void *arg)
{
	SegvecScanOpaque so = (SegvecScanOpaque) arg;

	if (so->filtered &&
		!SegvecFilterMatch(&so->filter, SegvecDocFilterEntry(vector, dim)))
		return;
	add_candidate(so, (ItemPointer) &doc->heaptid, 0);
}

/*
 * The nodes of seg that fail the scan's filter (a bitmap of seg->ndocs
 * bits, in the scan's memory), and in *npass how many nodes not in tomb
 * pass: every entry of its filter area checked where it lies in the
 * pinned page.  A segment without filter entries (none of an index with
 * filter columns has) would pass nothing.
 */
static uint8 *
segment_filter(IndexScanDesc scan, const SegvecSegment *seg,
			   const uint8 *tomb, int64 *npass)
{
	SegvecScanOpaque so = (SegvecScanOpaque) scan->opaque;
	Size		mapbytes = (seg->ndocs + 7) / 8 + 1;
	uint8	   *fail = palloc0(mapbytes);
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);
	uint32		npages = GraphFilterPages(seg);
	Buffer		buf = InvalidBuffer;
	uint32		pageno;
	int64		n = 0;

	*npass = 0;
	if (seg->nfilters != so->filter.nfilters)
	{
		memset(fail, 0xFF, mapbytes);
		return fail;
	}
	for (pageno = 0; pageno < npages; pageno++)
	{
		uint32		first;
		uint32		count;
		const char *entries;
		uint32		i;

		CHECK_FOR_INTERRUPTS();
		entries = GraphPinFilterPage(scan->indexRelation, seg, pageno, &buf,
									 &first, &count);
		for (i = 0; i < count; i++)
		{
			uint32		node = first + i;

			if (GraphTombstoneIsSet(tomb, node))
				continue;
			if (SegvecFilterMatch(&so->filter, entries + (Size) i * fbytes))
				n++;
			else
				fail[node >> 3] |= (uint8) (1 << (node & 7));
		}
	}
	GraphReleaseFilterPage(scan->indexRelation, seg, &buf);
	*npass = n;
	return fail;
}

/* GraphFilterFn of a lazy filter: the scan's keys on a node's entry */
static bool
entry_passes(const char *entry, void *arg)
{
	return SegvecFilterMatch((const SegvecFilter *) arg, entry);
}

/*
 * Filter-area pages a scan samples to estimate how many of a segment's
 * nodes pass, before it decides between checking every entry at once and
 * checking them as the walk meets the nodes (a filter area of fewer than
 * twice as many pages is read whole).
 */
#define FILTER_SAMPLE_PAGES	8

/*
 * An estimate of the live nodes of seg (not in tomb) that pass the scan's
 * filter, from FILTER_SAMPLE_PAGES pages spread evenly over its filter
 * area; -1 when the area is small enough to read whole.
 */
static int64
segment_filter_estimate(IndexScanDesc scan, const SegvecSegment *seg,
						const uint8 *tomb)
{
	SegvecScanOpaque so = (SegvecScanOpaque) scan->opaque;
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);
	uint32		npages = GraphFilterPages(seg);
	Buffer		buf = InvalidBuffer;
	int64		seen = 0;
	int64		pass = 0;
	int			k;

	if (seg->nfilters != so->filter.nfilters ||
		npages < 2 * FILTER_SAMPLE_PAGES)
		return -1;
	for (k = 0; k < FILTER_SAMPLE_PAGES; k++)
	{
		uint32		pageno = (uint32) (((uint64) npages * (2 * k + 1)) /
									   (2 * FILTER_SAMPLE_PAGES));
		uint32		first;
		uint32		count;
		const char *entries;
		uint32		i;

		entries = GraphPinFilterPage(scan->indexRelation, seg, pageno, &buf,
									 &first, &count);
		for (i = 0; i < count; i++)
		{
			if (GraphTombstoneIsSet(tomb, first + i))
				continue;
			seen++;
			if (SegvecFilterMatch(&so->filter, entries + (Size) i * fbytes))
				pass++;
		}
	}
	GraphReleaseFilterPage(scan->indexRelation, seg, &buf);
	if (seen == 0)
		return 0;
	return (int64) ((double) pass / seen *
					((int64) seg->ndocs - seg->ntombstones));
}

/* What a scan learnt of a segment from its postings (segment_postings) */
typedef enum PostingsUse
{
	POSTINGS_NONE,				/* nothing: its filter entries tell */
	POSTINGS_SKIP,				/* no node passes: the segment is skipped */
	POSTINGS_LIST				/* the passing nodes, exactly, from lists */
} PostingsUse;

static int
uint32_cmp(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* a run of node numbers of a segment's postings (GraphPostingsFind) */
typedef struct PostingsRun
{
	uint32		first;
	uint32		count;
} PostingsRun;

/* uint64 order, for a label key's labels (their bits) */
static int
uint64_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* a into a and b's common node numbers (both ascending); returns their count */
static int64
intersect_ids(uint32 *a, int64 na, const uint32 *b, int64 nb)
{
	int64		i = 0;
	int64		j = 0;
	int64		n = 0;

	/* without branches on the comparison: the lists interleave unpredictably */
	while (i < na && j < nb)
	{
		uint32		x = a[i];
		uint32		y = b[j];

		a[n] = x;				/* n <= i: a[i] is read already */
		n += (x == y);
		i += (x <= y);
		j += (y <= x);
	}
	return n;
}

/*
 * The nodes with every bit of bits (none of which is without nodes), from
 * a column's bit postings, dir by bit (GraphPostingsBits): the intersection of the bits' lists
 * (cache keeps each bit's list once read), ascending, palloc'd, their
 * count in *n.  A bit without a list is left out (*superset set); NULL
 * when no bit has one.
 */
static uint32 *
bits_nodes(GraphPostings *p, const SegvecPostingsEntry *dir, uint32 **cache,
		   uint64 bits, int64 *n, bool *superset)
{
	uint32	   *ids = NULL;
	int			bit;

	*n = 0;
	for (;;)
	{
		int			next = -1;

		/* the shortest list first: the intersection only shrinks */
		for (bit = 0; bit < 64; bit++)
		{
			if (!(bits & (UINT64CONST(1) << bit)))
				continue;
			if (dir[bit].list == SEGVEC_POSTINGS_NO_LIST)
			{
				*superset = true;
				bits &= ~(UINT64CONST(1) << bit);
				continue;
			}
			if (next < 0 || dir[bit].count < dir[next].count)
				next = bit;
		}
		if (next < 0)
			return ids;
		bits &= ~(UINT64CONST(1) << next);
		if (cache[next] == NULL)
		{
			cache[next] = palloc(sizeof(uint32) * dir[next].count);
			GraphPostingsReadIds(p, dir[next].list, dir[next].count,
								 cache[next]);
		}
		if (ids == NULL)
		{
			ids = palloc(sizeof(uint32) * dir[next].count);
			memcpy(ids, cache[next], sizeof(uint32) * dir[next].count);
			*n = dir[next].count;
		}
		else
			*n = intersect_ids(ids, *n, cache[next], dir[next].count);
		if (*n == 0)
			return ids;
	}
}

/*
 * The nodes of segment seg that have the labels of label key key in
 * column key->col, which has label postings (p), from the labels' lists,
 * ascending, palloc'd, their count in *n: exactly the nodes that pass
 * (&&: one of the labels; @>: all of them), or (*superset set) more, for
 * = (the nodes with all of the argument's labels, some with others too),
 * or for @> when a list was too long to read (the nodes of the labels
 * read).  NULL when the lists do not bound them: <@, @> or = with no
 * label, or lists longer than SEGVEC_POSTINGS_READ_DIV allows.  A label
 * on no node has no node.
 */
static uint32 *
label_value_nodes(GraphPostings *p, const SegvecSegment *seg,
				  const SegvecFilterKey *key, int64 *n, bool *superset)
{
	uint32	   *first = palloc(sizeof(uint32) * Max(key->nlabels, 1));
	uint32	   *count = palloc(sizeof(uint32) * Max(key->nlabels, 1));
	uint32	   *ids = NULL;
	int64		budget = seg->ndocs / SEGVEC_POSTINGS_READ_DIV;
	int64		cost = 0;
	int			j;

	*n = 0;
	*superset = (key->strategy == SEGVEC_LABELS_EQUAL);
	if (key->strategy == SEGVEC_LABELS_CONTAINED ||
		(key->strategy != SEGVEC_LABELS_OVERLAP && key->nlabels == 0))
	{
		pfree(first);
		pfree(count);
		return NULL;
	}
	for (j = 0; j < key->nlabels; j++)
	{
		GraphPostingsLabel(p, key->col, key->hashes[j], &first[j], &count[j]);
		if (count[j] == 0 && key->strategy != SEGVEC_LABELS_OVERLAP)
		{
			/* @> or =: a label on no node, so no node passes */
			pfree(first);
			pfree(count);
			return palloc(sizeof(uint32));
		}
	}

	if (key->strategy == SEGVEC_LABELS_OVERLAP)
	{
		uint8	   *map;
		int64		total = 0;
		uint32		node;

		int			only = -1;	/* the one label on some node; -2: more */

		/* &&: the union of the labels' lists */
		for (j = 0; j < key->nlabels; j++)
		{
			cost += count[j];
			if (count[j] > 0)
				only = (only == -1 || (only >= 0 && first[only] == first[j])) ?
					j : -2;
		}
		if (cost > budget)
		{
			pfree(first);
			pfree(count);
			return NULL;
		}
		if (only != -2)
		{
			/* one label on some node (or none): its list, as it is */
			ids = palloc(sizeof(uint32) * (only >= 0 ? count[only] : 1));
			if (only >= 0)
			{
				GraphPostingsReadIds(p, first[only], count[only], ids);
				*n = count[only];
			}
			pfree(first);
			pfree(count);
			return ids;
		}
		map = palloc0((seg->ndocs + 7) / 8 + 1);
		ids = palloc(sizeof(uint32) * Max(cost, 1));
		for (j = 0; j < key->nlabels; j++)
		{
			int64		i;

			if (count[j] == 0 || (j > 0 && first[j] == first[j - 1]))
				continue;
			GraphPostingsReadIds(p, first[j], count[j], ids);
			for (i = 0; i < count[j]; i++)
			{
				if (ids[i] >= seg->ndocs)
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("postings of segment %u of index \"%s\" name node %u of %u",
									seg->segno, RelationGetRelationName(p->index),
									ids[i], seg->ndocs)));
				if (!(map[ids[i] >> 3] & (1 << (ids[i] & 7))))
				{
					map[ids[i] >> 3] |= (uint8) (1 << (ids[i] & 7));
					total++;
				}
			}
		}
		for (node = 0; node < seg->ndocs; node++)
		{
			if (map[node >> 3] == 0)
			{
				node |= 7;		/* the byte's other nodes too */
				continue;
			}
			if (map[node >> 3] & (1 << (node & 7)))
				ids[(*n)++] = node;
		}
		Assert(*n == total);
		pfree(map);
	}
	else
	{
		bool	   *done = palloc0(sizeof(bool) * key->nlabels);
		uint32	   *some = NULL;

		/* @> and =: the intersection, the shortest lists first */
		for (;;)
		{
			int			next = -1;

			for (j = 0; j < key->nlabels; j++)
				if (!done[j] && (next < 0 || count[j] < count[next]))
					next = j;
			if (next < 0)
				break;
			done[next] = true;
			if (ids != NULL && cost + count[next] > budget)
			{
				*superset = true;	/* the rest: on their entries */
				break;
			}
			cost += count[next];
			if (cost > budget)
				break;			/* even the shortest list: NULL */
			if (ids == NULL)
			{
				ids = palloc(sizeof(uint32) * count[next]);
				GraphPostingsReadIds(p, first[next], count[next], ids);
				*n = count[next];
			}
			else
			{
				some = some == NULL ?
					palloc(sizeof(uint32) * count[next]) :
					repalloc(some, sizeof(uint32) * count[next]);
				GraphPostingsReadIds(p, first[next], count[next], some);
				*n = intersect_ids(ids, *n, some, count[next]);
			}
			if (*n == 0)
				break;
		}
		if (some)
			pfree(some);
		pfree(done);
	}
	pfree(first);
	pfree(count);
	return ids;
}

/*
 * The nodes of segment seg whose signature in column key->col (which has
 * bit postings, p) may pass label key key, from the bits' lists,
 * ascending, palloc'd, their count in *n: exactly the nodes whose signature
 * passes, or (*superset set) more, when a bit without a list had to be
 * left out, or for =, which needs a signature equal to the argument's.
 * NULL when the lists do not bound them: <@, @> or = with no label, a
 * label whose bits all lack lists, or lists longer than
 * SEGVEC_POSTINGS_READ_DIV allows.  A bit no node has empties its
 * label's set.
 */
static uint32 *
label_nodes(GraphPostings *p, const SegvecSegment *seg,
			const SegvecFilterKey *key, int64 *n, bool *superset)
{
	SegvecPostingsEntry dir[64];
	uint32	   *cache[64];
	uint64		present = 0;
	uint64		toread = 0;
	int64		cost = 0;
	uint32	   *ids = NULL;
	int			bit;
	int			j;

	if (GraphPostingsHasLabels(p, key->col))
		return label_value_nodes(p, seg, key, n, superset);
	*n = 0;
	*superset = false;
	if (key->strategy == SEGVEC_LABELS_CONTAINED ||
		(key->strategy != SEGVEC_LABELS_OVERLAP && key->value == 0))
		return NULL;
	GraphPostingsBits(p, key->col, dir);
	for (bit = 0; bit < 64; bit++)
		if (dir[bit].count > 0)
			present |= UINT64CONST(1) << bit;

	/*
	 * From the directory alone: the lists to read (a label with a bit on no
	 * node has no node, and needs none), and whether each label has one.
	 */
	if (key->strategy != SEGVEC_LABELS_OVERLAP)
	{
		if ((key->value & ~present) != 0)
			return palloc(sizeof(uint32));	/* none */
		toread = key->value;
	}
	else
	{
		for (j = 0; j < key->nlabels; j++)
		{
			uint64		b = key->labels[j];
			uint64		listed = 0;

			if ((b & ~present) != 0)
				continue;
			for (bit = 0; bit < 64; bit++)
				if ((b & (UINT64CONST(1) << bit)) &&
					dir[bit].list != SEGVEC_POSTINGS_NO_LIST)
					listed |= UINT64CONST(1) << bit;
			if (listed == 0)
				return NULL;
			toread |= listed;
		}
	}
	for (bit = 0; bit < 64; bit++)
		if ((toread & (UINT64CONST(1) << bit)) &&
			dir[bit].list != SEGVEC_POSTINGS_NO_LIST)
			cost += dir[bit].count;
	if (cost > seg->ndocs / SEGVEC_POSTINGS_READ_DIV)
		return NULL;
	memset(cache, 0, sizeof(cache));

	if (key->strategy != SEGVEC_LABELS_OVERLAP)
	{
		/* @> and =: the nodes with all of the argument's bits */
		ids = bits_nodes(p, dir, cache, key->value, n, superset);
		if (key->strategy == SEGVEC_LABELS_EQUAL)
			*superset = true;
	}
	else
	{
		uint8	   *map = NULL;
		uint64	   *labels;
		int64		total = 0;

		/*
		 * &&: the union of each label's nodes; labels with the same bits
		 * have the same nodes, so each pair of bits is read once (at most
		 * 64 * 65 / 2 of them, however long the argument)
		 */
		labels = palloc(sizeof(uint64) * Max(key->nlabels, 1));
		memcpy(labels, key->labels, sizeof(uint64) * key->nlabels);
		qsort(labels, key->nlabels, sizeof(uint64), uint64_cmp);
		for (j = 0; j < key->nlabels; j++)
		{
			uint64		b = labels[j];
			uint32	   *some;
			int64		nsome;
			int64		i;

			if ((b & ~present) != 0 || (j > 0 && b == labels[j - 1]))
				continue;
			some = bits_nodes(p, dir, cache, b, &nsome, superset);
			Assert(some != NULL);
			if (ids == NULL && map == NULL)
			{
				ids = some;		/* the first label's, as they are */
				total = nsome;
				continue;
			}
			if (map == NULL)
			{
				/* a second label: a bitmap of the nodes so far */
				map = palloc0((seg->ndocs + 7) / 8 + 1);
				for (i = 0; i < total; i++)
					map[ids[i] >> 3] |= (uint8) (1 << (ids[i] & 7));
				pfree(ids);
				ids = NULL;
			}
			for (i = 0; i < nsome; i++)
			{
				uint32		node = some[i];

				if (!(map[node >> 3] & (1 << (node & 7))))
				{
					map[node >> 3] |= (uint8) (1 << (node & 7));
					total++;
				}
			}
			pfree(some);
		}
		pfree(labels);
		if (map != NULL)
		{
			uint32		node;

			ids = palloc(sizeof(uint32) * Max(total, 1));
			*n = 0;
			for (node = 0; node < seg->ndocs; node++)
			{
				if (map[node >> 3] == 0)
				{
					node |= 7;	/* the byte's other nodes too */
					continue;
				}
				if (map[node >> 3] & (1 << (node & 7)))
					ids[(*n)++] = node;
			}
			Assert(*n == total);
			pfree(map);
		}
		else
		{
			if (ids == NULL)
				ids = palloc(sizeof(uint32));	/* no label on any node */
			*n = total;
		}
	}
	for (bit = 0; bit < 64; bit++)
		if (cache[bit])
			pfree(cache[bit]);
	return ids;
}

/*
 * What seg's postings (format.h) tell of the scan's filter, without its
 * filter area.  Of the scan's keys on columns with postings (=, <, <=, >=,
 * >, = ANY), the one that the fewest nodes pass, counted from the
 * directory, or, when that leaves more than a list's worth, a label key
 * (&&, @>, =) on a column with bit postings whose bits' lists name fewer:
 * none pass (SKIP: nothing else of the segment is read); few pass (LIST:
 * the nodes that fail the filter into *fail, a bitmap of seg->ndocs bits,
 * and the live nodes that pass into *npass: the lists' nodes not
 * tombstoned, and with other keys, or lists that name more than pass,
 * whose entries pass them, read for those nodes only).  A value list's
 * nodes have a value the key accepts in their entries, 8 bytes equal (a
 * hashed value too: the directory holds the entries' values, not a hash of
 * its own), so they pass that key as a check of their entries would; the
 * executor rechecks a hashed column's rows as ever.  Bit lists name the
 * nodes whose signature has the bits, as a check of the signature does.
 * NONE otherwise (more pass): the filter entries tell.
 */
static PostingsUse
segment_postings(IndexScanDesc scan, const SegvecSegment *seg, uint8 **fail,
				 int64 *npass)
{
	SegvecScanOpaque so = (SegvecScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	GraphPostings p;
	PostingsRun *best = NULL;
	int			nbest = 0;
	int64		best_total = -1;
	uint32	   *best_ids = NULL;	/* a label key's nodes, when best */
	bool		best_superset = false;
	uint32	   *ids;
	int64		nids = 0;
	uint8	   *tomb;
	Size		mapbytes;
	int64		n = 0;
	int			c;
	int			k;

	*fail = NULL;
	*npass = 0;
	if (!segvec_filter_postings ||
		seg->nfilters != so->filter.nfilters || so->filter.nkeys == 0 ||
		!GraphPostingsOpen(index, seg, so->dimensions, &p))
		return POSTINGS_NONE;
	/* per column with postings: its keys' runs, intersected */
	for (c = 0; c < so->filter.nfilters; c++)
	{
		uint32		from = 0;
		uint32		to;
		const SegvecFilterKey *setkey = NULL;
		PostingsRun *runs;
		int			nruns = 0;
		int64		total = 0;
		bool		keyed = false;

		if (!GraphPostingsHasColumn(&p, c))
			continue;
		to = GraphPostingsValues(&p, c);
		for (k = 0; k < so->filter.nkeys; k++)
		{
			const SegvecFilterKey *key = &so->filter.keys[k];
			uint32		f,
						t;

			if (key->col != c || key->labels != NULL)
				continue;
			keyed = true;
			if (key->set)
			{
				if (setkey == NULL)
					setkey = key;	/* another is checked on the entries */
				continue;
			}
			GraphPostingsRange(&p, c, key->strategy, (int64) key->value,
							   &f, &t);
			from = Max(from, f);
			to = Min(to, t);
		}
		if (!keyed)
			continue;
		runs = palloc(sizeof(PostingsRun) * (setkey ? Max(setkey->nset, 1) : 1));
		if (setkey)
		{
			int			v;

			/* each value of the list, within the range */
			for (v = 0; v < setkey->nset; v++)
			{
				uint32		f,
							t;

				GraphPostingsRange(&p, c, BTEqualStrategyNumber,
								   (int64) setkey->set[v], &f, &t);
				if (f < t && f >= from && f < to)
				{
					GraphPostingsRun(&p, c, f, t, &runs[nruns].first,
									 &runs[nruns].count);
					total += runs[nruns++].count;
				}
			}
		}
		else if (from < to)
		{
			GraphPostingsRun(&p, c, from, to, &runs[0].first, &runs[0].count);
			total = runs[0].count;
			nruns = 1;
		}
		if (best_total < 0 || total < best_total)
		{
			if (best)
				pfree(best);
			best = runs;
			nbest = nruns;
			best_total = total;
		}
		else
			pfree(runs);
	}

	/*
	 * Label keys, when the value postings leave more than a list: their
	 * bits' lists are read (each at most SEGVEC_POSTINGS_BITS_DIV of the
	 * segment) and intersected to count their nodes.
	 */
	for (k = 0; k < so->filter.nkeys && best_total != 0; k++)
	{
		const SegvecFilterKey *key = &so->filter.keys[k];
		uint32	   *some;
		int64		nsome;
		bool		superset;

		if (key->labels == NULL ||
			!(GraphPostingsHasBits(&p, key->col) ||
			  GraphPostingsHasLabels(&p, key->col)) ||
			(best_total >= 0 && best_total <= seg->ndocs / SEGVEC_POSTINGS_LIST_DIV))
			continue;
		some = label_nodes(&p, seg, key, &nsome, &superset);
		if (some == NULL)
			continue;
		if (best_total < 0 || nsome < best_total)
		{
			if (best)
				pfree(best);
			if (best_ids)
				pfree(best_ids);
			best = NULL;
			nbest = 0;
			best_ids = some;
			best_total = nsome;
			best_superset = superset;
		}
		else
			pfree(some);
	}

	if (best_total <= 0)
	{
		GraphPostingsClose(&p);
		return best_total < 0 ? POSTINGS_NONE : POSTINGS_SKIP;
	}
	if (best_total > seg->ndocs / SEGVEC_POSTINGS_LIST_DIV &&
		!GraphFilterPrefersExact(seg, segvec_ef_search, best_total))
	{
		/*
		 * More: the scan walks, with the sample's estimate of how many
		 * pass.  The exact count is at hand, but the far walk's choices
		 * are tuned to the estimate: on Fashion-MNIST 60,000, a 10%
		 * brightness filter's recall@10 fell from 0.961 to 0.937 with the
		 * count in its place.
		 */
		GraphPostingsClose(&p);
		return POSTINGS_NONE;
	}

	/* the runs' nodes (or the label key's), ascending */
	if (best_ids)
	{
		ids = best_ids;
		nids = best_total;
	}
	else
	{
		ids = palloc(sizeof(uint32) * best_total);
		for (k = 0; k < nbest; k++)
		{
			GraphPostingsReadIds(&p, best[k].first, best[k].count, ids + nids);
			nids += best[k].count;
		}
		qsort(ids, nids, sizeof(uint32), uint32_cmp);
	}
	GraphPostingsClose(&p);

	mapbytes = (seg->ndocs + 7) / 8 + 1;
	*fail = palloc(mapbytes);
	memset(*fail, 0xFF, mapbytes);
	tomb = GraphGetTombstones(index, seg);
	{
		Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);
		uint32		per_page = SEGVEC_FILTERS_PER_PAGE(seg->nfilters);
		Buffer		buf = InvalidBuffer;
		const char *entries = NULL;
		uint32		first = 0;
		uint32		count = 0;
		int64		i;

		for (i = 0; i < nids; i++)
		{
			uint32		node = ids[i];

			if (node >= seg->ndocs)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("postings of segment %u of index \"%s\" name node %u of %u",
								seg->segno, RelationGetRelationName(index),
								node, seg->ndocs)));
			if (GraphTombstoneIsSet(tomb, node))
				continue;
			if (so->filter.nkeys > 1 || best_superset)
			{
				/* the other keys (or all), on this node's entry */
				if (entries == NULL || node < first || node >= first + count)
					entries = GraphPinFilterPage(index, seg, node / per_page,
												 &buf, &first, &count);
				if (!SegvecFilterMatch(&so->filter,
									   entries + (Size) (node - first) * fbytes))
					continue;
			}
			(*fail)[node >> 3] &= (uint8) ~(1 << (node & 7));
			n++;
		}
		if (BufferIsValid(buf))
			GraphReleaseFilterPage(index, seg, &buf);
	}
	pfree(tomb);
	pfree(ids);
	if (best)
		pfree(best);
	*npass = n;
	return POSTINGS_LIST;
}

static bool
is_zero_vector(const float *v, int dim)
{
	int			i;

	for (i = 0; i < dim; i++)
		if (v[i] != 0)
			return false;
	return true;
}

/*
 * Get the next candidate of graph source i into its head: a row, or (a
 * search stopped by the shared bound) a provisional head holding the
 * distance none of its rows is nearer than.
 */
static void
advance_graph(SegvecScanOpaque so, int i)
{
	SegvecGraphSource *src = &so->graphs[i];

	if (src->done)
		return;
	src->provisional = false;
	switch (GraphScanNext(src->scan, &src->head.distance, &src->head.heaptid))
	{
		case GRAPH_SCAN_DONE:
			src->done = true;
			GraphScanEnd(src->scan);
			return;
		case GRAPH_SCAN_BOUNDED:
			src->provisional = true;
			return;
		case GRAPH_SCAN_ROW:
			src->returned++;
			return;
	}
}

/* graph segments, biggest (most live docs) first */
static int
segment_size_cmp(const void *a, const void *b)
{
	const SegvecSegment *sa = (const SegvecSegment *) a;
	const SegvecSegment *sb = (const SegvecSegment *) b;
	int64		la = (int64) sa->ndocs - sa->ntombstones;
	int64		lb = (int64) sb->ndocs - sb->ntombstones;

	if (la != lb)
		return la > lb ? -1 : 1;
	return sa->segno < sb->segno ? -1 : (sa->segno > sb->segno ? 1 : 0);
}

/*
 * Read the manifest and set up one source per segment for the current keys.
 */
static void
start_scan(IndexScanDesc scan)
{
	SegvecScanOpaque so = (SegvecScanOpaque) scan->opaque;
	MemoryContext oldCtx = MemoryContextSwitchTo(so->scanCtx);
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	uint8	  **fails;
	int64	   *npass;
	bool	   *skip;
	int			nskipped = 0;
	int			nlisted = 0;
	int			i;

	SegvecGetMetaInfo(scan->indexRelation, info);
	so->dimensions = info->dimensions;

	SegvecFilterPrepare(scan, &so->filter);
	so->filtered = so->filter.nkeys > 0 || so->filter.never;

	/* a test can run a compaction here, between manifest and chain walk */
	SegvecTestPoint("scan-manifest-read");

	so->query_isnull = true;
	if (scan->numberOfOrderBys > 0 &&
		!(scan->orderByData[0].sk_flags & SK_ISNULL))
	{
		int			dim;

		so->query = SegvecQueryGetVector(scan->indexRelation,
										 scan->orderByData[0].sk_argument,
										 scan->orderByData[0].sk_subtype,
										 &dim);
		if (info->dimensions > 0)
			SegvecCheckIndexDim(scan->indexRelation, info->dimensions, dim);
		so->query_isnull = (so->metric == SEGVEC_METRIC_COSINE &&
							is_zero_vector(so->query, dim));
	}

	/* an index that has never seen a vector has no docs */
	if (info->dimensions > 0 && !so->filter.never)
	{
		if (so->query_isnull)
		{
			/* every doc, in index order */
			GraphMutableScanDocs(scan->indexRelation, info, list_doc, NULL, so);
			for (i = 0; i < info->nsegments; i++)
			{
				SegvecSegment *seg = &info->segments[i];
				uint8	   *tomb = GraphGetTombstones(scan->indexRelation, seg);

				if (so->filtered)
				{
					int64		npass;
					uint8	   *fail = segment_filter(scan, seg, tomb, &npass);
					Size		b;

					for (b = 0; b < (seg->ndocs + 7) / 8; b++)
						tomb[b] |= fail[b];
					pfree(fail);
				}
				GraphForEachNode(scan->indexRelation, seg, info->dimensions,
								 tomb, list_doc, so);
				pfree(tomb);
			}
		}
		else
		{
			/* the bound's first distances: the mutable segment's docs */
			GraphBoundInit(&so->bound, segvec_ef_search);
			so->bound.active = segvec_shared_bound;
			GraphMutableScanDocs(scan->indexRelation, info, score_doc, NULL, so);
			if (so->ncands > 1)
				sort_candidates(so->cands, so->ncands);

			so->budget.visited = 0;
			so->budget.limit = segvec_max_scan_tuples;
			so->budget.noticed = false;
			so->budget.skip_late = (so->order == SEGVEC_SCAN_ORDER_STRICT);
			so->budget.late = 0;
			so->ngraphs = info->nsegments;
			so->graphs = palloc0(sizeof(SegvecGraphSource) * Max(so->ngraphs, 1));
			/* biggest first: its nearest docs bound the smaller searches */
			if (info->nsegments > 1)
				qsort(info->segments, info->nsegments, sizeof(SegvecSegment),
					  segment_size_cmp);

			/*
			 * A filter: each segment's failing nodes and passing count,
			 * from its filter area, before any search starts (the counts
			 * are the live docs of the small segments' floors).
			 */
			fails = palloc0(sizeof(uint8 *) * Max(so->ngraphs, 1));
			npass = palloc0(sizeof(int64) * Max(so->ngraphs, 1));
			skip = palloc0(sizeof(bool) * Max(so->ngraphs, 1));
			for (i = 0; i < so->ngraphs && so->filtered; i++)
			{
				SegvecSegment *seg = &info->segments[i];
				uint8	   *tomb;
				int64		est;
				PostingsUse use;

				/*
				 * Its postings first: a segment where nothing passes is
				 * skipped, one whose passing nodes the lists name is
				 * scored from them; a count stands in for the sample.
				 */
				use = segment_postings(scan, seg, &fails[i], &npass[i]);
				switch (use)
				{
					case POSTINGS_SKIP:
						skip[i] = true;
						nskipped++;
						continue;
					case POSTINGS_LIST:
						nlisted++;
						continue;
					case POSTINGS_NONE:
						break;
				}
				tomb = GraphGetTombstones(scan->indexRelation, seg);
				est = segment_filter_estimate(scan, seg, tomb);

				/*
				 * A filter that the segment will walk (by the estimate
				 * from a sample of its entries) is checked lazily, as the
				 * walk meets the nodes; one that it would score exactly,
				 * at once (exact scoring needs every node's answer).
				 */
				if (est >= 0 &&
					!GraphFilterPrefersExact(seg, segvec_ef_search, est))
					npass[i] = est;
				else
					fails[i] = segment_filter(scan, seg, tomb, &npass[i]);
				pfree(tomb);
			}

			if (nskipped + nlisted > 0)
				ereport(DEBUG1,
						(errmsg("segvec index scan: of %d graph segments, postings skipped %d and listed the passing docs of %d",
								so->ngraphs, nskipped, nlisted)));

			/* live docs of every source, for the small segments' floors */
			so->bound.live_docs = so->ncands;
			for (i = 0; i < info->nsegments; i++)
				so->bound.live_docs += so->filtered ? npass[i] :
					(int64) info->segments[i].ndocs -
					info->segments[i].ntombstones;
			for (i = 0; i < so->ngraphs; i++)
			{
				if (skip[i])
				{
					/* nothing of it passes: no search */
					so->graphs[i].done = true;
					continue;
				}
				if (so->filtered && fails[i] == NULL)
					so->graphs[i].scan = GraphScanBeginLazy(scan->indexRelation,
															&info->segments[i],
															so->metric,
															info->dimensions,
															so->query,
															segvec_ef_search,
															segvec_max_scan_tuples,
															&so->budget,
															entry_passes,
															&so->filter,
															npass[i]);
				else
					so->graphs[i].scan = GraphScanBeginFiltered(scan->indexRelation,
																 &info->segments[i],
																 so->metric,
																 info->dimensions,
																 so->query,
																 segvec_ef_search,
																 segvec_max_scan_tuples,
																 &so->budget,
																 fails[i],
																 npass[i]);
				GraphScanSetBound(so->graphs[i].scan, &so->bound);
				advance_graph(so, i);
			}
		}
	}

	pgstat_count_index_scan(scan->indexRelation);
	MemoryContextSwitchTo(oldCtx);
	so->started = true;
}

/*
 * segvecgettuple: amgettuple callback.  Returns the next heap TID in
 * distance order; distances are exact (computed from the stored float4
 * vector), so the executor need not recheck the ORDER BY, and under
 * segvec.scan_order = strict no row is nearer than the one before it (the
 * executor does not re-sort).
 */
bool
segvecgettuple(IndexScanDesc scan, ScanDirection dir)
{
	SegvecScanOpaque so = (SegvecScanOpaque) scan->opaque;

	if (!ScanDirectionIsForward(dir))
		elog(ERROR, "segvec index scans only go forward");

	if (!so->started)
		start_scan(scan);

	/* the source whose head is nearest: the mutable segment or a graph */
	{
		SegvecCandidate *best;
		int			best_graph;
		MemoryContext oldCtx;
		int			i;

		oldCtx = MemoryContextSwitchTo(so->scanCtx);

		/*
		 * The source that gave the last row gets its next candidate only now
		 * that another row is asked for: under LIMIT k the k-th row must not
		 * cost a search for the (k+1)-th.
		 */
		if (so->advance_graph >= 0)
		{
			advance_graph(so, so->advance_graph);
			so->advance_graph = -1;
		}

		for (;;)
		{
			best = NULL;
			best_graph = -1;
			if (so->next < so->ncands)
				best = &so->cands[so->next];
			for (i = 0; i < so->ngraphs; i++)
			{
				if (so->graphs[i].done)
					continue;
				if (best == NULL ||
					candidate_cmp(&so->graphs[i].head, best) < 0)
				{
					best = &so->graphs[i].head;
					best_graph = i;
				}
			}
			if (best_graph >= 0 && so->graphs[best_graph].provisional)
			{
				/*
				 * Nothing known is nearer than where that search stopped at
				 * the bound: it goes on unbounded from there (a
				 * continuation, so nothing it held is lost), and the heads
				 * are compared again.
				 */
				GraphScanSetBound(so->graphs[best_graph].scan, NULL);
				advance_graph(so, best_graph);
				continue;
			}
			if (best == NULL || so->nreturned == 0 ||
				float8_cmp_internal(best->distance, so->last_distance) >= 0)
				break;

			/*
			 * A late find: nearer than the row returned last, which a graph
			 * search reached only through farther nodes, or which exact
			 * scoring of a segment ranked after its graph search had missed
			 * it (graphsearch.c).  The executor trusts the index's order,
			 * so under strict order the row is skipped.
			 */
			so->nlate++;
			if (so->order == SEGVEC_SCAN_ORDER_RELAXED)
				break;
			if (best_graph < 0)
				so->next++;
			else
				advance_graph(so, best_graph);
		}
		MemoryContextSwitchTo(oldCtx);
		if (best == NULL)
		{
			report_skipped_at_end(so);
			return false;
		}

		scan->xs_heaptid = best->heaptid;
		so->last_distance = best->distance;
		/* a hashed filter value can collide: the executor checks the row */
		scan->xs_recheck = so->filter.recheck;
		scan->xs_recheckorderby = false;

		if (best_graph < 0)
			so->next++;
		else
			so->advance_graph = best_graph;

		/* the bound serves the first k rows; later ones are unbounded */
		if (++so->nreturned >= so->bound.k)
			so->bound.active = false;
	}
	return true;
}

/*
 * segvecendscan: amendscan callback.
 */
void
segvecendscan(IndexScanDesc scan)
{
	SegvecScanOpaque so = (SegvecScanOpaque) scan->opaque;

	report_late(so);
	end_graphs(so);
	MemoryContextDelete(so->scanCtx);
	pfree(so);
	scan->opaque = NULL;
}

/*
 * SegvecScanLastDistance: the distance of the row the scan returned last
 * (for ft.verify, which checks that a row is found by its own vector even
 * when another row lies at distance 0).
 */
double
SegvecScanLastDistance(IndexScanDesc scan)
{
	return ((SegvecScanOpaque) scan->opaque)->last_distance;
}

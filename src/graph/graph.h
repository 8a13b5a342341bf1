/*-------------------------------------------------------------------------
 *
 * graph.h
 *	  Immutable segments: HNSW graphs written once by a build or compaction.
 *
 * The graph is Hierarchical Navigable Small World (Malkov & Yashunin,
 * "Efficient and robust approximate nearest neighbor search using
 * Hierarchical Navigable Small World graphs", 2016/2018): M neighbours per
 * node on the upper layers, 2*M on layer 0, neighbours chosen by the
 * paper's heuristic (algorithm 4), search by algorithm 2 with ef.
 *
 * A segment occupies one contiguous extent of blocks, laid out as
 *
 *	 [tombstone pages][doc-area pages][upper-layer pages][node pages]
 *
 * The doc area holds each node's SegvecDocInfo (doc id, key hash, vector
 * checksum, heap TID), sorted by doc id, so a doc id is found by binary
 * search and VACUUM reads TIDs without touching vectors.
 *
 * Node records have a fixed size per segment, so node i is found by
 * arithmetic, without a directory.  A node record is its layer-0 neighbour
 * list followed by its vector, so expanding a node touches one page; a
 * record bigger than a page spans consecutive pages.  Only the tombstone
 * pages ever change after install.  The page formats are in
 * store/format.h; see src/README.md.  Graphs call storage and the kernels.
 *
 * src/graph/graph.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_GRAPH_H
#define SEGVEC_GRAPH_H

#include "postgres.h"

#include "storage/itemptr.h"
#include "utils/float.h"
#include "utils/relcache.h"

#include "store/store.h"

/* ----------------
 * In-memory HNSW builder (graphbuild.c)
 * ----------------
 */
typedef struct HnswBuilder HnswBuilder;

extern HnswBuilder *HnswBuilderCreate(SegvecMetric metric, int dim, int m,
									  int ef_construction, int maxdocs);
extern Size HnswBuilderNodeBytes(int dim, int m);
extern void HnswBuilderSetQuantization(HnswBuilder *builder, int quant);
extern bool HnswBuilderAdd(HnswBuilder *builder, const SegvecDocInfo *doc,
						   const float *vector);
extern void HnswBuilderSetFilters(HnswBuilder *builder, int nfilters);
extern bool HnswBuilderAddFiltered(HnswBuilder *builder,
								   const SegvecDocInfo *doc,
								   const float *vector, const char *filters);
extern const char *HnswBuilderGetFilters(HnswBuilder *builder, int i);
extern const float *HnswBuilderGetDoc(HnswBuilder *builder, int i,
									  SegvecDocInfo *doc);
extern int	HnswBuilderCount(HnswBuilder *builder);
extern void HnswBuilderFinish(HnswBuilder *builder,
							  void (*progress) (int done));
extern void HnswBuilderFinishParallel(HnswBuilder *builder, int nworkers,
									  void (*progress) (int done));

/*
 * The labels of a segment's nodes in one label array column, for its
 * label postings (format.h): (label hash, node) pairs, in any order, a
 * repeated pair counted once.  known: every node's labels are among them
 * (else the column gets bit postings).
 */
typedef struct GraphLabelPair
{
	int64		value;			/* the label's hash (SegvecLabelHash) */
	uint32		node;
} GraphLabelPair;

typedef struct GraphLabels
{
	bool		known;
	uint32		npairs;
	uint32		maxpairs;
	GraphLabelPair *pairs;		/* palloc'd, or NULL */
} GraphLabels;

extern void GraphLabelsAdd(GraphLabels *labels, uint64 hash, uint32 node);
extern void GraphLabelsForget(GraphLabels *labels);
extern void HnswBuilderKeepLabels(HnswBuilder *builder, int col);
extern void HnswBuilderAddLabels(HnswBuilder *builder, int col,
								 const uint64 *hashes, int n);
extern void HnswBuilderForgetLabels(HnswBuilder *builder, int col);

/* labels.c: the labels of a mutable doc, read from its heap row */
typedef struct GraphLabelReader GraphLabelReader;

extern GraphLabelReader *GraphLabelReaderBegin(Relation index);
extern void GraphLabelReaderKeep(GraphLabelReader *reader,
								 HnswBuilder *builder);
extern void GraphLabelReaderAdd(GraphLabelReader *reader,
								HnswBuilder *builder,
								const SegvecDocInfo *doc,
								const char *filters);
extern void GraphLabelReaderEnd(GraphLabelReader *reader);

/* graphwrite.c */
extern void HnswBuilderWrite(HnswBuilder *builder, Relation index,
							 uint32 segno, SegvecSegment *seg);
extern void HnswBuilderFree(HnswBuilder *builder);

/* ----------------
 * Merging segments, vectors read from pages (graphmerge.c)
 * ----------------
 */
typedef struct GraphMergeStats
{
	int64		ndocs;			/* docs in the merged segment */
	int			seed;			/* input whose graph seeded it, or -1 */
	int64		nseeded;		/* its docs, taken with their links */
	int64		seed_repaired;	/* seed docs that had lost neighbours */
	int64		upper_relinked;	/* seed docs whose upper-layer lists were chosen anew */
	int64		nduplicates;	/* docs joined to a ring of copies */
	int64		nrepaired;		/* links added to reach every node */
	Size		peak_bytes;		/* most memory the merge held */
	Size		bound_bytes;	/* GraphMergeMemoryBound for it, plus the
								 * copy of vectors and lists if kept */
	bool		in_memory;		/* vectors and lists were copied to memory */
	int			codes_from;		/* input whose codes the output kept (its
								 * quantizer covers every input), or -1 */
	int64		codes_reused;	/* docs whose codes were copied, not
								 * computed */
} GraphMergeStats;

extern PGDLLIMPORT bool segvec_merge_in_memory;

extern bool GraphMergeSegments(Relation index, SegvecMetric metric, int dim,
							   int m, int ef_construction, int quant,
							   const SegvecSegment *inputs,
							   uint8 *const *tombstones, int ninputs,
							   uint32 segno, SegvecSegment *out,
							   GraphMergeStats *stats);
extern Size GraphMergeMemoryBound(int64 n, int m, int ef_construction,
								  Size upper_size, int ninputs,
								  SegvecMetric metric, Size node_size,
								  int dim);
extern Size GraphMergeDocBytes(int m);

/* ----------------
 * Search over a written segment (graphsearch.c)
 * ----------------
 */

typedef struct GraphScan GraphScan;

/*
 * A segment of at most ef_search * segvec.exact_scan_factor docs (640 at
 * the defaults) is scored exactly: a graph search computes some 6 to 10 *
 * ef distances, so scoring a segment of 16 * ef docs whole costs about as
 * much and is exact.  (At 128 * ef, the old value, a streamed-into index
 * of Fashion-MNIST searched 3x slower than at 16 * ef: src/README.md,
 * "Scans".)
 */
extern PGDLLIMPORT int segvec_exact_scan_factor;
#define SEGVEC_EXACT_FACTOR		segvec_exact_scan_factor

/*
 * A long or filtered scan of a segment of at most exact_limit docs goes
 * over to scoring it whole once it has returned ef rows and
 * 1/SEGVEC_EXACT_SWITCH_DIV of its docs (GraphScanNext; am/segveccost.c
 * prices the switch).  On the rows
 * alone, LIMIT ef + 1 would score the whole segment (30 times LIMIT ef
 * on 20,000 Fashion-MNIST docs); later, the docs the walk missed before
 * the switch are late finds, so the switch comes while the walk is still
 * near the query.
 */
#define SEGVEC_EXACT_SWITCH_DIV 64

/*
 * A graph search holds at least this many nearest nodes before it returns
 * the nearest (segvec.ef_search below it searches as this).  Rows found
 * after a farther row was returned ("late finds", graphsearch.c) are the
 * search's own misses: with a window of 1, half the queries of a 4,000-doc
 * segment had one in their first 10 rows, with 10 one in 50, for the cost
 * of a search at ef_search 10 (src/README.md, "Scans").
 */
#define SEGVEC_MIN_SEARCH_WIDTH	10

/*
 * The same for a quantized segment, whose rerank pool (segvec.rerank,
 * ef_search by default) holds rows back beyond the window and so widens
 * the search by itself: on Fashion-MNIST 60,000 (sq8) ef_search 4 gives
 * recall@10 0.957 for 79% of the distances of ef_search 10 (0.99); below
 * 4 late finds cost more than the narrower window saves (src/README.md,
 * "Quantized search cost").
 */
#define SEGVEC_MIN_QUANT_SEARCH_WIDTH	4

/*
 * segvec.rerank: in a quantized segment, how many nodes the graph search
 * (on codes) has yielded that a scan holds, scored exactly, before it
 * returns the nearest of them; 0 means ef_search.
 */
extern PGDLLIMPORT int segvec_rerank;

/*
 * segvec.quant_bound: how a quantized segment's rerank bounds the exact
 * distances of what the graph search yields later (graph/quant.c)
 */
#define SEGVEC_QUANT_BOUND_PROVEN	0
#define SEGVEC_QUANT_BOUND_PROBABLE	1
extern PGDLLIMPORT int segvec_quant_bound;

/*
 * segvec.rabitq_epsilon: RaBitQ's eps0, the width of the per-node error
 * bound a rabitq segment's search goes by (graph/rabitq.c); the paper's
 * 1.9 makes the bound fail rarely, the default (chosen by measurement,
 * src/README.md "RaBitQ against SQ8") searches less
 */
#define SEGVEC_RABITQ_EPS0_DEFAULT	1.25
extern PGDLLIMPORT double segvec_rabitq_epsilon;

/*
 * What one index scan may spend over all its segments: distances computed
 * (docs visited), up to segvec.max_scan_tuples; a NOTICE says, once, when
 * the scan stopped for it.  Also what its searches do with a late find (a
 * row nearer than one the search already returned, beyond its reorder
 * stage's look-ahead): skip it, counting it in late, under
 * segvec.scan_order = strict.
 */
typedef struct GraphScanBudget
{
	int64		visited;
	int64		limit;
	bool		noticed;
	bool		skip_late;		/* skip late finds (strict order) */
	int64		late;			/* late finds skipped so far */
} GraphScanBudget;

/*
 * A bound shared by the segment searches of one scan (the idea of Lucene's
 * multi-leaf k-NN collector): the k smallest distances of the live docs any
 * source of the scan has found so far, in a max-heap.  While the bound is
 * active and full, a graph search stops expanding once its nearest
 * unexpanded candidate is farther than the k-th distance (GraphBoundValue):
 * k docs at least that near are known, and will be returned first, so a
 * segment whose candidates are all farther need not be searched further
 * for the first k rows.  The scan layer (am/segvecscan.c) owns the bound,
 * offers the mutable segment's distances, and turns it off once k rows are
 * out; the graph searches offer every live node they hold.
 */
typedef struct GraphScanBound
{
	bool		active;			/* prune while set (the first k rows) */
	int			k;
	int			count;			/* distances in heap, at most k */
	double	   *heap;			/* max-heap: the k smallest offered */
	int64		live_docs;		/* live docs of all the scan's sources (0:
								 * unknown), for the floor of a small
								 * segment (GraphScanSetBound) */
} GraphScanBound;

extern void GraphBoundInit(GraphScanBound *bound, int k);
extern void GraphBoundOffer(GraphScanBound *bound, double distance);

/* the distance beyond which a bounded search stops, or +Infinity */
static inline double
GraphBoundValue(const GraphScanBound *bound)
{
	if (bound == NULL || !bound->active || bound->count < bound->k)
		return get_float8_infinity();
	return bound->heap[0];
}

/* What GraphScanNext gives */
typedef enum GraphScanResult
{
	GRAPH_SCAN_DONE,			/* nothing more */
	GRAPH_SCAN_ROW,				/* a row: its distance and heap TID */
	GRAPH_SCAN_BOUNDED			/* stopped by the bound: no row now, and
								 * none nearer than *distance later */
} GraphScanResult;

extern GraphScan *GraphScanBegin(Relation index, const SegvecSegment *seg,
								 SegvecMetric metric, int dim,
								 const float *query, int ef_search,
								 int64 exact_limit, GraphScanBudget *budget);
extern GraphScan *GraphScanBeginFiltered(Relation index,
										 const SegvecSegment *seg,
										 SegvecMetric metric, int dim,
										 const float *query, int ef_search,
										 int64 exact_limit,
										 GraphScanBudget *budget,
										 const uint8 *fail, int64 npass);
/* does a node with this filter entry pass? (GraphScanBeginLazy) */
typedef bool (*GraphFilterFn) (const char *entry, void *arg);
extern GraphScan *GraphScanBeginLazy(Relation index, const SegvecSegment *seg,
									 SegvecMetric metric, int dim,
									 const float *query, int ef_search,
									 int64 exact_limit,
									 GraphScanBudget *budget,
									 GraphFilterFn match, void *arg,
									 int64 npass);
extern bool GraphFilterPrefersExact(const SegvecSegment *seg, int ef_search,
									int64 npass);
extern void GraphScanSetBound(GraphScan *gs, GraphScanBound *bound);
extern GraphScanResult GraphScanNext(GraphScan *gs, double *distance,
									 ItemPointer heaptid);
extern void GraphScanEnd(GraphScan *gs);
extern void GraphSegmentSplit(const SegvecSegment *seg, int dim,
							  int64 *codes, int64 *vectors, int64 *graph,
							  int64 *docs);
extern uint32 GraphSegmentStamp(const SegvecSegment *seg);
extern void GraphCheckPage(Relation index, const SegvecSegment *seg,
						   Buffer buf, bool locked);
extern Buffer GraphPinPage(Relation index, BlockNumber blkno);
extern void GraphPrefetchPage(Relation index, BlockNumber blkno, Size offset,
							  Size len);
extern void GraphReadTombstones(Relation index, const SegvecSegment *seg,
								uint8 *bitmap);
extern uint8 *GraphGetTombstones(Relation index, const SegvecSegment *seg);
extern void GraphSetTombstones(Relation index, const SegvecSegment *seg,
							   const uint32 *nodes, int nnodes);
extern void GraphSetTombstonesUninstalled(Relation index, SegvecSegment *seg,
										  const uint32 *nodes, int nnodes);

/* Is node's bit set in a tombstone bitmap read by GraphReadTombstones? */
static inline bool
GraphTombstoneIsSet(const uint8 *bitmap, uint32 node)
{
	return (bitmap[node >> 3] >> (node & 7)) & 1;
}
extern void GraphForEachNode(Relation index, const SegvecSegment *seg,
							 int dim, const uint8 *tombstones,
							 SegvecDocCallback callback, void *arg);
extern void GraphReadDocs(Relation index, const SegvecSegment *seg,
						  uint32 first, uint32 count, SegvecDocInfo *docs);
extern uint32 GraphFilterPages(const SegvecSegment *seg);
extern const char *GraphPinFilterPage(Relation index,
									  const SegvecSegment *seg,
									  uint32 pageno, Buffer *buf,
									  uint32 *first, uint32 *count);
extern void GraphReleaseFilterPage(Relation index, const SegvecSegment *seg,
								   Buffer *buf);

/*
 * A segment's postings (postings.c; format.h, "Postings of a segment's
 * filter columns"), open for look-ups: one page pinned at a time.
 */
typedef struct GraphPostings
{
	Relation	index;
	const SegvecSegment *seg;
	BlockNumber start;			/* the area's first block */
	Buffer		buf;			/* pinned page of the area, or Invalid */
	SegvecPostingsHeader hdr;
	SegvecPostingsColumn *cols; /* hdr.nfilters of them */
} GraphPostings;

extern BlockNumber GraphPostingsBlock(const SegvecSegment *seg, int dim);
extern bool GraphPostingsOpen(Relation index, const SegvecSegment *seg,
							  int dim, GraphPostings *p);
extern bool GraphPostingsHasColumn(GraphPostings *p, int col);
extern bool GraphPostingsHasBits(GraphPostings *p, int col);
extern bool GraphPostingsHasLabels(GraphPostings *p, int col);
extern void GraphPostingsLabel(GraphPostings *p, int col, uint64 hash,
							   uint32 *first, uint32 *count);
extern void GraphPostingsLabelPairs(GraphPostings *p, int col,
									const uint32 *map, GraphLabels *out);
extern void GraphPostingsBits(GraphPostings *p, int col,
							  SegvecPostingsEntry *bits);
extern void GraphPostingsRange(GraphPostings *p, int col, int strategy,
							   int64 value, uint32 *from, uint32 *to);
extern uint32 GraphPostingsValues(GraphPostings *p, int col);
extern void GraphPostingsRun(GraphPostings *p, int col, uint32 from,
							 uint32 to, uint32 *first, uint32 *count);
extern void GraphPostingsReadIds(GraphPostings *p, uint32 first,
								 uint32 count, uint32 *ids);
extern void GraphPostingsClose(GraphPostings *p);
extern bool GraphPostingsCheck(Relation index, const SegvecSegment *seg,
							   int dim);
/*
 * The doc-area page a look-up by doc id last found its doc on, with the
 * page's first and last doc ids, so that the next look-up of a doc id in
 * that range, or just past it, reads one page instead of a binary search
 * over the area (an UPDATE of many rows meets their docs in doc id order).
 * Valid for segment segno only (segment pages never change).
 */
typedef struct GraphDocHint
{
	bool		valid;
	uint32		segno;
	uint32		page;			/* 0-based page of the doc area */
	uint64		first;			/* doc ids of its first and last entries */
	uint64		last;
} GraphDocHint;

extern int64 GraphFindDoc(Relation index, const SegvecSegment *seg,
						  uint64 docid);
extern int64 GraphFindDocEntry(Relation index, const SegvecSegment *seg,
							   uint64 docid, SegvecDocInfo *info,
							   GraphDocHint *hint);
extern int64 GraphCountUnreachable(Relation index, const SegvecSegment *seg,
								   const uint8 *tombstones, int64 *first);
extern void GraphReadVector(Relation index, const SegvecSegment *seg,
							uint32 node, int dim, float *vector);


/* ----------------
 * Aliases of the mutable segment (alias.c)
 * ----------------
 */
extern bool GraphFindVector(Relation index, const SegvecSegment *segs,
							int nsegs, uint64 docid, int dim, float *vector,
							GraphDocHint *hint);
extern bool GraphFindDocInfo(Relation index, const SegvecSegment *segs,
							 int nsegs, uint64 docid, SegvecDocInfo *info,
							 GraphDocHint *hint);

/* the longest update chain GraphHeapKeepsValue follows */
#define GRAPH_ALIAS_MAX_HOPS	8
extern bool GraphHeapKeepsValue(Relation heap, const ItemPointerData *start,
								const ItemPointerData *newtid,
								AttrNumber attnum, Datum value,
								BlockNumber *nblocks);
/*
 * an alias GraphMutableForEachDoc passed over (its target and row are
 * gone), or a stale doc (SEGVEC_STALE_TARGET)
 */
typedef void (*GraphAliasGoneCallback) (const SegvecDocInfo *doc, void *arg);
extern void GraphMutableForEachDoc(Relation index, const SegvecSegment *segs,
								   int nsegs, BlockNumber head,
								   BlockNumber stop, int dim,
								   SegvecDocCallback callback,
								   GraphAliasGoneCallback gone, void *arg);
extern void GraphMutableScanDocs(Relation index, const SegvecMetaInfo *info,
								 SegvecDocCallback callback,
								 GraphAliasGoneCallback gone, void *arg);

#endif							/* SEGVEC_GRAPH_H */

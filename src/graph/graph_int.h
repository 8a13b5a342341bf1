/*-------------------------------------------------------------------------
 *
 * graph_int.h
 *	  What the graph builder's files share: the builder's state, the HNSW
 *	  insertion and repair steps, the segment layout, and the node record
 *	  accessors.  Private to graph/: other subsystems use graph.h.
 *
 * The builder keeps its layer-0 lists and vectors in one of two places:
 *	- in memory (HnswBuilderCreate: compaction and CREATE INDEX chunks, whose
 *	  docs come with their vectors);
 *	- in the pages of the segment being written (a merge, graphmerge.c):
 *	  vectors are copied once from the input segments' pages into the
 *	  output's node pages (or, for a quantized output, its vector area),
 *	  and every layer-0 list lives in its node's record, read and written
 *	  through the buffer manager.  Only the upper layers and per-node
 *	  counters stay in memory.
 * graphbuild.c's algorithm reaches both through builder_vector,
 * builder_list and builder_store_list.
 *
 * src/graph/graph_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_GRAPH_INT_H
#define SEGVEC_GRAPH_INT_H

#include "postgres.h"

#include "common/pg_prng.h"
#include "port/atomics.h"
#include "storage/buf.h"
#include "storage/lwlock.h"
#include "utils/rel.h"

#include "graph/candheap.h"
#include "graph/graph.h"
#include "store/store.h"

struct HnswBuilder
{
	MemoryContext ctx;
	SegvecMetric metric;
	int			dim;
	int			m;				/* neighbours on layers >= 1 */
	int			m0;				/* neighbours on layer 0 (2*M) */
	int			ef_construction;
	double		ml;				/* level multiplier, 1 / ln(M) */

	int			n;
	int			maxn;

	/* in memory only (paged == false) */
	float	   *vectors;		/* maxn * dim */
	SegvecDocInfo *docs;
	int			nfilters;		/* filter columns (HnswBuilderSetFilters) */
	char	   *filters;		/* maxn filter entries, or NULL */
	GraphLabels *labels;		/* nfilters of them, or NULL: the label
								 * columns' labels (HnswBuilderKeepLabels) */
	char	   *postings;		/* the postings area HnswBuilderWrite
								 * writes, or NULL */
	Size		postings_len;
	uint32	   *nbr0;			/* maxn * m0 */
	uint16	   *nnbr0;

	/* both modes */
	uint8	   *levels;
	uint32	   *upper_off;		/* per node: its lists in flat_upper */
	uint32	   *flat_upper;		/* per node, level lists of (count, M ids) */
	Size		upper_size;		/* uint32 entries in flat_upper */
	uint32	   *indeg0;			/* per node: layer-0 links pointing at it */
	int32	   *dupof;			/* per node: first node with the very same
								 * vector, or -1 */
	uint8	   *seeded;			/* bitmap: node already in the graph (a
								 * merge's seed), or NULL */
	uint32	   *order;			/* the nodes to insert that are not
								 * duplicates, in a random order
								 * (GraphShuffleInsertion) */
	int			norder;

	int			entry;			/* entry point, -1 while empty */
	int			maxlevel;

	uint32	   *visited;		/* visited[i] == stamp: seen in this search */
	uint32		stamp;
	pg_prng_state rng;

	/* paged mode: the output segment's node pages hold lists and vectors */
	bool		paged;
	Relation	index;
	SegvecSegment seg;			/* the output's layout, absolute blocks */
	Buffer		vpin[2];		/* pinned node page per vector slot */
	int64		vid[2];			/* node whose vector a slot holds, or -1 */
	const float *vptr[2];
	float	   *vbuf[2];		/* a node spanning pages: copied here */
	Buffer		lpin;			/* pinned node page for lists */
	uint32	   *lbuf[2];		/* per list slot: a copy of a list */

	/* scratch space of the insertion, reused */
	GraphHeap	cand;
	GraphHeap	result;
	float	   *extra;			/* ip: each doc's extra coordinate */
	GraphCand  *found;
	GraphCand  *selected;
	uint32	   *pruned;			/* candidates the heuristic set aside */
	GraphCand  *backlinks;		/* INSERT: a new node's neighbours on every
								 * layer, linked back once all its lists
								 * are stored (m0 + SEGVEC_MAX_LEVEL * m) */
	uint32	   *hints;			/* INSERT: nodes of the graph near the new
								 * node, entry points of the layers they are
								 * on (a merge: the new node's neighbours in
								 * its input's graph); at most m0 */
	int			nhints;
	double	   *hintdist;		/* their distances to the new node */
	uint8	   *reach;			/* connectivity repair: reached from entry */
	uint32	   *queue;			/* connectivity repair: BFS queue */
	int64		nduplicates;	/* docs whose vector an earlier doc has */
	int64		nrepaired;		/* links added by the connectivity repair */
	Size		peak_bytes;		/* most memory the builder's context held */

	/*
	 * parallel build (graphpbuild.c): this builder is one participant's
	 * view of a graph in a DSM segment that several insert into at once;
	 * NULL in a serial builder
	 */
	struct GraphParallelShared *shared;
	LWLock	   *nodelocks;		/* per node: its neighbour lists */
	pg_atomic_uint32 *aindeg0;	/* indeg0, updated atomically */

	int			quant;			/* SEGVEC_QUANT_* of the segment written */
	float	   *qparams;		/* its quantizer, trained by the writer */
	struct GraphQuantEncoder *qenc; /* and what encoding with it needs */
};

/* ----------------
 * Node records (store/format.h): header, 2*M layer-0 neighbours, vector.
 * Every reader and writer of a record goes through these.
 * ----------------
 */

/* block of node id's record (its first block if it spans pages), and the
 * record's offset in that block's contents */
static inline BlockNumber
GraphNodeBlock(const SegvecSegment *seg, uint32 id, Size *off)
{
	if (seg->nodes_per_page > 0)
	{
		*off = (Size) (id % seg->nodes_per_page) * seg->node_size;
		return seg->node_start + id / seg->nodes_per_page;
	}
	*off = 0;
	return seg->node_start + id * seg->pages_per_node;
}

static inline uint32 *
GraphRecNeighbors(char *rec)
{
	return (uint32 *) (rec + sizeof(SegvecNodeHeader));
}

/* offset of the vector in a record of a graph with M = m */
static inline Size
GraphRecVectorOffset(int m)
{
	return sizeof(SegvecNodeHeader) + sizeof(uint32) * 2 * m;
}

/* bytes of a node record */
static inline Size
GraphRecSize(int m, int dim)
{
	return GraphRecVectorOffset(m) + sizeof(float) * dim;
}

/* graphbuild.c */
extern void GraphBuilderInitCommon(HnswBuilder *b, SegvecMetric metric,
								   int dim, int m, int ef_construction,
								   int maxn);
extern void GraphInsertNode(HnswBuilder *b, uint32 q, GraphCand *eps);
extern void GraphRelinkUpper(HnswBuilder *b, uint32 q, GraphCand *eps);
extern void GraphInsertDuplicate(HnswBuilder *b, uint32 q, uint32 f);
extern void GraphPrepareInsert(HnswBuilder *b);
extern void GraphShuffleInsertion(HnswBuilder *b);
extern void GraphInitScratch(HnswBuilder *b);
extern void GraphAdviseHugePages(void *p, Size len);

/* graphpbuild.c: the parallel build of HnswBuilderFinishParallel */
typedef struct GraphParallelShared
{
	/* set by the leader before the workers start; read only afterwards */
	SegvecMetric metric;
	int			dim;
	int			m;
	int			ef_construction;
	int			n;
	int			norder;			/* nodes to insert (the leader's order) */
	Size		upper_size;		/* uint32 entries of flat_upper */
	int			tranche;		/* LWLock tranche of the node locks */
	/* offsets of the arrays from the start of this struct */
	Size		off_vectors;	/* n * dim floats */
	Size		off_extra;		/* n floats (ip only) */
	Size		off_levels;		/* n uint8 */
	Size		off_upper_off;	/* n uint32 */
	Size		off_dupof;		/* n int32 */
	Size		off_order;		/* norder uint32 */
	Size		off_flat_upper; /* upper_size uint32 */
	Size		off_nbr0;		/* n * m0 uint32 */
	Size		off_nnbr0;		/* n uint16 */
	Size		off_indeg0;		/* n pg_atomic_uint32 */
	Size		off_locks;		/* n LWLock */
	Size		total;

	pg_atomic_uint32 next;		/* next position of the order to claim */
	pg_atomic_uint32 ndone;		/* nodes inserted */

	/* entry point and top level, under entry_lock */
	LWLock		entry_lock;
	int			entry;
	int			maxlevel;
} GraphParallelShared;
extern int	GraphSelectNeighbors(HnswBuilder *b, GraphCand *cands, int ncands,
								 int max, uint32 *out, bool keep_pruned);
extern double GraphNodeDistance(HnswBuilder *b, uint32 a, uint32 c);
extern const float *GraphBuilderVector(HnswBuilder *b, uint32 id, int slot);
extern uint32 *GraphGetList(HnswBuilder *b, uint32 id, int *count, int slot);
extern void GraphStoreList(HnswBuilder *b, uint32 id, const uint32 *list,
						   int count);
extern void GraphRepairConnectivity(HnswBuilder *b, GraphCand *eps);
extern void GraphFinishInsert(HnswBuilder *b, GraphCand *eps,
							  void (*progress) (int done));
extern void GraphComputeExtra(HnswBuilder *b);
extern void GraphNotePeak(HnswBuilder *b);

/*
 * graphwrite.c: the segment's layout and pages, the paged storage of a
 * merge's builder, and pinning a block
 */
extern void GraphPlanLayout(SegvecSegment *seg, int n, const uint8 *levels,
							int m, int dim, uint64 min_docid,
							uint64 max_docid, uint32 *upper_off);
extern void GraphPlanFilterLayout(SegvecSegment *seg, int n, int nfilters);
extern char *GraphPostingsBuild(const char *entries, uint32 n, int nfilters,
								const uint32 *postable,
								const GraphLabels *labels, Size *len);
extern void GraphPostingsFillPage(char *data, const char *image, Size len,
								  uint32 k);
extern void GraphPlanPostingsLayout(SegvecSegment *seg, Size len);
extern void GraphPlanQuantLayout(SegvecSegment *seg, int n, int m, int dim,
								 int quant);
extern void GraphInitSegmentPage(Page page, const SegvecSegment *seg);
extern char *GraphPinBlock(Relation index, Buffer *buf, BlockNumber blkno);
extern const float *GraphPagedVector(HnswBuilder *b, uint32 id, int slot);
extern const float *GraphAreaVector(Relation index, const SegvecSegment *seg,
									 uint32 id, int dim, Buffer *buf,
									 float *copy);
extern uint32 *GraphPagedList(HnswBuilder *b, uint32 id, int *count, int slot);
extern void GraphPagedStoreList(HnswBuilder *b, uint32 id,
								const uint32 *list, int count);

#endif							/* SEGVEC_GRAPH_INT_H */

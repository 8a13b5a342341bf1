/*-------------------------------------------------------------------------
 *
 * segvec.h
 *	  Index access method "segvec": a log-structured vector index.
 *
 * See src/README.md for the page formats, the WAL records and the locking
 * rules this header describes.
 *
 * src/segvec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_H
#define SEGVEC_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "access/reloptions.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"

#include "distance.h"

/* ----------------
 * Limits and constants
 * ----------------
 */

/* Support procedure: the distance function of the operator class */
#define SEGVEC_DISTANCE_PROC		1
#define SEGVEC_NPROC				1

/* Strategy: the single ordering operator */
#define SEGVEC_ORDERBY_STRATEGY		1
#define SEGVEC_NSTRATEGIES			1

/* Defaults and bounds of the index options (HNSW's M and ef_construction) */
#define SEGVEC_DEFAULT_M			16
#define SEGVEC_MIN_M				2
#define SEGVEC_MAX_M				100
#define SEGVEC_DEFAULT_EF_CONSTRUCTION	64
#define SEGVEC_MIN_EF_CONSTRUCTION	4
#define SEGVEC_MAX_EF_CONSTRUCTION	1000

/* ----------------
 * Page opaque data, at the end of every page but the metapage's too
 * ----------------
 */
typedef struct SegvecPageOpaqueData
{
	BlockNumber nextblkno;		/* next page of the same chain, or Invalid */
	uint16		flags;			/* SEGVEC_PAGE_* */
	uint16		page_id;		/* SEGVEC_PAGE_ID, for pg_filedump */
	uint64		seqno;			/* mutable page: page sequence number;
								 * deleted page: FullTransactionId after
								 * which it may be recycled */
	uint32		next_docno;		/* mutable page: doc number of its next doc */
	uint32		unused;
} SegvecPageOpaqueData;

typedef SegvecPageOpaqueData *SegvecPageOpaque;

#define SEGVEC_PAGE_ID			0xFF84

#define SEGVEC_PAGE_META		(1 << 0)
#define SEGVEC_PAGE_MUTABLE		(1 << 1)
#define SEGVEC_PAGE_DELETED		(1 << 2)	/* unlinked, awaiting recycling */
#define SEGVEC_PAGE_SEGMENT		(1 << 3)	/* page of an immutable segment */
#define SEGVEC_PAGE_KEYMAP_RUN	(1 << 4)	/* keymap snapshot run */
#define SEGVEC_PAGE_KEYMAP_DELTA (1 << 5)	/* keymap changes since snapshot */

#define SegvecPageGetOpaque(page) \
	((SegvecPageOpaque) PageGetSpecialPointer(page))
#define SegvecPageIsMeta(page) \
	((SegvecPageGetOpaque(page)->flags & SEGVEC_PAGE_META) != 0)
#define SegvecPageIsMutable(page) \
	((SegvecPageGetOpaque(page)->flags & SEGVEC_PAGE_MUTABLE) != 0)
#define SegvecPageIsDeleted(page) \
	((SegvecPageGetOpaque(page)->flags & SEGVEC_PAGE_DELETED) != 0)

/* ----------------
 * Reserved block numbers
 * ----------------
 */
#define SEGVEC_METAPAGE_BLKNO	0

/* ----------------
 * A doc's identity, as the mutable segment's pieces and an immutable
 * segment's doc area store it (32 bytes)
 * ----------------
 */
typedef struct SegvecDocInfo
{
	uint64		docid;			/* stable, index-wide doc id */
	uint64		key_hash;		/* XXH3-64 of the id key's send form */
	uint64		checksum;		/* XXH3-64 of the vector's float4 bytes */
	ItemPointerData heaptid;	/* heap row this doc indexes */
	uint16		flags;			/* SEGVEC_DOC_* */
} SegvecDocInfo;

#define SEGVEC_DOC_HAS_KEY		(1 << 0)	/* key_hash is set (INCLUDE id) */

/* ----------------
 * Immutable segments (see graph.h for their pages)
 * ----------------
 */
/* Bytes of a segment page that hold data (between header and opaque) */
#define SEGVEC_SEGPAGE_USABLE \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - \
	 MAXALIGN(sizeof(SegvecPageOpaqueData)))

/*
 * Segment descriptor, one per live immutable segment, kept in the
 * metapage's manifest.  Block numbers are absolute.
 */
typedef struct SegvecSegment
{
	uint32		segno;			/* unique within the index, increasing */
	uint32		ndocs;			/* nodes in the graph */
	uint32		ntombstones;	/* nodes VACUUM has tombstoned */
	int32		entry_point;	/* node to start searches at, -1 if empty */
	uint16		max_level;		/* level of the entry point */
	uint16		m;				/* HNSW M of this graph */
	uint32		node_size;		/* bytes of one node record */
	uint16		nodes_per_page; /* 0 when a node spans pages */
	uint16		pages_per_node; /* 0 when a page holds whole nodes */
	uint32		upper_size;		/* uint32 entries in the upper-layer area */
	BlockNumber start;			/* first block of the extent */
	uint32		npages;			/* blocks in the extent */
	BlockNumber doc_start;		/* first doc-area page */
	BlockNumber upper_start;	/* first upper-layer page */
	BlockNumber node_start;		/* first node page */
	uint64		min_docid;		/* doc ids held, sorted in the doc area */
	uint64		max_docid;
} SegvecSegment;

/* ----------------
 * Metapage
 * ----------------
 */
#define SEGVEC_MAGIC			0x53475643	/* "SGVC" */
#define SEGVEC_VERSION			1

/*
 * Options frozen into the metapage at build time (the reloptions can be
 * changed by ALTER INDEX, the index keeps what it was built with).
 */
typedef struct SegvecFrozenOptions
{
	int32		m;
	int32		ef_construction;
	int32		dimensions;		/* as given in WITH, 0 if not */
} SegvecFrozenOptions;

/*
 * Pages an install made unreachable, to be marked deleted (and so, later,
 * recycled).  The install that drops them records them here in the same WAL
 * record, so a crash before they are marked cannot leak them: the next
 * compaction or VACUUM finishes the job.
 */
#define SEGVEC_GARBAGE_CHAIN	1	/* mutable pages from first up to stop */
#define SEGVEC_GARBAGE_EXTENT	2	/* npages blocks from first */

typedef struct SegvecGarbage
{
	uint32		kind;
	BlockNumber first;
	BlockNumber stop;			/* chain: first block not to mark */
	uint32		npages;			/* extent: its length */
	uint64		xid;			/* FullTransactionId of the install */
} SegvecGarbage;

#define SEGVEC_MAX_GARBAGE		16
#define SEGVEC_MAX_SEGMENTS		32

/* The keymap: 256 buckets chosen by key_hash >> 56 (see keymap.h) */
#define SEGVEC_KEYMAP_BUCKETS	256

/* A bucket's sorted run in the current keymap snapshot */
typedef struct SegvecBucketRun
{
	BlockNumber start;			/* first page, or InvalidBlockNumber */
	uint32		npages;
	uint32		nentries;
} SegvecBucketRun;

typedef struct SegvecMetaPageData
{
	uint32		magic;
	uint32		version;
	int32		dimensions;		/* 0 until the first vector is indexed */
	int32		metric;			/* SegvecMetric */
	TransactionId dimensions_xid;	/* who set dimensions from a vector */
	SegvecFrozenOptions opts;
	BlockNumber mutable_head;	/* first page of the mutable segment */
	BlockNumber mutable_tail;	/* page new docs are appended to */
	uint64		next_seqno;		/* sequence number of the next mutable page */
	uint64		mutable_head_seqno; /* sequence number of mutable_head */
	uint32		next_segno;		/* number of the next immutable segment */
	uint32		ngarbage;		/* entries used in garbage[] */
	SegvecGarbage garbage[SEGVEC_MAX_GARBAGE];
	uint32		nsegments;		/* the manifest: live immutable segments */
	SegvecSegment segments[SEGVEC_MAX_SEGMENTS];

	/* keymap: snapshot directory, and the changes since, per bucket */
	uint32		keymap_epoch;	/* snapshots installed so far */
	uint32		keymap_unused;
	SegvecBucketRun snapshot[SEGVEC_KEYMAP_BUCKETS];
	BlockNumber delta_head[SEGVEC_KEYMAP_BUCKETS];	/* changes being added */
	BlockNumber delta_frozen[SEGVEC_KEYMAP_BUCKETS];	/* being snapshotted */
} SegvecMetaPageData;

typedef SegvecMetaPageData *SegvecMetaPage;

#define SegvecPageGetMeta(page) ((SegvecMetaPage) PageGetContents(page))


/* ----------------
 * On-disk structs: one doc of the mutable segment
 *
 * A doc is stored as one or more pieces, consecutive in chain order; a
 * piece holds a slice of the vector.  Small vectors are one piece; a vector
 * bigger than a page spans pages.  Every piece carries the heap TID and the
 * doc id, so VACUUM judges each piece on its own.
 * ----------------
 */
typedef struct SegvecMutableTupleData
{
	uint64		docid;			/* page seqno << 16 | doc number in page */
	uint64		key_hash;		/* XXH3-64 of the id key's send form */
	uint64		checksum;		/* XXH3-64 of the vector's float4 bytes */
	ItemPointerData heaptid;	/* heap row this doc indexes */
	uint16		flags;			/* SEGVEC_DOC_* */
	uint16		pieceno;		/* 0 .. npieces - 1 */
	uint16		npieces;
	uint16		nfloats;		/* float4 elements in this piece */
	float4		data[FLEXIBLE_ARRAY_MEMBER];
} SegvecMutableTupleData;

typedef SegvecMutableTupleData *SegvecMutableTuple;

#define SEGVEC_MUTABLE_HDRSZ	offsetof(SegvecMutableTupleData, data)

/* Largest item a mutable page holds, and the floats that fit in it */
#define SEGVEC_MAX_ITEMSZ \
	MAXALIGN_DOWN(BLCKSZ - SizeOfPageHeaderData - sizeof(ItemIdData) - \
				  MAXALIGN(sizeof(SegvecPageOpaqueData)))
#define SEGVEC_MAX_PIECE_FLOATS \
	((int) ((SEGVEC_MAX_ITEMSZ - SEGVEC_MUTABLE_HDRSZ) / sizeof(float4)))

#define SegvecMakeDocId(seqno, off) (((uint64) (seqno) << 16) | (uint64) (off))

/* ----------------
 * Reloptions
 * ----------------
 */
typedef struct SegvecOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			m;				/* HNSW M: neighbours per node */
	int			ef_construction;	/* HNSW candidate list size at build */
	int			dimensions;		/* 0: taken from the first vector */
	int			compact_threshold;	/* -1: segvec.compact_threshold */
} SegvecOptions;

/* ----------------
 * In-memory state
 * ----------------
 */

/* What an index relation's metapage says, as read by SegvecGetMetaInfo */
typedef struct SegvecMetaInfo
{
	int			dimensions;
	SegvecMetric metric;
	BlockNumber mutable_head;
	BlockNumber mutable_tail;
	uint64		mutable_head_seqno;
	uint64		mutable_pages;	/* pages appended since the head (about) */
	SegvecFrozenOptions opts;
	uint32		nsegments;
	SegvecSegment segments[SEGVEC_MAX_SEGMENTS];
	SegvecBucketRun snapshot[SEGVEC_KEYMAP_BUCKETS];
} SegvecMetaInfo;

/* One candidate of an ordered scan: distance and heap TID */
typedef struct SegvecCandidate
{
	double		distance;
	ItemPointerData heaptid;
} SegvecCandidate;

/*
 * Callback for SegvecMutableForEachDoc: called once per complete doc with
 * its heap TID and vector (dim floats, valid only during the call).
 */
typedef void (*SegvecDocCallback) (const SegvecDocInfo *doc,
								   const float *vector, int dim, void *arg);

/* An immutable segment's stream of candidates in a scan */
typedef struct SegvecGraphSource
{
	struct GraphScan *scan;
	SegvecCandidate head;		/* next candidate, unless done */
	bool		done;
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
} SegvecScanOpaqueData;

typedef SegvecScanOpaqueData *SegvecScanOpaque;

/* What a compaction did */
typedef struct SegvecCompactStats
{
	int64		docs_compacted; /* docs moved from the mutable segment */
	int			segments_created;	/* from the mutable segment */
	int			segments_merged;	/* old segments merged away */
} SegvecCompactStats;

/* ----------------
 * GUCs
 * ----------------
 */
extern PGDLLIMPORT int segvec_ef_search;
extern PGDLLIMPORT int segvec_max_scan_tuples;
extern PGDLLIMPORT int segvec_compact_threshold;

/* ----------------
 * Prototypes
 * ----------------
 */

/* segvec.c */
extern void _PG_init(void);
extern Datum segvechandler(PG_FUNCTION_ARGS);
extern bytea *segvecoptions(Datum reloptions, bool validate);

/* segvecbuild.c */
extern IndexBuildResult *segvecbuild(Relation heap, Relation index,
									 IndexInfo *indexInfo);
extern void segvecbuildempty(Relation index);
extern char *segvecbuildphasename(int64 phasenum);

/* CREATE INDEX phases, for pg_stat_progress_create_index */
#define SEGVEC_PHASE_SCAN		2
#define SEGVEC_PHASE_GRAPH		3
#define SEGVEC_PHASE_WRITE		4

/* segvecinsert.c */
extern bool segvecinsert(Relation index, Datum *values, bool *isnull,
						 ItemPointer ht_ctid, Relation heapRel,
						 IndexUniqueCheck checkUnique,
						 bool indexUnchanged,
						 struct IndexInfo *indexInfo);

/* segvecscan.c */
extern IndexScanDesc segvecbeginscan(Relation r, int nkeys, int norderbys);
extern void segvecrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
						 ScanKey orderbys, int norderbys);
extern bool segvecgettuple(IndexScanDesc scan, ScanDirection dir);
extern void segvecendscan(IndexScanDesc scan);

/* segvecvacuum.c */
extern IndexBulkDeleteResult *segvecbulkdelete(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats,
											   IndexBulkDeleteCallback callback,
											   void *callback_state);
extern IndexBulkDeleteResult *segvecvacuumcleanup(IndexVacuumInfo *info,
												  IndexBulkDeleteResult *stats);

/* segveccost.c */
extern void segveccostestimate(PlannerInfo *root, IndexPath *path,
							   double loop_count, Cost *indexStartupCost,
							   Cost *indexTotalCost,
							   Selectivity *indexSelectivity,
							   double *indexCorrelation, double *indexPages);

/* segvecvalidate.c */
extern bool segvecvalidate(Oid opclassoid);

/* compact.c */
extern void SegvecCompact(Relation index, SegvecCompactStats *stats);
extern void SegvecProcessGarbage(Relation index);
extern void SegvecInstallSegments(Relation index, SegvecSegment *segs,
								  int nsegs, uint64 next_seqno);
extern int	SegvecMaxBuildDocs(int dim, int m);

/* ft.c */
extern Relation SegvecOpenIndex(Oid relid, LOCKMODE lockmode, bool owner);
extern Oid	SegvecIndexGetHeap(Oid relid);

/* segvecutils.c */
extern SegvecMetric SegvecGetMetric(Relation index);
extern FmgrInfo *SegvecKeySendProc(Relation index);
extern void SegvecGetFrozenOptions(Relation index, SegvecFrozenOptions *opts);
extern int	SegvecGetFrozenM(Relation index);
extern int	SegvecCompactThreshold(Relation index);
extern void SegvecInitPage(Page page, uint16 flags);
extern void SegvecInitMetaPage(Page page, SegvecMetric metric,
							   SegvecFrozenOptions *opts);
extern void SegvecGetMetaInfo(Relation index, SegvecMetaInfo *info);
extern Buffer SegvecNewBuffer(Relation index);
extern float *SegvecDatumGetVector(Relation index, Datum value, int *dim);
extern void SegvecSetDimensions(Relation index, int dim);

/* mutable.c */
extern uint64 SegvecMutableAppend(Relation index, const SegvecDocInfo *doc,
								  const float *vector, int dim);
extern void SegvecMutableForEachDoc(Relation index, BlockNumber head,
									BlockNumber stop, int dim,
									SegvecDocCallback callback, void *arg);
extern Buffer SegvecMutableLockTail(Relation index);
extern void SegvecMutableAppendPage(Relation index, Buffer *buf);
extern double SegvecMutableDocsEstimate(Relation index, SegvecMetaInfo *info);
extern void SegvecMutableBulkDelete(Relation index,
									IndexBulkDeleteResult *stats,
									IndexBulkDeleteCallback callback,
									void *callback_state);

#endif							/* SEGVEC_H */

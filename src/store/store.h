/*-------------------------------------------------------------------------
 *
 * store.h
 *	  Storage of a segvec index: pages and extents, the metapage, the
 *	  mutable segment, and what the relation itself says (metric,
 *	  dimension, id key, options).
 *
 * Everything a segvec index holds lives in its main fork, read and written
 * through the buffer manager and WAL-logged; store/format.h has the page
 * formats, src/README.md the WAL records and locking rules.  This
 * subsystem calls only the kernels; every other subsystem may call it.
 *
 * src/store/store.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_STORE_H
#define SEGVEC_STORE_H

#include "postgres.h"

#include "access/genam.h"
#include "storage/bufmgr.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

#include "kernels/distance.h"
#include "store/format.h"

/* ----------------
 * The operator class: support procedure and strategy numbers
 * ----------------
 */

/*
 * Support procedures.  1: the distance function of the operator family,
 * float8(real[], real[]), registered for the class's input type (anyelement
 * for segvec's own classes).  2 (optional, one per column type other than
 * real[]): real[](T), registered for (T, T), turning a value of T into the
 * vector to index or search for; the companion segvec_pgvector adds it for
 * pgvector's vector and halfvec.
 */
#define SEGVEC_DISTANCE_PROC		1
#define SEGVEC_INPUT_PROC			2
#define SEGVEC_NPROC				2

/*
 * Strategies.  A vector family has one: its ordering operator.  A filter
 * column's family (int4_ops ...) has btree's five (BTLessStrategyNumber ..
 * BTGreaterStrategyNumber), or equality (3) alone for a hashed type.
 */
#define SEGVEC_ORDERBY_STRATEGY		1
#define SEGVEC_NSTRATEGIES			5

/* ----------------
 * Index options (reloptions) and their bounds (HNSW's M and ef_construction)
 * ----------------
 */
#define SEGVEC_DEFAULT_M			16
#define SEGVEC_MIN_M				2
#define SEGVEC_MAX_M				100
#define SEGVEC_DEFAULT_EF_CONSTRUCTION	64
#define SEGVEC_MIN_EF_CONSTRUCTION	4
#define SEGVEC_MAX_EF_CONSTRUCTION	1000

/*
 * A background job gives back a free tail of at least 1/16 of the index
 * (SegvecTruncateFreeTailWait), looking again every 20 ms for up to
 * SEGVEC_TRUNCATE_WAIT_MS after merges (not at all after a compaction
 * alone: while a long transaction holds the horizon, every job would wait
 * that long); smaller tails wait for VACUUM.
 */
#define SEGVEC_TRUNCATE_FRACTION	16
#define SEGVEC_TRUNCATE_NAP_MS		20
#define SEGVEC_TRUNCATE_WAIT_MS		500
/* a truncation leaves 1/8 of the index free at its end (extent.c) */
#define SEGVEC_TAIL_SLACK_FRACTION	8

typedef struct SegvecOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			m;				/* HNSW M: neighbours per node */
	int			ef_construction;	/* HNSW candidate list size at build */
	int			dimensions;		/* 0: taken from the first vector */
	int			compact_threshold;	/* -1: segvec.compact_threshold */
	/* the ft dialect's field options (strings: offsets, 0 when unset) */
	int			text_fields_offset; /* TEXT fields: "title,body" */
	int			language_offset;	/* their text search configuration */
	int			casesensitive_offset;	/* case-sensitive TAG fields */
	int			quantization_offset;	/* "rabitq", "sq8" or "none" */
} SegvecOptions;

/* ----------------
 * In-memory state
 * ----------------
 */

/* What an index relation's metapage says, as read by SegvecGetMetaInfo */
typedef struct SegvecMetaInfo
{
	int			dimensions;
	TransactionId dimensions_xid;	/* who set dimensions (see metapage.c) */
	SegvecMetric metric;
	BlockNumber mutable_head;
	BlockNumber mutable_tail;
	uint64		mutable_head_seqno;
	uint64		mutable_pages;	/* pages appended since the head (about) */
	SegvecFrozenOptions opts;
	uint32		nsegments;
	SegvecSegment *segments;	/* nsegments, palloc'd in the caller's
								 * memory context (SegvecFreeMetaInfo) */
	uint32		manifest_gen;
	BlockNumber manifest_head;
	uint32		nfree;			/* the free-extent list */
	SegvecFreeExtent free[SEGVEC_MAX_FREE_EXTENTS];
	uint32		keymap_nruns;	/* the keymap snapshot's runs */
	SegvecKeymapRun keymap_runs[SEGVEC_KEYMAP_MAX_RUNS];
	uint64		ncompactions;	/* install counters */
	uint64		nmerges;
	uint64		nrun_merges;
} SegvecMetaInfo;

/*
 * Callback for SegvecMutableForEachDoc (and GraphForEachNode): called once
 * per complete doc with its identity and vector (dim floats, valid only
 * during the call).
 */
typedef void (*SegvecDocCallback) (const SegvecDocInfo *doc,
								   const float *vector, int dim, void *arg);

/*
 * In an index with filter columns, the walks of the mutable segment
 * (SegvecMutableForEachDoc and the others below, GraphMutableForEachDoc)
 * pass a doc's filter entry (format.h) right after its vector: a callback
 * reads it here, with memcpy (it need not be aligned).  A doc without one
 * gets zeros (every value NULL).
 */
static inline const char *
SegvecDocFilterEntry(const float *vector, int dim)
{
	return (const char *) (vector + dim);
}

/*
 * Callback for SegvecMutableForEachItem: called once per alias of the
 * mutable segment with its identity and its target's doc id; and once per
 * *stale* doc, one whose vector has another length than the index's
 * dimension (a rolled-back first insert's, after a vector of another
 * length set the dimension again: SegvecSetDimensions), with target
 * SEGVEC_STALE_TARGET, which is no doc's: such a doc is never searched,
 * but its keymap entry is there until VACUUM or a compaction removes it.
 * filters is an alias's own filter entry (format.h) in an index with
 * filter columns, or NULL (none: every value NULL).
 */
#define SEGVEC_STALE_TARGET PG_UINT64_MAX

typedef void (*SegvecAliasCallback) (const SegvecDocInfo *doc, uint64 target,
									 const char *filters, void *arg);

/*
 * Callback for SegvecWriteExtent: fill page k (0-based) of the extent.  The
 * page is zeroed; the callback initialises it (SegvecInitPage) and its
 * contents.
 */
typedef void (*SegvecFillPageFn) (Page page, uint32 k, void *arg);

/*
 * Callback for SegvecMutableBulkDelete: told about each doc VACUUM removes
 * (its first piece), before the piece goes.
 */
typedef void (*SegvecDocRemovedFn) (Relation index, const SegvecDocInfo *doc,
									void *arg);

/*
 * One doc being appended to the mutable segment (SegvecMutableDocBegin,
 * SegvecMutablePutLast, SegvecMutableDocEnd).
 */
typedef struct SegvecDocAppend
{
	Relation	index;
	const SegvecDocInfo *doc;	/* its identity (docid ignored) */
	const float *vector;
	int			dim;
	const char *filters;		/* filter entry, or NULL: all NULL */
	Size		fbytes;			/* filter entry bytes per piece */
	int			maxfloats;		/* floats per piece at most */
	int			npieces;
	int			pieceno;		/* the next piece to put */
	int			done;			/* floats put so far */
	uint64		docid;			/* set by its first piece */
	SegvecMutableTuple tup;		/* the item being formed */
	Buffer		buf;			/* the tail, locked */
	bool		page_added;		/* a piece started a new page */
	bool		written;		/* the last piece is on its page */
} SegvecDocAppend;

/* ----------------
 * Prototypes
 * ----------------
 */

/* page.c: pages, page deletion */
extern void SegvecInitPage(Page page, uint16 flags);
extern void SegvecRefreshHorizon(void);
extern bool SegvecFreeExtentReusable(const SegvecFreeExtent *f);
extern bool SegvecFreeAwaitsXid(Relation index);
extern void SegvecSetBuilding(Oid indexid);
extern bool SegvecBuildSkipWAL(Relation index, BlockNumber start,
							   BlockNumber npages);
extern void SegvecBuildLogLeft(Relation index, const SegvecSegment *segs,
							   int nsegs);
extern uint64 SegvecFreeStamp(Relation index);
extern Buffer SegvecNewBuffer(Relation index);
extern void SegvecPageSetDeleted(Page page, uint64 xid);
extern bool SegvecMarkPageDeleted(Relation index, Buffer buf, uint64 xid);
extern bool SegvecMarkPageDeletedImage(Relation index, Buffer buf,
									   uint64 xid);
extern uint32 SegvecMarkPagesDeleted(Relation index, BlockNumber first,
									 BlockNumber stop, uint32 npages,
									 bool chain, uint64 xid);
#define SEGVEC_LOG_MAX_PAGES	2
extern void SegvecLogAppendedItems(Relation index, int n, const Buffer *bufs,
								   const OffsetNumber *offs,
								   const bool *opaque);
/* a byte range of page number "page" of a SegvecLogRanges record */
typedef struct SegvecLogRange
{
	int			page;
	uint16		offset;
	uint16		length;
} SegvecLogRange;
#define SEGVEC_LOG_MAX_RANGE_PAGES	3
extern void SegvecLogRanges(Relation index, int n, const Buffer *bufs,
							const bool *full, int nranges,
							const SegvecLogRange *ranges);
extern Buffer SegvecReadBufferHinted(Relation rel, BlockNumber blkno);

/* extent.c: the free-extent list; allocating and writing extents */
extern BlockNumber SegvecAllocExtent(Relation index, uint32 npages);
extern void SegvecFillExtent(Relation index, BlockNumber start,
							 uint32 npages, SegvecFillPageFn fill, void *arg);
extern BlockNumber SegvecWriteExtent(Relation index, uint32 npages,
									 SegvecFillPageFn fill, void *arg);
extern bool SegvecFreeExtentAdd(SegvecMetaPage meta, BlockNumber start,
								uint32 npages, uint64 xid);
extern BlockNumber SegvecExtentTake(Relation index, uint32 npages);
extern BlockNumber SegvecExtentTakeBelow(Relation index, uint32 npages,
										 BlockNumber limit, bool *wait);
extern bool SegvecFreePageAvailable(SegvecMetaPage meta);
extern BlockNumber SegvecFreePageTake(Relation index, SegvecMetaPage meta,
									  bool lowest);
extern Buffer SegvecLockFreePage(Relation index, BlockNumber blkno);
extern bool SegvecFreePagesAdd(SegvecMetaPage meta, BlockNumber *blocks,
							   int nblocks, uint64 xid);
extern BlockNumber SegvecTruncateFreeTail(Relation index, BlockNumber min_pages,
										  bool keep_slack);
extern bool SegvecMayTruncate(Relation index);
extern BlockNumber SegvecTruncateFreeTailWait(Relation index, int timeout_ms);
extern bool SegvecBlockIsFree(const SegvecFreeExtent *free, uint32 nfree,
							  BlockNumber blkno);

/* metapage.c */
extern void SegvecInitMetaPage(Page page, SegvecMetric metric,
							   SegvecFrozenOptions *opts);
extern void SegvecCheckMetaPage(Relation index, SegvecMetaPage meta);
extern void SegvecCheckIndexDim(Relation index, int expected, int found);
extern Buffer SegvecReadMetaBuffer(Relation index);
extern void SegvecGetMetaInfo(Relation index, SegvecMetaInfo *info);
extern void SegvecFreeMetaInfo(SegvecMetaInfo *info);
extern bool SegvecDimensionsXidCommitted(TransactionId xid);
extern bool SegvecDimensionsXidAborted(TransactionId xid);
extern void SegvecMetaFreeze(SegvecMetaPage meta);
extern bool SegvecMetaNeedsFreeze(SegvecMetaPage meta);
extern uint32 SegvecNextSegno(Relation index);
extern Buffer SegvecManifestLockSegment(Relation index, uint32 segno);
extern void SegvecManifestAddTombstones(Page page, uint32 segno,
										uint32 ntombstones);
extern void SegvecGetFrozenOptions(Relation index, SegvecFrozenOptions *opts);
extern int	SegvecGetFrozenM(Relation index);
extern void SegvecSetDimensions(Relation index, int dim);

/* An identity saved by SegvecIdentityPush */
typedef struct SegvecSavedIdentity
{
	Oid			userid;
	int			sec_context;
	int			gucnest;
} SegvecSavedIdentity;

/* index.c: the index relation */
extern bool SegvecIsSegvecIndex(Relation rel);
extern bool SegvecIsPartitionedIndex(Relation rel);
extern bool SegvecRelidIsPartitionedIndex(Oid relid);
extern List *SegvecPartitionIndexes(Oid indexoid);
extern Relation SegvecOpenIndex(Oid relid, LOCKMODE lockmode, bool owner);
extern void SegvecCheckStatsPrivilege(Relation index);
extern void SegvecIdentityPush(SegvecSavedIdentity *saved, Oid userid);
extern void SegvecIdentityPop(SegvecSavedIdentity *saved);
extern Oid	SegvecIndexGetHeap(Oid relid);
extern SegvecMetric SegvecGetMetric(Relation index);
extern FmgrInfo *SegvecKeySendProc(Relation index);
extern float *SegvecDatumGetVector(Relation index, Datum value, int *dim);
extern float *SegvecDatumReadVector(Relation index, Datum value, int *dim);
extern float *SegvecQueryGetVector(Relation index, Datum value, Oid type,
								   int *dim);
extern bool SegvecIsVectorType(Oid type);
extern Oid	SegvecIndexVectorType(Relation index);
extern Oid	SegvecInputProcOid(Relation index);
extern void SegvecRecordInputDependency(Relation index);
extern int	SegvecIndexDimensions(Relation index);
extern int	SegvecQuantizationOption(SegvecOptions *relopts);
extern int	SegvecIndexQuantization(Relation index);
extern int	SegvecIndexFilterCount(Relation index);
extern void SegvecIndexFilterPostable(Relation index, uint32 *postable);
extern uint64 SegvecLabelHash(Oid elemtype, Datum elem);
extern uint64 SegvecLabelHashes(Datum array, uint64 **hashes, int *n);
extern int	SegvecIndexKeyColumn(Relation index);

/* mutable.c: the mutable segment */
extern uint64 SegvecMutableAppend(Relation index, const SegvecDocInfo *doc,
								  const float *vector, int dim,
								  bool *page_added);
extern uint64 SegvecMutableAppendFiltered(Relation index,
										  const SegvecDocInfo *doc,
										  const float *vector, int dim,
										  const char *filters,
										  bool *page_added);
extern void SegvecMutableDocBegin(Relation index, SegvecDocAppend *da,
								  const SegvecDocInfo *doc,
								  const float *vector, int dim,
								  const char *filters);
extern void SegvecMutablePutLast(SegvecDocAppend *da, OffsetNumber *off,
								 bool *opaque);
extern uint64 SegvecMutableDocEnd(SegvecDocAppend *da, bool *page_added);
extern void SegvecMutableForEachDoc(Relation index, BlockNumber head,
									BlockNumber stop, int dim,
									SegvecDocCallback callback, void *arg);
extern void SegvecMutableScanDocs(Relation index, const SegvecMetaInfo *info,
								  SegvecDocCallback callback, void *arg);
extern Buffer SegvecMutableLockAliasTail(Relation index, bool *page_added);
extern uint64 SegvecMutablePutAlias(Relation index, Buffer buf,
									const SegvecDocInfo *doc, uint64 target,
									const char *filters, OffsetNumber *off);
extern uint64 SegvecMutableAppendAlias(Relation index, const SegvecDocInfo *doc,
									   uint64 target, const char *filters,
									   bool *page_added, BlockNumber *blkno);
extern bool SegvecMutableReadAlias(Relation index, BlockNumber blkno,
								   uint64 docid, SegvecDocInfo *doc,
								   uint64 *target, BlockNumber *nblocks);
extern void SegvecMutableForEachItem(Relation index, BlockNumber head,
									 BlockNumber stop, int dim,
									 SegvecDocCallback callback,
									 SegvecAliasCallback alias_callback,
									 void *arg);
extern void SegvecMutableScanItems(Relation index, const SegvecMetaInfo *info,
								   SegvecDocCallback callback,
								   SegvecAliasCallback alias_callback,
								   void *arg);
extern Buffer SegvecMutableLockTail(Relation index);
extern void SegvecMutableAppendPage(Relation index, Buffer *buf);
extern double SegvecMutableDocsEstimate(Relation index, SegvecMetaInfo *info);
extern int64 SegvecMutableCountDocs(Relation index, int64 limit);
extern uint64 SegvecMutableChangeMark(Relation index);
extern void SegvecMutableBulkDelete(Relation index,
									IndexBulkDeleteResult *stats,
									IndexBulkDeleteCallback callback,
									void *callback_state,
									SegvecDocRemovedFn removed,
									void *removed_arg);

#endif							/* SEGVEC_STORE_H */

/*-------------------------------------------------------------------------
 *
 * segvecutils.c
 *	  Page initialisation, metapage access and other helpers shared by the
 *	  segvec access method callbacks.
 *
 * src/segvecutils.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "storage/procarray.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/rel.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "segvec.h"

/* the distance functions of the operator classes, from distance.c */
extern Datum segvec_l2_distance(PG_FUNCTION_ARGS);
extern Datum segvec_cosine_distance(PG_FUNCTION_ARGS);
extern Datum segvec_negative_inner_product(PG_FUNCTION_ARGS);

/*
 * What the relcache keeps for a segvec index (rd_amcache): the metric, and
 * the dimension once the metapage has one.  Both never change for a given
 * relfilenode; TRUNCATE and REINDEX make a new one and invalidate the
 * relcache entry, which frees rd_amcache.
 */
typedef struct SegvecRelCache
{
	SegvecMetric metric;
	int			dimensions;
	bool		key_ready;		/* keysend filled in? */
	FmgrInfo	keysend;		/* send function of the id key's type */
} SegvecRelCache;

static SegvecRelCache *
get_relcache(Relation index)
{
	SegvecRelCache *cache = (SegvecRelCache *) index->rd_amcache;

	if (cache == NULL)
	{
		FmgrInfo   *proc;
		SegvecMetric metric;

		proc = index_getprocinfo(index, 1, SEGVEC_DISTANCE_PROC);
		if (proc->fn_addr == segvec_l2_distance)
			metric = SEGVEC_METRIC_L2;
		else if (proc->fn_addr == segvec_cosine_distance)
			metric = SEGVEC_METRIC_COSINE;
		else if (proc->fn_addr == segvec_negative_inner_product)
			metric = SEGVEC_METRIC_IP;
		else
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("operator class of index \"%s\" uses an unsupported distance function",
							RelationGetRelationName(index)),
					 errhint("Use one of the operator classes vector_l2_ops, vector_cosine_ops or vector_ip_ops.")));

		cache = MemoryContextAllocZero(index->rd_indexcxt,
									   sizeof(SegvecRelCache));
		cache->metric = metric;
		index->rd_amcache = cache;
	}
	return cache;
}

/*
 * SegvecKeySendProc: the send function of the index's id key (its first
 * INCLUDE column), looked up once per relcache entry.  Errors if the type
 * has none.
 */
FmgrInfo *
SegvecKeySendProc(Relation index)
{
	SegvecRelCache *cache = get_relcache(index);

	if (!cache->key_ready)
	{
		Oid			typid = TupleDescAttr(RelationGetDescr(index), 1)->atttypid;
		Oid			sendfn;
		bool		isvarlena;

		getTypeBinaryOutputInfo(typid, &sendfn, &isvarlena);
		fmgr_info_cxt(sendfn, &cache->keysend, index->rd_indexcxt);
		cache->key_ready = true;
	}
	return &cache->keysend;
}

/*
 * SegvecGetMetric: the metric of the index, from its operator class.
 */
SegvecMetric
SegvecGetMetric(Relation index)
{
	return get_relcache(index)->metric;
}

/*
 * SegvecInitPage: initialise a page of the given kind (SEGVEC_PAGE_*).
 */
void
SegvecInitPage(Page page, uint16 flags)
{
	SegvecPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(SegvecPageOpaqueData));
	opaque = SegvecPageGetOpaque(page);
	opaque->nextblkno = InvalidBlockNumber;
	opaque->flags = flags;
	opaque->page_id = SEGVEC_PAGE_ID;
	opaque->seqno = 0;
	opaque->next_docno = 1;
	opaque->unused = 0;
}

/*
 * SegvecInitMetaPage: fill a metapage for an empty index whose mutable
 * segment is the single page at block 1.
 */
void
SegvecInitMetaPage(Page page, SegvecMetric metric, SegvecFrozenOptions *opts)
{
	SegvecMetaPage meta;
	int			b;

	SegvecInitPage(page, SEGVEC_PAGE_META);
	meta = SegvecPageGetMeta(page);
	memset(meta, 0, sizeof(SegvecMetaPageData));
	meta->magic = SEGVEC_MAGIC;
	meta->version = SEGVEC_VERSION;
	meta->dimensions = opts->dimensions;	/* 0: the first vector decides */
	meta->dimensions_xid = InvalidTransactionId;
	meta->metric = metric;
	meta->opts = *opts;
	meta->mutable_head = SEGVEC_METAPAGE_BLKNO + 1;
	meta->mutable_tail = SEGVEC_METAPAGE_BLKNO + 1;
	meta->next_seqno = 1;		/* the head page has seqno 0 */
	meta->mutable_head_seqno = 0;
	meta->next_segno = 1;
	meta->ngarbage = 0;
	meta->nsegments = 0;
	meta->keymap_epoch = 0;
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		meta->snapshot[b].start = InvalidBlockNumber;
		meta->snapshot[b].npages = 0;
		meta->snapshot[b].nentries = 0;
		meta->delta_head[b] = InvalidBlockNumber;
		meta->delta_frozen[b] = InvalidBlockNumber;
	}

	/* so that the metapage survives a full-page image's hole compression */
	((PageHeader) page)->pd_lower =
		((char *) meta + sizeof(SegvecMetaPageData)) - (char *) page;
}

StaticAssertDecl(MAXALIGN(SizeOfPageHeaderData) + sizeof(SegvecMetaPageData) <=
				 BLCKSZ - MAXALIGN(sizeof(SegvecPageOpaqueData)),
				 "segvec metapage does not fit in a page");

static void
check_metapage(Relation index, SegvecMetaPage meta)
{
	if (meta->magic != SEGVEC_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a segvec index",
						RelationGetRelationName(index))));
	if (meta->version != SEGVEC_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has segvec format version %u, expected %u",
						RelationGetRelationName(index), meta->version,
						SEGVEC_VERSION),
				 errhint("REINDEX the index.")));
}

/*
 * SegvecGetMetaInfo: read what the metapage says, under a share lock that
 * is released before returning.
 */
void
SegvecGetMetaInfo(Relation index, SegvecMetaInfo *info)
{
	Buffer		buf;
	SegvecMetaPage meta;
	TransactionId dimensions_xid;

	buf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(buf));
	check_metapage(index, meta);
	info->dimensions = meta->dimensions;
	dimensions_xid = meta->dimensions_xid;
	info->metric = (SegvecMetric) meta->metric;
	info->mutable_head = meta->mutable_head;
	info->mutable_tail = meta->mutable_tail;
	info->opts = meta->opts;
	info->mutable_pages = meta->next_seqno - meta->mutable_head_seqno;
	info->mutable_head_seqno = meta->mutable_head_seqno;
	memcpy(info->snapshot, meta->snapshot, sizeof(info->snapshot));
	info->nsegments = meta->nsegments;
	memcpy(info->segments, meta->segments,
		   sizeof(SegvecSegment) * meta->nsegments);
	UnlockReleaseBuffer(buf);

	/* cache the dimension once it can no longer be reset (see below) */
	if (info->dimensions > 0 && get_relcache(index)->dimensions == 0 &&
		(!TransactionIdIsNormal(dimensions_xid) ||
		 TransactionIdDidCommit(dimensions_xid)))
		get_relcache(index)->dimensions = info->dimensions;
}

/*
 * SegvecGetDimensions: the index's dimension, 0 while it has none; cached
 * in the relcache once set.
 */
static int
get_dimensions(Relation index)
{
	SegvecRelCache *cache = get_relcache(index);

	if (cache->dimensions == 0)
	{
		SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
		int			dim;

		SegvecGetMetaInfo(index, info);
		dim = info->dimensions;
		pfree(info);
		return dim;
	}
	return cache->dimensions;
}

/*
 * SegvecSetDimensions: fix the dimension of an index that has none yet (the
 * first vector decides), remembering the transaction that did it.  The
 * metapage is not transactional, so if that transaction (or
 * subtransaction) did not commit, the dimension it set did not count
 * either, and a vector of another length may set it again.  Otherwise a
 * vector of another length gets the usual mismatch error.
 */
void
SegvecSetDimensions(Relation index, int dim)
{
	Buffer		buf;
	SegvecMetaPage meta;
	int			current;

	buf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	meta = SegvecPageGetMeta(BufferGetPage(buf));
	check_metapage(index, meta);
	current = meta->dimensions;
	if (current != dim &&
		(current == 0 ||
		 (TransactionIdIsNormal(meta->dimensions_xid) &&
		  !TransactionIdIsCurrentTransactionId(meta->dimensions_xid) &&
		  !TransactionIdIsInProgress(meta->dimensions_xid) &&
		  !TransactionIdDidCommit(meta->dimensions_xid))))
	{
		GenericXLogState *state = GenericXLogStart(index);
		SegvecMetaPage wmeta;

		wmeta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
		wmeta->dimensions = dim;
		wmeta->dimensions_xid = GetCurrentTransactionIdIfAny();
		GenericXLogFinish(state);
		current = dim;
	}
	UnlockReleaseBuffer(buf);

	SegvecCheckSameDim(current, dim);
}

/*
 * SegvecDatumGetVector: turn an indexed real[] datum into the vector to
 * store, checking it and its dimension against the index's (fixing the
 * index's dimension if this is the first vector).  The result may point
 * into a detoasted copy made in the current memory context.
 */
float *
SegvecDatumGetVector(Relation index, Datum value, int *dim)
{
	ArrayType  *array = DatumGetArrayTypeP(value);
	float	   *vector = SegvecArrayGetVector(array, dim);
	int			expected = get_dimensions(index);

	/* set, or (after an aborted first insert) reset, or complain */
	if (expected != *dim)
		SegvecSetDimensions(index, *dim);
	return vector;
}

/*
 * SegvecNewBuffer: get an exclusively locked, unused page, from the free
 * space map when it has one that is safe to reuse, else by extending the
 * relation.  The caller initialises the page and WAL-logs it.
 */
Buffer
SegvecNewBuffer(Relation index)
{
	Buffer		buf;
	bool		needLock;

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(index);
		Page		page;

		if (blkno == InvalidBlockNumber)
			break;

		buf = ReadBuffer(index, blkno);

		/* someone else may be reusing it; then just try another */
		if (ConditionalLockBuffer(buf))
		{
			page = BufferGetPage(buf);
			if (PageIsNew(page))
				return buf;
			if (SegvecPageIsDeleted(page) &&
				GlobalVisCheckRemovableFullXid(NULL,
											   FullTransactionIdFromU64(SegvecPageGetOpaque(page)->seqno)))
				return buf;
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}

	needLock = !RELATION_IS_LOCAL(index);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);

	return buf;
}

/*
 * SegvecGetFrozenOptions: the options the index was built with.
 */
void
SegvecGetFrozenOptions(Relation index, SegvecFrozenOptions *opts)
{
	Buffer		buf;
	SegvecMetaPage meta;

	buf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(buf));
	check_metapage(index, meta);
	*opts = meta->opts;
	UnlockReleaseBuffer(buf);
}

int
SegvecGetFrozenM(Relation index)
{
	SegvecFrozenOptions opts;

	SegvecGetFrozenOptions(index, &opts);
	return opts.m;
}

/*
 * SegvecCompactThreshold: docs in the mutable segment that make compaction
 * worthwhile: the index's compact_threshold option, else the GUC.
 */
int
SegvecCompactThreshold(Relation index)
{
	SegvecOptions *opts = (SegvecOptions *) index->rd_options;

	if (opts && opts->compact_threshold >= 0)
		return opts->compact_threshold;
	return segvec_compact_threshold;
}

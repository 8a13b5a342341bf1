/*-------------------------------------------------------------------------
 *
 * metapage.c
 *	  The metapage (block 0): its initialisation, reading it (with the
 *	  manifest's overflow pages), and the things set in it after the build:
 *	  the dimension (and its freezing) and (in compact/) the manifest.
 *
 * Readers take a share lock on the metapage and copy what they need
 * (SegvecGetMetaInfo); writers take it exclusively inside a GenericXLog
 * record.  See src/README.md, "Metapage".
 *
 * src/store/metapage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "common/pg_prng.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "compat.h"
#include "store/store.h"

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
	meta->manifest_gen = 0;
	meta->manifest_head = InvalidBlockNumber;
	meta->nfree = 0;
	/*
	 * An in-place rebuild (TRUNCATE of a table created or truncated in the
	 * same transaction) keeps the relfilenode and starts the epoch and run
	 * numbers over, so backends' keymap caches tell builds apart by this.
	 */
	meta->keymap_build = pg_prng_uint32(&pg_global_prng_state) | 1;
	meta->keymap_epoch = 0;
	meta->keymap_nruns = 0;
	meta->keymap_next_runno = 1;
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
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

/*
 * SegvecCheckMetaPage: error unless meta is the metapage of a segvec index
 * of the format version this build reads.  magic and version are the first
 * two fields in every format, so they can be read whatever the rest of the
 * page holds; callers look at nothing else before this check passes.  An
 * index in another format gets an error that names the REINDEX which
 * rebuilds it, never a read of fields whose layout may differ.
 */
void
SegvecCheckMetaPage(Relation index, SegvecMetaPage meta)
{
	char	   *qualname;

	if (meta->magic != SEGVEC_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a segvec index",
						RelationGetRelationName(index))));
	if (likely(meta->version == SEGVEC_VERSION))
		return;

	qualname = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
										  RelationGetRelationName(index));
	if (meta->version > SEGVEC_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read index \"%s\": it was built by a newer segvec",
						RelationGetRelationName(index)),
				 errdetail("The index has segvec format version %u; this build of segvec reads version %u.",
						   meta->version, SEGVEC_VERSION),
				 errhint("Install the newer segvec again, or rebuild the index with REINDEX INDEX %s.",
						 qualname)));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot read index \"%s\": it was built by an older segvec",
					RelationGetRelationName(index)),
			 errdetail("The index has segvec format version %u; this build of segvec reads version %u.",
					   meta->version, SEGVEC_VERSION),
			 errhint("Rebuild the index with REINDEX INDEX %s.", qualname)));
}

/*
 * SegvecDimensionsXidCommitted: has the transaction that set the dimension
 * committed, as far as anyone can still tell?  An xid older than the oldest one pg_xact still holds
 * belongs to a transaction every row of which VACUUM has frozen (or that
 * wrote none), so its dimension stands.
 */
bool
SegvecDimensionsXidCommitted(TransactionId xid)
{
	bool		truncated;

	if (!TransactionIdIsNormal(xid))
		return true;
	LWLockAcquire(XactTruncationLock, LW_SHARED);
	truncated = TransactionIdPrecedes(xid, SegvecOldestClogXid());
	LWLockRelease(XactTruncationLock);
	if (truncated)
		return true;
	if (TransactionIdIsCurrentTransactionId(xid) ||
		TransactionIdIsInProgress(xid))
		return false;
	return TransactionIdDidCommit(xid);
}

/*
 * SegvecDimensionsXidAborted: did the transaction that set the dimension
 * end without committing (an aborted first insert, or its
 * subtransaction)?  Then the dimension does not count: the next vector
 * sets it again, and ft.info shows none.
 */
bool
SegvecDimensionsXidAborted(TransactionId xid)
{
	return TransactionIdIsNormal(xid) &&
		!TransactionIdIsCurrentTransactionId(xid) &&
		!TransactionIdIsInProgress(xid) &&
		!SegvecDimensionsXidCommitted(xid);
}

/*
 * SegvecMetaFreeze: called on the writable copy of the metapage by every
 * install and page append (and by VACUUM): once the transaction that set
 * the dimension is known committed, forget it, so that no later reader asks
 * pg_xact about an xid that may be truncated away (the way VACUUM freezes
 * heap rows).  Caller holds the metapage exclusively.
 */
void
SegvecMetaFreeze(SegvecMetaPage meta)
{
	if (TransactionIdIsNormal(meta->dimensions_xid) &&
		SegvecDimensionsXidCommitted(meta->dimensions_xid))
		meta->dimensions_xid = InvalidTransactionId;
}

/*
 * SegvecMetaNeedsFreeze: would SegvecMetaFreeze change this metapage?
 */
bool
SegvecMetaNeedsFreeze(SegvecMetaPage meta)
{
	return TransactionIdIsNormal(meta->dimensions_xid) &&
		SegvecDimensionsXidCommitted(meta->dimensions_xid);
}

/*
 * Append the segment descriptors of the manifest overflow chain starting at
 * blkno to info->segments (which has room for all of them).  Caller holds
 * the metapage at least shared, so the chain is the current one: its pages
 * are changed in place only by tombstone counts, under an exclusive lock.
 */
static void
read_manifest_chain(Relation index, BlockNumber blkno, uint32 gen,
					SegvecMetaInfo *info, uint32 have)
{
	while (blkno != InvalidBlockNumber && have < info->nsegments)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;
		SegvecPageOpaque opaque;
		uint32		n;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		opaque = SegvecPageGetOpaque(page);
		if (!(opaque->flags & SEGVEC_PAGE_MANIFEST) ||
			(opaque->flags & SEGVEC_PAGE_DELETED) || opaque->seqno != gen)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("segvec index \"%s\" has a broken manifest chain at block %u",
							RelationGetRelationName(index), blkno)));
		n = Min(opaque->next_docno, info->nsegments - have);
		memcpy(info->segments + have, PageGetContents(page),
			   sizeof(SegvecSegment) * n);
		have += n;
		blkno = opaque->nextblkno;
		UnlockReleaseBuffer(buf);
	}
	if (have != info->nsegments)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("segvec index \"%s\" has a short manifest chain",
						RelationGetRelationName(index))));
}

/*
 * SegvecReadMetaBuffer: the metapage of index, pinned (not locked), as
 * ReadBuffer(index, SEGVEC_METAPAGE_BLKNO) returns it; but through a hint,
 * the buffer that held the last metapage this backend read, checked by
 * ReadRecentBuffer under the buffer header's lock, so that the several
 * reads of the metapage an insert makes skip the buffer mapping table's
 * look-up (and its partition lock).  A stale hint only costs the look-up.
 */
Buffer
SegvecReadMetaBuffer(Relation index)
{
	static SegvecRelFileId hint_node;
	static Buffer hint_buf = InvalidBuffer;
	Buffer		buf;

	if (RelationUsesLocalBuffers(index))
		return ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	if (hint_buf != InvalidBuffer &&
		SegvecRelFileIdEquals(hint_node, SegvecRelFileIdOf(index)) &&
		ReadRecentBuffer(SegvecRelFileIdOf(index), MAIN_FORKNUM, SEGVEC_METAPAGE_BLKNO,
						 hint_buf))
		return hint_buf;
	buf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	hint_node = SegvecRelFileIdOf(index);
	hint_buf = buf;
	return buf;
}

/*
 * SegvecGetMetaInfo: read what the metapage says, under a share lock that
 * is released before returning; the manifest (info->segments) is palloc'd
 * in the current memory context, overflow pages included.
 */
void
SegvecGetMetaInfo(Relation index, SegvecMetaInfo *info)
{
	Buffer		buf;
	SegvecMetaPage meta;
	TransactionId dimensions_xid;
	uint32		ninline;

	buf = SegvecReadMetaBuffer(index);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(buf));
	SegvecCheckMetaPage(index, meta);
	info->dimensions = meta->dimensions;
	dimensions_xid = meta->dimensions_xid;
	info->metric = (SegvecMetric) meta->metric;
	info->mutable_head = meta->mutable_head;
	info->mutable_tail = meta->mutable_tail;
	info->opts = meta->opts;
	info->mutable_pages = meta->next_seqno - meta->mutable_head_seqno;
	info->mutable_head_seqno = meta->mutable_head_seqno;
	info->nfree = meta->nfree;
	memcpy(info->free, meta->free, sizeof(SegvecFreeExtent) * meta->nfree);
	info->keymap_nruns = meta->keymap_nruns;
	memcpy(info->keymap_runs, meta->keymap_runs,
		   sizeof(SegvecKeymapRun) * meta->keymap_nruns);
	info->ncompactions = meta->ncompactions;
	info->nmerges = meta->nmerges;
	info->nrun_merges = meta->nrun_merges;
	info->nsegments = meta->nsegments;
	info->manifest_gen = meta->manifest_gen;
	info->manifest_head = meta->manifest_head;
	info->segments = palloc(sizeof(SegvecSegment) * Max(meta->nsegments, 1));
	ninline = Min(meta->nsegments, SEGVEC_META_SEGMENTS);
	memcpy(info->segments, meta->segments, sizeof(SegvecSegment) * ninline);
	if (meta->nsegments > ninline)
		read_manifest_chain(index, meta->manifest_head, meta->manifest_gen,
							info, ninline);
	UnlockReleaseBuffer(buf);
	info->dimensions_xid = dimensions_xid;
}

/*
 * SegvecSetDimensions: fix the dimension of an index that has none yet (the
 * first vector decides), remembering the transaction that did it.  The
 * metapage is not transactional, so if that transaction (or
 * subtransaction) did not commit, the dimension it set did not count
 * either, and a vector of another length may set it again, as long as no
 * graph segment holds vectors of the old length (a compaction froze them
 * while the setter ran) and no compaction is freezing some (it holds the
 * compaction lock).  Otherwise a vector of another length gets the usual
 * mismatch error.
 *
 * A vector of the same length, while the setter's outcome is not known
 * committed, must keep the dimension for its own sake: the dimension
 * stands if any transaction that indexed a vector of it commits.  If the
 * setter aborted (a rolled-back savepoint or first statement), this
 * transaction becomes the setter.  If the setter is another transaction
 * still running, one xid cannot say "either", so the dimension is frozen
 * for good (dimensions_xid cleared), as if the setter had committed; an
 * index whose every first inserter then rolls back keeps the dimension.
 * A setter that is this transaction (a parent, or a subtransaction
 * committed into one) commits whenever this vector's row does.
 */
void
SegvecSetDimensions(Relation index, int dim)
{
	Buffer		buf;
	SegvecMetaPage meta;
	int			current;
	TransactionId setter;
	bool		compaction_locked = false;

	buf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	meta = SegvecPageGetMeta(BufferGetPage(buf));
	SegvecCheckMetaPage(index, meta);
	if (meta->dimensions != 0 && meta->dimensions != dim &&
		meta->nsegments == 0 && SegvecDimensionsXidAborted(meta->dimensions_xid))
	{
		/*
		 * A reset, if no compaction is freezing vectors of the old length
		 * into a graph segment right now: it holds the compaction lock to
		 * its install.  Taken without waiting (this backend may hold
		 * locks a compaction waits for), before the buffer lock, as
		 * everyone takes them; then look again.
		 */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		compaction_locked = ConditionalLockPage(index, SEGVEC_METAPAGE_BLKNO,
												ExclusiveLock);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		meta = SegvecPageGetMeta(BufferGetPage(buf));
	}
	current = meta->dimensions;
	setter = meta->dimensions_xid;
	if (current == 0 ||
		(current != dim && compaction_locked && meta->nsegments == 0 &&
		 SegvecDimensionsXidAborted(setter)))
	{
		/* set, or reset after an aborted setter */
		current = dim;
		setter = GetCurrentTransactionIdIfAny();
	}
	else if (current == dim && TransactionIdIsNormal(setter) &&
			 !TransactionIdIsCurrentTransactionId(setter) &&
			 !SegvecDimensionsXidCommitted(setter))
	{
		/* aborted: this transaction sets it; running: it stands for good */
		setter = SegvecDimensionsXidAborted(setter) ?
			GetCurrentTransactionIdIfAny() : InvalidTransactionId;
	}
	if (current != meta->dimensions || setter != meta->dimensions_xid)
	{
		GenericXLogState *state = GenericXLogStart(index);
		SegvecMetaPage wmeta;

		wmeta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
		wmeta->dimensions = current;
		wmeta->dimensions_xid = setter;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(buf);
	if (compaction_locked)
		UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	SegvecCheckIndexDim(index, current, dim);
}

/*
 * SegvecCheckIndexDim: ERROR unless a vector of found dimensions fits the
 * index, whose vectors have expected dimensions; the detail names the
 * index, since a table may have several.
 */
void
SegvecCheckIndexDim(Relation index, int expected, int found)
{
	if (expected != found)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg_plural("vector has %d dimension, expected %d",
							   "vector has %d dimensions, expected %d",
							   found, found, expected),
				 errdetail_plural("Index \"%s\" holds vectors of %d dimension.",
								  "Index \"%s\" holds vectors of %d dimensions.",
								  expected, RelationGetRelationName(index),
								  expected)));
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
	SegvecCheckMetaPage(index, meta);
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
 * SegvecFreeMetaInfo: free what SegvecGetMetaInfo allocated (not info).
 */
void
SegvecFreeMetaInfo(SegvecMetaInfo *info)
{
	if (info->segments)
		pfree(info->segments);
	info->segments = NULL;
}

/*
 * SegvecNextSegno: the number the next segment written will get.  Caller
 * holds the compaction lock (or builds the index), so no one else numbers
 * segments until it installs them.
 */
uint32
SegvecNextSegno(Relation index)
{
	Buffer		buf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	uint32		segno;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	segno = SegvecPageGetMeta(BufferGetPage(buf))->next_segno;
	UnlockReleaseBuffer(buf);
	return segno;
}

/*
 * SegvecManifestLockSegment: the page holding segment segno's descriptor
 * (the metapage, or a manifest overflow page), exclusively locked, for a
 * change of its tombstone count.  Caller holds the compaction lock, so the
 * manifest does not move; lock order: the caller's tombstone page, then
 * this page.
 */
Buffer
SegvecManifestLockSegment(Relation index, uint32 segno)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	SegvecMetaPage meta;
	BlockNumber blkno;
	uint32		i;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	for (i = 0; i < Min(meta->nsegments, SEGVEC_META_SEGMENTS); i++)
	{
		if (meta->segments[i].segno == segno)
		{
			LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
			LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
			return metabuf;
		}
	}
	blkno = meta->manifest_head;
	UnlockReleaseBuffer(metabuf);

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;
		SegvecSegment *segs;

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		segs = (SegvecSegment *) PageGetContents(page);
		for (i = 0; i < SegvecPageGetOpaque(page)->next_docno; i++)
			if (segs[i].segno == segno)
				return buf;
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		UnlockReleaseBuffer(buf);
	}
	elog(ERROR, "segment %u of segvec index \"%s\" is not in the manifest",
		 segno, RelationGetRelationName(index));
	return InvalidBuffer;		/* keep compiler quiet */
}

/*
 * SegvecManifestAddTombstones: on the writable copy of a page that
 * SegvecManifestLockSegment returned, add ntombstones to segment segno's
 * count.
 */
void
SegvecManifestAddTombstones(Page page, uint32 segno, uint32 ntombstones)
{
	SegvecSegment *segs;
	uint32		n,
				i;

	if (SegvecPageIsMeta(page))
	{
		SegvecMetaPage meta = SegvecPageGetMeta(page);

		segs = meta->segments;
		n = Min(meta->nsegments, SEGVEC_META_SEGMENTS);
		SegvecMetaFreeze(meta);
	}
	else
	{
		segs = (SegvecSegment *) PageGetContents(page);
		n = SegvecPageGetOpaque(page)->next_docno;
	}
	for (i = 0; i < n; i++)
		if (segs[i].segno == segno)
			segs[i].ntombstones += ntombstones;
}

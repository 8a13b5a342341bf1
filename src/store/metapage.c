/*-------------------------------------------------------------------------
 *
 * metapage.c
 *	  The metapage (block 0): its initialisation, reading it, and the two
 *	  things set in it after the build, the dimension and (in compact/)
 *	  the manifest.
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
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

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
	SegvecCheckMetaPage(index, meta);
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
	info->dimensions_xid = dimensions_xid;
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
	SegvecCheckMetaPage(index, meta);
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

/*-------------------------------------------------------------------------
 *
 * mutable.c
 *	  The mutable segment: an append-only chain of pages that every insert
 *	  writes to and that scans read exactly.
 *
 * The chain starts at the metapage's mutable_head and ends at its
 * mutable_tail; pages are linked by their opaque nextblkno.  Appends go to
 * the tail only, under an exclusive lock on the tail page; VACUUM deletes
 * dead pieces in place and unlinks pages it empties (never the head or the
 * tail), marking them deleted with the next FullTransactionId so they are
 * recycled only once no scan can still be on its way to them.  See
 * src/README.md, "Mutable segment".
 *
 * src/store/mutable.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "compat.h"
#include "store/store.h"

/* What a standby scan's walk checks (SegvecMutableScanDocs) */
typedef struct ChainCheck
{
	BlockNumber tail;			/* the tail as the scan read it */
	uint64		seqno_limit;	/* next_seqno as the scan read it */
} ChainCheck;

static OffsetNumber put_piece(Relation index, SegvecDocAppend *da,
							  Page page);
static void walk_chain(Relation index, BlockNumber head, BlockNumber stop,
					   const ChainCheck *check, int dim,
					   SegvecDocCallback callback,
					   SegvecAliasCallback alias_callback, void *arg);

/*
 * Lock the tail page of the mutable segment exclusively and return it.
 * The metapage's tail may be stale by the time we get the lock (another
 * backend appended a page); then follow the chain, coupling locks forward.
 */
/*
 * The metapage's mutable_tail.  Only that one field: every insert comes
 * here, and the whole SegvecMetaInfo (manifest and keymap directory) is
 * some 5 kB to copy.
 */
static BlockNumber
meta_mutable_tail(Relation index)
{
	Buffer		metabuf = SegvecReadMetaBuffer(index);
	BlockNumber tail;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	tail = SegvecPageGetMeta(BufferGetPage(metabuf))->mutable_tail;
	UnlockReleaseBuffer(metabuf);
	return tail;
}

Buffer
SegvecMutableLockTail(Relation index)
{
	for (;;)
	{
		Buffer		buf;

		buf = SegvecReadBufferHinted(index, meta_mutable_tail(index));
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);

		for (;;)
		{
			Page		page = BufferGetPage(buf);
			SegvecPageOpaque opaque = SegvecPageGetOpaque(page);
			Buffer		next;

			/*
			 * Between reading the metapage and locking the page, others may
			 * have appended after it and VACUUM unlinked it: start over.
			 */
			if (!SegvecPageIsMutable(page) || SegvecPageIsDeleted(page))
			{
				UnlockReleaseBuffer(buf);
				buf = InvalidBuffer;
				break;
			}
			if (opaque->nextblkno == InvalidBlockNumber)
				return buf;

			next = SegvecReadBufferHinted(index, opaque->nextblkno);
			LockBuffer(next, BUFFER_LOCK_EXCLUSIVE);
			UnlockReleaseBuffer(buf);
			buf = next;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/* The byte range of field, a member of the struct at ptr, in page */
#define FIELD_RANGE(pageno, page, ptr, field) \
	((SegvecLogRange) {(pageno), \
	 (uint16) ((char *) &(ptr)->field - (char *) (page)), \
	 (uint16) sizeof((ptr)->field)})

/*
 * Add a new page after the locked tail *buf, in one WAL record that also
 * moves the metapage's tail and, with da, puts the doc's next piece on the
 * new page (put_piece).  On return *buf is the new tail, locked, and the
 * old tail is unlocked and released.  The page comes from the free-extent
 * list when it has a reusable one (taken in the same record), else from
 * the free space map or the end of the relation.  Lock order: tail,
 * metapage, new page (which nothing else can reach); or, when the list has
 * none, tail, new page, metapage.  The new page is logged as a full image
 * (with its piece: what a delta would log, in one record instead of two).
 *
 * When the page does not come from the free-extent list and the metapage
 * needs no freeze (the usual case), the record names the fields it
 * changes (SegvecLogRanges: the metapage's tail and next_seqno, the old
 * tail's nextblkno) instead of going through GenericXLog, which would copy
 * and compare the three pages.
 */
static void
append_page(Relation index, Buffer *buf, SegvecDocAppend *da)
{
	Buffer		newbuf = InvalidBuffer;
	Buffer		metabuf;
	GenericXLogState *state;
	Page		oldpage,
				newpage,
				metapage;
	SegvecMetaPage meta;

	metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	if (!SegvecFreePageAvailable(SegvecPageGetMeta(BufferGetPage(metabuf))))
	{
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
		newbuf = SegvecNewBuffer(index);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	}

	if (newbuf != InvalidBuffer &&
		!SegvecMetaNeedsFreeze(SegvecPageGetMeta(BufferGetPage(metabuf))))
	{
		Buffer		bufs[3];
		bool		full[3] = {false, false, true};
		SegvecLogRange ranges[3];
		SegvecPageOpaque oldopaque;

		metapage = BufferGetPage(metabuf);
		meta = SegvecPageGetMeta(metapage);
		oldpage = BufferGetPage(*buf);
		oldopaque = SegvecPageGetOpaque(oldpage);
		newpage = BufferGetPage(newbuf);
		bufs[0] = metabuf;
		bufs[1] = *buf;
		bufs[2] = newbuf;
		ranges[0] = FIELD_RANGE(0, metapage, meta, mutable_tail);
		ranges[1] = FIELD_RANGE(0, metapage, meta, next_seqno);
		ranges[2] = FIELD_RANGE(1, oldpage, oldopaque, nextblkno);

		START_CRIT_SECTION();
		SegvecInitPage(newpage, SEGVEC_PAGE_MUTABLE);
		SegvecPageGetOpaque(newpage)->seqno = meta->next_seqno++;
		oldopaque->nextblkno = BufferGetBlockNumber(newbuf);
		meta->mutable_tail = BufferGetBlockNumber(newbuf);
		if (da != NULL)
			(void) put_piece(index, da, newpage);
		SegvecLogRanges(index, 3, bufs, full, 3, ranges);
		END_CRIT_SECTION();
	}
	else
	{
		state = GenericXLogStart(index);
		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
		meta = SegvecPageGetMeta(metapage);
		if (newbuf == InvalidBuffer)
		{
			BlockNumber blkno = SegvecFreePageTake(index, meta, true);

			/* the metapage stayed locked since we looked */
			Assert(blkno != InvalidBlockNumber);
			newbuf = SegvecLockFreePage(index, blkno);
		}
		oldpage = GenericXLogRegisterBuffer(state, *buf, 0);
		newpage = GenericXLogRegisterBuffer(state, newbuf,
											GENERIC_XLOG_FULL_IMAGE);

		SegvecInitPage(newpage, SEGVEC_PAGE_MUTABLE);
		SegvecPageGetOpaque(newpage)->seqno = meta->next_seqno++;
		SegvecPageGetOpaque(oldpage)->nextblkno = BufferGetBlockNumber(newbuf);
		meta->mutable_tail = BufferGetBlockNumber(newbuf);
		SegvecMetaFreeze(meta);
		if (da != NULL)
			(void) put_piece(index, da, newpage);

		GenericXLogFinish(state);
	}

	UnlockReleaseBuffer(metabuf);
	UnlockReleaseBuffer(*buf);
	*buf = newbuf;
}

/*
 * SegvecMutableAppendPage: add a new, empty page after the locked tail
 * *buf (see append_page).
 */
void
SegvecMutableAppendPage(Relation index, Buffer *buf)
{
	append_page(index, buf, NULL);
}

/*
 * SegvecMutableDocsEstimate: about how many docs the mutable segment holds,
 * from its page count and how many docs of the index's dimension fit in a
 * page (without reading the pages).
 */
double
SegvecMutableDocsEstimate(Relation index, SegvecMetaInfo *info)
{
	Size		itemsz;
	double		per_page;

	if (info->dimensions <= 0)
		return 0;
	itemsz = MAXALIGN(SEGVEC_MUTABLE_HDRSZ + sizeof(float4) * info->dimensions) +
		sizeof(ItemIdData);
	per_page = (double) SEGVEC_MAX_ITEMSZ / itemsz;
	return info->mutable_pages * per_page;
}

/* The item size of da's next piece */
static Size
piece_itemsz(const SegvecDocAppend *da)
{
	int			nfloats = Min(da->dim - da->done, da->maxfloats);

	return MAXALIGN(SEGVEC_MUTABLE_HDRSZ + nfloats * sizeof(float4) +
					da->fbytes);
}

/*
 * Add da's next piece to page (a locked buffer's page in a critical
 * section, or a GenericXLog copy); the first piece takes the page's next
 * doc number, which makes the doc's id.  Returns the item's offset.
 */
static OffsetNumber
put_piece(Relation index, SegvecDocAppend *da, Page page)
{
	int			nfloats = Min(da->dim - da->done, da->maxfloats);
	Size		itemsz = piece_itemsz(da);
	SegvecMutableTuple tup = da->tup;
	OffsetNumber off;

	if (da->pieceno == 0)
		da->docid = SegvecMakeDocId(SegvecPageGetOpaque(page)->seqno,
									SegvecPageGetOpaque(page)->next_docno++);

	memset(tup, 0, SEGVEC_MUTABLE_HDRSZ);
	tup->docid = da->docid;
	tup->key_hash = da->doc->key_hash;
	tup->checksum = da->doc->checksum;
	tup->heaptid = da->doc->heaptid;
	tup->flags = da->doc->flags;
	tup->pieceno = da->pieceno;
	tup->npieces = da->npieces;
	tup->nfloats = nfloats;
	memcpy(tup->data, da->vector + da->done, nfloats * sizeof(float4));
	if (da->fbytes > 0)
	{
		if (da->filters)
			memcpy(tup->data + nfloats, da->filters, da->fbytes);
		else
			memset(tup->data + nfloats, 0, da->fbytes);
	}

	off = PageAddItem(page, (Item) tup, itemsz, InvalidOffsetNumber,
					  false, false);
	if (off == InvalidOffsetNumber)
		elog(CritSectionCount > 0 ? PANIC : ERROR,
			 "failed to add item to segvec index \"%s\"",
			 RelationGetRelationName(index));
	da->done += nfloats;
	da->pieceno++;
	return off;
}

/*
 * SegvecMutableDocBegin: start appending one doc (its identity from *doc,
 * whose docid is ignored, its vector of dim floats, and its filter entry:
 * format.h; SEGVEC_FILTER_ENTRY_BYTES for the index's filter columns, or
 * NULL for all NULL, which every piece carries after its floats) to the
 * tail of the mutable segment.  A vector bigger than a page is written as
 * several pieces on consecutive pages; the tail lock is coupled forward
 * from page to page, so no other doc's pieces come between them.
 *
 * Writes every piece but the last, each in its own WAL record (on the tail
 * page: SegvecLogAppendedItems; on a new page: in the record that adds the
 * page).  Then, if the last piece needs a new page, writes it there too
 * (da->written); else it leaves it to SegvecMutablePutLast, with da->buf,
 * the tail, locked and with room for it, so that the caller may log it
 * with another change in one record (KeymapAppendDoc).  Finish with
 * SegvecMutableDocEnd.
 *
 * A crash between the records of a doc's pieces leaves a doc with missing
 * pieces, which scans skip; that can only happen to a transaction that did
 * not commit, whose heap row VACUUM then removes along with the pieces.
 */
void
SegvecMutableDocBegin(Relation index, SegvecDocAppend *da,
					  const SegvecDocInfo *doc, const float *vector, int dim,
					  const char *filters)
{
	memset(da, 0, sizeof(*da));
	da->index = index;
	da->doc = doc;
	da->vector = vector;
	da->dim = dim;
	da->filters = filters;
	da->fbytes = SEGVEC_FILTER_ENTRY_BYTES(SegvecIndexFilterCount(index));
	da->maxfloats = SEGVEC_MAX_PIECE_FLOATS - (int) (da->fbytes / sizeof(float4));
	da->npieces = (dim + da->maxfloats - 1) / da->maxfloats;
	Assert(da->npieces >= 1 && da->npieces <= PG_UINT16_MAX);
	da->tup = palloc(SEGVEC_MAX_ITEMSZ);
	da->buf = SegvecMutableLockTail(index);

	for (;;)
	{
		Page		page = BufferGetPage(da->buf);
		bool		last = (da->pieceno == da->npieces - 1);
		bool		opaque;
		OffsetNumber off;

		/* a page numbers at most 65,535 docs in its life (doc id bits) */
		if (PageGetFreeSpace(page) < piece_itemsz(da) ||
			(da->pieceno == 0 &&
			 SegvecPageGetOpaque(page)->next_docno > PG_UINT16_MAX))
		{
			append_page(index, &da->buf, da);
			da->page_added = true;
			if (last)
			{
				da->written = true;
				return;
			}
			continue;
		}
		if (last)
			return;

		START_CRIT_SECTION();
		opaque = (da->pieceno == 0);
		off = put_piece(index, da, page);
		SegvecLogAppendedItems(index, 1, &da->buf, &off, &opaque);
		END_CRIT_SECTION();
	}
}

/*
 * SegvecMutablePutLast: put the last piece of da's doc on da->buf (when
 * SegvecMutableDocBegin left it: !da->written).  Called in a critical
 * section; the caller logs the change: SegvecLogAppendedItems of da->buf
 * with *off, and *opaque (whether next_docno changed).  Sets
 * da->docid.
 */
void
SegvecMutablePutLast(SegvecDocAppend *da, OffsetNumber *off, bool *opaque)
{
	Assert(CritSectionCount > 0);
	Assert(!da->written && da->pieceno == da->npieces - 1);
	*opaque = (da->pieceno == 0);
	*off = put_piece(da->index, da, BufferGetPage(da->buf));
	da->written = true;
}

/*
 * SegvecMutableDocEnd: finish SegvecMutableDocBegin: the last piece put
 * and logged here if nobody did, the tail released.  Returns the doc id;
 * *page_added tells whether a piece started a new page (the caller may
 * then check the compaction threshold).
 */
uint64
SegvecMutableDocEnd(SegvecDocAppend *da, bool *page_added)
{
	if (!da->written)
	{
		OffsetNumber off;
		bool		opaque;

		START_CRIT_SECTION();
		SegvecMutablePutLast(da, &off, &opaque);
		SegvecLogAppendedItems(da->index, 1, &da->buf, &off, &opaque);
		END_CRIT_SECTION();
	}
	UnlockReleaseBuffer(da->buf);
	da->buf = InvalidBuffer;
	pfree(da->tup);
	*page_added = da->page_added;
	return da->docid;
}

/*
 * SegvecMutableAppend: append one doc to the tail of the mutable segment
 * (SegvecMutableDocBegin, SegvecMutableDocEnd).  Returns the doc id it
 * gets; *page_added as for SegvecMutableDocEnd.
 */
uint64
SegvecMutableAppend(Relation index, const SegvecDocInfo *doc,
					const float *vector, int dim, bool *page_added)
{
	return SegvecMutableAppendFiltered(index, doc, vector, dim, NULL,
									   page_added);
}

/*
 * SegvecMutableAppendFiltered: SegvecMutableAppend of a doc with its filter
 * entry (as SegvecMutableDocBegin takes it).
 */
uint64
SegvecMutableAppendFiltered(Relation index, const SegvecDocInfo *doc,
							const float *vector, int dim,
							const char *filters, bool *page_added)
{
	SegvecDocAppend da;

	SegvecMutableDocBegin(index, &da, doc, vector, dim, filters);
	return SegvecMutableDocEnd(&da, page_added);
}

/* The size of an alias item of index (with its filter entry, if any) */
static inline Size
alias_itemsz(Relation index)
{
	return SEGVEC_ALIAS_ITEMSZ_FILTERED(SEGVEC_FILTER_ENTRY_BYTES(SegvecIndexFilterCount(index)));
}

/*
 * SegvecMutableLockAliasTail: the tail page of the mutable segment,
 * exclusively locked, with room for an alias (a new page is added first if
 * it has none: *page_added, as for SegvecMutableAppend).
 */
Buffer
SegvecMutableLockAliasTail(Relation index, bool *page_added)
{
	Buffer		buf = SegvecMutableLockTail(index);

	*page_added = false;
	if (PageGetFreeSpace(BufferGetPage(buf)) < alias_itemsz(index) ||
		SegvecPageGetOpaque(BufferGetPage(buf))->next_docno > PG_UINT16_MAX)
	{
		SegvecMutableAppendPage(index, &buf);
		*page_added = true;
	}
	return buf;
}

/*
 * SegvecMutablePutAlias: add an alias (see "Aliases" in src/README.md) to
 * buf, the tail page from SegvecMutableLockAliasTail: doc's identity (its
 * docid ignored, its flags get SEGVEC_DOC_ALIAS), target, the doc id of
 * an immutable segment's doc with the same vector, and in an index with
 * filter columns the alias's own filter entry, filters (the new row
 * version's values; NULL: all NULL).  Called in a critical section; the
 * caller logs the change (SegvecLogAppendedItems, *off is the item's
 * offset).  Returns the alias's own doc id.
 */
uint64
SegvecMutablePutAlias(Relation index, Buffer buf, const SegvecDocInfo *doc,
					  uint64 target, const char *filters, OffsetNumber *off)
{
	union
	{
		SegvecMutableTupleData tup;
		char		data[SEGVEC_ALIAS_ITEMSZ_FILTERED(SEGVEC_FILTER_MAX_BYTES)];
	}			item;
	SegvecMutableTuple tup = &item.tup;
	Page		page = BufferGetPage(buf);
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(SegvecIndexFilterCount(index));
	uint64		docid;

	Assert(CritSectionCount > 0);
	docid = SegvecMakeDocId(SegvecPageGetOpaque(page)->seqno,
							SegvecPageGetOpaque(page)->next_docno++);

	memset(&item, 0, sizeof(item));
	tup->docid = docid;
	tup->key_hash = doc->key_hash;
	tup->checksum = doc->checksum;
	tup->heaptid = doc->heaptid;
	tup->flags = doc->flags | SEGVEC_DOC_ALIAS;
	tup->pieceno = 0;
	tup->npieces = 1;
	tup->nfloats = 0;
	memcpy((char *) tup + SEGVEC_MUTABLE_HDRSZ, &target, sizeof(uint64));
	if (fbytes > 0 && filters != NULL)
		memcpy((char *) tup + SEGVEC_ALIAS_ITEMSZ, filters, fbytes);

	*off = PageAddItem(page, (Item) tup, SEGVEC_ALIAS_ITEMSZ_FILTERED(fbytes),
					   InvalidOffsetNumber, false, false);
	if (*off == InvalidOffsetNumber)
		elog(PANIC, "failed to add item to segvec index \"%s\"",
			 RelationGetRelationName(index));
	return docid;
}

/*
 * SegvecMutableAppendAlias: append an alias (SegvecMutablePutAlias) to the
 * tail of the mutable segment in its own WAL record (two when it starts a
 * page).  Returns the alias's own doc id; *page_added as for
 * SegvecMutableAppend; *blkno the page it went to.  (An UPDATE appends the
 * alias and its keymap change in one record: KeymapAppendAlias.)
 */
uint64
SegvecMutableAppendAlias(Relation index, const SegvecDocInfo *doc,
						 uint64 target, const char *filters,
						 bool *page_added, BlockNumber *blkno)
{
	Buffer		buf = SegvecMutableLockAliasTail(index, page_added);
	OffsetNumber off;
	uint64		docid;
	bool		opaque = true;

	START_CRIT_SECTION();
	docid = SegvecMutablePutAlias(index, buf, doc, target, filters, &off);
	SegvecLogAppendedItems(index, 1, &buf, &off, &opaque);
	END_CRIT_SECTION();
	*blkno = BufferGetBlockNumber(buf);
	UnlockReleaseBuffer(buf);
	return docid;
}

static inline void tuple_doc(SegvecMutableTuple tup, SegvecDocInfo *doc);

/*
 * SegvecMutableReadAlias: if block blkno is (still) the live mutable page
 * that holds the alias with doc id docid, its identity into *doc and its
 * target into *target, and true; false otherwise (the page was frozen by a
 * compaction, unlinked, reused, or VACUUM removed the alias).  A page's
 * sequence number is in the doc ids of its docs and is never reused, so a
 * live mutable page with that sequence number is the alias's page.  One
 * share-locked page; blkno may be any block of the index or beyond it.
 * *nblocks is the index's size in blocks as last read (InvalidBlockNumber:
 * not read), updated when blkno is past it: the caller keeps it only while
 * it holds a lock on the index, under which the index never shrinks (VACUUM
 * truncates it only under an AccessExclusiveLock), so that one size serves
 * a whole statement instead of an lseek per row.
 */
bool
SegvecMutableReadAlias(Relation index, BlockNumber blkno, uint64 docid,
					   SegvecDocInfo *doc, uint64 *target,
					   BlockNumber *nblocks)
{
	Buffer		buf;
	Page		page;
	OffsetNumber off,
				maxoff;
	bool		found = false;

	if (blkno == SEGVEC_METAPAGE_BLKNO)
		return false;
	if (*nblocks == InvalidBlockNumber || blkno >= *nblocks)
		*nblocks = RelationGetNumberOfBlocks(index);
	if (blkno >= *nblocks)
		return false;
	buf = SegvecReadBufferHinted(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (!PageIsNew(page) && SegvecPageIsMutable(page) &&
		!SegvecPageIsDeleted(page) &&
		SegvecMakeDocId(SegvecPageGetOpaque(page)->seqno, 0) ==
		(docid & ~UINT64CONST(0xFFFF)))
	{
		OffsetNumber lo = FirstOffsetNumber;
		OffsetNumber hi;
		SegvecMutableTuple tup = NULL;

		/*
		 * A page's items are in doc id order (appended so; VACUUM's
		 * deletions keep the order): a binary search.
		 */
		maxoff = PageGetMaxOffsetNumber(page);
		hi = maxoff;
		while (lo <= hi)
		{
			ItemId		iid;
			SegvecMutableTuple t;

			off = lo + (hi - lo) / 2;
			iid = PageGetItemId(page, off);
			if (!ItemIdIsUsed(iid) ||
				ItemIdGetLength(iid) < SEGVEC_ALIAS_ITEMSZ)
				break;			/* cannot happen: not found */
			t = (SegvecMutableTuple) PageGetItem(page, iid);
			if (t->docid == docid)
			{
				tup = t;
				break;
			}
			if (t->docid < docid)
				lo = off + 1;
			else
				hi = off - 1;
		}
		if (tup != NULL && (tup->flags & SEGVEC_DOC_ALIAS))
		{
			tuple_doc(tup, doc);
			memcpy(target, (char *) tup + SEGVEC_MUTABLE_HDRSZ,
				   sizeof(uint64));
			found = true;
		}
	}
	UnlockReleaseBuffer(buf);
	return found;
}

/*
 * SegvecMutableCountDocs: how many docs (first pieces) the mutable segment
 * holds, counted page by page from the head without decoding vectors; with
 * limit >= 0 it stops once it has counted limit docs, so it reads at most
 * about that many docs' pages.  The page-based estimate the inserts use
 * can count pages VACUUM has unlinked, or a prefix a compaction is about
 * to install; this is the real count.  Takes only page share locks, one at
 * a time: the answer may be stale by the time it returns.
 */
int64
SegvecMutableCountDocs(Relation index, int64 limit)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	BlockNumber blkno;
	int64		n = 0;

	SegvecGetMetaInfo(index, info);
	blkno = info->mutable_head;
	pfree(info);
	while (blkno != InvalidBlockNumber && (limit < 0 || n < limit))
	{
		Buffer		buf;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		if (SegvecPageIsMutable(page) && !SegvecPageIsDeleted(page))
		{
			OffsetNumber off,
						maxoff = PageGetMaxOffsetNumber(page);

			for (off = FirstOffsetNumber; off <= maxoff; off++)
			{
				ItemId		iid = PageGetItemId(page, off);

				if (ItemIdIsUsed(iid) &&
					((SegvecMutableTuple) PageGetItem(page, iid))->pieceno == 0)
					n++;
			}
		}
		UnlockReleaseBuffer(buf);
	}
	return n;
}

/*
 * SegvecMutableChangeMark: a number that changes whenever a doc or an alias
 * is appended to the mutable segment: the tail page's sequence number, its
 * doc counter and its line pointer count.  Two equal marks some time apart
 * say that nothing was inserted in between (VACUUM removing items from the
 * tail may change it too, which only makes the index look busy).  Reads
 * the metapage and the tail page, share-locked one at a time; 0 (which
 * no mark is) if the tail moved under it.
 */
uint64
SegvecMutableChangeMark(Relation index)
{
	Buffer		buf = ReadBuffer(index, meta_mutable_tail(index));
	Page		page;
	uint64		mark = 0;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (SegvecPageIsMutable(page) && !SegvecPageIsDeleted(page))
	{
		SegvecPageOpaque opaque = SegvecPageGetOpaque(page);

		/* the top bit set: never 0 */
		mark = (UINT64CONST(1) << 63) | (opaque->seqno << 32) |
			((uint64) opaque->next_docno << 12) |
			(uint64) PageGetMaxOffsetNumber(page);
	}
	UnlockReleaseBuffer(buf);
	return mark;
}

/* the identity of the doc a piece belongs to */
static inline void
tuple_doc(SegvecMutableTuple tup, SegvecDocInfo *doc)
{
	doc->docid = tup->docid;
	doc->key_hash = tup->key_hash;
	doc->checksum = tup->checksum;
	doc->heaptid = tup->heaptid;
	doc->flags = tup->flags;
}

/*
 * SegvecMutableForEachDoc: call callback for every complete doc of the
 * mutable segment from page head up to (not including) page stop, or to the
 * end if stop is InvalidBlockNumber, in chain order.  Each page is copied
 * under a share lock that is released before the callbacks run.  Docs with
 * a missing piece (see SegvecMutableAppend) are skipped.
 *
 * Aliases are passed over (SegvecMutableForEachItem reports them).
 *
 * Pages marked deleted are read like the others: a scan that read the
 * manifest before a compaction's install must read the frozen prefix to
 * its end even after the compaction marked it deleted (the new segment is
 * not in its manifest); a page VACUUM unlinked holds no items.  None of
 * them is recycled while the caller's snapshot could still see it (see
 * "Recycling" in src/README.md); pages of other kinds (a page reused before
 * this walk began, which only a caller without a snapshot can meet) are
 * passed over.
 */
void
SegvecMutableForEachDoc(Relation index, BlockNumber head, BlockNumber stop,
						int dim, SegvecDocCallback callback, void *arg)
{
	walk_chain(index, head, stop, NULL, dim, callback, NULL, arg);
}

/*
 * SegvecMutableForEachItem: SegvecMutableForEachDoc that also calls
 * alias_callback (unless NULL) for every alias, in chain order with the
 * docs, with the alias's identity and its target's doc id.  Aliases are
 * resolved to vectors a level up (graph/alias.c: GraphMutableForEachDoc).
 */
void
SegvecMutableForEachItem(Relation index, BlockNumber head, BlockNumber stop,
						 int dim, SegvecDocCallback callback,
						 SegvecAliasCallback alias_callback, void *arg)
{
	walk_chain(index, head, stop, NULL, dim, callback, alias_callback, arg);
}

/*
 * SegvecMutableScanDocs: SegvecMutableForEachDoc over the whole mutable
 * segment that info (the caller's metapage read) describes, for scans.
 *
 * On a hot standby the pages of that chain may have been recycled and
 * reused by replay since info was read (see "Standbys" in src/README.md),
 * and a walk through a reused page would silently miss the rest of the
 * chain.  So there the walk checks each page: it must still be a mutable
 * page, and a live one must have a sequence number below the metapage's
 * next_seqno as read (a page appended since has a higher one, a reused page
 * too); the walk ends at info's tail page (what is appended after it
 * belongs to transactions the caller's snapshot cannot see), and must
 * reach it.  Any other page, or the end of the chain before the tail,
 * cancels the query with ERRCODE_T_R_SERIALIZATION_FAILURE.  On a primary
 * nothing is recycled under a snapshot and the walk is unchanged.
 */
void
SegvecMutableScanDocs(Relation index, const SegvecMetaInfo *info,
					  SegvecDocCallback callback, void *arg)
{
	SegvecMutableScanItems(index, info, callback, NULL, arg);
}

/*
 * SegvecMutableScanItems: SegvecMutableScanDocs that also reports aliases,
 * as SegvecMutableForEachItem does.
 */
void
SegvecMutableScanItems(Relation index, const SegvecMetaInfo *info,
					   SegvecDocCallback callback,
					   SegvecAliasCallback alias_callback, void *arg)
{
	ChainCheck	check;

	if (!RecoveryInProgress())
	{
		walk_chain(index, info->mutable_head, InvalidBlockNumber, NULL,
				   info->dimensions, callback, alias_callback, arg);
		return;
	}
	check.tail = info->mutable_tail;
	/* the metapage's next_seqno when info was read */
	check.seqno_limit = info->mutable_head_seqno + info->mutable_pages;
	walk_chain(index, info->mutable_head, InvalidBlockNumber, &check,
			   info->dimensions, callback, alias_callback, arg);
}

/* Cancel a standby query whose mutable chain was reused under it */
static void
chain_conflict(Relation index, BlockNumber blkno, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("canceling statement due to conflict with recovery"),
			 errdetail("Block %u of index \"%s\" %s while this query was reading the mutable segment.",
					   blkno, RelationGetRelationName(index), what),
			 errhint("Set hot_standby_feedback = on so that the primary keeps the pages that queries on this standby read.")));
}

/* bytes an item holds after its floats (its filter entry, and padding) */
static inline Size
item_filter_bytes(ItemId iid, SegvecMutableTuple tup)
{
	Size		used = SEGVEC_MUTABLE_HDRSZ + tup->nfloats * sizeof(float4);

	return ItemIdGetLength(iid) > used ? ItemIdGetLength(iid) - used : 0;
}

/* a buffer for a vector of dim floats and a filter entry of fbytes */
static inline Size
assembly_bytes(int dim, Size fbytes)
{
	return dim * sizeof(float4) + fbytes;
}

/*
 * The walk of SegvecMutableForEachDoc and SegvecMutableScanDocs; check
 * (standby scans only, else NULL) as SegvecMutableScanDocs says.
 */
static void
walk_chain(Relation index, BlockNumber head, BlockNumber stop,
		   const ChainCheck *check, int dim, SegvecDocCallback callback,
		   SegvecAliasCallback alias_callback, void *arg)
{
	PGAlignedBlock pagecopy;
	Page		page = (Page) pagecopy.data;
	SegvecDocInfo doc;
	float	   *assembly = NULL;
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(SegvecIndexFilterCount(index));
	uint64		cur_docid = 0;
	int			cur_next = -1;	/* next piece expected; -1: none */
	int			cur_done = 0;
	BlockNumber blkno = head;
	bool		reached_tail = false;

	while (blkno != InvalidBlockNumber && blkno != stop)
	{
		Buffer		buf;
		OffsetNumber off,
					maxoff;

		CHECK_FOR_INTERRUPTS();

		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		memcpy(page, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);

		if (check != NULL)
		{
			BlockNumber here = blkno;

			if (PageIsNew(page) || !SegvecPageIsMutable(page))
				chain_conflict(index, here, "was reused by the primary");
			if (!SegvecPageIsDeleted(page) &&
				SegvecPageGetOpaque(page)->seqno >= check->seqno_limit)
				chain_conflict(index, here, "was reused by the primary");
			if (here == check->tail && !SegvecPageIsDeleted(page))
			{
				reached_tail = true;
				stop = InvalidBlockNumber;
				blkno = InvalidBlockNumber; /* the last page to read */
			}
			else
				blkno = SegvecPageGetOpaque(page)->nextblkno;
		}
		else
			blkno = SegvecPageGetOpaque(page)->nextblkno;
		if (PageIsNew(page) || !SegvecPageIsMutable(page))
			continue;

		maxoff = PageGetMaxOffsetNumber(page);
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			ItemId		iid = PageGetItemId(page, off);
			SegvecMutableTuple tup;

			if (!ItemIdIsUsed(iid))
				continue;
			tup = (SegvecMutableTuple) PageGetItem(page, iid);

			if (tup->flags & SEGVEC_DOC_ALIAS)
			{
				cur_next = -1;
				if (alias_callback)
				{
					uint64		target;

					memcpy(&target, (char *) tup + SEGVEC_MUTABLE_HDRSZ,
						   sizeof(uint64));
					tuple_doc(tup, &doc);
					/* its own filter entry follows the target, or none */
					alias_callback(&doc, target,
								   fbytes > 0 &&
								   ItemIdGetLength(iid) >=
								   SEGVEC_ALIAS_ITEMSZ + fbytes ?
								   (const char *) tup + SEGVEC_ALIAS_ITEMSZ :
								   NULL, arg);
				}
				continue;
			}
			if (tup->npieces == 1)
			{
				cur_next = -1;
				tuple_doc(tup, &doc);
				if (tup->nfloats == dim)
				{
					const float *v = tup->data;

					/* the filter entry follows the floats, or zeros */
					if (fbytes > 0 && item_filter_bytes(iid, tup) < fbytes)
					{
						if (assembly == NULL)
							assembly = palloc(assembly_bytes(dim, fbytes));
						memcpy(assembly, tup->data, dim * sizeof(float4));
						memset(assembly + dim, 0, fbytes);
						v = assembly;
					}
					callback(&doc, v, dim, arg);
				}
				else if (alias_callback)
					alias_callback(&doc, SEGVEC_STALE_TARGET, NULL, arg);
				continue;
			}

			/* a piece of a doc that spans pages */
			if (tup->pieceno == 0)
			{
				cur_docid = tup->docid;
				cur_next = 0;
				cur_done = 0;
				if (assembly == NULL)
					assembly = palloc(assembly_bytes(dim, fbytes));
			}
			if (cur_next != tup->pieceno || cur_docid != tup->docid)
			{
				cur_next = -1;	/* out of sequence: drop the doc */
				continue;
			}
			/* past the dimension: a stale doc, whose pieces are counted */
			if (cur_done + tup->nfloats <= dim)
				memcpy(assembly + cur_done, tup->data,
					   tup->nfloats * sizeof(float4));
			cur_done += tup->nfloats;
			cur_next++;
			if (cur_next == tup->npieces)
			{
				tuple_doc(tup, &doc);
				if (cur_done == dim)
				{
					if (fbytes > 0)
					{
						if (item_filter_bytes(iid, tup) >= fbytes)
							memcpy(assembly + dim, tup->data + tup->nfloats,
								   fbytes);
						else
							memset(assembly + dim, 0, fbytes);
					}
					callback(&doc, assembly, dim, arg);
				}
				else if (alias_callback)
					alias_callback(&doc, SEGVEC_STALE_TARGET, NULL, arg);
				cur_next = -1;
			}
		}
	}

	if (check != NULL && !reached_tail)
		chain_conflict(index, check->tail,
					   "(the tail) was left behind by a chain the primary had changed");

	if (assembly)
		pfree(assembly);
}

/*
 * SegvecMutableBulkDelete: delete the pieces whose heap TID the callback
 * reports dead, and unlink the pages this empties.
 *
 * Walks the chain from the head coupling exclusive locks forward (the same
 * direction as appends, so no deadlock): the previous page stays locked
 * while the next is examined, so an emptied page can be unlinked from it.
 * The head and the tail are never unlinked.  An unlinked page keeps its
 * nextblkno, so a scan that was about to read it carries on to the right
 * page; it is marked deleted with the next FullTransactionId and recycled
 * by a later VACUUM once that is older than every snapshot.
 */
void
SegvecMutableBulkDelete(Relation index, IndexBulkDeleteResult *stats,
						IndexBulkDeleteCallback callback, void *callback_state,
						SegvecDocRemovedFn removed, void *removed_arg)
{
	SegvecMetaInfo info;
	Buffer		prevbuf = InvalidBuffer;
	BlockNumber blkno;

	SegvecGetMetaInfo(index, &info);
	blkno = info.mutable_head;

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;
		OffsetNumber off,
					maxoff;
		OffsetNumber deletable[MaxOffsetNumber];
		int			ndeletable = 0;
		BlockNumber next;

		SegvecVacuumDelayPoint();

		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);

		maxoff = PageGetMaxOffsetNumber(page);
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			SegvecMutableTuple tup;

			tup = (SegvecMutableTuple) PageGetItem(page,
												   PageGetItemId(page, off));
			if (callback(&tup->heaptid, callback_state))
			{
				deletable[ndeletable++] = off;
				if (tup->pieceno == 0)
				{
					stats->tuples_removed += 1;
					if (removed)
					{
						SegvecDocInfo doc;

						tuple_doc(tup, &doc);
						removed(index, &doc, removed_arg);
					}
				}
			}
			else if (tup->pieceno == 0)
				stats->num_index_tuples += 1;
		}

		if (ndeletable > 0)
		{
			GenericXLogState *state = GenericXLogStart(index);
			Page		wpage = GenericXLogRegisterBuffer(state, buf, 0);

			PageIndexMultiDelete(wpage, deletable, ndeletable);
			GenericXLogFinish(state);
		}

		next = SegvecPageGetOpaque(page)->nextblkno;

		if (PageGetMaxOffsetNumber(page) == 0 &&
			BufferIsValid(prevbuf) && next != InvalidBlockNumber)
		{
			/* unlink the emptied page: prev -> next, page marked deleted */
			GenericXLogState *state = GenericXLogStart(index);
			Page		wprev = GenericXLogRegisterBuffer(state, prevbuf, 0);
			Page		wpage = GenericXLogRegisterBuffer(state, buf, 0);

			SegvecPageGetOpaque(wprev)->nextblkno = next;
			SegvecPageSetDeleted(wpage,
								 U64FromFullTransactionId(ReadNextFullTransactionId()));
			GenericXLogFinish(state);

			stats->pages_newly_deleted++;
			stats->pages_deleted++;
			UnlockReleaseBuffer(buf);
		}
		else
		{
			if (BufferIsValid(prevbuf))
				UnlockReleaseBuffer(prevbuf);
			prevbuf = buf;
		}
		blkno = next;
	}

	if (BufferIsValid(prevbuf))
		UnlockReleaseBuffer(prevbuf);
}

/*-------------------------------------------------------------------------
 *
 * keymapchain.c
 *	  The keymap's change chains: appending a change to its bucket's chain,
 *	  reading a chain, and the chain cache (see keymap.c for the design).
 *
 * src/keymap/keymapchain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <xxhash.h>

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "lib/binaryheap.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "compat.h"
#include "hooks/testhooks.h"
#include "keymap/keymap.h"
#include "keymap/keymap_int.h"
#include "store/store.h"

/* ----------------
 * Changes
 * ----------------
 */

static BlockNumber
meta_delta_head(Relation index, int bucket)
{
	Buffer		metabuf = SegvecReadMetaBuffer(index);
	BlockNumber head;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	head = SegvecPageGetMeta(BufferGetPage(metabuf))->delta_head[bucket];
	UnlockReleaseBuffer(metabuf);
	return head;
}

/*
 * A new keymap change page, exclusively locked: from the free-extent list
 * when it has a reusable page (taken on meta, the writable copy of the
 * metapage in the caller's record, which the caller holds exclusively),
 * else from the free space map or the end of the relation.
 */
static Buffer
new_change_page(Relation index, SegvecMetaPage meta)
{
	BlockNumber blkno = SegvecFreePageTake(index, meta, false);

	if (blkno != InvalidBlockNumber)
		return SegvecLockFreePage(index, blkno);
	return SegvecNewBuffer(index);
}

/* Is page (locked) a live keymap change page? */
static bool
is_change_page(Page page)
{
	return !PageIsNew(page) &&
		SegvecPageGetOpaque(page)->page_id == SEGVEC_PAGE_ID &&
		(SegvecPageGetOpaque(page)->flags &
		 (SEGVEC_PAGE_KEYMAP_DELTA | SEGVEC_PAGE_DELETED)) ==
		SEGVEC_PAGE_KEYMAP_DELTA;
}

/*
 * Lock, exclusively, the head page of bucket's change chain (*headbuf) and
 * its last page (*lastbuf, the same buffer for a chain of one page), after
 * checking under the head's lock that the metapage still names it.
 * Returns false, holding nothing, when the bucket has no chain.  The head
 * names the last page (its opaque stamp, KEYMAP_CHAIN_LAST; 0 in chains of
 * older builds): so an append reads two pages, not the whole chain.  Only
 * appends extend a chain, each holding its head, and the one that adds a
 * page moves the pointer in the same record; a chain an older build
 * extended may name an earlier page: walk forward from it.
 */
static bool
lock_chain_end(Relation index, int bucket, Buffer *headbuf, Buffer *lastbuf)
{
	for (;;)
	{
		BlockNumber head = meta_delta_head(index, bucket);
		BlockNumber last;
		Buffer		buf;

		if (head == InvalidBlockNumber)
			return false;
		*headbuf = SegvecReadBufferHinted(index, head);
		LockBuffer(*headbuf, BUFFER_LOCK_EXCLUSIVE);
		if (meta_delta_head(index, bucket) != head)
		{
			/* a snapshot froze the chain meanwhile */
			UnlockReleaseBuffer(*headbuf);
			continue;
		}

		buf = *headbuf;
		last = KEYMAP_CHAIN_LAST(BufferGetPage(*headbuf));
		if (last != 0 && last != head &&
			SegvecPageGetOpaque(BufferGetPage(*headbuf))->nextblkno !=
			InvalidBlockNumber)
		{
			buf = SegvecReadBufferHinted(index, last);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			if (!is_change_page(BufferGetPage(buf)))
			{
				/* cannot happen: the head's chain is live; walk instead */
				UnlockReleaseBuffer(buf);
				buf = *headbuf;
			}
		}

		/* to the last page, keeping the head locked */
		while (SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno != InvalidBlockNumber)
		{
			Buffer		next = SegvecReadBufferHinted(index,
										  SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno);

			LockBuffer(next, BUFFER_LOCK_EXCLUSIVE);
			if (buf != *headbuf)
				UnlockReleaseBuffer(buf);
			buf = next;
		}
		*lastbuf = buf;
		return true;
	}
}

/* Release what lock_chain_end locked */
static void
unlock_chain_end(Buffer headbuf, Buffer lastbuf)
{
	if (lastbuf != headbuf)
		UnlockReleaseBuffer(lastbuf);
	UnlockReleaseBuffer(headbuf);
}

/*
 * Append a change to its bucket's delta chain: one record on the chain's
 * last page, or, when it is full, one record adding a page (last page, new
 * page, metapage, and the head, which names the new last page).
 */
static void
delta_append(Relation index, const KeymapDelta *rec)
{
	int			bucket = KEYMAP_BUCKET(rec->entry.key_hash);

	for (;;)
	{
		Buffer		headbuf,
					buf;
		GenericXLogState *state;
		Page		page;

		if (!lock_chain_end(index, bucket, &headbuf, &buf))
		{
			/* first change of the bucket since the snapshot: a chain */
			Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
			SegvecMetaPage meta;
			Buffer		newbuf;

			LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
			if (SegvecPageGetMeta(BufferGetPage(metabuf))->delta_head[bucket] !=
				InvalidBlockNumber)
			{
				UnlockReleaseBuffer(metabuf);
				continue;
			}
			/*
			 * An unused page, from the free-extent list (taken in this
			 * record) or the free space map: nobody else can lock it, so
			 * no deadlock.
			 */
			state = GenericXLogStart(index);
			meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
			newbuf = new_change_page(index, meta);
			page = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
			SegvecInitPage(page, SEGVEC_PAGE_KEYMAP_DELTA);
			SegvecPageGetOpaque(page)->seqno =
				KEYMAP_CHAIN_ID(BufferGetBlockNumber(newbuf), meta->keymap_epoch);
			if (PageAddItem(page, (Item) rec, sizeof(KeymapDelta),
							InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
				elog(ERROR, "failed to add keymap change");
			meta->delta_head[bucket] = BufferGetBlockNumber(newbuf);
			GenericXLogFinish(state);
			UnlockReleaseBuffer(newbuf);
			UnlockReleaseBuffer(metabuf);
			return;
		}

		if (PageGetFreeSpace(BufferGetPage(buf)) >= MAXALIGN(sizeof(KeymapDelta)))
		{
			OffsetNumber off;
			bool		no_opaque = false;

			START_CRIT_SECTION();
			off = PageAddItem(BufferGetPage(buf), (Item) rec,
							  sizeof(KeymapDelta), InvalidOffsetNumber,
							  false, false);
			if (off == InvalidOffsetNumber)
				elog(PANIC, "failed to add keymap change");
			SegvecLogAppendedItems(index, 1, &buf, &off, &no_opaque);
			END_CRIT_SECTION();
		}
		else
		{
			/* lock order: change pages, then the metapage */
			Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
			Buffer		newbuf;
			Page		last;
			Page		headpage;

			LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
			state = GenericXLogStart(index);
			newbuf = new_change_page(index,
									 SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0)));
			last = GenericXLogRegisterBuffer(state, buf, 0);
			headpage = buf == headbuf ? last :
				GenericXLogRegisterBuffer(state, headbuf, 0);
			page = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
			SegvecInitPage(page, SEGVEC_PAGE_KEYMAP_DELTA);
			/* the chain's identity, as its head carries it */
			SegvecPageGetOpaque(page)->seqno = SegvecPageGetOpaque(headpage)->seqno;
			if (PageAddItem(page, (Item) rec, sizeof(KeymapDelta),
							InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
				elog(ERROR, "failed to add keymap change");
			SegvecPageGetOpaque(last)->nextblkno = BufferGetBlockNumber(newbuf);
			KEYMAP_CHAIN_LAST(headpage) = BufferGetBlockNumber(newbuf);
			GenericXLogFinish(state);
			UnlockReleaseBuffer(newbuf);
			UnlockReleaseBuffer(metabuf);
		}
		unlock_chain_end(headbuf, buf);
		return;
	}
}

/*
 * KeymapAppendAlias: append an alias of target for doc (an UPDATE that
 * kept the row's id and vector, see "Aliases" in src/README.md) to the
 * mutable segment, and its keymap add (naming the alias's page, as
 * KeymapAddDocAt), in ONE WAL record on the mutable tail page and the last
 * page of the key's change chain when both have room; else the alias and
 * then its change in records of their own (a new mutable page, a new
 * change page or chain).  Lock order: mutable tail, change chain head and
 * last page, metapage (read).  Sets doc->docid to the alias's own doc id;
 * *page_added as for SegvecMutableAppend.  doc carries an id key; filters
 * is the alias's own filter entry (SegvecMutablePutAlias).
 */
void
KeymapAppendAlias(Relation index, SegvecDocInfo *doc, uint64 target,
				  const char *filters, bool *page_added)
{
	Buffer		bufs[2];
	OffsetNumber offs[2];
	Buffer		headbuf;
	KeymapDelta rec;
	bool		opaque[2] = {true, false};	/* the alias's page's next_docno */

	Assert(doc->flags & SEGVEC_DOC_HAS_KEY);
	bufs[0] = SegvecMutableLockAliasTail(index, page_added);
	memset(&rec, 0, sizeof(rec));
	rec.op = KEYMAP_OP_ADD;
	rec.doc_blkno = BufferGetBlockNumber(bufs[0]);

	if (lock_chain_end(index, KEYMAP_BUCKET(doc->key_hash), &headbuf,
					   &bufs[1]))
	{
		if (PageGetFreeSpace(BufferGetPage(bufs[1])) >=
			MAXALIGN(sizeof(KeymapDelta)))
		{
			START_CRIT_SECTION();
			doc->docid = SegvecMutablePutAlias(index, bufs[0], doc, target,
											   filters, &offs[0]);
			KeymapEntryOfDoc(doc, &rec.entry);
			offs[1] = PageAddItem(BufferGetPage(bufs[1]), (Item) &rec,
								  sizeof(KeymapDelta), InvalidOffsetNumber,
								  false, false);
			if (offs[1] == InvalidOffsetNumber)
				elog(PANIC, "failed to add keymap change");
			SegvecLogAppendedItems(index, 2, bufs, offs, opaque);
			END_CRIT_SECTION();
			unlock_chain_end(headbuf, bufs[1]);
			UnlockReleaseBuffer(bufs[0]);
			return;
		}
		unlock_chain_end(headbuf, bufs[1]);
	}

	/* the alias, then (never an entry without its doc) its change */
	START_CRIT_SECTION();
	doc->docid = SegvecMutablePutAlias(index, bufs[0], doc, target, filters,
									   &offs[0]);
	SegvecLogAppendedItems(index, 1, bufs, offs, opaque);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(bufs[0]);
	KeymapEntryOfDoc(doc, &rec.entry);
	delta_append(index, &rec);
}

/*
 * KeymapAppendDoc: append a doc (its identity from *doc, its vector of dim
 * floats and filter entry filters, as SegvecMutableDocBegin takes them) to
 * the mutable segment, and, when it carries an id key, its keymap add; the
 * add goes in ONE WAL record with the doc's last piece when that piece goes
 * on the tail page (not a new one) and the last page of the key's change
 * chain has room; else in a record of its own after the doc's (as
 * KeymapAddDoc).  Lock order: mutable tail, change chain head and last
 * page, metapage (read).  Sets doc->docid; *page_added as for
 * SegvecMutableDocEnd.
 */
void
KeymapAppendDoc(Relation index, SegvecDocInfo *doc, const float *vector,
				int dim, const char *filters, bool *page_added)
{
	SegvecDocAppend da;
	Buffer		bufs[2];
	OffsetNumber offs[2];
	bool		opaque[2] = {false, false};
	Buffer		headbuf;
	KeymapDelta rec;

	SegvecMutableDocBegin(index, &da, doc, vector, dim, filters);
	if (!(doc->flags & SEGVEC_DOC_HAS_KEY))
	{
		doc->docid = SegvecMutableDocEnd(&da, page_added);
		return;
	}

	memset(&rec, 0, sizeof(rec));
	rec.op = KEYMAP_OP_ADD;
	if (!da.written &&
		lock_chain_end(index, KEYMAP_BUCKET(doc->key_hash), &headbuf,
					   &bufs[1]))
	{
		if (PageGetFreeSpace(BufferGetPage(bufs[1])) >=
			MAXALIGN(sizeof(KeymapDelta)))
		{
			bufs[0] = da.buf;
			START_CRIT_SECTION();
			SegvecMutablePutLast(&da, &offs[0], &opaque[0]);
			doc->docid = da.docid;
			KeymapEntryOfDoc(doc, &rec.entry);
			offs[1] = PageAddItem(BufferGetPage(bufs[1]), (Item) &rec,
								  sizeof(KeymapDelta), InvalidOffsetNumber,
								  false, false);
			if (offs[1] == InvalidOffsetNumber)
				elog(PANIC, "failed to add keymap change");
			SegvecLogAppendedItems(index, 2, bufs, offs, opaque);
			END_CRIT_SECTION();
			unlock_chain_end(headbuf, bufs[1]);
			(void) SegvecMutableDocEnd(&da, page_added);
			return;
		}
		unlock_chain_end(headbuf, bufs[1]);
	}

	/* the doc, then (never an entry without its doc) its change */
	doc->docid = SegvecMutableDocEnd(&da, page_added);
	KeymapEntryOfDoc(doc, &rec.entry);
	delta_append(index, &rec);
}

/*
 * KeymapAdd: record that the doc entry->docid has key entry->key_hash and
 * vector checksum entry->checksum.  Called after the doc is stored.
 */
void
KeymapAdd(Relation index, const KeymapEntry *entry)
{
	KeymapDelta rec;

	memset(&rec, 0, sizeof(rec));
	rec.entry = *entry;
	rec.op = KEYMAP_OP_ADD;
	delta_append(index, &rec);
}

/*
 * KeymapAddDocAt: KeymapAddDoc for an alias just appended to the mutable
 * page doc_blkno; the change records the page, so that KeymapLookupAt can
 * tell an UPDATE where the row's current alias is (see "Aliases" in
 * src/README.md).  Nothing else reads it.
 */
void
KeymapAddDocAt(Relation index, const SegvecDocInfo *doc,
			   BlockNumber doc_blkno)
{
	KeymapDelta rec;

	if (!(doc->flags & SEGVEC_DOC_HAS_KEY))
		return;
	memset(&rec, 0, sizeof(rec));
	KeymapEntryOfDoc(doc, &rec.entry);
	rec.op = KEYMAP_OP_ADD;
	rec.doc_blkno = doc_blkno;
	delta_append(index, &rec);
}

/*
 * KeymapRemove: drop the entry of doc entry->docid.  Called before the doc
 * is removed.
 */
void
KeymapRemove(Relation index, const KeymapEntry *entry)
{
	KeymapDelta rec;

	memset(&rec, 0, sizeof(rec));
	rec.entry = *entry;
	rec.op = KEYMAP_OP_REMOVE;
	delta_append(index, &rec);
}

/*
 * KeymapEntryOfDoc: the keymap entry of a doc (key hash, doc id, checksum).
 */
void
KeymapEntryOfDoc(const SegvecDocInfo *doc, KeymapEntry *entry)
{
	entry->key_hash = doc->key_hash;
	entry->docid = doc->docid;
	entry->checksum = doc->checksum;
}

/*
 * KeymapAddDoc, KeymapRemoveDoc: KeymapAdd / KeymapRemove for a doc, when
 * it carries an id key (SEGVEC_DOC_HAS_KEY); no-ops otherwise.  Add after
 * the doc is stored, remove before it goes: never an entry without a doc.
 */
void
KeymapAddDoc(Relation index, const SegvecDocInfo *doc)
{
	KeymapEntry entry;

	if (!(doc->flags & SEGVEC_DOC_HAS_KEY))
		return;
	KeymapEntryOfDoc(doc, &entry);
	KeymapAdd(index, &entry);
}

void
KeymapRemoveDoc(Relation index, const SegvecDocInfo *doc)
{
	KeymapEntry entry;

	if (!(doc->flags & SEGVEC_DOC_HAS_KEY))
		return;
	KeymapEntryOfDoc(doc, &entry);
	KeymapRemove(index, &entry);
}

/*
 * Error unless page (share locked) is a page of the keymap change chain
 * whose head is head, as a directory of keymap epoch epoch names it.  A
 * change chain a reader found in the directory is reused only once no
 * snapshot that could have read that directory is left, but a hot
 * standby's queries do not hold the primary's horizon back: there the
 * query is cancelled like a recovery conflict (as for run pages).
 */
static void
check_change_page(Relation index, Page page, BlockNumber blkno,
				  BlockNumber head, uint32 epoch)
{
	SegvecPageOpaque opaque = SegvecPageGetOpaque(page);

	/*
	 * A page marked deleted (its seqno now the xid it was freed at) is not
	 * reused yet: its items are the chain's still.
	 */
	if (!PageIsNew(page) &&
		opaque->page_id == SEGVEC_PAGE_ID &&
		(opaque->flags & SEGVEC_PAGE_KEYMAP_DELTA) != 0 &&
		((opaque->flags & SEGVEC_PAGE_DELETED) != 0 ||
		 opaque->seqno == 0 ||
		 ((BlockNumber) opaque->seqno == head &&
		  (int32) (epoch - (uint32) (opaque->seqno >> 32)) >= 0)))
		return;
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("canceling statement due to conflict with recovery"),
				 errdetail("Block %u of index \"%s\" was reused by the primary while this query was reading keymap changes on it.",
						   blkno, RelationGetRelationName(index)),
				 errhint("Set hot_standby_feedback = on so that the primary keeps the pages that queries on this standby read.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("segvec index \"%s\": block %u is not a keymap change page",
					RelationGetRelationName(index), blkno)));
}

/*
 * Append a delta chain's changes, in chain order, to out (a remove as an
 * entry with KEYMAP_DOCID_REMOVED), optionally only those of one key;
 * counts its items into *nchanges.
 */
static void read_chain_at(Relation index, BlockNumber blkno, uint32 epoch,
						  bool onekey, uint64 key, EntryArray *out,
						  uint32 *nchanges, KeymapDocLocation *loc);

void
KmReadChain(Relation index, BlockNumber blkno, uint32 epoch, bool onekey,
		   uint64 key, EntryArray *out, uint32 *nchanges)
{
	read_chain_at(index, blkno, epoch, onekey, key, out, nchanges, NULL);
}

/*
 * KmReadChain with loc: for onekey, *loc is also set to each add of the key
 * that names its doc's page, in chain order (so the newest wins).
 */
static void
read_chain_at(Relation index, BlockNumber blkno, uint32 epoch, bool onekey,
			  uint64 key, EntryArray *out, uint32 *nchanges,
			  KeymapDocLocation *loc)
{
	BlockNumber head = blkno;

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;
		OffsetNumber off,
					maxoff;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		check_change_page(index, page, blkno, head, epoch);
		maxoff = PageGetMaxOffsetNumber(page);
		if (nchanges)
			*nchanges += maxoff;
		for (off = FirstOffsetNumber; out && off <= maxoff; off++)
		{
			KeymapDelta *rec = (KeymapDelta *) PageGetItem(page,
														   PageGetItemId(page, off));
			KeymapEntry e = rec->entry;

			if (onekey && e.key_hash != key)
				continue;
			if (rec->op == KEYMAP_OP_REMOVE)
			{
				if (loc && loc->docid == e.docid)
					memset(loc, 0, sizeof(KeymapDocLocation));
				e.docid |= KEYMAP_DOCID_REMOVED;
			}
			else if (loc && onekey && rec->doc_blkno != 0 &&
					 rec->doc_blkno != InvalidBlockNumber)
			{
				loc->docid = e.docid;
				loc->doc_blkno = rec->doc_blkno;
			}
			KmArrayAdd(out, &e);
		}
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		UnlockReleaseBuffer(buf);
	}
}

/* ----------------
 * The chain cache: a backend's copy of the change chains it looked keys up in
 * ----------------
 *
 * A lookup needs the changes of one key, but a chain's items are in the
 * order they were made: reading them all made each UPDATE's lookup cost
 * the whole chain (all changes of the bucket since the last snapshot).  So
 * each backend keeps, per chain it has read, the items in memory with an
 * index by key hash, and the place it has read up to (a page and its item
 * count); a lookup then reads only what was appended since: the chain's
 * last page, under a share lock, and any page after it.  That is correct
 * because a chain only grows at its end (items are never changed or
 * removed from a change page while the chain is named by the metapage) and
 * a chain is identified by (relfilenode, keymap_build, head block,
 * keymap_epoch): its head block is freed only by the install of a snapshot
 * that folded it, which increments keymap_epoch, so a later chain with the
 * same head block has a larger epoch; an in-place rebuild of the index
 * (TRUNCATE twice in one transaction) starts the epoch over under the same
 * relfilenode, but with a new keymap_build.  Memory: 40 bytes per change, at most
 * CHAIN_CACHE_MAX_ITEMS per chain (past that the chain is read as before)
 * and CHAIN_CACHE_MAX_CHAINS chains (then the cache is emptied).
 */
#define CHAIN_CACHE_MAX_ITEMS	(1 << 20)
#define CHAIN_CACHE_MAX_CHAINS	256

typedef struct ChainCacheKey
{
	SegvecRelFileId node;
	uint32		build;
	BlockNumber head;
	uint32		epoch;
} ChainCacheKey;

typedef struct ChainCacheItem
{
	KeymapEntry entry;			/* a remove: docid | KEYMAP_DOCID_REMOVED */
	BlockNumber doc_blkno;
	int32		prev;			/* the key's previous item, or -1 */
} ChainCacheItem;

typedef struct ChainKeySlot
{
	uint64		key_hash;		/* hash key */
	int32		newest;			/* the key's newest item */
	char		status;			/* simplehash's */
} ChainKeySlot;

/*
 * The index by key hash: a simplehash table (an open-addressing table
 * inlined here: a dynahash lookup was a tenth of an aliased UPDATE's
 * lookup).  Key hashes are XXH3 values already, so their low bits are the
 * table's hash.
 */
#define SH_PREFIX		chainkeys
#define SH_ELEMENT_TYPE	ChainKeySlot
#define SH_KEY_TYPE		uint64
#define SH_KEY			key_hash
#define SH_HASH_KEY(tb, key)	((uint32) ((key) ^ ((key) >> 32)))
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct ChainCache
{
	ChainCacheKey key;			/* hash key, first */
	bool		valid;			/* false while (or if an error left it) half read */
	bool		toobig;			/* past CHAIN_CACHE_MAX_ITEMS: not cached */
	BlockNumber last;			/* the last page read */
	OffsetNumber nread;			/* its items read */
	int32		nitems;
	int32		maxitems;
	ChainCacheItem *items;
	chainkeys_hash *bykey;		/* key hash -> ChainKeySlot */
} ChainCache;

static MemoryContext chain_cache_cxt = NULL;
static HTAB *chain_cache = NULL;

/*
 * The cache entry of the chain with head block head (valid, caught up with
 * the chain's end), or NULL when the chain is too big to cache.  Reads each
 * page from the last one read under a share lock.
 */
static ChainCache *
chain_cache_sync(Relation index, const KeymapDir *dir, BlockNumber head)
{
	ChainCacheKey key;
	ChainCache *c;
	bool		found;
	BlockNumber blkno;

	if (chain_cache == NULL ||
		hash_get_num_entries(chain_cache) >= CHAIN_CACHE_MAX_CHAINS)
	{
		HASHCTL		ctl;

		chain_cache = NULL;
		if (chain_cache_cxt == NULL)
			chain_cache_cxt = AllocSetContextCreate(TopMemoryContext,
													"segvec keymap chain cache",
													ALLOCSET_DEFAULT_SIZES);
		else
			MemoryContextReset(chain_cache_cxt);
		ctl.keysize = sizeof(ChainCacheKey);
		ctl.entrysize = sizeof(ChainCache);
		ctl.hcxt = chain_cache_cxt;
		chain_cache = hash_create("segvec keymap chains", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	memset(&key, 0, sizeof(key));
	key.node = SegvecRelFileIdOf(index);
	key.build = dir->build;
	key.head = head;
	key.epoch = dir->epoch;
	c = hash_search(chain_cache, &key, HASH_ENTER, &found);
	if (!found)
	{
		/* so that an error below leaves an entry that is started over */
		c->valid = false;
		c->toobig = false;
		c->items = NULL;
		c->bykey = NULL;
	}
	if (c->toobig)
		return NULL;
	if (!c->valid)
	{
		/* new, or an error left it half read: start over */
		if (c->bykey)
			chainkeys_destroy(c->bykey);
		if (c->items)
			pfree(c->items);
		c->bykey = NULL;
		c->items = NULL;
		c->last = head;
		c->nread = 0;
		c->nitems = 0;
		c->maxitems = 64;
		c->items = MemoryContextAlloc(chain_cache_cxt,
									  sizeof(ChainCacheItem) * c->maxitems);
		c->bykey = chainkeys_create(chain_cache_cxt, 64, NULL);
	}
	c->valid = false;

	blkno = c->last;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = SegvecReadBufferHinted(index, blkno);
		Page		page;
		OffsetNumber off,
					maxoff;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		check_change_page(index, page, blkno, head, dir->epoch);
		maxoff = PageGetMaxOffsetNumber(page);
		off = blkno == c->last ? c->nread + 1 : FirstOffsetNumber;
		if (c->nitems + (maxoff - off + 1) > CHAIN_CACHE_MAX_ITEMS)
		{
			UnlockReleaseBuffer(buf);
			chainkeys_destroy(c->bykey);
			pfree(c->items);
			c->bykey = NULL;
			c->items = NULL;
			c->toobig = true;
			c->valid = true;
			return NULL;
		}
		for (; off <= maxoff; off++)
		{
			KeymapDelta *rec = (KeymapDelta *) PageGetItem(page,
														   PageGetItemId(page, off));
			ChainCacheItem *it;
			ChainKeySlot *slot;
			bool		kfound;

			if (c->nitems >= c->maxitems)
			{
				c->maxitems *= 2;
				c->items = repalloc(c->items,
									sizeof(ChainCacheItem) * c->maxitems);
			}
			it = &c->items[c->nitems];
			it->entry = rec->entry;
			if (rec->op == KEYMAP_OP_REMOVE)
				it->entry.docid |= KEYMAP_DOCID_REMOVED;
			it->doc_blkno = rec->doc_blkno;
			slot = chainkeys_insert(c->bykey, rec->entry.key_hash, &kfound);
			it->prev = kfound ? slot->newest : -1;
			slot->newest = c->nitems++;
		}
		c->last = blkno;
		c->nread = maxoff;
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		UnlockReleaseBuffer(buf);
	}
	c->valid = true;
	return c;
}

/*
 * read_chain_at for one key, through the chain cache: the key's changes in
 * chain order appended to out, *loc as read_chain_at sets it.
 */
void
KmReadChainKey(Relation index, const KeymapDir *dir, BlockNumber head,
			   uint64 key, EntryArray *out, KeymapDocLocation *loc)
{
	ChainCache *c;
	ChainKeySlot *slot;
	int32		i,
				j;
	int32		n = 0;
	int32		few[8];
	int32	   *order;

	if (head == InvalidBlockNumber)
		return;
	c = chain_cache_sync(index, dir, head);
	if (c == NULL)
	{
		read_chain_at(index, head, dir->epoch, true, key, out, NULL, loc);
		return;
	}
	slot = chainkeys_lookup(c->bykey, key);
	if (slot == NULL)
		return;
	for (i = slot->newest; i >= 0; i = c->items[i].prev)
		n++;
	order = n <= lengthof(few) ? few : palloc(sizeof(int32) * n);
	j = n;
	for (i = slot->newest; i >= 0; i = c->items[i].prev)
		order[--j] = i;
	for (i = 0; i < n; i++)
	{
		ChainCacheItem *it = &c->items[order[i]];
		KeymapEntry e = it->entry;

		if (e.docid & KEYMAP_DOCID_REMOVED)
		{
			if (loc && loc->docid == (e.docid & ~KEYMAP_DOCID_REMOVED))
				memset(loc, 0, sizeof(KeymapDocLocation));
		}
		else if (loc && it->doc_blkno != 0 &&
				 it->doc_blkno != InvalidBlockNumber)
		{
			loc->docid = e.docid;
			loc->doc_blkno = it->doc_blkno;
		}
		KmArrayAdd(out, &e);
	}
	if (order != few)
		pfree(order);
}

/*
 * What KmReadChainKey's *loc would end as after reading the key's changes
 * in both chains (chains[0], the head chain, is the newer one; chains[1]
 * the frozen one), found through the chain cache from the newest change
 * back: the newest add that names its doc's page decides, unless a newer
 * remove of the same doc id cleared it (loc->docid 0).  So it reads only
 * the changes since the key's last located add, not all its changes (a
 * row updated many times since the last snapshot has two per UPDATE and
 * VACUUM).  Returns false when it cannot tell (a chain too big to cache,
 * many removes on the way): then the caller reads the chains.  *any says
 * whether the chains hold any change of the key (valid when it returns
 * true).
 */
bool
KmChainsKeyLoc(Relation index, const KeymapDir *dir, const BlockNumber *chains,
			   uint64 key, KeymapDocLocation *loc, bool *any)
{
	uint64		removed[16];
	int			nremoved = 0;
	int			k;

	memset(loc, 0, sizeof(KeymapDocLocation));
	*any = false;
	for (k = 0; k < 2; k++)
	{
		ChainCache *c;
		ChainKeySlot *slot;
		int32		i;

		if (chains[k] == InvalidBlockNumber)
			continue;
		c = chain_cache_sync(index, dir, chains[k]);
		if (c == NULL)
			return false;
		slot = chainkeys_lookup(c->bykey, key);
		if (slot == NULL)
			continue;
		*any = true;
		for (i = slot->newest; i >= 0; i = c->items[i].prev)
		{
			ChainCacheItem *it = &c->items[i];
			uint64		docid = it->entry.docid;
			int			j;

			if (docid & KEYMAP_DOCID_REMOVED)
			{
				if (nremoved >= (int) lengthof(removed))
					return false;
				removed[nremoved++] = docid & ~KEYMAP_DOCID_REMOVED;
				continue;
			}
			if (it->doc_blkno == 0 || it->doc_blkno == InvalidBlockNumber)
				continue;
			/* the newest located add: current unless removed since */
			for (j = 0; j < nremoved; j++)
				if (removed[j] == docid)
					return true;
			loc->docid = docid;
			loc->doc_blkno = it->doc_blkno;
			return true;
		}
	}
	return true;
}

/*-------------------------------------------------------------------------
 *
 * keymap.c
 *	  The keymap of an index with an id key: key_hash -> (doc id, vector
 *	  checksum), as a few sorted runs plus the changes since, in 16
 *	  bucket chains.
 *
 * An entry is added when a doc is appended (after the doc, in its own WAL
 * record) and removed by VACUUM before the doc is (in its own WAL record),
 * so a crash can leave a doc without an entry, which ft.verify reports and
 * repairs, but never an entry without its doc.  Compaction keeps doc ids,
 * so it never touches the keymap.  A key may have several entries (older
 * row versions not yet vacuumed, or another id with the same hash): a
 * lookup returns them all and the caller checks the heap.
 *
 * Changes go to the bucket's delta chain: the head page is found in the
 * metapage (delta_head[b]) and stays exclusively locked while a change is
 * appended, after checking under it that the metapage still names it; the
 * head names the chain's last page, where the change goes.  An aliased
 * UPDATE's alias and keymap add are one WAL record (KeymapAppendAlias).
 * Lookups read the chains through a per-backend cache ("The chain
 * cache", below), so a lookup reads only the changes made since the last.
 *
 * The snapshot is a list of runs, oldest first, in the metapage.  A run is
 * an extent of entries sorted by (key hash, doc id) over all buckets, with
 * at most one entry per doc id: an add, or a remove (KEYMAP_DOCID_REMOVED)
 * that cancels the doc's entry in an older run.  For a doc id the newest
 * change wins: head chain, frozen chain, then the runs newest first.
 *
 * A snapshot (SegvecKeymapSnapshot), under the compaction lock:
 *	1. freezes the delta chains: delta_frozen[b] = delta_head[b],
 *	   delta_head[b] = invalid, in one metapage record; then takes and
 *	   drops each frozen head's lock, so appends that began before the
 *	   freeze have finished;
 *	2. folds the frozen changes (the last change of each doc id) into one
 *	   sorted run, written to a new extent (best fit from the free-extent
 *	   list; full-page WAL images): its cost follows the number of changes,
 *	   not the size of the keymap;
 *	3. installs, in one metapage record, the new run at the newest end of
 *	   the list and clears delta_frozen[] (every older run is shared);
 *	   and, in the same record, puts the frozen chains' pages on the
 *	   free-extent list, to be reused once no scan can still read them
 *	   (marked deleted instead if the list is full);
 *	4. merges runs by the tiered policy, each merge installed by one
 *	   metapage record that replaces its inputs (contiguous in age) by the
 *	   merged run and puts their extents on the free-extent list.
 *
 * Tiered policy: a run's tier is floor(log4(pages)).  The newest four runs
 * of one tier are merged, and so is a newest run that outgrew the run
 * before it; so tiers never increase from the oldest run to the newest and
 * no tier holds more than three runs: a keymap of P pages has at most
 * 3 * (floor(log4(P)) + 1) runs (15 for 200,000 entries), and never more
 * than SEGVEC_KEYMAP_MAX_RUNS (the newest two are merged first).  Each
 * entry is rewritten once per tier, as in an LSM tree.  A merge streams:
 * one page of each input in memory, a pass to count, a pass to write.  It
 * drops removes only when the oldest run takes part.
 *
 * A lookup reads the bucket's chains and, per run, a binary search over
 * its pages by their first keys: O(log pages) page reads per run.  Run
 * pages never change after install and are read with a pin only; each
 * carries its run's number and stamp (KeymapRunStamp), checked by every
 * read, so that a standby query whose run was reused by the primary is
 * cancelled (40001) rather than answered from another page.
 *
 * src/keymap/keymap.c
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
#include "store/store.h"

/* ----------------
 * Keys and checksums
 * ----------------
 */

/*
 * SegvecIndexHasKey: does the index carry an id key (an INCLUDE column)?
 */
bool
SegvecIndexHasKey(Relation index)
{
	return IndexRelationGetNumberOfAttributes(index) > 1;
}

/*
 * SegvecKeyHash: XXH3-64 of the id value's binary (send) form.
 */
uint64
SegvecKeyHash(Relation index, Datum value)
{
	FmgrInfo   *send = SegvecKeySendProc(index);
	bytea	   *bin = SendFunctionCall(send, value);
	uint64		hash = SegvecKeyHashBytes(bin);

	pfree(bin);
	return hash;
}

/*
 * SegvecKeyHashBytes: XXH3-64 of an id's send form (a bytea).
 */
uint64
SegvecKeyHashBytes(bytea *bin)
{
	return XXH3_64bits(VARDATA(bin), VARSIZE(bin) - VARHDRSZ);
}

/*
 * SegvecVectorChecksum: XXH3-64 of the vector's float4 bytes.
 */
uint64
SegvecVectorChecksum(const float *vector, int dim)
{
	return XXH3_64bits(vector, sizeof(float) * dim);
}

static int
entry_cmp(const void *a, const void *b)
{
	const KeymapEntry *ea = (const KeymapEntry *) a;
	const KeymapEntry *eb = (const KeymapEntry *) b;

	if (ea->key_hash != eb->key_hash)
		return ea->key_hash < eb->key_hash ? -1 : 1;
	if (ea->docid != eb->docid)
		return ea->docid < eb->docid ? -1 : 1;
	return 0;
}

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
	BlockNumber blkno = SegvecFreePageTake(meta);

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
 * *page_added as for SegvecMutableAppend.  doc carries an id key.
 */
void
KeymapAppendAlias(Relation index, SegvecDocInfo *doc, uint64 target,
				  bool *page_added)
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
											   &offs[0]);
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
	doc->docid = SegvecMutablePutAlias(index, bufs[0], doc, target, &offs[0]);
	SegvecLogAppendedItems(index, 1, bufs, offs, opaque);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(bufs[0]);
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

/* ----------------
 * Runs: stamps and page reads
 * ----------------
 */

/*
 * KeymapRunStamp: the stamp of run's pages, from its identity (run number
 * and size); never 0.  A page of a reused extent carries another kind or
 * another stamp.
 */
uint32
KeymapRunStamp(const SegvecKeymapRun *run)
{
	uint64		key[2];
	uint32		h;

	key[0] = run->runno;
	key[1] = run->nentries;
	h = (uint32) XXH3_64bits(key, sizeof(key));
	return h != 0 ? h : 1;
}

/*
 * Error unless page is page p of run.  On a hot standby the primary may
 * have reused the run's extent (its horizon ignores standby queries unless
 * hot_standby_feedback is on): the query is cancelled like a recovery
 * conflict, as segment pages' checks do (graph/segpage.c).
 */
static void
check_run_page(Relation index, const SegvecKeymapRun *run, Page page,
			   BlockNumber blkno)
{
	SegvecPageOpaque opaque = SegvecPageGetOpaque(page);

	if (!PageIsNew(page) &&
		opaque->page_id == SEGVEC_PAGE_ID &&
		(opaque->flags & SEGVEC_PAGE_KEYMAP_RUN) != 0 &&
		opaque->stamp == run->stamp &&
		opaque->seqno == run->runno)
		return;
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("canceling statement due to conflict with recovery"),
				 errdetail("Block %u of index \"%s\" was reused by the primary while this query was reading keymap run %u, which it belonged to.",
						   blkno, RelationGetRelationName(index), run->runno),
				 errhint("Set hot_standby_feedback = on so that the primary keeps the pages that queries on this standby read.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("segvec index \"%s\": block %u is not a page of keymap run %u",
					RelationGetRelationName(index), blkno, run->runno)));
}

/*
 * Copy page p of run into out (KEYMAP_ENTRIES_PER_PAGE entries of room, or
 * NULL to copy only the first entry into *first); returns the entries on
 * the page.  Runs never change after install, so on a primary a pin is
 * enough; on a standby the page is read under a share lock and its stamp
 * checked under it (replay rewrites a page under an exclusive lock, so the
 * copy is of the page that passed the check).
 */
static uint32
read_run_page(Relation index, const SegvecKeymapRun *run, uint32 p,
			  KeymapEntry *out, KeymapEntry *first)
{
	BlockNumber blkno = run->start + p;
	Buffer		buf = SegvecReadBufferHinted(index, blkno);
	bool		standby = RecoveryInProgress();
	Page		page;
	uint32		n;

	if (standby)
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	check_run_page(index, run, page, blkno);
	n = Min(SegvecPageGetOpaque(page)->next_docno,
			(uint32) KEYMAP_ENTRIES_PER_PAGE);
	if (out)
		memcpy(out, PageGetContents(page), sizeof(KeymapEntry) * n);
	else if (n > 0)
		memcpy(first, PageGetContents(page), sizeof(KeymapEntry));
	if (standby)
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buf);
	return n;
}

/* Sort order of run entries: key hash, then doc id (the remove bit aside) */
static inline int
run_cmp(const KeymapEntry *a, const KeymapEntry *b)
{
	uint64		da = a->docid & ~KEYMAP_DOCID_REMOVED;
	uint64		db = b->docid & ~KEYMAP_DOCID_REMOVED;

	if (a->key_hash != b->key_hash)
		return a->key_hash < b->key_hash ? -1 : 1;
	if (da != db)
		return da < db ? -1 : 1;
	return 0;
}

/* ----------------
 * Reading: sources of entries, newest first
 *
 * What the keymap holds for a doc id is decided by the newest change to
 * it: the head chain (its later items newest), then the frozen chain, then
 * the runs from the newest to the oldest.  Doc ids are never reused, but a
 * doc's entry can be removed and added again (ft.verify's repair), so the
 * order matters, not only the set of adds and removes.
 * ----------------
 */

/* A growing array of entries */
typedef struct EntryArray
{
	KeymapEntry *items;
	int64		n;
	int64		max;
} EntryArray;

static void
array_add(EntryArray *a, const KeymapEntry *e)
{
	if (a->n >= a->max)
	{
		a->max = Max(64, a->max * 2);
		a->items = a->items == NULL ?
			MemoryContextAllocHuge(CurrentMemoryContext, sizeof(KeymapEntry) * a->max) :
			repalloc_huge(a->items, sizeof(KeymapEntry) * a->max);
	}
	a->items[a->n++] = *e;
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

static void
read_chain(Relation index, BlockNumber blkno, uint32 epoch, bool onekey,
		   uint64 key, EntryArray *out, uint32 *nchanges)
{
	read_chain_at(index, blkno, epoch, onekey, key, out, nchanges, NULL);
}

/*
 * read_chain with loc: for onekey, *loc is also set to each add of the key
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
			array_add(out, &e);
		}
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		UnlockReleaseBuffer(buf);
	}
}

/* A copy of the keymap part of the metapage */
typedef struct KeymapDir
{
	uint32		build;			/* the index build's stamp (keymap_build) */
	uint32		epoch;
	uint32		nruns;
	uint32		next_runno;
	SegvecKeymapRun runs[SEGVEC_KEYMAP_MAX_RUNS];
	BlockNumber delta_head[SEGVEC_KEYMAP_BUCKETS];
	BlockNumber delta_frozen[SEGVEC_KEYMAP_BUCKETS];
} KeymapDir;

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
static void
read_chain_key(Relation index, const KeymapDir *dir, BlockNumber head,
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
		array_add(out, &e);
	}
	if (order != few)
		pfree(order);
}

/*
 * What read_chain_key's *loc would end as after reading the key's changes
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
static bool
chains_key_loc(Relation index, const KeymapDir *dir, const BlockNumber *chains,
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

/*
 * Fold changes given in the order they were made into run form: sorted by
 * (key hash, doc id), one entry per doc id, the last change winning; with
 * drop_removes, removes are left out too.  Changes to one doc id are in
 * one bucket, so their chain order is their time order.
 */
typedef struct SeqEntry
{
	KeymapEntry e;
	int64		seq;
} SeqEntry;

static int
seq_cmp(const void *a, const void *b)
{
	const SeqEntry *sa = (const SeqEntry *) a;
	const SeqEntry *sb = (const SeqEntry *) b;
	int			c = run_cmp(&sa->e, &sb->e);

	if (c != 0)
		return c;
	return sa->seq < sb->seq ? -1 : sa->seq > sb->seq ? 1 : 0;
}

static void
fold_changes(EntryArray *a, bool drop_removes)
{
	SeqEntry   *tmp;
	int64		i,
				k = 0;

	if (a->n == 0)
		return;
	tmp = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(SeqEntry) * a->n);
	for (i = 0; i < a->n; i++)
	{
		tmp[i].e = a->items[i];
		tmp[i].seq = i;
	}
	qsort(tmp, a->n, sizeof(SeqEntry), seq_cmp);
	for (i = 0; i < a->n; i++)
	{
		/* the last change of each doc id */
		if (i + 1 < a->n && run_cmp(&tmp[i].e, &tmp[i + 1].e) == 0)
			continue;
		if (drop_removes && (tmp[i].e.docid & KEYMAP_DOCID_REMOVED))
			continue;
		a->items[k++] = tmp[i].e;
	}
	a->n = k;
	pfree(tmp);
}

/* One sorted source of a merge: an array in memory, or a run read a page at a time */
typedef struct KeySource
{
	int			age;			/* 0 is the newest */
	const KeymapEntry *mem;		/* an array source (run is NULL) */
	int64		nmem;
	const SegvecKeymapRun *run; /* a run source */
	uint32		nextpage;
	KeymapEntry *page;
	uint32		npage;
	int64		pos;
	KeymapEntry cur;
} KeySource;

/* Move src to its next entry; false at its end */
static bool
source_next(Relation index, KeySource *src)
{
	if (src->run == NULL)
	{
		if (src->pos >= src->nmem)
			return false;
		src->cur = src->mem[src->pos++];
		return true;
	}
	while (src->pos >= src->npage)
	{
		if (src->nextpage >= src->run->npages)
			return false;
		src->npage = read_run_page(index, src->run, src->nextpage++,
								   src->page, NULL);
		src->pos = 0;
	}
	src->cur = src->page[src->pos++];
	return true;
}

/* A merge of sources: entries in (key hash, doc id) order, the newest wins */
typedef struct KeyMerge
{
	Relation	index;
	KeySource  *src;
	int			nsrc;
	binaryheap *heap;
	bool		drop_removes;
} KeyMerge;

/* binaryheap is a max-heap: the smallest key, then the newest source, first */
static int
heap_cmp(Datum a, Datum b, void *arg)
{
	KeySource  *sa = (KeySource *) DatumGetPointer(a);
	KeySource  *sb = (KeySource *) DatumGetPointer(b);
	int			c = run_cmp(&sa->cur, &sb->cur);

	if (c != 0)
		return -c;
	return sb->age - sa->age;
}

static void
merge_begin(KeyMerge *m, Relation index, KeySource *src, int nsrc,
			bool drop_removes)
{
	int			i;

	m->index = index;
	m->src = src;
	m->nsrc = nsrc;
	m->drop_removes = drop_removes;
	m->heap = binaryheap_allocate(Max(nsrc, 1), heap_cmp, NULL);
	for (i = 0; i < nsrc; i++)
	{
		src[i].pos = 0;
		src[i].nextpage = 0;
		src[i].npage = 0;
		if (src[i].run && src[i].page == NULL)
			src[i].page = palloc(sizeof(KeymapEntry) * KEYMAP_ENTRIES_PER_PAGE);
		if (source_next(index, &src[i]))
			binaryheap_add_unordered(m->heap, PointerGetDatum(&src[i]));
	}
	binaryheap_build(m->heap);
}

/* Advance the first source of the heap */
static void
merge_advance_first(KeyMerge *m)
{
	KeySource  *s = (KeySource *) DatumGetPointer(binaryheap_first(m->heap));

	if (source_next(m->index, s))
		binaryheap_replace_first(m->heap, PointerGetDatum(s));
	else
		(void) binaryheap_remove_first(m->heap);
}

/*
 * The next entry of the merge (a remove carries KEYMAP_DOCID_REMOVED, unless
 * drop_removes leaves removes out); false at the end.
 */
static bool
merge_next(KeyMerge *m, KeymapEntry *out)
{
	for (;;)
	{
		KeymapEntry e;

		if (binaryheap_empty(m->heap))
			return false;
		e = ((KeySource *) DatumGetPointer(binaryheap_first(m->heap)))->cur;
		merge_advance_first(m);
		/* older changes of the same doc id are shadowed */
		while (!binaryheap_empty(m->heap) &&
			   run_cmp(&((KeySource *) DatumGetPointer(binaryheap_first(m->heap)))->cur,
					   &e) == 0)
			merge_advance_first(m);
		if (m->drop_removes && (e.docid & KEYMAP_DOCID_REMOVED))
			continue;
		*out = e;
		return true;
	}
}

static void
merge_end(KeyMerge *m)
{
	binaryheap_free(m->heap);
	m->heap = NULL;
}


static void
read_dir(Relation index, KeymapDir *dir)
{
	Buffer		metabuf = SegvecReadMetaBuffer(index);
	SegvecMetaPage meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	SegvecCheckMetaPage(index, meta);
	dir->build = meta->keymap_build;
	dir->epoch = meta->keymap_epoch;
	dir->nruns = meta->keymap_nruns;
	dir->next_runno = meta->keymap_next_runno;
	memcpy(dir->runs, meta->keymap_runs, sizeof(SegvecKeymapRun) * dir->nruns);
	memcpy(dir->delta_head, meta->delta_head, sizeof(dir->delta_head));
	memcpy(dir->delta_frozen, meta->delta_frozen, sizeof(dir->delta_frozen));
	UnlockReleaseBuffer(metabuf);
}

/* The frozen chain of bucket b, as the metapage names it */
static void
read_dir_frozen(Relation index, int b, BlockNumber *frozen)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	*frozen = SegvecPageGetMeta(BufferGetPage(metabuf))->delta_frozen[b];
	UnlockReleaseBuffer(metabuf);
}

/*
 * Append the entries of page p of run with this key hash to out, read in
 * place (pinned; share locked on a standby, as read_run_page): a binary
 * search of the page's sorted entries, no copy of the page.  Returns
 * whether the key may go on on the next page (the page's last entry has
 * the key, or the page is not past it).
 */
static bool
run_page_lookup(Relation index, const SegvecKeymapRun *run, uint32 p,
				uint64 key, EntryArray *out)
{
	BlockNumber blkno = run->start + p;
	Buffer		buf = SegvecReadBufferHinted(index, blkno);
	bool		standby = RecoveryInProgress();
	Page		page;
	const KeymapEntry *e;
	uint32		n,
				lo = 0,
				hi;
	bool		more;

	if (standby)
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	check_run_page(index, run, page, blkno);
	n = Min(SegvecPageGetOpaque(page)->next_docno,
			(uint32) KEYMAP_ENTRIES_PER_PAGE);
	e = (const KeymapEntry *) PageGetContents(page);
	/* the first entry whose key is not below key */
	hi = n;
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (e[mid].key_hash < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && e[lo].key_hash == key; lo++)
		array_add(out, &e[lo]);
	more = n > 0 && lo == n;
	if (standby)
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buf);
	return more;
}

/*
 * The fence cache: per run, the first key of each of its pages that a
 * lookup has read, so that the binary search over the pages reads from the
 * index only the pages it has not met before (the top levels of the
 * search are the same pages for every key): one or two page reads per run
 * and lookup instead of log2(pages).  A run never changes after install,
 * and it is identified by (relfilenode, keymap_build, runno, stamp): run
 * numbers are never given twice in one build of the index (a crash restart, after which an
 * uninstalled run's number may come again, empties every backend's
 * cache).  The last page a search reads is checked as always
 * (check_run_page), so a standby whose run the primary reused still
 * cancels the query.  Memory: 9 bytes per page of the runs met, emptied
 * past RUN_FENCE_MAX_BYTES.
 */
#define RUN_FENCE_MAX_BYTES		(16 * 1024 * 1024)
#define RUN_FENCE_UNKNOWN		0
#define RUN_FENCE_KEY			1	/* first[p] is the page's first key */
#define RUN_FENCE_EMPTY			2	/* the page holds no entry */

typedef struct RunFenceKey
{
	SegvecRelFileId node;
	uint32		build;
	uint32		runno;
	uint32		stamp;
	uint32		npages;
} RunFenceKey;

typedef struct RunFences
{
	RunFenceKey key;			/* hash key, first */
	uint64	   *first;			/* npages first keys */
	uint8	   *state;			/* npages RUN_FENCE_* */
} RunFences;

static MemoryContext run_fence_cxt = NULL;
static HTAB *run_fences = NULL;
static Size run_fence_bytes = 0;

/*
 * The fence cache entry of run (new ones all unknown), or NULL for a run
 * too big to cache (the search then reads its pages).
 */
static RunFences *
run_fences_of(Relation index, const KeymapDir *dir, const SegvecKeymapRun *run)
{
	RunFenceKey key;
	RunFences  *f;
	bool		found;
	Size		bytes = (Size) run->npages * (sizeof(uint64) + 1);

	if (bytes > RUN_FENCE_MAX_BYTES / 4)
		return NULL;
	if (run_fences == NULL || run_fence_bytes + bytes > RUN_FENCE_MAX_BYTES)
	{
		HASHCTL		ctl;

		if (run_fence_cxt == NULL)
			run_fence_cxt = AllocSetContextCreate(TopMemoryContext,
												  "segvec keymap run fences",
												  ALLOCSET_DEFAULT_SIZES);
		else
			MemoryContextReset(run_fence_cxt);
		run_fence_bytes = 0;
		ctl.keysize = sizeof(RunFenceKey);
		ctl.entrysize = sizeof(RunFences);
		ctl.hcxt = run_fence_cxt;
		run_fences = hash_create("segvec keymap run fences", 64, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	memset(&key, 0, sizeof(key));
	key.node = SegvecRelFileIdOf(index);
	key.build = dir->build;
	key.runno = run->runno;
	key.stamp = run->stamp;
	key.npages = run->npages;
	f = hash_search(run_fences, &key, HASH_ENTER, &found);
	if (!found)
	{
		f->first = NULL;
		f->state = NULL;
		f->first = MemoryContextAlloc(run_fence_cxt,
									  sizeof(uint64) * run->npages);
		f->state = MemoryContextAllocZero(run_fence_cxt, run->npages);
		run_fence_bytes += bytes;
	}
	else if (f->first == NULL || f->state == NULL)
	{
		/* an error left it half made */
		f->first = MemoryContextAlloc(run_fence_cxt,
									  sizeof(uint64) * run->npages);
		f->state = MemoryContextAllocZero(run_fence_cxt, run->npages);
	}
	return f;
}

/*
 * The entries of run with this key hash (adds and removes), appended to
 * out: a binary search over the run's pages by their first entries (from
 * the fence cache where it has them), then a binary search in the pages
 * that hold the key (usually one).
 */
static void
run_lookup(Relation index, const KeymapDir *dir, const SegvecKeymapRun *run,
		   uint64 key, EntryArray *out)
{
	uint32		lo = 0,
				hi;
	uint32		p;
	RunFences  *f;

	if (run->npages == 0)
		return;
	f = run_fences_of(index, dir, run);
	/* the last page whose first key is below key (or page 0) */
	hi = run->npages - 1;
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo + 1) / 2;

		uint8		state;
		uint64		first_key = 0;

		if (f != NULL && f->state[mid] != RUN_FENCE_UNKNOWN)
		{
			state = f->state[mid];
			first_key = f->first[mid];
		}
		else
		{
			KeymapEntry first;

			state = read_run_page(index, run, mid, NULL, &first) > 0 ?
				RUN_FENCE_KEY : RUN_FENCE_EMPTY;
			if (state == RUN_FENCE_KEY)
				first_key = first.key_hash;
			if (f != NULL)
			{
				f->first[mid] = first_key;
				f->state[mid] = state;
			}
		}
		if (state == RUN_FENCE_KEY && first_key < key)
			lo = mid;
		else
			hi = mid - 1;
	}
	for (p = lo; p < run->npages; p++)
		if (!run_page_lookup(index, run, p, key, out))
			break;
}

/*
 * KeymapLookup: the current entries with this key hash (palloc'd array in
 * *result); returns their count.  Reads the bucket's chains and, in each
 * run, O(log pages) pages.
 */
int
KeymapLookup(Relation index, uint64 key_hash, KeymapEntry **result)
{
	return KeymapLookupAt(index, key_hash, result, NULL, false);
}

/*
 * KeymapLookupAt: KeymapLookup that also sets *loc (unless NULL) to the
 * newest change adding one of the returned entries that names its doc's
 * mutable page (KeymapAddDocAt), or loc->docid 0 if there is none.  The
 * page may have been reused since: the caller checks.  With loc_only,
 * when the chains give a loc, returns -1 and no entries at once, without
 * reading the runs (the caller that needs the entries then calls again).
 */
int
KeymapLookupAt(Relation index, uint64 key_hash, KeymapEntry **result,
			   KeymapDocLocation *loc, bool loc_only)
{
	KeymapDir  *dir = palloc(sizeof(KeymapDir));
	EntryArray	changes = {0};
	EntryArray	out = {0};
	EntryArray	decided = {0};
	int			b = KEYMAP_BUCKET(key_hash);
	int64		i,
				j;
	int			r;
	bool		chains_read = false;	/* known to hold no change of the key */

	read_dir(index, dir);
	SegvecTestPoint("keymap-dir-read");

	if (loc_only && loc)
	{
		BlockNumber chains[2];
		bool		any;

		/* the usual case of an UPDATE: no need to collect the changes */
		chains[0] = dir->delta_head[b];
		chains[1] = dir->delta_frozen[b];
		if (chains_key_loc(index, dir, chains, key_hash, loc, &any))
		{
			if (loc->docid != 0)
			{
				pfree(dir);
				*result = NULL;
				return -1;
			}
			/* the first UPDATE since the snapshot: only the runs */
			if (!any)
				chains_read = true;
		}
	}

	/* newest first: the chains (later items first), then the runs */
	if (loc)
		memset(loc, 0, sizeof(KeymapDocLocation));
	if (!chains_read)
	{
		read_chain_key(index, dir, dir->delta_frozen[b], key_hash,
					   &changes, loc);
		read_chain_key(index, dir, dir->delta_head[b], key_hash,
					   &changes, loc);
	}
	if (loc_only && loc && loc->docid != 0)
	{
		if (changes.items)
			pfree(changes.items);
		pfree(dir);
		*result = NULL;
		return -1;
	}
	for (i = changes.n - 1; i >= 0; i--)
		array_add(&decided, &changes.items[i]);
	for (r = (int) dir->nruns - 1; r >= 0; r--)
		run_lookup(index, dir, &dir->runs[r], key_hash, &decided);

	/* the first (newest) change of each doc id decides */
	for (i = 0; i < decided.n; i++)
	{
		bool		seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = run_cmp(&decided.items[j], &decided.items[i]) == 0;
		if (!seen && !(decided.items[i].docid & KEYMAP_DOCID_REMOVED))
			array_add(&out, &decided.items[i]);
	}
	if (out.n > 1)
		qsort(out.items, out.n, sizeof(KeymapEntry), entry_cmp);
	if (loc && loc->docid != 0)
	{
		bool		current = false;

		for (i = 0; i < out.n && !current; i++)
			current = out.items[i].docid == loc->docid;
		if (!current)
			memset(loc, 0, sizeof(KeymapDocLocation));
	}

	if (changes.items)
		pfree(changes.items);
	if (decided.items)
		pfree(decided.items);
	pfree(dir);
	*result = out.items;
	return (int) out.n;
}

/*
 * KeymapForEach: call callback for every current entry, in (key hash, doc
 * id) order.  Memory: the changes since the snapshot, and a page per run.
 */
void
KeymapForEach(Relation index,
			  void (*callback) (const KeymapEntry *entry, void *arg),
			  void *arg)
{
	KeymapDir  *dir = palloc(sizeof(KeymapDir));
	EntryArray	head = {0};
	EntryArray	frozen = {0};
	KeySource  *src;
	KeyMerge	m;
	KeymapEntry e;
	int			nsrc = 0;
	int			b,
				r;
	int64		n = 0;

	read_dir(index, dir);
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		read_chain(index, dir->delta_head[b], dir->epoch, false, 0, &head, NULL);
		read_chain(index, dir->delta_frozen[b], dir->epoch, false, 0, &frozen, NULL);
	}
	fold_changes(&head, false);
	fold_changes(&frozen, false);

	src = palloc0(sizeof(KeySource) * (dir->nruns + 2));
	src[nsrc].mem = head.items;
	src[nsrc].nmem = head.n;
	src[nsrc].age = nsrc;
	nsrc++;
	src[nsrc].mem = frozen.items;
	src[nsrc].nmem = frozen.n;
	src[nsrc].age = nsrc;
	nsrc++;
	for (r = (int) dir->nruns - 1; r >= 0; r--)
	{
		src[nsrc].run = &dir->runs[r];
		src[nsrc].age = nsrc;
		nsrc++;
	}
	merge_begin(&m, index, src, nsrc, true);
	while (merge_next(&m, &e))
	{
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		callback(&e, arg);
	}
	merge_end(&m);
	pfree(dir);
}

/*
 * KeymapBucketStats: per bucket (stats has SEGVEC_KEYMAP_BUCKETS elements)
 * the changes recorded since the snapshot and, with count_entries, the
 * entries its runs hold (a pass over every run); *epoch is the number of
 * snapshots installed.
 */
void
KeymapBucketStats(Relation index, KeymapBucketStat *stats, uint32 *epoch,
				  bool count_entries)
{
	KeymapDir  *dir = palloc(sizeof(KeymapDir));
	int			b;

	read_dir(index, dir);
	*epoch = dir->epoch;
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		stats[b].snapshot_entries = 0;
		stats[b].changes = 0;
		read_chain(index, dir->delta_frozen[b], dir->epoch, false, 0, NULL,
				   &stats[b].changes);
		read_chain(index, dir->delta_head[b], dir->epoch, false, 0, NULL,
				   &stats[b].changes);
	}
	if (count_entries && dir->nruns > 0)
	{
		KeySource  *src = palloc0(sizeof(KeySource) * dir->nruns);
		KeyMerge	m;
		KeymapEntry e;
		int			r;
		int64		n = 0;

		for (r = 0; r < (int) dir->nruns; r++)
		{
			src[r].run = &dir->runs[dir->nruns - 1 - r];
			src[r].age = r;
		}
		merge_begin(&m, index, src, dir->nruns, true);
		while (merge_next(&m, &e))
		{
			if ((++n & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			stats[KEYMAP_BUCKET(e.key_hash)].snapshot_entries++;
		}
		merge_end(&m);
	}
	pfree(dir);
}

/* ----------------
 * Snapshots
 * ----------------
 */

/* Where fill_run_page gets a run's entries: an array or a merge */
typedef struct RunWriter
{
	const KeymapEntry *mem;
	KeyMerge   *merge;
	int64		pos;
	int64		nentries;
	SegvecKeymapRun *run;
} RunWriter;

/* SegvecFillPageFn: page k of a run, k in increasing order */
static void
fill_run_page(Page page, uint32 k, void *arg)
{
	RunWriter  *w = (RunWriter *) arg;
	KeymapEntry *entries;
	SegvecPageOpaque opaque;
	uint32		n = 0;

	SegvecInitPage(page, SEGVEC_PAGE_KEYMAP_RUN);
	entries = (KeymapEntry *) PageGetContents(page);
	while (n < KEYMAP_ENTRIES_PER_PAGE && w->pos < w->nentries)
	{
		if (w->mem)
			entries[n] = w->mem[w->pos];
		else if (!merge_next(w->merge, &entries[n]))
			elog(ERROR, "keymap run merge ended early");
		n++;
		w->pos++;
	}
	opaque = SegvecPageGetOpaque(page);
	opaque->seqno = w->run->runno;	/* identity */
	opaque->stamp = w->run->stamp;
	opaque->next_docno = n;		/* entries on this page */
	((PageHeader) page)->pd_lower = ((PageHeader) page)->pd_upper;
}

/*
 * Write a run of nentries entries (nremoves of them removes) numbered
 * runno, from mem or from a merge (begun; it is ended here), into a new
 * extent (SegvecAllocExtent: best fit from the free-extent list); fills
 * *run.  Nothing points at it until its install.
 */
static void
write_run(Relation index, uint32 runno, const KeymapEntry *mem, KeyMerge *merge,
		  int64 nentries, int64 nremoves, SegvecKeymapRun *run)
{
	RunWriter	w;

	memset(run, 0, sizeof(SegvecKeymapRun));
	run->runno = runno;
	run->nentries = nentries;
	run->nremoves = nremoves;
	run->npages = (nentries + KEYMAP_ENTRIES_PER_PAGE - 1) / KEYMAP_ENTRIES_PER_PAGE;
	run->stamp = KeymapRunStamp(run);
	run->start = SegvecAllocExtent(index, run->npages);

	w.mem = mem;
	w.merge = merge;
	w.pos = 0;
	w.nentries = nentries;
	w.run = run;
	SegvecFillExtent(index, run->start, run->npages, fill_run_page, &w);
	if (merge)
		merge_end(merge);
}

/*
 * Install, in one metapage WAL record: runs [first, first + nreplace) of
 * the directory are replaced by newrun (or removed, when newrun is NULL or
 * empty), their extents going to the free-extent list; with clear[],
 * those buckets' frozen chains are dropped from the directory, their pages
 * going to the free-extent list too; a snapshot advances the epoch.
 * What the list had no room for is marked deleted after the record.
 * Caller holds the compaction lock.
 */
static void
install_runs(Relation index, int first, int nreplace,
			 const SegvecKeymapRun *newrun, const bool *clear,
			 bool snapshot, bool count_merge)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	GenericXLogState *state;
	SegvecMetaPage meta;
	SegvecKeymapRun old[SEGVEC_KEYMAP_MAX_RUNS];
	bool		leaked[SEGVEC_KEYMAP_MAX_RUNS];
	BlockNumber *oldfrozen = palloc(sizeof(BlockNumber) * SEGVEC_KEYMAP_BUCKETS);
	uint64		xid;
	bool		add = newrun != NULL && newrun->nentries > 0;
	bool		chains_freed = false;
	BlockNumber *chainpages = NULL;
	int			nchainpages = 0,
				maxchainpages = 0;
	int			i,
				b;

	/*
	 * The frozen chains' pages (nobody appends to them any more, and a
	 * snapshot holds the compaction lock), to be freed with the install
	 */
	for (b = 0; clear && b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		BlockNumber blkno;

		if (!clear[b])
			continue;
		read_dir_frozen(index, b, &blkno);
		while (blkno != InvalidBlockNumber)
		{
			Buffer		buf = ReadBuffer(index, blkno);

			if (nchainpages >= maxchainpages)
			{
				maxchainpages = Max(64, maxchainpages * 2);
				chainpages = chainpages ?
					repalloc(chainpages, sizeof(BlockNumber) * maxchainpages) :
					palloc(sizeof(BlockNumber) * maxchainpages);
			}
			chainpages[nchainpages++] = blkno;
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			blkno = SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno;
			UnlockReleaseBuffer(buf);
		}
	}

	SegvecTestPoint("keymap-install-metapage-lock");
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	/* read under the lock, as compaction's install does (compact.c) */
	xid = U64FromFullTransactionId(ReadNextFullTransactionId());
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));

	Assert(first >= 0 && first + nreplace <= (int) meta->keymap_nruns);
	Assert(meta->keymap_nruns - nreplace + (add ? 1 : 0) <= SEGVEC_KEYMAP_MAX_RUNS);
	memcpy(old, &meta->keymap_runs[first], sizeof(SegvecKeymapRun) * nreplace);
	memcpy(oldfrozen, meta->delta_frozen, sizeof(BlockNumber) * SEGVEC_KEYMAP_BUCKETS);

	/* the directory: the replaced runs out, the new run in their place */
	memmove(&meta->keymap_runs[first + (add ? 1 : 0)],
			&meta->keymap_runs[first + nreplace],
			sizeof(SegvecKeymapRun) * (meta->keymap_nruns - first - nreplace));
	if (add)
		meta->keymap_runs[first] = *newrun;
	meta->keymap_nruns = meta->keymap_nruns - nreplace + (add ? 1 : 0);
	if (newrun != NULL)
		meta->keymap_next_runno = Max(meta->keymap_next_runno, newrun->runno + 1);

	for (i = 0; i < nreplace; i++)
		leaked[i] = !SegvecFreeExtentAdd(meta, old[i].start, old[i].npages, xid);

	if (clear)
	{
		for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
			if (clear[b])
				meta->delta_frozen[b] = InvalidBlockNumber;
		chains_freed = SegvecFreePagesAdd(meta, chainpages, nchainpages, xid);
	}
	if (snapshot)
		meta->keymap_epoch++;
	if (count_merge)
		meta->nrun_merges++;
	SegvecMetaFreeze(meta);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	/* what is unreachable now and not on the free list */
	for (i = 0; i < nreplace; i++)
		if (leaked[i])
			(void) SegvecMarkPagesDeleted(index, old[i].start, InvalidBlockNumber,
										  old[i].npages, false, xid);
	if (clear && !chains_freed)
	{
		for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
			if (clear[b] && oldfrozen[b] != InvalidBlockNumber)
				(void) SegvecMarkPagesDeleted(index, oldfrozen[b],
											  InvalidBlockNumber, 0, true, xid);
	}
	pfree(oldfrozen);
	if (chainpages)
		pfree(chainpages);
}

/* Tier of a run: floor(log4(pages)), pages counted from 1 */
static int
run_tier(const SegvecKeymapRun *run)
{
	uint32		p = Max(run->npages, 1);
	int			t = 0;

	while (p >= 4)
	{
		p /= 4;
		t++;
	}
	return t;
}

int
KeymapRunTier(const SegvecKeymapRun *run)
{
	return run_tier(run);
}

#define KEYMAP_MERGE_FACTOR		4

/*
 * Which newest runs to merge next by the tiered policy (see the file
 * header): sets *first and returns how many (0: none).
 */
static int
choose_run_merge(const KeymapDir *dir, int *first)
{
	int			n = (int) dir->nruns;
	int			i;

	if (n < 2)
		return 0;
	/* the newest run outgrew the one before it */
	if (run_tier(&dir->runs[n - 1]) > run_tier(&dir->runs[n - 2]))
	{
		*first = n - 2;
		return 2;
	}
	/* the newest KEYMAP_MERGE_FACTOR runs share a tier */
	if (n >= KEYMAP_MERGE_FACTOR)
	{
		int			t = run_tier(&dir->runs[n - 1]);
		bool		same = true;

		for (i = n - KEYMAP_MERGE_FACTOR; i < n - 1; i++)
			if (run_tier(&dir->runs[i]) != t)
				same = false;
		if (same)
		{
			*first = n - KEYMAP_MERGE_FACTOR;
			return KEYMAP_MERGE_FACTOR;
		}
	}
	/* room for the next snapshot's run */
	if (n >= SEGVEC_KEYMAP_MAX_RUNS)
	{
		*first = n - 2;
		return 2;
	}
	return 0;
}

/*
 * Merge runs [first, first + count) of the directory into one run (a
 * streaming merge, a page per input in memory: a pass to count, a pass to
 * write) and install it in their place.  Removes are kept unless the
 * oldest run takes part (then nothing older can hold what they cancel).
 */
static void
merge_runs(Relation index, KeymapDir *dir, int first, int count)
{
	KeySource  *src = palloc0(sizeof(KeySource) * count);
	KeyMerge	m;
	KeymapEntry e;
	SegvecKeymapRun newrun;
	int64		n = 0,
				nremoves = 0;
	bool		drop_removes = first == 0;
	int			i;

	for (i = 0; i < count; i++)
	{
		src[i].run = &dir->runs[first + count - 1 - i];
		src[i].age = i;
	}
	merge_begin(&m, index, src, count, drop_removes);
	while (merge_next(&m, &e))
	{
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (e.docid & KEYMAP_DOCID_REMOVED)
			nremoves++;
	}
	merge_end(&m);

	merge_begin(&m, index, src, count, drop_removes);
	write_run(index, dir->next_runno, NULL, &m, n, nremoves, &newrun);
	install_runs(index, first, count, &newrun, NULL, false, true);
	for (i = 0; i < count; i++)
		if (src[i].page)
			pfree(src[i].page);
	pfree(src);
}

/* Merge runs until the tiered policy is satisfied.  Caller holds the compaction lock. */
static void
maintain_runs(Relation index, KeymapDir *dir)
{
	for (;;)
	{
		int			first = 0;
		int			count;

		CHECK_FOR_INTERRUPTS();
		read_dir(index, dir);
		count = choose_run_merge(dir, &first);
		if (count == 0)
			break;
		merge_runs(index, dir, first, count);
	}
}

/*
 * SegvecKeymapSnapshot: write a new keymap snapshot (see the file header).
 * Takes the compaction lock; a no-op for an index without an id key.
 */
void
SegvecKeymapSnapshot(Relation index)
{
	MemoryContext ctx,
				oldctx;
	KeymapDir  *dir;
	bool	   *write;
	int			b;
	int			nchanged = 0;

	if (!SegvecIndexHasKey(index))
		return;

	ctx = AllocSetContextCreate(CurrentMemoryContext, "segvec keymap snapshot",
								ALLOCSET_DEFAULT_SIZES);
	oldctx = MemoryContextSwitchTo(ctx);
	dir = palloc(sizeof(KeymapDir));
	write = palloc0(sizeof(bool) * SEGVEC_KEYMAP_BUCKETS);

	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);

	/* 1. freeze the chains (a bucket still frozen from a crash stays so) */
	{
		Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
		GenericXLogState *state;
		SegvecMetaPage meta;

		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
		{
			if (meta->delta_frozen[b] == InvalidBlockNumber &&
				meta->delta_head[b] != InvalidBlockNumber)
			{
				meta->delta_frozen[b] = meta->delta_head[b];
				meta->delta_head[b] = InvalidBlockNumber;
			}
			if (meta->delta_frozen[b] != InvalidBlockNumber)
			{
				write[b] = true;
				nchanged++;
			}
		}
		if (nchanged > 0)
			GenericXLogFinish(state);
		else
			GenericXLogAbort(state);
		UnlockReleaseBuffer(metabuf);
	}

	if (nchanged > 0)
	{
		EntryArray	changes = {0};
		SegvecKeymapRun newrun;
		int64		nremoves = 0;
		int64		i;

		read_dir(index, dir);

		/* appends that got the head before the freeze are done after this */
		for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
		{
			Buffer		buf;

			if (!write[b])
				continue;
			buf = ReadBuffer(index, dir->delta_frozen[b]);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			UnlockReleaseBuffer(buf);
		}

		/* 2. the frozen changes, folded, as a new run */
		for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
		{
			CHECK_FOR_INTERRUPTS();
			if (write[b])
				read_chain(index, dir->delta_frozen[b], dir->epoch, false, 0, &changes, NULL);
		}
		fold_changes(&changes, dir->nruns == 0);
		for (i = 0; i < changes.n; i++)
			if (changes.items[i].docid & KEYMAP_DOCID_REMOVED)
				nremoves++;

		/* room for it in the directory */
		if (dir->nruns >= SEGVEC_KEYMAP_MAX_RUNS)
		{
			merge_runs(index, dir, dir->nruns - 2, 2);
			read_dir(index, dir);
		}
		if (changes.n > 0)
			write_run(index, dir->next_runno, changes.items, NULL, changes.n,
					  nremoves, &newrun);

		/* 3. install, freeing the frozen chains */
		install_runs(index, dir->nruns, 0, changes.n > 0 ? &newrun : NULL,
					 write, true, false);
	}

	/* 4. merge runs by the tiered policy */
	maintain_runs(index, dir);

	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	MemoryContextSwitchTo(oldctx);
	MemoryContextDelete(ctx);
}

/*
 * KeymapWriteInitialSnapshot: the keymap of a freshly built index, as its
 * first snapshot: one run (entries in any order; sorted here).
 */
void
KeymapWriteInitialSnapshot(Relation index, KeymapEntry *entries, int64 n)
{
	KeymapDir  *dir;
	SegvecKeymapRun run;

	if (n == 0)
		return;
	if (n > 1)
		qsort(entries, n, sizeof(KeymapEntry), entry_cmp);
	dir = palloc(sizeof(KeymapDir));
	read_dir(index, dir);
	write_run(index, dir->next_runno, entries, NULL, n, 0, &run);
	install_runs(index, dir->nruns, 0, &run, NULL, true, false);
	pfree(dir);
}

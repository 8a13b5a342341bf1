/*-------------------------------------------------------------------------
 *
 * keymap.c
 *	  The keymap of an index with an id key: key_hash -> (doc id, vector
 *	  checksum), in 256 buckets, with bucket-scoped copy-on-write
 *	  snapshots.
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
 * appended, after checking under it that the metapage still names it.  A
 * snapshot (SegvecKeymapSnapshot), under the compaction lock:
 *	1. freezes the delta chains: delta_frozen[b] = delta_head[b],
 *	   delta_head[b] = invalid, in one metapage record; then takes and
 *	   drops each frozen head's lock, so appends that began before the
 *	   freeze have finished;
 *	2. for each bucket that had changes, merges its run with its frozen
 *	   changes into a new sorted run; all new runs go into one fresh
 *	   extent (full-page WAL images);
 *	3. installs, in one metapage record, the new runs in the snapshot
 *	   directory and clears delta_frozen[] (buckets without changes keep
 *	   pointing at the pages they had);
 *	4. marks the old runs and frozen chains deleted, to be recycled once
 *	   no scan can still read them.  A crash before 4 leaves them
 *	   unreachable; VACUUM's sweep of unreachable pages collects them.
 * Readers combine run + frozen chain + head chain, so they see every
 * change at every point.
 *
 * src/keymap/keymap.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <xxhash.h>

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

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
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	BlockNumber head;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	head = SegvecPageGetMeta(BufferGetPage(metabuf))->delta_head[bucket];
	UnlockReleaseBuffer(metabuf);
	return head;
}

/*
 * Append a change to its bucket's delta chain.
 */
static void
delta_append(Relation index, const KeymapDelta *rec)
{
	int			bucket = KEYMAP_BUCKET(rec->entry.key_hash);

	for (;;)
	{
		BlockNumber head = meta_delta_head(index, bucket);
		Buffer		headbuf,
					buf;
		GenericXLogState *state;
		Page		page;

		if (head == InvalidBlockNumber)
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
			/* an unused page: nobody else can lock it, so no deadlock */
			newbuf = SegvecNewBuffer(index);
			state = GenericXLogStart(index);
			page = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
			meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
			SegvecInitPage(page, SEGVEC_PAGE_KEYMAP_DELTA);
			if (PageAddItem(page, (Item) rec, sizeof(KeymapDelta),
							InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
				elog(ERROR, "failed to add keymap change");
			meta->delta_head[bucket] = BufferGetBlockNumber(newbuf);
			GenericXLogFinish(state);
			UnlockReleaseBuffer(newbuf);
			UnlockReleaseBuffer(metabuf);
			return;
		}

		headbuf = ReadBuffer(index, head);
		LockBuffer(headbuf, BUFFER_LOCK_EXCLUSIVE);
		if (meta_delta_head(index, bucket) != head)
		{
			/* a snapshot froze the chain meanwhile */
			UnlockReleaseBuffer(headbuf);
			continue;
		}

		/* to the last page, keeping the head locked */
		buf = headbuf;
		while (SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno != InvalidBlockNumber)
		{
			Buffer		next = ReadBuffer(index,
										  SegvecPageGetOpaque(BufferGetPage(buf))->nextblkno);

			LockBuffer(next, BUFFER_LOCK_EXCLUSIVE);
			if (buf != headbuf)
				UnlockReleaseBuffer(buf);
			buf = next;
		}

		state = GenericXLogStart(index);
		if (PageGetFreeSpace(BufferGetPage(buf)) >= MAXALIGN(sizeof(KeymapDelta)))
		{
			page = GenericXLogRegisterBuffer(state, buf, 0);
			if (PageAddItem(page, (Item) rec, sizeof(KeymapDelta),
							InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
				elog(ERROR, "failed to add keymap change");
			GenericXLogFinish(state);
		}
		else
		{
			Buffer		newbuf = SegvecNewBuffer(index);
			Page		last = GenericXLogRegisterBuffer(state, buf, 0);

			page = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
			SegvecInitPage(page, SEGVEC_PAGE_KEYMAP_DELTA);
			if (PageAddItem(page, (Item) rec, sizeof(KeymapDelta),
							InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
				elog(ERROR, "failed to add keymap change");
			SegvecPageGetOpaque(last)->nextblkno = BufferGetBlockNumber(newbuf);
			GenericXLogFinish(state);
			UnlockReleaseBuffer(newbuf);
		}
		if (buf != headbuf)
			UnlockReleaseBuffer(buf);
		UnlockReleaseBuffer(headbuf);
		return;
	}
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
 * Reading
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

/* Read a delta chain's adds and removes (optionally only for one key) */
static void
read_chain(Relation index, BlockNumber blkno, bool onekey, uint64 key,
		   EntryArray *adds, EntryArray *removes, uint32 *nchanges)
{
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;
		OffsetNumber off,
					maxoff;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		maxoff = PageGetMaxOffsetNumber(page);
		if (nchanges)
			*nchanges += maxoff;
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			KeymapDelta *rec = (KeymapDelta *) PageGetItem(page,
														   PageGetItemId(page, off));

			if (onekey && rec->entry.key_hash != key)
				continue;
			if (rec->op == KEYMAP_OP_ADD)
			{
				if (adds)
					array_add(adds, &rec->entry);
			}
			else if (removes)
				array_add(removes, &rec->entry);
		}
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		UnlockReleaseBuffer(buf);
	}
}

/* Read a bucket's snapshot run (optionally only one key) */
static void
read_run(Relation index, const SegvecBucketRun *run, bool onekey, uint64 key,
		 EntryArray *out)
{
	uint32		done = 0;
	uint32		p;

	for (p = 0; p < run->npages && done < run->nentries; p++)
	{
		Buffer		buf = ReadBuffer(index, run->start + p);
		KeymapEntry *entries = (KeymapEntry *) PageGetContents(BufferGetPage(buf));
		uint32		n = Min((uint32) KEYMAP_ENTRIES_PER_PAGE, run->nentries - done);
		uint32		i;

		/* runs never change after install: a pin is enough */
		if (onekey && n > 0 && (entries[0].key_hash > key ||
								entries[n - 1].key_hash < key))
		{
			done += n;
			ReleaseBuffer(buf);
			continue;
		}
		for (i = 0; i < n; i++)
			if (!onekey || entries[i].key_hash == key)
				array_add(out, &entries[i]);
		done += n;
		ReleaseBuffer(buf);
	}
}

/*
 * The current entries of one bucket: run + frozen chain + head chain, with
 * the removes applied; sorted by (key_hash, docid).
 */
static void
resolve_bucket(Relation index, const SegvecBucketRun *run, BlockNumber frozen,
			   BlockNumber head, bool onekey, uint64 key, EntryArray *out)
{
	EntryArray	removes = {0};
	int64		i,
				j,
				k;

	read_run(index, run, onekey, key, out);
	read_chain(index, frozen, onekey, key, out, &removes, NULL);
	read_chain(index, head, onekey, key, out, &removes, NULL);

	if (out->n > 1)
		qsort(out->items, out->n, sizeof(KeymapEntry), entry_cmp);
	if (removes.n > 1)
		qsort(removes.items, removes.n, sizeof(KeymapEntry), entry_cmp);

	/* merge out minus removes, dropping duplicates */
	j = 0;
	k = 0;
	for (i = 0; i < out->n; i++)
	{
		while (j < removes.n && entry_cmp(&removes.items[j], &out->items[i]) < 0)
			j++;
		if (j < removes.n && entry_cmp(&removes.items[j], &out->items[i]) == 0)
			continue;
		if (k > 0 && entry_cmp(&out->items[k - 1], &out->items[i]) == 0)
			continue;
		out->items[k++] = out->items[i];
	}
	out->n = k;
	if (removes.items)
		pfree(removes.items);
}

/* A copy of the keymap part of the metapage */
typedef struct KeymapDir
{
	uint32		epoch;
	SegvecBucketRun snapshot[SEGVEC_KEYMAP_BUCKETS];
	BlockNumber delta_head[SEGVEC_KEYMAP_BUCKETS];
	BlockNumber delta_frozen[SEGVEC_KEYMAP_BUCKETS];
} KeymapDir;

static void
read_dir(Relation index, KeymapDir *dir)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	SegvecMetaPage meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = SegvecPageGetMeta(BufferGetPage(metabuf));
	dir->epoch = meta->keymap_epoch;
	memcpy(dir->snapshot, meta->snapshot, sizeof(dir->snapshot));
	memcpy(dir->delta_head, meta->delta_head, sizeof(dir->delta_head));
	memcpy(dir->delta_frozen, meta->delta_frozen, sizeof(dir->delta_frozen));
	UnlockReleaseBuffer(metabuf);
}

/*
 * KeymapLookup: the current entries with this key hash (palloc'd array in
 * *result); returns their count.
 */
int
KeymapLookup(Relation index, uint64 key_hash, KeymapEntry **result)
{
	KeymapDir  *dir = palloc(sizeof(KeymapDir));
	EntryArray	out = {0};
	int			b = KEYMAP_BUCKET(key_hash);

	read_dir(index, dir);
	resolve_bucket(index, &dir->snapshot[b], dir->delta_frozen[b],
				   dir->delta_head[b], true, key_hash, &out);
	pfree(dir);
	*result = out.items;
	return (int) out.n;
}

/*
 * KeymapForEach: call callback for every current entry, bucket by bucket
 * (memory: one bucket at a time).
 */
void
KeymapForEach(Relation index,
			  void (*callback) (const KeymapEntry *entry, void *arg),
			  void *arg)
{
	KeymapDir  *dir = palloc(sizeof(KeymapDir));
	int			b;

	read_dir(index, dir);
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		EntryArray	out = {0};
		int64		i;

		CHECK_FOR_INTERRUPTS();
		resolve_bucket(index, &dir->snapshot[b], dir->delta_frozen[b],
					   dir->delta_head[b], false, 0, &out);
		for (i = 0; i < out.n; i++)
			callback(&out.items[i], arg);
		if (out.items)
			pfree(out.items);
	}
	pfree(dir);
}

/*
 * KeymapBucketStats: per bucket, its snapshot run and the number of changes
 * recorded since (stats has SEGVEC_KEYMAP_BUCKETS elements).
 */
void
KeymapBucketStats(Relation index, KeymapBucketStat *stats, uint32 *epoch)
{
	KeymapDir  *dir = palloc(sizeof(KeymapDir));
	int			b;

	read_dir(index, dir);
	*epoch = dir->epoch;
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		stats[b].snapshot_start = dir->snapshot[b].start;
		stats[b].snapshot_pages = dir->snapshot[b].npages;
		stats[b].snapshot_entries = dir->snapshot[b].nentries;
		stats[b].changes = 0;
		read_chain(index, dir->delta_frozen[b], false, 0, NULL, NULL,
				   &stats[b].changes);
		read_chain(index, dir->delta_head[b], false, 0, NULL, NULL,
				   &stats[b].changes);
	}
	pfree(dir);
}

/* ----------------
 * Snapshots
 * ----------------
 */

/* What fill_run_page needs: the runs and where each one's pages start */
typedef struct RunWriter
{
	KeymapEntry **runs;
	int64	   *nentries;
	int			bucket_of[SEGVEC_KEYMAP_BUCKETS];	/* by run order */
	uint32		first_page[SEGVEC_KEYMAP_BUCKETS];	/* by run order */
	int			nruns;
	int			cur;			/* run that page k belongs to */
} RunWriter;

/* SegvecFillPageFn: page k of the extent, k in increasing order */
static void
fill_run_page(Page page, uint32 k, void *arg)
{
	RunWriter  *w = (RunWriter *) arg;
	int			b;
	uint32		first,
				n;

	while (w->cur + 1 < w->nruns && w->first_page[w->cur + 1] <= k)
		w->cur++;
	b = w->bucket_of[w->cur];
	first = (k - w->first_page[w->cur]) * KEYMAP_ENTRIES_PER_PAGE;
	n = Min((uint32) KEYMAP_ENTRIES_PER_PAGE, w->nentries[b] - first);

	SegvecInitPage(page, SEGVEC_PAGE_KEYMAP_RUN);
	memcpy(PageGetContents(page), w->runs[b] + first, sizeof(KeymapEntry) * n);
	((PageHeader) page)->pd_lower = ((PageHeader) page)->pd_upper;
}

/*
 * Write runs[b] (nentries[b] sorted entries, for buckets with write[b]) as
 * one new extent at the end of the relation; fills newrun[b].
 */
static void
write_runs(Relation index, KeymapEntry **runs, int64 *nentries, bool *write,
		   SegvecBucketRun *newrun)
{
	RunWriter  *w = palloc0(sizeof(RunWriter));
	uint32		total = 0;
	BlockNumber start;
	int			b;
	int			r;

	w->runs = runs;
	w->nentries = nentries;
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		if (!write[b])
			continue;
		newrun[b].npages = (nentries[b] + KEYMAP_ENTRIES_PER_PAGE - 1) /
			KEYMAP_ENTRIES_PER_PAGE;
		newrun[b].nentries = nentries[b];
		newrun[b].start = InvalidBlockNumber;
		if (newrun[b].npages == 0)
			continue;
		w->bucket_of[w->nruns] = b;
		w->first_page[w->nruns] = total;
		w->nruns++;
		total += newrun[b].npages;
	}
	if (total > 0)
	{
		start = SegvecWriteExtent(index, total, fill_run_page, w);
		for (r = 0; r < w->nruns; r++)
			newrun[w->bucket_of[r]].start = start + w->first_page[r];
	}
	pfree(w);
}

/*
 * Install new runs for the buckets in write[], clearing their frozen
 * chains, in one metapage WAL record; then mark what they replaced deleted.
 */
static void
install_runs(Relation index, bool *write, SegvecBucketRun *newrun,
			 bool clear_frozen)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);
	GenericXLogState *state;
	SegvecMetaPage meta;
	SegvecBucketRun *oldrun = palloc(sizeof(SegvecBucketRun) * SEGVEC_KEYMAP_BUCKETS);
	BlockNumber *oldfrozen = palloc(sizeof(BlockNumber) * SEGVEC_KEYMAP_BUCKETS);
	uint64		xid;
	int			b;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SegvecPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		oldrun[b] = meta->snapshot[b];
		oldfrozen[b] = meta->delta_frozen[b];
		if (!write[b])
			continue;
		meta->snapshot[b] = newrun[b];
		if (clear_frozen)
			meta->delta_frozen[b] = InvalidBlockNumber;
	}
	meta->keymap_epoch++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	xid = U64FromFullTransactionId(ReadNextFullTransactionId());
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		if (!write[b])
			continue;
		if (oldrun[b].start != InvalidBlockNumber && oldrun[b].npages > 0 &&
			oldrun[b].start != newrun[b].start)
			(void) SegvecMarkPagesDeleted(index, oldrun[b].start,
										  InvalidBlockNumber, oldrun[b].npages,
										  false, xid);
		if (clear_frozen && oldfrozen[b] != InvalidBlockNumber)
			(void) SegvecMarkPagesDeleted(index, oldfrozen[b],
										  InvalidBlockNumber, 0, true, xid);
	}
	pfree(oldrun);
	pfree(oldfrozen);
}

/*
 * SegvecKeymapSnapshot: write a new keymap snapshot (see the file header).
 * Takes the compaction lock; a no-op for an index without an id key or
 * without changes.
 */
void
SegvecKeymapSnapshot(Relation index)
{
	MemoryContext ctx,
				oldctx;
	KeymapDir  *dir;
	bool	   *write;
	KeymapEntry **runs;
	int64	   *nentries;
	SegvecBucketRun *newrun;
	int			b;
	int			nchanged = 0;

	if (!SegvecIndexHasKey(index))
		return;

	ctx = AllocSetContextCreate(CurrentMemoryContext, "segvec keymap snapshot",
								ALLOCSET_DEFAULT_SIZES);
	oldctx = MemoryContextSwitchTo(ctx);
	dir = palloc(sizeof(KeymapDir));
	write = palloc0(sizeof(bool) * SEGVEC_KEYMAP_BUCKETS);
	runs = palloc0(sizeof(KeymapEntry *) * SEGVEC_KEYMAP_BUCKETS);
	nentries = palloc0(sizeof(int64) * SEGVEC_KEYMAP_BUCKETS);
	newrun = palloc0(sizeof(SegvecBucketRun) * SEGVEC_KEYMAP_BUCKETS);

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

		/* 2. new runs */
		for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
		{
			EntryArray	out = {0};

			if (!write[b])
				continue;
			CHECK_FOR_INTERRUPTS();
			resolve_bucket(index, &dir->snapshot[b], dir->delta_frozen[b],
						   InvalidBlockNumber, false, 0, &out);
			runs[b] = out.items;
			nentries[b] = out.n;
		}
		write_runs(index, runs, nentries, write, newrun);

		/* 3. install, 4. mark the replaced pages deleted */
		install_runs(index, write, newrun, true);
	}

	UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	MemoryContextSwitchTo(oldctx);
	MemoryContextDelete(ctx);
}

/*
 * KeymapWriteInitialSnapshot: the keymap of a freshly built index, as its
 * first snapshot (entries in any order; sorted here).
 */
void
KeymapWriteInitialSnapshot(Relation index, KeymapEntry *entries, int64 n)
{
	bool	   *write = palloc0(sizeof(bool) * SEGVEC_KEYMAP_BUCKETS);
	KeymapEntry **runs = palloc0(sizeof(KeymapEntry *) * SEGVEC_KEYMAP_BUCKETS);
	int64	   *nentries = palloc0(sizeof(int64) * SEGVEC_KEYMAP_BUCKETS);
	SegvecBucketRun *newrun = palloc0(sizeof(SegvecBucketRun) * SEGVEC_KEYMAP_BUCKETS);
	int64		i;
	int			b;

	if (n == 0)
		return;
	if (n > 1)
		qsort(entries, n, sizeof(KeymapEntry), entry_cmp);
	for (i = 0; i < n; i++)
	{
		b = KEYMAP_BUCKET(entries[i].key_hash);
		if (!write[b])
		{
			write[b] = true;
			runs[b] = &entries[i];
		}
		nentries[b]++;
	}
	write_runs(index, runs, nentries, write, newrun);
	install_runs(index, write, newrun, false);
}

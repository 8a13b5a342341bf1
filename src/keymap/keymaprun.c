/*-------------------------------------------------------------------------
 *
 * keymaprun.c
 *	  The keymap's runs: look-ups through the fence cache, writing and
 *	  installing runs, snapshots and the tiered run merges (see keymap.c for
 *	  the design).
 *
 * src/keymap/keymaprun.c
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

/*
 * Append the entries of page p of run with this key hash to out, read in
 * place (pinned; share locked on a standby, as KmReadRunPage): a binary
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
	KmCheckRunPage(index, run, page, blkno);
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
		KmArrayAdd(out, &e[lo]);
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
 * (KmCheckRunPage), so a standby whose run the primary reused still
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
void
KmRunLookup(Relation index, const KeymapDir *dir, const SegvecKeymapRun *run,
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

			state = KmReadRunPage(index, run, mid, NULL, &first) > 0 ?
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
		else if (!KmMergeNext(w->merge, &entries[n]))
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
 * extent (SegvecAllocExtent: first fit from the free-extent list); fills
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
		KmMergeEnd(merge);
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
		KmReadDirFrozen(index, b, &blkno);
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

/* SegvecFillExtent's callback for KeymapMoveRun: page k of the run */
typedef struct RunCopy
{
	Relation	index;
	const SegvecKeymapRun *run;
} RunCopy;

static void
copy_run_page(Page page, uint32 k, void *arg)
{
	RunCopy    *c = (RunCopy *) arg;
	BlockNumber blkno = c->run->start + k;
	Buffer		buf = ReadBuffer(c->index, blkno);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	KmCheckRunPage(c->index, c->run, BufferGetPage(buf), blkno);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
}

/*
 * KeymapMoveRun: move the keymap run numbered runno, if the directory
 * still has it at block from, into the lowest reusable free run that ends
 * at or below limit, at most from (compact/shrink.c: a run that keeps the
 * free tail from being given back, or splits the free space a segment
 * could be moved into).  The copy is the same run (number, stamp, entries;
 * no page of a run holds a block number), written as full page images;
 * one install record replaces its descriptor and frees the old extent,
 * which a scan that read the old directory goes on reading, kept as it
 * was by the free-extent list's reuse rule.  A crash before the install
 * leaves the copy unreachable, recycled like a crashed snapshot's run.
 * Returns whether it moved the run.  Caller holds the compaction lock
 * (only its holder installs runs).
 */
bool
KeymapMoveRun(Relation index, uint32 runno, BlockNumber from,
			  BlockNumber limit)
{
	KeymapDir  *dir = palloc(sizeof(KeymapDir));
	SegvecKeymapRun copy;
	RunCopy		c;
	int			i;
	bool		moved = false;

	KmReadDir(index, dir);
	for (i = 0; i < (int) dir->nruns; i++)
		if (dir->runs[i].runno == runno && dir->runs[i].start == from)
			break;
	if (i < (int) dir->nruns && dir->runs[i].npages > 0)
	{
		copy = dir->runs[i];
		copy.start = SegvecExtentTakeBelow(index, copy.npages,
										   Min(from, limit), NULL);
		if (copy.start != InvalidBlockNumber)
		{
			c.index = index;
			c.run = &dir->runs[i];
			SegvecFillExtent(index, copy.start, copy.npages, copy_run_page, &c);
			install_runs(index, i, 1, &copy, NULL, false, false);
			moved = true;
			ereport(DEBUG1,
					(errmsg_internal("segvec moved keymap run %u of index \"%s\" (%u pages) from block %u to %u",
									 runno, RelationGetRelationName(index),
									 copy.npages, from, copy.start)));
		}
	}
	pfree(dir);
	return moved;
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
	KmMergeBegin(&m, index, src, count, drop_removes);
	while (KmMergeNext(&m, &e))
	{
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (e.docid & KEYMAP_DOCID_REMOVED)
			nremoves++;
	}
	KmMergeEnd(&m);

	KmMergeBegin(&m, index, src, count, drop_removes);
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
		KmReadDir(index, dir);
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

		KmReadDir(index, dir);

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
				KmReadChain(index, dir->delta_frozen[b], dir->epoch, false, 0, &changes, NULL);
		}
		KmFoldChanges(&changes, dir->nruns == 0);
		for (i = 0; i < changes.n; i++)
			if (changes.items[i].docid & KEYMAP_DOCID_REMOVED)
				nremoves++;

		/* room for it in the directory */
		if (dir->nruns >= SEGVEC_KEYMAP_MAX_RUNS)
		{
			merge_runs(index, dir, dir->nruns - 2, 2);
			KmReadDir(index, dir);
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
		qsort(entries, n, sizeof(KeymapEntry), KmEntryCmp);
	dir = palloc(sizeof(KeymapDir));
	KmReadDir(index, dir);
	write_run(index, dir->next_runno, entries, NULL, n, 0, &run);
	install_runs(index, dir->nruns, 0, &run, NULL, true, false);
	pfree(dir);
}

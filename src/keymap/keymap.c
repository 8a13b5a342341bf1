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
 * This file: keys and checksums, the sources of entries and their merges,
 * look-ups; the change chains and the chain cache are in keymapchain.c,
 * runs, snapshots and run merges in keymaprun.c (keymap_int.h).
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
#include "keymap/keymap_int.h"
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

int
KmEntryCmp(const void *a, const void *b)
{
	const KeymapEntry *ea = (const KeymapEntry *) a;
	const KeymapEntry *eb = (const KeymapEntry *) b;

	if (ea->key_hash != eb->key_hash)
		return ea->key_hash < eb->key_hash ? -1 : 1;
	if (ea->docid != eb->docid)
		return ea->docid < eb->docid ? -1 : 1;
	return 0;
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

void
KmArrayAdd(EntryArray *a, const KeymapEntry *e)
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

void
KmFoldChanges(EntryArray *a, bool drop_removes)
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
		src->npage = KmReadRunPage(index, src->run, src->nextpage++,
								   src->page, NULL);
		src->pos = 0;
	}
	src->cur = src->page[src->pos++];
	return true;
}

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

void
KmMergeBegin(KeyMerge *m, Relation index, KeySource *src, int nsrc,
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
bool
KmMergeNext(KeyMerge *m, KeymapEntry *out)
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

void
KmMergeEnd(KeyMerge *m)
{
	binaryheap_free(m->heap);
	m->heap = NULL;
}

void
KmReadDir(Relation index, KeymapDir *dir)
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
void
KmReadDirFrozen(Relation index, int b, BlockNumber *frozen)
{
	Buffer		metabuf = ReadBuffer(index, SEGVEC_METAPAGE_BLKNO);

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	*frozen = SegvecPageGetMeta(BufferGetPage(metabuf))->delta_frozen[b];
	UnlockReleaseBuffer(metabuf);
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

	KmReadDir(index, dir);
	SegvecTestPoint("keymap-dir-read");

	if (loc_only && loc)
	{
		BlockNumber chains[2];
		bool		any;

		/* the usual case of an UPDATE: no need to collect the changes */
		chains[0] = dir->delta_head[b];
		chains[1] = dir->delta_frozen[b];
		if (KmChainsKeyLoc(index, dir, chains, key_hash, loc, &any))
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
		KmReadChainKey(index, dir, dir->delta_frozen[b], key_hash,
					   &changes, loc);
		KmReadChainKey(index, dir, dir->delta_head[b], key_hash,
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
		KmArrayAdd(&decided, &changes.items[i]);
	for (r = (int) dir->nruns - 1; r >= 0; r--)
		KmRunLookup(index, dir, &dir->runs[r], key_hash, &decided);

	/* the first (newest) change of each doc id decides */
	for (i = 0; i < decided.n; i++)
	{
		bool		seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = run_cmp(&decided.items[j], &decided.items[i]) == 0;
		if (!seen && !(decided.items[i].docid & KEYMAP_DOCID_REMOVED))
			KmArrayAdd(&out, &decided.items[i]);
	}
	if (out.n > 1)
		qsort(out.items, out.n, sizeof(KeymapEntry), KmEntryCmp);
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

	KmReadDir(index, dir);
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		KmReadChain(index, dir->delta_head[b], dir->epoch, false, 0, &head, NULL);
		KmReadChain(index, dir->delta_frozen[b], dir->epoch, false, 0, &frozen, NULL);
	}
	KmFoldChanges(&head, false);
	KmFoldChanges(&frozen, false);

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
	KmMergeBegin(&m, index, src, nsrc, true);
	while (KmMergeNext(&m, &e))
	{
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		callback(&e, arg);
	}
	KmMergeEnd(&m);
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

	KmReadDir(index, dir);
	*epoch = dir->epoch;
	for (b = 0; b < SEGVEC_KEYMAP_BUCKETS; b++)
	{
		stats[b].snapshot_entries = 0;
		stats[b].changes = 0;
		KmReadChain(index, dir->delta_frozen[b], dir->epoch, false, 0, NULL,
				   &stats[b].changes);
		KmReadChain(index, dir->delta_head[b], dir->epoch, false, 0, NULL,
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
		KmMergeBegin(&m, index, src, dir->nruns, true);
		while (KmMergeNext(&m, &e))
		{
			if ((++n & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			stats[KEYMAP_BUCKET(e.key_hash)].snapshot_entries++;
		}
		KmMergeEnd(&m);
	}
	pfree(dir);
}

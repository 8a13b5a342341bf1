/*-------------------------------------------------------------------------
 *
 * keymap.c
 *	  The keymap of an index with an id key: key_hash -> (doc id, vector
 *	  checksum), as a few sorted runs plus the changes since, in 16
 *	  bucket chains.
 *
 * An entry is added when a doc is appended (in the WAL record of the
 * doc's last piece, or after it in its own) and removed by VACUUM before
 * the doc is (in its own WAL record), so a crash can leave a doc without
 * an entry, which ft.verify reports and repairs, but never an entry
 * without its doc.  Compaction keeps doc ids,
 * so it never touches the keymap.  A key may have several entries (older
 * row versions not yet vacuumed, or another id with the same hash): a
 * lookup returns them all and the caller checks the heap.
 *
 * Changes go to the bucket's delta chain: the head page is found in the
 * metapage (delta_head[b]) and stays exclusively locked while a change is
 * appended, after checking under it that the metapage still names it; the
 * head names the chain's last page, where the change goes.  An insert's
 * doc (its last piece) and keymap add are usually one WAL record
 * (KeymapAppendDoc), and so are an aliased UPDATE's alias and its add
 * (KeymapAppendAlias).  Lookups read the chains through a per-backend
 * cache ("The chain cache", below), so a lookup reads only the changes
 * made since the last.
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
 *	   sorted run, written to a new extent (first fit from the free-extent
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
 * This file: look-ups.  Below it (keymap_int.h): keymaprun.c (run
 * look-ups, writing and installing runs, snapshots, run merges),
 * keymapchain.c (change chains, the chain cache), keymapsrc.c (keys and
 * checksums, entries, the directory, run page reads, sources and their
 * merges).
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
			seen = KmRunCmp(&decided.items[j], &decided.items[i]) == 0;
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

/*-------------------------------------------------------------------------
 *
 * keymap.h
 *	  The keymap: key_hash -> (doc id, vector checksum) for an index that
 *	  carries its table's id column (INCLUDE (id)).
 *
 * 256 buckets, chosen by key_hash >> 56.  A bucket's durable form is its
 * run in the current keymap snapshot (entries sorted by key hash and doc
 * id) plus its changes since (a chain of delta pages: adds and removes).
 * A new snapshot rewrites only the buckets that have changes and shares
 * the other buckets' pages; it is installed with one metapage WAL record.
 * The page formats are in store/format.h; see src/README.md, "Keymap".
 * The keymap calls storage and the kernels.
 *
 * src/keymap/keymap.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_KEYMAP_H
#define SEGVEC_KEYMAP_H

#include "postgres.h"

#include "utils/relcache.h"

#include "store/store.h"

/* Per-bucket figures, for ft.keymap_buckets and ft.info */
typedef struct KeymapBucketStat
{
	BlockNumber snapshot_start;
	uint32		snapshot_pages;
	uint32		snapshot_entries;
	uint32		changes;		/* delta records since the snapshot */
} KeymapBucketStat;

/* keys and checksums */
extern bool SegvecIndexHasKey(Relation index);
extern uint64 SegvecKeyHash(Relation index, Datum value);
extern uint64 SegvecKeyHashBytes(bytea *bin);
extern uint64 SegvecVectorChecksum(const float *vector, int dim);

/* changes */
extern void KeymapAdd(Relation index, const KeymapEntry *entry);
extern void KeymapRemove(Relation index, const KeymapEntry *entry);
extern void KeymapEntryOfDoc(const SegvecDocInfo *doc, KeymapEntry *entry);
extern void KeymapAddDoc(Relation index, const SegvecDocInfo *doc);
extern void KeymapRemoveDoc(Relation index, const SegvecDocInfo *doc);

/* reading the current contents */
extern int	KeymapLookup(Relation index, uint64 key_hash, KeymapEntry **result);
extern void KeymapForEach(Relation index,
						  void (*callback) (const KeymapEntry *entry, void *arg),
						  void *arg);
extern void KeymapBucketStats(Relation index, KeymapBucketStat *stats,
							  uint32 *epoch);

/* snapshots */
extern void SegvecKeymapSnapshot(Relation index);
extern void KeymapWriteInitialSnapshot(Relation index, KeymapEntry *entries,
									   int64 nentries);

#endif							/* SEGVEC_KEYMAP_H */

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
 * See src/README.md, "Keymap".
 *
 * src/keymap.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_KEYMAP_H
#define SEGVEC_KEYMAP_H

#include "postgres.h"

#include "utils/relcache.h"

#include "segvec.h"

typedef struct KeymapEntry
{
	uint64		key_hash;
	uint64		docid;
	uint64		checksum;
} KeymapEntry;

/* a change since the snapshot, on a delta page */
typedef struct KeymapDelta
{
	KeymapEntry entry;
	uint32		op;				/* KEYMAP_OP_* */
	uint32		unused;
} KeymapDelta;

#define KEYMAP_OP_ADD			1
#define KEYMAP_OP_REMOVE		2

#define KEYMAP_BUCKET(key_hash)	((int) ((key_hash) >> 56))
#define KEYMAP_ENTRIES_PER_PAGE	((int) (SEGVEC_SEGPAGE_USABLE / sizeof(KeymapEntry)))

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

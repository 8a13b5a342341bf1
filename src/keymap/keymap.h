/*-------------------------------------------------------------------------
 *
 * keymap.h
 *	  The keymap: key_hash -> (doc id, vector checksum) for an index that
 *	  carries its table's id column (INCLUDE (id)).
 *
 * The keymap's durable form is its snapshot, a few sorted runs (entries
 * sorted by key hash and doc id, the newest change of a doc id winning),
 * plus the changes since, in 16 delta chains (buckets, chosen by
 * key_hash >> 60).  A new snapshot writes the changes as one new run and
 * shares every existing run; runs merge by a tiered policy.  Each install
 * is one metapage WAL record.  The page formats are in store/format.h;
 * see src/README.md, "Keymap".
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
	uint64		snapshot_entries;	/* current entries in the runs */
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
extern void KeymapAddDocAt(Relation index, const SegvecDocInfo *doc,
						   BlockNumber doc_blkno);
extern void KeymapRemoveDoc(Relation index, const SegvecDocInfo *doc);
extern void KeymapAppendAlias(Relation index, SegvecDocInfo *doc,
							  uint64 target, const char *filters,
							  bool *page_added);
extern void KeymapAppendDoc(Relation index, SegvecDocInfo *doc,
							const float *vector, int dim,
							const char *filters, bool *page_added);

/* reading the current contents */
extern int	KeymapLookup(Relation index, uint64 key_hash, KeymapEntry **result);

/* where KeymapLookupAt says the newest located add of a key is */
typedef struct KeymapDocLocation
{
	uint64		docid;			/* 0: none */
	BlockNumber doc_blkno;		/* the mutable page its add named */
} KeymapDocLocation;

extern int	KeymapLookupAt(Relation index, uint64 key_hash,
						   KeymapEntry **result, KeymapDocLocation *loc,
						   bool loc_only);
extern void KeymapForEach(Relation index,
						  void (*callback) (const KeymapEntry *entry, void *arg),
						  void *arg);
extern void KeymapBucketStats(Relation index, KeymapBucketStat *stats,
							  uint32 *epoch, bool count_entries);
extern uint32 KeymapRunStamp(const SegvecKeymapRun *run);
extern int	KeymapRunTier(const SegvecKeymapRun *run);
extern bool KeymapMoveRun(Relation index, uint32 runno, BlockNumber from,
						  BlockNumber limit);

/* snapshots */
extern void SegvecKeymapSnapshot(Relation index);
extern void KeymapWriteInitialSnapshot(Relation index, KeymapEntry *entries,
									   int64 nentries);

#endif							/* SEGVEC_KEYMAP_H */

/*-------------------------------------------------------------------------
 *
 * compact.h
 *	  Compaction: freezing the mutable segment into immutable graph
 *	  segments, merging segments (size-ratio policy), installing segments in
 *	  the manifest, and marking what an install dropped as garbage.
 *
 * Compaction calls the graphs, the keymap's storage and storage; the jobs,
 * the access method's callbacks and the ft API call it.  See compact.c
 * and src/README.md, "Compaction".
 *
 * src/compact/compact.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_COMPACT_H
#define SEGVEC_COMPACT_H

#include "postgres.h"

#include "utils/relcache.h"

#include "store/store.h"

/* segvec.compact_threshold: docs in the mutable segment worth compacting */
extern PGDLLIMPORT int segvec_compact_threshold;
extern PGDLLIMPORT int segvec_compact_threshold_kb;
extern PGDLLIMPORT int segvec_merge_ratio;
extern PGDLLIMPORT int segvec_merge_deletes_pct;
extern PGDLLIMPORT int segvec_settle_ratio;

/*
 * An index whose unsettled work is small waits up to this many
 * segvec.naptime of quiet before it is settled (SegvecSettleDue)
 */
#define SEGVEC_SETTLE_MAX_NAPS	64

/*
 * Called with true before a merge builds its segment and with false after
 * it (also on error): while a merge builds, it holds the merge lock, not
 * the compaction lock, and a background worker lets another compaction of
 * the index run (jobs/worker.c sets the hook).
 */
typedef void (*SegvecMergeBuildHook) (bool building);
extern PGDLLIMPORT SegvecMergeBuildHook segvec_merge_build_hook;

/* What a compaction did */
typedef struct SegvecCompactStats
{
	int64		docs_compacted; /* docs moved from the mutable segment */
	int			segments_created;	/* from the mutable segment */
	int			segments_merged;	/* old segments merged away */
	bool		merges_deferred;	/* stopped merging: compaction due */
	bool		merge_lock_busy;	/* no merges: the merge lock was taken */
} SegvecCompactStats;

extern void SegvecCompactInit(void);
extern int	SegvecCompactThreshold(Relation index);
extern void SegvecCompact(Relation index, SegvecCompactStats *stats);
extern void SegvecCompactDrain(Relation index, SegvecCompactStats *stats);
extern void SegvecProcessGarbage(Relation index);
extern void SegvecInstallSegments(Relation index, SegvecSegment *segs,
								  int nsegs, uint64 next_seqno);
extern int	SegvecMaxBuildDocs(int dim, int m);
extern int	SegvecMaxMergeDocs(int m);
extern void SegvecMergeSegments(Relation index, SegvecCompactStats *stats);
extern void SegvecMergeBuiltSegments(Relation index);
extern bool SegvecMergeDue(Relation index);
extern bool SegvecSettleDue(Relation index, int *quiet_naps);
extern void SegvecSettle(Relation index, SegvecCompactStats *stats);

/* shrink.c */
extern bool SegvecShrink(Relation index, int timeout_ms);
extern bool SegvecMutableRelocate(Relation index);
extern void SegvecShrinkBuilt(Relation index);

/*
 * The merge locks: heavyweight page locks on block numbers no page has (as
 * the compaction lock is one on the metapage's), one per merge lane.  The
 * major lane's merge (the merge lock) holds it exclusively from choosing
 * its inputs to its install; so does the minor lane's (the minor merge
 * lock), which runs only while the merge lock is taken and merges only
 * small segments (compact.c, "Merge lanes"), so that a long merge of a big
 * segment does not leave the compactions' segments to pile up.  VACUUM's
 * cleanup scan takes both (share, without waiting) before it takes pages
 * nothing points at, since a merge's extent is such pages until installed.
 */
#define SEGVEC_MERGE_LOCK_BLKNO	((BlockNumber) 0xFFFFFFFE)
#define SEGVEC_MINOR_LOCK_BLKNO	((BlockNumber) 0xFFFFFFFD)

#endif							/* SEGVEC_COMPACT_H */

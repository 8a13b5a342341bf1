/*-------------------------------------------------------------------------
 *
 * keymap_int.h
 *	  What the keymap's files share, from the bottom up: keymapsrc.c (keys
 *	  and checksums, entries, the directory, run page reads, sources and
 *	  their merges), keymapchain.c (the change chains and the chain cache),
 *	  keymaprun.c (run look-ups, writing and installing runs, snapshots, the
 *	  tiered run merges); keymap.c (look-ups) is above them all.  Other
 *	  subsystems use keymap.h.
 *
 * src/keymap/keymap_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_KEYMAP_INT_H
#define SEGVEC_KEYMAP_INT_H

#include "lib/binaryheap.h"

#include "keymap/keymap.h"
#include "store/store.h"

/* A growing array of entries */
typedef struct EntryArray
{
	KeymapEntry *items;
	int64		n;
	int64		max;
} EntryArray;

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

/* A merge of sources: entries in (key hash, doc id) order, the newest wins */
typedef struct KeyMerge
{
	Relation	index;
	KeySource  *src;
	int			nsrc;
	binaryheap *heap;
	bool		drop_removes;
} KeyMerge;

/* Sort order of run entries: key hash, then doc id (the remove bit aside) */
static inline int
KmRunCmp(const KeymapEntry *a, const KeymapEntry *b)
{
	uint64		da = a->docid & ~KEYMAP_DOCID_REMOVED;
	uint64		db = b->docid & ~KEYMAP_DOCID_REMOVED;

	if (a->key_hash != b->key_hash)
		return a->key_hash < b->key_hash ? -1 : 1;
	if (da != db)
		return da < db ? -1 : 1;
	return 0;
}

/* keymapsrc.c */
extern int	KmEntryCmp(const void *a, const void *b);
extern void	KmCheckRunPage(Relation index, const SegvecKeymapRun *run,
					Page page, BlockNumber blkno);
extern uint32	KmReadRunPage(Relation index, const SegvecKeymapRun *run,
					uint32 p, KeymapEntry *out, KeymapEntry *first);
extern void	KmArrayAdd(EntryArray *a, const KeymapEntry *e);
extern void	KmFoldChanges(EntryArray *a, bool drop_removes);
extern void	KmMergeBegin(KeyMerge *m, Relation index, KeySource *src, int nsrc,
					bool drop_removes);
extern bool	KmMergeNext(KeyMerge *m, KeymapEntry *out);
extern void	KmMergeEnd(KeyMerge *m);
extern void	KmReadDir(Relation index, KeymapDir *dir);
extern void	KmReadDirFrozen(Relation index, int b, BlockNumber *frozen);

/* keymapchain.c */
extern void	KmReadChain(Relation index, BlockNumber blkno, uint32 epoch,
					bool onekey, uint64 key, EntryArray *out,
					uint32 *nchanges);
extern void	KmReadChainKey(Relation index, const KeymapDir *dir,
					BlockNumber head, uint64 key, EntryArray *out,
					KeymapDocLocation *loc);
extern bool	KmChainsKeyLoc(Relation index, const KeymapDir *dir,
					const BlockNumber *chains, uint64 key,
					KeymapDocLocation *loc, bool *any);

/* keymaprun.c */
extern void	KmRunLookup(Relation index, const KeymapDir *dir,
					const SegvecKeymapRun *run, uint64 key, EntryArray *out);

#endif							/* SEGVEC_KEYMAP_INT_H */

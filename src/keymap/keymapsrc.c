/*-------------------------------------------------------------------------
 *
 * keymapsrc.c
 *	  The keymap's keys and sources of entries: key hashes and vector
 *	  checksums, growing entry arrays, folding changes, the directory copy of
 *	  the metapage, run stamps and page reads, and merges of sorted sources,
 *	  newest first (see keymap.c for the design).
 *
 * src/keymap/keymapsrc.c
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
	return IndexRelationGetNumberOfAttributes(index) >
		IndexRelationGetNumberOfKeyAttributes(index);
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
void
KmCheckRunPage(Relation index, const SegvecKeymapRun *run, Page page,
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
uint32
KmReadRunPage(Relation index, const SegvecKeymapRun *run, uint32 p,
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
	KmCheckRunPage(index, run, page, blkno);
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
	int			c = KmRunCmp(&sa->e, &sb->e);

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
		if (i + 1 < a->n && KmRunCmp(&tmp[i].e, &tmp[i + 1].e) == 0)
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
	int			c = KmRunCmp(&sa->cur, &sb->cur);

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
			   KmRunCmp(&((KeySource *) DatumGetPointer(binaryheap_first(m->heap)))->cur,
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

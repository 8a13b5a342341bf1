/*-------------------------------------------------------------------------
 *
 * segvecdocs.c
 *	  The index's docs as the ft functions read them: a live doc by its doc
 *	  id, every live doc of a segment, a segment's reachability and the
 *	  split of its bytes; and dropping a doc for a test hook.
 *
 * The ft functions (ft/) see an index through these and the storage
 * layer's metapage and keymap calls, not through the graph segments'
 * layout: finding a doc in a segment, its tombstone bit, its vector, the
 * graph's links and the mutable segment's aliases stay behind this
 * file.
 *
 * src/am/segvecdocs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"

#include "am/am.h"
#include "graph/graph.h"

/* What find_in_mutable looks for, and where it puts what it finds */
typedef struct FindState
{
	uint64		docid;
	SegvecFoundDoc *out;
} FindState;

static void
find_in_mutable(const SegvecDocInfo *doc, const float *vector, int dim,
				void *arg)
{
	FindState  *fs = (FindState *) arg;

	if (doc->docid == fs->docid && !fs->out->found)
	{
		fs->out->doc = *doc;
		fs->out->vector = palloc(sizeof(float) * dim);
		memcpy(fs->out->vector, vector, sizeof(float) * dim);
		fs->out->segno = 0;
		fs->out->found = true;
	}
}

static bool
tombstoned(Relation index, const SegvecSegment *seg, uint32 node)
{
	uint8	   *tomb = GraphGetTombstones(index, seg);
	bool		result;

	result = GraphTombstoneIsSet(tomb, node);
	pfree(tomb);
	return result;
}

/*
 * SegvecFetchDoc: find the live doc with this doc id in the segments info
 * lists (SegvecGetMetaInfo): in an immutable segment (binary search of its
 * doc area, not tombstoned) or the mutable segment (an alias resolved to
 * its vector).  Fills *out (out->vector palloc'd, info->dimensions floats;
 * out->segno 0 for the mutable segment) and returns true, or returns
 * false (out->found false) when there is none.  Takes and releases its own
 * buffer locks, share.
 */
bool
SegvecFetchDoc(Relation index, const SegvecMetaInfo *info, uint64 docid,
			   SegvecFoundDoc *out)
{
	int			i;
	FindState	fs;

	memset(out, 0, sizeof(SegvecFoundDoc));
	for (i = 0; i < info->nsegments; i++)
	{
		const SegvecSegment *seg = &info->segments[i];
		int64		node = GraphFindDoc(index, seg, docid);

		if (node < 0 || tombstoned(index, seg, (uint32) node))
			continue;
		GraphReadDocs(index, seg, (uint32) node, 1, &out->doc);
		out->vector = palloc(sizeof(float) * info->dimensions);
		GraphReadVector(index, seg, (uint32) node, info->dimensions, out->vector);
		out->segno = seg->segno;
		out->found = true;
		return true;
	}
	fs.docid = docid;
	fs.out = out;
	if (info->dimensions > 0)
		GraphMutableScanDocs(index, info, find_in_mutable, NULL, &fs);
	return out->found;
}

/*
 * SegvecSegmentBytes: how many bytes of graph segment seg (of dim
 * dimensions) hold codes, vectors, graph links and docs.
 */
void
SegvecSegmentBytes(const SegvecSegment *seg, int dim, int64 *codes,
				   int64 *vectors, int64 *graph, int64 *docs)
{
	GraphSegmentSplit(seg, dim, codes, vectors, graph, docs);
}

/*
 * SegvecScanMutableDocs: call doc for every doc of the mutable segment,
 * an alias with its target's vector, and gone (when not NULL) for an alias
 * whose target and row are gone and for a stale doc (a rolled-back vector
 * of another length), neither of which a search returns.  As
 * GraphMutableScanDocs, which it is.
 */
void
SegvecScanMutableDocs(Relation index, const SegvecMetaInfo *info,
					  SegvecDocCallback doc, SegvecDocGoneCallback gone,
					  void *arg)
{
	GraphMutableScanDocs(index, info, doc, gone, arg);
}

/*
 * SegvecSegmentLiveDocs: the docs of graph segment seg that are not
 * tombstoned, in node order, palloc'd; *ndocs gets their count.
 */
SegvecDocInfo *
SegvecSegmentLiveDocs(Relation index, const SegvecSegment *seg, int *ndocs)
{
	uint8	   *tomb = GraphGetTombstones(index, seg);
	SegvecDocInfo *docs = palloc(sizeof(SegvecDocInfo) * Max(seg->ndocs, 1));
	uint32		n;
	int			live = 0;

	GraphReadDocs(index, seg, 0, seg->ndocs, docs);
	for (n = 0; n < seg->ndocs; n++)
		if (!GraphTombstoneIsSet(tomb, n))
			docs[live++] = docs[n];
	pfree(tomb);
	*ndocs = live;
	return docs;
}

/*
 * SegvecSegmentLiveFilters: the filter entries of graph segment seg's docs
 * that are not tombstoned, in node order (the order SegvecSegmentLiveDocs
 * returns the docs in), SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters) bytes
 * each, palloc'd; NULL if the segment has none.
 */
char *
SegvecSegmentLiveFilters(Relation index, const SegvecSegment *seg)
{
	Size		fbytes = SEGVEC_FILTER_ENTRY_BYTES(seg->nfilters);
	uint32		npages = GraphFilterPages(seg);
	uint8	   *tomb;
	char	   *out;
	Buffer		buf = InvalidBuffer;
	uint32		pageno;
	Size		live = 0;

	if (seg->nfilters == 0)
		return NULL;
	tomb = GraphGetTombstones(index, seg);
	out = palloc(fbytes * Max(seg->ndocs, 1));
	for (pageno = 0; pageno < npages; pageno++)
	{
		uint32		first;
		uint32		count;
		const char *entries;
		uint32		i;

		CHECK_FOR_INTERRUPTS();
		entries = GraphPinFilterPage(index, seg, pageno, &buf, &first,
									 &count);
		for (i = 0; i < count; i++)
			if (!GraphTombstoneIsSet(tomb, first + i))
				memcpy(out + fbytes * live++, entries + (Size) i * fbytes,
					   fbytes);
	}
	GraphReleaseFilterPage(index, seg, &buf);
	pfree(tomb);
	return out;
}

/*
 * SegvecSegmentPostingsOk: does graph segment seg's postings area (if it
 * has one) hold what its filter values give?  dim: the index's dimensions.
 */
bool
SegvecSegmentPostingsOk(Relation index, const SegvecSegment *seg, int dim)
{
	return GraphPostingsCheck(index, seg, dim);
}

/*
 * SegvecSegmentUnreachable: how many live nodes of graph segment seg its
 * layer 0 does not reach from the entry point; when there are some,
 * *docid gets the doc id of one of them.
 */
int64
SegvecSegmentUnreachable(Relation index, const SegvecSegment *seg,
						 uint64 *docid)
{
	uint8	   *tomb = GraphGetTombstones(index, seg);
	int64		first;
	int64		unreached;

	unreached = GraphCountUnreachable(index, seg, tomb, &first);
	if (unreached > 0)
	{
		SegvecDocInfo doc;

		GraphReadDocs(index, seg, (uint32) first, 1, &doc);
		*docid = doc.docid;
	}
	pfree(tomb);
	return unreached;
}

/*
 * SegvecDropDoc: remove the doc with this doc id from the index and leave
 * its keymap entry, the state a lost doc leaves (for ft._stage_phantom, a
 * test hook): tombstoned in the graph segment that holds it, or deleted
 * from its mutable segment page (single-piece docs only).  Takes the
 * metapage's page lock, exclusive, for the change; ERROR when there is no
 * such doc.
 */
void
SegvecDropDoc(Relation index, uint64 docid)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	BlockNumber blkno;
	int			s;

	LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
	SegvecGetMetaInfo(index, info);
	for (s = 0; s < info->nsegments; s++)
	{
		SegvecSegment *seg = &info->segments[s];
		int64		node = GraphFindDoc(index, seg, docid);
		uint32		node32;

		if (node < 0)
			continue;
		node32 = (uint32) node;
		GraphSetTombstones(index, seg, &node32, 1);
		UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
		return;
	}

	/* the mutable segment: find the page by its sequence number */
	blkno = info->mutable_head;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		if (!SegvecPageIsDeleted(page) &&
			SegvecPageGetOpaque(page)->seqno == (docid >> 16))
		{
			OffsetNumber off;
			SegvecMutableTuple tup = NULL;
			GenericXLogState *state;
			Page		wpage;

			for (off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
			{
				tup = (SegvecMutableTuple) PageGetItem(page, PageGetItemId(page, off));
				if (tup->docid == docid)
					break;
			}
			if (off > PageGetMaxOffsetNumber(page))
				elog(ERROR, "doc not found on its page");
			if (tup->npieces != 1)
				elog(ERROR, "ft._stage_phantom handles only single-piece docs");
			state = GenericXLogStart(index);
			wpage = GenericXLogRegisterBuffer(state, buf, 0);
			PageIndexMultiDelete(wpage, &off, 1);
			GenericXLogFinish(state);
			UnlockReleaseBuffer(buf);
			UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
			return;
		}
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		UnlockReleaseBuffer(buf);
	}
	elog(ERROR, "doc " UINT64_FORMAT " not found", docid);
}

/*-------------------------------------------------------------------------
 *
 * segvecdocs.c
 *	  The index's docs as the ft functions read them: a live doc by its doc
 *	  id, and what a graph segment's bytes hold.
 *
 * The ft functions (ft/) see an index through these and the storage
 * layer's metapage and keymap calls, not through the graph segments'
 * layout: finding a doc in a segment, its tombstone bit, its vector and
 * the mutable segment's aliases stay behind this file.
 *
 * src/am/segvecdocs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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

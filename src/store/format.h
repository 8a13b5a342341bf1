/*-------------------------------------------------------------------------
 *
 * format.h
 *	  The on-disk format of a segvec index: every page kind, the metapage
 *	  (manifest, garbage list, keymap directory), the mutable segment's doc
 *	  pieces, an immutable segment's node records and the keymap's entries.
 *
 * Everything here is stored; changing any of it means a new
 * SEGVEC_VERSION.  src/README.md describes each page and the WAL records
 * that change it.
 *
 * src/store/format.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_FORMAT_H
#define SEGVEC_FORMAT_H

#include "postgres.h"

#include "storage/block.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"

/* ----------------
 * Page opaque data, at the end of every page but the metapage's too
 * ----------------
 */
typedef struct SegvecPageOpaqueData
{
	BlockNumber nextblkno;		/* next page of the same chain, or Invalid */
	uint16		flags;			/* SEGVEC_PAGE_* */
	uint16		page_id;		/* SEGVEC_PAGE_ID, for pg_filedump */
	uint64		seqno;			/* mutable page: page sequence number;
								 * deleted page: FullTransactionId after
								 * which it may be recycled */
	uint32		next_docno;		/* mutable page: doc number of its next doc */
	uint32		stamp;			/* segment page: its segment's stamp
								 * (GraphSegmentStamp), checked by pin-only
								 * reads; 0 on other pages and on segment
								 * pages written before stamps */
} SegvecPageOpaqueData;

typedef SegvecPageOpaqueData *SegvecPageOpaque;

#define SEGVEC_PAGE_ID			0xFF84

#define SEGVEC_PAGE_META		(1 << 0)
#define SEGVEC_PAGE_MUTABLE		(1 << 1)
#define SEGVEC_PAGE_DELETED		(1 << 2)	/* unlinked, awaiting recycling */
#define SEGVEC_PAGE_SEGMENT		(1 << 3)	/* page of an immutable segment */
#define SEGVEC_PAGE_KEYMAP_RUN	(1 << 4)	/* keymap snapshot run */
#define SEGVEC_PAGE_KEYMAP_DELTA (1 << 5)	/* keymap changes since snapshot */
#define SEGVEC_PAGE_MANIFEST	(1 << 6)	/* manifest overflow page */

#define SegvecPageGetOpaque(page) \
	((SegvecPageOpaque) PageGetSpecialPointer(page))
#define SegvecPageIsMeta(page) \
	((SegvecPageGetOpaque(page)->flags & SEGVEC_PAGE_META) != 0)
#define SegvecPageIsMutable(page) \
	((SegvecPageGetOpaque(page)->flags & SEGVEC_PAGE_MUTABLE) != 0)
#define SegvecPageIsDeleted(page) \
	((SegvecPageGetOpaque(page)->flags & SEGVEC_PAGE_DELETED) != 0)

/* ----------------
 * Reserved block numbers
 * ----------------
 */
#define SEGVEC_METAPAGE_BLKNO	0

/* ----------------
 * A doc's identity, as the mutable segment's pieces and an immutable
 * segment's doc area store it (32 bytes)
 * ----------------
 */
typedef struct SegvecDocInfo
{
	uint64		docid;			/* stable, index-wide doc id */
	uint64		key_hash;		/* XXH3-64 of the id key's send form */
	uint64		checksum;		/* XXH3-64 of the vector's float4 bytes */
	ItemPointerData heaptid;	/* heap row this doc indexes */
	uint16		flags;			/* SEGVEC_DOC_* */
} SegvecDocInfo;

#define SEGVEC_DOC_HAS_KEY		(1 << 0)	/* key_hash is set (INCLUDE id) */
#define SEGVEC_DOC_ALIAS		(1 << 1)	/* mutable segment only: an alias
											 * (no vector: it shares its
											 * target's, see below) */

/* ----------------
 * Immutable segments (their pages: below; graph/graph.h reads them)
 * ----------------
 */
/* Bytes of a segment page that hold data (between header and opaque) */
#define SEGVEC_SEGPAGE_USABLE \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - \
	 MAXALIGN(sizeof(SegvecPageOpaqueData)))

/*
 * Segment descriptor, one per live immutable segment, kept in the
 * metapage's manifest.  Block numbers are absolute.
 */
typedef struct SegvecSegment
{
	uint32		segno;			/* unique within the index, increasing */
	uint32		ndocs;			/* nodes in the graph */
	uint32		ntombstones;	/* nodes VACUUM has tombstoned */
	int32		entry_point;	/* node to start searches at, -1 if empty */
	uint16		max_level;		/* level of the entry point */
	uint16		m;				/* HNSW M of this graph */
	uint32		node_size;		/* bytes of one node record */
	uint16		nodes_per_page; /* 0 when a node spans pages */
	uint16		pages_per_node; /* 0 when a page holds whole nodes */
	uint32		upper_size;		/* uint32 entries in the upper-layer area */
	BlockNumber start;			/* first block of the extent */
	uint32		npages;			/* blocks in the extent */
	BlockNumber doc_start;		/* first doc-area page */
	BlockNumber upper_start;	/* first upper-layer page */
	BlockNumber node_start;		/* first node page */
	uint32		npostpages;		/* pages of the postings area, just before
								 * the filter area (SEGVEC_POSTINGS_*); 0:
								 * none (the padding of older builds, which
								 * readers check against the layout) */
	uint64		min_docid;		/* doc ids held, sorted in the doc area */
	uint64		max_docid;
	uint16		quant;			/* SEGVEC_QUANT_* of the node records */
	uint16		nfilters;		/* filter columns: each node has an entry
								 * in the filter area, the extent's last
								 * pages (SEGVEC_FILTER_*); 0: none */
	uint32		code_size;		/* bytes of a node record's quantized part */
	BlockNumber qparam_start;	/* quantizer parameters, or Invalid */
	BlockNumber vec_start;		/* first vector page, or Invalid when the
								 * vectors are in the node records */
} SegvecSegment;

/*
 * Quantization of a segment's node records.  The value is stored in the
 * metapage (frozen options) and in each segment descriptor: never
 * renumber.
 *
 *	NONE: a node record holds the float4 vector; a search computes exact
 *	  distances all the way.
 *	SQ8: a node record holds an 8-bit code per dimension and the vector's
 *	  norm; the float4 vectors are in the segment's vector area, read only
 *	  to rerank (graph/quant.c).  The vector area is packed: vector i
 *	  starts at byte i * dim * 4 of the area's data, counted over the
 *	  usable bytes of its pages, and may cross a page boundary.  The quantizer parameters (per dimension
 *	  the lowest value and the step, 2 * dim float4) are in the parameter
 *	  area.
 *	RABITQ: as SQ8 (vector area, parameter area), but a node record holds
 *	  one bit per dimension (padded to a multiple of 64) and three float4
 *	  (graph/rabitq.c); the parameters are the segment's centroid and the
 *	  seed of its random rotation.  Format version 4.
 */
#define SEGVEC_QUANT_NONE		0
#define SEGVEC_QUANT_SQ8		1
#define SEGVEC_QUANT_RABITQ		2

/* ----------------
 * Metapage
 * ----------------
 */
#define SEGVEC_MAGIC			0x53475643	/* "SGVC" */
#define SEGVEC_VERSION			6

/*
 * Options frozen into the metapage at build time (the reloptions can be
 * changed by ALTER INDEX, the index keeps what it was built with).
 */
typedef struct SegvecFrozenOptions
{
	int32		m;
	int32		ef_construction;
	int32		dimensions;		/* as given in WITH, 0 if not */
	int32		quantization;	/* SEGVEC_QUANT_* CREATE INDEX wrote; later
								 * segments follow the reloption
								 * (SegvecIndexQuantization) */
} SegvecFrozenOptions;

/*
 * Pages an install made unreachable, to be marked deleted (and so, later,
 * recycled).  The install that drops them records them here in the same WAL
 * record, so a crash before they are marked cannot leak them: the next
 * compaction or VACUUM (whichever holds the compaction lock first) finishes
 * the job.
 *
 * An entry names its pages by their kind (pageflag) and identity: a page is
 * marked only if it carries pageflag, is not deleted yet, and its opaque
 * seqno lies in [id_lo, id_hi) (a mutable page's sequence number, a segment
 * page's segment number, a manifest page's generation).  Pages keep their
 * identity until they are recycled and reused, and identities are never
 * reused, so processing an entry twice, or after VACUUM recycled some of
 * its pages, never touches a live page.
 */
#define SEGVEC_GARBAGE_CHAIN	1	/* pages linked by nextblkno from first */
#define SEGVEC_GARBAGE_EXTENT	2	/* npages blocks from first */

typedef struct SegvecGarbage
{
	uint16		kind;			/* SEGVEC_GARBAGE_* */
	uint16		pageflag;		/* SEGVEC_PAGE_* its pages carry */
	BlockNumber first;
	uint32		npages;			/* extent: its length; chain: 0 */
	uint32		unused;
	uint64		id_lo;			/* identities of its pages: [id_lo, id_hi) */
	uint64		id_hi;
	uint64		xid;			/* FullTransactionId of the install */
} SegvecGarbage;

#define SEGVEC_MAX_GARBAGE		16

/*
 * The metapage holds the first SEGVEC_META_SEGMENTS segment descriptors of
 * the manifest; the rest live in a chain of manifest overflow pages.  There
 * is no limit on the number of segments.
 */
#define SEGVEC_META_SEGMENTS	24

/* Segment descriptors in one manifest overflow page */
#define SEGVEC_MANIFEST_PER_PAGE \
	((int) (SEGVEC_SEGPAGE_USABLE / sizeof(SegvecSegment)))

/*
 * The keymap's changes since its snapshot: 16 buckets chosen by
 * key_hash >> 60, each a chain of delta pages (see keymap/keymap.h).  Few
 * buckets, so that a few changes take few pages; enough that concurrent
 * inserts seldom wait for each other's head page.
 */
#define SEGVEC_KEYMAP_BUCKETS	16

/*
 * A sorted run of the keymap: npages consecutive KEYMAP_RUN pages of
 * KeymapEntry, sorted by (key hash, doc id) across all buckets, at most one
 * entry per doc id; an entry whose doc id carries KEYMAP_DOCID_REMOVED
 * cancels the doc's entry in an older run.  The keymap snapshot is the list
 * of runs, oldest first (see keymap/keymap.c).
 */
typedef struct SegvecKeymapRun
{
	BlockNumber start;			/* first page */
	uint32		npages;
	uint64		nentries;		/* entries, removes included */
	uint64		nremoves;		/* entries that are removes */
	uint32		runno;			/* unique, increasing: identity and age */
	uint32		stamp;			/* stamp of its pages (KeymapRunStamp) */
} SegvecKeymapRun;

/*
 * Most runs the snapshot holds; the tiered policy keeps far fewer (see
 * keymap/keymap.c), and a snapshot merges runs rather than exceed it.
 */
#define SEGVEC_KEYMAP_MAX_RUNS	40

/*
 * A free extent: blocks [start, start + npages) that no live structure
 * uses, freed by the install whose FullTransactionId is xid.  They are
 * reused for new extents once xid is older than every
 * snapshot: no scan can then still hold a manifest or keymap directory
 * that points into them (src/README.md, "Free extents").
 */
typedef struct SegvecFreeExtent
{
	BlockNumber start;
	uint32		npages;
	uint64		xid;			/* FullTransactionId as uint64 */
} SegvecFreeExtent;

#define SEGVEC_MAX_FREE_EXTENTS	160

typedef struct SegvecMetaPageData
{
	uint32		magic;
	uint32		version;
	int32		dimensions;		/* 0 until the first vector is indexed */
	int32		metric;			/* SegvecMetric */
	TransactionId dimensions_xid;	/* who set dimensions from a vector;
									 * Invalid once known committed */
	SegvecFrozenOptions opts;
	BlockNumber mutable_head;	/* first page of the mutable segment */
	BlockNumber mutable_tail;	/* page new docs are appended to */
	uint64		next_seqno;		/* sequence number of the next mutable page */
	uint64		mutable_head_seqno; /* sequence number of mutable_head */
	uint32		next_segno;		/* number of the next immutable segment */
	uint32		ngarbage;		/* entries used in garbage[] */
	SegvecGarbage garbage[SEGVEC_MAX_GARBAGE];
	uint32		nsegments;		/* the manifest: live immutable segments */
	uint32		manifest_gen;	/* generation of the overflow chain */
	BlockNumber manifest_head;	/* overflow chain: segments past the
								 * first SEGVEC_META_SEGMENTS, or Invalid */
	SegvecSegment segments[SEGVEC_META_SEGMENTS];

	/* counters of installs, for ft.storage_stats */
	uint64		ncompactions;	/* installs of a frozen prefix */
	uint64		nmerges;		/* installs of a segment merge */
	uint64		nrun_merges;	/* installs of a keymap run merge */

	/* free extents, for new segments, keymap runs and manifest chains */
	uint32		nfree;
	uint32		free_unused;
	SegvecFreeExtent free[SEGVEC_MAX_FREE_EXTENTS];

	/* keymap: the snapshot's runs (oldest first), the changes since */
	uint32		keymap_epoch;	/* snapshots installed so far */
	uint32		keymap_nruns;
	uint32		keymap_next_runno;
	uint32		keymap_build;	/* random stamp of this build of the index
								 * (0 in indexes built before it existed):
								 * keys backends' keymap caches */
	SegvecKeymapRun keymap_runs[SEGVEC_KEYMAP_MAX_RUNS];
	BlockNumber delta_head[SEGVEC_KEYMAP_BUCKETS];	/* changes being added */
	BlockNumber delta_frozen[SEGVEC_KEYMAP_BUCKETS];	/* being snapshotted */
} SegvecMetaPageData;

typedef SegvecMetaPageData *SegvecMetaPage;

#define SegvecPageGetMeta(page) ((SegvecMetaPage) PageGetContents(page))


/* ----------------
 * On-disk structs: one doc of the mutable segment
 *
 * A doc is stored as one or more pieces, consecutive in chain order; a
 * piece holds a slice of the vector.  Small vectors are one piece; a vector
 * bigger than a page spans pages.  Every piece carries the heap TID and the
 * doc id, so VACUUM judges each piece on its own.
 * ----------------
 */
typedef struct SegvecMutableTupleData
{
	uint64		docid;			/* page seqno << 16 | doc number in page */
	uint64		key_hash;		/* XXH3-64 of the id key's send form */
	uint64		checksum;		/* XXH3-64 of the vector's float4 bytes */
	ItemPointerData heaptid;	/* heap row this doc indexes */
	uint16		flags;			/* SEGVEC_DOC_* */
	uint16		pieceno;		/* 0 .. npieces - 1 */
	uint16		npieces;
	uint16		nfloats;		/* float4 elements in this piece */
	float4		data[FLEXIBLE_ARRAY_MEMBER];
} SegvecMutableTupleData;

typedef SegvecMutableTupleData *SegvecMutableTuple;

#define SEGVEC_MUTABLE_HDRSZ	offsetof(SegvecMutableTupleData, data)

/* Largest item a mutable page holds, and the floats that fit in it */
#define SEGVEC_MAX_ITEMSZ \
	MAXALIGN_DOWN(BLCKSZ - SizeOfPageHeaderData - sizeof(ItemIdData) - \
				  MAXALIGN(sizeof(SegvecPageOpaqueData)))
#define SEGVEC_MAX_PIECE_FLOATS \
	((int) ((SEGVEC_MAX_ITEMSZ - SEGVEC_MUTABLE_HDRSZ) / sizeof(float4)))

#define SegvecMakeDocId(seqno, off) (((uint64) (seqno) << 16) | (uint64) (off))

/*
 * An alias (SEGVEC_DOC_ALIAS): a doc of the mutable segment that has no
 * vector of its own.  An UPDATE that keeps the id key and the vector of a
 * row appends one instead of a copy: it has its own doc id, key hash,
 * checksum and heap TID (the new row version), npieces 1, nfloats 0, and
 * in place of the floats the doc id of an immutable segment's doc whose
 * vector it shares (the *target*), followed in an index with filter
 * columns by the alias's own filter entry (below: the new row version's
 * values, never the target's).  SEGVEC_ALIAS_ITEMSZ is the size without
 * an entry, the least an alias item has.  See src/README.md, "Aliases".
 */
#define SEGVEC_ALIAS_ITEMSZ		MAXALIGN(SEGVEC_MUTABLE_HDRSZ + sizeof(uint64))
#define SEGVEC_ALIAS_ITEMSZ_FILTERED(fbytes) \
	MAXALIGN(SEGVEC_MUTABLE_HDRSZ + sizeof(uint64) + (fbytes))

/* ----------------
 * Filter columns (format version 5)
 *
 * The key columns after the vector are filter columns.  A doc's filter
 * values are one *filter entry* of SEGVEC_FILTER_ENTRY_BYTES(n) bytes for n
 * filter columns: a uint64 whose bit i is set when column i is not NULL,
 * then one uint64 per column (the value as an int64 for the integer-like
 * types, so ranges compare; a hash for text and uuid).  A mutable doc's
 * pieces each carry the entry right after their floats (an item with none,
 * or a shorter one, reads as all NULL); an immutable segment keeps its
 * nodes' entries in node order in its *filter area*, the last pages of its
 * extent, SEGVEC_FILTERS_PER_PAGE(n) entries a page, none across pages.
 * ----------------
 */
#define SEGVEC_MAX_FILTERS		(INDEX_MAX_KEYS - 2)
#define SEGVEC_FILTER_ENTRY_BYTES(n) \
	((n) > 0 ? (Size) sizeof(uint64) * ((n) + 1) : (Size) 0)
#define SEGVEC_FILTER_MAX_BYTES	SEGVEC_FILTER_ENTRY_BYTES(SEGVEC_MAX_FILTERS)
/* the two signature bits of a label of hash h (SegvecLabelHash) */
#define SEGVEC_LABEL_BITS(h) \
	((UINT64CONST(1) << ((h) & 63)) | (UINT64CONST(1) << (((h) >> 6) & 63)))
#define SEGVEC_FILTERS_PER_PAGE(n) \
	((uint32) (SEGVEC_SEGPAGE_USABLE / SEGVEC_FILTER_ENTRY_BYTES(n)))

/*
 * Postings of a segment's filter columns.  An immutable segment written
 * since postings exist may have a *postings area* of npostpages pages
 * between its node records (or, quantized, its vector area) and its filter
 * area; readers that do not know it never look there.  The area is one
 * byte string packed across its pages' usable bytes (like the vector
 * area): a SegvecPostingsHeader; a SegvecPostingsColumn per filter column;
 * the directory, ndir SegvecPostingsEntry sorted by column, then by value
 * (as int64, so that a range of an integer column is a run of entries);
 * then nids uint32 node numbers: each value's list, ascending, the lists
 * of a column in the order of its values (so a range's nodes are a run
 * too).  A column has postings (SEGVEC_POSTINGS_COLUMN_HAS) when it is not
 * a label array and has at most Max(SEGVEC_POSTINGS_MIN_VALUES, ndocs /
 * SEGVEC_POSTINGS_VALUES_DIV) distinct values in the segment: then its
 * directory holds *every* non-NULL value its nodes have, as the filter
 * entries keep it (8 bytes: the int64 or the hash, so a look-up compares
 * what the entries compare), with the nodes that have it (tombstoned ones
 * included: tombstones come later); a value it does not hold is on no
 * node.
 *
 * A label array column has *bit postings* instead
 * (SEGVEC_POSTINGS_COLUMN_BITS, never with _HAS, so that readers that know
 * only value postings pass it by): its values are the bits (0 .. 63) of
 * its entries' signatures, a node being on the list of each bit its
 * signature has.  The directory holds every bit some node has, ascending,
 * with the count of nodes that have it; a bit that more than ndocs /
 * SEGVEC_POSTINGS_BITS_DIV nodes have, or that would take the lists past
 * SEGVEC_POSTINGS_BITS_PER_NODE node numbers per node (the bits are given
 * lists by ascending count, then bit), has no list: its entry's list is
 * SEGVEC_POSTINGS_NO_LIST, and the column's nids count only listed bits'
 * nodes.  So a bit the directory lacks is on no node, and the nodes whose
 * signature has a set of bits are the intersection of those bits' lists
 * (a superset when some of the bits have none).
 *
 * A label array column whose segment's writer knew every node's labels
 * has *label postings* instead (SEGVEC_POSTINGS_COLUMN_LABELS, alone, so
 * that readers that know only value or bit postings pass it by): its
 * values are the labels' 64-bit hashes (SegvecLabelHash, the hash the
 * signature's bits come from), a node being on the list of each label it
 * has; the directory holds every label some node has, the lists name the
 * nodes exactly (the signature's false matches are on none).  A node whose
 * heap row was gone when its labels were read (dead to every snapshot) is
 * on no list.  The writer takes them when the segment's distinct labels
 * are at most Max(SEGVEC_POSTINGS_MIN_VALUES, ndocs /
 * SEGVEC_POSTINGS_VALUES_DIV) and its (label, node) pairs at most
 * SEGVEC_POSTINGS_BITS_PER_NODE per node; bit postings otherwise.  See
 * src/README.md, "Postings".
 */
#define SEGVEC_POSTINGS_MAGIC		0x53475650	/* "SGVP" */
#define SEGVEC_POSTINGS_MIN_VALUES	1024
#define SEGVEC_POSTINGS_VALUES_DIV	2
#define SEGVEC_POSTINGS_BITS_DIV	4
#define SEGVEC_POSTINGS_BITS_PER_NODE	8
#define SEGVEC_POSTINGS_NO_LIST		0xFFFFFFFF

typedef struct SegvecPostingsHeader
{
	uint32		magic;			/* SEGVEC_POSTINGS_MAGIC */
	uint32		nfilters;		/* columns that follow */
	uint32		ndir;			/* directory entries, all columns */
	uint32		nids;			/* node numbers in all lists */
} SegvecPostingsHeader;

#define SEGVEC_POSTINGS_COLUMN_HAS	1	/* the column has postings */
#define SEGVEC_POSTINGS_COLUMN_BITS	2	/* the column has bit postings */
#define SEGVEC_POSTINGS_COLUMN_LABELS	4	/* the column has label postings */

typedef struct SegvecPostingsColumn
{
	uint32		flags;			/* SEGVEC_POSTINGS_COLUMN_* */
	uint32		first;			/* its first directory entry */
	uint32		count;			/* its directory entries: distinct values
								 * (bits) */
	uint32		ids_first;		/* its first node number among the nids */
	uint32		nids;			/* its node numbers: nodes not NULL in it
								 * (bits: in its lists) */
	uint32		unused;
} SegvecPostingsColumn;

typedef struct SegvecPostingsEntry
{
	int64		value;			/* as the filter entries keep it */
	uint32		count;			/* nodes with the value */
	uint32		list;			/* its list's first node number among the
								 * nids (a bit without a list:
								 * SEGVEC_POSTINGS_NO_LIST) */
} SegvecPostingsEntry;

/* byte offsets of the parts of a postings area of nfilters columns */
#define SEGVEC_POSTINGS_DIR_OFF(nfilters) \
	(sizeof(SegvecPostingsHeader) + \
	 sizeof(SegvecPostingsColumn) * (Size) (nfilters))
#define SEGVEC_POSTINGS_IDS_OFF(nfilters, ndir) \
	(SEGVEC_POSTINGS_DIR_OFF(nfilters) + \
	 sizeof(SegvecPostingsEntry) * (Size) (ndir))


/* ----------------
 * Immutable segment pages: node records and per-page arrays
 * ----------------
 */
/* Highest HNSW layer a node can get */
#define SEGVEC_MAX_LEVEL		15

/*
 * Node record header.  It is followed by neighbours[2*M] (uint32 node
 * numbers, the first nneighbors valid) and then the vector (dim float4);
 * in a quantized segment (quant SQ8) by the vector's norm (float4) and its
 * code (dim bytes) instead, padded to a multiple of 4 bytes.
 * The node's upper-layer neighbour lists, for layers 1..level, start at
 * upper_off in the upper-layer area; each is a count and M node numbers.
 */
typedef struct SegvecNodeHeader
{
	uint32		upper_off;
	uint8		level;
	uint8		unused;
	uint16		nneighbors;
} SegvecNodeHeader;

#define SEGVEC_UPPER_LIST_SIZE(m)	((m) + 1)

/* Entries of each per-page array */
#define SEGVEC_DOCS_PER_PAGE	((int) (SEGVEC_SEGPAGE_USABLE / sizeof(SegvecDocInfo)))
#define SEGVEC_UPPER_PER_PAGE	((int) (SEGVEC_SEGPAGE_USABLE / sizeof(uint32)))
#define SEGVEC_TOMB_PER_PAGE	((int) (SEGVEC_SEGPAGE_USABLE * 8))


/* ----------------
 * Keymap pages: snapshot runs and delta chains (see keymap/keymap.h)
 * ----------------
 */
/* A keymap entry (24 bytes): a doc's key hash, doc id and vector checksum */
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
	BlockNumber doc_blkno;		/* an add of an alias: the mutable page
								 * that holds it; else 0 (the metapage's
								 * number: unknown), as in older records */
} KeymapDelta;

/*
 * The head page of a change chain names the chain's last page in its
 * opaque stamp (0, the metapage's number: not known, as in chains of older
 * builds; walk).  See "Keymap pages" in src/README.md.
 */
#define KEYMAP_CHAIN_LAST(page)	(SegvecPageGetOpaque(page)->stamp)

/*
 * Every page of a change chain carries the chain's identity in its opaque
 * seqno: the chain's head block and the keymap epoch when the chain was
 * started.  A chain's pages are freed only by a snapshot install, which
 * advances the epoch, so a page reused for another chain names another
 * head or a later epoch than any directory that named the old chain (a
 * reader on a standby checks it, see "Standbys" in src/README.md).  0 on
 * pages of chains that older builds started (not checked).
 */
#define KEYMAP_CHAIN_ID(head, epoch) \
	(((uint64) (epoch) << 32) | (uint64) (head))

#define KEYMAP_OP_ADD			1
#define KEYMAP_OP_REMOVE		2

/*
 * In a run, the top bit of an entry's doc id marks a remove.  Doc ids stay
 * below 2^63: that would take 2^47 mutable page sequence numbers.
 */
#define KEYMAP_DOCID_REMOVED	(UINT64CONST(1) << 63)

#define KEYMAP_BUCKET(key_hash)	((int) ((key_hash) >> 60))
#define KEYMAP_ENTRIES_PER_PAGE	((int) (SEGVEC_SEGPAGE_USABLE / sizeof(KeymapEntry)))

#endif							/* SEGVEC_FORMAT_H */

/*-------------------------------------------------------------------------
 *
 * am.h
 *	  The segvec index access method: the IndexAmRoutine callbacks, one file
 *	  per phase (build, insert, scan, vacuum, cost, validate), as in
 *	  contrib/bloom.
 *
 * The callbacks sit on top of the other subsystems: they call storage, the
 * graphs, the keymap, compaction and the job table; nothing below calls
 * them.  See src/README.md.
 *
 * src/am/am.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_AM_H
#define SEGVEC_AM_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/stratnum.h"
#include "access/genam.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

#include "store/store.h"

/* ----------------
 * GUCs (defined in segvechandler.c)
 * ----------------
 */
extern PGDLLIMPORT int segvec_ef_search;
/* segvec.ef_search's range; ft.search's ef_search and EF_RUNTIME share it */
#define SEGVEC_MAX_EF_SEARCH	1000
extern PGDLLIMPORT int segvec_max_scan_tuples;
extern PGDLLIMPORT bool segvec_shared_bound;
extern PGDLLIMPORT bool segvec_filter_postings;
extern PGDLLIMPORT int segvec_scan_order;

/* segvec.scan_order: what an ordered scan does with a late find */
typedef enum SegvecScanOrder
{
	SEGVEC_SCAN_ORDER_STRICT,	/* skip it (and count it): output sorted */
	SEGVEC_SCAN_ORDER_RELAXED	/* return it where it was found */
} SegvecScanOrder;

/*
 * Strategies of a label array's family (int4_array_ops, text_array_ops),
 * GIN's numbers: doc && arg, doc @> arg, doc <@ arg, doc = arg
 */
#define SEGVEC_LABELS_OVERLAP		1
#define SEGVEC_LABELS_CONTAINS		2
#define SEGVEC_LABELS_CONTAINED		3
#define SEGVEC_LABELS_EQUAL			4

/*
 * A scan takes a segment's passing docs from its postings' lists when they
 * are at most 1/SEGVEC_POSTINGS_LIST_DIV of its docs (or few enough that it
 * will score them exactly); more are only counted (segvecscan.c; the cost
 * estimate in segveccost.c follows it)
 */
#define SEGVEC_POSTINGS_LIST_DIV	16

/*
 * A label key reads at most 1/SEGVEC_POSTINGS_READ_DIV of its segment's
 * docs in node numbers from bit lists: more (a key of many labels, or of
 * common ones) would cost more than the pass it spares, and would rarely
 * leave few enough nodes to list.
 */
#define SEGVEC_POSTINGS_READ_DIV	2

/* A scan key on a filter column, as a comparison of stored values */
typedef struct SegvecFilterKey
{
	int			col;			/* filter column, 0-based */
	int			strategy;		/* BT*StrategyNumber, or SEGVEC_LABELS_* on
								 * a label array */
	uint64		value;			/* the argument, kept as the column is (a
								 * label array: its signature) */
	uint64	   *labels;			/* a label array: each label's bits */
	uint64	   *hashes;			/* and its hash (SegvecLabelHash) */
	int			nlabels;
	uint64	   *set;			/* = ANY (array): the array's values, kept
								 * as the column is, sorted and distinct */
	int			nset;
} SegvecFilterKey;

/* A scan's keys on filter columns (segvecfilter.c) */
typedef struct SegvecFilter
{
	int			nfilters;		/* the index's filter columns */
	int			nkeys;
	SegvecFilterKey *keys;
	bool		never;			/* a key with a NULL argument, or = ANY of
								 * an array of NULLs only: no row */
	bool		recheck;		/* a key on a hashed column */
} SegvecFilter;

/*
 * What SegvecScanMutableDocs calls for an alias whose target and row are
 * gone, or a stale doc (as graph/'s GraphAliasGoneCallback)
 */
typedef void (*SegvecDocGoneCallback) (const SegvecDocInfo *doc, void *arg);

/* A live doc as SegvecFetchDoc finds it */
typedef struct SegvecFoundDoc
{
	SegvecDocInfo doc;
	float	   *vector;			/* palloc'd, the index's dimensions */
	int32		segno;			/* its graph segment, 0: the mutable one */
	bool		found;
} SegvecFoundDoc;

/* CREATE INDEX phases, for pg_stat_progress_create_index */
#define SEGVEC_PHASE_SCAN		2
#define SEGVEC_PHASE_GRAPH		3
#define SEGVEC_PHASE_WRITE		4

/* ----------------
 * Prototypes
 * ----------------
 */

/* segvechandler.c */
extern void SegvecAmInit(void);
extern Datum segvechandler(PG_FUNCTION_ARGS);
extern bytea *segvecoptions(Datum reloptions, bool validate);

/* segvecbuild.c */
extern IndexBuildResult *segvecbuild(Relation heap, Relation index,
									 IndexInfo *indexInfo);
extern void segvecbuildempty(Relation index);
extern char *segvecbuildphasename(int64 phasenum);

/* segvecinsert.c */
extern bool segvecinsert(Relation index, Datum *values, bool *isnull,
						 ItemPointer ht_ctid, Relation heapRel,
						 IndexUniqueCheck checkUnique,
						 bool indexUnchanged,
						 struct IndexInfo *indexInfo);

/* segvecscan.c */
extern IndexScanDesc segvecbeginscan(Relation r, int nkeys, int norderbys);
extern void segvecrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
						 ScanKey orderbys, int norderbys);
extern bool segvecgettuple(IndexScanDesc scan, ScanDirection dir);
extern void segvecendscan(IndexScanDesc scan);
extern double SegvecScanLastDistance(IndexScanDesc scan);

/* segvecfilter.c */
extern bool SegvecFilterTypeSupported(Oid typid);
extern bool SegvecFilterTypeIsLabels(Oid typid);
extern uint64 SegvecFilterLabels(Datum array, uint64 **each,
								 uint64 **hashes, int *neach);
extern void SegvecFilterFormEntry(Relation index, const Datum *values,
								  const bool *isnull, char *entry);
extern void SegvecFilterCheckColumns(Relation index);
extern void SegvecFilterPrepare(IndexScanDesc scan, SegvecFilter *f);

/*
 * SegvecFilterMatch: does a doc with filter entry entry (store/format.h)
 * pass every key of f?  Inline: a filtered scan asks it of every doc.
 */
static inline bool
SegvecFilterMatch(const SegvecFilter *f, const char *entry)
{
	uint64		present;
	int			i;

	if (f->never)
		return false;
	memcpy(&present, entry, sizeof(uint64));
	for (i = 0; i < f->nkeys; i++)
	{
		const SegvecFilterKey *k = &f->keys[i];
		int64		v;
		int64		a = (int64) k->value;
		bool		pass;

		if (!(present & (UINT64CONST(1) << k->col)))
			return false;
		memcpy(&v, entry + sizeof(uint64) * (k->col + 1), sizeof(uint64));
		if (k->labels != NULL)
		{
			/* a label array's signature: bits of its labels, maybe more */
			uint64		sig = (uint64) v;
			int			j;

			switch (k->strategy)
			{
				case SEGVEC_LABELS_OVERLAP:
					pass = false;
					for (j = 0; j < k->nlabels && !pass; j++)
						pass = (sig & k->labels[j]) == k->labels[j];
					break;
				case SEGVEC_LABELS_CONTAINS:
					pass = (sig & k->value) == k->value;
					break;
				case SEGVEC_LABELS_CONTAINED:
					pass = (sig & ~k->value) == 0;
					break;
				default:
					pass = sig == k->value;
					break;
			}
			if (!pass)
				return false;
			continue;
		}
		if (k->set != NULL)
		{
			/* = ANY (array): a binary search of its values */
			int			lo = 0;
			int			hi = k->nset;

			while (lo < hi)
			{
				int			mid = (lo + hi) / 2;

				if (k->set[mid] < (uint64) v)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo >= k->nset || k->set[lo] != (uint64) v)
				return false;
			continue;
		}
		switch (k->strategy)
		{
			case BTLessStrategyNumber:
				pass = v < a;
				break;
			case BTLessEqualStrategyNumber:
				pass = v <= a;
				break;
			case BTEqualStrategyNumber:
				pass = v == a;
				break;
			case BTGreaterEqualStrategyNumber:
				pass = v >= a;
				break;
			default:
				pass = v > a;
				break;
		}
		if (!pass)
			return false;
	}
	return true;
}

/* segvecvacuum.c */
extern IndexBulkDeleteResult *segvecbulkdelete(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats,
											   IndexBulkDeleteCallback callback,
											   void *callback_state);
extern IndexBulkDeleteResult *segvecvacuumcleanup(IndexVacuumInfo *info,
												  IndexBulkDeleteResult *stats);

/* segveccost.c */
extern void segveccostestimate(PlannerInfo *root, IndexPath *path,
							   double loop_count, Cost *indexStartupCost,
							   Cost *indexTotalCost,
							   Selectivity *indexSelectivity,
							   double *indexCorrelation, double *indexPages);

/* segvecvalidate.c */
extern bool segvecvalidate(Oid opclassoid);

/* segvecdocs.c: docs for the ft functions */
extern bool SegvecFetchDoc(Relation index, const SegvecMetaInfo *info,
						   uint64 docid, SegvecFoundDoc *out);
extern void SegvecSegmentBytes(const SegvecSegment *seg, int dim,
							   int64 *codes, int64 *vectors, int64 *graph,
							   int64 *docs);
extern void SegvecScanMutableDocs(Relation index, const SegvecMetaInfo *info,
								  SegvecDocCallback doc,
								  SegvecDocGoneCallback gone, void *arg);
extern char *SegvecSegmentLiveFilters(Relation index,
									  const SegvecSegment *seg);
extern SegvecDocInfo *SegvecSegmentLiveDocs(Relation index,
											const SegvecSegment *seg,
											int *ndocs);
extern bool SegvecSegmentPostingsOk(Relation index,
									const SegvecSegment *seg, int dim);
extern int64 SegvecSegmentUnreachable(Relation index,
									  const SegvecSegment *seg,
									  uint64 *docid);
extern void SegvecDropDoc(Relation index, uint64 docid);

#endif							/* SEGVEC_AM_H */

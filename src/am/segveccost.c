/*-------------------------------------------------------------------------
 *
 * segveccost.c
 *	  amcostestimate for segvec.
 *
 * An ordered scan does most of its work before returning the first row: it
 * scores every doc of the mutable segment, and searches each immutable
 * segment's graph, which computes about ef_search * 2M distances (the
 * candidates expanded times their layer-0 neighbours) and reads the pages
 * those nodes live on.  That brings the first ef_search rows of each
 * segment.  Each row after those costs a search that goes on: about one
 * more expansion, 2M distances (the startup's own measure), until a
 * segment of at most segvec.max_scan_tuples docs has given 1/64 of its
 * docs and is scored whole (graph/graphsearch.c); from there its rows are
 * free.  The run cost is that, for every row.
 *
 * The planner charges a LIMIT k plan the startup plus k / rows of the run
 * cost, a straight line, but the real cost of the first rows is steeper
 * (2M distances each, then the switch).  And the rows a LIMIT needs from
 * the index are k / s when the query's other conditions, applied above the
 * scan, keep a fraction s of them: at 10% a hundred rows for LIMIT 10.  So
 * when the query has a known LIMIT (root->limit_tuples, a query on one
 * table), the startup also holds what those k / s rows cost (each segment
 * giving its share), and the run cost the rest.  Were they nearly free, an
 * index on the vector alone with a 10% filter above it would look cheaper
 * than an index with the filter column, and take 19 times as long on
 * clustered data.  An index scan without ORDER BY is never useful and gets
 * a disabling cost.
 *
 * With index conditions on filter columns (selectivity s, as the planner
 * estimates the clauses), the mutable segment's docs are all checked and
 * the passing ones scored; in a graph segment of L live docs, the cheaper
 * of the s * L passing docs (exact scoring, after a check of every doc's
 * filter entry) and the walk, which holds ef * s passing nodes (at least
 * 10), so expands about that over s nodes, and checks the entries of the
 * nodes it meets (after a sample of 8 pages of the filter area):
 * graph/graphsearch.c and the scan choose the same way.  Past its window,
 * a walk costs M / s distances a passing row until it has computed as
 * many as exact scoring of the passing docs would, when it turns to that.
 *
 * Unless the segment has postings of a column with conditions (the scan's
 * segment_postings) and the column that the fewest nodes pass of those
 * leaves at most 1/16 of the segment's nodes, or few enough to score
 * exactly: then the scan reads nothing of the segment but the postings'
 * first page, a binary search of the column's directory, the list of the
 * passing nodes, the tombstones and (with other conditions) the listed
 * nodes' filter entries, and scores the passing docs exactly from their
 * vectors (an sq8 segment with many: their codes, then the rerank pool's
 * vectors).  That is the startup, and it brings every row.  A plan with a
 * LIMIT k then pays for min(k, passing) heap rows (cost_index charges the
 * heap fetches in the run cost, of which the planner takes k / rows),
 * where a btree on the column and a sort fetch every passing row: so the
 * index with the filter column wins when more rows pass than the LIMIT
 * takes, and the btree for a single row.
 *
 * A label array condition (&&, @>, =) passes the docs whose signature has
 * its labels' bits, more than have the labels, and the executor fetches
 * and rechecks each row the scan returns.  With a constant argument, a
 * segment with bit postings tells how many: the bits' counts in its
 * directory (each bit taken as independent of the others: on Fashion-MNIST
 * 60,000 with three labels a row, 2,197 estimated for label 1017's 1,586
 * signature matches, 263 for label 300's 266).  The scan returns those
 * rows, so they are scored, and the index selectivity counts them: the
 * heap fetches and rechecks that cost_index charges, of which a LIMIT k
 * plan pays k / rows.  A rare label whose bits are common labels' bits
 * then costs a fetch for each of its many signature matches, and a GIN
 * index on the column with a sort wins.  The scan takes a segment's
 * signature matches from the bits' lists (label_nodes) when the value
 * postings leave more than 1/16 of it, the lists are short enough to read
 * and name at most 1/16 of it; they are charged as a value list is, plus
 * the lists' node numbers read and intersected.
 *
 * Pages are charged at seq_page_cost, in proportion to the bytes read (a
 * node record, a vector, a list), as for the graph walk: the pages of an
 * index that serves queries stay cached, and those of one segment are read
 * in ascending block order.  A distance costs cpu_index_tuple_cost plus
 * the ORDER BY operator's cost, a check of a filter entry or a listed node
 * cpu_operator_cost per condition, and the scan's bitmaps (a bit a doc of
 * the segment, set up and scanned a 64-bit word at a time) cpu_operator_cost
 * a word.
 *
 * src/am/segveccost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "access/genam.h"
#include "access/relation.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/am.h"
#include "graph/graph.h"
#include "store/store.h"

/* What a graph segment's scan costs past its startup */
typedef struct SegmentRun
{
	double		live;			/* docs it can return (passing, if filtered) */
	double		first;			/* rows the startup brings */
	double		per_row;		/* distances a row after those */
	double		switch_rows;	/* rows after which it is scored whole, or
								 * -1: never */
	double		whole;			/* distances of that scoring */
	double		cap;			/* most distances past the startup */
	double		node_pages;		/* pages a distance reads */
} SegmentRun;

/*
 * Distances run's segment computes past its startup for its first rows
 * rows (at most run->live).
 */
static double
segment_run_distances(const SegmentRun *run, double rows)
{
	double		d;

	rows = Min(rows, run->live);
	if (rows <= run->first)
		return 0;
	if (run->switch_rows >= 0 && rows > run->switch_rows)
		d = Max(run->switch_rows - run->first, 0.0) * run->per_row +
			run->whole;
	else
		d = (rows - run->first) * run->per_row;
	return Min(d, run->cap);
}

/*
 * The selectivity of the restriction clauses of path's relation that are
 * not index conditions of path: the filter the executor applies above the
 * scan (1.0 without one).
 */
static Selectivity
selectivity_above_scan(PlannerInfo *root, IndexPath *path)
{
	RelOptInfo *rel = path->indexinfo->rel;
	List	   *above = NIL;
	ListCell   *lc;

	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		bool		in_index = false;
		ListCell   *lc2;

		if (rinfo->pseudoconstant)
			continue;
		foreach(lc2, path->indexclauses)
		{
			if (lfirst_node(IndexClause, lc2)->rinfo == rinfo)
			{
				in_index = true;
				break;
			}
		}
		if (!in_index)
			above = lappend(above, rinfo);
	}
	if (above == NIL)
		return 1.0;
	return clauselist_selectivity(root, above, rel->relid, JOIN_INNER, NULL);
}

/*
 * The selectivity of path's index conditions on each filter column (index
 * column c + 1 for filter column c), into colsel[c]; -1 for a column
 * without one.
 */
static void
column_selectivities(PlannerInfo *root, IndexPath *path, int nfilters,
					 Selectivity *colsel)
{
	int			c;

	for (c = 0; c < nfilters; c++)
	{
		List	   *cquals = NIL;
		ListCell   *lc;

		colsel[c] = -1;
		foreach(lc, path->indexclauses)
		{
			IndexClause *iclause = lfirst_node(IndexClause, lc);

			if (iclause->indexcol == c + 1)
				cquals = list_concat(cquals, iclause->indexquals);
		}
		if (cquals == NIL)
			continue;
		colsel[c] = clauselist_selectivity(root, cquals,
										   path->indexinfo->rel->relid,
										   JOIN_INNER, NULL);
		colsel[c] = Max(Min(colsel[c], 1.0), 0.0);
		list_free(cquals);
	}
}

/* A condition of the path on a label array filter column */
typedef struct LabelCond
{
	int			col;			/* filter column, 0-based */
	int			strategy;		/* SEGVEC_LABELS_* */
	uint64		sig;			/* the bits of all its labels */
	uint64	   *labels;			/* each label's bits */
	uint64	   *hashes;			/* and hash */
	int			nlabels;
	Selectivity sel;			/* the planner's, of the condition */
} LabelCond;

/*
 * The path's conditions on label array columns whose argument is a
 * constant (a generic plan's parameter has no labels to look up), with
 * their labels' signature bits as a scan key takes them.
 */
static List *
label_conditions(PlannerInfo *root, IndexPath *path, Relation index,
				 int nfilters)
{
	IndexOptInfo *info = path->indexinfo;
	List	   *conds = NIL;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		int			c = iclause->indexcol - 1;
		ListCell   *lc2;

		if (c < 0 || c >= nfilters ||
			!SegvecFilterTypeIsLabels(TupleDescAttr(RelationGetDescr(index),
													c + 1)->atttypid))
			continue;
		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			OpExpr	   *op = (OpExpr *) rinfo->clause;
			Const	   *arg;
			LabelCond  *cond;

			if (!IsA(op, OpExpr) || list_length(op->args) != 2 ||
				!IsA(lsecond(op->args), Const))
				continue;
			arg = lsecond_node(Const, op->args);
			if (arg->constisnull)
				continue;
			cond = palloc0(sizeof(LabelCond));
			cond->col = c;
			cond->strategy = get_op_opfamily_strategy(op->opno,
													  info->opfamily[iclause->indexcol]);
			cond->sig = SegvecFilterLabels(arg->constvalue, &cond->labels,
										   &cond->hashes, &cond->nlabels);
			cond->sel = clauselist_selectivity(root, list_make1(rinfo),
											   info->rel->relid,
											   JOIN_INNER, NULL);
			conds = lappend(conds, cond);
		}
	}
	return conds;
}

/*
 * The share of seg's nodes whose signature has every bit of bits, from its
 * bit postings' directory dir (each bit taken as set independently of the
 * others, at its count's rate).
 */
static double
bits_rate(const SegvecSegment *seg, const SegvecPostingsEntry *dir,
		  uint64 bits)
{
	double		rate = 1;
	int			bit;

	for (bit = 0; bit < 64; bit++)
		if (bits & (UINT64CONST(1) << bit))
			rate *= (double) dir[bit].count / Max(seg->ndocs, 1);
	return rate;
}

/*
 * The nodes of seg whose signature passes label condition lc (at least
 * those whose labels do), estimated from its bit postings' directory dir;
 * into *read the node numbers that the scan reads from the bits' lists to
 * name them (label_nodes in am/segvecscan.c), or -1 when the lists do not
 * bound them, and into *superset whether the lists name more, which the
 * scan then checks on their filter entries.
 */
static double
label_matches(const SegvecSegment *seg, const SegvecPostingsEntry *dir,
			  const LabelCond *lc, double *read, bool *superset)
{
	uint64		present = 0;
	uint64		toread = 0;
	uint64		considered = 0;
	double		matches = 0;
	double		nread = 0;
	bool		bounded = true;
	int			bit;
	int			j;

	*read = -1;
	*superset = (lc->strategy == SEGVEC_LABELS_EQUAL);
	for (bit = 0; bit < 64; bit++)
		if (dir[bit].count > 0)
			present |= UINT64CONST(1) << bit;
	if (lc->strategy == SEGVEC_LABELS_CONTAINED ||
		(lc->strategy != SEGVEC_LABELS_OVERLAP && lc->sig == 0))
		return lc->sel * seg->ndocs;
	if (lc->strategy != SEGVEC_LABELS_OVERLAP)
	{
		/* @> and =: every bit of the argument */
		if ((lc->sig & ~present) != 0)
		{
			*read = 0;
			return 0;
		}
		toread = considered = lc->sig;
		matches = bits_rate(seg, dir, lc->sig) * seg->ndocs;
	}
	else
	{
		/* &&: a label's bits, each label's nodes united */
		for (j = 0; j < lc->nlabels; j++)
		{
			uint64		b = lc->labels[j];
			uint64		listed = 0;

			if ((b & ~present) != 0)
				continue;
			for (bit = 0; bit < 64; bit++)
				if ((b & (UINT64CONST(1) << bit)) &&
					dir[bit].list != SEGVEC_POSTINGS_NO_LIST)
					listed |= UINT64CONST(1) << bit;
			if (listed == 0)
				bounded = false;
			toread |= listed;
			considered |= b;
			matches += bits_rate(seg, dir, b) * seg->ndocs;
		}
	}
	for (bit = 0; bit < 64; bit++)
	{
		if (!(considered & (UINT64CONST(1) << bit)))
			continue;
		if (dir[bit].list == SEGVEC_POSTINGS_NO_LIST)
			*superset = true;
		else if (toread & (UINT64CONST(1) << bit))
			nread += dir[bit].count;
	}
	if (bounded && nread <= seg->ndocs / SEGVEC_POSTINGS_READ_DIV)
		*read = nread;
	return Min(Max(matches, lc->sel * seg->ndocs), (double) seg->ndocs);
}

/*
 * The nodes of seg that pass label condition lc on a column with label
 * postings (p), counted from its directory: for && the labels' counts
 * summed (a node with two of them counted twice), for @> and = the least
 * of them; into *read the node numbers the scan reads from the lists
 * (label_value_nodes in am/segvecscan.c), or -1 when it does not take them
 * from the lists, and into *superset whether the lists name more, which
 * the scan then checks on their filter entries.
 */
static double
label_value_matches(GraphPostings *p, const SegvecSegment *seg,
					const LabelCond *lc, double *read, bool *superset)
{
	double		budget = seg->ndocs / SEGVEC_POSTINGS_READ_DIV;
	double		matches = 0;
	double		nread = 0;
	uint32	   *counts;
	int			j;

	*read = -1;
	*superset = (lc->strategy == SEGVEC_LABELS_EQUAL);
	if (lc->strategy == SEGVEC_LABELS_CONTAINED ||
		(lc->strategy != SEGVEC_LABELS_OVERLAP && lc->nlabels == 0))
		return lc->sel * seg->ndocs;
	counts = palloc(sizeof(uint32) * Max(lc->nlabels, 1));
	for (j = 0; j < lc->nlabels; j++)
	{
		uint32		first;

		GraphPostingsLabel(p, lc->col, lc->hashes[j], &first, &counts[j]);
	}
	if (lc->strategy == SEGVEC_LABELS_OVERLAP)
	{
		for (j = 0; j < lc->nlabels; j++)
			matches += counts[j];
		if (matches <= budget)
			*read = matches;
	}
	else
	{
		uint32		least = PG_UINT32_MAX;

		for (j = 0; j < lc->nlabels; j++)
			least = Min(least, counts[j]);
		matches = least;
		if (least <= budget)
		{
			/* the lists that fit, the shortest first */
			for (j = 1; j < lc->nlabels; j++)
			{
				uint32		c = counts[j];
				int			k = j;

				for (; k > 0 && counts[k - 1] > c; k--)
					counts[k] = counts[k - 1];
				counts[k] = c;
			}
			for (j = 0; j < lc->nlabels; j++)
			{
				if (nread + counts[j] > budget)
				{
					*superset = true;
					break;
				}
				nread += counts[j];
			}
			*read = nread;
		}
	}
	pfree(counts);
	return Min(matches, (double) seg->ndocs);
}

/* What a graph segment's postings tell the estimate (segment_postings_info) */
typedef struct PostingsInfo
{
	bool		lists;			/* the scan takes the passing docs from them */
	double		listed;			/* node numbers it then checks */
	double		read;			/* and reads: the lists' */
	double		dir_pages;		/* directory pages it searches */
	bool		entries;		/* are the listed nodes' filter entries read? */
	double		sig_ratio;		/* docs whose signatures pass the label
								 * conditions over those whose labels do */
} PostingsInfo;

/*
 * What seg's postings tell of the path's filter (as segment_postings in
 * am/segvecscan.c uses them), into *pi: the scan takes the passing docs
 * from the lists when a filter column with conditions has value postings
 * in seg and the one of those that the fewest nodes pass (by the
 * planner's selectivity of its conditions, colsel) leaves at most 1/16 of
 * the segment's nodes, or few enough to score them exactly; or, failing
 * that, when a label condition on a column with bit postings does, by the
 * bits' counts.  And with bit postings, how many more docs pass the label
 * conditions' signatures than their labels: the rows the scan returns and
 * the executor rechecks.  Reads the postings area's first page (and the
 * bit directories).  False when seg has no postings.
 */
static bool
segment_postings_info(Relation index, const SegvecSegment *seg, int dim,
					  int nfilters, const Selectivity *colsel, List *labelconds,
					  int nkeys, PostingsInfo *pi)
{
	GraphPostings p;
	double		best = -1;
	double		best_values = 0;
	bool		best_label = false;
	int			c;
	ListCell   *lc;

	memset(pi, 0, sizeof(PostingsInfo));
	pi->sig_ratio = 1;
	if (!segvec_filter_postings || seg->nfilters != nfilters ||
		!GraphPostingsOpen(index, seg, dim, &p))
		return false;
	for (c = 0; c < nfilters; c++)
	{
		double		n;

		if (colsel[c] < 0 || !GraphPostingsHasColumn(&p, c))
			continue;
		n = colsel[c] * seg->ndocs;
		if (best < 0 || n < best)
		{
			best = n;
			best_values = GraphPostingsValues(&p, c);
		}
	}
	pi->read = best;
	pi->dir_pages = Max(best_values * sizeof(SegvecPostingsEntry) /
						SEGVEC_SEGPAGE_USABLE, 1.0);
	foreach(lc, labelconds)
	{
		LabelCond  *cond = (LabelCond *) lfirst(lc);
		SegvecPostingsEntry dir[64];
		double		matches;
		double		read;
		bool		superset;

		if (GraphPostingsHasLabels(&p, cond->col))
			matches = label_value_matches(&p, seg, cond, &read, &superset);
		else if (GraphPostingsHasBits(&p, cond->col))
		{
			GraphPostingsBits(&p, cond->col, dir);
			matches = label_matches(seg, dir, cond, &read, &superset);
		}
		else
			continue;
		pi->sig_ratio *= matches / Max(cond->sel * seg->ndocs, 1e-10);
		if (read >= 0 &&
			(best < 0 || best > seg->ndocs / SEGVEC_POSTINGS_LIST_DIV) &&
			(best < 0 || matches < best))
		{
			best = matches;
			pi->read = read;
			pi->dir_pages = 1;
			pi->entries = superset;
			best_label = true;
		}
	}
	GraphPostingsClose(&p);
	pi->sig_ratio = Max(pi->sig_ratio, 1.0);
	if (best < 0 ||
		(best > (double) (seg->ndocs / SEGVEC_POSTINGS_LIST_DIV) &&
		 !GraphFilterPrefersExact(seg, segvec_ef_search, (int64) ceil(best))))
		return true;
	pi->lists = true;
	pi->listed = best;
	if (!best_label)
		pi->read = best;
	pi->entries = pi->entries || nkeys > 1;
	return true;
}

void
segveccostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				   Cost *indexStartupCost, Cost *indexTotalCost,
				   Selectivity *indexSelectivity, double *indexCorrelation,
				   double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	double		ntuples;
	double		spc_seq_page_cost;
	QualCost	orderby_cost;
	Cost		startup;
	Cost		distance_cost;
	Relation	indexRel;
	SegvecMetaInfo *info;
	SegmentRun *runs;
	double		graph_docs = 0;
	double		scan_docs;		/* docs the scan can return */
	double		false_matches = 0;	/* docs whose label signatures pass
										 * and labels do not */
	double		mutable_docs;
	double		distances = 0;
	double		pages = 0;
	double		checks = 0;		/* filter entries checked */
	double		words = 0;		/* bitmap words set up and scanned */
	Selectivity *colsel = NULL; /* per filter column, or -1 */
	List	   *labelconds = NIL;	/* LabelCond */
	double		rows_read = -1; /* rows a known LIMIT reads, or -1 */
	double		first_distances = 0;	/* of those rows, past the startup */
	double		first_pages = 0;
	double		run_distances = 0;	/* of all rows, past the startup */
	double		run_pages = 0;
	Selectivity sel = 1.0;
	List	   *quals = NIL;
	int			nfilters;
	int			i;

	if (path->indexorderbys == NIL)
	{
		*indexStartupCost = disable_cost;
		*indexTotalCost = disable_cost;
		*indexSelectivity = 1.0;
		*indexCorrelation = 0;
		*indexPages = index->pages;
		return;
	}

	ntuples = index->tuples >= 0 ? index->tuples : index->rel->tuples;
	if (ntuples < 1)
		ntuples = 1;

	/* the filter's selectivity, from the index conditions */
	quals = get_quals_from_indexclauses(path->indexclauses);
	if (quals != NIL)
		sel = clauselist_selectivity(root, quals, index->rel->relid,
									 JOIN_INNER, NULL);
	sel = Max(Min(sel, 1.0), 1.0 / ntuples);

	/*
	 * The rows a known LIMIT reads from the scan: LIMIT / s, s what the
	 * conditions above the scan keep (of a query on this table alone: in a
	 * join the LIMIT counts joined rows)
	 */
	if (root->limit_tuples > 0 &&
		bms_membership(root->all_baserels) == BMS_SINGLETON)
		rows_read = root->limit_tuples /
			Max(selectivity_above_scan(root, path), 1.0 / ntuples);

	get_tablespace_page_costs(index->reltablespace, NULL, &spc_seq_page_cost);
	cost_qual_eval(&orderby_cost, path->indexorderbys, root);
	distance_cost = cpu_index_tuple_cost + orderby_cost.per_tuple;

	/* what the metapage says about the segments */
	indexRel = index_open(index->indexoid, NoLock);
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(indexRel, info);
	nfilters = SegvecIndexFilterCount(indexRel);
	if (quals != NIL && nfilters > 0)
	{
		colsel = palloc(sizeof(Selectivity) * nfilters);
		column_selectivities(root, path, nfilters, colsel);
		labelconds = label_conditions(root, path, indexRel, nfilters);
	}

	runs = palloc0(sizeof(SegmentRun) * Max(info->nsegments, 1));
	for (i = 0; i < info->nsegments; i++)
	{
		SegvecSegment *seg = &info->segments[i];
		SegmentRun *run = &runs[i];
		double		live = seg->ndocs - seg->ntombstones;
		double		r = (seg->quant != SEGVEC_QUANT_NONE ? 4 : 1);
		double		visits;
		double		seg_sel;	/* of its docs, those the scan returns */
		PostingsInfo pi;
		bool		postings;

		graph_docs += live;
		run->node_pages = Min(1.0, (double) seg->node_size / BLCKSZ);

		/*
		 * what its postings tell: whether the scan lists the passing docs,
		 * and how many more pass the label conditions' signatures than
		 * their labels (the executor rechecks their rows)
		 */
		postings = colsel != NULL &&
			segment_postings_info(indexRel, seg, info->dimensions, nfilters,
								  colsel, labelconds, list_length(quals), &pi);
		seg_sel = postings ? Min(sel * pi.sig_ratio, 1.0) : sel;
		run->live = live * seg_sel;
		false_matches += live * (seg_sel - sel);
		if (seg->ndocs <= (double) segvec_ef_search * SEGVEC_EXACT_FACTOR)
		{
			/* scored whole at the start */
			visits = seg->ndocs;
			run->first = run->live;
		}
		else
		{
			visits = Min((double) seg->ndocs,
						 (segvec_ef_search + log(Max(live, 2.0))) * 2 * seg->m);
			/* an expansion a row; whole past 1/64 of a segment not too big */
			run->first = segvec_ef_search;
			run->per_row = 2.0 * seg->m;
			run->switch_rows = live <= segvec_max_scan_tuples ?
				Max(live / SEGVEC_EXACT_SWITCH_DIV, run->first) : -1;
			run->whole = live * r;
			run->cap = live * 2.0 * seg->m;
		}
		if (postings && pi.lists)
		{
			/*
			 * The passing docs from the postings, and nothing else of the
			 * segment: the postings' first page, a binary search of the
			 * column's directory (a label condition's: its 64 bits), and,
			 * unless nothing passes, the lists (4 bytes a node), the
			 * tombstones (read twice: for the lists, and by the segment's
			 * scan) and a word a 64 docs of the scan's bitmaps; each node
			 * read is checked (its tombstone bit, or a bit list's
			 * intersection), and those listed with other conditions (or
			 * a label condition's lists that name more) their filter
			 * entries, on the pages of the filter area they fall on; then
			 * the passing docs (signatures passing) are scored exactly.
			 */
			double		some = Min(pi.listed, 1.0);
			double		tomb_pages = ceil((double) seg->ndocs /
										  SEGVEC_TOMB_PER_PAGE);
			double		vec_pages = (double) info->dimensions *
				sizeof(float4) / SEGVEC_SEGPAGE_USABLE;
			int			pool = segvec_rerank > 0 ? segvec_rerank :
				Max(segvec_ef_search, SEGVEC_MIN_QUANT_SEARCH_WIDTH);

			pages += 1 + (1 + log2(pi.dir_pages)) +
				some * (1 + 2 * tomb_pages) +
				pi.read * sizeof(uint32) / SEGVEC_SEGPAGE_USABLE;
			words += some * seg->ndocs / 64.0;
			checks += pi.read;
			if (pi.entries)
				pages += Min(pi.listed, (double) seg->ndocs *
							 SEGVEC_FILTER_ENTRY_BYTES(nfilters) / BLCKSZ);
			run->first = run->live;
			if (seg->quant == SEGVEC_QUANT_SQ8 && run->live > 2.0 * pool)
			{
				/*
				 * many: ranked by their codes (a node record each), then
				 * through the rerank pool: its vectors at the start, one
				 * a row after that (graph/graphsearch.c, start_exact)
				 */
				visits = run->live + pool;
				pages += run->live * run->node_pages + pool * vec_pages;
				run->first = pool;
				run->per_row = 1;
				run->switch_rows = -1;
				run->cap = run->live - pool;
				run->node_pages = vec_pages;
			}
			else
			{
				/*
				 * each from its float4 vector: a node record of an
				 * unquantized segment, the vector area of a quantized one
				 */
				visits = run->live;
				pages += run->live * (seg->quant == SEGVEC_QUANT_NONE ?
									  run->node_pages : vec_pages);
			}
			distances += visits;
			run_distances += segment_run_distances(run, run->live);
			run_pages += segment_run_distances(run, run->live) * run->node_pages;
			continue;
		}
		else if (quals != NIL)
		{
			/*
			 * the filter area, then the cheaper of a walk over a window of
			 * ef * s passing nodes and the passing docs exactly (as
			 * graph/graphsearch.c chooses)
			 */
			double		width = Max(segvec_ef_search * seg_sel,
									(double) SEGVEC_MIN_SEARCH_WIDTH);
			double		walk = Min(width / seg_sel * seg->m,
								   (double) seg->ndocs);
			double		exact = seg_sel * live * r;
			double		area = (double) seg->ndocs *
				SEGVEC_FILTER_ENTRY_BYTES(nfilters) / BLCKSZ;

			if (exact <= walk)
			{
				/* every entry checked, the passing docs scored */
				visits = exact;
				checks += seg->ndocs;
				pages += area;
				run->first = run->live;
			}
			else
			{
				/*
				 * a sample of the area, entries checked as met; past the
				 * window, M / s distances a passing row, until the walk
				 * has computed what scoring the passing docs would and
				 * turns to that
				 */
				visits = walk;
				checks += visits;
				pages += Min(area, 8.0) + visits * Min(1.0, area / seg->ndocs);
				run->first = width;
				run->per_row = seg->m / seg_sel;
				run->switch_rows = -1;
				run->cap = exact;
				run->node_pages += Min(1.0, area / seg->ndocs);
			}
		}
		distances += visits;
		pages += visits * run->node_pages;
		run_distances += segment_run_distances(run, run->live);
		run_pages += segment_run_distances(run, run->live) * run->node_pages;
	}
	index_close(indexRel, NoLock);
	mutable_docs = Max(ntuples - graph_docs, 0);
	distances += mutable_docs * (quals != NIL ? sel : 1.0);
	if (quals != NIL)
		checks += mutable_docs;
	if (info->dimensions > 0)
		pages += mutable_docs * (info->dimensions * sizeof(float4) + 32 +
								 SEGVEC_FILTER_ENTRY_BYTES(nfilters)) / BLCKSZ;

	/*
	 * a known LIMIT's rows, each segment giving its share (with label
	 * conditions the false matches among them: a segment's rows are in
	 * proportion to its docs that pass)
	 */
	scan_docs = Max(ntuples * sel, 1.0);
	if (rows_read > 0)
	{
		for (i = 0; i < info->nsegments; i++)
		{
			double		d = segment_run_distances(&runs[i],
												  rows_read * runs[i].live / scan_docs);

			first_distances += d;
			first_pages += d * runs[i].node_pages;
		}
	}
	pfree(runs);
	pfree(info);

	startup = pages * spc_seq_page_cost +
		distances * distance_cost +
		checks * cpu_operator_cost * list_length(quals) +
		words * cpu_operator_cost +
		orderby_cost.startup;

	*indexStartupCost = startup + first_pages * spc_seq_page_cost +
		first_distances * distance_cost;
	*indexTotalCost = startup + run_pages * spc_seq_page_cost +
		run_distances * distance_cost +
		(ntuples * sel + false_matches) * cpu_operator_cost;

	/*
	 * The rows the scan returns: those that pass, and with label conditions
	 * those whose signatures pass although their labels do not, which the
	 * executor fetches and rechecks (cost_index charges their heap fetches,
	 * and a LIMIT k plan k / rows of them, rows being the rows that pass)
	 */
	*indexSelectivity = false_matches > 0 ?
		Min((ntuples * sel + false_matches) / ntuples, 1.0) : sel;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}

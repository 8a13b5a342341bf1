/*-------------------------------------------------------------------------
 *
 * segveccost.c
 *	  amcostestimate for segvec.
 *
 * An ordered scan does most of its work before returning the first row: it
 * scores every doc of the mutable segment, and searches each immutable
 * segment's graph, which computes about ef_search * 2M distances (the
 * candidates expanded times their layer-0 neighbours) and reads the pages
 * those nodes live on.  So the startup cost is those distances plus those
 * pages, and each row returned after that is nearly free.  With LIMIT k
 * the planner then charges startup plus k/N of the heap fetches, which
 * beats sorting the whole table for small k and loses to it when every
 * row is wanted, as it should.  An index scan without ORDER BY is never
 * useful and gets a disabling cost.
 *
 * With index conditions on filter columns (selectivity s, as the planner
 * estimates the clauses), the mutable segment's docs are all checked and
 * the passing ones scored; in a graph segment of L live docs, the cheaper
 * of the s * L passing docs (exact scoring, after a check of every doc's
 * filter entry) and the walk, which holds ef * s passing nodes (at least
 * 10), so expands about that over s nodes, and checks the entries of the
 * nodes it meets (after a sample of 8 pages of the filter area):
 * graph/graphsearch.c and the scan choose the same way.  So a btree on
 * the filter column wins when the filter keeps a handful of rows, and
 * segvec when it keeps many.
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
#include "utils/rel.h"

#include "am/am.h"
#include "graph/graph.h"
#include "store/store.h"

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
	Relation	indexRel;
	SegvecMetaInfo *info;
	double		graph_docs = 0;
	double		mutable_docs;
	double		distances = 0;
	double		pages = 0;
	double		checks = 0;		/* filter entries checked */
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

	get_tablespace_page_costs(index->reltablespace, NULL, &spc_seq_page_cost);
	cost_qual_eval(&orderby_cost, path->indexorderbys, root);

	/* what the metapage says about the segments */
	indexRel = index_open(index->indexoid, NoLock);
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(indexRel, info);
	nfilters = SegvecIndexFilterCount(indexRel);
	index_close(indexRel, NoLock);

	for (i = 0; i < info->nsegments; i++)
	{
		SegvecSegment *seg = &info->segments[i];
		double		live = seg->ndocs - seg->ntombstones;
		double		visits;

		graph_docs += live;
		visits = Min((double) seg->ndocs,
					 (segvec_ef_search + log(Max(live, 2.0))) * 2 * seg->m);
		if (quals != NIL)
		{
			/*
			 * the filter area, then the cheaper of a walk over a window of
			 * ef * s passing nodes and the passing docs exactly (as
			 * graph/graphsearch.c chooses)
			 */
			double		width = Max(segvec_ef_search * sel,
									(double) SEGVEC_MIN_SEARCH_WIDTH);
			double		walk = Min(width / sel * seg->m, (double) seg->ndocs);
			double		exact = sel * live *
				(seg->quant != SEGVEC_QUANT_NONE ? 4 : 1);

			double		area = (double) seg->ndocs *
				SEGVEC_FILTER_ENTRY_BYTES(nfilters) / BLCKSZ;

			if (exact <= walk)
			{
				/* every entry checked, the passing docs scored */
				visits = exact;
				checks += seg->ndocs;
				pages += area;
			}
			else
			{
				/* a sample of the area, entries checked as met */
				visits = walk;
				checks += visits;
				pages += Min(area, 8.0) + visits * Min(1.0, area / seg->ndocs);
			}
		}
		distances += visits;
		pages += visits * Min(1.0, (double) seg->node_size / BLCKSZ);
	}
	mutable_docs = Max(ntuples - graph_docs, 0);
	distances += mutable_docs * (quals != NIL ? sel : 1.0);
	if (quals != NIL)
		checks += mutable_docs;
	if (info->dimensions > 0)
		pages += mutable_docs * (info->dimensions * sizeof(float4) + 32 +
								 SEGVEC_FILTER_ENTRY_BYTES(nfilters)) / BLCKSZ;
	pfree(info);

	startup = pages * spc_seq_page_cost +
		distances * (cpu_index_tuple_cost + orderby_cost.per_tuple) +
		checks * cpu_operator_cost * list_length(quals) +
		orderby_cost.startup;

	*indexStartupCost = startup;
	*indexTotalCost = startup + ntuples * sel * cpu_operator_cost;
	*indexSelectivity = sel;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}

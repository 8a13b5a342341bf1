/*-------------------------------------------------------------------------
 *
 * segveccost.c
 *	  amcostestimate for segvec.
 *
 * An ordered scan does its work before returning the first row: it reads
 * the mutable segment's pages and scores every doc.  So the startup cost
 * is the pages read plus one distance per doc, and each row returned after
 * that is nearly free.  With LIMIT k the planner then charges startup plus
 * k/N of the heap fetches, which beats sorting the whole table for small k
 * and loses to it when every row is wanted, as it should.  An index scan
 * without ORDER BY is never useful and gets a disabling cost.
 *
 * src/segveccost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "segvec.h"

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

	get_tablespace_page_costs(index->reltablespace, NULL, &spc_seq_page_cost);
	cost_qual_eval(&orderby_cost, path->indexorderbys, root);

	startup = index->pages * spc_seq_page_cost +
		ntuples * (cpu_index_tuple_cost + orderby_cost.per_tuple) +
		orderby_cost.startup;

	*indexStartupCost = startup;
	*indexTotalCost = startup + ntuples * cpu_operator_cost;
	*indexSelectivity = 1.0;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}

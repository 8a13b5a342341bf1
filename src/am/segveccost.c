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

	get_tablespace_page_costs(index->reltablespace, NULL, &spc_seq_page_cost);
	cost_qual_eval(&orderby_cost, path->indexorderbys, root);

	/* what the metapage says about the segments */
	indexRel = index_open(index->indexoid, NoLock);
	info = palloc(sizeof(SegvecMetaInfo));
	SegvecGetMetaInfo(indexRel, info);
	index_close(indexRel, NoLock);

	for (i = 0; i < info->nsegments; i++)
	{
		SegvecSegment *seg = &info->segments[i];
		double		live = seg->ndocs - seg->ntombstones;
		double		visits;

		graph_docs += live;
		visits = Min((double) seg->ndocs,
					 (segvec_ef_search + log(Max(live, 2.0))) * 2 * seg->m);
		distances += visits;
		pages += visits * Min(1.0, (double) seg->node_size / BLCKSZ);
	}
	mutable_docs = Max(ntuples - graph_docs, 0);
	distances += mutable_docs;
	if (info->dimensions > 0)
		pages += mutable_docs * (info->dimensions * sizeof(float4) + 32) / BLCKSZ;
	pfree(info);

	startup = pages * spc_seq_page_cost +
		distances * (cpu_index_tuple_cost + orderby_cost.per_tuple) +
		orderby_cost.startup;

	*indexStartupCost = startup;
	*indexTotalCost = startup + ntuples * cpu_operator_cost;
	*indexSelectivity = 1.0;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}

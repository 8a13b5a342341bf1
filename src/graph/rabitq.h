/*-------------------------------------------------------------------------
 *
 * rabitq.h
 *	  RaBitQ codes of graph segments (rabitq.c): training, the rotation,
 *	  encoding and the query's lower bounds.  Private to graph/; quant.h
 *	  dispatches to these by a segment's quantization.
 *
 * src/graph/rabitq.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_RABITQ_H
#define SEGVEC_RABITQ_H

#include "graph/quantquery.h"

typedef struct GraphRabitqRotation
{
	int			dpad;			/* padded dimensions */
	int			block;			/* the Hadamard blocks' length */
	uint64	   *signs;			/* GRAPH_RABITQ_ROUNDS * dpad / 64 */
	float	   *work;			/* dpad floats */
} GraphRabitqRotation;

extern void GraphRabitqTrain(float *params, int dim, const float *vectors,
							 uint32 n);
extern void GraphRabitqTrainAdd(double *sum, int dim, const float *vector);
extern void GraphRabitqTrainEnd(float *params, int dim, const double *sum,
								uint64 n);
extern void GraphRabitqRotationMake(GraphRabitqRotation *rot,
									const float *params, int dim);
extern void GraphRabitqEncode(const GraphRabitqRotation *rot,
							  const float *params, int dim,
							  const float *vector, char *rec);

extern void GraphRabitqPrepare(GraphQuantQuery *qq, const float *params,
							   SegvecMetric metric, const float *query,
							   int dim);
extern double GraphRabitqDistance(const GraphQuantQuery *qq, const char *rec);

#endif							/* SEGVEC_RABITQ_H */

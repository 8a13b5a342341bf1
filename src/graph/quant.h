/*-------------------------------------------------------------------------
 *
 * quant.h
 *	  The quantizers of graph segments, SQ8 (quant.c) and RaBitQ
 *	  (rabitq.c), shared by graphbuild.c (which writes the codes),
 *	  graphmerge.c (which writes a merge's: SQ8 reusing an input's when its
 *	  quantizer covers the others, RaBitQ always computing them for a fresh
 *	  centroid) and graphsearch.c (which reads them).  Private to graph/.
 *
 * src/graph/quant.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_QUANT_H
#define SEGVEC_QUANT_H

#include "postgres.h"

#include "kernels/distance.h"
#include "store/format.h"
#include "graph/rabitq.h"

/*
 * The parameters of a segment's quantizer: 2 * dim + 2 float4, lo[dim]
 * (each dimension's lowest value in the segment), step[dim] ((highest -
 * lowest) / 255, 0 for a dimension with one value), then the largest
 * |x - decoded x| of the segment's vectors, and the least non-zero norm of
 * the segment's vectors.  Stored in the segment's
 * parameter area.
 */
#define GraphSq8ParamFloats(dim)	(2 * (Size) (dim) + 2)
#define GraphQuantErrBound(params, dim)	((params)[2 * (dim)])
#define GraphQuantMinNorm(params, dim)	((params)[2 * (dim) + 1])

/*
 * Bytes of a node record's quantized part: the vector's norm |x| and the
 * squared norm of its decoded offset, sum (step * code)^2 (float4 each),
 * then the code
 */
#define GraphSq8RecordBytes(dim)	(2 * sizeof(float) + (Size) (dim))

/* Hoeffding's kappa for a probability of exp(-2 kappa^2) = 1e-9 */
#define GRAPH_QUANT_KAPPA 3.22


/* float4 of a segment's quantizer parameters */
static inline Size
GraphQuantParamFloats(int quant, int dim)
{
	return quant == SEGVEC_QUANT_RABITQ ? GraphRabitqParamFloats(dim) :
		GraphSq8ParamFloats(dim);
}

/* bytes of a node record's quantized part */
static inline Size
GraphQuantRecordBytes(int quant, int dim)
{
	return quant == SEGVEC_QUANT_RABITQ ? GraphRabitqRecordBytes(dim) :
		GraphSq8RecordBytes(dim);
}

/* What encoding needs, made once per segment written (GraphQuantEncoderMake) */
typedef struct GraphQuantEncoder GraphQuantEncoder;

extern float *GraphQuantTrain(int quant, int dim, const float *vectors,
							  uint32 n);
extern GraphQuantEncoder *GraphQuantEncoderMake(int quant, const float *params,
												int dim);
extern void GraphQuantEncode(GraphQuantEncoder *enc, const float *vector,
							 char *rec);

/* quant.c: SQ8 */
extern void GraphSq8Train(float *params, int dim, const float *vectors,
						  uint32 n);
/* SQ8 training in steps, and what a merge needs (quant.c) */
extern void GraphSq8TrainBegin(float *params, int dim);
extern void GraphSq8TrainAdd(float *params, int dim, const float *vector);
extern void GraphSq8TrainEnd(float *params, int dim);
extern void GraphSq8TrainUnion(float *params, int dim, const float *input);
extern bool GraphSq8Covers(const float *input, const float *params, int dim);
extern void GraphSq8BoundsBegin(float *params, int dim);
extern void GraphSq8BoundsAdd(float *params, int dim, const float *vector);
extern void GraphSq8BoundsEnd(float *params, int dim);
extern void GraphSq8Encode(const float *params, int dim,
						   const float *vector, char *rec);



extern void GraphQuantPrepare(GraphQuantQuery *qq, int quant,
							  const float *params, SegvecMetric metric,
							  const float *query, int dim);
extern double GraphQuantLowerBound(const GraphQuantQuery *qq, double estimate);

/* quant.c: SQ8 */
extern void GraphSq8Prepare(GraphQuantQuery *qq, const float *params,
							SegvecMetric metric, const float *query, int dim);
extern double GraphSq8Distance(const GraphQuantQuery *qq, const char *rec);


/*
 * GraphQuantDistance: the distance the graph search goes by for the node
 * whose quantized record is rec: SQ8's estimate, RaBitQ's lower bound
 * (see rabitq.c); NaN where the exact distance would be NaN.
 */
static inline double
GraphQuantDistance(const GraphQuantQuery *qq, const char *rec)
{
	if (qq->quant == SEGVEC_QUANT_RABITQ)
		return GraphRabitqDistance(qq, rec);
	return GraphSq8Distance(qq, rec);
}

#endif							/* SEGVEC_QUANT_H */

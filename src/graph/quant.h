/*-------------------------------------------------------------------------
 *
 * quant.h
 *	  The SQ8 quantizer of graph segments, shared by graphbuild.c (which
 *	  writes the codes), graphmerge.c (which writes a merge's, reusing an
 *	  input's when its quantizer covers the others) and graphsearch.c
 *	  (which reads them).  Private to graph/.
 *
 * src/graph/quant.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_QUANT_H
#define SEGVEC_QUANT_H

#include "postgres.h"

#include "kernels/distance.h"

/*
 * The parameters of a segment's quantizer: 2 * dim + 2 float4, lo[dim]
 * (each dimension's lowest value in the segment), step[dim] ((highest -
 * lowest) / 255, 0 for a dimension with one value), then the largest
 * |x - decoded x| of the segment's vectors, and the least non-zero norm of
 * the segment's vectors.  Stored in the segment's
 * parameter area.
 */
#define GraphQuantParamFloats(dim)	(2 * (Size) (dim) + 2)
#define GraphQuantErrBound(params, dim)	((params)[2 * (dim)])
#define GraphQuantMinNorm(params, dim)	((params)[2 * (dim) + 1])

/*
 * Bytes of a node record's quantized part: the vector's norm |x| and the
 * squared norm of its decoded offset, sum (step * code)^2 (float4 each),
 * then the code
 */
#define GraphQuantRecordBytes(dim)	(2 * sizeof(float) + (Size) (dim))

/* Hoeffding's kappa for a probability of exp(-2 kappa^2) = 1e-9 */
#define GRAPH_QUANT_KAPPA 3.22

extern void GraphQuantTrainBegin(float *params, int dim);
extern void GraphQuantTrainAdd(float *params, int dim, const float *vector);
extern void GraphQuantTrainEnd(float *params, int dim);
extern void GraphQuantTrainError(float *params, int dim, const float *vector);
extern void GraphQuantTrainUnion(float *params, int dim, const float *input);
extern bool GraphQuantCovers(const float *input, const float *params,
							 int dim);
extern void GraphQuantBoundsBegin(float *params, int dim);
extern void GraphQuantBoundsAdd(float *params, int dim, const float *vector);
extern void GraphQuantBoundsEnd(float *params, int dim);
extern void GraphQuantEncode(const float *params, int dim,
							 const float *vector, char *rec);

/*
 * A query prepared for one segment's codes: every estimate is an affine
 * function of X = scale * sum q[j] * code[j] (see quant.c)
 */
typedef struct GraphQuantQuery
{
	SegvecMetric metric;
	int			dim;
	int16	   *q;				/* the query's weights, quantized */
	double		scale;
	double		konst;			/* l2: sum (q - lo)^2; ip, cosine: sum q * lo */
	double		qnorm;			/* cosine: |q| */
	double		xshift;			/* added to scale * X: the query's rounding
								 * at a mid-range code */
	double		sqerr;			/* l2: |estimate^2 - |q - decoded x|^2| bound */
	double		derr;			/* l2: the segment's largest |x - decoded x| */
	double		ptol;			/* l2, segvec.quant_bound = probable: kappa
								 * times the largest step; else -1 */
	double		slack;			/* ip, cosine: |estimate - exact| bound */
} GraphQuantQuery;

extern void GraphQuantPrepare(GraphQuantQuery *qq, const float *params,
							  SegvecMetric metric, const float *query,
							  int dim);
extern double GraphQuantDistance(const GraphQuantQuery *qq, const char *rec);
extern double GraphQuantLowerBound(const GraphQuantQuery *qq, double estimate);

#endif							/* SEGVEC_QUANT_H */

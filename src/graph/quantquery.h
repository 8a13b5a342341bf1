/*-------------------------------------------------------------------------
 *
 * quantquery.h
 *	  What a quantizer's code distances work with: GraphQuantQuery, a query
 *	  prepared for one segment's codes (SQ8 in quant.c, RaBitQ in
 *	  rabitq.c), and RaBitQ's layout.  Private to graph/; quant.h is the
 *	  interface the rest of graph/ uses.
 *
 * src/graph/quantquery.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_QUANTQUERY_H
#define SEGVEC_QUANTQUERY_H

#include "postgres.h"

#include "kernels/distance.h"

/*
 * RaBitQ (rabitq.c).  Vectors are padded with zeros to
 * GraphRabitqPadded(dim) dimensions (a multiple of 64, so a code is whole
 * uint64 words) and rotated by a seeded randomized Hadamard transform of
 * GRAPH_RABITQ_ROUNDS rounds.  The parameters, GraphRabitqParamFloats(dim)
 * float4: the transform's seed (a uint64 in the first two), five reserved
 * (zero), then the centroid (dim).  A node record's quantized part: |x - c|,
 * <o_bar, o> and |x| (float4 each), then the code, one bit per padded
 * dimension.  Its bound's width, eps0, is segvec.rabitq_epsilon
 * (SEGVEC_RABITQ_EPS0_DEFAULT; the paper's is 1.9).
 */
#define GRAPH_RABITQ_ROUNDS		4
#define GRAPH_RABITQ_QBITS		4
#define GraphRabitqPadded(dim)	((Size) TYPEALIGN(64, (dim)))
#define GraphRabitqParamFloats(dim)	((Size) (dim) + 7)
#define GraphRabitqCentroid(params)	((params) + 7)
#define GraphRabitqRecordBytes(dim) \
	(3 * sizeof(float) + GraphRabitqPadded(dim) / 8)

/*
 * A query prepared for one segment's codes: every estimate is an affine
 * function of X = scale * sum q[j] * code[j] (see quant.c)
 */
typedef struct GraphQuantQuery
{
	int			quant;			/* SEGVEC_QUANT_* */
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

	/* RaBitQ (rabitq.c) */
	uint64	   *planes;			/* the rotated query's 4-bit planes */
	int			nwords;			/* uint64 words of a code */
	double		vl;				/* the query's lowest coordinate */
	double		delta;			/* its quantization step */
	double		ubase;			/* dpad * vl + delta * sum u */
	double		invsqrtd;		/* 1 / sqrt(dpad) */
	double		epsd;			/* eps0 / sqrt(dpad - 1) */
	double		qerr;			/* bound on |<o_bar, q'> - <o_bar, q'_u>| */
	double		qc;				/* |q - c| */
	double		qsq;			/* |q|^2 */
} GraphQuantQuery;

#endif							/* SEGVEC_QUANTQUERY_H */

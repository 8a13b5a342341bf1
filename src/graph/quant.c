/*-------------------------------------------------------------------------
 *
 * quant.c
 *	  SQ8 scalar quantization of graph segments: training, encoding, and
 *	  the estimated distances a search traverses a segment with; and the
 *	  entry points that choose between SQ8 and RaBitQ (rabitq.c).
 *
 * Every dimension j of a segment gets its own range: lo[j], the lowest
 * value of any of the segment's vectors there, and step[j] = (highest -
 * lo[j]) / 255.  A vector x is stored as code[j] = round((x[j] - lo[j]) /
 * step[j]) in 0..255 (0 where step[j] is 0), so the decoded vector
 * lo + step * code is within step / 2 of x in every dimension.  The
 * parameters are trained on all of the segment's vectors when the segment
 * is written, so no vector of the segment falls outside them.  A merge
 * takes the union of its inputs' ranges (GraphSq8TrainUnion; an
 * unquantized input's from its vectors), keeps an input's parameters, and
 * that input's codes, when they cover the union (GraphSq8Covers), and
 * measures the error bound and least norm over its output's vectors
 * (GraphSq8Bounds*).
 *
 * A search estimates the distance between the query q and the decoded
 * vector x' = lo + step * code through one integer dot product, X = sum
 * b[j] * code[j] (kernels/sq8.c), with b quantized to int16 once per
 * segment (scale = max |b| / SEGVEC_SQ8_QMAX):
 *
 *	- l2: |q - x'|^2 = sum (q - lo)^2 - 2 X + sum (step * code)^2, with
 *	  b = step * (q - lo); the last term is the doc's own, kept in its
 *	  record;
 *	- ip: -(q . x') = -(sum q * lo + X), with b = q * step;
 *	- cosine: 1 - q . x' / (|q| |x|), q . x' as for ip, |x| the exact norm
 *	  of the stored vector, kept in its record.
 *
 * The estimates only steer the graph search; the scan reranks what it
 * returns with exact distances from the float4 vectors (graphsearch.c).
 *
 * src/graph/quant.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/float.h"

#include "graph/graph.h"
#include "graph/quant.h"

int			segvec_quant_bound = SEGVEC_QUANT_BOUND_PROVEN;

struct GraphQuantEncoder
{
	int			quant;
	int			dim;
	const float *params;
	GraphRabitqRotation rot;	/* RaBitQ: the segment's transform */
};

static void train_error(float *params, int dim, const float *vector);

/*
 * GraphQuantTrain: the parameters of a quantizer of kind quant (a
 * SEGVEC_QUANT_* other than NONE) for the n vectors (dim floats each),
 * palloc'd in the current memory context.
 */
float *
GraphQuantTrain(int quant, int dim, const float *vectors, uint32 n)
{
	float	   *params = palloc0(sizeof(float) * GraphQuantParamFloats(quant, dim));

	if (quant == SEGVEC_QUANT_RABITQ)
		GraphRabitqTrain(params, dim, vectors, n);
	else
		GraphSq8Train(params, dim, vectors, n);
	return params;
}

/*
 * GraphQuantEncoderMake: what GraphQuantEncode needs to write codes of the
 * quantizer params (kind quant), in the current memory context; params must
 * stay until the last GraphQuantEncode.
 */
GraphQuantEncoder *
GraphQuantEncoderMake(int quant, const float *params, int dim)
{
	GraphQuantEncoder *enc = palloc0(sizeof(GraphQuantEncoder));

	enc->quant = quant;
	enc->dim = dim;
	enc->params = params;
	if (quant == SEGVEC_QUANT_RABITQ)
		GraphRabitqRotationMake(&enc->rot, params, dim);
	return enc;
}

/*
 * GraphQuantEncode: write vector's quantized part of a node record
 * (GraphQuantRecordBytes bytes) into rec.
 */
void
GraphQuantEncode(GraphQuantEncoder *enc, const float *vector, char *rec)
{
	if (enc->quant == SEGVEC_QUANT_RABITQ)
		GraphRabitqEncode(&enc->rot, enc->params, enc->dim, vector, rec);
	else
		GraphSq8Encode(enc->params, enc->dim, vector, rec);
}

/*
 * GraphQuantPrepare: prepare query (dim floats) for the distances to the
 * codes of a segment of kind quant with parameters params; allocates in
 * the current memory context.
 */
void
GraphQuantPrepare(GraphQuantQuery *qq, int quant, const float *params,
				  SegvecMetric metric, const float *query, int dim)
{
	memset(qq, 0, sizeof(GraphQuantQuery));
	qq->quant = quant;
	if (quant == SEGVEC_QUANT_RABITQ)
		GraphRabitqPrepare(qq, params, metric, query, dim);
	else
		GraphSq8Prepare(qq, params, metric, query, dim);
}

/* GraphSq8Train: SQ8's ranges and error bound for the n vectors */
void
GraphSq8Train(float *params, int dim, const float *vectors, uint32 n)
{
	uint32		i;

	GraphSq8TrainBegin(params, dim);
	for (i = 0; i < n; i++)
		GraphSq8TrainAdd(params, dim, vectors + (Size) i * dim);
	GraphSq8TrainEnd(params, dim);
	for (i = 0; i < n; i++)
	{
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		train_error(params, dim, vectors + (Size) i * dim);
	}
}

/*
 * GraphSq8TrainBegin, GraphSq8TrainAdd, GraphSq8TrainEnd: SQ8 training in
 * steps (GraphSq8Train; a merge, graphmerge.c, adds its inputs' ranges
 * with GraphSq8TrainUnion between them).
 *
 * GraphSq8TrainBegin: start training params (GraphSq8ParamFloats(dim)
 * floats); during training step[] holds each dimension's highest value.
 */
void
GraphSq8TrainBegin(float *params, int dim)
{
	int			j;

	for (j = 0; j < dim; j++)
	{
		params[j] = get_float4_infinity();
		params[dim + j] = -get_float4_infinity();
	}
	GraphQuantErrBound(params, dim) = 0;
	GraphQuantMinNorm(params, dim) = get_float4_infinity();
}

/* GraphSq8TrainAdd: widen the ranges to cover vector */
void
GraphSq8TrainAdd(float *params, int dim, const float *vector)
{
	float	   *lo = params;
	float	   *hi = params + dim;
	double		norm = 0;
	int			j;

	for (j = 0; j < dim; j++)
	{
		if (vector[j] < lo[j])
			lo[j] = vector[j];
		if (vector[j] > hi[j])
			hi[j] = vector[j];
		norm += (double) vector[j] * vector[j];
	}
	norm = sqrt(norm);
	if (norm > 0 && norm < GraphQuantMinNorm(params, dim))
		GraphQuantMinNorm(params, dim) = (float) norm;
}

/* GraphSq8TrainEnd: turn the highest values into steps */
void
GraphSq8TrainEnd(float *params, int dim)
{
	float	   *lo = params;
	float	   *step = params + dim;
	int			j;

	for (j = 0; j < dim; j++)
	{
		if (isinf(lo[j]))
		{
			/* no vector trained: an empty segment */
			lo[j] = 0;
			step[j] = 0;
			continue;
		}
		step[j] = (float) (((double) step[j] - (double) lo[j]) / 255.0);
		if (!(step[j] > 0) || isinf(step[j]))
			step[j] = 0;
	}
	if (isinf(GraphQuantMinNorm(params, dim)))
		GraphQuantMinNorm(params, dim) = 0;
	GraphQuantErrBound(params, dim) = 0;
}

/*
 * train_error: after GraphSq8TrainEnd, widen the recorded
 * largest decoding error |x - decoded x| to cover vector (called for every
 * vector of the segment).
 */
static void
train_error(float *params, int dim, const float *vector)
{
	const float *lo = params;
	const float *step = params + dim;
	double		err = 0;
	float		e;
	int			j;

	for (j = 0; j < dim; j++)
	{
		double		c = 0;
		double		d;

		if (step[j] > 0)
		{
			c = rint(((double) vector[j] - lo[j]) / step[j]);
			c = Max(0, Min(255, c));
		}
		d = (double) vector[j] - ((double) lo[j] + (double) step[j] * c);
		err += d * d;
	}
	/* rounded up a little: it is a bound */
	e = (float) (sqrt(err) * 1.0001 + 1e-6);
	if (e > GraphQuantErrBound(params, dim))
		GraphQuantErrBound(params, dim) = e;
}

/*
 * The highest value the trained parameters params cover in dimension j:
 * lo + 255 * step, in float4 as a vector's value would be.
 */
static inline float
param_hi(const float *params, int dim, int j)
{
	return (float) ((double) params[j] + 255.0 * (double) params[dim + j]);
}

/*
 * GraphSq8TrainUnion: during training (after GraphSq8TrainBegin, before
 * GraphSq8TrainEnd), widen the ranges to cover the ranges of another
 * segment's trained parameters input (a merge's input: every vector of it
 * lies within them, up to the float rounding of lo + 255 * step, which
 * the codes absorb by clamping and the error bound by being measured).
 */
void
GraphSq8TrainUnion(float *params, int dim, const float *input)
{
	float	   *lo = params;
	float	   *hi = params + dim;
	int			j;

	for (j = 0; j < dim; j++)
	{
		float		ihi = param_hi(input, dim, j);

		if (input[j] < lo[j])
			lo[j] = input[j];
		if (ihi > hi[j])
			hi[j] = ihi;
	}
}

/*
 * GraphSq8Covers: do the trained parameters input cover the ranges being
 * trained in params (after GraphSq8TrainBegin, before GraphSq8TrainEnd)
 * with the same lowest values?  Then a merge can keep input's parameters
 * for its output, and with them the codes of input's docs.
 */
bool
GraphSq8Covers(const float *input, const float *params, int dim)
{
	const float *lo = params;
	const float *hi = params + dim;
	int			j;

	for (j = 0; j < dim; j++)
	{
		if (isinf(lo[j]))
			continue;			/* nothing trained there */
		if (input[j] != lo[j] || param_hi(input, dim, j) < hi[j])
			return false;
	}
	return true;
}

/*
 * GraphSq8BoundsBegin, GraphSq8BoundsAdd, GraphSq8BoundsEnd: with
 * params' lo and step set (trained, or kept from a merge's input), compute
 * the error bound and the least non-zero norm over the vectors given to
 * GraphSq8BoundsAdd (every vector of the segment being written).
 */
void
GraphSq8BoundsBegin(float *params, int dim)
{
	GraphQuantErrBound(params, dim) = 0;
	GraphQuantMinNorm(params, dim) = get_float4_infinity();
}

void
GraphSq8BoundsAdd(float *params, int dim, const float *vector)
{
	double		norm = 0;
	int			j;

	train_error(params, dim, vector);
	for (j = 0; j < dim; j++)
		norm += (double) vector[j] * vector[j];
	norm = sqrt(norm);
	if (norm > 0 && norm < GraphQuantMinNorm(params, dim))
		GraphQuantMinNorm(params, dim) = (float) norm;
}

void
GraphSq8BoundsEnd(float *params, int dim)
{
	if (isinf(GraphQuantMinNorm(params, dim)))
		GraphQuantMinNorm(params, dim) = 0;
}

/*
 * GraphSq8Encode: write vector's quantized part of a node record into
 * rec (GraphSq8RecordBytes(dim) bytes): its norm, the squared norm of
 * its decoded offset, then its code.
 */
void
GraphSq8Encode(const float *params, int dim, const float *vector, char *rec)
{
	const float *step = params + dim;
	const float *lo = params;
	uint8	   *code = (uint8 *) (rec + 2 * sizeof(float));
	double		norm = 0;
	double		dsq = 0;
	float		f;
	int			j;

	for (j = 0; j < dim; j++)
	{
		double		c = 0;

		norm += (double) vector[j] * vector[j];
		if (step[j] > 0)
		{
			c = rint(((double) vector[j] - lo[j]) / step[j]);
			c = Max(0, Min(255, c));
		}
		code[j] = (uint8) c;
		dsq += ((double) step[j] * c) * ((double) step[j] * c);
	}
	f = (float) sqrt(norm);
	memcpy(rec, &f, sizeof(float));
	f = (float) dsq;
	memcpy(rec + sizeof(float), &f, sizeof(float));
}

/*
 * GraphSq8Prepare: prepare query (dim floats) for the estimates against
 * the codes of a segment with parameters params; allocates in the current
 * memory context.
 */
void
GraphSq8Prepare(GraphQuantQuery *qq, const float *params,
				SegvecMetric metric, const float *query, int dim)
{
	const float *lo = params;
	const float *step = params + dim;
	double	   *b = palloc(sizeof(double) * Max(dim, 1));
	double		bmax = 0;
	int			qmax = SEGVEC_SQ8_QMAX(dim);
	int			j;

	qq->metric = metric;
	qq->dim = dim;
	qq->q = palloc(sizeof(int16) * Max(dim, 1));
	qq->konst = 0;
	qq->qnorm = 0;
	for (j = 0; j < dim; j++)
	{
		double		d = (double) query[j] - lo[j];

		qq->qnorm += (double) query[j] * query[j];
		if (metric == SEGVEC_METRIC_L2)
		{
			b[j] = (double) step[j] * d;
			qq->konst += d * d;
		}
		else
		{
			b[j] = (double) query[j] * step[j];
			qq->konst += (double) query[j] * lo[j];
		}
		bmax = Max(bmax, fabs(b[j]));
	}
	qq->qnorm = sqrt(qq->qnorm);
	qq->scale = bmax > 0 ? bmax / qmax : 0;
	for (j = 0; j < dim; j++)
	{
		double		v = qq->scale > 0 ? rint(b[j] / qq->scale) : 0;

		qq->q[j] = (int16) Max(-qmax, Min(qmax, v));
	}

	/*
	 * The error bounds.  Rounding the query's weights to q makes scale * X
	 * exceed sum b[j] * code[j] by sum r[j] * code[j], r[j] = scale * q[j] -
	 * b[j]; that is 127.5 * sum r[j] (taken off through xshift) plus
	 * sum r[j] * (code[j] - 127.5), at most xerr = 127.5 * sum |r[j]| either
	 * way.  Decoding moves x by at most GraphQuantErrBound (derr): l2: the
	 * squared estimate is off by at most twice xerr (sqerr), and the
	 * distance to x by derr; ip: q . x by xerr plus |q| times derr; cosine:
	 * that over |q| |x|, |x| at least the segment's least norm.  Float
	 * rounding of the stored sums adds a relative 1e-5.
	 *
	 * With segvec.quant_bound = probable, derr's share is the bound that
	 * holds unless the decoding errors x[j] - decoded x[j] (each within
	 * step[j] / 2) conspire against the query: by Hoeffding's inequality,
	 * for errors independent across dimensions a sum w . (x - decoded x)
	 * exceeds kappa * sqrt(sum (w[j] * step[j])^2) with probability at
	 * most exp(-2 kappa^2), 1e-9 for kappa = 3.22; for l2, w = q - decoded
	 * x, so |q - x|^2 >= |q - decoded x|^2 - 2 ptol * |q - decoded x|
	 * with ptol = kappa * maxstep (GraphQuantLowerBound); for ip and
	 * cosine w = q, so |q| * derr becomes kappa * sqrt(sum (q[j] *
	 * step[j])^2) where that is smaller.
	 * It is far tighter in many dimensions, where the worst case (every
	 * error at its extreme, in the direction of the query) is far off.
	 */
	{
		double		rsum = 0,
					rabs = 0,
					qstep = 0,
					maxstep = 0,
					xerr,
					derr = GraphQuantErrBound(params, dim),
					qderr,
					minnorm = GraphQuantMinNorm(params, dim);

		for (j = 0; j < dim; j++)
		{
			double		r = qq->scale * qq->q[j] - b[j];

			rsum += r;
			rabs += fabs(r);
			qstep += ((double) query[j] * step[j]) * ((double) query[j] * step[j]);
			maxstep = Max(maxstep, (double) step[j]);
		}
		qq->xshift = -127.5 * rsum;
		xerr = 127.5 * rabs;
		qderr = qq->qnorm * derr;
		qq->ptol = -1;
		if (segvec_quant_bound == SEGVEC_QUANT_BOUND_PROBABLE)
		{
			qq->ptol = GRAPH_QUANT_KAPPA * maxstep;
			qderr = Min(qderr, GRAPH_QUANT_KAPPA * sqrt(qstep));
		}

		qq->sqerr = 2 * xerr + 1e-5 * (qq->konst + 1);
		qq->derr = derr;
		qq->slack = 0;
		if (metric != SEGVEC_METRIC_L2)
		{
			qq->slack = xerr + qderr +
				1e-5 * (fabs(qq->konst) + qq->qnorm * minnorm + 1);
			if (metric == SEGVEC_METRIC_COSINE)
				qq->slack = (qq->qnorm > 0 && minnorm > 0) ?
					qq->slack / (qq->qnorm * minnorm) : get_float8_infinity();
		}
	}
	pfree(b);
}

/*
 * GraphQuantLowerBound: a distance that no node of the segment whose
 * estimate (GraphQuantDistance) is at least estimate can be nearer than
 * (exactly; for RaBitQ, with the probability of its bound).
 */
double
GraphQuantLowerBound(const GraphQuantQuery *qq, double estimate)
{
	if (isinf(estimate) || isnan(estimate))
		return estimate;
	/* RaBitQ's search goes by the lower bounds themselves (rabitq.c) */
	if (qq->quant == SEGVEC_QUANT_RABITQ)
		return estimate;
	if (qq->metric == SEGVEC_METRIC_L2)
	{
		/* |q - decoded x| is at least d, |q - x| at least d - derr */
		double		d = sqrt(Max(0.0, estimate * estimate - qq->sqerr));
		double		lb = d - qq->derr;

		/*
		 * segvec.quant_bound = probable: |q - x|^2 >= t^2 - 2 ptol t for
		 * t = |q - decoded x| >= d, which grows with t from t = ptol on
		 */
		if (qq->ptol >= 0)
			lb = Max(lb, d >= 2 * qq->ptol ? sqrt(d * d - 2 * qq->ptol * d) : 0.0);
		return lb;
	}
	return estimate - qq->slack;
}

/*
 * GraphSq8Distance: the estimated distance between the prepared query
 * and the vector whose quantized record is rec; NaN where the exact
 * distance would be NaN (cosine with a zero vector).
 */
double
GraphSq8Distance(const GraphQuantQuery *qq, const char *rec)
{
	const uint8 *code = (const uint8 *) (rec + 2 * sizeof(float));
	double		x = qq->scale * SegvecSq8DotKernel(qq->q, code, qq->dim) +
		qq->xshift;
	float		f;
	double		sim;

	switch (qq->metric)
	{
		case SEGVEC_METRIC_L2:
			memcpy(&f, rec + sizeof(float), sizeof(float));
			return sqrt(Max(0.0, qq->konst + f - 2 * x));
		case SEGVEC_METRIC_IP:
			return -(qq->konst + x);
		case SEGVEC_METRIC_COSINE:
			memcpy(&f, rec, sizeof(float));
			if (f == 0 || qq->qnorm == 0)
				return get_float8_nan();
			sim = (qq->konst + x) / (qq->qnorm * f);
			return 1.0 - Max(-1.0, Min(1.0, sim));
		default:
			elog(ERROR, "unknown segvec metric %d", (int) qq->metric);
	}
	return 0;					/* keep the compiler quiet */
}

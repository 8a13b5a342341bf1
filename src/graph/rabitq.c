/*-------------------------------------------------------------------------
 *
 * rabitq.c
 *	  RaBitQ quantization of graph segments (Gao and Long, "RaBitQ:
 *	  Quantizing High-Dimensional Vectors with a Theoretical Error Bound
 *	  for Approximate Nearest Neighbor Search", SIGMOD 2024): training,
 *	  encoding, and the distance bounds a search traverses a segment with.
 *
 * A segment has a centroid c (the mean of its vectors) and a random
 * orthogonal transform P.  A vector x becomes its normalized residual
 * o = (x - c) / |x - c|, padded with zeros to D = GraphRabitqPadded(dim)
 * dimensions and rotated, o' = P o; its code is the sign bits of o',
 * which stand for the unit vector o_bar = (2 b - 1) / sqrt(D) (P^-1 of it
 * is the paper's quantized vector).  The record keeps, with the code,
 * |x - c|, <o_bar, o'> = sum |o'[i]| / sqrt(D) (the paper's <o_bar, o>,
 * which P does not change) and |x|.
 *
 * P is a randomized Hadamard transform: GRAPH_RABITQ_ROUNDS rounds, each a
 * random sign flip of every coordinate followed by a normalized fast
 * Walsh-Hadamard transform of one block of B coordinates, B the largest
 * power of two at most D; when B < D the rounds take the first and the last
 * B coordinates in turn (the two blocks overlap and cover all D).  Every
 * step is orthogonal, so P is; it costs O(D log D) per vector and needs
 * only a seed (kept in the parameters, drawn from pg_prng when the
 * segment is written) where a dense random matrix would cost D^2 per
 * vector and D^2 float4 of parameters (2.6 MB at 784 dimensions, 9 MB at
 * 1,536).  src/README.md, "RaBitQ", says why it is good enough.
 *
 * A query q is rotated the same way once per segment: q' = P (q - c) /
 * |q - c|, then quantized to 4-bit unsigned u[i] (vl + delta * u[i]
 * approximates q'[i]; deterministic rounding), so <o_bar, q'_u> comes from
 * one popcount kernel (kernels/rabitq.c).  The paper's estimator of
 * <o, q_r> (q_r = (q - c) / |q - c|) is <o_bar, q'> / <o_bar, o>, and with
 * probability close to 1 for eps0 = 1.9 (the paper's; eps0 is
 * segvec.rabitq_epsilon, by default 1.25, a bound that about one node in
 * twelve exceeds on Fashion-MNIST, see src/README.md)
 *
 *	|<o_bar, q'> / <o_bar, o> - <o, q_r>|
 *		<= eps0 * sqrt((1 - <o_bar, o>^2) / <o_bar, o>^2) / sqrt(D - 1)
 *
 * The query's rounding moves <o_bar, q'> by <o_bar, r> (r = q' - q'_u,
 * known): by the same concentration over the code's signs, at most
 * eps0 * |r| / sqrt(D) (qerr), which the bound takes in too, over
 * <o_bar, o>.  So <o, q_r> >= est - err per node, and
 *
 *	l2: |x - q|^2 = |x - c|^2 + |q - c|^2 - 2 |x - c| |q - c| <o, q_r>,
 *	    at least that with <o, q_r> replaced by est + err;
 *	ip: q . x = (|q|^2 + |x|^2 - |x - q|^2) / 2, so -(q . x) is at
 *	    least -(|q|^2 + |x|^2 - lb^2) / 2 with lb^2 the l2 bound;
 *	cosine: 1 - q . x / (|q| |x|) the same way, NaN for a zero vector
 *	    (or query), as the exact distance.
 *
 * The search traverses the graph by these lower bounds, not by the
 * estimates themselves: GraphQuantLowerBound is then the identity, so the
 * rerank pool (graphsearch.c) may release its nearest as soon as the
 * last bound the graph search yielded reaches it, per node and not by a
 * segment-wide worst case.  The bound is probabilistic: a node whose
 * exact distance is below it may come out of the pool later than a
 * farther one; the scan's strict order (segvec.scan_order) skips it then
 * (a late find), so the output stays in exact order with exact
 * distances, and what a smaller eps0 loses is recall.
 *
 * src/graph/rabitq.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "common/pg_prng.h"
#include "miscadmin.h"
#include "utils/float.h"

#include "graph/graph.h"
#include "graph/rabitq.h"

double		segvec_rabitq_epsilon = SEGVEC_RABITQ_EPS0_DEFAULT;

/* the largest power of two at most n (n >= 64) */
static int
hadamard_block(int n)
{
	int			b = 64;

	while (b * 2 <= n)
		b *= 2;
	return b;
}

/*
 * GraphRabitqRotationMake: the transform of a segment with parameters
 * params, in the current memory context.
 */
void
GraphRabitqRotationMake(GraphRabitqRotation *rot, const float *params,
						int dim)
{
	pg_prng_state st;
	uint64		seed;
	int			nwords = GraphRabitqPadded(dim) / 64;
	int			i;

	memcpy(&seed, params, sizeof(uint64));
	pg_prng_seed(&st, seed);
	rot->dpad = GraphRabitqPadded(dim);
	rot->block = hadamard_block(rot->dpad);
	rot->signs = palloc(sizeof(uint64) * GRAPH_RABITQ_ROUNDS * nwords);
	for (i = 0; i < GRAPH_RABITQ_ROUNDS * nwords; i++)
		rot->signs[i] = pg_prng_uint64(&st);
	rot->work = palloc(sizeof(float) * rot->dpad);
}

/* In place, the unnormalized Walsh-Hadamard transform of v[0 .. n - 1] */
static void
fwht(float *v, int n)
{
	int			h,
				i,
				j;

	for (h = 1; h < n; h *= 2)
		for (i = 0; i < n; i += 2 * h)
			for (j = i; j < i + h; j++)
			{
				float		a = v[j];
				float		b = v[j + h];

				v[j] = a + b;
				v[j + h] = a - b;
			}
}

/* In place, v (rot->dpad floats) becomes P v */
static void
rotate(const GraphRabitqRotation *rot, float *v)
{
	int			nwords = rot->dpad / 64;
	float		scale = (float) (1.0 / sqrt((double) rot->block));
	int			r,
				i;

	for (r = 0; r < GRAPH_RABITQ_ROUNDS; r++)
	{
		const uint64 *s = rot->signs + (Size) r * nwords;
		float	   *blk = (r % 2 == 0) ? v : v + rot->dpad - rot->block;

		for (i = 0; i < rot->dpad; i++)
			if ((s[i >> 6] >> (i & 63)) & 1)
				v[i] = -v[i];
		fwht(blk, rot->block);
		for (i = 0; i < rot->block; i++)
			blk[i] *= scale;
	}
}

/*
 * GraphRabitqTrain: params (GraphRabitqParamFloats(dim), zeroed) for the n
 * vectors: a fresh seed and their mean.
 */
void
GraphRabitqTrain(float *params, int dim, const float *vectors, uint32 n)
{
	double	   *sum = palloc0(sizeof(double) * Max(dim, 1));
	uint32		i;

	for (i = 0; i < n; i++)
	{
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		GraphRabitqTrainAdd(sum, dim, vectors + (Size) i * dim);
	}
	GraphRabitqTrainEnd(params, dim, sum, n);
	pfree(sum);
}

/*
 * GraphRabitqTrainAdd: add vector to sum (dim doubles, zeroed before the
 * first), the running sum of the vectors a centroid is trained on (a
 * merge, graphmerge.c, adds its output's vectors as it reads them from
 * the inputs' pages).
 */
void
GraphRabitqTrainAdd(double *sum, int dim, const float *vector)
{
	int			j;

	for (j = 0; j < dim; j++)
		sum[j] += vector[j];
}

/*
 * GraphRabitqTrainEnd: params (GraphRabitqParamFloats(dim), zeroed) for
 * the n vectors whose sum is sum: a fresh seed and their mean.
 */
void
GraphRabitqTrainEnd(float *params, int dim, const double *sum, uint64 n)
{
	float	   *c = GraphRabitqCentroid(params);
	uint64		seed = pg_prng_uint64(&pg_global_prng_state);
	int			j;

	memcpy(params, &seed, sizeof(uint64));
	for (j = 0; j < dim; j++)
		c[j] = n > 0 ? (float) (sum[j] / (double) n) : 0;
}

/*
 * GraphRabitqEncode: write vector's quantized part of a node record into
 * rec (GraphRabitqRecordBytes(dim) bytes): |x - c|, <o_bar, o>, |x|, code.
 */
void
GraphRabitqEncode(const GraphRabitqRotation *rot, const float *params,
				  int dim, const float *vector, char *rec)
{
	const float *c = GraphRabitqCentroid(params);
	float	   *o = rot->work;
	uint8	   *code = (uint8 *) (rec + 3 * sizeof(float));
	double		res = 0,
				norm = 0,
				abssum = 0;
	float		f[3];
	int			i;

	memset(o, 0, sizeof(float) * rot->dpad);
	memset(code, 0, rot->dpad / 8);
	for (i = 0; i < dim; i++)
	{
		double		d = (double) vector[i] - c[i];

		res += d * d;
		norm += (double) vector[i] * vector[i];
	}
	res = sqrt(res);
	f[0] = (float) res;
	f[1] = 1;
	f[2] = (float) sqrt(norm);
	if (res > 0)
	{
		for (i = 0; i < dim; i++)
			o[i] = (float) (((double) vector[i] - c[i]) / res);
		rotate(rot, o);
		for (i = 0; i < rot->dpad; i++)
		{
			if (o[i] > 0)
				code[i >> 3] |= (uint8) (1 << (i & 7));
			abssum += fabs(o[i]);
		}
		f[1] = (float) (abssum / sqrt((double) rot->dpad));
		/* <o_bar, o> > 0 for a unit o; guard against rounding */
		if (!(f[1] > 1e-6))
			f[1] = 1e-6;
	}
	memcpy(rec, f, sizeof(f));
}

/*
 * GraphRabitqPrepare: prepare query (dim floats) for the bounds against the
 * codes of a segment with parameters params; allocates in the current
 * memory context.  qq is zeroed and has quant set.
 */
void
GraphRabitqPrepare(GraphQuantQuery *qq, const float *params,
				   SegvecMetric metric, const float *query, int dim)
{
	GraphRabitqRotation rot;
	const float *c = GraphRabitqCentroid(params);
	float	   *v;
	double		qc = 0,
				qsq = 0,
				lo,
				hi,
				usum = 0,
				rsq = 0;
	int			dpad,
				i;

	GraphRabitqRotationMake(&rot, params, dim);
	dpad = rot.dpad;
	v = rot.work;
	memset(v, 0, sizeof(float) * dpad);
	for (i = 0; i < dim; i++)
	{
		double		d = (double) query[i] - c[i];

		qc += d * d;
		qsq += (double) query[i] * query[i];
	}
	qc = sqrt(qc);
	if (qc > 0)
	{
		for (i = 0; i < dim; i++)
			v[i] = (float) (((double) query[i] - c[i]) / qc);
		rotate(&rot, v);
	}

	qq->metric = metric;
	qq->dim = dim;
	qq->nwords = dpad / 64;
	qq->planes = palloc0(sizeof(uint64) * GRAPH_RABITQ_QBITS * qq->nwords);
	lo = hi = v[0];
	for (i = 1; i < dpad; i++)
	{
		lo = Min(lo, v[i]);
		hi = Max(hi, v[i]);
	}
	qq->vl = lo;
	qq->delta = (hi - lo) / ((1 << GRAPH_RABITQ_QBITS) - 1);
	for (i = 0; i < dpad; i++)
	{
		int			u = 0,
					j;
		double		r;

		if (qq->delta > 0)
		{
			u = (int) rint((v[i] - lo) / qq->delta);
			u = Max(0, Min((1 << GRAPH_RABITQ_QBITS) - 1, u));
		}
		for (j = 0; j < GRAPH_RABITQ_QBITS; j++)
			if ((u >> j) & 1)
				qq->planes[(Size) j * qq->nwords + (i >> 6)] |=
					UINT64CONST(1) << (i & 63);
		usum += u;
		r = v[i] - (lo + qq->delta * u);
		rsq += r * r;
	}
	qq->ubase = dpad * qq->vl + qq->delta * usum;
	qq->invsqrtd = 1.0 / sqrt((double) dpad);
	qq->epsd = segvec_rabitq_epsilon / sqrt((double) Max(dpad - 1, 1));
	qq->qerr = segvec_rabitq_epsilon * sqrt(rsq) * qq->invsqrtd;
	qq->qc = qc;
	qq->qsq = qsq;
	qq->qnorm = sqrt(qsq);
	pfree(rot.signs);
	pfree(rot.work);
}

/*
 * GraphRabitqDistance: the lower bound (see the file header) on the
 * distance between the prepared query and the vector whose quantized
 * record is rec; NaN where the exact distance would be NaN (cosine with a
 * zero vector).
 */
double
GraphRabitqDistance(const GraphQuantQuery *qq, const char *rec)
{
	const uint8 *code = (const uint8 *) (rec + 3 * sizeof(float));
	float		f[3];
	uint32		ones;
	uint32		x;
	double		a,
				t,
				ab,
				ip,
				err,
				lbsq,
				sim;

	memcpy(f, rec, sizeof(f));
	a = f[0];
	t = f[1];
	x = SegvecRabitqDotKernel(code, qq->planes, qq->nwords, &ones);

	/*
	 * <o_bar, q'_u> = (2 sum over set bits (vl + delta u) - sum (vl + delta
	 * u)) / sqrt(D)
	 */
	ip = (2.0 * (qq->vl * ones + qq->delta * x) - qq->ubase) * qq->invsqrtd / t;
	err = (qq->epsd * sqrt(Max(0.0, 1.0 - t * t)) + qq->qerr) / t;
	ab = a * qq->qc;
	lbsq = a * a + qq->qc * qq->qc - 2.0 * ab * (ip + err);
	/* float4 rounding of the stored norms */
	lbsq -= 1e-6 * (a * a + qq->qc * qq->qc);
	lbsq = Max(0.0, lbsq);

	switch (qq->metric)
	{
		case SEGVEC_METRIC_L2:
			return sqrt(lbsq);
		case SEGVEC_METRIC_IP:
			return -(qq->qsq + (double) f[2] * f[2] - lbsq) / 2 -
				1e-6 * (qq->qsq + (double) f[2] * f[2]);
		case SEGVEC_METRIC_COSINE:
			if (f[2] == 0 || qq->qnorm == 0)
				return get_float8_nan();
			sim = (qq->qsq + (double) f[2] * f[2] - lbsq) / (2 * qq->qnorm * f[2]);
			return 1.0 - Max(-1.0, Min(1.0, sim)) - 1e-6;
		default:
			elog(ERROR, "unknown segvec metric %d", (int) qq->metric);
	}
	return 0;					/* keep the compiler quiet */
}

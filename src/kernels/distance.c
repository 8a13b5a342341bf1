/*-------------------------------------------------------------------------
 *
 * distance.c
 *	  Vector input checks, distance kernels and the SQL distance functions.
 *
 * Two kernels do the work of the index: the sum of squared differences and
 * the dot product of two float4 arrays.  Each exists in three versions:
 *
 *	- scalar: plain C written so that gcc -O2 vectorises it (eight
 *	  independent accumulators updated by an inner loop of known length),
 *	  whatever -march the build uses;
 *	- avx2: AVX2 + FMA intrinsics, 32 floats per iteration;
 *	- avx512: AVX-512F intrinsics, 64 floats per iteration and a masked
 *	  load for the tail.
 *
 * The SIMD versions are compiled with function-level target attributes, so
 * a portable build (make OPTFLAGS="") still contains them;
 * SegvecInitKernels() picks the best one the CPU supports, once, at load
 * time.  Until it runs, the function pointers hold the scalar kernels.
 *
 * The kernels accumulate in float; versions differ only in summation order,
 * so their results agree to within float rounding.  Cosine distance is
 * computed by a fused kernel that accumulates a.b, |a|^2 and |b|^2 in double
 * (the products of two floats are exact in double), because 1 - cos is a
 * difference of nearly equal numbers for close vectors and float
 * accumulation would leave errors around 1e-6 there.
 *
 * The SQL functions go through SegvecDistance(), so an operator returns
 * exactly the value the index computes for the same pair.
 *
 * src/kernels/distance.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/float.h"

#include "kernels/distance.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define SEGVEC_HAVE_X86_KERNELS 1
#define SEGVEC_TARGET_AVX2		__attribute__((target("avx2,fma")))
#define SEGVEC_TARGET_AVX512	__attribute__((target("avx512f")))
#endif

/*
 * Fused cosine kernel: a.b, |a|^2 and |b|^2 accumulated in double.
 */
typedef void (*CosineKernelFn) (const float *a, const float *b, int dim,
								double *dot, double *norma, double *normb);

static float l2_squared_scalar(const float *a, const float *b, int dim);
static float dot_scalar(const float *a, const float *b, int dim);
static void cosine_parts_scalar(const float *a, const float *b, int dim,
								double *dot, double *norma, double *normb);

/* Chosen by SegvecInitKernels(); scalar until then */
SegvecKernelFn SegvecL2SquaredKernel = l2_squared_scalar;
SegvecKernelFn SegvecDotKernel = dot_scalar;
static CosineKernelFn CosinePartsKernel = cosine_parts_scalar;
static const char *kernel_name = "scalar";


/* ---------------------------------------------------------------------
 * Scalar kernels
 * ---------------------------------------------------------------------
 */

/*
 * Sum of (a[i] - b[i])^2.
 *
 * The inner loop has a constant trip count of eight and updates eight
 * independent accumulators, so gcc -O2 (whose cheap vectoriser accepts
 * loops of known length) turns it into one AVX or two SSE vector operations
 * with the accumulators held in registers.  The arrays are walked through
 * advancing pointers rather than i + j subscripts: with -fwrapv the compiler
 * cannot prove that int subscripts are consecutive and would fall back to
 * gathers.
 */
static float
l2_squared_scalar(const float *a, const float *b, int dim)
{
	float		acc[8] = {0};
	float		result;
	float		d;
	int			nblocks = dim / 8;
	int			k;
	int			j;

	for (k = 0; k < nblocks; k++, a += 8, b += 8)
	{
		for (j = 0; j < 8; j++)
		{
			d = a[j] - b[j];
			acc[j] += d * d;
		}
	}

	result = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
		((acc[4] + acc[5]) + (acc[6] + acc[7]));

	for (j = 0; j < dim % 8; j++)
	{
		d = a[j] - b[j];
		result += d * d;
	}

	return result;
}

/* Sum of a[i] * b[i]; same structure as l2_squared_scalar */
static float
dot_scalar(const float *a, const float *b, int dim)
{
	float		acc[8] = {0};
	float		result;
	int			nblocks = dim / 8;
	int			k;
	int			j;

	for (k = 0; k < nblocks; k++, a += 8, b += 8)
	{
		for (j = 0; j < 8; j++)
			acc[j] += a[j] * b[j];
	}

	result = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
		((acc[4] + acc[5]) + (acc[6] + acc[7]));

	for (j = 0; j < dim % 8; j++)
		result += a[j] * b[j];

	return result;
}

/*
 * a.b, |a|^2 and |b|^2 in double, four accumulators each.  The product of
 * two floats is exact in double, so only the additions round.
 */
static void
cosine_parts_scalar(const float *a, const float *b, int dim,
					double *dot, double *norma, double *normb)
{
	double		dacc[4] = {0};
	double		xacc[4] = {0};
	double		yacc[4] = {0};
	double		av;
	double		bv;
	int			nblocks = dim / 4;
	int			k;
	int			j;

	for (k = 0; k < nblocks; k++, a += 4, b += 4)
	{
		for (j = 0; j < 4; j++)
		{
			av = a[j];
			bv = b[j];
			dacc[j] += av * bv;
			xacc[j] += av * av;
			yacc[j] += bv * bv;
		}
	}

	dacc[0] = (dacc[0] + dacc[1]) + (dacc[2] + dacc[3]);
	xacc[0] = (xacc[0] + xacc[1]) + (xacc[2] + xacc[3]);
	yacc[0] = (yacc[0] + yacc[1]) + (yacc[2] + yacc[3]);

	for (j = 0; j < dim % 4; j++)
	{
		av = a[j];
		bv = b[j];
		dacc[0] += av * bv;
		xacc[0] += av * av;
		yacc[0] += bv * bv;
	}

	*dot = dacc[0];
	*norma = xacc[0];
	*normb = yacc[0];
}

/*
 * Double-precision versions of the two float kernels, used when a float
 * kernel overflowed (elements above about 1e19 in magnitude): every finite
 * float input gives a finite result here.
 */
static double
l2_squared_double(const float *a, const float *b, int dim)
{
	double		s0 = 0.0,
				s1 = 0.0;
	double		d;
	int			i = 0;

	for (; i + 2 <= dim; i += 2)
	{
		d = (double) a[i] - (double) b[i];
		s0 += d * d;
		d = (double) a[i + 1] - (double) b[i + 1];
		s1 += d * d;
	}
	for (; i < dim; i++)
	{
		d = (double) a[i] - (double) b[i];
		s0 += d * d;
	}

	return s0 + s1;
}

static double
dot_double(const float *a, const float *b, int dim)
{
	double		dot;
	double		norma;
	double		normb;

	cosine_parts_scalar(a, b, dim, &dot, &norma, &normb);
	return dot;
}

/* Sum of a[i]^2 in double, for l2_norm and l2_normalize */
static double
norm_squared_double(const float *a, int dim)
{
	double		s0 = 0.0,
				s1 = 0.0,
				s2 = 0.0,
				s3 = 0.0;
	int			i = 0;

	for (; i + 4 <= dim; i += 4)
	{
		s0 += (double) a[i] * (double) a[i];
		s1 += (double) a[i + 1] * (double) a[i + 1];
		s2 += (double) a[i + 2] * (double) a[i + 2];
		s3 += (double) a[i + 3] * (double) a[i + 3];
	}
	s0 = (s0 + s1) + (s2 + s3);
	for (; i < dim; i++)
		s0 += (double) a[i] * (double) a[i];

	return s0;
}


#ifdef SEGVEC_HAVE_X86_KERNELS

/* ---------------------------------------------------------------------
 * AVX2 + FMA kernels
 * ---------------------------------------------------------------------
 */

/* Horizontal sum of the eight floats of v */
SEGVEC_TARGET_AVX2
static inline float
hsum_avx2(__m256 v)
{
	__m128		lo = _mm256_castps256_ps128(v);
	__m128		hi = _mm256_extractf128_ps(v, 1);

	lo = _mm_add_ps(lo, hi);
	hi = _mm_movehl_ps(hi, lo);
	lo = _mm_add_ps(lo, hi);
	hi = _mm_shuffle_ps(lo, lo, 0x1);
	lo = _mm_add_ss(lo, hi);
	return _mm_cvtss_f32(lo);
}

/* Horizontal sum of the four doubles of v */
SEGVEC_TARGET_AVX2
static inline double
hsum_pd_avx2(__m256d v)
{
	__m128d		lo = _mm256_castpd256_pd128(v);
	__m128d		hi = _mm256_extractf128_pd(v, 1);

	lo = _mm_add_pd(lo, hi);
	hi = _mm_unpackhi_pd(lo, lo);
	lo = _mm_add_sd(lo, hi);
	return _mm_cvtsd_f64(lo);
}

SEGVEC_TARGET_AVX2
static float
l2_squared_avx2(const float *a, const float *b, int dim)
{
	__m256		s0 = _mm256_setzero_ps();
	__m256		s1 = _mm256_setzero_ps();
	__m256		s2 = _mm256_setzero_ps();
	__m256		s3 = _mm256_setzero_ps();
	__m256		d0,
				d1,
				d2,
				d3;
	float		result;
	float		d;
	int			i = 0;

	for (; i + 32 <= dim; i += 32)
	{
		d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
		d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8),
						   _mm256_loadu_ps(b + i + 8));
		d2 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 16),
						   _mm256_loadu_ps(b + i + 16));
		d3 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 24),
						   _mm256_loadu_ps(b + i + 24));
		s0 = _mm256_fmadd_ps(d0, d0, s0);
		s1 = _mm256_fmadd_ps(d1, d1, s1);
		s2 = _mm256_fmadd_ps(d2, d2, s2);
		s3 = _mm256_fmadd_ps(d3, d3, s3);
	}
	for (; i + 8 <= dim; i += 8)
	{
		d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
		s0 = _mm256_fmadd_ps(d0, d0, s0);
	}

	result = hsum_avx2(_mm256_add_ps(_mm256_add_ps(s0, s1),
									 _mm256_add_ps(s2, s3)));

	for (; i < dim; i++)
	{
		d = a[i] - b[i];
		result += d * d;
	}

	return result;
}

SEGVEC_TARGET_AVX2
static float
dot_avx2(const float *a, const float *b, int dim)
{
	__m256		s0 = _mm256_setzero_ps();
	__m256		s1 = _mm256_setzero_ps();
	__m256		s2 = _mm256_setzero_ps();
	__m256		s3 = _mm256_setzero_ps();
	float		result;
	int			i = 0;

	for (; i + 32 <= dim; i += 32)
	{
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i),
							 _mm256_loadu_ps(b + i), s0);
		s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8),
							 _mm256_loadu_ps(b + i + 8), s1);
		s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16),
							 _mm256_loadu_ps(b + i + 16), s2);
		s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24),
							 _mm256_loadu_ps(b + i + 24), s3);
	}
	for (; i + 8 <= dim; i += 8)
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i),
							 _mm256_loadu_ps(b + i), s0);

	result = hsum_avx2(_mm256_add_ps(_mm256_add_ps(s0, s1),
									 _mm256_add_ps(s2, s3)));

	for (; i < dim; i++)
		result += a[i] * b[i];

	return result;
}

/* Fused cosine parts in double, eight floats per iteration */
SEGVEC_TARGET_AVX2
static void
cosine_parts_avx2(const float *a, const float *b, int dim,
				  double *dot, double *norma, double *normb)
{
	__m256d		d0 = _mm256_setzero_pd();
	__m256d		d1 = _mm256_setzero_pd();
	__m256d		x0 = _mm256_setzero_pd();
	__m256d		x1 = _mm256_setzero_pd();
	__m256d		y0 = _mm256_setzero_pd();
	__m256d		y1 = _mm256_setzero_pd();
	__m256d		alo,
				ahi,
				blo,
				bhi;
	double		dsum,
				xsum,
				ysum;
	double		av,
				bv;
	int			i = 0;

	for (; i + 8 <= dim; i += 8)
	{
		alo = _mm256_cvtps_pd(_mm_loadu_ps(a + i));
		ahi = _mm256_cvtps_pd(_mm_loadu_ps(a + i + 4));
		blo = _mm256_cvtps_pd(_mm_loadu_ps(b + i));
		bhi = _mm256_cvtps_pd(_mm_loadu_ps(b + i + 4));
		d0 = _mm256_fmadd_pd(alo, blo, d0);
		d1 = _mm256_fmadd_pd(ahi, bhi, d1);
		x0 = _mm256_fmadd_pd(alo, alo, x0);
		x1 = _mm256_fmadd_pd(ahi, ahi, x1);
		y0 = _mm256_fmadd_pd(blo, blo, y0);
		y1 = _mm256_fmadd_pd(bhi, bhi, y1);
	}

	dsum = hsum_pd_avx2(_mm256_add_pd(d0, d1));
	xsum = hsum_pd_avx2(_mm256_add_pd(x0, x1));
	ysum = hsum_pd_avx2(_mm256_add_pd(y0, y1));

	for (; i < dim; i++)
	{
		av = a[i];
		bv = b[i];
		dsum += av * bv;
		xsum += av * av;
		ysum += bv * bv;
	}

	*dot = dsum;
	*norma = xsum;
	*normb = ysum;
}


/* ---------------------------------------------------------------------
 * AVX-512F kernels
 * ---------------------------------------------------------------------
 */

/* Mask selecting the first n (0..15) lanes */
#define TAIL_MASK16(n)	((__mmask16) ((1U << (n)) - 1))

SEGVEC_TARGET_AVX512
static float
l2_squared_avx512(const float *a, const float *b, int dim)
{
	__m512		s0 = _mm512_setzero_ps();
	__m512		s1 = _mm512_setzero_ps();
	__m512		s2 = _mm512_setzero_ps();
	__m512		s3 = _mm512_setzero_ps();
	__m512		d0,
				d1,
				d2,
				d3;
	__mmask16	mask;
	int			i = 0;

	for (; i + 64 <= dim; i += 64)
	{
		d0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
		d1 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 16),
						   _mm512_loadu_ps(b + i + 16));
		d2 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 32),
						   _mm512_loadu_ps(b + i + 32));
		d3 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 48),
						   _mm512_loadu_ps(b + i + 48));
		s0 = _mm512_fmadd_ps(d0, d0, s0);
		s1 = _mm512_fmadd_ps(d1, d1, s1);
		s2 = _mm512_fmadd_ps(d2, d2, s2);
		s3 = _mm512_fmadd_ps(d3, d3, s3);
	}
	for (; i + 16 <= dim; i += 16)
	{
		d0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
		s0 = _mm512_fmadd_ps(d0, d0, s0);
	}
	if (i < dim)
	{
		/* masked-off lanes load as zero and are not read from memory */
		mask = TAIL_MASK16(dim - i);
		d0 = _mm512_sub_ps(_mm512_maskz_loadu_ps(mask, a + i),
						   _mm512_maskz_loadu_ps(mask, b + i));
		s1 = _mm512_fmadd_ps(d0, d0, s1);
	}

	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1),
											  _mm512_add_ps(s2, s3)));
}

SEGVEC_TARGET_AVX512
static float
dot_avx512(const float *a, const float *b, int dim)
{
	__m512		s0 = _mm512_setzero_ps();
	__m512		s1 = _mm512_setzero_ps();
	__m512		s2 = _mm512_setzero_ps();
	__m512		s3 = _mm512_setzero_ps();
	__mmask16	mask;
	int			i = 0;

	for (; i + 64 <= dim; i += 64)
	{
		s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i),
							 _mm512_loadu_ps(b + i), s0);
		s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16),
							 _mm512_loadu_ps(b + i + 16), s1);
		s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32),
							 _mm512_loadu_ps(b + i + 32), s2);
		s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48),
							 _mm512_loadu_ps(b + i + 48), s3);
	}
	for (; i + 16 <= dim; i += 16)
		s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i),
							 _mm512_loadu_ps(b + i), s0);
	if (i < dim)
	{
		mask = TAIL_MASK16(dim - i);
		s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, a + i),
							 _mm512_maskz_loadu_ps(mask, b + i), s1);
	}

	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1),
											  _mm512_add_ps(s2, s3)));
}

/*
 * Fused cosine parts in double, sixteen floats per iteration: each 512-bit
 * load of floats is widened to two vectors of eight doubles.  Only AVX-512F
 * instructions are used (the upper half is taken through a double cast).
 */
SEGVEC_TARGET_AVX512
static void
cosine_parts_avx512(const float *a, const float *b, int dim,
					double *dot, double *norma, double *normb)
{
	__m512d		d0 = _mm512_setzero_pd();
	__m512d		d1 = _mm512_setzero_pd();
	__m512d		x0 = _mm512_setzero_pd();
	__m512d		x1 = _mm512_setzero_pd();
	__m512d		y0 = _mm512_setzero_pd();
	__m512d		y1 = _mm512_setzero_pd();
	__m512		va,
				vb;
	__m512d		alo,
				ahi,
				blo,
				bhi;
	__mmask16	mask;
	int			i = 0;

	for (;;)
	{
		if (i + 16 <= dim)
		{
			va = _mm512_loadu_ps(a + i);
			vb = _mm512_loadu_ps(b + i);
		}
		else if (i < dim)
		{
			mask = TAIL_MASK16(dim - i);
			va = _mm512_maskz_loadu_ps(mask, a + i);
			vb = _mm512_maskz_loadu_ps(mask, b + i);
		}
		else
			break;

		alo = _mm512_cvtps_pd(_mm512_castps512_ps256(va));
		ahi = _mm512_cvtps_pd(_mm256_castpd_ps(
			_mm512_extractf64x4_pd(_mm512_castps_pd(va), 1)));
		blo = _mm512_cvtps_pd(_mm512_castps512_ps256(vb));
		bhi = _mm512_cvtps_pd(_mm256_castpd_ps(
			_mm512_extractf64x4_pd(_mm512_castps_pd(vb), 1)));
		d0 = _mm512_fmadd_pd(alo, blo, d0);
		d1 = _mm512_fmadd_pd(ahi, bhi, d1);
		x0 = _mm512_fmadd_pd(alo, alo, x0);
		x1 = _mm512_fmadd_pd(ahi, ahi, x1);
		y0 = _mm512_fmadd_pd(blo, blo, y0);
		y1 = _mm512_fmadd_pd(bhi, bhi, y1);
		i += 16;
	}

	*dot = _mm512_reduce_add_pd(_mm512_add_pd(d0, d1));
	*norma = _mm512_reduce_add_pd(_mm512_add_pd(x0, x1));
	*normb = _mm512_reduce_add_pd(_mm512_add_pd(y0, y1));
}

#endif							/* SEGVEC_HAVE_X86_KERNELS */


/* ---------------------------------------------------------------------
 * Kernel selection
 * ---------------------------------------------------------------------
 */

/*
 * SegvecInitKernels: choose the kernels for this CPU.  Called once from
 * _PG_init; calling it again does no harm.  __builtin_cpu_supports checks
 * both the CPUID bits and that the OS saves the wider registers.
 */
void
SegvecInitKernels(void)
{
	SegvecL2SquaredKernel = l2_squared_scalar;
	SegvecDotKernel = dot_scalar;
	CosinePartsKernel = cosine_parts_scalar;
	kernel_name = "scalar";

#ifdef SEGVEC_HAVE_X86_KERNELS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
	{
		SegvecL2SquaredKernel = l2_squared_avx512;
		SegvecDotKernel = dot_avx512;
		CosinePartsKernel = cosine_parts_avx512;
		kernel_name = "avx512";
	}
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
	{
		SegvecL2SquaredKernel = l2_squared_avx2;
		SegvecDotKernel = dot_avx2;
		CosinePartsKernel = cosine_parts_avx2;
		kernel_name = "avx2";
	}
#endif
}

/* SegvecKernelName: "scalar", "avx2" or "avx512" */
const char *
SegvecKernelName(void)
{
	return kernel_name;
}

const char *
SegvecMetricName(SegvecMetric metric)
{
	switch (metric)
	{
		case SEGVEC_METRIC_L2:
			return "l2";
		case SEGVEC_METRIC_COSINE:
			return "cosine";
		case SEGVEC_METRIC_IP:
			return "ip";
		case SEGVEC_METRIC_INVALID:
			break;
	}
	return "invalid";
}


/* ---------------------------------------------------------------------
 * Distances
 * ---------------------------------------------------------------------
 */

/*
 * 1 - a.b / (|a| |b|), clamped to [0, 2]; NaN when either norm is 0.
 *
 * The denominator is sqrt(|a|^2 |b|^2) rather than |a| |b|: for a == b the
 * three sums are the same double x, and sqrt(x * x) == x exactly, so the
 * distance of a vector to itself is exactly 0.  The sums of squares of
 * floats stay far inside the double range, so the product cannot overflow.
 */
static double
cosine_distance(const float *a, const float *b, int dim)
{
	double		dot;
	double		norma;
	double		normb;
	double		result;

	CosinePartsKernel(a, b, dim, &dot, &norma, &normb);

	if (norma == 0.0 || normb == 0.0)
		return get_float8_nan();

	result = 1.0 - dot / sqrt(norma * normb);

	/* rounding can step slightly outside the range */
	if (result < 0.0)
		result = 0.0;
	else if (result > 2.0)
		result = 2.0;

	return result;
}

/*
 * SegvecDistance: the distance between a and b under the metric, exactly as
 * the SQL functions return it (they call this).
 *
 * l2 and ip use the float kernels.  If the float sum overflows (only for
 * elements above about 1e19 in magnitude) the value is recomputed in double,
 * so a finite input always gives a finite distance.
 */
double
SegvecDistance(SegvecMetric metric, const float *a, const float *b, int dim)
{
	float		f;

	switch (metric)
	{
		case SEGVEC_METRIC_L2:
			f = SegvecL2SquaredKernel(a, b, dim);
			if (likely(isfinite(f)))
				return sqrt((double) f);
			return sqrt(l2_squared_double(a, b, dim));

		case SEGVEC_METRIC_COSINE:
			return cosine_distance(a, b, dim);

		case SEGVEC_METRIC_IP:
			f = SegvecDotKernel(a, b, dim);

			/*
			 * 0.0 - x rather than -x, so that a zero product gives +0 and
			 * not -0 (which float8out would print as "-0").
			 */
			if (likely(isfinite(f)))
				return 0.0 - (double) f;
			return 0.0 - dot_double(a, b, dim);

		case SEGVEC_METRIC_INVALID:
			break;
	}

	elog(ERROR, "unrecognized segvec metric: %d", (int) metric);
	return 0.0;					/* keep compiler quiet */
}


/* ---------------------------------------------------------------------
 * Input checks
 * ---------------------------------------------------------------------
 */

/*
 * SegvecArrayGetVector: see distance.h.  Returns a pointer into the array's
 * data; the array must stay alive (and detoasted) as long as it is used.
 */
float *
SegvecArrayGetVector(ArrayType *array, int *dim)
{
	float	   *x;
	int			ndim = ARR_NDIM(array);
	int			n;
	int			i;

	if (ARR_ELEMTYPE(array) != FLOAT4OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("vector must be an array of real")));

	if (ndim > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("vector must be a one-dimensional array"),
				 errdetail("The array has %d dimensions.", ndim)));

	n = (ndim == 0) ? 0 : ArrayGetNItems(ndim, ARR_DIMS(array));

	if (n < 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("vector must have at least 1 dimension")));

	if (n > SEGVEC_MAX_DIM)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("vector cannot have more than %d dimensions",
						SEGVEC_MAX_DIM),
				 errdetail("The array has %d elements.", n)));

	if (array_contains_nulls(array))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("vector must not contain NULL elements")));

	x = (float *) ARR_DATA_PTR(array);

	for (i = 0; i < n; i++)
	{
		if (unlikely(!isfinite(x[i])))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("vector must not contain NaN or infinite values"),
					 errdetail("Element %d is %s.", i + 1,
							   isnan(x[i]) ? "NaN" :
							   (x[i] > 0 ? "Infinity" : "-Infinity"))));
	}

	*dim = n;
	return x;
}

/* SegvecCheckSameDim: ERROR unless found == expected */
void
SegvecCheckSameDim(int expected, int found)
{
	if (expected != found)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg_plural("vector has %d dimension, expected %d",
							   "vector has %d dimensions, expected %d",
							   found, found, expected)));
}


/* ---------------------------------------------------------------------
 * SQL-callable functions
 * ---------------------------------------------------------------------
 */

/* Check both arguments and compute their distance under the metric */
static double
distance_of_args(FunctionCallInfo fcinfo, SegvecMetric metric)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	float	   *x;
	float	   *y;
	int			dima;
	int			dimb;

	x = SegvecArrayGetVector(a, &dima);
	y = SegvecArrayGetVector(b, &dimb);
	SegvecCheckSameDim(dima, dimb);

	return SegvecDistance(metric, x, y, dima);
}

PG_FUNCTION_INFO_V1(segvec_l2_distance);
Datum
segvec_l2_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(distance_of_args(fcinfo, SEGVEC_METRIC_L2));
}

PG_FUNCTION_INFO_V1(segvec_cosine_distance);
Datum
segvec_cosine_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(distance_of_args(fcinfo, SEGVEC_METRIC_COSINE));
}

/* inner_product is exactly minus negative_inner_product */
PG_FUNCTION_INFO_V1(segvec_inner_product);
Datum
segvec_inner_product(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(0.0 - distance_of_args(fcinfo, SEGVEC_METRIC_IP));
}

PG_FUNCTION_INFO_V1(segvec_negative_inner_product);
Datum
segvec_negative_inner_product(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(distance_of_args(fcinfo, SEGVEC_METRIC_IP));
}

/* Euclidean norm, accumulated in double */
PG_FUNCTION_INFO_V1(segvec_l2_norm);
Datum
segvec_l2_norm(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	float	   *x;
	int			dim;

	x = SegvecArrayGetVector(a, &dim);

	PG_RETURN_FLOAT8(sqrt(norm_squared_double(x, dim)));
}

/*
 * The vector divided by its norm (computed in double); a zero vector is
 * returned unchanged.  The result is a new one-dimensional real[] with lower
 * bound 1.
 */
PG_FUNCTION_INFO_V1(segvec_l2_normalize);
Datum
segvec_l2_normalize(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *result;
	float	   *x;
	float	   *y;
	double		norm;
	Size		nbytes;
	int			dim;
	int			i;

	x = SegvecArrayGetVector(a, &dim);
	norm = sqrt(norm_squared_double(x, dim));

	nbytes = ARR_OVERHEAD_NONULLS(1) + dim * sizeof(float);
	result = (ArrayType *) palloc0(nbytes);
	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = 0;
	result->elemtype = FLOAT4OID;
	ARR_DIMS(result)[0] = dim;
	ARR_LBOUND(result)[0] = 1;

	y = (float *) ARR_DATA_PTR(result);
	if (norm == 0.0)
		memcpy(y, x, dim * sizeof(float));
	else
	{
		for (i = 0; i < dim; i++)
			y[i] = (float) (x[i] / norm);
	}

	PG_RETURN_ARRAYTYPE_P(result);
}

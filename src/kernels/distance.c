/*-------------------------------------------------------------------------
 *
 * distance.c
 *	  The distance kernels, their choice at load time, and SegvecDistance.
 *
 * Three kernels do the work of the index: the sum of squared differences
 * and the dot product of two float4 arrays (accumulated in float), and the
 * fused a.b, |a|^2, |b|^2 of cosine distance (accumulated in double, since
 * 1 - cos is a difference of nearly equal numbers for close vectors and
 * float accumulation would leave errors around 1e-6 there).  Each exists
 * in three versions:
 *
 *	- scalar: plain C, which gcc -O2 vectorises with whatever instructions
 *	  the build's flags allow (SSE2 with Debian's);
 *	- avx2: AVX2 intrinsics, compiled with target("avx2,fma");
 *	- avx512: AVX-512F intrinsics, target("avx512f"), masked loads for the
 *	  tail.
 *
 * The avx2 and avx512 versions are written once, in distance_simd.h, which
 * this file includes once per instruction set after defining that set's
 * primitives (register types, loads, masks, the reduction trees).
 *
 * All three return the same bits for the same inputs, so that an index
 * answers the same on every machine (and the regression suite's expected
 * output holds everywhere).  They follow one summation order:
 *
 *	- the float kernels keep FLOAT_LANES (32) partial sums; lane j adds the
 *	  elements j, j + 32, j + 64, ... in that order, each step one rounded
 *	  multiply then one rounded add (never a fused multiply-add: the scalar
 *	  version cannot use one on CPUs without FMA, so no version does, and
 *	  the Makefile compiles with -ffp-contract=off so the compiler does not
 *	  fuse them either);
 *	- the lanes are then combined in a fixed tree: lane j += lane j + 16 for
 *	  j < 16, then j += j + 8 for j < 8, then 4, 2, 1; the result is lane 0;
 *	- the cosine kernel does the same with DOUBLE_LANES (8) double lanes
 *	  and a tree of 4, 2, 1.  The product of two floats is exact in
 *	  double, so only the additions round, and a fused multiply-add gives
 *	  the same bits as a multiply and an add: the SIMD versions use one.
 *
 * The tail is a last, partial block: the SIMD versions read it through
 * masks that load zeros for the lanes past the end, the scalar ones add the
 * tail elements to the first lanes only (cosine: to a zero-padded copy).
 * Both give the same sums: a lane past the end adds +0, which leaves a
 * partial sum unchanged, as a partial sum is never -0 (it starts at +0, and
 * a sum is -0 only when both terms are).  test/bench/kernels.c checks the
 * identity and measures the speed; the "kernels" regression suite checks it
 * through SQL.
 *
 * SegvecInitKernels() defines the GUC segvec.kernel ("auto" by default:
 * the widest path the CPU supports, found once through CPUID); setting it
 * to a path the CPU lacks is refused.  Only the functions of the avx2 and
 * avx512 sections carry target attributes: the rest of the module runs on
 * any x86-64 CPU (test/check-portable.sh checks the built module).
 *
 * The input checks and the SQL functions are in vector.c; they go through
 * SegvecDistance(), so an operator returns exactly the value the index
 * computes for the same pair.
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

#include "utils/float.h"
#include "utils/guc.h"

#include "kernels/distance.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define SEGVEC_HAVE_X86_KERNELS 1
#define SEGVEC_TARGET_AVX2		__attribute__((target("avx2,fma")))
#define SEGVEC_TARGET_AVX512	__attribute__((target("avx512f")))
#endif

/* Partial sums of the float kernels and of the cosine kernel (see above) */
#define FLOAT_LANES		32
#define DOUBLE_LANES	8

/* the bounded l2 kernels look at their partial sum every this many blocks */
#define BOUND_CHECK_BLOCKS	4

/*
 * Fused cosine kernel: a.b, |a|^2 and |b|^2 accumulated in double.
 */
typedef void (*CosineKernelFn) (const float *a, const float *b, int dim,
								double *dot, double *norma, double *normb);

static float l2_squared_scalar(const float *a, const float *b, int dim);
static float dot_scalar(const float *a, const float *b, int dim);
static float l2_squared_bounded_scalar(const float *a, const float *b,
									   int dim, float bound);
static void cosine_parts_scalar(const float *a, const float *b, int dim,
								double *dot, double *norma, double *normb);

/* Chosen by the segvec.kernel GUC; scalar until it is defined */
SegvecKernelFn SegvecL2SquaredKernel = l2_squared_scalar;
SegvecKernelFn SegvecDotKernel = dot_scalar;
SegvecBoundedKernelFn SegvecL2SquaredBoundedKernel = l2_squared_bounded_scalar;
static CosineKernelFn CosinePartsKernel = cosine_parts_scalar;
static const char *kernel_name = "scalar";


/* ---------------------------------------------------------------------
 * Scalar kernels
 * ---------------------------------------------------------------------
 */

/*
 * The scalar kernels keep their partial sums in local arrays indexed only
 * by constants once the loops below are unrolled, so that the compiler
 * holds them in (vector) registers through the main loop; the tail goes to
 * the first lanes (see the file header).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL_LANES	_Pragma("GCC unroll 32")
#elif defined(__clang__)
#define UNROLL_LANES	_Pragma("unroll")
#else
#define UNROLL_LANES
#endif

/* acc[j] += (a[j] - b[j])^2 for the FLOAT_LANES lanes */
static inline void
l2_block_scalar(float *acc, const float *a, const float *b)
{
	float		d;
	int			j;

	UNROLL_LANES
	for (j = 0; j < FLOAT_LANES; j++)
	{
		d = a[j] - b[j];
		acc[j] += d * d;
	}
}

/* acc[j] += a[j] * b[j] for the FLOAT_LANES lanes */
static inline void
dot_block_scalar(float *acc, const float *a, const float *b)
{
	int			j;

	UNROLL_LANES
	for (j = 0; j < FLOAT_LANES; j++)
		acc[j] += a[j] * b[j];
}

/* Combine FLOAT_LANES partial sums in the fixed tree; returns the sum */
static inline float
reduce_float_lanes(float *acc)
{
	int			j;

	UNROLL_LANES
	for (j = 0; j < 16; j++)
		acc[j] += acc[j + 16];
	UNROLL_LANES
	for (j = 0; j < 8; j++)
		acc[j] += acc[j + 8];
	UNROLL_LANES
	for (j = 0; j < 4; j++)
		acc[j] += acc[j + 4];
	acc[0] += acc[2];
	acc[1] += acc[3];
	return acc[0] + acc[1];
}

/* Combine DOUBLE_LANES partial sums in the fixed tree; returns the sum */
static inline double
reduce_double_lanes(double *acc)
{
	int			j;

	UNROLL_LANES
	for (j = 0; j < 4; j++)
		acc[j] += acc[j + 4];
	acc[0] += acc[2];
	acc[1] += acc[3];
	return acc[0] + acc[1];
}

/*
 * Sum of (a[i] - b[i])^2.
 *
 * The arrays are walked through advancing pointers rather than i + j
 * subscripts: with -fwrapv the compiler cannot prove that int subscripts
 * are consecutive and would fall back to gathers.
 */
static float
l2_squared_scalar(const float *a, const float *b, int dim)
{
	float		acc[FLOAT_LANES] = {0};
	float		d;
	int			nblocks = dim / FLOAT_LANES;
	int			rest = dim % FLOAT_LANES;
	int			k;
	int			j;

	for (k = 0; k < nblocks; k++, a += FLOAT_LANES, b += FLOAT_LANES)
		l2_block_scalar(acc, a, b);
	for (j = 0; j < rest; j++)
	{
		d = a[j] - b[j];
		acc[j] += d * d;
	}

	return reduce_float_lanes(acc);
}

/*
 * l2_squared_scalar that may stop early: every BOUND_CHECK_BLOCKS blocks it
 * combines the partial sums (in a copy, by the same tree) and returns that
 * value once it is at least bound.  Otherwise it returns the very bits of
 * l2_squared_scalar.  A value it returns early is at most the whole sum:
 * the terms are never negative, and rounded additions are monotonic.
 */
static float
l2_squared_bounded_scalar(const float *a, const float *b, int dim,
						  float bound)
{
	float		acc[FLOAT_LANES] = {0};
	float		part[FLOAT_LANES];
	float		d;
	int			nblocks = dim / FLOAT_LANES;
	int			rest = dim % FLOAT_LANES;
	int			k;
	int			j;

	for (k = 0; k < nblocks; k++, a += FLOAT_LANES, b += FLOAT_LANES)
	{
		l2_block_scalar(acc, a, b);
		if ((k + 1) % BOUND_CHECK_BLOCKS == 0 && k + 1 < nblocks)
		{
			float		sum;

			memcpy(part, acc, sizeof(part));
			sum = reduce_float_lanes(part);
			if (sum >= bound)
				return sum;
		}
	}
	for (j = 0; j < rest; j++)
	{
		d = a[j] - b[j];
		acc[j] += d * d;
	}

	return reduce_float_lanes(acc);
}

/* Sum of a[i] * b[i]; same structure as l2_squared_scalar */
static float
dot_scalar(const float *a, const float *b, int dim)
{
	float		acc[FLOAT_LANES] = {0};
	int			nblocks = dim / FLOAT_LANES;
	int			rest = dim % FLOAT_LANES;
	int			k;
	int			j;

	for (k = 0; k < nblocks; k++, a += FLOAT_LANES, b += FLOAT_LANES)
		dot_block_scalar(acc, a, b);
	for (j = 0; j < rest; j++)
		acc[j] += a[j] * b[j];

	return reduce_float_lanes(acc);
}

#if defined(__x86_64__) && defined(__SSE2__)

/*
 * On x86-64 the scalar cosine kernel is written with SSE2 intrinsics, the
 * architecture's baseline (no target attribute, runs on every x86-64 CPU):
 * gcc does not vectorise the float-to-double widening of the plain loop
 * below, which ran at twice the time of the earlier kernel.  The eight
 * double lanes are held as four pairs; lane j adds element j of each block
 * in the same order as the plain loop, so the result is the same bits.
 */

/* Elements 0-3 of p widened to two pairs of doubles, *lo and *hi */
static inline void
widen4(const float *p, __m128d *lo, __m128d *hi)
{
	__m128		v = _mm_loadu_ps(p);

	*lo = _mm_cvtps_pd(v);
	*hi = _mm_cvtps_pd(_mm_movehl_ps(v, v));
}

/*
 * Lanes off..off+3 (off 0 or 4) of the three sums over nblocks full blocks
 * and the zero-padded tail block ta/tb (when rest > 0), into d, x and y
 * (two pairs each).  Six accumulators and four operands fit in SSE2's
 * sixteen registers; all eight lanes at once would not.
 */
static inline void
cosine_half_sse2(const float *a, const float *b, int nblocks, int rest,
				 const float *ta, const float *tb, int off,
				 __m128d *d, __m128d *x, __m128d *y)
{
	__m128d		d0 = _mm_setzero_pd(),
				d1 = _mm_setzero_pd(),
				x0 = _mm_setzero_pd(),
				x1 = _mm_setzero_pd(),
				y0 = _mm_setzero_pd(),
				y1 = _mm_setzero_pd();
	__m128d		a0,
				a1,
				b0,
				b1;
	int			k;

	for (k = 0; k <= nblocks; k++)
	{
		const float *pa = a + k * DOUBLE_LANES + off;
		const float *pb = b + k * DOUBLE_LANES + off;

		if (k == nblocks)
		{
			if (rest == 0)
				break;
			pa = ta + off;
			pb = tb + off;
		}
		widen4(pa, &a0, &a1);
		widen4(pb, &b0, &b1);
		d0 = _mm_add_pd(d0, _mm_mul_pd(a0, b0));
		d1 = _mm_add_pd(d1, _mm_mul_pd(a1, b1));
		x0 = _mm_add_pd(x0, _mm_mul_pd(a0, a0));
		x1 = _mm_add_pd(x1, _mm_mul_pd(a1, a1));
		y0 = _mm_add_pd(y0, _mm_mul_pd(b0, b0));
		y1 = _mm_add_pd(y1, _mm_mul_pd(b1, b1));
	}
	d[0] = d0;
	d[1] = d1;
	x[0] = x0;
	x[1] = x1;
	y[0] = y0;
	y[1] = y1;
}

/* a.b, |a|^2 and |b|^2 in double, DOUBLE_LANES partial sums each */
static void
cosine_parts_scalar(const float *a, const float *b, int dim,
					double *dot, double *norma, double *normb)
{
	__m128d		d[4],
				x[4],
				y[4];
	float		ta[DOUBLE_LANES] = {0};
	float		tb[DOUBLE_LANES] = {0};
	double		lanes[DOUBLE_LANES];
	int			nblocks = dim / DOUBLE_LANES;
	int			rest = dim % DOUBLE_LANES;

	if (rest > 0)
	{
		memcpy(ta, a + nblocks * DOUBLE_LANES, rest * sizeof(float));
		memcpy(tb, b + nblocks * DOUBLE_LANES, rest * sizeof(float));
	}
	/* lanes 0-3, then lanes 4-7: each lane's additions in the same order */
	cosine_half_sse2(a, b, nblocks, rest, ta, tb, 0, d, x, y);
	cosine_half_sse2(a, b, nblocks, rest, ta, tb, 4, d + 2, x + 2, y + 2);

	memcpy(lanes, d, sizeof(lanes));
	*dot = reduce_double_lanes(lanes);
	memcpy(lanes, x, sizeof(lanes));
	*norma = reduce_double_lanes(lanes);
	memcpy(lanes, y, sizeof(lanes));
	*normb = reduce_double_lanes(lanes);
}

#else							/* not x86-64 */

/* dacc[j] += a[j] b[j], xacc[j] += a[j]^2, yacc[j] += b[j]^2, in double */
static inline void
cosine_block_scalar(double *dacc, double *xacc, double *yacc,
					const float *a, const float *b)
{
	double		av;
	double		bv;
	int			j;

	UNROLL_LANES
	for (j = 0; j < DOUBLE_LANES; j++)
	{
		av = a[j];
		bv = b[j];
		dacc[j] += av * bv;
		xacc[j] += av * av;
		yacc[j] += bv * bv;
	}
}

/* a.b, |a|^2 and |b|^2 in double, DOUBLE_LANES partial sums each */
static void
cosine_parts_scalar(const float *a, const float *b, int dim,
					double *dot, double *norma, double *normb)
{
	double		dacc[DOUBLE_LANES] = {0};
	double		xacc[DOUBLE_LANES] = {0};
	double		yacc[DOUBLE_LANES] = {0};
	float		ta[DOUBLE_LANES] = {0};
	float		tb[DOUBLE_LANES] = {0};
	int			nblocks = dim / DOUBLE_LANES;
	int			rest = dim % DOUBLE_LANES;
	int			k;

	for (k = 0; k < nblocks; k++, a += DOUBLE_LANES, b += DOUBLE_LANES)
		cosine_block_scalar(dacc, xacc, yacc, a, b);
	if (rest > 0)
	{
		memcpy(ta, a, rest * sizeof(float));
		memcpy(tb, b, rest * sizeof(float));
		cosine_block_scalar(dacc, xacc, yacc, ta, tb);
	}

	*dot = reduce_double_lanes(dacc);
	*norma = reduce_double_lanes(xacc);
	*normb = reduce_double_lanes(yacc);
}

#endif							/* x86-64 */

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


#ifdef SEGVEC_HAVE_X86_KERNELS

/* ---------------------------------------------------------------------
 * AVX2 kernels
 *
 * Four 8-float registers hold lanes 0-7, 8-15, 16-23 and 24-31, two
 * 4-double registers the cosine lanes 0-3 and 4-7; the tail is read by
 * masked loads (masked-off lanes read as zero, and their memory is not
 * touched).
 * ---------------------------------------------------------------------
 */

/* Mask of the first n (0..8) lanes of lane group g (lanes 8g .. 8g + 7) */
SEGVEC_TARGET_AVX2
static inline __m256i
tail_mask_avx2(int n, int g)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n - 8 * g),
							  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/*
 * The fixed tree over 32 float lanes held as s[0] (0-7) .. s[3] (24-31):
 * (j, j + 16), then (j, j + 8), (j, j + 4), (j, j + 2), (j, j + 1).
 */
SEGVEC_TARGET_AVX2
static inline float
reduce_float_lanes_avx2(const __m256 *s)
{
	__m256		t = _mm256_add_ps(_mm256_add_ps(s[0], s[2]),
								  _mm256_add_ps(s[1], s[3]));
	__m128		u = _mm_add_ps(_mm256_castps256_ps128(t),
							   _mm256_extractf128_ps(t, 1));

	u = _mm_add_ps(u, _mm_movehl_ps(u, u));
	u = _mm_add_ss(u, _mm_shuffle_ps(u, u, 0x1));
	return _mm_cvtss_f32(u);
}

/* The fixed tree over 8 double lanes held as q[0] (0-3) and q[1] (4-7) */
SEGVEC_TARGET_AVX2
static inline double
reduce_double_lanes_avx2(const __m256d *q)
{
	__m256d		t = _mm256_add_pd(q[0], q[1]);
	__m128d		u = _mm_add_pd(_mm256_castpd256_pd128(t),
							   _mm256_extractf128_pd(t, 1));

	u = _mm_add_sd(u, _mm_unpackhi_pd(u, u));
	return _mm_cvtsd_f64(u);
}

/* The 8 floats at p widened to doubles in q[0] (0-3) and q[1] (4-7) */
SEGVEC_TARGET_AVX2
static inline void
widen_avx2(const float *p, __m256d *q)
{
	q[0] = _mm256_cvtps_pd(_mm_loadu_ps(p));
	q[1] = _mm256_cvtps_pd(_mm_loadu_ps(p + 4));
}

/* The same for the first n (1..7) floats at p, zeros after them */
SEGVEC_TARGET_AVX2
static inline void
widen_tail_avx2(const float *p, int n, __m256d *q)
{
	__m256		v = _mm256_maskload_ps(p, tail_mask_avx2(n, 0));

	q[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
	q[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
}

#define SIMD_ISA			avx2
#define SIMD_TARGET			SEGVEC_TARGET_AVX2
#define simd_f				__m256
#define simd_d				__m256d
#define SIMD_FREGS			4
#define SIMD_FWIDTH			8
#define SIMD_DREGS			2
#define SIMD_FZERO()		_mm256_setzero_ps()
#define SIMD_FLOAD(p)		_mm256_loadu_ps(p)
#define SIMD_FADD(x, y)		_mm256_add_ps(x, y)
#define SIMD_FSUB(x, y)		_mm256_sub_ps(x, y)
#define SIMD_FMUL(x, y)		_mm256_mul_ps(x, y)
#define simd_fmask			__m256i
#define SIMD_FTAIL_MASK(n, r)	tail_mask_avx2(n, r)
#define SIMD_FLOAD_MASKED(p, m)	_mm256_maskload_ps(p, m)
#define SIMD_FREDUCE(s)		reduce_float_lanes_avx2(s)
#define SIMD_DZERO()		_mm256_setzero_pd()
#define SIMD_DFMADD(x, y, acc)	_mm256_fmadd_pd(x, y, acc)
#define SIMD_DWIDEN(p, q)	widen_avx2(p, q)
#define SIMD_DWIDEN_TAIL(p, n, q)	widen_tail_avx2(p, n, q)
#define SIMD_DREDUCE(q)		reduce_double_lanes_avx2(q)

#include "kernels/distance_simd.h"


/* ---------------------------------------------------------------------
 * AVX-512F kernels
 *
 * Two 16-float registers hold lanes 0-15 and 16-31, one 8-double register
 * the cosine lanes; the tail is read by masked loads.
 * ---------------------------------------------------------------------
 */

/* Mask of the first n lanes (n may exceed 16: all lanes) */
#define TAIL_MASK16(n)	((__mmask16) ((n) >= 16 ? 0xFFFF : (1U << (n)) - 1))

/* Mask of the first n lanes of lane group g (none when n <= 16g) */
#define TAIL_MASK16_GROUP(n, g) \
	((g) == 0 ? TAIL_MASK16(n) : \
	 (n) > 16 * (g) ? TAIL_MASK16((n) - 16 * (g)) : (__mmask16) 0)

/* The fixed tree over 32 float lanes held as s[0] (0-15) and s[1] (16-31) */
SEGVEC_TARGET_AVX512
static inline float
reduce_float_lanes_avx512(const __m512 *s)
{
	__m512		t = _mm512_add_ps(s[0], s[1]);
	__m256		h = _mm256_add_ps(_mm512_castps512_ps256(t),
								  _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1)));
	__m128		u = _mm_add_ps(_mm256_castps256_ps128(h),
							   _mm256_extractf128_ps(h, 1));

	u = _mm_add_ps(u, _mm_movehl_ps(u, u));
	u = _mm_add_ss(u, _mm_shuffle_ps(u, u, 0x1));
	return _mm_cvtss_f32(u);
}

/* The fixed tree over 8 double lanes held in q[0] */
SEGVEC_TARGET_AVX512
static inline double
reduce_double_lanes_avx512(const __m512d *q)
{
	__m256d		h = _mm256_add_pd(_mm512_castpd512_pd256(q[0]),
								  _mm512_extractf64x4_pd(q[0], 1));
	__m128d		u = _mm_add_pd(_mm256_castpd256_pd128(h),
							   _mm256_extractf128_pd(h, 1));

	u = _mm_add_sd(u, _mm_unpackhi_pd(u, u));
	return _mm_cvtsd_f64(u);
}

/* The 8 floats at p widened to doubles in q[0] */
SEGVEC_TARGET_AVX512
static inline void
widen_avx512(const float *p, __m512d *q)
{
	q[0] = _mm512_cvtps_pd(_mm256_loadu_ps(p));
}

/* The same for the first n (1..7) floats at p, zeros after them */
SEGVEC_TARGET_AVX512
static inline void
widen_tail_avx512(const float *p, int n, __m512d *q)
{
	q[0] = _mm512_cvtps_pd(_mm512_castps512_ps256(
		_mm512_maskz_loadu_ps(TAIL_MASK16(n), p)));
}

#define SIMD_ISA			avx512
#define SIMD_TARGET			SEGVEC_TARGET_AVX512
#define simd_f				__m512
#define simd_d				__m512d
#define SIMD_FREGS			2
#define SIMD_FWIDTH			16
#define SIMD_DREGS			1
#define SIMD_FZERO()		_mm512_setzero_ps()
#define SIMD_FLOAD(p)		_mm512_loadu_ps(p)
#define SIMD_FADD(x, y)		_mm512_add_ps(x, y)
#define SIMD_FSUB(x, y)		_mm512_sub_ps(x, y)
#define SIMD_FMUL(x, y)		_mm512_mul_ps(x, y)
#define simd_fmask			__mmask16
#define SIMD_FTAIL_MASK(n, r)	TAIL_MASK16_GROUP(n, r)
#define SIMD_FLOAD_MASKED(p, m)	_mm512_maskz_loadu_ps(m, p)
#define SIMD_FREDUCE(s)		reduce_float_lanes_avx512(s)
#define SIMD_DZERO()		_mm512_setzero_pd()
#define SIMD_DFMADD(x, y, acc)	_mm512_fmadd_pd(x, y, acc)
#define SIMD_DWIDEN(p, q)	widen_avx512(p, q)
#define SIMD_DWIDEN_TAIL(p, n, q)	widen_tail_avx512(p, n, q)
#define SIMD_DREDUCE(q)		reduce_double_lanes_avx512(q)

#include "kernels/distance_simd.h"

#endif							/* SEGVEC_HAVE_X86_KERNELS */


/* ---------------------------------------------------------------------
 * Kernel selection
 * ---------------------------------------------------------------------
 */

typedef enum SegvecKernelPath
{
	SEGVEC_KERNEL_AUTO,
	SEGVEC_KERNEL_SCALAR,
	SEGVEC_KERNEL_AVX2,
	SEGVEC_KERNEL_AVX512
} SegvecKernelPath;

static const struct config_enum_entry kernel_options[] = {
	{"auto", SEGVEC_KERNEL_AUTO, false},
	{"scalar", SEGVEC_KERNEL_SCALAR, false},
	{"avx2", SEGVEC_KERNEL_AVX2, false},
	{"avx512", SEGVEC_KERNEL_AVX512, false},
	{NULL, 0, false}
};

static int	segvec_kernel = SEGVEC_KERNEL_AUTO;

/*
 * Whether this CPU (and OS) can run a path.  __builtin_cpu_supports checks
 * both the CPUID bits and that the OS saves the wider registers.
 */
static bool
kernel_path_supported(SegvecKernelPath path)
{
	switch (path)
	{
		case SEGVEC_KERNEL_AUTO:
		case SEGVEC_KERNEL_SCALAR:
			return true;
#ifdef SEGVEC_HAVE_X86_KERNELS
		case SEGVEC_KERNEL_AVX2:
			__builtin_cpu_init();
			return __builtin_cpu_supports("avx2") &&
				__builtin_cpu_supports("fma");
		case SEGVEC_KERNEL_AVX512:
			__builtin_cpu_init();
			return __builtin_cpu_supports("avx512f");
#else
		case SEGVEC_KERNEL_AVX2:
		case SEGVEC_KERNEL_AVX512:
			return false;
#endif
	}
	return false;
}

/* GUC check hook of segvec.kernel: refuse a path this CPU cannot run */
static bool
check_segvec_kernel(int *newval, void **extra, GucSource source)
{
	if (kernel_path_supported((SegvecKernelPath) *newval))
		return true;

	GUC_check_errdetail("This CPU does not support the %s instructions.",
						*newval == SEGVEC_KERNEL_AVX2 ? "AVX2 and FMA" : "AVX-512F");
	GUC_check_errhint("Use \"auto\", which picks the widest kernels this CPU supports.");
	return false;
}

/* GUC assign hook of segvec.kernel: install the kernels of the path */
static void
assign_segvec_kernel(int newval, void *extra)
{
	SegvecKernelPath path = (SegvecKernelPath) newval;

	if (path == SEGVEC_KERNEL_AUTO)
	{
		if (kernel_path_supported(SEGVEC_KERNEL_AVX512))
			path = SEGVEC_KERNEL_AVX512;
		else if (kernel_path_supported(SEGVEC_KERNEL_AVX2))
			path = SEGVEC_KERNEL_AVX2;
		else
			path = SEGVEC_KERNEL_SCALAR;
	}

	SegvecL2SquaredKernel = l2_squared_scalar;
	SegvecL2SquaredBoundedKernel = l2_squared_bounded_scalar;
	SegvecDotKernel = dot_scalar;
	CosinePartsKernel = cosine_parts_scalar;
	kernel_name = "scalar";

#ifdef SEGVEC_HAVE_X86_KERNELS
	if (path == SEGVEC_KERNEL_AVX512)
	{
		SegvecL2SquaredKernel = l2_squared_avx512;
		SegvecL2SquaredBoundedKernel = l2_squared_bounded_avx512;
		SegvecDotKernel = dot_avx512;
		CosinePartsKernel = cosine_parts_avx512;
		kernel_name = "avx512";
	}
	else if (path == SEGVEC_KERNEL_AVX2)
	{
		SegvecL2SquaredKernel = l2_squared_avx2;
		SegvecL2SquaredBoundedKernel = l2_squared_bounded_avx2;
		SegvecDotKernel = dot_avx2;
		CosinePartsKernel = cosine_parts_avx2;
		kernel_name = "avx2";
	}
#endif
	SegvecSq8SelectKernels(kernel_name);
	SegvecRabitqSelectKernels(kernel_name);
}

/*
 * SegvecInitKernels: define segvec.kernel, whose assign hook installs the
 * kernels.  Called once from _PG_init, before the segvec prefix is
 * reserved.
 */
void
SegvecInitKernels(void)
{
	DefineCustomEnumVariable("segvec.kernel",
							 "Distance kernels: auto, scalar, avx2 or avx512.",
							 "All give the same results; \"auto\" picks the widest the CPU supports.",
							 &segvec_kernel, SEGVEC_KERNEL_AUTO, kernel_options,
							 PGC_USERSET, 0,
							 check_segvec_kernel, assign_segvec_kernel, NULL);
}

/* SegvecKernelName: the kernels in use, "scalar", "avx2" or "avx512" */
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


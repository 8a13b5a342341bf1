/*-------------------------------------------------------------------------
 *
 * rabitq.c
 *	  The distance kernel over RaBitQ's 1-bit codes (graph/rabitq.c).
 *
 * A RaBitQ node record holds one bit per (padded, rotated) dimension.  A
 * search quantizes its rotated query once per segment to 4-bit unsigned
 * integers u[i] and stores them as four bit planes (plane j holds bit j of
 * every u[i]), so that the one sum a code needs,
 *
 *	X = sum over the code's set bits i of u[i]
 *	  = sum_j 2^j * popcount(code AND plane_j)
 *
 * is a few popcounts per 64 dimensions (Gao and Long, SIGMOD 2024, section
 * 3.3.2, the bitwise scheme).  The kernel also returns popcount(code),
 * which the estimate needs as well.  Every path adds integers, so the
 * scalar, the POPCNT and the AVX-512 versions return the same values.
 *
 *	SegvecRabitqDotKernel(code, planes, nwords, &ones) = X
 *
 * with code nwords * 8 bytes (any alignment), planes 4 * nwords uint64
 * (plane j at planes + j * nwords).
 *
 * The scalar version uses __builtin_popcountll, which the distribution's
 * flags compile to a table look-up; the avx2 and avx512 paths use the
 * POPCNT instruction (every CPU with AVX2 has it), and the avx512 path
 * AVX-512 VPOPCNTDQ where the CPU has it.  SegvecRabitqSelectKernels,
 * called with the other kernels' choice, picks the path; only the
 * functions with a target attribute use those instructions
 * (test/check-portable.sh).
 *
 * src/kernels/rabitq.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/quantkernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define RABITQ_HAVE_X86_KERNELS 1
#define RABITQ_TARGET_AVX2	__attribute__((target("avx2,popcnt")))
#define RABITQ_TARGET_AVX512	__attribute__((target("avx512f,avx512vpopcntdq")))
#endif

static uint32 rabitq_dot_scalar(const uint8 *code, const uint64 *planes,
								int nwords, uint32 *ones);

SegvecRabitqDotFn SegvecRabitqDotKernel = rabitq_dot_scalar;

static uint32
rabitq_dot_scalar(const uint8 *code, const uint64 *planes, int nwords,
				  uint32 *ones)
{
	uint32		n = 0,
				s0 = 0,
				s1 = 0,
				s2 = 0,
				s3 = 0;
	int			w;

	for (w = 0; w < nwords; w++)
	{
		uint64		c;

		memcpy(&c, code + (Size) w * 8, sizeof(uint64));
		n += __builtin_popcountll(c);
		s0 += __builtin_popcountll(c & planes[w]);
		s1 += __builtin_popcountll(c & planes[nwords + w]);
		s2 += __builtin_popcountll(c & planes[2 * nwords + w]);
		s3 += __builtin_popcountll(c & planes[3 * nwords + w]);
	}
	*ones = n;
	return s0 + 2 * s1 + 4 * s2 + 8 * s3;
}

#ifdef RABITQ_HAVE_X86_KERNELS

RABITQ_TARGET_AVX2
static uint32
rabitq_dot_avx2(const uint8 *code, const uint64 *planes, int nwords,
				  uint32 *ones)
{
	uint64		n = 0,
				s0 = 0,
				s1 = 0,
				s2 = 0,
				s3 = 0;
	int			w;

	for (w = 0; w < nwords; w++)
	{
		uint64		c;

		memcpy(&c, code + (Size) w * 8, sizeof(uint64));
		n += _mm_popcnt_u64(c);
		s0 += _mm_popcnt_u64(c & planes[w]);
		s1 += _mm_popcnt_u64(c & planes[nwords + w]);
		s2 += _mm_popcnt_u64(c & planes[2 * nwords + w]);
		s3 += _mm_popcnt_u64(c & planes[3 * nwords + w]);
	}
	*ones = (uint32) n;
	return (uint32) (s0 + 2 * s1 + 4 * s2 + 8 * s3);
}

RABITQ_TARGET_AVX512
static uint32
rabitq_dot_avx512(const uint8 *code, const uint64 *planes, int nwords,
				  uint32 *ones)
{
	__m512i		n = _mm512_setzero_si512();
	__m512i		s[4];
	uint64		sum[4];
	int			w,
				j;

	for (j = 0; j < 4; j++)
		s[j] = _mm512_setzero_si512();
	for (w = 0; w < nwords; w += 8)
	{
		__mmask8	k = (nwords - w >= 8) ? 0xFF :
			(__mmask8) ((1u << (nwords - w)) - 1);
		__m512i		c = _mm512_maskz_loadu_epi64(k, code + (Size) w * 8);

		n = _mm512_add_epi64(n, _mm512_popcnt_epi64(c));
		for (j = 0; j < 4; j++)
		{
			__m512i		p = _mm512_maskz_loadu_epi64(k, planes + (Size) j * nwords + w);

			s[j] = _mm512_add_epi64(s[j],
									_mm512_popcnt_epi64(_mm512_and_si512(c, p)));
		}
	}
	for (j = 0; j < 4; j++)
		sum[j] = _mm512_reduce_add_epi64(s[j]);
	*ones = (uint32) _mm512_reduce_add_epi64(n);
	return (uint32) (sum[0] + 2 * sum[1] + 4 * sum[2] + 8 * sum[3]);
}
#endif							/* RABITQ_HAVE_X86_KERNELS */

/*
 * SegvecRabitqSelectKernels: install the RaBitQ kernel of a path
 * ("scalar", "avx2" or "avx512"), which the caller (segvec.kernel's assign
 * hook) has checked the CPU supports.
 */
void
SegvecRabitqSelectKernels(const char *path)
{
	SegvecRabitqDotKernel = rabitq_dot_scalar;
#ifdef RABITQ_HAVE_X86_KERNELS
	if (strcmp(path, "scalar") == 0)
		return;
	__builtin_cpu_init();
	if (strcmp(path, "avx512") == 0 &&
		__builtin_cpu_supports("avx512vpopcntdq"))
		SegvecRabitqDotKernel = rabitq_dot_avx512;
	else if (__builtin_cpu_supports("popcnt"))
		SegvecRabitqDotKernel = rabitq_dot_avx2;
#endif
}

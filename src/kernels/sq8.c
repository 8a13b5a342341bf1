/*-------------------------------------------------------------------------
 *
 * sq8.c
 *	  The distance kernel over 8-bit scalar-quantized codes (SQ8).
 *
 * A quantized graph segment (graph/quant.c) stores, per node, one byte per
 * dimension.  A search turns every estimate it needs (l2, inner product,
 * cosine) into one integer dot product between its query, quantized once
 * per segment to int16, and a node's code:
 *
 *	SegvecSq8DotKernel(q, code, dim) = sum_j q[j] * code[j]
 *
 * in int32.  The caller bounds |q[j]| so that dim * max|q| * 255 < 2^31
 * (SEGVEC_SQ8_QMAX): then no partial sum, in any order, can overflow, and
 * since integer addition is exact, the scalar, AVX2 and AVX-512 versions
 * return the same value whatever order they add in.  The SIMD versions
 * use PMADDWD (two int16 products summed into an int32 per lane) on the
 * codes zero-extended to int16; the scalar one is a loop that gcc
 * vectorises with SSE2's PMADDWD.
 *
 * SegvecSq8SelectKernels, called from segvec.kernel's assign hook, picks
 * the path; only the _avx2 and _avx512 functions carry target attributes
 * (test/check-portable.sh).  The AVX-512 version needs AVX-512BW as well
 * as the AVX-512F that the avx512 path checks; without it the path uses
 * the AVX2 version, which gives the same results.
 *
 * src/kernels/sq8.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/quantkernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define SQ8_HAVE_X86_KERNELS 1
#define SQ8_TARGET_AVX2		__attribute__((target("avx2")))
#define SQ8_TARGET_AVX512	__attribute__((target("avx512f,avx512bw")))
#endif

static int32 sq8_dot_scalar(const int16 *q, const uint8 *code, int dim);

SegvecSq8DotFn SegvecSq8DotKernel = sq8_dot_scalar;

static int32
sq8_dot_scalar(const int16 *q, const uint8 *code, int dim)
{
	int32		acc = 0;
	int			i;

	for (i = 0; i < dim; i++)
		acc += (int32) q[i] * (int32) code[i];
	return acc;
}

#ifdef SQ8_HAVE_X86_KERNELS

SQ8_TARGET_AVX2
static int32
sq8_dot_avx2(const int16 *q, const uint8 *code, int dim)
{
	__m256i		s0 = _mm256_setzero_si256();
	__m256i		s1 = _mm256_setzero_si256();
	__m128i		h;
	int32		acc;
	int			i = 0;

	for (; i + 32 <= dim; i += 32)
	{
		__m256i		c0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *) (code + i)));
		__m256i		c1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *) (code + i + 16)));

		s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (q + i)), c0));
		s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (q + i + 16)), c1));
	}
	s0 = _mm256_add_epi32(s0, s1);
	h = _mm_add_epi32(_mm256_castsi256_si128(s0), _mm256_extracti128_si256(s0, 1));
	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
	acc = _mm_cvtsi128_si32(h);
	for (; i < dim; i++)
		acc += (int32) q[i] * (int32) code[i];
	return acc;
}

SQ8_TARGET_AVX512
static int32
sq8_dot_avx512(const int16 *q, const uint8 *code, int dim)
{
	__m512i		s0 = _mm512_setzero_si512();
	__m512i		s1 = _mm512_setzero_si512();
	int32		acc;
	int			i = 0;

	for (; i + 64 <= dim; i += 64)
	{
		__m512i		c0 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *) (code + i)));
		__m512i		c1 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *) (code + i + 32)));

		s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(_mm512_loadu_si512((const void *) (q + i)), c0));
		s1 = _mm512_add_epi32(s1, _mm512_madd_epi16(_mm512_loadu_si512((const void *) (q + i + 32)), c1));
	}
	if (i + 32 <= dim)
	{
		__m512i		c0 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *) (code + i)));

		s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(_mm512_loadu_si512((const void *) (q + i)), c0));
		i += 32;
	}
	acc = _mm512_reduce_add_epi32(_mm512_add_epi32(s0, s1));
	for (; i < dim; i++)
		acc += (int32) q[i] * (int32) code[i];
	return acc;
}
#endif							/* SQ8_HAVE_X86_KERNELS */

/*
 * SegvecSq8SelectKernels: install the SQ8 kernel of a path ("scalar",
 * "avx2" or "avx512"), which the caller (segvec.kernel's assign hook) has
 * checked the CPU supports.
 */
void
SegvecSq8SelectKernels(const char *path)
{
	SegvecSq8DotKernel = sq8_dot_scalar;
#ifdef SQ8_HAVE_X86_KERNELS
	if (strcmp(path, "avx512") == 0)
	{
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512bw"))
			SegvecSq8DotKernel = sq8_dot_avx512;
		else
			SegvecSq8DotKernel = sq8_dot_avx2;
	}
	else if (strcmp(path, "avx2") == 0)
		SegvecSq8DotKernel = sq8_dot_avx2;
#endif
}

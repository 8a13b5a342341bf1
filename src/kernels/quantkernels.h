/*-------------------------------------------------------------------------
 *
 * quantkernels.h
 *	  The kernels over quantized codes: SQ8 (sq8.c) and RaBitQ (rabitq.c).
 *
 * segvec.kernel's assign hook (distance.c) picks their paths with the
 * distance kernels'; distance.h includes this header, so that its users
 * see them all.
 *
 * src/kernels/quantkernels.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_QUANTKERNELS_H
#define SEGVEC_QUANTKERNELS_H

#include "postgres.h"

/*
 * The SQ8 kernel over 8-bit codes (sq8.c), chosen with the others:
 * sum q[j] * code[j] in int32.  |q[j]| must be at most SEGVEC_SQ8_QMAX(dim),
 * so that no partial sum overflows (and every path returns the same).
 */
typedef int32 (*SegvecSq8DotFn) (const int16 *q, const uint8 *code, int dim);

#define SEGVEC_SQ8_QMAX(dim) \
	((int) Min(32767, PG_INT32_MAX / ((int64) Max(dim, 1) * 255)))

extern PGDLLIMPORT SegvecSq8DotFn SegvecSq8DotKernel;
extern void SegvecSq8SelectKernels(const char *path);

/*
 * The RaBitQ kernel over 1-bit codes (rabitq.c), chosen with the others:
 * sum_j 2^j popcount(code AND planes[j]) over four bit planes of nwords
 * uint64 each, and popcount(code) into *ones.
 */
typedef uint32 (*SegvecRabitqDotFn) (const uint8 *code, const uint64 *planes,
									 int nwords, uint32 *ones);

extern PGDLLIMPORT SegvecRabitqDotFn SegvecRabitqDotKernel;
extern void SegvecRabitqSelectKernels(const char *path);

#endif							/* SEGVEC_QUANTKERNELS_H */

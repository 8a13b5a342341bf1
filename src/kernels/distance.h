/*-------------------------------------------------------------------------
 *
 * distance.h
 *	  Vector input checks and distance kernels for segvec.
 *
 * Vectors are PostgreSQL real[] values: one dimension, no NULL elements,
 * every element finite, at most SEGVEC_MAX_DIM elements.  Inside the index
 * they are plain float4 arrays.
 *
 * src/kernels/distance.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_DISTANCE_H
#define SEGVEC_DISTANCE_H

#include "postgres.h"
#include "utils/array.h"

#include "kernels/quantkernels.h"

/* Largest vector the index accepts (16,000 float4 = 64,000 bytes) */
#define SEGVEC_MAX_DIM			16000

/*
 * Distance metrics.  The value is stored in the metapage, so never renumber.
 */
typedef enum SegvecMetric
{
	SEGVEC_METRIC_INVALID = 0,
	SEGVEC_METRIC_L2 = 1,		/* Euclidean distance, operator <-> */
	SEGVEC_METRIC_COSINE = 2,	/* 1 - cosine similarity, operator <=> */
	SEGVEC_METRIC_IP = 3		/* negative inner product, operator <#> */
} SegvecMetric;

/*
 * Kernels: scalar, AVX2 or AVX-512 versions that return the same bits (see
 * distance.c), chosen by the segvec.kernel GUC, which SegvecInitKernels
 * defines ("auto": the widest the CPU supports, found through CPUID).
 */
typedef float (*SegvecKernelFn) (const float *a, const float *b, int dim);

extern PGDLLIMPORT SegvecKernelFn SegvecL2SquaredKernel;	/* sum (a-b)^2 */
extern PGDLLIMPORT SegvecKernelFn SegvecDotKernel;			/* sum a*b */

/*
 * sum (a-b)^2, the same bits as SegvecL2SquaredKernel, except that it may
 * stop early and return a partial sum once that is at least bound; a value
 * it returns is never more than the whole sum.  For searches that only
 * want a distance when it is below some bound.
 */
typedef float (*SegvecBoundedKernelFn) (const float *a, const float *b,
										int dim, float bound);

extern PGDLLIMPORT SegvecBoundedKernelFn SegvecL2SquaredBoundedKernel;

/* The kernels over quantized codes, chosen with these: quantkernels.h */

extern void SegvecInitKernels(void);
extern const char *SegvecKernelName(void);

/*
 * SegvecDistance: the distance between a and b under the metric, equal to
 * what the SQL operator returns: l2 = sqrt(sum (a-b)^2); cosine =
 * 1 - a.b / (|a| |b|) clamped to [0, 2], NaN when either vector has norm 0;
 * ip = -(a.b).  Both arrays have dim elements.
 */
extern double SegvecDistance(SegvecMetric metric, const float *a,
							 const float *b, int dim);

/*
 * SegvecArrayGetVector: check that the real[] value is a usable vector
 * (one dimension, 1..SEGVEC_MAX_DIM elements, no NULL element, every element
 * finite) and return a pointer to its float4 elements (inside the array, not
 * a copy); *dim gets the element count.  Raises an ERROR otherwise.
 * The array must be detoasted by the caller (DatumGetArrayTypeP).
 */
extern float *SegvecArrayGetVector(ArrayType *array, int *dim);

/* Check that two vectors have the same length; ERROR naming both if not */
extern void SegvecCheckSameDim(int dima, int dimb);

extern const char *SegvecMetricName(SegvecMetric metric);

/* hints.c: HINTs for the errors pgvector spellings meet first */
extern void SegvecInitHints(void);

#endif							/* SEGVEC_DISTANCE_H */

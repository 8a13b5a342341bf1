/*-------------------------------------------------------------------------
 *
 * vector.c
 *	  Vector input checks and the SQL functions over vectors.
 *
 * A vector is a real[] value: one dimension, 1 .. SEGVEC_MAX_DIM elements,
 * no NULL element, every element finite.  SegvecArrayGetVector checks
 * that, for the SQL functions here and for the index (the vectors it
 * stores and the query vector of a scan).  The distance functions go
 * through SegvecDistance() (distance.c), so an operator returns exactly the
 * value the index computes for the same pair.
 *
 * src/kernels/vector.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "kernels/distance.h"

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


/* ---------------------------------------------------------------------
 * Input checks
 * ---------------------------------------------------------------------
 */

/*
 * Are x[0 .. n - 1] all finite?  A float is NaN or infinite when its
 * exponent bits are all set; or-ing a per-element flag without a branch
 * lets the compiler vectorise the loop (the input check of every distance
 * call and index scan, 784 elements on Fashion-MNIST).
 */
static bool
all_finite(const float *x, int n)
{
	uint32		bad[8] = {0};
	uint32		bits[8];
	int			i,
				j;

	for (i = 0; i + 8 <= n; i += 8)
	{
		memcpy(bits, &x[i], sizeof(bits));
		for (j = 0; j < 8; j++)
			bad[j] |= ~bits[j] & 0x7f800000 ? 0 : 1;
	}
	for (j = 0; i < n; i++, j++)
	{
		memcpy(bits, &x[i], sizeof(uint32));
		bad[j] |= ~bits[0] & 0x7f800000 ? 0 : 1;
	}
	for (j = 1; j < 8; j++)
		bad[0] |= bad[j];
	return bad[0] == 0;
}

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

	/* every call of a distance function passes here: keep it cheap */
	if (likely(all_finite(x, n)))
	{
		*dim = n;
		return x;
	}

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

/*
 * SegvecCheckSameDim: ERROR unless the two operands of a distance have the
 * same length.  No index is involved here (an index checks its own
 * dimension, SegvecCheckIndexDim, and names itself), so the message says
 * only that the lengths differ, in pgvector's words.
 */
void
SegvecCheckSameDim(int dima, int dimb)
{
	if (dima != dimb)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("different vector dimensions %d and %d",
						dima, dimb)));
}


/* ---------------------------------------------------------------------
 * SQL-callable functions
 * ---------------------------------------------------------------------
 */

/* SQL segvec_kernel(): SegvecKernelName() */
PG_FUNCTION_INFO_V1(segvec_kernel_name);
Datum
segvec_kernel_name(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(SegvecKernelName()));
}

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

/*-------------------------------------------------------------------------
 *
 * segvec_pgvector.c
 *	  The companion extension segvec_pgvector: segvec indexes on columns of
 *	  pgvector's vector and halfvec types.
 *
 * segvec reads real[]; for any other column type its operator family needs
 * support function 2, which turns a value of the type into a real[] (see
 * src/am/segvecvalidate.c).  This module provides that function for the
 * two pgvector types; segvec_pgvector--VERSION.sql puts them, with
 * pgvector's own ordering operators, into segvec's operator families.
 *
 * The on-disk forms read here are pgvector's documented ones: a varlena
 * header, int16 dimension count, int16 reserved (zero), then the elements,
 * float4 for vector and IEEE 754 binary16 for halfvec.  The value's size
 * is checked against its dimension count, so a value of another layout
 * gives an error rather than a wrong vector.  Checks of the elements
 * (finite, dimension bounds) are segvec's own, on the real[] returned.
 *
 * pgvector/segvec_pgvector.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

PG_MODULE_MAGIC;

/* The fixed part of a vector or halfvec value, after its varlena header */
typedef struct PgvectorHeader
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int16		dim;			/* number of elements */
	int16		unused;			/* reserved, zero */
	/* dim elements follow: float4 (vector) or binary16 (halfvec) */
} PgvectorHeader;

#define PGVECTOR_HDRSZ	sizeof(PgvectorHeader)

/*
 * new_float_array: an uninitialised one-dimensional real[] of dim elements,
 * in the current memory context.
 */
static ArrayType *
new_float_array(int dim)
{
	Size		nbytes = ARR_OVERHEAD_NONULLS(1) + sizeof(float4) * (Size) dim;
	ArrayType  *result = (ArrayType *) palloc0(nbytes);

	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = 0;
	result->elemtype = FLOAT4OID;
	ARR_DIMS(result)[0] = dim;
	ARR_LBOUND(result)[0] = 1;
	return result;
}

/*
 * header_of: the detoasted value's header, checked: its size must be that
 * of dim elements of elemsize bytes.
 */
static PgvectorHeader *
header_of(Datum value, Size elemsize, const char *typname)
{
	PgvectorHeader *v = (PgvectorHeader *) PG_DETOAST_DATUM(value);

	if (VARSIZE(v) < PGVECTOR_HDRSZ || v->dim < 0 ||
		VARSIZE(v) != PGVECTOR_HDRSZ + elemsize * (Size) v->dim)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s value of %u bytes does not have the layout segvec_pgvector reads",
						typname, (unsigned int) VARSIZE(v)),
				 errdetail("Expected a 4-byte dimension header and %d elements of %u bytes.",
						   (int) v->dim, (unsigned int) elemsize)));
	return v;
}

/*
 * half_to_float: the IEEE 754 binary16 value h as a float4 (exactly: every
 * binary16 value is a float4 value).
 */
static inline float4
half_to_float(uint16 h)
{
	uint32		sign = (uint32) (h & 0x8000) << 16;
	uint32		exponent = (h >> 10) & 0x1f;
	uint32		mantissa = h & 0x3ff;
	uint32		bits;
	float4		f;

	if (exponent == 0x1f)		/* infinity or NaN */
		bits = sign | 0x7f800000 | (mantissa << 13);
	else if (exponent != 0)		/* normal: rebias 15 -> 127 */
		bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
	else if (mantissa == 0)		/* signed zero */
		bits = sign;
	else
	{
		/* subnormal: mantissa * 2^-24, exact in float4 */
		f = (float4) mantissa * (1.0f / 16777216.0f);
		return sign ? -f : f;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/*
 * segvec_pgvector_vector_input(vector) -> real[]: support function 2 for
 * the vector type, the same elements as a real[].
 */
PG_FUNCTION_INFO_V1(segvec_pgvector_vector_input);
Datum
segvec_pgvector_vector_input(PG_FUNCTION_ARGS)
{
	PgvectorHeader *v = header_of(PG_GETARG_DATUM(0), sizeof(float4),
								  "vector");
	ArrayType  *result = new_float_array(v->dim);

	memcpy(ARR_DATA_PTR(result), (char *) v + PGVECTOR_HDRSZ,
		   sizeof(float4) * (Size) v->dim);
	PG_RETURN_ARRAYTYPE_P(result);
}

/*
 * segvec_pgvector_halfvec_input(halfvec) -> real[]: support function 2 for
 * the halfvec type, each element widened to float4.
 */
PG_FUNCTION_INFO_V1(segvec_pgvector_halfvec_input);
Datum
segvec_pgvector_halfvec_input(PG_FUNCTION_ARGS)
{
	PgvectorHeader *v = header_of(PG_GETARG_DATUM(0), sizeof(uint16),
								  "halfvec");
	ArrayType  *result = new_float_array(v->dim);
	const uint16 *in = (const uint16 *) ((char *) v + PGVECTOR_HDRSZ);
	float4	   *out = (float4 *) ARR_DATA_PTR(result);
	int			i;

	for (i = 0; i < v->dim; i++)
		out[i] = half_to_float(in[i]);
	PG_RETURN_ARRAYTYPE_P(result);
}

/*
 * Filter columns: the key columns after the vector (USING segvec (embedding
 * vector_l2_ops, tenant_id) INCLUDE (id)) are filters, evaluated inside the
 * index (src/am/segvecfilter.c).  Their operator classes are the default
 * ones of their types, with btree's strategy numbers: 1 <, 2 <=, 3 =, 4 >=,
 * 5 >; text and uuid, kept as hashes, have equality only.  No support
 * functions.
 */
CREATE OPERATOR FAMILY integer_ops USING segvec;

CREATE OPERATOR CLASS int2_ops
	DEFAULT FOR TYPE int2 USING segvec FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >;

CREATE OPERATOR CLASS int4_ops
	DEFAULT FOR TYPE int4 USING segvec FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >;

CREATE OPERATOR CLASS int8_ops
	DEFAULT FOR TYPE int8 USING segvec FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >;

ALTER OPERATOR FAMILY integer_ops USING segvec ADD
	OPERATOR 1 < (int2, int4),
	OPERATOR 2 <= (int2, int4),
	OPERATOR 3 = (int2, int4),
	OPERATOR 4 >= (int2, int4),
	OPERATOR 5 > (int2, int4),
	OPERATOR 1 < (int2, int8),
	OPERATOR 2 <= (int2, int8),
	OPERATOR 3 = (int2, int8),
	OPERATOR 4 >= (int2, int8),
	OPERATOR 5 > (int2, int8),
	OPERATOR 1 < (int4, int2),
	OPERATOR 2 <= (int4, int2),
	OPERATOR 3 = (int4, int2),
	OPERATOR 4 >= (int4, int2),
	OPERATOR 5 > (int4, int2),
	OPERATOR 1 < (int4, int8),
	OPERATOR 2 <= (int4, int8),
	OPERATOR 3 = (int4, int8),
	OPERATOR 4 >= (int4, int8),
	OPERATOR 5 > (int4, int8),
	OPERATOR 1 < (int8, int2),
	OPERATOR 2 <= (int8, int2),
	OPERATOR 3 = (int8, int2),
	OPERATOR 4 >= (int8, int2),
	OPERATOR 5 > (int8, int2),
	OPERATOR 1 < (int8, int4),
	OPERATOR 2 <= (int8, int4),
	OPERATOR 3 = (int8, int4),
	OPERATOR 4 >= (int8, int4),
	OPERATOR 5 > (int8, int4);

CREATE OPERATOR FAMILY bool_ops USING segvec;
CREATE OPERATOR CLASS bool_ops
	DEFAULT FOR TYPE bool USING segvec FAMILY bool_ops AS
	OPERATOR 3 =;

CREATE OPERATOR FAMILY date_ops USING segvec;
CREATE OPERATOR CLASS date_ops
	DEFAULT FOR TYPE date USING segvec FAMILY date_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >;

CREATE OPERATOR FAMILY timestamp_ops USING segvec;
CREATE OPERATOR CLASS timestamp_ops
	DEFAULT FOR TYPE timestamp USING segvec FAMILY timestamp_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >;

CREATE OPERATOR FAMILY timestamptz_ops USING segvec;
CREATE OPERATOR CLASS timestamptz_ops
	DEFAULT FOR TYPE timestamptz USING segvec FAMILY timestamptz_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >;

CREATE OPERATOR FAMILY text_ops USING segvec;
CREATE OPERATOR CLASS text_ops
	DEFAULT FOR TYPE text USING segvec FAMILY text_ops AS
	OPERATOR 3 =;

CREATE OPERATOR FAMILY uuid_ops USING segvec;
CREATE OPERATOR CLASS uuid_ops
	DEFAULT FOR TYPE uuid USING segvec FAMILY uuid_ops AS
	OPERATOR 3 =;

/*
 * Label arrays: int4[] and text[] with GIN's strategy numbers, 1 &&, 2 @>,
 * 3 <@, 4 =; kept as a 64-bit signature of their elements (rows rechecked).
 * A family each: the operators are on anyarray.
 */
CREATE OPERATOR FAMILY int4_array_ops USING segvec;
CREATE OPERATOR CLASS int4_array_ops
	DEFAULT FOR TYPE int4[] USING segvec FAMILY int4_array_ops AS
	OPERATOR 1 && (anyarray, anyarray),
	OPERATOR 2 @> (anyarray, anyarray),
	OPERATOR 3 <@ (anyarray, anyarray),
	OPERATOR 4 = (anyarray, anyarray);

CREATE OPERATOR FAMILY text_array_ops USING segvec;
CREATE OPERATOR CLASS text_array_ops
	DEFAULT FOR TYPE text[] USING segvec FAMILY text_array_ops AS
	OPERATOR 1 && (anyarray, anyarray),
	OPERATOR 2 @> (anyarray, anyarray),
	OPERATOR 3 <@ (anyarray, anyarray),
	OPERATOR 4 = (anyarray, anyarray);

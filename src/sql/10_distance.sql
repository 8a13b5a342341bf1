/*
 * Distance functions on real[].  Every argument must be a one-dimensional
 * real[] with no NULL element and only finite values; two-argument functions
 * need arrays of the same length.  Otherwise they raise an error.
 */
CREATE FUNCTION l2_distance(real[], real[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'segvec_l2_distance'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION cosine_distance(real[], real[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'segvec_cosine_distance'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION inner_product(real[], real[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'segvec_inner_product'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION negative_inner_product(real[], real[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'segvec_negative_inner_product'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION l2_norm(real[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'segvec_l2_norm'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION l2_normalize(real[]) RETURNS real[]
	AS 'MODULE_PATHNAME', 'segvec_l2_normalize'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION l2_distance(real[], real[]) IS 'Euclidean distance';
COMMENT ON FUNCTION cosine_distance(real[], real[]) IS '1 - cosine similarity, in [0, 2]; NaN when either vector is all zeros';
COMMENT ON FUNCTION inner_product(real[], real[]) IS 'inner (dot) product';
COMMENT ON FUNCTION negative_inner_product(real[], real[]) IS 'minus the inner product (smaller is more similar)';
COMMENT ON FUNCTION l2_norm(real[]) IS 'Euclidean norm';
COMMENT ON FUNCTION l2_normalize(real[]) IS 'the vector scaled to norm 1 (a zero vector is returned unchanged)';

CREATE OPERATOR <-> (
	LEFTARG = real[], RIGHTARG = real[], FUNCTION = l2_distance,
	COMMUTATOR = '<->'
);

CREATE OPERATOR <=> (
	LEFTARG = real[], RIGHTARG = real[], FUNCTION = cosine_distance,
	COMMUTATOR = '<=>'
);

CREATE OPERATOR <#> (
	LEFTARG = real[], RIGHTARG = real[], FUNCTION = negative_inner_product,
	COMMUTATOR = '<#>'
);


CREATE FUNCTION segvec_kernel() RETURNS text
	AS 'MODULE_PATHNAME', 'segvec_kernel_name'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION segvec_kernel() IS 'the distance kernels in use (setting segvec.kernel): scalar, avx2 or avx512';

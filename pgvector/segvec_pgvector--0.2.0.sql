/* segvec_pgvector--0.2.0.sql: segvec indexes on pgvector's types */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION segvec_pgvector" to load this file. \quit

/*
 * segvec's operator classes vector_l2_ops, vector_cosine_ops and
 * vector_ip_ops take any input type (anyelement); what a column type other
 * than real[] needs is in their operator families: the type's ordering
 * operator and support function 2, which turns a value into a real[]
 * (src/am/segvecvalidate.c).  This script adds both, for pgvector's vector
 * and halfvec, with pgvector's own operators, as operator classes of their
 * own in segvec's families (so that DROP EXTENSION takes them away again):
 *
 *   CREATE INDEX ON items USING segvec (embedding vector_l2_ops)
 *
 * then works on a vector(n) column, and halfvec_l2_ops and its siblings on
 * a halfvec(n) column, as they do with pgvector's hnsw.  The classes for
 * vector cannot be called vector_*_ops, as segvec's own classes have those
 * names; they are the default for the type, and vector_l2_ops etc. name
 * segvec's classes, which work on vector columns through the same family.
 */

CREATE FUNCTION segvec_vector_input(vector) RETURNS real[]
	AS 'MODULE_PATHNAME', 'segvec_pgvector_vector_input'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION segvec_halfvec_input(halfvec) RETURNS real[]
	AS 'MODULE_PATHNAME', 'segvec_pgvector_halfvec_input'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION segvec_vector_input(vector) IS 'the elements of a vector as a real[], as a segvec index reads them';
COMMENT ON FUNCTION segvec_halfvec_input(halfvec) IS 'the elements of a halfvec widened to a real[], as a segvec index reads them';

-- vector
CREATE OPERATOR CLASS segvec_vector_l2_ops
	DEFAULT FOR TYPE vector USING segvec FAMILY vector_l2_ops AS
	OPERATOR 1 <-> (vector, vector) FOR ORDER BY float_ops,
	FUNCTION 2 segvec_vector_input(vector);

CREATE OPERATOR CLASS segvec_vector_cosine_ops
	FOR TYPE vector USING segvec FAMILY vector_cosine_ops AS
	OPERATOR 1 <=> (vector, vector) FOR ORDER BY float_ops,
	FUNCTION 2 segvec_vector_input(vector);

CREATE OPERATOR CLASS segvec_vector_ip_ops
	FOR TYPE vector USING segvec FAMILY vector_ip_ops AS
	OPERATOR 1 <#> (vector, vector) FOR ORDER BY float_ops,
	FUNCTION 2 segvec_vector_input(vector);

-- halfvec
CREATE OPERATOR CLASS halfvec_l2_ops
	DEFAULT FOR TYPE halfvec USING segvec FAMILY vector_l2_ops AS
	OPERATOR 1 <-> (halfvec, halfvec) FOR ORDER BY float_ops,
	FUNCTION 2 segvec_halfvec_input(halfvec);

CREATE OPERATOR CLASS halfvec_cosine_ops
	FOR TYPE halfvec USING segvec FAMILY vector_cosine_ops AS
	OPERATOR 1 <=> (halfvec, halfvec) FOR ORDER BY float_ops,
	FUNCTION 2 segvec_halfvec_input(halfvec);

CREATE OPERATOR CLASS halfvec_ip_ops
	FOR TYPE halfvec USING segvec FAMILY vector_ip_ops AS
	OPERATOR 1 <#> (halfvec, halfvec) FOR ORDER BY float_ops,
	FUNCTION 2 segvec_halfvec_input(halfvec);

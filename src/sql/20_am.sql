/* The segvec index access method */
CREATE FUNCTION segvechandler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME'
	LANGUAGE C;

CREATE ACCESS METHOD segvec TYPE INDEX HANDLER segvechandler;

COMMENT ON ACCESS METHOD segvec IS 'log-structured vector index';

/*
 * Operator classes: operator 1 is the ordering operator, support function 1
 * the distance function it calls (the index computes the same value).
 *
 * They are declared for anyelement, so that each name (vector_l2_ops ...)
 * resolves to one operator class whatever the column's type: PostgreSQL
 * looks an operator class name up per access method along search_path, and
 * then only asks whether the column's type is binary-coercible to the
 * class's input type, which every type is to anyelement.  What a column of
 * a type other than real[] needs is in the operator family: the type's
 * ordering operator and support function 2, which turns a value of the type
 * into a real[] (the companion extension segvec_pgvector adds these for
 * pgvector's vector and halfvec).  An index on a column of a type its
 * family has no support function 2 for is refused (store/index.c).
 */
CREATE OPERATOR CLASS vector_l2_ops
	DEFAULT FOR TYPE anyelement USING segvec AS
	OPERATOR 1 <-> (real[], real[]) FOR ORDER BY float_ops,
	FUNCTION 1 l2_distance(real[], real[]);

CREATE OPERATOR CLASS vector_cosine_ops
	FOR TYPE anyelement USING segvec AS
	OPERATOR 1 <=> (real[], real[]) FOR ORDER BY float_ops,
	FUNCTION 1 cosine_distance(real[], real[]);

CREATE OPERATOR CLASS vector_ip_ops
	FOR TYPE anyelement USING segvec AS
	OPERATOR 1 <#> (real[], real[]) FOR ORDER BY float_ops,
	FUNCTION 1 negative_inner_product(real[], real[]);

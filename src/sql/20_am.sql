/* The segvec index access method */
CREATE FUNCTION segvechandler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME'
	LANGUAGE C;

CREATE ACCESS METHOD segvec TYPE INDEX HANDLER segvechandler;

COMMENT ON ACCESS METHOD segvec IS 'log-structured vector index';

/*
 * Operator classes: operator 1 is the ordering operator, support function 1
 * the distance function it calls (the index computes the same value).
 */
CREATE OPERATOR CLASS vector_l2_ops
	DEFAULT FOR TYPE real[] USING segvec AS
	OPERATOR 1 <-> (real[], real[]) FOR ORDER BY float_ops,
	FUNCTION 1 l2_distance(real[], real[]);

CREATE OPERATOR CLASS vector_cosine_ops
	FOR TYPE real[] USING segvec AS
	OPERATOR 1 <=> (real[], real[]) FOR ORDER BY float_ops,
	FUNCTION 1 cosine_distance(real[], real[]);

CREATE OPERATOR CLASS vector_ip_ops
	FOR TYPE real[] USING segvec AS
	OPERATOR 1 <#> (real[], real[]) FOR ORDER BY float_ops,
	FUNCTION 1 negative_inner_product(real[], real[]);


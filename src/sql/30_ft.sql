/* The RediSearch-style API lives in schema ft */
CREATE SCHEMA ft;

/*
 * ft.compact(index): move every doc of the mutable segment into immutable
 * graph segments now, then merge segments by the tiered policy.
 */
CREATE FUNCTION ft.compact(index regclass,
	OUT docs_compacted bigint, OUT segments_created int,
	OUT segments_merged int)
	AS 'MODULE_PATHNAME', 'ft_compact'
	LANGUAGE C STRICT;

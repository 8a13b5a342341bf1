/*
 * The RediSearch-style API lives in schema ft.  Its functions run with the
 * caller's privileges and check them; everyone may call them.
 */
CREATE SCHEMA ft;
GRANT USAGE ON SCHEMA ft TO PUBLIC;

/*
 * ft.compact(index): move every doc of the mutable segment into immutable
 * graph segments now, then merge segments by the tiered policy.
 */
CREATE FUNCTION ft.compact(index regclass,
	OUT docs_compacted bigint, OUT segments_created int,
	OUT segments_merged int)
	AS 'MODULE_PATHNAME', 'ft_compact'
	LANGUAGE C STRICT;

/*
 * ft.index_stats(index): what the index holds, from its metapage, segments
 * and keymap; ft.info adds the background and merge figures.
 */
CREATE FUNCTION ft.index_stats(index regclass,
	OUT num_docs bigint, OUT mutable_docs bigint, OUT immutable_docs bigint,
	OUT tombstones bigint, OUT num_segments int, OUT segments jsonb,
	OUT keymap_entries bigint, OUT keymap_epoch int,
	OUT keymap_buckets_changed int, OUT index_bytes bigint,
	OUT dimensions int, OUT metric text, OUT m int, OUT ef_construction int,
	OUT compact_threshold int, OUT background_work boolean)
	AS 'MODULE_PATHNAME', 'ft_index_stats'
	LANGUAGE C STRICT;

/*
 * ft.get(index, id): the indexed vector of the row with this id (as the
 * caller's snapshot sees the table), and where it is stored.
 */
CREATE FUNCTION ft.get(index regclass, id text)
	RETURNS TABLE (id text, vector real[], segment text, docid bigint)
	AS 'MODULE_PATHNAME', 'ft_get'
	LANGUAGE C STRICT;

/* ft.snapshot(index): write a keymap snapshot now; returns its epoch */
CREATE FUNCTION ft.snapshot(index regclass) RETURNS int
	AS 'MODULE_PATHNAME', 'ft_snapshot'
	LANGUAGE C STRICT;

/*
 * ft.verify(index, repair, search_limit): check the index against its
 * table and its invariants; with repair => true, fix what it finds.
 */
CREATE FUNCTION ft.verify(index regclass, repair boolean DEFAULT false,
	search_limit bigint DEFAULT 10000,
	OUT heap_rows bigint, OUT indexed_docs bigint, OUT missing_docs bigint,
	OUT duplicate_docs bigint, OUT docs_in_two_segments bigint,
	OUT keymap_entries bigint, OUT phantom_entries bigint,
	OUT checksum_mismatches bigint, OUT missing_keymap_entries bigint,
	OUT search_checked bigint, OUT search_misses bigint,
	OUT repaired bigint, OUT examples text[], OUT unreachable_nodes bigint)
	AS 'MODULE_PATHNAME', 'ft_verify'
	LANGUAGE C;

/* test hook, needs segvec.enable_test_hooks: lose a doc, keep its entry */
CREATE FUNCTION ft._stage_phantom(index regclass, id text) RETURNS bigint
	AS 'MODULE_PATHNAME', 'ft_stage_phantom'
	LANGUAGE C STRICT;

/*
 * ft.similar(index, key, k): "more like this": the k rows nearest to the
 * row whose id is key, by the index's metric, without passing its vector
 * (the row itself is left out, and so are rows without a vector, which the
 * index does not hold either).  The distance is real, as in ft.search.
 */
CREATE FUNCTION ft.similar(index regclass, key text, k int DEFAULT 10)
	RETURNS TABLE (id text, distance real)
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	v real[];
	canon text;
	tbl regclass;
	idcol name;
	veccol name;
	op text;
	optype regtype;
BEGIN
	-- ft.get checks SELECT and row-level security: a row the caller may
	-- not see has no neighbours
	SELECT g.id, g.vector INTO canon, v FROM ft.get(index, key) g;
	IF v IS NULL THEN
		RETURN;
	END IF;
	-- the index's ordering operator for the column's type, schema-qualified:
	-- on a vector or halfvec column pgvector's (segvec_pgvector adds it to
	-- the family), which the index answers, else segvec's real[] one; the
	-- query vector is cast to the operator's type
	SELECT i.indrelid::regclass,
		   (SELECT a.attname FROM pg_attribute a
			 WHERE a.attrelid = i.indrelid AND a.attnum = i.indkey[i.indnkeyatts]),
		   va.attname,
		   format('OPERATOR(%I.%s)', n.nspname, o.oprname),
		   ao.amoplefttype
	  INTO tbl, idcol, veccol, op, optype
	  FROM pg_index i
		   LEFT JOIN pg_attribute va
				ON va.attrelid = i.indrelid AND va.attnum = i.indkey[0]
		   JOIN pg_opclass c ON c.oid = i.indclass[0]
		   JOIN pg_amop ao ON ao.amopfamily = c.opcfamily
				AND ao.amopstrategy = 1 AND ao.amoppurpose = 'o'
		   JOIN pg_operator o ON o.oid = ao.amopopr
		   JOIN pg_namespace n ON n.oid = o.oprnamespace
	 WHERE i.indexrelid = index
	 ORDER BY ao.amoplefttype = va.atttypid DESC NULLS LAST,
			  ao.amoplefttype = 'pg_catalog.float4[]'::regtype DESC
	 LIMIT 1;
	RETURN QUERY EXECUTE format(
		'SELECT CAST(t.%1$I AS pg_catalog.text), '
		'CAST(t.%2$I %3$s CAST($1 AS %5$s) AS pg_catalog.float4) FROM %4$s t '
		'WHERE CAST(t.%1$I AS pg_catalog.text) IS DISTINCT FROM $2 '
		'AND t.%2$I IS NOT NULL '
		'ORDER BY t.%2$I %3$s CAST($1 AS %5$s) LIMIT $3',
		idcol, veccol, op, tbl, optype)
		USING v, canon, k;
END
$$;

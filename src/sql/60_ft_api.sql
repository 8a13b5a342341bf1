
/*
 * The RediSearch-style commands: FT.CREATE, FT.SEARCH, FT.EXPLAIN,
 * FT.DROPINDEX and FT._LIST as ft.create, ft.search / ft.query, ft.explain,
 * ft.dropindex and ft.list (docs/ft-api.md maps each command).
 *
 * Every function runs with the caller's privileges (SECURITY INVOKER): table
 * privileges, row-level security and MVCC apply as to a plain SELECT.  The
 * ones that query a table are C (SPI) or PL/pgSQL with dynamic SQL, never
 * LANGUAGE sql, so that they work on Citus over distributed tables.  Column
 * names are checked against the catalog and quoted (format('%I'),
 * quote_identifier); values are parameters, never part of the SQL text.
 */

/*
 * ft.create(index_name, tbl, id_column, vector_column, metric, m,
 * ef_construction, dimensions): FT.CREATE.  Checks the columns, makes sure
 * a btree leads with the id column (ft._ensure_id_btree: a unique one, or
 * a plain one with a WARNING when the ids repeat or cannot be unique on a
 * partitioned or distributed table), then creates the segvec index
 *   CREATE INDEX index_name ON tbl USING segvec (vector_column <opclass>
 *     [, filter_columns...]) INCLUDE (id_column)
 *     WITH (m = .., ef_construction = ..)
 * in the table's schema, and returns it.  metric: l2 (default), cosine or
 * ip.  text_fields, language and casesensitive are the dialect's field
 * options (TEXT fields with their GIN index, case-sensitive TAG fields),
 * set by ft.alter.
 */
CREATE FUNCTION ft.create(index_name text, tbl regclass, id_column name,
	vector_column name, metric text DEFAULT 'l2', m int DEFAULT 16,
	ef_construction int DEFAULT 64, dimensions int DEFAULT NULL,
	text_fields name[] DEFAULT NULL, language text DEFAULT NULL,
	casesensitive name[] DEFAULT NULL, filter_columns name[] DEFAULT NULL)
RETURNS regclass
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	rel record;
	vec_att record;
	id_att record;
	opc record;
	opc_name name;
	filters text := '';
	f name;
BEGIN
	IF index_name IS NULL OR tbl IS NULL OR id_column IS NULL
		OR vector_column IS NULL OR metric IS NULL OR m IS NULL
		OR ef_construction IS NULL THEN
		RAISE EXCEPTION 'only dimensions may be null in ft.create'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;

	SELECT c.relname, c.relkind, n.nspname INTO rel
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.oid = tbl;
	IF NOT FOUND OR rel.relkind NOT IN ('r', 'm', 'p') THEN
		RAISE EXCEPTION '"%" is not a table', coalesce(rel.relname, tbl::text)
			USING ERRCODE = 'wrong_object_type';
	END IF;

	opc_name := CASE lower(metric)
		WHEN 'l2' THEN 'vector_l2_ops'
		WHEN 'cosine' THEN 'vector_cosine_ops'
		WHEN 'ip' THEN 'vector_ip_ops' END;
	IF opc_name IS NULL THEN
		RAISE EXCEPTION 'unknown metric "%"', metric
			USING ERRCODE = 'invalid_parameter_value',
				HINT = 'Use l2, cosine or ip.';
	END IF;

	SELECT a.attnum, a.atttypid INTO vec_att
	FROM pg_attribute a
	WHERE a.attrelid = tbl AND a.attname = vector_column AND a.attnum > 0
		AND NOT a.attisdropped;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist',
			vector_column, rel.relname
			USING ERRCODE = 'undefined_column';
	END IF;
	IF vec_att.atttypid <> 'real[]'::regtype THEN
		RAISE EXCEPTION 'column "%" is of type %, not real[]',
			vector_column, format_type(vec_att.atttypid, NULL)
			USING ERRCODE = 'datatype_mismatch',
				HINT = 'The vector column must be a real[] (float4[]) column.';
	END IF;

	SELECT a.attnum, a.atttypid, t.typsend INTO id_att
	FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
	WHERE a.attrelid = tbl AND a.attname = id_column AND a.attnum > 0
		AND NOT a.attisdropped;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist',
			id_column, rel.relname
			USING ERRCODE = 'undefined_column';
	END IF;
	IF id_att.attnum = vec_att.attnum THEN
		RAISE EXCEPTION 'the id column and the vector column must differ'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF id_att.typsend = 0 THEN
		RAISE EXCEPTION 'column "%" is of type %, which has no binary send function',
			id_column, format_type(id_att.atttypid, NULL)
			USING ERRCODE = 'datatype_mismatch',
				HINT = 'Use an id of type bigint, text, uuid or the like.';
	END IF;

	IF to_regclass(format('%I.%I', rel.nspname, index_name)) IS NOT NULL THEN
		RAISE EXCEPTION 'relation "%" already exists', index_name
			USING ERRCODE = 'duplicate_table';
	END IF;

	SELECT oc.opcname, n.nspname INTO opc
	FROM pg_opclass oc
		JOIN pg_am am ON am.oid = oc.opcmethod
		JOIN pg_namespace n ON n.oid = oc.opcnamespace
	WHERE am.amname = 'segvec' AND oc.opcname = opc_name;

	-- filter columns: key columns after the vector
	FOREACH f IN ARRAY coalesce(filter_columns, '{}') LOOP
		IF f IS NULL THEN
			RAISE EXCEPTION 'filter_columns must not contain nulls'
				USING ERRCODE = 'null_value_not_allowed';
		END IF;
		filters := filters || ', ' || quote_ident(f);
	END LOOP;

	-- the btree on the id that merge-insert probes (unique if it can be)
	PERFORM ft._ensure_id_btree(tbl, id_column);

	-- XXX: register the index with the merge-insert API here if ft.add
	-- comes to need it.
	EXECUTE format('CREATE INDEX %I ON %I.%I USING segvec (%I %I.%I%s) INCLUDE (%I) '
			'WITH (m = %L, ef_construction = %L%s)',
		index_name, rel.nspname, rel.relname, vector_column, opc.nspname,
		opc.opcname, filters, id_column, m, ef_construction,
		CASE WHEN dimensions IS NOT NULL
			THEN format(', dimensions = %L', dimensions) ELSE '' END);

	IF text_fields IS NOT NULL OR language IS NOT NULL
		OR casesensitive IS NOT NULL THEN
		PERFORM ft.alter(to_regclass(format('%I.%I', rel.nspname, index_name)),
			text_fields, language, casesensitive);
	END IF;

	RETURN to_regclass(format('%I.%I', rel.nspname, index_name));
END
$$;

COMMENT ON FUNCTION ft.create(text, regclass, name, name, text, int, int, int, name[], text, name[], name[])
	IS 'FT.CREATE: create a segvec index on tbl (vector_column, filter_columns...) INCLUDE (id_column), with a btree on the id';

/*
 * ft._pending_rows(): the pending upserts a running ft.search or ft.query
 * read (from ft.pending_for) before its query, for that query; an error
 * anywhere else.  Internal.
 */
CREATE FUNCTION ft._pending_rows(OUT id text, OUT op "char",
	OUT vector real[], OUT fields jsonb)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ft_pending_rows'
LANGUAGE C VOLATILE ROWS 100;

/*
 * ft.search(index, query, k, filter, return_fields, ef_search): FT.SEARCH
 * of a KNN query.  The k docs nearest to query that pass filter (the filter
 * dialect of ft.query: tags, numeric ranges, negation, AND, OR,
 * parentheses; no parameters), nearest first, with their distance and the
 * fields named in return_fields (all but the vector when NULL, none when
 * empty).  ef_search sets segvec.ef_search for this call only.
 */
CREATE FUNCTION ft.search(index regclass, query real[], k int DEFAULT 10,
	filter text DEFAULT NULL, return_fields text[] DEFAULT NULL,
	ef_search int DEFAULT NULL)
RETURNS TABLE (id text, distance real, fields jsonb)
AS 'MODULE_PATHNAME', 'ft_search'
LANGUAGE C VOLATILE SECURITY INVOKER ROWS 10;

COMMENT ON FUNCTION ft.search(regclass, real[], int, text, text[], int)
	IS 'FT.SEARCH: the k nearest docs to query that pass filter';

/*
 * ft.query(index, query, params): FT.SEARCH with a query of the RediSearch
 * DIALECT 2 subset (see docs/ft-api.md), e.g.
 *   ft.query('idx', '(@category:{books})=>[KNN 10 @embedding $vec AS score]',
 *            '{"vec": [0.1, 0.2, 0.3]}')
 */
CREATE FUNCTION ft.query(index regclass, query text,
	params jsonb DEFAULT '{}')
RETURNS TABLE (id text, distance real, fields jsonb)
AS 'MODULE_PATHNAME', 'ft_query'
LANGUAGE C VOLATILE SECURITY INVOKER ROWS 10;

COMMENT ON FUNCTION ft.query(regclass, text, jsonb)
	IS 'FT.SEARCH with a RediSearch DIALECT 2 query: KNN, tags, numeric ranges, VECTOR_RANGE, full text, LIMIT, RETURN, SORTBY, WITHSCORES';

/*
 * ft.explain(index, query, params): FT.EXPLAIN.  The parsed query, the SQL
 * it compiles to, its parameters and the plan of that SQL.
 */
CREATE FUNCTION ft.explain(index regclass, query text,
	params jsonb DEFAULT '{}')
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'ft_explain'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION ft.explain(regclass, text, jsonb)
	IS 'FT.EXPLAIN: the parsed query, its SQL, parameters and plan';

/*
 * ft.dropindex(index, delete_docs): FT.DROPINDEX [DD].  Drops the segvec
 * index.  Without delete_docs it first applies the writes queued for the
 * index (ft.flush), which the drop would otherwise discard; with
 * delete_docs (DD) it deletes the rows the index holds (those with a
 * non-NULL vector that the caller can see and delete) and the queue goes
 * with the index.  Returns the number of rows deleted.  One transaction:
 * nothing is applied or deleted if the drop fails.
 */
CREATE FUNCTION ft.dropindex(index regclass, delete_docs boolean DEFAULT false)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record;
	n bigint := 0;
	gin name;
BEGIN
	IF $1 IS NULL OR $2 IS NULL THEN
		RAISE EXCEPTION 'index and delete_docs must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT ns.nspname, t.relname, t.oid AS tbl, ic.relname AS idxname,
		va.attname AS vec, am.amname
	INTO r
	FROM pg_index i
		JOIN pg_class ic ON ic.oid = i.indexrelid
		JOIN pg_am am ON am.oid = ic.relam
		JOIN pg_class t ON t.oid = i.indrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace
		LEFT JOIN pg_attribute va
			ON va.attrelid = i.indrelid AND va.attnum = i.indkey[0]
	WHERE i.indexrelid = $1;
	IF NOT FOUND OR r.amname <> 'segvec' THEN
		RAISE EXCEPTION '"%" is not a segvec index',
			(SELECT c.relname FROM pg_class c WHERE c.oid = $1)
			USING ERRCODE = 'wrong_object_type';
	END IF;
	IF NOT $2 AND to_regprocedure('ft.flush(regclass)') IS NOT NULL THEN
		-- the writes queued for the index are the user's docs: apply them
		-- (with DD they go, as the drop discards the queue)
		PERFORM ft.flush($1);
	END IF;
	IF $2 THEN
		IF r.vec IS NULL THEN
			RAISE EXCEPTION 'cannot delete the docs of index "%": it indexes an expression', r.idxname
				USING ERRCODE = 'feature_not_supported';
		END IF;
		EXECUTE format('DELETE FROM %I.%I WHERE %I IS NOT NULL',
			r.nspname, r.relname, r.vec);
		GET DIAGNOSTICS n = ROW_COUNT;
	END IF;
	EXECUTE format('DROP INDEX %I.%I', r.nspname, r.idxname);
	-- the GIN index over its TEXT fields that ft.alter built serves only it
	SELECT ic.relname INTO gin
	FROM pg_index i
		JOIN pg_class ic ON ic.oid = i.indexrelid
		JOIN pg_am am ON am.oid = ic.relam
	WHERE i.indrelid = r.tbl AND am.amname = 'gin'
		AND ic.relname = left(r.idxname, 58) || '_text';
	IF FOUND THEN
		EXECUTE format('DROP INDEX %I.%I', r.nspname, gin);
	END IF;
	RETURN n;
END
$$;

COMMENT ON FUNCTION ft.dropindex(regclass, boolean)
	IS 'FT.DROPINDEX [DD]: drop a segvec index, and with delete_docs its rows; returns the rows deleted';

/*
 * ft.list(): FT._LIST.  Every segvec index in the database with its table,
 * id and vector columns, metric and num_docs: the rows with a vector that
 * the caller can see (NULL when the caller may not read the vector
 * column).  Indexes on other sessions' temporary tables are left out, and
 * so are the indexes of partitions (their partitioned table's index is
 * listed, with the docs of all partitions).
 */
CREATE FUNCTION ft.list()
RETURNS TABLE (index regclass, tbl regclass, id_column name,
	vector_column name, metric text, num_docs bigint)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record;
BEGIN
	FOR r IN
		SELECT i.indexrelid AS idx, i.indrelid AS rel, ns.nspname,
			t.relname, va.attname AS vec, ia.attname AS idc, op.oprname
		FROM pg_index i
			JOIN pg_class ic ON ic.oid = i.indexrelid
			JOIN pg_am am ON am.oid = ic.relam AND am.amname = 'segvec'
			JOIN pg_class t ON t.oid = i.indrelid
			JOIN pg_namespace ns ON ns.oid = t.relnamespace
			LEFT JOIN pg_attribute va
				ON va.attrelid = i.indrelid AND va.attnum = i.indkey[0]
			LEFT JOIN pg_attribute ia
				ON ia.attrelid = i.indrelid AND ia.attnum = i.indkey[i.indnkeyatts]
				AND i.indnatts > i.indnkeyatts
			LEFT JOIN pg_opclass oc ON oc.oid = i.indclass[0]
			-- the family's ordering operator: one name, though the
			-- segvec_pgvector companion adds one per type to the family
			LEFT JOIN LATERAL (
				SELECT o.oprname FROM pg_amop ao
					JOIN pg_operator o ON o.oid = ao.amopopr
				WHERE ao.amopfamily = oc.opcfamily AND ao.amopstrategy = 1
					AND ao.amoppurpose = 'o'
				LIMIT 1) op ON true
		WHERE (t.relpersistence <> 't'
			OR t.relnamespace = pg_my_temp_schema())
			-- a partitioned table's index stands for its partitions'
			AND NOT ic.relispartition
		ORDER BY ns.nspname, ic.relname
	LOOP
		index := r.idx;
		tbl := r.rel;
		id_column := r.idc;
		vector_column := r.vec;
		metric := CASE r.oprname WHEN '<->' THEN 'l2'
			WHEN '<=>' THEN 'cosine' WHEN '<#>' THEN 'ip' END;
		-- NULL for an expression index: counting would evaluate the
		-- table's expression as the caller (ft.info counts for the owner)
		num_docs := NULL;
		IF r.vec IS NOT NULL
			AND has_column_privilege(r.rel, r.vec, 'SELECT') THEN
			EXECUTE format('SELECT count(*) FROM %I.%I WHERE %I IS NOT NULL',
				r.nspname, r.relname, r.vec)
				INTO num_docs;
		END IF;
		RETURN NEXT;
	END LOOP;
END
$$;

COMMENT ON FUNCTION ft.list()
	IS 'FT._LIST: every segvec index with its table, columns, metric and num_docs';

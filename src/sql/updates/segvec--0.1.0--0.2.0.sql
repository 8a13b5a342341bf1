/* segvec--0.1.0--0.2.0.sql: update an installed segvec 0.1.0 to 0.2.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION segvec UPDATE TO '0.2.0'" to load this file. \quit

-- 0.2.0: the distance kernels are selectable (segvec.kernel) and named
CREATE FUNCTION segvec_kernel() RETURNS text
	AS 'MODULE_PATHNAME', 'segvec_kernel_name'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION segvec_kernel() IS 'the distance kernels in use (setting segvec.kernel): scalar, avx2 or avx512';

-- 0.2.0: the RediSearch dialect's TEXT fields, ft.alter and ft.hybrid
-- (src/sql/65_ft_dialect.sql), and ft.create's field options
-- (src/sql/60_ft_api.sql)
DROP FUNCTION ft.create(text, regclass, name, name, text, int, int, int);

/*
 * ft.create(index_name, tbl, id_column, vector_column, metric, m,
 * ef_construction, dimensions): FT.CREATE.  Checks the columns, makes sure
 * a btree leads with the id column (building a unique one, or a plain one
 * with a WARNING when the ids repeat), then creates the segvec index
 *   CREATE INDEX index_name ON tbl USING segvec (vector_column <opclass>)
 *     INCLUDE (id_column) WITH (m = .., ef_construction = ..)
 * in the table's schema, and returns it.  metric: l2 (default), cosine or
 * ip.  text_fields, language and casesensitive are the dialect's field
 * options (TEXT fields with their GIN index, case-sensitive TAG fields),
 * set by ft.alter.
 */
CREATE FUNCTION ft.create(index_name text, tbl regclass, id_column name,
	vector_column name, metric text DEFAULT 'l2', m int DEFAULT 16,
	ef_construction int DEFAULT 64, dimensions int DEFAULT NULL,
	text_fields name[] DEFAULT NULL, language text DEFAULT NULL,
	casesensitive name[] DEFAULT NULL)
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
	has_btree boolean;
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
	IF NOT FOUND OR rel.relkind NOT IN ('r', 'm') THEN
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

	/*
	 * The btree on the id that merge-insert probes: the guard of the
	 * merge-insert API when it is installed, else the same catalog test
	 * (a valid, ready, non-partial btree whose first key is the column).
	 */
	IF to_regprocedure('ft.has_key_btree_index(regclass,name)') IS NOT NULL THEN
		EXECUTE 'SELECT ft.has_key_btree_index($1, $2)'
			INTO has_btree USING tbl, id_column;
	ELSE
		SELECT EXISTS (
			SELECT FROM pg_index i
				JOIN pg_class ic ON ic.oid = i.indexrelid
				JOIN pg_am am ON am.oid = ic.relam
			WHERE i.indrelid = tbl AND am.amname = 'btree'
				AND i.indisvalid AND i.indisready AND i.indpred IS NULL
				AND i.indkey[0] = id_att.attnum)
		INTO has_btree;
	END IF;
	IF NOT has_btree THEN
		BEGIN
			EXECUTE format('CREATE UNIQUE INDEX ON %I.%I (%I)',
				rel.nspname, rel.relname, id_column);
		EXCEPTION WHEN unique_violation THEN
			RAISE WARNING 'ids in column "%" of "%" repeat: creating a non-unique btree on it',
				id_column, rel.relname;
			EXECUTE format('CREATE INDEX ON %I.%I (%I)',
				rel.nspname, rel.relname, id_column);
		END;
	END IF;

	-- XXX: register the index with the merge-insert API here if ft.add
	-- comes to need it (issue 7).
	EXECUTE format('CREATE INDEX %I ON %I.%I USING segvec (%I %I.%I) INCLUDE (%I) '
			'WITH (m = %L, ef_construction = %L%s)',
		index_name, rel.nspname, rel.relname, vector_column, opc.nspname,
		opc.opcname, id_column, m, ef_construction,
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

COMMENT ON FUNCTION ft.create(text, regclass, name, name, text, int, int, int, name[], text, name[])
	IS 'FT.CREATE: create a segvec index on tbl (vector_column) INCLUDE (id_column), with a btree on the id';

COMMENT ON FUNCTION ft.query(regclass, text, jsonb)
	IS 'FT.SEARCH with a RediSearch DIALECT 2 query: KNN, tags, numeric ranges, VECTOR_RANGE, full text, LIMIT, RETURN, SORTBY, WITHSCORES';

/*
 * The dialect's field options and hybrid search: ft.alter (FT.ALTER:
 * TEXT fields, their language, case-sensitive TAG fields) and ft.hybrid
 * (FT.HYBRID: full-text and vector results fused by reciprocal rank or a
 * linear combination).  See docs/ft-api.md.
 */

/*
 * ft._text_expr(tbl, fields, language): the tsvector expression over the
 * TEXT fields, as the compiler (ftcompile.c, text_source) writes it, so
 * that its queries match the GIN index built on it.  Internal.
 */
CREATE FUNCTION ft._text_expr(fields name[], language text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT format('pg_catalog.to_tsvector(CAST(%L AS pg_catalog.regconfig), %s)',
		language,
		(SELECT string_agg(format('COALESCE(CAST(%I AS pg_catalog.text), %L)', f, ''),
			' OPERATOR(pg_catalog.||) '' '' OPERATOR(pg_catalog.||) ' ORDER BY o)
		 FROM unnest(fields) WITH ORDINALITY u(f, o)))
$$;

/*
 * ft.alter(index, text_fields, language, casesensitive): FT.ALTER ...
 * SCHEMA ADD.  Sets the dialect's field options of a segvec index (its
 * reloptions text_fields, language, casesensitive; NULL keeps one as it
 * is, '{}' clears a list) and builds the GIN index over the TEXT fields
 * that full-text queries use, "<index>_text" (replacing the one an
 * earlier call built).  language is a text search configuration
 * (default english).  Needs ownership of the index, like ALTER INDEX.
 */
CREATE FUNCTION ft.alter(index regclass, text_fields name[] DEFAULT NULL,
	language text DEFAULT NULL, casesensitive name[] DEFAULT NULL)
RETURNS regclass
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	rel record;
	cfg text;
	f name;
	opts text[];
	gin_name text;
	cur text[];
BEGIN
	IF index IS NULL THEN
		RAISE EXCEPTION 'index must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT ic.relname AS idxname, c.oid AS tbl, c.relname, n.nspname,
			am.amname, ic.reloptions
		INTO rel
	FROM pg_index i
		JOIN pg_class ic ON ic.oid = i.indexrelid
		JOIN pg_am am ON am.oid = ic.relam
		JOIN pg_class c ON c.oid = i.indrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE i.indexrelid = index;
	IF NOT FOUND OR rel.amname <> 'segvec' THEN
		RAISE EXCEPTION '"%" is not a segvec index', index
			USING ERRCODE = 'wrong_object_type';
	END IF;
	cur := coalesce(rel.reloptions, '{}');

	FOREACH f IN ARRAY coalesce(text_fields, '{}') || coalesce(casesensitive, '{}') LOOP
		IF NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = rel.tbl
				AND a.attname = f AND a.attnum > 0 AND NOT a.attisdropped) THEN
			RAISE EXCEPTION 'column "%" of relation "%" does not exist',
				f, rel.relname
				USING ERRCODE = 'undefined_column';
		END IF;
	END LOOP;

	-- the configuration, schema-qualified so that no search_path changes it
	IF language IS NOT NULL THEN
		SELECT format('%I.%I', cn.nspname, c.cfgname) INTO cfg
		FROM pg_ts_config c JOIN pg_namespace cn ON cn.oid = c.cfgnamespace
		WHERE c.oid = language::regconfig;
	ELSE
		SELECT substr(o, length('language=') + 1) INTO cfg
		FROM unnest(cur) o WHERE o LIKE 'language=%';
		cfg := coalesce(cfg, 'pg_catalog.english');
	END IF;

	opts := ARRAY[format('language=%s', cfg)];
	IF text_fields IS NOT NULL THEN
		opts := opts || format('text_fields=%s',
			(SELECT coalesce(string_agg(quote_ident(x), ',' ORDER BY o), '')
			 FROM unnest(text_fields) WITH ORDINALITY u(x, o)));
	END IF;
	IF casesensitive IS NOT NULL THEN
		opts := opts || format('casesensitive=%s',
			(SELECT coalesce(string_agg(quote_ident(x), ',' ORDER BY o), '')
			 FROM unnest(casesensitive) WITH ORDINALITY u(x, o)));
	END IF;
	EXECUTE format('ALTER INDEX %I.%I SET (%s)', rel.nspname, rel.idxname,
		(SELECT string_agg(format('%s = %L', split_part(o, '=', 1),
				substr(o, strpos(o, '=') + 1)), ', ')
		 FROM unnest(opts) o));

	-- the GIN index of the TEXT fields
	IF text_fields IS NOT NULL OR language IS NOT NULL THEN
		gin_name := left(rel.idxname, 58) || '_text';
		IF EXISTS (SELECT FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
				JOIN pg_am am ON am.oid = ic.relam
				WHERE ic.relname = gin_name AND ic.relnamespace =
					(SELECT relnamespace FROM pg_class WHERE oid = rel.tbl)
				AND i.indrelid = rel.tbl AND am.amname = 'gin') THEN
			EXECUTE format('DROP INDEX %I.%I', rel.nspname, gin_name);
		END IF;
		IF text_fields IS NULL THEN
			SELECT string_to_array(substr(o, length('text_fields=') + 1), ',')
				INTO text_fields
			FROM unnest(cur) o WHERE o LIKE 'text_fields=%';
			text_fields := (SELECT array_agg(trim(both '"' from x)) FROM unnest(text_fields) x);
		END IF;
		IF coalesce(cardinality(text_fields), 0) > 0 THEN
			EXECUTE format('CREATE INDEX %I ON %I.%I USING gin (%s)', gin_name,
				rel.nspname, rel.relname, ft._text_expr(text_fields, cfg));
		END IF;
	END IF;
	RETURN index;
END
$$;

COMMENT ON FUNCTION ft.alter(regclass, name[], text, name[])
	IS 'FT.ALTER: set the TEXT fields (and their GIN index), language and case-sensitive TAG fields of a segvec index';

/*
 * ft.hybrid(index, text_query, vector, k, ...): FT.HYBRID.  Runs the
 * full-text query (best ts_rank_cd first) and a KNN of vector (nearest
 * first, among the docs passing vector_filter when given), window_size
 * results each, and fuses the two lists:
 *   rrf:    score = 1 / (rrf_constant + text_rank) + 1 / (rrf_constant + vector_rank)
 *   linear: score = alpha * text_score + beta * 1 / (1 + vector_distance)
 * (a term is 0 for a doc missing from that list).  Returns the k best
 * docs, best first (then by id), with both ranks, both scores and the
 * fused score.
 */
CREATE FUNCTION ft.hybrid(index regclass, text_query text, vector real[],
	k int DEFAULT 10, combine text DEFAULT 'rrf',
	rrf_constant float8 DEFAULT 60, alpha float8 DEFAULT 0.5,
	beta float8 DEFAULT 0.5, window_size int DEFAULT 20,
	vector_filter text DEFAULT NULL, params jsonb DEFAULT '{}')
RETURNS TABLE (id text, text_rank bigint, vector_rank bigint,
	text_score float8, vector_distance float8, score float8)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	vcol name;
	knn text;
	opts jsonb;
BEGIN
	IF index IS NULL OR text_query IS NULL OR vector IS NULL OR k IS NULL
		OR combine IS NULL OR rrf_constant IS NULL OR alpha IS NULL
		OR beta IS NULL OR window_size IS NULL THEN
		RAISE EXCEPTION 'only vector_filter and params may be null in ft.hybrid'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF lower(combine) NOT IN ('rrf', 'linear') THEN
		RAISE EXCEPTION 'unknown combine method "%"', combine
			USING ERRCODE = 'invalid_parameter_value',
				HINT = 'Use rrf or linear.';
	END IF;
	IF k < 0 OR window_size < 1 OR rrf_constant <= 0 THEN
		RAISE EXCEPTION 'k must not be negative, window_size and rrf_constant must be positive'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF params IS NOT NULL AND params ? '__hybrid_vec' THEN
		RAISE EXCEPTION 'params must not name $__hybrid_vec'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	SELECT a.attname INTO vcol
	FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
	WHERE i.indexrelid = index;
	IF NOT FOUND THEN
		RAISE EXCEPTION '"%" is not a segvec index', index
			USING ERRCODE = 'wrong_object_type';
	END IF;
	knn := format('(%s)=>[KNN %s @%s $__hybrid_vec]',
		coalesce(nullif(vector_filter, ''), '*'), window_size,
		regexp_replace(vcol, '([^A-Za-z0-9_])', '\\\1', 'g'));
	opts := jsonb_build_object('LIMIT', jsonb_build_array(0, window_size),
		'RETURN', '[]'::jsonb);

	RETURN QUERY
	WITH t AS (
		SELECT q.id, q.ord AS r, (q.fields ->> '__score')::float8 AS s
		FROM ft.query(index, text_query,
			coalesce(params, '{}') || opts || '{"WITHSCORES": true}')
			WITH ORDINALITY q(id, distance, fields, ord)),
	v AS (
		SELECT q.id, q.ord AS r, q.distance::float8 AS d
		FROM ft.query(index, knn, coalesce(params, '{}') || opts ||
			jsonb_build_object('__hybrid_vec', to_jsonb(vector)))
			WITH ORDINALITY q(id, distance, fields, ord)),
	f AS (
		SELECT coalesce(t.id, v.id) AS id, t.r AS tr, v.r AS vr, t.s, v.d,
			CASE lower(combine)
				WHEN 'rrf' THEN
					coalesce(1.0 / (rrf_constant + t.r), 0) +
					coalesce(1.0 / (rrf_constant + v.r), 0)
				ELSE
					alpha * coalesce(t.s, 0) +
					beta * coalesce(1.0 / (1.0 + v.d), 0)
			END AS score
		FROM t FULL JOIN v ON t.id = v.id)
	SELECT f.id, f.tr, f.vr, f.s, f.d, f.score
	FROM f
	ORDER BY f.score DESC, f.id
	LIMIT k;
END
$$;

COMMENT ON FUNCTION ft.hybrid(regclass, text, real[], int, text, float8, float8, float8, int, text, jsonb)
	IS 'FT.HYBRID: full-text and KNN results fused by reciprocal rank (rrf) or a linear combination';
-- 0.2.0: ft.similar and ft.info pin search_path, ft.similar qualifies the
-- index's ordering operator (issue 14); ft.jobs shows how long each job
-- waited
CREATE OR REPLACE FUNCTION ft.similar(index regclass, key text, k int DEFAULT 10)
	RETURNS TABLE (id text, distance float8)
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
BEGIN
	-- ft.get checks SELECT and row-level security: a row the caller may
	-- not see has no neighbours
	SELECT g.id, g.vector INTO canon, v FROM ft.get(index, key) g;
	IF v IS NULL THEN
		RETURN;
	END IF;
	-- the index's ordering operator, schema-qualified
	SELECT i.indrelid::regclass,
		   (SELECT a.attname FROM pg_attribute a
			 WHERE a.attrelid = i.indrelid AND a.attnum = i.indkey[1]),
		   (SELECT a.attname FROM pg_attribute a
			 WHERE a.attrelid = i.indrelid AND a.attnum = i.indkey[0]),
		   format('OPERATOR(%I.%s)', n.nspname, o.oprname)
	  INTO tbl, idcol, veccol, op
	  FROM pg_index i
		   JOIN pg_opclass c ON c.oid = i.indclass[0]
		   JOIN pg_amop ao ON ao.amopfamily = c.opcfamily
				AND ao.amopstrategy = 1 AND ao.amoppurpose = 'o'
		   JOIN pg_operator o ON o.oid = ao.amopopr
		   JOIN pg_namespace n ON n.oid = o.oprnamespace
	 WHERE i.indexrelid = index;
	RETURN QUERY EXECUTE format(
		'SELECT CAST(t.%1$I AS pg_catalog.text), t.%2$I %3$s $1 FROM %4$s t '
		'WHERE CAST(t.%1$I AS pg_catalog.text) IS DISTINCT FROM $2 '
		'AND t.%2$I IS NOT NULL '
		'ORDER BY t.%2$I %3$s $1 LIMIT $3',
		idcol, veccol, op, tbl)
		USING v, canon, k;
END
$$;

CREATE OR REPLACE FUNCTION ft.info(index regclass,
	OUT num_docs bigint, OUT mutable_docs bigint, OUT immutable_docs bigint,
	OUT tombstones bigint, OUT num_segments int, OUT segments jsonb,
	OUT keymap_entries bigint, OUT keymap_epoch int,
	OUT keymap_buckets_changed int, OUT index_bytes bigint,
	OUT dimensions int, OUT metric text, OUT m int, OUT ef_construction int,
	OUT compact_threshold int, OUT background_work boolean,
	OUT pending bigint, OUT oldest_pending_at timestamptz,
	OUT merge_index_built_total bigint, OUT merges_total bigint,
	OUT jobs_run bigint, OUT jobs_coalesced bigint, OUT jobs_failed bigint)
	LANGUAGE plpgsql STABLE STRICT
	SET search_path = pg_catalog, pg_temp
	AS $$
BEGIN
	SELECT s.num_docs, s.mutable_docs, s.immutable_docs, s.tombstones,
		   s.num_segments, s.segments, s.keymap_entries, s.keymap_epoch,
		   s.keymap_buckets_changed, s.index_bytes, s.dimensions, s.metric,
		   s.m, s.ef_construction, s.compact_threshold, s.background_work
	  INTO num_docs, mutable_docs, immutable_docs, tombstones, num_segments,
		   segments, keymap_entries, keymap_epoch, keymap_buckets_changed,
		   index_bytes, dimensions, metric, m, ef_construction,
		   compact_threshold, background_work
	  FROM ft.index_stats(index) s;
	SELECT ms.pending, ms.oldest_pending_at, ms.merge_index_built_total,
		   ms.merges_total
	  INTO pending, oldest_pending_at, merge_index_built_total, merges_total
	  FROM ft.merge_stats(index) ms;
	SELECT COALESCE(sum(j.run), 0), COALESCE(sum(j.coalesced), 0),
		   COALESCE(sum(j.failed), 0)
	  INTO jobs_run, jobs_coalesced, jobs_failed
	  FROM ft.job_stats() j;
	RETURN;
END
$$;

CREATE OR REPLACE VIEW ft.jobs AS
	SELECT j.*,
		   COALESCE(j.started_at, pg_catalog.now()) OPERATOR(pg_catalog.-)
			 j.submitted_at AS waiting
	  FROM ft.job_table() j
	ORDER BY j.state DESC, j.submitted_at;

-- 0.2.0: ft.verify reports graph nodes no search can reach
-- (unreachable_nodes, src/sql/30_ft.sql)
DROP FUNCTION ft.verify(regclass, boolean, bigint);

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

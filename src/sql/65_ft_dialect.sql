/*
 * The dialect's field options and hybrid search: ft.alter (FT.ALTER:
 * TEXT fields, their language, case-sensitive TAG fields) and ft.hybrid
 * (FT.HYBRID: full-text and vector results fused by reciprocal rank or a
 * linear combination).  See docs/ft-api.md.
 */

/*
 * ft.english_redisearch: the text search configuration of TEXT fields
 * when ft.alter / ft.create get no language, RediSearch's default:
 * PostgreSQL's english configuration with its Snowball stemmer given
 * RediSearch's default stop words (segvec_redisearch.stop in
 * tsearch_data, installed with the extension) instead of PostgreSQL's
 * longer list, so that words such as "other" or "t" are searched as
 * RediSearch searches them.
 */
CREATE TEXT SEARCH DICTIONARY ft.english_redisearch_stem (
	TEMPLATE = pg_catalog.snowball, LANGUAGE = english,
	STOPWORDS = segvec_redisearch);
COMMENT ON TEXT SEARCH DICTIONARY ft.english_redisearch_stem
	IS 'Snowball english stemmer with RediSearch''s default stop words';
CREATE TEXT SEARCH CONFIGURATION ft.english_redisearch (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION ft.english_redisearch
	ALTER MAPPING REPLACE pg_catalog.english_stem WITH ft.english_redisearch_stem;
COMMENT ON TEXT SEARCH CONFIGURATION ft.english_redisearch
	IS 'RediSearch''s default for TEXT fields: english stemming, RediSearch''s stop words';

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
 * ft._text_near(doc, terms, slop, inorder): RediSearch's SLOP / INORDER
 * over a tsvector's positions (src/ft/fttext.c): each term (a tsquery of
 * alternatives) occurs with at most slop other words between the first
 * and the last (slop < 0: any), in order when inorder.  The compiler
 * calls it for an AND of text terms with SLOP, INORDER, $slop or
 * $inorder.  Internal.
 */
CREATE FUNCTION ft._text_near(doc tsvector, terms tsquery[], slop int,
	inorder boolean) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ft_text_near'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

/*
 * ft.alter(index, text_fields, language, casesensitive): FT.ALTER ...
 * SCHEMA ADD.  Sets the dialect's field options of a segvec index (its
 * reloptions text_fields, language, casesensitive; NULL keeps one as it
 * is, '{}' clears a list) and builds the GIN index over the TEXT fields
 * that full-text queries use, "<index>_text" (replacing the one an
 * earlier call built).  language is a text search configuration
 * (default ft.english_redisearch, RediSearch's stop words).  Needs
 * ownership of the index, like ALTER INDEX.  On a
 * partitioned table the options are set on each partition's index (a
 * partitioned index's own cannot be altered; later partitions do not get
 * them until ft.alter runs again).
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
	leaves regclass[];
	leaf regclass;
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
	-- a partitioned index's options cannot be altered: its partitions' are
	-- (ftsearch.c reads the first partition's)
	leaves := ARRAY(SELECT ft._partition_indexes(index));
	IF leaves <> ARRAY[index] AND cardinality(leaves) > 0 THEN
		SELECT c.reloptions INTO cur FROM pg_class c WHERE c.oid = leaves[1];
	ELSE
		cur := rel.reloptions;
	END IF;
	cur := coalesce(cur, '{}');

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
		cfg := coalesce(cfg, 'ft.english_redisearch');
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
	FOREACH leaf IN ARRAY leaves LOOP
		EXECUTE format('ALTER INDEX %s SET (%s)', leaf,
			(SELECT string_agg(format('%s = %L', split_part(o, '=', 1),
					substr(o, strpos(o, '=') + 1)), ', ')
			 FROM unnest(opts) o));
	END LOOP;

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
 *   linear: score = alpha * text_score + beta * vector_score
 * where vector_score maps ft.query's distance d into [0, 1], nearer
 * higher: l2 (d the squared distance) 1 / (1 + d); cosine (d = 1 - cos)
 * 1 - d / 2, 0 for a zero vector (NaN); ip (d = 1 - u.v) the logistic
 * 1 / (1 + exp(-u.v)) (u.v may be any real).  A term is 0 for a doc
 * missing from that list.  Returns the k best
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
	metric text;
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
	-- NaN compares greater than any number, so it fails the second test
	IF NOT (rrf_constant < 'Infinity' AND alpha > '-Infinity' AND
			alpha < 'Infinity' AND beta > '-Infinity' AND beta < 'Infinity') THEN
		RAISE EXCEPTION 'rrf_constant, alpha and beta must be finite numbers'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF params IS NOT NULL AND params ? '__hybrid_vec' THEN
		RAISE EXCEPTION 'params must not name $__hybrid_vec'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	SELECT a.attname,
		   CASE WHEN o.opcname ~ '_cosine_ops$' THEN 'cosine'
				WHEN o.opcname ~ '_ip_ops$' THEN 'ip' ELSE 'l2' END
	INTO vcol, metric
	FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		JOIN pg_opclass o ON o.oid = i.indclass[0]
	WHERE i.indexrelid = index;
	IF NOT FOUND THEN
		RAISE EXCEPTION '"%" is not a segvec index', index
			USING ERRCODE = 'wrong_object_type';
	END IF;
	-- nearest first (ft.query's KNN is in doc order without SORTBY)
	knn := format('(%s)=>[KNN %s @%s $__hybrid_vec AS __hybrid_distance]',
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
			jsonb_build_object('__hybrid_vec', to_jsonb(vector),
				'SORTBY', '__hybrid_distance'))
			WITH ORDINALITY q(id, distance, fields, ord)),
	f AS (
		SELECT coalesce(t.id, v.id) AS id, t.r AS tr, v.r AS vr, t.s, v.d,
			CASE lower(combine)
				WHEN 'rrf' THEN
					coalesce(1.0 / (rrf_constant + t.r), 0) +
					coalesce(1.0 / (rrf_constant + v.r), 0)
				ELSE
					alpha * coalesce(t.s, 0) +
					beta * coalesce(CASE
						WHEN v.d = 'NaN' THEN 0
						WHEN metric = 'cosine' THEN 1.0 - v.d / 2
						WHEN metric = 'ip' THEN
							1.0 / (1.0 + exp(Least(Greatest(v.d - 1.0, -700), 700)))
						ELSE 1.0 / (1.0 + v.d) END, 0)
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

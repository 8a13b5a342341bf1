-- ft_hybrid: full-text and vectors together.  A KNN whose filter has
-- full-text terms (RediSearch's hybrid query: filter semantics) equals
-- the hand-written SQL; ft.hybrid's reciprocal rank fusion and linear
-- combination equal their formulas computed from hand-written text and
-- vector rankings; its arguments are checked.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;
\set VERBOSITY terse

CREATE TABLE hdocs (id int, body text, kind text, embedding real[]);
INSERT INTO hdocs
  SELECT i,
         (SELECT string_agg((ARRAY['solar', 'panel', 'wind', 'turbine',
            'battery', 'storage', 'grid', 'power', 'cheap', 'green', 'energy',
            'home', 'roof', 'city', 'farm', 'sea'])[1 + (i * 37 + j * 11 + j * j * i) % 16],
            ' ' ORDER BY j) FROM generate_series(1, 4 + i % 5) j),
         (ARRAY['a', 'b'])[1 + i % 2],
         ARRAY[sin(i * 0.7)::real, cos(i * 1.3)::real, sin(i * 2.1)::real]
  FROM generate_series(1, 2000) i;
SELECT ft.create('hdocs_idx', 'hdocs', 'id', 'embedding',
  text_fields => '{body}', language => 'english');
ANALYZE hdocs;

-- exact vector order: no index scans
CREATE FUNCTION pg_temp.exact(sql text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  r text[];
BEGIN
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE 'SELECT array_agg(x ORDER BY o) FROM (SELECT x, row_number() OVER () AS o FROM ('
    || sql || ') s(x)) t' INTO r;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  RETURN r;
END
$$;
-- (nearest first: SORTBY the distance; without it the k come in doc order)
CREATE FUNCTION pg_temp.knn(q text) RETURNS text[] LANGUAGE sql AS $$
  SELECT array_agg(id || ':' || round(distance::numeric, 5) ORDER BY ord)
  FROM ft.query('hdocs_idx', q || ' SORTBY __embedding_score', '{"v": [0.3, -0.2, 0.9]}')
    WITH ORDINALITY s(id, distance, fields, ord) $$;

-- 1. KNN among the docs that pass a full-text filter
SELECT q, pg_temp.knn(q) = pg_temp.exact(sql) AS same, cardinality(pg_temp.knn(q)) AS k
FROM (VALUES
 ('(solar panel)=>[KNN 10 @embedding $v]',
  $$SELECT id || ':' || round(((embedding <-> '{0.3,-0.2,0.9}') ^ 2)::real::numeric, 5) FROM hdocs
    WHERE to_tsvector('english', coalesce(body, '')) @@ to_tsquery('english', 'solar & panel')
    ORDER BY embedding <-> '{0.3,-0.2,0.9}', id LIMIT 10$$),
 ('(wind | sea -farm)=>[KNN 10 @embedding $v]',
  $$SELECT id || ':' || round(((embedding <-> '{0.3,-0.2,0.9}') ^ 2)::real::numeric, 5) FROM hdocs
    WHERE to_tsvector('english', coalesce(body, '')) @@ to_tsquery('english', 'wind | (sea & !farm)')
    ORDER BY embedding <-> '{0.3,-0.2,0.9}', id LIMIT 10$$),
 ('("panel power" @kind:{b})=>[KNN 5 @embedding $v HYBRID_POLICY ADHOC_BF]',
  $$SELECT id || ':' || round(((embedding <-> '{0.3,-0.2,0.9}') ^ 2)::real::numeric, 5) FROM hdocs
    WHERE to_tsvector('english', coalesce(body, '')) @@ to_tsquery('english', 'panel <-> power')
      AND kind = 'b'
    ORDER BY embedding <-> '{0.3,-0.2,0.9}', id LIMIT 5$$),
 ('(batt*)=>[KNN 10 @embedding $v HYBRID_POLICY BATCHES BATCH_SIZE 50]',
  $$SELECT id || ':' || round(((embedding <-> '{0.3,-0.2,0.9}') ^ 2)::real::numeric, 5) FROM hdocs
    WHERE to_tsvector('english', coalesce(body, '')) @@ to_tsquery('english', 'batt:*')
    ORDER BY embedding <-> '{0.3,-0.2,0.9}', id LIMIT 10$$)) AS c(q, sql);

-- 2. ft.hybrid: both rankings by hand, fused by the formulas
CREATE TEMP TABLE text_ranked AS
  SELECT id::text AS id, row_number() OVER (ORDER BY s DESC, id) AS r,
         (to_jsonb(s) #>> '{}')::float8 AS s
  FROM (SELECT id, ts_rank_cd(to_tsvector('english', coalesce(body, '')),
                               to_tsquery('english', 'solar | battery')) AS s
        FROM hdocs
        WHERE to_tsvector('english', coalesce(body, '')) @@ to_tsquery('english', 'solar | battery')
        ORDER BY s DESC, id LIMIT 20) x;
SET enable_indexscan = off;
CREATE TEMP TABLE vec_ranked AS
  SELECT id::text AS id, row_number() OVER (ORDER BY d, id) AS r, d
  FROM (SELECT id, ((embedding <-> '{0.3,-0.2,0.9}') ^ 2)::real::float8 AS d FROM hdocs
        ORDER BY embedding <-> '{0.3,-0.2,0.9}', id LIMIT 20) x;
RESET enable_indexscan;
CREATE TEMP TABLE fused AS
  SELECT coalesce(t.id, v.id) AS id, t.r AS tr, v.r AS vr, t.s AS ts, v.d AS vd,
         coalesce(1.0 / (60 + t.r), 0) + coalesce(1.0 / (60 + v.r), 0) AS rrf60,
         coalesce(1.0 / (10 + t.r), 0) + coalesce(1.0 / (10 + v.r), 0) AS rrf10,
         0.7 * coalesce(t.s, 0) + 0.3 * coalesce(1.0 / (1.0 + v.d), 0) AS lin
  FROM text_ranked t FULL JOIN vec_ranked v ON t.id = v.id;

-- RRF with the default constant 60: ids, both ranks and the fused score
SELECT (SELECT array_agg(row(h.id, h.text_rank, h.vector_rank, round(h.score::numeric, 12))::text)
          FROM ft.hybrid('hdocs_idx', 'solar | battery', '{0.3,-0.2,0.9}', 10) h)
     = (SELECT array_agg(x) FROM (SELECT row(id, tr, vr, round(rrf60::numeric, 12))::text AS x
          FROM fused ORDER BY rrf60 DESC, id LIMIT 10) s) AS rrf_default;
SELECT h.id, h.text_rank, h.vector_rank, round(h.text_score::numeric, 4) AS text_score,
       round(h.vector_distance::numeric, 4) AS vector_distance, round(h.score::numeric, 6) AS score
  FROM ft.hybrid('hdocs_idx', 'solar | battery', '{0.3,-0.2,0.9}', 5) h;
-- another constant
SELECT (SELECT array_agg(row(h.id, round(h.score::numeric, 12))::text)
          FROM ft.hybrid('hdocs_idx', 'solar | battery', '{0.3,-0.2,0.9}', 15,
                         rrf_constant => 10) h)
     = (SELECT array_agg(x) FROM (SELECT row(id, round(rrf10::numeric, 12))::text AS x
          FROM fused ORDER BY rrf10 DESC, id LIMIT 15) s) AS rrf_10;
-- linear: alpha * text score + beta / (1 + distance)
SELECT (SELECT array_agg(row(h.id, round(h.score::numeric, 9))::text)
          FROM ft.hybrid('hdocs_idx', 'solar | battery', '{0.3,-0.2,0.9}', 10,
                         combine => 'linear', alpha => 0.7, beta => 0.3) h)
     = (SELECT array_agg(x) FROM (SELECT row(id, round(lin::numeric, 9))::text AS x
          FROM fused ORDER BY lin DESC, id LIMIT 10) s) AS linear;
-- the scores it reports are those of the two lists
SELECT bool_and(h.text_score IS NOT DISTINCT FROM f.ts AND h.vector_distance IS NOT DISTINCT FROM f.vd)
  AS scores
  FROM ft.hybrid('hdocs_idx', 'solar | battery', '{0.3,-0.2,0.9}', 30, window_size => 20) h
  JOIN fused f USING (id);
-- a filter on the vector side, and a window
SELECT count(*) FILTER (WHERE vector_rank IS NOT NULL) AS in_vector_list,
       bool_and(d.kind = 'a' OR h.vector_rank IS NULL) AS filtered
  FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', 100, window_size => 7,
                 vector_filter => '@kind:{a}') h
  JOIN hdocs d ON d.id = h.id::int;

-- 3. arguments
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', 5, combine => 'max');
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', -1);
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', 5, rrf_constant => 0);
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2}', 5);
SELECT * FROM ft.hybrid('hdocs_idx', 'wind LIMIT 0 5', '{0.3,-0.2,0.9}', 5);
SELECT * FROM ft.hybrid('hdocs_idx', NULL, '{0.3,-0.2,0.9}', 5);
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', 5, params => '{"__hybrid_vec": 1}');
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', 5, rrf_constant => 'NaN');
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', 5, combine => 'linear', alpha => 'NaN');
SELECT * FROM ft.hybrid('hdocs_idx', 'wind', '{0.3,-0.2,0.9}', 5, combine => 'linear', beta => 'Infinity');
SELECT * FROM ft.query('hdocs_idx', '$w', '{"w": ""}');

-- 4. linear on cosine and inner-product indexes: the vector term maps the
-- distance into [0, 1], nearer higher (cosine 1 - d / 2, and 0 for a zero
-- vector, whose distance is NaN; ip the logistic of u.v = 1 - d)
CREATE TABLE hmet (id int, body text, embedding real[]);
INSERT INTO hmet VALUES
  (1, 'wind farm', '{0,0,0}'),           -- zero vector: NaN under cosine
  (2, 'wind power', '{1,0,0}'),
  (3, 'solar roof', '{2,0,0}'),          -- u.v = 2 with the query {1,0,0}
  (4, 'wind city', '{0.5,0.5,0}'),
  (5, 'green sea', '{-1,0,0}');
SELECT ft.create('hmet_cos', 'hmet', 'id', 'embedding', metric => 'cosine',
  text_fields => '{body}', language => 'english');
SELECT h.id, h.text_rank, h.vector_rank, round(h.vector_distance::numeric, 4) AS d,
       round(h.score::numeric, 4) AS score
  FROM ft.hybrid('hmet_cos', 'wind', '{1,0,0}', 5, combine => 'linear',
                 alpha => 0, beta => 1) h;
SELECT ft.dropindex('hmet_cos');
SELECT ft.create('hmet_ip', 'hmet', 'id', 'embedding', metric => 'ip',
  text_fields => '{body}', language => 'english');
SELECT h.id, h.vector_rank, round(h.vector_distance::numeric, 4) AS d,
       round(h.score::numeric, 4) AS score,
       round((1 / (1 + exp(h.vector_distance - 1)))::numeric, 4) AS logistic
  FROM ft.hybrid('hmet_ip', 'wind', '{1,0,0}', 5, combine => 'linear',
                 alpha => 0, beta => 1) h;
DROP TABLE hmet;

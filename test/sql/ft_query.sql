-- ft.query and ft.explain: the RediSearch DIALECT 2 subset.  KNN with and
-- without pre-filters, every filter form, pure filter queries, LIMIT,
-- RETURN, SORTBY (in the query and in params), VECTOR_RANGE, vector
-- parameters as JSON arrays and as base64 float32, syntax errors with
-- their position, unknown fields, SQL in values and field names.  Each
-- result is compared with the equivalent plain SQL (exact: index scans off).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;

-- deterministic, pairwise distinct 8-dim vectors
CREATE FUNCTION pg_temp.v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 8) j $$;

-- base64 of the vector's little-endian float32 bytes (Redis' FLOAT32 blob)
CREATE FUNCTION pg_temp.b64(v real[]) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT encode(string_agg(
           set_byte(set_byte(set_byte(set_byte('\x00000000'::bytea,
             0, get_byte(b, 3)), 1, get_byte(b, 2)), 2, get_byte(b, 1)),
             3, get_byte(b, 0)), ''::bytea ORDER BY i), 'base64')
  FROM (SELECT i, float4send(v[i]) AS b FROM generate_subscripts(v, 1) i) s $$;

CREATE TABLE ftq_items (id bigint PRIMARY KEY, embedding real[],
  category text, price numeric, rating float8, qty int, tags text[],
  title text, "we""ird; col" int);
INSERT INTO ftq_items
  SELECT i,
         CASE WHEN i % 50 = 0 THEN NULL ELSE pg_temp.v(i) END,
         CASE WHEN i % 17 = 0 THEN NULL
              ELSE (ARRAY['books', 'music', 'games', 'films'])[1 + i % 4] END,
         CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 7) % 100 END,
         (i % 11) / 2.0, i % 7,
         ARRAY['t' || i % 5, 'u' || i % 3],
         'title ' || i, i % 2
  FROM generate_series(1, 600) i;
SELECT ft.create('ftq_l2', 'ftq_items', 'id', 'embedding');
SELECT ft.create('ftq_cos', 'ftq_items', 'id', 'embedding', 'cosine');

-- ids (in order) that ft.query returns
CREATE FUNCTION pg_temp.ids(idx regclass, query text,
  params jsonb DEFAULT '{}') RETURNS text[] LANGUAGE sql AS $$
  SELECT array_agg(id ORDER BY ord)
  FROM ft.query(idx, query, params) WITH ORDINALITY AS s(id, d, f, ord) $$;
-- ids (in order) that a plain query returns with index scans off; $1 is
-- the query vector
CREATE FUNCTION pg_temp.exact(sql text, qv real[] DEFAULT NULL)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  r text[];
BEGIN
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE 'SELECT array_agg(id::text) FROM (' || sql || ') s' INTO r USING qv;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  RETURN r;
END
$$;
CREATE TEMP TABLE qv AS
  SELECT g AS qid, pg_temp.v(100000 + g) AS v,
         jsonb_build_object('vec', pg_temp.v(100000 + g)) AS p
  FROM generate_series(1, 3) g;

-- 1. KNN: the k nearest (ties at the k-th distance to the lowest ids),
-- in RediSearch's default order, by doc, or nearest first with SORTBY
-- the distance; as many as LIMIT allows (10 by default, as in
-- RediSearch); AS, EF_RUNTIME, attributes, $k, any case
SELECT qid,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec]', p)
    = pg_temp.exact('SELECT id FROM (SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                     ORDER BY embedding <-> $1, id LIMIT 10) k ORDER BY id', v) AS l2,
  pg_temp.ids('ftq_cos', '*=>[KNN 10 @embedding $vec]', p)
    = pg_temp.exact('SELECT id FROM (SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                     ORDER BY embedding <=> $1, id LIMIT 10) k ORDER BY id', v) AS cosine,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec] SORTBY __embedding_score', p)
    = pg_temp.exact('SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                     ORDER BY embedding <-> $1, id LIMIT 10', v) AS l2_nearest_first,
  pg_temp.ids('ftq_cos', '*=>[KNN 10 @embedding $vec AS d] SORTBY d', p)
    = pg_temp.exact('SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                     ORDER BY embedding <=> $1, id LIMIT 10', v) AS cosine_nearest_first
FROM qv ORDER BY qid;
SELECT cardinality(pg_temp.ids('ftq_l2', '*=>[KNN 5 @embedding $vec]', p)) AS k5,
  cardinality(pg_temp.ids('ftq_l2', '*=>[KNN 20 @embedding $vec]', p)) AS k20,
  cardinality(pg_temp.ids('ftq_l2', '*=>[KNN 20 @embedding $vec] LIMIT 0 20', p)) AS k20_limit20,
  pg_temp.ids('ftq_l2', '*=>[KNN 20 @embedding $vec] LIMIT 0 20', p)
    = pg_temp.exact('SELECT id FROM (SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                     ORDER BY embedding <-> $1, id LIMIT 20) k ORDER BY id', v) AS same20
FROM qv WHERE qid = 1;
SELECT pg_temp.ids('ftq_l2', q, p || '{"k": 7, "ef": 100}') AS ids
FROM qv, (VALUES
  ('*=>[KNN 7 @embedding $vec]'),
  ('*=>[KNN 7 @embedding $vec AS score]'),
  ('*=>[KNN $k @embedding $vec EF_RUNTIME $ef AS score]'),
  ('*=>[KNN 7 @embedding $vec EF_RUNTIME 10]'),
  ('*=>[knn 7 @embedding $vec ef_runtime 100 as score]'),
  ('*=>[KNN 7 @embedding $vec]=>{$YIELD_DISTANCE_AS: d; $EF_RUNTIME: 50;}'),
  ('  *  =>  [  KNN   7   @embedding   $vec  ]  DIALECT 2  ')) AS x(q)
WHERE qid = 2;
-- distance is the squared L2 distance, as RediSearch reports it (the
-- operator <-> is Euclidean)
SELECT bool_and(s.distance = ((i.embedding <-> pg_temp.v(100001)) ^ 2)::real) AS same
FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]',
  (SELECT p FROM qv WHERE qid = 1)) s JOIN ftq_items i ON i.id = s.id::bigint;

-- 2. Pre-filters: every filter form, then the KNN among the docs that pass
CREATE TEMP TABLE filters (n int, filter text, sqlwhere text);
INSERT INTO filters VALUES
  (1, '@category:{books}', $$category = 'books'$$),
  (2, '@category:{books | music}', $$category IN ('books', 'music')$$),
  (3, '-@category:{books}', $$(category = 'books') IS NOT TRUE$$),
  (4, '@tags:{t1 | u2}', $$tags && '{t1,u2}'$$),
  (5, '@qty:{3}', $$qty = 3$$),
  (6, '@price:[10 20]', $$price >= 10 AND price <= 20$$),
  (7, '@price:[(10 (20]', $$price > 10 AND price < 20$$),
  (8, '@price:[-inf (5]', $$price < 5$$),
  (9, '@price:[90 +inf]', $$price >= 90$$),
  (10, '@rating:[1.5 (3]', $$rating >= 1.5 AND rating < 3$$),
  (11, '-@price:[10 90]', $$(price >= 10 AND price <= 90) IS NOT TRUE$$),
  (12, '@category:{books} @price:[0 50]',
       $$category = 'books' AND price BETWEEN 0 AND 50$$),
  (13, '@category:{books} | @price:[0 10]',
       $$category = 'books' OR price BETWEEN 0 AND 10$$),
  (14, '@category:{books} @price:[0 50] | @category:{music} @qty:{1}',
       $$(category = 'books' AND price BETWEEN 0 AND 50)
         OR (category = 'music' AND qty = 1)$$),
  (15, '@category:{books} (@price:[0 50] | @qty:{1})',
       $$category = 'books' AND (price BETWEEN 0 AND 50 OR qty = 1)$$),
  (16, '-(@category:{books} | @category:{music}) -@tags:{t1}',
       $$(category IN ('books', 'music')) IS NOT TRUE
         AND (tags && '{t1}') IS NOT TRUE$$),
  (17, '*', $$true$$),
  (18, '@category:{$cat} @price:[$lo ($hi]',
       $$category = 'games' AND price >= 20 AND price < 60$$),
  (19, '@tags:{$tags}', $$tags && '{t2,u1}'$$),
  (20, '@price:[$ninf $pinf]', $$price IS NOT NULL$$);
SELECT f.n, f.filter,
  bool_and(pg_temp.ids('ftq_l2', '(' || f.filter || ')=>[KNN 10 @embedding $vec]',
                       qv.p || x.params)
    IS NOT DISTINCT FROM
    pg_temp.exact('SELECT id FROM (SELECT id FROM ftq_items WHERE embedding IS NOT NULL AND ('
                  || f.sqlwhere || ') ORDER BY embedding <-> $1, id LIMIT 10) k ORDER BY id',
                  qv.v)) AS knn,
  bool_and(pg_temp.ids('ftq_l2', f.filter, x.params)
    IS NOT DISTINCT FROM
    pg_temp.exact('SELECT id FROM ftq_items WHERE embedding IS NOT NULL AND ('
                  || f.sqlwhere || ') ORDER BY id LIMIT 10')) AS no_knn
FROM filters f, qv,
  (SELECT '{"cat": "games", "lo": 20, "hi": "60", "tags": ["t2", "u1"],
            "ninf": "-inf", "pinf": "+inf"}'::jsonb AS params) x
GROUP BY f.n, f.filter ORDER BY f.n;
-- without a KNN there is no distance
SELECT id, distance FROM ft.query('ftq_l2', '@qty:{3} @category:{books}')
LIMIT 3;

-- 3. LIMIT offset num, in the query or in params (also as $params)
SELECT
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec] LIMIT 3 4', p)
    = (pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec]', p))[4:7] AS knn_limit,
  pg_temp.ids('ftq_l2', '@category:{books} LIMIT 5 5')
    = pg_temp.exact($$SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                      AND category = 'books' ORDER BY id OFFSET 5 LIMIT 5$$)
    AS filter_limit,
  pg_temp.ids('ftq_l2', '@category:{books}', '{"LIMIT": [5, 5]}')
    = pg_temp.ids('ftq_l2', '@category:{books} LIMIT 5 5') AS params_limit,
  pg_temp.ids('ftq_l2', '@category:{books} LIMIT $o $n', '{"o": 5, "n": 5}')
    = pg_temp.ids('ftq_l2', '@category:{books} LIMIT 5 5') AS param_values,
  cardinality(pg_temp.ids('ftq_l2', '@category:{books} LIMIT 0 1000')) AS all_books,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec] LIMIT 0 0', p) AS limit_0
FROM qv WHERE qid = 1;

-- 4. RETURN: the named fields (AS renames), the distance under its name,
-- the vector; RETURN 0 returns no fields
SELECT id, fields FROM ft.query('ftq_l2',
  '*=>[KNN 3 @embedding $vec AS score] RETURN 5 title AS t price score',
  (SELECT p FROM qv WHERE qid = 1));
SELECT id, fields FROM ft.query('ftq_l2',
  '*=>[KNN 2 @embedding $vec] RETURN 2 @__embedding_score @qty',
  (SELECT p FROM qv WHERE qid = 1));
SELECT id, fields FROM ft.query('ftq_l2',
  '*=>[KNN 2 @embedding $vec] RETURN 0', (SELECT p FROM qv WHERE qid = 1));
SELECT id, fields FROM ft.query('ftq_l2',
  '*=>[KNN 2 @embedding $vec]',
  (SELECT p || '{"RETURN": ["category", "tags"]}' FROM qv WHERE qid = 1));
SELECT id, fields FROM ft.query('ftq_l2', '@qty:{3} LIMIT 0 2');
SELECT bool_and(fields -> 'embedding' = to_jsonb(i.embedding)) AS vectors
FROM ft.query('ftq_l2', '@qty:{3} RETURN 1 embedding') s
  JOIN ftq_items i ON i.id = s.id::bigint;

-- 5. SORTBY: with KNN it orders the k nearest; without, the docs that pass
SELECT
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec] SORTBY price DESC', p)
    = pg_temp.exact('SELECT id FROM (SELECT id, price, embedding <-> $1 AS d
                       FROM ftq_items WHERE embedding IS NOT NULL
                       ORDER BY embedding <-> $1, id LIMIT 10) t
                     ORDER BY price DESC NULLS LAST, id', v) AS knn_desc,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec] SORTBY @price', p)
    = pg_temp.exact('SELECT id FROM (SELECT id, price, embedding <-> $1 AS d
                       FROM ftq_items WHERE embedding IS NOT NULL
                       ORDER BY embedding <-> $1, id LIMIT 10) t
                     ORDER BY price NULLS LAST, id', v) AS knn_asc,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec AS s] SORTBY s DESC', p)
    = (SELECT array_agg(x ORDER BY o DESC) FROM unnest(
         pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec AS s] SORTBY s', p))
         WITH ORDINALITY u(x, o)) AS score_desc,
  pg_temp.ids('ftq_l2', '@category:{books} SORTBY rating DESC LIMIT 0 20')
    = pg_temp.exact($$SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                      AND category = 'books'
                      ORDER BY rating DESC NULLS LAST, id LIMIT 20$$)
    AS filter_desc,
  pg_temp.ids('ftq_l2', '-@qty:{1} SORTBY price LIMIT 0 50')
    = pg_temp.exact($$SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                      AND qty <> 1 ORDER BY price NULLS LAST, id LIMIT 50$$)
    AS filter_asc,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec]',
              p || '{"SORTBY": ["price", "DESC"]}')
    = pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec] SORTBY price DESC', p)
    AS params_sortby,
  pg_temp.ids('ftq_l2', '@qty:{2}', '{"SORTBY": "rating"}')
    = pg_temp.ids('ftq_l2', '@qty:{2} SORTBY rating ASC') AS params_sortby2
FROM qv WHERE qid = 2;

-- 6. VECTOR_RANGE: the docs within the radius (of the squared L2
-- distance, as RediSearch), by key as RediSearch orders them (the scan
-- reads nearest first and stops at the radius); with other filters;
-- inside an OR; named distance
CREATE TEMP TABLE rq AS
  SELECT v, p || jsonb_build_object('r',
           (SELECT (embedding <-> v) ^ 2 FROM ftq_items WHERE embedding IS NOT NULL
            ORDER BY l2_distance(embedding, v) OFFSET 14 LIMIT 1)) AS p
  FROM qv WHERE qid = 3;
SELECT
  pg_temp.ids('ftq_l2', '@embedding:[VECTOR_RANGE $r $vec] LIMIT 0 100', p)
    = pg_temp.exact('SELECT id FROM ftq_items WHERE (embedding <-> $1) ^ 2 <= '
                    || (p ->> 'r') || ' ORDER BY id', v)
    AS range,
  cardinality(pg_temp.ids('ftq_l2',
    '@embedding:[VECTOR_RANGE $r $vec] LIMIT 0 100', p)) AS n_range,
  cardinality(pg_temp.ids('ftq_l2', '@embedding:[VECTOR_RANGE $r $vec]', p))
    AS n_default_limit,
  pg_temp.ids('ftq_l2',
    '@category:{books | music} @embedding:[VECTOR_RANGE $r $vec] LIMIT 0 100', p)
    = pg_temp.exact($$SELECT id FROM ftq_items WHERE category IN ('books', 'music')
                      AND (embedding <-> $1) ^ 2 <= $$ || (p ->> 'r')
                    || ' ORDER BY id', v) AS range_and,
  pg_temp.ids('ftq_l2',
    '@embedding:[VECTOR_RANGE $r $vec] | @qty:{6} @price:[0 5] LIMIT 0 100', p)
    = pg_temp.exact($$SELECT id FROM ftq_items WHERE embedding IS NOT NULL
                      AND ((embedding <-> $1) ^ 2 <= $$ || (p ->> 'r')
                    || ' OR (qty = 6 AND price BETWEEN 0 AND 5)) ORDER BY id', v)
    AS range_or,
  pg_temp.ids('ftq_l2',
    '@embedding:[VECTOR_RANGE $r $vec]=>{$YIELD_DISTANCE_AS: dist} SORTBY dist DESC LIMIT 0 100', p)
    = pg_temp.exact('SELECT id FROM ftq_items WHERE (embedding <-> $1) ^ 2 <= '
                    || (p ->> 'r') || ' ORDER BY embedding <-> $1 DESC, id', v)
    AS sortby_dist,
  pg_temp.ids('ftq_l2',
    '@embedding:[VECTOR_RANGE $r $vec] SORTBY price LIMIT 0 100', p)
    = pg_temp.exact('SELECT id FROM ftq_items WHERE (embedding <-> $1) ^ 2 <= '
                    || (p ->> 'r') || ' ORDER BY price NULLS LAST, id', v)
    AS sortby_price,
  pg_temp.ids('ftq_l2',
    '(@embedding:[VECTOR_RANGE $r $vec] @qty:{1 | 2 | 3})=>[KNN 4 @embedding $vec]', p)
    = pg_temp.exact('SELECT id FROM (SELECT id FROM ftq_items WHERE (embedding <-> $1) ^ 2 <= '
                    || (p ->> 'r') || ' AND qty IN (1, 2, 3)
                    ORDER BY embedding <-> $1, id LIMIT 4) k ORDER BY id', v) AS range_knn,
  pg_temp.ids('ftq_l2', '@embedding:[VECTOR_RANGE 0 $vec]', p) AS radius_0
FROM rq;
SELECT id, fields FROM ft.query('ftq_l2',
  '@embedding:[VECTOR_RANGE $r $vec]=>{$YIELD_DISTANCE_AS: dist} RETURN 2 dist qty LIMIT 0 3',
  (SELECT p FROM rq));

-- 7. Vector parameters: base64 of little-endian float32 and a JSON array
-- give the same results (white space and URL-safe base64 are accepted)
SELECT pg_temp.b64('{1,2,3,4}') AS b64_of_1234;
SELECT qid,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec]', p)
    = pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec]',
                  jsonb_build_object('vec', pg_temp.b64(v))) AS knn,
  (SELECT array_agg(distance) FROM ft.query('ftq_l2',
     '*=>[KNN 10 @embedding $vec]', p))
    = (SELECT array_agg(distance) FROM ft.query('ftq_l2',
         '*=>[KNN 10 @embedding $vec]', jsonb_build_object('vec', pg_temp.b64(v))))
    AS distances,
  pg_temp.ids('ftq_l2', '@embedding:[VECTOR_RANGE 1.2 $vec]', p)
    = pg_temp.ids('ftq_l2', '@embedding:[VECTOR_RANGE 1.2 $vec]',
                  jsonb_build_object('vec', pg_temp.b64(v))) AS range,
  pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec]', p)
    = pg_temp.ids('ftq_l2', '*=>[KNN 10 @embedding $vec]',
                  jsonb_build_object('vec', regexp_replace(
                    translate(pg_temp.b64(v), '+/', '-_'), '(.{10})', E'\\1\n ', 'g')))
    AS spaced_urlsafe
FROM qv ORDER BY qid;

-- 8. ft.explain: the parsed query, the SQL with its parameters, the plan
SELECT line FROM ft.explain('ftq_l2',
  '(@category:{books} -@price:[(10 20])=>[KNN 5 @embedding $vec AS score] RETURN 2 title score',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8]}') WITH ORDINALITY AS e(line, n)
WHERE n < (SELECT n FROM ft.explain('ftq_l2',
  '(@category:{books} -@price:[(10 20])=>[KNN 5 @embedding $vec AS score] RETURN 2 title score',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8]}') WITH ORDINALITY AS e(line, n)
  WHERE line = 'Plan:');
SET enable_seqscan = off;
SELECT bool_or(line ~ 'Index Scan using ftq_l2 on ftq_items') AS index_scan,
       bool_or(line ~ 'Run Condition') AS stops
FROM ft.explain('ftq_l2', '@embedding:[VECTOR_RANGE 1 $vec] @qty:{1}',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8]}') AS line;
RESET enable_seqscan;

-- 9. Syntax errors: where, and what was expected
\set VERBOSITY terse
SELECT * FROM ft.query('ftq_l2', '');
SELECT * FROM ft.query('ftq_l2', 'hello');
SELECT * FROM ft.query('ftq_l2', '@');
SELECT * FROM ft.query('ftq_l2', '@price');
SELECT * FROM ft.query('ftq_l2', '@price:');
SELECT * FROM ft.query('ftq_l2', '@price:10');
SELECT * FROM ft.query('ftq_l2', '@price:[1');
SELECT * FROM ft.query('ftq_l2', '@price:[1 2');
SELECT * FROM ft.query('ftq_l2', '@price:[abc 2]');
SELECT * FROM ft.query('ftq_l2', '@price:[1 2x]');
SELECT * FROM ft.query('ftq_l2', '@category:{books');
SELECT * FROM ft.query('ftq_l2', '@category:{}');
SELECT * FROM ft.query('ftq_l2', '@category:{a | }');
SELECT * FROM ft.query('ftq_l2', '@category:{"books}');
SELECT * FROM ft.query('ftq_l2', '(@category:{books}');
SELECT * FROM ft.query('ftq_l2', '@category:{books})');
SELECT * FROM ft.query('ftq_l2', '@category:{books} |');
SELECT * FROM ft.query('ftq_l2', '*=>');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN x @embedding $vec]');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 embedding $vec]');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding vec]');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec FOO]');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $]');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]=>{$WEIGHT: 2}');
SELECT * FROM ft.query('ftq_l2', '@embedding:[VECTOR_RANGE $vec]');
SELECT * FROM ft.query('ftq_l2', '@category:{books} LIMIT');
SELECT * FROM ft.query('ftq_l2', '@category:{books} LIMIT 1');
SELECT * FROM ft.query('ftq_l2', '@category:{books} LIMIT 0 1 LIMIT 0 2');
SELECT * FROM ft.query('ftq_l2', '@category:{books} RETURN 2 title');
SELECT * FROM ft.query('ftq_l2', '@category:{books} RETURN x');
SELECT * FROM ft.query('ftq_l2', '@category:{books} SORTBY');
SELECT * FROM ft.query('ftq_l2', '@category:{books} DIALECT 1');
SELECT * FROM ft.query('ftq_l2', '@category:{books} PARAMS 2 vec x');
SELECT * FROM ft.query('ftq_l2', '@category:{books} INFIELDS 1 x');
SELECT * FROM ft.query('ftq_l2', '@category:{books} ;');
SELECT * FROM ft.query('ftq_l2', '@title:hello');
-- positions count characters, not bytes
SELECT * FROM ft.query('ftq_l2', '@category:{é} @prïce:[1 2 3]');
SELECT * FROM ft.query('ftq_l2', repeat('(', 100) || '*' || repeat(')', 100));
SELECT * FROM ft.query('ftq_l2', NULL);

-- 10. Unknown fields, wrong field types, bad parameters
SELECT * FROM ft.query('ftq_l2', '@nosuch:{x}');
SELECT * FROM ft.query('ftq_l2', '@category:{x} RETURN 1 nosuch');
SELECT * FROM ft.query('ftq_l2', '@category:{x} SORTBY nosuch');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @nosuch $vec]', '{"vec": [1]}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @price $vec]', '{"vec": [1]}');
SELECT * FROM ft.query('ftq_l2', '@title:[VECTOR_RANGE 1 $vec]', '{"vec": [1]}');
SELECT * FROM ft.query('ftq_l2', '@embedding:{x}');
SELECT * FROM ft.query('ftq_l2', '@category:[1 2]');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": [1, 2, 3]}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": 5}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": [1, "a"]}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": [1e300]}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": "not base64!"}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": "AACAPwAA"}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": ""}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": null}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN $k @embedding $vec]',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8], "k": -1}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN $k @embedding $vec]',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8], "k": {"a": 1}}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 3 @embedding $vec EF_RUNTIME 0]',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8]}');
SELECT * FROM ft.query('ftq_l2', '@price:[$lo 5]', '{"lo": "ten"}');
SELECT * FROM ft.query('ftq_l2', '@embedding:[VECTOR_RANGE $r $vec]',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8], "r": "far"}');
SELECT * FROM ft.query('ftq_l2', '@category:{x}', '[1, 2]');
SELECT * FROM ft.query('ftq_l2', '@category:{x} LIMIT 0 1', '{"LIMIT": [0, 2]}');
SELECT * FROM ft.query('ftq_l2', '@category:{x}', '{"LIMIT": 5}');
SELECT * FROM ft.query('ftq_l2', '@category:{x}', '{"SORTBY": ["price", "UP"]}');
SELECT * FROM ft.query('ftq_l2', '@category:{x}', '{"RETURN": "title"}');
SELECT * FROM ft.query('ftq_l2', '@category:{x}', '{"DIALECT": 3}');
\set VERBOSITY default
-- a parameter given as JSON null is not missing: the error says it is null
-- (SQLSTATE 22004) and what to give instead
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": null}');
SELECT * FROM ft.query('ftq_l2', '*=>[KNN $k @embedding $vec]',
  '{"vec": [1, 2, 3, 4, 5, 6, 7, 8], "k": null}');
SELECT * FROM ft.query('ftq_l2', '@category:{$c}', '{"c": null}');
\set VERBOSITY sqlstate
SELECT * FROM ft.query('ftq_l2', '*=>[KNN 10 @embedding $vec]', '{"vec": null}');
\set VERBOSITY default

-- 11. SQL in values and field names stays data: the value is matched
-- literally, an odd column is reached by escaping, a field name with SQL
-- in it is an unknown field, and the table is intact
INSERT INTO ftq_items (id, embedding, category, title) VALUES
  (1001, pg_temp.v(1001), $$x'); DROP TABLE ftq_items; --$$, 'a'),
  (1002, pg_temp.v(1002), $$"; DELETE FROM ftq_items; --$$, 'b'),
  (1003, pg_temp.v(1003), $$a | b$$, 'c');
SELECT id, fields ->> 'category' AS category FROM ft.query('ftq_l2',
  $$@category:{x'); DROP TABLE ftq_items; --}$$);
SELECT id, fields ->> 'category' AS category FROM ft.query('ftq_l2',
  $$@category:{"\"; DELETE FROM ftq_items; --"}$$);
SELECT id, fields ->> 'category' AS category FROM ft.query('ftq_l2',
  '@category:{$c}', jsonb_build_object('c', $$x'); DROP TABLE ftq_items; --$$));
SELECT id, fields ->> 'category' AS category FROM ft.query('ftq_l2',
  '@category:{a \| b}');
SELECT count(*) FROM ft.query('ftq_l2', $$@category:{books' OR '1'='1}$$);
SELECT count(*) FROM ft.query('ftq_l2', '@we\"ird\;\ col:{1} LIMIT 0 1000');
SELECT id, fields FROM ft.query('ftq_l2',
  '@we\"ird\;\ col:[1 1] RETURN 1 we\"ird\;\ col LIMIT 0 2');
\set VERBOSITY terse
SELECT * FROM ft.query('ftq_l2', '@category\;DROP\ TABLE\ ftq_items:{x}');
SELECT * FROM ft.query('ftq_l2', '@category:{x} RETURN 1 title\;DROP');
SELECT * FROM ft.query('ftq_l2', '@category:{x}; DROP TABLE ftq_items');
\set VERBOSITY default
SELECT count(*) AS rows FROM ftq_items;

DROP TABLE ftq_items;

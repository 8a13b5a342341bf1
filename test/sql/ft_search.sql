-- ft.search (FT.SEARCH of a KNN query): the k nearest docs that pass the
-- filter, compared with the equivalent plain SQL (exact: index scans off)
-- for each metric and every filter form; k; return_fields; ef_search;
-- what a transaction sees; errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;

-- deterministic, pairwise distinct 8-dim vectors
CREATE FUNCTION pg_temp.v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 8) j $$;

-- 600 rows: every 50th without a vector (not a doc), NULLs in category and
-- price, tags in a text[]
CREATE TABLE fts_items (id bigint PRIMARY KEY, embedding real[],
  category text, price numeric, rating float8, qty int, tags text[],
  title text);
INSERT INTO fts_items
  SELECT i,
         CASE WHEN i % 50 = 0 THEN NULL ELSE pg_temp.v(i) END,
         CASE WHEN i % 17 = 0 THEN NULL
              ELSE (ARRAY['books', 'music', 'games', 'films'])[1 + i % 4] END,
         CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 7) % 100 END,
         (i % 11) / 2.0, i % 7,
         ARRAY['t' || i % 5, 'u' || i % 3],
         'title ' || i
  FROM generate_series(1, 600) i;
SELECT count(DISTINCT embedding) = count(embedding) AS distinct_vectors
FROM fts_items;

SELECT ft.create('fts_l2', 'fts_items', 'id', 'embedding');
SELECT ft.create('fts_cos', 'fts_items', 'id', 'embedding', 'cosine');
SELECT ft.create('fts_ip', 'fts_items', 'id', 'embedding', 'ip');

-- check(index, operator, query, k, filter, where): ft.search against the
-- exact answer of plain SQL (WHERE where ORDER BY embedding op query LIMIT
-- k, index scans off): rows, same ids in the same order, same distances
CREATE FUNCTION pg_temp.check(idx regclass, op text, qv real[], k int,
  filter text, sqlwhere text,
  OUT nrows int, OUT same_ids boolean, OUT same_dist boolean)
LANGUAGE plpgsql AS $$
DECLARE
  a text[]; ad real[]; e text[]; ed real[];
BEGIN
  SELECT array_agg(s.id ORDER BY s.ord), array_agg(s.distance ORDER BY s.ord)
    INTO a, ad
    FROM ft.search(idx, qv, k, filter) WITH ORDINALITY
      AS s(id, distance, fields, ord);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE format(
    'SELECT array_agg(id::text ORDER BY d, id), array_agg(d::real ORDER BY d, id)
     FROM (SELECT id, embedding %s $1 AS d FROM fts_items
           WHERE embedding IS NOT NULL AND (%s)
           ORDER BY embedding %s $1, id LIMIT $2) s',
    op, coalesce(sqlwhere, 'true'), op) INTO e, ed USING qv, k;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  nrows := coalesce(cardinality(a), 0);
  same_ids := a IS NOT DISTINCT FROM e;
  same_dist := ad IS NOT DISTINCT FROM ed;
  IF NOT same_ids THEN
    RAISE NOTICE 'ft.search: %, exact: %', a, e;
  END IF;
END
$$;

-- 1. No filter, each metric, three query vectors
SELECT m.idx, q.qid, c.*
FROM (VALUES ('fts_l2'::regclass, '<->'), ('fts_cos', '<=>'),
             ('fts_ip', '<#>')) m(idx, op),
     generate_series(1, 3) q(qid),
     pg_temp.check(m.idx, m.op, pg_temp.v(100000 + q.qid), 10, NULL, NULL) c
ORDER BY 1, 2;

-- results are nearest first, distance equal to the operator's
SELECT bool_and(s.distance = (i.embedding <-> pg_temp.v(100001))::real)
         AS distance_is_operator,
       bool_and(s.id = i.id::text) AS ids_text
FROM ft.search('fts_l2', pg_temp.v(100001), 5) s
  JOIN fts_items i ON i.id = s.id::bigint;

-- 2. k: 0, 1, more than there are docs (the 588 rows with a vector)
SELECT count(*) FROM ft.search('fts_l2', pg_temp.v(100001), 0);
SELECT * FROM pg_temp.check('fts_l2', '<->', pg_temp.v(100001), 1, NULL, NULL);
SELECT * FROM pg_temp.check('fts_l2', '<->', pg_temp.v(100001), 1000, NULL, NULL);

-- 3. Every filter form against its SQL WHERE, for each metric and three
-- query vectors; k = 10 (fewer rows only when fewer qualify)
CREATE TEMP TABLE filters (n int, filter text, sqlwhere text);
INSERT INTO filters VALUES
  (1, '@category:{books}', $$category = 'books'$$),
  (2, '@category:{books | music}', $$category IN ('books', 'music')$$),
  (3, '@category:{  books|music  }', $$category IN ('books', 'music')$$),
  (4, '-@category:{books}', $$(category = 'books') IS NOT TRUE$$),
  (5, '@tags:{t1}', $$tags && '{t1}'$$),
  (6, '@tags:{t1 | u2}', $$tags && '{t1,u2}'$$),
  (7, '@qty:{3}', $$qty = 3$$),
  (8, '@price:[10 20]', $$price >= 10 AND price <= 20$$),
  (9, '@price:[(10 (20]', $$price > 10 AND price < 20$$),
  (10, '@price:[-inf 5]', $$price <= 5$$),
  (11, '@price:[90 +inf]', $$price >= 90$$),
  (12, '@price:[-inf +inf]', $$price IS NOT NULL$$),
  (13, '@price:[90, inf]', $$price >= 90$$),
  (14, '@rating:[1.5 (3]', $$rating >= 1.5 AND rating < 3$$),
  (15, '@rating:[-1e1 1E0]', $$rating >= -10 AND rating <= 1$$),
  (16, '-@price:[10 90]', $$(price >= 10 AND price <= 90) IS NOT TRUE$$),
  (17, '@category:{books} @price:[0 50]',
       $$category = 'books' AND price >= 0 AND price <= 50$$),
  (18, '@category:{books} | @price:[0 10]',
       $$category = 'books' OR (price >= 0 AND price <= 10)$$),
  (19, '@category:{books} @price:[0 50] | @category:{music} @qty:{1}',
       $$(category = 'books' AND price BETWEEN 0 AND 50)
         OR (category = 'music' AND qty = 1)$$),
  (20, '@category:{books} (@price:[0 50] | @qty:{1})',
       $$category = 'books' AND (price BETWEEN 0 AND 50 OR qty = 1)$$),
  (21, '-(@category:{books} | @category:{music})',
       $$(category IN ('books', 'music')) IS NOT TRUE$$),
  (22, '-@category:{books} -@tags:{t1}',
       $$(category = 'books') IS NOT TRUE AND (tags && '{t1}') IS NOT TRUE$$),
  (23, '*', $$true$$),
  (24, '* @category:{games}', $$category = 'games'$$),
  (25, '(((@qty:{2})))', $$qty = 2$$),
  (26, '@category:{nosuch}', $$false$$),
  (27, '@price:[50 10]', $$false$$),
  (28, '@title:{title 7}', $$title = 'title 7'$$),
  (29, '@title:{title\ 70 | "title 71" | title\|72}',
       $$title IN ('title 70', 'title 71', 'title|72')$$),
  (30, '--@category:{books}', $$category = 'books'$$),
  (31, '@id:{5 | 7 | 9}', $$id IN (5, 7, 9)$$),
  (32, '@price:[+inf +inf]', $$false$$),
  (33, '  ', $$true$$);
SELECT f.n, f.filter, sum(c.nrows) AS rows, bool_and(c.same_ids) AS same_ids,
       bool_and(c.same_dist) AS same_dist
FROM filters f,
     (VALUES ('fts_l2'::regclass, '<->'), ('fts_cos', '<=>'),
             ('fts_ip', '<#>')) m(idx, op),
     generate_series(1, 3) q(qid),
     pg_temp.check(m.idx, m.op, pg_temp.v(100000 + q.qid), 10, f.filter,
                   f.sqlwhere) c
GROUP BY f.n, f.filter ORDER BY f.n;

-- a filter that leaves fewer than k docs returns all of them
SELECT * FROM pg_temp.check('fts_l2', '<->', pg_temp.v(100002), 10,
  '@qty:{3} @category:{books} @price:[0 30]',
  $$qty = 3 AND category = 'books' AND price BETWEEN 0 AND 30$$);

-- 4. return_fields: NULL is every column but the vector, '{}' none
SELECT id, fields FROM ft.search('fts_l2', pg_temp.v(100001), 2);
SELECT id, fields FROM ft.search('fts_l2', pg_temp.v(100001), 2,
  return_fields => '{}');
SELECT id, fields FROM ft.search('fts_l2', pg_temp.v(100001), 2,
  return_fields => '{price,title,title}');
SELECT s.id, s.fields -> 'embedding' = to_jsonb(i.embedding) AS same_vector
FROM ft.search('fts_l2', pg_temp.v(100001), 2,
  return_fields => '{embedding}') s JOIN fts_items i ON i.id = s.id::bigint;

-- 5. ef_search: applies to this call only
SET segvec.ef_search = 25;
SELECT * FROM pg_temp.check('fts_l2', '<->', pg_temp.v(100003), 10, NULL, NULL);
SELECT count(*) FROM ft.search('fts_l2', pg_temp.v(100003), 10,
  ef_search => 300);
SHOW segvec.ef_search;
RESET segvec.ef_search;

-- 6. After compaction (graph segments): with a large ef_search the answer
-- is still the exact one (ORDER BY l2_distance(): no index); then inserts
-- land in the mutable segment
SELECT docs_compacted > 0 AS compacted FROM ft.compact('fts_l2');
SELECT count(*) AS rows,
       bool_and(s.id::bigint IN (SELECT id FROM fts_items
                                 ORDER BY l2_distance(embedding,
                                                      pg_temp.v(100001))
                                 LIMIT 10)) AS top10
FROM ft.search('fts_l2', pg_temp.v(100001), 10, ef_search => 400) s;
INSERT INTO fts_items (id, embedding, category)
  VALUES (1001, pg_temp.v(100001), 'books');
SELECT id, distance FROM ft.search('fts_l2', pg_temp.v(100001), 1);

-- 7. A transaction sees its own writes, and not after a rollback
BEGIN;
INSERT INTO fts_items (id, embedding, category)
  VALUES (1002, pg_temp.v(100002), 'music');
DELETE FROM fts_items WHERE id = 1001;
SELECT id, distance FROM ft.search('fts_l2', pg_temp.v(100002), 1);
SELECT count(*) FROM ft.search('fts_l2', pg_temp.v(100001), 600)
  WHERE id = '1001';
ROLLBACK;
SELECT id, distance FROM ft.search('fts_l2', pg_temp.v(100002), 1);
SELECT count(*) FROM ft.search('fts_l2', pg_temp.v(100001), 600)
  WHERE id = '1001';
DELETE FROM fts_items WHERE id = 1001;

-- 8. Errors
\set VERBOSITY terse
SELECT * FROM ft.search('fts_l2', '{1,2,3}', 10);
SELECT * FROM ft.search('fts_l2', '{1,2,3,4,5,6,7,NaN}', 10);
SELECT * FROM ft.search('fts_l2', NULL, 10);
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), -1);
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), NULL);
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, ef_search => 0);
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, ef_search => 5000);
SELECT * FROM ft.search('fts_items_pkey', pg_temp.v(1), 10);
SELECT * FROM ft.search('fts_items', pg_temp.v(1), 10);
CREATE INDEX fts_noid ON fts_items USING segvec (embedding);
SELECT * FROM ft.search('fts_noid', pg_temp.v(1), 10);
DROP INDEX fts_noid;
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, '@nosuch:{x}');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, '@category:{x} @price:[1');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, '@category:{$cat}');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10,
  '*=>[KNN 10 @embedding $v]');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, '@category:{a} LIMIT 0 1');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, '@embedding:{x}');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, '@title:[1 2]');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, NULL, '{nosuch}');
SELECT * FROM ft.search('fts_l2', pg_temp.v(1), 10, NULL, '{title,NULL}');
SHOW segvec.ef_search;
\set VERBOSITY default

DROP TABLE fts_items;

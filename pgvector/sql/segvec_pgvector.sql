-- segvec_pgvector: segvec indexes on pgvector's vector and halfvec columns,
-- with pgvector's own operators.  Needs pgvector (test/run-tests.sh runs
-- this suite only when it is installed).
SET client_min_messages = warning;
CREATE EXTENSION segvec_pgvector CASCADE;
RESET client_min_messages;
SELECT e.extname, array_agg(r.extname ORDER BY r.extname) AS requires
FROM pg_extension e
     JOIN pg_depend d ON d.objid = e.oid AND d.classid = 'pg_extension'::regclass
     JOIN pg_extension r ON r.oid = d.refobjid
WHERE e.extname = 'segvec_pgvector'
GROUP BY e.extname;

-- every segvec operator class of a vector family, segvec's own
-- (anyelement) and the companion's, and amvalidate's verdict (the filter
-- column classes, on int4, text and the like, are segvec's own suites')
SELECT c.opcname, c.opcintype::regtype, c.opcdefault, f.opfname AS family,
       amvalidate(c.oid) AS valid
FROM pg_opclass c JOIN pg_opfamily f ON f.oid = c.opcfamily
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'segvec')
  AND f.opfname IN ('vector_l2_ops', 'vector_cosine_ops', 'vector_ip_ops')
ORDER BY f.opfname, c.opcname;

-- 400 rows of 8 dimensions, as vector, halfvec and real[] (rh holds the
-- halfvec's values widened, so it indexes the very same floats)
CREATE FUNCTION pv_vec(i int) RETURNS real[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_agg((sin(i * 0.37 + j * 1.1) + cos(i * 0.011 * j))::real
                   ORDER BY j)
  FROM generate_series(1, 8) j $$;
CREATE TABLE pv (id int PRIMARY KEY, v vector(8), h halfvec(8), r real[],
                 rh real[]);
INSERT INTO pv
  SELECT i, pv_vec(i)::vector, pv_vec(i)::halfvec, pv_vec(i),
         pv_vec(i)::halfvec::real[]
  FROM generate_series(1, 400) i;
-- two rows without a vector
INSERT INTO pv VALUES (401, NULL, NULL, NULL, NULL), (402, NULL, NULL, NULL, NULL);

-- the spelling pgvector users know; compact_threshold = 64 makes the
-- build write graph segments as well as the mutable segment
CREATE INDEX pv_v_l2 ON pv USING segvec (v vector_l2_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_v_cos ON pv USING segvec (v vector_cosine_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_v_ip ON pv USING segvec (v vector_ip_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_h_l2 ON pv USING segvec (h halfvec_l2_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_h_cos ON pv USING segvec (h halfvec_cosine_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_h_ip ON pv USING segvec (h halfvec_ip_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_r_l2 ON pv USING segvec (r vector_l2_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_r_cos ON pv USING segvec (r vector_cosine_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_r_ip ON pv USING segvec (r vector_ip_ops) INCLUDE (id)
  WITH (compact_threshold = 64);
CREATE INDEX pv_rh_l2 ON pv USING segvec (rh) INCLUDE (id)
  WITH (compact_threshold = 64);
SELECT indexrelid::regclass AS index, pg_get_indexdef(indexrelid)
FROM pg_index WHERE indrelid = 'pv'::regclass AND indexrelid::regclass::text LIKE 'pv\_%'
ORDER BY 1::text;
SELECT i.name, f.num_segments AS segments, f.mutable_docs, f.num_docs,
       f.dimensions, f.metric
FROM unnest(ARRAY['pv_v_l2', 'pv_v_cos', 'pv_v_ip', 'pv_h_l2', 'pv_h_cos',
                  'pv_h_ip', 'pv_r_l2']) i(name),
     ft.info(i.name::regclass) f;

-- the plans: pgvector's operators on the vector and halfvec columns
EXPLAIN (COSTS OFF) SELECT id FROM pv ORDER BY v <-> pv_vec(1000)::vector LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM pv ORDER BY v <=> pv_vec(1000)::vector LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM pv ORDER BY v <#> pv_vec(1000)::vector LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM pv ORDER BY h <-> pv_vec(1000)::halfvec LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM pv ORDER BY h <=> pv_vec(1000)::halfvec LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM pv ORDER BY h <#> pv_vec(1000)::halfvec LIMIT 10;

-- the ids of a top-10 query, through the index (use_index) or exactly
CREATE FUNCTION pv_knn(col text, op text, q int, use_index boolean)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  typ text := CASE col WHEN 'v' THEN 'vector' WHEN 'h' THEN 'halfvec'
                       WHEN 'rh' THEN 'halfvec' ELSE 'real[]' END;
  qv text := CASE col WHEN 'rh' THEN 'pv_vec(%s)::halfvec::real[]'
                      ELSE 'pv_vec(%s)::' || typ END;
  ids text;
BEGIN
  PERFORM set_config('enable_indexscan', use_index::text, true);
  PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE format('SELECT string_agg(id::text, '','' ORDER BY rn) FROM (
      SELECT id, row_number() OVER () AS rn FROM (
        SELECT id FROM pv WHERE %I IS NOT NULL
        ORDER BY %I %s ' || qv || ' LIMIT 10) s) t', col, col, op, q)
    INTO ids;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  RETURN ids;
END $$;

-- vector: index = exact = the same data in real[] through segvec, for
-- each metric, over 20 query vectors
SELECT op,
       bool_and(pv_knn('v', op, q, true) = pv_knn('v', op, q, false)) AS index_is_exact,
       bool_and(pv_knn('v', op, q, true) = pv_knn('r', op, q, true)) AS same_as_real,
       count(*) AS queries
FROM unnest(ARRAY['<->', '<=>', '<#>']) op, generate_series(1001, 1020) q
GROUP BY op ORDER BY op;
-- halfvec: the same, against the widened values in real[]
SELECT op,
       bool_and(pv_knn('h', op, q, true) = pv_knn('h', op, q, false)) AS index_is_exact,
       count(*) AS queries
FROM unnest(ARRAY['<->', '<=>', '<#>']) op, generate_series(1001, 1020) q
GROUP BY op ORDER BY op;
SELECT bool_and(pv_knn('h', '<->', q, true) = pv_knn('rh', '<->', q, true)) AS same_as_real
FROM generate_series(1001, 1020) q;
SELECT pv_knn('v', '<->', 1001, true) AS vector_top10,
       pv_knn('h', '<->', 1001, true) AS halfvec_top10;

-- the distances the query shows are pgvector's; each row's own vector
-- finds it first
SELECT id, round((v <-> pv_vec(7)::vector)::numeric, 6) AS dist
FROM pv ORDER BY v <-> pv_vec(7)::vector LIMIT 3;
SELECT id, round((h <=> pv_vec(7)::halfvec)::numeric, 3) AS dist
FROM pv ORDER BY h <=> pv_vec(7)::halfvec LIMIT 3;

-- rows inserted after the build, then a compaction
INSERT INTO pv SELECT i, pv_vec(i)::vector, pv_vec(i)::halfvec, pv_vec(i),
                      pv_vec(i)::halfvec::real[]
  FROM generate_series(403, 500) i;
SELECT bool_and(pv_knn('v', '<->', q, true) = pv_knn('v', '<->', q, false)) AS after_insert
FROM generate_series(1001, 1010) q;
SELECT ft.compact('pv_v_l2') IS NOT NULL AS compacted;
SELECT mutable_docs, num_docs FROM ft.info('pv_v_l2');
SELECT bool_and(pv_knn('v', '<->', q, true) = pv_knn('v', '<->', q, false)) AS after_compact
FROM generate_series(1001, 1010) q;

-- ft.list: one row per index, with its metric (the companion adds an
-- ordering operator per type to each family)
SELECT index, metric, count(*) OVER (PARTITION BY index) AS rows_per_index
FROM ft.list() WHERE tbl = 'pv'::regclass ORDER BY index::text;

-- NULL vectors are not indexed, a NULL query vector returns the rows in
-- index order, as on real[]
SELECT count(*) FROM pv WHERE v IS NULL;
SET enable_seqscan = off;
SELECT count(*) FROM (SELECT id FROM pv ORDER BY v <-> NULL::vector LIMIT 1000) s;
SELECT count(*) FROM (SELECT id FROM pv ORDER BY r <-> NULL::real[] LIMIT 1000) s;
RESET enable_seqscan;

-- wrong dimensions: a query vector, and a row of an unconstrained vector
-- column (a vector(8) column's own type check comes first)
\set VERBOSITY terse
SELECT id FROM pv ORDER BY v <-> '[1,2,3]' LIMIT 1;
SELECT id FROM pv ORDER BY h <-> '[1,2,3]' LIMIT 1;
INSERT INTO pv (id, v) VALUES (900, '[1,2,3]');
CREATE TABLE pv_free (id int, v vector, h halfvec);
INSERT INTO pv_free VALUES (1, '[1,2,3]', '[1,2,3]');
CREATE INDEX pv_free_idx ON pv_free USING segvec (v) INCLUDE (id);
CREATE INDEX pv_free_h_idx ON pv_free USING segvec (h) INCLUDE (id);
INSERT INTO pv_free VALUES (2, '[1,2]', NULL);
INSERT INTO pv_free VALUES (3, NULL, '[1,2,3,4]');
SET enable_seqscan = off;
SELECT id FROM pv_free ORDER BY v <-> '[1,2,3,4]' LIMIT 1;
SELECT id FROM pv_free ORDER BY h <-> '[1,2]' LIMIT 1;
SELECT id FROM pv_free ORDER BY v <-> '[1,2,3]' LIMIT 1;
RESET enable_seqscan;
\set VERBOSITY default
-- the default operator class for vector and for halfvec
SELECT i.indexrelid::regclass, c.opcname
FROM pg_opclass c JOIN pg_index i ON i.indclass[0] = c.oid
WHERE i.indrelid = 'pv_free'::regclass ORDER BY 1::text;

-- the ft API on a vector index: ft.search, ft.query (query vectors are
-- real[] or JSON, cast to the column's type), ft.get, ft.info, ft.verify
SELECT id, round(distance::numeric, 4) AS distance
FROM ft.search('pv_v_l2', pv_vec(1001), 5);
SELECT string_agg(id, ',') = pv_knn('v', '<->', 1001, false) AS search_is_exact
FROM ft.search('pv_v_l2', pv_vec(1001), 10);
SELECT string_agg(id, ',') = pv_knn('h', '<=>', 1001, false) AS search_is_exact
FROM ft.search('pv_h_cos', pv_vec(1001), 10);
SELECT id FROM ft.query('pv_v_ip', '*=>[KNN 3 @v $q]',
  jsonb_build_object('q', to_jsonb(pv_vec(1001))));
SELECT id, vector = pv_vec(5) AS same_vector FROM ft.get('pv_v_l2', '5');
SELECT id, vector = pv_vec(5)::halfvec::real[] AS same_vector FROM ft.get('pv_h_l2', '5');
SELECT num_docs, dimensions, metric FROM ft.info('pv_h_cos');
SELECT heap_rows, indexed_docs, missing_docs, phantom_entries,
       checksum_mismatches, search_checked, search_misses
FROM ft.verify('pv_v_l2');
SELECT heap_rows, indexed_docs, missing_docs, phantom_entries,
       checksum_mismatches, search_checked, search_misses
FROM ft.verify('pv_h_ip');
-- ft.similar orders a vector or halfvec column by pgvector's operator, so
-- the index answers it rather than a sort of the table cast to real[]
SET enable_seqscan = off;
BEGIN;
SELECT count(*) FROM ft.similar('pv_v_l2', '5', 3);
SELECT count(*) FROM ft.similar('pv_h_cos', '5', 3);
SELECT pg_stat_get_xact_numscans('pv_v_l2'::regclass) > 0 AS vector_index_used,
       pg_stat_get_xact_numscans('pv_h_cos'::regclass) > 0 AS halfvec_index_used;
COMMIT;
RESET enable_seqscan;
-- and it returns the exact neighbours of row 5, without row 5
CREATE FUNCTION pv_similar_is_exact(idx regclass, col text, op text)
RETURNS boolean LANGUAGE sql AS $$
  SELECT (SELECT string_agg(id, ',') FROM ft.similar(idx, '5', 3)) =
         (SELECT string_agg(x, ',' ORDER BY n) FROM (
            SELECT x, n FROM unnest(string_to_array(pv_knn(col, op, 5, false), ','))
              WITH ORDINALITY u(x, n) WHERE x <> '5' ORDER BY n LIMIT 3) s) $$;
SELECT pv_similar_is_exact('pv_v_l2', 'v', '<->') AS vector_exact,
       pv_similar_is_exact('pv_h_cos', 'h', '<=>') AS halfvec_exact;
DROP FUNCTION pv_similar_is_exact(regclass, text, text);

-- merge-insert into a vector column: ft.add / ft.del / ft.flush and
-- ft.merge from a real[] source (assignment casts to vector)
CREATE TABLE pv_m (id int PRIMARY KEY, embedding vector(3), title text);
CREATE INDEX pv_m_idx ON pv_m USING segvec (embedding vector_l2_ops) INCLUDE (id);
SELECT ft.add('pv_m_idx', '1', '{1,2,3}', '{"title": "a"}');
SELECT ft.add('pv_m_idx', '2', '{2,2,2}', '{"title": "b"}');
SELECT id, distance FROM ft.search('pv_m_idx', '{1,2,3}', 2);
SELECT ft.flush('pv_m_idx') IS NOT NULL AS flushed;
SELECT * FROM pv_m ORDER BY id;
CREATE TABLE pv_src (id int, embedding real[], title text);
INSERT INTO pv_src VALUES (1, '{1,2,4}', 'c'), (3, '{3,3,3}', 'd');
SELECT * FROM ft.merge('pv_m_idx', 'pv_src');
SELECT ft.del('pv_m_idx', '2');
SELECT ft.flush('pv_m_idx') IS NOT NULL AS flushed;
SELECT * FROM pv_m ORDER BY id;
SET enable_seqscan = off;
SELECT id FROM pv_m ORDER BY embedding <-> '[3,3,3]' LIMIT 1;
RESET enable_seqscan;
-- ft.create takes real[] columns only
\set VERBOSITY terse
SELECT ft.create('pv_m_ft', 'pv_m', 'id', 'embedding');
\set VERBOSITY default
DROP TABLE pv_m, pv_src;

-- the companion cannot be dropped while an index reads through it; with
-- CASCADE its indexes go, the real[] ones stay, and it can come back
\set VERBOSITY terse
DROP EXTENSION segvec_pgvector;
\set VERBOSITY default
SET client_min_messages = warning;
DROP EXTENSION segvec_pgvector CASCADE;
RESET client_min_messages;
SELECT string_agg(indexrelid::regclass::text, ' ' ORDER BY indexrelid::regclass::text)
FROM pg_index WHERE indrelid = 'pv'::regclass;
\set VERBOSITY terse
CREATE INDEX ON pv USING segvec (v vector_l2_ops);
\set VERBOSITY default
CREATE EXTENSION segvec_pgvector;
CREATE INDEX pv_v_again ON pv USING segvec (v vector_l2_ops) INCLUDE (id);
SELECT bool_and(pv_knn('v', '<->', q, true) = pv_knn('v', '<->', q, false)) AS recreated
FROM generate_series(1001, 1005) q;

-- names both extensions define: untyped literals are ambiguous, and the
-- hint says how to choose; typed, each extension answers
SELECT l2_distance('{1,2}', '{3,4}');
SELECT cosine_distance('{1,2}', '{3,4}');
SELECT '{1,2}' <-> '{3,4}';
SELECT l2_distance('{1,2}'::real[], '{3,4}') AS segvec,
       l2_distance('[1,2]'::vector, '[3,4]') AS pgvector,
       '{1,2}'::real[] <-> '{3,4}' AS segvec_op,
       '[1,2]'::vector <-> '[3,4]' AS pgvector_op;

-- the README's example ("Indexing pgvector's columns")
CREATE TABLE docs (id bigint PRIMARY KEY, embedding vector(3));
INSERT INTO docs VALUES (1, '[1,2,3]'), (2, '[4,5,6]'), (3, '[1,1,1]');
CREATE INDEX ON docs USING segvec (embedding vector_l2_ops) INCLUDE (id);
SET enable_seqscan = off;
SELECT id FROM docs ORDER BY embedding <-> '[1,2,2]' LIMIT 2;
RESET enable_seqscan;
DROP TABLE docs;

DROP TABLE pv, pv_free;
DROP FUNCTION pv_knn(text, text, int, boolean);
DROP FUNCTION pv_vec(int);
DROP EXTENSION segvec_pgvector;

-- ft.compact: results before and after compaction, inserts, deletes and
-- VACUUM after it, REINDEX, filtered search, tiered merges, no-op
-- compactions (B16) and errors.
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_sql :abs_srcdir '/sql/include/plan.sql'
\i :plan_sql
-- a schema of its own, so no other suite's tables or functions collide
CREATE SCHEMA segvec_compact;
SET search_path = segvec_compact, public;
-- merges by tiers (segvec.merge_ratio = 0), whose steps the tiered
-- merging below checks; the default ratio policy is test/t/085_merge_ratio.pl
SET segvec.merge_ratio = 0;
\set VERBOSITY terse

-- deterministic, pairwise distinct 8-dim vectors
CREATE FUNCTION cvec(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg((sin(i * 0.7 + j * 0.31) + cos(i * 0.013 * j))::real
                   ORDER BY j)
  FROM generate_series(1, 8) j $$;

CREATE TABLE docs (id int PRIMARY KEY, embedding real[], category int)
  WITH (autovacuum_enabled = off);
INSERT INTO docs SELECT i, cvec(i), i % 50 FROM generate_series(1, 3000) i;
SELECT count(DISTINCT embedding) = count(*) AS distinct_vectors FROM docs;

-- 3,000 docs are below segvec.compact_threshold: the build leaves them in
-- the mutable segment, searched exactly
CREATE INDEX docs_l2 ON docs USING segvec (embedding);
CREATE INDEX docs_cos ON docs USING segvec (embedding vector_cosine_ops);
CREATE INDEX docs_ip ON docs USING segvec (embedding vector_ip_ops);

-- five query vectors: four new ones and one equal to row 17
CREATE TABLE qs (qid int PRIMARY KEY, v real[]);
INSERT INTO qs SELECT g, cvec(100000 + g) FROM generate_series(1, 4) g;
INSERT INTO qs VALUES (5, cvec(17));

-- top-10 ids of every query for each metric; and a filtered top-10
CREATE VIEW top10 AS
  SELECT 'l2' AS op, qid,
         ARRAY(SELECT id FROM docs ORDER BY embedding <-> qs.v LIMIT 10) AS ids
  FROM qs
  UNION ALL
  SELECT 'cos', qid,
         ARRAY(SELECT id FROM docs ORDER BY embedding <=> qs.v LIMIT 10)
  FROM qs
  UNION ALL
  SELECT 'ip', qid,
         ARRAY(SELECT id FROM docs ORDER BY embedding <#> qs.v LIMIT 10)
  FROM qs;
CREATE VIEW filtered10 AS
  SELECT 'l2' AS op, qid,
         ARRAY(SELECT id FROM docs WHERE category = 3
               ORDER BY embedding <-> qs.v LIMIT 10) AS ids
  FROM qs
  UNION ALL
  SELECT 'cos', qid,
         ARRAY(SELECT id FROM docs WHERE category = 3
               ORDER BY embedding <=> qs.v LIMIT 10)
  FROM qs
  UNION ALL
  SELECT 'ip', qid,
         ARRAY(SELECT id FROM docs WHERE category = 3
               ORDER BY embedding <#> qs.v LIMIT 10)
  FROM qs;
-- the same queries without any index: the exact answers
CREATE FUNCTION exact_top10() RETURNS TABLE (op text, qid int, ids int[])
  LANGUAGE sql STABLE
  SET enable_indexscan = off SET enable_bitmapscan = off
  SET enable_seqscan = on
  AS $$ SELECT * FROM top10 $$;
CREATE FUNCTION exact_filtered10() RETURNS TABLE (op text, qid int, ids int[])
  LANGUAGE sql STABLE
  SET enable_indexscan = off SET enable_bitmapscan = off
  SET enable_seqscan = on
  AS $$ SELECT * FROM filtered10 $$;

-- every query below goes through the segvec indexes (and without JIT,
-- which the huge cost of a disabled seqscan would switch on)
SET enable_seqscan = off;
SET jit = off;
SET segvec.ef_search = 400;
SELECT * FROM pg_temp.plan($$SELECT * FROM top10$$);
SELECT * FROM pg_temp.plan($$SELECT * FROM filtered10 WHERE op = 'l2'$$);

-- per metric: all five top-10s have 10 rows and equal the exact answer
SELECT t.op, min(cardinality(t.ids)) AS min_rows,
       bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;
-- row 17 is its own nearest neighbour (L2 and cosine)
SELECT op, ids[1] FROM top10 WHERE qid = 5 AND op <> 'ip' ORDER BY op;
CREATE TABLE before_compact AS SELECT * FROM top10;

-- compaction moves the 3,000 docs of each index into one graph segment
SELECT * FROM ft.compact('docs_l2');
SELECT * FROM ft.compact('docs_cos');
SELECT * FROM ft.compact('docs_ip');
-- twice in a row: nothing left to do
SELECT * FROM ft.compact('docs_l2');

-- the same answers from the graph segments
SELECT t.op, min(cardinality(t.ids)) AS min_rows,
       bool_and(t.ids = b.ids) AS same_as_before,
       bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN before_compact b USING (op, qid)
  JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;

-- a full scan of each index returns every doc once
SELECT (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <-> cvec(1) LIMIT 100000) s) AS l2,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <=> cvec(1) LIMIT 100000) s) AS cos,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <#> cvec(1) LIMIT 100000) s) AS ip;

-- filtered search: category = 3 holds 60 docs; 10 rows, the exact ones
SELECT f.op, min(cardinality(f.ids)) AS min_rows,
       bool_and(f.ids = e.ids) AS all_exact
FROM filtered10 f JOIN exact_filtered10() e USING (op, qid)
GROUP BY f.op ORDER BY f.op;
-- a filter only 8 docs pass (3, 53, ..., 353): all 8, nearest first
SELECT ARRAY(SELECT id FROM docs WHERE category = 3 AND id <= 400
             ORDER BY embedding <-> cvec(103) LIMIT 10) =
       ARRAY(SELECT id FROM docs WHERE category = 3 AND id <= 400
             ORDER BY l2_distance(embedding, cvec(103)) LIMIT 10)
       AS exact,
       cardinality(ARRAY(SELECT id FROM docs WHERE category = 3 AND id <= 400
             ORDER BY embedding <-> cvec(103) LIMIT 10)) AS nrows;
-- at the default ef_search the filtered top-10 still has 10 rows
RESET segvec.ef_search;
SELECT f.op, min(cardinality(f.ids)) AS min_rows
FROM filtered10 f GROUP BY f.op ORDER BY f.op;
SET segvec.ef_search = 400;

-- docs inserted after compaction are found: 300 ordinary ones, and one
-- next to each of the four new query vectors, which becomes its nearest
INSERT INTO docs SELECT i, cvec(i), i % 50 FROM generate_series(3001, 3300) i;
INSERT INTO docs
  SELECT 5000 + qid, ARRAY(SELECT x + 0.001 FROM unnest(v) x)::real[], 3
  FROM qs WHERE qid <= 4;
SELECT op, qid, ids[1] AS nearest FROM top10
WHERE qid <= 4 AND op <> 'ip' ORDER BY op, qid;
SELECT t.op, min(cardinality(t.ids)) AS min_rows,
       bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;
SELECT f.op, bool_and(f.ids = e.ids) AS filtered_exact
FROM filtered10 f JOIN exact_filtered10() e USING (op, qid)
GROUP BY f.op ORDER BY f.op;
-- every new doc is its own nearest neighbour (self-searches at the
-- default ef_search, which is plenty for them, to keep the suite fast)
RESET segvec.ef_search;
SELECT count(*) AS not_own_nearest FROM docs a
WHERE a.id > 3000 AND
      (SELECT b.id FROM docs b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id;
SET segvec.ef_search = 400;

-- compact the new docs (L2 index), twice in a row
SELECT * FROM ft.compact('docs_l2');
SELECT * FROM ft.compact('docs_l2');
SELECT t.op, bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;
RESET segvec.ef_search;
SELECT count(*) AS not_own_nearest FROM docs a
WHERE (SELECT b.id FROM docs b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id;
SET segvec.ef_search = 400;

-- DELETE after compaction: every 7th doc (471), the four new nearest
-- neighbours 5001..5004 and row 17, the nearest to query 5
CREATE TABLE gone AS
  SELECT id FROM docs WHERE id % 7 = 0 OR id IN (17, 5001, 5002, 5003, 5004);
SELECT count(*) AS deleted FROM gone;
DELETE FROM docs WHERE id IN (SELECT id FROM gone);
SELECT count(*) AS live FROM docs;
-- before VACUUM
SELECT t.op, min(cardinality(t.ids)) AS min_rows,
       bool_and(t.ids = e.ids) AS all_exact,
       bool_and(NOT t.ids && ARRAY(SELECT id FROM gone)) AS none_deleted
FROM top10 t JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;
VACUUM docs;
-- after VACUUM: a full scan of each index returns exactly the live rows
SELECT (SELECT count(*) FROM docs) AS live,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <-> cvec(1) LIMIT 100000) s) AS l2,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <=> cvec(1) LIMIT 100000) s) AS cos,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <#> cvec(1) LIMIT 100000) s) AS ip;
SELECT count(*) AS deleted_returned FROM (SELECT id FROM docs
  ORDER BY embedding <-> cvec(1) LIMIT 100000) s
WHERE id IN (SELECT id FROM gone);
SELECT t.op, min(cardinality(t.ids)) AS min_rows,
       bool_and(t.ids = e.ids) AS all_exact,
       bool_and(NOT t.ids && ARRAY(SELECT id FROM gone)) AS none_deleted
FROM top10 t JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;
SELECT f.op, min(cardinality(f.ids)) AS min_rows,
       bool_and(f.ids = e.ids) AS filtered_exact
FROM filtered10 f JOIN exact_filtered10() e USING (op, qid)
GROUP BY f.op ORDER BY f.op;
-- compaction after VACUUM: the cosine and ip indexes still hold the 304
-- later docs in their mutable segments, minus the 47 deleted ones (43
-- multiples of 7 and 5001..5004)
SELECT * FROM ft.compact('docs_cos');
SELECT * FROM ft.compact('docs_ip');
SELECT t.op, bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;

-- tiered merging (tier = floor(log4(live docs))): the L2 index holds a
-- segment with 2,571 live docs (tier 5) and one with 257 (tier 4); four
-- compactions of 100 docs each (tier 3) leave four segments in tier 3,
-- which the fourth compaction merges into one
INSERT INTO docs SELECT i, cvec(i), i % 50 FROM generate_series(6001, 6100) i;
SELECT * FROM ft.compact('docs_l2');
INSERT INTO docs SELECT i, cvec(i), i % 50 FROM generate_series(6101, 6200) i;
SELECT * FROM ft.compact('docs_l2');
INSERT INTO docs SELECT i, cvec(i), i % 50 FROM generate_series(6201, 6300) i;
SELECT * FROM ft.compact('docs_l2');
INSERT INTO docs SELECT i, cvec(i), i % 50 FROM generate_series(6301, 6400) i;
SELECT * FROM ft.compact('docs_l2');
SELECT * FROM ft.compact('docs_l2');
SELECT t.op, bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN exact_top10() e USING (op, qid)
WHERE t.op = 'l2' GROUP BY t.op;
SELECT (SELECT count(*) FROM docs) AS live,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <-> cvec(1) LIMIT 100000) s) AS l2;
RESET segvec.ef_search;
SELECT count(*) AS not_own_nearest FROM docs a
WHERE (SELECT b.id FROM docs b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id;
SET segvec.ef_search = 400;
CREATE TABLE before_reindex AS SELECT * FROM top10;

-- REINDEX after compaction, with compact_threshold = 0 so that the build
-- writes graph segments and leaves nothing for a compaction: same answers
SET segvec.compact_threshold = 0;
REINDEX INDEX docs_l2;
REINDEX INDEX docs_cos;
REINDEX INDEX docs_ip;
RESET segvec.compact_threshold;
SELECT * FROM ft.compact('docs_l2');
SELECT * FROM ft.compact('docs_cos');
SELECT * FROM ft.compact('docs_ip');
SELECT t.op, min(cardinality(t.ids)) AS min_rows,
       bool_and(t.ids = b.ids) AS same_as_before,
       bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN before_reindex b USING (op, qid)
  JOIN exact_top10() e USING (op, qid)
GROUP BY t.op ORDER BY t.op;
SELECT f.op, min(cardinality(f.ids)) AS min_rows,
       bool_and(f.ids = e.ids) AS filtered_exact
FROM filtered10 f JOIN exact_filtered10() e USING (op, qid)
GROUP BY f.op ORDER BY f.op;
SELECT (SELECT count(*) FROM docs) AS live,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <-> cvec(1) LIMIT 100000) s) AS l2,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <=> cvec(1) LIMIT 100000) s) AS cos,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM docs
          ORDER BY embedding <#> cvec(1) LIMIT 100000) s) AS ip;
-- REINDEX at the default threshold (3,000+ docs < 10,000): mutable segment
REINDEX INDEX docs_l2;
SELECT t.op, bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN exact_top10() e USING (op, qid)
WHERE t.op = 'l2' GROUP BY t.op;
SELECT docs_compacted = (SELECT count(*) FROM docs) AS all_docs_compacted,
       segments_created, segments_merged
FROM ft.compact('docs_l2');
SELECT t.op, bool_and(t.ids = e.ids) AS all_exact
FROM top10 t JOIN exact_top10() e USING (op, qid)
WHERE t.op = 'l2' GROUP BY t.op;

-- B16: compaction of an empty index is a no-op
CREATE TABLE empty_t (id int, embedding real[]);
CREATE INDEX empty_idx ON empty_t USING segvec (embedding);
SELECT * FROM ft.compact('empty_idx');
SELECT * FROM ft.compact('empty_idx');
SELECT count(*) FROM (SELECT id FROM empty_t
  ORDER BY embedding <-> '{1,2,3}' LIMIT 10) s;

-- B16: all docs deleted and vacuumed while in the mutable segment
CREATE TABLE dead_t (id int, embedding real[])
  WITH (autovacuum_enabled = off);
INSERT INTO dead_t SELECT i, cvec(i) FROM generate_series(1, 500) i;
CREATE INDEX dead_idx ON dead_t USING segvec (embedding);
DELETE FROM dead_t;
VACUUM dead_t;
SELECT * FROM ft.compact('dead_idx');
SELECT count(*) FROM (SELECT id FROM dead_t
  ORDER BY embedding <-> cvec(1) LIMIT 10) s;

-- B16: all docs deleted and vacuumed while in graph segments: nothing is
-- compacted and nothing created (wholly tombstoned segments may be
-- dropped); then nothing at all is left to do
INSERT INTO dead_t SELECT i, cvec(i) FROM generate_series(1, 500) i;
SELECT * FROM ft.compact('dead_idx');
DELETE FROM dead_t;
VACUUM dead_t;
SELECT docs_compacted, segments_created FROM ft.compact('dead_idx');
SELECT * FROM ft.compact('dead_idx');
SELECT count(*) FROM (SELECT id FROM dead_t
  ORDER BY embedding <-> cvec(1) LIMIT 10) s;
-- the emptied index takes new docs
INSERT INTO dead_t VALUES (7, cvec(7));
SELECT id FROM dead_t ORDER BY embedding <-> cvec(1) LIMIT 10;
SELECT * FROM ft.compact('dead_idx');
SELECT id FROM dead_t ORDER BY embedding <-> cvec(1) LIMIT 10;

-- CREATE INDEX with a low compact_threshold builds graph segments; docs
-- inserted afterwards are compacted into a second segment
SET segvec.compact_threshold = 100;
CREATE TABLE small_t (id int, embedding real[]);
INSERT INTO small_t SELECT i, cvec(i) FROM generate_series(1, 150) i;
CREATE INDEX small_idx ON small_t USING segvec (embedding);
RESET segvec.compact_threshold;
SELECT * FROM ft.compact('small_idx');
INSERT INTO small_t SELECT i, cvec(i) FROM generate_series(151, 200) i;
SELECT ARRAY(SELECT id FROM small_t ORDER BY embedding <-> cvec(100001) LIMIT 10)
     = ARRAY(SELECT id FROM small_t
             ORDER BY l2_distance(embedding, cvec(100001)) LIMIT 10) AS exact;
SELECT * FROM ft.compact('small_idx');
SELECT ARRAY(SELECT id FROM small_t ORDER BY embedding <-> cvec(100001) LIMIT 10)
     = ARRAY(SELECT id FROM small_t
             ORDER BY l2_distance(embedding, cvec(100001)) LIMIT 10) AS exact;
SELECT count(*) FROM (SELECT id FROM small_t
  ORDER BY embedding <-> cvec(1) LIMIT 1000) s;

-- errors: not a segvec index (a btree, a table), NULL, not the owner
SELECT * FROM ft.compact('docs_pkey');
SELECT * FROM ft.compact('docs');
SELECT * FROM ft.compact(NULL);
CREATE ROLE regress_segvec_other;
GRANT USAGE ON SCHEMA ft, segvec_compact TO regress_segvec_other;
SET ROLE regress_segvec_other;
SELECT * FROM ft.compact('docs_l2');
RESET ROLE;
REVOKE USAGE ON SCHEMA ft, segvec_compact FROM regress_segvec_other;
DROP ROLE regress_segvec_other;

DROP TABLE docs, qs, before_compact, before_reindex, gone, empty_t, dead_t,
  small_t CASCADE;
DROP FUNCTION exact_top10(), exact_filtered10(), cvec(int);
RESET search_path;
DROP SCHEMA segvec_compact;

-- Ordered scans with the default operator class vector_l2_ops (<->)
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_sql :abs_srcdir '/sql/include/plan.sql'
\i :plan_sql
-- disabling a plan type makes it cost 1e10, which would JIT-compile these
-- small queries
SET jit = off;

-- Deterministic vectors: element j of vector i is sin(i * sqrt(j + 1) + j);
-- no random(), and no ties among the distances to the nearest rows of the
-- queries used here.
CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
    FROM generate_series(1, d) j
$$;

-- knn_check(query): query returns (id, dist) ordered by dist.  Runs it as
-- planned and again with index scans disabled (the exact answer); reports
-- whether the plan used a segvec index scan, the rows returned, whether
-- dist never decreases, and whether the ids, in order, equal the exact ones.
CREATE FUNCTION pg_temp.knn_check(query text, OUT segvec_scan bool,
    OUT nrows int, OUT ordered bool, OUT same_as_exact bool)
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    ids bigint[];
    dists float8[];
    exact_ids bigint[];
    old_indexscan text := current_setting('enable_indexscan');
    old_bitmapscan text := current_setting('enable_bitmapscan');
BEGIN
    segvec_scan := false;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        segvec_scan := segvec_scan OR EXISTS (
            SELECT FROM pg_class c JOIN pg_am a ON a.oid = c.relam
            WHERE a.amname = 'segvec'
              AND line LIKE '%Index Scan using ' || c.relname || ' on %');
    END LOOP;
    EXECUTE 'SELECT array_agg(id), array_agg(dist) FROM (' || query || ') s'
        INTO ids, dists;
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE 'SELECT array_agg(id) FROM (' || query || ') s' INTO exact_ids;
    PERFORM set_config('enable_indexscan', old_indexscan, true);
    PERFORM set_config('enable_bitmapscan', old_bitmapscan, true);
    nrows := coalesce(cardinality(ids), 0);
    SELECT coalesce(bool_and(dists[i] >= dists[i - 1]), true) INTO ordered
    FROM generate_series(2, nrows) i;
    same_as_exact := ids IS NOT DISTINCT FROM exact_ids;
    IF NOT same_as_exact THEN
        RAISE NOTICE 'index: %, exact: %', ids, exact_ids;
    END IF;
END
$$;

-- 3,000 rows, every 100th embedding NULL; 2,000 indexed by CREATE INDEX,
-- 1,000 by inserts into the index
CREATE TABLE l2_items (id bigint PRIMARY KEY, embedding real[], category int);
INSERT INTO l2_items
SELECT i, CASE WHEN i % 100 = 0 THEN NULL ELSE pg_temp.vec(i, 16) END, i % 100
FROM generate_series(1, 2000) i;
CREATE INDEX l2_items_embedding_idx ON l2_items USING segvec (embedding);
INSERT INTO l2_items
SELECT i, CASE WHEN i % 100 = 0 THEN NULL ELSE pg_temp.vec(i, 16) END, i % 100
FROM generate_series(2001, 3000) i;
ANALYZE l2_items;

-- query vectors: points off the table, a row's own vector, the origin, a
-- far point
CREATE TABLE l2_queries (qid int PRIMARY KEY, v real[]);
INSERT INTO l2_queries
SELECT q, pg_temp.vec(100000 + q, 16) FROM generate_series(1, 3) q;
INSERT INTO l2_queries VALUES
    (4, pg_temp.vec(17, 16)),
    (5, array_fill(0::real, ARRAY[16])),
    (6, (SELECT array_agg(x * 10) FROM unnest(pg_temp.vec(7, 16)) x)),
    (7, pg_temp.vec(2999, 16));

-- top-10 uses the index with default settings
SELECT * FROM pg_temp.plan($$
SELECT id FROM l2_items
ORDER BY embedding <-> (SELECT v FROM l2_queries WHERE qid = 1) LIMIT 10$$);

-- a row's own vector finds the row first, at distance 0
SELECT id, embedding <-> (SELECT v FROM l2_queries WHERE qid = 4) AS dist
FROM l2_items ORDER BY dist LIMIT 1;

-- top-10 and top-1 equal the exact answer for every query vector
SELECT qid, c.*
FROM l2_queries,
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM l2_queries WHERE qid = %s) AS dist
        FROM l2_items ORDER BY dist LIMIT 10$$, qid)) c
ORDER BY qid;
SELECT qid, c.*
FROM l2_queries,
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM l2_queries WHERE qid = %s) AS dist
        FROM l2_items ORDER BY dist LIMIT 1$$, qid)) c
ORDER BY qid;

-- a literal query vector
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> '{1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0}' AS dist
    FROM l2_items ORDER BY dist LIMIT 10$$);

-- LIMIT beyond the table: through the index, every non-NULL row once, in
-- distance order
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM l2_items
ORDER BY embedding <-> (SELECT v FROM l2_queries WHERE qid = 2) LIMIT 5000$$);
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids,
       count(*) = (SELECT count(embedding) FROM l2_items) AS all_non_null,
       bool_and(dist >= prev) AS ordered
FROM (SELECT id, dist, lag(dist) OVER () AS prev
      FROM (SELECT id, embedding <-> (SELECT v FROM l2_queries WHERE qid = 2) AS dist
            FROM l2_items ORDER BY dist LIMIT 5000) s) s;
RESET enable_seqscan;

DROP TABLE l2_items, l2_queries;

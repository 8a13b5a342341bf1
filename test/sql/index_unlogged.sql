-- Indexes on unlogged and temporary tables.  An unlogged index gets an
-- init fork (ambuildempty) that crash recovery copies over it; the crash
-- itself (case B10) is a TAP test.
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
CREATE TABLE unl_q (v real[]);
INSERT INTO unl_q VALUES (pg_temp.vec(100001, 8));

-- CREATE INDEX on an empty unlogged table
CREATE UNLOGGED TABLE unl_items (id bigint PRIMARY KEY, embedding real[]);
CREATE INDEX unl_items_embedding_idx ON unl_items USING segvec (embedding);
SELECT relpersistence, pg_relation_size(oid, 'init') > 0 AS has_init_fork
FROM pg_class WHERE relname = 'unl_items_embedding_idx';
SET enable_seqscan = off;
SELECT id FROM unl_items ORDER BY embedding <-> '{1,2,3}' LIMIT 5;

-- inserts and searches
INSERT INTO unl_items SELECT i, pg_temp.vec(i, 8) FROM generate_series(1, 1000) i;
SELECT * FROM pg_temp.plan($$
SELECT id FROM unl_items ORDER BY embedding <-> (SELECT v FROM unl_q) LIMIT 10$$);
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM unl_q) AS dist
    FROM unl_items ORDER BY dist LIMIT 10$$);
SELECT count(*) AS nrows,
       count(*) FILTER (WHERE (SELECT b.id FROM unl_items b
                               ORDER BY b.embedding <-> a.embedding
                               LIMIT 1) = a.id) AS self_first
FROM unl_items a WHERE a.id % 10 = 0;
-- delete the top-10 and VACUUM
DELETE FROM unl_items WHERE id IN (
    SELECT id FROM unl_items ORDER BY embedding <-> (SELECT v FROM unl_q) LIMIT 10);
VACUUM unl_items;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM unl_q) AS dist
    FROM unl_items ORDER BY dist LIMIT 10$$);
RESET enable_seqscan;

-- an index built over rows of an unlogged table; SET LOGGED and SET
-- UNLOGGED rewrite it, it stays right
CREATE INDEX unl_items_cos_idx ON unl_items USING segvec (embedding vector_cosine_ops);
SELECT pg_relation_size('unl_items_cos_idx', 'init') > 0 AS has_init_fork;
ALTER TABLE unl_items SET LOGGED;
SELECT relname, relpersistence, pg_relation_size(oid, 'init') > 0 AS has_init_fork
FROM pg_class WHERE relname IN ('unl_items_embedding_idx', 'unl_items_cos_idx')
ORDER BY relname;
SET enable_seqscan = off;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <=> (SELECT v FROM unl_q) AS dist
    FROM unl_items ORDER BY dist LIMIT 10$$);
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM unl_items ORDER BY embedding <=> (SELECT v FROM unl_q) LIMIT 2000) s;
RESET enable_seqscan;
ALTER TABLE unl_items SET UNLOGGED;
SELECT relname, relpersistence, pg_relation_size(oid, 'init') > 0 AS has_init_fork
FROM pg_class WHERE relname IN ('unl_items_embedding_idx', 'unl_items_cos_idx')
ORDER BY relname;
INSERT INTO unl_items VALUES (2001, pg_temp.vec(100001, 8));
SET enable_seqscan = off;
SELECT id FROM unl_items ORDER BY embedding <-> (SELECT v FROM unl_q) LIMIT 1;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <=> (SELECT v FROM unl_q) AS dist
    FROM unl_items ORDER BY dist LIMIT 10$$);
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM unl_items ORDER BY embedding <=> (SELECT v FROM unl_q) LIMIT 2000) s;
RESET enable_seqscan;

-- a temporary table (local buffers, no WAL)
CREATE TEMP TABLE unl_temp (id bigint, embedding real[]);
CREATE INDEX unl_temp_idx ON unl_temp USING segvec (embedding vector_ip_ops);
INSERT INTO unl_temp SELECT i, pg_temp.vec(i, 8) FROM generate_series(1, 1000) i;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM unl_temp ORDER BY embedding <#> (SELECT v FROM unl_q) LIMIT 10$$);
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <#> (SELECT v FROM unl_q) AS dist
    FROM unl_temp ORDER BY dist LIMIT 10$$);
DELETE FROM unl_temp WHERE id % 2 = 0;
VACUUM unl_temp;
INSERT INTO unl_temp SELECT i, pg_temp.vec(i, 8) FROM generate_series(1001, 1500) i;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <#> (SELECT v FROM unl_q) AS dist
    FROM unl_temp ORDER BY dist LIMIT 10$$);
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM unl_temp ORDER BY embedding <#> (SELECT v FROM unl_q) LIMIT 2000) s;
RESET enable_seqscan;

DROP TABLE unl_items, unl_temp, unl_q;

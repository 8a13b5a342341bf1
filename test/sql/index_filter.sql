-- WHERE filters and distance bounds above an ordered scan: the scan keeps
-- producing rows in distance order until the executor stops asking, so a
-- filtered top-k returns k rows whenever k rows qualify (case B01)
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
-- 3,000 rows, 100 categories of 30 rows
CREATE TABLE filt_items (id bigint PRIMARY KEY, embedding real[], category int);
INSERT INTO filt_items
SELECT i, pg_temp.vec(i, 16), i % 100 FROM generate_series(1, 3000) i;
CREATE INDEX filt_items_embedding_idx ON filt_items USING segvec (embedding);
ANALYZE filt_items;

CREATE TABLE filt_q (v real[]);
INSERT INTO filt_q VALUES (pg_temp.vec(100001, 16));

-- default settings: whatever the plan, 10 rows equal to the exact answer
SELECT nrows, ordered, same_as_exact FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
    FROM filt_items WHERE category = 7 ORDER BY dist LIMIT 10$$);

-- the same through the index: 30 rows qualify, the filter throws away
-- about 99 of every 100 rows the scan returns
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM filt_items WHERE category = 7
ORDER BY embedding <-> (SELECT v FROM filt_q) LIMIT 10$$);
SELECT k, c.*
FROM (VALUES (1), (10), (29), (30), (31), (100)) k(k),
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
        FROM filt_items WHERE category = 7 ORDER BY dist LIMIT %s$$, k)) c
ORDER BY k;

-- a filter no row passes, and one that only the farthest rows pass
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
    FROM filt_items WHERE category = 100 ORDER BY dist LIMIT 10$$);
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
    FROM filt_items
    WHERE embedding <-> (SELECT v FROM filt_q) >
          (SELECT max(embedding <-> (SELECT v FROM filt_q)) - 0.5 FROM filt_items)
    ORDER BY dist LIMIT 10$$);

-- a filter half the rows pass
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
    FROM filt_items WHERE category < 50 ORDER BY dist LIMIT 10$$);

-- distance bound: r is the distance of the 200th nearest row, so 199 rows
-- lie strictly inside it
CREATE TABLE filt_r AS
SELECT embedding <-> (SELECT v FROM filt_q) AS r
FROM filt_items ORDER BY 1 OFFSET 199 LIMIT 1;
SELECT count(*) AS inside_r FROM filt_items
WHERE embedding <-> (SELECT v FROM filt_q) < (SELECT r FROM filt_r);
SELECT * FROM pg_temp.plan($$
SELECT id FROM filt_items
WHERE embedding <-> (SELECT v FROM filt_q) < (SELECT r FROM filt_r)
ORDER BY embedding <-> (SELECT v FROM filt_q) LIMIT 50$$);
SELECT k, c.*
FROM (VALUES (50), (199), (200), (1000)) k(k),
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
        FROM filt_items
        WHERE embedding <-> (SELECT v FROM filt_q) < (SELECT r FROM filt_r)
        ORDER BY dist LIMIT %s$$, k)) c
ORDER BY k;

-- distance bound and a category filter together
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
    FROM filt_items
    WHERE embedding <-> (SELECT v FROM filt_q) < (SELECT r FROM filt_r)
      AND category % 2 = 0
    ORDER BY dist LIMIT 50$$);
RESET enable_seqscan;

-- the distance bound with default settings
SELECT nrows, ordered, same_as_exact FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
    FROM filt_items
    WHERE embedding <-> (SELECT v FROM filt_q) < (SELECT r FROM filt_r)
    ORDER BY dist LIMIT 50$$);

-- a partial index serves queries whose WHERE implies its predicate
CREATE INDEX filt_items_cat7_idx ON filt_items USING segvec (embedding)
    WHERE category = 7;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM filt_items WHERE category = 7
ORDER BY embedding <-> (SELECT v FROM filt_q) LIMIT 10$$);
SELECT k, c.*
FROM (VALUES (10), (100)) k(k),
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM filt_q) AS dist
        FROM filt_items WHERE category = 7 ORDER BY dist LIMIT %s$$, k)) c
ORDER BY k;
RESET enable_seqscan;
DROP INDEX filt_items_cat7_idx;

DROP TABLE filt_items, filt_q, filt_r;

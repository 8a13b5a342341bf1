-- High dimensions (case B14): 3,072 (a common embedding size, two pieces
-- per doc) and 16,000 (the maximum, eight pieces per doc) index and search
-- correctly; 16,001 is an error that states the limit
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
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
-- 3,072 dimensions, 50 rows: 40 indexed by CREATE INDEX, 10 by inserts
CREATE TABLE hd_items (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO hd_items SELECT i, pg_temp.vec(i, 3072) FROM generate_series(1, 40) i;
CREATE INDEX hd_items_l2_idx ON hd_items USING segvec (embedding);
CREATE INDEX hd_items_cos_idx ON hd_items USING segvec (embedding vector_cosine_ops);
INSERT INTO hd_items SELECT i, pg_temp.vec(i, 3072) FROM generate_series(41, 50) i;
ANALYZE hd_items;
CREATE TABLE hd_q (qid int PRIMARY KEY, v real[]);
INSERT INTO hd_q SELECT q, pg_temp.vec(100000 + q, 3072) FROM generate_series(1, 3) q;

SET enable_seqscan = off;
-- every row's own vector finds it first, with both metrics
SELECT count(*) AS nrows,
       count(*) FILTER (WHERE (SELECT b.id FROM hd_items b
                               ORDER BY b.embedding <-> a.embedding
                               LIMIT 1) = a.id) AS l2_self_first,
       count(*) FILTER (WHERE (SELECT b.id FROM hd_items b
                               ORDER BY b.embedding <=> a.embedding
                               LIMIT 1) = a.id) AS cos_self_first
FROM hd_items a;
-- top-5 equals the exact answer
SELECT qid, c.*
FROM hd_q,
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM hd_q WHERE qid = %s) AS dist
        FROM hd_items ORDER BY dist LIMIT 5$$, qid)) c
ORDER BY qid;
SELECT qid, c.*
FROM hd_q,
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <=> (SELECT v FROM hd_q WHERE qid = %s) AS dist
        FROM hd_items ORDER BY dist LIMIT 5$$, qid)) c
ORDER BY qid;
-- every row once
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM hd_items
      ORDER BY embedding <-> (SELECT v FROM hd_q WHERE qid = 1) LIMIT 100) s;

-- delete every other row, VACUUM, insert more: multi-piece docs are
-- removed and added whole
DELETE FROM hd_items WHERE id % 2 = 0;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM hd_q WHERE qid = 1) AS dist
    FROM hd_items ORDER BY dist LIMIT 5$$);
VACUUM hd_items;
INSERT INTO hd_items SELECT i, pg_temp.vec(i, 3072) FROM generate_series(51, 60) i;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM hd_q WHERE qid = 1) AS dist
    FROM hd_items ORDER BY dist LIMIT 5$$);
SELECT count(*) AS nrows,
       count(*) FILTER (WHERE (SELECT b.id FROM hd_items b
                               ORDER BY b.embedding <-> a.embedding
                               LIMIT 1) = a.id) AS l2_self_first
FROM hd_items a;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM hd_items
      ORDER BY embedding <-> (SELECT v FROM hd_q WHERE qid = 1) LIMIT 100) s;
RESET enable_seqscan;

-- 16,000 dimensions, the maximum: 10 rows, 6 indexed by CREATE INDEX
CREATE TABLE hd_max (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO hd_max SELECT i, pg_temp.vec(i, 16000) FROM generate_series(1, 6) i;
CREATE INDEX hd_max_idx ON hd_max USING segvec (embedding);
INSERT INTO hd_max SELECT i, pg_temp.vec(i, 16000) FROM generate_series(7, 10) i;
SET enable_seqscan = off;
SELECT count(*) AS nrows,
       count(*) FILTER (WHERE (SELECT b.id FROM hd_max b
                               ORDER BY b.embedding <-> a.embedding
                               LIMIT 1) = a.id) AS self_first
FROM hd_max a;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> pg_temp.vec(100001, 16000) AS dist
    FROM hd_max ORDER BY dist LIMIT 10$$);
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM hd_max
      ORDER BY embedding <-> pg_temp.vec(100001, 16000) LIMIT 100) s;
RESET enable_seqscan;
-- WITH (dimensions = 16000) is accepted too
CREATE INDEX hd_max_dim_idx ON hd_max
    USING segvec (embedding vector_ip_ops) WITH (dimensions = 16000);
SET enable_seqscan = off;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <#> pg_temp.vec(100001, 16000) AS dist
    FROM hd_max ORDER BY dist LIMIT 10$$);
RESET enable_seqscan;

-- 16,001 dimensions: an error stating the limit, SQLSTATE 54000
-- (program_limit_exceeded), at INSERT, at CREATE INDEX and in a query
\set VERBOSITY terse
INSERT INTO hd_max VALUES (11, pg_temp.vec(11, 16001));
SELECT id FROM hd_max ORDER BY embedding <-> pg_temp.vec(1, 16001) LIMIT 1;
\set VERBOSITY default
DO $$
BEGIN
    INSERT INTO hd_max VALUES (11, pg_temp.vec(11, 16001));
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, SQLERRM;
END
$$;
CREATE TABLE hd_over (id int, embedding real[]);
INSERT INTO hd_over VALUES (1, pg_temp.vec(1, 16001));
DO $$
BEGIN
    CREATE INDEX ON hd_over USING segvec (embedding);
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, SQLERRM;
END
$$;
\set VERBOSITY terse
CREATE INDEX ON hd_over USING segvec (embedding);
CREATE INDEX ON hd_max USING segvec (embedding) WITH (dimensions = 16001);
\set VERBOSITY default
-- the table and its indexes are unchanged
SET enable_seqscan = off;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM hd_max
      ORDER BY embedding <-> pg_temp.vec(100001, 16000) LIMIT 100) s;
RESET enable_seqscan;

DROP TABLE hd_items, hd_q, hd_max, hd_over;

-- Long and filtered scans through one graph segment bigger than
-- segvec.max_scan_tuples: the scan searches the graph
-- incrementally, returns rows in distance order and never drops a doc it
-- found late, so a filter that keeps 1% of the rows still gets exactly k
-- rows, equal to the exact answer; when the scan's budget of visited docs
-- is spent it stops with a NOTICE (once per scan)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_sql :abs_srcdir '/sql/include/plan.sql'
\i :plan_sql
SET jit = off;
SET maintenance_work_mem = '32MB';

-- element j of vector i is sin(i * sqrt(j + 1) + j): no random()
CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
    FROM generate_series(1, d) j
$$;

-- 20,000 rows, category = id % 100: each category keeps 1% of the rows
CREATE TABLE fl_items (id int PRIMARY KEY, embedding real[], category int);
INSERT INTO fl_items
    SELECT i, pg_temp.vec(i, 8), i % 100 FROM generate_series(1, 20000) i;
-- compact_threshold = 0: every row goes to graph segments
CREATE INDEX fl_idx ON fl_items USING segvec (embedding)
    WITH (compact_threshold = 0);
ANALYZE fl_items;
-- one graph segment of all 20,000 docs
SELECT num_segments, mutable_docs, immutable_docs FROM ft.info('fl_idx');
CREATE TABLE fl_q (v real[]);
INSERT INTO fl_q VALUES (pg_temp.vec(100001, 8));

-- smaller than the segment (and than what exact scoring would take)
SET segvec.max_scan_tuples = 10000;
SET enable_seqscan = off;

-- the filtered top-k through the index and exactly (no index): the same
-- ids in the same order.  EXECUTE plans the query on each call, with the
-- settings of that call (a plan cached by PL/pgSQL would keep the plan
-- type of the call that made it)
CREATE FUNCTION pg_temp.topk(cat int, k int, exact bool) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    r int[];
BEGIN
    IF exact THEN
        PERFORM set_config('enable_indexscan', 'off', true);
        PERFORM set_config('enable_seqscan', 'on', true);
    END IF;
    EXECUTE 'SELECT array_agg(id) FROM (
        SELECT id FROM fl_items WHERE category = $1
        ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT $2) s'
        INTO r USING cat, k;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_seqscan', 'off', true);
    RETURN r;
END
$$;

SELECT * FROM pg_temp.plan($$
SELECT id FROM fl_items WHERE category = 7
ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT 10$$);

SELECT cat, cardinality(pg_temp.topk(cat, 10, false)) AS nrows,
       pg_temp.topk(cat, 10, false) = pg_temp.topk(cat, 10, true) AS same_as_exact
FROM unnest(ARRAY[7, 42, 99]) cat;

-- ten more categories, k = 10 and 20: exactly k rows, the exact answer;
-- each scan meets 2 late finds (client_min_messages = debug1 shows the
-- scan's count), which the strict order skips: rows of other categories,
-- as the answers are exact
SET client_min_messages = debug1;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE cardinality(pg_temp.topk(cat, k, false)) = k) AS k_rows,
       count(*) FILTER (WHERE pg_temp.topk(cat, k, false) = pg_temp.topk(cat, k, true)) AS exact
FROM generate_series(0, 99, 11) cat, (VALUES (10), (20)) kk(k);
RESET client_min_messages;

-- unfiltered, LIMIT 500 and LIMIT 2000 through the graph (the segment is
-- bigger than max_scan_tuples, so it is never scored exactly): LIMIT 500
-- is the exact answer; LIMIT 2000 meets 2 late finds that come after a
-- farther row was returned, beyond the look-ahead, which strict order
-- skips (the rare case: src/README.md, "Order"), so it is not
CREATE FUNCTION pg_temp.top(k int, exact bool) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    r int[];
BEGIN
    IF exact THEN
        PERFORM set_config('enable_indexscan', 'off', true);
        PERFORM set_config('enable_seqscan', 'on', true);
    END IF;
    SELECT array_agg(id) INTO r FROM (
        SELECT id FROM fl_items
        ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT k) s;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_seqscan', 'off', true);
    RETURN r;
END
$$;
SET client_min_messages = debug1;
SELECT k, cardinality(pg_temp.top(k, false)) AS nrows,
       pg_temp.top(k, false) = pg_temp.top(k, true) AS same_as_exact
FROM unnest(ARRAY[500, 2000]) k;
RESET client_min_messages;

-- rows come out in non-decreasing distance, every one of them
SELECT count(*) AS nrows, bool_and(d >= prev) AS ordered FROM (
    SELECT d, lag(d, 1, 0::float8) OVER (ORDER BY n) AS prev FROM (
        SELECT row_number() OVER () AS n, d FROM (
            SELECT embedding <-> (SELECT v FROM fl_q) AS d FROM fl_items
            WHERE category = 7
            ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT 20) s) s2) s3;

-- a budget too small for the filter: fewer rows and one NOTICE
SET segvec.max_scan_tuples = 300;
\set VERBOSITY terse
SELECT count(*) < 10 AS fewer FROM (
    SELECT id FROM fl_items WHERE category = 7
    ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT 10) s;
\set VERBOSITY default
-- the NOTICE's count is exact: the scan visits no more than the budget
SELECT count(*) < 10 AS fewer FROM (
    SELECT id FROM fl_items WHERE category = 42
    ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT 10) s;
RESET segvec.max_scan_tuples;

-- a full scan of the segment (budget lifted: the segment is then scored
-- exactly once its walk has gone far enough), strict order: every row once
SET segvec.max_scan_tuples = 10000000;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids FROM (
    SELECT id FROM fl_items
    ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT 100000) s;
RESET segvec.max_scan_tuples;

-- a radius with 4 rows inside it (below the 5th smallest distance) and
-- LIMIT 10: the executor reads the scan to its end.  With a budget below
-- the segment's 20,000 docs the scan stops there, with the NOTICE (and,
-- read to its end, the count of late finds strict order skipped); with
-- one above, it reads the whole index (the segment is scored exactly once
-- its walk has gone far enough) and there is no NOTICE: nothing was left
-- out.  Both find the 4 rows.
CREATE TABLE fl_r AS
    SELECT embedding <-> (SELECT v FROM fl_q) AS r FROM fl_items
    ORDER BY 1 OFFSET 4 LIMIT 1;
CREATE VIEW fl_within AS
    SELECT array_agg(id) AS got FROM (
        SELECT id FROM fl_items
        WHERE embedding <-> (SELECT v FROM fl_q) < (SELECT r FROM fl_r)
        ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT 10) s;
-- the exact answer once, from the table (an index scan here would add
-- NOTICEs of its own)
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE fl_within_exact AS
    SELECT array_agg(id ORDER BY embedding <-> (SELECT v FROM fl_q)) AS exact
    FROM fl_items
    WHERE embedding <-> (SELECT v FROM fl_q) < (SELECT r FROM fl_r);
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT * FROM pg_temp.plan($$
SELECT id FROM fl_items
WHERE embedding <-> (SELECT v FROM fl_q) < (SELECT r FROM fl_r)
ORDER BY embedding <-> (SELECT v FROM fl_q) LIMIT 10$$);
SET segvec.max_scan_tuples = 10000;
-- (the second NOTICE's detail says the budget stopped the scan)
SELECT cardinality(got) AS nrows, got = exact AS same_as_exact
FROM fl_within, fl_within_exact;
\set VERBOSITY terse
SET segvec.max_scan_tuples = 30000;
SELECT cardinality(got) AS nrows, got = exact AS same_as_exact
FROM fl_within, fl_within_exact;
RESET segvec.max_scan_tuples;
\set VERBOSITY default

DROP VIEW fl_within;
DROP TABLE fl_within_exact;
DROP TABLE fl_items, fl_q, fl_r;

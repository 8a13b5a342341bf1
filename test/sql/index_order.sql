-- Ordered scans return rows in non-decreasing distance:
-- PostgreSQL trusts the order of an index scan (no ORDER BY recheck), so a
-- row nearer than one already returned would leave ORDER BY ... LIMIT
-- output really unsorted.  With segvec.scan_order = strict (the default)
-- no query's output goes back in distance, at any ef_search, over several
-- graph segments and the mutable segment; a late find is skipped and
-- counted.  With relaxed, late finds are returned as they come.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_sql :abs_srcdir '/sql/include/plan.sql'
\i :plan_sql
SET jit = off;

-- element j of vector i is sin(i * sqrt(j + 1) + j): no random()
CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
    FROM generate_series(1, d) j
$$;

-- three graph segments (4,000, 2,000 and 1,000 docs) and 300 mutable docs;
-- merges by tiers, which leave three segments of these sizes as they are
SET segvec.merge_ratio = 0;
CREATE TABLE so_items (id int PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO so_items
    SELECT i, pg_temp.vec(i, 16) FROM generate_series(1, 4000) i;
-- quantization 'none' (not the default): what is counted below is the
-- unquantized search
CREATE INDEX so_idx ON so_items USING segvec (embedding)
    WITH (compact_threshold = 0, quantization = 'none');
ALTER INDEX so_idx SET (compact_threshold = 1000000);
INSERT INTO so_items
    SELECT i, pg_temp.vec(i, 16) FROM generate_series(4001, 6000) i;
SELECT docs_compacted FROM ft.compact('so_idx');
INSERT INTO so_items
    SELECT i, pg_temp.vec(i, 16) FROM generate_series(6001, 7000) i;
SELECT docs_compacted FROM ft.compact('so_idx');
INSERT INTO so_items
    SELECT i, pg_temp.vec(i, 16) FROM generate_series(7001, 7300) i;
ANALYZE so_items;
SELECT num_segments, mutable_docs, immutable_docs FROM ft.info('so_idx');

CREATE TABLE so_q (qid int PRIMARY KEY, v real[]);
INSERT INTO so_q SELECT g, pg_temp.vec(500000 + 7 * g, 16)
    FROM generate_series(1, 50) g;

SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM so_items ORDER BY embedding <-> (SELECT v FROM so_q WHERE qid = 1) LIMIT 10$$);

-- how many times the output of one index scan goes back in distance
-- (a row nearer than the row before it), the LIMIT k nearest to q
CREATE FUNCTION pg_temp.inversions(q real[], k int, ef int, mode text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    r bigint;
BEGIN
    PERFORM set_config('segvec.ef_search', ef::text, true);
    PERFORM set_config('segvec.scan_order', mode, true);
    SELECT count(*) FILTER (WHERE d < prev) INTO r FROM (
        SELECT d, lag(d) OVER (ORDER BY n) AS prev FROM (
            SELECT row_number() OVER () AS n, d FROM (
                SELECT embedding <-> q AS d FROM so_items
                ORDER BY embedding <-> q LIMIT k) s) s2) s3;
    PERFORM set_config('segvec.ef_search', '40', true);
    PERFORM set_config('segvec.scan_order', 'strict', true);
    RETURN r;
END
$$;

-- strict: no query out of order, at any ef_search, top 10 and top 50
SELECT ef, k, count(*) FILTER (WHERE pg_temp.inversions(v, k, ef, 'strict') > 0)
         AS queries_out_of_order
FROM so_q, unnest(ARRAY[1, 5, 10, 40]) ef, unnest(ARRAY[10, 50]) k
GROUP BY ef, k ORDER BY ef, k;

-- relaxed: the late finds come out (the old behaviour), at small ef_search
SELECT count(*) FILTER (WHERE pg_temp.inversions(v, 50, 1, 'relaxed') > 0) > 0
         AS relaxed_has_late_finds
FROM so_q;

-- strict skips the late finds and says so at DEBUG1 when the scan ends;
-- relaxed returns them and says how many
\set VERBOSITY terse
SET client_min_messages = debug1;
SET segvec.ef_search = 1;
SELECT count(*) FROM (SELECT id FROM so_items
    ORDER BY embedding <-> (SELECT v FROM so_q WHERE qid = 37) LIMIT 50) s;
SET segvec.scan_order = relaxed;
SELECT count(*) FROM (SELECT id FROM so_items
    ORDER BY embedding <-> (SELECT v FROM so_q WHERE qid = 37) LIMIT 50) s;
RESET segvec.scan_order;
RESET client_min_messages;

-- a scan that the executor reads to its end (here no LIMIT: the query
-- needs every row) and that strict order made skip late finds says so at
-- NOTICE: those rows are missing from the answer, not just ranked out of
-- the first k; relaxed returns every row
SELECT count(*) AS strict_rows FROM (SELECT id FROM so_items
    ORDER BY embedding <-> (SELECT v FROM so_q WHERE qid = 37)) s;
SET segvec.scan_order = relaxed;
SELECT count(*) AS relaxed_rows FROM (SELECT id FROM so_items
    ORDER BY embedding <-> (SELECT v FROM so_q WHERE qid = 37)) s;
RESET segvec.scan_order;
RESET segvec.ef_search;
\set VERBOSITY default

-- at the default ef_search strict loses nothing the exact answer has in
-- the top 10 of most queries, and every query gets its 10 rows
CREATE FUNCTION pg_temp.ids(q real[], k int, exact bool) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    r int[];
BEGIN
    IF exact THEN
        PERFORM set_config('enable_indexscan', 'off', true);
        PERFORM set_config('enable_seqscan', 'on', true);
    END IF;
    SELECT array_agg(id) INTO r FROM (
        SELECT id FROM so_items ORDER BY embedding <-> q LIMIT k) s;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_seqscan', 'off', true);
    RETURN r;
END
$$;
SELECT count(*) FILTER (WHERE cardinality(got) = 10) AS full_queries,
       sum((SELECT count(*) FROM unnest(got) x WHERE x = ANY (exact))) >= 490
         AS recall_ok
FROM so_q, LATERAL (SELECT pg_temp.ids(v, 10, false) AS got,
                           pg_temp.ids(v, 10, true) AS exact) s;

-- a quantized segment (its search runs on codes, then reranks exactly):
-- strict order holds there too
CREATE TABLE so_quant (id int PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO so_quant SELECT id, embedding FROM so_items WHERE id <= 4000;
CREATE INDEX so_quant_idx ON so_quant USING segvec (embedding)
    WITH (compact_threshold = 0, quantization = 'sq8');
SELECT num_segments, (segments -> 0 ->> 'quantization') AS quantization
FROM ft.info('so_quant_idx');
CREATE FUNCTION pg_temp.quant_inversions(q real[], k int, ef int, mode text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    r bigint;
BEGIN
    PERFORM set_config('segvec.ef_search', ef::text, true);
    PERFORM set_config('segvec.scan_order', mode, true);
    SELECT count(*) FILTER (WHERE d < prev) INTO r FROM (
        SELECT d, lag(d) OVER (ORDER BY n) AS prev FROM (
            SELECT row_number() OVER () AS n, d FROM (
                SELECT embedding <-> q AS d FROM so_quant
                ORDER BY embedding <-> q LIMIT k) s) s2) s3;
    PERFORM set_config('segvec.ef_search', '40', true);
    PERFORM set_config('segvec.scan_order', 'strict', true);
    RETURN r;
END
$$;
SELECT ef, count(*) FILTER (WHERE pg_temp.quant_inversions(v, 50, ef, 'strict') > 0)
         AS queries_out_of_order
FROM so_q, unnest(ARRAY[1, 10, 40]) ef
GROUP BY ef ORDER BY ef;
SELECT count(*) FILTER (WHERE pg_temp.quant_inversions(v, 50, 1, 'relaxed') > 0) > 0
         AS relaxed_has_late_finds
FROM so_q;

-- a bad value is refused
\set VERBOSITY terse
SET segvec.scan_order = 'sorted';
\set VERBOSITY default
SHOW segvec.scan_order;

DROP TABLE so_items, so_q, so_quant;

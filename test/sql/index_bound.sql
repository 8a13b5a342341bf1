-- The bound the segment searches of one scan share: the mutable
-- segment is scored first, then the graph segments are searched biggest
-- first, and a search whose candidates are all farther than the k-th
-- distance found so far stops early; the bound only shortens the first
-- rows' searches, so top-k, filtered and long scans return what they
-- return without it (segvec.shared_bound = off), and the exact answer
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

-- three graph segments (8,000, 3,000 and 1,000 docs) and 200 mutable docs;
-- the 1,000 lie far from the queries (every element + 3), as rows of
-- another time or topic would, so the bound stops their segment's search
-- (merge_ratio 0: tiers, which keep the three apart)
SET segvec.merge_ratio = 0;
CREATE TABLE sb_items (id int PRIMARY KEY, embedding real[], category int)
    WITH (autovacuum_enabled = off);
INSERT INTO sb_items
    SELECT i, pg_temp.vec(i, 16), i % 100 FROM generate_series(1, 8000) i;
-- quantization 'none' (not the default): what is counted below is the
-- unquantized search
CREATE INDEX sb_idx ON sb_items USING segvec (embedding)
    WITH (compact_threshold = 0, quantization = 'none');
ALTER INDEX sb_idx SET (compact_threshold = 1000000);
INSERT INTO sb_items
    SELECT i, pg_temp.vec(i, 16), i % 100 FROM generate_series(8001, 11000) i;
SELECT docs_compacted FROM ft.compact('sb_idx');
INSERT INTO sb_items
    SELECT i, (SELECT array_agg(x + 3 ORDER BY o)
               FROM unnest(pg_temp.vec(i, 16)) WITH ORDINALITY u(x, o)),
           i % 100
    FROM generate_series(11001, 12000) i;
SELECT docs_compacted FROM ft.compact('sb_idx');
INSERT INTO sb_items
    SELECT i, pg_temp.vec(i, 16), i % 100 FROM generate_series(12001, 12200) i;
RESET segvec.merge_ratio;
ANALYZE sb_items;
SELECT num_segments, mutable_docs, immutable_docs FROM ft.info('sb_idx');

CREATE TABLE sb_q (qid int PRIMARY KEY, v real[]);
INSERT INTO sb_q SELECT g, pg_temp.vec(200000 + g, 16) FROM generate_series(1, 5) g;

-- ids of a query through the index (bound on or off), or exactly
CREATE FUNCTION pg_temp.ids(query text, mode text) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    r int[];
BEGIN
    IF mode = 'exact' THEN
        PERFORM set_config('enable_indexscan', 'off', true);
        PERFORM set_config('enable_seqscan', 'on', true);
    ELSE
        PERFORM set_config('segvec.shared_bound', mode, true);
    END IF;
    EXECUTE format('SELECT ARRAY(%s)', query) INTO r;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('segvec.shared_bound', 'on', true);
    RETURN r;
END
$$;

SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM sb_items ORDER BY embedding <-> (SELECT v FROM sb_q WHERE qid = 1) LIMIT 10$$);

-- the index's buffer accesses of a query, bound on or off
CREATE FUNCTION pg_temp.bufs(query text, mode text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    b0 bigint := pg_stat_get_xact_blocks_fetched('sb_idx'::regclass);
BEGIN
    PERFORM pg_temp.ids(query, mode);
    RETURN pg_stat_get_xact_blocks_fetched('sb_idx'::regclass) - b0;
END
$$;

-- per query: top 10; a filter that keeps 1% of the rows (its rows come
-- after the first k, past searches the bound stopped); the ten nearest of
-- the far rows (the scan reaches them only after the 11,200 others, so
-- the stopped search goes on); and the first 500 rows (exact up to HNSW
-- recall)
CREATE VIEW sb_check AS
SELECT qid, kind,
       cardinality(got_on) AS nrows,
       got_on = got_off AS on_equals_off,
       CASE WHEN kind = 'first500'
            THEN (SELECT count(*) FROM unnest(got_on) x WHERE x = ANY (exact)) >= 475
            ELSE got_on = exact END AS exact_ok
FROM sb_q,
  LATERAL (VALUES
    ('top10', format('SELECT id FROM sb_items ORDER BY embedding <-> %L LIMIT 10', v)),
    ('filter1pct', format('SELECT id FROM sb_items WHERE category = 7 ORDER BY embedding <-> %L LIMIT 10', v)),
    ('far10', format('SELECT id FROM sb_items WHERE id > 11000 AND id <= 12000 ORDER BY embedding <-> %L LIMIT 10', v)),
    ('first500', format('SELECT id FROM sb_items ORDER BY embedding <-> %L LIMIT 500', v))
  ) k(kind, query),
  LATERAL (SELECT pg_temp.ids(query, 'on') AS got_on,
                  pg_temp.ids(query, 'off') AS got_off,
                  pg_temp.ids(query, 'exact') AS exact) s
ORDER BY qid, kind;
SELECT * FROM sb_check;

-- the bound spares buffer accesses: top 10 of the five queries, bound on
-- against off
SELECT sum(pg_temp.bufs(q, 'on')) < sum(pg_temp.bufs(q, 'off')) AS bound_saves
FROM (SELECT format('SELECT id FROM sb_items ORDER BY embedding <-> %L LIMIT 10', v) AS q
      FROM sb_q) s;

-- a graph segment of at most 1/8 of the scan's live docs is small: its
-- floor follows its share of the first k rows, and the bound stops its
-- search even while it holds docs within the bound (GraphScanSetBound);
-- here the small segment's 900 docs lie among the 8,000 others, so every
-- query has near docs in both segments (as in a streamed-into index under
-- the size-ratio merge policy)
SET segvec.merge_ratio = 0;
CREATE TABLE sb_small (id int PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO sb_small
    SELECT i, pg_temp.vec(i, 16) FROM generate_series(1, 8000) i;
-- quantization 'none' (not the default): what is counted below is the
-- unquantized search
CREATE INDEX sb_small_idx ON sb_small USING segvec (embedding)
    WITH (compact_threshold = 0, quantization = 'none');
ALTER INDEX sb_small_idx SET (compact_threshold = 1000000);
INSERT INTO sb_small
    SELECT i, pg_temp.vec(i, 16) FROM generate_series(8001, 8900) i;
SELECT docs_compacted FROM ft.compact('sb_small_idx');
RESET segvec.merge_ratio;
ANALYZE sb_small;
SELECT num_segments, mutable_docs, immutable_docs FROM ft.info('sb_small_idx');

CREATE FUNCTION pg_temp.small_bufs(v real[], mode text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    b0 bigint := pg_stat_get_xact_blocks_fetched('sb_small_idx'::regclass);
BEGIN
    PERFORM pg_temp.ids(format('SELECT id FROM sb_small ORDER BY embedding <-> %L LIMIT 10', v), mode);
    RETURN pg_stat_get_xact_blocks_fetched('sb_small_idx'::regclass) - b0;
END
$$;

-- per query: the top 10 with the bound on, off and exactly, and how many
-- of the nearest 10 lie in the small segment
SELECT qid, got_on = exact AS on_exact, got_off = exact AS off_exact,
       (SELECT count(*) FROM unnest(exact) x WHERE x > 8000) AS in_small
FROM sb_q,
  LATERAL (SELECT format('SELECT id FROM sb_small ORDER BY embedding <-> %L LIMIT 10', v) AS query) k,
  LATERAL (SELECT pg_temp.ids(query, 'on') AS got_on,
                  pg_temp.ids(query, 'off') AS got_off,
                  pg_temp.ids(query, 'exact') AS exact) s
ORDER BY qid;
-- and the bound spares at least a tenth of the buffer accesses of the five
-- queries (0.80 of bound off; the rule before, searching a small segment
-- in full while it held a doc within the bound, 0.97)
SELECT sum(pg_temp.small_bufs(v, 'on')) < 0.9 * sum(pg_temp.small_bufs(v, 'off')) AS small_pruned
FROM sb_q;

DROP VIEW sb_check;
DROP TABLE sb_items, sb_q, sb_small;

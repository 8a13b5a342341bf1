-- Postings of graph segments' filter columns: an equality, range or = ANY
-- filter on a column with postings counts each segment's passing docs without
-- reading its filter area, skips a segment where none pass, and scores a
-- segment's few passing docs from the postings' lists.  Each filtered top-k
-- through the index equals the exact answer (index scans off) and has
-- min(k, passing) rows: a tenant absent from a segment, a tiny tenant, a
-- big one, = ANY lists, ranges, two filter columns, a hashed (text)
-- column, a value no row has; after UPDATEs of the filter column, DELETE
-- and VACUUM, and merges.  client_min_messages = debug1 shows what the
-- postings did.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
SET jit = off;
SET maintenance_work_mem = '32MB';
\set vectors_sql :abs_srcdir '/sql/include/vectors.sql'
\i :vectors_sql

-- two graph segments of 3,000 rows: tenant 1 has a third of each; tenants
-- 100 to 199 (about 20 rows each) are only in the first, 200 to 299 only
-- in the second, with tenant 7 (5 rows); cat is text, 7 values; rid is
-- unique (too many values: no postings)
CREATE TABLE fp_docs (id int PRIMARY KEY, embedding real[], tenant int,
    cat text, rid int) WITH (autovacuum_enabled = off);
CREATE INDEX fp_idx ON fp_docs USING segvec (embedding, tenant, cat, rid)
    INCLUDE (id) WITH (compact_threshold = 1000000);
-- the two segments stay apart until the merge below
SET segvec.max_merge_docs = 3000;
INSERT INTO fp_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i % 3 = 0 THEN 1 ELSE 100 + i % 100 END,
           'c' || (i % 7), i
    FROM generate_series(1, 3000) i;
SELECT docs_compacted FROM ft.compact('fp_idx');
INSERT INTO fp_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i <= 3005 THEN 7 WHEN i % 3 = 0 THEN 1 ELSE 200 + i % 100 END,
           'c' || (i % 7), i
    FROM generate_series(3001, 6000) i;
SELECT docs_compacted FROM ft.compact('fp_idx');
-- and a few rows in the mutable segment
INSERT INTO fp_docs
    SELECT i, pg_temp.vec(i, 8), 200 + i % 100, 'c' || (i % 7), i
    FROM generate_series(6001, 6050) i;
SELECT num_segments, mutable_docs FROM ft.info('fp_idx');
ANALYZE fp_docs;

CREATE TABLE fp_q (n int, v real[]);
INSERT INTO fp_q SELECT n, pg_temp.vec(100000 + n, 8) FROM generate_series(1, 3) n;
\set docs fp_docs
\set queries fp_q
\set topk_sql :abs_srcdir '/sql/include/topk.sql'
\i :topk_sql

CREATE TABLE fp_conds (cond text);
INSERT INTO fp_conds VALUES
    ('tenant = 150'),                   -- first segment only
    ('tenant = 250'),                   -- second segment and mutable
    ('tenant = 7'),                     -- 5 rows, second segment
    ('tenant = 1'),                     -- a third: walked
    ('tenant = 99999'),                 -- no row
    ('tenant IN (7, 150, 250)'),        -- = ANY: lists of three values
    ('tenant IN (99998, 99999)'),       -- = ANY of values no row has
    ('tenant < 8'),                     -- a range: tenants 1 and 7
    ('tenant BETWEEN 150 AND 152'),     -- two keys, one range of 3 values
    ('tenant > 298'),                   -- a range of one value
    ('tenant >= 300'),                  -- a range no row is in
    ('tenant >= 7 AND tenant <= 7'),    -- a range of one value, twice
    ('tenant = 150 AND cat = ''c3'''),  -- a list, the other key on entries
    ('tenant = 1 AND cat = ''c3'''),    -- many and another key: sampled
    ('cat = ''c3'''),                   -- hashed: walked, rechecked
    ('cat = ''none'''),                 -- hashed, no row
    ('rid = 4321'),                     -- no postings: the filter area
    ('tenant = 7 AND rid = 3003');      -- a list, a column without postings

CREATE FUNCTION pg_temp.check_all()
RETURNS TABLE (cond text, passing bigint, rows_10 int, rows_50 int,
               exact boolean)
LANGUAGE sql AS $$
    SELECT c.cond, r.* FROM fp_conds c, pg_temp.check(c.cond) r
$$;

SELECT * FROM pg_temp.check_all();

-- what the postings did, per filter: DEBUG1 says, for the graph segments,
-- how many were skipped or scored from lists; more passing docs are walked
-- as without postings, and print no line (an = ANY key is
-- an index key from PostgreSQL 17 only: filter_postings_1.out has its
-- line, this file has none; rid has no postings, so no line)
CREATE FUNCTION pg_temp.one(cond text) RETURNS int[]
LANGUAGE plpgsql AS $$
BEGIN
    RETURN pg_temp.topk(cond, 1, 10, false);
END
$$;
SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('tenant = 150')) AS n;
SELECT cardinality(pg_temp.one('tenant = 250')) AS n;
SELECT cardinality(pg_temp.one('tenant = 7')) AS n;
SELECT cardinality(pg_temp.one('tenant = 1')) AS n;
SELECT cardinality(pg_temp.one('tenant = 99999')) AS n;
SELECT cardinality(pg_temp.one('tenant IN (7, 150, 250)')) AS n;
SELECT cardinality(pg_temp.one('tenant = 150 AND cat = ''c3''')) AS n;
SELECT cardinality(pg_temp.one('tenant BETWEEN 150 AND 152')) AS n;
SELECT cardinality(pg_temp.one('tenant > 298')) AS n;
SELECT cardinality(pg_temp.one('tenant < 8')) AS n;
SELECT cardinality(pg_temp.one('cat = ''none''')) AS n;
SELECT cardinality(pg_temp.one('rid = 4321')) AS n;
RESET client_min_messages;

-- UPDATE of the filter column (the old versions stay in the segments'
-- postings under their old values), DELETE and VACUUM (tombstones)
UPDATE fp_docs SET tenant = 7 WHERE id IN (10, 11, 4000, 4001);
UPDATE fp_docs SET tenant = 150 WHERE id IN (3010, 3011);
DELETE FROM fp_docs WHERE tenant = 150 AND id % 2 = 0;
DELETE FROM fp_docs WHERE id IN (3002, 3004);
VACUUM fp_docs;
SELECT * FROM pg_temp.check_all();

-- the updated rows into graph segments, merged with the others: the
-- merged segment's postings come from the kept docs' entries
RESET segvec.max_merge_docs;
SELECT docs_compacted > 0 AS compacted FROM ft.compact('fp_idx');
SELECT num_segments, mutable_docs, tombstones FROM ft.info('fp_idx');
SELECT * FROM pg_temp.check_all();
SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('tenant = 7')) AS n;
SELECT cardinality(pg_temp.one('tenant = 99999')) AS n;
RESET client_min_messages;
SELECT missing_docs, checksum_mismatches, search_misses FROM ft.verify('fp_idx');

-- segvec.filter_postings = off: the filter values of every segment are
-- read, as without postings; the same answers, and no DEBUG1 line
SET segvec.filter_postings = off;
SELECT * FROM pg_temp.check_all();
SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('tenant = 7')) AS n;
RESET client_min_messages;
RESET segvec.filter_postings;

DROP TABLE fp_docs, fp_q, fp_conds;

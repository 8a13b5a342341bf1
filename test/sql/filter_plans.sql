-- The planner's choice between a segvec index on the vector alone (with
-- the filter applied after it), a segvec index with the filter column, and
-- a btree on the filter column plus a sort.  An ordered scan whose rows a
-- filter above it thins out to a fraction s must read k / s rows for LIMIT
-- k, each costing a search that goes on: so at 10% the index with the
-- filter column wins (on clustered data, where the passing rows lie far
-- from the query, filtering after the plain index read most of it), and
-- the btree still wins for a single row.  On a column with postings (few
-- distinct values) the scan reads the passing docs' node numbers and
-- scores those docs, nothing else of the segment, and fetches only the
-- rows the LIMIT takes; the btree and a sort fetch every passing row.  So
-- with a btree on the column too, the index with the filter column wins
-- at 1%, and at 0.1% when more rows pass than the LIMIT takes, but not for
-- a single row.  A label array's postings name the docs whose signature
-- has a label's bits; the executor rechecks their rows, so a rare label
-- whose bits are common labels' bits (many signature matches) goes through
-- a GIN index and a sort, one with bits of its own through the index.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_sql :abs_srcdir '/sql/include/plan.sql'
\i :plan_sql
SET jit = off;
SET maintenance_work_mem = '32MB';

-- vec(i, d), noise(i, d), point(cluster, i): deterministic vectors
\set vectors_sql :abs_srcdir '/sql/include/vectors.sql'
\i :vectors_sql

-- 6,000 rows in 20 clusters of 16 dimensions (row i is point(i % 20, i));
-- far10: the 2 clusters farthest from cluster 0's centre (10%); tenant:
-- every tenth row of each cluster (10%, independent of the vector); grp:
-- 1%; rid: one row each; shard: 1,000 values of 6 rows (0.1%); lot: rows 1
-- to 1,000 one value each, the others 0 (shard and lot have at most 1,024
-- distinct values, so the segment has postings of them; rid has too many);
-- tags: label 50 on every fifth row, 64 on every sixth, 101 (0.1%, 6 rows)
-- and 102 (1%); 101's two signature bits are one of 50's and one of 64's,
-- so the 200 rows with both labels pass its signature; 102's are its own
CREATE TABLE fp_far AS
    SELECT k, row_number() OVER (ORDER BY l2_distance(
        pg_temp.point(k, 0), pg_temp.point(0, 0)) DESC, k) AS rank
    FROM generate_series(0, 19) k;
CREATE TABLE fp_docs (id int PRIMARY KEY, embedding real[], far10 int,
    tenant int, grp int, rid int, shard int, lot int, tags int4[]);
INSERT INTO fp_docs
    SELECT i, pg_temp.point(i % 20, i), (f.rank <= 2)::int, (i / 20) % 10,
           (i / 20) % 100, i, i % 1000, CASE WHEN i <= 1000 THEN i ELSE 0 END,
           array_remove(ARRAY[CASE WHEN i % 5 = 0 THEN 50 END,
                              CASE WHEN i % 6 = 0 THEN 64 END,
                              CASE WHEN i % 1000 = 7 THEN 101 END,
                              CASE WHEN i % 100 = 3 THEN 102 END], NULL)
    FROM generate_series(1, 6000) i JOIN fp_far f ON f.k = i % 20;
CREATE TABLE fp_q (n int, v real[]);
INSERT INTO fp_q VALUES (1, pg_temp.point(0, 100001));

-- every row in graph segments: no background work changes them
CREATE INDEX fp_plain ON fp_docs USING segvec (embedding)
    WITH (compact_threshold = 0);
CREATE INDEX fp_filter ON fp_docs USING segvec
    (embedding, far10, tenant, grp, rid, shard, lot, tags)
    WITH (compact_threshold = 0);
CREATE INDEX fp_rid ON fp_docs (rid);
CREATE INDEX fp_grp ON fp_docs (grp);
CREATE INDEX fp_shard ON fp_docs (shard);
CREATE INDEX fp_lot ON fp_docs (lot);
CREATE INDEX fp_tags ON fp_docs USING gin (tags);
ANALYZE fp_docs;

-- 10% far from the query, 10% independent of it, 1% (with a btree on
-- the column): the filter column
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE far10 = 1
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE tenant = 3
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE grp = 42
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 10$$);
-- one row: the btree and a sort
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE rid = 1234
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 10$$);
-- 0.1% (6 rows, the nearest one) through the index with the filter column,
-- one row through the btree
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE shard = 7
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 1$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE lot = 123
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 10$$);
-- label 102 (60 rows, as many signature matches) through the index with
-- the filter column; 101 (6 rows, 206 signature matches) through the GIN
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE tags && '{102}'
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fp_docs WHERE tags && '{101}'
    ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1) LIMIT 10$$);
-- the same answers as without any index
CREATE FUNCTION pg_temp.ids(cond text, exact bool) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    r int[];
BEGIN
    IF exact THEN
        PERFORM set_config('enable_indexscan', 'off', true);
        PERFORM set_config('enable_bitmapscan', 'off', true);
    END IF;
    EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM fp_docs
        WHERE %s ORDER BY embedding <-> (SELECT v FROM fp_q WHERE n = 1)
        LIMIT 10) s', cond) INTO r;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    RETURN r;
END
$$;
SELECT c, cardinality(pg_temp.ids(c, false)) AS rows,
       pg_temp.ids(c, false) = pg_temp.ids(c, true) AS exact
FROM unnest(ARRAY['far10 = 1', 'tenant = 3', 'grp = 42', 'rid = 1234',
                  'shard = 7', 'lot = 123', 'tags && ''{102}''',
                  'tags && ''{101}''']) c;

DROP TABLE fp_docs, fp_q, fp_far;

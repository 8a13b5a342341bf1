-- Filter columns on clustered data, where the rows that pass lie far from
-- the queries (the hard case for a graph walk), near them, or are spread
-- evenly: at 50%, 10%, 1%, 0.1% and 0.01% selectivity a filtered top 10
-- returns exactly min(10, passing) rows, in non-decreasing distance, with
-- recall@10 >= 0.95 against the exact filtered answer; so does a filter
-- whose rows lie mostly far away but a few, scattered, near the queries,
-- and a top 100 of the far filters; on a fresh index, after rows streamed
-- in and compacted, and with unquantized segments.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
SET jit = off;
SET maintenance_work_mem = '64MB';

-- vec(i, d), noise(i, d), point(cluster, i): deterministic vectors
\set vectors_sql :abs_srcdir '/sql/include/vectors.sql'
\i :vectors_sql

-- 30,000 rows in 20 clusters of 16 dimensions (row i is point(i % 20, i));
-- clusters by distance from cluster 0's centre, farthest first
CREATE TABLE fr_far AS
    SELECT k, row_number() OVER (ORDER BY l2_distance(
        pg_temp.point(k, 0), pg_temp.point(0, 0)) DESC, k) AS rank
    FROM generate_series(0, 19) k;

-- the filter columns: far50 the 10 farthest clusters (50%), far10 the 2
-- farthest (10%), far1, far01 and far001 a fifth, a fiftieth and a
-- five-hundredth of the farthest (1%, 0.1%, 0.01%); near10 the queries'
-- own cluster and the nearest other one (10%, correlated with the
-- queries); mixed the farthest cluster and every hundredth row of the
-- queries' own (5%: the few near rows are what a top 10 wants, each
-- among failing ones); half every other row of each cluster (50%,
-- independent of the vector); labels, a label array: 100 + the
-- cluster's rank and 200 + a tenth of each cluster's rows
CREATE TABLE fr_docs (id int PRIMARY KEY, embedding real[], far50 int,
    far10 int, far1 int, far01 int, far001 int, near10 int, mixed int,
    half int, labels int4[]);
CREATE FUNCTION pg_temp.load(lo int, hi int) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO fr_docs
    SELECT i, pg_temp.point(i % 20, i),
        (f.rank <= 10)::int, (f.rank <= 2)::int,
        (f.rank = 1 AND (i / 20) % 5 = 0)::int,
        (f.rank = 1 AND (i / 20) % 50 = 0)::int,
        (f.rank = 1 AND (i / 20) % 500 = 0)::int,
        (f.rank >= 19)::int,
        (f.rank = 1 OR (f.rank = 20 AND (i / 20) % 100 = 0))::int,
        (i / 20) % 2,
        ARRAY[100 + f.rank, 200 + (i / 20) % 10]::int4[]
    FROM generate_series(lo, hi) i JOIN fr_far f ON f.k = i % 20
$$;

-- twenty queries near cluster 0's centre (recall over 200 rows: over 50,
-- one row that a walk misses for a few queries decides a check)
CREATE TABLE fr_q (n int, v real[]);
INSERT INTO fr_q SELECT n, pg_temp.point(0, 100000 + n) FROM generate_series(1, 20) n;

-- ids of the filtered top k (index or exact), and the index's distances
CREATE FUNCTION pg_temp.topk(cond text, qn int, exact bool, k int,
    OUT ids int[], OUT dists float8[])
LANGUAGE plpgsql AS $$
BEGIN
    IF exact THEN
        PERFORM set_config('enable_indexscan', 'off', true);
    ELSE
        PERFORM set_config('enable_seqscan', 'off', true);
        PERFORM set_config('enable_sort', 'off', true);
        PERFORM set_config('enable_bitmapscan', 'off', true);
    END IF;
    EXECUTE format('SELECT coalesce(array_agg(id ORDER BY r), ''{}''),
            coalesce(array_agg(d ORDER BY r), ''{}'') FROM (
        SELECT id, embedding <-> (SELECT v FROM fr_q WHERE n = $1) AS d,
            row_number() OVER () AS r
        FROM (SELECT id, embedding FROM fr_docs WHERE %s
            ORDER BY embedding <-> (SELECT v FROM fr_q WHERE n = $1)
            LIMIT $2) s) t', cond)
        INTO ids, dists USING qn, k;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_sort', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
END
$$;

-- per condition: rows that pass; whether every query got exactly
-- min(k, passing) rows, in non-decreasing distance; recall@k >= 0.95
CREATE FUNCTION pg_temp.check(cond text, k int = 10) RETURNS TABLE (
    passing bigint, rows_ok boolean, ordered boolean, recall_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
    q int;
    got record;
    want record;
    hits int := 0;
    total int := 0;
BEGIN
    EXECUTE format('SELECT count(*) FROM fr_docs WHERE %s', cond) INTO passing;
    rows_ok := true;
    ordered := true;
    FOR q IN 1..20 LOOP
        got := pg_temp.topk(cond, q, false, k);
        want := pg_temp.topk(cond, q, true, k);
        rows_ok := rows_ok AND cardinality(got.ids) = least(k, passing);
        ordered := ordered AND coalesce((SELECT bool_and(got.dists[j] <= got.dists[j + 1])
            FROM generate_series(1, cardinality(got.dists) - 1) j), true);
        hits := hits + (SELECT count(*) FROM unnest(got.ids) g
                        WHERE g = ANY (want.ids));
        total := total + cardinality(want.ids);
    END LOOP;
    recall_ok := total = 0 OR hits::float8 / total >= 0.95;
    IF NOT recall_ok THEN
        RAISE NOTICE 'recall of %: %', cond, hits::float8 / total;
    END IF;
    RETURN NEXT;
END
$$;

CREATE TABLE fr_cols (cond text, what text);
INSERT INTO fr_cols VALUES ('half = 1', '50%, independent'),
    ('far50 = 1', '50%, far'), ('far10 = 1', '10%, far'),
    ('far1 = 1', '1%, far'), ('far01 = 1', '0.1%, far'),
    ('far001 = 1', '0.01%, far'), ('near10 = 1', '10%, near'),
    ('mixed = 1', '5%, mostly far'),
    ('labels && ''{101,102}''', '10%, far, labels &&'),
    ('labels @> ''{101,200}''', '0.5%, far, labels @>');

-- fresh: one graph segment
SELECT pg_temp.load(1, 30000);
CREATE INDEX fr_idx ON fr_docs USING segvec
    (embedding, far50, far10, far1, far01, far001, near10, mixed, half,
     labels)
    WITH (compact_threshold = 0);
ANALYZE fr_docs;
SELECT c.what, r.* FROM fr_cols c, pg_temp.check(c.cond) r;
-- a longer read: the far filters' top 100
SELECT c.what, r.* FROM fr_cols c, pg_temp.check(c.cond, 100) r
WHERE c.cond IN ('far50 = 1', 'far10 = 1', 'mixed = 1');

-- streamed: rows inserted after the build (kept in the mutable segment:
-- no background compaction meanwhile), then compacted into another graph
-- segment (VACUUM) and merged
ALTER INDEX fr_idx SET (compact_threshold = 1000000);
SELECT pg_temp.load(30001, 40000);
SELECT c.what, r.* FROM fr_cols c, pg_temp.check(c.cond) r;
ALTER INDEX fr_idx SET (compact_threshold = 0);
VACUUM fr_docs;
SELECT c.what, r.* FROM fr_cols c, pg_temp.check(c.cond) r;

-- unquantized segments (the walk reads the vectors)
DROP INDEX fr_idx;
CREATE INDEX fr_idx ON fr_docs USING segvec
    (embedding, far50, far10, far1, far01, far001, near10, mixed, half,
     labels)
    WITH (compact_threshold = 0, quantization = 'none');
SELECT c.what, r.* FROM fr_cols c, pg_temp.check(c.cond) r;
SELECT c.what, r.* FROM fr_cols c, pg_temp.check(c.cond, 100) r
WHERE c.cond IN ('far50 = 1', 'far10 = 1', 'mixed = 1');
DROP TABLE fr_docs, fr_q, fr_far, fr_cols;

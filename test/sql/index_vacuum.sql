-- DELETE, UPDATE and VACUUM (case B03): dead rows never take the place of
-- live ones in a top-k, VACUUM removes their docs, and the space of
-- emptied pages is reused
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
-- 5,000 rows, autovacuum off so that only our VACUUMs run
CREATE TABLE vac_items (id bigint PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO vac_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(1, 5000) i;
CREATE INDEX vac_items_embedding_idx ON vac_items USING segvec (embedding);
ANALYZE vac_items;
CREATE TABLE vac_q (v real[]);
INSERT INTO vac_q VALUES (pg_temp.vec(100001, 16));

-- delete the 1,000 rows nearest the query, chosen with the index disabled
SET enable_indexscan = off;
SET enable_bitmapscan = off;
DELETE FROM vac_items WHERE id IN (
    SELECT id FROM vac_items ORDER BY embedding <-> (SELECT v FROM vac_q)
    LIMIT 1000);
RESET enable_indexscan;
RESET enable_bitmapscan;

-- before VACUUM: the index scan wades through 1,000 dead docs and still
-- returns the exact top-10 over the live rows
SELECT k, c.*
FROM (VALUES (1), (10), (100)) k(k),
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
        FROM vac_items ORDER BY dist LIMIT %s$$, k)) c
ORDER BY k;

-- after VACUUM: the same, and the index holds only the 4,000 live docs
VACUUM vac_items;
SELECT k, c.*
FROM (VALUES (1), (10), (100)) k(k),
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
        FROM vac_items ORDER BY dist LIMIT %s$$, k)) c
ORDER BY k;
SELECT reltuples FROM pg_class WHERE relname = 'vac_items_embedding_idx';
-- every live row's own vector finds it first (checked for every 10th id)
SET enable_seqscan = off;
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE (SELECT b.id FROM vac_items b
                               ORDER BY b.embedding <-> a.embedding
                               LIMIT 1) = a.id) AS found_by_own_vector
FROM vac_items a WHERE a.id % 10 = 0;
RESET enable_seqscan;

-- UPDATE instead of DELETE: move the 1,000 rows nearest the query far
-- away; their old versions must not be returned
TRUNCATE vac_items;
INSERT INTO vac_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(1, 5000) i;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE vac_moved AS
SELECT id FROM vac_items ORDER BY embedding <-> (SELECT v FROM vac_q)
LIMIT 1000;
RESET enable_indexscan;
RESET enable_bitmapscan;
UPDATE vac_items SET embedding = (SELECT array_agg(x + 100) FROM unnest(embedding) x)
WHERE id IN (SELECT id FROM vac_moved);
SELECT k, c.*
FROM (VALUES (1), (10), (100)) k(k),
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
        FROM vac_items ORDER BY dist LIMIT %s$$, k)) c
ORDER BY k;
-- none of the moved rows is near the query any more, but each is found
-- at its new place
SET enable_seqscan = off;
SELECT count(*) AS moved_in_top_1000
FROM (SELECT id FROM vac_items ORDER BY embedding <-> (SELECT v FROM vac_q)
      LIMIT 1000) s
WHERE id IN (SELECT id FROM vac_moved);
SELECT count(*) AS moved_rows_checked,
       count(*) FILTER (WHERE (SELECT b.id FROM vac_items b
                               ORDER BY b.embedding <-> a.embedding
                               LIMIT 1) = a.id) AS found_by_own_vector
FROM vac_items a
WHERE a.id IN (SELECT id FROM vac_moved) AND a.id % 4 = 0;
RESET enable_seqscan;
VACUUM vac_items;
SELECT k, c.*
FROM (VALUES (1), (10), (100)) k(k),
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
        FROM vac_items ORDER BY dist LIMIT %s$$, k)) c
ORDER BY k;
SELECT reltuples FROM pg_class WHERE relname = 'vac_items_embedding_idx';

-- an UPDATE that leaves the vector alone (HOT or not) changes nothing
ALTER TABLE vac_items ADD COLUMN note text;
UPDATE vac_items SET note = 'x' WHERE id % 2 = 0;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
    FROM vac_items ORDER BY dist LIMIT 10$$);

-- interleaved deletes, inserts and vacuums
DELETE FROM vac_items WHERE id % 3 = 0;
INSERT INTO vac_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(5001, 6000) i;
VACUUM vac_items;
DELETE FROM vac_items WHERE id % 5 = 0;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
    FROM vac_items ORDER BY dist LIMIT 10$$);
VACUUM vac_items;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
    FROM vac_items ORDER BY dist LIMIT 10$$);
SELECT reltuples = (SELECT count(*) FROM vac_items) AS index_counts_live_rows
FROM pg_class WHERE relname = 'vac_items_embedding_idx';

-- the index does not grow without bound: delete everything, VACUUM twice,
-- re-insert as many rows as before.  The first VACUUM unlinks the emptied
-- pages and stamps them with the next transaction id; once a transaction
-- with that id has finished, the second VACUUM hands them to the free
-- space map and the inserts reuse them.
-- Recycling waits until no snapshot is older than the unlink: keep
-- background compaction away from this index, and let jobs that other
-- suites left running finish, so that no worker's snapshot holds it back.
ALTER INDEX vac_items_embedding_idx SET (compact_threshold = 1000000);
CREATE FUNCTION pg_temp.wait_for_jobs() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 6000 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM ft.jobs);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
TRUNCATE vac_items;
INSERT INTO vac_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(1, 5000) i;
CREATE TEMP TABLE vac_size AS
SELECT pg_relation_size('vac_items_embedding_idx') AS before;
DELETE FROM vac_items;
SELECT pg_temp.wait_for_jobs();
VACUUM vac_items;
SELECT txid_current() IS NOT NULL AS xid_consumed;
VACUUM vac_items;
INSERT INTO vac_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(1, 5000) i;
SELECT pg_relation_size('vac_items_embedding_idx') <= before * 1.05 + 8192 * 4
       AS size_bounded
FROM vac_size;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
    FROM vac_items ORDER BY dist LIMIT 10$$);
-- and once more
DELETE FROM vac_items;
SELECT pg_temp.wait_for_jobs();
VACUUM vac_items;
SELECT txid_current() IS NOT NULL AS xid_consumed;
VACUUM vac_items;
INSERT INTO vac_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(1, 5000) i;
SELECT pg_relation_size('vac_items_embedding_idx') <= before * 1.05 + 8192 * 4
       AS size_bounded
FROM vac_size;
SELECT * FROM pg_temp.knn_check($$
    SELECT id, embedding <-> (SELECT v FROM vac_q) AS dist
    FROM vac_items ORDER BY dist LIMIT 10$$);

DROP TABLE vac_items, vac_q, vac_moved, vac_size;

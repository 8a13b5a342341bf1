-- NULL vectors, NULL query vectors, zero vectors and non-finite elements
-- (case B05), and NULLs in a per-row lateral search (case B15).
--
-- The rules (src/segvecscan.c): rows whose vector is NULL are not in the
-- index, so no index scan returns them; a NULL query vector returns every
-- indexed row, in index order; with cosine distance a zero vector's
-- distance is NaN, and NaN sorts after every number.
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

-- B05
CREATE TABLE nul_items (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO nul_items VALUES
    (1, '{0,0,0}'), (2, '{1,2,3}'), (3, '{1,1,1}'), (4, NULL);
CREATE INDEX nul_items_embedding_idx ON nul_items
    USING segvec (embedding vector_cosine_ops);
INSERT INTO nul_items VALUES (5, '{1,2,4}');
ANALYZE nul_items;

SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM nul_items ORDER BY embedding <=> '{1,1,1}' LIMIT 10$$);
-- the zero vector (NaN) comes last, the NULL vector not at all
SELECT id, embedding <=> '{1,1,1}' AS dist
FROM nul_items ORDER BY dist LIMIT 10;
-- the sequential scan also puts NaN after every number, and the NULL
-- distance after NaN
SET enable_seqscan = on;
SET enable_indexscan = off;
SELECT id, embedding <=> '{1,1,1}' AS dist
FROM nul_items ORDER BY dist LIMIT 10;
RESET enable_indexscan;
SET enable_seqscan = off;

-- zero query vector: every distance is NaN; every indexed row, each time
SELECT count(*) AS nrows, array_agg(id ORDER BY id) AS ids,
       bool_and(dist = 'NaN') AS all_nan
FROM (SELECT id, embedding <=> '{0,0,0}' AS dist
      FROM nul_items ORDER BY dist LIMIT 10) s;
SELECT count(*) AS nrows, array_agg(id ORDER BY id) AS ids
FROM (SELECT id FROM nul_items
      ORDER BY embedding <=> '{0,0,0}' LIMIT 10) s;
SELECT count(*) AS nrows
FROM (SELECT id FROM nul_items
      ORDER BY embedding <=> '{0,0,0}' LIMIT 2) s;

-- NULL query vector (a parameter, so the planner cannot fold it away):
-- every indexed row, each time
SELECT * FROM pg_temp.plan($$
SELECT id FROM nul_items
ORDER BY embedding <=> (SELECT NULL::real[]) LIMIT 10$$);
SELECT count(*) AS nrows, array_agg(id ORDER BY id) AS ids
FROM (SELECT id FROM nul_items
      ORDER BY embedding <=> (SELECT NULL::real[]) LIMIT 10) s;
SELECT count(*) AS nrows, array_agg(id ORDER BY id) AS ids
FROM (SELECT id FROM nul_items
      ORDER BY embedding <=> (SELECT NULL::real[]) LIMIT 10) s;
SELECT count(*) AS nrows
FROM (SELECT id FROM nul_items
      ORDER BY embedding <=> (SELECT NULL::real[]) LIMIT 3) s;
-- a prepared statement with a NULL parameter, generic plan (index scan)
SET plan_cache_mode = force_generic_plan;
PREPARE nul_knn(real[]) AS
    SELECT count(*) AS nrows, array_agg(id) AS ids
    FROM (SELECT id FROM (SELECT id FROM nul_items
                          ORDER BY embedding <=> $1 LIMIT 10) s
          ORDER BY id) s2;
SELECT * FROM pg_temp.plan($$EXECUTE nul_knn(NULL)$$);
EXECUTE nul_knn(NULL);
EXECUTE nul_knn(NULL);
EXECUTE nul_knn('{1,1,1}');
DEALLOCATE nul_knn;
RESET plan_cache_mode;

-- NaN and infinite elements are rejected at INSERT and UPDATE; the table
-- and the index stay as they were
\set VERBOSITY terse
INSERT INTO nul_items VALUES (6, '{NaN,1,1}');
INSERT INTO nul_items VALUES (6, '{1,Infinity,1}');
INSERT INTO nul_items VALUES (6, '{1,1,-Infinity}');
INSERT INTO nul_items VALUES (6, '{1,1,1}'), (7, '{1,NaN,1}');
UPDATE nul_items SET embedding = '{NaN,NaN,NaN}' WHERE id = 2;
-- NULL elements too
INSERT INTO nul_items VALUES (6, '{1,NULL,1}');
-- and as query vectors
SELECT id FROM nul_items ORDER BY embedding <=> '{NaN,1,1}' LIMIT 10;
SELECT id FROM nul_items ORDER BY embedding <=> '{1,1,Infinity}' LIMIT 10;
\set VERBOSITY default
SELECT count(*) AS heap_rows, count(embedding) AS non_null FROM nul_items;
SELECT count(*) AS index_rows, array_agg(id ORDER BY id) AS ids
FROM (SELECT id FROM nul_items
      ORDER BY embedding <=> '{1,2,3}' LIMIT 100) s;
SELECT id, embedding <=> '{1,2,3}' AS dist
FROM nul_items ORDER BY dist LIMIT 1;
RESET enable_seqscan;

-- an index cannot be built over a NaN element
DROP INDEX nul_items_embedding_idx;
CREATE TABLE nul_nan (id int, embedding real[]);
INSERT INTO nul_nan VALUES (1, '{1,1,1}'), (2, '{1,NaN,1}');
\set VERBOSITY terse
CREATE INDEX ON nul_nan USING segvec (embedding);
\set VERBOSITY default
DROP TABLE nul_nan;

-- an l2 index over the same rows: the zero vector is an ordinary point,
-- the NULL vector still not indexed
CREATE INDEX nul_items_l2_idx ON nul_items USING segvec (embedding);
SET enable_seqscan = off;
SELECT id, embedding <-> '{0,0,0}' AS dist
FROM nul_items ORDER BY dist LIMIT 10;
RESET enable_seqscan;

-- B15: a per-row (lateral) search over 300 rows, every third embedding NULL
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
CREATE TABLE nul_lat (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO nul_lat
SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE pg_temp.vec(i, 16) END
FROM generate_series(1, 300) i;
CREATE INDEX nul_lat_embedding_idx ON nul_lat
    USING segvec (embedding vector_cosine_ops);
ANALYZE nul_lat;

-- each row's two nearest neighbours, through the index (a SubPlan
-- rescanned once per row) and exactly
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT a.id, (SELECT array_agg(id) FROM (SELECT b.id FROM nul_lat b
                                         ORDER BY b.embedding <=> a.embedding
                                         LIMIT 2) s) AS nn
FROM nul_lat a$$);
CREATE TEMP TABLE nul_lat_index AS
SELECT a.id, a.embedding IS NULL AS null_query,
       (SELECT array_agg(id) FROM (SELECT b.id FROM nul_lat b
                                   ORDER BY b.embedding <=> a.embedding
                                   LIMIT 2) s) AS nn
FROM nul_lat a;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE nul_lat_exact AS
SELECT a.id, a.embedding IS NULL AS null_query,
       (SELECT array_agg(id) FROM (SELECT b.id FROM nul_lat b
                                   ORDER BY b.embedding <=> a.embedding
                                   LIMIT 2) s) AS nn
FROM nul_lat a;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- B15's query itself, a lateral join through the index, with and without
-- Memoize
SET enable_seqscan = off;
SET enable_memoize = off;
SELECT * FROM pg_temp.plan($$
SELECT a.id, nn.id
FROM nul_lat a
     CROSS JOIN LATERAL (SELECT b.id FROM nul_lat b
                         ORDER BY b.embedding <=> a.embedding LIMIT 2) nn$$);
SELECT count(*) AS pairs, count(DISTINCT a.id) AS queries
FROM nul_lat a
     CROSS JOIN LATERAL (SELECT b.id FROM nul_lat b
                         ORDER BY b.embedding <=> a.embedding LIMIT 2) nn;
RESET enable_memoize;
SELECT count(*) AS pairs, count(DISTINCT a.id) AS queries
FROM nul_lat a
     CROSS JOIN LATERAL (SELECT b.id FROM nul_lat b
                         ORDER BY b.embedding <=> a.embedding LIMIT 2) nn;
RESET enable_seqscan;

-- rows with a vector: two neighbours, the row itself first, equal to the
-- exact answer; no NULL-embedding row among them
SELECT count(*) AS queries,
       bool_and(cardinality(i.nn) = 2) AS two_each,
       bool_and(i.nn[1] = i.id) AS self_first,
       bool_and(i.nn = e.nn) AS same_as_exact,
       bool_and(NOT EXISTS (SELECT FROM nul_lat b
                            WHERE b.id = ANY (i.nn) AND b.embedding IS NULL))
           AS no_null_neighbours
FROM nul_lat_index i JOIN nul_lat_exact e USING (id)
WHERE NOT i.null_query;
-- rows with a NULL vector: two indexed rows each (the NULL query rule)
SELECT count(*) AS queries,
       bool_and(cardinality(nn) = 2) AS two_each,
       bool_and(NOT EXISTS (SELECT FROM nul_lat b
                            WHERE b.id = ANY (nn) AND b.embedding IS NULL))
           AS only_indexed_rows
FROM nul_lat_index WHERE null_query;
-- the sequential scan never puts a NULL-embedding row before a finite
-- distance either
SELECT bool_and(NOT EXISTS (SELECT FROM nul_lat b
                            WHERE b.id = ANY (nn) AND b.embedding IS NULL))
           AS no_null_neighbours
FROM nul_lat_exact WHERE NOT null_query;

DROP TABLE nul_items, nul_lat, nul_lat_index, nul_lat_exact;

-- REINDEX, REINDEX CONCURRENTLY and REINDEX TABLE rebuild the index with
-- the same answers
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
CREATE TABLE rei_items (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO rei_items
SELECT i, CASE WHEN i % 50 = 0 THEN NULL ELSE pg_temp.vec(i, 16) END
FROM generate_series(1, 3000) i;
CREATE INDEX rei_items_l2_idx ON rei_items USING segvec (embedding);
CREATE INDEX rei_items_cos_idx ON rei_items
    USING segvec (embedding vector_cosine_ops);
-- dead rows and docs inserted after the build
DELETE FROM rei_items WHERE id % 7 = 0;
INSERT INTO rei_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(3001, 3500) i;
ANALYZE rei_items;
CREATE TABLE rei_q (qid int PRIMARY KEY, v real[]);
INSERT INTO rei_q SELECT q, pg_temp.vec(100000 + q, 16) FROM generate_series(1, 5) q;

-- answers(): each query's top-10 ids (l2 and cosine) as one array per query
CREATE FUNCTION pg_temp.answers() RETURNS TABLE (qid int, l2 bigint[], cos bigint[])
LANGUAGE sql AS $$
    SELECT qid,
           (SELECT array_agg(id) FROM (SELECT id FROM rei_items
                                       ORDER BY embedding <-> v LIMIT 10) s),
           (SELECT array_agg(id) FROM (SELECT id FROM rei_items
                                       ORDER BY embedding <=> v LIMIT 10) s)
    FROM rei_q
$$;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT qid,
       (SELECT array_agg(id) FROM (SELECT id FROM rei_items
                                   ORDER BY embedding <-> v LIMIT 10) s),
       (SELECT array_agg(id) FROM (SELECT id FROM rei_items
                                   ORDER BY embedding <=> v LIMIT 10) s)
FROM rei_q$$);
CREATE TEMP TABLE rei_before AS SELECT * FROM pg_temp.answers();
RESET enable_seqscan;

-- the answers are the exact ones to begin with
SELECT qid, c.*
FROM rei_q,
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <-> (SELECT v FROM rei_q WHERE qid = %s) AS dist
        FROM rei_items ORDER BY dist LIMIT 10$$, qid)) c
ORDER BY qid;

-- after each kind of REINDEX: the same answers, a new relfilenode, and
-- only the live docs
CREATE TEMP TABLE rei_files AS
SELECT relname, relfilenode FROM pg_class
WHERE relname IN ('rei_items_l2_idx', 'rei_items_cos_idx');

REINDEX INDEX rei_items_l2_idx;
SET enable_seqscan = off;
SELECT count(*) AS queries, bool_and(a.l2 = b.l2 AND a.cos = b.cos) AS same
FROM pg_temp.answers() a JOIN rei_before b USING (qid);
RESET enable_seqscan;
SELECT relname, c.relfilenode <> f.relfilenode AS rebuilt,
       c.relfilenode = f.relfilenode OR
       reltuples = (SELECT count(embedding) FROM rei_items) AS live_docs_only
FROM pg_class c JOIN rei_files f USING (relname) ORDER BY relname;

REINDEX INDEX CONCURRENTLY rei_items_cos_idx;
SET enable_seqscan = off;
SELECT count(*) AS queries, bool_and(a.l2 = b.l2 AND a.cos = b.cos) AS same
FROM pg_temp.answers() a JOIN rei_before b USING (qid);
RESET enable_seqscan;
SELECT relname, c.relfilenode <> f.relfilenode AS rebuilt,
       c.relfilenode = f.relfilenode OR
       reltuples = (SELECT count(embedding) FROM rei_items) AS live_docs_only
FROM pg_class c JOIN rei_files f USING (relname) ORDER BY relname;
SELECT indexrelid::regclass, indisvalid, indisready FROM pg_index
WHERE indrelid = 'rei_items'::regclass ORDER BY 1;

REINDEX TABLE rei_items;
REINDEX TABLE CONCURRENTLY rei_items;
SET enable_seqscan = off;
SELECT count(*) AS queries, bool_and(a.l2 = b.l2 AND a.cos = b.cos) AS same
FROM pg_temp.answers() a JOIN rei_before b USING (qid);
RESET enable_seqscan;

-- inserts, deletes and VACUUM keep working on the rebuilt index
INSERT INTO rei_items SELECT i, pg_temp.vec(i, 16) FROM generate_series(3501, 4000) i;
DELETE FROM rei_items WHERE id % 11 = 0;
VACUUM rei_items;
SELECT qid, c.*
FROM rei_q,
     LATERAL pg_temp.knn_check(format($$
        SELECT id, embedding <=> (SELECT v FROM rei_q WHERE qid = %s) AS dist
        FROM rei_items ORDER BY dist LIMIT 10$$, qid)) c
ORDER BY qid;

-- REINDEX of an empty index
TRUNCATE rei_items;
REINDEX TABLE rei_items;
SET enable_seqscan = off;
SELECT id FROM rei_items ORDER BY embedding <-> (SELECT v FROM rei_q WHERE qid = 1) LIMIT 10;
RESET enable_seqscan;

DROP TABLE rei_items, rei_q, rei_before, rei_files;

-- a build bigger than maintenance_work_mem makes several in-memory pieces
-- and merges them into one segment; the merged segment then moves down
-- into the space the pieces left and the rest is given back, so the index
-- is about its pages in use, after CREATE INDEX, REINDEX and REINDEX
-- CONCURRENTLY alike, and every row is still found by its own vector
SET maintenance_work_mem = '1MB';
CREATE TABLE rei_big (id int PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO rei_big SELECT i, pg_temp.vec(i, 64) FROM generate_series(1, 6000) i;
CREATE INDEX rei_big_v ON rei_big USING segvec (embedding) INCLUDE (id);
CREATE FUNCTION pg_temp.rei_big_space(OUT num_segments int,
                                       OUT near_pages_in_use bool)
LANGUAGE sql AS $$
    SELECT s.num_segments,
           pg_relation_size('rei_big_v') / 8192 <=
             1.1 * (t.index_pages - t.free_extent_pages - t.recyclable_pages)
    FROM ft.info('rei_big_v') s, ft.storage_stats('rei_big_v') t
$$;
SELECT * FROM pg_temp.rei_big_space();
-- ft.storage_map lists every block once, in order, and the one segment
SELECT sum(pages) = pg_relation_size('rei_big_v') / 8192 AS every_block,
       bool_and(next IS NULL OR block + pages = next) AS in_order,
       count(*) FILTER (WHERE kind = 'segment') AS segment_runs,
       count(*) FILTER (WHERE kind = 'metapage') AS metapage_runs
FROM (SELECT m.*, lead(block) OVER (ORDER BY block) AS next
      FROM ft.storage_map('rei_big_v') m) m;
REINDEX INDEX rei_big_v;
SELECT * FROM pg_temp.rei_big_space();
REINDEX INDEX CONCURRENTLY rei_big_v;
SELECT * FROM pg_temp.rei_big_space();
RESET maintenance_work_mem;
SET enable_seqscan = off;
SET segvec.ef_search = 100;
SELECT count(*) AS not_found FROM rei_big a
WHERE (SELECT b.id FROM rei_big b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id;
RESET segvec.ef_search;
RESET enable_seqscan;
DROP TABLE rei_big;

-- a build whose docs do not fit in one merge (segvec.max_merge_docs)
-- merges its five pieces in two rounds and ends as two segments: the
-- second round's output goes into the hole the first round's inputs left,
-- so neither that hole's rest nor the second round's inputs' space holds
-- the first round's output, which ends the index; the second round's
-- output is moved down first, the free space joins and holds it, and the
-- index again ends about its pages in use, after CREATE INDEX and REINDEX
SET maintenance_work_mem = '1MB';
SET segvec.max_merge_docs = 6000;
CREATE TABLE rei_rounds (id int PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO rei_rounds SELECT i, pg_temp.vec(i, 64)
FROM generate_series(1, 10000) i;
CREATE INDEX rei_rounds_v ON rei_rounds USING segvec (embedding) INCLUDE (id);
CREATE FUNCTION pg_temp.rei_rounds_space(OUT num_segments int,
                                          OUT segment_merges bigint,
                                          OUT near_pages_in_use bool)
LANGUAGE sql AS $$
    SELECT s.num_segments, t.segment_merges,
           pg_relation_size('rei_rounds_v') / 8192 <=
             1.1 * (t.index_pages - t.free_extent_pages - t.recyclable_pages)
    FROM ft.info('rei_rounds_v') s, ft.storage_stats('rei_rounds_v') t
$$;
SELECT * FROM pg_temp.rei_rounds_space();
REINDEX INDEX rei_rounds_v;
SELECT * FROM pg_temp.rei_rounds_space();
RESET segvec.max_merge_docs;
RESET maintenance_work_mem;
SET enable_seqscan = off;
SET segvec.ef_search = 100;
SELECT count(*) AS not_found FROM rei_rounds a
WHERE a.id % 10 = 0 AND
      (SELECT b.id FROM rei_rounds b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id;
RESET segvec.ef_search;
RESET enable_seqscan;
DROP TABLE rei_rounds;

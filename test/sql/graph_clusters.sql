-- Graphs of well-separated clusters whose rows the table holds one cluster
-- after another (as a load by source, tenant or topic leaves them).
-- Inserted into the graph in that order, each cluster was built before the
-- next existed, and clusters with no node on the top layers were reached
-- from a handful of upper-layer links: the greedy descent of a search
-- landed in another cluster, which layer 0 did not leave, and whole
-- clusters were missed.  The builder inserts in a random order instead.
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
CREATE SCHEMA segvec_clusters;
SET search_path = segvec_clusters, public;
\set VERBOSITY terse

SELECT setseed(0.42);
-- 100 centres uniform in [0,1]^32
CREATE TABLE centre AS
  SELECT c, (SELECT array_agg(random()::real) FROM generate_series(1, 32 + c * 0)) AS v
  FROM generate_series(0, 99) c;
-- a point of cluster c: its centre plus uniform noise of width 0.1
CREATE FUNCTION cvec(c int) RETURNS real[] VOLATILE LANGUAGE sql AS $$
  SELECT array_agg((x + (random() - 0.5) * 0.1)::real ORDER BY o)
  FROM unnest((SELECT v FROM centre WHERE centre.c = cvec.c)) WITH ORDINALITY u(x, o) $$;
-- 10,000 rows, cluster i / 100 of row i: the heap holds cluster after cluster
CREATE TABLE items (id int PRIMARY KEY, v real[])
  WITH (autovacuum_enabled = off);
INSERT INTO items SELECT i, cvec(i / 100) FROM generate_series(0, 9999) i ORDER BY i;
-- 50 queries, each near one of 50 of the centres, and their exact top 10
CREATE TABLE q AS SELECT i AS qid, cvec((i * 7) % 100) AS v FROM generate_series(1, 50) i;
CREATE TABLE exact AS
  SELECT qid, ARRAY(SELECT id FROM items ORDER BY items.v <-> q.v, id LIMIT 10) AS ids
  FROM q;

-- (no background compaction: ft.compact does it all, so the segments are
-- known)
CREATE INDEX items_v ON items USING segvec (v)
  WITH (quantization = 'none', compact_threshold = 1000000);
SELECT count(*) > 0 AS compacted FROM ft.compact('items_v');
SELECT num_segments, mutable_docs FROM ft.info('items_v');

-- rows a search for their own vector does not return first (of 2,500);
-- recall@10 of the queries, and queries that found none of their top 10
CREATE FUNCTION self_misses() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM items a WHERE a.id % 4 = 0
    AND (SELECT b.id FROM items b ORDER BY b.v <-> a.v LIMIT 1) <> a.id $$;
CREATE FUNCTION found() RETURNS TABLE (qid int, hits bigint) LANGUAGE sql AS $$
  SELECT qid, (SELECT count(*) FROM unnest(exact.ids) e
               WHERE e = ANY (ARRAY(SELECT id FROM items
                                    ORDER BY items.v <-> q.v LIMIT 10)))
  FROM q JOIN exact USING (qid) $$;
SET enable_seqscan = off;
SET segvec.ef_search = 40;
SELECT self_misses() <= 50 AS few_self_misses;
SELECT sum(hits) / 500.0 >= 0.95 AS recall_ok,
       count(*) FILTER (WHERE hits = 0) AS queries_lost
FROM found();
RESET segvec.ef_search;
RESET enable_seqscan;

-- The same rows in two batches: clusters 0-29, then 30-99, each compacted;
-- the second compaction merges its segment with the first, inserting the
-- first's nodes (cluster after cluster in doc id order) into the graph of
-- the bigger one.  None of the inserted nodes' clusters is in that graph:
-- a search of it for the first nodes of a cluster ends in other clusters,
-- so each insertion also starts from the node's neighbours in its own
-- segment's graph that are inserted already.  Without them, the nodes of
-- a cluster new to the graph linked to other clusters only and did not
-- find one another (69 self-lookups missed here, 102 in the next case).
CREATE TABLE src AS SELECT * FROM items;
TRUNCATE items;
INSERT INTO items SELECT * FROM src WHERE id < 3000 ORDER BY id;
SELECT docs_compacted, segments_created, segments_merged FROM ft.compact('items_v');
INSERT INTO items SELECT * FROM src WHERE id >= 3000 ORDER BY id;
SELECT docs_compacted, segments_created, segments_merged FROM ft.compact('items_v');
SELECT num_segments, mutable_docs FROM ft.info('items_v');
SET enable_seqscan = off;
SET segvec.ef_search = 40;
SELECT self_misses() <= 50 AS few_self_misses;
SELECT sum(hits) / 500.0 >= 0.95 AS recall_ok,
       count(*) FILTER (WHERE hits = 0) AS queries_lost
FROM found();
RESET segvec.ef_search;
RESET enable_seqscan;

-- Two halves: a segment of clusters 0-49 merged with one of 50-99
TRUNCATE items;
INSERT INTO items SELECT * FROM src WHERE id < 5000 ORDER BY id;
SELECT docs_compacted, segments_created, segments_merged FROM ft.compact('items_v');
INSERT INTO items SELECT * FROM src WHERE id >= 5000 ORDER BY id;
SELECT docs_compacted, segments_created, segments_merged FROM ft.compact('items_v');
SELECT num_segments, mutable_docs FROM ft.info('items_v');
SET enable_seqscan = off;
SET segvec.ef_search = 40;
SELECT self_misses() <= 80 AS few_self_misses;
SELECT sum(hits) / 500.0 >= 0.95 AS recall_ok FROM found();
RESET segvec.ef_search;
RESET enable_seqscan;

DROP SCHEMA segvec_clusters CASCADE;

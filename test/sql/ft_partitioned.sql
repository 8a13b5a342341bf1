-- The ft API on a partitioned table: every function, on a parent with three
-- range partitions and a default one, gives what it gives on one plain
-- table holding the same rows (same ids, same order, same counts).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;
-- no background work: the suite asserts what it would change
SET segvec.background_merge = off;
SET segvec.compact_threshold = 100000;

-- deterministic, pairwise distinct 4-dim vectors
CREATE FUNCTION pg_temp.v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 4) j $$;

CREATE TABLE ftpt_pl (id bigint, embedding real[], category text,
  price numeric);
CREATE TABLE ftpt_pt (id bigint, embedding real[], category text,
  price numeric) PARTITION BY RANGE (id);
CREATE TABLE ftpt_pt_1 PARTITION OF ftpt_pt FOR VALUES FROM (1) TO (101);
CREATE TABLE ftpt_pt_2 PARTITION OF ftpt_pt FOR VALUES FROM (101) TO (201);
CREATE TABLE ftpt_pt_3 PARTITION OF ftpt_pt FOR VALUES FROM (201) TO (301);
CREATE TABLE ftpt_pt_def PARTITION OF ftpt_pt DEFAULT;
INSERT INTO ftpt_pl
  SELECT i, pg_temp.v(i), (ARRAY['books', 'music', 'film'])[1 + i % 3], i
  FROM generate_series(1, 320) i;
INSERT INTO ftpt_pt SELECT * FROM ftpt_pl;
SELECT tableoid::regclass, count(*) FROM ftpt_pt GROUP BY 1 ORDER BY 1;

-- ft.create: the segvec index on the parent (on every partition), and a
-- unique btree on the id, which is the partition key
SELECT ft.create('ftpt_pl_idx', 'ftpt_pl', 'id', 'embedding');
SELECT ft.create('ftpt_pt_idx', 'ftpt_pt', 'id', 'embedding');
SELECT c.relname, c.relkind, i.indisunique, am.amname
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am am ON am.oid = c.relam
 WHERE i.indrelid = 'ftpt_pt'::regclass ORDER BY c.relname;
SELECT count(*) AS partition_indexes FROM ft._partition_indexes('ftpt_pt_idx');
SELECT * FROM ft._partition_indexes('ftpt_pl_idx');

-- partitioned by another column: no unique index can hold the ids
CREATE TABLE ftpt_pc (id bigint, embedding real[], category text)
  PARTITION BY LIST (category);
CREATE TABLE ftpt_pc_b PARTITION OF ftpt_pc FOR VALUES IN ('books');
CREATE TABLE ftpt_pc_o PARTITION OF ftpt_pc DEFAULT;
\set VERBOSITY terse
SELECT ft.create('ftpt_pc_idx', 'ftpt_pc', 'id', 'embedding');
\set VERBOSITY default
SELECT c.relname, i.indisunique FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid = 'ftpt_pc'::regclass ORDER BY c.relname;

-- ft.list: the parent's index with all docs, not the partitions'
SELECT index, tbl, id_column, vector_column, metric, num_docs
  FROM ft.list() WHERE tbl::text IN ('ftpt_pl', 'ftpt_pt', 'ftpt_pc')
 ORDER BY index::text;

-- ft.info: the same counts
SELECT (SELECT row(num_docs, mutable_docs + immutable_docs, tombstones,
		keymap_entries, dimensions, metric, m, ef_construction, pending)
		FROM ft.info('ftpt_pt_idx')) AS pt,
	   (SELECT row(num_docs, mutable_docs + immutable_docs, tombstones,
		keymap_entries, dimensions, metric, m, ef_construction, pending)
		FROM ft.info('ftpt_pl_idx')) AS pl;

-- ft.search: one answer, then 30 queries equal (ids, order, distances)
SELECT id, distance FROM ft.search('ftpt_pt_idx', pg_temp.v(1000), 5);
CREATE FUNCTION pg_temp.same_search(k int, ef int, flt text) RETURNS bigint
LANGUAGE sql AS $$
  SELECT count(*) FROM generate_series(1, 30) q
  WHERE (SELECT array_agg(row(s.id, s.distance, s.fields) ORDER BY s.o)
		 FROM ft.search('ftpt_pt_idx', pg_temp.v(q * 37 + 1000), k, flt,
						ef_search => ef) WITH ORDINALITY s(id, distance, fields, o))
	IS DISTINCT FROM
		(SELECT array_agg(row(s.id, s.distance, s.fields) ORDER BY s.o)
		 FROM ft.search('ftpt_pl_idx', pg_temp.v(q * 37 + 1000), k, flt,
						ef_search => ef) WITH ORDINALITY s(id, distance, fields, o)) $$;
SELECT pg_temp.same_search(10, NULL, NULL) AS mismatches,
	   pg_temp.same_search(25, 400, '@category:{music}') AS filtered_mismatches;

-- ft.query, ft.explain
CREATE FUNCTION pg_temp.same_query(q text, p jsonb) RETURNS boolean
LANGUAGE sql AS $$
  SELECT (SELECT array_agg(row(s.id, s.distance, s.fields) ORDER BY s.o)
		  FROM ft.query('ftpt_pt_idx', q, p) WITH ORDINALITY s(id, distance, fields, o))
	IS NOT DISTINCT FROM
		 (SELECT array_agg(row(s.id, s.distance, s.fields) ORDER BY s.o)
		  FROM ft.query('ftpt_pl_idx', q, p) WITH ORDINALITY s(id, distance, fields, o)) $$;
SELECT pg_temp.same_query('(@category:{books} @price:[10 200])=>[KNN 7 @embedding $v AS score]',
		jsonb_build_object('v', to_jsonb(pg_temp.v(2000)))) AS knn_same,
	   pg_temp.same_query('@price:[10 20]', '{"SORTBY": ["price", "DESC"]}') AS sortby_same;
SELECT id, distance FROM ft.query('ftpt_pt_idx', '*=>[KNN 3 @embedding $v]',
		jsonb_build_object('v', to_jsonb(pg_temp.v(2000))));
SELECT count(*) > 0 AS explained
  FROM ft.explain('ftpt_pt_idx', '*=>[KNN 3 @embedding $v]',
		jsonb_build_object('v', to_jsonb(pg_temp.v(2000))));

-- ft.get and ft.similar: a row of each partition, the default one's too
SELECT g.id, g.vector = pg_temp.v(g.id::int) AS right_vector
  FROM unnest(ARRAY['5', '150', '250', '310', '999']) k, ft.get('ftpt_pt_idx', k) g;
SELECT count(*) AS get_mismatches FROM generate_series(1, 330) k
 WHERE (SELECT array_agg(row(id, vector)) FROM ft.get('ftpt_pt_idx', k::text))
	IS DISTINCT FROM (SELECT array_agg(row(id, vector)) FROM ft.get('ftpt_pl_idx', k::text));
SELECT * FROM ft.similar('ftpt_pt_idx', '150', 4);
SELECT count(*) AS similar_mismatches FROM generate_series(1, 330, 7) k
 WHERE (SELECT array_agg(row(id, distance)) FROM ft.similar('ftpt_pt_idx', k::text, 6))
	IS DISTINCT FROM (SELECT array_agg(row(id, distance)) FROM ft.similar('ftpt_pl_idx', k::text, 6));

-- ft.add / ft.del / ft.flush: queued on the parent's index, read by
-- searches before they are applied, applied to the partitions owning the ids
CREATE FUNCTION pg_temp.queue(idx regclass) RETURNS void LANGUAGE sql AS $$
  SELECT ft.add(idx, '7', pg_temp.v(5007), '{"category": "film", "price": 7}');
  SELECT ft.add(idx, '3000', pg_temp.v(3000), '{"category": "books"}');
  SELECT ft.add(idx, '250', pg_temp.v(5250));
  SELECT ft.del(idx, '120');
  SELECT ft.del(idx, '315') $$;
SELECT pg_temp.queue('ftpt_pt_idx'), pg_temp.queue('ftpt_pl_idx');
SELECT (SELECT array_agg(row(id, op, vector, fields) ORDER BY id) FROM ft.pending_for('ftpt_pt_idx'))
	IS NOT DISTINCT FROM
	   (SELECT array_agg(row(id, op, vector, fields) ORDER BY id) FROM ft.pending_for('ftpt_pl_idx'))
	AS same_pending;
SELECT (SELECT pending FROM ft.info('ftpt_pt_idx')) AS pt_pending,
	   (SELECT pending FROM ft.info('ftpt_pl_idx')) AS pl_pending;
SELECT pg_temp.same_search(10, NULL, NULL) AS pending_mismatches;
SELECT * FROM ft.flush('ftpt_pt_idx');
SELECT * FROM ft.flush('ftpt_pl_idx');
SELECT tableoid::regclass, id, category, price FROM ftpt_pt
 WHERE id IN (7, 3000, 250, 120, 315) ORDER BY id;
SELECT pg_temp.same_search(10, NULL, NULL) AS flushed_mismatches;

-- ft.merge from a table: rows of several partitions, a new one
CREATE TABLE ftpt_batch (id bigint, embedding real[], price numeric);
INSERT INTO ftpt_batch VALUES (8, pg_temp.v(6008), 80), (180, pg_temp.v(6180), 1),
  (290, pg_temp.v(6290), 2), (400, pg_temp.v(6400), 3);
SELECT ft.has_key_btree_index('ftpt_pt', 'id') AS pt_btree,
	   ft.has_key_btree_index('ftpt_pc', 'id') AS pc_btree;
SELECT count(*) FILTER (WHERE p LIKE '%Merge on ftpt_pt%') AS merge_nodes,
	   count(*) FILTER (WHERE p LIKE '%Index%Scan%ftpt_pt_%id_idx%') > 0 AS probes_btree
  FROM ft.merge_plan('ftpt_pt_idx', 'ftpt_batch') p;
SELECT * FROM ft.merge('ftpt_pt_idx', 'ftpt_batch');
SELECT * FROM ft.merge('ftpt_pl_idx', 'ftpt_batch');
SELECT tableoid::regclass, id, price FROM ftpt_pt WHERE id IN (8, 180, 290, 400)
 ORDER BY id;

-- the upsert method (what merges use on Citus tables: INSERT ... ON
-- CONFLICT and a DELETE of the deleted ids, the ftpt_batch passed as
-- parameters) on the partitioned table gives what one MERGE gives on the
-- plain one: the same rows and the same counts
CREATE FUNCTION pg_temp.queue2(idx regclass) RETURNS void LANGUAGE sql AS $$
  SELECT ft.add(idx, '9', pg_temp.v(7009), '{"price": 99}');
  SELECT ft.del(idx, '10');
  SELECT ft.add(idx, '10', pg_temp.v(7010), '{"category": "film"}');
  SELECT ft.add(idx, '3001', pg_temp.v(3001));
  SELECT ft.del(idx, '11');
  SELECT ft.del(idx, '99999') $$;
SELECT pg_temp.queue2('ftpt_pt_idx'), pg_temp.queue2('ftpt_pl_idx');
SET segvec.merge_method = 'upsert';
SELECT * FROM ft.flush('ftpt_pt_idx');
RESET segvec.merge_method;
SELECT * FROM ft.flush('ftpt_pl_idx');
SELECT tableoid::regclass, id, category, price FROM ftpt_pt
 WHERE id IN (9, 10, 11, 3001) ORDER BY id;
CREATE TABLE ftpt_batch2 (id bigint, embedding real[], category text, op "char");
INSERT INTO ftpt_batch2 VALUES (12, pg_temp.v(8012), 'books', 'u'),
  (13, NULL, NULL, 'd'), (3002, pg_temp.v(8002), 'music', NULL);
SET segvec.merge_method = 'upsert';
SELECT * FROM ft.merge('ftpt_pt_idx', 'ftpt_batch2');
RESET segvec.merge_method;
SELECT * FROM ft.merge('ftpt_pl_idx', 'ftpt_batch2');
SELECT count(*) AS differing_rows FROM
  ((TABLE ftpt_pt EXCEPT ALL TABLE ftpt_pl)
   UNION ALL (TABLE ftpt_pl EXCEPT ALL TABLE ftpt_pt)) d;
-- the upsert method needs a unique id: not there on ftpt_pc
SET segvec.merge_method = 'upsert';
SELECT ft.add('ftpt_pc_idx', '1', '{1,2,3,4}') > 0 AS queued;
\set VERBOSITY terse
SELECT * FROM ft.flush('ftpt_pc_idx');
\set VERBOSITY default
RESET segvec.merge_method;
SELECT * FROM ft.flush('ftpt_pc_idx');

-- a row moving between partitions (UPDATE of the partition key), into
-- and out of the default partition
UPDATE ftpt_pt SET id = 360 WHERE id = 50;
UPDATE ftpt_pl SET id = 360 WHERE id = 50;
UPDATE ftpt_pt SET id = 50 WHERE id = 305;
UPDATE ftpt_pl SET id = 50 WHERE id = 305;
SELECT tableoid::regclass, id FROM ftpt_pt WHERE id IN (50, 305, 360)
 ORDER BY id;
SELECT k, (SELECT array_agg(id) FROM ft.get('ftpt_pt_idx', k)) AS pt,
		  (SELECT array_agg(id) FROM ft.get('ftpt_pl_idx', k)) AS pl
  FROM unnest(ARRAY['50', '305', '360']) k;
SELECT pg_temp.same_search(10, NULL, NULL) AS moved_mismatches;

-- ft.compact: each partition's index; then all docs immutable
SELECT (SELECT docs_compacted FROM ft.compact('ftpt_pt_idx')) AS pt_compacted,
	   (SELECT docs_compacted FROM ft.compact('ftpt_pl_idx')) AS pl_compacted;
SELECT num_docs, mutable_docs, immutable_docs, num_segments,
	   jsonb_array_length(segments) AS segments_listed,
	   (SELECT count(DISTINCT s ->> 'index') FROM jsonb_array_elements(segments) s)
		 AS indexes_listed
  FROM ft.info('ftpt_pt_idx');
SELECT num_docs, mutable_docs, immutable_docs FROM ft.info('ftpt_pl_idx');
SELECT (SELECT count(*) FROM ftpt_pt WHERE embedding IS NOT NULL) AS pt_rows,
	   (SELECT count(*) FROM ftpt_pl WHERE embedding IS NOT NULL) AS pl_rows;
-- graph segments searched with the same ef_search: the same answers
SELECT pg_temp.same_search(10, 400, NULL) AS compacted_mismatches,
	   pg_temp.same_search(10, 400, '@category:{books}') AS compacted_filtered_mismatches;

-- ft.verify: the same counts and no faults
SELECT heap_rows, indexed_docs, missing_docs, duplicate_docs,
	   docs_in_two_segments, keymap_entries, phantom_entries,
	   checksum_mismatches, missing_keymap_entries, search_checked,
	   search_misses, repaired, examples, unreachable_nodes
  FROM ft.verify('ftpt_pt_idx');
SELECT heap_rows, indexed_docs, missing_docs, keymap_entries, search_checked,
	   search_misses FROM ft.verify('ftpt_pl_idx');

-- a doc lost in one partition's index: ft.verify finds it and repairs it
SET segvec.enable_test_hooks = on;
SELECT ft._stage_phantom('ftpt_pt_idx', '150') > 0 AS staged;
RESET segvec.enable_test_hooks;
SELECT missing_docs, phantom_entries, examples <> '{}' AS has_examples,
	   (SELECT bool_and(e LIKE 'ftpt_pt_2_%') FROM unnest(examples) e) AS in_partition_2
  FROM ft.verify('ftpt_pt_idx');
SELECT repaired > 0 AS repaired FROM ft.verify('ftpt_pt_idx', repair => true);
SELECT missing_docs, phantom_entries FROM ft.verify('ftpt_pt_idx');

-- ft.snapshot, ft.keymap_buckets: summed over partitions
SELECT ft.snapshot('ftpt_pt_idx') > 0 AS snapshot_written;
SELECT (SELECT sum(snapshot_entries) FROM ft.keymap_buckets('ftpt_pt_idx')) AS pt_entries,
	   (SELECT sum(snapshot_entries) FROM ft.keymap_buckets('ftpt_pl_idx')) AS pl_entries,
	   (SELECT count(*) FROM ft.keymap_buckets('ftpt_pt_idx')) AS buckets;

-- ft.alter and ft.hybrid: TEXT fields on every partition's index
SELECT ft.alter('ftpt_pt_idx', text_fields => '{category}');
SELECT ft.alter('ftpt_pl_idx', text_fields => '{category}');
SELECT c.relname, c.reloptions FROM pg_class c
 WHERE c.oid IN (SELECT ft._partition_indexes('ftpt_pt_idx')) ORDER BY 1;
SELECT pg_temp.same_query('@category:film', '{"SORTBY": ["price", "ASC"], "LIMIT": [0, 5]}')
		AS text_same;
SELECT (SELECT array_agg(row(h.*) ORDER BY h.score DESC, h.id)
		  FROM ft.hybrid('ftpt_pt_idx', 'books', pg_temp.v(4000), 8) h)
	IS NOT DISTINCT FROM
	   (SELECT array_agg(row(h.*) ORDER BY h.score DESC, h.id)
		  FROM ft.hybrid('ftpt_pl_idx', 'books', pg_temp.v(4000), 8) h) AS hybrid_same;

-- privileges and policies are the parent's: a role that may read the
-- parent but no partition, and sees only books through a policy
CREATE ROLE ft_part_reader;
GRANT SELECT ON ftpt_pt TO ft_part_reader;
ALTER TABLE ftpt_pt ENABLE ROW LEVEL SECURITY;
CREATE POLICY books ON ftpt_pt FOR SELECT USING (category = 'books');
SET ROLE ft_part_reader;
SELECT id, category FROM ftpt_pt WHERE id IN (9, 10, 11) ORDER BY id;
SELECT k, (SELECT id FROM ft.get('ftpt_pt_idx', k)) AS got
  FROM unnest(ARRAY['9', '10', '11']) k;
SELECT count(*) AS found, count(*) FILTER (WHERE s.fields ->> 'category' <> 'books')
		AS not_books
  FROM ft.search('ftpt_pt_idx', pg_temp.v(1000), 20) s;
\set VERBOSITY terse
SELECT * FROM ft.compact('ftpt_pt_idx');
SELECT num_docs FROM ft.info('ftpt_pt_idx');
\set VERBOSITY default
RESET ROLE;
DROP POLICY books ON ftpt_pt;
ALTER TABLE ftpt_pt DISABLE ROW LEVEL SECURITY;

-- ft.dropindex with a queue: applied first, then the index goes with its
-- partitions' indexes and its GIN index
SELECT ft.add('ftpt_pt_idx', '4242', pg_temp.v(4242)) > 0 AS queued;
SELECT ft.dropindex('ftpt_pt_idx');
SELECT count(*) AS left_indexes FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am am ON am.oid = c.relam
 WHERE i.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'ftpt_pt'::regclass)
   AND am.amname IN ('segvec', 'gin');
SELECT tableoid::regclass, id FROM ftpt_pt WHERE id = 4242;

-- ft.dropindex DD: the docs of every partition go
INSERT INTO ftpt_pc VALUES (2, '{1,1,1,1}', 'books'), (3, '{2,2,2,2}', 'other'),
  (4, NULL, 'books');
SELECT ft.dropindex('ftpt_pc_idx', delete_docs => true);
SELECT tableoid::regclass, id FROM ftpt_pc ORDER BY id;

DROP TABLE ftpt_pl, ftpt_pt, ftpt_pc, ftpt_batch, ftpt_batch2;
DROP ROLE ft_part_reader;

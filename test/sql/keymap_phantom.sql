-- Phantom keymap entries: ft._stage_phantom loses a doc and keeps
-- its keymap entry, in the mutable segment and in a graph segment;
-- ft.verify reports the phantom entry and the unindexed row, repair =>
-- true drops the entry and indexes the row again, and the row is found by
-- ft.get and by its own vector afterwards.
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
-- the huge cost of a disabled seqscan would JIT-compile these queries
SET jit = off;
SET segvec.ef_search = 400;

-- deterministic, pairwise distinct vectors
CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
    FROM generate_series(1, d) j
$$;

-- 400 rows built into graph segment 1, then 40 in the mutable segment
CREATE TABLE kp (id bigint PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO kp SELECT i, pg_temp.vec(i, 8) FROM generate_series(1, 400) i;
SET segvec.compact_threshold = 0;
CREATE INDEX kp_idx ON kp USING segvec (embedding) INCLUDE (id);
RESET segvec.compact_threshold;
INSERT INTO kp SELECT i, pg_temp.vec(i, 8) FROM generate_series(401, 440) i;

-- report(): ft.verify of kp_idx over every row, the counts and, for the
-- examples, whether there are any and whether they name the phantom entry
-- of doc id docid and the unindexed heap row of id rowid.
CREATE FUNCTION pg_temp.report(repair bool, docid bigint, rowid bigint,
    OUT heap_rows bigint, OUT indexed_docs bigint, OUT missing_docs bigint,
    OUT duplicate_docs bigint, OUT docs_in_two_segments bigint,
    OUT keymap_entries bigint, OUT phantom_entries bigint,
    OUT checksum_mismatches bigint, OUT missing_keymap_entries bigint,
    OUT search_checked bigint, OUT search_misses bigint, OUT repaired bigint,
    OUT has_examples bool, OUT names_phantom bool, OUT names_row bool)
LANGUAGE sql AS $$
    SELECT v.heap_rows, v.indexed_docs, v.missing_docs, v.duplicate_docs,
           v.docs_in_two_segments, v.keymap_entries, v.phantom_entries,
           v.checksum_mismatches, v.missing_keymap_entries, v.search_checked,
           v.search_misses, v.repaired, cardinality(v.examples) > 0,
           EXISTS (SELECT FROM unnest(v.examples) e
                   WHERE e LIKE 'phantom keymap entry: %, doc id ' || docid),
           EXISTS (SELECT FROM unnest(v.examples) e, kp
                   WHERE kp.id = rowid
                     AND e = format('heap row %s is not indexed', kp.ctid))
    FROM ft.verify('kp_idx', repair, NULL) v
$$;

SELECT num_docs, mutable_docs, immutable_docs, keymap_entries
FROM ft.info('kp_idx');
SELECT * FROM pg_temp.report(false, -1, -1);

-- the test hook is off by default, and only a superuser can turn it on
SHOW segvec.enable_test_hooks;
\set VERBOSITY terse
SELECT ft._stage_phantom('kp_idx', '425');
CREATE ROLE regress_keymap_phantom;
GRANT SELECT ON kp TO regress_keymap_phantom;
SET ROLE regress_keymap_phantom;
SET segvec.enable_test_hooks = on;
RESET ROLE;
\set VERBOSITY default
SELECT count(*) AS still_there FROM ft.get('kp_idx', '425');

SET segvec.enable_test_hooks = on;
\set VERBOSITY terse
SELECT ft._stage_phantom('kp_idx', '441');
\set VERBOSITY default

------------------------------------------------------------------------
-- a phantom in the mutable segment
------------------------------------------------------------------------
SELECT segment, docid AS docid_425 FROM ft.get('kp_idx', '425') \gset
SELECT :'segment' AS segment;
SELECT ft._stage_phantom('kp_idx', '425') = :docid_425 AS staged_its_doc;
-- the doc is gone, its keymap entry is not
SELECT count(*) AS found FROM ft.get('kp_idx', '425');
SELECT num_docs, mutable_docs, immutable_docs, tombstones, keymap_entries
FROM ft.info('kp_idx');
SET enable_seqscan = off;
SELECT id = 425 AS found_by_own_vector
FROM kp ORDER BY embedding <-> pg_temp.vec(425, 8) LIMIT 1;
RESET enable_seqscan;
-- ft.verify reports one phantom entry and one unindexed row
SELECT * FROM pg_temp.report(false, :docid_425, 425);
-- and a read-only ft.verify changed nothing
SELECT * FROM pg_temp.report(false, :docid_425, 425);
-- repair: the entry dropped, the row indexed again
SELECT * FROM pg_temp.report(true, :docid_425, 425);
SELECT * FROM pg_temp.report(false, :docid_425, 425);
SELECT segment, vector = pg_temp.vec(425, 8) AS same_vector,
       docid <> :docid_425 AS new_docid
FROM ft.get('kp_idx', '425');
SET enable_seqscan = off;
SELECT id AS found_by_own_vector
FROM kp ORDER BY embedding <-> pg_temp.vec(425, 8) LIMIT 1;
RESET enable_seqscan;
SELECT num_docs, mutable_docs, immutable_docs, tombstones, keymap_entries
FROM ft.info('kp_idx');

------------------------------------------------------------------------
-- a phantom in a graph segment (the doc is tombstoned)
------------------------------------------------------------------------
SELECT segment, docid AS docid_200 FROM ft.get('kp_idx', '200') \gset
SELECT :'segment' AS segment;
SELECT ft._stage_phantom('kp_idx', '200') = :docid_200 AS staged_its_doc;
SELECT count(*) AS found FROM ft.get('kp_idx', '200');
SELECT num_docs, mutable_docs, immutable_docs, tombstones, keymap_entries
FROM ft.info('kp_idx');
SET enable_seqscan = off;
SELECT id = 200 AS found_by_own_vector
FROM kp ORDER BY embedding <-> pg_temp.vec(200, 8) LIMIT 1;
RESET enable_seqscan;
SELECT * FROM pg_temp.report(false, :docid_200, 200);
-- neither a compaction nor a VACUUM (the row is live) removes the phantom
-- (the compaction's segment is merged into the first, which drops the
-- tombstoned doc)
SELECT docs_compacted, segments_created FROM ft.compact('kp_idx');
VACUUM kp;
SELECT count(*) AS found FROM ft.get('kp_idx', '200');
SELECT * FROM pg_temp.report(false, :docid_200, 200);
SELECT * FROM pg_temp.report(true, :docid_200, 200);
SELECT * FROM pg_temp.report(false, :docid_200, 200);
SELECT segment, vector = pg_temp.vec(200, 8) AS same_vector,
       docid <> :docid_200 AS new_docid
FROM ft.get('kp_idx', '200');
SET enable_seqscan = off;
SELECT id AS found_by_own_vector
FROM kp ORDER BY embedding <-> pg_temp.vec(200, 8) LIMIT 1;
RESET enable_seqscan;
SELECT num_docs, mutable_docs, immutable_docs, tombstones, keymap_entries
FROM ft.info('kp_idx');
-- the repaired row moves on with the next compaction like any other
SELECT docs_compacted, segments_created FROM ft.compact('kp_idx');
SELECT segment <> 'mutable' AS in_a_segment, vector = pg_temp.vec(200, 8) AS same_vector
FROM ft.get('kp_idx', '200');
SELECT * FROM pg_temp.report(false, -1, -1);

RESET segvec.enable_test_hooks;
DROP TABLE kp;
DROP ROLE regress_keymap_phantom;

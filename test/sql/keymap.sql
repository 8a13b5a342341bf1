-- The keymap: ids of type bigint, text and uuid carried with
-- INCLUDE (id); ft.get, ft.similar, ft.info, ft.verify on a healthy index,
-- snapshots that write only the changes as a new run and share every
-- older run, and an index without an id key.
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
-- the huge cost of a disabled plan type would JIT-compile these queries
SET jit = off;
-- graph searches wide enough that the small test graphs answer exactly
SET segvec.ef_search = 400;

-- Deterministic, pairwise distinct vectors: element j of vector i is
-- sin(i * sqrt(j + 1) + j).
CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
    FROM generate_series(1, d) j
$$;

-- info(index): the ft.info figures that do not depend on page layout,
-- next to the number of live rows of the table.  segment_docs lists each
-- segment as "segment:docs/tombstones"; index_bytes_ok says index_bytes is
-- a whole number of pages and not zero (a background job may truncate the
-- relation's free tail at any moment, so it is not compared with
-- pg_relation_size).
CREATE FUNCTION pg_temp.info(idx regclass,
    OUT num_docs bigint, OUT live_rows bigint, OUT mutable_docs bigint,
    OUT immutable_docs bigint, OUT tombstones bigint, OUT num_segments int,
    OUT segment_docs text, OUT keymap_entries bigint, OUT keymap_epoch int,
    OUT keymap_buckets_changed int, OUT index_bytes_ok bool)
LANGUAGE plpgsql AS $$
DECLARE
    tbl regclass := (SELECT indrelid FROM pg_index WHERE indexrelid = idx);
BEGIN
    EXECUTE format('SELECT count(*) FROM %s', tbl) INTO live_rows;
    SELECT i.num_docs, i.mutable_docs, i.immutable_docs, i.tombstones,
           i.num_segments,
           (SELECT string_agg(format('%s:%s/%s', s->>'segment', s->>'docs',
                                     s->>'tombstones'), ' '
                              ORDER BY (s->>'segment')::int)
            FROM jsonb_array_elements(i.segments) s),
           i.keymap_entries, i.keymap_epoch, i.keymap_buckets_changed,
           i.index_bytes > 0 AND
           i.index_bytes % current_setting('block_size')::int = 0
      INTO num_docs, mutable_docs, immutable_docs, tombstones, num_segments,
           segment_docs, keymap_entries, keymap_epoch,
           keymap_buckets_changed, index_bytes_ok
      FROM ft.info(idx) i;
END
$$;

-- verify(index): ft.verify, checking the first 100 rows at k = 1; clean
-- says every problem count is 0, no repair was done and there are no
-- examples.
CREATE FUNCTION pg_temp.verify(idx regclass,
    OUT heap_rows bigint, OUT indexed_docs bigint, OUT keymap_entries bigint,
    OUT search_checked bigint, OUT clean bool)
LANGUAGE sql AS $$
    SELECT heap_rows, indexed_docs, keymap_entries, search_checked,
           missing_docs = 0 AND duplicate_docs = 0
           AND docs_in_two_segments = 0 AND phantom_entries = 0
           AND checksum_mismatches = 0 AND missing_keymap_entries = 0
           AND search_misses = 0 AND repaired = 0
           AND cardinality(examples) = 0
    FROM ft.verify(idx, false, 100)
$$;

-- ft.similar(index, key, k) against the plain query: the ids, in order, of
-- ORDER BY embedding <-> (the key's vector) LIMIT k + 1 without the row
-- itself, once through the index and once exactly (no index).
CREATE FUNCTION pg_temp.similar_check(idx regclass, key text, k int,
    OUT ids text[], OUT same_as_index_query bool, OUT same_as_exact bool)
LANGUAGE plpgsql AS $$
DECLARE
    tbl regclass := (SELECT indrelid FROM pg_index WHERE indexrelid = idx);
    q text;
    plain text[];
    exact text[];
BEGIN
    SELECT array_agg(s.id ORDER BY s.n) INTO ids
    FROM ft.similar(idx, key, k) WITH ORDINALITY s(id, distance, n);
    q := format('SELECT array_agg(id::text ORDER BY n) FROM ('
                '  SELECT id, row_number() OVER () AS n FROM ('
                '    SELECT id FROM %1$s'
                '    ORDER BY embedding <-> (SELECT embedding FROM %1$s'
                '                            WHERE id::text = $1)'
                '    LIMIT $2 + 1) s) s'
                ' WHERE id::text <> $1', tbl);
    EXECUTE q INTO plain USING key, k;
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE q INTO exact USING key, k;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    same_as_index_query := ids = plain;
    same_as_exact := ids = exact;
END
$$;

------------------------------------------------------------------------
-- bigint ids
------------------------------------------------------------------------
CREATE TABLE km_big (id bigint PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO km_big SELECT i, pg_temp.vec(i, 8) FROM generate_series(1, 3000) i;
SELECT count(DISTINCT embedding) = count(*) AS distinct_vectors FROM km_big;
-- 3,000 rows stay in the mutable segment; the build writes the first
-- keymap snapshot (epoch 1), so no bucket has changes yet
CREATE INDEX km_big_idx ON km_big USING segvec (embedding) INCLUDE (id);
SELECT * FROM pg_temp.info('km_big_idx');
SELECT dimensions, metric, m, ef_construction, compact_threshold
FROM ft.info('km_big_idx');
SELECT * FROM pg_temp.verify('km_big_idx');

-- ft.get: the indexed vector and where it is stored
SELECT id, vector, segment FROM ft.get('km_big_idx', '42');
SELECT embedding FROM km_big WHERE id = 42;
SELECT t.id, g.id AS got_id, g.segment, g.vector = t.embedding AS same_vector
FROM km_big t, LATERAL ft.get('km_big_idx', t.id::text) g
WHERE t.id IN (1, 42, 2999, 3000) ORDER BY t.id;
-- every row is found with its own vector
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE g.vector = t.embedding) AS found_same_vector
FROM km_big t LEFT JOIN LATERAL ft.get('km_big_idx', t.id::text) g ON true;
-- unknown ids: no row
SELECT count(*) AS unknown FROM ft.get('km_big_idx', '0');
SELECT count(*) AS unknown FROM ft.get('km_big_idx', '3001');
SELECT count(*) AS unknown FROM ft.get('km_big_idx', '-42');
-- an id that is not a bigint
\set VERBOSITY terse
SELECT * FROM ft.get('km_big_idx', 'forty-two');
\set VERBOSITY default

-- ft.similar: the neighbours of a row, without the row
SELECT * FROM pg_temp.similar_check('km_big_idx', '42', 5);
SELECT key, c.same_as_index_query, c.same_as_exact
FROM (VALUES ('1'), ('777'), ('3000')) k(key),
     LATERAL pg_temp.similar_check('km_big_idx', key, 10) c;
SELECT count(*) AS similar_of_unknown FROM ft.similar('km_big_idx', '3001', 5);
-- its distance has ft.search's type
SELECT (SELECT pg_typeof(distance) FROM ft.similar('km_big_idx', '42', 1)) AS similar_type,
       (SELECT pg_typeof(distance) FROM ft.search('km_big_idx',
            (SELECT embedding FROM km_big WHERE id = 42), 1)) AS search_type;

-- ft.compact moves every doc into a graph segment; doc ids do not change,
-- so the keymap has no changes and the snapshot is not rewritten
SELECT * FROM ft.compact('km_big_idx');
SELECT * FROM pg_temp.info('km_big_idx');
SELECT t.id, g.id AS got_id, g.segment, g.vector = t.embedding AS same_vector
FROM km_big t, LATERAL ft.get('km_big_idx', t.id::text) g
WHERE t.id IN (1, 42, 2999, 3000) ORDER BY t.id;
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE g.vector = t.embedding
                          AND g.segment = 'segment 1') AS found_in_segment_1
FROM km_big t LEFT JOIN LATERAL ft.get('km_big_idx', t.id::text) g ON true;
SELECT * FROM pg_temp.similar_check('km_big_idx', '42', 5);
SELECT key, c.same_as_index_query, c.same_as_exact
FROM (VALUES ('1'), ('777'), ('3000')) k(key),
     LATERAL pg_temp.similar_check('km_big_idx', key, 10) c;
SELECT * FROM pg_temp.verify('km_big_idx');

-- inserts go to the mutable segment, each one a change of its bucket
INSERT INTO km_big SELECT i, pg_temp.vec(i, 8) FROM generate_series(3001, 3100) i;
SELECT * FROM pg_temp.info('km_big_idx');
SELECT t.id, g.segment, g.vector = t.embedding AS same_vector
FROM km_big t, LATERAL ft.get('km_big_idx', t.id::text) g
WHERE t.id IN (42, 3001, 3100) ORDER BY t.id;
SELECT * FROM pg_temp.verify('km_big_idx');

-- deleted rows: ft.get checks visibility, so they are gone before VACUUM,
-- from a graph segment (42) and from the mutable segment (3052)
DELETE FROM km_big WHERE id % 10 = 2;
SELECT count(*) AS deleted_42 FROM ft.get('km_big_idx', '42');
SELECT count(*) AS deleted_3052 FROM ft.get('km_big_idx', '3052');
SELECT count(*) AS deleted_similar FROM ft.similar('km_big_idx', '42', 5);
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE g.vector = t.embedding) AS found_same_vector
FROM km_big t LEFT JOIN LATERAL ft.get('km_big_idx', t.id::text) g ON true;
-- neither does ft.similar return deleted rows
SELECT count(*) AS deleted_neighbours
FROM generate_series(1, 3100, 97) k,
     LATERAL ft.similar('km_big_idx', k::text, 10) s
WHERE s.id::bigint % 10 = 2;
-- VACUUM: 300 tombstones in segment 1, 10 docs gone from the mutable
-- segment, their keymap entries removed (changes in their buckets)
VACUUM km_big;
SELECT * FROM pg_temp.info('km_big_idx');
SELECT * FROM pg_temp.verify('km_big_idx');
-- keymap_buckets_changed counts the buckets with changes since the snapshot
SELECT i.keymap_buckets_changed = b.changed AS buckets_changed_match,
       b.changes AS changes
FROM ft.info('km_big_idx') i,
     (SELECT count(*) FILTER (WHERE changes > 0) AS changed,
             sum(changes) AS changes
      FROM ft.keymap_buckets('km_big_idx')) b;

-- UPDATE of the vector: ft.get returns the new vector, before and after
-- VACUUM removes the old version
UPDATE km_big SET embedding = pg_temp.vec(100000 + id::int, 8)
WHERE id IN (43, 3043);
SELECT t.id, g.segment, g.vector = pg_temp.vec(100000 + t.id::int, 8) AS new_vector
FROM km_big t, LATERAL ft.get('km_big_idx', t.id::text) g
WHERE t.id IN (43, 3043) ORDER BY t.id;
SELECT * FROM pg_temp.verify('km_big_idx');
VACUUM km_big;
SELECT t.id, g.segment, g.vector = pg_temp.vec(100000 + t.id::int, 8) AS new_vector
FROM km_big t, LATERAL ft.get('km_big_idx', t.id::text) g
WHERE t.id IN (43, 3043) ORDER BY t.id;
SELECT * FROM pg_temp.info('km_big_idx');

-- compaction of the 91 mutable docs: segment 2, and a snapshot that
-- folds every bucket's changes in (epoch 2, no bucket changed since)
SELECT * FROM ft.compact('km_big_idx');
SELECT * FROM pg_temp.info('km_big_idx');
SELECT t.id, g.segment, g.vector = t.embedding AS same_vector
FROM km_big t, LATERAL ft.get('km_big_idx', t.id::text) g
WHERE t.id IN (41, 43, 3041, 3043) ORDER BY t.id;
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE g.vector = t.embedding) AS found_same_vector
FROM km_big t LEFT JOIN LATERAL ft.get('km_big_idx', t.id::text) g ON true;
SELECT key, c.same_as_index_query, c.same_as_exact
FROM (VALUES ('1'), ('43'), ('3043')) k(key),
     LATERAL pg_temp.similar_check('km_big_idx', key, 10) c;
SELECT * FROM pg_temp.verify('km_big_idx');
-- the keymap after that snapshot: its 16 buckets hold every entry, no
-- changes are left, and the runs hold the entries plus the removes that
-- cancel older runs' entries
SELECT count(*) AS buckets, sum(snapshot_entries) AS entries,
       sum(changes) AS changes
FROM ft.keymap_buckets('km_big_idx');
SELECT run, tier, pages, entries, removes FROM ft.keymap_runs('km_big_idx');

-- A snapshot writes the changes since the last one as one new run and
-- shares every older run: after one insert, the new run holds one entry
-- and every older run keeps its pages.
CREATE TEMP TABLE km_before AS SELECT * FROM ft.keymap_runs('km_big_idx');
INSERT INTO km_big VALUES (5000, pg_temp.vec(5000, 8));
-- the insert is one change, in one bucket
SELECT count(*) FILTER (WHERE changes > 0) AS changed_buckets,
       sum(changes) AS changes
FROM ft.keymap_buckets('km_big_idx');
SELECT keymap_epoch, keymap_buckets_changed FROM ft.info('km_big_idx');
SELECT ft.snapshot('km_big_idx') AS epoch;
CREATE TEMP TABLE km_after AS SELECT * FROM ft.keymap_runs('km_big_idx');
SELECT (SELECT count(*) FROM km_before b JOIN km_after a
        USING (run, block, pages, entries, removes)) = count(*)
           AS older_runs_shared,
       (SELECT array_agg(entries || '/' || removes) FROM km_after
        WHERE run NOT IN (SELECT run FROM km_before)) AS new_runs
FROM km_before;
SELECT sum(changes) AS changes_left FROM ft.keymap_buckets('km_big_idx');
SELECT keymap_epoch, keymap_buckets_changed FROM ft.info('km_big_idx');
SELECT segment, vector = pg_temp.vec(5000, 8) AS same_vector
FROM ft.get('km_big_idx', '5000');
-- a snapshot without changes writes nothing and keeps the epoch
SELECT ft.snapshot('km_big_idx') AS epoch;
SELECT count(*) AS unchanged
FROM ft.keymap_runs('km_big_idx') a JOIN km_after b
USING (run, block, pages, entries, removes);
-- the same through ft.compact's snapshot, for a delete: one remove
TRUNCATE km_before;
INSERT INTO km_before SELECT * FROM ft.keymap_runs('km_big_idx');
DELETE FROM km_big WHERE id = 777;
VACUUM km_big;
SELECT count(*) FILTER (WHERE changes > 0) AS changed_buckets
FROM ft.keymap_buckets('km_big_idx');
SELECT docs_compacted FROM ft.compact('km_big_idx');
SELECT (SELECT count(*) FROM km_before b JOIN ft.keymap_runs('km_big_idx') a
        USING (run, block, pages, entries, removes)) = count(*)
           AS older_runs_shared,
       (SELECT array_agg(entries || '/' || removes)
        FROM ft.keymap_runs('km_big_idx')
        WHERE run NOT IN (SELECT run FROM km_before)) AS new_runs
FROM km_before;
SELECT count(*) AS deleted_777 FROM ft.get('km_big_idx', '777');
SELECT sum(snapshot_entries) AS entries FROM ft.keymap_buckets('km_big_idx');
SELECT * FROM pg_temp.info('km_big_idx');
SELECT * FROM pg_temp.verify('km_big_idx');

------------------------------------------------------------------------
-- text ids, built straight into a graph segment
------------------------------------------------------------------------
CREATE TABLE km_text (id text PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO km_text SELECT 'doc-' || i, pg_temp.vec(i, 8)
FROM generate_series(1, 2000) i;
SET segvec.compact_threshold = 0;
CREATE INDEX km_text_idx ON km_text USING segvec (embedding) INCLUDE (id);
RESET segvec.compact_threshold;
SELECT * FROM pg_temp.info('km_text_idx');
SELECT * FROM pg_temp.verify('km_text_idx');
SELECT id, vector, segment FROM ft.get('km_text_idx', 'doc-42');
SELECT embedding FROM km_text WHERE id = 'doc-42';
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE g.vector = t.embedding AND g.id = t.id
                          AND g.segment = 'segment 1') AS found_in_segment_1
FROM km_text t LEFT JOIN LATERAL ft.get('km_text_idx', t.id) g ON true;
-- text is compared as it is stored: other spellings are other ids
SELECT count(*) AS unknown FROM ft.get('km_text_idx', 'DOC-42');
SELECT count(*) AS unknown FROM ft.get('km_text_idx', 'doc-42 ');
SELECT count(*) AS unknown FROM ft.get('km_text_idx', '');
SELECT * FROM pg_temp.similar_check('km_text_idx', 'doc-42', 5);
-- inserts, a delete (visible at once) and VACUUM
INSERT INTO km_text SELECT 'doc-' || i, pg_temp.vec(i, 8)
FROM generate_series(2001, 2050) i;
SELECT id, segment FROM ft.get('km_text_idx', 'doc-2050');
DELETE FROM km_text WHERE id IN ('doc-42', 'doc-2050');
SELECT count(*) AS deleted FROM ft.get('km_text_idx', 'doc-42');
SELECT count(*) AS deleted FROM ft.get('km_text_idx', 'doc-2050');
VACUUM km_text;
SELECT * FROM pg_temp.info('km_text_idx');
-- an UPDATE of the vector, in a graph segment
UPDATE km_text SET embedding = pg_temp.vec(-7, 8) WHERE id = 'doc-7';
SELECT id, segment, vector = pg_temp.vec(-7, 8) AS new_vector
FROM ft.get('km_text_idx', 'doc-7');
SELECT * FROM ft.compact('km_text_idx');
SELECT * FROM pg_temp.info('km_text_idx');
SELECT id, segment, vector = pg_temp.vec(-7, 8) AS new_vector
FROM ft.get('km_text_idx', 'doc-7');
VACUUM km_text;
SELECT * FROM pg_temp.info('km_text_idx');
SELECT * FROM pg_temp.verify('km_text_idx');
SELECT * FROM pg_temp.similar_check('km_text_idx', 'doc-7', 5);

------------------------------------------------------------------------
-- uuid ids
------------------------------------------------------------------------
CREATE TABLE km_uuid (id uuid PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO km_uuid SELECT md5(i::text)::uuid, pg_temp.vec(i, 8)
FROM generate_series(1, 2000) i;
CREATE INDEX km_uuid_idx ON km_uuid USING segvec (embedding) INCLUDE (id);
SELECT * FROM pg_temp.info('km_uuid_idx');
SELECT * FROM pg_temp.verify('km_uuid_idx');
SELECT md5('42')::uuid AS id_42;
SELECT id, vector, segment FROM ft.get('km_uuid_idx', md5('42')::uuid::text);
SELECT embedding FROM km_uuid WHERE id = md5('42')::uuid;
-- the id is read with uuid's input function: any spelling of it works
SELECT segment, vector = pg_temp.vec(42, 8) AS same_vector
FROM ft.get('km_uuid_idx', upper(md5('42')));
SELECT count(*) AS unknown FROM ft.get('km_uuid_idx', md5('x')::uuid::text);
\set VERBOSITY terse
SELECT * FROM ft.get('km_uuid_idx', 'not-a-uuid');
\set VERBOSITY default
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE g.vector = t.embedding) AS found_same_vector
FROM km_uuid t LEFT JOIN LATERAL ft.get('km_uuid_idx', t.id::text) g ON true;
SELECT * FROM pg_temp.similar_check('km_uuid_idx', md5('42')::uuid::text, 5);
SELECT * FROM ft.compact('km_uuid_idx');
SELECT id, segment FROM ft.get('km_uuid_idx', md5('42')::uuid::text);
DELETE FROM km_uuid WHERE id IN (SELECT md5(i::text)::uuid FROM generate_series(1, 2000, 4) i);
SELECT count(*) AS deleted FROM ft.get('km_uuid_idx', md5('1')::uuid::text);
VACUUM km_uuid;
INSERT INTO km_uuid SELECT md5(i::text)::uuid, pg_temp.vec(i, 8)
FROM generate_series(2001, 2020) i;
SELECT * FROM pg_temp.info('km_uuid_idx');
SELECT * FROM pg_temp.verify('km_uuid_idx');
SELECT id, segment FROM ft.get('km_uuid_idx', md5('2001')::uuid::text);
SELECT count(*) AS rows_checked,
       count(*) FILTER (WHERE g.vector = t.embedding) AS found_same_vector
FROM km_uuid t LEFT JOIN LATERAL ft.get('km_uuid_idx', t.id::text) g ON true;

------------------------------------------------------------------------
-- an index without INCLUDE (id): no keymap
------------------------------------------------------------------------
CREATE TABLE km_nokey (id bigint, embedding real[]);
INSERT INTO km_nokey SELECT i, pg_temp.vec(i, 8) FROM generate_series(1, 100) i;
CREATE INDEX km_nokey_idx ON km_nokey USING segvec (embedding);
\set VERBOSITY terse
SELECT * FROM ft.get('km_nokey_idx', '1');
SELECT * FROM ft.similar('km_nokey_idx', '1', 5);
\set VERBOSITY default
SELECT count(*) AS buckets, sum(snapshot_entries) AS entries,
       sum(changes) AS changes
FROM ft.keymap_buckets('km_nokey_idx');
SELECT count(*) AS runs FROM ft.keymap_runs('km_nokey_idx');
SELECT ft.snapshot('km_nokey_idx') AS epoch;
SELECT * FROM pg_temp.info('km_nokey_idx');
SELECT heap_rows, indexed_docs, keymap_entries, missing_docs,
       phantom_entries, missing_keymap_entries, search_misses
FROM ft.verify('km_nokey_idx');
-- not a segvec index
\set VERBOSITY terse
SELECT * FROM ft.get('km_big_pkey', '1');
SELECT * FROM ft.info('km_big_pkey');
\set VERBOSITY default
-- the error and a hint, no CONTEXT of ft.info's own SQL
SELECT * FROM ft.info('km_big_pkey');

DROP TABLE km_big, km_text, km_uuid, km_nokey, km_before, km_after;

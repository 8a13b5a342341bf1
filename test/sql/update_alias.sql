-- Aliases: an UPDATE that keeps a row's id and vector (a non-HOT update of
-- another column) appends a small alias of the doc that holds the vector
-- instead of a copy.  Every row is found exactly once by its own vector at
-- k = 1 after the UPDATE, after rollbacks, after VACUUM, after compaction
-- and after a merge; an UPDATE that changes the vector still copies it.
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
CREATE SCHEMA segvec_update_alias;
SET search_path = segvec_update_alias, public;
\set VERBOSITY terse

-- deterministic, pairwise distinct 512-dim vectors (2 kB each)
CREATE FUNCTION uvec(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg((sin(i * 0.7 + j * 0.31) + cos(i * 0.013 * j))::real
                   ORDER BY j)
  FROM generate_series(1, 512) j $$;

CREATE TABLE items (id int PRIMARY KEY, embedding real[], note int)
  WITH (autovacuum_enabled = off);
-- a btree on note: an UPDATE of note is not HOT
CREATE INDEX items_note ON items (note);
INSERT INTO items SELECT i, uvec(i), 0 FROM generate_series(1, 200) i;

-- no compaction but the ones asked for
CREATE INDEX items_vec ON items USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 1000000);
SELECT docs_compacted FROM ft.compact('items_vec');

-- every row's own vector finds it, once, at k = 1; and no other row is
-- returned twice among the 5 nearest
CREATE FUNCTION check_rows() RETURNS TABLE (rows bigint, found_first bigint,
                                            found_once bigint)
LANGUAGE sql AS $$
  SELECT count(*),
         count(*) FILTER (WHERE (SELECT i.id FROM items i
                                 ORDER BY i.embedding <-> t.embedding
                                 LIMIT 1) = t.id),
         count(*) FILTER (WHERE (SELECT count(*) FROM
                                   (SELECT i.id FROM items i
                                    ORDER BY i.embedding <-> t.embedding
                                    LIMIT 5) n WHERE n.id = t.id) = 1)
  FROM items t $$;
CREATE FUNCTION stats() RETURNS TABLE (mutable_docs bigint,
                                       immutable_docs bigint,
                                       tombstones bigint, keymap_entries bigint)
LANGUAGE sql AS $$
  SELECT mutable_docs, immutable_docs, tombstones, keymap_entries
  FROM ft.index_stats('items_vec') $$;
CREATE FUNCTION verify() RETURNS TABLE (heap_rows bigint, missing bigint,
                                        duplicate bigint, phantoms bigint,
                                        mismatches bigint, missing_entries bigint,
                                        search_misses bigint)
LANGUAGE sql AS $$
  SELECT heap_rows, missing_docs, duplicate_docs, phantom_entries,
         checksum_mismatches, missing_keymap_entries, search_misses
  FROM ft.verify('items_vec') $$;
-- VACUUM removes only what no snapshot sees: let jobs that other suites
-- left running finish first, so that no worker's snapshot holds it back
CREATE PROCEDURE wait_for_jobs() LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM ft.jobs);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
-- where the visible version of each row is indexed: how many rows in a
-- segment, as a copy in the mutable segment, as an alias
CREATE FUNCTION kinds() RETURNS TABLE (kind text, n bigint)
LANGUAGE sql AS $$
  SELECT regexp_replace(g.segment, ' [0-9]+$', ''), count(*)
  FROM items t, ft.get('items_vec', t.id::text) g
  GROUP BY 1 ORDER BY 1 $$;

SELECT * FROM stats();
SELECT * FROM check_rows();

-- 100 aliases, not 100 copies of 2 kB
UPDATE items SET note = note + 1 WHERE id <= 100;
SELECT * FROM kinds();
SELECT * FROM stats();
SELECT * FROM check_rows();
-- the old versions are not visible; the new ones are
SELECT count(*), sum(note) FROM items WHERE id <= 100;

-- rolled-back UPDATEs leave aliases of dead row versions
BEGIN;
UPDATE items SET note = note + 10 WHERE id BETWEEN 101 AND 150;
SELECT * FROM check_rows();
ROLLBACK;
SELECT * FROM check_rows();
SELECT sum(note) FROM items;

-- an UPDATE that changes the vector copies it
UPDATE items SET embedding = uvec(1000 + id) WHERE id BETWEEN 191 AND 200;
-- one that assigns the vector its own value gets an alias: the floats are
-- compared (with note: else the UPDATE is HOT and indexes nothing)
UPDATE items SET embedding = embedding, note = note + 1 WHERE id = 190;
SELECT * FROM kinds();
SELECT * FROM stats();
SELECT * FROM check_rows();
SELECT id FROM items ORDER BY embedding <-> uvec(1195) LIMIT 1;
SELECT * FROM verify();

-- VACUUM: the old versions' docs are tombstoned, the rolled-back aliases
-- removed; the aliases of the live rows stay, their targets' vectors too
-- (segvec.merge_deletes_pct = 100: no rewrite of the segment, more than
-- half tombstones now, until the merge below; see the end of this file
-- for aliases whose targets a rewrite dropped)
SET segvec.merge_deletes_pct = 100;
CALL wait_for_jobs();
VACUUM items;
SELECT * FROM stats();
SELECT * FROM check_rows();
SELECT * FROM verify();

-- an alias of an alias: the row's doc is tombstoned and its keymap entry
-- gone, but the keymap change of the row's alias names the alias's page, so
-- the UPDATE of an updated row aliases the same target (with no vector
-- read: the TOAST pointer is the old version's; see "Aliases" in
-- src/README.md); rows updated for the first time get aliases too
UPDATE items SET note = note + 1 WHERE id <= 120;
SELECT * FROM kinds();
SELECT * FROM stats();
SELECT * FROM check_rows();

-- compaction: every alias becomes a doc of the new segment
SELECT docs_compacted FROM ft.compact('items_vec');
SELECT * FROM kinds();
SELECT * FROM stats();
SELECT * FROM check_rows();
SELECT * FROM verify();

-- after compaction, the rows' docs are in a segment again: aliases
BEGIN;
UPDATE items SET note = note + 1;
ROLLBACK;
UPDATE items SET note = note + 1 WHERE id % 2 = 0;
SELECT * FROM kinds();
SELECT * FROM stats();
SELECT * FROM check_rows();
CALL wait_for_jobs();
VACUUM items;
SELECT * FROM stats();
SELECT * FROM check_rows();
SELECT * FROM verify();

-- a merge: the first segment, mostly tombstones now, is rewritten; the
-- aliases were compacted first
RESET segvec.merge_deletes_pct;
SELECT docs_compacted, segments_merged > 0 AS merged FROM ft.compact('items_vec');
SELECT * FROM stats();
SELECT * FROM check_rows();
SELECT * FROM verify();
SELECT count(*), sum(note) FROM items;

-- ft.get reads an alias's vector from its target
UPDATE items SET note = note + 1 WHERE id = 7;
SELECT vector = uvec(7) AS same_vector, segment
FROM ft.get('items_vec', '7');

-- upserts whose id and vector equal what a segment's doc holds alias too:
-- ft.add of an unchanged row, INSERT ... ON CONFLICT DO UPDATE of the same
-- vector; ft.add of another vector copies (segvec.background_merge =
-- off: ft.flush applies the queue, not a worker)
SET segvec.background_merge = off;
SELECT ft.add('items_vec', '120', uvec(120)) > 0 AS queued;
SELECT ft.add('items_vec', '121', uvec(2121)) > 0 AS queued;
SELECT applied, inserted, updated FROM ft.flush('items_vec');
RESET segvec.background_merge;
INSERT INTO items VALUES (122, uvec(122), 5)
  ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding,
                                 note = excluded.note;
SELECT t.id, g.segment, g.vector = t.embedding AS same_vector
FROM items t, ft.get('items_vec', t.id::text) g
WHERE t.id BETWEEN 120 AND 122 ORDER BY t.id;
SELECT array_agg(id ORDER BY id) FROM
  (SELECT id FROM items ORDER BY embedding <-> uvec(120) LIMIT 1) n;
SELECT array_agg(id ORDER BY id) FROM
  (SELECT id FROM items ORDER BY embedding <-> uvec(2121) LIMIT 1) n;
SELECT array_agg(id ORDER BY id) FROM
  (SELECT id FROM items ORDER BY embedding <-> uvec(122) LIMIT 1) n;
SELECT * FROM check_rows();

-- a row inserted since the last compaction is in the mutable segment: its
-- UPDATE copies (an alias's target is always a segment's doc)
INSERT INTO items VALUES (201, uvec(201), 0);
UPDATE items SET note = 1 WHERE id = 201;
SELECT segment FROM ft.get('items_vec', '201');
SELECT * FROM check_rows();

-- a BEFORE UPDATE trigger that changes the vector behind the executor's
-- back (indexUnchanged stays true), here to another row's TOASTed value:
-- neither the TOAST pointer nor the floats match, so the row gets a copy,
-- found by its new vector
CREATE FUNCTION take_vec() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.embedding := (SELECT embedding FROM items WHERE id = 3);
  RETURN NEW;
END $$;
CREATE TRIGGER items_take BEFORE UPDATE ON items FOR EACH ROW
  WHEN (NEW.note = -1) EXECUTE FUNCTION take_vec();
UPDATE items SET note = -1 WHERE id = 5;
DROP TRIGGER items_take ON items;
SELECT segment FROM ft.get('items_vec', '5');
SELECT array_agg(id ORDER BY id) FROM
  (SELECT id FROM items ORDER BY embedding <-> uvec(3) LIMIT 2) n;
SELECT count(*) FROM (SELECT id FROM items ORDER BY embedding <-> uvec(5)
                      LIMIT 1) n WHERE id = 5;

-- vectors stored inline (64 dims): the old version's bytes are compared
-- instead of a TOAST pointer, and an unchanged vector gets an alias
CREATE TABLE small (id int PRIMARY KEY, embedding real[], note int)
  WITH (autovacuum_enabled = off);
CREATE INDEX small_note ON small (note);
INSERT INTO small SELECT i, (uvec(i))[1:64], 0 FROM generate_series(1, 50) i;
CREATE INDEX small_vec ON small USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 1000000);
SELECT docs_compacted FROM ft.compact('small_vec');
UPDATE small SET note = note + 1 WHERE id <= 20;
-- and the trigger's change of the vector is seen there too
CREATE FUNCTION take_small() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.embedding := (SELECT embedding FROM small WHERE id = 3);
  RETURN NEW;
END $$;
CREATE TRIGGER small_take BEFORE UPDATE ON small FOR EACH ROW
  WHEN (NEW.note = -1) EXECUTE FUNCTION take_small();
UPDATE small SET note = -1 WHERE id = 30;
SELECT regexp_replace(g.segment, ' [0-9]+$', '') AS kind, count(*)
FROM small t, ft.get('small_vec', t.id::text) g GROUP BY 1 ORDER BY 1;
SELECT count(*) FILTER (WHERE (SELECT i.id FROM small i
                               ORDER BY i.embedding <-> t.embedding, i.id
                               LIMIT 1) = t.id) AS found_first
FROM small t WHERE id <> 30;
SELECT array_agg(id ORDER BY id) FROM
  (SELECT id FROM small ORDER BY embedding <-> (uvec(3))[1:64] LIMIT 2) n;

-- aliases whose targets a rewrite dropped: VACUUM tombstones the old
-- versions' docs (40% of the segment) and has the segment rewritten
-- without them (segvec.merge_deletes_pct: a background job); the aliases'
-- vectors are read from their heap rows.  Updated again, the aliased rows'
-- versions die; if their pages were pruned, compaction's freeze finds
-- neither target nor row for those aliases, leaves them out and removes
-- their keymap entries (no phantom entry: VACUUM would find no doc to
-- remove them with; test/t/096_tomb_rewrite.pl)
UPDATE small SET note = note + 1 WHERE id <= 20;
VACUUM small;
CALL wait_for_jobs();
SELECT num_docs, tombstones, num_segments FROM ft.info('small_vec');
UPDATE small SET note = note + 1 WHERE id <= 20;
SELECT count(*) FROM small WHERE note > 0;
SELECT docs_compacted > 0 AS compacted FROM ft.compact('small_vec');
VACUUM small;
SELECT docs_compacted >= 0 AS compacted FROM ft.compact('small_vec');
SELECT heap_rows, missing_docs, duplicate_docs, phantom_entries,
       checksum_mismatches, missing_keymap_entries, search_misses
FROM ft.verify('small_vec');
SELECT count(*) FILTER (WHERE (SELECT i.id FROM small i
                               ORDER BY i.embedding <-> t.embedding, i.id
                               LIMIT 1) = t.id) AS found_first
FROM small t WHERE id <> 30;

DROP SCHEMA segvec_update_alias CASCADE;

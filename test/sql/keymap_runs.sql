-- Keymap snapshots cost what changed since the last one: on a
-- keymap of 200,000 entries, a snapshot after 1,000 changes writes one new
-- run of those changes and shares the old run, and its WAL is bounded by
-- the changes, not by the keymap's size (a rewrite of the whole keymap
-- would log 200,000 * 24 bytes, 4.8 MB).  Lookups read every run.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;

CREATE TABLE kr (id bigint PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO kr SELECT i, ARRAY[i % 1000, i / 1000]::real[]
FROM generate_series(1, 200000) i;
-- everything stays in the mutable segment (no graph to build, no
-- background compaction); the build writes the first snapshot: one run of
-- 200,000 entries
CREATE INDEX kr_idx ON kr USING segvec (embedding) INCLUDE (id)
    WITH (compact_threshold = 1000000000);
SELECT run, tier, pages, entries, removes FROM ft.keymap_runs('kr_idx');

-- background jobs of earlier suites (a queued merge runs in a snapshot)
-- would keep VACUUM below from removing the deleted rows: let them finish
DO $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM ft.jobs);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;

-- 1,000 changes: 900 inserts and 100 deletes (VACUUM removes their
-- entries)
INSERT INTO kr SELECT i, ARRAY[i % 1000, i / 1000]::real[]
FROM generate_series(200001, 200900) i;
DELETE FROM kr WHERE id <= 100;
VACUUM (INDEX_CLEANUP ON) kr;
SELECT sum(changes) AS changes FROM ft.keymap_buckets('kr_idx');

-- the WAL position is the cluster's: let background jobs finish first
DO $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM ft.jobs);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
CREATE TEMP TABLE kr_lsn AS SELECT pg_current_wal_insert_lsn() AS lsn;
SELECT ft.snapshot('kr_idx') AS epoch;
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), lsn) < 100 * 1000
           AS wal_under_100_bytes_per_change,
       pg_wal_lsn_diff(pg_current_wal_insert_lsn(), lsn) > 1000 * 24
           AS wal_holds_the_changes
FROM kr_lsn;
-- the old run is shared, the new one holds the 1,000 changes
SELECT run, tier, pages, entries, removes FROM ft.keymap_runs('kr_idx');
SELECT sum(changes) AS changes, sum(snapshot_entries) AS entries
FROM ft.keymap_buckets('kr_idx');

-- lookups see the old run, the new run and the removes in it
SELECT count(*) AS deleted FROM ft.get('kr_idx', '50');
SELECT vector FROM ft.get('kr_idx', '150000');
SELECT vector FROM ft.get('kr_idx', '200900');
SELECT keymap_entries, missing_keymap_entries, phantom_entries
FROM ft.verify('kr_idx', false, 0);

-- another 1,000 changes: again only their run is written
INSERT INTO kr SELECT i, ARRAY[i % 1000, i / 1000]::real[]
FROM generate_series(200901, 201900) i;
DO $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM ft.jobs);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
TRUNCATE kr_lsn;
INSERT INTO kr_lsn SELECT pg_current_wal_insert_lsn();
SELECT ft.snapshot('kr_idx') AS epoch;
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), lsn) < 100 * 1000
           AS wal_under_100_bytes_per_change
FROM kr_lsn;
SELECT run, tier, pages, entries, removes FROM ft.keymap_runs('kr_idx');

-- four runs of one tier merge into one (tiered policy); the removes stay
-- in it, as the oldest run holds the entries they cancel
INSERT INTO kr SELECT i, ARRAY[i % 1000, i / 1000]::real[]
FROM generate_series(201901, 202900) i;
SELECT ft.snapshot('kr_idx') AS epoch;
INSERT INTO kr SELECT i, ARRAY[i % 1000, i / 1000]::real[]
FROM generate_series(202901, 203900) i;
SELECT ft.snapshot('kr_idx') AS epoch;
SELECT run, tier, pages, entries, removes FROM ft.keymap_runs('kr_idx');
SELECT keymap_run_merges, keymap_runs FROM ft.storage_stats('kr_idx');
SELECT count(*) AS deleted FROM ft.get('kr_idx', '50');
SELECT vector FROM ft.get('kr_idx', '203900');
SELECT keymap_entries, missing_keymap_entries, phantom_entries
FROM ft.verify('kr_idx', false, 0);
SELECT count(*) AS live_rows FROM kr;
DROP TABLE kr;

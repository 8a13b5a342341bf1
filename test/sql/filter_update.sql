-- Aliases in an index with filter columns: a non-HOT UPDATE that keeps a
-- row's vector appends an alias (not a copy of the vector) that carries the
-- new row version's own filter values, whether the UPDATE changed another
-- column (the executor's indexUnchanged hint) or a filter column (no hint).
-- Filtered top-k through the index equals the exact filtered answer after
-- such UPDATEs, a rollback, ft.compact (the aliases become docs of a graph
-- segment with their own values), VACUUM and UPDATEs again; for TOASTed
-- vectors (the TOAST pointer proves the vector unchanged) and inline ones
-- (compared by floats).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
CREATE SCHEMA segvec_filter_update;
SET search_path = segvec_filter_update, public;
\set VERBOSITY terse
SET jit = off;

-- deterministic, pairwise distinct vectors
CREATE FUNCTION fvec(i int, d int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg((sin(i * 0.7 + j * 0.31) + cos(i * 0.013 * j))::real
                   ORDER BY j)
  FROM generate_series(1, d) j $$;

-- big: 512 dimensions (2 kB, TOASTed); small: 16 dimensions (inline)
CREATE TABLE big (id int PRIMARY KEY, embedding real[], tenant int,
                  labels int4[], note int) WITH (autovacuum_enabled = off);
CREATE TABLE small (LIKE big INCLUDING ALL) WITH (autovacuum_enabled = off);
-- a btree on note: an UPDATE of note is not HOT
CREATE INDEX ON big (note);
CREATE INDEX ON small (note);
INSERT INTO big
  SELECT i, fvec(i, 512), i % 4, ARRAY[i % 5, 10 + i % 3], 0
  FROM generate_series(1, 400) i;
INSERT INTO small
  SELECT i, fvec(i, 16), i % 4, ARRAY[i % 5, 10 + i % 3], 0
  FROM generate_series(1, 400) i;
-- no compaction but the ones asked for
CREATE INDEX big_idx ON big USING segvec (embedding, tenant, labels)
  INCLUDE (id) WITH (compact_threshold = 1000000);
CREATE INDEX small_idx ON small USING segvec (embedding, tenant, labels)
  INCLUDE (id) WITH (compact_threshold = 1000000);
SELECT docs_compacted FROM ft.compact('big_idx');
SELECT docs_compacted FROM ft.compact('small_idx');

CREATE TABLE conds (cond text);
INSERT INTO conds VALUES
  ('tenant = 0'), ('tenant = 1'), ('tenant < 2'), ('tenant IS NULL'),
  ('labels && ''{2}'''), ('labels @> ''{7}'''), ('tenant = 3 AND labels && ''{11}''');

-- the filtered top k of query vector q through the segvec index, or
-- exactly (no index): ids in order
CREATE FUNCTION topk(tbl text, cond text, q int, k int, exact bool)
RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
  r int[];
  d int := CASE tbl WHEN 'big' THEN 512 ELSE 16 END;
BEGIN
  IF exact THEN
    PERFORM set_config('enable_indexscan', 'off', true);
  ELSE
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_sort', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
  END IF;
  EXECUTE format('SELECT coalesce(array_agg(id), ''{}'') FROM (
      SELECT id FROM %I WHERE %s ORDER BY embedding <-> $1 LIMIT $2) s',
      tbl, cond)
    INTO r USING fvec(100000 + q, d), k;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_sort', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  RETURN r;
END $$;

-- per condition: rows that pass, and whether the index's top 10 and top 50
-- equal the exact ones for three query vectors
CREATE FUNCTION check_conds(tbl text)
RETURNS TABLE (cond text, passing bigint, exact boolean)
LANGUAGE plpgsql AS $$
DECLARE
  c text;
  q int;
BEGIN
  FOR c IN SELECT conds.cond FROM conds ORDER BY 1 LOOP
    cond := c;
    EXECUTE format('SELECT count(*) FROM %I WHERE %s', tbl, c) INTO passing;
    exact := true;
    FOR q IN 1 .. 3 LOOP
      exact := exact
        AND topk(tbl, c, q, 10, false) = topk(tbl, c, q, 10, true)
        AND topk(tbl, c, q, 50, false) = topk(tbl, c, q, 50, true);
    END LOOP;
    RETURN NEXT;
  END LOOP;
END $$;

-- conditions whose answer differs from the exact one (none, we hope)
CREATE FUNCTION wrong(tbl text) RETURNS text[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(cond ORDER BY cond), '{}')
  FROM check_conds(tbl) WHERE NOT exact $$;

-- where the visible version of each row is indexed: in a segment, as a
-- copy in the mutable segment, as an alias
CREATE FUNCTION kinds(tbl text)
RETURNS TABLE (kind text, n bigint) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'SELECT regexp_replace(g.segment, '' [0-9]+$'', ''''), count(*)
     FROM %I t, ft.get(%L, t.id::text) g GROUP BY 1 ORDER BY 1',
    tbl, tbl || '_idx');
END $$;

CREATE FUNCTION verify(idx text) RETURNS TABLE (heap_rows bigint,
  missing bigint, duplicate bigint, phantoms bigint, mismatches bigint,
  missing_entries bigint, search_misses bigint)
LANGUAGE sql AS $$
  SELECT heap_rows, missing_docs, duplicate_docs, phantom_entries,
         checksum_mismatches, missing_keymap_entries, search_misses
  FROM ft.verify(idx::regclass) $$;

-- VACUUM removes only what no snapshot sees: let jobs that other suites
-- left running finish first
CREATE PROCEDURE wait_for_jobs() LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM ft.jobs);
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;

-- (a scan read to its end may say at NOTICE how many late finds it left
-- out: not what this suite checks)
SET client_min_messages = warning;
SELECT * FROM check_conds('big');
SELECT wrong('small');

-- an UPDATE of another column: aliases, not 400 copies of 2 kB (the index
-- grows by a few pages, not by 100)
CREATE TEMP TABLE sizes AS
  SELECT pg_relation_size('big_idx') AS big, pg_relation_size('small_idx') AS small;
UPDATE big SET note = note + 1;
UPDATE small SET note = note + 1;
SELECT (pg_relation_size('big_idx') - big) / 8192 < 10 AS big_grew_little
FROM sizes;
SELECT * FROM kinds('big');
SELECT * FROM kinds('small');
SELECT mutable_docs, immutable_docs FROM ft.index_stats('big_idx');
SELECT wrong('big'), wrong('small');

-- UPDATEs of the filter columns (no executor hint: a key column changed)
-- of rows whose current doc is an alias: new aliases of the same target,
-- each with the new values
UPDATE big SET tenant = (tenant + 1) % 4 WHERE id % 3 = 0;
UPDATE small SET tenant = (tenant + 1) % 4 WHERE id % 3 = 0;
UPDATE big SET tenant = NULL, labels = labels || 7 WHERE id % 7 = 0;
UPDATE small SET tenant = NULL, labels = labels || 7 WHERE id % 7 = 0;
SELECT * FROM kinds('big');
SELECT * FROM kinds('small');
SELECT * FROM check_conds('big');
SELECT wrong('small');

-- rolled back: aliases of dead row versions with values no row has
BEGIN;
UPDATE big SET tenant = 1 WHERE id <= 200;
UPDATE small SET tenant = 1 WHERE id <= 200;
SELECT wrong('big'), wrong('small');
ROLLBACK;
SELECT wrong('big'), wrong('small');

-- compaction: each alias becomes a doc of the new segment with its own
-- values (not its target's)
SELECT docs_compacted FROM ft.compact('big_idx');
SELECT docs_compacted FROM ft.compact('small_idx');
SELECT * FROM kinds('big');
SELECT * FROM check_conds('big');
SELECT wrong('small');

-- filter columns of rows in graph segments again (and assigning the vector
-- its own value: still an alias); then VACUUM
UPDATE big SET tenant = 2, embedding = embedding WHERE id % 5 = 0;
UPDATE small SET tenant = 2, embedding = embedding WHERE id % 5 = 0;
UPDATE big SET labels = '{2}' WHERE id % 11 = 0;
UPDATE small SET labels = '{2}' WHERE id % 11 = 0;
-- a changed vector is copied
UPDATE big SET embedding = fvec(1000 + id, 512), tenant = 0 WHERE id = 1;
UPDATE small SET embedding = fvec(1000 + id, 16), tenant = 0 WHERE id = 1;
SELECT * FROM kinds('big');
SELECT * FROM kinds('small');
SELECT wrong('big'), wrong('small');
CALL wait_for_jobs();
VACUUM big;
VACUUM small;
SELECT wrong('big'), wrong('small');

-- after VACUUM removed the first versions' entries: UPDATEs again, then a
-- compaction and a VACUUM that merge the segments
UPDATE big SET tenant = 3 WHERE id % 4 = 1;
UPDATE small SET tenant = 3 WHERE id % 4 = 1;
SELECT wrong('big'), wrong('small');
SELECT docs_compacted FROM ft.compact('big_idx');
SELECT docs_compacted FROM ft.compact('small_idx');
CALL wait_for_jobs();
VACUUM big;
VACUUM small;
SELECT * FROM check_conds('big');
SELECT wrong('small');
SELECT * FROM verify('big_idx');
SELECT * FROM verify('small_idx');

DROP SCHEMA segvec_filter_update CASCADE;

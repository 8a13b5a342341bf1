-- ft.create, ft.list and ft.dropindex (FT.CREATE, FT._LIST, FT.DROPINDEX):
-- the index and the id btree they make, the errors for bad arguments, names
-- that look like SQL, and DROPINDEX with and without DD.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;

-- deterministic, pairwise distinct 4-dim vectors
CREATE FUNCTION pg_temp.v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 4) j $$;

CREATE TABLE ftc_docs (id bigint, embedding real[], category text,
  title text, dvec double precision[]);
INSERT INTO ftc_docs
  SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE pg_temp.v(i) END,
         'c' || i % 3, 't' || i, NULL
  FROM generate_series(1, 100) i;

-- the indexes of a table: name, access method, unique, definition
CREATE FUNCTION pg_temp.indexes(t regclass)
RETURNS TABLE (name name, am name, uniq boolean, def text)
LANGUAGE sql AS $$
  SELECT c.relname, a.amname, i.indisunique,
         regexp_replace(pg_get_indexdef(i.indexrelid), ' WITH .*', '')
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_am a ON a.oid = c.relam
  WHERE i.indrelid = t ORDER BY c.relname $$;

-- 1. The index, INCLUDE (id), and a unique btree on the id (the ids are
-- unique).  Returns the index.
SELECT ft.create('ftc_l2', 'ftc_docs', 'id', 'embedding');
SELECT * FROM pg_temp.indexes('ftc_docs');
SELECT reloptions FROM pg_class WHERE oid = 'ftc_l2'::regclass;

-- 2. Other metrics (any case) and options; the btree is there already, so
-- no second one
SELECT ft.create('ftc_cos', 'ftc_docs', 'id', 'embedding', 'COSINE',
  m => 8, ef_construction => 32);
SELECT ft.create('ftc_ip', 'ftc_docs', 'id', 'embedding', metric => 'ip',
  dimensions => 4);
SELECT * FROM pg_temp.indexes('ftc_docs');
SELECT c.relname, c.reloptions FROM pg_class c
  WHERE c.oid IN ('ftc_cos'::regclass, 'ftc_ip'::regclass) ORDER BY 1;

-- 3. ft.list: each index with its table, columns, metric and num_docs (the
-- 90 rows with a vector)
SELECT * FROM ft.list() WHERE tbl = 'ftc_docs'::regclass;
SELECT count(*) FILTER (WHERE embedding IS NOT NULL) AS docs FROM ftc_docs;

-- 4. Errors
\set VERBOSITY terse
SELECT ft.create('x', 'ftc_nosuch', 'id', 'embedding');
SELECT ft.create('x', 'ftc_docs', 'nosuch', 'embedding');
SELECT ft.create('x', 'ftc_docs', 'id', 'nosuch');
SELECT ft.create('x', 'ftc_docs', 'id', 'title');
SELECT ft.create('x', 'ftc_docs', 'id', 'dvec');
SELECT ft.create('x', 'ftc_docs', 'embedding', 'embedding');
SELECT ft.create('ftc_l2', 'ftc_docs', 'id', 'embedding');
SELECT ft.create('ftc_docs', 'ftc_docs', 'id', 'embedding');
SELECT ft.create('x', 'ftc_docs', 'id', 'embedding', 'hamming');
SELECT ft.create('x', 'ftc_docs', 'id', 'embedding', m => 1);
SELECT ft.create(NULL, 'ftc_docs', 'id', 'embedding');
SELECT ft.create('x', 'ftc_docs', 'id', 'embedding', m => NULL);
CREATE VIEW ftc_view AS SELECT * FROM ftc_docs;
SELECT ft.create('x', 'ftc_view', 'id', 'embedding');
DROP VIEW ftc_view;
-- a wrong dimension for the existing vectors
SELECT ft.create('x', 'ftc_docs', 'id', 'embedding', dimensions => 3);
\set VERBOSITY default
-- nothing was left behind by the failed calls
SELECT count(*) AS indexes FROM pg_index WHERE indrelid = 'ftc_docs'::regclass;

-- 5. Names that look like SQL are names: the index is created under that
-- exact name, nothing else happens; a column "name" with SQL in it is just
-- a missing column.
SELECT ft.create('ftc_x"; DROP TABLE ftc_docs; --', 'ftc_docs', 'id', 'embedding');
SELECT count(*) AS rows FROM ftc_docs;
\set VERBOSITY terse
SELECT ft.create('ftc_y', 'ftc_docs', 'id; DROP TABLE ftc_docs; --', 'embedding');
SELECT ft.create('ftc_y', 'ftc_docs', 'id', 'embedding) INCLUDE (title');
\set VERBOSITY default
SELECT count(*) AS rows FROM ftc_docs;
SELECT ft.dropindex('"ftc_x""; DROP TABLE ftc_docs; --"');

-- 6. Ids that repeat: a plain btree, with a WARNING; an existing btree
-- leading with the id is used as it is, and a BRIN does not count
CREATE TABLE ftc_dup (id int, embedding real[]);
INSERT INTO ftc_dup SELECT i % 5, pg_temp.v(i) FROM generate_series(1, 20) i;
SELECT ft.create('ftc_dup_idx', 'ftc_dup', 'id', 'embedding');
SELECT * FROM pg_temp.indexes('ftc_dup');
CREATE TABLE ftc_own (id text, embedding real[]);
CREATE INDEX ftc_own_id ON ftc_own (id, embedding);
SELECT ft.create('ftc_own_idx', 'ftc_own', 'id', 'embedding');
SELECT * FROM pg_temp.indexes('ftc_own');
CREATE TABLE ftc_brin (id int, embedding real[]);
CREATE INDEX ftc_brin_id ON ftc_brin USING brin (id);
CREATE INDEX ftc_brin_part ON ftc_brin (id) WHERE id > 0;
SELECT ft.create('ftc_brin_idx', 'ftc_brin', 'id', 'embedding');
SELECT * FROM pg_temp.indexes('ftc_brin');

-- 6b. Filter columns: key columns after the vector, served as index
-- conditions; a missing column or a type segvec cannot filter on is an
-- error and leaves nothing behind
CREATE TABLE ftc_filt (id int, embedding real[], tenant int, cat text,
  score float8);
INSERT INTO ftc_filt SELECT i, pg_temp.v(i), i % 4, 'c' || i % 3, i
  FROM generate_series(1, 40) i;
SELECT ft.create('ftc_filt_idx', 'ftc_filt', 'id', 'embedding',
  filter_columns => '{tenant,cat}');
SELECT * FROM pg_temp.indexes('ftc_filt');
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM ftc_filt WHERE tenant = 2 AND cat = 'c1'
  ORDER BY embedding <-> pg_temp.v(7) LIMIT 3;
SELECT id FROM ftc_filt WHERE tenant = 2 AND cat = 'c1'
  ORDER BY embedding <-> pg_temp.v(7) LIMIT 3;
RESET enable_seqscan;
\set VERBOSITY terse
SELECT ft.create('x', 'ftc_filt', 'id', 'embedding', filter_columns => '{nosuch}');
SELECT ft.create('x', 'ftc_filt', 'id', 'embedding', filter_columns => '{score}');
SELECT ft.create('x', 'ftc_filt', 'id', 'embedding', filter_columns => ARRAY[NULL]::name[]);
\set VERBOSITY default
SELECT count(*) AS indexes FROM pg_index WHERE indrelid = 'ftc_filt'::regclass;

-- 7. ft.dropindex: without DD the rows stay; with DD the rows it indexed
-- (those with a vector) go, in the same transaction as the drop
SELECT ft.dropindex('ftc_cos');
SELECT count(*) AS rows FROM ftc_docs;
BEGIN;
SELECT ft.dropindex('ftc_ip', delete_docs => true) AS deleted;
SELECT count(*) AS rows, count(embedding) AS with_vector FROM ftc_docs;
ROLLBACK;
SELECT count(*) AS rows FROM ftc_docs;
SELECT ft.dropindex('ftc_ip', true) AS deleted;
SELECT count(*) AS rows, count(embedding) AS with_vector FROM ftc_docs;
SELECT * FROM pg_temp.indexes('ftc_docs');
SELECT * FROM ft.list() WHERE tbl = 'ftc_docs'::regclass;
\set VERBOSITY terse
SELECT ft.dropindex('ftc_docs_id_idx');
SELECT ft.dropindex('ftc_docs');
SELECT ft.dropindex('ftc_cos');
SELECT ft.dropindex(NULL);
\set VERBOSITY default

DROP TABLE ftc_docs, ftc_dup, ftc_own, ftc_brin, ftc_filt;
SELECT count(*) AS left_over FROM ft.list()
  WHERE tbl::text LIKE 'ftc%';

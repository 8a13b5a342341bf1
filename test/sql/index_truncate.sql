-- TRUNCATE then re-insert returns each row once (case B07)
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

-- index on an empty table; 20 rows; TRUNCATE; the same 20 rows again
CREATE TABLE trunc_items (id bigint PRIMARY KEY, embedding real[]);
CREATE INDEX trunc_items_embedding_idx ON trunc_items USING segvec (embedding);
INSERT INTO trunc_items SELECT i, ARRAY[i, 1, 1] FROM generate_series(1, 20) i;
TRUNCATE trunc_items;
INSERT INTO trunc_items SELECT i, ARRAY[i, 1, 1] FROM generate_series(1, 20) i;

-- the distance to {1,1,1} is id - 1: ids 1 to 20 in order, each once
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100$$);
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids,
       array_agg(id) AS ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;
RESET enable_seqscan;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids,
       array_agg(id) AS ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;

-- a rolled back TRUNCATE leaves the index as it was
BEGIN;
TRUNCATE trunc_items;
ROLLBACK;
SET enable_seqscan = off;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids,
       array_agg(id) AS ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;

-- also when rows of another dimension went in after it
BEGIN;
TRUNCATE trunc_items;
INSERT INTO trunc_items VALUES (1, '{1,1}'), (2, '{2,1}');
SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1}' LIMIT 100;
ROLLBACK;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids,
       array_agg(id) AS ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;
INSERT INTO trunc_items VALUES (21, '{21,1,1}');
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;
DELETE FROM trunc_items WHERE id = 21;

-- TRUNCATE in a subtransaction that is rolled back
BEGIN;
SAVEPOINT s1;
TRUNCATE trunc_items;
INSERT INTO trunc_items VALUES (1, '{5,5,5}');
ROLLBACK TO SAVEPOINT s1;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;
COMMIT;

-- TRUNCATE twice in one transaction (the second one empties the new
-- relfilenode in place), with inserts in between
BEGIN;
TRUNCATE trunc_items;
INSERT INTO trunc_items SELECT i, ARRAY[i, 1, 1] FROM generate_series(1, 20) i;
TRUNCATE trunc_items;
INSERT INTO trunc_items SELECT i, ARRAY[i, 1, 1] FROM generate_series(1, 20) i;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids,
       array_agg(id) AS ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;
COMMIT;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids,
       array_agg(id) AS ids
FROM (SELECT id FROM trunc_items ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;

-- a table created, indexed, filled and truncated in one transaction
BEGIN;
CREATE TABLE trunc_new (id bigint, embedding real[]);
CREATE INDEX trunc_new_idx ON trunc_new USING segvec (embedding);
INSERT INTO trunc_new SELECT i, ARRAY[i, 1, 1] FROM generate_series(1, 20) i;
TRUNCATE trunc_new;
INSERT INTO trunc_new SELECT i, ARRAY[i, 1, 1] FROM generate_series(1, 20) i;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM trunc_new ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;
COMMIT;
SELECT count(*) AS nrows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM trunc_new ORDER BY embedding <-> '{1,1,1}' LIMIT 100) s;

-- TRUNCATE forgets the dimension of an index built without one: the
-- next vector fixes it anew
TRUNCATE trunc_new;
INSERT INTO trunc_new VALUES (1, '{1,1}'), (2, '{2,1}');
SELECT id FROM trunc_new ORDER BY embedding <-> '{1,1}' LIMIT 100;
\set VERBOSITY terse
INSERT INTO trunc_new VALUES (3, '{1,1,1}');
\set VERBOSITY default
-- but not a dimension given in WITH
CREATE TABLE trunc_dim (id bigint, embedding real[]);
CREATE INDEX trunc_dim_idx ON trunc_dim
    USING segvec (embedding vector_cosine_ops) WITH (dimensions = 3);
INSERT INTO trunc_dim VALUES (1, '{1,1,1}');
TRUNCATE trunc_dim;
\set VERBOSITY terse
INSERT INTO trunc_dim VALUES (1, '{1,1}');
SELECT id FROM trunc_dim ORDER BY embedding <=> '{1,1}' LIMIT 100;
\set VERBOSITY default
INSERT INTO trunc_dim VALUES (2, '{1,2,1}');
SELECT id FROM trunc_dim ORDER BY embedding <=> '{1,1,1}' LIMIT 100;
RESET enable_seqscan;

DROP TABLE trunc_items, trunc_new, trunc_dim;

-- TRUNCATE twice in one transaction rebuilds the index in place (same
-- relfilenode, keymap started over): a backend that looked ids up in the
-- first build must not answer from them in the second
CREATE TABLE trunc_keys (id int PRIMARY KEY, embedding real[]);
CREATE INDEX trunc_keys_idx ON trunc_keys USING segvec (embedding) INCLUDE (id)
    WITH (compact_threshold = 100000);
BEGIN;
TRUNCATE trunc_keys;
INSERT INTO trunc_keys SELECT i, ARRAY[i, 0, 0] FROM generate_series(1, 10) i;
SELECT id, vector FROM ft.get('trunc_keys_idx', '3');
TRUNCATE trunc_keys;
INSERT INTO trunc_keys SELECT i, ARRAY[i, 7, 7] FROM generate_series(10, 1, -1) i;
SELECT id, vector FROM ft.get('trunc_keys_idx', '3');
UPDATE trunc_keys SET embedding = ARRAY[3, 8, 8] WHERE id = 3;
SELECT id, vector FROM ft.get('trunc_keys_idx', '3');
COMMIT;
SELECT id, vector FROM ft.get('trunc_keys_idx', '3');
DROP TABLE trunc_keys;

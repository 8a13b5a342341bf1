-- Dimension checks (case B13): the index's dimension is fixed by the
-- first vector (or by WITH (dimensions = n)); other lengths are rejected
-- at CREATE INDEX, INSERT, UPDATE and in query vectors with an error that
-- names both lengths, and leave no index entry behind
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

-- mixed lengths in the column: ANALYZE and VACUUM ANALYZE are fine, an
-- index is not
CREATE TABLE dim_items (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO dim_items VALUES (1, '{1,2,3}'), (2, '{1,2}'), (3, '{4,5,6}');
ANALYZE dim_items;
VACUUM ANALYZE dim_items;
\set VERBOSITY terse
CREATE INDEX dim_items_embedding_idx ON dim_items USING segvec (embedding);
CREATE INDEX dim_items_embedding_idx ON dim_items
    USING segvec (embedding vector_cosine_ops);
\set VERBOSITY default
SELECT count(*) FROM pg_class WHERE relname = 'dim_items_embedding_idx';

-- with the odd row gone the index builds, with dimension 3
DELETE FROM dim_items WHERE id = 2;
CREATE INDEX dim_items_embedding_idx ON dim_items USING segvec (embedding);

-- inserts and updates of another length fail, naming both lengths
\set VERBOSITY terse
INSERT INTO dim_items VALUES (4, '{1,2}');
INSERT INTO dim_items VALUES (4, '{1,2,3,4}');
INSERT INTO dim_items VALUES (4, '{7}');
INSERT INTO dim_items VALUES (4, '{1,1,1}'), (5, '{1,1}');
UPDATE dim_items SET embedding = '{1,2}' WHERE id = 1;
UPDATE dim_items SET embedding = embedding || 0::real;
\set VERBOSITY default
-- the detail names the index (a table may have several)
INSERT INTO dim_items VALUES (4, '{1,2}');

-- no index entry was left behind: the index returns the two rows, each
-- once, whatever the query
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM dim_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10$$);
SELECT id, embedding <-> '{1,2,3}' AS dist
FROM dim_items ORDER BY dist LIMIT 10;
SELECT count(*) AS nrows, array_agg(id ORDER BY id) AS ids
FROM (SELECT id FROM dim_items
      ORDER BY embedding <-> (SELECT NULL::real[]) LIMIT 10) s;
RESET enable_seqscan;
SELECT id, embedding FROM dim_items ORDER BY id;

-- a query vector of another length is an error, through the index and
-- through the sequential scan alike
\set VERBOSITY terse
SET enable_seqscan = off;
SELECT id FROM dim_items ORDER BY embedding <-> '{1,2}' LIMIT 10;
SELECT id FROM dim_items ORDER BY embedding <-> '{1,2,3,4}' LIMIT 10;
SELECT id FROM dim_items ORDER BY embedding <-> (SELECT '{1,2}'::real[]) LIMIT 10;
RESET enable_seqscan;
SET enable_indexscan = off;
SELECT id FROM dim_items ORDER BY embedding <-> '{1,2}' LIMIT 10;
RESET enable_indexscan;
\set VERBOSITY default
-- in full: through the index the error names the index; a sequential scan
-- computes the distances with no index involved, and the error says that
-- the two lengths differ
SET enable_seqscan = off;
SELECT id FROM dim_items ORDER BY embedding <-> '{1,2}' LIMIT 10;
RESET enable_seqscan;
SET enable_indexscan = off;
SELECT id FROM dim_items ORDER BY embedding <-> '{1,2}' LIMIT 10;
RESET enable_indexscan;

-- the right length still goes in
INSERT INTO dim_items VALUES (4, '{1,1,1}');
SET enable_seqscan = off;
SELECT id FROM dim_items ORDER BY embedding <-> '{1,1,1}' LIMIT 10;
RESET enable_seqscan;

-- badly shaped vectors are rejected in the column and in the query
\set VERBOSITY terse
INSERT INTO dim_items VALUES (5, '{}');
INSERT INTO dim_items VALUES (5, '{{1,2,3},{4,5,6}}');
INSERT INTO dim_items VALUES (5, '{1,NULL,3}');
SELECT id FROM dim_items ORDER BY embedding <-> '{}' LIMIT 10;
SELECT id FROM dim_items ORDER BY embedding <-> '{{1,2,3}}' LIMIT 10;
\set VERBOSITY default
-- a lower bound other than 1 is fine
INSERT INTO dim_items VALUES (5, '[0:2]={2,2,2}');
SET enable_seqscan = off;
SELECT id FROM dim_items ORDER BY embedding <-> '[-5:-3]={2,2,2}' LIMIT 1;
RESET enable_seqscan;
DROP TABLE dim_items;

-- an empty table indexed WITH (dimensions = 3): wrong lengths fail before
-- any vector was inserted, in queries and inserts alike
CREATE TABLE dim_fixed (id bigint PRIMARY KEY, embedding real[]);
CREATE INDEX dim_fixed_embedding_idx ON dim_fixed
    USING segvec (embedding) WITH (dimensions = 3);
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM dim_fixed ORDER BY embedding <-> '{1,2}' LIMIT 10$$);
\set VERBOSITY terse
SELECT id FROM dim_fixed ORDER BY embedding <-> '{1,2}' LIMIT 10;
INSERT INTO dim_fixed VALUES (1, '{1,2}');
\set VERBOSITY default
SELECT id FROM dim_fixed ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
INSERT INTO dim_fixed VALUES (1, '{1,2,3}');
SELECT id FROM dim_fixed ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
RESET enable_seqscan;
-- and CREATE INDEX WITH (dimensions = 3) over vectors of another length
CREATE TABLE dim_four (id int, embedding real[]);
INSERT INTO dim_four VALUES (1, '{1,2,3,4}');
\set VERBOSITY terse
CREATE INDEX ON dim_four USING segvec (embedding) WITH (dimensions = 3);
\set VERBOSITY default
CREATE INDEX ON dim_four USING segvec (embedding) WITH (dimensions = 4);

DROP TABLE dim_fixed, dim_four;

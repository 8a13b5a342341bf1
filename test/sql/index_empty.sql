-- Empty indexes (case B16): top-k returns no rows, without error
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

CREATE TABLE emp_items (id bigint PRIMARY KEY, embedding real[], category int);
CREATE INDEX emp_items_l2_idx ON emp_items USING segvec (embedding);
CREATE INDEX emp_items_cos_idx ON emp_items
    USING segvec (embedding vector_cosine_ops);
CREATE INDEX emp_items_ip_idx ON emp_items USING segvec (embedding vector_ip_ops);

-- top-10 on an index that has never seen a vector, each operator class
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10$$);
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <=> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <#> '{1,2,3}' LIMIT 10;
-- with a WHERE filter, a NULL query vector, a zero query vector
SELECT id FROM emp_items WHERE category = 7
ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <-> (SELECT NULL::real[]) LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <=> '{0,0,0}' LIMIT 10;
-- the index has no dimension yet, so a query of any length finds nothing
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2}' LIMIT 10;
RESET enable_seqscan;
-- default settings
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10;

-- only NULL vectors: nothing is indexed
INSERT INTO emp_items VALUES (1, NULL, 7), (2, NULL, 7);
SET enable_seqscan = off;
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <=> (SELECT NULL::real[]) LIMIT 10;
RESET enable_seqscan;
DELETE FROM emp_items;

-- one row inserted, deleted and vacuumed away
INSERT INTO emp_items VALUES (1, '{1,2,3}', 7);
DELETE FROM emp_items WHERE id = 1;
VACUUM emp_items;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM emp_items WHERE category = 7
ORDER BY embedding <-> '{1,2,3}' LIMIT 10$$);
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <=> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <#> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items WHERE category = 7
ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <-> (SELECT NULL::real[]) LIMIT 10;
SELECT id FROM emp_items ORDER BY embedding <=> '{0,0,0}' LIMIT 10;
RESET enable_seqscan;
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10;

-- deleted but not yet vacuumed: the dead doc is skipped
INSERT INTO emp_items VALUES (2, '{1,2,3}', 7);
DELETE FROM emp_items WHERE id = 2;
SET enable_seqscan = off;
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT id FROM emp_items WHERE category = 7
ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
RESET enable_seqscan;

-- VACUUM of an index that never had a doc, and of an emptied one
CREATE TABLE emp_never (id int, embedding real[]);
CREATE INDEX emp_never_idx ON emp_never USING segvec (embedding);
VACUUM emp_never;
VACUUM ANALYZE emp_items;
SELECT relname, reltuples FROM pg_class
WHERE relname IN ('emp_never_idx', 'emp_items_l2_idx', 'emp_items_cos_idx',
                  'emp_items_ip_idx')
ORDER BY relname;

-- the index still works after all that
INSERT INTO emp_items VALUES (3, '{1,2,3}', 7), (4, '{3,2,1}', 8);
SET enable_seqscan = off;
SELECT id FROM emp_items ORDER BY embedding <-> '{1,2,4}' LIMIT 10;
SELECT id FROM emp_items WHERE category = 8
ORDER BY embedding <-> '{1,2,4}' LIMIT 10;
RESET enable_seqscan;

DROP TABLE emp_items, emp_never;

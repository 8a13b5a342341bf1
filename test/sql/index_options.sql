-- Index options m, ef_construction and dimensions: bounds, unknown
-- options, ALTER INDEX; and what CREATE INDEX refuses
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

CREATE TABLE opt_items (id bigint, embedding real[], other real[]);
INSERT INTO opt_items
SELECT i, ARRAY[i, i % 7, i % 3]::real[], ARRAY[1, 2]::real[]
FROM generate_series(1, 100) i;

-- valid values, at both ends of each range
CREATE INDEX opt_idx_1 ON opt_items USING segvec (embedding)
    WITH (m = 2, ef_construction = 4, dimensions = 0);
CREATE INDEX opt_idx_2 ON opt_items USING segvec (embedding)
    WITH (m = 100, ef_construction = 1000, dimensions = 3);
CREATE INDEX opt_idx_3 ON opt_items USING segvec (embedding vector_cosine_ops)
    WITH (m = 16, ef_construction = 64);
CREATE TABLE opt_empty (embedding real[]);
CREATE INDEX opt_idx_4 ON opt_empty USING segvec (embedding vector_ip_ops)
    WITH (dimensions = 16000);
SELECT c.relname, c.reloptions, o.opcname
FROM pg_class c
     JOIN pg_index i ON i.indexrelid = c.oid
     JOIN pg_opclass o ON o.oid = i.indclass[0]
WHERE c.relname LIKE 'opt_idx_%' ORDER BY c.relname;
DROP INDEX opt_idx_1, opt_idx_2, opt_idx_3, opt_idx_4;
-- option names are case-insensitive, quoted values are fine
CREATE INDEX opt_idx_5 ON opt_items USING segvec (embedding)
    WITH (M = 8, "ef_construction" = '32');
SELECT reloptions FROM pg_class WHERE relname = 'opt_idx_5';
DROP INDEX opt_idx_5;

-- out of range, malformed and unknown options
\set VERBOSITY terse
CREATE INDEX ON opt_items USING segvec (embedding) WITH (m = 1);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (m = 101);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (m = 0);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (m = -16);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (ef_construction = 3);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (ef_construction = 1001);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (dimensions = -1);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (dimensions = 16001);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (m = 'abc');
CREATE INDEX ON opt_items USING segvec (embedding) WITH (m);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (m = 8, m = 9);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (foo = 1);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (fillfactor = 50);
CREATE INDEX ON opt_items USING segvec (embedding) WITH (ef_search = 40);
\set VERBOSITY default
SELECT count(*) AS segvec_indexes FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE a.amname = 'segvec' AND c.relname LIKE 'opt_%';

-- ALTER INDEX changes the options; the index keeps the ones it was built
-- with until REINDEX
CREATE INDEX opt_idx ON opt_items USING segvec (embedding)
    WITH (m = 8, dimensions = 3);
ALTER INDEX opt_idx SET (m = 32, ef_construction = 200);
SELECT reloptions FROM pg_class WHERE relname = 'opt_idx';
\set VERBOSITY terse
ALTER INDEX opt_idx SET (m = 1000);
ALTER INDEX opt_idx SET (bar = 1);
\set VERBOSITY default
ALTER INDEX opt_idx RESET (m);
SELECT reloptions FROM pg_class WHERE relname = 'opt_idx';
ALTER INDEX opt_idx SET (dimensions = 4);
-- still dimension 3 until rebuilt
INSERT INTO opt_items VALUES (101, '{101,3,2}', '{1,2}');
\set VERBOSITY terse
INSERT INTO opt_items VALUES (102, '{1,2,3,4}', '{1,2}');
-- REINDEX applies dimensions = 4, which the rows do not have
REINDEX INDEX opt_idx;
\set VERBOSITY default
ALTER INDEX opt_idx RESET (dimensions);
REINDEX INDEX opt_idx;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM opt_items ORDER BY embedding <-> '{50,1,2}' LIMIT 3$$);
SELECT id FROM opt_items ORDER BY embedding <-> '{50,1,2}' LIMIT 3;
RESET enable_seqscan;
DROP INDEX opt_idx;

-- what CREATE INDEX refuses: other types, several columns, UNIQUE, a DESC
-- ordering, an unknown operator class
CREATE TABLE opt_other (id int, d float8[], i int[], v real);
\set VERBOSITY terse
CREATE INDEX ON opt_other USING segvec (d);
CREATE INDEX ON opt_other USING segvec (i);
CREATE INDEX ON opt_other USING segvec (v);
CREATE INDEX ON opt_other USING segvec (d vector_l2_ops);
CREATE INDEX ON opt_items USING segvec (embedding, other);
CREATE UNIQUE INDEX ON opt_items USING segvec (embedding);
CREATE INDEX ON opt_items USING segvec (embedding DESC);
CREATE INDEX ON opt_items USING segvec (embedding vector_foo_ops);
\set VERBOSITY default
-- one INCLUDE column, the id key; the hint names filter columns
CREATE INDEX ON opt_items USING segvec (embedding) INCLUDE (id, other);
-- an expression index is fine
CREATE INDEX opt_expr_idx ON opt_items USING segvec ((other || embedding));
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM opt_items ORDER BY other || embedding <-> '{1,2,50,1,2}' LIMIT 3$$);
SELECT id FROM opt_items ORDER BY other || embedding <-> '{1,2,50,1,2}' LIMIT 3;
RESET enable_seqscan;

DROP TABLE opt_items, opt_other, opt_empty;

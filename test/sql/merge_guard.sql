-- ft.has_key_btree_index(tbl, col): true only for a valid, ready,
-- non-partial btree whose first key column is col itself (the index a merge
-- can probe); BRIN (the zone map of the incident), hash, GiST, a partial or
-- expression btree, a btree led by another column, an invalid index and a
-- btree whose collation is not the column's do not count
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;

CREATE TABLE guard_t (id bigint, other int, label text, "Odd ""Id""" int,
	addr inet);

-- g(kind, col): the guard's answer for col, with the kind of index there
CREATE FUNCTION pg_temp.g(kind text, col name) RETURNS text
LANGUAGE sql AS $$
	SELECT format('%-28s %s', kind, ft.has_key_btree_index('guard_t', col))
$$;

SELECT pg_temp.g('no index', 'id');

CREATE INDEX guard_brin ON guard_t USING brin (id);
SELECT pg_temp.g('brin', 'id');
DROP INDEX guard_brin;

CREATE INDEX guard_hash ON guard_t USING hash (id);
SELECT pg_temp.g('hash', 'id');
DROP INDEX guard_hash;

CREATE INDEX guard_gist ON guard_t USING gist (addr inet_ops);
SELECT pg_temp.g('gist', 'addr');
DROP INDEX guard_gist;

CREATE INDEX guard_partial ON guard_t (id) WHERE id > 0;
SELECT pg_temp.g('partial btree', 'id');
DROP INDEX guard_partial;

CREATE INDEX guard_expr ON guard_t ((id + 1));
SELECT pg_temp.g('expression btree', 'id');
DROP INDEX guard_expr;

CREATE INDEX guard_lower ON guard_t (lower(label));
SELECT pg_temp.g('expression btree (lower)', 'label');
DROP INDEX guard_lower;

CREATE INDEX guard_second ON guard_t (other, id);
SELECT pg_temp.g('btree, id second', 'id');
SELECT pg_temp.g('btree, other first', 'other');
DROP INDEX guard_second;

CREATE INDEX guard_include ON guard_t (other) INCLUDE (id);
SELECT pg_temp.g('btree, id included', 'id');
DROP INDEX guard_include;

CREATE INDEX guard_coll ON guard_t (label COLLATE "POSIX");
SELECT pg_temp.g('btree, other collation', 'label');
DROP INDEX guard_coll;

-- the ones that count
CREATE INDEX guard_first ON guard_t (id, other);
SELECT pg_temp.g('btree, id first', 'id');
DROP INDEX guard_first;

CREATE UNIQUE INDEX guard_unique ON guard_t (id);
SELECT pg_temp.g('unique btree', 'id');
DROP INDEX guard_unique;

ALTER TABLE guard_t ADD PRIMARY KEY (id);
SELECT pg_temp.g('primary key', 'id');
ALTER TABLE guard_t DROP CONSTRAINT guard_t_pkey;

CREATE INDEX guard_label ON guard_t (label);
SELECT pg_temp.g('btree on text', 'label');
DROP INDEX guard_label;

CREATE INDEX guard_odd ON guard_t ("Odd ""Id""");
SELECT pg_temp.g('btree, quoted column', 'Odd "Id"');
DROP INDEX guard_odd;

CREATE INDEX guard_inet ON guard_t (addr);
SELECT pg_temp.g('btree on inet', 'addr');
DROP INDEX guard_inet;

-- a failed CREATE INDEX CONCURRENTLY leaves an invalid index behind
INSERT INTO guard_t (id) VALUES (1), (1);
\set VERBOSITY terse
CREATE UNIQUE INDEX CONCURRENTLY guard_invalid ON guard_t (id);
\set VERBOSITY default
SELECT indisvalid FROM pg_index WHERE indexrelid = 'guard_invalid'::regclass;
SELECT pg_temp.g('invalid btree', 'id');
DROP INDEX guard_invalid;

-- not a column, NULL arguments
SELECT pg_temp.g('no such column', 'nope');
SELECT ft.has_key_btree_index('guard_t', NULL) IS NULL AS null_column;
SELECT ft.has_key_btree_index(NULL, 'id') IS NULL AS null_table;

DROP TABLE guard_t;

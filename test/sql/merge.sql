-- ft.merge(index, source): one MERGE over the id that probes the id btree
-- (building it first when it is missing), its plan, and its semantics
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;

-- 30,000 rows stored in scrambled id order, so that a BRIN on id (the zone
-- map of the incident) prunes nothing
CREATE TABLE merge_items (id bigint NOT NULL, embedding real[], category int,
	note text DEFAULT 'none');
INSERT INTO merge_items
	SELECT g, ARRAY[g % 97, g % 89]::real[], g % 10
	FROM generate_series(1, 30000) g ORDER BY (g * 7919) % 30011;
CREATE INDEX merge_items_emb ON merge_items USING segvec (embedding)
	INCLUDE (id);

-- a batch of 100: 50 existing ids, 50 new ones
CREATE TABLE merge_batch (id bigint NOT NULL, embedding real[], category int);
INSERT INTO merge_batch
	SELECT g * 7, ARRAY[1, 1]::real[], 1 FROM generate_series(1, 50) g;
INSERT INTO merge_batch
	SELECT 30000 + g, ARRAY[2, 2]::real[], 2 FROM generate_series(1, 50) g;
ANALYZE merge_items, merge_batch;

-- no index on id: the merge hash-joins the whole table
SELECT ft.has_key_btree_index('merge_items', 'id');
SELECT * FROM ft.merge_plan('merge_items_emb', 'merge_batch');

-- a BRIN on id changes nothing
CREATE INDEX merge_items_brin ON merge_items USING brin (id);
SELECT ft.has_key_btree_index('merge_items', 'id');
SELECT * FROM ft.merge_plan('merge_items_emb', 'merge_batch');

-- segvec.index_before_merge = off: merges anyway, after a WARNING, and
-- builds nothing
SET segvec.index_before_merge = off;
SELECT * FROM ft.merge('merge_items_emb', 'merge_batch');
RESET segvec.index_before_merge;
SELECT ft.has_key_btree_index('merge_items', 'id');
SELECT merge_index_built_total, merges_total, inserted_total, updated_total
	FROM ft.merge_stats('merge_items_emb');

-- on (the default): the first merge builds the btree (unique, the ids
-- are) and counts the build
SELECT * FROM ft.merge('merge_items_emb', 'merge_batch');
SELECT ft.has_key_btree_index('merge_items', 'id');
SELECT merge_index_built_total, merges_total, inserted_total, updated_total
	FROM ft.merge_stats('merge_items_emb');
SELECT indexrelid::regclass, indisunique
	FROM pg_index WHERE indrelid = 'merge_items'::regclass
	ORDER BY indexrelid::regclass::text;

-- now the merge probes the btree: a nested loop over an index scan
SELECT * FROM ft.merge_plan('merge_items_emb', 'merge_batch');

-- a second merge builds nothing
SELECT * FROM ft.merge('merge_items_emb', 'merge_batch');
SELECT merge_index_built_total, merges_total
	FROM ft.merge_stats('merge_items_emb');
SELECT count(*) AS indexes FROM pg_index
	WHERE indrelid = 'merge_items'::regclass;

-- the plan ft.merge actually ran, as auto_explain logs it (nested
-- statements included: the MERGE, then the counters' upsert).  The log
-- line carries the duration and the plan the costs, which pg_regress
-- cannot mask, so these commands run in a child psql whose output goes
-- through sed (which also drops the line of the statement's parameters
-- that auto_explain logs from PostgreSQL 16 on).
\setenv PGDATABASE :DBNAME
\! psql -X -q -c "LOAD 'auto_explain'" -c "SET auto_explain.log_min_duration = 0" -c "SET auto_explain.log_nested_statements = on" -c "SET auto_explain.log_level = notice" -c "SET client_min_messages = notice" -c "SET jit = off" -c "SELECT * FROM ft.merge('merge_items_emb', 'merge_batch')" 2>&1 | sed -E -e 's/duration: [0-9.]+ ms/duration: N ms/' -e 's/  \(cost=[^)]*\)//' -e '/^Query Parameters: /d'

-- the rows: 50 updated, 50 inserted, the rest as they were
SELECT category, count(*), min(embedding::text), max(embedding::text)
	FROM merge_items WHERE id IN (SELECT id FROM merge_batch)
	GROUP BY category ORDER BY category;
SELECT count(*) FROM merge_items;

-- through the segvec index: the new rows are found (54 rows lie at
-- distance 0, the 50 new ones among them: which come first is a tie, so
-- the 60 nearest hold every one of them)
SET enable_seqscan = off;
SELECT count(*) FILTER (WHERE id > 30000) AS new_rows,
       count(*) FILTER (WHERE d = 0) AS at_zero
FROM (SELECT id, embedding <-> '{2,2}' AS d FROM merge_items
      ORDER BY embedding <-> '{2,2}' LIMIT 60) s;
RESET enable_seqscan;

DROP TABLE merge_batch;
DROP TABLE merge_items;

--
-- Semantics, on a small table with text ids
--
CREATE TABLE merge_docs (id text PRIMARY KEY, embedding real[],
	title text, score int DEFAULT 7);
CREATE INDEX merge_docs_emb ON merge_docs USING segvec (embedding)
	INCLUDE (id);
INSERT INTO merge_docs VALUES ('a', '{1,1}', 'old a', 1), ('b', '{2,2}', 'old b', 2),
	('c', '{3,3}', 'old c', 3);

-- last write wins inside a batch, by generation (greatest wins); a
-- source without score leaves score alone, or takes its default in a new
-- row; op 'd' deletes
CREATE TABLE merge_src (id text, embedding real[], title text,
	generation bigint, op text);
INSERT INTO merge_src VALUES
	('a', '{10,10}', 'a gen 3', 3, 'u'),
	('a', '{11,11}', 'a gen 5', 5, 'u'),
	('a', '{12,12}', 'a gen 4', 4, 'u'),
	('b', '{20,20}', 'b upsert', 1, 'u'),
	('b', NULL, NULL, 2, 'd'),
	('c', NULL, NULL, 1, 'd'),
	('c', '{30,30}', 'c back', 2, NULL),
	('new', '{40,40}', 'new doc', 1, 'u'),
	('gone', NULL, NULL, 1, 'd');
SELECT * FROM ft.merge('merge_docs_emb', 'merge_src');
SELECT * FROM merge_docs ORDER BY id;

-- without a generation column, the row stored last wins
CREATE TABLE merge_src2 (id text, embedding real[], title text);
INSERT INTO merge_src2 VALUES ('new', '{41,41}', 'first');
INSERT INTO merge_src2 VALUES ('new', '{42,42}', 'second');
INSERT INTO merge_src2 VALUES ('new', '{43,43}', 'third');
SELECT * FROM ft.merge('merge_docs_emb', 'merge_src2');
SELECT * FROM merge_docs WHERE id = 'new';

-- a view works as a source
CREATE VIEW merge_view AS
	SELECT 'v' || g AS id, ARRAY[g, g]::real[] AS embedding, 'view' AS title
	FROM generate_series(1, 3) g;
SELECT * FROM ft.merge('merge_docs_emb', 'merge_view');
SELECT id, title FROM merge_docs WHERE title = 'view' ORDER BY id;

-- a source whose columns do not fit gets a clear error, and nothing is
-- applied
CREATE TABLE merge_noid (embedding real[], title text);
CREATE TABLE merge_novec (id text, title text);
CREATE TABLE merge_badtype (id text, embedding real[], score text);
CREATE TABLE merge_unknown (id text, embedding real[], titel text);
CREATE TABLE merge_badop (id text, embedding real[], op int);
INSERT INTO merge_badtype VALUES ('a', '{1,1}', 'lots');
SELECT count(*), md5(string_agg(merge_docs::text, ',' ORDER BY id)) AS before
	FROM merge_docs \gset
SELECT * FROM ft.merge('merge_docs_emb', 'merge_noid');
SELECT * FROM ft.merge('merge_docs_emb', 'merge_novec');
SELECT * FROM ft.merge('merge_docs_emb', 'merge_badtype');
SELECT * FROM ft.merge('merge_docs_emb', 'merge_unknown');
SELECT * FROM ft.merge('merge_docs_emb', 'merge_badop');
SELECT * FROM ft.merge('merge_docs_emb', 'merge_docs_emb');
SELECT count(*) = :count AS same_count,
	md5(string_agg(merge_docs::text, ',' ORDER BY id)) = :'before' AS unchanged
	FROM merge_docs;

-- an index without an id column, and an index that is not segvec's
CREATE INDEX merge_docs_noid ON merge_docs USING segvec (embedding);
SELECT * FROM ft.merge('merge_docs_noid', 'merge_src2');
SELECT * FROM ft.merge('merge_docs_pkey', 'merge_src2');
DROP INDEX merge_docs_noid;

--
-- bigint ids that are not unique: the btree built is a plain one, with a
-- WARNING saying why, and the merge updates every row with the id
--
CREATE TABLE merge_dup (id bigint, embedding real[]);
INSERT INTO merge_dup VALUES (1, '{1,1}'), (1, '{1,2}'), (2, '{2,2}');
CREATE INDEX merge_dup_emb ON merge_dup USING segvec (embedding) INCLUDE (id);
CREATE TABLE merge_dup_src (id int, embedding real[]);
INSERT INTO merge_dup_src VALUES (1, '{9,9}'), (3, '{3,3}');
SELECT * FROM ft.merge('merge_dup_emb', 'merge_dup_src');
SELECT * FROM merge_dup ORDER BY id, embedding;
SELECT indexrelid::regclass, indisunique FROM pg_index
	WHERE indrelid = 'merge_dup'::regclass AND indexrelid <> 'merge_dup_emb'::regclass;
SELECT ft.has_key_btree_index('merge_dup', 'id');

--
-- privileges: ft.merge runs as the caller
--
CREATE ROLE merge_reader;
GRANT SELECT ON merge_docs, merge_src2 TO merge_reader;
SET ROLE merge_reader;
SELECT * FROM ft.merge('merge_docs_emb', 'merge_src2');
RESET ROLE;
REVOKE ALL ON merge_docs, merge_src2 FROM merge_reader;
DROP ROLE merge_reader;

-- (a table that records who wrote: the caller)
CREATE TABLE merge_who (id int PRIMARY KEY, embedding real[],
	who text DEFAULT current_user);
CREATE INDEX merge_who_emb ON merge_who USING segvec (embedding) INCLUDE (id);
CREATE TABLE merge_who_src (id int, embedding real[]);
INSERT INTO merge_who_src VALUES (1, '{1,1}');
CREATE ROLE merge_writer;
GRANT SELECT, INSERT, UPDATE ON merge_who TO merge_writer;
GRANT SELECT ON merge_who_src TO merge_writer;
SET ROLE merge_writer;
SELECT * FROM ft.merge('merge_who_emb', 'merge_who_src');
RESET ROLE;
SELECT id, who FROM merge_who;
DROP TABLE merge_who, merge_who_src;
DROP ROLE merge_writer;

SELECT merge_index_built_total, merges_total, inserted_total, updated_total,
	deleted_total FROM ft.merge_stats('merge_docs_emb');

DROP VIEW merge_view;
DROP TABLE merge_docs, merge_src, merge_src2, merge_noid, merge_novec,
	merge_badtype, merge_unknown, merge_badop, merge_dup, merge_dup_src;
-- the counters of dropped indexes go with them
SELECT count(*) FROM ft.merge_counters c
	WHERE NOT EXISTS (SELECT FROM pg_class i WHERE i.oid = c.indexrelid);

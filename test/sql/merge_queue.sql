-- Queued upserts: ft.add and ft.del append to ft.pending, ft.flush applies
-- them, ft.search sees them before they are applied (the newest write per
-- id wins, a pending delete hides the row); privileges and row-level
-- security.  Background merges (library preloaded) are tested by
-- test/t/020_merge_background.pl; here segvec.background_merge = off keeps
-- the queue for ft.flush, so the output does not depend on timing.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;
SET segvec.background_merge = off;

CREATE TABLE queue_items (id bigint PRIMARY KEY, embedding real[],
	title text, tag text DEFAULT 'dflt', score int);
INSERT INTO queue_items
	SELECT g, ARRAY[g, 0]::real[], 'item ' || g, 'orig'
	FROM generate_series(1, 20) g;
CREATE INDEX queue_items_emb ON queue_items USING segvec (embedding)
	INCLUDE (id);

-- search(q): ft.search's top 3 and the table's own top 3 (merged rows only)
CREATE FUNCTION pg_temp.search(q real[], OUT ft_search text, OUT table_only text)
LANGUAGE plpgsql AS $$
BEGIN
	SELECT string_agg(format('%s (%s)', s.id, round(s.distance::numeric, 2)), ', ')
		INTO ft_search FROM ft.search('queue_items_emb', q, 3) s;
	SELECT string_agg(format('%s (%s)', t.id, round((t.embedding <-> q)::numeric, 2)), ', '
					  ORDER BY t.embedding <-> q)
		INTO table_only
		FROM (SELECT * FROM queue_items ORDER BY embedding <-> q LIMIT 3) t;
END
$$;

-- a new vector for id 5, queued: ft.search returns 5 once, at its new
-- distance, while the table still has the old one
SELECT ft.add('queue_items_emb', '5', '{100,0}', '{"title": "moved"}') > 0 AS queued;
SELECT * FROM pg_temp.search('{100,0}');
SELECT * FROM pg_temp.search('{5.1,0}');
-- a queued delete hides id 6
SELECT ft.del('queue_items_emb', '6') > 0 AS queued;
SELECT * FROM pg_temp.search('{5.1,0}');
SELECT id, op, vector, fields FROM ft.pending_for('queue_items_emb') ORDER BY id;
SELECT pending, merges_total, merging FROM ft.merge_stats('queue_items_emb');

-- after ft.flush the table agrees
SELECT * FROM ft.flush('queue_items_emb');
SELECT * FROM pg_temp.search('{5.1,0}');
SELECT * FROM pg_temp.search('{100,0}');
SELECT * FROM queue_items WHERE id IN (5, 6);
SELECT count(*) FROM ft.pending_for('queue_items_emb');
SELECT pending, merges_total, merge_index_built_total
	FROM ft.merge_stats('queue_items_emb');
-- nothing left: a second flush applies nothing
SELECT * FROM ft.flush('queue_items_emb');

--
-- Last write wins across generations, as if each op were applied in
-- order: adds of one id merge their fields (newest value per key, the
-- vector of the newest add); an add after a delete replaces the row (the
-- columns it does not give take their defaults); ids are canonical
-- ('007' is 7).
--
CREATE FUNCTION pg_temp.ops(idx regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM ft.add(idx, '1', '{1,1}', '{"title": "one"}');
	PERFORM ft.add(idx, '1', '{1,2}', '{"tag": "x"}');
	PERFORM ft.add(idx, '2', '{2,1}', '{"title": "two"}');
	PERFORM ft.del(idx, '2');
	PERFORM ft.add(idx, '2', '{2,2}', '{"title": "two again"}');
	PERFORM ft.add(idx, '3', '{3,3}', '{"title": "three"}');
	PERFORM ft.del(idx, '3');
	PERFORM ft.add(idx, '007', '{7,7}', '{"title": null}');
	PERFORM ft.add(idx, '30', '{30,0}', '{"title": "new"}');
	PERFORM ft.add(idx, '31', '{31,0}');
	PERFORM ft.del(idx, '32');
	PERFORM ft.add(idx, '4', '{4,4}', '{"title": "four", "tag": "y"}');
	PERFORM ft.add(idx, '4', '{4,5}', '{"title": "four again"}');
END
$$;
SELECT pg_temp.ops('queue_items_emb');
SELECT id, op, vector, fields FROM ft.pending_for('queue_items_emb') ORDER BY id::int;
SELECT * FROM ft.flush('queue_items_emb');
SELECT * FROM queue_items WHERE id IN (1, 2, 3, 4, 7, 30, 31, 32) ORDER BY id;

-- the same ops applied one id per batch (a batch takes every queued row of
-- the ids it takes) end the same way
CREATE TABLE queue_copy (id bigint PRIMARY KEY, embedding real[],
	title text, tag text DEFAULT 'dflt', score int);
INSERT INTO queue_copy
	SELECT g, ARRAY[g, 0]::real[], 'item ' || g, 'orig'
	FROM generate_series(1, 20) g;
CREATE INDEX queue_copy_emb ON queue_copy USING segvec (embedding)
	INCLUDE (id);
SELECT pg_temp.ops('queue_copy_emb');
SET segvec.merge_batch_rows = 1;
SELECT * FROM ft.flush('queue_copy_emb');
RESET segvec.merge_batch_rows;
SELECT merges_total FROM ft.merge_stats('queue_copy_emb');
SELECT (SELECT string_agg(q::text, ' ' ORDER BY id) FROM queue_copy q
		WHERE id NOT IN (5, 6)) =
	(SELECT string_agg(q::text, ' ' ORDER BY id) FROM queue_items q
		WHERE id NOT IN (5, 6)) AS same_rows;

--
-- Values are checked when queued
--
\set VERBOSITY terse
SELECT ft.add('queue_items_emb', 'abc', '{1,1}');
SELECT ft.add('queue_items_emb', '1', '{1,1,1}');
SELECT ft.add('queue_items_emb', '1', '{1,NaN}');
SELECT ft.add('queue_items_emb', '1', NULL);
SELECT ft.add('queue_items_emb', NULL, '{1,1}');
SELECT ft.add('queue_items_emb', '1', '{1,1}', '{"nope": 1}');
SELECT ft.add('queue_items_emb', '1', '{1,1}', '{"id": 2}');
SELECT ft.add('queue_items_emb', '1', '{1,1}', '{"embedding": [1, 1]}');
SELECT ft.add('queue_items_emb', '1', '{1,1}', '[1, 2]');
SELECT ft.add('queue_items_emb', '1', '{1,1}', '{"score": "lots"}');
SELECT ft.add('queue_items_emb', '1', '{1,1}', '{"score": 2.5}');
SELECT ft.del('queue_items_emb', 'x');
SELECT ft.add('queue_items_pkey', '1', '{1,1}');
SELECT ft._merge_batch();
\set VERBOSITY default
CREATE INDEX queue_items_noid ON queue_items USING segvec (embedding);
SELECT ft.add('queue_items_noid', '1', '{1,1}');
DROP INDEX queue_items_noid;
CREATE TEMP TABLE queue_temp (id int, embedding real[]);
CREATE INDEX queue_temp_emb ON queue_temp USING segvec (embedding) INCLUDE (id);
SELECT ft.add('queue_temp_emb', '1', '{1,1}');
DROP TABLE queue_temp;
SELECT count(*) FROM ft.pending_for('queue_items_emb');

--
-- Privileges: each function checks the caller's privileges on the table;
-- nobody but the extension's owner reads or writes ft.pending directly
--
CREATE ROLE queue_writer;
CREATE ROLE queue_reader;
CREATE ROLE queue_nobody;
GRANT SELECT, INSERT, UPDATE ON queue_items TO queue_writer;
GRANT SELECT ON queue_items TO queue_reader;

SET ROLE queue_writer;
SELECT ft.add('queue_items_emb', '8', '{8,8}', '{"title": "by writer", "score": 8}') > 0 AS queued;
SELECT ft.del('queue_items_emb', '8');
SELECT count(*) FROM ft.pending;
INSERT INTO ft.pending (indexrelid, id, op) VALUES ('queue_items_emb'::regclass, '9', 'd');
SELECT nextval('ft.pending_generation_seq');
SELECT id, op FROM ft.pending_for('queue_items_emb') ORDER BY id;
RESET ROLE;

SET ROLE queue_reader;
SELECT ft.add('queue_items_emb', '9', '{9,9}');
SELECT id, op FROM ft.pending_for('queue_items_emb') ORDER BY id;
SELECT * FROM ft.flush('queue_items_emb');
RESET ROLE;

SET ROLE queue_nobody;
SELECT * FROM ft.pending_for('queue_items_emb');
SELECT ft.del('queue_items_emb', '8');
RESET ROLE;

-- the writer may flush: the queue is applied as the table's owner
SET ROLE queue_writer;
SELECT * FROM ft.flush('queue_items_emb');
RESET ROLE;
SELECT id, title FROM queue_items WHERE id = 8;

-- row-level security: a role the policies apply to cannot queue upserts
-- (the owner applies them, outside the policies) and sees no pending rows
-- (policies cannot be judged on rows not in the table); the owner can
ALTER TABLE queue_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY queue_items_visible ON queue_items
	USING (title <> 'hidden') WITH CHECK (title <> 'hidden');
SELECT ft.add('queue_items_emb', '10', '{10,10}', '{"title": "hidden"}') > 0 AS queued;
SET ROLE queue_writer;
SELECT ft.add('queue_items_emb', '11', '{11,11}');
SELECT count(*) FROM ft.pending_for('queue_items_emb');
RESET ROLE;
SELECT id, op, fields FROM ft.pending_for('queue_items_emb');
SELECT * FROM ft.flush('queue_items_emb');
SET ROLE queue_writer;
SELECT id FROM queue_items WHERE id IN (10, 11);
RESET ROLE;
SELECT id, title FROM queue_items WHERE id IN (10, 11) ORDER BY id;
ALTER TABLE queue_items DISABLE ROW LEVEL SECURITY;

REVOKE ALL ON queue_items FROM queue_writer, queue_reader;
DROP ROLE queue_writer;
DROP ROLE queue_reader;
DROP ROLE queue_nobody;

-- the queue is applied as the table's owner, whoever flushes it (or the
-- background worker, a superuser): the default current_user says who
CREATE ROLE queue_owner;
GRANT CREATE ON SCHEMA public TO queue_owner;
SET ROLE queue_owner;
CREATE TABLE queue_owned (id int PRIMARY KEY, embedding real[],
	who text DEFAULT current_user);
CREATE INDEX queue_owned_emb ON queue_owned USING segvec (embedding)
	INCLUDE (id);
RESET ROLE;
SELECT ft.add('queue_owned_emb', '1', '{1,1}') > 0 AS queued;
SELECT * FROM ft.flush('queue_owned_emb');
SELECT id, who FROM queue_owned;
DROP TABLE queue_owned;
REVOKE CREATE ON SCHEMA public FROM queue_owner;
DROP ROLE queue_owner;

-- DROP of the table discards its queue
SELECT ft.add('queue_items_emb', '12', '{12,12}') > 0 AS queued;
SELECT ft.add('queue_copy_emb', '12', '{12,12}') > 0 AS queued;
SELECT count(*) FROM ft.pending
	WHERE indexrelid IN ('queue_items_emb'::regclass, 'queue_copy_emb'::regclass);
DROP TABLE queue_items;
DROP TABLE queue_copy;
SELECT count(*) FROM ft.pending p
	WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = p.indexrelid);
SELECT count(*) FROM ft.merge_counters c
	WHERE NOT EXISTS (SELECT FROM pg_class i WHERE i.oid = c.indexrelid);

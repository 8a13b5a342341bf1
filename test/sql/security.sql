-- Security: no ft function or merge lets a role gain privileges by code it
-- owns (domain constraints, index predicates and expressions, triggers,
-- defaults, operators and functions put on the search_path), row-level
-- security hides rows from every ft function, counts need ownership, and
-- a role without privileges gets 42501 everywhere.
--
-- regress_sec_attacker has only CREATE on the database.  Every piece of
-- its code calls evil.escalate, which logs who ran it and, when that is a
-- superuser, makes the attacker a superuser.  After each attempt the
-- attacker must still not be a superuser, and the log must show the code
-- ran as the attacker only (or not at all).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
DROP SCHEMA IF EXISTS evil CASCADE;
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['regress_sec_attacker', 'regress_sec_reader',
							 'regress_sec_nobody', 'regress_sec_writer',
							 'regress_sec_owner']
	LOOP
		IF EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('DROP OWNED BY %I CASCADE', r);
			EXECUTE format('DROP ROLE %I', r);
		END IF;
	END LOOP;
END
$$;
RESET client_min_messages;
SET jit = off;
SET segvec.background_merge = off;

CREATE ROLE regress_sec_attacker;
CREATE ROLE regress_sec_reader;
CREATE ROLE regress_sec_nobody;
CREATE ROLE regress_sec_writer;
CREATE ROLE regress_sec_owner;
DO $$ BEGIN
	EXECUTE format('GRANT CREATE ON DATABASE %I TO regress_sec_attacker, regress_sec_owner',
				   current_database());
END $$;

-- what the attacker has gained: nothing, and who ran its code
CREATE FUNCTION pg_temp.gained() RETURNS TABLE (superuser boolean,
	writes_server_files boolean)
LANGUAGE sql AS $$
	SELECT rolsuper, pg_has_role('regress_sec_attacker', 'pg_write_server_files', 'MEMBER')
	FROM pg_roles WHERE rolname = 'regress_sec_attacker' $$;

SET ROLE regress_sec_attacker;
CREATE SCHEMA evil;
CREATE TABLE evil.log (who name, what text);
CREATE FUNCTION evil.escalate(what text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	INSERT INTO evil.log VALUES (current_user, what);
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
		ALTER ROLE regress_sec_attacker SUPERUSER;
		GRANT pg_write_server_files TO regress_sec_attacker;
	END IF;
	RETURN true;
END
$$;
-- callable from IMMUTABLE contexts (index predicates and expressions)
CREATE FUNCTION evil.pred(i int) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN evil.escalate('predicate'); END $$;
CREATE FUNCTION evil.vec(v real[]) RETURNS real[]
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN PERFORM evil.escalate('expression'); RETURN v; END $$;
CREATE FUNCTION evil.trig() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.escalate('trigger'); RETURN NEW; END $$;
CREATE DOMAIN evil.tag AS text CHECK (evil.escalate('domain ' || VALUE));
CREATE DOMAIN evil.ident AS int CHECK (evil.escalate('id domain'));

-- 1. Domain constraints through ft.query / ft.search / ft.get: a queued
-- upsert is shown to searches without running them
CREATE TABLE evil.docs (id evil.ident, embedding real[], tag evil.tag,
	note text DEFAULT 'n');
INSERT INTO evil.docs VALUES (1, '{1,0}', 'a'), (2, '{0,1}', 'b');
SELECT ft.create('evil_idx', 'evil.docs', 'id', 'embedding');
SELECT ft.add('evil.evil_idx', '3', '{1,1}', '{"tag": "c"}') > 0 AS queued;
SELECT ft.add('evil.evil_idx', '2', '{0,2}', '{"tag": "d"}') > 0 AS queued;
-- ft.add checked the values as the owner
SELECT who, what FROM evil.log ORDER BY what;
DELETE FROM evil.log;
RESET ROLE;
SELECT id, fields FROM ft.query('evil.evil_idx', '*') ORDER BY id;
SELECT id, fields FROM ft.query('evil.evil_idx', '@tag:{c | d}') ORDER BY id;
SELECT id, distance FROM ft.search('evil.evil_idx', '{1,1}', 5) ORDER BY id;
SELECT id, vector FROM ft.get('evil.evil_idx', '1');
SELECT id FROM ft.similar('evil.evil_idx', '1', 5) ORDER BY id;
SELECT * FROM pg_temp.gained();
SELECT count(*) AS code_run FROM evil.log;

-- 2. Index predicates and expressions through ft.verify (with and without
-- repair): they run as the table's owner, in a security-restricted
-- operation
SET ROLE regress_sec_attacker;
CREATE TABLE evil.p (id int, embedding real[]);
INSERT INTO evil.p VALUES (1, '{1,0}'), (2, '{0,1}'), (3, '{1,1}');
CREATE INDEX evil_p_idx ON evil.p USING segvec (embedding) INCLUDE (id)
	WHERE evil.pred(id);
CREATE INDEX evil_e_idx ON evil.p USING segvec ((evil.vec(embedding)))
	INCLUDE (id);
DELETE FROM evil.log;
RESET ROLE;
SELECT heap_rows, indexed_docs, missing_docs, search_misses
FROM ft.verify('evil.evil_p_idx');
SELECT heap_rows, repaired FROM ft.verify('evil.evil_p_idx', true);
SELECT heap_rows, indexed_docs, missing_docs, search_misses
FROM ft.verify('evil.evil_e_idx');
SELECT * FROM pg_temp.gained();
SELECT who, what, count(*) > 0 AS ran FROM evil.log GROUP BY 1, 2 ORDER BY 2;
DELETE FROM evil.log;

-- 3. Triggers and defaults through ft.flush (and the background merge it
-- stands for): the queue is applied as the table's owner
SET ROLE regress_sec_attacker;
CREATE TRIGGER evil_trig BEFORE INSERT OR UPDATE ON evil.docs
	FOR EACH ROW EXECUTE FUNCTION evil.trig();
ALTER TABLE evil.docs ALTER COLUMN note SET DEFAULT (evil.escalate('default')::text);
DELETE FROM evil.log;
RESET ROLE;
SELECT applied, inserted, updated FROM ft.flush('evil.evil_idx');
SELECT * FROM pg_temp.gained();
SELECT who, what, count(*) > 0 AS ran FROM evil.log GROUP BY 1, 2 ORDER BY 2;
DELETE FROM evil.log;

-- 3b. The test hook ft._stage_phantom reads the id as ft.add does: only
-- the table's owner may call it, and the id's domain runs as the owner, in
-- a security-restricted operation
SET ROLE regress_sec_attacker;
CREATE TABLE evil.ph (id evil.ident, embedding real[]);
INSERT INTO evil.ph VALUES (1, '{1,0}'), (2, '{0,1}');
CREATE INDEX evil_ph_idx ON evil.ph USING segvec (embedding) INCLUDE (id);
GRANT USAGE ON SCHEMA evil TO regress_sec_reader;
GRANT SELECT, INSERT, UPDATE, DELETE ON evil.ph TO regress_sec_reader;
DELETE FROM evil.log;
RESET ROLE;
SET segvec.enable_test_hooks = on;
SELECT ft._stage_phantom('evil.evil_ph_idx', '2') > 0 AS staged;
SELECT * FROM pg_temp.gained();
SELECT who, what, count(*) > 0 AS ran FROM evil.log GROUP BY 1, 2 ORDER BY 2;
DELETE FROM evil.log;
-- a role with every privilege on the table but ownership
SET ROLE regress_sec_reader;
SELECT ft._stage_phantom('evil.evil_ph_idx', '1');
RESET ROLE;
RESET segvec.enable_test_hooks;
SET ROLE regress_sec_attacker;
REVOKE ALL ON evil.ph FROM regress_sec_reader;
REVOKE USAGE ON SCHEMA evil FROM regress_sec_reader;
RESET ROLE;

-- 4. Operators and functions put ahead of pg_catalog on the caller's
-- search_path: every ft function and the MERGE it runs resolve their own
SET ROLE regress_sec_attacker;
CREATE FUNCTION evil.int_eq(int, int) RETURNS boolean LANGUAGE plpgsql
	IMMUTABLE AS $$ BEGIN RETURN evil.escalate('int =') AND $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR evil.= (LEFTARG = int, RIGHTARG = int, FUNCTION = evil.int_eq);
CREATE FUNCTION evil.text_eq(text, text) RETURNS boolean LANGUAGE plpgsql
	IMMUTABLE AS $$ BEGIN RETURN evil.escalate('text =') AND $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.text_eq);
CREATE FUNCTION evil.l2(real[], real[]) RETURNS float8 LANGUAGE plpgsql
	IMMUTABLE AS $$ BEGIN PERFORM evil.escalate('<->'); RETURN 0; END $$;
CREATE OPERATOR evil.<-> (LEFTARG = real[], RIGHTARG = real[], FUNCTION = evil.l2);
CREATE FUNCTION evil.format(text, name, name, text, regclass) RETURNS text
	LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.escalate('format'); RETURN NULL; END $$;
CREATE FUNCTION evil.format(text, name, name) RETURNS text
	LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.escalate('format'); RETURN NULL; END $$;
CREATE FUNCTION evil.count(anyelement) RETURNS bigint LANGUAGE plpgsql
	AS $$ BEGIN PERFORM evil.escalate('count'); RETURN 0; END $$;
CREATE TABLE evil.src (id int, embedding real[]);
INSERT INTO evil.src VALUES (7, '{2,2}');
GRANT USAGE ON SCHEMA evil TO PUBLIC;
GRANT SELECT ON evil.src TO PUBLIC;
SELECT ft.add('evil.evil_idx', '8', '{3,3}') > 0 AS queued;
DROP TRIGGER evil_trig ON evil.docs;
ALTER TABLE evil.docs ALTER COLUMN note SET DEFAULT 'n';
DELETE FROM evil.log;
RESET ROLE;
CREATE TABLE sec_docs (id int PRIMARY KEY, embedding real[], owner_name text);
INSERT INTO sec_docs SELECT i, ARRAY[i, i % 7]::real[], 'someone'
FROM generate_series(1, 50) i;
SELECT ft.create('sec_idx', 'sec_docs', 'id', 'embedding');
SET search_path = evil, pg_catalog, public;
SELECT count(*) FROM ft.similar('public.sec_idx', '3', 5);
SELECT num_docs FROM ft.info('public.sec_idx');
SELECT count(*) FROM ft.query('public.sec_idx', '@id:[1 10]');
SELECT count(*) FROM ft.search('public.sec_idx', '{1,1}', 5);
SELECT count(*) FROM ft.get('public.sec_idx', '3');
SELECT inserted, updated FROM ft.merge('public.sec_idx', 'evil.src');
SELECT ft.add('public.sec_idx', '9', '{9,9}') > 0 AS queued;
SELECT ft.del('public.sec_idx', '10') > 0 AS queued;
SELECT applied, inserted, updated, deleted FROM ft.flush('public.sec_idx');
SELECT applied, inserted FROM ft.flush('evil.evil_idx');
SELECT heap_rows FROM ft.verify('public.sec_idx');
SELECT count(*) FROM ft.list() WHERE tbl = 'public.sec_docs'::regclass;
RESET search_path;
SELECT * FROM pg_temp.gained();
SELECT who, what, count(*) > 0 AS ran FROM evil.log GROUP BY 1, 2 ORDER BY 2;

-- 5. Row-level security: a reader sees only its rows, in every output
-- and every count; counts of the whole index need ownership
ALTER TABLE sec_docs OWNER TO regress_sec_owner;
UPDATE sec_docs SET owner_name = 'regress_sec_reader' WHERE id % 5 = 0;
GRANT SELECT ON sec_docs TO regress_sec_reader;
ALTER TABLE sec_docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY sec_own ON sec_docs TO regress_sec_reader
	USING (owner_name = current_user);
SET ROLE regress_sec_reader;
SELECT count(*) AS visible FROM sec_docs;
-- a hidden row: no vector, no neighbours
SELECT count(*) FROM ft.get('sec_idx', '3');
SELECT count(*) FROM ft.similar('sec_idx', '3', 5);
-- a visible row: its vector, and only visible neighbours
SELECT id, vector FROM ft.get('sec_idx', '5');
SELECT bool_and(id::int % 5 = 0) AS only_visible, count(*)
FROM ft.similar('sec_idx', '5', 100);
SELECT bool_and(id::int % 5 = 0) AS only_visible, count(*)
FROM ft.search('sec_idx', '{1,1}', 100);
SELECT bool_and(id::int % 5 = 0) AS only_visible, count(*)
FROM ft.query('sec_idx', '* LIMIT 0 1000');
SELECT num_docs FROM ft.list() WHERE tbl = 'sec_docs'::regclass;
\set VERBOSITY terse
SELECT num_docs FROM ft.info('sec_idx');
SELECT num_docs FROM ft.index_stats('sec_idx');
SELECT count(*) FROM ft.keymap_buckets('sec_idx');
SELECT heap_rows FROM ft.verify('sec_idx');
SELECT heap_rows FROM ft.verify('sec_idx', true);
\set VERBOSITY default
RESET ROLE;
-- the owner (not subject to its own policy) counts every row
SET ROLE regress_sec_owner;
SELECT num_docs >= 50 AS all_counted,
	(SELECT heap_rows FROM ft.verify('sec_idx')) AS heap_rows
FROM ft.info('sec_idx');
RESET ROLE;
-- members of pg_read_all_stats may read the index's figures
GRANT pg_read_all_stats TO regress_sec_reader;
SET ROLE regress_sec_reader;
SELECT num_docs >= 50 AS all_counted FROM ft.index_stats('sec_idx');
\set VERBOSITY terse
SELECT heap_rows FROM ft.verify('sec_idx');
\set VERBOSITY default
RESET ROLE;
REVOKE pg_read_all_stats FROM regress_sec_reader;

-- 6. A role with no privileges: 42501 from every ft function
SET ROLE regress_sec_nobody;
\set VERBOSITY sqlstate
SELECT * FROM ft.get('sec_idx', '5');
SELECT * FROM ft.similar('sec_idx', '5');
SELECT * FROM ft.search('sec_idx', '{1,1}', 5);
SELECT * FROM ft.query('sec_idx', '*');
SELECT * FROM ft.explain('sec_idx', '*');
SELECT num_docs FROM ft.info('sec_idx');
SELECT num_docs FROM ft.index_stats('sec_idx');
SELECT count(*) FROM ft.keymap_buckets('sec_idx');
SELECT heap_rows FROM ft.verify('sec_idx');
SELECT * FROM ft.compact('sec_idx');
SELECT ft.snapshot('sec_idx');
SELECT ft.submit_job('sec_idx', 'compact');
SELECT ft.add('sec_idx', '1', '{1,1}');
SELECT ft.del('sec_idx', '1');
SELECT * FROM ft.flush('sec_idx');
SELECT * FROM ft.merge('sec_idx', 'evil.src');
SELECT * FROM ft.pending_for('sec_idx');
SELECT ft.dropindex('sec_idx');
\set VERBOSITY default
RESET ROLE;

-- 7. Writing by id needs SELECT on the id column, as INSERT ... ON
-- CONFLICT (id) DO UPDATE and DELETE ... WHERE id = ... would: without it
-- ft.flush's counts would tell which ids exist
GRANT INSERT, UPDATE, DELETE ON sec_docs TO regress_sec_writer;
ALTER TABLE sec_docs DISABLE ROW LEVEL SECURITY;
SET ROLE regress_sec_writer;
\set VERBOSITY terse
SELECT ft.add('sec_idx', '11', '{1,1}');
SELECT ft.del('sec_idx', '12');
SELECT * FROM ft.flush('sec_idx');
\set VERBOSITY default
RESET ROLE;
GRANT SELECT (id) ON sec_docs TO regress_sec_writer;
SET ROLE regress_sec_writer;
SELECT ft.add('sec_idx', '11', '{1,1}') > 0 AS queued;
SELECT ft.del('sec_idx', '12') > 0 AS queued;
SELECT applied, inserted, updated, deleted FROM ft.flush('sec_idx');
RESET ROLE;

-- 8. Queue hygiene.  A deferrable constraint trigger does not make every
-- merge fail (merges run in a security-restricted operation, where a
-- trigger cannot be deferred: the batch checks it immediately)
CREATE TABLE sec_q (id int PRIMARY KEY, embedding real[],
	score int CHECK (score > 0));
CREATE INDEX sec_q_idx ON sec_q USING segvec (embedding) INCLUDE (id);
CREATE FUNCTION pg_temp.ok() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER sec_q_deferred AFTER INSERT OR UPDATE ON sec_q
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pg_temp.ok();
SELECT count(ft.add('sec_q_idx', g::text, ARRAY[g, 1]::real[],
	jsonb_build_object('score', g))) FROM generate_series(1, 3) g;
SELECT applied, inserted FROM ft.flush('sec_q_idx');
-- a row that fails the merge (score -1) is superseded by a newer write of
-- its id, even when that write is queued many batches later
SELECT ft.add('sec_q_idx', '4', '{4,1}', '{"score": -1}') > 0 AS queued;
SELECT count(ft.add('sec_q_idx', g::text, ARRAY[g, 1]::real[],
	jsonb_build_object('score', g))) FROM generate_series(5, 9) g;
SELECT ft.add('sec_q_idx', '4', '{4,1}', '{"score": 4}') > 0 AS queued;
SET segvec.merge_batch_rows = 2;
SELECT applied, inserted FROM ft.flush('sec_q_idx');
RESET segvec.merge_batch_rows;
SELECT id, score FROM sec_q WHERE id = 4;
-- a transaction queueing many ids holds a bounded number of locks
BEGIN;
SELECT count(ft.add('sec_q_idx', g::text, ARRAY[g, 1]::real[],
	jsonb_build_object('score', g))) FROM generate_series(100, 399) g;
SELECT count(*) <= 66 AS bounded FROM pg_locks
WHERE pid = pg_backend_pid() AND locktype = 'advisory';
COMMIT;
SELECT applied FROM ft.flush('sec_q_idx');
DROP TABLE sec_q;

SELECT * FROM pg_temp.gained();
DROP TABLE sec_docs;
DROP SCHEMA evil CASCADE;
DO $$ BEGIN
	EXECUTE format('REVOKE CREATE ON DATABASE %I FROM regress_sec_attacker, regress_sec_owner',
				   current_database());
END $$;
DROP ROLE regress_sec_attacker, regress_sec_reader, regress_sec_nobody,
	regress_sec_writer, regress_sec_owner;

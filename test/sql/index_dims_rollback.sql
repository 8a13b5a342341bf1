-- An index built without WITH (dimensions) takes its dimension from the
-- first vector.  A vector whose transaction or statement fails leaves no
-- trace: it does not fix the dimension of an empty index.
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
-- disabling a plan type makes it cost 1e10, which would JIT-compile these
-- small queries
SET jit = off;
SET enable_seqscan = off;

-- a rolled back insert
CREATE TABLE dimrb_items (id bigint PRIMARY KEY, embedding real[]);
CREATE INDEX dimrb_items_idx ON dimrb_items USING segvec (embedding);
BEGIN;
INSERT INTO dimrb_items VALUES (1, '{1,2}');
SELECT dimensions FROM ft.info('dimrb_items_idx');
ROLLBACK;
-- none: the dimension the rolled back insert set does not count
SELECT dimensions FROM ft.info('dimrb_items_idx');
-- ft.info counts the index's docs, the aborted one too until VACUUM;
-- ft.list the rows the caller sees
SELECT num_docs FROM ft.info('dimrb_items_idx');
SELECT num_docs FROM ft.list() WHERE index = 'dimrb_items_idx'::regclass;
INSERT INTO dimrb_items VALUES (1, '{1,2,3}');
SELECT id FROM dimrb_items ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT dimensions FROM ft.info('dimrb_items_idx');
VACUUM dimrb_items;
SELECT i.num_docs AS info_docs, l.num_docs AS list_docs
FROM ft.info('dimrb_items_idx') i, ft.list() l
WHERE l.index = 'dimrb_items_idx'::regclass;

-- an insert rejected by another index of the table
CREATE TABLE dimrb_two (id bigint, embedding real[]);
CREATE INDEX dimrb_two_l2_idx ON dimrb_two USING segvec (embedding);
CREATE INDEX dimrb_two_cos_idx ON dimrb_two
    USING segvec (embedding vector_cosine_ops) WITH (dimensions = 3);
\set VERBOSITY terse
INSERT INTO dimrb_two VALUES (1, '{1,1}');
\set VERBOSITY default
INSERT INTO dimrb_two VALUES (1, '{1,1,1}');
SELECT id FROM dimrb_two ORDER BY embedding <-> '{1,1,1}' LIMIT 10;

-- an insert that fails on a unique violation after its vector was indexed
CREATE TABLE dimrb_uniq (id bigint, embedding real[]);
CREATE INDEX dimrb_uniq_idx ON dimrb_uniq USING segvec (embedding);
CREATE UNIQUE INDEX dimrb_uniq_id ON dimrb_uniq (id);
\set VERBOSITY terse
INSERT INTO dimrb_uniq VALUES (1, '{1,2}'), (1, '{3,4}');
\set VERBOSITY default
INSERT INTO dimrb_uniq VALUES (1, '{1,2,3}');
SELECT id FROM dimrb_uniq ORDER BY embedding <-> '{1,2,3}' LIMIT 10;

-- a rolled-back savepoint set the dimension, then rows of that dimension
-- committed: the dimension stands for them (it was reset, and a vector of
-- another length hid them from the index)
CREATE TABLE dimrb_sp (id int PRIMARY KEY, embedding real[]);
CREATE INDEX dimrb_sp_idx ON dimrb_sp USING segvec (embedding) INCLUDE (id);
BEGIN;
SAVEPOINT s;
INSERT INTO dimrb_sp VALUES (1, '{1,2,3}');
ROLLBACK TO s;
INSERT INTO dimrb_sp VALUES (2, '{1,2,3}'), (3, '{3,2,1}');
COMMIT;
SELECT dimensions FROM ft.info('dimrb_sp_idx');
\set VERBOSITY terse
INSERT INTO dimrb_sp VALUES (4, '{1,2}');
\set VERBOSITY default
SELECT id FROM dimrb_sp ORDER BY embedding <-> '{1,2,3}' LIMIT 10;
SELECT missing_docs, phantom_entries FROM ft.verify('dimrb_sp_idx');

-- the same through an EXCEPTION block that caught the first insert's error
CREATE TABLE dimrb_exc (id int PRIMARY KEY, embedding real[]
    CHECK (embedding[1] < 100));
CREATE INDEX dimrb_exc_idx ON dimrb_exc USING segvec (embedding);
DO $$
BEGIN
    BEGIN
        INSERT INTO dimrb_exc VALUES (1, '{100,2,3}');
    EXCEPTION WHEN check_violation THEN
        NULL;
    END;
    INSERT INTO dimrb_exc VALUES (2, '{1,2,3}');
END
$$;
SELECT dimensions FROM ft.info('dimrb_exc_idx');
\set VERBOSITY terse
INSERT INTO dimrb_exc VALUES (3, '{1,2}');
\set VERBOSITY default
SELECT id FROM dimrb_exc ORDER BY embedding <-> '{1,2,3}' LIMIT 10;

-- a savepoint of the transaction that set it (still running) rolls back:
-- the dimension still stands for the setter's own row
CREATE TABLE dimrb_own (id int PRIMARY KEY, embedding real[]);
CREATE INDEX dimrb_own_idx ON dimrb_own USING segvec (embedding);
BEGIN;
INSERT INTO dimrb_own VALUES (1, '{1,2,3}');
SAVEPOINT s;
INSERT INTO dimrb_own VALUES (2, '{4,5,6}');
ROLLBACK TO s;
COMMIT;
SELECT dimensions FROM ft.info('dimrb_own_idx');
SELECT id FROM dimrb_own ORDER BY embedding <-> '{1,2,3}' LIMIT 10;

-- the setter's vectors were compacted into a graph segment before it
-- rolled back: that segment holds vectors of the old length, so the
-- dimension stands and a vector of another length is refused (it used to
-- be accepted, and searches read the old segment's vectors at the new
-- length)
CREATE TABLE dimrb_seg (id int PRIMARY KEY, embedding real[]);
CREATE INDEX dimrb_seg_idx ON dimrb_seg USING segvec (embedding)
    WITH (compact_threshold = 0);
BEGIN;
SAVEPOINT s;
INSERT INTO dimrb_seg SELECT i, ARRAY[i, 1, 1] FROM generate_series(1, 50) i;
SELECT docs_compacted FROM ft.compact('dimrb_seg_idx');
ROLLBACK TO s;
\set VERBOSITY terse
INSERT INTO dimrb_seg VALUES (1, '{1,1,1,1}');
\set VERBOSITY default
ROLLBACK;
SELECT num_segments, dimensions FROM ft.info('dimrb_seg_idx');
INSERT INTO dimrb_seg VALUES (1, '{1,1,1}');
SELECT id FROM dimrb_seg ORDER BY embedding <-> '{1,1,1}' LIMIT 10;

-- the rolled-back vectors of the old length stay in the mutable segment,
-- never searched, with their keymap entries until VACUUM or a compaction
-- removes both: ft.verify sees no phantom entry before, and the
-- compaction leaves none behind
CREATE TABLE dimrb_stale (id int PRIMARY KEY, embedding real[]);
CREATE INDEX dimrb_stale_idx ON dimrb_stale USING segvec (embedding)
    INCLUDE (id);
BEGIN;
INSERT INTO dimrb_stale VALUES (1, '{1,2,3}');
ROLLBACK;
INSERT INTO dimrb_stale VALUES (2, '{1,2,3,4}'), (3, '{2,2,3,4}');
SELECT keymap_entries, phantom_entries, examples
FROM ft.verify('dimrb_stale_idx');
SELECT docs_compacted FROM ft.compact('dimrb_stale_idx');
SELECT keymap_entries, phantom_entries, examples
FROM ft.verify('dimrb_stale_idx');
SELECT id FROM dimrb_stale ORDER BY embedding <-> '{1,2,3,4}' LIMIT 10;

RESET enable_seqscan;
DROP TABLE dimrb_items, dimrb_two, dimrb_uniq, dimrb_sp, dimrb_exc, dimrb_own,
    dimrb_seg, dimrb_stale;

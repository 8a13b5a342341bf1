-- Postings of graph segments' filter columns: an equality, range or = ANY
-- filter on a column with postings counts each segment's passing docs
-- without reading its filter area, skips a segment where none pass, and
-- scores a segment's few passing docs from the postings' lists; so does a
-- label filter (&&, @>, =) from a label array column's bit postings.  Each
-- filtered top-k through the index equals the exact answer (index scans
-- off) and has min(k, passing) rows: a tenant absent from a segment, a
-- tiny tenant, a big one, = ANY lists, ranges, two filter columns, a
-- hashed (text) column, a value no row has, rare and common labels, NULL
-- and empty arrays; after UPDATEs of the filter column, DELETE and
-- VACUUM, and merges.  client_min_messages = debug1 shows what the
-- postings did.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
SET jit = off;
SET maintenance_work_mem = '32MB';
\set vectors_sql :abs_srcdir '/sql/include/vectors.sql'
\i :vectors_sql

-- two graph segments of 3,000 rows: tenant 1 has a third of each; tenants
-- 100 to 199 (about 20 rows each) are only in the first, 200 to 299 only
-- in the second, with tenant 7 (5 rows); cat is text, 7 values; rid is
-- unique (too many values: no postings)
CREATE TABLE fp_docs (id int PRIMARY KEY, embedding real[], tenant int,
    cat text, rid int) WITH (autovacuum_enabled = off);
CREATE INDEX fp_idx ON fp_docs USING segvec (embedding, tenant, cat, rid)
    INCLUDE (id) WITH (compact_threshold = 1000000);
-- the two segments stay apart until the merge below
SET segvec.max_merge_docs = 3000;
INSERT INTO fp_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i % 3 = 0 THEN 1 ELSE 100 + i % 100 END,
           'c' || (i % 7), i
    FROM generate_series(1, 3000) i;
SELECT docs_compacted FROM ft.compact('fp_idx');
INSERT INTO fp_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i <= 3005 THEN 7 WHEN i % 3 = 0 THEN 1 ELSE 200 + i % 100 END,
           'c' || (i % 7), i
    FROM generate_series(3001, 6000) i;
SELECT docs_compacted FROM ft.compact('fp_idx');
-- and a few rows in the mutable segment
INSERT INTO fp_docs
    SELECT i, pg_temp.vec(i, 8), 200 + i % 100, 'c' || (i % 7), i
    FROM generate_series(6001, 6050) i;
SELECT num_segments, mutable_docs FROM ft.info('fp_idx');
ANALYZE fp_docs;

CREATE TABLE fp_q (n int, v real[]);
INSERT INTO fp_q SELECT n, pg_temp.vec(100000 + n, 8) FROM generate_series(1, 3) n;
\set docs fp_docs
\set queries fp_q
\set topk_sql :abs_srcdir '/sql/include/topk.sql'
\i :topk_sql

CREATE TABLE fp_conds (cond text);
INSERT INTO fp_conds VALUES
    ('tenant = 150'),                   -- first segment only
    ('tenant = 250'),                   -- second segment and mutable
    ('tenant = 7'),                     -- 5 rows, second segment
    ('tenant = 1'),                     -- a third: walked
    ('tenant = 99999'),                 -- no row
    ('tenant IN (7, 150, 250)'),        -- = ANY: lists of three values
    ('tenant IN (99998, 99999)'),       -- = ANY of values no row has
    ('tenant < 8'),                     -- a range: tenants 1 and 7
    ('tenant BETWEEN 150 AND 152'),     -- two keys, one range of 3 values
    ('tenant > 298'),                   -- a range of one value
    ('tenant >= 300'),                  -- a range no row is in
    ('tenant >= 7 AND tenant <= 7'),    -- a range of one value, twice
    ('tenant = 150 AND cat = ''c3'''),  -- a list, the other key on entries
    ('tenant = 1 AND cat = ''c3'''),    -- many and another key: sampled
    ('cat = ''c3'''),                   -- hashed: walked, rechecked
    ('cat = ''none'''),                 -- hashed, no row
    ('rid = 4321'),                     -- no postings: the filter area
    ('tenant = 7 AND rid = 3003');      -- a list, a column without postings

CREATE FUNCTION pg_temp.check_all()
RETURNS TABLE (cond text, passing bigint, rows_10 int, rows_50 int,
               exact boolean)
LANGUAGE sql AS $$
    SELECT c.cond, r.* FROM fp_conds c, pg_temp.check(c.cond) r
$$;

SELECT * FROM pg_temp.check_all();

-- what the postings did, per filter: DEBUG1 says, for the graph segments,
-- how many were skipped or scored from lists; more passing docs are walked
-- as without postings, and print no line (an = ANY key is
-- an index key from PostgreSQL 17 only: filter_postings_1.out has its
-- line, this file has none; rid has no postings, so no line)
CREATE FUNCTION pg_temp.one(cond text) RETURNS int[]
LANGUAGE plpgsql AS $$
BEGIN
    RETURN pg_temp.topk(cond, 1, 10, false);
END
$$;
SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('tenant = 150')) AS n;
SELECT cardinality(pg_temp.one('tenant = 250')) AS n;
SELECT cardinality(pg_temp.one('tenant = 7')) AS n;
SELECT cardinality(pg_temp.one('tenant = 1')) AS n;
SELECT cardinality(pg_temp.one('tenant = 99999')) AS n;
SELECT cardinality(pg_temp.one('tenant IN (7, 150, 250)')) AS n;
SELECT cardinality(pg_temp.one('tenant = 150 AND cat = ''c3''')) AS n;
SELECT cardinality(pg_temp.one('tenant BETWEEN 150 AND 152')) AS n;
SELECT cardinality(pg_temp.one('tenant > 298')) AS n;
SELECT cardinality(pg_temp.one('tenant < 8')) AS n;
SELECT cardinality(pg_temp.one('cat = ''none''')) AS n;
SELECT cardinality(pg_temp.one('rid = 4321')) AS n;
RESET client_min_messages;

-- UPDATE of the filter column (the old versions stay in the segments'
-- postings under their old values), DELETE and VACUUM (tombstones)
UPDATE fp_docs SET tenant = 7 WHERE id IN (10, 11, 4000, 4001);
UPDATE fp_docs SET tenant = 150 WHERE id IN (3010, 3011);
DELETE FROM fp_docs WHERE tenant = 150 AND id % 2 = 0;
DELETE FROM fp_docs WHERE id IN (3002, 3004);
VACUUM fp_docs;
SELECT * FROM pg_temp.check_all();

-- the updated rows into graph segments, merged with the others: the
-- merged segment's postings come from the kept docs' entries
RESET segvec.max_merge_docs;
SELECT docs_compacted > 0 AS compacted FROM ft.compact('fp_idx');
SELECT num_segments, mutable_docs, tombstones FROM ft.info('fp_idx');
SELECT * FROM pg_temp.check_all();
SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('tenant = 7')) AS n;
SELECT cardinality(pg_temp.one('tenant = 99999')) AS n;
RESET client_min_messages;
SELECT missing_docs, checksum_mismatches, search_misses FROM ft.verify('fp_idx');

-- segvec.filter_postings = off: the filter values of every segment are
-- read, as without postings; the same answers, and no DEBUG1 line
SET segvec.filter_postings = off;
SELECT * FROM pg_temp.check_all();
SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('tenant = 7')) AS n;
RESET client_min_messages;
RESET segvec.filter_postings;

DROP TABLE fp_docs, fp_conds;

-- Bit postings of label arrays: each of the 64 signature bits a segment's
-- nodes have, with the nodes that have it when they are few enough.  A
-- label's nodes are at most the intersection of its two bits' lists, so a
-- rare label lists its segment's passing docs, and a label whose bits are
-- on no common node skips the segment.  Two graph segments: the first's
-- rows have labels 0 to 2 (a third each), one of 100 to 196 and one of
-- 300 to 388, with label 5000 on three rows; the second's have only
-- labels 0 to 2, with 6000 on five rows; NULL and empty arrays in both;
-- grp has postings too.  One of label 5000's bits is on none of the
-- second segment's nodes (so no node there has the label).
SET segvec.max_merge_docs = 3000;
CREATE TABLE fl_docs (id int PRIMARY KEY, embedding real[], labels int4[],
    tags text[], grp int) WITH (autovacuum_enabled = off);
CREATE INDEX fl_idx ON fl_docs USING segvec (embedding, labels, tags, grp)
    INCLUDE (id) WITH (compact_threshold = 1000000);
INSERT INTO fl_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i % 50 = 0 THEN NULL
                WHEN i % 50 = 1 THEN '{}'
                WHEN i IN (10, 20, 30) THEN ARRAY[i % 3, 100 + i % 97, 300 + i % 89, 5000]
                ELSE ARRAY[i % 3, 100 + i % 97, 300 + i % 89] END,
           ARRAY['t' || (i % 5)] || CASE WHEN i = 77 THEN '{rare}'::text[] ELSE '{}' END,
           i % 10
    FROM generate_series(1, 3000) i;
SELECT docs_compacted FROM ft.compact('fl_idx');
INSERT INTO fl_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i % 50 = 0 THEN NULL
                WHEN i % 50 = 1 THEN '{}'
                WHEN i <= 3005 THEN ARRAY[i % 3, 6000]
                ELSE ARRAY[i % 3] END,
           ARRAY['t' || (i % 5)],
           i % 10
    FROM generate_series(3001, 6000) i;
SELECT docs_compacted FROM ft.compact('fl_idx');
INSERT INTO fl_docs
    SELECT i, pg_temp.vec(i, 8), ARRAY[i % 3, 5000, 6000], '{t1}', i % 10
    FROM generate_series(6001, 6004) i;
SELECT num_segments, mutable_docs FROM ft.info('fl_idx');
ANALYZE fl_docs;
-- the two bits of a label (its hash's low 6 bits and the 6 above them)
CREATE FUNCTION pg_temp.bits(l int) RETURNS int[]
LANGUAGE sql AS $$
    SELECT ARRAY[(h & 63)::int, ((h >> 6) & 63)::int]
    FROM (SELECT hashint4extended(l, 0) AS h) s
$$;
SELECT pg_temp.bits(5000) <@ (SELECT array_agg(b) FROM unnest('{0, 1, 2, 6000}'::int[]) m,
                              unnest(pg_temp.bits(m)) b) AS in_second;

DROP FUNCTION pg_temp.check(text, text);
DROP FUNCTION pg_temp.topk(text, int, int, bool, text, text);
\set docs fl_docs
\i :topk_sql
CREATE TABLE fl_conds (cond text);
INSERT INTO fl_conds VALUES
    ('labels && ''{5000}'''),           -- first segment (and mutable) only
    ('labels && ''{6000}'''),           -- second segment (and mutable) only
    ('labels && ''{1}'''),              -- a third: walked
    ('labels && ''{5000, 6000}'''),     -- two labels: their lists' union
    ('labels && ''{6000, 5000, 6000}'''),  -- a label twice
    ('labels && ''{6000, 1}'''),        -- a common one: as without postings
    ('labels && ''{99999}'''),          -- no row
    ('labels && ''{}'''),               -- no label: no row
    ('labels && ''{NULL}''::int4[]'),   -- only a NULL: no row
    ('labels && NULL::int4[]'),         -- NULL: no row
    ('labels @> ''{152, 352}'''),       -- one row has both
    ('labels @> ''{5000, 150}'''),      -- no row has both
    ('labels @> ''{6000}'''),
    ('labels @> ''{}'''),               -- every array but NULLs
    ('labels = ''{1, 152, 352}'''),     -- =: the lists of @>, rechecked
    ('labels <@ ''{0, 1, 2}'''),        -- <@: no postings help
    ('labels && ''{5000}'' AND grp = 0'),  -- a list, the other key on entries
    ('labels && ''{1}'' AND grp = 3'),  -- grp's postings: walked
    ('tags && ''{rare}'''),             -- text labels
    ('tags @> ''{t1}''');

CREATE FUNCTION pg_temp.check_labels()
RETURNS TABLE (cond text, passing bigint, rows_10 int, rows_50 int,
               exact boolean)
LANGUAGE sql AS $$
    SELECT c.cond, r.* FROM fl_conds c, pg_temp.check(c.cond) r
$$;
SELECT * FROM pg_temp.check_labels();

SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('labels && ''{5000}''')) AS n;
SELECT cardinality(pg_temp.one('labels && ''{6000}''')) AS n;
SELECT cardinality(pg_temp.one('labels && ''{1}''')) AS n;
SELECT cardinality(pg_temp.one('labels && ''{5000, 6000}''')) AS n;
SELECT cardinality(pg_temp.one('labels && ''{6000, 1}''')) AS n;
SELECT cardinality(pg_temp.one('labels && ''{}''')) AS n;
SELECT cardinality(pg_temp.one('labels @> ''{152, 352}''')) AS n;
SELECT cardinality(pg_temp.one('labels = ''{1, 152, 352}''')) AS n;
SELECT cardinality(pg_temp.one('labels @> ''{}''')) AS n;
SELECT cardinality(pg_temp.one('labels && ''{5000}'' AND grp = 0')) AS n;
SELECT cardinality(pg_temp.one('tags && ''{rare}''')) AS n;
RESET client_min_messages;

-- UPDATEs of the labels (the old versions stay in the segments' postings
-- under their old signatures), to NULL and to an empty array; DELETE and
-- VACUUM
UPDATE fl_docs SET labels = '{5000}' WHERE id IN (4000, 4001);
UPDATE fl_docs SET labels = '{1}' WHERE id = 10;
UPDATE fl_docs SET labels = NULL WHERE id = 20;
UPDATE fl_docs SET labels = '{}' WHERE id = 3001;
UPDATE fl_docs SET labels = labels || 6000 WHERE id IN (150, 151);
DELETE FROM fl_docs WHERE id IN (3002, 6001);
VACUUM fl_docs;
SELECT * FROM pg_temp.check_labels();

-- merged: the merged segment's bit postings come from the kept docs'
-- entries
RESET segvec.max_merge_docs;
SELECT docs_compacted > 0 AS compacted FROM ft.compact('fl_idx');
SELECT num_segments, mutable_docs, tombstones FROM ft.info('fl_idx');
SELECT * FROM pg_temp.check_labels();
SET client_min_messages = debug1;
SELECT cardinality(pg_temp.one('labels && ''{5000}''')) AS n;
SELECT cardinality(pg_temp.one('labels && ''{5000, 6000}''')) AS n;
RESET client_min_messages;
SELECT missing_docs, checksum_mismatches, search_misses FROM ft.verify('fl_idx');

DROP TABLE fl_docs, fl_conds, fp_q;

-- Label postings: a segment whose writer knew its docs' labels (CREATE
-- INDEX from the rows it indexes, compaction's freeze from the docs' heap
-- rows, a merge from its inputs' label postings) lists each label's docs
-- exactly, where bit postings list every doc whose signature has the
-- label's bits.  Label :rare is on three rows, and its two bits are bits
-- of label 0, which a third of the rows have: so a third of the rows pass
-- its signature.  With label postings the scan scores the three alone,
-- and the executor rechecks none of the others (EXPLAIN ANALYZE's "Rows
-- Removed by Index Recheck", summed): after CREATE INDEX, streamed into
-- two graph segments and the mutable one, after UPDATEs that give or take
-- the label (an alias among them: the vector unchanged), merged, and
-- after DELETE and VACUUM.
SELECT l AS rare FROM generate_series(1000, 1000000) l
WHERE pg_temp.bits(l) <@ pg_temp.bits(0) AND l % 3 <> 0
ORDER BY l LIMIT 1 \gset
CREATE TABLE lp_rare AS SELECT :rare AS l;
CREATE TABLE lp_q (n int, v real[]);
INSERT INTO lp_q SELECT n, pg_temp.vec(200000 + n, 8) FROM generate_series(1, 3) n;
CREATE TABLE lp_docs (id int PRIMARY KEY, embedding real[], labels int4[],
    tags text[]) WITH (autovacuum_enabled = off);
INSERT INTO lp_docs
    SELECT i, pg_temp.vec(i, 8),
           ARRAY[i % 3, 100 + i % 97] ||
           CASE WHEN i IN (10, 20, 30) THEN ARRAY[:rare] ELSE '{}' END,
           ARRAY['t' || (i % 3)] ||
           CASE WHEN i IN (11, 21) THEN '{rare}'::text[] ELSE '{}' END
    FROM generate_series(1, 3000) i;
CREATE INDEX lp_idx ON lp_docs USING segvec (embedding, labels, tags)
    INCLUDE (id) WITH (compact_threshold = 1000);
ANALYZE lp_docs;
SELECT num_segments, mutable_docs FROM ft.info('lp_idx');
SELECT count(*) AS signature_matches FROM lp_docs
WHERE pg_temp.bits(:rare) <@ (SELECT array_agg(b) FROM unnest(labels) m,
                                  unnest(pg_temp.bits(m)) b);

DROP FUNCTION pg_temp.check(text, text);
DROP FUNCTION pg_temp.topk(text, int, int, bool, text, text);
\set docs lp_docs
\set queries lp_q
\i :topk_sql
-- the rows an ordered index scan with cond returns, and how many rows the
-- executor fetched and rejected in its recheck
CREATE FUNCTION pg_temp.rechecked(cond text, docs text DEFAULT 'lp_docs')
RETURNS TABLE (cond_ text, rows_ int, rechecked int)
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    cond_ := cond;
    rechecked := 0;
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_sort', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    FOR line IN EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
        SELECT id FROM %I WHERE %s
        ORDER BY embedding <-> (SELECT v FROM lp_q WHERE n = 1) LIMIT 10',
        docs, cond)
    LOOP
        IF line ~ 'Index Scan using' THEN
            rows_ := substring(line from 'rows=(\d+)')::int;
        END IF;
        IF line ~ 'Rows Removed by Index Recheck' THEN
            rechecked := rechecked + substring(line from '(\d+)\s*$')::int;
        END IF;
    END LOOP;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_sort', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    RETURN NEXT;
END
$$;
CREATE TABLE lp_conds (cond text);
INSERT INTO lp_conds VALUES
    ('labels && ''{' || :rare || '}'''),           -- 3 rows, 1,000 signatures
    ('labels && ''{' || :rare || ', 150}'''),      -- and a label of 31 rows
    ('labels @> ''{' || :rare || '}'''),
    ('labels @> ''{' || :rare || ', 0}'''),        -- with a common label
    ('labels @> ''{' || :rare || ', 2}'''),        -- row 20
    ('labels = ''{1, 110, ' || :rare || '}'''),    -- =: rechecked on signatures
    ('labels && ''{0}'''),                         -- a third: walked
    ('tags && ''{rare}''');
CREATE FUNCTION pg_temp.check_lp(docs text DEFAULT 'lp_docs')
RETURNS TABLE (cond text, passing bigint, rows_10 int, rows_50 int,
               exact boolean, rechecked int)
LANGUAGE sql AS $$
    SELECT c.cond, r.*, x.rechecked
    FROM lp_conds c, pg_temp.check(c.cond) r,
         pg_temp.rechecked(c.cond, docs) x
$$;
-- (the conditions with :rare's number replaced, for stable output)
CREATE FUNCTION pg_temp.show_lp(docs text DEFAULT 'lp_docs')
RETURNS TABLE (cond text, passing bigint, rows_10 int, rows_50 int,
               exact boolean, rechecked int)
LANGUAGE sql AS $$
    SELECT replace(cond, (SELECT l::text FROM lp_rare), 'rare'), passing,
           rows_10, rows_50, exact, rechecked
    FROM pg_temp.check_lp(docs)
$$;
SELECT * FROM pg_temp.show_lp();
SELECT missing_docs, checksum_mismatches, search_misses FROM ft.verify('lp_idx');

-- streamed: the same rows into two graph segments through compaction's
-- freeze (their labels read from the heap rows), and two rows of label
-- :rare alone in the mutable segment, which is scanned on the docs'
-- signatures (so these two pass @> {:rare, 0}'s and are rechecked)
CREATE TABLE lp_stream (LIKE lp_docs) WITH (autovacuum_enabled = off);
ALTER TABLE lp_stream ADD PRIMARY KEY (id);
CREATE INDEX lp_sidx ON lp_stream USING segvec (embedding, labels, tags)
    INCLUDE (id) WITH (compact_threshold = 1000000);
SET segvec.max_merge_docs = 1500;
INSERT INTO lp_stream SELECT * FROM lp_docs WHERE id <= 1500;
SELECT docs_compacted FROM ft.compact('lp_sidx');
INSERT INTO lp_stream SELECT * FROM lp_docs WHERE id > 1500;
SELECT docs_compacted FROM ft.compact('lp_sidx');
INSERT INTO lp_stream
    SELECT i, pg_temp.vec(i, 8), ARRAY[:rare], '{t1}' FROM generate_series(3001, 3002) i;
ANALYZE lp_stream;
SELECT num_segments, mutable_docs FROM ft.info('lp_sidx');
DROP FUNCTION pg_temp.check(text, text);
DROP FUNCTION pg_temp.topk(text, int, int, bool, text, text);
\set docs lp_stream
\i :topk_sql
SELECT * FROM pg_temp.show_lp('lp_stream');

-- UPDATEs: the label to rows of both segments (vector unchanged: an
-- alias), taken from one; then frozen and merged into one segment, whose
-- label postings come from its inputs'
UPDATE lp_stream SET labels = labels || :rare WHERE id IN (40, 2000);
UPDATE lp_stream SET labels = '{0, 110}' WHERE id = 20;
RESET segvec.max_merge_docs;
SELECT docs_compacted > 0 AS compacted FROM ft.compact('lp_sidx');
SELECT num_segments, mutable_docs FROM ft.info('lp_sidx');
SELECT * FROM pg_temp.show_lp('lp_stream');
DELETE FROM lp_stream WHERE id IN (10, 3001);
VACUUM lp_stream;
SELECT docs_compacted > 0 AS compacted FROM ft.compact('lp_sidx');
SELECT num_segments, mutable_docs, tombstones FROM ft.info('lp_sidx');
SELECT * FROM pg_temp.show_lp('lp_stream');
SELECT missing_docs, checksum_mismatches, search_misses FROM ft.verify('lp_sidx');

-- without postings the signature's matches are fetched and rechecked
SET segvec.filter_postings = off;
SELECT replace(cond_, :'rare', 'rare') AS cond, rows_, rechecked > 0 AS rechecked
FROM pg_temp.rechecked('labels && ''{' || :rare || '}''', 'lp_stream');
RESET segvec.filter_postings;

-- a label array kept out of line (TOAST) is not read by the freeze: its
-- segment gets bit postings, and answers as before (the signature's
-- matches rechecked)
CREATE TABLE lp_toast (LIKE lp_docs) WITH (autovacuum_enabled = off);
ALTER TABLE lp_toast ALTER labels SET STORAGE EXTERNAL;
CREATE INDEX lp_tidx ON lp_toast USING segvec (embedding, labels, tags)
    INCLUDE (id) WITH (compact_threshold = 1000000);
INSERT INTO lp_toast SELECT * FROM lp_docs WHERE id <= 1000;
UPDATE lp_toast SET labels = labels || ARRAY(SELECT generate_series(5000, 5999))
WHERE id = 500;
SELECT docs_compacted FROM ft.compact('lp_tidx');
SELECT replace(cond_, :'rare', 'rare') AS cond, rows_, rechecked > 0 AS rechecked
FROM pg_temp.rechecked('labels && ''{' || :rare || '}''', 'lp_toast');
SELECT count(*) FROM lp_toast WHERE labels && ARRAY[5500];
SELECT pg_temp.topk('labels && ''{5500}''', 1, 10, false, 'lp_toast') AS ids;
SELECT missing_docs, checksum_mismatches, search_misses FROM ft.verify('lp_tidx');

DROP TABLE lp_docs, lp_stream, lp_conds, lp_q, lp_rare, lp_toast;

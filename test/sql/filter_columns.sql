-- Filter columns: key columns after the vector, evaluated inside the index.
-- Each filtered top-k through the index equals the exact answer (computed
-- with index scans off), at several selectivities, in the mutable segment
-- and in graph segments, with NULLs, after UPDATEs of the filter column
-- (not HOT) and of another column (HOT), DELETE and VACUUM; the plan shows
-- the filter as an Index Cond, and the planner picks a btree for a
-- single-row filter and segvec for a wide one.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_sql :abs_srcdir '/sql/include/plan.sql'
\i :plan_sql
SET jit = off;
SET maintenance_work_mem = '32MB';

-- vec(i, d), noise(i, d), point(cluster, i): deterministic vectors
\set vectors_sql :abs_srcdir '/sql/include/vectors.sql'
\i :vectors_sql

-- 20,000 rows: cat keeps a third, tenant a quarter, grp 2%, rid one row;
-- every 97th row has no tenant; labels and tags are label arrays (every
-- 53rd row has none, every 89th an empty one)
CREATE TABLE fc_docs (id int PRIMARY KEY, embedding real[], cat int2,
    tenant int, grp int8, rid int, label text, day date, note text, score float8,
    labels int4[], tags text[]);
INSERT INTO fc_docs
    SELECT i, pg_temp.vec(i, 8), (i % 3)::int2,
           CASE WHEN i % 97 = 0 THEN NULL ELSE i % 4 END,
           i % 50, i, 'label' || (i % 10), date '2026-01-01' + i % 365, '', i / 3.0,
           CASE WHEN i % 53 = 0 THEN NULL WHEN i % 89 = 0 THEN '{}'
                ELSE ARRAY[i % 5, (i / 5) % 7 + 10] END,
           ARRAY['t' || (i % 3), 'u' || (i % 11)]
    FROM generate_series(1, 20000) i;
-- compact_threshold = 0: every row goes to graph segments
CREATE INDEX fc_idx ON fc_docs USING segvec
    (embedding, cat, tenant, grp, rid, label, day, labels, tags) INCLUDE (id)
    WITH (compact_threshold = 0);
ANALYZE fc_docs;

CREATE TABLE fc_q (n int, v real[]);
INSERT INTO fc_q SELECT n, pg_temp.vec(100000 + n, 8) FROM generate_series(1, 3) n;

-- topk(cond, qn, k, exact) and check(cond) over fc_docs and fc_q
\set docs fc_docs
\set queries fc_q
\set topk_sql :abs_srcdir '/sql/include/topk.sql'
\i :topk_sql

CREATE TABLE fc_conds (cond text);
INSERT INTO fc_conds VALUES
    ('cat = 1'),                        -- a third: a graph walk
    ('tenant = 2'),                     -- a quarter
    ('tenant < 2'),                     -- a range
    ('grp = 7'),                        -- 2%: exact scoring
    ('grp = 7 AND tenant = 3'),         -- two columns
    ('grp = 7::int2'),                  -- a cross-type operator
    ('rid = 12345'),                    -- one row
    ('rid >= 19990'),                   -- a range of 11 rows
    ('label = ''label3'''),             -- hashed: rechecked
    ('day = date ''2026-03-01'''),
    ('day BETWEEN date ''2026-03-01'' AND date ''2026-03-03'''),
    ('grp = 1000'),                     -- none
    ('labels && ''{3}'''),              -- label arrays: rechecked
    ('labels && ''{1,12}'''),
    ('labels @> ''{2,11}'''),
    ('labels <@ ''{0,1,2,10,11}'''),
    ('labels = ''{4,16}'''),
    ('labels @> ''{}'''),
    ('tags && ''{u5}'''),
    ('tags @> ''{t1,u2}'''),
    ('tenant = 2 AND id % 2 = 0');      -- a condition the index cannot use

-- the plan: the filter is an Index Cond of the segvec scan
SET enable_seqscan = off;
SET enable_sort = off;
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fc_docs WHERE tenant = 2 AND grp < 10
    ORDER BY embedding <-> (SELECT v FROM fc_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fc_docs WHERE label = 'label3'
    ORDER BY embedding <-> (SELECT v FROM fc_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fc_docs WHERE labels && '{3}' AND tags @> '{t1}'
    ORDER BY embedding <-> (SELECT v FROM fc_q WHERE n = 1) LIMIT 10$$);
RESET enable_seqscan;
RESET enable_sort;

-- graph segments only
SELECT c.cond, r.* FROM fc_conds c, pg_temp.check(c.cond) r;

-- NULLs never pass: a NULL argument matches nothing
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
SET enable_sort = off;
PREPARE fc_t(int) AS SELECT count(*) FROM (SELECT id FROM fc_docs
    WHERE tenant = $1 ORDER BY embedding <-> (SELECT v FROM fc_q WHERE n = 1)
    LIMIT 10) s;
EXECUTE fc_t(NULL);
EXECUTE fc_t(1);
DEALLOCATE fc_t;
RESET plan_cache_mode;
RESET enable_seqscan;
RESET enable_sort;

-- inserts go to the mutable segment, with and without filter values (and
-- stay there: no background compaction until the VACUUM below)
ALTER INDEX fc_idx SET (compact_threshold = 1000000);
INSERT INTO fc_docs
    SELECT i, pg_temp.vec(i, 8), (i % 3)::int2,
           CASE WHEN i % 7 = 0 THEN NULL ELSE i % 4 END,
           i % 50, i, 'label' || (i % 10), date '2026-01-01' + i % 365, '', i / 3.0,
           CASE WHEN i % 53 = 0 THEN NULL WHEN i % 89 = 0 THEN '{}'
                ELSE ARRAY[i % 5, (i / 5) % 7 + 10] END,
           ARRAY['t' || (i % 3), 'u' || (i % 11)]
    FROM generate_series(20001, 20600) i;
SELECT c.cond, r.* FROM fc_conds c, pg_temp.check(c.cond) r;

-- UPDATE the filter column (not HOT: an indexed column) of rows in graph
-- segments and in the mutable segment, and another column (HOT)
UPDATE fc_docs SET tenant = 2 WHERE id % 10 = 1;
UPDATE fc_docs SET tenant = NULL WHERE id % 10 = 2;
UPDATE fc_docs SET note = 'hot' WHERE id % 10 = 3;
UPDATE fc_docs SET labels = labels || 3 WHERE id % 10 = 5;
SELECT c.cond, r.* FROM fc_conds c, pg_temp.check(c.cond) r
WHERE c.cond LIKE 'tenant%' OR c.cond LIKE 'grp = 7 AND%'
    OR c.cond LIKE 'labels%';

-- DELETE, then VACUUM (which compacts the mutable segment into a graph
-- segment and merges segments: the filter values go with the docs)
DELETE FROM fc_docs WHERE id % 10 = 4;
SELECT c.cond, r.* FROM fc_conds c, pg_temp.check(c.cond) r;
ALTER INDEX fc_idx SET (compact_threshold = 0);
VACUUM fc_docs;
SELECT c.cond, r.* FROM fc_conds c, pg_temp.check(c.cond) r;

-- a low ef_search walks where it would have scored exactly; a small
-- budget never cuts a filtered scan short
SET segvec.ef_search = 10;
SET segvec.max_scan_tuples = 1000;
SELECT c.cond, r.* FROM fc_conds c, pg_temp.check(c.cond) r
WHERE c.cond IN ('cat = 1', 'tenant = 2', 'tenant < 2', 'grp = 7');
RESET segvec.ef_search;
RESET segvec.max_scan_tuples;

-- the planner: a btree for a single-row filter, segvec for a wide one
CREATE INDEX fc_rid ON fc_docs (rid);
CREATE INDEX fc_tenant ON fc_docs (tenant);
ANALYZE fc_docs;
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fc_docs WHERE rid = 12345
    ORDER BY embedding <-> (SELECT v FROM fc_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fc_docs WHERE tenant = 2
    ORDER BY embedding <-> (SELECT v FROM fc_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fc_docs WHERE grp = 7
    ORDER BY embedding <-> (SELECT v FROM fc_q WHERE n = 1) LIMIT 10$$);

-- the filter columns' operator classes are valid
SELECT oc.opcname, oc.opcintype::regtype, amvalidate(oc.oid)
FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod
WHERE am.amname = 'segvec' AND oc.opcintype <> 'anyelement'::regtype
    AND EXISTS (SELECT FROM pg_depend d
                WHERE d.classid = 'pg_opclass'::regclass AND d.objid = oc.oid
                    AND d.deptype = 'e')
ORDER BY 1;

-- refused: a column segvec cannot keep, a second INCLUDE column
\set VERBOSITY terse
CREATE INDEX ON fc_docs USING segvec (embedding, score);
CREATE INDEX ON fc_docs USING segvec (embedding, embedding);
CREATE INDEX ON fc_docs USING segvec (embedding, tenant) INCLUDE (id, rid);
\set VERBOSITY default

-- the ft functions take an index with filter columns: its id key is the
-- first INCLUDE column, after the filter columns
SELECT num_docs, dimensions, filter_columns FROM ft.info('fc_idx');
-- a segment's filter area counts with its docs, not its vectors: the
-- packed vectors (8 float4 a doc) take the pages they need (at least
-- 8,000 of a page's bytes each: the rest is its header), the docs their 32
-- bytes and the filter entries (8 columns) 72
SELECT bool_and((s ->> 'vector_bytes')::bigint <=
                ceil((s ->> 'docs')::bigint * 32 / 8000.0) * 8192)
           AS vectors_only,
       bool_and((s ->> 'doc_bytes')::bigint >= (s ->> 'docs')::bigint * (32 + 72))
           AS docs_and_filters,
       bool_and((s ->> 'code_bytes')::bigint + (s ->> 'vector_bytes')::bigint +
                (s ->> 'graph_bytes')::bigint + (s ->> 'doc_bytes')::bigint =
                (s ->> 'bytes')::bigint) AS adds_up
FROM ft.info('fc_idx') f, jsonb_array_elements(f.segments) s;
SELECT id, vector = pg_temp.vec(4245, 8) AS its_vector
FROM ft.get('fc_idx', '4245');
SELECT missing_docs, duplicate_docs, phantom_entries, missing_keymap_entries
FROM ft.verify('fc_idx', search_limit => 200);
-- a doc lost and indexed again by ft.verify's repair keeps its filter
-- values: the filtered query finds it again
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM fc_docs WHERE grp = 45 AND tenant = 1
ORDER BY embedding <-> pg_temp.vec(4245, 8) LIMIT 1;
SELECT id FROM fc_docs WHERE grp = 45 AND tenant = 1
ORDER BY embedding <-> pg_temp.vec(4245, 8) LIMIT 1;
SET segvec.enable_test_hooks = on;
SELECT ft._stage_phantom('fc_idx', '4245') > 0 AS staged;
RESET segvec.enable_test_hooks;
SELECT id FROM fc_docs WHERE grp = 45 AND tenant = 1
ORDER BY embedding <-> pg_temp.vec(4245, 8) LIMIT 1;
SELECT missing_docs, phantom_entries, repaired
FROM ft.verify('fc_idx', repair => true, search_limit => 0);
SELECT id FROM fc_docs WHERE grp = 45 AND tenant = 1
ORDER BY embedding <-> pg_temp.vec(4245, 8) LIMIT 1;
RESET enable_seqscan;

-- ft.query's numeric ranges on an integer column compare as bigint (the
-- tightest integer bounds), so a filter column serves them as index
-- conditions; the rows are those of the comparison as numeric
CREATE TABLE fc_num (id int PRIMARY KEY, tenant int, grp int2, big int8,
    lab text, emb real[]);
INSERT INTO fc_num SELECT i, i % 100, i % 50, i::int8 * 1000000000000,
    'L' || i % 20, pg_temp.vec(i, 4) FROM generate_series(1, 5000) i;
CREATE INDEX fc_num_idx ON fc_num USING segvec (emb, tenant, grp, big, lab)
    INCLUDE (id);
ANALYZE fc_num;
CREATE FUNCTION pg_temp.ft_count(q text) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM ft.query('fc_num_idx', q || ' LIMIT 0 10000')
$$;
SELECT pg_temp.ft_count('@tenant:[7 7]') AS n,
       (SELECT count(*) FROM fc_num WHERE tenant::numeric BETWEEN 7 AND 7) AS as_numeric;
SELECT pg_temp.ft_count('@tenant:[6.5 7.5]') AS n,
       (SELECT count(*) FROM fc_num WHERE tenant::numeric >= 6.5 AND tenant::numeric <= 7.5) AS as_numeric;
SELECT pg_temp.ft_count('@tenant:[(6.5 (7.5]') AS n,
       (SELECT count(*) FROM fc_num WHERE tenant::numeric > 6.5 AND tenant::numeric < 7.5) AS as_numeric;
SELECT pg_temp.ft_count('@tenant:[(7 8]') AS n,
       (SELECT count(*) FROM fc_num WHERE tenant::numeric > 7 AND tenant::numeric <= 8) AS as_numeric;
SELECT pg_temp.ft_count('@tenant:[(6.99 (7.01]') AS n,
       (SELECT count(*) FROM fc_num WHERE tenant::numeric > 6.99 AND tenant::numeric < 7.01) AS as_numeric;
SELECT pg_temp.ft_count('@tenant:[-inf 1]') AS n,
       (SELECT count(*) FROM fc_num WHERE tenant::numeric <= 1) AS as_numeric;
SELECT pg_temp.ft_count('@tenant:[1e30 +inf]') AS n,
       pg_temp.ft_count('@tenant:[-inf -1e30]') AS n_below,
       pg_temp.ft_count('@tenant:[-1e30 1e30]') AS n_all;
SELECT pg_temp.ft_count('@grp:[(48.2 +inf]') AS n,
       (SELECT count(*) FROM fc_num WHERE grp::numeric > 48.2) AS as_numeric;
SELECT pg_temp.ft_count('@big:[4999000000000000 1e30]') AS n,
       pg_temp.ft_count('@big:[(-1e19 -9223372036854775808]') AS n_none;
-- a single tag on an integer column is an equality on a bigint too
SELECT pg_temp.ft_count('@tenant:{7}') AS n,
       pg_temp.ft_count('@tenant:{7.0}') AS n_7_0,
       pg_temp.ft_count('@tenant:{7.5}') AS n_7_5,
       pg_temp.ft_count('-@tenant:{7}') AS n_not,
       pg_temp.ft_count('@big:{99999999999999999999}') AS n_huge,
       pg_temp.ft_count('@tenant:{7 | 8}') AS n_two,
       (SELECT count(*) FROM fc_num WHERE tenant = 7) AS as_sql;
SELECT e FROM ft.explain('fc_num_idx', '@tenant:{7}=>[KNN 5 @emb $v]',
                         '{"v": [0, 1, 0, 1]}') e
WHERE e ~ 'Index Cond';
-- and a single tag on a CASESENSITIVE text column is an equality on text
SELECT ft.alter('fc_num_idx', casesensitive => '{lab}') IS NOT NULL AS altered;
SELECT pg_temp.ft_count('@lab:{L7}') AS n, pg_temp.ft_count('@lab:{l7}') AS n_lower,
       pg_temp.ft_count('@lab:{L7 | L8}') AS n_two,
       (SELECT count(*) FROM fc_num WHERE lab = 'L7') AS as_sql;
SELECT e FROM ft.explain('fc_num_idx', '@lab:{L7}=>[KNN 5 @emb $v]',
                         '{"v": [0, 1, 0, 1]}') e
WHERE e ~ 'Index Cond';
SELECT e FROM ft.explain('fc_num_idx', '@tenant:[6.5 7.5]=>[KNN 5 @emb $v]',
                         '{"v": [0, 1, 0, 1]}') e
WHERE e ~ 'Index Cond';
DROP TABLE fc_num;

-- ft.get, ft.similar and ft.list take the id key after the filter
-- columns (an id of another type than the first filter column: a bigint
-- beyond int4, and a text id)
CREATE TABLE fc_ids (id bigint PRIMARY KEY, tenant int, emb real[]);
INSERT INTO fc_ids SELECT 5000000000 + i, i % 3, pg_temp.vec(i, 4)
    FROM generate_series(1, 50) i;
SELECT ft.create('fc_ids_idx', 'fc_ids', 'id', 'emb',
    filter_columns => '{tenant}') IS NOT NULL AS created;
SELECT id, vector = pg_temp.vec(7, 4) AS its_vector
FROM ft.get('fc_ids_idx', '5000000007');
SELECT id FROM ft.similar('fc_ids_idx', '5000000007', 2) ORDER BY distance, id;
SELECT index, id_column, vector_column FROM ft.list()
WHERE tbl = 'fc_ids'::regclass;
CREATE TABLE fc_tids (id text PRIMARY KEY, tenant int, emb real[]);
INSERT INTO fc_tids SELECT 'doc' || i, i % 3, pg_temp.vec(i, 4)
    FROM generate_series(1, 50) i;
CREATE INDEX fc_tids_idx ON fc_tids USING segvec (emb, tenant) INCLUDE (id);
SELECT id FROM ft.get('fc_tids_idx', 'doc7');
SELECT count(*) FROM ft.similar('fc_tids_idx', 'doc7', 3);
DROP TABLE fc_ids, fc_tids;

DROP TABLE fc_docs, fc_q, fc_conds;

-- "col op ANY (array)" on filter columns.  From PostgreSQL 17 the planner
-- keeps an ordered index scan's ordering with such a condition on a column
-- after the first, and segvec takes it as an index condition
-- (amsearcharray); on 15 and 16 it is a filter above the scan (the
-- alternative expected file filter_any_1.out holds 17's and 18's plans).
-- Either way each filtered top-k equals the exact answer: equality lists
-- on integer, hashed and date columns, cross-type lists, NULL elements,
-- empty and NULL arrays, inequalities against a list, a list with another
-- key, a parameter, in graph segments and in the mutable segment.  And
-- a bool column's flag and NOT flag, index conditions from 17 too.
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

-- 4,000 rows: tenant keeps a tenth (every 97th row has none), grp a
-- fiftieth, cat (hashed) a seventh, day one in 365
CREATE TABLE fa_docs (id int PRIMARY KEY, embedding real[], tenant int,
    grp int8, cat text, day date);
INSERT INTO fa_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i % 97 = 0 THEN NULL ELSE i % 10 END,
           i % 50, 'c' || (i % 7), date '2026-01-01' + i % 365
    FROM generate_series(1, 4000) i;
-- compact_threshold = 0: every row goes to graph segments
CREATE INDEX fa_idx ON fa_docs USING segvec
    (embedding, tenant, grp, cat, day) INCLUDE (id)
    WITH (compact_threshold = 0);
ANALYZE fa_docs;

CREATE TABLE fa_q (n int, v real[]);
INSERT INTO fa_q SELECT n, pg_temp.vec(100000 + n, 8) FROM generate_series(1, 3) n;

-- topk(cond, qn, k, exact) and check(cond) over fa_docs and fa_q
\set docs fa_docs
\set queries fa_q
\set topk_sql :abs_srcdir '/sql/include/topk.sql'
\i :topk_sql

CREATE TABLE fa_conds (cond text);
INSERT INTO fa_conds VALUES
    ('tenant = ANY (''{1,3}'')'),               -- a fifth
    ('tenant = ANY (''{3,1,3,1}'')'),           -- repeats
    ('tenant IN (2, 5, 8)'),
    ('tenant = ANY (ARRAY[4, NULL])'),          -- a NULL element
    ('tenant = ANY (ARRAY[NULL]::int[])'),      -- nothing but NULLs
    ('tenant = ANY (''{}'')'),                  -- empty
    ('tenant = ANY (NULL::int[])'),             -- no array
    ('tenant = ANY (''{42}'')'),                -- no row
    ('tenant < ANY (''{1,3}'')'),               -- tenant < 3
    ('tenant >= ANY (''{7,4}'')'),              -- tenant >= 4
    ('tenant = ANY (''{1,3}''::int8[])'),       -- cross-type
    ('grp = ANY (''{7,11,49}''::int2[])'),
    ('grp IN (7, 11) AND tenant = ANY (''{1,7}'')'),
    ('grp IN (7, 11) AND tenant = 1'),
    ('cat IN (''c1'', ''c5'', ''nosuch'')'),    -- hashed: rechecked
    ('day IN (date ''2026-03-01'', date ''2026-06-30'')'),
    ('tenant = 1 OR tenant = 3'),               -- a list on 18 only
    ('tenant = ANY (''{1,3}'') AND id % 3 = 0');

-- the plan: on 17 and later the list is an Index Cond of the segvec scan
SET enable_seqscan = off;
SET enable_sort = off;
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fa_docs WHERE tenant = ANY ('{1,3}') AND grp < 10
    ORDER BY embedding <-> (SELECT v FROM fa_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fa_docs WHERE cat IN ('c1', 'c5')
    ORDER BY embedding <-> (SELECT v FROM fa_q WHERE n = 1) LIMIT 10$$);
RESET enable_seqscan;
RESET enable_sort;

-- graph segments only
SELECT c.cond, r.* FROM fa_conds c, pg_temp.check(c.cond) r;

-- a list as a parameter, in a generic plan: NULL matches nothing
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
SET enable_sort = off;
PREPARE fa_t(int[]) AS SELECT count(*), bool_and(tenant = ANY ($1)) FROM (
    SELECT id, tenant FROM fa_docs WHERE tenant = ANY ($1)
    ORDER BY embedding <-> (SELECT v FROM fa_q WHERE n = 1) LIMIT 50) s;
EXECUTE fa_t(NULL);
EXECUTE fa_t('{}');
EXECUTE fa_t('{2,6}');
DEALLOCATE fa_t;
RESET plan_cache_mode;
RESET enable_seqscan;
RESET enable_sort;

-- README's form for 15 and 16, where the list is a filter above the scan:
-- one index scan per distinct value, each with the value as its index
-- condition, the nearest of all kept; the exact answer, each row once
CREATE VIEW fa_per_value AS
SELECT s.id FROM (SELECT DISTINCT unnest('{3,1,3,1}'::int[])) AS t(tenant),
  LATERAL (SELECT id, embedding <-> (SELECT v FROM fa_q WHERE n = 1) AS dist
           FROM fa_docs WHERE fa_docs.tenant = t.tenant
           ORDER BY embedding <-> (SELECT v FROM fa_q WHERE n = 1)
           LIMIT 10) s
ORDER BY s.dist LIMIT 10;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan('SELECT * FROM fa_per_value');
SELECT cardinality(got) AS nrows,
       (SELECT count(DISTINCT id) FROM unnest(got) id) AS distinct_ids,
       got = pg_temp.topk('tenant = ANY (''{3,1,3,1}'')', 1, 10, true) AS exact
FROM (SELECT array_agg(id) AS got FROM fa_per_value) s;
RESET enable_seqscan;
DROP VIEW fa_per_value;

-- inserts go to the mutable segment and stay there
ALTER INDEX fa_idx SET (compact_threshold = 1000000);
INSERT INTO fa_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i % 7 = 0 THEN NULL ELSE i % 10 END,
           i % 50, 'c' || (i % 7), date '2026-01-01' + i % 365
    FROM generate_series(4001, 4400) i;
SELECT c.cond, r.* FROM fa_conds c, pg_temp.check(c.cond) r;

-- ft.query's tags on an integer column are a list of bigints (a tag
-- with a fraction matches no row), a condition on the filter column
SELECT count(*) AS n, bool_and(d.tenant IN (1, 3)) AS all_in,
       (SELECT count(*) FROM fa_docs WHERE tenant IN (1, 3)) AS as_sql
FROM ft.query('fa_idx', '@tenant:{1 | 3 | 2.5} LIMIT 0 10000') f
JOIN fa_docs d ON d.id = f.id::int;
SELECT e FROM ft.explain('fa_idx', '@tenant:{1 | 3}=>[KNN 5 @embedding $v]',
                         '{"v": [0, 1, 0, 1, 0, 1, 0, 1]}') e
WHERE e ~ 'Index Cond|Filter';

-- A bool filter column: the planner turns flag = true into flag (and
-- flag = false into NOT flag), forms that PostgreSQL 15 matches only to
-- btree and hash indexes, so there they are filters above the scan; 17
-- and 18 match them to any operator family with bool's =, so there they
-- are index conditions (flag = true, flag = false).  The answers are
-- exact either way.
CREATE TABLE fb_docs (id int PRIMARY KEY, embedding real[], flag bool);
INSERT INTO fb_docs
    SELECT i, pg_temp.vec(i, 8),
           CASE WHEN i % 101 = 0 THEN NULL ELSE i % 20 = 0 END
    FROM generate_series(1, 2000) i;
CREATE INDEX fb_idx ON fb_docs USING segvec (embedding, flag) INCLUDE (id)
    WITH (compact_threshold = 0);
ANALYZE fb_docs;
SET enable_seqscan = off;
SET enable_sort = off;
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fb_docs WHERE flag
    ORDER BY embedding <-> (SELECT v FROM fa_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fb_docs WHERE flag = true
    ORDER BY embedding <-> (SELECT v FROM fa_q WHERE n = 1) LIMIT 10$$);
SELECT * FROM pg_temp.plan($$
    SELECT id FROM fb_docs WHERE NOT flag
    ORDER BY embedding <-> (SELECT v FROM fa_q WHERE n = 1) LIMIT 10$$);
RESET enable_seqscan;
RESET enable_sort;
SELECT c AS cond,
       cardinality(pg_temp.topk(c, 1, 50, false, 'fb_docs')) AS rows_50,
       pg_temp.topk(c, 1, 50, false, 'fb_docs') =
           pg_temp.topk(c, 1, 50, true, 'fb_docs') AS exact
FROM unnest(ARRAY['flag', 'flag = true', 'flag IS TRUE', 'NOT flag',
                  'flag = false', 'flag IS NOT TRUE']) c;
DROP TABLE fb_docs;

DROP TABLE fa_docs, fa_q, fa_conds;

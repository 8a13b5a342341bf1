-- The ft API runs with the caller's privileges: permission denied without
-- SELECT, row-level security filters ft.search and ft.query exactly as a
-- plain SELECT, column privileges limit the returned fields, DDL needs
-- ownership; ids, values and names with SQL in them stay data; the search
-- does not depend on search_path; segvec.ef_search comes back after a call.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
DROP ROLE IF EXISTS regress_ft_reader;
DROP ROLE IF EXISTS regress_ft_nobody;
DROP ROLE IF EXISTS regress_ft_rls;
DROP ROLE IF EXISTS regress_ft_cols;
RESET client_min_messages;
SET jit = off;

CREATE ROLE regress_ft_reader;
CREATE ROLE regress_ft_nobody;
CREATE ROLE regress_ft_rls;
CREATE ROLE regress_ft_cols;

-- the functions of this API are SECURITY INVOKER
SELECT proname, prosecdef FROM pg_proc
WHERE pronamespace = 'ft'::regnamespace
  AND proname IN ('create', 'search', 'query', 'explain', 'dropindex', 'list')
ORDER BY proname;

-- deterministic, pairwise distinct 4-dim vectors
CREATE FUNCTION pg_temp.v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 4) j $$;

-- ids are text here, some of them with SQL in them
CREATE TABLE ftsec_docs (id text, embedding real[], owner_name text,
  category text, secret text);
INSERT INTO ftsec_docs
  SELECT 'doc-' || i, pg_temp.v(i),
         CASE WHEN i % 3 = 0 THEN 'regress_ft_rls' ELSE 'someone' END,
         (ARRAY['a', 'b'])[1 + i % 2], 'secret ' || i
  FROM generate_series(1, 300) i;
INSERT INTO ftsec_docs VALUES
  ($$x'); DROP TABLE ftsec_docs; --$$, pg_temp.v(1001), 'regress_ft_rls', 'a', 's'),
  ($$"; DELETE FROM ftsec_docs; --$$, pg_temp.v(1002), 'someone', 'b', 's'),
  ($$1 OR 1=1$$, pg_temp.v(1003), 'someone', 'a', 's');
SELECT ft.create('ftsec_idx', 'ftsec_docs', 'id', 'embedding');

GRANT SELECT ON ftsec_docs TO regress_ft_reader, regress_ft_rls;
GRANT SELECT (id, embedding, category) ON ftsec_docs TO regress_ft_cols;
ALTER TABLE ftsec_docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY ftsec_all ON ftsec_docs TO regress_ft_reader USING (true);
CREATE POLICY ftsec_cols ON ftsec_docs TO regress_ft_cols USING (true);
CREATE POLICY ftsec_own ON ftsec_docs TO regress_ft_rls
  USING (owner_name = current_user);

-- the top 20 by plain SQL, as the current role
CREATE FUNCTION pg_temp.plain(qv real[], k int) RETURNS text[]
LANGUAGE sql AS $$
  SELECT array_agg(id) FROM (SELECT id FROM ftsec_docs
    ORDER BY embedding <-> qv, id LIMIT k) s $$;
CREATE FUNCTION pg_temp.ftids(qv real[], k int) RETURNS text[]
LANGUAGE sql AS $$
  SELECT array_agg(id ORDER BY ord) FROM ft.search('ftsec_idx', qv, k)
    WITH ORDINALITY AS s(id, d, f, ord) $$;
GRANT EXECUTE ON FUNCTION pg_temp.plain(real[], int),
  pg_temp.ftids(real[], int) TO PUBLIC;

-- 1. A role without SELECT: permission denied, whatever the function
SET ROLE regress_ft_nobody;
\set VERBOSITY terse
SELECT * FROM ft.search('ftsec_idx', pg_temp.v(7), 5);
SELECT * FROM ft.query('ftsec_idx', '@category:{a}');
SELECT * FROM ft.query('ftsec_idx', '*=>[KNN 3 @embedding $v]',
  '{"v": [1, 2, 3, 4]}');
SELECT * FROM ft.explain('ftsec_idx', '@category:{a}');
SELECT ft.dropindex('ftsec_idx');
SELECT ft.dropindex('ftsec_idx', true);
SELECT ft.create('ftsec_idx2', 'ftsec_docs', 'id', 'embedding');
\set VERBOSITY default
-- ft.list shows the index, but no num_docs
SELECT * FROM ft.list() WHERE tbl = 'ftsec_docs'::regclass;
RESET ROLE;

-- 2. A reader sees what the owner sees (the owner is not subject to RLS)
SELECT cardinality(pg_temp.ftids(pg_temp.v(100001), 20)) AS n,
       pg_temp.ftids(pg_temp.v(100001), 20)
         = pg_temp.plain(pg_temp.v(100001), 20) AS same;
SET ROLE regress_ft_reader;
SELECT pg_temp.ftids(pg_temp.v(100001), 20)
         = pg_temp.plain(pg_temp.v(100001), 20) AS same,
       (SELECT count(*) FROM ft.query('ftsec_idx', '* LIMIT 0 1000')) AS docs;
RESET ROLE;

-- 3. RLS: the policy filters ft.search and ft.query exactly as it filters
-- a plain SELECT by the same role
SET ROLE regress_ft_rls;
SELECT cardinality(pg_temp.ftids(pg_temp.v(100001), 20)) AS n,
       pg_temp.ftids(pg_temp.v(100001), 20)
         = pg_temp.plain(pg_temp.v(100001), 20) AS same,
       (SELECT bool_and(fields ->> 'owner_name' = current_user)
          FROM ft.search('ftsec_idx', pg_temp.v(100001), 20)) AS only_own;
SELECT (SELECT count(*) FROM ft.query('ftsec_idx', '* LIMIT 0 1000')) AS docs,
       (SELECT count(*) FROM ftsec_docs) AS visible;
SELECT (SELECT array_agg(id ORDER BY id) FROM ft.query('ftsec_idx',
          '@category:{a} LIMIT 0 1000'))
       = (SELECT array_agg(id ORDER BY id) FROM ftsec_docs
          WHERE category = 'a') AS same_filtered;
-- a row the policy hides is not found even by its own vector
SELECT count(*) FROM ft.search('ftsec_idx', pg_temp.v(1), 1000)
WHERE id = 'doc-1';
RESET ROLE;

-- 4. Column privileges: the default fields are the columns the role may
-- read; asking for another is permission denied
SET ROLE regress_ft_cols;
SELECT id, fields FROM ft.search('ftsec_idx', pg_temp.v(100001), 2);
\set VERBOSITY terse
SELECT id, fields FROM ft.search('ftsec_idx', pg_temp.v(100001), 2,
  return_fields => '{secret}');
SELECT * FROM ft.query('ftsec_idx', '@owner_name:{someone}');
\set VERBOSITY default
RESET ROLE;

-- 5. Ids with SQL in them are data: returned as they are, found by a tag
-- filter on the id, and the table is intact
SELECT id, distance FROM ft.search('ftsec_idx', pg_temp.v(1001), 1);
SELECT id FROM ft.search('ftsec_idx', pg_temp.v(1002), 1);
SELECT id FROM ft.query('ftsec_idx', $$@id:{x'); DROP TABLE ftsec_docs; --}$$);
SELECT id FROM ft.query('ftsec_idx', '@id:{$id}',
  jsonb_build_object('id', $$"; DELETE FROM ftsec_docs; --$$));
SELECT id FROM ft.query('ftsec_idx', '@id:{1 OR 1=1}');
SELECT count(*) FROM ft.query('ftsec_idx', $$@id:{' OR ''='}$$);
SELECT count(*) AS rows FROM ftsec_docs;

-- 6. Any search_path: every name in the compiled SQL is qualified
SET search_path = pg_catalog;
SELECT count(*) FROM ft.search('public.ftsec_idx', public.l2_normalize('{1,2,3,4}'), 5);
SELECT count(*) FROM ft.query('public.ftsec_idx',
  '@category:{a}=>[KNN 5 @embedding $v]', '{"v": [1, 2, 3, 4]}');
RESET search_path;

-- 7. segvec.ef_search comes back after a call, and after a call that
-- fails once it is set (here the query it runs is refused)
SET segvec.ef_search = 33;
SELECT count(*) FROM ft.search('ftsec_idx', pg_temp.v(1), 5, ef_search => 200);
SELECT count(*) FROM ft.query('ftsec_idx',
  '*=>[KNN 5 @embedding $v EF_RUNTIME 300]', '{"v": [1, 2, 3, 4]}');
SHOW segvec.ef_search;
SET ROLE regress_ft_cols;
\set VERBOSITY terse
SELECT count(*) FROM ft.search('ftsec_idx', pg_temp.v(1), 5,
  return_fields => '{secret}', ef_search => 200);
\set VERBOSITY default
RESET ROLE;
SHOW segvec.ef_search;
RESET segvec.ef_search;

DROP TABLE ftsec_docs;
DROP FUNCTION pg_temp.plain(real[], int), pg_temp.ftids(real[], int);
DROP ROLE regress_ft_reader, regress_ft_nobody, regress_ft_rls, regress_ft_cols;

-- ft.search and ft.query read their own writes: they combine the table with
-- the pending upserts that ft.add / ft.del queue (ft.pending_for), the
-- newest write per id winning and a pending delete hiding the row.
--
-- Until the merge-insert API (ft.add, ft.del, ft.flush, ft.pending_for) is
-- installed, this suite stands in a stub ft.pending_for over a table of its
-- own and queues by inserting into it; once the API is there, the same
-- checks run through the real ft.add / ft.del / ft.flush, with the same
-- expected output.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;
-- queued writes stay queued until ft.flush: the checks before it assert
-- what a background merge would change
SET segvec.background_merge = off;

-- deterministic, pairwise distinct 4-dim vectors
CREATE FUNCTION pg_temp.v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 4) j $$;

CREATE TABLE ftp_items (id bigint PRIMARY KEY, embedding real[],
  category text, price numeric);
INSERT INTO ftp_items
  SELECT i, pg_temp.v(i), (ARRAY['books', 'music'])[1 + i % 2], i
  FROM generate_series(1, 200) i;
SELECT ft.create('ftp_idx', 'ftp_items', 'id', 'embedding');

-- The stub, only when the real ft.pending_for is missing
CREATE TABLE ftp_queue (idx regclass, id text, op "char", vector real[],
  fields jsonb, generation bigserial);
DO $$
BEGIN
  IF to_regprocedure('ft.pending_for(regclass)') IS NULL THEN
    CREATE FUNCTION ft.pending_for(index regclass)
    RETURNS TABLE (id text, op "char", vector real[], fields jsonb,
                   generation bigint)
    LANGUAGE sql STABLE AS $f$
      SELECT DISTINCT ON (q.id) q.id, q.op, q.vector, q.fields, q.generation
      FROM public.ftp_queue q WHERE q.idx = $1
      ORDER BY q.id, q.generation DESC $f$;
    COMMENT ON FUNCTION ft.pending_for(regclass) IS 'ft_pending stub';
  END IF;
END
$$;
CREATE FUNCTION pg_temp.stub() RETURNS boolean LANGUAGE sql AS $$
  SELECT obj_description('ft.pending_for(regclass)'::regprocedure, 'pg_proc')
    IS NOT DISTINCT FROM 'ft_pending stub' $$;

-- add / del / flush through the stub or the real API
CREATE FUNCTION pg_temp.add(id bigint, v real[], fields jsonb DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF pg_temp.stub() THEN
    INSERT INTO ftp_queue (idx, id, op, vector, fields)
      VALUES ('ftp_idx', id::text, 'u', v, fields);
  ELSE
    EXECUTE 'SELECT ft.add($1, $2, $3, $4)'
      USING 'ftp_idx'::regclass, id::text, v, fields;
  END IF;
END
$$;
CREATE FUNCTION pg_temp.del(id bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF pg_temp.stub() THEN
    INSERT INTO ftp_queue (idx, id, op) VALUES ('ftp_idx', id::text, 'd');
  ELSE
    EXECUTE 'SELECT ft.del($1, $2)' USING 'ftp_idx'::regclass, id::text;
  END IF;
END
$$;
CREATE FUNCTION pg_temp.flush() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF pg_temp.stub() THEN
    -- a write's fields overlay the row's columns
    CREATE TEMP TABLE ftp_new AS
      SELECT (jsonb_populate_record(i, coalesce(p.fields, '{}')
               || jsonb_build_object('id', p.id, 'embedding', p.vector))).*
      FROM ft.pending_for('ftp_idx') p
        LEFT JOIN ftp_items i ON i.id = p.id::bigint
      WHERE p.op = 'u';
    DELETE FROM ftp_items i USING ft.pending_for('ftp_idx') p
      WHERE i.id = p.id::bigint;
    INSERT INTO ftp_items SELECT * FROM ftp_new;
    DROP TABLE ftp_new;
    DELETE FROM ftp_queue;
  ELSE
    EXECUTE 'SELECT ft.flush($1)' USING 'ftp_idx'::regclass;
  END IF;
END
$$;

-- the top k of plain SQL over what the table will hold after a flush
CREATE FUNCTION pg_temp.top(qv real[], k int, cat text DEFAULT NULL)
RETURNS text[] LANGUAGE sql AS $$
  SELECT array_agg(id::text) FROM (SELECT id FROM ftp_items
    WHERE cat IS NULL OR category = cat
    ORDER BY embedding <-> qv, id LIMIT k) s $$;
CREATE FUNCTION pg_temp.ftids(qv real[], k int, filter text DEFAULT NULL)
RETURNS text[] LANGUAGE sql AS $$
  SELECT array_agg(id ORDER BY ord) FROM ft.search('ftp_idx', qv, k, filter)
    WITH ORDINALITY AS s(id, d, f, ord) $$;

-- the nearest docs before any write
SELECT pg_temp.ftids(pg_temp.v(1), 5) AS before,
       pg_temp.ftids(pg_temp.v(1), 5) = pg_temp.top(pg_temp.v(1), 5) AS same;

-- 1. A new vector for an existing id: returned once, at its new distance;
-- its other columns are the table's until the write says otherwise
SELECT pg_temp.add(150, pg_temp.v(1000));
SELECT id, distance, fields FROM ft.search('ftp_idx', pg_temp.v(1000), 2);
SELECT count(*) AS times FROM ft.search('ftp_idx', pg_temp.v(150), 200)
WHERE id = '150';
SELECT embedding = pg_temp.v(150) AS table_unchanged FROM ftp_items
WHERE id = 150;

-- 2. A new id, with its fields; a filter sees the pending fields
SELECT pg_temp.add(500, pg_temp.v(1001), '{"category": "films", "price": 7}');
SELECT id, distance, fields FROM ft.search('ftp_idx', pg_temp.v(1001), 1);
SELECT id FROM ft.query('ftp_idx', '@category:{films}');
SELECT id, fields FROM ft.query('ftp_idx', '@price:[7 7] RETURN 1 category');

-- 3. A pending delete hides the row; the newest write wins.  (The re-add
-- of 3 after its delete gives every column: a delete then an add replaces
-- the row, and ft.pending_for does not tell that from an update yet.)
SELECT pg_temp.del(1);
SELECT count(*) AS deleted_found FROM ft.search('ftp_idx', pg_temp.v(1), 200)
WHERE id = '1';
SELECT pg_temp.add(2, pg_temp.v(1002));
SELECT pg_temp.del(2);
SELECT pg_temp.del(3);
SELECT pg_temp.add(3, pg_temp.v(1003), '{"category": "films", "price": 33}');
SELECT pg_temp.add(4, pg_temp.v(1004));
SELECT pg_temp.add(4, pg_temp.v(1005));
SELECT
  (SELECT count(*) FROM ft.query('ftp_idx', '@id:{2} | @id:{1}')) AS gone,
  (SELECT id FROM ft.search('ftp_idx', pg_temp.v(1003), 1)) AS readded,
  (SELECT id FROM ft.search('ftp_idx', pg_temp.v(1005), 1)) AS newest,
  (SELECT count(*) FROM ft.search('ftp_idx', pg_temp.v(1004), 200)
    WHERE id = '4' AND distance = 0) AS older_vector;
-- a filter on a pending write's new fields: id 3 is now a film, not a book
SELECT array_agg(id ORDER BY id::int) AS films
FROM ft.query('ftp_idx', '@category:{films}');
SELECT count(*) AS old_category FROM ft.query('ftp_idx',
  '@category:{books} @id:{3}');

-- 4. KNN with a filter, VECTOR_RANGE and plain filters through ft.query
SELECT id, distance FROM ft.query('ftp_idx',
  '(@category:{films})=>[KNN 5 @embedding $v]',
  jsonb_build_object('v', pg_temp.v(1003)));
SELECT id FROM ft.query('ftp_idx', '@embedding:[VECTOR_RANGE 0.001 $v]',
  jsonb_build_object('v', pg_temp.v(1001)));

-- 5. After the flush the table holds the same, and searches agree
CREATE TEMP TABLE before_flush AS
  SELECT q, pg_temp.ftids(pg_temp.v(q), 10) AS ids,
         pg_temp.ftids(pg_temp.v(q), 10, '@category:{books}') AS books
  FROM unnest(ARRAY[1, 150, 1000, 1001, 1003, 1005]) q;
SELECT pg_temp.flush();
SELECT count(*) AS pending FROM ft.pending_for('ftp_idx');
SELECT b.q,
       b.ids = pg_temp.ftids(pg_temp.v(b.q), 10) AS same_search,
       b.ids = pg_temp.top(pg_temp.v(b.q), 10) AS table_agrees,
       b.books = pg_temp.top(pg_temp.v(b.q), 10, 'books') AS filter_agrees
FROM before_flush b ORDER BY b.q;
SELECT id, category, price FROM ftp_items WHERE id IN (1, 2, 3, 4, 150, 500)
ORDER BY id;

-- the function the search statement reads the queue through is internal
\set VERBOSITY terse
SELECT * FROM ft._pending_rows();
\set VERBOSITY default

DO $$
BEGIN
  IF pg_temp.stub() THEN
    DROP FUNCTION ft.pending_for(regclass);
  END IF;
END
$$;
DROP TABLE ftp_items, ftp_queue;

-- The Citus paths of the ft API on one node without Citus.  A table laid
-- out as Citus lays out a distributed one (an empty copy where the query
-- runs, and shard tables with their copies of the index, named
-- <name>_<shard id>), Citus's run_command_on_shards and
-- run_command_on_placements stubbed by functions that run the command on
-- each shard table here, and the test point 'as-citus' that makes segvec
-- treat the tables listed in ft_test_citus_shards as Citus tables.  What
-- this cannot show (the statements reaching real workers, SET LOCAL
-- propagation) is test/t/090_citus.pl's, which needs Citus.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;
SET segvec.background_merge = off;
SET segvec.compact_threshold = 100000;

CREATE FUNCTION pg_temp.v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 4) j $$;

CREATE TABLE dist_items (id bigint, embedding real[], category text);
SELECT ft.create('dist_idx', 'dist_items', 'id', 'embedding');
CREATE TABLE dist_items_102001 (LIKE dist_items);
CREATE TABLE dist_items_102002 (LIKE dist_items);
CREATE UNIQUE INDEX ON dist_items_102001 (id);
CREATE UNIQUE INDEX ON dist_items_102002 (id);
CREATE INDEX dist_idx_102001 ON dist_items_102001
  USING segvec (embedding vector_l2_ops) INCLUDE (id);
CREATE INDEX dist_idx_102002 ON dist_items_102002
  USING segvec (embedding vector_l2_ops) INCLUDE (id);
INSERT INTO dist_items_102001
  SELECT i, pg_temp.v(i), 'a' FROM generate_series(1, 200) i WHERE i % 2 = 0;
INSERT INTO dist_items_102002
  SELECT i, pg_temp.v(i), 'b' FROM generate_series(1, 200) i WHERE i % 2 = 1;

-- the stubs
CREATE TABLE public.ft_test_citus_shards (tbl regclass, shard regclass,
  shardid bigint);
INSERT INTO public.ft_test_citus_shards VALUES
  ('dist_items', 'dist_items_102001', 102001),
  ('dist_items', 'dist_items_102002', 102002);
CREATE FUNCTION pg_catalog.run_command_on_shards(tbl regclass, command text,
	parallel boolean DEFAULT true)
	RETURNS TABLE (shardid bigint, success boolean, result text)
	LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT * FROM public.ft_test_citus_shards s
			  WHERE s.tbl = run_command_on_shards.tbl ORDER BY s.shardid LOOP
		shardid := r.shardid;
		BEGIN
			EXECUTE format(command, r.shard) INTO result;
			success := true;
		EXCEPTION WHEN OTHERS THEN
			success := false;
			result := SQLERRM;
		END;
		RETURN NEXT;
	END LOOP;
END
$$;
CREATE FUNCTION pg_catalog.run_command_on_placements(tbl regclass,
	command text, parallel boolean DEFAULT true)
	RETURNS TABLE (nodename text, nodeport int, shardid bigint,
		success boolean, result text)
	LANGUAGE sql AS $$
	SELECT 'localhost', 5432, s.* FROM pg_catalog.run_command_on_shards(tbl, command) s
$$;

SET segvec.enable_test_hooks = on;
SET segvec.test_point = 'as-citus';

-- counts from the shards: equal to the rows
SELECT num_docs, mutable_docs, immutable_docs, keymap_entries, dimensions,
	   metric, m, jsonb_array_length(segments) AS segments
  FROM ft.info('dist_idx');
SELECT count(*) FROM (SELECT * FROM dist_items_102001
					  UNION ALL SELECT * FROM dist_items_102002) r;

-- ft.get and ft.similar find the shard that holds the id
SELECT g.id, g.vector = pg_temp.v(g.id::int) AS right_vector, g.segment
  FROM unnest(ARRAY['7', '8', '999']) k, ft.get('dist_idx', k) g;
-- an id with a quote and a percent sign reaches the shards intact
DO $$
DECLARE
	detail text;
BEGIN
	PERFORM * FROM ft.get('dist_idx', 'not''a%snumber');
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RAISE NOTICE 'the shard read the id as written: %',
		strpos(detail, 'invalid input syntax for type bigint: "not''a%snumber"') > 0;
END
$$;

-- maintenance on every placement, verify on every shard
SELECT * FROM ft.compact('dist_idx');
SELECT num_docs, mutable_docs, immutable_docs, num_segments,
	   (SELECT array_agg(DISTINCT s ->> 'index') FROM jsonb_array_elements(segments) s)
		 AS shards
  FROM ft.info('dist_idx');
SELECT heap_rows, indexed_docs, missing_docs, keymap_entries, search_checked,
	   search_misses, examples FROM ft.verify('dist_idx', search_limit => 50);
SELECT ft.snapshot('dist_idx') > 0 AS snapshot_written;
SELECT sum(snapshot_entries) AS entries, count(*) AS buckets
  FROM ft.keymap_buckets('dist_idx');
SELECT * FROM ft.get('dist_idx', '7');

-- queued upserts on a Citus table apply with INSERT ... ON CONFLICT and
-- DELETE ... = ANY($1) (segvec.merge_method = auto); here they land in the
-- local copy, where Citus would route them to the shards
SELECT ft.add('dist_idx', '1001', pg_temp.v(1001), '{"category": "c"}') > 0 AS queued,
	   ft.add('dist_idx', '1002', pg_temp.v(1002)) > 0 AS queued2;
SELECT * FROM ft.flush('dist_idx');
SELECT ft.add('dist_idx', '1001', pg_temp.v(2001)) > 0 AS queued,
	   ft.del('dist_idx', '1002') > 0 AS deleted;
SELECT * FROM ft.flush('dist_idx');
SELECT id, category, embedding = pg_temp.v(2001) AS new_vector FROM dist_items;

-- ef_search reaches the shards by SET LOCAL (here: no error)
SELECT id FROM ft.search('dist_idx', pg_temp.v(1001), 1, ef_search => 5);

RESET segvec.test_point;
RESET segvec.enable_test_hooks;
DROP FUNCTION pg_catalog.run_command_on_placements(regclass, text, boolean);
DROP FUNCTION pg_catalog.run_command_on_shards(regclass, text, boolean);
DROP TABLE public.ft_test_citus_shards, dist_items, dist_items_102001,
  dist_items_102002;

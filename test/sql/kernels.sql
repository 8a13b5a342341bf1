-- Distance kernels: every path (scalar, avx2, avx512) returns the same bits.
--
-- The digests below are of the exact float8 results, so they are the same
-- on every machine and with every segvec.kernel setting; run-tests.sh runs
-- the whole regression suite once per path the CPU has.  The DO block
-- compares, inside one session, every path this CPU has with scalar.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;

-- segvec_kernel() names the path in use; the setting switches it
SELECT segvec_kernel() IN ('scalar', 'avx2', 'avx512') AS known_kernel;
SET segvec.kernel = scalar;
SELECT segvec_kernel();
RESET segvec.kernel;
SET segvec.kernel = sse9;

-- pairs of deterministic vectors of many lengths (tails of every size,
-- one to several blocks of 32)
CREATE TEMP TABLE kpairs AS
SELECT dim, array_agg(sin(i * 1.3 + dim)::real ORDER BY i) AS a,
       array_agg((cos(i * 0.7 - dim) * 10 ^ (i % 5 - 2))::real ORDER BY i) AS b
FROM generate_series(1, 70) dim, generate_series(1, dim) i
GROUP BY dim
UNION ALL
SELECT dim, array_agg(sin(i * 1.3 + dim)::real ORDER BY i),
       array_agg((cos(i * 0.7 - dim) * 10 ^ (i % 5 - 2))::real ORDER BY i)
FROM (VALUES (127), (128), (129), (784), (1536), (1537)) d(dim),
     generate_series(1, dim) i
GROUP BY dim;

CREATE FUNCTION pg_temp.kernel_digest() RETURNS text LANGUAGE sql AS $$
  SELECT md5(string_agg(float8send(l2_distance(a, b))::text ||
                        float8send(inner_product(a, b))::text ||
                        float8send(cosine_distance(a, b))::text, ','
                        ORDER BY dim))
  FROM kpairs $$;

-- the same bits as on every other machine
SELECT count(*) AS pairs, pg_temp.kernel_digest() FROM kpairs;

-- and every path of this CPU gives them
DO $$
DECLARE
  ref text;
  k text;
BEGIN
  PERFORM set_config('segvec.kernel', 'scalar', true);
  ref := pg_temp.kernel_digest();
  FOREACH k IN ARRAY ARRAY['avx2', 'avx512'] LOOP
    BEGIN
      PERFORM set_config('segvec.kernel', k, true);
    EXCEPTION WHEN invalid_parameter_value THEN
      CONTINUE;               -- this CPU lacks the path
    END;
    IF pg_temp.kernel_digest() IS DISTINCT FROM ref THEN
      RAISE WARNING 'kernel % differs from scalar', k;
    END IF;
  END LOOP;
END
$$;

-- an index scan scores with the same kernels as the operators
CREATE TABLE kitems (id int, e real[]);
INSERT INTO kitems SELECT dim, b[1:3] FROM kpairs WHERE dim >= 3 AND dim <= 60;
CREATE INDEX kitems_idx ON kitems USING segvec (e);
SET enable_seqscan = off;
SELECT md5(string_agg(id || ':' || float8send(e <-> '{0.1,0.2,0.3}')::text, ','))
FROM (SELECT id, e FROM kitems ORDER BY e <-> '{0.1,0.2,0.3}' LIMIT 20) s;
RESET enable_seqscan;
SELECT md5(string_agg(id || ':' || float8send(e <-> '{0.1,0.2,0.3}')::text, ','))
FROM (SELECT id, e FROM kitems ORDER BY e <-> '{0.1,0.2,0.3}', id LIMIT 20) s;
DROP TABLE kitems;

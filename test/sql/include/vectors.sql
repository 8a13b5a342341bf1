\set ECHO none
-- Deterministic vectors for the suites (a suite includes it with \i, by
-- its path under pg_regress's PG_ABS_SRCDIR), no random():
--   vec(i, d): element j of vector i is sin(i * sqrt(j + 1) + j);
--   noise(i, d): the same in float8, a pseudo-random vector;
--   point(cluster, i): row i of a cluster in 16 dimensions, at the
--     cluster's centre (10 * noise(1000 * (cluster + 1), 16)) plus noise
--     of about a fifth of the distance between centres.
CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
    FROM generate_series(1, d) j
$$;
CREATE FUNCTION pg_temp.noise(i int, d int) RETURNS float8[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j) ORDER BY j)
    FROM generate_series(1, d) j
$$;
CREATE FUNCTION pg_temp.point(cluster int, i int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg((10 * c + 2 * n)::real ORDER BY j)
    FROM unnest(pg_temp.noise(1000 * (cluster + 1), 16),
                pg_temp.noise(i, 16)) WITH ORDINALITY AS t(c, n, j)
$$;
\set ECHO all

-- ft.similar(index, key, k) leaves the row itself out however the key is
-- spelled: ft.get reads the key with the id type's input function, so
-- '042' finds the bigint 42 and an upper-case uuid finds its row, and the
-- row with that id must not come back as its own neighbour.  Rows without
-- a vector are never neighbours.
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;

CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
    FROM generate_series(1, d) j
$$;
CREATE TABLE kss_big (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO kss_big SELECT i, pg_temp.vec(i, 8) FROM generate_series(1, 200) i;
CREATE INDEX kss_big_idx ON kss_big USING segvec (embedding) INCLUDE (id);
CREATE TABLE kss_uuid (id uuid PRIMARY KEY, embedding real[]);
INSERT INTO kss_uuid SELECT md5(i::text)::uuid, pg_temp.vec(i, 8)
FROM generate_series(1, 200) i;
CREATE INDEX kss_uuid_idx ON kss_uuid USING segvec (embedding) INCLUDE (id);

-- ft.get finds the row under each spelling
SELECT n, key, g.segment
FROM (VALUES (1, '42'), (2, '042'), (3, '+42'), (4, ' 42')) k(n, key),
     LATERAL ft.get('kss_big_idx', key) g ORDER BY n;
SELECT n, g.segment
FROM (VALUES (1, md5('42')::uuid::text), (2, upper(md5('42'))), (3, md5('42'))) k(n, key),
     LATERAL ft.get('kss_uuid_idx', key) g ORDER BY n;
-- so ft.similar must not return the row itself under any of them
SELECT n, key, count(*) FILTER (WHERE s.id::bigint = 42) AS self_returned,
       count(*) AS neighbours
FROM (VALUES (1, '42'), (2, '042'), (3, '+42'), (4, ' 42')) k(n, key),
     LATERAL ft.similar('kss_big_idx', key, 5) s
GROUP BY n, key ORDER BY n;
SELECT n, count(*) FILTER (WHERE s.id::uuid = md5('42')::uuid) AS self_returned,
       count(*) AS neighbours
FROM (VALUES (1, md5('42')::uuid::text), (2, upper(md5('42'))), (3, md5('42'))) k(n, key),
     LATERAL ft.similar('kss_uuid_idx', key, 5) s
GROUP BY n ORDER BY n;


-- rows without a vector are not indexed, so they are nobody's neighbours:
-- with k larger than the table, ft.similar returns the 26 other rows that
-- have a vector, never one of the 3 NULL ones
CREATE TABLE kss_null (id int PRIMARY KEY, embedding real[]);
INSERT INTO kss_null SELECT g, CASE WHEN g % 10 = 0 THEN NULL
    ELSE ARRAY[g, g + 1]::real[] END FROM generate_series(1, 30) g;
CREATE INDEX kss_null_idx ON kss_null USING segvec (embedding) INCLUDE (id);
SELECT count(*) AS neighbours, count(*) FILTER (WHERE distance IS NULL) AS null_distances,
       count(*) FILTER (WHERE s.id::int % 10 = 0) AS null_rows
FROM ft.similar('kss_null_idx', '1', 40) s;

DROP TABLE kss_big, kss_uuid, kss_null;

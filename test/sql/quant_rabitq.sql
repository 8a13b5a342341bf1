-- RaBitQ codes in graph segments (quantization = 'rabitq'):
-- ft.info shows the quantization and the size split; searches return
-- exact distances in exact order, find (nearly) the exact answer for l2,
-- cosine and inner product, under a filter, and after tombstones and
-- VACUUM; zero vectors with cosine come last.  The rotation's seed is
-- random per segment, so recall is asserted as a threshold.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;

-- element j of vector i: a few clusters, no random(); 150 dimensions are
-- padded to 192, so the Hadamard rounds take two overlapping blocks of 128
CREATE FUNCTION pg_temp.vec(i int, d int) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg((sin((i % 7) * 1.3 + j * 0.7) + 0.6 * sin(i * sqrt(j + 1::float8) + j))::real
                     ORDER BY j)
    FROM generate_series(1, d) j
$$;

CREATE TABLE rq (id int PRIMARY KEY, embedding real[])
    WITH (autovacuum_enabled = off);
INSERT INTO rq SELECT i, pg_temp.vec(i, 150) FROM generate_series(1, 3000) i;
CREATE TABLE rq_q (qid int PRIMARY KEY, v real[]);
INSERT INTO rq_q SELECT g, pg_temp.vec(900000 + 13 * g, 150)
    FROM generate_series(1, 30) g;
ANALYZE rq;

CREATE INDEX rq_idx ON rq USING segvec (embedding)
    WITH (compact_threshold = 0, quantization = 'rabitq');
-- codes: 3,000 x (3 float4 + 192 bits) and one parameter page
SELECT num_segments, s ->> 'quantization' AS quantization,
       (s ->> 'code_bytes')::bigint AS code_bytes,
       (s ->> 'vector_bytes')::bigint >= 3000 * 150 * 4 AS vectors_kept,
       (s ->> 'graph_bytes')::bigint > 0 AS has_graph,
       (s ->> 'doc_bytes')::bigint > 0 AS has_docs
FROM ft.info('rq_idx') f, jsonb_array_elements(f.segments) s;

-- per query: the index's top 10 against the exact top 10 (by distance);
-- recall, and whether the output is in non-decreasing exact distance
CREATE FUNCTION pg_temp.check(op text, filter text DEFAULT 'true')
RETURNS TABLE (recall numeric, out_of_order bigint) LANGUAGE plpgsql AS $$
DECLARE
    q record;
    got float8[];
    want float8[];
    hits int := 0;
    bad bigint := 0;
    n int := 0;
BEGIN
    FOR q IN SELECT v FROM rq_q ORDER BY qid LOOP
        SET LOCAL enable_seqscan = off;
        SET LOCAL segvec.exact_scan_factor = 0;
        EXECUTE format('SELECT array_agg(d ORDER BY n) FROM (SELECT row_number() OVER () AS n, embedding %s $1 AS d FROM (SELECT embedding FROM rq WHERE %s ORDER BY embedding %s $1 LIMIT 10) s) s2',
                       op, filter, op) USING q.v INTO got;
        SET LOCAL enable_seqscan = on;
        SET LOCAL enable_indexscan = off;
        SET LOCAL enable_bitmapscan = off;
        EXECUTE format('SELECT array_agg(d ORDER BY d) FROM (SELECT embedding %s $1 AS d FROM rq WHERE %s ORDER BY 1 LIMIT 10) s',
                       op, filter) USING q.v INTO want;
        RESET enable_indexscan;
        RESET enable_bitmapscan;
        hits := hits + (SELECT count(*) FROM unnest(got) g WHERE g <= want[10]);
        IF EXISTS (SELECT 1 FROM unnest(got) WITH ORDINALITY a(d, i)
                   WHERE i > 1 AND d < got[i - 1]) THEN
            bad := bad + 1;
        END IF;
        n := n + 1;
    END LOOP;
    recall := round(hits::numeric / (10 * n), 2);
    out_of_order := bad;
    RETURN NEXT;
END
$$;

SELECT recall >= 0.95 AS recall_ok, out_of_order FROM pg_temp.check('<->');
SET segvec.rerank = 1;
SELECT recall >= 0.9 AS recall_ok, out_of_order FROM pg_temp.check('<->');
RESET segvec.rerank;
-- a filtered scan, 1 row in 10: the scan goes on well past ef
SELECT recall >= 0.95 AS recall_ok, out_of_order
FROM pg_temp.check('<->', 'id % 10 = 3');

-- tombstones: deleted rows are never returned, recall holds
DELETE FROM rq WHERE id % 7 = 0;
VACUUM rq;
SELECT (s ->> 'tombstones')::int AS tombstones
FROM ft.info('rq_idx') f, jsonb_array_elements(f.segments) s;
SET enable_seqscan = off;
SELECT count(*) AS deleted_returned FROM rq_q q,
    LATERAL (SELECT id FROM rq ORDER BY embedding <-> q.v LIMIT 10) r
WHERE r.id % 7 = 0;
RESET enable_seqscan;
SELECT recall >= 0.95 AS recall_ok, out_of_order FROM pg_temp.check('<->');

-- cosine and inner product
DROP INDEX rq_idx;
CREATE INDEX rq_cos_idx ON rq USING segvec (embedding vector_cosine_ops)
    WITH (compact_threshold = 0, quantization = 'rabitq');
SELECT recall >= 0.95 AS recall_ok, out_of_order FROM pg_temp.check('<=>');
DROP INDEX rq_cos_idx;
CREATE INDEX rq_ip_idx ON rq USING segvec (embedding vector_ip_ops)
    WITH (compact_threshold = 0, quantization = 'rabitq');
SELECT recall >= 0.95 AS recall_ok, out_of_order FROM pg_temp.check('<#>');
DROP INDEX rq_ip_idx;

-- cosine with zero vectors: NaN distances, after every other row
INSERT INTO rq SELECT 100000 + g, array_fill(0::real, ARRAY[150])
    FROM generate_series(1, 20) g;
CREATE INDEX rq_cos_idx ON rq USING segvec (embedding vector_cosine_ops)
    WITH (compact_threshold = 0, quantization = 'rabitq');
SET enable_seqscan = off;
SET segvec.exact_scan_factor = 0;
SELECT count(*) FILTER (WHERE id > 100000) AS zero_rows, count(*) AS rows
FROM (SELECT id FROM rq ORDER BY embedding <=> (SELECT v FROM rq_q WHERE qid = 1)
      LIMIT 10) s;
SELECT count(*) AS rows
FROM (SELECT id FROM rq ORDER BY embedding <=> array_fill(0::real, ARRAY[150])
      LIMIT 10) s;
RESET segvec.exact_scan_factor;
RESET enable_seqscan;

-- the option
\set VERBOSITY terse
CREATE INDEX ON rq USING segvec (embedding) WITH (quantization = 'rabit');

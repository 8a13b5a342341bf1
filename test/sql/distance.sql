-- Distance functions and operators on real[]
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;

-- known values
SELECT l2_distance('{0,0}', '{3,4}');
SELECT l2_distance('{1,2,3}', '{1,2,3}');
SELECT '{0,0}'::real[] <-> '{3,4}';
SELECT '{1,1,1,1,1,1,1,1,1}'::real[] <-> '{0,0,0,0,0,0,0,0,0}';
SELECT cosine_distance('{1,0}', '{0,1}');
SELECT cosine_distance('{1,2}', '{-1,-2}');
SELECT cosine_distance('{1,2,3}', '{1,2,3}');
SELECT cosine_distance('{1,2,3}', '{2,4,6}');
SELECT '{1,0}'::real[] <=> '{1,1}';
SELECT inner_product('{1,2,3}', '{4,5,6}');
SELECT negative_inner_product('{1,2,3}', '{4,5,6}');
SELECT '{1,2,3}'::real[] <#> '{4,5,6}';
SELECT inner_product('{0,0}', '{1,1}'), negative_inner_product('{0,0}', '{1,1}');
SELECT l2_norm('{3,4}');
SELECT l2_norm('{0,0,0}');
SELECT l2_norm('{-2}');
SELECT l2_normalize('{3,4}');
SELECT l2_normalize('{0,-5,0}');
SELECT l2_normalize('{0,0,0}');
SELECT l2_norm(l2_normalize('{1,1,1,1}'));

-- any lower bound is accepted
SELECT l2_norm('[0:1]={3,4}'), l2_distance('[5:6]={0,0}', '{3,4}');

-- 16000 dimensions work
SELECT l2_distance(array_fill(1::real, ARRAY[16000]),
                   array_fill(1::real, ARRAY[16000]));
SELECT l2_norm(array_fill(1::real, ARRAY[16000])) = sqrt(16000::float8);

-- zero vector: cosine distance is NaN
SELECT cosine_distance('{0,0}', '{1,1}'), cosine_distance('{1,1}', '{0,0}');

-- parallel vectors of 1536 dimensions: close to 0, never negative
SELECT d >= 0 AND d <= 1e-6 AS parallel_close_to_zero
FROM (SELECT cosine_distance(array_fill(0.111::real, ARRAY[1536]),
                             array_fill(0.1::real, ARRAY[1536])) AS d) s;

-- strict: NULL argument gives NULL
SELECT l2_distance(NULL, '{1}') IS NULL AS l2,
       cosine_distance('{1}', NULL) IS NULL AS cosine,
       inner_product(NULL, NULL) IS NULL AS ip,
       negative_inner_product(NULL, '{1}') IS NULL AS nip,
       l2_norm(NULL) IS NULL AS norm,
       l2_normalize(NULL) IS NULL AS normalize;

-- kernels against a plain SQL computation, for several lengths
WITH dims(dim) AS (VALUES (1), (7), (8), (15), (16), (33), (100), (1000), (1003)),
vecs AS (
    SELECT dim,
           array_agg(sin(i)::real ORDER BY i) AS a,
           array_agg(cos(i * 1.7 + 0.3)::real ORDER BY i) AS b
    FROM dims, generate_series(1, dim) AS i
    GROUP BY dim
),
ref AS (
    SELECT dim, a, b,
           (SELECT sqrt(sum((x::float8 - y::float8) ^ 2))
            FROM unnest(a, b) AS u(x, y)) AS l2,
           (SELECT sum(x::float8 * y::float8)
            FROM unnest(a, b) AS u(x, y)) AS ip,
           (SELECT sum(abs(x::float8 * y::float8))
            FROM unnest(a, b) AS u(x, y)) AS ipabs,
           (SELECT sqrt(sum(x::float8 ^ 2)) FROM unnest(a) AS u(x)) AS na,
           (SELECT sqrt(sum(y::float8 ^ 2)) FROM unnest(b) AS u(y)) AS nb
    FROM vecs
)
SELECT dim,
       abs(l2_distance(a, b) - l2) <= 1e-5 * l2 AS l2_ok,
       abs((a <-> b) - l2) <= 1e-5 * l2 AS l2_op_ok,
       abs(inner_product(a, b) - ip) <= 1e-5 * ipabs AS ip_ok,
       negative_inner_product(a, b) = -inner_product(a, b) AS nip_ok,
       abs(cosine_distance(a, b) - (1 - ip / (na * nb))) <= 1e-12 AS cosine_ok,
       abs(l2_norm(a) - na) <= 1e-12 * na AS norm_ok,
       abs(l2_norm(l2_normalize(a)) - 1) <= 1e-6 AS normalize_ok,
       l2_distance(a, a) = 0 AS self_l2_zero,
       cosine_distance(b, b) = 0 AS self_cosine_zero
FROM ref
ORDER BY dim;

-- errors
\set VERBOSITY terse
SELECT l2_distance('{1,2}', '{1,2,3}');
SELECT cosine_distance('{1,2,3}', '{1}');
SELECT '{1}'::real[] <#> '{1,2}';
SELECT l2_distance('{1,NULL}', '{1,2}');
SELECT l2_norm('{NULL}');
SELECT l2_distance('{1,NaN}', '{1,2}');
SELECT l2_distance('{1,2}', '{Infinity,2}');
SELECT l2_normalize('{-Infinity}');
SELECT l2_distance('{{1,2},{3,4}}', '{{1,2},{3,4}}');
SELECT l2_norm('{}');
SELECT cosine_distance('{}', '{}');
SELECT l2_distance(array_fill(1::real, ARRAY[16001]),
                   array_fill(1::real, ARRAY[16001]));
SELECT l2_norm(array_fill(1::real, ARRAY[16001]));
\set VERBOSITY default

-- details of the errors
SELECT l2_distance('{1,2,3}', '{1,2,NaN}');
SELECT inner_product('{1,-Infinity}', '{1,2}');
SELECT l2_norm(array_fill(0::real, ARRAY[16001]));
SELECT l2_norm('{{1},{2}}');

-- error codes
\set VERBOSITY sqlstate
SELECT l2_distance('{1,2}', '{1,2,3}');
SELECT l2_distance('{1,NULL}', '{1,2}');
SELECT l2_distance('{1,NaN}', '{1,2}');
SELECT l2_distance('{1,2}', '{1,-Infinity}');
SELECT l2_distance('{{1,2},{3,4}}', '{{1,2},{3,4}}');
SELECT l2_norm('{}');
SELECT l2_norm(array_fill(1::real, ARRAY[16001]));
\set VERBOSITY default

#!/bin/sh
# clusters.sh: well-separated clusters stored cluster after cluster.
# 100 centres uniform in [0,1]^128, 30,000 rows (row i in cluster i % 100:
# its centre plus uniform noise of width 0.1 per coordinate), stored in
# cluster order; 100 queries of the same kind and their exact top 10.
# Prints for a segvec index (quantization none, then sq8): the rows of
# every tenth id that a search for their own vector does not return first
# (and the clusters that miss most), recall@10, the queries that found
# none of their top 10 and buffer accesses per query at ef_search 10, 40,
# 80 and 200; then the same for pgvector's HNSW (m 16, ef_construction 64)
# on the same rows in the same order, when the server has pgvector.
# Usage: PGPORT=... PGHOST=... sh test/bench/clusters.sh  (as a superuser)
set -e
psql -qX -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
DROP TABLE IF EXISTS cl_centre, cl_items, cl_q, cl_exact;
SELECT setseed(0.42);
CREATE TABLE cl_centre AS
  SELECT c, (SELECT array_agg(random()::real) FROM generate_series(1, 128 + c * 0)) AS v
  FROM generate_series(0, 99) c;
CREATE FUNCTION pg_temp.cvec(c int) RETURNS real[] VOLATILE LANGUAGE sql AS $$
  SELECT array_agg((x + (random() - 0.5) * 0.1)::real ORDER BY o)
  FROM unnest((SELECT v FROM cl_centre WHERE cl_centre.c = cvec.c)) WITH ORDINALITY u(x, o) $$;
CREATE TABLE cl_items (id int PRIMARY KEY, v real[]);
ALTER TABLE cl_items ALTER v SET STORAGE PLAIN;
INSERT INTO cl_items SELECT i, pg_temp.cvec(i % 100)
  FROM generate_series(1, 30000) i ORDER BY i % 100, i;
CREATE TABLE cl_q AS SELECT i AS qid, pg_temp.cvec((i * 7) % 100) AS v
  FROM generate_series(1, 100) i;
CREATE TABLE cl_exact AS
  SELECT qid, ARRAY(SELECT id FROM cl_items ORDER BY cl_items.v <-> cl_q.v, id LIMIT 10) AS ids
  FROM cl_q;
SQL

measure() {
	# $1: table, $2: GUC of ef_search, $3: label
	psql -qX -At -v ON_ERROR_STOP=1 <<SQL
CREATE FUNCTION pg_temp.bufs(q text) RETURNS bigint LANGUAGE plpgsql AS \$f\$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM $1 ORDER BY v <-> ' || q || ' LIMIT 10' INTO j;
  RETURN (j->0->'Plan'->>'Shared Hit Blocks')::bigint + (j->0->'Plan'->>'Shared Read Blocks')::bigint;
END \$f\$;
SET enable_seqscan = off;
SET $2 = 40;
SELECT '$3 ef 40: self-lookups missed ' || count(*) FILTER (WHERE m) || ' of ' || count(*)
  || ', worst clusters ' || (SELECT string_agg(c || ':' || n, ' ') FROM (
       SELECT a.id % 100 AS c, count(*) AS n FROM $1 a WHERE a.id % 10 = 3
         AND (SELECT b.id FROM $1 b ORDER BY b.v <-> a.v LIMIT 1) <> a.id
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 4) w)
FROM (SELECT (SELECT b.id FROM $1 b ORDER BY b.v <-> a.v LIMIT 1) <> a.id AS m
      FROM $1 a WHERE a.id % 10 = 3) s;
SQL
	for ef in 10 40 80 200; do
		psql -qX -At -v ON_ERROR_STOP=1 <<SQL
CREATE FUNCTION pg_temp.bufs(q text) RETURNS bigint LANGUAGE plpgsql AS \$f\$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM $1 ORDER BY v <-> ' || q || ' LIMIT 10' INTO j;
  RETURN (j->0->'Plan'->>'Shared Hit Blocks')::bigint + (j->0->'Plan'->>'Shared Read Blocks')::bigint;
END \$f\$;
SET enable_seqscan = off;
SET $2 = $ef;
SELECT '$3 ef $ef: recall@10 ' || round(avg(h) / 10, 3) || ', queries with none '
  || count(*) FILTER (WHERE h = 0) || ', buffers/query ' || round(avg(b))
FROM (SELECT (SELECT count(*) FROM unnest(e.ids) x WHERE x = ANY (ARRAY(
               SELECT id FROM $1 i ORDER BY i.v <-> q.v LIMIT 10))) AS h,
             pg_temp.bufs(quote_literal(q.v::text) || '::' || pg_typeof(q.v)::text) AS b
      FROM cl_q q JOIN cl_exact e USING (qid)) s;
SQL
	done
}

for quant in none sq8; do
	psql -qX -v ON_ERROR_STOP=1 -c "DROP INDEX IF EXISTS cl_items_v" \
		-c "SET maintenance_work_mem = '512MB'" \
		-c "CREATE INDEX cl_items_v ON cl_items USING segvec (v) WITH (quantization = '$quant')"
	measure cl_items segvec.ef_search "segvec $quant"
done

if psql -qX -At -c "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'" | grep -q 1; then
	psql -qX -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
DROP TABLE IF EXISTS cl_items_pgv, cl_q_pgv;
CREATE TABLE cl_items_pgv AS SELECT id, v::vector(128) AS v FROM cl_items ORDER BY id % 100, id;
SET maintenance_work_mem = '512MB';
CREATE INDEX ON cl_items_pgv USING hnsw (v vector_l2_ops) WITH (m = 16, ef_construction = 64);
SQL
	# the queries as vectors, under the names measure() reads
	psql -qX -v ON_ERROR_STOP=1 -c "ALTER TABLE cl_q RENAME TO cl_q_real" \
		-c "CREATE TABLE cl_q AS SELECT qid, v::vector(128) AS v FROM cl_q_real"
	measure cl_items_pgv hnsw.ef_search "pgvector hnsw"
	psql -qX -v ON_ERROR_STOP=1 -c "DROP TABLE cl_q" -c "ALTER TABLE cl_q_real RENAME TO cl_q"
fi

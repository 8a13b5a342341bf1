#!/bin/sh
# order.sh: recall@10 and buffer accesses per query of segvec.scan_order
# strict against relaxed on 20,000 Fashion-MNIST docs (one CREATE INDEX),
# 100 test queries, LIMIT 10, ef_search 10/20/40.
# Usage: PGPORT=... PGHOST=... sh test/bench/order.sh  (as a superuser)
set -e
cd "$(dirname "$0")/../.."
N=${N:-20000}
Q=${Q:-100}
if [ -z "$SKIP_LOAD" ]; then
psql -qX -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION IF NOT EXISTS segvec;
DROP TABLE IF EXISTS ob_items, ob_q, ob_truth;
CREATE TABLE ob_items (id int PRIMARY KEY, embedding real[]);
ALTER TABLE ob_items ALTER embedding SET STORAGE PLAIN;
CREATE TABLE ob_q (id int PRIMARY KEY, embedding real[]);
SQL
/usr/bin/python3 test/fmnist.py train "$N" | psql -qX -c "COPY ob_items FROM STDIN"
/usr/bin/python3 test/fmnist.py test "$Q" | psql -qX -c "COPY ob_q FROM STDIN"
psql -qX -v ON_ERROR_STOP=1 <<'SQL'
SET maintenance_work_mem = '256MB';
CREATE INDEX ob_idx ON ob_items USING segvec (embedding) WITH (compact_threshold = 0);
SET enable_indexscan = off;
CREATE TABLE ob_truth AS
  SELECT q.id AS qid, ARRAY(SELECT i.id FROM ob_items i
         ORDER BY i.embedding <-> q.embedding, i.id LIMIT 10) AS ids FROM ob_q q;
RESET enable_indexscan;
SQL
fi
for ef in 10 20 40; do
  for ord in strict relaxed; do
    psql -qX -At -v ON_ERROR_STOP=1 <<SQL
CREATE FUNCTION pg_temp.bufs(q real[]) RETURNS bigint LANGUAGE plpgsql AS \$f\$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM ob_items ORDER BY embedding <-> \$1 LIMIT 10'
    INTO j USING q;
  RETURN (j->0->'Plan'->>'Shared Hit Blocks')::bigint + (j->0->'Plan'->>'Shared Read Blocks')::bigint;
END \$f\$;
SET enable_seqscan = off;
SET segvec.ef_search = $ef;
SET segvec.scan_order = $ord;
SELECT 'ef $ef $ord: recall@10 ' ||
       round(avg((SELECT count(*) FROM unnest(ARRAY(SELECT i.id FROM ob_items i
             ORDER BY i.embedding <-> q.embedding LIMIT 10)) x WHERE x = ANY (t.ids)) / 10.0), 4) ||
       ', buffers/query ' || round(avg(pg_temp.bufs(q.embedding)))
FROM ob_q q JOIN ob_truth t ON t.qid = q.id;
SQL
  done
done

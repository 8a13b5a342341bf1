#!/usr/bin/env bash
# filter.sh: filtered top-10 queries at several selectivities, with the
# filter column in the segvec index (a filter column), against filtering
# after a segvec index on the vector alone, a btree on the filter column
# plus an exact sort, and no filter at all.
#
# Runs against the server the libpq environment points at (as a user that
# may create databases).  Fashion-MNIST's first BENCH_FILTER_ROWS (60,000)
# training images, each with sel, a hash of its id in 0 .. 9,999
# (independent of the image), and brank, its brightness rank in 0 .. 9,999
# (correlated with it: the queries, BENCH_FILTER_QUERIES (100) test images,
# are dark or bright); the filters sel < N and brank >= 10,000 - N keep
# 50%, 10%, 1% and 0.1% of the rows.  Prints per method and filter:
# recall@10 against the exact filtered answer, the rows returned per query
# and milliseconds per query (wall clock of a loop in one backend, after a
# warm-up pass; one run), and the backend's CPU milliseconds per query over
# the same loop (/proc/self/schedstat, read by the backend: so the bench
# runs as a superuser), which a busy machine disturbs much less.
#
# BENCH_FILTER_METHODS ("a b d") picks the methods: a, b and d above.
#
# Needs dataset-fashion-mnist (test/fmnist.py reads it).
set -euo pipefail

rows=${BENCH_FILTER_ROWS:-60000}
nq=${BENCH_FILTER_QUERIES:-100}
methods=" ${BENCH_FILTER_METHODS:-a b d} "
db=${BENCH_FILTER_DB:-segvec_bench_filter}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fmnist="$here/../fmnist.py"

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
p() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

p -c 'CREATE EXTENSION segvec' \
  -c 'CREATE TABLE stage (id int PRIMARY KEY, embedding real[])' \
  -c 'CREATE TABLE q (qid int PRIMARY KEY, v real[])' \
  -c 'ALTER TABLE q ALTER v SET STORAGE PLAIN'
python3 "$fmnist" train "$rows" | p -c 'COPY stage FROM STDIN'
python3 "$fmnist" test "$nq" | p -c 'COPY q FROM STDIN'
p <<'SQL'
CREATE TABLE items (id int PRIMARY KEY, embedding real[], sel int, brank int)
    WITH (autovacuum_enabled = off);
ALTER TABLE items ALTER embedding SET STORAGE PLAIN;
INSERT INTO items
SELECT id, embedding, ((hashint4(id)::int8 % 10000) + 10000) % 10000,
       floor(10000 * percent_rank() OVER (
           ORDER BY (SELECT sum(x) FROM unnest(embedding) x), id))::int
FROM stage;
CREATE TABLE conds (cond text, what text);
INSERT INTO conds VALUES ('true', 'none'),
    ('sel < 5000', '50% independent'), ('sel < 1000', '10% independent'),
    ('sel < 100', '1% independent'), ('sel < 10', '0.1% independent'),
    ('brank >= 5000', '50% brightness'), ('brank >= 9000', '10% brightness'),
    ('brank >= 9900', '1% brightness'), ('brank >= 9990', '0.1% brightness');
VACUUM ANALYZE items;
SQL

# the exact filtered answers
p <<'SQL'
SET enable_indexscan = off;
CREATE TABLE truth (cond text, qid int, ids int[]);
DO $$
DECLARE
  c record;
  r record;
  ids int[];
BEGIN
  FOR c IN SELECT cond FROM conds LOOP
    FOR r IN SELECT qid, v FROM q LOOP
      EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM items WHERE %s
                      ORDER BY embedding <-> $1, id LIMIT 10) s', c.cond)
        INTO ids USING r.v;
      INSERT INTO truth VALUES (c.cond, r.qid, ids);
    END LOOP;
  END LOOP;
END
$$;
SQL

# run(method, settings): every filter, recall@10, rows and ms a query
run() {
	local method=$1 settings=$2
	p <<SQL
SET jit = off;
$settings
CREATE TEMP TABLE got (cond text, qid int, ids int[]);
CREATE TEMP TABLE times (cond text, ms float8, cpu_ms float8);
DO \$\$
DECLARE
  c record;
  r record;
  ids int[];
  t0 timestamptz;
  c0 float8;
  pass int;
BEGIN
  FOR c IN SELECT cond FROM conds LOOP
    FOR pass IN 1..2 LOOP      -- a warm-up pass, then the timed one
      t0 := clock_timestamp();
      c0 := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8;
      FOR r IN SELECT qid, v FROM q ORDER BY qid LOOP
        EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM items WHERE %s
                        ORDER BY embedding <-> \$1 LIMIT 10) s', c.cond)
          INTO ids USING r.v;
        IF pass = 2 THEN
          INSERT INTO got VALUES (c.cond, r.qid, ids);
        END IF;
      END LOOP;
    END LOOP;
    INSERT INTO times VALUES (c.cond,
      extract(epoch FROM clock_timestamp() - t0) * 1000 / (SELECT count(*) FROM q),
      (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8 - c0)
        / 1e6 / (SELECT count(*) FROM q));
  END LOOP;
END
\$\$;
SELECT '$method' AS method, c.what,
       round(avg((SELECT count(*) FROM unnest(g.ids) i WHERE i = ANY (t.ids))::numeric
                 / greatest(cardinality(t.ids), 1)), 3) AS recall,
       round(avg(coalesce(cardinality(g.ids), 0)), 1) AS rows,
       round(min(tm.ms)::numeric, 2) AS ms,
       round(min(tm.cpu_ms)::numeric, 3) AS cpu_ms
FROM conds c JOIN truth t ON t.cond = c.cond
  JOIN got g ON g.cond = t.cond AND g.qid = t.qid
  JOIN times tm ON tm.cond = c.cond
GROUP BY c.cond, c.what ORDER BY min(c.ctid);
SQL
}

# (a) the filter columns in the segvec index
if [[ $methods == *" a "* ]]; then
	p -c 'CREATE INDEX items_filter ON items USING segvec (embedding, sel, brank) INCLUDE (id)'
	run 'segvec, filter columns' 'SET enable_seqscan = off; SET enable_sort = off;'
	p -c 'DROP INDEX items_filter'
fi

# (b) segvec on the vector alone, the filter after it
if [[ $methods == *" b "* ]]; then
	p -c 'CREATE INDEX items_plain ON items USING segvec (embedding) INCLUDE (id)'
	run 'segvec, filter after' 'SET enable_seqscan = off; SET enable_sort = off; SET segvec.max_scan_tuples = 1000000;'
	p -c 'DROP INDEX items_plain'
fi

# (d) a btree on each filter column and an exact sort
if [[ $methods == *" d "* ]]; then
	p -c 'CREATE INDEX items_sel ON items (sel)' -c 'CREATE INDEX items_brank ON items (brank)'
	run 'btree and sort' 'SET enable_seqscan = off;'
fi

#!/usr/bin/env bash
# filter.sh: filtered top-10 queries at several selectivities, with the
# filter columns in the segvec index, against filtering after a segvec
# index on the vector alone, pgvector's HNSW with iterative scans, a btree
# (or GIN) on the filter column plus an exact sort, and no filter at all.
#
# Runs against the server the libpq environment points at, as a superuser
# (the backend reads its own /proc/self/schedstat), e.g. as root:
#   runuser -u postgres -- pg_virtualenv -o shared_buffers=1GB \
#       bash test/bench/filter.sh
# with segvec (and pgvector, for method c) installed into that server.
#
# The data: Fashion-MNIST's first BENCH_FILTER_ROWS (60,000) training
# images; the queries: BENCH_FILTER_QUERIES (100) test images.  Each row
# has, all independent of the image unless said:
#   sel        a hash of its id in 0 .. 9,999: sel < N keeps N / 100 %
#   brank      its brightness rank in 0 .. 9,999, correlated with the image
#              (the queries are dark or bright): brank >= 10,000 - N
#   tenant_id  1 .. 1,000, Zipf-sized (tenant k holds a share 1 / (k H),
#              H = 1 + 1/2 + ... + 1/1000: tenant 1 13%, tenant 1,000
#              0.013%), drawn from a hash of the id
#   labels     int4[], the distinct values of 3 draws from 1 .. 10,000,
#              each log-uniform (label k drawn with probability
#              ln(1 + 1/k) / ln 10,001): label 1 in 21% of the rows,
#              label 3,000 in about 0.01%
# BENCH_FILTER_COLUMNS ("sel brank tenant labels") picks the filters: for
# sel and brank 50%, 10%, 1% and 0.1%; for tenant and labels the target
# shares 50%, 10%, 1%, 0.1% and 0.01% (a target only when at least 5 rows
# would pass it), each met by the one tenant (tenant_id = k) or label
# (labels && '{k}') whose row count is nearest the target, or, when that
# is more than 1.5 times nearer, by the largest tenants (tenant_id <= k) or
# the commonest labels (labels && '{1,...,k}'); the rows print the share
# that passes.
#
# The segvec and HNSW indexes are built with maintenance_work_mem
# BENCH_FILTER_BUILD_MEM (1GB: each build in memory, so segvec's is one
# graph segment).  BENCH_FILTER_METHODS ("a b c d") picks the methods:
#   a  segvec with the filter columns in the index (embedding, ...) INCLUDE (id)
#   b  segvec on the vector alone, the filter after the index, with
#      segvec.max_scan_tuples raised to 1,000,000 so that it does not stop
#      short
#   c  pgvector's HNSW (m 16, ef_construction 64, hnsw.ef_search 40) with
#      hnsw.iterative_scan strict_order and relaxed_order, at pgvector's
#      hnsw.max_scan_tuples (20,000) and, with BENCH_FILTER_HNSW_MAX_SCAN=N,
#      relaxed_order once more at N; skipped when the server has no pgvector
#   d  a btree on each integer filter column (GIN on labels) and an exact
#      sort
#
# Prints per method and filter: recall@10 against the exact filtered
# answer; the rows returned per query, and in how many queries fewer than
# min(10, passing rows) (short); milliseconds per query (wall clock of a
# loop in one backend, after a warm-up pass, the queries repeated until
# BENCH_FILTER_MIN_MS (1,000) ms have passed; one run), and the backend's
# CPU milliseconds per query over the same loop (/proc/self/schedstat),
# which a busy machine disturbs much less.  Each query is planned anew
# (EXECUTE of the query text in PL/pgSQL); with BENCH_FILTER_PREPARED=1 it
# is a prepared statement instead (the query with the filter's constant
# and the vector as its parameter, in a PL/pgSQL function: PostgreSQL's
# plan cache plans its first five executions for their parameter and may
# then keep a generic plan, as with pgbench -M prepared).  At the end, per
# filter: (a)'s queries per CPU second, their ratio to (a)'s unfiltered
# ones, and to the best (the least CPU) of b, c and d.
#
# Needs dataset-fashion-mnist (test/fmnist.py reads it).
set -euo pipefail

rows=${BENCH_FILTER_ROWS:-60000}
nq=${BENCH_FILTER_QUERIES:-100}
methods=" ${BENCH_FILTER_METHODS:-a b c d} "
columns=" ${BENCH_FILTER_COLUMNS:-sel brank tenant labels} "
hnsw_max_scan=${BENCH_FILTER_HNSW_MAX_SCAN:-}
min_ms=${BENCH_FILTER_MIN_MS:-1000}
prepared=${BENCH_FILTER_PREPARED:-}
build_mem=${BENCH_FILTER_BUILD_MEM:-1GB}
db=${BENCH_FILTER_DB:-segvec_bench_filter}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fmnist="$here/../fmnist.py"

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
p() { psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
val() { p -At -c "$1"; }

p -c 'CREATE EXTENSION segvec' \
  -c 'CREATE TABLE stage (id int PRIMARY KEY, embedding real[])' \
  -c 'CREATE TABLE q (qid int PRIMARY KEY, v real[])' \
  -c 'ALTER TABLE q ALTER v SET STORAGE PLAIN'
python3 "$fmnist" train "$rows" | p -c 'COPY stage FROM STDIN'
python3 "$fmnist" test "$nq" | p -c 'COPY q FROM STDIN'
p <<'SQL'
CREATE TABLE items (id int PRIMARY KEY, embedding real[], sel int, brank int,
                    tenant_id int, labels int4[])
    WITH (autovacuum_enabled = off);
ALTER TABLE items ALTER embedding SET STORAGE PLAIN;
-- a uniform draw in [0, 1) from a hash of the id, one per seed
CREATE FUNCTION draw(id int, seed int8) RETURNS float8
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT (hashint4extended(id, seed) & 4503599627370495)::float8
                 / 4503599627370496 $$;
INSERT INTO items
SELECT id, embedding, ((hashint4(id)::int8 % 10000) + 10000) % 10000,
       floor(10000 * percent_rank() OVER (
           ORDER BY (SELECT sum(x) FROM unnest(embedding) x), id))::int,
       1 + width_bucket(draw(id, 1), z.bounds),
       ARRAY(SELECT DISTINCT floor(exp(draw(id, 1 + d) * ln(10001)))::int
             FROM generate_series(1, 3) d ORDER BY 1)
FROM stage,
     -- the upper bounds of tenants 1 .. 999's shares, cumulated
     (SELECT array_agg(c ORDER BY k) AS bounds
      FROM (SELECT k, (sum(1.0 / k) OVER (ORDER BY k)
                       / sum(1.0 / k) OVER ())::float8 AS c
            FROM generate_series(1, 1000) k) s
      WHERE k < 1000) z;
CREATE TABLE conds (cond text, what text, passing int);
INSERT INTO conds VALUES ('true', 'none');
SQL

if [[ $columns == *" sel "* ]]; then
	p -c "INSERT INTO conds VALUES
	('sel < 5000', '50% independent'), ('sel < 1000', '10% independent'),
	('sel < 100', '1% independent'), ('sel < 10', '0.1% independent')"
fi
if [[ $columns == *" brank "* ]]; then
	p -c "INSERT INTO conds VALUES
	('brank >= 5000', '50% brightness'), ('brank >= 9000', '10% brightness'),
	('brank >= 9900', '1% brightness'), ('brank >= 9990', '0.1% brightness')"
fi
# pick(name, counts of single values, counts of sets): per target share the
# single value, or the set, whose count is nearest it (counts: v, cond, c)
pick() {
	p <<SQL
WITH n AS (SELECT count(*)::float8 AS n FROM items),
targets (t, label) AS (VALUES (0.5, '50%'), (0.1, '10%'), (0.01, '1%'),
                               (0.001, '0.1%'), (0.0001, '0.01%')),
single AS ($2),
sets AS ($3),
candidates AS (
    SELECT t, label, cond, c, abs(ln(c / (t * n))) AS off, v
    FROM targets, n, single WHERE c > 0 AND t * n >= 5
    UNION ALL
    SELECT t, label, cond, c, abs(ln(c / (t * n))) + ln(1.5), v
    FROM targets, n, sets WHERE c > 0 AND t * n >= 5)
INSERT INTO conds
SELECT cond, format('%s %s (%s%%)', label, '$1', round((100 * c / n)::numeric, 3)), c
FROM (SELECT DISTINCT ON (cond) *    -- two targets may pick the same
      FROM (SELECT DISTINCT ON (t) * FROM candidates ORDER BY t DESC, off, v) x
      ORDER BY cond, t DESC) y, n
ORDER BY t DESC;
SQL
}
if [[ $columns == *" tenant "* ]]; then
	pick tenant \
		"SELECT tenant_id AS v, format('tenant_id = %s', tenant_id) AS cond,
		        count(*)::float8 AS c FROM items GROUP BY tenant_id" \
		"SELECT tenant_id AS v, format('tenant_id <= %s', tenant_id) AS cond,
		        (sum(count(*)) OVER (ORDER BY tenant_id))::float8 AS c
		 FROM items GROUP BY tenant_id"
fi
if [[ $columns == *" labels "* ]]; then
	pick labels \
		"SELECT l AS v, format('labels && ''{%s}''', l) AS cond,
		        count(*)::float8 AS c FROM items, unnest(labels) l GROUP BY l" \
		"SELECT k AS v, format('labels && ''{%s}''', array_to_string(ARRAY(SELECT generate_series(1, k)), ',')) AS cond,
		        (SELECT count(*) FROM items WHERE labels && ARRAY(SELECT generate_series(1, k)))::float8 AS c
		 FROM generate_series(2, 30) k"
fi
p -c 'VACUUM ANALYZE items'

# the exact filtered answers, and the rows that pass each filter
p <<'SQL'
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE truth (cond text, qid int, ids int[]);
DO $$
DECLARE
  c record;
  r record;
  ids int[];
  n int;
BEGIN
  FOR c IN SELECT cond FROM conds LOOP
    EXECUTE format('SELECT count(*) FROM items WHERE %s', c.cond) INTO n;
    UPDATE conds SET passing = n WHERE cond = c.cond;
    FOR r IN SELECT qid, v FROM q LOOP
      EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM items WHERE %s
                      ORDER BY embedding <-> $1, id LIMIT 10) s', c.cond)
        INTO ids USING r.v;
      INSERT INTO truth VALUES (c.cond, r.qid, ids);
    END LOOP;
  END LOOP;
END
$$;
CREATE TABLE results (key text, method text, what text, passing int,
                      recall numeric, rows numeric, short int,
                      ms numeric, cpu_ms numeric);
SELECT what, cond, passing FROM conds ORDER BY ctid;
SQL

# run(key, method, settings[, table, cast]): every filter, recall@10, rows
# and ms a query, on table (items) with the query vector cast (none)
run() {
	local key=$1 method=$2 settings=$3 table=${4:-items} cast=${5:-}
	local query="SELECT array_agg(id) FROM (SELECT id FROM $table WHERE %s
                          ORDER BY embedding <-> \$1$cast LIMIT 10) s"
	# prepare: per filter, before its loop; one: a query
	local prepare="" one="EXECUTE format('$query', c.cond) INTO ids USING r.v;"
	if [ -n "$prepared" ]; then
		prepare="EXECUTE format('CREATE OR REPLACE FUNCTION pg_temp.bench_query(real[])
          RETURNS int[] LANGUAGE plpgsql AS %L',
          format('BEGIN RETURN ($query); END', c.cond));"
		one="ids := pg_temp.bench_query(r.v);"
	fi
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
  reps int;
BEGIN
  FOR c IN SELECT cond FROM conds LOOP
    $prepare
    -- a warm-up pass, then the timed one, its queries repeated until
    -- $min_ms ms have passed (the kernel adds a running backend's CPU time
    -- to schedstat only at scheduler ticks)
    FOR pass IN 1..2 LOOP
      t0 := clock_timestamp();
      c0 := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8;
      reps := 0;
      LOOP
        FOR r IN SELECT qid, v FROM q ORDER BY qid LOOP
          $one
          IF pass = 2 AND reps = 0 THEN
            INSERT INTO got VALUES (c.cond, r.qid, ids);
          END IF;
        END LOOP;
        reps := reps + 1;
        EXIT WHEN pass = 1
          OR clock_timestamp() - t0 >= $min_ms * interval '1 millisecond';
      END LOOP;
    END LOOP;
    INSERT INTO times VALUES (c.cond,
      extract(epoch FROM clock_timestamp() - t0) * 1000
        / (reps * (SELECT count(*) FROM q)),
      (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8 - c0)
        / 1e6 / (reps * (SELECT count(*) FROM q)));
  END LOOP;
END
\$\$;
INSERT INTO results
SELECT '$key', '$method', c.what, min(c.passing),
       round(avg((SELECT count(*) FROM unnest(g.ids) i WHERE i = ANY (t.ids))::numeric
                 / greatest(cardinality(t.ids), 1)), 3),
       round(avg(coalesce(cardinality(g.ids), 0)), 1),
       count(*) FILTER (WHERE coalesce(cardinality(g.ids), 0)
                              < coalesce(cardinality(t.ids), 0)),
       round(min(tm.ms)::numeric, 2),
       round(min(tm.cpu_ms)::numeric, 3)
FROM conds c JOIN truth t ON t.cond = c.cond
  JOIN got g ON g.cond = t.cond AND g.qid = t.qid
  JOIN times tm ON tm.cond = c.cond
GROUP BY c.cond, c.what ORDER BY min(c.ctid);
SELECT method, what, recall, rows, short, ms, cpu_ms
FROM results WHERE key = '$key' ORDER BY ctid;
SQL
}

# the filter columns of (a)'s index
fcols=
for c in sel brank tenant labels; do
	[[ $columns == *" $c "* ]] || continue
	[ "$c" = tenant ] && c=tenant_id
	fcols+=", $c"
done

# (a) the filter columns in the segvec index
if [[ $methods == *" a "* ]]; then
	p -c "SET maintenance_work_mem = '$build_mem'" \
	  -c "CREATE INDEX items_filter ON items USING segvec (embedding$fcols) INCLUDE (id)"
	p -c "SELECT num_docs, mutable_docs, num_segments, index_bytes FROM ft.info('items_filter')"
	run a 'segvec, filter columns' 'SET enable_seqscan = off; SET enable_sort = off;'
	p -c 'DROP INDEX items_filter'
fi

# (b) segvec on the vector alone, the filter after it
if [[ $methods == *" b "* ]]; then
	p -c "SET maintenance_work_mem = '$build_mem'" \
	  -c 'CREATE INDEX items_plain ON items USING segvec (embedding) INCLUDE (id)'
	p -c "SELECT num_docs, mutable_docs, num_segments, index_bytes FROM ft.info('items_plain')"
	run b 'segvec, filter after' 'SET enable_seqscan = off; SET enable_sort = off; SET segvec.max_scan_tuples = 1000000;'
	p -c 'DROP INDEX items_plain'
fi

# (c) pgvector's HNSW with iterative scans, on a copy with a vector column
if [[ $methods == *" c "* ]]; then
	if [ "$(val "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" = 1 ]; then
		dim=$(val 'SELECT array_length(embedding, 1) FROM items LIMIT 1')
		p -c 'CREATE EXTENSION IF NOT EXISTS vector' \
		  -c "CREATE TABLE pgv WITH (autovacuum_enabled = off) AS
		      SELECT id, embedding::vector($dim) AS embedding, sel, brank, tenant_id, labels
		      FROM items" \
		  -c 'VACUUM ANALYZE pgv' \
		  -c "SET maintenance_work_mem = '$build_mem'" \
		  -c 'CREATE INDEX pgv_hnsw ON pgv USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)'
		echo "pgvector $(val "SELECT extversion FROM pg_extension WHERE extname = 'vector'")"
		run c-strict 'pgvector HNSW, strict_order' 'SET enable_seqscan = off; SET hnsw.iterative_scan = strict_order;' pgv ::vector
		run c-relaxed 'pgvector HNSW, relaxed_order' 'SET enable_seqscan = off; SET hnsw.iterative_scan = relaxed_order;' pgv ::vector
		if [ -n "$hnsw_max_scan" ]; then
			run c-relaxed-max "pgvector HNSW, relaxed_order, max_scan_tuples $hnsw_max_scan" \
				"SET enable_seqscan = off; SET hnsw.iterative_scan = relaxed_order; SET hnsw.max_scan_tuples = $hnsw_max_scan; SET hnsw.scan_mem_multiplier = 8;" pgv ::vector
		fi
		p -c 'DROP TABLE pgv'
	else
		echo "(c) pgvector HNSW: skipped, the server has no pgvector (extension vector)"
	fi
fi

# (d) a btree on each integer filter column (GIN on labels) and an exact sort
if [[ $methods == *" d "* ]]; then
	for c in sel brank tenant labels; do
		[[ $columns == *" $c "* ]] || continue
		case $c in
			tenant) p -c 'CREATE INDEX items_tenant ON items (tenant_id)' ;;
			labels) p -c 'CREATE INDEX items_labels ON items USING gin (labels)' ;;
			*) p -c "CREATE INDEX items_$c ON items ($c)" ;;
		esac
	done
	run d 'btree and sort' 'SET enable_seqscan = off;'
fi

# per filter: (a)'s queries per CPU second against its unfiltered ones and
# against the best of the others
p <<'SQL'
SELECT a.what, a.passing, a.recall, round(1000 / nullif(a.cpu_ms, 0)) AS a_qps,
       round(u.cpu_ms / nullif(a.cpu_ms, 0), 2) AS vs_unfiltered,
       o.key AS best_other, round(1000 / nullif(o.cpu_ms, 0)) AS other_qps,
       o.recall AS other_recall, round(o.cpu_ms / nullif(a.cpu_ms, 0), 2) AS vs_best_other
FROM results a
  JOIN results u ON u.key = 'a' AND u.what = 'none'
  LEFT JOIN LATERAL (SELECT * FROM results o
                     WHERE o.key <> 'a' AND o.what = a.what
                     ORDER BY o.cpu_ms LIMIT 1) o ON true
WHERE a.key = 'a' ORDER BY a.ctid;
SQL

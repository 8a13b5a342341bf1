#!/bin/bash
# build.sh: graph build speed, two segvec builds against each other and
# against pgvector's serial HNSW build, in one interleaved run.
#
# Usage: test/bench/build.sh PSQL-ARGS-A -- PSQL-ARGS-B
#   e.g. test/bench/build.sh -h /tmp/a -p 5461 -- -h /tmp/b -p 5462
# Two servers on this machine, each started with the segvec.so to measure
# (a running server keeps the module it loaded), both with segvec and
# pgvector ("vector") created in the database named, and a table
#   fm (id int PRIMARY KEY, embedding real[])
# holding the Fashion-MNIST training images (test/fmnist.py train ROWS),
# plus fmv (id int, embedding vector(784)) with the same rows for pgvector.
#
# For ROUNDS rounds (2), taking turns A, B, pgvector (on A): CREATE INDEX
# with m 16, ef_construction 64, maintenance_work_mem MWM (1GB),
# max_parallel_maintenance_workers 0; prints the wall clock, the backend's
# CPU time (utime + stime from /proc/self/stat: on a busy machine the waits
# for a CPU swamp the wall clock) and its peak RSS (VmHWM).  Then checks
# that A and B wrote the same index (md5 of every page but the metapage,
# page headers left out: they hold LSNs), and times one ft.compact of
# COMPACT_ROWS (10,000) rows in each, the same way.
#
# Parallel builds: test/bench/build.sh --parallel PSQL-ARGS (one server,
# same tables, plus fmq (id int, embedding real[]) holding test images
# (test/fmnist.py test 200) for recall).  For ROUNDS rounds, taking turns:
# segvec with max_parallel_maintenance_workers 0, 1, 2 and pgvector with
# 0 and 2; prints wall clock, CPU time of the leader and of all (the
# leader plus the workers, which the postmaster reaped: its cutime +
# cstime), the leader's peak RSS (the DSM segment's pages it touched
# included), and after the last round the recall@10 of each index at
# ef_search 20 and 40 over the fmq queries (exact answer by a seq scan).
set -e
if [ "$1" = --parallel ]; then
	shift
	A=("$@")
	ROUNDS=${ROUNDS:-3}
	MWM=${MWM:-1GB}
	stat_sql="split_part(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ', 12)::int + split_part(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ', 13)::int"
	pm="'/proc/' || split_part(pg_read_file('postmaster.pid'), E'\\n', 1) || '/stat'"
	pm_sql="split_part(split_part(pg_read_file($pm), ') ', 2), ' ', 14)::int + split_part(split_part(pg_read_file($pm), ') ', 2), ' ', 15)::int"
	ptimed() {
		psql -X -q -At "${A[@]}" <<SQL | tail -1
SET maintenance_work_mem = '$MWM';
SET max_parallel_maintenance_workers = $2;
SET min_parallel_table_scan_size = 0;
$3
CREATE TEMP TABLE t0 AS SELECT clock_timestamp() AS t, $stat_sql AS c, $pm_sql AS w;
$1;
SELECT round(extract(epoch FROM clock_timestamp() - t)::numeric, 2) || '|' ||
	round((($stat_sql) - c) / 100.0, 2) || '|' ||
	round((($stat_sql) - c + ($pm_sql) - w) / 100.0, 2) || '|' ||
	round((regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]::numeric / 1024)
FROM t0;
SQL
	}
	recall() {
		psql -X -q -At "${A[@]}" <<SQL | tail -1
SET enable_seqscan = off;
SET $2 = $3;
SELECT round(sum((SELECT count(*) FROM (SELECT t.embedding <-> q.embedding$4 AS d
	FROM $1 t ORDER BY t.embedding <-> q.embedding$4 LIMIT 10) s
	WHERE s.d <= tr.d10 * (1 + 1e-6)))::numeric / (10 * count(*)), 4)
FROM fmq q JOIN pb_truth tr ON tr.qid = q.id;
SQL
	}
	psql -X -q -At "${A[@]}" <<SQL
SET enable_indexscan = off;
SET enable_bitmapscan = off;
DROP INDEX IF EXISTS fm_idx;
DROP INDEX IF EXISTS fmv_idx;
DROP TABLE IF EXISTS pb_truth;
CREATE TABLE pb_truth AS SELECT q.id AS qid, (SELECT max(d) FROM
	(SELECT t.embedding <-> q.embedding AS d FROM fm t ORDER BY 1 LIMIT 10) s) AS d10
	FROM fmq q;
SQL
	seg="CREATE INDEX fm_idx ON fm USING segvec (embedding) WITH (m = 16, ef_construction = 64)"
	pgv="CREATE INDEX fmv_idx ON fmv USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)"
	echo "what|round|wall s|leader cpu s|all cpu s|leader peak rss MB|recall@10 ef 20|ef 40"
	for r in $(seq 1 "$ROUNDS"); do
		for w in 0 1 2; do
			t=$(ptimed "$seg" $w "DROP INDEX IF EXISTS fm_idx;")
			echo "segvec $w workers|$r|$t|$(recall fm segvec.ef_search 20 '')|$(recall fm segvec.ef_search 40 '')"
		done
		psql -X -q -At "${A[@]}" -c "DROP INDEX IF EXISTS fm_idx"
		for w in 0 2; do
			t=$(ptimed "$pgv" $w "DROP INDEX IF EXISTS fmv_idx;")
			echo "pgvector $w workers|$r|$t|$(recall fmv hnsw.ef_search 20 '::vector')|$(recall fmv hnsw.ef_search 40 '::vector')"
		done
		psql -X -q -At "${A[@]}" -c "DROP INDEX IF EXISTS fmv_idx"
	done
	exit 0
fi
A=(); B=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do A+=("$1"); shift; done
shift || true
B=("$@")
ROUNDS=${ROUNDS:-2}
MWM=${MWM:-1GB}
CROWS=${COMPACT_ROWS:-10000}

stat_sql="split_part(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ', 12)::int + split_part(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ', 13)::int"

# timed SIDE SQL: wall s | cpu s | peak RSS MB of the backend running SQL
timed() {
	local -n args=$1
	psql -X -q -At "${args[@]}" <<SQL | tail -1
SET maintenance_work_mem = '$MWM';
SET max_parallel_maintenance_workers = 0;
$3
CREATE TEMP TABLE t0 AS SELECT clock_timestamp() AS t, $stat_sql AS c;
$2;
SELECT round(extract(epoch FROM clock_timestamp() - t)::numeric, 2) || '|' ||
	round((($stat_sql) - c) / 100.0, 2) || '|' ||
	round((regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]::numeric / 1024)
FROM t0;
SQL
}

seg="CREATE INDEX fm_idx ON fm USING segvec (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)"
pgv="CREATE INDEX fmv_idx ON fmv USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)"
echo "what|round|wall s|cpu s|peak rss MB"
for r in $(seq 1 "$ROUNDS"); do
	echo "segvec A|$r|$(timed A "$seg" "DROP INDEX IF EXISTS fm_idx;")"
	echo "segvec B|$r|$(timed B "$seg" "DROP INDEX IF EXISTS fm_idx;")"
	echo "pgvector|$r|$(timed A "$pgv" "DROP INDEX IF EXISTS fmv_idx;")"
done

pages="SELECT md5(string_agg(md5(substring(get_raw_page('fm_idx', i::int) from 25)), '' ORDER BY i)) FROM generate_series(1, pg_relation_size('fm_idx') / 8192 - 1) i"
ha=$(psql -X -q -At "${A[@]}" -c "CREATE EXTENSION IF NOT EXISTS pageinspect" -c "$pages")
hb=$(psql -X -q -At "${B[@]}" -c "CREATE EXTENSION IF NOT EXISTS pageinspect" -c "$pages")
[ "$ha" = "$hb" ] && echo "index pages: identical ($ha)" || echo "index pages: DIFFER ($ha / $hb)"

prep="DROP TABLE IF EXISTS fc; CREATE TABLE fc (id int PRIMARY KEY, embedding real[]) WITH (autovacuum_enabled = off); CREATE INDEX fc_idx ON fc USING segvec (embedding) WITH (compact_threshold = 1000000); INSERT INTO fc SELECT * FROM fm WHERE id <= $CROWS;"
for r in $(seq 1 "$ROUNDS"); do
	echo "compact A|$r|$(timed A "SELECT ft.compact('fc_idx')" "$prep")"
	echo "compact B|$r|$(timed B "SELECT ft.compact('fc_idx')" "$prep")"
done

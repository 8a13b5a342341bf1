#!/usr/bin/env bash
# stream.sh: the streaming benchmark of issue 11 -- does an index that lives
# through a long stream of inserts, deletes, compactions and merges stay as
# fast, as small and as good as a fresh build?
#
# As root: builds and installs segvec, then runs itself as the postgres user
# in a throwaway cluster (pg_virtualenv) with shared_preload_libraries =
# 'segvec' and every segvec setting at its default (background workers on).
# As another user it runs against the server the libpq environment points
# at, in database BENCH_STREAM_DB (default segvec_bench_stream, dropped and
# recreated).
#
# Streams BENCH_STREAM_ROWS rows (default 1,000,000) of BENCH_STREAM_DIM-dim
# (default 128) synthetic clustered vectors (BENCH_STREAM_CLUSTERS centres,
# each row a centre plus small noise) into a table with a segvec index
# INCLUDE (id), in batches of BENCH_STREAM_BATCH (1,000) single-row INSERTs,
# one transaction per batch; after every batch it deletes 10% of a batch's
# worth of older rows (so 10% of the stream is deleted along the way).
# Run it with BENCH_STREAM_DIM=784 BENCH_STREAM_ROWS=200000 for the
# Fashion-MNIST-sized part of the issue (synthetic data of that size).
#
# Prints per 10% slice: insert throughput (rows/s of the slice), segments,
# mutable docs, index size, WAL bytes per row of the slice, and the peak
# memory (VmHWM, kB) of the segvec workers seen so far (sampled at the end
# of every batch from ft.job_workers(); a worker that lives less than a
# batch is missed).  At the end (after the workers are idle and ft.compact
# drained the rest): the same rows copied into a second table and indexed
# by one CREATE INDEX; the size ratio streamed/fresh; recall@10 (against the
# exact answer) and QPS of BENCH_STREAM_QUERIES queries on both; and the
# throughput ratio last slice / first slice.
#
# Knobs: BENCH_STREAM_ROWS, BENCH_STREAM_DIM, BENCH_STREAM_BATCH,
# BENCH_STREAM_CLUSTERS (100), BENCH_STREAM_QUERIES (100),
# BENCH_SHARED_BUFFERS (1GB).
set -euo pipefail

rows=${BENCH_STREAM_ROWS:-1000000}
dim=${BENCH_STREAM_DIM:-128}
batch=${BENCH_STREAM_BATCH:-1000}
clusters=${BENCH_STREAM_CLUSTERS:-100}
queries=${BENCH_STREAM_QUERIES:-100}
sb=${BENCH_SHARED_BUFFERS:-1GB}
db=${BENCH_STREAM_DB:-segvec_bench_stream}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "$(id -u)" = 0 ] && [ "${1:-}" != --inside ]; then
	cd "$here/../.."
	make -s && make -s install
	work=$(mktemp -d /tmp/segvec-bench-stream.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	cp "$here/stream.sh" "$work/"
	chown -R postgres "$work"
	chmod 755 "$work"
	exec runuser -u postgres -- env BENCH_STREAM_ROWS="$rows" \
		BENCH_STREAM_DIM="$dim" BENCH_STREAM_BATCH="$batch" \
		BENCH_STREAM_CLUSTERS="$clusters" BENCH_STREAM_QUERIES="$queries" \
		BENCH_STREAM_DB="$db" \
		pg_virtualenv -o "shared_buffers=$sb" -o max_wal_size=8GB \
		-o shared_preload_libraries=segvec \
		bash "$work/stream.sh" --inside
fi

psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
psql -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
val() { psql -At -c "$1"; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

psql <<EOF
CREATE EXTENSION segvec;

-- the cluster centres, and a row's vector: its centre plus noise
CREATE TABLE centre AS
	SELECT c, (SELECT array_agg(random()::real) FROM generate_series(1, $dim)) AS v
	FROM generate_series(0, $clusters - 1) c;
CREATE FUNCTION rowvec(i bigint) RETURNS real[] LANGUAGE sql VOLATILE AS
	\$\$ SELECT array_agg(x + (random()::real - 0.5) * 0.1)
	     FROM unnest((SELECT v FROM centre WHERE c = i % $clusters)) x \$\$;

CREATE TABLE items (id bigint PRIMARY KEY, v real[]);
CREATE INDEX items_v ON items USING segvec (v) INCLUDE (id);

-- one batch: n single-row INSERTs from id first on, then delete a tenth of
-- that many older rows
CREATE PROCEDURE batch(first bigint, n int) LANGUAGE plpgsql AS \$\$
BEGIN
	FOR i IN first .. first + n - 1 LOOP
		INSERT INTO items VALUES (i, rowvec(i));
	END LOOP;
	DELETE FROM items WHERE id IN
		(SELECT id FROM items WHERE id < first ORDER BY random() LIMIT n / 10);
END
\$\$;

CREATE TABLE worker_peak (pid int PRIMARY KEY, hwm_kb bigint);
EOF

# peak memory of the segvec workers running now
sample_workers() {
	local pids pid hwm
	pids=$(val "SELECT pid FROM ft.job_workers() WHERE pid IS NOT NULL AND role <> 'launcher'" 2>/dev/null || true)
	for pid in $pids; do
		hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$hwm" ] && val "INSERT INTO worker_peak VALUES ($pid, $hwm)
			ON CONFLICT (pid) DO UPDATE SET hwm_kb = greatest(worker_peak.hwm_kb, excluded.hwm_kb)" >/dev/null
	done
	return 0
}

slice=$((rows / 10))
next=1
first_rate=
last_rate=
printf '%-6s %10s %9s %9s %12s %10s %12s\n' slice rows/s segments mutable index_MB WAL_B/row worker_kB
for s in $(seq 1 10); do
	t0=$(date +%s.%N)
	w0=$(val "SELECT pg_current_wal_insert_lsn()")
	end=$((s * slice))
	while [ "$next" -le "$end" ]; do
		n=$batch
		[ $((next + n - 1)) -gt "$end" ] && n=$((end - next + 1))
		val "CALL batch($next, $n)" >/dev/null
		next=$((next + n))
		sample_workers
	done
	t1=$(date +%s.%N)
	rate=$(echo "$slice / ($t1 - $t0)" | bc -l)
	[ -z "$first_rate" ] && first_rate=$rate
	last_rate=$rate
	line=$(val "SELECT i.num_segments, i.mutable_docs,
		round(pg_relation_size('items_v') / 1048576.0, 1),
		round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$w0') / $slice),
		coalesce((SELECT max(hwm_kb) FROM worker_peak), 0)
		FROM ft.info('items_v') i")
	IFS='|' read -r segs mut size walrow hwm <<<"$line"
	printf '%-6s %10.0f %9s %9s %12s %10s %12s\n' "$s" "$rate" "$segs" "$mut" "$size" "$walrow" "$hwm"
done

say "draining: waiting for idle workers, then ft.compact"
for _ in $(seq 1 600); do
	[ "$(val "SELECT count(*) FROM ft.jobs")" = 0 ] && break
	sleep 1
done
psql -c "SELECT * FROM ft.compact('items_v')" >/dev/null
psql -c "VACUUM items" >/dev/null

say "fresh build of the same rows"
psql <<EOF
CREATE TABLE fresh AS SELECT * FROM items;
ALTER TABLE fresh ADD PRIMARY KEY (id);
CREATE INDEX fresh_v ON fresh USING segvec (v) INCLUDE (id);
CREATE TABLE q AS SELECT g AS qid, rowvec(g * 7919) AS v FROM generate_series(1, $queries) g;
CREATE TABLE truth AS SELECT q.qid,
	ARRAY(SELECT id FROM items ORDER BY l2_distance(v, q.v) LIMIT 10) AS ids FROM q;
EOF

# recall@10 and QPS of one table's index
measure() {
	local tbl=$1
	psql -At <<EOF
SET enable_seqscan = off;
CREATE TEMP TABLE res AS SELECT 1 AS qid, '{}'::bigint[] AS ids LIMIT 0;
DO \$\$
DECLARE r record; t0 timestamptz := clock_timestamp(); n int := 0;
BEGIN
	FOR r IN SELECT * FROM q LOOP
		INSERT INTO res SELECT r.qid,
			ARRAY(SELECT id FROM $tbl ORDER BY v <-> r.v LIMIT 10);
		n := n + 1;
	END LOOP;
	RAISE NOTICE 'qps %', round(n / extract(epoch FROM clock_timestamp() - t0), 1);
END \$\$;
SELECT round(avg((SELECT count(*) FROM unnest(res.ids) x WHERE x = ANY(t.ids)) / 10.0), 4)
	FROM res JOIN truth t USING (qid);
EOF
}
stream=$(measure items 2>&1 | tr '\n' ' ')
fresh=$(measure fresh 2>&1 | tr '\n' ' ')

val "SELECT 'index size: streamed ' || pg_size_pretty(pg_relation_size('items_v'))
	|| ', fresh ' || pg_size_pretty(pg_relation_size('fresh_v'))
	|| ', ratio ' || round(pg_relation_size('items_v')::numeric / pg_relation_size('fresh_v'), 2)
	|| '; segments streamed ' || (SELECT num_segments FROM ft.info('items_v'))
	|| ', fresh ' || (SELECT num_segments FROM ft.info('fresh_v'))
	|| '; rows ' || (SELECT count(*) FROM items)"
val "SELECT 'storage: ' || row_to_json(s) FROM ft.storage_stats('items_v') s" || true
echo "streamed index: recall@10, qps: $stream"
echo "fresh index:    recall@10, qps: $fresh"
printf 'throughput last/first slice: %.2f\n' "$(echo "$last_rate / $first_rate" | bc -l)"

#!/usr/bin/env bash
# stream.sh: the streaming benchmark -- does an index that lives
# through a long stream of inserts, deletes, compactions and merges stay as
# fast, as small and as good as a fresh build?
#
# As root: builds and installs segvec, then runs itself as the postgres user
# in a throwaway cluster (pg_virtualenv) with shared_preload_libraries =
# 'segvec' and every segvec setting at its default (background workers on).
# As another user it runs against the server the libpq environment points
# at, in database BENCH_STREAM_DB (default segvec_bench_stream, dropped and
# recreated unless BENCH_STREAM_NEWDB=0).
#
# Streams BENCH_STREAM_ROWS rows (default 1,000,000) into a table with a
# segvec index INCLUDE (id), in batches of BENCH_STREAM_BATCH (1,000)
# single-row INSERTs, one transaction per batch; after every batch it
# updates BENCH_STREAM_UPDATE_PCT (10) percent of a batch's worth of older
# rows (a new vector: the row's own plus new noise) and deletes
# BENCH_STREAM_DELETE_PCT (5) percent, each drawn uniformly among the older
# ids by primary key (a miss draws again), so that share of the stream is
# updated and deleted along the way and a batch costs the same at any
# table size.  The data (BENCH_STREAM_DATA):
#   synthetic  BENCH_STREAM_DIM-dim (default 128) clustered vectors:
#              BENCH_STREAM_CLUSTERS (100) centres uniform in [0, 1]^dim,
#              a row its centre plus uniform noise of width 0.1 per
#              coordinate; the queries are more rows of the same kind
#   fmnist     the 60,000 Fashion-MNIST training images (784 dims, pixels
#              0..255) repeated, each copy plus uniform noise of width
#              BENCH_STREAM_NOISE (4) per pixel; the queries are the first
#              test images (dataset-fashion-mnist, read by test/fmnist.py)
# Two runs: the defaults, and
#   BENCH_STREAM_DATA=fmnist BENCH_STREAM_ROWS=200000
#
# Prints per 10% slice: the time; insert throughput (rows/s of the slice);
# segments (at the slice's end / the most sampled during it, sampled every
# 2 s) against the size-ratio policy's bound 1 + floor(log16 docs); mutable
# docs; index size; pages in use (the index's pages less free-extent and
# recyclable ones); with BENCH_STREAM_FRESH_SLICES=1 (the default) the
# index size against a fresh CREATE INDEX of the slice's live rows (a copy
# of the table, built and dropped while the stream waits); WAL bytes per
# inserted row of the slice (all of the cluster's WAL: inserts, updates,
# deletes, compactions, merges; run nothing else on it); search cost in the
# slice's pause, QPS and buffer accesses per query of BENCH_STREAM_SLICE_QUERIES
# (50) queries at ef_search BENCH_STREAM_SLICE_EF (40), and both against the
# fresh build's (no recall: exact answers would cost a scan per query); and the peak
# memory of this server's segvec workers
# so far: VmHWM (which counts the shared buffers a worker touched) and the
# most private (anonymous) memory seen, sampled every second from
# /proc/PID/smaps_rollup (so the server must run on this machine, readable
# by the caller).  At the end (after the workers are idle and ft.compact
# drained the rest): the same rows copied into a second table and indexed
# by one CREATE INDEX (its time and private memory); the WAL of the stream
# and the drain per inserted row, by resource manager (pg_walinspect; with
# BENCH_STREAM_FRESH_SLICES=0 only); the size ratio
# streamed/fresh, and of the pages in use; for each ef_search of
# BENCH_STREAM_EF ("10 20 40 80"), recall@10 (against the exact answer),
# QPS and buffer accesses per query (EXPLAIN (ANALYZE, BUFFERS): shared
# hits and reads) of BENCH_STREAM_QUERIES queries on both, so that they
# can be compared at equal recall, and of pgvector's HNSW (m 16,
# ef_construction 64) built on the same rows when the server has pgvector
# (hnsw.ef_search at the same values); the cost of single-row UPDATEs that
# keep a row's vector (UPDATE items SET v = v, each its own transaction),
# found by the primary key (BENCH_STREAM_UPDATES, 200) and by a sequential
# scan (id + 0, a fifth as many), on both tables; and the throughput ratio
# last slice / first slice.
#
# A small run to try it (a few minutes): BENCH_STREAM_ROWS=20000
# BENCH_STREAM_BATCH=200 BENCH_STREAM_QUERIES=50.
#
# Knobs: BENCH_STREAM_ROWS, BENCH_STREAM_DATA, BENCH_STREAM_DIM,
# BENCH_STREAM_BATCH, BENCH_STREAM_CLUSTERS, BENCH_STREAM_NOISE,
# BENCH_STREAM_UPDATE_PCT, BENCH_STREAM_DELETE_PCT,
# BENCH_STREAM_FRESH_SLICES, BENCH_STREAM_EF, BENCH_STREAM_UPDATES,
# BENCH_STREAM_QUERIES (100), BENCH_STREAM_SLICE_EF, BENCH_STREAM_SLICE_QUERIES,
# BENCH_SHARED_BUFFERS (1GB; as root only), BENCH_STREAM_SETTINGS (as root
# only: more server settings, space-separated, e.g. "segvec.merge_ratio=0"),
# BENCH_STREAM_NEWDB (1; 0: use the existing database BENCH_STREAM_DB, so
# that a server started with one build of segvec, with CREATE EXTENSION
# done, is measured even if another build is installed meanwhile).
set -euo pipefail

rows=${BENCH_STREAM_ROWS:-1000000}
data=${BENCH_STREAM_DATA:-synthetic}
dim=${BENCH_STREAM_DIM:-128}
noise=${BENCH_STREAM_NOISE:-4}
batch=${BENCH_STREAM_BATCH:-1000}
clusters=${BENCH_STREAM_CLUSTERS:-100}
queries=${BENCH_STREAM_QUERIES:-100}
update_pct=${BENCH_STREAM_UPDATE_PCT:-10}
delete_pct=${BENCH_STREAM_DELETE_PCT:-5}
fresh_slices=${BENCH_STREAM_FRESH_SLICES:-1}
efs=${BENCH_STREAM_EF:-10 20 40 80}
updates=${BENCH_STREAM_UPDATES:-200}
slice_ef=${BENCH_STREAM_SLICE_EF:-40}
slice_queries=${BENCH_STREAM_SLICE_QUERIES:-50}
settings=${BENCH_STREAM_SETTINGS:-}
sb=${BENCH_SHARED_BUFFERS:-1GB}
db=${BENCH_STREAM_DB:-segvec_bench_stream}
newdb=${BENCH_STREAM_NEWDB:-1}
case $data in
	synthetic) ;;
	fmnist) dim=784 ;;
	*) echo "stream.sh: BENCH_STREAM_DATA is synthetic or fmnist" >&2; exit 1 ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "$(id -u)" = 0 ] && [ "${1:-}" != --inside ]; then
	cd "$here/../.."
	make -s && make -s install
	work=$(mktemp -d /tmp/segvec-bench-stream.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	cp "$here/stream.sh" "$here/../fmnist.py" "$work/"
	chown -R postgres "$work"
	chmod 755 "$work"
	opts=()
	for o in $settings; do opts+=(-o "$o"); done
	exec runuser -u postgres -- env BENCH_STREAM_ROWS="$rows" \
		BENCH_STREAM_DATA="$data" BENCH_STREAM_NOISE="$noise" \
		BENCH_STREAM_DIM="$dim" BENCH_STREAM_BATCH="$batch" \
		BENCH_STREAM_CLUSTERS="$clusters" BENCH_STREAM_QUERIES="$queries" \
		BENCH_STREAM_UPDATE_PCT="$update_pct" BENCH_STREAM_DELETE_PCT="$delete_pct" \
		BENCH_STREAM_FRESH_SLICES="$fresh_slices" BENCH_STREAM_EF="$efs" \
		BENCH_STREAM_UPDATES="$updates" BENCH_STREAM_SLICE_EF="$slice_ef" \
		BENCH_STREAM_SLICE_QUERIES="$slice_queries" \
		BENCH_STREAM_DB="$db" BENCH_STREAM_FMNIST="$work/fmnist.py" \
		pg_virtualenv -o "shared_buffers=$sb" -o max_wal_size=8GB \
		-o shared_preload_libraries=segvec "${opts[@]}" \
		bash "$work/stream.sh" --inside
fi
fmnist=${BENCH_STREAM_FMNIST:-$here/../fmnist.py}

psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
if [ "$newdb" = 1 ]; then
	psql -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
fi
export PGDATABASE=$db
val() { psql -At -c "$1"; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

psql -c "DROP TABLE IF EXISTS centre, base, qbase, items, fresh, fresh_slice, pgv, q, truth, samples" \
	-c "DROP PROCEDURE IF EXISTS batch(bigint, int)" \
	-c "DROP PROCEDURE IF EXISTS keep_updates(regclass, int, bool)" \
	-c "DROP FUNCTION IF EXISTS rowvec(bigint)" \
	-c "CREATE EXTENSION IF NOT EXISTS segvec"

if [ "$data" = fmnist ]; then
	say "loading Fashion-MNIST"
	psql -c "CREATE TABLE base (i int PRIMARY KEY, v real[])" \
		-c "CREATE TABLE qbase (i int PRIMARY KEY, v real[])"
	python3 "$fmnist" train | psql -c "COPY base FROM STDIN"
	python3 "$fmnist" test "$queries" | psql -c "COPY qbase FROM STDIN"
	nbase=$(val "SELECT count(*) FROM base")
	# row i: training image (i - 1) % nbase + 1 plus noise
	psql <<EOF
CREATE FUNCTION rowvec(i bigint) RETURNS real[] LANGUAGE sql VOLATILE AS
	\$\$ SELECT array_agg((x + (random() - 0.5) * $noise)::real ORDER BY o)
	     FROM unnest((SELECT v FROM base WHERE base.i = (rowvec.i - 1) % $nbase + 1))
	     WITH ORDINALITY u(x, o) \$\$;
EOF
else
	psql <<EOF
-- the cluster centres, and a row's vector: its centre plus noise
CREATE TABLE centre AS
	SELECT c, (SELECT array_agg(random()::real) FROM generate_series(1, $dim + c * 0)) AS v
	FROM generate_series(0, $clusters - 1) c;
CREATE FUNCTION rowvec(i bigint) RETURNS real[] LANGUAGE sql VOLATILE AS
	\$\$ SELECT array_agg((x + (random() - 0.5) * 0.1)::real ORDER BY o)
	     FROM unnest((SELECT v FROM centre WHERE c = i % $clusters))
	     WITH ORDINALITY u(x, o) \$\$;
EOF
fi

psql <<EOF
CREATE TABLE items (id bigint PRIMARY KEY, v real[]);
CREATE INDEX items_v ON items USING segvec (v) INCLUDE (id);

-- one batch: n single-row INSERTs from id first on, then update
-- n * $update_pct / 100 older rows' vectors (the row's own, new noise) and
-- delete n * $delete_pct / 100 older rows, each drawn uniformly among the
-- older ids (a miss, a row deleted before, draws again)
CREATE PROCEDURE batch(first bigint, n int) LANGUAGE plpgsql AS \$\$
DECLARE
	todo int := n * $update_pct / 100;
	tries int := 0;
	got int;
	k bigint;
BEGIN
	FOR i IN first .. first + n - 1 LOOP
		INSERT INTO items VALUES (i, rowvec(i));
	END LOOP;
	WHILE first > 1 AND todo > 0 AND tries < 100 * n LOOP
		k := 1 + floor(random() * (first - 1))::bigint;
		UPDATE items SET v = rowvec(k) WHERE id = k;
		GET DIAGNOSTICS got = ROW_COUNT;
		todo := todo - got;
		tries := tries + 1;
	END LOOP;
	todo := n * $delete_pct / 100;
	WHILE first > 1 AND todo > 0 AND tries < 200 * n LOOP
		-- the id drawn first: random() in the WHERE clause would be drawn
		-- again for every row of a sequential scan
		k := 1 + floor(random() * (first - 1))::bigint;
		DELETE FROM items WHERE id = k;
		GET DIAGNOSTICS got = ROW_COUNT;
		todo := todo - got;
		tries := tries + 1;
	END LOOP;
END
\$\$;

-- n single-row UPDATEs that keep the vector, each its own transaction, of
-- rows drawn among the table's ids, by primary key or (seqscan) by a
-- sequential scan; raises the mean milliseconds per UPDATE, its commit
-- included
CREATE PROCEDURE keep_updates(t regclass, n int, seqscan bool) LANGUAGE plpgsql AS \$\$
DECLARE
	hi bigint;
	k bigint;
	t0 timestamptz;
	total float8 := 0;
	done int := 0;
	got int;
BEGIN
	EXECUTE format('SELECT max(id) FROM %s', t) INTO hi;
	WHILE done < n LOOP
		k := 1 + floor(random() * hi)::bigint;
		t0 := clock_timestamp();
		EXECUTE format('UPDATE %s SET v = v WHERE %s = \$1', t,
			CASE WHEN seqscan THEN 'id + 0' ELSE 'id' END) USING k;
		GET DIAGNOSTICS got = ROW_COUNT;
		COMMIT;
		IF got > 0 THEN
			total := total + extract(epoch FROM clock_timestamp() - t0) * 1000;
			done := done + 1;
		END IF;
	END LOOP;
	RAISE NOTICE 'ms %', round((total / n)::numeric, 3);
END
\$\$;

-- what the segment sampler saw
CREATE TABLE samples (t timestamptz, segments int, docs bigint);
EOF

# the queries, drawn before the stream (the same at every slice)
if [ "$data" = fmnist ]; then
	psql -c "CREATE TABLE q AS SELECT i AS qid, v FROM qbase"
else
	psql -c "CREATE TABLE q AS SELECT g AS qid, rowvec(g * 7919) AS v
		FROM generate_series(1, $queries) g"
fi

# search cost in the stream's pause: "QPS buffers/query" of the first
# $slice_queries queries against table $1's index at ef_search $slice_ef
# (no recall: exact answers would cost a scan of the table per query)
slice_search() {
	psql -At <<EOF 2>&1 | sed -nE 's/.*slice ([0-9.]+) ([0-9.]+).*/\1 \2/p'
SET enable_seqscan = off;
SET segvec.ef_search = $slice_ef;
DO \$\$
DECLARE r record; t0 timestamptz; n int := 0; j json; bufs bigint := 0;
	qps numeric;
BEGIN
	-- a first pass warms the pages
	FOR r IN SELECT * FROM q ORDER BY qid LIMIT $slice_queries LOOP
		PERFORM id FROM $1 ORDER BY v <-> r.v LIMIT 10;
	END LOOP;
	t0 := clock_timestamp();
	FOR r IN SELECT * FROM q ORDER BY qid LIMIT $slice_queries LOOP
		PERFORM id FROM $1 ORDER BY v <-> r.v LIMIT 10;
		n := n + 1;
	END LOOP;
	qps := round(n / extract(epoch FROM clock_timestamp() - t0));
	FOR r IN SELECT * FROM q ORDER BY qid LIMIT $slice_queries LOOP
		EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
			SELECT id FROM $1 ORDER BY v <-> \$1 LIMIT 10' INTO j USING r.v;
		bufs := bufs + (j->0->'Plan'->>'Shared Hit Blocks')::bigint
			+ (j->0->'Plan'->>'Shared Read Blocks')::bigint;
	END LOOP;
	RAISE NOTICE 'slice % %', qps, round(bufs::numeric / n);
END \$\$;
EOF
}

# The samplers, in the background: every second the memory of this
# server's processes whose title matches $1 (by parent pid: other servers
# are left out) as lines "pid VmHWM-kB private-kB" into file $2; every 2 s
# the segment count into the table samples.  (Reading postmaster.pid needs
# a superuser or pg_read_server_files.)
pm=$(val "SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1)")
sample_memory() {
	local pid hwm anon
	while :; do
		for pid in $(pgrep -P "$pm" -f "$1" || true); do
			hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			anon=$(awk '/^Anonymous:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || true)
			if [ -n "$hwm" ] && [ -n "$anon" ]; then
				echo "$pid $hwm $anon" >>"$2"
			fi
		done
		sleep "${3:-1}"
	done
}
sample_segments() {
	while :; do
		val "INSERT INTO samples SELECT now(), num_segments, num_docs
			FROM ft.info('items_v')" >/dev/null 2>&1 || true
		sleep 2
	done
}
# the largest value of column $2 in file $1
peak() { awk -v c="$2" '$c > m { m = $c } END { print m + 0 }' "$1"; }
mem=$(mktemp /tmp/segvec-stream-mem.XXXXXX)
bmem=$(mktemp /tmp/segvec-stream-mem.XXXXXX)
sampler1=
sampler2=
sampler3=
cleanup() {
	for p in $sampler1 $sampler2 $sampler3; do kill "$p" 2>/dev/null || true; done
	rm -f "$mem" "$bmem"
}
trap cleanup EXIT
sample_memory 'segvec worker' "$mem" &
sampler1=$!
sample_segments &
sampler2=$!

slice=$((rows / 10))
next=1
first_rate=
last_rate=
say "streaming $rows rows of $data data ($dim dims) in batches of $batch"
wal_start=$(val "SELECT pg_current_wal_insert_lsn()")
printf '%-5s %5s %7s %8s %5s %8s %8s %8s %8s %9s %6s %6s %8s %9s %10s\n' slice time rows/s \
	segments bound mutable index_MB inuse_MB vs_fresh WAL_B/ins qps buf/q qps_buf_f hwm_kB private_kB
for s in $(seq 1 10); do
	t0=$(date +%s.%N)
	ts0=$(val "SELECT now()")
	w0=$(val "SELECT pg_current_wal_insert_lsn()")
	end=$((s * slice))
	while [ "$next" -le "$end" ]; do
		n=$batch
		[ $((next + n - 1)) -gt "$end" ] && n=$((end - next + 1))
		val "CALL batch($next, $n)" >/dev/null
		next=$((next + n))
	done
	t1=$(date +%s.%N)
	rate=$(echo "$slice / ($t1 - $t0)" | bc -l)
	[ -z "$first_rate" ] && first_rate=$rate
	last_rate=$rate
	line=$(val "SELECT i.num_segments || '/' || coalesce((SELECT max(segments)
			FROM samples WHERE t >= '$ts0'), i.num_segments),
		1 + floor(log(16, greatest(i.num_docs, 1))), i.mutable_docs,
		round(pg_relation_size('items_v') / 1048576.0, 1),
		round((s.index_pages - s.free_extent_pages - s.recyclable_pages)
			* current_setting('block_size')::int / 1048576.0, 1),
		round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$w0') / $slice)
		FROM ft.info('items_v') i, ft.storage_stats('items_v') s")
	IFS='|' read -r segs bound mut size inuse walrow <<<"$line"
	read -r sqps sbuf <<<"$(slice_search items)"
	vsfresh=-
	fqb=-
	if [ "$fresh_slices" = 1 ]; then
		# a fresh build of the live rows, in the stream's pause
		psql -c "DROP TABLE IF EXISTS fresh_slice" \
			-c "CREATE TABLE fresh_slice AS SELECT * FROM items" \
			-c "CREATE INDEX fresh_slice_v ON fresh_slice USING segvec (v) INCLUDE (id)"
		vsfresh=$(val "SELECT round(pg_relation_size('items_v')::numeric
			/ pg_relation_size('fresh_slice_v'), 2)")
		read -r fqps fbuf <<<"$(slice_search fresh_slice)"
		fqb=$(echo "$sqps / $fqps" | bc -l | xargs printf '%.2f')/$(echo "$sbuf / $fbuf" | bc -l | xargs printf '%.2f')
		psql -c "DROP TABLE fresh_slice"
	fi
	printf '%-5s %5s %7.0f %8s %5s %8s %8s %8s %8s %9s %6s %6s %8s %9s %10s\n' "$s" "$(date +%H:%M)" \
		"$rate" "$segs" "$bound" "$mut" "$size" "$inuse" "$vsfresh" "$walrow" \
		"$sqps" "$sbuf" "$fqb" "$(peak "$mem" 2)" "$(peak "$mem" 3)"
done
echo "segments: at the slice's end / the most sampled during it; bound: 1 + floor(log16 docs)"
echo "qps, buf/q: the streamed index at ef_search $slice_ef ($slice_queries queries); qps_buf_f: its QPS and buffers per query against the fresh build's"
echo "segment samples over the bound: $(val "SELECT count(*) FILTER (WHERE segments >
	1 + floor(log(16, greatest(docs, 1)))) || ' of ' || count(*) FROM samples")"

say "draining: waiting for idle workers, then ft.compact"
for _ in $(seq 1 1800); do
	[ "$(val "SELECT count(*) FROM ft.jobs")" = 0 ] && break
	sleep 1
done
psql -c "SELECT * FROM ft.compact('items_v')" >/dev/null
psql -c "VACUUM items" >/dev/null
kill "$sampler2" 2>/dev/null || true
sampler2=
echo "workers' memory, whole stream: VmHWM $(peak "$mem" 2) kB, private $(peak "$mem" 3) kB"
# where the WAL of the stream and its drain went, by resource manager
# (pg_walinspect, PostgreSQL 15's signature; skipped where it differs):
# Heap and Btree are the table and its primary key; Generic is segvec's
# page records (mutable segment, keymap, metapage, tombstones); XLOG's
# full page images are mostly the segments that compactions and merges
# wrote.  Only without the fresh builds at every slice, whose WAL would be
# counted in.
if [ "$fresh_slices" = 0 ] &&
	val "CREATE EXTENSION IF NOT EXISTS pg_walinspect" >/dev/null 2>&1; then
	split=$(val "SELECT string_agg(\"resource_manager/record_type\" || ' '
			|| round(combined_size::numeric / $rows), ', ' ORDER BY combined_size DESC)
		FROM pg_get_wal_stats('$wal_start', pg_current_wal_insert_lsn(), false)
		WHERE combined_size::numeric / $rows >= 1" 2>/dev/null || true)
	[ -n "$split" ] && echo "WAL bytes per inserted row, stream and drain, by resource manager: $split"
fi

say "fresh build of the same rows"
psql -c "CREATE TABLE fresh AS SELECT * FROM items" \
	-c "ALTER TABLE fresh ADD PRIMARY KEY (id)"
sample_memory 'CREATE INDEX' "$bmem" 0.5 &
sampler3=$!
t0=$(date +%s.%N)
psql -c "CREATE INDEX fresh_v ON fresh USING segvec (v) INCLUDE (id)"
build=$(echo "$(date +%s.%N) - $t0" | bc -l)
kill "$sampler3" 2>/dev/null || true
sampler3=
printf 'fresh CREATE INDEX: %.0f s, private memory peak %s kB (VmHWM %s kB)\n' \
	"$build" "$(peak "$bmem" 3)" "$(peak "$bmem" 2)"
say "exact answers of $queries queries"
psql -c "SET max_parallel_workers_per_gather = 0" -c "CREATE TABLE truth AS
	SELECT q.qid, ARRAY(SELECT id FROM items ORDER BY l2_distance(v, q.v), id
		LIMIT 10) AS ids FROM q"

# recall@10, QPS and buffer accesses per query of one table's index at
# ef_search $2 (the setting $3, segvec's by default; the query vector cast
# by $4)
measure() {
	local tbl=$1 ef=$2 guc=${3:-segvec.ef_search} cast=${4:-}
	psql -At <<EOF
SET enable_seqscan = off;
SET $guc = $ef;
CREATE TEMP TABLE res AS SELECT 1 AS qid, '{}'::bigint[] AS ids LIMIT 0;
DO \$\$
DECLARE r record; t0 timestamptz := clock_timestamp(); n int := 0;
	j json; bufs bigint := 0;
BEGIN
	FOR r IN SELECT * FROM q LOOP
		INSERT INTO res SELECT r.qid,
			ARRAY(SELECT id FROM $tbl ORDER BY v <-> r.v$cast LIMIT 10);
		n := n + 1;
	END LOOP;
	RAISE NOTICE 'qps %', round(n / extract(epoch FROM clock_timestamp() - t0), 1);
	FOR r IN SELECT * FROM q LOOP
		EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
			SELECT id FROM $tbl ORDER BY v <-> \$1$cast LIMIT 10' INTO j USING r.v;
		bufs := bufs + (j->0->'Plan'->>'Shared Hit Blocks')::bigint
			+ (j->0->'Plan'->>'Shared Read Blocks')::bigint;
	END LOOP;
	RAISE NOTICE 'buffers %', round(bufs::numeric / n, 1);
END \$\$;
SELECT round(avg((SELECT count(*) FROM unnest(res.ids) x WHERE x = ANY(t.ids)) / 10.0), 4)
	FROM res JOIN truth t USING (qid);
EOF
}
# "recall@10 R, qps Q, buffers/query B" from measure's NOTICEs and result
tidy() {
	tr '\n' ' ' |
		sed -E 's/.*qps ([0-9.]+).*buffers ([0-9.]+) +([0-9.]+).*/recall@10 \3, qps \1, buffers\/query \2/'
}
say "recall, QPS and buffers per query, streamed and fresh (a first pass at the lowest ef_search warms the pages)"
measure items "${efs%% *}" >/dev/null 2>&1 || true
measure fresh "${efs%% *}" >/dev/null 2>&1 || true
# pgvector's HNSW (m 16, ef_construction 64, no iterative scan) on the
# same rows, when the server has pgvector
pgv=
if [ "$(val "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" = 1 ]; then
	say "pgvector: HNSW build on the same rows"
	psql -c "CREATE EXTENSION IF NOT EXISTS vector" \
		-c "CREATE TABLE pgv AS SELECT id, v::vector($dim) AS v FROM items" \
		-c "SET maintenance_work_mem = '1GB'" \
		-c "CREATE INDEX pgv_v ON pgv USING hnsw (v vector_l2_ops) WITH (m = 16, ef_construction = 64)"
	pgv=1
	measure pgv "${efs%% *}" hnsw.ef_search "::vector" >/dev/null 2>&1 || true
fi
searches=
for ef in $efs; do
	searches+="ef_search $ef: streamed $(measure items "$ef" 2>&1 | tidy); fresh $(measure fresh "$ef" 2>&1 | tidy)${pgv:+; pgvector $(measure pgv "$ef" hnsw.ef_search "::vector" 2>&1 | tidy)}"$'\n'
done

say "single-row UPDATEs that keep the vector ($updates by primary key, $((updates / 5)) by a sequential scan)"
upd() { psql -c "CALL keep_updates('$1', $2, $3)" 2>&1 | sed -nE 's/.*ms ([0-9.]+).*/\1/p'; }
upd_pk_s=$(upd items "$updates" false)
upd_pk_f=$(upd fresh "$updates" false)
upd_seq_s=$(upd items "$((updates / 5))" true)
upd_seq_f=$(upd fresh "$((updates / 5))" true)

val "SELECT 'index size: streamed ' || pg_size_pretty(pg_relation_size('items_v'))
	|| ', fresh ' || pg_size_pretty(pg_relation_size('fresh_v'))
	|| ', ratio ' || round(pg_relation_size('items_v')::numeric / pg_relation_size('fresh_v'), 2)
	|| '; segments streamed ' || (SELECT num_segments FROM ft.info('items_v'))
	|| ', fresh ' || (SELECT num_segments FROM ft.info('fresh_v'))
	|| '; rows ' || (SELECT count(*) FROM items)"
# a CREATE INDEX bigger than one in-memory build merges its segments and
# leaves their extents free inside the fresh index: compare pages in use too
val "SELECT 'pages in use (less free and recyclable): streamed ' || a
	|| ', fresh ' || b || ', ratio ' || round(a::numeric / b, 2)
	|| '; streamed size / fresh pages in use ' || round(sa::numeric / b, 2)
	FROM (SELECT index_pages - free_extent_pages - recyclable_pages AS a,
		index_pages AS sa FROM ft.storage_stats('items_v')) x,
	(SELECT index_pages - free_extent_pages - recyclable_pages AS b
		FROM ft.storage_stats('fresh_v')) y"
val "SELECT 'storage, streamed: ' || row_to_json(s) FROM ft.storage_stats('items_v') s" || true
val "SELECT 'storage, fresh:    ' || row_to_json(s) FROM ft.storage_stats('fresh_v') s" || true
printf '%s' "$searches"
echo "UPDATE ... SET v = v, ms per row: by primary key streamed $upd_pk_s, fresh $upd_pk_f; by a sequential scan streamed $upd_seq_s, fresh $upd_seq_f"
printf 'throughput last/first slice: %.2f\n' "$(echo "$last_rate / $first_rate" | bc -l)"

#!/usr/bin/env bash
# run.sh: what "make bench" runs: the Fashion-MNIST benchmark.
#
# As root: install missing packages, build and install segvec, then in a
# throwaway cluster (pg_virtualenv, as the postgres user,
# shared_preload_libraries=segvec, shared_buffers=3GB so that everything
# measured stays in memory):
#
#   - load the 60,000 training images (784-dim real[]) and the test images;
#   - exact top-10 ground truth for 1,000 test queries by sequential scan,
#     cached in $BENCH_CACHE (default /var/tmp/segvec-bench) for later runs;
#   - segvec: CREATE INDEX time, index size, peak memory of the building
#     backend (bench.py polls /proc/<pid>/status); recall@10 over all
#     queries and single-client QPS (pgbench -M prepared) for ef_search in
#     10 20 40 80 160 320;
#   - 10,000 single-row INSERTs and 10,000 UPDATEs of a non-vector column,
#     each its own transaction (pgbench -c 1), into the indexed table and
#     into an identical table without a vector index; then QPS at
#     ef_search 40 after those writes, and for segvec ft.compact's time and
#     QPS after it;
#   - the same for a pgvector HNSW index (m 16, ef_construction 64) on a
#     vector(784) column when the server has the "vector" extension, and the
#     ratio segvec/pgvector for each figure (skipped without pgvector); then
#     segvec's index is on a vector(784) column too (segvec_pgvector), unless
#     BENCH_SEGVEC_COLUMN=real;
#   - the streaming scenario (BENCH_STREAM=1): an index built
#     on the first half of the rows, the second half inserted one row per
#     transaction (synchronous_commit off, background workers on); recall,
#     index buffer accesses per query, the backend's CPU time per query
#     and QPS at BENCH_STREAM_EF right away, after ft.jobs is empty, after
#     10% of the vectors were rewritten by single-row UPDATEs, and after
#     VACUUM (segvec's segments and pending jobs before and after each
#     sweep); the same for pgvector, and segvec with segvec.shared_bound
#     off (segvec_nb) for comparison; every target checked on QPS and on
#     CPU time;
#   - prints one report (bench.py report), with the targets checked.
#
# Takes about 7 minutes on an idle 2-CPU machine once the ground truth is
# cached (the first run adds 2-3 minutes for it); the streaming scenario
# adds about 10 minutes more (20 on a busy machine: pgvector's 30,000
# single-row inserts alone take about 5).
#
# Knobs (environment):
#   BENCH_ROWS (60000), BENCH_QUERIES (1000), BENCH_WRITES (10000)
#   BENCH_QPS_TX      k-NN statements per ef_search value and run (BENCH_QUERIES)
#   BENCH_QPS_RUNS    runs per ef_search value, best one reported (2)
#   BENCH_AFTER_QUERIES  queries for the searches after the writes (200)
#   BENCH_EF          ef_search values ("10 20 40 80 160 320")
#   BENCH_SHARED_BUFFERS (3GB: the streaming scenario's tables and indexes too)
#   BENCH_SYNC_COMMIT synchronous_commit (on; off takes the WAL flush of each
#                     single-row transaction out of the write figures)
#   BENCH_MWM         maintenance_work_mem (1GB: one graph segment)
#   BENCH_PARALLEL_WORKERS  max_parallel_maintenance_workers (0: each build
#                     runs in one backend, so its memory is the build's)
#   BENCH_PGVECTOR    auto | off
#   BENCH_STREAM      1: the streaming scenario (below), 0: not
#   BENCH_STREAM_EF   its ef_search values ("20 40 80 160"; keep them in
#                     BENCH_EF, the fresh index's figures they compare with)
#   BENCH_STREAM_QPS_TX  k-NN statements per value and run (BENCH_QPS_TX)
#   BENCH_SEGVEC_INCLUDE_ID  1: the segvec index gets INCLUDE (id)
#   BENCH_SEGVEC_COLUMN  auto | real | vector: segvec's column type; auto
#                     is vector(784) when pgvector is there (the same column
#                     type as pgvector's index, read through segvec_pgvector),
#                     else real[]
#   BENCH_CACHE       ground-truth cache directory (/var/tmp/segvec-bench)
set -euo pipefail

rows=${BENCH_ROWS:-60000}
nq=${BENCH_QUERIES:-1000}
nw=${BENCH_WRITES:-10000}
qtx=${BENCH_QPS_TX:-$nq}
qruns=${BENCH_QPS_RUNS:-2}
nafter=${BENCH_AFTER_QUERIES:-200}
[ "$nafter" -gt "$nq" ] && nafter=$nq
efs=${BENCH_EF:-10 20 40 80 160 320}
stream=${BENCH_STREAM:-1}
sefs=${BENCH_STREAM_EF:-20 40 80 160}
sqtx=${BENCH_STREAM_QPS_TX:-${BENCH_QPS_TX:-${BENCH_QUERIES:-1000}}}
sb=${BENCH_SHARED_BUFFERS:-3GB}
sync=${BENCH_SYNC_COMMIT:-on}
mwm=${BENCH_MWM:-1GB}
pw=${BENCH_PARALLEL_WORKERS:-0}
use_pgvector=${BENCH_PGVECTOR:-auto}
include_id=${BENCH_SEGVEC_INCLUDE_ID:-0}
cache=${BENCH_CACHE:-/var/tmp/segvec-bench}
dim=784
idbase=100000 # inserted rows get ids idbase + test-image number

# --- inside the throwaway cluster, as postgres -------------------------------
if [ "${1:-}" = --inside ]; then
	cd "$(dirname "${BASH_SOURCE[0]}")"
	psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
	val() { psql -At -c "$1"; }
	results=$PWD/results.tsv
	: >"$results"
	put() { printf '%s\t%s\n' "$1" "$2" >>"$results"; }
	calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
	elapsed() { calc "$(date +%s.%N) - $1"; }
	say() { printf '[%5.0f s] %s\n' "$(elapsed "$t_start")" "$*" >&2; }
	t_start=$(date +%s.%N)

	ntest=$((nq > nw ? nq : nw))
	put rows "$rows"; put queries "$nq"; put writes "$nw"; put dim "$dim"
	put qps_tx "$qtx"; put qps_runs "$qruns"; put after_queries "$nafter"; put ef_list "$efs"
	put server_version "$(val 'SELECT version()' | sed 's/ on x86_64.*//; s/, compiled by.*//')"
	put cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	put ncpu "$(nproc)"
	put load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
	put settings "$(val "SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY ord)
		FROM unnest(ARRAY['shared_buffers', 'maintenance_work_mem',
			'max_parallel_maintenance_workers', 'autovacuum', 'synchronous_commit',
			'jit', 'max_wal_size', 'checkpoint_timeout']) WITH ORDINALITY AS s(name, ord)")"

	pgv=no
	if [ "$use_pgvector" != off ] &&
		[ "$(val "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" = 1 ]; then
		pgv=yes
	fi
	put pgvector "$pgv"

	# --- data ---------------------------------------------------------------
	say "loading $rows training and $ntest test vectors"
	psql -c 'CREATE EXTENSION segvec' -c 'CREATE EXTENSION pg_prewarm' \
		-c 'CREATE TABLE train (id int PRIMARY KEY, embedding real[])' \
		-c 'CREATE TABLE testset (qid int PRIMARY KEY, embedding real[])'
	python3 fmnist.py train "$rows" | psql -c 'COPY train FROM STDIN'
	python3 fmnist.py test "$ntest" | psql -c 'COPY testset FROM STDIN'
	psql -c 'VACUUM ANALYZE train' -c 'VACUUM ANALYZE testset'

	# Prewarm a table with its indexes and its TOAST table and index.
	psql <<'SQL'
CREATE FUNCTION bench_prewarm(t regclass) RETURNS bigint LANGUAGE sql AS $$
	SELECT coalesce(sum(pg_prewarm(r::regclass)), 0)::bigint FROM (
		SELECT t::oid AS r
		UNION ALL SELECT indexrelid FROM pg_index WHERE indrelid = t
		UNION ALL SELECT reltoastrelid FROM pg_class
			WHERE oid = t AND reltoastrelid <> 0
		UNION ALL SELECT i.indexrelid FROM pg_class c
			JOIN pg_index i ON i.indrelid = c.reltoastrelid WHERE c.oid = t) s
$$;
SQL

	# --- ground truth -------------------------------------------------------
	fmdir=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
	key=$(cat "$fmdir/train-images-idx3-ubyte.gz" "$fmdir/t10k-images-idx3-ubyte.gz" |
		md5sum | cut -c1-12)
	gtfile=$cache/gt-fmnist-l2-$rows-$nq-$key.tsv
	if [ -s "$gtfile" ]; then
		put gt_source "cached from an earlier run ($gtfile)"
		say "ground truth: cached in $gtfile"
	else
		# Uncompressed copies (STORAGE PLAIN) so the exact scans do not
		# decompress every row for every query; one session per CPU.
		say "ground truth: computing exact top-10 for $nq queries (cached afterwards)"
		t0=$(date +%s.%N)
		psql -c 'CREATE TABLE train_plain (id int, embedding real[])' \
			-c 'ALTER TABLE train_plain ALTER embedding SET STORAGE PLAIN' \
			-c "INSERT INTO train_plain SELECT id, embedding || '{}'::real[] FROM train" \
			-c 'CREATE TABLE q_plain (qid int, embedding real[])' \
			-c 'ALTER TABLE q_plain ALTER embedding SET STORAGE PLAIN' \
			-c "INSERT INTO q_plain SELECT qid, embedding || '{}'::real[] FROM testset WHERE qid <= $nq" \
			-c 'VACUUM ANALYZE train_plain' -c 'VACUUM ANALYZE q_plain' \
			-c "SELECT pg_prewarm('train_plain')" >/dev/null
		np=$(nproc)
		[ "$np" -gt 4 ] && np=4
		pids=()
		for p in $(seq 0 $((np - 1))); do
			psql -c 'SET max_parallel_workers_per_gather = 0' -c 'SET enable_indexscan = off' \
				-c "\\copy (SELECT q.qid, r.ids, r.dists FROM q_plain q CROSS JOIN LATERAL (SELECT array_agg(id ORDER BY d, id) AS ids, array_agg(d ORDER BY d, id) AS dists FROM (SELECT t.id, t.embedding <-> q.embedding AS d FROM train_plain t ORDER BY 2, 1 LIMIT 11) s) r WHERE q.qid % $np = $p) TO 'gt.part$p'" &
			pids+=($!)
		done
		for pid in "${pids[@]}"; do wait "$pid"; done
		sort -n gt.part* >"$gtfile.tmp.$$"
		mv "$gtfile.tmp.$$" "$gtfile"
		rm -f gt.part*
		psql -c 'DROP TABLE train_plain, q_plain'
		put gt_source "computed in this run in $(printf %.0f "$(elapsed "$t0")") s, cached in $gtfile"
	fi
	psql -c 'CREATE TABLE gt (qid int PRIMARY KEY, ids int[], dists float8[])' \
		-c "\\copy gt FROM '$gtfile'" -c 'ANALYZE gt'
	[ "$(val 'SELECT count(*) FROM gt')" = "$nq" ] || { echo "run.sh: bad ground truth $gtfile" >&2; exit 1; }
	ties=$(val 'SELECT count(*) FROM gt WHERE dists[10] = dists[11]')
	sed -i "s|^gt_source\t.*|&; recall = share of the true top-10 ids returned ($ties queries with a tie at rank 10)|" "$results"

	# --- tables -------------------------------------------------------------
	# fm_X carries the vector index, plain_X is the identical table without.
	say "creating the tables"
	# segvec's column: real[], or (with pgvector) the same vector(784)
	# column type as pgvector's table, through segvec_pgvector
	segtype='real[]'
	seg_col=${BENCH_SEGVEC_COLUMN:-auto}
	[ "$seg_col" = auto ] && { [ $pgv = yes ] && seg_col=vector || seg_col=real; }
	if [ "$seg_col" = vector ]; then
		[ $pgv = yes ] || { echo "run.sh: BENCH_SEGVEC_COLUMN=vector needs pgvector" >&2; exit 1; }
		segtype="vector($dim)"
	fi
	put segvec_column "embedding $segtype"
	[ $pgv = yes ] && psql -c 'CREATE EXTENSION vector'
	[ "$seg_col" = vector ] && psql -c 'CREATE EXTENSION segvec_pgvector'
	psql -c "CREATE TABLE fm_segvec (id int PRIMARY KEY, hits int NOT NULL DEFAULT 0, embedding $segtype)" \
		-c "CREATE TABLE plain_real (id int PRIMARY KEY, hits int NOT NULL DEFAULT 0, embedding $segtype)" \
		-c "CREATE TABLE testset_s (qid int PRIMARY KEY, embedding $segtype)" \
		-c 'INSERT INTO fm_segvec (id, embedding) SELECT id, embedding FROM train ORDER BY id' \
		-c 'INSERT INTO plain_real (id, embedding) SELECT id, embedding FROM train ORDER BY id' \
		-c 'INSERT INTO testset_s SELECT qid, embedding FROM testset ORDER BY qid' \
		-c 'VACUUM ANALYZE fm_segvec' -c 'VACUUM ANALYZE plain_real' -c 'VACUUM ANALYZE testset_s' \
		-c "CREATE SEQUENCE qseq MINVALUE 1 MAXVALUE $nq CYCLE"
	if [ $pgv = yes ]; then
		psql \
			-c "CREATE TABLE fm_pgvector (id int PRIMARY KEY, hits int NOT NULL DEFAULT 0, embedding vector($dim))" \
			-c "CREATE TABLE plain_vector (id int PRIMARY KEY, hits int NOT NULL DEFAULT 0, embedding vector($dim))" \
			-c "CREATE TABLE testset_v (qid int PRIMARY KEY, embedding vector($dim))" \
			-c "INSERT INTO fm_pgvector (id, embedding) SELECT id, embedding::vector($dim) FROM train ORDER BY id" \
			-c "INSERT INTO plain_vector (id, embedding) SELECT id, embedding::vector($dim) FROM train ORDER BY id" \
			-c "INSERT INTO testset_v SELECT qid, embedding::vector($dim) FROM testset ORDER BY qid" \
			-c 'VACUUM ANALYZE fm_pgvector' -c 'VACUUM ANALYZE plain_vector' -c 'VACUUM ANALYZE testset_v'
		put pgvector_version "$(val "SELECT extversion FROM pg_extension WHERE extname = 'vector'")"
	fi
	psql -c 'DROP TABLE train'

	include=
	[ "$include_id" = 1 ] && include=' INCLUDE (id)'
	segvec_ddl="CREATE INDEX fm_segvec_idx ON fm_segvec USING segvec (embedding vector_l2_ops)$include WITH (m = 16, ef_construction = 64)"
	pgvector_ddl="CREATE INDEX fm_pgvector_idx ON fm_pgvector USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)"
	put segvec_ddl "$segvec_ddl"
	put pgvector_ddl "$pgvector_ddl"

	methods=(segvec)
	[ $pgv = yes ] && methods+=(pgvector)
	declare -A tbl src guc plain opt_sql opt_pg
	tbl=([segvec]=fm_segvec [pgvector]=fm_pgvector)
	src=([segvec]=testset_s [pgvector]=testset_v)
	guc=([segvec]=segvec.ef_search [pgvector]=hnsw.ef_search)
	plain=([segvec]=plain_real [pgvector]=plain_vector)

	# knn_once M EF NTX: mean latency (ms) of the prepared k-NN statement
	# over queries 1..NTX (cycling past nq), one pgbench run
	knn_once() {
		local m=$1 ef=$2 ntx=$3 out lat
		out=pgbench-knn-$m-$ef.out
		cat >knn-$m.pgb <<EOF
SELECT embedding AS q FROM ${src[$m]} WHERE qid = (SELECT nextval('qseq'))::int \\gset
SELECT id FROM ${tbl[$m]} ORDER BY embedding <-> :q LIMIT 10;
EOF
		psql -c 'ALTER SEQUENCE qseq RESTART'
		PGOPTIONS="${PGOPTIONS:-} -c enable_seqscan=off -c ${guc[$m]}=$ef ${opt_pg[$m]:-}" \
			pgbench -n -M prepared -c 1 -t "$ntx" -r -f knn-$m.pgb >"$out" 2>&1 ||
			{ cat "$out" >&2; exit 1; }
		read -r _ lat < <(python3 bench.py pgbench "$out" 'ORDER BY embedding')
		echo "$lat"
	}

	# qps EF NTX KEY: for every method, the best (lowest) mean latency of
	# qruns runs, the methods taking turns so that both see the same
	# background load; puts M_lat_KEY and M_qps_KEY
	qps() {
		local ef=$1 ntx=$2 k=$3 m rep lat
		local -A best=()
		for rep in $(seq "$qruns"); do
			for m in "${methods[@]}"; do
				lat=$(knn_once "$m" "$ef" "$ntx")
				if [ -z "${best[$m]:-}" ] || awk "BEGIN { exit !($lat < ${best[$m]}) }"; then
					best[$m]=$lat
				fi
			done
		done
		for m in "${methods[@]}"; do
			put "${m}_lat_$k" "${best[$m]}"
			put "${m}_qps_$k" "$(calc "1000 / ${best[$m]}" 1)"
		done
	}

	# selfcheck M KEY: share of queries 1..nafter whose rank-1 row is at
	# distance 0 (each query's own copy was inserted by the writes)
	selfcheck() {
		local m=$1 k=$2
		put "${m}_$k" "$(val "SET enable_seqscan = off; SET ${guc[$m]} = 40;
			SELECT round(avg((r.d = 0)::int), 4) FROM ${src[$m]} q CROSS JOIN LATERAL
				(SELECT t.embedding <-> q.embedding AS d FROM ${tbl[$m]} t
				 ORDER BY t.embedding <-> q.embedding LIMIT 1) r
			WHERE q.qid <= $nafter" | tail -1)"
	}

	# segvec's own view of the index (when this build has ft.info / ft.jobs)
	has_info=$(val "SELECT to_regprocedure('ft.info(regclass)') IS NOT NULL")
	has_jobs=$(val "SELECT to_regclass('ft.jobs') IS NOT NULL")
	put segvec_background "$([ "$has_jobs" = t ] && val 'SELECT ft.background_enabled()' || echo n/a)"
	segvec_state() {
		[ "$has_info" = t ] || return 0
		put "segvec_state_$1" "$(val "SELECT format('%s segment(s), %s docs in the mutable segment, %s in graph segments, %s tombstones',
			num_segments, mutable_docs, immutable_docs, tombstones) FROM ft.info('fm_segvec_idx')")"
	}
	# drain_bg KEY: wait (up to 10 minutes) until no segvec background job is
	# pending or running; puts segvec_bg_KEY, the seconds waited
	drain_bg() {
		[ "$has_jobs" = t ] || return 0
		local t0 n
		t0=$(date +%s.%N)
		n=$(val 'SELECT count(*) FROM ft.jobs')
		[ "$n" = 0 ] && { put "segvec_bg_$1" 0; return 0; }
		while n=$(val 'SELECT count(*) FROM ft.jobs') && [ "$n" != 0 ]; do
			if awk "BEGIN { exit !($(elapsed "$t0") > 600) }"; then
				echo "run.sh: segvec background jobs still running after 600 s" >&2
				break
			fi
			sleep 0.1
		done
		put "segvec_bg_$1" "$(elapsed "$t0")"
	}

	# --- build ----------------------------------------------------------------
	for m in "${methods[@]}"; do
		ddl_var=${m}_ddl
		say "$m: CREATE INDEX"
		psql -c CHECKPOINT
		out=$(psql <<SQL
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_PID :pid
\! python3 bench.py memwatch start "\$BENCH_PID" mem-$m.out
SELECT clock_timestamp() AS t0 \gset
${!ddl_var};
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS build_s \gset
\! python3 bench.py memwatch stop mem-$m.out >mem-$m.txt
\echo BUILD_S :build_s
SQL
)
		put "${m}_build_s" "$(sed -n 's/^BUILD_S //p' <<<"$out")"
		read -r anon hwm _ samples <mem-$m.txt
		put "${m}_build_anon_mb" "$(calc "$anon / 1024" 1)"
		put "${m}_build_hwm_mb" "$(calc "$hwm / 1024" 1)"
		put "${m}_index_mb" "$(val "SELECT pg_relation_size('${tbl[$m]}_idx') / 1048576.0")"
		put "${m}_table_mb" "$(val "SELECT pg_table_size('${tbl[$m]}') / 1048576.0")"
		say "$m: built in $(sed -n 's/^BUILD_S //p' <<<"$out") s ($samples memory samples)"
	done
	segvec_state build

	# --- search ---------------------------------------------------------------
	for m in "${methods[@]}"; do
		psql -c "SELECT bench_prewarm('${tbl[$m]}'), bench_prewarm('${src[$m]}')" >/dev/null
		plan=$(psql -At <<SQL | grep -m1 'Scan' | sed 's/^[ ->]*//'
SET plan_cache_mode = force_generic_plan;
PREPARE knn AS SELECT id FROM ${tbl[$m]} ORDER BY embedding <-> \$1 LIMIT 10;
SELECT embedding AS q FROM ${src[$m]} WHERE qid = 1 \gset
EXPLAIN (COSTS OFF) EXECUTE knn(:'q');
SQL
)
		put "${m}_plan" "${plan:-no scan node?}"
	done
	psql -c "SELECT bench_prewarm('gt')" >/dev/null
	# mapid(id): where the ground truth's row id now is (the identity until
	# the streaming scenario swaps vectors between rows)
	psql -c 'CREATE FUNCTION mapid(i int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT i $$'

	# recall M EF KEY: recall@10 over queries 1..nq through M's index, the
	# index's buffer accesses per query (pg_stat_get_xact_blocks_fetched
	# of the index, before and after, in one transaction) and the backend's
	# CPU time per query in microseconds (/proc/PID/schedstat's run time,
	# before and after: on a loaded machine a steadier figure than QPS;
	# it includes the ground-truth join, the same for every method); puts
	# M_recall_KEY, M_bufs_KEY, M_cpu_KEY (and M_short_KEY if a query got
	# < 10 rows)
	recall() {
		local m=$1 ef=$2 k=$3 recall minrows bufs cpu
		read -r recall minrows bufs cpu < <(psql -At <<SQL | tail -1
SET enable_seqscan = off;
SET ${guc[$m]} = $ef;
${opt_sql[$m]:-}
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_PID :pid
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched('${tbl[$m]}_idx'::regclass) AS b0 \gset
\set c0 \`cut -d" " -f1 /proc/\$BENCH_PID/schedstat\`
SELECT round(avg((SELECT count(*) FROM unnest(r.ids) x
		WHERE x = ANY (SELECT mapid(y) FROM unnest(g.ids[1:10]) y))::numeric / 10), 4) AS recall,
	min(coalesce(cardinality(r.ids), 0)) AS minrows
FROM ${src[$m]} q JOIN gt g USING (qid)
CROSS JOIN LATERAL (SELECT array_agg(id) AS ids FROM
	(SELECT t.id FROM ${tbl[$m]} t ORDER BY t.embedding <-> q.embedding
	 LIMIT 10) s) r
WHERE q.qid <= $nq \gset
\set c1 \`cut -d" " -f1 /proc/\$BENCH_PID/schedstat\`
SELECT round((pg_stat_get_xact_blocks_fetched('${tbl[$m]}_idx'::regclass) - :b0) / $nq::numeric, 1) AS bufs \gset
SELECT round((:c1 - :c0) / 1000.0 / $nq, 0) AS cpu \gset
COMMIT;
\echo :recall :minrows :bufs :cpu
SQL
)
		put "${m}_recall_$k" "$recall"
		put "${m}_bufs_$k" "$bufs"
		put "${m}_cpu_$k" "$cpu"
		[ "$minrows" = 10 ] || put "${m}_short_$k" "$minrows"
	}

	for ef in $efs; do
		for m in "${methods[@]}"; do
			say "$m: ef_search = $ef: recall"
			recall "$m" "$ef" "$ef"
		done
		say "ef_search = $ef: QPS"
		qps "$ef" "$qtx" "$ef"
	done

	# --- writes ---------------------------------------------------------------
	# Each write figure is taken right after a CHECKPOINT, so every table
	# starts alike (full-page images on first touch); max_wal_size and
	# checkpoint_timeout are large so no checkpoint falls inside a run.
	# segvec's background jobs (compaction once the mutable segment passes
	# segvec.compact_threshold) may run during its own runs, as they would in
	# use; they are drained before the next run starts, and the wait is
	# reported.
	writes() {
		local t=$1 s=$2 k=$3 out tps
		say "$t: $nw INSERTs"
		psql -c "CREATE SEQUENCE ins_$t" -c CHECKPOINT
		cat >ins-$t.pgb <<EOF
INSERT INTO $t (id, embedding) SELECT $idbase + qid, embedding FROM $s WHERE qid = (SELECT nextval('ins_$t'))::int;
EOF
		out=pgbench-ins-$t.out
		pgbench -n -M prepared -c 1 -t "$nw" -f ins-$t.pgb >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
		read -r tps _ < <(python3 bench.py pgbench "$out" -)
		[ "$(val "SELECT count(*) FROM $t WHERE id > $idbase")" = "$nw" ] ||
			{ echo "run.sh: $t: inserts missing" >&2; exit 1; }
		put "${k}insert_s" "$(calc "$nw / $tps")"
		put "${k}insert_rps" "$tps"
	}
	updates() {
		local t=$1 k=$2 out tps
		say "$t: $nw UPDATEs"
		psql -c CHECKPOINT
		cat >upd-$t.pgb <<EOF
\\set id random(1, $rows)
UPDATE $t SET hits = hits + 1 WHERE id = :id;
EOF
		out=pgbench-upd-$t.out
		pgbench -n -M prepared -c 1 -t "$nw" --random-seed=4242 -f upd-$t.pgb >"$out" 2>&1 ||
			{ cat "$out" >&2; exit 1; }
		read -r tps _ < <(python3 bench.py pgbench "$out" -)
		put "${k}update_s" "$(calc "$nw / $tps")"
		put "${k}update_rps" "$tps"
		sleep 0.5 # let the pgbench backend's statistics reach shared memory
		put "${k}update_hot_pct" "$(val "SELECT round(100.0 * n_tup_hot_upd / nullif(n_tup_upd, 0), 1)
			FROM pg_stat_user_tables WHERE relid = '$t'::regclass")"
	}
	for m in "${methods[@]}"; do
		writes "${plain[$m]}" "${src[$m]}" "${m}_plain_"
		writes "${tbl[$m]}" "${src[$m]}" "${m}_"
		[ "$m" = segvec ] && { drain_bg after_insert; segvec_state insert; }
	done
	for m in "${methods[@]}"; do
		updates "${plain[$m]}" "${m}_plain_"
		updates "${tbl[$m]}" "${m}_"
		[ "$m" = segvec ] && { drain_bg after_update; segvec_state update; }
		for w in insert update; do
			put "${m}_${w}_vs_plain" "$(calc "$(sed -n "s/^${m}_${w}_s\t//p" "$results") / $(sed -n "s/^${m}_plain_${w}_s\t//p" "$results")" 4)"
		done
	done

	# --- search after the writes ------------------------------------------------
	for m in "${methods[@]}"; do
		say "$m: search after the writes"
		psql -c "SELECT bench_prewarm('${tbl[$m]}')" >/dev/null
		selfcheck "$m" after_self
	done
	qps 40 "$nafter" after
	say "segvec: ft.compact"
	read -r csec cdocs < <(psql -At <<'SQL' | tail -1 | tr '|' ' '
SELECT clock_timestamp() AS t0 \gset
SELECT c.docs_compacted AS docs FROM ft.compact('fm_segvec_idx') c \gset
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz), :docs;
SQL
)
	put segvec_compact_s "$csec"
	put segvec_compact_docs "$cdocs"
	drain_bg after_compact
	segvec_state compact
	psql -c "SELECT bench_prewarm('fm_segvec')" >/dev/null
	selfcheck segvec after_compact_self
	saved=("${methods[@]}")
	methods=(segvec)
	qps 40 "$nafter" after_compact
	methods=("${saved[@]}")

	# --- streaming ---------------------------------------------------------------
	# Build on the first half of the rows, insert the second half one row
	# per transaction (synchronous_commit off; segvec's background workers
	# compact meanwhile), sweep recall/QPS at once and after ft.jobs is
	# empty; then rewrite 10% of the vectors by single-row UPDATEs (rows
	# a = 3, 23, 43, ... and a + 10 swap vectors, so mapid() translates the
	# ground truth) and sweep before and after VACUUM.  The fresh figures
	# to compare with are the sweep above (one CREATE INDEX on all rows).
	# segvec_nb is segvec with segvec.shared_bound off, in the same sweeps.
	if [ "$stream" = 1 ]; then
		half=$((rows / 2))
		npairs=$((rows / 20))
		put stream_half "$half"
		put stream_inserts "$((rows - half))"
		put stream_updates "$((2 * npairs))"
		put stream_ef_list "$sefs"
		segvec_ddl_st="CREATE INDEX st_segvec_idx ON st_segvec USING segvec (embedding vector_l2_ops)$include WITH (m = 16, ef_construction = 64)"
		pgvector_ddl_st="CREATE INDEX st_pgvector_idx ON st_pgvector USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)"
		for m in "${methods[@]}"; do
			psql -c "CREATE TABLE st_$m (LIKE ${plain[$m]} INCLUDING DEFAULTS)" \
				-c "ALTER TABLE st_$m ADD PRIMARY KEY (id)" \
				-c "INSERT INTO st_$m SELECT * FROM ${plain[$m]} WHERE id <= $half ORDER BY id" \
				-c "VACUUM ANALYZE st_$m"
			say "stream: $m: CREATE INDEX on $half rows"
			ddl_var=${m}_ddl_st
			psql -c "${!ddl_var}"
		done
		tbl=([segvec]=st_segvec [pgvector]=st_pgvector [segvec_nb]=st_segvec)
		src[segvec_nb]=${src[segvec]}
		guc[segvec_nb]=${guc[segvec]}
		opt_sql=([segvec_nb]='SET segvec.shared_bound = off;')
		opt_pg=([segvec_nb]='-c segvec.shared_bound=off')
		for m in "${methods[@]}"; do
			say "stream: $m: $((rows - half)) single-row INSERTs"
			psql -c "CREATE SEQUENCE st_ins_$m START $((half + 1))"
			printf '%s\n' "INSERT INTO ${tbl[$m]} (id, embedding) SELECT id, embedding FROM ${plain[$m]} WHERE id = (SELECT nextval('st_ins_$m'))::int;" >st-ins-$m.pgb
			out=pgbench-st-ins-$m.out
			PGOPTIONS="${PGOPTIONS:-} -c synchronous_commit=off" \
				pgbench -n -M prepared -c 1 -t "$((rows - half))" -f st-ins-$m.pgb >"$out" 2>&1 ||
				{ cat "$out" >&2; exit 1; }
			read -r tps _ < <(python3 bench.py pgbench "$out" -)
			put "${m}_stream_insert_rps" "$tps"
			[ "$(val "SELECT count(*) FROM ${tbl[$m]}")" = "$rows" ] ||
				{ echo "run.sh: ${tbl[$m]}: rows missing" >&2; exit 1; }
		done
		smethods=("${methods[@]}")
		[ "$has_info" = t ] && smethods+=(segvec_nb)
		# st_state: segvec's segments and pending jobs, now
		st_state() {
			val "SELECT format('%s segment(s), %s docs in the mutable segment, %s in graph segments, %s tombstones; %s job(s) in ft.jobs',
				num_segments, mutable_docs, immutable_docs, tombstones,
				$([ "$has_jobs" = t ] && echo '(SELECT count(*) FROM ft.jobs)' || echo "'n/a'")) FROM ft.info('st_segvec_idx')"
		}
		# ssweep KEY: recall, buffers and QPS of every method at each ef;
		# segvec's state before and after (the workers may compact and
		# merge during the sweep, which then measures several states)
		ssweep() {
			local k=$1 ef m saved
			[ "$has_info" = t ] && put "segvec_state0_$k" "$(st_state)"
			for m in "${methods[@]}"; do
				psql -c "SELECT bench_prewarm('${tbl[$m]}')" >/dev/null
			done
			saved=("${methods[@]}")
			methods=("${smethods[@]}")
			for ef in $sefs; do
				for m in "${methods[@]}"; do
					say "stream $k: $m: ef_search = $ef"
					recall "$m" "$ef" "${k}_$ef"
				done
				qps "$ef" "$sqtx" "${k}_$ef"
			done
			methods=("${saved[@]}")
			[ "$has_info" = t ] && put "segvec_state_$k" "$(st_state)"
			for m in "${methods[@]}"; do
				put "${m}_size_$k" "$(val "SELECT round(pg_relation_size('${tbl[$m]}_idx') / 1048576.0, 1)")"
			done
		}
		put "segvec_jobs_st_now" "$([ "$has_jobs" = t ] && val 'SELECT count(*) FROM ft.jobs' || echo n/a)"
		ssweep st_now
		drain_bg st_drain
		ssweep st_drain
		# 10% of the rows swap vectors in pairs, one row per UPDATE
		for m in "${methods[@]}"; do
			say "stream: $m: $((2 * npairs)) single-row UPDATEs of the vector"
			psql -c "CREATE SEQUENCE st_upd_$m"
			{
				printf '%s\n' "SELECT nextval('st_upd_$m')::int * 20 - 17 AS a \\gset"
				printf '%s\n' "UPDATE ${tbl[$m]} SET embedding = (SELECT embedding FROM ${plain[$m]} WHERE id = :a + 10) WHERE id = :a;"
				printf '%s\n' "UPDATE ${tbl[$m]} SET embedding = (SELECT embedding FROM ${plain[$m]} WHERE id = :a) WHERE id = :a + 10;"
			} >st-upd-$m.pgb
			out=pgbench-st-upd-$m.out
			PGOPTIONS="${PGOPTIONS:-} -c synchronous_commit=off" \
				pgbench -n -M prepared -c 1 -t "$npairs" -f st-upd-$m.pgb >"$out" 2>&1 ||
				{ cat "$out" >&2; exit 1; }
			read -r tps _ < <(python3 bench.py pgbench "$out" -)
			put "${m}_stream_update_rps" "$(calc "2 * $tps" 1)"
		done
		psql -c "CREATE OR REPLACE FUNCTION mapid(i int) RETURNS int LANGUAGE sql IMMUTABLE AS \$\$
			SELECT CASE WHEN i % 20 = 3 AND i <= $((npairs * 20)) THEN i + 10
				WHEN i % 20 = 13 AND i <= $((npairs * 20)) THEN i - 10 ELSE i END \$\$"
		ssweep st_upd
		for m in "${methods[@]}"; do
			say "stream: $m: VACUUM"
			t0=$(date +%s.%N)
			psql -c "VACUUM ${tbl[$m]}"
			put "${m}_stream_vacuum_s" "$(elapsed "$t0")"
		done
		drain_bg st_vac
		ssweep st_vac
	fi

	put load_end "$(cut -d' ' -f1-3 /proc/loadavg)"
	put total_s "$(printf %.0f "$(elapsed "$t_start")")"
	say "done"
	echo
	python3 bench.py report "$results"
	exit 0
fi

# --- as root: set up, build, install, start the cluster ----------------------
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$here"

if [ "$(id -u)" != 0 ]; then
	echo "run.sh: run as root (it installs packages and the extension," \
		"then runs the benchmark as postgres)" >&2
	exit 1
fi
for n in "$rows" "$nq" "$nw" "$qtx" "$qruns" "$nafter"; do
	case $n in '' | *[!0-9]*) echo "run.sh: sizes must be integers" >&2; exit 1 ;; esac
done
if [ "$rows" -lt 11 ] || [ "$rows" -gt 60000 ] || [ "$nq" -lt 1 ] || [ "$nq" -gt 10000 ] ||
	[ "$nw" -lt 1 ] || [ "$nw" -gt 10000 ]; then
	echo "run.sh: BENCH_ROWS must be 11..60000, BENCH_QUERIES and BENCH_WRITES 1..10000" >&2
	exit 1
fi

export LANG=C.UTF-8 LC_ALL=C.UTF-8

bash test/setup.sh
make -j"$(nproc)"
make install

mkdir -p "$cache"
chown postgres: "$cache"

# The postgres user may not be able to enter the checkout: run from a copy.
work=$(mktemp -d /tmp/segvec-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp test/bench/run.sh test/bench/bench.py test/fmnist.py "$work"/
chmod 755 "$work"
chown -R postgres:postgres "$work"
cd "$work"

runuser -u postgres -- env BENCH_ROWS="$rows" BENCH_QUERIES="$nq" BENCH_WRITES="$nw" \
	BENCH_QPS_TX="$qtx" BENCH_QPS_RUNS="$qruns" BENCH_AFTER_QUERIES="$nafter" BENCH_EF="$efs" BENCH_PGVECTOR="$use_pgvector" \
	BENCH_STREAM="$stream" BENCH_STREAM_EF="$sefs" BENCH_STREAM_QPS_TX="$sqtx" \
	BENCH_SEGVEC_INCLUDE_ID="$include_id" BENCH_CACHE="$cache" \
	pg_virtualenv -v 15 \
	-o shared_preload_libraries=segvec \
	-o shared_buffers="$sb" \
	-o maintenance_work_mem="$mwm" \
	-o max_parallel_maintenance_workers="$pw" \
	-o autovacuum=off \
	-o synchronous_commit="$sync" \
	-o jit=off \
	-o max_wal_size=20GB \
	-o checkpoint_timeout=1h \
	bash "$work/run.sh" --inside

#!/usr/bin/env bash
# quant.sh: what "make bench-quant" runs: the benchmark of
# quantized graph segments against unquantized ones and pgvector's HNSW.
#
# As root: build and install segvec (into PG_CONFIG's installation), then
# in a throwaway cluster of that installation (initdb and pg_ctl, as
# postgres, on BENCH_PORT, shared_preload_libraries=segvec,
# shared_buffers=2GB so everything measured stays in memory) run this
# script with --inside.  --inside alone runs against the server that the
# PG* environment names (a cluster of your own, say), as any superuser.
#
# For the data set (BENCH_DATA):
#   fmnist   the first BENCH_ROWS (60,000) Fashion-MNIST training images
#            (784 dimensions), the test images as queries;
#   synth    BENCH_ROWS (100,000) vectors of BENCH_DIM (1,536) dimensions
#            drawn around 100 random centres (clustered, not uniform),
#            queries drawn the same way;
# it loads the rows, computes the exact top-10 of BENCH_QUERIES queries by
# sequential scan, then for each method (segvec with quantization = rabitq,
# sq8 and none, pgvector HNSW when the server has the
# "vector" extension; all m = 16, ef_construction = 64, builds in one
# backend): CREATE INDEX time, index size (segvec: split into codes,
# vectors, graph and docs from ft.info), and for every ef_search in
# BENCH_EF recall@10 over all queries and single-client QPS (pgbench -M
# prepared, the relations prewarmed, the best of BENCH_QPS_RUNS runs, the
# methods taking turns), both by the wall clock and by the CPU time of the
# backend (its time on a CPU from /proc/self/schedstat: on a busy machine
# the waits for a CPU swamp the wall clock, the CPU time much less), over
# the queries after BENCH_WARMUP warm-up queries in the same backend.  Both
# systems read the query vector the same way (a subquery on a query table
# of the same PLAIN storage, prewarmed), never as a text parameter.
# Prints one table and the ratios to pgvector at recall 0.95 and 0.99 (at
# the smallest ef_search that reaches the recall; pgvector returns at most
# ef_search rows, so it needs 10 for LIMIT 10).
#
# BENCH_STREAM=N streams instead for segvec: its indexes are created on
# empty tables, the rows inserted N at a time in id order, each batch
# followed by ft.compact (a compaction and the merges the policy asks
# for), so what is measured is the index a stream leaves once its jobs
# have drained; "build" is then the time of the whole stream, and the
# report gives the segments it left.  pgvector is built as always.
#
# Knobs (environment): BENCH_DATA (fmnist), BENCH_ROWS, BENCH_DIM (synth),
# BENCH_QUERIES (200), BENCH_QPS_TX (BENCH_QUERIES), BENCH_QPS_RUNS (3),
# BENCH_EF ("4 6 8 10 15 20 30 40 60 80 120 160 240", ascending), BENCH_PGVECTOR (auto | off),
# BENCH_METHODS (the segvec quantizations, "rabitq sq8 none"), BENCH_REUSE
# (1: keep the rows and queries a previous run of the same data set left
# in the database),
# BENCH_SHARED_BUFFERS (2GB), BENCH_MWM (1GB), BENCH_WARMUP (BENCH_QUERIES:
# queries each measured backend runs before its CPU time is taken; 0:
# new backends, see knn_once).
set -euo pipefail

data=${BENCH_DATA:-fmnist}
case $data in
	fmnist) rows=${BENCH_ROWS:-60000}; dim=784 ;;
	synth) rows=${BENCH_ROWS:-100000}; dim=${BENCH_DIM:-1536} ;;
	*) echo "quant.sh: BENCH_DATA is fmnist or synth" >&2; exit 1 ;;
esac
nq=${BENCH_QUERIES:-200}
qtx=${BENCH_QPS_TX:-$nq}
qruns=${BENCH_QPS_RUNS:-3}
efs=${BENCH_EF:-4 6 8 10 15 20 30 40 60 80 120 160 240}
use_pgvector=${BENCH_PGVECTOR:-auto}
segvec_methods=${BENCH_METHODS:-rabitq sq8 none}
sb=${BENCH_SHARED_BUFFERS:-2GB}
mwm=${BENCH_MWM:-1GB}
stream=${BENCH_STREAM:-}
warm=${BENCH_WARMUP:-$nq}

if [ "${1:-}" = --inside ]; then
	cd "$(dirname "${BASH_SOURCE[0]}")"
	work=$(mktemp -d /tmp/segvec-quant.XXXXXX)
	psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
	val() { psql -At -c "$1" | tail -1; }
	calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
	say() { echo "[$(date +%T)] $*" >&2; }
	results=$work/results.tsv
	: >"$results"
	put() { printf '%s\t%s\n' "$1" "$2" >>"$results"; }

	pgv=no
	if [ "$use_pgvector" != off ] &&
		[ "$(val "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" = 1 ]; then
		pgv=yes
	fi

	psql -c 'DROP TABLE IF EXISTS q_rabitq, q_sq8, q_none, q_pgv, q_queries_v CASCADE'
	if [ "${BENCH_REUSE:-0}" = 1 ] &&
		[ "$(val "SELECT count(*) FROM pg_tables WHERE tablename IN ('q_base', 'q_queries')")" = 2 ] &&
		[ "$(val 'SELECT count(*) FROM q_base')" = "$rows" ] &&
		[ "$(val 'SELECT count(*) FROM q_queries')" = "$nq" ]; then
		say "$data: reusing the loaded rows and queries (BENCH_REUSE=1)"
		psql -c 'DROP TABLE IF EXISTS q_gt'
	else
	say "$data: loading $rows rows of $dim dimensions and $nq queries"
	psql -c 'DROP TABLE IF EXISTS q_base, q_queries, q_gt CASCADE' \
		-c 'CREATE EXTENSION IF NOT EXISTS segvec' -c 'CREATE EXTENSION IF NOT EXISTS pg_prewarm' \
		-c 'CREATE TABLE q_base (id int PRIMARY KEY, embedding real[])' \
		-c 'ALTER TABLE q_base ALTER embedding SET STORAGE PLAIN' \
		-c 'CREATE TABLE q_queries (qid int PRIMARY KEY, embedding real[])' \
		-c 'ALTER TABLE q_queries ALTER embedding SET STORAGE PLAIN'
	if [ "$data" = fmnist ]; then
		python3 ../fmnist.py train "$rows" | psql -c 'COPY q_base FROM STDIN'
		python3 ../fmnist.py test "$nq" | psql -c 'COPY q_queries FROM STDIN'
	else
		# 100 centres uniform in [-1, 1]^dim; a row is its centre plus
		# Gaussian noise of sd 0.15 per dimension (Box-Muller), seeded
		psql <<SQL
SELECT setseed(0.13);
CREATE TEMP TABLE centre AS
  SELECT c, array_agg((random() * 2 - 1)::real ORDER BY j) AS v
  FROM generate_series(0, 99) c, generate_series(1, $dim) j GROUP BY c;
CREATE FUNCTION pg_temp.noisy(v real[]) RETURNS real[] VOLATILE LANGUAGE sql AS \$\$
  SELECT array_agg((x + 0.15 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::real
                   ORDER BY o)
  FROM unnest(v) WITH ORDINALITY u(x, o) \$\$;
INSERT INTO q_base SELECT g, pg_temp.noisy(c.v) FROM generate_series(1, $rows) g
  JOIN centre c ON c.c = (g * 7919) % 100;
INSERT INTO q_queries SELECT g, pg_temp.noisy(c.v) FROM generate_series(1, $nq) g
  JOIN centre c ON c.c = (g * 104729) % 100;
SQL
	fi
	psql -c 'VACUUM ANALYZE q_base' -c 'VACUUM ANALYZE q_queries'
	fi

	say "exact top-10 of $nq queries (two sessions)"
	psql -c 'CREATE TABLE q_gt (qid int PRIMARY KEY, ids int[])'
	for p in 0 1; do
		psql -c 'SET max_parallel_workers_per_gather = 0' -c 'SET enable_indexscan = off' \
			-c "INSERT INTO q_gt SELECT q.qid, (SELECT array_agg(id ORDER BY d, id) FROM
				(SELECT b.id, b.embedding <-> q.embedding AS d FROM q_base b ORDER BY 2, 1 LIMIT 10) s)
				FROM q_queries q WHERE q.qid % 2 = $p" &
	done
	wait

	read -r -a methods <<<"$segvec_methods"
	declare -A tbl ddl guc src
	for m in "${methods[@]}"; do
		tbl[$m]=q_$m
		src[$m]=q_queries
		guc[$m]=segvec.ef_search
		ddl[$m]="CREATE INDEX q_${m}_idx ON q_$m USING segvec (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64, quantization = '$m')"
		psql -c "CREATE TABLE q_$m (id int PRIMARY KEY, embedding real[])" \
			-c "ALTER TABLE q_$m ALTER embedding SET STORAGE PLAIN" \
			-c "INSERT INTO q_$m SELECT * FROM q_base ORDER BY id" -c "VACUUM ANALYZE q_$m"
	done
	if [ $pgv = yes ]; then
		methods+=(pgvector)
		tbl[pgvector]=q_pgv
		src[pgvector]=q_queries_v
		guc[pgvector]=hnsw.ef_search
		ddl[pgvector]="CREATE INDEX q_pgv_idx ON q_pgv USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)"
		psql -c 'CREATE EXTENSION IF NOT EXISTS vector' \
			-c "CREATE TABLE q_pgv (id int PRIMARY KEY, embedding vector($dim))" \
			-c "ALTER TABLE q_pgv ALTER embedding SET STORAGE PLAIN" \
			-c "INSERT INTO q_pgv SELECT id, embedding::vector($dim) FROM q_base ORDER BY id" \
			-c "CREATE TABLE q_queries_v (qid int PRIMARY KEY, embedding vector($dim))" \
			-c "ALTER TABLE q_queries_v ALTER embedding SET STORAGE PLAIN" \
			-c "INSERT INTO q_queries_v SELECT qid, embedding::vector($dim) FROM q_queries" \
			-c 'VACUUM ANALYZE q_pgv' -c 'VACUUM ANALYZE q_queries_v'
		put pgvector_version "$(val "SELECT extversion FROM pg_extension WHERE extname = 'vector'")"
	fi

	for m in "${methods[@]}"; do
		say "$m: CREATE INDEX"
		psql -c CHECKPOINT
		if [ -n "$stream" ] && [ "$m" != pgvector ]; then
			say "$m: streamed in batches of $stream, ft.compact after each"
			psql -c "TRUNCATE ${tbl[$m]}" -c "${ddl[$m]}"
			t0=$(date +%s.%N)
			for ((a = 0; a < rows; a += stream)); do
				psql -c "INSERT INTO ${tbl[$m]} SELECT * FROM q_base WHERE id > $a AND id <= $((a + stream)) ORDER BY id" \
					-c "SET maintenance_work_mem = '$mwm'" -c "SELECT ft.compact('${tbl[$m]}_idx')" >/dev/null
			done
			t=$(calc "$(date +%s.%N) - $t0" 1)
			psql -c "VACUUM ANALYZE ${tbl[$m]}"
			put "${m}_segments" "$(val "SELECT num_segments FROM ft.info('${tbl[$m]}_idx')")"
		else
		t=$(psql -At <<SQL | tail -1
SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '$mwm';
SELECT clock_timestamp() AS t0 \gset
${ddl[$m]};
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz);
SQL
)
		fi
		put "${m}_build_s" "$t"
		put "${m}_index_mb" "$(val "SELECT round(pg_relation_size('${tbl[$m]}_idx') / 1048576.0, 1)")"
		if [ "$m" != pgvector ]; then
			put "${m}_split" "$(val "SELECT format('codes %s MB, vectors %s MB, graph %s MB, docs %s MB, keymap and rest %s MB',
				round(sum((s->>'code_bytes')::bigint) / 1048576.0, 1),
				round(sum((s->>'vector_bytes')::bigint) / 1048576.0, 1),
				round(sum((s->>'graph_bytes')::bigint) / 1048576.0, 1),
				round(sum((s->>'doc_bytes')::bigint) / 1048576.0, 1),
				round((max(f.index_bytes) - sum((s->>'bytes')::bigint)) / 1048576.0, 1))
				FROM ft.info('${tbl[$m]}_idx') f, jsonb_array_elements(f.segments) s")"
		fi
		say "$m: built in $t s"
	done

	for m in "${methods[@]}"; do
		psql -c "SELECT pg_prewarm('${tbl[$m]}'), pg_prewarm('${tbl[$m]}_idx'), pg_prewarm('${src[$m]}')" >/dev/null
	done
	psql -c 'DROP TABLE IF EXISTS q_cpu' -c 'CREATE UNLOGGED TABLE q_cpu (k text, v bigint)'
	# One pgbench run of qtx queries.  Both systems get the query vector
	# the same way: an uncorrelated subquery (an InitPlan, evaluated once
	# per query) reads it from a prewarmed query table of the same storage
	# (PLAIN, not compressed), so neither pays for text input of a vector;
	# query n is qid 1 + (n - 1) % nq for every method.  The first and the
	# last transaction sleep so that the CPU time of the backend can be
	# read before the first query and after the last one.
	# One pgbench run: warm + qtx queries in one backend, the CPU time of
	# the last qtx only.  The backend reads its own CPU time (ns on a CPU,
	# /proc/self/schedstat: on a busy machine it shows the cost of a query
	# without the waits for a CPU) into q_cpu before query warm + 1 and
	# after the last.  The warm-up (BENCH_WARMUP, the nq queries by
	# default) measures a backend that has run queries before, as a
	# pooled connection has: a new backend's first touch of each shared
	# buffer page costs it a page fault, and segvec's buffer hints
	# (graph/segpage.c) fill as blocks are first read; BENCH_WARMUP=0
	# measures new backends.
	knn_once() {
		local m=$1 ef=$2 out
		out=$work/pgbench-$m-$ef.out
		cat >"$work/knn-$m.pgb" <<EOF
\\set n :n + 1
\\if :n = $((warm + 1))
INSERT INTO q_cpu VALUES ('t0', split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint), ('w0', (extract(epoch FROM clock_timestamp()) * 1e9)::bigint);
\\endif
\\set qid 1 + (:n - 1) % $nq
SELECT id FROM ${tbl[$m]} ORDER BY embedding <-> (SELECT embedding FROM ${src[$m]} WHERE qid = :qid) LIMIT 10;
\\if :n = $((warm + qtx))
INSERT INTO q_cpu VALUES ('t1', split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint), ('w1', (extract(epoch FROM clock_timestamp()) * 1e9)::bigint);
\\endif
EOF
		psql -c 'TRUNCATE q_cpu'
		PGOPTIONS="${PGOPTIONS:-} -c enable_seqscan=off -c ${guc[$m]}=$ef" \
			pgbench -n -M prepared -c 1 -t "$((warm + qtx))" -D n=0 -r -f "$work/knn-$m.pgb" >"$out" 2>&1 ||
			{ cat "$out" >&2; exit 1; }
		# wall-clock and CPU ms per measured query
		val "SELECT round((max(v) FILTER (WHERE k = 'w1') - max(v) FILTER (WHERE k = 'w0')) / 1e6 / $qtx, 4),
			round((max(v) FILTER (WHERE k = 't1') - max(v) FILTER (WHERE k = 't0')) / 1e6 / $qtx, 4) FROM q_cpu" | tr '|' ' '
	}
	for ef in $efs; do
		for m in "${methods[@]}"; do
			put "${m}_recall_$ef" "$(val "SET enable_seqscan = off; SET ${guc[$m]} = $ef;
				SELECT round(avg((SELECT count(*) FROM unnest(r.ids) x WHERE x = ANY (g.ids))::numeric / 10), 4)
				FROM ${src[$m]} q JOIN q_gt g USING (qid)
				CROSS JOIN LATERAL (SELECT array_agg(id) AS ids FROM
					(SELECT t.id FROM ${tbl[$m]} t ORDER BY t.embedding <-> q.embedding LIMIT 10) s) r")"
		done
		declare -A best=() bestcpu=()
		for rep in $(seq "$qruns"); do
			for m in "${methods[@]}"; do
				read -r lat cpu < <(knn_once "$m" "$ef")
				if [ -z "${best[$m]:-}" ] || awk "BEGIN { exit !($lat < ${best[$m]}) }"; then
					best[$m]=$lat
				fi
				if [ "$cpu" != - ] && { [ -z "${bestcpu[$m]:-}" ] || awk "BEGIN { exit !($cpu < ${bestcpu[$m]}) }"; }; then
					bestcpu[$m]=$cpu
				fi
			done
		done
		for m in "${methods[@]}"; do
			put "${m}_qps_$ef" "$(calc "1000 / ${best[$m]}" 1)"
			put "${m}_cpuqps_$ef" "$([ -n "${bestcpu[$m]:-}" ] && calc "1000 / ${bestcpu[$m]}" 1 || echo n/a)"
		done
		unset best bestcpu
		say "ef_search $ef: $(for m in "${methods[@]}"; do printf '%s recall %s qps %s; ' "$m" \
			"$(sed -n "s/^${m}_recall_$ef\t//p" "$results")" "$(sed -n "s/^${m}_qps_$ef\t//p" "$results")"; done)"
	done

	# --- report ---------------------------------------------------------------
	get() { sed -n "s/^$1\t//p" "$results"; }
	echo
	echo "quant.sh: $data, $rows rows x $dim, $nq queries, load $(cut -d' ' -f1-3 /proc/loadavg)${stream:+, segvec streamed in batches of $stream}"
	for m in "${methods[@]}"; do
		echo "  $m: build $(get "${m}_build_s") s, index $(get "${m}_index_mb") MB${pgv:+}$( [ "$m" != pgvector ] && echo " ($(get "${m}_split"))")$( [ -n "$stream" ] && [ "$m" != pgvector ] && echo ", $(get "${m}_segments") segments")"
	done
	echo "  QPS: wall clock (pgbench); CPU QPS: queries per second of the backend's CPU time"
	printf '  %-10s' ef_search; for m in "${methods[@]}"; do printf ' %28s' "$m recall/QPS/CPU QPS"; done; echo
	for ef in $efs; do
		printf '  %-10s' "$ef"
		for m in "${methods[@]}"; do printf ' %12s/%7s/%-7s' "$(get "${m}_recall_$ef")" "$(get "${m}_qps_$ef")" "$(get "${m}_cpuqps_$ef")"; done
		echo
	done
	# QPS at a recall: that of the smallest ef_search (BENCH_EF ascending)
	# reaching it, the nearest point of the sweep (the best QPS among all
	# that reach it would pick the wall clock's noise)
	at() {
		local m=$1 r=$2 kind=${3:-qps} ef
		for ef in $efs; do
			if awk "BEGIN { exit !($(get "${m}_recall_$ef") >= $r) }"; then
				echo "$(get "${m}_${kind}_$ef") (ef_search $ef)"
				return
			fi
		done
		echo none
	}
	for kind in qps cpuqps; do
		for r in 0.95 0.99; do
			line="  $([ $kind = qps ] && echo QPS || echo 'CPU QPS') at recall >= $r:"
			for m in "${methods[@]}"; do line+=" $m $(at "$m" "$r" $kind);"; done
			# ratios to pgvector, and of the quantized to none
			for base in pgvector none; do
				case " ${methods[*]} " in *" $base "*) ;; *) continue ;; esac
				p=$(at $base "$r" $kind)
				for m in $segvec_methods; do
					[ "$m" = "$base" ] && continue
					[ $base = none ] && [ "$m" = pgvector ] && continue
					s=$(at "$m" "$r" $kind)
					if [ "$s" != none ] && [ "$p" != none ] && [ "${s%% *}" != n/a ] && [ "${p%% *}" != n/a ]; then
						line+=" $m/$base $(calc "${s%% *} / ${p%% *}" 2);"
					fi
				done
			done
			echo "$line"
		done
	done
	if [ $pgv = yes ]; then
		for m in $segvec_methods; do
			echo "  $m/pgvector: build $(calc "$(get "${m}_build_s") / $(get pgvector_build_s)" 2), size $(calc "$(get "${m}_index_mb") / $(get pgvector_index_mb)" 2)"
		done
	fi
	rm -rf "$work"
	exit 0
fi

# --- as root: build, install, start a throwaway cluster ----------------------
# The cluster is made with initdb/pg_ctl from PG_CONFIG's bindir (the
# system installation by default; a private copy such as the one
# SEGVEC_PG_PREFIX makes with PG_CONFIG=/tmp/pg-NAME/.../pg_config, so
# that the benchmark neither needs nor disturbs the system's), on
# BENCH_PORT (5599), its socket in the work directory.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$here"
if [ "$(id -u)" != 0 ]; then
	echo "quant.sh: run as root, or with --inside against a server of your own" >&2
	exit 1
fi
export LANG=C.UTF-8 LC_ALL=C.UTF-8
pg_config=${PG_CONFIG:-pg_config}
bindir=$("$pg_config" --bindir)
port=${BENCH_PORT:-5599}
make -j"$(nproc)" PG_CONFIG="$pg_config"
make install PG_CONFIG="$pg_config"
work=$(mktemp -d /tmp/segvec-bench.XXXXXX)
stop() {
	[ -f "$work/data/postmaster.pid" ] && runuser -u postgres -- "$bindir/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
	rm -rf "$work"
}
trap stop EXIT
mkdir -p "$work/bench"
cp test/bench/quant.sh test/bench/bench.py "$work/bench/"
cp test/fmnist.py "$work/"
chmod -R a+rX "$work"
chown -R postgres:postgres "$work"
runuser -u postgres -- "$bindir/initdb" -D "$work/data" -A trust -E UTF8 --no-sync >/dev/null
# pg_ctl hands -o to a shell on one line: no newlines in it
opts="-p $port -k $work -c listen_addresses= -c shared_preload_libraries=segvec"
opts+=" -c shared_buffers=$sb -c maintenance_work_mem=$mwm -c max_parallel_maintenance_workers=0"
opts+=" -c autovacuum=off -c segvec.max_workers=0 -c jit=off -c max_wal_size=20GB -c checkpoint_timeout=1h"
runuser -u postgres -- "$bindir/pg_ctl" -D "$work/data" -w -l "$work/server.log" -o "$opts" start >/dev/null
runuser -u postgres -- env PATH="$bindir:$PATH" PGHOST="$work" PGPORT="$port" PGDATABASE=postgres \
	BENCH_DATA="$data" BENCH_ROWS="$rows" BENCH_DIM="$dim" \
	BENCH_QUERIES="$nq" BENCH_QPS_TX="$qtx" BENCH_QPS_RUNS="$qruns" BENCH_EF="$efs" \
	BENCH_PGVECTOR="$use_pgvector" BENCH_MWM="$mwm" BENCH_WARMUP="$warm" BENCH_STREAM="$stream" BENCH_METHODS="$segvec_methods" BENCH_REUSE="${BENCH_REUSE:-0}" \
	bash "$work/bench/quant.sh" --inside

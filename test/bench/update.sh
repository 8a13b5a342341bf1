#!/usr/bin/env bash
# update.sh: the UPDATE benchmark: what does a non-HOT UPDATE
# of another column cost on a table with a segvec index, against the same
# table without the vector index?
#
# As root: builds and installs segvec, then runs itself as the postgres user
# in a throwaway cluster (pg_virtualenv, shared_buffers=2GB so the tables
# stay in memory, autovacuum off, segvec not preloaded: no background
# compaction runs during the UPDATEs, so the figures are the UPDATE's own
# work).  As another user it runs against the server the libpq environment
# points at, in database BENCH_UPDATE_DB (default segvec_bench_update,
# dropped and recreated).
#
# For each dimension (128 and 1,536) and each kind of segvec index of
# BENCH_UPDATE_KEYS ("id none filter"): BENCH_UPDATE_ROWS (10,000) rows
# (id bigint primary key, v real[] of random floats, note int with a btree,
# so that an UPDATE of note is not HOT, grp int) in table "vec" with a
# segvec index built by CREATE INDEX (its docs are in graph segments): "id"
# (v) INCLUDE (id); "none" (v), no id key (an UPDATE copies the vector);
# "filter" (v, grp) INCLUDE (id), a filter column; and the same rows in
# table "plain" without it.  Then three rounds; in each,
# for both tables, a CHECKPOINT (so both pay the same full-page images) and
# then
#   - "bulk": UPDATE t SET note = note + 1 (every row, one statement and
#     transaction), its wall time and the backend's CPU time (from
#     /proc/PID/schedstat: the load of a shared machine disturbs it less);
#   - "single": BENCH_UPDATE_SINGLE (2,000) single-row UPDATEs of random
#     ids, each its own transaction (pgbench -c 1 -M prepared), their time
#     per UPDATE;
#   - the WAL per updated row, and the growth of the segvec index.
# Round 0 is the index after CREATE INDEX.  Rounds 1 and 2 follow each other (round 2 updates rows already updated
# once); before round 3, VACUUM of both tables and ft.compact of the index
# (what background work leaves).  Prints each round's figures and the ratio
# vec/plain.
#
# To compare builds in one run, interleaved: start one server per build
# (each with its build installed when it started, shared_preload_libraries
# = 'segvec' so that it keeps that build, segvec.max_workers = 0) and run
# this script as a non-root user with
#   BENCH_UPDATE_SERVERS="main=5481 branch=5482"
# (labels and ports, host from PGHOST): each round then runs on each server
# in turn, and a summary prints, per dimension, round and server, the
# ratios vec/plain (bulk, single) and the WAL per updated row, and each
# server's bulk time against the first server's.
#
# Knobs: BENCH_UPDATE_ROWS (10000), BENCH_UPDATE_DIMS ("128 1536"),
# BENCH_UPDATE_KEYS ("id none filter"),
# BENCH_UPDATE_SINGLE (2000), BENCH_SHARED_BUFFERS (2GB),
# BENCH_UPDATE_LABEL (printed in the header), BENCH_UPDATE_SERVERS.
set -euo pipefail

rows=${BENCH_UPDATE_ROWS:-10000}
dims=${BENCH_UPDATE_DIMS:-128 1536}
kinds=${BENCH_UPDATE_KEYS:-id none filter}
single=${BENCH_UPDATE_SINGLE:-2000}
sb=${BENCH_SHARED_BUFFERS:-2GB}
db=${BENCH_UPDATE_DB:-segvec_bench_update}
label=${BENCH_UPDATE_LABEL:-$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --short HEAD 2>/dev/null || echo '?')}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "$(id -u)" = 0 ] && [ "${1:-}" != --inside ]; then
	cd "$here/../.."
	make -s && make -s install
	work=$(mktemp -d /tmp/segvec-bench-update.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	cp "$here/update.sh" "$work/"
	chown -R postgres "$work"
	chmod 755 "$work"
	exec runuser -u postgres -- env BENCH_UPDATE_ROWS="$rows" \
		BENCH_UPDATE_DIMS="$dims" BENCH_UPDATE_SINGLE="$single" \
		BENCH_UPDATE_KEYS="$kinds" \
		BENCH_UPDATE_DB="$db" BENCH_UPDATE_LABEL="$label" \
		pg_virtualenv -o "shared_buffers=$sb" -o max_wal_size=8GB \
		-o checkpoint_timeout=30min -o autovacuum=off \
		-o maintenance_work_mem=1GB \
		bash "$work/update.sh" --inside
fi

servers=${BENCH_UPDATE_SERVERS:-}
psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
val() { psql -At -c "$1"; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
if [ -z "$servers" ]; then
	servers="$label=${PGPORT:-5432}"
fi
for sv in $servers; do
	PGPORT=${sv#*=} psql -d postgres -c "DROP DATABASE IF EXISTS $db" \
		-c "CREATE DATABASE $db"
	PGPORT=${sv#*=} psql -d "$db" -c 'CREATE EXTENSION segvec'
done
export PGDATABASE=$db

echo "UPDATE benchmark ($servers): $rows rows, non-HOT UPDATE of note (btree), segvec index vs none"
first=${servers%% *}
echo "server: $(PGPORT=${first#*=} val 'SHOW server_version'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bulk: UPDATE of every row in one statement; single: $single one-row UPDATEs, one transaction each"
echo "WAL: bytes per updated row (bulk, single); index: the segvec index's size after the round"
echo "index kinds: id = (v) INCLUDE (id); none = (v); filter = (v, grp) INCLUDE (id)"
printf '\n%-8s %5s %-6s %5s %-6s %10s %10s %10s %10s %12s %10s\n' build dim kind round \
	table "bulk ms" "bulk cpu" "single us" "WAL bulk" "WAL single" index

script=$(mktemp)
summary=$(mktemp)
cpufile=$(mktemp)
trap 'rm -f "$script" "$summary" "$cpufile"' EXIT

# round_of(table): "bulk_ms|bulk_cpu_ms|single_us|wal_bulk_per_row|wal_single_per_row"
round_of() {
	local t=$1 w0 w1 w2 ms tps c0 c1 cpu
	psql -c CHECKPOINT
	w0=$(val 'SELECT pg_current_wal_insert_lsn()')
	# wall time, and the backend's CPU time (schedstat: ns on a CPU), which
	# the load of a shared machine disturbs much less
	: > "$cpufile"
	ms=$(psql -At <<EOF
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_PID :pid
SELECT clock_timestamp() AS t0 \gset
\! cut -d' ' -f1 /proc/\$BENCH_PID/schedstat >> $cpufile
UPDATE $t SET note = note + 1;
\! cut -d' ' -f1 /proc/\$BENCH_PID/schedstat >> $cpufile
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric * 1000, 1);
EOF
)
	read -r c0 c1 <<<"$(echo $(cat "$cpufile"))"
	cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
	w1=$(val 'SELECT pg_current_wal_insert_lsn()')
	printf '\\set id random(1, %d)\nUPDATE %s SET note = note + 1 WHERE id = :id;\n' \
		"$rows" "$t" > "$script"
	tps=$(pgbench -n -c 1 -M prepared -t "$single" -f "$script" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	w2=$(val 'SELECT pg_current_wal_insert_lsn()')
	echo "$ms|$cpu|$(awk -v t="$tps" 'BEGIN { printf "%.1f", 1e6 / t }')|$(val "SELECT round(('$w1'::pg_lsn - '$w0') / $rows)")|$(val "SELECT round(('$w2'::pg_lsn - '$w1') / $single)")"
}

for dim in $dims; do
for kind in $kinds; do
	case $kind in
		id) idx="(v) INCLUDE (id)" ;;
		none) idx="(v)" ;;
		filter) idx="(v, grp) INCLUDE (id)" ;;
		*) echo "update.sh: BENCH_UPDATE_KEYS takes id, none, filter" >&2; exit 1 ;;
	esac
	for sv in $servers; do
		export PGPORT=${sv#*=}
		say "dim $dim $kind: ${sv%%=*}: loading $rows rows"
		psql <<EOF
DROP TABLE IF EXISTS vec, plain;
CREATE TABLE vec (id bigint PRIMARY KEY, v real[], note int, grp int);
INSERT INTO vec
	SELECT i, (SELECT array_agg(random()::real) FROM generate_series(1, $dim) j
			   WHERE i > 0), 0, i % 10
	FROM generate_series(1, $rows) i;
CREATE TABLE plain AS SELECT * FROM vec;
ALTER TABLE plain ADD PRIMARY KEY (id);
CREATE INDEX ON vec (note);
CREATE INDEX ON plain (note);
VACUUM ANALYZE vec;
VACUUM ANALYZE plain;
EOF
		say "dim $dim $kind: ${sv%%=*}: CREATE INDEX"
		psql -c "CREATE INDEX vec_v ON vec USING segvec $idx"
		printf '%-8s %5s %-6s %5s %-6s %10s %10s %10s %10s %12s %10s\n' "${sv%%=*}" \
			"$dim" "$kind" 0 vec - - - - - \
			"$(val "SELECT pg_size_pretty(pg_relation_size('vec_v'))")"
	done
	# each round on every server in turn (A B A B), so that the load of
	# the machine falls on all of them alike
	for round in 1 2 3; do
		for sv in $servers; do
			export PGPORT=${sv#*=}
			b=${sv%%=*}
			if [ "$round" = 3 ]; then
				psql -c 'VACUUM vec' -c 'VACUUM plain' \
					-c "SELECT ft.compact('vec_v')" >/dev/null
			fi
			for t in vec plain; do
				say "dim $dim $kind round $round: $b: $t"
				IFS='|' read -r ms cpu us wb ws <<<"$(round_of $t)"
				eval "ms_$t=$ms cpu_$t=$cpu us_$t=$us wb_$t=$wb ws_$t=$ws"
				size=$([ $t = vec ] &&
					val "SELECT pg_size_pretty(pg_relation_size('vec_v'))" || echo -)
				printf '%-8s %5s %-6s %5s %-6s %10s %10s %10s %10s %12s %10s\n' "$b" \
					"$dim" "$kind" "$round" "$t" "$ms" "$cpu" "$us" "$wb" "$ws" "$size"
			done
			rb=$(awk -v a="$ms_vec" -v b="$ms_plain" 'BEGIN { printf "%.2f", a / b }')
			rc=$(awk -v a="$cpu_vec" -v b="$cpu_plain" 'BEGIN { printf "%.2f", a / b }')
			rs=$(awk -v a="$us_vec" -v b="$us_plain" 'BEGIN { printf "%.2f", a / b }')
			printf '%-8s %5s %-6s %5s %-6s %10s %10s %10s\n' "$b" "$dim" "$kind" \
				"$round" ratio "$rb" "$rc" "$rs"
			echo "$dim $kind $round $b $rb $rc $rs $wb_vec $wb_plain $ws_vec $ws_plain $cpu_vec" \
				>> "$summary"
		done
	done
done
done

echo
echo "summary: ratio vec/plain (bulk wall time, bulk CPU time, single); WAL bytes per updated row, vec / plain (bulk, single); vec's bulk CPU time against the first build's"
printf '%5s %-6s %5s %-8s %6s %6s %6s %15s %15s %8s\n' dim kind round build bulk \
	"cpu" single "WAL bulk" "WAL single" "vs first"
awk '{ k = $1 " " $2 " " $3; if (!(k in first)) first[k] = $12;
	   printf "%5s %-6s %5s %-8s %6s %6s %6s %7s / %-5s %7s / %-5s %8.2f\n",
			  $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 / first[k] }' "$summary"

#!/usr/bin/env bash
# insert.sh: the insert benchmark -- what does an INSERT into a table with
# a segvec index cost the inserting backend, in WAL bytes and CPU time,
# against the same INSERT into the table without the index?  Only the
# insert path: segvec is not preloaded, so no background compaction or
# merge runs and every doc stays in the mutable segment.
#
# As root: builds segvec and installs it into the private PostgreSQL
# installation SEGVEC_PG_PREFIX (test/pg-prefix.sh; required, so that
# nothing is installed into the system's), then runs itself as the
# postgres user against a throwaway cluster of that installation
# (shared_buffers = BENCH_SHARED_BUFFERS, 1GB; max_wal_size 8GB,
# checkpoint_timeout 30min, autovacuum off; segvec not preloaded).  As
# another user it runs against the server the libpq environment points at
# (which must not run segvec's background workers: not preloaded, or
# segvec.max_workers = 0), in database BENCH_INSERT_DB (default
# segvec_bench_insert, dropped and recreated); it needs pg_walinspect and
# pageinspect there.
#
# The load, per dimension of BENCH_INSERT_DIMS ("784 128"): BENCH_INSERT_ROWS
# (5,000) rows (id bigint, embedding real[]) in a source table stored
# uncompressed (STORAGE PLAIN, so the index gets the vector as a client's
# parsed literal would be): at 784 dimensions the first Fashion-MNIST
# training images (test/fmnist.py, 3,136-byte vectors), else random floats
# in [0, 1).  Then, for each table kind -- "plain" (no index) and each of
# BENCH_INSERT_KEYS ("id none": segvec (embedding) INCLUDE (id), and
# segvec (embedding)) -- and each mode, into a fresh empty table (the
# index made empty), after a CHECKPOINT:
#   single  every row in its own transaction (a procedure's loop of
#           INSERT ... SELECT one row by id, COMMIT), synchronous_commit off;
#   multi   one INSERT ... SELECT of every row, one transaction.
# Prints per run the inserting backend's CPU time per row (from
# /proc/PID/schedstat, which the load of a shared machine disturbs less
# than wall time; the server must run on this machine), wall time per row,
# all WAL bytes per row, and the index's size; for the runs with an index,
# its WAL per row by record kind (pg_walinspect): each record that touches
# the index is named by the kinds of its index pages (pageinspect, read
# after the run: meta, mutable, keymap), with its count, bytes and
# full-page-image bytes per row; other records by resource manager and
# type.  Ends with a summary: per dimension and mode, CPU time and WAL per
# row of each kind against "plain".
#
# To compare builds in one run, interleaved: start one server per build
# (each with its build installed, segvec not preloaded) and run this script
# as a non-root user with
#   BENCH_INSERT_SERVERS="main=5481 branch=5482"
# (labels and ports, host from PGHOST): each run then goes to each server
# in turn, BENCH_INSERT_ROUNDS (1) times; the summary has a line per
# server and round.
#
# Knobs: BENCH_INSERT_ROWS (5000), BENCH_INSERT_DIMS ("784 128"),
# BENCH_INSERT_KEYS ("id none"), BENCH_INSERT_MODES ("single multi"),
# BENCH_INSERT_ROUNDS (1), BENCH_SHARED_BUFFERS (1GB), BENCH_INSERT_LABEL
# (printed in the header), BENCH_INSERT_SERVERS.
set -euo pipefail

rows=${BENCH_INSERT_ROWS:-5000}
dims=${BENCH_INSERT_DIMS:-784 128}
keys=${BENCH_INSERT_KEYS:-id none}
modes=${BENCH_INSERT_MODES:-single multi}
rounds=${BENCH_INSERT_ROUNDS:-1}
sb=${BENCH_SHARED_BUFFERS:-1GB}
db=${BENCH_INSERT_DB:-segvec_bench_insert}
label=${BENCH_INSERT_LABEL:-$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --short HEAD 2>/dev/null || echo '?')}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "$(id -u)" = 0 ] && [ "${1:-}" != --inside ]; then
	if [ -z "${SEGVEC_PG_PREFIX:-}" ]; then
		echo "insert.sh: as root, set SEGVEC_PG_PREFIX (a private installation, test/pg-prefix.sh)" >&2
		exit 1
	fi
	cd "$here/../.."
	. test/pg-prefix.sh
	make -s && make -s install
	work=$(mktemp -d /tmp/segvec-bench-insert.XXXXXX)
	chown postgres "$work"
	chmod 755 "$work"
	cp "$here/insert.sh" "$here/../fmnist.py" "$work/"
	port=$((20000 + RANDOM % 20000))
	pg() { runuser -u postgres -- "$@"; }
	pg "$pg_bindir/initdb" -A trust -E UTF8 --locale=C.UTF-8 -D "$work/data" >/dev/null
	pg "$pg_bindir/pg_ctl" -D "$work/data" -l "$work/log" -w start -o \
		"-p $port -k $work -c listen_addresses= -c shared_buffers=$sb -c max_wal_size=8GB -c checkpoint_timeout=30min -c autovacuum=off" >/dev/null
	trap 'pg "$pg_bindir/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null; rm -rf "$work"' EXIT
	pg env PATH="$pg_bindir:$PATH" PGHOST="$work" PGPORT="$port" \
		PGUSER=postgres BENCH_INSERT_ROWS="$rows" BENCH_INSERT_DIMS="$dims" \
		BENCH_INSERT_KEYS="$keys" BENCH_INSERT_MODES="$modes" \
		BENCH_INSERT_ROUNDS="$rounds" \
		BENCH_INSERT_DB="$db" BENCH_INSERT_LABEL="$label" \
		BENCH_INSERT_FMNIST="$work/fmnist.py" \
		bash "$work/insert.sh" --inside
	exit
fi

fmnist=${BENCH_INSERT_FMNIST:-$here/../fmnist.py}
psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
val() { psql -At -c "$1"; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

servers=${BENCH_INSERT_SERVERS:-$label=${PGPORT:-5432}}
for sv in $servers; do
	export PGPORT=${sv#*=}
	psql -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
	psql -d "$db" <<'EOF'
CREATE EXTENSION segvec;
CREATE EXTENSION pg_walinspect;
CREATE EXTENSION pageinspect;
-- the kind of an index page: its opaque flags (src/store/format.h)
CREATE FUNCTION page_kind(idx regclass, blk bigint) RETURNS text
LANGUAGE sql AS $$
	SELECT CASE WHEN blk = 0 THEN 'meta'
		WHEN flags & 2 <> 0 THEN 'mutable'
		WHEN flags & 32 <> 0 THEN 'keymap'
		ELSE 'other' END
	FROM (SELECT get_byte(p, s + 4) | (get_byte(p, s + 5) << 8) AS flags
		  FROM (SELECT p, get_byte(p, 16) | (get_byte(p, 17) << 8) AS s
				FROM get_raw_page(idx::text, blk::int) p) x) y
$$;
EOF
done
export PGDATABASE=$db
first=${servers%% *}

echo "insert benchmark ($servers): $rows rows per run, into an empty table; segvec not preloaded (no background work)"
echo "server: $(PGPORT=${first#*=} val 'SHOW server_version'), shared_buffers $(PGPORT=${first#*=} val 'SHOW shared_buffers'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "single: one row per transaction (synchronous_commit off); multi: one INSERT ... SELECT of all rows"
echo "kinds: plain = no index; id = segvec (embedding) INCLUDE (id); none = segvec (embedding)"

cpufile=$(mktemp)
summary=$(mktemp)
trap 'rm -f "$cpufile" "$summary"' EXIT

# run_one(kind, mode): one run on the server PGPORT names; prints its line
# (and, with an index, its WAL by record kind) and adds it to the summary
run_one() {
	local kind=$1 mode=$2 idx stmt out wall w0 w1 c0 c1 cpu wal size
	case $kind in
		plain) idx= ;;
		id) idx="CREATE INDEX t_idx ON t USING segvec (embedding) INCLUDE (id)" ;;
		none) idx="CREATE INDEX t_idx ON t USING segvec (embedding)" ;;
		*) echo "insert.sh: BENCH_INSERT_KEYS takes id, none" >&2; exit 1 ;;
	esac
	psql -c "DROP TABLE IF EXISTS t" \
		-c "CREATE TABLE t (id bigint, embedding real[])" \
		${idx:+-c "$idx"} \
		-c "CREATE OR REPLACE PROCEDURE ins_single(n int) LANGUAGE plpgsql AS \$\$
			BEGIN
				FOR i IN 1 .. n LOOP
					INSERT INTO t SELECT id, embedding FROM src WHERE id = i;
					COMMIT;
				END LOOP;
			END \$\$" \
		-c CHECKPOINT
	if [ "$mode" = single ]; then
		stmt="CALL ins_single($rows)"
	else
		stmt="INSERT INTO t SELECT id, embedding FROM src"
	fi
	: > "$cpufile"
	out=$(psql -At <<EOF
SET synchronous_commit = off;
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_PID :pid
SELECT pg_current_wal_insert_lsn() AS w0 \gset
SELECT clock_timestamp() AS t0 \gset
\! cut -d' ' -f1 /proc/\$BENCH_PID/schedstat >> $cpufile
$stmt;
\! cut -d' ' -f1 /proc/\$BENCH_PID/schedstat >> $cpufile
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric * 1e6 / $rows, 1),
	:'w0', pg_current_wal_insert_lsn();
EOF
)
	IFS='|' read -r wall w0 w1 <<<"$out"
	read -r c0 c1 <<<"$(echo $(cat "$cpufile"))"
	cpu=$(awk -v a="$c0" -v b="$c1" -v n="$rows" 'BEGIN { printf "%.1f", (b - a) / 1e3 / n }')
	wal=$(val "SELECT round(('$w1'::pg_lsn - '$w0') / $rows.0)")
	size=$([ -n "$idx" ] &&
		val "SELECT pg_size_pretty(pg_relation_size('t_idx'))" || echo -)
	printf '%-10s %5s %-6s %-6s %10s %10s %10s %10s\n' "$server" "$round" \
		"$kind" "$mode" "$cpu" "$wall" "$wal" "$size"
	echo "$dim $mode $server $round $kind $cpu $wal" >> "$summary"
	[ -n "$idx" ] || return 0
	# the run's WAL by record kind, per row (pg_walinspect reads only
	# flushed WAL: wait for the WAL writer)
	until [ "$(val "SELECT pg_current_wal_flush_lsn() >= '$w1'")" = t ]; do
		sleep 0.1
	done
	psql -At -F ' ' <<EOF | awk '{ printf "       %-34s %8s %8s %8s\n", $1, $2, $3, $4 }'
WITH idx AS (SELECT pg_relation_filenode('t_idx') AS node),
recs AS (SELECT start_lsn, resource_manager, record_type, record_length,
				fpi_length, block_ref
		 FROM pg_get_wal_records_info('$w0', '$w1')),
blocks AS (SELECT r.start_lsn, m[1]::bigint AS blk
		   FROM recs r, idx,
				regexp_matches(r.block_ref,
							   'rel [0-9]+/[0-9]+/' || idx.node || '(?: fork main)? blk ([0-9]+)',
							   'g') m),
kinds AS (SELECT start_lsn,
				 string_agg(DISTINCT page_kind('t_idx', blk), '+') AS kind
		  FROM blocks GROUP BY start_lsn),
named AS (SELECT coalesce('segvec:' || k.kind,
						  r.resource_manager || ':' || r.record_type) AS kind,
				 r.record_length, r.fpi_length
		  FROM recs r LEFT JOIN kinds k USING (start_lsn))
SELECT 'kind', 'records', 'bytes', 'FPI'
UNION ALL
(SELECT kind, round(count(*) / $rows.0, 3)::text,
		round(sum(record_length) / $rows.0, 1)::text,
		round(sum(fpi_length) / $rows.0, 1)::text
 FROM named GROUP BY kind ORDER BY sum(record_length) DESC);
EOF
}

for dim in $dims; do
	for sv in $servers; do
		export PGPORT=${sv#*=}
		say "dim $dim: ${sv%%=*}: loading $rows rows"
		psql -c "DROP TABLE IF EXISTS src" \
			-c "CREATE TABLE src (id bigint PRIMARY KEY, embedding real[])" \
			-c "ALTER TABLE src ALTER embedding SET STORAGE PLAIN"
		if [ "$dim" = 784 ]; then
			python3 "$fmnist" train "$rows" | psql -c "COPY src FROM STDIN"
		else
			# the same rows on every server
			psql -c "SELECT setseed(0.5)" -c "INSERT INTO src SELECT i,
				(SELECT array_agg(random()::real) FROM generate_series(1, $dim) j
				 WHERE i > 0) FROM generate_series(1, $rows) i"
		fi
		psql -c "VACUUM ANALYZE src"
	done
	echo
	echo "dim $dim (vector $((dim * 4)) bytes)"
	printf '%-10s %5s %-6s %-6s %10s %10s %10s %10s\n' server round kind mode \
		"cpu us" "wall us" "WAL B" index
	for round in $(seq 1 "$rounds"); do
		for mode in $modes; do
			for kind in plain $keys; do
				# each run on every server in turn, so that the load of
				# the machine falls on all of them alike
				for sv in $servers; do
					export PGPORT=${sv#*=}
					server=${sv%%=*}
					say "dim $dim round $round $mode: $server: $kind"
					run_one "$kind" "$mode"
				done
			done
		done
	done
done

echo
echo "summary: per row, against plain on the same server and round: CPU time (us, and the ratio) and WAL bytes (and the difference)"
awk '
	$5 == "plain" { k = $1 " " $2 " " $3 " " $4; pc[k] = $6; pw[k] = $7; next }
	{
		k = $1 " " $2 " " $3 " " $4
		printf "dim %4s %-6s %-10s round %s %-5s cpu %7.1f us (plain %6.1f, %.2fx)  WAL %6d B (plain %6d, +%d)\n",
			$1, $2, $3, $4, $5, $6, pc[k], $6 / pc[k], $7, pw[k], $7 - pw[k]
	}' "$summary"

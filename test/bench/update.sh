#!/usr/bin/env bash
# update.sh: the UPDATE benchmark of issue 11 -- what does a non-HOT UPDATE
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
# For each dimension (128 and 1,536): BENCH_UPDATE_ROWS (10,000) rows
# (id bigint primary key, v real[] of random floats, note int with a btree,
# so that an UPDATE of note is not HOT) in table "vec" with a segvec index
# INCLUDE (id) built by CREATE INDEX (its docs are in graph segments), and
# the same rows in table "plain" without it.  Then three rounds; in each,
# for both tables, a CHECKPOINT (so both pay the same full-page images) and
# then
#   - "bulk": UPDATE t SET note = note + 1 (every row, one statement and
#     transaction), its time;
#   - "single": BENCH_UPDATE_SINGLE (2,000) single-row UPDATEs of random
#     ids, each its own transaction (pgbench -c 1 -M prepared), their time
#     per UPDATE;
#   - the WAL per updated row, and the growth of the segvec index.
# Round 0 is the index after CREATE INDEX.  Rounds 1 and 2 follow each other (round 2 updates rows already updated
# once); before round 3, VACUUM of both tables and ft.compact of the index
# (what background work leaves).  Prints each round's figures and the ratio
# vec/plain.
#
# Run it once with main's build installed and once with this branch's to
# compare builds (each run builds and installs the tree it is in).
#
# Knobs: BENCH_UPDATE_ROWS (10000), BENCH_UPDATE_DIMS ("128 1536"),
# BENCH_UPDATE_SINGLE (2000), BENCH_SHARED_BUFFERS (2GB),
# BENCH_UPDATE_LABEL (printed in the header).
set -euo pipefail

rows=${BENCH_UPDATE_ROWS:-10000}
dims=${BENCH_UPDATE_DIMS:-128 1536}
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
		BENCH_UPDATE_DB="$db" BENCH_UPDATE_LABEL="$label" \
		pg_virtualenv -o "shared_buffers=$sb" -o max_wal_size=8GB \
		-o checkpoint_timeout=30min -o autovacuum=off \
		-o maintenance_work_mem=1GB \
		bash "$work/update.sh" --inside
fi

psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
psql -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
val() { psql -At -c "$1"; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

psql -c 'CREATE EXTENSION segvec'

echo "UPDATE benchmark ($label): $rows rows, non-HOT UPDATE of note (btree), segvec index vs none"
echo "server: $(val 'SHOW server_version'), shared_buffers $(val 'SHOW shared_buffers'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bulk: UPDATE of every row in one statement; single: $single one-row UPDATEs, one transaction each"
echo "WAL: bytes per updated row (bulk, single); index: the segvec index's size after the round"
printf '\n%5s %5s %-6s %10s %10s %10s %12s %10s\n' dim round table "bulk ms" "single us" \
	"WAL bulk" "WAL single" index

script=$(mktemp)
trap 'rm -f "$script"' EXIT

# round_of(table): "bulk_ms|single_us|wal_bulk_per_row|wal_single_per_row"
round_of() {
	local t=$1 w0 w1 w2 ms tps
	psql -c CHECKPOINT
	w0=$(val 'SELECT pg_current_wal_insert_lsn()')
	ms=$(psql -At <<EOF
SELECT clock_timestamp() AS t0 \gset
UPDATE $t SET note = note + 1;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric * 1000, 1);
EOF
)
	w1=$(val 'SELECT pg_current_wal_insert_lsn()')
	printf '\\set id random(1, %d)\nUPDATE %s SET note = note + 1 WHERE id = :id;\n' \
		"$rows" "$t" > "$script"
	tps=$(pgbench -n -c 1 -M prepared -t "$single" -f "$script" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	w2=$(val 'SELECT pg_current_wal_insert_lsn()')
	echo "$ms|$(awk -v t="$tps" 'BEGIN { printf "%.1f", 1e6 / t }')|$(val "SELECT round(('$w1'::pg_lsn - '$w0') / $rows)")|$(val "SELECT round(('$w2'::pg_lsn - '$w1') / $single)")"
}

for dim in $dims; do
	say "dim $dim: loading $rows rows"
	psql <<EOF
DROP TABLE IF EXISTS vec, plain;
CREATE TABLE vec (id bigint PRIMARY KEY, v real[], note int);
INSERT INTO vec
	SELECT i, (SELECT array_agg(random()::real) FROM generate_series(1, $dim) j
			   WHERE i > 0), 0
	FROM generate_series(1, $rows) i;
CREATE TABLE plain AS SELECT * FROM vec;
ALTER TABLE plain ADD PRIMARY KEY (id);
CREATE INDEX ON vec (note);
CREATE INDEX ON plain (note);
VACUUM ANALYZE vec;
VACUUM ANALYZE plain;
EOF
	say "dim $dim: CREATE INDEX"
	psql -c "CREATE INDEX vec_v ON vec USING segvec (v) INCLUDE (id)"
	printf '%5s %5s %-6s %10s %10s %10s %12s %10s\n' "$dim" 0 vec - - - - \
		"$(val "SELECT pg_size_pretty(pg_relation_size('vec_v'))")"
	for round in 1 2 3; do
		if [ "$round" = 3 ]; then
			psql -c 'VACUUM vec' -c 'VACUUM plain' -c "SELECT ft.compact('vec_v')" >/dev/null
		fi
		for t in vec plain; do
			say "dim $dim round $round: $t"
			IFS='|' read -r ms us wb ws <<<"$(round_of $t)"
			eval "ms_$t=$ms us_$t=$us"
			size=$([ $t = vec ] && val "SELECT pg_size_pretty(pg_relation_size('vec_v'))" || echo -)
			printf '%5s %5s %-6s %10s %10s %10s %12s %10s\n' "$dim" "$round" "$t" \
				"$ms" "$us" "$wb" "$ws" "$size"
		done
		printf '%5s %5s %-6s %10s %10s\n' "$dim" "$round" ratio \
			"$(awk -v a="$ms_vec" -v b="$ms_plain" 'BEGIN { printf "%.2f", a / b }')" \
			"$(awk -v a="$us_vec" -v b="$us_plain" 'BEGIN { printf "%.2f", a / b }')"
	done
done

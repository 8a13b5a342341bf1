#!/usr/bin/env bash
# bound.sh: what the shared bound across segments (segvec.shared_bound)
# saves on a streamed-into index, per quantization.
#
# Runs against the server the libpq environment points at (as a user that
# may create databases; the server must run on this machine, since backend
# CPU time is read from /proc/PID/schedstat).  For each quantization in
# BENCH_BOUND_QUANT (default "none sq8"): Fashion-MNIST's first
# BENCH_BOUND_ROWS (20,000) training images, an index built on the first
# half, the rest inserted in BENCH_BOUND_BATCHES (5) batches, each followed
# by ft.compact (so the index holds several segments, as the merge policy
# leaves them); then BENCH_BOUND_QUERIES (200) test images at ef_search 10,
# 20 and 40, with the bound on and off, interleaved, BENCH_BOUND_ROUNDS (3)
# rounds.  Prints per case: recall@10 against the exact answer, index
# buffer accesses per query, and backend CPU ms per query (each round's
# figure; the lowest is the least disturbed by a busy machine).
#
# Needs dataset-fashion-mnist (test/fmnist.py reads it).
set -euo pipefail

rows=${BENCH_BOUND_ROWS:-20000}
batches=${BENCH_BOUND_BATCHES:-5}
nq=${BENCH_BOUND_QUERIES:-200}
rounds=${BENCH_BOUND_ROUNDS:-3}
quants=${BENCH_BOUND_QUANT:-none sq8}
db=${BENCH_BOUND_DB:-segvec_bench_bound}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fmnist="$here/../fmnist.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
p() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

p -c 'CREATE EXTENSION segvec' -c 'CREATE EXTENSION pg_prewarm' \
  -c 'CREATE TABLE base (id int PRIMARY KEY, embedding real[]) WITH (autovacuum_enabled = off)' \
  -c 'CREATE TABLE q (qid int PRIMARY KEY, v real[])' \
  -c 'ALTER TABLE q ALTER v SET STORAGE PLAIN'
python3 "$fmnist" train "$rows" | p -c 'COPY base FROM STDIN'
python3 "$fmnist" test "$nq" | p -c 'COPY q FROM STDIN'
# the exact answers
p -c "CREATE TABLE truth AS SELECT qid, ARRAY(SELECT b.id FROM base b
        ORDER BY b.embedding <-> q.v, b.id LIMIT 10) AS ids FROM q"

half=$((rows / 2))
step=$(( (rows - half + batches - 1) / batches ))
for quant in $quants; do
	t=items_$quant
	p -c "CREATE TABLE $t (id int PRIMARY KEY, embedding real[]) WITH (autovacuum_enabled = off)" \
	  -c "ALTER TABLE $t ALTER embedding SET STORAGE PLAIN" \
	  -c "INSERT INTO $t SELECT * FROM base WHERE id <= $half" \
	  -c "CREATE INDEX ${t}_idx ON $t USING segvec (embedding) WITH (quantization = '$quant')"
	lo=$half
	while [ "$lo" -lt "$rows" ]; do
		hi=$((lo + step))
		p -c "INSERT INTO $t SELECT * FROM base WHERE id > $lo AND id <= $hi" \
		  -c "SELECT ft.compact('${t}_idx')" >/dev/null
		lo=$hi
	done
	p -c "VACUUM ANALYZE $t" -c "SELECT pg_prewarm('${t}_idx')" -c "SELECT pg_prewarm('$t')" >/dev/null
	# every query once: mean recall@10 and index buffer accesses (static
	# SQL: one cached plan, as a prepared statement)
	p <<EOF
CREATE FUNCTION run_$quant(OUT recall float8, OUT bufs bigint)
LANGUAGE plpgsql AS \$\$
DECLARE
    r record;
    got int[];
    b0 bigint := pg_stat_get_xact_blocks_fetched('${t}_idx'::regclass);
BEGIN
    recall := 0;
    FOR r IN SELECT q.qid, q.v, t.ids FROM q JOIN truth t USING (qid) ORDER BY qid LOOP
        got := ARRAY(SELECT id FROM $t ORDER BY embedding <-> r.v LIMIT 10);
        recall := recall + (SELECT count(*) FROM unnest(got) g WHERE g = ANY (r.ids)) / 10.0;
    END LOOP;
    recall := recall / (SELECT count(*) FROM q);
    bufs := pg_stat_get_xact_blocks_fetched('${t}_idx'::regclass) - b0;
END
\$\$;
EOF
	echo "$quant: $(p -At -c "SELECT num_segments || ' segments (' || immutable_docs || ' docs), mutable ' || mutable_docs FROM ft.info('${t}_idx')")"
done

printf '%-6s %4s %-5s %7s %9s %s\n' quant ef bound recall bufs/q "CPU ms/q per round"
for quant in $quants; do
	t=items_$quant
	for ef in 10 20 40; do
		declare -A cpu=() res=()
		for round in $(seq "$rounds"); do
			for bound in on off; do
				out=$(p -At -F ' ' <<EOF
SET enable_seqscan = off;
SET segvec.ef_search = $ef;
SET segvec.shared_bound = $bound;
SELECT pg_backend_pid() AS pid \gset
SELECT * FROM run_$quant();
\o $tmp/before
SELECT pg_read_file('/proc/' || :pid || '/schedstat');
\o
SELECT * FROM run_$quant();
\o $tmp/after
SELECT pg_read_file('/proc/' || :pid || '/schedstat');
\o
EOF
)
				line=$(echo "$out" | tail -1)
				b=$(awk '{print $1}' "$tmp/before")
				a=$(awk '{print $1}' "$tmp/after")
				ms=$(awk -v a="$a" -v b="$b" -v n="$nq" 'BEGIN { printf "%.3f", (a - b) / 1e6 / n }')
				cpu[$bound]="${cpu[$bound]:-} $ms"
				res[$bound]=$line
			done
		done
		for bound in on off; do
			read -r recall bufs <<<"${res[$bound]}"
			printf '%-6s %4s %-5s %7.4f %9.1f %s\n' "$quant" "$ef" "$bound" "$recall" \
				"$(awk -v b="$bufs" -v n="$nq" 'BEGIN { print b / n }')" "${cpu[$bound]}"
		done
		unset cpu res
	done
done
psql -X -q -d postgres -c "DROP DATABASE $db"

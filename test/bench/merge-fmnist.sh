#!/bin/bash
# merge-fmnist.sh: time and memory of a merge of four 10,000-doc segments of
# Fashion-MNIST (784 dimensions) into one, and recall@10 of the merged
# segment against a fresh CREATE INDEX on the same rows.
#
# Usage: test/bench/merge-fmnist.sh PSQL-ARGS...   (a server with segvec
# installed and segvec.max_workers = 0; e.g. -h /tmp -p 5432 -d postgres)
# MWM (maintenance_work_mem for the merge, default 64MB), EF (ef_search,
# default 40), INMEM (segvec.merge_in_memory, left alone if unset).  Peak memory is the backend's anonymous (private) memory,
# sampled every 20 ms from /proc/PID/smaps_rollup while the merge runs (so
# the server must run on this machine, readable by the caller).
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
MWM=${MWM:-64MB}
EF=${EF:-40}
P="psql -X -q -At $*"

$P -c "DROP TABLE IF EXISTS fm, fm_src, fm_fresh, fm_q" -c "CREATE EXTENSION IF NOT EXISTS segvec"
$P -c "CREATE TABLE fm (id int PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off)"
$P -c "CREATE TABLE fm_q (id int PRIMARY KEY, v real[])"
python3 "$here/test/fmnist.py" train 40000 | $P -c "COPY fm (id, v) FROM STDIN"
python3 "$here/test/fmnist.py" test 200 | $P -c "COPY fm_q (id, v) FROM STDIN"
$P -c "CREATE TABLE fm_fresh AS SELECT * FROM fm"
$P -c "ALTER TABLE fm RENAME TO fm_src" -c "CREATE TABLE fm (id int PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off)" \
   -c "CREATE INDEX fm_v ON fm USING segvec (v) INCLUDE (id) WITH (compact_threshold = 10000)"

# four segments of 10,000 (the fourth compaction merges them)
for b in 0 1 2; do
	$P -c "INSERT INTO fm SELECT * FROM fm_src WHERE id > $b * 10000 AND id <= ($b + 1) * 10000"
	t0=$(date +%s.%N)
	$P -c "SET maintenance_work_mem = '$MWM'" -c "SELECT ft.compact('fm_v')" >/dev/null
	echo "compaction $((b + 1)) (10,000 docs, no merge): $(echo "$(date +%s.%N) - $t0" | bc) s"
done
$P -c "INSERT INTO fm SELECT * FROM fm_src WHERE id > 30000"

# the fourth compaction (10,000 docs) and the merge, in a backend we watch
fifo=$(mktemp -u); mkfifo "$fifo"
args=(-c "SET maintenance_work_mem = '$MWM'" -c "SET client_min_messages = debug1")
[ -n "$INMEM" ] && args+=(-c "SET segvec.merge_in_memory = $INMEM")
( $P "${args[@]}" -c "SELECT pg_backend_pid()" -c "\\timing on" \
     -c "SELECT * FROM ft.compact('fm_v')" > "$fifo" 2>&1 ) &
exec 3< "$fifo"
read -r pid <&3
peak=0
while kill -0 $! 2>/dev/null; do
	a=$(awk '/^Anonymous:/ {print $2}' /proc/$pid/smaps_rollup 2>/dev/null || echo 0)
	[ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
	sleep 0.02
done
out=$(cat <&3); exec 3<&-; rm -f "$fifo"
echo "$out" | grep -E "segvec merge of|Time:|^\(" | sed 's/^/  /'
echo "peak anonymous memory of the backend: $peak kB"
$P -c "SELECT 'segments', num_segments, num_docs FROM ft.info('fm_v')"

# the same rows freshly indexed
t0=$(date +%s.%N)
$P -c "SET maintenance_work_mem = '256MB'" -c "CREATE INDEX fm_fresh_v ON fm_fresh USING segvec (v) INCLUDE (id)"
echo "fresh CREATE INDEX: $(echo "$(date +%s.%N) - $t0" | bc) s"

recall() {
	$P -c "SET segvec.ef_search = $EF" -c "SET enable_seqscan = off" -c "
CREATE TEMP TABLE got AS SELECT q.id AS qid, ARRAY(SELECT id FROM $1 ORDER BY v <-> q.v LIMIT 10) AS ids FROM fm_q q;
SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE exact AS SELECT q.id AS qid, ARRAY(SELECT id FROM $1 ORDER BY l2_distance(v, q.v) LIMIT 10) AS ids FROM fm_q q;
SELECT round(avg((SELECT count(*) FROM unnest(g.ids) x WHERE x = ANY (e.ids)) / 10.0), 4) FROM got g JOIN exact e USING (qid);"
}
echo "recall@10 at ef_search $EF: merged $(recall fm), fresh $(recall fm_fresh)"

#!/usr/bin/env bash
# merge.sh: the merge-insert benchmark: does the cost of
# merging a batch grow with the batch or with the table?
#
# As root: builds and installs segvec, then runs itself as the postgres user
# in a throwaway cluster (pg_virtualenv, shared_buffers=2GB so the tables
# stay in memory).  As another user it runs against the server the libpq
# environment (PGHOST, PGPORT, ...) points at, in database
# BENCH_MERGE_DB (default segvec_bench_merge, dropped and recreated).
#
# For each base table size (10,000, 100,000, 1,000,000 rows of synthetic
# 128-dim real[] vectors, generated in SQL), with a segvec index
# INCLUDE (id) that keeps every doc in its mutable segment (compact_threshold
# above the table size, so no compaction or graph build runs during the
# merges and a merge's index work is one append per row):
#
#   - "none": BENCH_MERGE_RUNS merges of 500 rows (half existing ids, half
#     new) with ft.merge and segvec.index_before_merge = off, each in its
#     own transaction (commit included in the time), after one untimed
#     warm-up merge in the same backend;
#   - then CREATE UNIQUE INDEX on id (its time is printed), and the same
#     merges again: "btree" (before each, the table and its indexes are
#     loaded into shared buffers with pg_prewarm: the steady state of a
#     table in use);
#   - for each: the median time per merge; the median time of the join
#     alone (the MERGE's source joined to the table, read only, planned as
#     ft.merge plans it: what grows with the table without the btree); the
#     WAL per merge (the writes: a merge that updates rows on pages not
#     written since the last checkpoint logs full-page images, and in a big
#     table nearly every page it touches is such a page); the plan ft.merge
#     ran; and the peak memory of the merging backend (VmHWM of
#     /proc/<pid>/status, read by the backend itself after its merges; it
#     counts the shared buffers the backend touched as well as its own
#     memory, which is why RssAnon, the backend's private memory at the
#     end, is printed beside it).
#
# Ends with the ratios largest/smallest table of the time per merge and of
# the join alone: with the btree the join stays flat, without it it grows
# with the table.
#
# Knobs: BENCH_MERGE_SIZES ("10000 100000 1000000"), BENCH_MERGE_RUNS (5),
# BENCH_MERGE_BATCH (500), BENCH_MERGE_DIM (128), BENCH_SHARED_BUFFERS (2GB),
# BENCH_FULL_PAGE_WRITES (on; off shows the merge without the full-page
# images, i.e. what of its growth with the table is the WAL's).
set -euo pipefail

sizes=${BENCH_MERGE_SIZES:-10000 100000 1000000}
runs=${BENCH_MERGE_RUNS:-5}
batch=${BENCH_MERGE_BATCH:-500}
dim=${BENCH_MERGE_DIM:-128}
sb=${BENCH_SHARED_BUFFERS:-2GB}
fpw=${BENCH_FULL_PAGE_WRITES:-on}
db=${BENCH_MERGE_DB:-segvec_bench_merge}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "$(id -u)" = 0 ] && [ "${1:-}" != --inside ]; then
	cd "$here/../.."
	make -s && make -s install
	work=$(mktemp -d /tmp/segvec-bench-merge.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	cp "$here/merge.sh" "$work/"
	chown -R postgres "$work"
	chmod 755 "$work"
	exec runuser -u postgres -- env BENCH_MERGE_SIZES="$sizes" \
		BENCH_MERGE_RUNS="$runs" BENCH_MERGE_BATCH="$batch" \
		BENCH_MERGE_DIM="$dim" BENCH_MERGE_DB="$db" \
		pg_virtualenv -o "shared_buffers=$sb" -o max_wal_size=8GB \
		-o checkpoint_timeout=30min -o autovacuum=off \
		-o "full_page_writes=$fpw" \
		bash "$work/merge.sh" --inside
fi

psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
psql -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
val() { psql -At -c "$1"; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

psql <<EOF
CREATE EXTENSION segvec;
CREATE EXTENSION pg_prewarm;

-- warm(tbl): the table and its indexes into shared buffers (an index build
-- writes its pages around them), so a merge meets the steady state of a
-- table in use
CREATE PROCEDURE warm(tbl regclass) LANGUAGE plpgsql AS \$\$
BEGIN
	PERFORM pg_prewarm(tbl);
	PERFORM pg_prewarm(indexrelid) FROM pg_index WHERE indrelid = tbl;
END
\$\$;

-- vec(): a synthetic $dim-dim vector (the merge cost does not depend on it)
CREATE FUNCTION vec() RETURNS real[] LANGUAGE sql VOLATILE AS
	\$\$ SELECT array_agg(random()::real) FROM generate_series(1, $dim) \$\$;

-- pool: 1,000 random vectors; row g of a base table gets pool vector
-- g % 1000 with its first element set to g (quick to generate, all distinct)
CREATE TABLE pool AS SELECT i, vec() AS v FROM generate_series(0, 999) i;

-- bench(base, n, runs): runs 1 + runs merges of $batch rows (half existing
-- ids of 1..n, half new) into base, each committed, the first a warm-up;
-- returns for each of the others the ms of ft.merge and its commit, the ms
-- of the join alone (the MERGE's source joined to the table, read only,
-- planned as ft.merge plans it), and the WAL bytes of the merge; and the
-- join and scans of the plan ft.merge ran
CREATE PROCEDURE bench(base text, n bigint, runs int,
	INOUT ms float8[] DEFAULT NULL, INOUT join_ms float8[] DEFAULT NULL,
	INOUT wal float8[] DEFAULT NULL, INOUT plan text DEFAULT NULL)
LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz;
	jm float8;
	w0 pg_lsn;
	idx regclass := (base || '_emb')::regclass;
	probe boolean := ft.has_key_btree_index(base::regclass, 'id');
BEGIN
	ms := '{}';
	join_ms := '{}';
	wal := '{}';
	CREATE TEMP TABLE IF NOT EXISTS batch (id bigint, embedding real[]);
	FOR r IN 0 .. runs LOOP
		TRUNCATE batch;
		INSERT INTO batch
			SELECT id, vec() FROM (
				SELECT DISTINCT (1 + floor(random() * n))::bigint AS id
				FROM generate_series(1, $batch) LIMIT $batch / 2) e
			UNION ALL
			SELECT nextval('newid'), vec() FROM generate_series(1, $batch - $batch / 2);
		ANALYZE batch;
		SELECT string_agg(trim(p), ' / ') INTO plan
			FROM ft.merge_plan(idx, 'batch') p
			WHERE p ~ ('Join|Nested Loop|Index Scan|Seq Scan on ' || base);
		-- the join alone, under the settings ft.merge uses
		IF probe THEN
			PERFORM set_config('enable_hashjoin', 'off', true);
			PERFORM set_config('enable_mergejoin', 'off', true);
		END IF;
		t0 := clock_timestamp();
		EXECUTE format('SELECT count(t.id) FROM (SELECT DISTINCT ON (1) b.id AS k'
					   ' FROM batch b ORDER BY 1, b.ctid DESC) s'
					   ' LEFT JOIN %I t ON t.id = s.k', base);
		jm := extract(epoch FROM clock_timestamp() - t0)::float8 * 1000;
		COMMIT;
		w0 := pg_current_wal_insert_lsn();
		t0 := clock_timestamp();
		PERFORM ft.merge(idx, 'batch');
		COMMIT;
		IF r > 0 THEN
			ms := ms || extract(epoch FROM clock_timestamp() - t0)::float8 * 1000;
			join_ms := join_ms || jm;
			wal := wal || (pg_current_wal_insert_lsn() - w0)::float8;
		END IF;
	END LOOP;
END
\$\$;

-- the backend's own memory figures, kB
CREATE FUNCTION mem(field text) RETURNS bigint LANGUAGE sql AS
	\$\$ SELECT (regexp_match(pg_read_file('/proc/self/status'),
							 field || ':\s+(\d+) kB'))[1]::bigint \$\$;
EOF

# one merge mode in a fresh backend:
# "ms|join_ms|wal_kB|vmhwm_kB|rssanon_kB|plan" (medians over the runs)
run_mode() {
	local base=$1 n=$2
	psql -At <<EOF
SET segvec.index_before_merge = off;
SET client_min_messages = error;
CALL bench('$base', $n, $runs) \gset
SELECT concat_ws('|',
	(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY m)::numeric, 1)
		FROM unnest(:'ms'::float8[]) m),
	(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY m)::numeric, 2)
		FROM unnest(:'join_ms'::float8[]) m),
	(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY m)::numeric / 1024)
		FROM unnest(:'wal'::float8[]) m),
	mem('VmHWM'), mem('RssAnon'), :'plan');
EOF
}

row() {
	printf '%-10s %-8s %10s %10s %9s kB %7s MB %7s MB\n' "$1" "$2" "$3" "$4" \
		"$5" "$(($6 / 1024))" "$(($7 / 1024))"
}

declare -A t_none t_btree j_none j_btree
echo "merge-insert benchmark: $batch-row batches (half existing ids, half new), $dim-dim vectors,"
echo "$runs merges per line (medians, after a warm-up merge)"
echo "server: $(val 'SHOW server_version'), shared_buffers $(val 'SHOW shared_buffers'), full_page_writes $(val 'SHOW full_page_writes'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ms/merge: ft.merge and its commit; join ms: the MERGE's join alone, read only;"
echo "WAL: per merge; VmHWM: peak RSS of the merging backend (shared buffers it"
echo "touched included); RssAnon: its private memory after the merges"
printf '\n%-10s %-8s %10s %10s %12s %10s %10s\n' "base rows" "id index" "ms/merge" \
	"join ms" "WAL/merge" "VmHWM" "RssAnon"
plans=""
builds=""
for n in $sizes; do
	base=base_$n
	say "loading $n rows"
	psql <<EOF
CREATE TABLE $base (id bigint NOT NULL, embedding real[], note text);
INSERT INTO $base SELECT g, ARRAY[g::real] || p.v[2:$dim], 'row ' || g
	FROM generate_series(1, $n) g JOIN pool p ON p.i = g % 1000;
CREATE INDEX ${base}_emb ON $base USING segvec (embedding) INCLUDE (id)
	WITH (compact_threshold = 2147483647);
DROP SEQUENCE IF EXISTS newid;
CREATE SEQUENCE newid START $((n + 1));
VACUUM ANALYZE $base;
CALL warm('$base');
CHECKPOINT;
EOF
	say "merging without an id index"
	out=$(run_mode "$base" "$n")
	IFS='|' read -r ms jms wal hwm anon plan <<<"$out"
	t_none[$n]=$ms
	j_none[$n]=$jms
	row "$n" none "$ms" "$jms" "$wal" "$hwm" "$anon"
	plans+="  $n rows, no id index: $plan"$'\n'

	say "building the btree"
	build_ms=$(psql -At <<EOF
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
CREATE UNIQUE INDEX ON $base (id);
SELECT round(((extract(epoch FROM clock_timestamp()) - :t0) * 1000)::numeric, 0);
EOF
)
	builds+="  $n rows: $build_ms ms"$'\n'
	psql -c "VACUUM ANALYZE $base" -c "CALL warm('$base')" -c CHECKPOINT

	say "merging with the btree"
	out=$(run_mode "$base" "$n")
	IFS='|' read -r ms jms wal hwm anon plan <<<"$out"
	t_btree[$n]=$ms
	j_btree[$n]=$jms
	row "$n" btree "$ms" "$jms" "$wal" "$hwm" "$anon"
	plans+="  $n rows, btree:       $plan"$'\n'
	psql -c "DROP TABLE $base"
done

first=${sizes%% *}
last=${sizes##* }
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
if [ "$first" != "$last" ]; then
	printf '\nratio %s/%s rows:\n' "$last" "$first"
	printf '  time per merge: no id index %s, btree %s\n' \
		"$(ratio "${t_none[$last]}" "${t_none[$first]}")" \
		"$(ratio "${t_btree[$last]}" "${t_btree[$first]}")"
	printf '  join alone:     no id index %s, btree %s\n' \
		"$(ratio "${j_none[$last]}" "${j_none[$first]}")" \
		"$(ratio "${j_btree[$last]}" "${j_btree[$first]}")"
fi
printf '\nCREATE UNIQUE INDEX on id (what ft.merge builds once):\n%s' "$builds"
printf '\nplans ft.merge ran (join and scans of the base table):\n%s' "$plans"
psql -d postgres -c "DROP DATABASE $db"

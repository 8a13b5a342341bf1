#!/usr/bin/env bash
# demo.sh: what "make demo" runs.  As root: install missing packages, build
# and install segvec, then in a throwaway cluster (pg_virtualenv, as the
# postgres user, shared_preload_libraries=segvec):
#
#   - load the 60,000 Fashion-MNIST training images (784-dim real[]) with COPY;
#   - build a segvec index (vector_l2_ops, INCLUDE (id) for ft.get and
#     ft.similar) and print its build time and size;
#   - run a few test images as queries, by index scan (sequential scans off,
#     so the index is measured whatever the cost model prefers; the scan the
#     planner picks by default is printed too) and by exact scan (index scans
#     off), and print the top-10 ids and distances, recall@10 and latencies.
#
# DEMO_ROWS (default 60000) and DEMO_QUERIES (default 5, at most 10) make it
# smaller or larger.  KEEP=1 (make demo KEEP=1) runs it in a cluster that
# stays, "N/segvec_demo" (pg_createcluster; N the version that
# test/setup.sh installs, the one pg_config names), and ends by printing how to
# connect to it and how to drop it.  If that cluster exists already it is
# left alone and the demo stops, unless REPLACE=1 says to drop it first.
#
# SEGVEC_PG_PREFIX=/tmp/pg-mine, as for make test (test/pg-prefix.sh):
# build and install into a private copy of the PostgreSQL installation and
# run the demo in a throwaway cluster of that copy (initdb, reached only
# through a socket in the demo's temporary directory), leaving the system's
# installation alone; not with KEEP=1, whose cluster is the system's.
set -euo pipefail

rows=${DEMO_ROWS:-60000}
nq=${DEMO_QUERIES:-5}

# --- inside the throwaway cluster, as postgres -------------------------------
if [ "${1:-}" = --inside ]; then
	cd "$(dirname "${BASH_SOURCE[0]}")"
	psql() { command psql -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }

	psql -c 'CREATE EXTENSION segvec' \
		-c 'CREATE TABLE fmnist (id int PRIMARY KEY, embedding real[])' \
		-c 'CREATE TABLE queries (qid int PRIMARY KEY, embedding real[])'

	echo "=== loading $rows Fashion-MNIST training vectors (784 dimensions)"
	t0=$(date +%s.%N)
	python3 fmnist.py train "$rows" |
		psql -c 'COPY fmnist (id, embedding) FROM STDIN'
	t1=$(date +%s.%N)
	python3 fmnist.py test 10 |
		psql -c 'COPY queries (qid, embedding) FROM STDIN'
	psql -c 'VACUUM ANALYZE fmnist' -c 'ANALYZE queries'
	psql -At -c 'SELECT count(*) FROM fmnist' | awk -v t0="$t0" -v t1="$t1" \
		'{ printf "rows loaded: %d in %.1f s (%.0f rows/s)\n", $1, t1 - t0, $1 / (t1 - t0) }'

	psql -v nq="$nq" <<'SQL'
\echo === building the index (maintenance_work_mem = 1GB: one graph segment)
SET maintenance_work_mem = '1GB';
SELECT clock_timestamp() AS t0 \gset
-- INCLUDE (id): the rows' ids in the index, for ft.get and ft.similar
CREATE INDEX fmnist_embedding_idx ON fmnist USING segvec (embedding vector_l2_ops)
	INCLUDE (id);
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 2)
	AS build_s \gset
\echo index build time: :build_s s
SELECT pg_size_pretty(pg_relation_size('fmnist_embedding_idx')) AS "index size",
	pg_size_pretty(pg_relation_size('fmnist')) AS "table size (heap)",
	pg_size_pretty(pg_total_relation_size('fmnist')) AS "table size (total)";
SELECT num_docs, num_segments, mutable_docs, dimensions, metric, m, ef_construction
FROM ft.info('fmnist_embedding_idx');
\echo === ft.similar: the 3 images nearest to image 1 (by its id, no vector passed)
SELECT id, round(distance::numeric, 1) AS distance
FROM ft.similar('fmnist_embedding_idx', '1', 3);

/*
 * One top-10 search, timed.  The index side turns sequential scans off, so
 * it measures the index whatever the cost model prefers; the exact side
 * turns index scans off, leaving a sequential scan and a sort.  EXECUTE
 * plans the query afresh each time, under the settings in force.
 */
CREATE FUNCTION pg_temp.knn(q real[], exact bool,
	OUT ids int[], OUT dists float8[], OUT ms float8)
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
BEGIN
	PERFORM set_config('enable_seqscan', CASE WHEN exact THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_indexscan', CASE WHEN exact THEN 'off' ELSE 'on' END, true);
	PERFORM set_config('enable_bitmapscan', CASE WHEN exact THEN 'off' ELSE 'on' END, true);
	t0 := clock_timestamp();
	EXECUTE 'SELECT array_agg(id), array_agg(distance) FROM
			(SELECT id, embedding <-> $1 AS distance FROM fmnist
			 ORDER BY embedding <-> $1 LIMIT 10) s'
		INTO ids, dists USING q;
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

/* The scan node the planner picks for the k-NN query under the settings in force. */
CREATE FUNCTION pg_temp.planned_scan(q real[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM fmnist
			ORDER BY embedding <-> $1 LIMIT 10' USING q
	LOOP
		IF line ~ 'Scan' THEN
			RETURN regexp_replace(line, '^[ ->]*', '');
		END IF;
	END LOOP;
	RETURN 'no scan node';
END $$;

\echo === plan of the k-NN query (index side: enable_seqscan = off)
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id, embedding <-> (SELECT embedding FROM queries WHERE qid = 1) AS distance
FROM fmnist
ORDER BY embedding <-> (SELECT embedding FROM queries WHERE qid = 1)
LIMIT 10;
RESET enable_seqscan;
SELECT pg_temp.planned_scan(embedding) AS default_scan FROM queries WHERE qid = 1 \gset
\echo scan chosen with default settings: :default_scan

-- warm the caches once, untimed
SELECT count(*) AS warmup FROM queries q,
	LATERAL pg_temp.knn(q.embedding, false) i, LATERAL pg_temp.knn(q.embedding, true) e
WHERE q.qid = 1 \gset

CREATE TEMP TABLE results AS
SELECT q.qid, i.ids AS i_ids, i.dists AS i_dists, i.ms AS i_ms,
	e.ids AS e_ids, e.dists AS e_dists, e.ms AS e_ms,
	(SELECT count(*) FROM unnest(i.ids) x WHERE x = ANY (e.ids)) / 10.0 AS recall
FROM queries q,
	LATERAL pg_temp.knn(q.embedding, false) i,
	LATERAL pg_temp.knn(q.embedding, true) e
WHERE q.qid <= :nq;

\echo === top 10 per query: index scan beside exact scan
SELECT qid AS query, r AS rank,
	i_ids[r] AS "index id", round(i_dists[r]::numeric, 1) AS "index distance",
	e_ids[r] AS "exact id", round(e_dists[r]::numeric, 1) AS "exact distance"
FROM results, generate_series(1, 10) r
ORDER BY qid, r;

\echo === recall and latency
SELECT coalesce(qid::text, 'average') AS query, round(recall, 2) AS "recall@10",
	round(i_ms::numeric, 2) AS "index ms", round(e_ms::numeric, 2) AS "exact ms"
FROM (SELECT qid, recall, i_ms, e_ms FROM results
	  UNION ALL
	  SELECT NULL, avg(recall), avg(i_ms), avg(e_ms) FROM results) s
ORDER BY qid NULLS LAST;
SQL
	exit 0
fi

# --- as root: set up, build, install, start the cluster ----------------------
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

if [ "$(id -u)" != 0 ]; then
	echo "demo.sh: run as root (it installs packages and the extension," \
		"then runs the demo as postgres)" >&2
	exit 1
fi
case $nq in
	[1-9] | 10) ;;
	*) echo "demo.sh: DEMO_QUERIES must be 1..10" >&2; exit 1 ;;
esac

if [ "${KEEP:-}" = 1 ] && [ -n "${SEGVEC_PG_PREFIX:-}" ]; then
	echo "demo.sh: KEEP=1 makes a cluster of the system's installation" \
		"(pg_createcluster); it does not go with SEGVEC_PG_PREFIX" >&2
	exit 1
fi

export LANG=C.UTF-8 LC_ALL=C.UTF-8

# An existing kept demo cluster may hold the user's work: leave it alone
# (before building anything), say how to connect, and succeed.
if [ "${KEEP:-}" = 1 ] && [ "${REPLACE:-}" != 1 ] && command -v pg_lsclusters >/dev/null &&
	pg_lsclusters -h | awk '$2 == "segvec_demo"' | grep -q .; then
	read -r kept port <<<"$(pg_lsclusters -h |
		awk '$2 == "segvec_demo" { print $1 "/" $2, $3; exit }')"
	cat <<EOF
demo: the cluster $kept of an earlier "make demo KEEP=1" exists
(port $port) and may hold your work, so it is left alone.  Connect with
    runuser -u postgres -- psql -p $port
or replace it with a fresh demo:  make demo KEEP=1 REPLACE=1
EOF
	exit 0
fi

bash test/setup.sh
# SEGVEC_PG_PREFIX: a private installation; sets pg_prefix and pg_bindir
. test/pg-prefix.sh
make -j"$(nproc)"
make install
pgver=$("${PG_CONFIG:-pg_config}" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')

# The postgres user may not be able to enter the checkout: run from a copy.
work=$(mktemp -d /tmp/segvec-demo.XXXXXX)
cleanup() {
	if [ -f "$work/data/postmaster.pid" ]; then
		runuser -u postgres -- "$pg_bindir/pg_ctl" -D "$work/data" -m fast \
			stop >/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
cp test/demo.sh test/fmnist.py "$work"/
chmod 755 "$work"
chown -R postgres:postgres "$work"
cd "$work"

if [ "${KEEP:-}" = 1 ]; then
	cluster=segvec_demo
	# a kept cluster of another version (REPLACE=1) goes too
	pg_lsclusters -h | awk -v c="$cluster" '$2 == c { print $1 }' |
		while read -r old; do pg_dropcluster --stop "$old" "$cluster"; done
	pg_createcluster "$pgver" "$cluster" >/dev/null
	pg_conftool "$pgver" "$cluster" set shared_preload_libraries segvec
	pg_conftool "$pgver" "$cluster" set shared_buffers 1GB
	pg_ctlcluster "$pgver" "$cluster" start
	port=$(pg_lsclusters -h | awk -v v="$pgver" -v c="$cluster" '$1 == v && $2 == c { print $3 }')
	DEMO_ROWS=$rows DEMO_QUERIES=$nq PGCLUSTER=$pgver/$cluster runuser -u postgres -- \
		bash "$work/demo.sh" --inside
	cat <<EOF

The cluster stays ($pgver/$cluster, port $port), with the table fmnist
($rows rows of real[784]), its index fmnist_embedding_idx and the test
images in the table queries.  Connect with

    runuser -u postgres -- psql -p $port

and try, for example:

    SELECT id FROM fmnist
    ORDER BY embedding <-> (SELECT embedding FROM queries WHERE qid = 1)
    LIMIT 10;
    SELECT * FROM ft.info('fmnist_embedding_idx');
    SELECT * FROM ft.get('fmnist_embedding_idx', '42');
    SELECT * FROM ft.similar('fmnist_embedding_idx', '42', 5);

Drop it with:  pg_dropcluster --stop $pgver $cluster
EOF
elif [ -n "$pg_prefix" ]; then
	runuser -u postgres -- "$pg_bindir/initdb" -A trust -D "$work/data" >/dev/null
	if ! runuser -u postgres -- "$pg_bindir/pg_ctl" -D "$work/data" -w \
		-l "$work/server.log" -o "-c listen_addresses='' -k $work" \
		-o "-c shared_preload_libraries=segvec -c shared_buffers=1GB" start >/dev/null; then
		cat "$work/server.log" >&2
		exit 1
	fi
	DEMO_ROWS=$rows DEMO_QUERIES=$nq runuser -u postgres -- \
		env PATH="$pg_bindir:$PATH" PGHOST="$work" PGDATABASE=postgres \
		bash "$work/demo.sh" --inside
else
	DEMO_ROWS=$rows DEMO_QUERIES=$nq runuser -u postgres -- \
		pg_virtualenv -v "$pgver" -o shared_preload_libraries=segvec \
		-o shared_buffers=1GB \
		bash "$work/demo.sh" --inside
fi

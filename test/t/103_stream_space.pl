# 103_stream_space.pl: an index that rows stream into, with the background
# workers on, gives back the space its merges free, and a standby follows;
# once it has gone quiet it is settled and searches like a fresh build.
#
# A segment is one contiguous extent and a merge writes its output before
# it frees its inputs, so each rewrite of the big segment, a little bigger
# than the copy it replaces, went to the end of the index, and the index
# kept two or three copies' worth of space (src/README.md, "Recycling and
# free extents").  After its installs a compaction job now moves the
# segment that ends the index down into the free space below it when that
# holds it, and truncates the free tail (compact/shrink.c).
#
# 1. 14 batches of 400 single-row inserts (one transaction each, 128
#    dims, compact_threshold 300, maintenance_work_mem = 1MB), each
#    followed by a wait until ft.jobs is empty (a state, not a duration).
#    At each of those checkpoints, from the 4th on, the index's size
#    against a fresh CREATE INDEX of the same rows in the same settings.
#    Before the change: 1.36 to 2.19 (median 1.67); with it, in six runs,
#    lowest 0.61 to 1.24, highest 1.92 to 2.14, medians 1.27 to 1.63:
#    near a fresh build after a move, and up to about twice it after a
#    rewrite of the big segment whose output could not be moved (the hole
#    its input left was smaller, or not reusable within the job's wait).
#    Those ratios are against a fresh build that kept its in-memory
#    pieces' space (about twice its pages in use); a fresh build now ends
#    near its pages in use, and the same streamed index is 2.0 to 3.0
#    times it (one run).  The ratios are too noisy for a tight bound (diag
#    prints them).
#    Asserted: every checkpoint within 5 times a fresh build, nothing
#    lost (every eighth row found by its own vector), ft.verify clean.
#    A move during the stream needs what a rewrite freed to become
#    reusable within the job's wait, which only the stream's own
#    transactions bring about (the checkpoints' waits take no xid): on a
#    slow or busy machine part 1 may see none.  So the move is asserted at
#    the end, over parts 1 and 3 (the DEBUG1 line; never before moves
#    existed): part 3's settles take an xid after their merges and shrink
#    after their commit.
# 2. A streaming standby replays the moves and the truncations (each
#    truncation's AccessExclusiveLock, XLOG_SMGR_TRUNCATE): same size, and
#    every row found by its own vector there.
# 3. Churn (inserts, UPDATEs of vectors, DELETEs, VACUUMs) with settling
#    on: once the jobs drained, searches cost what they cost in a fresh
#    build of the live rows, and the pages in use are a fresh build's
#    (below).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

$SegvecTest::wait_secs = 300;
$SegvecTest::poll_usecs = 50_000;

my $node = segvec_node(
	'stream_space', q{
segvec.naptime = 1
segvec.max_workers = 1
maintenance_work_mem = 1MB
log_min_messages = debug1
segvec.ef_search = 200
segvec.exact_scan_factor = 128
}, allows_streaming => 1);
my $standby = segvec_standby($node, 'stream_space_standby');

sq("CREATE EXTENSION segvec;\n"
	  . vec_function(dims => 128, coef => [ 0.37, 1.3, 0.011 ])
	  . q{
CREATE PROCEDURE stream(first int, n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN first .. first + n - 1 LOOP
    INSERT INTO s VALUES (i, vec(i));
    COMMIT;
  END LOOP;
END $$;
CREATE FUNCTION not_own_nearest(t regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %1$s a WHERE a.id %% 8 = 0 AND
      (SELECT b.id FROM %1$s b ORDER BY b.v <-> a.v LIMIT 1)
      IS DISTINCT FROM a.id', t)
    INTO r;
  RETURN r;
END $$;
CREATE TABLE s (id int PRIMARY KEY, v real[]);
CREATE INDEX s_v ON s USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 300);
});

my $n = 400;
my $worst = 0;
my $drained = 1;
my @ratios;
for my $r (1 .. 14)
{
	sq(sprintf('CALL stream(%d, %d)', ($r - 1) * $n + 1, $n));
	$drained &&= wait_for('SELECT count(*) = 0 FROM ft.jobs');
	next if $r < 4;

	# a fresh build of the same rows, in the same settings
	sq(q{DROP TABLE IF EXISTS f;
         CREATE TABLE f AS SELECT * FROM s;
         CREATE INDEX f_v ON f USING segvec (v) INCLUDE (id)
           WITH (compact_threshold = 300)});
	my $ratio = sq(
		q{SELECT round(pg_relation_size('s_v')::numeric
                       / pg_relation_size('f_v'), 2)});
	push @ratios, $ratio;
	diag "103: batch $r: size $ratio; map: " . storage_map('s_v');
	$worst = $ratio if $ratio > $worst;
}
ok($drained, 'the background jobs drained after each batch');
diag "103: size streamed / fresh at the checkpoints: @ratios";
cmp_ok($worst, '<=', 5,
	'the index is within 5 times a fresh build at every checkpoint');
cmp_ok(sq(q{SELECT segment_merges FROM ft.storage_stats('s_v')}),
	'>=', 10, 'the workers merged');

is(sq("SELECT not_own_nearest('s')"),
	'0', 'every eighth row is found by its own vector at k = 1');
is( sq(
		q{SELECT missing_docs + duplicate_docs + docs_in_two_segments +
                 phantom_entries + checksum_mismatches + search_misses +
                 unreachable_nodes
          FROM ft.verify('s_v')}),
	'0',
	'ft.verify is clean');

# ---- 2. the standby follows ------------------------------------------------
$node->wait_for_catchup($standby, 'replay');
is( $standby->safe_psql('postgres', q{SELECT pg_relation_size('s_v')}),
	sq(q{SELECT pg_relation_size('s_v')}),
	'the standby has the index at the primary\'s size');
is( $standby->safe_psql(
		'postgres', q{
SET segvec.ef_search = 200;
SET segvec.exact_scan_factor = 128;
SELECT not_own_nearest('s')}),
	'0',
	'on the standby every eighth row is found by its own vector at k = 1');

# ---- 3. churn, settled: as fast as a fresh build ---------------------------
# With settling on (segvec.settle_ratio; the tests' default is off): 8
# rounds of 400 single-row inserts, 120 UPDATEs that change a row's
# vector, 60 DELETEs and a VACUUM (compact_threshold 100), each round
# followed by a wait until ft.jobs is empty, which includes the settle:
# it runs once the index has been quiet.  From the 3rd round on, against a
# fresh CREATE INDEX of the live rows in the same settings:
# - the median over 100 queries of a top-10 search's buffer accesses
#   (EXPLAIN (ANALYZE, BUFFERS), the heap's included), at ef_search 40
#   and exact_scan_factor 1 (segments of more than 40 docs searched
#   through their graph, as the small segments of an index of thousands
#   of times these rows are), within 1.25 times the fresh build's.
#   Measured without settling: 1.01 to 1.16 (one segment, 7 to 15%
#   tombstones, up to 49 mutable docs); with it 1.00 to 1.12, every
#   checkpoint one segment, no tombstone, an empty mutable segment;
# - the pages in use (not free, not recyclable) within 1.5 times: 1.02 to
#   1.16 without settling, 1.00 to 1.02 with it;
# - the whole size: a segment is one extent and a merge writes its output
#   before it frees its inputs, so each rewrite of the big segment (the
#   ratio merges and the settle) holds two copies, and what a move cannot
#   bring down stays free inside the index.  Keymap runs and other small
#   extents placed best fit into the holes those copies left, and a run
#   written after the big segment (no hole below reusable yet) kept the
#   free space above the segment from being truncated for good: 2.2 to
#   3.1 times a fresh build (median 2.7, one run); and the space a
#   VACUUM's merge freed stayed unusable on the quiet server.  With small
#   extents placed first fit, the keymap runs and the empty mutable page
#   that end the index or split the free space below the big segment
#   moved down (compact/shrink.c) and an xid taken for that space: 1.1 to
#   2.2, median 1.3 (one run).  The median of
#   the six checkpoints is bounded at 1.8; every map is printed
#   (ft.storage_map: what splits the free space).
set_conf('segvec.settle_ratio', '1024');
sq(q{
CREATE TABLE c (id int PRIMARY KEY, v real[]);
CREATE INDEX c_v ON c USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
CREATE TABLE q AS
  SELECT i, vec(i * 7 + 3) AS v FROM generate_series(1, 100) i;
CREATE PROCEDURE churn(first int, n int, nupd int, ndel int)
LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  FOR i IN first .. first + n - 1 LOOP
    INSERT INTO c VALUES (i, vec(i));
    COMMIT;
  END LOOP;
  FOR k IN 1 .. nupd LOOP
    SELECT id INTO r FROM c ORDER BY hashint4(id + first * 31 + k) LIMIT 1;
    -- a vector no other row has (k = 1 lookups below)
    UPDATE c SET v = vec(r + 100000 * first) WHERE id = r;
    COMMIT;
  END LOOP;
  FOR k IN 1 .. ndel LOOP
    DELETE FROM c WHERE id = (SELECT id FROM c
                              ORDER BY hashint4(id - first * 17 - k) LIMIT 1);
    COMMIT;
  END LOOP;
END $$;
-- buffer accesses of a top-10 search (the whole query, heap included)
CREATE FUNCTION qbuf(t regclass, qv real[]) RETURNS bigint LANGUAGE plpgsql
SET enable_seqscan = off SET segvec.ef_search = 40
SET segvec.exact_scan_factor = 1 AS $$
DECLARE p json;
BEGIN
  EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
      SELECT id FROM %s ORDER BY v <-> %L::real[] LIMIT 10', t, qv) INTO p;
  RETURN (p->0->'Plan'->>'Shared Hit Blocks')::bigint
       + (p->0->'Plan'->>'Shared Read Blocks')::bigint;
END $$;
CREATE FUNCTION median_buffers(t regclass) RETURNS float8 LANGUAGE sql AS $$
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY qbuf(t, q.v)) FROM q $$;
CREATE FUNCTION pages_in_use(t regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT index_pages - free_extent_pages - recyclable_pages
  FROM ft.storage_stats(t) $$;
});

# ft.storage_map as one line: block+pages kind, in block order
sub storage_map
{
	my ($index) = @_;
	return sq(
		qq{SELECT string_agg(kind || coalesce('#' || segment, '') || ' '
                            || block || '+' || pages, ', ' ORDER BY block)
           FROM ft.storage_map('$index')});
}

my (@buf_ratios, @use_ratios, @size_ratios, @layouts);
my ($buf_worst, $use_worst, $unsettled) = (0, 0, 0);
$drained = 1;
for my $r (1 .. 8)
{
	sq(sprintf('CALL churn(%d, 400, 120, 60)', ($r - 1) * 400 + 1));
	sq('VACUUM c');
	$drained &&= wait_for('SELECT count(*) = 0 FROM ft.jobs');
	next if $r < 3;

	sq(q{DROP TABLE IF EXISTS f;
         CREATE TABLE f AS SELECT * FROM c;
         CREATE INDEX f_v ON f USING segvec (v) INCLUDE (id)
           WITH (compact_threshold = 100);
         VACUUM ANALYZE f; ANALYZE c});
	# warm both, then measure
	sq(q{SELECT median_buffers('c'), median_buffers('f')});
	my ($bc, $bf) = split /\|/, sq(q{SELECT median_buffers('c'), median_buffers('f')});
	my $buf = sprintf('%.2f', $bc / $bf);
	my $use = sq(q{SELECT round(pages_in_use('c_v')::numeric
                                / pages_in_use('f_v'), 2)});
	my $size = sq(q{SELECT round(pg_relation_size('c_v')::numeric
                                 / pg_relation_size('f_v'), 2)});
	push @buf_ratios, "$buf ($bc/$bf)";
	push @use_ratios, $use;
	push @size_ratios, $size;
	push @layouts, sq(q{SELECT mutable_docs || '+' || num_segments || ':'
                          || (SELECT string_agg((e->>'docs') || '-'
                                                || (e->>'tombstones'), ',')
                              FROM jsonb_array_elements(segments) e)
                        FROM ft.info('c_v')});
	diag "103 churn: round $r: size $size, in use $use; map: "
	  . storage_map('c_v');
	$unsettled++
	  unless sq(q{SELECT mutable_docs = 0 AND tombstones = 0
                  FROM ft.info('c_v')}) eq 't';
	$buf_worst = $buf if $buf > $buf_worst;
	$use_worst = $use if $use > $use_worst;
}
ok($drained, 'churn: the background jobs drained after each round');
diag "103 churn: buffers/query streamed / fresh: @buf_ratios";
diag "103 churn: pages in use streamed / fresh: @use_ratios";
diag "103 churn: size streamed / fresh: @size_ratios";
diag "103 churn: layouts (mutable docs + segments: docs-tombstones): @layouts";
cmp_ok($buf_worst, '<=', 1.25,
	'churn: a search costs at most 1.25 times the buffer accesses of a fresh build');
is($unsettled, 0,
	'churn: settled at every checkpoint: no mutable doc, no tombstone');
cmp_ok($use_worst, '<=', 1.5,
	'churn: pages in use within 1.5 times a fresh build at every checkpoint');
my @sorted = sort { $a <=> $b } @size_ratios;
my $size_median = ($sorted[2] + $sorted[3]) / 2;
cmp_ok($size_median, '<=', 1.8,
	'churn: the median size is within 1.8 times a fresh build');
is(sq("SELECT not_own_nearest('c')"),
	'0', 'churn: every eighth row is found by its own vector at k = 1');
is( sq(
		q{SELECT missing_docs + duplicate_docs + docs_in_two_segments +
                 phantom_entries + checksum_mismatches + search_misses +
                 unreachable_nodes
          FROM ft.verify('c_v')}),
	'0',
	'churn: ft.verify is clean');

ok( slurp_file($node->logfile) =~
	  /segvec moved segment \d+ of index "(s_v|c_v)"/,
	'a background job moved a big segment down');

done_testing();

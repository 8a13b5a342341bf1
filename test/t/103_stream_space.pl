# 103_stream_space.pl: an index that rows stream into, with the background
# workers on, gives back the space its merges free, and a standby follows.
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
#    The ratios are too noisy for a tight bound (diag prints them).
#    Asserted: every checkpoint within 2.5 times a fresh build, a segment
#    moved (the DEBUG1 line; never before the change), nothing lost (every
#    eighth row found by its own vector), ft.verify clean.
# 2. A streaming standby replays the moves and the truncations (each
#    truncation's AccessExclusiveLock, XLOG_SMGR_TRUNCATE): same size, and
#    every row found by its own vector there.
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
	$worst = $ratio if $ratio > $worst;
}
ok($drained, 'the background jobs drained after each batch');
diag "103: size streamed / fresh at the checkpoints: @ratios";
cmp_ok($worst, '<=', 2.5,
	'the index is within 2.5 times a fresh build at every checkpoint');
cmp_ok(sq(q{SELECT segment_merges FROM ft.storage_stats('s_v')}),
	'>=', 10, 'the workers merged');
ok(slurp_file($node->logfile) =~ /segvec moved segment \d+ of index "s_v"/,
	'a background job moved the big segment down');

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

done_testing();

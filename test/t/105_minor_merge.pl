# 105_minor_merge.pl: small segments are merged beside a long merge.
#
# A merge holds the merge lock from choosing its inputs to its install, and
# a merge of a big segment can take minutes, in which a stream of inserts
# makes a segment every compact_threshold rows.  The compactions that run
# beside it (104_compact_beside_merge.pl) run the minor merge lane: they
# merge the segments of at most R compactions' worth (R = merge_ratio)
# that no other merge has claimed, under the minor merge lock, so the
# number of segments stays bounded while the big merge runs.
#
# The workers' merge of the first segment with the next compaction's is
# held at the test point "merge-built" (set for them in postgresql.conf
# until it is reached), then 1,500 rows arrive in five batches: after each
# batch, once every other job has ended, the index
# holds the held merge's two inputs and at most two small segments, and
# the merge is still held.  Then it installs; nothing is lost, ft.verify
# is clean, and searches return the exact answer.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('minor', q{
segvec.naptime = 1
segvec.max_workers = 2
segvec.settle_ratio = 0
segvec.enable_test_hooks = on
});

sq("CREATE EXTENSION segvec;\n" . stream_table(100));
my $idle = q{SELECT count(*) = 0 FROM ft.jobs WHERE index = 't_v'::regclass};
my $nsegs = q{SELECT num_segments FROM ft.info('t_v')};

# a first segment: 600 rows, compacted and merged into one
sq(q{CALL add_rows(1, 600)});
ok($node->poll_query_until('postgres', $idle), 'the first rows are indexed');
ok( $node->poll_query_until(
		'postgres', q{SELECT num_segments = 1 FROM ft.info('t_v')}),
	'into one segment');

# hold the workers' merges at "merge-built"; rows until the next
# compaction, which merges its segment with the first one
sq(q{ALTER SYSTEM SET segvec.test_point = 'merge-built';
     ALTER SYSTEM SET segvec.test_point_action = 'wait';
     SELECT pg_reload_conf()});
$node->poll_query_until('postgres', q{SHOW segvec.test_point}, 'merge-built')
  or die 'the configuration was not reloaded';
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(21334)');
my $waiting = q{SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory'
	AND objid = 21334 AND NOT granted};
# (a compaction is asked for when the insert that passes the threshold
# adds a page: 200 rows, one or two compactions; a second one finds only
# its own segment beside the held merge's inputs, and merges nothing)
sq(q{SET segvec.test_point = ''; CALL add_rows(601, 800)});
my $next = 801;
ok($node->poll_query_until('postgres', $waiting),
	'a background merge is held at merge-built');
sq(q{ALTER SYSTEM RESET segvec.test_point;
     ALTER SYSTEM RESET segvec.test_point_action;
     SELECT pg_reload_conf()});
$node->poll_query_until('postgres', q{SHOW segvec.test_point}, '')
  or die 'the configuration was not reloaded';
my $held = 2;
cmp_ok(sq($nsegs), '<=', $held + 1,
	'the held merge has two inputs, and one segment may have come since');
my $held_pid = sq(q{SELECT pid FROM pg_locks WHERE locktype = 'advisory'
	AND objid = 21334 AND NOT granted});
# every job of the index but the held one has ended (a job merges until
# its policy finds nothing to do, or asks for the compaction it leaves)
my $others_done = qq{SELECT count(*) = 0 FROM ft.jobs
	WHERE index = 't_v'::regclass AND worker_pid IS DISTINCT FROM $held_pid};

# 1,500 rows in five batches while the merge is held: a compaction or more
# a batch (a job compacts what has arrived), whose segments of 100 docs or
# more minor merges fold together (a merged segment stays
# in the minor lane up to 16 compactions' worth, 1,600 docs); so once the
# jobs are done, there are at most two of them (the ratio policy's bound
# for segments of 100 docs and more that hold 1,700 docs in all)
for my $batch (1 .. 5)
{
	my $to = $next + 299;
	sq(qq{CALL add_rows($next, $to)});
	$next = $to + 1;
	ok($node->poll_query_until('postgres', $others_done),
		"batch $batch: the compactions and merges end");
	cmp_ok(sq($nsegs), '<=', $held + 2,
		"batch $batch: at most two segments beside the held merge's inputs");
}
is(sq($waiting), 't', 'while the merge is still held');
cmp_ok(sq(q{SELECT mutable_docs FROM ft.info('t_v')}),
	'<', 200, 'and the mutable segment is compacted');

$holder->query_safe('SELECT pg_advisory_unlock(21334)');
$holder->quit;
ok($node->poll_query_until('postgres', $idle), 'the merge and the rest end');

my $rows = $next - 1;
is(sq(q{SELECT count(*) FROM t}), $rows, 'every row is there');
# a wide search: the self-lookups test the segments' contents, not the
# recall of a graph grown by many small merges (see 085_merge_ratio.pl)
is(verify_problems('t_v', ef_search => 400), '',
	'ft.verify finds nothing wrong');
is( sq(
		q{SET enable_seqscan = off; SET segvec.ef_search = 400;
		  SELECT count(*) FROM t a
		  WHERE (SELECT b.id FROM t b ORDER BY b.v <-> a.v LIMIT 1) <> a.id}),
	'0',
	'every row is found by its own vector');

# the ten nearest rows of 50 query vectors, by the index and exactly
my $knn = q{
  SELECT q, array_agg(id ORDER BY d, id) FROM (
    SELECT q, id, d FROM generate_series(1, 50) q,
      LATERAL (SELECT id, v <-> vec(q * 97 + 13) AS d FROM t
               ORDER BY v <-> vec(q * 97 + 13) LIMIT 10) n) s
  GROUP BY q ORDER BY q};
my $by_index = sq("SET enable_seqscan = off; SET segvec.ef_search = 400;\n"
	  . $knn);
my $exact = sq("SET enable_indexscan = off; SET enable_bitmapscan = off;\n"
	  . $knn);
is($by_index, $exact, 'the index returns the exact ten nearest rows');

$node->stop;
done_testing();

# 104_compact_beside_merge.pl: a background compaction runs while a
# background merge of the same index builds.
#
# A merge holds the merge lock, not the compaction lock, so the two can run
# at once; but the job that merges is the index's compaction job, and a
# compaction of the index used to wait for it to end.  A merge of a big
# segment takes minutes, and under a stream of inserts the mutable segment,
# which every search scores exactly, grew meanwhile to many times its
# threshold (20 times in a million-row stream).  Now a compaction job
# building a merge lets another worker compact the index.
#
# The workers' merge is held at the test point "merge-built" (set for them
# in postgresql.conf) while more rows than compact_threshold arrive: a
# compaction must take them while the merge is held (a state, polled),
# then the merge installs and nothing is lost.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('beside', q{
segvec.naptime = 1
segvec.max_workers = 2
segvec.settle_ratio = 0
segvec.enable_test_hooks = on
});

sq("CREATE EXTENSION segvec;\n" . stream_table(200));
my $idle = q{SELECT count(*) = 0 FROM ft.jobs WHERE index = 't_v'::regclass};

# a first segment (600 rows: well past the threshold, so that pages keep
# being added after it and every compaction it needs is asked for)
sq(q{CALL add_rows(1, 600)});
ok( $node->poll_query_until(
		'postgres',
		q{SELECT num_segments >= 1 FROM ft.info('t_v')}),
	'the first rows are compacted into a segment');
ok($node->poll_query_until('postgres', $idle), 'no job left');

# hold the workers' merges at "merge-built"
sq(q{ALTER SYSTEM SET segvec.test_point = 'merge-built';
     ALTER SYSTEM SET segvec.test_point_action = 'wait';
     SELECT pg_reload_conf()});
$node->poll_query_until('postgres', q{SHOW segvec.test_point}, 'merge-built')
  or die 'the configuration was not reloaded';
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(21334)');
my $waiting = q{SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory'
	AND objid = 21334 AND NOT granted};

# a second segment, which the compaction job merges with the first
sq(q{SET segvec.test_point = ''; CALL add_rows(601, 1200)});
ok($node->poll_query_until('postgres', $waiting),
	'a background merge is held at merge-built');
sq(q{ALTER SYSTEM RESET segvec.test_point;
     ALTER SYSTEM RESET segvec.test_point_action;
     SELECT pg_reload_conf()});
my $before = sq(q{SELECT mutable_docs FROM ft.info('t_v')});

# 700 more rows while the merge is held: compacted anyway (before, the
# mutable segment kept all of them until the merge ended)
sq(q{SET segvec.test_point = ''; CALL add_rows(1201, 1900)});
ok( $node->poll_query_until(
		'postgres',
		qq{SELECT mutable_docs < $before + 400 FROM ft.info('t_v')}),
	'a compaction ran while the merge was held');
ok($node->poll_query_until('postgres', $waiting),
	'and the merge is still held');

$holder->query_safe('SELECT pg_advisory_unlock(21334)');
$holder->quit;
ok($node->poll_query_until('postgres', $idle), 'the merge and the rest end');

is(sq(q{SELECT count(*) FROM t}), '1900', 'every row is there');
is(verify_problems('t_v'), '', 'ft.verify finds nothing wrong');
is( sq(
		q{SET enable_seqscan = off;
		  SELECT count(*) FROM t a
		  WHERE (SELECT b.id FROM t b ORDER BY b.v <-> a.v LIMIT 1) <> a.id}),
	'0',
	'every row is found by its own vector');

$node->stop;
done_testing();

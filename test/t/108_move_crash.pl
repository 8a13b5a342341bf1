# 108_move_crash.pl: a crash in the middle of a background move loses
# nothing and leaks no space, on the primary and on a streaming standby.
#
# A background job moves the segment at the end of the index down into a
# free run below it (src/compact/shrink.c): it takes the run off the
# free-extent list, copies the segment's pages into it, then installs the
# copy and frees the old extent.  The workers are held at the test point
# "move-copied" (the copy written and logged, not installed) and the
# server is stopped in immediate mode there, a crash.  After recovery:
# every row is found by its own vector, on the primary and on the
# standby; ft.verify is clean; VACUUM puts the lost copy back on the
# free-extent list as a whole (one page at a time through the free space
# map, the segment could never move into it and the index stayed at
# twice its pages in use), and the workers then move the segment down and
# give the tail back.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

$SegvecTest::wait_secs = 120;

my $node = segvec_node(
	'move_crash', q{
segvec.naptime = 1
segvec.max_workers = 1
segvec.settle_ratio = 1024
segvec.enable_test_hooks = on
maintenance_work_mem = 1MB
restart_after_crash = on
}, allows_streaming => 1);
my $standby = segvec_standby($node, 'standby',
	"shared_preload_libraries = 'segvec'\nsegvec.max_workers = 0");

sq("CREATE EXTENSION segvec;\n" . vec_function(dims => 64));
sq(q{
CREATE TABLE s (id int PRIMARY KEY, v real[]);
INSERT INTO s SELECT i, vec(i) FROM generate_series(1, 4000) i;
CREATE INDEX s_v ON s USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
});
is(sq(q{SELECT num_segments FROM ft.info('s_v')}), '1',
	'CREATE INDEX made one segment');

my $self_misses = q{SET segvec.ef_search = 200;
  SELECT count(*) FROM s a
  WHERE (SELECT b.id FROM s b ORDER BY b.v <-> a.v LIMIT 1)
        IS DISTINCT FROM a.id};
my $waiting = q{SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory'
  AND objid = 21334 AND NOT granted};

# hold the workers' moves after the copy
sq(q{ALTER SYSTEM SET segvec.test_point = 'move-copied';
     ALTER SYSTEM SET segvec.test_point_action = 'wait';
     SELECT pg_reload_conf()});
$node->poll_query_until('postgres', q{SHOW segvec.test_point}, 'move-copied')
  or die 'the configuration was not reloaded';
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(21334)');

# 300 rows: a compaction, a merge of its segment into the big one (written
# at the end of the index), and the settle's move of the merged segment
# down into the space the inputs left
sq(q{SET segvec.test_point = '';
     INSERT INTO s SELECT i, vec(i) FROM generate_series(4001, 4300) i});
ok($node->poll_query_until('postgres', $waiting),
	'a worker stopped between the move\'s copy and its install');
my $size_held = sq(q{SELECT pg_relation_size('s_v') / 8192});

# the crash, with the test point gone from the configuration it restarts
# with
sq(q{ALTER SYSTEM RESET segvec.test_point;
     ALTER SYSTEM RESET segvec.test_point_action});
$node->stop('immediate');
eval { $holder->quit };
$node->start;

is(sq($self_misses), '0', 'after the crash every row is found by its own vector');
is(verify_problems('s_v'), '', 'ft.verify is clean after the crash');

# VACUUM's cleanup marks the lost copy's pages deleted and recycles them;
# an xid after it makes them reusable; the workers settle the index again
# and give back the free tail
my $in_use = q{(SELECT index_pages - free_extent_pages - recyclable_pages
                FROM ft.storage_stats('s_v'))};
my $in_use_crash = sq("SELECT $in_use");
my ($seg_crash, $free_crash) = split /\|/,
  sq(q{SELECT segment_pages, free_extent_pages FROM ft.storage_stats('s_v')});
diag '108: storage after the crash: '
  . sq(q{SELECT row_to_json(s) FROM ft.storage_stats('s_v') s});
sq('VACUUM s');
sq('SELECT txid_current()');
sq('VACUUM s');
diag '108: storage after VACUUM: '
  . sq(q{SELECT row_to_json(s) FROM ft.storage_stats('s_v') s});
my ($seg_vac, $free_vac, $recyclable) = split /\|/,
  sq(q{SELECT segment_pages, free_extent_pages, recyclable_pages
       FROM ft.storage_stats('s_v')});
cmp_ok($seg_vac, '<', $seg_crash,
	"VACUUM found the lost copy ($seg_crash segment pages, now $seg_vac)");
cmp_ok($free_vac - $free_crash, '>=', $seg_crash - $seg_vac,
	'the lost copy went back on the free-extent list as a whole '
	  . "(free extents $free_crash to $free_vac pages, $recyclable recyclable)");
ok( wait_for(
		q{SELECT free_extent_pages_waiting = 0 AND mutable_docs = 0
          FROM ft.storage_stats('s_v'), ft.info('s_v')}),
	'what the crash left behind became reusable');
ok( wait_for(
		qq{SELECT pg_relation_size('s_v') / 8192 < $size_held
             AND NOT EXISTS (SELECT FROM ft.jobs)}),
	'the workers moved the segment down into it and gave the tail back '
	  . "(held at $size_held blocks, now "
	  . sq(q{SELECT pg_relation_size('s_v') / 8192})
	  . ', in use '
	  . sq("SELECT $in_use")
	  . " of $in_use_crash after the crash)");
diag '108: storage at the end: '
  . sq(q{SELECT row_to_json(s) FROM ft.storage_stats('s_v') s});
is(sq($self_misses), '0', 'after the settle every row is found by its own vector');
is(verify_problems('s_v'), '', 'ft.verify is clean after the settle');

# the standby replayed the same: answers and ft.verify there
$node->wait_for_catchup($standby, 'replay', $node->lsn('insert'));
is($standby->safe_psql('postgres', $self_misses),
	'0', 'on the standby every row is found by its own vector');
is(verify_problems('s_v', node => $standby), '', 'ft.verify is clean on the standby');

done_testing();

# 086_free_tail.pl: VACUUM gives a free extent at the index's end back
# (the index shrinks), on the primary and on a streaming
# standby, and a crash between taking the extent off the free-extent list
# and the truncation (PANIC at test point "truncate-unlisted") loses
# nothing: the next VACUUMs recycle the cut-off blocks page by page,
# inserts and compactions go on, ft.verify is clean.
#
# Background work is off, so every compaction is the test's own, made by
# VACUUM (compact_threshold = 100; a segment that is all tombstones is
# rewritten away by the merge policy).  empty_tail arranges for the last
# extent of the index to be a dropped segment.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('primary', q{
segvec.max_workers = 0
segvec.enable_test_hooks = on
maintenance_work_mem = '1MB'
restart_after_crash = on
}, allows_streaming => 1);
my $standby = segvec_standby($node, 'standby',
	"shared_preload_libraries = 'segvec'\nsegvec.max_workers = 0");

sq("CREATE EXTENSION segvec;\n"
	  . vec_function(type => 'bigint', dims => 16, coef => [ 0.37, 1.3, 0.011 ]));

sub setup
{
	my ($t) = @_;
	sq(qq{
CREATE TABLE $t (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX ${t}_v ON $t USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
});
}

sub blocks
{
	my ($t) = @_;
	return sq(qq{SELECT pg_relation_size('${t}_v') / 8192});
}

# Leaves the last extent of ${t}_v free: VACUUM compacts 1,200 rows into
# a segment S1 written at the relation's end; then, with those rows
# deleted and 100 new ones, the next VACUUM tombstones S1, compacts the
# new rows into the pages the first compaction freed (best fit), and the
# merge policy drops S1, which is all tombstones.  A transaction after it
# makes S1's extent older than every snapshot.
sub empty_tail
{
	my ($t) = @_;
	sq(qq{INSERT INTO $t SELECT i, vec(i) FROM generate_series(1, 1200) i});
	sq(qq{VACUUM (INDEX_CLEANUP ON) $t});
	sq(qq{DELETE FROM $t WHERE id <= 1200;
	      INSERT INTO $t SELECT i, vec(i) FROM generate_series(1201, 1300) i});
	sq(qq{VACUUM (INDEX_CLEANUP ON) $t});
	sq('SELECT txid_current()');
}

# ---- 1. VACUUM truncates a free tail ---------------------------------------
setup('s');
empty_tail('s');
my $before = blocks('s');
sq('VACUUM (INDEX_CLEANUP ON) s');
my $after = blocks('s');
note "index blocks: $before before the VACUUM, $after after";
cmp_ok($after, '<', $before, 'VACUUM truncated the free tail of the index');
is(sq(q{SELECT count(*) FROM s}), '100', 'the rows are there');
is(verify_problems('s_v', search_limit => 100000), '',
	'ft.verify is clean after the truncation');
sq(q{INSERT INTO s SELECT i, vec(i) FROM generate_series(1501, 1800) i});
sq('VACUUM (INDEX_CLEANUP ON) s');
is(verify_problems('s_v', search_limit => 100000), '',
	'inserts and a compaction after the truncation');

# the standby replays the truncation and searches the same index
$node->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', q{SELECT pg_relation_size('s_v') / 8192}),
	blocks('s'), 'the standby has the same size');
my $knn = q{SET enable_seqscan = off;
	SELECT string_agg(id::text, ',') FROM
	(SELECT id FROM s ORDER BY v <-> vec(1650) LIMIT 10) x};
is($standby->safe_psql('postgres', $knn),
	sq($knn), 'the standby finds what the primary finds');

# ---- 2. a crash between the metapage record and the truncation -------------
setup('c');
empty_tail('c');
$before = blocks('c');
my ($ret) = $node->psql(
	'postgres', q{
SET segvec.test_point = 'truncate-unlisted';
SET segvec.test_point_action = 'panic';
VACUUM (INDEX_CLEANUP ON) c;
});
isnt($ret, 0, 'VACUUM crashed between unlisting the tail and truncating it');
accepting($node)
  or die 'server did not come back after the PANIC';
is(blocks('c'), $before, 'nothing was truncated');
is(sq(q{SELECT count(*) FROM c}), '100', 'the rows are there');
# the cut-off blocks are neither free nor reachable: VACUUM marks them
# deleted, then recycles them; inserts and compactions reuse them
sq('VACUUM (INDEX_CLEANUP ON) c');
sq('SELECT txid_current()');
sq('VACUUM (INDEX_CLEANUP ON) c');
is(verify_problems('c_v', search_limit => 100000), '',
	'ft.verify is clean after the crash');
my $unaccounted = sq(q{SELECT index_pages - segment_pages - mutable_pages
                         - keymap_run_pages - keymap_change_pages
                         - free_extent_pages - recyclable_pages
                       FROM ft.storage_stats('c_v')});
cmp_ok($unaccounted, '<=', 8,
	'the blocks the crash left are recyclable again');
sq(q{INSERT INTO c SELECT i, vec(i) FROM generate_series(1501, 1800) i});
sq('VACUUM (INDEX_CLEANUP ON) c');
is(sq(q{SELECT count(*) FROM c}), '400', 'inserts go on');
is(verify_problems('c_v', search_limit => 100000), '',
	'ft.verify is clean after more inserts');

$standby->stop;
$node->stop;
done_testing();

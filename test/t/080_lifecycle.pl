# 080_lifecycle.pl: the segment lifecycle under limits and interruptions,
# with background work off so that every compaction is the
# test's own.
#
# - No cap on segments: segvec.max_merge_docs = 1000, merges by tiers
#   (segvec.merge_ratio = 0), 256 dimensions and compact_threshold = 300
#   make every 300-row round its own segment that never merges (four
#   segments hold 1,200 docs); 30 rounds give 30
#   segments, past the 24 the
#   metapage holds, so the manifest overflows into pages.  No compaction,
#   insert or VACUUM fails; deletes tombstone docs in overflow segments;
#   every live row is found by its own vector (ft.verify), and the count of
#   docs is right after a restart.
# - VACUUM never fails because of compaction: an error inside the
#   compaction that VACUUM's cleanup runs (test point "compact-installed",
#   after the install and before the garbage marking) becomes a WARNING;
#   VACUUM still removes the dead docs; the next VACUUM finishes the
#   garbage, and the index is clean.
# - A crash between an install and its garbage marking (PANIC at that test
#   point), then VACUUM twice (recycling what the crash left), inserts that
#   reuse those pages, another compaction: nothing lost, ft.verify clean,
#   inserts finish (a stale garbage entry used to mark the live tail
#   deleted).  The same after an error (a cancelled ft.compact).
# - A scan holding the old manifest across a compaction (stopped at test
#   point "scan-manifest-read" while another session compacts) returns
#   every doc exactly once.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('lifecycle', q{
segvec.max_workers = 0
segvec.enable_test_hooks = on
maintenance_work_mem = '1MB'
segvec.ef_search = 200
# tombstones stay where VACUUM set them (no rewrite by their share)
segvec.merge_deletes_pct = 100
# a PANIC at a test point is the crash; the server restarts by itself
restart_after_crash = on
});

sq("CREATE EXTENSION segvec;\n"
	  . vec_function(type => 'bigint', coef => [ 0.37, 1.3, 0.011 ]));

# ---- 1. no cap on segments ------------------------------------------------
sq(q{
CREATE TABLE s (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX s_v ON s USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 300);
});
for my $round (0 .. 29)
{
	my ($lo, $hi) = ($round * 300 + 1, $round * 300 + 300);
	sq(qq{SET segvec.max_merge_docs = 1000; SET segvec.merge_ratio = 0;
		  INSERT INTO s SELECT i, vec(i, 256) FROM generate_series($lo, $hi) i;
		  SELECT ft.compact('s_v')});
}
is(sq(q{SELECT num_segments, mutable_docs, num_docs FROM ft.info('s_v')}),
	'30|0|9000', '30 segments: the manifest holds more than the metapage');

# deletes tombstone docs of inline and overflow segments alike
sq(q{DELETE FROM s WHERE id % 7 = 0; VACUUM s});
is(sq(q{SELECT num_docs, tombstones FROM ft.info('s_v')}),
	'7715|1285', 'VACUUM tombstones docs in every segment');
is(verify_problems('s_v', search_limit => 2000), '',
	'ft.verify is clean with an overflowing manifest');

# inserts and one more compaction go on; the manifest survives a restart
sq(q{SET segvec.max_merge_docs = 1000; SET segvec.merge_ratio = 0;
	 INSERT INTO s SELECT i, vec(i, 256) FROM generate_series(9001, 9300) i;
	 SELECT ft.compact('s_v')});
$node->restart;
is(sq(q{SELECT num_segments, num_docs FROM ft.info('s_v')}),
	'31|8015', 'after a restart: every segment and doc is there');
is(verify_problems('s_v', search_limit => 2000), '',
	'ft.verify is clean after the restart: rows found at k = 1');

# ---- 2. VACUUM never fails because of compaction --------------------------
sq(q{
CREATE TABLE w (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX w_v ON w USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 300);
INSERT INTO w SELECT i, vec(i, 16) FROM generate_series(1, 1000) i;
DELETE FROM w WHERE id <= 100;
});
my ($ret, $out, $err) = $node->psql(
	'postgres', q{
SET segvec.test_point = 'compact-installed';
SET segvec.test_point_action = 'error';
VACUUM w;
});
is($ret, 0, 'VACUUM succeeds although its compaction fails');
like(
	$err,
	qr/WARNING:  could not compact segvec index "w_v" during VACUUM/,
	'the compaction error is a WARNING');
is(sq(q{SELECT num_docs FROM ft.info('w_v')}),
	'900', 'VACUUM removed the dead docs');
# the failed compaction had installed its segment; the garbage it left is
# finished by the next VACUUM
is(sq(q{SELECT num_segments, mutable_docs FROM ft.info('w_v')}),
	'1|0', 'what the compaction installed before the error stays');
sq('VACUUM w');
is(verify_problems('w_v', search_limit => 100000), '',
	'ft.verify is clean after the failed compaction');
is( sq(q{SELECT relfrozenxid <> '0' FROM pg_class WHERE relname = 'w'}),
	't', 'relfrozenxid is set');

# ---- 3. interrupted garbage marking: crash, and error ---------------------
# A garbage entry left by an interrupted install must never mark a live page:
# VACUUM recycles the frozen chain meanwhile and inserts reuse its pages.
sub interrupted_compaction
{
	my ($name, $action) = @_;

	sq(qq{
DROP TABLE IF EXISTS g;
CREATE TABLE g (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX g_v ON g USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100000);
INSERT INTO g SELECT i, vec(i, 16) FROM generate_series(1, 3000) i;
});
	my ($r, $o, $e) = $node->psql(
		'postgres', qq{
SET segvec.test_point = 'compact-installed';
SET segvec.test_point_action = '$action';
SELECT ft.compact('g_v');
});
	isnt($r, 0, "$name: ft.compact stopped after its install");
	if ($action eq 'panic')
	{
		accepting($node)
		  or die 'server did not come back after the PANIC';
	}
	is(sq(q{SELECT num_segments, mutable_docs FROM ft.info('g_v')}),
		'1|0', "$name: the install happened");

	# two VACUUMs with a transaction in between: the frozen chain is
	# marked, then recycled into the free space map
	sq('VACUUM g');
	sq('SELECT txid_current()');
	sq('VACUUM g');
	sq('SELECT txid_current()');
	sq('VACUUM g');

	# inserts reuse the recycled pages, then the next compaction
	sq(q{INSERT INTO g SELECT i, vec(i, 16) FROM generate_series(3001, 4500) i});
	sq(q{SELECT ft.compact('g_v')});
	sq(q{INSERT INTO g SELECT i, vec(i, 16) FROM generate_series(4501, 5000) i});
	is(sq(q{SELECT num_docs, mutable_docs FROM ft.info('g_v')}),
		'5000|500', "$name: nothing lost, inserts finish");
	is(verify_problems('g_v', search_limit => 100000), '',
		"$name: ft.verify is clean");
}
interrupted_compaction('crash', 'panic');
interrupted_compaction('error', 'error');

# ---- 4. a scan holding the old manifest across a compaction ---------------
sq(q{
CREATE TABLE c (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX c_v ON c USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100000);
INSERT INTO c SELECT i, vec(i, 16) FROM generate_series(1, 2000) i;
});
# the scan reads the manifest and waits at the test point
my $scan = hold_at(
	$node, 'scan-manifest-read', q{
SELECT count(*), count(DISTINCT id) FROM
  (SELECT id FROM c ORDER BY v <-> vec(1, 16) LIMIT 100000) s;
}, setup => q{
SET enable_seqscan = off;
SET segvec.max_scan_tuples = 100000;
});
is(sq(q{SELECT docs_compacted FROM ft.compact('c_v')}),
	'2000', 'a compaction runs while the scan holds the old manifest');
my $res = $scan->release;
note "scan result: $res";
like($res, qr/^2000\|2000/m,
	'the scan returns every doc of the frozen prefix exactly once');

$node->stop;
done_testing();

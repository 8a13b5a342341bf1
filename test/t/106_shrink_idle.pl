# 106_shrink_idle.pl: the space merges free becomes reusable, and is
# given back, when the server goes idle right after them; and VACUUM of a
# table with a primary key does segvec's cleanup work.
#
# 1. Background work on, settling at its default.  One INSERT of 300 rows
#    into an index of 4,000 (one segment): a compaction job compacts them
#    (or most of them, when it starts during the INSERT: a settle then
#    compacts the rest) and the merge policy merges the new segment into
#    the big one.  A freed extent is reusable once the xid that was
#    next at the install that freed it is older than every snapshot; on a
#    server where no one writes, no xid is ever taken, so what the merge
#    freed stayed unusable (ft.storage_stats' free_extent_pages_waiting)
#    and the merged segment at the end of the index with the old copy's
#    space below it, until the next write.  Asserted, without any write:
#    nothing stays waiting (a state waited for), and every row is found by
#    its own vector.  The same after a keymap snapshot, which frees the
#    runs and change pages it replaces (the job took no xid after it), and
#    after a compaction whose transaction took its xid before its install
#    (then a subtransaction's xid follows the install's stamp).
# 2. Background work off, a table with a primary key and a segvec index
#    (min_parallel_index_scan_size = 0, so that PostgreSQL would vacuum the
#    two indexes in parallel): VACUUM compacts the index's mutable segment,
#    and after the rows are deleted, rewrites its segments away and
#    truncates the free tail.  In a parallel worker segvec can do neither
#    (no subtransaction, no xid for the truncation's lock), and the index
#    kept everything; segvec's VACUUM now runs in the leader, outside
#    parallel mode.  With two more indexes PostgreSQL still vacuums in
#    parallel; VACUUM (PARALLEL 0) does segvec's work.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

$SegvecTest::wait_secs = 60;

my $node = segvec_node(
	'shrink_idle', q{
segvec.naptime = 1
segvec.max_workers = 1
segvec.settle_ratio = 1024
maintenance_work_mem = 1MB
min_parallel_index_scan_size = 0
max_parallel_maintenance_workers = 2
log_min_messages = debug1
});

sq("CREATE EXTENSION segvec;\n" . vec_function(dims => 64));

# ---- 1. an idle server gives back what the last merge freed ----------------
sq(q{
CREATE TABLE s (id int PRIMARY KEY, v real[]);
INSERT INTO s SELECT i, vec(i) FROM generate_series(1, 4000) i;
CREATE INDEX s_v ON s USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
});
is(sq(q{SELECT num_segments FROM ft.info('s_v')}), '1',
	'CREATE INDEX made one segment');
my $merges = sq(q{SELECT segment_merges FROM ft.storage_stats('s_v')});

sq(q{INSERT INTO s SELECT i, vec(i) FROM generate_series(4001, 4300) i});
ok( wait_for(
		qq{SELECT segment_merges > $merges FROM ft.storage_stats('s_v')}),
	'a background job merged the new segment into the big one');
# A compaction that starts while the INSERT runs takes only part of its
# rows; a settle compacts the rest, and leaves a remainder under 1/1024 of
# the big segment a segment of its own (segvec.settle_ratio): wait for
# the state, nothing left in the mutable segment
ok( wait_for(
		q{SELECT mutable_docs = 0 AND num_segments <= 2 FROM ft.info('s_v')}),
	'nothing left to settle');
ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), 'the jobs drained');
diag '106: segments after the merge: '
  . sq(q{SELECT num_segments FROM ft.info('s_v')});

my $in_use = q{(SELECT index_pages - free_extent_pages - recyclable_pages
                FROM ft.storage_stats('s_v'))};
diag '106: size / pages in use after the merge: '
  . sq(qq{SELECT round(pg_relation_size('s_v') / 8192.0 / $in_use, 2)});
ok( wait_for(
		q{SELECT free_extent_pages_waiting = 0 FROM ft.storage_stats('s_v')}),
	'with no write, what the merge freed becomes reusable');
diag '106: size / pages in use at the end: '
  . sq(qq{SELECT round(pg_relation_size('s_v') / 8192.0 / $in_use, 2)});
is( sq(
		q{SET segvec.ef_search = 200;
          SELECT count(*) FROM s a
          WHERE (SELECT b.id FROM s b ORDER BY b.v <-> a.v LIMIT 1)
                IS DISTINCT FROM a.id}),
	'0',
	'every row is found by its own vector');

# a keymap snapshot frees the runs and change pages it replaces: with no
# write after it, they too become reusable.  A few inserts below every
# threshold give it changes to take; the settle they ask for waits an hour
# of naps (so that its own xid cannot cover for the snapshot's), and the
# snapshot job is asked for by hand.
set_conf('segvec.naptime', '3600');
my $snaps = jstat('snapshot', 'run');
sq(q{INSERT INTO s SELECT i, vec(i) FROM generate_series(4301, 4303) i});
sq(q{SELECT ft.submit_job('s_v', 'snapshot')});
ok( wait_for(
		qq{SELECT run > $snaps FROM ft.job_stats() WHERE kind = 'snapshot'}),
	'the keymap snapshot ran');
ok( wait_for(
		q{SELECT free_extent_pages_waiting = 0 FROM ft.storage_stats('s_v')}),
	'with no write, what the snapshot freed becomes reusable');
set_conf('segvec.naptime', '1');

# ---- 2. VACUUM of a table with a primary key --------------------------------
set_conf('segvec.max_workers', '0');
sq(q{
CREATE TABLE p (id int PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX p_v ON p USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
INSERT INTO p SELECT i, vec(i) FROM generate_series(1, 3000) i;
});
my $verbose = $node->psql('postgres', 'VACUUM (VERBOSE) p', stderr => \my $err);
unlike($err, qr/parallel vacuum worker/,
	'VACUUM of a table with a segvec index and one other runs no parallel worker');
is(sq(q{SELECT mutable_docs FROM ft.info('p_v')}),
	'0', 'VACUUM compacted the mutable segment');

my $before = sq(q{SELECT pg_relation_size('p_v') / 8192});
sq(q{DELETE FROM p});
sq(q{VACUUM p});
# an xid after the rewrite, as any write would take: what it freed is then
# older than every snapshot
sq(q{SELECT txid_current()});
sq(q{VACUUM p});
my $after = sq(q{SELECT pg_relation_size('p_v') / 8192});
cmp_ok($after, "<", $before / 2,
	"VACUUM rewrote the segments away and truncated the index ($before to $after blocks)");
is(sq(q{SELECT num_docs FROM ft.info('p_v')}), '0', 'no doc left');

# with two more indexes PostgreSQL vacuums in parallel; VACUUM (PARALLEL 0)
# does segvec's work
sq(q{
CREATE INDEX p_a ON p (id, v);
CREATE INDEX p_b ON p ((id + 1));
INSERT INTO p SELECT i, vec(i) FROM generate_series(1, 3000) i;
VACUUM (PARALLEL 0) p;
});
is(sq(q{SELECT mutable_docs FROM ft.info('p_v')}),
	'0', 'VACUUM (PARALLEL 0) compacted the mutable segment');

done_testing();

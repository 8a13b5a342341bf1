# 022_merge_lock_order.pl: two writers of one index's queue do not
# deadlock when the first merge builds the id btree.
#
# ft.flush and a background merge lock the table, then the index's queue,
# then (segvec.index_before_merge) build the btree on the id column when
# it is missing, which needs a lock that conflicts with every writer.  A
# second writer that already holds the table's writer lock and waits for
# the queue would deadlock with the build.  Here the first ft.flush stops
# at a test point holding the queue; a second ft.flush starts; a
# background merge job is queued too; the first goes on.  Every call must
# succeed, and the queued upserts are applied once, the btree built once.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('main', q{
segvec.naptime = 1
segvec.enable_test_hooks = on
deadlock_timeout = 100ms
});

sq(q{
CREATE EXTENSION segvec;
CREATE TABLE t (id int, v real[]);
CREATE INDEX t_v ON t USING segvec (v) INCLUDE (id);
SET segvec.background_merge = off;
SELECT count(ft.add('t_v', i::text, ARRAY[i, 0, 0]::real[]))
  FROM generate_series(1, 100) i;
});

sub waiters
{
	my ($locktype) = @_;
	return sq(qq{SELECT count(*) FROM pg_locks
	  WHERE locktype = '$locktype' AND NOT granted});
}

# the first ft.flush holds the table and the queue, before the build
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(21334)');
my $first = $node->background_psql('postgres');
$first->query_until(
	qr/started\n/, q{
SET segvec.test_point = 'merge-queue-locked';
SET segvec.test_point_action = 'wait';
SET client_min_messages = warning;
\echo started
SELECT applied FROM ft.flush('t_v');
});
$node->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory'
	  AND objid = 21334 AND NOT granted})
  or die 'the first ft.flush never reached the test point';

# a second ft.flush comes while the first holds on
my $second = $node->background_psql('postgres');
$second->query_until(
	qr/started\n/, q{
\echo started
SELECT applied FROM ft.flush('t_v');
});
$node->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity
	  WHERE query LIKE 'SELECT applied FROM ft.flush%'
	  AND wait_event_type = 'Lock' AND backend_type = 'client backend'
	  AND pid <> ALL (SELECT pid FROM pg_locks WHERE locktype = 'advisory'
	                  AND objid = 21334)})
  or die 'the second ft.flush never waited';

# the first goes on: it builds the btree and applies the queue
$holder->query_safe('SELECT pg_advisory_unlock(21334)');
my $out1 = eval { $first->query_safe('') };
ok(defined $out1, 'the first ft.flush succeeds')
  or diag($@);
like($out1 // '', qr/^100$/m, 'the first ft.flush applies the 100 queued upserts');
my $out2 = eval { $second->query_safe('') };
ok(defined $out2, 'the second ft.flush succeeds (no deadlock)')
  or diag($@);
$first->quit;
$second->quit;
$holder->quit;

is(sq(q{SELECT count(*), count(DISTINCT id) FROM t}), '100|100',
	'every queued upsert applied once');
is(sq(q{SELECT count(*) FROM ft.pending}), '0', 'the queue is empty');
is( sq(q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	  WHERE i.indrelid = 't'::regclass AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree')}),
	'1',
	'one btree on the id column');

done_testing();

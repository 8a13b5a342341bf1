# 014_jobs_restart.pl: work submitted before a server stop is found again
# after the start.
#
# The job table lives in shared memory and starts empty at every server
# start, crash restarts included.  Upserts queued by ft.add and a mutable
# segment over its compaction threshold, whose jobs were submitted but
# never ran (no workers then), must not wait for the next submit: at each
# start the launcher asks every database for a sweep, which applies the
# queued upserts and compacts.  Checked after a crash (stop immediate) and
# after a clean restart.  The launcher also sweeps every
# segvec.sweep_interval, for what no request names: a prepared
# transaction's upserts.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

# no workers yet: the submitted jobs stay in the job table
my $node = segvec_node('restart', q{
segvec.naptime = 1
segvec.max_workers = 0
max_prepared_transactions = 5
});

sq("CREATE EXTENSION segvec;\n" . vec_function() . q{
CREATE TABLE t (id int PRIMARY KEY, embedding real[]);
CREATE INDEX t_idx ON t USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 100);
});

my $round = 0;
for my $mode ('immediate', 'fast')
{
	my $lo = 1000 * $round + 1;
	my $hi = $lo + 299;
	my $want = 350 * ($round + 1);
	$round++;

	sq("SELECT ft.add('t_idx', (g + 100000)::text, vec(g, 8))
	    FROM generate_series($lo, $lo + 49) g");
	sq("INSERT INTO t SELECT g, vec(g, 8) FROM generate_series($lo, $hi) g");
	is(sq(q{SELECT pending FROM ft.info('t_idx')}), '50',
		"$mode: 50 upserts queued");
	cmp_ok(sq(q{SELECT mutable_docs FROM ft.info('t_idx')}), '>=', 300,
		"$mode: the mutable segment is over its threshold");

	$node->stop($mode);
	$node->append_conf('postgresql.conf', "segvec.max_workers = 2\n");
	$node->start;

	ok(wait_for("SELECT count(*) = $want FROM t"),
		"$mode: the queued upserts were applied after the start");
	ok( wait_for(
			q{SELECT pending = 0 AND mutable_docs < 100 FROM ft.info('t_idx')}),
		"$mode: the mutable segment was compacted");

	# back to no workers for the next round
	$node->append_conf('postgresql.conf', "segvec.max_workers = 0\n");
	$node->reload;
	wait_for(q{SELECT setting = '0' FROM pg_settings
	           WHERE name = 'segvec.max_workers'});
}

# A prepared transaction's upserts: COMMIT PREPARED runs no callback that
# could submit their merge; the launcher's periodic sweep finds them.
$node->append_conf('postgresql.conf', "segvec.max_workers = 2\n");
$node->reload;
set_conf('segvec.sweep_interval', '1');
sq(q{BEGIN;
SELECT ft.add('t_idx', (g + 200000)::text, vec(g, 8)) FROM generate_series(1, 20) g;
PREPARE TRANSACTION 'queued';});
sq(q{COMMIT PREPARED 'queued'});
ok(wait_for(q{SELECT count(*) = 20 FROM t WHERE id > 200000}),
	'a prepared transaction\'s upserts are applied after COMMIT PREPARED');
ok(wait_for(q{SELECT pending = 0 FROM ft.info('t_idx')}), 'and the queue is empty');

is( sq(
		q{SELECT missing_docs || '|' || duplicate_docs || '|' ||
		  phantom_entries || '|' || missing_keymap_entries
		  FROM ft.verify('t_idx')}),
	'0|0|0|0',
	'ft.verify is clean');

# the sweeps' jobs are counted as submitted: no kind ran more jobs than
# were submitted
is( sq(q{SELECT count(*) FROM ft.job_stats()
	  WHERE run + failed + skipped > submitted}),
	'0',
	'ft.job_stats: run, failed and skipped never exceed submitted');

$node->stop;
done_testing();

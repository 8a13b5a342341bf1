# 015_jobs_dropdb.pl: DROP DATABASE while a background job of that
# database runs waits for the job, then succeeds.
#
# DROP DATABASE fails when other backends stay connected to the database
# for 5 seconds after it locked it.  A segvec worker runs one job after
# another while the database has work, so a DROP during a long job failed.
# Here a compaction is slowed down by segvec.job_delay_ms, more work is
# queued behind it, and DROP DATABASE must wait for the job and succeed.

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
});

sq(q{CREATE EXTENSION segvec; CREATE DATABASE doomed});
$node->safe_psql(
	'doomed', q{
CREATE EXTENSION segvec;
CREATE TABLE a (id int PRIMARY KEY, v real[]);
CREATE TABLE b (id int PRIMARY KEY, v real[]);
CREATE INDEX a_v ON a USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
CREATE INDEX b_v ON b USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
});

# each job now sleeps inside (cut short by the next reload)
set_conf('segvec.job_delay_ms', '3600000');
$node->safe_psql(
	'doomed', q{
INSERT INTO a SELECT i, ARRAY[i, 1, 1]::real[] FROM generate_series(1, 500) i;
INSERT INTO b SELECT i, ARRAY[i, 1, 1]::real[] FROM generate_series(1, 500) i;
});
wait_for(q{SELECT count(*) > 0 FROM ft.jobs WHERE state = 'running'})
  or BAIL_OUT('no job started');

# DROP DATABASE waits (for the worker's lock), it does not fail
my $drop = $node->background_psql('postgres');
$drop->query_until(qr/started\n/, q{
\echo started
DROP DATABASE doomed;
});
wait_for(q{SELECT count(*) > 0 FROM pg_stat_activity
	WHERE query = 'DROP DATABASE doomed;' AND state = 'active'})
  or BAIL_OUT('DROP DATABASE never started');
# longer than the 5 seconds DROP DATABASE gives other backends to leave
# once it has the database's lock (what failed before: the wait is the
# behaviour under test, not a guess at how long something takes)
sleep(6);

# the job ends; the worker leaves instead of taking the next one
set_conf('segvec.job_delay_ms', '0');
my $ok = eval { $drop->query_safe(''); 1 };
ok($ok, 'DROP DATABASE succeeds') or diag($@);
$drop->quit;
is(sq(q{SELECT count(*) FROM pg_database WHERE datname = 'doomed'}), '0',
	'the database is gone');

# the cluster's background work goes on
sq(q{
CREATE TABLE c (id int PRIMARY KEY, v real[]);
CREATE INDEX c_v ON c USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
INSERT INTO c SELECT i, ARRAY[i, 1, 1]::real[] FROM generate_series(1, 500) i;
});
ok(wait_for(q{SELECT mutable_docs < 500 FROM ft.info('c_v')}),
	'background compaction still runs in the other database');

done_testing();

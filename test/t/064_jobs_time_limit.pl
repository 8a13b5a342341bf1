# 064_jobs_time_limit.pl: one role's slow merge does not hold up another
# role's queued merge, and segvec.job_time_limit cancels it (segvec
# preloaded, one worker, one merge slot).
#
# Role alice owns table a, whose trigger waits while public.hold.slow is
# true (far longer than any limit here); role bob owns table b.  Both queue
# upserts with ft.add, alice's first.  With segvec.max_workers = 1 and
# segvec.merge_concurrency = 1 alice's merge takes the only worker and the
# only merge slot; once it has run segvec.job_long_after it no longer
# counts against either for bob's merge, so bob's rows are applied while
# alice's merge still runs (and alice's queue for another table still
# waits: she gets no extra worker).  Then segvec.job_time_limit cancels alice's
# merge, with a LOG line naming the index, the role, the limit and the
# batch's ids; the next attempt applies half the rows; when the trigger
# is fast again, alice's rows are applied.  A compaction is not cancelled
# by the time limit.  States are polled; durations are only reported.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('timelimit', q{
segvec.naptime = 1
segvec.max_workers = 1
segvec.merge_concurrency = 1
segvec.job_time_limit = '10s'
segvec.job_long_after = '500ms'
});

sq(q{
CREATE EXTENSION segvec;
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
GRANT CREATE ON SCHEMA public TO alice, bob;
CREATE TABLE hold (slow boolean);
INSERT INTO hold VALUES (true);
GRANT SELECT ON hold TO alice;
SET ROLE alice;
CREATE TABLE a (id int PRIMARY KEY, embedding real[]);
CREATE INDEX a_idx ON a USING segvec (embedding) INCLUDE (id);
-- runs as alice with search_path = pg_catalog, pg_temp: names qualified
CREATE FUNCTION a_slow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	WHILE (SELECT slow FROM public.hold) LOOP
		PERFORM pg_catalog.pg_sleep(0.05);
	END LOOP;
	RETURN NEW;
END $$;
CREATE TRIGGER a_slow BEFORE INSERT ON a FOR EACH ROW
	EXECUTE FUNCTION a_slow();
CREATE TABLE a2 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX a2_idx ON a2 USING segvec (embedding) INCLUDE (id);
RESET ROLE;
SET ROLE bob;
CREATE TABLE b (id int PRIMARY KEY, embedding real[]);
CREATE INDEX b_idx ON b USING segvec (embedding) INCLUDE (id);
});

my $logpos = -s $node->logfile;

# --- alice's merge runs, bob's queued merge does not wait for it --------------
sq(q{SET ROLE alice;
SELECT count(ft.add('a_idx', g::text, ARRAY[g, 1]::real[]))
	FROM generate_series(1, 4) g});
ok( wait_for(
		q{SELECT count(*) = 1 FROM ft.jobs
		  WHERE index = 'a_idx'::regclass AND kind = 'merge'
		    AND state = 'running'}),
	"alice's merge is running (its trigger waits)");

# alice queues more, for another table: it waits for her first merge
sq(q{SET ROLE alice;
SELECT count(ft.add('a2_idx', g::text, ARRAY[g, 3]::real[]))
	FROM generate_series(1, 2) g});

my $t0 = time();
sq(q{SET ROLE bob;
SELECT count(ft.add('b_idx', g::text, ARRAY[g, 2]::real[]))
	FROM generate_series(1, 3) g});
ok(wait_for(q{SELECT count(*) = 3 FROM b}), "bob's queued rows are applied");
my $waited = time() - $t0;
# the state at the moment bob's rows showed up
my $a_state = sq(q{SELECT state FROM ft.jobs
	WHERE index = 'a_idx'::regclass AND kind = 'merge'});
my $log = slurp_file($node->logfile, $logpos);
note(sprintf("bob's rows were applied %.2f s after ft.add", $waited));
is($a_state, 'running',
	"bob's rows were applied while alice's merge was still running");
unlike($log, qr/canceled after segvec\.job_time_limit/,
	'before the time limit cancelled anything');
is(sq(q{SELECT count(*) FROM a}), '0', 'alice has no rows applied yet');
is(sq(q{SELECT count(*) FROM a2}), '0',
	"nor in her other table: the owner of a long job gets no extra worker");

# --- the time limit cancels alice's merge, and says so ------------------------
$node->wait_for_log(
	qr/segvec merge job for index "a_idx" of role "alice" canceled after segvec\.job_time_limit \(10000 ms\)/,
	$logpos);
$log = slurp_file($node->logfile, $logpos);
like(
	$log,
	qr/It had taken 4 queued row\(s\); the next merges of the index apply at most 2 at once/,
	'the log line says the next merge applies half the rows');
like(
	$log,
	qr/applying queued upserts of 4 id\(s\) to table "a": '1', '2', '3', '4'/,
	"the cancelled statement's context names the batch's ids");
unlike($log, qr/canceled after segvec\.job_time_limit[^\n]*"b_idx"/,
	"bob's merge was never cancelled");
ok( wait_for(
		q{SELECT count(*) = 4 FROM ft.pending_for('a_idx')}),
	"alice's rows are still queued");
ok( wait_for(
		q{SELECT attempts >= 1 AND (state = 'running' OR retry_at IS NOT NULL)
		  FROM ft.jobs WHERE index = 'a_idx'::regclass AND kind = 'merge'}),
	"alice's merge is retried with a back-off");

# a shorter limit: the next attempt takes 2 rows and is cancelled too
set_conf('segvec.job_time_limit', '1000');
$node->wait_for_log(
	qr/It had taken 2 queued row\(s\); the next merges of the index apply at most 1 at once/,
	$logpos);
pass('the next attempt applied half as many rows');

# --- alice's trigger is fast again: her rows are applied ----------------------
sq(q{UPDATE hold SET slow = false});
ok(wait_for(q{SELECT count(*) = 4 FROM a}), "alice's rows are applied");
ok(wait_for(q{SELECT count(*) = 2 FROM a2}), 'and those of her other table');
is(sq(q{SELECT count(*) FROM ft.pending_for('a_idx')}), '0',
	"alice's queue is empty");

# --- a compaction is not limited ----------------------------------------------
$logpos = -s $node->logfile;
set_conf('segvec.job_delay_ms', '2000');
sq(q{INSERT INTO b SELECT g, ARRAY[g, 3]::real[] FROM generate_series(4, 60) g;
SELECT ft.submit_job('b_idx', 'compact')});
ok( wait_for(q{SELECT mutable_docs = 0 FROM ft.info('b_idx')}),
	'a compaction longer than segvec.job_time_limit runs to the end');
unlike(
	slurp_file($node->logfile, $logpos),
	qr/canceling statement due to statement timeout/,
	'and is not cancelled');

$node->stop;
done_testing();

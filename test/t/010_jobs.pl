# 010_jobs.pl: the job table of background work (segvec preloaded).
#
# - Coalescing: with segvec.job_delay_ms slowing each job, 100 submits for
#   one index run far fewer than 100 compactions, and the last state
#   persisted is the newest (every row compacted, keymap snapshotted).
# - Jobs for 3 distinct indexes all run.
# - A resubmit while a job runs leaves it to finish normally and becomes
#   the next pending job (further resubmits coalesce into that one).
# - A job whose worker errors out (cancelled) is counted as failed, put
#   back with a back-off, and retried; the launcher goes on.
# - A job whose index was dropped while it waited ends quietly.
# - An automatic compaction whose index is no longer over the threshold when
#   it runs is skipped (the worker counts the docs).
# - Full table (segvec.max_jobs = 2): requests that do not fit make a
#   worker sweep the database, and every index over the threshold is
#   compacted.
# - Without preloading: no background work, ft.jobs empty.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest qw(:DEFAULT !set_conf);

my $node = segvec_node('jobs', q{
segvec.naptime = 1
segvec.max_workers = 2
});

# SegvecTest's set_conf, then a moment for the launcher, which processes
# its SIGHUP as soon as it wakes
sub set_conf
{
	SegvecTest::set_conf(@_);
	select(undef, undef, undef, 0.3);
}

sub wait_idle
{
	wait_for('SELECT count(*) = 0 FROM ft.jobs') or die 'jobs never finished';
}

sub info
{
	my ($index, $cols) = @_;
	return sq("SELECT $cols FROM ft.info('$index')");
}

sq("CREATE EXTENSION segvec;\n" . vec_function());

is(sq('SELECT ft.background_enabled()'), 't', 'background work is on');
wait_for("SELECT count(*) = 1 FROM ft.job_workers() WHERE role = 'launcher'")
  or die 'no launcher';
pass('the launcher runs');
is(sq('SELECT count(*) FROM ft.jobs'), '0', 'no jobs at start');

# --- Coalescing -----------------------------------------------------------
sq(q{
CREATE TABLE c1 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX c1_idx ON c1 USING segvec (embedding) INCLUDE (id);
});
set_conf('segvec.job_delay_ms', '300');
my $sub0 = jstat('compact', 'submitted');
my $run0 = jstat('compact', 'run');
my $coal0 = jstat('compact', 'coalesced');
my $snap0 = jstat('snapshot', 'run');
# 100 times: commit one more row, then ask for a compaction
sq(q{
DO $$
BEGIN
  FOR i IN 1..100 LOOP
    INSERT INTO c1 VALUES (i, vec(i, 16));
    COMMIT;
    PERFORM ft.submit_job('c1_idx');
  END LOOP;
END $$;
});
wait_idle();
my $submitted = jstat('compact', 'submitted') - $sub0;
my $ran = jstat('compact', 'run') - $run0;
my $coalesced = jstat('compact', 'coalesced') - $coal0;
note "100 submits: $ran compactions ran, $coalesced submits coalesced";
is($submitted, 100, '100 compaction submits counted');
cmp_ok($ran, '>=', 1, 'at least one compaction ran');
cmp_ok($ran, '<=', 10, 'far fewer than 100 compactions ran');
is($ran + $coalesced, 100, 'every submit either ran or was coalesced');
is(jstat('compact', 'failed'), '0', 'no compaction failed');
is(info('c1_idx', 'mutable_docs, immutable_docs'), '0|100',
	'the last compaction persisted the newest state: all 100 rows');
cmp_ok(jstat('snapshot', 'run') - $snap0, '>=', 1,
	'a finished compaction submitted a keymap snapshot');
is(info('c1_idx', 'keymap_entries, keymap_buckets_changed'), '100|0',
	'the last keymap snapshot holds every key');

# --- Three indexes ----------------------------------------------------------
for my $t ('t1', 't2', 't3')
{
	sq(qq{
CREATE TABLE $t (id int PRIMARY KEY, embedding real[]);
CREATE INDEX ${t}_idx ON $t USING segvec (embedding);
INSERT INTO $t SELECT g, vec(g, 16) FROM generate_series(1, 50) g;
});
}
$run0 = jstat('compact', 'run');
is( sq(q{SELECT ft.submit_job('t1_idx') AND ft.submit_job('t2_idx')
           AND ft.submit_job('t3_idx')}),
	't',
	'three submits recorded');
wait_idle();
is(jstat('compact', 'run') - $run0, 3, 'three compactions ran');
for my $t ('t1', 't2', 't3')
{
	is(info("${t}_idx", 'mutable_docs, immutable_docs'),
		'0|50', "$t: compacted");
}

# --- Resubmit while running -------------------------------------------------
sq(q{
CREATE TABLE r1 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX r1_idx ON r1 USING segvec (embedding) INCLUDE (id);
INSERT INTO r1 SELECT g, vec(g, 16) FROM generate_series(1, 50) g;
});
set_conf('segvec.job_delay_ms', '10000');
$run0 = jstat('compact', 'run');
my $fail0 = jstat('compact', 'failed');
sq(q{SELECT ft.submit_job('r1_idx')});
wait_for(q{SELECT count(*) = 1 FROM ft.jobs WHERE index = 'r1_idx'::regclass
	    AND kind = 'compact' AND state = 'running'})
  or die 'the job never ran';
my $started = sq(q{SELECT started_at FROM ft.jobs
	WHERE index = 'r1_idx'::regclass AND kind = 'compact'});
# more rows, then six submits, and a look at the table, in one session
is( sq(qq{
INSERT INTO r1 SELECT g, vec(g, 16) FROM generate_series(51, 70) g;
SELECT count(ft.submit_job('r1_idx')) FROM generate_series(1, 6);
SELECT string_agg(state || ':' || coalesced ||
                  ':' || (state = 'pending' OR started_at = '$started'),
                  ',' ORDER BY state DESC)
FROM ft.jobs WHERE index = 'r1_idx'::regclass AND kind = 'compact';
}),
	"6\nrunning:0:true,pending:5:true",
	'a resubmit while running adds one pending job (more coalesce into it), the running job is untouched'
);
set_conf('segvec.job_delay_ms', '0');
wait_idle();
is(jstat('compact', 'run') - $run0, 2,
	'the running job finished, then the pending one ran');
is(jstat('compact', 'failed') - $fail0, 0, 'neither failed');
is(info('r1_idx', 'mutable_docs, immutable_docs'), '0|70',
	'the rows added during the first job were compacted by the second');

# --- A failing job is retried -----------------------------------------------
sq(q{
CREATE TABLE e1 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX e1_idx ON e1 USING segvec (embedding);
INSERT INTO e1 SELECT g, vec(g, 16) FROM generate_series(1, 40) g;
});
set_conf('segvec.job_delay_ms', '5000');
my $launcher =
  sq("SELECT pid FROM ft.job_workers() WHERE role = 'launcher'");
$fail0 = jstat('compact', 'failed');
$run0 = jstat('compact', 'run');
sq(q{SELECT ft.submit_job('e1_idx')});
wait_for(q{SELECT count(*) = 1 FROM ft.jobs WHERE index = 'e1_idx'::regclass
	    AND state = 'running'})
  or die 'the job never ran';
sq(q{SELECT pg_cancel_backend(worker_pid) FROM ft.jobs
     WHERE index = 'e1_idx'::regclass AND state = 'running'});
wait_for("SELECT failed = $fail0 + 1 FROM ft.job_stats() WHERE kind = 'compact'")
  or die 'the cancelled job was not counted as failed';
pass('a cancelled job is counted as failed');
is( sq(q{SELECT attempts FROM ft.jobs WHERE index = 'e1_idx'::regclass}),
	'1', 'the failed job is back in the table for a retry');
ok($node->log_contains('canceling statement due to user request'),
	'the error is logged');
set_conf('segvec.job_delay_ms', '0');
wait_idle();
is(jstat('compact', 'run') - $run0, 1, 'the retry ran');
is(info('e1_idx', 'mutable_docs, immutable_docs'), '0|40',
	'the retry compacted the index');
is( sq("SELECT pid FROM ft.job_workers() WHERE role = 'launcher'"),
	$launcher,
	'the launcher went on');

# --- A job for a dropped index ends quietly ---------------------------------
set_conf('segvec.max_workers', '0');
sq(q{
CREATE TABLE d1 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX d1_idx ON d1 USING segvec (embedding);
INSERT INTO d1 SELECT g, vec(g, 16) FROM generate_series(1, 40) g;
SELECT ft.submit_job('d1_idx');
});
is(sq(q{SELECT kind || ':' || state FROM ft.jobs}),
	'compact:pending', 'with max_workers = 0 the job waits');
my $skip0 = jstat('compact', 'skipped');
$fail0 = jstat('compact', 'failed');
sq('DROP TABLE d1');
set_conf('segvec.max_workers', '2');
wait_idle();
is(jstat('compact', 'skipped') - $skip0, 1, 'the job was skipped');
is(jstat('compact', 'failed') - $fail0, 0, 'and did not fail');

# --- An automatic compaction checks the real doc count ------------------------
# inserts over the index's threshold submit a compaction; by the time it
# runs, the threshold was raised over the segment's real size: skipped
set_conf('segvec.max_workers', '0');
sq(q{
CREATE TABLE h1 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX h1_idx ON h1 USING segvec (embedding)
  WITH (compact_threshold = 100);
INSERT INTO h1 SELECT g, vec(g, 16) FROM generate_series(1, 300) g;
});
is(sq(q{SELECT count(*) FROM ft.jobs WHERE index = 'h1_idx'::regclass}),
	'1', 'inserts over the threshold submitted a compaction');
sq('ALTER INDEX h1_idx SET (compact_threshold = 1000)');
$skip0 = jstat('compact', 'skipped');
$run0 = jstat('compact', 'run');
set_conf('segvec.max_workers', '2');
wait_idle();
is(jstat('compact', 'skipped') - $skip0, 1,
	'the worker skipped it: 300 docs are under the threshold now');
is(jstat('compact', 'run') - $run0, 0, 'no compaction ran');
is(info('h1_idx', 'mutable_docs, immutable_docs'), '300|0',
	'the docs stay in the mutable segment');

# --- Table full: the database is swept --------------------------------------
sq('ALTER SYSTEM SET segvec.max_jobs = 2');
sq('ALTER SYSTEM SET segvec.max_workers = 0');
$node->restart;
my $over0 = jstat('compact', 'overflowed');
for my $t ('o1', 'o2', 'o3', 'o4')
{
	sq(qq{
CREATE TABLE $t (id int PRIMARY KEY, embedding real[]);
CREATE INDEX ${t}_idx ON $t USING segvec (embedding)
  WITH (compact_threshold = 100);
INSERT INTO $t SELECT g, vec(g, 16) FROM generate_series(1, 300) g;
});
}
is(sq('SELECT count(*) FROM ft.jobs'), '2', 'two jobs fill the table');
cmp_ok(jstat('compact', 'overflowed') - $over0,
	'>=', 2, 'the other requests overflowed');
is(jstat('compact', 'dropped'), '0', 'none was dropped');
set_conf('segvec.max_workers', '2');
wait_for(q{
SELECT bool_and(mutable_docs = 0 AND immutable_docs = 300)
FROM (VALUES ('o1_idx'), ('o2_idx'), ('o3_idx'), ('o4_idx')) v(i),
     LATERAL ft.info(i::regclass)})
  or die 'not every index was compacted';
pass('every index over the threshold was compacted');
ok($node->log_contains('the job table was full'), 'by a sweep of the database');

$node->stop;

# --- Without preloading -----------------------------------------------------
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
$plain->safe_psql(
	'postgres', q{
CREATE EXTENSION segvec;
CREATE TABLE p (id int PRIMARY KEY, embedding real[]);
CREATE INDEX p_idx ON p USING segvec (embedding) WITH (compact_threshold = 50);
INSERT INTO p SELECT g, ARRAY[g, g + 1, g + 2]::real[] FROM generate_series(1, 500) g;
});
is($plain->safe_psql('postgres', 'SELECT ft.background_enabled()'),
	'f', 'without preloading background work is off');
is($plain->safe_psql('postgres', q{SELECT ft.submit_job('p_idx')}),
	'f', 'submits are not recorded');
is($plain->safe_psql('postgres', 'SELECT count(*) FROM ft.jobs'),
	'0', 'ft.jobs is empty');
is($plain->safe_psql('postgres', 'SELECT sum(submitted) FROM ft.job_stats()'),
	'0', 'the counters are zero');
is($plain->safe_psql('postgres', q{SELECT background_work FROM ft.info('p_idx')}),
	'f', 'ft.info says background work is off');
is($plain->safe_psql('postgres', q{SELECT docs_compacted FROM ft.compact('p_idx')}),
	'500', 'ft.compact compacts in the foreground');
$plain->stop;

done_testing();

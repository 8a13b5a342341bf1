# 060_security_jobs.pl: background jobs and security (segvec preloaded).
#
# - Compaction and snapshot jobs run as the table's owner (a plain role),
#   not as the worker's bootstrap superuser: their DEBUG1 log lines name
#   the role they ran as.
# - A background merge applies the queue of a table whose domain, trigger
#   and default call the owner's code as the owner: the code finds itself
#   running as the owner, never as a superuser, and the owner gains nothing.
# - DROP EXTENSION segvec CASCADE right after ft.add in a fresh database
#   succeeds 20 times out of 20 (jobs for the objects being dropped give
#   way instead of deadlocking with the DROP), and 3 more times while a
#   merge job is visibly running (its table's trigger sleeps).
# - segvec.job_time_limit cancels a merge whose trigger sleeps past it (a
#   failed job, retried later); ft.jobs.waiting is filled in.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('secjobs', q{
segvec.naptime = 1
segvec.max_workers = 2
log_min_messages = debug1
deadlock_timeout = 100ms
});

sq(q{
CREATE EXTENSION segvec;
CREATE ROLE app LOGIN;
GRANT CREATE ON SCHEMA public TO app;
});

# --- jobs run as the table's owner --------------------------------------------
$node->safe_psql(
	'postgres', q{
SET ROLE app;
CREATE TABLE docs (id int PRIMARY KEY, embedding real[]);
CREATE INDEX docs_idx ON docs USING segvec (embedding) INCLUDE (id)
	WITH (compact_threshold = 50);
INSERT INTO docs SELECT g, ARRAY[g, g % 7, 1]::real[]
	FROM generate_series(1, 400) g;
});
ok( $node->poll_query_until(
		'postgres', q{SELECT immutable_docs > 0 FROM ft.info('docs_idx')}),
	'a background compaction ran');
$node->wait_for_log(qr/segvec wrote a keymap snapshot of index "docs_idx"/);
my $log = slurp_file($node->logfile);
like(
	$log,
	qr/segvec compacted index "docs_idx" as role "app"/,
	'the compaction ran as the table owner');
like(
	$log,
	qr/segvec wrote a keymap snapshot of index "docs_idx" as role "app"/,
	'the snapshot ran as the table owner');
unlike(
	$log,
	qr/segvec (compacted index|wrote a keymap snapshot of index) "docs_idx" as role "(?!app")/,
	'and never as anyone else');

# --- a background merge runs the owner's code as the owner --------------------
$node->safe_psql(
	'postgres', q{
SET ROLE app;
CREATE TABLE seen (who name, super boolean, what text);
-- the owner's code runs with search_path = pg_catalog, pg_temp: names are
-- qualified
CREATE FUNCTION note(what text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.seen SELECT current_user, rolsuper, what
		FROM pg_roles WHERE rolname = current_user;
	IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		ALTER ROLE app SUPERUSER;
	END IF;
	RETURN true;
END $$;
CREATE DOMAIN tagd AS text CHECK (public.note('domain'));
CREATE FUNCTION trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM public.note('trigger'); RETURN NEW; END $$;
CREATE TABLE q (id int PRIMARY KEY, embedding real[], tag tagd,
	d text DEFAULT (public.note('default')::text));
CREATE INDEX q_idx ON q USING segvec (embedding) INCLUDE (id);
CREATE TRIGGER q_trig BEFORE INSERT ON q FOR EACH ROW EXECUTE FUNCTION trig();
SELECT ft.add('q_idx', g::text, ARRAY[g, 1]::real[],
	jsonb_build_object('tag', 't' || g)) FROM generate_series(1, 5) g;
});
ok( $node->poll_query_until('postgres', q{SELECT count(*) = 5 FROM q}),
	'the background merge applied the queue');
is( sq(q{SELECT string_agg(DISTINCT who || ':' || super, ',') FROM seen
		 WHERE what IN ('trigger', 'default')}),
	'app:false',
	"the merge ran the owner's trigger and default as the owner, not as a superuser");
is(sq(q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}),
	'f', 'the owner gained nothing');

# --- DROP EXTENSION CASCADE with queued work ------------------------------------
my $ok = 0;
for my $i (1 .. 20)
{
	my $db = "drop$i";
	sq("CREATE DATABASE $db");
	sq(q{
CREATE EXTENSION segvec;
CREATE TABLE t (id int PRIMARY KEY, embedding real[]);
CREATE INDEX t_idx ON t USING segvec (embedding) INCLUDE (id)
	WITH (compact_threshold = 20);
INSERT INTO t SELECT g, ARRAY[g, 1]::real[] FROM generate_series(1, 60) g;
SELECT count(ft.add('t_idx', g::text, ARRAY[g, 2]::real[]))
	FROM generate_series(1, 50) g;
}, $db);
	my ($rc, $out, $err) =
	  $node->psql($db, 'DROP EXTENSION segvec CASCADE', on_error_stop => 1);
	if ($rc == 0)
	{
		$ok++;
	}
	else
	{
		diag("DROP EXTENSION in $db: $err");
	}
}
is($ok, 20, 'DROP EXTENSION segvec CASCADE right after ft.add: 20 of 20');

# while a merge job is running (its table's trigger sleeps 50 ms a row)
$ok = 0;
for my $i (1 .. 3)
{
	my $db = "dropbusy$i";
	sq("CREATE DATABASE $db");
	sq(q{
CREATE EXTENSION segvec;
CREATE TABLE t (id int PRIMARY KEY, embedding real[]);
CREATE INDEX t_idx ON t USING segvec (embedding) INCLUDE (id);
CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_catalog.pg_sleep(0.05); RETURN NEW; END $$;
CREATE TRIGGER t_slow BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION slow();
SELECT count(ft.add('t_idx', g::text, ARRAY[g, 2]::real[]))
	FROM generate_series(1, 50) g;
}, $db);
	$node->poll_query_until($db,
		q{SELECT count(*) = 1 FROM ft.jobs WHERE kind = 'merge' AND state = 'running'})
	  or diag("no merge job seen running in $db");
	my ($rc, $out, $err) =
	  $node->psql($db, 'DROP EXTENSION segvec CASCADE', on_error_stop => 1);
	if ($rc == 0)
	{
		$ok++;
	}
	else
	{
		diag("DROP EXTENSION in $db: $err");
	}
}
is($ok, 3, 'DROP EXTENSION segvec CASCADE during a running merge: 3 of 3');

# --- segvec.job_time_limit bounds a job; ft.jobs shows the wait ---------------
sq(q{
CREATE TABLE slowt (id int PRIMARY KEY, embedding real[]);
CREATE INDEX slowt_idx ON slowt USING segvec (embedding) INCLUDE (id);
CREATE FUNCTION slow_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_catalog.pg_sleep(2); RETURN NEW; END $$;
CREATE TRIGGER slowt_slow BEFORE INSERT ON slowt FOR EACH ROW
	EXECUTE FUNCTION slow_row();
ALTER SYSTEM SET segvec.job_time_limit = '300ms';
SELECT pg_reload_conf();
});
my $failed0 = sq(q{SELECT failed FROM ft.job_stats() WHERE kind = 'merge'});
my $logpos = -s $node->logfile;
sq(q{SELECT ft.add('slowt_idx', '1', '{1,1}')});
$node->wait_for_log(qr/canceling statement due to statement timeout/, $logpos);
ok( $node->poll_query_until(
		'postgres',
		qq{SELECT failed > $failed0 FROM ft.job_stats() WHERE kind = 'merge'}),
	'a merge over segvec.job_time_limit is cancelled and counted as failed');
is( sq(q{SELECT count(*) FROM ft.jobs
		 WHERE index = 'slowt_idx'::regclass AND waiting IS NULL}),
	'0', 'ft.jobs shows how long each job waited');
sq(q{
ALTER SYSTEM RESET segvec.job_time_limit;
SELECT pg_reload_conf();
DROP TABLE slowt;
});

# the server is still serving jobs
sq(q{INSERT INTO docs SELECT g, ARRAY[g, 3, 1]::real[] FROM generate_series(401, 500) g;
SELECT ft.submit_job('docs_idx', 'compact')});
ok( $node->poll_query_until(
		'postgres', q{SELECT mutable_docs = 0 FROM ft.info('docs_idx')}),
	'background compaction still works');

$node->stop;
done_testing();

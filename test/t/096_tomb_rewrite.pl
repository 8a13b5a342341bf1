# 096_tomb_rewrite.pl: a segment whose tombstones pass
# segvec.merge_deletes_pct is rewritten without them (deleted
# docs are reclaimed).
#
# The case: a one-segment index; an UPDATE of every row's vector, in
# batches, each compacted and merged into the big segment (its old docs
# not yet tombstoned); VACUUM.  The segment then holds twice the rows,
# exactly half of them tombstones, and the biggest segment merges with
# nothing, so only the rewrite by tombstones reclaims them.  VACUUM's
# cleanup rewrites it (without background workers) or submits a job that
# does (with them), and ft.compact does too: tombstones 0, docs = rows, the
# segment the size of a fresh index's, every row found by its own vector.
#
# Also: the threshold (segvec.merge_deletes_pct = 100 keeps a half-dead
# segment), a quantized index, and crashes (PANIC) at the rewrite's test
# points "merge-built" (before its install) and "merge-installed" (after
# it) inside VACUUM: nothing lost, and the next VACUUM finishes the job.
#
# With background workers (section 7, each interleaving forced with test
# points, waiting for states): VACUUM held in its cleanup scan until no
# job of the index is left, then the rewrite follows (the job once ran
# during that scan, found the merge lock taken and did nothing);
# ft.compact while the job is held building the rewrite waits for it;
# a job that meets another VACUUM's scan gives way and retries; and the
# UPDATE of every row.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('tomb', q{
segvec.max_workers = 0
maintenance_work_mem = '1MB'
segvec.enable_test_hooks = on
restart_after_crash = on
});

my $n = 1000;

sub info
{
	my ($idx) = @_;
	return sq(
		qq{SELECT num_docs, tombstones, num_segments FROM ft.info('$idx')});
}

# rows whose own vector does not find them at k = 1
sub self_misses
{
	my ($tab) = @_;
	return sq(
		qq{SET enable_seqscan = off; SET segvec.ef_search = 200;
		   SELECT count(*) FROM $tab a
		   WHERE (SELECT b.id FROM $tab b ORDER BY b.v <-> a.v LIMIT 1)
		   IS DISTINCT FROM a.id});
}

sub segment_pages
{
	my ($idx) = @_;
	return sq(qq{SELECT segment_pages FROM ft.storage_stats('$idx')});
}

# the reproduction: UPDATE every row's vector in 4 batches, each
# compacted (and merged into the big segment, whose old docs are not
# tombstoned yet), then VACUUM
sub update_all
{
	my ($tab, $idx, $salt, $extra) = @_;
	$extra //= '';
	for my $b (0 .. 3)
	{
		my ($lo, $hi) = ($b * $n / 4 + 1, ($b + 1) * $n / 4);
		sq(qq{UPDATE $tab SET v = vec(id, $salt) WHERE id BETWEEN $lo AND $hi});
		sq(qq{SET segvec.merge_ratio = 1024; SELECT ft.compact('$idx')});
	}
	sq("$extra VACUUM $tab");
}

# the extension, vec(i, salt) and table t of $n rows in one segment, its
# index t_v with the given compact_threshold
sub setup_t
{
	my ($threshold) = @_;
	sq(qq{
CREATE EXTENSION segvec;
CREATE FUNCTION vec(i bigint, salt int) RETURNS real[] IMMUTABLE LANGUAGE sql AS \$\$
  SELECT array_agg((sin(i * 0.37 + j * 1.3 + salt) + cos(i * 0.011 * j + salt))::real
                   ORDER BY j)
  FROM generate_series(1, 16) j \$\$;
CREATE TABLE t (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
INSERT INTO t SELECT i, vec(i, 0) FROM generate_series(1, $n) i;
CREATE INDEX t_v ON t USING segvec (v) INCLUDE (id) WITH (compact_threshold = $threshold);
SELECT ft.compact('t_v');
});
}

setup_t(100);
sq(q{CREATE TABLE tf (id bigint PRIMARY KEY, v real[])});
is(info('t_v'), "$n|0|1", 'one segment to start with');

# (num_docs: live docs; tombstones are counted apart)

# ---- 1. the threshold: at 100%, a half-dead segment stays ---------------
update_all('t', 't_v', 1, 'SET segvec.merge_deletes_pct = 100;');
is(info('t_v'), "$n|$n|1",
	'merge_deletes_pct = 100: the segment is half tombstones, and stays');

# ---- 2. ft.compact rewrites it ------------------------------------------
my $before = sq(q{SELECT segment_merges FROM ft.storage_stats('t_v')});
sq(q{SELECT ft.compact('t_v')});
is(info('t_v'), "$n|0|1", 'ft.compact rewrote the segment without its tombstones');
is(sq(q{SELECT segment_merges FROM ft.storage_stats('t_v')}), $before + 1,
	'in one merge');
# ft.verify searches every row, at ef_search 200
my %vopt = (search_limit => 1000000, ef_search => 200);
is(verify_problems('t_v', %vopt), '', 'ft.verify is clean after the rewrite');
is(self_misses('t'), '0', 'every row found by its own vector');

# ---- 3. VACUUM rewrites it (no background workers) ----------------------
update_all('t', 't_v', 2);
is(info('t_v'), "$n|0|1",
	'VACUUM rewrote the half-dead segment: tombstones 0, docs = rows');
sq(q{INSERT INTO tf SELECT * FROM t;
     CREATE INDEX tf_v ON tf USING segvec (v) INCLUDE (id) WITH (compact_threshold = 100);
     SELECT ft.compact('tf_v')});
my ($sp, $fp) = (segment_pages('t_v'), segment_pages('tf_v'));
note "segment pages: rewritten $sp, fresh $fp";
cmp_ok($sp, '<=', 1.3 * $fp, "segment pages ($sp) within 1.3x a fresh index ($fp)");
cmp_ok(sq(q{SELECT free_extent_pages FROM ft.storage_stats('t_v')}),
	'>', 0, 'the old extents went to the free-extent list');
is(verify_problems('t_v', %vopt), '', 'ft.verify is clean');
is(self_misses('t'), '0', 'every row found by its own vector');

# a fifth of the rows dead is the default threshold; a tenth is not
sq(qq{DELETE FROM t WHERE id % 10 = 0; VACUUM t});
is(info('t_v'), (0.9 * $n) . '|' . (0.1 * $n) . '|1',
	'10% tombstones: below the default threshold, kept');
sq(qq{DELETE FROM t WHERE id % 10 = 1; VACUUM t});
is(info('t_v'), (0.8 * $n) . '|0|1', '20% tombstones: rewritten');
sq(qq{INSERT INTO t SELECT i, vec(i, 2) FROM generate_series(1, $n) i
      WHERE i % 10 IN (0, 1); SELECT ft.compact('t_v')});

# ---- 4. a quantized index -----------------------------------------------
sq(qq{
CREATE TABLE q (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
INSERT INTO q SELECT i, vec(i, 0) FROM generate_series(1, $n) i;
CREATE INDEX q_v ON q USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100, quantization = 'sq8');
SELECT ft.compact('q_v');
});
update_all('q', 'q_v', 3);
is(info('q_v'), "$n|0|1", 'sq8: VACUUM rewrote the half-dead segment');
is(sq(q{SELECT string_agg(s->>'quantization', ',')
        FROM ft.info('q_v'), jsonb_array_elements(segments) s}),
	'sq8', 'sq8: the rewritten segment is quantized');
is(verify_problems('q_v', %vopt), '',
	'sq8: ft.verify is clean');
is(self_misses('q'), '0', 'sq8: every row found by its own vector');

# ---- 5. crashes in the rewrite, inside VACUUM ---------------------------
my $salt = 10;
for my $point ('merge-built', 'merge-installed')
{
	my $extra = "SET segvec.merge_deletes_pct = 100;";
	update_all('t', 't_v', $salt++, $extra);
	is(info('t_v'), "$n|$n|1", "$point: a half-dead segment");
	my ($ret, $out, $err) = $node->psql(
		'postgres', qq{
SET segvec.test_point = '$point';
SET segvec.test_point_action = 'panic';
VACUUM t;
});
	isnt($ret, 0, "$point: VACUUM crashed in the rewrite");
	accepting($node)
	  or die 'server did not come back after the PANIC';
	is(verify_problems('t_v', %vopt), '',
		"$point: ft.verify is clean after the crash");
	is(self_misses('t'), '0',
		"$point: every row found by its own vector after the crash");
	sq('VACUUM t');
	is(info('t_v'), "$n|0|1", "$point: the next VACUUM finished the rewrite");
	is(verify_problems('t_v', %vopt), '', "$point: ft.verify is clean");
}

# ---- 6. aliases whose targets the rewrite dropped ------------------------
# (as in the update_alias suite: 512 dims, TOASTed, a btree on note so
# that its UPDATEs are not HOT and get aliases)  VACUUM rewrites the
# segment without the old versions' docs, the aliases' targets; their rows
# updated again die and are pruned, and compaction's freeze, finding
# neither target nor row, leaves those aliases out and removes their keymap
# entries: no phantom entry
sq(q{
CREATE FUNCTION uvec(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg((sin(i * 0.7 + j * 0.31) + cos(i * 0.013 * j))::real
                   ORDER BY j)
  FROM generate_series(1, 512) j $$;
CREATE TABLE a (id int PRIMARY KEY, v real[], note int)
  WITH (autovacuum_enabled = off);
CREATE INDEX a_note ON a (note);
INSERT INTO a SELECT i, uvec(i), 0 FROM generate_series(1, 200) i;
CREATE INDEX a_v ON a USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 1000000);
SELECT ft.compact('a_v');
UPDATE a SET note = note + 1 WHERE id <= 100;
VACUUM a;
});
is(sq(q{SELECT tombstones, num_segments FROM ft.info('a_v')}), '0|1',
	'aliases: VACUUM rewrote their targets\' segment');
sq(q{UPDATE a SET note = note + 1 WHERE id <= 120;
     SELECT count(*) FROM a WHERE note >= 0;
     SELECT ft.compact('a_v')});
# (before VACUUM the dead versions' docs are indexed docs still)
is( sq(
		q{SET segvec.ef_search = 200;
		  SELECT missing_docs, duplicate_docs, phantom_entries,
		  missing_keymap_entries, search_misses FROM ft.verify('a_v', false, 1000000)}),
	'0|0|0|0|0',
	'aliases: no phantom keymap entry after the freeze, nothing missing');
is(self_misses('a'), '0', 'aliases: every row found by its own vector');
sq(q{VACUUM a; SELECT ft.compact('a_v')});
is(verify_problems('a_v', %vopt), '',
	'aliases: and after VACUUM and ft.compact');

$node->stop;

# ---- 7. with background workers: VACUUM leaves the rewrite to a job ------
# (A job submitted before VACUUM's cleanup scan, which holds the merge
# lock (share), would find the lock taken and, as if a merge held it, leave
# the rewrite to no one; ft.compact must wait for a job that is building
# the rewrite.)  Each case holds a session at a test point, so
# the interleaving is the one that failed, whatever the machine's speed.
my $bg = segvec_node('tomb_bg', q{
segvec.naptime = 1
segvec.max_workers = 2
maintenance_work_mem = '1MB'
segvec.enable_test_hooks = on
});
$node = $bg;
setup_t(100000);
is(info('t_v'), "$n|0|1", 'workers: one segment to start with');

my $waiting = q{SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory'
	AND objid = 21334 AND NOT granted};
my $no_job = q{SELECT count(*) = 0 FROM ft.jobs WHERE index = 't_v'::regclass};

# 7a. VACUUM held in its cleanup scan (holding the merge lock, share) until
# no job of the index is pending or running: the rewrite follows
sq(q{DELETE FROM t WHERE id % 10 < 3});
my $vac = hold_at($bg, 'vacuum-cleanup-scan', 'VACUUM t');
ok($bg->poll_query_until('postgres', $no_job),
	'workers: no job of the index left while VACUUM scans');
$vac->release;
ok( $bg->poll_query_until(
		'postgres',
		q{SELECT num_docs = 700 AND tombstones = 0 FROM ft.info('t_v')}),
	'workers: the job VACUUM submitted rewrote the 30%-dead segment');
is(info('t_v'), "700|0|1", 'workers: one segment, no tombstones');

# 7b. ft.compact while the job builds the rewrite (held at "merge-built",
# set for the workers in postgresql.conf): it waits for the job's install
# and returns with no segment due for its rewrite
sq(q{ALTER SYSTEM SET segvec.test_point = 'merge-built';
     ALTER SYSTEM SET segvec.test_point_action = 'wait';
     SELECT pg_reload_conf()});
$bg->poll_query_until('postgres', q{SHOW segvec.test_point}, 'merge-built')
  or die 'the configuration was not reloaded';
my $holder = $bg->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(21334)');
sq(q{DELETE FROM t WHERE id % 10 IN (3, 4);
     SET segvec.test_point = ''; VACUUM t});
$bg->poll_query_until('postgres', $waiting)
  or die 'the job never reached merge-built';
my $cmp = $bg->background_psql('postgres');
my $cmp_pid = $cmp->query_safe(q{SET segvec.test_point = '';
	SELECT pg_backend_pid()});
$cmp->query_until(
	qr/started\n/, q{
\echo started
SELECT segments_merged FROM ft.compact('t_v');
});
ok( $bg->poll_query_until(
		'postgres', qq{SELECT count(*) > 0 FROM pg_locks
		WHERE pid = $cmp_pid AND locktype = 'page' AND NOT granted}),
	'ft.compact waits for the job that builds the rewrite');
sq(q{ALTER SYSTEM RESET segvec.test_point;
     ALTER SYSTEM RESET segvec.test_point_action;
     SELECT pg_reload_conf()});
$holder->query_safe('SELECT pg_advisory_unlock(21334)');
$holder->quit;
like(
	$cmp->query_safe(
		q{SELECT num_docs, tombstones, num_segments FROM ft.info('t_v')}),
	qr/^500\|0\|1$/m,
	'workers: when ft.compact returns, the segment is rewritten');

# 7c. a job that meets another VACUUM's cleanup scan gives way and
# retries: both workers held in compactions of another database's indexes
# (segvec.job_delay_ms; another database, so that they hold back no
# horizon of this one's VACUUM) while a VACUUM submits the rewrite, a
# second VACUUM held in its cleanup scan, then the workers let go
sq(q{CREATE DATABASE other});
$bg->safe_psql(
	'other', qq{
CREATE EXTENSION segvec;
CREATE TABLE x1 (id int, v real[]); CREATE TABLE x2 (id int, v real[]);
CREATE INDEX x1_v ON x1 USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100000);
CREATE INDEX x2_v ON x2 USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100000);
INSERT INTO x1 SELECT i, ARRAY[i, 1, 2]::real[] FROM generate_series(1, 10) i;
INSERT INTO x2 SELECT i, ARRAY[i, 2, 1]::real[] FROM generate_series(1, 10) i;
});
sq(q{ALTER SYSTEM SET segvec.job_delay_ms = '10min';
     SELECT pg_reload_conf()});
$bg->poll_query_until('postgres', q{SHOW segvec.job_delay_ms}, '10min')
  or die 'the configuration was not reloaded';
$bg->safe_psql('other', q{SELECT ft.submit_job('x1_v'), ft.submit_job('x2_v')});
$bg->poll_query_until('postgres',
	q{SELECT count(*) = 2 FROM ft.jobs WHERE state = 'running'})
  or die 'the workers never took the compactions';
sq(q{DELETE FROM t WHERE id % 10 IN (5, 6); VACUUM t});
is( sq(q{SELECT state FROM ft.jobs WHERE index = 't_v'::regclass}),
	'pending', 'workers busy: the rewrite waits in the job table');
$vac = hold_at($bg, 'vacuum-cleanup-scan', 'VACUUM t');
sq(q{ALTER SYSTEM RESET segvec.job_delay_ms; SELECT pg_reload_conf()});
ok( $bg->poll_query_until(
		'postgres', q{SELECT count(*) > 0 FROM ft.jobs
		WHERE index = 't_v'::regclass AND state = 'pending'
		AND retry_at IS NOT NULL}),
	'workers: the job met the merge lock of the scan and will retry');
is(info('t_v'), "300|200|1", 'workers: nothing rewritten meanwhile');
$vac->release;
ok( $bg->poll_query_until(
		'postgres',
		q{SELECT num_docs = 300 AND tombstones = 0 FROM ft.info('t_v')}),
	'workers: the retry rewrote the segment');
$cmp->quit;

# 7d. the reproduction of section 3 (every row updated, VACUUM)
sq(qq{INSERT INTO t SELECT i, vec(i, 0) FROM generate_series(1, $n) i
      WHERE i % 10 < 7; SELECT ft.compact('t_v')});
update_all('t', 't_v', 1);
ok( $bg->poll_query_until(
		'postgres',
		qq{SELECT num_docs = $n AND tombstones = 0 FROM ft.info('t_v')}),
	'workers: a job rewrote the half-dead segment');
is(info('t_v'), "$n|0|1", 'workers: a job rewrote the half-dead segment');
is(verify_problems('t_v', %vopt), '', 'workers: ft.verify is clean');
is(self_misses('t'), '0', 'workers: every row found by its own vector');

$bg->stop;
done_testing();

# 020_merge_background.pl: queued upserts applied by background merges
# (segvec preloaded).
#
# - 2,000 ft.add/ft.del calls from 4 pgbench clients (as the table's
#   owner, a plain role) drain through background merges to exactly the
#   last-write-wins result computed from a log of the generations; the
#   merges run as the owner (a column defaulting to current_user says so),
#   not as the worker's superuser.
# - Coalescing: far fewer merges (and merge jobs) than adds.
# - Crash (stop('immediate')) inside a background merge (a trigger makes
#   its MERGE sleep half-way through the batch): after restart the batch is
#   still queued and nothing of it is in the table, and once the queue
#   drains every pending upsert is applied exactly once
#   (pending_applied_total grows by exactly the ops queued, the table is
#   the expected one).
# - segvec.merge_concurrency = 1: while four indexes have pending rows and
#   four workers could take their merge jobs, at most one merge job runs
#   (ft.jobs) and at most one merge holds a merge slot at a time;
#   the tables had no index on id, so each first merge builds the btree
#   (once, counted in merge_index_built_total).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('merge', q{
segvec.naptime = 1
segvec.max_workers = 4
segvec.merge_concurrency = 1
segvec.merge_batch_rows = 100
});

sub wait_drained
{
	my ($what) = @_;
	$node->poll_query_until('postgres',
		'SELECT count(*) = 0 FROM ft.pending')
	  or die "queue never drained: $what";
}

sq(q{
CREATE EXTENSION segvec;
CREATE ROLE app LOGIN;
GRANT CREATE ON SCHEMA public TO app;
});

# The table belongs to app; app queues the upserts and logs each one with
# the generation ft.add returned.  The expected table: for each id, its
# newest op (a delete removes it); ids never touched keep their row.
$node->safe_psql(
	'postgres', q{
CREATE TABLE items (id bigint PRIMARY KEY, embedding real[], src text,
	who text DEFAULT current_user);
CREATE INDEX items_emb ON items USING segvec (embedding) INCLUDE (id);
INSERT INTO items SELECT g, ARRAY[0, g, 0]::real[], 'initial', 'initial'
	FROM generate_series(1, 150) g;
CREATE TABLE items_initial AS SELECT id, embedding, src FROM items;
CREATE TABLE addlog (id bigint, gen bigint, del boolean, vec real[], src text);
CREATE FUNCTION log_op(idx regclass, i bigint, del boolean, c int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	v real[] := ARRAY[c, i, random()]::real[];
	g bigint;
BEGIN
	IF del THEN
		g := ft.del(idx, i::text);
	ELSE
		g := ft.add(idx, i::text, v, jsonb_build_object('src', 'client ' || c));
	END IF;
	INSERT INTO addlog VALUES (i, g, del, CASE WHEN NOT del THEN v END,
		'client ' || c);
END
$$;
CREATE VIEW expected AS
	SELECT i.id, i.embedding, i.src FROM items_initial i
	WHERE NOT EXISTS (SELECT FROM addlog l WHERE l.id = i.id)
	UNION ALL
	SELECT l.id, l.vec, l.src FROM (
		SELECT DISTINCT ON (id) * FROM addlog ORDER BY id, gen DESC) l
	WHERE NOT l.del;
CREATE VIEW actual AS SELECT id, embedding, src FROM items;
}, extra_params => [ '-U', 'app' ]);

is(sq('SELECT ft.background_enabled()'), 't', 'background work is on');

# --- 2,000 queued upserts from 4 clients --------------------------------
my $script = $node->basedir . '/ops.sql';
append_to_file(
	$script, q{
\set id random(1, 300)
\set d random(1, 10)
SELECT log_op('items_emb', :id, :d = 1, :client_id);
});
$node->command_ok(
	[
		'pgbench', '-n', '-c', '4', '-j', '4', '-t', '500', '-U', 'app',
		'-f', $script, 'postgres'
	],
	'pgbench: 4 clients, 2,000 ft.add/ft.del');
is(sq('SELECT count(*) FROM addlog'), '2000', '2,000 ops logged');

wait_drained('pgbench ops');
is( sq(q{SELECT count(*) FROM (
		(SELECT * FROM expected EXCEPT ALL SELECT * FROM actual)
		UNION ALL
		(SELECT * FROM actual EXCEPT ALL SELECT * FROM expected)) d}),
	'0',
	'the table is the last-write-wins result of the 2,000 ops');
is(sq('SELECT pending_applied_total FROM ft.merge_stats(\'items_emb\')'),
	'2000', 'every op applied exactly once');
is( sq(q{SELECT count(*) FROM items WHERE who NOT IN ('app', 'initial')}),
	'0', 'merged rows were written as the owner, not the worker\'s role');
cmp_ok(sq(q{SELECT count(*) FROM items WHERE who = 'app'}),
	'>', 0, 'some rows were inserted by merges');

# coalescing
my $merges = sq('SELECT merges_total FROM ft.merge_stats(\'items_emb\')');
my ($submitted, $coalesced, $run) = split /\|/,
  sq(q{SELECT submitted, coalesced, run FROM ft.job_stats()
	   WHERE kind = 'merge'});
note("2000 ops: $merges merges; merge jobs: $submitted submitted, "
	  . "$coalesced coalesced, $run run");
cmp_ok($merges, '<', 500, 'far fewer merges than adds');
cmp_ok($run, '<', $submitted, 'merge jobs coalesce');
cmp_ok($coalesced, '>', 0, 'some submits were coalesced');

# the segvec index agrees with the table: every row is its own neighbour
is( sq(q{SET enable_seqscan = off;
	SELECT count(*) FROM items a
	WHERE (SELECT b.id FROM items b ORDER BY b.embedding <-> a.embedding
		   LIMIT 1) <> a.id}),
	'0', 'each merged row is found through the segvec index');

# --- crash in the middle of a background merge --------------------------
# A trigger of the owner's makes the MERGE sleep when it writes id 1002
# (in the first batch): the crash lands inside the MERGE, after some rows
# of the batch were written, before the commit.
my $applied_before =
  sq('SELECT pending_applied_total FROM ft.merge_stats(\'items_emb\')');
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION slow_1002() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.id = 1002 THEN
		PERFORM pg_sleep(5);
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER slow_1002 BEFORE INSERT ON items
	FOR EACH ROW EXECUTE FUNCTION slow_1002();
BEGIN;
SELECT log_op('items_emb', g, g % 7 = 0, 9) FROM generate_series(1001, 1250) g;
SELECT log_op('items_emb', g, false, 9) FROM generate_series(1, 50) g;
COMMIT;
}, extra_params => [ '-U', 'app' ]);
$node->poll_query_until('postgres',
	q{SELECT merging FROM ft.merge_stats('items_emb')})
  or die 'the merge never started';
select(undef, undef, undef, 1.5);
is( sq(q{SELECT count(*) FROM pg_stat_activity
		WHERE backend_type = 'segvec worker' AND wait_event = 'PgSleep'}),
	'1', 'the merge is sleeping inside the MERGE');
$node->stop('immediate');
# no workers at first, so that the state the crash left can be looked at
# before the startup sweep applies the queue
$node->append_conf('postgresql.conf', "segvec.max_workers = 0\n");
$node->start;
$node->safe_psql('postgres', 'DROP TRIGGER slow_1002 ON items',
	extra_params => [ '-U', 'app' ]);

is(sq('SELECT count(*) FROM ft.pending'), '300',
	'after the crash the whole batch is still queued');
is(sq('SELECT count(*) FROM items WHERE id > 1000'), '0',
	'nothing of the crashed merge is in the table');
is(sq('SELECT pending_applied_total FROM ft.merge_stats(\'items_emb\')'),
	$applied_before, 'the crashed merge counted nothing');

# the job table is in shared memory and starts empty: the launcher's
# startup sweep finds the queue and merges it once workers may run
$node->append_conf('postgresql.conf', "segvec.max_workers = 4\n");
$node->reload;
wait_drained('after the crash');
is( sq(q{SELECT count(*) FROM (
		(SELECT * FROM expected EXCEPT ALL SELECT * FROM actual)
		UNION ALL
		(SELECT * FROM actual EXCEPT ALL SELECT * FROM expected)) d}),
	'0', 'after the crash and the drain the table is the expected one');
is( sq('SELECT pending_applied_total FROM ft.merge_stats(\'items_emb\')')
	  - $applied_before,
	300, 'each op queued before the crash applied exactly once');

# --- segvec.merge_concurrency = 1 across four indexes --------------------
# each MERGE into a c table takes at least 0.3 s (a statement trigger), so
# merges that overlap would be seen
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION slow_merge() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_sleep(0.3);
	RETURN NULL;
END
$$;
}, extra_params => [ '-U', 'app' ]);
for my $n (1 .. 4)
{
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE c$n (id bigint, embedding real[]);
CREATE INDEX c${n}_emb ON c$n USING segvec (embedding) INCLUDE (id);
CREATE TRIGGER slow AFTER INSERT ON c$n
	FOR EACH STATEMENT EXECUTE FUNCTION slow_merge();
}, extra_params => [ '-U', 'app' ]);
}
# watch(): until the queues drain, the most merges holding a slot, the
# most indexes being merged, and the most merge jobs taken by workers
sq(q{
CREATE FUNCTION watch(OUT slots int, OUT merging int, OUT jobs int,
	OUT drained boolean)
LANGUAGE plpgsql AS $$
DECLARE
	s int;
	m int;
	j int;
BEGIN
	slots := 0; merging := 0; jobs := 0;
	FOR i IN 1 .. 1200 LOOP
		SELECT count(*) INTO s FROM pg_locks
		 WHERE locktype = 'advisory' AND objsubid = 21321 AND granted;
		SELECT count(*) INTO m FROM ft.merge_stats() s WHERE s.merging;
		SELECT count(*) INTO j FROM ft.jobs WHERE kind = 'merge' AND state = 'running';
		slots := greatest(slots, s);
		merging := greatest(merging, m);
		jobs := greatest(jobs, j);
		drained := NOT EXISTS (SELECT FROM ft.pending);
		EXIT WHEN drained;
		PERFORM pg_sleep(0.05);
	END LOOP;
END
$$;
});
$node->safe_psql(
	'postgres', q{
BEGIN;
SELECT ft.add(('c' || n || '_emb')::regclass, g::text, ARRAY[n, g]::real[])
	FROM generate_series(1, 4) n, generate_series(1, 250) g;
COMMIT;
}, extra_params => [ '-U', 'app' ]);
my ($slots, $merging, $jobs, $drained) = split /\|/,
  sq('SELECT * FROM watch()');
note("max merges holding a slot: $slots; indexes merging at once: "
	  . "$merging; merge jobs running at once: $jobs");
is($drained, 't', 'the four queues drained');
cmp_ok($slots, '<=', 1, 'at most one merge holds a slot');
cmp_ok($merging, '<=', 1, 'at most one index is merged at a time');
cmp_ok($merging, '>=', 1, 'merges were seen running');
cmp_ok($jobs, '<=', 1, 'at most one merge job running in ft.jobs');
is(sq('SELECT count(*) FROM c1') + sq('SELECT count(*) FROM c4'),
	500, 'the merged rows are there');
# the c tables had no index on id: each first background merge built one
is( sq(q{SELECT string_agg(merge_index_built_total::text, ',' ORDER BY tbl::text)
		FROM ft.merge_stats() WHERE tbl::text LIKE 'c_'}),
	'1,1,1,1', 'each first background merge built the id btree, once');
is( sq(q{SELECT count(*) FROM generate_series(1, 4) n
		WHERE ft.has_key_btree_index(('c' || n)::regclass, 'id')
		  AND (SELECT indisunique FROM pg_index i
				JOIN pg_class c ON c.oid = i.indexrelid
			   WHERE i.indrelid = ('c' || n)::regclass AND c.relam = 403)}),
	'4', 'the btrees built are unique');
$node->stop;
done_testing();

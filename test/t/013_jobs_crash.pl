# 013_jobs_crash.pl: crash and shutdown with background work (segvec
# preloaded).
#
# - Crash: stop('immediate') while one worker is inside a compaction (its
#   new segment written, not installed: held there by
#   segvec.job_delay_ms) and another inside a keymap snapshot job.  After
#   restart: the index holds one doc per live row, every row is found by
#   its own vector at k = 1, ft.verify is clean, and background work
#   resumes (new inserts get compacted).
#   items_idx is quantized (sq8), so its compactions and their merges
#   write quantized segments: after the crash and after the resumed work
#   every segment is sq8.
# - Shutdown: stop('fast') with a worker busy inside a job, and with the
#   workers idle, completes promptly; the server restarts and runs jobs.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

# wal_level = replica so that CREATE INDEX writes segvec's own build WAL
my $node = segvec_node('jobs_crash', q{
wal_level = replica
segvec.naptime = 1
segvec.max_workers = 2
# a wide graph search, and segments of up to 200 * 128 docs scored exactly,
# so that k = 1 self-lookups (ft.verify's among them) test the segments'
# contents rather than HNSW recall
segvec.ef_search = 200
segvec.exact_scan_factor = 128
});

# a worker of ft.jobs sleeping at the delay point inside a job of this kind
sub in_job
{
	my ($index, $kind) = @_;
	return wait_for(
		qq{SELECT count(*) = 1 FROM ft.jobs j JOIN pg_stat_activity a
		     ON a.pid = j.worker_pid
		   WHERE j.index = '$index'::regclass AND j.kind = '$kind'
		     AND a.wait_event = 'Extension'});
}

my $verify_sql = q{SELECT missing_docs || '|' || duplicate_docs || '|' ||
  docs_in_two_segments || '|' || phantom_entries || '|' ||
  checksum_mismatches || '|' || missing_keymap_entries || '|' || search_misses
  FROM ft.verify('%s')};

sq("CREATE EXTENSION segvec;\n" . vec_function() . q{
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(1, 1000) g;
CREATE INDEX items_idx ON items USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 400, quantization = 'sq8');
CREATE TABLE other (id int PRIMARY KEY, embedding real[]);
CREATE INDEX other_idx ON other USING segvec (embedding) INCLUDE (id);
INSERT INTO other SELECT g, vec(g, 16) FROM generate_series(1, 300) g;
});
# rows in several transactions, compacted in the background as they come
for my $r ([ 1001, 1500 ], [ 1501, 2000 ])
{
	sq("INSERT INTO items SELECT g, vec(g, 16) FROM generate_series($r->[0], $r->[1]) g"
	);
}
sq('DELETE FROM items WHERE id % 13 = 0');
# VACUUM removes the dead docs only once no background job's snapshot still
# sees the deleted rows: repeat it until the index holds the live rows only
# (on a busy machine a compaction of the inserts may still be running)
my $vacuumed = 0;
for (1 .. 60)
{
	wait_for('SELECT count(*) = 0 FROM ft.jobs');
	sq('VACUUM (INDEX_CLEANUP ON) items');
	if (sq(q{SELECT num_docs = (SELECT count(*) FROM items)
	         FROM ft.info('items_idx')}) eq 't')
	{
		$vacuumed = 1;
		last;
	}
	usleep(500_000);
}
ok($vacuumed, 'VACUUM removed the deleted rows from the index');
ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), 'first jobs finished');
cmp_ok(sq(q{SELECT num_segments FROM ft.info('items_idx')}),
	'>=', 1, 'the index has immutable segments');

# Now hold jobs inside: a compaction of items_idx and a snapshot of other_idx
set_conf('segvec.job_delay_ms', '60000');
sq('INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(2001, 2600) g');
ok(in_job('items_idx', 'compact'),
	'a background compaction of items_idx is in flight');
sq(q{SELECT ft.submit_job('other_idx', 'snapshot')});
ok(in_job('other_idx', 'snapshot'), 'a snapshot job of other_idx is in flight');
is(sq(q{SELECT count(*) FROM ft.jobs WHERE state = 'running'}),
	'2', 'two jobs are running');

my $n = sq('SELECT count(*) FROM items');
my $n_other = sq('SELECT count(*) FROM other');
$node->stop('immediate');
$node->start;

is(sq('SELECT count(*) FROM items'), $n, 'heap row count after the crash');
is(sq(q{SELECT num_docs FROM ft.info('items_idx')}),
	$n, 'the index holds one doc per live row after the crash');
is(sq(sprintf($verify_sql, 'items_idx')),
	'0|0|0|0|0|0|0', 'ft.verify is clean after the crash');
is( sq(q{SET enable_seqscan = off;
SELECT count(*) FROM items x
  WHERE (SELECT y.id FROM items y ORDER BY y.embedding <-> x.embedding LIMIT 1)
        IS DISTINCT FROM x.id}),
	'0',
	'every row is its own nearest neighbour after the crash');
is( sq(q{SELECT bool_and(s->>'quantization' = 'sq8') FROM ft.info('items_idx') f,
  jsonb_array_elements(f.segments) s}),
	't', 'every segment of items_idx is quantized after the crash');
is(sq(q{SELECT num_docs FROM ft.info('other_idx')}),
	$n_other, 'the index of the interrupted snapshot holds every row');
is(sq(sprintf($verify_sql, 'other_idx')),
	'0|0|0|0|0|0|0', 'and ft.verify is clean for it');

# background work resumes
ok(wait_for("SELECT count(*) = 1 FROM ft.job_workers() WHERE role = 'launcher'"),
	'the launcher runs again');
set_conf('segvec.job_delay_ms', '0');
# the table starts empty; the startup sweep compacts what is over the
# threshold and may submit a keymap snapshot
ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'),
	'the job table is empty once the startup sweep is done');
# Past the threshold by more than a page: an insert asks for a compaction
# when it adds a page while the pages would hold the threshold's docs, and
# the job compacts only once the docs really are there; a job that ran
# while the first pages filled skipped, and the next page asks again.  (400
# rows, exactly the threshold, left the segment at the threshold, never
# compacted, whenever the worker counted before the INSERT's last rows.)
sq('INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(2601, 3200) g');
$n = sq('SELECT count(*) FROM items');
ok( wait_for(q{SELECT mutable_docs < 400 FROM ft.info('items_idx')}),
	'inserts after the restart are compacted in the background')
  or diag('ft.info: '
	  . sq(q{SELECT row_to_json(f) FROM ft.info('items_idx') f})
	  . "\nft.job_stats: " . sq(q{SELECT json_agg(j) FROM ft.job_stats() j})
	  . "\nft.job_workers: " . sq(q{SELECT json_agg(w) FROM ft.job_workers() w})
	  . "\nft.jobs: " . sq(q{SELECT json_agg(j) FROM ft.jobs j}));
ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), 'the jobs finished');
cmp_ok(sq(q{SELECT run FROM ft.job_stats() WHERE kind = 'compact'}),
	'>=', 1, 'compactions ran after the restart');
is(sq(q{SELECT num_docs FROM ft.info('items_idx')}),
	$n, 'the index holds one doc per live row');
is(sq(sprintf($verify_sql, 'items_idx')),
	'0|0|0|0|0|0|0', 'ft.verify is clean');
is( sq(q{SELECT bool_and(s->>'quantization' = 'sq8') FROM ft.info('items_idx') f,
  jsonb_array_elements(f.segments) s}),
	't', 'every segment of items_idx is quantized after the resumed work');

# --- Shutdown -----------------------------------------------------------------
set_conf('segvec.job_delay_ms', '60000');
sq(q{SELECT ft.submit_job('items_idx', 'snapshot')});
ok(in_job('items_idx', 'snapshot'), 'a worker is busy inside a job');
my $t0 = time();
$node->stop('fast');
my $busy_secs = time() - $t0;
note sprintf('stop with a busy worker took %.1f s', $busy_secs);
cmp_ok($busy_secs, '<', 10, 'stop (fast) with a busy worker is prompt');

sq_start();
sub sq_start
{
	$node->start;
	wait_for("SELECT count(*) = 1 FROM ft.job_workers() WHERE role = 'launcher'")
	  or die 'no launcher';
}
$t0 = time();
$node->stop('fast');
my $idle_secs = time() - $t0;
note sprintf('stop with idle workers took %.1f s', $idle_secs);
cmp_ok($idle_secs, '<', 10, 'stop (fast) with nothing running is prompt');

$node->start;
sq("ALTER SYSTEM RESET segvec.job_delay_ms");
sq('SELECT pg_reload_conf()');
ok(wait_for("SELECT count(*) = 1 FROM ft.job_workers() WHERE role = 'launcher'"),
	'the restarted server runs the launcher');
sq(q{SELECT ft.submit_job('items_idx')});
ok(wait_for(q{SELECT run >= 1 FROM ft.job_stats() WHERE kind = 'compact'}),
	'and runs jobs');

$node->stop;
done_testing();

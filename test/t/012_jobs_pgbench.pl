# 012_jobs_pgbench.pl: concurrency while background workers compact
# (segvec preloaded).  pgbench clients mix INSERT, DELETE, ordered
# SELECT ... LIMIT and VACUUM for a bounded time on a table whose index
# has a low compact_threshold, so workers compact (and snapshot the
# keymap) all along.  Afterwards: no job failed, ft.verify is clean (every
# live row indexed once and found by its own vector at k = 1, keymap
# consistent), and after VACUUM the index's doc count equals the rows.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('jobs_pgbench', q{
segvec.naptime = 1
segvec.max_workers = 2
# a wide graph search, and segments of up to 200 * 128 docs scored exactly,
# so that k = 1 self-lookups (ft.verify's among them) test the segments'
# contents rather than HNSW recall
segvec.ef_search = 200
segvec.exact_scan_factor = 128
max_connections = 40
# so that a run in which the clients stall says in the log what waited
log_lock_waits = on
deadlock_timeout = 100ms
});

sq("CREATE EXTENSION segvec;\n" . vec_function() . q{
CREATE SEQUENCE items_id START 2001;
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(1, 2000) g;
CREATE INDEX items_idx ON items USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 300);
});

my $secs = 12;
$node->pgbench(
	"--no-vacuum --client=6 --jobs=3 --time=$secs",
	0,
	[qr{processed: [1-9]}],
	[qr{^$}],
	'pgbench mix of INSERT, DELETE, SELECT and VACUUM',
	{
		'012_insert@10' => q{
INSERT INTO items SELECT i, vec(i, 16) FROM (SELECT nextval('items_id')::int i) s;
},
		'012_delete@2' => q{
\set d random(1, 6000)
DELETE FROM items WHERE id = :d;
},
		'012_select@5' => q{
\set q random(1, 6000)
SELECT id FROM items ORDER BY embedding <-> vec(:q, 16) LIMIT 10;
},
		'012_vacuum@1' => q{
VACUUM items;
},
	});

ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), 'the jobs finished');
my $stats = sq(q{SELECT string_agg(kind || ' ' || run || ' run, ' ||
                                 coalesced || ' coalesced, ' || failed || ' failed',
                                 '; ')
                 FROM ft.job_stats()});
note "jobs: $stats";
# The clients' VACUUMs compact too (amvacuumcleanup), so a run in which
# they got there first leaves the workers nothing; once (a first run on an
# idle machine) the clients also stalled behind VACUUMs for 5 s each
# (lazy_truncate_heap's lock timeout?) and made only a few hundred rows.
# Then single-row inserts without VACUUM must be compacted by the workers.
if (sq(q{SELECT run FROM ft.job_stats() WHERE kind = 'compact'}) == 0)
{
	diag("no background compaction during pgbench; rows: "
		  . sq('SELECT count(*) FROM items') . "; jobs: $stats");
	sq(qq{INSERT INTO items SELECT i, vec(i, 16) FROM (SELECT nextval('items_id')::int i) s})
	  for 1 .. 700;
	wait_for(q{SELECT run > 0 FROM ft.job_stats() WHERE kind = 'compact'}, 120);
	ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), 'the jobs finished');
}
cmp_ok(sq(q{SELECT run FROM ft.job_stats() WHERE kind = 'compact'}),
	'>=', 1, 'background compactions ran');
is(sq('SELECT sum(failed) FROM ft.job_stats()'), '0', 'no job failed');

my $n = sq('SELECT count(*) FROM items');
note "live rows: $n";
is( sq(q{SELECT missing_docs || '|' || duplicate_docs || '|' ||
                docs_in_two_segments || '|' || phantom_entries || '|' ||
                checksum_mismatches || '|' || missing_keymap_entries || '|' ||
                search_misses
         FROM ft.verify('items_idx')}),
	'0|0|0|0|0|0|0',
	'ft.verify is clean: every live row indexed once, found by its own vector');
# VACUUM that cleans the index for sure (a plain one may bypass index
# cleanup when few rows died), then a final drain: the counts match
sq('VACUUM (INDEX_CLEANUP ON) items');
is(sq(q{SELECT num_docs FROM ft.info('items_idx')}),
	$n, 'after VACUUM the index holds one doc per live row');
sq(q{SELECT ft.compact('items_idx')});
is(sq(q{SELECT mutable_docs || '|' || immutable_docs FROM ft.info('items_idx')}),
	"0|$n", 'after ft.compact every live row is in an immutable segment');
is( sq(q{SELECT heap_rows || '|' || indexed_docs || '|' || missing_docs ||
                '|' || duplicate_docs || '|' || docs_in_two_segments || '|' ||
                phantom_entries || '|' || checksum_mismatches || '|' ||
                missing_keymap_entries || '|' || search_misses
         FROM ft.verify('items_idx', search_limit => 0)}),
	"$n|$n|0|0|0|0|0|0|0",
	'ft.verify is still clean and counts match');

$node->stop;
done_testing();

# 011_jobs_compact.pl: automatic compaction by the background workers, and
# the ft.compact full-drain contract (segvec preloaded).
#
# - Single-row inserts past compact_threshold while the workers are paused
#   queue one compaction (later submits coalesce into it); once the workers
#   run, with nothing else called, the mutable segment drains below the
#   threshold within a bounded wait,
#   every row stays findable (k = 1 by its own vector), ft.verify is clean.
# - ft.compact while a background compaction of the same index is in
#   flight (held inside by segvec.job_delay_ms), with 30 rows inserted
#   after that compaction froze its prefix: on return the mutable segment
#   is empty, every row is in an immutable segment, and the keymap
#   snapshot covers them all.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('jobs_compact', q{
segvec.naptime = 1
segvec.max_workers = 2
# a wide graph search, and segments of up to 200 * 128 docs scored exactly,
# so that k = 1 self-lookups (ft.verify's among them) test the segments'
# contents rather than HNSW recall
segvec.ef_search = 200
segvec.exact_scan_factor = 128
});

sq("CREATE EXTENSION segvec;\n" . vec_function());

# --- Automatic compaction -----------------------------------------------------
sq(q{
CREATE TABLE a (id int PRIMARY KEY, embedding real[]);
CREATE INDEX a_idx ON a USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 500);
});
# 2,000 single-row inserts, each its own transaction.  The workers are
# paused meanwhile (max_workers = 0), so that the compaction submitted by the
# first page append over the threshold stays pending and the later appends
# coalesce into it, however fast or slow this machine runs the loop.
set_conf('segvec.max_workers', '0');
sq(q{
DO $$
BEGIN
  FOR i IN 1..2000 LOOP
    INSERT INTO a VALUES (i, vec(i, 16));
    COMMIT;
  END LOOP;
END $$;
});
is( sq(q{SELECT count(*) || '|' || (min(coalesced) > 0) FROM ft.jobs
         WHERE index = 'a_idx'::regclass AND kind = 'compact'
           AND state = 'pending'}),
	'1|true', 'one pending compaction, the later submits coalesced into it');
set_conf('segvec.max_workers', '2');
my $t0 = time();
ok( wait_for(q{SELECT mutable_docs < 500 AND immutable_docs > 0
               FROM ft.info('a_idx')}, 30),
	'the mutable segment drained below the threshold by itself');
note sprintf('drained %.1f s after the last insert', time() - $t0);
ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), 'the jobs finished');
cmp_ok(jstat('compact', 'run'), '>=', 1, 'background compactions ran');
is(jstat('compact', 'failed'), '0', 'none failed');
cmp_ok(jstat('compact', 'coalesced'), '>', 0, 'page appends over the threshold coalesced');
is(sq(q{SELECT mutable_docs + immutable_docs FROM ft.info('a_idx')}),
	'2000', 'every doc is in the index once');
cmp_ok(sq(q{SELECT num_segments FROM ft.info('a_idx')}),
	'>=', 1, 'in immutable segments');

my $self_sql = q{SET enable_seqscan = off;
SELECT count(*) FROM a x
  WHERE (SELECT y.id FROM a y ORDER BY y.embedding <-> x.embedding LIMIT 1)
        IS DISTINCT FROM x.id};
is(sq($self_sql), '0', 'every row is its own nearest neighbour');
is( sq(q{SET enable_seqscan = off;
         SELECT count(*) FROM (SELECT id FROM a
           ORDER BY embedding <-> vec(99999, 16) LIMIT 100000) s}),
	'2000',
	'a full index scan returns every row');
is( sq(q{SELECT missing_docs + duplicate_docs + docs_in_two_segments +
                phantom_entries + checksum_mismatches + search_misses
         FROM ft.verify('a_idx')}),
	'0',
	'ft.verify is clean');

# --- ft.compact drains what arrives during a background compaction -----------
sq(q{
CREATE TABLE f (id int PRIMARY KEY, embedding real[]);
CREATE INDEX f_idx ON f USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 1000000);
INSERT INTO f SELECT g, vec(g, 16) FROM generate_series(1, 100) g;
});
set_conf('segvec.job_delay_ms', '6000');
my $run0 = jstat('compact', 'run');
my $fail0 = jstat('compact', 'failed');
sq(q{SELECT ft.submit_job('f_idx')});
# the worker sleeps at the delay point: it has frozen the first 100 rows and
# built their segment, not installed it
ok( wait_for(q{SELECT count(*) = 1 FROM pg_stat_activity a
                 JOIN ft.jobs j ON j.worker_pid = a.pid
                WHERE j.index = 'f_idx'::regclass AND a.wait_event = 'Extension'}),
	'a background compaction of f_idx is in flight');
is( sq(q{SELECT mutable_docs || '|' || immutable_docs FROM ft.info('f_idx')}),
	'100|0', 'its segment is not installed yet');
sq(q{
DO $$
BEGIN
  FOR i IN 101..130 LOOP
    INSERT INTO f VALUES (i, vec(i, 16));
    COMMIT;
  END LOOP;
END $$;
});
$t0 = time();
my $res = sq(q{SELECT docs_compacted FROM ft.compact('f_idx')});
my $waited = time() - $t0;
# (that it compacted only the 30 shows it waited for the in-flight
# compaction of the first 100 rather than compacting them again)
note sprintf('ft.compact returned after %.1f s', $waited);
is($res, '30', 'ft.compact compacted the 30 rows that arrived during it');
is( sq(q{SELECT mutable_docs || '|' || immutable_docs FROM ft.info('f_idx')}),
	'0|130',
	'on return the mutable segment is empty and all rows are in immutable segments');
is( sq(q{SELECT keymap_entries || '|' || keymap_buckets_changed
         FROM ft.info('f_idx')}),
	'130|0',
	'and the keymap snapshot covers them all');
set_conf('segvec.job_delay_ms', '0');
ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), 'the jobs finished');
is(jstat('compact', 'run') - $run0, 1, 'the background compaction finished normally');
is(jstat('compact', 'failed') - $fail0, 0, 'and did not fail');
is( sq(q{SELECT missing_docs + duplicate_docs + docs_in_two_segments +
                phantom_entries + checksum_mismatches + search_misses
         FROM ft.verify('f_idx')}),
	'0',
	'ft.verify is clean');

$node->stop;
done_testing();

# 082_merge_memory.pl: merges whose memory does not depend on the vectors,
# with background work off so that every merge is the test's
# own.
#
# - maintenance_work_mem = 1MB and 256 dimensions: four segments of 1,000
#   docs hold 4 MB of vectors, four times the limit, and merge into one
#   (a merge that held every vector in memory could not).  Deletes in
#   between leave tombstones in the inputs, so the seed's lost links are
#   repaired.  The merge reports its peak memory (DEBUG1), which the test
#   holds to the formula of src/README.md ("Merge memory": 56 bytes a doc
#   at M = 16 and a constant) and to far less than the vectors.  Recall@10
#   against exact search is checked, against a fresh CREATE INDEX on the
#   same rows too, and every live row is found by its own vector at k = 1
#   (ft.verify, ef_search 200).
# - A merge does not block compaction: a merge held at the test point
#   "merge-built" (built, not installed) while another session inserts and
#   compacts, and VACUUMs rows of the merge's inputs deleted before it
#   started; then the merge installs and carries those tombstones over: no
#   dead row's doc is live in the merged segment.
# - CREATE INDEX on a table bigger than maintenance_work_mem: the
#   in-memory builds of 1,000 docs are merged at the end.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('merge_memory', q{
segvec.max_workers = 0
segvec.enable_test_hooks = on
maintenance_work_mem = '1MB'
# merges by tiers, whose steps (four segments of a tier) the test follows
segvec.merge_ratio = 0
segvec.ef_search = 200
});

# clustered data: 64 centres, each doc near one
sq(q{
CREATE EXTENSION segvec;
CREATE FUNCTION vec(i bigint, d int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg((sin((i % 64) * 1.7 + j * 0.31)
                    + 0.35 * sin(i * 12.9898 + j * 78.233))::real ORDER BY j)
  FROM generate_series(1, d) j $$;
});

# recall@10 of the index on $tbl for 100 queries near rows of the table
sub recall
{
	my ($tbl) = @_;
	return sq(
		qq{
SET enable_seqscan = off;
CREATE TEMP TABLE q AS
  SELECT id AS qid, vec(id * 7 + 3, 256) AS qv FROM $tbl ORDER BY id LIMIT 100;
CREATE TEMP TABLE got AS SELECT qid, ARRAY(SELECT id FROM $tbl
  ORDER BY v <-> qv LIMIT 10) AS ids FROM q;
SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE exact AS SELECT qid, ARRAY(SELECT id FROM $tbl
  ORDER BY l2_distance(v, qv) LIMIT 10) AS ids FROM q;
SELECT round(avg((SELECT count(*) FROM unnest(g.ids) x
  WHERE x = ANY (e.ids)) / 10.0), 3) FROM got g JOIN exact e USING (qid);
});
}

# ---- 1. a merge of 4 MB of vectors in 1 MB ------------------------------
sq(q{
CREATE TABLE m (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX m_v ON m USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 1000);
});
for my $round (0 .. 2)
{
	my ($lo, $hi) = ($round * 1000 + 1, $round * 1000 + 1000);
	sq(qq{INSERT INTO m SELECT i, vec(i, 256) FROM generate_series($lo, $hi) i;
		  SELECT ft.compact('m_v');
		  DELETE FROM m WHERE id BETWEEN $lo AND $hi AND id % 9 = $round;
		  VACUUM m});
}
is(sq(q{SELECT num_segments, tombstones > 0 FROM ft.info('m_v')}),
	'3|t', 'three segments with tombstones, no merge yet');
sq(q{INSERT INTO m SELECT i, vec(i, 256) FROM generate_series(3001, 4000) i});
my ($ret, $out, $err) = $node->psql(
	'postgres', q{
SET client_min_messages = debug1;
SELECT segments_merged FROM ft.compact('m_v');
});
is($out, '4', 'the fourth segment makes the four merge');
is(sq(q{SELECT num_segments, num_docs, tombstones FROM ft.info('m_v')}),
	'1|3667|0', 'one segment of the live docs');
cmp_ok(3667 * 256 * 4, '>=', 3 * 1024 * 1024,
	'the merged vectors are over three times maintenance_work_mem');

my ($n, $seeded, $peak, $bound) = $err =~
  /segvec merge of 4 segments of index "m_v": (\d+) docs, (\d+) seeded from input \d+ \(\d+ repaired, \d+ relinked above layer 0\), vectors in pages, peak memory (\d+) bytes, bound (\d+) bytes/;
ok(defined $peak, 'the merge reported its memory') or diag $err;
is($n, 3667, 'it merged every live doc');
cmp_ok($seeded, '>=', 889, 'it took the largest input as its seed');
cmp_ok($peak, '<=', $bound, 'peak memory within its GraphMergeMemoryBound');
# the formula of src/README.md: 56 bytes a doc at M = 16, plus a constant
cmp_ok($bound, '<=', $n * 56 + 256 * 1024, 'the bound follows the formula');
cmp_ok($peak, '<=', 1024 * 1024, 'peak memory within maintenance_work_mem');
cmp_ok($peak * 10, '<', $n * 256 * 4,
	'peak memory is a small fraction of the vectors');

my $merged = recall('m');
sq(q{CREATE TABLE f AS SELECT * FROM m;
	 SET maintenance_work_mem = '64MB';
	 CREATE INDEX f_v ON f USING segvec (v) INCLUDE (id)});
my $fresh = recall('f');
note "recall\@10: merged $merged, fresh CREATE INDEX $fresh";
cmp_ok($merged, '>=', 0.95, 'recall@10 of the merged segment');
cmp_ok($merged, '>=', $fresh - 0.02,
	'the merged segment is as good as a fresh build');
is(verify_problems('m_v'), '',
	'ft.verify is clean: every live row found by its own vector at k = 1');

# ---- 2. a merge does not block compaction ------------------------------
sq(q{INSERT INTO m SELECT i, vec(i, 256) FROM generate_series(4001, 4900) i;
	 SELECT ft.compact('m_v');
	 INSERT INTO m SELECT i, vec(i, 256) FROM generate_series(4901, 5800) i;
	 SELECT ft.compact('m_v');
	 INSERT INTO m SELECT i, vec(i, 256) FROM generate_series(5801, 6700) i;
	 SELECT ft.compact('m_v')});
is(sq(q{SELECT num_segments FROM ft.info('m_v')}), '4',
	'three more segments, no merge yet (another tier)');

# rows of the inputs deleted before the merge starts (so that its snapshot
# does not keep them from VACUUM) and vacuumed while it builds
sq(q{INSERT INTO m SELECT i, vec(i, 256) FROM generate_series(6701, 7600) i;
	 DELETE FROM m WHERE id BETWEEN 4001 AND 7600 AND id % 10 = 0});
my $merger = hold_at($node, 'merge-built',
	q{SELECT segments_merged FROM ft.compact('m_v')});

# meanwhile: a compaction, and VACUUM of the deleted rows
sq(q{INSERT INTO m SELECT i, vec(i, 256) FROM generate_series(7601, 8000) i});
is(sq(q{SELECT docs_compacted FROM ft.compact('m_v')}), '400',
	'a compaction runs while the merge builds');
is(sq(q{SELECT mutable_docs FROM ft.info('m_v')}), '0',
	'the mutable segment is empty');
sq(q{VACUUM m});
is(sq(q{SELECT tombstones FROM ft.info('m_v')}), '360',
	'VACUUM tombstoned docs of the merge\'s inputs meanwhile');

my $res = $merger->release;
like($res, qr/^4$/m, 'the merge of four segments installed');
is(sq(q{SELECT num_segments, num_docs, tombstones FROM ft.info('m_v')}),
	'3|7307|360', 'the merged segment carries the tombstones set meanwhile');
is(verify_problems('m_v'), '',
	'ft.verify is clean after the concurrent merge');
is(sq(q{SELECT count(*) FROM m WHERE id % 10 = 0 AND id BETWEEN 4001 AND 7600}),
	'0', 'deleted rows are gone');

# ---- 3. CREATE INDEX bigger than maintenance_work_mem ---------------------
sq(q{CREATE TABLE b AS SELECT i AS id, vec(i, 256) AS v
	   FROM generate_series(1, 4000) i});
($ret, $out, $err) = $node->psql(
	'postgres', q{
SET client_min_messages = debug1;
CREATE INDEX b_v ON b USING segvec (v) INCLUDE (id);
});
like($err, qr/segvec merge of 4 segments of index "b_v": 4000 docs/,
	'CREATE INDEX merges its 1,000-doc builds');
is(sq(q{SELECT num_segments, num_docs FROM ft.info('b_v')}), '1|4000',
	'one segment');
is(verify_problems('b_v'), '', 'ft.verify is clean after the build');

$node->stop;
done_testing();

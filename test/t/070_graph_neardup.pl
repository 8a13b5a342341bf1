# 070_graph_neardup.pl: graphs stay connected and searchable on data full
# of near-identical twins and exact duplicates.
#
# For each shape of test/data/neardup.sql (strands, clumps, twins, dups;
# 10,000 x 32-dim rows), two indexes on the same rows:
#   - fresh: one CREATE INDEX over all rows;
#   - streamed: CREATE INDEX over the first 6,000, the other 4,000 inserted
#     one row at a time, compacted every 1,000 rows (so graph segments are
#     built by compaction and merged), background work off;
# and for each: recall@10 >= 0.95 at the default segvec.ef_search over 100
# queries (a data point with a little noise; a result counts when its
# distance is within the exact 10th distance, so ties among duplicates do
# not matter), and ft.verify finds no node unreachable from its segment's
# entry point and no missing row.  (How many rows a k = 1 search by their
# own vector misses is only noted: on the clumps a few percent are, see
# src/README.md "Connectivity".)
use strict;
use warnings;

use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $gen = dirname(__FILE__) . '/../data/neardup.sql';

my $node = segvec_node('neardup', q{
jit = off
segvec.max_workers = 0
maintenance_work_mem = '64MB'
});

sq('CREATE EXTENSION segvec');
$node->safe_psql('postgres', slurp_file($gen));

my $n = 10000;
my $dim = 32;
# the first 6,000 rows make a segment bigger than the ones scored exactly
my $base = 6000;
for my $shape (qw(strands clumps twins dups))
{
	sq(qq{
SELECT setseed(0.25);
CREATE TABLE rows_$shape AS SELECT * FROM nd_rows('$shape', $n, $dim);
CREATE TABLE fresh_$shape (id int, v real[]);
CREATE TABLE streamed_$shape (id int, v real[]);
INSERT INTO fresh_$shape SELECT * FROM rows_$shape;
INSERT INTO streamed_$shape SELECT * FROM rows_$shape WHERE id <= $base;
CREATE TABLE q_$shape AS
	SELECT i AS qid, nd_jitter((SELECT v FROM rows_$shape WHERE id = i * 97), 1e-3) AS v
	FROM generate_series(1, 100) i;
ALTER TABLE q_$shape ADD d10 float8;
UPDATE q_$shape q SET d10 = (SELECT max(d) FROM
	(SELECT r.v <-> q.v AS d FROM rows_$shape r ORDER BY 1 LIMIT 10) s);
CREATE INDEX fresh_${shape}_idx ON fresh_$shape USING segvec (v)
	WITH (compact_threshold = 0);
CREATE INDEX streamed_${shape}_idx ON streamed_$shape USING segvec (v)
	WITH (compact_threshold = 0);
});

	# the second half, one row per statement, compacted every 1,000 rows
	my $sql = '';
	for my $i ($base + 1 .. $n)
	{
		$sql .= "INSERT INTO streamed_$shape SELECT * FROM rows_$shape WHERE id = $i;\n";
		$sql .= "SELECT ft.compact('streamed_${shape}_idx');\n" if $i % 1000 == 0;
	}
	$node->safe_psql('postgres', $sql);

	for my $kind (qw(fresh streamed))
	{
		my $t = "${kind}_$shape";
		my $recall = sq(qq{
SET enable_seqscan = off;
SELECT avg(r) FROM (SELECT (SELECT count(*) FROM
	(SELECT t.v <-> q.v AS d FROM $t t ORDER BY t.v <-> q.v LIMIT 10) x
	WHERE x.d <= q.d10 * (1 + 1e-6) + 1e-9) / 10.0 AS r FROM q_$shape q) s});
		my $segs = sq("SELECT num_segments FROM ft.info('${t}_idx')");
		note "$t: recall\@10 $recall, $segs segments";
		cmp_ok($recall, '>=', 0.95, "$t: recall\@10 >= 0.95 at the default ef_search");

		my ($unreach, $missing, $misses, $rows) = split /\|/, sq(qq{
SELECT unreachable_nodes, missing_docs, search_misses, heap_rows
FROM ft.verify('${t}_idx', false, NULL)});
		note "$t: ft.verify: $misses of $rows rows not first for their own vector";
		is($unreach, '0', "$t: ft.verify: every node reachable from its segment's entry point");
		is("$missing|$rows", "0|$n", "$t: ft.verify: every row indexed");
	}
}

done_testing();

# 091_partition_background.pl: background work on a partitioned table.
#
# The queue of a partitioned segvec index is applied by a background merge
# (ft.add on the parent, the merge job takes the partitioned index), rows
# land in the partitions that own their ids; ft.submit_job(parent,
# 'compact') compacts every partition's index.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('partition_bg', q{
segvec.naptime = 1
});

$node->safe_psql('postgres', q{
CREATE EXTENSION segvec;
CREATE TABLE pitems (id bigint, embedding real[], note text)
  PARTITION BY RANGE (id);
CREATE TABLE pitems_1 PARTITION OF pitems FOR VALUES FROM (0) TO (100);
CREATE TABLE pitems_2 PARTITION OF pitems FOR VALUES FROM (100) TO (200);
CREATE TABLE pitems_d PARTITION OF pitems DEFAULT;
INSERT INTO pitems SELECT i, ARRAY[i, 1, 2]::real[], 'old'
  FROM generate_series(1, 150) i;
SELECT ft.create('pitems_idx', 'pitems', 'id', 'embedding');
});

# three writes queued, one transaction: a background merge applies them
$node->safe_psql('postgres', q{
BEGIN;
SELECT ft.add('pitems_idx', '5', '{5,5,5}', '{"note": "new"}');
SELECT ft.add('pitems_idx', '500', '{500,1,1}', '{"note": "new"}');
SELECT ft.del('pitems_idx', '120');
COMMIT;
});
ok( $node->poll_query_until('postgres',
		"SELECT pending = 0 FROM ft.info('pitems_idx')"),
	'the background merge applied the partitioned index\'s queue');
is( $node->safe_psql('postgres',
		"SELECT string_agg(tableoid::regclass || ':' || id || ':' || note, ',' ORDER BY id) FROM pitems WHERE id IN (5, 120, 500)"),
	'pitems_1:5:new,pitems_d:500:new',
	'rows went to the partitions owning their ids');
is( $node->safe_psql('postgres',
		"SELECT merges_total > 0 AND merges_total = (SELECT merges_total FROM ft.merge_stats('pitems_idx')) FROM ft.info('pitems_idx')"),
	't', 'the merge is counted for the partitioned index');

# a compaction job for the parent compacts every partition's index
is($node->safe_psql('postgres', "SELECT ft.submit_job('pitems_idx', 'compact')"),
	't', 'ft.submit_job on the partitioned index');
ok( $node->poll_query_until('postgres',
		"SELECT mutable_docs = 0 AND immutable_docs > 0 FROM ft.info('pitems_idx')"),
	'every partition\'s index compacted in the background');
is( $node->safe_psql('postgres',
		"SELECT heap_rows = (SELECT count(*) FROM pitems) AND missing_docs = 0 AND duplicate_docs = 0 AND search_misses = 0 FROM ft.verify('pitems_idx')"),
	't', 'ft.verify: every row indexed once and found');

$node->stop;
done_testing();

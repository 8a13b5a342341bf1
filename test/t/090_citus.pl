# 090_citus.pl: the ft API on Citus, with a coordinator and two workers.
#
# Runs only when the citus extension is installed (pg_available_extensions
# of a node started for the check); skips otherwise, as in CI, which has
# no Citus.  Against the same rows in a plain table on the coordinator
# (the single-node answer):
# - the top-10 of 50 queries (ft.search at ef_search 400, after ft.compact)
#   are the same ids in the same order;
# - ft.info's num_docs equals count(*); ft.compact, ft.verify, ft.get,
#   ft.similar, ft.add + ft.flush, ft.merge from a colocated table and
#   ft.dropindex with a queue give the single-node answer;
# - ft.search(ef_search => 1) differs from ef_search => 400 on some query
#   (the top 40; the setting reached the shards);
# - ft.create on a table distributed by another column makes a plain id
#   btree with a WARNING.
#
# Not run in CI (no Citus there); passes against Citus 13.2.2 built from
# source for PostgreSQL 15.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $conf = qq{
shared_preload_libraries = 'citus,segvec'
autovacuum = off
jit = off
max_prepared_transactions = 100
segvec.compact_threshold = 100000
segvec.background_merge = off
};

# Is Citus there?  Ask a node (without citus preloaded).
my $probe = PostgreSQL::Test::Cluster->new('citus_probe');
$probe->init;
$probe->start;
my $have = $probe->safe_psql('postgres',
	"SELECT count(*) FROM pg_available_extensions WHERE name = 'citus'");
$probe->stop;
if ($have ne '1')
{
	plan skip_all =>
	  'citus is not installed (not in pg_available_extensions): the Citus tests need a PostgreSQL 15 with Citus';
}

my @nodes;
for my $name ('coordinator', 'worker1', 'worker2')
{
	my $n = segvec_node($name, $conf);
	$n->safe_psql('postgres', 'CREATE EXTENSION citus');
	push @nodes, $n;
}
my ($coord, @workers) = @nodes;
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ")");
for my $w (@workers)
{
	$coord->safe_psql('postgres',
		"SELECT citus_add_node('" . $w->host . "', " . $w->port . ")");
}
$coord->safe_psql('postgres', 'CREATE EXTENSION segvec');
for my $w (@workers)
{
	is($w->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'segvec'"),
		'1', 'segvec reached worker ' . $w->name);
}

# The same rows, distributed by id and in one local table
$coord->safe_psql('postgres', q{
CREATE FUNCTION v(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
  FROM generate_series(1, 16) j $$;
CREATE TABLE items (id bigint, embedding real[], category int);
SELECT create_distributed_table('items', 'id', shard_count => 4);
INSERT INTO items SELECT i, v(i), i % 10 FROM generate_series(1, 4000) i;
CREATE TABLE local_items AS SELECT * FROM items;
SELECT ft.create('items_idx', 'items', 'id', 'embedding');
SELECT ft.create('local_idx', 'local_items', 'id', 'embedding');
});

my ($n_docs, $n_rows) = split /\|/, $coord->safe_psql('postgres',
	"SELECT (SELECT num_docs FROM ft.info('items_idx')), (SELECT count(*) FROM items)");
is($n_docs, $n_rows, 'ft.info num_docs equals count(*) before compaction');

is( $coord->safe_psql('postgres',
		"SELECT (SELECT docs_compacted FROM ft.compact('items_idx')) = (SELECT docs_compacted FROM ft.compact('local_idx'))"),
	't', 'ft.compact compacts as many docs as on one node');
is( $coord->safe_psql('postgres',
		"SELECT row(num_docs, mutable_docs, immutable_docs) FROM ft.info('items_idx')"),
	$coord->safe_psql('postgres',
		"SELECT row(num_docs, mutable_docs, immutable_docs) FROM ft.info('local_idx')"),
	'ft.info after ft.compact equals the single-node figures');

is( $coord->safe_psql('postgres',
		"SELECT row(heap_rows, indexed_docs, missing_docs, duplicate_docs, keymap_entries, phantom_entries, search_misses) FROM ft.verify('items_idx')"),
	$coord->safe_psql('postgres',
		"SELECT row(heap_rows, indexed_docs, missing_docs, duplicate_docs, keymap_entries, phantom_entries, search_misses) FROM ft.verify('local_idx')"),
	'ft.verify gives the single-node counts');

$coord->safe_psql('postgres', "SELECT ft.snapshot('items_idx'), ft.snapshot('local_idx')");
is( $coord->safe_psql('postgres',
		"SELECT row(sum(snapshot_entries), count(*)) FROM ft.keymap_buckets('items_idx')"),
	$coord->safe_psql('postgres',
		"SELECT row(sum(snapshot_entries), count(*)) FROM ft.keymap_buckets('local_idx')"),
	'ft.keymap_buckets after ft.snapshot: the single-node entries and buckets');

# searches: the same top-10, and ef_search reaches the shards
my $same_sql = sub {
	my ($ef) = @_;
	return qq{
SELECT count(*) FROM generate_series(1, 50) q
 WHERE (SELECT array_agg(s.id ORDER BY s.o)
		  FROM ft.search('items_idx', v(q + 10000), 10, ef_search => $ef)
			   WITH ORDINALITY s(id, distance, fields, o))
	IS DISTINCT FROM
	   (SELECT array_agg(s.id ORDER BY s.o)
		  FROM ft.search('local_idx', v(q + 10000), 10, ef_search => $ef)
			   WITH ORDINALITY s(id, distance, fields, o))};
};
is($coord->safe_psql('postgres', $same_sql->(400)),
	'0', 'top-10 of 50 queries equal to one node at ef_search 400');
# ef_search => 1 against 400: the top 40, about 10 from each shard's list,
# where a graph search of a shard's 1,000 docs at the smallest width (10:
# ef_search below it searches as 10) misses a doc on some queries, and 400
# scores each shard exactly; at k = 10 the coordinator's merge of four
# shards' lists hides the misses at each list's tail, and the nearest doc
# alone (k = 1) is found at width 10 too.  Were the setting not to reach
# the shards, both would search at the workers' default and agree on every
# query.
cmp_ok(
	$coord->safe_psql('postgres', qq{
SELECT count(*) FROM generate_series(1, 50) q
 WHERE (SELECT array_agg(s.id ORDER BY s.o)
		  FROM ft.search('items_idx', v(q + 10000), 40, ef_search => 1)
			   WITH ORDINALITY s(id, distance, fields, o))
	IS DISTINCT FROM
	   (SELECT array_agg(s.id ORDER BY s.o)
		  FROM ft.search('items_idx', v(q + 10000), 40, ef_search => 400)
			   WITH ORDINALITY s(id, distance, fields, o))}),
	'>', 0, 'ft.search(ef_search => 1) answers differently: the setting reached the shards');

# ids
is( $coord->safe_psql('postgres', q{
SELECT count(*) FROM generate_series(1, 4001, 97) k
 WHERE (SELECT array_agg(row(id, vector)) FROM ft.get('items_idx', k::text))
	IS DISTINCT FROM (SELECT array_agg(row(id, vector)) FROM ft.get('local_idx', k::text))}),
	'0', 'ft.get gives the single-node rows (and none for a missing id)');
is( $coord->safe_psql('postgres', q{
SELECT count(*) FROM generate_series(1, 4000, 211) k
 WHERE (SELECT array_agg(id ORDER BY distance, id) FROM ft.similar('items_idx', k::text, 5))
	IS DISTINCT FROM (SELECT array_agg(id ORDER BY distance, id) FROM ft.similar('local_idx', k::text, 5))}),
	'0', 'ft.similar gives the single-node neighbours');

# queued upserts
my $queue = q{
SELECT ft.add('%1$s', '5', v(50005), '{"category": 77}');
SELECT ft.add('%1$s', '9001', v(59001));
SELECT ft.del('%1$s', '6');
};
$coord->safe_psql('postgres', sprintf($queue, 'items_idx'));
$coord->safe_psql('postgres', sprintf($queue, 'local_idx'));
is( $coord->safe_psql('postgres', "SELECT row(f.*) FROM ft.flush('items_idx') f"),
	$coord->safe_psql('postgres', "SELECT row(f.*) FROM ft.flush('local_idx') f"),
	'ft.add + ft.flush: the single-node counts');
is( $coord->safe_psql('postgres',
		"SELECT count(*) FROM ((TABLE items EXCEPT TABLE local_items) UNION ALL (TABLE local_items EXCEPT TABLE items)) d"),
	'0', 'ft.flush: the same rows as on one node');

# ft.merge from a colocated table
$coord->safe_psql('postgres', q{
CREATE TABLE batch (id bigint, embedding real[], category int);
SELECT create_distributed_table('batch', 'id', colocate_with => 'items');
INSERT INTO batch VALUES (7, v(60007), 1), (8, v(60008), 2), (9002, v(69002), 3);
CREATE TABLE local_batch AS SELECT * FROM batch;
});
is( $coord->safe_psql('postgres', "SELECT row(m.*) FROM ft.merge('items_idx', 'batch') m"),
	$coord->safe_psql('postgres', "SELECT row(m.*) FROM ft.merge('local_idx', 'local_batch') m"),
	'ft.merge from a colocated table: the single-node counts');
is( $coord->safe_psql('postgres',
		"SELECT count(*) FROM ((TABLE items EXCEPT TABLE local_items) UNION ALL (TABLE local_items EXCEPT TABLE items)) d"),
	'0', 'ft.merge: the same rows as on one node');
# num_docs counts dead rows until VACUUM (README, ft.info), on one node too
$coord->safe_psql('postgres', 'VACUUM items');
$coord->safe_psql('postgres', 'VACUUM local_items');
is( $coord->safe_psql('postgres',
		"SELECT row(num_docs = (SELECT count(*) FROM items), num_docs, mutable_docs, immutable_docs, tombstones) FROM ft.info('items_idx')"),
	$coord->safe_psql('postgres',
		"SELECT row(num_docs = (SELECT count(*) FROM local_items), num_docs, mutable_docs, immutable_docs, tombstones) FROM ft.info('local_idx')"),
	'ft.info after the merges and VACUUM: num_docs equals count(*), the single-node figures');

cmp_ok( $workers[0]->safe_psql('postgres',
		"SET citus.show_shards_for_app_name_prefixes = '*'; SELECT count(*) FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'segvec' AND c.relname LIKE 'items_idx%'"),
	'>', 0, 'a worker holds shards\' segvec indexes');

# ft.dropindex with a queue: applied first
for my $idx ('items_idx', 'local_idx')
{
	$coord->safe_psql('postgres', "SELECT ft.add('$idx', '9100', v(9100)); SELECT ft.del('$idx', '7')");
	$coord->safe_psql('postgres', "SELECT ft.dropindex('$idx')");
}
is($coord->safe_psql('postgres', "SELECT count(*) FROM items WHERE id IN (7, 9100)"),
	'1', 'ft.dropindex applied the queued upsert and delete');
is( $coord->safe_psql('postgres',
		"SELECT count(*) FROM ((TABLE items EXCEPT TABLE local_items) UNION ALL (TABLE local_items EXCEPT TABLE items)) d"),
	'0', 'ft.dropindex with a queue: the same rows as on one node');
is( $workers[0]->safe_psql('postgres',
		"SET citus.show_shards_for_app_name_prefixes = '*'; SELECT count(*) FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'segvec' AND c.relname LIKE 'items_idx%'"),
	'0', 'ft.dropindex dropped the shards\' indexes');

# distributed by another column: a plain id btree and a WARNING
my ($ret, $out, $err) = $coord->psql('postgres', q{
CREATE TABLE bycat (id bigint, embedding real[], category int);
SELECT create_distributed_table('bycat', 'category');
SELECT ft.create('bycat_idx', 'bycat', 'id', 'embedding');
});
is($ret, 0, 'ft.create on a table distributed by another column succeeds');
like($err, qr/distributed by column "category"/, 'with a WARNING about the id');
is( $coord->safe_psql('postgres',
		"SELECT bool_or(i.indisunique) FROM pg_index i WHERE i.indrelid = 'bycat'::regclass"),
	'f', 'and a non-unique id btree');

$_->stop for @nodes;
done_testing();

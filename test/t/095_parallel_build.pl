# 095_parallel_build.pl: CREATE INDEX building its graphs in parallel
# (max_parallel_maintenance_workers = 2, min_parallel_table_scan_size = 0,
# so that plan_create_index_workers plans workers for a small table).
#
# On 10,000 Fashion-MNIST images (repeats dropped) and 100 test images as
# queries, each index built with workers (the DEBUG1 line of the parallel
# build says how many were launched: at least one):
# - l2, no quantization, sq8 and rabitq: recall@10 >= 0.95 against the
#   exact answer at the default ef_search; ft.verify: every heap row
#   indexed once, every node reachable from the entry point, all but at
#   most 1% of the rows found by their own vector (k = 1);
# - an expression (l2_normalize) and a predicate (even ids): only the
#   predicate's rows indexed, recall@10 >= 0.95 on them;
# - about 24,000 images with maintenance_work_mem = 64MB and one worker:
#   several segments, each built in parallel, then merged; ft.verify
#   clean.
# With max_parallel_maintenance_workers = 0 the build is serial (no
# parallel line) and writes the same pages as a build of the same rows
# in another table (the serial build is deterministic).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $tmp = fmnist_files(24000, 100);

my $node = segvec_node('parallel_build', q{
segvec.max_workers = 0
jit = off
max_worker_processes = 16
max_parallel_maintenance_workers = 2
min_parallel_table_scan_size = 0
maintenance_work_mem = '256MB'
shared_buffers = '256MB'
});

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION segvec;
CREATE TABLE big (id int PRIMARY KEY, embedding real[]);
ALTER TABLE big ALTER embedding SET STORAGE PLAIN;
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
ALTER TABLE items ALTER embedding SET STORAGE PLAIN;
CREATE TABLE queries (id int PRIMARY KEY, embedding real[]);
ALTER TABLE queries ALTER embedding SET STORAGE PLAIN;
});
$node->safe_psql('postgres', "\\copy big FROM '$tmp/train.txt'");
$node->safe_psql('postgres', "\\copy queries FROM '$tmp/test.txt'");
# repeated images would make "found by its own vector" ambiguous
$node->safe_psql(
	'postgres', q{
DELETE FROM big a USING big b
WHERE a.embedding = b.embedding AND a.id > b.id;
INSERT INTO items SELECT * FROM big WHERE id <= 10000;
VACUUM ANALYZE items, big;
});
my $nitems = $node->safe_psql('postgres', 'SELECT count(*) FROM items');

# CREATE INDEX (sql) with the DEBUG1 lines: returns how many parallel
# graph builds there were and the fewest workers one of them launched
sub build
{
	my ($sql, $set) = @_;
	$set //= '';
	my ($out, $err) = ('', '');
	$node->psql(
		'postgres', "SET client_min_messages = debug1; $set $sql",
		stdout => \$out,
		stderr => \$err,
		on_error_die => 1);
	my @launched = $err =~ /segvec parallel graph build: \d+ docs, (\d+) of \d+ workers launched/g;
	my $fewest;
	for my $l (@launched)
	{
		$fewest = $l if !defined $fewest || $l < $fewest;
	}
	return (scalar(@launched), $fewest // -1);
}

# recall@10 at the default settings of the index on expr over the rows
# of items where pred, against the exact answer (seq scan)
sub recall
{
	my ($expr, $qexpr, $pred) = @_;
	return $node->safe_psql(
		'postgres', qq{
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE truth AS
  SELECT q.id AS qid,
         (SELECT max(d) FROM (SELECT $expr <-> $qexpr AS d FROM items i
                              WHERE $pred ORDER BY 1 LIMIT 10) s) AS d10
  FROM queries q;
RESET enable_indexscan;
SET enable_seqscan = off;
SELECT round(sum((SELECT count(*) FROM
         (SELECT $expr <-> $qexpr AS d FROM items i WHERE $pred
          ORDER BY $expr <-> $qexpr LIMIT 10) s
       WHERE s.d <= t.d10))::numeric / (10 * count(*)), 4)
FROM queries q JOIN truth t ON t.qid = q.id;
});
}

# ft.verify clean: every row indexed once, every node reachable from the
# entry point, and every row found by its own vector at k = 1 but for
# at most 2% (an HNSW search at the default ef_search misses a few; the
# serial build misses 0.26% of these 10,000 images, parallel builds
# 0.13-0.42%, and 55 of the 5,000 rows of the expression and predicate
# case, 1.1%, in one full run: the order of a parallel build's inserts
# differs from run to run)
sub check_verify
{
	my ($index, $rows, $what) = @_;
	my $v = verify($index, search_limit => 100000);
	is( join('|',
			@$v{qw(indexed_docs missing_docs duplicate_docs unreachable_nodes)}),
		"$rows|0|0|0",
		"$what: ft.verify: every row indexed once, every node reachable");
	cmp_ok($v->{search_misses} * 50, '<=', $rows,
		"$what: at most 2% of the rows not found by their own vector ($v->{search_misses})");
}

for my $quant ('none', 'sq8', 'rabitq')
{
	my ($nbuilds, $fewest) = build(
		"CREATE INDEX items_idx ON items USING segvec (embedding) WITH (quantization = '$quant')"
	);
	is($nbuilds, 1, "$quant: the graph was built in parallel");
	cmp_ok($fewest, '>=', 1, "$quant: with at least one worker");
	is( $node->safe_psql(
			'postgres',
			q{SELECT count(*) FROM ft.info('items_idx') f, jsonb_array_elements(f.segments) s}
		),
		'1',
		"$quant: one graph segment");
	my $r = recall('i.embedding', 'q.embedding', 'true');
	cmp_ok($r, '>=', 0.95, "$quant: recall\@10 >= 0.95 (got $r)");
	check_verify('items_idx', $nitems, $quant);
	$node->safe_psql('postgres', 'DROP INDEX items_idx');
}

# an expression and a predicate: the leader's heap scan evaluates them
{
	my ($nbuilds, $fewest) = build(
		"CREATE INDEX items_expr_idx ON items USING segvec ((l2_normalize(embedding))) WHERE id % 2 = 0"
	);
	is($nbuilds, 1, 'expression and predicate: built in parallel');
	cmp_ok($fewest, '>=', 1, 'expression and predicate: with a worker');
	my $neven =
	  $node->safe_psql('postgres', 'SELECT count(*) FROM items WHERE id % 2 = 0');
	my $r = recall('l2_normalize(i.embedding)', 'l2_normalize(q.embedding)',
		'i.id % 2 = 0');
	cmp_ok($r, '>=', 0.95,
		"expression and predicate: recall\@10 >= 0.95 (got $r)");
	check_verify('items_expr_idx', $neven, 'expression and predicate');
	$node->safe_psql('postgres', 'DROP INDEX items_expr_idx');
}

# the serial path: no workers, the same pages as another serial build
{
	my ($nbuilds, $fewest) = build(
		'CREATE INDEX items_s1 ON items USING segvec (embedding)',
		'SET max_parallel_maintenance_workers = 0;');
	is($nbuilds, 0, 'max_parallel_maintenance_workers = 0: a serial build');
	$node->safe_psql(
		'postgres', q{
CREATE TABLE items2 (LIKE items INCLUDING ALL);
INSERT INTO items2 SELECT * FROM items ORDER BY id;
CREATE TABLE items3 (LIKE items INCLUDING ALL);
INSERT INTO items3 SELECT * FROM items ORDER BY id;
CREATE EXTENSION pageinspect;
});
	build('CREATE INDEX items2_idx ON items2 USING segvec (embedding)',
		'SET max_parallel_maintenance_workers = 0;');
	build('CREATE INDEX items3_idx ON items3 USING segvec (embedding)',
		'SET max_parallel_maintenance_workers = 0;');
	my $pages = q{SELECT md5(string_agg(md5(substring(get_raw_page('%s', i::int) from 25)), '' ORDER BY i))
FROM generate_series(1, pg_relation_size('%s') / 8192 - 1) i};
	is( $node->safe_psql('postgres', sprintf($pages, 'items2_idx', 'items2_idx')),
		$node->safe_psql('postgres', sprintf($pages, 'items3_idx', 'items3_idx')),
		'two serial builds of the same rows write the same pages');
	$node->safe_psql('postgres', 'DROP INDEX items_s1; DROP TABLE items2, items3');
}

# several segments, each built in parallel: 64MB of maintenance_work_mem
# holds about 20,000 of these docs (32MB per participant is what
# plan_create_index_workers asks for, so one worker), and the table has
# about 24,000
{
	my $nbig = $node->safe_psql('postgres', 'SELECT count(*) FROM big');
	my ($nbuilds, $fewest) = build(
		'CREATE INDEX big_idx ON big USING segvec (embedding)',
		"SET maintenance_work_mem = '64MB'; SET max_parallel_maintenance_workers = 1;"
	);
	cmp_ok($nbuilds, '>=', 2,
		"several segments, each built in parallel ($nbuilds)");
	cmp_ok($fewest, '>=', 1, 'several segments: with a worker each');
	check_verify('big_idx', $nbig, 'several segments, merged');
}

$node->stop;
done_testing();

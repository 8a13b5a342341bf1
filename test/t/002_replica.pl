# 002_replica.pl: a streaming standby answers segvec queries exactly like
# its primary, after the build and after delete/VACUUM/insert cycles, for an
# L2 and a cosine index on the same column.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $primary = segvec_node('primary', q{
# the standby may connect late on a busy machine: keep the WAL it needs
wal_keep_size = '1GB'
}, allows_streaming => 1);

# The standby inherits shared_preload_libraries from the backup's
# postgresql.conf; everything segvec-related reaches it through the WAL.
my $standby = segvec_standby($primary, 'standby');

$primary->safe_psql(
	'postgres', "CREATE EXTENSION segvec;\n" . vec_function() . q{
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
INSERT INTO items SELECT g, vec(g, 24) FROM generate_series(1, 1000) g;
CREATE INDEX items_l2_idx ON items USING segvec (embedding);
CREATE INDEX items_cos_idx ON items USING segvec (embedding vector_cosine_ops);
});
$primary->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 24) FROM generate_series(1001, 2000) g'
);
$primary->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 24) FROM generate_series(2001, 3000) g'
);

# One line per query: top-10 ids in order for five query vectors and both
# metrics, then the number of rows each index returns with no real LIMIT.
my @queries;
for my $op ('<->', '<=>')
{
	for my $qi (100001 .. 100005)
	{
		push @queries,
		  "SELECT '$op $qi: ' || string_agg(id::text, ',') FROM "
		  . "(SELECT id FROM items ORDER BY embedding $op vec($qi, 24) LIMIT 10) s;";
	}
	push @queries,
	  "SELECT 'count $op: ' || count(*) FROM "
	  . "(SELECT id FROM items ORDER BY embedding $op vec(1, 24) LIMIT 1000000) s;";
}
my $query_sql = join("\n", @queries);

sub answers
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SET enable_seqscan = off;\n$query_sql");
}

sub exact_answers
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off;\n$query_sql"
	);
}

# Compare the standby with the primary once it has replayed everything,
# and the primary with the exact answer.
sub compare
{
	my ($stage) = @_;
	my $live = $primary->safe_psql('postgres', 'SELECT count(*) FROM items');

	$primary->wait_for_catchup($standby, 'replay');
	my $p = answers($primary);
	my $s = answers($standby);

	note "$stage, primary:\n$p";
	is($s, $p, "$stage: standby answers like the primary");
	is(scalar(() = $s =~ /^<[-=]> \d+: (?:\d+,){9}\d+$/mg),
		10, "$stage: every top-10 on the standby has 10 rows");
	is($p, exact_answers($primary), "$stage: primary's answers are exact");
	like($s, qr/^count <->: $live$/m,
		"$stage: L2 index returns all $live live rows on the standby");
	like($s, qr/^count <=>: $live$/m,
		"$stage: cosine index returns all $live live rows on the standby");
}

# The standby's queries use the indexes.
$primary->wait_for_catchup($standby, 'replay');
like(
	$standby->safe_psql(
		'postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) "
		  . "SELECT id FROM items ORDER BY embedding <-> vec(1, 24) LIMIT 10"),
	qr/Index Scan using items_l2_idx on items/,
	'standby L2 query uses the L2 index');
like(
	$standby->safe_psql(
		'postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) "
		  . "SELECT id FROM items ORDER BY embedding <=> vec(1, 24) LIMIT 10"),
	qr/Index Scan using items_cos_idx on items/,
	'standby cosine query uses the cosine index');

compare('after build and inserts');

# Delete 30%, scattered and a contiguous range that empties whole pages
# (VACUUM unlinks them).
$primary->safe_psql('postgres',
	'DELETE FROM items WHERE id % 5 = 0 OR id BETWEEN 1201 AND 1500');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM items'),
	'2160', '30% of the rows deleted');
compare('after delete, before VACUUM');
$primary->safe_psql('postgres', 'VACUUM items');
compare('after VACUUM');

# More inserts; a second VACUUM recycles the unlinked pages in between, so
# later inserts reuse them.
$primary->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 24) FROM generate_series(3001, 3100) g'
);
$primary->safe_psql('postgres', 'VACUUM items');
$primary->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 24) FROM generate_series(3101, 4000) g'
);
compare('after more inserts');

# Another cycle: delete, VACUUM, insert.
$primary->safe_psql('postgres',
	'DELETE FROM items WHERE id % 3 = 0; VACUUM items');
$primary->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 24) FROM generate_series(4001, 4500) g'
);
compare('after a second delete/VACUUM/insert cycle');

# A build bigger than maintenance_work_mem merges its pieces into one
# segment and moves it down into their space; the merge's output is logged
# only if it stays where it was written, the moved copy always.  Builds
# table $tbl that way (after the settings in $set) and checks that the
# standby answers as the primary and finds every row by its own vector.
sub build_merged
{
	my ($tbl, $set, $what) = @_;

	$primary->safe_psql('postgres', qq{
SET maintenance_work_mem = '1MB';
$set
CREATE TABLE $tbl (id int PRIMARY KEY, embedding real[]);
INSERT INTO $tbl SELECT g, vec(g, 64) FROM generate_series(1, 6000) g;
CREATE INDEX ${tbl}_v ON $tbl USING segvec (embedding);
});
	is($primary->safe_psql('postgres', qq{SELECT num_segments FROM ft.info('${tbl}_v')}),
		'1', "the $what merged its pieces into one segment");
	$primary->wait_for_catchup($standby, 'replay');
	my $nn = qq{SET enable_seqscan = off; SET segvec.ef_search = 100;
  SELECT string_agg(id::text, ',') FROM (SELECT id FROM $tbl
    ORDER BY embedding <-> vec(7, 64) LIMIT 10) s};
	is($standby->safe_psql('postgres', $nn), $primary->safe_psql('postgres', $nn),
		"the $what answers on the standby as on the primary");
	is( $standby->safe_psql(
			'postgres', qq{SET enable_seqscan = off; SET segvec.ef_search = 100;
  SELECT count(*) FROM $tbl a WHERE a.id % 20 = 0 AND
    (SELECT b.id FROM $tbl b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id}),
		'0', "the standby finds every row of the $what by its own vector");
}

build_merged('big', '', 'merged build');

# The same build with its merged segment left where the merge wrote it
# (the move skipped by a test point: the path of a segment that finds no
# room below): that copy is logged at the build's end, so the standby has
# its pages too.
build_merged('big2', q{
SET segvec.enable_test_hooks = on;
SET segvec.test_point = 'build-move';
SET segvec.test_point_action = 'skip';
}, 'unmoved build');
# the pieces' space below the segment is free: the segment did not move
is( $primary->safe_psql(
		'postgres', q{SELECT count(*) > 0 FROM ft.storage_map('big2_v') f
  WHERE f.kind = 'free' AND f.block < (SELECT block FROM ft.storage_map('big2_v')
                                     WHERE kind = 'segment')}),
	't', 'the merged segment stayed above the space its pieces left');

$standby->stop;
$primary->stop;
done_testing();

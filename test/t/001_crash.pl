# 001_crash.pl: segvec indexes survive a crash restart (stop -m immediate).
#
# - A logged table whose index saw a build, inserts in several transactions,
#   deletes, VACUUM (pages unlinked and recycled) and an uncommitted insert
#   still open at the crash: after restart the index returns every live row
#   once, each row is its own nearest neighbour, the uncommitted rows are
#   gone, and appends after recovery are found.
# - 5,000-dim vectors (a doc spans several pages) survive the same way.
# - B10: an index on an UNLOGGED table comes back empty and usable; CREATE
#   INDEX on an empty unlogged table works (ambuildempty).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

# wal_level = replica so that CREATE INDEX writes segvec's own build WAL
# (under minimal, a new relfilenode is synced or logged whole at commit)
my $node = segvec_node('crash', q{
wal_level = replica
});

# Every query through the index: no seqscan alternative.
sub iq
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', "SET enable_seqscan = off;\n$sql");
}

$node->safe_psql(
	'postgres', "CREATE EXTENSION segvec;\n" . vec_function() . q{
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
});

# B10: unlogged tables, the index built before and after the rows, and on a
# table left empty.
$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE u1 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX u1_emb_idx ON u1 USING segvec (embedding);
INSERT INTO u1 SELECT g, vec(g, 16) FROM generate_series(1, 1000) g;
CREATE UNLOGGED TABLE u2 (id int PRIMARY KEY, embedding real[]);
INSERT INTO u2 SELECT g, vec(g, 16) FROM generate_series(1, 1000) g;
CREATE INDEX u2_emb_idx ON u2 USING segvec (embedding);
CREATE UNLOGGED TABLE u3 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX u3_emb_idx ON u3 USING segvec (embedding);
});
is(iq('SELECT count(*) FROM (SELECT id FROM u1 ORDER BY embedding <-> vec(7, 16) LIMIT 5) s'),
	'5', 'unlogged index answers before the crash');
is(iq('SELECT count(*) FROM (SELECT id FROM u3 ORDER BY embedding <-> vec(7, 16) LIMIT 5) s'),
	'0', 'index on an empty unlogged table answers 0 rows');
# The last checkpoint before the crash: everything below is replayed from
# the WAL, the CREATE INDEX builds and u4's init fork included.
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE u4 (id int PRIMARY KEY, embedding real[]);
CREATE INDEX u4_emb_idx ON u4 USING segvec (embedding);
INSERT INTO u4 SELECT g, vec(g, 16) FROM generate_series(1, 100) g;
});

# Rows before the build, in two transactions; the build; rows after it in
# three more.
$node->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 32) FROM generate_series(1, 600) g');
$node->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 32) FROM generate_series(601, 1000) g'
);
$node->safe_psql('postgres',
	'CREATE INDEX items_emb_idx ON items USING segvec (embedding)');
for my $r ([ 1001, 1400 ], [ 1401, 1800 ], [ 1801, 2000 ])
{
	$node->safe_psql('postgres',
		"INSERT INTO items SELECT g, vec(g, 32) FROM generate_series($r->[0], $r->[1]) g"
	);
}
is( $node->safe_psql(
		'postgres',
		'SELECT count(DISTINCT embedding) = count(*) FROM items'),
	't',
	'test vectors are pairwise distinct');

# Scattered deletes plus a contiguous range that empties whole pages of the
# mutable segment, which VACUUM unlinks; a later VACUUM (after an xid has
# been used) recycles them and the next inserts reuse them.
$node->safe_psql('postgres',
	'DELETE FROM items WHERE id % 17 = 0 OR id BETWEEN 1101 AND 1400');
$node->safe_psql('postgres', 'VACUUM items');
$node->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 32) FROM generate_series(2001, 2050) g'
);
$node->safe_psql('postgres', 'VACUUM items');
my $size_before = $node->safe_psql('postgres',
	"SELECT pg_relation_size('items_emb_idx') / current_setting('block_size')::int"
);
$node->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 32) FROM generate_series(2051, 2200) g'
);
my $size_after = $node->safe_psql('postgres',
	"SELECT pg_relation_size('items_emb_idx') / current_setting('block_size')::int"
);
note "index pages before and after the inserts: $size_before, $size_after";
cmp_ok($size_after - $size_before,
	'<', 3, 'inserts after VACUUM reuse the recycled pages');

# High dimensions: a 5,000-float vector needs three pages.
$node->safe_psql(
	'postgres', q{
CREATE TABLE hd (id int PRIMARY KEY, embedding real[]);
INSERT INTO hd SELECT g, vec(g, 5000) FROM generate_series(1, 10) g;
CREATE INDEX hd_emb_idx ON hd USING segvec (embedding);
INSERT INTO hd SELECT g, vec(g, 5000) FROM generate_series(11, 15) g;
INSERT INTO hd SELECT g, vec(g, 5000) FROM generate_series(16, 21) g;
DELETE FROM hd WHERE id = 21;
VACUUM hd;
});


# The queries that must give the same answers after the crash.
my $qvec = 'vec(100000, 32)';
my $count_sql =
  "SELECT count(*) FROM (SELECT id FROM items ORDER BY embedding <-> $qvec LIMIT 100000) s";
my $top_sql =
  "SELECT string_agg(id::text, ',') FROM (SELECT id FROM items ORDER BY embedding <-> $qvec LIMIT 10) s";
my $self_sql = q{SELECT count(*) FROM items a
  WHERE (SELECT b.id FROM items b ORDER BY b.embedding <-> a.embedding LIMIT 1)
        IS DISTINCT FROM a.id};
my $hd_self_sql = q{SELECT count(*) FROM hd a
  WHERE (SELECT b.id FROM hd b ORDER BY b.embedding <-> a.embedding LIMIT 1)
        IS DISTINCT FROM a.id};

like(iq("EXPLAIN (COSTS OFF) $count_sql"),
	qr/Index Scan using items_emb_idx on items/,
	'count query uses the segvec index');
like(iq("EXPLAIN (COSTS OFF) $self_sql"),
	qr/Index Scan using items_emb_idx on items b/,
	'self-search subquery uses the segvec index');
like(iq("EXPLAIN (COSTS OFF) $hd_self_sql"),
	qr/Index Scan using hd_emb_idx on hd b/,
	'high-dimension self-search uses the segvec index');

my $exact_top = $node->safe_psql('postgres',
	"SET enable_indexscan = off; SET enable_bitmapscan = off; $top_sql");
is(iq($top_sql), $exact_top, 'top-10 before the crash is the exact answer');

# A transaction still open at the crash: 3,000 uncommitted rows whose index
# entries reach the WAL on disk (flushed by the commit of another
# transaction that follows).
my $bg = $node->background_psql('postgres');
$bg->query_safe('BEGIN');
$bg->query_safe(
	'INSERT INTO items SELECT g, vec(g, 32) FROM generate_series(10001, 13000) g'
);
$bg->query_safe(
	'INSERT INTO hd SELECT g, vec(g, 5000) FROM generate_series(101, 105) g');
$node->safe_psql('postgres',
	'INSERT INTO items SELECT g, vec(g, 32) FROM generate_series(2201, 2210) g'
);
is(iq("SELECT count(*) FROM (SELECT id FROM items ORDER BY embedding <-> $qvec LIMIT 100000) s WHERE id > 10000"),
	'0', 'uncommitted rows are invisible before the crash');

my $n = $node->safe_psql('postgres', 'SELECT count(*) FROM items');
my $n_hd = $node->safe_psql('postgres', 'SELECT count(*) FROM hd');
# 2,210 rows minus 117 multiples of 17 and 300 in 1101..1400 (18 in both)
is($n, '1811', 'live row count before the crash');
is($n_hd, 20, 'live high-dimension row count before the crash');
$exact_top = $node->safe_psql('postgres',
	"SET enable_indexscan = off; SET enable_bitmapscan = off; $top_sql");

$node->stop('immediate');
eval { $bg->quit; };    # its server is gone
$node->start;

# Logged table
is($node->safe_psql('postgres', 'SELECT count(*) FROM items'),
	$n, 'heap row count after the crash');
is($node->safe_psql('postgres', 'SELECT count(*) FROM items WHERE id > 10000'),
	'0', 'uncommitted rows are absent after the crash');
is(iq($count_sql), $n, 'index returns every live row once after the crash');
is( iq(
		"SELECT count(*) = count(DISTINCT id) FROM (SELECT id FROM items ORDER BY embedding <-> $qvec LIMIT 100000) s"
	),
	't',
	'no row returned twice after the crash');
is(iq($self_sql), '0', 'every row is its own nearest neighbour after the crash');
is(iq($top_sql), $exact_top, 'top-10 after the crash is the exact answer');

# High dimensions
is(iq("SELECT count(*) FROM (SELECT id FROM hd ORDER BY embedding <-> vec(1, 5000) LIMIT 1000) s"),
	$n_hd, 'high-dimension index returns every live row after the crash');
is(iq($hd_self_sql), '0',
	'every 5,000-dim row is its own nearest neighbour after the crash');

# The index takes appends after recovery, and VACUUM cleans up the entries
# of the aborted transaction.
$node->safe_psql(
	'postgres', q{
INSERT INTO items SELECT g, vec(g, 32) FROM generate_series(2211, 2300) g;
INSERT INTO hd SELECT g, vec(g, 5000) FROM generate_series(22, 23) g;
});
$n += 90;
$n_hd += 2;
is(iq($count_sql), $n, 'inserts after recovery are indexed');
is(iq($self_sql), '0', 'self-search after inserts following recovery');
is(iq($hd_self_sql), '0', 'high-dimension self-search after inserts');
$node->safe_psql('postgres', 'VACUUM items; VACUUM hd');
is(iq($count_sql), $n, 'index row count after VACUUM of the aborted rows');
is(iq($self_sql), '0', 'self-search after VACUUM of the aborted rows');
is(iq("SELECT count(*) FROM (SELECT id FROM hd ORDER BY embedding <-> vec(1, 5000) LIMIT 1000) s"),
	$n_hd, 'high-dimension count after VACUUM of the aborted rows');

# B10: unlogged tables come back empty; the first query must not fail.
for my $t ('u1', 'u2', 'u3', 'u4')
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET enable_seqscan = off; SELECT id FROM $t ORDER BY embedding <-> vec(7, 16) LIMIT 5"
	);
	is($ret, 0, "$t: first top-5 after the crash succeeds");
	is($out, '', "$t: first top-5 after the crash returns 0 rows");
	is($err, '', "$t: first top-5 after the crash gives no error or warning");
	like(iq("EXPLAIN (COSTS OFF) SELECT id FROM $t ORDER BY embedding <-> vec(7, 16) LIMIT 5"),
		qr/Index Scan using ${t}_emb_idx/, "$t: the top-5 uses the index");
	$node->safe_psql('postgres',
		"INSERT INTO $t VALUES (42, vec(42, 16))");
	is(iq("SELECT id FROM $t ORDER BY embedding <-> vec(7, 16) LIMIT 5"),
		'42', "$t: after inserting one row the top-5 returns it");
}

# And they work as before: fill one again, crash again without a checkpoint.
$node->safe_psql('postgres',
	'INSERT INTO u1 SELECT g, vec(g, 16) FROM generate_series(1, 1000) g ON CONFLICT DO NOTHING'
);
is(iq("SELECT count(*) FROM (SELECT id FROM u1 ORDER BY embedding <-> vec(7, 16) LIMIT 5000) s"),
	'1000', 'refilled unlogged index returns every row');
$node->stop('immediate');
$node->start;
is(iq("SELECT count(*) FROM (SELECT id FROM u1 ORDER BY embedding <-> vec(7, 16) LIMIT 5) s"),
	'0', 'unlogged index is empty after a second crash');
is(iq($count_sql), $n, 'logged index still complete after a second crash');

$node->stop;
done_testing();

# 030_ft.pl: the ft API on real data, and what another session sees.
#
# - Fashion-MNIST (20,000 train images, 784 dims, L2), indexed with
#   ft.create: ft.search's recall@10 against the exact answer (computed
#   with index scans off) is >= 0.95 at default settings, over 100 test
#   images; ft.query's KNN returns the same ids, with the vector given as a
#   JSON array or as base64 float32.
# - MVCC: a row inserted (or deleted) by a transaction that has not
#   committed is invisible (still visible) to ft.search in another session
#   until the commit; the same for an upsert queued with ft.add, when the
#   merge-insert API is installed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $tmp = fmnist_files(20000, 100);

# jit = off: a disabled plan type's huge cost would switch it on
my $node = segvec_node('ft', q{
jit = off
maintenance_work_mem = '256MB'
shared_buffers = '256MB'
});

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION segvec;
CREATE TABLE items (id int, embedding real[]);
ALTER TABLE items ALTER embedding SET STORAGE PLAIN;
CREATE TABLE queries (id int PRIMARY KEY, embedding real[]);
ALTER TABLE queries ALTER embedding SET STORAGE PLAIN;
});
$node->safe_psql('postgres', "\\copy items FROM '$tmp/train.txt'");
$node->safe_psql('postgres', "\\copy queries FROM '$tmp/test.txt'");
is($node->safe_psql('postgres', 'SELECT count(*) FROM items'),
	'20000', '20,000 images loaded');

is( $node->safe_psql(
		'postgres', "SELECT ft.create('items_idx', 'items', 'id', 'embedding')"),
	'items_idx',
	'ft.create makes the index');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_index WHERE indrelid = 'items'::regclass"),
	'2',
	'ft.create made the id btree too');
my ($ret, $info) = $node->psql('postgres',
	"SELECT to_jsonb(i) - 'segments' FROM ft.info('items_idx') i");
note "ft.info: $info" if $ret == 0;

# The exact top 10 of each query (no index: ORDER BY the function, not the
# operator), then ft.search's at default settings: recall@10 is the share
# of the exact ids that ft.search found.  (STORAGE PLAIN above: the exact
# scan does not decompress 3 kB vectors two million times.)
$node->safe_psql(
	'postgres', q{
CREATE TABLE exact AS
  SELECT q.id AS qid, n.id
  FROM queries q,
    LATERAL (SELECT i.id FROM items i
             ORDER BY l2_distance(i.embedding, q.embedding), i.id
             LIMIT 10) n;
});
my $t0 = time;
$node->safe_psql(
	'postgres', q{
CREATE TABLE found AS
  SELECT q.id AS qid, s.id::int AS id, s.ord
  FROM queries q,
    LATERAL ft.search('items_idx', q.embedding, 10) WITH ORDINALITY
      AS s(id, distance, fields, ord);
});
note sprintf "100 ft.search calls: %d s", time - $t0;
is($node->safe_psql('postgres', 'SELECT count(*) FROM found'),
	'1000', 'ft.search returned 10 rows per query');
my $recall = $node->safe_psql(
	'postgres', q{
SELECT round(count(*)::numeric / (SELECT count(*) FROM exact), 4)
FROM exact e JOIN found f USING (qid, id)});
note "recall\@10 at default settings: $recall";
cmp_ok($recall, '>=', 0.95, 'ft.search recall@10 >= 0.95 at default settings');

# ft.query's KNN is the same search, whatever the form of the vector (nearest
# first with SORTBY the distance; without it the k come in doc order)
# base64 of little-endian float32, as Redis clients send it
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION b64(v real[]) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT encode(string_agg(
           set_byte(set_byte(set_byte(set_byte('\x00000000'::bytea,
             0, get_byte(b, 3)), 1, get_byte(b, 2)), 2, get_byte(b, 1)),
             3, get_byte(b, 0)), ''::bytea ORDER BY i), 'base64')
  FROM (SELECT i, float4send(v[i]) AS b FROM generate_subscripts(v, 1) i) s $$;
});
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE j.ids = f.ids AND b.ids = f.ids)
FROM queries q,
  LATERAL (SELECT array_agg(id::int ORDER BY ord) AS ids FROM found
           WHERE qid = q.id) f,
  LATERAL (SELECT array_agg(id::int ORDER BY ord) AS ids
           FROM ft.query('items_idx', '*=>[KNN 10 @embedding $v] SORTBY __embedding_score',
                         jsonb_build_object('v', q.embedding))
             WITH ORDINALITY AS s(id, d, x, ord)) j,
  LATERAL (SELECT array_agg(id::int ORDER BY ord) AS ids
           FROM ft.query('items_idx', '*=>[KNN 10 @embedding $v] SORTBY __embedding_score',
                         jsonb_build_object('v', b64(q.embedding)))
             WITH ORDINALITY AS s(id, d, x, ord)) b}),
	'100',
	'ft.query (JSON array and base64 vectors) returns what ft.search does');

# MVCC across sessions.  Query 1's own vector goes into a new row, which
# then is its nearest neighbour at distance 0 once committed.
my $top1 = "SELECT id FROM ft.search('items_idx', (SELECT embedding FROM queries WHERE id = 1), 1)";
my $first = $node->safe_psql('postgres', $top1);
my $bg = $node->background_psql('postgres');
$bg->query_safe('BEGIN');
$bg->query_safe(
	'INSERT INTO items SELECT 100001, embedding FROM queries WHERE id = 1');
is($bg->query_safe($top1), '100001',
	'the inserting transaction sees its own row');
is($node->safe_psql('postgres', $top1),
	$first, 'an uncommitted insert is invisible to ft.search in another session');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM ft.query('items_idx', '\@id:{100001}')"),
	'0',
	'... and to ft.query');
$bg->query_safe('COMMIT');
is($node->safe_psql('postgres', $top1),
	'100001', 'after the commit ft.search in another session finds it');

# An uncommitted delete: the row stays visible to others until the commit
$bg->query_safe('BEGIN');
$bg->query_safe('DELETE FROM items WHERE id = 100001');
is($bg->query_safe($top1), $first,
	'the deleting transaction no longer sees the row');
is($node->safe_psql('postgres', $top1),
	'100001', 'an uncommitted delete does not hide the row from others');
$bg->query_safe('COMMIT');
is($node->safe_psql('postgres', $top1),
	$first, 'after the commit the row is gone for others too');

# A queued upsert (ft.add) is a write like any other
SKIP:
{
	skip 'ft.add is not installed', 3
	  unless $node->safe_psql('postgres',
		"SELECT to_regprocedure('ft.add(regclass,text,real[],jsonb)') IS NOT NULL"
	  ) eq 't';
	$bg->query_safe('BEGIN');
	$bg->query_safe(
		"SELECT ft.add('items_idx', '100002', embedding) FROM queries WHERE id = 1"
	);
	is($bg->query_safe($top1), '100002',
		'the transaction that queued an upsert reads it');
	is($node->safe_psql('postgres', $top1),
		$first, 'an uncommitted ft.add is invisible to another session');
	$bg->query_safe('COMMIT');
	is($node->safe_psql('postgres', $top1),
		'100002', 'after the commit another session finds the upsert');
}
$bg->quit;

$node->stop;
done_testing();

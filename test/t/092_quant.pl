# 092_quant.pl: quantized graph segments (SQ8 codes, exact rerank).
# 094_quant_rabitq.pl runs this file with $quant = 'rabitq' (RaBitQ codes).
#
# On 10,000 Fashion-MNIST images and 100 test images as queries, with
# quantization = sq8 (or $quant) and the default settings:
# - every graph segment is quantized (ft.info) and the index is smaller
#   than the same index with quantization = 'none';
# - l2: recall@10 >= 0.95 against the exact answer, and every result list
#   comes out in exact distance order (the distances the operator computes
#   for the rows returned are non-decreasing in the order the index
#   returned them);
# - a long continuation (LIMIT 300) and a filtered scan (1 row in 10)
#   stay in exact order, with no row twice, and find the exact answer;
# - after DELETE and VACUUM (tombstones) and inserts compacted and merged
#   into a new quantized segment, the deleted rows are gone and recall
#   holds;
# - cosine and inner-product indexes with quantization: recall@10 >= 0.95
#   against the exact answer, in exact order;
# - segvec.rerank = 1 still returns exact distances in exact order;
# - segvec.quant_bound = probable: recall@10 >= 0.95 and exact order for
#   l2, cosine and inner product;
# - cosine with zero vectors in the segment (and as the query).
use strict;
use warnings;

# the quantization tested: sq8 here, rabitq when 094_quant_rabitq.pl runs
# this file
our $quant;
$quant //= 'sq8';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

note "quantization = $quant";

my $tmp = fmnist_files(10000, 100);

# no background work: the test compacts itself
my $node = segvec_node("quant_$quant", q{
segvec.max_workers = 0
jit = off
maintenance_work_mem = '256MB'
shared_buffers = '256MB'
});

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION segvec;
CREATE TABLE stage (id int PRIMARY KEY, embedding real[]);
ALTER TABLE stage ALTER embedding SET STORAGE PLAIN;
CREATE TABLE queries (id int PRIMARY KEY, embedding real[]);
ALTER TABLE queries ALTER embedding SET STORAGE PLAIN;
});
$node->safe_psql('postgres', "\\copy stage FROM '$tmp/train.txt'");
$node->safe_psql('postgres', "\\copy queries FROM '$tmp/test.txt'");
# repeated images would make "the" nearest neighbours ambiguous
$node->safe_psql(
	'postgres', q{
DELETE FROM stage a USING stage b
WHERE a.embedding = b.embedding AND a.id > b.id;
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
ALTER TABLE items ALTER embedding SET STORAGE PLAIN;
INSERT INTO items SELECT * FROM stage WHERE id <= 9000;
CREATE TABLE plain (LIKE items INCLUDING ALL);
INSERT INTO plain SELECT * FROM items;
});

# The exact answer for an operator over the rows of items: per query the
# ids of the 10 nearest (ties broken by id) and the 10th distance.
sub truth
{
	my ($name, $op) = @_;
	$node->safe_psql(
		'postgres', qq{
SET enable_indexscan = off;
SET enable_bitmapscan = off;
DROP TABLE IF EXISTS $name;
CREATE TABLE $name AS
  SELECT q.id AS qid, n.id, n.dist, n.rn
  FROM queries q,
    LATERAL (SELECT i.id, i.embedding $op q.embedding AS dist,
                    row_number() OVER (ORDER BY i.embedding $op q.embedding, i.id) AS rn
             FROM items i ORDER BY 2, 1 LIMIT 10) n;
});
}

# Through the index: per query, the hits (returned rows within the exact
# 10th distance; ties count), and whether the list was in exact order and
# free of repeats.  Returns (recall, queries out of order).
sub check
{
	my ($truth, $op, $limit, $where, $set, $tbl) = @_;
	$where //= 'true';
	$set //= '';
	$tbl //= 'items';
	my $res = $node->safe_psql(
		'postgres', qq{
SET enable_seqscan = off;
$set
WITH got AS (
  SELECT q.id AS qid, r.id, r.dist, r.ord
  FROM queries q,
    LATERAL (SELECT i.id, i.embedding $op q.embedding AS dist,
                    row_number() OVER () AS ord
             FROM (SELECT id, embedding FROM $tbl WHERE $where
                   ORDER BY embedding $op q.embedding LIMIT $limit) i) r),
ordered AS (
  SELECT qid, bool_and(dist >= prev) AS sorted, count(*) = count(DISTINCT id) AS once
  FROM (SELECT qid, id, dist, coalesce(lag(dist) OVER (PARTITION BY qid ORDER BY ord), '-Infinity') AS prev FROM got) s
  GROUP BY qid),
kth AS (SELECT qid, max(dist) AS d10 FROM $truth GROUP BY qid),
hits AS (
  SELECT k.qid, count(g.id) FILTER (WHERE g.ord <= 10 AND g.dist <= k.d10) AS hits
  FROM kth k LEFT JOIN got g ON g.qid = k.qid GROUP BY k.qid)
SELECT round(sum(h.hits)::numeric / (10 * count(*)), 4),
       count(*) FILTER (WHERE NOT o.sorted OR NOT o.once)
FROM hits h JOIN ordered o ON o.qid = h.qid});
	return split /\|/, $res;
}

truth('truth_l2', '<->');

$node->safe_psql('postgres',
	qq{CREATE INDEX items_emb_idx ON items USING segvec (embedding) WITH (quantization = '$quant')});
$node->safe_psql('postgres',
	q{CREATE INDEX plain_emb_idx ON plain USING segvec (embedding) WITH (quantization = 'none')});
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(s->>'quantization', ',')
FROM ft.info('items_emb_idx') f, jsonb_array_elements(f.segments) s}),
	$quant,
	"CREATE INDEX wrote one quantized ($quant) segment");
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(s->>'quantization', ',')
FROM ft.info('plain_emb_idx') f, jsonb_array_elements(f.segments) s}),
	'none',
	"with quantization 'none' the segment is not quantized");
# without the option a graph segment is sq8 (the default)
is( $node->safe_psql(
		'postgres', q{
CREATE TABLE dflt AS SELECT * FROM items WHERE id <= 500;
CREATE INDEX dflt_emb_idx ON dflt USING segvec (embedding) WITH (compact_threshold = 0);
SELECT string_agg(s->>'quantization', ',')
FROM ft.info('dflt_emb_idx') f, jsonb_array_elements(f.segments) s;
DROP TABLE dflt;}),
	'sq8',
	'without the option the segment is sq8');
my ($codes, $vectors) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (s->>'code_bytes')::bigint, (s->>'vector_bytes')::bigint
FROM ft.info('items_emb_idx') f, jsonb_array_elements(f.segments) s});
if ($quant eq 'rabitq')
{
	# a bit per dimension (784 padded to 832) and three float4 per doc
	cmp_ok($codes, '>=', 9000 * (832 / 8 + 12), 'the codes take a bit per dimension and doc');
	cmp_ok($codes, '<', 9000 * (832 / 8 + 12) + 100 * 8192,
		'the codes take no more than that (and their pages)');
}
else
{
	cmp_ok($codes, '>=', 9000 * 784, 'the codes take a byte per dimension and doc');
}
cmp_ok($vectors, '>=', 9000 * 784 * 4, 'the float4 vectors are kept for the rerank');
cmp_ok(
	$node->safe_psql('postgres',
		q{SELECT pg_relation_size('items_emb_idx')::float8 / pg_relation_size('plain_emb_idx')}),
	'<', $quant eq 'rabitq' ? 1.1 : 1.35,
	'the quantized index is at most a third (rabitq: a tenth) larger than the unquantized one');

my ($recall, $bad) = check('truth_l2', '<->', 10);
note "l2 recall\@10 at the defaults: $recall";
cmp_ok($recall, '>=', 0.95, 'l2: recall@10 >= 0.95 at the default settings');
is($bad, 0, 'l2: every result list in exact distance order, no row twice');

# every kernel path the CPU has returns the same rows and order
my %lists;
for my $k ('scalar', 'avx2', 'avx512')
{
	my ($r, $o, $e) = $node->psql('postgres', "SET segvec.kernel = $k");
	next if $r != 0;
	$lists{$k} = $node->safe_psql(
		'postgres', qq{
SET segvec.kernel = $k;
SET enable_seqscan = off;
SELECT string_agg(r.ids, ';' ORDER BY q.id) FROM queries q,
  LATERAL (SELECT string_agg(id::text, ',' ORDER BY ord) AS ids FROM
    (SELECT id, row_number() OVER () AS ord FROM
      (SELECT id FROM items ORDER BY embedding <-> q.embedding LIMIT 10) i) s) r});
}
note 'kernel paths compared: ' . join(', ', sort keys %lists);
is(scalar(grep { $_ ne $lists{scalar} } values %lists),
	0, 'every kernel path returns the same rows in the same order');

($recall, $bad) = check('truth_l2', '<->', 10, 'true', 'SET segvec.rerank = 1;');
is($bad, 0, 'segvec.rerank = 1: still exact distances in exact order');

# segvec.quant_bound = probable: a tighter floor, same rows here (the codes
# of integer pixels are nearly exact), still in exact order
($recall, $bad) = check('truth_l2', '<->', 10, 'true', 'SET segvec.quant_bound = probable;');
cmp_ok($recall, '>=', 0.95, 'quant_bound = probable: recall@10 >= 0.95');
is($bad, 0, 'quant_bound = probable: exact distances in exact order');

# A graph search can find a node only after a farther one was returned
# (src/README.md, "Scans"); the rerank must add no such case of its own.
($recall, $bad) = check('truth_l2', '<->', 300);
my (undef, $bad_plain) = check('truth_l2', '<->', 300, 'true', '', 'plain');
note "continuations out of order: quantized $bad, unquantized $bad_plain";
cmp_ok($recall, '>=', 0.95, 'a continuation of 300 rows holds the exact top 10');
cmp_ok($bad, '<=', $bad_plain,
	'a continuation of 300 rows is in exact order as often as without quantization, no row twice');

# a filtered scan: 1 row in 10 passes, so the scan goes on well past ef
$node->safe_psql(
	'postgres', q{
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE truth_f AS
  SELECT q.id AS qid, n.id, n.dist
  FROM queries q,
    LATERAL (SELECT i.id, i.embedding <-> q.embedding AS dist FROM items i
             WHERE i.id % 10 = 3 ORDER BY 2, 1 LIMIT 10) n;
});
($recall, $bad) = check('truth_f', '<->', 10, 'id % 10 = 3');
note "filtered recall\@10: $recall";
cmp_ok($recall, '>=', 0.95, 'filtered (1 in 10) scan: recall@10 >= 0.95');
is($bad, 0, 'filtered scan: exact order, no row twice');

# tombstones, then new rows compacted into a segment merged with the first
$node->safe_psql(
	'postgres', q{
DELETE FROM items WHERE id % 7 = 0;
VACUUM items;
INSERT INTO items SELECT * FROM stage WHERE id > 9000;
});
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM queries q,
  LATERAL (SELECT id FROM items ORDER BY embedding <-> q.embedding LIMIT 10) r
WHERE r.id % 7 = 0 AND r.id <= 9000}), '0', 'tombstoned rows are not returned');
$node->safe_psql('postgres', q{SELECT ft.compact('items_emb_idx')});
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*), count(*) FILTER (WHERE s->>'quantization' = '$quant')
FROM ft.info('items_emb_idx') f, jsonb_array_elements(f.segments) s}) =~ /^(\d+)\|\1$/
	? 'all' : 'not all',
	'all',
	'compaction writes quantized segments');
is($node->safe_psql('postgres', q{SELECT mutable_docs FROM ft.info('items_emb_idx')}),
	'0', 'compaction took every new row');
truth('truth_l2b', '<->');
($recall, $bad) = check('truth_l2b', '<->', 10);
note "l2 recall\@10 after delete, vacuum, insert, compact: $recall";
cmp_ok($recall, '>=', 0.95, 'recall@10 >= 0.95 after tombstones and compaction');
is($bad, 0, 'exact order after tombstones and compaction');

# cosine and inner product
for my $m ([ 'cosine', 'vector_cosine_ops', '<=>' ], [ 'ip', 'vector_ip_ops', '<#>' ])
{
	my ($name, $opc, $op) = @$m;
	$node->safe_psql('postgres', qq{
DROP INDEX items_emb_idx;
DROP INDEX IF EXISTS items_m_idx;
CREATE INDEX items_m_idx ON items USING segvec (embedding $opc) WITH (quantization = '$quant');
});
	truth("truth_$name", $op);
	($recall, $bad) = check("truth_$name", $op, 10);
	note "$name recall\@10: $recall";
	cmp_ok($recall, '>=', 0.95, "$name: recall\@10 >= 0.95 with quantization");
	is($bad, 0, "$name: exact distance order, no row twice");
	($recall, $bad) = check("truth_$name", $op, 10, 'true', 'SET segvec.quant_bound = probable;');
	cmp_ok($recall, '>=', 0.95, "$name, quant_bound = probable: recall\@10 >= 0.95");
	is($bad, 0, "$name, quant_bound = probable: exact distance order");
	$node->safe_psql('postgres',
		qq{CREATE INDEX items_emb_idx ON items USING segvec (embedding) WITH (quantization = '$quant')})
	  if $name eq 'cosine';
}

# high dimensions: a node record (codes of 9,000 bytes) spans two pages and
# a vector five; searched through the graph (exact_scan_factor = 0)
$node->safe_psql(
	'postgres', qq{
CREATE TABLE hd (id int PRIMARY KEY, embedding real[]);
INSERT INTO hd SELECT g, array_agg((sin(g * 0.7 + j * 0.31) + cos(g * 0.013 * j))::real ORDER BY j)
  FROM generate_series(1, 60) g, generate_series(1, 9000) j GROUP BY g;
SET segvec.compact_threshold = 0;
CREATE INDEX hd_emb_idx ON hd USING segvec (embedding) WITH (quantization = '$quant');
});
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(s->>'quantization', ',')
FROM ft.info('hd_emb_idx') f, jsonb_array_elements(f.segments) s}),
	$quant, '9,000 dimensions: a quantized graph segment');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off;
SET segvec.exact_scan_factor = 0;
SELECT count(*) FROM hd a
WHERE (SELECT b.id FROM hd b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id}),
	'0', '9,000 dimensions: every row is its own nearest neighbour');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off;
SET segvec.exact_scan_factor = 0;
SELECT string_agg(id::text, ',') FROM
  (SELECT id FROM hd ORDER BY embedding <-> (SELECT embedding FROM hd WHERE id = 7) LIMIT 5) s}),
	$node->safe_psql(
		'postgres', q{
SET enable_indexscan = off;
SELECT string_agg(id::text, ',') FROM
  (SELECT id FROM hd ORDER BY embedding <-> (SELECT embedding FROM hd WHERE id = 7), id LIMIT 5) s}),
	'9,000 dimensions: the top 5 in exact order');

# cosine with zero vectors: their distance is NaN, they come last (as in
# an exact scan) and a zero query finds nothing nearer than NaN
$node->safe_psql(
	'postgres', qq{
CREATE TABLE zv (id int PRIMARY KEY, embedding real[]);
INSERT INTO zv SELECT id, embedding FROM items WHERE id <= 2000;
INSERT INTO zv SELECT 100000 + g, array_fill(0::real, ARRAY[784]) FROM generate_series(1, 20) g;
SET segvec.compact_threshold = 0;
CREATE INDEX zv_idx ON zv USING segvec (embedding vector_cosine_ops) WITH (quantization = '$quant');
});
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off;
SET segvec.exact_scan_factor = 0;
SELECT count(*) FILTER (WHERE id > 100000), count(*) FROM
  (SELECT id FROM zv ORDER BY embedding <=> (SELECT embedding FROM items WHERE id = 5) LIMIT 10) s}),
	'0|10', 'cosine with zero vectors: the 10 nearest are non-zero rows');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off;
SET segvec.exact_scan_factor = 0;
SELECT count(*) FROM
  (SELECT id FROM zv ORDER BY embedding <=> array_fill(0::real, ARRAY[784]) LIMIT 10) s}),
	'10', 'cosine with a zero query: rows come back, no error');

# the option is checked
my ($ret, $out, $err) = $node->psql('postgres',
	q{CREATE INDEX ON items USING segvec (embedding) WITH (quantization = 'pq')});
like($err, qr/invalid value for segvec option "quantization": "pq"/,
	'an unknown quantization is refused');

$node->stop;
done_testing();

# 003_graph.pl: graph segments on real data (Fashion-MNIST, 784-dim, L2).
# The segments are quantized (quantization = sq8), so the standby and
# crash checks below run on quantized segments; a small RaBitQ index
# (quantization = rabitq) is checked on the standby too, and the crash
# table's segments are rabitq ones.
#
# - recall@10 against the exact answer (computed with no index) >= 0.95
#   at segvec.ef_search = 64 for 200 test images: after CREATE INDEX (built
#   as graph segments), after inserting 5,000 more rows (mutable segment),
#   after deleting 10% and VACUUM, and after ft.compact;
# - a streaming standby returns the same ids for those queries each time;
# - a crash (stop -m immediate) in the middle of a loop of inserts, deletes
#   and compactions: afterwards every live row is its own nearest neighbour
#   at k = 1 and a full index scan returns exactly the live rows.
#
# Images that repeat an earlier one exactly are dropped when loading, so
# that "its own nearest neighbour" means the row itself.
use strict;
use warnings;

use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

# Decode the images: train 1..28,000 (20,000 indexed at first, 5,000
# inserted later, 3,000 for the crash loop) and test 1..200 (queries).
my $tmp = fmnist_files(28000, 200);

# maintenance_work_mem: the 20,000 docs fit in one graph build.
# jit = off: a disabled plan type's huge cost would switch it on.
my $primary = segvec_node('primary', q{
# the standby may connect late on a busy machine: keep the WAL it needs
wal_keep_size = '1GB'
jit = off
maintenance_work_mem = '256MB'
shared_buffers = '512MB'
# the 5,000 inserted rows stay in the mutable segment until ft.compact
segvec.compact_threshold = 10000
max_wal_size = '4GB'
}, allows_streaming => 1);
my $standby = segvec_standby($primary, 'standby');

# STORAGE PLAIN keeps the 3 kB vectors uncompressed, so the exact answers
# (a distance per row per query) do not decompress every row again.
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION segvec;
CREATE TABLE stage (id int PRIMARY KEY, embedding real[]);
ALTER TABLE stage ALTER embedding SET STORAGE PLAIN;
CREATE TABLE queries (id int PRIMARY KEY, embedding real[]);
ALTER TABLE queries ALTER embedding SET STORAGE PLAIN;
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
ALTER TABLE items ALTER embedding SET STORAGE PLAIN;
});
$primary->safe_psql('postgres', "\\copy stage FROM '$tmp/train.txt'");
$primary->safe_psql('postgres', "\\copy queries FROM '$tmp/test.txt'");
my $dups = $primary->safe_psql(
	'postgres', q{
WITH d AS (DELETE FROM stage a USING stage b
           WHERE a.embedding = b.embedding AND a.id > b.id RETURNING a.id)
SELECT count(DISTINCT id) FROM d});
note "dropped $dups repeated images";
is($primary->safe_psql('postgres', 'SELECT count(*) FROM stage'),
	28000 - $dups, 'train images loaded, each vector once');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM queries'),
	'200', '200 query images');

# The exact answer, computed once with no index over the 25,000 rows that
# will ever be searched: each query's 50 nearest, with their distances.
# The exact top-10 of a stage is the 10 nearest of these that are then in
# the table (checked to be at least 10).  Two sessions share the work.
$primary->safe_psql('postgres',
	'CREATE TABLE truth (qid int, id int, dist float8)');
my @workers;
for my $k (0, 1)
{
	my $w = $primary->background_psql('postgres');
	$w->query_until(
		qr/started/, qq{
\\echo started
SET enable_indexscan = off;
SET enable_bitmapscan = off;
INSERT INTO truth
  SELECT q.id, n.id, n.dist
  FROM queries q,
    LATERAL (SELECT s.id, s.embedding <-> q.embedding AS dist FROM stage s
             WHERE s.id <= 25000 ORDER BY 2 LIMIT 50) n
  WHERE q.id % 2 = $k;
});
	push @workers, $w;
}
for my $w (@workers)
{
	$w->query_safe('SELECT 1');    # returns once the INSERT is done
	$w->quit;
}
is($primary->safe_psql('postgres', 'SELECT count(*) FROM truth'),
	'10000', 'exact 50 nearest of every query computed');

$primary->safe_psql('postgres',
	'INSERT INTO items SELECT * FROM stage WHERE id <= 20000');
my $n_built = $primary->safe_psql('postgres', 'SELECT count(*) FROM items');
$primary->safe_psql('postgres',
	q{CREATE INDEX items_emb_idx ON items USING segvec (embedding) WITH (quantization = 'sq8')});
is($primary->safe_psql('postgres', q{SELECT * FROM ft.compact('items_emb_idx')}),
	'0|0|0',
	"CREATE INDEX of $n_built docs wrote graph segments only");
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) > 0 AND bool_and(s->>'quantization' = 'sq8')
FROM ft.info('items_emb_idx') f, jsonb_array_elements(f.segments) s}),
	't', 'the graph segments are quantized (sq8)');

# One line per query: its id, the ids of its top-10 through the index, how
# many of them are within the exact 10th distance (a hit; ties count) and
# how many exact neighbours are known (10 when the 50 nearest hold 10 live
# rows).  The same query on the standby must give the same lines.
my $top_sql = q{
SET enable_seqscan = off;
SET segvec.ef_search = 64;
WITH live AS (
  SELECT t.qid, t.dist,
         row_number() OVER (PARTITION BY t.qid ORDER BY t.dist, t.id) AS rn
  FROM truth t JOIN items i ON i.id = t.id),
kth AS (SELECT qid, max(dist) AS d10, count(*) AS n FROM live
        WHERE rn <= 10 GROUP BY qid),
top AS (
  SELECT q.id AS qid, q.embedding,
         ARRAY(SELECT i.id FROM items i
               ORDER BY i.embedding <-> q.embedding LIMIT 10) AS ids
  FROM queries q)
SELECT top.qid, top.ids,
       (SELECT count(*) FROM items i
        WHERE i.id = ANY (top.ids)
          AND i.embedding <-> top.embedding <= kth.d10) AS hits,
       kth.n
FROM top LEFT JOIN kth USING (qid)
ORDER BY top.qid;
};

like(
	$primary->safe_psql(
		'postgres', "SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT q.id, ARRAY(SELECT i.id FROM items i
  ORDER BY i.embedding <-> q.embedding LIMIT 10) FROM queries q"),
	qr/Index Scan using items_emb_idx on items i/,
	'the top-10 queries use the segvec index');

sub check_stage
{
	my ($stage) = @_;
	my ($complete, $rows, $hits) = (0, 0, 0);

	my $p = $primary->safe_psql('postgres', $top_sql);
	for my $line (split /\n/, $p)
	{
		my ($qid, $ids, $h, $n) = split /\|/, $line;
		$complete++ if defined $n && $n eq '10';
		$rows += scalar(split /,/, $ids) if $ids ne '{}';
		$hits += $h;
	}
	is($complete, 200, "$stage: the exact top-10 of every query is known");
	is($rows, 2000, "$stage: every query returns 10 rows");
	my $recall = $hits / 2000;
	cmp_ok($recall, '>=', 0.95, "$stage: recall\@10 at ef_search 64");
	note "$stage: recall\@10 = $recall";

	$primary->wait_for_catchup($standby, 'replay');
	my $s = $standby->safe_psql('postgres', $top_sql);
	is(scalar(split /\n/, $s), 200, "$stage: the standby answers 200 queries");
	is($s, $p, "$stage: the standby returns the same ids as the primary");
}

check_stage('after CREATE INDEX');

# 5,000 more rows, into the mutable segment
$primary->safe_psql('postgres',
	'INSERT INTO items SELECT * FROM stage WHERE id BETWEEN 20001 AND 25000');
check_stage('after inserting 5,000 rows');

# 10% deleted, from the graph segment and the mutable one
$primary->safe_psql('postgres', 'DELETE FROM items WHERE id % 10 = 0');
$primary->safe_psql('postgres', 'VACUUM items');
check_stage('after deleting 10% and VACUUM');

# compaction: the live docs of the mutable segment go to a graph segment
my $n_mutable = $primary->safe_psql('postgres',
	'SELECT count(*) FROM items WHERE id > 20000');
my ($compacted, $created) = split /\|/,
  $primary->safe_psql('postgres',
	q{SELECT docs_compacted, segments_created FROM ft.compact('items_emb_idx')});
is($compacted, $n_mutable, "ft.compact moved the $n_mutable mutable docs");
cmp_ok($created, '>=', 1, 'ft.compact created a graph segment');
is($primary->safe_psql('postgres', q{SELECT * FROM ft.compact('items_emb_idx')}),
	'0|0|0', 'a second ft.compact has nothing to do');
check_stage('after ft.compact');

# RaBitQ segments on the standby: the same ids for 50 queries, after
# CREATE INDEX and after a delete, VACUUM and compaction
my $rq_sql = q{
SET enable_seqscan = off;
SELECT q.id, ARRAY(SELECT r.id FROM rq r ORDER BY r.embedding <-> q.embedding LIMIT 10)
FROM queries q WHERE q.id <= 50 ORDER BY q.id;
};
$primary->safe_psql(
	'postgres', q{
CREATE TABLE rq (id int PRIMARY KEY, embedding real[]);
INSERT INTO rq SELECT * FROM stage WHERE id <= 3000;
SET segvec.compact_threshold = 0;
CREATE INDEX rq_idx ON rq USING segvec (embedding) WITH (quantization = 'rabitq');
});
for my $rq_stage ('rabitq after CREATE INDEX', 'rabitq after DELETE, VACUUM, compaction')
{
	if ($rq_stage =~ /DELETE/)
	{
		$primary->safe_psql('postgres', q{
DELETE FROM rq WHERE id % 5 = 0;
VACUUM rq;
INSERT INTO rq SELECT * FROM stage WHERE id BETWEEN 3001 AND 3500;
SELECT ft.compact('rq_idx');
});
	}
	is( $primary->safe_psql(
			'postgres', q{
SELECT count(*) > 0 AND bool_and(s->>'quantization' = 'rabitq')
FROM ft.info('rq_idx') f, jsonb_array_elements(f.segments) s}),
		't', "$rq_stage: the graph segments are rabitq ones");
	my $p = $primary->safe_psql('postgres', $rq_sql);
	$primary->wait_for_catchup($standby, 'replay');
	is($standby->safe_psql('postgres', $rq_sql), $p,
		"$rq_stage: the standby returns the same ids as the primary");
}

$standby->stop;

# A full index scan returns every live row once (max_scan_tuples lifted so
# that nothing but the rows themselves ends it), in strict order (the
# default): the search's reorder stage holds back a row found late and
# returns it in its place (on the merged sq8 segment 2 of the 22,500 rows
# were lost to strict order before it).
my $full_sql = q{
SET enable_seqscan = off;
SET segvec.max_scan_tuples = 10000000;
SELECT count(*) || '|' || count(DISTINCT id) FROM (
  SELECT id FROM %s
  ORDER BY embedding <-> (SELECT embedding FROM queries WHERE id = 1)
  LIMIT 1000000) s;
};
my $n = $primary->safe_psql('postgres', 'SELECT count(*) FROM items');
is($primary->safe_psql('postgres', sprintf($full_sql, 'items')),
	"$n|$n", "after ft.compact: a full index scan returns the $n live rows");

# The crash, on a table of its own: 1,000 rows in a graph segment; then one
# session inserts 1,000 rows, deletes some of the previous batch and
# compacts, three times over, each statement its own transaction, and a
# progress row is committed after each compaction.  Once a compaction is
# done and the next one has just started, the server is stopped with
# -m immediate.  ef_construction = 400 makes each compaction take long
# enough (most of a second) for the crash to land inside it, and gives this
# small index a well-connected graph: the same checks hold before the
# crash, so what fails after it is the crash's doing.
#
# Every live row must then be its own nearest neighbour (k = 1), and a
# full index scan must return each live row once.
my $self_sql = q{
SET enable_seqscan = off;
SET segvec.ef_search = 64;
SELECT count(*) FROM crash a
WHERE (SELECT b.id FROM crash b ORDER BY b.embedding <-> a.embedding LIMIT 1)
      IS DISTINCT FROM a.id;
};
$primary->safe_psql(
	'postgres', q{
CREATE TABLE crash (id int PRIMARY KEY, embedding real[]);
ALTER TABLE crash ALTER embedding SET STORAGE PLAIN;
INSERT INTO crash SELECT * FROM stage WHERE id <= 1000;
SET segvec.compact_threshold = 0;
CREATE INDEX crash_emb_idx ON crash USING segvec (embedding)
  WITH (ef_construction = 400, quantization = 'rabitq');
CREATE TABLE progress (n int);
});
is($primary->safe_psql('postgres', q{SELECT * FROM ft.compact('crash_emb_idx')}),
	'0|0|0', 'crash table: CREATE INDEX wrote a graph segment');
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) > 0 AND bool_and(s->>'quantization' = 'rabitq')
FROM ft.info('crash_emb_idx') f, jsonb_array_elements(f.segments) s}),
	't', 'crash table: its graph segment is quantized (rabitq)');
$n = $primary->safe_psql('postgres', 'SELECT count(*) FROM crash');
is($primary->safe_psql('postgres', sprintf($full_sql, 'crash')),
	"$n|$n", "before the crash: a full index scan returns the $n rows");
is($primary->safe_psql('postgres', $self_sql),
	'0', 'before the crash: every row is its own nearest neighbour');

my $loop = "\\echo started\n";
for my $i (0 .. 2)
{
	my $lo = 25001 + 1000 * $i;
	my $hi = $lo + 999;
	$loop .= "INSERT INTO crash SELECT * FROM stage WHERE id BETWEEN $lo AND $hi;\n";
	$loop .= "DELETE FROM crash WHERE id BETWEEN $lo - 1000 AND $hi - 1000 AND id % 7 = 0;\n"
	  if $i > 0;
	$loop .= "SELECT ft.compact('crash_emb_idx');\n";
	$loop .= "INSERT INTO progress VALUES ($i);\n";
}
my $bg = $primary->background_psql('postgres', on_error_stop => 0);
my $loop_pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, $loop);

# Poll (from a session of its own, so each poll takes milliseconds) until
# a compaction after the first one has just started.
my $mon = $primary->background_psql('postgres');
my $caught = 0;
my $deadline = time() + 120;
while (time() < $deadline)
{
	my ($done, $active) = split /\|/, $mon->query_safe(
		qq{
SELECT (SELECT count(*) FROM progress),
       (SELECT count(*) FROM pg_stat_activity
        WHERE pid = $loop_pid AND state = 'active'
          AND query LIKE 'SELECT ft.compact(%'
          AND clock_timestamp() - query_start < interval '300 ms')});
	if ($done >= 1 && $active > 0)
	{
		$caught = 1;
		last;
	}
	last if $done >= 3;
	usleep(20_000);
}
$primary->stop('immediate');
eval { $bg->quit; };     # their server is gone
eval { $mon->quit; };
ok($caught, 'a compaction was running just before the crash');

# What the loop's session last started, from the server log: a compaction
# that had not returned yet.
my @loop_stmts = grep { /\[$loop_pid\].*statement: / }
  split /\n/, slurp_file($primary->logfile);
like($loop_stmts[-1], qr/statement: SELECT ft\.compact/,
	'the crash came while that compaction was running');
$primary->start;
note 'compactions finished before the crash: '
  . $primary->safe_psql('postgres', 'SELECT count(*) FROM progress')
  . ' of 3';

$n = $primary->safe_psql('postgres', 'SELECT count(*) FROM crash');
note "live rows after the crash: $n";
cmp_ok($n, '>', 2500, 'rows inserted by the loop survived');
is($primary->safe_psql('postgres', sprintf($full_sql, 'crash')),
	"$n|$n", "after the crash: a full index scan returns the $n live rows");
is($primary->safe_psql('postgres', $self_sql),
	'0', 'after the crash: every row is its own nearest neighbour');

# The index goes on working: compaction after recovery drains it.
$primary->safe_psql('postgres', q{SELECT ft.compact('crash_emb_idx')});
is($primary->safe_psql('postgres', q{SELECT * FROM ft.compact('crash_emb_idx')}),
	'0|0|0', 'ft.compact after recovery drains the mutable segment');
is($primary->safe_psql('postgres', sprintf($full_sql, 'crash')),
	"$n|$n", 'after compacting again: a full index scan returns every live row');
is($primary->safe_psql('postgres', $self_sql),
	'0', 'after compacting again: every row is its own nearest neighbour');

$primary->stop;
done_testing();

# 099_alias_heap.pl: an alias (an UPDATE that kept a row's id and vector)
# is resolved to the vector the index holds for its row, on a real[]
# column, an expression index and (when pgvector is installed) a pgvector
# column through segvec_pgvector, with background workers on.
#
# 1. The table t (id, tag, e vector(8), r real[]), a btree on tag, 2,000
#    rows, segvec indexes on r, on (l2_normalize(r)) and on e, each with
#    compact_threshold = 100000 INCLUDE (id); ft.compact; a non-HOT UPDATE
#    of tag for 900 rows (aliases); VACUUM (INDEX_CLEANUP ON), whose
#    tombstones (45% of the segment) make a background job rewrite the
#    segment.  The doc an alias targets is never dropped while the alias
#    lives: the rewrite freezes the aliases into docs first.  Then KNN
#    queries give the exact answer with no error, every row is found by its
#    own vector at k = 1, ft.verify is clean, and the same after another
#    compaction.
# 2. An alias whose target is in no segment of the reader's manifest is
#    read from its heap row through the path an insert takes (the index
#    expression evaluated as the table's owner, the operator class's input
#    function, the dimension check): a scan stopped at test point
#    "scan-manifest-read" while another session compacts the mutable
#    segment into a new segment and updates those rows (aliases of the new
#    segment's docs) returns every row once, without an error.
# And no server process crashed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('alias_heap', q{
segvec.naptime = 1
segvec.max_workers = 2
segvec.ef_search = 200
segvec.enable_test_hooks = on
# a crash (the defect this test guards against) restarts the server, so
# that the test goes on to report the rest
restart_after_crash = on
});

my $pgvector = sq(q{SELECT count(*) FROM pg_available_extensions
	WHERE name = 'vector'}) eq '1';
note $pgvector
  ? 'pgvector is installed: the vector column is tested too'
  : 'pgvector is not installed: no vector column';

sq("CREATE EXTENSION segvec;\n" . vec_function(dims => 8));
sq(q{SET client_min_messages = warning;
	 CREATE EXTENSION segvec_pgvector CASCADE}) if $pgvector;

# index name => the indexed expression (over table alias $a)
my %expr = (
	r => sub { "$_[0].r" },
	n => sub { "l2_normalize($_[0].r)" },);
$expr{e} = sub { "$_[0].e" } if $pgvector;
my @idx = sort keys %expr;

# The table $tab of $rows rows and its segvec indexes (all, or those named
# in @only)
sub make_table
{
	my ($tab, $rows, @only) = @_;
	my %want = map { $_ => 1 } (@only ? @only : @idx);
	my $e = $pgvector ? ', e vector(8)' : '';
	my $ev = $pgvector ? ', vec(i)::vector' : '';
	my $sql = qq{
CREATE TABLE $tab (id int PRIMARY KEY, tag int$e, r real[])
  WITH (autovacuum_enabled = off);
CREATE INDEX ${tab}_tag ON $tab (tag);
INSERT INTO $tab SELECT i, i$ev, vec(i) FROM generate_series(1, $rows) i;
};
	$sql .= qq{
CREATE INDEX ${tab}_r ON $tab USING segvec (r) INCLUDE (id)
  WITH (compact_threshold = 100000);
} if $want{r};
	$sql .= qq{
CREATE INDEX ${tab}_n ON $tab USING segvec ((l2_normalize(r)) vector_l2_ops)
  INCLUDE (id) WITH (compact_threshold = 100000);
} if $want{n};
	$sql .= qq{
CREATE INDEX ${tab}_e ON $tab USING segvec (e vector_l2_ops) INCLUDE (id)
  WITH (compact_threshold = 100000);
} if $want{e};
	sq($sql);
	return;
}

# psql that does not die: (exit code, stdout, stderr)
sub try_sql
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	# a crashed backend restarts the server: wait for it
	accepting($node) if $ret != 0;
	return ($ret, $out, $err);
}

# The 10 nearest ids of row 5's vector through index $i of $tab, and exactly
my $settings = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
my $exact = 'SET enable_indexscan = off; SET enable_bitmapscan = off;';

sub knn
{
	my ($tab, $i, $how) = @_;
	my $col = $expr{$i}->($tab);
	my $q = $expr{$i}->('q');
	return try_sql(qq{$how
SELECT array_agg(id) FROM
  (SELECT id FROM $tab ORDER BY $col <-> (SELECT $q FROM $tab q WHERE q.id = 5)
   LIMIT 10) s});
}

sub check_index
{
	my ($tab, $i, $what) = @_;
	my $col = $expr{$i}->($tab);
	my $ic = $expr{$i}->('i');

	like(
		(try_sql(qq{$settings EXPLAIN (COSTS OFF)
SELECT id FROM $tab ORDER BY $col <-> (SELECT $col FROM $tab WHERE id = 5)
LIMIT 10}))[1],
		qr/Index Scan using ${tab}_$i/,
		"$what, ${tab}_$i: the KNN query uses the index");
	my ($ret, $out, $err) = knn($tab, $i, $settings);
	is($ret, 0, "$what, ${tab}_$i: the KNN query succeeds")
	  or diag $err;
	my (undef, $want) = knn($tab, $i, $exact);
	is($out, $want, "$what, ${tab}_$i: the KNN answer is the exact one");
	($ret, $out, $err) = try_sql(
		qq{$settings
SELECT count(*), count(*) FILTER (WHERE
  (SELECT i.id FROM $tab i ORDER BY $ic <-> $col LIMIT 1) = $tab.id)
FROM $tab});
	is($ret, 0, "$what, ${tab}_$i: the self searches succeed") or diag $err;
	like($out, qr/^(\d+)\|\1$/,
		"$what, ${tab}_$i: every row is found by its own vector at k = 1");
	($ret, $out, $err) = try_sql(
		qq{SELECT heap_rows = indexed_docs, missing_docs, duplicate_docs,
		   docs_in_two_segments, phantom_entries, checksum_mismatches,
		   missing_keymap_entries, search_misses
		   FROM ft.verify('${tab}_$i', false, 100000)});
	is($out, 't|0|0|0|0|0|0|0', "$what, ${tab}_$i: ft.verify is clean")
	  or diag $err;
	return;
}

# ---- 1. the issue's scenario: UPDATE, VACUUM, the rewrite by a job -------
make_table('t', 2000);
sq("SELECT ft.compact('t_$_')") for @idx;
sq(q{UPDATE t SET tag = tag + 100000 WHERE id <= 900});
my $aliases = sq(
	q{SELECT count(*) FROM t, ft.get('t_r', t.id::text) g
	  WHERE g.segment = 'mutable (alias)'});
is($aliases, '900', 'the UPDATE made aliases');
sq(q{VACUUM (INDEX_CLEANUP ON) t});
my $idle = join(' AND ',
	'(SELECT count(*) = 0 FROM ft.jobs)',
	map { "(SELECT tombstones = 0 FROM ft.info('t_$_'))" } @idx);
ok($node->poll_query_until('postgres', "SELECT $idle"),
	'the background jobs rewrote the segments');
for my $i (@idx)
{
	is(sq("SELECT mutable_docs FROM ft.info('t_$i')"),
		'0', "t_$i: the rewrite froze the aliases into docs first");
}
check_index('t', $_, 'after the rewrite') for @idx;

sq("SELECT ft.compact('t_$_')") for @idx;
check_index('t', $_, 'after ft.compact') for @idx;

# ---- 2. an alias read from its heap row ---------------------------------
for my $i (@idx)
{
	my $tab = "u$i";
	my $col = $expr{$i}->($tab);
	make_table($tab, 1000, $i);
	sq("SELECT ft.compact('${tab}_$i')");
	sq(qq{INSERT INTO $tab SELECT i, i}
		  . ($pgvector ? ', vec(i)::vector' : '')
		  . q{, vec(i) FROM generate_series(1001, 1400) i});
	my $scan = hold_at(
		$node, 'scan-manifest-read', qq{
SELECT count(*), count(DISTINCT id) FROM
  (SELECT id FROM $tab ORDER BY $col <-> (SELECT $col FROM $tab WHERE id = 7)
   LIMIT 100000) s;
}, setup => q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET segvec.max_scan_tuples = 100000;
});
	# the mutable rows become a segment the scan's manifest lacks, and
	# their UPDATE aliases that segment's docs
	is(sq("SELECT docs_compacted FROM ft.compact('${tab}_$i')"),
		'400', "${tab}_$i: a compaction while the scan holds the old manifest");
	sq(qq{UPDATE $tab SET tag = tag + 100000 WHERE id > 1000});
	is( sq(
			qq{SELECT count(*) FROM $tab, ft.get('${tab}_$i', $tab.id::text) g
			   WHERE g.segment = 'mutable (alias)'}),
		'400',
		"${tab}_$i: the UPDATE aliased the new segment's docs");
	my ($res, $err) = $scan->release;
	accepting($node);
	like($res, qr/^1400\|1400$/m,
		"${tab}_$i: the scan with the old manifest returns every row once")
	  or diag "stderr: $err";
	sq("VACUUM $tab");
	check_index($tab, $i, 'the heap read');
}

unlike(
	slurp_file($node->logfile),
	qr/terminated by signal|vector must be an array/,
	'no server process crashed, no vector read error');

$node->stop;
done_testing();

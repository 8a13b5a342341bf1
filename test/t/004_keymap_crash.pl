# 004_keymap_crash.pl: the keymap survives a crash.
#
# A session runs a loop of inserts (with ids), deletes, VACUUM, ft.compact
# and ft.snapshot against an index with INCLUDE (id) and a low
# compact_threshold (so background compactions and snapshot jobs run too);
# the primary is stopped with stop('immediate') in the middle of it.  After
# restart, on the primary and on a streaming standby that followed it:
# - ft.verify is clean: every live row indexed exactly once, no phantom
#   keymap entry, no entry with a wrong checksum, no doc without its entry,
#   no doc in two segments, every row found by its own vector;
# - every row's own vector returns that row at k = 1 (an SQL check);
# - ft.get finds every row's vector by its id;
# - after VACUUM (which removes the docs of rows deleted before the crash
#   and of the insert it aborted), ft.info's num_docs and keymap_entries
#   equal N, the live row count;
# - the standby's answers (counts, top-10s, ft.info) equal the primary's.
# Searches use segvec.ef_search = 100, so that graph segments answer the
# k = 1 checks exactly.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $primary = segvec_node('km_primary', q{
# the standby may connect late on a busy machine: keep the WAL it needs
wal_keep_size = '1GB'
}, allows_streaming => 1);

# The standby exists before the loop and follows it through the WAL.
my $standby = segvec_standby($primary, 'km_standby');

$primary->safe_psql(
	'postgres', "CREATE EXTENSION segvec;\n"
		  . vec_function(type => 'bigint')
		  . q{
CREATE TABLE items (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(1, 600) g;
CREATE INDEX items_idx ON items USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 500);
});

# The loop: each iteration inserts 30 rows in two transactions, deletes
# about 10, and in turn runs VACUUM, ft.compact and ft.snapshot.  Far more
# iterations than can run before the crash.
my $iterations = 5000;
my $loop = '';
for my $i (1 .. $iterations)
{
	my $base = 100000 + $i * 100;
	$loop .= "INSERT INTO items SELECT g, vec(g, 16) FROM generate_series("
	  . ($base + 1) . ", " . ($base + 20) . ") g;\n";
	$loop .= "INSERT INTO items SELECT g, vec(g, 16) FROM generate_series("
	  . ($base + 21) . ", " . ($base + 30) . ") g;\n";
	$loop .= "DELETE FROM items WHERE id % 29 = " . ($i % 29)
	  . " AND id BETWEEN " . ($base - 1000) . " AND $base;\n";
	$loop .= "DELETE FROM items WHERE id = " . ($i * 3) . ";\n";
	$loop .= "VACUUM items;\n" if $i % 3 == 0;
	$loop .= "SELECT ft.compact('items_idx') IS NOT NULL;\n" if $i % 4 == 1;
	$loop .= "SELECT ft.snapshot('items_idx') IS NOT NULL;\n" if $i % 2 == 0;
}

# psql reads the loop from a file (\i) and writes its output to another
# (\o), so that neither pipe of the session can fill up and stall it while
# the test sleeps.
my $dir = $PostgreSQL::Test::Utils::tmp_check;
my $loop_file = "$dir/keymap_loop.sql";
PostgreSQL::Test::Utils::append_to_file($loop_file, $loop);
my $bg = $primary->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/loop started\n/,
	"\\echo loop started\n\\o $dir/keymap_loop.out\n\\i $loop_file\n");

# the last iteration whose inserts are committed
sub iterations_done
{
	return $primary->safe_psql('postgres',
		'SELECT greatest(max(id) / 100 - 1000, 0) FROM items');
}

my $t0 = time;
# let it run through a few dozen iterations of inserts, compactions and
# snapshots (counted, not timed: a busy machine runs them slower)
my $waited = 0;
while (iterations_done() < 30 && $waited < 300_000)
{
	usleep(100_000);
	$waited += 100;
}
my $done_before = iterations_done();
note "iterations done before the crash: $done_before";
cmp_ok($done_before, '>=', 30, 'the loop was running');
cmp_ok($done_before, '<', $iterations, 'the loop had not finished');
$primary->stop('immediate');
eval { $bg->quit; };    # its server is gone
my @errors = slurp_file($primary->logfile) =~ /^.*\bERROR:.*$/mg;
is(scalar(@errors), 0, 'no statement of the loop failed')
  or diag join("\n", @errors[ 0 .. ($#errors < 4 ? $#errors : 4) ]);
$primary->start;

# ft.verify finds no problem; with $search_all every row is searched at
# k = 1 (search_limit NULL), else none (search_limit 0)
sub check_clean
{
	my ($node, $n, $stage, $search_all) = @_;
	my $v = verify('items_idx', node => $node, ef_search => 100,
		search_limit => $search_all ? 'NULL' : '0');
	note "$stage: ft.verify: "
	  . join(', ', map { "$_=$v->{$_}" } sort keys %$v);
	for my $k (
		qw(missing_docs duplicate_docs docs_in_two_segments
		phantom_entries checksum_mismatches missing_keymap_entries
		search_misses repaired))
	{
		is($v->{$k}, '0', "$stage: ft.verify $k = 0");
	}
	is($v->{examples}, '{}', "$stage: ft.verify gives no examples");
	is($v->{heap_rows}, $n, "$stage: ft.verify saw the $n live rows");
	is($v->{search_checked}, $search_all ? $n : 0,
		"$stage: ft.verify searched " . ($search_all ? 'every row' : 'no row'));
}

# every row's own vector returns it at k = 1, through the index
my $self_sql = q{SET enable_seqscan = off; SET segvec.ef_search = 100;
  SELECT count(*) FROM items a
  WHERE (SELECT b.id FROM items b ORDER BY b.embedding <-> a.embedding LIMIT 1)
        IS DISTINCT FROM a.id};
# ft.get returns every row's vector
my $get_sql = q{SELECT count(*) FROM items t
  WHERE NOT EXISTS (SELECT FROM ft.get('items_idx', t.id::text) g
                    WHERE g.vector = t.embedding)};
# the top-10 ids of three query vectors, through the index
my $top_sql = q{SET enable_seqscan = off; SET segvec.ef_search = 100;
  SELECT q, (SELECT string_agg(id::text, ',') FROM
              (SELECT id FROM items ORDER BY embedding <-> vec(q, 16)
               LIMIT 10) s)
  FROM generate_series(900001, 900003) q};
my $info_sql = q{SELECT num_docs, keymap_entries,
  mutable_docs + immutable_docs = num_docs FROM ft.info('items_idx')};

sub check_node
{
	my ($node, $n, $stage) = @_;
	check_clean($node, $n, $stage, 1);
	is($node->safe_psql('postgres', $self_sql),
		'0', "$stage: every row's own vector returns it at k = 1");
	is($node->safe_psql('postgres', $get_sql),
		'0', "$stage: ft.get finds every row's vector by its id");
}

my $n = $primary->safe_psql('postgres', 'SELECT count(*) FROM items');
note "live rows after the crash: $n, of them from the loop: "
  . $primary->safe_psql('postgres',
	'SELECT count(*) FROM items WHERE id > 100000');
is( $primary->safe_psql(
		'postgres', 'SELECT count(DISTINCT embedding) = count(*) FROM items'),
	't',
	'test vectors are pairwise distinct');
note 'ft.info after the crash (num_docs, mutable, immutable, tombstones, '
  . 'segments, keymap entries, epoch, buckets changed): '
  . $primary->safe_psql('postgres',
	q{SELECT num_docs, mutable_docs, immutable_docs, tombstones, num_segments,
	  keymap_entries, keymap_epoch, keymap_buckets_changed
	  FROM ft.info('items_idx')});

# the primary after restart
check_node($primary, $n, 'primary after the crash');

# the standby, once it has replayed what the restarted primary has
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM items'),
	$n, 'standby: same live row count as the primary');
check_node($standby, $n, 'standby after the crash');
is($standby->safe_psql('postgres', $top_sql),
	$primary->safe_psql('postgres', $top_sql),
	'standby: same top-10s as the primary');

# VACUUM: then num_docs and keymap_entries are N
$primary->safe_psql('postgres', 'VACUUM items');
my $info = $primary->safe_psql('postgres', $info_sql);
is($info, "$n|$n|t",
	'primary after VACUUM: num_docs and keymap_entries equal the live rows');
check_clean($primary, $n, 'primary after VACUUM', 0);
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', $info_sql),
	$info, 'standby after VACUUM: same num_docs and keymap_entries');
check_clean($standby, $n, 'standby after VACUUM', 0);

# the index keeps working: compaction, inserts, a snapshot
$primary->safe_psql(
	'postgres', q{
SELECT ft.compact('items_idx');
INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(1000001, 1000100) g;
SELECT ft.snapshot('items_idx');
});
$n += 100;
is($primary->safe_psql('postgres', $info_sql),
	"$n|$n|t", 'primary after more inserts: num_docs and keymap_entries');
check_clean($primary, $n, 'primary after more inserts', 0);
is($primary->safe_psql('postgres', $get_sql),
	'0', "primary after more inserts: ft.get finds every row's vector");
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', $info_sql),
	"$n|$n|t", 'standby after more inserts: num_docs and keymap_entries');
check_clean($standby, $n, 'standby after more inserts', 0);
is($standby->safe_psql('postgres', $top_sql),
	$primary->safe_psql('postgres', $top_sql),
	'standby after more inserts: same top-10s as the primary');
note 'seconds since the loop started: ' . (time - $t0);

$standby->stop;
$primary->stop;
done_testing();

# 085_free_tail.pl: VACUUM gives a free extent at the index's end back
# (issue 11: the index shrinks), on the primary and on a streaming
# standby, and a crash between taking the extent off the free-extent list
# and the truncation (PANIC at test point "truncate-unlisted") loses
# nothing: the next VACUUMs recycle the cut-off blocks page by page,
# inserts and compactions go on, ft.verify is clean.
#
# Background work is off, so every compaction is the test's own, made by
# VACUUM (its compaction and merges run under VACUUM's ignored xmin).  A
# round replaces a batch of rows: insert the new ones, delete the old
# ones, VACUUM (tombstones the old segment, compacts the new rows, and the
# merge policy rewrites the mostly tombstoned segment), then a
# transaction so that what the round freed is older than every snapshot.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'segvec'
autovacuum = off
segvec.max_workers = 0
segvec.enable_test_hooks = on
maintenance_work_mem = '1MB'
restart_after_crash = on
});
$node->start;
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf',
	"shared_preload_libraries = 'segvec'\nsegvec.max_workers = 0");
$standby->start;

sub sq
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

sub verify
{
	my ($idx) = @_;
	return sq(
		qq{SELECT heap_rows = indexed_docs, missing_docs, duplicate_docs,
		   docs_in_two_segments, phantom_entries, missing_keymap_entries,
		   search_misses FROM ft.verify('$idx', false, 100000)});
}
my $clean = 't|0|0|0|0|0|0';

sq(q{
CREATE EXTENSION segvec;
CREATE FUNCTION vec(i bigint) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg((sin(i * 0.37 + j * 1.3) + cos(i * 0.011 * j))::real
                   ORDER BY j)
  FROM generate_series(1, 16) j $$;
});

# One round on table $t: rows [$n * 300 + 1, $n * 300 + 300] replace the
# previous round's.  Returns the index's size in blocks before and after
# the round's VACUUM, and psql's status of the VACUUM.
sub round
{
	my ($t, $n) = @_;
	my ($lo, $hi) = ($n * 300 + 1, $n * 300 + 300);
	sq(qq{INSERT INTO $t SELECT i, vec(i) FROM generate_series($lo, $hi) i;
	      DELETE FROM $t WHERE id < $lo});
	my $before = sq(qq{SELECT pg_relation_size('${t}_v') / 8192});
	my ($ret) = $node->psql('postgres', "VACUUM $t");
	$node->poll_query_until('postgres', 'SELECT 1', '1')
	  or die 'server did not come back';
	my $after = sq(qq{SELECT pg_relation_size('${t}_v') / 8192});
	sq('SELECT txid_current()');
	return ($before, $after, $ret);
}

sub setup
{
	my ($t) = @_;
	sq(qq{
CREATE TABLE $t (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX ${t}_v ON $t USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100);
});
}

# ---- 1. VACUUM truncates a free tail ---------------------------------------
setup('s');
my ($shrunk, $max) = (0, 0);
for my $n (0 .. 11)
{
	my ($before, $after) = round('s', $n);
	$max = $before if $before > $max;
	$shrunk++ if $after < $before;
}
my $size = sq(q{SELECT pg_relation_size('s_v') / 8192});
note "index blocks: at most $max before a VACUUM, $size at the end, "
  . "$shrunk VACUUMs truncated";
cmp_ok($shrunk, '>=', 1, 'some VACUUM truncated the index');
is(verify('s_v'), $clean, 'ft.verify is clean after the truncations');
is( sq(q{SELECT count(*) FROM
	     (SELECT id FROM s ORDER BY v <-> vec(3500) LIMIT 10) x}),
	'10', 'the primary searches the index');

# the standby replays the truncation and searches the same index
$node->wait_for_catchup($standby, 'replay');
is( $standby->safe_psql(
		'postgres', q{SELECT pg_relation_size('s_v') / 8192}),
	$size, 'the standby has the truncated size');
is( $standby->safe_psql(
		'postgres', q{SET enable_seqscan = off;
		  SELECT string_agg(id::text, ',') FROM
		  (SELECT id FROM s ORDER BY v <-> vec(3500) LIMIT 10) x}),
	sq(q{SET enable_seqscan = off;
		 SELECT string_agg(id::text, ',') FROM
		 (SELECT id FROM s ORDER BY v <-> vec(3500) LIMIT 10) x}),
	'the standby finds what the primary finds');

# ---- 2. a crash between the metapage record and the truncation -------------
setup('c');
sq(q{ALTER SYSTEM SET segvec.test_point = 'truncate-unlisted';
     ALTER SYSTEM SET segvec.test_point_action = 'panic';
     SELECT pg_reload_conf()});
my $crashed = 0;
my $n;
for $n (0 .. 11)
{
	my ($before, $after, $ret) = round('c', $n);
	if ($ret != 0)
	{
		$crashed = 1;
		last;
	}
}
ok($crashed, 'a VACUUM crashed between unlisting the tail and truncating it');
sq(q{ALTER SYSTEM RESET segvec.test_point;
     ALTER SYSTEM RESET segvec.test_point_action;
     SELECT pg_reload_conf()});
# the cut-off blocks are neither free nor reachable: VACUUM marks them
# deleted, then recycles them; inserts and compactions reuse them
sq('VACUUM c');
sq('SELECT txid_current()');
sq('VACUUM c');
is(verify('c_v'), $clean, 'ft.verify is clean after the crash');
my $unaccounted = sq(q{SELECT index_pages - segment_pages - mutable_pages
                         - keymap_run_pages - keymap_change_pages
                         - free_extent_pages - recyclable_pages
                       FROM ft.storage_stats('c_v')});
cmp_ok($unaccounted, '<=', 8,
	'the blocks the crash left are recyclable again');
for my $m (12 .. 14)
{
	round('c', $m);
}
is(sq(q{SELECT count(*) FROM c}), '300', 'inserts and deletes go on');
is(verify('c_v'), $clean, 'ft.verify is clean after more rounds');

$standby->stop;
$node->stop;
done_testing();

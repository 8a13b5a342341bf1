# 101_merge_unlogged.pl: a merge's output pages are written and changed
# without WAL until the merge logs them all at its end; an errored or
# crashed merge leaves them unreachable, never logged, maybe torn.  VACUUM
# takes such pages as free without an error, and marks them deleted in
# full page images, so that crash recovery and standbys get whole pages.
#
# A primary with data checksums, wal_consistency_checking = 'generic' (the
# standby and crash recovery compare each replayed page with the
# primary's), full_page_writes = off (else the first record on a page
# since a checkpoint carries its image anyway, and a never-logged page has
# LSN 0) and a streaming standby; background workers off:
#
# 1. A rewrite inside VACUUM errors after its pages are built, before they
#    are logged (test point "merge-linked"); the same VACUUM's cleanup
#    marks them deleted.  The standby replays it and holds the same pages
#    as the primary; a crash restart of the primary replays it too; then
#    VACUUM and the searches are clean.
# 2. VACUUM sets tombstones, and an ft.compact whose rewrite errors at the
#    same point leaves the merge's pages unmarked; a CHECKPOINT
#    (the pages reach the disk), the server stopped and one of those pages
#    overwritten in the middle (a torn write); after the restart VACUUM
#    succeeds (a WARNING names the page it read as zeros), and again; the
#    index is clean and the standby holds the same pages.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('unlogged_primary', q{
segvec.max_workers = 0
segvec.enable_test_hooks = on
segvec.ef_search = 200
wal_keep_size = '256MB'
wal_consistency_checking = 'generic'
full_page_writes = off
}, allows_streaming => 1, extra => ['--data-checksums']);
my $standby = segvec_standby($node, 'unlogged_standby');

sq("CREATE EXTENSION segvec;\nCREATE EXTENSION pageinspect;\n"
	  . vec_function(type => 'bigint', dims => 16)
	  . q{
CREATE TABLE t (id bigint PRIMARY KEY, v real[])
  WITH (autovacuum_enabled = off);
INSERT INTO t SELECT i, vec(i) FROM generate_series(1, 3000) i;
CREATE INDEX t_v ON t USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100000);
SELECT ft.compact('t_v');
-- the blocks of t_v that hold a page of a segment, not deleted, and the
-- md5 of each
CREATE FUNCTION seg_blocks() RETURNS SETOF text LANGUAGE sql AS $$
  SELECT b || ':' || md5(r.raw)
  FROM generate_series(1, pg_relation_size('t_v') / 8192 - 1) b,
    LATERAL (SELECT get_raw_page('t_v', b) AS raw) r,
    LATERAL (SELECT special FROM page_header(r.raw)) h
  WHERE h.special BETWEEN 24 AND 8176
    AND (get_byte(r.raw, h.special + 4) & 8) <> 0
    AND (get_byte(r.raw, h.special + 4) & 4) = 0 $$;
});

# every block of t_v: its number and its bytes' md5, without pd_checksum
# (a buffer holds the checksum it was last read from disk with, if any)
my $pages = q{SELECT string_agg(b || ':' ||
	md5(overlay(get_raw_page('t_v', b) PLACING '\x0000'::bytea FROM 9 FOR 2)),
	' ' ORDER BY b)
	FROM generate_series(0, pg_relation_size('t_v') / 8192 - 1) b};

# Wait until the standby replayed what the primary wrote (at most 60
# seconds; a standby that failed replay gives up at once)
sub caught_up
{
	my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
	for (1 .. 600)
	{
		my ($ret, $out) = $standby->psql('postgres',
			"SELECT pg_last_wal_replay_lsn() >= '$lsn'");
		return 1 if $ret == 0 && $out eq 't';
		return 0 if $ret != 0 && !-e $standby->data_dir . '/postmaster.pid';
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

sub same_pages
{
	my ($what) = @_;
	ok(caught_up(), "$what: the standby replays it");
	my ($ret, $out, $err) = $standby->psql('postgres', $pages);
	is($ret, 0, "$what: the standby reads every block of the index")
	  or diag $err;
	is($out, $node->safe_psql('postgres', $pages),
		"$what: the standby holds the primary's pages");
	return;
}

sub clean
{
	my ($what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', 'VACUUM t');
	is($ret, 0, "$what: VACUUM succeeds") or diag $err;
	is( sq(
			q{SELECT heap_rows = indexed_docs, missing_docs, duplicate_docs,
			   docs_in_two_segments, phantom_entries, missing_keymap_entries,
			   search_misses FROM ft.verify('t_v', false, 100000)}),
		't|0|0|0|0|0|0',
		"$what: ft.verify is clean");
	return;
}

# ---- 1. an errored rewrite inside VACUUM, marked by the same VACUUM ------
sq(q{DELETE FROM t WHERE id % 10 < 3});
my $before = sq(q{SELECT count(*) FROM seg_blocks()});
my ($ret, $out, $err) = $node->psql('postgres', q{
SET segvec.test_point = 'merge-linked';
VACUUM t});
is($ret, 0, 'VACUUM goes on when its rewrite errors');
like($err, qr/could not compact segvec index "t_v" during VACUUM/,
	'the rewrite errored at the test point');
is(sq(q{SELECT count(*) FROM seg_blocks()}),
	$before, 'VACUUM marked the errored merge\'s pages deleted');
same_pages('errored merge');

$node->stop('immediate');
ok($node->start(fail_ok => 1), 'crash recovery replays the marking');
accepting($node);
clean('after the crash');
is(sq(q{SELECT count(*) FROM t WHERE
	(SELECT i.id FROM t i ORDER BY i.v <-> t.v LIMIT 1) = t.id}),
	'2100', 'every row is found by its own vector');
same_pages('after the crash and VACUUM');

# ---- 2. a torn page of an errored merge ----------------------------------
# tombstones that VACUUM does not rewrite by themselves (the session's
# merge_deletes_pct), then ft.compact's rewrite errors: nothing marks the
# merge's pages
sq(q{DELETE FROM t WHERE id % 10 IN (3, 4, 5);
	 SET segvec.merge_deletes_pct = 100; VACUUM t});
my %old = map { $_ => 1 } split /\n/, sq(q{SELECT * FROM seg_blocks()});
($ret, $out, $err) = $node->psql('postgres', q{
SET segvec.test_point = 'merge-linked';
SELECT ft.compact('t_v')});
like($err, qr/test point "merge-linked"/, 'ft.compact\'s rewrite errored');
# the errored merge's pages: segment pages new or changed (its extent may
# be one the free-extent list held, whose blocks still look like a segment)
my @new = map { (split /:/)[0] }
  grep { !$old{$_} } split /\n/, sq(q{SELECT * FROM seg_blocks()});
ok(@new > 2, 'the errored merge left pages of its segment')
  or BAIL_OUT('no page of the errored merge to tear');
my $torn = $new[ int(@new / 2) ];
note "tearing block $torn of " . scalar(@new) . ' new pages';
my $file = $node->data_dir . '/'
  . sq(q{SELECT pg_relation_filepath('t_v')});
sq('CHECKPOINT');
$node->stop('fast');
open(my $fh, '+<', $file) or die "open $file: $!";
binmode $fh;
seek($fh, $torn * 8192 + 4096, 0) or die "seek: $!";
print $fh 'torn' x 64;
close($fh) or die "close: $!";
$node->start;

($ret, $out, $err) = $node->psql('postgres', 'VACUUM t');
is($ret, 0, 'VACUUM succeeds over the torn page') or diag $err;
like($err, qr/invalid page in block $torn of relation .*; zeroing out page/,
	'VACUUM warns of the page it read as zeros');
clean('after the torn page');
same_pages('after the torn page');
is(sq(q{SELECT count(*) FROM t WHERE
	(SELECT i.id FROM t i ORDER BY i.v <-> t.v LIMIT 1) = t.id}),
	'1200', 'every row is found by its own vector');

# the torn block is reused by inserts that take free pages
sq(q{INSERT INTO t SELECT i, vec(i) FROM generate_series(3001, 6000) i});
clean('after inserts');
same_pages('after inserts');

$node->stop;
$standby->stop;
done_testing();

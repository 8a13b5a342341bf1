# 005_keymap_crash_inflight.pl: a crash in the middle of a multi-row INSERT
# leaves ft.verify clean after restart.
#
# aminsert writes a doc and then, in a separate WAL record, its keymap
# entry.  When the WAL that survives a crash ends between the two, the
# aborted row's doc has no keymap entry.  That row is dead, so the index is
# not wrong (no phantom, no lost row), and ft.verify must not report it as
# a problem: it is garbage for VACUUM, like the doc itself.  Each round
# stops the server with stop('immediate') while a 400,000-row INSERT is
# running, on a fresh index; most runs hit the window at least once.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('km_inflight', q{
wal_level = replica
});
$node->safe_psql(
	'postgres', "CREATE EXTENSION segvec;\n"
		  . vec_function(type => 'bigint'));

# Each round on a fresh index: its keymap has no change pages yet, so the
# first change of each bucket is a full-page record, and a WAL end inside
# one of those is likely.
for my $round (1 .. 5)
{
	$node->safe_psql(
		'postgres', q{
DROP TABLE IF EXISTS items;
CREATE TABLE items (id bigint, embedding real[]);
INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(1, 500) g;
CREATE INDEX items_idx ON items USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 100000000);
});
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_until(qr/started\n/,
		"\\echo started\nINSERT INTO items SELECT g, vec(g, 16) FROM generate_series(1000000, 1400000) g;\n"
	);
	# crash while the INSERT runs, a little later in each round: wait for
	# the server to say it has been running that long (on its own clock,
	# so a slow machine only waits longer)
	$node->poll_query_until(
		'postgres', qq{
SELECT count(*) = 1 FROM pg_stat_activity
 WHERE state = 'active' AND query LIKE 'INSERT INTO items%'
   AND clock_timestamp() - query_start > interval '@{[1000 + 100 * $round]} ms'})
	  or die "the INSERT of round $round never ran long enough";
	$node->stop('immediate');
	eval { $bg->quit; };
	$node->start;

	my $v = $node->safe_psql('postgres',
		q{SELECT heap_rows, missing_docs, phantom_entries,
		  missing_keymap_entries, examples
		  FROM ft.verify('items_idx', false, 0)});
	note "round $round: heap_rows, missing_docs, phantom_entries, "
	  . "missing_keymap_entries, examples: $v";
	is($v, '500|0|0|0|{}', "round $round: ft.verify is clean after the crash");
	$node->safe_psql('postgres', 'VACUUM items');
	is( $node->safe_psql(
			'postgres',
			q{SELECT missing_keymap_entries FROM ft.verify('items_idx', false, 0)}
		),
		'0',
		"round $round: and after VACUUM");
}

$node->stop;
done_testing();

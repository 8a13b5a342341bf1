# 084_update_alias.pl: aliases (an UPDATE that keeps a row's id and vector
# appends an alias of the segment doc that holds the vector, not a copy)
# survive a crash and reach a standby.
#
# With background work off, on a primary and a streaming standby:
# - 1,000 rows in a graph segment; UPDATEs of another column (a btree on
#   it, so not HOT) of 600 rows, one of 200 rows rolled back, an UPDATE of
#   50 rows' vectors, one of 10 rows that assigns each vector its own value
#   (aliased after comparing floats); then stop('immediate') and restart;
# - wal_consistency_checking = 'generic': every server that replays the
#   aliases' and keymap changes' records (the standby, crash recovery)
#   checks the page it rebuilt against the primary's image, so the records
#   that SegvecLogAppendedItems writes without GenericXLog are checked too;
# - after the restart: the updated rows are indexed by aliases still
#   (ft.get), every row is found exactly once by its own vector at k = 1,
#   the old versions are invisible, ft.verify is clean; on the standby the
#   same searches give the same answer;
# - then VACUUM, compaction (aliases become docs of the new segment), a
#   second round of aliased UPDATEs, another crash, VACUUM and a compaction
#   that merges: clean after each step, on both servers.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('alias_primary', q{
segvec.max_workers = 0
segvec.ef_search = 200
segvec.exact_scan_factor = 128
# tombstones stay where VACUUM set them (no rewrite by their share)
segvec.merge_deletes_pct = 100
wal_keep_size = '256MB'
wal_consistency_checking = 'generic'
}, allows_streaming => 1);
my $standby = segvec_standby($node, 'alias_standby', qq{
segvec.ef_search = 200
segvec.exact_scan_factor = 128
});

sq("CREATE EXTENSION segvec;\n"
	  . vec_function(type => 'bigint', dims => 64, coef => [ 0.37, 1.3, 0.011 ])
	  . q{
CREATE TABLE t (id bigint PRIMARY KEY, v real[], note int)
  WITH (autovacuum_enabled = off);
CREATE INDEX t_note ON t (note);
INSERT INTO t SELECT i, vec(i), 0 FROM generate_series(1, 1000) i;
CREATE INDEX t_v ON t USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 1000000);
SELECT ft.compact('t_v');
});

# rows, rows found first by their own vector, rows found once among the 3
# nearest, and the sum of note (which the visible versions show)
my $check = q{
SELECT count(*),
       count(*) FILTER (WHERE (SELECT i.id FROM t i ORDER BY i.v <-> t.v
                               LIMIT 1) = t.id),
       count(*) FILTER (WHERE (SELECT count(*) FROM
                                 (SELECT i.id FROM t i ORDER BY i.v <-> t.v
                                  LIMIT 3) n WHERE n.id = t.id) = 1),
       sum(note)
FROM t};
my $kinds = q{
SELECT string_agg(k || ':' || n, ' ' ORDER BY k) FROM
  (SELECT regexp_replace(g.segment, ' [0-9]+$', '') AS k, count(*) AS n
   FROM t, ft.get('t_v', t.id::text) g GROUP BY 1) s};
my $verify = q{
SELECT heap_rows, missing_docs, duplicate_docs, docs_in_two_segments,
       phantom_entries, checksum_mismatches, missing_keymap_entries,
       search_misses
FROM ft.verify('t_v')};

sub check_both
{
	my ($what, $rows, $note) = @_;
	my $want = "$rows|$rows|$rows|$note";
	is(sq($check), $want, "$what: every row found once by its own vector");
	is(sq($verify), "$rows|0|0|0|0|0|0|0", "$what: ft.verify clean");
	$node->wait_for_catchup($standby, 'replay');
	is($standby->safe_psql('postgres', $check), $want,
		"$what: the same on the standby");
}

sq(q{
UPDATE t SET note = note + 1 WHERE id <= 600;
BEGIN; UPDATE t SET note = note + 5 WHERE id > 800; ROLLBACK;
UPDATE t SET v = vec(id + 5000) WHERE id > 950;
UPDATE t SET v = vec(id + 6000) WHERE id > 950;
UPDATE t SET v = v, note = note + 1 WHERE id BETWEEN 601 AND 610;
});
# the last UPDATE assigns each vector its own value: aliases (by floats)
is(sq($kinds), 'mutable:50 mutable (alias):610 segment:340',
	'610 rows indexed by aliases, 50 by copies');
check_both('after the UPDATEs', 1000, 610);

$node->stop('immediate');
$node->start;
is(sq($kinds), 'mutable:50 mutable (alias):610 segment:340',
	'after a crash: the aliases are there');
check_both('after a crash', 1000, 610);

sq('VACUUM t');
check_both('after VACUUM', 1000, 610);
is(sq(q{SELECT mutable_docs, tombstones FROM ft.index_stats('t_v')}),
	'660|660', 'VACUUM keeps the live aliases, tombstones the old versions');

sq(q{SELECT ft.compact('t_v')});
is(sq($kinds), 'segment:1000', 'compaction turns aliases into docs');
check_both('after compaction', 1000, 610);

# a second round: the docs are in segments again, so aliases again
sq(q{
UPDATE t SET note = note + 1 WHERE id % 4 <> 0;
BEGIN; UPDATE t SET note = note + 1; ROLLBACK;
});
is(sq($kinds), 'mutable (alias):750 segment:250', 'second round: aliases');
$node->stop('immediate');
$node->start;
check_both('after the second crash', 1000, 1360);
sq('VACUUM t');
check_both('after the second VACUUM', 1000, 1360);
is(sq(q{SELECT segments_merged > 0 FROM ft.compact('t_v')}), 't',
	'the compaction merges (segments mostly tombstones are rewritten)');
is(sq($kinds), 'segment:1000', 'after the merge: every row in a segment');
check_both('after the merge', 1000, 1360);

done_testing();

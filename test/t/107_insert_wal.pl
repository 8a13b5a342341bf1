# 107_insert_wal.pl: the WAL records of inserts rebuild the primary's
# pages exactly, on a standby and in crash recovery.
#
# An insert logs a doc's piece that fits on the tail page, with the doc's
# keymap change, in a generic record written without GenericXLog
# (SegvecLogAppendedItems), and a piece that starts a page in the record
# that adds the page.  With background work off, on a primary and a
# streaming standby, with wal_consistency_checking = 'generic' (a server
# that replays a record compares each page it rebuilt with the primary's
# image, and stops on a difference):
# - single-row inserts (one transaction each), a multi-row insert and a
#   rolled back one, into four indexes: an id key (24 dimensions), an id
#   key and 3,000 dimensions (each doc two pieces on consecutive pages), a
#   filter column and an id key (3,000 dimensions), no id key (3,000);
# - on the standby, then on the primary after stop('immediate') and a
#   restart (crash recovery replays the same records): every row is found
#   by its own vector at k = 1, and ft.verify is clean.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('insert_wal_primary', q{
segvec.max_workers = 0
wal_keep_size = '256MB'
wal_consistency_checking = 'generic'
}, allows_streaming => 1);
my $standby = segvec_standby($node, 'insert_wal_standby');

my %tables = (
	k24 => [ 24, '(v) INCLUDE (id)' ],
	k3000 => [ 3000, '(v) INCLUDE (id)' ],
	f3000 => [ 3000, '(v, grp) INCLUDE (id)' ],
	n3000 => [ 3000, '(v)' ],);

my $setup = "CREATE EXTENSION segvec;\n" . vec_function(type => 'bigint');
for my $t (sort keys %tables)
{
	my ($dims, $cols) = @{ $tables{$t} };
	$setup .= qq{
CREATE TABLE $t (id bigint PRIMARY KEY, v real[], grp int);
CREATE INDEX ${t}_v ON $t USING segvec $cols;
CREATE PROCEDURE ${t}_add(a bigint, b bigint) LANGUAGE plpgsql AS \$\$
BEGIN
	FOR i IN a .. b LOOP
		INSERT INTO $t VALUES (i, vec(i, $dims), i % 5);
		COMMIT;
	END LOOP;
END \$\$;
};
}
sq($setup);

for my $t (sort keys %tables)
{
	my $dims = $tables{$t}[0];
	sq(qq{
CALL ${t}_add(1, 40);
INSERT INTO $t SELECT i, vec(i, $dims), i % 5 FROM generate_series(41, 150) i;
BEGIN;
INSERT INTO $t SELECT i, vec(i, $dims), i % 5 FROM generate_series(151, 160) i;
ROLLBACK;
CALL ${t}_add(161, 170);
});
}

# rows, and rows the index finds first by their own vector
sub own_vectors
{
	my ($n, $t) = @_;
	return $n->safe_psql(
		'postgres', qq{
SET enable_seqscan = off;
SELECT count(*),
       count(*) FILTER (WHERE (SELECT i.id FROM $t i ORDER BY i.v <-> $t.v
                               LIMIT 1) = $t.id)
FROM $t});
}

my $verify = q{
SELECT heap_rows, missing_docs, duplicate_docs, phantom_entries,
       checksum_mismatches, missing_keymap_entries, search_misses
FROM ft.verify('%s')};

sub check
{
	my ($n, $what) = @_;
	for my $t (sort keys %tables)
	{
		is(own_vectors($n, $t), '160|160',
			"$what: $t: every row found by its own vector");
		next if $t eq 'n3000';
		is($n->safe_psql('postgres', sprintf($verify, "${t}_v")),
			'160|0|0|0|0|0|0', "$what: $t: ft.verify clean");
	}
}

$node->wait_for_catchup($standby, 'replay');
check($standby, 'standby');
check($node, 'primary');

$node->stop('immediate');
$node->start;
check($node, 'after crash recovery');

done_testing();

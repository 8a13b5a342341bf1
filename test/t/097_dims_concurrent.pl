# 097_dims_concurrent.pl: an index's dimension stands once any transaction
# that indexed a vector of it commits (SegvecSetDimensions).
#
# Session A sets the dimension of an empty index and stays open; session B
# indexes a vector of the same dimension and commits; A rolls back.  B's
# row is the index's only doc: the dimension must stand for it (it was
# reset when A rolled back, so a vector of another length was accepted and
# B's row vanished from index scans).  Then the reverse order of ends:
# both commit.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('dims_concurrent', q{
segvec.max_workers = 0
});

$node->safe_psql('postgres', q{
CREATE EXTENSION segvec;
CREATE TABLE c (id int PRIMARY KEY, e real[]);
CREATE INDEX c_idx ON c USING segvec (e) INCLUDE (id);
CREATE TABLE d (id int PRIMARY KEY, e real[]);
CREATE INDEX d_idx ON d USING segvec (e) INCLUDE (id);
});

my $index_ids = sub {
	my ($tbl, $q) = @_;
	return $node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SELECT string_agg(id::text, ',' ORDER BY id)
FROM (SELECT id FROM $tbl ORDER BY e <-> '$q' LIMIT 10) s});
};

# A sets it and stays open; B commits a row of that dimension; A aborts
my $a = $node->background_psql('postgres');
$a->query_safe('BEGIN');
$a->query_safe(q{INSERT INTO c VALUES (1, '{1,2,3}')});
$node->safe_psql('postgres', q{INSERT INTO c VALUES (2, '{3,2,1}')});
$a->query_safe('ROLLBACK');

is($node->safe_psql('postgres', q{SELECT dimensions FROM ft.info('c_idx')}),
	'3', 'the dimension stands for the committed row after the setter rolled back');
my ($ret, $out, $err) =
  $node->psql('postgres', q{INSERT INTO c VALUES (3, '{1,2}')});
like($err, qr/vector has 2 dimensions, expected 3/,
	'a vector of another length is refused');
is($index_ids->('c', '{3,2,1}'), '2', 'the committed row is found through the index');
is($node->safe_psql('postgres',
		q{SELECT missing_docs || '/' || phantom_entries FROM ft.verify('c_idx')}),
	'0/0', 'ft.verify is clean');

# both commit, the setter last
$a->query_safe('BEGIN');
$a->query_safe(q{INSERT INTO d VALUES (1, '{1,2}')});
$node->safe_psql('postgres', q{INSERT INTO d VALUES (2, '{2,1}')});
$a->query_safe('COMMIT');
$a->quit;
is($index_ids->('d', '{1,2}'), '1,2', 'both rows are found when both commit');
is($node->safe_psql('postgres', q{SELECT dimensions FROM ft.info('d_idx')}),
	'2', 'and the dimension stands');

$node->stop;
done_testing();

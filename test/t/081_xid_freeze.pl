# 081_xid_freeze.pl: the metapage's dimensions_xid never outlives pg_xact.
#
# An index whose dimension was set by a (committed) insert; the server is
# stopped, pg_resetwal -x moves the next xid far ahead, and VACUUM FREEZE of
# every database advances datfrozenxid so that pg_xact's old segment is
# truncated away.  Then a new session (a fresh relcache entry, which must
# not ask pg_xact about the first insert's xid: that fails with "could not
# access status of transaction") searches and inserts without error.  Two indexes:
# one whose metapage VACUUM froze, one that VACUUM's index cleanup did not
# reach (INDEX_CLEANUP OFF: its dimensions_xid is older than pg_xact's
# oldest, and counts as committed).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('xid_freeze', q{
segvec.max_workers = 0
});

sq(q{
CREATE EXTENSION segvec;
CREATE TABLE a (id int PRIMARY KEY, v real[]);
CREATE INDEX a_v ON a USING segvec (v) INCLUDE (id);
CREATE TABLE b (id int PRIMARY KEY, v real[]);
CREATE INDEX b_v ON b USING segvec (v) INCLUDE (id);
});
# the first vectors set the dimensions, in transactions of their own
sq(q{INSERT INTO a SELECT i, ARRAY[i, 1, 2]::real[] FROM generate_series(1, 50) i});
sq(q{INSERT INTO b SELECT i, ARRAY[i, 3, 4]::real[] FROM generate_series(1, 50) i});
sq('ALTER DATABASE template0 ALLOW_CONNECTIONS true');
$node->stop;

# far ahead: a new pg_xact segment for the new xids (as the pg_resetwal
# documentation says), the old one stays until VACUUM truncates it
my $xid = 0x20000000;
command_ok([ 'pg_resetwal', '-x', $xid, $node->data_dir ], 'pg_resetwal -x');
my $seg = sprintf('%s/pg_xact/%04X', $node->data_dir, $xid / (32768 * 32));
open(my $fh, '>', $seg) or die "could not create $seg: $!";
binmode $fh;
print $fh "\0" x (8192 * 32);
close $fh;
$node->start;

# every database frozen; in postgres without index cleanup first (so b's
# metapage keeps the old xid), then a's table with it (which freezes a's)
sq('VACUUM FREEZE', 'template0');
sq('VACUUM FREEZE', 'template1');
sq('VACUUM (FREEZE, INDEX_CLEANUP OFF)');
sq('VACUUM FREEZE a');
ok(!-e $node->data_dir . '/pg_xact/0000',
	"pg_xact's old segment is truncated away");

# a new session: fresh relcache entries for both indexes
is( sq(q{
SET enable_seqscan = off;
SELECT (SELECT id FROM a ORDER BY v <-> '{7,1,2}' LIMIT 1),
       (SELECT id FROM b ORDER BY v <-> '{9,3,4}' LIMIT 1)}),
	'7|9',
	'a new session searches both indexes');
sq(q{INSERT INTO a VALUES (51, '{51,1,2}'); INSERT INTO b VALUES (51, '{51,3,4}')});
is( sq(q{
SET enable_seqscan = off;
SELECT (SELECT id FROM a ORDER BY v <-> '{51,1,2}' LIMIT 1),
       (SELECT id FROM b ORDER BY v <-> '{51,3,4}' LIMIT 1)}),
	'51|51',
	'and inserts into them');
my ($ret, $out, $err) =
  $node->psql('postgres', q{INSERT INTO a VALUES (52, '{1,2}')});
like($err, qr/dimension/, 'the dimension still holds: a shorter vector is refused');
is(sq(q{SELECT heap_rows, missing_docs FROM ft.verify('a_v')}),
	'51|0', 'ft.verify is clean');

$node->stop;
done_testing();

# 089_free_xid.pl: an extent that an install frees is not reused while a
# scan that read the manifest before the install is still reading it.
#
# The install stamps what it frees with the next transaction id, and an
# extent becomes reusable once that id is older than every snapshot's
# xmin.  That holds only if the id is read under the metapage lock that
# the install takes: a scan that read the old manifest did so before the
# lock, so its snapshot is no newer than the stamp.  Read before the lock,
# a snapshot taken in between is newer than the stamp, and the scan's
# segment can be handed to the next compaction while the scan still walks
# it.  Here a merge stops just before it locks the metapage; meanwhile
# transactions commit and a cursor starts its scan on the old manifest; the
# merge installs, a new compaction allocates an extent, and the cursor
# must still return every row exactly once.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('main', q{
segvec.max_workers = 0
segvec.enable_test_hooks = on
});

sq("CREATE EXTENSION segvec;\n" . vec_function(type => 'bigint', dims => 16)
	  . q{
CREATE TABLE c (id bigint PRIMARY KEY, v real[]) WITH (autovacuum_enabled = off);
CREATE INDEX c_v ON c USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 100000);
INSERT INTO c SELECT i, vec(i) FROM generate_series(1, 2000) i;
SELECT ft.compact('c_v');
INSERT INTO c SELECT i, vec(i) FROM generate_series(2001, 4000) i;
});

# the merge of the two segments stops before it locks the metapage
my $merge = hold_at($node, 'install-dropping-segments',
	q{SELECT docs_compacted FROM ft.compact('c_v')});

# transactions commit, then a scan reads the manifest (both segments)
sq('SELECT txid_current()') for 1 .. 3;
my $scan = $node->background_psql('postgres');
$scan->query_safe(q{
SET enable_seqscan = off;
SET segvec.max_scan_tuples = 100000;
BEGIN;
DECLARE cur CURSOR FOR SELECT id FROM c ORDER BY v <-> vec(1) LIMIT 100000;
});
my $first = $scan->query_safe('FETCH 10 FROM cur');
is(scalar(split /\n/, $first), 10, 'the cursor returns its first rows');

# the merge installs; a compaction allocates a new segment
$merge->release;
is(sq(q{SELECT segment_merges FROM ft.storage_stats('c_v')}), '1',
	'the two segments were merged');
sq(q{
INSERT INTO c SELECT i, vec(i) FROM generate_series(4001, 6000) i;
SELECT ft.compact('c_v');
});

# the cursor goes on through the merged-away segments
my $rest = $scan->query_safe('FETCH ALL FROM cur');
my @ids = (split(/\n/, $first), split(/\n/, $rest));
my %seen;
$seen{$_}++ for @ids;
my @bad = grep { !/^\d+$/ || $_ < 1 || $_ > 4000 } @ids;
is(scalar(@ids), 4000, 'the cursor returns 4000 rows');
is(scalar(keys %seen), 4000, 'each of them once');
is(scalar(@bad), 0, 'all of them rows it could see');
$scan->query_safe('COMMIT');
is(verify_problems('c_v'), '', 'ft.verify is clean');

$scan->quit;
$node->stop;
done_testing();

# 063_keymap_standby.pl: a keymap look-up on a hot standby (feedback off)
# whose change chain the primary folds, frees and reuses for a new chain of
# the same bucket returns the right row or is cancelled (SQLSTATE 40001),
# never another chain's items.
#
# The look-up stops after it has read the keymap directory (test point
# keymap-dir-read); the primary takes a keymap snapshot (it folds every
# change chain into a run and frees the chains' pages), lets the horizon
# pass, and inserts a few rows (they fit on the mutable segment's page)
# with new ids, whose changes start new chains on the freed pages.  The look-up then follows the old directory's chain
# head into a page of a new chain: each change page names its chain (head
# block and epoch), so the look-up sees that the page is not its chain's.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $primary = segvec_node('primary', q{
wal_keep_size = '1GB'
segvec.max_workers = 0
}, allows_streaming => 1);
my $standby = segvec_standby($primary, 'standby', q{
hot_standby_feedback = off
});

$primary->safe_psql(
	'postgres', "CREATE EXTENSION segvec;\n" . vec_function(dims => 8) . q{
CREATE TABLE k (id int PRIMARY KEY, embedding real[])
	WITH (autovacuum_enabled = off);
CREATE INDEX k_idx ON k USING segvec (embedding) INCLUDE (id)
	WITH (compact_threshold = 100000);
INSERT INTO k SELECT g, vec(g) FROM generate_series(1, 400) g;
SELECT ft.compact('k_idx');
-- changes in every bucket's chain, all on one new mutable page
INSERT INTO k SELECT g, vec(g) FROM generate_series(401, 430) g;
});
$primary->wait_for_catchup($standby);

my $q = q{SELECT 'row:' || id || ' ' || vector::text FROM ft.get('k_idx', '405')};
my $want = $primary->safe_psql('postgres', $q);
like($want, qr/^row:405 /, 'the primary finds id 405 in the keymap');
is($standby->safe_psql('postgres', $q), $want,
	'before the churn the standby finds it too');

# the standby look-up waits after reading the directory
my $get = hold_at($standby, 'keymap-dir-read', $q,
	setup => "\\set VERBOSITY verbose\nSET segvec.enable_test_hooks = on;\n");

# the primary folds the chains, frees their pages and reuses them
$primary->safe_psql('postgres', q{SELECT ft.snapshot('k_idx')});
$primary->safe_psql('postgres', q{SELECT txid_current()}) for 1 .. 3;
$primary->safe_psql('postgres',
	q{INSERT INTO k SELECT g, vec(g) FROM generate_series(431, 460) g});
$primary->wait_for_catchup($standby);

my ($get_out, $get_err) = $get->release;
my $got = $get_out . "\n" . $get_err;
note "held standby look-up: $got";
my ($row) = $got =~ /^(row:.*)$/m;
my $cancelled = $got =~ /40001: canceling statement due to conflict with recovery/
  && $got =~ /HINT:.*hot_standby_feedback/;
ok((defined $row && $row eq $want) || $cancelled,
	'the held look-up returned the right row or was cancelled with 40001');
ok(!defined $row || $row eq $want, 'it never returned a wrong row');
ok($cancelled, 'here (its chain head reused by another chain) it was cancelled');
unlike($got, qr/XX001|XX002|index corrupted/, 'no corruption reported');

# afterwards the standby answers like the primary
is($standby->safe_psql('postgres', $q), $want, 'the standby agrees after the churn');

done_testing();

# 006_keymap_verify_concurrent.pl: ft.verify on an index that takes
# inserts meanwhile reports no problem that is not there, and
# ft.verify(repair => true) does not damage it.
#
# ft.verify collects the index's docs and keymap first and takes the
# snapshot for its heap scan afterwards, so rows committed in between look
# unindexed (missing_docs) and their keymap entries look like phantoms; with
# repair => true it then drops those rows' keymap entries and indexes them a
# second time.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('km_verify');
$node->safe_psql(
	'postgres', "CREATE EXTENSION segvec;\n"
		  . vec_function(type => 'bigint')
		  . q{
CREATE TABLE items (id bigint PRIMARY KEY, embedding real[]);
INSERT INTO items SELECT g, vec(g, 16) FROM generate_series(1, 2000) g;
CREATE INDEX items_idx ON items USING segvec (embedding) INCLUDE (id);
});

# two sessions insert one row per transaction, from files
my $dir = $PostgreSQL::Test::Utils::tmp_check;
my @bg;
for my $s (0 .. 1)
{
	my $sql = '';
	$sql .= "INSERT INTO items VALUES ($_, vec($_, 16));\n"
	  for map { 100000 + $s * 100000 + $_ } 1 .. 20000;
	PostgreSQL::Test::Utils::append_to_file("$dir/verify_ins_$s.sql", $sql);
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_until(qr/started\n/,
		"\\echo started\n\\o $dir/verify_ins_$s.out\n\\i $dir/verify_ins_$s.sql\n");
	push @bg, $bg;
}

my ($false_missing, $false_phantoms) = (0, 0);
for my $i (1 .. 10)
{
	my $v = $node->safe_psql('postgres',
		q{SELECT missing_docs, phantom_entries, duplicate_docs,
		  missing_keymap_entries FROM ft.verify('items_idx', false, 0)});
	my ($m, $p) = split /\|/, $v;
	$false_missing += $m;
	$false_phantoms += $p;
	note "read-only ft.verify $i: missing, phantoms, duplicates, missing entries: $v";
}
is($false_missing, 0, 'ft.verify under inserts reports no missing doc');
is($false_phantoms, 0, 'ft.verify under inserts reports no phantom entry');

my $repaired = 0;
for my $i (1 .. 5)
{
	my $v = $node->safe_psql('postgres',
		q{SELECT repaired FROM ft.verify('items_idx', true, 0)});
	$repaired += $v;
	note "ft.verify(repair => true) $i: repaired $v";
}
is($repaired, 0, 'ft.verify(repair => true) under inserts repairs nothing');

$node->stop('fast');
eval { $_->quit; } for @bg;
$node->start;

# after the inserts: each row indexed once, each keymap entry in place
my $v = $node->safe_psql('postgres',
	q{SELECT missing_docs, duplicate_docs, phantom_entries,
	  missing_keymap_entries, examples FROM ft.verify('items_idx', false, 0)});
note "ft.verify at rest: $v";
is($v, '0|0|0|0|{}', 'the repairs left no duplicate doc or lost keymap entry');

$node->stop;
done_testing();

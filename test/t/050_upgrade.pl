# 050_upgrade.pl: upgrades from the previous release, and indexes in a
# format this build cannot read.
#
# - The previous release is built from git history (test/run-tests.sh
#   archives it and passes its tree in SEGVEC_PREV_SRC) and installed into
#   a private copy of the PostgreSQL installation under this test's temp
#   directory (binaries copied, everything else linked), never into the
#   system one.  A cluster running it creates the extension and an index
#   with graph segments, mutable docs and deletions.
# - The same data directory then runs on the system installation, which
#   holds the current build (if the on-disk format changed since, the old
#   index first asks for REINDEX INDEX, and is reindexed): the old index answers the same queries with
#   the same rows before and after ALTER EXTENSION segvec UPDATE, takes
#   inserts and a compaction, and ft.verify is clean.  The updated
#   extension has the same objects (and function, view and table
#   definitions) as a fresh CREATE EXTENSION segvec of the current version,
#   so a change to src/sql without its update script fails here.
# - An index whose metapage carries a format version this build does not
#   read (newer or older, written into the file while the server is down)
#   gives an error naming REINDEX INDEX, for queries and inserts alike, and
#   REINDEX makes it usable again.
#
# Without SEGVEC_PREV_SRC (no git history), or on a PostgreSQL version the
# previous release does not build against, the first two parts are skipped.
use strict;
use warnings;

use File::Basename;
use File::Copy;
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $prev_src = $ENV{SEGVEC_PREV_SRC} // '';
my $have_prev = $prev_src ne '' && -e "$prev_src/segvec.control";
# A release without src/compat.h builds against PostgreSQL 15 only: on
# another version there is no installation of it to upgrade from.
my ($server_major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
my $prev_builds_here =
  !$have_prev || -e "$prev_src/src/compat.h" || ($server_major // 0) == 15;
my $tmp = PostgreSQL::Test::Utils::tempdir();

# SEGVEC_VERSION of the tree in dir (either layout)
sub format_version
{
	my ($dir) = @_;
	for my $f ("$dir/src/store/format.h", "$dir/src/segvec.h")
	{
		next unless -e $f;
		my ($v) = slurp_file($f) =~ /#define\s+SEGVEC_VERSION\s+(\d+)/;
		return $v if defined $v;
	}
	die "no SEGVEC_VERSION under $dir";
}

sub pg_config
{
	my ($opt) = @_;
	my $v = `pg_config $opt`;
	die "pg_config $opt failed" if $?;
	chomp $v;
	return $v;
}

# A private installation: the system one with the previous release's
# segvec in place of the current one.  Returns its install_path.
sub private_install
{
	my ($src) = @_;
	my $root = "$tmp/inst";
	my ($bindir, $pkglibdir, $sharedir) =
	  map { pg_config($_) } qw(--bindir --pkglibdir --sharedir);

	# PostgreSQL finds lib and share relative to its binary, so the
	# binaries are copied (a symlink would be resolved to the system one)
	make_path("$root$bindir", "$root$pkglibdir", "$root$sharedir/extension");
	system_or_bail('cp', '-a', glob("$bindir/*"), "$root$bindir/");
	for my $f (glob("$pkglibdir/*"))
	{
		next if basename($f) =~ /^segvec/;
		symlink($f, "$root$pkglibdir/" . basename($f)) or die "symlink: $!";
	}
	for my $f (glob("$sharedir/*"))
	{
		next if basename($f) eq 'extension';
		symlink($f, "$root$sharedir/" . basename($f)) or die "symlink: $!";
	}
	for my $f (glob("$sharedir/extension/*"))
	{
		next if basename($f) =~ /^segvec/;
		symlink($f, "$root$sharedir/extension/" . basename($f))
		  or die "symlink: $!";
	}
	copy("$src/segvec.so", "$root$pkglibdir/segvec.so") or die "copy: $!";
	for my $f ("$src/segvec.control", glob("$src/sql/segvec--*.sql"))
	{
		copy($f, "$root$sharedir/extension/") or die "copy $f: $!";
	}
	return dirname("$root$bindir");
}

my $schema = q{
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
CREATE FUNCTION vec(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS $$
  SELECT array_agg((sin(i * 0.37 + j * 1.1) + cos(i * 0.011 * j))::real
                   ORDER BY j)
  FROM generate_series(1, 16) j $$;
INSERT INTO items SELECT i, vec(i) FROM generate_series(1, 600) i;
CREATE INDEX items_idx ON items USING segvec (embedding) INCLUDE (id)
  WITH (compact_threshold = 100);
};

# top 10 of five queries through the index, as one string
my $knn = q{SET enable_seqscan = off; SET segvec.ef_search = 400;
SELECT string_agg(ids, ' ' ORDER BY q) FROM (
  SELECT q, (SELECT string_agg(id::text, ',' ORDER BY rn) FROM (
      SELECT id, row_number() OVER () AS rn FROM (
        SELECT id FROM items ORDER BY embedding <-> vec(q * 1000) LIMIT 10) s) t)
    AS ids
  FROM generate_series(1, 5) q) r};

# the same, exact (sequential scan, ties broken by id)
my $exact = q{SET enable_indexscan = off;
SELECT string_agg(ids, ' ' ORDER BY q) FROM (
  SELECT q, (SELECT string_agg(id::text, ',' ORDER BY rn) FROM (
      SELECT id, row_number() OVER () AS rn FROM (
        SELECT id FROM items ORDER BY embedding <-> vec(q * 1000), id
        LIMIT 10) s) t) AS ids
  FROM generate_series(1, 5) q) r};

# what an extension consists of: every member object, its comment, and the
# definition of each function, view and table column
my $members = q{
WITH m AS (
  SELECT classid, objid, objsubid FROM pg_depend
  WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'segvec'))
SELECT string_agg(d, E'\n' ORDER BY d) FROM (
  SELECT pg_describe_object(classid, objid, objsubid) ||
    CASE WHEN classid = 'pg_proc'::regclass AND
              (SELECT prokind FROM pg_proc WHERE oid = objid) <> 'a'
           THEN ' ' || md5(pg_get_functiondef(objid))
         WHEN classid = 'pg_class'::regclass
           THEN ' ' || (SELECT relkind::text FROM pg_class WHERE oid = objid) ||
             CASE WHEN (SELECT relkind FROM pg_class WHERE oid = objid) = 'v'
                  THEN ' ' || md5(pg_get_viewdef(objid)) ELSE '' END || ' ' ||
             coalesce((SELECT string_agg(attname || ':' ||
                         format_type(atttypid, atttypmod), ',' ORDER BY attnum)
                       FROM pg_attribute WHERE attrelid = objid
                         AND attnum > 0 AND NOT attisdropped), '')
         WHEN classid = 'pg_opclass'::regclass
           THEN ' ' || (SELECT opcintype::regtype::text || ' ' ||
               coalesce((SELECT string_agg(pg_describe_object(
                   'pg_amproc'::regclass, p.oid, 0), ', ' ORDER BY p.amprocnum)
                 FROM pg_amproc p WHERE p.amprocfamily = c.opcfamily), '')
             FROM pg_opclass c WHERE c.oid = objid)
         ELSE '' END ||
    coalesce(' -- ' || (SELECT description FROM pg_description
      WHERE objoid = objid AND classoid = classid AND objsubid = m.objsubid),
      '') AS d
  FROM m) s};

my $node;

SKIP:
{
	skip 'no previous release tree (SEGVEC_PREV_SRC is set by test/run-tests.sh from git history)', 13
	  unless $have_prev;
	skip "the previous release builds against PostgreSQL 15 only, this is $server_major", 13
	  unless $prev_builds_here;

	# --- the previous release ------------------------------------------------
	my $src = "$tmp/prev-src";
	system_or_bail('cp', '-a', "$prev_src/.", $src);
	system_or_bail('make', '-C', $src, '-s', '-j2', 'OPTFLAGS=');
	my ($prev_version) =
	  slurp_file("$src/segvec.control") =~ /default_version = '([^']+)'/;
	my ($cur_version) =
	  slurp_file(pg_config('--sharedir') . '/extension/segvec.control') =~
	  /default_version = '([^']+)'/;
	note "upgrading from $prev_version to $cur_version";
	my $prev_format = format_version($src);
	my $cur_format = format_version('.');
	note "on-disk format $prev_format to $cur_format";
	isnt($prev_version, $cur_version, 'the previous release has another version');

	$node = segvec_node(
		'upgrade', q{
segvec.max_workers = 0
}, install_path => private_install($src));
	$node->safe_psql('postgres', 'CREATE EXTENSION segvec');
	is($node->safe_psql('postgres',
			q{SELECT extversion FROM pg_extension WHERE extname = 'segvec'}),
		$prev_version, 'the previous release is installed');
	$node->safe_psql('postgres', $schema);
	$node->safe_psql('postgres', q{
INSERT INTO items SELECT i, vec(i) FROM generate_series(601, 700) i;
DELETE FROM items WHERE id % 7 = 0;
});
	my $info = $node->safe_psql('postgres',
		q{SELECT num_segments > 0 AND mutable_docs > 0 FROM ft.info('items_idx')});
	is($info, 't', 'the old index has graph segments and mutable docs');
	my $before = $node->safe_psql('postgres', $knn);
	is($before, $node->safe_psql('postgres', $exact),
		'the previous release answers exactly');
	$node->stop;

	# --- the current build, on the same data directory -----------------------
	# the node's commands and server now come from the system installation
	delete $node->{_install_path};
	$node->start;
	if ($prev_format != $cur_format)
	{
		# the format changed: the old index asks for a REINDEX, and then
		# answers as before
		my ($r, $o, $e) = $node->psql('postgres', $knn);
		like($e,
			qr/cannot read index "items_idx": it was built by an older segvec.*REINDEX INDEX public\.items_idx/s,
			'a changed on-disk format: the old index asks for REINDEX');
		$node->safe_psql('postgres', 'REINDEX INDEX public.items_idx');
	}
	else
	{
		pass('the on-disk format is the same: no REINDEX needed');
	}
	is($node->safe_psql('postgres', $knn), $before,
		'the current build reads the old index: same rows before the update');
	$node->safe_psql('postgres', 'ALTER EXTENSION segvec UPDATE');
	is($node->safe_psql('postgres',
			q{SELECT extversion FROM pg_extension WHERE extname = 'segvec'}),
		$cur_version, 'ALTER EXTENSION segvec UPDATE reached the current version');
	is($node->safe_psql('postgres', $knn), $before, 'same rows after the update');
	is($node->safe_psql('postgres',
			q{SELECT segvec_kernel() IN ('scalar', 'avx2', 'avx512')}),
		't', 'a function of the new version works');

	$node->safe_psql('postgres', q{
INSERT INTO items SELECT i, vec(i) FROM generate_series(701, 800) i;
SELECT ft.compact('items_idx');
});
	is($node->safe_psql('postgres', $knn),
		$node->safe_psql('postgres', $exact),
		'after inserts and a compaction the index still answers exactly');
	is( $node->safe_psql('postgres',
			q{SELECT missing_docs + duplicate_docs + docs_in_two_segments +
                phantom_entries + checksum_mismatches + search_misses
         FROM ft.verify('items_idx')}),
		'0', 'ft.verify is clean');

	# the updated extension is the one a fresh installation makes
	$node->safe_psql('postgres', 'CREATE DATABASE fresh');
	$node->safe_psql('fresh', 'CREATE EXTENSION segvec');
	my $updated = $node->safe_psql('postgres', $members);
	my $fresh = $node->safe_psql('fresh', $members);
	cmp_ok(length($fresh), '>', 1000, 'the member list is not empty');
	ok($updated eq $fresh,
		'the updated extension has the objects of a fresh installation')
	  or diag "only after the update:\n"
	  . join("\n", grep { my $l = $_; !grep { $_ eq $l } split /\n/, $fresh }
		  split /\n/, $updated)
	  . "\nonly in the fresh installation:\n"
	  . join("\n", grep { my $l = $_; !grep { $_ eq $l } split /\n/, $updated }
		  split /\n/, $fresh);
	$node->safe_psql('postgres', 'DROP TABLE items; DROP FUNCTION vec(int)');
}

# --- an index in a format this build does not read ---------------------------
if (!defined $node)
{
	$node = segvec_node('upgrade', q{
segvec.max_workers = 0
});
	$node->safe_psql('postgres', 'CREATE EXTENSION segvec');
}
$node->safe_psql('postgres', $schema);
my $exact_answer = $node->safe_psql('postgres', $exact);
my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('items_idx')});

# write a format version into the metapage: magic and version are the first
# two uint32 of the page contents, after the 24-byte page header.  With data
# checksums (initdb's default from PostgreSQL 18 on) pg_checksums then
# writes the page's checksum again, as the build that wrote that format
# would have.
my $checksums =
  $node->safe_psql('postgres', 'SHOW data_checksums') eq 'on';
sub set_format_version
{
	my ($version) = @_;
	$node->stop;
	if ($checksums)
	{
		system_or_bail('pg_checksums', '--disable', '-D', $node->data_dir);
	}
	open(my $fh, '+<:raw', $file) or die "open $file: $!";
	seek($fh, 24, 0);
	read($fh, my $buf, 8) == 8 or die "read $file: $!";
	my ($magic, $old) = unpack('L<L<', $buf);
	die sprintf('unexpected magic %x', $magic) unless $magic == 0x53475643;
	seek($fh, 28, 0);
	print $fh pack('L<', $version);
	close($fh);
	if ($checksums)
	{
		system_or_bail('pg_checksums', '--enable', '-D', $node->data_dir);
	}
	$node->start;
	return $old;
}

my $current = set_format_version(99);
my ($ret, $out, $err) = $node->psql('postgres', $knn);
like($err,
	qr/ERROR:  cannot read index "items_idx": it was built by a newer segvec.*DETAIL:  The index has segvec format version 99; this build of segvec reads version $current\..*HINT:  Install the newer segvec again, or rebuild the index with REINDEX INDEX public\.items_idx\./s,
	'a newer format: a query says so, and names the REINDEX');
($ret, $out, $err) =
  $node->psql('postgres', 'INSERT INTO items VALUES (100000, vec(100000))');
like($err, qr/it was built by a newer segvec.*HINT:  .*REINDEX INDEX public\.items_idx/s,
	'and so does an insert');

set_format_version(0);
($ret, $out, $err) = $node->psql('postgres', $knn);
like($err,
	qr/ERROR:  cannot read index "items_idx": it was built by an older segvec.*HINT:  Rebuild the index with REINDEX INDEX public\.items_idx\./s,
	'an older format: the error names the REINDEX');
is($node->safe_psql('postgres', 'SELECT count(*) FROM items'), '600',
	'the table itself is readable');

$node->safe_psql('postgres', 'REINDEX INDEX public.items_idx');
is($node->safe_psql('postgres', $knn), $exact_answer,
	'after REINDEX the index answers exactly');
$node->safe_psql('postgres', 'INSERT INTO items VALUES (100000, vec(100000))');
is($node->safe_psql('postgres',
		q{SET enable_seqscan = off; SELECT id FROM items
          ORDER BY embedding <-> vec(100000) LIMIT 1}),
	'100000', 'and takes inserts');

$node->stop;
done_testing();

# SegvecTest.pm: the helpers segvec's TAP tests share (perldoc test/t/SegvecTest.pm).

=pod

=head1 NAME

SegvecTest - the helpers segvec's TAP tests (test/t/*.pl) share

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use SegvecTest;

  # a cluster with segvec preloaded and autovacuum off, started; sq and
  # the waits below run on it
  my $node = segvec_node('jobs', q{
  segvec.naptime = 1
  });
  sq('CREATE EXTENSION segvec');
  set_conf('segvec.max_workers', '0');
  wait_for('SELECT count(*) = 0 FROM ft.jobs') or die 'jobs never finished';

=head1 DESCRIPTION

The functions below are exported by default.  The test file finds this
module through C<use lib $FindBin::RealBin> (the test file's own
directory), so that the tests run the same from test/run-tests.sh's copy
of the tree, from C<make installcheck> and from prove.

C<sq>, C<wait_for>, C<set_conf> and C<jstat> run on the I<default node>:
the node the last C<segvec_node> call made (C<segvec_standby> does not
change it).

=cut

package SegvecTest;

use strict;
use warnings;

use Exporter 'import';
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(
  segvec_node
  segvec_standby
  sq
  wait_for
  set_conf
  jstat
  accepting
  fmnist_files
  vec_function
  stream_table
  verify
  verify_problems
  hold_at
);

=pod

=head1 VARIABLES

=over

=item $SegvecTest::wait_secs

How long C<wait_for> waits when it is given no time: PostgreSQL's TAP
timeout (C<$PostgreSQL::Test::Utils::timeout_default>, 180 seconds unless
C<PG_TEST_TIMEOUT_DEFAULT> says otherwise), so that a busy machine does not
fail a wait for a state that comes late.

=item $SegvecTest::poll_usecs

How long C<wait_for> sleeps between two tries: 100,000 microseconds.

=back

=cut

our $wait_secs = $PostgreSQL::Test::Utils::timeout_default;
our $poll_usecs = 100_000;

# the default node of sq, wait_for, set_conf and jstat
my $default_node;

=pod

=head1 FUNCTIONS

=over

=item segvec_node($name, $conf, %init)

Makes a cluster named C<$name> (C<< PostgreSQL::Test::Cluster->new >>,
with C<%init>'s C<install_path> when it has one: the installation to run),
initializes it (the rest of C<%init> goes to C<init>, e.g.
C<< allows_streaming => 1 >>),
appends to its postgresql.conf C<shared_preload_libraries = 'segvec'>,
C<autovacuum = off>, C<segvec.settle_ratio = 0> (no settling of quiet
indexes: like autovacuum, it would change the layouts most tests assert
after their jobs drained; the tests of settling turn it on) and then the
lines of C<$conf> (optional; a later line wins over an earlier one), and
starts it.  Returns the node, which becomes the default node.

=cut

sub segvec_node
{
	my ($name, $conf, %init) = @_;
	my $install_path = delete $init{install_path};
	my $node = PostgreSQL::Test::Cluster->new($name,
		defined $install_path ? (install_path => $install_path) : ());
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'segvec'\nautovacuum = off\n"
		  . "segvec.settle_ratio = 0\n"
		  . ($conf // ''));
	$node->start;
	$default_node = $node;
	return $node;
}

=pod

=item segvec_standby($primary, $name, $conf)

Takes a base backup of C<$primary> (named C<b>), makes a streaming standby
named C<$name> from it (it inherits the primary's postgresql.conf), appends
the lines of C<$conf> (optional) and starts it.  Returns the standby; the
default node stays what it was.

=cut

sub segvec_standby
{
	my ($primary, $name, $conf) = @_;
	$primary->backup('b');
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->append_conf('postgresql.conf', $conf) if defined $conf;
	$standby->start;
	return $standby;
}

=pod

=item sq($sql, $db)

Runs C<$sql> with C<safe_psql> on the default node, in database C<$db>
(default C<postgres>).  Returns its output (rows one a line, columns
separated by C<|>); dies when the SQL fails.

=cut

sub sq
{
	my ($sql, $db) = @_;
	die 'SegvecTest::sq: no default node (make one with segvec_node)'
	  unless defined $default_node;
	return $default_node->safe_psql($db // 'postgres', $sql);
}

=pod

=item wait_for($sql, $secs)

Runs C<$sql> (C<sq>) until it returns C<t>, for at most C<$secs> seconds
(default C<$SegvecTest::wait_secs>).  Returns 1 when it did, 0 when the
time ran out.

=cut

sub wait_for
{
	my ($sql, $secs) = @_;
	my $deadline = time() + ($secs // $wait_secs);
	while (time() < $deadline)
	{
		return 1 if sq($sql) eq 't';
		usleep($poll_usecs);
	}
	return 0;
}

=pod

=item set_conf($name, $value)

Sets the GUC C<$name> to C<$value> cluster-wide on the default node (ALTER
SYSTEM, pg_reload_conf) and waits until new backends (and so new workers)
see it; the launcher and running workers get it through SIGHUP.  Returns
nothing; dies when the setting never shows.

=cut

sub set_conf
{
	my ($name, $value) = @_;
	sq("ALTER SYSTEM SET $name = '$value'");
	sq('SELECT pg_reload_conf()');
	wait_for("SELECT setting = '$value' FROM pg_settings WHERE name = '$name'")
	  or die "$name never became $value";
	return;
}

=pod

=item jstat($kind, $col)

Returns column C<$col> (an SQL expression) of C<ft.job_stats()>'s row for
job kind C<$kind> on the default node.

=cut

sub jstat
{
	my ($kind, $col) = @_;
	return sq("SELECT $col FROM ft.job_stats() WHERE kind = '$kind'");
}

=pod

=item accepting($node)

Waits, for at most 300 seconds, until C<$node> accepts connections again
after a crash restart.  Returns 1 when it does, 0 when the time ran out.

It asks pg_isready: poll_query_until feeds psql its query on stdin, and
while the server still refuses connections psql may exit before reading
it, so that the write dies of SIGPIPE ("ack Broken pipe") and ends the
test.

=cut

sub accepting
{
	my ($n) = @_;
	for (1 .. 3000)
	{
		return 1
		  if system('pg_isready', '-q', '-h', $n->host, '-p', $n->port) == 0;
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

=pod

=item fmnist_files($train, $test)

Decodes the first C<$train> Fashion-MNIST training images and the first
C<$test> test images with test/fmnist.py into F<train.txt> and F<test.txt>
(COPY text format: id, then the vector) of a new temporary directory.
Returns that directory; bails out when fmnist.py fails.

=cut

sub fmnist_files
{
	my ($train, $test) = @_;
	my $fmnist = dirname(__FILE__) . '/../fmnist.py';
	my $tmp = PostgreSQL::Test::Utils::tempdir;
	for my $set ([ 'train', $train ], [ 'test', $test ])
	{
		IPC::Run::run([ 'python3', $fmnist, $set->[0], $set->[1] ],
			'>', "$tmp/$set->[0].txt", '2>', "$tmp/$set->[0].err")
		  or BAIL_OUT("fmnist.py $set->[0] failed: "
			  . slurp_file("$tmp/$set->[0].err"));
	}
	return $tmp;
}

=pod

=item vec_function(%opt)

Returns the SQL (a CREATE FUNCTION statement, ending in a newline) of the
function C<vec(i, d)>: the C<d>-dimensional real[] vector of row C<i>,
deterministic and pairwise distinct, whose component C<j> (1 .. C<d>) is
C<sin(i * A + j * B) + cos(i * C * j)>.  Options:
C<< type => 'bigint' >> (the type of C<i>; default C<int>);
C<< dims => N >>: C<vec(i)> of C<N> dimensions instead of C<vec(i, d)>;
C<< coef => [A, B, C] >> (default C<[0.7, 0.31, 0.013]>).

=cut

sub vec_function
{
	my (%opt) = @_;
	my $type = $opt{type} // 'int';
	my ($a, $b, $c) = @{ $opt{coef} // [ 0.7, 0.31, 0.013 ] };
	my ($args, $d) =
	  defined $opt{dims}
	  ? ("i $type", $opt{dims})
	  : ("i $type, d int", 'd');
	return
	    "CREATE FUNCTION vec($args) RETURNS real[] IMMUTABLE LANGUAGE sql AS \$\$\n"
	  . "  SELECT array_agg((sin(i * $a + j * $b) + cos(i * $c * j))::real\n"
	  . "                   ORDER BY j)\n"
	  . "  FROM generate_series(1, $d) j \$\$;\n";
}

=pod

=item stream_table($compact_threshold)

Returns the SQL that makes the table C<t (id int PRIMARY KEY, v real[])>
with the segvec index C<t_v> C<INCLUDE (id)> and the given
C<compact_threshold>, the function C<vec(i)> (a deterministic 4-dimensional
vector of row C<i>) and the procedure C<add_rows(a, b)>, which inserts rows
C<a> .. C<b>, each in a transaction of its own (a stream of single-row
inserts, as background work sees one).

=cut

sub stream_table
{
	my ($threshold) = @_;
	return qq{
CREATE TABLE t (id int PRIMARY KEY, v real[]);
CREATE INDEX t_v ON t USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = $threshold);
CREATE FUNCTION vec(i int) RETURNS real[] IMMUTABLE LANGUAGE sql AS \$\$
  SELECT ARRAY[sin(i * 0.37), cos(i * 0.11), sin(i * 0.013) * 3,
               cos(i * 0.0071) * 2]::real[] \$\$;
CREATE PROCEDURE add_rows(a int, b int) LANGUAGE plpgsql AS \$\$
BEGIN
  FOR i IN a .. b LOOP
    INSERT INTO t VALUES (i, vec(i));
    COMMIT;
  END LOOP;
END \$\$;
};
}

=pod

=item verify($index, %opt)

Runs C<ft.verify($index, false, search_limit)> (which repairs nothing) and
returns its row as a hash reference, column name => value as psql prints
it (C<examples> as the array's text).  Options: C<< node => $n >> (default:
the default node); C<< search_limit => N >> (default ft.verify's, 10,000;
C<'NULL'> searches for every row); C<< ef_search => N >> (sets
segvec.ef_search for the call).

=cut

# ft.verify's columns; examples (text that may hold a |) last
my @verify_columns = qw(heap_rows indexed_docs missing_docs duplicate_docs
  docs_in_two_segments keymap_entries phantom_entries checksum_mismatches
  missing_keymap_entries search_checked search_misses repaired
  unreachable_nodes examples);

sub verify
{
	my ($index, %opt) = @_;
	my $node = $opt{node} // $default_node;
	die 'SegvecTest::verify: no node (make one with segvec_node)'
	  unless defined $node;
	my $limit =
	  defined $opt{search_limit} ? ", search_limit => $opt{search_limit}" : '';
	my $sql = '';
	$sql .= "SET segvec.ef_search = $opt{ef_search};\n"
	  if defined $opt{ef_search};
	$sql .= 'SELECT '
	  . join(', ', @verify_columns)
	  . " FROM ft.verify('$index', false$limit)";
	my %row;
	@row{@verify_columns} = split /\|/, $node->safe_psql('postgres', $sql),
	  scalar(@verify_columns);
	return \%row;
}

=pod

=item verify_problems($index, %opt)

Runs C<verify> (with the same options) and returns what it found wrong as
text, C<''> when nothing: C<indexed_docs=N heap_rows=M> when the two
differ, C<NAME=N> for each count of missing_docs, duplicate_docs,
docs_in_two_segments, phantom_entries, checksum_mismatches,
missing_keymap_entries, search_misses and unreachable_nodes that is not 0,
and, given a C<search_limit>, C<search_checked=N> when the search checked
fewer rows than the heap has (or than the limit).  C<< ignore => [names] >>
leaves those checks out (C<indexed_docs> the comparison with heap_rows,
which differ while deleted rows wait for VACUUM).  So a test says
C<is(verify_problems('t_v'), '', 'ft.verify is clean')> and a failure
shows what ft.verify found.

=cut

sub verify_problems
{
	my ($index, %opt) = @_;
	my %ignore = map { $_ => 1 } @{ delete $opt{ignore} // [] };
	my $v = verify($index, %opt);
	my @problems;
	push @problems, "indexed_docs=$v->{indexed_docs} heap_rows=$v->{heap_rows}"
	  if !$ignore{indexed_docs} && $v->{indexed_docs} ne $v->{heap_rows};
	for my $c (
		qw(missing_docs duplicate_docs docs_in_two_segments
		phantom_entries checksum_mismatches missing_keymap_entries
		search_misses unreachable_nodes))
	{
		push @problems, "$c=$v->{$c}" if !$ignore{$c} && $v->{$c} ne '0';
	}
	if (defined $opt{search_limit})
	{
		my $want = $v->{heap_rows};
		$want = $opt{search_limit}
		  if $opt{search_limit} ne 'NULL' && $opt{search_limit} < $want;
		push @problems, "search_checked=$v->{search_checked} (of $want)"
		  if $v->{search_checked} ne $want;
	}
	return join(', ', @problems);
}

=pod

=item hold_at($node, $point, $sql, %opt)

Starts C<$sql> in a background session of C<$node> with the test point
C<$point> set to C<wait> (a test build's C<segvec.test_point>): the
backend stops there until C<pg_advisory_lock(21334)>, which another
session of this helper holds, is free.  Returns once a backend waits at
the point (the statement's own, or a background worker it set to work:
an advisory lock on that key is not granted); dies when none ever gets
there.  So one hold at a time.
C<< setup => $sql >>: statements the session runs first (before it
sets the test point), such as SET lines.  Returns a handle:

  my $hold = hold_at($node, 'merge-built',
      q{SELECT segments_merged FROM ft.compact('m_v')});
  ...                           # what runs while it waits
  my $out = $hold->release;     # what $sql printed

C<< $hold->release >> frees the lock, waits for C<$sql> to finish and ends
both sessions; it returns what the session printed, and dies when it
printed an error; in list context it returns (stdout, stderr) instead
and does not die (a statement a standby cancels, for one).  C<$node> may
be a standby.

=cut

# the key of the advisory lock the test point action "wait" waits for
# (src/hooks/testhooks.c)
my $test_wait_key = 21334;

sub hold_at
{
	my ($node, $point, $sql, %opt) = @_;
	# psql runs the statement once it has its semicolon
	$sql =~ s/;?\s*$/;/;
	my $holder = $node->background_psql('postgres');
	$holder->query_safe("SELECT pg_advisory_lock($test_wait_key)");
	my $session = $node->background_psql('postgres', on_error_stop => 0);
	my $early = $session->query_until(
		qr/started\n/,
		($opt{setup} // '')
		  . "\nSET segvec.test_point = '$point';\n"
		  . "SET segvec.test_point_action = 'wait';\n"
		  . "\\echo started\n$sql\n");
	$node->poll_query_until(
		'postgres', qq{SELECT count(*) > 0 FROM pg_locks
		  WHERE locktype = 'advisory' AND objid = $test_wait_key
		  AND NOT granted})
	  or die "the statement never reached the test point $point";
	# what psql printed before the marker (query_until drops it from the
	# session's stdout)
	$early =~ s/started\n//;
	return bless { holder => $holder, session => $session, early => $early },
	  'SegvecTest::Hold';
}

package SegvecTest::Hold;

sub release
{
	my ($self) = @_;
	$self->{holder}->query_safe("SELECT pg_advisory_unlock($test_wait_key)");
	$self->{holder}->quit;
	# psql reads the \q after the statement has finished (or failed, or
	# lost its connection: a standby cancels a statement in conflict with
	# recovery)
	$self->{session}->quit;
	my $out = $self->{early} . $self->{session}->{stdout};
	my $err = $self->{session}->{stderr};
	return ($out, $err) if wantarray;
	die "the held statement failed: $err" if $err ne '';
	return $out;
}

package SegvecTest;

=pod

=back

=cut

1;

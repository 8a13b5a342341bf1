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

Makes a cluster named C<$name> (C<< PostgreSQL::Test::Cluster->new >>),
initializes it (C<%init> goes to C<init>, e.g. C<< allows_streaming => 1 >>),
appends to its postgresql.conf C<shared_preload_libraries = 'segvec'>,
C<autovacuum = off> and then the lines of C<$conf> (optional; a later line
wins over an earlier one), and starts it.  Returns the node, which becomes
the default node.

=cut

sub segvec_node
{
	my ($name, $conf, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'segvec'\nautovacuum = off\n"
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

=back

=cut

1;

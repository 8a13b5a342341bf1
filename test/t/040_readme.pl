# The getting-started example of README.md runs as written and returns the
# rows it should.  The SQL is taken from the README itself: the first ```sql
# block after the "## Getting started" heading.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

open(my $fh, '<', 'README.md') or die "could not open README.md: $!";
my $readme = do { local $/; <$fh> };
close($fh);

my ($section) = $readme =~ /^## Getting started\n(.*?)^## /ms;
ok(defined $section, 'README.md has a Getting started section');
my ($sql) = $section =~ /```sql\n(.*?)```/s;
ok(defined $sql && $sql =~ /CREATE INDEX/, 'the section has a SQL example');

my $node = segvec_node('readme');

my ($ret, $stdout, $stderr) =
  $node->psql('postgres', $sql, extra_params => [ '-v', 'ON_ERROR_STOP=1' ]);
is($ret, 0, 'the example runs without error');
is($stderr, '', 'and prints no error or warning');

# the two nearest rows to {1,1,1}: id 3 at distance 1, id 1 at sqrt(5)
like($stdout, qr/^3\|1\n1\|2\.236067977/m,
	'the query returns ids 3 and 1 with their distances');

$node->stop;
done_testing();

# 094_quant_rabitq.pl: quantized graph segments with RaBitQ codes
# (quantization = rabitq): every check of 092_quant.pl (recall@10 >= 0.95
# on Fashion-MNIST at the default settings, each returned distance exact
# and in exact order, every kernel path the same, continuations, filtered
# scans, tombstones and VACUUM, compaction, cosine and inner product, zero
# vectors with cosine, 9,000 dimensions), run on rabitq segments.
use strict;
use warnings;

use File::Basename qw(dirname);
# loaded here, at compile time: their INIT blocks must run before the
# file below does
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

our $quant = 'rabitq';
my $file = dirname(__FILE__) . '/092_quant.pl';
unless (defined(do $file))
{
	die "cannot run $file: $@" if $@;
	die "cannot read $file: $!";
}

# 085_merge_ratio.pl: the ratio merge policy (segvec.merge_ratio, default
# 16) keeps a streamed index at a few segments (segvec preloaded).
#
# - Background workers on: an index built on 2,000 rows of 256 dims, then
#   1,200 single-row inserts (one transaction each, in batches of 48, each
#   batch followed by a wait until ft.jobs is empty) with compact_threshold
#   40, so the workers run a compaction (and the merges it starts) every
#   batch or two.  Once ft.jobs is empty: no merge is left to do (with the
#   segments sorted by live docs, each holds more than 16 times all the
#   smaller ones together), so there are at most 1 + log16(live docs)
#   segments; the mutable segment holds less than the threshold and a
#   page; every row is found by its own vector at k = 1; ft.verify is
#   clean.
# - The same rows compacted by ft.compact every 40 rows (workers paused):
#   the ratio policy leaves exactly 3,040 + 160 docs, the tiered one
#   (merge_ratio 0) seven segments.
# - A backlog of 20 small segments under a big one (merges held off, as
#   when the workers fall behind a stream): ft.compact merges the 14
#   smallest together first and then rewrites the big segment once.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

# wait_for: up to 3 minutes unless told, polled every 50 ms
$SegvecTest::wait_secs = 180;
$SegvecTest::poll_usecs = 50_000;

my $node = segvec_node('merge_ratio', q{
segvec.naptime = 1
segvec.max_workers = 2
# a wide search, and small segments scored exactly, so that k = 1
# self-lookups test the segments' contents rather than HNSW recall
segvec.ef_search = 200
segvec.exact_scan_factor = 128
});

sq("CREATE EXTENSION segvec;\n" . vec_function(dims => 256) . q{
CREATE PROCEDURE stream(t regclass, first int, n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN first .. first + n - 1 LOOP
    EXECUTE format('INSERT INTO %s VALUES ($1, vec($1))', t) USING i;
    COMMIT;
  END LOOP;
END $$;
-- live docs of each graph segment, biggest first
CREATE FUNCTION seg_sizes(idx regclass) RETURNS bigint[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(n ORDER BY n DESC), '{}')
  FROM (SELECT (e->>'docs')::bigint - (e->>'tombstones')::bigint AS n
        FROM ft.info(idx) i, jsonb_array_elements(i.segments) e) s $$;
-- segments holding at most 16 times all the smaller ones together (each
-- a merge the ratio policy would still do)
CREATE FUNCTION ratio_violations(idx regclass) RETURNS int LANGUAGE sql AS $$
  SELECT count(*)::int FROM (
    SELECT n, coalesce(sum(n) OVER (ORDER BY k
             ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS smaller
    FROM unnest(seg_sizes(idx)) WITH ORDINALITY u(n, k)) s
  WHERE smaller > 0 AND n <= 16 * smaller $$;
CREATE FUNCTION not_own_nearest(t regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %1$s a WHERE (SELECT b.id FROM %1$s b
      ORDER BY b.embedding <-> a.embedding LIMIT 1) IS DISTINCT FROM a.id', t)
    INTO r;
  RETURN r;
END $$;
});

sub build
{
	my ($t) = @_;
	sq(qq{
CREATE TABLE $t (id int PRIMARY KEY, embedding real[]);
INSERT INTO $t SELECT i, vec(i) FROM generate_series(1, 2000) i;
CREATE INDEX ${t}_idx ON $t USING segvec (embedding)
  WITH (compact_threshold = 40);
});
	is(sq("SELECT seg_sizes('${t}_idx')"),
		'{2000}', "$t: the build wrote one graph segment");
}

# --- background workers, merge_ratio 16 (the default) ------------------------
is(sq('SHOW segvec.merge_ratio'), '16', 'merge_ratio defaults to 16');
build('bg');
my $drained = 1;
for my $b (0 .. 24)
{
	sq("CALL stream('bg', " . (2001 + $b * 48) . ", 48)");
	$drained &&= wait_for('SELECT count(*) = 0 FROM ft.jobs');
}
ok($drained, 'bg: the background jobs drained after each batch');
my $compactions = sq("SELECT compactions FROM ft.storage_stats('bg_idx')");
cmp_ok($compactions, '>=', 12,
	"bg: the workers ran a compaction every batch or two ($compactions)");
my $sizes = sq("SELECT seg_sizes('bg_idx')");
is(sq("SELECT ratio_violations('bg_idx')"),
	'0', "bg: no merge left to do by the ratio rule (live docs $sizes)");
cmp_ok(
	sq("SELECT num_segments FROM ft.info('bg_idx')"), '<=',
	sq("SELECT 1 + floor(ln(count(*)) / ln(16))::int FROM bg"),
	'bg: at most 1 + log16(live docs) segments');
# 7 mutable docs of 256 floats fill a page: a compaction is submitted
# when a page is appended past the threshold
cmp_ok(sq("SELECT mutable_docs FROM ft.info('bg_idx')"),
	'<', 40 + 7, 'bg: the mutable segment holds less than the threshold and a page');
is( sq("SELECT sum(n) FROM unnest(seg_sizes('bg_idx')) n")
	  + sq("SELECT mutable_docs FROM ft.info('bg_idx')"),
	'3200', 'bg: every row is in a graph segment or the mutable segment');
is(sq("SELECT not_own_nearest('bg')"),
	'0', 'bg: every row is found by its own vector at k = 1');
is( sq(
		q{SELECT missing_docs + duplicate_docs + docs_in_two_segments +
                phantom_entries + checksum_mismatches + search_misses +
                unreachable_nodes
         FROM ft.verify('bg_idx')}),
	'0', 'bg: ft.verify is clean');

# --- ft.compact every 40 rows, workers paused: exact outcomes ----------------
set_conf('segvec.max_workers', '0');
for my $ratio (16, 0)
{
	my $t = "fg$ratio";
	build($t);
	sq(qq{
SET segvec.merge_ratio = $ratio;
DO \$\$
BEGIN
  FOR b IN 0 .. 29 LOOP
    INSERT INTO $t SELECT i, vec(i)
      FROM generate_series(2001 + b * 40, 2040 + b * 40) i;
    PERFORM ft.compact('${t}_idx');
  END LOOP;
END \$\$;
});
	is(sq("SELECT not_own_nearest('$t')"),
		'0', "$t: every row is found by its own vector at k = 1");
}
# 16: each new segment is merged into the small one, which is merged into
# the big one once it holds 1/16 of it
is(sq("SELECT seg_sizes('fg16_idx')"),
	'{3040,160}', 'merge_ratio 16: two segments, 3,040 and 160 docs');
# 0: tiers of floor(log4(docs)), four of a tier merged
is(sq("SELECT seg_sizes('fg0_idx')"),
	'{2000,640,160,160,160,40,40}',
	'merge_ratio 0: seven segments, by tiers');

# --- a backlog: more small segments than one merge takes ---------------------
# 20 segments of 40 docs under the 2,000 of the build (merges held off by
# segvec.max_merge_docs = 0, as when the workers fall behind a stream),
# then ft.compact: the smallest 14 are merged together first, so the big
# segment is rewritten once, not once for every 13 small ones
build('bl');
sq(q{
SET segvec.max_merge_docs = 0;
DO $$
BEGIN
  FOR b IN 0 .. 19 LOOP
    INSERT INTO bl SELECT i, vec(i)
      FROM generate_series(2001 + b * 40, 2040 + b * 40) i;
    PERFORM ft.compact('bl_idx');
  END LOOP;
END $$;
});
is(sq("SELECT seg_sizes('bl_idx')"),
	'{2000' . (',40' x 20) . '}', 'backlog: 20 small segments under the big one');
my $logstart = -s $node->logfile;
sq(q{SET log_min_messages = debug1; SELECT ft.compact('bl_idx')});
my @merges = slurp_file($node->logfile, $logstart) =~
  /segvec merge of (\d+) segments of index "bl_idx": (\d+) docs/g;
my @rewrites;
for (my $i = 0; $i < @merges; $i += 2)
{
	push @rewrites, "$merges[$i]:$merges[$i + 1]";
}
is(join(' ', @rewrites), '14:560 8:2800',
	'backlog: the 14 smallest merged first, then the big segment once');
is(sq("SELECT seg_sizes('bl_idx')"), '{2800}', 'backlog: one segment left');
is(sq("SELECT not_own_nearest('bl')"),
	'0', 'backlog: every row is found by its own vector at k = 1');

$node->stop;
done_testing();

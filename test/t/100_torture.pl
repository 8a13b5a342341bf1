# 100_torture.pl: randomized rounds of concurrent churn, crash restarts and
# background work, each followed by the index's contract.
#
# A table with a real[] column, an expression index on another real[]
# column, a real[] column indexed with a filter column (tag, which the
# clients update), and (when pgvector and segvec_pgvector are installed) a
# pgvector column, each indexed by segvec with an id key.  Each round, pgbench
# clients run a random mix (weights drawn from the seed) of single-row and
# batch inserts, non-HOT updates of another column (a btree on it), updates
# of the vectors, deletes, ft.add / ft.del / ft.flush, KNN queries, VACUUM
# and ft.compact, with background workers on, maintenance_work_mem = 1MB
# and a small compaction threshold; every other round ends with
# stop('immediate') and a restart.  After every round, once background
# work is done:
#   - every live row with a vector is found by its own vector at k = 1
#     (ef_search 400), in each index (with its own tag as the filter in
#     the index with a filter column);
#   - a full scan returns each such row exactly once, and no other;
#   - ft.verify is clean (no missing, duplicate or twice-indexed doc, no
#     phantom or missing keymap entry, no checksum mismatch);
#   - the server log has no crash.
# The seed is printed; SEGVEC_TORTURE_SEED repeats a run and
# SEGVEC_TORTURE_ROUNDS sets the rounds (4 by default; `make torture
# ROUNDS=N`), SEGVEC_TORTURE_DIMS the dimensions (8) and SEGVEC_TORTURE_ROWS
# the id range (3,000).  Vectors are vec(id * 100 + version): distinct for distinct
# rows, so a row's own vector has one nearest row.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

$SegvecTest::wait_secs = 300;

my $seed = $ENV{SEGVEC_TORTURE_SEED} // (time() ^ ($$ << 8)) % 1000000;
my $rounds = $ENV{SEGVEC_TORTURE_ROUNDS} // 4;
# vector dimensions and id range (more of both: bigger graphs, longer runs)
my $dims = $ENV{SEGVEC_TORTURE_DIMS} // 8;
my $maxid = $ENV{SEGVEC_TORTURE_ROWS} // 3000;
diag("torture seed $seed, $rounds rounds (SEGVEC_TORTURE_SEED=$seed repeats it)");
srand($seed);

my $node = segvec_node('torture', q{
maintenance_work_mem = 1MB
segvec.naptime = 1
segvec.max_workers = 2
max_connections = 40
restart_after_crash = off
});

my $pgv = sq(q{SELECT count(*) = 2 FROM pg_available_extensions
               WHERE name IN ('vector', 'segvec_pgvector')}) eq 't';
note($pgv ? 'with a pgvector column' : 'pgvector is not installed: no pgvector column');

sq("CREATE EXTENSION segvec;\n"
	  . ($pgv ? "CREATE EXTENSION vector;\nCREATE EXTENSION segvec_pgvector;\n" : '')
	  . vec_function(type => 'bigint', dims => $dims)
	  . q{
CREATE TABLE t (id int PRIMARY KEY, tag int NOT NULL DEFAULT 0,
                e real[], r real[], f real[]}
	  . ($pgv ? ", pv vector($dims)" : '') . q{);
CREATE INDEX t_tag ON t (tag);
INSERT INTO t (id, e, r, f) SELECT g, vec(g * 100), vec(g * 100), vec(g * 100)
  FROM generate_series(1, }
	  . int($maxid / 3) . q{) g;
CREATE INDEX t_e ON t USING segvec (e) INCLUDE (id)
  WITH (compact_threshold = 150);
CREATE INDEX t_r ON t USING segvec ((l2_normalize(r))) INCLUDE (id)
  WITH (compact_threshold = 150);
CREATE INDEX t_f ON t USING segvec (f, tag) INCLUDE (id)
  WITH (compact_threshold = 150);
});
if ($pgv)
{
	sq(q{
UPDATE t SET pv = e::vector;
CREATE INDEX t_pv ON t USING segvec (pv vector_l2_ops) INCLUDE (id)
  WITH (compact_threshold = 150);
});
}

# what each index indexes, and the expression its scans order by
my @indexes = (
	{ name => 't_e', col => 'e', key => 'e', op => '<->' },
	{ name => 't_r', col => 'r', key => 'l2_normalize(r)', op => '<->' },
	{ name => 't_f', col => 'f', key => 'f', op => '<->', filter => 'tag' });
push @indexes, { name => 't_pv', col => 'pv', key => 'pv', op => '<->' } if $pgv;

my $setvec = $pgv
  ? 'e = vec(:v), r = vec(:v), f = vec(:v), pv = vec(:v)::vector'
  : 'e = vec(:v), r = vec(:v), f = vec(:v)';
my $insvals = $pgv
  ? 'vec(g::bigint * 100), vec(g::bigint * 100), vec(g::bigint * 100), vec(g::bigint * 100)::vector'
  : 'vec(g::bigint * 100), vec(g::bigint * 100), vec(g::bigint * 100)';
my $inscols = $pgv ? '(id, e, r, f, pv)' : '(id, e, r, f)';

# id ranges: the SQL clients' rows, and the ft.add queue's (apart, so that
# a flush's MERGE never races an INSERT of the same id)
my %scripts = (
	insert => qq{
\\set g random(1, $maxid)
INSERT INTO t $inscols SELECT g, $insvals FROM (SELECT :g AS g) s
  ON CONFLICT (id) DO NOTHING;
},
	batch => qq{
\\set b random(1, $maxid)
INSERT INTO t $inscols SELECT g, $insvals FROM generate_series(:b, :b + 19) g
  ON CONFLICT (id) DO NOTHING;
},
	tag => qq{
\\set i random(1, $maxid)
UPDATE t SET tag = tag + 1 WHERE id = :i;
},
	vector => qq{
\\set i random(1, $maxid)
\\set v :i * 100 + random(1, 99)
UPDATE t SET $setvec WHERE id = :i;
},
	delete => qq{
\\set i random(1, $maxid)
DELETE FROM t WHERE id = :i;
},
	ftadd => qq{
\\set i random(1000001, 1000000 + $maxid / 4)
\\set v :i * 100 + random(0, 99)
SELECT ft.add('t_e', :i::text, vec(:v));
},
	ftdel => qq{
\\set i random(1000001, 1000000 + $maxid / 4)
SELECT ft.del('t_e', :i::text);
},
	flush => q{
SELECT applied FROM ft.flush('t_e');
},
	knn => qq{
\\set q random(1, $maxid)
SELECT id FROM t ORDER BY e <-> vec(:q * 100) LIMIT 5;
SELECT id FROM t ORDER BY l2_normalize(r) <-> l2_normalize(vec(:q * 100)) LIMIT 5;
},
	vacuum => q{
VACUUM t;
},
	compact => q{
SELECT docs_compacted FROM ft.compact('t_e');
SELECT docs_compacted FROM ft.compact('t_r');
},);

# the contract, checked once background work is done
sub check_round
{
	my ($label) = @_;

	ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), "$label: background work done");
	sq(q{SELECT ft.flush('t_e')});
	ok( wait_for(
			q{SELECT pending = 0 FROM ft.info('t_e')}),
		"$label: the ft.add queue is empty");
	ok(wait_for('SELECT count(*) = 0 FROM ft.jobs'), "$label: and its jobs done");

	# VACUUM removes the docs of dead rows once no snapshot sees them
	my $clean = 0;
	for (1 .. 60)
	{
		sq('VACUUM (INDEX_CLEANUP ON) t');
		$clean = sq(
			q{SELECT bool_and(v.heap_rows = v.indexed_docs)
			  FROM (VALUES ('t_e'), ('t_r'), ('t_f')} . ($pgv ? q{, ('t_pv')} : '') . q{) i(n),
			  LATERAL ft.verify(i.n::regclass, search_limit => 0) v}) eq 't';
		last if $clean;
		wait_for('SELECT count(*) = 0 FROM ft.jobs');
	}
	ok($clean, "$label: VACUUM removed the docs of dead rows");

	for my $ix (@indexes)
	{
		my ($name, $col, $key, $op, $filter) = @$ix{qw(name col key op filter)};
		# with a filter column: filtered by the row's own value
		my $where = $filter ? "WHERE $filter = (SELECT $filter FROM t LIMIT 1) " : '';
		my $iwhere = $filter ? "WHERE i.$filter = o.$filter " : '';
		my $k = $key;
		(my $outer = $key) =~ s/\b$col\b/o.$col/;
		my $settings = q{SET enable_seqscan = off; SET enable_bitmapscan = off;
SET segvec.ef_search = 400; };

		my $plan = sq($settings
			  . "EXPLAIN (COSTS OFF) SELECT id FROM t ${where}ORDER BY $k $op "
			  . "(SELECT $key FROM t LIMIT 1) LIMIT 1");
		like($plan, qr/Index Scan using $name/, "$label: $name: KNN plans use it");

		my $misses = sq($settings . qq{
SELECT count(*) || ' ' || coalesce(string_agg(o.id::text, ',' ORDER BY o.id), '')
FROM t o
WHERE o.$col IS NOT NULL
  AND o.id IS DISTINCT FROM
      (SELECT i.id FROM t i ${iwhere}ORDER BY $k $op $outer LIMIT 1)});
		my ($nmiss, $which) = split / /, $misses, 2;
		$which //= '';
		is($nmiss, '0', "$label: $name: every row is found by its own vector at k = 1")
		  or diag("$name: rows not found by their own vector: "
			  . substr($which, 0, 500));

		my $scan = sq(
			$settings . qq{SET segvec.scan_order = relaxed;
SET segvec.max_scan_tuples = 10000000;
SELECT count(*) || '|' || count(DISTINCT id) || '|' ||
       (SELECT count(*) FROM t WHERE $col IS NOT NULL)
FROM (SELECT id FROM t ORDER BY $k $op (SELECT $key FROM t WHERE $col IS NOT NULL
                                         ORDER BY id LIMIT 1)
      LIMIT 10000000) s});
		my ($n, $distinct, $live) = split /\|/, $scan;
		is("$n|$distinct", "$live|$live",
			"$label: $name: a full scan returns each live row once");

		is( sq(
				qq{SELECT heap_rows = indexed_docs, missing_docs, duplicate_docs,
				   docs_in_two_segments, phantom_entries, checksum_mismatches,
				   missing_keymap_entries
				   FROM ft.verify('$name', search_limit => 0)}),
			't|0|0|0|0|0|0',
			"$label: $name: ft.verify is clean");
	}
	ok( !$node->log_contains(
			qr/terminated by signal|PANIC|TRAP:|server process .* was terminated/),
		"$label: no crash in the server log");
	return;
}

check_round('setup');

for my $round (1 .. $rounds)
{
	# weights of the mix, from the seed
	my %round_scripts;
	for my $name (sort keys %scripts)
	{
		my $w = 1 + int(rand($name =~ /^(insert|tag|vector|knn)$/ ? 8 : 3));
		$round_scripts{"torture_r${round}_$name\@$w"} = $scripts{$name};
	}
	my $pgseed = int(rand(1_000_000));
	note "round $round: "
	  . join(', ', map { s/^torture_r\d+_//r } sort keys %round_scripts);
	$node->pgbench(
		"--no-vacuum --client=4 --jobs=2 --transactions=400 --random-seed=$pgseed",
		0,
		[qr{processed: 1600/1600}],
		[qr{^(pgbench: setting random seed to \d+\s*)?$}],
		"round $round: the clients' statements succeed",
		\%round_scripts);

	if ($round % 2 == 1)
	{
		# a crash with background work under way
		$node->stop('immediate');
		$node->start;
		note "round $round: crashed and restarted";
	}
	note 'round ' . $round . ': '
	  . sq(q{SELECT string_agg(i.indexrelid::regclass || ' ' || f.num_docs
	           || ' docs in ' || f.num_segments || ' segments, '
	           || f.mutable_docs || ' mutable', '; ')
	         FROM pg_index i, LATERAL ft.info(i.indexrelid::regclass) f
	         WHERE i.indrelid = 't'::regclass
	           AND i.indexrelid <> 't_tag'::regclass
	           AND i.indexrelid <> 't_pkey'::regclass});
	check_round("round $round");
}

$node->stop;
done_testing();

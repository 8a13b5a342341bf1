
# Copyright (c) segvec contributors

# Filter columns (key columns after the vector, evaluated inside the index).
#
# 1. Fashion-MNIST (20,000 training images, 40 test images as queries),
#    with a filter independent of the vector (a hash of the id) and one
#    correlated with it (the image's brightness rank: near the bright
#    queries, far from the dark ones), at 50%, 10%, 1%, 0.1% and 0.01%:
#    every filtered top 10 has exactly min(10, passing) rows in
#    non-decreasing distance, and recall@10 against the exact filtered
#    answer is >= 0.95 for each selectivity and kind, on a fresh index and
#    after half of the rows were streamed in and compacted.
# 2. A primary and a streaming standby, small data: after inserts, UPDATEs
#    of a filter column (not HOT) and of another column (HOT), DELETE and
#    VACUUM, after UPDATEs that append aliases (a filter column, another
#    column with a btree) and a crash restart of the primary, and after
#    compacting those aliases, filtered answers on both equal the exact
#    filtered answer.  A label array column among the filters holds a
#    rare label whose two signature bits are those of a label on a third
#    of the rows: graph segments list its rows exactly (label postings:
#    from the rows at CREATE INDEX, from the heap rows at compaction, from
#    the inputs' postings in merges), so once all is compacted neither
#    server fetches and rechecks the rows that only its bits match.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

# --- 1. recall on Fashion-MNIST ---------------------------------------------
my $tmp = fmnist_files(20000, 40);

my $node = segvec_node('filter_fmnist', q{
segvec.max_workers = 0
jit = off
maintenance_work_mem = '256MB'
shared_buffers = '256MB'
});

sq(q{
CREATE EXTENSION segvec;
CREATE TABLE stage (id int PRIMARY KEY, embedding real[]);
CREATE TABLE queries (id int PRIMARY KEY, embedding real[]);
});
sq("\\copy stage FROM '$tmp/train.txt'");
sq("\\copy queries FROM '$tmp/test.txt'");

# ind: a hash of the id in 0 .. 9999 (independent of the image); brank:
# the image's brightness rank in 0 .. 9999 (correlated with it); dark: the
# darker half of the queries, far from the bright rows
sq(q{
DELETE FROM stage a USING stage b
WHERE a.embedding = b.embedding AND a.id > b.id;
CREATE TABLE items (id int PRIMARY KEY, embedding real[], ind int, brank int);
ALTER TABLE items ALTER embedding SET STORAGE PLAIN;
CREATE TABLE staged AS
  SELECT id, embedding,
         ((hashint4(id)::int8 % 10000) + 10000) % 10000 AS ind,
         floor(10000 * percent_rank() OVER (
           ORDER BY (SELECT sum(x) FROM unnest(embedding) x), id))::int AS brank
  FROM stage;
CREATE TABLE qgroup AS
  SELECT id, ntile(2) OVER (ORDER BY (SELECT sum(x) FROM unnest(embedding) x), id) = 1 AS dark
  FROM queries;
CREATE TABLE conds (cond text, kind text, pct text);
INSERT INTO conds VALUES
  ('ind < 5000', 'independent', '50'), ('ind < 1000', 'independent', '10'),
  ('ind < 100', 'independent', '1'), ('ind < 10', 'independent', '0.1'),
  ('ind < 1', 'independent', '0.01'),
  ('brank >= 5000', 'brightness', '50'), ('brank >= 9000', 'brightness', '10'),
  ('brank >= 9900', 'brightness', '1'), ('brank >= 9990', 'brightness', '0.1'),
  ('brank >= 9999', 'brightness', '0.01');
});

# The exact filtered answers (index scans off) into truth, the index's into
# got (ids in order, distances), then per condition and query group: the
# queries whose row count is not min(10, passing), those out of order,
# and recall@10
sub answers
{
	my ($table, $exact) = @_;
	my $settings =
	  $exact
	  ? 'SET enable_indexscan = off; SET enable_bitmapscan = off;'
	  : 'SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off;';
	sq(qq{
$settings
DROP TABLE IF EXISTS $table;
CREATE TABLE $table (cond text, qid int, ids int[], dists float8[]);
DO \$\$
DECLARE
  c text;
  q record;
  r record;
BEGIN
  FOR c IN SELECT cond FROM conds LOOP
    FOR q IN SELECT id, embedding FROM queries LOOP
      EXECUTE format('SELECT coalesce(array_agg(id ORDER BY rn), ''{}'') AS ids,
                             coalesce(array_agg(d ORDER BY rn), ''{}'') AS dists
                      FROM (SELECT id, embedding <-> \$1 AS d,
                                   row_number() OVER () AS rn
                            FROM (SELECT id, embedding FROM items WHERE %s
                                  ORDER BY embedding <-> \$1 LIMIT 10) s) t', c)
        INTO r USING q.embedding;
      INSERT INTO $table VALUES (c, q.id, r.ids, r.dists);
    END LOOP;
  END LOOP;
END
\$\$;
});
}

sub check_recall
{
	my ($label) = @_;
	answers('truth', 1);
	answers('got', 0);
	my $rows = sq(q{
SELECT c.kind, c.pct, g.dark,
       count(*) FILTER (WHERE cardinality(o.ids) <> least(10, p.passing)) AS short,
       count(*) FILTER (WHERE EXISTS (
         SELECT FROM generate_series(1, cardinality(o.dists) - 1) j
         WHERE o.dists[j] > o.dists[j + 1])) AS unordered,
       coalesce(round((sum((SELECT count(*) FROM unnest(o.ids) x WHERE x = ANY (t.ids)))::numeric
              / nullif(sum(cardinality(t.ids)), 0)), 4), 1) AS recall
FROM conds c
  JOIN truth t ON t.cond = c.cond
  JOIN got o ON o.cond = t.cond AND o.qid = t.qid
  JOIN qgroup g ON g.id = t.qid
  CROSS JOIN LATERAL (SELECT count(*) AS passing FROM items
                      WHERE (c.cond LIKE 'ind%' AND ind < split_part(c.cond, ' ', 3)::int)
                         OR (c.cond LIKE 'brank%' AND brank >= split_part(c.cond, ' ', 3)::int)) p
GROUP BY c.kind, c.pct, g.dark
ORDER BY c.kind, c.pct::numeric DESC, g.dark
});
	for my $line (split /\n/, $rows)
	{
		my ($kind, $pct, $dark, $short, $unordered, $recall) = split /\|/,
		  $line;
		my $what = "$label, $kind $pct%, "
		  . ($dark eq 't' ? 'dark queries' : 'bright queries');
		is($short, 0, "$what: min(10, passing) rows");
		is($unordered, 0, "$what: in non-decreasing distance");
		cmp_ok($recall, '>=', 0.95, "$what: recall\@10 $recall");
	}
}

# fresh: every row in graph segments
sq(q{
INSERT INTO items SELECT * FROM staged;
CREATE INDEX items_idx ON items USING segvec (embedding, ind, brank) INCLUDE (id)
  WITH (compact_threshold = 0);
ANALYZE items;
});
check_recall('fresh');

# streamed: half the rows come after the build, then VACUUM compacts them
sq(q{
DROP INDEX items_idx;
TRUNCATE items;
INSERT INTO items SELECT * FROM staged WHERE id % 2 = 0;
CREATE INDEX items_idx ON items USING segvec (embedding, ind, brank) INCLUDE (id)
  WITH (compact_threshold = 0);
INSERT INTO items SELECT * FROM staged WHERE id % 2 = 1;
ANALYZE items;
});
check_recall('streamed, mutable');
sq('VACUUM items');
check_recall('streamed, compacted');
$node->stop;

# --- 2. a standby and a crash ----------------------------------------------
my $primary = segvec_node('filter_primary', q{
segvec.max_workers = 0
jit = off
}, allows_streaming => 1);
sq('CREATE EXTENSION segvec');
sq(vec_function());
# rare: the least label over 1000 whose signature bits are label 0's
my $rare = sq(q{
SELECT l FROM (SELECT l, hashint4extended(l, 0) AS h,
                        hashint4extended(0, 0) AS h0
                 FROM generate_series(1001, 1000000) l) s
WHERE ARRAY[h & 63, (h >> 6) & 63] <@ ARRAY[h0 & 63, (h0 >> 6) & 63]
ORDER BY l LIMIT 1
});
sq(qq{
CREATE TABLE docs (id int PRIMARY KEY, embedding real[], tenant int,
                   grp int8, label text, note text, labels int4[]);
INSERT INTO docs
  SELECT i, vec(i, 16), CASE WHEN i % 31 = 0 THEN NULL ELSE i % 7 END,
         i % 40, 'l' || (i % 5), '',
         ARRAY[i % 3, 100 + i % 50] || CASE WHEN i % 500 = 7 THEN ARRAY[$rare] ELSE '{}' END
  FROM generate_series(1, 3000) i;
CREATE INDEX docs_idx ON docs USING segvec (embedding, tenant, grp, label, labels)
  INCLUDE (id) WITH (compact_threshold = 0);
CREATE TABLE q (n int, v real[]);
INSERT INTO q SELECT n, vec(100000 + n, 16) FROM generate_series(1, 5) n;
});
my $standby = segvec_standby($primary, 'filter_standby');

my @conds = ('tenant = 3', 'tenant < 2', 'grp = 7', 'grp = 7 AND tenant = 0',
	"label = 'l3'", 'grp >= 38 AND tenant = 6', "labels && '{$rare}'",
	"labels @> '{$rare, 0}'", "labels && '{$rare, 120}' AND tenant = 2",
	"labels && '{0}'");

# the rows an index scan for the rare label fetched and rejected
sub rechecked
{
	my ($n) = @_;
	my $plan = $n->safe_psql('postgres', qq{
SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT id FROM docs WHERE labels && '{$rare}'
ORDER BY embedding <-> (SELECT v FROM q WHERE n = 1) LIMIT 10
});
	my $sum = 0;
	$sum += $1 while $plan =~ /Rows Removed by Index Recheck: (\d+)/g;
	return $sum;
}

# the filtered top 20 for every condition and query, through the index or
# exactly, as text
sub filtered
{
	my ($n, $exact) = @_;
	my $settings =
	  $exact
	  ? 'SET enable_indexscan = off; SET enable_bitmapscan = off;'
	  : 'SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off;';
	my $out = '';
	for my $c (@conds)
	{
		$out .= "$c: "
		  . $n->safe_psql('postgres', qq{
$settings
SELECT string_agg(a::text, ' ' ORDER BY n) FROM (
  SELECT n, (SELECT array_agg(id) FROM (SELECT id FROM docs WHERE $c
            ORDER BY embedding <-> q.v LIMIT 20) s) AS a
  FROM q) t
}) . "\n";
	}
	return $out;
}

sub compare_all
{
	my ($label) = @_;
	$primary->wait_for_catchup($standby);
	my $exact = filtered($primary, 1);
	is(filtered($primary, 0), $exact, "$label: the primary's index answers exactly");
	is(filtered($standby, 0), $exact, "$label: the standby's index answers exactly");
}

compare_all('after the build');

sq(q{
INSERT INTO docs
  SELECT i, vec(i, 16), CASE WHEN i % 31 = 0 THEN NULL ELSE i % 7 END,
         i % 40, 'l' || (i % 5), ''
  FROM generate_series(3001, 3600) i;
UPDATE docs SET tenant = 3 WHERE id % 9 = 1;
UPDATE docs SET tenant = NULL, label = 'l3' WHERE id % 9 = 2;
UPDATE docs SET note = 'hot' WHERE id % 9 = 3;
DELETE FROM docs WHERE id % 9 = 4;
});
compare_all('after inserts, UPDATEs and DELETE');

sq('VACUUM docs');
compare_all('after VACUUM (compaction)');

# UPDATEs of rows in graph segments, of a filter column and (a btree on
# note: not HOT) of another column, append aliases with the new values,
# never copies (an UPDATE of grp to the 7 it holds already may be HOT:
# nothing indexed); then a crash before any compaction
sq(q{
CREATE INDEX docs_note ON docs (note);
UPDATE docs SET grp = 7 WHERE id % 11 = 5;
UPDATE docs SET note = 'cold' WHERE id % 11 = 6;
UPDATE docs SET tenant = 6, note = 'both' WHERE id % 11 = 7;
INSERT INTO docs
  SELECT i, vec(i, 16), i % 7, i % 40, 'l' || (i % 5), '', ARRAY[i % 3]
  FROM generate_series(3601, 3700) i;
});
sq("UPDATE docs SET labels = labels || $rare WHERE id % 97 = 8 AND id % 11 NOT IN (5, 6, 7)");
my $kinds = q{
SELECT count(*) FILTER (WHERE g.segment = 'mutable (alias)') || ' '
       || count(*) FILTER (WHERE g.segment = 'mutable' AND d.id <= 3600)
FROM docs d, ft.get('docs_idx', d.id::text) g
};
my ($aliases, $copies) = split / /, sq($kinds);
cmp_ok($aliases, '>=',
	sq('SELECT count(*) FROM docs WHERE (id % 11 IN (6, 7) OR (id % 97 = 8 AND id % 11 <> 5)) AND id <= 3600'),
	'UPDATEs of rows in segments appended aliases');
is($copies, 0, 'and no copies');
$primary->stop('immediate');
$primary->start;
compare_all('after a crash restart');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $kinds), "$aliases 0",
	'the standby reads the aliases');

# compaction freezes each alias with its own values
sq("SELECT ft.compact('docs_idx')");
compare_all('after compacting the aliases');
is(rechecked($primary), 0,
	"the primary fetches none of the rare label's signature matches");
$primary->wait_for_catchup($standby);
is(rechecked($standby), 0,
	"nor does the standby");
is( sq(q{SELECT missing_docs || ' ' || duplicate_docs || ' ' || checksum_mismatches
         FROM ft.verify('docs_idx')}),
	'0 0 0',
	'ft.verify: every row indexed once, with its own filter values');

$standby->stop;
$primary->stop;
done_testing();

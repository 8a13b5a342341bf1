# 023_merge_set_aside.pl: a queued upsert that cannot be applied does not
# hold up the queue behind it.
#
# Background merges apply ft.add's rows in batches.  A row that breaks a
# CHECK constraint, one that breaks a unique constraint and one that a
# trigger rejects are set aside in ft.pending_failed with their error
# (ft.failed_for shows them), and every other row of their batches is
# applied.  A later write of such an id supersedes the set-aside row;
# ft.discard_failed forgets one.  ft.flush, by contrast, fails as a
# statement would.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('main', q{
segvec.naptime = 1
segvec.merge_batch_rows = 20
});

sq(q{
CREATE EXTENSION segvec;
CREATE TABLE t (id int PRIMARY KEY, embedding real[],
	price int CHECK (price >= 0), sku text UNIQUE);
CREATE INDEX t_v ON t USING segvec (embedding) INCLUDE (id);
CREATE FUNCTION no_13() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.id = 13 THEN
		RAISE EXCEPTION 'id 13 is refused';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER no_13 BEFORE INSERT OR UPDATE ON t
	FOR EACH ROW EXECUTE FUNCTION no_13();
});

# 50 adds in one transaction: id 7 breaks the CHECK, ids 20 and 30 have
# the same sku (the merge applies ids in text order: 30 comes second), the
# trigger refuses id 13
sq(q{
SELECT count(ft.add('t_v', i::text, ARRAY[i, 0, 0]::real[],
	jsonb_build_object('price', CASE i WHEN 7 THEN -1 ELSE i END,
					   'sku', CASE WHEN i IN (20, 30) THEN 'dup' ELSE i::text END)))
  FROM generate_series(1, 50) i;
});
$node->poll_query_until('postgres', 'SELECT count(*) = 0 FROM ft.pending')
  or die 'the queue never drained';

is(sq(q{SELECT count(*), sum(price) FROM t}), '47|' . (1275 - 7 - 13 - 30),
	'every other row is applied');
is( sq(q{SELECT string_agg(id || ':' || sqlstate, ' ' ORDER BY id::int)
	  FROM ft.failed_for('t_v')}),
	'7:23514 13:P0001 30:23505',
	'the three failed rows are set aside with their errors');
like(sq(q{SELECT message FROM ft.failed_for('t_v') WHERE id = '13'}),
	qr/id 13 is refused/, 'the error message is kept');
like(
	slurp_file($node->logfile),
	qr/queued upsert of id 13 into table "t" failed and was set aside/,
	'the server log says so');

# a later write of id 7 applies and supersedes its failure; id 30 is
# discarded
sq(q{SELECT ft.add('t_v', '7', ARRAY[7, 0, 0]::real[], '{"price": 7}')});
$node->poll_query_until('postgres', 'SELECT count(*) = 0 FROM ft.pending')
  or die 'the queue never drained';
is(sq(q{SELECT price FROM t WHERE id = 7}), '7', 'the new write of id 7 applied');
is(sq(q{SELECT ft.discard_failed('t_v', '30')}), '1', 'id 30 discarded');
is(sq(q{SELECT string_agg(id, ' ') FROM ft.failed_for('t_v')}), '13',
	'only id 13 is left set aside');

# ft.flush fails on such a row, as a statement would, and keeps it queued
my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
SET segvec.background_merge = off;
SELECT ft.add('t_v', '14', ARRAY[14, 0, 0]::real[], '{"price": -5}');
SELECT ft.flush('t_v');
});
like($stderr, qr/violates check constraint/, 'ft.flush fails on the bad row');
is(sq(q{SELECT count(*) FROM ft.pending}), '1', 'and the row stays queued');

# dropping the index forgets its set-aside rows
sq(q{DROP INDEX t_v});
is(sq(q{SELECT count(*) FROM ft.pending_failed}), '0',
	'DROP INDEX discards the set-aside rows');

done_testing();

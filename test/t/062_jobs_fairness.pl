# 062_jobs_fairness.pl: background jobs take turns across owners and indexes
# (segvec preloaded, one worker).
#
# Role "hog" owns three tables whose queues need 4 merge jobs each (one id
# per batch) and whose triggers sleep; role "meek" owns one table whose
# queue needs 3, queued last.  With the worker paused while everything is
# queued, and then one worker, the order in which rows are applied (logged
# by AFTER triggers with a sequence) is the scheduler's order, and it is
# deterministic: owners alternate (hog, meek, hog, meek ...), and within
# hog's turns its indexes take turns too.  Oldest-first would apply hog1,
# hog2, hog3 before meek's first row.  Only order and state are asserted,
# never durations.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $node = segvec_node('fairness', q{
segvec.naptime = 1
segvec.max_workers = 0
segvec.merge_batch_rows = 1
});

sq(q{
CREATE EXTENSION segvec;
CREATE ROLE hog LOGIN;
CREATE ROLE meek LOGIN;
GRANT CREATE ON SCHEMA public TO hog, meek;
CREATE TABLE applied (seq bigserial PRIMARY KEY, tab text);
GRANT INSERT ON applied TO hog, meek;
GRANT USAGE ON SEQUENCE applied_seq_seq TO hog, meek;
-- runs as each table's owner (the merge applies the queue as the owner)
CREATE FUNCTION note_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_ARGV[0] = 'slow' THEN
		PERFORM pg_catalog.pg_sleep(0.05);
	END IF;
	INSERT INTO public.applied (tab) VALUES (TG_TABLE_NAME);
	RETURN NEW;
END $$;
});

for my $t (['hog', 'hog1', 4], ['hog', 'hog2', 4], ['hog', 'hog3', 4],
	['meek', 'meek1', 3])
{
	my ($role, $tab, $n) = @$t;
	my $speed = $role eq 'hog' ? 'slow' : 'fast';
	sq(qq{
SET ROLE $role;
CREATE TABLE $tab (id int PRIMARY KEY, embedding real[]);
CREATE INDEX ${tab}_idx ON $tab USING segvec (embedding) INCLUDE (id);
CREATE TRIGGER ${tab}_note AFTER INSERT ON $tab FOR EACH ROW
	EXECUTE FUNCTION public.note_applied('$speed');
SELECT count(ft.add('${tab}_idx', g::text, ARRAY[g, 1]::real[]))
	FROM generate_series(1, $n) g;
});
}

is( sq(q{SELECT string_agg(c.relname || ':' || j.state, ',' ORDER BY c.relname)
		 FROM ft.jobs j JOIN pg_class c ON c.oid = j.index
		 WHERE j.kind = 'merge'}),
	'hog1_idx:pending,hog2_idx:pending,hog3_idx:pending,meek1_idx:pending',
	'with the workers paused, each index has one pending merge job');
is(sq(q{SELECT count(*) FROM ft.jobs WHERE waiting IS NULL}),
	'0', 'ft.jobs shows how long the pending jobs have waited');

# one worker from now on
sq(q{ALTER SYSTEM SET segvec.max_workers = 1; SELECT pg_reload_conf();});
ok( $node->poll_query_until('postgres', q{SELECT count(*) = 15 FROM applied}),
	'every queued row was applied');

my $order = sq(q{SELECT string_agg(tab, ',' ORDER BY seq) FROM applied});
note("order: $order");
my @order = split /,/, $order;
my @owners = map { /^hog/ ? 'hog' : 'meek' } @order[0 .. 5];
is(join(',', @owners), 'hog,meek,hog,meek,hog,meek',
	'owners take turns while both have work');
is(join(',', @order[0 .. 6]),
	'hog1,meek1,hog2,meek1,hog3,meek1,hog1',
	"within an owner's turns its indexes take turns");
is(join(',', @order[7 .. 14]),
	'hog2,hog3,hog1,hog2,hog3,hog1,hog2,hog3',
	'then the remaining owner goes round its indexes');
cmp_ok((grep { $_ eq 'meek1' } @order[0 .. 5]), '==', 3,
	"meek's queue drained before hog's was a quarter done");

$node->stop;
done_testing();

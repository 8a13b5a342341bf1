# 061_security_standby.pl: a hot standby (hot_standby_feedback off, the
# default) never returns a wrong row while the primary drops segments and
# reuses their pages.
#
# The primary churns: inserts, deletes, compactions that merge segments
# (dropping their extents) and VACUUMs that recycle the dropped pages as
# mutable and keymap pages, which the standby replays under its queries.
# Meanwhile the standby runs 1000 statements of 3 index scans and 5 keymap
# lookups (ft.get, whose rows must carry their own vectors); each scan
# must return its 20 rows in non-decreasing distance, each distance computed
# from the row the scan returned (a scan that decoded a reused page would
# return rows at distances out of order).  The statement may instead be
# cancelled with SQLSTATE 40001 ("canceling statement due to conflict with
# recovery", segvec's error for a reused page, or PostgreSQL's own snapshot
# conflicts): the test accepts that and counts it, never a wrong row.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

my $primary = segvec_node('primary', q{
# the standby may connect late on a busy machine: keep the WAL it needs
wal_keep_size = '1GB'
segvec.max_workers = 0
}, allows_streaming => 1);
my $standby = segvec_standby($primary, 'standby', qq{
hot_standby_feedback = off
max_standby_streaming_delay = 1s
});

$primary->safe_psql(
	'postgres', "CREATE EXTENSION segvec;\n" . vec_function(dims => 8) . q{
CREATE TABLE items (id int PRIMARY KEY, embedding real[]);
INSERT INTO items SELECT g, vec(g) FROM generate_series(1, 1500) g;
CREATE INDEX items_idx ON items USING segvec (embedding) INCLUDE (id)
	WITH (compact_threshold = 100);
-- runs on the standby: n index scans, the number of rows out of distance
-- order, and the rows seen; then keymap lookups (ft.get reads the keymap's
-- runs with a pin, checking each page's stamp), counting rows returned
-- with another row's vector
CREATE FUNCTION standby_check(k int) RETURNS text LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off AS $$
DECLARE
	prev float8;
	bad int := 0;
	seen int := 0;
	kbad int := 0;
	r record;
BEGIN
	FOR i IN k * 3 .. k * 3 + 2 LOOP
		prev := -1;
		FOR r IN SELECT t.id, t.embedding <-> vec(i % 97 + 5000) AS d
				   FROM items t ORDER BY t.embedding <-> vec(i % 97 + 5000)
				  LIMIT 20
		LOOP
			IF r.d < prev - 1e-6 THEN
				bad := bad + 1;
			END IF;
			prev := r.d;
			seen := seen + 1;
		END LOOP;
	END LOOP;
	FOR i IN 1 .. 5 LOOP
		SELECT count(*) INTO r
		  FROM ft.get('items_idx', ((k * 37 + i * 101) % 3300 + 1)::text) g
		 WHERE g.vector IS DISTINCT FROM vec(g.id::int);
		kbad := kbad + r.count;
	END LOOP;
	RETURN 'bad=' || bad || ' seen=' || seen || ' kbad=' || kbad;
END $$;
});
$primary->safe_psql('postgres', 'SELECT ft.compact(\'items_idx\')');
$primary->wait_for_catchup($standby);

my $h = $standby->background_psql('postgres', on_error_stop => 0);
# 1000 statements, each with its own snapshot (a long statement would only
# meet PostgreSQL's own snapshot conflicts), each running 3 scans
# query_until returns (and drops from $h->{stdout}) everything read up to the
# marker, which on a busy machine can include the first answers: keep it
my $early = $h->query_until(qr/started/,
	"\\set VERBOSITY verbose\n\\echo started\n"
	  . join('', map { "SELECT standby_check($_);\n" } 1 .. 1000));

# churn on the primary while the standby scans
my $next = 1501;
for my $round (1 .. 12)
{
	$primary->safe_psql(
		'postgres', qq{
INSERT INTO items SELECT g, vec(g) FROM generate_series($next, $next + 149) g;
DELETE FROM items WHERE id % 12 = $round % 12 AND id < $next;
SELECT ft.compact('items_idx');
VACUUM items;
VACUUM items;
});
	$next += 150;
}
$h->quit;
my $out = $early . $h->{stdout} . $h->{stderr};
note "standby: $out";

my $good = () = $out =~ /bad=0 seen=60 kbad=0/g;
my $cancelled = () = $out =~ /40001: canceling statement due to conflict with recovery/g;
note "$good scan rounds right, $cancelled cancelled";
cmp_ok($good, '>', 0, 'the standby answered during the churn');
is($good + $cancelled, 1000,
	'every statement returned its rows in true distance order or was cancelled (40001)');
unlike($out, qr/bad=[1-9]/, 'no wrong row');
unlike($out, qr/XX001|XX002|index corrupted|is not a page of/,
	'no corruption reported');

# after the churn the standby answers like the primary
$primary->wait_for_catchup($standby);
my $q = q{SELECT string_agg(id::text, ',') FROM (SELECT id FROM items
	ORDER BY embedding <-> vec(7777) LIMIT 10) s};
is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
	'the standby and the primary agree after the churn');

# --- a standby scan held between its manifest and its mutable-chain walk ----
# while the primary freezes the whole mutable chain into a segment, recycles
# its pages and reuses them as new mutable pages: the scan's manifest does
# not list the new segment, so the rows it must return are only in the old
# chain.  Walking it through a reused page would silently return a short
# (or foreign) list; the scan must return the right rows or be cancelled
# with 40001 and the hot_standby_feedback hint.
$primary->safe_psql(
	'postgres', q{
CREATE TABLE chain (id int PRIMARY KEY, embedding real[]);
CREATE INDEX chain_idx ON chain USING segvec (embedding) INCLUDE (id)
	WITH (compact_threshold = 100000);
INSERT INTO chain SELECT g, vec(g) FROM generate_series(1, 600) g;
});
$primary->wait_for_catchup($standby);
my $cq = q{SELECT 'rows:' || coalesce(string_agg(id::text, ',' ORDER BY d, id), '') FROM
	(SELECT id, embedding <-> vec(4242) AS d FROM chain
	 ORDER BY embedding <-> vec(4242) LIMIT 20) s};
my $want = $primary->safe_psql('postgres', $cq);
is($standby->safe_psql('postgres', "SET enable_seqscan = off; $cq"),
	$want, 'before the churn the standby scan is right');

# the standby scan waits between its manifest and its chain walk
my $scan = hold_at($standby, 'scan-manifest-read', $cq,
	setup => "\\set VERBOSITY verbose\nSET enable_seqscan = off;\n"
	  . "SET segvec.enable_test_hooks = on;\n");

# the primary drops every page the scan will walk and reuses them
$primary->safe_psql('postgres', q{SELECT ft.compact('chain_idx')});
for my $i (1 .. 3)
{
	$primary->safe_psql('postgres', q{SELECT txid_current()});
	$primary->safe_psql('postgres', q{VACUUM chain});
}
$primary->safe_psql('postgres',
	q{INSERT INTO chain SELECT g, vec(g + 90000) FROM generate_series(601, 1800) g});
is( $primary->safe_psql('postgres',
		q{SELECT mutable_docs || ' ' || immutable_docs FROM ft.info('chain_idx')}),
	'1200 600', 'the primary froze the old chain and appended a new one');
$primary->wait_for_catchup($standby);

my ($scan_out, $scan_err) = $scan->release;
my $got = $scan_out . "\n" . $scan_err;
note "held standby scan: $got";
my ($rows) = $got =~ /^rows:([\d,]*)$/m;
my $cancelled2 = $got =~ /40001: canceling statement due to conflict with recovery/
  && $got =~ /HINT:.*hot_standby_feedback/;
ok((defined $rows && $rows eq $want) || $cancelled2,
	'the held scan returned the right rows or was cancelled with 40001 and the hint');
ok(!defined $rows || $rows eq $want, 'it never returned a wrong list');
ok($cancelled2, 'here (its chain reused) it was cancelled');

done_testing();

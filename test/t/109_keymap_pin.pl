# 109_keymap_pin.pl: the keymap run a CREATE INDEX writes right after its
# segment does not keep the built segment's space inside the index once
# rows stream in.
#
# The build writes its segment from block 2 on and its keymap run right
# after it.  The first rewrite of the big segment goes to the end of the
# index and frees the built segment's extent, below that keymap run; the
# run is never rewritten, and each later output was moved into the lowest
# free run that held it, which started above the run, so the built
# segment's space stayed free inside the index for good: about twice its
# pages in use after the stream, whatever came next.  The shrink after a
# job now moves the keymap runs that split the free space below the big
# segment down out of the way (compact/shrink.c, pack_below), so that the
# next rewrite's output is moved down into the whole of it.
#
# Background work on (settling too).  A build of 20,000 rows of 64
# dimensions (one segment), then 5,000 single-row inserts, each in a
# transaction of its own, and a wait until the jobs are idle; then 5,000
# more and the same wait.  Asserted (a state waited for): the free blocks
# below the big segment that are not right below it are at most an eighth
# of it (before the change the built segment's space, split off by the
# build's keymap run, stayed there: the index at about 1.8 times its pages
# in use; now after the second 5,000 rows about 1.2 times, or about 2
# when the last rewrite's output did not fit in the free space below it,
# which it then adjoins), and ft.verify finds nothing wrong.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SegvecTest;

$SegvecTest::wait_secs = 300;

my $node = segvec_node(
	'keymap_pin', q{
segvec.naptime = 1
segvec.max_workers = 1
segvec.settle_ratio = 1024
});

sq("CREATE EXTENSION segvec;\n" . vec_function(dims => 64));
sq(q{
CREATE TABLE k (id int PRIMARY KEY, v real[]);
INSERT INTO k SELECT i, vec(i) FROM generate_series(1, 20000) i;
CREATE INDEX k_v ON k USING segvec (v) INCLUDE (id)
  WITH (compact_threshold = 200);
CREATE PROCEDURE add_rows(a int, b int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN a .. b LOOP
    INSERT INTO k VALUES (i, vec(i));
    COMMIT;
  END LOOP;
END $$;
});
is(sq(q{SELECT num_segments FROM ft.info('k_v')}), '1',
	'CREATE INDEX made one segment');

my $ratio = q{SELECT round(pg_relation_size('k_v') / 8192.0 /
                (index_pages - free_extent_pages - recyclable_pages), 2)
              FROM ft.storage_stats('k_v')};
my $idle = q{SELECT count(*) = 0 FROM ft.jobs};

sq(q{CALL add_rows(20001, 25000)});
ok(wait_for($idle), 'the jobs drained after the first 5,000 rows');
diag '109: size / pages in use after the first 5,000 rows: ' . sq($ratio);

sq(q{CALL add_rows(25001, 30000)});
ok(wait_for($idle), 'the jobs drained after 5,000 more');
diag '109: size / pages in use after 5,000 more: ' . sq($ratio);

# The free blocks below the big segment that are not right below it (that
# a keymap run or the mutable segment's page splits off) are at most an
# eighth of it
my $split_off = q{
SELECT coalesce((SELECT sum(f.pages) FROM ft.storage_map('k_v') f
                 WHERE f.kind = 'free' AND
                       f.block + f.pages <=
                       (SELECT max(u.block + u.pages)
                        FROM ft.storage_map('k_v') u
                        WHERE u.kind <> 'free' AND u.block < s.block)),
                0) <= s.pages / 8
FROM (SELECT block, pages FROM ft.storage_map('k_v')
      WHERE kind = 'segment' ORDER BY pages DESC LIMIT 1) s};
ok(wait_for($split_off, 120),
	'the free space below the big segment is right below it');
diag '109: size / pages in use at the end: ' . sq($ratio);
diag '109: storage: '
  . sq(q{SELECT string_agg(kind || ' ' || pages, ', ' ORDER BY block)
         FROM ft.storage_map('k_v')});

# the moves lose nothing: every row's doc in one segment, its keymap
# entry in place (no search: on these vectors a graph search for a row's
# own vector misses a few rows whatever the layout)
is(verify_problems('k_v', search_limit => 0), '', 'ft.verify is clean');

done_testing();

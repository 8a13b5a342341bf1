/*
 * How the index uses its pages: the keymap snapshot's runs and buckets,
 * and the counters of installs and the free-extent list (src/README.md,
 * "Free extents" and "Keymap pages").
 */

/*
 * ft.keymap_buckets(index): per keymap bucket, the entries the snapshot's
 * runs hold and the changes since the snapshot
 */
CREATE FUNCTION ft.keymap_buckets(index regclass)
	RETURNS TABLE (bucket int, snapshot_entries bigint, changes int)
	AS 'MODULE_PATHNAME', 'ft_keymap_buckets'
	LANGUAGE C STRICT;

/* ft.keymap_runs(index): the keymap snapshot's sorted runs, oldest first */
CREATE FUNCTION ft.keymap_runs(index regclass)
	RETURNS TABLE (run int, tier int, block bigint, pages int,
				   entries bigint, removes bigint)
	AS 'MODULE_PATHNAME', 'ft_keymap_runs'
	LANGUAGE C STRICT;

/*
 * ft.storage_stats(index): installs so far (compactions of the mutable
 * segment, segment merges, keymap run merges), the keymap's runs, the
 * free-extent list, and what the other pages hold (one pass over the
 * index): segment pages (live or not yet freed), mutable and keymap change
 * pages, pages deleted or never used (for the free space map), the index's
 * size in pages, and the free-extent pages not reusable yet (a snapshot
 * older than their freeing may still read them)
 */
CREATE FUNCTION ft.storage_stats(index regclass,
	OUT compactions bigint, OUT segment_merges bigint,
	OUT keymap_run_merges bigint, OUT keymap_runs int,
	OUT keymap_run_pages bigint, OUT free_extents int,
	OUT free_extent_pages bigint, OUT segment_pages bigint,
	OUT mutable_pages bigint, OUT keymap_change_pages bigint,
	OUT recyclable_pages bigint, OUT index_pages bigint,
	OUT free_extent_pages_waiting bigint)
	AS 'MODULE_PATHNAME', 'ft_storage_stats'
	LANGUAGE C STRICT;

/*
 * ft.storage_map(index): the index's blocks in order, as runs of one kind
 * (metapage, segment, free, free (waiting), keymap run, keymap changes,
 * mutable, manifest, recyclable, segment (unlisted)), with the segment's
 * number for a segment: which blocks split the free space of an index
 * bigger than its pages in use (one pass over the index)
 */
CREATE FUNCTION ft.storage_map(index regclass,
	OUT block bigint, OUT pages bigint, OUT kind text, OUT segment bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'ft_storage_map'
	LANGUAGE C STRICT;

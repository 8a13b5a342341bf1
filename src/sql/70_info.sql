
/*
 * ft.info(index), FT.INFO: one row with what the index holds
 * (ft.index_stats), its queued upserts and merges (ft.merge_stats), and the
 * background work of the server since it started (ft.job_stats, all
 * indexes), and its filter columns.  See README.md ("Background work and monitoring") for each column.
 * Needs what ft.index_stats needs: ownership of the table, or
 * pg_read_all_stats.  In C (ft/ftinfo.c), so that a wrong index gets its
 * error without the inner SQL as CONTEXT.
 */
CREATE FUNCTION ft.info(index regclass,
	OUT num_docs bigint, OUT mutable_docs bigint, OUT immutable_docs bigint,
	OUT tombstones bigint, OUT num_segments int, OUT segments jsonb,
	OUT keymap_entries bigint, OUT keymap_epoch int,
	OUT keymap_buckets_changed int, OUT index_bytes bigint,
	OUT dimensions int, OUT metric text, OUT m int, OUT ef_construction int,
	OUT compact_threshold int, OUT background_work boolean,
	OUT pending bigint, OUT oldest_pending_at timestamptz,
	OUT merge_index_built_total bigint, OUT merges_total bigint,
	OUT jobs_run bigint, OUT jobs_coalesced bigint, OUT jobs_failed bigint,
	OUT filter_columns text[])
	AS 'MODULE_PATHNAME', 'ft_info'
	LANGUAGE C STABLE STRICT
	SET search_path = pg_catalog, pg_temp;


/*
 * ft.info(index), FT.INFO: one row with what the index holds
 * (ft.index_stats), its queued upserts and merges (ft.merge_stats), and the
 * background work of the server since it started (ft.job_stats, all
 * indexes).  See README.md ("Monitoring: ft.info") for each column.
 * Needs what ft.index_stats needs: ownership of the table, or
 * pg_read_all_stats.
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
	OUT jobs_run bigint, OUT jobs_coalesced bigint, OUT jobs_failed bigint)
	LANGUAGE plpgsql STABLE STRICT
	SET search_path = pg_catalog, pg_temp
	AS $$
BEGIN
	SELECT s.num_docs, s.mutable_docs, s.immutable_docs, s.tombstones,
		   s.num_segments, s.segments, s.keymap_entries, s.keymap_epoch,
		   s.keymap_buckets_changed, s.index_bytes, s.dimensions, s.metric,
		   s.m, s.ef_construction, s.compact_threshold, s.background_work
	  INTO num_docs, mutable_docs, immutable_docs, tombstones, num_segments,
		   segments, keymap_entries, keymap_epoch, keymap_buckets_changed,
		   index_bytes, dimensions, metric, m, ef_construction,
		   compact_threshold, background_work
	  FROM ft.index_stats(index) s;
	SELECT ms.pending, ms.oldest_pending_at, ms.merge_index_built_total,
		   ms.merges_total
	  INTO pending, oldest_pending_at, merge_index_built_total, merges_total
	  FROM ft.merge_stats(index) ms;
	SELECT COALESCE(sum(j.run), 0), COALESCE(sum(j.coalesced), 0),
		   COALESCE(sum(j.failed), 0)
	  INTO jobs_run, jobs_coalesced, jobs_failed
	  FROM ft.job_stats() j;
	RETURN;
END
$$;

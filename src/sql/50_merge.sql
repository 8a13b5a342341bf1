
/*
 * Merge-insert over the id btree (src/merge.c; README, "Merge-insert").
 * The id of a segvec index is its first INCLUDE column, the vector its key
 * column.
 */

-- the merge's own functions are called by table owners (ft._merge_batch)
GRANT USAGE ON SCHEMA ft TO PUBLIC;

/*
 * ft.has_key_btree_index(tbl, col): whether tbl has a btree a merge can
 * probe on col: valid, ready, not partial, col its first key column (a
 * plain column), with an operator class and collation that serve col's =.
 * Catalog look-ups only.
 */
CREATE FUNCTION ft.has_key_btree_index(tbl regclass, col name)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'ft_has_key_btree_index'
	LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION ft.has_key_btree_index(regclass, name) IS 'whether tbl has a valid, ready, non-partial btree led by the plain column col (the index a merge probes)';

/*
 * Pending upserts: ft.add and ft.del append here, merges apply and remove
 * the rows.  The newest generation per (indexrelid, id) wins; op 'd'
 * deletes.  id is the id column's text output.  Only the extension's
 * owner reads or writes the table directly; everyone else goes through
 * the functions below, which check their privileges on the indexed table.
 * Not dumped by pg_dump (the index OIDs would not match after a restore):
 * run ft.flush before a dump.
 */
CREATE SEQUENCE ft.pending_generation_seq;

CREATE TABLE ft.pending (
	indexrelid oid NOT NULL,
	generation bigint NOT NULL DEFAULT nextval('ft.pending_generation_seq'),
	id text NOT NULL,
	op "char" NOT NULL CHECK (op IN ('u', 'd')),
	vector real[],
	fields jsonb,
	queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (indexrelid, generation)
);

CREATE INDEX pending_id_idx ON ft.pending (indexrelid, id, generation);

REVOKE ALL ON ft.pending, ft.pending_generation_seq FROM PUBLIC;

COMMENT ON TABLE ft.pending IS 'upserts queued by ft.add and ft.del, applied by merges (read it through ft.pending_for)';

/*
 * Counters of merges per index, updated in each merge's transaction
 * (merge_index_built_total: btrees built before a merge;
 * pending_applied_total: queued rows consumed).  Read them with
 * ft.merge_stats().
 */
CREATE TABLE ft.merge_counters (
	indexrelid oid PRIMARY KEY,
	merge_index_built_total bigint NOT NULL DEFAULT 0,
	merges_total bigint NOT NULL DEFAULT 0,
	inserted_total bigint NOT NULL DEFAULT 0,
	updated_total bigint NOT NULL DEFAULT 0,
	deleted_total bigint NOT NULL DEFAULT 0,
	pending_applied_total bigint NOT NULL DEFAULT 0,
	last_merge_at timestamptz
);

REVOKE ALL ON ft.merge_counters FROM PUBLIC;

COMMENT ON TABLE ft.merge_counters IS 'merges per segvec index (read through ft.merge_stats)';

/*
 * ft.merge(index, source): upsert the rows of source (a table or view with
 * the index's id and vector columns, any other columns of the table,
 * optionally generation and op) with one MERGE over the id, building the
 * id btree first when it is missing.  Runs as the caller.
 */
CREATE FUNCTION ft.merge(index regclass, source regclass,
	OUT inserted bigint, OUT updated bigint, OUT deleted bigint)
	AS 'MODULE_PATHNAME', 'ft_merge'
	LANGUAGE C STRICT;

COMMENT ON FUNCTION ft.merge(regclass, regclass) IS 'upsert the rows of source into the table of the segvec index with one MERGE that probes the id btree';

/* ft.merge_plan(index, source): EXPLAIN (COSTS OFF) of that MERGE, now */
CREATE FUNCTION ft.merge_plan(index regclass, source regclass)
	RETURNS SETOF text
	AS 'MODULE_PATHNAME', 'ft_merge_plan'
	LANGUAGE C STRICT;

COMMENT ON FUNCTION ft.merge_plan(regclass, regclass) IS 'the plan of the MERGE ft.merge(index, source) would run (builds nothing)';

/*
 * Queued upserts.  ft.add and ft.del return the generation; a background
 * merge applies them after commit (with segvec in shared_preload_libraries
 * and segvec.background_merge on), ft.flush at once.
 */
CREATE FUNCTION ft.add(index regclass, id text, vector real[],
	fields jsonb DEFAULT NULL)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'ft_add'
	LANGUAGE C;

COMMENT ON FUNCTION ft.add(regclass, text, real[], jsonb) IS 'queue an upsert of the doc with this id: its vector and the given fields (needs INSERT and UPDATE)';

CREATE FUNCTION ft.del(index regclass, id text)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'ft_del'
	LANGUAGE C;

COMMENT ON FUNCTION ft.del(regclass, text) IS 'queue the deletion of the doc with this id (needs DELETE)';

CREATE FUNCTION ft.flush(index regclass,
	OUT applied bigint, OUT inserted bigint, OUT updated bigint,
	OUT deleted bigint)
	AS 'MODULE_PATHNAME', 'ft_flush'
	LANGUAGE C STRICT;

COMMENT ON FUNCTION ft.flush(regclass) IS 'apply the upserts queued for the index now, as its table''s owner';

/*
 * ft.pending_for(index): the pending upserts folded per id, the newest op
 * winning (fields: the adds' fields since the last delete, newest value
 * per key).  Needs SELECT on the table; empty for a role the table's
 * row-level security applies to.
 */
CREATE FUNCTION ft.pending_for(index regclass,
	OUT id text, OUT op "char", OUT vector real[], OUT fields jsonb,
	OUT generation bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'ft_pending_for'
	LANGUAGE C STRICT;

COMMENT ON FUNCTION ft.pending_for(regclass) IS 'the newest pending upsert per id of the index (needs SELECT on its table)';

/*
 * ft._jsonb_merge_agg(fields): the fields of several adds in one object,
 * the last value per key winning (with ORDER BY generation).
 */
CREATE AGGREGATE ft._jsonb_merge_agg(jsonb) (
	SFUNC = pg_catalog.jsonb_concat,
	STYPE = jsonb
);

/* the batch a running merge applies; errors outside a merge */
CREATE FUNCTION ft._merge_batch(OUT id text, OUT op "char",
	OUT vector real[], OUT fields jsonb)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'ft_merge_batch'
	LANGUAGE C;

/*
 * ft.merge_stats(index DEFAULT NULL): per segvec index of this database
 * (or the one given): the merge counters, the pending upserts (count and
 * oldest) and whether a merge of its queue is running.  Counters, not
 * data: shown to everyone, like pg_stat_user_tables.
 */
CREATE FUNCTION ft.merge_stats(index regclass DEFAULT NULL)
	RETURNS TABLE (indexrelid regclass, tbl regclass,
		merge_index_built_total bigint, merges_total bigint,
		inserted_total bigint, updated_total bigint, deleted_total bigint,
		pending_applied_total bigint, last_merge_at timestamptz,
		pending bigint,
		oldest_pending_at timestamptz, merging boolean)
	LANGUAGE plpgsql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	AS $$
BEGIN
	RETURN QUERY
	SELECT i.indexrelid::regclass, i.indrelid::regclass,
		COALESCE(c.merge_index_built_total, 0),
		COALESCE(c.merges_total, 0),
		COALESCE(c.inserted_total, 0),
		COALESCE(c.updated_total, 0),
		COALESCE(c.deleted_total, 0),
		COALESCE(c.pending_applied_total, 0),
		c.last_merge_at,
		(SELECT count(*) FROM ft.pending p WHERE p.indexrelid = i.indexrelid),
		(SELECT p.queued_at FROM ft.pending p
		  WHERE p.indexrelid = i.indexrelid
		  ORDER BY p.generation LIMIT 1),
		EXISTS (SELECT FROM pg_locks l
				 WHERE l.locktype = 'advisory' AND l.granted
				   AND l.database = (SELECT d.oid FROM pg_database d
									  WHERE d.datname = current_database())
				   AND l.classid = i.indexrelid AND l.objid = 0
				   AND l.objsubid = 21319)	-- SEGVEC_LOCKTAG_MERGE_INDEX
	FROM pg_index i
	JOIN pg_class ic ON ic.oid = i.indexrelid
	JOIN pg_am a ON a.oid = ic.relam AND a.amname = 'segvec'
	LEFT JOIN ft.merge_counters c ON c.indexrelid = i.indexrelid
	WHERE merge_stats.index IS NULL OR i.indexrelid = merge_stats.index
	ORDER BY i.indexrelid;
END
$$;

COMMENT ON FUNCTION ft.merge_stats(regclass) IS 'merges per segvec index: counters (merge_index_built_total, ...), pending upserts, running merge';

/*
 * DROP of a segvec index (or its table) discards its pending upserts and
 * counters (ft.dropindex flushes first unless it deletes the docs).
 */
CREATE FUNCTION ft._merge_on_drop() RETURNS event_trigger
	LANGUAGE plpgsql SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	dropped oid;
BEGIN
	FOR dropped IN
		SELECT o.objid FROM pg_event_trigger_dropped_objects() o
		 WHERE o.object_type = 'index'
	LOOP
		DELETE FROM ft.pending WHERE indexrelid = dropped;
		DELETE FROM ft.merge_counters WHERE indexrelid = dropped;
	END LOOP;
END
$$;

CREATE EVENT TRIGGER segvec_merge_on_drop ON sql_drop
	EXECUTE FUNCTION ft._merge_on_drop();

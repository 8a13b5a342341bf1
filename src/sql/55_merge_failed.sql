/*
 * Queued upserts that a background merge could not apply (the row broke a
 * constraint, a trigger raised an error, a field did not fit its column):
 * set aside with their error, so that they hold up no other row of the
 * queue.  At most one per id, the newest; a later write of the id that a
 * merge takes supersedes it.  Only the extension's owner reads or writes
 * the table directly; read it through ft.failed_for.
 */
CREATE TABLE ft.pending_failed (
	indexrelid oid NOT NULL,
	id text NOT NULL,
	op "char" NOT NULL,
	vector real[],
	fields jsonb,
	generation bigint NOT NULL,
	failed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	sqlstate text NOT NULL,
	message text NOT NULL,
	PRIMARY KEY (indexrelid, id)
);

REVOKE ALL ON ft.pending_failed FROM PUBLIC;

COMMENT ON TABLE ft.pending_failed IS 'queued upserts a background merge could not apply, with the error (read it through ft.failed_for)';

CREATE FUNCTION ft.failed_for(index regclass,
	OUT id text, OUT op "char", OUT vector real[], OUT fields jsonb,
	OUT generation bigint, OUT failed_at timestamptz, OUT sqlstate text,
	OUT message text)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'ft_failed_for'
	LANGUAGE C STRICT;

COMMENT ON FUNCTION ft.failed_for(regclass) IS 'the queued upserts of the index that a background merge set aside because they failed, with the error (needs SELECT on its table)';

CREATE FUNCTION ft.discard_failed(index regclass, id text DEFAULT NULL)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'ft_discard_failed'
	LANGUAGE C;

COMMENT ON FUNCTION ft.discard_failed(regclass, text) IS 'forget the set-aside upserts of the index, or of one id; returns how many';

/* DROP of a segvec index (or its table) discards its set-aside upserts */
CREATE FUNCTION ft._failed_on_drop() RETURNS event_trigger
	LANGUAGE plpgsql SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	AS $$
BEGIN
	DELETE FROM ft.pending_failed
	 WHERE indexrelid IN (SELECT o.objid FROM pg_event_trigger_dropped_objects() o
						   WHERE o.object_type = 'index');
END
$$;

CREATE EVENT TRIGGER segvec_failed_on_drop ON sql_drop
	EXECUTE FUNCTION ft._failed_on_drop();

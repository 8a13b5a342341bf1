
/*
 * Background work (see src/README.md, "Background work").  With segvec in
 * shared_preload_libraries a launcher and per-database workers run the
 * jobs of a job table in shared memory: compact, snapshot, merge.
 * Without it the table does not exist: ft.jobs is empty, ft.job_stats all
 * zeros, and ft.background_enabled() false.
 */
CREATE FUNCTION ft.background_enabled() RETURNS boolean
	AS 'MODULE_PATHNAME', 'ft_background_enabled'
	LANGUAGE C STRICT;

COMMENT ON FUNCTION ft.background_enabled() IS 'whether background workers run segvec jobs (segvec is in shared_preload_libraries)';

/* The job table: pending and running jobs of every database */
CREATE FUNCTION ft.job_table(OUT database name, OUT index regclass,
	OUT indexoid oid, OUT kind text, OUT state text,
	OUT submitted_at timestamptz, OUT last_submitted_at timestamptz,
	OUT started_at timestamptz, OUT coalesced bigint, OUT attempts int,
	OUT worker_pid int, OUT retry_at timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'ft_job_table'
	LANGUAGE C STRICT;

/*
 * ft.jobs: one row per pending or running job.  index is NULL for jobs of
 * other databases (indexoid identifies them); coalesced counts the submits
 * merged into a pending job since submitted_at; attempts the failed runs
 * before (retry_at: when it may run again); waiting how long the job has
 * waited for a worker (until it started, or until now).
 */
CREATE VIEW ft.jobs AS
	SELECT j.*,
		   COALESCE(j.started_at, pg_catalog.now()) OPERATOR(pg_catalog.-)
			 j.submitted_at AS waiting
	  FROM ft.job_table() j
	ORDER BY j.state DESC, j.submitted_at;

COMMENT ON VIEW ft.jobs IS 'pending and running segvec background jobs';
-- anyone may read it, as anyone may call ft.job_table
GRANT SELECT ON ft.jobs TO PUBLIC;

/* Counters of background work since the server started, per kind */
CREATE FUNCTION ft.job_stats(OUT kind text, OUT submitted bigint,
	OUT coalesced bigint, OUT run bigint, OUT failed bigint,
	OUT skipped bigint, OUT overflowed bigint, OUT dropped bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'ft_job_stats'
	LANGUAGE C STRICT;

COMMENT ON FUNCTION ft.job_stats() IS 'segvec background work since the server started: submits, submits coalesced, jobs run, failed, skipped, overflowed (table full: database swept) and dropped';

/* The launcher and the workers (the launcher is not in pg_stat_activity) */
CREATE FUNCTION ft.job_workers(OUT role text, OUT database name,
	OUT state text, OUT launched_at timestamptz, OUT pid int)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'ft_job_workers'
	LANGUAGE C STRICT;

/*
 * ft.submit_job(index, kind): submit a background job as an insert over
 * the threshold does, except that a compaction runs even if the mutable
 * segment is under the threshold.  For tests and operations; needs
 * ownership of the table.  Returns false when background work is off.
 */
CREATE FUNCTION ft.submit_job(index regclass, kind text DEFAULT 'compact')
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'ft_submit_job'
	LANGUAGE C STRICT;

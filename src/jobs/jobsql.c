/*-------------------------------------------------------------------------
 *
 * jobsql.c
 *	  The SQL functions over background work: ft.background_enabled,
 *	  ft.jobs (ft.job_table), ft.job_stats, ft.job_workers and
 *	  ft.submit_job.
 *
 * src/jobs/jobsql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "commands/dbcommands.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "jobs/jobs_int.h"
#include "store/store.h"

/*
 * ft.background_enabled() -> bool: whether background workers do the
 * compaction (the library is in shared_preload_libraries).
 */
PG_FUNCTION_INFO_V1(ft_background_enabled);
Datum
ft_background_enabled(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(SegvecJobsEnabled());
}

/*
 * ft.job_table() -> setof record: the pending and running jobs of every
 * database (the ft.jobs view).  The index is shown as a regclass only for
 * jobs of the current database.
 */
PG_FUNCTION_INFO_V1(ft_job_table);
Datum
ft_job_table(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SegvecJobInfo *jobs;
	int			n,
				i;

	InitMaterializedSRF(fcinfo, 0);
	n = SegvecJobList(&jobs);
	for (i = 0; i < n; i++)
	{
		SegvecJobInfo *j = &jobs[i];
		Datum		values[12];
		bool		nulls[12];
		char	   *dbname = get_database_name(j->dboid);

		memset(nulls, 0, sizeof(nulls));
		if (dbname)
			values[0] = DirectFunctionCall1(namein, CStringGetDatum(dbname));
		else
			nulls[0] = true;
		values[1] = ObjectIdGetDatum(j->indexid);
		nulls[1] = j->dboid != MyDatabaseId;
		values[2] = ObjectIdGetDatum(j->indexid);
		values[3] = CStringGetTextDatum(SegvecJobKindName(j->kind));
		values[4] = CStringGetTextDatum(j->state == SEGVEC_JOB_RUNNING ?
										"running" : "pending");
		values[5] = TimestampTzGetDatum(j->submitted_at);
		values[6] = TimestampTzGetDatum(j->last_submit_at);
		values[7] = TimestampTzGetDatum(j->started_at);
		nulls[7] = j->started_at == 0;
		values[8] = Int64GetDatum(j->coalesced);
		values[9] = Int32GetDatum(j->attempts);
		values[10] = Int32GetDatum(j->worker_pid);
		nulls[10] = j->worker_pid == 0;
		values[11] = TimestampTzGetDatum(j->not_before);
		nulls[11] = j->not_before == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	return (Datum) 0;
}

/*
 * ft.job_stats() -> setof record: the counters of background work since
 * the server started, one row per job kind.
 */
PG_FUNCTION_INFO_V1(ft_job_stats);
Datum
ft_job_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SegvecJobCountersData c;
	int			k;

	InitMaterializedSRF(fcinfo, 0);
	SegvecJobCounters(&c);
	for (k = 0; k < SEGVEC_NUM_JOB_KINDS; k++)
	{
		Datum		values[8];
		bool		nulls[8];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(SegvecJobKindName(k));
		values[1] = Int64GetDatum((int64) c.submitted[k]);
		values[2] = Int64GetDatum((int64) c.coalesced[k]);
		values[3] = Int64GetDatum((int64) c.run[k]);
		values[4] = Int64GetDatum((int64) c.failed[k]);
		values[5] = Int64GetDatum((int64) c.skipped[k]);
		values[6] = Int64GetDatum((int64) c.overflowed[k]);
		values[7] = Int64GetDatum((int64) c.dropped[k]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	return (Datum) 0;
}

/*
 * ft.job_workers() -> setof record: the launcher and the workers, with
 * their pids, databases and states (the launcher, a plain background
 * process without a database, is not in pg_stat_activity).
 */
PG_FUNCTION_INFO_V1(ft_job_workers);
Datum
ft_job_workers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SegvecWorkerSlot workers[SEGVEC_MAX_WORKERS_LIMIT];
	int			launcher_pid;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (!SegvecJobsEnabled())
		return (Datum) 0;

	LWLockAcquire(SegvecJobs->lock, LW_SHARED);
	launcher_pid = SegvecJobs->launcher_latch ? SegvecJobs->launcher_pid : 0;
	memcpy(workers, SegvecJobs->workers, sizeof(workers));
	LWLockRelease(SegvecJobs->lock);

	if (launcher_pid != 0)
	{
		Datum		values[5];
		bool		nulls[5] = {false, true, false, true, false};

		values[0] = CStringGetTextDatum("launcher");
		values[2] = CStringGetTextDatum("running");
		values[4] = Int32GetDatum(launcher_pid);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &workers[i];
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		const char *state;
		char	   *dbname;

		switch (w->state)
		{
			case SEGVEC_WORKER_STARTING:
				state = "starting";
				break;
			case SEGVEC_WORKER_ATTACHED:
				state = w->busy ? "busy" : "idle";
				break;
			case SEGVEC_WORKER_EXITING:
				state = "exiting";
				break;
			default:
				continue;
		}
		values[0] = CStringGetTextDatum("worker");
		dbname = get_database_name(w->dboid);
		if (dbname)
			values[1] = DirectFunctionCall1(namein, CStringGetDatum(dbname));
		else
			nulls[1] = true;
		values[2] = CStringGetTextDatum(state);
		values[3] = TimestampTzGetDatum(w->launched_at);
		values[4] = Int32GetDatum(w->pid);
		nulls[4] = w->pid == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	return (Datum) 0;
}

static SegvecJobKind
parse_kind(const char *name)
{
	int			k;

	for (k = 0; k < SEGVEC_NUM_JOB_KINDS; k++)
	{
		if (strcmp(name, SegvecJobKindName((SegvecJobKind) k)) == 0)
			return (SegvecJobKind) k;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown segvec job kind \"%s\"", name),
			 errhint("The kinds are compact, snapshot and merge.")));
	return SEGVEC_JOB_COMPACT;	/* keep compiler quiet */
}

/*
 * ft.submit_job(index regclass, kind text DEFAULT 'compact') -> bool:
 * submit a background job for the index, as an insert over the threshold
 * does, but a compaction runs even under the threshold (for tests and
 * operations).  Requires ownership of the table.
 * Returns whether the request was recorded (false when background work is
 * off).
 */
PG_FUNCTION_INFO_V1(ft_submit_job);
Datum
ft_submit_job(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	SegvecJobKind kind = parse_kind(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	Relation	index;
	bool		temp;

	/*
	 * A partitioned index: its queue is its own (merge), the compaction
	 * and snapshot jobs are its partitions' indexes'.
	 */
	if (kind != SEGVEC_JOB_MERGE && SegvecRelidIsPartitionedIndex(relid))
	{
		List	   *leaves = SegvecPartitionIndexes(relid);
		ListCell   *lc;
		bool		any = false;

		foreach(lc, leaves)
		{
			index = SegvecOpenIndex(lfirst_oid(lc), AccessShareLock, true);
			temp = RelationUsesLocalBuffers(index);
			relation_close(index, AccessShareLock);
			if (!temp && SegvecSubmitJobExt(lfirst_oid(lc), kind, true))
				any = true;
		}
		PG_RETURN_BOOL(any);
	}
	if (SegvecRelidIsPartitionedIndex(relid))
	{
		index = relation_open(relid, AccessShareLock);
		if (!SegvecOwnsRelation(index->rd_index->indrelid, GetUserId()))
			aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE,
						   get_rel_name(index->rd_index->indrelid));
	}
	else
		index = SegvecOpenIndex(relid, AccessShareLock, true);
	temp = RelationUsesLocalBuffers(index);
	relation_close(index, AccessShareLock);
	if (temp)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot run background jobs on temporary index \"%s\"",
						get_rel_name(relid)),
				 errhint("Use ft.compact.")));

	PG_RETURN_BOOL(SegvecSubmitJobExt(relid, kind, true));
}

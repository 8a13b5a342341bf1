/*-------------------------------------------------------------------------
 *
 * jobrun.c
 *	  The bodies of background jobs: compact, snapshot and merge, each run
 *	  in its own transaction with its errors caught.
 *
 * A job opens the table, then the index, checks that the index still is a
 * segvec index, and calls the subsystem that does the work: compaction
 * (SegvecCompact), the keymap (SegvecKeymapSnapshot), or the runner that
 * merge-insert registered for merge jobs (SegvecRegisterJobRunner), so
 * that jobs never call up into merge-insert.
 *
 * src/jobs/jobrun.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compact/compact.h"
#include "hooks/testhooks.h"
#include "jobs/jobs_int.h"
#include "keymap/keymap.h"
#include "store/store.h"

/* For the error context of the running job */
static const char *job_index_name = NULL;
static SegvecJobKind job_kind;
static Oid	job_indexid;

/* Runners registered by other subsystems, by job kind */
static SegvecJobRunner job_runners[SEGVEC_NUM_JOB_KINDS];

/*
 * SegvecRegisterJobRunner: from _PG_init, name the function that runs jobs
 * of kind (used for merge jobs, whose work belongs to merge-insert).  The
 * runner gets the index, opened and locked RowExclusiveLock, with its table
 * locked as the kind needs, inside the job's transaction.
 */
void
SegvecRegisterJobRunner(SegvecJobKind kind, SegvecJobRunner runner)
{
	Assert(kind >= 0 && kind < SEGVEC_NUM_JOB_KINDS);
	job_runners[kind] = runner;
}

static void
job_error_context(void *arg)
{
	if (job_index_name)
		errcontext("segvec %s job for index \"%s\"",
				   SegvecJobKindName(job_kind), job_index_name);
	else
		errcontext("segvec %s job for index %u",
				   SegvecJobKindName(job_kind), job_indexid);
}

/*
 * The body of a job, inside its transaction.  Locks the table, then the
 * index (RowExclusiveLock, as ft.compact does: DROP INDEX waits for the
 * job), after checking that the index still exists and is a segvec index;
 * otherwise returns JOB_SKIPPED.  A compaction that was not forced is
 * done only if the mutable segment really holds compact_threshold docs
 * (else JOB_SKIPPED).  Sets *changed when a compaction moved docs or
 * merged segments.
 */
static JobOutcome
run_job_in_xact(Oid indexid, SegvecJobKind kind, bool force, bool *changed)
{
	LOCKMODE	heaplock = kind == SEGVEC_JOB_MERGE ? RowExclusiveLock :
		AccessShareLock;
	Oid			heapid;
	Relation	heap;
	Relation	index;
	SegvecCompactStats stats;

	heapid = IndexGetRelation(indexid, true);
	if (!OidIsValid(heapid))
		return JOB_SKIPPED;
	heap = try_relation_open(heapid, heaplock);
	if (heap == NULL)
		return JOB_SKIPPED;
	/* keep the lock, not the reference: a merge may CREATE INDEX on it */
	relation_close(heap, NoLock);
	index = try_relation_open(indexid, RowExclusiveLock);
	if (index == NULL)
		return JOB_SKIPPED;
	if (!SegvecIsSegvecIndex(index) || index->rd_index->indrelid != heapid ||
		RELATION_IS_OTHER_TEMP(index))
	{
		relation_close(index, NoLock);
		return JOB_SKIPPED;
	}

	job_index_name = pstrdup(RelationGetRelationName(index));
	pgstat_report_activity(STATE_RUNNING,
						   psprintf("segvec %s of index %s",
									SegvecJobKindName(kind), job_index_name));

	if (kind == SEGVEC_JOB_COMPACT && !force &&
		SegvecMutableCountDocs(index, SegvecCompactThreshold(index)) <
		SegvecCompactThreshold(index))
	{
		relation_close(index, NoLock);
		return JOB_SKIPPED;
	}

	switch (kind)
	{
		case SEGVEC_JOB_COMPACT:
			SegvecCompact(index, &stats);
			*changed = stats.docs_compacted > 0 || stats.segments_merged > 0;
			ereport(DEBUG1,
					(errmsg_internal("segvec compacted index \"%s\": " INT64_FORMAT " docs, %d segments created, %d merged",
									 job_index_name, stats.docs_compacted,
									 stats.segments_created,
									 stats.segments_merged)));
			break;
		case SEGVEC_JOB_SNAPSHOT:
			/* no snapshot inside a compaction or an ft.compact drain */
			LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
			SegvecDelayPoint();
			SegvecKeymapSnapshot(index);
			UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
			break;
		default:
			/* merge: the runner merge-insert registered (its own delay point) */
			if (job_runners[kind] == NULL)
				elog(ERROR, "no runner for segvec %s jobs",
					 SegvecJobKindName(kind));
			job_runners[kind] (index);
			break;
	}

	/* the locks are held to the end of the transaction */
	relation_close(index, NoLock);
	return JOB_DONE;
}

/*
 * Run one job in its own transaction.  An error is caught here: logged,
 * the transaction aborted, and JOB_FAILED returned; a FATAL (shutdown,
 * pg_terminate_backend) ends the process and worker_onexit cleans up.
 */
JobOutcome
JobRun(Oid indexid, SegvecJobKind kind, bool force, bool *changed)
{
	volatile JobOutcome outcome = JOB_SKIPPED;
	MemoryContext oldctx = CurrentMemoryContext;
	ErrorContextCallback errcb;

	*changed = false;
	job_kind = kind;
	job_indexid = indexid;
	job_index_name = NULL;
	errcb.callback = job_error_context;
	errcb.arg = NULL;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	PG_TRY();
	{
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SegvecSetInBackgroundJob(true);
		outcome = run_job_in_xact(indexid, kind, force, changed);
		SegvecSetInBackgroundJob(false);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		SegvecSetInBackgroundJob(false);
		HOLD_INTERRUPTS();
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		RESUME_INTERRUPTS();
		outcome = JOB_FAILED;
	}
	PG_END_TRY();

	error_context_stack = errcb.previous;
	job_index_name = NULL;
	MemoryContextSwitchTo(oldctx);
	pgstat_report_activity(STATE_IDLE, NULL);
	return outcome;
}

/* Run the job taken from slot idx, record how it ended */

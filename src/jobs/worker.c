/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The per-database workers that run the jobs of the job table.
 *
 * A worker connects to one database, then loops: it looks up the owners of
 * new pending jobs, then under the lock it takes the runnable pending job
 * of its database whose turn it is (schedule.c) out of the table (marks
 * it RUNNING), runs it in a transaction (jobrun.c), and records the
 * outcome; when there is none, it runs its database's sweep if one was
 * requested, and otherwise marks itself EXITING under the same lock and
 * exits.  Since "no work, so exit" is decided under the lock that submits
 * take, a submit either lands before (and the worker takes it) or after
 * (and wakes the launcher, which sees one runnable job and no idle worker
 * and starts one): no request waits for a worker that is going away.
 *
 * Errors in a job are caught: the transaction is aborted, the error
 * logged, the job counted as failed and put back as pending with a
 * backoff, at most SEGVEC_JOB_MAX_ATTEMPTS times.  A worker that dies
 * (FATAL, e.g. pg_terminate_backend) does the same for its job in its exit
 * callback.  A worker that cannot connect to its database (dropped) drops
 * that database's pending jobs.  A job whose index is gone, or is not a
 * segvec index any more, ends quietly (counted as skipped).
 *
 * Shutdown: SIGTERM sets ProcDiePending (through die()) and the latch;
 * every sleep is a WaitLatch with WL_EXIT_ON_PM_DEATH that rechecks after
 * the latch is reset, and long loops in jobs call CHECK_FOR_INTERRUPTS, so
 * a worker never sleeps through it.
 *
 * src/jobs/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/heapam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "compact/compact.h"
#include "jobs/jobs_int.h"

/* What next_work found */
typedef enum WorkKind
{
	WORK_NONE,
	WORK_JOB,
	WORK_SWEEP
} WorkKind;

/* Worker state */
static int	my_worker = -1;		/* our slot in SegvecJobs->workers */
static uint32 my_generation = 0;

/* ----------------
 * Worker
 * ----------------
 */

/*
 * Exit callback of a worker: a job it was running counts as failed (and is
 * retried); if it never got its database connection, its database's
 * pending jobs are dropped (the database is gone, or cannot be connected
 * to); the slot is freed and the launcher woken.  Runs after the
 * transaction was aborted (registered before InitPostgres registers
 * ShutdownPostgres, so it runs after it).
 */
static void
worker_onexit(int code, Datum arg)
{
	SegvecWorkerSlot *w;
	Oid			dboid = InvalidOid;
	int			ndropped = 0;
	bool		given_up = false;
	SegvecJobKind kind = SEGVEC_JOB_COMPACT;
	Oid			indexid = InvalidOid;
	Latch	   *latch;
	TimestampTz now = GetCurrentTimestamp();

	if (my_worker < 0)
		return;

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	w = &SegvecJobs->workers[my_worker];
	if (w->generation == my_generation && w->state != SEGVEC_WORKER_FREE)
	{
		if (w->job >= 0)
		{
			kind = SegvecJobs->jobs[w->job].kind;
			indexid = SegvecJobs->jobs[w->job].indexid;
			given_up = JobFinishLocked(w->job, JOB_FAILED, 0, now);
		}
		if (!w->connected && !JobAnyWorkerConnectedTo(w->dboid, my_worker))
		{
			int			i;
			SegvecSweepSlot *sw;

			dboid = w->dboid;
			for (i = 0; i < SegvecJobs->max_jobs; i++)
			{
				SegvecJobSlot *s = &SegvecJobs->jobs[i];

				if (s->state == SEGVEC_JOB_PENDING && s->dboid == dboid)
				{
					SegvecJobs->counters.dropped[s->kind]++;
					memset(s, 0, sizeof(SegvecJobSlot));
					s->worker = -1;
					ndropped++;
				}
			}
			sw = JobSweepFor(dboid);
			if (sw)
			{
				sw->dboid = InvalidOid;
				sw->kinds = 0;
				ndropped++;
			}
		}
		w->state = SEGVEC_WORKER_FREE;
		w->dboid = InvalidOid;
		w->pid = 0;
		w->job = -1;
		w->busy = false;
		w->connected = false;
	}
	latch = SegvecJobs->launcher_latch;
	LWLockRelease(SegvecJobs->lock);

	my_worker = -1;
	if (given_up)
		ereport(LOG,
				(errmsg("segvec %s job for index %u given up after %d attempts",
						SegvecJobKindName(kind), indexid,
						SEGVEC_JOB_MAX_ATTEMPTS)));
	if (ndropped > 0)
		ereport(LOG,
				(errmsg("dropped %d segvec job(s) of database %u: could not connect to it",
						ndropped, dboid)));
	if (latch)
		SetLatch(latch);
}

/* A runnable job or a sweep of another database that no worker serves */
static bool
other_database_starving(TimestampTz now, int max_merges)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->dboid != MyDatabaseId && JobRunnable(s, now, max_merges) &&
			!JobAnyWorkerFor(s->dboid))
			return true;
	}
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecSweepSlot *s = &SegvecJobs->sweeps[i];

		if (s->dboid != InvalidOid && s->dboid != MyDatabaseId &&
			!JobAnyWorkerFor(s->dboid))
			return true;
	}
	return false;
}

/*
 * Look up the owners of the pending jobs of this database whose owner no
 * worker has looked up yet (the table owner is the index's relowner), for
 * the fair turns of schedule.c.  Runs a short transaction only when there
 * are such jobs; an index that is gone keeps InvalidOid (its job will be
 * skipped anyway).  Errors are logged and leave the owners unknown.
 */
static void
look_up_owners(void)
{
	Oid			ids[64];
	Oid			owners[64];
	int			n = 0;
	int			i,
				j;

	LWLockAcquire(SegvecJobs->lock, LW_SHARED);
	for (i = 0; i < SegvecJobs->max_jobs && n < lengthof(ids); i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->state == SEGVEC_JOB_PENDING && s->dboid == MyDatabaseId &&
			!s->owner_looked)
			ids[n++] = s->indexid;
	}
	LWLockRelease(SegvecJobs->lock);
	if (n == 0)
		return;

	PG_TRY();
	{
		StartTransactionCommand();
		for (j = 0; j < n; j++)
		{
			HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(ids[j]));

			owners[j] = InvalidOid;
			if (HeapTupleIsValid(tup))
			{
				owners[j] = ((Form_pg_class) GETSTRUCT(tup))->relowner;
				ReleaseSysCache(tup);
			}
		}
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		HOLD_INTERRUPTS();
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		RESUME_INTERRUPTS();
		return;
	}
	PG_END_TRY();

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->state != SEGVEC_JOB_PENDING || s->dboid != MyDatabaseId ||
			s->owner_looked)
			continue;
		for (j = 0; j < n; j++)
		{
			if (ids[j] == s->indexid)
			{
				s->owner = owners[j];
				s->owner_looked = true;
				break;
			}
		}
	}
	LWLockRelease(SegvecJobs->lock);
}

/*
 * Decide, under the lock, what this worker does next: take the runnable
 * pending job of its database whose turn it is (schedule.c: the owner,
 * then the index, served least recently; then the oldest) out of the
 * table (it becomes RUNNING, *job_idx its slot and *job a copy), or take
 * its database's sweep request (*sweep_kinds, *sweep_startup), or, if
 * there is neither, mark itself EXITING.  A worker beyond
 * segvec.max_workers (started beside long jobs, schedule.c) takes only
 * jobs of owners with no long job running, and no sweep.  It also exits,
 * after its first job, to make room when segvec.max_workers was lowered
 * (workers running long jobs not counted), or when every worker is taken
 * and another database has work but no worker.
 */
static WorkKind
next_work(int *job_idx, SegvecJobSlot *job, uint32 *sweep_kinds,
		  bool *sweep_startup, bool can_yield)
{
	TimestampTz now = GetCurrentTimestamp();
	int			max_merges = JobsMergeLimit();
	SegvecWorkerSlot *w;
	SegvecSweepSlot *sw;
	WorkKind	what = WORK_NONE;
	int			best = -1;
	int			live;
	bool		beyond;

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	w = &SegvecJobs->workers[my_worker];
	live = JobsLiveWorkers();
	beyond = live > segvec_max_workers;

	if (can_yield &&
		(live - JobsLongWorkers(now) > segvec_max_workers ||
		 (live >= segvec_max_workers &&
		  other_database_starving(now, max_merges))))
		goto done;

	best = JobPickLocked(MyDatabaseId, now, max_merges, beyond);
	if (best >= 0)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[best];

		JobNoteTakenLocked(s, now, max_merges);
		s->state = SEGVEC_JOB_RUNNING;
		s->merging = false;
		s->worker = my_worker;
		s->started_at = now;
		w->job = best;
		w->busy = true;
		*job_idx = best;
		*job = *s;
		what = WORK_JOB;
	}
	else if (!beyond && (sw = JobSweepFor(MyDatabaseId)) != NULL)
	{
		*sweep_kinds = sw->kinds;
		*sweep_startup = sw->startup;
		sw->dboid = InvalidOid;
		sw->kinds = 0;
		w->busy = true;
		what = WORK_SWEEP;
	}

done:
	if (what == WORK_NONE)
	{
		w->state = SEGVEC_WORKER_EXITING;
		w->busy = false;
	}
	LWLockRelease(SegvecJobs->lock);
	return what;
}

/*
 * job_merging (segvec_merge_build_hook): the compaction job this worker runs starts (on) or ends
 * building a merge of segments; meanwhile another worker may compact the
 * same index (JobTwinRunning), so the launcher is woken.  Does nothing
 * outside a worker (ft.compact, VACUUM, CREATE INDEX).
 */
static void
job_merging(bool on)
{
	Latch	   *latch = NULL;
	int			idx;

	if (my_worker < 0 || SegvecJobs == NULL)
		return;
	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	idx = SegvecJobs->workers[my_worker].job;
	if (idx >= 0 && SegvecJobs->jobs[idx].state == SEGVEC_JOB_RUNNING &&
		SegvecJobs->jobs[idx].worker == my_worker &&
		SegvecJobs->jobs[idx].kind == SEGVEC_JOB_COMPACT)
	{
		SegvecJobs->jobs[idx].merging = on;
		if (on)
			latch = SegvecJobs->launcher_latch;
	}
	LWLockRelease(SegvecJobs->lock);
	if (latch)
		SetLatch(latch);
}

static void
run_claimed_job(int idx, SegvecJobSlot *job)
{
	bool		changed;
	bool		given_up;
	JobOutcome	outcome;
	Latch	   *latch;
	int			rows;

	outcome = JobRun(job->indexid, job->kind, job->force, job->settle,
					 job->settle_mark, job->batch_rows,
					 job->past_long, &changed, &rows);

	/*
	 * A finished compaction asks for a keymap snapshot, before its own slot
	 * is freed: the table never looks idle in between.
	 */
	if (outcome == JOB_DONE && job->kind == SEGVEC_JOB_COMPACT && changed)
		(void) SegvecSubmitJob(job->indexid, SEGVEC_JOB_SNAPSHOT);

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	given_up = JobFinishLocked(idx, outcome, rows, GetCurrentTimestamp());
	SegvecJobs->workers[my_worker].job = -1;
	SegvecJobs->workers[my_worker].busy = false;
	latch = SegvecJobs->launcher_latch;
	LWLockRelease(SegvecJobs->lock);

	/* a job of the same key, or a merge slot, may have become free */
	if (latch)
		SetLatch(latch);

	if (given_up)
		ereport(LOG,
				(errmsg("segvec %s job for index %u given up after %d attempts",
						SegvecJobKindName(job->kind), job->indexid,
						SEGVEC_JOB_MAX_ATTEMPTS),
				 job->kind == SEGVEC_JOB_MERGE ?
				 errdetail("Its rows stay queued: the next ft.add or ft.del of the index tries again after the back-off, and ft.flush() applies them now.") : 0));
}

/*
 * The segvec indexes of this database (not temporary ones), as a list
 * allocated in ctx; NIL after an error (logged).
 */
static List *
sweep_index_list(MemoryContext ctx)
{
	List	   *volatile indexes = NIL;

	PG_TRY();
	{
		Oid			amoid;

		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "segvec sweep");
		amoid = get_am_oid("segvec", true);
		if (OidIsValid(amoid))
		{
			Relation	rel = table_open(RelationRelationId, AccessShareLock);
			TableScanDesc scan = table_beginscan_catalog(rel, 0, NULL);
			HeapTuple	tup;

			while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
			{
				Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

				/* partitioned indexes too: they have queues to merge */
				if ((c->relkind == RELKIND_INDEX ||
					 c->relkind == RELKIND_PARTITIONED_INDEX) &&
					c->relam == amoid &&
					c->relpersistence != RELPERSISTENCE_TEMP)
				{
					MemoryContext old = MemoryContextSwitchTo(ctx);

					indexes = lappend_oid(indexes, c->oid);
					MemoryContextSwitchTo(old);
				}
			}
			table_endscan(scan);
			table_close(rel, AccessShareLock);
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		HOLD_INTERRUPTS();
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		RESUME_INTERRUPTS();
		indexes = NIL;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(ctx);
	return indexes;
}

/*
 * A sweep: requests of this database did not fit in the job table, or
 * (startup) the server started and the launcher asks every database for
 * what was submitted before the stop, so visit every segvec index of the
 * database and do the kinds in the mask (a compaction only where the
 * mutable segment is over the threshold).
 */
static void
run_sweep(uint32 kinds, bool startup)
{
	List	   *indexes = sweep_index_list(CurrentMemoryContext);
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Oid			indexid = lfirst_oid(lc);
		int			k;

		for (k = 0; k < SEGVEC_NUM_JOB_KINDS; k++)
		{
			bool		changed;
			JobOutcome	outcome;
			int			rows;

			if ((kinds & (1 << k)) == 0)
				continue;
			CHECK_FOR_INTERRUPTS();
			outcome = JobRun(indexid, (SegvecJobKind) k, false, false, 0,
							 0, false,
							 &changed, &rows);
			LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
			/* a sweep's job counts as submitted, so that run <= submitted */
			SegvecJobs->counters.submitted[k]++;
			JobCountOutcomeLocked((SegvecJobKind) k, outcome);
			if (k == SEGVEC_JOB_MERGE)
				(void) JobNoteMergeOutcomeLocked(MyDatabaseId, indexid,
												 outcome, rows,
												 GetCurrentTimestamp());
			LWLockRelease(SegvecJobs->lock);
			if (outcome == JOB_DONE && k == SEGVEC_JOB_COMPACT && changed)
				(void) SegvecSubmitJob(indexid, SEGVEC_JOB_SNAPSHOT);
			/* a merge that ran out of time is retried after its back-off */
			if (outcome == JOB_TIMED_OUT)
				(void) SegvecSubmitJob(indexid, SEGVEC_JOB_MERGE);
		}
	}

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	SegvecJobs->counters.sweeps++;
	SegvecJobs->workers[my_worker].busy = false;
	LWLockRelease(SegvecJobs->lock);

	if (startup)
		ereport(DEBUG1,
				(errmsg_internal("segvec swept %d index(es) of database %u (a start or periodic sweep)",
								 list_length(indexes), MyDatabaseId)));
	else
		ereport(LOG,
				(errmsg("segvec swept %d index(es) of database %u: the job table was full",
						list_length(indexes), MyDatabaseId)));
}

/*
 * The worker's lock on its database.  A command that needs the database
 * to itself (DROP DATABASE, ALTER DATABASE ... RENAME or SET TABLESPACE)
 * locks it, then counts the other backends connected to it and fails if
 * they have not left after 5 seconds.  Autovacuum workers it signals; a
 * segvec worker would go on with the jobs of the database.  So the worker
 * holds a session lock on the database that such a command waits for
 * while a job runs, and leaves before its next job when the lock is not
 * to be had or someone waits for it (lock_database).
 */
static void
database_locktag(LOCKTAG *tag)
{
	SET_LOCKTAG_OBJECT(*tag, InvalidOid, DatabaseRelationId, MyDatabaseId, 0);
}

/*
 * Hold the database's lock, unless a command waits to have the database
 * to itself (then release it and return false).  Taken without waiting:
 * once such a command holds it, waiting for it would keep it counting
 * this worker.  A job that failed lost the lock (a transaction abort
 * releases session locks too), so it is taken again here.
 */
static bool
lock_database(void)
{
	LOCKTAG		tag;

	database_locktag(&tag);
	if (!SegvecLockHeldByMe(&tag, AccessShareLock) &&
		LockAcquire(&tag, AccessShareLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		return false;
	if (LockHasWaiters(&tag, AccessShareLock, true))
	{
		LockRelease(&tag, AccessShareLock, true);
		return false;
	}
	return true;
}

/*
 * Release the database's lock, if held.  A session lock is released by a
 * transaction abort only, and a worker usually exits outside a
 * transaction: without this the lock would stay in the shared lock table
 * under the PGPROC the next process gets.
 */
static void
unlock_database(int code, Datum arg)
{
	LOCKTAG		tag;

	database_locktag(&tag);
	if (SegvecLockHeldByMe(&tag, AccessShareLock))
		LockRelease(&tag, AccessShareLock, true);
}

/*
 * SegvecWorkerMain: entry point of a per-database worker.  main_arg is its
 * slot in SegvecJobs->workers, bgw_extra the slot's generation at launch.
 */
void
SegvecWorkerMain(Datum main_arg)
{
	int			slot = DatumGetInt32(main_arg);
	uint32		gen;
	Oid			dboid = InvalidOid;
	MemoryContext loop_ctx;
	bool		first = true;

	memcpy(&gen, MyBgworkerEntry->bgw_extra, sizeof(uint32));
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	if (SegvecJobs == NULL || slot < 0 || slot >= SEGVEC_MAX_WORKERS_LIMIT)
		proc_exit(0);

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	if (SegvecJobs->workers[slot].state == SEGVEC_WORKER_STARTING &&
		SegvecJobs->workers[slot].generation == gen)
	{
		SegvecJobs->workers[slot].state = SEGVEC_WORKER_ATTACHED;
		SegvecJobs->workers[slot].pid = MyProcPid;
		dboid = SegvecJobs->workers[slot].dboid;
		my_worker = slot;
		segvec_merge_build_hook = job_merging;
		my_generation = gen;
	}
	LWLockRelease(SegvecJobs->lock);
	if (my_worker < 0)
		proc_exit(0);			/* launched by a launcher since replaced */
	before_shmem_exit(worker_onexit, 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	SegvecJobs->workers[my_worker].connected = true;
	LWLockRelease(SegvecJobs->lock);

	/* the database's lock, taken before each job (lock_database) */
	before_shmem_exit(unlock_database, 0);

	/* jobs wait for locks as long as it takes, like autovacuum */
	SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("lock_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("idle_in_transaction_session_timeout", "0",
					PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_isolation", "read committed",
					PGC_SUSET, PGC_S_OVERRIDE);

	loop_ctx = AllocSetContextCreate(TopMemoryContext, "segvec worker",
									 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(loop_ctx);

	for (;;)
	{
		SegvecJobSlot job;
		int			idx = -1;
		uint32		sweep_kinds = 0;
		bool		sweep_startup = false;
		WorkKind	what;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		MemoryContextReset(loop_ctx);

		if (!lock_database())
		{
			ereport(DEBUG1,
					(errmsg_internal("segvec worker leaves database %u, which a command waits to have to itself",
									 MyDatabaseId)));
			break;
		}
		look_up_owners();
		what = next_work(&idx, &job, &sweep_kinds, &sweep_startup, !first);
		first = false;
		if (what == WORK_JOB)
			run_claimed_job(idx, &job);
		else if (what == WORK_SWEEP)
			run_sweep(sweep_kinds, sweep_startup);
		else
			break;
	}

	proc_exit(0);
}

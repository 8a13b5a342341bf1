/*-------------------------------------------------------------------------
 *
 * jobs_worker.c
 *	  The segvec launcher and the per-database workers that run the jobs of
 *	  the job table (jobs.c).
 *
 * The launcher is a static background worker (shared memory only, no
 * database).  It sleeps on its latch; every submit sets that latch, and
 * so do workers when they finish a job or exit.  When it wakes it starts
 * dynamic workers for databases whose runnable jobs outnumber the idle
 * workers serving them, at most segvec.max_workers in all.
 *
 * A worker connects to one database, then loops: under the lock it takes
 * the oldest runnable pending job of its database out of the table (marks
 * it RUNNING), runs it in a transaction, and records the outcome; when
 * there is none, it runs its database's sweep if one was requested, and
 * otherwise marks itself EXITING under the same lock and exits.  Since
 * "no work, so exit" is decided under the lock that submits take, a
 * submit either lands before (and the worker takes it) or after (and
 * wakes the launcher, which sees one runnable job and no idle worker and
 * starts one): no request waits for a worker that is going away.
 *
 * Errors in a job are caught: the transaction is aborted, the error
 * logged, the job counted as failed and put back as pending with a
 * backoff, at most SEGVEC_JOB_MAX_ATTEMPTS times.  A worker that dies
 * (FATAL, e.g. pg_terminate_backend) does the same for its job in its exit
 * callback.  A worker that cannot connect to its database (dropped) drops
 * that database's pending jobs.  A job whose index is gone, or is not a
 * segvec index any more, ends quietly (counted as skipped).
 *
 * Shutdown: SIGTERM sets a flag (launcher) or ProcDiePending (workers,
 * through die()) and sets the latch; every sleep is a WaitLatch with
 * WL_EXIT_ON_PM_DEATH that rechecks after the latch is reset, and long
 * loops in jobs call CHECK_FOR_INTERRUPTS, so neither sleeps through it.
 *
 * src/jobs_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/heapam.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
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
#include "utils/timestamp.h"

#include "jobs.h"
#include "keymap.h"
#include "segvec.h"

/* How a job ended */
typedef enum JobOutcome
{
	JOB_DONE,					/* ran to the end */
	JOB_SKIPPED,				/* nothing to do: index gone, not segvec... */
	JOB_FAILED					/* error */
} JobOutcome;

/* What next_work found */
typedef enum WorkKind
{
	WORK_NONE,
	WORK_JOB,
	WORK_SWEEP
} WorkKind;

/* Launcher state: handles of the workers it started */
static BackgroundWorkerHandle *worker_handles[SEGVEC_MAX_WORKERS_LIMIT];
static uint32 worker_handle_gen[SEGVEC_MAX_WORKERS_LIMIT];

/* Worker state */
static int	my_worker = -1;		/* our slot in SegvecJobs->workers */
static uint32 my_generation = 0;
static bool in_job = false;		/* inside run_job: the delay point is live */
static const char *job_index_name = NULL;	/* for the error context */
static SegvecJobKind job_kind;
static Oid	job_indexid;

/* ----------------
 * Registration
 * ----------------
 */

/*
 * SegvecRegisterLauncher: register the launcher (from _PG_init while the
 * library is preloaded).  Restarted 10 s after it dies.
 */
void
SegvecRegisterLauncher(void)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 10;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "segvec");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "SegvecLauncherMain");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "segvec launcher");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "segvec launcher");
	bgw.bgw_main_arg = (Datum) 0;
	bgw.bgw_notify_pid = 0;
	RegisterBackgroundWorker(&bgw);
}

/* ----------------
 * Job table helpers; the caller holds SegvecJobs->lock exclusively
 * ----------------
 */

/* Is a job with the key of s running? */
static bool
twin_running(const SegvecJobSlot *s)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *t = &SegvecJobs->jobs[i];

		if (t->state == SEGVEC_JOB_RUNNING && t->dboid == s->dboid &&
			t->indexid == s->indexid && t->kind == s->kind)
			return true;
	}
	return false;
}

/* The pending job with the key of s, other than s, or NULL */
static SegvecJobSlot *
twin_pending(const SegvecJobSlot *s)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *t = &SegvecJobs->jobs[i];

		if (t != s && t->state == SEGVEC_JOB_PENDING &&
			t->dboid == s->dboid && t->indexid == s->indexid &&
			t->kind == s->kind)
			return t;
	}
	return NULL;
}

/* Can a worker take s now?  merge_ok: a merge slot is free */
static bool
runnable(const SegvecJobSlot *s, TimestampTz now, bool merge_ok)
{
	return s->state == SEGVEC_JOB_PENDING && s->not_before <= now &&
		(merge_ok || s->kind != SEGVEC_JOB_MERGE) && !twin_running(s);
}

/* Running jobs of a kind */
static int
running_jobs(SegvecJobKind kind)
{
	int			i,
				n = 0;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		if (SegvecJobs->jobs[i].state == SEGVEC_JOB_RUNNING &&
			SegvecJobs->jobs[i].kind == kind)
			n++;
	}
	return n;
}

/*
 * How many merge jobs may run at once: segvec.merge_concurrency (merge.c
 * defines it; read by name, so the scheduler does not depend on merge.c).
 * Call without the lock held.
 */
static int
merge_limit(void)
{
	const char *value = GetConfigOption("segvec.merge_concurrency", true,
										false);
	int			n = value ? atoi(value) : 0;

	return n > 0 ? n : INT_MAX;
}

static int
live_workers(void)
{
	int			i,
				n = 0;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		if (SegvecJobs->workers[i].state != SEGVEC_WORKER_FREE)
			n++;
	}
	return n;
}

/* A worker that will take a job of dboid without a new launch */
static bool
idle_worker_for(Oid dboid, int *count)
{
	int			i,
				n = 0;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &SegvecJobs->workers[i];

		if (w->dboid != dboid)
			continue;
		if (w->state == SEGVEC_WORKER_STARTING ||
			(w->state == SEGVEC_WORKER_ATTACHED && !w->busy))
			n++;
	}
	if (count)
		*count = n;
	return n > 0;
}

/* Any worker (starting, idle or busy) for dboid, but one on its way out */
static bool
any_worker_for(Oid dboid)
{
	int			i;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &SegvecJobs->workers[i];

		if (w->dboid == dboid &&
			(w->state == SEGVEC_WORKER_STARTING ||
			 w->state == SEGVEC_WORKER_ATTACHED))
			return true;
	}
	return false;
}

/* A worker other than except that is connected to dboid */
static bool
any_worker_connected_to(Oid dboid, int except)
{
	int			i;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &SegvecJobs->workers[i];

		if (i != except && w->dboid == dboid &&
			w->state == SEGVEC_WORKER_ATTACHED && w->connected)
			return true;
	}
	return false;
}

static SegvecSweepSlot *
sweep_for(Oid dboid)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		if (SegvecJobs->sweeps[i].dboid == dboid)
			return &SegvecJobs->sweeps[i];
	}
	return NULL;
}

/* Back-off before attempt number attempts + 1, in ms */
static long
retry_delay_ms(int attempts)
{
	long		ms = (long) segvec_naptime * 1000L;

	while (--attempts > 0 && ms < 600 * 1000L)
		ms *= 2;
	return Min(ms, 600 * 1000L);
}

/*
 * The running job in slot idx ended with outcome: count it, free the slot,
 * or, after a failure, put it back as pending with a back-off (unless a
 * newer request for the key is pending already, which covers it, or it
 * has had all its attempts).  Returns true if it was given up.
 */
static bool
finish_job_locked(int idx, JobOutcome outcome, TimestampTz now)
{
	SegvecJobSlot *s = &SegvecJobs->jobs[idx];
	SegvecJobKind kind = s->kind;
	bool		given_up = false;

	switch (outcome)
	{
		case JOB_DONE:
			SegvecJobs->counters.run[kind]++;
			break;
		case JOB_SKIPPED:
			SegvecJobs->counters.skipped[kind]++;
			break;
		case JOB_FAILED:
			SegvecJobs->counters.failed[kind]++;
			if (twin_pending(s) != NULL)
				break;
			if (s->attempts + 1 < SEGVEC_JOB_MAX_ATTEMPTS)
			{
				s->state = SEGVEC_JOB_PENDING;
				s->attempts++;
				s->worker = -1;
				s->started_at = 0;
				s->not_before = TimestampTzPlusMilliseconds(now,
															retry_delay_ms(s->attempts));
				return false;
			}
			SegvecJobs->counters.dropped[kind]++;
			given_up = true;
			break;
	}
	memset(s, 0, sizeof(SegvecJobSlot));
	s->state = SEGVEC_JOB_FREE;
	s->worker = -1;
	return given_up;
}

static void
count_outcome_locked(SegvecJobKind kind, JobOutcome outcome)
{
	if (outcome == JOB_DONE)
		SegvecJobs->counters.run[kind]++;
	else if (outcome == JOB_SKIPPED)
		SegvecJobs->counters.skipped[kind]++;
	else
		SegvecJobs->counters.failed[kind]++;
}

/* ----------------
 * Launcher
 * ----------------
 */

/* SIGUSR1: a worker we started changed state (bgw_notify_pid) */
static void
launcher_sigusr1(SIGNAL_ARGS)
{
	int			save_errno = errno;

	SetLatch(MyLatch);
	errno = save_errno;
}

static void
launcher_detach(int code, Datum arg)
{
	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	if (SegvecJobs->launcher_pid == MyProcPid)
	{
		SegvecJobs->launcher_latch = NULL;
		SegvecJobs->launcher_pid = 0;
	}
	LWLockRelease(SegvecJobs->lock);
}

/*
 * Forget workers that have stopped.  One that stopped before attaching to
 * its slot (could not be forked, or exited at once) leaves the slot in
 * STARTING: free it here.  One that attached freed its slot itself.
 */
static void
reap_workers(void)
{
	int			i;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		pid_t		pid;

		if (worker_handles[i] == NULL)
			continue;
		if (GetBackgroundWorkerPid(worker_handles[i], &pid) != BGWH_STOPPED)
			continue;
		pfree(worker_handles[i]);
		worker_handles[i] = NULL;

		LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
		if (SegvecJobs->workers[i].generation == worker_handle_gen[i] &&
			SegvecJobs->workers[i].state == SEGVEC_WORKER_STARTING)
		{
			SegvecJobs->workers[i].state = SEGVEC_WORKER_FREE;
			SegvecJobs->workers[i].dboid = InvalidOid;
		}
		LWLockRelease(SegvecJobs->lock);
	}
}

/* Per-database demand, built by the launcher under the lock */
typedef struct DbDemand
{
	Oid			dboid;
	int			demand;			/* runnable jobs, plus 1 for a sweep */
	int			supply;			/* starting or idle workers */
	TimestampTz oldest;			/* oldest runnable request */
} DbDemand;

static int
add_demand(DbDemand *dbs, int ndbs, Oid dboid, TimestampTz when)
{
	int			i;

	for (i = 0; i < ndbs; i++)
	{
		if (dbs[i].dboid == dboid)
		{
			dbs[i].demand++;
			dbs[i].oldest = Min(dbs[i].oldest, when);
			return ndbs;
		}
	}
	dbs[ndbs].dboid = dboid;
	dbs[ndbs].demand = 1;
	dbs[ndbs].supply = 0;
	dbs[ndbs].oldest = when;
	return ndbs + 1;
}

/*
 * Start workers where needed: for each database, oldest request first,
 * while its runnable jobs (and sweep) outnumber its idle workers and fewer
 * than segvec.max_workers run.  Returns how long to sleep, in ms: until
 * the next retry of a failed job, at most segvec.naptime.
 */
static long
launch_workers(DbDemand *dbs)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz wake = TimestampTzPlusMilliseconds(now,
												   (long) segvec_naptime * 1000L);
	int			launch_slot[SEGVEC_MAX_WORKERS_LIMIT];
	uint32		launch_gen[SEGVEC_MAX_WORKERS_LIMIT];
	Oid			launch_db[SEGVEC_MAX_WORKERS_LIMIT];
	int			nlaunch = 0;
	int			ndbs = 0;
	int			nworkers;
	int			i;
	long		secs;
	int			usecs;

	int			merge_room = merge_limit();

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	/* merges beyond segvec.merge_concurrency wait: not a demand */
	if (merge_room < INT_MAX)
		merge_room -= running_jobs(SEGVEC_JOB_MERGE);
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->state != SEGVEC_JOB_PENDING)
			continue;
		if (s->not_before > now)
			wake = Min(wake, s->not_before);
		else if (!twin_running(s) &&
				 (s->kind != SEGVEC_JOB_MERGE || merge_room-- > 0))
			ndbs = add_demand(dbs, ndbs, s->dboid, s->submitted_at);
	}
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecSweepSlot *s = &SegvecJobs->sweeps[i];

		if (s->dboid != InvalidOid)
			ndbs = add_demand(dbs, ndbs, s->dboid, s->requested_at);
	}
	for (i = 0; i < ndbs; i++)
		idle_worker_for(dbs[i].dboid, &dbs[i].supply);

	nworkers = live_workers();
	while (nworkers < segvec_max_workers)
	{
		DbDemand   *best = NULL;
		SegvecWorkerSlot *w = NULL;
		int			slot;

		for (i = 0; i < ndbs; i++)
		{
			if (dbs[i].demand > dbs[i].supply &&
				(best == NULL || dbs[i].oldest < best->oldest))
				best = &dbs[i];
		}
		if (best == NULL)
			break;
		for (slot = 0; slot < SEGVEC_MAX_WORKERS_LIMIT; slot++)
		{
			if (SegvecJobs->workers[slot].state == SEGVEC_WORKER_FREE)
			{
				w = &SegvecJobs->workers[slot];
				break;
			}
		}
		if (w == NULL)
			break;
		w->state = SEGVEC_WORKER_STARTING;
		w->generation++;
		w->dboid = best->dboid;
		w->pid = 0;
		w->connected = false;
		w->busy = false;
		w->job = -1;
		w->launched_at = now;
		launch_slot[nlaunch] = slot;
		launch_gen[nlaunch] = w->generation;
		launch_db[nlaunch] = best->dboid;
		nlaunch++;
		best->supply++;
		nworkers++;
	}
	LWLockRelease(SegvecJobs->lock);

	for (i = 0; i < nlaunch; i++)
	{
		BackgroundWorker bgw;
		BackgroundWorkerHandle *handle;
		int			slot = launch_slot[i];
		bool		ok;

		memset(&bgw, 0, sizeof(bgw));
		bgw.bgw_flags = BGWORKER_SHMEM_ACCESS |
			BGWORKER_BACKEND_DATABASE_CONNECTION;
		bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
		bgw.bgw_restart_time = BGW_NEVER_RESTART;
		snprintf(bgw.bgw_library_name, BGW_MAXLEN, "segvec");
		snprintf(bgw.bgw_function_name, BGW_MAXLEN, "SegvecWorkerMain");
		snprintf(bgw.bgw_name, BGW_MAXLEN,
				 "segvec worker for database %u", launch_db[i]);
		snprintf(bgw.bgw_type, BGW_MAXLEN, "segvec worker");
		bgw.bgw_main_arg = Int32GetDatum(slot);
		memcpy(bgw.bgw_extra, &launch_gen[i], sizeof(uint32));
		bgw.bgw_notify_pid = MyProcPid;

		ok = RegisterDynamicBackgroundWorker(&bgw, &handle);

		LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
		if (ok)
			SegvecJobs->counters.workers_started++;
		else if (SegvecJobs->workers[slot].generation == launch_gen[i] &&
				 SegvecJobs->workers[slot].state == SEGVEC_WORKER_STARTING)
		{
			SegvecJobs->workers[slot].state = SEGVEC_WORKER_FREE;
			SegvecJobs->workers[slot].dboid = InvalidOid;
		}
		LWLockRelease(SegvecJobs->lock);

		if (!ok)
		{
			/* undo the rest too, and try again after the naptime */
			static TimestampTz last_warning = 0;

			if (TimestampDifferenceExceeds(last_warning, now, 60 * 1000))
			{
				ereport(WARNING,
						(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
						 errmsg("could not start a segvec background worker"),
						 errhint("Increase max_worker_processes; segvec needs one for its launcher and up to segvec.max_workers more.")));
				last_warning = now;
			}
			for (i = i + 1; i < nlaunch; i++)
			{
				slot = launch_slot[i];
				LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
				if (SegvecJobs->workers[slot].generation == launch_gen[i] &&
					SegvecJobs->workers[slot].state == SEGVEC_WORKER_STARTING)
				{
					SegvecJobs->workers[slot].state = SEGVEC_WORKER_FREE;
					SegvecJobs->workers[slot].dboid = InvalidOid;
				}
				LWLockRelease(SegvecJobs->lock);
			}
			break;
		}
		if (worker_handles[slot] != NULL)
			pfree(worker_handles[slot]);
		worker_handles[slot] = handle;
		worker_handle_gen[slot] = launch_gen[i];
	}

	TimestampDifference(now, wake, &secs, &usecs);
	return Max(secs * 1000L + usecs / 1000, 10L);
}

/*
 * SegvecLauncherMain: entry point of the launcher.
 */
void
SegvecLauncherMain(Datum main_arg)
{
	DbDemand   *dbs;
	int			i;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGUSR1, launcher_sigusr1);
	BackgroundWorkerUnblockSignals();

	if (SegvecJobs == NULL)
		proc_exit(0);

	dbs = MemoryContextAlloc(TopMemoryContext,
							 sizeof(DbDemand) * 2 * SegvecJobs->max_jobs);

	/*
	 * Take over.  Workers a previous launcher registered but that never
	 * attached are forgotten (their generation no longer matches when they
	 * start, so they exit at once); attached ones free their slots
	 * themselves.
	 */
	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	SegvecJobs->launcher_latch = MyLatch;
	SegvecJobs->launcher_pid = MyProcPid;
	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		if (SegvecJobs->workers[i].state == SEGVEC_WORKER_STARTING)
		{
			SegvecJobs->workers[i].state = SEGVEC_WORKER_FREE;
			SegvecJobs->workers[i].dboid = InvalidOid;
		}
	}
	LWLockRelease(SegvecJobs->lock);
	before_shmem_exit(launcher_detach, 0);

	ereport(DEBUG1, (errmsg_internal("segvec launcher started")));

	for (;;)
	{
		long		timeout;

		/*
		 * Reset the latch before looking at the state: a submit or signal
		 * after this point sets it again and the WaitLatch below returns.
		 */
		ResetLatch(MyLatch);

		if (ShutdownRequestPending)
			break;
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		reap_workers();
		timeout = launch_workers(dbs);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
	}

	proc_exit(0);
}

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
			given_up = finish_job_locked(w->job, JOB_FAILED, now);
		}
		if (!w->connected && !any_worker_connected_to(w->dboid, my_worker))
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
			sw = sweep_for(dboid);
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
other_database_starving(TimestampTz now, bool merge_ok)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->dboid != MyDatabaseId && runnable(s, now, merge_ok) &&
			!any_worker_for(s->dboid))
			return true;
	}
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecSweepSlot *s = &SegvecJobs->sweeps[i];

		if (s->dboid != InvalidOid && s->dboid != MyDatabaseId &&
			!any_worker_for(s->dboid))
			return true;
	}
	return false;
}

/*
 * Decide, under the lock, what this worker does next: take the oldest
 * runnable pending job of its database out of the table (it becomes
 * RUNNING, *job_idx its slot and *job a copy), or take its database's
 * sweep request (*sweep_kinds), or, if there is neither, mark itself
 * EXITING.  It also exits, after its first job, to make room when
 * segvec.max_workers was lowered, or when every worker is taken and
 * another database has work but no worker.
 */
static WorkKind
next_work(int *job_idx, SegvecJobSlot *job, uint32 *sweep_kinds, bool can_yield)
{
	TimestampTz now = GetCurrentTimestamp();
	int			max_merges = merge_limit();
	SegvecWorkerSlot *w;
	SegvecSweepSlot *sw;
	WorkKind	what = WORK_NONE;
	int			best = -1;
	bool		merge_ok;
	int			i;

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	w = &SegvecJobs->workers[my_worker];
	merge_ok = running_jobs(SEGVEC_JOB_MERGE) < max_merges;

	if (can_yield &&
		(live_workers() > segvec_max_workers ||
		 (live_workers() >= segvec_max_workers &&
		  other_database_starving(now, merge_ok))))
		goto done;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->dboid == MyDatabaseId && runnable(s, now, merge_ok) &&
			(best < 0 || s->submitted_at < SegvecJobs->jobs[best].submitted_at))
			best = i;
	}
	if (best >= 0)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[best];

		s->state = SEGVEC_JOB_RUNNING;
		s->worker = my_worker;
		s->started_at = now;
		w->job = best;
		w->busy = true;
		*job_idx = best;
		*job = *s;
		what = WORK_JOB;
	}
	else if ((sw = sweep_for(MyDatabaseId)) != NULL)
	{
		*sweep_kinds = sw->kinds;
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
 * Does the mutable segment hold at least limit docs?  Counts the docs
 * (first pieces) page by page from the head, stopping at limit, so it
 * reads at most about a threshold's worth of pages.  The page-based
 * estimate the inserts use can count pages VACUUM has unlinked, or a
 * prefix a compaction is about to install; this is the real count.
 * No lock beyond the page share locks: it only decides whether to start.
 */
static bool
mutable_docs_at_least(Relation index, int64 limit)
{
	SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
	BlockNumber blkno;
	int64		n = 0;

	if (limit <= 0)
		return true;
	SegvecGetMetaInfo(index, info);
	blkno = info->mutable_head;
	pfree(info);
	while (blkno != InvalidBlockNumber && n < limit)
	{
		Buffer		buf;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		blkno = SegvecPageGetOpaque(page)->nextblkno;
		if (SegvecPageIsMutable(page) && !SegvecPageIsDeleted(page))
		{
			OffsetNumber off,
						maxoff = PageGetMaxOffsetNumber(page);

			for (off = FirstOffsetNumber; off <= maxoff; off++)
			{
				ItemId		iid = PageGetItemId(page, off);

				if (ItemIdIsUsed(iid) &&
					((SegvecMutableTuple) PageGetItem(page, iid))->pieceno == 0)
					n++;
			}
		}
		UnlockReleaseBuffer(buf);
	}
	return n >= limit;
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
	if (index->rd_rel->relkind != RELKIND_INDEX || index->rd_index == NULL ||
		index->rd_index->indrelid != heapid || index->rd_indam == NULL ||
		index->rd_indam->ambuild != segvecbuild ||
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
		!mutable_docs_at_least(index, SegvecCompactThreshold(index)))
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
			SegvecJobDelayPoint();
			SegvecKeymapSnapshot(index);
			UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
			break;
		case SEGVEC_JOB_MERGE:
			/* SegvecMergePending has its own delay point */
			SegvecMergePending(index);
			break;
		default:
			elog(ERROR, "unknown segvec job kind %d", (int) kind);
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
static JobOutcome
run_job(Oid indexid, SegvecJobKind kind, bool force, bool *changed)
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
		in_job = true;
		outcome = run_job_in_xact(indexid, kind, force, changed);
		in_job = false;
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		in_job = false;
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
static void
run_claimed_job(int idx, SegvecJobSlot *job)
{
	bool		changed;
	bool		given_up;
	JobOutcome	outcome;
	Latch	   *latch;

	outcome = run_job(job->indexid, job->kind, job->force, &changed);

	/*
	 * A finished compaction asks for a keymap snapshot, before its own slot
	 * is freed: the table never looks idle in between.
	 */
	if (outcome == JOB_DONE && job->kind == SEGVEC_JOB_COMPACT && changed)
		(void) SegvecSubmitJob(job->indexid, SEGVEC_JOB_SNAPSHOT);

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	given_up = finish_job_locked(idx, outcome, GetCurrentTimestamp());
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
						SEGVEC_JOB_MAX_ATTEMPTS)));
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

				if (c->relkind == RELKIND_INDEX && c->relam == amoid &&
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
 * A sweep: requests of this database did not fit in the job table, so
 * visit every segvec index of the database and do the kinds in the mask
 * (a compaction only where the mutable segment is over the threshold).
 */
static void
run_sweep(uint32 kinds)
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

			if ((kinds & (1 << k)) == 0)
				continue;
			CHECK_FOR_INTERRUPTS();
			outcome = run_job(indexid, (SegvecJobKind) k, false, &changed);
			LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
			count_outcome_locked((SegvecJobKind) k, outcome);
			LWLockRelease(SegvecJobs->lock);
			if (outcome == JOB_DONE && k == SEGVEC_JOB_COMPACT && changed)
				(void) SegvecSubmitJob(indexid, SEGVEC_JOB_SNAPSHOT);
		}
	}

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	SegvecJobs->counters.sweeps++;
	SegvecJobs->workers[my_worker].busy = false;
	LWLockRelease(SegvecJobs->lock);

	ereport(LOG,
			(errmsg("segvec swept %d index(es) of database %u: the job table was full",
					list_length(indexes), MyDatabaseId)));
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
		WorkKind	what;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		MemoryContextReset(loop_ctx);

		what = next_work(&idx, &job, &sweep_kinds, !first);
		first = false;
		if (what == WORK_JOB)
			run_claimed_job(idx, &job);
		else if (what == WORK_SWEEP)
			run_sweep(sweep_kinds);
		else
			break;
	}

	proc_exit(0);
}

/* ----------------
 * Inside jobs
 * ----------------
 */

/* SegvecInBackgroundJob: true while this process runs a background job */
bool
SegvecInBackgroundJob(void)
{
	return in_job;
}

/*
 * SegvecJobDelayPoint: see jobs.h.  Sleeps segvec.job_delay_ms (re-read on
 * SIGHUP, so a test can cut a sleep short) on the latch, checking for
 * interrupts, so a shutdown or cancel ends it at once.
 */
void
SegvecJobDelayPoint(void)
{
	TimestampTz start;

	if (!in_job)
		return;

	start = GetCurrentTimestamp();
	for (;;)
	{
		long		remaining;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		remaining = segvec_job_delay_ms -
			TimestampDifferenceMilliseconds(start, GetCurrentTimestamp());
		if (remaining <= 0)
			break;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 remaining, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

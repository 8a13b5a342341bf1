/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The segvec launcher: a static background worker (shared memory only,
 *	  no database) that starts the per-database workers (worker.c).
 *
 * At each server start (crash restarts included, when the job table in
 * shared memory starts empty) it asks for a sweep of every database that
 * takes connections, so that work submitted before the stop and not done
 * (pending upserts, a mutable segment over its threshold, due merges) is
 * found again: it connects to no database, to read pg_database.
 *
 * It sleeps on its latch; every submit sets that latch, and so do workers
 * when they finish a job or exit.  When it wakes it starts dynamic workers
 * for databases whose runnable jobs outnumber the idle workers serving
 * them, at most segvec.max_workers in all.  SIGTERM sets a flag and the
 * latch; every sleep is a WaitLatch with WL_EXIT_ON_PM_DEATH that
 * rechecks after the latch is reset, so it never sleeps through a
 * shutdown, nor through a ProcSignalBarrier (DROP DATABASE waits for every
 * process to absorb one).
 *
 * src/jobs/launcher.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/procsignal.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "jobs/jobs_int.h"

/* Launcher state: handles of the workers it started */
static BackgroundWorkerHandle *worker_handles[SEGVEC_MAX_WORKERS_LIMIT];
static uint32 worker_handle_gen[SEGVEC_MAX_WORKERS_LIMIT];

/* ----------------
 * Launcher
 * ----------------
 */

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
	int			fresh;			/* runnable jobs of owners with no long job */
	int			supply;			/* starting or idle workers */
	TimestampTz oldest;			/* oldest runnable request */
} DbDemand;

static int
add_demand(DbDemand *dbs, int ndbs, Oid dboid, TimestampTz when, bool fresh)
{
	int			i;

	for (i = 0; i < ndbs; i++)
	{
		if (dbs[i].dboid == dboid)
		{
			dbs[i].demand++;
			dbs[i].fresh += fresh ? 1 : 0;
			dbs[i].oldest = Min(dbs[i].oldest, when);
			return ndbs;
		}
	}
	dbs[ndbs].dboid = dboid;
	dbs[ndbs].demand = 1;
	dbs[ndbs].fresh = fresh ? 1 : 0;
	dbs[ndbs].supply = 0;
	dbs[ndbs].oldest = when;
	return ndbs + 1;
}

/*
 * Start workers where needed: for each database, oldest request first,
 * while its runnable jobs (and sweep) outnumber its idle workers and fewer
 * than segvec.max_workers run.  Workers running long jobs (schedule.c) do
 * not count against segvec.max_workers for the jobs of owners with no
 * long job: for those up to segvec.max_workers more workers may run.
 * Returns how long to sleep, in ms: until the next retry of a failed job
 * or the moment a running job becomes long, at most segvec.naptime.
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
	int			max_merges = JobsMergeLimit();
	int			merges_counted = 0;
	int			nlong;

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->state == SEGVEC_JOB_RUNNING && segvec_job_long_after > 0 &&
			!JobIsLong(s, now))
			wake = Min(wake, TimestampTzPlusMilliseconds(s->started_at,
														 segvec_job_long_after));
		if (s->state != SEGVEC_JOB_PENDING)
			continue;
		if (s->not_before > now)
			wake = Min(wake, s->not_before);
		else if (!JobTwinRunning(s))
		{
			/* merges beyond segvec.merge_concurrency wait: not a demand */
			if (s->kind == SEGVEC_JOB_MERGE)
			{
				if (JobMergesAgainst(s, now) + merges_counted >= max_merges)
					continue;
				merges_counted++;
			}
			ndbs = add_demand(dbs, ndbs, s->dboid, s->submitted_at,
							  !JobOwnerHasLong(s, now));
		}
	}
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecSweepSlot *s = &SegvecJobs->sweeps[i];

		if (s->dboid != InvalidOid)
			ndbs = add_demand(dbs, ndbs, s->dboid, s->requested_at, false);
	}
	for (i = 0; i < ndbs; i++)
		JobIdleWorkerFor(dbs[i].dboid, &dbs[i].supply);

	nworkers = JobsLiveWorkers();
	nlong = JobsLongWorkers(now);
	for (;;)
	{
		DbDemand   *best = NULL;
		SegvecWorkerSlot *w = NULL;
		int			slot;
		bool		beyond = nworkers >= segvec_max_workers;

		/* beyond segvec.max_workers: only beside long jobs, at most twice */
		if (beyond && (nworkers - nlong >= segvec_max_workers ||
					   nworkers >= 2 * segvec_max_workers))
			break;
		for (i = 0; i < ndbs; i++)
		{
			if ((beyond ? dbs[i].fresh : dbs[i].demand) > dbs[i].supply &&
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
 * Ask for a sweep of every kind of job in every database that takes
 * connections (not templates: a worker connected to one would make CREATE
 * DATABASE from it fail): once per server start, as the job table starts
 * empty and what was submitted before the stop (a crash, or a shutdown
 * before the jobs ran) would otherwise wait for the next submit; and every
 * segvec.sweep_interval.  A sweep compacts only mutable segments over
 * their threshold and merges only where upserts are queued.
 */
static void
request_sweeps(void)
{
	List	   *dbs = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	ListCell   *lc;
	TimestampTz now;
	int			n = 0;
	MemoryContext cxt = CurrentMemoryContext;

	/* the list outlives the transaction: allocate it in the caller's context */
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		/* datconnlimit -2: a database that a DROP DATABASE left invalid */
		if (db->datallowconn && !db->datistemplate && db->datconnlimit != -2)
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			dbs = lappend_oid(dbs, db->oid);
			MemoryContextSwitchTo(old);
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	MemoryContextSwitchTo(cxt);

	now = GetCurrentTimestamp();
	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	foreach(lc, dbs)
	{
		if (JobRequestSweepLocked(lfirst_oid(lc),
								  (1 << SEGVEC_NUM_JOB_KINDS) - 1, true, now))
			n++;
	}
	SegvecJobs->startup_swept = true;
	LWLockRelease(SegvecJobs->lock);
	list_free(dbs);

	ereport(DEBUG1,
			(errmsg_internal("segvec launcher asked for the startup sweeps of %d database(s)",
							 n)));
}

/*
 * SegvecLauncherMain: entry point of the launcher.
 */
void
SegvecLauncherMain(Datum main_arg)
{
	DbDemand   *dbs;
	int			i;
	TimestampTz last_sweep;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	/*
	 * SIGUSR1: PostgreSQL's own handler, which sets the latch (a worker we
	 * started changed state: bgw_notify_pid) and takes note of a
	 * ProcSignalBarrier, which the loop below absorbs
	 */
	pqsignal(SIGUSR1, procsignal_sigusr1_handler);
	BackgroundWorkerUnblockSignals();

	if (SegvecJobs == NULL)
		proc_exit(0);
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

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

	if (!SegvecJobs->startup_swept)
		request_sweeps();
	last_sweep = GetCurrentTimestamp();

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
		/*
		 * A barrier every process must pass, such as DROP DATABASE's (close
		 * your files): it waits for this one too
		 */
		if (ProcSignalBarrierPending)
			ProcessProcSignalBarrier();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/*
		 * The periodic sweeps: what no request names (a prepared
		 * transaction's queued upserts, whose COMMIT PREPARED submits
		 * nothing; a request dropped when the job table and the sweep list
		 * were full) waits at most segvec.sweep_interval.
		 */
		if (segvec_sweep_interval > 0 &&
			TimestampDifferenceExceeds(last_sweep, GetCurrentTimestamp(),
									   segvec_sweep_interval * 1000))
		{
			request_sweeps();
			last_sweep = GetCurrentTimestamp();
		}

		reap_workers();
		timeout = launch_workers(dbs);
		if (segvec_sweep_interval > 0)
			timeout = Min(timeout, (long) segvec_sweep_interval * 1000L);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
	}

	proc_exit(0);
}

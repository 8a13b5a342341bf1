/*-------------------------------------------------------------------------
 *
 * jobs.c
 *	  The job table: background work requested for segvec indexes, kept in
 *	  shared memory; the GUCs of background work; the SQL functions of
 *	  jobsql.c show it.
 *
 * The table has segvec.max_jobs slots.  A slot is keyed by (database,
 * index, kind) and is PENDING (waiting for a worker) or RUNNING (taken by
 * one).  A key has at most one PENDING slot: a submit for a key that
 * already has one only bumps its counters (the newest request wins, as
 * a job carries no data but its key and reads the index when it runs).
 * A RUNNING slot is not touched by submits; a submit while it runs makes
 * a new PENDING slot, which becomes the next job for that key.  A submit
 * that finds the table full records a sweep request for the database
 * instead (see worker.c and src/README.md, "Background work").
 *
 * Everything in shared memory is protected by one LWLock; no one holding
 * it sleeps, errors out or takes another lock.  The launcher and workers
 * are in launcher.c and worker.c.
 *
 * src/jobs/jobs.c
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
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "compact/compact.h"
#include "hooks/testhooks.h"
#include "jobs/jobs_int.h"
#include "store/store.h"

/* GUCs (defined only when the library is preloaded) */
static int	segvec_max_jobs = 256;
int			segvec_max_workers = 2;
int			segvec_naptime = 10;
int			segvec_sweep_interval = 600;
int			segvec_job_time_limit = 300000;
int			segvec_job_long_after = 5000;

/* The shared state; NULL unless the library was preloaded */
SegvecJobsShared *SegvecJobs = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static const char *const job_kind_names[SEGVEC_NUM_JOB_KINDS] = {
	"compact", "snapshot", "merge"
};

const char *
SegvecJobKindName(SegvecJobKind kind)
{
	if (kind < 0 || kind >= SEGVEC_NUM_JOB_KINDS)
		return "unknown";
	return job_kind_names[kind];
}

/* ----------------
 * Shared memory
 * ----------------
 */

static Size
sweeps_offset(int max_jobs)
{
	return MAXALIGN(add_size(offsetof(SegvecJobsShared, jobs),
							 mul_size(sizeof(SegvecJobSlot), max_jobs)));
}

static Size
served_offset(int max_jobs)
{
	return MAXALIGN(add_size(sweeps_offset(max_jobs),
							 mul_size(sizeof(SegvecSweepSlot), max_jobs)));
}

static Size
jobs_shmem_size(void)
{
	return add_size(served_offset(segvec_max_jobs),
					mul_size(sizeof(SegvecServedSlot), segvec_max_jobs));
}

static void
jobs_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(jobs_shmem_size());
	RequestNamedLWLockTranche("segvec_jobs", 1);
}

static void
jobs_shmem_startup(void)
{
	bool		found;
	Size		size = jobs_shmem_size();

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	SegvecJobs = ShmemInitStruct("segvec jobs", size, &found);
	if (!found)
	{
		int			i;

		memset(SegvecJobs, 0, size);
		SegvecJobs->lock = &(GetNamedLWLockTranche("segvec_jobs"))->lock;
		SegvecJobs->max_jobs = segvec_max_jobs;
		SegvecJobs->sweeps = (SegvecSweepSlot *)
			((char *) SegvecJobs + sweeps_offset(segvec_max_jobs));
		SegvecJobs->served = (SegvecServedSlot *)
			((char *) SegvecJobs + served_offset(segvec_max_jobs));
		for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
			SegvecJobs->workers[i].job = -1;
		for (i = 0; i < segvec_max_jobs; i++)
			SegvecJobs->jobs[i].worker = -1;
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Register the launcher (SegvecLauncherMain, launcher.c), from _PG_init
 * while the library is preloaded.  Restarted 10 s after it dies.
 */
static void
register_launcher(void)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	/* a connection to no database, for pg_database (startup sweeps) */
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
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

/*
 * SegvecJobsInit: from _PG_init.  Only when the library is being preloaded:
 * define the GUCs, ask for shared memory and register the launcher.
 * Otherwise background work stays off (SegvecJobsEnabled() is false) and
 * compaction happens in the foreground.
 */
void
SegvecJobsInit(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("segvec.max_jobs",
							"Slots in the job table of background work.",
							"One slot holds one pending or running job of one index. "
							"Requests that find it full make a worker sweep their database.",
							&segvec_max_jobs, 256, 1, 100000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.max_workers",
							"Most background workers running segvec jobs at once.",
							"0 pauses background work: jobs wait in the table.",
							&segvec_max_workers, 2, 0, SEGVEC_MAX_WORKERS_LIMIT,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.naptime",
							"Longest sleep of the segvec launcher between checks.",
							"Submits wake it at once; the naptime paces retries of failed jobs.",
							&segvec_naptime, 10, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.sweep_interval",
							"How often the segvec launcher asks every database for a sweep; 0 means only at server start.",
							"A sweep does the background work that no request names, such as the upserts a prepared transaction queued.",
							&segvec_sweep_interval, 600, 0, 7 * 24 * 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.job_time_limit",
							"Longest a background merge of queued upserts may run; 0 means no limit.",
							"A merge runs the table's triggers, defaults and checks. One that runs "
							"longer (waits for locks included) is canceled and logged; the index's "
							"next merges apply half as many rows and are retried with a back-off. "
							"Compactions and keymap snapshots are not limited.",
							&segvec_job_time_limit, 300000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.job_long_after",
							"Run time after which a background job stops holding up other owners' jobs; 0 means never.",
							"A job running this long no longer counts against segvec.merge_concurrency "
							"for other table owners' merges, and the launcher may start up to "
							"segvec.max_workers more workers for owners with no such job.",
							&segvec_job_long_after, 5000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = jobs_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = jobs_shmem_startup;

	register_launcher();
}

/*
 * SegvecJobsEnabled: true when the library was preloaded and this process
 * runs under a postmaster (so a launcher runs the jobs).
 */
bool
SegvecJobsEnabled(void)
{
	return SegvecJobs != NULL && IsUnderPostmaster;
}

/*
 * SegvecJobsRunnable: SegvecJobsEnabled() and segvec.max_workers > 0, so a
 * submitted job will run (VACUUM does the work itself otherwise).
 */
bool
SegvecJobsRunnable(void)
{
	return SegvecJobsEnabled() && segvec_max_workers > 0;
}

/* ----------------
 * Submitting
 * ----------------
 */

/*
 * JobRequestSweepLocked: record that dboid needs a sweep for the job kinds
 * in the mask kinds (1 << SegvecJobKind); startup when the launcher asks
 * for it at a server start.  Caller holds the lock exclusively.  False if
 * the sweep list is full.
 */
bool
JobRequestSweepLocked(Oid dboid, uint32 kinds, bool startup, TimestampTz now)
{
	SegvecSweepSlot *free_slot = NULL;
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecSweepSlot *s = &SegvecJobs->sweeps[i];

		if (s->dboid == dboid)
		{
			s->kinds |= kinds;
			s->startup = s->startup && startup;
			return true;
		}
		if (s->dboid == InvalidOid && free_slot == NULL)
			free_slot = s;
	}
	if (free_slot == NULL)
		return false;
	free_slot->dboid = dboid;
	free_slot->kinds = kinds;
	free_slot->startup = startup;
	free_slot->requested_at = now;
	return true;
}

/*
 * The PENDING slot of (this database, indexid, kind), or NULL if there is
 * none; *free_slot is then the first free slot, or NULL when the table is
 * full.  The caller holds the table's lock exclusively.
 */
static SegvecJobSlot *
find_pending_locked(Oid indexid, SegvecJobKind kind,
					SegvecJobSlot **free_slot)
{
	int			i;

	*free_slot = NULL;
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];

		if (s->state == SEGVEC_JOB_FREE)
		{
			if (*free_slot == NULL)
				*free_slot = s;
		}
		else if (s->state == SEGVEC_JOB_PENDING && s->dboid == MyDatabaseId &&
				 s->indexid == indexid && s->kind == kind)
			return s;
	}
	return NULL;
}

/*
 * Make the free slot s a new PENDING job of (this database, indexid,
 * kind), submitted now, with its table owner if known.  The caller holds
 * the table's lock exclusively.
 */
static void
new_pending_locked(SegvecJobSlot *s, Oid indexid, SegvecJobKind kind,
				   TimestampTz now)
{
	memset(s, 0, sizeof(SegvecJobSlot));
	s->state = SEGVEC_JOB_PENDING;
	s->kind = kind;
	s->dboid = MyDatabaseId;
	s->indexid = indexid;
	s->worker = -1;
	s->submitted_at = now;
	s->last_submit_at = now;
	JobFillOwnerLocked(s);
}

/*
 * SegvecSubmitJob, SegvecSubmitJobExt: see jobs.h.  Wakes the launcher.
 *
 * A compaction submitted by the process that is compacting this index
 * (it holds the compaction lock: its own freeze step appends a page, or
 * VACUUM compacts) is not recorded: the compaction under way takes every
 * doc before the page it appends.
 */
bool
SegvecSubmitJob(Oid indexid, SegvecJobKind kind)
{
	return SegvecSubmitJobExt(indexid, kind, false);
}

bool
SegvecSubmitJobExt(Oid indexid, SegvecJobKind kind, bool force)
{
	TimestampTz now;
	SegvecJobSlot *pending;
	SegvecJobSlot *free_slot;
	Latch	   *latch;
	bool		recorded = true;

	if (!SegvecJobsEnabled() || !OidIsValid(MyDatabaseId) ||
		kind < 0 || kind >= SEGVEC_NUM_JOB_KINDS)
		return false;

	if (kind == SEGVEC_JOB_COMPACT)
	{
		LOCKTAG		tag;

		SET_LOCKTAG_PAGE(tag, MyDatabaseId, indexid, SEGVEC_METAPAGE_BLKNO);
		if (SegvecLockHeldByMe(&tag, ExclusiveLock))
			return true;
	}

	now = GetCurrentTimestamp();

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	SegvecJobs->counters.submitted[kind]++;
	pending = find_pending_locked(indexid, kind, &free_slot);

	if (pending != NULL)
	{
		/* coalesce: the pending job will read the newest state anyway */
		pending->coalesced++;
		pending->last_submit_at = now;
		pending->force |= force;
		if (pending->settle)
		{
			/* a compaction wins over a settle: now (it settles later) */
			pending->settle = false;
			pending->settle_mark = 0;
			if (pending->attempts == 0)
				pending->not_before = 0;
		}
		SegvecJobs->counters.coalesced[kind]++;
	}
	else if (free_slot != NULL)
	{
		new_pending_locked(free_slot, indexid, kind, now);
		free_slot->force = force;
	}
	else
	{
		/* table full: a worker will sweep the whole database */
		SegvecJobs->counters.overflowed[kind]++;
		if (!JobRequestSweepLocked(MyDatabaseId, 1 << kind, false, now))
		{
			SegvecJobs->counters.dropped[kind]++;
			recorded = false;
		}
	}
	latch = SegvecJobs->launcher_latch;
	LWLockRelease(SegvecJobs->lock);

	if (latch != NULL)
		SetLatch(latch);
	return recorded;
}

/* ----------------
 * Reading the table
 * ----------------
 */

/*
 * SegvecJobCounters: copy the counters, and count pending and running jobs
 * and live workers.  False (and *c zeroed) when background work is off.
 */
bool
SegvecJobCounters(SegvecJobCountersData *c)
{
	int			i;

	memset(c, 0, sizeof(SegvecJobCountersData));
	if (!SegvecJobsEnabled())
		return false;

	LWLockAcquire(SegvecJobs->lock, LW_SHARED);
	*c = SegvecJobs->counters;
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		if (SegvecJobs->jobs[i].state == SEGVEC_JOB_PENDING)
			c->jobs_pending++;
		else if (SegvecJobs->jobs[i].state == SEGVEC_JOB_RUNNING)
			c->jobs_running++;
	}
	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		if (SegvecJobs->workers[i].state != SEGVEC_WORKER_FREE)
			c->workers++;
	}
	c->launcher_running = SegvecJobs->launcher_latch != NULL;
	LWLockRelease(SegvecJobs->lock);
	return true;
}

/*
 * SegvecJobList: palloc'd copies of the used slots of the job table, in
 * slot order; returns how many.
 */
int
SegvecJobList(SegvecJobInfo **jobs)
{
	int			n = 0;
	int			i;

	*jobs = NULL;
	if (!SegvecJobsEnabled())
		return 0;

	*jobs = palloc(sizeof(SegvecJobInfo) * SegvecJobs->max_jobs);
	LWLockAcquire(SegvecJobs->lock, LW_SHARED);
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];
		SegvecJobInfo *j = &(*jobs)[n];

		if (s->state == SEGVEC_JOB_FREE)
			continue;
		j->dboid = s->dboid;
		j->indexid = s->indexid;
		j->kind = s->kind;
		j->state = s->state;
		j->coalesced = s->coalesced;
		j->force = s->force;
		j->attempts = s->attempts;
		j->worker_pid = 0;
		if (s->state == SEGVEC_JOB_RUNNING && s->worker >= 0)
			j->worker_pid = SegvecJobs->workers[s->worker].pid;
		j->submitted_at = s->submitted_at;
		j->last_submit_at = s->last_submit_at;
		j->started_at = s->state == SEGVEC_JOB_RUNNING ? s->started_at : 0;
		j->not_before = s->state == SEGVEC_JOB_PENDING ? s->not_before : 0;
		n++;
	}
	LWLockRelease(SegvecJobs->lock);
	return n;
}

/*
 * SegvecSubmitSettle: see jobs.h.  A settle is a pending compaction with
 * the settle flag and a retry time; a compaction submitted meanwhile turns
 * it into an ordinary one (SegvecSubmitJobExt), which asks for the settle
 * again when it ends (jobrun.c).  Resubmitting a pending settle moves its
 * time and its mark: the index was not quiet.  Not recorded when the
 * table is full (no sweep: the next compaction or page added asks again).
 */
bool
SegvecSubmitSettle(Oid indexid, uint64 mark, int quiet_naps)
{
	TimestampTz now;
	TimestampTz at;
	SegvecJobSlot *pending;
	SegvecJobSlot *free_slot;
	bool		recorded = true;

	if (!SegvecJobsEnabled() || !OidIsValid(MyDatabaseId) ||
		segvec_settle_ratio <= 0)
		return false;

	now = GetCurrentTimestamp();
	at = TimestampTzPlusMilliseconds(now, (long) segvec_naptime * 1000L *
									 Max(quiet_naps, 1));

	LWLockAcquire(SegvecJobs->lock, LW_EXCLUSIVE);
	pending = find_pending_locked(indexid, SEGVEC_JOB_COMPACT, &free_slot);

	if (pending != NULL)
	{
		if (pending->settle && pending->attempts == 0)
		{
			pending->settle_mark = mark;
			pending->not_before = at;
		}
	}
	else if (free_slot != NULL)
	{
		SegvecJobs->counters.submitted[SEGVEC_JOB_COMPACT]++;
		new_pending_locked(free_slot, indexid, SEGVEC_JOB_COMPACT, now);
		free_slot->settle = true;
		free_slot->settle_mark = mark;
		free_slot->not_before = at;
	}
	else
		recorded = false;
	LWLockRelease(SegvecJobs->lock);

	/* no wake-up: the launcher looks at retry times when it plans its nap */
	return recorded;
}

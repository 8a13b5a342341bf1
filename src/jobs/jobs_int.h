/*-------------------------------------------------------------------------
 *
 * jobs_int.h
 *	  What the files of src/jobs/ share: the job table's shared memory and
 *	  the helpers of the launcher, the workers and the job runner.  Not
 *	  for other subsystems (they use jobs.h).
 *
 * src/jobs/jobs_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_JOBS_INT_H
#define SEGVEC_JOBS_INT_H

#include "postgres.h"

#include "storage/latch.h"
#include "storage/lwlock.h"

#include "jobs/jobs.h"

/* Most workers segvec.max_workers may ask for (the worker slot array) */
#define SEGVEC_MAX_WORKERS_LIMIT	64

/* A job that fails is tried at most this many times in all */
#define SEGVEC_JOB_MAX_ATTEMPTS		4

/* ----------------
 * Shared memory (everything under SegvecJobs->lock)
 * ----------------
 */
/*
 * One slot of the job table.  A (dboid, indexid, kind) has at most one
 * PENDING slot and at most one RUNNING slot.
 */
typedef struct SegvecJobSlot
{
	SegvecJobState state;
	SegvecJobKind kind;
	Oid			dboid;
	Oid			indexid;
	int			worker;			/* RUNNING: worker slot number, else -1 */
	bool		force;			/* compact even if under the threshold */
	bool		settle;			/* PENDING compact: a settle, run once the
								 * index has been quiet until not_before */
	uint64		settle_mark;	/* settle: SegvecMutableChangeMark when it
								 * was submitted (0: not known yet) */
	int			attempts;		/* failed runs so far */
	int64		coalesced;		/* later submits merged into this one */
	TimestampTz submitted_at;	/* first submit of this pending job */
	TimestampTz last_submit_at; /* newest submit merged into it */
	TimestampTz started_at;		/* RUNNING: when the worker took it */
	TimestampTz not_before;		/* PENDING after a failure: retry time */
	Oid			owner;			/* table owner, InvalidOid until a worker
								 * looked it up (see owner_looked) */
	bool		owner_looked;	/* a worker looked the owner up */
	int			batch_rows;		/* RUNNING merge: most queued rows it may
								 * apply (0: segvec.merge_batch_rows) */
	bool		past_long;		/* RUNNING merge: admitted past other
								 * owners' long merges (may take a merge
								 * slot beyond segvec.merge_concurrency) */
	bool		merging;		/* RUNNING compact: building a merge of
								 * segments, so a compaction of the same
								 * index may run beside it (JobTwinRunning) */
} SegvecJobSlot;

/*
 * When an index was last given a turn (and, for merges that ran out of
 * time, the back-off that outlives the job slot: see JobFinishLocked) (a worker took one of its jobs), for
 * the round-robin of schedule.c: turn is the value of SegvecJobs->turns
 * then.  segvec.max_jobs entries; when all are used, the least recently
 * served index's entry is reused (it then counts as never served, which
 * only moves it forward).
 */
typedef struct SegvecServedSlot
{
	Oid			dboid;			/* InvalidOid: entry unused */
	Oid			indexid;
	Oid			owner;			/* InvalidOid: not known */
	uint64		turn;
	/* merges of this index cancelled by segvec.job_time_limit in a row */
	int			timeouts;
	int			batch_rows;		/* next merge applies at most this many
								 * queued rows (0: no cap) */
	TimestampTz retry_at;		/* no merge of this index before this */
} SegvecServedSlot;

typedef enum SegvecWorkerState
{
	SEGVEC_WORKER_FREE = 0,
	SEGVEC_WORKER_STARTING,		/* registered by the launcher, not yet up */
	SEGVEC_WORKER_ATTACHED,		/* running (connected once 'connected') */
	SEGVEC_WORKER_EXITING		/* found no work, on its way out */
} SegvecWorkerState;

typedef struct SegvecWorkerSlot
{
	SegvecWorkerState state;
	uint32		generation;		/* bumped at each launch, checked by worker */
	Oid			dboid;
	int			pid;
	bool		connected;		/* got past the database connection */
	bool		busy;			/* running a job or a sweep */
	int			job;			/* job slot it runs, or -1 */
	TimestampTz launched_at;
} SegvecWorkerSlot;

/*
 * A database whose requests did not fit in the job table: a worker sweeps
 * every segvec index in it for the kinds in the mask (see README).
 */
typedef struct SegvecSweepSlot
{
	Oid			dboid;			/* InvalidOid: slot unused */
	uint32		kinds;			/* 1 << SegvecJobKind */
	bool		startup;		/* asked for by the launcher (at a server
								 * start, or periodically), not by a full
								 * job table */
	TimestampTz requested_at;
} SegvecSweepSlot;

typedef struct SegvecJobsShared
{
	LWLock	   *lock;
	Latch	   *launcher_latch; /* NULL when no launcher runs */
	int			launcher_pid;
	int			max_jobs;		/* slots in jobs[] and sweeps[] */
	SegvecJobCountersData counters;
	SegvecWorkerSlot workers[SEGVEC_MAX_WORKERS_LIMIT];
	SegvecSweepSlot *sweeps;	/* max_jobs entries, after jobs[] */
	SegvecServedSlot *served;	/* max_jobs entries, after sweeps[] */
	uint64		turns;			/* jobs taken so far (the round-robin clock) */
	bool		startup_swept;	/* the launcher asked for this start's
								 * sweeps (the job table starts empty at
								 * every start, crash restarts included) */
	SegvecJobSlot jobs[FLEXIBLE_ARRAY_MEMBER];
} SegvecJobsShared;

/* How a job ended */
typedef enum JobOutcome
{
	JOB_DONE,					/* ran to the end */
	JOB_SKIPPED,				/* nothing to do: index gone, not segvec... */
	JOB_BUSY,					/* gave way: a lock it needs is taken */
	JOB_FAILED,					/* error */
	JOB_TIMED_OUT				/* cancelled by segvec.job_time_limit */
} JobOutcome;

/* jobs.c */
extern PGDLLIMPORT SegvecJobsShared *SegvecJobs;
extern PGDLLIMPORT int segvec_max_workers;
extern PGDLLIMPORT int segvec_naptime;
extern PGDLLIMPORT int segvec_sweep_interval;
extern PGDLLIMPORT int segvec_job_time_limit;
extern PGDLLIMPORT int segvec_job_long_after;
extern bool JobRequestSweepLocked(Oid dboid, uint32 kinds, bool startup,
								  TimestampTz now);

/* schedule.c: the caller holds SegvecJobs->lock exclusively */
extern bool JobTwinRunning(const SegvecJobSlot *s);
extern SegvecJobSlot *JobTwinPending(const SegvecJobSlot *s);
extern bool JobIsLong(const SegvecJobSlot *s, TimestampTz now);
extern bool JobOwnerHasLong(const SegvecJobSlot *s, TimestampTz now);
extern int	JobMergesAgainst(const SegvecJobSlot *s, TimestampTz now);
extern bool JobRunnable(const SegvecJobSlot *s, TimestampTz now,
						int max_merges);
extern int	JobPickLocked(Oid dboid, TimestampTz now, int max_merges,
						  bool fresh_only);
extern void JobNoteTakenLocked(SegvecJobSlot *s, TimestampTz now,
							   int max_merges);
extern void JobFillOwnerLocked(SegvecJobSlot *s);
extern int	JobNextBatchRows(int batch_rows, int rows);
extern int	JobsRunning(SegvecJobKind kind);
extern int	JobsMergeLimit(void);
extern int	JobsLiveWorkers(void);
extern int	JobsLongWorkers(TimestampTz now);
extern bool JobIdleWorkerFor(Oid dboid, int *count);
extern bool JobAnyWorkerFor(Oid dboid);
extern bool JobAnyWorkerConnectedTo(Oid dboid, int except);
extern SegvecSweepSlot *JobSweepFor(Oid dboid);
extern long JobRetryDelayMs(int attempts);
extern bool JobFinishLocked(int idx, JobOutcome outcome, int rows,
							TimestampTz now);
extern void JobCountOutcomeLocked(SegvecJobKind kind, JobOutcome outcome);
extern TimestampTz JobNoteMergeOutcomeLocked(Oid dboid, Oid indexid,
											 JobOutcome outcome, int rows,
											 TimestampTz now);

/* launcher.c */
extern PGDLLEXPORT void SegvecLauncherMain(Datum main_arg);

/* worker.c */
extern PGDLLEXPORT void SegvecWorkerMain(Datum main_arg);

/* jobrun.c */
extern JobOutcome JobRun(Oid indexid, SegvecJobKind kind, bool force,
						 bool settle, uint64 settle_mark,
						 int batch_rows, bool past_long, bool *changed,
						 int *rows_taken);

#endif							/* SEGVEC_JOBS_INT_H */

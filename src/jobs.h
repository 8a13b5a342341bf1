/*-------------------------------------------------------------------------
 *
 * jobs.h
 *	  Background work for segvec indexes: the job table in shared memory,
 *	  the launcher and the per-database workers.
 *
 * jobs.c holds the job table (shared memory, GUCs, submit, the SQL
 * functions over it), jobs_worker.c the launcher and the workers; the work
 * of each kind is keymap.c's, compact.c's and mergequeue.c's.
 * See src/README.md, "Background work".
 *
 * src/jobs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_JOBS_H
#define SEGVEC_JOBS_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"

/* ----------------
 * Limits and constants
 * ----------------
 */

/* Kinds of job; at most one pending job per (database, index, kind) */
typedef enum SegvecJobKind
{
	SEGVEC_JOB_COMPACT = 0,		/* SegvecCompact, then submit a snapshot */
	SEGVEC_JOB_SNAPSHOT = 1,	/* SegvecKeymapSnapshot */
	SEGVEC_JOB_MERGE = 2,		/* SegvecMergePending */
	SEGVEC_NUM_JOB_KINDS
} SegvecJobKind;

/* Most workers segvec.max_workers may ask for (the worker slot array) */
#define SEGVEC_MAX_WORKERS_LIMIT	64

/* A job that fails is tried at most this many times in all */
#define SEGVEC_JOB_MAX_ATTEMPTS		4

/* ----------------
 * Shared memory (private to jobs*.c; everything under SegvecJobs->lock)
 * ----------------
 */
typedef enum SegvecJobState
{
	SEGVEC_JOB_FREE = 0,		/* slot unused */
	SEGVEC_JOB_PENDING,			/* submitted, waiting for a worker */
	SEGVEC_JOB_RUNNING			/* taken by the worker in slot 'worker' */
} SegvecJobState;

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
	int			attempts;		/* failed runs so far */
	int64		coalesced;		/* later submits merged into this one */
	TimestampTz submitted_at;	/* first submit of this pending job */
	TimestampTz last_submit_at; /* newest submit merged into it */
	TimestampTz started_at;		/* RUNNING: when the worker took it */
	TimestampTz not_before;		/* PENDING after a failure: retry time */
} SegvecJobSlot;

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
	TimestampTz requested_at;
} SegvecSweepSlot;

/* Counters of work done since the server started (or crash-restarted) */
typedef struct SegvecJobCountersData
{
	uint64		submitted[SEGVEC_NUM_JOB_KINDS];	/* SegvecSubmitJob calls */
	uint64		coalesced[SEGVEC_NUM_JOB_KINDS];	/* merged into a pending */
	uint64		run[SEGVEC_NUM_JOB_KINDS];	/* ran to the end */
	uint64		failed[SEGVEC_NUM_JOB_KINDS];	/* errors (each attempt) */
	uint64		skipped[SEGVEC_NUM_JOB_KINDS];	/* index gone, not segvec,
												 * or not over threshold
												 * in a sweep */
	uint64		overflowed[SEGVEC_NUM_JOB_KINDS];	/* table full: turned
													 * into a sweep */
	uint64		dropped[SEGVEC_NUM_JOB_KINDS];	/* given up: attempts
												 * exhausted, database
												 * gone, or nowhere to
												 * record it */
	uint64		sweeps;			/* database sweeps done */
	uint64		workers_started;	/* per-database workers launched */
	/* gauges, filled in by SegvecJobCounters */
	int			jobs_pending;
	int			jobs_running;
	int			workers;
	bool		launcher_running;
} SegvecJobCountersData;

typedef struct SegvecJobsShared
{
	LWLock	   *lock;
	Latch	   *launcher_latch; /* NULL when no launcher runs */
	int			launcher_pid;
	int			max_jobs;		/* slots in jobs[] and sweeps[] */
	SegvecJobCountersData counters;
	SegvecWorkerSlot workers[SEGVEC_MAX_WORKERS_LIMIT];
	SegvecSweepSlot *sweeps;	/* max_jobs entries, after jobs[] */
	SegvecJobSlot jobs[FLEXIBLE_ARRAY_MEMBER];
} SegvecJobsShared;

/* A copy of one job table slot, for the SQL view and ft.info */
typedef struct SegvecJobInfo
{
	Oid			dboid;
	Oid			indexid;
	SegvecJobKind kind;
	SegvecJobState state;
	int64		coalesced;
	bool		force;
	int			attempts;
	int			worker_pid;		/* RUNNING: the worker's pid, else 0 */
	TimestampTz submitted_at;
	TimestampTz last_submit_at;
	TimestampTz started_at;		/* 0 unless RUNNING */
	TimestampTz not_before;		/* 0 unless retrying */
} SegvecJobInfo;

/* ----------------
 * Prototypes
 * ----------------
 */

/* jobs.c: module start-up, called from _PG_init (defines the GUCs) */
extern void SegvecJobsInit(void);

/* true when the library was preloaded and background workers run */
extern bool SegvecJobsEnabled(void);

/*
 * SegvecSubmitJob: ask for a job on the index of the current database.
 * Never blocks and never waits for capacity; coalesces with a pending job
 * of the same kind for the same index.  Returns false if the request was
 * not recorded at all (background work disabled, or both the job table and
 * the sweep list full: see README, "Background work", for the full-table
 * rule).  Safe to call while holding buffer locks: takes only the job
 * table's LWLock, does no catalog access and never errors.  Must not be
 * called for temporary indexes (no other backend can read them).
 */
extern bool SegvecSubmitJob(Oid indexid, SegvecJobKind kind);

/*
 * SegvecSubmitJobExt: SegvecSubmitJob, and with force, a compaction that
 * runs even if the mutable segment is under the threshold (ft.submit_job).
 * An automatic compaction is skipped by the worker when the mutable
 * segment does not really hold compact_threshold docs.
 */
extern bool SegvecSubmitJobExt(Oid indexid, SegvecJobKind kind, bool force);

/*
 * SegvecJobDelayPoint: the test-only delay (segvec.job_delay_ms), called
 * inside each job at the point a crash test wants to land in (compact.c
 * calls it between building a segment and installing it).  A no-op
 * outside background jobs.  Interruptible.
 */
extern void SegvecJobDelayPoint(void);

/* SegvecJobCounters: the counters and gauges; false if background work is
 * off (then *c is zeroed) */
extern bool SegvecJobCounters(SegvecJobCountersData *c);

/* SegvecJobList: palloc'd copies of the used job table slots */
extern int	SegvecJobList(SegvecJobInfo **jobs);

extern const char *SegvecJobKindName(SegvecJobKind kind);

/* jobs.c, for jobs_worker.c */
extern PGDLLIMPORT SegvecJobsShared *SegvecJobs;
extern PGDLLIMPORT int segvec_max_workers;
extern PGDLLIMPORT int segvec_naptime;
extern PGDLLIMPORT int segvec_job_delay_ms;

/* jobs_worker.c */
extern void SegvecRegisterLauncher(void);
extern PGDLLEXPORT void SegvecLauncherMain(Datum main_arg);
extern PGDLLEXPORT void SegvecWorkerMain(Datum main_arg);
extern bool SegvecInBackgroundJob(void);

/*
 * The merge job's work (mergequeue.c): apply the index's pending upserts.  Called by a worker
 * inside a transaction with an active snapshot, the table locked
 * RowExclusiveLock and the index RowExclusiveLock.  (The snapshot job
 * calls keymap.c's SegvecKeymapSnapshot, under the compaction lock.)
 */
extern void SegvecMergePending(Relation index);

#endif							/* SEGVEC_JOBS_H */

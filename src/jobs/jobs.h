/*-------------------------------------------------------------------------
 *
 * jobs.h
 *	  Background work for segvec indexes: the job table in shared memory,
 *	  the launcher and the per-database workers.
 *
 * What other subsystems use: submitting a job, whether background work
 * runs, the counters and the job list for monitoring, and registering the
 * runner of a job kind whose work lives above (merge-insert's merge jobs).
 * Jobs call compaction and the keymap, never the ft API or merge-insert
 * directly.  jobs_int.h has what the files of this folder share.
 * See src/README.md, "Background work".
 *
 * src/jobs/jobs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_JOBS_H
#define SEGVEC_JOBS_H

#include "postgres.h"

#include "datatype/timestamp.h"
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

/* States of a job table slot */
typedef enum SegvecJobState
{
	SEGVEC_JOB_FREE = 0,		/* slot unused */
	SEGVEC_JOB_PENDING,			/* submitted, waiting for a worker */
	SEGVEC_JOB_RUNNING			/* taken by the worker in slot 'worker' */
} SegvecJobState;

/* ----------------
 * Monitoring
 * ----------------
 */

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

/*
 * The work of a job kind that belongs to a subsystem above jobs: called
 * by a worker inside the job's transaction, with an active snapshot, the
 * index open and locked RowExclusiveLock and its table locked.
 */
typedef void (*SegvecJobRunner) (Relation index);

/* ----------------
 * Prototypes
 * ----------------
 */

/* jobs.c: module start-up, called from _PG_init (defines the GUCs) */
extern void SegvecJobsInit(void);

/* true when the library was preloaded and background workers run */
extern bool SegvecJobsEnabled(void);
extern bool SegvecJobsRunnable(void);

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
 * SegvecSubmitSettle: ask for the index to be settled once it has been
 * quiet (a compaction that runs SegvecSettle, see README, "Background
 * work"): unless a compaction of the index is pending already, a pending
 * compaction that may run quiet_naps segvec.naptime from now, and then
 * settles the index if SegvecMutableChangeMark still says mark (0: not
 * known; the job reads it and waits again).  Never blocks, like
 * SegvecSubmitJob.  Returns false if nothing was recorded (background work
 * off, settling off, or the job table full: a later submit asks again).
 */
extern bool SegvecSubmitSettle(Oid indexid, uint64 mark, int quiet_naps);

/* SegvecJobCounters: the counters and gauges; false if background work is
 * off (then *c is zeroed) */
extern bool SegvecJobCounters(SegvecJobCountersData *c);

/* SegvecJobList: palloc'd copies of the used job table slots */
extern int	SegvecJobList(SegvecJobInfo **jobs);

extern const char *SegvecJobKindName(SegvecJobKind kind);

/* jobrun.c */
extern void SegvecRegisterJobRunner(SegvecJobKind kind, SegvecJobRunner runner);

/*
 * For the merge runner, about the merge job it runs: the most queued rows
 * it may apply (0: no cap beyond segvec.merge_batch_rows; smaller after
 * the index's merges ran out of time), whether it may take a merge slot
 * beyond segvec.merge_concurrency (it was started past other owners' long
 * merges), and how many queued rows it took (for the next cap).
 */
extern int	SegvecJobBatchRows(void);
extern bool SegvecJobPastLongMerges(void);
extern void SegvecJobNoteBatch(int64 rows);

#endif							/* SEGVEC_JOBS_H */

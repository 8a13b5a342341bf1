/*-------------------------------------------------------------------------
 *
 * jobs.h
 *	  Background work for segvec indexes: the job table in shared memory,
 *	  the launcher and the per-database workers.
 *
 * See src/README.md, "Background work".
 *
 * src/jobs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_JOBS_H
#define SEGVEC_JOBS_H

#include "postgres.h"

/* Kinds of job; at most one pending job per (database, index, kind) */
typedef enum SegvecJobKind
{
	SEGVEC_JOB_COMPACT = 0,		/* SegvecCompact, then submit a snapshot */
	SEGVEC_JOB_SNAPSHOT = 1,	/* SegvecKeymapSnapshot */
	SEGVEC_JOB_MERGE = 2,		/* SegvecMergePending */
	SEGVEC_NUM_JOB_KINDS
} SegvecJobKind;

/* true when the library was preloaded and background workers run */
extern bool SegvecJobsEnabled(void);

/*
 * SegvecSubmitJob: ask for a job on the index of the current database.
 * Never blocks and never waits for capacity; coalesces with a pending job
 * of the same kind for the same index.  Returns false if the job was not
 * queued (background work disabled; see README for the full-table rule).
 */
extern bool SegvecSubmitJob(Oid indexid, SegvecJobKind kind);

/* called from _PG_init */
extern void SegvecJobsInit(void);

#endif							/* SEGVEC_JOBS_H */

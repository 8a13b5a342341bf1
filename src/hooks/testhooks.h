/*-------------------------------------------------------------------------
 *
 * testhooks.h
 *	  Test hooks that any subsystem may call: the delay point that lets a
 *	  test see a background job running (or crash inside one), and the
 *	  switch for the test-only functions that break an index on purpose.
 *
 * Calls nothing of segvec; everything may call it.
 *
 * src/hooks/testhooks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_TESTHOOKS_H
#define SEGVEC_TESTHOOKS_H

#include "postgres.h"

/* segvec.enable_test_hooks: allows ft._stage_phantom and the like */
extern PGDLLIMPORT bool segvec_enable_test_hooks;

/* segvec.job_delay_ms: how long SegvecDelayPoint sleeps inside a job */
extern PGDLLIMPORT int segvec_job_delay_ms;

extern void SegvecTestHooksInit(void);

/*
 * Whether this process is running a background job right now: set by the
 * job runner around each job.  Delay points sleep only inside jobs, so a
 * foreground ft.compact is never slowed down by segvec.job_delay_ms.
 */
extern void SegvecSetInBackgroundJob(bool in_job);
extern bool SegvecInBackgroundJob(void);

/*
 * SegvecDelayPoint: inside a background job, sleep segvec.job_delay_ms
 * (re-read on SIGHUP, so a test can cut the sleep short), checking for
 * interrupts; elsewhere, return at once.
 */
extern void SegvecDelayPoint(void);

#endif							/* SEGVEC_TESTHOOKS_H */

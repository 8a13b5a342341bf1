/*-------------------------------------------------------------------------
 *
 * testhooks.h
 *	  Test hooks that any subsystem may call: the delay point that lets a
 *	  test see a background job running (or crash inside one), named test
 *	  points (error, crash or wait there), and the switch for the test-only
 *	  functions that break an index on purpose.
 *
 * They exist only in a test build (SEGVEC_TEST_HOOKS defined: `make
 * SEGVEC_TEST_HOOKS=1`, which `make test` uses), as PostgreSQL's injection
 * points exist only in builds configured for them.  In a user's build the
 * points compile to nothing, the settings segvec.enable_test_hooks,
 * segvec.test_point, segvec.test_point_action and segvec.job_delay_ms do
 * not exist, and the test-only SQL functions raise an error.
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

#ifdef SEGVEC_TEST_HOOKS

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

/*
 * SegvecTestPoint: at the named point, with segvec.enable_test_hooks on and
 * segvec.test_point set to that name, do segvec.test_point_action: raise
 * an error (as a cancel would), PANIC (a crash, after flushing the WAL
 * written so far), or wait until pg_advisory_lock(SEGVEC_TEST_WAIT_KEY) is
 * free.  Points: "merge-linked" (a merge's output pages are built and
 * not yet WAL-logged), "compact-installed" and "merge-installed" (after an
 * install, before its garbage is marked), "scan-manifest-read" (a scan
 * has read the manifest, not yet the mutable segment), "vacuum-cleanup-scan"
 * (VACUUM's cleanup holds the compaction lock and the merge lock, share,
 * before its page scan), "extent-tail-extended"
 * (a new extent's missing blocks were added after the free run at the
 * relation's end, the run not yet taken off the list; the metapage is
 * locked there, so only error and panic make sense),
 * "install-dropping-segments" (an install that frees segments, a merge's,
 * is about to lock the metapage) and "keymap-install-metapage-lock" (an
 * install of keymap runs is about to lock the metapage), "keymap-dir-read"
 * (a keymap look-up has read the directory, not yet the chains or runs),
 * "merge-queue-locked" (ft.flush or a background merge holds its table's
 * lock and the index's queue lock, and has applied nothing yet).
 */
extern PGDLLIMPORT char *segvec_test_point;
extern PGDLLIMPORT int segvec_test_point_action;

#define SEGVEC_TEST_ERROR		0
#define SEGVEC_TEST_PANIC		1
#define SEGVEC_TEST_WAIT		2
#define SEGVEC_TEST_SKIP		3

#define SEGVEC_TEST_WAIT_KEY	21334

extern void SegvecTestPoint(const char *name);

/*
 * SegvecTestSkip: true at the named *skip point* when segvec.test_point is
 * that name and segvec.test_point_action is skip: the caller then leaves
 * out an optional step, so that a test reaches the path taken when the
 * step cannot be done.  Skip points: "build-move" (the end of a build does
 * not move its merged segment down, which is then logged where it was
 * written).
 */
extern bool SegvecTestSkip(const char *name);

/*
 * SegvecCheckTestHooks: error unless segvec.enable_test_hooks is on; what
 * names the test-only function.
 */
extern void SegvecCheckTestHooks(const char *what);

#else							/* !SEGVEC_TEST_HOOKS: a user's build */

#define segvec_enable_test_hooks	false
#define segvec_test_point			""
#define SegvecTestHooksInit()		((void) 0)
#define SegvecSetInBackgroundJob(in_job) ((void) (in_job))
#define SegvecInBackgroundJob()		false
#define SegvecDelayPoint()			((void) 0)
#define SegvecTestPoint(name)		((void) 0)
#define SegvecTestSkip(name)		false
#define SegvecCheckTestHooks(what) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg("%s exists only in test builds of segvec", (what)), \
			 errhint("Build segvec with \"make SEGVEC_TEST_HOOKS=1\".")))

#endif							/* SEGVEC_TEST_HOOKS */

#endif							/* SEGVEC_TESTHOOKS_H */

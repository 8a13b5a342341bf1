/*-------------------------------------------------------------------------
 *
 * testhooks.c
 *	  Delay points, test points and the test-hook switch (see testhooks.h).
 *
 * src/hooks/testhooks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lock.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "hooks/testhooks.h"

#ifdef SEGVEC_TEST_HOOKS

bool		segvec_enable_test_hooks = false;
int			segvec_job_delay_ms = 0;
char	   *segvec_test_point = NULL;
int			segvec_test_point_action = SEGVEC_TEST_ERROR;

static const struct config_enum_entry test_point_actions[] = {
	{"error", SEGVEC_TEST_ERROR, false},
	{"panic", SEGVEC_TEST_PANIC, false},
	{"wait", SEGVEC_TEST_WAIT, false},
	{"skip", SEGVEC_TEST_SKIP, false},
	{NULL, 0, false}
};

static bool in_background_job = false;

/*
 * SegvecTestHooksInit: from _PG_init, before the segvec prefix is reserved.
 */
void
SegvecTestHooksInit(void)
{
	DefineCustomBoolVariable("segvec.enable_test_hooks",
							 "Allows the test-only functions that break an index on purpose.",
							 NULL,
							 &segvec_enable_test_hooks, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomStringVariable("segvec.test_point",
							   "For tests only: the named point where segvec.test_point_action happens.",
							   "Needs segvec.enable_test_hooks. Leave empty.",
							   &segvec_test_point, "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomEnumVariable("segvec.test_point_action",
							 "For tests only: what happens at segvec.test_point.",
							 "error raises an error, panic crashes the server (after flushing WAL), wait waits until pg_advisory_lock(21334) is free, skip leaves out the step at a skip point.",
							 &segvec_test_point_action, SEGVEC_TEST_ERROR,
							 test_point_actions,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);

	/* only background jobs delay, and they exist only when preloaded */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("segvec.job_delay_ms",
								"For tests only: sleep this long inside each background job.",
								"Lets a test see a job running, or crash inside one. Leave at 0.",
								&segvec_job_delay_ms, 0, 0, 3600 * 1000,
								PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
}

void
SegvecSetInBackgroundJob(bool in_job)
{
	in_background_job = in_job;
}

bool
SegvecInBackgroundJob(void)
{
	return in_background_job;
}

void
SegvecDelayPoint(void)
{
	TimestampTz start;

	if (!in_background_job)
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

/*
 * SegvecTestPoint: a named point where a test can make something happen
 * (segvec.enable_test_hooks on, segvec.test_point = name): an error
 * (as a cancel would), a PANIC (a crash), or a wait until
 * pg_advisory_lock(SEGVEC_TEST_WAIT_KEY) is free (so that another session
 * can act while this one stands still there).
 */
void
SegvecTestPoint(const char *name)
{
	LOCKTAG		tag;

	if (!segvec_enable_test_hooks || segvec_test_point == NULL ||
		strcmp(segvec_test_point, name) != 0)
		return;

	switch (segvec_test_point_action)
	{
		case SEGVEC_TEST_PANIC:
			/* what was logged so far reaches the disk, as a commit would */
			XLogFlush(GetXLogInsertRecPtr());
			elog(PANIC, "segvec test point \"%s\" reached", name);
			break;
		case SEGVEC_TEST_SKIP:
			/* only SegvecTestSkip's points honour it */
			break;
		case SEGVEC_TEST_WAIT:
			SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0,
								 SEGVEC_TEST_WAIT_KEY, 1);
			(void) LockAcquire(&tag, ShareLock, false, false);
			LockRelease(&tag, ShareLock, false);
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("segvec test point \"%s\" reached", name)));
	}
}

/*
 * SegvecTestSkip: see testhooks.h.
 */
bool
SegvecTestSkip(const char *name)
{
	return segvec_enable_test_hooks && segvec_test_point != NULL &&
		segvec_test_point_action == SEGVEC_TEST_SKIP &&
		strcmp(segvec_test_point, name) == 0;
}

/*
 * SegvecCheckTestHooks: see testhooks.h.
 */
void
SegvecCheckTestHooks(const char *what)
{
	if (!segvec_enable_test_hooks)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s is a test hook", what),
				 errhint("Set segvec.enable_test_hooks to use it.")));
}

#endif							/* SEGVEC_TEST_HOOKS */

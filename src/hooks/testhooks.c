/*-------------------------------------------------------------------------
 *
 * testhooks.c
 *	  Delay points and the test-hook switch (see testhooks.h).
 *
 * src/hooks/testhooks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "hooks/testhooks.h"

bool		segvec_enable_test_hooks = false;
int			segvec_job_delay_ms = 0;

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

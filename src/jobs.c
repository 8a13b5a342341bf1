/*-------------------------------------------------------------------------
 *
 * jobs.c
 *	  Background work for segvec indexes (placeholder until the job table
 *	  lands: background work is off, compaction happens in the foreground).
 *
 * src/jobs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jobs.h"

bool
SegvecJobsEnabled(void)
{
	return false;
}

bool
SegvecSubmitJob(Oid indexid, SegvecJobKind kind)
{
	return false;
}

void
SegvecJobsInit(void)
{
}

/*-------------------------------------------------------------------------
 *
 * segvec.c
 *	  Module entry point of the segvec extension: _PG_init calls each
 *	  subsystem's start-up in turn.
 *
 * Each subsystem defines its own GUCs (all under segvec.*, a prefix
 * reserved here once they are all defined) and, when the library is
 * preloaded, asks for its shared memory and background workers.  This is
 * the only file that knows every subsystem; see src/README.md for the map.
 *
 * src/segvec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "am/am.h"
#include "compact/compact.h"
#include "ft/ftquery.h"
#include "hooks/testhooks.h"
#include "jobs/jobs.h"
#include "kernels/distance.h"
#include "merge/merge.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Module load: every subsystem's settings and start-up, then the distance
 * kernels for this CPU.
 */
void
_PG_init(void)
{
	SegvecAmInit();
	SegvecCompactInit();
	SegvecTestHooksInit();
	SegvecJobsInit();
	SegvecMergeInit();
	FtQueryInit();
	SegvecInitKernels();
	SegvecInitHints();

	/* after every segvec.* setting is defined: drops unknown ones */
	MarkGUCPrefixReserved("segvec");
}

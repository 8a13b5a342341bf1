/*-------------------------------------------------------------------------
 *
 * jobs_placeholders.c
 *	  Stand-in for the work of the merge job, until merge.c provides
 *	  SegvecMergePending.  Delete it when the real definition lands.
 *
 * src/jobs_placeholders.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jobs.h"

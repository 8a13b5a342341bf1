/*-------------------------------------------------------------------------
 *
 * schedule.c
 *	  Scheduling rules of the job table, shared by the launcher and the
 *	  workers: which pending jobs may run now, how many merges may run at
 *	  once, which workers serve a database, and how a finished job leaves
 *	  its slot.  Every function here expects SegvecJobs->lock held
 *	  exclusively, except where it says otherwise.
 *
 * src/jobs/schedule.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"
#include "utils/timestamp.h"

#include "jobs/jobs_int.h"


/* Is a job with the key of s running? */
bool
JobTwinRunning(const SegvecJobSlot *s)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *t = &SegvecJobs->jobs[i];

		if (t->state == SEGVEC_JOB_RUNNING && t->dboid == s->dboid &&
			t->indexid == s->indexid && t->kind == s->kind)
			return true;
	}
	return false;
}

/* The pending job with the key of s, other than s, or NULL */
SegvecJobSlot *
JobTwinPending(const SegvecJobSlot *s)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *t = &SegvecJobs->jobs[i];

		if (t != s && t->state == SEGVEC_JOB_PENDING &&
			t->dboid == s->dboid && t->indexid == s->indexid &&
			t->kind == s->kind)
			return t;
	}
	return NULL;
}

/* Can a worker take s now?  merge_ok: a merge slot is free */
bool
JobRunnable(const SegvecJobSlot *s, TimestampTz now, bool merge_ok)
{
	return s->state == SEGVEC_JOB_PENDING && s->not_before <= now &&
		(merge_ok || s->kind != SEGVEC_JOB_MERGE) && !JobTwinRunning(s);
}

/* ----------------
 * Fair turns
 *
 * A worker takes, among the runnable jobs of its database, the job whose
 * owner (the table owner) was served least recently, then, among that
 * owner's jobs, the one whose index was served least recently, then the
 * oldest submit.  "Served" is the round-robin clock (SegvecJobs->turns,
 * counting jobs taken) at the moment a job of that owner or index was
 * last taken; never served is 0.  So a role with many indexes with work
 * gets one turn for every turn of each other role with work, whatever
 * the number of jobs it queued, and a merge that resubmits itself (one
 * batch per job) goes behind every other owner's waiting job.  Owners are
 * looked up by the worker (worker.c, before it takes a job): submitting
 * does no catalog access.
 * ----------------
 */

/* The served entry of (dboid, indexid), or NULL */
static SegvecServedSlot *
served_for(Oid dboid, Oid indexid)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecServedSlot *e = &SegvecJobs->served[i];

		if (e->dboid == dboid && e->indexid == indexid)
			return e;
	}
	return NULL;
}

/* When the owner of s was served last (0: never), and its index */
static void
served_turns(const SegvecJobSlot *s, uint64 *owner_turn, uint64 *index_turn)
{
	SegvecServedSlot *e = served_for(s->dboid, s->indexid);
	int			i;

	*index_turn = e ? e->turn : 0;
	*owner_turn = *index_turn;
	if (!OidIsValid(s->owner))
		return;					/* owner unknown: the index stands alone */
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		e = &SegvecJobs->served[i];
		if (OidIsValid(e->dboid) && e->owner == s->owner &&
			e->turn > *owner_turn)
			*owner_turn = e->turn;
	}
}

/*
 * The slot number of the job a worker of dboid should take now (see
 * above), or -1 if none is runnable.
 */
int
JobPickLocked(Oid dboid, TimestampTz now, bool merge_ok)
{
	int			best = -1;
	uint64		best_owner = 0,
				best_index = 0;
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *s = &SegvecJobs->jobs[i];
		uint64		owner_turn,
					index_turn;

		if (s->dboid != dboid || !JobRunnable(s, now, merge_ok))
			continue;
		served_turns(s, &owner_turn, &index_turn);
		if (best < 0 || owner_turn < best_owner ||
			(owner_turn == best_owner &&
			 (index_turn < best_index ||
			  (index_turn == best_index &&
			   s->submitted_at < SegvecJobs->jobs[best].submitted_at))))
		{
			best = i;
			best_owner = owner_turn;
			best_index = index_turn;
		}
	}
	return best;
}

/*
 * A worker takes s: advance the clock and note the turn of its index (and
 * owner), reusing the least recently served entry if every one is used.
 */
void
JobNoteTakenLocked(const SegvecJobSlot *s)
{
	SegvecServedSlot *e = served_for(s->dboid, s->indexid);

	if (e == NULL)
	{
		int			i;

		for (i = 0; i < SegvecJobs->max_jobs; i++)
		{
			SegvecServedSlot *c = &SegvecJobs->served[i];

			if (!OidIsValid(c->dboid))
			{
				e = c;
				break;
			}
			if (e == NULL || c->turn < e->turn)
				e = c;
		}
		e->dboid = s->dboid;
		e->indexid = s->indexid;
		e->owner = InvalidOid;
	}
	if (OidIsValid(s->owner))
		e->owner = s->owner;
	e->turn = ++SegvecJobs->turns;
}

/* A new pending slot s takes the owner its index was last served for */
void
JobFillOwnerLocked(SegvecJobSlot *s)
{
	SegvecServedSlot *e = served_for(s->dboid, s->indexid);

	if (e != NULL && OidIsValid(e->owner))
	{
		s->owner = e->owner;
		s->owner_looked = true;
	}
}

/* Running jobs of a kind */
int
JobsRunning(SegvecJobKind kind)
{
	int			i,
				n = 0;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		if (SegvecJobs->jobs[i].state == SEGVEC_JOB_RUNNING &&
			SegvecJobs->jobs[i].kind == kind)
			n++;
	}
	return n;
}

/*
 * How many merge jobs may run at once: segvec.merge_concurrency (merge.c
 * defines it; read by name, so the scheduler does not depend on merge.c).
 * Call without the lock held.
 */
int
JobsMergeLimit(void)
{
	const char *value = GetConfigOption("segvec.merge_concurrency", true,
										false);
	int			n = value ? atoi(value) : 0;

	return n > 0 ? n : INT_MAX;
}

int
JobsLiveWorkers(void)
{
	int			i,
				n = 0;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		if (SegvecJobs->workers[i].state != SEGVEC_WORKER_FREE)
			n++;
	}
	return n;
}

/* A worker that will take a job of dboid without a new launch */
bool
JobIdleWorkerFor(Oid dboid, int *count)
{
	int			i,
				n = 0;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &SegvecJobs->workers[i];

		if (w->dboid != dboid)
			continue;
		if (w->state == SEGVEC_WORKER_STARTING ||
			(w->state == SEGVEC_WORKER_ATTACHED && !w->busy))
			n++;
	}
	if (count)
		*count = n;
	return n > 0;
}

/* Any worker (starting, idle or busy) for dboid, but one on its way out */
bool
JobAnyWorkerFor(Oid dboid)
{
	int			i;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &SegvecJobs->workers[i];

		if (w->dboid == dboid &&
			(w->state == SEGVEC_WORKER_STARTING ||
			 w->state == SEGVEC_WORKER_ATTACHED))
			return true;
	}
	return false;
}

/* A worker other than except that is connected to dboid */
bool
JobAnyWorkerConnectedTo(Oid dboid, int except)
{
	int			i;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &SegvecJobs->workers[i];

		if (i != except && w->dboid == dboid &&
			w->state == SEGVEC_WORKER_ATTACHED && w->connected)
			return true;
	}
	return false;
}

SegvecSweepSlot *
JobSweepFor(Oid dboid)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		if (SegvecJobs->sweeps[i].dboid == dboid)
			return &SegvecJobs->sweeps[i];
	}
	return NULL;
}

/* Back-off before attempt number attempts + 1, in ms */
long
JobRetryDelayMs(int attempts)
{
	long		ms = (long) segvec_naptime * 1000L;

	while (--attempts > 0 && ms < 600 * 1000L)
		ms *= 2;
	return Min(ms, 600 * 1000L);
}

/*
 * The running job in slot idx ended with outcome: count it, free the slot,
 * or, when it gave way, put it back as pending after a naptime (not an
 * attempt), or, after a failure, put it back as pending with a back-off (unless a
 * newer request for the key is pending already, which covers it, or it
 * has had all its attempts).  Returns true if it was given up.
 */
bool
JobFinishLocked(int idx, JobOutcome outcome, TimestampTz now)
{
	SegvecJobSlot *s = &SegvecJobs->jobs[idx];
	SegvecJobKind kind = s->kind;
	bool		given_up = false;

	switch (outcome)
	{
		case JOB_DONE:
			SegvecJobs->counters.run[kind]++;
			break;
		case JOB_SKIPPED:
			SegvecJobs->counters.skipped[kind]++;
			break;
		case JOB_BUSY:
			/* not an attempt: try again after a nap (DROP, ALTER ...) */
			SegvecJobs->counters.skipped[kind]++;
			if (JobTwinPending(s) != NULL)
				break;
			s->state = SEGVEC_JOB_PENDING;
			s->worker = -1;
			s->started_at = 0;
			s->not_before = TimestampTzPlusMilliseconds(now,
														(long) segvec_naptime * 1000L);
			return false;
		case JOB_FAILED:
			SegvecJobs->counters.failed[kind]++;
			if (JobTwinPending(s) != NULL)
				break;
			if (s->attempts + 1 < SEGVEC_JOB_MAX_ATTEMPTS)
			{
				s->state = SEGVEC_JOB_PENDING;
				s->attempts++;
				s->worker = -1;
				s->started_at = 0;
				s->not_before = TimestampTzPlusMilliseconds(now,
															JobRetryDelayMs(s->attempts));
				return false;
			}
			SegvecJobs->counters.dropped[kind]++;
			given_up = true;
			break;
	}
	memset(s, 0, sizeof(SegvecJobSlot));
	s->state = SEGVEC_JOB_FREE;
	s->worker = -1;
	return given_up;
}

void
JobCountOutcomeLocked(SegvecJobKind kind, JobOutcome outcome)
{
	if (outcome == JOB_DONE)
		SegvecJobs->counters.run[kind]++;
	else if (outcome == JOB_SKIPPED || outcome == JOB_BUSY)
		SegvecJobs->counters.skipped[kind]++;
	else
		SegvecJobs->counters.failed[kind]++;
}

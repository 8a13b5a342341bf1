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


/*
 * Is a job with the key of s running?  A compaction that is building a
 * merge of segments does not count for another compaction: the merge
 * holds the merge lock, not the compaction lock, so the two can run at
 * once, and a merge of a big segment takes long enough for a stream of
 * inserts to pile up many times compact_threshold in the mutable segment.
 */
bool
JobTwinRunning(const SegvecJobSlot *s)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *t = &SegvecJobs->jobs[i];

		if (t->state == SEGVEC_JOB_RUNNING && t->dboid == s->dboid &&
			t->indexid == s->indexid && t->kind == s->kind &&
			!(t->kind == SEGVEC_JOB_COMPACT && t->merging))
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

/* ----------------
 * Long jobs
 *
 * A job that has run segvec.job_long_after or longer is *long*.  For the
 * jobs of other owners a long job does not count against
 * segvec.merge_concurrency, and its worker does not count against
 * segvec.max_workers (the launcher may start up to segvec.max_workers
 * more workers, which take only jobs of owners with no long job running):
 * so one role's slow triggers, or a long compaction, delay another role's
 * waiting job by about segvec.job_long_after, not by their own length.
 * For the owner of a long job both limits stay as they are.
 * ----------------
 */

/* Has the running job s run segvec.job_long_after or longer? */
bool
JobIsLong(const SegvecJobSlot *s, TimestampTz now)
{
	return s->state == SEGVEC_JOB_RUNNING && segvec_job_long_after > 0 &&
		TimestampDifferenceExceeds(s->started_at, now, segvec_job_long_after);
}

/* Do the jobs a and b belong to the same owner (same index if unknown)? */
static bool
same_owner(const SegvecJobSlot *a, const SegvecJobSlot *b)
{
	if (OidIsValid(a->owner) && OidIsValid(b->owner))
		return a->owner == b->owner;
	return a->dboid == b->dboid && a->indexid == b->indexid;
}

/* Has the owner of s a long job running? */
bool
JobOwnerHasLong(const SegvecJobSlot *s, TimestampTz now)
{
	int			i;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *t = &SegvecJobs->jobs[i];

		if (t != s && JobIsLong(t, now) && same_owner(t, s))
			return true;
	}
	return false;
}

/*
 * The running merges that count against segvec.merge_concurrency for the
 * job s: all but the long ones of other owners.
 */
int
JobMergesAgainst(const SegvecJobSlot *s, TimestampTz now)
{
	int			i,
				n = 0;

	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecJobSlot *t = &SegvecJobs->jobs[i];

		if (t->state == SEGVEC_JOB_RUNNING && t->kind == SEGVEC_JOB_MERGE &&
			(!JobIsLong(t, now) || same_owner(t, s)))
			n++;
	}
	return n;
}

/* Workers running a long job */
int
JobsLongWorkers(TimestampTz now)
{
	int			i,
				n = 0;

	for (i = 0; i < SEGVEC_MAX_WORKERS_LIMIT; i++)
	{
		SegvecWorkerSlot *w = &SegvecJobs->workers[i];

		if (w->state == SEGVEC_WORKER_ATTACHED && w->job >= 0 &&
			JobIsLong(&SegvecJobs->jobs[w->job], now))
			n++;
	}
	return n;
}

/*
 * Can a worker take s now?  max_merges: segvec.merge_concurrency
 * (JobsMergeLimit).
 */
bool
JobRunnable(const SegvecJobSlot *s, TimestampTz now, int max_merges)
{
	return s->state == SEGVEC_JOB_PENDING && s->not_before <= now &&
		(s->kind != SEGVEC_JOB_MERGE ||
		 JobMergesAgainst(s, now) < max_merges) &&
		!JobTwinRunning(s);
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
 * above), or -1 if none is runnable.  fresh_only: only jobs whose owner
 * has no long job running (a worker beyond segvec.max_workers).
 */
int
JobPickLocked(Oid dboid, TimestampTz now, int max_merges, bool fresh_only)
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

		if (s->dboid != dboid || !JobRunnable(s, now, max_merges) ||
			(fresh_only && JobOwnerHasLong(s, now)))
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
 * The served entry of (dboid, indexid), made if there is none by reusing
 * an unused or the least recently served entry.
 */
static SegvecServedSlot *
served_entry(Oid dboid, Oid indexid)
{
	SegvecServedSlot *e = served_for(dboid, indexid);
	int			i;

	if (e != NULL)
		return e;
	e = &SegvecJobs->served[0];	/* max_jobs is at least 1 */
	for (i = 0; i < SegvecJobs->max_jobs; i++)
	{
		SegvecServedSlot *c = &SegvecJobs->served[i];

		if (!OidIsValid(c->dboid))
		{
			e = c;
			break;
		}
		if (c->turn < e->turn)
			e = c;
	}
	if (e == NULL)
		elog(ERROR, "segvec job table has no served entries");
	memset(e, 0, sizeof(SegvecServedSlot));
	e->dboid = dboid;
	e->indexid = indexid;
	return e;
}

/*
 * A worker takes s: advance the clock and note the turn of its index (and
 * owner); a merge gets its index's batch cap, and whether it runs past
 * other owners' long merges (then it may take a merge slot beyond
 * segvec.merge_concurrency, see acquire_merge_slot).
 */
void
JobNoteTakenLocked(SegvecJobSlot *s, TimestampTz now, int max_merges)
{
	SegvecServedSlot *e = served_entry(s->dboid, s->indexid);

	if (OidIsValid(s->owner))
		e->owner = s->owner;
	e->turn = ++SegvecJobs->turns;
	s->batch_rows = s->kind == SEGVEC_JOB_MERGE ? e->batch_rows : 0;
	s->past_long = s->kind == SEGVEC_JOB_MERGE &&
		JobsRunning(SEGVEC_JOB_MERGE) >= max_merges;
}

/*
 * A new pending slot s takes the owner its index was last served for,
 * and a merge the back-off of its index's merges that ran out of time.
 */
void
JobFillOwnerLocked(SegvecJobSlot *s)
{
	SegvecServedSlot *e = served_for(s->dboid, s->indexid);

	if (e != NULL && OidIsValid(e->owner))
	{
		s->owner = e->owner;
		s->owner_looked = true;
	}
	if (e != NULL && s->kind == SEGVEC_JOB_MERGE)
		s->not_before = Max(s->not_before, e->retry_at);
}

/*
 * The batch cap of the next merge after one that took rows queued rows
 * (0: not known) and ran out of time with cap batch_rows: half of what
 * it took, at least 1.
 */
int
JobNextBatchRows(int batch_rows, int rows)
{
	if (rows <= 0)
		return batch_rows;
	return Max(1, rows / 2);
}

/*
 * Remember how a merge of (dboid, indexid) ended, for the merges of the
 * index that follow, whichever job slot they get: after a time-out the
 * next merges apply half as many rows (JobNextBatchRows) and wait
 * JobRetryDelayMs(time-outs in a row), so a batch that is always too slow
 * is retried ever more rarely (at most every 10 minutes), not in a loop
 * however often the queue is resubmitted; a merge that completes doubles
 * the cap back and clears the back-off.  Returns the retry time.
 */
TimestampTz
JobNoteMergeOutcomeLocked(Oid dboid, Oid indexid, JobOutcome outcome,
						  int rows, TimestampTz now)
{
	SegvecServedSlot *e;

	if (outcome == JOB_TIMED_OUT)
	{
		e = served_entry(dboid, indexid);
		e->timeouts++;
		e->batch_rows = JobNextBatchRows(e->batch_rows, rows);
		e->retry_at = TimestampTzPlusMilliseconds(now,
												  JobRetryDelayMs(e->timeouts));
		return e->retry_at;
	}
	if (outcome == JOB_DONE && (e = served_for(dboid, indexid)) != NULL)
	{
		e->timeouts = 0;
		e->retry_at = 0;
		if (e->batch_rows > 0)
			e->batch_rows = e->batch_rows >= 1000000 ? 0 : e->batch_rows * 2;
	}
	return 0;
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
 * has had all its attempts).  A merge cancelled by segvec.job_time_limit
 * is a failure whose back-off and smaller batch also hold for a newer
 * request (JobNoteMergeOutcomeLocked); rows: the queued rows the merge
 * took (0: not known).  Returns true if it was given up.
 */
bool
JobFinishLocked(int idx, JobOutcome outcome, int rows, TimestampTz now)
{
	SegvecJobSlot *s = &SegvecJobs->jobs[idx];
	SegvecJobKind kind = s->kind;
	bool		given_up = false;
	SegvecJobSlot *twin;
	TimestampTz retry_at;

	switch (outcome)
	{
		case JOB_DONE:
			SegvecJobs->counters.run[kind]++;
			if (kind == SEGVEC_JOB_MERGE)
				(void) JobNoteMergeOutcomeLocked(s->dboid, s->indexid,
												 outcome, rows, now);
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
		case JOB_TIMED_OUT:
			/* a failure whose back-off outlives the slot (above) */
			SegvecJobs->counters.failed[kind]++;
			retry_at = JobNoteMergeOutcomeLocked(s->dboid, s->indexid,
												 outcome, rows, now);
			if ((twin = JobTwinPending(s)) != NULL)
			{
				twin->not_before = Max(twin->not_before, retry_at);
				break;
			}
			if (s->attempts + 1 < SEGVEC_JOB_MAX_ATTEMPTS)
			{
				s->state = SEGVEC_JOB_PENDING;
				s->attempts++;
				s->worker = -1;
				s->started_at = 0;
				s->not_before =
					Max(retry_at,
						TimestampTzPlusMilliseconds(now,
													JobRetryDelayMs(s->attempts)));
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

/*-------------------------------------------------------------------------
 *
 * jobrun.c
 *	  The bodies of background jobs: compact, snapshot and merge, each run
 *	  in its own transaction with its errors caught.
 *
 * A job opens the table, then the index, checks that the index still is a
 * segvec index, and calls the subsystem that does the work: compaction
 * (SegvecCompact), the keymap (SegvecKeymapSnapshot), or the runner that
 * merge-insert registered for merge jobs (SegvecRegisterJobRunner), so
 * that jobs never call up into merge-insert.
 *
 * src/jobs/jobrun.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "compact/compact.h"
#include "hooks/testhooks.h"
#include "jobs/jobs_int.h"
#include "keymap/keymap.h"
#include "store/store.h"

/* For the error context of the running job */
static const char *job_index_name = NULL;
static SegvecJobKind job_kind;
static Oid	job_indexid;

/* The running merge's batch cap and slot rule, rows taken (jobs.h) */
static int	job_batch_rows = 0;
static bool job_past_long = false;
static int64 job_rows_taken = 0;

/* Names for the log line of a job that ran out of time (outlive the xact) */
static NameData job_index_nd;
static NameData job_owner_nd;

/* Runners registered by other subsystems, by job kind */
static SegvecJobRunner job_runners[SEGVEC_NUM_JOB_KINDS];

/*
 * SegvecRegisterJobRunner: from _PG_init, name the function that runs jobs
 * of kind (used for merge jobs, whose work belongs to merge-insert).  The
 * runner gets the index, opened and locked RowExclusiveLock, with its table
 * locked as the kind needs, inside the job's transaction.
 */
void
SegvecRegisterJobRunner(SegvecJobKind kind, SegvecJobRunner runner)
{
	Assert(kind >= 0 && kind < SEGVEC_NUM_JOB_KINDS);
	job_runners[kind] = runner;
}

int
SegvecJobBatchRows(void)
{
	return job_batch_rows;
}

bool
SegvecJobPastLongMerges(void)
{
	return job_past_long;
}

void
SegvecJobNoteBatch(int64 rows)
{
	job_rows_taken = rows;
}

static void
job_error_context(void *arg)
{
	if (job_index_name)
		errcontext("segvec %s job for index \"%s\"",
				   SegvecJobKindName(job_kind), job_index_name);
	else
		errcontext("segvec %s job for index %u",
				   SegvecJobKindName(job_kind), job_indexid);
}

/*
 * Lock relid in mode without waiting (false if it is taken in a
 * conflicting mode).
 */
static bool
lock_or_give_way(Oid relid, LOCKMODE mode)
{
	return OidIsValid(relid) && ConditionalLockRelationOid(relid, mode);
}

/*
 * A merge writes the table (and so every index of it) and the extension's
 * queue tables: lock them all now, without waiting, so that the job never
 * waits for a lock while it holds one that a DROP (of the extension, an
 * index, the table) holds or waits for: it gives way instead.
 */
static bool
lock_merge_relations(Relation heap)
{
	Oid			ftnsp = get_namespace_oid("ft", true);
	List	   *indexes;
	ListCell   *lc;

	if (!OidIsValid(ftnsp) ||
		!lock_or_give_way(get_relname_relid("pending", ftnsp), RowExclusiveLock) ||
		!lock_or_give_way(get_relname_relid("merge_counters", ftnsp),
						  RowExclusiveLock))
		return false;
	indexes = RelationGetIndexList(heap);
	foreach(lc, indexes)
	{
		if (!lock_or_give_way(lfirst_oid(lc), RowExclusiveLock))
			return false;
	}
	return true;
}

/*
 * Take an xid that follows the stamps of what this transaction's installs
 * freed (the xid that was next at each install, SegvecFreeStamp): the
 * transaction's own when it takes its first now; one it took before its
 * installs precedes their stamps, so then a subtransaction's, which
 * completes with the transaction.
 */
static void
take_xid_after_installs(void)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;

	if (!TransactionIdIsValid(GetTopTransactionIdIfAny()))
	{
		(void) GetTopTransactionId();
		return;
	}
	BeginInternalSubTransaction(NULL);
	(void) GetCurrentTransactionId();
	ReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(oldcxt);
	CurrentResourceOwner = oldowner;
}

/*
 * What this job's installs (compactions, merges, a move, a keymap
 * snapshot) freed becomes reusable once the xid that was next at the
 * installs is older than every running snapshot.  On a server that goes
 * quiet now no one would take that xid: the freed space would stay
 * unusable, and a merged or moved segment at the end of the index with its
 * old copy's space below it, until the next write.  So take an xid that
 * follows them and ask for one more settle, which, after this transaction
 * has committed, finds nothing to settle and shrinks (run_settle).  A
 * shrink asks again only after a move (each takes a structure lower), or
 * when it waited for space freed after the last xid was taken (which the
 * xid taken here follows), so this ends.
 */
static void
shrink_after_commit(Relation index)
{
	if (SegvecSubmitSettle(RelationGetRelid(index),
						   SegvecMutableChangeMark(index), 1))
		take_xid_after_installs();
}

/*
 * SegvecShrink, and once more after the commit if a move freed space, or
 * if it waited for space that only a new xid makes reusable
 */
static void
shrink(Relation index, int timeout_ms)
{
	if (SegvecShrink(index, timeout_ms))
		shrink_after_commit(index);
}

/*
 * After a compaction job: ask for the index to be settled once it has been
 * quiet, if it owes a fresh build anything (SegvecSettleDue) and no merge
 * was left for the next compaction (which asks in turn); if it owes
 * nothing but the job compacted or merged, for the shrink after its
 * installs (shrink_after_commit).
 */
static void
submit_settle(Relation index, const SegvecCompactStats *stats)
{
	int			naps;

	if (stats != NULL && stats->merges_deferred)
		return;
	if (SegvecSettleDue(index, &naps))
		(void) SegvecSubmitSettle(RelationGetRelid(index),
								  SegvecMutableChangeMark(index), naps);
	else if (stats != NULL &&
			 (stats->segments_merged > 0 || stats->docs_compacted > 0))
		shrink_after_commit(index);
}

/*
 * The settle job (a compaction submitted by SegvecSubmitSettle, run once
 * its index has been quiet).  If the mutable segment changed since the
 * job was submitted (mark), the index is not quiet: the job asks again,
 * with the new mark, and does nothing.  Otherwise it settles the index
 * (SegvecSettle) and asks for one more settle, which finds nothing to do
 * and gives back what the merges freed at the relation's end (see below).
 * JOB_BUSY when the merge lock was taken and a merge is still due.
 */
static JobOutcome
run_settle(Relation index, Oid owner, uint64 mark, bool *changed)
{
	SegvecCompactStats stats;
	SegvecSavedIdentity saved;
	uint64		now_mark = SegvecMutableChangeMark(index);
	int			naps;

	if (!SegvecSettleDue(index, &naps))
	{
		/* settled: what the settle freed may be reusable now (below) */
		shrink(index, SEGVEC_TRUNCATE_WAIT_MS);
		return JOB_SKIPPED;
	}
	if (mark == 0 || now_mark != mark)
	{
		(void) SegvecSubmitSettle(RelationGetRelid(index), now_mark, naps);
		return JOB_SKIPPED;
	}
	SegvecIdentityPush(&saved, owner);
	SegvecSettle(index, &stats);
	ereport(DEBUG1,
			(errmsg_internal("segvec settled index \"%s\" as role \"%s\": " INT64_FORMAT " docs compacted, %d segments merged",
							 job_index_name,
							 GetUserNameFromId(GetUserId(), false),
							 stats.docs_compacted, stats.segments_merged)));
	SegvecIdentityPop(&saved);
	*changed = stats.docs_compacted > 0 || stats.segments_merged > 0;
	if (*changed)
	{
		/*
		 * A snapshot taken now would have the xid that was next at the
		 * installs as its xmin: leave the move and the truncation to one
		 * more settle, after this transaction has committed.
		 */
		shrink_after_commit(index);
	}
	if (stats.merges_deferred)
		(void) SegvecSubmitJob(RelationGetRelid(index), SEGVEC_JOB_COMPACT);
	else if (stats.merge_lock_busy && SegvecSettleDue(index, NULL))
		return JOB_BUSY;
	return JOB_DONE;
}

/*
 * The body of a job, inside its transaction.  Locks the table, then the
 * index (RowExclusiveLock, as ft.compact does: DROP INDEX waits for the
 * job), after checking that the index still exists and is a segvec index;
 * otherwise returns JOB_SKIPPED.  The relation locks are taken without
 * waiting: when one is taken in a conflicting mode (a DROP EXTENSION,
 * DROP INDEX or ALTER TABLE under way), returns JOB_BUSY and the job is
 * tried again later; waiting could deadlock with a DROP, which locks the
 * index before the table.  A compaction that was not forced is done only if
 * the mutable segment really holds compact_threshold docs; else the job
 * runs only the merges that are due (SegvecMergeDue: a segment VACUUM
 * left with too many tombstones), or returns JOB_SKIPPED; if another
 * backend holds the merge lock and the rewrite is still due, JOB_BUSY.
 * Sets *changed when a compaction moved docs or merged segments.
 * Compactions and snapshots run as the table's owner, in a
 * security-restricted operation; the merge runner switches itself.
 */
static JobOutcome
run_job_in_xact(Oid indexid, SegvecJobKind kind, bool force, bool settle,
				uint64 settle_mark, bool *changed)
{
	LOCKMODE	heaplock = kind == SEGVEC_JOB_MERGE ? RowExclusiveLock :
		AccessShareLock;
	Oid			heapid;
	Oid			owner;
	Relation	heap;
	Relation	index;
	SegvecCompactStats stats;
	SegvecSavedIdentity saved;

	heapid = IndexGetRelation(indexid, true);
	if (!OidIsValid(heapid))
		return JOB_SKIPPED;
	if (!lock_or_give_way(heapid, heaplock))
		return JOB_BUSY;
	heap = try_relation_open(heapid, NoLock);
	if (heap == NULL)
		return JOB_SKIPPED;
	owner = heap->rd_rel->relowner;
	if (kind == SEGVEC_JOB_MERGE && !lock_merge_relations(heap))
	{
		relation_close(heap, NoLock);
		return JOB_BUSY;
	}
	/* keep the lock, not the reference: a merge may CREATE INDEX on it */
	relation_close(heap, NoLock);
	if (!lock_or_give_way(indexid, RowExclusiveLock))
		return JOB_BUSY;
	index = try_relation_open(indexid, NoLock);
	if (index == NULL)
		return JOB_SKIPPED;
	/* a partitioned index has only a queue of merges, no storage */
	if (!(SegvecIsSegvecIndex(index) ||
		  (kind == SEGVEC_JOB_MERGE && SegvecIsPartitionedIndex(index))) ||
		index->rd_index->indrelid != heapid ||
		RELATION_IS_OTHER_TEMP(index))
	{
		relation_close(index, NoLock);
		return JOB_SKIPPED;
	}

	job_index_name = pstrdup(RelationGetRelationName(index));
	namestrcpy(&job_index_nd, job_index_name);
	{
		char	   *ownername = GetUserNameFromId(owner, true);

		namestrcpy(&job_owner_nd, ownername ? ownername : "?");
	}
	pgstat_report_activity(STATE_RUNNING,
						   psprintf("segvec %s of index %s",
									SegvecJobKindName(kind), job_index_name));

	if (kind == SEGVEC_JOB_COMPACT && settle && !force)
	{
		JobOutcome	outcome = run_settle(index, owner, settle_mark, changed);

		relation_close(index, NoLock);
		return outcome;
	}

	if (kind == SEGVEC_JOB_COMPACT && !force &&
		SegvecMutableCountDocs(index, SegvecCompactThreshold(index)) <
		SegvecCompactThreshold(index))
	{
		/*
		 * Nothing to compact, but a merge may be due: VACUUM submits a
		 * compaction when its tombstones pass segvec.merge_deletes_pct of
		 * a segment (segvecvacuum.c), for the rewrite that drops them.
		 */
		if (!SegvecMergeDue(index))
		{
			submit_settle(index, NULL);
			relation_close(index, NoLock);
			return JOB_SKIPPED;
		}
		SegvecIdentityPush(&saved, owner);
		memset(&stats, 0, sizeof(stats));
		SegvecMergeSegments(index, &stats);
		ereport(DEBUG1,
				(errmsg_internal("segvec merged segments of index \"%s\" as role \"%s\": %d merged",
								 job_index_name,
								 GetUserNameFromId(GetUserId(), false),
								 stats.segments_merged)));
		SegvecIdentityPop(&saved);
		*changed = stats.segments_merged > 0;
		if (*changed)
			shrink(index, SEGVEC_TRUNCATE_WAIT_MS);	/* merges only */
		if (stats.merges_deferred)
			(void) SegvecSubmitJob(indexid, SEGVEC_JOB_COMPACT);
		else
			submit_settle(index, &stats);

		/*
		 * The merge lock was taken: by a merge, which looks at the policy
		 * again after its install (then the retry finds nothing due), or
		 * by a VACUUM's cleanup scan, which merges nothing.  Give way and
		 * retry after a nap rather than drop the rewrite.
		 */
		if (stats.merge_lock_busy && SegvecMergeDue(index))
		{
			relation_close(index, NoLock);
			return JOB_BUSY;
		}
		relation_close(index, NoLock);
		return JOB_DONE;
	}

	switch (kind)
	{
		case SEGVEC_JOB_COMPACT:
			SegvecIdentityPush(&saved, owner);
			SegvecCompact(index, &stats);
			ereport(DEBUG1,
					(errmsg_internal("segvec compacted index \"%s\" as role \"%s\": " INT64_FORMAT " docs, %d segments created, %d merged",
									 job_index_name,
									 GetUserNameFromId(GetUserId(), false),
									 stats.docs_compacted,
									 stats.segments_created,
									 stats.segments_merged)));
			SegvecIdentityPop(&saved);
			*changed = stats.docs_compacted > 0 || stats.segments_merged > 0;

			/*
			 * What the installs freed at the relation's end goes back at
			 * once, not at the next VACUUM (compact/shrink.c).
			 */
			if (*changed)
				shrink(index, stats.segments_merged > 0 ?
					   SEGVEC_TRUNCATE_WAIT_MS : 0);
			/* merges left for after the compaction they waited for */
			if (stats.merges_deferred)
				(void) SegvecSubmitJob(indexid, SEGVEC_JOB_COMPACT);
			else
				submit_settle(index, &stats);
			break;
		case SEGVEC_JOB_SNAPSHOT:
			SegvecIdentityPush(&saved, owner);
			/* no snapshot inside a compaction or an ft.compact drain */
			LockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
			SegvecDelayPoint();
			SegvecKeymapSnapshot(index);
			UnlockPage(index, SEGVEC_METAPAGE_BLKNO, ExclusiveLock);
			ereport(DEBUG1,
					(errmsg_internal("segvec wrote a keymap snapshot of index \"%s\" as role \"%s\"",
									 job_index_name,
									 GetUserNameFromId(GetUserId(), false))));
			SegvecIdentityPop(&saved);
			/* the runs and change pages it replaced */
			shrink_after_commit(index);
			break;
		default:
			/* merge: the runner merge-insert registered (its own delay point) */
			if (job_runners[kind] == NULL)
				elog(ERROR, "no runner for segvec %s jobs",
					 SegvecJobKindName(kind));
			job_runners[kind] (index);
			break;
	}

	/* the locks are held to the end of the transaction */
	relation_close(index, NoLock);
	return JOB_DONE;
}

/*
 * Run one job in its own transaction.  An error is caught here: logged,
 * the transaction aborted, and JOB_FAILED returned (JOB_TIMED_OUT when
 * segvec.job_time_limit cancelled a merge); a FATAL (shutdown,
 * pg_terminate_backend) ends the process and worker_onexit cleans up.
 * batch_rows and past_long are the merge's (JobNoteTakenLocked); *rows:
 * the queued rows a merge took.
 *
 * The time limit applies to merges only: they run the table's code
 * (triggers, defaults, domain and check constraints), which can take any
 * time.  Compactions and snapshots run no user code but index expressions,
 * and their length follows the index's size: a legitimately long
 * compaction cancelled at a fixed limit would be cancelled again at every
 * retry while the mutable segment grows.  Long jobs of any kind stop
 * holding up other owners' jobs after segvec.job_long_after (schedule.c).
 */
JobOutcome
JobRun(Oid indexid, SegvecJobKind kind, bool force, bool settle,
	   uint64 settle_mark, int batch_rows, bool past_long, bool *changed,
	   int *rows)
{
	volatile JobOutcome outcome = JOB_SKIPPED;
	MemoryContext oldctx = CurrentMemoryContext;
	ErrorContextCallback errcb;
	bool		needs_snapshot = kind != SEGVEC_JOB_COMPACT &&
		kind != SEGVEC_JOB_SNAPSHOT;
	volatile int limit = kind == SEGVEC_JOB_MERGE ? segvec_job_time_limit : 0;
	TimestampTz started = GetCurrentTimestamp();

	*changed = false;
	job_kind = kind;
	job_indexid = indexid;
	job_index_name = NULL;
	job_batch_rows = kind == SEGVEC_JOB_MERGE ? batch_rows : 0;
	job_past_long = kind == SEGVEC_JOB_MERGE && past_long;
	job_rows_taken = 0;
	snprintf(NameStr(job_index_nd), NAMEDATALEN, "%u", indexid);
	namestrcpy(&job_owner_nd, "?");
	errcb.callback = job_error_context;
	errcb.arg = NULL;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	PG_TRY();
	{
		StartTransactionCommand();

		/*
		 * A compaction or a keymap snapshot reads and writes index pages
		 * only, and needs no snapshot: without one (and with the catalog
		 * snapshot dropped, see SegvecCompact) the worker holds back no
		 * one's xmin horizon while it waits for the compaction lock and
		 * merges, so the extents every install frees meanwhile become
		 * reusable (store/extent.c).  The merge-insert runners run SQL.
		 */
		if (needs_snapshot)
			PushActiveSnapshot(GetTransactionSnapshot());
		SegvecSetInBackgroundJob(true);
		/* segvec.job_time_limit: the statement timeout of the whole merge */
		if (limit > 0)
			enable_timeout_after(STATEMENT_TIMEOUT, limit);
		outcome = run_job_in_xact(indexid, kind, force, settle, settle_mark,
								  changed);
		if (limit > 0)
			disable_timeout(STATEMENT_TIMEOUT, false);
		SegvecSetInBackgroundJob(false);
		if (needs_snapshot)
			PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		bool		timed_out;
		ErrorData  *edata;

		/*
		 * ProcessInterrupts resets the timeout's indicator when it reports
		 * the cancel: a cancel after the limit is the limit's.
		 */
		disable_timeout(STATEMENT_TIMEOUT, false);
		timed_out = limit > 0 &&
			TimestampDifferenceExceeds(started, GetCurrentTimestamp(), limit);
		SegvecSetInBackgroundJob(false);
		MemoryContextSwitchTo(oldctx);
		edata = CopyErrorData();
		timed_out = timed_out && edata->sqlerrcode == ERRCODE_QUERY_CANCELED;
		FreeErrorData(edata);
		HOLD_INTERRUPTS();
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		RESUME_INTERRUPTS();
		outcome = timed_out ? JOB_TIMED_OUT : JOB_FAILED;
	}
	PG_END_TRY();

	error_context_stack = errcb.previous;
	*rows = (int) Min(job_rows_taken, INT_MAX);
	if (outcome == JOB_TIMED_OUT)
	{
		int			next = JobNextBatchRows(batch_rows, *rows);

		ereport(LOG,
				(errmsg("segvec merge job for index \"%s\" of role \"%s\" canceled after segvec.job_time_limit (%d ms)",
						NameStr(job_index_nd), NameStr(job_owner_nd), limit),
				 next > 0 ?
				 errdetail("It had taken %d queued row(s); the next merges of the index apply at most %d at once and are retried with a back-off.",
						   *rows, next) :
				 errdetail("It had taken no queued rows; the next merges of the index are retried with a back-off."),
				 errhint("Make the table's triggers faster, raise segvec.job_time_limit, or apply the queue with ft.flush().")));
	}
	job_index_name = NULL;
	job_batch_rows = 0;
	job_past_long = false;
	MemoryContextSwitchTo(oldctx);
	pgstat_report_activity(STATE_IDLE, NULL);
	return outcome;
}

/* Run the job taken from slot idx, record how it ended */

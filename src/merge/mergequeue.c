/*-------------------------------------------------------------------------
 *
 * mergequeue.c
 *	  The queue of pending upserts: ft.add and ft.del append to ft.pending,
 *	  ft.pending_for reads it folded per id, ft.flush and the background
 *	  merge job (SegvecMergePending) apply it.
 *
 * ft.pending is readable and writable only by the extension's owner.  The
 * functions here check the caller's privileges on the indexed table, then
 * read or write ft.pending as that owner (the effect of SECURITY DEFINER,
 * which a PL/pgSQL function cannot get right: inside one, current_user is
 * the definer, so it cannot check the caller).  Applying the queue
 * (background merge, ft.flush) runs as the table's owner, never as the
 * worker's role or whoever flushes.
 *
 * Ordering: generations come from a sequence, so they are handed out in
 * call order but may commit out of order.  ft.add and ft.del of one id
 * serialize on a lock held to the end of their transaction, so the
 * generations of one id commit in order: a merge that sees a generation
 * of an id sees every older one.  A merge takes its rows out of ft.pending
 * with DELETE ... RETURNING in the transaction that applies them: a crash
 * keeps them queued, or has applied them, once.
 *
 * See src/README.md, "Merge-insert".
 *
 * src/merge/mergequeue.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "hooks/testhooks.h"
#include "jobs/jobs.h"
#include "kernels/distance.h"
#include "merge/merge.h"
#include "store/store.h"

/*
 * Indexes whose queue this transaction appended to; a merge job is
 * submitted for each at commit, when the rows are visible (submitting
 * earlier could let a worker run the job before it can see them).  Lives
 * in TopTransactionContext.
 */
static List *submit_at_commit = NIL;

static const struct config_enum_entry merge_method_options[] = {
	{"auto", MERGE_METHOD_AUTO, false},
	{"merge", MERGE_METHOD_MERGE, false},
	{"upsert", MERGE_METHOD_UPSERT, false},
	{NULL, 0, false}
};

/*
 * SegvecMergeInit: define the GUCs and register the commit callback.
 * Called from _PG_init, before segvec.* is reserved.
 */
void
SegvecMergeInit(void)
{
	DefineCustomBoolVariable("segvec.index_before_merge",
							 "Builds the btree on the id column before a merge that lacks one.",
							 "Without the btree a merge reads the whole table.",
							 &segvec_index_before_merge, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.merge_batch_rows",
							"Most pending upserts one merge applies.",
							"A background merge takes this many of an index's oldest pending rows per transaction.",
							&segvec_merge_batch_rows, 1000, 1, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.merge_concurrency",
							"Most background merges running at once in the cluster.",
							NULL,
							&segvec_merge_concurrency, 2, 1,
							SEGVEC_MAX_MERGE_CONCURRENCY,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("segvec.background_merge",
							 "Submits a background merge when ft.add or ft.del commits.",
							 "When off, queued upserts wait for ft.flush.",
							 &segvec_background_merge, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("segvec.merge_method",
							 "How merges and queued upserts apply rows: merge, upsert or auto.",
							 "upsert: INSERT ... ON CONFLICT (id) DO UPDATE and a DELETE of the deleted ids (needs a unique index on the id); auto: upsert on Citus tables, merge elsewhere.",
							 &segvec_merge_method, MERGE_METHOD_AUTO,
							 merge_method_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	RegisterXactCallback(MergeQueueXactCallback, NULL);

	/* background merge jobs apply the queue (mergequeue.c) */
	SegvecRegisterJobRunner(SEGVEC_JOB_MERGE, SegvecMergePending);
}

/*
 * The batch a running MERGE reads through ft._merge_batch(): rows
 * [start, end) of the coalesced pending rows.  Set only while the MERGE
 * runs.
 */
typedef struct StagedBatch
{
	SPITupleTable *tuptable;
	uint64		start;
	uint64		end;
} StagedBatch;

static StagedBatch *staged_batch = NULL;

/*
 * MERGE_ID locks this transaction took, per index (in
 * TopTransactionContext).  Past SEGVEC_MERGE_ID_LOCKS of them, ft.add and
 * ft.del of the index take its MERGE_IDS lock in ExclusiveLock instead (see
 * lock_id), so a transaction holds a bounded number of locks however many
 * ids it queues.
 */
typedef struct IdLockCount
{
	Oid			indexoid;
	int			nlocks;
} IdLockCount;

static List *id_lock_counts = NIL;

/*
 * At commit, submit a merge job for each index this transaction queued
 * upserts for.  SegvecSubmitJob never blocks and never errors, as a
 * callback after commit must not.
 */
void
MergeQueueXactCallback(XactEvent event, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			foreach(lc, submit_at_commit)
				(void) SegvecSubmitJob(lfirst_oid(lc), SEGVEC_JOB_MERGE);
			submit_at_commit = NIL;
			id_lock_counts = NIL;
			staged_batch = NULL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* a prepared transaction's rows: the launcher's periodic sweep applies them */
			submit_at_commit = NIL;
			id_lock_counts = NIL;
			staged_batch = NULL;
			break;
		default:
			break;
	}
}

/* ----------------
 * The queue: ft.add, ft.del, ft.pending_for
 * ----------------
 */

/*
 * check_fields: fields of ft.add must be a JSON object whose keys are
 * columns of the table other than the id and vector (not generated, not
 * GENERATED ALWAYS, not NOT NULL when the value is null), with values the
 * column types accept (checked with jsonb_populate_record, as the merge
 * will read them; domain constraints are the table owner's code, so the
 * caller runs this as the owner, see queue_op).  SPI must be connected.
 */
static void
check_fields(MergeTarget *t, Jsonb *fields)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	char	   *key = NULL;
	Oid			argtype = JSONBOID;
	Datum		arg = JsonbPGetDatum(fields);

	if (!JB_ROOT_IS_OBJECT(fields) || JB_ROOT_IS_SCALAR(fields))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fields must be a JSON object")));

	it = JsonbIteratorInit(&fields->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		AttrNumber	attnum;
		Form_pg_attribute att;

		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		attnum = get_attnum(t->heapoid, key);
		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of table \"%s\" does not exist",
							key, t->relname)));
		if (attnum == t->idatt || attnum == t->vecatt)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("fields cannot set column \"%s\"", key),
					 errhint("The id and the vector are arguments of their own.")));
		att = TupleDescAttr(t->tupdesc, attnum - 1);
		if (att->attgenerated || att->attidentity == ATTRIBUTE_IDENTITY_ALWAYS)
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("column \"%s\" of table \"%s\" cannot be written by a merge",
							key, t->relname),
					 errdetail("It is a generated or GENERATED ALWAYS identity column.")));
		if (!OidIsValid(SegvecUncheckedType(att->atttypid)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("fields cannot set column \"%s\" of table \"%s\"",
							key, t->relname),
					 errdetail("Its type %s has a domain inside a composite, range or multirange type, which searches could not read without running the domain's constraints.",
							   format_type_be(att->atttypid)),
					 errhint("Write to the table directly, or use ft.merge.")));
		if (v.type == jbvNull && att->attnotnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("column \"%s\" of table \"%s\" cannot be null",
							key, t->relname)));
	}

	if (SPI_execute_with_args(psprintf("SELECT pg_catalog.jsonb_populate_record(NULL::%s, $1)",
									   t->rowtype),
							  1, &argtype, &arg, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not check fields");
}

/*
 * lock_id: serialize the adds of one id of an index, to the end of the
 * transaction, so that their generations commit in order (a merge that
 * sees a generation of an id sees every older one).  Every add takes the
 * index's MERGE_IDS lock in RowExclusiveLock (compatible with itself) and
 * the id's MERGE_ID lock in ExclusiveLock; a transaction that has taken
 * SEGVEC_MERGE_ID_LOCKS id locks of the index takes MERGE_IDS in
 * ExclusiveLock instead (waiting for the other transactions adding to the
 * index, and keeping new ones out until it ends), and no more id locks.
 * So a transaction that queues 100,000 ids holds about
 * SEGVEC_MERGE_ID_LOCKS locks, not 100,000.  The escalated lock is taken
 * again on each call (a no-op when held), so a subtransaction that took it
 * and rolled back loses nothing.
 */
static void
lock_id(Oid indexoid, const char *canon)
{
	LOCKTAG		tag;
	IdLockCount *count = NULL;
	ListCell   *lc;

	foreach(lc, id_lock_counts)
	{
		if (((IdLockCount *) lfirst(lc))->indexoid == indexoid)
			count = lfirst(lc);
	}
	if (count == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		count = palloc0(sizeof(IdLockCount));
		count->indexoid = indexoid;
		id_lock_counts = lappend(id_lock_counts, count);
		MemoryContextSwitchTo(old);
	}

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, indexoid, 0,
						 SEGVEC_LOCKTAG_MERGE_IDS);
	if (count->nlocks >= SEGVEC_MERGE_ID_LOCKS)
	{
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
		return;
	}
	(void) LockAcquire(&tag, RowExclusiveLock, false, false);
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, indexoid,
						 hash_bytes((const unsigned char *) canon,
									strlen(canon)),
						 SEGVEC_LOCKTAG_MERGE_ID);
	if (LockAcquire(&tag, ExclusiveLock, false, false) == LOCKACQUIRE_OK)
		count->nlocks++;
}

/*
 * queue_op: ft.add (op 'u') and ft.del (op 'd').  Checks the caller's
 * privileges and the values, then appends a row to ft.pending and returns
 * its generation.
 */
static Datum
queue_op(FunctionCallInfo fcinfo, char op)
{
	static SPIPlanPtr insert_plan = NULL;
	MergeTarget t;
	char	   *idtext;
	char	   *canon;
	Oid			typinput,
				typioparam,
				typoutput;
	bool		typisvarlena;
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', 'n', 'n'};
	SavedIdentity saved;
	bool		isnull;
	int64		generation;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", PG_ARGISNULL(0) ? "index" : "id")));
	if (op == 'u' && PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("vector must not be null"),
				 errhint("ft.del removes a doc.")));

	MergeOpenTarget(PG_GETARG_OID(0), AccessShareLock, op == 'u', &t);
	MergeCheckPrivileges(&t, op == 'u' ? (ACL_INSERT | ACL_UPDATE) : ACL_DELETE);
	MergeCheckIdPrivilege(&t);
	if (t.temp)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot queue upserts for temporary table \"%s\"",
						t.relname),
				 errhint("Write to the table directly, or use ft.merge.")));
	if (check_enable_rls(t.heapoid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot queue upserts for table \"%s\": row-level security applies to role \"%s\"",
						t.relname, GetUserNameFromId(GetUserId(), false)),
				 errdetail("Queued upserts are applied by the table's owner, outside the policies."),
				 errhint("Write to the table directly, or use ft.merge, which runs as you.")));

	/*
	 * The id in its canonical text form (the id type's input, then output)
	 * and the fields are checked as the table's owner, in a
	 * security-restricted operation: a domain's constraint is the owner's
	 * code and must not run with the caller's privileges (the merge that
	 * applies the row runs as the owner too).
	 */
	SPI_connect();
	MergeIdentityPush(&saved, t.owner);
	idtext = text_to_cstring(PG_GETARG_TEXT_PP(1));
	getTypeInputInfo(t.idtype, &typinput, &typioparam);
	getTypeOutputInfo(t.idtype, &typoutput, &typisvarlena);
	canon = OidOutputFunctionCall(typoutput,
								  OidInputFunctionCall(typinput, idtext,
													   typioparam,
													   t.idtypmod));
	if (op == 'u' && !PG_ARGISNULL(3))
		check_fields(&t, PG_GETARG_JSONB_P(3));
	MergeIdentityPop(&saved);

	if (op == 'u')
	{
		ArrayType  *vec = PG_GETARG_ARRAYTYPE_P(2);
		int			dim;

		(void) SegvecArrayGetVector(vec, &dim);
		if (t.dimensions > 0 && dim != t.dimensions)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg_plural("vector has %d dimension, index \"%s\" has %d",
								   "vector has %d dimensions, index \"%s\" has %d",
								   dim, dim, t.indexname, t.dimensions)));
		values[3] = PointerGetDatum(vec);
		nulls[3] = ' ';
		if (!PG_ARGISNULL(3))
		{
			values[4] = PG_GETARG_DATUM(3);
			nulls[4] = ' ';
		}
	}

	/* adds of one id serialize: see lock_id */
	lock_id(t.indexoid, canon);

	values[0] = ObjectIdGetDatum(t.indexoid);
	values[1] = CStringGetTextDatum(canon);
	values[2] = CharGetDatum(op);
	MergeIdentityPush(&saved, MergePendingOwner());
	if (insert_plan == NULL)
	{
		Oid			argtypes[5] = {OIDOID, TEXTOID, CHAROID, FLOAT4ARRAYOID,
		JSONBOID};
		SPIPlanPtr	plan;

		plan = SPI_prepare("INSERT INTO ft.pending (indexrelid, id, op, vector, fields)\n"
						   "VALUES ($1, $2, $3, $4, $5) RETURNING generation",
						   5, argtypes);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s",
				 SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
		insert_plan = plan;
	}
	if (SPI_execute_plan(insert_plan, values, nulls, false, 1) !=
		SPI_OK_INSERT_RETURNING || SPI_processed != 1)
		elog(ERROR, "could not queue the upsert");
	MergeIdentityPop(&saved);
	generation = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											 SPI_tuptable->tupdesc, 1,
											 &isnull));
	SPI_finish();

	if (segvec_background_merge)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		submit_at_commit = list_append_unique_oid(submit_at_commit,
												  t.indexoid);
		MemoryContextSwitchTo(old);
	}
	PG_RETURN_INT64(generation);
}

/*
 * ft.add(index regclass, id text, vector real[], fields jsonb DEFAULT NULL)
 *	 -> bigint
 *
 * Queues an upsert of the doc with this id: its vector and the given
 * fields (other columns keep their values, or take their defaults in a new
 * row).  Needs INSERT and UPDATE on the table and SELECT on its id column
 * (as INSERT ... ON CONFLICT (id) DO UPDATE would).  Returns the generation.
 */
PG_FUNCTION_INFO_V1(ft_add);
Datum
ft_add(PG_FUNCTION_ARGS)
{
	return queue_op(fcinfo, 'u');
}

/*
 * ft.del(index regclass, id text) -> bigint
 *
 * Queues the deletion of the row(s) with this id.  Needs DELETE on the
 * table and SELECT on its id column (as DELETE ... WHERE id = ... would).
 * Returns the generation.
 */
PG_FUNCTION_INFO_V1(ft_del);
Datum
ft_del(PG_FUNCTION_ARGS)
{
	return queue_op(fcinfo, 'd');
}

/*
 * coalesce_sql: the query that folds pending rows (the CTE `taken`, with
 * columns id, op, vector, fields, generation) into one row per id, the
 * effect of applying them in generation order:
 *
 *	 id, op, vector, fields, generation, keys, n
 *
 * op is 'd' when the newest is a delete; 'r' (replace: delete, then
 * insert) when an add follows a delete; else 'u'.  vector is the newest
 * row's; fields the adds' fields since the last delete, the newest value
 * per key; generation the newest; keys the sorted field names; n the rows
 * folded.
 */
static char *
coalesce_sql(const char *taken, const char *order)
{
	/* window functions only: one sort, no join the planner can misjudge */
	return psprintf("WITH taken AS (%s),\n"
					" w AS (SELECT t.id, t.op, t.vector, t.fields, t.generation,\n"
					"         pg_catalog.max(t.generation) FILTER (WHERE t.op OPERATOR(pg_catalog.=) 'd')\n"
					"           OVER (PARTITION BY t.id) AS dgen\n"
					"       FROM taken t),\n"
					" x AS (SELECT w.*,\n"
					"         ft._jsonb_merge_agg(w.fields)\n"
					"           FILTER (WHERE w.op OPERATOR(pg_catalog.=) 'u' AND w.generation OPERATOR(pg_catalog.>) COALESCE(w.dgen, 0))\n"
					"           OVER p AS merged,\n"
					"         pg_catalog.max(w.generation) OVER p AS newest,\n"
					"         pg_catalog.count(*) OVER p AS n\n"
					"       FROM w\n"
					"       WINDOW p AS (PARTITION BY w.id ORDER BY w.generation\n"
					"                    ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING))\n"
					"SELECT x.id,\n"
					"       (CASE WHEN x.op OPERATOR(pg_catalog.=) 'd' THEN 'd' WHEN x.dgen IS NOT NULL THEN 'r' ELSE 'u' END)::\"char\" AS op,\n"
					"       x.vector, x.merged AS fields, x.newest,\n"
					"       ARRAY(SELECT pg_catalog.jsonb_object_keys(x.merged) ORDER BY 1) AS keys, x.n\n"
					"FROM x WHERE x.generation OPERATOR(pg_catalog.=) x.newest\n"
					"ORDER BY %s",
					taken, order);
}

/*
 * The rows of one of the queue's tables for the index (arg 0) that sql
 * returns ($1: the index), as a set-returning function's result, a replace
 * ('r') shown as an upsert ('u') in the second column.  Needs SELECT on
 * the table; a caller to whom the table's row-level security applies gets
 * no rows (the policies cannot be judged on rows not yet in the table).
 */
static Datum
queue_rows(FunctionCallInfo fcinfo, const char *sql)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MergeTarget t;
	Oid			argtype = OIDOID;
	Datum		arg;
	uint64		i;

	InitMaterializedSRF(fcinfo, 0);
	MergeOpenTarget(PG_GETARG_OID(0), AccessShareLock, false, &t);
	MergeCheckPrivileges(&t, ACL_SELECT);
	if (check_enable_rls(t.heapoid, InvalidOid, true) == RLS_ENABLED)
		return (Datum) 0;

	SPI_connect();
	arg = ObjectIdGetDatum(t.indexoid);
	MergeQueueExecute(sql, 1, &argtype, &arg, NULL, 0);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		Datum	   *values = palloc(sizeof(Datum) * desc->natts);
		bool	   *nulls = palloc(sizeof(bool) * desc->natts);
		int			j;

		for (j = 0; j < desc->natts; j++)
			values[j] = SPI_getbinval(tup, desc, j + 1, &nulls[j]);
		if (!nulls[1] && DatumGetChar(values[1]) == 'r')
			values[1] = CharGetDatum('u');
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
		pfree(values);
		pfree(nulls);
	}
	SPI_finish();
	return (Datum) 0;
}

/*
 * ft.pending_for(index regclass)
 *	 -> TABLE (id text, op "char", vector real[], fields jsonb, generation bigint)
 *
 * The index's pending upserts folded per id (see coalesce_sql; op is 'u'
 * or 'd'), for the ft API's reads.  Needs SELECT on the table; a caller to
 * whom the table's row-level security applies gets no rows (the policies
 * cannot be judged on rows not yet in the table).
 */
PG_FUNCTION_INFO_V1(ft_pending_for);
Datum
ft_pending_for(PG_FUNCTION_ARGS)
{
	return queue_rows(fcinfo,
					  coalesce_sql("SELECT id, op, vector, fields, generation\n"
								   "  FROM ft.pending WHERE indexrelid = $1",
								   "x.id"));
}

/*
 * ft.failed_for(index regclass)
 *	 -> TABLE (id text, op "char", vector real[], fields jsonb,
 *			   generation bigint, failed_at timestamptz, sqlstate text,
 *			   message text)
 *
 * The index's queued upserts that a background merge set aside because
 * applying them failed (set_aside), oldest first.  Needs SELECT on the
 * table; a caller to whom the table's row-level security applies gets no
 * rows, as from ft.pending_for.
 */
PG_FUNCTION_INFO_V1(ft_failed_for);
Datum
ft_failed_for(PG_FUNCTION_ARGS)
{
	return queue_rows(fcinfo,
					  "SELECT id, op, vector, fields, generation, failed_at,\n"
					  "       sqlstate, message\n"
					  "  FROM ft.pending_failed WHERE indexrelid = $1\n"
					  "  ORDER BY generation");
}

/*
 * ft.discard_failed(index regclass, id text DEFAULT NULL) -> bigint
 *
 * Forgets the set-aside upserts of the index (of the id, when given);
 * returns how many.  Needs INSERT, UPDATE or DELETE on the table, as
 * ft.flush does.
 */
PG_FUNCTION_INFO_V1(ft_discard_failed);
Datum
ft_discard_failed(PG_FUNCTION_ARGS)
{
	MergeTarget t;
	Oid			argtypes[2] = {OIDOID, TEXTOID};
	Datum		values[2];
	char		nulls[2] = {' ', ' '};
	uint64		n;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	MergeOpenTarget(PG_GETARG_OID(0), AccessShareLock, false, &t);
	MergeCheckAnyPrivilege(&t, ACL_INSERT | ACL_UPDATE | ACL_DELETE);

	SPI_connect();
	values[0] = ObjectIdGetDatum(t.indexoid);
	values[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	if (PG_ARGISNULL(1))
		nulls[1] = 'n';
	MergeQueueExecute("DELETE FROM ft.pending_failed\n"
					  "  WHERE indexrelid = $1 AND ($2 IS NULL OR id = $2)",
					  2, argtypes, values, nulls, 0);
	n = SPI_processed;
	SPI_finish();
	PG_RETURN_INT64((int64) n);
}

/*
 * ft._merge_batch() -> SETOF (id text, op "char", vector real[], fields jsonb)
 *
 * The rows of the batch the running merge applies, for its MERGE
 * statement; an error anywhere else.
 */
PG_FUNCTION_INFO_V1(ft_merge_batch);
Datum
ft_merge_batch(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint64		i;

	if (staged_batch == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ft._merge_batch() can only be called by a segvec merge")));
	InitMaterializedSRF(fcinfo, 0);
	for (i = staged_batch->start; i < staged_batch->end; i++)
	{
		HeapTuple	tup = staged_batch->tuptable->vals[i];
		TupleDesc	desc = staged_batch->tuptable->tupdesc;
		Datum		values[4];
		bool		nulls[4];
		int			j;

		for (j = 0; j < 4; j++)
			values[j] = SPI_getbinval(tup, desc, j + 1, &nulls[j]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
	}
	return (Datum) 0;
}

/* ----------------
 * Applying the queue
 * ----------------
 */

/* The field names of coalesced row i (its `keys` column) */
static char *
row_keys(SPITupleTable *tt, uint64 i)
{
	return SPI_getvalue(tt->vals[i], tt->tupdesc, 6);
}

/*
 * group_stmt: the MERGE of rows [start, end) of the coalesced batch, which
 * all set the same fields.  A field that is no longer a column of the
 * table (dropped since it was queued) is left out, with a WARNING.
 */
static char *
group_stmt(MergeTarget *t, SPITupleTable *tt, uint64 start, uint64 end)
{
	MergeSpec	m;
	Datum		keysd;
	bool		isnull;
	Datum	   *keys;
	int			nkeys;
	Bitmapset  *set = NULL;
	StringInfoData cols;
	uint64		i;
	int			j;

	memset(&m, 0, sizeof(m));
	m.has_op = true;
	for (i = start; i < end; i++)
	{
		if (DatumGetChar(SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &isnull)) == 'r')
			m.has_replace = true;
	}

	m.targets = list_make1(pstrdup(quote_identifier(t->vecname)));
	m.sources = list_make1(pstrdup("v"));
	initStringInfo(&cols);
	keysd = SPI_getbinval(tt->vals[start], tt->tupdesc, 6, &isnull);
	deconstruct_array(DatumGetArrayTypeP(keysd), TEXTOID, -1, false,
					  TYPALIGN_INT, &keys, NULL, &nkeys);
	for (j = 0; j < nkeys; j++)
	{
		char	   *key = TextDatumGetCString(keys[j]);
		AttrNumber	attnum = get_attnum(t->heapoid, key);
		Form_pg_attribute att;

		if (attnum <= 0 || attnum == t->idatt || attnum == t->vecatt ||
			TupleDescAttr(t->tupdesc, attnum - 1)->attgenerated)
		{
			ereport(WARNING,
					(errmsg("queued field \"%s\" is not a writable column of table \"%s\"; left out",
							key, t->relname)));
			continue;
		}
		att = TupleDescAttr(t->tupdesc, attnum - 1);
		set = bms_add_member(set, attnum);
		m.targets = lappend(m.targets,
							pstrdup(quote_identifier(NameStr(att->attname))));
		m.sources = lappend(m.sources, psprintf("f%d", j + 1));
		appendStringInfo(&cols, ", (b.r).%s AS f%d",
						 quote_identifier(NameStr(att->attname)), j + 1);
	}

	/* a replace resets every other column to its default, as an insert */
	if (m.has_replace)
	{
		for (j = 0; j < t->tupdesc->natts; j++)
		{
			Form_pg_attribute att = TupleDescAttr(t->tupdesc, j);

			if (att->attisdropped || att->attgenerated ||
				att->attnum == t->idatt || att->attnum == t->vecatt ||
				bms_is_member(att->attnum, set))
				continue;
			m.defaults = lappend(m.defaults,
								 pstrdup(quote_identifier(NameStr(att->attname))));
		}
	}

	initStringInfo(&m.source);
	appendStringInfo(&m.source, "SELECT %s AS k, b.op, b.vector AS v%s\n  FROM ",
					 MergeKeyExpr(t, "b.id", TEXTOID), cols.data);
	if (cols.len > 0)
		appendStringInfo(&m.source,
						 "(SELECT b.id, b.op, b.vector, pg_catalog.jsonb_populate_record(NULL::%s, b.fields) AS r\n"
						 "          FROM ft._merge_batch() AS b OFFSET 0) AS b",
						 t->rowtype);
	else
		appendStringInfoString(&m.source, "ft._merge_batch() AS b");
	return MergeBuildSql(t, &m);
}

/* MergeRun with ft._merge_batch() returning the rows of batch */
static void
run_staged(MergeTarget *t, const char *sql, bool probe, StagedBatch *batch,
		   MergeCounts *c)
{
	staged_batch = batch;
	PG_TRY();
	{
		MergeRun(t, sql, probe, c);
	}
	PG_FINALLY();
	{
		staged_batch = NULL;
	}
	PG_END_TRY();
}

/*
 * constraints_immediate: SET CONSTRAINTS ... IMMEDIATE for the table's
 * deferrable constraints that have triggers (constraint triggers, foreign
 * keys), so the MERGEs check them at their own end.  A merge runs in a
 * security-restricted operation, where PostgreSQL refuses to queue a
 * deferred trigger (it would fire after the operation, as someone else):
 * without this, every merge of such a table would fail.  In ft.flush the
 * setting stays for the rest of the caller's transaction, as a SET
 * CONSTRAINTS of its own would.  SPI connected.
 */
static void
constraints_immediate(MergeTarget *t)
{
	Relation	heap = relation_open(t->heapoid, NoLock);
	TriggerDesc *trigdesc = heap->trigdesc;
	StringInfoData sql;
	List	   *seen = NIL;
	int			i;

	initStringInfo(&sql);
	for (i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		Trigger    *trig = &trigdesc->triggers[i];
		HeapTuple	tup;
		Form_pg_constraint con;

		if (!trig->tgdeferrable || !OidIsValid(trig->tgconstraint) ||
			list_member_oid(seen, trig->tgconstraint))
			continue;
		seen = lappend_oid(seen, trig->tgconstraint);
		tup = SearchSysCache1(CONSTROID, ObjectIdGetDatum(trig->tgconstraint));
		if (!HeapTupleIsValid(tup))
			continue;
		con = (Form_pg_constraint) GETSTRUCT(tup);
		appendStringInfo(&sql, "%s%s", sql.len > 0 ? ", " : "",
						 quote_qualified_identifier(get_namespace_name(con->connamespace),
													NameStr(con->conname)));
		ReleaseSysCache(tup);
	}
	relation_close(heap, NoLock);
	if (sql.len > 0 &&
		SPI_execute(psprintf("SET CONSTRAINTS %s IMMEDIATE", sql.data), false,
					0) != SPI_OK_UTILITY)
		elog(ERROR, "could not set the constraints of table \"%s\" immediate",
			 t->relname);
}

/* Error context of a batch being applied: its table and first ids */
typedef struct BatchContext
{
	MergeTarget *t;
	SPITupleTable *tt;
	uint64		n;
} BatchContext;

static void
batch_error_context(void *arg)
{
	BatchContext *b = (BatchContext *) arg;
	StringInfoData ids;
	uint64		i;

	initStringInfo(&ids);
	for (i = 0; i < b->n && i < 10; i++)
		appendStringInfo(&ids, "%s%s", i > 0 ? ", " : "",
						 quote_literal_cstr(SPI_getvalue(b->tt->vals[i],
														 b->tt->tupdesc, 1)));
	errcontext("applying queued upserts of " UINT64_FORMAT " id(s) to table \"%s\": %s%s",
			   b->n, b->t->relname, ids.data, b->n > 10 ? ", ..." : "");
}

/* MERGE the folded rows [start, end) of tt, one group of the same fields */
static void
apply_group(MergeTarget *t, SPITupleTable *tt, uint64 start, uint64 end,
			bool probe, MergeCounts *c)
{
	StagedBatch batch;

	batch.tuptable = tt;
	batch.start = start;
	batch.end = end;
	run_staged(t, group_stmt(t, tt, start, end), probe, &batch, c);
}

/*
 * Whether an error that applying queued rows raised is the rows' own
 * (a constraint, a trigger, a value that does not fit its column, a
 * column dropped since), so that the same rows would fail again, as
 * opposed to one of the moment (a cancel or the job's time limit, a
 * deadlock or serialization failure, a lock not available, no memory or
 * disk) or of the server, which must fail the merge as before.
 */
static bool
error_is_the_rows(int sqlerrcode)
{
	switch (ERRCODE_TO_CATEGORY(sqlerrcode))
	{
		case ERRCODE_CONNECTION_EXCEPTION:
		case ERRCODE_INVALID_TRANSACTION_STATE:
		case ERRCODE_TRANSACTION_ROLLBACK:
		case ERRCODE_INSUFFICIENT_RESOURCES:
		case ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE:
		case ERRCODE_OPERATOR_INTERVENTION:
		case ERRCODE_SYSTEM_ERROR:
		case ERRCODE_CONFIG_FILE_ERROR:
		case ERRCODE_INTERNAL_ERROR:
			return false;
		default:
			return true;
	}
}

/*
 * try_group: apply_group in a subtransaction.  Returns true when it
 * applied; false when it failed with an error of the rows' own
 * (error_is_the_rows), rolled back, its error in *edata when edata is not
 * NULL.  Any other error is thrown again.  SPI connected (outside the
 * subtransaction, so tt outlives it, as in PL/pgSQL's exception blocks).
 */
static bool
try_group(MergeTarget *t, SPITupleTable *tt, uint64 start, uint64 end,
		  bool probe, MergeCounts *c, ErrorData **edata)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	MergeCounts counted = *c;
	volatile bool applied = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		apply_group(t, tt, start, end, probe, &counted);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *err;

		MemoryContextSwitchTo(oldcxt);
		err = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		if (!error_is_the_rows(err->sqlerrcode))
			ReThrowError(err);
		if (edata)
			*edata = err;
		else
			FreeErrorData(err);
		applied = false;
	}
	PG_END_TRY();
	if (applied)
		*c = counted;
	return applied;
}

/*
 * set_aside: move row i of tt, which a background merge could not apply,
 * into ft.pending_failed with its error, so that it holds up no other row
 * of the queue (it was taken out of ft.pending with the batch), and log
 * it.  A row already set aside for the id is replaced.  SPI connected.
 */
static void
set_aside(MergeTarget *t, SPITupleTable *tt, uint64 i, ErrorData *edata)
{
	Oid			argtypes[8] = {OIDOID, TEXTOID, CHAROID, FLOAT4ARRAYOID,
	JSONBOID, INT8OID, TEXTOID, TEXTOID};
	Datum		values[8];
	char		nulls[8];
	int			j;

	values[0] = ObjectIdGetDatum(t->indexoid);
	nulls[0] = ' ';
	for (j = 1; j <= 5; j++)
	{
		bool		isnull;

		values[j] = SPI_getbinval(tt->vals[i], tt->tupdesc, j, &isnull);
		nulls[j] = isnull ? 'n' : ' ';
	}
	values[6] = CStringGetTextDatum(unpack_sql_state(edata->sqlerrcode));
	nulls[6] = ' ';
	values[7] = CStringGetTextDatum(edata->message ? edata->message : "");
	nulls[7] = ' ';
	MergeQueueExecute("INSERT INTO ft.pending_failed AS f\n"
					  "  (indexrelid, id, op, vector, fields, generation, sqlstate, message)\n"
					  "  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)\n"
					  "  ON CONFLICT (indexrelid, id) DO UPDATE SET\n"
					  "    op = excluded.op, vector = excluded.vector,\n"
					  "    fields = excluded.fields, generation = excluded.generation,\n"
					  "    failed_at = excluded.failed_at, sqlstate = excluded.sqlstate,\n"
					  "    message = excluded.message",
					  8, argtypes, values, nulls, 0);
	ereport(WARNING,
			(errcode(edata->sqlerrcode),
			 errmsg("queued upsert of id %s into table \"%s\" failed and was set aside",
					TextDatumGetCString(values[1]), t->relname),
			 errdetail("%s", edata->message ? edata->message : ""),
			 errhint("See ft.failed_for('%s'); queue the id again once its cause is fixed.",
					 t->indexname)));
	FreeErrorData(edata);
}

/*
 * A newer write of an id supersedes the row set aside for it: drop the
 * set-aside rows of the ids of tt (a write that fails again is set aside
 * again).  SPI connected.
 */
static void
forget_superseded_failures(MergeTarget *t, SPITupleTable *tt, uint64 n)
{
	Oid			argtypes[2] = {OIDOID, TEXTARRAYOID};
	Datum		values[2];
	Datum	   *ids;
	uint64		i;
	SPITupleTable *saved = SPI_tuptable;
	uint64		saved_n = SPI_processed;

	values[0] = ObjectIdGetDatum(t->indexoid);
	MergeQueueExecute("SELECT 1 FROM ft.pending_failed WHERE indexrelid = $1 LIMIT 1",
					  1, argtypes, values, NULL, 1);
	if (SPI_processed > 0)
	{
		ids = palloc(sizeof(Datum) * n);
		for (i = 0; i < n; i++)
		{
			bool		isnull;

			ids[i] = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull);
		}
		values[1] = PointerGetDatum(construct_array(ids, (int) n, TEXTOID, -1,
													false, TYPALIGN_INT));
		MergeQueueExecute("DELETE FROM ft.pending_failed\n"
						  "  WHERE indexrelid = $1 AND id = ANY ($2)",
						  2, argtypes, values, NULL, 0);
	}
	SPI_tuptable = saved;
	SPI_processed = saved_n;
}

/*
 * merge_batch: apply the index's oldest pending rows, at most limit
 * (segvec.merge_batch_rows, or fewer after merges ran out of time), no
 * newer than horizon: take them out of
 * ft.pending and fold them per id (as the extension's owner), then MERGE
 * each group of ids that set the same fields, as the current user (the
 * table's owner).  Taking and applying are in one transaction: a crash
 * either keeps the rows queued or has applied them, once.  In a
 * background merge a group that fails with an error of its rows' own is
 * applied again one id at a time, and the ids that still fail are set
 * aside in ft.pending_failed (set_aside), so that one bad row does not
 * hold up the queue behind it; ft.flush fails instead, as a statement
 * would.  The caller
 * holds the index's MERGE_INDEX lock.  Returns the rows taken (0: the
 * queue is empty up to horizon).
 */
static int64
merge_batch(MergeTarget *t, int64 horizon, int limit, MergeCounts *c)
{
	Oid			argtypes[3] = {OIDOID, INT8OID, INT4OID};
	Datum		values[3];
	SPITupleTable *tt;
	uint64		n;
	uint64		start;
	int64		taken = 0;
	bool		probe;
	bool		built;
	MergeCounts one;
	BatchContext bctx;
	ErrorContextCallback errcb;

	SPI_connect();
	values[0] = ObjectIdGetDatum(t->indexoid);
	values[1] = Int64GetDatum(horizon);
	values[2] = Int32GetDatum(limit);
	/*
	 * The ids of the oldest limit rows, with every queued row of
	 * those ids up to the horizon: a newer write of an id always lands in
	 * the same batch as an older one, so it supersedes a row that would
	 * fail the merge however far behind it was queued.
	 */
	MergeQueueExecute(coalesce_sql("DELETE FROM ft.pending p\n"
							   "  WHERE p.indexrelid OPERATOR(pg_catalog.=) $1\n"
							   "    AND p.generation OPERATOR(pg_catalog.<=) $2\n"
							   "    AND p.id IN\n"
							   "   (SELECT q.id FROM ft.pending q\n"
							   "     WHERE q.indexrelid OPERATOR(pg_catalog.=) $1\n"
							   "       AND q.generation OPERATOR(pg_catalog.<=) $2\n"
							   "     ORDER BY q.generation LIMIT $3)\n"
							   "  RETURNING p.id, p.op, p.vector, p.fields, p.generation",
							   "keys, x.id"),
				  3, argtypes, values, NULL, 0);
	tt = SPI_tuptable;
	n = SPI_processed;
	if (n == 0)
	{
		SPI_finish();
		return 0;
	}

	for (start = 0; start < n; start++)
	{
		bool		isnull;

		taken += DatumGetInt64(SPI_getbinval(tt->vals[start], tt->tupdesc,
											 7, &isnull));
	}
	/* in the log, an error (a trigger's, the time limit) names the ids */
	bctx.t = t;
	bctx.tt = tt;
	bctx.n = n;
	errcb.callback = batch_error_context;
	errcb.arg = &bctx;
	errcb.previous = error_context_stack;
	if (segvec_merge_in_background)
	{
		SegvecJobNoteBatch(taken);
		error_context_stack = &errcb;
	}

	memset(&one, 0, sizeof(one));
	constraints_immediate(t);
	probe = MergeEnsureKeyBtree(t, &built);
	one.built = built;
	c->built |= built;
	forget_superseded_failures(t, tt, n);
	for (start = 0; start < n;)
	{
		char	   *keys = row_keys(tt, start);
		uint64		end = start + 1;

		while (end < n && strcmp(row_keys(tt, end), keys) == 0)
			end++;
		if (!segvec_merge_in_background)
			apply_group(t, tt, start, end, probe, &one);
		else if (!try_group(t, tt, start, end, probe, &one, NULL))
		{
			uint64		i;

			/* one by one, setting aside the rows that fail */
			for (i = start; i < end; i++)
			{
				ErrorData  *edata;

				if (!try_group(t, tt, i, i + 1, probe, &one, &edata))
					set_aside(t, tt, i, edata);
			}
		}
		start = end;
	}
	if (segvec_merge_in_background)
		error_context_stack = errcb.previous;
	one.applied = taken;
	MergeRecord(t, &one);
	SPI_finish();

	c->inserted += one.inserted;
	c->updated += one.updated;
	c->deleted += one.deleted;
	c->applied += taken;
	return taken;
}

/* Take the index's MERGE_INDEX lock (to the end of the transaction) */
static void
lock_index_queue(Oid indexoid)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, indexoid, 0,
						 SEGVEC_LOCKTAG_MERGE_INDEX);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/* Whether the index has pending rows (up to horizon); SPI connected */
static bool
queue_has_rows(Oid indexoid, int64 horizon)
{
	Oid			argtypes[2] = {OIDOID, INT8OID};
	Datum		values[2];

	values[0] = ObjectIdGetDatum(indexoid);
	values[1] = Int64GetDatum(horizon);
	MergeQueueExecute("SELECT 1 FROM ft.pending\n"
				  " WHERE indexrelid = $1 AND generation <= $2 LIMIT 1",
				  2, argtypes, values, NULL, 1);
	return SPI_processed > 0;
}

/*
 * ft.flush(index regclass)
 *	 -> (applied bigint, inserted bigint, updated bigint, deleted bigint)
 *
 * Applies every upsert queued for the index before the call, now, in the
 * caller's transaction, in batches of segvec.merge_batch_rows, as the
 * table's owner (as a background merge does, so the result is the same
 * whoever applies the queue).  Needs INSERT, UPDATE or DELETE on the table,
 * and SELECT on its id column (the counts say which ids existed).
 * Waits for a merge of the same index that is running.
 */
PG_FUNCTION_INFO_V1(ft_flush);
Datum
ft_flush(PG_FUNCTION_ARGS)
{
	MergeTarget t;
	MergeCounts c;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	Oid			argtype = OIDOID;
	Datum		arg;
	bool		isnull;
	Datum		horizon;
	SavedIdentity saved;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	MergeOpenTarget(PG_GETARG_OID(0), RowExclusiveLock, false, &t);
	MergeCheckAnyPrivilege(&t, ACL_INSERT | ACL_UPDATE | ACL_DELETE);
	MergeCheckIdPrivilege(&t);
	lock_index_queue(t.indexoid);
	SegvecTestPoint("merge-queue-locked");

	memset(&c, 0, sizeof(c));
	SPI_connect();
	arg = ObjectIdGetDatum(t.indexoid);
	MergeQueueExecute("SELECT max(generation) FROM ft.pending WHERE indexrelid = $1",
				  1, &argtype, &arg, NULL, 0);
	horizon = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
							&isnull);
	SPI_finish();

	if (!isnull)
	{
		MergeIdentityPush(&saved, t.owner);
		while (merge_batch(&t, DatumGetInt64(horizon),
						   segvec_merge_batch_rows, &c) > 0)
			CHECK_FOR_INTERRUPTS();
		MergeIdentityPop(&saved);
	}

	values[0] = Int64GetDatum(c.applied);
	values[1] = Int64GetDatum(c.inserted);
	values[2] = Int64GetDatum(c.updated);
	values[3] = Int64GetDatum(c.deleted);
	if (!pgstat_track_counts)
		nulls[1] = nulls[2] = nulls[3] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * Take one of the segvec.merge_concurrency cluster-wide merge slots, to the
 * end of the transaction; waits when all are taken.  A merge the scheduler
 * started past other owners' long merges (schedule.c, "Long jobs") may
 * take one of as many slots more, so that it does not wait for them.
 */
static void
acquire_merge_slot(void)
{
	LOCKTAG		tag;
	int			n = segvec_merge_concurrency;
	int			i;

	for (i = 0; i < (SegvecJobPastLongMerges() ? 2 * n : n); i++)
	{
		SET_LOCKTAG_ADVISORY(tag, InvalidOid, i, 0, SEGVEC_LOCKTAG_MERGE_SLOT);
		if (LockAcquire(&tag, ExclusiveLock, false, true) !=
			LOCKACQUIRE_NOT_AVAIL)
			return;
	}
	SET_LOCKTAG_ADVISORY(tag, InvalidOid, MyProcPid % n, 0,
						 SEGVEC_LOCKTAG_MERGE_SLOT);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

void
SegvecMergePending(Relation index)
{
	MergeTarget t;
	MergeCounts c;
	SavedIdentity saved;
	bool		more;

	/* cheap when there is nothing to do (a sweep visits every index) */
	SPI_connect();
	more = queue_has_rows(RelationGetRelid(index), PG_INT64_MAX);
	SPI_finish();
	if (!more)
		return;

	MergeOpenTarget(RelationGetRelid(index), RowExclusiveLock, false, &t);

	acquire_merge_slot();
	lock_index_queue(t.indexoid);
	SegvecTestPoint("merge-queue-locked");

	memset(&c, 0, sizeof(c));
	segvec_merge_in_background = true;
	PG_TRY();
	{
		int			limit = segvec_merge_batch_rows;

		if (SegvecJobBatchRows() > 0)
			limit = Min(limit, SegvecJobBatchRows());
		MergeIdentityPush(&saved, t.owner);
		(void) merge_batch(&t, PG_INT64_MAX, limit, &c);
		MergeIdentityPop(&saved);
	}
	PG_FINALLY();
	{
		segvec_merge_in_background = false;
	}
	PG_END_TRY();

	SPI_connect();
	more = queue_has_rows(t.indexoid, PG_INT64_MAX);
	SPI_finish();
	if (more && !t.temp)
		(void) SegvecSubmitJob(t.indexoid, SEGVEC_JOB_MERGE);

	ereport(DEBUG1,
			(errmsg_internal("segvec merged " INT64_FORMAT " queued upserts into \"%s\": " INT64_FORMAT " inserted, " INT64_FORMAT " updated, " INT64_FORMAT " deleted",
							 c.applied, t.relname, c.inserted, c.updated,
							 c.deleted)));
}

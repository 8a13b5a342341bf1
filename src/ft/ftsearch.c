/*-------------------------------------------------------------------------
 *
 * ftsearch.c
 *	  ft.search, ft.query and ft.explain: parse the query (ftparse.c),
 *	  compile it into one parameterised SQL statement (ftcompile.c) and run
 *	  that with SPI, as the calling user; and the pending upserts the
 *	  statement combines with the table.
 *
 * Everything runs with the caller's privileges: the statement is planned
 * and executed through SPI like any query of the caller, so table and
 * column privileges and row-level security apply to it exactly as they
 * would to a plain SELECT, and it reads under an MVCC snapshot like any
 * statement of the caller's transaction (in READ COMMITTED a new one, as
 * for a volatile function; in REPEATABLE READ the transaction's), so it
 * never sees what another session has not committed.
 *
 * src/ft/ftsearch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am/am.h"
#include "ft/ftquery.h"
#include "merge/merge.h"
#include "store/store.h"

/* ---------------------------------------------------------------------
 * The index, its table and the caller's right to read it
 * ---------------------------------------------------------------------
 */

/*
 * FtGetIndexInfo: what the compiler needs to know about a segvec index:
 * its table, vector column (the key column), id column (the first INCLUDE
 * column), ordering operator and dimension.  Locks the table and the index
 * in AccessShareLock until the end of the transaction.  Errors if indexoid
 * is not a segvec index with an id column, or if the caller may not read
 * the table (no SELECT on it or on any of its columns).
 */
FtIndexInfo *
FtGetIndexInfo(Oid indexoid)
{
	FtIndexInfo *info = palloc0(sizeof(FtIndexInfo));
	Oid			heapoid;
	Relation	heap;
	Relation	index;
	Oid			opno;
	Oid			vectype;
	Oid			optype;
	HeapTuple	tup;
	SegvecMetaInfo meta;
	char	   *name;
	List	   *leaves = NIL;

	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
	{
		name = get_rel_name(indexoid);
		if (name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("relation with OID %u does not exist", indexoid)));
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a segvec index", name)));
	}

	/* the table first, as everything else locks it before its indexes */
	heap = relation_open(heapoid, AccessShareLock);
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck_all(heapoid, GetUserId(), ACL_SELECT,
								  ACLMASK_ANY) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV,
					   get_relkind_objtype(heap->rd_rel->relkind),
					   RelationGetRelationName(heap));
	if (SegvecRelidIsPartitionedIndex(indexoid))
	{
		/* the statement queries the partitioned table: its index is enough */
		index = relation_open(indexoid, AccessShareLock);
		leaves = SegvecPartitionIndexes(indexoid);
	}
	else
		index = SegvecOpenIndex(indexoid, AccessShareLock, false);

	info->indexoid = indexoid;
	info->heapoid = heapoid;
	info->indexname = pstrdup(RelationGetRelationName(index));
	info->nspname = get_namespace_name(RelationGetNamespace(heap));
	info->relname = pstrdup(RelationGetRelationName(heap));
	info->tupdesc = CreateTupleDescCopy(RelationGetDescr(heap));

	if (index->rd_index->indnatts <= index->rd_index->indnkeyatts)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" has no id column", info->indexname),
				 errhint("Create the index with INCLUDE (id), or with ft.create.")));
	info->vecattno = index->rd_index->indkey.values[0];
	info->idattno = index->rd_index->indkey.values[SegvecIndexKeyColumn(index)];
	if (info->vecattno == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" indexes an expression, not a vector column",
						info->indexname)));
	info->idtype = TupleDescAttr(info->tupdesc, info->idattno - 1)->atttypid;

	info->metric = SegvecGetMetric(index);
	/* the ordering operator for the column's type (real[] for a domain) */
	vectype = SegvecIndexVectorType(index);
	optype = SegvecIsVectorType(vectype) ? FLOAT4ARRAYOID : getBaseType(vectype);
	if (optype != FLOAT4ARRAYOID)
		info->vectypname = format_type_be_qualified(optype);
	opno = get_opfamily_member(index->rd_opfamily[0], optype, optype,
							   SEGVEC_ORDERBY_STRATEGY);
	if (!OidIsValid(opno))
		elog(ERROR, "no ordering operator in the operator family of index \"%s\"",
			 info->indexname);
	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator %u", opno);
	info->opname = pstrdup(NameStr(((Form_pg_operator) GETSTRUCT(tup))->oprname));
	info->opnspname =
		get_namespace_name(((Form_pg_operator) GETSTRUCT(tup))->oprnamespace);
	ReleaseSysCache(tup);

	if (leaves == NIL)
	{
		SegvecGetMetaInfo(index, &meta);
		info->dimensions = meta.dimensions;
		FtLoadFieldOptions(info, index);
	}
	else
	{
		ListCell   *lc;
		bool		first = true;

		/*
		 * A partitioned index: the dimension of the partitions' indexes
		 * (the first one that has one), and the dialect options of the
		 * first partition's, which ft.alter sets on every partition (a
		 * partitioned index's own options cannot be altered).
		 */
		info->dimensions = 0;
		foreach(lc, leaves)
		{
			Oid			leafoid = lfirst_oid(lc);
			Relation	leafheap = relation_open(IndexGetRelation(leafoid, false),
												 AccessShareLock);
			Relation	leaf = SegvecOpenIndex(leafoid, AccessShareLock, false);

			if (first)
				FtLoadFieldOptions(info, leaf);
			first = false;
			if (info->dimensions == 0)
			{
				SegvecGetMetaInfo(leaf, &meta);
				info->dimensions = meta.dimensions;
			}
			relation_close(leaf, NoLock);
			relation_close(leafheap, NoLock);
		}
	}

	relation_close(index, NoLock);
	relation_close(heap, NoLock);
	return info;
}

/* ---------------------------------------------------------------------
 * Running a compiled query
 * ---------------------------------------------------------------------
 */

/*
 * fetch_pending: the index's pending upserts (ft.pending_for: the newest
 * write per id), as arrays to bind (see FtPending); NULL when there are
 * none, when ft.pending_for does not exist (the merge-insert part of the
 * API is not installed), when the caller may not SELECT the whole
 * table (ft.pending_for needs that; such a caller reads the table alone),
 * or when the id type nests a domain (pending ids could not be read without
 * running its constraints, see SegvecUncheckedType).
 *
 * They are read before the statement that combines them with the table,
 * so that statement's snapshot is at least as new as the one they were read
 * under: a write merged into the table in between is then found in the
 * table and overridden by the same write from here, never missed by both.
 * Must be called inside SPI_connect; the result lives until SPI_finish.
 */
static FtPending *
fetch_pending(FtIndexInfo *info)
{
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1];
	Oid			fn;
	int			ret;
	FtPending  *pending;

	fn = LookupFuncName(list_make2(makeString("ft"), makeString("pending_for")),
						1, argtypes, true);
	if (!OidIsValid(fn))
		return NULL;
	if (pg_class_aclcheck(info->heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return NULL;
	if (!OidIsValid(SegvecUncheckedType(info->idtype)))
		return NULL;
	values[0] = ObjectIdGetDatum(info->indexoid);
	ret = SPI_execute_with_args("SELECT p.id, p.op, p.vector, p.fields FROM ft.pending_for($1) p",
								1, argtypes, values, NULL, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the pending upserts of index \"%s\"",
			 info->indexname);
	if (SPI_processed == 0)
		return NULL;
	pending = palloc(sizeof(FtPending));
	pending->rows = SPI_tuptable;	/* kept until SPI_finish */
	return pending;
}

/*
 * The pending upserts of the statement being run by run_query (or NULL),
 * for ft._pending_rows().  Saved and restored around each statement, so a
 * search run from inside another one's statement (say, by a policy) does
 * not disturb it.
 */
static FtPending *current_pending = NULL;

/*
 * Run the compiled statement with current_pending set to pending.
 */
static int
execute_with_pending(FtCompiled *c, FtPending *pending)
{
	FtPending  *save = current_pending;
	int			ret;

	current_pending = pending;
	PG_TRY();
	{
		ret = SPI_execute_with_args(c->sql.data, c->nparams, c->types,
									c->values, NULL, false, 0);
	}
	PG_FINALLY();
	{
		current_pending = save;
	}
	PG_END_TRY();
	return ret;
}

/*
 * ft._pending_rows() -> SETOF (id text, op "char", vector real[], fields jsonb)
 *
 * The pending upserts that the running ft.search or ft.query read before
 * its statement; an error anywhere else.  Internal to the ft API.
 */
PG_FUNCTION_INFO_V1(ft_pending_rows);
Datum
ft_pending_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SPITupleTable *rows;
	uint64		i;

	if (current_pending == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ft._pending_rows() can only be called by ft.search and ft.query")));
	rows = current_pending->rows;
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < rows->numvals; i++)
	{
		Datum		values[4];
		bool		nulls[4];
		int			j;

		for (j = 0; j < 4; j++)
			values[j] = SPI_getbinval(rows->vals[i], rows->tupdesc, j + 1,
									  &nulls[j]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
	}
	return (Datum) 0;
}

/*
 * Set segvec.ef_search for the rest of this call only (like a function's
 * SET clause): returns the GUC nest level to pass to AtEOXact_GUC.  An
 * error unwinds it with the (sub)transaction.
 */
static int
push_ef_search(int ef_search)
{
	int			nestlevel = NewGUCNestLevel();

	if (ef_search > 0)
	{
		char		buf[32];

		snprintf(buf, sizeof(buf), "%d", ef_search);
		(void) set_config_option("segvec.ef_search", buf, PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
								 false);
	}
	return nestlevel;
}

/*
 * run_query: compile q and return its rows, (id, distance, fields), as the
 * function's materialised result.  ef_search > 0 overrides EF_RUNTIME.
 */
static void
run_query(FunctionCallInfo fcinfo, FtIndexInfo *info, FtQuery *q,
		  Jsonb *params, int ef_search)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FtCompiled *c;
	FtPending  *pending;
	int			nestlevel;
	int			ret;
	uint64		i;

	InitMaterializedSRF(fcinfo, 0);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	pending = fetch_pending(info);
	c = FtCompile(info, q, params, pending);
	if (ef_search > 0)
		c->ef_search = ef_search;
	nestlevel = push_ef_search(c->ef_search);
	/* a Citus table: the shards' scans must see it too */
	if (c->ef_search > 0 && MergeTableIsCitus(info->heapoid))
		FtCitusSetLocal(info->heapoid, "segvec.ef_search", psprintf("%d", c->ef_search));

	ret = execute_with_pending(c, pending);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args returned %s",
			 SPI_result_code_string(ret));

	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		Datum		values[3];
		bool		nulls[3];
		bool		isnull;
		int			j;

		if (c->range_stop)
		{
			double		d = DatumGetFloat8(SPI_getbinval(tup, desc, 4, &isnull));

			/* rows come in distance order: the rest are farther */
			if (isnull || isnan(d) || d > c->radius)
				break;
		}
		for (j = 0; j < 3; j++)
			values[j] = SPI_getbinval(tup, desc, j + 1, &nulls[j]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	AtEOXact_GUC(true, nestlevel);
	SPI_finish();
}

/* ---------------------------------------------------------------------
 * SQL-callable functions
 * ---------------------------------------------------------------------
 */

static void
check_not_null(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
}

/* params jsonb: NULL or an object */
static Jsonb *
get_params(FunctionCallInfo fcinfo, int argno)
{
	Jsonb	   *params;

	if (PG_ARGISNULL(argno))
		return NULL;
	params = PG_GETARG_JSONB_P(argno);
	if (!JB_ROOT_IS_OBJECT(params) || JB_ROOT_IS_SCALAR(params))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params must be a JSON object"),
				 errhint("For example '{\"vec\": [0.1, 0.2, 0.3]}'.")));
	return params;
}

/*
 * ft.search(index regclass, query real[], k int DEFAULT 10,
 *			 filter text DEFAULT NULL, return_fields text[] DEFAULT NULL,
 *			 ef_search int DEFAULT NULL)
 *	 RETURNS TABLE (id text, distance real, fields jsonb)
 *
 * The k nearest docs to query that pass filter (the filter dialect of
 * ft.query, without parameters), nearest first.  fields holds the columns
 * named in return_fields; all columns but the vector when it is NULL; is
 * NULL when it is empty.
 */
PG_FUNCTION_INFO_V1(ft_search);
Datum
ft_search(PG_FUNCTION_ARGS)
{
	FtQuery    *q = palloc0(sizeof(FtQuery));
	FtKnn	   *knn = palloc0(sizeof(FtKnn));
	FtIndexInfo *info;
	ArrayType  *vec;
	int			dim;
	int			k;
	int			ef_search = 0;

	check_not_null(fcinfo, 0, "index");
	check_not_null(fcinfo, 1, "query vector");
	check_not_null(fcinfo, 2, "k");
	k = PG_GETARG_INT32(2);
	if (k < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must not be negative")));
	if (!PG_ARGISNULL(5))
	{
		ef_search = PG_GETARG_INT32(5);
		if (ef_search < 1 || ef_search > SEGVEC_MAX_EF_SEARCH)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("ef_search must be between 1 and %d",
							SEGVEC_MAX_EF_SEARCH)));
	}
	if (!PG_ARGISNULL(3))
		q->filter = FtParseFilter(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	if (!PG_ARGISNULL(4))
	{
		Datum	   *elems;
		bool	   *enulls;
		int			n;
		int			i;

		deconstruct_array(PG_GETARG_ARRAYTYPE_P(4), TEXTOID, -1, false,
						  TYPALIGN_INT, &elems, &enulls, &n);
		q->has_return = true;
		for (i = 0; i < n; i++)
		{
			FtReturnField *f = palloc0(sizeof(FtReturnField));

			if (enulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("return_fields must not contain nulls")));
			f->field = TextDatumGetCString(elems[i]);
			q->returns = lappend(q->returns, f);
		}
	}

	info = FtGetIndexInfo(PG_GETARG_OID(0));

	vec = PG_GETARG_ARRAYTYPE_P(1);
	(void) SegvecArrayGetVector(vec, &dim);
	if (info->dimensions > 0 && dim != info->dimensions)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("query vector has %d dimensions, index \"%s\" has %d",
						dim, info->indexname, info->dimensions)));

	knn->field = NameStr(TupleDescAttr(info->tupdesc, info->vecattno - 1)->attname);
	knn->vector_datum = PointerGetDatum(vec);
	knn->k_value = k;
	q->knn = knn;
	q->has_limit = true;
	q->offset.literal = "0";
	q->num.literal = psprintf("%d", k);
	q->dialect = 2;

	run_query(fcinfo, info, q, NULL, ef_search);
	return (Datum) 0;
}

/*
 * ft.query(index regclass, query text, params jsonb DEFAULT '{}')
 *	 RETURNS TABLE (id text, distance real, fields jsonb)
 *
 * Runs a query of the ft dialect (see ftparse.c); params gives its
 * $parameters and may give LIMIT, RETURN, SORTBY.
 */
PG_FUNCTION_INFO_V1(ft_query);
Datum
ft_query(PG_FUNCTION_ARGS)
{
	FtQuery    *q;
	FtIndexInfo *info;
	Jsonb	   *params;

	check_not_null(fcinfo, 0, "index");
	check_not_null(fcinfo, 1, "query");
	q = FtParseQuery(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	params = get_params(fcinfo, 2);
	info = FtGetIndexInfo(PG_GETARG_OID(0));
	run_query(fcinfo, info, q, params, 0);
	return (Datum) 0;
}

/* A parameter's value for ft.explain: long vectors are cut short */
static char *
show_param(Oid type, Datum value)
{
	Oid			outfn;
	bool		isvarlena;
	char	   *s;

	if (type == FLOAT4ARRAYOID)
	{
		ArrayType  *arr = DatumGetArrayTypeP(value);
		int			n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
		float4	   *f = (float4 *) ARR_DATA_PTR(arr);
		StringInfoData buf;
		int			i;

		initStringInfo(&buf);
		appendStringInfoChar(&buf, '{');
		for (i = 0; i < Min(n, 8); i++)
			appendStringInfo(&buf, "%s%s", i > 0 ? "," : "",
							 DatumGetCString(DirectFunctionCall1(float4out,
																 Float4GetDatum(f[i]))));
		appendStringInfo(&buf, "%s} (%d dimensions)", n > 8 ? ",..." : "", n);
		return buf.data;
	}
	getTypeOutputInfo(type, &outfn, &isvarlena);
	s = OidOutputFunctionCall(outfn, value);
	if (strlen(s) > 200)
		s = psprintf("%s...", pnstrdup(s, 200));
	return s;
}

/* Put each line of text, indented, into the result */
static void
put_lines(ReturnSetInfo *rsinfo, const char *text, int indent)
{
	const char *p = text;

	while (*p)
	{
		const char *nl = strchr(p, '\n');
		int			len = nl ? nl - p : strlen(p);
		Datum		value;
		bool		isnull = false;

		value = CStringGetTextDatum(psprintf("%*s%.*s", indent, "", len, p));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
		p += len;
		if (*p == '\n')
			p++;
	}
}

/*
 * Set up a materialised result of one text column (InitMaterializedSRF
 * wants a row type, or an expected descriptor the caller may not pass).
 */
static void
init_text_srf(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext oldcontext;
	TupleDesc	tupdesc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));
	oldcontext = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	tupdesc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(tupdesc, (AttrNumber) 1, "explain", TEXTOID, -1, 0);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(false, false, work_mem);
	rsinfo->setDesc = tupdesc;
	MemoryContextSwitchTo(oldcontext);
}

/*
 * ft.explain(index regclass, query text, params jsonb DEFAULT '{}')
 *	 RETURNS SETOF text
 *
 * What ft.query would do: the parsed query, the SQL it compiles to, its
 * parameters, and the plan (EXPLAIN (COSTS OFF)) of that SQL.
 */
PG_FUNCTION_INFO_V1(ft_explain);
Datum
ft_explain(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FtQuery    *q;
	FtIndexInfo *info;
	Jsonb	   *params;
	FtCompiled *c;
	int			nestlevel;
	int			ret;
	int			i;
	uint64		r;

	check_not_null(fcinfo, 0, "index");
	check_not_null(fcinfo, 1, "query");
	q = FtParseQuery(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	params = get_params(fcinfo, 2);
	info = FtGetIndexInfo(PG_GETARG_OID(0));

	init_text_srf(fcinfo);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	c = FtCompile(info, q, params, fetch_pending(info));

	put_lines(rsinfo, "Query:", 0);
	put_lines(rsinfo, FtQueryToString(q), 2);
	put_lines(rsinfo, "SQL:", 0);
	put_lines(rsinfo, c->sql.data, 2);
	put_lines(rsinfo, "Parameters:", 0);
	for (i = 0; i < c->nparams; i++)
		put_lines(rsinfo, psprintf("$%d %s = %s", i + 1,
								   format_type_be(c->types[i]),
								   show_param(c->types[i], c->values[i])), 2);
	if (c->ef_search > 0)
		put_lines(rsinfo, psprintf("segvec.ef_search = %d", c->ef_search), 2);
	if (c->range_stop)
		put_lines(rsinfo, "Stops at the first row farther than the radius.", 0);
	put_lines(rsinfo, "Plan:", 0);

	nestlevel = push_ef_search(c->ef_search);
	ret = SPI_execute_with_args(psprintf("EXPLAIN (COSTS OFF) %s", c->sql.data),
								c->nparams, c->types, c->values, NULL, false, 0);
	if (ret != SPI_OK_UTILITY && ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args returned %s",
			 SPI_result_code_string(ret));
	for (r = 0; r < SPI_processed; r++)
	{
		char	   *line = SPI_getvalue(SPI_tuptable->vals[r],
										SPI_tuptable->tupdesc, 1);

		put_lines(rsinfo, line ? line : "", 2);
	}
	AtEOXact_GUC(true, nestlevel);
	SPI_finish();
	return (Datum) 0;
}

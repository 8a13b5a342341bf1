/*-------------------------------------------------------------------------
 *
 * ftpart.c
 *	  The ft API on partitioned tables and on Citus.  A segvec index on a
 *	  partitioned table is a partitioned index without storage, each leaf
 *	  partition has its own segvec index; a Citus table's index where
 *	  queries are planned holds no rows, its shards' copies do.  A
 *	  function given such an index runs itself on each partition's or
 *	  shard's index and combines the results (counts summed, lists
 *	  concatenated), through one SQL statement per call (FtFanOut over
 *	  FtFanOutSource).  Searches need none of this: they query the table,
 *	  and the planner (or Citus) merges the partitions' (shards') index
 *	  scans by distance.
 *
 * src/ft/ftpart.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/index.h"
#include "catalog/pg_proc.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "compat.h"
#include "ft/ftquery.h"
#include "merge/merge.h"
#include "store/store.h"

/*
 * FtCheckPartitionedOwner: error unless the current user owns the table
 * of indexoid, a partitioned index or a Citus table's (the maintenance
 * functions need ownership; each call on a partition's or shard's index
 * checks that one's owner as well).  With stats, members of
 * pg_read_all_stats pass too.
 */
void
FtCheckPartitionedOwner(Oid indexoid, bool stats)
{
	Oid			heapoid = IndexGetRelation(indexoid, false);

	if (SegvecOwnsRelation(heapoid, GetUserId()))
		return;
	if (stats && has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		return;
	aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(heapoid));
}

/*
 * FtFanOut: the result of the SQL function being called (fcinfo), computed
 * by the statement sql instead, whose parameters $1..$n are the function's
 * arguments (with their declared types; NULLs pass as NULLs).  The
 * statement usually reads ft._partition_indexes($1) and calls the same
 * function on each leaf index.  What it returns is returned as the
 * function's result: every row for a set-returning function (materialised),
 * the first row for a function returning a row, the first column of the
 * first row for a scalar (NULL when no row).  Runs as the caller.
 */
Datum
FtFanOut(FunctionCallInfo fcinfo, const char *sql)
{
	Oid			fnoid = fcinfo->flinfo->fn_oid;
	HeapTuple	proctup;
	Form_pg_proc proc;
	int			nargs = fcinfo->nargs;
	Oid		   *argtypes = palloc(sizeof(Oid) * Max(nargs, 1));
	Datum	   *values = palloc(sizeof(Datum) * Max(nargs, 1));
	char	   *nulls = palloc(Max(nargs, 1));
	bool		retset;
	TupleDesc	tupdesc;
	TypeFuncClass tclass;
	int			i;
	int			ret;
	Datum		result = (Datum) 0;
	bool		isnull = true;

	proctup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fnoid));
	if (!HeapTupleIsValid(proctup))
		elog(ERROR, "cache lookup failed for function %u", fnoid);
	proc = (Form_pg_proc) GETSTRUCT(proctup);
	retset = proc->proretset;
	for (i = 0; i < nargs; i++)
	{
		argtypes[i] = proc->proargtypes.values[i];
		values[i] = fcinfo->args[i].value;
		nulls[i] = fcinfo->args[i].isnull ? 'n' : ' ';
	}
	ReleaseSysCache(proctup);

	if (retset)
		InitMaterializedSRF(fcinfo, 0);
	tclass = retset ? TYPEFUNC_OTHER : get_call_result_type(fcinfo, NULL,
															&tupdesc);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args(sql, nargs, argtypes, values, nulls, false,
								retset ? 0 : 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not run \"%s\" on the partitions: %s",
			 get_func_name(fnoid), SPI_result_code_string(ret));

	if (retset)
	{
		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
		uint64		r;

		for (r = 0; r < SPI_processed; r++)
		{
			Datum	   *v = palloc(sizeof(Datum) * rsinfo->setDesc->natts);
			bool	   *n = palloc(sizeof(bool) * rsinfo->setDesc->natts);
			int			c;

			if (SPI_tuptable->tupdesc->natts != rsinfo->setDesc->natts)
				elog(ERROR, "fan-out statement returns %d columns, not %d",
					 SPI_tuptable->tupdesc->natts, rsinfo->setDesc->natts);
			for (c = 0; c < rsinfo->setDesc->natts; c++)
				v[c] = SPI_getbinval(SPI_tuptable->vals[r],
									 SPI_tuptable->tupdesc, c + 1, &n[c]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
		}
		SPI_finish();
		return (Datum) 0;
	}

	if (SPI_processed > 0)
	{
		if (tclass == TYPEFUNC_COMPOSITE)
		{
			result = PointerGetDatum(SPI_returntuple(SPI_tuptable->vals[0],
													 BlessTupleDesc(tupdesc)));
			isnull = false;
		}
		else
		{
			result = SPI_getbinval(SPI_tuptable->vals[0],
								   SPI_tuptable->tupdesc, 1, &isnull);
			if (!isnull)
			{
				int16		typlen;
				bool		typbyval;

				get_typlenbyval(SPI_gettypeid(SPI_tuptable->tupdesc, 1),
								&typlen, &typbyval);
				result = SPI_datumTransfer(result, typbyval, typlen);
			}
		}
	}
	SPI_finish();
	if (isnull)
		PG_RETURN_NULL();
	return result;
}

/*
 * FtFanOutKind: how a function given the index indexoid finds the indexes
 * that hold its docs: FT_FANOUT_NONE (it is one of them),
 * FT_FANOUT_PARTITIONS (a partitioned index: its partitions' indexes) or
 * FT_FANOUT_CITUS (the index of a Citus distributed or reference table on
 * a node whose copy holds no rows: its shards' indexes).  Asks Citus only
 * when the citus extension is installed.
 */
int
FtFanOutKind(Oid indexoid)
{
	Oid			heapoid;
	bool		citus;

	if (SegvecRelidIsPartitionedIndex(indexoid))
		return FT_FANOUT_PARTITIONS;
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
		return FT_FANOUT_NONE;
	citus = MergeTableIsCitus(heapoid);
	return citus ? FT_FANOUT_CITUS : FT_FANOUT_NONE;
}

/*
 * FtCitusSetLocal: set the setting name to value for the rest of the
 * current GUC nest level here and, through Citus, on the workers the rest
 * of the transaction's distributed queries on heapoid (a Citus table) run
 * on.  Citus sends a SET LOCAL to the workers (citus.propagate_set_commands
 * = 'local') only when it is run in what it counts as a multi-statement
 * transaction (a DO block is one), and only to remote transaction blocks,
 * which a read-only statement outside BEGIN ... COMMIT does not open unless
 * the transaction is already a distributed one; so this first takes
 * ACCESS SHARE on heapoid with LOCK TABLE, which Citus propagates to the
 * workers in a distributed transaction (a lock every query of the table
 * takes anyway), then runs the SET LOCALs in a DO block.  A caller
 * without SELECT on the whole table (LOCK TABLE needs it) skips the lock;
 * the setting then reaches the workers only inside BEGIN ... COMMIT.  The
 * workers keep the value to the end of the transaction.  SPI must be
 * connected.
 */
void
FtCitusSetLocal(Oid heapoid, const char *name, const char *value)
{
	char	   *body;
	char	   *set;

	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) == ACLCHECK_OK &&
		SPI_execute(psprintf("LOCK TABLE %s IN ACCESS SHARE MODE",
							 quote_qualified_identifier(get_namespace_name(get_rel_namespace(heapoid)),
														get_rel_name(heapoid))),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock table \"%s\" for Citus",
			 get_rel_name(heapoid));
	body = psprintf("BEGIN SET LOCAL citus.propagate_set_commands = 'local'; "
					"SET LOCAL %s = %s; END",
					quote_identifier(name), quote_literal_cstr(value));
	set = psprintf("DO %s", quote_literal_cstr(body));
	if (SPI_execute(set, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not set %s for Citus", name);
}

/*
 * FtTextLiteral: SQL for the text s without a quote or a percent sign in
 * it (as its bytes in hex), for a call that FtFanOutSource substitutes
 * into and Citus formats.
 */
char *
FtTextLiteral(const char *s)
{
	size_t		len = strlen(s);
	char	   *hex = palloc(len * 2 + 1);
	size_t		i;

	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char) s[i]);
	hex[2 * len] = '\0';
	return psprintf("pg_catalog.convert_from(pg_catalog.decode('%s', 'hex'), '%s')",
					hex, GetDatabaseEncodingName());
}

/*
 * FtFanOutSource: a FROM item (a parenthesised subquery) with one row per
 * row of call run on each of the indexes FtFanOutKind found, in a stable
 * order: columns ord (bigint), idx (text: the partition's index, or the
 * shard) and the call's columns.  call is an ft function call with %s
 * where the index goes, and its other arguments as literals; the
 * statement's $1 is the index given.  The call's columns are those of the
 * function being called (fcinfo's result type), or coldefs when given
 * ("name type, ..."), which Citus's results are read as.  placements: on
 * Citus, every placement of each shard (each copy of a reference table).
 */
char *
FtFanOutSource(FunctionCallInfo fcinfo, int kind, const char *call,
			   const char *coldefs, bool placements)
{
	StringInfoData defs;
	TupleDesc	tupdesc = NULL;
	int			i;

	if (kind == FT_FANOUT_PARTITIONS)
	{
		const char *at = strstr(call, "%s");

		if (at == NULL)
			elog(ERROR, "fan-out call \"%s\" has no %%s", call);
		return psprintf("(SELECT l.ord, l.idx::pg_catalog.text AS idx, f.*"
						" FROM ft._partition_indexes($1) WITH ORDINALITY l(idx, ord),"
						" LATERAL %.*sl.idx%s f)",
						(int) (at - call), call, at + 2);
	}

	initStringInfo(&defs);
	if (coldefs != NULL)
		appendStringInfoString(&defs, coldefs);
	else
	{
		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

		if (rsinfo != NULL && IsA(rsinfo, ReturnSetInfo) &&
			rsinfo->expectedDesc != NULL)
			tupdesc = rsinfo->expectedDesc;
		else if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "return type must be a row type");
		for (i = 0; i < tupdesc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(tupdesc, i);

			appendStringInfo(&defs, "%s%s %s", i > 0 ? ", " : "",
							 quote_identifier(NameStr(att->attname)),
							 format_type_extended(att->atttypid, att->atttypmod,
												  FORMAT_TYPE_TYPEMOD_GIVEN |
												  FORMAT_TYPE_FORCE_QUALIFY));
		}
	}
	return psprintf("(SELECT c.ord, c.shard AS idx, f.*"
					" FROM ft._citus_fanout($1, %s, %s) WITH ORDINALITY c(shard, result, ord),"
					" LATERAL pg_catalog.jsonb_array_elements(c.result) e(j),"
					" LATERAL pg_catalog.jsonb_to_record(e.j) AS f(%s))",
					quote_literal_cstr(call), placements ? "true" : "false",
					defs.data);
}

/*
 * ft._partition_indexes(index regclass) -> SETOF regclass
 *
 * The segvec indexes of the leaf partitions of a partitioned segvec index
 * (SegvecPartitionIndexes: by partition name), or the index itself when it
 * is not partitioned.  Catalog only; locks the table of the partitioned
 * index.
 */
PG_FUNCTION_INFO_V1(ft_partition_indexes);
Datum
ft_partition_indexes(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *leaves;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (SegvecRelidIsPartitionedIndex(relid))
		leaves = SegvecPartitionIndexes(relid);
	else
	{
		/* reports what relid is when it is no segvec index */
		Relation	heap = relation_open(SegvecIndexGetHeap(relid),
										 AccessShareLock);
		Relation	index = SegvecOpenIndex(relid, AccessShareLock, false);

		relation_close(index, AccessShareLock);
		relation_close(heap, AccessShareLock);
		leaves = list_make1_oid(relid);
	}
	foreach(lc, leaves)
	{
		Datum		value = ObjectIdGetDatum(lfirst_oid(lc));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value,
							 &isnull);
	}
	return (Datum) 0;
}

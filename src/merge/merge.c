/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  Merge-insert over the id btree: the GUCs, the MERGE statement (or
 *	  the upsert that stands for it), and batch upserts from a table
 *	  (ft.merge, ft.merge_plan).  The target table, its locks and the
 *	  privilege checks are in mergetarget.c, the btree guard and its build
 *	  in mergebtree.c, the queue of pending upserts and the background
 *	  merge in mergequeue.c.
 *
 * A merge is one MERGE statement over the index's id column (its first
 * INCLUDE column).  PostgreSQL 15 plans a MERGE of a few hundred rows into
 * a big table as a hash join over a sequential scan of the whole table,
 * even with a btree on the id (the planner prices the random probes above
 * the sequential read).  So a merge runs its MERGE with hash and merge
 * joins disabled (settings local to the statement, like a function's SET
 * clause), leaving a nested loop that probes the btree once per batch row;
 * and it does so only when such a btree exists, because without one that
 * would be a nested loop over the whole table per row.  Before merging it
 * builds the btree when it is missing (segvec.index_before_merge).
 *
 * The extension's own tables (ft.pending, ft.merge_counters) are read and
 * written only as the extension's owner, after the functions have checked
 * the caller's privileges on the indexed table themselves
 * (MergeIdentityPush; see mergequeue.c).
 *
 * See src/README.md, "Merge-insert", for the rules and their reasons.
 *
 * src/merge/merge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "hooks/testhooks.h"
#include "jobs/jobs.h"
#include "merge/merge.h"
#include "store/store.h"

/* GUCs */
bool		segvec_index_before_merge = true;
int			segvec_merge_batch_rows = 1000;
int			segvec_merge_concurrency = 2;
bool		segvec_background_merge = true;
int			segvec_merge_method = MERGE_METHOD_AUTO;

/* true inside SegvecMergePending: messages go to the log, not a client */
bool		segvec_merge_in_background = false;

/* ----------------
 * Building and running the MERGE
 * ----------------
 */

/* The id of s as the key k: cast to the id type, in the id's collation */
char *
MergeKeyExpr(MergeTarget *t, const char *col, Oid coltype)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (coltype == t->idtype)
		appendStringInfoString(&buf, col);
	else
		appendStringInfo(&buf, "CAST(%s AS %s)", col,
						 format_type_be_qualified(t->idtype));
	if (OidIsValid(t->idcoll))
		appendStringInfo(&buf, " COLLATE %s",
						 generate_collation_name(t->idcoll));
	return buf.data;
}

static void
append_set_list(StringInfo sql, MergeSpec *m)
{
	ListCell   *lt,
			   *ls;

	forboth(lt, m->targets, ls, m->sources)
	{
		if (lt != list_head(m->targets))
			appendStringInfoString(sql, ", ");
		appendStringInfo(sql, "%s = s.%s", (char *) lfirst(lt),
						 (char *) lfirst(ls));
	}
}

/*
 * The default equality operator of typid as OPERATOR(schema.name), so the
 * MERGE means the same under any search_path (ft.merge runs with the
 * caller's).
 */
static char *
qualified_eq_operator(Oid typid)
{
	TypeCacheEntry *tce = lookup_type_cache(typid, TYPECACHE_EQ_OPR);
	HeapTuple	tup;
	Form_pg_operator oper;
	char	   *result;

	if (!OidIsValid(tce->eq_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an equality operator for type %s",
						format_type_be(typid))));
	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(tce->eq_opr));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator %u", tce->eq_opr);
	oper = (Form_pg_operator) GETSTRUCT(tup);
	result = psprintf("OPERATOR(%s.%s)",
					  quote_identifier(get_namespace_name(oper->oprnamespace)),
					  NameStr(oper->oprname));
	ReleaseSysCache(tup);
	return result;
}

/*
 * MergeBuildSql: the MERGE of m's USING subquery into the table, matched on
 * the id: s.k the id, s.op (if has_op) 'd' to delete, 'r' to replace
 * (columns not given reset to their default), anything else to upsert.
 */
char *
MergeBuildSql(MergeTarget *t, MergeSpec *m)
{
	StringInfoData sql;
	ListCell   *lc;

	/* for MergeRun, should it apply the rows with the upsert method */
	t->spec = palloc(sizeof(MergeSpec));
	memcpy(t->spec, m, sizeof(MergeSpec));

	initStringInfo(&sql);
	appendStringInfo(&sql, "MERGE INTO %s AS t\nUSING (%s) AS s\nON t.%s %s s.k\n",
					 t->qualname, m->source.data, quote_identifier(t->idname),
					 qualified_eq_operator(t->idtype));
	if (m->has_op)
		appendStringInfoString(&sql, "WHEN MATCHED AND s.op OPERATOR(pg_catalog.=) 'd' THEN DELETE\n");
	if (m->has_replace)
	{
		appendStringInfoString(&sql, "WHEN MATCHED AND s.op OPERATOR(pg_catalog.=) 'r' THEN UPDATE SET ");
		append_set_list(&sql, m);
		foreach(lc, m->defaults)
			appendStringInfo(&sql, ", %s = DEFAULT", (char *) lfirst(lc));
		appendStringInfoChar(&sql, '\n');
	}
	appendStringInfoString(&sql, "WHEN MATCHED THEN UPDATE SET ");
	append_set_list(&sql, m);
	appendStringInfo(&sql, "\nWHEN NOT MATCHED%s THEN INSERT (%s",
					 m->has_op ? " AND (s.op OPERATOR(pg_catalog.=) 'd') IS NOT TRUE" : "",
					 quote_identifier(t->idname));
	foreach(lc, m->targets)
		appendStringInfo(&sql, ", %s", (char *) lfirst(lc));
	appendStringInfoString(&sql, ") VALUES (s.k");
	foreach(lc, m->sources)
		appendStringInfo(&sql, ", s.%s", (char *) lfirst(lc));
	appendStringInfoChar(&sql, ')');
	return sql.data;
}

/*
 * probe_settings_push: planner settings that leave the MERGE only the
 * nested loop over the btree (undone by AtEOXact_GUC at the returned
 * level, like a function's SET clause).
 */
static int
probe_settings_push(void)
{
	static const char *const settings[][2] = {
		{"enable_hashjoin", "off"},
		{"enable_mergejoin", "off"},
		{"enable_nestloop", "on"},
		{"enable_indexscan", "on"},
	};
	int			nest = NewGUCNestLevel();
	int			i;

	for (i = 0; i < lengthof(settings); i++)
		(void) set_config_option(settings[i][0], settings[i][1],
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
	return nest;
}

/*
 * Rows this backend's transaction inserted, updated, deleted in relid, or
 * (a partitioned table, which has no counters of its own) in its leaf
 * partitions together.  A row an UPDATE moves to another partition counts
 * as deleted from one and inserted into the other.
 */
static void
tuple_counts(Oid relid, int64 *counts)
{
	List	   *rels;
	ListCell   *lc;

	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		rels = find_all_inheritors(relid, NoLock, NULL);
	else
		rels = list_make1_oid(relid);
	counts[0] = counts[1] = counts[2] = 0;
	foreach(lc, rels)
	{
		Datum		arg = ObjectIdGetDatum(lfirst_oid(lc));

		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_PARTITIONED_TABLE)
			continue;
		counts[0] += DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_inserted, arg));
		counts[1] += DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_updated, arg));
		counts[2] += DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_deleted, arg));
	}
}

/*
 * MergeTableIsCitus: is heapoid a Citus distributed or reference table?
 * Asks Citus's catalog (through ft._citus_kind) only when the citus
 * extension is installed.  For the tests of the Citus paths on a node
 * without Citus: with segvec.enable_test_hooks on and segvec.test_point =
 * 'as-citus', every table with a row in ft_test_citus_shards(tbl regclass)
 * is (a test table that also stubs Citus's run_command_on_shards and
 * run_command_on_placements).
 */
bool
MergeTableIsCitus(Oid heapoid)
{
	Oid			argtype = REGCLASSOID;
	Datum		arg = ObjectIdGetDatum(heapoid);
	bool		isnull;
	bool		result;
	const char *sql = "SELECT ft._citus_kind($1) IS NOT NULL";

	if (segvec_enable_test_hooks && strcmp(segvec_test_point, "as-citus") == 0)
		sql = "SELECT EXISTS (SELECT FROM public.ft_test_citus_shards t"
			" WHERE t.tbl OPERATOR(pg_catalog.=) $1)";
	else if (!OidIsValid(get_extension_oid("citus", true)))
		return false;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 1, &argtype, &arg, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not ask Citus about table %u", heapoid);
	result = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0],
										SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return result;
}

/* The method MergeRun applies rows of t with (segvec.merge_method) */
static int
choose_method(MergeTarget *t)
{
	if (t->method == MERGE_METHOD_AUTO)
	{
		if (segvec_merge_method != MERGE_METHOD_AUTO)
			t->method = segvec_merge_method;
		else
			t->method = MergeTableIsCitus(t->heapoid) ? MERGE_METHOD_UPSERT :
				MERGE_METHOD_MERGE;
	}
	return t->method;
}

/* the type of the table's column named by the quoted identifier target */
static char *
target_type(MergeTarget *t, const char *target)
{
	int			i;

	for (i = 0; i < t->tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(t->tupdesc, i);

		if (!att->attisdropped &&
			strcmp(quote_identifier(NameStr(att->attname)), target) == 0)
			return format_type_extended(att->atttypid, att->atttypmod,
										FORMAT_TYPE_TYPEMOD_GIVEN |
										FORMAT_TYPE_FORCE_QUALIFY);
	}
	elog(ERROR, "column %s of table \"%s\" not found", target, t->relname);
	return NULL;				/* keep compiler quiet */
}

/*
 * upsert_stmt: INSERT INTO the table the rows given as parameters, $1 the
 * ids (an array of the id type) and $2.. the columns of m's targets (text
 * arrays, read by the columns' types), ON CONFLICT (id) DO UPDATE of
 * those columns (and, with reset, of the others to their defaults, as a
 * replace does).
 */
static char *
upsert_stmt(MergeTarget *t, MergeSpec *m, bool reset)
{
	StringInfoData sql;
	ListCell   *lc;
	int			i;

	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s AS t (%s", t->qualname,
					 quote_identifier(t->idname));
	foreach(lc, m->targets)
		appendStringInfo(&sql, ", %s", (char *) lfirst(lc));
	appendStringInfoString(&sql, ")\nSELECT u.k");
	i = 2;
	foreach(lc, m->targets)
		appendStringInfo(&sql, ", CAST(u.c%d AS %s)", i++,
						 target_type(t, (char *) lfirst(lc)));
	appendStringInfoString(&sql, "\n  FROM ROWS FROM (pg_catalog.unnest($1)");
	for (i = 2; i <= list_length(m->targets) + 1; i++)
		appendStringInfo(&sql, ", pg_catalog.unnest($%d)", i);
	appendStringInfoString(&sql, ") AS u(k");
	for (i = 2; i <= list_length(m->targets) + 1; i++)
		appendStringInfo(&sql, ", c%d", i);
	appendStringInfo(&sql, ")\nON CONFLICT (%s) DO UPDATE SET ",
					 quote_identifier(t->idname));
	foreach(lc, m->targets)
		appendStringInfo(&sql, "%s%s = EXCLUDED.%s",
						 lc == list_head(m->targets) ? "" : ", ",
						 (char *) lfirst(lc), (char *) lfirst(lc));
	if (reset)
		foreach(lc, m->defaults)
			appendStringInfo(&sql, ", %s = DEFAULT", (char *) lfirst(lc));
	return sql.data;
}

/* The rows of one upsert statement, as parameter arrays */
typedef struct UpsertRows
{
	int			n;
	Datum	   *keys;
	Datum	  **cols;			/* [column][row], text */
	bool	  **nulls;
} UpsertRows;

static void
rows_init(UpsertRows *r, int ncols, int max)
{
	int			j;

	r->n = 0;
	r->keys = palloc(sizeof(Datum) * Max(max, 1));
	r->cols = palloc(sizeof(Datum *) * Max(ncols, 1));
	r->nulls = palloc(sizeof(bool *) * Max(ncols, 1));
	for (j = 0; j < ncols; j++)
	{
		r->cols[j] = palloc(sizeof(Datum) * Max(max, 1));
		r->nulls[j] = palloc(sizeof(bool) * Max(max, 1));
	}
}

/*
 * run_upsert_rows: one INSERT ... ON CONFLICT of rows r; returns the rows
 * processed (inserted or updated).
 */
static int64
run_upsert_rows(MergeTarget *t, MergeSpec *m, UpsertRows *r, bool reset)
{
	int			ncols = list_length(m->targets);
	Oid		   *argtypes = palloc(sizeof(Oid) * (ncols + 1));
	Datum	   *args = palloc(sizeof(Datum) * (ncols + 1));
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			dims[1];
	int			lbs[1] = {1};
	int			j;
	int			ret;

	if (r->n == 0)
		return 0;
	get_typlenbyvalalign(t->idtype, &typlen, &typbyval, &typalign);
	argtypes[0] = get_array_type(t->idtype);
	args[0] = PointerGetDatum(construct_array(r->keys, r->n, t->idtype,
											  typlen, typbyval, typalign));
	dims[0] = r->n;
	for (j = 0; j < ncols; j++)
	{
		argtypes[j + 1] = TEXTARRAYOID;
		args[j + 1] = PointerGetDatum(construct_md_array(r->cols[j], r->nulls[j],
														 1, dims, lbs, TEXTOID,
														 -1, false, TYPALIGN_INT));
	}
	ret = SPI_execute_with_args(upsert_stmt(t, m, reset), ncols + 1, argtypes,
								args, NULL, false, 0);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute failed for INSERT ... ON CONFLICT: %s",
			 SPI_result_code_string(ret));
	return (int64) SPI_processed;
}

/* Has the table a unique index on exactly its id column (an arbiter)? */
static bool
has_unique_id_index(MergeTarget *t)
{
	Relation	heap = relation_open(t->heapoid, NoLock);
	List	   *indexes = RelationGetIndexList(heap);
	ListCell   *lc;
	bool		found = false;

	foreach(lc, indexes)
	{
		HeapTuple	itup = SearchSysCache1(INDEXRELID,
										   ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_index ind;

		if (!HeapTupleIsValid(itup))
			continue;
		ind = (Form_pg_index) GETSTRUCT(itup);
		if (ind->indisunique && ind->indisvalid && ind->indnkeyatts == 1 &&
			ind->indkey.values[0] == t->idatt &&
			heap_attisnull(itup, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(itup, Anum_pg_index_indexprs, NULL))
			found = true;
		ReleaseSysCache(itup);
	}
	list_free(indexes);
	relation_close(heap, NoLock);
	return found;
}

/*
 * run_upsert: apply the rows of m's source (what MergeBuildSql's MERGE
 * would) without a MERGE, the way Citus can run on a distributed table:
 * the source is read here, once, and the batch passed as parameters: the
 * deleted ids in one DELETE ... WHERE id = ANY($1), the other rows in
 * INSERT ... SELECT FROM unnest($1, $2, ...) ON CONFLICT (id) DO UPDATE
 * (one for upserts, one for replaces).  The counts come from the rows
 * processed: deleted, and of the rows upserted those whose id was there
 * before (updated) and the others (inserted).  Needs a unique index on the
 * id (the ON CONFLICT arbiter).  SPI must be connected.
 */
static void
run_upsert(MergeTarget *t, MergeSpec *m, MergeCounts *c)
{
	int			ncols = list_length(m->targets);
	StringInfoData sql;
	ListCell   *lc;
	SPITupleTable *tt;
	uint64		n,
				i;
	UpsertRows	del,
				ups,
				rep;
	int64		existing = 0;
	int64		upserted = 0;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Oid			argtypes[1];
	Datum		args[1];
	bool		isnull;
	int			ret;

	if (!has_unique_id_index(t))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot apply upserts to table \"%s\" with INSERT ... ON CONFLICT: no unique index on its id column \"%s\"",
						t->relname, t->idname),
				 errhint("Create a unique index on the id, or set segvec.merge_method = merge (not possible on Citus tables distributed by another column).")));

	/* the batch: id, op, then each target column as text */
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT s.k, %s", m->has_op ? "s.op" : "NULL::pg_catalog.\"char\"");
	foreach(lc, m->sources)
		appendStringInfo(&sql, ", CAST(s.%s AS pg_catalog.text)", (char *) lfirst(lc));
	appendStringInfo(&sql, "\n  FROM (%s) AS s", m->source.data);
	ret = SPI_execute(sql.data, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the merge source: %s",
			 SPI_result_code_string(ret));
	tt = SPI_tuptable;
	n = SPI_processed;
	rows_init(&del, 0, n);
	rows_init(&ups, ncols, n);
	rows_init(&rep, ncols, n);
	get_typlenbyvalalign(t->idtype, &typlen, &typbyval, &typalign);
	for (i = 0; i < n; i++)
	{
		Datum		k = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull);
		Datum		op;
		bool		opnull;
		UpsertRows *r;
		int			j;

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;			/* a NULL id matches nothing, as in the MERGE */
		op = SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &opnull);
		if (!opnull && DatumGetChar(op) == 'd')
		{
			del.keys[del.n++] = datumCopy(k, typbyval, typlen);
			continue;
		}
		r = (!opnull && DatumGetChar(op) == 'r') ? &rep : &ups;
		r->keys[r->n] = datumCopy(k, typbyval, typlen);
		for (j = 0; j < ncols; j++)
		{
			Datum		v = SPI_getbinval(tt->vals[i], tt->tupdesc, j + 3,
										  &r->nulls[j][r->n]);

			r->cols[j][r->n] = r->nulls[j][r->n] ? (Datum) 0 :
				PointerGetDatum(DatumGetTextPCopy(v));
		}
		r->n++;
	}

	argtypes[0] = get_array_type(t->idtype);
	if (!OidIsValid(argtypes[0]))
		elog(ERROR, "id type %s has no array type", format_type_be(t->idtype));
	if (del.n > 0)
	{
		args[0] = PointerGetDatum(construct_array(del.keys, del.n, t->idtype,
												  typlen, typbyval, typalign));
		ret = SPI_execute_with_args(psprintf("DELETE FROM %s AS t WHERE t.%s %s ANY ($1)",
											 t->qualname, quote_identifier(t->idname),
											 qualified_eq_operator(t->idtype)),
									1, argtypes, args, NULL, false, 0);
		if (ret != SPI_OK_DELETE)
			elog(ERROR, "could not delete the deleted ids of table \"%s\": %s",
				 t->relname, SPI_result_code_string(ret));
		c->deleted += SPI_processed;
	}

	/* which of the upserted ids are there now: those are updates */
	if (ups.n + rep.n > 0)
	{
		Datum	   *all = palloc(sizeof(Datum) * (ups.n + rep.n));

		memcpy(all, ups.keys, sizeof(Datum) * ups.n);
		memcpy(all + ups.n, rep.keys, sizeof(Datum) * rep.n);
		args[0] = PointerGetDatum(construct_array(all, ups.n + rep.n, t->idtype,
												  typlen, typbyval, typalign));
		ret = SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FROM %s AS t WHERE t.%s %s ANY ($1)",
											 t->qualname, quote_identifier(t->idname),
											 qualified_eq_operator(t->idtype)),
									1, argtypes, args, NULL, false, 0);
		if (ret != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not count the ids of table \"%s\"", t->relname);
		existing = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 1, &isnull));
	}
	upserted += run_upsert_rows(t, m, &ups, false);
	upserted += run_upsert_rows(t, m, &rep, true);
	c->updated += existing;
	c->inserted += upserted - existing;
}

/*
 * MergeRun: run one MERGE (probing the btree when probe), adding what it
 * did to *c.  The counts are this transaction's own pgstat counters of the
 * table, read before and after: exact, whatever other sessions do (but a
 * trigger that writes the same table adds its rows).  SPI must be
 * connected.
 */
void
MergeRun(MergeTarget *t, const char *sql, bool probe, MergeCounts *c)
{
	int64		before[3];
	int64		after[3];
	int			nest = 0;
	int			ret;

	if (choose_method(t) == MERGE_METHOD_UPSERT)
	{
		if (t->spec == NULL)
			elog(ERROR, "no merge was built for table \"%s\"", t->relname);
		run_upsert(t, t->spec, c);
		return;
	}

	tuple_counts(t->heapoid, before);
	if (probe)
		nest = probe_settings_push();
	ret = SPI_execute(sql, false, 0);
	if (probe)
		AtEOXact_GUC(true, nest);
	if (ret != SPI_OK_MERGE)
		elog(ERROR, "SPI_execute failed for MERGE: %s",
			 SPI_result_code_string(ret));
	tuple_counts(t->heapoid, after);
	c->inserted += after[0] - before[0];
	c->updated += after[1] - before[1];
	c->deleted += after[2] - before[2];
}

/*
 * MergeRecord: add one merge to the index's counters in ft.merge_counters,
 * in the merge's transaction.  SPI must be connected.
 */
void
MergeRecord(MergeTarget *t, MergeCounts *c)
{
	Oid			argtypes[6] = {OIDOID, INT8OID, INT8OID, INT8OID, INT8OID,
	INT8OID};
	Datum		values[6];

	values[0] = ObjectIdGetDatum(t->indexoid);
	values[1] = Int64GetDatum(c->built ? 1 : 0);
	values[2] = Int64GetDatum(c->inserted);
	values[3] = Int64GetDatum(c->updated);
	values[4] = Int64GetDatum(c->deleted);
	values[5] = Int64GetDatum(c->applied);
	MergeQueueExecute("INSERT INTO ft.merge_counters AS c\n"
				  " (indexrelid, merge_index_built_total, merges_total,\n"
				  "  inserted_total, updated_total, deleted_total,\n"
				  "  pending_applied_total, last_merge_at)\n"
				  "VALUES ($1, $2, 1, $3, $4, $5, $6, clock_timestamp())\n"
				  "ON CONFLICT (indexrelid) DO UPDATE SET\n"
				  " merge_index_built_total = c.merge_index_built_total + excluded.merge_index_built_total,\n"
				  " merges_total = c.merges_total + 1,\n"
				  " inserted_total = c.inserted_total + excluded.inserted_total,\n"
				  " updated_total = c.updated_total + excluded.updated_total,\n"
				  " deleted_total = c.deleted_total + excluded.deleted_total,\n"
				  " pending_applied_total = c.pending_applied_total + excluded.pending_applied_total,\n"
				  " last_merge_at = excluded.last_merge_at",
				  6, argtypes, values, NULL, 0);
}

/* ----------------
 * ft.merge and ft.merge_plan
 * ----------------
 */

/*
 * source_stmt: check the source's columns against the table and put
 * together the MERGE of it: the id and vector columns are required, other
 * columns must be the table's (matched by name and assignable to its
 * type); `generation` orders rows with the same id (the greatest wins),
 * `op` ('d' deletes) when the table has no column of that name.  Without
 * a generation column, the row stored last wins in a table, and which one
 * wins is unspecified in a view or foreign table.
 */
static char *
source_stmt(MergeTarget *t, Oid srcoid)
{
	Relation	src;
	TupleDesc	desc;
	MergeSpec	m;
	char	   *srcname;
	char	   *kexpr = NULL;
	bool		has_vec = false;
	bool		has_gen = false;
	bool		has_ctid;
	char	   *opcol = NULL;
	StringInfoData cols;
	int			nf = 0;
	int			i;

	src = relation_open(srcoid, AccessShareLock);
	srcname = pstrdup(RelationGetRelationName(src));
	if (src->rd_rel->relkind != RELKIND_RELATION &&
		src->rd_rel->relkind != RELKIND_PARTITIONED_TABLE &&
		src->rd_rel->relkind != RELKIND_VIEW &&
		src->rd_rel->relkind != RELKIND_MATVIEW &&
		src->rd_rel->relkind != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" cannot be the source of a merge", srcname),
				 errdetail("A merge source is a table, view, materialized view or foreign table.")));
	has_ctid = src->rd_rel->relkind == RELKIND_RELATION ||
		src->rd_rel->relkind == RELKIND_MATVIEW;
	/* a Citus table's ctids are its shards', not one order */
	if (has_ctid && MergeTableIsCitus(srcoid))
		has_ctid = false;
	desc = RelationGetDescr(src);

	memset(&m, 0, sizeof(m));
	initStringInfo(&cols);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute satt = TupleDescAttr(desc, i);
		const char *name = NameStr(satt->attname);
		char	   *qcol;
		AttrNumber	tattnum;
		Form_pg_attribute tatt;

		if (satt->attisdropped)
			continue;
		qcol = psprintf("s.%s", quote_identifier(name));
		tattnum = get_attnum(t->heapoid, name);

		if (strcmp(name, "generation") == 0)
			has_gen = true;
		if (tattnum <= 0)
		{
			if (strcmp(name, "generation") == 0)
				continue;
			if (strcmp(name, "op") == 0)
			{
				if (TypeCategory(satt->atttypid) != TYPCATEGORY_STRING &&
					satt->atttypid != CHAROID)
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("column \"op\" of merge source \"%s\" is of type %s",
									srcname, format_type_be(satt->atttypid)),
							 errdetail("op is text or \"char\": 'd' deletes the row with the id, anything else upserts it.")));
				opcol = qcol;
				continue;
			}
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of merge source \"%s\" does not exist in table \"%s\"",
							name, srcname, t->relname),
					 errhint("A merge source has the table's id and vector columns, other columns of the table, and optionally generation (the greatest wins among rows with the same id) and op ('d' deletes).")));
		}

		tatt = TupleDescAttr(t->tupdesc, tattnum - 1);
		if (!can_coerce_type(1, &satt->atttypid, &tatt->atttypid,
							 COERCION_ASSIGNMENT))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of merge source \"%s\" is of type %s, which cannot be assigned to column \"%s\" of table \"%s\" (type %s)",
							name, srcname, format_type_be(satt->atttypid),
							name, t->relname,
							format_type_be(tatt->atttypid))));
		if (tattnum == t->idatt)
		{
			kexpr = MergeKeyExpr(t, qcol, satt->atttypid);
			continue;
		}
		if (tatt->attgenerated || tatt->attidentity == ATTRIBUTE_IDENTITY_ALWAYS)
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("column \"%s\" of table \"%s\" cannot be written by a merge",
							name, t->relname),
					 errdetail("It is a generated or GENERATED ALWAYS identity column.")));
		if (tattnum == t->vecatt)
		{
			has_vec = true;
			m.targets = lcons(pstrdup(quote_identifier(name)), m.targets);
			m.sources = lcons(pstrdup("v"), m.sources);
			appendStringInfo(&cols, ", %s AS v", qcol);
			continue;
		}
		nf++;
		m.targets = lappend(m.targets, pstrdup(quote_identifier(name)));
		m.sources = lappend(m.sources, psprintf("f%d", nf));
		appendStringInfo(&cols, ", %s AS f%d", qcol, nf);
	}

	if (kexpr == NULL || !has_vec)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("merge source \"%s\" has no column \"%s\"", srcname,
						kexpr == NULL ? t->idname : t->vecname),
				 errdetail("A merge source needs the id column \"%s\" and the vector column \"%s\" of table \"%s\".",
						   t->idname, t->vecname, t->relname)));

	initStringInfo(&m.source);
	appendStringInfo(&m.source, "SELECT DISTINCT ON (1) %s AS k%s", kexpr,
					 cols.data);
	if (opcol)
	{
		appendStringInfo(&m.source, ", %s AS op", opcol);
		m.has_op = true;
	}
	appendStringInfo(&m.source, "\n  FROM %s AS s\n  ORDER BY 1",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(src)),
												srcname));
	if (has_gen)
		appendStringInfoString(&m.source, ", s.generation DESC NULLS LAST");
	if (has_ctid)
		appendStringInfoString(&m.source, ", s.ctid DESC");
	relation_close(src, NoLock);

	return MergeBuildSql(t, &m);
}

/*
 * ft.merge(index regclass, source regclass)
 *	 -> (inserted bigint, updated bigint, deleted bigint)
 *
 * Upserts the rows of source into the index's table with one MERGE over
 * the id, as the caller (privileges and row-level security apply as to any
 * MERGE).  Builds the id btree first if it is missing (as the table's
 * owner; see MergeEnsureKeyBtree).
 */
PG_FUNCTION_INFO_V1(ft_merge);
Datum
ft_merge(PG_FUNCTION_ARGS)
{
	MergeTarget t;
	MergeCounts c;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	char	   *sql;
	bool		probe;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	MergeOpenTarget(PG_GETARG_OID(0), RowExclusiveLock, false, &t);
	sql = source_stmt(&t, PG_GETARG_OID(1));
	MergeCheckAnyPrivilege(&t, ACL_INSERT | ACL_UPDATE | ACL_DELETE);

	memset(&c, 0, sizeof(c));
	SPI_connect();
	probe = MergeEnsureKeyBtree(&t, &c.built);
	MergeRun(&t, sql, probe, &c);
	MergeRecord(&t, &c);
	SPI_finish();

	values[0] = Int64GetDatum(c.inserted);
	values[1] = Int64GetDatum(c.updated);
	values[2] = Int64GetDatum(c.deleted);
	if (!pgstat_track_counts)
		nulls[0] = nulls[1] = nulls[2] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * ft.merge_plan(index regclass, source regclass) -> SETOF text
 *
 * EXPLAIN (COSTS OFF) of the MERGE ft.merge(index, source) would run now,
 * under the same settings.  Builds nothing: without the btree it shows the
 * plan of a merge without one.
 */
PG_FUNCTION_INFO_V1(ft_merge_plan);
Datum
ft_merge_plan(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MergeTarget t;
	char	   *sql;
	Relation	heap;
	bool		probe = false;
	int			nest = 0;
	uint64		i;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	MergeOpenTarget(PG_GETARG_OID(0), AccessShareLock, false, &t);
	sql = source_stmt(&t, PG_GETARG_OID(1));
	heap = relation_open(t.heapoid, NoLock);
	(void) SegvecFindKeyBtree(heap, t.idatt, &probe);
	relation_close(heap, NoLock);

	SPI_connect();
	if (probe)
		nest = probe_settings_push();
	if (SPI_execute(psprintf("EXPLAIN (COSTS OFF) %s", sql), false, 0) !=
		SPI_OK_UTILITY)
		elog(ERROR, "EXPLAIN failed");
	if (probe)
		AtEOXact_GUC(true, nest);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		line = SPI_getbinval(SPI_tuptable->vals[i],
										 SPI_tuptable->tupdesc, 1, &isnull);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &line,
							 &isnull);
	}
	SPI_finish();
	return (Datum) 0;
}

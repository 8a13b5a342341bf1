/*-------------------------------------------------------------------------
 *
 * ftcompile.c
 *	  The ft query compiler: turns a parsed query (ftparse.c) into one SQL
 *	  statement and its parameters, for ft.search, ft.query and ft.explain
 *	  (ftsearch.c) to run.  Its values and columns are in ftvalue.c, its
 *	  full-text terms in fttextq.c (ftcompile_int.h).
 *
 * Field names are checked against the table's columns and quoted with
 * quote_identifier(); every value (tag, number, vector, radius, limit, key
 * of the returned jsonb) is a parameter $n, never part of the SQL text.
 *
 * src/ft/ftcompile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <float.h>
#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/int.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/float.h"
#include "utils/formatting.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/varlena.h"

#include "am/am.h"
#include "ft/ftcompile_int.h"
#include "ft/ftquery.h"
#include "merge/merge.h"
#include "store/store.h"

/* ---------------------------------------------------------------------
 * Compiler
 *
 * The statement FtCompile writes returns (id text, distance real, fields
 * jsonb, dist float8), in result order.  Its shape, for a table t with id
 * column "id" and vector column "vec" (the parts in brackets depend on the
 * query):
 *
 *	[WITH p AS MATERIALIZED (SELECT ... FROM ft._pending_rows() p)]
 *	SELECT s.id, CAST(s.dist AS float4) AS distance, s.fields, s.dist
 *	FROM (branch
 *		  | SELECT k.* FROM (branch) k ORDER BY k.dist, k.ik LIMIT $lim (KNN)
 *		  | SELECT u.* FROM ((branch) UNION ALL (pending branch)) u
 *			ORDER BY ... LIMIT $lim) s
 *	ORDER BY <final order> LIMIT $num OFFSET $off
 *
 *	branch := SELECT CAST(t.id AS text) AS id, <distance> AS dist,
 *				<fields> AS fields, t.id AS ik [, <sort key> AS sk]
 *			  FROM schema.table t
 *			  WHERE t.vec IS NOT NULL [AND t.id is not a pending id]
 *				[AND <filter>]
 *			  ORDER BY <distance> | <sort key>, t.id | t.id
 *			  LIMIT $lim | FETCH FIRST ($lim) ROWS WITH TIES (KNN)
 *
 * Every branch also has sk (the SORTBY key, or NULL) and sc (the
 * full-text score, or 0); distances of an L2 index are reported squared
 * in ft.query (pg_catalog.power(<->, 2) as float4), while the order stays the
 * operator's, which the index provides.
 *
 * A KNN query orders the branch by the distance, so the planner can take
 * the segvec index's ordered scan (the filter becomes its Filter and the
 * scan keeps producing rows until $lim of them pass); $lim is k, and
 * SORTBY and LIMIT apply to those k rows, as in RediSearch (the branch
 * also returns the docs tied with the k-th, and the k are then cut by
 * distance and id, so ties go to the lowest ids as in RediSearch; an
 * ORDER BY distance, id would keep the planner from the index, which
 * orders by the distance alone; HYBRID_POLICY
 * ADHOC_BF orders by "distance + 0", which no index provides: exact
 * distances of the filtered rows).  A query whose top level has a
 * VECTOR_RANGE (and no KNN) reads the table in that distance's order
 * inside a window that counts the rows beyond the radius; the condition
 * "count < 1" becomes the window's run condition, so the scan stops at the
 * first row beyond the radius instead of going through the whole index,
 * and the rows within are then ordered.  Without SORTBY the order is, as
 * RediSearch's, the full-text score (best first) when there are text
 * terms, else the id.
 *
 * The pending branch reads the newest pending upsert per id, read from
 * ft.pending_for just before and handed to the statement by
 * ft._pending_rows() (so that no vector becomes a constant the planner
 * copies, or goes through JSON).  Every pending id is hidden from the
 * table branch, and each pending 'u' becomes a row, its columns those of
 * the table's row overlaid with the pending fields, id and vector, run
 * through the same filter.  (An 'r', a replace, starts from no row.)  The
 * pending values are read without running any code of the table's owner
 * (no domain constraint: see pending_row), as a plain SELECT runs none.
 *
 * Operators and functions are schema-qualified, so the statement means the
 * same under any search_path.
 * ---------------------------------------------------------------------
 */

static char *find_alias(CompileState *st, const char *name);

/* Name a distance expression (AS, $YIELD_DISTANCE_AS, the default name) */
static void
add_alias(CompileState *st, const char *name, const char *expr)
{
	FtAlias    *a;

	/* as RediSearch: two vector clauses cannot yield one name */
	if (find_alias(st, name) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_COLUMN),
				 errmsg("distance name \"%s\" is given more than once", name)));
	a = palloc(sizeof(FtAlias));

	a->name = pstrdup(name);
	a->expr = pstrdup(expr);
	st->aliases = lappend(st->aliases, a);
}

static char *
find_alias(CompileState *st, const char *name)
{
	ListCell   *lc;

	foreach(lc, st->aliases)
	{
		FtAlias    *a = lfirst(lc);

		if (strcmp(a->name, name) == 0)
			return a->expr;
	}
	return NULL;
}

/*
 * The distance as reported and compared.  ft.query gives RediSearch's:
 * L2 squared (rounded to float4, as RediSearch computes it in float32,
 * so that a radius equal to a squared distance admits it), IP as 1 - the
 * inner product (<#> is its negation); cosine is the same.  ft.search
 * gives the operator's.
 */
static char *
report_expr(CompileState *st, char *raw)
{
	if (st->squared && st->info->metric == SEGVEC_METRIC_L2)
		return psprintf("CAST(CAST(pg_catalog.power(%s, CAST(2 AS pg_catalog.float8)) AS pg_catalog.float4) AS pg_catalog.float8)", raw);
	if (st->squared && st->info->metric == SEGVEC_METRIC_IP)
		return psprintf("(%s OPERATOR(pg_catalog.+) CAST(1 AS pg_catalog.float8))", raw);
	return raw;
}

/*
 * The name a distance is given (AS, $YIELD_DISTANCE_AS): a name or a
 * $param holding one.  RediSearch refuses a name that is a field of the
 * schema; so does this.
 */
static char *
distance_name(CompileState *st, FtValue *v)
{
	char	   *name = FtcValueText(st, v, "a name");
	TupleDesc	td = st->info->tupdesc;
	int			i;

	for (i = 0; i < td->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(td, i);

		if (!attr->attisdropped && strcmp(NameStr(attr->attname), name) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("distance name \"%s\"%s is already a field of table \"%s\"",
							name, FtcAtChar(v->location), st->info->relname),
					 errhint("Give the distance another name.")));
	}
	return name;
}

/*
 * A VECTOR_RANGE: checks it, adds its vector and radius as parameters
 * and its $YIELD_DISTANCE_AS name.  Returns the reported distance; *raw
 * the operator's (the index order), *radius_pno the radius parameter.
 */
static char *
compile_vecrange(CompileState *st, FtNode *n, int *radius_pno)
{
	double		radius;
	char	   *raw;
	char	   *expr;

	FtcCheckVectorField(st, n->field, n->field_location);
	radius = FtcValueFloat8(st, &n->radius, "the radius of VECTOR_RANGE");
	if (radius < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the radius of VECTOR_RANGE%s must not be negative",
						FtcAtChar(n->radius.location))));
	if (n->has_epsilon &&
		!(FtcValueFloat8(st, &n->epsilon, "EPSILON") > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("EPSILON%s must be greater than 0",
						FtcAtChar(n->epsilon.location))));
	raw = FtcDistanceExpr(st, FtcValueVector(st, &n->vector));
	expr = report_expr(st, raw);
	if (n->yield_as.literal || n->yield_as.param)
		add_alias(st, distance_name(st, &n->yield_as), expr);
	*radius_pno = FtcAddParam(st->c, FLOAT8OID, Float8GetDatum(radius));
	st->stop_raw = raw;
	return expr;
}

/*
 * One finite end s of a numeric range on an integer column, as the same
 * condition on a bigint: col >= ceil(s), col > floor(s), col <= floor(s) or
 * col < ceil(s).  Compared as numeric, the column would be cast, and a
 * filter column of the index (README.md, "Filter columns in the index")
 * could not serve the condition; compared as bigint, it can.  NULL when the
 * end bounds nothing (beyond every bigint on its side); *never when it
 * leaves nothing in.
 */
static char *
integer_bound(CompileState *st, const char *s, bool lower, bool exclusive,
			  const char *col, bool *never)
{
	Datum		x = DirectFunctionCall3(numeric_in, CStringGetDatum(s),
										ObjectIdGetDatum(InvalidOid),
										Int32GetDatum(-1));
	bool		up = lower != exclusive;	/* round up: >= ceil, < ceil */
	Datum		r = DirectFunctionCall1(up ? numeric_ceil : numeric_floor, x);
	Datum		max = DirectFunctionCall1(int8_numeric, Int64GetDatum(PG_INT64_MAX));
	Datum		min = DirectFunctionCall1(int8_numeric, Int64GetDatum(PG_INT64_MIN));
	int			pno;

	if (DatumGetBool(DirectFunctionCall2(numeric_gt, r, max)))
	{
		/* above every bigint: a lower end lets nothing in, an upper all */
		*never |= lower;
		return NULL;
	}
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, r, min)))
	{
		*never |= !lower;
		return NULL;
	}
	pno = FtcAddParam(st->c, INT8OID, DirectFunctionCall1(numeric_int8, r));
	return psprintf("%s OPERATOR(pg_catalog.%s) $%d", col,
					lower ? (exclusive ? ">" : ">=") : (exclusive ? "<" : "<="),
					pno);
}

/* One end of a numeric range as "t.col OP $n", or NULL when unbounded */
static char *
compile_bound(CompileState *st, FtNode *n, FtBound *b, bool lower,
			  const char *col, Oid typid, bool *never)
{
	int			inf = b->inf;
	char	   *s = NULL;
	int			pno;
	bool		isfloat = (typid == FLOAT4OID || typid == FLOAT8OID);
	double		d;

	if (inf == 0)
	{
		s = FtcValueText(st, &b->value, "a number");
		inf = FtcInfWord(s);
		if (inf < 0 && !lower)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the upper bound of field \"%s\"%s cannot be -inf",
							n->field, FtcAtChar(b->value.location))));
	}
	if (inf != 0)
	{
		/*
		 * [+inf +inf] bounds nothing in; [+inf x] with x finite is refused
		 * as RediSearch refuses it (min > max); .. -inf] was refused above
		 */
		if (lower && inf > 0)
		{
			int			hi_inf = n->hi.inf;

			if (hi_inf == 0)
				hi_inf = FtcInfWord(FtcValueText(st, &n->hi.value, "a number"));
			if (hi_inf <= 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("the lower bound of field \"%s\"%s cannot be +inf when the upper bound is finite",
								n->field, FtcAtChar(n->location))));
			*never = true;
			return NULL;
		}
		/*
		 * (-inf and (+inf leave out the infinities themselves, as in
		 * RediSearch; only real, double precision and numeric hold them.
		 */
		if (!b->exclusive || !(isfloat || typid == NUMERICOID))
			return NULL;
		if (isfloat)
			pno = FtcAddParam(st->c, FLOAT8OID,
							Float8GetDatum(inf > 0 ? get_float8_infinity() :
										   -get_float8_infinity()));
		else
			pno = FtcAddParam(st->c, NUMERICOID,
							DirectFunctionCall3(numeric_in,
												CStringGetDatum(inf > 0 ? "Infinity" : "-Infinity"),
												ObjectIdGetDatum(InvalidOid),
												Int32GetDatum(-1)));
		return psprintf("%s OPERATOR(pg_catalog.%s) $%d", col,
						lower ? ">" : "<", pno);
	}
	if (!FtcParseFinite(s, &d))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bound of field \"%s\"%s must be a number, not \"%s\"",
						n->field, FtcAtChar(b->value.location), s)));
	if (typid == INT2OID || typid == INT4OID || typid == INT8OID)
		return integer_bound(st, s, lower, b->exclusive, col, never);
	if (isfloat)
		pno = FtcAddParam(st->c, FLOAT8OID, Float8GetDatum(d));
	else
		pno = FtcAddParam(st->c, NUMERICOID,
						DirectFunctionCall3(numeric_in, CStringGetDatum(s),
											ObjectIdGetDatum(InvalidOid),
											Int32GetDatum(-1)));
	return psprintf("%s OPERATOR(pg_catalog.%s) $%d", col,
					lower ? (b->exclusive ? ">" : ">=") :
					(b->exclusive ? "<" : "<="), pno);
}

/*
 * A tag filter on a number column compares numbers, not text forms:
 * @price:{10} matches 10, 10.0 and 10.00 alike (a numeric(10,2) column
 * prints 10.00).  Every tag must be a decimal number; patterns cannot
 * match a number.  Tags on an integer column compare as bigints.
 */
static void
compile_numeric_tag(CompileState *st, FtNode *n, AttrNumber attno, Oid typid,
					List *exact, List *patterns, StringInfo buf)
{
	ListCell   *lc;

	if (patterns != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("field \"%s\"%s is numeric: a tag pattern cannot match it",
						n->field, FtcAtChar(n->field_location)),
				 errhint("Use a range such as @%s:[10 20].", n->field)));
	foreach(lc, exact)
	{
		char	   *t = lfirst(lc);

		if (!FtcIsDecimalLiteral(t))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("tag \"%s\" of numeric field \"%s\"%s is not a number",
							t, n->field, FtcAtChar(n->field_location))));
	}
	if (typid == INT2OID || typid == INT4OID || typid == INT8OID)
	{
		/*
		 * Tags on an integer column: equality on a bigint, or for several
		 * a list of bigints (= ANY), which a filter column of the index can
		 * serve; a tag with a fraction or beyond every bigint matches no
		 * row and is left out.
		 */
		Datum		max = DirectFunctionCall1(int8_numeric, Int64GetDatum(PG_INT64_MAX));
		Datum		min = DirectFunctionCall1(int8_numeric, Int64GetDatum(PG_INT64_MIN));
		Datum	   *vals = palloc(sizeof(Datum) * list_length(exact));
		int			nvals = 0;

		foreach(lc, exact)
		{
			Datum		x = DirectFunctionCall3(numeric_in,
												CStringGetDatum(lfirst(lc)),
												ObjectIdGetDatum(InvalidOid),
												Int32GetDatum(-1));
			Datum		r = DirectFunctionCall1(numeric_floor, x);

			if (DatumGetBool(DirectFunctionCall2(numeric_eq, r, x)) &&
				!DatumGetBool(DirectFunctionCall2(numeric_gt, r, max)) &&
				!DatumGetBool(DirectFunctionCall2(numeric_lt, r, min)))
				vals[nvals++] = DirectFunctionCall1(numeric_int8, r);
		}
		if (nvals == 0)
			appendStringInfoString(buf, "false");
		else if (nvals == 1)
			appendStringInfo(buf, "(%s OPERATOR(pg_catalog.=) $%d)",
							 FtcColumnRef(st, attno),
							 FtcAddParam(st->c, INT8OID, vals[0]));
		else
			appendStringInfo(buf, "(%s OPERATOR(pg_catalog.=) ANY ($%d))",
							 FtcColumnRef(st, attno),
							 FtcAddParam(st->c, INT8ARRAYOID,
										 PointerGetDatum(construct_array(vals, nvals,
																		 INT8OID, sizeof(int64),
																		 FLOAT8PASSBYVAL,
																		 TYPALIGN_DOUBLE))));
		return;
	}
	appendStringInfo(buf,
					 "(CAST(%s AS pg_catalog.numeric) OPERATOR(pg_catalog.=) ANY (CAST($%d AS pg_catalog.numeric[])))",
					 FtcColumnRef(st, attno), FtcAddTextArrayParam(st, exact));
}

/*
 * A tag filter.  Tags compare case-insensitively (both sides lower-cased)
 * unless the field is CASESENSITIVE; a wildcard tag is a LIKE pattern.
 */
static void
compile_tag(CompileState *st, FtNode *n, StringInfo buf)
{
	AttrNumber	attno = FtcFindColumn(st, n->field, n->field_location);
	bool		cs = FtcNameInList(st->info->casesensitive, n->field);
	List	   *exact = NIL;
	List	   *patterns = NIL;
	ListCell   *lc;
	char	   *elem;
	bool		isarray;
	Oid			typid;
	StringInfoData cond;

	if (attno == st->info->vecattno)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("field \"%s\"%s is the vector field: it takes KNN or VECTOR_RANGE, not a tag filter",
						n->field, FtcAtChar(n->field_location))));
	typid = FtcColumnBaseType(st, attno);
	foreach(lc, n->tags)
	{
		FtValue    *v = lfirst(lc);
		ListCell   *lc2;

		foreach(lc2, FtcValueTags(st, v))
		{
			char	   *t = lfirst(lc2);

			if (!cs)
				t = FtcLowerText(t);
			if (v->wild)
				patterns = lappend(patterns, FtcLikePattern(t, v->wild));
			else
				exact = lappend(exact, t);
		}
	}
	if (typid == INT2OID || typid == INT4OID || typid == INT8OID ||
		typid == FLOAT4OID || typid == FLOAT8OID || typid == NUMERICOID)
	{
		compile_numeric_tag(st, n, attno, typid, exact, patterns, buf);
		return;
	}
	isarray = get_element_type(typid) != InvalidOid;
	if (typid == TEXTOID && cs && patterns == NIL && list_length(exact) == 1)
	{
		/* one case-sensitive tag on a text column: what a filter column serves */
		appendStringInfo(buf, "(%s OPERATOR(pg_catalog.=) $%d)",
						 FtcColumnRef(st, attno),
						 FtcAddParam(st->c, TEXTOID,
									 CStringGetTextDatum(linitial(exact))));
		return;
	}
	if (isarray && cs && patterns == NIL)
	{
		appendStringInfo(buf,
						 "(CAST(%s AS pg_catalog.text[]) OPERATOR(pg_catalog.&&) $%d)",
						 FtcColumnRef(st, attno), FtcAddTextArrayParam(st, exact));
		return;
	}
	elem = isarray ? "e.v" : psprintf("CAST(%s AS pg_catalog.text)",
									  FtcColumnRef(st, attno));
	if (!cs)
		elem = psprintf("pg_catalog.lower(%s)", elem);
	initStringInfo(&cond);
	if (exact != NIL)
		appendStringInfo(&cond, "%s OPERATOR(pg_catalog.=) ANY ($%d)", elem,
						 FtcAddTextArrayParam(st, exact));
	if (patterns != NIL)
		appendStringInfo(&cond, "%s%s OPERATOR(pg_catalog.~~) ANY ($%d)",
						 exact != NIL ? " OR " : "", elem,
						 FtcAddTextArrayParam(st, patterns));
	if (isarray)
		appendStringInfo(buf,
						 "(EXISTS (SELECT FROM pg_catalog.unnest(CAST(%s AS pg_catalog.text[])) e(v) WHERE %s))",
						 FtcColumnRef(st, attno), cond.data);
	else
		appendStringInfo(buf, "(%s)", cond.data);
}

/*
 * compile_node: append the SQL boolean expression of n to buf.  NULL
 * counts as false everywhere (a missing field matches no tag or range),
 * so a negation is "IS NOT TRUE", as RediSearch's negation is everything
 * but the matches.  Optional terms (~) of an AND only score.
 */
static void compile_node_body(CompileState *st, FtNode *n, StringInfo buf);

static void
compile_node(CompileState *st, FtNode *n, StringInfo buf)
{
	char	   *near = FtcNearCondition(st, n);

	if (near == NULL)
	{
		compile_node_body(st, n, buf);
		return;
	}
	appendStringInfoChar(buf, '(');
	compile_node_body(st, n, buf);
	appendStringInfo(buf, " AND %s)", near);
}

/* compile_node without the SLOP / INORDER condition */
static void
compile_node_body(CompileState *st, FtNode *n, StringInfo buf)
{
	ListCell   *lc;
	AttrNumber	attno;
	Oid			typid;
	bool		first = true;
	List	   *fields = NIL;
	char	   *tq;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();

	/* a subtree of words and phrases: one tsquery */
	if (n->kind != FT_NODE_ALL && n->kind != FT_NODE_TAG &&
		n->kind != FT_NODE_NUMERIC && n->kind != FT_NODE_VECRANGE &&
		!n->optional && (tq = FtcTextTsquery(st, n, &fields)) != NULL)
	{
		int			pno = FtcAddParam(st->c, TEXTOID, CStringGetTextDatum(tq));

		/*
		 * Restricted to some of the TEXT fields: a match there is a match
		 * over all of them too when the tsquery has no negation, and that
		 * test the GIN index can answer first.
		 */
		if (!FtcSameFields(fields, st->info->text_fields) &&
			strchr(tq, '!') == NULL)
			appendStringInfo(buf, "(%s OPERATOR(pg_catalog.@@) pg_catalog.to_tsquery(%s, $%d) AND ",
							 FtcTsvectorExpr(st, st->info->text_fields), st->cfg,
							 pno);
		else
			appendStringInfoChar(buf, '(');
		appendStringInfo(buf, "%s OPERATOR(pg_catalog.@@) pg_catalog.to_tsquery(%s, $%d))",
						 FtcTsvectorExpr(st, fields), st->cfg, pno);
		return;
	}

	switch (n->kind)
	{
		case FT_NODE_ALL:
			appendStringInfoString(buf, "true");
			break;

		case FT_NODE_AND:
		case FT_NODE_OR:
			appendStringInfoChar(buf, '(');
			foreach(lc, n->args)
			{
				FtNode	   *child = lfirst(lc);

				if (child == st->stop_node)
					continue;
				if (child->optional && n->kind == FT_NODE_AND)
					continue;
				if (!first)
					appendStringInfoString(buf, n->kind == FT_NODE_AND ?
										   " AND " : " OR ");
				compile_node(st, child, buf);
				first = false;
			}
			if (first)
				appendStringInfoString(buf, "true");
			appendStringInfoChar(buf, ')');
			break;

		case FT_NODE_NOT:
			appendStringInfoString(buf, "(");
			compile_node(st, linitial(n->args), buf);
			appendStringInfoString(buf, " IS NOT TRUE)");
			break;

		case FT_NODE_TAG:
			compile_tag(st, n, buf);
			break;

		case FT_NODE_TEXT:
			if (n->optional)
				appendStringInfoString(buf, "true");
			else
				FtcCompileLexemeMatch(st, n, buf);
			break;

		case FT_NODE_NUMERIC:
			{
				char	   *col;
				char	   *lo;
				char	   *hi;
				bool		never = false;

				attno = FtcFindColumn(st, n->field, n->field_location);
				typid = FtcColumnBaseType(st, attno);
				if (typid != INT2OID && typid != INT4OID && typid != INT8OID &&
					typid != FLOAT4OID && typid != FLOAT8OID &&
					typid != NUMERICOID)
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("field \"%s\"%s is not numeric: a range needs smallint, integer, bigint, real, double precision or numeric, not %s",
									n->field, FtcAtChar(n->field_location),
									format_type_be(typid))));
				col = FtcColumnRef(st, attno);
				lo = compile_bound(st, n, &n->lo, true, col, typid, &never);
				hi = compile_bound(st, n, &n->hi, false, col, typid, &never);
				if (never)
					appendStringInfoString(buf, "false");
				else if (lo && hi)
					appendStringInfo(buf, "(%s AND %s)", lo, hi);
				else if (lo || hi)
					appendStringInfo(buf, "(%s)", lo ? lo : hi);
				else
					appendStringInfo(buf, "(%s IS NOT NULL)", col);
				break;
			}

		case FT_NODE_VECRANGE:
			{
				char	   *expr;
				int			pno;

				expr = compile_vecrange(st, n, &pno);
				appendStringInfo(buf, "(%s OPERATOR(pg_catalog.<=) $%d)", expr, pno);
				break;
			}
	}
}

/* The jsonb of the returned fields: NULL for RETURN 0 */
static char *
fields_expr(CompileState *st, const char *score)
{
	FtQuery    *q = st->q;
	List	   *keys = NIL;
	List	   *exprs = NIL;
	ListCell   *lc;
	ListCell   *lc2;
	StringInfoData buf;
	Datum	   *elems;
	int			pno;
	int			i;

	if (q->withscores)
	{
		/* the fields and "__score", the key a constant of the dialect */
		bool		save = q->withscores;
		char	   *base;

		q->withscores = false;
		base = fields_expr(st, score);
		q->withscores = save;
		return psprintf("(COALESCE(%s, '{}'::pg_catalog.jsonb) OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('__score', %s))",
						base, score);
	}
	if ((q->has_return && q->returns == NIL) || q->nocontent)
		return "NULL::pg_catalog.jsonb";
	if (!q->has_return)
	{
		TupleDesc	td = st->info->tupdesc;
		bool		table_select;

		/* every column but the vector that the caller may read */
		table_select = pg_class_aclcheck(st->info->heapoid, GetUserId(),
										 ACL_SELECT) == ACLCHECK_OK;
		for (i = 0; i < td->natts; i++)
		{
			if (TupleDescAttr(td, i)->attisdropped ||
				i + 1 == st->info->vecattno)
				continue;
			if (!table_select &&
				pg_attribute_aclcheck(st->info->heapoid, i + 1, GetUserId(),
									  ACL_SELECT) != ACLCHECK_OK)
				continue;
			keys = lappend(keys, FtcColumnName(st, i + 1));
			exprs = lappend(exprs, FtcColumnRef(st, i + 1));
		}
	}
	else
	{
		foreach(lc, q->returns)
		{
			FtReturnField *f = lfirst(lc);
			char	   *expr = find_alias(st, f->field);

			/* a distance, as real like the distance column */
			if (expr != NULL)
				expr = psprintf("CAST(%s AS pg_catalog.float4)", expr);
			else
				expr = FtcColumnRef(st, FtcFindColumn(st, f->field, f->location));
			keys = lappend(keys, f->alias ? f->alias : f->field);
			exprs = lappend(exprs, expr);
		}
	}

	if (keys == NIL)
		return "'{}'::pg_catalog.jsonb";

	/* the keys are values too: one text[] parameter */
	elems = palloc(sizeof(Datum) * list_length(keys));
	i = 0;
	foreach(lc, keys)
		elems[i++] = CStringGetTextDatum(lfirst(lc));
	pno = FtcAddParam(st->c, TEXTARRAYOID,
					PointerGetDatum(construct_array(elems, i, TEXTOID, -1,
													false, TYPALIGN_INT)));

	/* jsonb_build_object takes at most 100 arguments: 50 pairs a call */
	initStringInfo(&buf);
	i = 0;
	forboth(lc, keys, lc2, exprs)
	{
		if (i % 50 == 0)
			appendStringInfoString(&buf, i == 0 ? "pg_catalog.jsonb_build_object(" :
								   ") OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(");
		else
			appendStringInfoString(&buf, ", ");
		appendStringInfo(&buf, "$%d[%d], %s", pno, i + 1, (char *) lfirst(lc2));
		i++;
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* LIMIT, RETURN, SORTBY and DIALECT given in params instead of the text */
static void
apply_param_options(CompileState *st)
{
	FtQuery    *q = st->q;
	JsonbValue *jv;
	List	   *elems;
	ListCell   *lc;

	if (st->params == NULL)
		return;

#define PARAM_OPTION(name) \
	getKeyJsonValueFromContainer(&st->params->root, name, strlen(name), NULL)
#define BOTH_ERROR(name) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("%s is given both in the query and in params", name)))

	if ((jv = PARAM_OPTION("LIMIT")) != NULL)
	{
		char	   *off;
		char	   *num;

		if (q->has_limit)
			BOTH_ERROR("LIMIT");
		elems = FtcJsonbArrayElementsList(jv);
		if (list_length(elems) != 2 ||
			(off = FtcJsonbScalarText(linitial(elems))) == NULL ||
			(num = FtcJsonbScalarText(lsecond(elems))) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("LIMIT in params must be an array [offset, num]")));
		q->has_limit = true;
		q->offset.literal = off;
		q->num.literal = num;
	}
	if ((jv = PARAM_OPTION("RETURN")) != NULL)
	{
		if (q->has_return)
			BOTH_ERROR("RETURN");
		q->has_return = true;
		elems = FtcJsonbArrayElementsList(jv);
		if (elems == NIL && !(jv->type == jbvBinary &&
							  JsonContainerIsArray(jv->val.binary.data)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("RETURN in params must be an array of field names")));
		foreach(lc, elems)
		{
			JsonbValue *e = lfirst(lc);
			FtReturnField *f = palloc0(sizeof(FtReturnField));

			if (e->type != jbvString)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("RETURN in params must be an array of field names")));
			f->field = pnstrdup(e->val.string.val, e->val.string.len);
			q->returns = lappend(q->returns, f);
		}
	}
	if ((jv = PARAM_OPTION("SORTBY")) != NULL)
	{
		char	   *field = NULL;
		char	   *dir = NULL;

		if (q->has_sortby)
			BOTH_ERROR("SORTBY");
		if (jv->type == jbvString)
			field = FtcJsonbScalarText(jv);
		else if ((elems = FtcJsonbArrayElementsList(jv)) != NIL &&
				 list_length(elems) <= 2 &&
				 ((JsonbValue *) linitial(elems))->type == jbvString)
		{
			field = FtcJsonbScalarText(linitial(elems));
			if (list_length(elems) == 2)
				dir = FtcJsonbScalarText(lsecond(elems));
		}
		if (field == NULL ||
			(dir != NULL && pg_strcasecmp(dir, "ASC") != 0 &&
			 pg_strcasecmp(dir, "DESC") != 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("SORTBY in params must be a field name or an array [field, \"ASC\" | \"DESC\"]")));
		q->has_sortby = true;
		q->sortby = field;
		q->sort_desc = (dir != NULL && pg_strcasecmp(dir, "DESC") == 0);
	}
	if ((jv = PARAM_OPTION("WITHSCORES")) != NULL)
	{
		if (jv->type != jbvBool)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("WITHSCORES in params must be true or false")));
		if (q->withscores && jv->val.boolean)
			BOTH_ERROR("WITHSCORES");
		q->withscores = q->withscores || jv->val.boolean;
	}
	if ((jv = PARAM_OPTION("SCORER")) != NULL)
	{
		if (q->scorer)
			BOTH_ERROR("SCORER");
		if (jv->type != jbvString)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("SCORER in params must be a scorer name")));
		q->scorer = FtcJsonbScalarText(jv);
	}
	if ((jv = PARAM_OPTION("DIALECT")) != NULL)
	{
		char	   *s = FtcJsonbScalarText(jv);

		if (s == NULL || strcmp(s, "2") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DIALECT %s is not supported", s ? s : "?"),
					 errhint("Only DIALECT 2 is supported.")));
	}
#undef PARAM_OPTION
#undef BOTH_ERROR
}

/*
 * The columns of a pending upsert as the select list of "t": the id and
 * vector from the write, every other column from its fields when they name
 * it (f), else from the table's row b (NULL for a new id).  The vector
 * never goes through JSON.
 *
 * No code of the table's owner may run here, as none runs in a plain
 * SELECT of the table: the values are read from the fields as the types
 * SegvecUncheckedType gives (a domain as its base type), so no domain
 * constraint is evaluated; ft.add checked them, as the owner, when it
 * queued the write.  A column whose type nests a domain (ft.add does not
 * set those) is taken from b.  *from gets the row source of f,
 * jsonb_to_record with a column definition list, or NULL when no column
 * is read from the fields.
 */
static char *
pending_row(CompileState *st, const char *idtype, char **from)
{
	TupleDesc	td = st->info->tupdesc;
	StringInfoData buf;
	StringInfoData deflist;
	List	   *keys = NIL;
	List	   *types = NIL;
	ListCell   *lc,
			   *lt;
	Datum	   *elems;
	int			pno;
	int			i;

	for (i = 0; i < td->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(td, i);

		if (!att->attisdropped && i + 1 != st->info->idattno &&
			i + 1 != st->info->vecattno)
		{
			Oid			typid = SegvecUncheckedType(att->atttypid);
			int32		typmod = att->atttypmod;

			keys = lappend(keys, FtcColumnName(st, i + 1));
			if (OidIsValid(typid) && typid != att->atttypid)
			{
				typmod = -1;
				if (typid == getBaseType(att->atttypid))
					(void) getBaseTypeAndTypmod(att->atttypid, &typmod);
			}
			types = lappend(types, OidIsValid(typid) ?
							format_type_extended(typid, typmod,
												 FORMAT_TYPE_FORCE_QUALIFY |
												 FORMAT_TYPE_TYPEMOD_GIVEN) :
							NULL);
		}
	}
	pno = 0;
	if (keys != NIL)
	{
		elems = palloc(sizeof(Datum) * list_length(keys));
		i = 0;
		foreach(lc, keys)
			elems[i++] = CStringGetTextDatum(lfirst(lc));
		pno = FtcAddParam(st->c, TEXTARRAYOID,
						PointerGetDatum(construct_array(elems, i, TEXTOID, -1,
														false, TYPALIGN_INT)));
	}

	initStringInfo(&buf);
	initStringInfo(&deflist);
	appendStringInfo(&buf, "CAST(p.id AS %s) AS %s, p.vector AS %s", idtype,
					 quote_identifier(FtcColumnName(st, st->info->idattno)),
					 quote_identifier(FtcColumnName(st, st->info->vecattno)));
	i = 0;
	forboth(lc, keys, lt, types)
	{
		const char *col = quote_identifier(lfirst(lc));

		i++;
		if (lfirst(lt) == NULL)
		{
			appendStringInfo(&buf, ",\n      b.%s AS %s", col, col);
			continue;
		}
		appendStringInfo(&deflist, "%s%s %s", deflist.len > 0 ? ", " : "",
						 col, (char *) lfirst(lt));
		appendStringInfo(&buf,
						 ",\n      CASE WHEN p.fields OPERATOR(pg_catalog.?) $%d[%d] THEN f.%s ELSE b.%s END AS %s",
						 pno, i, col, col, col);
	}
	*from = deflist.len > 0 ?
		psprintf("pg_catalog.jsonb_to_record(COALESCE(p.fields, CAST('{}' AS pg_catalog.jsonb))) AS f(%s)",
				 deflist.data) : NULL;
	return buf.data;
}

/*
 * The score of a doc for the full-text terms of the query (SCORER):
 * ts_rank_cd over all TEXT fields stands for BM25 (the default scorer),
 * ts_rank for TF-IDF; 0 when the query has no text term.
 */
static char *
score_expr(CompileState *st)
{
	FtQuery    *q = st->q;
	const char *fn = "pg_catalog.ts_rank_cd";
	const char *norm = "";

	if (q->scorer != NULL)
	{
		if (pg_strcasecmp(q->scorer, "BM25") == 0 ||
			pg_strcasecmp(q->scorer, "BM25STD") == 0)
			;
		else if (pg_strcasecmp(q->scorer, "TFIDF") == 0)
			fn = "pg_catalog.ts_rank";
		else if (pg_strcasecmp(q->scorer, "TFIDF.DOCNORM") == 0)
		{
			fn = "pg_catalog.ts_rank";
			norm = ", 2";
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("SCORER %s%s is not supported", q->scorer,
							FtcAtChar(q->scorer_location)),
					 errhint("Use BM25, BM25STD (ts_rank_cd), TFIDF or TFIDF.DOCNORM (ts_rank).")));
	}
	if (st->has_text && st->weighted && st->rank_groups != NIL)
	{
		StringInfoData sum;
		ListCell   *lc;

		/* $weight: each group's rank in its fields, times its weight */
		initStringInfo(&sum);
		appendStringInfoString(&sum, "CAST(");
		foreach(lc, st->rank_groups)
		{
			RankGroup  *g = lfirst(lc);

			int			qno = FtcAddParam(st->c, TEXTOID,
										CStringGetTextDatum(g->q.data));
			int			wno = FtcAddParam(st->c, FLOAT4OID,
										Float4GetDatum((float4) g->weight));

			appendStringInfo(&sum, "%s%s(%s, pg_catalog.to_tsquery(%s, $%d)%s) OPERATOR(pg_catalog.*) $%d",
							 lc == list_head(st->rank_groups) ? "" : " OPERATOR(pg_catalog.+) ",
							 fn, FtcTsvectorExpr(st, g->fields), st->cfg, qno,
							 norm, wno);
		}
		appendStringInfoString(&sum, " AS pg_catalog.float4)");
		return sum.data;
	}
	if (!st->has_text || st->rankq.len == 0)
		return "CAST(0 AS pg_catalog.float4)";
	return psprintf("%s(%s, pg_catalog.to_tsquery(%s, $%d)%s)", fn,
					FtcTsvectorExpr(st, st->info->text_fields), st->cfg,
					FtcAddParam(st->c, TEXTOID, CStringGetTextDatum(st->rankq.data)),
					norm);
}

/*
 * FtLoadFieldOptions: the dialect options of a segvec index, from its
 * reloptions: text_fields (TEXT fields, comma-separated column names),
 * language (their text search configuration) and casesensitive (TAG
 * fields compared case-sensitively).  The caller holds a lock on index.
 */
void
FtLoadFieldOptions(FtIndexInfo *info, Relation index)
{
	SegvecOptions *opts = (SegvecOptions *) index->rd_options;
	char	   *s;

	info->text_fields = NIL;
	info->casesensitive = NIL;
	info->language = NULL;
	if (opts == NULL)
		return;
	if (opts->text_fields_offset != 0 &&
		(s = (char *) opts + opts->text_fields_offset) != NULL && *s)
	{
		if (!SplitIdentifierString(pstrdup(s), ',', &info->text_fields))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid text_fields \"%s\" of index \"%s\"", s,
							RelationGetRelationName(index))));
	}
	if (opts->casesensitive_offset != 0 &&
		(s = (char *) opts + opts->casesensitive_offset) != NULL && *s)
	{
		if (!SplitIdentifierString(pstrdup(s), ',', &info->casesensitive))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid casesensitive \"%s\" of index \"%s\"", s,
							RelationGetRelationName(index))));
	}
	if (opts->language_offset != 0)
	{
		s = (char *) opts + opts->language_offset;
		if (*s)
			info->language = pstrdup(s);
	}
}

/*
 * FtCompile: compile q, against the index and table described by info,
 * into one SQL statement and its parameters (see the comment above).
 * params (an object, or NULL) holds the $parameters and may give LIMIT,
 * RETURN, SORTBY, WITHSCORES, SCORER and DIALECT.  pending, when not
 * NULL, holds the index's pending upserts (read from ft.pending_for by
 * the caller): the statement combines the table with them.  Errors for
 * unknown fields, fields of the wrong type, missing or malformed
 * parameters, a query vector of the wrong dimension.
 */
FtCompiled *
FtCompile(FtIndexInfo *info, FtQuery *q, Jsonb *params, FtPending *pending)
{
	CompileState st;
	FtCompiled *c = palloc0(sizeof(FtCompiled));
	char	   *dist = NULL;	/* the reported distance, if any */
	char	   *raw = NULL;		/* the operator's distance (index order) */
	char	   *sortkey = NULL;
	char	   *score = NULL;
	const char *dir;
	char	   *fields;
	char	   *cols;
	char	   *wcols;
	char	   *branch_order;
	char	   *branch_limit;
	char	   *union_order;
	char	   *final_order;
	char	   *table;
	char	   *idtype;
	char	   *exclude_pending = "";
	StringInfoData where;
	StringInfoData pwhere;
	int64		offset = 0;
	int64		num = FT_DEFAULT_LIMIT;
	int64		lim;
	int			lim_p;
	int			radius_p = 0;

	memset(&st, 0, sizeof(st));
	st.info = info;
	st.q = q;
	st.params = (params != NULL && JB_ROOT_IS_OBJECT(params)) ? params : NULL;
	st.c = c;
	st.vecop = psprintf("OPERATOR(%s.%s)", quote_identifier(info->opnspname),
						info->opname);
	st.veccol = FtcColumnRef(&st, info->vecattno);
	st.idcol = FtcColumnRef(&st, info->idattno);
	st.squared = q->squared_l2;
	st.cfg = psprintf("CAST(%s AS pg_catalog.regconfig)",
					  quote_literal_cstr(info->language ? info->language :
										 "pg_catalog.english"));
	initStringInfo(&st.rankq);
	c->with_pending = (pending != NULL);
	initStringInfo(&c->sql);

	apply_param_options(&st);

	if (q->has_limit)
	{
		offset = FtcValueInt64(&st, &q->offset, "the offset of LIMIT");
		num = FtcValueInt64(&st, &q->num, "the count of LIMIT");
	}

	/* KNN: the distance, its name, k, EF_RUNTIME, the hybrid policy */
	if (q->knn)
	{
		FtKnn	   *knn = q->knn;

		FtcCheckVectorField(&st, knn->field, knn->field_location);
		raw = FtcDistanceExpr(&st, knn->vector_datum != (Datum) 0 ?
							knn->vector_datum : FtcValueVector(&st, &knn->vector));
		dist = report_expr(&st, raw);
		lim = knn->vector_datum != (Datum) 0 ? knn->k_value :
			FtcValueInt64(&st, &knn->k, "the k of KNN");
		/* RediSearch's MAX_KNN_K */
		if (lim > (INT64CONST(1) << 58))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("the k of KNN%s is too large",
							FtcAtChar(knn->k.location)),
					 errdetail("k may be at most 2^58, as in RediSearch.")));
		if (knn->has_ef)
		{
			int64		ef = FtcValueInt64(&st, &knn->ef, "EF_RUNTIME");

			if (ef < 1 || ef > SEGVEC_MAX_EF_SEARCH)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("EF_RUNTIME%s must be between 1 and %d",
								FtcAtChar(knn->ef.location),
								SEGVEC_MAX_EF_SEARCH)));
			c->ef_search = (int) ef;
		}
		if (knn->has_batch_size &&
			FtcValueInt64(&st, &knn->batch_size, "BATCH_SIZE") < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("BATCH_SIZE%s must be at least 1",
							FtcAtChar(knn->batch_size.location))));
		add_alias(&st, (knn->alias.literal || knn->alias.param) ?
				  distance_name(&st, &knn->alias) :
				  psprintf("__%s_score", knn->field), dist);
	}
	else if (pg_add_s64_overflow(offset, num, &lim))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("LIMIT offset and count are out of range")));

	/*
	 * A VECTOR_RANGE at the top level of a query without KNN (alone or
	 * AND-ed): the table is read nearest first and the read stops at the
	 * first doc beyond the radius.
	 */
	if (!q->knn && q->filter)
	{
		FtNode	   *f = q->filter;

		if (f->kind == FT_NODE_VECRANGE)
			st.stop_node = f;
		else if (f->kind == FT_NODE_AND)
		{
			ListCell   *lc;

			foreach(lc, f->args)
			{
				FtNode	   *child = lfirst(lc);

				if (child->kind == FT_NODE_VECRANGE && !child->optional)
				{
					st.stop_node = child;
					break;
				}
			}
		}
	}
	if (st.stop_node)
	{
		dist = compile_vecrange(&st, st.stop_node, &radius_p);
		raw = st.stop_raw;
	}

	/* the full-text terms: they score the docs */
	if (q->filter && FtcHasTextTerm(q->filter))
	{
		st.has_text = true;
		st.weighted = FtcHasWeight(q->filter);
		FtcCollectRankTerms(&st, q->filter, 1.0);
	}

	/* the filter (shared by both branches: same alias t, same $n) */
	initStringInfo(&where);
	appendStringInfo(&where, "%s IS NOT NULL", st.veccol);
	if (q->filter && q->filter != st.stop_node && !q->filter->optional)
	{
		appendStringInfoString(&where, " AND ");
		compile_node(&st, q->filter, &where);
	}
	/* INKEYS: the docs of those ids (their text form, as ft.query returns) */
	if (q->has_inkeys)
		appendStringInfo(&where,
						 " AND CAST(%s AS pg_catalog.text) OPERATOR(pg_catalog.=) ANY ($%d)",
						 st.idcol, FtcAddTextArrayParam(&st, q->inkeys));
	initStringInfo(&pwhere);
	appendStringInfoString(&pwhere, where.data);
	if (st.stop_node)
		appendStringInfo(&pwhere, " AND %s OPERATOR(pg_catalog.<=) $%d",
						 dist, radius_p);

	score = score_expr(&st);

	/* SORTBY: a distance name, __score or a column */
	if (q->has_sortby)
	{
		sortkey = find_alias(&st, q->sortby);
		if (sortkey == NULL && strcmp(q->sortby, "__score") == 0)
			sortkey = score;
		if (sortkey == NULL)
			sortkey = FtcColumnRef(&st, FtcFindColumn(&st, q->sortby,
												   q->sortby_location));
	}
	dir = q->sort_desc ? "DESC" : "ASC";

	fields = fields_expr(&st, score);
	cols = psprintf("CAST(%s AS pg_catalog.text) AS id, %s AS dist, %s AS fields, %s AS ik, %s AS sk, %s AS sc",
					st.idcol, dist ? dist : "NULL::pg_catalog.float8",
					fields, st.idcol, sortkey ? sortkey : "NULL", score);

	if (q->knn)
	{
		/* the k nearest; HYBRID_POLICY ADHOC_BF: by exact distances */
		/*
		 * the k nearest; the branch reads them in the index's order (an
		 * ORDER BY the distance alone, which the index provides) with the
		 * docs tied with the k-th (FETCH ... WITH TIES), and the k are cut
		 * from those by distance and id: ties at the k-th distance go to
		 * the lowest ids, as RediSearch keeps the lowest doc ids
		 */
		branch_order = q->knn->policy == FT_HYBRID_ADHOC_BF ?
			psprintf("%s OPERATOR(pg_catalog.+) CAST(0 AS pg_catalog.float8)", raw) :
			raw;
		union_order = "u.dist, u.ik";
		/*
		 * Without SORTBY RediSearch returns the k in its default order,
		 * not by distance: the full-text score (best first) when there
		 * are text terms, then the doc; SORTBY __<field>_score (or the AS
		 * name) orders by distance; ties of a SORTBY go by doc, as
		 * RediSearch's.
		 */
		if (sortkey)
			final_order = psprintf("s.sk %s NULLS LAST, s.ik", dir);
		else if (!q->knn_doc_order)
			final_order = "s.dist, s.ik";	/* ft.search: nearest first */
		else if (st.has_text)
			final_order = "s.sc DESC, s.ik";
		else
			final_order = "s.ik";
	}
	else if (sortkey)
	{
		branch_order = psprintf("sk %s NULLS LAST, ik", dir);
		union_order = psprintf("u.sk %s NULLS LAST, u.ik", dir);
		final_order = psprintf("s.sk %s NULLS LAST, s.ik", dir);
	}
	else if (st.has_text)
	{
		/* as RediSearch: the best score first */
		branch_order = "sc DESC, ik";
		union_order = "u.sc DESC, u.ik";
		final_order = "s.sc DESC, s.ik";
	}
	else
	{
		/* RediSearch's order of docs is their key's here */
		branch_order = "ik";
		union_order = "u.ik";
		final_order = "s.ik";
	}

	lim_p = FtcAddParam(c, INT8OID, Int64GetDatum(lim));
	branch_limit = q->knn ?
		psprintf("FETCH FIRST ($%d) ROWS WITH TIES", lim_p) :
		psprintf("LIMIT $%d", lim_p);
	table = quote_qualified_identifier(info->nspname, info->relname);
	/* the pending ids are read as the id type, a domain as its base type */
	idtype = pending != NULL ?
		format_type_extended(SegvecUncheckedType(info->idtype), -1,
							 FORMAT_TYPE_FORCE_QUALIFY) : NULL;

	if (pending != NULL)
	{
		appendStringInfoString(&c->sql,
							   "WITH p AS MATERIALIZED (\n"
							   "  SELECT p.id, p.op, p.vector, p.fields FROM ft._pending_rows() p)\n");
		exclude_pending = psprintf("\n    AND (%s OPERATOR(pg_catalog.=) ANY (SELECT CAST(p.id AS %s) FROM p)) IS NOT TRUE",
								   st.idcol, idtype);
	}

	appendStringInfoString(&c->sql,
						   "SELECT s.id, CAST(s.dist AS pg_catalog.float4) AS distance, s.fields, s.dist\n"
						   "FROM (");
	if (pending != NULL)
		appendStringInfoString(&c->sql, "SELECT u.* FROM (\n(");
	else if (q->knn)
		appendStringInfoString(&c->sql, "SELECT k.* FROM (\n");

	/* the table branch */
	if (st.stop_node)
	{
		/*
		 * Nearest first, counting the docs beyond the radius: the
		 * condition on that count becomes the window's run condition, so
		 * the read stops at the first doc beyond the radius.
		 */
		wcols = "w.id, w.dist, w.fields, w.ik, w.sk, w.sc";
		appendStringInfo(&c->sql,
						 "SELECT %s FROM (SELECT %s,\n"
						 "      pg_catalog.count(*) FILTER (WHERE %s OPERATOR(pg_catalog.>) $%d)\n"
						 "        OVER (ORDER BY %s) AS beyond\n"
						 "  FROM %s t\n"
						 "  WHERE %s%s) w\n"
						 "  WHERE w.beyond OPERATOR(pg_catalog.<) 1\n"
						 "  ORDER BY %s\n  LIMIT $%d",
						 wcols, cols, dist, radius_p, raw, table, where.data,
						 exclude_pending, branch_order, lim_p);
	}
	else
		appendStringInfo(&c->sql,
						 "SELECT %s\n"
						 "  FROM %s t\n"
						 "  WHERE %s%s\n"
						 "  ORDER BY %s\n  %s",
						 cols, table, where.data, exclude_pending,
						 branch_order, branch_limit);
	if (pending == NULL && q->knn)
		appendStringInfo(&c->sql,
						 ") k\nORDER BY k.dist, k.ik\nLIMIT $%d", lim_p);

	if (pending != NULL)
	{
		char	   *from;
		char	   *row = pending_row(&st, idtype, &from);

		appendStringInfo(&c->sql,
						 ")\nUNION ALL\n("
						 "SELECT %s\n"
						 "  FROM p LEFT JOIN %s b ON p.op OPERATOR(pg_catalog.=) 'u'\n"
						 "      AND b.%s OPERATOR(pg_catalog.=) CAST(p.id AS %s)\n"
						 "%s%s%s"
						 "    CROSS JOIN LATERAL (SELECT %s) t\n"
						 "  WHERE p.op OPERATOR(pg_catalog.<>) 'd' AND %s\n"
						 "  ORDER BY %s\n  %s)\n"
						 ") u\nORDER BY %s\nLIMIT $%d",
						 cols, table,
						 quote_identifier(FtcColumnName(&st, info->idattno)),
						 idtype,
						 from ? "    CROSS JOIN LATERAL " : "",
						 from ? from : "", from ? "\n" : "",
						 row, pwhere.data, branch_order, branch_limit,
						 union_order, lim_p);
	}

	appendStringInfo(&c->sql, ") s\nORDER BY %s\nLIMIT $%d OFFSET $%d",
					 final_order,
					 FtcAddParam(c, INT8OID, Int64GetDatum(num)),
					 FtcAddParam(c, INT8OID, Int64GetDatum(offset)));
	return c;
}

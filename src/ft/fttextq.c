/*-------------------------------------------------------------------------
 *
 * fttextq.c
 *	  The ft query compiler's full-text terms: TEXT fields, tsquery text,
 *	  SLOP / INORDER conditions, $weight rank groups and lexeme matches.
 *
 * src/ft/fttextq.c
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
 * Full-text terms
 *
 * The TEXT fields of an index (FtLoadFieldOptions) are searched through
 *   pg_catalog.to_tsvector(<language>, COALESCE(CAST(t.f1 AS text), '')
 *							  || ' ' || COALESCE(CAST(t.f2 AS text), ''))
 * over all of them (the expression of the GIN index ft.create builds), or
 * over the fields a term names.  Words, phrases and prefixes become one
 * tsquery a subtree (to_tsquery normalises them like the documents);
 * suffix, infix, pattern and fuzzy terms match the lexemes of the
 * 'simple' configuration (lower-cased, not stemmed) one by one.
 * ---------------------------------------------------------------------
 */

/* The TEXT fields a term searches, in the index's order; checked */
static List *
text_fields_of(CompileState *st, FtNode *n)
{
	ListCell   *lc;
	List	   *result = NIL;

	if (st->info->text_fields == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("full-text term%s needs TEXT fields, and index \"%s\" has none",
						FtcAtChar(n->location), st->info->indexname),
				 errhint("Give them with ft.create(..., text_fields => '{title, body}') or ft.alter.")));
	if (n->text_fields == NIL)
		return st->info->text_fields;
	foreach(lc, n->text_fields)
	{
		char	   *f = lfirst(lc);

		if (!FtcNameInList(st->info->text_fields, f))
		{
			(void) FtcFindColumn(st, f, n->location);
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("field \"%s\"%s is not a TEXT field of index \"%s\"",
							f, FtcAtChar(n->location), st->info->indexname),
					 errhint("A text term needs a TEXT field; a tag filter is written @%s:{...}.", f)));
		}
	}
	foreach(lc, st->info->text_fields)
		if (FtcNameInList(n->text_fields, lfirst(lc)))
			result = lappend(result, lfirst(lc));
	return result;
}

/* The text of fields, as one string: COALESCE(...) || ' ' || ... */
static char *
text_source(CompileState *st, List *fields)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, fields)
	{
		if (lc != list_head(fields))
			appendStringInfoString(&buf, " OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) ");
		appendStringInfo(&buf, "COALESCE(CAST(%s AS pg_catalog.text), '')",
						 FtcColumnRef(st, FtcFindColumn(st, lfirst(lc), 0)));
	}
	return buf.data;
}

char *
FtcTsvectorExpr(CompileState *st, List *fields)
{
	return psprintf("pg_catalog.to_tsvector(%s, %s)", st->cfg,
					text_source(st, fields));
}

bool
FtcSameFields(List *a, List *b)
{
	ListCell   *la;
	ListCell   *lb;

	if (list_length(a) != list_length(b))
		return false;
	forboth(la, a, lb, b)
		if (strcmp(lfirst(la), lfirst(lb)) != 0)
			return false;
	return true;
}

/* A lexeme in tsquery syntax: 'word' ('' and \\ doubled), :* for prefix */
static void
append_lexeme(StringInfo buf, const char *w, bool prefix)
{
	appendStringInfoChar(buf, '\'');
	for (; *w; w++)
	{
		if (*w == '\'' || *w == '\\')
			appendStringInfoChar(buf, *w);
		appendStringInfoChar(buf, *w);
	}
	appendStringInfoChar(buf, '\'');
	if (prefix)
		appendStringInfoString(buf, ":*");
}

/*
 * Is n a prefix term of fewer than 2 characters ("t*")?  RediSearch
 * expands no prefix shorter than its MINPREFIX (2): the term matches
 * nothing.
 */
static bool
short_prefix(CompileState *st, FtNode *n)
{
	return n->kind == FT_NODE_TEXT && n->text_kind == FT_TEXT_WORD &&
		n->term.wild == FT_WILD_PREFIX &&
		pg_mbstrlen(FtcTermText(st, &n->term)) < 2;
}

/* Is n a word or prefix, or an OR of them (what SLOP / INORDER place)? */
static bool
near_placeable(FtNode *n)
{
	ListCell   *lc;

	if (n->kind == FT_NODE_TEXT)
		return n->text_kind == FT_TEXT_WORD &&
			(n->term.wild & ~FT_WILD_PREFIX) == 0;
	if (n->kind != FT_NODE_OR)
		return false;
	foreach(lc, n->args)
	{
		if (!near_placeable(lfirst(lc)))
			return false;
	}
	return true;
}

/*
 * SLOP / INORDER (the query's, or an AND's $slop / $inorder) on the AND n:
 * the condition that its text terms occur within slop words of each
 * other (and in query order with inorder), ft._text_near over their
 * tsvector positions; NULL when n has fewer than two text terms.  As in
 * RediSearch, tags, ranges, negations and optional terms are not placed,
 * and a nested group is placed by its own condition; a phrase, fuzzy,
 * suffix, infix or pattern term, or terms over different TEXT fields,
 * cannot be placed and are refused.
 */
char *
FtcNearCondition(CompileState *st, FtNode *n)
{
	bool		has_near = n->has_near || st->q->has_near;
	int			slop = n->has_near ? n->slop : st->q->slop;
	bool		inorder = n->has_near ? n->inorder : st->q->inorder;
	List	   *fields = NIL;
	StringInfoData arr;
	int			nterms = 0;
	ListCell   *lc;

	if (!has_near || n->kind != FT_NODE_AND)
		return NULL;
	initStringInfo(&arr);
	foreach(lc, n->args)
	{
		FtNode	   *c = lfirst(lc);
		char	   *tq;
		int			pno;

		if (c->optional || c->kind == FT_NODE_NOT || c->kind == FT_NODE_AND ||
			!FtcHasTextTerm(c) || c == st->stop_node)
			continue;
		if (!near_placeable(c))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("SLOP / INORDER cannot place the term at character %d",
							c->location),
					 errdetail("They place words and prefixes, and ORs of them; not phrases, fuzzy, suffix, infix or pattern terms.")));
		tq = FtcTextTsquery(st, c, &fields);
		if (tq == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("SLOP / INORDER cannot place the term at character %d",
							c->location),
					 errdetail("The terms they place must be over the same TEXT fields.")));
		pno = FtcAddParam(st->c, TEXTOID, CStringGetTextDatum(tq));
		appendStringInfo(&arr, "%spg_catalog.to_tsquery(%s, $%d)",
						 nterms > 0 ? ", " : "", st->cfg, pno);
		nterms++;
	}
	if (nterms < 2)
		return NULL;
	return psprintf("ft._text_near(%s, ARRAY[%s], %d, %s)",
					FtcTsvectorExpr(st, fields), arr.data, slop,
					inorder ? "true" : "false");
}

/*
 * The tsquery text of n if the whole subtree is words, phrases and
 * prefixes over one set of fields (returned through *fields), combined
 * with AND, OR and NOT, none optional; NULL otherwise.
 */
char *
FtcTextTsquery(CompileState *st, FtNode *n, List **fields)
{
	StringInfoData buf;
	ListCell   *lc;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (n->optional)
		return NULL;
	switch (n->kind)
	{
		case FT_NODE_TEXT:
			{
				List	   *f = text_fields_of(st, n);

				if (*fields != NIL && !FtcSameFields(*fields, f))
					return NULL;
				if (short_prefix(st, n))
					return NULL;
				if (n->text_kind == FT_TEXT_WORD &&
					(n->term.wild & ~FT_WILD_PREFIX) == 0)
				{
					initStringInfo(&buf);
					append_lexeme(&buf, FtcTermText(st, &n->term),
								  (n->term.wild & FT_WILD_PREFIX) != 0);
				}
				else if (n->text_kind == FT_TEXT_PHRASE)
				{
					initStringInfo(&buf);
					appendStringInfoChar(&buf, '(');
					foreach(lc, n->words)
					{
						FtValue    *w = lfirst(lc);

						if (lc != list_head(n->words))
							appendStringInfoString(&buf, " <-> ");
						append_lexeme(&buf, w->literal,
									  (w->wild & FT_WILD_PREFIX) != 0);
					}
					appendStringInfoChar(&buf, ')');
				}
				else
					return NULL;
				*fields = f;
				return buf.data;
			}
		case FT_NODE_AND:
		case FT_NODE_OR:
			initStringInfo(&buf);
			appendStringInfoChar(&buf, '(');
			foreach(lc, n->args)
			{
				char	   *sub = FtcTextTsquery(st, lfirst(lc), fields);

				if (sub == NULL)
					return NULL;
				if (lc != list_head(n->args))
					appendStringInfoString(&buf, n->kind == FT_NODE_AND ? " & " : " | ");
				appendStringInfoString(&buf, sub);
			}
			appendStringInfoChar(&buf, ')');
			return buf.data;
		case FT_NODE_NOT:
			{
				char	   *sub = FtcTextTsquery(st, linitial(n->args), fields);

				return sub ? psprintf("!%s", sub) : NULL;
			}
		default:
			return NULL;
	}
}

/* Does the subtree carry a $weight? */
bool
FtcHasWeight(FtNode *n)
{
	ListCell   *lc;

	check_stack_depth();
	if (n->has_weight)
		return true;
	foreach(lc, n->args)
	{
		if (FtcHasWeight(lfirst(lc)))
			return true;
	}
	return false;
}

/* With $weight: add the term tq over fields, of weight w, to its group */
static void
add_rank_group_term(CompileState *st, const char *tq, List *fields, double w)
{
	ListCell   *lc;
	RankGroup  *g = NULL;

	foreach(lc, st->rank_groups)
	{
		RankGroup  *c = lfirst(lc);

		if (c->weight == w && FtcSameFields(c->fields, fields))
		{
			g = c;
			break;
		}
	}
	if (g == NULL)
	{
		g = palloc0(sizeof(RankGroup));
		g->fields = fields;
		g->weight = w;
		initStringInfo(&g->q);
		st->rank_groups = lappend(st->rank_groups, g);
	}
	if (g->q.len > 0)
		appendStringInfoString(&g->q, " | ");
	appendStringInfoString(&g->q, tq);
}

/*
 * Add the positive text terms of n to the tsquery the score ranks by; w
 * is the product of the $weights of n's ancestors (used when the query
 * has weights: st->weighted).
 */
void
FtcCollectRankTerms(CompileState *st, FtNode *n, double w)
{
	ListCell   *lc;
	char	   *tq;
	List	   *fields = NIL;

	check_stack_depth();
	if (n->has_weight)
	{
		double		nw = FtcValueFloat8(st, &n->weight, "a weight");

		if (nw < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("$weight%s must not be negative", FtcAtChar(n->location))));
		w *= nw;
	}
	switch (n->kind)
	{
		case FT_NODE_AND:
		case FT_NODE_OR:
			foreach(lc, n->args)
				FtcCollectRankTerms(st, lfirst(lc), w);
			break;
		case FT_NODE_TEXT:
			{
				bool		opt = n->optional;

				n->optional = false;
				tq = FtcTextTsquery(st, n, &fields);
				n->optional = opt;
				if (tq == NULL)
					break;
				if (st->weighted)
				{
					add_rank_group_term(st, tq, fields, w);
					break;
				}
				if (st->rankq.len > 0)
					appendStringInfoString(&st->rankq, " | ");
				appendStringInfoString(&st->rankq, tq);
				break;
			}
		default:
			break;
	}
}

/* Does the subtree have a full-text term? */
bool
FtcHasTextTerm(FtNode *n)
{
	ListCell   *lc;

	check_stack_depth();
	if (n->kind == FT_NODE_TEXT)
		return true;
	foreach(lc, n->args)
		if (FtcHasTextTerm(lfirst(lc)))
			return true;
	return false;
}

/* The schema of an installed extension, or NULL */
static char *
extension_schema(const char *extname)
{
	Oid			extoid = get_extension_oid(extname, true);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	if (!OidIsValid(extoid))
		return NULL;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return OidIsValid(nsp) ? get_namespace_name(nsp) : NULL;
}

/* A text term that tsquery cannot say: suffix, infix, pattern, fuzzy */
void
FtcCompileLexemeMatch(CompileState *st, FtNode *n, StringInfo buf)
{
	List	   *fields = text_fields_of(st, n);
	char	   *lexemes;
	char	   *term = FtcLowerText(FtcTermText(st, &n->term));

	if (short_prefix(st, n))
	{
		appendStringInfoString(buf, "false");
		return;
	}
	lexemes = psprintf("pg_catalog.unnest(pg_catalog.tsvector_to_array(pg_catalog.to_tsvector('pg_catalog.simple', %s))) l(w)",
					   text_source(st, fields));
	if (n->text_kind == FT_TEXT_FUZZY)
	{
		char	   *fsm = extension_schema("fuzzystrmatch");
		char	   *trgm = extension_schema("pg_trgm");

		if (fsm != NULL)
			appendStringInfo(buf,
							 "(EXISTS (SELECT FROM %s WHERE %s.levenshtein(l.w, $%d) OPERATOR(pg_catalog.<=) %d))",
							 lexemes, quote_identifier(fsm),
							 FtcAddParam(st->c, TEXTOID, CStringGetTextDatum(term)),
							 n->fuzzy);
		else if (trgm != NULL)
			appendStringInfo(buf,
							 "(EXISTS (SELECT FROM %s WHERE l.w OPERATOR(%s.%%) $%d))",
							 lexemes, quote_identifier(trgm),
							 FtcAddParam(st->c, TEXTOID, CStringGetTextDatum(term)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("fuzzy term%s needs the fuzzystrmatch or pg_trgm extension",
							FtcAtChar(n->location)),
					 errhint("Run CREATE EXTENSION fuzzystrmatch (Levenshtein distance, as RediSearch) or CREATE EXTENSION pg_trgm (trigram similarity).")));
		return;
	}
	appendStringInfo(buf,
					 "(EXISTS (SELECT FROM %s WHERE l.w OPERATOR(pg_catalog.~~) $%d))",
					 lexemes,
					 FtcAddParam(st->c, TEXTOID,
							   CStringGetTextDatum(FtcLikePattern(term, n->term.wild))));
}

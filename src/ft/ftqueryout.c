/*-------------------------------------------------------------------------
 *
 * ftqueryout.c
 *	  The parse tree of an ft query as text (ft.explain), in the manner of
 *	  RediSearch's FT.EXPLAIN: one node a line, children indented.
 *
 * src/ft/ftqueryout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "ft/ftquery.h"

static void
append_value(StringInfo buf, FtValue *v)
{
	if (v->wild & FT_WILD_PATTERN)
		appendStringInfoString(buf, "w'");
	if (v->wild & FT_WILD_SUFFIX)
		appendStringInfoChar(buf, '*');
	if (v->parts)
	{
		ListCell   *lc;

		foreach(lc, v->parts)
			append_value(buf, lfirst(lc));
	}
	else if (v->param)
		appendStringInfo(buf, "%s$%s", v->negate ? "-" : "", v->param);
	else
		appendStringInfoString(buf, v->literal ? v->literal : "");
	if (v->wild & FT_WILD_PREFIX)
		appendStringInfoChar(buf, '*');
	if (v->wild & FT_WILD_PATTERN)
		appendStringInfoChar(buf, '\'');
}

static bool
has_value(FtValue *v)
{
	return v->param != NULL || v->literal != NULL;
}

static void
append_bound(StringInfo buf, FtBound *b)
{
	if (b->inf != 0)
		appendStringInfoString(buf, b->inf < 0 ? "-inf" : "+inf");
	else
		append_value(buf, &b->value);
}

static void
node_to_string(StringInfo buf, FtNode *n, int indent)
{
	ListCell   *lc;

	appendStringInfoSpaces(buf, indent);
	switch (n->kind)
	{
		case FT_NODE_ALL:
			appendStringInfoString(buf, "<WILDCARD>\n");
			break;
		case FT_NODE_AND:
		case FT_NODE_OR:
		case FT_NODE_NOT:
			appendStringInfoString(buf, n->kind == FT_NODE_AND ? "INTERSECT {\n" :
								   n->kind == FT_NODE_OR ? "UNION {\n" : "NOT {\n");
			foreach(lc, n->args)
				node_to_string(buf, lfirst(lc), indent + 2);
			appendStringInfoSpaces(buf, indent);
			appendStringInfoString(buf, "}\n");
			break;
		case FT_NODE_TAG:
			appendStringInfo(buf, "TAG:@%s {", n->field);
			foreach(lc, n->tags)
			{
				if (lc != list_head(n->tags))
					appendStringInfoString(buf, " | ");
				append_value(buf, lfirst(lc));
			}
			appendStringInfoString(buf, "}\n");
			break;
		case FT_NODE_NUMERIC:
			appendStringInfoString(buf, "NUMERIC {");
			append_bound(buf, &n->lo);
			appendStringInfo(buf, " %s @%s %s ", n->lo.exclusive ? "<" : "<=",
							 n->field, n->hi.exclusive ? "<" : "<=");
			append_bound(buf, &n->hi);
			appendStringInfoString(buf, "}\n");
			break;
		case FT_NODE_VECRANGE:
			appendStringInfo(buf, "VECTOR_RANGE {@%s ", n->field);
			append_value(buf, &n->vector);
			appendStringInfoString(buf, " radius ");
			append_value(buf, &n->radius);
			if (has_value(&n->yield_as))
			{
				appendStringInfoString(buf, " AS ");
				append_value(buf, &n->yield_as);
			}
			appendStringInfoString(buf, "}\n");
			break;
		case FT_NODE_TEXT:
			appendStringInfoString(buf, n->optional ? "OPTIONAL " : "");
			if (n->text_fields != NIL)
			{
				appendStringInfoChar(buf, '@');
				foreach(lc, n->text_fields)
					appendStringInfo(buf, "%s%s", lc == list_head(n->text_fields) ? "" : "|",
									 (char *) lfirst(lc));
				appendStringInfoChar(buf, ':');
			}
			switch (n->text_kind)
			{
				case FT_TEXT_WORD:
				case FT_TEXT_PATTERN:
					appendStringInfoString(buf, n->term.wild ? "WILDCARD {" : "TERM {");
					append_value(buf, &n->term);
					break;
				case FT_TEXT_FUZZY:
					appendStringInfo(buf, "FUZZY %d {", n->fuzzy);
					append_value(buf, &n->term);
					break;
				case FT_TEXT_PHRASE:
					appendStringInfoString(buf, "EXACT {");
					foreach(lc, n->words)
					{
						if (lc != list_head(n->words))
							appendStringInfoChar(buf, ' ');
						append_value(buf, lfirst(lc));
					}
					break;
			}
			appendStringInfoString(buf, "}\n");
			break;
	}
}

/*
 * FtQueryToString: the parsed query as an indented tree, one node a line
 * (the first part of ft.explain's output).
 */
char *
FtQueryToString(FtQuery *q)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	if (q->knn)
	{
		appendStringInfo(&buf, "KNN {k ");
		append_value(&buf, &q->knn->k);
		appendStringInfo(&buf, " @%s ", q->knn->field);
		append_value(&buf, &q->knn->vector);
		if (q->knn->has_ef)
		{
			appendStringInfoString(&buf, " EF_RUNTIME ");
			append_value(&buf, &q->knn->ef);
		}
		if (q->knn->policy != FT_HYBRID_DEFAULT)
			appendStringInfo(&buf, " HYBRID_POLICY %s",
							 q->knn->policy == FT_HYBRID_ADHOC_BF ? "ADHOC_BF" : "BATCHES");
		if (q->knn->has_batch_size)
		{
			appendStringInfoString(&buf, " BATCH_SIZE ");
			append_value(&buf, &q->knn->batch_size);
		}
		if (has_value(&q->knn->alias))
		{
			appendStringInfoString(&buf, " AS ");
			append_value(&buf, &q->knn->alias);
		}
		appendStringInfoString(&buf, "}\n");
	}
	if (q->filter)
		node_to_string(&buf, q->filter, q->knn ? 2 : 0);
	else
		appendStringInfoString(&buf, q->knn ? "  <WILDCARD>\n" : "<WILDCARD>\n");
	if (q->has_limit)
	{
		appendStringInfoString(&buf, "LIMIT ");
		append_value(&buf, &q->offset);
		appendStringInfoChar(&buf, ' ');
		append_value(&buf, &q->num);
		appendStringInfoChar(&buf, '\n');
	}
	if (q->has_return)
	{
		appendStringInfo(&buf, "RETURN %d", list_length(q->returns));
		foreach(lc, q->returns)
		{
			FtReturnField *f = lfirst(lc);

			appendStringInfo(&buf, " %s", f->field);
			if (f->alias)
				appendStringInfo(&buf, " AS %s", f->alias);
		}
		appendStringInfoChar(&buf, '\n');
	}
	if (q->has_sortby)
		appendStringInfo(&buf, "SORTBY %s %s\n", q->sortby,
						 q->sort_desc ? "DESC" : "ASC");
	if (q->withscores)
		appendStringInfoString(&buf, "WITHSCORES\n");
	if (q->scorer)
		appendStringInfo(&buf, "SCORER %s\n", q->scorer);
	if (buf.len > 0 && buf.data[buf.len - 1] == '\n')
		buf.data[--buf.len] = '\0';
	return buf.data;
}

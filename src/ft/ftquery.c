/*-------------------------------------------------------------------------
 *
 * ftquery.c
 *	  The ft query dialect: a subset of RediSearch's DIALECT 2.  Parses a
 *	  query (or ft.search's filter) into an FtQuery tree.
 *
 * Grammar (keywords are case-insensitive, white space separates tokens):
 *
 *	query	 := expr ['=>' knn [attrs]] option*
 *	expr	 := and ('|' and)*						OR, binds loosest
 *	and		 := unary unary*						AND by juxtaposition
 *	unary	 := '-' unary | '(' expr ')' | '*' | field
 *	field	 := '@' name ':' '{' tag ('|' tag)* '}'	tag filter
 *			  | '@' name ':' '[' bound [','] bound ']'	numeric range
 *			  | '@' name ':' '[' VECTOR_RANGE num $vec ']' [attrs]
 *	bound	 := ['('] (number | -inf | +inf | inf | $param)
 *	tag		 := text with \-escapes | "quoted" | $param
 *	knn		 := '[' KNN (int | $param) '@' name $vec
 *				(EF_RUNTIME (int | $param) | AS name)* ']'
 *	attrs	 := '=>' '{' ($YIELD_DISTANCE_AS | $EF_RUNTIME) ':' value
 *				[';' ...] '}'
 *	option	 := LIMIT off num | RETURN n field [AS name]... |
 *				SORTBY field [ASC | DESC] | DIALECT 2
 *
 * As in DIALECT 2, AND binds tighter than OR: "a b | c d" is
 * "(a b) | (c d)".  The filter of ft.search is an expr alone (no KNN, no
 * options, no parameters).
 *
 * Errors: a syntax error says at which character (1-based, counted in
 * characters, not bytes) and what was expected, with
 * ERRCODE_SYNTAX_ERROR; the message carries both, so that it survives
 * \set VERBOSITY terse.
 *
 * The compiler (FtCompile, in ftcompile.c) checks every field against the
 * table's columns, quotes column names with quote_identifier() and binds
 * every value as a parameter.
 *
 * src/ft/ftquery.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "mb/pg_wchar.h"

#include "ft/ftquery.h"

/* ---------------------------------------------------------------------
 * Parser
 * ---------------------------------------------------------------------
 */

typedef struct FtParser
{
	const char *str;			/* the whole query */
	int			len;			/* its length in bytes */
	int			pos;			/* byte offset of the next character */
	int			depth;			/* nesting of parentheses and negations */
	bool		filter_only;	/* parsing ft.search's filter */
	const char *what;			/* "query" or "filter", for messages */
} FtParser;

static FtNode *parse_or(FtParser *p);

/* 1-based character position of byte offset off */
static int
char_position(FtParser *p, int off)
{
	return pg_mbstrlen_with_len(p->str, off) + 1;
}

static bool
at_end(FtParser *p)
{
	return p->pos >= p->len;
}

static char
peek(FtParser *p)
{
	return at_end(p) ? '\0' : p->str[p->pos];
}

static void
skip_ws(FtParser *p)
{
	while (!at_end(p) && isspace((unsigned char) p->str[p->pos]))
		p->pos++;
}

static bool
is_name_char(char c)
{
	return isalnum((unsigned char) c) || c == '_' || IS_HIGHBIT_SET(c);
}

/*
 * What stands at byte offset off, for an error message: "end of query",
 * or the token there in double quotes (a word, or one character).
 */
static char *
found_at(FtParser *p, int off)
{
	int			end = off;

	if (off >= p->len)
		return psprintf("end of %s", p->what);
	if (p->str[end] == '$' || p->str[end] == '@')
		end++;
	while (end < p->len && end - off < 24 &&
		   (is_name_char(p->str[end]) || p->str[end] == '.'))
		end += pg_mblen(p->str + end);
	if (end == off)
		end += pg_mblen(p->str + off);
	if (end > p->len)
		end = p->len;
	return psprintf("\"%s\"", pnstrdup(p->str + off, end - off));
}

/*
 * syntax_error: report a syntax error at byte offset off, saying what was
 * expected there and what was found.
 */
static void
pg_attribute_noreturn()
syntax_error(FtParser *p, int off, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("syntax error at character %d of the %s: expected %s, found %s",
					char_position(p, off), p->what, expected,
					found_at(p, off))));
}

/* Consume the character c (after white space), or report what was expected */
static void
expect_char(FtParser *p, char c, const char *expected)
{
	skip_ws(p);
	if (peek(p) != c)
		syntax_error(p, p->pos, expected);
	p->pos++;
}

/* True, consuming it, if the next token (after white space) is s */
static bool
accept_str(FtParser *p, const char *s)
{
	int			n = strlen(s);

	skip_ws(p);
	if (p->len - p->pos >= n && strncmp(p->str + p->pos, s, n) == 0)
	{
		p->pos += n;
		return true;
	}
	return false;
}

/*
 * Read a keyword-like word ([A-Za-z_][A-Za-z0-9_]*), returning it or NULL
 * if there is none; does not consume anything when it returns NULL.
 */
static char *
read_word(FtParser *p)
{
	int			start;

	skip_ws(p);
	start = p->pos;
	if (at_end(p) ||
		!(isalpha((unsigned char) peek(p)) || peek(p) == '_'))
		return NULL;
	while (!at_end(p) && (isalnum((unsigned char) peek(p)) || peek(p) == '_'))
		p->pos++;
	return pnstrdup(p->str + start, p->pos - start);
}

/* True, consuming it, if the next word is kw (case-insensitive) */
static bool
accept_keyword(FtParser *p, const char *kw)
{
	int			save = p->pos;
	char	   *w = read_word(p);

	if (w != NULL && pg_strcasecmp(w, kw) == 0)
		return true;
	p->pos = save;
	return false;
}

/*
 * Read a name: a field name after '@', a RETURN or SORTBY field, an AS
 * alias.  Letters, digits, '_' and non-ASCII characters; a backslash makes
 * the next character part of the name whatever it is, so any column name
 * can be written.  Reports an error naming what if there is none.
 */
static char *
read_name(FtParser *p, const char *what)
{
	StringInfoData buf;

	skip_ws(p);
	initStringInfo(&buf);
	while (!at_end(p))
	{
		char		c = peek(p);
		int			n;

		if (c == '\\' && p->pos + 1 < p->len)
		{
			p->pos++;
			n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
			appendBinaryStringInfo(&buf, p->str + p->pos, n);
			p->pos += n;
		}
		else if (is_name_char(c))
		{
			n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
			appendBinaryStringInfo(&buf, p->str + p->pos, n);
			p->pos += n;
		}
		else
			break;
	}
	if (buf.len == 0)
		syntax_error(p, p->pos, what);
	return buf.data;
}

/* Read $name into v (the caller has seen the '$') */
static void
read_param(FtParser *p, FtValue *v)
{
	int			start = p->pos;

	if (p->filter_only)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("parameters cannot be used in the filter of ft.search (character %d)",
						char_position(p, start)),
				 errhint("Write the value itself, or use ft.query with params.")));
	p->pos++;					/* the '$' */
	v->location = char_position(p, start);
	v->literal = NULL;
	v->param = NULL;
	while (!at_end(p) && (isalnum((unsigned char) peek(p)) || peek(p) == '_'))
		p->pos++;
	if (p->pos == start + 1)
		syntax_error(p, p->pos, "a parameter name after \"$\"");
	v->param = pnstrdup(p->str + start + 1, p->pos - start - 1);
}

/*
 * Read a number literal ([+-]digits[.digits][e[+-]digits]) into v, or a
 * $param.  With allow_inf, also -inf, +inf and inf, returned through
 * *inf (-1 or +1; 0 for a value).
 */
static void
read_number(FtParser *p, FtValue *v, const char *expected, bool allow_inf,
			int *inf)
{
	int			start;
	int			digits = 0;

	skip_ws(p);
	start = p->pos;
	if (inf)
		*inf = 0;
	if (peek(p) == '$')
	{
		read_param(p, v);
		return;
	}
	if (peek(p) == '+' || peek(p) == '-')
		p->pos++;
	if (allow_inf && p->len - p->pos >= 3 &&
		pg_strncasecmp(p->str + p->pos, "inf", 3) == 0 &&
		(p->pos + 3 >= p->len || !is_name_char(p->str[p->pos + 3])))
	{
		p->pos += 3;
		*inf = (p->str[start] == '-') ? -1 : 1;
		v->param = NULL;
		v->literal = NULL;
		v->location = char_position(p, start);
		return;
	}
	while (isdigit((unsigned char) peek(p)))
		p->pos++, digits++;
	if (peek(p) == '.')
	{
		p->pos++;
		while (isdigit((unsigned char) peek(p)))
			p->pos++, digits++;
	}
	if (digits == 0)
	{
		p->pos = start;
		syntax_error(p, start, expected);
	}
	if (peek(p) == 'e' || peek(p) == 'E')
	{
		int			save = p->pos;

		p->pos++;
		if (peek(p) == '+' || peek(p) == '-')
			p->pos++;
		if (!isdigit((unsigned char) peek(p)))
			p->pos = save;
		while (isdigit((unsigned char) peek(p)))
			p->pos++;
	}
	if (!at_end(p) && is_name_char(peek(p)))
		syntax_error(p, start, expected);
	v->param = NULL;
	v->literal = pnstrdup(p->str + start, p->pos - start);
	v->location = char_position(p, start);
}

/* Read a non-negative integer literal or a $param */
static void
read_integer(FtParser *p, FtValue *v, const char *expected)
{
	int			start;

	skip_ws(p);
	start = p->pos;
	if (peek(p) == '$')
	{
		read_param(p, v);
		return;
	}
	while (isdigit((unsigned char) peek(p)))
		p->pos++;
	if (p->pos == start || (!at_end(p) && is_name_char(peek(p))))
	{
		p->pos = start;
		syntax_error(p, start, expected);
	}
	v->param = NULL;
	v->literal = pnstrdup(p->str + start, p->pos - start);
	v->location = char_position(p, start);
}

/* A literal integer (RETURN's count, DIALECT): its value */
static int
read_small_int(FtParser *p, const char *expected)
{
	FtValue		v;
	int			start;
	long		n;

	skip_ws(p);
	start = p->pos;
	if (peek(p) == '$')
		syntax_error(p, start, expected);
	read_integer(p, &v, expected);
	errno = 0;
	n = strtol(v.literal, NULL, 10);
	if (errno != 0 || n > 100000)
		syntax_error(p, start, expected);
	return (int) n;
}

/*
 * One tag of @f:{...}: a $param, a "quoted string" or bare text up to an
 * unescaped '|' or '}', white space around it dropped.
 */
static FtValue *
read_tag(FtParser *p)
{
	FtValue    *v = palloc0(sizeof(FtValue));
	StringInfoData buf;
	int			start;

	skip_ws(p);
	start = p->pos;
	v->location = char_position(p, start);
	if (peek(p) == '$')
	{
		read_param(p, v);
		return v;
	}
	initStringInfo(&buf);
	if (peek(p) == '"')
	{
		p->pos++;
		for (;;)
		{
			int			n;

			if (at_end(p))
				syntax_error(p, p->pos, "a closing \" of the tag");
			if (peek(p) == '"')
			{
				p->pos++;
				break;
			}
			if (peek(p) == '\\' && p->pos + 1 < p->len)
				p->pos++;
			n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
			appendBinaryStringInfo(&buf, p->str + p->pos, n);
			p->pos += n;
		}
	}
	else
	{
		int			keep = 0;	/* length without trailing white space */

		while (!at_end(p) && peek(p) != '|' && peek(p) != '}')
		{
			int			n;
			bool		escaped = false;

			if (peek(p) == '\\' && p->pos + 1 < p->len)
			{
				p->pos++;
				escaped = true;
			}
			n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
			appendBinaryStringInfo(&buf, p->str + p->pos, n);
			if (escaped || !isspace((unsigned char) p->str[p->pos]))
				keep = buf.len;
			p->pos += n;
		}
		buf.len = keep;
		buf.data[keep] = '\0';
		if (buf.len == 0)
			syntax_error(p, start, "a tag value");
	}
	v->literal = buf.data;
	return v;
}

/* attrs after a VECTOR_RANGE or KNN clause: =>{$NAME: value; ...} */
static void
parse_attributes(FtParser *p, char **yield_as, FtValue *ef, bool *has_ef)
{
	expect_char(p, '{', "\"{\" after \"=>\"");
	for (;;)
	{
		int			start;
		char	   *name;

		skip_ws(p);
		start = p->pos;
		if (peek(p) != '$')
			syntax_error(p, start, "an attribute ($YIELD_DISTANCE_AS or $EF_RUNTIME)");
		p->pos++;
		name = read_word(p);
		if (name != NULL && pg_strcasecmp(name, "YIELD_DISTANCE_AS") == 0)
		{
			expect_char(p, ':', "\":\"");
			*yield_as = read_name(p, "a name for the distance");
		}
		else if (name != NULL && ef != NULL &&
				 pg_strcasecmp(name, "EF_RUNTIME") == 0)
		{
			expect_char(p, ':', "\":\"");
			read_integer(p, ef, "an integer or a $parameter");
			*has_ef = true;
		}
		else
			syntax_error(p, start, ef != NULL ?
						 "an attribute ($YIELD_DISTANCE_AS or $EF_RUNTIME)" :
						 "an attribute ($YIELD_DISTANCE_AS)");
		skip_ws(p);
		if (peek(p) == ';')
		{
			p->pos++;
			skip_ws(p);
			if (peek(p) == '}')
				break;
			continue;
		}
		if (peek(p) == '}')
			break;
		syntax_error(p, p->pos, "\";\" or \"}\"");
	}
	p->pos++;					/* the '}' */
}

/* @name:{...} or @name:[...], the '@' not yet consumed */
static FtNode *
parse_field(FtParser *p)
{
	FtNode	   *n = palloc0(sizeof(FtNode));
	int			start = p->pos;

	n->location = char_position(p, start);
	p->pos++;					/* the '@' */
	n->field_location = char_position(p, p->pos);
	n->field = read_name(p, "a field name after \"@\"");
	expect_char(p, ':', "\":\" after the field name");
	skip_ws(p);
	if (peek(p) == '{')
	{
		p->pos++;
		n->kind = FT_NODE_TAG;
		for (;;)
		{
			n->tags = lappend(n->tags, read_tag(p));
			skip_ws(p);
			if (peek(p) == '|')
			{
				p->pos++;
				continue;
			}
			if (peek(p) == '}')
			{
				p->pos++;
				break;
			}
			syntax_error(p, p->pos, "\"|\" or \"}\"");
		}
	}
	else if (peek(p) == '[')
	{
		p->pos++;
		if (accept_keyword(p, "VECTOR_RANGE"))
		{
			n->kind = FT_NODE_VECRANGE;
			read_number(p, &n->radius, "a radius (a number or a $parameter)",
						false, NULL);
			skip_ws(p);
			if (peek(p) != '$')
				syntax_error(p, p->pos, "a $parameter holding the query vector");
			read_param(p, &n->vector);
			expect_char(p, ']', "\"]\"");
			if (accept_str(p, "=>"))
				parse_attributes(p, &n->yield_as, NULL, NULL);
		}
		else
		{
			n->kind = FT_NODE_NUMERIC;
			skip_ws(p);
			if (peek(p) == '(')
			{
				p->pos++;
				n->lo.exclusive = true;
			}
			read_number(p, &n->lo.value,
						"a number, -inf, +inf, a $parameter or VECTOR_RANGE",
						true, &n->lo.inf);
			skip_ws(p);
			if (peek(p) == ',')
				p->pos++;
			skip_ws(p);
			if (peek(p) == '(')
			{
				p->pos++;
				n->hi.exclusive = true;
			}
			read_number(p, &n->hi.value,
						"a number, -inf, +inf or a $parameter",
						true, &n->hi.inf);
			expect_char(p, ']', "\"]\"");
		}
	}
	else
		syntax_error(p, p->pos,
					 "\"{\" (a tag filter) or \"[\" (a numeric range or VECTOR_RANGE)");
	return n;
}

static FtNode *
make_node(FtNodeKind kind, int location, List *args)
{
	FtNode	   *n = palloc0(sizeof(FtNode));

	n->kind = kind;
	n->location = location;
	n->args = args;
	return n;
}

static FtNode *
parse_unary(FtParser *p)
{
	FtNode	   *n;
	int			start;

	skip_ws(p);
	start = p->pos;
	if (p->depth >= FT_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s nested too deeply at character %d",
						p->what, char_position(p, start)),
				 errdetail("At most %d levels of parentheses and negations are allowed.",
						   FT_MAX_DEPTH)));
	switch (peek(p))
	{
		case '-':
			p->pos++;
			p->depth++;
			n = make_node(FT_NODE_NOT, char_position(p, start),
						  list_make1(parse_unary(p)));
			p->depth--;
			return n;
		case '(':
			p->pos++;
			p->depth++;
			n = parse_or(p);
			p->depth--;
			expect_char(p, ')', "\")\" or \"|\"");
			return n;
		case '*':
			p->pos++;
			return make_node(FT_NODE_ALL, char_position(p, start), NIL);
		case '@':
			return parse_field(p);
		default:
			syntax_error(p, start,
						 "a query term (@field:{...}, @field:[...], \"(\", \"-\" or \"*\")");
	}
	return NULL;				/* keep compiler quiet */
}

/* Juxtaposed terms: their AND */
static FtNode *
parse_and(FtParser *p)
{
	List	   *terms = NIL;
	int			location;

	skip_ws(p);
	location = char_position(p, p->pos);
	terms = lappend(terms, parse_unary(p));
	for (;;)
	{
		char		c;

		skip_ws(p);
		c = peek(p);
		if (c != '@' && c != '(' && c != '-' && c != '*')
			break;
		terms = lappend(terms, parse_unary(p));
	}
	if (list_length(terms) == 1)
		return linitial(terms);
	return make_node(FT_NODE_AND, location, terms);
}

static FtNode *
parse_or(FtParser *p)
{
	List	   *terms = NIL;
	int			location;

	skip_ws(p);
	location = char_position(p, p->pos);
	terms = lappend(terms, parse_and(p));
	for (;;)
	{
		skip_ws(p);
		if (peek(p) != '|')
			break;
		p->pos++;
		terms = lappend(terms, parse_and(p));
	}
	if (list_length(terms) == 1)
		return linitial(terms);
	return make_node(FT_NODE_OR, location, terms);
}

/* [KNN k @field $vec EF_RUNTIME ef AS alias], after the "=>" */
static FtKnn *
parse_knn(FtParser *p)
{
	FtKnn	   *knn = palloc0(sizeof(FtKnn));

	skip_ws(p);
	knn->location = char_position(p, p->pos);
	expect_char(p, '[', "\"[\" after \"=>\"");
	if (!accept_keyword(p, "KNN"))
	{
		skip_ws(p);
		syntax_error(p, p->pos, "KNN");
	}
	read_integer(p, &knn->k, "the number of neighbours (an integer or a $parameter)");
	skip_ws(p);
	if (peek(p) != '@')
		syntax_error(p, p->pos, "\"@\" and the vector field");
	p->pos++;
	knn->field_location = char_position(p, p->pos);
	knn->field = read_name(p, "the vector field after \"@\"");
	skip_ws(p);
	if (peek(p) != '$')
		syntax_error(p, p->pos, "a $parameter holding the query vector");
	read_param(p, &knn->vector);
	for (;;)
	{
		skip_ws(p);
		if (peek(p) == ']')
		{
			p->pos++;
			break;
		}
		if (accept_keyword(p, "EF_RUNTIME"))
		{
			read_integer(p, &knn->ef, "an integer or a $parameter after EF_RUNTIME");
			knn->has_ef = true;
		}
		else if (accept_keyword(p, "AS"))
			knn->alias = read_name(p, "a name after AS");
		else
			syntax_error(p, p->pos, "EF_RUNTIME, AS or \"]\"");
	}
	if (accept_str(p, "=>"))
		parse_attributes(p, &knn->alias, &knn->ef, &knn->has_ef);
	return knn;
}

/* A field name in RETURN or SORTBY; a leading '@' is allowed */
static char *
read_option_field(FtParser *p, int *location, const char *what)
{
	skip_ws(p);
	*location = char_position(p, p->pos);
	if (peek(p) == '@')
		p->pos++;
	return read_name(p, what);
}

static void
duplicate_option(FtParser *p, int start, const char *opt)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("%s is given twice (character %d of the %s)",
					opt, char_position(p, start), p->what)));
}

/* LIMIT, RETURN, SORTBY, DIALECT after the query expression */
static void
parse_options(FtParser *p, FtQuery *q)
{
	for (;;)
	{
		int			start;
		char	   *w;

		skip_ws(p);
		if (at_end(p))
			break;
		start = p->pos;
		w = read_word(p);
		if (w == NULL)
			syntax_error(p, start,
						 "end of query or an option (LIMIT, RETURN, SORTBY, DIALECT)");
		if (pg_strcasecmp(w, "LIMIT") == 0)
		{
			if (q->has_limit)
				duplicate_option(p, start, "LIMIT");
			q->has_limit = true;
			read_integer(p, &q->offset, "the offset of LIMIT (an integer or a $parameter)");
			read_integer(p, &q->num, "the count of LIMIT (an integer or a $parameter)");
		}
		else if (pg_strcasecmp(w, "RETURN") == 0)
		{
			int			n;
			int			used = 0;

			if (q->has_return)
				duplicate_option(p, start, "RETURN");
			q->has_return = true;
			n = read_small_int(p, "the number of RETURN arguments");
			while (used < n)
			{
				FtReturnField *f = palloc0(sizeof(FtReturnField));

				f->field = read_option_field(p, &f->location,
											 "a field name to return");
				used++;
				if (used < n && accept_keyword(p, "AS"))
				{
					f->alias = read_name(p, "a name after AS");
					used += 2;
				}
				q->returns = lappend(q->returns, f);
			}
			if (used != n)
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("RETURN %d at character %d does not match its %d arguments",
								n, char_position(p, start), used)));
		}
		else if (pg_strcasecmp(w, "SORTBY") == 0)
		{
			if (q->has_sortby)
				duplicate_option(p, start, "SORTBY");
			q->has_sortby = true;
			q->sortby = read_option_field(p, &q->sortby_location,
										  "a field name after SORTBY");
			if (accept_keyword(p, "DESC"))
				q->sort_desc = true;
			else
				(void) accept_keyword(p, "ASC");
		}
		else if (pg_strcasecmp(w, "DIALECT") == 0)
		{
			int			vstart;

			skip_ws(p);
			vstart = p->pos;
			q->dialect = read_small_int(p, "a dialect number");
			if (q->dialect != 2)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("DIALECT %d at character %d is not supported",
								q->dialect, char_position(p, vstart)),
						 errhint("Only DIALECT 2 is supported.")));
		}
		else if (pg_strcasecmp(w, "PARAMS") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("PARAMS cannot be given in the query text (character %d)",
							char_position(p, start)),
					 errhint("Pass the parameters in the params argument, for example '{\"vec\": [1, 2, 3]}'.")));
		else
			syntax_error(p, start,
						 "end of query or an option (LIMIT, RETURN, SORTBY, DIALECT)");
	}
}

/* The top level of a filter: '*' alone is NULL (every doc) */
static FtNode *
normalize_top(FtNode *n)
{
	if (n != NULL && n->kind == FT_NODE_ALL)
		return NULL;
	return n;
}

/*
 * FtParseQuery: parse an ft.query query string.  Returns the tree; raises
 * ERRCODE_SYNTAX_ERROR on a syntax error.  Parameters are not resolved
 * here (FtCompile does that).
 */
FtQuery *
FtParseQuery(const char *query)
{
	FtParser	p;
	FtQuery    *q = palloc0(sizeof(FtQuery));

	p.str = query;
	p.len = strlen(query);
	p.pos = 0;
	p.depth = 0;
	p.filter_only = false;
	p.what = "query";
	q->dialect = 2;

	skip_ws(&p);
	if (at_end(&p))
		syntax_error(&p, p.pos, "a query (\"*\", @field:... or \"(\")");
	q->filter = normalize_top(parse_or(&p));
	if (accept_str(&p, "=>"))
		q->knn = parse_knn(&p);
	parse_options(&p, q);
	return q;
}

/*
 * FtParseFilter: parse ft.search's filter: an expression of the query
 * dialect alone.  An empty filter or '*' is NULL: every doc.
 */
FtNode *
FtParseFilter(const char *filter)
{
	FtParser	p;
	FtNode	   *n;

	p.str = filter;
	p.len = strlen(filter);
	p.pos = 0;
	p.depth = 0;
	p.filter_only = true;
	p.what = "filter";

	skip_ws(&p);
	if (at_end(&p))
		return NULL;
	n = parse_or(&p);
	skip_ws(&p);
	if (!at_end(&p))
	{
		if (p.len - p.pos >= 2 && strncmp(p.str + p.pos, "=>", 2) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("KNN cannot be used in the filter of ft.search (character %d)",
							char_position(&p, p.pos)),
					 errhint("ft.search does the KNN itself; use ft.query for the full query syntax.")));
		syntax_error(&p, p.pos, "end of filter, \"|\" or a query term");
	}
	return normalize_top(n);
}

/* ---------------------------------------------------------------------
 * The parse tree as text (ft.explain), in the manner of FT.EXPLAIN
 * ---------------------------------------------------------------------
 */

static void
append_value(StringInfo buf, FtValue *v)
{
	if (v->param)
		appendStringInfo(buf, "$%s", v->param);
	else
		appendStringInfoString(buf, v->literal);
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
			if (n->yield_as)
				appendStringInfo(buf, " AS %s", n->yield_as);
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
		if (q->knn->alias)
			appendStringInfo(&buf, " AS %s", q->knn->alias);
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
	if (buf.len > 0 && buf.data[buf.len - 1] == '\n')
		buf.data[--buf.len] = '\0';
	return buf.data;
}

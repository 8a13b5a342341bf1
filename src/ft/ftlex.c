/*-------------------------------------------------------------------------
 *
 * ftlex.c
 *	  The characters and tokens of the ft query dialect, for the grammar
 *	  in ftparse.c: character positions, syntax errors that say where and
 *	  what was expected, the term limit, and the readers of keywords,
 *	  names, $parameters, numbers, bare and quoted text and tags.
 *
 * A reader skips white space first and either consumes its token or
 * reports what was expected there; the Accept and At functions consume
 * nothing when they answer false.  Each takes time linear in what it
 * reads.
 *
 * src/ft/ftlex.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "mb/pg_wchar.h"

#include "ft/ftparse_int.h"

/* segvec.max_query_terms (FtQueryInit defines it): see FtpCountTerm */
int			segvec_max_query_terms = 10000;

/*
 * 1-based character position of byte offset off.  Counts from the offset
 * asked for last time, so that a parse that asks for increasing positions
 * does linear work in all (counting from the start each time made a long
 * query take quadratic time).
 */
int
FtpCharPosition(FtParser *p, int off)
{
	if (off > p->len)
		off = p->len;
	if (off >= p->cache_off)
		p->cache_chars += pg_mbstrlen_with_len(p->str + p->cache_off,
											   off - p->cache_off);
	else
		p->cache_chars -= pg_mbstrlen_with_len(p->str + off,
											   p->cache_off - off);
	p->cache_off = off;
	return p->cache_chars + 1;
}

void
FtpSkipWhiteSpace(FtParser *p)
{
	while (!FtpAtEnd(p) && isspace((unsigned char) p->str[p->pos]))
	{
		/* a query of nothing but white space is long too */
		if ((p->pos & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		p->pos++;
	}
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
		   (FtpIsNameChar(p->str[end]) || p->str[end] == '.'))
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
SegvecNoReturn void
FtpSyntaxError(FtParser *p, int off, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("syntax error at character %d of the %s: expected %s, found %s",
					FtpCharPosition(p, off), p->what, expected,
					found_at(p, off))));
}

/* Report a construct that is valid RediSearch but not supported here */
SegvecNoReturn void
FtpNotSupported(FtParser *p, int off, const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s at character %d of the %s is not supported",
					what, FtpCharPosition(p, off), p->what),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * Count one more term (a tag, a range, a word), checking
 * segvec.max_query_terms, so that the work of one query stays bounded.
 */
void
FtpCountTerm(FtParser *p, int off)
{
	if (++p->nterms > segvec_max_query_terms)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has too many terms at character %d",
						p->what, FtpCharPosition(p, off)),
				 errdetail("At most %d tags, ranges and words are allowed (segvec.max_query_terms).",
						   segvec_max_query_terms)));
}

/* Consume the character c (after white space), or report what was expected */
void
FtpExpectChar(FtParser *p, char c, const char *expected)
{
	FtpSkipWhiteSpace(p);
	if (FtpPeek(p) != c)
		FtpSyntaxError(p, p->pos, expected);
	p->pos++;
}

/* True, consuming it, if the next token (after white space) is s */
bool
FtpAcceptStr(FtParser *p, const char *s)
{
	int			n = strlen(s);

	FtpSkipWhiteSpace(p);
	if (p->len - p->pos >= n && strncmp(p->str + p->pos, s, n) == 0)
	{
		p->pos += n;
		return true;
	}
	return false;
}

/*
 * Read a keyword-like word ([A-Za-z_][A-Za-z0-9_.]*, '.' only with
 * with_dot), returning it or NULL if there is none; does not consume
 * anything when it returns NULL.
 */
char *
FtpReadWordExt(FtParser *p, bool with_dot)
{
	int			start;

	FtpSkipWhiteSpace(p);
	start = p->pos;
	if (FtpAtEnd(p) ||
		!(isalpha((unsigned char) FtpPeek(p)) || FtpPeek(p) == '_'))
		return NULL;
	while (!FtpAtEnd(p) &&
		   (isalnum((unsigned char) FtpPeek(p)) || FtpPeek(p) == '_' ||
			(with_dot && FtpPeek(p) == '.')))
		p->pos++;
	return pnstrdup(p->str + start, p->pos - start);
}

char *
FtpReadWord(FtParser *p)
{
	return FtpReadWordExt(p, false);
}

/* True, consuming it, if the next word is kw (case-insensitive) */
bool
FtpAcceptKeyword(FtParser *p, const char *kw)
{
	int			save = p->pos;
	char	   *w = FtpReadWord(p);

	if (w != NULL && pg_strcasecmp(w, kw) == 0)
		return true;
	p->pos = save;
	return false;
}

/*
 * The options that may follow a query (LIMIT 0 10, RETURN ..., ...): a
 * bare word spelled like one, outside parentheses, ends the query
 * expression.  (Write "limit" or (limit) to search for the word.)
 */
static const char *const option_words[] = {
	"LIMIT", "RETURN", "SORTBY", "DIALECT", "PARAMS", "WITHSCORES",
	"SCORER", "NOCONTENT", "VERBATIM", "NOSTOPWORDS", "WITHPAYLOADS",
	"WITHSORTKEYS", "INKEYS", "INFIELDS", "SLOP", "INORDER", "LANGUAGE",
	"EXPANDER", "PAYLOAD", "TIMEOUT", "HIGHLIGHT", "SUMMARIZE", "FILTER",
	"GEOFILTER", "EXPLAINSCORE", "FORMAT", NULL
};

/* The option word w is spelled like (in capitals), or NULL if none */
const char *
FtpOptionWord(const char *w)
{
	int			i;

	for (i = 0; option_words[i] != NULL; i++)
		if (pg_strcasecmp(w, option_words[i]) == 0)
			return option_words[i];
	return NULL;
}

/* Is the next token a bare option word (which ends the expression)? */
bool
FtpAtOptionWord(FtParser *p)
{
	int			save = p->pos;
	char	   *w = FtpReadWord(p);

	p->pos = save;
	if (w == NULL || FtpIsNameChar(FtpPeekAt(p, strlen(w))) ||
		FtpPeekAt(p, strlen(w)) == '*')
		return false;
	return FtpOptionWord(w) != NULL;
}

/*
 * Read a name: a field name after '@', a RETURN or SORTBY field, an AS
 * alias.  Letters, digits, '_' and non-ASCII characters; a backslash makes
 * the next character part of the name whatever it is, so any column name
 * can be written.  Reports an error naming what if there is none.
 */
char *
FtpReadName(FtParser *p, const char *what)
{
	StringInfoData buf;

	FtpSkipWhiteSpace(p);
	initStringInfo(&buf);
	while (!FtpAtEnd(p))
	{
		char		c = FtpPeek(p);
		int			n;

		if (c == '\\' && p->pos + 1 < p->len)
		{
			p->pos++;
			n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
			appendBinaryStringInfo(&buf, p->str + p->pos, n);
			p->pos += n;
		}
		else if (FtpIsNameChar(c))
		{
			n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
			appendBinaryStringInfo(&buf, p->str + p->pos, n);
			p->pos += n;
		}
		else
			break;
	}
	if (buf.len == 0)
		FtpSyntaxError(p, p->pos, what);
	return buf.data;
}

/* Read $name into v (the caller has seen the '$') */
void
FtpReadParam(FtParser *p, FtValue *v)
{
	int			start = p->pos;

	if (p->filter_only)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("parameters cannot be used in the filter of ft.search (character %d)",
						FtpCharPosition(p, start)),
				 errhint("Write the value itself, or use ft.query with params.")));
	p->pos++;					/* the '$' */
	v->location = FtpCharPosition(p, start);
	v->literal = NULL;
	v->param = NULL;
	while (!FtpAtEnd(p) && (isalnum((unsigned char) FtpPeek(p)) || FtpPeek(p) == '_'))
		p->pos++;
	if (p->pos == start + 1)
		FtpSyntaxError(p, p->pos, "a parameter name after \"$\"");
	v->param = pnstrdup(p->str + start + 1, p->pos - start - 1);
}

/* A name or a $param (AS, $YIELD_DISTANCE_AS) */
void
FtpReadNameOrParam(FtParser *p, FtValue *v, const char *what)
{
	FtpSkipWhiteSpace(p);
	if (FtpPeek(p) == '$')
	{
		FtpReadParam(p, v);
		return;
	}
	v->param = NULL;
	v->location = FtpCharPosition(p, p->pos);
	v->literal = FtpReadName(p, what);
}

/*
 * Read a number literal ([+-]digits[.digits][e[+-]digits]) into v, or a
 * $param (also -$param: its value negated).  With allow_inf, also -inf,
 * +inf and inf, returned through *inf (-1 or +1; 0 for a value).
 */
void
FtpReadNumber(FtParser *p, FtValue *v, const char *expected, bool allow_inf,
			  int *inf)
{
	int			start;
	int			digits = 0;

	FtpSkipWhiteSpace(p);
	start = p->pos;
	if (inf)
		*inf = 0;
	if (FtpPeek(p) == '$')
	{
		FtpReadParam(p, v);
		return;
	}
	if ((FtpPeek(p) == '+' || FtpPeek(p) == '-') && FtpPeekAt(p, 1) == '$')
	{
		bool		neg = (FtpPeek(p) == '-');

		p->pos++;
		FtpReadParam(p, v);
		v->negate = neg;
		v->location = FtpCharPosition(p, start);
		return;
	}
	if (FtpPeek(p) == '+' || FtpPeek(p) == '-')
		p->pos++;
	if (allow_inf && p->len - p->pos >= 3 &&
		pg_strncasecmp(p->str + p->pos, "inf", 3) == 0 &&
		(p->pos + 3 >= p->len || !FtpIsNameChar(p->str[p->pos + 3])))
	{
		p->pos += 3;
		*inf = (p->str[start] == '-') ? -1 : 1;
		v->param = NULL;
		v->literal = NULL;
		v->location = FtpCharPosition(p, start);
		return;
	}
	while (isdigit((unsigned char) FtpPeek(p)))
		p->pos++, digits++;
	if (FtpPeek(p) == '.')
	{
		p->pos++;
		while (isdigit((unsigned char) FtpPeek(p)))
			p->pos++, digits++;
	}
	if (digits == 0)
	{
		p->pos = start;
		FtpSyntaxError(p, start, expected);
	}
	if (FtpPeek(p) == 'e' || FtpPeek(p) == 'E')
	{
		int			save = p->pos;

		p->pos++;
		if (FtpPeek(p) == '+' || FtpPeek(p) == '-')
			p->pos++;
		if (!isdigit((unsigned char) FtpPeek(p)))
			p->pos = save;
		while (isdigit((unsigned char) FtpPeek(p)))
			p->pos++;
	}
	if (!FtpAtEnd(p) && FtpIsNameChar(FtpPeek(p)))
		FtpSyntaxError(p, start, expected);
	v->param = NULL;
	v->literal = pnstrdup(p->str + start, p->pos - start);
	v->location = FtpCharPosition(p, start);
}

/* Read a non-negative integer literal or a $param */
void
FtpReadInteger(FtParser *p, FtValue *v, const char *expected)
{
	int			start;

	FtpSkipWhiteSpace(p);
	start = p->pos;
	if (FtpPeek(p) == '$')
	{
		FtpReadParam(p, v);
		return;
	}
	while (isdigit((unsigned char) FtpPeek(p)))
		p->pos++;
	if (p->pos == start || (!FtpAtEnd(p) && FtpIsNameChar(FtpPeek(p))))
	{
		p->pos = start;
		FtpSyntaxError(p, start, expected);
	}
	v->param = NULL;
	v->literal = pnstrdup(p->str + start, p->pos - start);
	v->location = FtpCharPosition(p, start);
}

/*
 * A literal integer (RETURN's and INKEYS's counts, DIALECT, $slop): its
 * value.  Any value up to INT_MAX is read; a count larger than what
 * follows it fails where its arguments run out, so no cap below the
 * query's own length applies.
 */
int
FtpReadSmallInt(FtParser *p, const char *expected)
{
	FtValue		v;
	int			start;
	long		n;

	FtpSkipWhiteSpace(p);
	start = p->pos;
	if (FtpPeek(p) == '$')
		FtpSyntaxError(p, start, expected);
	FtpReadInteger(p, &v, expected);
	errno = 0;
	n = strtol(v.literal, NULL, 10);
	if (errno != 0 || n > PG_INT32_MAX)
		FtpSyntaxError(p, start, expected);
	return (int) n;
}

/*
 * Read the text of a bare tag or term up to a character stop() says ends
 * it, \-escapes kept as the escaped character.  *escaped_last tells
 * whether the last character was escaped, *first_escaped the first (so
 * that \* is a star, not a wildcard).  White space ends a term; a tag
 * keeps inner white space and drops it at both ends.
 */
char *
FtpReadBare(FtParser *p, bool tag, bool *first_escaped, bool *last_escaped,
			List **parts)
{
	StringInfoData buf;
	int			keep = 0;		/* length without trailing white space */

	initStringInfo(&buf);
	if (parts)
		*parts = NIL;
	*first_escaped = false;
	*last_escaped = false;
	while (!FtpAtEnd(p))
	{
		char		c = FtpPeek(p);
		int			n;
		bool		escaped = false;

		/* a term is a word; 2.1 and v1.2 are words too */
		if (tag ? (c == '|' || c == '}') :
			!(FtpIsNameChar(c) || c == '\\' ||
			  (c == '.' && buf.len > 0 &&
			   isdigit((unsigned char) buf.data[buf.len - 1]) &&
			   isdigit((unsigned char) FtpPeekAt(p, 1)))))
			break;
		CHECK_FOR_INTERRUPTS();
		if (parts && c == '$' &&
			(isalnum((unsigned char) FtpPeekAt(p, 1)) || FtpPeekAt(p, 1) == '_'))
		{
			/* {t100 $p}: the text so far, then the parameter */
			FtValue    *v;

			if (buf.len > 0)
			{
				v = palloc0(sizeof(FtValue));
				v->literal = pnstrdup(buf.data, buf.len);
				*parts = lappend(*parts, v);
			}
			resetStringInfo(&buf);
			keep = 0;
			v = palloc0(sizeof(FtValue));
			FtpReadParam(p, v);
			*parts = lappend(*parts, v);
			continue;
		}
		if (c == '\\' && p->pos + 1 < p->len)
		{
			p->pos++;
			escaped = true;
		}
		if (buf.len == 0)
			*first_escaped = escaped;
		n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
		appendBinaryStringInfo(&buf, p->str + p->pos, n);
		if (escaped || !isspace((unsigned char) p->str[p->pos]))
		{
			keep = buf.len;
			*last_escaped = escaped;
		}
		p->pos += n;
	}
	buf.len = keep;
	buf.data[keep] = '\0';
	if (parts && *parts != NIL && keep > 0)
	{
		FtValue    *v = palloc0(sizeof(FtValue));

		v->literal = buf.data;
		*parts = lappend(*parts, v);
	}
	return buf.data;
}

/*
 * A quoted string, the opening quote q at p->pos: \q and \\ are the
 * quote and the backslash (and, in double quotes, \' a single quote, as
 * RediSearch reads "w\'..\'": a tag, not a pattern); any other backslash
 * is kept as written.
 */
char *
FtpReadQuoted(FtParser *p, char q, const char *what)
{
	StringInfoData buf;

	initStringInfo(&buf);
	p->pos++;
	for (;;)
	{
		int			n;

		CHECK_FOR_INTERRUPTS();
		if (FtpAtEnd(p))
			FtpSyntaxError(p, p->pos, what);
		if (FtpPeek(p) == q)
		{
			p->pos++;
			break;
		}
		if (FtpPeek(p) == '\\' &&
			(FtpPeekAt(p, 1) == q || FtpPeekAt(p, 1) == '\\' ||
			 (q == '"' && FtpPeekAt(p, 1) == '\'')))
			p->pos++;
		n = Min(pg_mblen(p->str + p->pos), p->len - p->pos);
		appendBinaryStringInfo(&buf, p->str + p->pos, n);
		p->pos += n;
	}
	return buf.data;
}

/*
 * One tag of @f:{...}: a $param, a "quoted string", w'pattern' or bare
 * text up to an unescaped '|' or '}', white space around it dropped.  A
 * leading '*' matches any start (suffix), a trailing one any end
 * (prefix).  Inside bare text, $name is replaced by the parameter's value
 * (parts).
 */
FtValue *
FtpReadTag(FtParser *p)
{
	FtValue    *v = palloc0(sizeof(FtValue));
	bool		first_escaped;
	bool		last_escaped;
	int			start;
	char	   *s;

	FtpSkipWhiteSpace(p);
	start = p->pos;
	FtpCountTerm(p, start);
	v->location = FtpCharPosition(p, start);
	if (FtpPeek(p) == '*' && (FtpPeekAt(p, 1) == '"' || FtpPeekAt(p, 1) == '$'))
	{
		v->wild |= FT_WILD_SUFFIX;
		p->pos++;
	}
	if (FtpPeek(p) == '$')
	{
		int			wild = v->wild;
		int			save = p->pos;

		FtpReadParam(p, v);
		v->wild = wild;
		v->location = FtpCharPosition(p, start);
		if (FtpPeek(p) == '*')
		{
			v->wild |= FT_WILD_PREFIX;
			p->pos++;
		}
		FtpSkipWhiteSpace(p);
		if (FtpPeek(p) == '|' || FtpPeek(p) == '}' || p->filter_only || wild)
			return v;
		/* {$a more text}: text with a parameter in it */
		p->pos = save;
		v->param = NULL;
		v->wild = 0;
	}
	if (FtpPeek(p) == '"')
	{
		v->literal = FtpReadQuoted(p, '"', "a closing \" of the tag");
		if (FtpPeek(p) == '*')
		{
			v->wild |= FT_WILD_PREFIX;
			p->pos++;
		}
		return v;
	}
	if (FtpPeek(p) == 'w' && FtpPeekAt(p, 1) == '\'')
	{
		p->pos++;
		v->literal = FtpReadQuoted(p, '\'', "a closing ' of the pattern");
		v->wild = FT_WILD_PATTERN;
		return v;
	}
	s = FtpReadBare(p, true, &first_escaped, &last_escaped,
					p->filter_only ? NULL : &v->parts);
	if (v->parts != NIL)
		return v;
	if (*s == '\0')
		FtpSyntaxError(p, start, "a tag value");
	if (s[0] == '*' && !first_escaped && s[1] != '\0')
	{
		v->wild |= FT_WILD_SUFFIX;
		s++;
	}
	if (strlen(s) > 1 && s[strlen(s) - 1] == '*' && !last_escaped)
	{
		v->wild |= FT_WILD_PREFIX;
		s[strlen(s) - 1] = '\0';
	}
	v->literal = s;
	return v;
}

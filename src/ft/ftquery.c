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
 *	and		 := unary [attrs] (unary [attrs])*		AND by juxtaposition
 *	unary	 := '-' unary | '~' unary | '(' expr ')' | '*' | field | term
 *	field	 := '@' names ':' '{' tag ('|' tag)* '}'	tag filter
 *			  | '@' name ':' '[' bound [','] bound ']'	numeric range
 *			  | '@' name ':' '[' bound ']'				single value
 *			  | '@' name ':' '[' VECTOR_RANGE num $vec ']' [attrs]
 *			  | '@' names ':' (term | '(' expr ')' | '-' unary | '~' unary)
 *	names	 := name ('|' ['@'] name)*
 *	bound	 := ['('] (number | -inf | +inf | inf | [+-]$param)
 *	tag		 := ['*'] (text with \-escapes and $params | "quoted" | $param)
 *				['*'] | w'pattern'
 *	term	 := ['*'] (word | $param) ['*'] | "phrase words" | %word% |
 *				%%word%% | %%%word%%% | w'pattern'
 *	knn		 := '[' KNN (int | $param) '@' name $vec
 *				(EF_RUNTIME (int | $param) | AS (name | $param) |
 *				 HYBRID_POLICY (BATCHES | ADHOC_BF) | BATCH_SIZE int)* ']'
 *	attrs	 := '=>' '{' $name ':' value [';' ...] '}'
 *	option	 := LIMIT off num | RETURN n field [AS name]... |
 *				SORTBY field [ASC | DESC] | WITHSCORES | NOCONTENT |
 *				SCORER name | DIALECT 2
 *
 * A bare word spelled like an option (LIMIT, RETURN, ...) outside
 * parentheses ends the expression.
 *
 * As in DIALECT 2, AND binds tighter than OR: "a b | c d" is
 * "(a b) | (c d)".  The filter of ft.search is an expr alone (no KNN, no
 * options, no parameters).
 *
 * Errors: a syntax error says at which character (1-based, counted in
 * characters, not bytes) and what was expected, with
 * ERRCODE_SYNTAX_ERROR; the message carries both, so that it survives
 * \set VERBOSITY terse.  A construct of RediSearch that segvec does not
 * have is refused by name (ERRCODE_FEATURE_NOT_SUPPORTED), never read as
 * something else.
 *
 * Bounded work: the parser takes time linear in the query (character
 * positions are counted incrementally, see char_position), checks for
 * interrupts in every loop that can run long, and refuses more than
 * segvec.max_query_terms terms (ERRCODE_PROGRAM_LIMIT_EXCEEDED) and more
 * than FT_MAX_DEPTH levels of nesting (ERRCODE_STATEMENT_TOO_COMPLEX).
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

#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "utils/guc.h"

#include "compat.h"
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
	int			nterms;			/* terms read so far */
	bool		filter_only;	/* parsing ft.search's filter */
	const char *what;			/* "query" or "filter", for messages */
	List	   *scope;			/* fields of the enclosing @f:( ... ), or
								 * NIL: every TEXT field */
	int			cache_off;		/* char_position: a byte offset ... */
	int			cache_chars;	/* ... and the characters before it */
} FtParser;

/* segvec.max_query_terms */
int			segvec_max_query_terms = 10000;

static FtNode *parse_or(FtParser *p);
static FtNode *parse_unary(FtParser *p);

/*
 * FtQueryInit: define the parser's settings (from _PG_init, before the
 * segvec prefix is reserved).
 */
void
FtQueryInit(void)
{
	DefineCustomIntVariable("segvec.max_query_terms",
							"Most terms (tags, ranges, words) one ft query may have.",
							"Bounds the work of parsing and compiling one query.",
							&segvec_max_query_terms, 10000, 1, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * 1-based character position of byte offset off.  Counts from the offset
 * asked for last time, so that a parse that asks for increasing positions
 * does linear work in all (counting from the start each time made a long
 * query take quadratic time).
 */
static int
char_position(FtParser *p, int off)
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

static char
peek_at(FtParser *p, int ahead)
{
	return p->pos + ahead >= p->len ? '\0' : p->str[p->pos + ahead];
}

static void
skip_ws(FtParser *p)
{
	while (!at_end(p) && isspace((unsigned char) p->str[p->pos]))
	{
		/* a query of nothing but white space is long too */
		if ((p->pos & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		p->pos++;
	}
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
static SegvecNoReturn void
syntax_error(FtParser *p, int off, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("syntax error at character %d of the %s: expected %s, found %s",
					char_position(p, off), p->what, expected,
					found_at(p, off))));
}

/* Report a construct that is valid RediSearch but not supported here */
static SegvecNoReturn void
not_supported(FtParser *p, int off, const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s at character %d of the %s is not supported",
					what, char_position(p, off), p->what),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * Count one more term (a tag, a range, a word), checking
 * segvec.max_query_terms, so that the work of one query stays bounded.
 */
static void
count_term(FtParser *p, int off)
{
	if (++p->nterms > segvec_max_query_terms)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has too many terms at character %d",
						p->what, char_position(p, off)),
				 errdetail("At most %d tags, ranges and words are allowed (segvec.max_query_terms).",
						   segvec_max_query_terms)));
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
 * Read a keyword-like word ([A-Za-z_][A-Za-z0-9_.]*, '.' only with
 * with_dot), returning it or NULL if there is none; does not consume
 * anything when it returns NULL.
 */
static char *
read_word_ext(FtParser *p, bool with_dot)
{
	int			start;

	skip_ws(p);
	start = p->pos;
	if (at_end(p) ||
		!(isalpha((unsigned char) peek(p)) || peek(p) == '_'))
		return NULL;
	while (!at_end(p) && (isalnum((unsigned char) peek(p)) || peek(p) == '_' ||
						  (with_dot && peek(p) == '.')))
		p->pos++;
	return pnstrdup(p->str + start, p->pos - start);
}

static char *
read_word(FtParser *p)
{
	return read_word_ext(p, false);
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

static bool
at_option_word(FtParser *p)
{
	int			save = p->pos;
	char	   *w = read_word(p);
	bool		found = false;
	int			i;

	p->pos = save;
	if (w == NULL || is_name_char(peek_at(p, strlen(w))) ||
		peek_at(p, strlen(w)) == '*')
		return false;
	for (i = 0; option_words[i] != NULL; i++)
		if (pg_strcasecmp(w, option_words[i]) == 0)
			found = true;
	return found;
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

/* A name or a $param (AS, $YIELD_DISTANCE_AS) */
static void
read_name_or_param(FtParser *p, FtValue *v, const char *what)
{
	skip_ws(p);
	if (peek(p) == '$')
	{
		read_param(p, v);
		return;
	}
	v->param = NULL;
	v->location = char_position(p, p->pos);
	v->literal = read_name(p, what);
}

/*
 * Read a number literal ([+-]digits[.digits][e[+-]digits]) into v, or a
 * $param (also -$param: its value negated).  With allow_inf, also -inf,
 * +inf and inf, returned through *inf (-1 or +1; 0 for a value).
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
	if ((peek(p) == '+' || peek(p) == '-') && peek_at(p, 1) == '$')
	{
		bool		neg = (peek(p) == '-');

		p->pos++;
		read_param(p, v);
		v->negate = neg;
		v->location = char_position(p, start);
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

/*
 * A literal integer (RETURN's and INKEYS's counts, DIALECT, $slop): its
 * value.  Any value up to INT_MAX is read; a count larger than what
 * follows it fails where its arguments run out, so no cap below the
 * query's own length applies.
 */
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
	if (errno != 0 || n > PG_INT32_MAX)
		syntax_error(p, start, expected);
	return (int) n;
}

/*
 * Read the text of a bare tag or term up to a character stop() says ends
 * it, \-escapes kept as the escaped character.  *escaped_last tells
 * whether the last character was escaped, *first_escaped the first (so
 * that \* is a star, not a wildcard).  White space ends a term; a tag
 * keeps inner white space and drops it at both ends.
 */
static char *
read_bare(FtParser *p, bool tag, bool *first_escaped, bool *last_escaped,
		  List **parts)
{
	StringInfoData buf;
	int			keep = 0;		/* length without trailing white space */

	initStringInfo(&buf);
	if (parts)
		*parts = NIL;
	*first_escaped = false;
	*last_escaped = false;
	while (!at_end(p))
	{
		char		c = peek(p);
		int			n;
		bool		escaped = false;

		/* a term is a word; 2.1 and v1.2 are words too */
		if (tag ? (c == '|' || c == '}') :
			!(is_name_char(c) || c == '\\' ||
			  (c == '.' && buf.len > 0 &&
			   isdigit((unsigned char) buf.data[buf.len - 1]) &&
			   isdigit((unsigned char) peek_at(p, 1)))))
			break;
		CHECK_FOR_INTERRUPTS();
		if (parts && c == '$' &&
			(isalnum((unsigned char) peek_at(p, 1)) || peek_at(p, 1) == '_'))
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
			read_param(p, v);
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
static char *
read_quoted(FtParser *p, char q, const char *what)
{
	StringInfoData buf;

	initStringInfo(&buf);
	p->pos++;
	for (;;)
	{
		int			n;

		CHECK_FOR_INTERRUPTS();
		if (at_end(p))
			syntax_error(p, p->pos, what);
		if (peek(p) == q)
		{
			p->pos++;
			break;
		}
		if (peek(p) == '\\' &&
			(peek_at(p, 1) == q || peek_at(p, 1) == '\\' ||
			 (q == '"' && peek_at(p, 1) == '\'')))
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
static FtValue *
read_tag(FtParser *p)
{
	FtValue    *v = palloc0(sizeof(FtValue));
	bool		first_escaped;
	bool		last_escaped;
	int			start;
	char	   *s;

	skip_ws(p);
	start = p->pos;
	count_term(p, start);
	v->location = char_position(p, start);
	if (peek(p) == '*' && (peek_at(p, 1) == '"' || peek_at(p, 1) == '$'))
	{
		v->wild |= FT_WILD_SUFFIX;
		p->pos++;
	}
	if (peek(p) == '$')
	{
		int			wild = v->wild;
		int			save = p->pos;

		read_param(p, v);
		v->wild = wild;
		v->location = char_position(p, start);
		if (peek(p) == '*')
		{
			v->wild |= FT_WILD_PREFIX;
			p->pos++;
		}
		skip_ws(p);
		if (peek(p) == '|' || peek(p) == '}' || p->filter_only || wild)
			return v;
		/* {$a more text}: text with a parameter in it */
		p->pos = save;
		v->param = NULL;
		v->wild = 0;
	}
	if (peek(p) == '"')
	{
		v->literal = read_quoted(p, '"', "a closing \" of the tag");
		if (peek(p) == '*')
		{
			v->wild |= FT_WILD_PREFIX;
			p->pos++;
		}
		return v;
	}
	if (peek(p) == 'w' && peek_at(p, 1) == '\'')
	{
		p->pos++;
		v->literal = read_quoted(p, '\'', "a closing ' of the pattern");
		v->wild = FT_WILD_PATTERN;
		return v;
	}
	s = read_bare(p, true, &first_escaped, &last_escaped,
				  p->filter_only ? NULL : &v->parts);
	if (v->parts != NIL)
		return v;
	if (*s == '\0')
		syntax_error(p, start, "a tag value");
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

/* Which attributes =>{$name: value; ...} may give, and where they go */
typedef struct FtAttrs
{
	FtValue    *yield_as;		/* $YIELD_DISTANCE_AS, or NULL */
	FtValue    *ef;				/* $EF_RUNTIME */
	bool	   *has_ef;
	FtValue    *epsilon;		/* $EPSILON */
	bool	   *has_epsilon;
	FtKnn	   *knn;			/* $HYBRID_POLICY, $BATCH_SIZE */
	bool		text;			/* $weight, $slop, $inorder, $phonetic */
	FtNode	   *node;			/* text: the term or group they are for */
} FtAttrs;

static void
duplicate_attribute(FtParser *p, int start, const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("%s is given twice (character %d of the %s)",
					name, char_position(p, start), p->what)));
}

/* HYBRID_POLICY's value */
static void
read_policy(FtParser *p, FtKnn *knn, int start)
{
	char	   *w;

	if (knn->policy != FT_HYBRID_DEFAULT)
		duplicate_attribute(p, start, "HYBRID_POLICY");
	knn->policy_location = char_position(p, start);
	w = read_word(p);
	if (w != NULL && pg_strcasecmp(w, "BATCHES") == 0)
		knn->policy = FT_HYBRID_BATCHES;
	else if (w != NULL && pg_strcasecmp(w, "ADHOC_BF") == 0)
		knn->policy = FT_HYBRID_ADHOC_BF;
	else
		syntax_error(p, p->pos, "BATCHES or ADHOC_BF after HYBRID_POLICY");
}

/* attrs after a VECTOR_RANGE, KNN clause or text term: =>{$NAME: value; ...} */
static void
parse_attributes(FtParser *p, FtAttrs *a)
{
	expect_char(p, '{', "\"{\" after \"=>\"");
	for (;;)
	{
		int			start;
		char	   *name;

		skip_ws(p);
		start = p->pos;
		if (peek(p) != '$')
			syntax_error(p, start, "an attribute ($name: value)");
		p->pos++;
		name = read_word(p);
		if (name == NULL)
			syntax_error(p, start, "an attribute ($name: value)");
		expect_char(p, ':', "\":\" after the attribute name");
		if (a->yield_as && pg_strcasecmp(name, "YIELD_DISTANCE_AS") == 0)
		{
			if (a->yield_as->literal || a->yield_as->param)
				duplicate_attribute(p, start, "$YIELD_DISTANCE_AS");
			read_name_or_param(p, a->yield_as, "a name for the distance");
		}
		else if (a->ef && pg_strcasecmp(name, "EF_RUNTIME") == 0)
		{
			if (*a->has_ef)
				duplicate_attribute(p, start, "EF_RUNTIME");
			read_integer(p, a->ef, "an integer or a $parameter");
			*a->has_ef = true;
		}
		else if (a->epsilon && pg_strcasecmp(name, "EPSILON") == 0)
		{
			if (*a->has_epsilon)
				duplicate_attribute(p, start, "EPSILON");
			read_number(p, a->epsilon, "a number or a $parameter", false, NULL);
			*a->has_epsilon = true;
		}
		else if (a->knn && pg_strcasecmp(name, "HYBRID_POLICY") == 0)
			read_policy(p, a->knn, start);
		else if (a->knn && pg_strcasecmp(name, "BATCH_SIZE") == 0)
		{
			if (a->knn->has_batch_size)
				duplicate_attribute(p, start, "BATCH_SIZE");
			read_integer(p, &a->knn->batch_size, "an integer or a $parameter");
			a->knn->has_batch_size = true;
		}
		else if (a->text && pg_strcasecmp(name, "weight") == 0)
		{
			/* the score of the node's text terms is multiplied by it */
			if (a->node->has_weight)
				duplicate_attribute(p, start, "$weight");
			read_number(p, &a->node->weight, "a number or a $parameter",
						false, NULL);
			a->node->has_weight = true;
		}
		else if (a->text && pg_strcasecmp(name, "slop") == 0)
		{
			/* an AND's words within slop words of each other (compiler) */
			if (a->node->has_near && a->node->slop != FT_SLOP_ANY)
				duplicate_attribute(p, start, "$slop");
			if (a->node->kind == FT_NODE_TEXT &&
				a->node->text_kind == FT_TEXT_PHRASE)
				not_supported(p, start, "$slop on a phrase",
							  "A phrase (\"...\") matches adjacent words in order; give the words without quotes: (a b)=>{$slop: 1}.");
			if (!a->node->has_near)
				a->node->inorder = false;
			a->node->slop = read_small_int(p, "a number of words");
			a->node->has_near = true;
		}
		else if (a->text && pg_strcasecmp(name, "inorder") == 0)
		{
			char	   *w;

			skip_ws(p);
			w = read_word(p);
			if (w == NULL || (pg_strcasecmp(w, "true") != 0 &&
							  pg_strcasecmp(w, "false") != 0))
				syntax_error(p, p->pos, "true or false");
			if (!a->node->has_near)
				a->node->slop = FT_SLOP_ANY;
			a->node->inorder = pg_strcasecmp(w, "true") == 0;
			a->node->has_near = true;
		}
		else if (a->text && pg_strcasecmp(name, "phonetic") == 0)
			not_supported(p, start, psprintf("attribute $%s", name),
						  "segvec has no phonetic matching.");
		else
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("unknown attribute $%s at character %d of the %s",
							name, char_position(p, start), p->what)));
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

/* Is what follows "=>" then "{" (attributes, not a KNN clause)? */
static bool
at_attributes(FtParser *p)
{
	int			save = p->pos;
	bool		yes = false;

	if (accept_str(p, "=>"))
	{
		skip_ws(p);
		yes = (peek(p) == '{');
	}
	p->pos = save;
	return yes;
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

static bool
is_term_start(FtParser *p)
{
	char		c = peek(p);

	return is_name_char(c) || c == '\\' || c == '"' || c == '%' ||
		c == '$' || (c == '*' && (is_name_char(peek_at(p, 1)) ||
								  peek_at(p, 1) == '\\'));
}

/*
 * A full-text term at p->pos: a word (with '*' for prefix, suffix or
 * infix), "a phrase", %fuzzy% (up to three '%'), w'pattern' or a $param.
 * fields, when not NIL, restrict it to those TEXT fields; otherwise the
 * enclosing @f:( ... ) does, or it is every TEXT field.
 */
static FtNode *
parse_text_term(FtParser *p, List *fields)
{
	int			start = p->pos;
	FtNode	   *n = make_node(FT_NODE_TEXT, char_position(p, start), NIL);
	bool		first_escaped;
	bool		last_escaped;
	char	   *s;

	n->text_fields = fields ? fields : p->scope;
	n->text_kind = FT_TEXT_WORD;
	n->term.location = n->location;
	count_term(p, start);
	if (peek(p) == '"')
	{
		char	   *text = read_quoted(p, '"', "a closing \" of the phrase");
		char	   *tok;
		char	   *save;

		n->text_kind = FT_TEXT_PHRASE;
		for (tok = strtok_r(text, " \t\n\r\f\v", &save); tok != NULL;
			 tok = strtok_r(NULL, " \t\n\r\f\v", &save))
		{
			FtValue    *w = palloc0(sizeof(FtValue));
			int			len = strlen(tok);

			CHECK_FOR_INTERRUPTS();
			if (len > 1 && tok[len - 1] == '*')
			{
				w->wild = FT_WILD_PREFIX;
				tok[len - 1] = '\0';
			}
			w->literal = tok;
			w->location = n->location;
			n->words = lappend(n->words, w);
		}
		if (n->words == NIL)
			syntax_error(p, start, "a word inside the quotes");
		if (list_length(n->words) == 1)
		{
			n->text_kind = FT_TEXT_WORD;
			n->term = *(FtValue *) linitial(n->words);
			n->words = NIL;
		}
		return n;
	}
	if (peek(p) == 'w' && peek_at(p, 1) == '\'')
	{
		p->pos++;
		n->text_kind = FT_TEXT_PATTERN;
		n->term.literal = read_quoted(p, '\'', "a closing ' of the pattern");
		n->term.wild = FT_WILD_PATTERN;
		return n;
	}
	if (peek(p) == '%')
	{
		int			level = 0;
		int			i;

		while (peek(p) == '%')
			p->pos++, level++;
		if (level > 3)
			syntax_error(p, start, "at most three \"%\" around a fuzzy term");
		n->text_kind = FT_TEXT_FUZZY;
		n->fuzzy = level;
		if (peek(p) == '$')
			read_param(p, &n->term);
		else
		{
			n->term.literal = read_bare(p, false, &first_escaped,
										&last_escaped, NULL);
			if (*n->term.literal == '\0')
				syntax_error(p, p->pos, "a word after \"%\"");
		}
		for (i = 0; i < level; i++)
			if (peek(p) != '%')
				syntax_error(p, p->pos, "the closing \"%\" of the fuzzy term");
			else
				p->pos++;
		return n;
	}
	if (peek(p) == '*')
	{
		n->term.wild |= FT_WILD_SUFFIX;
		p->pos++;
	}
	if (peek(p) == '$')
	{
		int			wild = n->term.wild;

		read_param(p, &n->term);
		n->term.wild = wild;
	}
	else
	{
		s = read_bare(p, false, &first_escaped, &last_escaped, NULL);
		if (*s == '\0')
			syntax_error(p, start, "a word");
		n->term.literal = s;
	}
	if (peek(p) == '*')
	{
		n->term.wild |= FT_WILD_PREFIX;
		p->pos++;
	}
	return n;
}

/* @name:{...}, @name:[...], @name:word, @name:( ... ); '@' not consumed */
static FtNode *
parse_field(FtParser *p)
{
	FtNode	   *n = palloc0(sizeof(FtNode));
	int			start = p->pos;
	List	   *fields = NIL;

	n->location = char_position(p, start);
	p->pos++;					/* the '@' */
	n->field_location = char_position(p, p->pos);
	n->field = read_name(p, "a field name after \"@\"");
	fields = list_make1(n->field);
	while (peek(p) == '|')
	{
		p->pos++;
		if (peek(p) == '@')
			p->pos++;
		fields = lappend(fields, read_name(p, "a field name after \"|\""));
	}
	expect_char(p, ':', "\":\" after the field name");
	skip_ws(p);
	if ((peek(p) == '{' || peek(p) == '[') && list_length(fields) > 1)
		syntax_error(p, p->pos,
					 "a text term: a tag filter or a range takes one field");
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
		count_term(p, start);
		p->pos++;
		if (accept_keyword(p, "WITHIN") || accept_keyword(p, "CONTAINS") ||
			accept_keyword(p, "INTERSECTS") || accept_keyword(p, "DISJOINT"))
			not_supported(p, start, "a GEOSHAPE query",
						  "segvec has no GEO or GEOSHAPE fields.");
		if (accept_keyword(p, "VECTOR_RANGE"))
		{
			FtAttrs		a;

			n->kind = FT_NODE_VECRANGE;
			read_number(p, &n->radius, "a radius (a number or a $parameter)",
						false, NULL);
			skip_ws(p);
			if (peek(p) != '$')
				syntax_error(p, p->pos, "a $parameter holding the query vector");
			read_param(p, &n->vector);
			expect_char(p, ']', "\"]\"");
			if (accept_str(p, "=>"))
			{
				memset(&a, 0, sizeof(a));
				a.yield_as = &n->yield_as;
				a.epsilon = &n->epsilon;
				a.has_epsilon = &n->has_epsilon;
				parse_attributes(p, &a);
			}
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
			if (peek(p) == ']' && !n->lo.exclusive && n->lo.inf == 0)
			{
				/* [105]: that value alone */
				p->pos++;
				n->hi = n->lo;
				return n;
			}
			if (peek(p) == ',')
				p->pos++;
			skip_ws(p);
			if (peek(p) == '(')
			{
				p->pos++;
				n->hi.exclusive = true;
			}
			skip_ws(p);
			start = p->pos;
			read_number(p, &n->hi.value,
						"a number, -inf, +inf or a $parameter",
						true, &n->hi.inf);
			skip_ws(p);
			if (isdigit((unsigned char) peek(p)) || peek(p) == '$')
			{
				/* [lon lat radius unit]: a GEO range */
				int			save = p->pos;
				int			geo = p->pos;
				char	   *unit;

				while (!at_end(p) && !isspace((unsigned char) peek(p)) &&
					   peek(p) != ']')
					p->pos++;
				unit = read_word(p);
				if (unit != NULL &&
					(pg_strcasecmp(unit, "m") == 0 || pg_strcasecmp(unit, "km") == 0 ||
					 pg_strcasecmp(unit, "mi") == 0 || pg_strcasecmp(unit, "ft") == 0))
					not_supported(p, geo,
								  "a GEO range (@field:[lon lat radius unit])",
								  "segvec has no GEO fields.");
				p->pos = save;
			}
			if (n->hi.inf < 0)
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("the upper bound of a range cannot be -inf (character %d of the %s)",
								char_position(p, start), p->what)));
			expect_char(p, ']', "\"]\"");
		}
	}
	else
	{
		/* a text term or group restricted to these fields */
		List	   *save = p->scope;
		FtNode	   *t;

		if (peek(p) == '(' || peek(p) == '-' || peek(p) == '~')
		{
			p->scope = fields;
			t = parse_unary(p);
			p->scope = save;
		}
		else if (is_term_start(p))
			t = parse_text_term(p, fields);
		else
			syntax_error(p, p->pos,
						 "\"{\" (a tag filter), \"[\" (a numeric range or VECTOR_RANGE), a text term or \"(\"");
		return t;
	}
	return n;
}

static FtNode *
parse_unary(FtParser *p)
{
	FtNode	   *n;
	int			start;

	skip_ws(p);
	start = p->pos;
	if (p->depth > FT_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_STATEMENT_TOO_COMPLEX),
				 errmsg("%s nested too deeply at character %d",
						p->what, char_position(p, start)),
				 errdetail("At most %d levels of parentheses, negations and optional terms are allowed.",
						   FT_MAX_DEPTH)));
	check_stack_depth();
	switch (peek(p))
	{
		case '-':
			p->pos++;
			p->depth++;
			n = make_node(FT_NODE_NOT, char_position(p, start),
						  list_make1(parse_unary(p)));
			p->depth--;
			return n;
		case '~':
			p->pos++;
			p->depth++;
			n = parse_unary(p);
			n->optional = true;
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
			if (is_term_start(p))
				return parse_text_term(p, NIL);
			p->pos++;
			return make_node(FT_NODE_ALL, char_position(p, start), NIL);
		case '@':
			return parse_field(p);
		default:
			if (is_term_start(p))
				return parse_text_term(p, NIL);
			syntax_error(p, start,
						 "a query term (a word, \"phrase\", @field:{...}, @field:[...], \"(\", \"-\" or \"*\")");
	}
	return NULL;				/* keep compiler quiet */
}

/* Is there another term to AND with (and not an option keyword)? */
static bool
more_terms(FtParser *p)
{
	char		c;

	skip_ws(p);
	c = peek(p);
	if (c == '@' || c == '(' || c == '-' || c == '~' ||
		(c == '*' && !(peek_at(p, 1) == '=' && peek_at(p, 2) == '>')))
		return true;
	if (!is_term_start(p))
		return false;
	return p->depth > 0 || !at_option_word(p);
}

/* Juxtaposed terms: their AND */
static FtNode *
parse_and(FtParser *p)
{
	List	   *terms = NIL;
	int			location;

	skip_ws(p);
	location = char_position(p, p->pos);
	do
	{
		FtNode	   *t;

		CHECK_FOR_INTERRUPTS();
		t = parse_unary(p);
		if (at_attributes(p))
		{
			FtAttrs		a;

			memset(&a, 0, sizeof(a));
			a.text = true;
			a.node = t;
			(void) accept_str(p, "=>");
			parse_attributes(p, &a);
		}
		terms = lappend(terms, t);
	} while (more_terms(p));
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
		CHECK_FOR_INTERRUPTS();
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

/* [KNN k @field $vec EF_RUNTIME ef AS alias ...], after the "=>" */
static FtKnn *
parse_knn(FtParser *p)
{
	FtKnn	   *knn = palloc0(sizeof(FtKnn));
	FtAttrs		a;

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
		int			start;

		skip_ws(p);
		start = p->pos;
		if (peek(p) == ']')
		{
			p->pos++;
			break;
		}
		if (accept_keyword(p, "EF_RUNTIME"))
		{
			if (knn->has_ef)
				duplicate_attribute(p, start, "EF_RUNTIME");
			read_integer(p, &knn->ef, "an integer or a $parameter after EF_RUNTIME");
			knn->has_ef = true;
		}
		else if (accept_keyword(p, "AS"))
		{
			if (knn->alias.literal || knn->alias.param)
				duplicate_attribute(p, start, "AS");
			read_name_or_param(p, &knn->alias, "a name after AS");
		}
		else if (accept_keyword(p, "HYBRID_POLICY"))
			read_policy(p, knn, start);
		else if (accept_keyword(p, "BATCH_SIZE"))
		{
			if (knn->has_batch_size)
				duplicate_attribute(p, start, "BATCH_SIZE");
			read_integer(p, &knn->batch_size, "an integer or a $parameter after BATCH_SIZE");
			knn->has_batch_size = true;
		}
		else if (accept_keyword(p, "EPSILON"))
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("EPSILON at character %d of the %s is a VECTOR_RANGE attribute, not a KNN one",
							char_position(p, start), p->what)));
		else
			syntax_error(p, p->pos, "EF_RUNTIME, HYBRID_POLICY, BATCH_SIZE, AS or \"]\"");
	}
	if (accept_str(p, "=>"))
	{
		memset(&a, 0, sizeof(a));
		a.yield_as = &knn->alias;
		a.ef = &knn->ef;
		a.has_ef = &knn->has_ef;
		a.knn = knn;
		parse_attributes(p, &a);
	}
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

/* LIMIT, RETURN, SORTBY, DIALECT, ... after the query expression */
static void
parse_options(FtParser *p, FtQuery *q)
{
	for (;;)
	{
		int			start;
		char	   *w;

		CHECK_FOR_INTERRUPTS();
		skip_ws(p);
		if (at_end(p))
			break;
		start = p->pos;
		w = read_word(p);
		if (w == NULL)
			syntax_error(p, start,
						 "end of query or an option (LIMIT, RETURN, SORTBY, WITHSCORES, SCORER, DIALECT)");
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

				CHECK_FOR_INTERRUPTS();
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
		else if (pg_strcasecmp(w, "WITHSCORES") == 0)
		{
			if (q->withscores)
				duplicate_option(p, start, "WITHSCORES");
			q->withscores = true;
		}
		else if (pg_strcasecmp(w, "NOCONTENT") == 0)
		{
			if (q->nocontent)
				duplicate_option(p, start, "NOCONTENT");
			q->nocontent = true;
		}
		else if (pg_strcasecmp(w, "SCORER") == 0)
		{
			if (q->scorer)
				duplicate_option(p, start, "SCORER");
			skip_ws(p);
			q->scorer_location = char_position(p, p->pos);
			q->scorer = read_word_ext(p, true);
			if (q->scorer == NULL)
				syntax_error(p, p->pos, "a scorer name after SCORER");
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
		else if (pg_strcasecmp(w, "SLOP") == 0)
		{
			if (q->has_near && q->slop != FT_SLOP_ANY)
				duplicate_option(p, start, "SLOP");
			q->slop = read_small_int(p, "a number of words after SLOP");
			q->has_near = true;
		}
		else if (pg_strcasecmp(w, "INORDER") == 0)
		{
			if (q->inorder)
				duplicate_option(p, start, "INORDER");
			if (!q->has_near)
				q->slop = FT_SLOP_ANY;
			q->inorder = true;
			q->has_near = true;
		}
		else if (pg_strcasecmp(w, "INKEYS") == 0)
		{
			int			n;
			int			i;

			/* INKEYS n key ...: only those docs (keys end at white space) */
			if (q->has_inkeys)
				duplicate_option(p, start, "INKEYS");
			q->has_inkeys = true;
			n = read_small_int(p, "the number of INKEYS keys");
			for (i = 0; i < n; i++)
			{
				int			from;

				CHECK_FOR_INTERRUPTS();
				skip_ws(p);
				from = p->pos;
				while (!at_end(p) && !isspace((unsigned char) peek(p)))
					p->pos++;
				if (p->pos == from)
					syntax_error(p, from, "a key of INKEYS");
				q->inkeys = lappend(q->inkeys,
									pnstrdup(p->str + from, p->pos - from));
			}
		}
		else if (pg_strcasecmp(w, "VERBATIM") == 0 ||
				 pg_strcasecmp(w, "NOSTOPWORDS") == 0 ||
				 pg_strcasecmp(w, "EXPANDER") == 0 ||
				 pg_strcasecmp(w, "LANGUAGE") == 0)
			not_supported(p, start, w,
						  "Words are normalised by the text search configuration of the index (ft.create's language).");
		else
		{
			int			i;

			for (i = 0; option_words[i] != NULL; i++)
				if (pg_strcasecmp(w, option_words[i]) == 0)
					not_supported(p, start, option_words[i], NULL);
			syntax_error(p, start,
						 "end of query or an option (LIMIT, RETURN, SORTBY, WITHSCORES, SCORER, DIALECT)");
		}
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

static void
init_parser(FtParser *p, const char *str, bool filter_only)
{
	memset(p, 0, sizeof(*p));
	p->str = str;
	p->len = strlen(str);
	p->filter_only = filter_only;
	p->what = filter_only ? "filter" : "query";
}

/*
 * FtParseQuery: parse an ft.query query string.  Returns the tree; raises
 * ERRCODE_SYNTAX_ERROR on a syntax error, ERRCODE_PROGRAM_LIMIT_EXCEEDED
 * past segvec.max_query_terms, ERRCODE_STATEMENT_TOO_COMPLEX past
 * FT_MAX_DEPTH.  Takes time linear in the length of the query and can be
 * cancelled.  Parameters are not resolved here (FtCompile does that).
 */
FtQuery *
FtParseQuery(const char *query)
{
	FtParser	p;
	FtQuery    *q = palloc0(sizeof(FtQuery));

	init_parser(&p, query, false);
	q->dialect = 2;
	q->squared_l2 = true;		/* as RediSearch's DISTANCE_METRIC L2 */
	q->knn_doc_order = true;	/* as FT.SEARCH without SORTBY */

	skip_ws(&p);
	if (at_end(&p))
		syntax_error(&p, p.pos, "a query (\"*\", a word, @field:... or \"(\")");
	q->filter = normalize_top(parse_or(&p));
	if (accept_str(&p, "=>"))
		q->knn = parse_knn(&p);
	parse_options(&p, q);

	/* what RediSearch says of HYBRID_POLICY and BATCH_SIZE */
	if (q->knn && (q->knn->policy != FT_HYBRID_DEFAULT ||
				   q->knn->has_batch_size) && q->filter == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("hybrid query attributes were sent for a non-hybrid query (character %d)",
						q->knn->location),
				 errdetail("HYBRID_POLICY and BATCH_SIZE apply to a KNN with a filter.")));
	if (q->knn && q->knn->policy == FT_HYBRID_ADHOC_BF &&
		q->knn->has_batch_size)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("BATCH_SIZE is irrelevant for HYBRID_POLICY ADHOC_BF (character %d)",
						q->knn->policy_location)));
	if (q->knn && q->knn->policy == FT_HYBRID_ADHOC_BF && q->knn->has_ef)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("EF_RUNTIME is irrelevant for HYBRID_POLICY ADHOC_BF (character %d)",
						q->knn->policy_location),
				 errdetail("ADHOC_BF computes the exact distance of every doc that passes the filter.")));
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

	init_parser(&p, filter, true);

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

/*-------------------------------------------------------------------------
 *
 * ftparse.c
 *	  The ft query dialect: a subset of RediSearch's DIALECT 2.  Parses a
 *	  query (or ft.search's filter) into an FtQuery tree.  This file is
 *	  the grammar; ftlex.c reads its tokens (ftparse_int.h), and
 *	  ftqueryout.c prints the tree for ft.explain.
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
 * positions are counted incrementally, see FtpCharPosition), checks for
 * interrupts in every loop that can run long, and refuses more than
 * segvec.max_query_terms terms (ERRCODE_PROGRAM_LIMIT_EXCEEDED) and more
 * than FT_MAX_DEPTH levels of nesting (ERRCODE_STATEMENT_TOO_COMPLEX).
 *
 * The compiler (FtCompile, in ftcompile.c) checks every field against the
 * table's columns, quotes column names with quote_identifier() and binds
 * every value as a parameter.
 *
 * src/ft/ftparse.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "ft/ftparse_int.h"

/* ---------------------------------------------------------------------
 * Parser
 * ---------------------------------------------------------------------
 */

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
					name, FtpCharPosition(p, start), p->what)));
}

/* HYBRID_POLICY's value */
static void
read_policy(FtParser *p, FtKnn *knn, int start)
{
	char	   *w;

	if (knn->policy != FT_HYBRID_DEFAULT)
		duplicate_attribute(p, start, "HYBRID_POLICY");
	knn->policy_location = FtpCharPosition(p, start);
	w = FtpReadWord(p);
	if (w != NULL && pg_strcasecmp(w, "BATCHES") == 0)
		knn->policy = FT_HYBRID_BATCHES;
	else if (w != NULL && pg_strcasecmp(w, "ADHOC_BF") == 0)
		knn->policy = FT_HYBRID_ADHOC_BF;
	else
		FtpSyntaxError(p, p->pos, "BATCHES or ADHOC_BF after HYBRID_POLICY");
}

/* attrs after a VECTOR_RANGE, KNN clause or text term: =>{$NAME: value; ...} */
static void
parse_attributes(FtParser *p, FtAttrs *a)
{
	FtpExpectChar(p, '{', "\"{\" after \"=>\"");
	for (;;)
	{
		int			start;
		char	   *name;

		FtpSkipWhiteSpace(p);
		start = p->pos;
		if (FtpPeek(p) != '$')
			FtpSyntaxError(p, start, "an attribute ($name: value)");
		p->pos++;
		name = FtpReadWord(p);
		if (name == NULL)
			FtpSyntaxError(p, start, "an attribute ($name: value)");
		FtpExpectChar(p, ':', "\":\" after the attribute name");
		if (a->yield_as && pg_strcasecmp(name, "YIELD_DISTANCE_AS") == 0)
		{
			if (a->yield_as->literal || a->yield_as->param)
				duplicate_attribute(p, start, "$YIELD_DISTANCE_AS");
			FtpReadNameOrParam(p, a->yield_as, "a name for the distance");
		}
		else if (a->ef && pg_strcasecmp(name, "EF_RUNTIME") == 0)
		{
			if (*a->has_ef)
				duplicate_attribute(p, start, "EF_RUNTIME");
			FtpReadInteger(p, a->ef, "an integer or a $parameter");
			*a->has_ef = true;
		}
		else if (a->epsilon && pg_strcasecmp(name, "EPSILON") == 0)
		{
			if (*a->has_epsilon)
				duplicate_attribute(p, start, "EPSILON");
			FtpReadNumber(p, a->epsilon, "a number or a $parameter", false, NULL);
			*a->has_epsilon = true;
		}
		else if (a->knn && pg_strcasecmp(name, "HYBRID_POLICY") == 0)
			read_policy(p, a->knn, start);
		else if (a->knn && pg_strcasecmp(name, "BATCH_SIZE") == 0)
		{
			if (a->knn->has_batch_size)
				duplicate_attribute(p, start, "BATCH_SIZE");
			FtpReadInteger(p, &a->knn->batch_size, "an integer or a $parameter");
			a->knn->has_batch_size = true;
		}
		else if (a->text && pg_strcasecmp(name, "weight") == 0)
		{
			/* the score of the node's text terms is multiplied by it */
			if (a->node->has_weight)
				duplicate_attribute(p, start, "$weight");
			FtpReadNumber(p, &a->node->weight, "a number or a $parameter",
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
				FtpNotSupported(p, start, "$slop on a phrase",
								"A phrase (\"...\") matches adjacent words in order; give the words without quotes: (a b)=>{$slop: 1}.");
			if (!a->node->has_near)
				a->node->inorder = false;
			a->node->slop = FtpReadSmallInt(p, "a number of words");
			a->node->has_near = true;
		}
		else if (a->text && pg_strcasecmp(name, "inorder") == 0)
		{
			char	   *w;

			FtpSkipWhiteSpace(p);
			w = FtpReadWord(p);
			if (w == NULL || (pg_strcasecmp(w, "true") != 0 &&
							  pg_strcasecmp(w, "false") != 0))
				FtpSyntaxError(p, p->pos, "true or false");
			if (!a->node->has_near)
				a->node->slop = FT_SLOP_ANY;
			a->node->inorder = pg_strcasecmp(w, "true") == 0;
			a->node->has_near = true;
		}
		else if (a->text && pg_strcasecmp(name, "phonetic") == 0)
			FtpNotSupported(p, start, psprintf("attribute $%s", name),
							"segvec has no phonetic matching.");
		else
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("unknown attribute $%s at character %d of the %s",
							name, FtpCharPosition(p, start), p->what)));
		FtpSkipWhiteSpace(p);
		if (FtpPeek(p) == ';')
		{
			p->pos++;
			FtpSkipWhiteSpace(p);
			if (FtpPeek(p) == '}')
				break;
			continue;
		}
		if (FtpPeek(p) == '}')
			break;
		FtpSyntaxError(p, p->pos, "\";\" or \"}\"");
	}
	p->pos++;					/* the '}' */
}

/* Is what follows "=>" then "{" (attributes, not a KNN clause)? */
static bool
at_attributes(FtParser *p)
{
	int			save = p->pos;
	bool		yes = false;

	if (FtpAcceptStr(p, "=>"))
	{
		FtpSkipWhiteSpace(p);
		yes = (FtpPeek(p) == '{');
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
	char		c = FtpPeek(p);

	return FtpIsNameChar(c) || c == '\\' || c == '"' || c == '%' ||
		c == '$' || (c == '*' && (FtpIsNameChar(FtpPeekAt(p, 1)) ||
								  FtpPeekAt(p, 1) == '\\'));
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
	FtNode	   *n = make_node(FT_NODE_TEXT, FtpCharPosition(p, start), NIL);
	bool		first_escaped;
	bool		last_escaped;
	char	   *s;

	n->text_fields = fields ? fields : p->scope;
	n->text_kind = FT_TEXT_WORD;
	n->term.location = n->location;
	FtpCountTerm(p, start);
	if (FtpPeek(p) == '"')
	{
		char	   *text = FtpReadQuoted(p, '"', "a closing \" of the phrase");
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
			FtpSyntaxError(p, start, "a word inside the quotes");
		if (list_length(n->words) == 1)
		{
			n->text_kind = FT_TEXT_WORD;
			n->term = *(FtValue *) linitial(n->words);
			n->words = NIL;
		}
		return n;
	}
	if (FtpPeek(p) == 'w' && FtpPeekAt(p, 1) == '\'')
	{
		p->pos++;
		n->text_kind = FT_TEXT_PATTERN;
		n->term.literal = FtpReadQuoted(p, '\'', "a closing ' of the pattern");
		n->term.wild = FT_WILD_PATTERN;
		return n;
	}
	if (FtpPeek(p) == '%')
	{
		int			level = 0;
		int			i;

		while (FtpPeek(p) == '%')
			p->pos++, level++;
		if (level > 3)
			FtpSyntaxError(p, start, "at most three \"%\" around a fuzzy term");
		n->text_kind = FT_TEXT_FUZZY;
		n->fuzzy = level;
		if (FtpPeek(p) == '$')
			FtpReadParam(p, &n->term);
		else
		{
			n->term.literal = FtpReadBare(p, false, &first_escaped,
										  &last_escaped, NULL);
			if (*n->term.literal == '\0')
				FtpSyntaxError(p, p->pos, "a word after \"%\"");
		}
		for (i = 0; i < level; i++)
			if (FtpPeek(p) != '%')
				FtpSyntaxError(p, p->pos, "the closing \"%\" of the fuzzy term");
			else
				p->pos++;
		return n;
	}
	if (FtpPeek(p) == '*')
	{
		n->term.wild |= FT_WILD_SUFFIX;
		p->pos++;
	}
	if (FtpPeek(p) == '$')
	{
		int			wild = n->term.wild;

		FtpReadParam(p, &n->term);
		n->term.wild = wild;
	}
	else
	{
		s = FtpReadBare(p, false, &first_escaped, &last_escaped, NULL);
		if (*s == '\0')
			FtpSyntaxError(p, start, "a word");
		n->term.literal = s;
	}
	if (FtpPeek(p) == '*')
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

	n->location = FtpCharPosition(p, start);
	p->pos++;					/* the '@' */
	n->field_location = FtpCharPosition(p, p->pos);
	n->field = FtpReadName(p, "a field name after \"@\"");
	fields = list_make1(n->field);
	while (FtpPeek(p) == '|')
	{
		p->pos++;
		if (FtpPeek(p) == '@')
			p->pos++;
		fields = lappend(fields, FtpReadName(p, "a field name after \"|\""));
	}
	FtpExpectChar(p, ':', "\":\" after the field name");
	FtpSkipWhiteSpace(p);
	if ((FtpPeek(p) == '{' || FtpPeek(p) == '[') && list_length(fields) > 1)
		FtpSyntaxError(p, p->pos,
					   "a text term: a tag filter or a range takes one field");
	if (FtpPeek(p) == '{')
	{
		p->pos++;
		n->kind = FT_NODE_TAG;
		for (;;)
		{
			n->tags = lappend(n->tags, FtpReadTag(p));
			FtpSkipWhiteSpace(p);
			if (FtpPeek(p) == '|')
			{
				p->pos++;
				continue;
			}
			if (FtpPeek(p) == '}')
			{
				p->pos++;
				break;
			}
			FtpSyntaxError(p, p->pos, "\"|\" or \"}\"");
		}
	}
	else if (FtpPeek(p) == '[')
	{
		FtpCountTerm(p, start);
		p->pos++;
		if (FtpAcceptKeyword(p, "WITHIN") || FtpAcceptKeyword(p, "CONTAINS") ||
			FtpAcceptKeyword(p, "INTERSECTS") || FtpAcceptKeyword(p, "DISJOINT"))
			FtpNotSupported(p, start, "a GEOSHAPE query",
							"segvec has no GEO or GEOSHAPE fields.");
		if (FtpAcceptKeyword(p, "VECTOR_RANGE"))
		{
			FtAttrs		a;

			n->kind = FT_NODE_VECRANGE;
			FtpReadNumber(p, &n->radius, "a radius (a number or a $parameter)",
						  false, NULL);
			FtpSkipWhiteSpace(p);
			if (FtpPeek(p) != '$')
				FtpSyntaxError(p, p->pos, "a $parameter holding the query vector");
			FtpReadParam(p, &n->vector);
			FtpExpectChar(p, ']', "\"]\"");
			if (FtpAcceptStr(p, "=>"))
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
			FtpSkipWhiteSpace(p);
			if (FtpPeek(p) == '(')
			{
				p->pos++;
				n->lo.exclusive = true;
			}
			FtpReadNumber(p, &n->lo.value,
						  "a number, -inf, +inf, a $parameter or VECTOR_RANGE",
						  true, &n->lo.inf);
			FtpSkipWhiteSpace(p);
			if (FtpPeek(p) == ']' && !n->lo.exclusive && n->lo.inf == 0)
			{
				/* [105]: that value alone */
				p->pos++;
				n->hi = n->lo;
				return n;
			}
			if (FtpPeek(p) == ',')
				p->pos++;
			FtpSkipWhiteSpace(p);
			if (FtpPeek(p) == '(')
			{
				p->pos++;
				n->hi.exclusive = true;
			}
			FtpSkipWhiteSpace(p);
			start = p->pos;
			FtpReadNumber(p, &n->hi.value,
						  "a number, -inf, +inf or a $parameter",
						  true, &n->hi.inf);
			FtpSkipWhiteSpace(p);
			if (isdigit((unsigned char) FtpPeek(p)) || FtpPeek(p) == '$')
			{
				/* [lon lat radius unit]: a GEO range */
				int			save = p->pos;
				int			geo = p->pos;
				char	   *unit;

				while (!FtpAtEnd(p) && !isspace((unsigned char) FtpPeek(p)) &&
					   FtpPeek(p) != ']')
					p->pos++;
				unit = FtpReadWord(p);
				if (unit != NULL &&
					(pg_strcasecmp(unit, "m") == 0 || pg_strcasecmp(unit, "km") == 0 ||
					 pg_strcasecmp(unit, "mi") == 0 || pg_strcasecmp(unit, "ft") == 0))
					FtpNotSupported(p, geo,
									"a GEO range (@field:[lon lat radius unit])",
									"segvec has no GEO fields.");
				p->pos = save;
			}
			if (n->hi.inf < 0)
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("the upper bound of a range cannot be -inf (character %d of the %s)",
								FtpCharPosition(p, start), p->what)));
			FtpExpectChar(p, ']', "\"]\"");
		}
	}
	else
	{
		/* a text term or group restricted to these fields */
		List	   *save = p->scope;
		FtNode	   *t;

		if (FtpPeek(p) == '(' || FtpPeek(p) == '-' || FtpPeek(p) == '~')
		{
			p->scope = fields;
			t = parse_unary(p);
			p->scope = save;
		}
		else if (is_term_start(p))
			t = parse_text_term(p, fields);
		else
			FtpSyntaxError(p, p->pos,
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

	FtpSkipWhiteSpace(p);
	start = p->pos;
	if (p->depth > FT_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_STATEMENT_TOO_COMPLEX),
				 errmsg("%s nested too deeply at character %d",
						p->what, FtpCharPosition(p, start)),
				 errdetail("At most %d levels of parentheses, negations and optional terms are allowed.",
						   FT_MAX_DEPTH)));
	check_stack_depth();
	switch (FtpPeek(p))
	{
		case '-':
			p->pos++;
			p->depth++;
			n = make_node(FT_NODE_NOT, FtpCharPosition(p, start),
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
			FtpExpectChar(p, ')', "\")\" or \"|\"");
			return n;
		case '*':
			if (is_term_start(p))
				return parse_text_term(p, NIL);
			p->pos++;
			return make_node(FT_NODE_ALL, FtpCharPosition(p, start), NIL);
		case '@':
			return parse_field(p);
		default:
			if (is_term_start(p))
				return parse_text_term(p, NIL);
			FtpSyntaxError(p, start,
						   "a query term (a word, \"phrase\", @field:{...}, @field:[...], \"(\", \"-\" or \"*\")");
	}
	return NULL;				/* keep compiler quiet */
}

/* Is there another term to AND with (and not an option keyword)? */
static bool
more_terms(FtParser *p)
{
	char		c;

	FtpSkipWhiteSpace(p);
	c = FtpPeek(p);
	if (c == '@' || c == '(' || c == '-' || c == '~' ||
		(c == '*' && !(FtpPeekAt(p, 1) == '=' && FtpPeekAt(p, 2) == '>')))
		return true;
	if (!is_term_start(p))
		return false;
	return p->depth > 0 || !FtpAtOptionWord(p);
}

/* Juxtaposed terms: their AND */
static FtNode *
parse_and(FtParser *p)
{
	List	   *terms = NIL;
	int			location;

	FtpSkipWhiteSpace(p);
	location = FtpCharPosition(p, p->pos);
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
			(void) FtpAcceptStr(p, "=>");
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

	FtpSkipWhiteSpace(p);
	location = FtpCharPosition(p, p->pos);
	terms = lappend(terms, parse_and(p));
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		FtpSkipWhiteSpace(p);
		if (FtpPeek(p) != '|')
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

	FtpSkipWhiteSpace(p);
	knn->location = FtpCharPosition(p, p->pos);
	FtpExpectChar(p, '[', "\"[\" after \"=>\"");
	if (!FtpAcceptKeyword(p, "KNN"))
	{
		FtpSkipWhiteSpace(p);
		FtpSyntaxError(p, p->pos, "KNN");
	}
	FtpReadInteger(p, &knn->k, "the number of neighbours (an integer or a $parameter)");
	FtpSkipWhiteSpace(p);
	if (FtpPeek(p) != '@')
		FtpSyntaxError(p, p->pos, "\"@\" and the vector field");
	p->pos++;
	knn->field_location = FtpCharPosition(p, p->pos);
	knn->field = FtpReadName(p, "the vector field after \"@\"");
	FtpSkipWhiteSpace(p);
	if (FtpPeek(p) != '$')
		FtpSyntaxError(p, p->pos, "a $parameter holding the query vector");
	FtpReadParam(p, &knn->vector);
	for (;;)
	{
		int			start;

		FtpSkipWhiteSpace(p);
		start = p->pos;
		if (FtpPeek(p) == ']')
		{
			p->pos++;
			break;
		}
		if (FtpAcceptKeyword(p, "EF_RUNTIME"))
		{
			if (knn->has_ef)
				duplicate_attribute(p, start, "EF_RUNTIME");
			FtpReadInteger(p, &knn->ef, "an integer or a $parameter after EF_RUNTIME");
			knn->has_ef = true;
		}
		else if (FtpAcceptKeyword(p, "AS"))
		{
			if (knn->alias.literal || knn->alias.param)
				duplicate_attribute(p, start, "AS");
			FtpReadNameOrParam(p, &knn->alias, "a name after AS");
		}
		else if (FtpAcceptKeyword(p, "HYBRID_POLICY"))
			read_policy(p, knn, start);
		else if (FtpAcceptKeyword(p, "BATCH_SIZE"))
		{
			if (knn->has_batch_size)
				duplicate_attribute(p, start, "BATCH_SIZE");
			FtpReadInteger(p, &knn->batch_size, "an integer or a $parameter after BATCH_SIZE");
			knn->has_batch_size = true;
		}
		else if (FtpAcceptKeyword(p, "EPSILON"))
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("EPSILON at character %d of the %s is a VECTOR_RANGE attribute, not a KNN one",
							FtpCharPosition(p, start), p->what)));
		else
			FtpSyntaxError(p, p->pos, "EF_RUNTIME, HYBRID_POLICY, BATCH_SIZE, AS or \"]\"");
	}
	if (FtpAcceptStr(p, "=>"))
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
	FtpSkipWhiteSpace(p);
	*location = FtpCharPosition(p, p->pos);
	if (FtpPeek(p) == '@')
		p->pos++;
	return FtpReadName(p, what);
}

static void
duplicate_option(FtParser *p, int start, const char *opt)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("%s is given twice (character %d of the %s)",
					opt, FtpCharPosition(p, start), p->what)));
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
		FtpSkipWhiteSpace(p);
		if (FtpAtEnd(p))
			break;
		start = p->pos;
		w = FtpReadWord(p);
		if (w == NULL)
			FtpSyntaxError(p, start,
						   "end of query or an option (LIMIT, RETURN, SORTBY, WITHSCORES, SCORER, DIALECT)");
		if (pg_strcasecmp(w, "LIMIT") == 0)
		{
			if (q->has_limit)
				duplicate_option(p, start, "LIMIT");
			q->has_limit = true;
			FtpReadInteger(p, &q->offset, "the offset of LIMIT (an integer or a $parameter)");
			FtpReadInteger(p, &q->num, "the count of LIMIT (an integer or a $parameter)");
		}
		else if (pg_strcasecmp(w, "RETURN") == 0)
		{
			int			n;
			int			used = 0;

			if (q->has_return)
				duplicate_option(p, start, "RETURN");
			q->has_return = true;
			n = FtpReadSmallInt(p, "the number of RETURN arguments");
			while (used < n)
			{
				FtReturnField *f = palloc0(sizeof(FtReturnField));

				CHECK_FOR_INTERRUPTS();
				f->field = read_option_field(p, &f->location,
											 "a field name to return");
				used++;
				if (used < n && FtpAcceptKeyword(p, "AS"))
				{
					f->alias = FtpReadName(p, "a name after AS");
					used += 2;
				}
				q->returns = lappend(q->returns, f);
			}
			if (used != n)
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("RETURN %d at character %d does not match its %d arguments",
								n, FtpCharPosition(p, start), used)));
		}
		else if (pg_strcasecmp(w, "SORTBY") == 0)
		{
			if (q->has_sortby)
				duplicate_option(p, start, "SORTBY");
			q->has_sortby = true;
			q->sortby = read_option_field(p, &q->sortby_location,
										  "a field name after SORTBY");
			if (FtpAcceptKeyword(p, "DESC"))
				q->sort_desc = true;
			else
				(void) FtpAcceptKeyword(p, "ASC");
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
			FtpSkipWhiteSpace(p);
			q->scorer_location = FtpCharPosition(p, p->pos);
			q->scorer = FtpReadWordExt(p, true);
			if (q->scorer == NULL)
				FtpSyntaxError(p, p->pos, "a scorer name after SCORER");
		}
		else if (pg_strcasecmp(w, "DIALECT") == 0)
		{
			int			vstart;

			FtpSkipWhiteSpace(p);
			vstart = p->pos;
			q->dialect = FtpReadSmallInt(p, "a dialect number");
			if (q->dialect != 2)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("DIALECT %d at character %d is not supported",
								q->dialect, FtpCharPosition(p, vstart)),
						 errhint("Only DIALECT 2 is supported.")));
		}
		else if (pg_strcasecmp(w, "PARAMS") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("PARAMS cannot be given in the query text (character %d)",
							FtpCharPosition(p, start)),
					 errhint("Pass the parameters in the params argument, for example '{\"vec\": [1, 2, 3]}'.")));
		else if (pg_strcasecmp(w, "SLOP") == 0)
		{
			if (q->has_near && q->slop != FT_SLOP_ANY)
				duplicate_option(p, start, "SLOP");
			q->slop = FtpReadSmallInt(p, "a number of words after SLOP");
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
			n = FtpReadSmallInt(p, "the number of INKEYS keys");
			for (i = 0; i < n; i++)
			{
				int			from;

				CHECK_FOR_INTERRUPTS();
				FtpSkipWhiteSpace(p);
				from = p->pos;
				while (!FtpAtEnd(p) && !isspace((unsigned char) FtpPeek(p)))
					p->pos++;
				if (p->pos == from)
					FtpSyntaxError(p, from, "a key of INKEYS");
				q->inkeys = lappend(q->inkeys,
									pnstrdup(p->str + from, p->pos - from));
			}
		}
		else if (pg_strcasecmp(w, "VERBATIM") == 0 ||
				 pg_strcasecmp(w, "NOSTOPWORDS") == 0 ||
				 pg_strcasecmp(w, "EXPANDER") == 0 ||
				 pg_strcasecmp(w, "LANGUAGE") == 0)
			FtpNotSupported(p, start, w,
							"Words are normalised by the text search configuration of the index (ft.create's language).");
		else
		{
			if (FtpOptionWord(w) != NULL)
				FtpNotSupported(p, start, FtpOptionWord(w), NULL);
			FtpSyntaxError(p, start,
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

	FtpSkipWhiteSpace(&p);
	if (FtpAtEnd(&p))
		FtpSyntaxError(&p, p.pos, "a query (\"*\", a word, @field:... or \"(\")");
	q->filter = normalize_top(parse_or(&p));
	if (FtpAcceptStr(&p, "=>"))
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

	FtpSkipWhiteSpace(&p);
	if (FtpAtEnd(&p))
		return NULL;
	n = parse_or(&p);
	FtpSkipWhiteSpace(&p);
	if (!FtpAtEnd(&p))
	{
		if (p.len - p.pos >= 2 && strncmp(p.str + p.pos, "=>", 2) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("KNN cannot be used in the filter of ft.search (character %d)",
							FtpCharPosition(&p, p.pos)),
					 errhint("ft.search does the KNN itself; use ft.query for the full query syntax.")));
		FtpSyntaxError(&p, p.pos, "end of filter, \"|\" or a query term");
	}
	return normalize_top(n);
}

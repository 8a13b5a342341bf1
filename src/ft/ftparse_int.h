/*-------------------------------------------------------------------------
 *
 * ftparse_int.h
 *	  The ft query parser's state and what its files share: ftlex.c
 *	  (characters and tokens: words, names, parameters, numbers, quoted
 *	  strings, tags, and the errors that point at a character) and
 *	  ftparse.c (the grammar).  Not for other subsystems: they call
 *	  FtParseQuery and FtParseFilter (ftquery.h).
 *
 * src/ft/ftparse_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_FTPARSE_INT_H
#define SEGVEC_FTPARSE_INT_H

#include <ctype.h>

#include "nodes/pg_list.h"

#include "compat.h"
#include "ft/ftquery.h"

/* Where a parse is: the query text, the position, the limits' counters */
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
	int			cache_off;		/* FtpCharPosition: a byte offset ... */
	int			cache_chars;	/* ... and the characters before it */
} FtParser;

/* Is the whole text read? */
static inline bool
FtpAtEnd(FtParser *p)
{
	return p->pos >= p->len;
}

/* The next character, '\0' at the end */
static inline char
FtpPeek(FtParser *p)
{
	return FtpAtEnd(p) ? '\0' : p->str[p->pos];
}

/* The character ahead places after the next one, '\0' past the end */
static inline char
FtpPeekAt(FtParser *p, int ahead)
{
	return p->pos + ahead >= p->len ? '\0' : p->str[p->pos + ahead];
}

/* Letters, digits, '_' and non-ASCII bytes make names and words */
static inline bool
FtpIsNameChar(char c)
{
	return isalnum((unsigned char) c) || c == '_' || IS_HIGHBIT_SET(c);
}

/* ftlex.c: characters, errors and limits */
extern int FtpCharPosition(FtParser *p, int off);
extern void FtpSkipWhiteSpace(FtParser *p);
extern SegvecNoReturn void FtpSyntaxError(FtParser *p, int off,
										  const char *expected);
extern SegvecNoReturn void FtpNotSupported(FtParser *p, int off,
										   const char *what, const char *hint);
extern void FtpCountTerm(FtParser *p, int off);

/* ftlex.c: tokens */
extern void FtpExpectChar(FtParser *p, char c, const char *expected);
extern bool FtpAcceptStr(FtParser *p, const char *s);
extern char *FtpReadWordExt(FtParser *p, bool with_dot);
extern char *FtpReadWord(FtParser *p);
extern bool FtpAcceptKeyword(FtParser *p, const char *kw);
extern const char *FtpOptionWord(const char *w);
extern bool FtpAtOptionWord(FtParser *p);
extern char *FtpReadName(FtParser *p, const char *what);
extern void FtpReadParam(FtParser *p, FtValue *v);
extern void FtpReadNameOrParam(FtParser *p, FtValue *v, const char *what);
extern void FtpReadNumber(FtParser *p, FtValue *v, const char *expected,
						  bool allow_inf, int *inf);
extern void FtpReadInteger(FtParser *p, FtValue *v, const char *expected);
extern int FtpReadSmallInt(FtParser *p, const char *expected);
extern char *FtpReadBare(FtParser *p, bool tag, bool *first_escaped,
						 bool *last_escaped, List **parts);
extern char *FtpReadQuoted(FtParser *p, char q, const char *what);
extern FtValue *FtpReadTag(FtParser *p);

#endif							/* SEGVEC_FTPARSE_INT_H */

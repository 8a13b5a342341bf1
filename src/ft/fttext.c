/*-------------------------------------------------------------------------
 *
 * fttext.c
 *	  Full-text helpers that compiled ft.query statements call per row:
 *	  ft._text_near, the SLOP / INORDER test over a tsvector's positions.
 *
 * src/ft/fttext.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

/* The positions of one query term in the document, sorted */
typedef struct TermPositions
{
	int			n;
	int		   *pos;
} TermPositions;

static int
cmp_int(const void *a, const void *b)
{
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	return (x > y) - (x < y);
}

/*
 * The positions in doc of the lexemes of query (each operand of the
 * tsquery is an alternative: a word's lexemes, an OR's words; a prefix
 * operand matches every lexeme it starts), sorted, without duplicates.
 * Returns false if query has no operand (a stop word).
 */
static bool
term_positions(TSVector doc, TSQuery query, TermPositions *tp)
{
	WordEntry  *entries = ARRPTR(doc);
	char	   *lexemes = STRPTR(doc);
	QueryItem  *items = GETQUERY(query);
	char	   *operands = GETOPERAND(query);
	int			cap = 16;
	bool		any = false;
	int			i,
				j,
				k;

	tp->n = 0;
	tp->pos = palloc(sizeof(int) * cap);
	for (i = 0; i < query->size; i++)
	{
		QueryOperand *op;

		if (items[i].type != QI_VAL)
			continue;
		any = true;
		op = &items[i].qoperand;
		for (j = 0; j < doc->size; j++)
		{
			WordEntry  *we = &entries[j];
			WordEntryPos *wp;
			int			npos;

			if (op->prefix ? (we->len < op->length ||
							  memcmp(lexemes + we->pos, operands + op->distance,
									 op->length) != 0)
				: (we->len != op->length ||
				   memcmp(lexemes + we->pos, operands + op->distance,
						  op->length) != 0))
				continue;
			if (!we->haspos)
				continue;
			npos = POSDATALEN(doc, we);
			wp = POSDATAPTR(doc, we);
			for (k = 0; k < npos; k++)
			{
				if (tp->n == cap)
				{
					cap *= 2;
					tp->pos = repalloc(tp->pos, sizeof(int) * cap);
				}
				tp->pos[tp->n++] = WEP_GETPOS(wp[k]);
			}
		}
	}
	if (tp->n > 1)
	{
		qsort(tp->pos, tp->n, sizeof(int), cmp_int);
		for (i = 1, j = 1; i < tp->n; i++)
		{
			if (tp->pos[i] != tp->pos[j - 1])
				tp->pos[j++] = tp->pos[i];
		}
		tp->n = j;
	}
	return any;
}

/*
 * In query order: is there a position of each term, each after the one
 * before, with at most slop words between the first and the last other
 * than the terms themselves?  For each position of term t, the latest
 * start of such a chain ending there (so the narrowest); positions are
 * sorted, so one pass per term with a pointer into the previous term.
 */
static bool
near_in_order(TermPositions *tp, int nterms, int slop)
{
	int		   *start = palloc(sizeof(int) * tp[0].n);
	int			t,
				i;

	for (i = 0; i < tp[0].n; i++)
		start[i] = tp[0].pos[i];
	for (t = 1; t < nterms; t++)
	{
		int		   *next = palloc(sizeof(int) * tp[t].n);
		int			best = -1;	/* latest start before this position */
		int			j = 0;

		for (i = 0; i < tp[t].n; i++)
		{
			while (j < tp[t - 1].n && tp[t - 1].pos[j] < tp[t].pos[i])
			{
				if (start[j] >= 0)
					best = Max(best, start[j]);
				j++;
			}
			next[i] = best;
		}
		pfree(start);
		start = next;
	}
	for (i = 0; i < tp[nterms - 1].n; i++)
	{
		if (start[i] >= 0 &&
			(slop < 0 || tp[nterms - 1].pos[i] - start[i] - (nterms - 1) <= slop))
			return true;
	}
	return false;
}

/* A position of a term, for the window of near_any_order */
typedef struct TermPos
{
	int			pos;
	int			term;
} TermPos;

static int
cmp_termpos(const void *a, const void *b)
{
	const TermPos *x = a;
	const TermPos *y = b;

	if (x->pos != y->pos)
		return (x->pos > y->pos) - (x->pos < y->pos);
	return (x->term > y->term) - (x->term < y->term);
}

/*
 * In any order: the narrowest window of positions holding every term
 * (the smallest range over the merged positions that covers all of
 * them), at most slop words other than the terms.
 */
static bool
near_any_order(TermPositions *tp, int nterms, int slop)
{
	int			total = 0;
	TermPos    *all;
	int		   *count = palloc0(sizeof(int) * nterms);
	int			have = 0;
	int			lo = 0;
	int			t,
				i,
				m = 0;

	if (slop < 0)
		return true;
	for (t = 0; t < nterms; t++)
		total += tp[t].n;
	all = palloc(sizeof(TermPos) * total);
	for (t = 0; t < nterms; t++)
	{
		for (i = 0; i < tp[t].n; i++)
		{
			all[m].pos = tp[t].pos[i];
			all[m].term = t;
			m++;
		}
	}
	qsort(all, total, sizeof(TermPos), cmp_termpos);
	for (i = 0; i < total; i++)
	{
		if (count[all[i].term]++ == 0)
			have++;
		while (have == nterms)
		{
			if (all[i].pos - all[lo].pos - (nterms - 1) <= slop)
				return true;
			if (--count[all[lo].term] == 0)
				have--;
			lo++;
		}
	}
	return false;
}

/*
 * ft._text_near(doc tsvector, terms tsquery[], slop int, inorder bool)
 * -> bool
 *
 * RediSearch's SLOP and INORDER over the positions of a tsvector: true if
 * each term (a tsquery whose operands are its alternatives) occurs in doc
 * so that at most slop other words lie between the first and the last
 * (slop < 0: any number), in the order of terms when inorder.  Terms that
 * are stop words (an empty tsquery) place nothing and are left out;
 * a document without positions never matches.
 */
PG_FUNCTION_INFO_V1(ft_text_near);
Datum
ft_text_near(PG_FUNCTION_ARGS)
{
	TSVector	doc = PG_GETARG_TSVECTOR(0);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	int32		slop = PG_GETARG_INT32(2);
	bool		inorder = PG_GETARG_BOOL(3);
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	TermPositions *tp;
	int			nterms = 0;
	int			i;

	deconstruct_array(arr, TSQUERYOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &nelems);
	tp = palloc(sizeof(TermPositions) * Max(nelems, 1));
	for (i = 0; i < nelems; i++)
	{
		if (nulls[i])
			continue;
		if (!term_positions(doc, DatumGetTSQuery(elems[i]), &tp[nterms]))
			continue;			/* a stop word */
		if (tp[nterms].n == 0)
			PG_RETURN_BOOL(false);
		nterms++;
	}
	if (nterms < 2)
		PG_RETURN_BOOL(true);	/* nothing to place against each other */
	PG_RETURN_BOOL(inorder ? near_in_order(tp, nterms, slop)
				   : near_any_order(tp, nterms, slop));
}

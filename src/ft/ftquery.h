/*-------------------------------------------------------------------------
 *
 * ftquery.h
 *	  The ft query dialect (a subset of RediSearch's DIALECT 2): its parse
 *	  tree, the parser (ftquery.c), and the compiler that turns a parsed
 *	  query into one SQL statement plus a list of bound parameters
 *	  (ftcompile.c), run by the SQL functions of ftsearch.c.
 *
 * The compiler never puts a value into the SQL text: column names are
 * checked against the table and quoted with quote_identifier(), every value
 * (tag, number, vector, radius, limit, key of the returned jsonb) becomes a
 * parameter $n.
 *
 * src/ft/ftquery.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FTQUERY_H
#define FTQUERY_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "kernels/distance.h"

/* ----------------
 * Limits and constants
 * ----------------
 */

/* Nesting depth of parentheses and negations the parser accepts */
#define FT_MAX_DEPTH			64

/* LIMIT when the query gives none (RediSearch's default: LIMIT 0 10) */
#define FT_DEFAULT_LIMIT		10

/* ----------------
 * Parse tree
 * ----------------
 */

/*
 * A value in the query: a literal (its text as written, escapes removed) or
 * a reference to a parameter ($name, looked up in the params jsonb).
 */
typedef struct FtValue
{
	char	   *param;			/* parameter name without '$', or NULL */
	char	   *literal;		/* literal text when param is NULL */
	int			location;		/* 1-based character position */
} FtValue;

typedef enum FtNodeKind
{
	FT_NODE_ALL,				/* '*': every doc */
	FT_NODE_AND,				/* juxtaposition: every child */
	FT_NODE_OR,					/* a | b: any child */
	FT_NODE_NOT,				/* -x: one child */
	FT_NODE_TAG,				/* @f:{a | b} */
	FT_NODE_NUMERIC,			/* @f:[lo hi] */
	FT_NODE_VECRANGE			/* @f:[VECTOR_RANGE r $v] */
} FtNodeKind;

/* One end of a numeric range */
typedef struct FtBound
{
	FtValue		value;			/* number or $param; unused when inf != 0 */
	int			inf;			/* -1: -inf, +1: +inf, 0: a value */
	bool		exclusive;		/* written with '(' */
} FtBound;

typedef struct FtNode
{
	FtNodeKind	kind;
	int			location;		/* 1-based character position */
	List	   *args;			/* AND, OR: FtNode *s; NOT: one FtNode * */
	char	   *field;			/* TAG, NUMERIC, VECRANGE */
	int			field_location;
	List	   *tags;			/* TAG: FtValue *s */
	FtBound		lo;				/* NUMERIC */
	FtBound		hi;
	FtValue		radius;			/* VECRANGE */
	FtValue		vector;
	char	   *yield_as;		/* VECRANGE: $YIELD_DISTANCE_AS, or NULL */
} FtNode;

/* The KNN clause: *=>[KNN k @field $vec EF_RUNTIME ef AS alias] */
typedef struct FtKnn
{
	int			location;
	FtValue		k;
	char	   *field;
	int			field_location;
	FtValue		vector;
	bool		has_ef;
	FtValue		ef;
	char	   *alias;			/* AS / $YIELD_DISTANCE_AS, or NULL */

	/*
	 * ft.search passes its vector and k directly: when vector_datum is not
	 * 0 it is a checked real[] and vector and k are not looked at.
	 */
	Datum		vector_datum;
	int64		k_value;
} FtKnn;

/* One field of RETURN */
typedef struct FtReturnField
{
	char	   *field;
	char	   *alias;			/* AS name, or NULL */
	int			location;
} FtReturnField;

/* A whole query: filter, KNN and options */
typedef struct FtQuery
{
	FtNode	   *filter;			/* NULL: '*', every doc */
	FtKnn	   *knn;			/* NULL: no KNN */
	bool		has_limit;
	FtValue		offset;
	FtValue		num;
	bool		has_return;
	List	   *returns;		/* FtReturnField *s; NIL with has_return is
								 * RETURN 0 */
	bool		has_sortby;
	char	   *sortby;
	int			sortby_location;
	bool		sort_desc;
	int			dialect;		/* 2 */
} FtQuery;

/* ----------------
 * What the compiler needs to know about an index and its table
 * ----------------
 */
typedef struct FtIndexInfo
{
	Oid			indexoid;
	Oid			heapoid;
	char	   *indexname;
	char	   *nspname;		/* the table's schema */
	char	   *relname;		/* the table */
	TupleDesc	tupdesc;		/* the table's columns (a copy) */
	AttrNumber	vecattno;		/* key column: the vector */
	AttrNumber	idattno;		/* first INCLUDE column: the id */
	Oid			idtype;
	SegvecMetric metric;
	char	   *opnspname;		/* schema of the ordering operator */
	char	   *opname;			/* "<->", "<=>" or "<#>" */
	int			dimensions;		/* 0 while the index has no vector */
} FtIndexInfo;

/*
 * Pending upserts of an index, as read from ft.pending_for: one row per id
 * (id text, op "char", vector real[], fields jsonb).  The compiled
 * statement reads them back through ft._pending_rows() while it runs.
 */
typedef struct FtPending
{
	SPITupleTable *rows;
} FtPending;

/* ----------------
 * A compiled query
 * ----------------
 */
typedef struct FtCompiled
{
	StringInfoData sql;			/* returns (id text, distance real, fields
								 * jsonb, dist float8) */
	int			nparams;
	int			maxparams;
	Oid		   *types;
	Datum	   *values;
	int			ef_search;		/* from EF_RUNTIME / the argument; 0: none */
	bool		range_stop;		/* stop at the first row with dist >
								 * radius */
	double		radius;
	bool		with_pending;	/* combines pending upserts */
} FtCompiled;

/* ----------------
 * Prototypes
 * ----------------
 */

/* ftquery.c: parser */
extern FtQuery *FtParseQuery(const char *query);
extern FtNode *FtParseFilter(const char *filter);
extern char *FtQueryToString(FtQuery *q);

/* ftcompile.c */
extern FtCompiled *FtCompile(FtIndexInfo *info, FtQuery *q, Jsonb *params,
							 FtPending *pending);

/* ftsearch.c */
extern FtIndexInfo *FtGetIndexInfo(Oid indexoid);

#endif							/* FTQUERY_H */

/*-------------------------------------------------------------------------
 *
 * ftquery.h
 *	  The ft query dialect (a subset of RediSearch's DIALECT 2): its parse
 *	  tree, the parser (ftparse.c), and the compiler that turns a parsed
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
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"
#include "utils/relcache.h"

#include "kernels/distance.h"

/* ----------------
 * Limits and constants
 * ----------------
 */

/* Nesting depth of parentheses, negations and field scopes accepted */
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
	bool		negate;			/* -$param: the parameter's value negated */
	int			wild;			/* tags and terms: FT_WILD_* bits */
	List	   *parts;			/* a bare tag with $params inside ({t100
								 * $p}): FtValue *s to concatenate */
} FtValue;

/* Wildcards of a tag or term */
#define FT_WILD_PREFIX			0x01	/* abc*: starts with */
#define FT_WILD_SUFFIX			0x02	/* *abc: ends with */
#define FT_WILD_PATTERN			0x04	/* w'a?c*': a pattern */

typedef enum FtNodeKind
{
	FT_NODE_ALL,				/* '*': every doc */
	FT_NODE_AND,				/* juxtaposition: every child */
	FT_NODE_OR,					/* a | b: any child */
	FT_NODE_NOT,				/* -x: one child */
	FT_NODE_TAG,				/* @f:{a | b} */
	FT_NODE_NUMERIC,			/* @f:[lo hi] */
	FT_NODE_VECRANGE,			/* @f:[VECTOR_RANGE r $v] */
	FT_NODE_TEXT				/* a full-text term: word, "phrase", pre*,
								 * %fuzzy%, w'pattern' */
} FtNodeKind;

/* What a full-text term is */
typedef enum FtTextKind
{
	FT_TEXT_WORD,				/* hello, hel*, *llo, *ll* (value.wild) */
	FT_TEXT_PHRASE,				/* "hello world": words adjacent, in order */
	FT_TEXT_FUZZY,				/* %hello% (fuzzy = number of '%') */
	FT_TEXT_PATTERN				/* w'he?lo*' */
} FtTextKind;

/* HYBRID_POLICY of a KNN with a filter */
typedef enum FtHybridPolicy
{
	FT_HYBRID_DEFAULT = 0,		/* not given: segvec's filtered scan */
	FT_HYBRID_BATCHES,			/* the same, named */
	FT_HYBRID_ADHOC_BF			/* exact distances of the filtered docs */
} FtHybridPolicy;

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
	FtValue		yield_as;		/* VECRANGE: $YIELD_DISTANCE_AS (name or
								 * $param); literal and param NULL: none */
	bool		has_epsilon;	/* VECRANGE: $EPSILON given (accepted, the
								 * range is exact) */
	FtValue		epsilon;
	/* TEXT */
	List	   *text_fields;	/* field names (char *), NIL: every TEXT
								 * field of the index */
	FtTextKind	text_kind;
	FtValue		term;			/* WORD, FUZZY, PATTERN: the term */
	List	   *words;			/* PHRASE: FtValue *s */
	int			fuzzy;			/* FUZZY: 1, 2 or 3 */
	bool		optional;		/* ~term: scores, does not filter */
	/* =>{$weight: w}: the score of its text terms is multiplied by w */
	bool		has_weight;
	FtValue		weight;
	/* AND: =>{$slop: n; $inorder: true} (see FT_SLOP_ANY) */
	bool		has_near;
	int			slop;
	bool		inorder;
} FtNode;

/* slop of a $inorder (or INORDER) without $slop: any distance */
#define FT_SLOP_ANY				(-1)

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
	FtValue		alias;			/* AS / $YIELD_DISTANCE_AS (a name or a
								 * $param); literal and param NULL: none */
	FtHybridPolicy policy;		/* HYBRID_POLICY */
	int			policy_location;
	bool		has_batch_size;
	FtValue		batch_size;		/* BATCH_SIZE (accepted, see ftcompile.c) */

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
	bool		withscores;		/* WITHSCORES: fields gets "__score" */
	bool		nocontent;		/* NOCONTENT: fields is NULL */
	bool		has_near;		/* SLOP n and/or INORDER: for every AND */
	int			slop;			/* FT_SLOP_ANY: INORDER alone */
	bool		inorder;
	char	   *scorer;			/* SCORER name, or NULL */
	int			scorer_location;
	bool		squared_l2;		/* report and compare L2 distances squared
								 * (ft.query, as RediSearch); ft.search
								 * keeps the operator's Euclidean value */
	List	   *inkeys;			/* INKEYS: the ids (char *), or NIL */
	bool		has_inkeys;
	bool		knn_doc_order;	/* KNN results without SORTBY in RediSearch's
								 * default order, by score then doc
								 * (ft.query); ft.search: nearest first */
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
	char	   *vectypname;		/* the vector column's type, qualified, when
								 * it is not real[] (query vectors, which are
								 * real[], are cast to it); else NULL */
	int			dimensions;		/* 0 while the index has no vector */
	/* dialect options of the index (reloptions, see FtLoadFieldOptions) */
	List	   *text_fields;	/* TEXT fields: column names (char *) */
	char	   *language;		/* text search configuration of TEXT */
	List	   *casesensitive;	/* TAG fields compared case-sensitively */
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
	bool		range_stop;		/* XXX no longer set: the statement stops
								 * at the radius itself; stop at the
								 * first row with dist >
								 * radius */
	double		radius;
	bool		with_pending;	/* combines pending upserts */
} FtCompiled;

/* ----------------
 * Prototypes
 * ----------------
 */

/* ftparse.c: parser */
extern void FtQueryInit(void);
extern FtQuery *FtParseQuery(const char *query);
extern FtNode *FtParseFilter(const char *filter);

/* ftlex.c: the parser's tokens (the rest is in ftparse_int.h) */
extern PGDLLIMPORT int segvec_max_query_terms;

/* ftqueryout.c */
extern char *FtQueryToString(FtQuery *q);

/* ftcompile.c */
extern FtCompiled *FtCompile(FtIndexInfo *info, FtQuery *q, Jsonb *params,
							 FtPending *pending);
extern void FtLoadFieldOptions(FtIndexInfo *info, Relation index);

/* ftsearch.c */
extern FtIndexInfo *FtGetIndexInfo(Oid indexoid);

/* ftpart.c: the API on partitioned tables and on Citus */
#define FT_FANOUT_NONE			0
#define FT_FANOUT_PARTITIONS	1
#define FT_FANOUT_CITUS			2

extern void FtCheckPartitionedOwner(Oid indexoid, bool stats);
extern Datum FtFanOut(FunctionCallInfo fcinfo, const char *sql);
extern int	FtFanOutKind(Oid indexoid);
extern char *FtTextLiteral(const char *s);
extern void FtCitusSetLocal(Oid heapoid, const char *name, const char *value);
extern char *FtFanOutSource(FunctionCallInfo fcinfo, int kind,
							const char *call, const char *coldefs,
							bool placements);

#endif							/* FTQUERY_H */

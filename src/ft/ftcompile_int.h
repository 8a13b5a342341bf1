/*-------------------------------------------------------------------------
 *
 * ftcompile_int.h
 *	  The ft query compiler's state and the helpers its files share:
 *	  ftcompile.c (the statement, the nodes), ftvalue.c (parameters,
 *	  values and columns), fttextq.c (full-text terms).  Not for other
 *	  subsystems: they call FtCompile (ftquery.h).
 *
 * src/ft/ftcompile_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_FTCOMPILE_INT_H
#define SEGVEC_FTCOMPILE_INT_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "ft/ftquery.h"

/* A name for a distance: KNN's AS / a VECTOR_RANGE's $YIELD_DISTANCE_AS */
typedef struct FtAlias
{
	char	   *name;
	char	   *expr;
} FtAlias;

typedef struct CompileState
{
	FtIndexInfo *info;
	FtQuery    *q;
	Jsonb	   *params;			/* NULL or an object */
	FtCompiled *c;
	char	   *vecop;			/* OPERATOR(schema.<->) */
	char	   *veccol;			/* "t." || quoted vector column */
	char	   *idcol;			/* "t." || quoted id column */
	List	   *aliases;		/* FtAlias * */
	FtNode	   *stop_node;		/* top-level VECTOR_RANGE: the early stop */
	bool		squared;		/* report RediSearch's distances (L2
								 * squared, IP as 1 - dot) */
	char	   *cfg;			/* the TEXT configuration as SQL */
	bool		has_text;		/* the filter has a full-text term */
	StringInfoData rankq;		/* tsquery text of the scored terms */
	bool		weighted;		/* some node has a $weight: rank_groups */
	List	   *rank_groups;	/* RankGroup *s */
	char	   *stop_raw;		/* the last VECTOR_RANGE's operator
								 * expression */
} CompileState;

/*
 * With $weight: the scored terms of one weight over one set of fields
 * (the score is the sum over the groups of weight times the rank of the
 * group's terms in those fields; fttextq.c collects them, FtCompile
 * scores them).
 */
typedef struct RankGroup
{
	List	   *fields;
	double		weight;
	StringInfoData q;
} RankGroup;

/* ftvalue.c */
extern int FtcAddParam(FtCompiled *c, Oid type, Datum value);
extern char *FtcAtChar(int location);
extern char *FtcJsonbScalarText(JsonbValue *jv);
extern List *FtcJsonbArrayElementsList(JsonbValue *jv);
extern char *FtcValueText(CompileState *st, FtValue *v, const char *what);
extern char *FtcTermText(CompileState *st, FtValue *v);
extern int64 FtcValueInt64(CompileState *st, FtValue *v, const char *what);
extern bool FtcParseFinite(const char *s, double *d);
extern int FtcInfWord(const char *s);
extern double FtcValueFloat8(CompileState *st, FtValue *v, const char *what);
extern Datum FtcValueVector(CompileState *st, FtValue *v);
extern List *FtcValueTags(CompileState *st, FtValue *v);
extern AttrNumber FtcFindColumn(CompileState *st, const char *name, int location);
extern char *FtcColumnName(CompileState *st, AttrNumber attno);
extern char *FtcColumnRef(CompileState *st, AttrNumber attno);
extern Oid FtcColumnBaseType(CompileState *st, AttrNumber attno);
extern void FtcCheckVectorField(CompileState *st, const char *field, int location);
extern char *FtcDistanceExpr(CompileState *st, Datum vector);
extern bool FtcNameInList(List *names, const char *name);
extern char *FtcLikePattern(const char *s, int wild);
extern char *FtcLowerText(const char *s);
extern int FtcAddTextArrayParam(CompileState *st, List *list);
extern bool FtcIsDecimalLiteral(const char *t);

/* fttextq.c */
extern char *FtcTsvectorExpr(CompileState *st, List *fields);
extern bool FtcSameFields(List *a, List *b);
extern char *FtcNearCondition(CompileState *st, FtNode *n);
extern char *FtcTextTsquery(CompileState *st, FtNode *n, List **fields);
extern bool FtcHasWeight(FtNode *n);
extern void FtcCollectRankTerms(CompileState *st, FtNode *n, double w);
extern bool FtcHasTextTerm(FtNode *n);
extern void FtcCompileLexemeMatch(CompileState *st, FtNode *n, StringInfo buf);

#endif							/* SEGVEC_FTCOMPILE_INT_H */

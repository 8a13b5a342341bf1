/*-------------------------------------------------------------------------
 *
 * ftvalue.c
 *	  The ft query compiler's parameters, values and columns: each value of
 *	  a query (a tag, a number, a vector, a $name from the PARAMS object)
 *	  checked and added as a parameter $n, never as SQL text; field names
 *	  checked against the table's columns and quoted.
 *
 * src/ft/ftvalue.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <float.h>
#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/int.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/float.h"
#include "utils/formatting.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/varlena.h"

#include "am/am.h"
#include "ft/ftcompile_int.h"
#include "ft/ftquery.h"
#include "merge/merge.h"
#include "store/store.h"

/* Add a parameter; returns its number */
int
FtcAddParam(FtCompiled *c, Oid type, Datum value)
{
	if (c->nparams == c->maxparams)
	{
		c->maxparams = Max(16, c->maxparams * 2);
		if (c->types == NULL)
		{
			c->types = palloc(sizeof(Oid) * c->maxparams);
			c->values = palloc(sizeof(Datum) * c->maxparams);
		}
		else
		{
			c->types = repalloc(c->types, sizeof(Oid) * c->maxparams);
			c->values = repalloc(c->values, sizeof(Datum) * c->maxparams);
		}
	}
	c->types[c->nparams] = type;
	c->values[c->nparams] = value;
	return ++c->nparams;
}

/* " at character N", or nothing for a value that is not in a query text */
char *
FtcAtChar(int location)
{
	return location > 0 ? psprintf(" at character %d", location) : "";
}

/*
 * The value of $name in params; error if it has none, or if it is JSON
 * null (a query has no NULL value to search for).  what says what the
 * value should be, for the hint.
 */
static JsonbValue *
lookup_param(CompileState *st, FtValue *v, const char *what)
{
	JsonbValue *jv = NULL;

	if (st->params != NULL)
		jv = getKeyJsonValueFromContainer(&st->params->root, v->param,
										  strlen(v->param), NULL);
	if (jv == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_PARAMETER),
				 errmsg("no value for parameter $%s%s", v->param,
						FtcAtChar(v->location)),
				 errhint("Give it in params, for example '{\"%s\": ...}'.",
						 v->param)));
	if (jv->type == jbvNull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parameter $%s%s is null", v->param,
						FtcAtChar(v->location)),
				 errdetail("The value of \"%s\" in params is the JSON null.",
						   v->param),
				 errhint("Give \"%s\" %s.", v->param, what)));
	return jv;
}

/* A JSON scalar as text; NULL if jv is not a string, number or boolean */
char *
FtcJsonbScalarText(JsonbValue *jv)
{
	switch (jv->type)
	{
		case jbvString:
			return pnstrdup(jv->val.string.val, jv->val.string.len);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(jv->val.numeric)));
		case jbvBool:
			return pstrdup(jv->val.boolean ? "true" : "false");
		default:
			return NULL;
	}
}

/* The elements of a JSON array (jbvBinary), as a List of JsonbValue * */
List *
FtcJsonbArrayElementsList(JsonbValue *jv)
{
	List	   *elems = NIL;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (jv->type != jbvBinary || !JsonContainerIsArray(jv->val.binary.data))
		return NULL;
	it = JsonbIteratorInit(jv->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM)
		{
			JsonbValue *copy = palloc(sizeof(JsonbValue));

			*copy = v;
			elems = lappend(elems, copy);
		}
	}
	return elems;
}

/* The text of a literal, or of a scalar parameter */
char *
FtcValueText(CompileState *st, FtValue *v, const char *what)
{
	JsonbValue *jv;
	char	   *s;

	if (v->param == NULL)
		return v->literal;
	jv = lookup_param(st, v, what);
	s = FtcJsonbScalarText(jv);
	if (s == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parameter $%s%s must be %s", v->param,
						FtcAtChar(v->location), what)));
	if (v->negate)
	{
		/* -$p: the value with its sign flipped */
		if (*s == '-')
			s = s + 1;
		else if (*s == '+')
			s = psprintf("-%s", s + 1);
		else
			s = psprintf("-%s", s);
	}
	return s;
}

/* The word of a text term: never empty (to_tsquery cannot say '') */
char *
FtcTermText(CompileState *st, FtValue *v)
{
	char	   *s = FtcValueText(st, v, "a string");

	if (*s == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parameter $%s%s is empty: a text term needs a word",
						v->param ? v->param : "", FtcAtChar(v->location))));
	return s;
}

/* A non-negative integer (KNN's k, EF_RUNTIME, LIMIT) */
int64
FtcValueInt64(CompileState *st, FtValue *v, const char *what)
{
	char	   *s = FtcValueText(st, v, "a non-negative integer");
	char	   *end;
	int64		n;

	errno = 0;
	n = strtoi64(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s%s must be a non-negative integer, not \"%s\"",
						what, FtcAtChar(v->location), s)));
	return n;
}

/* Is s a number strtod takes whole (no inf, no nan)? Sets *d. */
bool
FtcParseFinite(const char *s, double *d)
{
	char	   *end;

	errno = 0;
	*d = strtod(s, &end);
	return end != s && *end == '\0' && errno != ERANGE && isfinite(*d);
}

/* -1, +1 if s says -inf or +inf (inf, infinity, any case), else 0 */
int
FtcInfWord(const char *s)
{
	int			sign = 1;

	if (*s == '-' || *s == '+')
		sign = (*s++ == '-') ? -1 : 1;
	if (pg_strcasecmp(s, "inf") == 0 || pg_strcasecmp(s, "infinity") == 0)
		return sign;
	return 0;
}

/* A finite float8 (VECTOR_RANGE's radius) */
double
FtcValueFloat8(CompileState *st, FtValue *v, const char *what)
{
	char	   *s = FtcValueText(st, v, "a number");
	double		d;

	if (!FtcParseFinite(s, &d))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s%s must be a finite number, not \"%s\"",
						what, FtcAtChar(v->location), s)));
	return d;
}

/*
 * Decode base64 (RFC 4648, '+/' or URL-safe '-_', '=' padding optional,
 * white space ignored).  Returns false on a malformed string.
 */
static bool
decode_base64(const char *src, int len, char **out, int *outlen)
{
	char	   *dst = palloc(len / 4 * 3 + 3);
	uint32		acc = 0;
	int			bits = 0;
	int			n = 0;
	int			pad = 0;
	int			i;

	for (i = 0; i < len; i++)
	{
		unsigned char ch = src[i];
		int			val;

		if (isspace(ch))
			continue;
		if (ch == '=')
		{
			pad++;
			continue;
		}
		if (pad > 0)
			return false;		/* data after padding */
		if (ch >= 'A' && ch <= 'Z')
			val = ch - 'A';
		else if (ch >= 'a' && ch <= 'z')
			val = ch - 'a' + 26;
		else if (ch >= '0' && ch <= '9')
			val = ch - '0' + 52;
		else if (ch == '+' || ch == '-')
			val = 62;
		else if (ch == '/' || ch == '_')
			val = 63;
		else
			return false;
		acc = (acc << 6) | val;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			dst[n++] = (char) ((acc >> bits) & 0xFF);
		}
	}
	/* leftover bits must be zero padding of a final partial group */
	if (bits >= 6 || (acc & ((1 << bits) - 1)) != 0 || pad > 2)
		return false;
	*out = dst;
	*outlen = n;
	return true;
}

/*
 * A query vector: a JSON array of numbers, or a string of base64 of
 * little-endian float32 values (Redis' FLOAT32 blob).  Checked like any
 * vector, and against the index's dimension.  Returns a real[] datum.
 */
Datum
FtcValueVector(CompileState *st, FtValue *v)
{
	JsonbValue *jv;
	Datum	   *elems;
	int			n = 0;
	ArrayType  *arr;
	int			dim;
	List	   *list;
	ListCell   *lc;

	jv = lookup_param(st, v, "a vector: a JSON array of numbers, or a base64 string of little-endian float32 values");
	if (jv->type == jbvString)
	{
		char	   *bytes;
		int			nbytes;
		int			i;

		if (!decode_base64(jv->val.string.val, jv->val.string.len,
						   &bytes, &nbytes) || nbytes == 0 || nbytes % 4 != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("parameter $%s%s is not a vector: a string must be base64 of little-endian float32 values",
							v->param, FtcAtChar(v->location)),
					 (jv->val.string.len > 0 && jv->val.string.val[0] == '[') ?
					 errhint("Give the vector as a JSON array of numbers, not as a string: {\"%s\": [1, 2, 3]}.",
							 v->param) : 0));
		n = nbytes / 4;
		elems = palloc(sizeof(Datum) * n);
		for (i = 0; i < n; i++)
		{
			const unsigned char *b = (const unsigned char *) bytes + i * 4;
			uint32		u = (uint32) b[0] | ((uint32) b[1] << 8) |
				((uint32) b[2] << 16) | ((uint32) b[3] << 24);
			float4		f;

			memcpy(&f, &u, sizeof(f));
			elems[i] = Float4GetDatum(f);
		}
	}
	else if ((list = FtcJsonbArrayElementsList(jv)) != NIL)
	{
		elems = palloc(sizeof(Datum) * list_length(list));
		foreach(lc, list)
		{
			JsonbValue *e = lfirst(lc);
			double		d;

			if (e->type != jbvNumeric)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("parameter $%s%s is not a vector: element %d is not a number",
								v->param, FtcAtChar(v->location), n + 1)));
			d = DatumGetFloat8(DirectFunctionCall1(numeric_float8,
												   NumericGetDatum(e->val.numeric)));
			if (!isfinite(d) || fabs(d) > FLT_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("parameter $%s%s is not a vector: element %d is out of range for type real",
								v->param, FtcAtChar(v->location), n + 1)));
			elems[n++] = Float4GetDatum((float4) d);
		}
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parameter $%s%s is not a vector", v->param,
						FtcAtChar(v->location)),
				 errhint("Give a JSON array of numbers, or a base64 string of little-endian float32 values.")));

	arr = construct_array(elems, n, FLOAT4OID, sizeof(float4),
						  true, TYPALIGN_INT);
	(void) SegvecArrayGetVector(arr, &dim);
	if (st->info->dimensions > 0 && dim != st->info->dimensions)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("query vector has %d dimensions, index \"%s\" has %d",
						dim, st->info->indexname, st->info->dimensions)));
	return PointerGetDatum(arr);
}

/* The tags of one FtValue: a literal, or a scalar or array parameter */
List *
FtcValueTags(CompileState *st, FtValue *v)
{
	JsonbValue *jv;
	List	   *elems;
	List	   *tags = NIL;
	ListCell   *lc;

	if (v->parts != NIL)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		foreach(lc, v->parts)
			appendStringInfoString(&buf,
								   FtcValueText(st, lfirst(lc), "a string or a number"));
		return list_make1(buf.data);
	}
	if (v->param == NULL)
		return list_make1(v->literal);
	jv = lookup_param(st, v, "a string, a number or an array of them");
	if ((elems = FtcJsonbArrayElementsList(jv)) != NIL)
	{
		foreach(lc, elems)
		{
			char	   *s = FtcJsonbScalarText(lfirst(lc));

			if (s == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("parameter $%s%s must hold strings or numbers",
								v->param, FtcAtChar(v->location))));
			tags = lappend(tags, s);
		}
		return tags;
	}
	return list_make1(FtcValueText(st, v, "a string, a number or an array of them"));
}

/* The column named name, or an "unknown field" error */
AttrNumber
FtcFindColumn(CompileState *st, const char *name, int location)
{
	TupleDesc	td = st->info->tupdesc;
	int			i;

	for (i = 0; i < td->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(td, i);

		if (!attr->attisdropped && strcmp(NameStr(attr->attname), name) == 0)
			return i + 1;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("unknown field \"%s\"%s", name, FtcAtChar(location)),
			 errdetail("Table \"%s\" has no column \"%s\".",
					   st->info->relname, name)));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

char *
FtcColumnName(CompileState *st, AttrNumber attno)
{
	return NameStr(TupleDescAttr(st->info->tupdesc, attno - 1)->attname);
}

/* "t." and the quoted column */
char *
FtcColumnRef(CompileState *st, AttrNumber attno)
{
	return psprintf("t.%s", quote_identifier(FtcColumnName(st, attno)));
}

Oid
FtcColumnBaseType(CompileState *st, AttrNumber attno)
{
	return getBaseType(TupleDescAttr(st->info->tupdesc, attno - 1)->atttypid);
}

/* Check that field is the index's vector column */
void
FtcCheckVectorField(CompileState *st, const char *field, int location)
{
	AttrNumber	attno = FtcFindColumn(st, field, location);

	if (attno != st->info->vecattno)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("field \"%s\"%s is not the vector field of index \"%s\"",
						field, FtcAtChar(location), st->info->indexname),
				 errhint("The vector field of the index is \"%s\".",
						 FtcColumnName(st, st->info->vecattno))));
}

/* The distance expression "(t.vec OP $n)" for a new vector parameter */
char *
FtcDistanceExpr(CompileState *st, Datum vector)
{
	int			n = FtcAddParam(st->c, FLOAT4ARRAYOID, vector);

	/* a column of another type (pgvector's) is compared with its own type */
	if (st->info->vectypname != NULL)
		return psprintf("(%s %s CAST($%d AS %s))", st->veccol, st->vecop, n,
						st->info->vectypname);
	return psprintf("(%s %s $%d)", st->veccol, st->vecop, n);
}

/* Is the name in the list of names? */
bool
FtcNameInList(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp(lfirst(lc), name) == 0)
			return true;
	return false;
}

/* s with LIKE's special characters escaped (backslash is the escape) */
static void
append_like_literal(StringInfo buf, const char *s)
{
	for (; *s; s++)
	{
		if (*s == '%' || *s == '_' || *s == '\\')
			appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, *s);
	}
}

/*
 * The LIKE pattern of a wildcard tag or term: FT_WILD_PREFIX (abc*),
 * FT_WILD_SUFFIX (*abc), both (*abc*), or FT_WILD_PATTERN (w'a?c*': '*'
 * any characters, '?' one, '\' escapes).
 */
char *
FtcLikePattern(const char *s, int wild)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (wild & FT_WILD_PATTERN)
	{
		for (; *s; s++)
		{
			if (*s == '\\' && s[1] != '\0')
			{
				s++;
				append_like_literal(&buf, pnstrdup(s, 1));
			}
			else if (*s == '*')
				appendStringInfoChar(&buf, '%');
			else if (*s == '?')
				appendStringInfoChar(&buf, '_');
			else if (*s == '%' || *s == '_')
			{
				appendStringInfoChar(&buf, '\\');
				appendStringInfoChar(&buf, *s);
			}
			else
				appendStringInfoChar(&buf, *s);
		}
		return buf.data;
	}
	if (wild & FT_WILD_SUFFIX)
		appendStringInfoChar(&buf, '%');
	append_like_literal(&buf, s);
	if (wild & FT_WILD_PREFIX)
		appendStringInfoChar(&buf, '%');
	return buf.data;
}

char *
FtcLowerText(const char *s)
{
	return str_tolower(s, strlen(s), DEFAULT_COLLATION_OID);
}

/* A text[] parameter of the strings in list; returns its number */
int
FtcAddTextArrayParam(CompileState *st, List *list)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(list_length(list), 1));
	ListCell   *lc;
	int			i = 0;

	foreach(lc, list)
		elems[i++] = CStringGetTextDatum(lfirst(lc));
	return FtcAddParam(st->c, TEXTARRAYOID,
					 PointerGetDatum(construct_array(elems, i, TEXTOID, -1,
													 false, TYPALIGN_INT)));
}

/* Is t a decimal number: [+-]digits[.digits][e[+-]digits]? */
bool
FtcIsDecimalLiteral(const char *t)
{
	const char *p = t;
	bool		digits = false;

	if (*p == '+' || *p == '-')
		p++;
	for (; isdigit((unsigned char) *p); p++)
		digits = true;
	if (*p == '.')
	{
		for (p++; isdigit((unsigned char) *p); p++)
			digits = true;
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E')
	{
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char) *p))
			return false;
		while (isdigit((unsigned char) *p))
			p++;
	}
	return *p == '\0';
}

/*-------------------------------------------------------------------------
 *
 * segvecvalidate.c
 *	  amvalidate for segvec: check an operator class's definition.
 *
 * A segvec operator family has, per metric:
 *
 * - support function 1, the distance function float8(real[], real[]),
 *   registered for the input type of segvec's own classes (anyelement) or
 *   of a class for real[];
 * - for each column type T other than real[] it can index, support
 *   function 2, real[](T), registered for (T, T): it turns a value of T
 *   into the vector (the companion segvec_pgvector adds these);
 * - one ORDER BY operator, strategy 1, (T, T) -> float8 for real[] and for
 *   each such T.
 *
 * An operator class needs the distance function and an ordering operator
 * for its input type (real[] for a class of anyelement).
 *
 * A filter column's family (integer_ops, text_ops ...) has no support
 * functions and only search operators with btree's strategy numbers (1 <,
 * 2 <=, 3 =, 4 >=, 5 >) on the types segvecfilter.c keeps; its classes
 * need equality on their own type.  A label array's family
 * (int4_array_ops, text_array_ops) has GIN's array operators on anyarray
 * (1 &&, 2 @>, 3 <@, 4 =) and needs &&.
 *
 * src/am/segvecvalidate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/stratnum.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "am/am.h"
#include "store/store.h"

/* Does the family have support function 2 for type? */
static bool
has_input_proc(CatCList *proclist, Oid type)
{
	int			i;

	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform =
			(Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		if (procform->amprocnum == SEGVEC_INPUT_PROC &&
			procform->amproclefttype == type &&
			procform->amprocrighttype == type)
			return true;
	}
	return false;
}

/*
 * The operator class of a filter column (int4_ops ...): no support
 * functions; search operators only, with btree's strategy numbers,
 * returning bool, on types segvec keeps as filter values; and equality on
 * the class's own type.
 */
static bool
validate_filter_class(const char *opclassname, Oid opcintype,
					  CatCList *proclist, CatCList *oprlist)
{
	bool		result = true;
	bool		has_eq = false;	/* equality (labels: overlap) */
	bool		labels = (opcintype == INT4ARRAYOID ||
						  opcintype == TEXTARRAYOID);
	int			i;

	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform =
			(Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("segvec filter operator family contains function %s with support number %d, which a filter column does not use",
						format_procedure(procform->amproc),
						procform->amprocnum)));
		result = false;
	}
	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform =
			(Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		if (labels)
		{
			/* a label array's family: GIN's array operators on anyarray */
			if (oprform->amoppurpose != AMOP_SEARCH ||
				oprform->amopstrategy < SEGVEC_LABELS_OVERLAP ||
				oprform->amopstrategy > SEGVEC_LABELS_EQUAL ||
				oprform->amoplefttype != ANYARRAYOID ||
				oprform->amoprighttype != ANYARRAYOID ||
				!check_amop_signature(oprform->amopopr, BOOLOID,
									  ANYARRAYOID, ANYARRAYOID))
			{
				ereport(INFO,
						(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
						 errmsg("segvec label array operator family contains operator %s with invalid strategy number %d, purpose or signature",
								format_operator(oprform->amopopr),
								oprform->amopstrategy)));
				result = false;
			}
			else if (oprform->amopstrategy == SEGVEC_LABELS_OVERLAP)
				has_eq = true;
			continue;
		}
		if (oprform->amoppurpose != AMOP_SEARCH ||
			oprform->amopstrategy < BTLessStrategyNumber ||
			oprform->amopstrategy > BTGreaterStrategyNumber ||
			!SegvecFilterTypeSupported(oprform->amoplefttype) ||
			!SegvecFilterTypeSupported(oprform->amoprighttype) ||
			!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype,
								  oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("segvec filter operator family contains operator %s with invalid strategy number %d, purpose or signature",
							format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
			continue;
		}
		if (oprform->amopstrategy == BTEqualStrategyNumber &&
			oprform->amoplefttype == opcintype &&
			oprform->amoprighttype == opcintype)
			has_eq = true;
	}
	if (!has_eq)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("segvec operator class \"%s\" is missing its equality (or, for a label array, overlap) operator",
						opclassname)));
		result = false;
	}
	return result;
}

/*
 * Is this a vector family: has it a distance function or an ordering
 * operator?  (A filter column's family has neither.)
 */
static bool
is_vector_family(CatCList *proclist, CatCList *oprlist)
{
	int			i;

	for (i = 0; i < proclist->n_members; i++)
		if (((Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple))->amprocnum ==
			SEGVEC_DISTANCE_PROC)
			return true;
	for (i = 0; i < oprlist->n_members; i++)
		if (((Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple))->amoppurpose ==
			AMOP_ORDER)
			return true;
	return false;
}

bool
segvecvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	Oid			optype;			/* type of the class's ordering operator */
	char	   *opclassname;
	CatCList   *proclist,
			   *oprlist;
	int			i;
	bool		has_proc = false;
	bool		has_op = false;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);
	optype = (opcintype == ANYELEMENTOID) ? FLOAT4ARRAYOID : opcintype;

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));

	if (SegvecFilterTypeSupported(opcintype) &&
		!is_vector_family(proclist, oprlist))
	{
		result = validate_filter_class(opclassname, opcintype, proclist,
									   oprlist);
		ReleaseCatCacheList(oprlist);
		ReleaseCatCacheList(proclist);
		ReleaseSysCache(classtup);
		return result;
	}

	if (optype != FLOAT4ARRAYOID && !has_input_proc(proclist, optype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("segvec operator class \"%s\" is for type %s, but its operator family has no support function %d for that type",
						opclassname, format_type_be(optype),
						SEGVEC_INPUT_PROC)));
		result = false;
	}

	for (i = 0; i < proclist->n_members; i++)
	{
		HeapTuple	proctup = &proclist->members[i]->tuple;
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(proctup);
		bool		ok;

		switch (procform->amprocnum)
		{
			case SEGVEC_DISTANCE_PROC:
				ok = procform->amproclefttype == procform->amprocrighttype &&
					check_amproc_signature(procform->amproc, FLOAT8OID, true,
										   2, 2, FLOAT4ARRAYOID,
										   FLOAT4ARRAYOID);
				if (ok && (procform->amproclefttype == opcintype ||
						   procform->amproclefttype == ANYELEMENTOID))
					has_proc = true;
				break;
			case SEGVEC_INPUT_PROC:
				ok = procform->amproclefttype == procform->amprocrighttype &&
					procform->amproclefttype != FLOAT4ARRAYOID &&
					check_amproc_signature(procform->amproc, FLOAT4ARRAYOID,
										   true, 1, 1,
										   procform->amproclefttype);
				break;
			default:
				ereport(INFO,
						(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
						 errmsg("segvec operator family contains function %s with invalid support number %d",
								format_procedure(procform->amproc),
								procform->amprocnum)));
				result = false;
				continue;
		}
		if (!ok)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("segvec operator family contains function %s with wrong signature for support number %d",
							format_procedure(procform->amproc),
							procform->amprocnum)));
			result = false;
		}
	}

	for (i = 0; i < oprlist->n_members; i++)
	{
		HeapTuple	oprtup = &oprlist->members[i]->tuple;
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(oprtup);
		Oid			lefttype = oprform->amoplefttype;

		if (oprform->amopstrategy != SEGVEC_ORDERBY_STRATEGY ||
			oprform->amoppurpose != AMOP_ORDER)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("segvec operator family contains operator %s with invalid strategy number %d or purpose",
							format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
			continue;
		}
		if (!check_amop_signature(oprform->amopopr, FLOAT8OID,
								  lefttype, oprform->amoprighttype) ||
			lefttype != oprform->amoprighttype ||
			(lefttype != FLOAT4ARRAYOID &&
			 !has_input_proc(proclist, lefttype)))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("segvec operator family contains operator %s with wrong signature",
							format_operator(oprform->amopopr)),
					 errdetail("Its operands must both be real[], or both of a type the family has support function %d for.",
							   SEGVEC_INPUT_PROC)));
			result = false;
			continue;
		}
		if (lefttype == optype)
			has_op = true;
	}

	if (!has_proc || !has_op)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("segvec operator class \"%s\" is missing its ordering operator or distance function",
						opclassname)));
		result = false;
	}

	ReleaseCatCacheList(oprlist);
	ReleaseCatCacheList(proclist);
	ReleaseSysCache(classtup);

	return result;
}

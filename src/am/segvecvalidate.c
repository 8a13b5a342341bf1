/*-------------------------------------------------------------------------
 *
 * segvecvalidate.c
 *	  amvalidate for segvec: check an operator class's definition.
 *
 * A segvec operator class has exactly one operator, strategy 1, an ORDER
 * BY operator (real[], real[]) -> float8, and one support function,
 * number 1, the distance function float8(real[], real[]) that the
 * operator computes.
 *
 * src/am/segvecvalidate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "am/am.h"
#include "store/store.h"

bool
segvecvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
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

	if (opcintype != FLOAT4ARRAYOID)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("segvec operator class \"%s\" must be for type real[]",
						opclassname)));
		result = false;
	}

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	for (i = 0; i < proclist->n_members; i++)
	{
		HeapTuple	proctup = &proclist->members[i]->tuple;
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(proctup);

		if (procform->amprocnum != SEGVEC_DISTANCE_PROC)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("segvec operator family contains function %s with invalid support number %d",
							format_procedure(procform->amproc),
							procform->amprocnum)));
			result = false;
			continue;
		}
		if (!check_amproc_signature(procform->amproc, FLOAT8OID, true,
									2, 2, FLOAT4ARRAYOID, FLOAT4ARRAYOID))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("segvec operator family contains function %s with wrong signature for support number %d",
							format_procedure(procform->amproc),
							procform->amprocnum)));
			result = false;
			continue;
		}
		has_proc = true;
	}

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	for (i = 0; i < oprlist->n_members; i++)
	{
		HeapTuple	oprtup = &oprlist->members[i]->tuple;
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(oprtup);

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
								  oprform->amoplefttype,
								  oprform->amoprighttype) ||
			oprform->amoplefttype != FLOAT4ARRAYOID ||
			oprform->amoprighttype != FLOAT4ARRAYOID)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("segvec operator family contains operator %s with wrong signature",
							format_operator(oprform->amopopr))));
			result = false;
			continue;
		}
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

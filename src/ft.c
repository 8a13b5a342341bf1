/*-------------------------------------------------------------------------
 *
 * ft.c
 *	  The ft schema's C functions: the RediSearch-style API over segvec
 *	  indexes.
 *
 * src/ft.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "keymap.h"
#include "segvec.h"

/*
 * SegvecOpenIndex: open the index relid with the given lock, checking that
 * it is a segvec index and, if owner is true, that the current user owns
 * its table.  Errors otherwise.
 */
Relation
SegvecOpenIndex(Oid relid, LOCKMODE lockmode, bool owner)
{
	Relation	index;

	index = relation_open(relid, lockmode);
	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_indam == NULL || index->rd_indam->ambuild != segvecbuild)
	{
		char	   *name = pstrdup(RelationGetRelationName(index));

		relation_close(index, lockmode);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a segvec index", name)));
	}
	if (owner)
	{
		Oid			heapid = index->rd_index->indrelid;

#if PG_VERSION_NUM >= 160000
		if (!object_ownercheck(RelationRelationId, heapid, GetUserId()))
#else
		if (!pg_class_ownercheck(heapid, GetUserId()))
#endif
			aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE,
						   get_rel_name(heapid));
	}
	return index;
}

/*
 * SegvecIndexGetHeap: the table of index relid, after checking that relid
 * is an index at all (so a table or a bad OID gets a clear error, not a
 * cache lookup failure).  The segvec check comes with SegvecOpenIndex.
 */
Oid
SegvecIndexGetHeap(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", relid)));
	if (relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a segvec index", get_rel_name(relid))));
	return IndexGetRelation(relid, false);
}

/*
 * ft.compact(index regclass) -> (docs_compacted bigint,
 *	 segments_created int, segments_merged int)
 *
 * Compacts the index now, in this backend: every doc in the mutable
 * segment when the call starts goes into immutable graph segments, then
 * segments are merged by the tiered policy, then a keymap snapshot is
 * written.  Requires ownership of the
 * table.  Waits for a VACUUM or another compaction of the index to end.
 */
PG_FUNCTION_INFO_V1(ft_compact);
Datum
ft_compact(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	Relation	heap;
	SegvecCompactStats stats;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/* the table first, as everything else locks it before its indexes */
	heap = relation_open(SegvecIndexGetHeap(relid), AccessShareLock);
	index = SegvecOpenIndex(relid, RowExclusiveLock, true);

	SegvecCompact(index, &stats);

	/* the keymap snapshot, once, after the drain */
	SegvecKeymapSnapshot(index);

	relation_close(index, RowExclusiveLock);
	relation_close(heap, AccessShareLock);

	values[0] = Int64GetDatum(stats.docs_compacted);
	values[1] = Int32GetDatum(stats.segments_created);
	values[2] = Int32GetDatum(stats.segments_merged);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

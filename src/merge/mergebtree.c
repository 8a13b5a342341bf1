/*-------------------------------------------------------------------------
 *
 * mergebtree.c
 *	  The btree guard: whether a table has the btree on its id column that
 *	  a merge probes (ft.has_key_btree_index), and building it before a
 *	  merge when it is missing (segvec.index_before_merge).
 *
 * src/merge/mergebtree.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "hooks/testhooks.h"
#include "jobs/jobs.h"
#include "merge/merge.h"
#include "store/store.h"

/*
 * ft.has_key_btree_index(tbl regclass, col name) -> boolean
 *
 * Whether tbl has a btree a merge can probe on col.  Catalog look-ups
 * only; a column that does not exist gives false.
 */
PG_FUNCTION_INFO_V1(ft_has_key_btree_index);
Datum
ft_has_key_btree_index(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Name		col = PG_GETARG_NAME(1);
	Relation	rel;
	AttrNumber	attnum;
	bool		result;

	rel = relation_open(relid, AccessShareLock);
	attnum = get_attnum(relid, NameStr(*col));
	result = attnum > 0 && OidIsValid(SegvecFindKeyBtree(rel, attnum, NULL));
	relation_close(rel, AccessShareLock);
	PG_RETURN_BOOL(result);
}

/*
 * create_btree: CREATE [UNIQUE] INDEX ON the id column, as the current
 * user.  With unique, a duplicate id makes it fail; then returns false and
 * *detail says which key (the subtransaction is rolled back).  Other
 * errors propagate.  SPI must be connected.
 */
static bool
create_btree(MergeTarget *t, bool unique, char **detail)
{
	char	   *sql;
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;

	sql = psprintf("CREATE %sINDEX ON %s (%s)", unique ? "UNIQUE " : "",
				   t->qualname, quote_identifier(t->idname));
	if (!unique)
	{
		if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create index: %s", sql);
		return true;
	}

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create index: %s", sql);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		/*
		 * On a partitioned table a unique index must include the partition
		 * key: when the id is not (all of) it, the btree is plain.
		 */
		if (t->partitioned && edata->sqlerrcode == ERRCODE_FEATURE_NOT_SUPPORTED)
		{
			t->id_not_partition_key = true;
			*detail = pstrdup(edata->message);
		}
		else if (edata->sqlerrcode != ERRCODE_UNIQUE_VIOLATION)
			ReThrowError(edata);
		else
			*detail = edata->detail ? pstrdup(edata->detail) : NULL;
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/*
 * MergeEnsureKeyBtree: make sure the table has the btree a merge probes.
 * Returns whether the MERGE may be planned to probe it (see the file
 * header); sets *built when this call built it.
 *
 * With segvec.index_before_merge on, a missing btree is built as the
 * table's owner, unique if the ids are unique, otherwise plain with a
 * WARNING.  With it off, warns that the merge reads the whole table.  The
 * build happens in the caller's transaction: if the merge then fails, the
 * build is rolled back with it.  SPI must be connected.
 */
bool
MergeEnsureKeyBtree(MergeTarget *t, bool *built)
{
	Relation	heap;
	Oid			btree;
	bool		usable;
	SavedIdentity saved;
	char	   *detail = NULL;
	bool		unique;

	*built = false;
	heap = relation_open(t->heapoid, NoLock);
	btree = SegvecFindKeyBtree(heap, t->idatt, &usable);
	relation_close(heap, NoLock);
	if (OidIsValid(btree))
		return usable;

	if (!segvec_index_before_merge)
	{
		ereport(WARNING,
				(errmsg("table \"%s\" has no btree index on its id column \"%s\"; this merge reads the whole table",
						t->relname, t->idname),
				 errhint("Create one with CREATE UNIQUE INDEX CONCURRENTLY ON %s (%s), or set segvec.index_before_merge = on.",
						 t->qualname, quote_identifier(t->idname))));
		return false;
	}

	/*
	 * One builder at a time (the lock conflicts with itself and with
	 * writers, as the build would); then look again, another one may have
	 * just committed it.
	 */
	LockRelationOid(t->heapoid, ShareRowExclusiveLock);
	heap = relation_open(t->heapoid, NoLock);
	btree = SegvecFindKeyBtree(heap, t->idatt, &usable);
	relation_close(heap, NoLock);
	if (OidIsValid(btree))
		return usable;

	MergeIdentityPush(&saved, t->owner);
	unique = create_btree(t, true, &detail);
	if (!unique)
		(void) create_btree(t, false, NULL);
	MergeIdentityPop(&saved);
	CommandCounterIncrement();

	heap = relation_open(t->heapoid, NoLock);
	btree = SegvecFindKeyBtree(heap, t->idatt, &usable);
	relation_close(heap, NoLock);
	if (!OidIsValid(btree))
		elog(ERROR, "btree built on \"%s\" (%s) is not found",
			 t->relname, t->idname);
	*built = true;

	if (unique)
		ereport(segvec_merge_in_background ? LOG : NOTICE,
				(errmsg("built unique btree index \"%s\" on %s (%s) for merges",
						get_rel_name(btree), t->relname,
						quote_identifier(t->idname))));
	else if (t->id_not_partition_key)
		ereport(WARNING,
				(errmsg("id column \"%s\" is not the partition key of table \"%s\"; built non-unique btree index \"%s\" for merges",
						t->idname, t->relname, get_rel_name(btree)),
				 detail ? errdetail_internal("%s", detail) : 0,
				 errhint("Nothing keeps an id from being in two partitions: a merge updates or deletes every row with a matched id, and two sessions inserting a new id at once both insert it.")));
	else
		ereport(WARNING,
				(errmsg("ids in column \"%s\" of table \"%s\" are not unique; built non-unique btree index \"%s\" for merges",
						t->idname, t->relname, get_rel_name(btree)),
				 detail ? errdetail_internal("%s", detail) : 0,
				 errhint("A merge updates or deletes every row with a matched id.")));
	return usable;
}

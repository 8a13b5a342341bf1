/*-------------------------------------------------------------------------
 *
 * mergetarget.c
 *	  The table a merge writes: acting as its owner or as the extension's
 *	  owner (for ft.pending and ft.merge_counters), opening and locking it
 *	  through its segvec index, checking the caller's privileges on it, and
 *	  finding the btree on its id column (SegvecFindKeyBtree).
 *
 * src/merge/mergetarget.c
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

/* ----------------
 * Identities and ft.pending
 * ----------------
 */

/*
 * MergeIdentityPush / MergeIdentityPop: SegvecIdentityPush and
 * SegvecIdentityPop (act as userid in a security-restricted operation with
 * search_path = pg_catalog, pg_temp), under merge-insert's names.
 */
void
MergeIdentityPush(SavedIdentity *saved, Oid userid)
{
	SegvecIdentityPush(saved, userid);
}

void
MergeIdentityPop(SavedIdentity *saved)
{
	SegvecIdentityPop(saved);
}

/*
 * MergePendingOwner: the owner of ft.pending (the extension's owner), as whom
 * the queue is read and written.
 */
Oid
MergePendingOwner(void)
{
	Oid			nsp = get_namespace_oid("ft", true);
	Oid			relid = InvalidOid;
	HeapTuple	tup;
	Oid			owner;

	if (OidIsValid(nsp))
		relid = get_relname_relid("pending", nsp);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"ft.pending\" does not exist"),
				 errhint("Install the extension with CREATE EXTENSION segvec.")));
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * MergeQueueExecute: run a query on the extension's own tables as their owner.
 * SPI must be connected.  Returns the SPI result code.
 */
int
MergeQueueExecute(const char *sql, int nargs, Oid *argtypes, Datum *values,
			  const char *nulls, long count)
{
	SavedIdentity saved;
	int			ret;

	MergeIdentityPush(&saved, MergePendingOwner());
	ret = SPI_execute_with_args(sql, nargs, argtypes, values, nulls, false,
								count);
	MergeIdentityPop(&saved);
	if (ret < 0)
		elog(ERROR, "SPI_execute_with_args failed: %s",
			 SPI_result_code_string(ret));
	return ret;
}

/* ----------------
 * Loading the target
 * ----------------
 */

/*
 * The lock a merge's writer takes on its table: RowExclusiveLock, or
 * ShareRowExclusiveLock when it will build the id btree first
 * (MergeEnsureKeyBtree, which takes that lock for the build).  Taking the
 * stronger lock at once, rather than on top of RowExclusiveLock when the
 * build starts, keeps two writers from deadlocking: each holding
 * RowExclusiveLock, one waiting for the other's queue lock (ft.flush
 * beside a background merge, or two ft.flush calls) or both for the
 * build's lock.  Should the btree go away in between, the build still
 * takes its lock then.
 */
static LOCKMODE
writer_lock(Relation heap, Oid indexoid)
{
	HeapTuple	tup;
	Form_pg_index ind;
	AttrNumber	idatt = InvalidAttrNumber;
	bool		usable;

	if (!segvec_index_before_merge)
		return RowExclusiveLock;
	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	ind = (Form_pg_index) GETSTRUCT(tup);
	if (ind->indnatts > ind->indnkeyatts)
		idatt = ind->indkey.values[ind->indnkeyatts];
	ReleaseSysCache(tup);

	/* no id column: MergeOpenTarget says so */
	if (idatt == InvalidAttrNumber ||
		OidIsValid(SegvecFindKeyBtree(heap, idatt, &usable)))
		return RowExclusiveLock;
	return ShareRowExclusiveLock;
}

/*
 * MergeOpenTarget: lock the index's table (heaplock; a writer's
 * RowExclusiveLock becomes ShareRowExclusiveLock when the merge is to
 * build the id btree) and the index (AccessShareLock), check that it is a segvec index with an id column,
 * and fill *t.  The locks are kept to the end of the transaction.
 * with_dims reads the index's dimension from its metapage.
 */
void
MergeOpenTarget(Oid indexoid, LOCKMODE heaplock, bool with_dims, MergeTarget *t)
{
	Relation	heap;
	Relation	index;
	Form_pg_index ind;
	Form_pg_attribute att;

	memset(t, 0, sizeof(MergeTarget));
	if (get_rel_relkind(indexoid) != RELKIND_INDEX &&
		!SegvecRelidIsPartitionedIndex(indexoid))
	{
		/* reports what it is instead (or that it does not exist) */
		index = SegvecOpenIndex(indexoid, AccessShareLock, false);
		relation_close(index, AccessShareLock);
		elog(ERROR, "relation %u is not an index", indexoid);
	}

	/*
	 * The table first, as everything else locks it before its indexes.  A
	 * writer's lock (RowExclusiveLock asked for) is stronger when the id
	 * btree is missing (writer_lock): AccessShareLock keeps the table's
	 * definition still while that is looked at.
	 */
	t->indexoid = indexoid;
	t->heapoid = IndexGetRelation(indexoid, false);
	heap = relation_open(t->heapoid,
						 heaplock == RowExclusiveLock ? AccessShareLock : heaplock);
	if (heaplock == RowExclusiveLock)
		LockRelationOid(t->heapoid, writer_lock(heap, indexoid));
	if (SegvecRelidIsPartitionedIndex(indexoid))
	{
		/* a partitioned table: the MERGE into it routes rows to partitions */
		index = relation_open(indexoid, AccessShareLock);
		t->partitioned = true;
	}
	else
		index = SegvecOpenIndex(indexoid, AccessShareLock, false);
	ind = index->rd_index;
	t->indexname = pstrdup(RelationGetRelationName(index));
	t->relname = pstrdup(RelationGetRelationName(heap));

	if (ind->indnatts <= ind->indnkeyatts)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segvec index \"%s\" has no id column",
						t->indexname),
				 errdetail("Merges and queued upserts match rows by the index's first INCLUDE column."),
				 errhint("Create the index with INCLUDE (id), or with ft.create.")));
	if (ind->indkey.values[0] == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("segvec index \"%s\" indexes an expression, not a column",
						t->indexname),
				 errdetail("Merges write the vector into the indexed column.")));

	t->tupdesc = CreateTupleDescCopy(RelationGetDescr(heap));
	t->owner = heap->rd_rel->relowner;
	t->temp = heap->rd_rel->relpersistence == RELPERSISTENCE_TEMP;
	t->qualname = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(heap)),
											 RelationGetRelationName(heap));
	t->rowtype = format_type_be_qualified(heap->rd_rel->reltype);

	t->idatt = ind->indkey.values[ind->indnkeyatts];
	att = TupleDescAttr(t->tupdesc, t->idatt - 1);
	t->idname = pstrdup(NameStr(att->attname));
	t->idtype = att->atttypid;
	t->idtypmod = att->atttypmod;
	t->idcoll = att->attcollation;

	t->vecatt = ind->indkey.values[0];
	att = TupleDescAttr(t->tupdesc, t->vecatt - 1);
	t->vecname = pstrdup(NameStr(att->attname));

	if (with_dims && !t->partitioned)
	{
		SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));

		SegvecGetMetaInfo(index, info);
		t->dimensions = info->dimensions;
		pfree(info);
	}
	else if (with_dims)
	{
		List	   *leaves = SegvecPartitionIndexes(indexoid);
		ListCell   *lc;

		/* the first partition's index that has a dimension */
		foreach(lc, leaves)
		{
			Oid			leafoid = lfirst_oid(lc);
			Relation	leafheap = relation_open(IndexGetRelation(leafoid, false),
												 AccessShareLock);
			Relation	leaf = SegvecOpenIndex(leafoid, AccessShareLock, false);
			SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));

			SegvecGetMetaInfo(leaf, info);
			t->dimensions = info->dimensions;
			pfree(info);
			relation_close(leaf, NoLock);
			relation_close(leafheap, NoLock);
			if (t->dimensions > 0)
				break;
		}
	}

	relation_close(index, NoLock);
	relation_close(heap, NoLock);
}

/* Error unless the current user holds every privilege in `all` */
void
MergeCheckPrivileges(MergeTarget *t, AclMode all)
{
	AclMode		modes[] = {ACL_SELECT, ACL_INSERT, ACL_UPDATE, ACL_DELETE};
	int			i;

	for (i = 0; i < lengthof(modes); i++)
	{
		if ((all & modes[i]) &&
			pg_class_aclcheck(t->heapoid, GetUserId(), modes[i]) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, t->relname);
	}
}

/*
 * Error unless the current user may read the id column (SELECT on it or on
 * the table): what `... WHERE id = ...` or `ON CONFLICT (id)` needs, so
 * that queueing by id and the counts of a flush tell nothing about which
 * ids exist to a role that could not find out by a query.
 */
void
MergeCheckIdPrivilege(MergeTarget *t)
{
	if (pg_class_aclcheck(t->heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(t->heapoid, t->idatt, GetUserId(), ACL_SELECT) !=
		ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", t->relname),
				 errdetail("Writing by id needs SELECT on the id column \"%s\".",
						   t->idname)));
}

/* Error unless the current user holds one of the privileges in `any` */
void
MergeCheckAnyPrivilege(MergeTarget *t, AclMode any)
{
	if (pg_class_aclcheck(t->heapoid, GetUserId(), any) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, t->relname);
}

/*
 * SegvecUncheckedType: the type a value of type typid can be read as (by
 * the input function, a cast from text or jsonb_to_record) without running
 * any code of the role that owns the type or the table: a domain's base
 * type (domain constraints are the only user-written code a type's input
 * runs; base types' input functions are C, created by a superuser), an
 * array of domains as the array of their base type, typid itself when it
 * holds no domain.  InvalidOid when a domain sits where it cannot be peeled
 * off: inside a composite, range or multirange type.
 */
Oid
SegvecUncheckedType(Oid typid)
{
	Oid			base = getBaseType(typid);
	Oid			elem;
	char		typtype;

	check_stack_depth();
	elem = get_element_type(base);
	if (OidIsValid(elem))
	{
		Oid			e = SegvecUncheckedType(elem);

		if (!OidIsValid(e))
			return InvalidOid;
		return e == elem ? base : get_array_type(e);
	}
	typtype = get_typtype(base);
	if (typtype == TYPTYPE_COMPOSITE)
	{
		TupleDesc	td = lookup_rowtype_tupdesc(base, -1);
		bool		ok = true;
		int			i;

		for (i = 0; i < td->natts && ok; i++)
		{
			Form_pg_attribute att = TupleDescAttr(td, i);

			if (!att->attisdropped &&
				SegvecUncheckedType(att->atttypid) != att->atttypid)
				ok = false;
		}
		ReleaseTupleDesc(td);
		return ok ? base : InvalidOid;
	}
	if (typtype == TYPTYPE_RANGE)
	{
		Oid			sub = get_range_subtype(base);

		return SegvecUncheckedType(sub) == sub ? base : InvalidOid;
	}
	if (typtype == TYPTYPE_MULTIRANGE)
	{
		Oid			rng = get_multirange_range(base);

		return SegvecUncheckedType(rng) == rng ? base : InvalidOid;
	}
	return base;
}

/*
 * SegvecFindKeyBtree (merge.h): here, below the btree guard (mergebtree.c),
 * because the target's lock (writer_lock) asks for it too.
 */
Oid
SegvecFindKeyBtree(Relation heap, AttrNumber attnum, bool *usable)
{
	Form_pg_attribute att;
	Oid			eqop;
	List	   *indexes;
	ListCell   *lc;
	Oid			best = InvalidOid;
	int			bestscore = -1;

	if (usable)
		*usable = false;
	if (attnum <= 0 || attnum > RelationGetDescr(heap)->natts)
		return InvalidOid;
	att = TupleDescAttr(RelationGetDescr(heap), attnum - 1);
	if (att->attisdropped)
		return InvalidOid;
	eqop = lookup_type_cache(att->atttypid, TYPECACHE_EQ_OPR)->eq_opr;

	indexes = RelationGetIndexList(heap);
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		HeapTuple	itup;
		HeapTuple	ctup;
		Form_pg_index ind;
		Oid			relam;
		Datum		d;
		bool		isnull;
		oidvector  *indclass;
		oidvector  *indcoll;
		bool		now;
		int			score;

		itup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
		if (!HeapTupleIsValid(itup))
			elog(ERROR, "cache lookup failed for index %u", indexoid);
		ind = (Form_pg_index) GETSTRUCT(itup);

		ctup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
		if (!HeapTupleIsValid(ctup))
			elog(ERROR, "cache lookup failed for relation %u", indexoid);
		relam = ((Form_pg_class) GETSTRUCT(ctup))->relam;
		ReleaseSysCache(ctup);

		if (relam != BTREE_AM_OID || !ind->indisvalid || !ind->indisready ||
			!ind->indislive || ind->indnkeyatts < 1 ||
			ind->indkey.values[0] != attnum ||
			!heap_attisnull(itup, Anum_pg_index_indpred, NULL))
		{
			ReleaseSysCache(itup);
			continue;
		}

		/* `col = value` must be able to use it: opfamily and collation */
		d = SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indclass, &isnull);
		Assert(!isnull);
		indclass = (oidvector *) DatumGetPointer(d);
		d = SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indcollation,
							&isnull);
		Assert(!isnull);
		indcoll = (oidvector *) DatumGetPointer(d);
		if (!OidIsValid(eqop) ||
			!op_in_opfamily(eqop, get_opclass_family(indclass->values[0])) ||
			indcoll->values[0] != att->attcollation)
		{
			ReleaseSysCache(itup);
			continue;
		}

		/*
		 * An index built while the table had broken HOT chains is invisible
		 * to the planner until the building transaction is older than every
		 * snapshot (indcheckxmin).
		 */
		now = !ind->indcheckxmin ||
			TransactionIdPrecedes(HeapTupleHeaderGetXmin(itup->t_data),
								  TransactionXmin);
		score = (now ? 2 : 0) + (ind->indisunique ? 1 : 0);
		if (score > bestscore)
		{
			best = indexoid;
			bestscore = score;
			if (usable)
				*usable = now;
		}
		ReleaseSysCache(itup);
	}
	list_free(indexes);
	return best;
}

/*-------------------------------------------------------------------------
 *
 * index.c
 *	  What a segvec index relation is: opening one by OID, its metric (from
 *	  its operator class), its dimension, its id key's send function, and
 *	  turning an indexed datum into a vector.
 *
 * The metric, the dimension once it can no longer change, and the key's
 * send function are cached in the relcache entry (rd_amcache).
 *
 * src/store/index.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/transam.h"
#include "catalog/index.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "store/store.h"

/* the distance functions of the operator classes, from kernels/distance.c */
extern Datum segvec_l2_distance(PG_FUNCTION_ARGS);
extern Datum segvec_cosine_distance(PG_FUNCTION_ARGS);
extern Datum segvec_negative_inner_product(PG_FUNCTION_ARGS);

/*
 * What the relcache keeps for a segvec index (rd_amcache): the metric, and
 * the dimension once the metapage has one.  Both never change for a given
 * relfilenode; TRUNCATE and REINDEX make a new one and invalidate the
 * relcache entry, which frees rd_amcache.
 */
typedef struct SegvecRelCache
{
	SegvecMetric metric;
	int			dimensions;
	bool		key_ready;		/* keysend filled in? */
	FmgrInfo	keysend;		/* send function of the id key's type */
} SegvecRelCache;

static SegvecRelCache *
get_relcache(Relation index)
{
	SegvecRelCache *cache = (SegvecRelCache *) index->rd_amcache;

	if (cache == NULL)
	{
		FmgrInfo   *proc;
		SegvecMetric metric;

		proc = index_getprocinfo(index, 1, SEGVEC_DISTANCE_PROC);
		if (proc->fn_addr == segvec_l2_distance)
			metric = SEGVEC_METRIC_L2;
		else if (proc->fn_addr == segvec_cosine_distance)
			metric = SEGVEC_METRIC_COSINE;
		else if (proc->fn_addr == segvec_negative_inner_product)
			metric = SEGVEC_METRIC_IP;
		else
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("operator class of index \"%s\" uses an unsupported distance function",
							RelationGetRelationName(index)),
					 errhint("Use one of the operator classes vector_l2_ops, vector_cosine_ops or vector_ip_ops.")));

		cache = MemoryContextAllocZero(index->rd_indexcxt,
									   sizeof(SegvecRelCache));
		cache->metric = metric;
		index->rd_amcache = cache;
	}
	return cache;
}

/*
 * SegvecKeySendProc: the send function of the index's id key (its first
 * INCLUDE column), looked up once per relcache entry.  Errors if the type
 * has none.
 */
FmgrInfo *
SegvecKeySendProc(Relation index)
{
	SegvecRelCache *cache = get_relcache(index);

	if (!cache->key_ready)
	{
		Oid			typid = TupleDescAttr(RelationGetDescr(index), 1)->atttypid;
		Oid			sendfn;
		bool		isvarlena;

		getTypeBinaryOutputInfo(typid, &sendfn, &isvarlena);
		fmgr_info_cxt(sendfn, &cache->keysend, index->rd_indexcxt);
		cache->key_ready = true;
	}
	return &cache->keysend;
}

/*
 * SegvecGetMetric: the metric of the index, from its operator class.
 */
SegvecMetric
SegvecGetMetric(Relation index)
{
	return get_relcache(index)->metric;
}

/*
 * get_dimensions: the index's dimension, 0 while it has none.  Cached in
 * the relcache once it can no longer be reset: once the transaction that
 * set it is known to have committed (SegvecSetDimensions).
 */
static int
get_dimensions(Relation index)
{
	SegvecRelCache *cache = get_relcache(index);

	if (cache->dimensions == 0)
	{
		SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
		int			dim;

		SegvecGetMetaInfo(index, info);
		dim = info->dimensions;
		if (dim > 0 &&
			SegvecDimensionsXidCommitted(info->dimensions_xid))
			cache->dimensions = dim;
		pfree(info);
		return dim;
	}
	return cache->dimensions;
}

/*
 * SegvecIndexDimensions: the index's dimension, 0 while it has none (read
 * from the metapage until it is cached).
 */
int
SegvecIndexDimensions(Relation index)
{
	return get_dimensions(index);
}

/*
 * SegvecDatumGetVector: turn an indexed real[] datum into the vector to
 * store, checking it and its dimension against the index's (fixing the
 * index's dimension if this is the first vector).  The result may point
 * into a detoasted copy made in the current memory context.
 */
float *
SegvecDatumGetVector(Relation index, Datum value, int *dim)
{
	ArrayType  *array = DatumGetArrayTypeP(value);
	float	   *vector = SegvecArrayGetVector(array, dim);
	int			expected = get_dimensions(index);

	/* set, or (after an aborted first insert) reset, or complain */
	if (expected != *dim)
		SegvecSetDimensions(index, *dim);
	return vector;
}

/*
 * SegvecIsSegvecIndex: is rel an index of the segvec access method?  (By
 * the access method's name: the operator classes of a companion extension
 * point at the same access method.)
 */
bool
SegvecIsSegvecIndex(Relation rel)
{
	char	   *name;

	if (rel->rd_rel->relkind != RELKIND_INDEX || rel->rd_index == NULL)
		return false;
	name = get_am_name(rel->rd_rel->relam);
	return name != NULL && strcmp(name, "segvec") == 0;
}

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
	if (!SegvecIsSegvecIndex(index))
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
 * SegvecCheckStatsPrivilege: error (42501) unless the current user owns the
 * table of index (or is a member of its owning role, or a superuser) or is
 * a member of pg_read_all_stats.  For the functions that reveal what an
 * index holds (counts of docs, keymap entries, pages) without reading rows:
 * they count rows that row-level security may hide from the caller.
 */
void
SegvecCheckStatsPrivilege(Relation index)
{
	Oid			heapid = index->rd_index->indrelid;

#if PG_VERSION_NUM >= 160000
	if (object_ownercheck(RelationRelationId, heapid, GetUserId()))
#else
	if (pg_class_ownercheck(heapid, GetUserId()))
#endif
		return;
	if (has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for index %s",
					RelationGetRelationName(index)),
			 errdetail("Only the owner of table \"%s\" and members of pg_read_all_stats may read what the index holds.",
					   get_rel_name(heapid))));
}


/*
 * SegvecIdentityPush: act as userid until SegvecIdentityPop, in a
 * security-restricted operation (no SET ROLE, no temporary objects: the
 * guard VACUUM and REINDEX use when they run a table owner's code), with
 * search_path = pg_catalog, pg_temp so that no schema the caller controls
 * can put an operator or function into what runs as another role.  An
 * error in between is undone by the (sub)transaction's abort.
 */
void
SegvecIdentityPush(SegvecSavedIdentity *saved, Oid userid)
{
	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	SetUserIdAndSecContext(userid, saved->sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	saved->gucnest = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
}

void
SegvecIdentityPop(SegvecSavedIdentity *saved)
{
	AtEOXact_GUC(false, saved->gucnest);
	SetUserIdAndSecContext(saved->userid, saved->sec_context);
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

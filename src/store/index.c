/*-------------------------------------------------------------------------
 *
 * index.c
 *	  What a segvec index relation is: opening one by OID, its metric (from
 *	  its operator family), its dimension, its id key's send function, and
 *	  turning an indexed datum or a query datum into a vector (directly for
 *	  real[], through the family's support function 2 for other types).
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
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_authid.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "storage/lmgr.h"

#include "compat.h"
#include "store/store.h"

/* the distance functions of the operator classes, from kernels/vector.c */
extern Datum segvec_l2_distance(PG_FUNCTION_ARGS);
extern Datum segvec_cosine_distance(PG_FUNCTION_ARGS);
extern Datum segvec_negative_inner_product(PG_FUNCTION_ARGS);

/*
 * What the relcache keeps for a segvec index (rd_amcache): the metric, the
 * indexed column's type and how to read it, and the dimension once the
 * metapage has one.  None of these change for a given relfilenode;
 * TRUNCATE and REINDEX make a new one and invalidate the relcache entry,
 * which frees rd_amcache.
 */
typedef struct SegvecRelCache
{
	SegvecMetric metric;
	int			dimensions;
	Oid			vectype;		/* type of the indexed column (or expression) */
	bool		has_input;		/* read through support function 2? */
	FmgrInfo	input;			/* support function 2 for vectype */
	bool		key_ready;		/* keysend filled in? */
	FmgrInfo	keysend;		/* send function of the id key's type */
} SegvecRelCache;

/*
 * metric_of_family: the metric of a segvec operator family, from its
 * distance function (support function 1): the one registered for the
 * operator class's input type, else the one registered for anyelement
 * (segvec's own classes; a class of the companion for another type has
 * none of its own).  Errors if it is none of segvec's.
 */
static SegvecMetric
metric_of_family(Relation index, Oid opfamily, Oid opcintype)
{
	Oid			procoid;
	FmgrInfo	proc;

	procoid = get_opfamily_proc(opfamily, opcintype, opcintype,
								SEGVEC_DISTANCE_PROC);
	if (!OidIsValid(procoid))
		procoid = get_opfamily_proc(opfamily, ANYELEMENTOID, ANYELEMENTOID,
									SEGVEC_DISTANCE_PROC);
	if (OidIsValid(procoid))
	{
		fmgr_info(procoid, &proc);
		if (proc.fn_addr == segvec_l2_distance)
			return SEGVEC_METRIC_L2;
		if (proc.fn_addr == segvec_cosine_distance)
			return SEGVEC_METRIC_COSINE;
		if (proc.fn_addr == segvec_negative_inner_product)
			return SEGVEC_METRIC_IP;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("operator class of index \"%s\" uses an unsupported distance function",
					RelationGetRelationName(index)),
			 errhint("Use one of the operator classes vector_l2_ops, vector_cosine_ops or vector_ip_ops.")));
	return SEGVEC_METRIC_INVALID;	/* keep compiler quiet */
}

/*
 * input_proc: support function 2 of opfamily for type (or for its base
 * type, if it is a domain), InvalidOid if there is none.
 */
static Oid
input_proc(Oid opfamily, Oid type)
{
	Oid			procoid = get_opfamily_proc(opfamily, type, type,
											SEGVEC_INPUT_PROC);
	Oid			base;

	if (!OidIsValid(procoid) && (base = getBaseType(type)) != type)
		procoid = get_opfamily_proc(opfamily, base, base, SEGVEC_INPUT_PROC);
	return procoid;
}

/*
 * The name of type typid for a message: schema-qualified unless it is a
 * pg_catalog type.  CREATE INDEX runs with a search_path of pg_catalog
 * alone from PostgreSQL 17 on, where format_type_be would qualify a type
 * of another schema anyway; qualifying it always says the same on every
 * version.
 */
static char *
type_name(Oid typid)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Oid			nsp;

	if (!HeapTupleIsValid(tup))
		return format_type_be(typid);
	nsp = ((Form_pg_type) GETSTRUCT(tup))->typnamespace;
	ReleaseSysCache(tup);
	return nsp == PG_CATALOG_NAMESPACE ? format_type_be(typid) :
		format_type_be_qualified(typid);
}

/*
 * SegvecIsVectorType: is type real[] (or a domain over it), the type segvec
 * reads without a support function?
 */
bool
SegvecIsVectorType(Oid type)
{
	return type == FLOAT4ARRAYOID || getBaseType(type) == FLOAT4ARRAYOID;
}

static SegvecRelCache *
get_relcache(Relation index)
{
	SegvecRelCache *cache = (SegvecRelCache *) index->rd_amcache;

	if (cache == NULL)
	{
		Oid			opfamily = index->rd_opfamily[0];
		Oid			vectype = TupleDescAttr(RelationGetDescr(index), 0)->atttypid;
		SegvecMetric metric;
		Oid			inputoid = InvalidOid;

		/*
		 * The type first: a column of a filter type (text, int4 ...) takes
		 * that type's filter class by default, which has no distance
		 * function, but what is wrong is the column.
		 */
		if (!SegvecIsVectorType(vectype))
		{
			char	   *typname = type_name(vectype);
			char	   *bare = strrchr(typname, '.');	/* unqualified */

			bare = bare ? bare + 1 : typname;
			inputoid = input_proc(opfamily, vectype);
			if (!OidIsValid(inputoid))
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("segvec index \"%s\" cannot read values of type %s",
								RelationGetRelationName(index), typname),
						 errdetail("A segvec index reads real[] values, and values of the types its operator family has an input function (support function 2) for."),
						 (strcmp(bare, "vector") == 0 ||
						  strcmp(bare, "halfvec") == 0) ?
						 errhint("For pgvector's %s type, install the companion extension: CREATE EXTENSION segvec_pgvector.",
								 bare) :
						 errhint("Index a real[] column, or an expression that casts the column to real[].")));
		}
		metric = metric_of_family(index, opfamily, index->rd_opcintype[0]);

		cache = MemoryContextAllocZero(index->rd_indexcxt,
									   sizeof(SegvecRelCache));
		cache->metric = metric;
		cache->vectype = vectype;
		if (OidIsValid(inputoid))
		{
			fmgr_info_cxt(inputoid, &cache->input, index->rd_indexcxt);
			cache->has_input = true;
		}
		index->rd_amcache = cache;
	}
	return cache;
}

/*
 * SegvecInputProcOid: the support function 2 of index's operator family
 * that reads its column, InvalidOid when the column is real[].
 */
Oid
SegvecInputProcOid(Relation index)
{
	SegvecRelCache *cache = get_relcache(index);

	return cache->has_input ? cache->input.fn_oid : InvalidOid;
}

/*
 * SegvecRecordInputDependency: make the index depend on the support
 * function 2 that reads its column, if any, so that dropping the function
 * (DROP EXTENSION segvec_pgvector) needs CASCADE and drops the index with
 * it, rather than leaving an index that no insert or search can read.
 * (An index built with segvec's own vector_l2_ops on a vector column
 * depends on nothing else of the companion.)  Called by ambuild, so again
 * by each REINDEX: a dependency already recorded is kept as it is.
 */
void
SegvecRecordInputDependency(Relation index)
{
	Oid			procoid = SegvecInputProcOid(index);
	Relation	depRel;
	ScanKeyData key[3];
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found = false;
	ObjectAddress myself,
				referenced;

	if (!OidIsValid(procoid))
		return;

	depRel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(RelationRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(RelationGetRelid(index)));
	ScanKeyInit(&key[2], Anum_pg_depend_objsubid, BTEqualStrategyNumber,
				F_INT4EQ, Int32GetDatum(0));
	scan = systable_beginscan(depRel, DependDependerIndexId, true, NULL,
							  3, key);
	while (!found && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tup);

		found = (dep->refclassid == ProcedureRelationId &&
				 dep->refobjid == procoid);
	}
	systable_endscan(scan);
	table_close(depRel, AccessShareLock);

	if (found)
		return;
	ObjectAddressSet(myself, RelationRelationId, RelationGetRelid(index));
	ObjectAddressSet(referenced, ProcedureRelationId, procoid);
	recordDependencyOn(&myself, &referenced, DEPENDENCY_NORMAL);
}

/*
 * SegvecIndexVectorType: the type of the indexed column (real[], or a type
 * read through support function 2).
 */
Oid
SegvecIndexVectorType(Relation index)
{
	return get_relcache(index)->vectype;
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
		Oid			typid = TupleDescAttr(RelationGetDescr(index),
										  IndexRelationGetNumberOfKeyAttributes(index))->atttypid;
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
 * set it is known to have committed (SegvecSetDimensions).  *unsettled
 * (if not NULL) says whether a vector of that dimension must still make
 * it stand (SegvecSetDimensions): the setter is neither known committed
 * nor this transaction.
 */
static int
get_dimensions(Relation index, bool *unsettled)
{
	SegvecRelCache *cache = get_relcache(index);

	if (unsettled)
		*unsettled = false;
	if (cache->dimensions == 0)
	{
		SegvecMetaInfo *info = palloc(sizeof(SegvecMetaInfo));
		int			dim;

		SegvecGetMetaInfo(index, info);
		dim = info->dimensions;
		if (dim > 0 &&
			SegvecDimensionsXidCommitted(info->dimensions_xid))
			cache->dimensions = dim;
		else if (dim > 0 && unsettled &&
				 !TransactionIdIsCurrentTransactionId(info->dimensions_xid))
			*unsettled = true;
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
	return get_dimensions(index, NULL);
}

/*
 * SegvecDatumReadVector: turn an indexed datum (real[], or a value of the
 * type support function 2 reads) into a vector, checked as any (finite
 * elements, not empty) but not against the index's dimension, which it
 * never sets: for reading again a vector that was indexed before (an
 * alias's heap row, graph/alias.c).  The result may point into a detoasted
 * or converted copy made in the current memory context.
 */
float *
SegvecDatumReadVector(Relation index, Datum value, int *dim)
{
	SegvecRelCache *cache = get_relcache(index);

	if (cache->has_input)
		value = FunctionCall1(&cache->input, value);
	return SegvecArrayGetVector(DatumGetArrayTypeP(value), dim);
}

/*
 * SegvecDatumGetVector: turn an indexed datum (real[], or a value of the
 * type support function 2 reads) into the vector to store, checking it and
 * its dimension against the index's (fixing the index's dimension if this
 * is the first vector).  The result may point into a detoasted or
 * converted copy made in the current memory context.
 */
float *
SegvecDatumGetVector(Relation index, Datum value, int *dim)
{
	float	   *vector;
	int			expected;
	bool		unsettled;

	vector = SegvecDatumReadVector(index, value, dim);
	expected = get_dimensions(index, &unsettled);

	/*
	 * set, or (after an aborted first insert) reset, or complain; or make
	 * the dimension stand for this vector too
	 */
	if (expected != *dim || unsettled)
		SegvecSetDimensions(index, *dim);
	return vector;
}

/*
 * SegvecQueryGetVector: turn a query vector of the given type (a scan
 * key's subtype: the ordering operator's right-hand type; InvalidOid means
 * real[]) into a vector, checked like any (but not against the index's
 * dimension).  The result is a fresh copy in the current memory context.
 */
float *
SegvecQueryGetVector(Relation index, Datum value, Oid type, int *dim)
{
	SegvecRelCache *cache = get_relcache(index);
	ArrayType  *array;

	if (!OidIsValid(type) || SegvecIsVectorType(type))
		array = DatumGetArrayTypePCopy(value);
	else if (type == cache->vectype && cache->has_input)
		array = DatumGetArrayTypeP(FunctionCall1(&cache->input, value));
	else
	{
		Oid			procoid = input_proc(index->rd_opfamily[0], type);

		if (!OidIsValid(procoid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("segvec index \"%s\" cannot read a query vector of type %s",
							RelationGetRelationName(index),
							format_type_be(type))));
		array = DatumGetArrayTypeP(OidFunctionCall1(procoid, value));
	}
	return SegvecArrayGetVector(array, dim);
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

/* leaf indexes by their table's name, then OID: a stable order */
static int
partition_index_cmp(const ListCell *a, const ListCell *b)
{
	Oid			ia = lfirst_oid(a);
	Oid			ib = lfirst_oid(b);
	char	   *na = get_rel_name(IndexGetRelation(ia, false));
	char	   *nb = get_rel_name(IndexGetRelation(ib, false));
	int			c = strcmp(na, nb);

	if (c != 0)
		return c;
	return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/*
 * SegvecIsPartitionedIndex: is rel the partitioned index of the segvec
 * access method on a partitioned table (no storage of its own; each
 * partition has its own segvec index attached to it)?
 */
bool
SegvecIsPartitionedIndex(Relation rel)
{
	char	   *name;

	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_INDEX ||
		rel->rd_index == NULL)
		return false;
	name = get_am_name(rel->rd_rel->relam);
	return name != NULL && strcmp(name, "segvec") == 0;
}

/*
 * SegvecRelidIsPartitionedIndex: the same test by OID, without locking
 * (false for an OID that is no relation).
 */
bool
SegvecRelidIsPartitionedIndex(Oid relid)
{
	HeapTuple	tup;
	Form_pg_class c;
	char	   *name;
	bool		result;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return false;
	c = (Form_pg_class) GETSTRUCT(tup);
	result = c->relkind == RELKIND_PARTITIONED_INDEX;
	if (result)
	{
		name = get_am_name(c->relam);
		result = name != NULL && strcmp(name, "segvec") == 0;
	}
	ReleaseSysCache(tup);
	return result;
}

/*
 * SegvecPartitionIndexes: the segvec indexes of the leaf partitions of the
 * partitioned segvec index indexoid, in a stable order (by partition
 * table name, then OID), as a list of OIDs.  Locks the partitioned table
 * in AccessShareLock first (to the end of the transaction), which keeps
 * partitions from being attached, detached or dropped meanwhile (all of
 * which lock the parent more strongly); the leaf indexes are not locked
 * here, as their tables must be locked before them.
 */
List *
SegvecPartitionIndexes(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, false);
	List	   *all;
	List	   *leaves = NIL;
	ListCell   *lc;

	LockRelationOid(heapoid, AccessShareLock);
	all = find_all_inheritors(indexoid, NoLock, NULL);
	foreach(lc, all)
	{
		Oid			child = lfirst_oid(lc);

		if (get_rel_relkind(child) == RELKIND_INDEX)
			leaves = lappend_oid(leaves, child);
	}
	list_free(all);
	list_sort(leaves, partition_index_cmp);
	return leaves;
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

		if (!SegvecOwnsRelation(heapid, GetUserId()))
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

	if (SegvecOwnsRelation(heapid, GetUserId()))
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

/*
 * SegvecQuantizationOption: the SEGVEC_QUANT_* that the reloptions (NULL:
 * none given) ask for; sq8 by default (see src/README.md, "Why SQ8").
 */
int
SegvecQuantizationOption(SegvecOptions *relopts)
{
	const char *value;

	if (relopts == NULL || relopts->quantization_offset == 0)
		return SEGVEC_QUANT_SQ8;
	value = (const char *) relopts + relopts->quantization_offset;
	if (strcmp(value, "none") == 0)
		return SEGVEC_QUANT_NONE;
	if (strcmp(value, "rabitq") == 0)
		return SEGVEC_QUANT_RABITQ;
	return SEGVEC_QUANT_SQ8;
}

/*
 * SegvecIndexQuantization: the SEGVEC_QUANT_* that segments written now
 * (by a compaction or a merge) get: the index's quantization option as it
 * is now, so that ALTER INDEX ... SET (quantization = ...) applies to the
 * segments written from then on (src/README.md, "Quantized segments").
 */
int
SegvecIndexQuantization(Relation index)
{
	return SegvecQuantizationOption((SegvecOptions *) index->rd_options);
}

/*
 * SegvecIndexFilterCount: how many filter columns the index has (its key
 * columns after the vector; src/README.md, "Filter columns").
 */
int
SegvecIndexFilterCount(Relation index)
{
	return IndexRelationGetNumberOfKeyAttributes(index) - 1;
}

/*
 * SegvecIndexFilterPostable: what postings each of the index's filter
 * columns may have in a segment (format.h), into postable[0 .. filter
 * count - 1]: SEGVEC_POSTINGS_COLUMN_BITS for a label array, whose entries
 * keep a signature of several labels, SEGVEC_POSTINGS_COLUMN_HAS (value
 * postings) for the others.
 */
void
SegvecIndexFilterPostable(Relation index, uint32 *postable)
{
	int			nfilters = SegvecIndexFilterCount(index);
	int			i;

	for (i = 0; i < nfilters; i++)
	{
		Oid			typid = TupleDescAttr(RelationGetDescr(index), i + 1)->atttypid;

		postable[i] = (typid == INT4ARRAYOID || typid == TEXTARRAYOID) ?
			SEGVEC_POSTINGS_COLUMN_BITS : SEGVEC_POSTINGS_COLUMN_HAS;
	}
}

/*
 * SegvecLabelHash: the 64-bit hash of one label (a non-NULL element of an
 * int4[] or text[] label array): its signature bits (SEGVEC_LABEL_BITS)
 * and its value in a segment's label postings (format.h).
 */
uint64
SegvecLabelHash(Oid elemtype, Datum elem)
{
	uint64		h;

	if (elemtype == INT4OID)
	{
		int32		v = DatumGetInt32(elem);

		h = hash_bytes_extended((const unsigned char *) &v, sizeof(v), 0);
	}
	else if (elemtype == TEXTOID)
	{
		text	   *t = DatumGetTextPP(elem);

		h = hash_bytes_extended((const unsigned char *) VARDATA_ANY(t),
								VARSIZE_ANY_EXHDR(t), 0);
		if ((Pointer) t != DatumGetPointer(elem))
			pfree(t);
	}
	else
	{
		elog(ERROR, "segvec label arrays hold int4 or text, not type %u",
			 elemtype);
		h = 0;					/* keep compiler quiet */
	}
	return h;
}

/*
 * SegvecLabelHashes: the hashes (SegvecLabelHash) of the labels of a label
 * array, NULL elements left out, into a palloc'd *hashes of *n (repeated
 * labels repeated); returns their signature, the union of their bits.
 */
uint64
SegvecLabelHashes(Datum array, uint64 **hashes, int *n)
{
	ArrayType  *arr = DatumGetArrayTypeP(array);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	int			i;
	uint64		sig = 0;

	if (elemtype != INT4OID && elemtype != TEXTOID)
		elog(ERROR, "segvec label arrays hold int4 or text, not type %u",
			 elemtype);
	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
					  &elems, &nulls, &nelems);
	*hashes = palloc(sizeof(uint64) * Max(nelems, 1));
	*n = 0;
	for (i = 0; i < nelems; i++)
	{
		uint64		h;

		if (nulls[i])
			continue;
		h = SegvecLabelHash(elemtype, elems[i]);
		sig |= SEGVEC_LABEL_BITS(h);
		(*hashes)[(*n)++] = h;
	}
	pfree(elems);
	pfree(nulls);
	return sig;
}

/*
 * SegvecIndexKeyColumn: where the id key is among the index's columns
 * (0-based, as in the values an insert gets): the first INCLUDE column,
 * after the vector and the filter columns.  Meaningful when
 * SegvecIndexHasKey.
 */
int
SegvecIndexKeyColumn(Relation index)
{
	return IndexRelationGetNumberOfKeyAttributes(index);
}

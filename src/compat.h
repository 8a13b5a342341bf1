/*
 * compat.h: every difference between the PostgreSQL versions segvec builds
 * against (15, 16, 17 and 18), one name per difference, named for what it
 * does.  This is the one file that tests PG_VERSION_NUM; the rest of the
 * source uses these names and reads the same for every version.  Include it
 * after postgres.h.
 *
 * What differs, by the version that changed it (src/README.md, "PostgreSQL
 * versions", says what each means for segvec):
 *
 *   16  RelFileNode and rd_node became RelFileLocator and rd_locator;
 *       pg_class_ownercheck() became object_ownercheck(RelationRelationId,
 *       ...); IndexAmRoutine gained amsummarizing
 *   17  ShmemVariableCache became TransamVariables; LockHeldByMe() takes
 *       "or stronger"; IndexAmRoutine gained amcanbuildparallel and
 *       aminsertcleanup; the planner keeps an index's ordering with a
 *       "col = ANY (array)" condition on a column after the first
 *   18  vacuum_delay_point() takes is_analyze; index_beginscan() takes
 *       the scan's instrumentation (EXPLAIN ANALYZE's index searches);
 *       IndexAmRoutine gained
 *       amcanhash, amconsistentequality, amconsistentordering,
 *       amgettreeheight, amtranslatestrategy and amtranslatecmptype;
 *       pg_attribute_noreturn() became pg_noreturn
 */
#ifndef SEGVEC_COMPAT_H
#define SEGVEC_COMPAT_H

#include "access/amapi.h"
#include "access/genam.h"
#include "access/transam.h"
#include "commands/vacuum.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/rel.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "segvec builds against PostgreSQL 15, 16, 17 and 18"
#endif

/*
 * The identity of a relation's files (tablespace, database, file number):
 * SegvecRelFileId, a hash key of its own; SegvecRelFileIdOf(rel), an
 * lvalue, what ReadRecentBuffer() takes.
 */
#if PG_VERSION_NUM >= 160000
typedef RelFileLocator SegvecRelFileId;
#define SegvecRelFileIdOf(rel) ((rel)->rd_locator)
#define SegvecRelFileIdEquals(a, b) RelFileLocatorEquals((a), (b))
#else
typedef RelFileNode SegvecRelFileId;
#define SegvecRelFileIdOf(rel) ((rel)->rd_node)
#define SegvecRelFileIdEquals(a, b) RelFileNodeEquals((a), (b))
#endif

/*
 * SegvecOldestClogXid: the oldest transaction whose commit status the
 * commit log still holds (an older one was truncated away).  The caller
 * holds XactTruncationLock, as for TransactionIdDidCommit.
 */
static inline TransactionId
SegvecOldestClogXid(void)
{
#if PG_VERSION_NUM >= 170000
	return TransamVariables->oldestClogXid;
#else
	return ShmemVariableCache->oldestClogXid;
#endif
}

/* SegvecVacuumDelayPoint: a cost-based vacuum delay point (not ANALYZE's) */
static inline void
SegvecVacuumDelayPoint(void)
{
#if PG_VERSION_NUM >= 180000
	vacuum_delay_point(false);
#else
	vacuum_delay_point();
#endif
}

/*
 * SegvecIndexBeginScan: index_beginscan() for a scan of its own, no
 * instrumentation
 */
static inline IndexScanDesc
SegvecIndexBeginScan(Relation heap, Relation index, Snapshot snapshot,
					 int nkeys, int norderbys)
{
#if PG_VERSION_NUM >= 180000
	return index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys);
#else
	return index_beginscan(heap, index, snapshot, nkeys, norderbys);
#endif
}

/*
 * SegvecOwnsRelation: whether role owns relation relid (directly or as a
 * member of the owning role, or as a superuser)
 */
static inline bool
SegvecOwnsRelation(Oid relid, Oid roleid)
{
#if PG_VERSION_NUM >= 160000
	return object_ownercheck(RelationRelationId, relid, roleid);
#else
	return pg_class_ownercheck(relid, roleid);
#endif
}

/* SegvecLockHeldByMe: whether this backend holds exactly lockmode on tag */
static inline bool
SegvecLockHeldByMe(const LOCKTAG *tag, LOCKMODE lockmode)
{
#if PG_VERSION_NUM >= 170000
	return LockHeldByMe(tag, lockmode, false);
#else
	return LockHeldByMe(tag, lockmode);
#endif
}

/*
 * SegvecAmRoutineLaterFields: the IndexAmRoutine fields that only some
 * versions have, set to what segvec is: not a summarizing index (HOT
 * updates must still insert into it), no parallel build through
 * PostgreSQL's own machinery (segvec runs its own workers), no per-statement
 * insert state to clean up, no hashing or btree-like ordering of values, no
 * tree height for the planner, no translation between strategies and
 * compare types (segvec's operators are distances, not comparisons).
 * makeNode() zeroes these already; setting them says so.
 */
static inline void
SegvecAmRoutineLaterFields(IndexAmRoutine *amroutine)
{
#if PG_VERSION_NUM >= 160000
	amroutine->amsummarizing = false;
#endif
#if PG_VERSION_NUM >= 170000
	amroutine->amcanbuildparallel = false;
	amroutine->aminsertcleanup = NULL;
#endif
#if PG_VERSION_NUM >= 180000
	amroutine->amcanhash = false;
	amroutine->amconsistentequality = false;
	amroutine->amconsistentordering = false;
	amroutine->amgettreeheight = NULL;
	amroutine->amtranslatestrategy = NULL;
	amroutine->amtranslatecmptype = NULL;
#endif
}

/*
 * SEGVEC_AM_SEARCHARRAY: whether segvec takes "col = ANY (array)" on a
 * filter column as an index condition (amsearcharray).  Before 17 the
 * planner assumes such a condition on any column after the first leaves
 * the index's output unordered (build_index_paths' lower-ScalarArrayOpExpr
 * rule, made for btree), so an ordered segvec scan could never take one:
 * the condition stays a filter above the scan, and segvec does not claim
 * support it would never use.
 */
#if PG_VERSION_NUM >= 170000
#define SEGVEC_AM_SEARCHARRAY true
#else
#define SEGVEC_AM_SEARCHARRAY false
#endif

/* SegvecNoReturn: before a function's declaration, it does not return */
#if PG_VERSION_NUM >= 180000
#define SegvecNoReturn pg_noreturn
#else
#define SegvecNoReturn pg_attribute_noreturn()
#endif

#endif							/* SEGVEC_COMPAT_H */

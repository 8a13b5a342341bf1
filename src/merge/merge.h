/*-------------------------------------------------------------------------
 *
 * merge.h
 *	  Merge-insert over the id btree: the btree guard, ft.merge, the queue
 *	  of pending upserts (ft.add, ft.del, ft.flush) and the background
 *	  merge job.
 *
 * See src/README.md, "Merge-insert".
 *
 * src/merge/merge.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_MERGE_H
#define SEGVEC_MERGE_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "access/xact.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "storage/lockdefs.h"
#include "utils/acl.h"
#include "utils/relcache.h"

#include "store/store.h"

/* ----------------
 * Limits and constants
 * ----------------
 */

/* Upper bound of segvec.merge_concurrency */
#define SEGVEC_MAX_MERGE_CONCURRENCY	64

/*
 * segvec's own locks are advisory-type lock tags whose fourth field says
 * what they protect (pg_locks shows it as objsubid; pg_advisory_lock uses
 * 1 and 2, so they never clash with user advisory locks):
 *
 * MERGE_INDEX: (database, index, 0) one merge of an index's queue at a
 *	   time (ft.flush, background merge), held to the end of the transaction;
 * MERGE_ID:	(database, index, hash of id) ft.add/ft.del of one id, held
 *	   to the end of the transaction, so the generations of one id commit
 *	   in generation order;
 * MERGE_SLOT:	(0, slot, 0) one of segvec.merge_concurrency cluster-wide
 *	   slots, held by a background merge to the end of its transaction;
 * MERGE_IDS:	(database, index, 0) taken by every ft.add/ft.del in
 *	   RowExclusiveLock, and in ExclusiveLock instead of MERGE_ID locks by a
 *	   transaction that has taken SEGVEC_MERGE_ID_LOCKS of them, to the end
 *	   of the transaction.
 */
#define SEGVEC_LOCKTAG_MERGE_INDEX	0x5347
#define SEGVEC_LOCKTAG_MERGE_ID		0x5348
#define SEGVEC_LOCKTAG_MERGE_SLOT	0x5349
#define SEGVEC_LOCKTAG_MERGE_IDS	0x534A

/* MERGE_ID locks of one index a transaction takes before MERGE_IDS */
#define SEGVEC_MERGE_ID_LOCKS		64

/* ----------------
 * In-memory state shared by merge.c and mergequeue.c
 * ----------------
 */

/* What a merge needs to know about an index and its table */
typedef struct MergeTarget
{
	Oid			indexoid;
	Oid			heapoid;
	Oid			owner;			/* the table's owner */
	bool		temp;			/* a temporary table */
	char	   *indexname;
	char	   *relname;		/* unqualified, for messages */
	char	   *qualname;		/* schema-qualified and quoted */
	char	   *rowtype;		/* the table's row type, qualified */
	TupleDesc	tupdesc;		/* copy of the table's */
	AttrNumber	idatt;			/* the id column: first INCLUDE column */
	char	   *idname;
	Oid			idtype;
	int32		idtypmod;
	Oid			idcoll;
	AttrNumber	vecatt;			/* the vector column: the key column */
	char	   *vecname;
	int			dimensions;		/* 0 while unknown (or not read) */
	bool		partitioned;	/* a partitioned table (and index) */
	bool		id_not_partition_key;	/* so its id btree is not unique */
	int			method;			/* MERGE_METHOD_*, once MergeRun chose */
	struct MergeSpec *spec;		/* what MergeBuildSql last built */
} MergeTarget;

/* Counts of one merge (or one flush) */
typedef struct MergeCounts
{
	int64		inserted;
	int64		updated;
	int64		deleted;
	int64		applied;		/* pending rows consumed */
	bool		built;			/* built the id btree first */
} MergeCounts;

/*
 * How merges apply rows (segvec.merge_method): one MERGE, or an INSERT ...
 * ON CONFLICT (id) DO UPDATE plus a DELETE of the deleted ids, passed as a
 * parameter (what Citus runs on distributed tables); auto: the second on
 * Citus tables, the first elsewhere.
 */
#define MERGE_METHOD_AUTO		0
#define MERGE_METHOD_MERGE		1
#define MERGE_METHOD_UPSERT		2

/* A MERGE statement being put together (MergeBuildSql) */
typedef struct MergeSpec
{
	StringInfoData source;		/* the USING subquery, without parentheses */
	List	   *targets;		/* quoted table columns an upsert sets... */
	List	   *sources;		/* ...from these columns of s */
	List	   *defaults;		/* quoted columns a replace resets */
	bool		has_op;			/* s.op: 'd' deletes, 'r' replaces */
	bool		has_replace;
} MergeSpec;

/* An identity saved by MergeIdentityPush (SegvecIdentityPush) */
typedef SegvecSavedIdentity SavedIdentity;

/* ----------------
 * GUCs
 * ----------------
 */
extern PGDLLIMPORT bool segvec_index_before_merge;
extern PGDLLIMPORT int segvec_merge_batch_rows;
extern PGDLLIMPORT int segvec_merge_concurrency;
extern PGDLLIMPORT bool segvec_background_merge;
extern PGDLLIMPORT int segvec_merge_method;

/* true inside SegvecMergePending: messages go to the log, not a client */
extern bool segvec_merge_in_background;

/* ----------------
 * Prototypes
 * ----------------
 */

/* called from _PG_init: GUCs and the commit callback that submits jobs */
extern void SegvecMergeInit(void);

/*
 * SegvecFindKeyBtree: the btree a merge can probe for `col = value` on the
 * plain column attnum of heap (valid, ready, non-partial, attnum its first
 * key column, an operator class and collation that serve the column's `=`),
 * or InvalidOid.  *usable (if not NULL) is false when the planner may not
 * use it yet in this transaction (indcheckxmin).  Catalog look-ups only.
 */
extern Oid	SegvecFindKeyBtree(Relation heap, AttrNumber attnum, bool *usable);

/*
 * merge.c, for mergequeue.c
 *
 * MergeIdentityPush: act as userid, in a security-restricted operation with
 * search_path = pg_catalog, pg_temp, until MergeIdentityPop.
 * MergePendingOwner: the owner of ft.pending (the extension's owner).
 * MergeQueueExecute: run SQL on the extension's tables as their owner
 * (SPI connected); returns the SPI result code.
 * MergeOpenTarget: lock the table (heaplock) and the segvec index, check
 * that it has an id column, fill *t.
 * MergeCheckPrivileges / MergeCheckAnyPrivilege: error unless the current
 * user holds all / one of the table privileges.
 * MergeCheckIdPrivilege: error unless the current user may read the id
 * column.
 * MergeEnsureKeyBtree: build the id btree if missing (see merge.c); returns
 * whether the MERGE may probe it.
 * MergeKeyExpr: col as the id type, in the id's collation.
 * MergeBuildSql: the MERGE of a MergeSpec.
 * MergeRun: run one MERGE, adding what it did to *c.
 * MergeRecord: add one merge to ft.merge_counters.
 */
extern void MergeIdentityPush(SavedIdentity *saved, Oid userid);
extern void MergeCheckIdPrivilege(MergeTarget *t);

/*
 * SegvecUncheckedType: the type a value of typid can be read as without
 * running a domain's constraint (a domain as its base type, arrays of
 * domains as arrays of the base type), or InvalidOid when a domain is
 * nested in a composite, range or multirange type.  For ft.add's checks and
 * the ft API's reads of queued upserts.
 */
extern Oid	SegvecUncheckedType(Oid typid);
extern void MergeIdentityPop(SavedIdentity *saved);
extern Oid	MergePendingOwner(void);
extern int	MergeQueueExecute(const char *sql, int nargs, Oid *argtypes,
							  Datum *values, const char *nulls, long count);
extern void MergeOpenTarget(Oid indexoid, LOCKMODE heaplock, bool with_dims,
							MergeTarget *t);
extern void MergeCheckPrivileges(MergeTarget *t, AclMode all);
extern void MergeCheckAnyPrivilege(MergeTarget *t, AclMode any);
extern bool MergeEnsureKeyBtree(MergeTarget *t, bool *built);
extern char *MergeKeyExpr(MergeTarget *t, const char *col, Oid coltype);
extern char *MergeBuildSql(MergeTarget *t, MergeSpec *m);
extern void MergeRun(MergeTarget *t, const char *sql, bool probe,
					 MergeCounts *c);
extern void MergeRecord(MergeTarget *t, MergeCounts *c);
extern bool MergeTableIsCitus(Oid heapoid);

/* mergequeue.c: at commit, submits the merge jobs ft.add/ft.del asked for */
extern void MergeQueueXactCallback(XactEvent event, void *arg);

/*
 * SegvecMergePending: the merge job.  Applies one batch (at most
 * segvec.merge_batch_rows) of the index's pending upserts as the table's
 * owner, and submits another merge job if rows remain.  Called by a
 * background worker inside a transaction (see jobs.h).
 */
extern void SegvecMergePending(Relation index);

#endif							/* SEGVEC_MERGE_H */

/*-------------------------------------------------------------------------
 *
 * ftmaint.c
 *	  ft.compact: the full drain of an index's mutable segment into graph
 *	  segments, in the foreground.
 *
 * src/ft/ftmaint.c
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

#include "compact/compact.h"
#include "ft/ftquery.h"
#include "keymap/keymap.h"
#include "store/store.h"

/*
 * ft.compact(index regclass) -> (docs_compacted bigint,
 *	 segments_created int, segments_merged int)
 *
 * Compacts the index now, in this backend: every doc in the mutable
 * segment when the call starts goes into immutable graph segments, then
 * segments are merged by the merge policy (every segment due for its
 * rewrite is rewritten, waiting for a merge that runs meanwhile), then a
 * keymap snapshot is written.  Requires ownership of the table.  Waits
 * for a VACUUM or another compaction of the index to end.
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
	int			kind;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/*
	 * A partitioned index or a Citus table's: each partition's or shard's
	 * index (every placement's), the counts summed
	 */
	kind = FtFanOutKind(relid);
	if (kind != FT_FANOUT_NONE)
	{
		FtCheckPartitionedOwner(relid, false);
		return FtFanOut(fcinfo,
						psprintf("SELECT COALESCE(sum(c.docs_compacted), 0)::pg_catalog.int8,"
								 " COALESCE(sum(c.segments_created), 0)::pg_catalog.int4,"
								 " COALESCE(sum(c.segments_merged), 0)::pg_catalog.int4"
								 " FROM %s c",
								 FtFanOutSource(fcinfo, kind, "ft.compact(%s)",
												NULL, true)));
	}

	/* the table first, as everything else locks it before its indexes */
	heap = relation_open(SegvecIndexGetHeap(relid), AccessShareLock);
	index = SegvecOpenIndex(relid, RowExclusiveLock, true);

	SegvecCompactDrain(index, &stats);

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

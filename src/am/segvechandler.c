/*-------------------------------------------------------------------------
 *
 * segvechandler.c
 *	  Access method handler and reloptions.
 *
 * The handler lists every IndexAmRoutine field, the unsupported ones too,
 * so that what the access method can do is readable in one place.
 *
 * src/am/segvechandler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "utils/guc.h"

#include "compat.h"
#include "am/am.h"
#include "graph/graph.h"
#include "store/store.h"

static relopt_kind segvec_relopt_kind;

static const struct config_enum_entry quant_bound_options[] = {
	{"proven", SEGVEC_QUANT_BOUND_PROVEN, false},
	{"probable", SEGVEC_QUANT_BOUND_PROBABLE, false},
	{NULL, 0, false}
};

/* GUCs */
int			segvec_ef_search = 40;
int			segvec_max_scan_tuples = 20000;
bool		segvec_shared_bound = true;
bool		segvec_filter_postings = true;
int			segvec_scan_order = SEGVEC_SCAN_ORDER_STRICT;

static const struct config_enum_entry scan_order_options[] = {
	{"strict", SEGVEC_SCAN_ORDER_STRICT, false},
	{"relaxed", SEGVEC_SCAN_ORDER_RELAXED, false},
	{NULL, 0, false}
};

/* Validator of the quantization reloption */
static void
validate_quantization(const char *value)
{
	if (value == NULL || strcmp(value, "sq8") == 0 ||
		strcmp(value, "rabitq") == 0 || strcmp(value, "none") == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for segvec option \"quantization\": \"%s\"",
					value),
			 errdetail("Valid values are \"rabitq\", \"sq8\" and \"none\".")));
}

/*
 * SegvecAmInit: from _PG_init, register the reloptions and define the GUCs
 * of searching.
 */
void
SegvecAmInit(void)
{
	segvec_relopt_kind = add_reloption_kind();

	add_int_reloption(segvec_relopt_kind, "m",
					  "Maximum number of graph neighbours per node (HNSW M)",
					  SEGVEC_DEFAULT_M, SEGVEC_MIN_M, SEGVEC_MAX_M,
					  AccessExclusiveLock);
	add_int_reloption(segvec_relopt_kind, "ef_construction",
					  "Size of the candidate list when building the graph",
					  SEGVEC_DEFAULT_EF_CONSTRUCTION,
					  SEGVEC_MIN_EF_CONSTRUCTION, SEGVEC_MAX_EF_CONSTRUCTION,
					  AccessExclusiveLock);

	add_int_reloption(segvec_relopt_kind, "dimensions",
					  "Vector dimension (0: taken from the first vector)",
					  0, 0, SEGVEC_MAX_DIM, AccessExclusiveLock);
	add_int_reloption(segvec_relopt_kind, "compact_threshold",
					  "Docs in the mutable segment that trigger a compaction (-1: segvec.compact_threshold)",
					  -1, -1, INT_MAX, ShareUpdateExclusiveLock);
	add_string_reloption(segvec_relopt_kind, "quantization",
						 "Codes that graph segments are searched with: rabitq, sq8 or none",
						 "sq8", validate_quantization, AccessExclusiveLock);
	/* the ft dialect's field options, read by ft.query (ft/ftcompile.c) */
	add_string_reloption(segvec_relopt_kind, "text_fields",
						 "TEXT fields of the ft dialect: comma-separated column names",
						 NULL, NULL, ShareUpdateExclusiveLock);
	add_string_reloption(segvec_relopt_kind, "language",
						 "Text search configuration of the TEXT fields",
						 NULL, NULL, ShareUpdateExclusiveLock);
	add_string_reloption(segvec_relopt_kind, "casesensitive",
						 "TAG fields of the ft dialect compared case-sensitively: comma-separated column names",
						 NULL, NULL, ShareUpdateExclusiveLock);

	DefineCustomIntVariable("segvec.ef_search",
							"Size of the candidate list when searching a graph segment.",
							"Higher values give better recall and slower searches.",
							&segvec_ef_search, 40, 1, SEGVEC_MAX_EF_SEARCH,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.exact_scan_factor",
							"Graph segments of at most ef_search times this many docs are scored exactly.",
							"0 searches every graph segment through its graph.",
							&segvec_exact_scan_factor, 16, 0, 100000,
							PGC_USERSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.rerank",
							"Nodes of a quantized graph segment scored exactly before each row is returned (0: ef_search).",
							"Higher values give better recall and slower searches of quantized segments.",
							&segvec_rerank, 0, 0, 100000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("segvec.quant_bound",
							 "How the rerank of an sq8 graph segment bounds the exact distances of the rows its graph search has not yielded yet.",
							 "proven: a worst-case bound, results always in exact order; probable: a bound that fails with probability about 1e-9 per node, far tighter in many dimensions. RaBitQ segments always use RaBitQ's probabilistic bound.",
							 &segvec_quant_bound, SEGVEC_QUANT_BOUND_PROVEN,
							 quant_bound_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("segvec.rabitq_epsilon",
							 "Width of the error bound that the search of a rabitq graph segment goes by (RaBitQ's epsilon_0).",
							 "Each node is searched by its estimated distance less epsilon_0 times its error's width; smaller values search less and rerank fewer rows, larger ones find more of the true neighbours at a given ef_search (1.9: the paper's bound, which rarely fails).",
							 &segvec_rabitq_epsilon, SEGVEC_RABITQ_EPS0_DEFAULT, 0.0, 10.0,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("segvec.max_scan_tuples",
							"Most docs the graph searches of one index scan visit.",
							"Bounds how far a filtered or long search keeps going; a NOTICE says when a scan stopped for it.",
							&segvec_max_scan_tuples, 20000, 1, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("segvec.shared_bound",
							 "Lets the segment searches of one index scan share the k-th best distance.",
							 "A segment whose candidates are all farther stops early (off: each segment is searched on its own, for comparisons).",
							 &segvec_shared_bound, true,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomBoolVariable("segvec.filter_postings",
							 "Lets filtered index scans use the postings of graph segments' filter columns.",
							 "Off reads each segment's filter values as segments without postings are read (for comparisons).",
							 &segvec_filter_postings, true,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomEnumVariable("segvec.scan_order",
							 "What an ordered index scan does with a row found after a farther one was returned: strict or relaxed.",
							 "strict skips such a row, so the output is in non-decreasing distance; relaxed returns it where it was found.",
							 &segvec_scan_order, SEGVEC_SCAN_ORDER_STRICT,
							 scan_order_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * Parse and validate the reloptions of a segvec index.
 */
bytea *
segvecoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"m", RELOPT_TYPE_INT, offsetof(SegvecOptions, m)},
		{"ef_construction", RELOPT_TYPE_INT,
		offsetof(SegvecOptions, ef_construction)},
		{"dimensions", RELOPT_TYPE_INT, offsetof(SegvecOptions, dimensions)},
		{"compact_threshold", RELOPT_TYPE_INT,
		offsetof(SegvecOptions, compact_threshold)},
		{"text_fields", RELOPT_TYPE_STRING,
		offsetof(SegvecOptions, text_fields_offset)},
		{"language", RELOPT_TYPE_STRING,
		offsetof(SegvecOptions, language_offset)},
		{"casesensitive", RELOPT_TYPE_STRING,
		offsetof(SegvecOptions, casesensitive_offset)},
		{"quantization", RELOPT_TYPE_STRING,
		offsetof(SegvecOptions, quantization_offset)},
	};

	return (bytea *) build_reloptions(reloptions, validate,
									  segvec_relopt_kind,
									  sizeof(SegvecOptions),
									  tab, lengthof(tab));
}

/*
 * The access method handler: what segvec can do, and its callbacks.
 */
PG_FUNCTION_INFO_V1(segvechandler);
Datum
segvechandler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = SEGVEC_NSTRATEGIES;
	amroutine->amsupport = SEGVEC_NPROC;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = true;	/* ORDER BY vector <-> query */
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = true;	/* filter columns after the vector */
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = SEGVEC_AM_SEARCHARRAY;	/* = ANY (compat.h) */
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = true;	/* INCLUDE (id): the doc's id key */
	amroutine->amusemaintenanceworkmem = false;
	SegvecAmRoutineLaterFields(amroutine);

	/*
	 * No parallel VACUUM: in parallel mode the cleanup can neither compact
	 * (it needs a subtransaction) nor truncate (the lock's WAL record needs
	 * an xid), and a table with a primary key and a segvec index would be
	 * vacuumed in parallel, the segvec index's cleanup in a worker.  Left
	 * out, the other indexes of most tables are too few for a parallel
	 * VACUUM; one of a table with more still has the leader in parallel
	 * mode, and the cleanup leaves its work to the background workers
	 * (segvecvacuum.c).
	 */
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = segvecbuild;
	amroutine->ambuildempty = segvecbuildempty;
	amroutine->aminsert = segvecinsert;
	amroutine->ambulkdelete = segvecbulkdelete;
	amroutine->amvacuumcleanup = segvecvacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = segveccostestimate;
	amroutine->amoptions = segvecoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = segvecbuildphasename;
	amroutine->amvalidate = segvecvalidate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = segvecbeginscan;
	amroutine->amrescan = segvecrescan;
	amroutine->amgettuple = segvecgettuple;
	amroutine->amgetbitmap = NULL;
	amroutine->amendscan = segvecendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}

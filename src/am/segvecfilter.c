/*-------------------------------------------------------------------------
 *
 * segvecfilter.c
 *	  Filter columns: the key columns after the vector.  Their values as
 *	  the index stores them (a filter entry per doc, store/format.h), and
 *	  the scan keys on them, evaluated inside the index.
 *
 * A value is kept in 8 bytes: the integer-like types (int2, int4, int8,
 * bool, date, timestamp, timestamptz) as the int64 they hold, so equality
 * and the ranges compare exactly; text and uuid as a 64-bit hash of their
 * bytes, which only equality uses, and the executor rechecks the rows (a
 * hash can collide).  A label array (int4[], text[]) is kept as a 64-bit
 * signature: each non-NULL element sets two bits chosen by a hash of it (a
 * Bloom filter), so that "the doc has this label" is necessary for "its
 * bits are set": && (overlap), @> (contains), <@ (is contained by) and =
 * are answered by bit tests with false positives only, and the executor
 * rechecks.  A NULL value never passes a key: the operators are strict,
 * and the access method does not search for NULLs.  A key "col = ANY
 * (array)" (from PostgreSQL 17, compat.h's SEGVEC_AM_SEARCHARRAY) keeps
 * the array's values sorted and looks a doc's value up among them.
 *
 * src/am/segvecfilter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "am/am.h"
#include "store/store.h"

/* how a filter column's values are kept */
typedef enum FilterKind
{
	FILTER_NONE,				/* not a filter type */
	FILTER_INT,					/* the value, as an int64 */
	FILTER_HASH,				/* a hash of the value's bytes */
	FILTER_LABELS				/* a signature of the array's elements */
} FilterKind;

static FilterKind
filter_kind(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case BOOLOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return FILTER_INT;
		case TEXTOID:
		case UUIDOID:
			return FILTER_HASH;
		case INT4ARRAYOID:
		case TEXTARRAYOID:
			return FILTER_LABELS;
		default:
			return FILTER_NONE;
	}
}

/*
 * The labels of a label array: their signature bits (the union), and, if
 * each is not NULL, every label's bits into a palloc'd array *each and
 * its hash (SegvecLabelHash) into a palloc'd *hashes, both of length
 * *neach (NULL elements left out).
 */
static uint64
label_signature(Datum value, uint64 **each, uint64 **hashes, int *neach)
{
	uint64	   *h;
	int			n;
	int			i;
	uint64		sig = SegvecLabelHashes(value, &h, &n);

	if (each)
	{
		*each = palloc(sizeof(uint64) * Max(n, 1));
		for (i = 0; i < n; i++)
			(*each)[i] = SEGVEC_LABEL_BITS(h[i]);
		*hashes = h;
		*neach = n;
	}
	else
		pfree(h);
	return sig;
}

/*
 * SegvecFilterTypeIsLabels: is a filter column of type typid a label array
 * (its entries keep a signature)?
 */
bool
SegvecFilterTypeIsLabels(Oid typid)
{
	return filter_kind(typid) == FILTER_LABELS;
}

/*
 * SegvecFilterLabels: the signature bits of a label array (an int4[] or
 * text[] datum), as a scan key on a label column takes them: their union,
 * and each label's bits into a palloc'd *each and its hash into a
 * palloc'd *hashes, both of *neach (NULL elements left out).
 */
uint64
SegvecFilterLabels(Datum array, uint64 **each, uint64 **hashes, int *neach)
{
	return label_signature(array, each, hashes, neach);
}

/*
 * SegvecFilterTypeSupported: can a column of type typid be a filter column?
 */
bool
SegvecFilterTypeSupported(Oid typid)
{
	return filter_kind(typid) != FILTER_NONE;
}

/*
 * The 8 bytes kept for value, of type typid (a filter type, not NULL).
 */
static uint64
encode_value(Oid typid, Datum value)
{
	switch (typid)
	{
		case INT2OID:
			return (uint64) (int64) DatumGetInt16(value);
		case INT4OID:
			return (uint64) (int64) DatumGetInt32(value);
		case INT8OID:
			return (uint64) DatumGetInt64(value);
		case BOOLOID:
			return DatumGetBool(value) ? 1 : 0;
		case DATEOID:
			return (uint64) (int64) DatumGetDateADT(value);
		case TIMESTAMPOID:
			return (uint64) DatumGetTimestamp(value);
		case TIMESTAMPTZOID:
			return (uint64) DatumGetTimestampTz(value);
		case TEXTOID:
			{
				text	   *t = DatumGetTextPP(value);
				uint64		h;

				h = hash_bytes_extended((const unsigned char *) VARDATA_ANY(t),
										VARSIZE_ANY_EXHDR(t), 0);
				if ((Pointer) t != DatumGetPointer(value))
					pfree(t);
				return h;
			}
		case UUIDOID:
			return hash_bytes_extended(DatumGetUUIDP(value)->data,
									   UUID_LEN, 0);
		case INT4ARRAYOID:
		case TEXTARRAYOID:
			return label_signature(value, NULL, NULL, NULL);
	}
	elog(ERROR, "type %u cannot be a segvec filter column", typid);
	return 0;					/* keep compiler quiet */
}

/*
 * SegvecFilterFormEntry: the filter entry (store/format.h) of a row whose
 * index values are values / isnull (the vector first, then the filter
 * columns), into entry (SEGVEC_FILTER_ENTRY_BYTES of the index's filter
 * columns).
 */
void
SegvecFilterFormEntry(Relation index, const Datum *values,
					  const bool *isnull, char *entry)
{
	int			nfilters = SegvecIndexFilterCount(index);
	uint64		present = 0;
	int			i;

	for (i = 0; i < nfilters; i++)
	{
		uint64		v = 0;

		if (!isnull[i + 1])
		{
			Oid			typid = TupleDescAttr(RelationGetDescr(index), i + 1)->atttypid;

			v = encode_value(typid, values[i + 1]);
			present |= UINT64CONST(1) << i;
		}
		memcpy(entry + sizeof(uint64) * (i + 1), &v, sizeof(uint64));
	}
	memcpy(entry, &present, sizeof(uint64));
}

/*
 * SegvecFilterCheckColumns: refuse an index whose key columns after the
 * first are not filter columns segvec can keep: a type it has no
 * encoding for, or text under a nondeterministic collation (equal values
 * with other bytes would hash apart).
 */
void
SegvecFilterCheckColumns(Relation index)
{
	int			nfilters = SegvecIndexFilterCount(index);
	int			i;

	for (i = 1; i <= nfilters; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), i);

		if (!SegvecFilterTypeSupported(att->atttypid) ||
			index->rd_opcintype[i] != att->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of type %s cannot be a filter column of a segvec index",
							NameStr(att->attname),
							format_type_be(att->atttypid)),
					 errdetail("The key columns after the vector are filter columns: int2, int4, int8, bool, date, timestamp, timestamptz, text, uuid, int4[] or text[], with their default operator classes.")));
		if ((att->atttypid == TEXTOID || att->atttypid == TEXTARRAYOID) &&
			OidIsValid(index->rd_indcollation[i]) &&
			!get_collation_isdeterministic(index->rd_indcollation[i]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a filter column of a segvec index cannot use the nondeterministic collation of column \"%s\"",
							NameStr(att->attname))));
	}
}

/* uint64 order, for the values of an = ANY key */
static int
uint64_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * The values of a key "col op ANY (array)" (SK_SEARCHARRAY) into k, on a
 * column whose values are kept as kind says.  Equality keeps every
 * element, as the column keeps values, sorted and distinct (k->set); an
 * inequality keeps the one element that lets most values in (col < ANY
 * (a) is col < max(a)), as nbtree's preprocessing does.  NULL elements
 * match nothing and are left out.  Returns false when none is left: the
 * key matches no row.
 */
static bool
prepare_array_key(SegvecFilterKey *k, FilterKind kind, Datum array)
{
	ArrayType  *arr = DatumGetArrayTypeP(array);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	uint64	   *vals;
	int			n = 0;
	int			i;

	if (kind == FILTER_LABELS || filter_kind(elemtype) != kind)
		elog(ERROR, "segvec = ANY key of element type %u on a filter column of another kind",
			 elemtype);
	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
					  &elems, &nulls, &nelems);
	vals = palloc(sizeof(uint64) * Max(nelems, 1));
	for (i = 0; i < nelems; i++)
		if (!nulls[i])
			vals[n++] = encode_value(elemtype, elems[i]);
	if (n == 0)
		return false;
	if (k->strategy == BTEqualStrategyNumber)
	{
		int			j = 0;

		qsort(vals, n, sizeof(uint64), uint64_cmp);
		for (i = 1; i < n; i++)
			if (vals[i] != vals[j])
				vals[++j] = vals[i];
		k->set = vals;
		k->nset = j + 1;
		k->value = vals[0];
		return true;
	}
	k->value = vals[0];
	for (i = 1; i < n; i++)
	{
		bool		upper = (k->strategy == BTLessStrategyNumber ||
							 k->strategy == BTLessEqualStrategyNumber);

		if (upper ? (int64) vals[i] > (int64) k->value :
			(int64) vals[i] < (int64) k->value)
			k->value = vals[i];
	}
	pfree(vals);
	return true;
}

/*
 * SegvecFilterPrepare: the scan's keys on filter columns, as comparisons
 * of stored 8-byte values.  A key with a NULL argument, or = ANY of an
 * array with no element but NULLs, matches nothing (f->never); a key on a
 * hashed column asks the executor to recheck (f->recheck).  Allocated in
 * the current memory context.
 */
void
SegvecFilterPrepare(IndexScanDesc scan, SegvecFilter *f)
{
	Relation	index = scan->indexRelation;
	int			i;

	memset(f, 0, sizeof(SegvecFilter));
	f->nfilters = SegvecIndexFilterCount(index);
	if (scan->numberOfKeys == 0)
		return;
	f->keys = palloc(sizeof(SegvecFilterKey) * scan->numberOfKeys);
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		SegvecFilterKey *k = &f->keys[f->nkeys];
		Oid			coltype;
		Oid			argtype;

		if (sk->sk_attno < 2 || sk->sk_attno > f->nfilters + 1)
			elog(ERROR, "segvec scan key on column %d is not on a filter column",
				 sk->sk_attno);
		if (sk->sk_flags & SK_ISNULL)
		{
			f->never = true;
			continue;
		}
		coltype = TupleDescAttr(RelationGetDescr(index), sk->sk_attno - 1)->atttypid;
		k->col = sk->sk_attno - 2;
		k->strategy = sk->sk_strategy;
		k->labels = NULL;
		k->hashes = NULL;
		k->nlabels = 0;
		k->set = NULL;
		k->nset = 0;
		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			if (filter_kind(coltype) == FILTER_HASH
				? k->strategy != BTEqualStrategyNumber
				: (k->strategy < BTLessStrategyNumber ||
				   k->strategy > BTGreaterStrategyNumber))
				elog(ERROR, "unknown segvec = ANY filter strategy %d",
					 k->strategy);
			if (!prepare_array_key(k, filter_kind(coltype), sk->sk_argument))
			{
				f->never = true;
				continue;
			}
			if (filter_kind(coltype) == FILTER_HASH)
				f->recheck = true;
			f->nkeys++;
			continue;
		}
		if (filter_kind(coltype) == FILTER_LABELS)
		{
			/* the operators are on anyarray: the argument says its type */
			if (k->strategy < SEGVEC_LABELS_OVERLAP ||
				k->strategy > SEGVEC_LABELS_EQUAL)
				elog(ERROR, "unknown segvec label filter strategy %d",
					 k->strategy);
			k->value = label_signature(sk->sk_argument, &k->labels,
									   &k->hashes, &k->nlabels);
			f->recheck = true;
			f->nkeys++;
			continue;
		}
		argtype = OidIsValid(sk->sk_subtype) ? sk->sk_subtype : coltype;
		if (filter_kind(argtype) != filter_kind(coltype))
			elog(ERROR, "segvec scan key of type %u on a column of type %u",
				 argtype, coltype);
		k->value = encode_value(argtype, sk->sk_argument);
		if (filter_kind(coltype) == FILTER_HASH)
		{
			if (k->strategy != BTEqualStrategyNumber)
				elog(ERROR, "segvec filter on a hashed column supports only equality");
			f->recheck = true;
		}
		else if (k->strategy < BTLessStrategyNumber ||
				 k->strategy > BTGreaterStrategyNumber)
			elog(ERROR, "unknown segvec filter strategy %d", k->strategy);
		f->nkeys++;
	}
}

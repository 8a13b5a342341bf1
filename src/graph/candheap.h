/*-------------------------------------------------------------------------
 *
 * candheap.h
 *	  A binary heap of graph nodes by distance, used by the HNSW build
 *	  (graphbuild.c) and search (graphsearch.c) for their candidate and
 *	  result sets.  Inline: it sits on the hottest path of both.
 *
 * src/graph/candheap.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_CANDHEAP_H
#define SEGVEC_CANDHEAP_H

#include "postgres.h"

#include "utils/memutils.h"

/* a node and its distance to some query */
typedef struct GraphCand
{
	double		distance;
	uint32		id;
} GraphCand;

/* a binary heap of GraphCand, nearest first (min) or farthest first (max) */
typedef struct GraphHeap
{
	GraphCand  *items;
	int			count;
	int			capacity;
	bool		max;
} GraphHeap;

static inline bool
cand_heap_before(const GraphHeap *h, const GraphCand *a, const GraphCand *b)
{
	return h->max ? a->distance > b->distance : a->distance < b->distance;
}

/* an empty heap with room for capacity items (it grows as needed) */
static inline void
cand_heap_init(GraphHeap *h, int capacity, bool max)
{
	h->items = palloc(sizeof(GraphCand) * Max(capacity, 1));
	h->count = 0;
	h->capacity = Max(capacity, 1);
	h->max = max;
}

static inline void
cand_heap_push(GraphHeap *h, double distance, uint32 id)
{
	int			i;

	if (h->count >= h->capacity)
	{
		h->capacity *= 2;
		h->items = repalloc_huge(h->items, sizeof(GraphCand) * h->capacity);
	}
	i = h->count++;
	h->items[i].distance = distance;
	h->items[i].id = id;
	while (i > 0)
	{
		int			parent = (i - 1) / 2;
		GraphCand	tmp;

		if (!cand_heap_before(h, &h->items[i], &h->items[parent]))
			break;
		tmp = h->items[i];
		h->items[i] = h->items[parent];
		h->items[parent] = tmp;
		i = parent;
	}
}

/* remove and return the top item; the heap must not be empty */
static inline GraphCand
cand_heap_pop(GraphHeap *h)
{
	GraphCand	top = h->items[0];
	int			i = 0;

	h->items[0] = h->items[--h->count];
	for (;;)
	{
		int			l = 2 * i + 1;
		int			r = l + 1;
		int			best = i;
		GraphCand	tmp;

		if (l < h->count && cand_heap_before(h, &h->items[l], &h->items[best]))
			best = l;
		if (r < h->count && cand_heap_before(h, &h->items[r], &h->items[best]))
			best = r;
		if (best == i)
			break;
		tmp = h->items[i];
		h->items[i] = h->items[best];
		h->items[best] = tmp;
		i = best;
	}
	return top;
}

/* qsort comparator: ascending distance */
static inline int
cand_cmp(const void *a, const void *b)
{
	double		da = ((const GraphCand *) a)->distance;
	double		db = ((const GraphCand *) b)->distance;

	if (da < db)
		return -1;
	if (da > db)
		return 1;
	return 0;
}

#endif							/* SEGVEC_CANDHEAP_H */

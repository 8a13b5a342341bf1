/*-------------------------------------------------------------------------
 *
 * compact_int.h
 *	  What the files of compact/ share and no other subsystem uses.
 *
 * src/compact/compact_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGVEC_COMPACT_INT_H
#define SEGVEC_COMPACT_INT_H

#include "store/store.h"

/* compact.c */
extern void SegvecInstallMoved(Relation index, SegvecSegment *moved);
extern bool SegvecClaimSegment(Relation index, uint32 segno);
extern void SegvecReleaseSegment(Relation index, uint32 segno);

#endif							/* SEGVEC_COMPACT_INT_H */

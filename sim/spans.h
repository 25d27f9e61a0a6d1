/*
 * spans.h: which unsynced writes of a device meet which (sim layer; device.h DV15).
 *
 * Each unsynced write keeps the span of list indices [from, to) within which the writes
 * before it (earlier) and after it (later) that meet the cells it touches lie (none: from ==
 * to). Writes of two files never meet. The device calls pn_spans_join as a write joins its
 * list and pn_spans_after_fsync when an fsync took writes out; the crash digest asks
 * pn_spans_of instead of scanning the list for every kept write of every state.
 */
#ifndef PN_SPANS_H
#define PN_SPANS_H

#include "device.h"

/* Write n, just appended to d's list, against the writes before it. */
void pn_spans_join(struct pn_device *d, uint32_t n);
/* After an fsync of file f took writes of f out of d's list: kept_before[i] is how many
 * writes before old index i stayed (i up to the old length, inclusive). */
void pn_spans_after_fsync(struct pn_device *d, enum pn_file f, const uint32_t *kept_before);
/* The span of the writes before (dir -1) or after (+1) write i that meet its cells. */
static inline const uint32_t *pn_spans_of(const struct pn_device *d, uint32_t i, int dir)
{
	const struct pn_unsynced *u = &d->unsynced[i];
	return dir < 0 ? u->earlier : u->later;
}
/* Whether write o meets the cells (PN_DEVICE_CELL-aligned) write u touches. */
bool pn_spans_meet(const struct pn_unsynced *u, const struct pn_unsynced *o);
/* The reference: whether a write before (dir -1) or after (+1) write i meets its cells, by a
 * scan of the list (test_device holds the spans against it). */
bool pn_spans_scan(const struct pn_device *d, uint32_t i, int dir);

#endif

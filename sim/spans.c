/*
 * spans.c: which unsynced writes of a device meet which (sim layer; spans.h, device.h DV15).
 */
#include "spans.h"

bool pn_spans_meet(const struct pn_unsynced *u, const struct pn_unsynced *o)
{
	const uint64_t cell = PN_DEVICE_CELL;
	uint64_t lo = u->offset / cell * cell, hi = (u->offset + u->len + cell - 1) / cell * cell;
	return o->file == u->file && o->offset < hi && lo < o->offset + o->len;
}

/* span gains list index k (k above every index it holds). */
static void span_add(uint32_t span[2], uint32_t k)
{
	if (span[0] == span[1])
		span[0] = k;
	span[1] = k + 1;
}

void pn_spans_join(struct pn_device *d, uint32_t n)
{
	struct pn_unsynced *u = &d->unsynced[n];
	for (uint32_t k = 0; k < n; k++) { /* k rises: each span grows at its end */
		struct pn_unsynced *o = &d->unsynced[k];
		if (o->file != u->file)
			continue; /* only writes of one file meet */
		if (pn_spans_meet(u, o))
			span_add(u->earlier, k);
		if (pn_spans_meet(o, u))
			span_add(o->later, n);
	}
}

/* Another file's writes kept every write of their spans: the spans move to the new indices.
 * The writes of f left are spanned again among themselves. */
void pn_spans_after_fsync(struct pn_device *d, enum pn_file f, const uint32_t *kept_before)
{
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		struct pn_unsynced *u = &d->unsynced[i];
		if (u->file != f) {
			for (int s = 0; s < 2; s++) {
				uint32_t *span = s ? u->later : u->earlier;
				span[0] = kept_before[span[0]];
				span[1] = kept_before[span[1]];
			}
		} else {
			u->earlier[0] = u->earlier[1] = u->later[0] = u->later[1] = 0;
		}
	}
	for (uint32_t i = 0; i < d->nunsynced; i++)
		if (d->unsynced[i].file == f)
			pn_spans_join(d, i);
}

bool pn_spans_scan(const struct pn_device *d, uint32_t i, int dir)
{
	for (uint32_t k = dir < 0 ? 0 : i + 1; k < (dir < 0 ? i : d->nunsynced); k++)
		if (pn_spans_meet(&d->unsynced[i], &d->unsynced[k]))
			return true;
	return false;
}

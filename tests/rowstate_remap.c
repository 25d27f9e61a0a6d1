/* rowstate_remap.c: umbra_remap.c's state, for test_protocol (tests/rowstate.h). uses[] is
 * derived from the rest and high is a metric: not in the fingerprint. */
#include "umbra_remap.c"
#include "rowstate.h"

void rowstate_remap(struct pn_engine *e, rowstate_moved_fn moved)
{
	struct remap *r = e->pctx.state;
	PN_ASSERT(r != NULL && r->heap_pages > 1);
	uint32_t last = r->heap_pages - 1;
	r->pblk[0]++;
	moved(e, "pblk[0]");
	r->pblk[last * HANDLES + 2] = 7;
	moved(e, "pblk[last]");
	r->base_h[last] = 1;
	moved(e, "base_h[last]");
	r->base_pblk[0]++;
	moved(e, "base_pblk[0]");
	r->release[r->cap - 1] = 3;
	moved(e, "release[last]");
	r->dirty[0] = 1;
	moved(e, "dirty[0]");
	r->lsn[r->npages - 1] = 99;
	moved(e, "lsn[last]");
	r->next_free++;
	moved(e, "next_free");
	r->seq_begun++;
	moved(e, "seq_begun");
	r->seq_done++;
	moved(e, "seq_done");
	struct remap_run *rr = &r->runs[1];
	rr->valid = true;
	moved(e, "runs[1].valid");
	rr->seq = 5;
	moved(e, "runs[1].seq");
	rr->step = 2;
	moved(e, "runs[1].step");
	rr->writing = 0;
	moved(e, "runs[1].writing");
	rr->snap_h[last] = 2;
	moved(e, "runs[1].snap_h[last]");
	rr->snap_pblk[0] = 9;
	moved(e, "runs[1].snap_pblk[0]");
}

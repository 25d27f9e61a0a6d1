/* rowstate_doublewrite.c: doublewrite.c's state, for test_protocol (tests/rowstate.h). */
#include "doublewrite.c"
#include "rowstate.h"

void rowstate_doublewrite(struct pn_engine *e, rowstate_moved_fn moved)
{
	struct dw_state *d = e->pctx.state;
	PN_ASSERT(d != NULL);
	d->next++;
	moved(e, "next");
	d->used_since_sync++;
	moved(e, "used_since_sync");
	d->sync_in_flight = !d->sync_in_flight;
	moved(e, "sync_in_flight");
	d->restore_len = 2;
	moved(e, "restore_len");
	d->restore[1]++;
	moved(e, "restore[]");
	d->restore_pos++;
	moved(e, "restore_pos");
}

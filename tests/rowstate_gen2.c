/* rowstate_gen2.c: umbra_gen2.c's state, for test_protocol (tests/rowstate.h). The second
 * slots ever taken are the space metric's only: not in the fingerprint. */
#include "umbra_gen2.c"
#include "rowstate.h"

void rowstate_gen2(struct pn_engine *e, rowstate_moved_fn moved)
{
	struct gen2 *g = e->pctx.state;
	PN_ASSERT(g != NULL);
	g->image_redo[0]++;
	moved(e, "image_redo[0]");
	g->image_redo[e->heap_pages - 1]++;
	moved(e, "image_redo[last]");
}

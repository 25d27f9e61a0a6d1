/* rowstate_pool.c: umbra_pool.c's state, for test_protocol (tests/rowstate.h). owner[] is
 * entry_of[] inverted (hold and give change both), so entry_of stands for both. */
#include "umbra_pool.c"
#include "rowstate.h"

void rowstate_pool(struct pn_engine *e, rowstate_moved_fn moved)
{
	struct pool *pl = e->pctx.state;
	PN_ASSERT(pl != NULL && pl->spares >= 2);
	pl->next_new++;
	moved(e, "next_new");
	pl->nfree = 1;
	moved(e, "nfree");
	pl->stack[0]++;
	moved(e, "stack[]");
	pl->entry_of[0] = 0;
	moved(e, "entry_of[0]");
	pl->entry_of[2u * e->heap_pages - 1] = 1;
	moved(e, "entry_of[last]");
	pl->image_redo[e->heap_pages - 1]++;
	moved(e, "image_redo[]");
	pl->base_owner[0][0]++;
	moved(e, "base_owner[0]");
	pl->base_owner[1][pl->spares]++;
	moved(e, "base_owner[1]");
}

/* rowstate_pushdown.c: pushdown.c's state, for test_protocol (tests/rowstate.h). The
 * histogram is a metric, check_next pn_ps_check's rotation, the chain's bytes the WAL's. */
#include "pushdown.c"
#include "rowstate.h"

static void scalars(struct pn_engine *e, struct pn_pageserver *ps, rowstate_moved_fn moved)
{
	ps->next++;
	moved(e, "next");
	ps->prev++;
	moved(e, "prev");
	ps->ingested++;
	moved(e, "ingested");
	ps->horizon++;
	moved(e, "horizon");
	ps->horizon_next++;
	moved(e, "horizon_next");
	ps->seq++;
	moved(e, "seq");
	ps->round = PS_WRITING;
	moved(e, "round");
	ps->running = !ps->running;
	moved(e, "running");
	ps->io_pending = !ps->io_pending;
	moved(e, "io_pending");
	ps->writes++;
	moved(e, "writes");
	ps->queue_len = 1;
	moved(e, "queue_len");
	ps->queue[0]++;
	moved(e, "queue[]");
	ps->batch_len = 1;
	moved(e, "batch_len");
	ps->batch[0]++;
	moved(e, "batch[]");
}

static void requests(struct pn_engine *e, struct pn_pageserver *ps, rowstate_moved_fn moved)
{
	ps->nreq = 1;
	moved(e, "nreq");
	ps->req[0].frame++;
	moved(e, "req[].frame");
	ps->req[0].page++;
	moved(e, "req[].page");
	ps->req[0].proc++;
	moved(e, "req[].proc");
	ps->req[0].lsn++;
	moved(e, "req[].lsn");
	ps->last_written[e->pages - 1]++;
	moved(e, "last_written[]");
}

static void page(struct pn_engine *e, struct ps_page *pg, rowstate_moved_fn moved)
{
	pg->img_lsn++;
	moved(e, "page img_lsn");
	pg->dur_lsn++;
	moved(e, "page dur_lsn");
	pg->new_lsn++;
	moved(e, "page new_lsn");
	pg->hold++;
	moved(e, "page hold");
	pg->img_crc++;
	moved(e, "page img_crc");
	pg->dur_crc++;
	moved(e, "page dur_crc");
	pg->new_crc++;
	moved(e, "page new_crc");
	pg->img_slot ^= 1;
	moved(e, "page img_slot");
	pg->dur_slot ^= 1;
	moved(e, "page dur_slot");
	pg->queued = !pg->queued;
	moved(e, "page queued");
	pg->in_round = !pg->in_round;
	moved(e, "page in_round");
	pg->last_end++;
	moved(e, "page last_end");
	pg->ndeltas++;
	moved(e, "page ndeltas");
	pg->len++;
	moved(e, "page len");
}

void rowstate_pushdown(struct pn_engine *e, rowstate_moved_fn moved)
{
	struct pn_pageserver *ps = e->pctx.state;
	PN_ASSERT(ps != NULL);
	scalars(e, ps, moved);
	requests(e, ps, moved);
	page(e, &ps->pages[0], moved);
	page(e, &ps->pages[e->pages - 1], moved);
}

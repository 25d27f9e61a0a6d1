/*
 * wl_slru.c: the `slru` workload, commit-status pages (seed 003's proposal: SLRU pages with
 * the standard page header, so that they get checksums and LSNs) (workload layer).
 *
 * `transactions` transactions over the clients; each changes pages_per_transaction heap
 * pages chosen uniformly (as the random workload does), sets its own commit-status bits in
 * the CLOG page that holds its xid (CLOG/SET: 2 bits per xid, 32,768 xids per headerless
 * 8 KiB page, 32,672 with a header), then commits. With protocol.slru_headers the CLOG
 * page has an LSN and a checksum, so its first change after a checkpoint carries a
 * full-page image under full_page_writes, as any page does; without, it never does (a
 * torn commit-status page is safe: its bytes are independent bits). The cost of headers
 * is those images (penumbra compare --stats shows them on CLOG/SET), plus the 24 bytes
 * per page the header takes from the bits.
 */
#include "engine.h"
#include "txn.h"
#include "workload.h"

#include <stdio.h>

static bool init(struct pn_client_setup *setup, void **state)
{
	if (setup->sc->workload.pages_per_transaction > setup->heap_pages) {
		snprintf(setup->error, setup->error_size,
			 "%s: workload.pages_per_transaction (%u) exceeds storage.pages (%u)",
			 setup->sc->path, setup->sc->workload.pages_per_transaction,
			 setup->heap_pages);
		return false;
	}
	return wl_base_only_init(setup, state);
}

static enum pn_client_next next(void *state, const struct pn_client *c, struct pn_step *out)
{
	struct wl_base *b = state;
	struct wl_client *w = &b->clients[c->id];
	*out = (struct pn_step){.op = PN_OP_UPDATE, .client = c->id};
	if (w->txn_pos < w->txn_len) {
		out->page = w->txn_pages[w->txn_pos++];
		return PN_CLIENT_OP;
	}
	if (w->txn_len && w->txn_pos == w->txn_len) { /* the heap changes are done */
		w->txn_pos++;
		out->op = PN_OP_SLRU_SET;
		out->xid = c->xid;
		return PN_CLIENT_OP;
	}
	enum pn_client_next n;
	if (!pn_workload_txn_next(b, c, out, &n))
		return n;
	pn_workload_pick_pages(b, c, b->sc->workload.pages_per_transaction);
	out->page = w->txn_pages[0];
	return PN_CLIENT_OP;
}

const struct pn_client_ops pn_workload_slru = {
	.name = "slru",
	.init = init,
	.free = wl_base_only_free,
	.page_init = wl_plain_page_init,
	.page_init_fixed = wl_plain_page_init,
	.next = next,
};

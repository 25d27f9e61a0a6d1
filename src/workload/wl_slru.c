/*
 * wl_slru.c: the `slru` workload, commit-status pages (seed 003's proposal: SLRU pages with
 * the standard page header, so that they get checksums and LSNs) (engine layer).
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

#include <stdio.h>

bool pn_wl_slru_init(struct pn_engine *e)
{
	if (e->sc->workload.pages_per_transaction > e->heap_pages) {
		snprintf(e->svc.error, sizeof(e->svc.error),
			 "%s: workload.pages_per_transaction (%u) exceeds storage.pages (%u)",
			 e->sc->path, e->sc->workload.pages_per_transaction, e->heap_pages);
		return false;
	}
	return true;
}

enum pn_wl_next pn_wl_slru_next(struct pn_engine *e, uint32_t client, struct pn_step *out)
{
	struct pn_proc *p = &e->procs[client];
	const struct pn_scenario *sc = e->sc;
	*out = (struct pn_step){.op = PN_OP_UPDATE, .client = client};
	if (p->txn_pos < p->txn_len) {
		out->page = p->txn_pages[p->txn_pos++];
		return PN_WL_OP;
	}
	if (p->txn_len && p->txn_pos == p->txn_len) { /* the heap changes are done */
		p->txn_pos++;
		out->op = PN_OP_SLRU_SET;
		out->xid = p->xid;
		return PN_WL_OP;
	}
	enum pn_wl_next next;
	if (!pn_workload_txn_next(e, p, out, &next))
		return next;
	pn_workload_pick_pages(e, p, sc->workload.pages_per_transaction);
	out->page = p->txn_pages[0];
	return PN_WL_OP;
}

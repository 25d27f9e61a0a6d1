/*
 * workload.c: what client backends do (engine layer: the simulator and the real-disk bench
 * both drive it, through the seam's PRNG only).
 *
 *   script  the scenario's steps, in order, one at a time: a step runs on its client's
 *           backend once the step before it has finished (a commit waits for its flush);
 *   random  `transactions` transactions spread over the clients, each changing
 *           pages_per_transaction distinct pages chosen uniformly, then committing;
 *   vacuum, btree_dedup, slru: their own files (wl_vacuum.c, wl_btree.c, wl_slru.c).
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>

bool pn_workload_init(struct pn_engine *e)
{
	switch (e->sc->workload.kind) {
	case PN_WL_SCRIPT:
	case PN_WL_RANDOM: return true;
	/* workloads with their own generator file */
	case PN_WL_VACUUM: return pn_wl_vacuum_init(e);
	case PN_WL_BTREE_DEDUP: return pn_wl_btree_init(e);
	case PN_WL_SLRU: return pn_wl_slru_init(e);
	default:
		snprintf(e->error, sizeof(e->error),
			 "%s: workload.kind '%s' is not implemented yet (script and random are)",
			 e->sc->path, e->sc->workload.kind == PN_WL_PGBENCH ? "pgbench"
				      : e->sc->workload.kind == PN_WL_TPCC ? "tpcc"
				      : e->sc->workload.kind == PN_WL_VACUUM ? "vacuum"
				      : e->sc->workload.kind == PN_WL_BTREE_DEDUP ? "btree_dedup" : "slru");
		return false;
	}
}

static enum pn_wl_next script_next(struct pn_engine *e, uint32_t client, struct pn_step *out)
{
	const struct pn_scenario *sc = e->sc;
	if (e->script_pos >= sc->workload.script_len)
		return e->script_busy ? PN_WL_WAIT : PN_WL_DONE;
	if (e->script_busy || sc->workload.script[e->script_pos].client != client)
		return PN_WL_WAIT;
	*out = sc->workload.script[e->script_pos++];
	e->script_busy = true;
	return PN_WL_OP;
}

void pn_workload_step_done(struct pn_engine *e, uint32_t client)
{
	const struct pn_scenario *sc = e->sc;
	e->script_busy = false;
	if (e->script_pos < sc->workload.script_len) {
		pn_wake(e, sc->workload.script[e->script_pos].client, 0);
		return;
	}
	for (uint32_t c = 0; c < e->nbackends; c++)
		pn_wake(e, c, 0);
}

bool pn_workload_txn_next(struct pn_engine *e, struct pn_proc *p, struct pn_step *out,
			  enum pn_wl_next *next)
{
	*next = PN_WL_OP;
	if (p->txn_len) {
		p->txn_len = 0;
		out->op = PN_OP_COMMIT;
		return false;
	}
	if (e->txns_started >= e->sc->workload.transactions) {
		*next = PN_WL_DONE;
		return false;
	}
	e->txns_started++;
	return true;
}

void pn_workload_pick_pages(struct pn_engine *e, struct pn_proc *p, uint32_t k)
{
	PN_ASSERT(k <= e->heap_pages && k <= PN_WAL_MAX_BLOCKS);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t pg;
		bool dup;
		do {
			pg = (uint32_t)(e->env.random(e->env.ctx) % e->heap_pages);
			dup = false;
			for (uint32_t j = 0; j < i; j++)
				dup |= p->txn_pages[j] == pg;
		} while (dup);
		p->txn_pages[i] = pg;
	}
	p->txn_len = k;
	p->txn_pos = 1;
}

static enum pn_wl_next random_next(struct pn_engine *e, uint32_t client, struct pn_step *out)
{
	struct pn_proc *p = &e->procs[client];
	enum pn_wl_next next;
	*out = (struct pn_step){.op = PN_OP_UPDATE, .client = client};
	if (p->txn_pos < p->txn_len) {
		out->page = p->txn_pages[p->txn_pos++];
		return PN_WL_OP;
	}
	if (!pn_workload_txn_next(e, p, out, &next))
		return next;
	pn_workload_pick_pages(e, p, PN_MIN(e->sc->workload.pages_per_transaction, e->heap_pages));
	out->page = p->txn_pages[0];
	return PN_WL_OP;
}

enum pn_wl_next pn_workload_next(struct pn_engine *e, uint32_t client, struct pn_step *out)
{
	switch (e->sc->workload.kind) {
	case PN_WL_SCRIPT: return script_next(e, client, out);
	case PN_WL_VACUUM: return pn_wl_vacuum_next(e, client, out);
	case PN_WL_BTREE_DEDUP: return pn_wl_btree_next(e, client, out);
	case PN_WL_SLRU: return pn_wl_slru_next(e, client, out);
	default: return random_next(e, client, out);
	}
}

void pn_workload_free(struct pn_engine *e)
{
	free(e->wl); /* one allocation (wl_btree.c) */
	e->wl = NULL;
}

void pn_workload_page_init(struct pn_engine *e, uint32_t p, uint8_t *page)
{
	switch (e->sc->workload.kind) {
	case PN_WL_VACUUM: pn_wl_vacuum_page_init(e, p, page); break;
	case PN_WL_BTREE_DEDUP: pn_wl_btree_page_init(e, p, page); break;
	default: pn_page_init(page, e->page_size, p, false); break;
	}
}

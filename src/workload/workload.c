/*
 * workload.c: the table of workloads (workload layer, above every generator): one struct
 * pn_client_ops row per workload.kind, pn_workload_of() to pick a scenario's (what the
 * assembly passes to pn_engine_init), and the two rows without a file of their own:
 *
 *   script  the scenario's steps, in order, one at a time: a step runs on its client's
 *           backend once the step before it has finished (a commit waits for its flush);
 *   random  `transactions` transactions spread over the clients, each changing
 *           pages_per_transaction distinct pages chosen uniformly, then committing.
 * The others: pgbench, tpcc (wl_pgbench.c, wl_tpcc.c, over the tables and indexes layout.c
 * lays out), vacuum, btree_dedup, slru (wl_vacuum.c, wl_btree.c, wl_slru.c); what they share
 * of a transaction is txn.c's.
 */
#include "workload.h"
#include "engine.h"
#include "layout.h"

#include <stdlib.h>

static const struct pn_client_ops *const workloads[PN_WL_COUNT] = {
	[PN_WL_SCRIPT] = &pn_workload_script,   [PN_WL_RANDOM] = &pn_workload_random,
	[PN_WL_PGBENCH] = &pn_workload_pgbench, [PN_WL_TPCC] = &pn_workload_tpcc,
	[PN_WL_VACUUM] = &pn_workload_vacuum,   [PN_WL_BTREE_DEDUP] = &pn_workload_btree_dedup,
	[PN_WL_SLRU] = &pn_workload_slru,       [PN_WL_IMPORT] = &pn_workload_import,
};

const struct pn_client_ops *pn_workload_of(const struct pn_scenario *sc)
{
	PN_ASSERT(sc->workload.kind < PN_WL_COUNT);
	PN_ASSERT(workloads[sc->workload.kind] !=
		  NULL); /* every kind the loader accepts has a row */
	return workloads[sc->workload.kind];
}

const char *pn_workload_txn_name(const struct pn_scenario *sc, int t)
{
	const struct pn_client_ops *ops = pn_workload_of(sc);
	return ops->txn_name ? ops->txn_name(t) : NULL;
}

struct wl_layout *wl_layout_of(const struct pn_engine *e)
{
	void *state;
	const struct pn_client_ops *ops = pn_engine_client(e, &state);
	bool layout = ops == &pn_workload_pgbench || ops == &pn_workload_tpcc;
	return layout && state ? &((struct wl_layout_state *)state)->L : NULL;
}

uint32_t pn_scenario_layout_pages(const struct pn_scenario *s)
{
	switch (s->workload.kind) {
	case PN_WL_PGBENCH: return wl_pgbench_pages(s);
	case PN_WL_TPCC: return wl_tpcc_pages(s);
	default: return 0;
	}
}

/* ---- script ---- */

struct script {
	struct wl_base b;
	uint32_t pos; /* next script step (script steps run in order) */
	bool busy;    /* a step is running */
};

static bool script_init(struct pn_client_setup *setup, void **state)
{
	return wl_base_new(setup, state, sizeof(struct script), false);
}

static enum pn_client_next script_next(void *state, const struct pn_client *c, struct pn_step *out)
{
	struct script *s = state;
	const struct pn_scenario *sc = s->b.sc;
	if (s->pos >= sc->workload.script_len)
		return s->busy ? PN_CLIENT_WAIT : PN_CLIENT_DONE;
	if (s->busy || sc->workload.script[s->pos].client != c->id)
		return PN_CLIENT_WAIT;
	*out = sc->workload.script[s->pos++];
	s->busy = true;
	return PN_CLIENT_OP;
}

static void script_step_done(void *state, const struct pn_client *c)
{
	struct script *s = state;
	const struct pn_scenario *sc = s->b.sc;
	s->busy = false;
	if (s->pos < sc->workload.script_len) {
		pn_client_wake(c, sc->workload.script[s->pos].client, 0);
		return;
	}
	for (uint32_t i = 0; i < sc->workload.clients; i++)
		pn_client_wake(c, i, 0);
}

const struct pn_client_ops pn_workload_script = {
	.name = "script",
	.init = script_init,
	.free = wl_base_only_free,
	.page_init = wl_plain_page_init,
	.page_init_fixed = wl_plain_page_init,
	.next = script_next,
	.step_done = script_step_done,
};

/* ---- random ---- */

static enum pn_client_next random_next(void *state, const struct pn_client *c, struct pn_step *out)
{
	struct wl_base *b = state;
	struct wl_client *w = &b->clients[c->id];
	enum pn_client_next next;
	*out = (struct pn_step){.op = PN_OP_UPDATE, .client = c->id};
	if (w->txn_pos < w->txn_len) {
		out->page = w->txn_pages[w->txn_pos++];
		return PN_CLIENT_OP;
	}
	if (!pn_workload_txn_next(b, c, out, &next))
		return next;
	pn_workload_pick_pages(b, c, PN_MIN(b->sc->workload.pages_per_transaction, b->heap_pages));
	out->page = w->txn_pages[0];
	return PN_CLIENT_OP;
}

const struct pn_client_ops pn_workload_random = {
	.name = "random",
	.init = wl_base_only_init,
	.free = wl_base_only_free,
	.page_init = wl_plain_page_init,
	.page_init_fixed = wl_plain_page_init,
	.next = random_next,
};

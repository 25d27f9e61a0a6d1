/*
 * txn.c: what every workload's state begins with (workload layer, below the generators):
 * struct wl_base (the scenario, the transactions begun, each client's transaction pages),
 * the state's allocation, and the transaction frame of the generated workloads (a new
 * transaction while workload.transactions remain; its pages drawn from the engine's PRNG;
 * its commit after its ops).
 */
#include "txn.h"
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>

bool wl_base_init(struct wl_base *b, struct pn_client_setup *setup, bool per_client)
{
	const struct pn_scenario *sc = setup->sc;
	b->sc = sc;
	b->page_size = setup->page_size;
	b->heap_pages = setup->heap_pages;
	if (!per_client)
		return true;
	b->clients = calloc(sc->workload.clients, sizeof(*b->clients));
	if (b->clients == NULL)
		snprintf(setup->error, setup->error_size, "%s: out of memory", sc->path);
	return b->clients != NULL;
}

void wl_base_free(struct wl_base *b) { free(b->clients); }

bool wl_state_new(struct pn_client_setup *setup, void **state, size_t size)
{
	*state = calloc(1, size);
	if (*state == NULL)
		snprintf(setup->error, setup->error_size, "%s: out of memory", setup->sc->path);
	return *state != NULL;
}

void wl_plain_page_init(const void *state, uint32_t p, uint8_t *page)
{
	pn_page_init(page, ((const struct wl_base *)state)->page_size, p, false);
}

/* ---- the frame of the generated workloads ---- */

bool pn_workload_endless(const struct wl_base *b)
{
	return b->sc->workload.transactions == UINT64_MAX;
}

bool pn_workload_txn_start(struct wl_base *b)
{
	if (b->txns_started >= b->sc->workload.transactions)
		return false;
	b->txns_started++;
	return true;
}

bool pn_workload_txn_next(struct wl_base *b, const struct pn_client *c, struct pn_step *out,
			  enum pn_client_next *next)
{
	struct wl_client *w = &b->clients[c->id];
	*next = PN_CLIENT_OP;
	if (w->txn_len) {
		w->txn_len = 0;
		out->op = PN_OP_COMMIT;
		return false;
	}
	if (!pn_workload_txn_start(b)) {
		*next = PN_CLIENT_DONE;
		return false;
	}
	return true;
}

void pn_workload_pick_pages(struct wl_base *b, const struct pn_client *c, uint32_t k)
{
	struct wl_client *w = &b->clients[c->id];
	PN_ASSERT(k <= b->heap_pages && k <= PN_WAL_MAX_BLOCKS);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t pg;
		bool dup;
		do {
			pg = (uint32_t)pn_client_random(c, 0, b->heap_pages - 1);
			dup = false;
			for (uint32_t j = 0; j < i; j++)
				dup |= w->txn_pages[j] == pg;
		} while (dup);
		w->txn_pages[i] = pg;
	}
	w->txn_len = k;
	w->txn_pos = 1;
}

bool wl_base_new(struct pn_client_setup *setup, void **state, size_t size, bool per_client)
{
	return wl_state_new(setup, state, size) && wl_base_init(*state, setup, per_client);
}

void wl_base_only_free(void *state)
{
	wl_base_free(state);
	free(state);
}

bool wl_base_only_init(struct pn_client_setup *setup, void **state)
{
	return wl_base_new(setup, state, sizeof(struct wl_base), true);
}

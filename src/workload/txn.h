/*
 * txn.h: what every workload's state begins with (workload layer, owned by txn.c, below
 * the generators): struct wl_base, the state's allocation, the transaction frame of the
 * generated workloads.
 */
#ifndef PN_TXN_H
#define PN_TXN_H

#include "client.h"
#include "scenario.h"
#include "walfmt.h"

struct wl_client {
	uint32_t txn_pages[PN_WAL_MAX_BLOCKS]; /* random, slru: the transaction's pages */
	uint32_t txn_pos, txn_len;             /* (btree_dedup: its inserts) */
};
struct wl_base {
	const struct pn_scenario *sc;
	uint32_t page_size, heap_pages; /* as the engine has them after the row's init */
	uint64_t txns_started;
	struct wl_client *clients; /* per backend (random, slru, btree_dedup), or NULL */
};
/* Fills b from e (after the row sized the relation); false: out of memory (setup->svc.error). */
bool wl_base_init(struct wl_base *b, struct pn_client_setup *setup, bool per_client);
void wl_base_free(struct wl_base *b);
/* A run without end: bench and crashtest size the workload at init, then set
 * workload.transactions to UINT64_MAX (disk/disk.c); a workload with a fixed amount of
 * work (vacuum's pass) idles after it instead of ending the run. */
bool pn_workload_endless(const struct wl_base *b);
/* Counts one more transaction if workload.transactions are not all started; false if not
 * (every generator's rule for the end of a run). */
bool pn_workload_txn_start(struct wl_base *b);
/* The transaction frame of the generated workloads: after a transaction's ops (txn_len
 * set) its commit into *out; else, while transactions remain, a new one is counted and true
 * returned; otherwise false with *next = PN_CLIENT_DONE. */
bool pn_workload_txn_next(struct wl_base *b, const struct pn_client *c, struct pn_step *out,
			  enum pn_client_next *next);
/* k distinct heap pages chosen uniformly into c's txn_pages; txn_len = k, txn_pos = 1. */
void pn_workload_pick_pages(struct wl_base *b, const struct pn_client *c, uint32_t k);

/* A row's state: calloc'ed *state of size bytes (setup->svc.error if it fails); one that begins
 * with a wl_base, filled (per_client: with each client's transaction pages); the rows whose
 * state is a wl_base alone (random, slru). */
bool wl_state_new(struct pn_client_setup *setup, void **state, size_t size);
bool wl_base_new(struct pn_client_setup *setup, void **state, size_t size, bool per_client);
bool wl_base_only_init(struct pn_client_setup *setup, void **state);
void wl_base_only_free(void *state);
/* page_init of pn_page_init's empty heap page. */
void wl_plain_page_init(const void *state, uint32_t p, uint8_t *page);

#endif

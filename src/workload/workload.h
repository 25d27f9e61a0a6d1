/*
 * workload.h: what clients do (workload layer, above the engine; owned by workload.c): one
 * struct pn_client_ops row per workload.kind (script and random in workload.c, the
 * generators in their own files: wl_pgbench.c, wl_tpcc.c sharing wl.h, wl_vacuum.c,
 * wl_btree.c, wl_slru.c), pn_workload_of() to pick a scenario's row for pn_engine_init, and
 * the frame the generated workloads share (struct wl_base: the scenario, the transaction
 * count, each client's transaction pages), which begins every row's state.
 */
#ifndef PN_WORKLOAD_H
#define PN_WORKLOAD_H

#include "client.h"
#include "scenario.h"
#include "walfmt.h"

struct pn_engine;

/* The rows (designated initializers, each in its workload's file). */
extern const struct pn_client_ops pn_workload_script, pn_workload_random, pn_workload_pgbench,
	pn_workload_tpcc, pn_workload_vacuum, pn_workload_btree_dedup, pn_workload_slru;
/* The row of sc's workload.kind (what the assembly passes to pn_engine_init). */
const struct pn_client_ops *pn_workload_of(const struct pn_scenario *sc);
/* Name of transaction type t of sc's workload, NULL if it has none. */
const char *pn_workload_txn_name(const struct pn_scenario *sc, int t);
/* The storage.pages a pgbench or tpcc workload needs (its tables, indexes and room to grow,
 * as workload.c lays them out); 0 for the other kinds (the loader's check). */
uint32_t pn_scenario_layout_pages(const struct pn_scenario *s);
/* The leaf pages a btree_dedup index may take (each a third full of its 20-byte tuples:
 * wl_btree.c); its init refuses more than a quarter of 2^32, and so does the loader. */
uint64_t pn_scenario_btree_leaves(const struct pn_scenario *s);
/* btree_dedup's splits that recycled a leaf (Growth), and splits of a leaf of one key among
 * that key's items (wl_btree.c); 0 for another workload. */
uint64_t pn_workload_btree_recycled(const struct pn_engine *e);
uint64_t pn_workload_btree_single_value_splits(const struct pn_engine *e);

/* ---- what every row's state begins with (workload.c) ---- */
struct wl_client {
	uint32_t txn_pages[PN_WAL_MAX_BLOCKS]; /* random, slru: the transaction's pages */
	uint32_t txn_pos, txn_len;             /* (btree_dedup: its inserts) */
};
struct wl_layout;
struct wl_base {
	const struct pn_scenario *sc;
	uint32_t page_size, heap_pages;   /* as the engine has them after the row's init */
	uint64_t txns_started;
	struct wl_client *clients;        /* per backend (random, slru, btree_dedup), or NULL */
	struct wl_layout *layout;         /* pgbench, tpcc (wl.h), or NULL */
};
/* Fills b from e (after the row sized the relation); false: out of memory (e->error). */
bool wl_base_init(struct wl_base *b, struct pn_engine *e, bool per_client);
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

/* Redo of the workloads' records (called by pn_page_apply; block index from r->blocks). */
bool pn_wl_apply_visible(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_wl_apply_freeze_plans(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b);
bool pn_wl_btree_is_leaf(const uint8_t *page, uint32_t page_size);
bool pn_wl_apply_btree_dedup(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b);

#endif

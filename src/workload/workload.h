/*
 * workload.h: what clients do (workload layer, above the engine; owned by workload.c): one
 * struct pn_client_ops row per workload.kind (script and random in workload.c, the
 * generators in their own files: wl_pgbench.c, wl_tpcc.c sharing layout.h, wl_vacuum.c,
 * wl_btree.c, wl_slru.c; txn.h is what every row's state begins with), pn_workload_of() to
 * pick a scenario's row for pn_engine_init, and the figures the loader and tests read.
 */
#ifndef PN_WORKLOAD_H
#define PN_WORKLOAD_H

#include "client.h"
#include "scenario.h"
#include "walfmt.h"

struct pn_engine;

/* The rows (designated initializers, each in its workload's file). */
extern const struct pn_client_ops pn_workload_script, pn_workload_random, pn_workload_pgbench,
	pn_workload_tpcc, pn_workload_vacuum, pn_workload_btree_dedup, pn_workload_slru,
	pn_workload_import;
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
/* The pages pgbench's and tpcc's layouts take (wl_pgbench.c, wl_tpcc.c). */
uint32_t wl_pgbench_pages(const struct pn_scenario *sc);
uint32_t wl_tpcc_pages(const struct pn_scenario *sc);
/* btree_dedup's splits that recycled a leaf (Growth), and splits of a leaf of one key among
 * that key's items (wl_btree.c); 0 for another workload. */
uint64_t pn_workload_btree_recycled(const struct pn_engine *e);
uint64_t pn_workload_btree_single_value_splits(const struct pn_engine *e);
/* The layout of the engine's workload (pgbench, tpcc: layout.h), else NULL (tests). */
struct wl_layout *wl_layout_of(const struct pn_engine *e);

#endif

/*
 * workload.h: what clients do (engine layer, owned by workload.c): the next operation of a
 * backend (script, random, or one of the generators it dispatches to), the initial bytes of
 * a heap page, the transaction frame the generated workloads share; and the functions of
 * the generators with their own pages and records (wl_vacuum.c, wl_btree.c, wl_slru.c),
 * each owned by its file. The generators' state is e->wl; what the realistic ones (pgbench,
 * tpcc) share is wl.h.
 */
#ifndef PN_WORKLOAD_H
#define PN_WORKLOAD_H

#include "scenario.h"
#include "walfmt.h"

struct pn_engine;
struct pn_proc;
struct pn_change;

bool pn_workload_init(struct pn_engine *e);
enum pn_wl_next { PN_WL_OP, PN_WL_WAIT, PN_WL_DONE };
/* The next operation of backend `client`: an op, nothing yet (it is woken), or done.
 * For PN_OP_CHANGE the change is in e->procs[client].chg. */
enum pn_wl_next pn_workload_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
void pn_workload_free(struct pn_engine *e);
/* The initial bytes of heap page `blkno` (format): the workload's tables and indexes. */
void pn_workload_page_init(const struct pn_engine *e, uint8_t *page, uint32_t blkno);
/* Growth (wl.h): page blkno was reused by a generated workload and has not been
 * re-initialized since (its next heap insert is +INIT); the record that did it has run. */
bool pn_workload_page_stale(const struct pn_engine *e, uint32_t blkno);
void pn_workload_page_inited(struct pn_engine *e, uint32_t blkno);
/* A split decided by the workload has run (its new right leaf may now take inserts). */
void pn_workload_split_done(struct pn_engine *e, const struct pn_change *c);
/* Name of transaction type t of the workload, NULL if it has none. */
const char *pn_workload_txn_name(const struct pn_scenario *sc, int t);
/* A script step finished: let the next one start. */
void pn_workload_step_done(struct pn_engine *e, uint32_t client);
/* A run without end: bench and crashtest size the workload at init, then set
 * workload.transactions to UINT64_MAX (disk/disk.c); a workload with a fixed amount of
 * work (vacuum's pass) idles after it instead of ending the run. */
bool pn_workload_endless(const struct pn_engine *e);
/* Counts one more transaction if workload.transactions are not all started; false if not
 * (every generator's rule for the end of a run). */
bool pn_workload_txn_start(struct pn_engine *e);
/* The transaction frame of the generated workloads: after a transaction's ops (txn_len
 * set) its commit into *out; else, while transactions remain, a new one is counted and true
 * returned; otherwise false with *next = PN_WL_DONE. */
bool pn_workload_txn_next(struct pn_engine *e, struct pn_proc *p, struct pn_step *out,
			  enum pn_wl_next *next);
/* k distinct heap pages chosen uniformly into p->txn_pages; txn_len = k, txn_pos = 1. */
void pn_workload_pick_pages(struct pn_engine *e, struct pn_proc *p, uint32_t k);

/* Workload generators with their own pages and records (wl_vacuum.c, wl_btree.c, wl_slru.c).
 * Each: init (sizes the relation: may set heap_pages/pages), the initial bytes of a page,
 * the next op of a client; the vacuum and btree ops are changed by their own function,
 * called from backend.c's INSERT step (the change, its records, images, shifts). */
bool pn_wl_vacuum_init(struct pn_engine *e);
void pn_wl_vacuum_page_init(const struct pn_engine *e, uint32_t p, uint8_t *page);
enum pn_wl_next pn_wl_vacuum_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
/* The visibility-map page of heap page `p` (pinned with it), or false if none. */
bool pn_wl_vacuum_vm_page(const struct pn_engine *e, uint32_t p, uint32_t *vm);
void pn_wl_vacuum_change(struct pn_engine *e, struct pn_proc *p);
bool pn_wl_btree_init(struct pn_engine *e);
void pn_wl_btree_page_init(const struct pn_engine *e, uint32_t p, uint8_t *page);
enum pn_wl_next pn_wl_btree_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
void pn_wl_btree_change(struct pn_engine *e, struct pn_proc *p);
bool pn_wl_slru_init(struct pn_engine *e);
enum pn_wl_next pn_wl_slru_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
void pn_wl_btree_split(struct pn_engine *e, struct pn_proc *p);
/* Splits that recycled a leaf (wl_btree.c, Growth). */
uint64_t pn_wl_btree_recycled(const struct pn_engine *e);
/* Splits of a leaf that held one key among that key's items (wl_btree.c, single value). */
uint64_t pn_wl_btree_single_value_splits(const struct pn_engine *e);
uint32_t pn_wl_btree_split_pages(struct pn_engine *e, struct pn_proc *p, uint32_t *pages);
/* The import workload (wl_import.c): a real PostgreSQL WAL's records from a trace. */
#define PN_IMPORT_MAIN_MAX 4096u
#define PN_IMPORT_DATA_MAX 8192u
bool pn_wl_import_init(struct pn_engine *e);
enum pn_wl_next pn_wl_import_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
void pn_wl_import_free(struct pn_engine *e);
uint32_t pn_wl_import_extra_pages(struct pn_engine *e, uint32_t *pages);
void pn_wl_import_change(struct pn_engine *e, struct pn_proc *p);
bool pn_wl_apply_imported(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b);
/* Redo of the workloads' records (called by pn_page_apply; block index from r->blocks). */
bool pn_wl_apply_visible(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_wl_apply_freeze_plans(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b);
bool pn_wl_btree_is_leaf(const uint8_t *page, uint32_t page_size);
bool pn_wl_apply_btree_dedup(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b);

#endif

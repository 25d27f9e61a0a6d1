/*
 * shrink.h: counterexample shrinking and scenario serialisation (model layer).
 *
 * Shrinking re-checks smaller variants of a violating scenario and keeps each one that still
 * shows the same kind of violation: fewer transactions (halving), fewer clients, fewer pages
 * per transaction, fewer pages; for a script, each step left out in turn (last first); then
 * each preemption of the violation's schedule left out in turn (explore.h); under the
 * bounded search a variant is searched only up to as many preemptions as the violation had. It
 * stops at a fixed point, after a bounded number of attempts, or when opt->stop is set (a
 * signal: the last variant kept stands). The result is written as a
 * complete scenario (every key that the run reads), so its trace no longer depends on the
 * original file. Of the workload's sizing keys only those its kind reads are written
 * (pn_workload_reads): `transactions` for every kind but script (the checker's default
 * exploration, the world's event bound and the backends' logs read it, whatever the kind);
 * pages_per_transaction for random and slru, scale for pgbench, warehouses for tpcc, rows
 * for vacuum, inserts and distinct_keys for btree_dedup. A key left out loads as its
 * default, which that kind never reads (test_workloads.c test_unread_keys).
 */
#ifndef PN_SHRINK_H
#define PN_SHRINK_H

#include "checker.h"

/* A deep copy (script and crash point list included). */
bool pn_scenario_copy(const struct pn_scenario *src, struct pn_scenario *dst);
/* Every key of the scenario format that the run reads, as YAML that pn_scenario_load reads
 * back. */
void pn_scenario_write(FILE *out, const struct pn_scenario *sc);

/* The workload's sizing keys, a bit each (pn_workload_reads). */
#define PN_WORKLOAD_KEY_LIST(X)                                 \
	X(PN_WK_TRANSACTIONS, "transactions")                   \
	X(PN_WK_PAGES_PER_TRANSACTION, "pages_per_transaction") \
	X(PN_WK_SCALE, "scale")                                 \
	X(PN_WK_WAREHOUSES, "warehouses")                       \
	X(PN_WK_ROWS, "rows") X(PN_WK_INSERTS, "inserts") X(PN_WK_DISTINCT_KEYS, "distinct_keys")
enum pn_workload_key { PN_WORKLOAD_KEY_LIST(PN_ENUM_VALUE) PN_WK_COUNT };
extern const char *const pn_workload_key_names[PN_WK_COUNT + 1];
/* Whether a workload of this kind reads the key (the trace writes only those). */
bool pn_workload_reads(enum pn_workload_kind kind, enum pn_workload_key key);

struct pn_shrink_result {
	uint32_t attempts, accepted;
	uint32_t choices_dropped; /* preemptions left out of the violation's schedule */
	char summary[256];        /* "transactions 10 -> 2, clients 2 -> 1" */
};

/* Shrinks sc (which showed res->kind) in place; on return res is the check result of the
 * shrunk scenario (its crash point and state, for the trace). */
void pn_shrink(struct pn_scenario *sc, const struct pn_check_options *opt,
	       struct pn_check_result *res, struct pn_shrink_result *out);

#endif

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
 * complete scenario (every key), so its trace no longer depends on the original file.
 */
#ifndef PN_SHRINK_H
#define PN_SHRINK_H

#include "checker.h"

/* A deep copy (script and crash point list included). */
bool pn_scenario_copy(const struct pn_scenario *src, struct pn_scenario *dst);
/* Every key of the scenario format, as YAML that pn_scenario_load reads back. */
void pn_scenario_write(FILE *out, const struct pn_scenario *sc);

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

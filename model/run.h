/*
 * run.h: one check in progress and the crash states of one crash point (model layer; the
 * driver's rules H1-H5 are in checker.h).
 *
 * struct pn_run is the state of one pn_check_scenario() or pn_check_unit(): the scenario, the
 * options, the result being filled, the running world and its crash enumeration, the verdict
 * cache, the judgement, the derivation, and, when a unit or a search is checked, their parts.
 * The driver (check.c) owns it: it opens and closes it, runs the schedules and calls
 * pn_run_point at every selected crash point; a unit's range (span.c) and the replay
 * (replay.c) use the functions below. Every state is judged as judge.h says and recovered at
 * most once per cache scope (H2).
 */
#ifndef PN_RUN_H
#define PN_RUN_H

#include "cache.h"
#include "checkio.h"
#include "crashstate.h"
#include "derive.h"
#include "explore.h"
#include "judge.h"
#include "unitdata.h"

/* Crash images met (checker.h H7, H8), by content: a short list. */
struct pn_met {
	uint64_t *v;
	uint32_t n, cap;
};

struct pn_run {
	const struct pn_scenario *sc;
	const struct pn_check_options *opt;
	struct pn_check_result *res;
	struct pn_world *w; /* the schedule run; NULL between runs */
	struct pn_crash_enum ce;
	struct pn_crash_enum ahead; /* ce some states on: their keys' slots asked for early */
	struct pn_cache cache;
	struct pn_judge j;               /* j.oracle: the run's oracle; j.detail: what broke */
	struct pn_derive *derive;        /* opt->derive */
	struct pn_derive *derive_nested; /* opt->derive, for crashes inside recovery (H5) */
	struct pn_met point_met;         /* H8: this point's states inside recovery judged */
	struct pn_world_lazy lazy;       /* a search's pages as built, shared by its worlds */
	uint64_t cross_checked;          /* states judged twice (--cross-check) */
	double t0;
	uint32_t schedule;
	uint64_t new_states;        /* distinct states met, over the scenario (H5) */
	uint64_t events_done;       /* events of the schedules already run */
	bool interrupted;           /* opt->stop was seen set */
	struct pn_world_twin *twin; /* --twice: the determinism self-check (H6) */
	/* exploring one work unit (unitdata.h, span.h); NULL: the whole scenario */
	const struct pn_unit *unit;
	struct pn_unit_result *ur;
	bool surveying; /* past the unit's range (a head's budget): keys only */
	bool cov_taken; /* ur->cov holds the range's coverage hits (U4) */
	/* the search over schedules (explore.h); NULL: the seeded schedule alone */
	struct pn_explore *x;
	bool search_survey; /* a split search's part surveying the seeded run (explore_split.h) */
	uint64_t part_cap;  /* the default's search: schedules a part runs at most (D2; 0: all) */
};

/* The monotonic clock in seconds, for the report's times only (nothing simulated reads it). */
double pn_run_wall_seconds(void);
/* Whether the caller asked the check to stop (a signal); remembered once seen. */
bool pn_run_stopping(struct pn_run *c);
/* The violation into the result: its kind, page, crash point, what broke (j.detail), the
 * run's last events. */
void pn_run_report(struct pn_run *c, enum pn_violation_kind kind, uint32_t page, uint64_t point,
		   bool in_recovery);
/* H5: a violation found by a crash at event `event` of the recovery, in crash state `state`:
 * the result records that crash and the detail says so (check and replay alike). */
void pn_run_nested_found(struct pn_run *c, uint64_t event, const char *state);
/* The end C1 needs of every state now: the highest LSN of an acknowledged commit (0: none). */
pn_lsn pn_run_acks_need(const struct pn_run *c);
/* H3: the key of the current crash state (c->ce at c->w's point): its crash image by content. */
uint64_t pn_run_state_key(const struct pn_run *c);
/* SP2: the samples a sampled point of the run draws now: crash.samples until the run has
 * taken a preemption (a seeded schedule, a pct run's seeded prefix), crash.search_samples
 * after. */
uint32_t pn_run_samples(const struct pn_run *c);
/* All crash states of the current point (H1-H5). Returns false at the first violation (or
 * when stopped: c->interrupted). */
bool pn_run_point(struct pn_run *c, uint64_t point);

#endif

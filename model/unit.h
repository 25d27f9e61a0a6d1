/*
 * unit.h: work units of the crash-point checker (model layer; docs/checker.md section 12).
 *
 * A unit is (scenario, schedule, crash-point range): "explore the crash points lo <= p < hi of
 * this schedule run". pn_check_unit() explores one and gives its result; the result crosses a
 * pipe or a network as bytes (pn_unit_result_encode / _decode). A plan (struct pn_plan) cuts
 * one scenario into units, hands out those that are ready, and merges their results in unit
 * order into exactly the struct pn_check_result that pn_check_scenario() gives.
 *
 * A bounded search's units are its parts (explore_split.h): (schedule, part k) as lo = k,
 * hi = k + 1, all ready at once, each whole (finished), merged as U1 says. So are the
 * default exploration's parts 1..P (D1-D3), as schedule `runs`: after every seeded one.
 *
 * Rules:
 *   U1 Unit order is (schedule, lo): the order in which pn_check_scenario() explores. Units
 *      of one schedule are contiguous: [end of the head, lo1), [lo1, lo2), ..., [lok, end of
 *      the run). The first violation (or error) in unit order is the scenario's; units after
 *      it are cancelled and their results, counts and coverage never merged.
 *   U2 Exact deduplication: a unit runs its schedule from event 0; at every crash point
 *      before lo it enumerates the states' keys without recovering them (a survey), so its
 *      verdict cache holds exactly the keys pn_check_scenario() has met by lo. A key met
 *      before lo is recovered again for its WAL end (C1 needs it) but not counted, not
 *      crashed inside recovery, and its coverage hits are discarded: counts, nested crashes
 *      (every nested_every-th distinct state, counted over the whole scenario) and coverage
 *      are those of pn_check_scenario().
 *   U3 A schedule starts with its head unit, lo = 0: it explores until it has met
 *      `budget` distinct states, then surveys the rest of the run (every later crash point,
 *      its states and its distinct states). A small schedule is one head unit. The plan cuts
 *      the surveyed rest (pn_unit_cut). With crashes inside recovery the next schedule's
 *      head waits for this one (its count of distinct states before it must be known: U2);
 *      without, every head is ready at once.
 *   U4 Coverage hits of a unit are those of the steps producing its events lo .. hi-1 and of
 *      its explorations; a head's stop at hi (budget) ends them before its survey.
 *   U5 A unit that fails (its process died, its bytes do not decode) is handed out again,
 *      once; a second failure is the scenario's error. No partial result is merged.
 *   U6 Lookups (pn_unit_check with a struct pn_unit_lookup): a unit reports the (key, WAL
 *      end) of every state it recovered first (publish); the C1 check of a state met before
 *      lo is deferred, not relearned (its key and the end C1 needs, the largest acknowledged
 *      commit LSN, are kept), and once the run is over the keys are asked for (ask). The
 *      run's result stands only when every key is answered with an end at or past what it
 *      needs (C1 then passes as it would have; a state met before lo passed C2/C3 there, or
 *      the unit is cancelled, U1); otherwise the unit is run again without lookups, which
 *      relearns as U2 says: a lookup saves work, it never changes a result. verify: the
 *      unit is run again anyway and every answer compared with the end it relearns.
 */
#ifndef PN_UNIT_H
#define PN_UNIT_H

#include "checker.h"
#include "unitdata.h"

/* The unit, its result and their bytes: unitdata.h. pn_check_unit (checker.h) explores one
 * unit. */

/* U6: where a unit's keys go and its questions are answered. */
#define PN_UNIT_UNKNOWN UINT64_MAX /* an end no owner knows */
struct pn_unit_lookup {
	void *arg;
	/* the states the unit recovered first, with their WAL ends */
	void (*publish)(void *arg, uint32_t schedule, const struct pn_unit_key *keys, uint32_t n);
	/* ends[i]: the WAL end an owner knows for keys[i].key, else PN_UNIT_UNKNOWN */
	void (*ask)(void *arg, uint32_t schedule, const struct pn_unit_key *keys, uint32_t n,
		    uint64_t *ends);
	/* the unit's U6 counts, once it is done (may be NULL) */
	void (*counts)(void *arg, const struct pn_unit_result *r);
	bool verify; /* run again anyway, the answers compared with what it relearns */
	bool wrong;  /* verify found an answer that differs (set by pn_unit_check) */
};
/* Explores one unit as pn_check_unit() does, with lookups when lk is set (U6): the same
 * result, but for the U6 counts. */
enum pn_unit_status pn_unit_check(const struct pn_scenario *sc, const struct pn_check_options *opt,
				  const struct pn_unit *u, struct pn_unit_lookup *lk,
				  struct pn_unit_result *out);

/* An owner's table (U6): (item, schedule, key) -> WAL end; hash: what picks the owner. */
struct pn_unit_table;
struct pn_unit_table *pn_unit_table_new(void);
void pn_unit_table_free(struct pn_unit_table *t);
void pn_unit_table_put(struct pn_unit_table *t, uint32_t item, uint32_t schedule, uint64_t key,
		       uint64_t end);
uint64_t pn_unit_table_get(const struct pn_unit_table *t, uint32_t item, uint32_t schedule,
			   uint64_t key); /* PN_UNIT_UNKNOWN when absent */
uint64_t pn_unit_table_size(const struct pn_unit_table *t);
uint64_t pn_unit_key_hash(uint32_t item, uint32_t schedule, uint64_t key);

/* Cuts the surveyed points of one schedule into ranges: los[0] = start, then the first event
 * of each later range (at most n + 1 entries); returns how many ranges. Each range costs
 * about (its distinct states + its states / 16 + one a point), at most unit_states, and
 * there are about 4 * jobs of them when the total allows. n = 0: one range. */
uint32_t pn_unit_cut(const struct pn_unit_point *pts, uint32_t n, uint64_t start, uint32_t jobs,
		     uint64_t unit_states, uint64_t *los);

/* One scenario's units (U1-U5). nested_every as in pn_check_options (0: heads need not wait
 * for each other, U3); whole: one unit, pn_check_scenario() (--twice). search: the default
 * exploration's (pn_split_default, explore_split.h D1-D3), NULL when it does not run: its
 * parts 1 .. PN_SPLIT_PARTS are units after the seeded schedules', all ready at once. */
struct pn_plan;
struct pn_plan *pn_plan_new(const struct pn_scenario *sc, uint32_t jobs, uint64_t unit_states,
			    uint32_t nested_every, bool whole, const struct pn_scenario *search);
void pn_plan_free(struct pn_plan *p);
/* A ready unit not handed out yet (heads first, then unit order): true with its id. */
bool pn_plan_next(struct pn_plan *p, uint32_t *id, struct pn_unit *u);
/* Unit id's result (moved into the plan: r is left empty). */
void pn_plan_done(struct pn_plan *p, uint32_t id, struct pn_unit_result *r);
/* Unit id could not give a result (U5): handed out again once, then the scenario's error. */
void pn_plan_failed(struct pn_plan *p, uint32_t id, const char *why);
/* Whether a unit handed out is no longer needed (after the first violation: U1). */
bool pn_plan_cancelled(const struct pn_plan *p, uint32_t id);
bool pn_plan_finished(const struct pn_plan *p);
uint32_t pn_plan_units(const struct pn_plan *p);
/* The merged result, as pn_check_scenario() returns it (0, 1, 2 or 3), seconds left 0;
 * cov (ncov entries, may be NULL) gets the merged units' coverage hits added. */
int pn_plan_result(const struct pn_plan *p, struct pn_check_result *res, uint64_t (*cov)[2],
		   size_t ncov);

#endif

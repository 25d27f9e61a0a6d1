/*
 * explore_split.c: a bounded search cut into parts (model layer; explore_split.h, S1-S4).
 * The parts run in check.c (run_search), are units of unit.c's plan, and merge there.
 */
#include "explore_split.h"

#include <math.h>
#include <stdlib.h>

#define WEIGHT_EVENTS_MAX ((uint64_t)1 << 20) /* events beyond weigh as this: no overflow */

bool pn_split_search(const struct pn_scenario *sc)
{
	return sc->schedules.strategy == PN_STRATEGY_BOUNDED;
}

/* S4: (n - e + 1)^min(K, 2), n capped so that a sum of 2^21 of them fits in 64 bits. */
static uint64_t root_weight(uint64_t event, uint64_t events, uint32_t bound)
{
	uint64_t left = PN_MIN(events >= event ? events - event + 1 : 1, WEIGHT_EVENTS_MAX);
	uint64_t w = 1;
	for (uint32_t i = 0; i < PN_MIN(bound, 2u); i++)
		w *= left;
	return w;
}

void pn_split_range(const uint64_t *root_event, uint64_t nroots, uint64_t events, uint32_t bound,
		    uint32_t part, uint64_t *lo, uint64_t *hi)
{
	PN_ASSERT(part >= 1 && part <= PN_SPLIT_PARTS);
	PN_ASSERT(nroots < ((uint64_t)1 << 21));
	uint64_t total = 0;
	for (uint64_t i = 0; i < nroots; i++)
		total += root_weight(root_event[i], events, bound);
	uint64_t share = total / PN_SPLIT_PARTS + (total % PN_SPLIT_PARTS != 0);
	uint64_t before = 0;
	*lo = *hi = nroots;
	for (uint64_t i = 0; i < nroots; i++) {
		uint64_t k = before / share + 1; /* the part root i is in */
		PN_ASSERT(i == 0 || root_event[i] >= root_event[i - 1]);
		PN_ASSERT(k <= PN_SPLIT_PARTS);
		if (k == part && *lo == nroots)
			*lo = i;
		if (k > part) {
			*hi = i;
			break;
		}
		before += root_weight(root_event[i], events, bound);
	}
	if (*lo == nroots)
		*hi = nroots; /* an empty share */
	PN_ASSERT(*lo <= *hi && *hi <= nroots);
}

void pn_split_keep(struct pn_explore *x, uint64_t events, uint32_t part)
{
	uint64_t n = pn_explore_queued(x), lo, hi;
	uint64_t *ev = malloc((n + 1) * sizeof(*ev));
	PN_ASSERT(ev != NULL && x->mode == PN_EXPLORE_BOUNDED);
	for (uint64_t i = 0; i < n; i++)
		ev[i] = pn_explore_queued_event(x, i);
	pn_split_range(ev, n, events, x->bound, part, &lo, &hi);
	pn_explore_keep(x, lo, hi);
	free(ev);
}

bool pn_split_default(const struct pn_scenario *sc, bool seeded_only, bool replay,
		      const char *choices, struct pn_scenario *search)
{
	if (sc->schedules.named || sc->schedules.strategy != PN_STRATEGY_SEEDED || seeded_only ||
	    replay || choices || sc->workload.clients < 2 || sc->schedules.runs == 0 ||
	    sc->workload.transactions > PN_DEFAULT_TRANSACTIONS_MAX)
		return false;
	*search = *sc; /* shares sc's owned lists: read only, never freed */
	search->schedules.strategy = PN_STRATEGY_BOUNDED;
	search->schedules.preemption_bound = 1;
	search->schedules.reduce = true;
	if (!search->schedules.budget)
		search->schedules.budget = sc->crash.present ? PN_DEFAULT_BUDGET
							     : PN_DEFAULT_BUDGET_NOCRASH;
	return true;
}

uint64_t pn_split_part_cap(const struct pn_scenario *search)
{
	uint64_t b = search->schedules.budget;
	PN_ASSERT(b > 0);
	return b / PN_SPLIT_PARTS + (b % PN_SPLIT_PARTS != 0);
}

uint32_t pn_split_pct_runs(const struct pn_scenario *search, uint32_t k, struct pn_scenario *pct)
{
	PN_ASSERT(k >= 1 && k <= PN_SPLIT_PARTS);
	uint64_t all = PN_DEFAULT_PCT_RUNS(search->schedules.budget, search->crash.present);
	uint64_t runs = all / PN_SPLIT_PARTS + (k <= all % PN_SPLIT_PARTS);
	if (runs == 0)
		return 0;
	*pct = *search; /* shares search's owned lists, as search shares sc's */
	pct->schedules.strategy = PN_STRATEGY_PCT;
	pct->schedules.runs = (uint32_t)runs + 1; /* the seeded run first (explore.h) */
	pct->schedules.depth = PN_DEFAULT_PCT_DEPTH;
	return (uint32_t)runs;
}

/* Streams of the schedule PRNG past any pct search's own (explore.c: 1 << 40 | index << 20). */
#define PCT_PART_BASE ((uint64_t)1 << 41)

void pn_split_pct_stream(struct pn_explore *x, uint32_t k)
{
	PN_ASSERT(x->mode == PN_EXPLORE_PCT && k >= 1 && k <= PN_SPLIT_PARTS);
	pn_prng_seed(&x->rng, x->sc->seed, PN_STREAM_SCHEDULE, PCT_PART_BASE | (uint64_t)k << 20);
}

double pn_split_pct_find(uint32_t depth, uint32_t actors, uint64_t events)
{
	if (!actors || !events)
		return 0.0;
	double p = 1.0 / (double)actors;
	for (uint32_t i = 1; i < depth; i++)
		p /= (double)events;
	return p;
}

double pn_split_pct_miss(uint64_t runs, uint32_t depth, uint32_t actors, uint64_t events)
{
	return exp((double)runs * log1p(-pn_split_pct_find(depth, actors, events)));
}

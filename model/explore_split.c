/*
 * explore_split.c: a bounded search cut into parts (model layer; explore_split.h, S1-S4).
 * The parts run in check.c (run_search), are units of unit.c's plan, and merge there.
 */
#include "explore_split.h"

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

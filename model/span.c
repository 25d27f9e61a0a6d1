/*
 * span.c: a work unit's range within its schedule run: the survey before (and after) it, its
 * edges, its coverage (model layer; span.h; unit.h U2-U4).
 */
#include "span.h"

#include <stdlib.h>

#include "cover.h"

void pn_span_cover(struct pn_run *c)
{
	struct pn_unit_result *ur = c->ur;
	PN_ASSERT(ur != NULL);
	if (c->cov_taken)
		return;
	size_t n;
	ur->cov = pn_cover_save(&n);
	PN_ASSERT(n <= UINT32_MAX && (n == 0 || ur->cov != NULL));
	ur->ncov = (uint32_t)n;
	c->cov_taken = true;
}

/* The keys of a crash point's states, none recovered (U2); record: a surveyed point past the
 * range (U3), for the plan to cut. */
static void survey_point(struct pn_run *c, uint64_t point, bool record)
{
	struct pn_unit_result *ur = c->ur;
	uint64_t states = 0, fresh = 0;
	/* before the range, or past its cut (U3): never a point the unit judges */
	PN_ASSERT(record ? c->surveying && point >= ur->end : point < c->unit->lo);
	pn_crash_enum_begin(&c->ce, &c->w->dev, c->sc, point ^ ((uint64_t)c->schedule << 40));
	pn_crash_enum_samples(&c->ce, pn_run_samples(c));
	while (pn_crash_enum_next(&c->ce)) {
		uint64_t key = pn_run_state_key(c); /* the key the judging takes */
		struct pn_verdict *slot = pn_cache_slot(&c->cache, key);
		states++;
		if (slot->used)
			continue;
		pn_cache_fill(&c->cache, slot, &(struct pn_verdict){.key = key, .used = true});
		c->new_states++;
		fresh++;
	}
	PN_ASSERT(fresh <= states);
	if (!record)
		return;
	if ((ur->npoints & (ur->npoints - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to twice */
		ur->points = realloc(ur->points,
				     (ur->npoints ? 2 * ur->npoints : 1) * sizeof(*ur->points));
		PN_ASSERT(ur->points != NULL);
	}
	PN_ASSERT(ur->npoints == 0 || ur->points[ur->npoints - 1].event < point);
	ur->points[ur->npoints++] = (struct pn_unit_point){point, states, fresh};
	PN_ASSERT(ur->npoints != 0); /* the count did not wrap */
}

bool pn_span_edge(struct pn_run *c)
{
	const struct pn_unit *u = c->unit;
	uint64_t next = c->w->events + 1;
	PN_ASSERT(u != NULL && u->lo <= u->hi);
	if (next == u->lo) {
		pn_cover_zero();
		if (c->new_states != u->fresh_lo) {
			snprintf(
				c->res->detail, sizeof(c->res->detail),
				"unit of schedule %u from crash point %llu: its survey met %llu distinct "
				"states before it, the plan %llu (a nondeterministic run)",
				u->schedule, (unsigned long long)u->lo,
				(unsigned long long)c->new_states, (unsigned long long)u->fresh_lo);
			return true;
		}
	}
	if (next == u->hi && !c->surveying) {
		PN_ASSERT(c->new_states >= u->fresh_base);
		c->ur->end = u->hi;
		c->ur->fresh_end = c->new_states;
		pn_span_cover(c);
		return true;
	}
	return false;
}

bool pn_span_point(struct pn_run *c, uint64_t point)
{
	const struct pn_unit *u = c->unit;
	if (c->surveying || point < u->lo) {
		survey_point(c, point, c->surveying);
		return !pn_run_stopping(c);
	}
	PN_ASSERT(point < u->hi);
	if (!pn_run_point(c, point))
		return false;
	PN_ASSERT(c->new_states >= u->fresh_base);
	if (u->budget && c->new_states - u->fresh_base >= u->budget) { /* U3 */
		PN_ASSERT(!c->surveying);
		c->surveying = true;
		c->ur->end = point + 1;
		c->ur->fresh_end = c->new_states;
		pn_span_cover(c);
	}
	return true;
}

/*
 * unit.c: a scenario's work units: the cutting of a schedule into units, the plan, which
 * hands units out and merges their results, a unit's lookups and an owner's table of WAL
 * ends (model layer; unit.h has rules U1-U6). The units and their bytes are unitdata.c's;
 * pn_check_unit (check.c) explores one.
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xxh.h"

#include "explore_split.h"

#define UNIT_TRIES 2 /* U5: a unit is handed out at most this often */

/* ---- lookups (U6) ---- */
static int key_order(const void *a, const void *b)
{
	const struct pn_unit_key *x = a, *y = b;
	return x->key != y->key ? (x->key > y->key) - (x->key < y->key)
				: (x->lsn > y->lsn) - (x->lsn < y->lsn);
}

static int key_only(const void *a, const void *b)
{
	const struct pn_unit_key *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

/* The asked keys once each, with the largest end any of its meetings needs. */
static void keys_once(struct pn_unit_keys *k)
{
	uint32_t n = 0;
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), key_order);
	for (uint32_t i = 0; i < k->n; i++) {
		if (n && k->v[n - 1].key == k->v[i].key)
			k->v[n - 1].lsn = k->v[i].lsn; /* sorted: the largest comes last */
		else
			k->v[n++] = k->v[i];
	}
	k->n = n;
}

/* verify: each answer against the end the run without lookups relearned; false at the first
 * that differs (said on stderr). */
static bool answers_agree(uint32_t schedule, const struct pn_unit_keys *asked, const uint64_t *ends,
			  struct pn_unit_keys *relearnt)
{
	keys_once(relearnt);
	for (uint32_t i = 0; i < asked->n; i++) {
		const struct pn_unit_key *k = bsearch(&asked->v[i], relearnt->v, relearnt->n,
						      sizeof(*relearnt->v), key_only);
		if (!k || ends[i] == PN_UNIT_UNKNOWN || ends[i] == k->lsn)
			continue; /* not relearned: the run stopped before it */
		fprintf(stderr,
			"penumbra check: a lookup answered WAL end %llX for state %016llx of "
			"schedule %u, its recovery ends at %llX; the unit's run without lookups "
			"is used\n",
			(unsigned long long)ends[i], (unsigned long long)k->key, schedule,
			(unsigned long long)k->lsn);
		return false;
	}
	return true;
}

/* pn_unit_check's lookups: publish, ask, and the run without lookups unless it stands. */
static void lookup_unit(const struct pn_scenario *sc, const struct pn_check_options *opt,
			const struct pn_unit *u, struct pn_unit_lookup *lk,
			struct pn_unit_result *out)
{
	lk->publish(lk->arg, u->schedule, out->recovered.v, out->recovered.n);
	keys_once(&out->asked);
	uint64_t *ends = calloc(out->asked.n + 1, sizeof(*ends)), hits = 0;
	PN_ASSERT(ends != NULL);
	if (out->asked.n)
		lk->ask(lk->arg, u->schedule, out->asked.v, out->asked.n, ends);
	bool stands = true;
	for (uint32_t i = 0; i < out->asked.n; i++) {
		hits += ends[i] != PN_UNIT_UNKNOWN;
		stands &= ends[i] != PN_UNIT_UNKNOWN && ends[i] >= out->asked.v[i].lsn;
	}
	out->lookups = out->asked.n;
	out->hits = hits;
	if (stands && !lk->verify) {
		free(ends);
		return;
	}
	struct pn_unit_result again;
	pn_check_unit(sc, opt, u, &again); /* U6: relearns as U2 says */
	again.lookups = out->lookups;
	again.hits = hits;
	again.reruns = !stands;
	if (stands && !answers_agree(u->schedule, &out->asked, ends, &again.relearnt))
		lk->wrong = true;
	free(ends);
	pn_unit_result_free(out);
	*out = again;
}

enum pn_unit_status pn_unit_check(const struct pn_scenario *sc, const struct pn_check_options *opt,
				  const struct pn_unit *u, struct pn_unit_lookup *lk,
				  struct pn_unit_result *out)
{
	if (!lk || u->whole)
		return pn_check_unit(sc, opt, u, out);
	struct pn_unit d = *u;
	d.lookups = true;
	if (pn_check_unit(sc, opt, &d, out) == PN_UNIT_INTERRUPTED)
		return out->status;
	lookup_unit(sc, opt, u, lk, out);
	if (lk->counts)
		lk->counts(lk->arg, out);
	return out->status;
}

/* ---- an owner's table (U6): open addressing over (item, schedule, key) ---- */
struct table_slot {
	uint64_t key, end;
	uint32_t item, schedule;
	bool used;
};

struct pn_unit_table {
	struct table_slot *v;
	uint64_t cap, n;
};

uint64_t pn_unit_key_hash(uint32_t item, uint32_t schedule, uint64_t key)
{
	uint64_t seed = (uint64_t)item << 32 | schedule;
	return XXH3_64bits_withSeed(&key, sizeof(key), seed);
}

struct pn_unit_table *pn_unit_table_new(void)
{
	struct pn_unit_table *t = calloc(1, sizeof(*t));
	PN_ASSERT(t != NULL);
	t->cap = 1024;
	t->v = calloc(t->cap, sizeof(*t->v));
	PN_ASSERT(t->v != NULL);
	return t;
}

void pn_unit_table_free(struct pn_unit_table *t)
{
	if (t)
		free(t->v);
	free(t);
}

static struct table_slot *table_find(const struct pn_unit_table *t, uint32_t item,
				     uint32_t schedule, uint64_t key)
{
	uint64_t j = pn_unit_key_hash(item, schedule, key) & (t->cap - 1);
	while (t->v[j].used &&
	       (t->v[j].key != key || t->v[j].item != item || t->v[j].schedule != schedule))
		j = (j + 1) & (t->cap - 1);
	return &t->v[j];
}

void pn_unit_table_put(struct pn_unit_table *t, uint32_t item, uint32_t schedule, uint64_t key,
		       uint64_t end)
{
	if (2 * (t->n + 1) > t->cap) {
		struct pn_unit_table old = *t;
		t->cap *= 2;
		t->n = 0;
		t->v = calloc(t->cap, sizeof(*t->v));
		PN_ASSERT(t->v != NULL);
		for (uint64_t i = 0; i < old.cap; i++) {
			const struct table_slot *o = &old.v[i];
			if (!o->used)
				continue;
			*table_find(t, o->item, o->schedule, o->key) = *o;
			t->n++;
		}
		free(old.v);
	}
	struct table_slot *s = table_find(t, item, schedule, key);
	PN_ASSERT(!s->used || s->end == end); /* a state's WAL end is a function of it */
	t->n += !s->used;
	*s = (struct table_slot){key, end, item, schedule, true};
}

uint64_t pn_unit_table_get(const struct pn_unit_table *t, uint32_t item, uint32_t schedule,
			   uint64_t key)
{
	const struct table_slot *s = table_find(t, item, schedule, key);
	return s->used ? s->end : PN_UNIT_UNKNOWN;
}

uint64_t pn_unit_table_size(const struct pn_unit_table *t) { return t->n; }

/* ---- cutting ---- */
static uint64_t point_cost(const struct pn_unit_point *p) { return p->fresh + p->states / 16 + 1; }

uint32_t pn_unit_cut(const struct pn_unit_point *pts, uint32_t n, uint64_t start, uint32_t jobs,
		     uint64_t unit_states, uint64_t *los)
{
	uint64_t total = 0, acc = 0;
	uint32_t k = 0;
	PN_ASSERT(jobs >= 1 && unit_states >= 1);
	for (uint32_t i = 0; i < n; i++)
		total += point_cost(&pts[i]);
	uint64_t target = PN_MAX(1, PN_MIN(unit_states, total / (4ull * jobs)));
	los[k++] = start;
	for (uint32_t i = 0; i < n; i++) {
		PN_ASSERT(pts[i].event >= start && (i == 0 || pts[i].event > pts[i - 1].event));
		if (acc >= target) { /* this point begins the next range */
			los[k++] = pts[i].event;
			acc = 0;
		}
		acc += point_cost(&pts[i]);
	}
	return k;
}

/* ---- the plan ---- */
enum plan_state { P_READY, P_OUT, P_DONE };

struct plan_unit {
	struct pn_unit u;
	enum plan_state state;
	bool head;
	uint32_t tries;
	struct pn_unit_result r;
};

struct pn_plan {
	const struct pn_scenario *sc;
	uint32_t jobs;
	uint64_t unit_states;
	struct plan_unit *units; /* in the order made (U1's order: before()) */
	uint32_t n, cap;
	bool stopped;    /* a unit is done with a violation, an error or interrupted */
	uint32_t stop;   /* the first such unit (U1) */
	bool last_head;  /* the last schedule's head is in units */
	bool unchained;  /* heads do not wait for each other (no nested crashes) */
	uint64_t budget; /* the default exploration's (explore_split.h D2), 0: none */
};

static struct plan_unit *add_unit(struct pn_plan *p, const struct pn_unit *u, bool head)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->units = realloc(p->units, p->cap * sizeof(*p->units));
		PN_ASSERT(p->units != NULL);
	}
	PN_ASSERT(u->whole || u->lo < u->hi); /* U1: a range of at least one point */
	struct plan_unit *pu = &p->units[p->n++];
	*pu = (struct plan_unit){.u = *u, .state = P_READY, .head = head};
	return pu;
}

static void add_head(struct pn_plan *p, uint32_t schedule, uint64_t fresh_base)
{
	struct pn_unit u = {.schedule = schedule,
			    .lo = 0,
			    .hi = UINT64_MAX,
			    .budget = p->unit_states,
			    .fresh_base = fresh_base,
			    .fresh_lo = fresh_base};
	add_unit(p, &u, true);
	p->last_head = schedule + 1 >= p->sc->schedules.runs;
}

/* D3, D4: the default exploration's parts (its bounded search's, then its pct runs'), after
 * every seeded schedule's units, ready at once (each part is a function of the scenario, S1). */
static void add_defaults(struct pn_plan *p, const struct pn_scenario *search)
{
	struct pn_scenario pct;
	p->budget = search->schedules.budget;
	for (uint32_t k = 1; k <= 2 * PN_SPLIT_PARTS; k++)
		if (k <= PN_SPLIT_PARTS || pn_split_pct_runs(search, k - PN_SPLIT_PARTS, &pct))
			add_unit(p,
				 &(struct pn_unit){.schedule = p->sc->schedules.runs,
						   .defaults = true,
						   .lo = k,
						   .hi = k + 1},
				 false);
}

struct pn_plan *pn_plan_new(const struct pn_scenario *sc, uint32_t jobs, uint64_t unit_states,
			    uint32_t nested_every, bool whole, const struct pn_scenario *search)
{
	struct pn_plan *p = calloc(1, sizeof(*p));
	PN_ASSERT(p != NULL && jobs >= 1 && unit_states >= 1);
	p->sc = sc;
	p->jobs = jobs;
	p->unit_states = unit_states;
	if (!whole && sc->schedules.runs > 0 && pn_split_search(sc)) {
		p->unchained = p->last_head = true; /* every part ready at once (S1) */
		for (uint32_t s = 0; s < sc->schedules.runs; s++)
			for (uint32_t k = 0; k <= PN_SPLIT_PARTS; k++)
				add_unit(p,
					 &(struct pn_unit){.schedule = s,
							   .search = true,
							   .lo = k,
							   .hi = k + 1},
					 false);
	} else if (whole || sc->schedules.runs == 0 ||
		   sc->schedules.strategy != PN_STRATEGY_SEEDED) {
		struct pn_unit u = {.whole = true, .hi = UINT64_MAX};
		add_unit(p, &u, true);
		p->last_head = true;
	} else if (nested_every && sc->crash.present) {
		add_head(p, 0, 0); /* the next head when this one is done (U3) */
	} else {
		p->unchained = true; /* no count crosses schedules: every head at once */
		for (uint32_t s = 0; s < sc->schedules.runs; s++)
			add_head(p, s, 0);
	}
	if (search && !p->units[0].u.whole && !p->units[0].u.search)
		add_defaults(p, search);
	return p;
}

void pn_plan_free(struct pn_plan *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n; i++)
		pn_unit_result_free(&p->units[i].r);
	free(p->units);
	free(p);
}

uint32_t pn_plan_units(const struct pn_plan *p) { return p->n; }

/* U1: unit i comes before unit j in exploration order. */
static bool before(const struct pn_plan *p, uint32_t i, uint32_t j)
{
	const struct pn_unit *a = &p->units[i].u, *b = &p->units[j].u;
	return a->schedule != b->schedule ? a->schedule < b->schedule : a->lo < b->lo;
}

/* Whether unit i counts: no unit has stopped, or i is that unit or before it. */
static bool counted(const struct pn_plan *p, uint32_t i)
{
	return !p->stopped || i == p->stop || before(p, i, p->stop);
}

bool pn_plan_next(struct pn_plan *p, uint32_t *id, struct pn_unit *u)
{
	uint32_t pick = p->n;
	for (uint32_t i = 0; i < p->n; i++) {
		if (p->units[i].state != P_READY || !counted(p, i))
			continue;
		/* heads first (each unlocks more units, U3), then unit order */
		bool head = p->units[i].head, picked = pick < p->n && p->units[pick].head;
		if (pick == p->n || (head && !picked) || (head == picked && before(p, i, pick)))
			pick = i;
	}
	if (pick >= p->n)
		return false;
	p->units[pick].state = P_OUT;
	p->units[pick].tries++;
	PN_ASSERT(p->units[pick].tries <= UNIT_TRIES); /* U5 */
	*id = pick;
	*u = p->units[pick].u;
	return true;
}

/* A head is done: cut the rest of its schedule (U3), and start the next schedule. */
static void after_head(struct pn_plan *p, uint32_t id)
{
	const struct plan_unit head = p->units[id], *h = &head; /* add_unit moves p->units */
	const struct pn_unit_result *r = &h->r;
	uint64_t fresh = r->fresh_end;
	if (!r->finished) {
		uint64_t *los = calloc(r->npoints + 2, sizeof(*los));
		PN_ASSERT(los != NULL);
		uint32_t k = pn_unit_cut(r->points, r->npoints, r->end, p->jobs, p->unit_states,
					 los);
		PN_ASSERT(k >= 1 && k <= r->npoints + 1 && los[0] == r->end); /* U3 */
		uint32_t at = 0;
		for (uint32_t i = 0; i < k; i++) {
			struct pn_unit u = {.schedule = h->u.schedule,
					    .lo = los[i],
					    .hi = i + 1 < k ? los[i + 1] : UINT64_MAX,
					    .fresh_base = h->u.fresh_base,
					    .fresh_lo = fresh};
			for (; at < r->npoints && r->points[at].event < u.hi; at++)
				fresh += r->points[at].fresh;
			add_unit(p, &u, false);
		}
		free(los);
	}
	if (!p->last_head && !p->unchained)
		add_head(p, h->u.schedule + 1, fresh);
}

void pn_plan_done(struct pn_plan *p, uint32_t id, struct pn_unit_result *r)
{
	PN_ASSERT(id < p->n && p->units[id].state == P_OUT);
	PN_ASSERT(r->status <= PN_UNIT_INTERRUPTED);
	struct plan_unit *pu = &p->units[id];
	pn_unit_result_free(&pu->r);
	pu->r = *r;
	memset(r, 0, sizeof(*r));
	pu->state = P_DONE;
	if (pu->r.status != PN_UNIT_DONE) {
		if (!p->stopped || before(p, id, p->stop))
			p->stop = id; /* U1: what follows is cancelled */
		p->stopped = true;
		return;
	}
	if (pu->head && !pu->u.whole && counted(p, id))
		after_head(p, id);
}

void pn_plan_failed(struct pn_plan *p, uint32_t id, const char *why)
{
	PN_ASSERT(id < p->n && p->units[id].state == P_OUT);
	struct plan_unit *pu = &p->units[id];
	if (pu->tries < UNIT_TRIES) {
		pu->state = P_READY; /* U5: once more */
		return;
	}
	struct pn_unit_result r = {.status = PN_UNIT_ERROR};
	r.res.error = true;
	snprintf(r.res.detail, sizeof(r.res.detail),
		 "the unit of schedule %u, crash points %llu to %s failed %u times: %s",
		 pu->u.schedule, (unsigned long long)pu->u.lo,
		 pu->u.hi == UINT64_MAX ? "the end" : "before the next unit", pu->tries, why);
	pn_plan_done(p, id, &r);
}

bool pn_plan_cancelled(const struct pn_plan *p, uint32_t id)
{
	return id < p->n && !counted(p, id);
}

bool pn_plan_finished(const struct pn_plan *p)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->units[i].state != P_DONE && counted(p, i))
			return false;
	return p->stopped || p->last_head;
}

int pn_plan_result(const struct pn_plan *p, struct pn_check_result *res, uint64_t (*cov)[2],
		   size_t ncov)
{
	PN_ASSERT(pn_plan_finished(p) && p->n > 0);
	PN_ASSERT(!p->stopped || p->stop < p->n);
	const struct plan_unit *last = &p->units[p->stopped ? p->stop : 0];
	uint64_t points = 0, states = 0, recoveries = 0, derived = 0, capped = 0, sampled = 0,
		 events = 0;
	struct pn_check_result parts = {0}; /* a split search's schedule counts (S2) */
	uint64_t defaults = 0;              /* the default exploration's schedules (D3) */
	bool cut = false, explored = false;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct pn_unit_result *r = &p->units[i].r;
		if (!counted(p, i))
			continue;
		parts.schedules_explored += r->res.schedules_explored;
		parts.schedules_pruned += r->res.schedules_pruned;
		parts.distinct_states += r->res.distinct_states;
		parts.points_met += r->res.points_met;
		points += r->res.crash_points;
		states += r->res.crash_states;
		recoveries += r->res.recoveries;
		derived += r->res.derived;
		capped += r->res.capped_points;
		sampled += r->res.search_sampled;
		if (r->finished || (p->stopped && i == p->stop))
			events += r->events; /* a schedule's total, or where it stopped */
		if (p->units[i].u.defaults) {
			defaults += r->res.schedules_explored;
			cut |= r->res.budget_cut;
			explored = true;
			parts.pct_runs += r->res.pct_runs;
			parts.pct_depth = PN_MAX(parts.pct_depth, r->res.pct_depth);
			parts.pct_actors = PN_MAX(parts.pct_actors, r->res.pct_actors);
			parts.pct_events = PN_MAX(parts.pct_events, r->res.pct_events);
		}
		for (uint32_t j = 0; cov && j < r->ncov && j < ncov; j++) {
			cov[j][0] += r->cov[j][0];
			cov[j][1] += r->cov[j][1];
		}
	}
	memset(res, 0, sizeof(*res));
	if (last->u.whole || p->stopped)
		*res = last->r.res; /* the violation or error, and its texts */
	if (!last->u.whole) {
		res->crash_points = points;
		res->crash_states = states;
		res->recoveries = recoveries;
		res->derived = derived;
		res->capped_points = capped;
		res->search_sampled = sampled;
		res->events = events;
		res->seconds = 0;
		/* units split seeded runs: those up to the one stopped, or all; then the default's */
		res->schedules_explored = p->stopped && !last->u.defaults ? last->u.schedule + 1
									  : p->sc->schedules.runs;
		res->strategy = p->sc->schedules.strategy;
	}
	if (last->u.search || explored) {
		res->schedules_explored = last->u.search ? parts.schedules_explored
							 : res->schedules_explored + defaults;
		res->schedules_pruned = parts.schedules_pruned;
		res->distinct_states = parts.distinct_states;
		res->points_met = parts.points_met;
		res->preemption_bound = p->sc->schedules.preemption_bound;
	}
	if (explored) {
		res->schedules_default = defaults;
		res->budget = (uint32_t)p->budget;
		res->budget_cut = cut;
		res->pct_runs = parts.pct_runs;
		res->pct_depth = parts.pct_depth;
		res->pct_actors = parts.pct_actors;
		res->pct_events = parts.pct_events;
	}
	snprintf(res->name, sizeof(res->name), "%s", p->sc->name);
	res->expected_violation = p->sc->expect.violation;
	if (res->interrupted)
		return 3;
	if (res->error)
		return 2;
	res->ok = res->violation == res->expected_violation && !res->diverged;
	return res->ok ? 0 : 1;
}

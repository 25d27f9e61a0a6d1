/*
 * explore.c: the search over schedules (model layer). See explore.h.
 */
#include "explore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pct runs draw from their own runs of the schedule stream, past any seeded index. */
#define PCT_RUN_BASE ((uint64_t)1 << 40)
/* pct: after this many events in a row that passed over the seeded order's next event, that
 * event runs (a process that polls, rescheduling itself, would otherwise starve the rest) */
#define PCT_PASSED_MAX 32

static void schedule_copy(struct pn_schedule *dst, const struct pn_schedule *src, uint32_t extra)
{
	dst->n = src->n;
	dst->c = malloc((src->n + extra + 1) * sizeof(*dst->c));
	PN_ASSERT(dst->c != NULL);
	if (src->n)
		memcpy(dst->c, src->c, src->n * sizeof(*dst->c));
}

void pn_schedule_free(struct pn_schedule *s)
{
	free(s->c);
	free(s->sleep);
	*s = (struct pn_schedule){0};
}

bool pn_schedule_format(const struct pn_schedule *s, char *buf, size_t len)
{
	size_t at = 0;
	PN_ASSERT(len > 0);
	buf[0] = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		int k = snprintf(buf + at, len - at, "%s%llu:%u", i ? "," : "",
				 (unsigned long long)s->c[i].event, s->c[i].pick);
		if (k < 0 || (size_t)k >= len - at) {
			buf[at] = 0;
			return false;
		}
		at += (size_t)k;
	}
	return true;
}

bool pn_schedule_parse(const char *text, struct pn_schedule *s, char *why, size_t why_len)
{
	size_t commas = 0, len = strlen(text);
	s->sleep = NULL;
	s->nsleep = 0;
	if (len >= 3 && strcmp(text + len - 3, "...") == 0) {
		snprintf(why, why_len,
			 "the schedule had more preemptions than a trace holds (%u bytes): it ends "
			 "in '...' and cannot be replayed",
			 PN_CHOICES_TEXT_MAX - 1);
		s->c = NULL;
		s->n = 0;
		return false;
	}
	for (const char *p = text; *p; p++)
		commas += *p == ',';
	s->n = 0;
	s->c = calloc(commas + 2, sizeof(*s->c));
	PN_ASSERT(s->c != NULL);
	const char *p = text;
	while (*p) {
		char *end;
		unsigned long long e = strtoull(p, &end, 10);
		unsigned long i = end != p && *end == ':' ? strtoul(end + 1, &end, 10) : 0;
		uint64_t prev = s->n ? s->c[s->n - 1].event : 0;
		if (e <= prev || i == 0 || i >= PN_CHOICE_WIDTH_MAX || (*end && *end != ',') ||
		    (*end == ',' && end[1] == 0)) {
			snprintf(
				why, why_len,
				"choice %u is not EVENT:CANDIDATE with events increasing from 1 and "
				"a candidate from 1 to %u",
				s->n + 1, PN_CHOICE_WIDTH_MAX - 1);
			pn_schedule_free(s);
			return false;
		}
		s->c[s->n++] = (struct pn_choice){e, (uint32_t)i};
		p = *end ? end + 1 : end;
	}
	return true;
}

void pn_explore_init(struct pn_explore *x, const struct pn_scenario *sc, uint32_t index)
{
	*x = (struct pn_explore){.sc = sc,
				 .mode = sc->schedules.strategy == PN_STRATEGY_PCT
						 ? PN_EXPLORE_PCT
						 : PN_EXPLORE_BOUNDED,
				 .bound = sc->schedules.preemption_bound,
				 .reduce = sc->schedules.reduce,
				 .prune = sc->schedules.reduce && sc->schedules.prune,
				 .runs = sc->schedules.runs,
				 .depth = PN_MIN(sc->schedules.depth, 16u)};
	PN_ASSERT(sc->schedules.strategy != PN_STRATEGY_SEEDED);
	pn_prng_seed(&x->rng, sc->seed, PN_STREAM_SCHEDULE, PCT_RUN_BASE | (uint64_t)index << 20);
}

bool pn_explore_init_fixed(struct pn_explore *x, const struct pn_scenario *sc, const char *text)
{
	*x = (struct pn_explore){.sc = sc, .mode = PN_EXPLORE_FIXED};
	return pn_schedule_parse(text, &x->cur, x->error, sizeof(x->error));
}

void pn_explore_free(struct pn_explore *x)
{
	for (uint64_t i = x->head; i < x->head + x->len; i++)
		pn_schedule_free(&x->queue[i % x->cap]);
	free(x->queue);
	pn_schedule_free(&x->cur);
	pn_schedule_free(&x->taken);
	free(x->seen_fp);
	free(x->seen_left);
	free(x->seen_run);
	free(x->point_key);
	free(x->prio);
	free(x->live);
	memset(x, 0, sizeof(*x));
}

static void enqueue(struct pn_explore *x, const struct pn_schedule *parent, uint64_t event,
		    uint32_t pick, const struct pn_touch *sleep, uint32_t nsleep)
{
	if (x->len == x->cap) {
		uint64_t ncap = x->cap ? x->cap * 2 : 256;
		struct pn_schedule *n = malloc(ncap * sizeof(*n));
		PN_ASSERT(n != NULL);
		for (uint64_t i = 0; i < x->len; i++)
			n[i] = x->queue[(x->head + i) % x->cap];
		free(x->queue);
		x->queue = n;
		x->head = 0;
		x->cap = ncap;
	}
	struct pn_schedule *s = &x->queue[(x->head + x->len++) % x->cap];
	schedule_copy(s, parent, 1);
	s->c[s->n++] = (struct pn_choice){event, pick};
	s->sleep = NULL;
	s->nsleep = nsleep;
	if (nsleep) {
		s->sleep = malloc(nsleep * sizeof(*sleep));
		PN_ASSERT(s->sleep != NULL);
		memcpy(s->sleep, sleep, nsleep * sizeof(*sleep));
	}
}

/* The pct run's change points: depth - 1 events drawn in 1..horizon. */
static void pct_begin(struct pn_explore *x)
{
	memset(x->change, 0, sizeof(x->change));
	for (uint32_t i = 0; i + 1 < x->depth && x->horizon; i++)
		x->change[i] = pn_prng_range(&x->rng, 1, x->horizon);
	if (x->prio)
		memset(x->prio, 0, x->nprio * sizeof(*x->prio));
	x->passed = 0;
}

bool pn_explore_next(struct pn_explore *x)
{
	bool first = !x->started;
	x->started = true;
	x->stop = x->mismatch = false;
	x->next = 0;
	pn_schedule_free(&x->taken);
	x->taken.c = NULL;
	if (x->mode == PN_EXPLORE_FIXED) {
		if (!first)
			return false;
	} else if (x->mode == PN_EXPLORE_PCT) {
		if (x->run >= x->runs)
			return false;
		if (x->run++ > 0)
			pct_begin(x);
	} else if (!first) {
		if (x->len == 0)
			return false;
		pn_schedule_free(&x->cur);
		x->cur = x->queue[x->head];
		x->head = (x->head + 1) % x->cap;
		x->len--;
	}
	x->nlive = 0; /* the sleep set: the schedule's, past its last preemption */
	if (x->mode == PN_EXPLORE_BOUNDED && x->cur.nsleep) {
		if (x->live_cap < x->cur.nsleep) {
			x->live_cap = 2 * x->cur.nsleep;
			x->live = realloc(x->live, x->live_cap * sizeof(*x->live));
			PN_ASSERT(x->live != NULL);
		}
		memcpy(x->live, x->cur.sleep, x->cur.nsleep * sizeof(*x->live));
		x->nlive = x->cur.nsleep;
	}
	x->explored++;
	return true;
}

uint64_t pn_explore_first_new_point(const struct pn_explore *x)
{
	if (x->mode == PN_EXPLORE_PCT)
		return 1; /* a pct run may deviate anywhere */
	return x->cur.n ? x->cur.c[x->cur.n - 1].event : 1;
}

uint64_t pn_explore_checked_before(const struct pn_explore *x)
{
	if (x->mode != PN_EXPLORE_BOUNDED || x->cur.n == 0)
		return 0;
	return x->cur.c[x->cur.n - 1].event;
}

uint64_t pn_explore_states(const struct pn_explore *x) { return x->seen_len; }

uint32_t pn_explore_preempted(const struct pn_explore *x) { return x->taken.n; }

static void take(struct pn_explore *x, uint64_t event, uint32_t pick)
{
	if ((x->taken.n & (x->taken.n + 1)) == 0 || !x->taken.c) {
		x->taken.c = realloc(x->taken.c, (2 * x->taken.n + 2) * sizeof(*x->taken.c));
		PN_ASSERT(x->taken.c != NULL);
	}
	x->taken.c[x->taken.n++] = (struct pn_choice){event, pick};
}

/* Whether a crash point's key was recorded (pn_explore_point_seen), recording nothing. */
bool pn_explore_point_known(const struct pn_explore *x, uint64_t key)
{
	if (!x->point_cap)
		return false;
	key |= 1; /* as pn_explore_point_seen keeps it */
	uint64_t j = key & (x->point_cap - 1);
	while (x->point_key[j] && x->point_key[j] != key)
		j = (j + 1) & (x->point_cap - 1);
	return x->point_key[j] != 0;
}

/* A crash point's key met before in this search (and recorded if not): its crash states, a
 * function of what the key holds, were all judged then and passed (a violation ends the
 * search), so the caller skips them. */
bool pn_explore_point_seen(struct pn_explore *x, uint64_t key)
{
	if (x->point_len * 2 >= x->point_cap) {
		uint64_t ncap = x->point_cap ? x->point_cap * 2 : 4096;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		PN_ASSERT(nk != NULL);
		for (uint64_t i = 0; i < x->point_cap; i++) {
			if (!x->point_key[i])
				continue;
			uint64_t j = x->point_key[i] & (ncap - 1);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = x->point_key[i];
		}
		free(x->point_key);
		x->point_key = nk;
		x->point_cap = ncap;
	}
	key |= 1; /* 0 marks an empty slot */
	uint64_t j = key & (x->point_cap - 1);
	while (x->point_key[j] && x->point_key[j] != key)
		j = (j + 1) & (x->point_cap - 1);
	if (x->point_key[j])
		return true;
	x->point_key[j] = key;
	x->point_len++;
	return false;
}

/* Whether an earlier run met fp with at least `left` preemptions to spare; records it
 * otherwise, when `record` (a run with events asleep has not explored all of the state's
 * continuations: it does not stand for them). */
static bool seen_before(struct pn_explore *x, uint64_t fp, uint8_t left, bool record)
{
	if (x->seen_len * 2 >= x->seen_cap) {
		uint64_t ncap = x->seen_cap ? x->seen_cap * 2 : 4096;
		uint64_t *nfp = calloc(ncap, sizeof(*nfp));
		uint8_t *nleft = calloc(ncap, 1);
		uint64_t *nrun = calloc(ncap, sizeof(*nrun));
		PN_ASSERT(nfp != NULL && nleft != NULL && nrun != NULL);
		for (uint64_t i = 0; i < x->seen_cap; i++) {
			if (!x->seen_fp[i])
				continue;
			uint64_t j = x->seen_fp[i] & (ncap - 1);
			while (nfp[j])
				j = (j + 1) & (ncap - 1);
			nfp[j] = x->seen_fp[i];
			nleft[j] = x->seen_left[i];
			nrun[j] = x->seen_run[i];
		}
		free(x->seen_fp);
		free(x->seen_left);
		free(x->seen_run);
		x->seen_fp = nfp;
		x->seen_left = nleft;
		x->seen_run = nrun;
		x->seen_cap = ncap;
	}
	fp |= 1; /* 0 marks an empty slot */
	uint64_t j = fp & (x->seen_cap - 1);
	while (x->seen_fp[j] && x->seen_fp[j] != fp)
		j = (j + 1) & (x->seen_cap - 1);
	/* a run meeting its own state again is waiting (a state blind to time repeats): go on */
	if (x->seen_fp[j] && x->seen_left[j] >= left)
		return x->seen_run[j] != x->explored;
	if (!record)
		return false;
	if (!x->seen_fp[j])
		x->seen_len++;
	x->seen_fp[j] = fp;
	x->seen_left[j] = left;
	x->seen_run[j] = x->explored;
	return false;
}

static bool asleep(const struct pn_explore *x, uint64_t seq)
{
	for (uint32_t i = 0; i < x->nlive; i++)
		if (x->live[i].seq == seq)
			return true;
	return false;
}

/* Whether t, asleep, stays asleep when x runs: they commute (a poll: until what it reads
 * changes, which the next event's frontier sees). */
static bool stays_asleep(const struct pn_touch *t, const struct pn_touch *x)
{
	if (t->actor == x->actor)
		return false;
	if (t->poll)
		return true;
	if (x->poll)
		return !t->engine;
	return pn_touch_independent(t, x);
}

/* Wakes the polls whose reads changed (by the event that just ran). */
static void wake_polls(struct pn_explore *x, struct pn_world *w)
{
	uint64_t reads = 0;
	uint32_t k = 0;
	for (uint32_t j = 0; j < x->nlive; j++) {
		if (x->live[j].poll && !reads)
			reads = pn_world_poll_reads(w) | 1;
		if (!x->live[j].poll || (x->live[j].reads | 1) == reads)
			x->live[k++] = x->live[j];
	}
	x->nlive = k;
}

/* Child i's sleep set: the running one's and the candidates before i (explored first: this
 * run takes candidate 0, the earlier children the others), those that commute with i. */
static uint32_t child_sleep(const struct pn_explore *x, uint32_t i, struct pn_touch *out)
{
	uint32_t n = 0;
	for (uint32_t j = 0; j < x->nlive; j++)
		if (stays_asleep(&x->live[j], &x->touch[i]))
			out[n++] = x->live[j];
	for (uint32_t j = 0; j < i; j++)
		if (!asleep(x, x->touch[j].seq) && stays_asleep(&x->touch[j], &x->touch[i]))
			out[n++] = x->touch[j];
	return n;
}

/* Keeps asleep the events that commute with the one that runs (t). */
static void wake_dependent(struct pn_explore *x, const struct pn_touch *t)
{
	uint32_t k = 0;
	for (uint32_t j = 0; j < x->nlive; j++)
		if (stays_asleep(&x->live[j], t))
			x->live[k++] = x->live[j];
	x->nlive = k;
}

/* Bounded: past the schedule's last preemption, a state met before ends the run; else each
 * other candidate of the event not asleep is a child with one preemption more, and a run
 * whose candidate 0 is asleep ends (an earlier schedule ran it from here). */
static void bounded_frontier(struct pn_explore *x, struct pn_world *w, const struct pn_event *cand,
			     uint64_t event, uint32_t n)
{
	uint8_t left = (uint8_t)(x->bound - x->cur.n);
	if (x->prune && seen_before(x, pn_world_fingerprint(w), left, x->nlive == 0)) {
		x->stop = true;
		x->pruned++;
		return;
	}
	if (!x->prune) { /* RD1: every schedule runs to its end */
		if (x->cur.n < x->bound)
			for (uint32_t i = 1; i < n; i++)
				enqueue(x, &x->cur, event, i, NULL, 0);
		return;
	}
	wake_polls(x, w);
	for (uint32_t i = 0; i < n; i++)
		pn_world_touch(w, &cand[i], &x->touch[i]);
	struct pn_touch *sleep = NULL;
	if (x->cur.n < x->bound && n > 1) {
		sleep = malloc((x->nlive + n) * sizeof(*sleep));
		PN_ASSERT(sleep != NULL);
	}
	for (uint32_t i = 1; sleep && i < n; i++) {
		if (asleep(x, cand[i].seq)) {
			x->skipped++;
			continue;
		}
		enqueue(x, &x->cur, event, i, sleep, child_sleep(x, i, sleep));
	}
	free(sleep);
	if (asleep(x, cand[0].seq)) {
		x->stop = true;
		x->pruned++;
		x->slept++;
		return;
	}
	wake_dependent(x, &x->touch[0]);
}

static uint64_t actor(const struct pn_world *w, const struct pn_event *ev)
{
	return ev->kind == PN_EV_STEP ? ev->arg : pn_engine_proc_count(w->e) + ev->arg;
}

/* pct: the candidate whose actor has the highest priority; at a change point the chosen
 * actor's priority drops below every initial one (depth - i for the i-th point). */
static uint32_t pct_pick(struct pn_explore *x, struct pn_world *w, const struct pn_event *cand,
			 uint32_t n, uint64_t event)
{
	if (!x->prio) {
		x->nprio = pn_engine_proc_count(w->e) + pn_engine_io_count(w->e);
		x->prio = calloc(x->nprio, sizeof(*x->prio));
		PN_ASSERT(x->prio != NULL);
	}
	uint32_t best = 0;
	uint64_t best_prio = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = actor(w, &cand[i]);
		PN_ASSERT(a < x->nprio);
		if (!x->prio[a]) /* drawn on first sight, above every change point's */
			x->prio[a] = 64 + (pn_prng_next(&x->rng) >> 8);
		if (x->prio[a] > best_prio) {
			best_prio = x->prio[a];
			best = i;
		}
	}
	if (best && ++x->passed > PCT_PASSED_MAX)
		best = 0;
	if (!best)
		x->passed = 0;
	for (uint32_t i = 0; i + 1 < x->depth; i++)
		if (x->change[i] == event)
			x->prio[actor(w, &cand[best])] = x->depth - i;
	return best;
}

uint32_t pn_explore_choose(void *arg, struct pn_world *w, const struct pn_event *cand, uint32_t n)
{
	struct pn_explore *x = arg;
	uint64_t event = w->events + 1;
	uint32_t pick = 0;
	if (x->mode == PN_EXPLORE_PCT) {
		if (x->run > 1)
			pick = pct_pick(x, w, cand, n, event);
		else
			x->horizon = event;
	} else if (x->next < x->cur.n && x->cur.c[x->next].event == event) {
		pick = x->cur.c[x->next++].pick;
		if (pick >= n) {
			snprintf(x->error, sizeof(x->error),
				 "event %llu has %u candidates, the schedule names candidate %u",
				 (unsigned long long)event, n, pick);
			x->mismatch = true;
			pick = 0;
		}
	} else if (x->mode == PN_EXPLORE_BOUNDED && x->next == x->cur.n) {
		bounded_frontier(x, w, cand, event, n); /* past the schedule's last preemption */
	}
	if (pick)
		take(x, event, pick);
	return pick;
}

/* Where pn_explore_choose does nothing but take candidate 0: in a bounded search, before the
 * schedule's next preemption (no fingerprint, sleep set or child: those are the frontier's,
 * past the last preemption; no mismatch: that is the preemption's own event), and past the
 * last when the schedule has all its preemptions and nothing is pruned (RD1: no child to
 * queue, no state to record). pct draws or keeps its horizon at every event, and a fixed
 * list is left to ask at every event. */
bool pn_explore_choice_needed(void *arg, const struct pn_world *w, uint64_t event)
{
	const struct pn_explore *x = arg;
	(void)w;
	if (x->mode != PN_EXPLORE_BOUNDED)
		return true;
	if (x->next < x->cur.n)
		return x->cur.c[x->next].event <= event;
	return x->prune || x->cur.n < x->bound; /* bounded_frontier's work */
}

/* ---- a split search's part (explore_split.h): the roots queued, and one share kept ---- */
uint64_t pn_explore_queued(const struct pn_explore *x) { return x->len; }

uint64_t pn_explore_queued_event(const struct pn_explore *x, uint64_t i)
{
	PN_ASSERT(i < x->len);
	const struct pn_schedule *s = &x->queue[(x->head + i) % x->cap];
	PN_ASSERT(s->n > 0);
	return s->c[s->n - 1].event;
}

void pn_explore_keep(struct pn_explore *x, uint64_t lo, uint64_t hi)
{
	PN_ASSERT(lo <= hi && hi <= x->len);
	for (uint64_t i = 0; i < x->len; i++)
		if (i < lo || i >= hi)
			pn_schedule_free(&x->queue[(x->head + i) % x->cap]);
	x->head = (x->head + lo) % (x->cap ? x->cap : 1);
	x->len = hi - lo;
}

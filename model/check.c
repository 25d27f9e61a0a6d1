/*
 * check.c: the crash-point model checker's driver (model layer; checker.h has rules
 * H1-H6): the schedule runs of a scenario, a search's schedules, --twice, a work unit's run,
 * the selection of crash points. What happens at a crash point is run.c's; a unit's range
 * span.c's; the replay replay.c's.
 */
#include "checker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xxh.h"

#include "cover.h"
#include "explore_split.h"
#include "oracle.h"
#include "replay.h"
#include "run.h"
#include "span.h"

static void on_wal(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	struct pn_run *c = arg;
	char why[256];
	if (c->j.oracle &&
	    !pn_oracle_add_why(c->j.oracle, rec, len, start, end, why, sizeof(why))) {
		fprintf(stderr, "oracle: %s\n", why);
		PN_ASSERT(!"the oracle cannot decode a record the engine wrote");
	}
}

/* RD2: a search's crash point whose device (durable image by content, every unsynced write
 * by place and bytes, in order) and highest acknowledged commit an earlier point of the part
 * had, drawing at least as many samples (SP2: crash.samples, or this point's): its states
 * are the same fates over the same bytes (or fewer of its samples), whose verdicts are
 * functions of those bytes (the verdict cache's H2), and C1 the same comparison; they were
 * judged there. With prune (RD3) the world's fingerprint takes the acks' place, as before. */
static bool point_met(struct pn_run *c)
{
	if (!c->x->reduce)
		return false;
	uint64_t seed = pn_world_dur_digest(c->w);
	if (c->x->prune) { /* RD3: as before RD2, by the world's fingerprint too */
		seed ^= pn_world_fingerprint(c->w);
	} else { /* RD2: C1 passes for every state iff the highest acknowledged LSN does */
		pn_lsn need = pn_run_acks_need(c);
		seed = XXH3_64bits_withSeed(&need, sizeof(need), seed);
	}
	/* every unsynced write by place and bytes, in order */
	uint64_t key = seed;
	for (uint32_t i = 0; i < c->w->dev.nunsynced; i++) {
		uint64_t h = pn_device_unsynced_hash(&c->w->dev, i);
		key = XXH3_64bits_withSeed(&h, sizeof(h), key);
	}
	/* SP2: the samples it draws, so a point is skipped where one drew at least as many */
	uint32_t samples = pn_run_samples(c), full = c->sc->crash.samples;
	uint64_t own = XXH3_64bits_withSeed(&samples, sizeof(samples), key);
	bool more = samples < full &&
		    pn_explore_point_known(c->x, XXH3_64bits_withSeed(&full, sizeof(full), key));
	/* the first schedule checks every point, as the seeded one does (bound 0 = seeded) */
	if ((!pn_explore_point_seen(c->x, own) && !more) || c->x->explored <= 1)
		return false;
	c->x->points_skipped++;
	return true;
}

static bool point_selected(const struct pn_scenario *sc, uint64_t point)
{
	switch (sc->crash.points) {
	case PN_POINTS_EVERY: PN_ASSERT(sc->crash.every > 0); return point % sc->crash.every == 0;
	case PN_POINTS_LIST:
		for (uint32_t i = 0; i < sc->crash.list_len; i++)
			if (sc->crash.list[i] == point)
				return true;
		return false;
	default: return true;
	}
}

/* The caller's progress hook sees only the result's counts, never the world (which may
 * already be freed when the last report is due). */
static void progress(struct pn_run *c)
{
	if (c->opt->progress)
		c->opt->progress(c->opt->progress_arg, c->res);
}

static void oracle_start(struct pn_run *c)
{
	c->j.oracle = pn_check_oracle_new(c->w->e);
	c->j.history = &c->w->dev; /* J5 */
	c->w->on_wal = on_wal;
	c->w->on_wal_arg = c;
}

/* One schedule run: 0 passed, 1 violation found, 2 could not run. */
static int run_schedule(struct pn_run *c)
{
	struct pn_check_result *res = c->res;
	struct pn_world_options o = {.track = c->sc->crash.present || c->opt->replay,
				     .check_each_event = true,
				     .check_from = c->x && !c->opt->check_prefix
							   ? pn_explore_checked_before(c->x)
							   : 0,
				     .schedule = c->schedule,
				     .twin = c->twin,
				     .choose = c->x ? pn_explore_choose : NULL,
				     .choose_arg = c->x,
				     .choice_needed = c->x ? pn_explore_choice_needed : NULL,
				     .lazy = c->x ? &c->lazy : NULL};
	PN_ASSERT(c->w == NULL && c->j.oracle == NULL); /* the last run's were freed */
	c->w = calloc(1, sizeof(*c->w));
	PN_ASSERT(c->w != NULL);
	if (!pn_world_init(c->w, c->sc, &o, NULL)) {
		snprintf(res->detail, sizeof(res->detail), "%s", c->w->error);
		free(c->w);
		c->w = NULL;
		return 2;
	}
	if (c->sc->crash.present)
		oracle_start(c);
	if (c->derive)
		pn_derive_point(c->derive, NULL, UINT64_MAX); /* DR6: a new world carries no base */
	pn_engine_start(c->w->e);
	if (c->opt->replay) {
		int rc = pn_replay_point(c);
		if (c->x && c->x->mismatch) {
			snprintf(res->detail, sizeof(res->detail), "replay.choices: %s",
				 c->x->error);
			pn_replay_misfit(c, PN_REPLAY_CHOICES);
			return 2;
		}
		return rc;
	}
	uint64_t version = UINT64_MAX, acked = UINT64_MAX;
	/* earlier: as its parent; a split search's survey: none (part 0 checks them) */
	uint64_t from = c->x ? pn_explore_first_new_point(c->x) : 0;
	from = c->search_survey ? UINT64_MAX : from;
	for (;;) {
		if (c->unit && pn_span_edge(c))
			return c->res->detail[0] ? 2 : 0;
		int step = pn_world_step(c->w);
		uint64_t point = c->w->events;
		if (c->x && c->x->mismatch) {
			snprintf(res->detail, sizeof(res->detail), "replay.choices: %s",
				 c->x->error);
			return 2;
		}
		if (c->surveying && (step == PN_STEP_VIOLATION || step == PN_STEP_STALL))
			return 0; /* past the head's range: a later unit finds it */
		if (step == PN_STEP_VIOLATION) {
			const struct pn_violation *viol = pn_engine_violation_of(c->w->e);
			snprintf(c->j.detail, sizeof(c->j.detail), "%s (a runtime invariant)",
				 viol->detail);
			pn_run_report(c, viol->kind, viol->page, point, false);
			return 1;
		}
		if (step == PN_STEP_STALL) {
			snprintf(res->detail, sizeof(res->detail), "%s", c->w->error);
			return 2;
		}
		struct pn_acks_view acks;
		pn_engine_acks(c->w->e, &acks);
		bool changed = c->w->dev.version != version || acks.n != acked;
		res->events = c->events_done + point;
		if (c->sc->crash.present && changed && point_selected(c->sc, point)) {
			version = c->w->dev.version;
			acked = acks.n;
			if (point >= from && !(c->x && point_met(c)) &&
			    !(c->unit ? pn_span_point(c, point) : pn_run_point(c, point)))
				return c->interrupted ? 3 : 1;
			progress(c);
		} else if (point % PN_CHECK_PROGRESS_EVENTS == 0) {
			progress(c);
		}
		if (pn_run_stopping(c))
			return 3;
		if (c->x && c->x->stop)
			return 0; /* a state an earlier schedule reached: explored from there */
		if (step == PN_STEP_FINISHED) {
			if (c->ur && !c->surveying)
				c->ur->finished = true;
			return 0;
		}
	}
}

static void checker_free(struct pn_run *c)
{
	if (c->w) {
		pn_world_free(c->w);
		free(c->w);
		c->w = NULL;
	}
	if (c->j.oracle)
		pn_oracle_free(c->j.oracle);
	c->j.oracle = NULL;
	c->j.history = NULL;
}

/* One schedule run's outcome, as --twice compares it. */
static void outcome_text(const struct pn_check_result *r, int rc, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s",
			 rc == 2        ? "could not run"
			 : r->violation ? "violation"
					: "pass");
	if (r->violation && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " %s at crash point %llu, state %s%s%s",
			      pn_violation_name(r->kind), (unsigned long long)r->crash_point,
			      r->state[0] ? r->state : "none",
			      r->in_recovery ? ", recovery state " : "",
			      r->in_recovery ? r->recovery_state : "");
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 ", %llu crash points, %llu states, %llu recovered",
			 (unsigned long long)r->crash_points, (unsigned long long)r->crash_states,
			 (unsigned long long)r->recoveries);
}

/*
 * --twice: the schedule run twice from the same start (an empty verdict cache, the same
 * count of new states), each event's hash and the verdicts compared (sim/world.h); the first
 * difference goes to res->divergence. res keeps the first run's outcome, c->w the second
 * run's world. Returns 1 on a divergence, else run_schedule()'s status.
 */
static int run_twice(struct pn_run *c)
{
	struct pn_check_result *res = c->res, *before = malloc(2 * sizeof(*res)),
			       *first = before + 1;
	uint64_t new_states = c->new_states;
	char msg[900] = "", a[300], b[300];
	PN_ASSERT(before != NULL);
	pn_world_twin_reset(c->twin);
	*before = *res;
	int rc = run_schedule(c);
	if (!c->w) { /* the world could not be made: nothing ran */
		free(before);
		return rc;
	}
	bool same = pn_world_twin_end(c->twin, c->w, msg, sizeof(msg));
	*first = *res;
	*res = *before;
	checker_free(c);
	pn_cache_clear(&c->cache);
	c->new_states = new_states;
	int rc2 = run_schedule(c);
	if (same && c->w)
		same = pn_world_twin_end(c->twin, c->w, msg, sizeof(msg));
	outcome_text(first, rc, a, sizeof(a));
	outcome_text(res, rc2, b, sizeof(b));
	if (same && (rc != rc2 || strcmp(a, b) || first->page != res->page))
		snprintf(msg, sizeof(msg),
			 "the two runs agree on every event but not on the outcome: "
			 "the first run: %s; the second: %s",
			 a, b);
	*res = *first;
	if (msg[0]) {
		res->diverged = true;
		snprintf(res->divergence, sizeof(res->divergence),
			 "nondeterminism: schedule %u: %s", c->schedule, msg);
		if (!res->violation)
			snprintf(res->detail, sizeof(res->detail), "%s", res->divergence);
		rc = 1;
	}
	free(before);
	return rc;
}

static void checker_open(struct pn_run *c, const struct pn_scenario *sc,
			 const struct pn_check_options *opt, struct pn_check_result *res)
{
	*c = (struct pn_run){.sc = sc, .opt = opt, .res = res};
	memset(res, 0, sizeof(*res));
	snprintf(res->name, sizeof(res->name), "%s", sc->name);
	res->expected_violation = sc->expect.violation;
	c->t0 = pn_run_wall_seconds();
	pn_judge_init(&c->j, sc);
	c->derive = opt->derive ? pn_derive_new(sc) : NULL;
	c->derive_nested = opt->derive ? pn_derive_new(sc) : NULL;
	pn_crash_enum_init(&c->ce);
	pn_crash_enum_init(&c->ahead);
}

static void checker_close(struct pn_run *c)
{
	pn_world_lazy_free(&c->lazy);
	pn_derive_free(c->derive);
	pn_derive_free(c->derive_nested);
	free(c->point_met.v);
	pn_crash_enum_free(&c->ce);
	pn_crash_enum_free(&c->ahead);
	pn_cache_free(&c->cache);
	pn_judge_free(&c->j);
	c->res->seconds = pn_run_wall_seconds() - c->t0;
}

static enum pn_unit_status unit_status(int rc, const struct pn_check_result *res)
{
	return rc == 3                           ? PN_UNIT_INTERRUPTED
	       : rc == 2                         ? PN_UNIT_ERROR
	       : res->violation || res->diverged ? PN_UNIT_VIOLATION
						 : PN_UNIT_DONE;
}

static enum pn_unit_status check_part(const struct pn_scenario *sc,
				      const struct pn_check_options *opt, const struct pn_unit *u,
				      struct pn_unit_result *out);

enum pn_unit_status pn_check_unit(const struct pn_scenario *sc, const struct pn_check_options *opt,
				  const struct pn_unit *u, struct pn_unit_result *out)
{
	struct pn_run c;
	memset(out, 0, sizeof(*out));
	PN_ASSERT(!opt->replay && (u->whole || !opt->twice)); /* --twice: whole scenarios only */
	pn_cover_zero();
	if (u->whole) {
		int rc = pn_check_scenario(sc, opt, &out->res);
		out->status = unit_status(rc, &out->res);
		out->events = out->res.events;
		out->finished = true;
		out->end = UINT64_MAX;
		struct pn_run whole = {.ur = out};
		pn_span_cover(&whole);
		return out->status;
	}
	if (u->search || u->defaults)
		return check_part(sc, opt, u, out);
	PN_ASSERT(u->schedule < sc->schedules.runs && u->lo <= u->hi);
	checker_open(&c, sc, opt, &out->res);
	c.unit = u;
	c.ur = out;
	c.schedule = u->schedule;
	c.new_states = u->fresh_base;
	out->end = u->hi;
	int rc = run_schedule(&c);
	out->events = c.w ? c.w->events : 0;
	out->res.events = out->events;
	if (out->finished || rc != 0) {
		out->end = out->finished ? UINT64_MAX : out->end;
		out->fresh_end = c.new_states;
	}
	pn_span_cover(&c);
	checker_free(&c);
	checker_close(&c);
	if (rc == 2)
		out->res.error = true;
	if (rc == 3)
		out->res.interrupted = true;
	out->status = unit_status(rc, &out->res);
	return out->status;
}

struct pn_check_options pn_check_replay_options(const struct pn_scenario *sc)
{
	return (struct pn_check_options){
		.replay = true,
		.replay_schedule = sc->replay.schedule,
		.replay_point = sc->replay.crash_point,
		.replay_state = sc->replay.state,
		.replay_recovery_point = sc->replay.recovery_crash_point,
		.replay_recovery_state = sc->replay.recovery_state,
		.replay_choices = sc->replay.choices,
	};
}

/* Part k >= 1 of a split search (explore_split.h): the seeded run surveyed, its roots
 * queued, share k kept; the result as it was (the survey's counts are part 0's). 0, or 3 when
 * stopped; a seeded run that cannot end is part 0's finding: no root is kept. A pct part of
 * the default (D4): the survey gives its runs their horizon; none runs after a failed one. */
static int survey_roots(struct pn_run *c, uint32_t part)
{
	struct pn_check_result *saved = malloc(sizeof(*saved));
	PN_ASSERT(saved != NULL && c->x->explored == 0);
	*saved = *c->res;
	uint64_t events_done = c->events_done;
	c->search_survey = true;
	bool seeded = pn_explore_next(c->x);
	PN_ASSERT(seeded);
	int rc = run_schedule(c);
	uint64_t events = c->w ? c->w->events : 0;
	checker_free(c);
	c->search_survey = false;
	*c->res = *saved;
	c->events_done = events_done;
	free(saved);
	if (c->x->mode == PN_EXPLORE_PCT)
		c->x->runs = rc == 0 ? c->x->runs : c->x->run;
	else if (rc == 0)
		pn_split_keep(c->x, events, part);
	else
		pn_explore_keep(c->x, 0, 0);
	return rc == 3 ? 3 : 0;
}

/* The schedules of one seeded index that the search (explore.h) or the replay's choices
 * name, each with its crash points: 0 passed, else run_schedule()'s status. part: of a split
 * search (explore_split.h), PN_SPLIT_WHOLE for the whole search (pct, given choices). */
static int run_search(struct pn_run *c, uint32_t part)
{
	struct pn_explore x;
	struct pn_check_result *res = c->res;
	const char *given = c->opt->replay ? c->opt->replay_choices : c->opt->choices;
	if (given && !pn_explore_init_fixed(&x, c->sc, given)) {
		snprintf(res->detail, sizeof(res->detail), "replay.choices: %s", x.error);
		if (c->opt->replay)
			pn_replay_misfit(c, PN_REPLAY_CHOICES);
		pn_explore_free(&x);
		return 2;
	}
	if (!given)
		pn_explore_init(&x, c->sc, c->schedule);
	c->x = &x;
	c->cache.limit = c->opt->cache_limit ? c->opt->cache_limit : PN_SEARCH_CACHE_LIMIT; /* V5 */
	if (part > PN_SPLIT_PARTS && part != PN_SPLIT_WHOLE)
		pn_split_pct_stream(&x, part - PN_SPLIT_PARTS); /* a pct part of the default (D4) */
	int rc = part > 0 && part != PN_SPLIT_WHOLE ? survey_roots(c, part) : 0;
	/* counts of the parts before (S2); the survey's fingerprints are part 0's */
	uint64_t pruned = res->schedules_pruned, met = res->points_met;
	uint64_t states = res->distinct_states - pn_explore_states(&x), ran = 0;
	while (rc == 0 && pn_explore_next(&x)) {
		rc = run_schedule(c);
		if (c->w)
			res->events = c->events_done + c->w->events;
		c->events_done = res->events;
		res->schedules_explored += 1;
		res->schedules_pruned = pruned + x.pruned;
		res->distinct_states = states + pn_explore_states(&x);
		res->points_met = met + x.points_skipped;
		checker_free(c);
		progress(c);
		if (part == 0)
			break; /* part 0: the seeded schedule alone */
		if (c->part_cap && ++ran == c->part_cap) {
			res->budget_cut |= rc == 0 && pn_explore_queued(&x) > 0; /* D2 */
			break;
		}
	}
	if (x.mode == PN_EXPLORE_PCT) { /* the probability bound's k and n (D4) */
		res->pct_actors = PN_MAX(res->pct_actors, x.nprio);
		res->pct_events = PN_MAX(res->pct_events, x.horizon);
	}
	c->x = NULL;
	c->cache.limit = 0; /* a seeded run's cache is unbounded (V5) */
	pn_explore_free(&x);
	return rc;
}

/* A fresh scope for a part of a split search (S1): the verdict cache, the count of distinct
 * states (H5) and of states cross-checked. */
static void part_scope(struct pn_run *c)
{
	pn_cache_clear(&c->cache);
	c->new_states = 0;
	c->cross_checked = 0;
}

/* Parts first .. last of a split search of one seeded index, in order (S2): 0 passed, else
 * the first part's status that is not. */
static int run_parts(struct pn_run *c, uint32_t first, uint32_t last)
{
	int rc = 0;
	for (uint32_t part = first; part <= last && rc == 0; part++) {
		part_scope(c);
		rc = run_search(c, part);
	}
	return rc;
}

/* D1-D4: parts first .. last of the default exploration after the seeded schedules (search:
 * pn_split_default's), in order: 1 .. P the bounded search at K = 1 around seeded index 0,
 * each within its share of the budget, P + 1 .. 2P its pct runs (those with none skipped). */
static int run_default(struct pn_run *c, const struct pn_scenario *search, uint32_t first,
		       uint32_t last)
{
	const struct pn_scenario *sc = c->sc;
	struct pn_check_result *res = c->res;
	uint64_t before = res->schedules_explored;
	int rc = 0;
	c->schedule = 0;
	for (uint32_t part = first; part <= last && rc == 0; part++) {
		struct pn_scenario pct;
		bool bounded = part <= PN_SPLIT_PARTS;
		if (!bounded && !pn_split_pct_runs(search, part - PN_SPLIT_PARTS, &pct))
			continue;
		c->sc = bounded ? search : &pct;
		c->part_cap = bounded ? pn_split_part_cap(search) : 0;
		uint64_t ran = res->schedules_explored;
		part_scope(c);
		rc = run_search(c, part);
		if (!bounded) {
			res->pct_runs += res->schedules_explored - ran;
			res->pct_depth = PN_DEFAULT_PCT_DEPTH;
		}
	}
	c->sc = sc;
	c->part_cap = 0;
	res->schedules_default = res->schedules_explored - before;
	res->budget = search->schedules.budget;
	return rc;
}

/* A unit that is part u->lo of a split search or of the default exploration
 * (explore_split.h): as pn_check_scenario() runs it. */
static enum pn_unit_status check_part(const struct pn_scenario *sc,
				      const struct pn_check_options *opt, const struct pn_unit *u,
				      struct pn_unit_result *out)
{
	struct pn_run c;
	struct pn_scenario search;
	uint32_t part = (uint32_t)u->lo;
	bool defaults = u->defaults &&
			pn_split_default(sc, !opt->explore_default, false, NULL, &search);
	PN_ASSERT(u->lo <= (defaults ? 2 : 1) * PN_SPLIT_PARTS && u->hi == u->lo + 1);
	PN_ASSERT(defaults == u->defaults && (defaults ? part >= 1 : pn_split_search(sc)));
	checker_open(&c, sc, opt, &out->res);
	c.schedule = u->schedule;
	out->res.strategy = sc->schedules.strategy;
	out->res.preemption_bound = sc->schedules.preemption_bound;
	int rc = u->defaults ? run_default(&c, &search, part, part) : run_parts(&c, part, part);
	out->events = out->res.events;
	out->finished = true;
	out->end = UINT64_MAX;
	pn_span_cover(&(struct pn_run){.ur = out});
	checker_close(&c);
	out->res.error = rc == 2;
	out->res.interrupted = rc == 3;
	out->status = unit_status(rc, &out->res);
	return out->status;
}

int pn_check_scenario(const struct pn_scenario *sc, const struct pn_check_options *opt,
		      struct pn_check_result *res)
{
	struct pn_run c;
	checker_open(&c, sc, opt, res);
	bool search = opt->replay ? opt->replay_choices && opt->replay_choices[0]
				  : opt->choices || sc->schedules.strategy != PN_STRATEGY_SEEDED;
	struct pn_world_twin twin = {.perturb_at = opt->twice_perturb_at};
	c.twin = opt->twice && !opt->replay && !search ? &twin : NULL;
	res->strategy = sc->schedules.strategy;
	res->preemption_bound = sc->schedules.preemption_bound;
	int rc = 0;
	bool pct = sc->schedules.strategy == PN_STRATEGY_PCT;
	bool split = search && !opt->replay && !opt->choices && pn_split_search(sc);
	uint32_t first = opt->replay || opt->choices ? opt->replay_schedule : 0;
	uint32_t last = opt->replay || opt->choices ? first + 1 : pct ? 1 : sc->schedules.runs;
	for (c.schedule = first; c.schedule < last && rc == 0; c.schedule++) {
		/* V2: a seeded run's cache is its own (a unit rebuilds one run's, U2) */
		pn_cache_clear(&c.cache);
		if (search) {
			rc = split ? run_parts(&c, 0, PN_SPLIT_PARTS)
				   : run_search(&c, PN_SPLIT_WHOLE);
			continue;
		}
		rc = c.twin ? run_twice(&c) : run_schedule(&c);
		if (c.w)
			res->events = c.events_done + c.w->events;
		c.events_done = res->events;
		res->schedules_explored++;
		checker_free(&c);
		progress(&c);
	}
	struct pn_scenario defaults;
	if (rc == 0 &&
	    pn_split_default(sc, !opt->explore_default, opt->replay, opt->choices, &defaults))
		rc = run_default(&c, &defaults, 1, 2 * PN_SPLIT_PARTS);
	pn_world_twin_free(&twin);
	checker_close(&c);
	if (rc == 3) {
		res->interrupted = true;
		return 3;
	}
	if (rc == 2) {
		res->error = true;
		return 2;
	}
	res->ok = res->violation == res->expected_violation && !res->diverged;
	return res->ok ? 0 : 1;
}

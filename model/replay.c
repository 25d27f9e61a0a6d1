/*
 * replay.c: the replay of a trace (model layer; replay.h): the run to the crash point, the
 * state decoded and held to the scenario's crash model, its recovery judged, and the crash
 * inside recovery when the trace names one. Every refusal names the replay: key at fault.
 */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

/* The replay: keys as replay's refusals name them. */
static const char *const replay_key_names[PN_REPLAY_KEYS] = {
	[PN_REPLAY_CRASH_POINT] = "replay.crash_point",
	[PN_REPLAY_STATE] = "replay.state",
	[PN_REPLAY_RECOVERY_POINT] = "replay.recovery_crash_point",
	[PN_REPLAY_RECOVERY_STATE] = "replay.recovery_state",
	[PN_REPLAY_CHOICES] = "replay.choices",
};

void pn_replay_misfit(struct pn_run *c, enum pn_replay_key key)
{
	PN_ASSERT((unsigned)key < PN_REPLAY_KEYS);
	c->res->error = true;
	c->res->error_key = key;
}

/* Replay: the crash state `state` of dev, decoded and held to the scenario's crash model;
 * false with the reason in res->detail (key names the key, where names the point). */
static bool replay_fates(struct pn_run *c, const struct pn_device *dev, const char *state,
			 enum pn_replay_key key, const char *where, uint64_t point,
			 struct pn_write_fate *f)
{
	char why[256];
	struct pn_check_result *res = c->res;
	const char *what = replay_key_names[key];
	if (!pn_crash_fates_decode(dev, state, f, why, sizeof(why))) {
		snprintf(res->detail, sizeof(res->detail),
			 "%s '%s' does not name unsynced writes of %s %llu: %s", what, state, where,
			 (unsigned long long)point, why);
		pn_replay_misfit(c, key);
		return false;
	}
	if (!pn_crash_fates_allowed(dev, c->sc, f, why, sizeof(why))) {
		snprintf(res->detail, sizeof(res->detail),
			 "%s '%s' is not a state of the scenario's "
			 "crash model: %s",
			 what, state, why);
		pn_replay_misfit(c, key);
		return false;
	}
	return true;
}

/* Replay: steps w until it has run `point` events. False with the reason in res->detail when
 * it finishes or stalls first (key names the key, whose the run). A runtime invariant that
 * breaks on the way stops it early (true; the caller looks at pn_engine_failed). */
static bool replay_run_to(struct pn_run *c, struct pn_world *w, uint64_t point,
			  enum pn_replay_key key, const char *whose)
{
	struct pn_check_result *res = c->res;
	const char *what = replay_key_names[key];
	while (w->events < point) {
		int step = pn_world_step(w);
		if (step == PN_STEP_VIOLATION)
			return true;
		if (step == PN_STEP_EVENT && c->opt->replay_event && key == PN_REPLAY_CRASH_POINT)
			c->opt->replay_event(c->opt->replay_arg, w);
		if (step == PN_STEP_EVENT)
			continue;
		if (step == PN_STEP_STALL)
			snprintf(res->detail, sizeof(res->detail),
				 "%s %llu is never reached, %s "
				 "stalls first: %s",
				 what, (unsigned long long)point, whose, w->error);
		else
			snprintf(res->detail, sizeof(res->detail),
				 "%s %llu is past the end of %s, which ends after event %llu", what,
				 (unsigned long long)point, whose, (unsigned long long)w->events);
		pn_replay_misfit(c, key);
		return false;
	}
	return true;
}

/* The observers of a judged recovery r (its recovery status rc, its verdict v): what it
 * did, and when C2 compared the pages (recovery finished) the failing page's bytes. */
static void replay_observe(struct pn_run *c, const struct pn_world *r, int rc,
			   const struct pn_verdict *v, bool nested)
{
	const struct pn_check_options *opt = c->opt;
	if (opt->replay_recovery)
		opt->replay_recovery(opt->replay_arg, r, nested);
	if (opt->replay_page && rc == 0 &&
	    (v->kind == PN_VIOL_EXACTNESS || v->kind == PN_VIOL_CHECKSUM))
		opt->replay_page(opt->replay_arg, v->page, c->j.expected, c->j.found,
				 pn_engine_geometry(r->e).page_size);
}

/* Replay of a crash inside recovery, as run.c's nested() and nested_state() judge it: recover again up
 * to the recorded event, crash there in the recorded state, recover that, judge it (C1-C3)
 * against the first recovery's end. False (the reason in res->detail) when the trace does not
 * fit the recovery. */
static bool replay_nested(struct pn_run *c, const struct pn_write_fate *fates, pn_lsn first_end,
			  struct pn_verdict *v)
{
	const struct pn_check_options *opt = c->opt;
	struct pn_world *r = pn_judge_crashed(&c->j, &c->w->dev, fates, c->schedule, true);
	bool ok = pn_engine_recover(r->e) &&
		  replay_run_to(c, r, opt->replay_recovery_point, PN_REPLAY_RECOVERY_POINT,
				"the recovery") &&
		  !pn_engine_failed(r->e);
	if (!ok && !c->res->detail[0]) {
		snprintf(c->res->detail, sizeof(c->res->detail),
			 "the recovery fails before replay.recovery_crash_point %llu",
			 (unsigned long long)opt->replay_recovery_point);
		pn_replay_misfit(c, PN_REPLAY_RECOVERY_POINT);
	}
	struct pn_write_fate *f = calloc(r->dev.nunsynced + 1, sizeof(*f));
	PN_ASSERT(f != NULL);
	ok = ok && replay_fates(c, &r->dev, opt->replay_recovery_state, PN_REPLAY_RECOVERY_STATE,
				"recovery event", opt->replay_recovery_point, f);
	if (ok && opt->timeline) {
		fprintf(opt->timeline, "recovery, up to its crash:\n");
		pn_world_print_trace(r, opt->timeline);
	}
	if (ok && opt->replay_crash)
		opt->replay_crash(opt->replay_arg, r, f);
	if (ok) {
		int rc;
		struct pn_world *r2 = pn_judge_recover(&c->j, &r->dev, f, c->schedule, false, &rc);
		pn_judge_recovered(&c->j, r2, rc, first_end, v, false);
		replay_observe(c, r2, rc, v, true);
		pn_judge_world_free(r2);
		pn_judge_acks(&c->j, c->w->e, v);
		if (v->kind != PN_VIOL_NONE)
			pn_run_nested_found(c, opt->replay_recovery_point,
					    opt->replay_recovery_state);
	}
	pn_judge_world_free(r);
	free(f);
	return ok;
}

/* Replay of a scenario without crash: (no crash model): the run up to the point, which is
 * where a runtime invariant broke when the trace was written. */
static int replay_uncrashed(struct pn_run *c)
{
	const struct pn_check_options *opt = c->opt;
	struct pn_check_result *res = c->res;
	if (strcmp(opt->replay_state, "none") != 0 || opt->replay_recovery_point) {
		snprintf(
			res->detail, sizeof(res->detail),
			"replay.%s names a crash state, but the scenario has no crash: section, so no "
			"crash is simulated (a trace of it can only replay a runtime invariant)",
			opt->replay_recovery_point ? "recovery_crash_point" : "state");
		pn_replay_misfit(c, opt->replay_recovery_point ? PN_REPLAY_RECOVERY_POINT
							       : PN_REPLAY_STATE);
		return 2;
	}
	if (opt->timeline)
		pn_world_print_trace(c->w, opt->timeline);
	snprintf(res->detail, sizeof(res->detail),
		 "the run reached event %llu and no runtime invariant broke (the scenario has no "
		 "crash: section: nothing is crashed)",
		 (unsigned long long)c->w->events);
	return 0;
}

int pn_replay_point(struct pn_run *c)
{
	struct pn_check_result *res = c->res;
	const struct pn_check_options *opt = c->opt;
	if (!replay_run_to(c, c->w, opt->replay_point, PN_REPLAY_CRASH_POINT, "the run"))
		return 2;
	if (pn_engine_failed(c->w->e)) {
		const struct pn_violation *viol = pn_engine_violation_of(c->w->e);
		if (opt->timeline)
			pn_world_print_trace(c->w, opt->timeline);
		if (opt->replay_crash)
			opt->replay_crash(opt->replay_arg, c->w, NULL); /* no crash: no fates */
		snprintf(c->j.detail, sizeof(c->j.detail), "%s", viol->detail);
		pn_run_report(c, viol->kind, viol->page, c->w->events, false);
		return 1;
	}
	if (!c->sc->crash.present)
		return replay_uncrashed(c);
	struct pn_write_fate *f = calloc(c->w->dev.nunsynced + 1, sizeof(*f));
	PN_ASSERT(f != NULL);
	if (!replay_fates(c, &c->w->dev, opt->replay_state, PN_REPLAY_STATE, "crash point",
			  opt->replay_point, f)) {
		free(f);
		return 2;
	}
	if (opt->timeline)
		pn_world_print_trace(c->w, opt->timeline);
	if (opt->replay_crash)
		opt->replay_crash(opt->replay_arg, c->w, f);
	int rc;
	struct pn_world *r = pn_judge_recover(&c->j, &c->w->dev, f, c->schedule, false, &rc);
	struct pn_verdict v;
	pn_judge_recovered(&c->j, r, rc, UINT64_MAX, &v, false);
	replay_observe(c, r, rc, &v, false);
	pn_judge_world_free(r);
	/* as pn_run_point: the crash inside recovery only when the first recovery passed C1-C3 */
	pn_judge_acks(&c->j, c->w->e, &v);
	bool in_recovery = v.kind == PN_VIOL_NONE && opt->replay_recovery_point;
	if (in_recovery && !replay_nested(c, f, v.end, &v)) {
		free(f);
		res->error = true;
		return 2;
	}
	free(f);
	res->crash_points = res->crash_states = res->recoveries = 1;
	snprintf(res->state, sizeof(res->state), "%s", opt->replay_state);
	if (v.kind != PN_VIOL_NONE)
		pn_run_report(c, (enum pn_violation_kind)v.kind, v.page, opt->replay_point,
			      in_recovery);
	return v.kind != PN_VIOL_NONE;
}

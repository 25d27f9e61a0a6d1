/*
 * check_work.c: the work list of `penumbra check` (cli layer; check_work.h): which unit is
 * ready, what a worker runs, how a result is merged; a violation's trace (shrinking
 * included) is written here, in whichever process runs its unit.
 */
#include "check_work.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "explore_split.h"
#include "shrink.h"
#include "trace.h"

_Static_assert(PN_EXEC_DESC_BYTES == PN_UNIT_BYTES, "a unit's description is its pn_unit_encode()");

/* ---- checking one scenario ---- */
/* K6: the violation of the shrunk scenario becomes the one reported. */
static void adopt_shrunk(struct check_outcome *out, const struct pn_check_result *r)
{
	struct pn_check_result *res = &out->res;
	out->shrunk = true;
	out->found_point = res->crash_point;
	snprintf(out->found_state, sizeof(out->found_state), "%s",
		 res->state[0] ? res->state : "none");
	res->kind = r->kind;
	res->page = r->page;
	res->schedule = r->schedule;
	res->crash_point = r->crash_point;
	res->in_recovery = r->in_recovery;
	res->recovery_point = r->recovery_point;
	memcpy(res->recovery_state, r->recovery_state, sizeof(res->recovery_state));
	memcpy(res->state, r->state, sizeof(res->state));
	memcpy(res->choices, r->choices, sizeof(res->choices));
	memcpy(res->state_text, r->state_text, sizeof(res->state_text));
	memcpy(res->detail, r->detail, sizeof(res->detail));
	memcpy(res->timeline, r->timeline, sizeof(res->timeline));
}

/* A violation: shrink a copy of the scenario, write the (shrunk) trace. */
static void write_trace(struct check_item *it, const struct check_settings *a,
			const struct pn_check_options *o)
{
	struct check_outcome *out = &it->out;
	struct pn_scenario small;
	static struct pn_check_result r;
	char err[PN_ERROR_LEN] = "";
	r = out->res;
	if (!pn_scenario_copy(&it->sc, &small)) {
		snprintf(out->error, sizeof(out->error), "trace not written: out of memory");
		out->rc = PN_MAX(out->rc, 2);
		return;
	}
	if (!a->no_shrink) {
		struct pn_shrink_result sr;
		double t0 = pn_progress_clock_s();
		pn_shrink(&small, o, &r, &sr);
		out->shrink_seconds = pn_progress_clock_s() - t0;
		snprintf(out->res.shrunk, sizeof(out->res.shrunk), "%s", sr.summary);
		if (sr.accepted)
			adopt_shrunk(out, &r);
	}
	if (!pn_cli_trace_write(&small, &r, a->traces, out->res.trace_path,
				sizeof(out->res.trace_path), err, sizeof(err))) {
		snprintf(out->error, sizeof(out->error), "trace not written: %s",
			 err[0] ? err : out->res.trace_path);
		out->res.trace_path[0] = '\0';
		out->rc = PN_MAX(out->rc, 2);
	}
	pn_scenario_free(&small);
}

/* K8's test hook: the judged state whose fast verdict is made wrong (0: none). */
static uint64_t cross_fault(void)
{
	const char *env = getenv("PN_TEST_CROSS_FAULT");
	char *end = NULL;
	unsigned long long k = env ? strtoull(env, &end, 10) : 0;
	return env && *env && *end == '\0' ? (uint64_t)k : 0;
}

static struct pn_check_options options(const struct check_settings *a,
				       const struct pn_exec_ctx *ctx)
{
	return (struct pn_check_options){.progress = ctx->progress,
					 .progress_arg = ctx->progress_arg,
					 .stop = ctx->stop,
					 .nested_every = (uint32_t)a->nested,
					 .twice = a->twice,
					 .cross_check_every = a->cross_check,
					 .cross_check_fault = cross_fault(),
					 .derive = a->derive,
					 .explore_default = !a->seeded_only,
					 .list_states = a->list_states};
}

/* A whole scenario: pn_check_scenario(), then a violation's trace. */
static void check_whole(struct check_item *it, const struct check_settings *a,
			const struct pn_exec_ctx *ctx)
{
	struct pn_check_options o = options(a, ctx);
	struct check_outcome *out = &it->out;
	double t0 = pn_progress_clock_s();
	out->rc = pn_check_scenario(&it->sc, &o, &out->res);
	if (out->res.error)
		snprintf(out->error, sizeof(out->error), "%s", out->res.detail);
	else if (out->res.violation && out->rc != 3) {
		o.progress = NULL;
		o.twice = false;      /* shrinking re-checks variants: once each */
		o.list_states = NULL; /* the scenario's states alone, not its variants' */
		write_trace(it, a, &o);
	}
	out->res.seconds = pn_progress_clock_s() - t0; /* K6: shrinking included */
}

/* A violation found by the units: its trace, timed into the scenario's seconds (K6). */
static void check_trace(struct check_item *it, const struct check_settings *a,
			const struct pn_exec_ctx *ctx)
{
	struct pn_check_options o = options(a, ctx);
	double t0 = pn_progress_clock_s();
	o.progress = NULL;
	o.twice = false; /* shrinking re-checks variants: once each */
	write_trace(it, a, &o);
	it->out.res.seconds += pn_progress_clock_s() - t0; /* K6 */
}

/* ---- coverage markers, merged across workers ---- */
void pn_check_work_cov_init(struct check_run *r)
{
	struct pn_testcase_site *const *sites;
	r->ncov = pn_testcase_all(&sites);
	r->cov = calloc(r->ncov + 1, sizeof(*r->cov));
	PN_ASSERT(r->cov != NULL);
}

/* This process's hits into out (ncov pairs), the sites zeroed (the next unit starts at 0). */
static void cov_take_local(const struct check_run *r, uint8_t *out)
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites);
	PN_ASSERT(n == r->ncov);
	for (size_t i = 0; i < n; i++) {
		uint64_t tf[2] = {sites[i]->hits_true, sites[i]->hits_false};
		memcpy(out + i * sizeof(tf), tf, sizeof(tf));
		sites[i]->hits_true = sites[i]->hits_false = 0;
	}
}

/* ---- the list ---- */
void pn_check_work_mark_done(struct check_run *r, struct check_item *it)
{
	PN_ASSERT(!it->done);
	it->done = true;
	r->done++;
	if (r->whole) { /* else counted per unit, as each is done */
		r->states_done += it->out.res.crash_states;
		r->schedules_done += it->out.res.schedules_explored;
	}
}

/* An item whose plan is finished: its merged result; false when a violation still needs its
 * trace. */
static bool item_merged(struct check_run *r, struct check_item *it)
{
	struct check_outcome *out = &it->out;
	out->rc = pn_plan_result(it->plan, &out->res, r->cov, r->ncov);
	out->res.seconds = pn_progress_clock_s() - it->t0;
	if (out->res.error)
		snprintf(out->error, sizeof(out->error), "%s", out->res.detail);
	pn_plan_free(it->plan);
	it->plan = NULL;
	if (out->res.violation && out->rc != 3)
		return false;
	if (out->rc != 3)
		pn_check_work_mark_done(r, it);
	return true;
}

/* The next unit of item i, if one is ready: its whole scenario, its trace, or a unit of its
 * plan (made on first use). */
static bool item_next(struct check_run *r, uint32_t i, struct pn_exec_unit *u)
{
	struct check_item *it = &r->items[i];
	if (!it->loaded || it->done || it->tracing || it->whole_out)
		return false;
	if (r->whole) {
		it->whole_out = true;
		*u = (struct pn_exec_unit){.entry = i, .leader = true};
		return true;
	}
	if (!it->plan && it->out.res.violation) {
		it->tracing = true;
		*u = (struct pn_exec_unit){.entry = i, .leader = true};
		return true;
	}
	if (!it->plan) {
		/* the default exploration's parts (explore_split.h D1-D3) are units too */
		struct pn_scenario defaults;
		bool explore = pn_split_default(&it->sc, r->set.seeded_only, false, NULL,
						&defaults);
		it->plan = pn_plan_new(&it->sc, r->workers, r->set.unit_states,
				       (uint32_t)r->set.nested, r->set.twice,
				       explore ? &defaults : NULL);
		it->t0 = pn_progress_clock_s();
	}
	if (pn_plan_finished(it->plan))
		return !item_merged(r, it) && item_next(r, i, u); /* a violation: its trace */
	uint32_t id;
	struct pn_unit pu;
	if (!pn_plan_next(it->plan, &id, &pu))
		return false;
	*u = (struct pn_exec_unit){.entry = i, .id = id};
	pn_unit_encode(&pu, u->desc);
	return true;
}

static bool work_next(void *arg, struct pn_exec_unit *u)
{
	struct check_run *r = arg;
	for (size_t i = 0; i < r->n && !r->halted; i++)
		if (item_next(r, (uint32_t)i, u))
			return true;
	return false;
}

static uint8_t *work_run(void *arg, const struct pn_exec_unit *u, const struct pn_exec_ctx *ctx,
			 size_t *len)
{
	struct check_run *r = arg;
	struct check_item *it = &r->items[u->entry];
	if (!u->leader) {
		struct pn_check_options o = options(&r->set, ctx);
		struct pn_unit pu;
		struct pn_unit_result ur;
		pn_unit_decode(u->desc, &pu);
		pn_unit_check(&it->sc, &o, &pu, ctx->lookup, &ur);
		uint8_t *bytes = pn_unit_result_encode(&ur, len);
		pn_unit_result_free(&ur);
		return bytes;
	}
	if (r->whole)
		check_whole(it, &r->set, ctx);
	else
		check_trace(it, &r->set, ctx);
	*len = sizeof(it->out) + r->ncov * 2 * sizeof(uint64_t);
	uint8_t *bytes = malloc(*len);
	PN_ASSERT(bytes != NULL);
	memcpy(bytes, &it->out, sizeof(it->out));
	cov_take_local(r, bytes + sizeof(it->out));
	return bytes;
}

static bool work_done(void *arg, const struct pn_exec_unit *u, const uint8_t *bytes, size_t len,
		      char *why, size_t why_len)
{
	struct check_run *r = arg;
	struct check_item *it = &r->items[u->entry];
	if (!u->leader) {
		struct pn_unit_result res;
		if (!pn_unit_result_decode(bytes, len, &res, why, why_len))
			return false;
		r->states_done += res.res.crash_states;
		r->schedules_done += res.res.schedules_explored;
		it->units_done++;
		pn_plan_done(it->plan, u->id, &res);
		pn_unit_result_free(&res);
		return true;
	}
	size_t want = sizeof(it->out) + r->ncov * 2 * sizeof(uint64_t);
	if (len != want) {
		snprintf(why, why_len, "%zu bytes, not the %zu of an outcome", len, want);
		return false;
	}
	memmove(&it->out, bytes, sizeof(it->out));
	for (size_t i = 0; i < r->ncov; i++) {
		uint64_t tf[2];
		memcpy(tf, bytes + sizeof(it->out) + i * sizeof(tf), sizeof(tf));
		r->cov[i][0] += tf[0];
		r->cov[i][1] += tf[1];
	}
	it->tracing = it->whole_out = false;
	if (it->out.rc != 3)
		pn_check_work_mark_done(r, it);
	else if (r->whole)
		r->halted = true; /* interrupted, or a cross-check failed (K8): stop here */
	return true;
}

static void work_failed(void *arg, const struct pn_exec_unit *u, const char *why)
{
	struct check_run *r = arg;
	struct check_item *it = &r->items[u->entry];
	if (!u->leader) {
		pn_plan_failed(it->plan, u->id, why); /* U5 */
		return;
	}
	it->tracing = it->whole_out = false;
	it->out.rc = 2;
	it->out.res.error = true;
	snprintf(it->out.error, sizeof(it->out.error), "%s", why);
	pn_check_work_mark_done(r, it);
}

static bool work_cancelled(void *arg, uint32_t entry, uint32_t id)
{
	struct check_run *r = arg;
	const struct check_item *it = &r->items[entry];
	return !it->plan || pn_plan_cancelled(it->plan, id);
}

/* progress.h: the work done, in scenarios (each running one's units done of those its plan
 * made so far: the rest of a schedule is cut once its first unit is done, so the share is
 * an upper bound that falls as units are made), and the units done and made. */
static void progress_work(struct check_run *r)
{
	double work = (double)r->done;
	uint64_t made = 0, units_done = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct check_item *it = &r->items[i];
		units_done += it->units_done;
		if (!it->plan) {
			made += it->units_done;
		} else if (!it->done && pn_plan_units(it->plan) > 0) {
			made += pn_plan_units(it->plan);
			work += (double)it->units_done / (double)pn_plan_units(it->plan);
		}
	}
	r->prog.work = work;
	r->prog.parts_done = units_done;
	r->prog.parts_made = made;
}

static void work_tick(void *arg, uint64_t states_live, uint64_t schedules_live)
{
	struct check_run *r = arg;
	if (!r->whole)
		progress_work(r);
	bool finished = r->done != r->done_drawn; /* drawn at once when a scenario finished */
	r->ready(r);
	r->done_drawn = r->done;
	r->prog.schedules = r->schedules_done + schedules_live;
	pn_progress_update(&r->prog, r->done, r->states_done + states_live, finished);
}

static const char *work_name(void *arg, uint32_t entry)
{
	struct check_run *r = arg;
	return r->items[entry].name;
}

static void work_note(void *arg, const char *line)
{
	struct check_run *r = arg;
	pn_progress_clear(&r->prog);
	fprintf(stderr, "penumbra check: %s\n", line);
}

struct pn_exec_work pn_check_work(struct check_run *r)
{
	PN_ASSERT(r->ready != NULL && r->workers >= 1);
	return (struct pn_exec_work){.arg = r,
				     .next = work_next,
				     .run = work_run,
				     .done = work_done,
				     .failed = work_failed,
				     .cancelled = work_cancelled,
				     .tick = work_tick,
				     .name = work_name,
				     .note = work_note};
}

/*
 * check_json.c: one checked scenario as `check --json` writes it, and its verdict's words
 * (cli layer; check_json.h; the keys are docs/cli.md's).
 */
#include "check_json.h"

#include "cli.h"
#include "explore_split.h"

const char *pn_check_item_verdict(const struct check_item *it)
{
	return !it->loaded || it->out.res.error ? "error"
	       : it->out.res.violation          ? "violation"
						: "pass";
}

const char *pn_check_item_expected(const struct check_item *it)
{
	return !it->loaded ? NULL : it->out.res.expected_violation ? "violation" : "pass";
}

static json_t *violation_json(const struct check_outcome *out)
{
	const struct pn_check_result *r = &out->res;
	json_t *v = json_object();
	json_object_set_new(v, "kind", json_string(pn_violation_name(r->kind)));
	json_object_set_new(v, "page", pn_cli_page_json(r->page));
	json_object_set_new(v, "crash_point", json_integer((json_int_t)r->crash_point));
	json_object_set_new(v, "schedule", json_integer(r->schedule));
	json_object_set_new(v, "state", json_string(r->state[0] ? r->state : "none"));
	json_object_set_new(v, "choices", json_string(r->choices));
	json_object_set_new(v, "in_recovery", json_boolean(r->in_recovery));
	json_object_set_new(v, "recovery_crash_point",
			    r->in_recovery ? json_integer((json_int_t)r->recovery_point)
					   : json_null());
	json_object_set_new(v, "recovery_state",
			    r->in_recovery ? json_string(r->recovery_state) : json_null());
	json_object_set_new(v, "detail", json_string(r->detail));
	json_object_set_new(v, "trace",
			    r->trace_path[0] ? json_string(r->trace_path) : json_null());
	json_object_set_new(v, "shrunk", json_string(r->shrunk));
	if (out->shrunk) {
		json_t *f = json_object();
		json_object_set_new(f, "crash_point", json_integer((json_int_t)out->found_point));
		json_object_set_new(f, "state", json_string(out->found_state));
		json_object_set_new(v, "found", f);
	} else {
		json_object_set_new(v, "found", json_null());
	}
	json_object_set_new(v, "seconds_to_violation", json_real(r->seconds_to_violation));
	json_object_set_new(v, "shrink_seconds", json_real(out->shrink_seconds));
	return v;
}

json_t *pn_check_item_json(const struct check_item *it)
{
	const struct pn_check_result *r = &it->out.res;
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(it->name));
	json_object_set_new(o, "file", json_string(it->path));
	json_object_set_new(o, "mode", it->loaded ? json_string(it->mode) : json_null());
	json_object_set_new(o, "verdict", json_string(pn_check_item_verdict(it)));
	json_object_set_new(o, "expected",
			    pn_check_item_expected(it) ? json_string(pn_check_item_expected(it))
						       : json_null());
	json_object_set_new(o, "ok", json_boolean(r->ok && !it->out.error[0]));
	json_object_set_new(o, "crash_points", json_integer((json_int_t)r->crash_points));
	json_object_set_new(o, "crash_states", json_integer((json_int_t)r->crash_states));
	json_object_set_new(o, "recoveries", json_integer((json_int_t)r->recoveries));
	json_object_set_new(o, "derived", json_integer((json_int_t)r->derived));
	json_object_set_new(o, "events", json_integer((json_int_t)r->events));
	json_object_set_new(o, "strategy", json_string(pn_strategy_name(r->strategy)));
	json_object_set_new(o, "preemption_bound", json_integer(r->preemption_bound));
	json_object_set_new(o, "schedules_explored",
			    json_integer((json_int_t)r->schedules_explored));
	json_object_set_new(o, "schedules_pruned", json_integer((json_int_t)r->schedules_pruned));
	json_object_set_new(o, "distinct_states", json_integer((json_int_t)r->distinct_states));
	json_object_set_new(o, "seconds", json_real(r->seconds));
	if (r->diverged)
		json_object_set_new(o, "divergence", json_string(r->divergence));
	if (r->capped_points)
		json_object_set_new(o, "capped_points", json_integer((json_int_t)r->capped_points));
	if (r->search_sampled)
		json_object_set_new(o, "search_sampled_points",
				    json_integer((json_int_t)r->search_sampled));
	if (r->budget) { /* the default exploration ran (docs/checker.md section 13) */
		json_object_set_new(o, "schedules_default",
				    json_integer((json_int_t)r->schedules_default));
		json_object_set_new(o, "budget", json_integer(r->budget));
		json_object_set_new(o, "bound_reached", json_boolean(!r->budget_cut));
		json_object_set_new(o, "pct_runs", json_integer((json_int_t)r->pct_runs));
		json_object_set_new(o, "pct_depth", json_integer(r->pct_depth));
		json_object_set_new(o, "pct_events", json_integer((json_int_t)r->pct_events));
		json_object_set_new(o, "pct_actors", json_integer(r->pct_actors));
		json_object_set_new(o, "pct_find_bound",
				    json_real(pn_split_pct_find(r->pct_depth, r->pct_actors,
								r->pct_events)));
		json_object_set_new(o, "pct_miss_bound",
				    json_real(pn_split_pct_miss(r->pct_runs, r->pct_depth,
								r->pct_actors, r->pct_events)));
	}
	json_object_set_new(o, "violation",
			    r->violation && !r->error ? violation_json(&it->out) : json_null());
	if (it->out.error[0])
		json_object_set_new(o, "error", json_string(it->out.error));
	return o;
}

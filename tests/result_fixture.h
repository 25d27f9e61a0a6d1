/*
 * result_fixture.h: one check result against another, field by field (but the timings): for
 * the suites that hold a faster or split path to the whole one (test_units, test_explore).
 */
#ifndef PN_RESULT_FIXTURE_H
#define PN_RESULT_FIXTURE_H

#include <check.h>

#include "checkio.h"

static inline void same_result(const struct pn_check_result *a, const struct pn_check_result *b)
{
	ck_assert_str_eq(a->name, b->name);
	ck_assert_uint_eq(a->crash_points, b->crash_points);
	ck_assert_uint_eq(a->crash_states, b->crash_states);
	ck_assert_uint_eq(a->recoveries, b->recoveries);
	ck_assert_uint_eq(a->events, b->events);
	ck_assert_int_eq(a->violation, b->violation);
	ck_assert_int_eq(a->ok, b->ok);
	ck_assert_int_eq(a->error, b->error);
	ck_assert_int_eq(a->kind, b->kind);
	ck_assert_uint_eq(a->page, b->page);
	ck_assert_uint_eq(a->schedule, b->schedule);
	ck_assert_uint_eq(a->crash_point, b->crash_point);
	ck_assert_int_eq(a->in_recovery, b->in_recovery);
	ck_assert_uint_eq(a->recovery_point, b->recovery_point);
	ck_assert_str_eq(a->recovery_state, b->recovery_state);
	ck_assert_str_eq(a->state, b->state);
	ck_assert_str_eq(a->state_text, b->state_text);
	ck_assert_str_eq(a->detail, b->detail);
	ck_assert_str_eq(a->timeline, b->timeline);
	ck_assert_uint_eq(a->schedules_explored, b->schedules_explored);
	ck_assert_uint_eq(a->schedules_pruned, b->schedules_pruned);
	ck_assert_uint_eq(a->distinct_states, b->distinct_states);
	ck_assert_uint_eq(a->points_met, b->points_met);
	ck_assert_uint_eq(a->derived, b->derived);
	ck_assert_str_eq(a->choices, b->choices);
	ck_assert_uint_eq(a->schedules_default, b->schedules_default);
	ck_assert_uint_eq(a->budget, b->budget);
	ck_assert_int_eq(a->budget_cut, b->budget_cut);
	ck_assert_uint_eq(a->pct_runs, b->pct_runs);
	ck_assert_uint_eq(a->pct_depth, b->pct_depth);
	ck_assert_uint_eq(a->pct_actors, b->pct_actors);
	ck_assert_uint_eq(a->pct_events, b->pct_events);
}

#endif

/*
 * test_units.c: the checker's work units (model/unit.h): cutting, the bytes of a result, and
 * plans whose units run in this process in scrambled orders and through their bytes, merged
 * into exactly what pn_check_scenario() gives (counts, events, the violation and its texts,
 * the coverage hits); a violation in a middle unit; a unit that fails once, and twice; and
 * units with lookups (U6) against an owner's table in this process: honest, lying, silent.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "result_fixture.h"
#include "explore_split.h"
#include "load.h"
#include "unit.h"

static void load(const char *rel, struct pn_scenario *sc)
{
	char path[4096], err[PN_ERROR_LEN] = "";
	ck_assert_msg(getenv("PN_SOURCE_DIR") != NULL, "PN_SOURCE_DIR is not set");
	snprintf(path, sizeof(path), "%s/%s", getenv("PN_SOURCE_DIR"), rel);
	ck_assert_msg(pn_scenario_load(path, sc, err, sizeof(err)), "%s", err);
}

static size_t cov_sites(void)
{
	struct pn_testcase_site *const *sites;
	return pn_testcase_all(&sites);
}

static void cov_read(uint64_t (*out)[2])
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites);
	for (size_t i = 0; i < n; i++) {
		out[i][0] = sites[i]->hits_true;
		out[i][1] = sites[i]->hits_false;
		sites[i]->hits_true = sites[i]->hits_false = 0;
	}
}

/* U6: one owner for every key, in this process. lie: answers one byte short of the truth;
 * deaf: knows nothing. The sums of the units' U6 counts, through their bytes. */
struct owner {
	struct pn_unit_table *t;
	bool lie, deaf, wrong;
	uint64_t relearned, lookups, hits, reruns, units_asking;
};

static void owner_publish(void *arg, uint32_t schedule, const struct pn_unit_key *k, uint32_t n)
{
	struct owner *o = arg;
	for (uint32_t i = 0; i < n; i++)
		pn_unit_table_put(o->t, 7, schedule, k[i].key, k[i].lsn);
}

static void owner_ask(void *arg, uint32_t schedule, const struct pn_unit_key *k, uint32_t n,
		      uint64_t *ends)
{
	struct owner *o = arg;
	for (uint32_t i = 0; i < n; i++) {
		ends[i] = o->deaf ? PN_UNIT_UNKNOWN
				  : pn_unit_table_get(o->t, 7, schedule, k[i].key);
		if (o->lie && ends[i] != PN_UNIT_UNKNOWN && ends[i] > 0)
			ends[i]--;
	}
}

static struct pn_unit_lookup *lookup; /* run_unit's, when set */
static struct owner *owner;

/* A unit through its bytes, as a child process sends it. */
static void run_unit(const struct pn_scenario *sc, const struct pn_check_options *o,
		     const struct pn_unit *u, struct pn_unit_result *out)
{
	uint8_t ub[PN_UNIT_BYTES];
	struct pn_unit back;
	struct pn_unit_result r;
	char why[256];
	size_t len;
	pn_unit_encode(u, ub);
	pn_unit_decode(ub, &back);
	ck_assert(back.schedule == u->schedule && back.whole == u->whole &&
		  back.search == u->search && back.lo == u->lo && back.hi == u->hi &&
		  back.budget == u->budget && back.fresh_base == u->fresh_base &&
		  back.fresh_lo == u->fresh_lo);
	ck_assert(!back.lookups);
	pn_unit_check(sc, o, &back, lookup, &r);
	uint8_t *bytes = pn_unit_result_encode(&r, &len);
	ck_assert_msg(pn_unit_result_decode(bytes, len, out, why, sizeof(why)), "%s", why);
	ck_assert_uint_eq(out->relearned, r.relearned);
	ck_assert_uint_eq(out->reruns, r.reruns);
	if (owner) {
		owner->relearned += out->relearned;
		owner->lookups += out->lookups;
		owner->hits += out->hits;
		owner->reruns += out->reruns;
		owner->units_asking += out->lookups > 0;
	}
	/* cut short, or one byte more: refused */
	struct pn_unit_result bad;
	ck_assert(!pn_unit_result_decode(bytes, len - 1, &bad, why, sizeof(why)));
	bytes = realloc(bytes, len + 1);
	ck_assert(!pn_unit_result_decode(bytes, len + 1, &bad, why, sizeof(why)));
	free(bytes);
	ck_assert_uint_eq(out->res.crash_states, r.res.crash_states);
	ck_assert_str_eq(out->res.timeline, r.res.timeline);
	pn_unit_result_free(&r);
}

/*
 * Runs sc's plan to the end: units taken `hold` at a time and finished newest first (so that
 * later units finish before earlier ones); fail_first: the first unit handed out fails once.
 */
static int run_plan(const struct pn_scenario *sc, const struct pn_check_options *opt,
		    uint64_t unit_states, int hold, bool fail_first, struct pn_check_result *res,
		    uint64_t (*cov)[2], uint32_t *units)
{
	struct pn_check_options o = *opt;
	struct pn_scenario search;
	bool explore = pn_split_default(sc, !o.explore_default, false, NULL, &search);
	struct pn_plan *p = pn_plan_new(sc, 3, unit_states, o.nested_every, false,
					explore ? &search : NULL);
	uint32_t ids[8];
	struct pn_unit us[8];
	bool failed = !fail_first;
	while (!pn_plan_finished(p)) {
		int k = 0;
		while (k < hold && pn_plan_next(p, &ids[k], &us[k]))
			k++;
		ck_assert_msg(k > 0, "a plan that is not finished has no unit ready");
		for (int i = k - 1; i >= 0; i--) {
			if (!failed) {
				failed = true;
				pn_plan_failed(p, ids[i], "test: the process died");
				continue;
			}
			if (pn_plan_cancelled(p, ids[i])) {
				pn_plan_failed(p, ids[i],
					       "cancelled"); /* never merged either way */
				continue;
			}
			struct pn_unit_result r;
			run_unit(sc, &o, &us[i], &r);
			pn_plan_done(p, ids[i], &r);
		}
	}
	*units = pn_plan_units(p);
	int rc = pn_plan_result(p, res, cov, cov_sites());
	pn_plan_free(p);
	return rc;
}

/* compare() visits every Nth crash point only (the lookup tests under the sanitizers, where
 * the whole scenario, checked seven times, took five minutes of CI): 1, every point. */
static uint64_t points_every = 1;

/* The scenario checked whole and as a plan of small units: the same result and coverage. */
static void compare(const char *rel, uint32_t nested, uint64_t unit_states, int hold,
		    bool fail_first, uint32_t min_units, bool explore_default)
{
	struct pn_scenario sc;
	struct pn_check_result whole, split;
	struct pn_check_options o = {.nested_every = nested, .explore_default = explore_default};
	size_t n = cov_sites();
	uint64_t(*c1)[2] = calloc(n + 1, sizeof(*c1)), (*c2)[2] = calloc(n + 1, sizeof(*c2));
	uint32_t units;
	load(rel, &sc);
	if (points_every > 1 && sc.crash.points == PN_POINTS_ALL) {
		sc.crash.points = PN_POINTS_EVERY;
		sc.crash.every = points_every;
	}
	cov_read(c1); /* zero */
	int rc1 = pn_check_scenario(&sc, &o, &whole);
	cov_read(c1);
	int rc2 = run_plan(&sc, &o, unit_states, hold, fail_first, &split, c2, &units);
	ck_assert_int_eq(rc1, rc2);
	same_result(&whole, &split);
	ck_assert_msg(units >= min_units, "%s: %u units, expected at least %u", rel, units,
		      min_units);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(c1[i][0] == c2[i][0] && c1[i][1] == c2[i][1],
			      "%s: coverage site %zu: %llu/%llu whole, %llu/%llu in units", rel, i,
			      (unsigned long long)c1[i][0], (unsigned long long)c1[i][1],
			      (unsigned long long)c2[i][0], (unsigned long long)c2[i][1]);
	free(c1);
	free(c2);
	pn_scenario_free(&sc);
}

START_TEST(cut_ranges)
{
	uint64_t los[8];
	/* no points: one range from the start */
	ck_assert_uint_eq(pn_unit_cut(NULL, 0, 17, 2, 100, los), 1);
	ck_assert_uint_eq(los[0], 17);
	struct pn_unit_point pts[5] = {{20, 16, 10},
				       {21, 16, 10},
				       {30, 0, 0},
				       {31, 160, 50},
				       {40, 16, 10}};
	/* costs 12, 12, 1, 61, 12 (total 98); unit_states 24 caps each range: a new range once
	 * one has reached 24 */
	uint32_t k = pn_unit_cut(pts, 5, 17, 1, 24, los);
	ck_assert_uint_eq(k, 3);
	ck_assert_uint_eq(los[0], 17);
	ck_assert_uint_eq(los[1], 30);
	ck_assert_uint_eq(los[2], 40);
	/* 1 job, large unit_states: target 98 / 4 = 24, the same cut */
	ck_assert_uint_eq(pn_unit_cut(pts, 5, 17, 1, 1000, los), 3);
	/* 8 jobs: target 98 / 32 = 3: a range of the points 30 (cost 1) and 31 */
	k = pn_unit_cut(pts, 5, 17, 8, 1000, los);
	ck_assert_uint_eq(k, 4);
	ck_assert_uint_eq(los[1], 21);
	ck_assert_uint_eq(los[2], 30);
	ck_assert_uint_eq(los[3], 40);
}
END_TEST

START_TEST(result_bytes_refused)
{
	struct pn_unit_result r = {.status = PN_UNIT_VIOLATION,
				   .end = 9,
				   .events = 12,
				   .finished = true};
	struct pn_unit_result back;
	char why[256];
	size_t len;
	snprintf(r.res.detail, sizeof(r.res.detail), "page 3 differs");
	uint8_t *b = pn_unit_result_encode(&r, &len);
	ck_assert(pn_unit_result_decode(b, len, &back, why, sizeof(why)));
	ck_assert_str_eq(back.res.detail, "page 3 differs");
	ck_assert_uint_eq(back.events, 12);
	pn_unit_result_free(&back);
	b[0] ^= 1; /* magic */
	ck_assert(!pn_unit_result_decode(b, len, &back, why, sizeof(why)));
	ck_assert(strstr(why, "magic") != NULL);
	b[0] ^= 1;
	for (size_t cut = 0; cut < len; cut += 7)
		ck_assert(!pn_unit_result_decode(b, cut, &back, why, sizeof(why)));
	free(b);
}
END_TEST

/* Scenarios checked whole and as plans of small units (compare()'s arguments). */
static const struct split_case {
	const char *file;
	uint32_t nested;
	uint64_t unit_states;
	int hold;
	bool fail_first;
	uint32_t min_units;
	bool explore_default; /* the default exploration (explore_split.h D1-D3) on */
} split_cases[] = {
	/* many schedules and points; states met again across points (28310 states, 2543
	 * distinct) */
	{"scenarios/protocols/nofpw-random-atomic.yaml", 0, 64, 3, false, 8},
	/* crashes inside recovery for every 4th distinct state: counted across units and
	 * schedules */
	{"scenarios/protocols/pushdown-random.yaml", 4, 256, 2, false, 6},
	/* a violation at crash point 55 of 112 events, in a middle unit: the units after it are
	 * cancelled or dropped, the counts stop where --jobs 1 stops */
	{"scenarios/mutants/no-delay-chkpt.yaml", 64, 8, 4, false, 4},
	{"scenarios/mutants/pushdown-horizon-early.yaml", 0, 8, 4, false, 4},
	/* a violation in schedule 3 of 4; the first unit fails once and is run again (U5) */
	{"scenarios/mutants/pushdown-ingest-unflushed.yaml", 64, 128, 3, true, 4},
	/* bounded searches cut into their parts (model/explore_split.h): 17 units each, a pass
	 * with crashes inside recovery per part, and a violation a part past the seeded schedule
	 * finds (the parts after it cancelled), its first unit failing once */
	{"tests/split/split-pass.yaml", 16, 64, 3, false, 1 + PN_SPLIT_PARTS},
	{"tests/split/split-violation.yaml", 0, 64, 4, true, 1 + PN_SPLIT_PARTS},
	/* the default exploration's parts as units after the seeded schedules' (D3): a pass
	 * with crashes inside recovery, and a violation found by a part of the default */
	{"tests/split/default-pass.yaml", 16, 64, 3, false, 2 + PN_SPLIT_PARTS, true},
	{"tests/split/default-violation.yaml", 0, 64, 4, true, 2 + PN_SPLIT_PARTS, true},
};

START_TEST(split_matches_whole)
{
	const struct split_case *k = &split_cases[_i];
	compare(k->file, k->nested, k->unit_states, k->hold, k->fail_first, k->min_units,
		k->explore_default);
}
END_TEST

/* A unit that fails twice: the scenario's error, not a partial result. */
START_TEST(unit_failing_twice_is_an_error)
{
	struct pn_scenario sc;
	struct pn_check_result res;
	uint32_t id;
	struct pn_unit u;
	load("scenarios/mutants/no-delay-chkpt-control.yaml", &sc);
	struct pn_plan *p = pn_plan_new(&sc, 2, 8, 0, false, NULL);
	for (int i = 0; i < 2; i++) {
		ck_assert(pn_plan_next(p, &id, &u));
		ck_assert_uint_eq(id, 0);
		pn_plan_failed(p, id, "killed by signal 9");
	}
	ck_assert(pn_plan_finished(p));
	ck_assert_int_eq(pn_plan_result(p, &res, NULL, 0), 2);
	ck_assert(res.error);
	ck_assert_msg(strstr(res.detail, "failed 2 times: killed by signal 9") != NULL, "%s",
		      res.detail);
	ck_assert_uint_eq(res.crash_states, 0);
	pn_plan_free(p);
	pn_scenario_free(&sc);
}
END_TEST

/* U6: the plan of `file` whose units look their relearned states up (units taken one at a
 * time, in order, so that the earlier ones have published): exactly the whole result. */
static void compare_lookups(const char *file, uint64_t unit_states, struct owner *o, bool verify)
{
	struct pn_unit_lookup lk = {.arg = o,
				    .publish = owner_publish,
				    .ask = owner_ask,
				    .verify = verify};
	o->t = pn_unit_table_new();
	lookup = &lk;
	owner = o;
	compare(file, 0, unit_states, 1, false, 4, false);
	lookup = NULL;
	owner = NULL;
	o->wrong = lk.wrong;
	pn_unit_table_free(o->t);
}

/* Honest answers: every relearned state of a plan without lookups is asked for and answered,
 * none is relearned, no unit runs again; the result is the whole one (compare()). */
START_TEST(lookups_answered)
{
	const char *f = "scenarios/protocols/nofpw-random-atomic.yaml";
	struct owner plain = {0}, asked = {0};
	owner = &plain;
	compare(f, 0, 64, 1, false, 8, false);
	owner = NULL;
	compare_lookups(f, 64, &asked, false);
	ck_assert_msg(plain.relearned > 100, "%llu relearned", (unsigned long long)plain.relearned);
	ck_assert_uint_eq(asked.lookups, plain.relearned);
	ck_assert_uint_eq(asked.hits, asked.lookups);
	ck_assert_uint_eq(asked.relearned, 0);
	ck_assert_uint_eq(asked.reruns, 0);
}
END_TEST

/* No answers: each unit that asked runs again without lookups, with the whole result. */
START_TEST(lookups_unanswered_run_again)
{
	struct owner o = {.deaf = true};
	compare_lookups("scenarios/protocols/nofpw-random-atomic.yaml", 64, &o, false);
	ck_assert(o.lookups > 100 && o.hits == 0);
	ck_assert_uint_eq(o.reruns, o.units_asking);
	ck_assert_uint_eq(o.relearned, o.lookups);
}
END_TEST

/* Answers short of the truth: a unit whose answer falls below an end C1 needs runs again;
 * verify finds the lie; the result is the whole one either way. */
START_TEST(lookups_lying_caught)
{
#ifdef PN_TEST_SANITIZED
	points_every = 4; /* at every 16th point no lying answer reaches a verified unit */
#endif
	struct owner o = {.lie = true}, v = {.lie = true};
	compare_lookups("scenarios/protocols/nofpw-random-atomic.yaml", 64, &o, false);
	ck_assert(o.hits == o.lookups && o.reruns > 0);
	ck_assert(!o.wrong);
	compare_lookups("scenarios/protocols/nofpw-random-atomic.yaml", 64, &v, true);
	ck_assert(v.wrong);
}
END_TEST

/* The lookup cases' fixture: under the sanitizers every sixteenth crash point (their three
 * cases took 513 s of CI's ASan run at every fourth; the sanitizers look for memory faults,
 * which the same code paths show at any stride, and the Debug run visits every point), still
 * hundreds of states relearned without lookups against the 100 lookups_answered asks for;
 * lookups_lying_caught keeps every fourth (at every sixteenth its verify met no lie);
 * elsewhere all of them. */
static void lookups_setup(void)
{
#ifdef PN_TEST_SANITIZED
	points_every = 16;
#endif
}

static void lookups_teardown(void) { points_every = 1; }

static Suite *units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("units");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, cut_ranges);
	tcase_add_test(tc, result_bytes_refused);
	tcase_add_loop_test(tc, split_matches_whole, 0,
			    (int)(sizeof(split_cases) / sizeof(split_cases[0])));
	tcase_add_test(tc, unit_failing_twice_is_an_error);
	suite_add_tcase(s, tc);
	/* its own case, so that CTest runs it as test_units_lookups beside the rest */
	TCase *lk = tcase_create("lookups");
	tcase_set_timeout(lk, 300);
	tcase_add_checked_fixture(lk, lookups_setup, lookups_teardown);
	tcase_add_test(lk, lookups_answered);
	tcase_add_test(lk, lookups_unanswered_run_again);
	tcase_add_test(lk, lookups_lying_caught);
	suite_add_tcase(s, lk);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(units_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

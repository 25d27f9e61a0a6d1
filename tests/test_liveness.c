/*
 * test_liveness.c: Check suite (label unit): every mode runs every scenario to its end.
 * A run that stops with work left and nothing scheduled is a stall (sim/world.c); under
 * pushdown, 9 of the 12 scenarios/protocols/ files stalled once every commit was done, because
 * the page server slept while WAL flushed after it (the checkpointer's record) was still to
 * be ingested (src/pushdown.c, pn_ps_rearm). The class: a process that sleeps on a condition
 * another process changes. These tests run each mode (and each Umbra policy) over
 *
 *   protocols   every .yaml file of scenarios/protocols/ (PN_SOURCE_DIR, set by CTest);
 *   seeds       a small random workload with checkpoints every few transactions, over many
 *               seeds (a checkpoint then often ends the run after the last commit);
 *
 * and assert that each run finishes (status 0) with every transaction committed: no stall,
 * no violation unless the scenario expects a counterexample, and no refusal except l3/l4's
 * of what they do not model (pn_umbra_unsupported).
 */
#include "world.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEEDS 24

struct mode {
	enum pn_mode mode;
	int policy; /* -1: the scenario's */
	const char *label;
};

/* Every mode, and Umbra under each of its policies. */
static const struct mode modes[] = {
	{PN_MODE_FPW, -1, "fpw"},
	{PN_MODE_NOFPW, -1, "nofpw"},
	{PN_MODE_UMBRA, PN_POLICY_PROTOTYPE, "umbra-prototype"},
	{PN_MODE_UMBRA, PN_POLICY_L3, "umbra-l3"},
	{PN_MODE_UMBRA, PN_POLICY_L4, "umbra-l4"},
	{PN_MODE_DOUBLEWRITE, -1, "doublewrite"},
	{PN_MODE_PUSHDOWN, -1, "pushdown"},
};

/* Runs sc under mode m; fails the test with what stopped it unless it ran to its end, or
 * (a scenario that expects a counterexample) stopped on a protocol violation. */
static void run_to_end(const struct pn_scenario *base, const struct mode *m, const char *what)
{
	struct pn_scenario sc = *base;
	struct pn_sim_result *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	sc.protocol.mode = m->mode;
	if (m->policy >= 0)
		sc.protocol.policy = (enum pn_policy)m->policy;
	int status = pn_sim_run(&sc, r);
	bool violation = status == 1 && r->viol.kind != PN_VIOL_NONE;
	/* l3/l4 place slots themselves and refuse, before time starts, what they cannot do
	 * (a striped layout, some script steps); nothing else may refuse a scenario */
	bool refused = status == 2 && r->events == 0 && m->policy >= PN_POLICY_L3;
	if (refused) {
		free(r);
		return;
	}
	ck_assert_msg(status == 0 || (violation && sc.expect.violation),
		      "%s under %s (seed %llu): status %d after %llu events: %s%s%s", what,
		      m->label, (unsigned long long)sc.seed, status, (unsigned long long)r->events,
		      violation ? "" : r->error, violation ? "violation: " : "",
		      violation ? r->viol.detail : "");
	if (status == 0 && sc.workload.kind != PN_WL_SCRIPT) /* every transaction committed */
		ck_assert_uint_eq(r->m.commits, sc.workload.transactions);
	free(r);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(test_every_mode_every_protocol_scenario)
{
	const char *src = getenv("PN_SOURCE_DIR");
	ck_assert_msg(src != NULL, "PN_SOURCE_DIR is not set (run through ctest)");
	char dir[1024], path[2048], err[PN_ERROR_LEN];
	snprintf(dir, sizeof(dir), "%s/scenarios/protocols", src);
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	char *names[256];
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d)) != NULL && n < PN_ARRAY_LEN(names);) {
		size_t len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	ck_assert_uint_ge(n, 12); /* the suite's own scenarios are all there */
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct pn_scenario sc;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ck_assert_msg(pn_scenario_load(path, &sc, err, sizeof(err)), "%s", err);
		for (size_t k = 0; k < PN_ARRAY_LEN(modes); k++)
			run_to_end(&sc, &modes[k], names[i]);
		pn_scenario_free(&sc);
		free(names[i]);
	}
}
END_TEST

static const char random_yaml[] =
	"name: liveness-random\n"
	"seed: 1\n"
	"storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}\n"
	"protocol: {mode: fpw, checksums: true}\n"
	"checkpoint: {interval: 0s, every_transactions: 3, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 3, transactions: 10, pages_per_transaction: 2}\n";

START_TEST(test_every_mode_random_seeds)
{
	char err[PN_ERROR_LEN];
	struct pn_scenario sc;
	ck_assert_msg(pn_scenario_load_string("liveness.yaml", random_yaml, strlen(random_yaml),
					      &sc, err, sizeof(err)), "%s", err);
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		sc.seed = seed;
		for (size_t k = 0; k < PN_ARRAY_LEN(modes); k++)
			run_to_end(&sc, &modes[k], "liveness-random");
	}
	pn_scenario_free(&sc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("liveness");
	TCase *tc = tcase_create("liveness");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_every_mode_every_protocol_scenario);
	tcase_add_test(tc, test_every_mode_random_seeds);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

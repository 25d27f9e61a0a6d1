/*
 * test_cli_runs.c: Check suite for the command line (cli/; label unit), its runs half: run's
 * table and the pg_waldump-shaped breakdown, JSON keys, order and byte-identical output
 * across runs, the seed and mode overrides, compare's one result per mode, check's torn
 * writes and search samples. The usage half is test_cli.c; what both share: cli_fixture.h.
 */
#include "cli_fixture.h"

static json_int_t scenario_count(const char *path, const char *key)
{
	json_t *root = load_json_file(path);
	json_t *sc = json_array_get(json_object_get(root, "scenarios"), 0);
	ck_assert_ptr_nonnull(sc);
	ck_assert_ptr_null(json_object_get(sc, "capped_points")); /* present only when cut */
	json_int_t v = json_integer_value(json_object_get(sc, key));
	json_decref(root);
	return v;
}

/* A mutant's check (src, its trace written to `trace` under traces) without `option` writes
 * no `key` to the trace; with `option value` the trace ends its crash section with
 * `key: value` and replays without the option. */
static void trace_keeps(const char *src, const char *traces, const char *trace, const char *option,
			const char *value, const char *key)
{
	char want[64];
	ck_assert_int_eq(cli("check", src, "--quiet", "--traces", traces, NULL), 0);
	slurp(trace, cap.err, sizeof cap.err);
	ck_assert_ptr_null(strstr(cap.err, key));
	ck_assert_int_eq(cli("check", src, "--quiet", option, value, "--traces", traces, NULL), 0);
	ck_assert_msg(strstr(cap.out, "check: 1 passed, 0 failed") != NULL, "%s", cap.out);
	slurp(trace, cap.err, sizeof cap.err);
	snprintf(want, sizeof want, "%s: %s}", key, value);
	ck_assert_msg(strstr(cap.err, want) != NULL, "trace: %s", cap.err);
	ck_assert_int_eq(cli("replay", trace, NULL), 1);
	ck_assert_msg(strstr(cap.out, "the violation reproduces") != NULL, "replay: %s", cap.out);
}

/* The torn scenario checked without `option` and with `option value` (--nested 0), into
 * tag0.json and tag1.json (j0, j1): the option's check judges more states. */
static void torn_both_ways(const char *option, const char *value, const char *tag, char *j0,
			   char *j1, size_t len)
{
	char name[64];
	snprintf(name, sizeof name, "%s0.json", tag);
	tmp_path(j0, len, name);
	snprintf(name, sizeof name, "%s1.json", tag);
	tmp_path(j1, len, name);
	ck_assert_int_eq(cli("check", torn, "--nested", "0", "--json", j0, NULL), 0);
	ck_assert_int_eq(cli("check", torn, "--nested", "0", option, value, "--json", j1, NULL), 0);
	ck_assert_int_gt(scenario_count(j1, "crash_states"), scenario_count(j0, "crash_states"));
}

/* --torn-writes 2: more states, the same verdicts; a mutant's trace keeps the key and
 * replays without the option; a check without it writes no key. */
START_TEST(test_torn_writes_check)
{
	char j0[320], j1[320], traces[320], trace[400], src[512];
	const char *root = getenv("PN_SOURCE_DIR");

	ck_assert_msg(root != NULL, "PN_SOURCE_DIR is not set");
	torn_both_ways("--torn-writes", "2", "tw", j0, j1, sizeof j0);
	ck_assert_int_gt(scenario_count(j1, "recoveries"), scenario_count(j0, "recoveries"));
	tmp_path(traces, sizeof traces, "traces-tw");
	snprintf(src, sizeof src, "%s/scenarios/mutants/fpw-off.yaml", root);
	snprintf(trace, sizeof trace, "%s/fpw-off.trace.yaml", traces);
	trace_keeps(src, traces, trace, "--torn-writes", "2", "torn_writes");
}
END_TEST

/* --search-samples: a search (the default exploration of a torn scenario) judges more states
 * drawing 1,000 past each preemption than none, over the same schedules; a search's trace
 * keeps the value and replays without the option; a check without it writes no key. */
START_TEST(test_search_samples_check)
{
	char j0[320], j1[320], traces[320], trace[400], src[512];
	const char *root = getenv("PN_SOURCE_DIR");

	ck_assert_msg(root != NULL, "PN_SOURCE_DIR is not set");
	torn_both_ways("--search-samples", "1000", "ss", j0, j1, sizeof j0);
	ck_assert_int_gt(scenario_count(j0, "search_sampled_points"), 0); /* they drew none */
	ck_assert_int_eq(scenario_count(j1, "search_sampled_points"), 0); /* absent: as many */
	ck_assert_int_eq(scenario_count(j1, "schedules_explored"),
			 scenario_count(j0, "schedules_explored"));
	tmp_path(traces, sizeof traces, "traces-ss");
	snprintf(src, sizeof src, "%s/scenarios/interleavings/aio-late-bind-bounded.yaml", root);
	snprintf(trace, sizeof trace, "%s/aio-late-bind-bounded.trace.yaml", traces);
	trace_keeps(src, traces, trace, "--search-samples", "5", "search_samples");
}
END_TEST

START_TEST(test_run_table)
{
	ck_assert_int_eq(cli("run", scenario, NULL), 0);
	ck_assert_str_eq(cap.err, "");
	ck_assert(strncmp(cap.out, "scenario ", 9) == 0);
	ck_assert(strstr(cap.out, "\nmode ") && strstr(cap.out, " fpw\n"));
	ck_assert(strstr(cap.out, "\nWAL bytes/transaction "));
	ck_assert(strstr(cap.out, "\nwrite amplification "));
	ck_assert(strstr(cap.out, "\ncommit latency p99 (µs) "));
	ck_assert(strstr(cap.out, "\nType                                           N      (%)"));
	ck_assert(strstr(cap.out, "\nHeap/HOT_UPDATE "));
	ck_assert(strstr(cap.out, "\nTransaction/COMMIT "));
	ck_assert(!strstr(cap.out, "Btree/DEDUP")); /* N == 0: not shown */
	ck_assert(strstr(cap.out, "\nTotal "));
	ck_assert(!strstr(cap.out, "WAL vs"));
}
END_TEST

/* The keys of a result, in order: product.md's, then the ones the brief added. */
static const char *const result_keys[] = {
	"scenario",
	"mode",
	"transactions",
	"commits",
	"wal_bytes",
	"wal_records",
	"fpi_count",
	"fpi_bytes",
	"data_bytes_written",
	"fsyncs",
	"checkpoints",
	"space_amplification",
	"elapsed_seconds",
	"wal_bytes_per_transaction",
	"shifts",
	"dw_bytes_written",
	"write_amplification",
	"read_runs",
	"commit_latency_us_p50",
	"commit_latency_us_p99",
	"checkpoints_by_cause",
	"records",
	"transaction_types",
	"violation",
};

static void assert_key_order(json_t *result)
{
	void *it = json_object_iter(result);

	for (size_t i = 0; i < PN_ARRAY_LEN(result_keys); i++) {
		ck_assert_msg(it != NULL, "result ends before '%s'", result_keys[i]);
		ck_assert_str_eq(json_object_iter_key(it), result_keys[i]);
		it = json_object_iter_next(result, it);
	}
}

START_TEST(test_json_provenance)
{
	char a[320];
	tmp_path(a, sizeof a, "p.json");
	ck_assert_int_eq(cli("run", scenario, "--json", a, "--seed", "4", NULL), 0);
	const char *const run[] = {"run", scenario, "--json", a, "--seed", "4"};
	assert_provenance(a, run, PN_ARRAY_LEN(run));
	ck_assert_int_eq(cli("compare", "--json", a, scenario, "--modes", "fpw,umbra", NULL), 0);
	const char *const compare[] = {"compare", "--json", a, scenario, "--modes", "fpw,umbra"};
	assert_provenance(a, compare, PN_ARRAY_LEN(compare));
}
END_TEST

START_TEST(test_json_deterministic)
{
	char a[320], b[320], text_a[OUT_LEN], text_b[OUT_LEN];
	json_t *root, *r;

	tmp_path(a, sizeof a, "a.json");
	tmp_path(b, sizeof b, "b.json");
	ck_assert_int_eq(cli("run", scenario, "--json", a, NULL), 0);
	ck_assert_int_eq(cli("run", "--json", b, scenario, NULL), 0); /* options first */
	/* the same but for the provenance, which names each command line */
	without_provenance(a, text_a, sizeof text_a);
	without_provenance(b, text_b, sizeof text_b);
	ck_assert(strlen(text_a) > 100);
	ck_assert_str_eq(text_a, text_b);

	root = load_json_file(a);
	r = json_array_get(results_of(root, 1), 0);
	assert_key_order(r);
	ck_assert_str_eq(json_string_value(json_object_get(r, "scenario")), "t");
	ck_assert_str_eq(json_string_value(json_object_get(r, "mode")), "fpw");
	ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "ok");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "seed")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "transactions")), 200);
	ck_assert(json_is_null(json_object_get(r, "violation")));
	ck_assert(
		json_is_object(json_object_get(json_object_get(r, "records"), "Heap/HOT_UPDATE")));
	json_decref(root);
}
END_TEST

START_TEST(test_json_stdout)
{
	json_error_t error;
	json_t *root;

	ck_assert_int_eq(cli("run", scenario, "--json", "-", NULL), 0);
	root = json_loads(cap.out, 0, &error);
	ck_assert_msg(root != NULL, "stdout is not JSON: %s", error.text);
	results_of(root, 1);
	json_decref(root);
	ck_assert(strstr(cap.err, "\nWAL bytes ")); /* the table went to stderr */
}
END_TEST

START_TEST(test_overrides)
{
	char path[320];
	json_t *root, *r;

	tmp_path(path, sizeof path, "o.json");
	ck_assert_int_eq(cli("run", "--seed", "9", scenario, "--mode", "umbra", "--json", path,
			     NULL),
			 0);
	root = load_json_file(path);
	r = json_array_get(results_of(root, 1), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "seed")), 9);
	ck_assert_str_eq(json_string_value(json_object_get(r, "mode")), "umbra");
	json_decref(root);
}
END_TEST

START_TEST(test_run_violation)
{
	char path[320];
	json_t *root, *viol;

	tmp_path(path, sizeof path, "v.json");
	ck_assert_int_eq(cli("run", mutated, "--json", path, NULL), 1);
	ck_assert_msg(strncmp(cap.err, "violation: wal_before_data page ", 32) == 0, "%s", cap.err);
	ck_assert(strstr(cap.out, "\nstatus ") && strstr(cap.out, " violation\n"));
	root = load_json_file(path);
	viol = json_object_get(json_array_get(results_of(root, 1), 0), "violation");
	ck_assert_str_eq(json_string_value(json_object_get(viol, "kind")), "wal_before_data");
	ck_assert(json_is_integer(json_object_get(viol, "page")));
	ck_assert(json_is_string(json_object_get(viol, "detail")));
	json_decref(root);
	ck_assert_int_eq(cli("compare", mutated, "--modes", "fpw,umbra", NULL), 1);
	ck_assert(strncmp(cap.err, "fpw: violation: ", 16) == 0);
}
END_TEST

static void assert_modes(json_t *results, const char *const *modes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(results, i);
		ck_assert_str_eq(json_string_value(json_object_get(r, "mode")), modes[i]);
		ck_assert_str_eq(json_string_value(json_object_get(r, "scenario")), "t");
		assert_key_order(r);
	}
}

START_TEST(test_compare_default_modes)
{
	static const char *const modes[] = {"fpw", "nofpw", "umbra", "doublewrite"};
	char path[320];
	json_t *root;

	tmp_path(path, sizeof path, "c.json");
	ck_assert_int_eq(cli("compare", scenario, "--json", path, NULL), 0);
	ck_assert(strstr(cap.out, "\nWAL vs nofpw "));
	ck_assert(strstr(cap.out, " fpw  ") && strstr(cap.out, " doublewrite\n"));
	root = load_json_file(path);
	assert_modes(results_of(root, 4), modes, 4);
	json_decref(root);
}
END_TEST

START_TEST(test_compare_some_modes)
{
	static const char *const modes[] = {"umbra", "fpw"};
	char path[320];
	json_t *root;

	tmp_path(path, sizeof path, "c2.json");
	ck_assert_int_eq(cli("compare", "--modes", "umbra,fpw", "--seed", "5", scenario, "--json",
			     path, NULL),
			 0);
	ck_assert(!strstr(cap.out, "WAL vs"));
	ck_assert(!strstr(cap.out, "WAL records of mode"));
	root = load_json_file(path);
	assert_modes(results_of(root, 2), modes, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_array_get(json_object_get(root, "results"), 1), "seed")),
			 5);
	json_decref(root);
}
END_TEST

START_TEST(test_compare_stats)
{
	ck_assert_int_eq(cli("compare", "--modes", "fpw,nofpw", "--stats", scenario, NULL), 0);
	const char *fpw = strstr(cap.out, "WAL records of mode fpw:\nType ");
	const char *nofpw = strstr(cap.out, "WAL records of mode nofpw:\nType ");
	ck_assert(fpw != NULL && nofpw != NULL && fpw < nofpw);
	ck_assert(strstr(fpw, "Heap/HOT_UPDATE") != NULL);
	ck_assert(strstr(nofpw, "[100.00%]") != NULL); /* nofpw: no image bytes */
}
END_TEST

static json_t *stdout_json(void) { return pure_json(cap.out); }

START_TEST(test_contract_keys)
{
	json_t *root;

	ck_assert_int_eq(cli("run", scenario, "--json", "-", NULL), 0);
	root = stdout_json();
	assert_contract(results_of(root, 1));
	json_decref(root);
	ck_assert_int_eq(cli("compare", scenario, "--modes", "fpw,umbra,pushdown", "--stats",
			     "--json", "-", NULL),
			 0);
	ck_assert(strstr(cap.err, "WAL records of mode umbra:") != NULL);
	root = stdout_json();
	assert_contract(results_of(root, 3));
	json_decref(root);
	/* a run the engine refused keeps every key, null where there is no figure */
	ck_assert_int_eq(cli("run", refused, "--mode", "fpw", "--json", "-", NULL), 2);
	root = stdout_json();
	assert_contract(results_of(root, 1));
	ck_assert(
		strstr(json_string_value(
			       json_object_get(json_array_get(json_object_get(root, "results"), 0),
					       "error")),
		       "rf.yaml:9:7: ") != NULL); /* the step's FILE:LINE:COL */
	ck_assert(json_is_null(
		json_object_get(json_array_get(json_object_get(root, "results"), 0), "wal_bytes")));
	json_decref(root);
	ck_assert_int_eq(cli("compare", refused, "--modes", "fpw,nofpw", "--json", "-", NULL), 2);
	root = stdout_json();
	assert_contract(results_of(root, 2));
	json_decref(root);
}
END_TEST

/* What the loader checked against the scenario's own policy but --mode changes (umbra l4
 * with generations 5, or a striped layout) was refused without a position. */
START_TEST(test_mode_refusal_position)
{
	static const struct {
		const char *protocol, *cmd, *opt, *modes, *at, *why;
	} cases[] = {
		{"{mode: umbra, generations: 5}", "run", "--mode", "umbra-l4",
		 "gen.yaml:3:38: ", "protocol.generations is 5 with policy l4"},
		{"{mode: umbra, layout: striped}", "compare", "--modes", "fpw,umbra-l3",
		 "gen.yaml:3:33: ", "protocol.layout is striped with policy l3"},
	};
	char path[340], text[256], want[128];
	snprintf(path, sizeof path, "%s/gen.yaml", tmp_dir);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text,
			 "name: gen\nstorage: {pages: 8, buffers: 4}\nprotocol: %s\n"
			 "workload: {kind: random, transactions: 5}\n",
			 cases[i].protocol);
		write_file(path, text);
		ck_assert_int_eq(cli(cases[i].cmd, path, cases[i].opt, cases[i].modes, NULL), 2);
		snprintf(want, sizeof want, "%s%s", cases[i].at, cases[i].why);
		ck_assert_msg(strstr(cap.err, want) != NULL, "%s", cap.err);
	}
	unlink(path);
}
END_TEST

/* bench and crashtest never run a truncate under pushdown (whose declaration has no truncate
 * capability), as run and check refuse it: truncate is a script step, and both refuse a
 * script workload before any mode runs, with exit 2 and why, touching no file. */
START_TEST(test_realdisk_refuses_truncate)
{
	static const char *const cmds[] = {"bench", "crashtest"};
	char src[512], dir[320];
	const char *root = getenv("PN_SOURCE_DIR");

	ck_assert_msg(root != NULL, "PN_SOURCE_DIR is not set");
	snprintf(src, sizeof src, "%s/scenarios/truncate/truncate-regrow-fpw.yaml", root);
	tmp_path(dir, sizeof dir, "realdisk");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		ck_assert_int_eq(cli(cmds[i], src, "--path", dir, "--modes", "pushdown", NULL), 2);
		ck_assert_msg(strstr(cap.err, "a script workload ends by itself") != NULL, "%s",
			      cap.err);
		ck_assert_int_eq(access(dir, F_OK), -1);
	}
}
END_TEST

/* cli.h CL5: a violation of no page (R2: a commit acknowledged too early) used to say
 * "page 4294967295" in text and in JSON. */
START_TEST(test_no_page)
{
	json_t *root, *v;

	ck_assert_int_eq(cli("run", no_page, "--json", "-", NULL), 1);
	ck_assert_msg(strstr(cap.err, "violation: durability page -: commit of xid") != NULL, "%s",
		      cap.err);
	ck_assert(strstr(cap.err, "4294967295") == NULL && strstr(cap.out, "4294967295") == NULL);
	root = stdout_json();
	v = json_object_get(json_array_get(results_of(root, 1), 0), "violation");
	ck_assert(json_is_object(v));
	ck_assert(json_is_null(json_object_get(v, "page")));
	json_decref(root);
	ck_assert_int_eq(cli("compare", no_page, "--modes", "fpw,umbra", NULL), 1);
	ck_assert_msg(strstr(cap.err, "umbra: violation: durability page -: ") != NULL, "%s",
		      cap.err);
	/* check's report left the page line out; replay's trace says '-' as well */
	char traces[300], trace[340];
	snprintf(traces, sizeof traces, "%s/np-traces", tmp_dir);
	snprintf(trace, sizeof trace, "%s/np.trace.yaml", traces);
	ck_assert_int_eq(cli("check", no_page, "--traces", traces, "--json", "-", NULL), 1);
	ck_assert_msg(strstr(cap.err, "\n  page:        -\n") != NULL, "%s", cap.err);
	root = stdout_json();
	v = json_object_get(json_array_get(json_object_get(root, "scenarios"), 0), "violation");
	ck_assert(json_is_object(v) && json_is_null(json_object_get(v, "page")));
	json_decref(root);
	ck_assert_int_eq(cli("replay", trace, NULL), 1);
	ck_assert_msg(strstr(cap.out, "\n  page: -\n") != NULL, "%s", cap.out);
	unlink(trace);
	rmdir(traces);
}
END_TEST

/* Each column is named as asked: umbra-prototype used to be labelled plain umbra, and a
 * plain umbra after umbra-l3 ran (and was labelled) l3. */
START_TEST(test_compare_labels)
{
	static const char *const both[] = {"umbra", "umbra-prototype"};
	static const char *const after[] = {"umbra-l4", "umbra"};
	json_t *root;

	ck_assert_int_eq(cli("compare", scenario, "--modes", "umbra,umbra-prototype", "--json", "-",
			     NULL),
			 0);
	root = stdout_json();
	assert_modes(results_of(root, 2), both, 2);
	json_decref(root);
	ck_assert(strstr(cap.err, "  umbra  umbra-prototype\n") != NULL);
	cli("compare", scenario, "--modes", "umbra-l4,umbra", "--json", "-", NULL);
	root = stdout_json();
	assert_modes(results_of(root, 2), after, 2);
	json_decref(root);
	ck_assert_int_eq(cli("run", scenario, "--mode", "umbra-prototype", "--json", "-", NULL), 0);
	root = stdout_json();
	assert_modes(results_of(root, 1), both + 1, 1);
	json_decref(root);
}
END_TEST

/* progress.h: the ETA from the work done, shares of running scenarios included; unknown
 * before any work. */

static Suite *cli_runs_suite(void)
{
	Suite *s = suite_create("cli_runs");
	TCase *runs = tcase_create("runs");

	tcase_add_test(runs, test_run_table);
	tcase_add_test(runs, test_json_deterministic);
	tcase_add_test(runs, test_json_provenance);
	tcase_add_test(runs, test_json_stdout);
	tcase_add_test(runs, test_overrides);
	tcase_add_test(runs, test_run_violation);
	tcase_add_test(runs, test_compare_default_modes);
	tcase_add_test(runs, test_compare_some_modes);
	tcase_add_test(runs, test_compare_stats);
	tcase_add_test(runs, test_contract_keys);
	tcase_add_test(runs, test_no_page);
	tcase_add_test(runs, test_mode_refusal_position);
	tcase_add_test(runs, test_realdisk_refuses_truncate);
	tcase_add_test(runs, test_compare_labels);
	tcase_add_test(runs, test_torn_writes_check);
	tcase_add_test(runs, test_search_samples_check);
	tcase_set_timeout(runs, 120);
	suite_add_tcase(s, runs);
	return s;
}

int main(void) { return run_with_fixture(cli_runs_suite()); }

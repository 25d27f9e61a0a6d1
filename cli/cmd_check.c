/*
 * cmd_check.c: `penumbra check S.yaml... | DIR` (cli layer): for each scenario, every crash
 * point and crash state (model/check.c, each point's states model/run.c), a verdict compared with the scenario's `expect`,
 * a counterexample report and replayable trace for each violation, a summary table, and
 * --json / --junit for CI. This file parses, picks an executor (model/executor.h: serial;
 * processes for --jobs N; MPI under mpirun) and prints; the work list it hands the executor
 * (which unit is ready, what a worker runs, how results merge, the traces) is
 * check_work.c. Results are printed in the order the scenarios were named.
 * Exit: 0 every verdict as expected, 1 any not, 2 bad input (or an output that could not be
 * written), 130 interrupted by SIGINT / SIGTERM.
 *
 * Rules this file keeps:
 *   K1 Outputs are validated before any checking: --json and --junit are opened (created)
 *      and --traces must be a writable directory or creatable; otherwise exit 2 at once. A
 *      trace that cannot be written later makes that scenario an error (exit 2).
 *   K2 A file that cannot be loaded is one error case among the others (JSON verdict
 *      "error" with an `error` message, JUnit <error>); the rest are still checked; exit 2.
 *   K3 With --json -, stdout holds only the JSON; everything readable goes to stderr.
 *   K4 --jobs N: the process executor (model/exec_procs.h EP1-EP4): N children, every pipe
 *      drained with one poll(), a child dies with its parent.
 *   K5 SIGINT / SIGTERM: the check stops (the executor terminates and reaps its workers,
 *      model/exec.h E5), what finished is printed and written (JSON `"interrupted": true`,
 *      JUnit property interrupted=true and a <skipped> case per scenario not finished),
 *      exit 130.
 *   K6 A violation's report, JSON and trace describe the same run: the shrunk scenario's
 *      crash point and state when shrinking kept a variant (the first finding is kept as
 *      `found`); `seconds` includes the shrinking.
 *   K7 --jobs N gives what --jobs 1 gives but for the timings: each scenario's units are
 *      merged by its plan in unit order (model/unit.h U1-U5); a unit whose worker dies or
 *      sends bytes that do not decode is run again once, then the scenario is an error; the
 *      workers of units after a violation are killed and their results dropped; the trace
 *      (shrinking) is a unit of its own once the units are merged (check_work.h). Test hook:
 *      PN_TEST_KILL_UNIT (model/exec_procs.h EP4).
 *   K8 --cross-check N judges every Nth state also the full way (model/run.c,
 *      cross_check); a difference stops the process at once, exit 3 (with --jobs, that
 *      child: its unit is run again once, then the scenario is an error). Test hook:
 *      PN_TEST_CROSS_FAULT (check_work.h).
 *   K9 Under MPI (--mpi, or started by mpirun / srun in a PN_MPI build; docs/cluster.md) the
 *      MPI executor (model/exec_mpi.h, the wire model/mpirank.h MR1-MR4) runs the units on the
 *      ranks: every rank loads the same files and builds the same work list; rank 0 alone
 *      opens the outputs, writes the traces and prints, and gives what --jobs 1 gives but
 *      for the timings, plus "ranks" in the JSON, the rank count on the check: line and
 *      the executor's "mpi:" line before the summary.
 *   K10 With more than one scenario checked, only the results not as expected (line, report,
 *      notes) are printed before the summary; --verbose (or a single scenario) prints every
 *      one. JSON and JUnit hold every scenario either way.
 *   K11 --modes A,B: each scenario is checked once per protocol (as compare --modes names
 *      them, cli.c pn_cli_apply_mode), in that order beside each other, named NAME.A,
 *      NAME.B (so their traces differ), each judged against the scenario's own
 *      expect.verdict; JSON's "mode" is the protocol checked (pn_cli_label), with or without
 *      --modes.
 *   K12 A JUnit <failure> or <error> holds what the terminal shows of it: the error, or the
 *      whole counterexample report with its trace and `penumbra replay` line (junit_body).
 *   K13 --list-states FILE: the key of every crash state recovered (new to the verdict
 *      cache; model/run.c state_key), one per line, in the order recovered, the scenarios in
 *      the order checked; shrinking's variants add none. Refused (exit 2) with --jobs N > 1
 *      or MPI, whose units recover states in other processes.
 *   K14 Without --jobs, check takes PENUMBRA_JOBS from the environment (cli/opts.h OP5: 1 to
 *      PN_CHECK_JOBS_MAX, else exit 2), or else every CPU this process may run on
 *      (pn_exec_cpus, at most PN_CHECK_JOBS_MAX): --jobs N for that many, which by K7 gives
 *      what --jobs 1 gives; with --list-states (K13) or under MPI, this process alone. The
 *      JSON says how many processes checked ("jobs"; "ranks" under MPI).
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_json.h"
#include "check_work.h"
#include "checker.h"
#include "crashstate.h"
#include "executor.h"
#include "explore_split.h"
#include "files.h"
#include "load.h"
#include "progress.h"
#include "trace.h"

#define EXIT_INTERRUPTED 130
#define PN_CHECK_JOBS_MAX 256u /* --jobs at most (K14) */

struct check_args {
	const char *json, *junit, *traces;
	const char *list_states; /* K13: --list-states FILE, or NULL */
	FILE *list_file;         /* K13: opened with the other outputs */
	uint64_t jobs, seed, nested, points_every, unit_states, cross_check;
	bool seed_set, coverage, quiet, no_shrink, twice, derive, seeded_only, search_samples_set;
	bool jobs_set, mpi;      /* --jobs given; --mpi given or MPI detected (K9) */
	uint64_t rank_timeout_s; /* K9 */
	uint64_t torn_writes;    /* --torn-writes: 1 or 2; 0 = each scenario's own */
	uint64_t search_samples; /* --search-samples, when search_samples_set */
	bool verbose;            /* K10: every result printed, as expected or not */
	const char *modes_arg;   /* K11: --modes, or NULL */
	struct pn_cli_mode modes[PN_CLI_MAX_MODES];
	int nmodes; /* 0: each scenario under its own protocol */
	char **paths;
	size_t npaths, cap;
};

/* What checking one scenario produced; a child sends it whole (MSG_OUTCOME). */
/* The check as this command sees it: the work list's state (first: `ready` is given it), then
 * the printer's. */
struct run {
	struct check_run w;
	const struct check_args *a;
	FILE *human;    /* stdout, or stderr when the JSON goes to stdout (K3) */
	size_t printed; /* the items at the head of the list that are printed */
	size_t hidden;  /* K10: as expected, so not printed */
	bool all;       /* K10: print every item (--verbose, or a single one checked) */
	int ranks;      /* under MPI (K9): the job's ranks, else 0 */
};

static volatile sig_atomic_t stop_signal; /* K5: the signal that asked to stop, or 0 */

static void on_stop_signal(int sig) { stop_signal = sig; }

/* ---- arguments ---- */
static void add_path(struct check_args *a, const char *p)
{
	if (a->npaths == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->paths = realloc(a->paths, a->cap * sizeof(char *));
		PN_ASSERT(a->paths != NULL);
	}
	a->paths[a->npaths++] = strdup(p);
	PN_ASSERT(a->paths[a->npaths - 1] != NULL);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

static bool scenario_file_name(const char *name)
{
	return has_suffix(name, ".yaml") || has_suffix(name, ".yml");
}

/* Every *.yaml and *.yml below dir (recursively, not through symbolic links to directories,
 * which could loop), sorted. Returns false if dir cannot be read. */
static bool add_dir(struct check_args *a, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	size_t first = a->npaths;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		struct stat st, lst;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &lst) != 0 || stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode))
			add_dir(a, path);
		else if (scenario_file_name(de->d_name))
			add_path(a, path);
	}
	closedir(d);
	qsort(a->paths + first, a->npaths - first, sizeof(char *), cmp_str);
	return true;
}

static const struct pn_opt check_opts[] = {
	{.name = "json",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct check_args, json),
	 .complete = PN_COMPLETE_FILE,
	 .help = "write the verdicts as JSON to FILE ('-' = stdout; the report then goes to "
		 "stderr)"},
	{.name = "junit",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct check_args, junit),
	 .complete = PN_COMPLETE_FILE,
	 .help = "write the verdicts as JUnit XML to FILE, for CI systems"},
	{.name = "list-states",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct check_args, list_states),
	 .complete = PN_COMPLETE_FILE,
	 .help = "write the key of every distinct crash state recovered (new to the verdict "
		 "cache) to FILE, one per line in 16 hex digits, in the order recovered; checks in "
		 "this process, not with --jobs above 1 or MPI"},
	{.name = "jobs",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct check_args, jobs),
	 .given = PN_OPT_GIVEN(struct check_args, jobs_set),
	 .min = 1,
	 .max = PN_CHECK_JOBS_MAX,
	 .env = "PENUMBRA_JOBS",
	 .help = "check in N child processes: the crash points of each scenario are cut into "
		 "units spread over them; the results are those of --jobs 1 but for the timings. "
		 "Default: PENUMBRA_JOBS from the environment, else one for each CPU this process "
		 "may run on (at most 256); one with --list-states; --jobs 1 checks in this "
		 "process"},
	{.name = "unit-states",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct check_args, unit_states),
	 .min = 1,
	 .def = "2048",
	 .help = "with --jobs: about N distinct crash states a unit"},
	{.name = "mpi",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct check_args, mpi),
	 .help = "run as a rank of an MPI job (implied under mpirun or srun): rank 0 hands the "
		 "units out to the other ranks and writes the outputs (docs/cluster.md); not with "
		 "--jobs"},
	{.name = "rank-timeout",
	 .kind = PN_OPT_UINT,
	 .value = "S",
	 .at = offsetof(struct check_args, rank_timeout_s),
	 .min = 1,
	 .def = "60",
	 .help = "under MPI: a rank silent for S seconds in a unit is lost and its unit handed "
		 "to another rank"},
	{.name = "seed",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct check_args, seed),
	 .given = PN_OPT_GIVEN(struct check_args, seed_set),
	 .help = "override each scenario's seed"},
	{.name = "traces",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = offsetof(struct check_args, traces),
	 .def = "penumbra-traces",
	 .complete = PN_COMPLETE_DIR,
	 .help = "where counterexample traces go"},
	{.name = "nested",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct check_args, nested),
	 .def = "64",
	 .help = "also crash inside recovery, for every Nth new crash state; 0: never"},
	{.name = "coverage",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct check_args, coverage),
	 .help = "list every coverage marker: seen both ways, one way only, or never"},
	{.name = "modes",
	 .kind = PN_OPT_STRING,
	 .value = "LIST",
	 .at = offsetof(struct check_args, modes_arg),
	 .complete = PN_COMPLETE_MODES,
	 .help = "check each scenario once per protocol of LIST (comma-separated, distinct: "
		 "{rows}, or a mode alone: {alone}), each against the scenario's expect.verdict, "
		 "named NAME.MODE; without it, each under its own protocol"},
	{.name = "verbose",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct check_args, verbose),
	 .help = "print every scenario's result and report; without it, when more than one is "
		 "checked, only those not as expected are printed before the summary"},
	{.name = "quiet",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct check_args, quiet),
	 .help = "no counterexample reports, only the summary"},
	{.name = "no-shrink",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct check_args, no_shrink),
	 .help = "write counterexample traces as found, without shrinking them"},
	{.name = "seeded-only",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct check_args, seeded_only),
	 .help = "check a scenario that names no schedules strategy with its seeded schedules "
		 "alone, as `strategy: seeded` does (no default exploration of interleavings)"},
	{.name = "twice",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct check_args, twice),
	 .help = "run each schedule twice and compare every event (a determinism self-check; "
		 "exit 1 at the first event where the runs differ)"},
	{.name = "points-every",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct check_args, points_every),
	 .min = 1,
	 .help = "visit only every Nth crash point a scenario selects (a quicker, weaker check; "
		 "for slow builds)"},
	{.name = "cross-check",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct check_args, cross_check),
	 .min = 1,
	 .help = "judge every Nth crash state, and every state of a violation, also the full way "
		 "(a new recovery, the oracle's pages afresh, no verdict cache) and stop at once, "
		 "exit 3, where the two differ"},
	{.name = "derive",
	 .kind = PN_OPT_ONOFF,
	 .value = "on|off",
	 .at = offsetof(struct check_args, derive),
	 .def = "on",
	 .complete = PN_COMPLETE_ONOFF,
	 .help = "judge a new crash state without recovering it when its bytes equal a recovered "
		 "state's over every range that recovery and its judgement read (the verdicts are "
		 "the same either way)"},
	{.name = "search-samples",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct check_args, search_samples),
	 .given = PN_OPT_GIVEN(struct check_args, search_samples_set),
	 .max = 1000000000,
	 .help = "override each scenario's crash.search_samples: the random crash states a sampled "
		 "point draws once its schedule has taken a preemption"},
	{.name = "torn-writes",
	 .kind = PN_OPT_UINT,
	 .value = "1|2",
	 .at = offsetof(struct check_args, torn_writes),
	 .min = 1,
	 .max = 2,
	 .help = "override each scenario's crash.torn_writes: 2 also tears each write with mixed "
		 "subsets of the others, and pairs of writes at once"},
};

const struct pn_cmd_spec pn_check_spec = {
	.name = "check",
	.args = "S.yaml... | DIR",
	.args_help = "scenario files, or directories searched for *.yaml and *.yml",
	.args_min = 1,
	.args_max = -1,
	.args_missing = "no scenario named",
	.description = "Enumerates the crash points and crash states of each scenario (every "
		       "*.yaml and *.yml under a directory, in name order), recovers each with the "
		       "engine's recovery, verifies it with the independent oracle, and compares "
		       "the verdict with the scenario's expect.verdict. A scenario without a "
		       "crash: section is run once with the runtime invariants on. A file that "
		       "cannot be loaded is reported as an error; the others are still checked.",
	.opts = check_opts,
	.nopts = PN_ARRAY_LEN(check_opts),
	.notes = "On a terminal, one progress line on stderr. SIGINT or SIGTERM stops the check: "
		 "what finished is reported and written (marked interrupted), exit 130.",
	.exits = "0 every verdict as expected, 1 any not, 2 bad input or an output that could "
		 "not be written, 3 a cross-check failed, 130 interrupted",
};

static int parse(int argc, char **argv, struct check_args *a)
{
	int at, rc = pn_opts_parse(&pn_check_spec, argc, argv, a, &at);
	if (rc >= 0)
		return rc;
	if (a->modes_arg &&
	    (a->nmodes = pn_cli_parse_mode_specs("check", a->modes_arg, a->modes)) < 0)
		return 2;
	if (a->mpi && !pn_exec_method_built(PN_EXEC_MPI))
		return pn_cli_usage_error("check", "--mpi: %s", pn_exec_mpi_missing());
	if (pn_exec_mpi_detected() && !a->mpi && !pn_exec_method_built(PN_EXEC_MPI))
		fprintf(stderr,
			"penumbra check: started by mpirun or srun, but %s: each rank "
			"checks everything alone\n",
			pn_exec_mpi_missing());
	a->mpi |= pn_exec_mpi_detected() && pn_exec_method_built(PN_EXEC_MPI);
	if (!a->jobs_set && (a->list_states || a->mpi)) /* K14: over PENUMBRA_JOBS too */
		a->jobs = 1;
	else if (!a->jobs) /* K14: neither the line nor PENUMBRA_JOBS (opts.h OP5) */
		a->jobs = PN_MIN(pn_exec_cpus(), PN_CHECK_JOBS_MAX);
	if (a->list_states && (a->mpi || a->jobs > 1))
		return pn_cli_usage_error("check",
					  "--list-states: not with %s (the units' states "
					  "are recovered in other processes)",
					  a->mpi ? "MPI" : "--jobs N > 1");
	if (a->mpi && a->jobs_set)
		return pn_cli_usage_error("check", "--jobs and MPI do not mix: under mpirun the "
						   "ranks are the jobs (docs/cluster.md)");
	for (int i = at; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (!add_dir(a, argv[i]))
				return pn_cli_usage_error("check", "%s: cannot read: %s", argv[i],
							  strerror(errno));
		} else {
			add_path(a, argv[i]); /* a missing file is an error case (K2) */
		}
	}
	if (a->npaths == 0)
		return pn_cli_usage_error("check", "no *.yaml or *.yml scenario found");
	return -1;
}

/* ---- K1: outputs ---- */

/* Opens --json / --junit / --list-states and checks --traces; false (message printed) when one is unusable. */
static bool open_outputs(struct check_args *a, FILE **json, FILE **junit)
{
	char why[512];
	*json = *junit = NULL;
	errno = 0;
	if (!pn_cli_writable_dir(a->traces, why, sizeof(why))) {
		fprintf(stderr, "penumbra check: --traces %s: %s\n", a->traces, why);
		return false;
	}
	for (size_t i = 0; i < a->npaths; i++) /* files.h F2: no output replaces one */
		pn_file_note_in(a->paths[i]);
	if (a->json && !(*json = pn_cli_open_output("check", a->json)))
		return false;
	if (a->junit && !(*junit = pn_cli_open_output("check", a->junit))) {
		pn_file_abort_out(*json);
		return false;
	}
	if (a->list_states && !(a->list_file = pn_cli_open_output("check", a->list_states))) {
		pn_file_abort_out(*json);
		pn_file_abort_out(*junit);
		return false;
	}
	return true;
}

/* ---- coverage markers, merged across child processes ---- */
static int cmp_site(const void *x, const void *y)
{
	const struct pn_testcase_site *s = *(struct pn_testcase_site *const *)x;
	const struct pn_testcase_site *t = *(struct pn_testcase_site *const *)y;
	int c = strcmp(s->file, t->file);
	return c ? c : (s->line > t->line) - (s->line < t->line);
}

static void print_coverage(const struct run *r)
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites), both = 0, one = 0, never = 0;
	struct pn_testcase_site **order = calloc(n + 1, sizeof(*order));
	PN_ASSERT(order != NULL);
	for (size_t i = 0; i < n; i++) {
		order[i] = sites[i];
		/* park the merged counts in the site, to sort them together */
		order[i]->hits_true = r->w.cov[i][0];
		order[i]->hits_false = r->w.cov[i][1];
	}
	qsort(order, n, sizeof(*order), cmp_site);
	fprintf(r->human, "\ncoverage markers, all %zu (seen true / seen false):\n", n);
	for (size_t i = 0; i < n; i++) {
		uint64_t t = order[i]->hits_true, f = order[i]->hits_false;
		const char *what = t && f ? "both" : t ? "ONLY TRUE" : f ? "ONLY FALSE" : "NEVER";
		both += t && f;
		one += (t != 0) != (f != 0);
		never += !t && !f;
		fprintf(r->human, "  %-10s %-62s %8llu / %-8llu %s:%d\n", what, order[i]->name,
			(unsigned long long)t, (unsigned long long)f, order[i]->file,
			order[i]->line);
	}
	fprintf(r->human, "%zu markers: %zu seen both ways, %zu one way only, %zu never reached\n",
		n, both, one, never);
	for (size_t i = 0; i < n; i++)
		order[i]->hits_true = order[i]->hits_false = 0;
	free(order);
}

/* ---- progress and finished items ---- */
static bool as_expected(const struct check_item *it) { return it->out.res.ok && !it->out.error[0]; }

/* A violation's counterexample report, and where shrinking moved it from (K6). */
static void print_report(FILE *h, const struct check_item *it)
{
	const struct pn_check_result *res = &it->out.res;
	pn_trace_report(h, &it->sc, res);
	if (it->out.shrunk && (it->out.found_point != res->crash_point ||
			       strcmp(it->out.found_state, res->state[0] ? res->state : "none")))
		fprintf(h,
			"  found first: crash point event %llu, state %s (before shrinking; the "
			"report and the trace are the shrunk scenario's)\n",
			(unsigned long long)it->out.found_point, it->out.found_state);
}

static void print_item(struct run *r, struct check_item *it)
{
	const struct pn_check_result *res = &it->out.res;
	FILE *h = r->human;
	if (!r->all && as_expected(it)) { /* K10 */
		it->printed = true;
		r->hidden++;
		return;
	}
	pn_progress_clear(&r->w.prog);
	fprintf(h,
		"%-4s %-36s %-9s (expected %-9s) %8llu points %10llu states %9llu recovered %7.2fs\n",
		as_expected(it) ? "ok" : "FAIL", it->name, pn_check_item_verdict(it),
		pn_check_item_expected(it) ? pn_check_item_expected(it) : "-",
		(unsigned long long)res->crash_points, (unsigned long long)res->crash_states,
		(unsigned long long)res->recoveries, res->seconds);
	if (res->diverged)
		fprintf(h, "     %s\n", res->divergence);
	if (res->capped_points)
		fprintf(h,
			"     note: at %llu crash points crash.torn_writes: 2 stopped at %llu states "
			"with a tear (the others were not enumerated)\n",
			(unsigned long long)res->capped_points,
			(unsigned long long)PN_CRASH_MIXED_MAX);
	if (res->search_sampled)
		fprintf(h,
			"     note: %llu crash points past a preemption drew crash.search_samples "
			"(%u) random states, not crash.samples (%u) (--search-samples)\n",
			(unsigned long long)res->search_sampled, it->sc.crash.search_samples,
			it->sc.crash.samples);
	if (res->budget)
		fprintf(h,
			"     interleavings: %llu schedules of at most one preemption after the "
			"seeded ones (budget %u: the bound %s)\n",
			(unsigned long long)(res->schedules_default - res->pct_runs), res->budget,
			res->budget_cut ? "not reached" : "reached");
	if (res->pct_runs)
		fprintf(h,
			"     pct: %llu runs of depth %u over %llu events and %u actors (each finds a "
			"bug of depth %u with probability at least %.3g; all miss it with "
			"probability at most %.6g)\n",
			(unsigned long long)res->pct_runs, res->pct_depth,
			(unsigned long long)res->pct_events, res->pct_actors, res->pct_depth,
			pn_split_pct_find(res->pct_depth, res->pct_actors, res->pct_events),
			pn_split_pct_miss(res->pct_runs, res->pct_depth, res->pct_actors,
					  res->pct_events));
	if (res->violation && !res->error && !r->a->quiet)
		print_report(h, it);
	if (it->out.error[0])
		fprintf(h, "     %s\n", it->out.error);
	fflush(h);
	it->printed = true;
}

static void print_ready(struct run *r)
{
	while (r->printed < r->w.n && r->w.items[r->printed].done) {
		if (!r->w.items[r->printed].printed)
			print_item(r, &r->w.items[r->printed]);
		r->printed++;
	}
}

/* K10: how many results were not printed, and how to see them. */
static void print_hidden(struct run *r)
{
	if (!r->hidden)
		return;
	pn_progress_clear(&r->w.prog);
	fprintf(r->human, "(%zu %s as expected, not listed: --verbose lists every one)\n",
		r->hidden, r->hidden == 1 ? "scenario" : "scenarios");
}

/* The work list's printer (check_work.h): w is the first member of its struct run. */
static void ready(struct check_run *w) { print_ready((struct run *)w); }

/* ---- summary, JSON, JUnit ---- */
static void print_summary(struct run *r)
{
	size_t ok = 0, viol = 0, capped = 0;
	uint64_t states = 0, rec = 0;
	pn_progress_clear(&r->w.prog);
	for (size_t i = 0; i < r->w.n; i++) {
		struct check_item *it = &r->w.items[i];
		if (!it->done)
			continue;
		if (!it->printed)
			print_item(r, it); /* finished after one that did not (K5) */
		ok += it->out.res.ok && !it->out.error[0];
		viol += it->out.res.violation;
		states += it->out.res.crash_states;
		rec += it->out.res.recoveries;
		capped += it->out.res.capped_points > 0;
	}
	fprintf(r->human,
		"\n%zu scenarios: %zu as expected, %zu not; %zu violations found; %llu crash "
		"states, %llu recovered (%.0f states/s of wall time)\n",
		r->w.done, ok, r->w.done - ok, viol, (unsigned long long)states,
		(unsigned long long)rec, pn_progress_rate(&r->w.prog, r->w.states_done));
	if (capped)
		fprintf(r->human,
			"note: %zu scenarios had crash points whose torn-write states were capped "
			"(crash.torn_writes: 2, docs/checker.md section 10)\n",
			capped);
	if (stop_signal)
		fprintf(r->human,
			"interrupted by %s: %zu of %zu scenarios finished, the others were not "
			"checked\n",
			stop_signal == SIGINT ? "SIGINT" : "SIGTERM", r->w.done, r->w.n);
	fprintf(r->human, "check: %zu passed, %zu failed", ok, r->w.done - ok);
	if (stop_signal)
		fprintf(r->human, ", %zu not finished (interrupted)", r->w.n - r->w.done);
	if (r->ranks)
		fprintf(r->human, "; %d MPI ranks", r->ranks);
	fprintf(r->human, "\n");
}

/* "coverage" (with --coverage): every marker, by file and line, with its merged counts. */
struct cov_row {
	const struct pn_testcase_site *site;
	uint64_t t, f;
};

static int cmp_cov_row(const void *x, const void *y)
{
	const struct pn_testcase_site *s = ((const struct cov_row *)x)->site;
	const struct pn_testcase_site *t = ((const struct cov_row *)y)->site;
	return cmp_site(&s, &t);
}

static json_t *coverage_json(const struct run *r)
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites), count[3] = {0};
	struct cov_row *rows = calloc(n + 1, sizeof(*rows));
	json_t *o = json_object(), *arr = json_array();
	PN_ASSERT(rows != NULL && n == r->w.ncov);
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct cov_row){sites[i], r->w.cov[i][0], r->w.cov[i][1]};
	qsort(rows, n, sizeof(*rows), cmp_cov_row);
	for (size_t i = 0; i < n; i++) {
		json_t *m = json_object();
		int seen = rows[i].t && rows[i].f ? 0 : rows[i].t || rows[i].f ? 1 : 2;
		count[seen]++;
		json_object_set_new(m, "name", json_string(rows[i].site->name));
		json_object_set_new(m, "file", json_string(rows[i].site->file));
		json_object_set_new(m, "line", json_integer(rows[i].site->line));
		json_object_set_new(m, "true", json_integer((json_int_t)rows[i].t));
		json_object_set_new(m, "false", json_integer((json_int_t)rows[i].f));
		json_object_set_new(m, "seen",
				    json_string(seen == 0   ? "both"
						: seen == 1 ? "one way"
							    : "never"));
		json_array_append_new(arr, m);
	}
	json_object_set_new(o, "both", json_integer((json_int_t)count[0]));
	json_object_set_new(o, "one_way", json_integer((json_int_t)count[1]));
	json_object_set_new(o, "never", json_integer((json_int_t)count[2]));
	json_object_set_new(o, "markers", arr);
	free(rows);
	return o;
}

static int write_json(const struct run *r, FILE *f, const char *path)
{
	json_t *arr = json_array(), *root = json_object(), *left = json_array();
	for (size_t i = 0; i < r->w.n; i++) {
		if (r->w.items[i].done)
			json_array_append_new(arr, pn_check_item_json(&r->w.items[i]));
		else
			json_array_append_new(left, json_string(r->w.items[i].path));
	}
	json_object_set_new(root, "scenarios", arr);
	json_object_set_new(root, "interrupted", json_boolean(stop_signal != 0));
	json_object_set_new(root, "not_finished", left);
	if (r->ranks)
		json_object_set_new(root, "ranks", json_integer(r->ranks));
	else /* K14 */
		json_object_set_new(root, "jobs", json_integer((json_int_t)r->a->jobs));
	if (r->a->coverage)
		json_object_set_new(root, "coverage", coverage_json(r));
	root = pn_cli_json_stamped(root);
	bool ok = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
		  fputc('\n', f) != EOF;
	json_decref(root);
	return pn_cli_close_output("check", f, path, ok);
}

/* K12: what a CI page shows of a case that is not as expected: the error; or the whole
 * counterexample report (kind, page, crash point and state, the events before the crash,
 * the trace and the `penumbra replay` line); or why a pass was not expected. */
static void junit_body(FILE *f, const struct check_item *it)
{
	const struct check_outcome *out = &it->out;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	PN_ASSERT(m != NULL);
	if (out->error[0] || out->res.error)
		fprintf(m, "%s\n", out->error[0] ? out->error : out->res.detail);
	else if (out->res.violation)
		print_report(m, it);
	else
		fprintf(m, "no violation in %llu crash states of %llu crash points%s%s\n",
			(unsigned long long)out->res.crash_states,
			(unsigned long long)out->res.crash_points, out->res.diverged ? ": " : "",
			out->res.diverged ? out->res.divergence : "");
	PN_ASSERT(fclose(m) == 0 && text != NULL);
	pn_cli_xml_text(f, text);
	free(text);
}

static void junit_case(FILE *f, const struct check_item *it)
{
	const struct check_outcome *out = &it->out;
	bool error = !it->loaded || out->res.error || out->error[0];
	fprintf(f, "    <testcase classname=\"penumbra.check\" name=\"");
	pn_cli_xml_text(f, it->name);
	fprintf(f, "\" file=\"");
	pn_cli_xml_text(f, it->path);
	fprintf(f, "\" time=\"%.3f\">", it->done ? out->res.seconds : 0.0);
	if (!it->done) {
		fprintf(f, "<skipped message=\"interrupted before this scenario finished\"/>");
	} else if (error || !out->res.ok) {
		const char *tag = error ? "error" : "failure";
		fprintf(f, "\n      <%s message=\"verdict %s, expected %s\">", tag,
			pn_check_item_verdict(it),
			pn_check_item_expected(it) ? pn_check_item_expected(it) : "-");
		junit_body(f, it);
		fprintf(f, "</%s>\n    ", tag);
	}
	fprintf(f, "</testcase>\n");
}

static int write_junit(const struct run *r, FILE *f, const char *path)
{
	size_t failures = 0, errors = 0;
	double secs = 0;
	for (size_t i = 0; i < r->w.n; i++) {
		const struct check_item *it = &r->w.items[i];
		bool error = !it->loaded || it->out.res.error || it->out.error[0];
		failures += it->done && !error && !it->out.res.ok;
		errors += it->done && error;
		secs += it->done ? it->out.res.seconds : 0;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
	fprintf(f,
		"  <testsuite name=\"penumbra check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		"skipped=\"%zu\" time=\"%.3f\">\n",
		r->w.n, failures, errors, r->w.n - r->w.done, secs);
	fprintf(f, "    <properties><property name=\"interrupted\" value=\"%s\"/></properties>\n",
		stop_signal ? "true" : "false");
	for (size_t i = 0; i < r->w.n; i++)
		junit_case(f, &r->w.items[i]);
	bool ok = fprintf(f, "  </testsuite>\n</testsuites>\n") > 0;
	return pn_cli_close_output("check", f, path, ok);
}

/* ---- the command ---- */
/* "dir/x.yaml" -> "x": the name of a file that did not load. */
static void file_stem(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	snprintf(out, len, "%s", base);
	char *dot = strrchr(out, '.');
	if (dot && dot != out && scenario_file_name(out))
		*dot = '\0';
}

/* K11: the scenario under --modes' mode m, named NAME.MODE as typed (distinct: parse). */
static void apply_mode(struct check_item *it, const struct pn_cli_mode *m)
{
	char name[sizeof(it->sc.name)];
	pn_cli_apply_mode(&it->sc, m);
	snprintf(name, sizeof(name), "%.*s.%s", (int)(sizeof(name) - sizeof(m->name) - 2),
		 it->sc.name, m->name);
	snprintf(it->sc.name, sizeof(it->sc.name), "%s", name);
}

static bool load_item(struct check_item *it, const struct check_args *a,
		      const struct pn_cli_mode *m)
{
	char err[PN_ERROR_LEN] = "";
	if (!pn_scenario_load(it->path, &it->sc, err, sizeof(err))) {
		pn_scenario_free(&it->sc);
		if (!m || m == &a->modes[0]) /* once a file, under --modes too */
			fprintf(stderr, "%s\n", err[0] ? err : "cannot load the scenario");
		file_stem(it->path, it->name, sizeof(it->name));
		if (m) {
			size_t l = strlen(it->name);
			snprintf(it->name + l, sizeof(it->name) - l, ".%s", m->name);
		}
		snprintf(it->out.error, sizeof(it->out.error), "%s",
			 err[0] ? err : "cannot be loaded");
		it->out.rc = 2;
		return false;
	}
	if (m)
		apply_mode(it, m);
	pn_cli_label(&it->sc, m, it->mode, sizeof(it->mode));
	snprintf(it->name, sizeof(it->name), "%s", it->sc.name);
	if (a->seed_set)
		it->sc.seed = a->seed;
	if (a->torn_writes) /* given: then written to its traces, which replay it */
		it->sc.crash.torn_writes = (uint32_t)a->torn_writes;
	if (a->search_samples_set) /* likewise, when not 0 */
		it->sc.crash.search_samples = (uint32_t)a->search_samples;
	if (a->points_every > 1 && it->sc.crash.points == PN_POINTS_ALL) {
		it->sc.crash.points = PN_POINTS_EVERY;
		it->sc.crash.every = a->points_every;
	}
	return true;
}

/* The work list over the files named, loaded, for executor x (cmd_check.c's printer its
 * `ready`). */
static void run_init(struct run *r, const struct check_args *a, const struct pn_exec *x)
{
	*r = (struct run){.a = a, .ranks = x->ranks};
	r->w = (struct check_run){.set = {.traces = a->traces,
					  .nested = a->nested,
					  .unit_states = a->unit_states,
					  .cross_check = a->cross_check,
					  .twice = a->twice,
					  .derive = a->derive,
					  .no_shrink = a->no_shrink,
					  .seeded_only = a->seeded_only,
					  .list_states = a->list_file},
				  .n = a->npaths * (size_t)(a->nmodes ? a->nmodes : 1),
				  .workers = x->workers,
				  .whole = x->whole_units,
				  .stop = &stop_signal,
				  .ready = ready};
	r->human = a->json && strcmp(a->json, "-") == 0 ? stderr : stdout;
	r->all = a->verbose || r->w.n == 1;
	r->w.items = calloc(r->w.n, sizeof(*r->w.items));
	PN_ASSERT(r->w.items != NULL);
	pn_check_work_cov_init(&r->w);
	size_t per = a->nmodes ? (size_t)a->nmodes : 1; /* K11: a scenario's modes side by side */
	for (size_t i = 0; i < r->w.n; i++) {
		struct check_item *it = &r->w.items[i];
		it->path = a->paths[i / per];
		it->loaded = load_item(it, a, a->nmodes ? &a->modes[i % per] : NULL);
	}
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->w.n; i++) {
		pn_plan_free(r->w.items[i].plan);
		if (r->w.items[i].loaded)
			pn_scenario_free(&r->w.items[i].sc);
	}
	free(r->w.items);
	free(r->w.cov);
}

/* K9: a rank other than 0 loads the same files and serves units until rank 0 stops. */
static int serve_rank(const struct check_args *a, struct pn_exec *x)
{
	struct run r;
	run_init(&r, a, x);
	struct pn_exec_work work = pn_check_work(&r.w);
	pn_exec_run(x, &work);
	run_free(&r);
	return 0;
}

static int check_all(struct run *r, struct pn_exec *x, FILE *json, FILE *junit)
{
	int rc = 0;
	for (size_t i = 0; i < r->w.n; i++)
		if (!r->w.items[i].loaded)
			pn_check_work_mark_done(&r->w, &r->w.items[i]); /* K2 */
	pn_progress_init(&r->w.prog, "check", "scenarios", "states", r->w.n);
	print_ready(r);
	struct pn_exec_work work = pn_check_work(&r->w);
	pn_exec_run(x, &work);
	pn_progress_finish(&r->w.prog, r->w.done, r->w.states_done); /* progress.h P1 */
	print_ready(r);
	print_hidden(r);
	if (x->summary[0]) {
		pn_progress_clear(&r->w.prog);
		fprintf(r->human, "%s\n", x->summary);
	}
	print_summary(r);
	if (r->a->coverage)
		print_coverage(r);
	for (size_t i = 0; i < r->w.n; i++)
		rc = pn_cli_worst(rc, r->w.items[i].done ? r->w.items[i].out.rc : 0);
	if (json)
		rc = pn_cli_worst(rc, write_json(r, json, r->a->json));
	if (junit)
		rc = pn_cli_worst(rc, write_junit(r, junit, r->a->junit));
	if (r->a->list_file) /* K13 */
		rc = pn_cli_worst(rc,
				  pn_cli_close_output("check", r->a->list_file, r->a->list_states,
						      !ferror(r->a->list_file)));
	return stop_signal ? EXIT_INTERRUPTED : rc;
}

/* The executor: MPI under mpirun (K9), child processes for --jobs N, else this process. */
static enum pn_exec_method method(const struct check_args *a)
{
	return a->mpi ? PN_EXEC_MPI : a->jobs > 1 ? PN_EXEC_PROCESSES : PN_EXEC_SERIAL;
}

int pn_cmd_check(int argc, char **argv)
{
	struct check_args a = {.nested = 64,
			       .derive = true,
			       .traces = "penumbra-traces",
			       .unit_states = 2048,
			       .rank_timeout_s = 60};
	int rc = parse(argc, argv, &a);
	struct pn_exec x = {0};
	bool started = rc < 0;
	FILE *json = NULL, *junit = NULL;
	if (started) {
		pn_exec_start(&x, method(&a), (uint32_t)a.jobs, &stop_signal,
			      (double)a.rank_timeout_s);
		if (!pn_exec_leads(&x))
			rc = serve_rank(&a, &x);
	}
	if (rc < 0 && !open_outputs(&a, &json, &junit))
		rc = 2;
	if (rc < 0) {
		struct sigaction on = {.sa_handler = on_stop_signal}, old_int, old_term;
		sigemptyset(&on.sa_mask);
		stop_signal = 0;
		sigaction(SIGINT, NULL, &old_int);
		if (old_int.sa_handler != SIG_IGN) /* ignored: a background job, keep it so */
			sigaction(SIGINT, &on, NULL);
		sigaction(SIGTERM, &on, &old_term);
		struct run r;
		run_init(&r, &a, &x);
		rc = check_all(&r, &x, json, junit);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		run_free(&r);
	}
	if (started)
		rc = pn_exec_end(&x, rc, stop_signal != 0);
	for (size_t i = 0; i < a.npaths; i++)
		free(a.paths[i]);
	free(a.paths);
	return rc;
}

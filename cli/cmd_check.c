/*
 * cmd_check.c: `penumbra check S.yaml... | DIR` (cli layer): for each scenario, every crash
 * point and crash state (model/check.c), a verdict compared with the scenario's `expect`,
 * a counterexample report and replayable trace for each violation, a summary table, and
 * --json / --junit for CI. --jobs N runs N child processes, each checking one work unit
 * (model/unit.h: a scenario's schedule and a range of its crash points) or writing one
 * scenario's trace; results are printed in the order the scenarios were named.
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
 *   K4 --jobs N: the parent never blocks on a child without draining every child's pipe
 *      (one poll() over all of them); pipes are shrunk to one page (PIPE_BYTES) so that a
 *      parent that stopped draining would deadlock in every test run, not only on big
 *      outputs. A child dies with its parent (PR_SET_PDEATHSIG).
 *   K5 SIGINT / SIGTERM: the check stops (children are terminated and reaped), what finished
 *      is printed and written (JSON `"interrupted": true`, JUnit property interrupted=true
 *      and a <skipped> case per scenario not finished), exit 130.
 *   K6 A violation's report, JSON and trace describe the same run: the shrunk scenario's
 *      crash point and state when shrinking kept a variant (the first finding is kept as
 *      `found`); `seconds` includes the shrinking.
 *   K7 --jobs N gives what --jobs 1 gives but for the timings: each scenario's units are
 *      merged by its plan in unit order (model/unit.h U1-U5); a unit's child that dies or
 *      sends bytes that do not decode is run again once, then the scenario is an error; the
 *      children of units after a violation are killed and their results dropped; the trace
 *      (shrinking) runs in a child of its own once the units are merged. Test hook: with
 *      PN_TEST_KILL_UNIT=T in the environment, the child of the first scenario's first unit
 *      kills itself (SIGKILL) before its result, the first T times it is run.
 *   K8 --cross-check N judges every Nth state also the full way (model/check.c,
 *      cross_check); a difference stops the process at once, exit 3 (with --jobs, that
 *      child: its unit is run again once, then the scenario is an error). Test hook: with
 *      PN_TEST_CROSS_FAULT=K in the environment, the fast verdict of the Kth state judged
 *      (in each process) is made wrong.
 *   K9 Under MPI (--mpi, or started by mpirun / srun in a PN_MPI build; docs/cluster.md) rank 0
 *      runs the --jobs loop over ranks instead of children (run_ranks: cli/mpirank.h M1-M3):
 *      every other rank loads the same files and serves units; rank 0 alone opens the
 *      outputs, writes the traces and prints, and gives what --jobs 1 gives but for the
 *      timings, plus "ranks" in the JSON and the rank count on the check: line. With at
 *      most PN_MPI_LEAD_CHECKS_UPTO ranks, or every other rank lost, rank 0 also checks
 *      units, one at a time in a child of its own (spawn, drain, reap as for --jobs).
 *
 * Child -> parent messages (K4), each a struct msg_hdr then `len` bytes:
 *   MSG_PROGRESS  struct progress_msg, at most every PN_PROGRESS_INTERVAL_MS
 *   MSG_UNIT      a unit's result, pn_unit_result_encode()'s bytes, once, when it is done
 *   MSG_OUTCOME   a trace job: struct outcome, once, when the trace is written
 *   MSG_COVERAGE  a trace job: uint64_t[2] (true, false hits) per pn_testcase_all() site,
 *                 once, last
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checker.h"
#include "crashstate.h"
#include "files.h"
#include "load.h"
#include "progress.h"
#include "shrink.h"
#include "trace.h"
#include "mpirank.h"
#include "unit.h"

static const char usage[] =
	"usage: penumbra check S.yaml... | DIR [--json FILE] [--junit FILE] [--jobs N]\n"
	"                      [--seed N] [--traces DIR] [--nested N] [--coverage] [--quiet]\n"
	"                      [--no-shrink] [--points-every N] [--twice] [--unit-states N]\n"
	"                      [--cross-check N] [--derive on|off] [--mpi] [--rank-timeout S]\n"
	"                      [--torn-writes 1|2]\n"
	"\n"
	"Enumerates the crash points and crash states of each scenario (every *.yaml and *.yml\n"
	"under a directory, in name order), recovers each with the engine's recovery, verifies\n"
	"it with the independent oracle, and compares the verdict with the scenario's\n"
	"expect.verdict. A scenario without a crash: section is run once with the runtime\n"
	"invariants on. A file that cannot be loaded is reported as an error; the others are\n"
	"still checked.\n"
	"\n"
	"options:\n"
	"  --json FILE   write the verdicts as JSON to FILE ('-' = stdout; the report then\n"
	"                goes to stderr)\n"
	"  --junit FILE  write the verdicts as JUnit XML to FILE, for CI systems\n"
	"  --jobs N      check in N child processes (default 1): the crash points of each\n"
	"                scenario are cut into units spread over them; the results are those\n"
	"                of --jobs 1 but for the timings\n"
	"  --unit-states N  with --jobs: about N distinct crash states a unit (default 2048)\n"
	"  --mpi         run as a rank of an MPI job (implied under mpirun or srun): rank 0\n"
	"                hands the units out to the other ranks and writes the outputs\n"
	"                (docs/cluster.md); not with --jobs\n"
	"  --rank-timeout S  under MPI: a rank silent for S seconds in a unit is lost and its\n"
	"                unit handed to another rank (default 60)\n"
	"  --seed N      override each scenario's seed\n"
	"  --traces DIR  where counterexample traces go (default: penumbra-traces)\n"
	"  --nested N    also crash inside recovery, for every Nth new crash state\n"
	"                (default 64; 0 = never)\n"
	"  --coverage    list every coverage marker: seen both ways, one way only, or never\n"
	"  --quiet       no counterexample reports, only the summary\n"
	"  --no-shrink   write counterexample traces as found, without shrinking them\n"
	"  --twice       run each schedule twice and compare every event (a determinism\n"
	"                self-check; exit 1 at the first event where the runs differ)\n"
	"  --points-every N  visit only every Nth crash point a scenario selects (a quicker,\n"
	"                weaker check; for slow builds)\n"
	"  --cross-check N  judge every Nth crash state, and every state of a violation,\n"
	"                also the full way (a new recovery, the oracle's pages afresh, no\n"
	"                verdict cache) and stop at once, exit 3, where the two differ\n"
	"  --derive on|off  judge a new crash state without recovering it when its bytes\n"
	"                equal a recovered state's over every range that recovery and its\n"
	"                judgement read (default on; the verdicts are the same either way)\n"
	"  --torn-writes 1|2  override each scenario's crash.torn_writes: 2 also tears each\n"
	"                write with mixed subsets of the others, and pairs of writes at once\n"
	"  -h, --help    show this help\n"
	"\n"
	"On a terminal, one progress line on stderr. SIGINT or SIGTERM stops the check: what\n"
	"finished is reported and written (marked interrupted), exit 130.\n"
	"\n"
	"exit status: 0 every verdict as expected, 1 any not, 2 bad input or an output that\n"
	"could not be written, 3 a cross-check failed, 130 interrupted\n";

enum {
	OPT_JSON = 256,
	OPT_JUNIT,
	OPT_JOBS,
	OPT_SEED,
	OPT_COVERAGE,
	OPT_TRACES,
	OPT_NESTED,
	OPT_QUIET,
	OPT_NO_SHRINK,
	OPT_POINTS_EVERY,
	OPT_TWICE,
	OPT_UNIT_STATES,
	OPT_CROSS_CHECK,
	OPT_DERIVE,
	OPT_MPI,
	OPT_RANK_TIMEOUT,
	OPT_TORN_WRITES
};

#define EXIT_INTERRUPTED 130
#define PIPE_BYTES 4096    /* K4: one page */
#define KILL_GRACE_MS 2000 /* K5: SIGTERM, then SIGKILL after this */

struct check_args {
	const char *json, *junit, *traces;
	uint64_t jobs, seed, nested, points_every, unit_states, cross_check;
	bool seed_set, coverage, quiet, no_shrink, twice, derive;
	bool jobs_set, mpi;      /* --jobs given; --mpi given or MPI detected (K9) */
	uint64_t rank_timeout_s; /* K9 */
	uint64_t torn_writes;    /* --torn-writes: 1 or 2; 0 = each scenario's own */
	char **paths;
	size_t npaths, cap;
};

/* What checking one scenario produced; a child sends it whole (MSG_OUTCOME). */
struct outcome {
	int rc;                     /* 0 as expected, 1 not, 2 error, 3 interrupted */
	struct pn_check_result res; /* a violation: the shrunk scenario's, when shrunk (K6) */
	bool shrunk;                /* shrinking kept a variant: found_* is the first finding */
	uint64_t found_point;
	char found_state[256];
	double shrink_seconds;
	char error[2200]; /* could not be loaded or checked, or its trace not written */
};

struct item {
	char *path;
	char name[128]; /* the scenario's name, or the file's when it did not load */
	struct pn_scenario sc;
	bool loaded, done, printed;
	struct outcome out;
	/* --jobs: its work units (model/unit.h), then its trace (a finishing job) */
	struct pn_plan *plan;
	bool finishing; /* its trace job is running */
	double t0;      /* when its first unit was handed out */
};

/* --jobs: one child process, checking a unit of an item or writing its trace (K4). */
struct job {
	struct item *it;
	uint32_t unit;  /* the unit's id in it->plan */
	bool finish;    /* the trace job of it (else a unit) */
	bool cancelled; /* a unit no longer needed (U1): killed, its result dropped */
	pid_t pid;      /* 0: the slot is free */
	int fd;
	uint8_t *buf;
	size_t len, cap;
	struct pn_unit_result result;
	bool got_result; /* result (a unit) or it->out (a trace job) arrived whole */
	char why[256];   /* a unit whose result did not decode: why */
	bool exited;     /* already waited for (status below); its pid may be reused */
	int status;
	uint64_t live_states; /* crash states so far, from its last MSG_PROGRESS */
};

struct run {
	const struct check_args *a;
	struct item *items;
	size_t n, done, printed;
	FILE *human; /* stdout, or stderr when the JSON goes to stdout (K3) */
	struct pn_progress prog;
	uint64_t states_done;    /* crash states of the finished items (--jobs: units) */
	uint64_t schedules_done; /* schedules of the finished items (the progress line) */
	uint64_t (*cov)[2];      /* per pn_testcase_all() site: true, false hits */
	size_t ncov;
	struct job *jobs; /* --jobs N: N slots */
	int ranks;        /* under MPI (K9): the job's ranks, else 0 */
};

static volatile sig_atomic_t stop_signal; /* K5: the signal that asked to stop, or 0 */
static bool sigint_ignored; /* SIGINT was ignored when we started (a background job): keep it */

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

/* An option's value of 1 or more: -1, or the exit status of the usage error. */
static int parse_positive(const char *name, uint64_t *v)
{
	if (!pn_cli_parse_uint("check", name, optarg, v))
		return 2;
	if (*v < 1)
		return pn_cli_usage_error("check", "%s takes 1 or more", name);
	return -1;
}

static int parse_option(int c, struct check_args *a, char **argv)
{
	switch (c) {
	case OPT_JSON: a->json = optarg; return -1;
	case OPT_JUNIT: a->junit = optarg; return -1;
	case OPT_TRACES: a->traces = optarg; return -1;
	case OPT_COVERAGE: a->coverage = true; return -1;
	case OPT_QUIET: a->quiet = true; return -1;
	case OPT_NO_SHRINK: a->no_shrink = true; return -1;
	case OPT_TWICE: a->twice = true; return -1;
	case OPT_UNIT_STATES: return parse_positive("--unit-states", &a->unit_states);
	case OPT_POINTS_EVERY: return parse_positive("--points-every", &a->points_every);
	case OPT_CROSS_CHECK: return parse_positive("--cross-check", &a->cross_check);
	case OPT_DERIVE:
		if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
			return pn_cli_usage_error("check", "--derive takes on or off, not %s",
						  optarg);
		a->derive = strcmp(optarg, "on") == 0;
		return -1;
	case OPT_JOBS:
		if (!pn_cli_parse_uint("check", "--jobs", optarg, &a->jobs))
			return 2;
		if (a->jobs < 1 || a->jobs > 256)
			return pn_cli_usage_error("check", "--jobs takes 1 to 256, not %s", optarg);
		a->jobs_set = true;
		return -1;
	case OPT_MPI:
		if (!pn_mpi_built())
			return pn_cli_usage_error("check",
						  "--mpi: this penumbra was built without "
						  "MPI (cmake -DPN_MPI=ON, docs/cluster.md)");
		a->mpi = true;
		return -1;
	case OPT_RANK_TIMEOUT: return parse_positive("--rank-timeout", &a->rank_timeout_s);
	case OPT_TORN_WRITES:
		if (!pn_cli_parse_uint("check", "--torn-writes", optarg, &a->torn_writes))
			return 2;
		if (a->torn_writes < 1 || a->torn_writes > 2)
			return pn_cli_usage_error("check", "--torn-writes takes 1 or 2, not %s",
						  optarg);
		return -1;
	case OPT_NESTED: return pn_cli_parse_uint("check", "--nested", optarg, &a->nested) ? -1 : 2;
	case OPT_SEED:
		if (!pn_cli_parse_uint("check", "--seed", optarg, &a->seed))
			return 2;
		a->seed_set = true;
		return -1;
	default: return pn_cli_bad_option("check", c, argv);
	}
}

static int parse(int argc, char **argv, struct check_args *a)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"json", required_argument, NULL, OPT_JSON},
		{"junit", required_argument, NULL, OPT_JUNIT},
		{"jobs", required_argument, NULL, OPT_JOBS},
		{"seed", required_argument, NULL, OPT_SEED},
		{"coverage", no_argument, NULL, OPT_COVERAGE},
		{"traces", required_argument, NULL, OPT_TRACES},
		{"nested", required_argument, NULL, OPT_NESTED},
		{"quiet", no_argument, NULL, OPT_QUIET},
		{"no-shrink", no_argument, NULL, OPT_NO_SHRINK},
		{"points-every", required_argument, NULL, OPT_POINTS_EVERY},
		{"twice", no_argument, NULL, OPT_TWICE},
		{"unit-states", required_argument, NULL, OPT_UNIT_STATES},
		{"cross-check", required_argument, NULL, OPT_CROSS_CHECK},
		{"derive", required_argument, NULL, OPT_DERIVE},
		{"mpi", no_argument, NULL, OPT_MPI},
		{"rank-timeout", required_argument, NULL, OPT_RANK_TIMEOUT},
		{"torn-writes", required_argument, NULL, OPT_TORN_WRITES},
		{NULL, 0, NULL, 0},
	};
	int c, rc;
	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if ((rc = parse_option(c, a, argv)) >= 0)
			return rc;
	}
	a->mpi |= pn_mpi_built() && pn_mpi_detected();
	if (a->mpi && a->jobs_set)
		return pn_cli_usage_error("check", "--jobs and MPI do not mix: under mpirun the "
						   "ranks are the jobs (docs/cluster.md)");
	if (optind >= argc)
		return pn_cli_usage_error("check", "no scenario named");
	for (int i = optind; i < argc; i++) {
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
static bool writable_dir(const char *dir, char *why, size_t why_len)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			snprintf(why, why_len, "not a directory");
		else if (access(dir, W_OK | X_OK) != 0)
			snprintf(why, why_len, "%s", strerror(errno));
		else
			return true;
		return false;
	}
	if (errno != ENOENT) {
		snprintf(why, why_len, "%s", strerror(errno));
		return false;
	}
	char *copy = strdup(dir);
	PN_ASSERT(copy != NULL);
	const char *parent = dirname(copy);
	bool ok = stat(parent, &st) == 0 && S_ISDIR(st.st_mode) && access(parent, W_OK | X_OK) == 0;
	if (!ok)
		snprintf(why, why_len, "cannot be created in %s: %s", parent,
			 errno ? strerror(errno) : "not a directory");
	free(copy);
	return ok;
}

/* Opens --json / --junit and checks --traces; false (message printed) when one is unusable. */
static bool open_outputs(const struct check_args *a, FILE **json, FILE **junit)
{
	char why[512];
	*json = *junit = NULL;
	errno = 0;
	if (!writable_dir(a->traces, why, sizeof(why))) {
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
	return true;
}

static bool load_item(struct item *it, const struct check_args *a);

/* ---- checking one scenario ---- */
/* K6: the violation of the shrunk scenario becomes the one reported. */
static void adopt_shrunk(struct outcome *out, const struct pn_check_result *r)
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
static void write_trace(struct item *it, const struct check_args *a,
			const struct pn_check_options *o)
{
	struct outcome *out = &it->out;
	struct pn_scenario small;
	static struct pn_check_result r;
	char err[PN_ERROR_LEN] = "";
	r = out->res;
	if (!pn_scenario_copy(&it->sc, &small)) {
		snprintf(out->error, sizeof(out->error), "trace not written: out of memory");
		out->rc = pn_cli_worst(out->rc, 2);
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
		out->rc = pn_cli_worst(out->rc, 2);
	}
	pn_scenario_free(&small);
}

/* K8's test hook: the judged state whose fast verdict is made wrong (0: none). */
static uint64_t cross_fault(void)
{
	uint64_t k = 0;
	const char *env = getenv("PN_TEST_CROSS_FAULT");
	return env && pn_cli_parse_uint("check", "PN_TEST_CROSS_FAULT", env, &k) ? k : 0;
}

static void check_one(struct item *it, const struct check_args *a, pn_check_progress_fn fn,
		      void *arg)
{
	struct pn_check_options o = {
		.progress = fn,
		.progress_arg = arg,
		.stop = &stop_signal,
		.nested_every = (uint32_t)a->nested,
		.twice = a->twice,
		.cross_check_every = a->cross_check,
		.cross_check_fault = cross_fault(),
		.derive = a->derive,
	};
	struct outcome *out = &it->out;
	double t0 = pn_progress_clock_s();
	out->rc = pn_check_scenario(&it->sc, &o, &out->res);
	if (out->res.error)
		snprintf(out->error, sizeof(out->error), "%s", out->res.detail);
	else if (out->res.violation && out->rc != 3) {
		o.progress = NULL;
		o.twice = false; /* shrinking re-checks variants: once each */
		write_trace(it, a, &o);
	}
	out->res.seconds = pn_progress_clock_s() - t0; /* K6: shrinking included */
}

/* ---- coverage markers, merged across child processes ---- */
static void cov_init(struct run *r)
{
	struct pn_testcase_site *const *sites;
	r->ncov = pn_testcase_all(&sites);
	r->cov = calloc(r->ncov + 1, sizeof(*r->cov));
	PN_ASSERT(r->cov != NULL);
}

/* Adds this process's hits to the totals and zeroes them (the next scenario starts at 0). */
static void cov_take_local(struct run *r)
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites);
	PN_ASSERT(n == r->ncov);
	for (size_t i = 0; i < n; i++) {
		r->cov[i][0] += sites[i]->hits_true;
		r->cov[i][1] += sites[i]->hits_false;
		sites[i]->hits_true = sites[i]->hits_false = 0;
	}
}

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
		order[i]->hits_true = r->cov[i][0];
		order[i]->hits_false = r->cov[i][1];
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
static const char *verdict(const struct item *it)
{
	return !it->loaded || it->out.res.error ? "error"
	       : it->out.res.violation          ? "violation"
						: "pass";
}

static const char *expected(const struct item *it)
{
	return !it->loaded ? NULL : it->out.res.expected_violation ? "violation" : "pass";
}

static void print_item(struct run *r, struct item *it)
{
	const struct pn_check_result *res = &it->out.res;
	FILE *h = r->human;
	pn_progress_clear(&r->prog);
	fprintf(h,
		"%-4s %-36s %-9s (expected %-9s) %8llu points %10llu states %9llu recovered %7.2fs\n",
		res->ok && !it->out.error[0] ? "ok" : "FAIL", it->name, verdict(it),
		expected(it) ? expected(it) : "-", (unsigned long long)res->crash_points,
		(unsigned long long)res->crash_states, (unsigned long long)res->recoveries,
		res->seconds);
	if (res->diverged)
		fprintf(h, "     %s\n", res->divergence);
	if (res->capped_points)
		fprintf(h,
			"     note: at %llu crash points crash.torn_writes: 2 stopped at %llu states "
			"with a tear (the others were not enumerated)\n",
			(unsigned long long)res->capped_points,
			(unsigned long long)PN_CRASH_MIXED_MAX);
	if (res->violation && !res->error && !r->a->quiet) {
		pn_trace_report(h, &it->sc, res);
		if (it->out.shrunk &&
		    (it->out.found_point != res->crash_point ||
		     strcmp(it->out.found_state, res->state[0] ? res->state : "none")))
			fprintf(h,
				"  found first: crash point event %llu, state %s (before shrinking; "
				"the report and the trace are the shrunk scenario's)\n",
				(unsigned long long)it->out.found_point, it->out.found_state);
	}
	if (it->out.error[0])
		fprintf(h, "     %s\n", it->out.error);
	fflush(h);
	it->printed = true;
}

static void mark_done(struct run *r, struct item *it)
{
	PN_ASSERT(!it->done);
	it->done = true;
	r->done++;
	if (!r->jobs)
		r->states_done += it->out.res.crash_states; /* --jobs: counted per unit */
	r->schedules_done += it->out.res.schedules_explored;
}

/* Prints the finished items at the head of the list, in the order named. */
static void print_ready(struct run *r)
{
	while (r->printed < r->n && r->items[r->printed].done) {
		if (!r->items[r->printed].printed)
			print_item(r, &r->items[r->printed]);
		r->printed++;
	}
}

static void serial_progress(void *arg, const struct pn_check_result *res)
{
	struct run *r = arg;
	r->prog.schedules = r->schedules_done + res->schedules_explored;
	pn_progress_update(&r->prog, r->done, r->states_done + res->crash_states, false);
}

static void run_serial(struct run *r)
{
	for (size_t i = 0; i < r->n && !stop_signal; i++) {
		struct item *it = &r->items[i];
		if (it->done)
			continue;
		check_one(it, r->a, serial_progress, r);
		cov_take_local(r);
		if (it->out.rc == 3)
			break;
		mark_done(r, it);
		print_ready(r);
		pn_progress_update(&r->prog, r->done, r->states_done, true);
	}
}

/* ---- --jobs N: work units in children (K4, K7) ---- */
enum { MSG_PROGRESS = 1, MSG_OUTCOME, MSG_COVERAGE, MSG_UNIT };

struct msg_hdr {
	uint32_t type, len;
};

struct progress_msg {
	uint64_t crash_points, crash_states, recoveries, events;
};

struct child_ctx {
	int fd;
	double last_s;
};

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(2); /* the parent is gone */
		p += n;
		len -= (size_t)n;
	}
}

static void send_msg(int fd, uint32_t type, const void *payload, size_t len)
{
	struct msg_hdr h = {type, (uint32_t)len};
	PN_ASSERT(len <= UINT32_MAX);
	write_all(fd, &h, sizeof(h));
	write_all(fd, payload, len);
}

static void child_progress(void *arg, const struct pn_check_result *res)
{
	struct child_ctx *cc = arg;
	double now = pn_progress_clock_s();
	if ((now - cc->last_s) * 1000 < PN_PROGRESS_INTERVAL_MS)
		return;
	cc->last_s = now;
	struct progress_msg m = {res->crash_points, res->crash_states, res->recoveries,
				 res->events};
	send_msg(cc->fd, MSG_PROGRESS, &m, sizeof(m));
}

static struct pn_check_options unit_options(const struct check_args *a, void *arg)
{
	return (struct pn_check_options){.progress = child_progress,
					 .progress_arg = arg,
					 .stop = &stop_signal,
					 .nested_every = (uint32_t)a->nested,
					 .twice = a->twice,
					 .cross_check_every = a->cross_check,
					 .cross_check_fault = cross_fault(),
					 .derive = a->derive};
}

/* A child: one unit (its result's bytes, MSG_UNIT) or an item's trace (MSG_OUTCOME, then
 * MSG_COVERAGE: what shrinking hit). */
static _Noreturn void child(struct run *r, const struct job *j, const struct pn_unit *u, int fd,
			    pid_t parent)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, ign = {.sa_handler = SIG_IGN};
	sigaction(SIGINT, sigint_ignored ? &ign : &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(2);
	for (size_t i = 0; i < r->a->jobs; i++)
		if (r->jobs[i].pid > 0)
			close(r->jobs[i].fd);
	struct child_ctx cc = {.fd = fd, .last_s = pn_progress_clock_s()};
	struct pn_check_options o = unit_options(r->a, &cc);
	if (j->finish) {
		double t0 = pn_progress_clock_s();
		o.progress = NULL;
		o.twice = false; /* shrinking re-checks variants: once each */
		write_trace(j->it, r->a, &o);
		j->it->out.res.seconds += pn_progress_clock_s() - t0; /* K6 */
		send_msg(fd, MSG_OUTCOME, &j->it->out, sizeof(j->it->out));
		memset(r->cov, 0, r->ncov * sizeof(*r->cov));
		cov_take_local(r);
		send_msg(fd, MSG_COVERAGE, r->cov, r->ncov * sizeof(*r->cov));
		_exit(0);
	}
	struct pn_unit_result ur;
	size_t len;
	struct pn_unit_lookup lk; /* K9: rank 0's own unit's lookups (cli/mpirank.h M4) */
	bool look = r->ranks && pn_mpi_chan_child(&lk, (uint32_t)(j->it - r->items));
	pn_unit_check(&j->it->sc, &o, u, look ? &lk : NULL, &ur);
	uint8_t *bytes = pn_unit_result_encode(&ur, &len);
	send_msg(fd, MSG_UNIT, bytes, len);
	_exit(0);
}

/* K7's test hook: whether this unit's child is to die at once. */
static bool killed_by_test(const struct run *r, const struct job *j)
{
	static uint64_t killed;
	uint64_t times;
	const char *env = getenv("PN_TEST_KILL_UNIT");
	if (!env || j->finish || j->it != &r->items[0] || j->unit != 0 ||
	    !pn_cli_parse_uint("check", "PN_TEST_KILL_UNIT", env, &times) || killed >= times)
		return false;
	killed++;
	return true;
}

static void spawn(struct run *r, struct job *j, const struct pn_unit *u)
{
	bool die = killed_by_test(r, j);
	int p[2];
	PN_ASSERT(pipe(p) == 0);
	(void)fcntl(p[1], F_SETPIPE_SZ, PIPE_BYTES); /* K4; the kernel may round it up */
	if (r->ranks && !j->finish)
		pn_mpi_chan_open();
	fflush(NULL);
	pid_t parent = getpid(), pid = fork();
	PN_ASSERT(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (die)
			raise(SIGKILL);
		child(r, j, u, p[1], parent);
	}
	close(p[1]);
	if (r->ranks && !j->finish)
		pn_mpi_chan_parent();
	j->pid = pid;
	j->fd = p[0];
}

static void handle_msg(struct run *r, struct job *j, const struct msg_hdr *h, const uint8_t *body)
{
	if (h->type == MSG_PROGRESS && h->len == sizeof(struct progress_msg)) {
		struct progress_msg m;
		memcpy(&m, body, sizeof(m));
		j->live_states = m.crash_states;
	} else if (h->type == MSG_UNIT && !j->finish && !j->got_result) {
		j->got_result = pn_unit_result_decode(body, h->len, &j->result, j->why,
						      sizeof(j->why));
	} else if (h->type == MSG_OUTCOME && j->finish && h->len == sizeof(struct outcome)) {
		memcpy(&j->it->out, body, sizeof(j->it->out));
		j->got_result = true;
	} else if (h->type == MSG_COVERAGE && h->len == r->ncov * sizeof(*r->cov)) {
		for (size_t i = 0; i < r->ncov; i++) {
			uint64_t tf[2];
			memcpy(tf, body + i * sizeof(tf), sizeof(tf));
			r->cov[i][0] += tf[0];
			r->cov[i][1] += tf[1];
		}
	}
}

/* Reads what the child's pipe holds now; false at end of file. */
static bool drain(struct run *r, struct job *j)
{
	uint8_t chunk[65536];
	ssize_t got = read(j->fd, chunk, sizeof(chunk));
	if (got < 0)
		return errno == EINTR || errno == EAGAIN;
	if (got == 0)
		return false;
	if (j->len + (size_t)got > j->cap) {
		j->cap = PN_MAX(j->cap * 2, j->len + (size_t)got);
		j->buf = realloc(j->buf, j->cap);
		PN_ASSERT(j->buf != NULL);
	}
	memcpy(j->buf + j->len, chunk, (size_t)got);
	j->len += (size_t)got;
	size_t at = 0;
	struct msg_hdr h;
	while (j->len - at >= sizeof(h)) {
		memcpy(&h, j->buf + at, sizeof(h));
		if (j->len - at - sizeof(h) < h.len)
			break;
		handle_msg(r, j, &h, j->buf + at + sizeof(h));
		at += sizeof(h) + h.len;
	}
	memmove(j->buf, j->buf + at, j->len - at);
	j->len -= at;
	return true;
}

/* An item whose plan is finished: its merged result; a violation still needs its trace. */
static bool item_merged(struct run *r, struct item *it)
{
	struct outcome *out = &it->out;
	out->rc = pn_plan_result(it->plan, &out->res, r->cov, r->ncov);
	out->res.seconds = pn_progress_clock_s() - it->t0;
	if (out->res.error)
		snprintf(out->error, sizeof(out->error), "%s", out->res.detail);
	pn_plan_free(it->plan);
	it->plan = NULL;
	if (out->res.violation && out->rc != 3)
		return false;
	if (out->rc != 3)
		mark_done(r, it);
	return true;
}

/* Why a child gave no result (K7: its unit is handed out again once, then an error). */
static void no_result(const struct job *j, int status, char *why, size_t len)
{
	if (j->why[0])
		snprintf(why, len, "its result does not decode: %s", j->why);
	else if (WIFSIGNALED(status))
		snprintf(why, len, "the checking process died of signal %d", WTERMSIG(status));
	else
		snprintf(why, len, "the checking process exited with status %d before its result",
			 WEXITSTATUS(status));
}

/* U1: the children of units of `it` after a violation are killed (their results dropped). */
static void cancel_jobs(struct run *r, const struct item *it)
{
	for (size_t i = 0; i < r->a->jobs; i++) {
		struct job *o = &r->jobs[i];
		if (o->pid > 0 && o->it == it && !o->finish && !o->cancelled &&
		    pn_plan_cancelled(it->plan, o->unit)) {
			o->cancelled = true;
			kill(o->pid, SIGKILL); /* not reaped yet: the pid is still its own */
		}
	}
}

/* The child closed its pipe: reap it; its result, or why it has none. */
static void reap(struct run *r, struct job *j)
{
	int status = j->status;
	char why[400];
	while (!j->exited && waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(j->fd);
	free(j->buf);
	struct item *it = j->it;
	bool got = j->got_result, finish = j->finish, cancelled = j->cancelled;
	struct pn_unit_result res = j->result;
	uint32_t unit = j->unit;
	no_result(j, status, why, sizeof(why));
	*j = (struct job){.fd = -1};
	if (cancelled || (!got && stop_signal)) {
		pn_unit_result_free(&res);
		return; /* dropped (U1), or stopped before it finished: not done (K5) */
	}
	if (finish) {
		it->finishing = false;
		if (!got) {
			it->out.rc = 2;
			it->out.res.error = true;
			snprintf(it->out.error, sizeof(it->out.error), "%s", why);
		}
		if (it->out.rc != 3)
			mark_done(r, it);
		return;
	}
	if (got) {
		r->states_done += res.res.crash_states;
		pn_plan_done(it->plan, unit, &res);
	} else {
		pn_plan_failed(it->plan, unit, why);
	}
	pn_unit_result_free(&res);
	cancel_jobs(r, it);
}

/* The next job for a free slot: a ready unit of the first item that has one, or the trace
 * of an item whose units are all merged. False: nothing to start now. */
static bool next_job(struct run *r, struct job *j, struct pn_unit *u)
{
	for (size_t i = 0; i < r->n; i++) {
		struct item *it = &r->items[i];
		if (!it->loaded || it->done || it->finishing)
			continue;
		if (!it->plan && it->out.res.violation) {
			*j = (struct job){.it = it, .finish = true};
			it->finishing = true;
			return true;
		}
		if (!it->plan) {
			it->plan = pn_plan_new(&it->sc, (uint32_t)r->a->jobs, r->a->unit_states,
					       (uint32_t)r->a->nested, r->a->twice);
			it->t0 = pn_progress_clock_s();
		}
		if (pn_plan_finished(it->plan)) {
			if (!item_merged(r, it)) /* a violation: its trace next */
				return next_job(r, j, u);
			continue;
		}
		uint32_t id;
		if (pn_plan_next(it->plan, &id, u)) {
			*j = (struct job){.it = it, .unit = id};
			return true;
		}
	}
	return false;
}

/* K5: terminate the running children, reap them, keep any result they had sent. */
static void stop_children(struct run *r)
{
	size_t n = r->a->jobs;
	for (size_t i = 0; i < n; i++)
		if (r->jobs[i].pid > 0)
			kill(r->jobs[i].pid, SIGTERM);
	for (int ms = 0; ms < KILL_GRACE_MS; ms += 10) {
		bool alive = false;
		for (size_t i = 0; i < n; i++) {
			struct job *j = &r->jobs[i];
			if (j->pid > 0 && !j->exited &&
			    waitpid(j->pid, &j->status, WNOHANG) == j->pid)
				j->exited = true;
			alive |= j->pid > 0 && !j->exited;
		}
		if (!alive)
			break;
		usleep(10000);
	}
	for (size_t i = 0; i < n; i++) {
		struct job *j = &r->jobs[i];
		if (j->pid <= 0)
			continue;
		if (!j->exited)
			kill(j->pid, SIGKILL); /* not reaped yet: the pid is still its own */
		while (drain(r, j))
			;
		reap(r, j);
	}
}

static uint64_t live_states(const struct run *r)
{
	uint64_t n = r->states_done;
	for (size_t i = 0; i < r->a->jobs; i++)
		if (r->jobs[i].pid > 0 && !r->jobs[i].finish)
			n += r->jobs[i].live_states;
	return n;
}

static void run_parallel(struct run *r)
{
	size_t njobs = r->a->jobs, running = 0;
	struct pollfd *pfd = calloc(njobs, sizeof(*pfd));
	struct job **who = calloc(njobs, sizeof(*who));
	r->jobs = calloc(njobs, sizeof(*r->jobs));
	PN_ASSERT(pfd && who && r->jobs);
	for (;;) {
		for (size_t i = 0; i < njobs && !stop_signal; i++) {
			struct pn_unit u;
			if (r->jobs[i].pid == 0 && next_job(r, &r->jobs[i], &u)) {
				spawn(r, &r->jobs[i], &u);
				running++;
			}
		}
		print_ready(r);
		if (running == 0 || stop_signal)
			break;
		nfds_t m = 0;
		for (size_t i = 0; i < njobs; i++) {
			if (r->jobs[i].pid > 0) {
				pfd[m] = (struct pollfd){.fd = r->jobs[i].fd, .events = POLLIN};
				who[m++] = &r->jobs[i];
			}
		}
		PN_ASSERT(m == running);
		if (poll(pfd, m, PN_PROGRESS_INTERVAL_MS) < 0) {
			PN_ASSERT(errno == EINTR);
			continue;
		}
		for (nfds_t i = 0; i < m; i++) {
			if (pfd[i].revents && !drain(r, who[i])) {
				reap(r, who[i]);
				running--;
			}
		}
		print_ready(r);
		pn_progress_update(&r->prog, r->done, live_states(r), false);
	}
	if (stop_signal)
		stop_children(r);
	for (size_t i = 0; i < r->n; i++) {
		pn_plan_free(r->items[i].plan);
		r->items[i].plan = NULL;
	}
	free(pfd);
	free(who);
	free(r->jobs);
	r->jobs = NULL;
}

/* ---- MPI: units on the other ranks (K9, cli/mpirank.h) ---- */
/* A rank's unit, in the child process the rank checks it in. */
static uint8_t *rank_unit(void *arg, uint32_t item, const struct pn_unit *u,
			  struct pn_unit_lookup *lk, size_t *len)
{
	struct run *r = arg;
	struct pn_check_options o = unit_options(r->a, NULL);
	struct pn_unit_result ur;
	o.progress = NULL;
	pn_unit_check(&r->items[item].sc, &o, u, lk, &ur);
	uint8_t *bytes = pn_unit_result_encode(&ur, len);
	pn_unit_result_free(&ur);
	return bytes;
}

/* Rank 0 writes a violation's trace itself (the traces are its files). */
static void rank_trace(struct run *r, struct item *it)
{
	double t0 = pn_progress_clock_s();
	struct pn_check_options o = unit_options(r->a, NULL);
	o.progress = NULL;
	o.twice = false; /* shrinking re-checks variants: once each */
	write_trace(it, r->a, &o);
	it->out.res.seconds += pn_progress_clock_s() - t0; /* K6 */
	cov_take_local(r);
	it->finishing = false;
	if (it->out.rc != 3)
		mark_done(r, it);
	pn_mpi_touch();
}

/* Up to this many ranks, rank 0 checks units too, one at a time in a child process of its
 * own as --jobs does (K9): one checking process more where it counts; beyond, it only leads.
 * With every other rank lost it checks the rest itself, whatever the count. */
#define PN_MPI_LEAD_CHECKS_UPTO 8

struct rank_counts {
	uint64_t units, own; /* handed out, of them checked by rank 0 */
};

static bool lead_checks(const struct run *r)
{
	return r->ranks <= PN_MPI_LEAD_CHECKS_UPTO || pn_mpi_live() == 0;
}

/* U1 after a violation in `it`: the units after it cancelled on their ranks and on rank 0. */
static void rank_cancel(struct run *r, const struct item *it)
{
	for (int k = 1; k < r->ranks; k++) {
		uint32_t item, unit;
		if (pn_mpi_busy(k, &item, &unit) && &r->items[item] == it &&
		    pn_plan_cancelled(it->plan, unit))
			pn_mpi_cancel(k);
	}
	cancel_jobs(r, it);
}

/* A unit's answer, or its rank lost: merged, or handed out again (U5); units after a
 * violation cancelled on their ranks (U1). */
static void rank_answer(struct run *r, struct pn_mpi_event *ev)
{
	struct item *it = &r->items[ev->item];
	struct pn_unit_result res;
	char why[400];
	bool got = false;
	if (ev->kind == PN_MPI_RESULT) {
		char bad[256];
		got = pn_unit_result_decode(ev->bytes, ev->len, &res, bad, sizeof(bad));
		snprintf(why, sizeof(why), "rank %d: its result does not decode: %s", ev->rank,
			 bad);
	} else {
		snprintf(why, sizeof(why), "%s", ev->why);
	}
	free(ev->bytes);
	bool dropped = !it->plan || pn_plan_cancelled(it->plan, ev->unit);
	if (!got && !dropped) {
		pn_progress_clear(&r->prog);
		fprintf(stderr, "penumbra check: %s; unit %u of %s%s\n", why, ev->unit, it->name,
			ev->kind == PN_MPI_LOST ? " is handed to another rank"
						: " is handed out again (once)");
	}
	if (dropped) {
		if (got)
			pn_unit_result_free(&res);
		return; /* dropped (U1) */
	}
	if (got) {
		r->states_done += res.res.crash_states;
		pn_plan_done(it->plan, ev->unit, &res);
		pn_unit_result_free(&res);
	} else {
		pn_plan_failed(it->plan, ev->unit, why);
	}
	rank_cancel(r, it);
}

/* Hands a unit to every idle rank, and to rank 0's own child when it checks (a trace is
 * written here); false when no rank and no child of rank 0 is busy. */
static bool rank_dispatch(struct run *r, struct rank_counts *c)
{
	bool busy = false;
	struct job j;
	struct pn_unit u;
	for (int k = 1; k < r->ranks; k++) {
		while (!stop_signal && pn_mpi_idle(k) && next_job(r, &j, &u)) {
			if (j.finish) {
				rank_trace(r, j.it);
				continue;
			}
			pn_mpi_send_unit(k, (uint32_t)(j.it - r->items), j.unit, &u);
			c->units++;
		}
		uint32_t item, unit;
		busy |= pn_mpi_busy(k, &item, &unit);
	}
	struct job *own = &r->jobs[0];
	while (!stop_signal && own->pid == 0 && lead_checks(r) && next_job(r, &j, &u)) {
		if (j.finish) {
			rank_trace(r, j.it);
			continue;
		}
		*own = j;
		spawn(r, own, &u);
		c->units++;
		c->own++;
	}
	return busy || own->pid > 0;
}

/* Rank 0's own unit: its child's messages read, the child reaped and its unit merged when it
 * is done (as --jobs does, K4), the units after a violation cancelled everywhere. */
static void rank_own(struct run *r)
{
	struct job *own = &r->jobs[0];
	struct pollfd p = {.fd = own->fd, .events = POLLIN};
	while (own->pid > 0 && poll(&p, 1, 0) > 0) {
		if (!drain(r, own)) {
			struct item *it = own->it;
			bool unit = !own->finish;
			reap(r, own);
			if (unit) {
				pn_mpi_chan_close(); /* M4: the child's last frames */
				rank_cancel(r, it);
			}
		}
	}
}

/* The end of an MPI check: the units still in work when it stopped (K5), the message
 * counts. */
static void rank_end(struct run *r, const struct rank_counts *c)
{
	for (int k = 1; k < r->ranks; k++) {
		uint32_t item, unit;
		char who[128];
		pn_mpi_name(k, who, sizeof(who));
		if (pn_mpi_busy(k, &item, &unit))
			fprintf(stderr, "penumbra check: stopped while %s checked unit %u of %s\n",
				who, unit, r->items[item].name);
	}
	struct pn_mpi_tally t;
	pn_mpi_stop(&t, !stop_signal);
	pn_progress_clear(&r->prog);
	fprintf(r->human,
		"mpi: %d ranks (%d checking at the end), %llu units (%llu on rank 0), %llu "
		"messages, %llu bytes through rank 0; lookups: %llu keys asked, %llu answered, "
		"%llu relearned, %llu units run again, %llu messages, %llu bytes between ranks\n",
		r->ranks, pn_mpi_live(), (unsigned long long)c->units, (unsigned long long)c->own,
		(unsigned long long)t.messages, (unsigned long long)t.bytes,
		(unsigned long long)t.asked, (unsigned long long)t.answered,
		(unsigned long long)t.relearned, (unsigned long long)t.reruns,
		(unsigned long long)t.lk_messages, (unsigned long long)t.lk_bytes);
}

static void run_ranks(struct run *r)
{
	struct rank_counts c = {0};
	pn_mpi_lead(r->ranks, (double)r->a->rank_timeout_s);
	r->jobs = calloc(r->a->jobs, sizeof(*r->jobs)); /* slot 0: rank 0's own unit */
	PN_ASSERT(r->jobs != NULL);
	while (rank_dispatch(r, &c) && !stop_signal) {
		struct pn_mpi_event ev;
		print_ready(r);
		if (pn_mpi_next(&ev, r->jobs[0].pid > 0 ? 2 : PN_PROGRESS_INTERVAL_MS))
			rank_answer(r, &ev);
		rank_own(r);
		print_ready(r);
		pn_progress_update(&r->prog, r->done, live_states(r), false);
	}
	if (stop_signal)
		stop_children(r);
	print_ready(r);
	rank_end(r, &c);
	for (size_t i = 0; i < r->n; i++) {
		pn_plan_free(r->items[i].plan);
		r->items[i].plan = NULL;
	}
	free(r->jobs);
	r->jobs = NULL;
}

/* A rank other than 0: the same scenarios loaded, units served until rank 0 stops. */
static int serve_rank(const struct check_args *a)
{
	struct run r = {.a = a, .n = a->npaths};
	r.items = calloc(a->npaths, sizeof(*r.items));
	PN_ASSERT(r.items != NULL);
	for (size_t i = 0; i < r.n; i++) {
		r.items[i].path = a->paths[i];
		r.items[i].loaded = load_item(&r.items[i], a);
	}
	pn_mpi_serve(rank_unit, &r);
	for (size_t i = 0; i < r.n; i++)
		if (r.items[i].loaded)
			pn_scenario_free(&r.items[i].sc);
	free(r.items);
	return 0;
}

/* ---- summary, JSON, JUnit ---- */
static void print_summary(struct run *r)
{
	size_t ok = 0, viol = 0, capped = 0;
	uint64_t states = 0, rec = 0;
	double secs = 0;
	pn_progress_clear(&r->prog);
	for (size_t i = 0; i < r->n; i++) {
		struct item *it = &r->items[i];
		if (!it->done)
			continue;
		if (!it->printed)
			print_item(r, it); /* finished after one that did not (K5) */
		ok += it->out.res.ok && !it->out.error[0];
		viol += it->out.res.violation;
		states += it->out.res.crash_states;
		rec += it->out.res.recoveries;
		secs += it->out.res.seconds;
		capped += it->out.res.capped_points > 0;
	}
	fprintf(r->human,
		"\n%zu scenarios: %zu as expected, %zu not; %zu violations found; %llu crash "
		"states, %llu recovered (%.0f per second of checking)\n",
		r->done, ok, r->done - ok, viol, (unsigned long long)states,
		(unsigned long long)rec, secs > 0 ? rec / secs : 0.0);
	if (capped)
		fprintf(r->human,
			"note: %zu scenarios had crash points whose torn-write states were capped "
			"(crash.torn_writes: 2, docs/checker.md section 10)\n",
			capped);
	if (stop_signal)
		fprintf(r->human,
			"interrupted by %s: %zu of %zu scenarios finished, the others were not "
			"checked\n",
			stop_signal == SIGINT ? "SIGINT" : "SIGTERM", r->done, r->n);
	fprintf(r->human, "check: %zu passed, %zu failed", ok, r->done - ok);
	if (stop_signal)
		fprintf(r->human, ", %zu not finished (interrupted)", r->n - r->done);
	if (r->ranks)
		fprintf(r->human, "; %d MPI ranks", r->ranks);
	fprintf(r->human, "\n");
}

static json_t *violation_json(const struct outcome *out)
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

static json_t *item_json(const struct item *it)
{
	const struct pn_check_result *r = &it->out.res;
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(it->name));
	json_object_set_new(o, "file", json_string(it->path));
	json_object_set_new(o, "verdict", json_string(verdict(it)));
	json_object_set_new(o, "expected", expected(it) ? json_string(expected(it)) : json_null());
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
	json_object_set_new(o, "violation",
			    r->violation && !r->error ? violation_json(&it->out) : json_null());
	if (it->out.error[0])
		json_object_set_new(o, "error", json_string(it->out.error));
	return o;
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
	PN_ASSERT(rows != NULL && n == r->ncov);
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct cov_row){sites[i], r->cov[i][0], r->cov[i][1]};
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
	for (size_t i = 0; i < r->n; i++) {
		if (r->items[i].done)
			json_array_append_new(arr, item_json(&r->items[i]));
		else
			json_array_append_new(left, json_string(r->items[i].path));
	}
	json_object_set_new(root, "scenarios", arr);
	json_object_set_new(root, "interrupted", json_boolean(stop_signal != 0));
	json_object_set_new(root, "not_finished", left);
	if (r->ranks)
		json_object_set_new(root, "ranks", json_integer(r->ranks));
	if (r->a->coverage)
		json_object_set_new(root, "coverage", coverage_json(r));
	bool ok = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
		  fputc('\n', f) != EOF;
	json_decref(root);
	return pn_cli_close_output("check", f, path, ok);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
	}
}

static void junit_case(FILE *f, const struct item *it)
{
	const struct outcome *out = &it->out;
	bool error = !it->loaded || out->res.error || out->error[0];
	fprintf(f, "    <testcase classname=\"penumbra.check\" name=\"");
	xml_text(f, it->name);
	fprintf(f, "\" file=\"");
	xml_text(f, it->path);
	fprintf(f, "\" time=\"%.3f\">", it->done ? out->res.seconds : 0.0);
	if (!it->done) {
		fprintf(f, "<skipped message=\"interrupted before this scenario finished\"/>");
	} else if (error || !out->res.ok) {
		const char *tag = error ? "error" : "failure";
		fprintf(f, "\n      <%s message=\"verdict %s, expected %s\">", tag, verdict(it),
			expected(it) ? expected(it) : "-");
		xml_text(f, out->error[0] ? out->error : out->res.detail);
		fprintf(f, "</%s>\n    ", tag);
	}
	fprintf(f, "</testcase>\n");
}

static int write_junit(const struct run *r, FILE *f, const char *path)
{
	size_t failures = 0, errors = 0;
	double secs = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct item *it = &r->items[i];
		bool error = !it->loaded || it->out.res.error || it->out.error[0];
		failures += it->done && !error && !it->out.res.ok;
		errors += it->done && error;
		secs += it->done ? it->out.res.seconds : 0;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
	fprintf(f,
		"  <testsuite name=\"penumbra check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		"skipped=\"%zu\" time=\"%.3f\">\n",
		r->n, failures, errors, r->n - r->done, secs);
	fprintf(f, "    <properties><property name=\"interrupted\" value=\"%s\"/></properties>\n",
		stop_signal ? "true" : "false");
	for (size_t i = 0; i < r->n; i++)
		junit_case(f, &r->items[i]);
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

static bool load_item(struct item *it, const struct check_args *a)
{
	char err[PN_ERROR_LEN] = "";
	if (!pn_scenario_load(it->path, &it->sc, err, sizeof(err))) {
		pn_scenario_free(&it->sc);
		fprintf(stderr, "%s\n", err[0] ? err : "cannot load the scenario");
		file_stem(it->path, it->name, sizeof(it->name));
		snprintf(it->out.error, sizeof(it->out.error), "%s",
			 err[0] ? err : "cannot be loaded");
		it->out.rc = 2;
		return false;
	}
	snprintf(it->name, sizeof(it->name), "%s", it->sc.name);
	if (a->seed_set)
		it->sc.seed = a->seed;
	if (a->torn_writes) /* given: then written to its traces, which replay it */
		it->sc.crash.torn_writes = (uint32_t)a->torn_writes;
	if (a->points_every > 1 && it->sc.crash.points == PN_POINTS_ALL) {
		it->sc.crash.points = PN_POINTS_EVERY;
		it->sc.crash.every = a->points_every;
	}
	return true;
}

static int check_all(struct run *r, FILE *json, FILE *junit)
{
	int rc = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct item *it = &r->items[i];
		it->path = r->a->paths[i];
		it->loaded = load_item(it, r->a);
		if (!it->loaded)
			mark_done(r, it);
	}
	pn_progress_init(&r->prog, "check", "scenarios", "states", r->n);
	print_ready(r);
	if (r->ranks > 1)
		run_ranks(r);
	else if (r->a->jobs > 1)
		run_parallel(r);
	else
		run_serial(r);
	print_summary(r);
	if (r->a->coverage)
		print_coverage(r);
	for (size_t i = 0; i < r->n; i++)
		rc = pn_cli_worst(rc, r->items[i].done ? r->items[i].out.rc : 0);
	if (json)
		rc = pn_cli_worst(rc, write_json(r, json, r->a->json));
	if (junit)
		rc = pn_cli_worst(rc, write_junit(r, junit, r->a->junit));
	return stop_signal ? EXIT_INTERRUPTED : rc;
}

int pn_cmd_check(int argc, char **argv)
{
	struct check_args a = {.jobs = 1,
			       .nested = 64,
			       .derive = true,
			       .traces = "penumbra-traces",
			       .unit_states = 2048,
			       .rank_timeout_s = 60};
	int rc = parse(argc, argv, &a), rank = 0, ranks = 0;
	FILE *json = NULL, *junit = NULL;
	if (rc < 0 && a.mpi) { /* K9 */
		pn_mpi_start(&rank, &ranks);
		a.jobs = ranks > 1 ? (uint64_t)ranks - 1 : 1;
		if (rank > 0)
			rc = serve_rank(&a);
	}
	if (rc < 0 && !open_outputs(&a, &json, &junit))
		rc = 2;
	if (rc < 0) {
		struct sigaction on = {.sa_handler = on_stop_signal}, old_int, old_term;
		sigemptyset(&on.sa_mask);
		stop_signal = 0;
		sigaction(SIGINT, NULL, &old_int);
		sigint_ignored = old_int.sa_handler == SIG_IGN;
		if (!sigint_ignored)
			sigaction(SIGINT, &on, NULL);
		sigaction(SIGTERM, &on, &old_term);
		struct run r = {.a = &a, .n = a.npaths, .ranks = ranks};
		r.human = a.json && strcmp(a.json, "-") == 0 ? stderr : stdout;
		r.items = calloc(a.npaths, sizeof(*r.items));
		PN_ASSERT(r.items != NULL);
		cov_init(&r);
		rc = check_all(&r, json, junit);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		for (size_t i = 0; i < r.n; i++)
			if (r.items[i].loaded)
				pn_scenario_free(&r.items[i].sc);
		free(r.items);
		free(r.cov);
	}
	if (ranks)
		rc = pn_mpi_end(rc, rank == 0 && stop_signal);
	for (size_t i = 0; i < a.npaths; i++)
		free(a.paths[i]);
	free(a.paths);
	return rc;
}

/*
 * cmd_check.c: `penumbra check S.yaml... | DIR` (cli layer): for each scenario, every crash
 * point and crash state (model/check.c), a verdict compared with the scenario's `expect`,
 * a counterexample report and replayable trace for each violation, a summary table, and
 * --json / --junit for CI. --jobs N runs N scenarios at once in child processes (the unit
 * of work is one scenario; results are printed in the order the scenarios were named).
 * Exit: 0 every verdict as expected, 1 any not, 2 bad input.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checker.h"
#include "shrink.h"
#include "trace.h"

static const char usage[] =
	"usage: penumbra check S.yaml... | DIR [--json FILE] [--junit FILE] [--jobs N]\n"
	"                      [--seed N] [--traces DIR] [--nested N] [--coverage] [--quiet]\n"
	"                      [--no-shrink] [--twice]\n"
	"\n"
	"Enumerates the crash points and crash states of each scenario (every *.yaml under a\n"
	"directory, in name order), recovers each with the engine's recovery, verifies it with\n"
	"the independent oracle, and compares the verdict with the scenario's expect.verdict.\n"
	"A scenario without a crash: section is run once with the runtime invariants on.\n"
	"\n"
	"options:\n"
	"  --json FILE   write the verdicts as JSON to FILE ('-' = stdout)\n"
	"  --junit FILE  write the verdicts as JUnit XML to FILE, for CI systems\n"
	"  --jobs N      check N scenarios at once, in child processes (default 1)\n"
	"  --seed N      override each scenario's seed\n"
	"  --traces DIR  where counterexample traces go (default: penumbra-traces)\n"
	"  --nested N    also crash inside recovery, for every Nth new crash state\n"
	"                (default 64; 0 = never)\n"
	"  --coverage    report the coverage markers never seen both ways\n"
	"  --quiet       no counterexample reports, only the summary\n"
	"  --no-shrink   write counterexample traces as found, without shrinking them\n"
	"  --twice       run each schedule twice and compare every event (a determinism\n"
	"                self-check; exit 1 at the first event where the runs differ)\n"
	"  --points-every N  visit only every Nth crash point a scenario selects (a quicker,\n"
	"                weaker check; for slow builds)\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 0 every verdict as expected, 1 any not, 2 bad input\n";

enum {
	OPT_JSON = 256, OPT_JUNIT, OPT_JOBS, OPT_SEED, OPT_COVERAGE, OPT_TRACES, OPT_NESTED, OPT_QUIET,
	OPT_NO_SHRINK, OPT_POINTS_EVERY, OPT_TWICE
};

struct check_args {
	const char *json, *junit, *traces;
	uint64_t jobs, seed, nested, points_every;
	bool seed_set, coverage, quiet, no_shrink, twice;
	char **paths;
	size_t npaths, cap;
};

struct item {
	struct pn_scenario sc;
	struct pn_check_result res;
	bool loaded;
	int rc;
};

static void add_path(struct check_args *a, const char *p)
{
	if (a->npaths == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->paths = realloc(a->paths, a->cap * sizeof(char *));
		PN_ASSERT(a->paths != NULL);
	}
	a->paths[a->npaths++] = strdup(p);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every *.yaml below dir (recursively), sorted. Returns false if dir cannot be read. */
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
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0)
			continue;
		size_t n = strlen(de->d_name);
		if (S_ISDIR(st.st_mode))
			add_dir(a, path);
		else if (n > 5 && strcmp(de->d_name + n - 5, ".yaml") == 0)
			add_path(a, path);
	}
	closedir(d);
	qsort(a->paths + first, a->npaths - first, sizeof(char *), cmp_str);
	return true;
}

static int parse(int argc, char **argv, struct check_args *a)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'}, {"json", required_argument, NULL, OPT_JSON},
		{"junit", required_argument, NULL, OPT_JUNIT}, {"jobs", required_argument, NULL, OPT_JOBS},
		{"seed", required_argument, NULL, OPT_SEED}, {"coverage", no_argument, NULL, OPT_COVERAGE},
		{"traces", required_argument, NULL, OPT_TRACES},
		{"nested", required_argument, NULL, OPT_NESTED}, {"quiet", no_argument, NULL, OPT_QUIET},
		{"no-shrink", no_argument, NULL, OPT_NO_SHRINK},
		{"points-every", required_argument, NULL, OPT_POINTS_EVERY},
		{"twice", no_argument, NULL, OPT_TWICE},
		{NULL, 0, NULL, 0},
	};
	int c;
	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(usage, stdout); return 0;
		case OPT_JSON: a->json = optarg; break;
		case OPT_JUNIT: a->junit = optarg; break;
		case OPT_TRACES: a->traces = optarg; break;
		case OPT_COVERAGE: a->coverage = true; break;
		case OPT_QUIET: a->quiet = true; break;
		case OPT_NO_SHRINK: a->no_shrink = true; break;
		case OPT_TWICE: a->twice = true; break;
		case OPT_POINTS_EVERY:
			if (!pn_cli_parse_uint("check", "--points-every", optarg, &a->points_every))
				return 2;
			if (a->points_every < 1)
				return pn_cli_usage_error("check", "--points-every takes 1 or more");
			break;
		case OPT_JOBS:
			if (!pn_cli_parse_uint("check", "--jobs", optarg, &a->jobs))
				return 2;
			if (a->jobs < 1 || a->jobs > 256)
				return pn_cli_usage_error("check", "--jobs takes 1 to 256, not %s", optarg);
			break;
		case OPT_NESTED:
			if (!pn_cli_parse_uint("check", "--nested", optarg, &a->nested))
				return 2;
			break;
		case OPT_SEED:
			if (!pn_cli_parse_uint("check", "--seed", optarg, &a->seed))
				return 2;
			a->seed_set = true;
			break;
		default: return pn_cli_bad_option("check", c, argv);
		}
	}
	if (optind >= argc)
		return pn_cli_usage_error("check", "no scenario named");
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (!add_dir(a, argv[i]))
				return pn_cli_usage_error("check", "%s: cannot read: %s", argv[i], strerror(errno));
		} else {
			add_path(a, argv[i]);
		}
	}
	if (a->npaths == 0)
		return pn_cli_usage_error("check", "no *.yaml scenario found");
	return -1;
}

/* A violation: shrink a copy of the scenario, write the shrunk trace. */
static void write_trace(struct item *it, const struct check_args *a, const struct pn_check_options *o)
{
	struct pn_scenario small;
	static struct pn_check_result r;
	char err[PN_ERROR_LEN];
	r = it->res;
	if (!pn_scenario_copy(&it->sc, &small))
		return;
	if (!a->no_shrink) {
		struct pn_shrink_result sr;
		pn_shrink(&small, o, &r, &sr);
		snprintf(it->res.shrunk, sizeof(it->res.shrunk), "%s", sr.summary);
	}
	if (!pn_trace_write(&small, &r, a->traces, it->res.trace_path, sizeof(it->res.trace_path), err,
			    sizeof(err)))
		fprintf(stderr, "penumbra check: %s\n", err);
	pn_scenario_free(&small);
}

static void check_one(struct item *it, const struct check_args *a)
{
	struct pn_check_options o = {
		.progress = isatty(2) && a->jobs == 1,
		.nested_every = (uint32_t)a->nested,
		.twice = a->twice,
	};
	it->rc = pn_check_scenario(&it->sc, &o, &it->res);
	if (it->res.violation && !it->res.error) {
		o.progress = false;
		o.twice = false; /* shrinking re-checks variants: once each */
		write_trace(it, a, &o);
	}
}

/* ---- coverage markers, merged across child processes ---- */
struct cov {
	char name[120], where[160];
	uint64_t t, f;
};
static struct cov *covs;
static size_t ncovs;

static void cov_add(const char *name, const char *where, uint64_t t, uint64_t f)
{
	for (size_t i = 0; i < ncovs; i++) {
		if (!strcmp(covs[i].where, where)) {
			covs[i].t += t;
			covs[i].f += f;
			return;
		}
	}
	covs = realloc(covs, (ncovs + 1) * sizeof(*covs));
	PN_ASSERT(covs != NULL);
	snprintf(covs[ncovs].name, sizeof(covs[ncovs].name), "%s", name);
	snprintf(covs[ncovs].where, sizeof(covs[ncovs].where), "%s", where);
	covs[ncovs].t = t;
	covs[ncovs].f = f;
	ncovs++;
}

static void cov_local(void)
{
	for (struct pn_testcase_site *s = pn_testcase_sites(); s; s = s->next) {
		char where[160];
		snprintf(where, sizeof(where), "%s:%d", s->file, s->line);
		cov_add(s->name, where, s->hits_true, s->hits_false);
		s->hits_true = s->hits_false = 0;
	}
}

/* ---- children ---- */
static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static void child(struct item *it, const struct check_args *a, int fd)
{
	check_one(it, a);
	write_all(fd, &it->rc, sizeof(it->rc));
	write_all(fd, &it->res, sizeof(it->res));
	for (struct pn_testcase_site *s = pn_testcase_sites(); s; s = s->next) {
		char line[512];
		int n = snprintf(line, sizeof(line), "%s\t%s:%d\t%llu\t%llu\n", s->name, s->file, s->line,
				 (unsigned long long)s->hits_true, (unsigned long long)s->hits_false);
		write_all(fd, line, (size_t)n);
	}
	close(fd);
	_exit(0);
}

static void collect(struct item *it, int fd)
{
	FILE *f = fdopen(fd, "r");
	char line[512];
	if (!f || fread(&it->rc, sizeof(it->rc), 1, f) != 1 || fread(&it->res, sizeof(it->res), 1, f) != 1) {
		it->rc = 2;
		it->res.error = true;
		snprintf(it->res.detail, sizeof(it->res.detail), "the checking process died");
	}
	while (f && fgets(line, sizeof(line), f)) {
		char *name = strtok(line, "\t"), *where = strtok(NULL, "\t"), *t = strtok(NULL, "\t"),
		     *fl = strtok(NULL, "\n");
		if (name && where && t && fl)
			cov_add(name, where, strtoull(t, NULL, 10), strtoull(fl, NULL, 10));
	}
	if (f)
		fclose(f);
}

static void run_parallel(struct item *items, size_t n, const struct check_args *a)
{
	pid_t *pids = calloc(n, sizeof(pid_t));
	int *fds = calloc(n, sizeof(int));
	size_t next = 0, running = 0, done = 0;
	PN_ASSERT(pids && fds);
	fflush(NULL);
	while (done < n) {
		while (running < a->jobs && next < n) {
			int p[2];
			PN_ASSERT(pipe(p) == 0);
			pid_t pid = fork();
			PN_ASSERT(pid >= 0);
			if (pid == 0) {
				close(p[0]);
				child(&items[next], a, p[1]);
			}
			close(p[1]);
			pids[next] = pid;
			fds[next++] = p[0];
			running++;
		}
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		for (size_t i = 0; i < next; i++) {
			if (pids[i] == pid) {
				collect(&items[i], fds[i]);
				pids[i] = 0;
				running--;
				done++;
			}
		}
	}
	free(pids);
	free(fds);
}

/* ---- output ---- */
static const char *verdict(const struct item *it)
{
	return it->res.error ? "error" : it->res.violation ? "violation" : "pass";
}

static void print_item(const struct item *it, const struct check_args *a)
{
	const struct pn_check_result *r = &it->res;
	printf("%-4s %-36s %-9s (expected %-9s) %8llu points %10llu states %9llu recovered %7.2fs\n",
	       r->ok ? "ok" : "FAIL", it->sc.name, verdict(it), r->expected_violation ? "violation" : "pass",
	       (unsigned long long)r->crash_points, (unsigned long long)r->crash_states,
	       (unsigned long long)r->recoveries, r->seconds);
	if (r->diverged)
		printf("     %s\n", r->divergence);
	if (r->error)
		printf("     %s\n", r->detail);
	else if (r->violation && !a->quiet)
		pn_trace_report(stdout, &it->sc, r);
}

static void print_summary(const struct item *items, size_t n)
{
	size_t ok = 0, viol = 0;
	uint64_t states = 0, rec = 0;
	double secs = 0;
	for (size_t i = 0; i < n; i++) {
		ok += items[i].res.ok;
		viol += items[i].res.violation;
		states += items[i].res.crash_states;
		rec += items[i].res.recoveries;
		secs += items[i].res.seconds;
	}
	printf("\n%zu scenarios: %zu as expected, %zu not; %zu violations found; %llu crash states, "
	       "%llu recovered (%.0f per second of checking)\n",
	       n, ok, n - ok, viol, (unsigned long long)states, (unsigned long long)rec,
	       secs > 0 ? rec / secs : 0.0);
	printf("check: %zu passed, %zu failed\n", ok, n - ok);
}

static json_t *item_json(const struct item *it)
{
	const struct pn_check_result *r = &it->res;
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(it->sc.name));
	json_object_set_new(o, "file", json_string(it->sc.path));
	json_object_set_new(o, "verdict", json_string(verdict(it)));
	json_object_set_new(o, "expected", json_string(r->expected_violation ? "violation" : "pass"));
	json_object_set_new(o, "ok", json_boolean(r->ok));
	json_object_set_new(o, "crash_points", json_integer((json_int_t)r->crash_points));
	json_object_set_new(o, "crash_states", json_integer((json_int_t)r->crash_states));
	json_object_set_new(o, "recoveries", json_integer((json_int_t)r->recoveries));
	json_object_set_new(o, "events", json_integer((json_int_t)r->events));
	json_object_set_new(o, "seconds", json_real(r->seconds));
	if (r->diverged)
		json_object_set_new(o, "divergence", json_string(r->divergence));
	if (!r->violation) {
		json_object_set_new(o, "violation", r->error ? json_string(r->detail) : json_null());
		return o;
	}
	json_t *v = json_object();
	json_object_set_new(v, "kind", json_string(pn_violation_name(r->kind)));
	json_object_set_new(v, "page", r->page == UINT32_MAX ? json_null() : json_integer(r->page));
	json_object_set_new(v, "crash_point", json_integer((json_int_t)r->crash_point));
	json_object_set_new(v, "schedule", json_integer(r->schedule));
	json_object_set_new(v, "state", json_string(r->state[0] ? r->state : "none"));
	json_object_set_new(v, "in_recovery", json_boolean(r->in_recovery));
	json_object_set_new(v, "detail", json_string(r->detail));
	json_object_set_new(v, "trace", r->trace_path[0] ? json_string(r->trace_path) : json_null());
	json_object_set_new(v, "shrunk", json_string(r->shrunk));
	json_object_set_new(v, "seconds_to_violation", json_real(r->seconds_to_violation));
	json_object_set_new(o, "violation", v);
	return o;
}

static int write_json(const char *path, const struct item *items, size_t n)
{
	json_t *arr = json_array(), *root = json_object();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, item_json(&items[i]));
	json_object_set_new(root, "scenarios", arr);
	int rc = strcmp(path, "-") == 0 ? json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
					  : json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (rc != 0)
		fprintf(stderr, "penumbra check: %s: cannot write JSON\n", path);
	return rc != 0 ? 2 : 0;
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

static int write_junit(const char *path, const struct item *items, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t failures = 0, errors = 0;
	double secs = 0;
	if (!f) {
		fprintf(stderr, "penumbra check: %s: cannot write: %s\n", path, strerror(errno));
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		failures += !items[i].res.ok && !items[i].res.error;
		errors += items[i].res.error;
		secs += items[i].res.seconds;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
	fprintf(f, "  <testsuite name=\"penumbra check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
		n, failures, errors, secs);
	for (size_t i = 0; i < n; i++) {
		const struct item *it = &items[i];
		fprintf(f, "    <testcase classname=\"penumbra.check\" name=\"");
		xml_text(f, it->sc.name);
		fprintf(f, "\" file=\"");
		xml_text(f, it->sc.path);
		fprintf(f, "\" time=\"%.3f\">", it->res.seconds);
		if (!it->res.ok) {
			fprintf(f, "\n      <%s message=\"verdict %s, expected %s\">", it->res.error ? "error" : "failure",
				verdict(it), it->res.expected_violation ? "violation" : "pass");
			xml_text(f, it->res.detail);
			fprintf(f, "</%s>\n    ", it->res.error ? "error" : "failure");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	return fclose(f) == 0 ? 0 : 2;
}

static void print_coverage(void)
{
	size_t never = 0;
	printf("\ncoverage markers (seen true / seen false):\n");
	for (size_t i = 0; i < ncovs; i++) {
		bool both = covs[i].t && covs[i].f;
		never += !both;
		printf("  %-4s %-62s %8llu / %-8llu %s\n", both ? "ok" : "ONCE", covs[i].name,
		       (unsigned long long)covs[i].t, (unsigned long long)covs[i].f, covs[i].where);
	}
	printf("%zu of %zu markers not seen both ways\n", never, ncovs);
}

int pn_cmd_check(int argc, char **argv)
{
	struct check_args a = {.jobs = 1, .nested = 64, .traces = "penumbra-traces"};
	int rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct item *items = calloc(a.npaths, sizeof(*items));
	PN_ASSERT(items != NULL);
	rc = 0;
	for (size_t i = 0; i < a.npaths; i++) {
		items[i].loaded = pn_cli_load(a.paths[i], &items[i].sc);
		if (!items[i].loaded)
			rc = 2;
		else if (a.seed_set)
			items[i].sc.seed = a.seed;
		if (items[i].loaded && a.points_every > 1 && items[i].sc.crash.points == PN_POINTS_ALL) {
			items[i].sc.crash.points = PN_POINTS_EVERY;
			items[i].sc.crash.every = a.points_every;
		}
	}
	if (rc == 0 && a.jobs > 1 && a.npaths > 1) {
		run_parallel(items, a.npaths, &a);
		for (size_t i = 0; i < a.npaths; i++)
			print_item(&items[i], &a);
	} else if (rc == 0) {
		for (size_t i = 0; i < a.npaths; i++) {
			check_one(&items[i], &a);
			print_item(&items[i], &a);
			fflush(stdout);
		}
		cov_local();
	}
	if (rc == 0) {
		print_summary(items, a.npaths);
		if (a.coverage)
			print_coverage();
		for (size_t i = 0; i < a.npaths; i++)
			rc = pn_cli_worst(rc, items[i].rc);
		if (a.json)
			rc = pn_cli_worst(rc, write_json(a.json, items, a.npaths));
		if (a.junit)
			rc = pn_cli_worst(rc, write_junit(a.junit, items, a.npaths));
	}
	for (size_t i = 0; i < a.npaths; i++) {
		if (items[i].loaded)
			pn_scenario_free(&items[i].sc);
		free(a.paths[i]);
	}
	free(items);
	free(a.paths);
	free(covs);
	covs = NULL;
	ncovs = 0;
	return rc;
}

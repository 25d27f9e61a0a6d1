/*
 * sim_bench.c: pn_sim_bench, how fast the simulator and the checker run (not a test).
 *
 *   simulator  one large random workload (1,000,000 transactions by default, 4096 pages,
 *              512 buffers, 4 clients, 2 pages per transaction; checkpoints every
 *              transactions/8 commits or 256MiB of WAL) through pn_sim_run(), once per
 *              mode (fpw, nofpw, umbra, doublewrite), side by side: simulated
 *              transactions and events per wall-clock second, WAL bytes per transaction,
 *              FPI count, checkpoints, wall seconds;
 *   workloads  scenarios/results/pgbench-scale10.yaml and seed000-tpcc.yaml once per mode:
 *              transactions simulated per wall-clock second, and the simulated
 *              throughput (transactions per virtual second), WAL bytes per transaction;
 *   checker    pn_check_scenario() on scenarios/protocols/umbra-random.yaml: crash states
 *              and recoveries per second; then the time to the first counterexample of
 *              every scenario in scenarios/mutants that expects a violation.
 *
 * Wall time comes from clock_gettime(CLOCK_MONOTONIC), here only: nothing simulated
 * depends on it. CPU seconds (CLOCK_PROCESS_CPUTIME_ID) are printed beside it, for a
 * machine shared with other work. Scenario files are found under --source DIR, else $PN_SOURCE_DIR, else
 * the source tree the binary was built from.
 */
#include "checker.h"
#include "load.h"
#include "protocols.h"
#include "world.h"

#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PN_BENCH_SOURCE_DIR
#define PN_BENCH_SOURCE_DIR "."
#endif

#define NMODES 4
#define YAML_LEN 1024

static const char *const mode_names[NMODES] = {"fpw", "nofpw", "umbra", "doublewrite"};

struct options {
	uint64_t transactions;
	const char *source;
	bool sim, check, workloads;
};

struct sim_row {
	struct pn_sim_result r;
	double seconds, cpu;
};

static const char usage[] =
	"usage: pn_sim_bench [--transactions N] [--source DIR]\n"
	"                    [--sim-only | --workloads-only | --check-only]\n"
	"\n"
	"Measures the simulator (a random workload of N transactions, default 1000000, once\n"
	"per mode), the pgbench and tpcc scenarios of scenarios/results once per mode, and the\n"
	"checker (umbra-random.yaml; time to each mutant's counterexample).\n"
	"\n"
	"  --transactions N  transactions of the simulated workload (default 1000000)\n"
	"  --source DIR      the source tree holding scenarios/ (default $PN_SOURCE_DIR, else\n"
	"                    the tree the binary was built from)\n"
	"  --sim-only        only the simulator part (random workload)\n"
	"  --workloads-only  only the pgbench and tpcc part\n"
	"  --check-only      only the checker part\n"
	"  -h, --help        this help\n";

static double clock_seconds(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_seconds(void) { return clock_seconds(CLOCK_MONOTONIC); }
static double cpu_seconds(void) { return clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }

static double per_second(double n, double seconds) { return seconds > 0 ? n / seconds : 0.0; }

/* ---- options --------------------------------------------------------------------------- */

static bool parse_count(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return false;
	*out = strtoull(s, &end, 10);
	return *end == '\0' && *out > 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{"transactions", required_argument, NULL, 't'},
		{"source", required_argument, NULL, 's'},
		{"sim-only", no_argument, NULL, 'S'},
		{"check-only", no_argument, NULL, 'C'},
		{"workloads-only", no_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!parse_count(optarg, &o->transactions)) {
				fprintf(stderr,
					"pn_sim_bench: --transactions '%s': expected a "
					"positive integer\n",
					optarg);
				return 2;
			}
			break;
		case 's': o->source = optarg; break;
		case 'S': o->check = o->workloads = false; break;
		case 'C': o->sim = o->workloads = false; break;
		case 'W': o->sim = o->check = false; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	return optind == argc ? -1 : (fputs(usage, stderr), 2);
}

/* ---- simulator ------------------------------------------------------------------------- */

static bool sim_scenario(const char *mode, uint64_t transactions, struct pn_scenario *sc)
{
	char yaml[YAML_LEN], err[PN_ERROR_LEN];
	uint64_t every = transactions / 8 ? transactions / 8 : 1;
	int n = snprintf(
		yaml, sizeof(yaml),
		"name: sim-bench-%s\n"
		"seed: 1\n"
		"storage: {pages: 4096, buffers: 512, wal_segment_size: 16MiB}\n"
		"protocol: {mode: %s}\n"
		"checkpoint: {interval: 0s, every_transactions: %llu, max_wal_size: 256MiB}\n"
		"workload: {kind: random, clients: 4, transactions: %llu, "
		"pages_per_transaction: 2}\n",
		mode, mode, (unsigned long long)every, (unsigned long long)transactions);
	if (n < 0 || n >= (int)sizeof(yaml) ||
	    !pn_scenario_load_string("sim-bench.yaml", yaml, (size_t)n, sc, err, sizeof(err))) {
		fprintf(stderr, "pn_sim_bench: %s\n", err);
		return false;
	}
	return true;
}

/* Simulates sc once, timing it; frees sc. */
static bool timed_run(struct pn_scenario *sc, const char *label, struct sim_row *row)
{
	double t0 = now_seconds(), c0 = cpu_seconds();
	pn_sim_run(sc, &row->r);
	row->seconds = now_seconds() - t0;
	row->cpu = cpu_seconds() - c0;
	if (row->r.status != 0)
		fprintf(stderr, "pn_sim_bench: %s %s: status %d: %s %s\n", label,
			pn_mode_name(sc->protocol.mode), row->r.status, row->r.viol.detail,
			row->r.error);
	pn_scenario_free(sc);
	return row->r.status == 0;
}

static bool sim_one(const char *mode, uint64_t transactions, struct sim_row *row)
{
	struct pn_scenario sc;
	if (!sim_scenario(mode, transactions, &sc))
		return false;
	return timed_run(&sc, mode, row);
}

static void print_u64_row(const char *label, const struct sim_row *rows,
			  uint64_t (*get)(const struct sim_row *))
{
	printf("%-26s", label);
	for (int i = 0; i < NMODES; i++)
		printf(" %14llu", (unsigned long long)get(&rows[i]));
	printf("\n");
}

static void print_f_row(const char *label, const char *fmt, const struct sim_row *rows,
			double (*get)(const struct sim_row *))
{
	char cell[32];
	printf("%-26s", label);
	for (int i = 0; i < NMODES; i++) {
		snprintf(cell, sizeof(cell), fmt, get(&rows[i]));
		printf(" %14s", cell);
	}
	printf("\n");
}

static uint64_t get_txns(const struct sim_row *r) { return r->r.m.transactions; }
static uint64_t get_events(const struct sim_row *r) { return r->r.events; }
static uint64_t get_wal(const struct sim_row *r) { return r->r.m.wal_bytes; }
static uint64_t get_fpi(const struct sim_row *r) { return r->r.m.fpi_count; }
static uint64_t get_ckpts(const struct sim_row *r) { return r->r.m.checkpoints; }
static uint64_t get_shifts(const struct sim_row *r) { return r->r.m.shifts; }
static double get_seconds(const struct sim_row *r) { return r->seconds; }
static double get_cpu(const struct sim_row *r) { return r->cpu; }

static double get_tps(const struct sim_row *r)
{
	return per_second((double)r->r.m.transactions, r->seconds);
}

static double get_eps(const struct sim_row *r)
{
	return per_second((double)r->r.events, r->seconds);
}

static double get_wal_txn(const struct sim_row *r)
{
	return r->r.m.transactions ? (double)r->r.m.wal_bytes / (double)r->r.m.transactions : 0;
}

static double get_virtual(const struct sim_row *r) { return (double)r->r.m.elapsed_ns / 1e9; }

static void print_sim(const struct sim_row *rows, uint64_t transactions)
{
	printf("simulator: random workload, %llu transactions, 4096 pages, 512 buffers, "
	       "4 clients, 2 pages/transaction\n\n",
	       (unsigned long long)transactions);
	printf("%-26s", "mode");
	for (int i = 0; i < NMODES; i++)
		printf(" %14s", mode_names[i]);
	printf("\n");
	print_u64_row("transactions", rows, get_txns);
	print_u64_row("events", rows, get_events);
	print_f_row("wall seconds", "%.2f", rows, get_seconds);
	print_f_row("CPU seconds", "%.2f", rows, get_cpu);
	print_f_row("transactions / wall s", "%.0f", rows, get_tps);
	print_f_row("events / wall s", "%.0f", rows, get_eps);
	print_u64_row("WAL bytes", rows, get_wal);
	print_f_row("WAL bytes / transaction", "%.1f", rows, get_wal_txn);
	print_u64_row("FPI count", rows, get_fpi);
	print_u64_row("shifts", rows, get_shifts);
	print_u64_row("checkpoints", rows, get_ckpts);
	print_f_row("virtual seconds", "%.2f", rows, get_virtual);
	printf("\n");
	fflush(stdout);
}

static int bench_sim(uint64_t transactions)
{
	static struct sim_row rows[NMODES];
	int rc = 0;
	for (int i = 0; i < NMODES; i++) {
		fprintf(stderr, "pn_sim_bench: simulating %s...\n", mode_names[i]);
		if (!sim_one(mode_names[i], transactions, &rows[i]))
			rc = 1;
	}
	print_sim(rows, transactions);
	return rc;
}

/* ---- workloads: pgbench and tpcc per mode --------------------------------------------- */

static const char *const workload_files[] = {
	"scenarios/results/pgbench-scale10.yaml",
	"scenarios/results/seed000-tpcc.yaml",
};

static bool workload_one(const char *path, int mode, struct sim_row *row)
{
	struct pn_scenario sc;
	char err[PN_ERROR_LEN];
	if (!pn_scenario_load(path, &sc, err, sizeof(err))) {
		fprintf(stderr, "pn_sim_bench: %s\n", err);
		return false;
	}
	enum pn_protocol_id id;
	bool ok = pn_protocol_pick(&sc, mode_names[mode], &id);
	PN_ASSERT(ok);
	pn_protocol_set(&sc, id);
	return timed_run(&sc, sc.name, row);
}

static double get_virtual_tps(const struct sim_row *r)
{
	return per_second((double)r->r.m.transactions, (double)r->r.m.elapsed_ns / 1e9);
}

static int bench_workloads(const char *source)
{
	static struct sim_row rows[NMODES];
	int rc = 0;
	for (size_t w = 0; w < PN_ARRAY_LEN(workload_files); w++) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", source, workload_files[w]);
		for (int i = 0; i < NMODES; i++) {
			fprintf(stderr, "pn_sim_bench: %s, %s...\n", workload_files[w],
				mode_names[i]);
			if (!workload_one(path, i, &rows[i]))
				rc = 1;
		}
		printf("workload: %s\n\n%-26s", workload_files[w], "mode");
		for (int i = 0; i < NMODES; i++)
			printf(" %14s", mode_names[i]);
		printf("\n");
		print_u64_row("transactions", rows, get_txns);
		print_f_row("wall seconds", "%.2f", rows, get_seconds);
		print_f_row("CPU seconds", "%.2f", rows, get_cpu);
		print_f_row("transactions / wall s", "%.0f", rows, get_tps);
		print_f_row("simulated tx / virtual s", "%.0f", rows, get_virtual_tps);
		print_f_row("events / wall s", "%.0f", rows, get_eps);
		print_f_row("WAL bytes / transaction", "%.1f", rows, get_wal_txn);
		print_u64_row("FPI count", rows, get_fpi);
		print_u64_row("checkpoints", rows, get_ckpts);
		printf("\n");
		fflush(stdout);
	}
	return rc;
}

/* ---- checker --------------------------------------------------------------------------- */

/* Checks one file; *cpu gets the CPU seconds it took. */
static bool check_file(const char *path, struct pn_check_result *res, int *rc, double *cpu)
{
	struct pn_scenario sc;
	struct pn_check_options opt = {0};
	char err[PN_ERROR_LEN];
	if (!pn_scenario_load(path, &sc, err, sizeof(err))) {
		fprintf(stderr, "pn_sim_bench: %s\n", err);
		return false;
	}
	double c0 = cpu_seconds();
	*rc = pn_check_scenario(&sc, &opt, res);
	*cpu = cpu_seconds() - c0;
	pn_scenario_free(&sc);
	return true;
}

static int bench_checker(const char *source)
{
	static struct pn_check_result res;
	char path[1024];
	double cpu;
	int rc;
	snprintf(path, sizeof(path), "%s/scenarios/protocols/umbra-random.yaml", source);
	fprintf(stderr, "pn_sim_bench: checking %s...\n", path);
	if (!check_file(path, &res, &rc, &cpu))
		return 2;
	printf("checker: umbra-random.yaml (verdict %s, %s)\n",
	       res.violation ? "violation" : "pass", rc == 0 ? "as expected" : "NOT as expected");
	printf("  crash points %llu, crash states %llu, recoveries %llu, events %llu\n",
	       (unsigned long long)res.crash_points, (unsigned long long)res.crash_states,
	       (unsigned long long)res.recoveries, (unsigned long long)res.events);
	printf("  wall seconds %.2f: %.0f crash states/s, %.0f recoveries/s\n", res.seconds,
	       per_second((double)res.crash_states, res.seconds),
	       per_second((double)res.recoveries, res.seconds));
	printf("  CPU seconds %.2f: %.0f crash states/s, %.0f recoveries/s\n\n", cpu,
	       per_second((double)res.crash_states, cpu), per_second((double)res.recoveries, cpu));
	fflush(stdout);
	return rc == 0 ? 0 : 1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* One mutant: its time to the first counterexample, when it expects one. */
static int bench_mutant(const char *path)
{
	static struct pn_check_result res;
	struct pn_scenario sc;
	char err[PN_ERROR_LEN];
	double cpu;
	int rc;
	if (!pn_scenario_load(path, &sc, err, sizeof(err))) {
		fprintf(stderr, "pn_sim_bench: %s\n", err);
		return 2;
	}
	bool expects = sc.expect.violation;
	pn_scenario_free(&sc);
	if (!expects || !check_file(path, &res, &rc, &cpu))
		return 0;
	printf("  %-28s %-16s %10.4f %10.4f %10.4f %8llu %8llu %8llu\n", base_name(path),
	       res.violation ? pn_violation_name(res.kind) : "NONE FOUND", res.seconds_to_violation,
	       res.seconds, cpu, (unsigned long long)res.crash_point,
	       (unsigned long long)res.schedule, (unsigned long long)res.crash_states);
	fflush(stdout);
	return rc == 0 ? 0 : 1;
}

static int bench_mutants(const char *source)
{
	char pattern[1024];
	glob_t g;
	int rc = 0;
	snprintf(pattern, sizeof(pattern), "%s/scenarios/mutants/*.yaml", source);
	if (glob(pattern, 0, NULL, &g) != 0) {
		fprintf(stderr, "pn_sim_bench: no scenarios match %s\n", pattern);
		return 2;
	}
	printf("checker: time to the first counterexample (scenarios/mutants, expect violation)\n");
	printf("  %-28s %-16s %10s %10s %10s %8s %8s %8s\n", "scenario", "kind", "to_viol s",
	       "wall s", "CPU s", "point", "schedule", "states");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int r = bench_mutant(g.gl_pathv[i]);
		rc = r > rc ? r : rc;
	}
	globfree(&g);
	printf("\n");
	return rc;
}

int main(int argc, char **argv)
{
	const char *env = getenv("PN_SOURCE_DIR");
	struct options o = {.transactions = 1000000,
			    .source = env ? env : PN_BENCH_SOURCE_DIR,
			    .sim = true,
			    .check = true,
			    .workloads = true};
	int rc = parse_options(argc, argv, &o), r;
	if (rc >= 0)
		return rc;
	rc = 0;
	if (o.sim)
		rc = bench_sim(o.transactions);
	if (o.workloads) {
		r = bench_workloads(o.source);
		rc = r > rc ? r : rc;
	}
	if (o.check) {
		r = bench_checker(o.source);
		rc = r > rc ? r : rc;
		r = bench_mutants(o.source);
		rc = r > rc ? r : rc;
	}
	return rc;
}

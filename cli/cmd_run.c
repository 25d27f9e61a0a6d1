/*
 * cmd_run.c: `penumbra run S.yaml` (cli layer): simulate one scenario once, in virtual
 * time, and print its metrics table and its WAL records by type. The seed and the protocol
 * mode may be overridden. Exit status (cli.h C1): 0 ok, 1 a runtime invariant broke (the
 * table still shows the metrics up to that point), 2 bad input (usage, the loader, or the
 * engine refused the scenario).
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char usage[] =
	"usage: penumbra run S.yaml [--json FILE] [--seed N] [--mode M] [--twice]\n"
	"                           [--wal-dir DIR]\n"
	"\n"
	"Simulates one scenario once, in virtual time, and prints its metrics and its WAL\n"
	"records by type (in the format of pg_waldump --stats=record).\n"
	"\n"
	"options:\n"
	"  --json FILE   also write the results as JSON to FILE; '-' writes them to stdout\n"
	"                and the tables to stderr\n"
	"  --seed N      override the scenario's seed\n"
	"  --mode M      override the scenario's protocol: one of\n"
	"               " PN_CLI_PROTOCOLS "\n"
	"                or a mode alone: umbra keeps the scenario's umbra policy\n"
	"  --wal-dir DIR also write the run's WAL into DIR as PostgreSQL segment files\n"
	"                (000000010000000000000001 ...), which pg_waldump reads\n"
	"  --twice       then run it twice more and compare every event (a determinism\n"
	"                self-check; exit 1 at the first event where the runs differ)\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 0 ok, 1 a runtime invariant broke (or --twice: the runs differ),\n"
	"2 bad input\n";

enum { OPT_JSON = 256, OPT_SEED, OPT_MODE, OPT_TWICE, OPT_WAL_DIR };

struct run_opts {
	const char *path;
	const char *json;
	const char *wal_dir;
	bool seed_set, mode_set, twice;
	uint64_t seed;
	struct pn_cli_mode mode;
};

static int option(int c, struct run_opts *o, char **argv)
{
	switch (c) {
	case 'h': fputs(usage, stdout); return 0;
	case OPT_JSON: o->json = optarg; return -1;
	case OPT_SEED:
		o->seed_set = true;
		return pn_cli_parse_uint("run", "--seed", optarg, &o->seed) ? -1 : 2;
	case OPT_MODE:
		o->mode_set = true;
		return pn_cli_parse_mode_spec("run", optarg, &o->mode) ? -1 : 2;
	case OPT_TWICE: o->twice = true; return -1;
	case OPT_WAL_DIR: o->wal_dir = optarg; return -1;
	default: return pn_cli_bad_option("run", c, argv);
	}
}

/* Returns -1 to go on, or the exit status (0 after --help). */
static int parse(int argc, char **argv, struct run_opts *o)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"json", required_argument, NULL, OPT_JSON},
		{"seed", required_argument, NULL, OPT_SEED},
		{"mode", required_argument, NULL, OPT_MODE},
		{"twice", no_argument, NULL, OPT_TWICE},
		{"wal-dir", required_argument, NULL, OPT_WAL_DIR},
		{NULL, 0, NULL, 0},
	};
	int c, rc;

	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		rc = option(c, o, argv);
		if (rc >= 0)
			return rc;
	}
	if (optind >= argc)
		return pn_cli_usage_error("run", "missing the scenario file");
	if (optind + 1 < argc)
		return pn_cli_usage_error("run", "unexpected argument '%s'", argv[optind + 1]);
	o->path = argv[optind];
	return -1;
}

static int report(const struct run_opts *o, FILE *json, const struct pn_cli_result *r)
{
	FILE *out = json == stdout ? stderr : stdout;
	int rc = 0;

	if (r->sim.status != 2) {
		pn_cli_print_metrics(out, r, 1, NULL);
		fputc('\n', out);
		pn_cli_print_records(out, &r->sim.m);
	}
	if (json)
		rc = pn_cli_write_json("run", json, o->json, r, 1);
	pn_cli_report_failure(r, false);
	return pn_cli_worst(r->sim.status, rc);
}

/* --twice: the determinism self-check (sim/world.h); 1 when the two runs differ. */
static int twice(const struct pn_scenario *sc, FILE *out)
{
	char msg[512];
	int rc = pn_sim_twice(sc, 0, msg, sizeof(msg));
	if (rc == 0)
		fprintf(out, "\ndeterminism (--twice): %s\n", msg);
	else
		fprintf(stderr, "penumbra run: %s: %s\n", rc == 1 ? "nondeterminism" : "--twice",
			msg);
	return rc;
}

int pn_cmd_run(int argc, char **argv)
{
	struct run_opts o = {0};
	struct pn_scenario sc;
	struct pn_cli_result r;
	FILE *json = NULL;
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (!pn_cli_load(o.path, &sc))
		return 2;
	if (o.json && !(json = pn_cli_open_output("run", o.json))) {
		rc = 2;
		goto out;
	}
	if (o.seed_set)
		sc.seed = o.seed;
	if (o.mode_set)
		pn_cli_apply_mode(&sc, &o.mode);
	pn_cli_simulate_wal(&sc, o.mode_set ? &o.mode : NULL, &r, o.wal_dir);
	rc = report(&o, json, &r);
	if (o.twice && rc != 2)
		rc = pn_cli_worst(rc, twice(&sc, json == stdout ? stderr : stdout));
out:
	pn_scenario_free(&sc);
	return rc;
}

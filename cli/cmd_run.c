/*
 * cmd_run.c: `penumbra run S.yaml` (cli layer): simulate one scenario once, in virtual
 * time, and print its metrics table and its WAL records by type. The seed and the protocol
 * mode may be overridden. Exit status (cli.h CL1): 0 ok, 1 a runtime invariant broke (the
 * table still shows the metrics up to that point), 2 bad input (usage, the loader, or the
 * engine refused the scenario).
 */
#include "cli.h"

#include <stddef.h>
#include <string.h>

struct run_opts {
	const char *json;
	const char *wal_dir;
	bool seed_set, mode_set, twice;
	uint64_t seed;
	struct pn_cli_mode mode;
};

/* --mode: a mode or an umbra policy (cli.h pn_cli_parse_mode_spec). */
static bool parse_mode(const char *cmd, const struct pn_opt *o, const char *s, void *into)
{
	return pn_cli_parse_mode_spec(cmd, s, &((struct run_opts *)into)->mode);
}

static const struct pn_opt run_opts[] = {
	{.name = "json",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct run_opts, json),
	 .complete = PN_COMPLETE_FILE,
	 .help = "also write the results as JSON to FILE; '-' writes them to stdout and the "
		 "tables to stderr"},
	{.name = "seed",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct run_opts, seed),
	 .given = PN_OPT_GIVEN(struct run_opts, seed_set),
	 .help = "override the scenario's seed"},
	{.name = "mode",
	 .kind = PN_OPT_CUSTOM,
	 .value = "M",
	 .parse = parse_mode,
	 .given = PN_OPT_GIVEN(struct run_opts, mode_set),
	 .complete = PN_COMPLETE_MODE,
	 .help = "override the scenario's protocol: a protocol ({rows}) or a mode alone ({alone}: "
		 "it keeps the scenario's protocol when that is of the mode, else the mode's "
		 "first)"},
	{.name = "twice",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct run_opts, twice),
	 .help = "then run it twice more and compare every event (a determinism self-check; "
		 "exit 1 at the first event where the runs differ)"},
	{.name = "wal-dir",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = offsetof(struct run_opts, wal_dir),
	 .complete = PN_COMPLETE_DIR,
	 .help = "also write the run's WAL into DIR as PostgreSQL segment files "
		 "(000000010000000000000001 ...), which pg_waldump reads"},
};

const struct pn_cmd_spec pn_run_spec = {
	.name = "run",
	.args = "S.yaml",
	.args_help = "the scenario file",
	.args_min = 1,
	.args_max = 1,
	.args_missing = "missing the scenario file",
	.description = "Simulates one scenario once, in virtual time, and prints its metrics and "
		       "its WAL records by type (in the format of pg_waldump --stats=record).",
	.opts = run_opts,
	.nopts = PN_ARRAY_LEN(run_opts),
	.exits = "0 ok, 1 a runtime invariant broke (or --twice: the runs differ), 2 bad input",
};

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
	int at, rc = pn_opts_parse(&pn_run_spec, argc, argv, &o, &at);

	if (rc >= 0)
		return rc;
	if (!pn_cli_load(argv[at], &sc))
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

/*
 * cmd_compare.c: `penumbra compare S.yaml --modes fpw,nofpw,...` (cli layer): the same
 * scenario, same seed, simulated once per protocol mode; the metrics side by side, one
 * column per mode in the order given, and a "WAL vs nofpw" row when nofpw is among them.
 * Exit status (cli.h CL1): 0 every run ok, 1 a run broke an invariant, 2 bad input (usage,
 * the loader, or the engine refused the scenario in some mode); the worst one wins.
 */
#include "cli.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct compare_opts {
	const char *path;
	const char *json;
	const char *modes_arg;
	const char *wal_dir;
	bool seed_set, stats;
	uint64_t seed;
	struct pn_cli_mode modes[PN_CLI_MAX_MODES];
	int nmodes;
};

static const struct pn_opt compare_opts[] = {
	{.name = "modes",
	 .kind = PN_OPT_STRING,
	 .value = "LIST",
	 .at = offsetof(struct compare_opts, modes_arg),
	 .def = "fpw,nofpw,umbra,doublewrite",
	 .complete = PN_COMPLETE_MODES,
	 .help = "comma-separated, distinct protocols, in column order, each a protocol ({rows}) "
		 "or a mode alone ({alone}: it keeps the scenario's protocol when that is of the "
		 "mode, else the mode's first)"},
	{.name = "json",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct compare_opts, json),
	 .complete = PN_COMPLETE_FILE,
	 .help = "also write one result per mode as JSON to FILE; '-' writes them to stdout and "
		 "the table to stderr"},
	{.name = "seed",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct compare_opts, seed),
	 .given = PN_OPT_GIVEN(struct compare_opts, seed_set),
	 .help = "override the scenario's seed"},
	{.name = "stats",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct compare_opts, stats),
	 .help = "also print each mode's WAL records by type, in the format of pg_waldump "
		 "--stats=record"},
	{.name = "wal-dir",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = offsetof(struct compare_opts, wal_dir),
	 .complete = PN_COMPLETE_DIR,
	 .help = "also write each mode's WAL into DIR/MODE (DIR/fpw, DIR/umbra-l3, ...) as "
		 "PostgreSQL segment files, which pg_waldump reads"},
};

const struct pn_cmd_spec pn_compare_spec = {
	.name = "compare",
	.args = "S.yaml",
	.args_help = "the scenario file",
	.args_min = 1,
	.args_max = 1,
	.args_missing = "missing the scenario file",
	.description = "Simulates the same scenario once per protocol mode and prints the metrics "
		       "side by side, one column per mode.",
	.opts = compare_opts,
	.nopts = PN_ARRAY_LEN(compare_opts),
	.exits = "0 every run ok, 1 a run broke a runtime invariant, 2 bad input",
};

/* Returns -1 to go on, or the exit status (0 after --help). */
static int parse(int argc, char **argv, struct compare_opts *o)
{
	int at, rc = pn_opts_parse(&pn_compare_spec, argc, argv, o, &at);

	if (rc >= 0)
		return rc;
	o->path = argv[at];
	o->nmodes = pn_cli_parse_mode_specs("compare", o->modes_arg, o->modes);
	return o->nmodes < 0 ? 2 : -1;
}

/* A progress line on a terminal (cli.h: quiet when stderr is not a TTY). */
static void progress(bool tty, int i, int n, const char *mode)
{
	if (!tty)
		return;
	if (i < n)
		fprintf(stderr, "\rcompare: simulating %s (%d/%d)\033[K", mode, i + 1, n);
	else
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

/* Two columns must not carry one label (cli.h pn_cli_label): 'umbra' next to 'umbra-l3' on
 * a scenario whose policy is l3 would be two columns of the same run under one name. */
static int distinct_labels(const struct pn_scenario *scenario, const struct compare_opts *o)
{
	char labels[PN_CLI_MAX_MODES][24];

	for (int i = 0; i < o->nmodes; i++) {
		struct pn_scenario sc = *scenario; /* shallow: only its protocol is changed */
		pn_cli_apply_mode(&sc, &o->modes[i]);
		pn_cli_label(&sc, &o->modes[i], labels[i], sizeof labels[i]);
		for (int j = 0; j < i; j++) {
			if (strcmp(labels[i], labels[j]) == 0)
				return pn_cli_usage_error("compare",
							  "modes %d and %d of '%s' are the "
							  "same run (%s) for %s",
							  j + 1, i + 1, o->modes_arg, labels[i],
							  o->path);
		}
	}
	return -1;
}

/* One mode's run; with --wal-dir its WAL goes to DIR/LABEL (created with its missing parents, as run does). */
static int simulate(struct pn_scenario *sc, const struct compare_opts *o, int i,
		    struct pn_cli_result *res)
{
	char dir[PN_ERROR_LEN], label[24];

	if (!o->wal_dir)
		return pn_cli_simulate(sc, &o->modes[i], res);
	pn_cli_label(sc, &o->modes[i], label, sizeof label);
	snprintf(dir, sizeof dir, "%.900s/%s", o->wal_dir, label);
	return pn_cli_simulate_wal(sc, &o->modes[i], res, dir);
}

/* Runs every mode; returns the worst run status. */
static int simulate_all(struct pn_scenario *sc, const struct compare_opts *o,
			struct pn_cli_result *res)
{
	bool tty = isatty(STDERR_FILENO);
	enum pn_protocol_id row = (enum pn_protocol_id)sc->protocol.row; /* a plain mode's */
	int worst = 0;

	for (int i = 0; i < o->nmodes; i++) {
		pn_protocol_set(sc, row);
		pn_cli_apply_mode(sc, &o->modes[i]);
		progress(tty, i, o->nmodes, pn_mode_name(sc->protocol.mode));
		worst = pn_cli_worst(worst, simulate(sc, o, i, &res[i]));
	}
	progress(tty, o->nmodes, o->nmodes, NULL);
	return worst;
}

/* The nofpw run, when there is one the engine accepted. */
static const struct pn_cli_result *reference(const struct pn_cli_result *res, int n)
{
	for (int i = 0; i < n; i++) {
		if (res[i].mode == PN_MODE_NOFPW && res[i].sim.status != 2)
			return &res[i];
	}
	return NULL;
}

static int report(const struct compare_opts *o, FILE *json, const struct pn_cli_result *res,
		  int worst)
{
	FILE *out = json == stdout ? stderr : stdout;
	int rc = 0;

	pn_cli_print_metrics(out, res, (size_t)o->nmodes, reference(res, o->nmodes));
	for (int i = 0; o->stats && i < o->nmodes; i++) {
		if (res[i].sim.status == 2)
			continue;
		fprintf(out, "\nWAL records of mode %s:\n", res[i].label);
		pn_cli_print_records(out, &res[i].sim.m);
	}
	if (json)
		rc = pn_cli_write_json("compare", json, o->json, res, (size_t)o->nmodes);
	for (int i = 0; i < o->nmodes; i++)
		pn_cli_report_failure(&res[i], true);
	return pn_cli_worst(worst, rc);
}

int pn_cmd_compare(int argc, char **argv)
{
	struct compare_opts o = {0};
	struct pn_scenario sc;
	struct pn_cli_result *res = NULL;
	FILE *json = NULL;
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (!pn_cli_load(o.path, &sc))
		return 2;
	if (distinct_labels(&sc, &o) == 2 ||
	    (o.json && !(json = pn_cli_open_output("compare", o.json)))) {
		rc = 2;
		goto out;
	}
	if (o.seed_set)
		sc.seed = o.seed;
	res = calloc((size_t)o.nmodes, sizeof *res);
	PN_ASSERT(res != NULL);
	rc = simulate_all(&sc, &o, res);
	rc = report(&o, json, res, rc);
out:
	free(res);
	pn_scenario_free(&sc);
	return rc;
}

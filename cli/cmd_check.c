/*
 * cmd_check.c: `penumbra check S.yaml... | DIR` (cli layer): enumerate crash points and
 * crash states (and schedules) of each scenario, recover each, compare with the oracle and
 * the scenario's `expect`. Not implemented yet: this file parses and validates the
 * documented options, answers --help, and otherwise says so (exit 2). Exit status once it
 * is: 0 every verdict as expected, 1 any not, 2 bad input.
 */
#include "cli.h"

#include <getopt.h>

static const char usage[] =
	"usage: penumbra check S.yaml... | DIR [--json FILE] [--junit FILE] [--jobs N]\n"
	"                      [--seed N] [--coverage]\n"
	"\n"
	"Enumerates the crash points and crash states of each scenario (every *.yaml of a\n"
	"directory), recovers each, verifies it with the oracle, and compares the verdict\n"
	"with the scenario's expect.verdict.\n"
	"\n"
	"options:\n"
	"  --json FILE   write the verdicts as JSON to FILE ('-' = stdout)\n"
	"  --junit FILE  write the verdicts as JUnit XML to FILE, for CI systems\n"
	"  --jobs N      spread the work over N processes\n"
	"  --seed N      override each scenario's seed\n"
	"  --coverage    report the coverage markers never seen both ways\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 0 every verdict as expected, 1 any not, 2 bad input\n";

enum { OPT_JSON = 256, OPT_JUNIT, OPT_JOBS, OPT_SEED, OPT_COVERAGE };

/* Returns -1 to go on, or the exit status. */
static int option(int c, char **argv)
{
	uint64_t v;

	switch (c) {
	case 'h':
		fputs(usage, stdout);
		return 0;
	case OPT_JSON:
	case OPT_JUNIT:
	case OPT_COVERAGE:
		return -1;
	case OPT_JOBS:
		return pn_cli_parse_uint("check", "--jobs", optarg, &v) ? -1 : 2;
	case OPT_SEED:
		return pn_cli_parse_uint("check", "--seed", optarg, &v) ? -1 : 2;
	default:
		return pn_cli_bad_option("check", c, argv);
	}
}

int pn_cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"json", required_argument, NULL, OPT_JSON},
		{"junit", required_argument, NULL, OPT_JUNIT},
		{"jobs", required_argument, NULL, OPT_JOBS},
		{"seed", required_argument, NULL, OPT_SEED},
		{"coverage", no_argument, NULL, OPT_COVERAGE},
		{NULL, 0, NULL, 0},
	};
	int c, rc;

	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		rc = option(c, argv);
		if (rc >= 0)
			return rc;
	}
	return pn_cli_not_implemented("check");
}

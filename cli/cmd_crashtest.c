/*
 * cmd_crashtest.c: `penumbra crashtest S.yaml --path P --runs N` (cli layer): real
 * crashes. Each run starts the workload on a real file in a child process, SIGKILLs it at
 * a random moment, recovers from the file and verifies it against the acknowledged
 * commits. Not implemented yet: this file parses and validates the documented options,
 * answers --help, and otherwise says so (exit 2).
 */
#include "cli.h"

#include <getopt.h>

static const char usage[] =
	"usage: penumbra crashtest S.yaml --path P [--runs N] [--seed N] [--json FILE]\n"
	"\n"
	"Runs the workload on a real file in a child process, kills it with SIGKILL at a\n"
	"random moment, recovers from the file and verifies every acknowledged commit;\n"
	"repeats.\n"
	"\n"
	"options:\n"
	"  --path P      the file to run on (its contents are destroyed)\n"
	"  --runs N      how many crashes (default 50)\n"
	"  --seed N      seed of the kill moments (default: the scenario's seed)\n"
	"  --json FILE   write the outcome as JSON to FILE ('-' = stdout)\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 0 nothing lost, 1 otherwise, 2 bad input\n";

enum { OPT_PATH = 256, OPT_RUNS, OPT_SEED, OPT_JSON };

/* Returns -1 to go on, or the exit status. */
static int option(int c, char **argv)
{
	uint64_t v;

	switch (c) {
	case 'h':
		fputs(usage, stdout);
		return 0;
	case OPT_PATH:
	case OPT_JSON:
		return -1;
	case OPT_RUNS:
		return pn_cli_parse_uint("crashtest", "--runs", optarg, &v) ? -1 : 2;
	case OPT_SEED:
		return pn_cli_parse_uint("crashtest", "--seed", optarg, &v) ? -1 : 2;
	default:
		return pn_cli_bad_option("crashtest", c, argv);
	}
}

int pn_cmd_crashtest(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"path", required_argument, NULL, OPT_PATH},
		{"runs", required_argument, NULL, OPT_RUNS},
		{"seed", required_argument, NULL, OPT_SEED},
		{"json", required_argument, NULL, OPT_JSON},
		{NULL, 0, NULL, 0},
	};
	int c, rc;

	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		rc = option(c, argv);
		if (rc >= 0)
			return rc;
	}
	return pn_cli_not_implemented("crashtest");
}

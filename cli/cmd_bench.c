/*
 * cmd_bench.c: `penumbra bench S.yaml --path P` (cli layer): the same engine and workload
 * on a real file or block device through io_uring, in real time, once per mode; metrics
 * side by side as compare prints them. Not implemented yet: this file parses and validates
 * the documented options, answers --help, and otherwise says so (exit 2).
 */
#include "cli.h"

#include <getopt.h>

static const char usage[] =
	"usage: penumbra bench S.yaml --path P [--modes LIST] [--duration D] [--json FILE]\n"
	"                      [--seed N]\n"
	"\n"
	"Runs the scenario's workload on a real file or block device through io_uring, in\n"
	"real time, once per mode, and prints the metrics side by side.\n"
	"\n"
	"options:\n"
	"  --path P      the file or block device to run on (its contents are destroyed)\n"
	"  --modes LIST  comma-separated, distinct modes (default fpw,nofpw,umbra,doublewrite)\n"
	"  --duration D  how long to run each mode, e.g. 30s or 4min\n"
	"  --json FILE   write one result per mode as JSON to FILE ('-' = stdout)\n"
	"  --seed N      override the scenario's seed\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 0 ok, 1 a run failed, 2 bad input\n";

enum { OPT_PATH = 256, OPT_MODES, OPT_DURATION, OPT_JSON, OPT_SEED };

/* Returns -1 to go on, or the exit status. */
static int option(int c, char **argv)
{
	enum pn_mode modes[PN_CLI_MAX_MODES];
	uint64_t v;

	switch (c) {
	case 'h':
		fputs(usage, stdout);
		return 0;
	case OPT_PATH:
	case OPT_JSON:
		return -1;
	case OPT_MODES:
		return pn_cli_parse_modes("bench", optarg, modes) > 0 ? -1 : 2;
	case OPT_DURATION:
		return pn_cli_parse_duration("bench", "--duration", optarg, &v) ? -1 : 2;
	case OPT_SEED:
		return pn_cli_parse_uint("bench", "--seed", optarg, &v) ? -1 : 2;
	default:
		return pn_cli_bad_option("bench", c, argv);
	}
}

int pn_cmd_bench(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"path", required_argument, NULL, OPT_PATH},
		{"modes", required_argument, NULL, OPT_MODES},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"json", required_argument, NULL, OPT_JSON},
		{"seed", required_argument, NULL, OPT_SEED},
		{NULL, 0, NULL, 0},
	};
	int c, rc;

	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		rc = option(c, argv);
		if (rc >= 0)
			return rc;
	}
	return pn_cli_not_implemented("bench");
}

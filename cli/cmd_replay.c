/*
 * cmd_replay.c: `penumbra replay T.yaml` (cli layer): re-run a counterexample trace (a
 * scenario with a replay: section) exactly, print its timeline and the violation. Not
 * implemented yet: this file parses the documented options, answers --help, and otherwise
 * says so (exit 2). Exit status once it is: 1 when the violation reproduces, 0 when it
 * does not, 2 bad input.
 */
#include "cli.h"

#include <getopt.h>

static const char usage[] =
	"usage: penumbra replay T.yaml [--json FILE]\n"
	"\n"
	"Re-runs a counterexample trace exactly (the same seed, schedule, crash point and\n"
	"crash state), then prints its timeline and the violation.\n"
	"\n"
	"options:\n"
	"  --json FILE   write the outcome as JSON to FILE ('-' = stdout)\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 1 the violation reproduces, 0 it does not, 2 bad input\n";

enum { OPT_JSON = 256 };

int pn_cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"json", required_argument, NULL, OPT_JSON},
		{NULL, 0, NULL, 0},
	};
	int c;

	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c != OPT_JSON)
			return pn_cli_bad_option("replay", c, argv);
	}
	return pn_cli_not_implemented("replay");
}

/*
 * output.c: an output file of a command (cli layer), opened and put in place through
 * src/base/files.h (F2-F4: a temporary beside it, renamed into place whole, never onto an
 * input), with the command's name on every message. Its own file so that a harness that
 * compiles one command's code (fuzz/fuzz_import.c, cli/import_scenario.c) has it too.
 */
#include "cli.h"

#include "files.h"

#include <stdio.h>

FILE *pn_cli_open_output(const char *cmd, const char *path)
{
	char why[PN_ERROR_LEN];
	FILE *f = pn_file_open_out(path, why, sizeof why);

	if (!f)
		fprintf(stderr, "penumbra %s: cannot write '%s': %s\n", cmd, path, why);
	return f;
}

int pn_cli_close_output(const char *cmd, FILE *f, const char *path, bool written)
{
	char why[PN_ERROR_LEN] = "";

	if (pn_file_close_out(f, written, why, sizeof why))
		return 0;
	fprintf(stderr, "penumbra %s: cannot write '%s': %s\n", cmd, path, why);
	return 2;
}

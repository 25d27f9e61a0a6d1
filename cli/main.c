/*
 * main.c: the `penumbra` executable (cli layer). Everything is in the pn_cli library
 * (cli.c dispatches to cli/cmd_<name>.c) so that tests call the same code; main only
 * turns the returned status into the exit status.
 */
#include "cli.h"

int main(int argc, char **argv)
{
	return pn_cli_main(argc, argv);
}

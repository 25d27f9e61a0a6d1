/*
 * main.c: the `penumbra` executable (cli layer). Everything is in the pn_cli library
 * (cli.c dispatches to cli/cmd_<name>.c) so that tests call the same code; main only
 * turns the returned status into the exit status.
 */
#include "cli.h"

/* jemalloc's options (read when it starts; ignored when the build has no jemalloc): keep
 * freed pages instead of returning them to the kernel, since the checker frees and
 * allocates a recovering world for every crash state. */
const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";

int main(int argc, char **argv)
{
	return pn_cli_main(argc, argv);
}

/*
 * main.c: the `penumbra` executable (cli layer). Everything is in the pn_cli library
 * (cli.c dispatches to cli/cmd_<name>.c) so that tests call the same code; main only
 * turns the returned status into the exit status.
 */
#include "cli.h"

/* jemalloc's options (read when it starts; ignored when the build has no jemalloc): keep
 * freed pages instead of returning them to the kernel, since the checker frees and
 * allocates a recovering world for every crash state; and reuse them whatever the size of
 * the free run they lie in: by default a 16 KiB device chunk is not cut from a free run
 * over 64 times its size (lg_extent_max_active_fit 6), so the WAL segments the device frees
 * (16 MiB each) were never reused and the resident set grew with all the WAL ever written
 * (docs/performance.md, memory). And cache freed blocks up to 1 MiB per thread (default
 * 32 KiB): a recovering world's buffer pool, I/O buffers and WAL ring are larger, and
 * jemalloc zeroed each such calloc by handing its pages back (madvise), so that every
 * crash state faulted them in again (24 faults and a quarter of the CPU per state on
 * scenarios/protocols/umbra-random.yaml, docs/performance.md). */
const char *malloc_conf =
	"dirty_decay_ms:-1,muzzy_decay_ms:-1,lg_extent_max_active_fit:30,tcache_max:1048576";

int main(int argc, char **argv) { return pn_cli_main(argc, argv); }

/*
 * version.c: pn_cli_version() (cli layer): the version of the CMake project and the git
 * commit the build was made from. Its generated header, written into the build tree by
 * scripts/version.cmake at every build, is rewritten only when the commit or its "dirty"
 * changed, so that only this file is compiled again.
 */
#include "cli.h"

#include "pn_version.h" /* generated: PN_GIT_COMMIT */

const char *pn_cli_version(void) { return PN_VERSION " (commit " PN_GIT_COMMIT ")"; }

/*
 * realdisk.h: what the two commands on real files (cli layer: bench, crashtest) share: the
 * checks made before any file is touched, and writing their JSON document.
 */
#ifndef PN_REALDISK_H
#define PN_REALDISK_H

#include "cli.h"

/* Loads the scenario (sc), refuses a script workload (it ends by itself: these commands run
 * a generated one until a duration or a kill) and a directory holding files penumbra did not
 * create (unless force), opens the JSON output when asked (*json). Returns -1 to go on (sc
 * loaded: the caller frees it), or 2 with the message printed. */
int pn_realdisk_prepare(const char *cmd, const char *scenario, const char *dir, bool force,
			const char *json_path, struct pn_scenario *sc, FILE **json);
/* Writes root (taken) to f, closes f unless it is stdout. Returns 0, or 2 (message). */
int pn_realdisk_write_json(const char *cmd, json_t *root, FILE *f, const char *path);

#endif

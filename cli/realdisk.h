/*
 * realdisk.h: what the two commands on real files (cli layer: bench, crashtest) share: the
 * checks made before any file is touched, and writing their JSON document.
 */
#ifndef PN_REALDISK_H
#define PN_REALDISK_H

#include "cli.h"
#include "disk.h"

/* Loads the scenario (sc), refuses a script workload (it ends by itself: these commands run
 * a generated one until a duration or a kill), opens the JSON output when asked (*json), and
 * locks the directory for the whole command (disk.h DK5: pn_disk_dir_lock's refusals).
 * Returns -1 to go on (sc loaded and dir locked: the caller frees sc and unlocks dir once
 * the command is over), or 2 with the message printed. */
int pn_realdisk_prepare(const char *cmd, const char *scenario, const char *path, bool force,
			const char *json_path, struct pn_scenario *sc, FILE **json,
			struct pn_disk_dir *dir);
/* Writes root (taken) to f, closes f unless it is stdout. Returns 0, or 2 (message). */
int pn_realdisk_write_json(const char *cmd, json_t *root, FILE *f, const char *path);

#endif

/*
 * realdisk.c: the checks and output shared by bench and crashtest (cli layer). See
 * realdisk.h.
 */
#include "realdisk.h"

#include "disk.h"
#include "files.h"

int pn_realdisk_prepare(const char *cmd, const char *scenario, const char *path, bool force,
			const char *json_path, struct pn_scenario *sc, FILE **json,
			struct pn_disk_dir *dir)
{
	char err[PN_ERROR_LEN];

	*json = NULL;
	dir->fd = dir->lock_fd = -1;
	if (!pn_cli_load(scenario, sc))
		return 2;
	if (sc->workload.kind == PN_WL_SCRIPT) {
		fprintf(stderr,
			"penumbra %s: %s: a script workload ends by itself; %s runs a generated "
			"workload (workload.kind random) until its duration or its kill\n",
			cmd, scenario, cmd);
		goto refused;
	}
	if (json_path && !(*json = pn_cli_open_output(cmd, json_path)))
		goto refused;
	if (!pn_disk_dir_lock(dir, path, force, err, sizeof(err))) {
		fprintf(stderr, "penumbra %s: %s\n", cmd, err);
		goto refused;
	}
	return -1;
refused:
	pn_file_abort_out(*json);
	*json = NULL;
	pn_scenario_free(sc);
	return 2;
}

int pn_realdisk_write_json(const char *cmd, json_t *root, FILE *f, const char *path)
{
	root = pn_cli_json_stamped(root);
	int rc = json_dumpf(root, f,
			    JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	rc |= fputc('\n', f) == EOF;
	return pn_cli_close_output(cmd, f, path, rc == 0);
}

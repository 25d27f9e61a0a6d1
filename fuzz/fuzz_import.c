/*
 * fuzz_import.c: libFuzzer harness of `penumbra import` past the CRC: the WAL reader's
 * record decoder (src/format/xlogread.c), the conversion of `import --out`
 * (cli/import_scenario.c) and a replay of what it wrote (src/workload/wl_import.c).
 *
 * The input is a segment's first bytes, as fuzz_xlog's; walfix.c then rewrites its page
 * headers and every record's xl_prev and CRC from the records' own lengths, so that a
 * mutation inside a record reaches the decoder's cross-checks instead of ending the WAL at
 * the CRC. The segment is read to its end, converted, and, when the conversion succeeds, its
 * scenario is loaded and run (a 16 KiB input holds a few hundred records at most). It must
 * return, never crash, leak, read out of bounds or allocate without bound, and:
 *   FI1. the reader stops with a one-line reason; a refused record (xlogread.h XR5) names the
 *        segment file;
 *   FI2. the conversion exits 0 or 2;
 *   FI3. a scenario the conversion wrote loads, and its run in fpw ends without a violation
 *        and without refusing its trace (what import writes, the replay takes).
 * Build: cmake --preset fuzz; run: build-fuzz/fuzz/fuzz_import fuzz/corpus/import.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "load.h"
#include "walfix.h"
#include "world.h"
#include "xlogread.h"

static char dir[256], yaml[320];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	int null = open("/dev/null", O_WRONLY);

	(void)argc;
	(void)argv;
	pn_fuzz_init();
	snprintf(dir, sizeof dir, "%s/pn-fuzz-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir) || null < 0 || dup2(null, STDOUT_FILENO) < 0) {
		perror("fuzz_import: setup");
		abort();
	}
	close(null);
	snprintf(yaml, sizeof yaml, "%s/s.yaml", dir);
	return 0;
}

/* FI1: reads the segment to its end. */
static void read_all(struct pn_xlr *r, const char *path)
{
	static struct pn_xlr_record rec;

	for (pn_lsn at = pn_xlr_begin(r, 0, 0); at != 0 && pn_xlr_read(r, &rec);)
		;
	if (r->why[0] == '\0' || strchr(r->why, '\n') || (r->refused && !strstr(r->why, path))) {
		fprintf(stderr, "FI1: reading stopped with '%s' (refused: %d)\n", r->why,
			r->refused);
		abort();
	}
}

/* FI3: the scenario import wrote loads and replays in fpw. */
static void replay(void)
{
	static struct pn_sim_result res;
	static char err[PN_ERROR_LEN];
	struct pn_scenario sc;

	if (!pn_scenario_load(yaml, &sc, err, sizeof err)) {
		fprintf(stderr, "FI3: import wrote a scenario that does not load: %s\n", err);
		abort();
	}
	memset(&res, 0, sizeof res);
	if (pn_sim_run(&sc, &res) != 0) {
		fprintf(stderr, "FI3: the replay of an import ends with status %d: %s\n",
			res.status, res.error);
		abort();
	}
	pn_scenario_free(&sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pn_xlr r;
	static char err[PN_ERROR_LEN];
	char *paths[1] = {dir};
	uint8_t *seg = malloc(size ? size : 1);
	const char *path;
	int rc;

	PN_ASSERT(seg != NULL);
	memcpy(seg, data, size);
	pn_walfix(seg, size);
	path = pn_fuzz_write_segment(dir, seg, size);
	free(seg);
	unlink(yaml);
	if (!pn_xlr_open(&r, paths, 1, err, sizeof err))
		return 0;
	read_all(&r, path);
	rc = pn_import_scenario(&r, 0, 0, yaml);
	pn_xlr_close(&r);
	if (rc != 0 && rc != 2) { /* FI2 */
		fprintf(stderr, "FI2: import --out exited %d\n", rc);
		abort();
	}
	if (rc == 0)
		replay();
	return 0;
}

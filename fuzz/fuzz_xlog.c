/*
 * fuzz_xlog.c: libFuzzer harness of the PostgreSQL WAL reader (src/format/xlogread.c), what
 * `penumbra import` runs over a user's pg_wal.
 *
 * The input is a segment file in a directory made once per process, named after the segment
 * its long page header says it is: its first bytes, for the reader stops at the file's end as at a torn tail (records
 * crossing into a second segment are tests/test_xlogread.c's). The reader must return, never crash, leak, read out of bounds or allocate without bound (ASan,
 * UBSan, libFuzzer's rss limit), and:
 *   X1. a refusal to open says why (a non-empty one-line reason);
 *   X2. records come in increasing LSN order, each ending after it starts, and each starting
 *       at or after the end of the previous one;
 *   X3. with no end limit, the reader says why it stopped (a non-empty one-line reason);
 *   X4. the statistics count every record returned, and every counted row has a name.
 * Build: cmake --preset fuzz; run: build-fuzz/fuzz/fuzz_xlog fuzz/corpus/xlog (README.md).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlogread.h"

static char dir[256];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	pn_fuzz_init();
	snprintf(dir, sizeof dir, "%s/pn-fuzz-xlog-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("fuzz_xlog: mkdtemp");
		abort();
	}
	return 0;
}

static void one_line(const char *what, const char *why)
{
	if (why[0] != '\0' && !strchr(why, '\n'))
		return;
	fprintf(stderr, "%s: not a one-line reason: '%s'\n", what, why);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pn_xlr r;
	static struct pn_xlr_record rec;
	static struct pn_xlr_stats stats;
	static char err[PN_ERROR_LEN];
	char *paths[1] = {dir};
	uint64_t count = 0, counted = 0;
	pn_lsn last_end = 0;

	pn_fuzz_write_segment(dir, data, size);
	if (!pn_xlr_open(&r, paths, 1, err, sizeof err)) {
		one_line("X1 open", err); /* X1 */
		return 0;
	}
	memset(&stats, 0, sizeof stats);
	for (pn_lsn at = pn_xlr_begin(&r, 0, 0); at != 0 && pn_xlr_read(&r, &rec);) {
		if (rec.end <= rec.start || rec.start < last_end) { /* X2 */
			fprintf(stderr, "X2: record %llX..%llX after one ending at %llX\n",
				(unsigned long long)rec.start, (unsigned long long)rec.end,
				(unsigned long long)last_end);
			abort();
		}
		last_end = rec.end;
		pn_xlr_stats_add(&stats, &rec);
		count++;
	}
	one_line("X3 stop", r.why); /* X3 */
	for (int rm = 0; rm < 256; rm++)
		for (int id = 0; id < 16; id++) {
			char name[96];

			if (!stats.rec[rm][id].count)
				continue;
			counted += stats.rec[rm][id].count;
			pn_xlr_stats_name(r.pg_version, (uint8_t)rm, (uint8_t)id, name,
					  sizeof name);
			PN_ASSERT(name[0] != '\0'); /* X4 */
		}
	PN_ASSERT(counted == count); /* X4 */
	pn_xlr_close(&r);
	return 0;
}

/*
 * waldir.c: `run` / `compare` `--wal-dir DIR` (cli layer): a simulated run's WAL written as
 * PostgreSQL's segment files, DIR/000000010000000000000001 ..., which real pg_waldump reads
 * (docs/cli.md says in which modes and why). The bytes are the engine's: the page its format
 * wrote, then every record as it is inserted, laid into pages by walfmt.c's
 * pn_wal_copy_record (the function the engine's own WAL buffers use), so page headers,
 * continuation records and padding are what the engine's WAL file holds, without its ring's
 * reuse: every segment the run entered is a file of the segment size, zero after the end.
 * Memory: one segment.
 */
#include "waldir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "walfmt.h"

static bool flush(struct pn_waldir *d)
{
	char path[PN_ERROR_LEN + 32], why[PN_ERROR_LEN / 4];
	uint64_t per_id = ((uint64_t)1 << 32) / d->obs.seg_size;
	FILE *f;

	if (d->segno == UINT64_MAX || d->failed)
		return !d->failed;
	snprintf(path, sizeof path, "%s/%08X%08X%08X", d->dir, 1u, (unsigned)(d->segno / per_id),
		 (unsigned)(d->segno % per_id));
	f = pn_file_open_out(path, why, sizeof why); /* files.h F2-F4: whole or absent */
	if (!f || !pn_file_close_out(f, fwrite(d->seg, 1, d->obs.seg_size, f) == d->obs.seg_size,
				     why, sizeof why)) {
		snprintf(d->error, sizeof d->error, "%.800s: %s", path, why);
		d->failed = true;
		return false;
	}
	d->segments++;
	return true;
}

/* The buffer of the WAL page at addr: its segment's, the last one flushed when it changes. */
static uint8_t *page_of(void *arg, pn_lsn addr)
{
	struct pn_waldir *d = arg;
	uint64_t segno = addr / d->obs.seg_size;

	if (segno != d->segno) {
		PN_ASSERT(d->segno == UINT64_MAX ||
			  segno > d->segno); /* records come in LSN order */
		flush(d);
		memset(d->seg, 0, d->obs.seg_size);
		d->segno = segno;
	}
	return d->seg + addr % d->obs.seg_size;
}

static void first_page(struct pn_sim_wal_observer *o, pn_lsn addr, const uint8_t *bytes)
{
	struct pn_waldir *d = (struct pn_waldir *)o;
	if (!d->seg && !(d->seg = malloc(o->seg_size))) {
		snprintf(d->error, sizeof d->error, "out of memory for a WAL segment");
		d->failed = true;
		return;
	}
	memcpy(page_of(d, addr), bytes, PN_XLOG_BLCKSZ);
}

static void record(struct pn_sim_wal_observer *o, const uint8_t *rec, uint32_t len, pn_lsn start,
		   pn_lsn end)
{
	struct pn_waldir *d = (struct pn_waldir *)o;
	(void)end;
	if (!d->failed)
		pn_wal_copy_record(rec, len, start, o->seg_size, o->sysid, page_of, d);
}

/* Creates dir and every directory above it that is missing (mkdir -p); false, errno set,
 * if one cannot be made. */
static bool make_path(const char *dir)
{
	char path[PN_ERROR_LEN];
	size_t n = strlen(dir);

	if (n >= sizeof path) {
		errno = ENAMETOOLONG;
		return false;
	}
	memcpy(path, dir, n + 1);
	for (char *p = path + 1;; p++) {
		char c = *p;
		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST)
			return false;
		if (c == '\0')
			return true;
		*p = c;
	}
}

bool pn_waldir_open(struct pn_waldir *d, const char *dir, uint32_t seg_size, char *err, size_t len)
{
	struct stat st;

	memset(d, 0, sizeof *d);
	d->obs.page = first_page;
	d->obs.record = record;
	d->segno = UINT64_MAX;
	snprintf(d->dir, sizeof d->dir, "%s", dir);
	if (!make_path(dir)) {
		snprintf(err, len, "%s: %s", dir, strerror(errno));
		return false;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, len, "%s: not a directory", dir);
		return false;
	}
	if (seg_size < PN_WALDIR_PG_MIN_SEG)
		fprintf(stderr,
			"penumbra: --wal-dir %s: warning: storage.wal_segment_size is %u KiB, below "
			"PostgreSQL's 1 MiB minimum: pg_waldump and penumbra import refuse these files\n",
			dir, seg_size >> 10);
	return true;
}

void pn_waldir_begin(struct pn_waldir *d, const struct pn_engine *e)
{
	pn_lsn first = pn_engine_format_redo(e);
	first -= first % PN_XLOG_BLCKSZ;
	d->obs.sysid = pn_engine_geometry(e).sysid;
	d->obs.seg_size = pn_engine_wal_seg_size(e);
	d->obs.page(&d->obs, first, pn_engine_wal_ring_page(e, first));
}

bool pn_waldir_close(struct pn_waldir *d)
{
	bool ok = d->seg ? flush(d) : !d->failed;
	free(d->seg);
	d->seg = NULL;
	return ok;
}

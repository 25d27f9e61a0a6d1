/*
 * wl_import.c: the `import` workload (workload layer, a row of the client table: src/engine/client.h): a real PostgreSQL WAL replayed, record
 * by record, from the trace `penumbra import --out` wrote (cli/cmd_import.c). One client
 * runs the trace in WAL order; memory is one record and the open trace file, whatever the
 * WAL's size (the trace is read as the run goes: the one file an engine part reads, its
 * input, never written).
 *
 * The trace (text, one line each):
 *   penumbra-import-trace 1        the format
 *   pages N                        the page map's size (storage.pages must hold it)
 *   K                              a checkpoint: PostgreSQL's redo point fell here
 *   C                              Transaction/COMMIT: the client commits
 *   F                              --from: the range's first record follows; the run's
 *                                  WAL figures count from here (client.h's
 *                                  pn_client_count_wal_from_here): the records before it
 *                                  (from the checkpoint's redo point before --from) are
 *                                  replayed, not counted. At most one; none: all counted
 *   R rmid info main_len n  then n times: page kind data_len lower upper
 *                                  one record of PostgreSQL's resource manager rmid with
 *                                  info (its upper four bits), main_len bytes of main
 *                                  data, n <= 3 blocks (pages of the map). kind: n an
 *                                  ordinary block, i a block the record rebuilds
 *                                  (BKPBLOCK_WILL_INIT), f an image PostgreSQL always
 *                                  logs (XLOG/FPI: log_newpage), h a hint-bit image
 *                                  (XLOG/FPI_FOR_HINT), u a block PostgreSQL
 *                                  registered with REGBUF_NO_IMAGE: never an image
 *                                  nor a shift, in any mode. data_len: the block data the
 *                                  record carries without an image (PostgreSQL's, or,
 *                                  where PostgreSQL logged an image instead, its average
 *                                  for that record type and block). lower, upper: the
 *                                  page's pd_lower and pd_upper after the record, where
 *                                  PostgreSQL's image showed them, or where fpw would
 *                                  image the page and PostgreSQL did not, as its records
 *                                  show them (import_scenario.c; 0 0: not known, kept).
 *
 * What the replay writes (the record kind PN_REC_IMPORTED, rmid and info kept, info bit
 * PN_INFO_IMPORTED set so that redo and the oracle tell it from the engine's own kinds):
 * block data = data_len filler bytes, PostgreSQL's size; in a record with a block whose
 * lower, upper are given (info bit PN_INFO_LAYOUT) every block's data is {lower u16, upper
 * u16} + data_len - 4 filler bytes instead (at least 4 bytes: a block PostgreSQL imaged is
 * imaged in fpw too, and an image replaces its data);
 * main data = main_len filler bytes (at most IMPORT_MAIN_MAX). Its redo
 * (pn_redo_imported, src/format/redo_xlog.c): a will-init block first becomes an empty page (24 B header,
 * pd_lower 24, pd_upper = pd_special = page_size); then pd_lower / pd_upper are set when
 * given (24 <= lower <= upper <= page_size), the hole [pd_lower, pd_upper) is zeroed, and
 * the filler bytes are written from pd_upper on (as many as fit before page_size). So an
 * image the engine takes after the record leaves out the hole PostgreSQL's image left out.
 * Images, shifts and double writes are the protocol's, as for every workload (fpw: the
 * first change of a page after the redo pointer; kind i and u never; kind f always; kind h as a
 * hint: XLOG/FPI_FOR_HINT, or a hint-dirty page without WAL).
 * Records with more than 3 blocks keep 3 (the converter folds the rest into main data);
 * records without a block run on page 0 without changing it.
 */
#include "engine.h"
#include "files.h"
#include "redo_xlog.h"
#include "txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 256
#define MAX_BLOCKS 3          /* the own page and extra_pages()' two */
#define IMPORT_MAIN_MAX 4096u /* a replayed record's main data, at most */
#define IMPORT_DATA_MAX 8192u /* a replayed block's data, at most */

struct imp_block {
	uint32_t page;
	char kind;
	uint16_t data_len, lower, upper;
};

struct imp_rec {
	uint8_t rmid, info, nblocks;
	uint32_t main_len;
	struct imp_block b[MAX_BLOCKS];
};

struct imp {
	struct wl_base b;
	FILE *f;
	uint32_t pages;
	bool open_txn; /* records since the last commit */
	bool ended;
	bool counted;    /* the F line was read (check_lines: there is at most one) */
	uint64_t serial; /* records replayed: the filler bytes derive from it */
	struct imp_rec cur;
	uint8_t main[IMPORT_MAIN_MAX];
	uint8_t data[MAX_BLOCKS][IMPORT_DATA_MAX];
};

/* The trace's path: as given if absolute, else beside the scenario file. */
static void trace_path(const struct pn_scenario *sc, char *out, size_t len)
{
	const char *slash = strrchr(sc->path, '/');
	if (sc->workload.trace[0] == '/' || !slash)
		snprintf(out, len, "%s", sc->workload.trace);
	else
		snprintf(out, len, "%.*s/%s", (int)(slash - sc->path), sc->path,
			 sc->workload.trace);
}

static bool check_lines(struct pn_client_setup *setup, struct imp *s, const char *path);

/* The trace's two header lines; false (e's error set) if the file is none or does not fit. */
static bool open_trace(struct pn_client_setup *setup, struct imp *s)
{
	char path[PN_ERROR_LEN], line[LINE_MAX_LEN], why[256];
	unsigned version = 0, pages = 0;
	const struct pn_scenario *sc = setup->sc;
	trace_path(sc, path, sizeof path);
	if (!(s->f = pn_file_fopen_in(path, "the trace penumbra import wrote", why, sizeof why))) {
		snprintf(setup->error, setup->error_size,
			 "%.300s: workload.trace %.400s cannot be read: %s", sc->path, path, why);
		return false;
	}
	if (!fgets(line, sizeof line, s->f) ||
	    sscanf(line, "penumbra-import-trace %u", &version) != 1 || version != 1) {
		snprintf(setup->error, setup->error_size,
			 "%.600s:1: expected 'penumbra-import-trace 1': not a trace of penumbra "
			 "import (version 1)",
			 path);
		return false;
	}
	if (!fgets(line, sizeof line, s->f) || sscanf(line, "pages %u", &pages) != 1) {
		snprintf(setup->error, setup->error_size,
			 "%.600s:2: expected 'pages N', the page map's size", path);
		return false;
	}
	if (pages > setup->heap_pages) {
		snprintf(setup->error, setup->error_size,
			 "%s: storage.pages is %u; the imported WAL "
			 "touches %u pages: set storage.pages to %u or more",
			 sc->path, setup->heap_pages, pages, pages);
		return false;
	}
	s->pages = pages;
	return check_lines(setup, s, path);
}

static bool init(struct pn_client_setup *setup, void **state)
{
	if (!wl_base_new(setup, state, sizeof(struct imp), false))
		return false;
	struct imp *s = *state;
	PN_ASSERT(s != NULL && s->f == NULL);
	if (!open_trace(setup, s))
		return false;
	if (setup->sc->workload.clients != 1) {
		snprintf(setup->error, setup->error_size,
			 "%s: workload.clients is %u; an imported WAL "
			 "is replayed by one client",
			 setup->sc->path, setup->sc->workload.clients);
		return false;
	}
	return true;
}

static void import_free(void *state)
{
	struct imp *s = state;
	if (s && s->f)
		fclose(s->f);
	if (s)
		wl_base_free(&s->b);
	free(s);
}

/* One R line's fields after "R"; false if malformed. */
static bool parse_record(struct imp *s, const char *line, struct imp_rec *r)
{
	unsigned rmid, info, main_len, n;
	int used = 0;

	if (sscanf(line, "R %u %u %u %u%n", &rmid, &info, &main_len, &n, &used) != 4 ||
	    rmid > PN_RM_MAX || info > 255 || n > MAX_BLOCKS)
		return false;
	r->rmid = (uint8_t)rmid;
	r->info = (uint8_t)info;
	r->main_len = PN_MIN(main_len, (unsigned)IMPORT_MAIN_MAX);
	r->nblocks = (uint8_t)n;
	line += used;
	for (unsigned i = 0; i < n; i++) {
		unsigned page, len, lower, upper;
		char kind;
		if (sscanf(line, " %u %c %u %u %u%n", &page, &kind, &len, &lower, &upper, &used) !=
			    5 ||
		    page >= s->pages || !strchr("nifhu", kind) || lower > 65535 || upper > 65535)
			return false;
		for (unsigned j = 0; j < i; j++)
			if (r->b[j].page == page)
				return false;
		r->b[i] = (struct imp_block){page, kind, (uint16_t)PN_MIN(len, IMPORT_DATA_MAX),
					     (uint16_t)lower, (uint16_t)upper};
		line += used;
	}
	return line[strspn(line, " \n")] == '\0';
}

/* What is wrong with one trace line (its newline removed), NULL if nothing: a line import
 * writes, whose blocks' pd_lower / pd_upper fit the page (what pn_redo_imported asks). */
static const char *line_fault(struct imp *s, const char *line, char *why, size_t len)
{
	struct imp_rec r;

	if (strcmp(line, "K") == 0 || strcmp(line, "C") == 0)
		return NULL;
	if (strcmp(line, "F") == 0) { /* check_lines' pass sets counted: reset before the run */
		if (s->counted)
			return "a second F line (the range's start is marked once)";
		s->counted = true;
		return NULL;
	}
	if (line[0] != 'R') {
		snprintf(why, len, "expected a line K, C, F or R ..., got '%.40s'", line);
		return why;
	}
	if (!parse_record(s, line, &r)) {
		snprintf(
			why, len,
			"expected 'R rmid info main_len n' and n <= %u blocks 'page kind data_len "
			"lower upper' (rmid <= %u, info <= 255, kind n, i, f, h or u, pages distinct "
			"and below %u)",
			MAX_BLOCKS, PN_RM_MAX, s->pages);
		return why;
	}
	for (unsigned i = 0; i < r.nblocks; i++) {
		const struct imp_block *b = &r.b[i];
		if ((b->lower || b->upper) && (b->lower < PN_PAGE_HEADER || b->lower > b->upper ||
					       b->upper > s->b.page_size)) {
			snprintf(why, len,
				 "block %u: pd_lower %u, pd_upper %u do not fit a page of %u bytes "
				 "(expected %u <= lower <= upper <= %u, or 0 0)",
				 i, b->lower, b->upper, s->b.page_size, PN_PAGE_HEADER,
				 s->b.page_size);
			return why;
		}
	}
	return NULL;
}

/* Every line after the header, before the run reads any (a user may edit or cut the
 * trace): false with "TRACE:LINE: what was expected" in setup's error at the first line
 * import would not write or whose record would not fit its page. The file is left at the
 * first line after the header. */
static bool check_lines(struct pn_client_setup *setup, struct imp *s, const char *path)
{
	char line[LINE_MAX_LEN], why[PN_ERROR_LEN / 2];
	const char *fault = NULL;
	long first = ftell(s->f);
	unsigned no = 2;

	while (!fault && fgets(line, sizeof line, s->f)) {
		size_t n = strlen(line);
		no++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		else if (!feof(s->f))
			fault = "a line longer than the longest import writes (255 bytes)";
		if (!fault)
			fault = line_fault(s, line, why, sizeof why);
	}
	if (!fault && (first < 0 || fseek(s->f, first, SEEK_SET) != 0))
		fault = "cannot be read again from its first record";
	s->counted = false;
	if (fault)
		snprintf(setup->error, setup->error_size, "%.600s:%u: %s", path, no, fault);
	return fault == NULL;
}

static enum pn_client_next next(void *state, const struct pn_client *c, struct pn_step *out)
{
	struct imp *s = state;
	char line[LINE_MAX_LEN];
	bool endless = pn_workload_endless(&s->b);

	if (c->id != 0 || s->ended)
		return c->id == 0 && endless ? PN_CLIENT_WAIT : PN_CLIENT_DONE;
	/* a malformed line ends the trace there (init's check_lines refused any such line) */
	bool got = fgets(line, sizeof line, s->f) != NULL;
	if (got && line[0] == 'F') { /* the range starts: its WAL is what the run counts */
		PN_ASSERT(!s->counted);
		s->counted = true;
		pn_client_count_wal_from_here(c);
		got = fgets(line, sizeof line, s->f) != NULL;
	}
	if (!got || (line[0] == 'R' && !parse_record(s, line, &s->cur)) ||
	    !strchr("RCK", line[0])) {
		s->ended = true;
		if (s->open_txn) { /* the WAL's last transaction had not committed: it does now */
			s->open_txn = false;
			*out = (struct pn_step){.op = PN_OP_COMMIT, .client = 0};
			return PN_CLIENT_OP;
		}
		return endless ? PN_CLIENT_WAIT : PN_CLIENT_DONE;
	}
	if (line[0] == 'K') {
		*out = (struct pn_step){.op = PN_OP_CHECKPOINT, .client = 0};
	} else if (line[0] == 'C') {
		s->open_txn = false;
		*out = (struct pn_step){.op = PN_OP_COMMIT, .client = 0};
	} else {
		s->open_txn = true;
		*out = (struct pn_step){.op = PN_OP_IMPORT,
					.client = 0,
					.page = s->cur.nblocks ? s->cur.b[0].page : 0};
	}
	return PN_CLIENT_OP;
}

static uint32_t extra_pages(const void *state, const struct pn_client *c, uint32_t *pages)
{
	const struct imp_rec *r = &((const struct imp *)state)->cur;
	uint32_t n = 0;
	if (c->op->op != PN_OP_IMPORT)
		return 0;
	PN_ASSERT(r->nblocks <= MAX_BLOCKS);
	for (uint32_t i = 1; i < r->nblocks; i++)
		pages[n++] = r->b[i].page;
	return n;
}

static uint8_t filler(uint64_t serial, uint32_t j)
{
	return (uint8_t)((serial * 0x9E3779B1u) >> 24 ^ j * 7u);
}

/* Whether the record's blocks carry the page layout: one of them was imaged by PostgreSQL. */
static bool has_layout(const struct imp_rec *r)
{
	for (uint32_t i = 0; i < r->nblocks; i++)
		if (r->b[i].lower || r->b[i].upper)
			return true;
	return false;
}

/* A block's data: {lower, upper} when the record carries the layout, then filler. */
static uint16_t block_data(struct imp *s, uint32_t i, bool layout)
{
	const struct imp_block *ib = &s->cur.b[i];
	uint16_t len = layout ? PN_MAX(ib->data_len, (uint16_t)4) : ib->data_len;
	uint32_t j = 0;
	PN_ASSERT(len <= IMPORT_DATA_MAX);
	if (layout) {
		pn_put16(s->data[i], ib->lower);
		pn_put16(s->data[i] + 2, ib->upper);
		j = 4;
	}
	for (; j < len; j++)
		s->data[i][j] = filler(s->serial + i, j);
	return len;
}

/* XLOG/FPI_FOR_HINT: client.c's pn_client_hint (the record when hints are logged, its image
 * as the protocol decides), else a hint-dirty page. */
static void hint(const struct pn_client *c, struct imp *s)
{
	uint8_t *page = pn_client_page(c, 0);
	if (s->cur.b[0].lower || s->cur.b[0].upper) { /* the layout PostgreSQL's image showed */
		struct pn_wal_record layout = {.info = PN_INFO_IMPORTED | PN_INFO_LAYOUT};
		struct pn_wal_block lb = {.data = s->data[0], .data_len = 4};
		pn_put16(s->data[0], s->cur.b[0].lower);
		pn_put16(s->data[0] + 2, s->cur.b[0].upper);
		if (!pn_redo_imported(page, s->b.page_size, &layout, &lb))
			PN_ASSERT(!"a hint image's layout that does not fit its page");
	}
	pn_client_hint(c, pn_client_frame(c, 0), s->cur.b[0].page, page);
}

static void change(void *state, const struct pn_client *c)
{
	struct imp *s = state;
	const struct imp_rec *ir = &s->cur;
	uint32_t frames[MAX_BLOCKS] = {pn_client_frame(c, 0)};
	bool layout = has_layout(ir);
	struct pn_wal_record rec = {.xid = c->xid,
				    .rmid = ir->rmid,
				    .info = (uint8_t)((ir->info & 0xF0u) | PN_INFO_IMPORTED |
						      (layout ? PN_INFO_LAYOUT : 0u)),
				    .nblocks = ir->nblocks,
				    .main_data = s->main,
				    .main_len = ir->main_len};

	PN_ASSERT(c->op->op == PN_OP_IMPORT);
	s->serial++;
	if (ir->nblocks == 1 && ir->b[0].kind == 'h') {
		hint(c, s);
		return;
	}
	PN_ASSERT(pn_client_pinned(c) == PN_MAX(ir->nblocks, 1u));
	for (uint32_t i = 1; i < ir->nblocks; i++)
		frames[i] = pn_client_frame(c, i);
	for (uint32_t j = 0; j < ir->main_len; j++)
		s->main[j] = filler(s->serial, j);
	for (uint32_t i = 0; i < ir->nblocks; i++) {
		struct pn_wal_block *b = &rec.blocks[i];
		uint8_t *page = pn_client_page(c, i);
		char kind = ir->b[i].kind;
		b->blkno = ir->b[i].page;
		b->will_init = kind == 'i';
		b->data = s->data[i];
		b->data_len = block_data(s, i, layout);
		if (!pn_redo_imported(page, s->b.page_size, &rec, b)) /* check_lines saw it fit */
			PN_ASSERT(!"an imported record that does not fit its page");
		pn_client_changed(c, b->data_len);
		if (kind != 'u') /* REGBUF_NO_IMAGE: neither image nor shift, as wl_vacuum.c's */
			pn_client_protect(c, b, b->blkno, page,
					  kind == 'i' ? PN_REG_WILL_INIT : PN_REG_STANDARD);
		if (kind == 'f' && !b->has_image) /* log_newpage: an image in every mode */
			pn_client_mark(c, b, b->blkno, page, true, false, false);
	}
	pn_client_insert(c, &rec, PN_REC_IMPORTED, frames);
}

const struct pn_client_ops pn_workload_import = {
	.name = "import",
	.init = init,
	.free = import_free,
	.page_init = wl_plain_page_init,
	.page_init_fixed = wl_plain_page_init,
	.next = next,
	.change = change,
	.extra_pages = extra_pages,
};

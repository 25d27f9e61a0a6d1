/*
 * import_scenario.c: `penumbra import --out S.yaml` (cli layer): a real PostgreSQL WAL as a
 * scenario of workload kind import, and its trace S.trace (the format is src/workload/wl_import.c's
 * header). Three passes over the range (cmd_import.c's header says what each collects);
 * memory is the page map and fixed tables, whatever the WAL's size.
 *
 * Decisions (docs/cli.md, import):
 *   - the replay starts at the first redo point in the range: before it, PostgreSQL's pages
 *     had been imaged since an earlier checkpoint the range does not show, so the engine,
 *     which starts from a checkpoint, would image them again;
 *   - a checkpoint record is not replayed (the engine writes its own at each K), nor an
 *     XLOG_SWITCH (the engine's WAL goes on in the same segment); a
 *     Transaction/COMMIT is the client's commit; every other record is an R line, custom
 *     resource managers as Generic (20);
 *   - a block PostgreSQL imaged carries no data: its data_len is the mean of that record
 *     type's block without an image (0 when there is none), so that nofpw, umbra and the
 *     others log what PostgreSQL would have logged without the image;
 *   - blocks past the third are folded into the main data (their header and data bytes);
 *   - a checkpoint record holds PostgreSQL's 88-byte CheckPoint whose redo point is at or
 *     before it, else it is refused as the reader refuses a corrupt record (xlogread.h R5);
 *   - every pass ends its range by pn_import_end, the rule --stats follows too (R6): a
 *     refusal or a WAL that ends before --to fails the conversion (passes 1 and 2 meet it
 *     before a file is opened).
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "xlogread.h"

#define MAX_REPLAY_BLOCKS 3
#define RM_GENERIC 20
#define INFO_COMMIT 0x00u
#define CHECKPOINT_BYTES 88u /* sizeof(CheckPoint), PostgreSQL 15 */

/* ---- the page map: (relation, fork, block) -> page, each relation one range ---- */

struct rel {
	uint32_t spc, db, rel;
	uint8_t fork;
	uint32_t pages, base;
};

struct slot {
	uint32_t spc, db, rel, blk;
	uint8_t fork, used;
	uint32_t rel_id, ordinal;
};

struct map {
	struct slot *slots;
	size_t cap, n;
	struct rel *rels;
	size_t nrels, rels_cap;
};

static uint64_t hash_key(const struct pn_xlr_block *b)
{
	uint64_t h = b->rel * 0x9E3779B97F4A7C15ull ^ b->blkno * 0xC2B2AE3D27D4EB4Full;
	h ^= (b->db * 31u + b->spc) * 0x165667B19E3779F9ull ^ b->fork;
	return h ^ (h >> 29);
}

static bool same(const struct slot *s, const struct pn_xlr_block *b)
{
	return s->rel == b->rel && s->blk == b->blkno && s->fork == b->fork && s->db == b->db &&
	       s->spc == b->spc;
}

static struct slot *find(struct map *m, const struct pn_xlr_block *b)
{
	size_t i = hash_key(b) & (m->cap - 1);
	while (m->slots[i].used && !same(&m->slots[i], b))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static bool grow_map(struct map *m)
{
	struct map bigger = *m;
	bigger.cap = m->cap ? 2 * m->cap : 4096;
	if (!(bigger.slots = calloc(bigger.cap, sizeof *bigger.slots)))
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].used)
			continue;
		struct pn_xlr_block k = {.spc = m->slots[i].spc,
					 .db = m->slots[i].db,
					 .rel = m->slots[i].rel,
					 .fork = m->slots[i].fork,
					 .blkno = m->slots[i].blk};
		*find(&bigger, &k) = m->slots[i];
	}
	free(m->slots);
	*m = bigger;
	return true;
}

static int rel_of(struct map *m, const struct pn_xlr_block *b)
{
	for (size_t i = m->nrels; i-- > 0;) {
		const struct rel *r = &m->rels[i];
		if (r->rel == b->rel && r->fork == b->fork && r->db == b->db && r->spc == b->spc)
			return (int)i;
	}
	if (m->nrels == m->rels_cap) {
		size_t cap = m->rels_cap ? 2 * m->rels_cap : 64;
		struct rel *v = realloc(m->rels, cap * sizeof *v);
		if (!v)
			return -1;
		m->rels = v;
		m->rels_cap = cap;
	}
	m->rels[m->nrels] = (struct rel){b->spc, b->db, b->rel, b->fork, 0, 0};
	return (int)m->nrels++;
}

static bool map_add(struct map *m, const struct pn_xlr_block *b)
{
	struct slot *s;
	int r;

	if ((m->n + 1) * 2 > m->cap && !grow_map(m))
		return false;
	s = find(m, b);
	if (s->used)
		return true;
	if ((r = rel_of(m, b)) < 0)
		return false;
	*s = (struct slot){b->spc,  b->db, b->rel,      b->blkno,
			   b->fork, 1,     (uint32_t)r, m->rels[r].pages++};
	m->n++;
	return true;
}

static uint32_t map_page(struct map *m, const struct pn_xlr_block *b)
{
	const struct slot *s = find(m, b);
	PN_ASSERT(s->used);
	return m->rels[s->rel_id].base + s->ordinal;
}

/* ---- pass 1: redo points, mean block data, hints ---- */

struct pass1 {
	pn_lsn *redo;
	size_t nredo, redo_cap;
	uint64_t sum[256][16][MAX_REPLAY_BLOCKS], cnt[256][16][MAX_REPLAY_BLOCKS];
	bool hints;
};

static bool is_checkpoint(const struct pn_xlr_record *rec)
{
	uint8_t t = rec->info & 0xF0u;
	return rec->rmid == PN_XLR_RM_XLOG &&
	       (t == PN_XLR_XLOG_CHECKPOINT_SHUTDOWN || t == PN_XLR_XLOG_CHECKPOINT_ONLINE);
}

/* A checkpoint record's CheckPoint: PostgreSQL's 88 bytes, its redo point at or before the
 * record itself (a shutdown checkpoint's is the record); false: refused (r->why). */
static bool checkpoint_fits(struct pn_xlr *r, const struct pn_xlr_record *rec)
{
	pn_lsn redo;

	if (rec->main_len != CHECKPOINT_BYTES) {
		pn_xlr_refuse(r, rec->start,
			      "a checkpoint record with %u bytes of main data, expected a "
			      "CheckPoint of %u",
			      rec->main_len, CHECKPOINT_BYTES);
		return false;
	}
	redo = pn_get64(rec->main_data);
	if (redo > rec->start) {
		pn_xlr_refuse(r, rec->start,
			      "checkpoint redo point %X/%X, expected one at or before the "
			      "checkpoint record",
			      (unsigned)(redo >> 32), (unsigned)redo);
		return false;
	}
	return true;
}

/* False: refused (r->why), or out of memory (r->why empty). */
static bool collect(struct pn_xlr *r, struct pass1 *p, const struct pn_xlr_record *rec)
{
	if (is_checkpoint(rec)) {
		if (!checkpoint_fits(r, rec))
			return false;
		if (p->nredo == p->redo_cap) {
			size_t cap = p->redo_cap ? 2 * p->redo_cap : 64;
			pn_lsn *v = realloc(p->redo, cap * sizeof *v);
			if (!v)
				return false;
			p->redo = v;
			p->redo_cap = cap;
		}
		p->redo[p->nredo++] = pn_get64(rec->main_data);
	}
	if (rec->rmid == PN_XLR_RM_XLOG && (rec->info & 0xF0u) == 0xA0u)
		p->hints = true;
	for (int i = 0; i <= rec->max_block_id && i < MAX_REPLAY_BLOCKS; i++) {
		const struct pn_xlr_block *b = &rec->blocks[i];
		if (b->in_use && !b->has_image) {
			p->sum[rec->rmid][rec->info >> 4][i] += b->data_len;
			p->cnt[rec->rmid][rec->info >> 4][i]++;
		}
	}
	return true;
}

/* The engine's WAL has no switch (a replayed one would make pg_waldump skip a segment's
 * rest that the engine goes on writing). */
static bool is_switch(const struct pn_xlr_record *rec)
{
	return rec->rmid == PN_XLR_RM_XLOG && (rec->info & 0xF0u) == PN_XLR_XLOG_SWITCH;
}

/* ---- pass 3: the trace ---- */

static int out_of_memory(void)
{
	fprintf(stderr, "penumbra import: out of memory (the page map, a record)\n");
	return 2;
}

struct figures {
	uint64_t records, bytes, fpi_count, fpi_bytes, fpi_raw_bytes, commits, checkpoints;
	uint64_t replayed, folded_blocks;
};

static char block_kind(const struct pn_xlr_record *rec, const struct pn_xlr_block *b)
{
	uint8_t t = rec->info & 0xF0u;
	if (rec->rmid == PN_XLR_RM_XLOG && t == 0xA0u)
		return 'h';
	if (rec->rmid == PN_XLR_RM_XLOG && t == 0xB0u)
		return 'f';
	return b->will_init ? 'i' : 'n';
}

static void write_record(FILE *f, const struct pn_xlr_record *rec, const struct pass1 *p1,
			 struct map *m, struct figures *fig)
{
	uint8_t rmid = rec->rmid < PN_XLR_RM_BUILTIN ? rec->rmid : RM_GENERIC;
	uint32_t main_len = rec->main_len, n = 0;
	char blocks[MAX_REPLAY_BLOCKS][64];

	for (int i = 0; i <= rec->max_block_id; i++) {
		const struct pn_xlr_block *b = &rec->blocks[i];
		uint32_t len = b->data_len, lower = 0, upper = 0;
		if (!b->in_use)
			continue;
		if (n == MAX_REPLAY_BLOCKS) { /* its block header, number and data */
			main_len += 8u + b->data_len;
			fig->folded_blocks++;
			continue;
		}
		if (b->has_image && len == 0 && i < MAX_REPLAY_BLOCKS &&
		    p1->cnt[rec->rmid][rec->info >> 4][i])
			len = (uint32_t)((p1->sum[rec->rmid][rec->info >> 4][i] +
					  p1->cnt[rec->rmid][rec->info >> 4][i] / 2) /
					 p1->cnt[rec->rmid][rec->info >> 4][i]);
		if (b->has_image) { /* no hole: a full page, or one not in the standard layout */
			lower = b->hole_length ? b->hole_offset : 24;
			upper = b->hole_length ? (uint32_t)b->hole_offset + b->hole_length : 24;
		}
		snprintf(blocks[n++], sizeof blocks[0], " %u %c %u %u %u", map_page(m, b),
			 block_kind(rec, b), len, lower, upper);
	}
	fprintf(f, "R %u %u %u %u", rmid, rec->info & 0xF0u, main_len, n);
	for (uint32_t i = 0; i < n; i++)
		fputs(blocks[i], f);
	fputc('\n', f);
	fig->replayed++;
}

static void count(struct figures *fig, const struct pn_xlr_record *rec)
{
	fig->records++;
	fig->bytes += rec->tot_len;
	fig->fpi_bytes += rec->fpi_len;
	for (int i = 0; i <= rec->max_block_id; i++) {
		const struct pn_xlr_block *b = &rec->blocks[i];
		if (b->in_use && b->has_image) {
			fig->fpi_count++;
			fig->fpi_raw_bytes += PN_XLR_BLCKSZ - b->hole_length;
		}
	}
}

/* Writes the trace from `start`; the header's page count is known: the map is built. Pass
 * 3 reads what pass 2 read: its end is judged the same (pn_import_end). */
static int write_trace(struct pn_xlr *r, pn_lsn start, pn_lsn to, const struct pass1 *p1,
		       struct map *m, FILE *f, struct figures *fig)
{
	struct pn_xlr_record *rec = malloc(sizeof *rec);
	size_t k = 0;
	pn_lsn first = rec ? pn_xlr_begin(r, start, to) : 0;
	uint32_t pages = 0;

	if (!rec)
		return out_of_memory();
	for (size_t i = 0; i < m->nrels; i++)
		pages += m->rels[i].pages;
	fprintf(f, "penumbra-import-trace 1\npages %u\n", pages);
	while (first && pn_xlr_read(r, rec)) {
		while (k < p1->nredo && p1->redo[k] <= rec->start) {
			if (p1->redo[k] >= start) {
				fputs("K\n", f);
				fig->checkpoints++;
			}
			k++;
		}
		count(fig, rec);
		if (is_checkpoint(rec) || is_switch(rec))
			continue;
		if (rec->rmid == PN_XLR_RM_XACT && (rec->info & 0x70u) == INFO_COMMIT) {
			fputs("C\n", f);
			fig->commits++;
			continue;
		}
		write_record(f, rec, p1, m, fig);
	}
	free(rec);
	return pn_import_end(r, start, to, first, false);
}

/* ---- the end of a range: one rule for --stats and --out (cli.h) ---- */

int pn_import_end(const struct pn_xlr *r, pn_lsn from, pn_lsn to, pn_lsn first, bool note)
{
	if (!first && (r->why[0] || !to)) {
		fprintf(stderr, "penumbra import: could not find a valid record after %X/%X%s%s\n",
			(unsigned)(from >> 32), (unsigned)from, r->why[0] ? ": " : "", r->why);
		return 2;
	}
	if (!first) {
		fprintf(stderr, "penumbra import: no record between %X/%X and --to %X/%X\n",
			(unsigned)(from >> 32), (unsigned)from, (unsigned)(to >> 32), (unsigned)to);
		return 2;
	}
	if (r->refused) {
		fprintf(stderr, "penumbra import: %s\n", r->why);
		return 2;
	}
	if (r->why[0] && (note || to))
		fprintf(stderr, "penumbra import: end of WAL at %X/%X: %s\n",
			(unsigned)(r->next >> 32), (unsigned)r->next, r->why);
	if (pn_xlr_whole(r))
		return 0;
	fprintf(stderr, "penumbra import: the WAL ends before --to %X/%X\n", (unsigned)(to >> 32),
		(unsigned)to);
	return 2;
}

/* ---- the scenario ---- */

static void base_name(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	size_t n;
	snprintf(out, len, "%s", b ? b + 1 : path);
	n = strlen(out);
	if (n > 5 && strcmp(out + n - 5, ".yaml") == 0)
		out[n - 5] = '\0';
}

static void write_yaml(FILE *f, const char *name, const struct pn_xlr *r, pn_lsn from, pn_lsn to,
		       pn_lsn start, const struct map *m, const struct pass1 *p1,
		       const struct figures *fig)
{
	uint32_t pages = 0;
	for (size_t i = 0; i < m->nrels; i++)
		pages += m->rels[i].pages;
	fprintf(f,
		"# Written by penumbra import: PostgreSQL's WAL %X/%X .. %X/%X, replayed from its\n"
		"# first redo point %X/%X (%" PRIu64 " records, %" PRIu64 " commits, %" PRIu64
		" checkpoints).\n# PostgreSQL's own figures for that range: %" PRIu64
		" WAL bytes, %" PRIu64 " full-page images of %" PRIu64 " bytes\n# (%" PRIu64
		" bytes uncompressed).\n"
		"# Relations (tablespace/database/relfilenode fork: pages):\n",
		(unsigned)(from >> 32), (unsigned)from, (unsigned)(to >> 32), (unsigned)to,
		(unsigned)(start >> 32), (unsigned)start, fig->records, fig->commits,
		fig->checkpoints, fig->bytes, fig->fpi_count, fig->fpi_bytes, fig->fpi_raw_bytes);
	for (size_t i = 0; i < m->nrels; i++)
		fprintf(f, "#   %u/%u/%u %u: %u .. %u\n", m->rels[i].spc, m->rels[i].db,
			m->rels[i].rel, m->rels[i].fork, m->rels[i].base,
			m->rels[i].base + m->rels[i].pages - 1);
	fprintf(f,
		"name: %s\nseed: 1\nstorage:\n  pages: %u\n  page_size: 8192\n  buffers: %u\n"
		"  wal_segment_size: %u\nprotocol:\n  mode: fpw\n  checksums: %s\n"
		"checkpoint:\n  interval: 0s\n  every_transactions: 0\n  max_wal_size: 0\n"
		"workload:\n  kind: import\n  clients: 1\n  transactions: %" PRIu64 "\n"
		"  trace: %s.trace\n",
		name, PN_MAX(pages, 4u), PN_MAX(PN_MIN(pages, 16384u), 4u), r->seg_size,
		p1->hints ? "true" : "false", PN_MAX(fig->commits, (uint64_t)1), name);
}

/* The replay's start: the first redo point at or after the range's first record. */
static int replay_start(const struct pass1 *p1, pn_lsn from, pn_lsn first, pn_lsn *start)
{
	*start = 0;
	for (size_t i = 0; i < p1->nredo && !*start; i++)
		if (p1->redo[i] >= first)
			*start = p1->redo[i];
	if (*start)
		return 0;
	fprintf(stderr,
		"penumbra import: no checkpoint redo point at or after %X/%X (the range's first "
		"record, at or after --from %X/%X): the replay starts at one; give a range that "
		"holds a checkpoint record and its redo point\n",
		(unsigned)(first >> 32), (unsigned)first, (unsigned)(from >> 32), (unsigned)from);
	return 2;
}

/* Passes 1 and 2; 0, or the exit status with the reason on stderr. */
static int passes_1_2(struct pn_xlr *r, pn_lsn from, pn_lsn to, struct pass1 *p1, struct map *m,
		      pn_lsn *start)
{
	struct pn_xlr_record *rec = malloc(sizeof *rec);
	pn_lsn first = rec ? pn_xlr_begin(r, from, to) : 0;
	bool ok = true;
	uint32_t base = 0;
	int rc;

	if (!rec)
		return out_of_memory();
	while (ok && first && pn_xlr_read(r, rec))
		ok = collect(r, p1, rec);
	rc = ok || r->refused ? pn_import_end(r, from, to, first, true) : out_of_memory();
	if (rc == 0)
		rc = replay_start(p1, from, first, start);
	first = rc == 0 ? pn_xlr_begin(r, *start, to) : 0;
	while (rc == 0 && ok && pn_xlr_read(r, rec))
		for (int i = 0; ok && i <= rec->max_block_id; i++)
			if (rec->blocks[i].in_use)
				ok = map_add(m, &rec->blocks[i]);
	if (rc == 0)
		rc = ok ? pn_import_end(r, *start, to, first, false) : out_of_memory();
	for (size_t i = 0; i < m->nrels; i++) {
		m->rels[i].base = base;
		base += m->rels[i].pages;
	}
	free(rec);
	return rc;
}

int pn_import_scenario(struct pn_xlr *r, pn_lsn from, pn_lsn to, const char *out)
{
	struct pass1 *p1 = calloc(1, sizeof *p1);
	struct map m = {0};
	struct figures fig = {0};
	char name[256], trace[PN_ERROR_LEN];
	pn_lsn start = 0;
	FILE *yaml = NULL, *tf = NULL;
	int rc = 0;

	PN_ASSERT(p1 != NULL);
	base_name(out, name, sizeof name);
	snprintf(trace, sizeof trace, "%.*s%s.trace",
		 strrchr(out, '/') ? (int)(strrchr(out, '/') - out + 1) : 0, out, name);
	rc = grow_map(&m) ? passes_1_2(r, from, to, p1, &m, &start) : out_of_memory();
	if (rc != 0)
		goto out;
	if (!(yaml = pn_cli_open_output("import", out)) ||
	    !(tf = pn_cli_open_output("import", trace))) {
		rc = 2;
		goto out;
	}
	if ((rc = write_trace(r, start, to, p1, &m, tf, &fig)) != 0)
		goto out;
	write_yaml(yaml, name, r, from, to, start, &m, p1, &fig);
	rc = pn_cli_close_output("import", tf, trace, true); /* files.h F3: both or neither */
	tf = NULL;
	if (rc == 0 && (rc = pn_cli_close_output("import", yaml, out, true)) != 0)
		unlink(trace);
	yaml = NULL;
	if (rc == 0)
		printf("replayed range %X/%X .. %X/%X: %" PRIu64 " records (%" PRIu64
		       " commits, %" PRIu64 " checkpoints), %zu pages of %zu relations\n"
		       "PostgreSQL: wal_bytes %" PRIu64 " fpi_count %" PRIu64 " fpi_bytes %" PRIu64
		       " fpi_bytes_uncompressed %" PRIu64 "\nwrote %s and %s\n",
		       (unsigned)(start >> 32), (unsigned)start, (unsigned)(r->next >> 32),
		       (unsigned)r->next, fig.records, fig.commits, fig.checkpoints, m.n, m.nrels,
		       fig.bytes, fig.fpi_count, fig.fpi_bytes, fig.fpi_raw_bytes, out, trace);
out:
	pn_file_abort_out(tf);
	pn_file_abort_out(yaml);
	free(m.slots);
	free(m.rels);
	free(p1->redo);
	free(p1);
	return rc;
}

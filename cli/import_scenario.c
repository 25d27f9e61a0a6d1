/*
 * import_scenario.c: `penumbra import --out S.yaml` (cli layer): a real PostgreSQL WAL as a
 * scenario of workload kind import, and its trace S.trace (the format is src/workload/wl_import.c's
 * header). Three passes over the range (cmd_import.c's header says what each collects);
 * memory is the page map and fixed tables, whatever the WAL's size.
 *
 * Decisions (docs/cli.md, import):
 *   - the replay starts at a redo point (the engine starts from a checkpoint): the last one
 *     at or before the range's first record, read from the segments before --from, else
 *     the range's first; a checkpoint whose record lies past --to (a spread one's) still
 *     gives its redo point: pass 1 reads on until a checkpoint record's redo point is past
 *     --to;
 *   - a block is of the kind PostgreSQL registered it (block_kind: u for REGBUF_NO_IMAGE,
 *     decided from rmid, info, block id and whether hints are logged, as PostgreSQL 15's
 *     code decides, and 16's and 17's alike: their source registers the same blocks so);
 *     hint logging comes from the WAL (settings()), else from pg_control
 *     (control_settings());
 *   - a page's layout (pd_lower, pd_upper) is written where PostgreSQL's image showed it
 *     and, at a change fpw would image that PostgreSQL did not (full_page_writes off),
 *     as the records since the page's last image or initialization show it
 *     (layout_effect: the tuples they add); a page seen before none of them by its highest
 *     line pointer named and its tuples' size (record_item), else taken as full; import
 *     prints how many were estimated and how;
 *   - a checkpoint record is not replayed (the engine writes its own at each K), nor an
 *     XLOG_SWITCH (the engine's WAL goes on in the same segment); a
 *     Transaction/COMMIT is the client's commit; every other record is an R line, custom
 *     resource managers as Generic (20);
 *   - a block PostgreSQL imaged carries no data: its data_len is the mean of that record
 *     type's block without an image (0 when there is none), so that nofpw, umbra and the
 *     others log what PostgreSQL would have logged without the image;
 *   - blocks past the third are folded into the main data (their header and data bytes);
 *   - a checkpoint record holds PostgreSQL's 88-byte CheckPoint whose redo point is at or
 *     before it, else it is refused as the reader refuses a corrupt record (xlogread.h XR5);
 *   - every pass ends its range by pn_import_end, the rule --stats follows too (XR6): a
 *     refusal or a WAL that ends before --to fails the conversion (passes 1 and 2 meet it
 *     before a file is opened).
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "files.h"
#include "xlogread.h"

#define MAX_REPLAY_BLOCKS 3
#define RM_GENERIC 20
#define RM_HASH 12
#define INFO_COMMIT 0x00u
#define CHECKPOINT_BYTES 88u /* sizeof(CheckPoint): 15, 16 and 17 (17's wal_level fills a pad) */
#define XLOG_PARAMETER_CHANGE 0x60u
#define XLOG_FPI_FOR_HINT 0xA0u
#define XLOG_FPI 0xB0u
#define HEAP2_VISIBLE 0x40u
#define HASH_MOVE_PAGE_CONTENTS 0x70u
#define HASH_SQUEEZE_PAGE 0x80u
#define HASH_DELETE 0x90u
#define PARAM_WAL_LOG_HINTS 24 /* xl_parameter_change: six ints, then wal_log_hints */
/* PostgreSQL 15's and 16's ControlFileData (pg_control, version 1300), x86-64 layout; 17's
 * (1700) is not read */
#define CONTROL_VERSION 1300u
#define CONTROL_OFF_VERSION 8
#define CONTROL_OFF_WAL_LOG_HINTS 176
#define CONTROL_OFF_CHECKSUM_VERSION 252
#define CONTROL_OFF_CRC 288

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
	/* pass 3: the page's pd_lower / pd_upper as last known (0 0: never), and the count of
	 * checkpoints before its last change (its first change after one is imaged in fpw) */
	uint16_t lower, upper;
	uint64_t cycle;
	/* a page no image nor initialization showed: the highest line pointer its records name
	 * and the size of a tuple of it they carry (0: none yet) */
	uint16_t maxoff, tuple;
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
	/* XLogHintBitIsNeeded() (checksums or wal_log_hints), from the WAL: an
	 * XLOG/PARAMETER_CHANGE's wal_log_hints, an XLOG/FPI_FOR_HINT (only logged then), a
	 * Heap2/VISIBLE whose heap page carries an image (REGBUF_NO_IMAGE otherwise) */
	bool hints, hints_seen;
	const char *hints_why;
	char control_why[256];
	pn_lsn past_to; /* the range's last redo point's record, read past --to (0: none) */
};

static bool is_checkpoint(const struct pn_xlr_record *rec)
{
	uint8_t t = rec->info & 0xF0u;
	return rec->rmid == PN_XLR_RM_XLOG &&
	       (t == PN_XLR_XLOG_CHECKPOINT_SHUTDOWN || t == PN_XLR_XLOG_CHECKPOINT_ONLINE);
}

/* The cluster's hint logging, as the WAL shows it (the last PARAMETER_CHANGE wins; any
 * image PostgreSQL takes only when hints are logged proves they are). */
static void settings(struct pass1 *p, const struct pn_xlr_record *rec)
{
	uint8_t t = rec->info & 0xF0u;
	if (rec->rmid == PN_XLR_RM_XLOG && t == XLOG_PARAMETER_CHANGE &&
	    rec->main_len >= PARAM_WAL_LOG_HINTS + 1) {
		p->hints = rec->main_data[PARAM_WAL_LOG_HINTS] != 0;
		p->hints_seen = true;
		p->hints_why = p->hints ? "XLOG/PARAMETER_CHANGE: wal_log_hints on"
					: "XLOG/PARAMETER_CHANGE: wal_log_hints off";
	}
	if (!p->hints &&
	    ((rec->rmid == PN_XLR_RM_XLOG && t == XLOG_FPI_FOR_HINT) ||
	     (rec->rmid == PN_XLR_RM_HEAP2 && t == HEAP2_VISIBLE && rec->max_block_id >= 1 &&
	      rec->blocks[1].in_use && rec->blocks[1].has_image))) {
		p->hints = p->hints_seen = true;
		p->hints_why = t == XLOG_FPI_FOR_HINT ? "XLOG/FPI_FOR_HINT records"
						      : "Heap2/VISIBLE imaging its heap page";
	}
}

/* Without a record that shows it: the data directory's pg_control (global/pg_control beside
 * the first segment's pg_wal), when there is one of PostgreSQL 15 or 16 (17's is not read)
 * with a valid CRC. */
static void control_settings(struct pass1 *p, const struct pn_xlr *r, char *why, size_t len)
{
	uint8_t c[CONTROL_OFF_CRC + 4];
	char path[PN_ERROR_LEN];
	const char *seg = r->nsegs ? r->segs[0].path : "";
	const char *slash = strrchr(seg, '/');
	char open_why[PN_ERROR_LEN];
	FILE *f;

	snprintf(path, sizeof path, "%.*s../global/pg_control", slash ? (int)(slash - seg + 1) : 0,
		 seg);
	if (p->hints_seen || access(path, F_OK) != 0 ||
	    !(f = pn_file_fopen_in(path, "a pg_control file", open_why, sizeof open_why)))
		return; /* files.h F1: a FIFO there is not read */
	bool ok = fread(c, 1, sizeof c, f) == sizeof c;
	fclose(f);
	if (!ok || r->pg_version > 16 || pn_get32(c + CONTROL_OFF_VERSION) != CONTROL_VERSION ||
	    pn_crc32c_final(pn_crc32c_update(pn_crc32c_init(), c, CONTROL_OFF_CRC)) !=
		    pn_get32(c + CONTROL_OFF_CRC))
		return;
	bool checksums = pn_get32(c + CONTROL_OFF_CHECKSUM_VERSION) != 0;
	bool hints = c[CONTROL_OFF_WAL_LOG_HINTS] != 0;
	p->hints = checksums || hints;
	p->hints_seen = true;
	snprintf(why, len, "%.200s: data checksums %s, wal_log_hints %s", path,
		 checksums ? "on" : "off", hints ? "on" : "off");
	p->hints_why = why;
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

/* A record of a type the WAL's version does not have: its format is not known, so the
 * conversion refuses it (r->why); the reads of a record's content here (CheckPoint,
 * xl_parameter_change, xl_heap_*, xl_btree_insert, xl_heap_multi_insert) are laid out alike
 * in 15, 16 and 17. */
static bool known_type(struct pn_xlr *r, const struct pn_xlr_record *rec)
{
	char rm[16];
	if (rec->rmid >= PN_XLR_RM_BUILTIN || pn_xlr_identify(r->pg_version, rec->rmid, rec->info))
		return true;
	pn_xlr_refuse(r, rec->start,
		      "%s record type %02X, which PostgreSQL %u does not have: its format is not "
		      "known",
		      pn_xlr_rm_name(rec->rmid, rm, sizeof rm), (unsigned)(rec->info & 0xF0u),
		      r->pg_version);
	return false;
}

/* False: refused (r->why), or out of memory (r->why empty). */
static bool collect(struct pn_xlr *r, struct pass1 *p, const struct pn_xlr_record *rec)
{
	if (!known_type(r, rec))
		return false;
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
	settings(p, rec);
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

/* PostgreSQL's figures on a span of records. */
struct tally {
	uint64_t records, bytes, fpi_count, fpi_bytes, fpi_raw_bytes, commits, checkpoints;
	pn_lsn first; /* the span's first record (0: none yet) */
};

struct figures {
	struct tally replayed; /* from the replay's redo point to --to */
	struct tally counted;  /* --from .. --to: what the run counts (the trace's F line) */
	uint64_t written, folded_blocks;                   /* R lines, blocks folded */
	uint64_t estimated, estimated_items, assumed_full; /* holes the WAL shows none of */
	pn_lsn from;                                       /* the requested range's start */
};

/* The special space PostgreSQL's access method keeps at a page's end (its opaque data). */
static uint16_t special_size(uint8_t rmid)
{
	switch (rmid) {
	case 11:            /* Btree */
	case 12:            /* Hash */
	case 14: return 16; /* Gist */
	case 13:            /* Gin */
	case 16: return 8;  /* SPGist */
	default: return 0;
	}
}

/* What a record's block does to the page's layout, as far as its data tells (for pages no
 * image shows: the tuples it adds; space it frees is not followed): Heap INSERT, UPDATE and
 * HOT_UPDATE add one tuple (xl_heap_header + data: MAXALIGN(data_len - 5 + 23) bytes and a
 * line pointer), Heap2/MULTI_INSERT main data's ntuples tuples, a Btree insert its index
 * tuple (the block data). */
/* The line pointer a Heap or Btree record's block names in its main data, and the size of
 * the tuple it carries on the page (0: none): PostgreSQL 15's xl_heap_insert, _delete,
 * _update (block 0 the new tuple's page, 1 the old one's), _lock, _inplace and
 * xl_btree_insert. */
static void record_item(const struct pn_xlr_record *rec, int id, uint32_t *off, uint32_t *size)
{
	const struct pn_xlr_block *b = &rec->blocks[id];
	const uint8_t *m = rec->main_data;
	uint8_t t = rec->info & 0x70u;
	*off = *size = 0;
	if (b->fork != 0)
		return;
	if (rec->rmid == PN_XLR_RM_HEAP) {
		if (t == 0x00 && rec->main_len >= 2) /* INSERT */
			*off = pn_get16(m);
		else if ((t == 0x10 || t == 0x60) && rec->main_len >= 6) /* DELETE, LOCK */
			*off = pn_get16(m + 4);
		else if ((t == 0x20 || t == 0x40) && rec->main_len >= 14) /* UPDATE, HOT_UPDATE */
			*off = pn_get16(m + (id == 0 ? 12 : 4));
		else if (t == 0x70 && rec->main_len >= 2) /* INPLACE */
			*off = pn_get16(m);
		if ((t == 0x00 || ((t == 0x20 || t == 0x40) && id == 0)) && b->data_len >= 5)
			*size = PN_ALIGN8(b->data_len - 5u + 23u);
		else if (t == 0x70 && b->data_len)
			*size = PN_ALIGN8(b->data_len + 23u);
	} else if (rec->rmid == 11 && t <= 0x10 && id == 0 && rec->main_len >= 2) {
		*off = pn_get16(m);
		*size = PN_ALIGN8(b->data_len);
	}
}

static void layout_effect(const struct pn_xlr_record *rec, int id, struct slot *s)
{
	uint32_t off, size;
	record_item(rec, id, &off, &size);
	s->maxoff = (uint16_t)PN_MAX((uint32_t)s->maxoff, PN_MIN(off, 2048u));
	if (size)
		s->tuple = (uint16_t)PN_MIN(size, (uint32_t)PN_XLR_BLCKSZ);
	const struct pn_xlr_block *b = &rec->blocks[id];
	uint8_t t = rec->info & 0x70u;
	uint32_t n = 0, bytes = 0;
	if (!s->lower || b->has_image)
		return;
	if (rec->rmid == PN_XLR_RM_HEAP && id == 0 && (t == 0x00 || t == 0x20 || t == 0x40) &&
	    b->data_len >= 5) {
		n = 1;
		bytes = PN_ALIGN8(b->data_len - 5u + 23u);
	} else if (rec->rmid == PN_XLR_RM_HEAP2 && t == 0x50 && rec->main_len >= 4 &&
		   (n = pn_get16(rec->main_data + 2)) > 0 && b->data_len >= 8 * n) {
		bytes = n * PN_ALIGN8((b->data_len - 8u * n) / n + 23u);
	} else if (rec->rmid == 11 && id == 0 && t <= 0x10 && b->data_len > 0) {
		n = 1;
		bytes = PN_ALIGN8(b->data_len);
	}
	s->lower = (uint16_t)PN_MIN(s->lower + 4u * n, (uint32_t)s->upper);
	s->upper = (uint16_t)PN_MAX((uint32_t)s->lower, s->upper > bytes ? s->upper - bytes : 0u);
}

/* The block's kind, as PostgreSQL registered it: u for REGBUF_NO_IMAGE (log_heap_visible's
 * heap page when hints are not logged; the hash bucket page a DELETE, SQUEEZE_PAGE or
 * MOVE_PAGE_CONTENTS only locks, block 0 of those). */
static char block_kind(const struct pn_xlr_record *rec, int id, bool hints)
{
	uint8_t t = rec->info & 0xF0u;
	if (rec->rmid == PN_XLR_RM_XLOG && t == XLOG_FPI_FOR_HINT)
		return 'h';
	if (rec->rmid == PN_XLR_RM_XLOG && t == XLOG_FPI)
		return 'f';
	if ((rec->rmid == PN_XLR_RM_HEAP2 && t == HEAP2_VISIBLE && id == 1 && !hints) ||
	    (rec->rmid == RM_HASH && id == 0 &&
	     (t == HASH_MOVE_PAGE_CONTENTS || t == HASH_SQUEEZE_PAGE || t == HASH_DELETE)))
		return 'u';
	return rec->blocks[id].will_init ? 'i' : 'n';
}

/* The layout of block i as PostgreSQL's records show it, in track (every page the WAL
 * touched from its first record on): an image's hole, an initialization's empty page, then
 * the tuples records add. NULL when track cannot grow. */
static struct slot *track_block(struct map *track, const struct pn_xlr_record *rec, int i)
{
	const struct pn_xlr_block *b = &rec->blocks[i];
	struct slot *s;
	if (!map_add(track, b))
		return NULL;
	s = find(track, b);
	if (b->has_image) { /* no hole: a full page, or one not in the standard layout */
		s->lower = b->hole_length ? b->hole_offset : 24;
		s->upper = b->hole_length ? (uint16_t)(b->hole_offset + b->hole_length) : 24;
	} else if (b->will_init) {
		s->lower = 24;
		s->upper = (uint16_t)(PN_XLR_BLCKSZ - special_size(rec->rmid));
	}
	layout_effect(rec, i, s);
	return s;
}

static bool write_record(FILE *f, const struct pn_xlr_record *rec, const struct pass1 *p1,
			 struct map *m, struct map *track, struct figures *fig)
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
		char kind = block_kind(rec, i, p1->hints);
		struct slot *s = track_block(track, rec, i);
		if (!s)
			return false;
		if (b->has_image) {
			lower = s->lower;
			upper = s->upper;
		} else if (!b->has_image && kind == 'n' && s->cycle != fig->replayed.checkpoints) {
			/* fpw would image it here, PostgreSQL did not (full_page_writes off):
			 * the hole as the records since its last image or init show it; for
			 * a page written before the WAL, its line pointers (the highest one
			 * its records name) each holding a tuple of the size they carry; else
			 * none (taken as full) */
			uint32_t end = PN_XLR_BLCKSZ - special_size(rec->rmid);
			uint32_t lp = 24u + 4u * s->maxoff, used = (uint32_t)s->maxoff * s->tuple;
			if (s->lower) {
				fig->estimated++;
			} else if (s->tuple && lp < end) {
				fig->estimated_items++;
				s->lower = (uint16_t)lp;
				s->upper = (uint16_t)(used < end - lp ? end - used : lp);
			} else {
				fig->assumed_full++;
				s->lower = s->upper = (uint16_t)end;
			}
			lower = s->lower;
			upper = s->upper;
		}
		s->cycle = fig->replayed.checkpoints;
		snprintf(blocks[n++], sizeof blocks[0], " %u %c %u %u %u", map_page(m, b), kind,
			 len, lower, upper);
	}
	fprintf(f, "R %u %u %u %u", rmid, rec->info & 0xF0u, main_len, n);
	for (uint32_t i = 0; i < n; i++)
		fputs(blocks[i], f);
	fputc('\n', f);
	fig->written++;
	return true;
}

static void count(struct tally *t, const struct pn_xlr_record *rec)
{
	if (!t->records)
		t->first = rec->start;
	t->records++;
	t->bytes += rec->tot_len;
	t->fpi_bytes += rec->fpi_len;
	for (int i = 0; i <= rec->max_block_id; i++) {
		const struct pn_xlr_block *b = &rec->blocks[i];
		if (b->in_use && b->has_image) {
			t->fpi_count++;
			t->fpi_raw_bytes += PN_XLR_BLCKSZ - b->hole_length;
		}
	}
	t->commits += rec->rmid == PN_XLR_RM_XACT && (rec->info & 0x70u) == INFO_COMMIT;
}

/* Writes the trace from `start`; the header's page count is known: the map is built. Pass
 * 3 reads what pass 2 read: its end is judged the same (pn_import_end). */
static int write_trace(struct pn_xlr *r, pn_lsn start, pn_lsn to, const struct pass1 *p1,
		       struct map *m, FILE *f, struct figures *fig)
{
	struct pn_xlr_record *rec = malloc(sizeof *rec);
	size_t k = 0;
	bool ok = rec != NULL;
	uint32_t pages = 0;
	struct map track = {0};

	for (size_t i = 0; i < m->nrels; i++)
		pages += m->rels[i].pages;
	/* the layouts of the pages at the replay's start, from the WAL's first record */
	ok = ok && grow_map(&track);
	bool before = ok && pn_xlr_begin(r, 0, start) != 0; /* none: the WAL starts at `start` */
	while (before && ok && pn_xlr_read(r, rec))
		for (int i = 0; ok && i <= rec->max_block_id; i++)
			ok = !rec->blocks[i].in_use || track_block(&track, rec, i);
	pn_lsn first = ok ? pn_xlr_begin(r, start, to) : 0;
	fprintf(f, "penumbra-import-trace 1\npages %u\n", pages);
	while (ok && first && pn_xlr_read(r, rec)) {
		bool counted = rec->start >= fig->from;
		for (; k < p1->nredo && p1->redo[k] <= rec->start; k++) {
			if (p1->redo[k] < start)
				continue;
			fputs("K\n", f);
			fig->replayed.checkpoints++;
			fig->counted.checkpoints += counted;
		}
		/* the range's first record, after records replayed before it: F */
		if (counted && !fig->counted.records && fig->replayed.records)
			fputs("F\n", f);
		count(&fig->replayed, rec);
		if (counted)
			count(&fig->counted, rec);
		if (is_checkpoint(rec) || is_switch(rec))
			continue;
		if (rec->rmid == PN_XLR_RM_XACT && (rec->info & 0x70u) == INFO_COMMIT) {
			fputs("C\n", f);
			continue;
		}
		ok = write_record(f, rec, p1, m, &track, fig);
	}
	free(track.slots);
	free(track.rels);
	free(rec);
	return ok || r->refused ? pn_import_end(r, start, to, first, false) : out_of_memory();
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

#define LSN_ARGS(l) (unsigned)((l) >> 32), (unsigned)(l)

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
	const struct tally *c = &fig->counted;
	fprintf(f,
		"# Written by penumbra import: PostgreSQL's WAL %X/%X .. %X/%X, replayed from its\n"
		"# first redo point %X/%X (%" PRIu64 " records, %" PRIu64 " commits, %" PRIu64
		" checkpoints).\n# The run's WAL figures count the records from %X/%X on (%" PRIu64
		" records; the trace's\n# F line): PostgreSQL's own figures for them: %" PRIu64
		" WAL bytes, %" PRIu64 " full-page\n# images of %" PRIu64 " bytes (%" PRIu64
		" bytes uncompressed).\n"
		"# Relations (tablespace/database/relfilenode fork: pages):\n",
		LSN_ARGS(from), LSN_ARGS(to), LSN_ARGS(start), fig->replayed.records,
		fig->replayed.commits, fig->replayed.checkpoints, LSN_ARGS(c->first), c->records,
		c->bytes, c->fpi_count, c->fpi_bytes, c->fpi_raw_bytes);
	for (size_t i = 0; i < m->nrels; i++)
		fprintf(f, "#   %u/%u/%u %u: %u .. %u\n", m->rels[i].spc, m->rels[i].db,
			m->rels[i].rel, m->rels[i].fork, m->rels[i].base,
			m->rels[i].base + m->rels[i].pages - 1);
	fprintf(f,
		"name: %s\nseed: 1\npostgres: %u\nstorage:\n  pages: %u\n  page_size: 8192\n  buffers: %u\n"
		"  wal_segment_size: %u\nprotocol:\n  mode: fpw\n  checksums: %s\n"
		"checkpoint:\n  interval: 0s\n  every_transactions: 0\n  max_wal_size: 0\n"
		"workload:\n  kind: import\n  clients: 1\n  transactions: %" PRIu64 "\n"
		"  trace: %s.trace\n",
		name, r->pg_version, PN_MAX(pages, 4u), PN_MAX(PN_MIN(pages, 16384u), 4u),
		r->seg_size, p1->hints ? "true" : "false",
		PN_MAX(fig->replayed.commits, (uint64_t)1), name);
}

/* What the conversion took from the WAL and where (before the figures). */
static void print_facts(FILE *f, const struct pn_xlr *r, pn_lsn start, pn_lsn from,
			const struct pass1 *p1)
{
	fprintf(f, "postgres: %u (WAL page magic %04X)\n", r->pg_version, r->magic);
	fprintf(f, "hint bits logged: %s (%s)\n", p1->hints ? "yes" : "no",
		p1->hints_seen ? p1->hints_why : "no record shows it: PostgreSQL's default, off");
	if (start < from)
		fprintf(f,
			"the replay starts at the checkpoint before --from: its redo point %X/%X\n",
			LSN_ARGS(start));
	if (p1->past_to)
		fprintf(f,
			"read past --to: the checkpoint record at %X/%X has its redo point in the "
			"range\n",
			LSN_ARGS(p1->past_to));
}

/* Pass 1 reads from the WAL's first record: the checkpoint before --from (a redo point at or
 * before the range's first record: the replay starts there; else the range's first redo
 * point) and the settings may lie before the range. It reads on past --to while a
 * checkpoint record of a redo point inside the range may still come (a spread
 * checkpoint's record is written long after its redo point, which has no record). */
static int pass_1(struct pn_xlr *r, pn_lsn from, pn_lsn to, struct pass1 *p1, pn_lsn *start)
{
	struct pn_xlr_record *rec = malloc(sizeof *rec);
	pn_lsn first = rec ? pn_xlr_begin(r, from, to) : 0;
	/* the range's end is judged by pass 2, which reads it to --to (pn_import_end) */
	int rc = !rec ? out_of_memory() : first ? 0 : pn_import_end(r, from, to, first, false);
	bool ok = rc == 0 && pn_xlr_begin(r, 0, 0) != 0;

	*start = 0;
	while (ok && pn_xlr_read(r, rec)) {
		if (to && rec->end > to) {
			if (!is_checkpoint(rec) || rec->main_len < 8)
				continue;
			if (pn_get64(rec->main_data) >= to)
				break; /* redo points only grow: none of the range's is left */
			p1->past_to = rec->start;
		}
		ok = collect(r, p1, rec);
	}
	if (rc == 0 && r->refused) {
		fprintf(stderr, "penumbra import: %s\n", r->why);
		rc = 2;
	} else if (rc == 0 && !ok) {
		rc = out_of_memory();
	}
	control_settings(p1, r, p1->control_why, sizeof p1->control_why);
	pn_lsn before = 0, inside = 0; /* redo points grow with their records */
	for (size_t i = 0; ok && i < p1->nredo; i++) {
		if (p1->redo[i] <= first)
			before = p1->redo[i];
		else if (!inside && (!to || p1->redo[i] < to))
			inside = p1->redo[i];
	}
	*start = before ? before : inside;
	free(rec);
	if (rc == 0 && !*start) {
		fprintf(stderr,
			"penumbra import: no checkpoint redo point at or before the range's first "
			"record %X/%X (--from %X/%X), nor inside the range: the replay starts at one; "
			"give segments that hold a checkpoint before or inside the range\n",
			(unsigned)(first >> 32), (unsigned)first, (unsigned)(from >> 32),
			(unsigned)from);
		rc = 2;
	}
	return rc;
}

/* Pass 2: the page map of the replayed range. */
static int pass_2(struct pn_xlr *r, pn_lsn start, pn_lsn to, struct map *m)
{
	struct pn_xlr_record *rec = malloc(sizeof *rec);
	pn_lsn first = rec ? pn_xlr_begin(r, start, to) : 0;
	bool ok = rec != NULL;
	uint32_t base = 0;

	while (ok && first && pn_xlr_read(r, rec))
		for (int i = 0; ok && i <= rec->max_block_id; i++)
			if (rec->blocks[i].in_use)
				ok = map_add(m, &rec->blocks[i]);
	for (size_t i = 0; i < m->nrels; i++) {
		m->rels[i].base = base;
		base += m->rels[i].pages;
	}
	free(rec);
	return ok ? pn_import_end(r, start, to, first, true) : out_of_memory();
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
	rc = grow_map(&m) ? pass_1(r, from, to, p1, &start) : out_of_memory();
	if (rc == 0)
		rc = pass_2(r, start, to, &m);
	if (rc != 0)
		goto out;
	if (!(yaml = pn_cli_open_output("import", out)) ||
	    !(tf = pn_cli_open_output("import", trace))) {
		rc = 2;
		goto out;
	}
	fig.from = from;
	if ((rc = write_trace(r, start, to, p1, &m, tf, &fig)) != 0)
		goto out;
	write_yaml(yaml, name, r, from, to, start, &m, p1, &fig);
	rc = pn_cli_close_output("import", tf, trace, true); /* files.h F3: both or neither */
	tf = NULL;
	if (rc == 0 && (rc = pn_cli_close_output("import", yaml, out, true)) != 0)
		unlink(trace);
	yaml = NULL;
	if (rc != 0)
		goto out;
	print_facts(stdout, r, start, from, p1);
	if (fig.estimated + fig.estimated_items + fig.assumed_full)
		printf("page holes estimated (PostgreSQL imaged no page at its first change after a "
		       "checkpoint: full_page_writes off): %" PRIu64
		       " from the tuples the records add since the page's last image or "
		       "initialization, %" PRIu64 " of pages written before the WAL from their "
		       "line pointers and tuple size, %" PRIu64 " taken as full pages\n",
		       fig.estimated, fig.estimated_items, fig.assumed_full);
	printf("replayed %X/%X .. %X/%X: %" PRIu64 " records (%" PRIu64 " commits, %" PRIu64
	       " checkpoints), %zu pages of %zu relations\n",
	       LSN_ARGS(start), LSN_ARGS(r->next), fig.replayed.records, fig.replayed.commits,
	       fig.replayed.checkpoints, m.n, m.nrels);
	printf("counted %X/%X .. %X/%X: %" PRIu64 " records (%" PRIu64 " commits, %" PRIu64
	       " checkpoints): the run's WAL figures are these records'%s\n",
	       LSN_ARGS(fig.counted.first), LSN_ARGS(r->next), fig.counted.records,
	       fig.counted.commits, fig.counted.checkpoints,
	       fig.counted.records < fig.replayed.records ? " (the trace's F line)" : "");
	printf("PostgreSQL on them: wal_bytes %" PRIu64 " fpi_count %" PRIu64 " fpi_bytes %" PRIu64
	       " fpi_bytes_uncompressed %" PRIu64 "\nwrote %s and %s\n",
	       fig.counted.bytes, fig.counted.fpi_count, fig.counted.fpi_bytes,
	       fig.counted.fpi_raw_bytes, out, trace);
out:
	pn_file_abort_out(tf);
	pn_file_abort_out(yaml);
	free(m.slots);
	free(m.rels);
	free(p1->redo);
	free(p1);
	return rc;
}

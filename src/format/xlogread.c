/*
 * xlogread.c: PostgreSQL 15, 16 and 17 WAL, read as xlogreader.c reads it (format layer;
 * xlogread.h states the rules XR0-XR6). The byte layouts are walfmt.c's (records, page headers);
 * a record's structure is decoded by xlogdecode.c; what this reader adds is what only real
 * WAL's pages hold:
 *
 *   - page flags XLP_BKP_REMOVABLE 0x0004 and XLP_FIRST_IS_OVERWRITE_CONTRECORD 0x0008 (a
 *     continuation that was overwritten: reading restarts at that page);
 *   - XLOG_SWITCH: the rest of the segment is unused;
 *   - any resource manager id PostgreSQL accepts: 0..21 built in, 128..255 custom.
 *
 * Where reading stops, in xlogreader.c's order: an unreadable page (a missing file), the
 * page header (the first segment's magic: 0xD110, 0xD113 or 0xD116; info bits, the long header's segment and block sizes,
 * pageaddr, a timeline going back), the record offset, xl_tot_len < 24, the rmid, xl_prev
 * (below the record on the first read, equal to the previous record's start after), the
 * contrecord flag and xlp_rem_len, the CRC; then, past the CRC, a refusal (XR5) by the
 * decoder (pn_xlr_decode), which this file words with the segment file, the offset and the
 * LSN (pn_xlr_refuse).
 */
#include "xlogread.h"

#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walfmt.h"

#define PAGE PN_XLOG_BLCKSZ
#define REC_HDR 24u
#define PHD_SHORT 24u
#define PHD_LONG 40u
#define XLP_ALL_FLAGS 0x000Fu
#define XLP_OVERWRITE_CONTRECORD 0x0008u
#define MAX_RECORD 0x3FFFFFFFu /* MaxAllocSize: a longer record cannot be decoded */
#define NO_PAGE ((pn_lsn)1)

#define LSN_ARGS(l) (unsigned)((l) >> 32), (unsigned)(l)

/* ---- 1. versions and names, as the rmgrdesc identify functions give them ------------- */

/* XLOG_PAGE_MAGIC of each version read (xlog_internal.h). Between them the page, record and
 * block headers are the same; what differs is the record types below. */
static const struct {
	uint16_t magic;
	uint32_t version;
} magics[] = {{0xD110, 15}, {0xD113, 16}, {0xD116, 17}};

uint32_t pn_xlr_version_of_magic(uint16_t magic)
{
	for (size_t i = 0; i < PN_ARRAY_LEN(magics); i++)
		if (magics[i].magic == magic)
			return magics[i].version;
	return 0;
}

static const char *const rm_names[PN_XLR_RM_BUILTIN] = {
	"XLOG",       "Transaction",    "Storage", "CLOG",     "Database",
	"Tablespace", "MultiXact",      "RelMap",  "Standby",  "Heap2",
	"Heap",       "Btree",          "Hash",    "Gin",      "Gist",
	"Sequence",   "SPGist",         "BRIN",    "CommitTs", "ReplicationOrigin",
	"Generic",    "LogicalMessage",
};

/* Record types by the upper four info bits (info >> 4), for the managers that use all
 * four as the type (Transaction uses three and Generic none: see pn_xlr_identify). */
static const char *const types[PN_XLR_RM_BUILTIN][16] = {
	[0] = {"CHECKPOINT_SHUTDOWN", "CHECKPOINT_ONLINE", "NOOP", "NEXTOID", "SWITCH",
	       "BACKUP_END", "PARAMETER_CHANGE", "RESTORE_POINT", "FPW_CHANGE", "END_OF_RECOVERY",
	       "FPI_FOR_HINT", "FPI", NULL, "OVERWRITE_CONTRECORD"},
	[1] = {"COMMIT", "PREPARE", "ABORT", "COMMIT_PREPARED", "ABORT_PREPARED", "ASSIGNMENT",
	       "INVALIDATION"},
	[2] = {NULL, "CREATE", "TRUNCATE"},
	[3] = {"ZEROPAGE", "TRUNCATE"},
	[4] = {"CREATE_FILE_COPY", "CREATE_WAL_LOG", "DROP"},
	[5] = {"CREATE", "DROP"},
	[6] = {"ZERO_OFF_PAGE", "ZERO_MEM_PAGE", "CREATE_ID", "TRUNCATE_ID"},
	[7] = {"UPDATE"},
	[8] = {"LOCK", "RUNNING_XACTS", "INVALIDATIONS"},
	[9] = {"REWRITE", "PRUNE", "VACUUM", "FREEZE_PAGE", "VISIBLE", "MULTI_INSERT",
	       "LOCK_UPDATED", "NEW_CID", [13] = "MULTI_INSERT+INIT"},
	[10] = {"INSERT", "DELETE", "UPDATE", "TRUNCATE", "HOT_UPDATE", "HEAP_CONFIRM", "LOCK",
		"INPLACE", "INSERT+INIT", NULL, "UPDATE+INIT", NULL, "HOT_UPDATE+INIT"},
	[11] = {"INSERT_LEAF", "INSERT_UPPER", "INSERT_META", "SPLIT_L", "SPLIT_R", "INSERT_POST",
		"DEDUP", "DELETE", "UNLINK_PAGE", "UNLINK_PAGE_META", "NEWROOT",
		"MARK_PAGE_HALFDEAD", "VACUUM", "REUSE_PAGE", "META_CLEANUP"},
	[12] = {"INIT_META_PAGE", "INIT_BITMAP_PAGE", "INSERT", "ADD_OVFL_PAGE",
		"SPLIT_ALLOCATE_PAGE", "SPLIT_PAGE", "SPLIT_COMPLETE", "MOVE_PAGE_CONTENTS",
		"SQUEEZE_PAGE", "DELETE", "SPLIT_CLEANUP", "UPDATE_META_PAGE", "VACUUM_ONE_PAGE"},
	[13] = {"CREATE_PTREE", "INSERT", "SPLIT", "VACUUM_PAGE", "VACUUM_DATA_LEAF_PAGE",
		"DELETE_PAGE", "UPDATE_META_PAGE", "INSERT_LISTPAGE", "DELETE_LISTPAGE"},
	[14] = {"PAGE_UPDATE", "DELETE", "PAGE_REUSE", "PAGE_SPLIT", NULL, NULL, "PAGE_DELETE",
		"ASSIGN_LSN"},
	[15] = {"LOG"},
	[16] = {"ADD_LEAF", "MOVE_LEAFS", "ADD_NODE", "SPLIT_TUPLE", "PICKSPLIT", "VACUUM_LEAF",
		"VACUUM_ROOT", "VACUUM_REDIRECT"},
	[17] = {"CREATE_INDEX", "INSERT", "UPDATE", "SAMEPAGE_UPDATE", "REVMAP_EXTEND",
		"DESUMMARIZE", NULL, NULL, NULL, "INSERT+INIT", "UPDATE+INIT"},
	[18] = {"ZEROPAGE", "TRUNCATE"},
	[19] = {"SET", "DROP"},
	[21] = {"MESSAGE"},
};

/* Where a later version's types differ from 15's (the upper four info bits): PostgreSQL 17
 * split Heap2/PRUNE into three opcodes (0x10 .. 0x30, VACUUM and FREEZE_PAGE gone: pruning,
 * freezing and dead-item marking are one record) and added XLOG/CHECKPOINT_REDO (0xE0, at
 * an online checkpoint's redo point). 16 names every record as 15 does (its FREEZE_PAGE
 * changed layout, not name). */
static const struct {
	uint32_t since;
	uint8_t rmid, type;
	const char *name;
} changed[] = {
	{17, PN_XLR_RM_HEAP2, 1, "PRUNE_ON_ACCESS"},
	{17, PN_XLR_RM_HEAP2, 2, "PRUNE_VACUUM_SCAN"},
	{17, PN_XLR_RM_HEAP2, 3, "PRUNE_VACUUM_CLEANUP"},
	{17, PN_XLR_RM_XLOG, 14, "CHECKPOINT_REDO"},
};

const char *pn_xlr_rm_name(uint8_t rmid, char *buf, size_t len)
{
	if (rmid < PN_XLR_RM_BUILTIN)
		return rm_names[rmid];
	snprintf(buf, len, "custom%03u", (unsigned)rmid);
	return buf;
}

const char *pn_xlr_identify(uint32_t version, uint8_t rmid, uint8_t info)
{
	const char *name = NULL;
	PN_ASSERT(version >= PN_XLR_PG_VERSION_MIN && version <= PN_XLR_PG_VERSION_MAX);
	if (rmid >= PN_XLR_RM_BUILTIN)
		return NULL;
	if (rmid == 20)
		return "Generic";
	if (rmid == PN_XLR_RM_XACT)
		info &= 0x70; /* XLOG_XACT_OPMASK; 0x80 is XLOG_XACT_HAS_INFO */
	name = types[rmid][info >> 4];
	for (size_t i = 0; i < PN_ARRAY_LEN(changed); i++)
		if (changed[i].rmid == rmid && changed[i].type == info >> 4 &&
		    version >= changed[i].since)
			name = changed[i].name;
	return name;
}

static bool rmid_valid(uint8_t rmid)
{
	return rmid < PN_XLR_RM_BUILTIN || rmid >= PN_XLR_RM_CUSTOM_MIN;
}

/* ---- 2. segment files -------------------------------------------------------------------- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A segment file name: 24 upper-case hex digits, nothing after them. */
static bool parse_name(const char *name, uint32_t *tli, uint64_t *hi, uint64_t *lo)
{
	uint64_t v[3] = {0, 0, 0};

	if (strlen(name) != 24)
		return false;
	for (int i = 0; i < 24; i++) {
		int h = hexval(name[i]);
		if (h < 0)
			return false;
		v[i / 8] = v[i / 8] << 4 | (uint64_t)h;
	}
	*tli = (uint32_t)v[0];
	*hi = v[1];
	*lo = v[2];
	return *tli != 0;
}

struct named {
	uint32_t tli;
	uint64_t hi, lo;
	char *path;
};

struct collect {
	struct named *v;
	size_t n, cap;
};

static bool add_named(struct collect *c, const char *dir, const char *name)
{
	struct named x;
	size_t len;

	if (!parse_name(name, &x.tli, &x.hi, &x.lo))
		return true;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct named *v = realloc(c->v, cap * sizeof *v);
		if (!v)
			return false;
		c->v = v;
		c->cap = cap;
	}
	len = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
	if (!(x.path = malloc(len)))
		return false;
	if (dir)
		snprintf(x.path, len, "%s/%s", dir, name);
	else
		snprintf(x.path, len, "%s", name);
	c->v[c->n++] = x;
	return true;
}

static bool add_path(struct collect *c, const char *path, char *err, size_t len)
{
	struct stat st;
	const char *base;
	DIR *d;
	struct dirent *e;
	bool ok = true;

	if (stat(path, &st) != 0) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (!parse_name(base, &(uint32_t){0}, &(uint64_t){0}, &(uint64_t){0})) {
			snprintf(err, len, "%s: not a WAL segment file name (24 hex digits)", path);
			return false;
		}
		size_t n0 = c->n;
		if (!add_named(c, NULL, base))
			return false;
		free(c->v[n0].path);
		c->v[n0].path = strdup(path);
		return c->v[n0].path != NULL;
	}
	if (!(d = opendir(path))) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return false;
	}
	while (ok && (e = readdir(d)))
		ok = add_named(c, path, e->d_name);
	closedir(d);
	return ok;
}

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->tli != y->tli)
		return x->tli < y->tli ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The segment size from the first file's long header (pg_waldump reads it the same way). */
static bool read_seg_size(const char *path, uint32_t *seg_size, uint16_t *magic, char *err,
			  size_t len)
{
	uint8_t hdr[PHD_LONG];
	char why[PN_ERROR_LEN / 2] = "";
	FILE *f = pn_file_fopen_in(path, "a WAL segment file", why, sizeof why);
	bool ok = f && fread(hdr, 1, sizeof hdr, f) == sizeof hdr;

	if (f)
		fclose(f);
	if (!ok) {
		snprintf(err, len, "%s: cannot read its first page header%s%s", path,
			 why[0] ? ": " : "", why);
		return false;
	}
	*seg_size = pn_get32(hdr + 32);
	*magic = pn_get16(hdr);
	if (!pn_xlr_version_of_magic(*magic) || !(pn_get16(hdr + 2) & PN_XLP_LONG_HEADER) ||
	    *seg_size < (1u << 20) || *seg_size > (1u << 30) || (*seg_size & (*seg_size - 1))) {
		snprintf(err, len,
			 "%s: not a PostgreSQL 15, 16 or 17 WAL segment (magic %04X: D110, D113 or "
			 "D116 expected; segment size %u: a power of two from 1 MiB to 1 GiB "
			 "expected)",
			 path, (unsigned)*magic, (unsigned)*seg_size);
		return false;
	}
	if (pn_get32(hdr + 36) != PAGE) {
		snprintf(err, len, "%s: WAL block size %u, this reader reads 8192", path,
			 (unsigned)pn_get32(hdr + 36));
		return false;
	}
	return true;
}

/* Every segment kept is a regular file (files.h F1), refused at once otherwise: a FIFO named
 * like a segment would block the read, or end the WAL there as if it had run out. */
static bool segments_regular(const struct pn_xlr *r, char *err, size_t len)
{
	char why[PN_ERROR_LEN / 2];
	for (size_t i = 0; i < r->nsegs; i++) {
		int fd = pn_file_open_in(r->segs[i].path, "a WAL segment file", why, sizeof why);
		if (fd < 0) {
			snprintf(err, len, "%s: cannot read: %s", r->segs[i].path, why);
			return false;
		}
		close(fd);
	}
	return true;
}

/* One segment per number: the highest timeline that has it (a linear history's newest). */
static bool keep_segments(struct pn_xlr *r, struct collect *c)
{
	uint64_t per_id = ((uint64_t)1 << 32) / r->seg_size;

	r->segs = calloc(c->n, sizeof *r->segs);
	if (!r->segs)
		return false;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t segno = c->v[i].hi * per_id + c->v[i].lo;
		if (c->v[i].lo >= per_id)
			continue; /* a name no segment of this size has */
		if (r->nsegs && r->segs[r->nsegs - 1].segno == segno)
			free(r->segs[--r->nsegs].path);
		r->segs[r->nsegs].tli = c->v[i].tli;
		r->segs[r->nsegs].segno = segno;
		r->segs[r->nsegs].path = c->v[i].path;
		c->v[i].path = NULL;
		r->nsegs++;
	}
	return true;
}

bool pn_xlr_open(struct pn_xlr *r, char *const *paths, size_t npaths, char *err, size_t len)
{
	struct collect c = {0};
	bool ok = true;

	memset(r, 0, sizeof *r);
	r->page_addr = NO_PAGE;
	r->hdr_segno = UINT64_MAX;
	for (size_t i = 0; ok && i < npaths; i++)
		ok = add_path(&c, paths[i], err, len);
	if (ok && c.n == 0) {
		snprintf(err, len, "no WAL segment file (24 hex digits) in %s%s", paths[0],
			 npaths > 1 ? " ..." : "");
		ok = false;
	}
	if (ok) {
		qsort(c.v, c.n, sizeof *c.v, cmp_named);
		ok = read_seg_size(c.v[0].path, &r->seg_size, &r->magic, err, len);
		r->pg_version = ok ? pn_xlr_version_of_magic(r->magic) : 0;
	}
	if (ok && !keep_segments(r, &c)) {
		snprintf(err, len, "out of memory");
		ok = false;
	}
	ok = ok && segments_regular(r, err, len);
	for (size_t i = 0; i < c.n; i++)
		free(c.v[i].path);
	free(c.v);
	if (!ok)
		pn_xlr_close(r);
	return ok;
}

void pn_xlr_close(struct pn_xlr *r)
{
	for (size_t i = 0; i < r->nsegs; i++)
		free(r->segs[i].path);
	free(r->segs);
	free(r->rec);
	if (r->file)
		fclose(r->file);
	memset(r, 0, sizeof *r);
}

pn_lsn pn_xlr_first_lsn(const struct pn_xlr *r)
{
	return r->nsegs ? r->segs[0].segno * r->seg_size : 0;
}

/* ---- 3. pages ------------------------------------------------------------------------------ */

static void stop(struct pn_xlr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stop(struct pn_xlr *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
	r->page_addr = NO_PAGE;
}

static void seg_name(const struct pn_xlr *r, uint32_t tli, uint64_t segno, char out[25])
{
	uint64_t per_id = ((uint64_t)1 << 32) / r->seg_size;
	PN_ASSERT(r->seg_size != 0 && per_id != 0); /* pn_xlr_open kept a size PostgreSQL has */
	snprintf(out, 25, "%08X%08X%08X", (unsigned)tli, (unsigned)(segno / per_id),
		 (unsigned)(segno % per_id));
}

static const struct pn_xlr_seg *find_seg(const struct pn_xlr *r, uint64_t segno, size_t *at)
{
	size_t lo = 0, hi = r->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->segs[mid].segno < segno)
			lo = mid + 1;
		else
			hi = mid;
	}
	PN_ASSERT(lo <= r->nsegs && (lo == 0 || r->segs[lo - 1].segno < segno));
	if (lo == r->nsegs || r->segs[lo].segno != segno)
		return NULL;
	*at = lo;
	return &r->segs[lo];
}

/* Reads the raw page at addr into r->page. */
static bool load(struct pn_xlr *r, pn_lsn addr)
{
	uint64_t segno = addr / r->seg_size;
	size_t at = 0;
	const struct pn_xlr_seg *s = find_seg(r, segno, &at);
	char name[25];

	PN_ASSERT(addr % PAGE == 0); /* pages only */
	if (!s) {
		seg_name(r, r->nsegs ? r->segs[r->nsegs - 1].tli : 1, segno, name);
		stop(r, "could not find file \"%s\"", name);
		return false;
	}
	if (!r->file || r->file_seg != at) {
		if (r->file)
			fclose(r->file);
		r->file_seg = at;
		char why[PN_ERROR_LEN / 2];
		if (!(r->file = pn_file_fopen_in(s->path, "a WAL segment file", why, sizeof why))) {
			stop(r, "could not open file \"%s\": %s", s->path, why);
			return false;
		}
	}
	PN_ASSERT(r->file_seg == at && s == &r->segs[at]);
	if (fseeko(r->file, (off_t)(addr % r->seg_size), SEEK_SET) != 0 ||
	    fread(r->page, 1, PAGE, r->file) != PAGE) {
		stop(r, "could not read from file \"%s\", offset %" PRIu64 ": short read", s->path,
		     addr % r->seg_size);
		return false;
	}
	return true;
}

/* XLogReaderValidatePageHeader on r->page, the page at addr. */
static bool validate(struct pn_xlr *r, pn_lsn addr)
{
	const uint8_t *p = r->page;
	uint16_t info = pn_get16(p + 2);
	uint32_t tli = pn_get32(p + 4), off = (uint32_t)(addr % r->seg_size);
	size_t at = 0;
	char name[25];

	seg_name(r, find_seg(r, addr / r->seg_size, &at) ? r->segs[at].tli : 1, addr / r->seg_size,
		 name);
	if (pn_get16(p) != r->magic) { /* every page of the first segment's version */
		stop(r, "invalid magic number %04X in log segment %s, offset %u", pn_get16(p), name,
		     off);
		return false;
	}
	if ((info & ~XLP_ALL_FLAGS) != 0 || (off == 0 && !(info & PN_XLP_LONG_HEADER))) {
		stop(r, "invalid info bits %04X in log segment %s, offset %u", info, name, off);
		return false;
	}
	if (info & PN_XLP_LONG_HEADER) {
		if (pn_get32(p + 32) != r->seg_size) {
			stop(r,
			     "WAL file is from different database system: incorrect segment size "
			     "in page header");
			return false;
		}
		if (pn_get32(p + 36) != PAGE) {
			stop(r, "WAL file is from different database system: incorrect XLOG_BLCKSZ "
				"in page header");
			return false;
		}
	}
	if (pn_get64(p + 8) != addr) {
		stop(r, "unexpected pageaddr %X/%X in log segment %s, offset %u",
		     LSN_ARGS(pn_get64(p + 8)), name, off);
		return false;
	}
	if (addr > r->latest_page && tli < r->latest_tli) {
		stop(r, "out-of-sequence timeline ID %u (after %u) in log segment %s, offset %u",
		     (unsigned)tli, (unsigned)r->latest_tli, name, off);
		return false;
	}
	PN_ASSERT(addr % PAGE == 0 && pn_get64(p + 8) == addr);
	r->latest_page = addr;
	r->latest_tli = tli;
	return true;
}

/*
 * ReadPageInternal: the page at addr, validated, with at least need bytes below the limit.
 * Entering a segment validates its first page first. False: r->why, or empty at the limit.
 */
static bool get_page(struct pn_xlr *r, pn_lsn addr, uint32_t need)
{
	uint64_t segno = addr / r->seg_size;

	PN_ASSERT(addr % PAGE == 0 && need <= PAGE);
	if (r->limit && addr + need > r->limit) {
		r->limit_reached = true;
		r->why[0] = '\0';
		r->page_addr = NO_PAGE;
		return false;
	}
	if (r->page_addr == addr)
		return true;
	if (segno != r->hdr_segno && addr % r->seg_size != 0) {
		pn_lsn first = segno * r->seg_size;
		if (!load(r, first) || !validate(r, first))
			return false;
	}
	if (!load(r, addr) || !validate(r, addr))
		return false;
	r->hdr_segno = segno;
	r->page_addr = addr;
	PN_ASSERT(r->page_addr == r->latest_page); /* the page held is the one validated last */
	return true;
}

static uint32_t header_size(const uint8_t *page)
{
	return (pn_get16(page + 2) & PN_XLP_LONG_HEADER) ? PHD_LONG : PHD_SHORT;
}

/* ---- 4. records ---------------------------------------------------------------------------- */

static bool grow(struct pn_xlr *r, uint32_t len)
{
	uint8_t *p;
	uint32_t cap = r->rec_cap ? r->rec_cap : 8192;

	if (len <= r->rec_cap)
		return true;
	while (cap < len)
		cap = cap > MAX_RECORD / 2 ? MAX_RECORD : 2 * cap;
	PN_ASSERT(cap >= len && cap <= MAX_RECORD);
	if (!(p = realloc(r->rec, cap)))
		return false;
	r->rec = p;
	r->rec_cap = cap;
	return true;
}

/* ValidXLogRecordHeader. */
static bool valid_header(struct pn_xlr *r, pn_lsn at, const uint8_t *h)
{
	uint32_t tot = pn_get32(h);
	pn_lsn prev = pn_get64(h + 8);

	if (tot < REC_HDR) {
		stop(r, "invalid record length at %X/%X: wanted %u, got %u", LSN_ARGS(at), REC_HDR,
		     (unsigned)tot);
		return false;
	}
	if (!rmid_valid(h[17])) {
		stop(r, "invalid resource manager ID %u at %X/%X", (unsigned)h[17], LSN_ARGS(at));
		return false;
	}
	if ((r->prev == 0 && prev >= at) || (r->prev != 0 && prev != r->prev)) {
		stop(r, "record with incorrect prev-link %X/%X at %X/%X", LSN_ARGS(prev),
		     LSN_ARGS(at));
		return false;
	}
	return true;
}

/* The continuation pages of a record of tot bytes, got of which are in r->rec already.
 * Returns the position after the record (unaligned), 0 on failure; *restart is set when a
 * page says its continuation was overwritten (reading restarts at that page). */
static pn_lsn continuation(struct pn_xlr *r, pn_lsn at, pn_lsn page, uint32_t tot, uint32_t got,
			   bool gotheader, pn_lsn *restart)
{
	while (got < tot) {
		uint32_t hdr, rem, len;
		page += PAGE;
		if (!get_page(r, page, PN_MIN(tot - got + PHD_SHORT, PAGE)))
			return 0;
		if (pn_get16(r->page + 2) & XLP_OVERWRITE_CONTRECORD) {
			*restart = page;
			return 0;
		}
		rem = pn_get32(r->page + 16);
		if (!(pn_get16(r->page + 2) & PN_XLP_FIRST_IS_CONTRECORD)) {
			stop(r, "there is no contrecord flag at %X/%X", LSN_ARGS(page));
			return 0;
		}
		if (rem == 0 || tot != rem + got) {
			stop(r, "invalid contrecord length %u (expected %lld) at %X/%X",
			     (unsigned)rem, (long long)tot - (long long)got, LSN_ARGS(page));
			return 0;
		}
		hdr = header_size(r->page);
		len = PN_MIN(rem, PAGE - hdr);
		if (!get_page(r, page, hdr + len))
			return 0;
		if (!grow(r, got + len)) {
			stop(r, "out of memory for a record of %u bytes at %X/%X", (unsigned)tot,
			     LSN_ARGS(at));
			return 0;
		}
		memcpy(r->rec + got, r->page + hdr, len);
		got += len;
		if (!gotheader) {
			if (!valid_header(r, at, r->rec))
				return 0;
			gotheader = true;
		}
		if (got == tot)
			return page + hdr + len;
	}
	return 0;
}

static bool decode(struct pn_xlr *r, pn_lsn at, const uint8_t *buf, uint32_t len,
		   struct pn_xlr_record *out);

/* Reads the record at r->next (after a page header when it is at a page start). */
static bool read_at(struct pn_xlr *r, pn_lsn at, struct pn_xlr_record *out)
{
	pn_lsn page, end, restart;
	uint32_t off, hdr, tot, here;
	bool gotheader;

again:
	restart = 0;
	page = at - at % PAGE;
	off = (uint32_t)(at % PAGE);
	if (!get_page(r, page, PN_MIN(off + REC_HDR, PAGE)))
		return false;
	hdr = header_size(r->page);
	if (off == 0) {
		at += hdr;
		off = hdr;
	} else if (off < hdr) {
		stop(r, "invalid record offset at %X/%X", LSN_ARGS(at));
		return false;
	}
	if ((pn_get16(r->page + 2) & PN_XLP_FIRST_IS_CONTRECORD) && off == hdr) {
		stop(r, "contrecord is requested by %X/%X", LSN_ARGS(at));
		return false;
	}
	gotheader = off <= PAGE - REC_HDR;
	tot = pn_get32(r->page + off); /* starts are 8-aligned: the length is on this page */
	if (gotheader && !valid_header(r, at, r->page + off))
		return false;
	if (!gotheader && tot < REC_HDR) {
		stop(r, "invalid record length at %X/%X: wanted %u, got %u", LSN_ARGS(at), REC_HDR,
		     (unsigned)tot);
		return false;
	}
	/* The buffer grows as the record's pages arrive (continuation()): a hostile length on a
	 * short file allocates nothing. */
	if (tot > MAX_RECORD || !grow(r, PN_MIN(tot, PAGE))) {
		stop(r, "record length %u at %X/%X too long", (unsigned)tot, LSN_ARGS(at));
		return false;
	}
	PN_ASSERT(off >= hdr && off < PAGE && r->rec_cap >= PN_MIN(tot, PAGE));
	here = PAGE - off;
	if (tot <= here) {
		if (!get_page(r, page, off + tot))
			return false;
		memcpy(r->rec, r->page + off, tot);
		end = at + tot;
	} else {
		memcpy(r->rec, r->page + off, here);
		end = continuation(r, at, page, tot, here, gotheader, &restart);
		if (restart) {
			at = restart;
			goto again;
		}
		if (!end)
			return false;
	}
	if (!decode(r, at, r->rec, tot, out))
		return false;
	PN_ASSERT(end > at); /* a record takes room */
	out->end = PN_ALIGN8(end);
	if (out->rmid == PN_XLR_RM_XLOG && (out->info & 0xF0) == PN_XLR_XLOG_SWITCH)
		out->end = (out->end + r->seg_size - 1) / r->seg_size * r->seg_size;
	return true;
}

bool pn_xlr_read(struct pn_xlr *r, struct pn_xlr_record *out)
{
	r->why[0] = '\0';
	r->refused = false;
	if (r->limit_reached || !read_at(r, r->next, out))
		return false;
	PN_ASSERT(out->end > out->start); /* reading moves forward */
	r->prev = out->start;
	r->next = out->end;
	return true;
}

bool pn_xlr_whole(const struct pn_xlr *r)
{
	return !r->refused && (r->limit_reached || r->limit == 0);
}

/* ---- 5. a record's structure: the decoder (xlogdecode.c) ---------------------------------- */

/* XR5: a record whose CRC is right but that breaks a check is refused, naming its segment
 * file, the offset in it and its LSN. */
void pn_xlr_refuse(struct pn_xlr *r, pn_lsn at, const char *fmt, ...)
{
	char what[PN_ERROR_LEN / 2];
	size_t i = 0;
	const struct pn_xlr_seg *s = find_seg(r, at / r->seg_size, &i);
	va_list ap;

	PN_ASSERT(s != NULL); /* the record was read from it */
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	stop(r, "%.400s, offset %" PRIu64 ": record at %X/%X: %s", s->path, at % r->seg_size,
	     LSN_ARGS(at), what);
	r->refused = true;
}

static bool check_crc(struct pn_xlr *r, pn_lsn at, const uint8_t *buf, uint32_t len)
{
	if (pn_wal_record_crc(buf, len) != pn_get32(buf + 20)) {
		stop(r, "incorrect resource manager data checksum in record at %X/%X",
		     LSN_ARGS(at));
		return false;
	}
	return true;
}

static bool decode(struct pn_xlr *r, pn_lsn at, const uint8_t *buf, uint32_t len,
		   struct pn_xlr_record *out)
{
	if (!check_crc(r, at, buf, len))
		return false;
	if (pn_xlr_decode(&r->dec, at, buf, len, out))
		return true;
	pn_xlr_refuse(r, at, "%s", r->dec.why);
	return false;
}

/* ---- 6. the first record (XLogFindNextRecord) ---------------------------------------------- */

pn_lsn pn_xlr_begin(struct pn_xlr *r, pn_lsn from, pn_lsn to)
{
	struct pn_xlr_record rec;
	pn_lsn at = from ? from : pn_xlr_first_lsn(r);

	r->limit = to;
	r->limit_reached = false;
	r->why[0] = '\0';
	r->refused = false;
	for (;;) {
		pn_lsn page = at - at % PAGE;
		uint32_t hdr, rem;
		if (!get_page(r, page, PN_MAX((uint32_t)(at % PAGE), PHD_SHORT)))
			return 0;
		hdr = header_size(r->page);
		rem = pn_get32(r->page + 16);
		if (!(pn_get16(r->page + 2) & PN_XLP_FIRST_IS_CONTRECORD)) {
			at = page + hdr;
			break;
		}
		if (PN_ALIGN8(rem) >= PAGE - hdr) {
			at = page + PAGE;
			continue;
		}
		at = page + hdr + PN_ALIGN8(rem);
		break;
	}
	r->next = at;
	r->prev = 0;
	while (read_at(r, r->next, &rec)) {
		if (rec.start >= from) {
			r->next = rec.start;
			r->prev = 0;
			return rec.start;
		}
		r->prev = rec.start;
		r->next = rec.end;
	}
	return 0;
}

/* ---- 7. statistics (XLogRecStoreStats) ----------------------------------------------------- */

void pn_xlr_stats_add(struct pn_xlr_stats *s, const struct pn_xlr_record *rec)
{
	uint8_t recid = rec->info >> 4;
	struct pn_xlr_stat *cell;

	if (rec->rmid == PN_XLR_RM_XACT)
		recid &= 0x07;
	cell = &s->rec[rec->rmid][recid];
	if (s->count == 0)
		s->start = rec->start;
	s->count++;
	s->end = rec->end;
	cell->count++;
	cell->rec_len += rec->tot_len - rec->fpi_len;
	cell->fpi_len += rec->fpi_len;
}

void pn_xlr_stats_name(uint32_t version, uint8_t rmid, uint8_t recid, char *buf, size_t len)
{
	char rm[16];
	const char *id = pn_xlr_identify(version, rmid, (uint8_t)(recid << 4));

	if (id)
		snprintf(buf, len, "%s/%s", pn_xlr_rm_name(rmid, rm, sizeof rm), id);
	else
		snprintf(buf, len, "%s/UNKNOWN (%x)", pn_xlr_rm_name(rmid, rm, sizeof rm),
			 (unsigned)recid << 4);
}

bool pn_xlr_parse_lsn(const char *s, pn_lsn *out)
{
	uint64_t v[2] = {0, 0};
	int part = 0, digits = 0;

	for (; *s; s++) {
		int h = hexval(*s >= 'a' && *s <= 'f' ? (char)(*s - 'a' + 'A') : *s);
		if (*s == '/' && part == 0 && digits > 0) {
			part = 1;
			digits = 0;
			continue;
		}
		if (h < 0 || ++digits > 8)
			return false;
		v[part] = v[part] << 4 | (uint64_t)h;
	}
	if (part != 1 || digits == 0)
		return false;
	*out = v[0] << 32 | v[1];
	return true;
}

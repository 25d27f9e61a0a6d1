/*
 * walread.c: the reader of the WAL's bytes (format layer; walread.h), as PostgreSQL 15's
 * xlogreader.c reads what walfmt.c lays out: a page at a time, validated once for all the
 * records it holds, a record reassembled across pages, then decoded by pn_wal_record_decode.
 * The only memory it allocates is its buffers, in pn_wal_reader_init().
 *
 * Invariants:
 *   WR1. The reader stops at the first of, in PostgreSQL's order: unreadable page, page
 *        header (magic, info bits, long-header fields, pageaddr, timeline), record offset,
 *        xl_tot_len < 24 or too long, rmid, prev-link, contrecord flag and rem_len, CRC,
 *        then the structure of the record.
 *   WR2. A summarized read (pn_wal_reader_parts) decides as the bytes would: record_summary
 *        runs WR1's checks in WR1's order over the bytes the device holds, so a record is
 *        valid, or reading stops with the same message, whether its bytes were read or only
 *        summarized (docs/checker.md).
 *   WR3. Any failure drops the cached page (fail): the next read validates its page again.
 *   WR4. A record that a summarized read found valid (a record of a run, or REC_VALID) had
 *        its CRC checked over the bytes the reader then reads (the device's, unchanged
 *        between the two: recovery writes no WAL while it reads it), so it is decoded
 *        without checking the CRC again (pn_wal_record_decode_checked); any other record is
 *        checked in full. It changes no decision, only the work.
 */
#include "walread.h"

#include "crc32c.h"
#include "env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLCKSZ PN_XLOG_BLCKSZ
#define USABLE_PER_PAGE (PN_XLOG_BLCKSZ - PN_WAL_SHORT_PHD) /* 8168 */
#define XLP_ALL_FLAGS 0x000Fu /* PostgreSQL 15 defines four page-header flags */
#define TIMELINE 1u
#define CRC_COVERED_HEADER 20u /* offsetof(XLogRecord, xl_crc) */

#define LSN_FMT "%X/%08X"
#define LSN_ARGS(lsn) (unsigned)((lsn) >> 32), (unsigned)(lsn)

/* ---- reading pages --------------------------------------------------------------------------- */

/* Records why reading stopped; any failure also drops the cached page. Returns false. */
__attribute__((format(printf, 2, 3))) static bool fail(struct pn_wal_reader *r, const char *fmt,
						       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->page_loaded = false;
	r->crc_checked = 0; /* WR4: what a failed read summarized is summarized again */
	return false;
}

/* PostgreSQL's XLogFileName() for timeline 1, into out (taken only for a message: out). */
static const char *segment_name(char out[32], pn_lsn addr, uint32_t seg_size)
{
	uint64_t segno = addr / seg_size;
	uint64_t segs_per_id = 0x100000000ull / seg_size;

	snprintf(out, 32, "%08X%08X%08X", TIMELINE, (unsigned)(segno / segs_per_id),
		 (unsigned)(segno % segs_per_id));
	return out;
}

static bool check_long_header(struct pn_wal_reader *r, const uint8_t *h)
{
	uint64_t sysid = pn_get64(h + 24);

	if (r->sysid != 0 && sysid != r->sysid)
		return fail(r,
			    "WAL file is from different database system: WAL file database "
			    "system identifier is %llu, pg_control database system identifier "
			    "is %llu",
			    (unsigned long long)sysid, (unsigned long long)r->sysid);
	if (pn_get32(h + 32) != r->seg_size)
		return fail(r, "WAL file is from different database system: incorrect segment "
			       "size in page header");
	if (pn_get32(h + 36) != BLCKSZ)
		return fail(r, "WAL file is from different database system: incorrect "
			       "XLOG_BLCKSZ in page header");
	return true;
}

/* XLogReaderValidatePageHeader's checks, in its order, on r->page read from page_addr. */
static bool check_page_header(struct pn_wal_reader *r, pn_lsn page_addr)
{
	const uint8_t *h = r->page;
	uint32_t magic = pn_get16(h), info = pn_get16(h + 2);
	uint32_t seg_off = (uint32_t)(page_addr % r->seg_size);
	pn_lsn addr = pn_get64(h + 8);
	char seg[32];

	if (magic != PN_WAL_PAGE_MAGIC)
		return fail(r, "invalid magic number %04X in log segment %s, offset %u", magic,
			    segment_name(seg, page_addr, r->seg_size), seg_off);
	/* LONG_HEADER exactly on a segment's first page (PostgreSQL checks one direction). */
	if ((info & ~XLP_ALL_FLAGS) != 0 || ((info & PN_XLP_LONG_HEADER) != 0) != (seg_off == 0))
		return fail(r, "invalid info bits %04X in log segment %s, offset %u", info,
			    segment_name(seg, page_addr, r->seg_size), seg_off);
	if ((info & PN_XLP_LONG_HEADER) && !check_long_header(r, h))
		return false;
	if (addr != page_addr)
		return fail(r, "unexpected pageaddr " LSN_FMT " in log segment %s, offset %u",
			    LSN_ARGS(addr), segment_name(seg, page_addr, r->seg_size), seg_off);
	if (pn_get32(h + 4) != TIMELINE)
		return fail(r, "unexpected timeline ID %u in log segment %s, offset %u",
			    pn_get32(h + 4), segment_name(seg, page_addr, r->seg_size), seg_off);
	return true;
}

/* Bytes [0, n) of the page at r->page_addr in r->page (with read_part, what is not yet). */
static bool page_bytes(struct pn_wal_reader *r, uint32_t n)
{
	if (n <= r->page_have)
		return true;
	if (!r->read_part(r->arg, r->page_addr + r->page_have, n - r->page_have,
			  r->page + r->page_have))
		return fail(r, "could not read WAL page at " LSN_FMT, LSN_ARGS(r->page_addr));
	r->page_have = n;
	return true;
}

/* Reads and validates the page at page_addr into r->page, unless it is already there (with
 * read_part: only its header, page_bytes() reads on). */
static bool load_page(struct pn_wal_reader *r, pn_lsn page_addr)
{
	if (r->page_loaded && r->page_addr == page_addr)
		return true;
	r->page_loaded = false;
	r->page_addr = page_addr;
	r->page_have = 0;
	r->run_start = r->run_end = 0;
	if (r->read_part == NULL) {
		if (!r->read(r->arg, page_addr, r->page))
			return fail(r, "could not read WAL page at " LSN_FMT, LSN_ARGS(page_addr));
		r->page_have = BLCKSZ;
	} else if (!page_bytes(r, pn_wal_page_header_size(page_addr, r->seg_size))) {
		return false;
	}
	if (!check_page_header(r, page_addr))
		return false;
	r->page_loaded = true;
	return true;
}

/* What record_summary() finds at a record's start: v[0] = the kind | detail << 16. */
enum rec_found {
	REC_UNDECIDED, /* a valid header whose record goes past the bytes summarized; v[1]: xl_tot_len */
	REC_VALID, /* v[1]: xl_tot_len */
	REC_SHORT, /* v[1]: xl_tot_len */
	REC_LONG,  /* v[1]: xl_tot_len */
	REC_RMID,  /* v[1]: xl_rmid */
	REC_PREV,  /* v[1]: xl_prev */
	/* a continuation page (detail: its offset from the start << 8 | which check failed,
	 * check_page_header()'s order) */
	REC_MAGIC,    /* v[1]: xlp_magic */
	REC_INFO,     /* v[1]: xlp_info */
	REC_PAGEADDR, /* v[1]: xlp_pageaddr */
	REC_TIMELINE, /* v[1]: xlp_tli */
	REC_CONTRECORD,
	REC_REM_LEN, /* detail: the length expected; v[1]: xlp_rem_len */
	REC_CRC,
};

static struct pn_summary_value found(enum rec_found f, uint64_t detail, uint64_t v)
{
	return (struct pn_summary_value){{f | detail << 16, v}};
}

/* check_record_header(), read_continuation()'s checks (check_page_header() of a page inside
 * the segment, the contrecord flag and length) and pn_wal_record_decode()'s CRC check over the
 * bytes from a record's start, as a summary (DV8): the reader's decision whether a valid
 * record starts there, without its bytes. arg: the reader's prev, the start, rec_cap | the
 * segment size << 32; the bytes stay inside the start's segment. */
static struct pn_summary_value record_summary(const uint8_t *h, uint32_t len, const uint64_t *arg)
{
	uint32_t tot_len = pn_get32(h), rec_cap = (uint32_t)arg[2];
	uint32_t seg_size = (uint32_t)(arg[2] >> 32);
	pn_lsn prev = pn_get64(h + 8), start = arg[1];
	uint32_t here = BLCKSZ - (uint32_t)(start % BLCKSZ);
	PN_ASSERT(len >= PN_WAL_RECORD_HEADER && here >= PN_WAL_RECORD_HEADER);
	if (tot_len < PN_WAL_RECORD_HEADER)
		return found(REC_SHORT, 0, tot_len);
	if (tot_len > rec_cap)
		return found(REC_LONG, 0, tot_len);
	if (h[17] > PN_RM_MAX)
		return found(REC_RMID, 0, h[17]);
	if (arg[0] != 0 ? prev != arg[0] : prev >= start)
		return found(REC_PREV, 0, prev);
	uint32_t crc = pn_crc32c_init(), got = PN_MIN(here, tot_len), at = here;
	if (len < got)
		return found(REC_UNDECIDED, 0, tot_len);
	crc = pn_crc32c_update(crc, h + PN_WAL_RECORD_HEADER, got - PN_WAL_RECORD_HEADER);
	while (got < tot_len) {
		pn_lsn page_addr = start + at;
		const uint8_t *ph = h + at;
		uint32_t n = PN_MIN(USABLE_PER_PAGE, tot_len - got);
		if (len < at + PN_WAL_SHORT_PHD + n)
			return found(REC_UNDECIDED, 0, tot_len);
		PN_ASSERT(page_addr % seg_size != 0);
		uint32_t info = pn_get16(ph + 2), rem_len = pn_get32(ph + 16);
		if (pn_get16(ph) != PN_WAL_PAGE_MAGIC)
			return found(REC_MAGIC, at, pn_get16(ph));
		if ((info & ~XLP_ALL_FLAGS) != 0 || (info & PN_XLP_LONG_HEADER))
			return found(REC_INFO, at, info);
		if (pn_get64(ph + 8) != page_addr)
			return found(REC_PAGEADDR, at, pn_get64(ph + 8));
		if (pn_get32(ph + 4) != TIMELINE)
			return found(REC_TIMELINE, at, pn_get32(ph + 4));
		if (!(info & PN_XLP_FIRST_IS_CONTRECORD))
			return found(REC_CONTRECORD, 0, 0);
		if (rem_len == 0 || rem_len != tot_len - got)
			return found(REC_REM_LEN, tot_len - got, rem_len);
		crc = pn_crc32c_update(crc, ph + PN_WAL_SHORT_PHD, n);
		got += n;
		at += BLCKSZ;
	}
	crc = pn_crc32c_final(pn_crc32c_update(crc, h, CRC_COVERED_HEADER));
	return pn_get32(h + 20) == crc ? found(REC_VALID, 0, tot_len) : found(REC_CRC, 0, 0);
}

/* record_summary() of the records from a start to the end of its page, one after another
 * while each is valid and ends on the page (arg as there): v[0] = the kind of the first
 * that is not (REC_UNDECIDED also when the page ends) | its offset from the start << 16, v[1]
 * its value. One summary and one byte range a page, not one of each a record. */
static struct pn_summary_value run_summary(const uint8_t *h, uint32_t len, const uint64_t *arg)
{
	uint64_t a[PN_SUMMARY_ARGS] = {arg[0], arg[1], arg[2]};
	uint32_t pos = 0;
	struct pn_summary_value v = {{REC_UNDECIDED, 0}};
	while (len - pos >= PN_WAL_RECORD_HEADER) {
		v = record_summary(h + pos, len - pos, a);
		if (v.v[0] != REC_VALID)
			break;
		a[0] = a[1];
		a[1] += PN_ALIGN8(v.v[1]);
		pos += (uint32_t)PN_ALIGN8(v.v[1]);
		v = (struct pn_summary_value){{REC_UNDECIDED, 0}};
	}
	PN_ASSERT((v.v[0] >> 16) == 0 && pos <= len);
	return (struct pn_summary_value){{v.v[0] | (uint64_t)pos << 16, v.v[1]}};
}

/* The bytes from a record's start (off on its page) to its end, page headers included, or
 * 0 when it enters another segment. */
static uint32_t record_span(pn_lsn start, uint32_t off, uint32_t tot_len, uint32_t seg_size)
{
	uint32_t span = PN_MIN(BLCKSZ - off, tot_len), got = span;
	while (got < tot_len) {
		uint32_t n = PN_MIN(USABLE_PER_PAGE, tot_len - got);
		if ((start + span) % seg_size == 0) /* the next page's address */
			return 0;
		span += PN_WAL_SHORT_PHD + n;
		got += n;
	}
	return span;
}

/* With summarize: how many bytes of the page the record at start (off on the page, its
 * header whole there) needs read, 0 (and r->why, the byte path's) when no valid record
 * starts there. The run of valid records from start to the page's end first (run_summary;
 * its bytes are read at once), then, for the record that ends it with a valid header, one
 * over that record's span. A record that enters another segment, or a summarized read that
 * fails, is left to the bytes. */
static uint32_t summarized_need(struct pn_wal_reader *r, pn_lsn start, uint32_t off)
{
	struct pn_summary s = {.fn = run_summary,
			       .arg = {r->prev, start, r->rec_cap | (uint64_t)r->seg_size << 32}};
	struct pn_summary_value v = {{REC_UNDECIDED, 0}};
	uint32_t span = 0;
	if (!(r->run_end != 0 && r->run_start <= start && start <= r->run_end)) {
		if (!r->summarize(r->arg, start, BLCKSZ - off, &s, &v))
			return BLCKSZ; /* the bytes say which page could not be read */
		r->run_start = start;
		r->run_end = start + (v.v[0] >> 16);
		r->run_stop = (struct pn_summary_value){{v.v[0] & 0xFFFFu, v.v[1]}};
		if (!page_bytes(r, (uint32_t)(r->run_end - r->page_addr)))
			return 0;
	}
	if (start < r->run_end) {       /* a valid record of the run: its bytes are read */
		r->crc_checked = start; /* WR4 */
		return off + pn_get32(r->page + off);
	}
	v = r->run_stop;
	s.fn = record_summary;
	if (v.v[0] == REC_UNDECIDED) {
		span = record_span(start, off, (uint32_t)v.v[1], r->seg_size);
		if (span == 0 || !r->summarize(r->arg, start, span, &s, &v))
			return BLCKSZ;
	}
	uint64_t detail = v.v[0] >> 16;
	pn_lsn page = start + detail; /* a continuation page's address */
	char seg[32];
	switch ((enum rec_found)(v.v[0] & 0xFFFFu)) {
	case REC_UNDECIDED: PN_ASSERT(false); return 0;
	case REC_VALID:
		r->crc_checked = start; /* WR4 */
		return v.v[1] > BLCKSZ - off ? BLCKSZ : off + (uint32_t)v.v[1];
	case REC_SHORT:
		return fail(r, "invalid record length at " LSN_FMT ": wanted %u, got %u",
			    LSN_ARGS(start), PN_WAL_RECORD_HEADER, (unsigned)v.v[1]);
	case REC_LONG:
		return fail(r, "record length %u at " LSN_FMT " too long", (unsigned)v.v[1],
			    LSN_ARGS(start));
	case REC_RMID:
		return fail(r, "invalid resource manager ID %u at " LSN_FMT, (unsigned)v.v[1],
			    LSN_ARGS(start));
	case REC_PREV:
		return fail(r, "record with incorrect prev-link " LSN_FMT " at " LSN_FMT,
			    LSN_ARGS(v.v[1]), LSN_ARGS(start));
	case REC_MAGIC:
		return fail(r, "invalid magic number %04X in log segment %s, offset %u",
			    (unsigned)v.v[1], segment_name(seg, page, r->seg_size),
			    (unsigned)(page % r->seg_size));
	case REC_INFO:
		return fail(r, "invalid info bits %04X in log segment %s, offset %u",
			    (unsigned)v.v[1], segment_name(seg, page, r->seg_size),
			    (unsigned)(page % r->seg_size));
	case REC_PAGEADDR:
		return fail(r, "unexpected pageaddr " LSN_FMT " in log segment %s, offset %u",
			    LSN_ARGS(v.v[1]), segment_name(seg, page, r->seg_size),
			    (unsigned)(page % r->seg_size));
	case REC_TIMELINE:
		return fail(r, "unexpected timeline ID %u in log segment %s, offset %u",
			    (unsigned)v.v[1], segment_name(seg, page, r->seg_size),
			    (unsigned)(page % r->seg_size));
	case REC_CONTRECORD:
		return fail(r, "there is no contrecord flag at " LSN_FMT, LSN_ARGS(start));
	case REC_REM_LEN:
		return fail(r, "invalid contrecord length %u (expected %lld) at " LSN_FMT,
			    (unsigned)v.v[1], (long long)detail, LSN_ARGS(start));
	case REC_CRC:
		return fail(r, "incorrect resource manager data checksum in record at " LSN_FMT,
			    LSN_ARGS(start));
	}
	PN_ASSERT(false);
	return 0;
}

/* ValidXLogRecordHeader; `whole` false checks only xl_tot_len (the rest is on the next page). */
static bool check_record_header(struct pn_wal_reader *r, const uint8_t *h, pn_lsn start, bool whole)
{
	uint32_t tot_len = pn_get32(h);

	if (tot_len < PN_WAL_RECORD_HEADER)
		return fail(r, "invalid record length at " LSN_FMT ": wanted %u, got %u",
			    LSN_ARGS(start), PN_WAL_RECORD_HEADER, tot_len);
	if (tot_len > r->rec_cap)
		return fail(r, "record length %u at " LSN_FMT " too long", tot_len,
			    LSN_ARGS(start));
	if (!whole)
		return true;
	if (h[17] > PN_RM_MAX)
		return fail(r, "invalid resource manager ID %u at " LSN_FMT, h[17],
			    LSN_ARGS(start));
	pn_lsn prev = pn_get64(h + 8);
	if (r->prev != 0 ? prev != r->prev : prev >= start)
		return fail(r, "record with incorrect prev-link " LSN_FMT " at " LSN_FMT,
			    LSN_ARGS(prev), LSN_ARGS(start));
	return true;
}

/* The record's start: r->next, moved past the header if it is a page boundary. */
static bool locate_start(struct pn_wal_reader *r, pn_lsn *start)
{
	pn_lsn next = r->next;
	uint32_t in_page = (uint32_t)(next % BLCKSZ);
	uint32_t hdr = pn_wal_page_header_size(next - in_page, r->seg_size);

	if (in_page == 0)
		next += hdr;
	else if (in_page < hdr || next % 8 != 0)
		return fail(r, "invalid record offset at " LSN_FMT, LSN_ARGS(next));
	*start = next;
	return true;
}

/* Appends the rest of a record that continues past its first page to r->rec. */
static bool read_continuation(struct pn_wal_reader *r, pn_lsn start, pn_lsn page_addr, uint32_t got,
			      uint32_t tot_len)
{
	while (got < tot_len) {
		page_addr += BLCKSZ;
		if (!load_page(r, page_addr))
			return false;
		uint32_t info = pn_get16(r->page + 2), rem_len = pn_get32(r->page + 16);
		if (!(info & PN_XLP_FIRST_IS_CONTRECORD))
			return fail(r, "there is no contrecord flag at " LSN_FMT, LSN_ARGS(start));
		if (rem_len == 0 || rem_len != tot_len - got)
			return fail(r, "invalid contrecord length %u (expected %lld) at " LSN_FMT,
				    rem_len, (long long)(tot_len - got), LSN_ARGS(start));
		uint32_t hdr = pn_wal_page_header_size(page_addr, r->seg_size);
		uint32_t n = PN_MIN(BLCKSZ - hdr, tot_len - got);
		if (!page_bytes(r, hdr + n))
			return false;
		memcpy(r->rec + got, r->page + hdr, n);
		got += n;
	}
	return true;
}

/* Finds the record's bytes: in the cached page if it fits there, else assembled in r->rec. */
static const uint8_t *read_record_bytes(struct pn_wal_reader *r, pn_lsn start)
{
	pn_lsn page_addr = start - start % BLCKSZ;
	uint32_t off = (uint32_t)(start % BLCKSZ);

	if (!load_page(r, page_addr))
		return NULL;
	if (off == pn_wal_page_header_size(page_addr, r->seg_size) &&
	    (pn_get16(r->page + 2) & PN_XLP_FIRST_IS_CONTRECORD)) {
		fail(r, "contrecord is requested by " LSN_FMT, LSN_ARGS(start));
		return NULL;
	}
	const uint8_t *h = r->page + off;
	uint32_t avail = BLCKSZ - off;
	bool whole_header = avail >= PN_WAL_RECORD_HEADER;
	uint32_t need = BLCKSZ;
	if (r->summarize != NULL && whole_header && (need = summarized_need(r, start, off)) == 0)
		return NULL;
	if (!page_bytes(r, need))
		return NULL;
	PN_TESTCASE("wal record header split across pages", !whole_header);
	if (!check_record_header(r, h, start, whole_header))
		return NULL;
	uint32_t tot_len = pn_get32(h);
	if (tot_len <= avail)
		return h;
	memcpy(r->rec, h, avail);
	if (!read_continuation(r, start, page_addr, avail, tot_len))
		return NULL;
	if (!whole_header && !check_record_header(r, r->rec, start, true))
		return NULL;
	return r->rec;
}

bool pn_wal_read_next(struct pn_wal_reader *r, struct pn_wal_record *rec, pn_lsn *start,
		      pn_lsn *end)
{
	pn_lsn at = 0;
	char why[sizeof(r->why) - 24];

	if (!locate_start(r, &at))
		return false;
	const uint8_t *bytes = read_record_bytes(r, at);
	if (bytes == NULL)
		return false;
	uint32_t tot_len = pn_get32(bytes);
	bool checked = r->summarize != NULL && r->crc_checked == at && at != 0; /* WR4 */
	r->crc_checked = 0;
	if (!(checked ? pn_wal_record_decode_checked
		      : pn_wal_record_decode)(bytes, tot_len, r->page_size, r->images, rec, why,
					      sizeof(why)))
		return fail(r, "%s at " LSN_FMT, why, LSN_ARGS(at));

	uint64_t end_bytepos = pn_wal_recptr_to_bytepos(at, r->seg_size) + PN_ALIGN8(tot_len);
	*start = at;
	*end = pn_wal_bytepos_to_endrecptr(end_bytepos, r->seg_size);
	r->next = pn_wal_bytepos_to_recptr(end_bytepos, r->seg_size);
	r->prev = at;
	r->why[0] = '\0';
	return true;
}

bool pn_wal_reader_init(struct pn_wal_reader *r, pn_lsn start, pn_lsn prev, uint32_t seg_size,
			uint32_t page_size, uint32_t max_record, uint64_t sysid,
			pn_wal_read_fn read, void *arg)
{
	PN_ASSERT(seg_size >= BLCKSZ && (seg_size & (seg_size - 1)) == 0);
	PN_ASSERT(max_record >= PN_WAL_RECORD_HEADER && read != NULL);
	PN_ASSERT(page_size > 0 && page_size <= UINT16_MAX);
	memset(r, 0, sizeof(*r));
	r->seg_size = seg_size;
	r->page_size = page_size;
	r->sysid = sysid;
	r->read = read;
	r->arg = arg;
	r->next = start;
	r->prev = prev;
	r->page = malloc(BLCKSZ);
	r->rec = pn_big_alloc(max_record);
	r->rec_cap = max_record;
	r->images = pn_big_alloc((size_t)PN_WAL_MAX_BLOCKS * page_size);
	if (r->page == NULL || r->rec == NULL || r->images == NULL) {
		pn_wal_reader_free(r);
		return false;
	}
	return true;
}

void pn_wal_reader_parts(struct pn_wal_reader *r, pn_wal_part_fn part, pn_wal_summary_fn summarize)
{
	PN_ASSERT(part != NULL && summarize != NULL);
	r->read_part = part;
	r->summarize = summarize;
	r->page_loaded = false;
}

void pn_wal_reader_seek(struct pn_wal_reader *r, pn_lsn next, pn_lsn prev)
{
	r->next = next;
	r->prev = prev;
	r->page_loaded = false;
	r->run_start = r->run_end = 0;
	r->crc_checked = 0;
	r->why[0] = '\0';
}

void pn_wal_reader_free(struct pn_wal_reader *r)
{
	free(r->page);
	pn_big_free(r->rec, r->rec_cap);
	pn_big_free(r->images, (size_t)PN_WAL_MAX_BLOCKS * r->page_size);
	r->page = NULL;
	r->rec = NULL;
	r->images = NULL;
	r->rec_cap = 0;
	r->page_loaded = false;
}

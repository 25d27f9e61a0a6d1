/*
 * test_walread.c: WAL written by the encoder (src/format/walfmt.c) into an in-memory WAL of
 * segments, copied and read back by the reader (src/format/walread.c): every record at its
 * position, page headers, a read from mid-page, and where the WAL ends (a zeroed tail, a
 * recycled segment, a torn record, a wrong prev-link, a missing page, damaged headers),
 * each read both ways (docs/checker.md). Label: unit. Shared fixture: walfmt_fixture.h.
 */
#include "walfmt_fixture.h"

/* ---- an in-memory WAL -------------------------------------------------------------------- */

#define MEM_SEGS 4
#define MAX_RECS 8192

struct wal {
	uint32_t seg_size;
	uint8_t *bytes;   /* LSNs [seg_size, (MEM_SEGS + 1) * seg_size): segments 1 .. 4 */
	pn_lsn missing;   /* a page the read callback refuses (0: none) */
	uint64_t bytepos; /* where the next record goes */
	pn_lsn prev;
	unsigned n;
	pn_lsn start[MAX_RECS], end[MAX_RECS];
	uint32_t len[MAX_RECS], crc[MAX_RECS];
	uint8_t rec[5 * PAGE];
};

static uint8_t *wal_at(struct wal *w, pn_lsn lsn)
{
	ck_assert(lsn >= w->seg_size && lsn < (MEM_SEGS + 1ull) * w->seg_size);
	return w->bytes + (lsn - w->seg_size);
}

static uint8_t *wal_page(void *arg, pn_lsn page_addr)
{
	ck_assert(page_addr % PAGE == 0);
	return wal_at(arg, page_addr);
}

/* pn_wal_reader_parts()'s callbacks over the same bytes: every byte range read and every
 * summary taken is kept, to show what the reader read as bytes. */
static struct {
	pn_lsn read_end; /* the end of the last byte range read */
	pn_lsn read_max; /* the highest end of a byte range read */
	unsigned summaries;
	struct pn_summary_value last; /* the last summary's value */
	uint8_t *flip_after;          /* a byte flipped once the next summary is taken */
} parts;

static bool wal_read(void *arg, pn_lsn page_addr, uint8_t *out)
{
	struct wal *w = arg;
	ck_assert(page_addr % PAGE == 0);
	if (page_addr == w->missing || page_addr < w->seg_size ||
	    page_addr >= (MEM_SEGS + 1ull) * w->seg_size)
		return false;
	memcpy(out, wal_at(w, page_addr), PAGE);
	if (page_addr + PAGE > parts.read_max)
		parts.read_max = page_addr + PAGE;
	return true;
}

static bool wal_part(void *arg, pn_lsn addr, uint32_t len, uint8_t *out)
{
	struct wal *w = arg;
	pn_lsn page = addr - addr % PAGE;
	ck_assert(len > 0 && addr % PAGE + len <= PAGE);
	if (page == w->missing || page < w->seg_size || page >= (MEM_SEGS + 1ull) * w->seg_size)
		return false;
	memcpy(out, wal_at(w, addr), len);
	parts.read_end = addr + len;
	if (parts.read_end > parts.read_max)
		parts.read_max = parts.read_end;
	return true;
}

static bool wal_summarize(void *arg, pn_lsn addr, uint32_t len, const struct pn_summary *s,
			  struct pn_summary_value *out)
{
	struct wal *w = arg;
	pn_lsn page = addr - addr % PAGE;
	for (pn_lsn p = page; p < addr + len; p += PAGE)
		if (p == w->missing || p < w->seg_size || p >= (MEM_SEGS + 1ull) * w->seg_size)
			return false;
	*out = s->fn(wal_at(w, addr), len, s->arg);
	parts.summaries++;
	parts.last = *out;
	if (parts.flip_after) {
		*parts.flip_after ^= 0x5A;
		parts.flip_after = NULL;
	}
	return true;
}

static struct wal *wal_new(uint32_t seg_size)
{
	struct wal *w = calloc(1, sizeof(*w));
	ck_assert(w != NULL);
	w->seg_size = seg_size;
	w->bytes = calloc(MEM_SEGS, seg_size);
	ck_assert(w->bytes != NULL);
	w->bytepos = pn_wal_recptr_to_bytepos(seg_size, seg_size);
	return w;
}

static void wal_free(struct wal *w)
{
	free(w->bytes);
	free(w);
}

/* Appends r as the WAL module would: reserve MAXALIGN(len) usable bytes, copy, link. */
static unsigned wal_append(struct wal *w, struct pn_wal_record r)
{
	ck_assert_uint_lt(w->n, MAX_RECS);
	unsigned i = w->n++;
	r.prev = w->prev;
	w->len[i] = pn_wal_record_encode(&r, PAGE, w->rec);
	w->crc[i] = pn_crc32c(w->rec, w->len[i]);
	w->start[i] = pn_wal_bytepos_to_recptr(w->bytepos, w->seg_size);
	pn_wal_copy_record(w->rec, w->len[i], w->start[i], w->seg_size, SYSID, wal_page, w);
	w->bytepos += PN_ALIGN8(w->len[i]);
	w->end[i] = pn_wal_bytepos_to_endrecptr(w->bytepos, w->seg_size);
	w->prev = w->start[i];
	return i;
}

static pn_lsn wal_next_start(const struct wal *w)
{
	return pn_wal_bytepos_to_recptr(w->bytepos, w->seg_size);
}

/* Fills with NOOP records so that the next record starts at `target`. */
static void wal_pad_to(struct wal *w, pn_lsn target)
{
	uint64_t goal = pn_wal_recptr_to_bytepos(target, w->seg_size);
	ck_assert(goal >= w->bytepos);
	uint64_t left = goal - w->bytepos;
	ck_assert(left == 0 || left >= 32);
	while (left > 0) {
		uint64_t chunk = PN_MIN(left, 32768);
		if (left - chunk > 0 && left - chunk < 32)
			chunk -= 32;
		wal_append(w, rec_filler((uint32_t)chunk));
		left -= chunk;
	}
	ck_assert(wal_next_start(w) == target);
}

/* The next LSN at page offset `off` leaving room for a filler (off >= 40). */
static pn_lsn at_page_offset(const struct wal *w, uint32_t off)
{
	pn_lsn s = wal_next_start(w);
	pn_lsn t = s - s % PAGE + off;
	if (t != s && t < s + 32)
		t += PAGE;
	return t;
}

struct layout {
	unsigned commit, fpi, hole, four, split_header, exact_header, page_end, after_page_end;
	unsigned seg_end, after_seg_end, cross_seg, last;
};

/*
 * The standard WAL of the reader tests: typical records, a record header split across
 * pages, a record ending exactly at a page end and one at a segment end, records crossing
 * pages and a segment boundary. Starts at segment 1, prev 0.
 */
static struct layout wal_build(struct wal *w)
{
	struct layout l;
	struct pn_wal_record hot = rec_hot_update(9);
	hot.blocks[0].has_shift = true;

	l.commit = wal_append(w, rec_commit());
	wal_append(w, rec_checkpoint());
	wal_append(w, hot);
	l.fpi = wal_append(w, rec_fpi(0, 0));
	l.hole = wal_append(w, rec_fpi(408, 112));
	wal_append(w, rec_visible());
	l.four = wal_append(w, rec_four());
	wal_pad_to(w, at_page_offset(w, PAGE - 8));
	l.split_header = wal_append(w, rec_commit());
	wal_pad_to(w, at_page_offset(w, PAGE - 24));
	l.exact_header = wal_append(w, rec_commit());
	wal_pad_to(w, at_page_offset(w, PAGE - (8248 - 8168))); /* 8241 -> 8248 */
	l.page_end = wal_append(w, rec_fpi(0, 0));
	l.after_page_end = wal_append(w, rec_commit());
	pn_lsn seg_end = wal_next_start(w) - wal_next_start(w) % w->seg_size + w->seg_size;
	wal_pad_to(w, seg_end - 40);
	l.seg_end = wal_append(w, rec_commit());
	l.after_seg_end = wal_append(w, rec_checkpoint());
	wal_pad_to(w, seg_end + w->seg_size - PAGE + 4000);
	l.cross_seg = wal_append(w, rec_fpi(0, 0));
	wal_append(w, hot);
	l.last = wal_append(w, rec_commit());
	return l;
}

static void check_layout(const struct wal *w, const struct layout *l)
{
	ck_assert_uint_eq(w->start[l->split_header] % PAGE, PAGE - 8);
	ck_assert_uint_eq(w->start[l->exact_header] % PAGE, PAGE - 24);
	ck_assert(w->end[l->page_end] % PAGE == 0);
	ck_assert(w->end[l->page_end] - w->start[l->page_end] > PAGE);
	ck_assert(w->start[l->after_page_end] == w->end[l->page_end] + 24);
	ck_assert(w->end[l->seg_end] % w->seg_size == 0);
	ck_assert(w->start[l->after_seg_end] == w->end[l->seg_end] + 40);
	ck_assert(w->start[l->cross_seg] / w->seg_size != (w->end[l->cross_seg] - 1) / w->seg_size);
	ck_assert(w->end[l->last] % PAGE != 0);
}

static void reader_open(struct pn_wal_reader *r, struct wal *w, uint32_t max_record)
{
	ck_assert(pn_wal_reader_init(r, w->start[0], 0, w->seg_size, PAGE, max_record, SYSID,
				     wal_read, w));
}

/* Reads records from r, checking each against the writer; returns how many it read. */
static unsigned read_all(struct pn_wal_reader *r, struct wal *w, unsigned first)
{
	static uint8_t again[5 * PAGE];
	struct pn_wal_record rec;
	pn_lsn start, end;
	unsigned i = first;

	while (pn_wal_read_next(r, &rec, &start, &end)) {
		ck_assert_uint_lt(i, w->n);
		ck_assert_msg(start == w->start[i] && end == w->end[i],
			      "record %u: read %X/%08X-%X/%08X, wrote %X/%08X-%X/%08X", i,
			      HI(start), LO(start), HI(end), LO(end), HI(w->start[i]),
			      LO(w->start[i]), HI(w->end[i]), LO(w->end[i]));
		/* Re-encoding what was decoded gives the written bytes back. */
		ck_assert_uint_eq(pn_wal_record_encode(&rec, PAGE, again), w->len[i]);
		ck_assert_uint_eq(pn_crc32c(again, w->len[i]), w->crc[i]);
		ck_assert(r->prev == start &&
			  r->next == pn_wal_bytepos_to_recptr(pn_wal_recptr_to_bytepos(end,
										       w->seg_size),
							      w->seg_size));
		i++;
	}
	return i - first;
}

static const char *fmt(const char *f, pn_lsn a, pn_lsn b)
{
	static char out[200];
	snprintf(out, sizeof(out), f, HI(a), LO(a), HI(b), LO(b));
	return out;
}

/* ---- copy and read ---------------------------------------------------------------------- */

START_TEST(test_copy_read_all)
{
	static const uint32_t seg_sizes[] = {KIB64, MIB16};
	struct wal *w = wal_new(seg_sizes[_i]);
	struct layout l = wal_build(w);
	struct pn_wal_reader r;

	check_layout(w, &l);
	reader_open(&r, w, 64 * 1024);
	ck_assert_uint_eq(read_all(&r, w, 0), w->n);
	ck_assert_str_eq(r.why, fmt("invalid record length at %X/%08X: wanted 24, got 0",
				    wal_next_start(w), 0));
	/* More WAL after the end: reading resumes where it stopped. */
	ck_assert(r.next == wal_next_start(w));
	unsigned more = w->n;
	wal_append(w, rec_fpi(100, 50));
	wal_append(w, rec_commit());
	ck_assert_uint_eq(read_all(&r, w, more), 2);
	/* Starting again at a record's page boundary works too (the header is skipped). */
	pn_lsn boundary = w->start[l.after_page_end] - 24;
	pn_wal_reader_seek(&r, boundary, w->start[l.page_end]);
	ck_assert_uint_eq(read_all(&r, w, l.after_page_end), w->n - l.after_page_end);
	pn_wal_reader_free(&r);
	wal_free(w);
}
END_TEST

START_TEST(test_copy_page_headers)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);

	for (pn_lsn p = KIB64; p < w->end[l.last]; p += PAGE) {
		const uint8_t *h = wal_at(w, p);
		bool is_long = p % KIB64 == 0;
		ck_assert_uint_eq(pn_get16(h), PN_WAL_PAGE_MAGIC);
		ck_assert_uint_eq(pn_get16(h + 2) & PN_XLP_LONG_HEADER,
				  is_long ? PN_XLP_LONG_HEADER : 0);
		ck_assert_uint_eq(pn_get32(h + 4), 1);
		ck_assert(pn_get64(h + 8) == p);
		ck_assert_uint_eq(pn_get32(h + 20), 0);
		if (is_long) {
			ck_assert(pn_get64(h + 24) == SYSID);
			ck_assert_uint_eq(pn_get32(h + 32), KIB64);
			ck_assert_uint_eq(pn_get32(h + 36), PAGE);
		}
		/* Which record covers the page start, and how much of it is left there? */
		uint32_t rem = 0;
		for (unsigned i = 0; i < w->n; i++) {
			uint64_t b = pn_wal_recptr_to_bytepos(w->start[i], KIB64);
			uint64_t at = pn_wal_recptr_to_bytepos(p, KIB64);
			if (w->start[i] < p && b + w->len[i] > at)
				rem = (uint32_t)(b + w->len[i] - at);
		}
		ck_assert_uint_eq(pn_get32(h + 16), rem);
		ck_assert_uint_eq(pn_get16(h + 2) & PN_XLP_FIRST_IS_CONTRECORD,
				  rem ? PN_XLP_FIRST_IS_CONTRECORD : 0);
	}
	/* MAXALIGN padding after a record and the unused tail of the last page are zero. */
	pn_lsn tail = pn_wal_bytepos_to_recptr(pn_wal_recptr_to_bytepos(w->start[l.last], KIB64) +
						       w->len[l.last],
					       KIB64);
	for (pn_lsn a = tail; a % PAGE != 0; a++)
		EXPECT(*wal_at(w, a) == 0);
	wal_free(w);
}
END_TEST

START_TEST(test_page_init)
{
	static uint8_t page[PAGE];
	memset(page, 0xAB, sizeof(page));
	pn_wal_page_init(page, 3ull * KIB64, KIB64, SYSID);
	ck_assert_uint_eq(pn_get16(page), 0xD110);
	ck_assert_uint_eq(pn_get16(page + 2), PN_XLP_LONG_HEADER);
	ck_assert(pn_get64(page + 8) == 3ull * KIB64);
	ck_assert_uint_eq(pn_get32(page + 16), 0);
	ck_assert(pn_get64(page + 24) == SYSID);
	for (uint32_t i = 40; i < PAGE; i++)
		EXPECT(page[i] == 0);
	memset(page, 0xAB, sizeof(page));
	pn_wal_page_init(page, 3ull * KIB64 + PAGE, KIB64, SYSID);
	ck_assert_uint_eq(pn_get16(page + 2), 0);
	for (uint32_t i = 20; i < PAGE; i++)
		EXPECT(page[i] == 0);
}
END_TEST

static uint8_t *one_page(void *arg, pn_lsn page_addr)
{
	ck_assert(page_addr == 2 * PAGE);
	return arg;
}

/* A record placed mid-page leaves what precedes it alone and zeroes its MAXALIGN padding. */
START_TEST(test_copy_mid_page)
{
	static uint8_t page[PAGE], rec[64];
	struct pn_wal_record r = rec_commit(); /* 34 bytes, 6 of padding */
	uint32_t n = pn_wal_record_encode(&r, PAGE, rec);

	memset(page, 0xAB, sizeof(page));
	pn_wal_copy_record(rec, n, 2 * PAGE + 1000, KIB64, SYSID, one_page, page);
	ck_assert(memcmp(page + 1000, rec, n) == 0);
	for (uint32_t i = 1000 + n; i < 1040; i++)
		ck_assert_uint_eq(page[i], 0);
	ck_assert_uint_eq(page[1040], 0xAB);
	ck_assert_uint_eq(page[999], 0xAB);
	ck_assert_uint_eq(page[0], 0xAB); /* not entered: its header is not rewritten */
	/* Entered at the header's end: header written, the rest of the page zeroed. */
	memset(page, 0xAB, sizeof(page));
	pn_wal_copy_record(rec, n, 2 * PAGE + 24, KIB64, SYSID, one_page, page);
	ck_assert_uint_eq(pn_get16(page), PN_WAL_PAGE_MAGIC);
	ck_assert_uint_eq(pn_get16(page + 2), 0);
	ck_assert_uint_eq(pn_get32(page + 16), 0);
	ck_assert(memcmp(page + 24, rec, n) == 0);
	for (uint32_t i = 24 + n; i < PAGE; i++)
		EXPECT(page[i] == 0);
}
END_TEST

/* ---- end of WAL ----------------------------------------------------------------------------- */

/* Reads the (damaged) WAL from its start, in parts and summaries (pn_wal_reader_parts) or in
 * whole pages: returns the count, r->why in why. */
static unsigned read_mode(struct wal *w, uint32_t max_record, uint64_t sysid, char *why,
			  bool in_parts)
{
	struct pn_wal_reader r;
	ck_assert(pn_wal_reader_init(&r, w->start[0], 0, w->seg_size, PAGE, max_record, sysid,
				     wal_read, w));
	memset(&parts, 0, sizeof(parts));
	if (in_parts)
		pn_wal_reader_parts(&r, wal_part, wal_summarize);
	unsigned n = read_all(&r, w, 0);
	strcpy(why, r.why);
	pn_wal_reader_free(&r);
	return n;
}

/* Both ways, which must agree on where and why the WAL ends: returns the count, r->why. */
static unsigned read_damaged(struct wal *w, uint32_t max_record, uint64_t sysid, char *why)
{
	char whole[160];
	unsigned n = read_mode(w, max_record, sysid, whole, false);
	ck_assert_uint_eq(read_mode(w, max_record, sysid, why, true), n);
	ck_assert_str_eq(why, whole);
	return n;
}

START_TEST(test_end_zeroed_tail)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160];
	unsigned k = l.hole + 1; /* starts mid-page */

	ck_assert(w->start[k] % PAGE > 24);
	memset(wal_at(w, w->start[k]), 0, PAGE - w->start[k] % PAGE);
	for (pn_lsn p = w->start[k] - w->start[k] % PAGE + PAGE; p < (MEM_SEGS + 1ull) * KIB64;
	     p += PAGE)
		memset(wal_at(w, p), 0, PAGE); /* never-written pages of a new segment */
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), k);
	ck_assert_str_eq(why,
			 fmt("invalid record length at %X/%08X: wanted 24, got 0", w->start[k], 0));
	wal_free(w);
}
END_TEST

START_TEST(test_end_recycled_segment)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160], want[160];
	pn_lsn seg = w->end[l.seg_end]; /* the WAL stopped exactly at this segment's start */

	/* The next segment file is an old one renamed: its pages carry older pageaddrs. */
	for (pn_lsn p = seg; p < seg + KIB64; p += PAGE)
		memcpy(wal_at(w, p), wal_at(w, p - KIB64), PAGE);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.seg_end + 1);
	snprintf(want, sizeof(want),
		 "unexpected pageaddr %X/%08X in log segment "
		 "0000000100000000%08X, offset 0",
		 HI(seg - KIB64), LO(seg - KIB64), (unsigned)(seg / KIB64));
	ck_assert_str_eq(why, want);
	wal_free(w);
}
END_TEST

START_TEST(test_end_stale_continuation_page)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160], want[160];
	pn_lsn second = w->start[l.four] - w->start[l.four] % PAGE + 2 * PAGE;

	pn_wal_page_init(wal_at(w, second), second - 2 * KIB64, KIB64, SYSID);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.four);
	snprintf(want, sizeof(want),
		 "unexpected pageaddr %X/%08X in log segment "
		 "0000000100000000%08X, offset %u",
		 HI(second - 2 * KIB64), LO(second - 2 * KIB64), (unsigned)(second / KIB64),
		 (unsigned)(second % KIB64));
	ck_assert_str_eq(why, want);
	wal_free(w);
}
END_TEST

START_TEST(test_end_torn_record)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160];
	pn_lsn middle = w->start[l.four] + 2 * PAGE + 1000; /* a byte on the third page */

	*wal_at(w, middle) ^= 0x5A;
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.four);
	ck_assert_str_eq(why, fmt("incorrect resource manager data checksum in record at %X/%08X",
				  w->start[l.four], 0));
	wal_free(w);
}
END_TEST

/* Rewrites record i's header field in place (it must lie on one page) and reseals it. */
static void patch_record(struct wal *w, unsigned i, uint32_t offset, const void *bytes, uint32_t n)
{
	ck_assert(w->start[i] % PAGE + w->len[i] <= PAGE);
	uint8_t *rec = wal_at(w, w->start[i]);
	memcpy(rec + offset, bytes, n);
	reseal(rec);
}

START_TEST(test_end_wrong_prev_link)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160], want[160];
	unsigned k = l.after_page_end;
	uint8_t prev[8];

	pn_put64(prev, w->start[k - 1] - 8); /* e.g. a stale record from an older WAL */
	patch_record(w, k, 8, prev, 8);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), k);
	snprintf(want, sizeof(want), "record with incorrect prev-link %X/%08X at %X/%08X",
		 HI(w->start[k - 1] - 8), LO(w->start[k - 1] - 8), HI(w->start[k]),
		 LO(w->start[k]));
	ck_assert_str_eq(why, want);
	wal_free(w);
}
END_TEST

START_TEST(test_end_missing_page)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160];

	w->missing = w->start[l.fpi] - w->start[l.fpi] % PAGE + PAGE; /* its second page */
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.fpi);
	ck_assert_str_eq(why, fmt("could not read WAL page at %X/%08X", w->missing, 0));
	wal_free(w);
}
END_TEST

START_TEST(test_end_page_header_errors)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160], want[160];
	pn_lsn page = w->start[l.fpi] - w->start[l.fpi] % PAGE + PAGE;
	uint8_t *h = wal_at(w, page);
	unsigned seg = (unsigned)(page / KIB64), off = (unsigned)(page % KIB64);

	pn_put16(h, 0xD10D);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.fpi);
	snprintf(want, sizeof(want),
		 "invalid magic number D10D in log segment "
		 "0000000100000000%08X, offset %u",
		 seg, off);
	ck_assert_str_eq(why, want);
	pn_put16(h, PN_WAL_PAGE_MAGIC);

	pn_put16(h + 2, PN_XLP_FIRST_IS_CONTRECORD | 0x0100);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.fpi);
	snprintf(want, sizeof(want),
		 "invalid info bits 0101 in log segment "
		 "0000000100000000%08X, offset %u",
		 seg, off);
	ck_assert_str_eq(why, want);

	pn_put16(h + 2, 0);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.fpi);
	ck_assert_str_eq(why, fmt("there is no contrecord flag at %X/%08X", w->start[l.fpi], 0));
	pn_put16(h + 2, PN_XLP_FIRST_IS_CONTRECORD);

	uint32_t rem = pn_get32(h + 16);
	pn_put32(h + 16, rem + 8);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.fpi);
	snprintf(want, sizeof(want), "invalid contrecord length %u (expected %u) at %X/%08X",
		 rem + 8, rem, HI(w->start[l.fpi]), LO(w->start[l.fpi]));
	ck_assert_str_eq(why, want);
	pn_put32(h + 16, rem);

	/* PostgreSQL's message is longer than why[160]: it ends inside the reader's own sysid. */
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID + 1, why), 0); /* segment 1's header */
	static const char sysid_msg[] = "WAL file is from different database system: WAL file "
					"database system identifier is 7300000000000000001, "
					"pg_control database system identifier is 73000";
	ck_assert_uint_eq(strlen(why), 159);
	ck_assert(strncmp(why, sysid_msg, sizeof(sysid_msg) - 1) == 0);
	wal_free(w);
}
END_TEST

START_TEST(test_end_record_header_errors)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160];
	uint8_t rmid = 200; /* beyond every resource manager */

	ck_assert_uint_eq(read_damaged(w, 8240, SYSID, why), l.fpi);
	ck_assert_str_eq(why, fmt("record length 8241 at %X/%08X too long", w->start[l.fpi], 0));
	patch_record(w, l.after_page_end, 17, &rmid, 1);
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.after_page_end);
	ck_assert_str_eq(why, fmt("invalid resource manager ID 200 at %X/%08X",
				  w->start[l.after_page_end], 0));
	/* A header split across pages: rmid and prev-link are checked once assembled. */
	pn_lsn boundary = w->start[l.split_header] + 8;
	ck_assert(boundary % PAGE == 0);
	ck_assert_uint_eq(pn_get32(wal_at(w, w->start[l.split_header])), 34);
	uint8_t *rest = wal_at(w, boundary + pn_wal_page_header_size(boundary, KIB64));
	rest[17 - 8] = rmid; /* xl_rmid is the 10th byte on the next page; CRC now fails */
	ck_assert_uint_eq(read_damaged(w, 65536, SYSID, why), l.split_header);
	ck_assert_str_eq(why, fmt("invalid resource manager ID 200 at %X/%08X",
				  w->start[l.split_header], 0));
	wal_free(w);
}
END_TEST

/* In parts, the reader reads no byte of a record that is not valid (DV8): it ends the WAL on
 * a summary of the bytes, equal for two different tears of the same record, in a page or
 * across pages. */
START_TEST(test_parts_tail_summarized)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160];
	struct {
		unsigned rec;
		uint32_t at[2]; /* two bytes of the record, each flipped alone */
	} tears[] = {
		{l.four, {2 * PAGE + 1000, 2 * PAGE + 3000}}, /* on its third page */
		{l.four, {30, 2 * PAGE + 1000}},              /* on its first and third */
		{l.commit, {4, 21}},                          /* a record inside a page */
	};
	for (unsigned t = 0; t < sizeof(tears) / sizeof(tears[0]); t++) {
		unsigned k = tears[t].rec;
		struct pn_summary_value v[2];
		ck_assert_msg(t < 2 ? w->end[k] - w->start[k] > 2 * PAGE
				    : w->start[k] % PAGE + w->len[k] <= PAGE,
			      "tear %u: record %u at %X/%08X, %u bytes", t, k, HI(w->start[k]),
			      LO(w->start[k]), w->len[k]);
		for (unsigned j = 0; j < 2; j++) {
			uint8_t *b = wal_at(w, w->start[k] + tears[t].at[j]);
			*b ^= 0x5A;
			ck_assert_uint_eq(read_mode(w, 65536, SYSID, why, false), k);
			ck_assert(parts.read_max > w->start[k]); /* whole pages: read */
			ck_assert_uint_eq(read_mode(w, 65536, SYSID, why, true), k);
			ck_assert_msg(parts.read_max <= w->start[k],
				      "tear %u: read up to %X/%08X, the record starts at %X/%08X",
				      t, HI(parts.read_max), LO(parts.read_max), HI(w->start[k]),
				      LO(w->start[k]));
			ck_assert(parts.summaries > 0);
			v[j] = parts.last;
			*b ^= 0x5A;
		}
		ck_assert(v[0].v[0] == v[1].v[0] && v[0].v[1] == v[1].v[1]);
	}
	/* undamaged, every record is read, and the bytes up to the last one's end */
	ck_assert_uint_eq(read_mode(w, 65536, SYSID, why, true), w->n);
	ck_assert(parts.read_max >= w->end[w->n - 1] - 7);
	wal_free(w);
}
END_TEST

/* WR4: a record that a summarized read found valid is decoded without its CRC checked again.
 * Its CRC's first byte is flipped just after the summary is taken (the bytes then read are no
 * longer the bytes summarized, which the device never lets happen): read in parts, the record
 * is still taken, the CRC checked once; read whole, the same damage ends the WAL there. */
START_TEST(test_parts_crc_checked_once)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	char why[160];
	unsigned k = 1; /* a record after the first, inside one page */
	while (w->start[k] % PAGE + w->len[k] > PAGE)
		k++;
	ck_assert_uint_lt(k, l.last);
	uint8_t *crc = wal_at(w, w->start[k] + 20);
	struct pn_wal_reader r;
	ck_assert(pn_wal_reader_init(&r, w->start[0], 0, w->seg_size, PAGE, 65536, SYSID, wal_read,
				     w));
	memset(&parts, 0, sizeof(parts));
	pn_wal_reader_parts(&r, wal_part, wal_summarize);
	struct pn_wal_record rec;
	pn_lsn start, end;
	for (unsigned i = 0; i < k; i++)
		ck_assert_msg(pn_wal_read_next(&r, &rec, &start, &end), "%s", r.why);
	pn_wal_reader_seek(&r, w->start[k], w->start[k - 1]); /* a fresh summary of its page */
	parts.flip_after = crc;
	ck_assert_msg(pn_wal_read_next(&r, &rec, &start, &end), "%s", r.why);
	ck_assert_uint_eq(start, w->start[k]);
	ck_assert(parts.flip_after == NULL); /* the summary was taken, then the byte flipped */
	pn_wal_reader_free(&r);
	ck_assert_uint_eq(read_mode(w, 65536, SYSID, why, false), k);
	ck_assert_str_eq(why, fmt("incorrect resource manager data checksum in record at %X/%08X",
				  w->start[k], 0));
	*crc ^= 0x5A;
	wal_free(w);
}
END_TEST

START_TEST(test_reader_positions)
{
	struct wal *w = wal_new(KIB64);
	struct layout l = wal_build(w);
	struct pn_wal_reader r;
	struct pn_wal_record rec;
	pn_lsn start, end;

	reader_open(&r, w, 65536);
	pn_lsn page = w->start[l.four] - w->start[l.four] % PAGE + PAGE;
	uint32_t hdr = pn_wal_page_header_size(page, KIB64);
	pn_wal_reader_seek(&r, page + 8, 0);
	ck_assert(!pn_wal_read_next(&r, &rec, &start, &end));
	ck_assert_str_eq(r.why, fmt("invalid record offset at %X/%08X", page + 8, 0));
	pn_wal_reader_seek(&r, page, 0);
	ck_assert(!pn_wal_read_next(&r, &rec, &start, &end));
	ck_assert_str_eq(r.why, fmt("contrecord is requested by %X/%08X", page + hdr, 0));
	/* Mid-WAL starts: with the right prev, with prev 0 (only prev < start checked). */
	pn_wal_reader_seek(&r, w->start[l.four], w->start[l.four - 1]);
	ck_assert_uint_eq(read_all(&r, w, l.four), w->n - l.four);
	pn_wal_reader_seek(&r, w->start[l.cross_seg], 0);
	ck_assert_uint_eq(read_all(&r, w, l.cross_seg), w->n - l.cross_seg);
	pn_wal_reader_seek(&r, w->start[l.cross_seg], w->start[l.cross_seg] - 8);
	ck_assert(!pn_wal_read_next(&r, &rec, &start, &end));
	ck_assert(strncmp(r.why, "record with incorrect prev-link", 31) == 0);
	pn_wal_reader_free(&r);
	wal_free(w);
}
END_TEST

/* ---- runner ------------------------------------------------------------------------------- */

static Suite *walread_suite(void)
{
	Suite *s = suite_create("walread");
	TCase *wal = tcase_create("copy_read");

	tcase_add_loop_test(wal, test_copy_read_all, 0, 2);
	tcase_add_test(wal, test_copy_page_headers);
	tcase_add_test(wal, test_page_init);
	tcase_add_test(wal, test_copy_mid_page);
	tcase_add_test(wal, test_end_zeroed_tail);
	tcase_add_test(wal, test_end_recycled_segment);
	tcase_add_test(wal, test_end_stale_continuation_page);
	tcase_add_test(wal, test_end_torn_record);
	tcase_add_test(wal, test_end_wrong_prev_link);
	tcase_add_test(wal, test_end_missing_page);
	tcase_add_test(wal, test_end_page_header_errors);
	tcase_add_test(wal, test_end_record_header_errors);
	tcase_add_test(wal, test_parts_tail_summarized);
	tcase_add_test(wal, test_parts_crc_checked_once);
	tcase_add_test(wal, test_reader_positions);
	TCase *all[] = {wal};
	for (size_t i = 0; i < PN_ARRAY_LEN(all); i++) {
		tcase_set_timeout(all[i], 120);
		suite_add_tcase(s, all[i]);
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(walread_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

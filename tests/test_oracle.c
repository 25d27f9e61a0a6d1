/*
 * test_oracle.c: unit tests for the checker's oracle (model/oracle.c). Label: unit.
 *
 * Records are built with the WAL encoder (src/format/walfmt.h) and fed with increasing LSNs.
 * Expected pages are written here by hand from the record specification (oracle.c's
 * header), byte offsets spelled out, never through the engine's src/format/redo.c. The property
 * test keeps a third, naive reading: the record list replayed in full for every question.
 */
#include "oracle.h"
#include "walfmt.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE 8192u
#define NITEMS 60u
#define TUP 104u
#define UPPER (PAGE - NITEMS * TUP)
#define LOWER (24u + 4u * NITEMS)
#define LSN0 0x2000028ull

/* For hot loops: ck_assert_* reports a mark point to the runner (a pipe write) per call. */
#define EXPECT(cond)                                                                   \
	do {                                                                           \
		if (!(cond))                                                           \
			ck_abort_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond); \
	} while (0)

/* ---- deterministic data and hand-built pages -------------------------------------------- */

static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static uint32_t below(uint32_t *s, uint32_t n) { return next_rand(s) % n; }

static uint32_t tuple_at(const uint8_t *page, uint32_t item)
{
	return pn_get16(page + 24 + 4 * item);
}

/* A heap page: NITEMS tuples of 104 B packed at the end, payload bytes from the seed. */
static void heap_page(uint8_t *page, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 7;
	memset(page, 0, PAGE);
	pn_put16(page + 12, LOWER);
	pn_put16(page + 14, UPPER);
	pn_put16(page + 16, PAGE);
	pn_put16(page + 18, PAGE | 4);
	for (uint32_t i = 0; i < NITEMS; i++) {
		uint32_t off = UPPER + i * TUP;
		pn_put16(page + 24 + 4 * i, (uint16_t)off);
		pn_put16(page + 24 + 4 * i + 2, TUP);
		pn_put32(page + off, 2);      /* t_xmin */
		pn_put16(page + off + 18, 1); /* t_infomask2 */
		page[off + 22] = 24;          /* t_hoff */
		for (uint32_t j = 24; j < TUP; j++)
			page[off + j] = (uint8_t)(next_rand(&s) >> 24);
	}
}

/* heap_pages heap pages then slru_pages zeroed SLRU pages. */
static uint8_t *initial_pages(uint32_t heap_pages, uint32_t slru_pages)
{
	uint8_t *p = calloc(heap_pages + slru_pages, PAGE);
	ck_assert_ptr_nonnull(p);
	for (uint32_t i = 0; i < heap_pages; i++)
		heap_page(p + (size_t)i * PAGE, i + 1);
	return p;
}

static void put_lsn(uint8_t *page, uint64_t lsn)
{
	pn_put32(page, (uint32_t)(lsn >> 32));
	pn_put32(page + 4, (uint32_t)lsn);
}

/* ---- records ----------------------------------------------------------------------------- */

/* A record and the bytes it points at; build in place (the record points into itself). */
struct trec {
	struct pn_wal_record r;
	uint8_t main[32];
	uint8_t data[PN_WAL_MAX_BLOCKS][12 * 8]; /* up to 8 frozen tuples, or 16 B of a record */
};

static void rec_init(struct trec *t, uint8_t rmid, uint8_t info, uint32_t xid)
{
	memset(t, 0, sizeof(*t));
	t->r.rmid = rmid;
	t->r.info = info;
	t->r.xid = xid;
	t->r.main_data = t->main;
}

static void add_block(struct trec *t, uint32_t blkno, uint16_t data_len)
{
	struct pn_wal_block *b = &t->r.blocks[t->r.nblocks];
	b->blkno = blkno;
	b->data = t->data[t->r.nblocks];
	b->data_len = data_len;
	t->r.nblocks++;
}

static void rec_hot(struct trec *t, uint32_t xid, uint32_t blkno, uint16_t offnum, uint16_t im2,
		    uint16_t im, uint32_t val)
{
	rec_init(t, PN_RM_HEAP, 0x40, xid);
	pn_put32(t->main, xid);
	pn_put16(t->main + 4, offnum);
	pn_put16(t->main + 12, offnum);
	t->r.main_len = 14;
	add_block(t, blkno, 9);
	pn_put16(t->data[0], im2);
	pn_put16(t->data[0] + 2, im);
	t->data[0][4] = 24;
	pn_put32(t->data[0] + 5, val);
}

static void rec_freeze(struct trec *t, uint32_t xid, uint32_t blkno, uint32_t n,
		       const uint16_t *offnums, const uint16_t *masks)
{
	rec_init(t, PN_RM_HEAP2, 0x30, xid);
	pn_put32(t->main, xid);
	pn_put16(t->main + 4, (uint16_t)n);
	t->r.main_len = 6;
	for (uint32_t i = 0; i < n; i++) { /* block data: xl_heap_freeze_tuple (PostgreSQL 15) */
		uint8_t *f = t->data[0] + 12 * i;
		memset(f, 0, 12);
		pn_put32(f, 0); /* xmax */
		pn_put16(f + 4, offnums[i]);
		pn_put16(f + 6, 1); /* t_infomask2 */
		pn_put16(f + 8, masks[i]);
	}
	add_block(t, blkno, (uint16_t)(12 * n));
}

static void rec_dedup(struct trec *t, uint32_t xid, uint32_t blkno, uint8_t salt)
{
	rec_init(t, PN_RM_BTREE, 0x60, xid);
	pn_put16(t->main, 1);
	t->r.main_len = 2;
	add_block(t, blkno, 4);
	pn_put16(t->data[0], 1);
	pn_put16(t->data[0] + 2, NITEMS);
	t->data[0][0] = salt;
}

static void rec_clog(struct trec *t, uint32_t xid, uint32_t blkno, bool header)
{
	rec_init(t, PN_RM_CLOG, 0x20, xid);
	pn_put32(t->main, xid);
	t->main[4] = header;
	t->r.main_len = 5;
	add_block(t, blkno, 0);
}

/* Storage/TRUNCATE of the model's relation to n blocks (xl_smgr_truncate, its own bytes). */
static void rec_truncate(struct trec *t, uint32_t n, uint32_t rel)
{
	rec_init(t, 2, 0x20, 0);
	pn_put32(t->main, n);
	pn_put32(t->main + 4, 1663);
	pn_put32(t->main + 8, 5);
	pn_put32(t->main + 12, rel);
	pn_put32(t->main + 16, 7);
	t->r.main_len = 20;
}

static void rec_commit(struct trec *t, uint32_t xid)
{
	rec_init(t, PN_RM_XACT, 0x00, xid);
	pn_put64(t->main, 12345);
	t->r.main_len = 8;
}

/* Adds an image block (APPLY) of `image` with the hole [hole_off, hole_off+hole_len). */
static void add_image(struct trec *t, uint32_t blkno, const uint8_t *image, uint16_t hole_off,
		      uint16_t hole_len)
{
	add_block(t, blkno, 0);
	struct pn_wal_block *b = &t->r.blocks[t->r.nblocks - 1];
	b->has_image = b->image_apply = true;
	b->image = image;
	b->hole_offset = hole_off;
	b->hole_length = hole_len;
}

/* Feeds records to an oracle at increasing LSNs (gap: extra bytes after each record). */
struct feeder {
	struct pn_oracle *o;
	uint64_t pos;
	uint8_t buf[PN_WAL_MAX_BLOCKS * PAGE + 4096];
};

static void feeder_init(struct feeder *f, struct pn_oracle *o)
{
	f->o = o;
	f->pos = LSN0;
}

static bool feed_gap(struct feeder *f, const struct trec *t, uint32_t gap, uint64_t *end)
{
	uint32_t len = pn_wal_record_encode(&t->r, PAGE, f->buf);
	EXPECT(len <= sizeof(f->buf));
	uint64_t start = f->pos, stop = start + PN_ALIGN8(len);
	if (!pn_oracle_add(f->o, f->buf, len, start, stop))
		return false;
	f->pos = stop + 8u * gap;
	if (end)
		*end = stop;
	return true;
}

static uint64_t feed(struct feeder *f, const struct trec *t)
{
	uint64_t end = 0;
	ck_assert_msg(feed_gap(f, t, 0, &end), "record refused");
	return end;
}

static struct pn_oracle *oracle(uint32_t heap, uint32_t slru, bool headers, uint8_t **initial)
{
	*initial = initial_pages(heap, slru);
	struct pn_oracle *o = pn_oracle_new(heap, slru, PAGE, headers, *initial);
	ck_assert_ptr_nonnull(o);
	return o;
}

static void expect_page(struct pn_oracle *o, uint32_t page, uint64_t upto, const uint8_t *want)
{
	static uint8_t got[PAGE];
	pn_oracle_page(o, page, upto, got);
	for (uint32_t i = 0; i < PAGE; i++)
		if (got[i] != want[i])
			ck_abort_msg("page %u at %llX: byte %u is %02X, expected %02X", page,
				     (unsigned long long)upto, i, got[i], want[i]);
}

/* ---- each kind's effect ------------------------------------------------------------------ */

START_TEST(test_hot_update)
{
	uint8_t *init, want[PAGE];
	struct pn_oracle *o = oracle(2, 2, false, &init);
	struct feeder f;
	struct trec t;
	feeder_init(&f, o);
	rec_hot(&t, 777, 1, 4, 0x0002, 0x0800, 0xA1B2C3D4u);
	uint64_t end = feed(&f, &t);

	memcpy(want, init + PAGE, PAGE);
	uint32_t off = UPPER + 3 * TUP;
	pn_put32(want + off, 777);   /* t_xmin */
	pn_put32(want + off + 4, 0); /* t_xmax */
	pn_put16(want + off + 18, 0x0002);
	pn_put16(want + off + 20, 0x0800);
	pn_put32(want + off + 24, 0xA1B2C3D4u);
	pn_put32(want + 20, 777); /* pd_prune_xid */
	put_lsn(want, end);
	expect_page(o, 1, end, want);
	expect_page(o, 0, end, init);
	ck_assert_uint_eq(pn_oracle_records(o), 1);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_freeze)
{
	uint8_t *init, want[PAGE];
	struct pn_oracle *o = oracle(2, 2, false, &init);
	struct feeder f;
	struct trec t;
	uint16_t offnums[] = {1, 7, 60}, masks[] = {0x0300, 0x0B00, 0x0301};
	feeder_init(&f, o);
	rec_freeze(&t, 900, 0, 3, offnums, masks);
	uint64_t end = feed(&f, &t);

	memcpy(want, init, PAGE);
	for (uint32_t i = 0; i < 3; i++)
		pn_put16(want + UPPER + (offnums[i] - 1u) * TUP + 20, masks[i]);
	pn_put16(want + 10, 0x0004);
	put_lsn(want, end);
	expect_page(o, 0, end, want);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_dedup)
{
	uint8_t *init, want[PAGE];
	struct pn_oracle *o = oracle(1, 2, false, &init);
	struct feeder f;
	struct trec t;
	feeder_init(&f, o);
	rec_dedup(&t, 5, 0, 0x3D);
	uint64_t end1 = feed(&f, &t);
	rec_dedup(&t, 6, 0, 0x81);
	uint64_t end2 = feed(&f, &t);

	memcpy(want, init, PAGE);
	for (uint32_t i = 0; i < NITEMS; i++)
		for (uint32_t j = 24; j < TUP; j++) {
			uint8_t *b = want + UPPER + i * TUP + j;
			*b = (uint8_t)(*b * 5 + 0x3D + i);
		}
	put_lsn(want, end1);
	expect_page(o, 0, end1, want);
	for (uint32_t i = 0; i < NITEMS; i++)
		for (uint32_t j = 24; j < TUP; j++) {
			uint8_t *b = want + UPPER + i * TUP + j;
			*b = (uint8_t)(*b * 5 + 0x81 + i);
		}
	put_lsn(want, end2);
	expect_page(o, 0, end2, want);
	/* the header and the first 24 bytes of every tuple are untouched */
	ck_assert_int_eq(memcmp(want + 8, init + 8, 16), 0);
	ck_assert_int_eq(memcmp(want + UPPER, init + UPPER, 24), 0);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_slru_headerless)
{
	uint8_t *init, want[PAGE];
	struct pn_oracle *o = oracle(1, 2, false, &init);
	struct feeder f;
	struct trec t;
	uint32_t per_page = PAGE * 4;
	feeder_init(&f, o);
	rec_clog(&t, 5, 1, false); /* bit 10: byte 1, bit 2 */
	feed(&f, &t);
	rec_clog(&t, per_page + 3, 1, false); /* wraps: bit 6 of byte 0 */
	feed(&f, &t);
	rec_clog(&t, per_page - 1, 2, false); /* the last 2 bits of page 2 */
	uint64_t end = feed(&f, &t);

	memset(want, 0, PAGE);
	want[1] = 0x04;
	want[0] = 0x40;
	expect_page(o, 1, end, want); /* no LSN: bytes 0..7 are status bits */
	memset(want, 0, PAGE);
	want[PAGE - 1] = 0x40;
	expect_page(o, 2, UINT64_MAX, want);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_slru_headered)
{
	uint8_t *init, want[PAGE];
	struct pn_oracle *o = oracle(1, 2, true, &init);
	struct feeder f;
	struct trec t;
	uint32_t per_page = (PAGE - 24) * 4;
	feeder_init(&f, o);
	rec_clog(&t, 5, 1, true);
	uint64_t end1 = feed(&f, &t);
	rec_clog(&t, per_page + 4, 1, true); /* wraps: bit 8 = byte 24+1, bit 0 */
	uint64_t end2 = feed(&f, &t);

	memset(want, 0, PAGE);
	pn_put16(want + 12, PAGE);
	pn_put16(want + 14, PAGE);
	pn_put16(want + 16, PAGE);
	pn_put16(want + 18, PAGE | 4);
	want[24 + 1] = 0x04;
	put_lsn(want, end1);
	expect_page(o, 1, end1, want);
	want[24 + 1] |= 0x01;
	put_lsn(want, end2);
	expect_page(o, 1, end2, want);
	/* a header already there (pd_lower != 0) is left alone */
	uint8_t *other = calloc(3, PAGE);
	heap_page(other, 1);
	pn_put16(other + 2 * PAGE + 12, 1000);
	struct pn_oracle *o2 = pn_oracle_new(1, 2, PAGE, true, other);
	feeder_init(&f, o2);
	rec_clog(&t, 0, 2, true);
	uint64_t end3 = feed(&f, &t);
	memset(want, 0, PAGE);
	pn_put16(want + 12, 1000);
	want[24] = 0x01;
	put_lsn(want, end3);
	expect_page(o2, 2, end3, want);
	pn_oracle_free(o2);
	free(other);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_image_restore)
{
	uint8_t *init, image[PAGE], want[PAGE];
	struct pn_oracle *o = oracle(3, 2, true, &init);
	struct feeder f;
	struct trec t;
	feeder_init(&f, o);
	memset(image, 0xEE, PAGE);         /* the hole's bytes must not survive */
	memcpy(image, init + PAGE, LOWER); /* header and line pointers */
	memcpy(image + UPPER, init + PAGE + UPPER, PAGE - UPPER);
	image[UPPER + 30] ^= 0x55;
	put_lsn(image, 0x99); /* replaced by the record's end */
	rec_init(&t, PN_RM_XLOG, 0xA0, 0);
	add_image(&t, 1, image, LOWER, UPPER - LOWER);
	uint64_t end = feed(&f, &t);

	memcpy(want, image, PAGE);
	memset(want + LOWER, 0, UPPER - LOWER);
	put_lsn(want, end);
	expect_page(o, 1, end, want);
	expect_page(o, 1, end - 1, init + PAGE);
	/* without a hole; on a headered SLRU page; two images in one record */
	memset(image, 0x5A, PAGE);
	rec_init(&t, PN_RM_XLOG, 0xA0, 0);
	add_image(&t, 3, image, 0, 0);
	add_image(&t, 0, image, 100, 8000);
	end = feed(&f, &t);
	memcpy(want, image, PAGE);
	put_lsn(want, end);
	expect_page(o, 3, end, want);
	memset(want + 100, 0, 8000);
	expect_page(o, 0, end, want);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_image_wins_over_data)
{
	uint8_t *init, image[PAGE], want[PAGE];
	struct pn_oracle *o = oracle(1, 2, false, &init);
	struct feeder f;
	struct trec t;
	feeder_init(&f, o);
	memcpy(image, init, PAGE);
	image[UPPER + 50] ^= 0xFF;
	/* a HOT_UPDATE whose block carries an image (APPLY): the image is the change */
	rec_hot(&t, 10, 0, 2, 1, 0, 0xFFFFFFFFu);
	struct pn_wal_block *b = &t.r.blocks[0];
	b->has_image = b->image_apply = true;
	b->image = image;
	b->data_len = 0;
	uint64_t end1 = feed(&f, &t);
	memcpy(want, image, PAGE);
	put_lsn(want, end1);
	expect_page(o, 0, end1, want);
	/* an image without APPLY (a consistency-check image) leaves the change to the data */
	rec_hot(&t, 11, 0, 2, 1, 0, 0x01020304u);
	b = &t.r.blocks[0];
	b->has_image = true;
	b->image = init;
	uint64_t end2 = feed(&f, &t);
	uint32_t off = UPPER + TUP;
	pn_put32(want + off, 11);
	pn_put32(want + off + 4, 0);
	pn_put16(want + off + 18, 1);
	pn_put16(want + off + 20, 0);
	pn_put32(want + off + 24, 0x01020304u);
	pn_put32(want + 20, 11);
	put_lsn(want, end2);
	expect_page(o, 0, end2, want);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_no_page_change)
{
	uint8_t *init;
	struct pn_oracle *o = oracle(2, 2, true, &init);
	struct feeder f;
	struct trec t;
	feeder_init(&f, o);
	rec_commit(&t, 9);
	feed(&f, &t);
	rec_init(&t, PN_RM_XACT, 0x20, 9); /* abort */
	feed(&f, &t);
	rec_init(&t, PN_RM_XLOG, 0x10, 0); /* checkpoint online, main data only */
	memset(t.main, 7, 88);
	t.r.main_len = 88;
	feed(&f, &t);
	rec_init(&t, PN_RM_XLOG, 0xA0, 0); /* FPI_FOR_HINT without an image: nothing */
	add_block(&t, 1, 0);
	feed(&f, &t);
	rec_init(&t, PN_RM_HEAP2, 0x40, 0); /* a kind with no page meaning and no blocks */
	t.r.main_len = 5;
	uint64_t end = feed(&f, &t);
	ck_assert_uint_eq(pn_oracle_records(o), 5);
	for (uint32_t p = 0; p < 4; p++)
		expect_page(o, p, end, init + (size_t)p * PAGE);
	struct pn_oracle_stats st;
	pn_oracle_stats(o, &st);
	ck_assert_uint_eq(st.ops, 0);
	pn_oracle_free(o);
	free(init);
}
END_TEST

/* I5: truncation shrinks the relation at its record's end, a block past the size (an
 * image) regrows it; another relation's truncation and a larger size change nothing. */
START_TEST(test_rel_size)
{
	struct trec t;
	struct feeder f;
	uint8_t *init;
	struct pn_oracle *o = oracle(6, 1, true, &init);
	ck_assert_uint_eq(pn_oracle_rel_blocks(o, UINT64_MAX), 6); /* no record: every page */
	feeder_init(&f, o);
	rec_truncate(&t, 2, 16384);
	uint64_t cut = feed(&f, &t);
	rec_truncate(&t, 1, 16385); /* another relation */
	feed(&f, &t);
	rec_truncate(&t, 4, 16384); /* not smaller */
	feed(&f, &t);
	rec_init(&t, PN_RM_XLOG, 0xA0, 0);
	add_image(&t, 4, init + 4u * PAGE, 0, 0); /* regrows to 5 blocks */
	uint64_t grown = feed(&f, &t);
	rec_clog(&t, 3, 6, true); /* an SLRU page: never a size */
	feed(&f, &t);
	ck_assert_uint_eq(pn_oracle_rel_blocks(o, cut - 1), 6);
	ck_assert_uint_eq(pn_oracle_rel_blocks(o, cut), 2);
	ck_assert_uint_eq(pn_oracle_rel_blocks(o, grown - 1), 2);
	ck_assert_uint_eq(pn_oracle_rel_blocks(o, grown), 5);
	ck_assert_uint_eq(pn_oracle_rel_blocks(o, UINT64_MAX), 5);
	char why[160];
	ck_assert_msg(pn_oracle_check(o, why, sizeof(why)), "%s", why);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_misfit_counted)
{
	uint8_t *init, want[PAGE];
	struct pn_oracle *o = oracle(1, 2, false, &init);
	struct feeder f;
	struct trec t;
	feeder_init(&f, o);
	rec_hot(&t, 3, 0, NITEMS + 1, 1, 0, 5); /* no such item */
	uint64_t end = feed(&f, &t);
	memcpy(want, init, PAGE);
	put_lsn(want, end);
	expect_page(o, 0, end, want);
	struct pn_oracle_stats st;
	pn_oracle_stats(o, &st);
	ck_assert_uint_eq(st.misfits, 1);
	pn_oracle_free(o);
	free(init);
}
END_TEST

/* ---- refused records ------------------------------------------------------------------- */

static bool add_why(struct feeder *f, const struct trec *t, bool corrupt, char *why)
{
	uint32_t len = pn_wal_record_encode(&t->r, PAGE, f->buf);
	if (corrupt)
		f->buf[len - 1] ^= 1;
	return pn_oracle_add_why(f->o, f->buf, len, f->pos, f->pos + PN_ALIGN8(len), why, 160);
}

START_TEST(test_refused)
{
	uint8_t *init;
	struct pn_oracle *o = oracle(2, 2, false, &init);
	struct feeder f;
	struct trec t;
	char why[160];
	feeder_init(&f, o);
	rec_hot(&t, 3, 0, 1, 1, 0, 5);
	ck_assert(!add_why(&f, &t, true, why)); /* CRC */
	ck_assert_str_eq(why, "incorrect resource manager data checksum in record");
	uint32_t len = pn_wal_record_encode(&t.r, PAGE, f.buf);
	ck_assert(!pn_oracle_add(o, f.buf, len - 1, f.pos, f.pos + 128)); /* length */
	rec_hot(&t, 3, 4, 1, 1, 0, 5);                                    /* page 4 of 4 */
	ck_assert(!add_why(&f, &t, false, why));
	ck_assert_str_eq(why, "a block names page 4 of 4");
	rec_hot(&t, 3, 0, 1, 1, 0, 5);
	t.r.blocks[0].fork = 1;
	ck_assert(!add_why(&f, &t, false, why));
	rec_hot(&t, 3, 0, 1, 1, 0, 5);
	t.r.blocks[0].data_len = 4; /* shorter than xl_heap_header */
	ck_assert(!add_why(&f, &t, false, why));
	rec_dedup(&t, 3, 0, 1);
	t.r.main_len = 3;
	ck_assert(!add_why(&f, &t, false, why));
	uint16_t offnums[] = {1, 2}, masks[] = {0x300, 0x300};
	rec_freeze(&t, 3, 0, 2, offnums, masks);
	t.r.main_len = 6 + 12; /* says 2 tuples, holds 1 */
	ck_assert(!add_why(&f, &t, false, why));
	rec_clog(&t, 3, 2, false);
	t.r.main_len = 4;
	ck_assert(!add_why(&f, &t, false, why));
	rec_init(&t, PN_RM_HEAP2, 0x40, 3); /* VISIBLE needs 2 blocks, 5 B main */
	add_block(&t, 0, 0);
	ck_assert(!add_why(&f, &t, false, why));
	ck_assert_str_eq(why, "rmid 9 info 40: main data 0 B, block data 0 B");
	rec_init(&t, PN_RM_HEAP2, 0x50, 3); /* MULTI_INSERT: not modelled */
	add_block(&t, 0, 0);
	ck_assert(!add_why(&f, &t, false, why));
	ck_assert_str_eq(why, "rmid 9 info 50: a block change of unknown meaning");
	ck_assert_uint_eq(pn_oracle_records(o), 0);
	ck_assert(pn_oracle_check(o, why, sizeof(why)));
	expect_page(o, 0, UINT64_MAX, init);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_new_bad_arguments)
{
	uint8_t page[PAGE] = {0};
	ck_assert_ptr_null(pn_oracle_new(0, 0, PAGE, false, page));
	ck_assert_ptr_null(pn_oracle_new(1, 0, PAGE, false, NULL));
	ck_assert_ptr_null(pn_oracle_new(1, 0, 100, false, page));
	ck_assert_ptr_null(pn_oracle_new(1, 0, 65536, false, page));
	pn_oracle_free(NULL);
}
END_TEST

/* ---- upto ---------------------------------------------------------------------------------- */

START_TEST(test_upto_prefix)
{
	uint8_t *init, want1[PAGE], want2[PAGE], want3[PAGE];
	struct pn_oracle *o = oracle(2, 2, false, &init);
	struct feeder f;
	struct trec t;
	uint64_t e1, e2, e3;
	feeder_init(&f, o);
	rec_hot(&t, 21, 0, 1, 1, 0, 0x11111111u);
	ck_assert(feed_gap(&f, &t, 3, &e1));
	rec_commit(&t, 21); /* another record between, no page */
	uint64_t ec = feed(&f, &t);
	rec_hot(&t, 22, 0, 1, 1, 0, 0x22222222u);
	ck_assert(feed_gap(&f, &t, 0, &e2));
	rec_hot(&t, 23, 0, 1, 1, 0, 0x33333333u);
	ck_assert(feed_gap(&f, &t, 0, &e3));

	uint32_t off = UPPER;
	memcpy(want1, init, PAGE);
	pn_put32(want1 + off, 21);
	pn_put16(want1 + off + 18, 1);
	pn_put32(want1 + off + 24, 0x11111111u);
	pn_put32(want1 + 20, 21);
	put_lsn(want1, e1);
	memcpy(want2, want1, PAGE);
	pn_put32(want2 + off, 22);
	pn_put32(want2 + off + 24, 0x22222222u);
	pn_put32(want2 + 20, 22);
	put_lsn(want2, e2);
	memcpy(want3, want2, PAGE);
	pn_put32(want3 + off, 23);
	pn_put32(want3 + off + 24, 0x33333333u);
	pn_put32(want3 + 20, 23);
	put_lsn(want3, e3);

	/* asked in an order that makes the cursor go back and forth */
	expect_page(o, 0, e2, want2);     /* end == upto: included */
	expect_page(o, 0, e2 - 1, want1); /* end > upto: not */
	expect_page(o, 0, e1 - 1, init);
	expect_page(o, 0, 0, init);
	expect_page(o, 0, e1, want1);
	expect_page(o, 0, e1 + 8, want1);
	expect_page(o, 0, e3, want3);
	expect_page(o, 0, e3 - 1, want2);
	expect_page(o, 0, UINT64_MAX, want3);
	expect_page(o, 1, e3, init + PAGE);
	ck_assert_uint_eq(pn_oracle_records(o), 4);
	ck_assert_uint_eq(pn_oracle_last_end(o, 0), 0);
	ck_assert_uint_eq(pn_oracle_last_end(o, e1 - 1), 0);
	ck_assert_uint_eq(pn_oracle_last_end(o, e1), e1);
	ck_assert_uint_eq(pn_oracle_last_end(o, e1 + 8), e1);
	ck_assert_uint_eq(pn_oracle_last_end(o, e2 - 1), ec);
	ck_assert_uint_eq(pn_oracle_last_end(o, e2), e2);
	ck_assert_uint_eq(pn_oracle_last_end(o, e3 - 1), e2);
	ck_assert_uint_eq(pn_oracle_last_end(o, UINT64_MAX), e3);
	pn_oracle_free(o);
	free(init);
}
END_TEST

/* ---- masking ------------------------------------------------------------------------------- */

START_TEST(test_mask_heap)
{
	uint8_t *init, exp[PAGE], got[PAGE];
	struct pn_oracle *o = oracle(1, 2, false, &init);
	uint32_t t0 = tuple_at(init, 0), t1 = tuple_at(init, 1), t2 = tuple_at(init, 2);
	memcpy(exp, init, PAGE);
	pn_put16(exp + t2 + 20, 0x0300); /* expected: tuple 2 frozen */
	memcpy(got, exp, PAGE);
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), -1);
	pn_put16(got + 8, 0xBEEF);       /* checksum */
	pn_put16(got + t0 + 20, 0x0100); /* XMIN_COMMITTED */
	pn_put16(got + t1 + 20, 0x0A00); /* XMAX_COMMITTED | XMIN_INVALID */
	pn_put16(got + t2 + 20, 0x0F00); /* still frozen, XMAX hints ignored */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), -1);
	pn_put16(got + t1 + 20, 0x0B00); /* tuple 1 now frozen: visible */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), (int)(t1 + 21));
	pn_put16(got + t1 + 20, 0x0200);
	pn_put16(got + t2 + 20, 0x0100); /* tuple 2 no longer frozen */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), (int)(t2 + 21));
	pn_put16(got + t2 + 20, 0x0301); /* a non-hint bit of t_infomask */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), (int)(t2 + 20));
	pn_put16(got + t2 + 20, 0x0300);
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), -1);
	got[t0 + 40] ^= 1; /* payload */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), (int)(t0 + 40));
	got[t0 + 40] ^= 1;
	got[t0 + 19] ^= 0x01; /* t_infomask2 */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), (int)(t0 + 19));
	got[t0 + 19] ^= 0x01;
	got[5] ^= 0x10; /* pd_lsn */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), 5);
	got[5] ^= 0x10;
	got[10] = 4; /* pd_flags */
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), 10);
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_mask_uses_expected_line_pointers)
{
	uint8_t *init, exp[PAGE], got[PAGE];
	struct pn_oracle *o = oracle(1, 2, false, &init);
	uint32_t t0 = tuple_at(init, 0);
	memcpy(exp, init, PAGE);
	memcpy(got, exp, PAGE);
	/* found's item 0 points 40 bytes further: its "infomask" is payload in expected */
	pn_put16(got + 24, (uint16_t)(t0 + 40));
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), 24);
	pn_put16(got + 24, (uint16_t)t0);
	got[t0 + 40 + 21] ^= 0x01;
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), (int)(t0 + 61));
	/* and a hint flip where expected has a tuple is masked whatever found's pointers say */
	memcpy(got, exp, PAGE);
	pn_put16(got + 24, 0);
	pn_put16(got + 26, 0);
	got[t0 + 21] ^= 0x04;
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), 24);
	pn_put16(got + 24, (uint16_t)t0);
	pn_put16(got + 26, TUP);
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), -1);
	/* an expected page with no items (pd_lower 24) masks no tuple bytes */
	pn_put16(exp + 12, 24);
	pn_put16(got + 12, 24);
	ck_assert_int_eq(pn_oracle_compare(o, 0, exp, got), (int)(t0 + 21));
	pn_oracle_free(o);
	free(init);
}
END_TEST

START_TEST(test_mask_slru)
{
	uint8_t *init, exp[PAGE], got[PAGE];
	struct pn_oracle *o = oracle(1, 2, false, &init);
	memset(exp, 0, PAGE);
	memcpy(got, exp, PAGE);
	got[8] = 1; /* headerless: bytes 8..9 are status bits */
	ck_assert_int_eq(pn_oracle_compare(o, 1, exp, got), 8);
	got[8] = 0;
	got[9] = 0x40;
	ck_assert_int_eq(pn_oracle_compare(o, 2, exp, got), 9);
	pn_oracle_free(o);
	free(init);

	o = oracle(1, 2, true, &init);
	pn_put16(exp + 12, PAGE);
	pn_put16(exp + 14, PAGE);
	pn_put16(exp + 16, PAGE);
	pn_put16(exp + 18, PAGE | 4);
	memcpy(got, exp, PAGE);
	pn_put16(got + 8, 0x1234); /* headered: the checksum is masked */
	ck_assert_int_eq(pn_oracle_compare(o, 1, exp, got), -1);
	got[3] = 1;
	ck_assert_int_eq(pn_oracle_compare(o, 1, exp, got), 3);
	got[3] = 0;
	got[PAGE - 1] = 0x01;
	ck_assert_int_eq(pn_oracle_compare(o, 1, exp, got), (int)PAGE - 1);
	pn_oracle_free(o);
	free(init);
}
END_TEST

/* ---- property: the oracle equals a naive full replay --------------------------------------- */

enum ev_kind { EV_HOT = 0, EV_FREEZE, EV_DEDUP, EV_CLOG, EV_IMAGE, EV_COMMIT, EV_KINDS };

/* What one generated record means, in the test's own words. */
struct ev {
	uint8_t kind;
	uint8_t nblocks;
	uint32_t pages[2];
	uint64_t end;
	uint32_t xid;
	uint16_t item, im2, im; /* HOT_UPDATE; FREEZE: n items below */
	uint32_t val;
	uint16_t nfreeze, fitems[6], fmasks[6];
	uint8_t salt;
	uint8_t *image; /* full page as generated; the hole is zeroed here */
	uint16_t hole_off, hole_len;
};

struct world {
	uint32_t heap, slru, npages;
	bool headers;
	uint32_t seed;
	uint8_t *init;
	uint8_t *tip; /* the naive state after every event so far */
	struct ev *evs;
	uint32_t nevs;
	bool heap_only;    /* heap records only, few images (the benchmark) */
	uint32_t noracles; /* 1, or 3 to compare checkpoint budgets */
	/* os[0]: the default budget; os[1]: 3 pages, thinned all the time; os[2]: none */
	struct pn_oracle *os[3];
};

static void naive_apply(const struct world *w, uint32_t pg, uint8_t *p, const struct ev *e)
{
	switch (e->kind) {
	case EV_HOT: {
		uint8_t *t = p + tuple_at(p, e->item);
		pn_put32(t, e->xid);
		pn_put32(t + 4, 0);
		pn_put16(t + 18, e->im2);
		pn_put16(t + 20, e->im);
		pn_put32(t + 24, e->val);
		pn_put32(p + 20, e->xid);
		break;
	}
	case EV_FREEZE: /* rec_freeze's xl_heap_freeze_tuple: xmax 0, t_infomask2 1, the mask */
		for (uint32_t k = 0; k < e->nfreeze; k++) {
			uint8_t *t = p + tuple_at(p, e->fitems[k]);
			pn_put32(t + 4, 0);
			pn_put16(t + 18, 1);
			pn_put16(t + 20, e->fmasks[k]);
		}
		p[10] |= 0x04;
		break;
	case EV_DEDUP:
		for (uint32_t i = 0; i < NITEMS; i++)
			for (uint32_t j = 24; j < TUP; j++) {
				uint8_t *b = p + tuple_at(p, i) + j;
				*b = (uint8_t)(*b * 5 + e->salt + i);
			}
		break;
	case EV_CLOG: {
		uint32_t base = w->headers ? 24 : 0, bit = e->xid % ((PAGE - base) * 4) * 2;
		if (w->headers && pn_get16(p + 12) == 0) {
			pn_put16(p + 12, PAGE);
			pn_put16(p + 14, PAGE);
			pn_put16(p + 16, PAGE);
			pn_put16(p + 18, PAGE | 4);
		}
		p[base + bit / 8] |= (uint8_t)(1 << (bit % 8));
		break;
	}
	case EV_IMAGE:
		memcpy(p, e->image, PAGE);
		memset(p + e->hole_off, 0, e->hole_len);
		break;
	default: return;
	}
	if (pg < w->heap || w->headers)
		put_lsn(p, e->end);
}

static void naive_page(const struct world *w, uint32_t pg, uint64_t upto, uint8_t *out)
{
	memcpy(out, w->init + (size_t)pg * PAGE, PAGE);
	for (uint32_t i = 0; i < w->nevs && w->evs[i].end <= upto; i++)
		for (uint32_t b = 0; b < w->evs[i].nblocks; b++)
			if (w->evs[i].pages[b] == pg)
				naive_apply(w, pg, out, &w->evs[i]);
}

static void gen_heap_change(struct world *w, struct ev *e, uint32_t *s)
{
	e->pages[0] = below(s, w->heap);
	if (e->kind == EV_HOT) {
		e->item = (uint16_t)below(s, NITEMS);
		e->im2 = (uint16_t)below(s, 4);
		e->im = (uint16_t)(next_rand(s) & 0x0FFF);
		e->val = next_rand(s);
		if (below(s, 4) == 0) /* two blocks: the same change on two pages */
			e->pages[e->nblocks++] = below(s, w->heap);
	} else if (e->kind == EV_FREEZE) {
		e->nfreeze = (uint16_t)(1 + below(s, 6));
		for (uint32_t k = 0; k < e->nfreeze; k++) {
			e->fitems[k] = (uint16_t)below(s, NITEMS);
			e->fmasks[k] = (uint16_t)(below(s, 2) ? 0x0300 : next_rand(s) & 0x0FFF);
		}
	} else {
		e->salt = (uint8_t)next_rand(s);
	}
}

/* An image of the page as it stands, a few bytes changed, with a hole that keeps it whole. */
static void gen_image(struct world *w, struct ev *e, uint32_t *s)
{
	uint32_t pg = below(s, w->npages);
	bool heap = pg < w->heap;
	e->pages[0] = pg;
	e->image = malloc(PAGE);
	memcpy(e->image, w->tip + (size_t)pg * PAGE, PAGE);
	uint32_t lo = heap ? UPPER + 24 : (w->headers ? 24 : 0);
	for (uint32_t k = 0; k < 8; k++)
		e->image[lo + below(s, PAGE - lo)] ^= (uint8_t)next_rand(s);
	if (heap && below(s, 2)) {
		e->hole_off = LOWER;
		e->hole_len = UPPER - LOWER;
	} else if (!heap && below(s, 2)) {
		e->hole_off = (uint16_t)(lo + 1 + below(s, 1000));
		e->hole_len = (uint16_t)(1 + below(s, 3000));
	}
	memset(e->image + e->hole_off, 0x77, e->hole_len); /* never reaches a page */
}

static void gen_event(struct world *w, struct ev *e, uint32_t *s)
{
	static const uint8_t mix[] = {EV_HOT,  EV_HOT,  EV_HOT,  EV_HOT,   EV_FREEZE, EV_DEDUP,
				      EV_CLOG, EV_CLOG, EV_CLOG, EV_IMAGE, EV_COMMIT};
	static const uint8_t heap_mix[20] = {EV_FREEZE, EV_FREEZE, EV_DEDUP, EV_DEDUP, EV_IMAGE};
	memset(e, 0, sizeof(*e));
	e->kind = w->heap_only ? heap_mix[below(s, 20)] : mix[below(s, sizeof(mix))];
	e->xid = 3 + below(s, 3 * PAGE * 4);
	e->nblocks = 1;
	if (e->kind == EV_HOT || e->kind == EV_FREEZE || e->kind == EV_DEDUP)
		gen_heap_change(w, e, s);
	else if (e->kind == EV_CLOG)
		e->pages[0] = w->heap + below(s, w->slru);
	else if (e->kind == EV_IMAGE)
		gen_image(w, e, s);
	else
		e->nblocks = 0;
}

static void encode_event(const struct world *w, const struct ev *e, struct trec *t)
{
	uint16_t offnums[6];
	switch (e->kind) {
	case EV_HOT:
		rec_hot(t, e->xid, e->pages[0], (uint16_t)(e->item + 1), e->im2, e->im, e->val);
		if (e->nblocks == 2) {
			add_block(t, e->pages[1], 9);
			memcpy(t->data[1], t->data[0], 9);
		}
		break;
	case EV_FREEZE:
		for (uint32_t k = 0; k < e->nfreeze; k++)
			offnums[k] = (uint16_t)(e->fitems[k] + 1);
		rec_freeze(t, e->xid, e->pages[0], e->nfreeze, offnums, e->fmasks);
		break;
	case EV_DEDUP: rec_dedup(t, e->xid, e->pages[0], e->salt); break;
	case EV_CLOG: rec_clog(t, e->xid, e->pages[0], w->headers); break;
	case EV_IMAGE:
		rec_init(t, PN_RM_XLOG, 0xA0, 0);
		add_image(t, e->pages[0], e->image, e->hole_off, e->hole_len);
		break;
	default: rec_commit(t, e->xid); break;
	}
}

static void feed_all(struct world *w, struct ev *e, struct feeder *fs, uint32_t *s)
{
	static struct trec t;
	encode_event(w, e, &t);
	uint32_t gap = below(s, 3);
	uint64_t end = 0;
	for (uint32_t k = 0; k < w->noracles; k++) {
		uint64_t end_k = 0;
		EXPECT(feed_gap(&fs[k], &t, gap, &end_k));
		EXPECT(k == 0 || end_k == end);
		end = end_k;
	}
	e->end = end;
	for (uint32_t b = 0; b < e->nblocks; b++)
		naive_apply(w, e->pages[b], w->tip + (size_t)e->pages[b] * PAGE, e);
}

static void world_build(struct world *w, uint32_t nevs)
{
	uint32_t s = w->seed;
	struct feeder *fs = malloc(3 * sizeof(*fs));
	w->npages = w->heap + w->slru;
	w->init = initial_pages(w->heap, w->slru);
	w->tip = malloc((size_t)w->npages * PAGE);
	memcpy(w->tip, w->init, (size_t)w->npages * PAGE);
	w->evs = calloc(nevs, sizeof(*w->evs));
	for (uint32_t k = 0; k < w->noracles; k++) {
		w->os[k] = pn_oracle_new(w->heap, w->slru, PAGE, w->headers, w->init);
		ck_assert_ptr_nonnull(w->os[k]);
		feeder_init(&fs[k], w->os[k]);
	}
	if (w->noracles == 3) {
		pn_oracle_set_ckpt_budget(w->os[1], 3 * PAGE);
		pn_oracle_set_ckpt_budget(w->os[2], 0);
	}
	for (w->nevs = 0; w->nevs < nevs; w->nevs++) {
		gen_event(w, &w->evs[w->nevs], &s);
		feed_all(w, &w->evs[w->nevs], fs, &s);
	}
	free(fs);
}

static void world_free(struct world *w)
{
	for (uint32_t i = 0; i < w->nevs; i++)
		free(w->evs[i].image);
	free(w->evs);
	free(w->init);
	free(w->tip);
	for (uint32_t k = 0; k < w->noracles; k++)
		pn_oracle_free(w->os[k]);
}

static uint64_t random_upto(const struct world *w, uint32_t *s)
{
	const struct ev *e = &w->evs[below(s, w->nevs)];
	switch (below(s, 5)) {
	case 0: return e->end;
	case 1: return e->end - 1;
	case 2: return e->end + 8;
	case 3: return below(s, 50) == 0 ? 0 : UINT64_MAX;
	default: return LSN0 + below(s, (uint32_t)(w->evs[w->nevs - 1].end - LSN0 + 64));
	}
}

static void check_world(struct world *w, uint32_t queries)
{
	uint8_t naive[PAGE], got[PAGE];
	uint32_t s = w->seed ^ 0x5bd1e995u;
	char why[200];
	struct pn_oracle **all = w->os;
	for (uint32_t k = 0; k < w->noracles; k++)
		ck_assert_msg(pn_oracle_check(all[k], why, sizeof(why)), "%s", why);
	for (uint32_t q = 0; q < queries; q++) {
		uint32_t pg = below(&s, w->npages);
		uint64_t upto = random_upto(w, &s);
		naive_page(w, pg, upto, naive);
		for (uint32_t k = 0; k < w->noracles; k++) {
			pn_oracle_page(all[k], pg, upto, got);
			if (memcmp(got, naive, PAGE) != 0)
				ck_abort_msg("seed %u oracle %u page %u upto %llX: byte %d differs",
					     w->seed, k, pg, (unsigned long long)upto,
					     pn_oracle_compare(all[k], pg, naive, got));
		}
	}
	for (uint32_t pg = 0; pg < w->npages; pg++) { /* the naive tips agree with the end */
		pn_oracle_page(all[0], pg, UINT64_MAX, got);
		EXPECT(memcmp(got, w->tip + (size_t)pg * PAGE, PAGE) == 0);
	}
	for (uint32_t k = 0; k < w->noracles; k++)
		ck_assert_msg(pn_oracle_check(all[k], why, sizeof(why)), "%s", why);
}

START_TEST(test_property_naive_replay)
{
	struct world w = {.heap = 3,
			  .slru = 2,
			  .headers = _i & 1,
			  .seed = 1000u + (uint32_t)_i,
			  .noracles = 3};
	world_build(&w, 1500);
	struct pn_oracle_stats st, st_small, st_none;
	pn_oracle_stats(w.os[0], &st);
	pn_oracle_stats(w.os[1], &st_small);
	pn_oracle_stats(w.os[2], &st_none);
	ck_assert_uint_eq(st.records, 1500);
	ck_assert_uint_eq(st.misfits, 0);
	ck_assert_uint_gt(st.ckpts, 0);
	ck_assert_uint_le(st_small.ckpt_bytes, 3 * PAGE);
	ck_assert_uint_gt(st_small.ckpt_weight, 64);
	ck_assert_uint_eq(st_none.ckpts, 0);
	check_world(&w, 400);
	world_free(&w);
}
END_TEST

/* ---- performance ------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t uniform_upto(const struct world *w, uint32_t *s)
{
	uint64_t span = w->evs[w->nevs - 1].end - LSN0;
	uint64_t r = ((uint64_t)next_rand(s) << 32) | next_rand(s);
	return LSN0 + r % (span + 1);
}

/* Pages per second over `calls` pn_oracle_page calls; order: 0 random (page, upto),
 * 1 random upto then all pages, 2 increasing upto then all pages (crash points in order). */
static double bench(struct world *w, uint32_t order, uint32_t calls, uint64_t *sum)
{
	uint8_t out[PAGE];
	uint32_t s = 99 + order;
	uint64_t span = w->evs[w->nevs - 1].end - LSN0, upto = 0;
	double t0 = now_s();
	for (uint32_t q = 0; q < calls; q++) {
		uint32_t pg = q % w->heap;
		if (order == 0)
			pg = below(&s, w->heap);
		if (order == 0 || (order == 1 && pg == 0))
			upto = uniform_upto(w, &s);
		else if (order == 2 && pg == 0)
			upto = LSN0 + span * q / calls;
		pn_oracle_page(w->os[0], pg, upto, out);
		*sum += out[UPPER + 30];
	}
	return calls / (now_s() - t0);
}

/* 16 heap pages x 10,000 records each (HOT 75 %, FREEZE, DEDUP 10 % each, images 5 %). */
START_TEST(test_performance)
{
	struct world w = {.heap = 16,
			  .slru = 0,
			  .headers = true,
			  .seed = 77,
			  .heap_only = true,
			  .noracles = 1};
	double t0 = now_s();
	world_build(&w, 16 * 10000);
	double t1 = now_s();
	uint64_t sum = 0;
	double random = bench(&w, 0, 160000, &sum);
	double sweeps = bench(&w, 1, 160000, &sum);
	double ordered = bench(&w, 2, 160000, &sum);
	struct pn_oracle_stats st;
	pn_oracle_stats(w.os[0], &st);
	fprintf(stderr,
		"oracle: %llu records (%llu page changes) logged, with the test's own "
		"replay, in %.2f s; pn_oracle_page: random %.0f pages/s, sweeps %.0f pages/s, "
		"ordered sweeps %.0f pages/s; weight %u, %llu checkpoints (%.1f MiB), "
		"payload %.1f MiB [%u]\n",
		(unsigned long long)st.records, (unsigned long long)st.ops, t1 - t0, random, sweeps,
		ordered, st.ckpt_weight, (unsigned long long)st.ckpts, st.ckpt_bytes / 1048576.0,
		st.payload_bytes / 1048576.0, (unsigned)(sum & 0xF));
	ck_assert_uint_eq(st.records, 160000);
	check_world(&w, 20);
	world_free(&w);
}
END_TEST

/* ---- runner ------------------------------------------------------------------------------- */

static Suite *oracle_suite(void)
{
	Suite *s = suite_create("oracle");
	TCase *kinds = tcase_create("kinds");
	TCase *upto = tcase_create("upto");
	TCase *mask = tcase_create("mask");
	TCase *prop = tcase_create("property");
	TCase *perf = tcase_create("performance");

	tcase_add_test(kinds, test_hot_update);
	tcase_add_test(kinds, test_freeze);
	tcase_add_test(kinds, test_dedup);
	tcase_add_test(kinds, test_slru_headerless);
	tcase_add_test(kinds, test_slru_headered);
	tcase_add_test(kinds, test_image_restore);
	tcase_add_test(kinds, test_image_wins_over_data);
	tcase_add_test(kinds, test_no_page_change);
	tcase_add_test(kinds, test_misfit_counted);
	tcase_add_test(kinds, test_rel_size);
	tcase_add_test(kinds, test_refused);
	tcase_add_test(kinds, test_new_bad_arguments);
	tcase_add_test(upto, test_upto_prefix);
	tcase_add_test(mask, test_mask_heap);
	tcase_add_test(mask, test_mask_uses_expected_line_pointers);
	tcase_add_test(mask, test_mask_slru);
	tcase_add_loop_test(prop, test_property_naive_replay, 0, 6);
	tcase_add_test(perf, test_performance);
	TCase *all[] = {kinds, upto, mask, prop, perf};
	for (size_t i = 0; i < PN_ARRAY_LEN(all); i++) {
		tcase_set_timeout(all[i], 300);
		suite_add_tcase(s, all[i]);
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(oracle_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

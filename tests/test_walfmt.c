/*
 * test_walfmt.c: unit tests for the WAL format (src/format/walfmt.c), CRC-32C (src/base/crc32c.c) and
 * the page checksum (src/base/checksum.c). Label: unit.
 *
 * Reference values come from outside this code: record sizes from postgres-facts.md
 * section 3 (measured on PostgreSQL 15), LSN arithmetic from real pg_waldump output
 * (research/pg15-waldump/dump1.txt), CRC-32C from RFC 3720's test vectors, page checksums
 * from PostgreSQL 15.18's pg_checksums run on the pages vector_page() builds.
 */
#include "checksum.h"
#include "crc32c.h"
#include "env.h"
#include "walfmt.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 8192u
#define KIB64 (64u * 1024u)
#define MIB16 (16u * 1024u * 1024u)
#define SYSID 7300000000000000001ull
#define HI(l) (unsigned)((l) >> 32)
#define LO(l) (unsigned)(l)

/* For hot loops: ck_assert_* reports a mark point to the runner (a pipe write) per call. */
#define EXPECT(cond)                                                                   \
	do {                                                                           \
		if (!(cond))                                                           \
			ck_abort_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond); \
	} while (0)

/* ---- deterministic data ---------------------------------------------------------------- */

static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static void fill_random(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(next_rand(&s) >> 24);
}

/* Bytes for images, block data and main data: 4 pages and a little more. */
static const uint8_t *pattern(void)
{
	static uint8_t bytes[4 * PAGE + 512];
	static bool ready;
	if (!ready) {
		fill_random(bytes, sizeof(bytes), 42);
		ready = true;
	}
	return bytes;
}

/* Pages given to PostgreSQL 15's pg_checksums to get reference checksums (see top). */
static void vector_page(uint8_t *page, uint32_t seed)
{
	fill_random(page, PAGE, seed);
	page[8] = page[9] = 0; /* pd_checksum */
	page[14] = 0x00;       /* pd_upper = 0x1F00: not a "new" page */
	page[15] = 0x1F;
}

/* ---- record builders ------------------------------------------------------------------- */

static struct pn_wal_record rec_main(uint8_t rmid, uint8_t info, uint32_t main_len)
{
	struct pn_wal_record r = {.rmid = rmid, .info = info, .xid = 700};
	r.main_data = pattern() + 100;
	r.main_len = main_len;
	return r;
}

static struct pn_wal_record rec_commit(void) { return rec_main(PN_RM_XACT, 0x00, 8); }

static struct pn_wal_record rec_checkpoint(void) { return rec_main(PN_RM_XLOG, 0x10, 88); }

/* Heap HOT_UPDATE: 14 B xl_heap_update, block data = 5 B xl_heap_header + tuple bytes. */
static struct pn_wal_record rec_hot_update(uint16_t data_len)
{
	struct pn_wal_record r = rec_main(PN_RM_HEAP, 0x40, 14);
	r.nblocks = 1;
	r.blocks[0].blkno = 3;
	r.blocks[0].data = pattern() + 300;
	r.blocks[0].data_len = data_len;
	return r;
}

static struct pn_wal_record rec_fpi(uint16_t hole_offset, uint16_t hole_length)
{
	struct pn_wal_record r = rec_main(PN_RM_XLOG, 0xA0, 0); /* FPI_FOR_HINT */
	r.nblocks = 1;
	r.blocks[0].blkno = 5;
	r.blocks[0].has_image = true;
	r.blocks[0].image_apply = true;
	r.blocks[0].image = pattern();
	r.blocks[0].hole_offset = hole_offset;
	r.blocks[0].hole_length = hole_length;
	return r;
}

/* Heap2 VISIBLE: a VM page image (fork 2) and the heap block, SAME_REL. */
static struct pn_wal_record rec_visible(void)
{
	struct pn_wal_record r = rec_main(PN_RM_HEAP2, 0x40, 5);
	r.nblocks = 2;
	r.blocks[0].fork = 2;
	r.blocks[0].has_image = true;
	r.blocks[0].image_apply = true;
	r.blocks[0].image = pattern() + PAGE;
	r.blocks[1].blkno = 1;
	return r;
}

/* Four blocks, all with images (two with holes), data, a shift, long main data. */
static struct pn_wal_record rec_four(void)
{
	struct pn_wal_record r = rec_main(PN_RM_BTREE, 0x10, 300);
	r.nblocks = 4;
	for (unsigned i = 0; i < 4; i++) {
		struct pn_wal_block *b = &r.blocks[i];
		b->blkno = 40 + i;
		b->has_image = true;
		b->image_apply = i != 2;
		b->image = pattern() + i * PAGE;
		b->hole_offset = i % 2 ? (uint16_t)(64 + 8 * i) : 0;
		b->hole_length = i % 2 ? (uint16_t)(1000 * i) : 0;
		b->data = pattern() + 7;
		b->data_len = (uint16_t)(i * 10);
	}
	r.blocks[3].has_shift = true;
	r.blocks[3].shift_source = 7;
	r.blocks[3].shift_target = 0x80 | 9;
	return r;
}

/* XLOG NOOP whose xl_tot_len is exactly tot_len (a multiple of 8, >= 32). */
static struct pn_wal_record rec_filler(uint32_t tot_len)
{
	uint32_t main_len = tot_len - PN_WAL_RECORD_HEADER - 2;
	if (main_len > 255)
		main_len -= 3;
	struct pn_wal_record r = rec_main(PN_RM_XLOG, 0x20, main_len);
	r.main_data = pattern();
	return r;
}

/* ---- sizes and layout ------------------------------------------------------------------ */

static uint32_t size_of(struct pn_wal_record r)
{
	static uint8_t buf[5 * PAGE];
	uint32_t size = pn_wal_record_size(&r, PAGE);
	EXPECT(pn_wal_record_encode(&r, PAGE, buf) == size);
	EXPECT(pn_get32(buf) == size);
	return size;
}

START_TEST(test_sizes_documented)
{
	/* 24 + 20 (block header, RelFileLocator, BlockNumber) + 2 + 14 + 5 + 4 = 69 */
	ck_assert_uint_eq(size_of(rec_hot_update(9)), 69);
	ck_assert_uint_eq(size_of(rec_hot_update(29)), 24 + 20 + 2 + 14 + 29);
	struct pn_wal_record r = rec_fpi(0, 0);
	ck_assert_uint_eq(size_of(r), 8241);
	ck_assert_uint_eq(pn_wal_record_fpi_bytes(&r, PAGE), 8192);
	ck_assert_uint_eq(size_of(rec_commit()), 34);
	ck_assert_uint_eq(size_of(rec_checkpoint()), 114);
	r = rec_fpi(408, 112);
	ck_assert_uint_eq(size_of(r), 24 + 4 + 5 + 12 + 4 + 8080);
	ck_assert_uint_eq(pn_wal_record_fpi_bytes(&r, PAGE), 8080);
	r = rec_visible();
	ck_assert_uint_eq(size_of(r), 8256); /* 64 + 8192, as pg_waldump printed */
	ck_assert_uint_eq(size_of(r) - pn_wal_record_fpi_bytes(&r, PAGE), 64);
	/* Heap INSERT, one int4: 24 + 20 + 2 + 3 + 5 + 5 = 59 */
	r = rec_hot_update(10);
	r.main_len = 3;
	ck_assert_uint_eq(size_of(r), 59);
	/* Heap LOCK carrying an FPI: rec 59 = 24 + 25 + 2 + 8 */
	r = rec_fpi(0, 0);
	r.main_len = 8;
	r.main_data = pattern();
	ck_assert_uint_eq(size_of(r) - pn_wal_record_fpi_bytes(&r, PAGE), 59);
}
END_TEST

START_TEST(test_sizes_headers)
{
	ck_assert_uint_eq(size_of(rec_main(PN_RM_XLOG, 0x40, 0)), 24);
	ck_assert_uint_eq(size_of(rec_main(PN_RM_XLOG, 0, 255)), 24 + 2 + 255);
	ck_assert_uint_eq(size_of(rec_main(PN_RM_XLOG, 0, 256)), 24 + 5 + 256);
	struct pn_wal_record r = rec_hot_update(9);
	r.blocks[0].has_shift = true;
	ck_assert_uint_eq(size_of(r), 71);
	r = rec_four();
	uint32_t want = 24 + 5 + 300 + 4 * (4 + 5 + 4) + 12 + 2 + (0 + 10 + 20 + 30) +
			(4 * PAGE - 1000 - 3000);
	ck_assert_uint_eq(size_of(r), want);
	ck_assert_uint_eq(pn_wal_record_fpi_bytes(&r, PAGE), 4 * PAGE - 4000);
	for (uint32_t t = 32; t < 3 * PAGE; t += 8)
		EXPECT(size_of(rec_filler(t)) == t);
}
END_TEST

START_TEST(test_encode_layout)
{
	static uint8_t buf[3 * PAGE];
	struct pn_wal_record r = rec_visible();
	r.xid = 0x01020304;
	r.prev = 0x0000000501769CC0ull;
	r.blocks[1].data = pattern() + 9;
	r.blocks[1].data_len = 3;
	r.blocks[1].will_init = true;
	uint32_t n = pn_wal_record_encode(&r, PAGE, buf);

	ck_assert_uint_eq(n, 8256 + 3);
	ck_assert_uint_eq(pn_get32(buf + 4), 0x01020304);
	ck_assert(pn_get64(buf + 8) == 0x0000000501769CC0ull);
	ck_assert_uint_eq(buf[16], 0x40);
	ck_assert_uint_eq(buf[17], PN_RM_HEAP2);
	ck_assert_uint_eq(buf[18] | buf[19], 0);
	const uint8_t *p = buf + 24; /* block 0: header, image header, rel, blkno */
	ck_assert_uint_eq(p[0], 0);
	ck_assert_uint_eq(p[1], 2 | PN_BKP_HAS_IMAGE);
	ck_assert_uint_eq(pn_get16(p + 2), 0);
	ck_assert_uint_eq(pn_get16(p + 4), PAGE);
	ck_assert_uint_eq(pn_get16(p + 6), 0);
	ck_assert_uint_eq(p[8], PN_BKPIMAGE_APPLY);
	ck_assert_uint_eq(pn_get32(p + 9), 1663);
	ck_assert_uint_eq(pn_get32(p + 13), 5);
	ck_assert_uint_eq(pn_get32(p + 17), 16384);
	ck_assert_uint_eq(pn_get32(p + 21), 0);
	p += 25; /* block 1: SAME_REL, no RelFileLocator */
	ck_assert_uint_eq(p[0], 1);
	ck_assert_uint_eq(p[1], PN_BKP_HAS_DATA | PN_BKP_WILL_INIT | PN_BKP_SAME_REL);
	ck_assert_uint_eq(pn_get16(p + 2), 3);
	ck_assert_uint_eq(pn_get32(p + 4), 1);
	p += 8;
	ck_assert_uint_eq(p[0], 255);
	ck_assert_uint_eq(p[1], 5);
	p += 2; /* payloads: block 0's image, block 1's data, main data */
	ck_assert(memcmp(p, pattern() + PAGE, PAGE) == 0);
	ck_assert(memcmp(p + PAGE, pattern() + 9, 3) == 0);
	ck_assert(memcmp(p + PAGE + 3, pattern() + 100, 5) == 0);
	ck_assert_uint_eq((uint32_t)(p + PAGE + 8 - buf), n);
	/* CRC-32C over the payload, then over the header's first 20 bytes */
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), buf + 24, n - 24);
	crc = pn_crc32c_final(pn_crc32c_update(crc, buf, 20));
	ck_assert_uint_eq(pn_get32(buf + 20), crc);
}
END_TEST

START_TEST(test_encode_hole_and_long_main)
{
	static uint8_t buf[2 * PAGE];
	struct pn_wal_record r = rec_fpi(408, 112);
	r.blocks[0].image_apply = false;
	r.main_data = pattern() + 50;
	r.main_len = 1000;
	uint32_t n = pn_wal_record_encode(&r, PAGE, buf);
	const uint8_t *p = buf + 24;

	ck_assert_uint_eq(p[1], PN_BKP_HAS_IMAGE);
	ck_assert_uint_eq(pn_get16(p + 4), PAGE - 112);
	ck_assert_uint_eq(pn_get16(p + 6), 408);
	ck_assert_uint_eq(p[8], PN_BKPIMAGE_HAS_HOLE);
	p += 4 + 5 + 12 + 4;
	ck_assert_uint_eq(p[0], 254);
	ck_assert_uint_eq(pn_get32(p + 1), 1000);
	p += 5;
	ck_assert(memcmp(p, pattern(), 408) == 0);
	ck_assert(memcmp(p + 408, pattern() + 520, PAGE - 520) == 0);
	ck_assert(memcmp(p + PAGE - 112, pattern() + 50, 1000) == 0);
	ck_assert_uint_eq(n, 24 + 25 + 5 + PAGE - 112 + 1000);
}
END_TEST

/* ---- decode ------------------------------------------------------------------------------ */

static void assert_same_record(const struct pn_wal_record *a, const struct pn_wal_record *b,
			       uint32_t page_size)
{
	ck_assert_uint_eq(a->xid, b->xid);
	ck_assert_uint_eq(a->rmid, b->rmid);
	ck_assert_uint_eq(a->info, b->info);
	ck_assert(a->prev == b->prev);
	ck_assert_uint_eq(a->nblocks, b->nblocks);
	ck_assert_uint_eq(a->main_len, b->main_len);
	ck_assert(a->main_len == 0 || memcmp(a->main_data, b->main_data, a->main_len) == 0);
	for (unsigned i = 0; i < a->nblocks; i++) {
		const struct pn_wal_block *x = &a->blocks[i], *y = &b->blocks[i];
		ck_assert_uint_eq(x->blkno, y->blkno);
		ck_assert_uint_eq(x->fork, y->fork);
		ck_assert_uint_eq(x->will_init, y->will_init);
		ck_assert_uint_eq(x->data_len, y->data_len);
		ck_assert(x->data_len == 0 || memcmp(x->data, y->data, x->data_len) == 0);
		ck_assert_uint_eq(x->has_shift, y->has_shift);
		if (x->has_shift) {
			ck_assert_uint_eq(x->shift_source, y->shift_source);
			ck_assert_uint_eq(x->shift_target, y->shift_target);
			ck_assert_uint_eq(x->ext_len, y->ext_len);
			ck_assert(memcmp(x->ext, y->ext, x->ext_len) == 0);
		}
		ck_assert_uint_eq(x->has_image, y->has_image);
		if (!x->has_image)
			continue;
		ck_assert_uint_eq(x->image_apply, y->image_apply);
		ck_assert_uint_eq(x->hole_length, y->hole_length);
		uint32_t hole_end = x->hole_offset + x->hole_length;
		if (x->hole_length > 0)
			ck_assert_uint_eq(x->hole_offset, y->hole_offset);
		for (uint32_t k = 0; k < page_size; k++) {
			bool in_hole = x->hole_length > 0 && k >= x->hole_offset && k < hole_end;
			EXPECT(y->image[k] == (in_hole ? 0 : x->image[k]));
		}
	}
}

static struct pn_wal_record random_record(uint32_t *s, uint32_t page_size)
{
	struct pn_wal_record r = rec_main((uint8_t)(next_rand(s) % (PN_RM_MAX + 1)),
					  (uint8_t)next_rand(s), 0);
	uint32_t pick = next_rand(s) % 6;
	r.xid = next_rand(s);
	r.prev = ((pn_lsn)next_rand(s) << 32) | next_rand(s);
	r.main_len = pick == 0 ? 0 : pick == 1 ? 255 : pick == 2 ? 256 : next_rand(s) % 2000;
	r.main_data = pattern() + next_rand(s) % 256;
	r.nblocks = (uint8_t)(next_rand(s) % (PN_WAL_MAX_BLOCKS + 1));
	for (unsigned i = 0; i < r.nblocks; i++) {
		struct pn_wal_block *b = &r.blocks[i];
		b->blkno = next_rand(s);
		b->fork = (uint8_t)(next_rand(s) % 4);
		b->will_init = next_rand(s) % 4 == 0;
		b->data_len = (uint16_t)(next_rand(s) % 3 == 0 ? 0 : next_rand(s) % 300);
		b->data = pattern() + next_rand(s) % 512;
		b->has_shift = next_rand(s) % 3 == 0;
		b->shift_source = (uint8_t)next_rand(s);
		/* bit 0x40 of the target byte says an extension follows */
		b->shift_target = (uint8_t)(next_rand(s) & ~PN_WAL_SHIFT_HAS_EXT);
		b->ext_len = b->has_shift ? (uint8_t)(next_rand(s) % (PN_WAL_BLOCK_EXT_MAX + 1))
					  : 0;
		memcpy(b->ext, pattern() + next_rand(s) % 512, b->ext_len);
		b->has_image = next_rand(s) % 2 == 0;
		b->image_apply = next_rand(s) % 2 == 0;
		b->image = pattern() + i * PAGE;
		if (b->has_image && next_rand(s) % 3 != 0) {
			b->hole_offset = (uint16_t)(24 + next_rand(s) % (page_size / 2));
			b->hole_length = (uint16_t)(1 +
						    next_rand(s) % (page_size - b->hole_offset));
		}
	}
	return r;
}

START_TEST(test_decode_roundtrip)
{
	static uint8_t buf[5 * PAGE], images[PN_WAL_MAX_BLOCKS * PAGE];
	uint32_t s = 12345;
	char why[128];

	for (int k = 0; k < 600; k++) {
		uint32_t page_size = k % 3 == 2 ? 4096 : PAGE;
		struct pn_wal_record r = random_record(&s, page_size), d;
		uint32_t n = pn_wal_record_encode(&r, page_size, buf);
		ck_assert_uint_eq(n, pn_wal_record_size(&r, page_size));
		memset(images, 0xEE, sizeof(images)); /* holes must come back as zeros */
		ck_assert_msg(pn_wal_record_decode(buf, n, page_size, images, &d, why, sizeof(why)),
			      "record %d: %s", k, why);
		assert_same_record(&r, &d, page_size);
	}
}
END_TEST

/* A row's block-header extension (umbra-remap's remap header): 1 + ext_len bytes after the
 * shift header, counted in the size, and decoded with the shift target unchanged. */
START_TEST(test_block_extension)
{
	static uint8_t buf[PAGE], images[PN_WAL_MAX_BLOCKS * PAGE];
	struct pn_wal_record r = rec_hot_update(9), d;
	char why[128];
	r.blocks[0].has_shift = true;
	r.blocks[0].shift_source = 1;
	r.blocks[0].shift_target = 2;
	uint32_t plain = size_of(r);
	r.blocks[0].ext_len = PN_WAL_BLOCK_EXT_MAX;
	memcpy(r.blocks[0].ext, pattern() + 3, PN_WAL_BLOCK_EXT_MAX);
	ck_assert_uint_eq(size_of(r), plain + 1 + PN_WAL_BLOCK_EXT_MAX);
	uint32_t n = pn_wal_record_encode(&r, PAGE, buf);
	ck_assert_uint_eq(n, plain + 1 + PN_WAL_BLOCK_EXT_MAX);
	ck_assert_msg(pn_wal_record_decode(buf, n, PAGE, images, &d, why, sizeof(why)), "%s", why);
	assert_same_record(&r, &d, PAGE);
	ck_assert_uint_eq(d.blocks[0].shift_target, 2);
	ck_assert_uint_eq(d.blocks[0].ext_len, PN_WAL_BLOCK_EXT_MAX);
	ck_assert(memcmp(d.blocks[0].ext, pattern() + 3, PN_WAL_BLOCK_EXT_MAX) == 0);
	r.blocks[0].ext_len = 0; /* without one: no extension decoded */
	n = pn_wal_record_encode(&r, PAGE, buf);
	ck_assert(pn_wal_record_decode(buf, n, PAGE, images, &d, why, sizeof(why)));
	ck_assert_uint_eq(d.blocks[0].ext_len, 0);
}
END_TEST

START_TEST(test_decode_detects_every_flipped_byte)
{
	static uint8_t buf[3 * PAGE], images[PN_WAL_MAX_BLOCKS * PAGE];
	struct pn_wal_record r = rec_four(), d;
	r.blocks[0].has_image = r.blocks[2].has_image = false; /* ~15 KB */
	uint32_t n = pn_wal_record_encode(&r, PAGE, buf);
	char why[128];

	ck_assert(pn_wal_record_decode(buf, n, PAGE, images, &d, why, sizeof(why)));
	for (uint32_t i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			uint8_t flip = k == 0 ? 0x01 : 0xFF;
			buf[i] ^= flip;
			bool ok = pn_wal_record_decode(buf, n, PAGE, images, &d, why, sizeof(why));
			buf[i] ^= flip;
			EXPECT(!ok);
			if (i >= 4)
				EXPECT(strcmp(why,
					      "incorrect resource manager data checksum in record") ==
				       0);
			else
				EXPECT(strcmp(why, "record with invalid length") == 0);
		}
	}
}
END_TEST

static void reseal(uint8_t *rec)
{
	uint32_t n = pn_get32(rec);
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), rec + 24, n - 24);
	pn_put32(rec + 20, pn_crc32c_final(pn_crc32c_update(crc, rec, 20)));
}

static const char *decode_error(struct pn_wal_record r, void (*mutate)(uint8_t *rec))
{
	static uint8_t buf[2 * PAGE], images[PN_WAL_MAX_BLOCKS * PAGE];
	static char why[128];
	struct pn_wal_record d;
	uint32_t n = pn_wal_record_encode(&r, PAGE, buf);
	mutate(buf);
	ck_assert_uint_eq(pn_get32(buf), n);
	reseal(buf);
	ck_assert(!pn_wal_record_decode(buf, n, PAGE, images, &d, why, sizeof(why)));
	return why;
}

static void clear_has_data(uint8_t *rec) { rec[25] &= (uint8_t)~PN_BKP_HAS_DATA; }
static void zero_data_len(uint8_t *rec) { pn_put16(rec + 26, 0); }
static void set_same_rel(uint8_t *rec) { rec[25] |= PN_BKP_SAME_REL; }
static void bad_block_id(uint8_t *rec) { rec[24] = 7; }
static void skip_block_id(uint8_t *rec) { rec[24] = 1; }
static void grow_main_len(uint8_t *rec) { rec[24 + 20 + 1] = 15; }
static void hole_without_flag(uint8_t *rec) { rec[24 + 8] &= (uint8_t)~PN_BKPIMAGE_HAS_HOLE; }
static void compressed_image(uint8_t *rec) { rec[24 + 8] |= 0x04; }

START_TEST(test_decode_structure_errors)
{
	ck_assert_str_eq(decode_error(rec_hot_update(9), clear_has_data),
			 "BKPBLOCK_HAS_DATA not set, but data length is 9");
	ck_assert_str_eq(decode_error(rec_hot_update(9), zero_data_len),
			 "BKPBLOCK_HAS_DATA set, but no data included");
	ck_assert_str_eq(decode_error(rec_hot_update(9), set_same_rel),
			 "BKPBLOCK_SAME_REL set but no previous rel");
	ck_assert_str_eq(decode_error(rec_hot_update(9), bad_block_id), "invalid block_id 7");
	ck_assert_str_eq(decode_error(rec_hot_update(9), skip_block_id), "out-of-order block_id 1");
	ck_assert_str_eq(decode_error(rec_hot_update(9), grow_main_len),
			 "record with invalid length");
	ck_assert_str_eq(decode_error(rec_fpi(408, 112), hole_without_flag),
			 "BKPIMAGE_HAS_HOLE not set, but hole offset 408 length 112");
	ck_assert_str_eq(decode_error(rec_fpi(0, 0), compressed_image),
			 "unsupported bimg_info 06 (compressed image)");
}
END_TEST

/* ---- CRC-32C ------------------------------------------------------------------------------ */

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static uint32_t crc_with(crc_fn f, const void *p, size_t n)
{
	return pn_crc32c_final(f(pn_crc32c_init(), p, n));
}

static void check_vectors(crc_fn f)
{
	uint8_t buf[32];
	ck_assert_uint_eq(crc_with(f, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(crc_with(f, "", 0), 0);
	memset(buf, 0, 32);
	ck_assert_uint_eq(crc_with(f, buf, 32), 0x8A9136AAu); /* RFC 3720 B.4 */
	memset(buf, 0xFF, 32);
	ck_assert_uint_eq(crc_with(f, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	ck_assert_uint_eq(crc_with(f, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	ck_assert_uint_eq(crc_with(f, buf, 32), 0x113FDB5Cu);
}

START_TEST(test_crc32c_vectors)
{
	check_vectors(pn_crc32c_update_sw);
	check_vectors(pn_crc32c_update);
	if (pn_crc32c_hw_available())
		check_vectors(pn_crc32c_update_hw);
	else
		fprintf(stderr, "test_walfmt: no SSE4.2 here, hardware CRC path not tested\n");
}
END_TEST

START_TEST(test_crc32c_paths_agree)
{
	static uint8_t buf[4096 + 64];
	uint32_t s = 99;
	bool hw = pn_crc32c_hw_available();

	fill_random(buf, sizeof(buf), 7);
	for (size_t off = 0; off < 16; off++) {
		for (size_t len = 0; len <= 700; len++) {
			uint32_t seed = next_rand(&s);
			uint32_t sw = pn_crc32c_update_sw(seed, buf + off, len);
			EXPECT(pn_crc32c_update(seed, buf + off, len) == sw);
			if (hw)
				EXPECT(pn_crc32c_update_hw(seed, buf + off, len) == sw);
		}
	}
	static uint8_t big[3 * 8192 + 64];
	fill_random(big, sizeof(big), 11);
	for (int k = 0; k < 400; k++) { /* long inputs: the three-stream path and its tails */
		size_t off = next_rand(&s) % 64, len = next_rand(&s) % (3 * 8192);
		if (k < 8)
			len = (size_t[]){
				1008, 1009, 8160, 8159, 8192, 8192 + 1008, 3 * 8160, 1007}[k];
		uint32_t seed = next_rand(&s);
		uint32_t sw = pn_crc32c_update_sw(seed, big + off, len);
		EXPECT(pn_crc32c_update(seed, big + off, len) == sw);
		if (hw)
			EXPECT(pn_crc32c_update_hw(seed, big + off, len) == sw);
	}
	for (int k = 0; k < 200; k++) { /* a fold: any split gives the same CRC */
		size_t len = next_rand(&s) % 4096, cut = len == 0 ? 0 : next_rand(&s) % len;
		uint32_t whole = pn_crc32c_update_sw(~0u, buf, len);
		uint32_t split = pn_crc32c_update(pn_crc32c_update(~0u, buf, cut), buf + cut,
						  len - cut);
		ck_assert_uint_eq(split, whole);
	}
}
END_TEST

/* ---- positions ------------------------------------------------------------------------------ */

START_TEST(test_positions_fixed_points)
{
	ck_assert(pn_wal_bytepos_to_recptr(0, KIB64) == 40);
	ck_assert(pn_wal_bytepos_to_endrecptr(0, KIB64) == 0);
	ck_assert(pn_wal_bytepos_to_recptr(8151, KIB64) == 8191);
	ck_assert(pn_wal_bytepos_to_recptr(8152, KIB64) == PAGE + 24);
	ck_assert(pn_wal_bytepos_to_endrecptr(8152, KIB64) == PAGE);
	ck_assert(pn_wal_bytepos_to_endrecptr(8153, KIB64) == PAGE + 25);
	ck_assert(pn_wal_bytepos_to_recptr(8152 + 8168, KIB64) == 2 * PAGE + 24);
	uint64_t per_seg = 8 * 8168 - 16;
	ck_assert(pn_wal_bytepos_to_recptr(per_seg - 1, KIB64) == KIB64 - 1);
	ck_assert(pn_wal_bytepos_to_recptr(per_seg, KIB64) == KIB64 + 40);
	ck_assert(pn_wal_bytepos_to_endrecptr(per_seg, KIB64) == KIB64);
	ck_assert(pn_wal_recptr_to_bytepos(KIB64, KIB64) == per_seg);
	ck_assert(pn_wal_recptr_to_bytepos(KIB64 + 40, KIB64) == per_seg);
	ck_assert(pn_wal_recptr_to_bytepos(KIB64 + PAGE, KIB64) == per_seg + 8152);
	ck_assert_uint_eq(pn_wal_page_header_size(0, KIB64), 40);
	ck_assert_uint_eq(pn_wal_page_header_size(PAGE, KIB64), 24);
	ck_assert_uint_eq(pn_wal_page_header_size(KIB64, KIB64), 40);
	ck_assert_uint_eq(pn_wal_page_header_size(MIB16 - PAGE, MIB16), 24);
	ck_assert_uint_eq(pn_wal_page_header_size(5ull * MIB16, MIB16), 40);
	/* The end of WAL in postgres-facts.md 12: a segment's first record is at +40. */
	ck_assert(pn_wal_bytepos_to_recptr(pn_wal_recptr_to_bytepos(0x14000000, MIB16), MIB16) ==
		  0x14000028);
}
END_TEST

/* Real PostgreSQL 15 WAL (pg_waldump, dump1.txt): start + MAXALIGN(tot_len) -> next start. */
START_TEST(test_positions_match_pg_waldump)
{
	static const struct {
		pn_lsn start;
		uint32_t tot_len;
		pn_lsn next;
	} recs[] = {
		{0x01769CC0, 8213, 0x0176BCF0},
		{0x0176BE90, 8181, 0x0176DEA0},
		{0x017695E8, 1749, 0x01769CC0},
	};
	for (size_t i = 0; i < PN_ARRAY_LEN(recs); i++) {
		uint64_t b = pn_wal_recptr_to_bytepos(recs[i].start, MIB16);
		b += PN_ALIGN8(recs[i].tot_len);
		ck_assert(pn_wal_bytepos_to_recptr(b, MIB16) == recs[i].next);
	}
}
END_TEST

static void check_bytepos(uint64_t b, uint32_t seg_size, pn_lsn *last)
{
	pn_lsn rec = pn_wal_bytepos_to_recptr(b, seg_size);
	pn_lsn end = pn_wal_bytepos_to_endrecptr(b, seg_size);
	uint32_t hdr = pn_wal_page_header_size(rec - rec % PAGE, seg_size);

	EXPECT(pn_wal_recptr_to_bytepos(rec, seg_size) == b);
	EXPECT(pn_wal_recptr_to_bytepos(end, seg_size) == b);
	EXPECT(rec % PAGE >= hdr);
	if (rec % PAGE == hdr)
		EXPECT(end == rec - hdr); /* a page start: the end is the boundary */
	else
		EXPECT(end == rec);
	EXPECT(*last == 0 || rec > *last);
	*last = rec;
}

START_TEST(test_positions_roundtrip_64k)
{
	uint64_t per_seg = 8 * 8168 - 16;
	pn_lsn last = 0;
	for (uint64_t b = 0; b < 4 * per_seg + 100; b++)
		check_bytepos(b, KIB64, &last);
	ck_assert(last > 4 * (pn_lsn)KIB64);
}
END_TEST

/* The insert path's arithmetic: from any start, any length (above 0) on, the same end and next start
 * as the byte-position conversions (across pages, segment starts and exact page ends). */
static void check_advance(uint64_t b, uint64_t n, uint32_t seg_size)
{
	pn_lsn end, next;
	pn_wal_lsn_advance(pn_wal_bytepos_to_recptr(b, seg_size), n, seg_size, &end, &next);
	EXPECT(end == pn_wal_bytepos_to_endrecptr(b + n, seg_size));
	EXPECT(next == pn_wal_bytepos_to_recptr(b + n, seg_size));
}

START_TEST(test_positions_advance)
{
	static const uint64_t lens[] = {8, 24, 8144, 8152, 8160, 8168, 8176, 16336, 3 * 8168 + 8};
	uint64_t per_seg_64k = 8 * 8168 - 16, per_seg_16m = 2048 * 8168 - 16;
	for (uint64_t b = 0; b < 3 * per_seg_64k; b += 8)
		for (size_t i = 0; i < PN_ARRAY_LEN(lens); i++)
			check_advance(b, lens[i], KIB64);
	for (uint64_t b = per_seg_16m - 3 * 8168; b < per_seg_16m + 3 * 8168; b += 8)
		for (size_t i = 0; i < PN_ARRAY_LEN(lens); i++)
			check_advance(b, lens[i], MIB16);
	for (uint64_t n = 8; n < 5 * 8168; n += 8)
		check_advance(8136, n, KIB64);
}
END_TEST

START_TEST(test_positions_roundtrip_16m)
{
	uint64_t per_seg = 2048 * 8168 - 16;
	static const uint64_t segs[] = {0, 1, 2, 255, 256, 257, 1000, 4096, 1u << 20};
	for (size_t i = 0; i < PN_ARRAY_LEN(segs); i++) {
		uint64_t base = segs[i] * per_seg;
		pn_lsn last = 0;
		for (uint64_t b = base; b < base + 3 * 8168; b++)
			check_bytepos(b, MIB16, &last);
		last = 0;
		for (uint64_t b = base + per_seg - 9000; b < base + per_seg + 9000; b++)
			check_bytepos(b, MIB16, &last);
		for (uint32_t p = 1; p < 2048; p += 97) { /* around page boundaries */
			uint64_t at = base + p * 8168ull - 16;
			last = 0;
			for (uint64_t b = at - 12; b < at + 12; b++)
				check_bytepos(b, MIB16, &last);
		}
	}
	/* Beyond 4 GiB the LSN's high word counts: segment 2^20 of 16 MiB is at 1000/00000000. */
	ck_assert(pn_wal_bytepos_to_endrecptr((1ull << 20) * per_seg, MIB16) == 0x100000000000ull);
}
END_TEST

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

/* ---- page checksum ------------------------------------------------------------------------ */

START_TEST(test_checksum_matches_postgres)
{
	/* pg_checksums --check (PostgreSQL 15.18) on vector_page(0..3) as blocks 0..3 of a
	 * relation, and vector_page(4..5) as blocks 0..1 of its segment .1 (131072 + n). */
	static const struct {
		uint32_t seed, blkno;
		uint16_t sum;
	} v[] = {
		{0, 0, 0xB84C}, {1, 1, 0x58DA},      {2, 2, 0xF059},
		{3, 3, 0x8C5E}, {4, 131072, 0x6EA4}, {5, 131073, 0x59E4},
	};
	static uint8_t page[PAGE];
	for (size_t i = 0; i < PN_ARRAY_LEN(v); i++) {
		vector_page(page, v[i].seed);
		ck_assert_uint_eq(pn_page_checksum(page, PAGE, v[i].blkno), v[i].sum);
	}
	vector_page(page, 0); /* pg_checksums saw the same sum with pd_checksum = 0x1234 */
	pn_put16(page + 8, 0x1234);
	ck_assert_uint_eq(pn_page_checksum(page, PAGE, 0), 0xB84C);
}
END_TEST

START_TEST(test_checksum_properties)
{
	static uint8_t page[PAGE], copy[PAGE];
	uint32_t s = 5;

	for (int k = 0; k < 300; k++) { /* never 0; deterministic */
		fill_random(page, PAGE, (uint32_t)k);
		uint32_t blkno = next_rand(&s);
		uint16_t sum = pn_page_checksum(page, PAGE, blkno);
		ck_assert_uint_ne(sum, 0);
		memcpy(copy, page, PAGE);
		ck_assert_uint_eq(pn_page_checksum(copy, PAGE, blkno), sum);
	}
	fill_random(page, PAGE, 77);
	uint16_t base = pn_page_checksum(page, PAGE, 10);
	for (uint32_t b = 0; b < 2000; b++)
		if (b != 10)
			ck_assert_uint_ne(pn_page_checksum(page, PAGE, b), base);
	for (int v = 0; v < 256; v++) { /* pd_checksum does not count */
		page[8] = (uint8_t)v;
		page[9] = (uint8_t)(255 - v);
		ck_assert_uint_eq(pn_page_checksum(page, PAGE, 10), base);
	}
	for (uint32_t i = 0; i < 400; i++) { /* every other byte does */
		uint32_t pos = i < 16 ? i : (i * 2039u) % PAGE;
		if (pos == 8 || pos == 9)
			continue;
		page[pos] ^= 0x10;
		ck_assert_msg(pn_page_checksum(page, PAGE, 10) != base, "byte %u", pos);
		page[pos] ^= 0x10;
	}
	ck_assert_uint_ne(pn_page_checksum(page, 4096, 10), pn_page_checksum(page, PAGE, 10));
}
END_TEST

/* ---- runner ------------------------------------------------------------------------------- */

static Suite *walfmt_suite(void)
{
	Suite *s = suite_create("walfmt");
	TCase *format = tcase_create("format");
	TCase *crc = tcase_create("crc32c");
	TCase *pos = tcase_create("positions");
	TCase *wal = tcase_create("copy_read");
	TCase *sum = tcase_create("checksum");

	tcase_add_test(format, test_sizes_documented);
	tcase_add_test(format, test_sizes_headers);
	tcase_add_test(format, test_encode_layout);
	tcase_add_test(format, test_encode_hole_and_long_main);
	tcase_add_test(format, test_decode_roundtrip);
	tcase_add_test(format, test_block_extension);
	tcase_add_test(format, test_decode_detects_every_flipped_byte);
	tcase_add_test(format, test_decode_structure_errors);
	tcase_add_test(crc, test_crc32c_vectors);
	tcase_add_test(crc, test_crc32c_paths_agree);
	tcase_add_test(pos, test_positions_fixed_points);
	tcase_add_test(pos, test_positions_match_pg_waldump);
	tcase_add_test(pos, test_positions_roundtrip_64k);
	tcase_add_test(pos, test_positions_roundtrip_16m);
	tcase_add_test(pos, test_positions_advance);
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
	tcase_add_test(wal, test_reader_positions);
	tcase_add_test(sum, test_checksum_matches_postgres);
	tcase_add_test(sum, test_checksum_properties);
	TCase *all[] = {format, crc, pos, wal, sum};
	for (size_t i = 0; i < PN_ARRAY_LEN(all); i++) {
		tcase_set_timeout(all[i], 120);
		suite_add_tcase(s, all[i]);
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(walfmt_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

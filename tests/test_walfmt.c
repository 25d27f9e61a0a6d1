/*
 * test_walfmt.c: unit tests for the WAL format (src/format/walfmt.c), CRC-32C (src/base/crc32c.c) and
 * the page checksum (src/base/checksum.c). Label: unit. The WAL read back: test_walread.c;
 * the fixture both share: walfmt_fixture.h.
 *
 * Reference values come from outside this code: record sizes from postgres-facts.md
 * section 3 (measured on PostgreSQL 15), LSN arithmetic from real pg_waldump output
 * (research/pg15-waldump/dump1.txt), CRC-32C from RFC 3720's test vectors, page checksums
 * from PostgreSQL 15.18's pg_checksums run on the pages vector_page() builds.
 */
#include "walfmt_fixture.h"

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
	tcase_add_test(sum, test_checksum_matches_postgres);
	tcase_add_test(sum, test_checksum_properties);
	TCase *all[] = {format, crc, pos, sum};
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

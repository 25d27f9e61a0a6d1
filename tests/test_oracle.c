/*
 * test_oracle.c: unit tests for the checker's oracle (model/oracle.c). Label: unit.
 *
 * Records are built with the WAL encoder (src/format/walfmt.h) and fed with increasing LSNs.
 * Expected pages are written here by hand from the record specification (oracle.c's
 * header), byte offsets spelled out, never through the engine's src/format/redo.c. The property
 * test (test_oracle_replay.c) keeps a third, naive reading.
 */
#include "oracle_fixture.h"

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

/* ---- runner ------------------------------------------------------------------------------- */

static Suite *oracle_suite(void)
{
	Suite *s = suite_create("oracle");
	TCase *kinds = tcase_create("kinds");
	TCase *upto = tcase_create("upto");
	TCase *mask = tcase_create("mask");

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
	TCase *all[] = {kinds, upto, mask};
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

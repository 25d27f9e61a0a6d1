/*
 * test_xlogread.c: unit tests for the reader of real PostgreSQL WAL (src/format/xlogread.c).
 * Label: unit. The WAL here is built with walfmt.c (records PostgreSQL 15 reads: test_walfmt
 * and CTest postgres show it), plus one record written by hand with what walfmt never
 * writes: an origin header, a top-level xid, a custom resource manager. CTest postgres
 * compares the reader with real pg_waldump on real WAL; these cases need no PostgreSQL.
 */
#include "xlogread.h"
#include "crc32c.h"
#include "walfmt.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEG (1u << 20)
#define NSEG 3u /* segments 1, 2, 3 */
#define PAGE 8192u
#define SYSID 7300000000000000001ull
#define NREC 120

static uint8_t *wal; /* segments 1 .. NSEG, from LSN SEG */
static char dir[64];
static pn_lsn starts[NREC + 1], ends[NREC + 1]; /* ends: after the last byte */
static uint32_t lens[NREC + 1];
static int nrec;
static uint8_t image[4][PAGE];

static uint8_t *page_cb(void *arg, pn_lsn addr)
{
	(void)arg;
	ck_assert(addr >= SEG && addr + PAGE <= (pn_lsn)SEG * (NSEG + 1));
	return wal + (addr - SEG);
}

/* A record walfmt cannot write: origin 7, top-level xid 4242, custom rmid 130, 9 B main. */
static uint32_t hand_record(uint8_t *out, pn_lsn prev)
{
	uint32_t n = 24;
	memset(out, 0, 64);
	out[n++] = 253;
	pn_put16(out + n, 7);
	n += 2;
	out[n++] = 252;
	pn_put32(out + n, 4242);
	n += 4;
	out[n++] = 255;
	out[n++] = 9;
	memset(out + n, 0xAB, 9);
	n += 9;
	pn_put32(out, n);
	pn_put32(out + 4, 4243);
	pn_put64(out + 8, prev);
	out[16] = 0x10;
	out[17] = 130;
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), out + 24, n - 24);
	pn_put32(out + 20, pn_crc32c_final(pn_crc32c_update(crc, out, 20)));
	return n;
}

static void put(const uint8_t *rec, uint32_t len, uint64_t *pos, pn_lsn *prev)
{
	pn_lsn s = pn_wal_bytepos_to_recptr(*pos, SEG);
	pn_wal_copy_record(rec, len, s, SEG, SYSID, page_cb, NULL);
	starts[nrec] = s;
	lens[nrec] = len;
	ends[nrec++] = pn_wal_bytepos_to_endrecptr(*pos + len, SEG);
	*pos += PN_ALIGN8(len);
	*prev = s;
}

static void write_files(void)
{
	for (uint32_t i = 0; i < NSEG; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/0000000100000000%08X", dir, i + 1);
		FILE *f = fopen(path, "wb");
		ck_assert(f && fwrite(wal + (size_t)i * SEG, 1, SEG, f) == SEG && fclose(f) == 0);
	}
}

/* Records until past the first segment's end: images with and without holes, block data,
 * main data, so records cross pages and one crosses into segment 2; the hand record among
 * them. */
static void setup(void)
{
	uint8_t *rec = malloc(64 * 1024), main[300], data[100];
	uint64_t pos = pn_wal_recptr_to_bytepos((pn_lsn)SEG + PN_WAL_LONG_PHD, SEG);
	pn_lsn prev = 0;

	wal = calloc(NSEG, SEG);
	ck_assert(wal && rec);
	snprintf(dir, sizeof dir, "/tmp/pn_xlr.XXXXXX");
	ck_assert(mkdtemp(dir) != NULL);
	for (int b = 0; b < 4; b++)
		for (uint32_t j = 0; j < PAGE; j++)
			image[b][j] = (uint8_t)(j * 13 + b);
	memset(main, 0x5A, sizeof main);
	memset(data, 0x33, sizeof data);
	nrec = 0;
	for (int i = 0; i < NREC; i++) {
		struct pn_wal_record r = {.xid = (uint32_t)i + 1,
					  .rmid = PN_RM_HEAP,
					  .info = 0x40,
					  .prev = prev,
					  .main_data = main,
					  .main_len = (uint32_t)(i % 3 == 0 ? 290 : 14)};
		uint32_t len;
		if (i == 5) {
			len = hand_record(rec, prev);
			put(rec, len, &pos, &prev);
			continue;
		}
		r.nblocks = (uint8_t)(i % 4 + 1);
		for (int b = 0; b < r.nblocks; b++) {
			struct pn_wal_block *k = &r.blocks[b];
			k->blkno = (uint32_t)(i * 4 + b);
			k->has_image = k->image_apply = true;
			k->image = image[b];
			if (b % 2 == 0) {
				k->hole_offset = 1000;
				k->hole_length = 3000;
			}
			if (b == 1) {
				k->has_image = false;
				k->data = data;
				k->data_len = 100;
			}
		}
		len = pn_wal_record_encode(&r, PAGE, rec);
		put(rec, len, &pos, &prev);
	}
	free(rec);
	write_files();
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(wal);
}

static bool open_dir(struct pn_xlr *r)
{
	char err[PN_ERROR_LEN];
	char *paths[] = {dir};
	bool ok = pn_xlr_open(r, paths, 1, err, sizeof err);
	ck_assert_msg(ok, "%s", err);
	return ok;
}

START_TEST(test_reads_every_record)
{
	struct pn_xlr r;
	struct pn_xlr_record rec;
	int n = 0;
	bool crossed = false;

	open_dir(&r);
	ck_assert_uint_eq(r.seg_size, SEG);
	ck_assert_uint_eq(pn_xlr_begin(&r, 0, 0), starts[0]);
	while (pn_xlr_read(&r, &rec)) {
		ck_assert_int_lt(n, nrec);
		ck_assert_uint_eq(rec.start, starts[n]);
		ck_assert_uint_eq(rec.tot_len, lens[n]);
		crossed |= rec.start / SEG != (rec.start + rec.tot_len) / SEG;
		if (n == 5) {
			ck_assert(rec.has_origin && rec.origin == 7);
			ck_assert_uint_eq(rec.toplevel_xid, 4242);
			ck_assert_uint_eq(rec.rmid, 130);
			ck_assert_uint_eq(rec.main_len, 9);
			ck_assert_int_eq(rec.max_block_id, -1);
		} else {
			int nb = (n % 4) + 1;
			uint32_t fpi = 0;
			ck_assert_int_eq(rec.max_block_id, nb - 1);
			for (int b = 0; b < nb; b++)
				fpi += b == 1 ? 0 : b % 2 == 0 ? PAGE - 3000 : PAGE;
			ck_assert_uint_eq(rec.fpi_len, fpi);
			ck_assert_uint_eq(rec.blocks[0].hole_offset, 1000);
			ck_assert_uint_eq(rec.blocks[0].hole_length, 3000);
			ck_assert_uint_eq(rec.blocks[0].rel, 16384);
			if (nb > 1) /* SAME_REL: the previous block's relation */
				ck_assert(rec.blocks[1].rel == 16384 &&
					  rec.blocks[1].data_len == 100);
		}
		n++;
	}
	ck_assert_int_eq(n, nrec);
	ck_assert_msg(crossed, "last record at %llx len %u", (unsigned long long)starts[nrec - 1],
		      lens[nrec - 1]);
	ck_assert_msg(strstr(r.why, "invalid record length at") &&
			      strstr(r.why, "wanted 24, got 0"),
		      "%s", r.why);
	pn_xlr_close(&r);
}
END_TEST

/* XR1: a record counts only if it ends at or before the limit. */
START_TEST(test_limit)
{
	struct pn_xlr r;
	struct pn_xlr_record rec;
	int k = 20, n = 0;
	pn_lsn end = ends[k];

	open_dir(&r);
	ck_assert(pn_xlr_begin(&r, 0, end) != 0);
	while (pn_xlr_read(&r, &rec))
		n++;
	ck_assert_int_eq(n, k + 1);
	ck_assert_str_eq(r.why, "");
	ck_assert(pn_xlr_begin(&r, 0, end - 1) != 0);
	n = 0;
	while (pn_xlr_read(&r, &rec))
		n++;
	ck_assert_int_eq(n, k);
	pn_xlr_close(&r);
}
END_TEST

/* XR2: from inside a record, the first record after it. */
START_TEST(test_begin_inside_a_record)
{
	struct pn_xlr r;
	open_dir(&r);
	ck_assert_uint_eq(pn_xlr_begin(&r, starts[7] + 8, 0), starts[8]);
	ck_assert_uint_eq(pn_xlr_begin(&r, starts[7], 0), starts[7]);
	pn_xlr_close(&r);
}
END_TEST

/* Reads the directory from its first record to the end: how many records, and why it ended. */
static int records_to_end(char *why, size_t len)
{
	struct pn_xlr r;
	struct pn_xlr_record rec;
	int n = 0;

	open_dir(&r);
	ck_assert(pn_xlr_begin(&r, 0, 0) != 0);
	while (pn_xlr_read(&r, &rec))
		n++;
	snprintf(why, len, "%s", r.why);
	pn_xlr_close(&r);
	return n;
}

/* Flips bits of the WAL byte at LSN `at`, in memory and in the files. */
static void flip(pn_lsn at, uint8_t bits)
{
	wal[at - SEG] ^= bits;
	write_files();
}

START_TEST(test_flipped_byte_and_missing_segment)
{
	char path[128], why[PN_ERROR_LEN];
	int k = 10, crossing = -1;

	flip(starts[k] + 30, 0x40);
	ck_assert_int_eq(records_to_end(why, sizeof why), k);
	ck_assert_msg(strstr(why, "incorrect resource manager data checksum in record at"), "%s",
		      why);
	flip(starts[k] + 30, 0x40);
	for (int i = 0; i < nrec && crossing < 0; i++)
		if (starts[i] / SEG == 1 && ends[i] > 2 * (pn_lsn)SEG)
			crossing = i;
	ck_assert_int_ge(crossing, 0);
	snprintf(path, sizeof path, "%s/000000010000000000000002", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(records_to_end(why, sizeof why), crossing);
	ck_assert_msg(strstr(why, "could not find file \"000000010000000000000002\""), "%s", why);
}
END_TEST

/* xl_prev checked before the CRC, as ValidXLogRecordHeader comes first; and a segment held
 * under timeline 2 only is read, its name in the messages. */
START_TEST(test_prev_link_and_timeline)
{
	char from[128], to[128], why[PN_ERROR_LEN];
	int k = 3;

	ck_assert_uint_le(starts[k] % PAGE, PAGE - 24); /* its header on one page */
	flip(starts[k] + 8, 0x08);
	ck_assert_int_eq(records_to_end(why, sizeof why), k);
	ck_assert_msg(strstr(why, "record with incorrect prev-link"), "%s", why);
	flip(starts[k] + 8, 0x08);
	for (uint32_t i = 1; i <= NSEG; i++) {
		snprintf(from, sizeof from, "%s/0000000100000000%08X", dir, i);
		snprintf(to, sizeof to, "%s/0000000200000000%08X", dir, i);
		ck_assert_int_eq(rename(from, to), 0);
	}
	snprintf(to, sizeof to, "%s/000000020000000000000002", dir);
	ck_assert_int_eq(unlink(to), 0);
	records_to_end(why, sizeof why);
	ck_assert_msg(strstr(why, "could not find file \"000000020000000000000002\""), "%s", why);
}
END_TEST

/* A record header claiming 512 MiB: reading stops at the next page (its continuation length
 * disagrees) having allocated no more than the record's bytes seen, not the claim. */
START_TEST(test_hostile_length_allocates_nothing)
{
	struct pn_xlr r;
	struct pn_xlr_record rec;
	int k = 3, n = 0;
	uint8_t *h;

	ck_assert_uint_le(starts[k] % PAGE, PAGE - 24);
	h = wal + (starts[k] - SEG);
	h[0] = h[1] = h[2] = 0;
	h[3] = 0x20; /* xl_tot_len 0x20000000, little-endian */
	write_files();
	open_dir(&r);
	ck_assert(pn_xlr_begin(&r, 0, 0) != 0);
	while (pn_xlr_read(&r, &rec))
		n++;
	ck_assert_int_eq(n, k);
	ck_assert_msg(strstr(r.why, "invalid contrecord length"), "%s", r.why);
	ck_assert_uint_le(r.rec_cap, 64 * 1024);
	pn_xlr_close(&r);
}
END_TEST

START_TEST(test_names)
{
	char buf[48];
	ck_assert_str_eq(pn_xlr_identify(15, 10, 0x80), "INSERT+INIT");
	ck_assert_str_eq(pn_xlr_identify(15, 1, 0x80), "COMMIT"); /* XLOG_XACT_HAS_INFO */
	ck_assert_str_eq(pn_xlr_identify(15, 1, 0x60), "INVALIDATION");
	ck_assert_str_eq(pn_xlr_identify(15, 0, 0xD0), "OVERWRITE_CONTRECORD");
	ck_assert_str_eq(pn_xlr_identify(15, 20, 0x70), "Generic");
	ck_assert_ptr_null(pn_xlr_identify(15, 0, 0xC0));
	ck_assert_ptr_null(pn_xlr_identify(15, 130, 0));
	ck_assert_str_eq(pn_xlr_rm_name(130, buf, sizeof buf), "custom130");
	pn_xlr_stats_name(15, 13, 9, buf, sizeof buf);
	ck_assert_str_eq(buf, "Gin/UNKNOWN (90)");
	pn_xlr_stats_name(15, 17, 10, buf, sizeof buf);
	ck_assert_str_eq(buf, "BRIN/UPDATE+INIT");
	/* the versions: 16 names as 15; 17 splits Heap2/PRUNE and adds XLOG/CHECKPOINT_REDO */
	ck_assert_uint_eq(pn_xlr_version_of_magic(0xD110), 15);
	ck_assert_uint_eq(pn_xlr_version_of_magic(0xD113), 16);
	ck_assert_uint_eq(pn_xlr_version_of_magic(0xD116), 17);
	ck_assert_uint_eq(pn_xlr_version_of_magic(0xD10D), 0); /* 14 */
	ck_assert_str_eq(pn_xlr_identify(16, 9, 0x30), "FREEZE_PAGE");
	ck_assert_str_eq(pn_xlr_identify(16, 9, 0x10), "PRUNE");
	ck_assert_str_eq(pn_xlr_identify(17, 9, 0x10), "PRUNE_ON_ACCESS");
	ck_assert_str_eq(pn_xlr_identify(17, 9, 0x20), "PRUNE_VACUUM_SCAN");
	ck_assert_str_eq(pn_xlr_identify(17, 9, 0x30), "PRUNE_VACUUM_CLEANUP");
	ck_assert_ptr_null(pn_xlr_identify(16, 0, 0xE0));
	ck_assert_str_eq(pn_xlr_identify(17, 0, 0xE0), "CHECKPOINT_REDO");
	ck_assert_str_eq(pn_xlr_identify(17, 9, 0x40), "VISIBLE");
}
END_TEST

START_TEST(test_parse_lsn)
{
	pn_lsn l;
	ck_assert(pn_xlr_parse_lsn("0/1A2B3C8", &l) && l == 0x1A2B3C8);
	ck_assert(pn_xlr_parse_lsn("16/0", &l) && l == (pn_lsn)0x16 << 32);
	ck_assert(pn_xlr_parse_lsn("ffffffff/ffffffff", &l) && l == UINT64_MAX);
	ck_assert(!pn_xlr_parse_lsn("12", &l));
	ck_assert(!pn_xlr_parse_lsn("0/", &l));
	ck_assert(!pn_xlr_parse_lsn("/1", &l));
	ck_assert(!pn_xlr_parse_lsn("0/123456789", &l));
	ck_assert(!pn_xlr_parse_lsn("0/1G", &l));
	ck_assert(!pn_xlr_parse_lsn("0/1/2", &l));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xlogread");
	TCase *t = tcase_create("read");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_reads_every_record);
	tcase_add_test(t, test_limit);
	tcase_add_test(t, test_begin_inside_a_record);
	tcase_add_test(t, test_flipped_byte_and_missing_segment);
	tcase_add_test(t, test_prev_link_and_timeline);
	tcase_add_test(t, test_hostile_length_allocates_nothing);
	tcase_add_test(t, test_names);
	tcase_add_test(t, test_parse_lsn);
	tcase_set_timeout(t, 60);
	suite_add_tcase(s, t);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

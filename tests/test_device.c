/*
 * test_device.c: Check suite for the simulated device's memory and the WAL segments the
 * engine recycles (sim/device.h D1-D3, src/engine/wal.c W6; label unit):
 *
 *   remove/create  removed chunks are freed in both images and in copies, a read or a
 *                  write of them aborts, a created range reads as zeros;
 *   held WAL       with a 1 TiB max_wal_size (a ring of 1.6 million segments) and many
 *                  checkpoints the device holds, at every event, no more than the
 *                  segments from keep_from's to the insert position's plus one;
 *   checker        every crash state of such runs recovers (recovery never reads a
 *                  removed segment: that would abort), with a ring that never wraps and
 *                  with one that wraps;
 *   cur/dur        with tracking, formatted and synced bytes are held once (D4), an
 *                  unsynced write costs its own chunk until it is synced.
 */
#include "checker.h"
#include "device.h"
#include "load.h"
#include "world.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEG (64u << 10)

static void write_at(struct pn_device *d, uint64_t off, uint8_t byte, uint32_t len)
{
	uint8_t *buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	memset(buf, byte, len);
	pn_device_format_write(d, PN_FILE_WAL, off, buf, len);
	free(buf);
}

static uint8_t byte_at(const struct pn_device *d, uint64_t off)
{
	uint8_t b;
	pn_device_read(d, PN_FILE_WAL, off, 1, &b);
	return b;
}

START_TEST(test_remove_frees_and_create_zeroes)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	write_at(&d, 0, 0xAB, 3 * SEG);
	ck_assert_uint_eq(pn_device_held(&d, PN_FILE_WAL, false), 3 * SEG);
	pn_device_remove(&d, PN_FILE_WAL, SEG, SEG);
	ck_assert_uint_eq(pn_device_held(&d, PN_FILE_WAL, false), 2 * SEG);
	ck_assert_uint_eq(pn_device_held(&d, PN_FILE_WAL, true), 3 * SEG);
	ck_assert_uint_eq(byte_at(&d, SEG - 1), 0xAB);
	ck_assert_uint_eq(byte_at(&d, 2 * SEG), 0xAB);

	/* a crash image shares the removal (dur) and frees nothing of its own */
	struct pn_device img;
	pn_device_init(&img, false, 512);
	pn_device_crash_image(&d, NULL, &img);
	ck_assert_uint_eq(pn_device_held(&img, PN_FILE_WAL, false), 2 * SEG);

	pn_device_create(&d, PN_FILE_WAL, SEG, SEG);
	ck_assert_uint_eq(byte_at(&d, SEG), 0);
	ck_assert_uint_eq(byte_at(&d, 2 * SEG - 1), 0);
	ck_assert_uint_eq(pn_device_held(&d, PN_FILE_WAL, false), 2 * SEG);
	write_at(&d, SEG, 0xCD, 512);
	ck_assert_uint_eq(byte_at(&d, SEG), 0xCD);
	ck_assert_uint_eq(byte_at(&d, SEG + 512), 0);
	/* a whole 2 MiB leaf removed and created again */
	write_at(&d, 64u * SEG, 0x11, 64u * SEG);
	pn_device_remove(&d, PN_FILE_WAL, 64u * SEG, 64u * SEG);
	pn_device_create(&d, PN_FILE_WAL, 64u * SEG, SEG);
	ck_assert_uint_eq(byte_at(&d, 64u * SEG), 0);
	pn_device_free(&img);
	pn_device_free(&d);
}
END_TEST

/* D4: what is durable and read alike is one chunk, whichever image reads it. */
START_TEST(test_cur_dur_share_synced)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	uint64_t base = pn_device_pool_bytes();
	write_at(&d, 0, 0xAB, 4 * SEG);
	ck_assert_uint_eq(pn_device_pool_bytes() - base, 4 * SEG);

	uint8_t page[8192], back[8192];
	memset(page, 0x5A, sizeof(page));
	struct pn_io io = {.file = PN_FILE_WAL,
			   .offset = SEG,
			   .len = sizeof(page),
			   .buf = page,
			   .index = 3};
	pn_device_write(&d, &io, 1);
	ck_assert_uint_eq(pn_device_pool_bytes() - base, 4 * SEG + PN_CHUNK_SIZE);
	pn_device_read_dur(&d, PN_FILE_WAL, SEG, sizeof(back), back);
	ck_assert_uint_eq(back[0], 0xAB);
	pn_device_write_done(&d, 3);
	pn_device_fsync_done(&d, PN_FILE_WAL, pn_device_fsync_start(&d));
	ck_assert_uint_eq(d.nunsynced, 0);
	ck_assert_uint_eq(pn_device_pool_bytes() - base, 4 * SEG);
	pn_device_read_dur(&d, PN_FILE_WAL, SEG, sizeof(back), back);
	ck_assert_mem_eq(back, page, sizeof(page));
	pn_device_read(&d, PN_FILE_WAL, SEG + sizeof(page), 1, back);
	ck_assert_uint_eq(back[0], 0xAB);

	/* a crash image (tracked) shares all of it too */
	struct pn_device img;
	pn_device_init(&img, true, 512);
	pn_device_crash_image(&d, NULL, &img);
	ck_assert_uint_eq(pn_device_pool_bytes() - base, 4 * SEG);
	pn_device_free(&img);
	pn_device_free(&d);
	ck_assert_uint_eq(pn_device_pool_bytes(), base);
}
END_TEST

/* D1: reading or writing what was removed is a broken invariant (the process aborts). */
static void touch_removed(bool write)
{
	struct pn_device d;
	pn_device_init(&d, false, 512);
	write_at(&d, 0, 0xAB, 2 * SEG);
	pn_device_remove(&d, PN_FILE_WAL, 0, SEG);
	if (write)
		write_at(&d, 512, 0xCD, 512);
	else
		(void)byte_at(&d, SEG - 8);
}

START_TEST(test_read_of_removed_aborts) { touch_removed(false); }
END_TEST

START_TEST(test_write_of_removed_aborts) { touch_removed(true); }
END_TEST

/* fpw, 64 KiB segments, a checkpoint every 4 transactions; crash points when `crash`. */
static void load(struct pn_scenario *sc, const char *max_wal_size, uint32_t transactions,
		 bool crash)
{
	char yaml[1024], err[PN_ERROR_LEN];
	snprintf(
		yaml, sizeof(yaml),
		"name: wal-held-%s\n"
		"seed: 7\n"
		"storage: {pages: 8, buffers: 4, wal_segment_size: 64KiB}\n"
		"protocol: {mode: fpw, checksums: true}\n"
		"checkpoint: {interval: 0s, every_transactions: 4, completion_target: 0.5,"
		" max_wal_size: %s}\n"
		"workload: {kind: random, clients: 2, transactions: %u, pages_per_transaction: 2}\n"
		"%s",
		max_wal_size, max_wal_size, transactions,
		crash ? "crash: {points: {every: 9}, max_unsynced: 2, tear: halves, samples: 10}\n"
		      : "");
	ck_assert_msg(pn_scenario_load_string("wal-held.yaml", yaml, strlen(yaml), sc, err,
					      sizeof(err)),
		      "%s", err);
}

START_TEST(test_held_wal_bounded)
{
	struct pn_scenario sc;
	load(&sc, "1TiB", 1000, false);
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.check_each_event = true};
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(pn_world_init(w, &sc, &o, NULL), "%s", w->error);
	ck_assert_uint_gt(pn_engine_file_size(w->e, PN_FILE_WAL) / SEG,
			  1000000u); /* the ring never wraps in this run */
	pn_engine_start(w->e);
	uint64_t worst = 0;
	int step;
	while ((step = pn_world_step(w)) == PN_STEP_EVENT) {
		uint64_t keep_seg = pn_engine_wal_keep_from(w->e) / SEG;
		uint64_t insert_seg = pn_engine_wal_insert_lsn(w->e) / SEG;
		uint64_t held = pn_device_held(&w->dev, PN_FILE_WAL, false);
		/* what recovery can need (keep_from's segment to the insert's) + one segment */
		uint64_t bound = (insert_seg - keep_seg + 1) * SEG + SEG;
		ck_assert_msg(held <= bound, "event %llu: %llu bytes of WAL held, bound %llu",
			      (unsigned long long)w->events, (unsigned long long)held,
			      (unsigned long long)bound);
		worst = PN_MAX(worst, held);
	}
	ck_assert_int_eq(step, PN_STEP_FINISHED);
	const struct pn_metrics *m = pn_engine_metrics(w->e);
	ck_assert_uint_ge(m->checkpoints, 100);
	ck_assert_uint_gt(m->wal_bytes, 40ull * SEG);
	ck_assert_uint_gt(pn_engine_file_size(w->e, PN_FILE_WAL) / SEG,
			  pn_engine_wal_insert_lsn(w->e) / SEG);
	ck_assert_uint_le(worst, m->wal_bytes / 10);
	ck_assert_uint_eq(pn_device_held(&w->dev, PN_FILE_WAL, true), worst);
	pn_world_free(w);
	free(w);
	pn_scenario_free(&sc);
}
END_TEST

static void check_passes(const char *max_wal_size, uint32_t transactions)
{
	struct pn_scenario sc;
	load(&sc, max_wal_size, transactions, true);
	struct pn_check_options opt = {.nested_every = 16};
	struct pn_check_result *res = calloc(1, sizeof(*res));
	ck_assert_ptr_nonnull(res);
	int rc = pn_check_scenario(&sc, &opt, res);
	ck_assert_msg(rc == 0 && !res->violation, "%s: rc %d: %s", sc.name, rc, res->detail);
	ck_assert_uint_gt(res->recoveries, 1000);
	free(res);
	pn_scenario_free(&sc);
}

/* Removed segments while the ring never wraps: any read of them would abort. */
START_TEST(test_checker_ring_never_wraps) { check_passes("1TiB", 60); }
END_TEST

/* A ring of 8 segments (128 KiB max_wal_size) that wraps: removed slots are created. */
START_TEST(test_checker_ring_wraps)
{
	struct pn_scenario sc;
	load(&sc, "128KiB", 100, false);
	struct pn_sim_result r;
	ck_assert_int_eq(pn_sim_run(&sc, &r), 0);
	ck_assert_uint_gt(r.m.wal_bytes, 8ull * SEG + SEG);
	pn_scenario_free(&sc);
	check_passes("128KiB", 100);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("memory");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_remove_frees_and_create_zeroes);
	tcase_add_test(tc, test_cur_dur_share_synced);
	tcase_add_test_raise_signal(tc, test_read_of_removed_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_write_of_removed_aborts, SIGABRT);
	tcase_add_test(tc, test_held_wal_bounded);
	tcase_add_test(tc, test_checker_ring_never_wraps);
	tcase_add_test(tc, test_checker_ring_wraps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

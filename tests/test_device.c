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
 *   fresh chunks   a chunk a write creates reads as zeros around that write, whatever its
 *                  pool bytes held before; the huge-page slabs are zeroed and aligned;
 *   cur/dur        with tracking, formatted and synced bytes are held once (D4), an
 *                  unsynced write costs its own chunk until it is synced;
 *   copy on write  a write into part of a shared chunk, or of an unwritten one, leaves
 *                  every other byte as it was (the copy fills only what the write does
 *                  not), in the writer's image and in the one it shared with;
 *   atomic unit    a write's tearing units are the aligned blocks of the atomic unit it
 *                  touches (D5), and no crash state the checker enumerates leaves such a
 *                  block part old and part new (crash.atomic_unit), while a smaller unit
 *                  does split it;
 *   derivation     the read log holds every read (D6); pn_device_crash_read gives the bytes
 *                  of the crash image pn_device_crash_image builds; the checker's
 *                  derivation refuses a state whose bytes differ from the base's where
 *                  recovery read, and takes one that differs only where it did not;
 *   own bytes      D11: a read logs only its parts no earlier logged write covers; the
 *                  checker derives almost every state of umbra-random (its redo reads back
 *                  the pages it evicted to their shift targets);
 *   read back      D6: a read inside one range written before it is not logged (its bytes
 *                  are the writer's), one that reaches past it is;
 *   summaries      D10: a summarized read is logged as its summary and value, not as a
 *                  range, unless recovery wrote there first or summaries are not tracked;
 *                  the derivation takes a state whose bytes differ there but whose summary
 *                  is the same, and refuses one whose summary differs;
 *   lazy           D8: a lazy file's unwritten chunks read as the builder's bytes, a write
 *                  into one keeps the rest as built, pn_device_hash and a copy are those of
 *                  the eagerly filled device, a tracked device refuses lazy extents; a
 *                  chunk's parts no write touched stay unbuilt until read (a chunk
 *                  written in one half holds bytes for that half alone), and reads,
 *                  hash and copy see the builder's bytes there, not stale ones; whole
 *                  runs (pgbench under fpw and umbra, tpcc) on a lazily formatted device
 *                  end with the device, the pages and the metrics of an eager one, holding
 *                  fewer data chunks.
 */
#include "checker.h"
#include "derive.h"
#include "crashstate.h"
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

/* Two unsynced WAL writes, 8 KiB at SEG (bytes 0x11) and 8 KiB at 3 * SEG (0x22), over a
 * durable image of 0xAB. */
static void two_unsynced(struct pn_device *d)
{
	pn_device_init(d, true, 512);
	write_at(d, 0, 0xAB, 4 * SEG);
	uint8_t page[8192];
	for (uint32_t i = 0; i < 2; i++) {
		memset(page, 0x11 * (i + 1), sizeof(page));
		struct pn_io io = {.file = PN_FILE_WAL,
				   .offset = (1 + 2 * i) * SEG,
				   .len = sizeof(page),
				   .buf = page,
				   .index = i};
		pn_device_write(d, &io, 1 + i);
		pn_device_write_done(d, i);
	}
	ck_assert_uint_eq(d->nunsynced, 2);
}

START_TEST(test_crash_read_is_the_crash_image)
{
	struct pn_device d, img;
	two_unsynced(&d);
	struct pn_write_fate fates[2] = {{.fate = PN_FATE_TORN, .sectors = 0x5},
					 {.fate = PN_FATE_PERSISTED}};
	pn_device_init(&img, false, 512);
	pn_device_crash_image(&d, fates, &img);
	static uint8_t want[4 * SEG], got[4 * SEG];
	struct pn_range_log log = {0};
	img.reads = &log;
	pn_device_read(&img, PN_FILE_WAL, 0, sizeof(want), want);
	pn_device_read(&img, PN_FILE_WAL, SEG + 100, 7, got);
	ck_assert_uint_eq(log.n, 2);
	ck_assert_uint_eq(log.r[1].off, SEG + 100);
	ck_assert_uint_eq(log.r[1].len, 7);
	img.reads = NULL;
	pn_device_crash_read(&d, fates, PN_FILE_WAL, 0, sizeof(got), got);
	ck_assert_mem_eq(got, want, sizeof(want));
	ck_assert_uint_eq(got[SEG], 0x11);       /* unit 0 new */
	ck_assert_uint_eq(got[SEG + 512], 0xAB); /* unit 1 old */
	ck_assert_uint_eq(got[3 * SEG + 8191], 0x22);
	free(log.r);
	pn_device_free(&img);
	pn_device_free(&d);
}
END_TEST

START_TEST(test_derive_refuses_read_bytes)
{
	struct pn_device d;
	two_unsynced(&d);
	struct pn_write_fate base[2] = {{.fate = PN_FATE_LOST}, {.fate = PN_FATE_LOST}};
	struct pn_write_fate second_new[2] = {{.fate = PN_FATE_LOST}, {.fate = PN_FATE_PERSISTED}};
	struct pn_write_fate first_torn[2] = {{.fate = PN_FATE_TORN, .sectors = 0x2},
					      {.fate = PN_FATE_LOST}};
	/* recovery read the first write's place, and the durable bytes past the second's */
	struct pn_range reads[2] = {{.file = PN_FILE_WAL, .off = SEG, .len = 8192},
				    {.file = PN_FILE_WAL, .off = 3 * SEG + 8192, .len = 512}};
	ck_assert(pn_check_reads_same(&d, base, base, reads, 2));
	ck_assert(pn_check_reads_same(&d, base, second_new, reads, 2));  /* unread: derived */
	ck_assert(!pn_check_reads_same(&d, base, first_torn, reads, 2)); /* read: refused */
	struct pn_range unit1 = {.file = PN_FILE_WAL, .off = SEG + 600, .len = 1};
	struct pn_range unit0 = {.file = PN_FILE_WAL, .off = SEG + 10, .len = 1};
	ck_assert(!pn_check_reads_same(&d, base, first_torn, &unit1, 1));
	ck_assert(pn_check_reads_same(&d, base, first_torn, &unit0, 1)); /* unit 0 kept old */
	struct pn_range other = {.file = PN_FILE_DATA, .off = SEG, .len = 8192};
	ck_assert(pn_check_reads_same(&d, base, first_torn, &other, 1)); /* another file */
	pn_device_free(&d);
}
END_TEST

START_TEST(test_read_back_not_logged)
{
	struct pn_device d;
	pn_device_init(&d, false, 512);
	struct pn_range_log reads = {0}, writes = {0};
	uint8_t buf[8192];
	d.reads = &reads;
	write_at(&d, SEG, 0x11, 8192);
	pn_device_read(&d, PN_FILE_WAL, SEG, 8192, buf);
	ck_assert_uint_eq(reads.n, 1); /* writes not tracked: every read is logged */
	d.writes = &writes;
	write_at(&d, 2 * SEG, 0x22, 8192);
	pn_device_read(&d, PN_FILE_WAL, SEG, 8192, buf); /* written before tracking began */
	ck_assert_uint_eq(reads.n, 2);
	pn_device_read(&d, PN_FILE_WAL, 2 * SEG + 512, 4096, buf);
	ck_assert_uint_eq(reads.n, 2); /* the writer's bytes */
	ck_assert_uint_eq(buf[0], 0x22);
	pn_device_read(&d, PN_FILE_WAL, 2 * SEG + 4096, 8192, buf);
	ck_assert_uint_eq(reads.n, 3); /* past the write: logged */
	pn_device_read(&d, PN_FILE_DATA, 2 * SEG, 512, buf);
	ck_assert_uint_eq(reads.n, 4); /* another file */
	free(reads.r);
	free(writes.r);
	pn_device_free(&d);
}
END_TEST

/* A summary for the tests: {1} when any byte of the range is 0xAB (two_unsynced's durable
 * bytes), {0} when none is; arg[0] is added to v[1]. */
static struct pn_summary_value any_old(const uint8_t *bytes, uint32_t len, const uint64_t *arg)
{
	bool old = memchr(bytes, 0xAB, len) != NULL;
	return (struct pn_summary_value){{old, arg[0]}};
}

START_TEST(test_summary_logged_and_compared)
{
	struct pn_device d, img;
	two_unsynced(&d);
	struct pn_write_fate lost[2] = {{.fate = PN_FATE_LOST}, {.fate = PN_FATE_LOST}};
	struct pn_write_fate torn[2] = {{.fate = PN_FATE_TORN, .sectors = 0x2},
					{.fate = PN_FATE_LOST}};
	struct pn_write_fate persisted[2] = {{.fate = PN_FATE_PERSISTED}, {.fate = PN_FATE_LOST}};
	struct pn_write_fate second[2] = {{.fate = PN_FATE_LOST}, {.fate = PN_FATE_PERSISTED}};
	pn_device_init(&img, false, 512);
	pn_device_crash_image(&d, lost, &img);
	struct pn_range_log reads = {0}, writes = {0};
	struct pn_summary_log sums = {0};
	const struct pn_summary s = {.fn = any_old, .arg = {7}};
	struct pn_summary_value v = pn_device_read_summary(&img, PN_FILE_WAL, SEG, 8192, &s);
	ck_assert(v.v[0] == 1 && v.v[1] == 7);
	ck_assert_uint_eq(reads.n + sums.n, 0); /* nothing tracked: nothing logged */
	img.reads = &reads;
	pn_device_read_summary(&img, PN_FILE_WAL, SEG, 8192, &s);
	ck_assert_uint_eq(reads.n, 1); /* summaries not tracked: a byte range (D6) */
	reads.n = 0;
	img.writes = &writes;
	img.summaries = &sums;
	v = pn_device_read_summary(&img, PN_FILE_WAL, SEG, 8192, &s);
	ck_assert_uint_eq(reads.n, 0);
	ck_assert_uint_eq(sums.n, 1);
	const struct pn_summary_read r = sums.r[0];
	ck_assert(r.file == PN_FILE_WAL && r.off == SEG && r.len == 8192 && r.s.fn == any_old);
	ck_assert(r.v.v[0] == 1 && r.v.v[1] == 7 && r.s.arg[0] == 7);
	write_at(&img, SEG + 4096, 0x11, 512); /* recovery writes there: then byte ranges */
	pn_device_read_summary(&img, PN_FILE_WAL, SEG, 8192, &s);
	ck_assert_uint_eq(sums.n, 1);
	ck_assert_uint_eq(reads.n, 2); /* D11: around the write, not over it */
	pn_device_read_summary(&img, PN_FILE_WAL, 3 * SEG, 8192, &s); /* not written there */
	ck_assert_uint_eq(sums.n, 2);
	/* r was logged under `lost`: the torn state's bytes differ there, its summary does not */
	uint8_t buf[8192];
	ck_assert(!pn_device_crash_same(&d, torn, lost, PN_FILE_WAL, SEG, 8192));
	ck_assert(pn_device_crash_summary_same(&d, lost, lost, &r, buf));
	ck_assert(pn_device_crash_summary_same(&d, torn, lost, &r, buf));
	ck_assert(!pn_device_crash_summary_same(&d, persisted, lost, &r, buf));
	ck_assert(pn_device_crash_summary_same(&d, second, lost, &r, buf)); /* not there */
	struct pn_summary_read q = r; /* logged under `persisted`: its value there was {0, 7} */
	q.v.v[0] = 0;
	ck_assert(pn_device_crash_summary_same(&d, persisted, persisted, &q, buf));
	ck_assert(!pn_device_crash_summary_same(&d, torn, persisted, &q, buf));
	q = r;
	q.v.v[1] = 8; /* every word of the value counts */
	ck_assert(!pn_device_crash_summary_same(&d, torn, lost, &q, buf));
	free(reads.r);
	free(writes.r);
	free(sums.r);
	pn_device_free(&img);
	pn_device_free(&d);
}
END_TEST

/* D11: with a write log, a read logs only its parts that no write logged before it covers
 * (those bytes are the tracked run's own); without one, every read whole. */
START_TEST(test_read_log_skips_own_writes)
{
	struct pn_device img;
	pn_device_init(&img, false, 512);
	write_at(&img, 0, 0xAB, 2 * SEG);
	struct pn_range_log reads = {0}, writes = {0};
	uint8_t buf[8192];
	img.reads = &reads;
	img.writes = &writes;
	pn_device_read(&img, PN_FILE_WAL, SEG, 8192, buf); /* before any write: whole */
	ck_assert_uint_eq(reads.n, 1);
	ck_assert(reads.r[0].off == SEG && reads.r[0].len == 8192);
	reads.n = 0;
	write_at(&img, SEG + 4096, 0x11, 4096);
	write_at(&img, SEG + 1024, 0x22, 1024);
	write_at(&img, SEG + 200, 0x33, 200); /* the newer one overlaps the older, unsorted */
	write_at(&img, SEG + 100, 0x44, 200);
	ck_assert_uint_eq(writes.n, 4);
	pn_device_read(&img, PN_FILE_WAL, SEG, 8192, buf);
	static const uint64_t at[][2] = {{0, 100}, {400, 1024}, {2048, 4096}};
	ck_assert_uint_eq(reads.n, PN_ARRAY_LEN(at));
	for (uint32_t i = 0; i < reads.n; i++) {
		ck_assert_uint_eq(reads.r[i].file, PN_FILE_WAL);
		ck_assert_uint_eq(reads.r[i].off, SEG + at[i][0]);
		ck_assert_uint_eq(reads.r[i].len, at[i][1] - at[i][0]);
	}
	ck_assert_uint_eq(buf[4096], 0x11); /* the reads see the writes */
	ck_assert_uint_eq(buf[150], 0x44);
	ck_assert_uint_eq(buf[350], 0x33);
	reads.n = 0;
	pn_device_read(&img, PN_FILE_WAL, SEG + 4096, 4096, buf); /* all written: nothing */
	pn_device_read(&img, PN_FILE_WAL, SEG + 150, 200, buf);
	ck_assert_uint_eq(reads.n, 0);
	pn_device_read(&img, PN_FILE_DATA, SEG + 4096, 512, buf); /* another file: whole */
	ck_assert_uint_eq(reads.n, 1);
	img.writes = NULL; /* no write log: every read whole */
	pn_device_read(&img, PN_FILE_WAL, SEG + 4096, 4096, buf);
	ck_assert_uint_eq(reads.n, 2);
	ck_assert_uint_eq(reads.r[1].len, 4096);
	free(reads.r);
	free(writes.r);
	pn_device_free(&img);
}
END_TEST

/* D11 in the checker: umbra's redo evicts pages to their shift targets and reads them
 * back; those reads meet unsynced writes whose fates differ between states, yet return
 * recovery's own bytes, so almost every state of umbra-random is derived from a base. */
START_TEST(test_umbra_reads_back_derived)
{
	const char *root = getenv("PN_SOURCE_DIR");
	char path[1024], err[PN_ERROR_LEN];
	snprintf(path, sizeof(path), "%s/scenarios/protocols/umbra-random.yaml", root ? root : ".");
	struct pn_scenario sc;
	ck_assert_msg(pn_scenario_load(path, &sc, err, sizeof(err)), "%s", err);
	struct pn_check_options opt = {.derive = true};
	struct pn_check_result *res = calloc(1, sizeof(*res));
	ck_assert_ptr_nonnull(res);
	int rc = pn_check_scenario(&sc, &opt, res);
	ck_assert_msg(rc == 0 && !res->violation, "rc %d: %s", rc, res->detail);
	ck_assert_uint_eq(res->crash_states, 56833); /* docs/performance.md */
	ck_assert_uint_eq(res->recoveries, 45878);
	ck_assert_msg(res->derived * 100 >= res->recoveries * 99, "%llu of %llu derived",
		      (unsigned long long)res->derived, (unsigned long long)res->recoveries);
	free(res);
	pn_scenario_free(&sc);
}
END_TEST

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

/* A fresh chunk is zeroed only around the write that creates it: its bytes come from the
 * pool's free list, here dirty with the freed device's 0xEE, and none may show. The slabs
 * behind the pool are pn_huge_alloc's: zeroed and 2 MiB aligned. */
START_TEST(test_fresh_chunk_zero_around_write)
{
	struct pn_device d;
	pn_device_init(&d, false, 512);
	write_at(&d, 0, 0xEE, 4 * PN_CHUNK_SIZE);
	pn_device_free(&d);
	pn_device_init(&d, false, 512);
	write_at(&d, 100, 0x5A, 300);                  /* inside the first chunk */
	write_at(&d, 2 * PN_CHUNK_SIZE - 8, 0x5B, 16); /* across two fresh chunks */
	uint8_t got[3 * PN_CHUNK_SIZE];
	pn_device_read(&d, PN_FILE_WAL, 0, sizeof(got), got);
	for (uint32_t i = 0; i < sizeof(got); i++) {
		uint8_t want = i >= 100 && i < 400                                       ? 0x5A
			       : i >= 2 * PN_CHUNK_SIZE - 8 && i < 2 * PN_CHUNK_SIZE + 8 ? 0x5B
											 : 0;
		ck_assert_msg(got[i] == want, "byte %u: %#x, want %#x", i, got[i], want);
	}
	pn_device_free(&d);

	uint8_t *h = pn_huge_alloc(PN_HUGE_PAGE + 1);
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq((uintptr_t)h % PN_HUGE_PAGE, 0);
	for (size_t i = 0; i < 2 * PN_HUGE_PAGE; i += 4096)
		ck_assert_uint_eq(h[i], 0);
	h[2 * PN_HUGE_PAGE - 1] = 1; /* rounded up: the second huge page is there */
	pn_huge_free(h, PN_HUGE_PAGE + 1);
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

/* A chunk made private for a write fills only the bytes the write leaves (device.c
 * chunk_for): the rest must read as before, or as zeros in an unwritten chunk, even when the
 * pool hands out bytes a freed chunk left behind. */
START_TEST(test_partial_write_keeps_the_rest)
{
	struct pn_device junk, d, img;
	pn_device_init(&junk, false, 512);
	write_at(&junk, 0, 0xEE, 4 * PN_CHUNK_SIZE);
	pn_device_free(&junk); /* the pool's free chunks now hold 0xEE */
	pn_device_init(&d, false, 512);
	write_at(&d, 0, 0xAB, PN_CHUNK_SIZE);
	pn_device_init(&img, false, 512);
	pn_device_copy(&d, &img); /* shares the chunk */
	const uint32_t q = PN_CHUNK_SIZE / 4, h = PN_CHUNK_SIZE / 2;
	write_at(&img, q, 0x11, h);
	write_at(&img, PN_CHUNK_SIZE + 1000, 0x22, 100); /* an unwritten chunk */
	uint8_t *buf = malloc(2 * PN_CHUNK_SIZE);
	ck_assert_ptr_nonnull(buf);
	pn_device_read(&img, PN_FILE_WAL, 0, 2 * PN_CHUNK_SIZE, buf);
	for (uint32_t i = 0; i < 2 * PN_CHUNK_SIZE; i++) {
		uint8_t want = i < q                      ? 0xAB
			       : i < q + h                ? 0x11
			       : i < PN_CHUNK_SIZE        ? 0xAB
			       : i < PN_CHUNK_SIZE + 1000 ? 0
			       : i < PN_CHUNK_SIZE + 1100 ? 0x22
							  : 0;
		ck_assert_msg(buf[i] == want, "byte %u: %02x, not %02x", i, buf[i], want);
	}
	pn_device_read(&d, PN_FILE_WAL, 0, PN_CHUNK_SIZE, buf);
	for (uint32_t i = 0; i < PN_CHUNK_SIZE; i++)
		ck_assert_uint_eq(buf[i], 0xAB);
	free(buf);
	pn_device_free(&img);
	pn_device_free(&d);
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

/* D9: a write-only file's writes are counted and dropped; the other files keep theirs. */
static void sunk(struct pn_device *d)
{
	pn_device_init(d, false, 512);
	pn_device_set_sink(d, PN_FILE_WAL);
	uint8_t page[8192];
	memset(page, 0x5A, sizeof(page));
	struct pn_io io = {.file = PN_FILE_WAL, .offset = SEG, .len = sizeof(page), .buf = page};
	pn_device_write(d, &io, 1);
	write_at(d, 0, 0xAB, 2 * SEG);
	io.file = PN_FILE_DATA;
	pn_device_write(d, &io, 2);
}

START_TEST(test_sink_keeps_no_bytes)
{
	uint64_t base = pn_device_pool_bytes();
	struct pn_device d;
	sunk(&d);
	ck_assert_uint_eq(pn_device_pool_bytes() - base, PN_CHUNK_SIZE); /* the data page alone */
	ck_assert_uint_eq(d.bytes_written[PN_FILE_WAL], 8192);
	ck_assert_uint_eq(pn_device_held(&d, PN_FILE_WAL, true), 0);
	uint8_t back[8192];
	pn_device_read(&d, PN_FILE_DATA, SEG, sizeof(back), back);
	ck_assert_uint_eq(back[0], 0x5A);
	pn_device_free(&d);
}
END_TEST

START_TEST(test_read_of_sink_aborts)
{
	struct pn_device d;
	sunk(&d);
	(void)byte_at(&d, SEG);
}
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

/* D5: the units of a write are the aligned blocks it touches, at most 64: per case the
 * device's unit, the write, its unit size and count, and one unit's span in the write. */
START_TEST(test_units_aligned)
{
	static const struct {
		uint32_t atomic;
		uint64_t off;
		uint32_t len, unit, nunits, i, span_at, span_len;
	} cases[] = {
		{8192, 3 * 8192, 8192, 8192, 1, 0, 0, 8192}, /* a page at its place never tears */
		/* a doublewrite entry (a sector + a page) at 8704: cut at 16384 only */
		{8192, 8704, 8704, 8192, 2, 0, 0, 7680},
		{8192, 8704, 8704, 8192, 2, 1, 7680, 1024},
		{512, 8192, 8192, 512, 16, 15, 7680, 512},
		{512, 1u << 20, 1u << 20, 16384, 64, 63, 63u << 14, 16384}, /* 32 sectors a unit */
		{4096, 4000, 100, 4096, 2, 1, 96, 4},
	};
	for (size_t k = 0; k < PN_ARRAY_LEN(cases); k++) {
		struct pn_device d;
		uint32_t n, at;
		pn_device_init(&d, false, cases[k].atomic);
		ck_assert_uint_eq(pn_device_unit(&d, cases[k].off, cases[k].len, &n),
				  cases[k].unit);
		ck_assert_uint_eq(n, cases[k].nunits);
		ck_assert_uint_eq(pn_device_unit_span(&d, cases[k].off, cases[k].len, cases[k].i,
						      &at),
				  cases[k].span_len);
		ck_assert_uint_eq(at, cases[k].span_at);
	}
}
END_TEST

/* Blocks of `block` bytes (aligned in the file) that state img leaves part old (zeros) and
 * part new, over the unsynced writes of d; every byte must be one or the other. */
static uint32_t split_blocks(const struct pn_device *d, const struct pn_device *img, uint32_t block)
{
	static uint8_t got[8192];
	uint32_t split = 0;
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		for (uint64_t b = u->offset / block * block; b < u->offset + u->len; b += block) {
			uint64_t from = PN_MAX(b, u->offset),
				 to = PN_MIN(b + block, u->offset + u->len);
			bool old = false, now = false, other = false;
			pn_device_read(img, u->file, from, (uint32_t)(to - from), got);
			for (uint64_t k = 0; k < to - from; k++) {
				bool is_new = got[k] == u->data[from - u->offset + k];
				other |= !is_new && got[k] != 0;
				now |= is_new;
				old |= !is_new;
			}
			ck_assert_msg(!other, "bytes neither old nor new at %llu",
				      (unsigned long long)from);
			split += old && now;
		}
	}
	return split;
}

static void write_data(struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		       uint32_t index)
{
	uint8_t *buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	for (uint32_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(1 + (index * 37 + k / 512) % 255); /* never 0: each byte new */
	struct pn_io io = {.file = f, .offset = off, .len = len, .buf = buf, .index = index};
	pn_device_write(d, &io, index);
	pn_device_write_done(d, index);
	free(buf);
}

/* Every crash state of two page writes, a doublewrite-like entry off the page grid and a
 * 64 KiB WAL write on a device of atomic unit `unit`: returns the aligned 4 KiB blocks left
 * split over all states, and checks that none of the device's own blocks is. */
static uint32_t states_split_4k(uint32_t unit)
{
	struct pn_device d, img;
	struct pn_scenario sc;
	struct pn_crash_enum ce;
	uint32_t split = 0, torn = 0;
	pn_device_init(&d, true, unit);
	write_data(&d, PN_FILE_DATA, 0, 8192, 1);
	write_data(&d, PN_FILE_DATA, 25088, 8704, 2);
	write_data(&d, PN_FILE_DATA, 40960, 8192, 3);
	write_data(&d, PN_FILE_WAL, 0, 65536, 4);
	pn_scenario_defaults(&sc);
	sc.crash.samples = 64;
	pn_crash_enum_init(&ce);
	pn_crash_enum_begin(&ce, &d, &sc, 1);
	while (pn_crash_enum_next(&ce)) {
		pn_device_init(&img, false, unit);
		pn_device_crash_image(&d, ce.fates, &img);
		ck_assert_uint_eq(split_blocks(&d, &img, unit), 0);
		split += split_blocks(&d, &img, 4096);
		for (uint32_t i = 0; i < d.nunsynced; i++)
			torn += ce.fates[i].fate == PN_FATE_TORN;
		pn_device_free(&img);
	}
	ck_assert_uint_gt(torn, 0); /* the WAL write tears at every unit up to 8 KiB */
	pn_crash_enum_free(&ce);
	pn_device_free(&d);
	pn_scenario_free(&sc);
	return split;
}

START_TEST(test_states_keep_atomic_blocks)
{
	ck_assert_uint_gt(states_split_4k(512), 0); /* sectors split a 4 KiB block */
	ck_assert_uint_gt(states_split_4k(2048), 0);
	ck_assert_uint_eq(states_split_4k(4096), 0);
	ck_assert_uint_eq(states_split_4k(8192), 0);
}
END_TEST

/* ---- D8: lazy extents ----------------------------------------------------------------- */

/* A builder: byte i of the file is (i / 8192 * 7 + i) % 251 + 1 below 5 pages, then zeros
 * (no formatted byte past 80 KiB: chunk 5 holds formatted bytes, chunk 6 none). */
#define LAZY_END (5u * 8192)
static bool lazy_bytes(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	(void)ctx;
	ck_assert_int_eq(f, PN_FILE_DATA);
	bool any = false;
	for (uint32_t i = 0; i < len; i++) {
		uint64_t at = off + i;
		out[i] = at < LAZY_END ? (uint8_t)((at / 8192 * 7 + at) % 251 + 1) : 0;
		any |= at < LAZY_END;
	}
	return any;
}

START_TEST(test_lazy_reads_writes_hash)
{
	struct pn_device lazy, eager;
	pn_device_init(&lazy, false, 512);
	pn_device_init(&eager, false, 512);
	pn_device_set_lazy(&lazy, PN_FILE_DATA, LAZY_END + 3 * 8192, lazy_bytes, NULL);
	static uint8_t buf[LAZY_END], got[LAZY_END], want[LAZY_END];
	lazy_bytes(NULL, PN_FILE_DATA, 0, LAZY_END, buf);
	pn_device_format_write(&eager, PN_FILE_DATA, 0, buf, LAZY_END);
	ck_assert_uint_eq(pn_device_held(&lazy, PN_FILE_DATA, false), 0);
	ck_assert_uint_eq(pn_world_device_hash(&lazy), pn_world_device_hash(&eager));
	pn_device_read(&lazy, PN_FILE_DATA, 100, LAZY_END - 100, got);
	ck_assert_mem_eq(got, buf + 100, LAZY_END - 100);
	/* a page write into chunk 1 (and a WAL write): the chunk's other page stays as built */
	memset(want, 0xa5, 8192);
	struct pn_io io = {.op = PN_IO_WRITE,
			   .file = PN_FILE_DATA,
			   .offset = 3 * 8192,
			   .len = 8192,
			   .buf = want};
	pn_device_write(&lazy, &io, 1);
	pn_device_write(&eager, &io, 1);
	io.file = PN_FILE_WAL;
	pn_device_write(&lazy, &io, 2);
	pn_device_write(&eager, &io, 2);
	ck_assert_uint_eq(pn_device_held(&lazy, PN_FILE_DATA, false), PN_CHUNK_SIZE);
	pn_device_read(&lazy, PN_FILE_DATA, 2 * 8192, 2 * 8192, got);
	ck_assert_mem_eq(got, buf + 2 * 8192, 8192);
	ck_assert_mem_eq(got + 8192, want, 8192);
	/* a write past every formatted byte (chunk 6): zeros around it, as on the eager device */
	io.file = PN_FILE_DATA;
	io.offset = 6 * PN_CHUNK_SIZE + 512;
	io.len = 512;
	pn_device_write(&lazy, &io, 3);
	pn_device_write(&eager, &io, 3);
	ck_assert_uint_eq(pn_world_device_hash(&lazy), pn_world_device_hash(&eager));
	/* a copy into a tracked device holds the lazy chunks as real ones */
	struct pn_device copy;
	pn_device_init(&copy, true, 512);
	pn_device_copy(&lazy, &copy);
	ck_assert_uint_eq(pn_device_held(&copy, PN_FILE_DATA, false),
			  pn_device_held(&eager, PN_FILE_DATA, false));
	for (uint64_t off = 0; off < 7 * PN_CHUNK_SIZE; off += 4096) {
		pn_device_read(&eager, PN_FILE_DATA, off, 4096, want);
		pn_device_read_dur(&copy, PN_FILE_DATA, off, 4096, got);
		ck_assert_mem_eq(got, want, 4096);
	}
	pn_device_free(&copy);
	pn_device_free(&lazy);
	pn_device_free(&eager);
}
END_TEST

/* lazy_bytes, counting the bytes built into *(uint64_t *)ctx. */
static bool lazy_counted(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	*(uint64_t *)ctx += len;
	return lazy_bytes(NULL, f, off, len, out);
}

/* The bytes of file f on devices a and b agree over [0, len) (b read from dur when dur). */
static void same_bytes(const struct pn_device *a, const struct pn_device *b, bool dur, uint64_t len)
{
	uint8_t x[4096], y[4096];
	for (uint64_t off = 0; off < len; off += sizeof(x)) {
		pn_device_read(a, PN_FILE_DATA, off, sizeof(x), x);
		if (dur)
			pn_device_read_dur(b, PN_FILE_DATA, off, sizeof(y), y);
		else
			pn_device_read(b, PN_FILE_DATA, off, sizeof(y), y);
		ck_assert_msg(memcmp(x, y, sizeof(x)) == 0, "bytes at %llu differ",
			      (unsigned long long)off);
	}
}

/* D8: a write that creates a chunk leaves the parts it does not touch unbuilt (built only
 * when read), and every reader sees the builder's bytes there, not the chunk's stale ones:
 * the chunk's memory comes back from a freed chunk full of 0xa5. */
START_TEST(test_lazy_unbuilt_parts)
{
	static uint8_t buf[LAZY_END], page[8192];
	struct pn_device old, lazy, eager;
	pn_device_init(&old, false, 512);
	memset(buf, 0xa5, PN_CHUNK_SIZE);
	pn_device_format_write(&old, PN_FILE_DATA, 0, buf, PN_CHUNK_SIZE);
	pn_device_free(&old); /* its chunk's bytes go back to the pool, 0xa5 */
	uint64_t built = 0;
	pn_device_init(&lazy, false, 512);
	pn_device_init(&eager, false, 512);
	pn_device_set_lazy(&lazy, PN_FILE_DATA, LAZY_END, lazy_counted, &built);
	memset(page, 0x3c, sizeof(page));
	struct pn_io io = {.op = PN_IO_WRITE,
			   .file = PN_FILE_DATA,
			   .offset = 3 * 8192,
			   .len = 8192,
			   .buf = page};
	uint64_t pool = pn_device_pool_bytes();
	pn_device_write(&lazy, &io, 1); /* first: it takes the freed chunk */
	ck_assert_uint_eq(pn_device_pool_bytes() - pool, PN_CHUNK_SIZE / 2); /* half of it */
	lazy_bytes(NULL, PN_FILE_DATA, 0, LAZY_END, buf);
	pn_device_format_write(&eager, PN_FILE_DATA, 0, buf, LAZY_END);
	pn_device_write(&eager, &io, 1);
	ck_assert_uint_eq(built, 0); /* the chunk's other page is not built */
	ck_assert_uint_eq(pn_device_held(&lazy, PN_FILE_DATA, false), PN_CHUNK_SIZE);
	ck_assert_uint_eq(pn_world_device_hash(&lazy), pn_world_device_hash(&eager));
	built = 0;
	same_bytes(&lazy, &eager, false, LAZY_END);
	ck_assert_uint_eq(built, LAZY_END - 8192); /* each byte read built once, not kept */
	/* a write inside one unbuilt part builds that part around it; one that covers a
	 * part whole builds nothing there */
	io.offset = 2 * 8192 + 700;
	io.len = 300;
	pn_device_write(&lazy, &io, 2);
	pn_device_write(&eager, &io, 2);
	io.offset = 2 * 8192 + 2048;
	io.len = 1024;
	built = 0;
	pn_device_write(&lazy, &io, 3);
	pn_device_write(&eager, &io, 3);
	ck_assert_uint_eq(built, 0);
	ck_assert_uint_eq(pn_device_pool_bytes() - pool, /* now all of it, and eager's */
			  PN_CHUNK_SIZE + pn_device_held(&eager, PN_FILE_DATA, false));
	same_bytes(&lazy, &eager, false, LAZY_END);
	ck_assert_uint_eq(pn_world_device_hash(&lazy), pn_world_device_hash(&eager));
	struct pn_device copy; /* a copy holds them built */
	pn_device_init(&copy, true, 512);
	pn_device_copy(&lazy, &copy);
	same_bytes(&eager, &copy, true, LAZY_END);
	same_bytes(&lazy, &eager, false, LAZY_END); /* and the source still reads the same */
	pn_device_free(&copy);
	pn_device_free(&lazy);
	pn_device_free(&eager);
}
END_TEST

START_TEST(test_lazy_refused_when_tracked)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	pn_device_set_lazy(&d, PN_FILE_DATA, LAZY_END, lazy_bytes, NULL); /* aborts */
}
END_TEST

/* ---- D12: lent writes ------------------------------------------------------------------ */

/* A data write of one page of byte `fill` at off: on `lent` through a lent half (given at
 * off_lent: another half than off's when it differs), on `copied` as a copy. Checks that
 * each device's pool holds the same memory after it (a lent half taken, or given back) and
 * returns whether the lent one installed it. */
static bool lent_write(struct pn_device *lent, struct pn_device *copied, uint64_t off_lent,
		       uint64_t off, uint8_t fill)
{
	static uint8_t page[8192];
	memset(page, fill, sizeof(page));
	struct pn_io io = {.op = PN_IO_WRITE, .file = PN_FILE_DATA, .offset = off, .len = 8192};
	uint64_t before = pn_device_pool_bytes();
	io.buf = page;
	pn_device_write(copied, &io, 1);
	uint64_t grew = pn_device_pool_bytes() - before;
	uint32_t half = 0;
	uint64_t taken = lent->lent_taken, copies = lent->lent_copied;
	before = pn_device_pool_bytes();
	io.buf = pn_device_lend(lent, PN_FILE_DATA, off_lent, 8192, &half);
	ck_assert_ptr_nonnull(io.buf);
	ck_assert_uint_eq(half, off_lent % PN_CHUNK_SIZE / 8192 + 1);
	ck_assert_uint_eq(pn_device_pool_bytes() - before, 8192); /* the lent half */
	memcpy(io.buf, page, sizeof(page));
	io.lent = true;
	pn_device_write_lent(lent, &io, half, 1);
	ck_assert_uint_eq(pn_device_pool_bytes() - before, grew);
	ck_assert_uint_eq(lent->lent_taken + lent->lent_copied, taken + copies + 1);
	return lent->lent_taken > taken;
}

/* Every reader sees the same bytes on a and b: reads, the hash, a copy. */
static void lent_same(const struct pn_device *a, const struct pn_device *b)
{
	same_bytes(a, b, false, LAZY_END);
	ck_assert_uint_eq(pn_world_device_hash(a), pn_world_device_hash(b));
	struct pn_device ca, cb;
	pn_device_init(&ca, true, 512);
	pn_device_init(&cb, true, 512);
	pn_device_copy(a, &ca);
	pn_device_copy(b, &cb);
	same_bytes(&ca, &cb, true, LAZY_END);
	ck_assert_uint_eq(pn_world_device_hash(&ca), pn_world_device_hash(&cb));
	pn_device_free(&ca);
	pn_device_free(&cb);
}

/* D12: a lent write's half becomes the chunk's bytes (a new half chunk; a half chunk of the
 * same half swaps, the old half back in the pool), and every reader sees the bytes a copied
 * write leaves; where it cannot (the other half, a whole chunk, another parity at dispatch)
 * the write is copied and the half goes back; pn_device_lend refuses what could not take it.
 * The pool's halves come back from a freed chunk full of 0xa5. */
START_TEST(test_lent_writes_same_as_copied)
{
	struct pn_device old, lent, copied;
	static uint8_t buf[PN_CHUNK_SIZE];
	pn_device_init(&old, false, 512);
	memset(buf, 0xa5, sizeof(buf));
	pn_device_format_write(&old, PN_FILE_DATA, 0, buf, sizeof(buf));
	pn_device_free(&old);
	pn_device_init(&lent, false, 512);
	pn_device_init(&copied, false, 512);
	pn_device_set_lazy(&lent, PN_FILE_DATA, LAZY_END, lazy_bytes, NULL);
	pn_device_set_lazy(&copied, PN_FILE_DATA, LAZY_END, lazy_bytes, NULL);
	uint64_t pool = pn_device_pool_bytes();
	ck_assert(lent_write(&lent, &copied, 3 * 8192, 3 * 8192, 0x11)); /* a new half chunk */
	ck_assert(lent_write(&lent, &copied, 0, 0, 0x22));               /* a low one */
	lent_same(&lent, &copied);
	ck_assert(lent_write(&lent, &copied, 3 * 8192, 3 * 8192, 0x33)); /* swapped */
	lent_same(&lent, &copied);
	ck_assert_uint_eq(pn_device_pool_bytes() - pool, 4 * 8192); /* both devices: 2 halves */
	ck_assert_uint_eq(pn_device_held(&lent, PN_FILE_DATA, false), 2 * PN_CHUNK_SIZE);
	/* bound to the other half at dispatch (a late binding guessed wrong): copied, and the
	 * chunk becomes whole as the copied device's does */
	ck_assert(!lent_write(&lent, &copied, 3 * 8192, 2 * 8192, 0x44));
	lent_same(&lent, &copied);
	uint32_t half;
	ck_assert_ptr_null(pn_device_lend(&lent, PN_FILE_DATA, 3 * 8192, 8192, &half)); /* whole */
	ck_assert_ptr_null(pn_device_lend(&lent, PN_FILE_DATA, 4 * 8192 + 512, 8192, &half));
	ck_assert_ptr_null(pn_device_lend(&lent, PN_FILE_DATA, 4 * 8192, 4096, &half));
	ck_assert_ptr_null(pn_device_lend(&lent, PN_FILE_DATA, 6 * 8192, 8192, &half)); /* past */
	ck_assert_ptr_null(pn_device_lend(&lent, PN_FILE_WAL, 0, 8192, &half)); /* not lazy */
	/* lent for a new chunk, which a copied write makes whole before the lent one lands */
	uint64_t before = pn_device_pool_bytes();
	uint8_t *early = pn_device_lend(&lent, PN_FILE_DATA, 4 * 8192, 8192, &half);
	ck_assert_ptr_nonnull(early);
	struct pn_io io = {.op = PN_IO_WRITE,
			   .file = PN_FILE_DATA,
			   .offset = 5 * 8192,
			   .len = 8192};
	memset(buf, 0x55, 8192);
	io.buf = buf;
	pn_device_write(&lent, &io, 1);
	pn_device_write(&copied, &io, 1);
	io.offset = 4 * 8192;
	pn_device_write(&copied, &io, 1);
	memcpy(early, buf, 8192);
	io.buf = early;
	io.lent = true;
	pn_device_write_lent(&lent, &io, half, 1);
	lent_same(&lent, &copied);
	ck_assert_uint_eq(pn_device_pool_bytes() - before, 2 * PN_CHUNK_SIZE); /* one chunk each */
	/* a lent half never written goes back */
	before = pn_device_pool_bytes();
	early = pn_device_lend(&lent, PN_FILE_DATA, 8192, 8192, &half);
	ck_assert_ptr_null(early); /* chunk 0 is a half chunk of the low half */
	struct pn_device fresh;
	pn_device_init(&fresh, false, 512);
	pn_device_set_lazy(&fresh, PN_FILE_DATA, LAZY_END, lazy_bytes, NULL);
	early = pn_device_lend(&fresh, PN_FILE_DATA, 8192, 8192, &half);
	ck_assert_ptr_nonnull(early);
	ck_assert_uint_eq(half, 2);
	pn_device_lend_back(early, half);
	ck_assert_uint_eq(pn_device_pool_bytes(), before);
	ck_assert_uint_eq(lent.lent_taken, 3);
	ck_assert_uint_eq(lent.lent_copied, 2);
	pn_device_free(&fresh);
	pn_device_free(&lent);
	pn_device_free(&copied);
	ck_assert_uint_eq(pn_device_pool_bytes(), pool);
}
END_TEST

/* D12: a run stopped with lent writes not yet dispatched gives their halves back when its
 * world is freed (and every lent write was dispatched through the device at most once). */
START_TEST(test_lent_given_back_at_the_end)
{
	const char *yaml = "name: lent\nseed: 5\n"
			   "storage: {pages: 2100, buffers: 48, wal_segment_size: 1MiB}\n"
			   "protocol: {mode: fpw, checksums: true}\n"
			   "aio: {queue_depth: 1}\n"
			   "workload: {kind: pgbench, scale: 1, clients: 4, transactions: 300}\n";
	char err[256];
	struct pn_scenario sc;
	ck_assert_msg(pn_scenario_load_string("lent.yaml", yaml, strlen(yaml), &sc, err,
					      sizeof(err)),
		      "%s", err);
	uint64_t pool = pn_device_pool_bytes();
	uint32_t stopped = 0;
	for (uint64_t stop = 1000; stop < 60000 && stopped < 3; stop += 331) {
		struct pn_world *w = calloc(1, sizeof(*w));
		struct pn_world_options o = {.check_each_event = true, .stop_at_event = stop};
		ck_assert_ptr_nonnull(w);
		ck_assert_msg(pn_world_init(w, &sc, &o, NULL), "%s", w->error);
		pn_engine_start(w->e);
		ck_assert_int_eq(pn_world_run(w), 0);
		uint32_t queued = 0;
		for (uint32_t i = 0; i < pn_engine_io_count(w->e); i++)
			queued += w->lent[i] != 0;
		stopped += queued > 0;
		pn_world_free(w);
		free(w);
		ck_assert_uint_eq(pn_device_pool_bytes(), pool);
	}
	ck_assert_uint_eq(stopped, 3); /* some runs did stop with lent writes queued */
	pn_scenario_free(&sc);
}
END_TEST

/* D12: a tracked device lends nothing: its writes keep their copies and unsynced lists. */
START_TEST(test_lent_refused_when_tracked)
{
	struct pn_device d;
	uint32_t half;
	pn_device_init(&d, true, 512);
	ck_assert_ptr_null(pn_device_lend(&d, PN_FILE_DATA, 0, 8192, &half));
	pn_device_free(&d);
}
END_TEST

/* One run to the end on a lazily (opt.eager false) or an eagerly formatted device. */
static struct pn_world *lazy_run(const struct pn_scenario *sc, bool eager)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.check_each_event = true, .eager = eager};
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(pn_world_init(w, sc, &o, NULL), "%s", w->error);
	pn_engine_start(w->e);
	ck_assert_int_eq(pn_world_run(w), 0);
	return w;
}

static void lazy_same_as_eager(const char *workload, const char *mode, uint32_t pages,
			       uint32_t buffers)
{
	char yaml[512], err[256];
	snprintf(yaml, sizeof(yaml),
		 "name: lazy\nseed: 3\n"
		 "storage: {pages: %u, buffers: %u, wal_segment_size: 1MiB}\n"
		 "protocol: {mode: %s, checksums: true}\n"
		 "checkpoint: {interval: 20ms, max_wal_size: 8MiB}\n"
		 "workload: %s\n",
		 pages, buffers, mode, workload);
	struct pn_scenario sc;
	ck_assert_msg(pn_scenario_load_string("lazy.yaml", yaml, strlen(yaml), &sc, err,
					      sizeof(err)),
		      "%s", err);
	struct pn_world *l = lazy_run(&sc, false), *e = lazy_run(&sc, true);
	ck_assert_uint_gt(l->dev.lazy_end[PN_FILE_DATA], 0); /* it did format lazily */
	ck_assert_uint_gt(l->dev.lent_taken, 0);             /* and its writes were lent (D12) */
	ck_assert_uint_eq(e->dev.lazy_end[PN_FILE_DATA], 0);
	ck_assert_uint_eq(l->events, e->events);
	const struct pn_metrics *ml = pn_engine_metrics(l->e), *me = pn_engine_metrics(e->e);
	ck_assert_uint_eq(ml->wal_bytes, me->wal_bytes);
	ck_assert_uint_eq(ml->data_reads, me->data_reads);
	ck_assert_uint_gt(ml->data_reads, buffers); /* pages were evicted and read again */
	ck_assert_uint_eq(pn_world_device_hash(&l->dev), pn_world_device_hash(&e->dev));
	uint64_t size = pn_engine_file_size(e->e, PN_FILE_DATA);
	uint8_t a[8192], b[8192];
	for (uint64_t off = 0; off < size; off += sizeof(a)) {
		pn_device_read(&l->dev, PN_FILE_DATA, off, sizeof(a), a);
		pn_device_read(&e->dev, PN_FILE_DATA, off, sizeof(b), b);
		ck_assert_msg(memcmp(a, b, sizeof(a)) == 0, "%s %s: data bytes at %llu differ",
			      workload, mode, (unsigned long long)off);
	}
	ck_assert_uint_lt(pn_device_held(&l->dev, PN_FILE_DATA, true),
			  pn_device_held(&e->dev, PN_FILE_DATA, true) / 2);
	pn_world_free(l);
	pn_world_free(e);
	free(l);
	free(e);
	pn_scenario_free(&sc);
}

START_TEST(test_lazy_runs_same_as_eager)
{
	const char *pgbench = "{kind: pgbench, scale: 1, clients: 4, transactions: 300}";
	lazy_same_as_eager(pgbench, "fpw", 2100, 48);
	lazy_same_as_eager(pgbench, "umbra", 2100, 48);
	lazy_same_as_eager("{kind: tpcc, warehouses: 1, clients: 4, transactions: 40}", "fpw",
			   40000, 256);
}
END_TEST

/* D7: a deterministic xorshift for the random fates below. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void random_fates(uint64_t *s, struct pn_write_fate *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t r = rnd(s);
		f[i].fate = (enum pn_fate)(r % 3);
		f[i].sectors = f[i].fate == PN_FATE_TORN ? rnd(s) & (r & 8 ? 0x3 : 0xFFFF) : 0;
		if (f[i].fate == PN_FATE_TORN && (r & 0x30) == 0x30)
			f[i].sectors = ~0ull; /* every unit new: as persisted */
	}
}

/* D7: pn_device_fate_same and pn_device_crash_same (and so pn_check_reads_same) against a
 * byte-by-byte comparison of the two crash images, over random pairs of fates of six
 * overlapping unsynced writes in two files (one of them holding the durable bytes again). */
START_TEST(test_reads_same_agrees_with_every_byte)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	write_at(&d, 0, 0xAB, 2 * SEG);
	static const struct {
		enum pn_file f;
		uint64_t off;
		uint32_t len;
		uint8_t byte;
	} w[] = {{PN_FILE_WAL, 1000, 8192, 0x11},  {PN_FILE_WAL, 4096, 8192, 0x22},
		 {PN_FILE_WAL, 20000, 4000, 0xAB}, {PN_FILE_DATA, 0, 8192, 0x33},
		 {PN_FILE_DATA, 512, 1024, 0x44},  {PN_FILE_WAL, 40000, 300, 0x55}};
	enum { NW = sizeof(w) / sizeof(w[0]) };
	uint8_t buf[8192];
	for (uint32_t i = 0; i < NW; i++) {
		memset(buf, w[i].byte, sizeof(buf));
		struct pn_io io = {.file = w[i].f,
				   .offset = w[i].off,
				   .len = w[i].len,
				   .buf = buf,
				   .index = i};
		pn_device_write(&d, &io, 1 + i);
	}
	ck_assert_uint_eq(d.nunsynced, NW);
	static uint8_t x[2 * SEG], y[2 * SEG];
	uint64_t s = 0x9E3779B97F4A7C15ull;
	uint32_t differ = 0, same_fates = 0;
	for (uint32_t k = 0; k < 4000; k++) {
		struct pn_write_fate a[NW], b[NW];
		random_fates(&s, a, NW);
		if (k % 2)
			memcpy(b, a, sizeof(b));
		else
			random_fates(&s, b, NW);
		random_fates(&s, b, (uint32_t)(rnd(&s) % (NW + 1))); /* a prefix drawn anew */
		enum pn_file f = rnd(&s) % 2 ? PN_FILE_WAL : PN_FILE_DATA;
		uint64_t off = rnd(&s) % (48u << 10), len = 1 + rnd(&s) % 12000;
		pn_device_crash_read(&d, a, f, off, (uint32_t)len, x);
		pn_device_crash_read(&d, b, f, off, (uint32_t)len, y);
		bool bytes = memcmp(x, y, len) == 0;
		struct pn_range r = {.file = f, .off = off, .len = (uint32_t)len};
		ck_assert(pn_device_crash_same(&d, a, b, f, off, len) == bytes);
		ck_assert(pn_check_reads_same(&d, a, b, &r, 1) == bytes);
		differ += !bytes;
		bool all = true;
		for (uint32_t i = 0; i < NW; i++)
			all &= pn_device_fate_same(&d, i, &a[i], &b[i]);
		if (all) { /* the same units of every write: the same image, file by file */
			same_fates++;
			for (int g = 0; g < 2; g++) {
				enum pn_file h = g ? PN_FILE_DATA : PN_FILE_WAL;
				pn_device_crash_read(&d, a, h, 0, sizeof(x), x);
				pn_device_crash_read(&d, b, h, 0, sizeof(y), y);
				ck_assert_mem_eq(x, y, sizeof(x));
			}
		}
	}
	ck_assert_uint_gt(differ, 100);     /* both answers met often */
	ck_assert_uint_gt(same_fates, 100); /* and equal fates of unlike kinds */
	pn_device_free(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("memory");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_remove_frees_and_create_zeroes);
	tcase_add_test(tc, test_crash_read_is_the_crash_image);
	tcase_add_test(tc, test_derive_refuses_read_bytes);
	tcase_add_test(tc, test_reads_same_agrees_with_every_byte);
	tcase_add_test(tc, test_summary_logged_and_compared);
	tcase_add_test(tc, test_read_log_skips_own_writes);
	tcase_add_test(tc, test_umbra_reads_back_derived);
	tcase_add_test(tc, test_read_back_not_logged);
	tcase_add_test(tc, test_fresh_chunk_zero_around_write);
	tcase_add_test(tc, test_cur_dur_share_synced);
	tcase_add_test(tc, test_partial_write_keeps_the_rest);
	tcase_add_test_raise_signal(tc, test_read_of_removed_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_write_of_removed_aborts, SIGABRT);
	tcase_add_test(tc, test_sink_keeps_no_bytes);
	tcase_add_test_raise_signal(tc, test_read_of_sink_aborts, SIGABRT);
	tcase_add_test(tc, test_held_wal_bounded);
	tcase_add_test(tc, test_checker_ring_never_wraps);
	tcase_add_test(tc, test_checker_ring_wraps);
	suite_add_tcase(s, tc);
	tc = tcase_create("atomic");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_units_aligned);
	tcase_add_test(tc, test_states_keep_atomic_blocks);
	suite_add_tcase(s, tc);
	tc = tcase_create("lazy");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_lazy_reads_writes_hash);
	tcase_add_test(tc, test_lazy_unbuilt_parts);
	tcase_add_test_raise_signal(tc, test_lazy_refused_when_tracked, SIGABRT);
	tcase_add_test(tc, test_lazy_runs_same_as_eager);
	tcase_add_test(tc, test_lent_writes_same_as_copied);
	tcase_add_test(tc, test_lent_refused_when_tracked);
	tcase_add_test(tc, test_lent_given_back_at_the_end);
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

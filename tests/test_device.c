/*
 * test_device.c: Check suite for the simulated device's crash model (sim/device.h DV1-DV9,
 * src/engine/wal.c W6; label unit), through the device's plain operations (write, complete,
 * fsync, read, crash image); the chunk store's tricks beneath it are test_chunks.c's, the
 * digests by content test_digest.c's:
 *
 *   fsync          an fsync makes durable the writes to its file that completed before it
 *                  was dispatched, no other; a crash keeps each unsynced write lost,
 *                  persisted or torn over the durable image;
 *   remove/create  DV1-DV3: removed chunks are freed in both images and in copies, a read
 *                  or a write of them aborts, a created range reads as zeros;
 *   held WAL       with a 1 TiB max_wal_size (a ring of 1.6 million segments) and many
 *                  checkpoints the device holds, at every event, no more than the
 *                  segments from keep_from's to the insert position's plus one;
 *   checker        every crash state of such runs recovers (recovery never reads a
 *                  removed segment: that would abort), with a ring that never wraps and
 *                  with one that wraps;
 *   write-only     DV7: a sink keeps no bytes, reading it aborts;
 *   atomic unit    a write's tearing units are the aligned blocks of the atomic unit it
 *                  touches (DV4), and no crash state the checker enumerates leaves such a
 *                  block part old and part new (crash.atomic_unit), while a smaller unit
 *                  does split it;
 *   derivation     the read log holds every read (DV5); pn_device_crash_read gives the bytes
 *                  of the crash image pn_device_crash_image builds; the checker's
 *                  derivation refuses a state whose bytes differ from the base's where
 *                  recovery read, and takes one that differs only where it did not; DV6
 *                  against a byte-by-byte comparison of random fates;
 *   own bytes      DV9: a read logs only its parts no earlier logged write covers; the
 *                  checker derives almost every state of umbra-random (its redo reads back
 *                  the pages it evicted to their shift targets);
 *   read back      DV5: a read inside one range written before it is not logged (its bytes
 *                  are the writer's), one that reaches past it is;
 *   summaries      DV8: a summarized read is logged as its summary and value, not as a
 *                  range, unless recovery wrote there first or summaries are not tracked;
 *                  the derivation takes a state whose bytes differ there but whose summary
 *                  is the same, and refuses one whose summary differs.
 */
#include "checker.h"
#include "derive.h"
#include "crashstate.h"
#include "device.h"
#include "load.h"
#include "spans.h"
#include "world.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_lib.h"

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

/* The crash model's core, through the plain operations: an fsync makes durable exactly the
 * writes to its file that had completed when it was dispatched (not one completed after, not
 * one in flight, not another file's), and a crash lays each write still unsynced over the
 * durable image as its fate says. */
START_TEST(test_fsync_covers_completed_writes)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	write_at(&d, 0, 0xAB, 4 * SEG);
	uint8_t page[3][8192];
	struct pn_io io[3];
	enum pn_file file[3] = {PN_FILE_WAL, PN_FILE_WAL, PN_FILE_DATA};
	for (uint32_t i = 0; i < 3; i++) {
		memset(page[i], 0x31 + (int)i, sizeof(page[i]));
		io[i] = (struct pn_io){.file = file[i],
				       .offset = i * SEG,
				       .len = sizeof(page[i]),
				       .buf = page[i],
				       .index = i};
		pn_device_write(&d, &io[i], 1 + i);
	}
	pn_device_write_done(&d, 0); /* 0 completes before the fsync is dispatched */
	pn_device_write_done(&d, 2); /* another file's */
	uint64_t version = d.dur_version, mark = pn_device_fsync_start(&d);
	pn_device_write_done(&d, 1); /* after: not covered */
	pn_device_fsync_done(&d, PN_FILE_WAL, mark);
	ck_assert_uint_gt(d.dur_version, version);
	ck_assert_uint_eq(d.nunsynced, 2); /* 1 and 2 stay */
	uint8_t b;
	pn_device_read_dur(&d, PN_FILE_WAL, 0, 1, &b);
	ck_assert_uint_eq(b, 0x31);
	pn_device_read_dur(&d, PN_FILE_WAL, SEG, 1, &b);
	ck_assert_uint_eq(b, 0xAB);
	ck_assert_uint_eq(byte_at(&d, SEG), 0x32); /* reads see cur */
	struct pn_device img;
	struct pn_write_fate fates[2] = {{.fate = PN_FATE_LOST}, {.fate = PN_FATE_PERSISTED}};
	ck_assert_uint_eq(d.unsynced[0].file, PN_FILE_WAL);
	pn_device_init(&img, false, 512);
	pn_device_crash_image(&d, fates, &img);
	ck_assert_uint_eq(byte_at(&img, 0), 0x31);   /* durable */
	ck_assert_uint_eq(byte_at(&img, SEG), 0xAB); /* lost */
	pn_device_read(&img, PN_FILE_DATA, 2 * SEG + 8191, 1, &b);
	ck_assert_uint_eq(b, 0x33); /* persisted */
	pn_device_free(&img);
	fates[0] = (struct pn_write_fate){.fate = PN_FATE_TORN, .sectors = 0x2};
	pn_device_init(&img, false, 512);
	pn_device_crash_image(&d, fates, &img);
	ck_assert_uint_eq(byte_at(&img, SEG), 0xAB);       /* unit 0 old */
	ck_assert_uint_eq(byte_at(&img, SEG + 512), 0x32); /* unit 1 new */
	ck_assert_uint_eq(byte_at(&img, SEG + 1024), 0xAB);
	pn_device_free(&img);
	pn_device_free(&d);
}
END_TEST

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

/* A summary for DV11's test: the sum of the range's bytes and the count of calls so far. */
static uint64_t sum_calls;
static struct pn_summary_value byte_sum(const uint8_t *bytes, uint32_t len, const uint64_t *arg)
{
	uint64_t sum = arg[0];
	for (uint32_t i = 0; i < len; i++)
		sum += bytes[i];
	sum_calls++;
	return (struct pn_summary_value){{sum, 0}};
}

/* DV11 and CK5: a summary is taken again only when the bytes may have changed, and whatever
 * changed them (a write in place, a write to a shared chunk, a chunk removed and created, a
 * write to the second of two chunks a range lies in), the value is that of the bytes now. */
START_TEST(test_summary_memo_sees_every_change)
{
	struct pn_device d, img;
	pn_device_init(&d, true, 512);
	write_at(&d, 0, 0x01, 4 * SEG);
	const struct pn_summary s = {.fn = byte_sum, .arg = {1000}};
	const uint64_t off = SEG + 100, two = SEG + PN_CHUNK_SIZE - 50; /* two: over 2 chunks */
	uint64_t calls = sum_calls;
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 64, &s).v[0], 1064);
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 64, &s).v[0], 1064);
	ck_assert_uint_eq(sum_calls, calls + 1); /* the same bytes: taken once */
	struct pn_summary other = s;
	other.arg[0] = 2000; /* another summary of the same bytes: taken */
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 64, &other).v[0], 2064);
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 32, &s).v[0], 1032);
	ck_assert_uint_eq(sum_calls, calls + 3);
	write_at(&d, off + 10, 0x03, 1); /* in place */
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 64, &s).v[0], 1066);
	pn_device_init(&img, false, 512); /* shares every chunk of d's durable image */
	struct pn_write_fate none[1] = {{.fate = PN_FATE_LOST}};
	pn_device_crash_image(&d, none, &img);
	calls = sum_calls;
	ck_assert_uint_eq(pn_device_read_summary(&img, PN_FILE_WAL, off, 64, &s).v[0], 1066);
	ck_assert_uint_eq(sum_calls, calls); /* the same chunk: the value d's read took */
	uint8_t b = 0x05;
	struct pn_io io = {.file = PN_FILE_WAL, .offset = off, .len = 1, .buf = &b, .index = 0};
	pn_device_write(&img, &io, 1); /* a write to a shared chunk: copied */
	ck_assert_uint_eq(pn_device_read_summary(&img, PN_FILE_WAL, off, 64, &s).v[0], 1070);
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 64, &s).v[0], 1066);
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, two, 100, &s).v[0], 1100);
	write_at(&d, two + 90, 0x02, 1); /* in the second chunk */
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, two, 100, &s).v[0], 1101);
	struct pn_device own; /* untracked: its chunks are its own (refs 1), written in place */
	pn_device_init(&own, false, 512);
	write_at(&own, 0, 0x01, 2 * SEG);
	ck_assert_uint_eq(pn_device_read_summary(&own, PN_FILE_WAL, off, 64, &s).v[0], 1064);
	write_at(&own, off + 63, 0x07, 1);
	ck_assert_uint_eq(pn_device_read_summary(&own, PN_FILE_WAL, off, 64, &s).v[0], 1070);
	pn_device_free(&own);
	pn_device_remove(&d, PN_FILE_WAL, SEG, SEG); /* removed, then created: zeros */
	pn_device_create(&d, PN_FILE_WAL, SEG, SEG);
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 64, &s).v[0], 1000);
	write_at(&d, off, 0x01, 64);
	ck_assert_uint_eq(pn_device_read_summary(&d, PN_FILE_WAL, off, 64, &s).v[0], 1064);
	pn_device_free(&img);
	pn_device_free(&d);
}
END_TEST

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
	ck_assert_uint_eq(reads.n, 1); /* summaries not tracked: a byte range (DV5) */
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
	ck_assert_uint_eq(reads.n, 2); /* DV9: around the write, not over it */
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

/* DV9: with a write log, a read logs only its parts that no write logged before it covers
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

/* DV9 in the checker: umbra's redo evicts pages to their shift targets and reads them
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
	ck_assert_uint_eq(res->recoveries, 43018);   /* 45,878 before keys by image (H3) */
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

/* DV1: reading or writing what was removed is a broken invariant (the process aborts). */
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

/* DV7: a write-only file's writes are counted and dropped; the other files keep theirs. */
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
	uint64_t base = pn_chunks_pool_bytes();
	struct pn_device d;
	sunk(&d);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - base, PN_CHUNK_SIZE); /* the data page alone */
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

/* DV4: the units of a write are the aligned blocks it touches, at most 64: per case the
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

/* DV6: a deterministic xorshift for the random fates below. */
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

/* DV6: pn_device_fate_same and pn_device_crash_same (and so pn_check_reads_same) against a
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

/* DV15: each write's spans (of the writes before it, after it, that meet its cells) agree with
 * a scan of the list and hold every such write, after every write joins and after every fsync
 * takes some out: random writes in two files, some completed, fsyncs of either file. */
START_TEST(test_shares_spans_agree_with_scan)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	uint8_t buf[9000];
	memset(buf, 0x5A, sizeof(buf));
	uint64_t s = 0x2545F4914F6CDD1Dull;
	uint32_t shared = 0;
	for (uint32_t n = 1; n <= 600; n++) {
		uint64_t r = rnd(&s);
		enum pn_file f = r & 1 ? PN_FILE_WAL : PN_FILE_DATA;
		if (r % 7 == 0) {
			pn_device_fsync_done(&d, f, pn_device_fsync_start(&d));
		} else {
			struct pn_io io = {.file = f,
					   .offset = rnd(&s) % 40000,
					   .len = 1 + (uint32_t)(rnd(&s) % sizeof(buf)),
					   .buf = buf,
					   .index = n};
			pn_device_write(&d, &io, n);
			if (r % 3)
				pn_device_write_done(&d, n);
		}
		for (uint32_t i = 0; i < d.nunsynced; i++) {
			const struct pn_unsynced *u = &d.unsynced[i];
			ck_assert((u->earlier[0] != u->earlier[1]) == pn_spans_scan(&d, i, -1));
			ck_assert((u->later[0] != u->later[1]) == pn_spans_scan(&d, i, 1));
			ck_assert(u->earlier[1] <= i &&
				  (u->later[0] > i || u->later[0] == u->later[1]));
			ck_assert(u->later[1] <= d.nunsynced);
			for (uint32_t k = 0; k < d.nunsynced;
			     k++) { /* every meeting write inside */
				const uint32_t *span = k < i ? u->earlier : u->later;
				bool meets = k != i && pn_spans_meet(u, &d.unsynced[k]);
				ck_assert(!meets || (span[0] <= k && k < span[1]));
			}
			shared += u->later[0] != u->later[1];
		}
	}
	ck_assert_uint_gt(shared, 100); /* both answers met */
	pn_device_free(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("memory");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_fsync_covers_completed_writes);
	tcase_add_test(tc, test_remove_frees_and_create_zeroes);
	tcase_add_test(tc, test_crash_read_is_the_crash_image);
	tcase_add_test(tc, test_derive_refuses_read_bytes);
	tcase_add_test(tc, test_reads_same_agrees_with_every_byte);
	tcase_add_test(tc, test_shares_spans_agree_with_scan);
	tcase_add_test(tc, test_summary_logged_and_compared);
	tcase_add_test(tc, test_summary_memo_sees_every_change);
	tcase_add_test(tc, test_read_log_skips_own_writes);
	tcase_add_test(tc, test_umbra_reads_back_derived);
	tcase_add_test(tc, test_read_back_not_logged);
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

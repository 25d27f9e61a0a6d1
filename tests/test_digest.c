/*
 * test_digest.c: Check suite for the simulated device's digests by content (sim/device.h
 * DV10, DV12; label unit), the checker's crash-state keys:
 *
 *   dur digest     pn_device_dur_digest is the durable image's bytes and places alone:
 *                  equal for devices that got there by other write and fsync orders;
 *   crash digest   pn_device_crash_digest, taken without building the crash image, is the
 *                  durable digest of the image built, for every combination of fates of
 *                  writes that overlap, cross chunks, create chunks or lay bytes already
 *                  durable, and for unaligned writes of odd lengths that share cells, at
 *                  atomic units of 512 and 4096, and for writes of their own cells (the
 *                  running sums), in chunks dur holds or not; equal images have one digest;
 *   units differ   pn_device_units_differ follows dur as it moves (DV13);
 *   kept digest    the durable digest kept as dur moves (DV14) is the one taken from the
 *                  bytes, after every write, fsync, removal and creation of a random
 *                  history.
 */
#include "device.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "device_lib.h"

/* Writes len bytes of value v at off of file f, completed (I/O index idx), unsynced. */
static void unsynced_at(struct pn_device *d, enum pn_file f, uint64_t off, uint8_t v, uint32_t idx)
{
	uint8_t page[8192];
	memset(page, v, sizeof(page));
	struct pn_io io = {.file = f,
			   .offset = off,
			   .len = sizeof(page),
			   .buf = page,
			   .index = idx};
	pn_device_write(d, &io, idx);
	pn_device_write_done(d, idx);
}

/* The durable digest of the crash image built under fates. */
static uint64_t crash_digest_of_built(const struct pn_device *d, const struct pn_write_fate *fates)
{
	struct pn_device img;
	pn_device_init(&img, true, d->atomic_unit);
	pn_device_crash_image(d, fates, &img);
	uint64_t h = pn_device_dur_digest(&img);
	pn_device_free(&img);
	return h;
}

/* The durable image by content: two devices whose durable images hold the same bytes have
 * one digest, whatever the order of their writes and how fsyncs grouped them (one device
 * syncs each write on its own, the other writes in another order and syncs once, with a
 * write to another file left unsynced); a byte of difference in dur, or the same bytes at
 * another place, gives another; unsynced writes do not count. */
START_TEST(test_dur_digest_by_content)
{
	struct pn_device a, b;
	pn_device_init(&a, true, 512);
	pn_device_init(&b, true, 512);
	write_at(&a, 0, 0xAB, 4 * SEG);
	write_at(&b, 0, 0xAB, 4 * SEG);
	uint64_t base = pn_device_dur_digest(&a);
	ck_assert_uint_eq(base, pn_device_dur_digest(&b));
	unsynced_at(&a, PN_FILE_WAL, SEG, 0x11, 0);
	pn_device_fsync_done(&a, PN_FILE_WAL, pn_device_fsync_start(&a));
	unsynced_at(&a, PN_FILE_WAL, 2 * SEG, 0x22, 1);
	pn_device_fsync_done(&a, PN_FILE_WAL, pn_device_fsync_start(&a));
	unsynced_at(&b, PN_FILE_WAL, 2 * SEG, 0x22, 0);
	unsynced_at(&b, PN_FILE_DATA, 0, 0x33, 1);
	unsynced_at(&b, PN_FILE_WAL, SEG, 0x11, 2);
	pn_device_fsync_done(&b, PN_FILE_WAL, pn_device_fsync_start(&b));
	ck_assert_uint_eq(a.nunsynced, 0);
	ck_assert_uint_eq(b.nunsynced, 1); /* the data write: not in dur */
	ck_assert_uint_ne(pn_device_dur_digest(&a), base);
	ck_assert_uint_eq(pn_device_dur_digest(&a), pn_device_dur_digest(&b));
	/* one byte more of difference in dur */
	uint8_t one = 0x12;
	pn_device_format_write(&b, PN_FILE_WAL, SEG + 100, &one, 1);
	ck_assert_uint_ne(pn_device_dur_digest(&a), pn_device_dur_digest(&b));
	one = 0x11;
	pn_device_format_write(&b, PN_FILE_WAL, SEG + 100, &one, 1);
	ck_assert_uint_eq(pn_device_dur_digest(&a), pn_device_dur_digest(&b));
	/* the same bytes in another file */
	struct pn_device c;
	pn_device_init(&c, true, 512);
	write_at(&c, 0, 0xAB, 4 * SEG);
	unsynced_at(&c, PN_FILE_DATA, SEG, 0x11, 0);
	pn_device_fsync_done(&c, PN_FILE_DATA, pn_device_fsync_start(&c));
	ck_assert_uint_ne(pn_device_dur_digest(&c), base);
	ck_assert_uint_ne(pn_device_dur_digest(&c), pn_device_dur_digest(&a));
	pn_device_free(&a);
	pn_device_free(&b);
	pn_device_free(&c);
}
END_TEST

/* n draws of random fates (each write lost, persisted or torn, its tear the bits of the PRNG
 * from shift up) of d's unsynced writes: the digest taken without building is the built
 * image's every time. */
static void random_fates_match(struct pn_device *d, uint64_t *rng, uint32_t n, uint32_t shift)
{
	uint64_t dur = pn_device_dur_digest(d);
	ck_assert_uint_le(d->nunsynced, 16);
	for (uint32_t k = 0; k < n; k++) {
		struct pn_write_fate fates[16];
		for (uint32_t i = 0; i < d->nunsynced; i++) {
			*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
			fates[i] = (struct pn_write_fate){.fate = (*rng >> 40) % 3,
							  .sectors = *rng >> shift};
		}
		ck_assert_uint_eq(pn_device_crash_digest(d, fates, dur),
				  crash_digest_of_built(d, fates));
	}
}

/* Two rounds of six completed writes at each of atomic units 512 and 4096, over a durable
 * 128 KiB, each round checked under random fates (random_fates_match), the first round made
 * durable between them. shared: writes at random places within 20 KB of each other, up to 24
 * KiB long, that overlap in part, with a cell of mixed bytes each; else each write in a place
 * of its own (i * 64 KiB, up to 48 KiB, a round's writes 16 KiB further on), so none shares
 * a cell with another: two in dur's chunks, four past them. */
static void random_writes_match(uint64_t rng, bool shared)
{
	static uint8_t bytes[48 * 1024];
	for (uint32_t k = 0; k < 2; k++) {
		struct pn_device d;
		pn_device_init(&d, true, k ? 4096 : 512);
		write_at(&d, 0, 0xAB, 2 * SEG);
		for (uint32_t round = 0; round < 2; round++) {
			for (uint32_t i = 0; i < 6; i++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				uint32_t max = shared ? 3 * 8192 : (uint32_t)sizeof(bytes);
				uint32_t len = 1 + (uint32_t)((rng >> 17) % (max - 1));
				uint64_t off = shared ? SEG + (rng >> 33) % 20000
						      : i * SEG + (rng >> 33) % 9000 +
								round * SEG / 4;
				if (!shared && off + len > (i + 1) * SEG)
					len = (uint32_t)((i + 1) * SEG - off);
				for (uint32_t b = 0; b < len; b++)
					bytes[b] = (uint8_t)(0x10 + 16 * round + i + (b & 0x40));
				if (shared)
					memset(bytes + len / 2, 0, 1); /* a cell of mixed bytes */
				struct pn_io io = {.file = PN_FILE_WAL,
						   .offset = off,
						   .len = len,
						   .buf = bytes,
						   .index = 10 * round + i};
				pn_device_write(&d, &io, io.index);
				pn_device_write_done(&d, io.index);
			}
			random_fates_match(&d, &rng, shared ? 400 : 600, shared ? 13 : 7);
			if (round == 0) { /* dur moves under the next round's deltas */
				uint32_t n = shared ? 3 : d.nunsynced;
				for (uint32_t i = 0; i < n; i++)
					d.unsynced[i].completed_seq = 0;
				pn_device_fsync_done(&d, PN_FILE_WAL, 1);
				ck_assert_uint_eq(d.nunsynced, 6 - n);
			}
		}
		pn_device_free(&d);
	}
}

/* DV10, DV12 where writes share cells: unaligned writes of odd lengths that overlap each
 * other in part (a cell two of them lay in part is built; a cell one lays whole takes its
 * delta), across an fsync that moves dur under the kept deltas, under random fates with random
 * tears, at atomic units of 512 and 4096: the digest taken without building is the built
 * image's every time. */
START_TEST(test_crash_digest_unaligned_writes) { random_writes_match(0x9E3779B97F4A7C15ull, true); }
END_TEST

/* DV12 where no two writes share a cell (each adds a difference of running sums per run of
 * kept units): unaligned writes of odd lengths up to 48 KiB in places of their own, some in
 * chunks dur holds and some past its end (their chunks' marks), some of more than 64 blocks
 * (a unit of several blocks at 512), under random fates with random tears, at atomic units of
 * 512 and 4096, across an fsync: the digest is the built image's every time. */
START_TEST(test_crash_digest_disjoint_writes) { random_writes_match(0xD1B54A32D192ED03ull, false); }
END_TEST

/* DV13: a write's units that differ from dur are taken again once dur moves: a write of
 * bytes B over dur's A differs in every unit; once an earlier write of the same B is made
 * durable under it, in none. */
START_TEST(test_units_differ_follow_dur)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	write_at(&d, 0, 0xAB, SEG);
	unsynced_at(&d, PN_FILE_WAL, 8192, 0x5C, 0); /* B, made durable below */
	uint64_t mark = pn_device_fsync_start(&d);
	unsynced_at(&d, PN_FILE_WAL, 8192, 0x5C, 1); /* B again, completed after the mark */
	ck_assert_uint_eq(d.nunsynced, 2);
	ck_assert_uint_eq(pn_device_units_differ(&d, 1), 0xFFFF); /* 16 sectors over A */
	pn_device_fsync_done(&d, PN_FILE_WAL, mark);
	ck_assert_uint_eq(d.nunsynced, 1);
	ck_assert_uint_eq(pn_device_units_differ(&d, 0), 0);
	pn_device_free(&d);
}
END_TEST

/* DV10: a crash image's digest, taken without building it, is the durable digest of the
 * image built, under every combination of fates of five unsynced writes: two that overlap in
 * one chunk, one across a chunk boundary, one into a chunk dur never held, and one whose bytes
 * are those already durable. Equal images (that last write lost or persisted) have one
 * digest; images that differ in a byte have two. */
START_TEST(test_crash_digest_is_the_built_images)
{
	/* two devices alike but for their atomic unit: the tear's mask, unit 0 kept, is the
	 * same mask on both and means other bytes (DV12 keys the unit); each pass of the second
	 * round takes its terms from the memo */
	struct pn_device dev[2];
	const uint32_t unit[2] = {512, 4096};
	const uint64_t off[5] = {SEG, SEG + 4096, 2 * SEG - 4096, 40 * SEG, 3 * SEG};
	const uint8_t val[5] = {0x11, 0x22, 0x33, 0x44, 0xAB};
	pn_device_init(&dev[0], true, unit[0]);
	write_at(&dev[0], 0, 0xAB, 4 * SEG);
	pn_device_init(&dev[1], true, unit[1]);
	pn_device_crash_image(&dev[0], NULL, &dev[1]); /* the same durable chunks, shared */
	ck_assert_ptr_eq(pn_image_chunk(&dev[1].dur[PN_FILE_WAL], 4),
			 pn_image_chunk(&dev[0].dur[PN_FILE_WAL], 4));
	for (uint32_t k = 0; k < 2; k++) {
		for (uint32_t i = 0; i < 5; i++)
			unsynced_at(&dev[k], i == 3 ? PN_FILE_DATA : PN_FILE_WAL, off[i], val[i],
				    i);
		ck_assert_uint_eq(dev[k].nunsynced, 5);
	}
	const struct pn_write_fate kinds[3] = {{.fate = PN_FATE_LOST},
					       {.fate = PN_FATE_PERSISTED},
					       {.fate = PN_FATE_TORN, .sectors = 0x1}};
	enum { COMBOS = 243 };
	static uint64_t seen[2][COMBOS], bytes[2][COMBOS];
	static uint8_t buf[4 * SEG];
	for (uint32_t round = 0; round < 2; round++)
		for (uint32_t k = 0; k < 2; k++) {
			struct pn_device *d = &dev[k];
			uint64_t dur = pn_device_dur_digest(d);
			for (uint32_t n = 0; n < COMBOS; n++) {
				struct pn_write_fate fates[5];
				for (uint32_t i = 0, q = n; i < 5; i++, q /= 3)
					fates[i] = kinds[q % 3];
				struct pn_device img;
				pn_device_init(&img, true, unit[k]);
				pn_device_crash_image(d, fates, &img);
				uint64_t digest = pn_device_crash_digest(d, fates, dur);
				ck_assert_uint_eq(digest, pn_device_dur_digest(&img));
				ck_assert(round == 0 || digest == seen[k][n]);
				seen[k][n] = digest;
				/* the image's bytes where the writes lie, by a hash of their own */
				uint64_t h = 14695981039346656037ull;
				pn_device_read(&img, PN_FILE_WAL, 0, 4 * SEG, buf);
				for (uint32_t at = 0; at < 4 * SEG; at++)
					h = (h ^ buf[at]) * 1099511628211ull;
				pn_device_read(&img, PN_FILE_DATA, 40 * SEG, 8192, buf);
				for (uint32_t at = 0; at < 8192; at++)
					h = (h ^ buf[at]) * 1099511628211ull;
				bytes[k][n] = h;
				pn_device_free(&img);
			}
		}
	uint32_t equal = 0;
	for (uint32_t a = 0; a < 2 * COMBOS; a++)
		for (uint32_t b = a + 1; b < 2 * COMBOS; b++) {
			uint32_t ka = a / COMBOS, na = a % COMBOS, kb = b / COMBOS, nb = b % COMBOS;
			bool same = bytes[ka][na] == bytes[kb][nb];
			ck_assert(same == (seen[ka][na] == seen[kb][nb]));
			equal += same;
		}
	ck_assert_uint_gt(equal, 0); /* the last write's fates give equal images */
	ck_assert(seen[0][2 * 81 + 2 * 27] != seen[1][2 * 81 + 2 * 27]); /* tears differ */
	pn_device_free(&dev[0]);
	pn_device_free(&dev[1]);
}
END_TEST

/* The durable digest of d from its bytes: each chunk dur holds written anew, at its place,
 * into a fresh device (new chunks, so no term of d's chunks is taken from the memo). */
static uint64_t dur_digest_from_bytes(const struct pn_device *d)
{
	static uint8_t chunk[PN_CHUNK_SIZE];
	struct pn_device ref;
	pn_device_init(&ref, true, d->atomic_unit);
	for (int f = 0; f < PN_FILE_COUNT; f++)
		for (uint64_t c = 0; c < d->dur[f].nleaves * PN_LEAF_CHUNKS; c++) {
			const struct pn_chunk *ch = pn_image_chunk(&d->dur[f], c);
			if (!ch || ch == PN_CHUNK_REMOVED)
				continue;
			pn_device_read_dur(d, (enum pn_file)f, c * PN_CHUNK_SIZE, PN_CHUNK_SIZE,
					   chunk);
			pn_device_format_write(&ref, (enum pn_file)f, c * PN_CHUNK_SIZE, chunk,
					       PN_CHUNK_SIZE);
		}
	uint64_t h = pn_device_dur_digest(&ref);
	pn_device_free(&ref);
	return h;
}

/* DV14: a random history of 400 steps on two files: completed and in-flight writes of 1 to
 * 20,000 bytes at unaligned places, most of them over two segments (overlapping, so a write's
 * DV12 changes may be taken before another under it is made durable), the rest over two
 * segments dur never held (across chunks, into new chunks), some of zeros, crash digests taken before some fsyncs (so the
 * writes made durable bring their DV12 changes) and not before others, fsyncs of either
 * file, and a segment removed and created again. After every step the kept digest is the one
 * taken from dur's bytes, and it moved with dur. */
START_TEST(test_kept_dur_digest)
{
	static uint8_t bytes[20000];
	uint64_t rng = 0x2545F4914F6CDD1Dull;
	struct pn_device d;
	pn_device_init(&d, true, 512);
	write_at(&d, 0, 0xAB, 2 * SEG);
	ck_assert_uint_eq(pn_device_dur_digest(&d), dur_digest_from_bytes(&d));
	uint32_t index = 0, moves = 0, fresh_fsyncs = 0;
	for (uint32_t step = 0; step < 400; step++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t op = (uint32_t)(rng >> 60);
		uint64_t before = pn_device_dur_digest(&d);
		if (op < 9 && d.nunsynced < 48) { /* a write, completed one time in two */
			enum pn_file f = (rng >> 20) & 1 ? PN_FILE_DATA : PN_FILE_WAL;
			uint32_t len = 1 + (uint32_t)((rng >> 24) % sizeof(bytes));
			uint64_t off = op < 7 ? (rng >> 40) % (2 * SEG) /* most overlap */
					      : 4 * SEG + (rng >> 40) % (2 * SEG - len);
			for (uint32_t b = 0; b < len; b++)
				bytes[b] = (rng >> 8) % 5 == 0 ? 0 : (uint8_t)(step + (b >> 9));
			struct pn_io io = {.file = f,
					   .offset = off,
					   .len = len,
					   .buf = bytes,
					   .index = ++index};
			pn_device_write(&d, &io, index);
			if ((rng >> 4) % 2 != 0)
				pn_device_write_done(&d, index);
		} else if (op < 14) { /* an fsync, the DV12 changes taken first or not */
			if ((rng >> 12) & 1 && d.nunsynced) {
				struct pn_write_fate fates[64];
				for (uint32_t i = 0; i < d.nunsynced; i++)
					fates[i] = (struct pn_write_fate){
						.fate = PN_FATE_PERSISTED};
				(void)pn_device_crash_digest(&d, fates, before);
				fresh_fsyncs++;
			}
			for (uint32_t i = 0; i < d.nunsynced; i++)
				if (!d.unsynced[i].completed && (rng >> (16 + i % 32)) & 1)
					pn_device_write_done(&d, d.unsynced[i].io_index);
			enum pn_file f = (rng >> 14) & 1 ? PN_FILE_DATA : PN_FILE_WAL;
			pn_device_fsync_done(&d, f, pn_device_fsync_start(&d));
		} else { /* segment 5 of the WAL removed, then created again */
			bool free_of_writes = true;
			for (uint32_t i = 0; i < d.nunsynced; i++)
				if (d.unsynced[i].file == PN_FILE_WAL &&
				    d.unsynced[i].offset + d.unsynced[i].len > 5 * SEG)
					free_of_writes = false;
			if (free_of_writes) {
				pn_device_remove(&d, PN_FILE_WAL, 5 * SEG, SEG);
				ck_assert_uint_eq(pn_device_dur_digest(&d),
						  dur_digest_from_bytes(&d));
				pn_device_create(&d, PN_FILE_WAL, 5 * SEG, SEG);
			}
		}
		uint64_t now = pn_device_dur_digest(&d);
		ck_assert_uint_eq(now, dur_digest_from_bytes(&d));
		moves += now != before;
	}
	ck_assert_uint_gt(moves, 50);
	ck_assert_uint_gt(fresh_fsyncs, 20);
	pn_device_free(&d);
}
END_TEST

static Suite *digest_suite(void)
{
	Suite *s = suite_create("digest");
	TCase *tc = tcase_create("by content");
	tcase_add_test(tc, test_dur_digest_by_content);
	tcase_add_test(tc, test_crash_digest_is_the_built_images);
	tcase_add_test(tc, test_crash_digest_unaligned_writes);
	tcase_add_test(tc, test_crash_digest_disjoint_writes);
	tcase_add_test(tc, test_units_differ_follow_dur);
	tcase_add_test(tc, test_kept_dur_digest);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(digest_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_chunks.c: Check suite for the chunk store beneath the simulated device (sim/chunks.h
 * CK1-CK4; label unit) and the seam's extension it serves (env.h pn_env_fast): every trick
 * changes memory and time, never a byte an image reads:
 *
 *   fresh chunks   CK1: a chunk a write creates reads as zeros around that write, whatever
 *                  its pool bytes held before; the huge-page slabs are zeroed and aligned;
 *   cur/dur        CK2: with tracking, formatted and synced bytes are held once, an unsynced
 *                  write costs its own chunk until it is synced;
 *   copy on write  CK2: a write into part of a shared chunk, or of an unwritten one, leaves
 *                  every other byte as it was, in the writer's image and in the one it
 *                  shared with;
 *   lazy           CK3: a lazy file's unwritten chunks read as the builder's bytes, a write
 *                  into one keeps the rest as built, pn_device_hash and a copy are those of
 *                  the eagerly filled device, a tracked device refuses lazy extents; a
 *                  chunk's parts no write touched stay unbuilt until read, and reads, hash
 *                  and copy see the builder's bytes there; whole runs on a lazily formatted
 *                  device end with the device, the pages and the metrics of an eager one;
 *   lent           CK4: a lent write leaves the bytes a copied one does, halves go back when
 *                  never dispatched, a tracked device lends none;
 *   extension      a run with no env extension (opt.plain: every fallback) ends with the
 *                  events, metrics and data bytes of one with it.
 */
#include "device.h"
#include "load.h"
#include "world.h"

#include <check.h>
#include <xxhash.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_lib.h"

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

/* pn_big_alloc: a big block freed is the next one of its size (the newest first) when
 * its size asked again, and zalloc zeroes a block that comes back dirty. */
START_TEST(test_big_blocks_kept)
{
	size_t big = PN_BIG_MIN, other = PN_BIG_MIN + 8;
	uint8_t *a = pn_big_alloc(big), *b = pn_big_alloc(big), *c = pn_big_alloc(other);
	ck_assert(a && b && c);
	memset(a, 0xEE, big);
	pn_big_free(a, big);
	pn_big_free(c, other);
	ck_assert_ptr_eq(pn_big_alloc(other), c); /* its size, not the newest block */
	uint8_t *z = pn_big_zalloc(big);
	ck_assert_ptr_eq(z, a);
	for (size_t i = 0; i < big; i++)
		ck_assert_uint_eq(z[i], 0);
	pn_big_free(b, big);
	pn_big_free(z, big);
	ck_assert_ptr_eq(pn_big_alloc(big), z); /* the newest first */
	pn_big_free(z, big);
	/* PN_BIG_KEPT blocks of a third size: the store holds them all (the oldest two went) */
	uint8_t *fill[PN_BIG_KEPT];
	for (int i = 0; i < PN_BIG_KEPT; i++)
		fill[i] = pn_big_alloc(big + 16);
	for (int i = 0; i < PN_BIG_KEPT; i++)
		pn_big_free(fill[i], big + 16);
	ck_assert_ptr_eq(pn_big_alloc(big + 16), fill[PN_BIG_KEPT - 1]);
	free(fill[PN_BIG_KEPT - 1]);
	for (int i = 0; i < PN_BIG_KEPT - 1; i++) /* the store's blocks, back to malloc's */
		free(pn_big_alloc(big + 16));
	pn_big_free(c, other);
}
END_TEST

/* CK5: a copy shares its chunk's serial; a write, in place or to a shared chunk, gives a
 * serial never given before; pn_chunk_hash is the hash of the bytes now, whichever way they
 * changed. */
START_TEST(test_serials_name_bytes)
{
	struct pn_device d, img;
	pn_device_init(&d, false, 512);
	write_at(&d, 0, 0xAB, SEG);
	const struct pn_chunk *c = pn_image_chunk(&d.cur[PN_FILE_WAL], 1);
	uint64_t first = c->serial, h = pn_chunk_hash(c);
	ck_assert_uint_eq(h, XXH3_64bits(c->data, PN_CHUNK_SIZE));
	write_at(&d, PN_CHUNK_SIZE + 7, 0x11, 1); /* in place (refs 1) */
	ck_assert_ptr_eq(pn_image_chunk(&d.cur[PN_FILE_WAL], 1), c);
	ck_assert_uint_gt(c->serial, first);
	ck_assert_uint_ne(pn_chunk_hash(c), h);
	ck_assert_uint_eq(pn_chunk_hash(c), XXH3_64bits(c->data, PN_CHUNK_SIZE));
	pn_device_init(&img, false, 512);
	pn_device_copy(&d, &img);
	const struct pn_chunk *shared = pn_image_chunk(&img.cur[PN_FILE_WAL], 1);
	ck_assert_ptr_eq(shared, c);
	uint64_t serial = c->serial;
	write_at(&img, PN_CHUNK_SIZE + 7, 0xAB, 1); /* back to the first bytes, in a copy */
	const struct pn_chunk *copy = pn_image_chunk(&img.cur[PN_FILE_WAL], 1);
	ck_assert_ptr_ne(copy, c);
	ck_assert_uint_eq(c->serial, serial); /* the original is untouched */
	ck_assert_uint_gt(copy->serial, serial);
	ck_assert_uint_eq(pn_chunk_hash(copy), h); /* the same bytes as at first */
	pn_device_free(&img);
	pn_device_free(&d);
}
END_TEST

/* CK2: what is durable and read alike is one chunk, whichever image reads it. */
START_TEST(test_cur_dur_share_synced)
{
	struct pn_device d;
	pn_device_init(&d, true, 512);
	uint64_t base = pn_chunks_pool_bytes();
	write_at(&d, 0, 0xAB, 4 * SEG);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - base, 4 * SEG);

	uint8_t page[8192], back[8192];
	memset(page, 0x5A, sizeof(page));
	struct pn_io io = {.file = PN_FILE_WAL,
			   .offset = SEG,
			   .len = sizeof(page),
			   .buf = page,
			   .index = 3};
	pn_device_write(&d, &io, 1);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - base, 4 * SEG + PN_CHUNK_SIZE);
	pn_device_read_dur(&d, PN_FILE_WAL, SEG, sizeof(back), back);
	ck_assert_uint_eq(back[0], 0xAB);
	pn_device_write_done(&d, 3);
	pn_device_fsync_done(&d, PN_FILE_WAL, pn_device_fsync_start(&d));
	ck_assert_uint_eq(d.nunsynced, 0);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - base, 4 * SEG);
	pn_device_read_dur(&d, PN_FILE_WAL, SEG, sizeof(back), back);
	ck_assert_mem_eq(back, page, sizeof(page));
	pn_device_read(&d, PN_FILE_WAL, SEG + sizeof(page), 1, back);
	ck_assert_uint_eq(back[0], 0xAB);

	/* a crash image (tracked) shares all of it too */
	struct pn_device img;
	pn_device_init(&img, true, 512);
	pn_device_crash_image(&d, NULL, &img);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - base, 4 * SEG);
	pn_device_free(&img);
	pn_device_free(&d);
	ck_assert_uint_eq(pn_chunks_pool_bytes(), base);
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

/* ---- CK3: lazy extents ----------------------------------------------------------------- */

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

/* CK3: a write that creates a chunk leaves the parts it does not touch unbuilt (built only
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
	uint64_t pool = pn_chunks_pool_bytes();
	pn_device_write(&lazy, &io, 1); /* first: it takes the freed chunk */
	ck_assert_uint_eq(pn_chunks_pool_bytes() - pool, PN_CHUNK_SIZE / 2); /* half of it */
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
	ck_assert_uint_eq(pn_chunks_pool_bytes() - pool, /* now all of it, and eager's */
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

/* ---- CK4: lent writes ------------------------------------------------------------------ */

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
	uint64_t before = pn_chunks_pool_bytes();
	io.buf = page;
	pn_device_write(copied, &io, 1);
	uint64_t grew = pn_chunks_pool_bytes() - before;
	uint32_t half = 0;
	uint64_t taken = lent->lent_taken, copies = lent->lent_copied;
	before = pn_chunks_pool_bytes();
	io.buf = pn_device_lend(lent, PN_FILE_DATA, off_lent, 8192, &half);
	ck_assert_ptr_nonnull(io.buf);
	ck_assert_uint_eq(half, off_lent % PN_CHUNK_SIZE / 8192 + 1);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - before, 8192); /* the lent half */
	memcpy(io.buf, page, sizeof(page));
	io.lent = true;
	pn_device_write_lent(lent, &io, half, 1);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - before, grew);
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

/* CK4: a lent write's half becomes the chunk's bytes (a new half chunk; a half chunk of the
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
	uint64_t pool = pn_chunks_pool_bytes();
	ck_assert(lent_write(&lent, &copied, 3 * 8192, 3 * 8192, 0x11)); /* a new half chunk */
	ck_assert(lent_write(&lent, &copied, 0, 0, 0x22));               /* a low one */
	lent_same(&lent, &copied);
	ck_assert(lent_write(&lent, &copied, 3 * 8192, 3 * 8192, 0x33)); /* swapped */
	lent_same(&lent, &copied);
	ck_assert_uint_eq(pn_chunks_pool_bytes() - pool, 4 * 8192); /* both devices: 2 halves */
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
	uint64_t before = pn_chunks_pool_bytes();
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
	ck_assert_uint_eq(pn_chunks_pool_bytes() - before, 2 * PN_CHUNK_SIZE); /* one chunk each */
	/* a lent half never written goes back */
	before = pn_chunks_pool_bytes();
	early = pn_device_lend(&lent, PN_FILE_DATA, 8192, 8192, &half);
	ck_assert_ptr_null(early); /* chunk 0 is a half chunk of the low half */
	struct pn_device fresh;
	pn_device_init(&fresh, false, 512);
	pn_device_set_lazy(&fresh, PN_FILE_DATA, LAZY_END, lazy_bytes, NULL);
	early = pn_device_lend(&fresh, PN_FILE_DATA, 8192, 8192, &half);
	ck_assert_ptr_nonnull(early);
	ck_assert_uint_eq(half, 2);
	pn_device_lend_back(early, half);
	ck_assert_uint_eq(pn_chunks_pool_bytes(), before);
	ck_assert_uint_eq(lent.lent_taken, 3);
	ck_assert_uint_eq(lent.lent_copied, 2);
	pn_device_free(&fresh);
	pn_device_free(&lent);
	pn_device_free(&copied);
	ck_assert_uint_eq(pn_chunks_pool_bytes(), pool);
}
END_TEST

/* CK4: a run stopped with lent writes not yet dispatched gives their halves back when its
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
	uint64_t pool = pn_chunks_pool_bytes();
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
		ck_assert_uint_eq(pn_chunks_pool_bytes(), pool);
	}
	ck_assert_uint_eq(stopped, 3); /* some runs did stop with lent writes queued */
	pn_scenario_free(&sc);
}
END_TEST

/* CK4: a tracked device lends nothing: its writes keep their copies and unsynced lists. */
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
	ck_assert_uint_gt(l->dev.lazy[PN_FILE_DATA].end, 0); /* it did format lazily */
	ck_assert_uint_gt(l->dev.lent_taken, 0);             /* and its writes were lent (CK4) */
	ck_assert_uint_eq(e->dev.lazy[PN_FILE_DATA].end, 0);
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

/* A chooser that runs the seeded order: a world under it formats lazily with a memo. */
static uint32_t seeded_choice(void *arg, struct pn_world *w, const struct pn_event *cand,
			      uint32_t n)
{
	(void)arg, (void)w, (void)cand, (void)n;
	return 0;
}

/* The worlds of one search share one memo of the pages as built (world.h pn_world_lazy): a
 * world that starts with the memo another filled ends as an eager world does, event for
 * event and byte for byte. */
START_TEST(test_search_worlds_share_built_pages)
{
	const char *yaml = "name: shared\nseed: 3\n"
			   "storage: {pages: 64, buffers: 8, wal_segment_size: 1MiB}\n"
			   "protocol: {mode: umbra, checksums: true}\n"
			   "checkpoint: {interval: 20ms, max_wal_size: 8MiB}\n"
			   "workload: {kind: random, clients: 2, transactions: 40}\n";
	char err[256];
	struct pn_scenario sc;
	ck_assert_msg(pn_scenario_load_string("shared.yaml", yaml, strlen(yaml), &sc, err,
					      sizeof(err)),
		      "%s", err);
	struct pn_world_lazy memo = {0};
	struct pn_world w[3];
	for (int i = 0; i < 3; i++) {
		struct pn_world_options o = {.check_each_event = true,
					     .eager = i == 2,
					     .choose = seeded_choice,
					     .lazy = &memo};
		ck_assert_msg(pn_world_init(&w[i], &sc, &o, NULL), "%s", w[i].error);
		ck_assert(i == 2 ? w[i].lazy == NULL : w[i].lazy == &memo);
		pn_engine_start(w[i].e);
		ck_assert_int_eq(pn_world_run(&w[i]), 0);
		if (i == 0)
			ck_assert_ptr_nonnull(memo.memo); /* the first world filled it */
	}
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(w[i].events, w[2].events);
		ck_assert_uint_eq(pn_world_device_hash(&w[i].dev), pn_world_device_hash(&w[2].dev));
	}
	for (int i = 0; i < 3; i++)
		pn_world_free(&w[i]);
	pn_world_lazy_free(&memo);
	pn_scenario_free(&sc);
}
END_TEST

/* The seam's extension (env.h pn_env_fast) changes no result: a run whose world fills none
 * (opt.plain: the engine's fallbacks, its own write buffers, summaries through read_sync, WAL
 * built and never removed) ends with the events, metrics and data bytes of one that does. */
START_TEST(test_plain_env_same_as_fast)
{
	const char *yaml = "name: plain\nseed: 5\n"
			   "storage: {pages: 2100, buffers: 48, wal_segment_size: 1MiB}\n"
			   "protocol: {mode: doublewrite, checksums: true}\n"
			   "checkpoint: {interval: 20ms, max_wal_size: 4MiB}\n"
			   "workload: {kind: pgbench, scale: 1, clients: 4, transactions: 300}\n";
	char err[256];
	struct pn_scenario sc;
	ck_assert_msg(pn_scenario_load_string("plain.yaml", yaml, strlen(yaml), &sc, err,
					      sizeof(err)),
		      "%s", err);
	struct pn_world *w[2];
	for (int plain = 0; plain < 2; plain++) {
		struct pn_world_options o = {.check_each_event = true, .plain = plain};
		w[plain] = calloc(1, sizeof(*w[plain]));
		ck_assert_ptr_nonnull(w[plain]);
		ck_assert_msg(pn_world_init(w[plain], &sc, &o, NULL), "%s", w[plain]->error);
		pn_engine_start(w[plain]->e);
		ck_assert_int_eq(pn_world_run(w[plain]), 0);
	}
	ck_assert_uint_gt(w[0]->dev.lent_taken, 0); /* the extension was used */
	ck_assert_uint_eq(w[1]->dev.lent_taken + w[1]->dev.lent_copied, 0);
	ck_assert_uint_eq(w[0]->events, w[1]->events);
	const struct pn_metrics *a = pn_engine_metrics(w[0]->e), *b = pn_engine_metrics(w[1]->e);
	ck_assert_uint_eq(a->wal_bytes, b->wal_bytes);
	ck_assert_uint_eq(a->data_reads, b->data_reads);
	ck_assert_uint_eq(a->data_writes, b->data_writes);
	uint64_t size = pn_engine_file_size(w[0]->e, PN_FILE_DATA);
	uint8_t x[8192], y[8192];
	for (uint64_t off = 0; off < size; off += sizeof(x)) {
		pn_device_read(&w[0]->dev, PN_FILE_DATA, off, sizeof(x), x);
		pn_device_read(&w[1]->dev, PN_FILE_DATA, off, sizeof(y), y);
		ck_assert_msg(memcmp(x, y, sizeof(x)) == 0, "data bytes at %llu differ",
			      (unsigned long long)off);
	}
	for (int i = 0; i < 2; i++) {
		pn_world_free(w[i]);
		free(w[i]);
	}
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_lazy_runs_same_as_eager)
{
	const char *pgbench = "{kind: pgbench, scale: 1, clients: 4, transactions: 300}";
	lazy_same_as_eager(pgbench, "fpw", 2100, 48);
	lazy_same_as_eager(pgbench, "umbra", 2100, 48);
	lazy_same_as_eager("{kind: tpcc, warehouses: 1, clients: 4, transactions: 40}", "fpw",
			   40000, 256);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("chunks");
	TCase *tc = tcase_create("store");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_fresh_chunk_zero_around_write);
	tcase_add_test(tc, test_big_blocks_kept);
	tcase_add_test(tc, test_cur_dur_share_synced);
	tcase_add_test(tc, test_serials_name_bytes);
	tcase_add_test(tc, test_partial_write_keeps_the_rest);
	suite_add_tcase(s, tc);
	tc = tcase_create("lazy");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_lazy_reads_writes_hash);
	tcase_add_test(tc, test_lazy_unbuilt_parts);
	tcase_add_test_raise_signal(tc, test_lazy_refused_when_tracked, SIGABRT);
	tcase_add_test(tc, test_lazy_runs_same_as_eager);
	tcase_add_test(tc, test_search_worlds_share_built_pages);
	tcase_add_test(tc, test_plain_env_same_as_fast);
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

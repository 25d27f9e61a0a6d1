/*
 * walfmt_fixture.h: what the WAL format's two suites share (test_walfmt.c: sizes, encode and
 * decode, CRC-32C, positions, the page checksum; test_walread.c: an in-memory WAL copied and
 * read back, and where it ends): deterministic data and records built to the sizes
 * postgres-facts.md section 3 measured. Label: unit.
 */
#ifndef PN_TEST_WALFMT_FIXTURE_H
#define PN_TEST_WALFMT_FIXTURE_H

#include "check_fixture.h"
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

/* ---- deterministic data ---------------------------------------------------------------- */

static inline void fill_random(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(next_rand(&s) >> 24);
}

/* Bytes for images, block data and main data: 4 pages and a little more. */
static inline const uint8_t *pattern(void)
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
static inline void vector_page(uint8_t *page, uint32_t seed)
{
	fill_random(page, PAGE, seed);
	page[8] = page[9] = 0; /* pd_checksum */
	page[14] = 0x00;       /* pd_upper = 0x1F00: not a "new" page */
	page[15] = 0x1F;
}

/* ---- record builders ------------------------------------------------------------------- */

static inline struct pn_wal_record rec_main(uint8_t rmid, uint8_t info, uint32_t main_len)
{
	struct pn_wal_record r = {.rmid = rmid, .info = info, .xid = 700};
	r.main_data = pattern() + 100;
	r.main_len = main_len;
	return r;
}

static inline struct pn_wal_record rec_commit(void) { return rec_main(PN_RM_XACT, 0x00, 8); }

static inline struct pn_wal_record rec_checkpoint(void) { return rec_main(PN_RM_XLOG, 0x10, 88); }

/* Heap HOT_UPDATE: 14 B xl_heap_update, block data = 5 B xl_heap_header + tuple bytes. */
static inline struct pn_wal_record rec_hot_update(uint16_t data_len)
{
	struct pn_wal_record r = rec_main(PN_RM_HEAP, 0x40, 14);
	r.nblocks = 1;
	r.blocks[0].blkno = 3;
	r.blocks[0].data = pattern() + 300;
	r.blocks[0].data_len = data_len;
	return r;
}

static inline struct pn_wal_record rec_fpi(uint16_t hole_offset, uint16_t hole_length)
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
static inline struct pn_wal_record rec_visible(void)
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
static inline struct pn_wal_record rec_four(void)
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
static inline struct pn_wal_record rec_filler(uint32_t tot_len)
{
	uint32_t main_len = tot_len - PN_WAL_RECORD_HEADER - 2;
	if (main_len > 255)
		main_len -= 3;
	struct pn_wal_record r = rec_main(PN_RM_XLOG, 0x20, main_len);
	r.main_data = pattern();
	return r;
}

/* A record whose bytes were changed, its CRC made right again. */
static inline void reseal(uint8_t *rec)
{
	uint32_t n = pn_get32(rec);
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), rec + 24, n - 24);
	pn_put32(rec + 20, pn_crc32c_final(pn_crc32c_update(crc, rec, 20)));
}

#endif

/*
 * oracle_fixture.h: what the oracle's two suites share (test_oracle.c: each record kind,
 * upto, masking; test_oracle_replay.c: the naive full replay and the performance bound):
 * deterministic data, hand-built pages, records built with the WAL encoder and fed to an
 * oracle at increasing LSNs. Label: unit.
 */
#ifndef PN_TEST_ORACLE_FIXTURE_H
#define PN_TEST_ORACLE_FIXTURE_H

#include "check_fixture.h"
#include "oracle.h"
#include "walfmt.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 8192u
#define NITEMS 60u
#define TUP 104u
#define UPPER (PAGE - NITEMS * TUP)
#define LOWER (24u + 4u * NITEMS)
#define LSN0 0x2000028ull

/* ---- deterministic data and hand-built pages -------------------------------------------- */

static inline uint32_t below(uint32_t *s, uint32_t n) { return next_rand(s) % n; }

static inline uint32_t tuple_at(const uint8_t *page, uint32_t item)
{
	return pn_get16(page + 24 + 4 * item);
}

/* A heap page: NITEMS tuples of 104 B packed at the end, payload bytes from the seed. */
static inline void heap_page(uint8_t *page, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 7;
	memset(page, 0, PAGE);
	pn_put16(page + 12, LOWER);
	pn_put16(page + 14, UPPER);
	pn_put16(page + 16, PAGE);
	pn_put16(page + 18, PAGE | 4);
	for (uint32_t i = 0; i < NITEMS; i++) {
		uint32_t off = UPPER + i * TUP;
		pn_put16(page + 24 + 4 * i, (uint16_t)off);
		pn_put16(page + 24 + 4 * i + 2, TUP);
		pn_put32(page + off, 2);      /* t_xmin */
		pn_put16(page + off + 18, 1); /* t_infomask2 */
		page[off + 22] = 24;          /* t_hoff */
		for (uint32_t j = 24; j < TUP; j++)
			page[off + j] = (uint8_t)(next_rand(&s) >> 24);
	}
}

/* heap_pages heap pages then slru_pages zeroed SLRU pages. */
static inline uint8_t *initial_pages(uint32_t heap_pages, uint32_t slru_pages)
{
	uint8_t *p = calloc(heap_pages + slru_pages, PAGE);
	ck_assert_ptr_nonnull(p);
	for (uint32_t i = 0; i < heap_pages; i++)
		heap_page(p + (size_t)i * PAGE, i + 1);
	return p;
}

static inline void put_lsn(uint8_t *page, uint64_t lsn)
{
	pn_put32(page, (uint32_t)(lsn >> 32));
	pn_put32(page + 4, (uint32_t)lsn);
}

/* ---- records ----------------------------------------------------------------------------- */

/* A record and the bytes it points at; build in place (the record points into itself). */
struct trec {
	struct pn_wal_record r;
	uint8_t main[32];
	uint8_t data[PN_WAL_MAX_BLOCKS][12 * 8]; /* up to 8 frozen tuples, or 16 B of a record */
};

static inline void rec_init(struct trec *t, uint8_t rmid, uint8_t info, uint32_t xid)
{
	memset(t, 0, sizeof(*t));
	t->r.rmid = rmid;
	t->r.info = info;
	t->r.xid = xid;
	t->r.main_data = t->main;
}

static inline void add_block(struct trec *t, uint32_t blkno, uint16_t data_len)
{
	struct pn_wal_block *b = &t->r.blocks[t->r.nblocks];
	b->blkno = blkno;
	b->data = t->data[t->r.nblocks];
	b->data_len = data_len;
	t->r.nblocks++;
}

static inline void rec_hot(struct trec *t, uint32_t xid, uint32_t blkno, uint16_t offnum,
			   uint16_t im2, uint16_t im, uint32_t val)
{
	rec_init(t, PN_RM_HEAP, 0x40, xid);
	pn_put32(t->main, xid);
	pn_put16(t->main + 4, offnum);
	pn_put16(t->main + 12, offnum);
	t->r.main_len = 14;
	add_block(t, blkno, 9);
	pn_put16(t->data[0], im2);
	pn_put16(t->data[0] + 2, im);
	t->data[0][4] = 24;
	pn_put32(t->data[0] + 5, val);
}

static inline void rec_freeze(struct trec *t, uint32_t xid, uint32_t blkno, uint32_t n,
			      const uint16_t *offnums, const uint16_t *masks)
{
	rec_init(t, PN_RM_HEAP2, 0x30, xid);
	pn_put32(t->main, xid);
	pn_put16(t->main + 4, (uint16_t)n);
	t->r.main_len = 6;
	for (uint32_t i = 0; i < n; i++) { /* block data: xl_heap_freeze_tuple (PostgreSQL 15) */
		uint8_t *f = t->data[0] + 12 * i;
		memset(f, 0, 12);
		pn_put32(f, 0); /* xmax */
		pn_put16(f + 4, offnums[i]);
		pn_put16(f + 6, 1); /* t_infomask2 */
		pn_put16(f + 8, masks[i]);
	}
	add_block(t, blkno, (uint16_t)(12 * n));
}

static inline void rec_dedup(struct trec *t, uint32_t xid, uint32_t blkno, uint8_t salt)
{
	rec_init(t, PN_RM_BTREE, 0x60, xid);
	pn_put16(t->main, 1);
	t->r.main_len = 2;
	add_block(t, blkno, 4);
	pn_put16(t->data[0], 1);
	pn_put16(t->data[0] + 2, NITEMS);
	t->data[0][0] = salt;
}

static inline void rec_clog(struct trec *t, uint32_t xid, uint32_t blkno, bool header)
{
	rec_init(t, PN_RM_CLOG, 0x20, xid);
	pn_put32(t->main, xid);
	t->main[4] = header;
	t->r.main_len = 5;
	add_block(t, blkno, 0);
}

/* Storage/TRUNCATE of the model's relation to n blocks (xl_smgr_truncate, its own bytes). */
static inline void rec_truncate(struct trec *t, uint32_t n, uint32_t rel)
{
	rec_init(t, 2, 0x20, 0);
	pn_put32(t->main, n);
	pn_put32(t->main + 4, 1663);
	pn_put32(t->main + 8, 5);
	pn_put32(t->main + 12, rel);
	pn_put32(t->main + 16, 7);
	t->r.main_len = 20;
}

static inline void rec_commit(struct trec *t, uint32_t xid)
{
	rec_init(t, PN_RM_XACT, 0x00, xid);
	pn_put64(t->main, 12345);
	t->r.main_len = 8;
}

/* Adds an image block (APPLY) of `image` with the hole [hole_off, hole_off+hole_len). */
static inline void add_image(struct trec *t, uint32_t blkno, const uint8_t *image,
			     uint16_t hole_off, uint16_t hole_len)
{
	add_block(t, blkno, 0);
	struct pn_wal_block *b = &t->r.blocks[t->r.nblocks - 1];
	b->has_image = b->image_apply = true;
	b->image = image;
	b->hole_offset = hole_off;
	b->hole_length = hole_len;
}

/* Feeds records to an oracle at increasing LSNs (gap: extra bytes after each record). */
struct feeder {
	struct pn_oracle *o;
	uint64_t pos;
	uint8_t buf[PN_WAL_MAX_BLOCKS * PAGE + 4096];
};

static inline void feeder_init(struct feeder *f, struct pn_oracle *o)
{
	f->o = o;
	f->pos = LSN0;
}

static inline bool feed_gap(struct feeder *f, const struct trec *t, uint32_t gap, uint64_t *end)
{
	uint32_t len = pn_wal_record_encode(&t->r, PAGE, f->buf);
	EXPECT(len <= sizeof(f->buf));
	uint64_t start = f->pos, stop = start + PN_ALIGN8(len);
	if (!pn_oracle_add(f->o, f->buf, len, start, stop))
		return false;
	f->pos = stop + 8u * gap;
	if (end)
		*end = stop;
	return true;
}

static inline uint64_t feed(struct feeder *f, const struct trec *t)
{
	uint64_t end = 0;
	ck_assert_msg(feed_gap(f, t, 0, &end), "record refused");
	return end;
}

static inline struct pn_oracle *oracle(uint32_t heap, uint32_t slru, bool headers,
				       uint8_t **initial)
{
	*initial = initial_pages(heap, slru);
	struct pn_oracle *o = pn_oracle_new(heap, slru, PAGE, headers, *initial);
	ck_assert_ptr_nonnull(o);
	return o;
}

static inline void expect_page(struct pn_oracle *o, uint32_t page, uint64_t upto,
			       const uint8_t *want)
{
	static uint8_t got[PAGE];
	pn_oracle_page(o, page, upto, got);
	for (uint32_t i = 0; i < PAGE; i++)
		if (got[i] != want[i])
			ck_abort_msg("page %u at %llX: byte %u is %02X, expected %02X", page,
				     (unsigned long long)upto, i, got[i], want[i]);
}

#endif

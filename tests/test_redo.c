/*
 * test_redo.c: the redo table, one case (or more) per record kind on a known page.
 *
 *   kinds     every record kind has a case below (a kind added to the table without one
 *             fails here);
 *   bytes     each case builds its record and its page(s) from fixed inputs, applies every
 *             block, and compares the result (applied or refused, and the CRC-32C of the
 *             pages after) with the values captured from the apply functions as they were
 *             before the redo table (page.c's switch, wl_vacuum.c's, wl_btree.c's and
 *             the Umbra policy file's apply functions); so moving them changes no byte;
 *   meaning   a few fields per kind read back directly (t_xmax, pd_prune_xid, the SLRU bit,
 *             line pointers), so that a captured value is also a right one;
 *   ids       rmid/info of every kind round-trip through the lookup, unknown pairs miss,
 *             names are unique;
 *   codec     the hint-delta fragment encoding round-trips, malformed block data is refused;
 *   describe  a record's line of text, and its truncation.
 * A case whose result differs prints its line of the table (name, applied, CRC) to stderr.
 */
#include "btree.h"
#include "crc32c.h"
#include "page.h"
#include "redo.h"
#include "redo_btree.h"
#include "redo_heap.h"
#include "redo_xlog.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PS 8192u
#define NPAGES 3

/* One case's record, its pages (one per block applied) and scratch for its data. */
struct fix {
	struct pn_wal_record r;
	uint8_t page[NPAGES][PS];
	uint8_t main[64];
	uint8_t data[NPAGES][PS];
	uint8_t image[PS];
	uint32_t npages; /* blocks applied: block i to page[i] */
};

static void kind(struct fix *f, enum pn_rec k, uint32_t xid, uint8_t nblocks)
{
	pn_rec_ids(k, &f->r.rmid, &f->r.info);
	f->r.xid = xid;
	f->r.nblocks = nblocks;
	f->r.main_data = f->main;
	f->npages = nblocks;
	for (uint32_t i = 0; i < nblocks; i++)
		f->r.blocks[i].blkno = 7 + i;
}

static void data(struct fix *f, uint32_t b, uint32_t len)
{
	f->r.blocks[b].data = f->data[b];
	f->r.blocks[b].data_len = (uint16_t)len;
}

/* xl_heap_header {infomask2, infomask, t_hoff} + `n` tuple bytes from offset 23. */
static uint32_t heap_data(uint8_t *d, uint32_t n, uint8_t seed)
{
	pn_put16(d, 4);
	pn_put16(d + 2, 0x0800);
	d[4] = 24;
	for (uint32_t i = 0; i < n; i++)
		d[5 + i] = (uint8_t)(seed + 13 * i);
	return 5 + n;
}

static void script_page(uint8_t *page, uint32_t blkno) { pn_page_init(page, PS, blkno, false); }
static void pgbench_page(uint8_t *page, uint32_t blkno)
{
	pn_heap_page_fill(page, PS, blkno, 40, 121);
}

static void leaf(uint8_t *page, uint32_t n, uint64_t step)
{
	uint64_t keys[400];
	for (uint32_t i = 0; i < n; i++)
		keys[i] = step * (i + 1);
	pn_btree_leaf_fill(page, PS, keys, n, 16);
}

/* main of HOT_UPDATE / UPDATE: xl_heap_update */
static void heap_update_main(struct fix *f, uint16_t old_off, uint8_t flags, uint16_t new_off)
{
	memset(f->main, 0, 14);
	pn_put32(f->main, 901);
	pn_put16(f->main + 4, old_off);
	f->main[7] = flags;
	pn_put16(f->main + 12, new_off);
	f->r.main_len = 14;
}

static void lock_main(struct fix *f, uint32_t xid, uint16_t off)
{
	memset(f->main, 0, 8);
	pn_put32(f->main, xid);
	pn_put16(f->main + 4, off);
	f->r.main_len = 8;
}

/* The cases: builds case `c` into f; returns false past the last one. */
static bool build(int c, struct fix *f, const char **name)
{
	memset(f, 0, sizeof(*f));
	switch (c) {
	case 0:
		*name = "HEAP_HOT_UPDATE script page";
		kind(f, PN_REC_HEAP_HOT_UPDATE, 300, 1);
		script_page(f->page[0], 7);
		heap_update_main(f, 3, 0, 3);
		data(f, 0, heap_data(f->data[0], 4, 1));
		return true;
	case 1:
		*name = "HEAP_HOT_UPDATE prefix+suffix";
		kind(f, PN_REC_HEAP_HOT_UPDATE, 301, 1);
		pgbench_page(f->page[0], 7);
		heap_update_main(f, 5, 0x20 | 0x40, 5);
		pn_put16(f->data[0], 8);      /* prefix */
		pn_put16(f->data[0] + 2, 60); /* suffix */
		data(f, 0, 4 + heap_data(f->data[0] + 4, 1 + 12, 2));
		return true;
	case 2:
		*name = "HEAP_HOT_UPDATE bad main";
		kind(f, PN_REC_HEAP_HOT_UPDATE, 302, 1);
		script_page(f->page[0], 7);
		heap_update_main(f, 3, 0, 3);
		f->r.main_len = 13;
		data(f, 0, heap_data(f->data[0], 4, 1));
		return true;
	case 3:
		*name = "HEAP2_FREEZE_PAGE script op";
		kind(f, PN_REC_HEAP2_FREEZE_PAGE, 303, 1);
		script_page(f->page[0], 7);
		pn_put32(f->main, 250);
		pn_put16(f->main + 4, 3);
		f->r.main_len = PN_FREEZE_MAIN_PG15;
		for (uint32_t i = 0; i < 3; i++) { /* xl_heap_freeze_tuple, PostgreSQL 15 */
			uint8_t *z = f->data[0] + PN_FREEZE_TUPLE * i;
			memset(z, 0, PN_FREEZE_TUPLE);
			pn_put16(z + 4, (uint16_t)(2 + 3 * i)); /* offset */
			pn_put16(z + 6, 1);                     /* t_infomask2: as on the page */
			pn_put16(z + 8, PN_HINT_FROZEN);
		}
		data(f, 0, 3 * PN_FREEZE_TUPLE);
		return true;
	case 4:
		*name = "HEAP2_FREEZE_PAGE freeze plans";
		kind(f, PN_REC_HEAP2_FREEZE_PAGE, 304, 1);
		pgbench_page(f->page[0], 7);
		pn_put32(f->main, 250);
		pn_put16(f->main + 4, 2); /* nplans */
		f->main[6] = 0;
		f->r.main_len = 7;
		for (uint32_t k = 0; k < 2; k++) {
			uint8_t *p = f->data[0] + 12 * k;
			memset(p, 0, 12);
			pn_put32(p, k);                          /* xmax */
			pn_put16(p + 4, 4);                      /* infomask2 */
			pn_put16(p + 6, (uint16_t)(0x0B00 + k)); /* infomask */
			pn_put16(p + 10, (uint16_t)(2 + k));     /* ntuples */
		}
		for (uint32_t j = 0; j < 5; j++)
			pn_put16(f->data[0] + 24 + 2 * j, (uint16_t)(1 + 4 * j));
		data(f, 0, 24 + 10);
		return true;
	case 5:
		*name = "BTREE_DEDUP script op";
		kind(f, PN_REC_BTREE_DEDUP, 305, 1);
		script_page(f->page[0], 7);
		pn_put16(f->main, 1);
		f->r.main_len = 2;
		pn_put32(f->data[0], 0x2A);
		data(f, 0, 4);
		return true;
	case 6: {
		*name = "BTREE_DEDUP leaf";
		kind(f, PN_REC_BTREE_DEDUP, 306, 1);
		uint64_t keys[12] = {3, 5, 5, 5, 6, 8, 8, 9, 9, 9, 9, 11};
		pn_btree_leaf_fill(f->page[0], PS, keys, 12, 16);
		pn_put16(f->main, 3);
		f->r.main_len = 2;
		const uint16_t iv[6] = {2, 3, 6, 2, 8, 4};
		for (uint32_t i = 0; i < 6; i++)
			pn_put16(f->data[0] + 2 * i, iv[i]);
		data(f, 0, 12);
		return true;
	}
	case 7:
		*name = "BTREE_DEDUP leaf bad interval";
		kind(f, PN_REC_BTREE_DEDUP, 307, 1);
		leaf(f->page[0], 20, 1);
		pn_put16(f->main, 1);
		f->r.main_len = 2;
		pn_put16(f->data[0], 19);
		pn_put16(f->data[0] + 2, 5); /* past the last item */
		data(f, 0, 4);
		return true;
	case 8:
	case 9:
	case 10:
	case 11: {
		/* records with no block: redo has nothing to apply to a page */
		static const struct {
			const char *name;
			enum pn_rec k;
			uint32_t xid, main_len;
		} nb[] = {
			{"XACT_COMMIT", PN_REC_XACT_COMMIT, 308, 12},
			{"XACT_ABORT", PN_REC_XACT_ABORT, 309, 0},
			{"XLOG_CHECKPOINT_ONLINE", PN_REC_XLOG_CHECKPOINT_ONLINE, 0, 0},
			{"XLOG_CHECKPOINT_SHUTDOWN", PN_REC_XLOG_CHECKPOINT_SHUTDOWN, 0, 0},
		};
		*name = nb[c - 8].name;
		kind(f, nb[c - 8].k, nb[c - 8].xid, 0);
		f->npages = 1;
		script_page(f->page[0], 7);
		f->r.main_len = nb[c - 8].main_len;
		return true;
	}
	case 12:
		*name = "XLOG_FPI_FOR_HINT image";
		kind(f, PN_REC_XLOG_FPI_FOR_HINT, 0, 1);
		script_page(f->page[0], 7);
		pgbench_page(f->image, 7);
		f->r.blocks[0].has_image = true;
		f->r.blocks[0].image_apply = true;
		f->r.blocks[0].image = f->image;
		return true;
	case 13:
		*name = "XLOG_FPI_FOR_HINT check image";
		kind(f, PN_REC_XLOG_FPI_FOR_HINT, 0, 1);
		script_page(f->page[0], 7);
		pgbench_page(f->image, 7);
		f->r.blocks[0].has_image = true;
		f->r.blocks[0].image = f->image;
		return true;
	case 14:
		*name = "CLOG_SET headerless";
		kind(f, PN_REC_CLOG_SET, 314, 1);
		pn_page_init(f->page[0], PS, 0, true);
		pn_put32(f->main, 70001);
		f->main[4] = 0;
		f->r.main_len = 5;
		return true;
	case 15:
		*name = "CLOG_SET header";
		kind(f, PN_REC_CLOG_SET, 315, 1);
		pn_page_init(f->page[0], PS, 0, true);
		pn_put32(f->main, 70001);
		f->main[4] = 1;
		f->r.main_len = 5;
		return true;
	case 16: {
		*name = "XLOG2_HINT_DELTA";
		kind(f, PN_REC_XLOG2_HINT_DELTA, 0, 1);
		script_page(f->page[0], 7);
		uint8_t *d = f->data[0];
		pn_put16(d, 2);
		pn_put16(d + 2, 100);
		pn_put16(d + 4, 3);
		pn_put16(d + 6, 8000);
		pn_put16(d + 8, 1);
		memcpy(d + 10, "\x11\x22\x33\x44", 4);
		data(f, 0, 14);
		return true;
	}
	case 17:
		*name = "XLOG2_HINT_DELTA short";
		kind(f, PN_REC_XLOG2_HINT_DELTA, 0, 1);
		script_page(f->page[0], 7);
		pn_put16(f->data[0], 1);
		pn_put16(f->data[0] + 2, 10);
		pn_put16(f->data[0] + 4, 9);
		data(f, 0, 8);
		return true;
	case 18:
		*name = "HEAP_INSERT";
		kind(f, PN_REC_HEAP_INSERT, 318, 1);
		pgbench_page(f->page[0], 7);
		pn_put16(f->main, 43); /* past the 40 rows: 41, 42 added unused */
		f->main[2] = 0;
		f->r.main_len = 3;
		data(f, 0, heap_data(f->data[0], 98, 3));
		return true;
	case 19:
		*name = "HEAP_INSERT_INIT";
		kind(f, PN_REC_HEAP_INSERT_INIT, 319, 1);
		pgbench_page(f->page[0], 7);
		pn_put16(f->main, 1);
		f->main[2] = 0;
		f->r.main_len = 3;
		data(f, 0, heap_data(f->data[0], 98, 4));
		return true;
	case 20:
		*name = "HEAP_UPDATE";
		kind(f, PN_REC_HEAP_UPDATE, 320, 2);
		pgbench_page(f->page[0], 7);
		pgbench_page(f->page[1], 8);
		heap_update_main(f, 9, 0, 41);
		data(f, 0, heap_data(f->data[0], 98, 5));
		return true;
	case 21:
		*name = "HEAP_UPDATE_INIT";
		kind(f, PN_REC_HEAP_UPDATE_INIT, 321, 2);
		script_page(f->page[0], 7);
		pgbench_page(f->page[1], 8);
		heap_update_main(f, 10, 0, 1);
		data(f, 0, heap_data(f->data[0], 98, 6));
		return true;
	case 22:
		*name = "HEAP_LOCK";
		kind(f, PN_REC_HEAP_LOCK, 322, 1);
		pgbench_page(f->page[0], 7);
		lock_main(f, 322, 12);
		return true;
	case 23:
		*name = "HEAP_DELETE";
		kind(f, PN_REC_HEAP_DELETE, 323, 1);
		pgbench_page(f->page[0], 7);
		lock_main(f, 323, 13);
		return true;
	case 24:
		*name = "HEAP_DELETE no tuple";
		kind(f, PN_REC_HEAP_DELETE, 324, 1);
		pgbench_page(f->page[0], 7);
		lock_main(f, 324, 41);
		return true;
	case 25: {
		*name = "BTREE_INSERT_LEAF";
		kind(f, PN_REC_BTREE_INSERT_LEAF, 325, 1);
		leaf(f->page[0], 300, 10);
		pn_itup_make(f->data[0], 16, 55, 3, 4);
		pn_put16(f->main, pn_btree_insert_offnum(f->page[0], 55));
		f->r.main_len = 2;
		data(f, 0, 16);
		return true;
	}
	case 26:
	case 27: {
		/* a split at key 2000 of a leaf of 300 keys 10..3000 with a right sibling: the
		 * new item 1005 stays left (SPLIT_L), 2005 goes right (SPLIT_R) */
		bool left = c == 26;
		*name = left ? "BTREE_SPLIT_L" : "BTREE_SPLIT_R";
		leaf(f->page[0], 300, 10);
		leaf(f->page[2], 50, 4000);
		uint8_t itup[16];
		pn_itup_make(itup, 16, left ? 1005 : 2005, 3, 5);
		f->r.nblocks = 3;
		enum pn_rec k = pn_btree_split_record(f->page[0], PS, itup, 16, 2000, &f->r,
						      f->main, f->data[0], f->data[1]);
		ck_assert_int_eq(k, left ? PN_REC_BTREE_SPLIT_L : PN_REC_BTREE_SPLIT_R);
		kind(f, k, 326, 3);
		f->r.blocks[1].will_init = true;
		return true;
	}
	case 28:
		*name = "HEAP2_PRUNE";
		kind(f, PN_REC_HEAP2_PRUNE, 328, 1);
		pgbench_page(f->page[0], 7);
		pn_put32(f->page[0] + 20, 77); /* pd_prune_xid */
		pn_put32(f->main, 300);
		pn_put16(f->main + 4, 1); /* nredirected */
		pn_put16(f->main + 6, 1); /* ndead */
		f->r.main_len = 8;
		for (uint32_t i = 0; i < 4; i++)
			pn_put16(f->data[0] + 2 * i, (uint16_t)(3 + i));
		data(f, 0, 8);
		return true;
	case 29:
		*name = "HEAP2_PRUNE short";
		kind(f, PN_REC_HEAP2_PRUNE, 329, 1);
		pgbench_page(f->page[0], 7);
		pn_put32(f->page[0] + 20, 77);
		pn_put16(f->main + 4, 2);
		pn_put16(f->main + 6, 1);
		f->r.main_len = 8;
		data(f, 0, 8);
		return true;
	case 30:
		*name = "HEAP2_VISIBLE";
		kind(f, PN_REC_HEAP2_VISIBLE, 330, 2);
		pn_page_init(f->page[0], PS, 0, true); /* the VM page */
		pn_page_set_lsn(f->page[0], 5);
		pgbench_page(f->page[1], 7);
		f->r.blocks[0].blkno = 100;
		f->r.blocks[0].fork = 2;
		f->r.blocks[1].blkno = 7;
		pn_put32(f->main, 250);
		f->main[4] = 0x03;
		f->r.main_len = 5;
		return true;
	case 31:
		*name = "HEAP_HOT_UPDATE with image";
		kind(f, PN_REC_HEAP_HOT_UPDATE, 331, 1);
		script_page(f->page[0], 7);
		script_page(f->image, 8);
		heap_update_main(f, 3, 0, 3);
		data(f, 0, heap_data(f->data[0], 4, 1));
		f->r.blocks[0].has_image = true;
		f->r.blocks[0].image_apply = true;
		f->r.blocks[0].image = f->image;
		return true;
	case 32:
		*name = "unknown rmid/info";
		f->r.rmid = PN_RM_HEAP;
		f->r.info = 0x70;
		f->r.nblocks = 1;
		f->npages = 1;
		script_page(f->page[0], 7);
		return true;
	case 33:
		*name = "IMPORTED will-init";
		f->r.rmid = PN_RM_HEAP;
		f->r.info = 0x00 | PN_INFO_IMPORTED |
			    PN_INFO_LAYOUT; /* Heap/INSERT's info, replayed */
		f->r.nblocks = 1;
		f->npages = 1;
		script_page(f->page[0], 7);
		f->r.blocks[0].blkno = 7;
		f->r.blocks[0].will_init = true;
		pn_put16(f->data[0], 40);       /* pd_lower */
		pn_put16(f->data[0] + 2, 8000); /* pd_upper */
		for (uint32_t i = 4; i < 100; i++)
			f->data[0][i] = (uint8_t)i;
		data(f, 0, 100);
		return true;
	case 34:
		*name = "IMPORTED bad hole";
		f->r.rmid = PN_RM_BTREE;
		f->r.info = 0x10 | PN_INFO_IMPORTED | PN_INFO_LAYOUT;
		f->r.nblocks = 1;
		f->npages = 1;
		script_page(f->page[0], 7);
		f->r.blocks[0].blkno = 7;
		pn_put16(f->data[0], 900); /* pd_lower above pd_upper */
		pn_put16(f->data[0] + 2, 800);
		data(f, 0, 8);
		return true;
	case 35:
		*name = "SMGR_TRUNCATE";
		kind(f, PN_REC_SMGR_TRUNCATE, 0, 0);
		pn_smgr_truncate_encode(3, f->main);
		f->r.main_len = PN_SMGR_TRUNCATE_BYTES;
		return true;
	default: return false;
	}
}

struct expect {
	const char *name;
	bool ok[NPAGES];
	uint32_t crc;
};

/* Captured from the apply functions before the redo table (commit 164f9c8's page.c). */
static const struct expect expected[] = {
	{"HEAP_HOT_UPDATE script page", {1, 0, 0}, 0x039d8bf7},
	{"HEAP_HOT_UPDATE prefix+suffix", {1, 0, 0}, 0x6ba0526f},
	{"HEAP_HOT_UPDATE bad main", {0, 0, 0}, 0xfc3852c1},
	{"HEAP2_FREEZE_PAGE script op", {1, 0, 0}, 0x8594038e},
	{"HEAP2_FREEZE_PAGE freeze plans", {1, 0, 0}, 0x0f4fd291},
	{"BTREE_DEDUP script op", {1, 0, 0}, 0x06292179},
	{"BTREE_DEDUP leaf", {1, 0, 0}, 0x19e19ea9},
	{"BTREE_DEDUP leaf bad interval", {0, 0, 0}, 0xe6d78483},
	{"XACT_COMMIT", {0, 0, 0}, 0xfc3852c1},
	{"XACT_ABORT", {0, 0, 0}, 0xfc3852c1},
	{"XLOG_CHECKPOINT_ONLINE", {0, 0, 0}, 0xfc3852c1},
	{"XLOG_CHECKPOINT_SHUTDOWN", {0, 0, 0}, 0xfc3852c1},
	{"XLOG_FPI_FOR_HINT image", {1, 0, 0}, 0x201119c9},
	{"XLOG_FPI_FOR_HINT check image", {0, 0, 0}, 0xfc3852c1},
	{"CLOG_SET headerless", {1, 0, 0}, 0x5f38545e},
	{"CLOG_SET header", {1, 0, 0}, 0x4668c022},
	{"XLOG2_HINT_DELTA", {1, 0, 0}, 0xe5cc0ecf},
	{"XLOG2_HINT_DELTA short", {0, 0, 0}, 0xfc3852c1},
	{"HEAP_INSERT", {1, 0, 0}, 0x0e063c6e},
	{"HEAP_INSERT_INIT", {1, 0, 0}, 0x21d6c8b5},
	{"HEAP_UPDATE", {1, 1, 0}, 0x72e0c66c},
	{"HEAP_UPDATE_INIT", {1, 1, 0}, 0x7e6b6f6a},
	{"HEAP_LOCK", {1, 0, 0}, 0x16cd23da},
	{"HEAP_DELETE", {1, 0, 0}, 0x5f05b114},
	{"HEAP_DELETE no tuple", {0, 0, 0}, 0x201119c9},
	{"BTREE_INSERT_LEAF", {1, 0, 0}, 0x51e02fd4},
	{"BTREE_SPLIT_L", {1, 1, 1}, 0x502eb805},
	{"BTREE_SPLIT_R", {1, 1, 1}, 0xa9e4e6b0},
	{"HEAP2_PRUNE", {1, 0, 0}, 0x201119c9},
	{"HEAP2_PRUNE short", {0, 0, 0}, 0x743cd448},
	{"HEAP2_VISIBLE", {1, 1, 0}, 0x62a84c03},
	{"HEAP_HOT_UPDATE with image", {1, 0, 0}, 0x5bcbbbf0},
	{"unknown rmid/info", {0, 0, 0}, 0xfc3852c1},
	/* the import workload's kind (merged after the capture; the bytes of its apply as the
	 * import branch wrote it) */
	{"IMPORTED will-init", {1, 0, 0}, 0x8310608f},
	{"IMPORTED bad hole", {0, 0, 0}, 0xfc3852c1},
	/* relation truncation (no block) */
	{"SMGR_TRUNCATE", {0, 0, 0}, 0x00000000},
};

/* Applies every block of case c; the pages' CRC-32C in order. */
static uint32_t apply_case(struct fix *f, bool *ok)
{
	uint32_t crc = pn_crc32c_init();
	for (uint32_t i = 0; i < f->npages; i++) {
		static const struct pn_wal_block none;
		const struct pn_wal_block *b = i < f->r.nblocks ? &f->r.blocks[i] : &none;
		ok[i] = pn_redo_apply(f->page[i], PS, &f->r, b);
		crc = pn_crc32c_update(crc, f->page[i], PS);
	}
	return pn_crc32c_final(crc);
}

static struct fix fx;

START_TEST(test_every_case_as_captured)
{
	const char *name;
	int bad = 0, c = 0;
	for (; build(c, &fx, &name); c++) {
		bool ok[NPAGES] = {0};
		uint32_t crc = apply_case(&fx, ok);
		const struct expect *x = c < (int)PN_ARRAY_LEN(expected) ? &expected[c] : NULL;
		if (!x || strcmp(x->name, name) != 0 || crc != x->crc ||
		    memcmp(ok, x->ok, sizeof(ok)) != 0) {
			fprintf(stderr, "\t{\"%s\", {%d, %d, %d}, 0x%08x},\n", name, ok[0], ok[1],
				ok[2], crc);
			bad++;
		}
	}
	ck_assert_int_eq(c, (int)PN_ARRAY_LEN(expected));
	ck_assert_msg(bad == 0, "%d of %d cases differ from the captured table", bad, c);
}
END_TEST

/* full_page_writes off: XLOG/FPI_FOR_HINT without an image applies and changes nothing (as
 * PostgreSQL's xlog_redo skips it); with block data it is refused. Before issue 30 every
 * image-less FPI_FOR_HINT was refused, so recovery of such WAL failed. */
START_TEST(test_fpi_for_hint_without_image)
{
	static uint8_t page[PS], before[PS];
	uint8_t data[2] = {0};
	struct pn_wal_record r = {.nblocks = 1};
	pn_rec_ids(PN_REC_XLOG_FPI_FOR_HINT, &r.rmid, &r.info);
	r.blocks[0].blkno = 7;
	script_page(page, 7);
	memcpy(before, page, PS);
	ck_assert(pn_redo_apply(page, PS, &r, &r.blocks[0]));
	ck_assert(memcmp(page, before, PS) == 0);
	r.blocks[0].data = data;
	r.blocks[0].data_len = sizeof(data);
	ck_assert(!pn_redo_apply(page, PS, &r, &r.blocks[0]));
}
END_TEST

START_TEST(test_every_kind_has_a_case)
{
	bool seen[PN_REC_COUNT] = {0};
	const char *name;
	for (int c = 0; build(c, &fx, &name); c++) {
		enum pn_rec k;
		if (pn_rec_from_ids(fx.r.rmid, fx.r.info, &k))
			seen[k] = true;
	}
	for (int k = 0; k < PN_REC_COUNT; k++)
		ck_assert_msg(seen[k], "record kind %s has no case", pn_rec_name((enum pn_rec)k));
}
END_TEST

static uint8_t *tuple(uint8_t *page, uint32_t offnum)
{
	return page + pn_get16(page + PN_PAGE_HEADER + 4 * (offnum - 1));
}

/* Fields read back, so the captured bytes are the right ones too. */
START_TEST(test_fields_read_back)
{
	const char *name;
	bool ok[NPAGES];
	ck_assert(build(33, &fx, &name)); /* an imported will-init record: the hole it gives */
	apply_case(&fx, ok);
	ck_assert(ok[0]);
	ck_assert_uint_eq(pn_get16(fx.page[0] + 12), 40);
	ck_assert_uint_eq(pn_get16(fx.page[0] + 14), 8000);
	ck_assert_uint_eq(fx.page[0][40], 0);
	ck_assert_uint_eq(fx.page[0][8000], 4);
	ck_assert_uint_eq(fx.page[0][8095], 99);
	enum pn_rec k;
	ck_assert(pn_rec_from_ids(PN_RM_BTREE, 0x10 | PN_INFO_IMPORTED, &k));
	ck_assert_int_eq(k, PN_REC_IMPORTED);
	ck_assert(build(22, &fx, &name)); /* LOCK of tuple 12 by 322 */
	apply_case(&fx, ok);
	ck_assert(ok[0]);
	ck_assert_uint_eq(pn_get32(tuple(fx.page[0], 12) + 4), 322);
	ck_assert_uint_eq(pn_get16(tuple(fx.page[0], 12) + 20) & 0x08C0u, 0x00C0u);
	ck_assert(build(23, &fx, &name)); /* DELETE of tuple 13 by 323 */
	apply_case(&fx, ok);
	ck_assert_uint_eq(pn_get32(fx.page[0] + 20), 323);
	ck_assert_uint_eq(pn_get32(tuple(fx.page[0], 13) + 4), 323);
	ck_assert(build(18, &fx, &name)); /* INSERT at 43 */
	apply_case(&fx, ok);
	ck_assert_uint_eq(pn_page_nitems(fx.page[0]), 43);
	ck_assert_uint_eq(pn_get32(fx.page[0] + PN_PAGE_HEADER + 4 * 41), 0);
	ck_assert_uint_eq(pn_get32(tuple(fx.page[0], 43)), 318);
	ck_assert(build(20, &fx, &name)); /* UPDATE 9 on block 1 -> 41 on block 0 */
	apply_case(&fx, ok);
	ck_assert_uint_eq(pn_get16(tuple(fx.page[1], 9) + 16), 41);
	ck_assert_uint_eq(pn_get32(tuple(fx.page[0], 41)), 320);
	ck_assert(build(15, &fx, &name)); /* CLOG_SET 70001 with a header */
	apply_case(&fx, ok);
	uint32_t bit = (70001u % ((PS - PN_PAGE_HEADER) * 4u)) * 2u;
	ck_assert(fx.page[0][PN_PAGE_HEADER + bit / 8] & (1u << (bit % 8)));
	ck_assert_uint_eq(pn_get16(fx.page[0] + 12), PS);
	ck_assert(build(28, &fx, &name)); /* PRUNE clears pd_prune_xid */
	apply_case(&fx, ok);
	ck_assert_uint_eq(pn_get32(fx.page[0] + 20), 0);
	ck_assert(build(30, &fx, &name)); /* VISIBLE: VM bits of heap block 7, PD_ALL_VISIBLE */
	apply_case(&fx, ok);
	ck_assert_uint_eq(fx.page[0][PN_PAGE_HEADER + 1] >> 6, 3u);
	ck_assert(pn_get16(fx.page[1] + 10) & PN_PD_ALL_VISIBLE);
	ck_assert(build(12, &fx, &name)); /* an image is the page */
	apply_case(&fx, ok);
	ck_assert(memcmp(fx.page[0], fx.image, PS) == 0);
	ck_assert(build(26, &fx, &name)); /* SPLIT_L: left keeps 199 + the new, right 101 */
	apply_case(&fx, ok);
	ck_assert_uint_eq(pn_page_nitems(fx.page[0]), 200);
	ck_assert_uint_eq(pn_page_nitems(fx.page[1]), 101);
	ck_assert_uint_eq(pn_get32(fx.page[2] + PS - PN_BTREE_SPECIAL), 8);
}
END_TEST

START_TEST(test_ids_round_trip)
{
	for (int k = 0; k < PN_REC_COUNT; k++) {
		uint8_t rmid, info;
		enum pn_rec back;
		pn_rec_ids((enum pn_rec)k, &rmid, &info);
		ck_assert(pn_rec_from_ids(rmid, info, &back));
		ck_assert_int_eq(back, k);
		for (int j = 0; j < k; j++)
			ck_assert_str_ne(pn_rec_name((enum pn_rec)j), pn_rec_name((enum pn_rec)k));
	}
	enum pn_rec out;
	ck_assert(!pn_rec_from_ids(PN_RM_HEAP, 0x70, &out));
	ck_assert(!pn_rec_from_ids(PN_RM_HEAP, 0x01, &out)); /* low bits are not an info */
	ck_assert(!pn_rec_from_ids(2, 0x00, &out));          /* no such manager */
	ck_assert(!pn_rec_from_ids(PN_RM_MAX + 1, 0x00, &out));
	ck_assert(!pn_rec_from_ids(255, 0xF0, &out));
}
END_TEST

START_TEST(test_hint_delta_codec)
{
	enum { SZ = 1024 };
	static uint8_t before[SZ], after[SZ], page[SZ], data[64];
	for (int i = 0; i < SZ; i++)
		before[i] = after[i] = (uint8_t)(i * 7);
	after[100] ^= 0x01;
	after[101] ^= 0x80;
	after[700] = 0;
	uint16_t len = pn_hint_delta_encode(before, after, SZ, data, sizeof(data));
	ck_assert_uint_eq(pn_get16(data), 2); /* two fragments */
	ck_assert_uint_eq(len, 2 + 2 * 4 + 2 + 1);
	memcpy(page, before, SZ);
	struct pn_wal_block b = {.data = data, .data_len = len};
	ck_assert(pn_hint_delta_apply(page, SZ, &b));
	ck_assert_mem_eq(page, after, SZ);
	b.data_len = (uint16_t)(len - 1); /* a byte short */
	ck_assert(!pn_hint_delta_apply(page, SZ, &b));
	pn_put16(data + 2, SZ - 1); /* a fragment past the page */
	b.data_len = len;
	ck_assert(!pn_hint_delta_apply(page, SZ, &b));
}
END_TEST

START_TEST(test_describe)
{
	const char *name;
	char line[160];
	ck_assert(build(20, &fx, &name)); /* HEAP_UPDATE 9 -> 41 */
	int n = pn_redo_describe(&fx.r, line, sizeof(line));
	ck_assert_str_eq(line, "Heap/UPDATE old_xmax 901 old_off 9 new_off 41; blk 7, blk 8");
	ck_assert_int_eq(n, (int)strlen(line));
	ck_assert(build(26, &fx, &name));
	pn_redo_describe(&fx.r, line, sizeof(line));
	ck_assert_str_eq(
		line, "Btree/SPLIT_L level 0 firstright 200 newitemoff 101; blk 7, blk 8, blk 9");
	ck_assert(build(15, &fx, &name));
	pn_redo_describe(&fx.r, line, sizeof(line));
	ck_assert_str_eq(line, "CLOG/SET xid 70001; blk 7");
	ck_assert(build(32, &fx, &name));
	pn_redo_describe(&fx.r, line, sizeof(line));
	ck_assert_str_eq(line, "rmid 10 info 0x70 (unknown)");
	ck_assert(build(35, &fx, &name)); /* xl_smgr_truncate, PostgreSQL 15's bytes */
	pn_redo_describe(&fx.r, line, sizeof(line));
	ck_assert_str_eq(line, "Storage/TRUNCATE base/5/16384 to 3 blocks flags 7");
	static const uint8_t want[PN_SMGR_TRUNCATE_BYTES] = {3, 0, 0, 0,    0x7f, 6, 0, 0, 5, 0,
							     0, 0, 0, 0x40, 0,    0, 7, 0, 0, 0};
	ck_assert_mem_eq(fx.main, want, sizeof(want));
	ck_assert_uint_eq(fx.r.rmid, 2);
	ck_assert_uint_eq(fx.r.info, 0x20);
	uint32_t nb = 0;
	ck_assert(pn_smgr_truncate_decode(&fx.r, &nb));
	ck_assert_uint_eq(nb, 3);
	fx.main[12] = 1; /* another relation */
	ck_assert(!pn_smgr_truncate_decode(&fx.r, &nb));
	fx.main[12] = 0;
	fx.r.main_len = 19;
	ck_assert(!pn_smgr_truncate_decode(&fx.r, &nb));
	ck_assert(build(12, &fx, &name)); /* truncated: snprintf's count, the text cut */
	n = pn_redo_describe(&fx.r, line, 8);
	ck_assert_str_eq(line, "XLOG/FP");
	ck_assert_int_eq(n, (int)strlen("XLOG/FPI_FOR_HINT; blk 7 FPW"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("redo");
	TCase *t = tcase_create("table");
	tcase_add_test(t, test_every_case_as_captured);
	tcase_add_test(t, test_every_kind_has_a_case);
	tcase_add_test(t, test_fpi_for_hint_without_image);
	tcase_add_test(t, test_fields_read_back);
	tcase_add_test(t, test_ids_round_trip);
	tcase_add_test(t, test_hint_delta_codec);
	tcase_add_test(t, test_describe);
	suite_add_tcase(s, t);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

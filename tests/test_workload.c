/*
 * test_workload.c: the realistic workloads (pgbench, tpcc) and the records they make.
 *
 *   pages     the heap and btree page effects of every new record kind, and that redo of
 *             the encoded record (decode, then pn_redo_apply on the page before) gives the
 *             same bytes as the change made at run time;
 *   sizes     pgbench's record sizes are PostgreSQL 15's (postgres-facts.md section 3,
 *             pgbench_stats.txt): INSERT 79, UPDATE 171, HOT_UPDATE 72-74, LOCK 54 (59 with
 *             an image), INSERT_LEAF 64 (53), COMMIT 34, and the mix follows (non-HOT
 *             updates = accounts pages touched);
 *   tpcc      the mix (45/43/4/4/4 %), per-type WAL adds up, runs are deterministic,
 *             splits happen and every index insert finds room;
 *   storage   a storage.pages below what the layout needs is refused, naming the number;
 *   checker   crash-point checking of a small pgbench: fpw passes (the oracle agrees with
 *             redo on every record kind), the fpw_off mutant is caught.
 */
#include "checker.h"
#include "engine.h"
#include "load.h"
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 8192u

static void load(const char *yaml, struct pn_scenario *sc)
{
	char err[PN_ERROR_LEN];
	bool ok = pn_scenario_load_string("workload.yaml", yaml, strlen(yaml), sc, err,
					  sizeof(err));
	ck_assert_msg(ok, "scenario refused: %s", err);
}

static void run_yaml(const char *yaml, struct pn_sim_result *out)
{
	struct pn_scenario sc;
	load(yaml, &sc);
	pn_sim_run(&sc, out);
	pn_scenario_free(&sc);
}

/* ---- page effects and their redo ------------------------------------------------------- */

/* Encodes r, decodes it, applies block b of the decoded record to `before`: must equal `after`. */
static void assert_redo(const struct pn_wal_record *r, uint32_t b, const uint8_t *before,
			const uint8_t *after)
{
	static uint8_t buf[4 * PAGE], images[PN_WAL_MAX_BLOCKS * PAGE], page[PAGE];
	struct pn_wal_record d;
	char why[160];
	uint32_t len = pn_wal_record_encode(r, PAGE, buf);
	ck_assert_msg(pn_wal_record_decode(buf, len, PAGE, images, &d, why, sizeof why), "%s", why);
	memcpy(page, before, PAGE);
	ck_assert(pn_redo_apply(page, PAGE, &d, &d.blocks[b]));
	ck_assert(memcmp(page, after, PAGE) == 0);
}

static void heap_insert(struct pn_wal_record *r, uint8_t *main, uint8_t *data, uint16_t offnum,
			uint32_t t_len, bool init)
{
	memset(r, 0, sizeof(*r));
	pn_rec_ids(init ? PN_REC_HEAP_INSERT_INIT : PN_REC_HEAP_INSERT, &r->rmid, &r->info);
	r->xid = 77;
	r->nblocks = 1;
	r->blocks[0].blkno = 5;
	r->blocks[0].will_init = init;
	pn_put16(main, offnum);
	main[2] = 0;
	r->main_data = main;
	r->main_len = 3;
	pn_put16(data, 4);
	pn_put16(data + 2, 0x0800);
	data[4] = 24;
	for (uint32_t i = 5; i < 5 + t_len - 23; i++)
		data[i] = (uint8_t)(i * 7);
	r->blocks[0].data = data;
	r->blocks[0].data_len = (uint16_t)(5 + t_len - 23);
}

/* pn_heap_page_fill's bytes, over tuple sizes 24-400 (every tail length) and full and
 * half pages: one FNV-1a hash, the value the fill gave before its 8-byte stores (80a272d). */
START_TEST(test_heap_page_fill_bytes)
{
	static uint8_t page[PAGE];
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t t_len = PN_TUPLE_HEADER; t_len <= 400; t_len++) {
		uint32_t full = pn_heap_rows_per_page(PAGE, t_len, 100);
		for (uint32_t rows = full / 2; rows <= full; rows += full - full / 2) {
			memset(page, 0xa5, PAGE); /* every byte is the fill's own */
			pn_heap_page_fill(page, PAGE, 7 * t_len, rows, t_len);
			for (uint32_t i = 0; i < PAGE; i++)
				h = (h ^ page[i]) * 0x100000001b3ull;
		}
	}
	ck_assert_uint_eq(h, 755240384909094053ull);
}
END_TEST

START_TEST(test_heap_insert_fills_the_hole)
{
	static uint8_t page[PAGE], before[PAGE];
	uint8_t main[16], data[256];
	struct pn_wal_record r;
	memset(page, 0, PAGE);
	ck_assert(pn_page_is_new(page));
	heap_insert(&r, main, data, 1, 48, true);
	memcpy(before, page, PAGE);
	ck_assert(pn_redo_apply(page, PAGE, &r, &r.blocks[0]));
	assert_redo(&r, 0, before, page);
	uint16_t off, len;
	pn_page_hole(page, PAGE, &off, &len);
	ck_assert_uint_eq(off, 24 + 4);
	ck_assert_uint_eq(len, PAGE - 28 - 48);
	ck_assert(pn_page_verify(page, PAGE, 5, false));
	/* the next one, at offset 3: pointer 2 is added unused, pd_lower covers 3 */
	heap_insert(&r, main, data, 3, 121, false);
	memcpy(before, page, PAGE);
	ck_assert(pn_redo_apply(page, PAGE, &r, &r.blocks[0]));
	assert_redo(&r, 0, before, page);
	pn_page_hole(page, PAGE, &off, &len);
	ck_assert_uint_eq(off, 24 + 12);
	ck_assert_uint_eq(len, PAGE - 36 - 48 - 128);
	ck_assert_uint_eq(pn_page_nitems(page), 3);
	ck_assert_uint_eq(pn_get32(page + 24 + 4), 0);       /* pointer 2 unused */
	ck_assert_uint_eq(pn_get16(page + 24 + 8 + 2), 121); /* pointer 3's length */
	/* pointer 2 can still be taken; pointer 3 cannot be taken twice */
	heap_insert(&r, main, data, 3, 48, false);
	ck_assert(!pn_redo_apply(page, PAGE, &r, &r.blocks[0]));
	heap_insert(&r, main, data, 2, 48, false);
	ck_assert(pn_redo_apply(page, PAGE, &r, &r.blocks[0]));
	/* a page without room refuses */
	for (uint16_t k = 4; k < 200; k++) {
		heap_insert(&r, main, data, k, 121, false);
		if (!pn_redo_apply(page, PAGE, &r, &r.blocks[0])) {
			ck_assert_uint_lt(pn_page_free(page), 128 + 4);
			return;
		}
	}
	ck_abort_msg("the page never filled");
}
END_TEST

START_TEST(test_heap_update_lock_delete)
{
	static uint8_t newp[PAGE], oldp[PAGE], before[PAGE];
	uint8_t main[16], data[256];
	memset(newp, 0, PAGE);
	pn_heap_page_fill(oldp, PAGE, 9, 61, 121);
	ck_assert_uint_lt(pn_page_free(oldp), 128 + 4); /* pgbench_accounts: full */
	/* LOCK of tuple 4 */
	struct pn_wal_record r = {.xid = 300, .nblocks = 1};
	pn_rec_ids(PN_REC_HEAP_LOCK, &r.rmid, &r.info);
	r.blocks[0].blkno = 9;
	pn_put32(main, 300);
	pn_put16(main + 4, 4);
	main[6] = main[7] = 0;
	r.main_data = main;
	r.main_len = 8;
	memcpy(before, oldp, PAGE);
	ck_assert(pn_redo_apply(oldp, PAGE, &r, &r.blocks[0]));
	assert_redo(&r, 0, before, oldp);
	uint8_t *t = oldp + pn_get16(oldp + 24 + 12);
	ck_assert_uint_eq(pn_get32(t + 4), 300);
	ck_assert_uint_eq(pn_get16(t + 20) & 0x08D0u, 0x00C0u); /* lock bits, not XMAX_INVALID */
	ck_assert_uint_eq(pn_wal_record_size(&r, PAGE), 54);
	/* UPDATE: the new version to page 20 (new: +INIT), the old one on page 9 */
	heap_insert(&r, main, data, 1, 121, true);
	pn_rec_ids(PN_REC_HEAP_UPDATE_INIT, &r.rmid, &r.info);
	r.nblocks = 2;
	r.blocks[0].blkno = 20;
	r.blocks[1] = (struct pn_wal_block){.blkno = 9};
	pn_put32(main, 300);
	pn_put16(main + 4, 4);
	main[6] = main[7] = 0;
	pn_put32(main + 8, 0);
	pn_put16(main + 12, 1);
	r.main_len = 14;
	ck_assert_uint_eq(pn_wal_record_size(&r, PAGE), 171);
	memcpy(before, newp, PAGE);
	ck_assert(pn_redo_apply(newp, PAGE, &r, &r.blocks[0]));
	assert_redo(&r, 0, before, newp);
	memcpy(before, oldp, PAGE);
	ck_assert(pn_redo_apply(oldp, PAGE, &r, &r.blocks[1]));
	assert_redo(&r, 1, before, oldp);
	ck_assert_uint_eq(pn_get16(t + 16), 1); /* t_ctid -> (20, 1) */
	ck_assert_uint_eq(pn_get16(t + 14), 20);
	ck_assert_uint_eq(pn_get16(t + 18) & 0x2000u, 0x2000u);
	/* DELETE of tuple 5 */
	struct pn_wal_record d = {.xid = 301, .nblocks = 1, .main_data = main, .main_len = 8};
	pn_rec_ids(PN_REC_HEAP_DELETE, &d.rmid, &d.info);
	d.blocks[0].blkno = 9;
	pn_put32(main, 301);
	pn_put16(main + 4, 5);
	memcpy(before, oldp, PAGE);
	ck_assert(pn_redo_apply(oldp, PAGE, &d, &d.blocks[0]));
	assert_redo(&d, 0, before, oldp);
	ck_assert_uint_eq(pn_get32(oldp + 20), 301); /* pd_prune_xid */
	pn_put16(main + 4, 62);                      /* no tuple 62 */
	ck_assert(!pn_redo_apply(oldp, PAGE, &d, &d.blocks[0]));
}
END_TEST

static uint64_t key_at(const uint8_t *page, uint32_t i)
{
	return pn_get64(page + pn_get16(page + 24 + 4 * i) + 8);
}

START_TEST(test_btree_insert_and_split)
{
	static uint8_t left[PAGE], right[PAGE], before[PAGE];
	uint64_t keys[300];
	for (uint32_t i = 0; i < 300; i++)
		keys[i] = 10 * (i + 1);
	pn_btree_leaf_fill(left, PAGE, keys, 300, 16);
	ck_assert_uint_eq(pn_page_nitems(left), 300);
	ck_assert_uint_eq(pn_btree_items_per_page(PAGE, 16), (PAGE - 40) / 20);
	/* INSERT_LEAF of 55 goes after 50 */
	uint8_t itup[16], main[16];
	pn_itup_make(itup, 16, 55, 3, 4);
	uint16_t off = pn_btree_insert_offnum(left, 55);
	ck_assert_uint_eq(off, 6);
	struct pn_wal_record r = {.xid = 5, .nblocks = 1, .main_data = main, .main_len = 2};
	pn_rec_ids(PN_REC_BTREE_INSERT_LEAF, &r.rmid, &r.info);
	r.blocks[0] = (struct pn_wal_block){.blkno = 40, .data = itup, .data_len = 16};
	pn_put16(main, off);
	ck_assert_uint_eq(pn_wal_record_size(&r, PAGE), 64);
	memcpy(before, left, PAGE);
	ck_assert(pn_redo_apply(left, PAGE, &r, &r.blocks[0]));
	assert_redo(&r, 0, before, left);
	for (uint32_t i = 1; i < 301; i++)
		ck_assert(key_at(left, i - 1) <= key_at(left, i));
	/* SPLIT_R at key 2000: items >= 2000 go right, with the new item 2005 among them */
	static uint8_t data1[PAGE];
	uint8_t data0[16];
	uint16_t below = pn_btree_count_below(left, 2000);
	ck_assert_uint_eq(below, 200);
	uint32_t len1 = pn_btree_items_copy(left, below, data1, PAGE);
	ck_assert_uint_eq(len1, 101 * 16);
	pn_itup_make(itup, 16, 2005, 3, 5);
	memmove(data1 + 16 * 2, data1 + 16, len1 - 16); /* after 2000 */
	memcpy(data1 + 16, itup, 16);
	len1 += 16;
	pn_itup_make(data0, 16, 2000, 0, 0); /* the left's high key */
	struct pn_wal_record s = {.xid = 6, .nblocks = 2, .main_data = main, .main_len = 10};
	pn_rec_ids(PN_REC_BTREE_SPLIT_R, &s.rmid, &s.info);
	s.blocks[0] = (struct pn_wal_block){.blkno = 40, .data = data0, .data_len = 16};
	s.blocks[1] = (struct pn_wal_block){.blkno = 41,
					    .will_init = true,
					    .data = data1,
					    .data_len = (uint16_t)len1};
	pn_put32(main, 0);
	pn_put16(main + 4, (uint16_t)(below + 1));
	pn_put16(main + 6, 2);
	pn_put16(main + 8, 0);
	memset(right, 0, PAGE);
	memcpy(before, right, PAGE);
	ck_assert(pn_redo_apply(right, PAGE, &s, &s.blocks[1]));
	assert_redo(&s, 1, before, right);
	memcpy(before, left, PAGE);
	ck_assert(pn_redo_apply(left, PAGE, &s, &s.blocks[0]));
	assert_redo(&s, 0, before, left);
	ck_assert_uint_eq(pn_page_nitems(left), 200);
	ck_assert_uint_eq(pn_page_nitems(right), 102);
	ck_assert_uint_eq(key_at(left, 199), 1990);
	ck_assert_uint_eq(key_at(right, 0), 2000);
	ck_assert_uint_eq(key_at(right, 1), 2005);
	ck_assert_uint_eq(pn_get32(left + PAGE - 16 + 4), 41); /* btpo_next */
	ck_assert_uint_eq(pn_get32(right + PAGE - 16), 40);    /* btpo_prev */
	/* the left page's space came back: the hole is as if it had been built with 200 */
	ck_assert_uint_eq(pn_page_free(left), PAGE - 24 - 16 - 200 * 20);
}
END_TEST

/* ---- pgbench: PostgreSQL 15's sizes ---------------------------------------------------- */

static const char pgbench_yaml[] =
	"name: pgbench-sizes\n"
	"seed: 7\n"
	"storage: {pages: 2100, buffers: 1024}\n"
	"protocol: {mode: fpw, checksums: true}\n"
	"checkpoint: {interval: 0s, every_transactions: 400, max_wal_size: 0}\n"
	"workload: {kind: pgbench, scale: 1, clients: 4, transactions: 1000}\n";

START_TEST(test_pgbench_sizes)
{
	static struct pn_sim_result res;
	run_yaml(pgbench_yaml, &res);
	ck_assert_msg(res.status == 0, "%s", res.error);
	const struct pn_metrics *m = &res.m;
	ck_assert_uint_eq(m->commits, 1000);
	ck_assert_uint_eq(m->txn_type_count[0], 1000);
	ck_assert_uint_eq(m->rec_count[PN_REC_XACT_COMMIT], 1000);
	ck_assert_uint_eq(m->rec_bytes[PN_REC_XACT_COMMIT], 1000 * 34);
	/* history inserts: 79 B each, one per transaction */
	uint64_t ins = m->rec_count[PN_REC_HEAP_INSERT] + m->rec_count[PN_REC_HEAP_INSERT_INIT];
	ck_assert_uint_eq(ins, 1000);
	uint64_t ib = m->rec_bytes[PN_REC_HEAP_INSERT] + m->rec_bytes[PN_REC_HEAP_INSERT_INIT];
	ck_assert_uint_le(ib, 1000 * 79); /* 54 when the page's image replaces the tuple */
	ck_assert_uint_eq((1000 * 79 - ib) % 25, 0);
	/* non-HOT updates: 171 B */
	uint64_t up = m->rec_count[PN_REC_HEAP_UPDATE] + m->rec_count[PN_REC_HEAP_UPDATE_INIT];
	ck_assert_uint_gt(up, 0);
	uint64_t ub = m->rec_bytes[PN_REC_HEAP_UPDATE] + m->rec_bytes[PN_REC_HEAP_UPDATE_INIT];
	ck_assert_uint_le(ub, up * 171); /* 73 when the new page is imaged (its data dropped) */
	ck_assert_uint_eq((up * 171 - ub) % 98, 0);
	ck_assert_int_eq(ub<up * 171, m->rec_fpi_bytes[PN_REC_HEAP_UPDATE]> 0);
	/* each has its LOCK and its index entry; every update is HOT or not */
	ck_assert_uint_eq(m->rec_count[PN_REC_HEAP_LOCK], up);
	uint64_t leaf = m->rec_count[PN_REC_BTREE_INSERT_LEAF] +
			m->rec_count[PN_REC_BTREE_SPLIT_L] + m->rec_count[PN_REC_BTREE_SPLIT_R];
	ck_assert_uint_eq(leaf, up);
	ck_assert_uint_eq(m->rec_count[PN_REC_HEAP_HOT_UPDATE] + up, 3 * 1000);
	uint64_t hot = m->rec_count[PN_REC_HEAP_HOT_UPDATE];
	uint64_t hot_bytes = m->rec_bytes[PN_REC_HEAP_HOT_UPDATE];
	ck_assert_uint_ge(hot_bytes, 72 * hot - 7 * (hot - hot / 2)); /* images: rec 65 */
	ck_assert_uint_le(hot_bytes, 74 * hot);
	/* LOCK: 54, or 59 with the image */
	uint64_t locks = m->rec_count[PN_REC_HEAP_LOCK], lb = m->rec_bytes[PN_REC_HEAP_LOCK];
	ck_assert_uint_ge(lb, 54 * locks);
	ck_assert_uint_le(lb, 59 * locks);
	ck_assert_uint_gt(m->rec_fpi_bytes[PN_REC_HEAP_LOCK], 0);
	/* a full accounts page's image: hole 116 B (8076 B) */
	ck_assert_uint_eq(m->rec_fpi_bytes[PN_REC_HEAP_LOCK] % 8076, 0);
	/* INSERT_LEAF: 64, or 53 with the image */
	uint64_t lk = m->rec_count[PN_REC_BTREE_INSERT_LEAF];
	ck_assert_uint_ge(m->rec_bytes[PN_REC_BTREE_INSERT_LEAF], 53 * lk);
	ck_assert_uint_le(m->rec_bytes[PN_REC_BTREE_INSERT_LEAF], 64 * lk);
	/* the pages a non-HOT update left are pruned by the next update of that page */
	ck_assert_uint_gt(m->rec_count[PN_REC_HEAP2_PRUNE], 0);
	ck_assert_uint_ge(m->rec_bytes[PN_REC_HEAP2_PRUNE], 56 * m->rec_count[PN_REC_HEAP2_PRUNE]);
	/* per-type WAL: every record but checkpoints' is some transaction's */
	uint64_t ckpt = m->rec_bytes[PN_REC_XLOG_CHECKPOINT_ONLINE] +
			m->rec_bytes[PN_REC_XLOG_CHECKPOINT_SHUTDOWN];
	ck_assert_uint_eq(m->txn_type_wal[0] + ckpt, m->wal_bytes);
	ck_assert_uint_ge(m->checkpoints, 1);
	ck_assert_uint_eq(m->ckpt_xact, m->checkpoints);
}
END_TEST

/* ---- tpcc ------------------------------------------------------------------------------ */

static const char tpcc_yaml[] =
	"name: tpcc-small\n"
	"seed: 9\n"
	"storage: {pages: %u, buffers: 2048}\n"
	"protocol: {mode: %s, checksums: true}\n"
	"checkpoint: {interval: 0s, every_transactions: 500, max_wal_size: 0}\n"
	"workload: {kind: tpcc, warehouses: 1, clients: 4, transactions: 1200}\n";

static void run_tpcc(uint32_t pages, const char *mode, struct pn_sim_result *out)
{
	char yaml[512];
	snprintf(yaml, sizeof yaml, tpcc_yaml, pages, mode);
	run_yaml(yaml, out);
}

START_TEST(test_tpcc_refuses_small_storage)
{
	/* the loader refuses at storage.pages with the engine's own sizing ... */
	static struct pn_sim_result res;
	struct pn_scenario sc;
	char yaml[512], err[PN_ERROR_LEN];
	snprintf(yaml, sizeof yaml, tpcc_yaml, 100u, "fpw");
	ck_assert(!pn_scenario_load_string("workload.yaml", yaml, strlen(yaml), &sc, err,
					   sizeof err));
	ck_assert_msg(strstr(err, "storage.pages is 100; tpcc with 1 warehouses and 1200 "
				  "transactions needs ") != NULL,
		      "%s", err);
	const char *need = strstr(err, "needs ");
	/* ... and the engine, given the same scenario past the loader, needs the same pages */
	snprintf(yaml, sizeof yaml, tpcc_yaml, 100000u, "fpw");
	load(yaml, &sc);
	sc.storage.pages = 100;
	pn_sim_run(&sc, &res);
	pn_scenario_free(&sc);
	ck_assert_int_eq(res.status, 2);
	ck_assert_msg(strncmp(strstr(res.error, "needs "), need, 12) == 0, "%s / %s", res.error,
		      err);
	ck_assert(strstr(res.error, "set storage.pages to ") != NULL);
}
END_TEST

START_TEST(test_tpcc_mix_and_determinism)
{
	static struct pn_sim_result a, b, n;
	run_tpcc(20000, "fpw", &a);
	ck_assert_msg(a.status == 0, "%s", a.error);
	run_tpcc(20000, "fpw", &b);
	ck_assert(memcmp(&a.m, &b.m, sizeof(a.m)) == 0);
	ck_assert_uint_eq(a.events, b.events);
	const struct pn_metrics *m = &a.m;
	uint64_t all = 0;
	for (int t = 0; t < PN_TXN_TYPES; t++)
		all += m->txn_type_count[t];
	ck_assert_uint_eq(all, 1200);
	ck_assert_uint_eq(m->transactions, 1200);
	/* 45 / 43 / 4 / 4 / 4 %, within a few points at 1200 draws */
	ck_assert_uint_ge(m->txn_type_count[0], 480);
	ck_assert_uint_le(m->txn_type_count[0], 600);
	ck_assert_uint_ge(m->txn_type_count[1], 460);
	ck_assert_uint_le(m->txn_type_count[1], 570);
	for (int t = 2; t < PN_TXN_TYPES; t++) {
		ck_assert_uint_ge(m->txn_type_count[t], 20);
		ck_assert_uint_le(m->txn_type_count[t], 80);
	}
	ck_assert_uint_eq(m->txn_type_wal[2], 0); /* OrderStatus, StockLevel: reads */
	ck_assert_uint_eq(m->txn_type_wal[4], 0);
	ck_assert_uint_gt(m->txn_type_wal[3], 0);
	/* the order tables grow: btree splits happen; deliveries delete */
	ck_assert_uint_gt(m->rec_count[PN_REC_BTREE_SPLIT_R] + m->rec_count[PN_REC_BTREE_SPLIT_L],
			  0);
	ck_assert_uint_gt(m->rec_count[PN_REC_HEAP_DELETE], 0);
	/* without images the same records, smaller */
	run_tpcc(20000, "nofpw", &n);
	ck_assert_msg(n.status == 0, "%s", n.error);
	ck_assert_uint_eq(n.m.fpi_count, 0);
	/* the same workload; timing (so the interleaving of clients) differs a little */
	ck_assert_uint_le(n.m.wal_records, m->wal_records + m->wal_records / 100);
	ck_assert_uint_ge(n.m.wal_records + m->wal_records / 100, m->wal_records);
	ck_assert_uint_lt(n.m.wal_bytes * 2, m->wal_bytes);
}
END_TEST

/* ---- the checker judges these workloads ------------------------------------------------ */

static const char crash_yaml[] =
	"name: pgbench-crash\n"
	"seed: 5\n"
	"storage: {pages: 2044, buffers: 24, wal_segment_size: 1MiB}\n"
	"protocol: {mode: %s, checksums: true, mutations: [%s]}\n"
	"checkpoint: {interval: 0s, every_transactions: 6, max_wal_size: 0}\n"
	"workload: {kind: pgbench, scale: 1, clients: 3, transactions: 14}\n"
	"crash: {points: {every: 500}, max_unsynced: 1, tear: halves, samples: 1}\n"
	"expect: {verdict: %s}\n";

static void check_crash(const char *mode, const char *mutation, bool violation)
{
	static struct pn_check_result res;
	char yaml[1024];
	struct pn_scenario sc;
	struct pn_check_options opt = {0};
	snprintf(yaml, sizeof yaml, crash_yaml, mode, mutation, violation ? "violation" : "pass");
	load(yaml, &sc);
	memset(&res, 0, sizeof(res));
	int rc = pn_check_scenario(&sc, &opt, &res);
	pn_scenario_free(&sc);
	ck_assert_msg(rc == 0 && res.ok, "%s %s: rc %d: %s", mode, mutation, rc, res.detail);
	ck_assert_int_eq(res.violation, violation);
	ck_assert_uint_gt(res.recoveries, 0);
}

START_TEST(test_checker_on_pgbench)
{
	check_crash("fpw", "", false);
	check_crash("umbra", "", false);
	check_crash("fpw", "fpw_off", true);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("workload");
	TCase *pages = tcase_create("pages");
	tcase_add_test(pages, test_heap_page_fill_bytes);
	tcase_add_test(pages, test_heap_insert_fills_the_hole);
	tcase_add_test(pages, test_heap_update_lock_delete);
	tcase_add_test(pages, test_btree_insert_and_split);
	suite_add_tcase(s, pages);
	TCase *runs = tcase_create("runs");
	tcase_set_timeout(runs, 120);
	tcase_add_test(runs, test_pgbench_sizes);
	tcase_add_test(runs, test_tpcc_refuses_small_storage);
	tcase_add_test(runs, test_tpcc_mix_and_determinism);
	suite_add_tcase(s, runs);
	TCase *checker = tcase_create("checker");
	tcase_set_timeout(checker, 300);
	tcase_add_test(checker, test_checker_on_pgbench);
	suite_add_tcase(s, checker);
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

/*
 * test_workloads.c: Check suite for the vacuum, btree_dedup and slru workloads and their
 * records (src/wl_*.c; label unit). Every test asserts relations the engine produced on a
 * small run, the per-page facts seed 001's 10M-row table scales up from:
 *
 *   vacuum       with checksums, per heap page one FPI_FOR_HINT (49 B + the page less its
 *                hole: 8160 B for 226 rows), one FREEZE_PAGE (517 B for 226 rows, PG16
 *                layout, `postgres: 16`), one VISIBLE (59 B; 64 + 8192 for the VM
 *                page's one image); `postgres: 15` no freeze, 17 16's bytes; without
 *                checksums no hint image and no freeze, only VISIBLE; with checksums
 *                and full_page_writes off a 44 B FPI_FOR_HINT per page, no image;
 *                umbra keeps the hint images and shifts the VM page instead of imaging it;
 *   btree_dedup  INSERT_LEAF is 64 B, DEDUP passes and leaf splits happen (a split carries
 *                its insert's new item; its new page carries no image), fpw costs more WAL and more WAL-triggered
 *                checkpoints than nofpw (the feedback of seed 004); one key's inserts
 *                fill several leaves (a leaf of one key splits among its items);
 *   slru         with SLRU headers CLOG/SET carries images, without it never does;
 *   bad input    the workloads refuse sizes they cannot model, with a message;
 *   keys         a trace lists only the sizing keys its workload reads (shrink.h
 *                pn_workload_reads): each kind run again with every other key changed
 *                gives the same run, and the writer's text has exactly its keys;
 *   records      INSERT_LEAF, a leaf DEDUP, VISIBLE and a three-block split over a posting
 *                tuple built by hand: the engine's redo gives the bytes the layout says,
 *                and the oracle the same page.
 */
#include "checker.h"
#include "engine.h"
#include "crc32c.h"
#include "load.h"
#include "oracle.h"
#include "shrink.h"
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run_yaml(const char *yaml, struct pn_sim_result *r)
{
	struct pn_scenario sc;
	char err[PN_ERROR_LEN];
	ck_assert_msg(pn_scenario_load_string("wl.yaml", yaml, strlen(yaml), &sc, err, sizeof(err)),
		      "%s", err);
	pn_sim_run(&sc, r);
	pn_scenario_free(&sc);
	ck_assert_msg(r->status == 0, "status %d: %s %s", r->status, r->viol.detail, r->error);
}

static void vacuum_pg(const char *pg, const char *mode, bool checksums, uint64_t rows,
		      struct pn_sim_result *r)
{
	char yaml[512];
	snprintf(yaml, sizeof(yaml),
		 "name: wl-vacuum\npostgres: %s\nstorage: {buffers: 16}\n"
		 "protocol: {mode: %s, checksums: %s}\n"
		 "checkpoint: {interval: 0s, max_wal_size: 1GiB}\n"
		 "workload: {kind: vacuum, rows: %llu}\n",
		 pg, mode, checksums ? "true" : "false", (unsigned long long)rows);
	run_yaml(yaml, r);
}

/* PostgreSQL 16's VACUUM (opportunistic freezing): the seed's figures. */
static void vacuum(const char *mode, bool checksums, uint64_t rows, struct pn_sim_result *r)
{
	vacuum_pg("16", mode, checksums, rows, r);
}

#define ROWS_PER_PAGE 226u
#define FULL_PAGES 442u /* 100,000 rows: 442 full pages and one of 108 rows */

/* The WAL of a small pgbench run, every record's bytes and place folded into one CRC-32C,
 * pinned to the value 96ac6cd's engine gives (the record bytes, tuple bytes included, must
 * not change when the insert path does). */
struct wal_fold {
	struct pn_sim_wal_observer obs;
	uint32_t crc;
	uint64_t records;
};

static void fold_page(struct pn_sim_wal_observer *o, pn_lsn addr, const uint8_t *bytes)
{
	struct wal_fold *f = (struct wal_fold *)o;
	f->crc = pn_crc32c_update(f->crc, &addr, sizeof(addr));
	f->crc = pn_crc32c_update(f->crc, bytes, PN_XLOG_BLCKSZ);
}

static void fold_record(struct pn_sim_wal_observer *o, const uint8_t *rec, uint32_t len,
			pn_lsn start, pn_lsn end)
{
	struct wal_fold *f = (struct wal_fold *)o;
	pn_lsn at[2] = {start, end};
	f->crc = pn_crc32c_update(f->crc, at, sizeof(at));
	f->crc = pn_crc32c_update(f->crc, rec, len);
	f->records++;
}

START_TEST(test_pgbench_wal_pinned)
{
	static const char yaml[] =
		"name: wl-pgbench-pinned\nseed: 3\n"
		"storage: {pages: 2100, buffers: 256, wal_segment_size: 1MiB}\n"
		"protocol: {mode: fpw, checksums: true}\n"
		"workload: {kind: pgbench, scale: 1, clients: 2, transactions: 300}\n";
	struct pn_scenario sc;
	char err[PN_ERROR_LEN];
	ck_assert_msg(pn_scenario_load_string("wl.yaml", yaml, strlen(yaml), &sc, err, sizeof(err)),
		      "%s", err);
	struct wal_fold f = {.obs = {.page = fold_page, .record = fold_record},
			     .crc = pn_crc32c_init()};
	struct pn_sim_result *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	pn_sim_run_observed(&sc, r, &f.obs);
	ck_assert_msg(r->status == 0, "status %d: %s %s", r->status, r->viol.detail, r->error);
	ck_assert_msg(f.records == 2067 && pn_crc32c_final(f.crc) == 0x04c0d720u,
		      "%llu records, crc %08x", (unsigned long long)f.records,
		      pn_crc32c_final(f.crc));
	free(r);
	pn_scenario_free(&sc);
}
END_TEST

/* W7 (wal.c): a single run with no observer builds no WAL bytes; with one (the bytes built,
 * each record shown to it), every metric and the event count are the same, in each mode,
 * over a dozen checkpoints and recycled segments. */
static void count_page(struct pn_sim_wal_observer *o, pn_lsn addr, const uint8_t *bytes)
{
	(void)addr;
	ck_assert_ptr_nonnull(bytes);
	((struct wal_fold *)o)->records++;
}

static void count_record(struct pn_sim_wal_observer *o, const uint8_t *rec, uint32_t len,
			 pn_lsn start, pn_lsn end)
{
	(void)start;
	(void)end;
	ck_assert_ptr_nonnull(rec);
	ck_assert_uint_gt(len, 0);
	((struct wal_fold *)o)->records++;
}

START_TEST(test_unread_wal_same)
{
	static const char *const modes[] = {"fpw", "nofpw", "umbra", "doublewrite"};
	for (unsigned k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
		char yaml[600];
		snprintf(yaml, sizeof(yaml),
			 "name: wl-unread\nseed: 5\n"
			 "storage: {pages: 2100, buffers: 128, wal_segment_size: 1MiB}\n"
			 "protocol: {mode: %s, checksums: true}\n"
			 "checkpoint: {interval: 200ms, max_wal_size: 4MiB}\n"
			 "workload: {kind: pgbench, scale: 1, clients: 3, transactions: 2000}\n",
			 modes[k]);
		struct pn_scenario sc;
		char err[PN_ERROR_LEN];
		ck_assert_msg(pn_scenario_load_string("wl.yaml", yaml, strlen(yaml), &sc, err,
						      sizeof(err)),
			      "%s", err);
		struct pn_sim_result *unread = calloc(1, sizeof(*unread));
		struct pn_sim_result *built = calloc(1, sizeof(*built));
		ck_assert(unread && built);
		struct wal_fold f = {.obs = {.page = count_page, .record = count_record}};
		ck_assert_int_eq(pn_sim_run(&sc, unread), 0);
		ck_assert_int_eq(pn_sim_run_observed(&sc, built, &f.obs), 0);
		ck_assert_uint_eq(f.records, built->m.wal_records + 1); /* + the format's page */
		ck_assert_uint_gt(built->m.checkpoints, 2);
		ck_assert(k != 0 || built->m.fpi_count > 100);
		ck_assert_uint_eq(unread->events, built->events);
		ck_assert_msg(memcmp(&unread->m, &built->m, sizeof(built->m)) == 0,
			      "%s: metrics differ (WAL bytes %llu, built %llu)", modes[k],
			      (unsigned long long)unread->m.wal_bytes,
			      (unsigned long long)built->m.wal_bytes);
		free(unread);
		free(built);
		pn_scenario_free(&sc);
	}
}
END_TEST

START_TEST(test_vacuum_checksums)
{
	struct pn_sim_result r;
	vacuum("fpw", true, 100000, &r);
	const struct pn_metrics *m = &r.m;
	uint64_t pages = FULL_PAGES + 1, last = 100000 - FULL_PAGES * ROWS_PER_PAGE;
	ck_assert_uint_eq(m->rec_count[PN_REC_XLOG_FPI_FOR_HINT], pages);
	ck_assert_uint_eq(m->rec_count[PN_REC_HEAP2_FREEZE_PAGE], pages);
	ck_assert_uint_eq(m->rec_count[PN_REC_HEAP2_VISIBLE], pages);
	ck_assert_uint_eq(m->wal_records, 3 * pages);
	ck_assert_uint_eq(m->fpi_count, pages + 1); /* + the one VM page, imaged once */
	ck_assert_uint_eq(m->rec_bytes[PN_REC_XLOG_FPI_FOR_HINT], 49 * pages);
	/* 226 tuples of 32 B under 24 + 4 * 226 B of header: a 32-byte hole */
	uint64_t last_image = 8192 - (8192 - last * 32 - (24 + 4 * last));
	ck_assert_uint_eq(m->rec_fpi_bytes[PN_REC_XLOG_FPI_FOR_HINT],
			  8160 * FULL_PAGES + last_image);
	ck_assert_uint_eq(m->rec_bytes[PN_REC_HEAP2_FREEZE_PAGE],
			  517 * FULL_PAGES + (24 + 20 + 2 + 7 + 12 + 2 * last));
	ck_assert_uint_eq(m->rec_bytes[PN_REC_HEAP2_VISIBLE], 59 * pages + 5);
	ck_assert_uint_eq(m->rec_fpi_bytes[PN_REC_HEAP2_VISIBLE], 8192);
	ck_assert_uint_eq(m->rec_fpi_bytes[PN_REC_HEAP2_FREEZE_PAGE], 0);
}
END_TEST

/* PostgreSQL 15 (the default) does not freeze these young tuples: one hint image and one
 * VISIBLE per page, the VM bits ALL_VISIBLE only; 17 writes 16's bytes. */
START_TEST(test_vacuum_versions)
{
	struct pn_sim_result r15, r16, r17;
	vacuum_pg("15", "fpw", true, 100000, &r15);
	vacuum_pg("16", "fpw", true, 100000, &r16);
	vacuum_pg("17", "fpw", true, 100000, &r17);
	uint64_t pages = FULL_PAGES + 1;
	ck_assert_uint_eq(r15.m.rec_count[PN_REC_HEAP2_FREEZE_PAGE], 0);
	ck_assert_uint_eq(r15.m.wal_records, 2 * pages);
	ck_assert_uint_eq(r15.m.rec_count[PN_REC_XLOG_FPI_FOR_HINT], pages);
	ck_assert_uint_eq(r15.m.fpi_count, pages + 1);
	ck_assert_uint_eq(r15.m.wal_bytes,
			  r16.m.wal_bytes - r16.m.rec_bytes[PN_REC_HEAP2_FREEZE_PAGE]);
	ck_assert_uint_eq(r17.m.wal_bytes, r16.m.wal_bytes);
	ck_assert_uint_eq(r17.m.wal_records, r16.m.wal_records);
}
END_TEST

/* full_page_writes = off with checksums (PostgreSQL's, XLogSaveBufferForHint): each page's
 * first hint after the checkpoint still writes FPI_FOR_HINT, 44 B without an image; no
 * FPI, so no opportunistic freeze either (16). */
START_TEST(test_vacuum_nofpw_checksums)
{
	for (int pg = 15; pg <= 16; pg++) {
		struct pn_sim_result r;
		vacuum_pg(pg == 15 ? "15" : "16", "nofpw", true, 100000, &r);
		uint64_t pages = FULL_PAGES + 1;
		ck_assert_uint_eq(r.m.rec_count[PN_REC_XLOG_FPI_FOR_HINT], pages);
		ck_assert_uint_eq(r.m.rec_bytes[PN_REC_XLOG_FPI_FOR_HINT], 44 * pages);
		ck_assert_uint_eq(r.m.rec_count[PN_REC_HEAP2_FREEZE_PAGE], 0);
		ck_assert_uint_eq(r.m.fpi_count, 0);
		ck_assert_uint_eq(r.m.wal_bytes, (44 + 59) * pages);
	}
}
END_TEST

START_TEST(test_vacuum_no_checksums)
{
	struct pn_sim_result r;
	vacuum("fpw", false, 100000, &r);
	const struct pn_metrics *m = &r.m;
	ck_assert_uint_eq(m->rec_count[PN_REC_XLOG_FPI_FOR_HINT], 0);
	ck_assert_uint_eq(m->rec_count[PN_REC_HEAP2_FREEZE_PAGE], 0);
	ck_assert_uint_eq(m->rec_count[PN_REC_HEAP2_VISIBLE], FULL_PAGES + 1);
	ck_assert_uint_eq(m->fpi_count, 1);
	ck_assert_uint_eq(m->wal_bytes, 59 * (FULL_PAGES + 1) + 5 + 8192);
}
END_TEST

START_TEST(test_vacuum_umbra)
{
	struct pn_sim_result f, u;
	vacuum("fpw", true, 100000, &f);
	vacuum("umbra", true, 100000, &u);
	/* hint images are kept; the VM page is shifted (2 B) instead of imaged */
	ck_assert_uint_eq(u.m.rec_count[PN_REC_XLOG_FPI_FOR_HINT], FULL_PAGES + 1);
	ck_assert_uint_eq(u.m.fpi_count, FULL_PAGES + 1);
	ck_assert_uint_eq(u.m.rec_fpi_bytes[PN_REC_HEAP2_VISIBLE], 0);
	ck_assert_uint_lt(u.m.wal_bytes, f.m.wal_bytes + 4 * (FULL_PAGES + 1));
	ck_assert_uint_gt(u.m.shifts, FULL_PAGES);
}
END_TEST

static void btree(const char *mode, const char *mutations, struct pn_sim_result *r)
{
	char yaml[512];
	snprintf(yaml, sizeof(yaml),
		 "name: wl-btree\nstorage: {buffers: 256, wal_segment_size: 64KiB}\n"
		 "protocol: {mode: %s, checksums: true, mutations: [%s]}\n"
		 "checkpoint: {interval: 0s, max_wal_size: 512KiB}\n"
		 "workload: {kind: btree_dedup, inserts: 30000, distinct_keys: 1000, "
		 "transactions: 60}\n",
		 mode, mutations);
	run_yaml(yaml, r);
}

START_TEST(test_btree_dedup)
{
	struct pn_sim_result f, n, x;
	btree("fpw", "", &f);
	btree("nofpw", "", &n);
	btree("fpw", "dedup_no_image", &x);
	/* every insert is one INSERT_LEAF of 64 B, or the new item of a split */
	uint64_t nsplits = n.m.rec_count[PN_REC_BTREE_SPLIT_L] +
			   n.m.rec_count[PN_REC_BTREE_SPLIT_R];
	ck_assert_uint_gt(nsplits, 0);
	ck_assert_uint_eq(n.m.rec_count[PN_REC_BTREE_INSERT_LEAF] + nsplits, 30000);
	ck_assert_uint_eq(n.m.rec_bytes[PN_REC_BTREE_INSERT_LEAF],
			  64u * n.m.rec_count[PN_REC_BTREE_INSERT_LEAF]);
	ck_assert_uint_gt(n.m.rec_count[PN_REC_BTREE_DEDUP], 0);
	ck_assert_uint_eq(n.m.fpi_count, 0);
	/* and first its table row: one Heap/INSERT of 59 B, +INIT on each new table page */
	uint64_t rows = n.m.rec_count[PN_REC_HEAP_INSERT] + n.m.rec_count[PN_REC_HEAP_INSERT_INIT];
	ck_assert_uint_eq(rows, 30000);
	ck_assert_uint_eq(n.m.rec_bytes[PN_REC_HEAP_INSERT] +
				  n.m.rec_bytes[PN_REC_HEAP_INSERT_INIT],
			  59u * rows);
	ck_assert_uint_eq(n.m.rec_count[PN_REC_HEAP_INSERT_INIT], (30000 + 225) / 226);
	/* one image at most per block of a split: the left page and the sibling, never the
	 * new page (WILL_INIT) */
	uint64_t splits = f.m.rec_count[PN_REC_BTREE_SPLIT_L] + f.m.rec_count[PN_REC_BTREE_SPLIT_R];
	ck_assert_uint_le(f.m.rec_fpi_bytes[PN_REC_BTREE_SPLIT_L] +
				  f.m.rec_fpi_bytes[PN_REC_BTREE_SPLIT_R],
			  2u * 8192u * splits);
	/* same inserts, more WAL, hence more WAL-volume checkpoints */
	ck_assert_uint_eq(f.m.rec_count[PN_REC_BTREE_INSERT_LEAF] + splits, 30000);
	ck_assert_uint_gt(f.m.wal_bytes, n.m.wal_bytes + n.m.wal_bytes / 4);
	ck_assert_uint_gt(f.m.ckpt_wal, n.m.ckpt_wal);
	ck_assert_uint_eq(f.m.checkpoints, f.m.ckpt_wal);
	/* REGBUF_NO_IMAGE on the dedup pass: its records never carry an image */
	ck_assert_uint_gt(f.m.rec_fpi_bytes[PN_REC_BTREE_DEDUP], 0);
	ck_assert_uint_eq(x.m.rec_fpi_bytes[PN_REC_BTREE_DEDUP], 0);
}
END_TEST

/* One key's inserts fill leaf after leaf (refused once: splits fell between keys only):
 * a leaf of one key splits among its items, 96 % left (_bt_findsplitloc's single value),
 * under every mode, each run to its end. */
START_TEST(test_btree_one_key)
{
	static const char *const modes[] = {"fpw", "nofpw", "umbra", "doublewrite", "pushdown"};
	for (size_t i = 0; i < PN_ARRAY_LEN(modes); i++) {
		char yaml[512];
		struct pn_sim_result r;
		snprintf(
			yaml, sizeof(yaml),
			"name: wl-btree-one-key\n"
			"storage: {page_size: 2KiB, buffers: 16, wal_segment_size: 64KiB}\n"
			"protocol: {mode: %s, checksums: true}\n"
			"checkpoint: {interval: 0s, every_transactions: 10, max_wal_size: 0}\n"
			"workload: {kind: btree_dedup, clients: 2, inserts: 3000, distinct_keys: 1, "
			"transactions: 30}\n",
			modes[i]);
		run_yaml(yaml, &r);
		uint64_t splits = r.m.rec_count[PN_REC_BTREE_SPLIT_L] +
				  r.m.rec_count[PN_REC_BTREE_SPLIT_R];
		ck_assert_uint_eq(r.m.commits, 30);
		ck_assert_uint_eq(r.m.rec_count[PN_REC_BTREE_INSERT_LEAF] + splits, 3000);
		/* about 300 TIDs a 2 KiB leaf: several leaves of the one key */
		ck_assert_uint_ge(splits, 5);
		ck_assert_uint_gt(r.m.rec_count[PN_REC_BTREE_DEDUP], splits);
	}
}
END_TEST

static void slru(bool headers, struct pn_sim_result *r)
{
	char yaml[512];
	snprintf(yaml, sizeof(yaml),
		 "name: wl-slru\nstorage: {pages: 64, buffers: 16, wal_segment_size: 64KiB}\n"
		 "protocol: {mode: fpw, checksums: true, slru_headers: %s}\n"
		 "checkpoint: {interval: 0s, every_transactions: 100, max_wal_size: 0}\n"
		 "workload: {kind: slru, transactions: 1000, pages_per_transaction: 1}\n",
		 headers ? "true" : "false");
	run_yaml(yaml, r);
}

START_TEST(test_slru_headers)
{
	struct pn_sim_result h, n;
	slru(true, &h);
	slru(false, &n);
	ck_assert_uint_eq(h.m.rec_count[PN_REC_CLOG_SET], 1000);
	ck_assert_uint_eq(n.m.rec_count[PN_REC_CLOG_SET], 1000);
	ck_assert_uint_eq(n.m.rec_fpi_bytes[PN_REC_CLOG_SET], 0);
	/* one image of the CLOG page per checkpoint cycle that changes it */
	ck_assert_uint_gt(h.m.rec_fpi_bytes[PN_REC_CLOG_SET], 0);
	ck_assert_uint_le(h.m.rec_fpi_bytes[PN_REC_CLOG_SET], 8192 * (h.m.checkpoints + 1));
	ck_assert_uint_eq(h.m.commits, 1000);
}
END_TEST

static void refused(const char *workload, const char *what)
{
	char yaml[512];
	struct pn_scenario sc;
	struct pn_sim_result r;
	char err[PN_ERROR_LEN];
	snprintf(yaml, sizeof(yaml), "name: wl-bad\nworkload: {%s}\n", workload);
	if (!pn_scenario_load_string("wl.yaml", yaml, strlen(yaml), &sc, err, sizeof(err))) {
		/* refused by the loader already, at its key (FILE:LINE:COL) */
		ck_assert_msg(strncmp(err, "wl.yaml:2:", 10) == 0 && strstr(err, what) != NULL,
			      "'%s' lacks '%s'", err, what);
		return;
	}
	pn_sim_run(&sc, &r);
	pn_scenario_free(&sc);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.error, what) != NULL, "'%s' lacks '%s'", r.error, what);
}

START_TEST(test_refusals)
{
	refused("kind: vacuum, rows: 0", "workload.rows is 0");
	refused("kind: btree_dedup, inserts: 100, distinct_keys: 3, transactions: 0",
		"workload.transactions is 0");
}
END_TEST

/* ---- the records, by hand: the engine's redo and the oracle agree with the layout -------- */

#define PS 8192u

/* An empty btree leaf (wl_btree.c's layout) as page 0, a VM page as page 1. */
static void leaf_and_vm(uint8_t *pages)
{
	memset(pages, 0, 2 * PS);
	pn_put16(pages + 12, 24);
	pn_put16(pages + 14, PS - 16);
	pn_put16(pages + 16, PS - 16);
	pn_put16(pages + 18, PS | 4);
	pn_put16(pages + PS - 16 + 12, 1); /* BTP_LEAF */
	uint8_t *vm = pages + PS;
	pn_put16(vm + 12, 24);
	pn_put16(vm + 14, PS);
	pn_put16(vm + 16, PS);
	pn_put16(vm + 18, PS | 4);
}

/* Applies r to the engine's copy and to the oracle (at LSN *pos); both must accept it. */
static void both(struct pn_oracle *o, uint8_t *pages, struct pn_wal_record *r, uint64_t *pos)
{
	static uint8_t buf[2 * PS];
	uint32_t len = pn_wal_record_encode(r, PS, buf);
	ck_assert(pn_oracle_add(o, buf, len, *pos, *pos + PN_ALIGN8(len)));
	*pos += PN_ALIGN8(len);
	for (uint32_t i = 0; i < r->nblocks; i++) {
		uint8_t *page = pages + (size_t)r->blocks[i].blkno * PS;
		ck_assert(pn_redo_apply(page, PS, r, &r->blocks[i]));
		pn_page_set_lsn(page, *pos);
	}
}

static void insert(struct pn_oracle *o, uint8_t *pages, uint64_t *pos, uint16_t at, uint32_t key,
		   uint16_t tid)
{
	uint8_t main[2], tup[16] = {0};
	pn_put16(main, at);
	pn_put16(tup + 4, tid); /* ip_posid */
	pn_put16(tup + 6, 16);  /* t_info: size */
	pn_put32(tup + 8, key);
	struct pn_wal_record r = {.rmid = PN_RM_BTREE,
				  .info = 0x00,
				  .nblocks = 1,
				  .main_data = main,
				  .main_len = 2};
	r.blocks[0] = (struct pn_wal_block){.blkno = 0, .data = tup, .data_len = 16};
	both(o, pages, &r, pos);
}

START_TEST(test_records_by_hand)
{
	static uint8_t pages[2 * PS], expect[PS];
	leaf_and_vm(pages);
	struct pn_oracle *o = pn_oracle_new(2, 0, PS, false, pages);
	ck_assert_ptr_nonnull(o);
	uint64_t pos = 0x1000028;
	insert(o, pages, &pos, 1, 7, 101); /* [7:101] */
	insert(o, pages, &pos, 1, 3, 102); /* [3:102, 7:101] */
	insert(o, pages, &pos, 3, 7, 103); /* [3:102, 7:101, 7:103] */
	uint8_t main[5], iv[4];
	pn_put16(main, 1);
	pn_put16(iv, 2); /* items 2..3 (key 7) into one posting tuple */
	pn_put16(iv + 2, 2);
	struct pn_wal_record r = {.rmid = PN_RM_BTREE,
				  .info = 0x60,
				  .nblocks = 1,
				  .main_data = main,
				  .main_len = 2};
	r.blocks[0] = (struct pn_wal_block){.blkno = 0, .data = iv, .data_len = 4};
	both(o, pages, &r, &pos);
	/* two items: the plain 3 (16 B, re-laid at the top), then the posting 7 (16 + 2 TIDs
	 * = 28 -> 32 B) below it */
	ck_assert_uint_eq(pn_page_nitems(pages), 2);
	ck_assert_uint_eq(pn_get16(pages + 24), PS - 16 - 16);
	ck_assert_uint_eq(pn_get16(pages + 28), PS - 16 - 16 - 32);
	const uint8_t *post = pages + PS - 16 - 16 - 32;
	ck_assert_uint_eq(pn_get16(post + 4), 2 | 0x2000);
	ck_assert_uint_eq(pn_get16(post + 6), 32 | 0x2000);
	ck_assert_uint_eq(pn_get32(post + 8), 7);
	ck_assert_uint_eq(pn_get16(post + 16 + 4), 101); /* TIDs in item order */
	ck_assert_uint_eq(pn_get16(post + 22 + 4), 103);
	/* VISIBLE: VM page 1 gets the bits of heap block 0, whose page (the leaf stands in for
	 * a heap page) gets PD_ALL_VISIBLE */
	pn_put32(main, 0);
	main[4] = 0x03;
	struct pn_wal_record v = {.rmid = PN_RM_HEAP2,
				  .info = 0x40,
				  .nblocks = 2,
				  .main_data = main,
				  .main_len = 5};
	v.blocks[0] = (struct pn_wal_block){.blkno = 1, .fork = 2};
	v.blocks[1] = (struct pn_wal_block){.blkno = 0};
	both(o, pages, &v, &pos);
	ck_assert_uint_eq(pages[PS + 24], 0x03); /* heap block 0: bits 0-1 */
	ck_assert_uint_eq(pn_get16(pages + 10) & 0x4, 0x4);
	for (uint32_t p = 0; p < 2; p++) {
		pn_oracle_page(o, p, UINT64_MAX, expect);
		ck_assert_int_eq(pn_oracle_compare(o, p, expect, pages + (size_t)p * PS), -1);
	}
	pn_oracle_free(o);
}
END_TEST

/* A leaf with a posting tuple splits with its right sibling (three blocks, the record the
 * btree_dedup generator logs through redo_btree.c's pn_btree_split_record): the posting tuple
 * goes right whole, the new item among the right page's items, the links as _bt_split
 * sets them; the oracle reads the record to the same pages. */
START_TEST(test_split_three_blocks)
{
	static uint8_t pages[4 * PS], expect[PS];
	for (uint32_t p = 0; p < 4; p += 2)
		leaf_and_vm(pages + (size_t)p * PS); /* leaves 0, 2 (and VM-like pages 1, 3) */
	memcpy(pages + 3 * (size_t)PS, pages, PS);   /* page 3: the old right sibling */
	struct pn_oracle *o = pn_oracle_new(4, 0, PS, false, pages);
	ck_assert_ptr_nonnull(o);
	uint64_t pos = 0x1000028;
	insert(o, pages, &pos, 1, 3, 101);
	insert(o, pages, &pos, 2, 7, 102);
	insert(o, pages, &pos, 3, 7, 103);
	insert(o, pages, &pos, 4, 9, 104); /* [3, 7, 7, 9] */
	uint8_t dmain[2], iv[4];
	pn_put16(dmain, 1);
	pn_put16(iv, 2);
	pn_put16(iv + 2, 2);
	struct pn_wal_record d = {.rmid = PN_RM_BTREE,
				  .info = 0x60,
				  .nblocks = 1,
				  .main_data = dmain,
				  .main_len = 2};
	d.blocks[0] = (struct pn_wal_block){.blkno = 0, .data = iv, .data_len = 4};
	both(o, pages, &d, &pos); /* [3, 7 {102, 103}, 9] */
	uint8_t tup[16], main[10], data0[32], data1[PS];
	pn_itup_make(tup, 16, 8, 0, 105);
	struct pn_wal_record r = {.nblocks = 3};
	enum pn_rec kind = pn_btree_split_record(pages, PS, tup, 16, 7, &r, main, data0, data1);
	ck_assert_int_eq(kind, PN_REC_BTREE_SPLIT_R);
	ck_assert_uint_eq(pn_get16(main + 4), 2);    /* firstrightoff */
	ck_assert_uint_eq(r.blocks[0].data_len, 16); /* the high key only */
	ck_assert_uint_eq(pn_get32(data0 + 8), 7);
	ck_assert_uint_eq(r.blocks[1].data_len, 32 + 16 + 16);
	r.blocks[0].blkno = 0;
	r.blocks[1].blkno = 2;
	r.blocks[2].blkno = 3;
	pn_rec_ids(kind, &r.rmid, &r.info);
	both(o, pages, &r, &pos);
	const uint8_t *left = pages, *right = pages + 2 * (size_t)PS, *sib = pages + 3 * (size_t)PS;
	ck_assert_uint_eq(pn_page_nitems(left), 1);
	ck_assert_uint_eq(pn_get32(left + PS - 16 + 4), 2); /* btpo_next: the new page */
	ck_assert_uint_eq(pn_page_nitems(right), 3);
	ck_assert_uint_eq(pn_get32(right + PS - 16), 0);     /* btpo_prev: the left */
	ck_assert_uint_eq(pn_get32(right + PS - 16 + 4), 3); /* btpo_next: the old sibling */
	ck_assert_uint_eq(pn_get32(sib + PS - 16), 2);       /* btpo_prev: the new page */
	const uint8_t *first = right + pn_get16(right + 24);
	ck_assert_uint_eq(pn_get16(first + 6), 32 | 0x2000); /* the posting tuple, whole */
	ck_assert_uint_eq(pn_get16(first + 22 + 4), 103);
	ck_assert_uint_eq(pn_get32(right + pn_get16(right + 28) + 8), 8); /* the new item */
	ck_assert_uint_eq(pn_get32(right + pn_get16(right + 32) + 8), 9);
	for (uint32_t p = 0; p < 4; p++) {
		pn_oracle_page(o, p, UINT64_MAX, expect);
		ck_assert_int_eq(pn_oracle_compare(o, p, expect, pages + (size_t)p * PS), -1);
	}
	pn_oracle_free(o);
}
END_TEST

/* One kind's run, its workload line followed by `extra` keys. */
static void run_keys(const char *kind_line, const char *extra, struct pn_sim_result *r,
		     struct pn_scenario *sc_out)
{
	char yaml[600];
	char err[PN_ERROR_LEN];
	snprintf(yaml, sizeof(yaml),
		 "name: wl-keys\nseed: 7\nprotocol: {mode: fpw, checksums: true}\n"
		 "checkpoint: {interval: 0s, every_transactions: 4, max_wal_size: 0}\n%s%s}\n",
		 kind_line, extra);
	ck_assert_msg(pn_scenario_load_string("wl.yaml", yaml, strlen(yaml), sc_out, err,
					      sizeof(err)),
		      "%s\n%s", err, yaml);
	memset(r, 0, sizeof(*r));
	pn_sim_run(sc_out, r);
	ck_assert_msg(r->status == 0, "%s: status %d: %s %s", yaml, r->status, r->viol.detail,
		      r->error);
}

START_TEST(test_unread_keys)
{
	/* each generator small; the keys' other values are in range and not their defaults */
	static const struct {
		const char *line;
	} kinds[] = {
		{"storage: {pages: 16}\nworkload: {kind: random, clients: 2, transactions: 12"},
		{"storage: {pages: 2100, buffers: 64}\nworkload: {kind: pgbench, transactions: 12"},
		{"workload: {kind: vacuum, rows: 700"},
		{"storage: {buffers: 32}\nworkload: {kind: btree_dedup, transactions: 6, inserts: 300, "
		 "distinct_keys: 20"},
		{"storage: {pages: 16}\nworkload: {kind: slru, clients: 2, transactions: 12"},
		{"storage: {pages: 16400, buffers: 64}\nworkload: {kind: tpcc, transactions: 20"},
	};
	static const char *const other[PN_WK_COUNT] = {
		[PN_WK_TRANSACTIONS] = "9",  [PN_WK_PAGES_PER_TRANSACTION] = "3",
		[PN_WK_SCALE] = "3",         [PN_WK_WAREHOUSES] = "5",
		[PN_WK_ROWS] = "5000",       [PN_WK_INSERTS] = "777",
		[PN_WK_DISTINCT_KEYS] = "7",
	};
	struct pn_sim_result *base = calloc(1, sizeof(*base)), *again = calloc(1, sizeof(*again));
	ck_assert(base && again);
	for (size_t i = 0; i < PN_ARRAY_LEN(kinds); i++) {
		struct pn_scenario sc, sc2;
		run_keys(kinds[i].line, "", base, &sc);
		char extra[400] = "";
		size_t n = 0;
		for (int k = 0; k < PN_WK_COUNT; k++)
			if (!pn_workload_reads(sc.workload.kind, (enum pn_workload_key)k))
				n += (size_t)snprintf(extra + n, sizeof(extra) - n, ", %s: %s",
						      pn_workload_key_names[k], other[k]);
		run_keys(kinds[i].line, extra, again, &sc2);
		ck_assert_msg(base->events == again->events &&
				      memcmp(&base->m, &again->m, sizeof(base->m)) == 0,
			      "%s: with%s the run differs (%llu events, then %llu)",
			      pn_workload_kind_name(sc.workload.kind), extra,
			      (unsigned long long)base->events, (unsigned long long)again->events);
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		pn_scenario_write(f, &sc2);
		fclose(f);
		for (int k = 0; k < PN_WK_COUNT; k++) {
			char key[48];
			snprintf(key, sizeof(key), "\n  %s: ", pn_workload_key_names[k]);
			ck_assert_msg((strstr(text, key) != NULL) ==
					      pn_workload_reads(sc.workload.kind,
								(enum pn_workload_key)k),
				      "%s: the trace %s %s:\n%s",
				      pn_workload_kind_name(sc.workload.kind),
				      strstr(text, key) ? "lists" : "lacks",
				      pn_workload_key_names[k], text);
		}
		free(text);
		pn_scenario_free(&sc);
		pn_scenario_free(&sc2);
	}
	free(base);
	free(again);
}
END_TEST

static Suite *workloads_suite(void)
{
	Suite *s = suite_create("workloads");
	TCase *tc = tcase_create("workloads");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_vacuum_checksums);
	tcase_add_test(tc, test_vacuum_no_checksums);
	tcase_add_test(tc, test_vacuum_versions);
	tcase_add_test(tc, test_vacuum_nofpw_checksums);
	tcase_add_test(tc, test_vacuum_umbra);
	tcase_add_test(tc, test_btree_dedup);
	tcase_add_test(tc, test_btree_one_key);
	tcase_add_test(tc, test_slru_headers);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_records_by_hand);
	tcase_add_test(tc, test_split_three_blocks);
	tcase_add_test(tc, test_pgbench_wal_pinned);
	tcase_add_test(tc, test_unread_wal_same);
	suite_add_tcase(s, tc);
	TCase *keys = tcase_create("unread_keys");
	tcase_set_timeout(keys, 120);
	tcase_add_test(keys, test_unread_keys);
	suite_add_tcase(s, keys);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(workloads_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

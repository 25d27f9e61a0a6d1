/*
 * test_bufpool.c: the buffer pool (src/engine/bufpool.c) through its own interface: struct
 * pn_bufpool over real services, WAL and store, a stub protocol row (every hook the in-place
 * default) and a stub environment that holds each submitted I/O until the test completes
 * it; no engine. A miss reads the page's slot and a hit pins it; the clock sweep's eviction
 * order; a dirty victim's write-out waits for the WAL flush and holds its frame meanwhile
 * (B1, B7), then goes to the page's slot and leaves the frame clean; R1 is reported when the
 * mutant skips the flush; a read that fails verification is reported; a write in flight
 * counts for a checkpoint run begun before the changes it misses (B9); a write of a slotted
 * page's home slot leaves it dirty while an older run still needs its source (B11); an unpin
 * without a pin aborts.
 */
#include "bufpool.h"

#include "engine_stub.h"
#include "page.h"

#include <signal.h>
#include <stdlib.h>

#define PS STUB_PS
#define PAGES STUB_PAGES
#define FRAMES 3u
#define PROCS STUB_PROCS

static struct pn_bufpool bp;
static uint64_t seq_begun, seq_done;
static bool recovering;

/* A pool over row's hooks and a store of `generations` slots a page (store flags: flags). */
static void open_pool_row(const struct pn_protocol_ops *row, uint32_t mutations, bool checksums,
			  uint32_t generations, unsigned flags)
{
	seq_begun = seq_done = 0;
	recovering = false;
	stub_begin();
	stub.sc.protocol.mutations = mutations;
	stub.sc.protocol.checksums = checksums;
	stub_open(4 * FRAMES + 16);
	if (generations != 1 || flags) {
		pn_store_free(&stub.st);
		ck_assert(pn_store_init(&stub.st, &stub.sc, &stub.svc, STUB_HEAP, STUB_PAGES,
					generations, flags));
	}
	struct pn_buf_handles h = stub_buf_handles(row, &seq_begun, &seq_done, &recovering);
	ck_assert(pn_buf_init(&bp, &h, FRAMES));
}

static void open_pool(uint32_t mutations, bool checksums)
{
	open_pool_row(&stub_row, mutations, checksums, 1, 0);
}

static void close_pool(void)
{
	pn_buf_free(&bp);
	stub_close();
}

/* Completes the pending read of `page` with a fresh page's bytes (or garbage). */
static void complete_read(uint32_t page, bool garbage)
{
	int i = stub_find(PN_FILE_DATA);
	ck_assert_int_ge(i, 0);
	struct pn_io *io = stub_take((uint32_t)i);
	ck_assert_int_eq(io->op, PN_IO_READ);
	ck_assert_uint_eq(io->page, page);
	if (stub.st.slotted) /* the page's current slot, where the store places it */
		ck_assert_uint_eq(io->offset,
				  pn_store_offset(&stub.st, page, pn_store_slot(&stub.st, page)));
	else
		ck_assert_uint_eq(io->offset,
				  (uint64_t)page * PS); /* in place: slot 0, page order */
	ck_assert_uint_eq(io->len, PS);
	if (garbage)
		memset(io->buf, 0x5a, PS);
	else
		pn_page_init(io->buf, PS, page, false);
	pn_io_complete(&stub.svc, io);
}

/* Page into a frame: a miss, its read completed, pinned on the retry. Returns the frame. */
static uint32_t load(uint32_t page)
{
	ck_assert_uint_eq(pn_buf_pin(&bp, page, 0, false), PN_NO_FRAME);
	complete_read(page, false);
	uint32_t fi = pn_buf_pin(&bp, page, 0, false);
	ck_assert_uint_ne(fi, PN_NO_FRAME);
	return fi;
}

/* load(), unpinned again: resident and idle. */
static uint32_t resident(uint32_t page)
{
	uint32_t fi = load(page);
	pn_buf_unpin(&bp, fi);
	return fi;
}

/* Dirties frame fi as a logged change ending at the WAL's next record would. */
static pn_lsn dirty(uint32_t fi)
{
	static uint8_t main[64];
	struct pn_wal_record r = {.xid = 3, .main_data = main, .main_len = sizeof(main)};
	pn_lsn start, end = pn_wal_insert(&stub.wal, &r, PN_REC_XACT_COMMIT, &start);
	struct pn_frame *f = pn_buf_frame(&bp, fi);
	pn_page_set_lsn(pn_frame_page(&bp, fi), end);
	f->dirty = true;
	f->last_lsn = end;
	return end;
}

START_TEST(test_miss_reads_then_hit_pins)
{
	open_pool(0, false);
	ck_assert_uint_eq(pn_buf_pin(&bp, 4, 1, false), PN_NO_FRAME);
	ck_assert_uint_eq(stub.nios, 1);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 4), 0); /* bound to a frame while it reads */
	ck_assert_uint_eq(pn_buf_pin(&bp, 4, 1, false), PN_NO_FRAME); /* not valid yet: wait */
	complete_read(4, false);
	ck_assert_uint_ge(stub.woken[1], 1);
	uint32_t fi = pn_buf_pin(&bp, 4, 1, false);
	ck_assert_uint_eq(fi, 0);
	ck_assert_uint_eq(pn_buf_frame(&bp, fi)->pins, 1);
	ck_assert(pn_buf_frame(&bp, fi)->valid);
	ck_assert_uint_eq(pn_page_lsn(pn_frame_page(&bp, fi)), 0);
	ck_assert_uint_eq(stub.m.data_reads, 1);
	ck_assert_uint_eq(stub.m.data_bytes_read, PS);
	ck_assert(!pn_buf_idle(&bp, fi));
	pn_buf_unpin(&bp, fi);
	ck_assert(pn_buf_idle(&bp, fi));
	ck_assert(!stub.svc.failed);
	close_pool();
}
END_TEST

START_TEST(test_clock_sweep_order)
{
	open_pool(0, false);
	for (uint32_t p = 0; p < FRAMES; p++)
		ck_assert_uint_eq(resident(p), p); /* empty frames are taken in order */
	/* page 0 used again: usage 2; pages 1 and 2 usage 1 */
	pn_buf_unpin(&bp, pn_buf_pin(&bp, 0, 0, false));
	ck_assert_uint_eq(pn_buf_frame(&bp, 0)->usage, 2);
	/* the sweep from frame 0: 0 (2->1), 1 (1->0), 2 (1->0), 0 (1->0), 1: the victim */
	ck_assert_uint_eq(pn_buf_pin(&bp, 5, 0, false), PN_NO_FRAME);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 5), 1);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 1), PN_NO_FRAME);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 0), 0);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 2), 2);
	complete_read(5, false);
	/* next: the hand is at 2; frame 2 has usage 0, so page 2 goes */
	ck_assert_uint_eq(pn_buf_pin(&bp, 3, 0, false), PN_NO_FRAME);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 3), 2);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 2), PN_NO_FRAME);
	complete_read(3, false);
	/* a pinned frame is never a victim: with every frame pinned the pin waits */
	uint32_t a = pn_buf_pin(&bp, 0, 0, false), b = pn_buf_pin(&bp, 5, 0, false);
	uint32_t c = pn_buf_pin(&bp, 3, 0, false);
	ck_assert(a != PN_NO_FRAME && b != PN_NO_FRAME && c != PN_NO_FRAME);
	uint32_t before = stub.woken[1];
	ck_assert_uint_eq(pn_buf_pin(&bp, 4, 1, false), PN_NO_FRAME);
	ck_assert_uint_eq(stub.nios, 0); /* no read issued */
	ck_assert_uint_eq(stub.woken[1], before + 1);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 4), PN_NO_FRAME);
	close_pool();
}
END_TEST

START_TEST(test_dirty_victim_waits_for_wal)
{
	open_pool(0, false);
	uint32_t fi = resident(2);
	pn_lsn lsn = dirty(fi);
	ck_assert_uint_gt(lsn, pn_wal_flushed(&stub.wal));
	/* B1: no data write before the WAL is flushed to the page's LSN; B7: the frame is held
	 * for the writer while it waits, so another process cannot write or evict it */
	ck_assert_int_eq(pn_buf_write(&bp, fi, PN_WHY_EVICT, 0, -1, NULL), PN_WRITE_WAL);
	ck_assert(pn_buf_frame(&bp, fi)->held);
	ck_assert_uint_eq(pn_buf_frame(&bp, fi)->holder, 0);
	ck_assert_int_eq(stub_find(PN_FILE_DATA), -1);
	ck_assert_int_ge(stub_find(PN_FILE_WAL), 0);
	ck_assert_int_eq(pn_buf_write(&bp, fi, PN_WHY_EVICT, 1, -1, NULL), PN_WRITE_BUSY);
	ck_assert_int_eq(pn_buf_write(&bp, fi, PN_WHY_BGWRITER, UINT32_MAX, -1, NULL),
			 PN_WRITE_BUSY);
	ck_assert(!pn_buf_idle(&bp, fi));
	stub_complete_file(PN_FILE_WAL); /* the flush's write, then its fsync */
	ck_assert_uint_ge(pn_wal_flushed(&stub.wal), lsn);
	ck_assert_uint_ge(stub.woken[0], 1);
	/* the holder comes back: the write goes out to the page's slot with its LSN */
	ck_assert_int_eq(pn_buf_write(&bp, fi, PN_WHY_EVICT, 0, -1, NULL), PN_WRITE_STARTED);
	ck_assert(!pn_buf_frame(&bp, fi)->held);
	int w = stub_find(PN_FILE_DATA);
	ck_assert_int_ge(w, 0);
	struct pn_io *io = stub_take((uint32_t)w);
	ck_assert_int_eq(io->op, PN_IO_WRITE);
	ck_assert_uint_eq(io->offset, 2ull * PS);
	ck_assert_uint_eq(io->lsn, lsn);
	ck_assert_uint_eq(pn_page_lsn(io->buf), lsn); /* B2: the copy made when issued */
	ck_assert_uint_eq(bp.data_writes_inflight, 1);
	ck_assert_int_eq(pn_buf_write(&bp, fi, PN_WHY_EVICT, 0, -1, NULL), PN_WRITE_BUSY);
	pn_io_complete(&stub.svc, io);
	ck_assert(!pn_buf_frame(&bp, fi)->dirty);
	ck_assert_uint_eq(bp.data_writes_inflight, 0);
	ck_assert_int_eq(pn_buf_write(&bp, fi, PN_WHY_EVICT, 0, -1, NULL), PN_WRITE_NONE);
	ck_assert_uint_eq(stub.m.data_writes, 1);
	ck_assert(!stub.svc.failed);
	close_pool();
}
END_TEST

START_TEST(test_eviction_writes_dirty_victim_first)
{
	open_pool(0, false);
	for (uint32_t p = 0; p < FRAMES; p++)
		resident(p);
	pn_lsn lsn = dirty(0);
	/* every usage 1: the sweep takes them to 0 and comes back to frame 0, dirty: its
	 * write-out waits for the WAL (B1) and the victim is held for this backend (B7) */
	ck_assert_uint_eq(pn_buf_pin(&bp, 4, 0, false), PN_NO_FRAME);
	ck_assert_int_eq(stub_find(PN_FILE_DATA), -1);
	ck_assert(pn_buf_frame(&bp, 0)->held);
	ck_assert(bp.victims[0].held);
	ck_assert_uint_eq(bp.victims[0].frame, 0);
	stub_complete_file(PN_FILE_WAL);
	ck_assert_uint_ge(pn_wal_flushed(&stub.wal), lsn);
	/* back: its held victim is written, not another frame */
	ck_assert_uint_eq(pn_buf_pin(&bp, 4, 0, false), PN_NO_FRAME);
	int w = stub_find(PN_FILE_DATA);
	ck_assert_int_ge(w, 0);
	ck_assert_int_eq(stub.ios[w]->op, PN_IO_WRITE);
	ck_assert_uint_eq(stub.ios[w]->page, 0);
	ck_assert_uint_eq(stub.m.evictions, 1);
	ck_assert(!bp.victims[0].held);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 0), 0); /* still page 0 while it is written */
	pn_io_complete(&stub.svc, stub_take((uint32_t)w));
	ck_assert(!pn_buf_frame(&bp, 0)->dirty);
	/* the sweep goes on from where it stopped (frame 1, usage 0): page 1 makes room */
	ck_assert_uint_eq(pn_buf_pin(&bp, 4, 0, false), PN_NO_FRAME);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 4), 1);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 1), PN_NO_FRAME);
	ck_assert_uint_eq(pn_buf_frame_of(&bp, 0), 0);
	complete_read(4, false);
	ck_assert(!stub.svc.failed);
	close_pool();
}
END_TEST

START_TEST(test_r1_reported_under_mutant)
{
	open_pool(PN_MUT_NO_WAL_BEFORE_DATA, false);
	uint32_t fi = resident(1);
	pn_lsn lsn = dirty(fi);
	ck_assert_int_eq(pn_buf_write(&bp, fi, PN_WHY_EVICT, 0, -1, NULL), PN_WRITE_STARTED);
	ck_assert(stub.svc.failed);
	ck_assert_int_eq(stub.svc.viol.kind, PN_VIOL_WAL_BEFORE_DATA);
	ck_assert_uint_eq(stub.svc.viol.page, 1);
	int w = stub_find(PN_FILE_DATA);
	ck_assert_int_ge(w, 0);
	ck_assert_uint_eq(stub.ios[w]->lsn, lsn);
	close_pool();
}
END_TEST

START_TEST(test_torn_read_reported)
{
	open_pool(0, true);
	ck_assert_uint_eq(pn_buf_pin(&bp, 3, 0, false), PN_NO_FRAME);
	complete_read(3, true);
	ck_assert(stub.svc.failed);
	ck_assert_int_eq(stub.svc.viol.kind, PN_VIOL_CHECKSUM);
	ck_assert_uint_eq(stub.svc.viol.page, 3);
	close_pool();
}
END_TEST

START_TEST(test_zeroed_pin_reads_nothing)
{
	open_pool(0, false);
	uint32_t fi = pn_buf_pin(&bp, 2, 0, true); /* redo of an image: RBM_ZERO_AND_LOCK */
	ck_assert_uint_ne(fi, PN_NO_FRAME);
	ck_assert_uint_eq(stub.nios, 0);
	ck_assert(pn_buf_frame(&bp, fi)->valid);
	static const uint8_t zero[PS];
	ck_assert_mem_eq(pn_frame_page(&bp, fi), zero, PS);
	close_pool();
}
END_TEST

/* Checkpoint run r, begun as the latest (seq), flags frame fi as pn_ckpt_select does. */
static void flag(uint32_t fi, int r, uint64_t seq)
{
	struct pn_frame *f = pn_buf_frame(&bp, fi);
	seq_begun = seq;
	f->ckpt_needed |= (uint8_t)(1u << r);
	f->ckpt_run_seq[r] = seq;
}

/* Frame fi's write for `why` (run: the checkpoint run of PN_WHY_CKPT, else -1), issued once
 * the WAL is flushed; its I/O, not completed. */
static struct pn_io *write_for(uint32_t fi, enum pn_io_why why, int run)
{
	enum pn_write_result w0 = pn_buf_write(&bp, fi, why, 0, run, NULL);
	if (w0 == PN_WRITE_WAL) {
		stub_complete_file(PN_FILE_WAL);
		w0 = pn_buf_write(&bp, fi, why, 0, run, NULL);
	}
	ck_assert_int_eq(w0, PN_WRITE_STARTED);
	int w = stub_find(PN_FILE_DATA);
	ck_assert_int_ge(w, 0);
	return stub_take((uint32_t)w);
}

/* Frame fi's write-out (an eviction's write), not completed. */
static struct pn_io *write_out(uint32_t fi) { return write_for(fi, PN_WHY_EVICT, -1); }

/* A backend changes `page` (resident): a WAL-logged change, or an unlogged hint. */
static void change(uint32_t page, bool logged)
{
	uint32_t fi = pn_buf_pin(&bp, page, 0, false);
	ck_assert_uint_ne(fi, PN_NO_FRAME);
	if (logged) {
		static uint8_t main[64];
		struct pn_wal_record r = {.xid = 3, .main_data = main, .main_len = sizeof(main)};
		pn_lsn start, end = pn_wal_insert(&stub.wal, &r, PN_REC_XACT_COMMIT, &start);
		pn_buf_set_dirty(&bp, fi);
		pn_page_set_lsn(pn_frame_page(&bp, fi), end);
		pn_buf_set_last_lsn(&bp, fi, end);
	} else {
		pn_buf_set_hint_dirty(&bp, fi);
	}
	pn_buf_unpin(&bp, fi);
}

/* B9: with overlapping runs, a write in flight when a second run begins holds every logged
 * change of before that begin unless one came after its image was copied; a change after
 * the begin, or a hint, leaves the write good for the run (it cleared the run's need) and the
 * frame dirty. Before B9 the run kept its need and wrote the frame again: with two runs at
 * once, onto the slot the older run's control file names (docs/umbra-findings.md section
 * 10). One run at a time the rule is as before: a write issued before the run began and
 * changed while in flight does not count for it. */
START_TEST(test_write_in_flight_counts_for_a_run_begun_before_a_change)
{
	struct {
		bool before; /* the change comes before run 1 begins */
		bool logged;
		uint8_t needed[2]; /* run 0 flagged the frame before the write, run 1 during it;
				    * [0] one run at a time, [1] checkpoint.overlap */
	} cases[] = {
		{false, true, {2, 0}}, /* after: the write has all run 1 needs */
		{true, true, {2, 2}},  /* before: run 1 still needs the frame */
		{true, false, {2, 0}}, /* a hint before: no run needs it */
	};
	for (uint32_t overlap = 0; overlap < 2; overlap++) {
		open_pool(0, false);
		stub.sc.checkpoint.overlap = overlap;
		uint64_t seq = 0;
		for (uint32_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			uint32_t fi = resident(c);
			dirty(fi);
			flag(fi, 0, ++seq);
			struct pn_io *io = write_out(fi);
			if (cases[c].before)
				change(c, cases[c].logged);
			flag(fi, 1, ++seq);
			if (!cases[c].before)
				change(c, cases[c].logged);
			pn_io_complete(&stub.svc, io);
			const struct pn_frame *f = pn_buf_frame(&bp, fi);
			ck_assert_msg(f->ckpt_needed == cases[c].needed[overlap],
				      "overlap %u, case %u: needed %x, expected %x", overlap, c,
				      f->ckpt_needed, cases[c].needed[overlap]);
			ck_assert(f->dirty); /* changed while written: still dirty */
			ck_assert(f->redirtied);
		}
		ck_assert(!stub.svc.failed);
		close_pool();
	}
}
END_TEST

/* Run r's checkpoint write of frame fi (to the slot its selection bound), completed. */
static void ckpt_write(uint32_t fi, int r, uint32_t slot)
{
	struct pn_io *io = write_for(fi, PN_WHY_CKPT, r);
	ck_assert_uint_eq(io->slot, slot);
	pn_io_complete(&stub.svc, io);
}

/* B11: with overlapping checkpoints, run 0 selects a slotted page at slot 1, the page shifts
 * to slot 2, run 1 selects it there and writes it first. That write of the page's home
 * slot leaves the frame dirty, because run 0 still needs slot 1 (the source it must
 * persist), so run 0's write still goes out. Before B11 the frame was left clean, run 0's
 * checkpointer found nothing to write (PN_WRITE_NONE) and dropped its need: its control
 * file named a slot never written. */
START_TEST(test_home_write_keeps_an_older_runs_source_owed)
{
	static const struct pn_protocol_ops slotted = {.name = "slotted",
						       .store_flags = PN_STORE_SLOTTED,
						       .write = {.decide = stub_decide}};
	open_pool_row(&slotted, 0, false, 3, PN_STORE_SLOTTED);
	stub.sc.checkpoint.overlap = true;
	pn_store_set_slot(&stub.st, 1, 1); /* slot 0 stays the completed baseline (R3) */
	uint32_t fi = resident(1);
	change(1, true);
	struct pn_frame *f = pn_buf_frame(&bp, fi);
	flag(fi, 0, 1);
	f->ckpt_slot[0] = 1;
	pn_store_set_slot(&stub.st, 1, 2); /* the shift, after run 0's selection */
	change(1, true);
	flag(fi, 1, 2);
	f->ckpt_slot[1] = 2;
	ckpt_write(fi, 1, 2); /* run 1's write of the home slot completes first */
	ck_assert_uint_eq(f->ckpt_needed, 1u);
	ck_assert_msg(f->dirty, "a home write left the frame clean while run 0 owes slot 1");
	ckpt_write(fi, 0, 1); /* run 0's write still goes out, to its source */
	ck_assert_uint_eq(f->ckpt_needed, 0u);
	ck_assert(f->dirty); /* the home slot is not known to hold this image: written again */
	ck_assert_msg(!stub.svc.failed, "%s", stub.svc.viol.detail);
	close_pool();
}
END_TEST

START_TEST(test_unpin_unpinned_aborts)
{
	open_pool(0, false);
	pn_buf_unpin(&bp, resident(0)); /* no pin left: aborts */
}
END_TEST

static Suite *bufpool_suite(void)
{
	Suite *s = suite_create("bufpool");
	TCase *tc = tcase_create("pool");
	tcase_add_test(tc, test_miss_reads_then_hit_pins);
	tcase_add_test(tc, test_clock_sweep_order);
	tcase_add_test(tc, test_dirty_victim_waits_for_wal);
	tcase_add_test(tc, test_eviction_writes_dirty_victim_first);
	tcase_add_test(tc, test_r1_reported_under_mutant);
	tcase_add_test(tc, test_torn_read_reported);
	tcase_add_test(tc, test_zeroed_pin_reads_nothing);
	tcase_add_test(tc, test_write_in_flight_counts_for_a_run_begun_before_a_change);
	tcase_add_test(tc, test_home_write_keeps_an_older_runs_source_owed);
	tcase_add_test_raise_signal(tc, test_unpin_unpinned_aborts, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(bufpool_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

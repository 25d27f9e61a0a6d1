/*
 * test_recovery.c: the startup process (src/engine/recovery.c) through its own interface:
 * struct pn_recovery over real services, WAL, store, buffer pool and checkpointer, a stub
 * protocol row and a stub world; no engine. The WAL it replays is written first by a real
 * WAL module (its flushed bytes kept as the WAL file), with a control file naming its
 * checkpoint record. Redo of an image and of a record onto that page (BLK_NEEDS_REDO), a
 * record skipped on a page already past it (BLK_DONE), the end of the WAL (where replay
 * ended, the next xid, the end-of-recovery checkpoint and the startup process's states),
 * and the refusals: a corrupt control file, a checkpoint record that is not there.
 */
#include "recovery.h"

#include "bufpool.h"
#include "ckpt.h"
#include "engine_stub.h"
#include "page.h"
#include "redo.h"

#include <signal.h>
#include <stdlib.h>

#define PS STUB_PS
#define SEG (1u << 20)
#define WAL_FILE (16ull * SEG)
#define FRAMES 4u
#define STARTUP 1u
#define ROWS 8u
#define T_LEN 40u

static uint8_t *walfile, *datafile;
static uint8_t ctlfile[PN_CONTROL_SIZE];
static uint8_t image[PS];
static struct pn_bufpool bp;
static struct pn_ckpt ck;
static struct pn_recovery rv;
static struct pn_proc procs[STUB_PROCS];
static bool stopping;
static uint32_t next_xid;

static void scenario(void)
{
	stub_begin();
	stub.sc.storage.wal_segment_size = SEG;
	stub.sc.checkpoint.max_wal_size = 4ull * SEG;
}

/* ---- the WAL before the crash: records through a real WAL, its flushed bytes kept ---- */

static pn_lsn insert(struct pn_wal_record *r, enum pn_rec kind, pn_lsn *start)
{
	return pn_wal_insert(&stub.wal, r, kind, start);
}

/* The checkpoint record (CreateCheckPoint's: redo, timelines, next xid, the number). */
static pn_lsn checkpoint_record(pn_lsn redo, uint32_t xid, pn_lsn *start)
{
	static uint8_t main[88];
	memset(main, 0, sizeof(main));
	pn_put64(main, redo);
	pn_put64(main + 24, xid);
	pn_put64(main + 80, 1);
	struct pn_wal_record r = {.main_data = main, .main_len = sizeof(main)};
	return insert(&r, PN_REC_XLOG_CHECKPOINT_SHUTDOWN, start);
}

/* Heap/LOCK of tuple offnum on page by xid (main: xmax u32, offnum u16, flags). */
static pn_lsn lock_record(uint32_t page, uint16_t offnum, uint32_t xid)
{
	static uint8_t main[8];
	pn_put32(main, xid);
	pn_put16(main + 4, offnum);
	pn_put16(main + 6, 0);
	struct pn_wal_record r = {.xid = xid, .nblocks = 1, .main_data = main, .main_len = 8};
	r.blocks[0].blkno = page;
	pn_lsn start;
	return insert(&r, PN_REC_HEAP_LOCK, &start);
}

/* Flushes the WAL up to lsn, copying each write into the WAL file. */
static void flush_to_file(pn_lsn lsn)
{
	ck_assert(!pn_wal_flush_request(&stub.wal, lsn, 0));
	while (stub.nios) {
		struct pn_io *io = stub_take(0);
		ck_assert_int_eq(io->file, PN_FILE_WAL);
		if (io->op == PN_IO_WRITE) {
			ck_assert_uint_le(io->offset + io->len, WAL_FILE);
			memcpy(walfile + io->offset, io->buf, io->len);
		}
		pn_io_complete(&stub.svc, io);
	}
	ck_assert_uint_ge(pn_wal_flushed(&stub.wal), lsn);
}

struct written {
	pn_lsn ckpt_start, redo, lock2_end, lock3_end;
};

/* The run before the crash: a shutdown checkpoint (redo = its own start), page 2's image,
 * a lock on page 2 by xid 600, a lock on page 3 by xid 610; flushed; the control file. */
static struct written write_wal(void)
{
	struct written w;
	scenario();
	stub_open(32);
	w.redo = pn_wal_insert_start(&stub.wal);
	checkpoint_record(w.redo, 500, &w.ckpt_start);
	ck_assert_uint_eq(w.ckpt_start, w.redo);
	pn_heap_page_fill(image, PS, 2, ROWS, T_LEN);
	struct pn_wal_record fpi = {.nblocks = 1};
	fpi.blocks[0] = (struct pn_wal_block){.blkno = 2,
					      .has_image = true,
					      .image_apply = true,
					      .image = image};
	pn_lsn start;
	insert(&fpi, PN_REC_XLOG_FPI_FOR_HINT, &start);
	w.lock2_end = lock_record(2, 3, 600);
	w.lock3_end = lock_record(3, 1, 610);
	flush_to_file(w.lock3_end);
	struct pn_control c = {.ckpt_seq = 1,
			       .checkpoint = w.ckpt_start,
			       .redo = w.redo,
			       .state = 1};
	struct pn_ckpt k = {.h = {.sysid = 42}};
	pn_ckpt_encode_control(&k, &c, ctlfile);
	stub_close();
	return w;
}

/* ---- the recovering side: a fresh set of modules over the files ---- */

static void open_recovery(void)
{
	scenario();
	stub.files[PN_FILE_WAL] = walfile;
	stub.file_len[PN_FILE_WAL] = WAL_FILE;
	stub.files[PN_FILE_CONTROL] = ctlfile;
	stub.file_len[PN_FILE_CONTROL] = sizeof(ctlfile);
	stub.files[PN_FILE_DATA] = datafile;
	stub.file_len[PN_FILE_DATA] = (uint64_t)STUB_PAGES * PS;
	stub_open(4 * FRAMES + 16);
	stopping = false;
	next_xid = 1;
	procs[0] = (struct pn_proc){.kind = PN_PROC_BACKEND, .id = 0, .state = PN_B_NEXT};
	procs[1] = (struct pn_proc){.kind = PN_PROC_STARTUP, .id = STARTUP, .state = PN_B_DONE};
	struct pn_buf_handles bh = stub_buf_handles(&stub_row, &ck.seq_begun, &ck.seq_done,
						    &rv.active);
	ck_assert(pn_buf_init(&bp, &bh, FRAMES));
	/* proc 0 checkpoints too: the stub has two processes */
	struct pn_ckpt_handles kh = stub_ckpt_handles(&bp, &stub_row, procs, 0, &stopping,
						      &rv.active, &next_xid);
	pn_ckpt_init(&ck, &kh);
	struct pn_recovery_handles rh = {.sc = &stub.sc,
					 .svc = &stub.svc,
					 .wal = &stub.wal,
					 .buf = &bp,
					 .store = &stub.st,
					 .ckpt = &ck,
					 .m = &stub.m,
					 .proto = &stub_row,
					 .pctx = &stub.pctx,
					 .procs = procs,
					 .proc_startup = STARTUP,
					 .next_xid = &next_xid,
					 .sysid = 42,
					 .page_size = PS,
					 .pages = STUB_PAGES,
					 .generations = 1};
	pn_recovery_init(&rv, &rh);
}

static void close_recovery(void)
{
	pn_recovery_free(&rv);
	pn_buf_free(&bp);
	stub_close();
}

/* Page 3 on disk: its tuples, and an LSN past every record of the WAL. */
static void setup(void)
{
	walfile = calloc(1, WAL_FILE);
	datafile = calloc(STUB_PAGES, PS);
	ck_assert(walfile && datafile);
	pn_heap_page_fill(datafile + 3ull * PS, PS, 3, ROWS, T_LEN);
	pn_page_set_lsn(datafile + 3ull * PS, (pn_lsn)1 << 40);
	pn_page_set_checksum(datafile + 3ull * PS, PS, 3);
}

static void teardown(void)
{
	free(walfile);
	free(datafile);
}

/* Runs the startup process as the world would: each wake fires one step, a page read
 * completes (waking it again); until nothing is scheduled or in flight. */
static void replay(void)
{
	for (int guard = 0; guard < 100; guard++) {
		if (stub.nios) {
			struct pn_io *io = stub_take(0);
			ck_assert_int_eq(io->op, PN_IO_READ);
			memcpy(io->buf, datafile + io->offset, io->len);
			pn_io_complete(&stub.svc, io);
			continue;
		}
		ck_assert_msg(!stub.svc.failed, "%s", stub.svc.viol.detail);
		if (!pn_svc_scheduled(&stub.svc, STARTUP))
			return;
		ck_assert(pn_svc_fire(&stub.svc, STARTUP, pn_svc_wake_token(&stub.svc, STARTUP)));
		pn_recovery_step(&rv, &procs[STARTUP]);
	}
	ck_abort_msg("recovery did not stop stepping");
}

START_TEST(test_redo_and_end_of_wal)
{
	struct written w = write_wal();
	open_recovery();
	ck_assert(pn_recovery_begin(&rv));
	ck_assert(rv.active);
	ck_assert_int_eq(procs[STARTUP].state, PN_B_NEXT);
	ck_assert_uint_eq(next_xid, 500); /* from the checkpoint record */
	ck_assert_uint_eq(ck.seq_done, 1);
	ck_assert_uint_eq(ck.redo_done, w.redo);
	ck_assert_uint_eq(pn_wal_redo(&stub.wal), w.redo);
	replay();
	/* end of WAL: replay ended after the last record; the next xid past every one seen */
	ck_assert_int_eq(procs[STARTUP].state, PN_B_WAIT_CKPT);
	ck_assert_uint_eq(rv.replay_end, w.lock3_end);
	ck_assert_uint_eq(pn_wal_insert_lsn(&stub.wal), w.lock3_end);
	ck_assert_uint_eq(next_xid, 611);
	ck_assert_uint_eq(stub.m.recovery_records, 4);
	ck_assert(pn_ckpt_pending(&ck));
	ck_assert_int_eq(ck.request_cause, PN_CKPT_END_OF_RECOVERY);
	ck_assert(strstr(stub.svc.error, "redo done at") != NULL);
	/* page 2: the image restored, then the lock applied on it (BLK_NEEDS_REDO) */
	uint32_t f2 = pn_buf_frame_of(&bp, 2);
	ck_assert_uint_ne(f2, PN_NO_FRAME);
	uint8_t *p2 = pn_frame_page(&bp, f2);
	ck_assert_uint_eq(pn_page_lsn(p2), w.lock2_end);
	ck_assert(pn_buf_frame(&bp, f2)->dirty);
	const uint8_t *t = pn_page_tuple(p2, PS, 2, PN_TUPLE_HEADER);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(pn_get32(t + 4), 600); /* xmax */
	/* the rest as imaged: only the LSN and the locked tuple's header differ */
	static uint8_t want[PS];
	memcpy(want, image, PS);
	pn_page_set_lsn(want, w.lock2_end);
	size_t at = (size_t)(t - p2);
	ck_assert_uint_ne(pn_get32(want + at + 4), 600);
	memcpy(want + at, t, PN_TUPLE_HEADER);
	ck_assert_mem_eq(p2, want, PS);
	/* page 3: read, already past the record (BLK_DONE): unchanged, clean */
	uint32_t f3 = pn_buf_frame_of(&bp, 3);
	ck_assert_uint_ne(f3, PN_NO_FRAME);
	ck_assert_mem_eq(pn_frame_page(&bp, f3), datafile + 3ull * PS, PS);
	ck_assert(!pn_buf_frame(&bp, f3)->dirty);
	/* the end-of-recovery checkpoint: recovery is over when it has happened */
	pn_recovery_step(&rv, &procs[STARTUP]);
	ck_assert(rv.active);
	for (int guard = 0; guard < 200 && (pn_ckpt_pending(&ck) || pn_ckpt_active(&ck)); guard++) {
		pn_ckpt_step(&ck);
		while (stub.nios)
			pn_io_complete(&stub.svc, stub_take(0));
	}
	ck_assert_uint_eq(ck.seq_done, 2);
	ck_assert_uint_eq(stub.m.rec_count[PN_REC_XLOG_CHECKPOINT_SHUTDOWN], 1);
	pn_recovery_step(&rv, &procs[STARTUP]);
	ck_assert(!rv.active);
	ck_assert_int_eq(procs[STARTUP].state, PN_B_DONE);
	ck_assert(!stub.svc.failed);
	close_recovery();
}
END_TEST

START_TEST(test_corrupt_control_refused)
{
	write_wal();
	ctlfile[20] ^= 0x10;
	open_recovery();
	ck_assert(!pn_recovery_begin(&rv));
	ck_assert(stub.svc.failed);
	ck_assert_int_eq(stub.svc.viol.kind, PN_VIOL_RECOVERY);
	ck_assert(strstr(stub.svc.viol.detail, "control file") != NULL);
	close_recovery();
}
END_TEST

START_TEST(test_missing_checkpoint_record_refused)
{
	struct written w = write_wal();
	struct pn_control c = {.ckpt_seq = 1,
			       .checkpoint = w.lock2_end,
			       .redo = w.redo,
			       .state = 1};
	struct pn_ckpt k = {.h = {.sysid = 42}};
	pn_ckpt_encode_control(&k, &c, ctlfile); /* names a lock record, not a checkpoint */
	open_recovery();
	ck_assert(!pn_recovery_begin(&rv));
	ck_assert_int_eq(stub.svc.viol.kind, PN_VIOL_RECOVERY);
	ck_assert(strstr(stub.svc.viol.detail, "checkpoint record") != NULL);
	close_recovery();
}
END_TEST

static Suite *recovery_suite(void)
{
	Suite *s = suite_create("recovery");
	TCase *tc = tcase_create("startup");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_redo_and_end_of_wal);
	tcase_add_test(tc, test_corrupt_control_refused);
	tcase_add_test(tc, test_missing_checkpoint_record_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(recovery_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

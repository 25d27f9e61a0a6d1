/*
 * test_ckpt.c: the checkpointer (src/engine/ckpt.c) through its own interface: struct
 * pn_ckpt over real services, WAL, store and buffer pool, a stub protocol row (the in-place
 * defaults) and a stub world that holds each submitted I/O until the test completes it; no
 * engine. A run's I/O comes in R5's order (the flagged frames, the data fsync, the
 * checkpoint record's WAL flush, the control file, its fsync) and only then has the
 * checkpoint happened; a request made during a run waits for it; the record's oldestActiveXid
 * online and at the end of recovery; the control codec and its
 * CRC; an illegal edge and a run numbered past the last begun abort.
 */
#include "ckpt.h"

#include "engine_stub.h"
#include "redo.h"

#include <signal.h>
#include <stdlib.h>

#define PS STUB_PS
#define HEAP STUB_HEAP
#define PAGES STUB_PAGES
#define FRAMES 4u
#define PROCS STUB_PROCS /* a backend, the checkpointer */
#define CKPT_PROC 1u

static struct pn_bufpool bp;
static struct pn_ckpt ck;
static struct pn_proc procs[PROCS];
static bool stopping, recovering;
static uint32_t next_xid;
static struct pn_protocol_ops row;

static void open_ckpt(bool overlap)
{
	stopping = recovering = false;
	next_xid = 77;
	stub_begin();
	stub.sc.checkpoint.overlap = overlap;
	stub_open(4 * FRAMES + 16);
	row = stub_row;
	row.fpw_byte = true;
	procs[0] = (struct pn_proc){.kind = PN_PROC_BACKEND, .id = 0};
	procs[1] = (struct pn_proc){.kind = PN_PROC_CHECKPOINTER, .id = CKPT_PROC};
	struct pn_buf_handles bh = stub_buf_handles(&row, &ck.seq_begun, &ck.seq_done, &recovering);
	ck_assert(pn_buf_init(&bp, &bh, FRAMES));
	struct pn_ckpt_handles kh = stub_ckpt_handles(&bp, &row, procs, CKPT_PROC, &stopping,
						      &recovering, &next_xid);
	pn_ckpt_init(&ck, &kh);
}

static void close_ckpt(void)
{
	pn_buf_free(&bp);
	stub_close();
}

/* A resident frame for page, dirty with an LSN the WAL has flushed (no B1 wait). */
static uint32_t dirty_page(uint32_t page)
{
	uint32_t fi = pn_buf_pin(&bp, page, 0, true);
	ck_assert_uint_ne(fi, PN_NO_FRAME);
	struct pn_frame *f = pn_buf_frame(&bp, fi);
	f->dirty = true;
	f->last_lsn = 0;
	pn_buf_unpin(&bp, fi);
	return fi;
}

/* What the world saw, in order: file and op of each I/O completed. */
struct seen {
	enum pn_file file;
	enum pn_io_op op;
	uint8_t data[PN_CONTROL_SIZE]; /* a control write's bytes */
};

/* Runs the checkpointer until no run is active: a step, then the oldest I/O completes. */
static uint32_t drive(struct seen *out, uint32_t cap)
{
	uint32_t n = 0;
	for (int guard = 0; guard < 200 && (pn_ckpt_active(&ck) || pn_ckpt_pending(&ck)); guard++) {
		pn_ckpt_step(&ck);
		pn_ckpt_check(&ck);
		if (!stub.nios)
			continue;
		struct pn_io *io = stub.ios[0];
		memmove(stub.ios, stub.ios + 1, --stub.nios * sizeof(stub.ios[0]));
		ck_assert_uint_lt(n, cap);
		out[n].file = io->file;
		out[n].op = io->op;
		if (io->file == PN_FILE_CONTROL && io->op == PN_IO_WRITE)
			memcpy(out[n].data, io->buf, PN_CONTROL_SIZE);
		n++;
		pn_io_dispatched(io);
		pn_io_complete(&stub.svc, io);
	}
	ck_assert(!pn_ckpt_active(&ck));
	return n;
}

START_TEST(test_run_in_r5_order)
{
	open_ckpt(false);
	uint32_t a = dirty_page(1), b = dirty_page(4);
	pn_lsn redo = pn_wal_insert_start(&stub.wal);
	pn_ckpt_request(&ck, PN_CKPT_REQUEST, true);
	ck_assert(pn_ckpt_pending(&ck));
	ck_assert_uint_eq(stub.woken[CKPT_PROC], 1);
	pn_ckpt_step(&ck); /* begins: redo pointer, every dirty frame flagged */
	ck_assert(!pn_ckpt_pending(&ck));
	ck_assert(pn_ckpt_active(&ck));
	ck_assert_uint_eq(ck.seq_begun, 1);
	ck_assert_uint_eq(ck.runs[0].redo, redo);
	ck_assert_uint_eq(pn_wal_redo(&stub.wal), redo);
	ck_assert_uint_eq(pn_buf_frame(&bp, a)->ckpt_needed, 1);
	ck_assert_uint_eq(pn_buf_frame(&bp, b)->ckpt_needed, 1);
	ck_assert_uint_eq(ck.runs[0].to_write, 2);
	ck_assert_int_eq(pn_ckpt_run_phase(&ck.runs[0]), PN_CKPT_PHASE_BEFORE_FSYNC);
	struct seen s[16];
	uint32_t n = drive(s, 16);
	static const struct {
		enum pn_file file;
		enum pn_io_op op;
	} want[] = {
		{PN_FILE_DATA, PN_IO_WRITE},    {PN_FILE_DATA, PN_IO_WRITE},
		{PN_FILE_DATA, PN_IO_FSYNC},    {PN_FILE_WAL, PN_IO_WRITE},
		{PN_FILE_WAL, PN_IO_FSYNC},     {PN_FILE_CONTROL, PN_IO_WRITE},
		{PN_FILE_CONTROL, PN_IO_FSYNC},
	};
	ck_assert_uint_eq(n, PN_ARRAY_LEN(want));
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_int_eq(s[i].file, want[i].file);
		ck_assert_int_eq(s[i].op, want[i].op);
	}
	/* the control file names this checkpoint: its record (flushed before), its redo */
	struct pn_control c;
	ck_assert(pn_ckpt_decode_control(s[5].data, &c));
	ck_assert_uint_eq(c.ckpt_seq, 1);
	ck_assert_uint_eq(c.redo, redo);
	ck_assert_uint_ge(c.checkpoint, redo);
	ck_assert_uint_le(c.checkpoint, pn_wal_flushed(&stub.wal));
	ck_assert_uint_eq(c.state, 1);
	/* it has happened: done, the control state, the WAL before redo may go */
	ck_assert_uint_eq(ck.seq_done, 1);
	ck_assert_uint_eq(ck.redo_done, redo);
	ck_assert_uint_eq(ck.control.checkpoint, c.checkpoint);
	ck_assert_uint_eq(pn_wal_keep_from(&stub.wal), redo);
	ck_assert(!pn_buf_frame(&bp, a)->dirty && !pn_buf_frame(&bp, b)->dirty);
	ck_assert_uint_eq(pn_buf_frame(&bp, a)->ckpt_needed, 0);
	ck_assert_uint_ge(stub.woken[0], 1); /* backends waiting for a checkpoint are woken */
	ck_assert_uint_eq(stub.m.checkpoints, 1);
	ck_assert_uint_eq(stub.m.ckpt_request, 1);
	ck_assert_uint_eq(stub.m.ckpt_writes, 2);
	ck_assert_uint_eq(stub.m.rec_count[PN_REC_XLOG_CHECKPOINT_ONLINE], 1);
	ck_assert(!stub.svc.failed);
	close_ckpt();
}
END_TEST

START_TEST(test_request_during_run_waits)
{
	open_ckpt(false);
	dirty_page(2);
	pn_ckpt_request(&ck, PN_CKPT_REQUEST, true);
	pn_ckpt_step(&ck);
	ck_assert_uint_eq(ck.seq_begun, 1);
	pn_ckpt_request(&ck, PN_CKPT_WAL, false); /* while the first runs: kept */
	ck_assert(pn_ckpt_pending(&ck));
	pn_ckpt_step(&ck);
	ck_assert_uint_eq(ck.seq_begun, 1); /* no overlap: not begun while one runs */
	struct seen s[32];
	uint32_t n = drive(s, 32);
	ck_assert_uint_eq(ck.seq_begun, 2);
	ck_assert_uint_eq(ck.seq_done, 2);
	ck_assert_uint_eq(stub.m.checkpoints, 2);
	ck_assert_uint_eq(stub.m.ckpt_wal, 1);
	/* the first: its write, the data fsync, the record's WAL write and fsync, the control
	 * file's write and fsync; the second has nothing dirty, so no write */
	ck_assert_uint_eq(n, 6 + 5);
	ck_assert_int_eq(s[6].file, PN_FILE_DATA);
	ck_assert_int_eq(s[6].op, PN_IO_FSYNC);
	close_ckpt();
}
END_TEST

/* The main data of the run's checkpoint record, from the WAL's buffers (the record fits its
 * page here: its header, then the short data header, then CheckPoint's 88 bytes). */
static const uint8_t *record_main(const struct pn_ckpt_run *run)
{
	pn_lsn at = run->record, page = at - at % PN_XLOG_BLCKSZ;
	const uint8_t *p = pn_wal_ring_page(&stub.wal, page) + (at - page);
	ck_assert_uint_le(at - page + 26 + 88, PN_XLOG_BLCKSZ);
	ck_assert_uint_eq(p[24], 0xFF); /* XLR_BLOCK_ID_DATA_SHORT */
	ck_assert_uint_eq(p[25], 88);
	return p + 26;
}

/* CheckPoint.oldestActiveXid: an online checkpoint's is the oldest xid a backend runs, or the
 * next to be assigned when none runs; an end-of-recovery one's is 0, so their records differ
 * (a torn rewrite of the WAL tail cannot splice one onto the history after the other). */
START_TEST(test_record_oldest_active)
{
	open_ckpt(false);
	struct seen s[16];
	pn_ckpt_request(&ck, PN_CKPT_REQUEST, true);
	drive(s, 16);
	const uint8_t *m = record_main(&ck.runs[0]);
	ck_assert_uint_eq(pn_get32(m + 80), next_xid + 1); /* none runs */
	ck_assert_uint_eq(pn_get64(m + 24), next_xid);
	ck_assert_uint_eq(pn_get32(m + 84), 1); /* the checkpoint's number, in the padding */
	procs[0].xid = 70;
	pn_ckpt_request(&ck, PN_CKPT_REQUEST, true);
	drive(s, 16);
	ck_assert_uint_eq(pn_get32(record_main(&ck.runs[0]) + 80), 70);
	ck_assert_uint_eq(stub.m.rec_count[PN_REC_XLOG_CHECKPOINT_ONLINE], 2);
	recovering = true;
	pn_ckpt_request(&ck, PN_CKPT_REQUEST, true);
	drive(s, 16);
	ck_assert_uint_eq(pn_get32(record_main(&ck.runs[0]) + 80), 0);
	ck_assert_uint_eq(stub.m.rec_count[PN_REC_XLOG_CHECKPOINT_SHUTDOWN], 1);
	procs[0].xid = 0;
	close_ckpt();
}
END_TEST

START_TEST(test_control_codec)
{
	open_ckpt(false);
	struct pn_control c = {.ckpt_seq = 9,
			       .checkpoint = 0x1234500,
			       .redo = 0x1234000,
			       .selector_area = 2,
			       .state = 1},
			  d;
	uint8_t buf[PN_CONTROL_SIZE];
	pn_ckpt_encode_control(&ck, &c, buf);
	ck_assert_uint_eq(pn_get32(buf), 0x54434E50u); /* "PNCT" */
	ck_assert_uint_eq(pn_get64(buf + 40), 42);     /* the system id */
	ck_assert(pn_ckpt_decode_control(buf, &d));
	ck_assert_uint_eq(d.ckpt_seq, 9);
	ck_assert_uint_eq(d.checkpoint, 0x1234500);
	ck_assert_uint_eq(d.redo, 0x1234000);
	ck_assert_uint_eq(d.selector_area, 2);
	ck_assert_uint_eq(d.state, 1);
	buf[25] ^= 1; /* a torn or corrupt control file */
	ck_assert(!pn_ckpt_decode_control(buf, &d));
	pn_ckpt_recovered(&ck, &c); /* recovery read it: the last completed is c */
	ck_assert_uint_eq(ck.seq_begun, 9);
	ck_assert_uint_eq(ck.seq_done, 9);
	ck_assert_uint_eq(ck.redo_done, 0x1234000);
	close_ckpt();
}
END_TEST

START_TEST(test_control_before_its_fsync_aborts)
{
	struct pn_ckpt_run run = {.state = PN_C_FSYNC_DATA};
	pn_ckpt_set_state(&run, PN_C_RECORD);
	pn_ckpt_set_state(&run, PN_C_CONTROL_WRITE); /* the record's flush skipped: R5 */
}
END_TEST

START_TEST(test_run_past_begun_aborts)
{
	open_ckpt(false);
	ck.runs[0].state = PN_C_WRITING;
	ck.runs[0].seq = 3; /* only 0 begun */
	pn_ckpt_check(&ck);
}
END_TEST

static Suite *ckpt_suite(void)
{
	Suite *s = suite_create("ckpt");
	TCase *tc = tcase_create("checkpointer");
	tcase_add_test(tc, test_run_in_r5_order);
	tcase_add_test(tc, test_request_during_run_waits);
	tcase_add_test(tc, test_record_oldest_active);
	tcase_add_test(tc, test_control_codec);
	tcase_add_test_raise_signal(tc, test_control_before_its_fsync_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_run_past_begun_aborts, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(ckpt_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

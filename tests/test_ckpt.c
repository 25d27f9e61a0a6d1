/*
 * test_ckpt.c: the checkpointer (src/engine/ckpt.c) through its own interface: struct
 * pn_ckpt over real services, WAL, store and buffer pool, a stub protocol row (the in-place
 * defaults) and a stub world that holds each submitted I/O until the test completes it; no
 * engine. A run's I/O comes in R5's order (the flagged frames, the data fsync, the
 * checkpoint record's WAL flush, the control file, its fsync) and only then has the
 * checkpoint happened; a request made during a run waits for it; the control codec and its
 * CRC; an illegal edge and a run numbered past the last begun abort.
 */
#include "ckpt.h"

#include "metrics.h"
#include "protocol.h"
#include "redo.h"
#include "store.h"
#include "wal.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define PS 8192u
#define HEAP 6u
#define PAGES (HEAP + 2u)
#define FRAMES 4u
#define PROCS 2u /* a backend, the checkpointer */
#define CKPT_PROC 1u
#define MAXIO 32

static struct pn_io *ios[MAXIO];
static uint32_t nios;
static uint32_t woken[PROCS];

static struct pn_scenario sc;
static struct pn_services svc;
static struct pn_metrics m;
static struct pn_wal wal;
static struct pn_store st;
static struct pn_proto_ctx pctx;
static struct pn_bufpool bp;
static struct pn_ckpt ck;
static struct pn_proc procs[PROCS];
static bool stopping, recovering;
static uint32_t next_xid;

static void stub_submit(void *ctx, struct pn_io *io)
{
	(void)ctx;
	ck_assert_uint_lt(nios, MAXIO);
	ios[nios++] = io;
}
static uint64_t stub_now(void *ctx)
{
	(void)ctx;
	return 1000;
}
static void stub_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	(void)ctx;
	(void)delay_ns;
	(void)token;
	ck_assert_uint_lt(proc, PROCS);
	woken[proc]++;
}

static unsigned decide_none(const struct pn_proto_ctx *c, enum pn_block_use use, bool before)
{
	(void)c;
	(void)use;
	(void)before;
	return 0;
}
static const struct pn_protocol_ops row = {.name = "stub", .fpw_byte = true, .decide = decide_none};

static void open_ckpt(bool overlap)
{
	nios = 0;
	memset(woken, 0, sizeof(woken));
	memset(&m, 0, sizeof(m));
	stopping = recovering = false;
	next_xid = 77;
	pn_scenario_defaults(&sc);
	sc.storage.page_size = PS;
	sc.checkpoint.interval_ns = 0;
	sc.checkpoint.every_transactions = 0;
	sc.checkpoint.overlap = overlap;
	struct pn_env env = {.submit = stub_submit, .now_ns = stub_now, .schedule = stub_schedule};
	ck_assert(pn_svc_init(&svc, &env, 4 * FRAMES + 16, 2 * PS, PROCS));
	ck_assert(pn_wal_init(&wal, &sc, &svc, &m, 42, PROCS));
	pn_wal_set_redo(&wal, pn_wal_insert_start(&wal));
	ck_assert(pn_store_init(&st, &sc, &svc, HEAP, PAGES, 1, 0));
	pctx = (struct pn_proto_ctx){.sc = &sc, .svc = &svc, .wal = &wal, .store = &st};
	procs[0] = (struct pn_proc){.kind = PN_PROC_BACKEND, .id = 0};
	procs[1] = (struct pn_proc){.kind = PN_PROC_CHECKPOINTER, .id = CKPT_PROC};
	struct pn_buf_handles bh = {.sc = &sc,
				    .svc = &svc,
				    .wal = &wal,
				    .store = &st,
				    .m = &m,
				    .proto = &row,
				    .pctx = &pctx,
				    .ckpt_seq_begun = &ck.seq_begun,
				    .ckpt_seq_done = &ck.seq_done,
				    .recovering = &recovering,
				    .page_size = PS,
				    .pages = PAGES,
				    .nprocs = PROCS};
	ck_assert(pn_buf_init(&bp, &bh, FRAMES));
	struct pn_ckpt_handles kh = {.sc = &sc,
				     .svc = &svc,
				     .wal = &wal,
				     .buf = &bp,
				     .store = &st,
				     .m = &m,
				     .proto = &row,
				     .pctx = &pctx,
				     .procs = procs,
				     .nprocs = PROCS,
				     .proc_ckpt = CKPT_PROC,
				     .stopping = &stopping,
				     .recovering = &recovering,
				     .next_xid = &next_xid,
				     .sysid = 42,
				     .heap_pages = HEAP,
				     .generations = 1};
	pn_ckpt_init(&ck, &kh);
}

static void close_ckpt(void)
{
	pn_buf_free(&bp);
	pn_store_free(&st);
	pn_wal_free(&wal);
	pn_svc_free(&svc);
	pn_scenario_free(&sc);
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
		if (!nios)
			continue;
		struct pn_io *io = ios[0];
		memmove(ios, ios + 1, --nios * sizeof(ios[0]));
		ck_assert_uint_lt(n, cap);
		out[n].file = io->file;
		out[n].op = io->op;
		if (io->file == PN_FILE_CONTROL && io->op == PN_IO_WRITE)
			memcpy(out[n].data, io->buf, PN_CONTROL_SIZE);
		n++;
		pn_io_dispatched(io);
		pn_io_complete(&svc, io);
	}
	ck_assert(!pn_ckpt_active(&ck));
	return n;
}

START_TEST(test_run_in_r5_order)
{
	open_ckpt(false);
	uint32_t a = dirty_page(1), b = dirty_page(4);
	pn_lsn redo = pn_wal_insert_start(&wal);
	pn_ckpt_request(&ck, PN_CKPT_REQUEST, true);
	ck_assert(pn_ckpt_pending(&ck));
	ck_assert_uint_eq(woken[CKPT_PROC], 1);
	pn_ckpt_step(&ck); /* begins: redo pointer, every dirty frame flagged */
	ck_assert(!pn_ckpt_pending(&ck));
	ck_assert(pn_ckpt_active(&ck));
	ck_assert_uint_eq(ck.seq_begun, 1);
	ck_assert_uint_eq(ck.runs[0].redo, redo);
	ck_assert_uint_eq(pn_wal_redo(&wal), redo);
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
	ck_assert_uint_le(c.checkpoint, pn_wal_flushed(&wal));
	ck_assert_uint_eq(c.state, 1);
	/* it has happened: done, the control state, the WAL before redo may go */
	ck_assert_uint_eq(ck.seq_done, 1);
	ck_assert_uint_eq(ck.redo_done, redo);
	ck_assert_uint_eq(ck.control.checkpoint, c.checkpoint);
	ck_assert_uint_eq(pn_wal_keep_from(&wal), redo);
	ck_assert(!pn_buf_frame(&bp, a)->dirty && !pn_buf_frame(&bp, b)->dirty);
	ck_assert_uint_eq(pn_buf_frame(&bp, a)->ckpt_needed, 0);
	ck_assert_uint_ge(woken[0], 1); /* backends waiting for a checkpoint are woken */
	ck_assert_uint_eq(m.checkpoints, 1);
	ck_assert_uint_eq(m.ckpt_request, 1);
	ck_assert_uint_eq(m.ckpt_writes, 2);
	ck_assert_uint_eq(m.rec_count[PN_REC_XLOG_CHECKPOINT_ONLINE], 1);
	ck_assert(!svc.failed);
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
	ck_assert_uint_eq(m.checkpoints, 2);
	ck_assert_uint_eq(m.ckpt_wal, 1);
	/* the first: its write, the data fsync, the record's WAL write and fsync, the control
	 * file's write and fsync; the second has nothing dirty, so no write */
	ck_assert_uint_eq(n, 6 + 5);
	ck_assert_int_eq(s[6].file, PN_FILE_DATA);
	ck_assert_int_eq(s[6].op, PN_IO_FSYNC);
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

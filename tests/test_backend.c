/*
 * test_backend.c: the client backends (src/engine/backend.c). Most tests build an engine
 * with pn_engine_init (its assembly binds the backends' handles) over a stub world that holds each I/O until the test completes it and a
 * PRNG that always draws page 3; no process is started: the test steps backend 0 itself.
 * An update's PIN / DECIDE / INSERT: the image decided at DECIDE for a page not changed
 * since the redo pointer, none after; XLogInsertRecord's recheck when the redo pointer moves
 * between DECIDE and INSERT, and none under shift_split; a commit acknowledged only once its
 * record is flushed (R2); and pn_backend_check's abort on a DECIDE-d page left unpinned.
 * The backends over their handles alone (pn_backends_bind, no engine: the modules below, a
 * row that protects nothing and a client that runs one update and a commit): the update's
 * page dirty at its record's LSN, the commit acknowledged only once its WAL is flushed, the
 * client's DONE ends the backend.
 * The backends' own log (struct pn_backends) needs no engine: its view, its drain in order
 * (latency 0 past nlat), the latency figures, and the assertion that latencies never
 * outnumber the commits.
 */
#include "engine.h"
#include "load.h"
#include "protocols.h"
#include "workload.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define MAXIO 64

static struct pn_io *ios[MAXIO];
static uint32_t nios;
static struct pn_scenario sc;
static struct pn_engine *e;

static void stub_submit(void *ctx, struct pn_io *io)
{
	(void)ctx;
	ck_assert_uint_lt(nios, MAXIO);
	ios[nios++] = io;
}
static uint64_t stub_now(void *ctx)
{
	(void)ctx;
	return 0;
}
static void stub_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	(void)ctx;
	(void)proc;
	(void)delay_ns;
	(void)token;
}
static uint64_t stub_random(void *ctx)
{
	(void)ctx;
	return 3; /* page 3, and the same tuple, every time */
}
static void format_nowhere(void *ctx, enum pn_file f, uint64_t off, const uint8_t *buf,
			   uint32_t len)
{
	(void)ctx;
	(void)f;
	(void)off;
	(void)buf;
	(void)len;
}

static void engine_up(uint32_t mutations)
{
	nios = 0;
	static const char yaml[] =
		"name: b\nseed: 1\nstorage: {pages: 8, buffers: 4}\n"
		"checkpoint: {interval: 0s, every_transactions: 0, max_wal_size: 0}\n"
		"workload: {kind: random, clients: 1, transactions: 3, pages_per_transaction: 1}\n";
	char err[PN_ERROR_LEN];
	ck_assert_msg(pn_scenario_load_string("b.yaml", yaml, strlen(yaml), &sc, err, sizeof(err)),
		      "%s", err);
	sc.protocol.mutations = mutations;
	struct pn_env env = {.submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule,
			     .random = stub_random};
	e = pn_engine_new();
	ck_assert_msg(pn_engine_init(e, &sc, &env, true, pn_workload_of(&sc), pn_protocol_of(&sc)),
		      "%s", pn_engine_error(e));
	pn_engine_format(e, format_nowhere, NULL);
}

static void engine_down(void)
{
	pn_engine_delete(e);
	pn_scenario_free(&sc);
}

/* Completes the oldest I/O: a read gets the page as formatted. */
static void complete_one(void)
{
	struct pn_io *io = ios[0];
	memmove(ios, ios + 1, --nios * sizeof(ios[0]));
	pn_io_dispatched(io);
	if (io->op == PN_IO_READ) {
		ck_assert_int_eq(io->file, PN_FILE_DATA);
		pn_engine_initial_page(e, io->page, io->buf);
	}
	pn_io_complete(&e->svc, io);
}

/* Steps backend 0 (completing I/O in between) until it is in state `to`. */
static struct pn_proc *until(enum pn_bstate to)
{
	struct pn_proc *p = &e->procs[0];
	for (int guard = 0; guard < 64; guard++) {
		if (nios)
			complete_one();
		else
			pn_backend_step(&e->bk, p);
		pn_backend_check(&e->bk);
		if (p->state == to)
			return p;
	}
	ck_abort_msg("backend 0 never reached state %d (it is in %d)", to, p->state);
	return p;
}

START_TEST(test_update_image_once_then_commit)
{
	engine_up(0);
	struct pn_proc *p = until(PN_B_INSERT);
	ck_assert_int_eq(p->op.op, PN_OP_UPDATE);
	ck_assert_uint_eq(p->op.page, 3);
	ck_assert_uint_ne(p->xid, 0);
	ck_assert(p->decided_image); /* page LSN 0 <= the redo pointer: its first change */
	struct pn_frame *f = pn_buf_frame(&e->buf, p->frame);
	ck_assert(f->locked);
	ck_assert_uint_eq(f->pins, 1);
	pn_backend_step(&e->bk, p); /* INSERT */
	ck_assert_int_eq(p->state, PN_B_NEXT);
	ck_assert_uint_eq(e->m.fpi_count, 1);
	ck_assert(f->dirty && !f->locked);
	ck_assert_uint_eq(f->pins, 0);
	ck_assert_uint_eq(pn_page_lsn(pn_frame_page(&e->buf, p->frame)), f->last_lsn);
	ck_assert_uint_eq(f->last_lsn, pn_wal_insert_lsn(&e->wal));
	/* commit: inserted, then waits for its flush (R2) */
	p = until(PN_B_COMMIT_WAIT);
	pn_lsn commit_end = p->wait_lsn;
	ck_assert_uint_gt(commit_end, pn_wal_flushed(&e->wal));
	struct pn_acks_view acks;
	pn_engine_acks(e, &acks);
	ck_assert_uint_eq(acks.n, 0);
	p = until(PN_B_NEXT);
	pn_engine_acks(e, &acks);
	ck_assert_uint_eq(acks.n, 1);
	ck_assert_uint_eq(acks.lsns[0], commit_end);
	ck_assert_uint_ge(pn_wal_flushed(&e->wal), commit_end);
	/* the next transaction's update of page 3: changed since the redo pointer, no image */
	p = until(PN_B_INSERT);
	ck_assert_uint_eq(p->op.page, 3);
	ck_assert(!p->decided_image);
	pn_backend_step(&e->bk, p);
	ck_assert_uint_eq(e->m.fpi_count, 1);
	ck_assert(!e->svc.failed);
	engine_down();
}
END_TEST

/* A checkpoint's begin (the redo pointer moves past the page) between DECIDE and INSERT. */
static uint64_t images_after_redo_moves(uint32_t mutations)
{
	engine_up(mutations);
	struct pn_proc *p = until(PN_B_INSERT);
	pn_backend_step(&e->bk, p); /* the first change, with its image */
	p = until(PN_B_COMMIT_WAIT);
	p = until(PN_B_INSERT); /* the second: decided without an image */
	ck_assert(!p->decided_image);
	pn_wal_set_redo(&e->wal, pn_wal_insert_start(&e->wal));
	pn_backend_step(&e->bk, p);
	ck_assert_int_eq(p->state, PN_B_NEXT);
	uint64_t n = e->m.fpi_count;
	engine_down();
	return n;
}

START_TEST(test_recheck_when_redo_moves)
{
	ck_assert_uint_eq(images_after_redo_moves(0), 2); /* decided again: an image */
	ck_assert_uint_eq(images_after_redo_moves(PN_MUT_SHIFT_SPLIT), 1); /* the stale one */
}
END_TEST

START_TEST(test_check_aborts_on_unpinned_decided_page)
{
	engine_up(0);
	struct pn_proc *p = until(PN_B_INSERT);
	pn_buf_unpin(&e->buf, p->frame); /* the page it decided on is no longer held */
	pn_backend_check(&e->bk);
}
END_TEST

/* Logs n commits as acknowledge() does: xid 10+i at LSN 100*(i+1), latencies from lat[]. */
static void log_commits(struct pn_backends *bk, uint32_t n, const uint64_t *lat, uint32_t nlat)
{
	for (uint32_t i = 0; i < n; i++) {
		bk->acked_xids[bk->nacked] = 10 + i;
		bk->acked_lsns[bk->nacked++] = 100u * (i + 1);
		if (i < nlat)
			bk->latencies[bk->nlat++] = lat[i];
	}
}

struct ack {
	uint32_t xid;
	pn_lsn lsn;
	uint64_t lat;
};
struct drained {
	uint32_t n;
	struct ack got[8];
};
static void drain_into(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns)
{
	struct drained *d = arg;
	ck_assert_uint_lt(d->n, 8);
	d->got[d->n++] = (struct ack){.xid = xid, .lsn = lsn, .lat = latency_ns};
}

/* ---- the backends over their handles, no engine ---------------------------------------- */

#define LONE_PS 8192u
static struct {
	struct pn_scenario sc;
	struct pn_services svc;
	struct pn_metrics m;
	struct pn_wal wal;
	struct pn_store st;
	struct pn_bufpool buf;
	struct pn_ckpt ck;
	struct pn_proto_ctx pctx;
	struct pn_proc procs[2]; /* backend 0, the checkpointer */
	struct pn_client_handles cl;
	struct pn_backends bk;
	uint32_t next_xid, nexts;
	bool stopping, recovering;
} L;

static unsigned lone_decide(const struct pn_proto_ctx *c, enum pn_block_use use, bool before)
{
	(void)c;
	(void)use;
	(void)before;
	return 0; /* no image, no shift */
}
static const struct pn_protocol_ops lone_row = {.name = "lone", .write = {.decide = lone_decide}};

/* One update of page 2, its commit, then done. */
static enum pn_client_next lone_next(void *state, const struct pn_client *c, struct pn_step *out)
{
	(void)state;
	if (L.nexts >= 2)
		return PN_CLIENT_DONE;
	*out = (struct pn_step){.op = L.nexts++ == 0 ? PN_OP_UPDATE : PN_OP_COMMIT,
				.page = 2,
				.client = c->id};
	return PN_CLIENT_OP;
}
static const struct pn_client_ops lone_ops = {.name = "lone", .next = lone_next};

static void lone_up(void)
{
	memset(&L, 0, sizeof(L));
	nios = 0;
	pn_scenario_defaults(&L.sc);
	L.sc.storage.page_size = LONE_PS;
	L.sc.checkpoint.interval_ns = 0;
	L.sc.checkpoint.every_transactions = 0;
	struct pn_env env = {.submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule,
			     .random = stub_random};
	ck_assert(pn_svc_init(&L.svc, &env, 32, 2 * LONE_PS, 2));
	ck_assert(pn_wal_init(&L.wal, &L.sc, &L.svc, &L.m, 42, 2));
	pn_wal_set_redo(&L.wal, pn_wal_insert_start(&L.wal));
	ck_assert(pn_store_init(&L.st, &L.sc, &L.svc, 6, 8, 1, 0));
	L.pctx = (struct pn_proto_ctx){.sc = &L.sc, .svc = &L.svc, .wal = &L.wal, .store = &L.st};
	struct pn_buf_handles bh = {.sc = &L.sc,
				    .svc = &L.svc,
				    .wal = &L.wal,
				    .store = &L.st,
				    .m = &L.m,
				    .proto = &lone_row,
				    .pctx = &L.pctx,
				    .ckpt_seq_begun = &L.ck.seq_begun,
				    .ckpt_seq_done = &L.ck.seq_done,
				    .recovering = &L.recovering,
				    .page_size = LONE_PS,
				    .pages = 8,
				    .nprocs = 2};
	ck_assert(pn_buf_init(&L.buf, &bh, 4));
	L.procs[0] = (struct pn_proc){.id = 0, .kind = PN_PROC_BACKEND, .state = PN_B_NEXT};
	L.procs[1] = (struct pn_proc){.id = 1, .kind = PN_PROC_CHECKPOINTER, .state = PN_B_DONE};
	struct pn_ckpt_handles kh = {.sc = &L.sc,
				     .svc = &L.svc,
				     .wal = &L.wal,
				     .buf = &L.buf,
				     .store = &L.st,
				     .m = &L.m,
				     .proto = &lone_row,
				     .pctx = &L.pctx,
				     .procs = L.procs,
				     .nprocs = 2,
				     .proc_ckpt = 1,
				     .stopping = &L.stopping,
				     .recovering = &L.recovering,
				     .next_xid = &L.next_xid,
				     .sysid = 42,
				     .heap_pages = 6,
				     .generations = 1};
	pn_ckpt_init(&L.ck, &kh);
	L.cl = (struct pn_client_handles){.sc = &L.sc,
					  .svc = &L.svc,
					  .wal = &L.wal,
					  .buf = &L.buf,
					  .store = &L.st,
					  .ckpt = &L.ck,
					  .m = &L.m,
					  .proto = &lone_row,
					  .pctx = &L.pctx,
					  .ops = &lone_ops,
					  .page_size = LONE_PS,
					  .pages = 8,
					  .nbackends = 1};
	ck_assert(pn_backends_init(&L.bk, 4));
	struct pn_backend_handles h = {.cl = &L.cl,
				       .procs = L.procs,
				       .next_xid = &L.next_xid,
				       .heap_pages = 6,
				       .slru_pages = 2};
	pn_backends_bind(&L.bk, &h);
}

static void lone_down(void)
{
	pn_backends_free(&L.bk);
	pn_buf_free(&L.buf);
	pn_store_free(&L.st);
	pn_wal_free(&L.wal);
	pn_svc_free(&L.svc);
	pn_scenario_free(&L.sc);
}

/* Steps the backend, or completes the oldest I/O (a read gets an empty heap page). */
static void lone_step(void)
{
	if (nios == 0) {
		pn_backend_step(&L.bk, &L.procs[0]);
		pn_backend_check(&L.bk);
		return;
	}
	struct pn_io *io = ios[0];
	memmove(ios, ios + 1, --nios * sizeof(ios[0]));
	pn_io_dispatched(io);
	if (io->op == PN_IO_READ)
		pn_page_init(io->buf, LONE_PS, io->page, false);
	pn_io_complete(&L.svc, io);
}

START_TEST(test_backends_over_handles)
{
	lone_up();
	struct pn_proc *p = &L.procs[0];
	for (int guard = 0; guard < 64 && L.nexts < 2; guard++)
		lone_step(); /* the update runs until the commit is the next op */
	ck_assert_uint_eq(L.nexts, 2);
	uint32_t fi = pn_buf_frame_of(&L.buf, 2);
	ck_assert_uint_ne(fi, PN_NO_FRAME);
	const struct pn_frame *f = pn_buf_frame(&L.buf, fi);
	ck_assert(f->dirty && !f->dirty_hint_only && !f->locked);
	ck_assert_uint_eq(f->pins, 0);
	ck_assert_uint_eq(f->last_lsn, pn_page_lsn(pn_frame_page(&L.buf, fi)));
	ck_assert_uint_gt(f->last_lsn, 0);
	ck_assert_uint_lt(f->last_lsn,
			  pn_wal_insert_lsn(&L.wal)); /* the commit's record is after */
	ck_assert_uint_eq(L.next_xid, 1);             /* the update took xid 1 through the handle */
	/* the commit: not acknowledged while its WAL is not flushed (R2) */
	for (int guard = 0; guard < 64 && nios == 0 && L.bk.nacked == 0; guard++)
		lone_step();
	ck_assert_uint_eq(L.bk.nacked, 0);
	ck_assert_uint_gt(nios, 0); /* the WAL write of the commit */
	for (int guard = 0; guard < 64 && p->state != PN_B_DONE; guard++)
		lone_step();
	ck_assert_int_eq(p->state, PN_B_DONE);
	ck_assert_uint_eq(L.bk.nacked, 1);
	ck_assert_uint_eq(L.bk.acked_xids[0], 1);
	ck_assert_uint_le(L.bk.acked_lsns[0], pn_wal_flushed(&L.wal));
	ck_assert_uint_eq(L.m.commits, 1);
	lone_down();
}
END_TEST

START_TEST(test_ack_log_view_drain_latency)
{
	struct pn_backends bk = {0};
	ck_assert(pn_backends_init(&bk, 4));
	ck_assert_uint_ge(bk.acked_cap, 4);
	uint64_t p50, p99, max;
	ck_assert(!pn_backends_latency(&bk, &p50, &p99, &max)); /* none yet */
	static const uint64_t lat[] = {30, 10, 20};
	log_commits(&bk, 4, lat, 3); /* the fourth commit has no latency */
	struct pn_acks_view v;
	pn_backends_acks(&bk, &v);
	ck_assert_uint_eq(v.n, 4);
	ck_assert_uint_eq(v.nlat, 3);
	ck_assert_uint_eq(v.xids[3], 13);
	ck_assert_uint_eq(v.lsns[0], 100);
	struct drained d = {0};
	pn_backends_drain(&bk, drain_into, &d);
	ck_assert_uint_eq(d.n, 4);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(d.got[i].xid, 10 + i);
		ck_assert_uint_eq(d.got[i].lsn, 100u * (i + 1));
		ck_assert_uint_eq(d.got[i].lat, i < 3 ? lat[i] : 0);
	}
	pn_backends_acks(&bk, &v);
	ck_assert_uint_eq(v.n, 0);
	ck_assert_uint_eq(v.nlat, 0);
	static const uint64_t lat2[] = {50, 7, 9, 1000};
	log_commits(&bk, 4, lat2, 4);
	ck_assert(pn_backends_latency(&bk, &p50, &p99, &max));
	ck_assert_uint_eq(p50, 50);   /* sorted 7 9 50 1000: [4 / 2] */
	ck_assert_uint_eq(p99, 1000); /* [4 * 99 / 100] = [3] */
	ck_assert_uint_eq(max, 1000);
	pn_backends_free(&bk);
	ck_assert_ptr_null(bk.acked_xids);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* p50, p99 and max by selection equal a sort's, over sizes 1 to 3000 and value patterns with
 * few and many duplicates, sorted, reversed and all equal. */
START_TEST(test_latency_selection_as_sorted)
{
	enum { N = 3000 };
	struct pn_backends bk = {0};
	ck_assert(pn_backends_init(&bk, N));
	static uint64_t ref[N];
	uint64_t x = 12345;
	for (uint32_t n = 1; n <= N; n = n < 40 ? n + 1 : n * 3 / 2) {
		for (uint32_t pattern = 0; pattern < 5; pattern++) {
			for (uint32_t i = 0; i < n; i++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				uint64_t v = pattern == 0   ? x >> 20
					     : pattern == 1 ? (x >> 40) % 7
					     : pattern == 2 ? i
					     : pattern == 3 ? n - i
							    : 42;
				bk.latencies[i] = ref[i] = v;
			}
			bk.nlat = bk.nacked = n;
			qsort(ref, n, sizeof(ref[0]), cmp_u64);
			uint64_t p50, p99, max;
			ck_assert(pn_backends_latency(&bk, &p50, &p99, &max));
			ck_assert_msg(p50 == ref[n / 2] && p99 == ref[n * 99 / 100] &&
					      max == ref[n - 1],
				      "n %u pattern %u: %llu %llu %llu", n, pattern,
				      (unsigned long long)p50, (unsigned long long)p99,
				      (unsigned long long)max);
		}
	}
	pn_backends_free(&bk);
}
END_TEST

START_TEST(test_ack_log_aborts_on_latencies_past_commits)
{
	struct pn_backends bk = {0};
	ck_assert(pn_backends_init(&bk, 2));
	bk.latencies[bk.nlat++] = 5; /* a latency with no commit */
	struct pn_acks_view v;
	pn_backends_acks(&bk, &v);
}
END_TEST

static Suite *backend_suite(void)
{
	Suite *s = suite_create("backend");
	TCase *tc = tcase_create("steps");
	tcase_add_test(tc, test_update_image_once_then_commit);
	tcase_add_test(tc, test_recheck_when_redo_moves);
	tcase_add_test_raise_signal(tc, test_check_aborts_on_unpinned_decided_page, SIGABRT);
	tcase_add_test(tc, test_backends_over_handles);
	tcase_add_test(tc, test_ack_log_view_drain_latency);
	tcase_add_test(tc, test_latency_selection_as_sorted);
	tcase_add_test_raise_signal(tc, test_ack_log_aborts_on_latencies_past_commits, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(backend_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_backend.c: the client backends (src/engine/backend.c). The backend still takes the
 * engine (it builds the workload's struct pn_client from it), so the suite builds one with
 * pn_engine_init over a stub world that holds each I/O until the test completes it and a
 * PRNG that always draws page 3; no process is started: the test steps backend 0 itself.
 * An update's PIN / DECIDE / INSERT: the image decided at DECIDE for a page not changed
 * since the redo pointer, none after; XLogInsertRecord's recheck when the redo pointer moves
 * between DECIDE and INSERT, and none under shift_split; a commit acknowledged only once its
 * record is flushed (R2); and pn_backend_check's abort on a DECIDE-d page left unpinned.
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
	tcase_add_test(tc, test_ack_log_view_drain_latency);
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

/*
 * test_client.c: Check suite for the workload client interface (src/engine/client.h) and
 * the workloads' rows (src/workload/; label unit). Each test takes one row of the table
 * (pn_workload_of), an engine built by pn_engine_init with a stub env (a PRNG that returns a
 * fixed sequence, a clock that does not move, a scheduler that logs every wake-up), and
 * drives the row through its hooks as a stub client would (pn_client_of of a backend that
 * runs nothing): the ops it hands out, the wake-ups it asks for, the pages it pins and
 * formats are asserted against what the workload's rules say they must be.
 *
 *   random   pages_per_transaction distinct pages drawn from the engine's PRNG (duplicate
 *            draws skipped), then a commit, until workload.transactions have begun;
 *   script   steps in order, one at a time, each on its own client; step_done wakes the
 *            next step's client, the last one wakes every client;
 *   vacuum   the relation sized from workload.rows (storage.pages replaced), one
 *            VACUUM_PAGE per heap page in order, the visibility-map page pinned with each,
 *            the formatted bytes of a heap page and of the map page;
 *   table    every workload.kind has its row, the engine holds the row it was given;
 *   setup    a row's init runs over a struct pn_client_setup alone, no engine: vacuum sizes
 *            the relation there (the size pn_engine_init then has), slru refuses more
 *            pages a transaction than heap pages with a message naming the file.
 */
#include "engine.h"
#include "load.h"
#include "protocols.h"
#include "workload.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WAKES 64

/* The stub env: random() returns draws[] in turn (then 0), schedule() logs. */
struct stub {
	const uint64_t *draws;
	uint32_t ndraws, next_draw;
	uint32_t woken[MAX_WAKES];
	uint32_t nwoken;
};

static uint64_t stub_random(void *ctx)
{
	struct stub *s = ctx;
	return s->next_draw < s->ndraws ? s->draws[s->next_draw++] : 0;
}

static uint64_t stub_now(void *ctx)
{
	(void)ctx;
	return 0;
}

static void stub_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	struct stub *s = ctx;
	(void)delay_ns;
	(void)token;
	ck_assert_uint_lt(s->nwoken, MAX_WAKES);
	s->woken[s->nwoken++] = proc;
}

/* No I/O is issued by the tests below (no process runs): one is a failure. */
static void stub_submit(void *ctx, struct pn_io *io)
{
	(void)ctx;
	(void)io;
	ck_abort_msg("the client tests issue no I/O");
}

static void load(const char *yaml, struct pn_scenario *sc)
{
	char err[PN_ERROR_LEN];
	ck_assert_msg(pn_scenario_load_string("client.yaml", yaml, strlen(yaml), sc, err,
					      sizeof(err)),
		      "%s", err);
}

/* An engine with sc's row and the stub env. */
static void engine_up(struct pn_engine *e, const struct pn_scenario *sc, struct stub *s)
{
	struct pn_env env = {.ctx = s,
			     .submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule,
			     .random = stub_random};
	ck_assert_msg(pn_engine_init(e, sc, &env, true, pn_workload_of(sc), pn_protocol_of(sc)),
		      "%s", e->svc.error);
	ck_assert_ptr_eq(e->client, pn_workload_of(sc));
	ck_assert_ptr_nonnull(e->client_state);
}

/* next() of backend `client` through the row, as backend.c's NEXT step asks it. */
static enum pn_client_next next_of(struct pn_engine *e, uint32_t client, struct pn_step *out)
{
	struct pn_client c = pn_client_of(&e->cl, &e->procs[client]);
	ck_assert_uint_eq(c.id, client);
	return e->client->next(e->client_state, &c, out);
}

/* ---- random ---------------------------------------------------------------------------- */

START_TEST(test_random_pages_and_commits)
{
	struct pn_scenario sc;
	load("name: r\nseed: 1\nstorage: {pages: 16, buffers: 8}\n"
	     "workload: {kind: random, clients: 2, transactions: 3, pages_per_transaction: 3}\n",
	     &sc);
	/* 16 heap pages: draws 5, 21 (= 5 again, skipped), 9, 36 (4) | 7, 8, 9 | 1, 2, 3 */
	static const uint64_t draws[] = {5, 21, 9, 36, 7, 8, 9, 1, 2, 3};
	struct stub s = {.draws = draws, .ndraws = PN_ARRAY_LEN(draws)};
	struct pn_engine e;
	engine_up(&e, &sc, &s);
	static const uint32_t want[3][3] = {{5, 9, 4}, {7, 8, 9}, {1, 2, 3}};
	static const uint32_t client_of_txn[3] = {0, 1, 0};
	struct pn_step op;
	for (uint32_t t = 0; t < 3; t++) {
		uint32_t c = client_of_txn[t];
		for (uint32_t i = 0; i < 3; i++) {
			ck_assert_int_eq(next_of(&e, c, &op), PN_CLIENT_OP);
			ck_assert_int_eq(op.op, PN_OP_UPDATE);
			ck_assert_uint_eq(op.client, c);
			ck_assert_uint_eq(op.page, want[t][i]);
		}
		if (t == 1) { /* client 1's transaction ends after client 0's next begins */
			ck_assert_int_eq(next_of(&e, 0, &op), PN_CLIENT_OP);
			ck_assert_uint_eq(op.page, want[2][0]);
		}
		ck_assert_int_eq(next_of(&e, c, &op), PN_CLIENT_OP);
		ck_assert_int_eq(op.op, PN_OP_COMMIT);
		if (t == 1) { /* client 0's transaction, begun above, goes on */
			for (uint32_t i = 1; i < 3; i++) {
				ck_assert_int_eq(next_of(&e, 0, &op), PN_CLIENT_OP);
				ck_assert_uint_eq(op.page, want[2][i]);
			}
			ck_assert_int_eq(next_of(&e, 0, &op), PN_CLIENT_OP);
			ck_assert_int_eq(op.op, PN_OP_COMMIT);
			break;
		}
	}
	ck_assert_uint_eq(s.next_draw, PN_ARRAY_LEN(draws)); /* every draw taken, in order */
	ck_assert_int_eq(next_of(&e, 0, &op), PN_CLIENT_DONE);
	ck_assert_int_eq(next_of(&e, 1, &op), PN_CLIENT_DONE);
	ck_assert_uint_eq(s.nwoken, 0); /* random never waits, so it never wakes anyone */
	pn_engine_free(&e);
	pn_scenario_free(&sc);
}
END_TEST

/* ---- script ---------------------------------------------------------------------------- */

START_TEST(test_script_steps_in_order)
{
	struct pn_scenario sc;
	load("name: s\nseed: 1\nstorage: {pages: 8, buffers: 8}\n"
	     "workload:\n  kind: script\n  clients: 3\n  script:\n"
	     "    - {op: update, page: 6, client: 1}\n"
	     "    - {op: commit, client: 1}\n"
	     "    - {op: update, page: 2, client: 2}\n"
	     "    - {op: commit, client: 2}\n",
	     &sc);
	struct stub s = {0};
	struct pn_engine e;
	engine_up(&e, &sc, &s);
	const struct pn_client_ops *ops = e.client;
	ck_assert_ptr_nonnull(ops->step_done);
	struct pn_step op;
	ck_assert_int_eq(next_of(&e, 0, &op), PN_CLIENT_WAIT); /* step 0 is client 1's */
	ck_assert_int_eq(next_of(&e, 2, &op), PN_CLIENT_WAIT);
	ck_assert_int_eq(next_of(&e, 1, &op), PN_CLIENT_OP);
	ck_assert_int_eq(op.op, PN_OP_UPDATE);
	ck_assert_uint_eq(op.page, 6);
	ck_assert_int_eq(next_of(&e, 1, &op), PN_CLIENT_WAIT); /* one step at a time */
	struct pn_client c1 = pn_client_of(&e.cl, &e.procs[1]);
	ops->step_done(e.client_state, &c1);
	ck_assert_uint_eq(s.nwoken, 1);
	ck_assert_uint_eq(s.woken[0], 1); /* the next step is client 1's again */
	ck_assert_int_eq(next_of(&e, 1, &op), PN_CLIENT_OP);
	ck_assert_int_eq(op.op, PN_OP_COMMIT);
	ops->step_done(e.client_state, &c1);
	ck_assert_uint_eq(s.nwoken, 2);
	ck_assert_uint_eq(s.woken[1], 2);
	ck_assert_int_eq(next_of(&e, 1, &op), PN_CLIENT_WAIT);
	ck_assert_int_eq(next_of(&e, 2, &op), PN_CLIENT_OP);
	ck_assert_uint_eq(op.page, 2);
	struct pn_client c2 = pn_client_of(&e.cl, &e.procs[2]);
	ops->step_done(e.client_state, &c2);
	ck_assert_int_eq(next_of(&e, 2, &op), PN_CLIENT_OP);
	ck_assert_int_eq(op.op, PN_OP_COMMIT);
	ck_assert_int_eq(next_of(&e, 0, &op), PN_CLIENT_WAIT); /* the last step still runs */
	s.nwoken = 0;
	for (uint32_t i = 0; i < 3; i++)
		e.svc.wakes[i].scheduled = false; /* their wake-ups have fired (pn_engine_fire) */
	ops->step_done(e.client_state, &c2);
	ck_assert_uint_eq(s.nwoken, 3); /* the end wakes every client */
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(s.woken[i], i);
		ck_assert_int_eq(next_of(&e, i, &op), PN_CLIENT_DONE);
	}
	pn_engine_free(&e);
	pn_scenario_free(&sc);
}
END_TEST

/* ---- vacuum ---------------------------------------------------------------------------- */

START_TEST(test_vacuum_pass_and_pages)
{
	struct pn_scenario sc;
	/* 1000 rows, 226 a page (8 KiB): 5 heap pages, then 1 visibility-map page */
	load("name: v\nseed: 1\nstorage: {pages: 64, buffers: 8}\n"
	     "workload: {kind: vacuum, rows: 1000, clients: 2}\n",
	     &sc);
	struct stub s = {0};
	struct pn_engine e;
	engine_up(&e, &sc, &s);
	ck_assert_uint_eq(e.heap_pages, 6); /* storage.pages replaced by the relation's size */
	const struct pn_client_ops *ops = e.client;
	ck_assert_ptr_nonnull(ops->change);
	ck_assert_ptr_nonnull(ops->extra_pages);
	struct pn_step op;
	for (uint32_t p = 0; p < 5; p++) {
		uint32_t client = p % 2;
		ck_assert_int_eq(next_of(&e, client, &op), PN_CLIENT_OP);
		ck_assert_int_eq(op.op, PN_OP_VACUUM_PAGE);
		ck_assert_uint_eq(op.page, p);
		e.procs[client].op = op;
		struct pn_client c = pn_client_of(&e.cl, &e.procs[client]);
		uint32_t extra[2] = {UINT32_MAX, UINT32_MAX};
		ck_assert_uint_eq(ops->extra_pages(e.client_state, &c, extra), 1);
		ck_assert_uint_eq(extra[0], 5); /* the map page covers every heap page */
	}
	ck_assert_int_eq(next_of(&e, 0, &op), PN_CLIENT_DONE);
	ck_assert_int_eq(next_of(&e, 1, &op), PN_CLIENT_DONE);
	uint8_t *page = malloc(e.page_size);
	ck_assert_ptr_nonnull(page);
	ops->page_init(e.client_state, 0, page);
	ck_assert_uint_eq(pn_page_nitems(page), 226);
	ck_assert_uint_eq(pn_get32(page + e.page_size - 32 + 24), 1); /* row 1's value */
	ops->page_init(e.client_state, 4, page);
	ck_assert_uint_eq(pn_page_nitems(page), 1000 - 4 * 226);
	ops->page_init(e.client_state, 5, page); /* PageInit'ed map page, no bits */
	ck_assert_uint_eq(pn_get16(page + 12), PN_PAGE_HEADER);
	ck_assert_uint_eq(pn_get16(page + 14), e.page_size);
	ck_assert_uint_eq(page[PN_PAGE_HEADER], 0);
	free(page);
	pn_engine_free(&e);
	pn_scenario_free(&sc);
}
END_TEST

/* ---- the table ------------------------------------------------------------------------- */

START_TEST(test_every_kind_has_a_row)
{
	struct pn_scenario sc;
	pn_scenario_defaults(&sc);
	for (int k = 0; k < PN_WL_COUNT; k++) {
		sc.workload.kind = (enum pn_workload_kind)k;
		const struct pn_client_ops *ops = pn_workload_of(&sc);
		ck_assert_ptr_nonnull(ops);
		ck_assert_ptr_nonnull(ops->init);
		ck_assert_ptr_nonnull(ops->next);
		ck_assert_ptr_nonnull(ops->free);
		ck_assert_str_eq(ops->name, pn_workload_kind_name(sc.workload.kind));
		/* a row that changes ops itself names the pages it pins with them */
		ck_assert(!ops->change == !ops->extra_pages);
	}
	sc.workload.kind = PN_WL_PGBENCH;
	ck_assert_str_eq(pn_workload_txn_name(&sc, 0), "TPC-B");
	ck_assert_ptr_null(pn_workload_txn_name(&sc, 1));
	sc.workload.kind = PN_WL_RANDOM;
	ck_assert_ptr_null(pn_workload_txn_name(&sc, 0));
	pn_scenario_free(&sc);
}
END_TEST

/* ---- init over the setup struct ---------------------------------------------------------- */

static struct pn_client_setup setup_of(const struct pn_scenario *sc, char *error, size_t n)
{
	error[0] = '\0';
	return (struct pn_client_setup){.sc = sc,
					.error = error,
					.error_size = n,
					.page_size = sc->storage.page_size,
					.slru_pages = 2,
					.heap_pages = sc->storage.pages,
					.pages = sc->storage.pages + 2};
}

START_TEST(test_init_over_setup)
{
	struct pn_scenario sc;
	load("name: v\nseed: 1\nstorage: {pages: 64, buffers: 8}\n"
	     "workload: {kind: vacuum, rows: 1000, clients: 2}\n",
	     &sc);
	char err[PN_ERROR_LEN];
	struct pn_client_setup su = setup_of(&sc, err, sizeof(err));
	const struct pn_client_ops *row = pn_workload_of(&sc);
	void *state = NULL;
	ck_assert(row->init(&su, &state));
	ck_assert_ptr_nonnull(state);
	ck_assert_uint_ne(su.heap_pages, 64); /* sized from workload.rows, not storage.pages */
	ck_assert_uint_eq(su.pages, su.heap_pages + 2);
	ck_assert_str_eq(err, "");
	row->free(state);
	struct stub s = {0};
	struct pn_engine e;
	engine_up(&e, &sc, &s);
	ck_assert_uint_eq(pn_engine_geometry(&e).heap_pages, su.heap_pages);
	ck_assert_uint_eq(pn_engine_geometry(&e).pages, su.pages);
	pn_engine_free(&e);
	pn_scenario_free(&sc);

	load("name: l\nseed: 1\nstorage: {pages: 4, buffers: 8}\n"
	     "workload: {kind: slru, transactions: 2, pages_per_transaction: 3}\n",
	     &sc);
	su = setup_of(&sc, err, sizeof(err));
	su.heap_pages = 2; /* fewer heap pages than a transaction changes */
	su.pages = 4;
	state = NULL;
	ck_assert(!pn_workload_of(&sc)->init(&su, &state));
	ck_assert_ptr_nonnull(strstr(err, "client.yaml"));
	if (state && pn_workload_of(&sc)->free)
		pn_workload_of(&sc)->free(state);
	pn_scenario_free(&sc);
}
END_TEST

static Suite *client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *rows = tcase_create("rows");
	tcase_add_test(rows, test_random_pages_and_commits);
	tcase_add_test(rows, test_script_steps_in_order);
	tcase_add_test(rows, test_vacuum_pass_and_pages);
	tcase_add_test(rows, test_every_kind_has_a_row);
	tcase_add_test(rows, test_init_over_setup);
	suite_add_tcase(s, rows);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(client_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

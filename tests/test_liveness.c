/*
 * test_liveness.c: Check suite (label unit): every run goes on to its end.
 *
 *   protocols   every mode (and each Umbra policy) over every .yaml file of
 *               scenarios/protocols/ (PN_SOURCE_DIR, set by CTest);
 *   seeds       the same over a small random workload with checkpoints every few
 *               transactions, many seeds (a checkpoint then often ends the run);
 *   growth      each generated workload (pgbench, tpcc, vacuum, btree_dedup, slru) under fpw,
 *               umbra and pushdown past the room its layout was sized for (src/workload/layout.h,
 *               Growth).
 *
 * protocols and seeds: under pushdown, 9 of the 12 scenarios/protocols/ files stalled once
 * every commit was done, because the page server slept while WAL flushed after it (the
 * checkpointer's record) was still to be ingested (src/protocol/pushdown.c, pn_ps_rearm); the class is
 * a process that sleeps on a condition another one changes. Each run must finish (status 0)
 * with every transaction committed: no stall, no violation unless the scenario expects a
 * counterexample, no refusal except l3/l4's of what they do not model (umbra_map.c's unsupported hook).
 *
 * growth: bench and crashtest size a workload for the acknowledged-commit log and then run
 * without end; pgbench aborted within 2 s on `t->append_at < t->append_pages` once
 * pgbench_history's append area was full. Each test sizes the workload for a few
 * transactions, raises workload.transactions after init (as disk/disk.c does), runs it with
 * every field relationship checked after every event, and asserts that every transaction
 * ran, that the run went past its old limit (an append area reused, an index leaf recycled:
 * pgbench, tpcc, btree_dedup; vacuum and slru have no such limit), and that recovery from
 * the final device acknowledges every commit and gives every page the checker's oracle
 * computes (model/checker.h C1, C2). btree_dedup runs 100 times its room: its leftmost leaf,
 * never recycled, fills with one key's duplicates; that aborted on `first > 1` in
 * wl_btree.c's split (no key boundary to split at) until such a leaf split among its items
 * (src/workload/wl_btree.c, single value), and the test asserts it did.
 */
#include "checker.h"
#include "load.h"
#include "oracle.h"
#include "protocols.h"
#include "layout.h"
#include "workload.h"
#include "world.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEEDS 24

struct mode {
	enum pn_protocol_id row;
	const char *label;
};

/* Every mode, and Umbra under its prototype, l3 and l4. */
static const struct mode modes[] = {
	{PN_PROTOCOL_FPW, "fpw"},
	{PN_PROTOCOL_NOFPW, "nofpw"},
	{PN_PROTOCOL_UMBRA, "umbra-prototype"},
	{PN_PROTOCOL_UMBRA_L3, "umbra-l3"},
	{PN_PROTOCOL_UMBRA_L4, "umbra-l4"},
	{PN_PROTOCOL_DOUBLEWRITE, "doublewrite"},
	{PN_PROTOCOL_PUSHDOWN, "pushdown"},
};

/* Runs sc under mode m; fails the test with what stopped it unless it ran to its end, or
 * (a scenario that expects a counterexample) stopped on a protocol violation. */
static void run_to_end(const struct pn_scenario *base, const struct mode *m, const char *what)
{
	struct pn_scenario sc = *base;
	struct pn_sim_result *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	pn_protocol_set(&sc, m->row);
	int status = pn_sim_run(&sc, r);
	bool violation = status == 1 && r->viol.kind != PN_VIOL_NONE;
	/* l3/l4 place slots themselves and refuse, before time starts, what they cannot do
	 * (a striped layout, some script steps); nothing else may refuse a scenario */
	bool refused = status == 2 && r->events == 0 && pn_protocol_decls[m->row]->interleaved_only;
	if (refused) {
		free(r);
		return;
	}
	ck_assert_msg(status == 0 || (violation && sc.expect.violation),
		      "%s under %s (seed %llu): status %d after %llu events: %s%s%s", what,
		      m->label, (unsigned long long)sc.seed, status, (unsigned long long)r->events,
		      violation ? "" : r->error, violation ? "violation: " : "",
		      violation ? r->viol.detail : "");
	if (status == 0 && sc.workload.kind != PN_WL_SCRIPT) /* every transaction committed */
		ck_assert_uint_eq(r->m.commits, sc.workload.transactions);
	free(r);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(test_every_mode_every_protocol_scenario)
{
	const char *src = getenv("PN_SOURCE_DIR");
	ck_assert_msg(src != NULL, "PN_SOURCE_DIR is not set (run through ctest)");
	char dir[1024], path[2048], err[PN_ERROR_LEN];
	snprintf(dir, sizeof(dir), "%s/scenarios/protocols", src);
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	char *names[256];
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d)) != NULL && n < PN_ARRAY_LEN(names);) {
		size_t len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	ck_assert_uint_ge(n, 12); /* the suite's own scenarios are all there */
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct pn_scenario sc;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ck_assert_msg(pn_scenario_load(path, &sc, err, sizeof(err)), "%s", err);
		for (size_t k = 0; k < PN_ARRAY_LEN(modes); k++)
			run_to_end(&sc, &modes[k], names[i]);
		pn_scenario_free(&sc);
		free(names[i]);
	}
}
END_TEST

static const char random_yaml[] =
	"name: liveness-random\n"
	"seed: 1\n"
	"storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}\n"
	"protocol: {mode: fpw, checksums: true}\n"
	"checkpoint: {interval: 0s, every_transactions: 3, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 3, transactions: 10, pages_per_transaction: 2}\n";

START_TEST(test_every_mode_random_seeds)
{
	char err[PN_ERROR_LEN];
	struct pn_scenario sc;
	ck_assert_msg(pn_scenario_load_string("liveness.yaml", random_yaml, strlen(random_yaml),
					      &sc, err, sizeof(err)),
		      "%s", err);
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		sc.seed = seed;
		for (size_t k = 0; k < PN_ARRAY_LEN(modes); k++)
			run_to_end(&sc, &modes[k], "liveness-random");
	}
	pn_scenario_free(&sc);
}
END_TEST

struct kind {
	const char *name;
	const char *workload; /* the workload: line, sized for `sized` transactions */
	const char *storage;
	uint64_t sized, run;
};

static const struct kind kinds[] = {
	{"pgbench", "{kind: pgbench, scale: 1, clients: 4, transactions: %llu}",
	 "{pages: 2044, buffers: 64, wal_segment_size: 1MiB}", 30, 1500},
	{"tpcc", "{kind: tpcc, warehouses: 1, clients: 4, transactions: %llu}",
	 "{pages: 36000, buffers: 256, wal_segment_size: 1MiB}", 20, 1200},
	{"vacuum", "{kind: vacuum, rows: %llu}", "{buffers: 8, wal_segment_size: 64KiB}", 1500, 0},
	{"btree_dedup", "{kind: btree_dedup, inserts: 400, distinct_keys: 100, transactions: %llu}",
	 "{page_size: 2KiB, buffers: 8, wal_segment_size: 64KiB}", 10, 1000},
	{"slru", "{kind: slru, transactions: %llu, pages_per_transaction: 1}",
	 "{pages: 8, buffers: 4, wal_segment_size: 64KiB}", 12, 600},
};

static const enum pn_mode growth_modes[] = {PN_MODE_FPW, PN_MODE_UMBRA, PN_MODE_PUSHDOWN};

static void load(const struct kind *k, enum pn_mode mode, struct pn_scenario *sc)
{
	char yaml[1024], wl[256], err[PN_ERROR_LEN];
	snprintf(wl, sizeof(wl), k->workload, (unsigned long long)k->sized);
	snprintf(yaml, sizeof(yaml),
		 "name: growth-%s\nseed: 5\nstorage: %s\nprotocol: {mode: %s, checksums: true}\n"
		 "checkpoint: {interval: 0s, every_transactions: 25, max_wal_size: 0}\n"
		 "workload: %s\n",
		 k->name, k->storage, pn_mode_name(mode), wl);
	ck_assert_msg(pn_scenario_load_string("growth.yaml", yaml, strlen(yaml), sc, err,
					      sizeof(err)),
		      "%s\n%s", err, yaml);
}

static void on_wal(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	ck_assert(pn_oracle_add(arg, rec, len, start, end));
}

/* The layout relations' growth past their room: append areas reused, leaves recycled. */
static void growth_of(struct pn_engine *e, uint64_t *cycles, uint64_t *recycled)
{
	const struct wl_layout *L = wl_layout_of(e);
	*cycles = *recycled = 0;
	for (uint32_t r = 0; r < L->nrels; r++) {
		*cycles += L->rels[r].append_cycles;
		*recycled += L->rels[r].recycled;
	}
}

/* The acknowledged commits, taken out of the engine's log after every event as the
 * real-disk loop does (disk.h DK4): its log is sized for the transactions at init. */
struct acks {
	uint32_t *xids;
	pn_lsn *lsns;
	uint64_t n, cap;
};

static void take_ack(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns)
{
	struct acks *a = arg;
	(void)latency_ns;
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 256;
		a->xids = realloc(a->xids, a->cap * sizeof(uint32_t));
		a->lsns = realloc(a->lsns, a->cap * sizeof(pn_lsn));
		ck_assert(a->xids && a->lsns);
	}
	a->xids[a->n] = xid;
	a->lsns[a->n++] = lsn;
}

static int run_draining(struct pn_world *w, struct acks *a)
{
	for (;;) {
		int rc = pn_world_step(w);
		pn_engine_drain_acks(w->e, take_ack, a);
		if (rc != PN_STEP_EVENT)
			return rc;
	}
}

/* Recovery from the device as the run left it, judged as the checker judges (C1, C2). */
static void judge_recovery(struct pn_scenario *sc, struct pn_world *w, struct pn_oracle *o,
			   const struct acks *a)
{
	struct pn_world *r = calloc(1, sizeof(*r));
	struct pn_world_options opt = {.check_each_event = true};
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(pn_world_init(r, sc, &opt, &w->dev), "%s", r->error);
	ck_assert_int_eq(pn_world_recover(r), 0);
	uint32_t page_size = pn_engine_geometry(r->e).page_size;
	pn_lsn end = pn_engine_recovery_end(r->e);
	uint8_t *expected = malloc(page_size), *found = malloc(page_size);
	char detail[2048];
	uint32_t page;
	ck_assert(expected && found);
	ck_assert_msg(pn_check_acked(a->xids, a->lsns, a->n, end, detail, sizeof(detail)), "%s",
		      detail);
	ck_assert_msg(pn_check_recovered_pages(r->e, o, end, expected, found, detail,
					       sizeof(detail), &page),
		      "%s", detail);
	free(expected);
	free(found);
	pn_world_free(r);
	free(r);
}

static void run_past_room(const struct kind *k, enum pn_mode mode)
{
	struct pn_scenario sc;
	load(k, mode, &sc);
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options opt = {.check_each_event = true};
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(pn_world_init(w, &sc, &opt, NULL), "%s", w->error);
	struct pn_oracle *o = pn_check_oracle_new(w->e);
	w->on_wal = on_wal;
	w->on_wal_arg = o;
	if (k->run)
		sc.workload.transactions = k->run; /* as disk.c does for a run without end */
	pn_engine_start(w->e);
	struct acks a = {0};
	int rc = run_draining(w, &a);
	ck_assert_msg(rc == PN_STEP_FINISHED, "%s under %s: step %d: %s %s", k->name,
		      pn_mode_name(mode), rc, pn_engine_violation_of(w->e)->detail, w->error);
	const struct pn_metrics *m = pn_engine_metrics(w->e);
	if (k->run) /* every transaction ran (read-only ones acknowledge no commit record) */
		ck_assert_uint_eq(m->transactions, k->run);
	ck_assert_uint_eq(a.n, m->commits);
	if (sc.workload.kind == PN_WL_PGBENCH || sc.workload.kind == PN_WL_TPCC) {
		uint64_t cycles, recycled;
		growth_of(w->e, &cycles, &recycled);
		ck_assert_msg(cycles > 0, "%s never reused an append area", k->name);
		/* tpcc's new_order_pkey runs out of split pages in this run */
		ck_assert(recycled > 0 || sc.workload.kind == PN_WL_PGBENCH);
	}
	if (sc.workload.kind == PN_WL_BTREE_DEDUP) { /* 40000 inserts, an index sized for 400 */
		ck_assert_uint_gt(pn_workload_btree_recycled(w->e), 0);
		/* the leftmost leaf is never recycled: one key's duplicates fill it */
		ck_assert_uint_gt(pn_workload_btree_single_value_splits(w->e), 0);
	}
	sc.workload.transactions = k->sized; /* the recovering engine's layout, the same pages */
	judge_recovery(&sc, w, o, &a);
	free(a.xids);
	free(a.lsns);
	pn_oracle_free(o);
	pn_world_free(w);
	free(w);
	pn_scenario_free(&sc);
}

START_TEST(test_growth_each_kind)
{
	const struct kind *k = &kinds[_i / PN_ARRAY_LEN(growth_modes)];
	run_past_room(k, growth_modes[_i % PN_ARRAY_LEN(growth_modes)]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("liveness");
	TCase *tc = tcase_create("liveness");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_every_mode_every_protocol_scenario);
	tcase_add_test(tc, test_every_mode_random_seeds);
	suite_add_tcase(s, tc);
	TCase *tg = tcase_create("growth");
	tcase_set_timeout(tg, 600);
	tcase_add_loop_test(tg, test_growth_each_kind, 0,
			    (int)(PN_ARRAY_LEN(kinds) * PN_ARRAY_LEN(growth_modes)));
	suite_add_tcase(s, tg);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

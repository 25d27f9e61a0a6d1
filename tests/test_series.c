/*
 * test_series.c: Check suite for a run's time series (sim/series.c; label unit): the bounds
 * SE1-SE3 hold on a fake engine driven for many events and checkpoints, and on real runs the
 * series agrees with the run's own metrics (its last sample is the totals, a checkpoint mark
 * per completed checkpoint, Umbra's sampled pages hold slots of the run).
 */
#include "cli.h"
#include "engine.h"
#include "load.h"
#include "series.h"
#include "world.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* SE1: halving keeps the multiples of the stride, bounded, at any length. */
START_TEST(test_samples_bounded)
{
	struct pn_engine *e = calloc(1, sizeof(*e));
	struct pn_series *s = malloc(sizeof(*s));
	ck_assert(e != NULL && s != NULL);
	e->generations = 1;
	pn_series_init(s, e);
	uint64_t last = 0;
	for (uint64_t ev = 1; ev <= 1000000; ev++) {
		e->m.wal_bytes += 3;
		pn_series_observe(s, e, ev * 10, ev);
		ck_assert_uint_le(s->n, PN_SERIES_CAP);
		if (ev > PN_SERIES_CAP)
			ck_assert_uint_ge(s->n, PN_SERIES_CAP / 2);
		last = ev;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		ck_assert_uint_eq(s->v[i][PN_SC_EVENTS], (i + 1) * s->every_events);
		ck_assert_uint_eq(s->v[i][PN_SC_WAL_BYTES], 3 * s->v[i][PN_SC_EVENTS]);
		ck_assert_uint_eq(s->v[i][PN_SC_TIME_NS], 10 * s->v[i][PN_SC_EVENTS]);
	}
	ck_assert_uint_eq(s->every_events, 4096); /* 1e6 events / 256 samples, a power of two */
	pn_series_finish(s, e, last * 10 + 5, last + 1);
	ck_assert_uint_eq(s->v[s->n - 1][PN_SC_EVENTS], last + 1);
	ck_assert_uint_eq(s->v[s->n - 1][PN_SC_WAL_BYTES], 3 * last);
	free(s);
	free(e);
}
END_TEST

/* SE1 with event counts that skip (pn_series_observe compares with next_at between samples):
 * the samples are exactly the ones the rule picks, each count tested against the stride as
 * it is at that call, as a model that divides at every call computes them. */
START_TEST(test_samples_skipping_counts)
{
	struct pn_engine *e = calloc(1, sizeof(*e));
	struct pn_series *s = malloc(sizeof(*s));
	uint64_t *want = malloc(4096 * sizeof(uint64_t));
	ck_assert(e != NULL && s != NULL && want != NULL);
	e->generations = 1;
	pn_series_init(s, e);
	uint64_t every = 1, ev = 0;
	uint32_t n = 0;
	for (uint64_t k = 0; k < 200000; k++) {
		ev += 1 + (k * 7919 % 13 == 0 ? k % 37 : 0); /* mostly +1, now and then a jump */
		pn_series_observe(s, e, ev, ev);
		uint64_t stride = n == PN_SERIES_CAP ? 2 * every : every;
		if (ev % stride != 0)
			continue;
		if (n == PN_SERIES_CAP) { /* the model's halving: keep indexes 1, 3, 5, ... */
			for (uint32_t i = 0; i < PN_SERIES_CAP / 2; i++)
				want[i] = want[2 * i + 1];
			n = PN_SERIES_CAP / 2;
			every *= 2;
		}
		want[n++] = ev;
	}
	ck_assert_uint_eq(s->n, n);
	ck_assert_uint_eq(s->every_events, every);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_uint_eq(s->v[i][PN_SC_EVENTS], want[i]);
	free(want);
	free(s);
	free(e);
}
END_TEST

/* pn_series_due: a series observed only when it says so (the world's way) ends equal to one
 * observed after every event, over samples and checkpoints that begin and end. */
START_TEST(test_due_skips_only_no_ops)
{
	struct pn_engine *e = calloc(1, sizeof(*e));
	struct pn_series *all = malloc(sizeof(*all)), *due = malloc(sizeof(*due));
	ck_assert(e != NULL && all != NULL && due != NULL);
	e->generations = 1;
	pn_series_init(all, e);
	pn_series_init(due, e);
	for (uint64_t ev = 1; ev <= 300000; ev++) {
		e->m.wal_bytes += ev % 5;
		if (ev % 1013 == 0)
			e->ckpt.seq_begun++;
		if (ev % 1013 == 400 && e->ckpt.seq_done < e->ckpt.seq_begun)
			e->ckpt.seq_done++;
		pn_series_observe(all, e, ev * 3, ev);
		if (pn_series_due(due, ev, e->ckpt.seq_begun, e->ckpt.seq_done))
			pn_series_observe(due, e, ev * 3, ev);
	}
	ck_assert_uint_gt(all->nckpt, 0);
	due->events_seen = all->events_seen; /* the one field a skipped call would have set */
	ck_assert(memcmp(all, due, sizeof(*all)) == 0);
	free(all);
	free(due);
	free(e);
}
END_TEST

/* SE2: checkpoints 1, 1 + k, 1 + 2k, ... with k doubling, at most PN_SERIES_CKPT_CAP. */
START_TEST(test_checkpoints_bounded)
{
	struct pn_engine *e = calloc(1, sizeof(*e));
	struct pn_series *s = malloc(sizeof(*s));
	ck_assert(e != NULL && s != NULL);
	e->generations = 1;
	pn_series_init(s, e);
	for (uint64_t k = 1; k <= 1000; k++) {
		e->ckpt.seq_begun++;
		pn_series_observe(s, e, k * 100, 2 * k - 1);
		e->ckpt.seq_done++;
		pn_series_observe(s, e, k * 100 + 40, 2 * k);
	}
	ck_assert_uint_eq(s->ckpt_every, 8); /* 1000 over 128: 8 */
	ck_assert_uint_le(s->nckpt, PN_SERIES_CKPT_CAP);
	ck_assert_uint_ge(s->nckpt, PN_SERIES_CKPT_CAP / 2);
	for (uint32_t i = 0; i < s->nckpt; i++) {
		const struct pn_series_ckpt *c = &s->ckpt[i];
		ck_assert_uint_eq(c->number, 1 + i * s->ckpt_every);
		ck_assert_uint_eq(c->begin_ns, c->number * 100);
		ck_assert_uint_eq(c->end_ns, c->number * 100 + 40);
	}
	free(s);
	free(e);
}
END_TEST

static void run_yaml(const char *yaml, struct pn_sim_result *r)
{
	struct pn_scenario sc;
	char err[PN_ERROR_LEN];
	ck_assert_msg(pn_scenario_load_string("series.yaml", yaml, strlen(yaml), &sc, err,
					      sizeof(err)),
		      "%s", err);
	ck_assert_int_eq(pn_sim_run(&sc, r), 0);
	pn_scenario_free(&sc);
}

/* On a real run: the last sample is the totals; counters never fall; a mark per checkpoint;
 * Umbra's pages are heap pages with slots below the generations; the commit latencies. */
START_TEST(test_real_run)
{
	static const char yaml[] =
		"name: series\nseed: 3\nstorage: {pages: 64, buffers: 16}\n"
		"protocol: {mode: umbra, generations: 3}\n"
		"checkpoint: {interval: 0s, every_transactions: 40, max_wal_size: 0}\n"
		"workload: {kind: random, clients: 3, transactions: 600, pages_per_transaction: 2}\n";
	struct pn_sim_result *r = malloc(sizeof(*r));
	ck_assert(r != NULL);
	run_yaml(yaml, r);
	const struct pn_series *s = &r->series;
	const uint64_t *end = s->v[s->n - 1];
	ck_assert_uint_ge(s->n, PN_SERIES_CAP / 2);
	ck_assert_uint_eq(end[PN_SC_EVENTS], r->events);
	ck_assert_uint_eq(end[PN_SC_TIME_NS], r->m.elapsed_ns);
	ck_assert_uint_eq(end[PN_SC_WAL_BYTES], r->m.wal_bytes);
	ck_assert_uint_eq(end[PN_SC_COMMITS], r->m.commits);
	ck_assert_uint_eq(end[PN_SC_FSYNCS], r->m.fsyncs);
	ck_assert_uint_eq(end[PN_SC_SHIFTS], r->m.shifts);
	for (uint32_t i = 1; i < s->n; i++)
		for (int c = 0; c < PN_SC_COUNT; c++)
			ck_assert_uint_ge(s->v[i][c], s->v[i - 1][c]);
	ck_assert_uint_ge(r->m.checkpoints, 10);
	ck_assert_uint_eq(s->ckpt_every, 1);
	/* a checkpoint begun but not finished at the end is counted, not marked */
	ck_assert(s->nckpt == r->m.checkpoints || s->nckpt + 1 == r->m.checkpoints);
	ck_assert_uint_eq(s->npages, PN_SERIES_PAGES);
	for (uint32_t i = 0; i < s->npages; i++)
		ck_assert_uint_lt(s->pages[i], r->pages);
	const struct pn_series_ckpt *last = &s->ckpt[s->nckpt - 1];
	for (uint32_t i = 0; i < s->npages; i++) {
		ck_assert_uint_lt(last->active[i], 3);
		ck_assert_uint_lt(last->baseline[i], 3);
	}
	ck_assert_uint_le(last->shifts, r->m.shifts);
	/* SE4: every commit timed once; each interval's average latency above 0 and at most
	 * the run's max (a latency added twice, or left out, breaks one of them) */
	ck_assert_uint_eq(end[PN_SC_COMMITS_TIMED], r->m.commits);
	uint32_t timed = 0;
	for (uint32_t i = 1; i < s->n; i++) {
		uint64_t dc = s->v[i][PN_SC_COMMITS_TIMED] - s->v[i - 1][PN_SC_COMMITS_TIMED];
		uint64_t dl = s->v[i][PN_SC_COMMIT_LATENCY_NS] -
			      s->v[i - 1][PN_SC_COMMIT_LATENCY_NS];
		ck_assert_uint_ge(dl, dc);
		ck_assert_uint_le(dl, dc * r->m.commit_latency_ns_max);
		timed += dc > 0;
	}
	ck_assert_uint_gt(timed, 10);
	ck_assert_uint_ge(end[PN_SC_COMMIT_LATENCY_NS] / end[PN_SC_COMMITS_TIMED],
			  r->m.commit_latency_ns_p50 / 4);
	free(r);
}
END_TEST

/* Outside umbra no page is sampled; the series is the same in both runs of one seed. */
START_TEST(test_fpw_deterministic)
{
	static const char yaml[] = "name: series\nseed: 5\nstorage: {pages: 32, buffers: 12}\n"
				   "checkpoint: {every_transactions: 30}\n"
				   "workload: {kind: random, clients: 2, transactions: 200}\n";
	struct pn_sim_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	ck_assert(a != NULL && b != NULL);
	run_yaml(yaml, a);
	run_yaml(yaml, b);
	ck_assert_uint_eq(a->series.npages, 0);
	ck_assert_uint_gt(a->series.v[a->series.n - 1][PN_SC_FPI_COUNT], 0);
	ck_assert(memcmp(&a->series, &b->series, sizeof(a->series)) == 0);
	free(a);
	free(b);
}
END_TEST

static Suite *series_suite(void)
{
	Suite *s = suite_create("series");
	TCase *tc = tcase_create("series");
	tcase_add_test(tc, test_samples_bounded);
	tcase_add_test(tc, test_samples_skipping_counts);
	tcase_add_test(tc, test_due_skips_only_no_ops);
	tcase_add_test(tc, test_checkpoints_bounded);
	tcase_add_test(tc, test_real_run);
	tcase_add_test(tc, test_fpw_deterministic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(series_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_oracle_replay.c: the checker's oracle (model/oracle.c) against a third, naive reading
 * of the same records: the record list replayed in full for every question, over random
 * worlds (property), and the oracle's speed on a long heap-only history (performance).
 * Label: unit. Shared fixture: oracle_fixture.h.
 */
#include "oracle_fixture.h"

#include <time.h>

/* ---- property: the oracle equals a naive full replay --------------------------------------- */

enum ev_kind { EV_HOT = 0, EV_FREEZE, EV_DEDUP, EV_CLOG, EV_IMAGE, EV_COMMIT, EV_KINDS };

/* What one generated record means, in the test's own words. */
struct ev {
	uint8_t kind;
	uint8_t nblocks;
	uint32_t pages[2];
	uint64_t end;
	uint32_t xid;
	uint16_t item, im2, im; /* HOT_UPDATE; FREEZE: n items below */
	uint32_t val;
	uint16_t nfreeze, fitems[6], fmasks[6];
	uint8_t salt;
	uint8_t *image; /* full page as generated; the hole is zeroed here */
	uint16_t hole_off, hole_len;
};

struct world {
	uint32_t heap, slru, npages;
	bool headers;
	uint32_t seed;
	uint8_t *init;
	uint8_t *tip; /* the naive state after every event so far */
	struct ev *evs;
	uint32_t nevs;
	bool heap_only;    /* heap records only, few images (the benchmark) */
	uint32_t noracles; /* 1, or 3 to compare checkpoint budgets */
	/* os[0]: the default budget; os[1]: 3 pages, thinned all the time; os[2]: none */
	struct pn_oracle *os[3];
};

static void naive_apply(const struct world *w, uint32_t pg, uint8_t *p, const struct ev *e)
{
	switch (e->kind) {
	case EV_HOT: {
		uint8_t *t = p + tuple_at(p, e->item);
		pn_put32(t, e->xid);
		pn_put32(t + 4, 0);
		pn_put16(t + 18, e->im2);
		pn_put16(t + 20, e->im);
		pn_put32(t + 24, e->val);
		pn_put32(p + 20, e->xid);
		break;
	}
	case EV_FREEZE: /* rec_freeze's xl_heap_freeze_tuple: xmax 0, t_infomask2 1, the mask */
		for (uint32_t k = 0; k < e->nfreeze; k++) {
			uint8_t *t = p + tuple_at(p, e->fitems[k]);
			pn_put32(t + 4, 0);
			pn_put16(t + 18, 1);
			pn_put16(t + 20, e->fmasks[k]);
		}
		p[10] |= 0x04;
		break;
	case EV_DEDUP:
		for (uint32_t i = 0; i < NITEMS; i++)
			for (uint32_t j = 24; j < TUP; j++) {
				uint8_t *b = p + tuple_at(p, i) + j;
				*b = (uint8_t)(*b * 5 + e->salt + i);
			}
		break;
	case EV_CLOG: {
		uint32_t base = w->headers ? 24 : 0, bit = e->xid % ((PAGE - base) * 4) * 2;
		if (w->headers && pn_get16(p + 12) == 0) {
			pn_put16(p + 12, PAGE);
			pn_put16(p + 14, PAGE);
			pn_put16(p + 16, PAGE);
			pn_put16(p + 18, PAGE | 4);
		}
		p[base + bit / 8] |= (uint8_t)(1 << (bit % 8));
		break;
	}
	case EV_IMAGE:
		memcpy(p, e->image, PAGE);
		memset(p + e->hole_off, 0, e->hole_len);
		break;
	default: return;
	}
	if (pg < w->heap || w->headers)
		put_lsn(p, e->end);
}

static void naive_page(const struct world *w, uint32_t pg, uint64_t upto, uint8_t *out)
{
	memcpy(out, w->init + (size_t)pg * PAGE, PAGE);
	for (uint32_t i = 0; i < w->nevs && w->evs[i].end <= upto; i++)
		for (uint32_t b = 0; b < w->evs[i].nblocks; b++)
			if (w->evs[i].pages[b] == pg)
				naive_apply(w, pg, out, &w->evs[i]);
}

static void gen_heap_change(struct world *w, struct ev *e, uint32_t *s)
{
	e->pages[0] = below(s, w->heap);
	if (e->kind == EV_HOT) {
		e->item = (uint16_t)below(s, NITEMS);
		e->im2 = (uint16_t)below(s, 4);
		e->im = (uint16_t)(next_rand(s) & 0x0FFF);
		e->val = next_rand(s);
		if (below(s, 4) == 0) /* two blocks: the same change on two pages */
			e->pages[e->nblocks++] = below(s, w->heap);
	} else if (e->kind == EV_FREEZE) {
		e->nfreeze = (uint16_t)(1 + below(s, 6));
		for (uint32_t k = 0; k < e->nfreeze; k++) {
			e->fitems[k] = (uint16_t)below(s, NITEMS);
			e->fmasks[k] = (uint16_t)(below(s, 2) ? 0x0300 : next_rand(s) & 0x0FFF);
		}
	} else {
		e->salt = (uint8_t)next_rand(s);
	}
}

/* An image of the page as it stands, a few bytes changed, with a hole that keeps it whole. */
static void gen_image(struct world *w, struct ev *e, uint32_t *s)
{
	uint32_t pg = below(s, w->npages);
	bool heap = pg < w->heap;
	e->pages[0] = pg;
	e->image = malloc(PAGE);
	memcpy(e->image, w->tip + (size_t)pg * PAGE, PAGE);
	uint32_t lo = heap ? UPPER + 24 : (w->headers ? 24 : 0);
	for (uint32_t k = 0; k < 8; k++)
		e->image[lo + below(s, PAGE - lo)] ^= (uint8_t)next_rand(s);
	if (heap && below(s, 2)) {
		e->hole_off = LOWER;
		e->hole_len = UPPER - LOWER;
	} else if (!heap && below(s, 2)) {
		e->hole_off = (uint16_t)(lo + 1 + below(s, 1000));
		e->hole_len = (uint16_t)(1 + below(s, 3000));
	}
	memset(e->image + e->hole_off, 0x77, e->hole_len); /* never reaches a page */
}

static void gen_event(struct world *w, struct ev *e, uint32_t *s)
{
	static const uint8_t mix[] = {EV_HOT,  EV_HOT,  EV_HOT,  EV_HOT,   EV_FREEZE, EV_DEDUP,
				      EV_CLOG, EV_CLOG, EV_CLOG, EV_IMAGE, EV_COMMIT};
	static const uint8_t heap_mix[20] = {EV_FREEZE, EV_FREEZE, EV_DEDUP, EV_DEDUP, EV_IMAGE};
	memset(e, 0, sizeof(*e));
	e->kind = w->heap_only ? heap_mix[below(s, 20)] : mix[below(s, sizeof(mix))];
	e->xid = 3 + below(s, 3 * PAGE * 4);
	e->nblocks = 1;
	if (e->kind == EV_HOT || e->kind == EV_FREEZE || e->kind == EV_DEDUP)
		gen_heap_change(w, e, s);
	else if (e->kind == EV_CLOG)
		e->pages[0] = w->heap + below(s, w->slru);
	else if (e->kind == EV_IMAGE)
		gen_image(w, e, s);
	else
		e->nblocks = 0;
}

static void encode_event(const struct world *w, const struct ev *e, struct trec *t)
{
	uint16_t offnums[6];
	switch (e->kind) {
	case EV_HOT:
		rec_hot(t, e->xid, e->pages[0], (uint16_t)(e->item + 1), e->im2, e->im, e->val);
		if (e->nblocks == 2) {
			add_block(t, e->pages[1], 9);
			memcpy(t->data[1], t->data[0], 9);
		}
		break;
	case EV_FREEZE:
		for (uint32_t k = 0; k < e->nfreeze; k++)
			offnums[k] = (uint16_t)(e->fitems[k] + 1);
		rec_freeze(t, e->xid, e->pages[0], e->nfreeze, offnums, e->fmasks);
		break;
	case EV_DEDUP: rec_dedup(t, e->xid, e->pages[0], e->salt); break;
	case EV_CLOG: rec_clog(t, e->xid, e->pages[0], w->headers); break;
	case EV_IMAGE:
		rec_init(t, PN_RM_XLOG, 0xA0, 0);
		add_image(t, e->pages[0], e->image, e->hole_off, e->hole_len);
		break;
	default: rec_commit(t, e->xid); break;
	}
}

static void feed_all(struct world *w, struct ev *e, struct feeder *fs, uint32_t *s)
{
	static struct trec t;
	encode_event(w, e, &t);
	uint32_t gap = below(s, 3);
	uint64_t end = 0;
	for (uint32_t k = 0; k < w->noracles; k++) {
		uint64_t end_k = 0;
		EXPECT(feed_gap(&fs[k], &t, gap, &end_k));
		EXPECT(k == 0 || end_k == end);
		end = end_k;
	}
	e->end = end;
	for (uint32_t b = 0; b < e->nblocks; b++)
		naive_apply(w, e->pages[b], w->tip + (size_t)e->pages[b] * PAGE, e);
}

static void world_build(struct world *w, uint32_t nevs)
{
	uint32_t s = w->seed;
	struct feeder *fs = malloc(3 * sizeof(*fs));
	w->npages = w->heap + w->slru;
	w->init = initial_pages(w->heap, w->slru);
	w->tip = malloc((size_t)w->npages * PAGE);
	memcpy(w->tip, w->init, (size_t)w->npages * PAGE);
	w->evs = calloc(nevs, sizeof(*w->evs));
	for (uint32_t k = 0; k < w->noracles; k++) {
		w->os[k] = pn_oracle_new(w->heap, w->slru, PAGE, w->headers, w->init);
		ck_assert_ptr_nonnull(w->os[k]);
		feeder_init(&fs[k], w->os[k]);
	}
	if (w->noracles == 3) {
		pn_oracle_set_ckpt_budget(w->os[1], 3 * PAGE);
		pn_oracle_set_ckpt_budget(w->os[2], 0);
	}
	for (w->nevs = 0; w->nevs < nevs; w->nevs++) {
		gen_event(w, &w->evs[w->nevs], &s);
		feed_all(w, &w->evs[w->nevs], fs, &s);
	}
	free(fs);
}

static void world_free(struct world *w)
{
	for (uint32_t i = 0; i < w->nevs; i++)
		free(w->evs[i].image);
	free(w->evs);
	free(w->init);
	free(w->tip);
	for (uint32_t k = 0; k < w->noracles; k++)
		pn_oracle_free(w->os[k]);
}

static uint64_t random_upto(const struct world *w, uint32_t *s)
{
	const struct ev *e = &w->evs[below(s, w->nevs)];
	switch (below(s, 5)) {
	case 0: return e->end;
	case 1: return e->end - 1;
	case 2: return e->end + 8;
	case 3: return below(s, 50) == 0 ? 0 : UINT64_MAX;
	default: return LSN0 + below(s, (uint32_t)(w->evs[w->nevs - 1].end - LSN0 + 64));
	}
}

static void check_world(struct world *w, uint32_t queries)
{
	uint8_t naive[PAGE], got[PAGE];
	uint32_t s = w->seed ^ 0x5bd1e995u;
	char why[200];
	struct pn_oracle **all = w->os;
	for (uint32_t k = 0; k < w->noracles; k++)
		ck_assert_msg(pn_oracle_check(all[k], why, sizeof(why)), "%s", why);
	for (uint32_t q = 0; q < queries; q++) {
		uint32_t pg = below(&s, w->npages);
		uint64_t upto = random_upto(w, &s);
		naive_page(w, pg, upto, naive);
		for (uint32_t k = 0; k < w->noracles; k++) {
			pn_oracle_page(all[k], pg, upto, got);
			if (memcmp(got, naive, PAGE) != 0)
				ck_abort_msg("seed %u oracle %u page %u upto %llX: byte %d differs",
					     w->seed, k, pg, (unsigned long long)upto,
					     pn_oracle_compare(all[k], pg, naive, got));
		}
	}
	for (uint32_t pg = 0; pg < w->npages; pg++) { /* the naive tips agree with the end */
		pn_oracle_page(all[0], pg, UINT64_MAX, got);
		EXPECT(memcmp(got, w->tip + (size_t)pg * PAGE, PAGE) == 0);
	}
	for (uint32_t k = 0; k < w->noracles; k++)
		ck_assert_msg(pn_oracle_check(all[k], why, sizeof(why)), "%s", why);
}

START_TEST(test_property_naive_replay)
{
	struct world w = {.heap = 3,
			  .slru = 2,
			  .headers = _i & 1,
			  .seed = 1000u + (uint32_t)_i,
			  .noracles = 3};
	world_build(&w, 1500);
	struct pn_oracle_stats st, st_small, st_none;
	pn_oracle_stats(w.os[0], &st);
	pn_oracle_stats(w.os[1], &st_small);
	pn_oracle_stats(w.os[2], &st_none);
	ck_assert_uint_eq(st.records, 1500);
	ck_assert_uint_eq(st.misfits, 0);
	ck_assert_uint_gt(st.ckpts, 0);
	ck_assert_uint_le(st_small.ckpt_bytes, 3 * PAGE);
	ck_assert_uint_gt(st_small.ckpt_weight, 64);
	ck_assert_uint_eq(st_none.ckpts, 0);
	check_world(&w, 400);
	world_free(&w);
}
END_TEST

/* ---- performance ------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t uniform_upto(const struct world *w, uint32_t *s)
{
	uint64_t span = w->evs[w->nevs - 1].end - LSN0;
	uint64_t r = ((uint64_t)next_rand(s) << 32) | next_rand(s);
	return LSN0 + r % (span + 1);
}

/* Pages per second over `calls` pn_oracle_page calls; order: 0 random (page, upto),
 * 1 random upto then all pages, 2 increasing upto then all pages (crash points in order). */
static double bench(struct world *w, uint32_t order, uint32_t calls, uint64_t *sum)
{
	uint8_t out[PAGE];
	uint32_t s = 99 + order;
	uint64_t span = w->evs[w->nevs - 1].end - LSN0, upto = 0;
	double t0 = now_s();
	for (uint32_t q = 0; q < calls; q++) {
		uint32_t pg = q % w->heap;
		if (order == 0)
			pg = below(&s, w->heap);
		if (order == 0 || (order == 1 && pg == 0))
			upto = uniform_upto(w, &s);
		else if (order == 2 && pg == 0)
			upto = LSN0 + span * q / calls;
		pn_oracle_page(w->os[0], pg, upto, out);
		*sum += out[UPPER + 30];
	}
	return calls / (now_s() - t0);
}

/* 16 heap pages x 10,000 records each (HOT 75 %, FREEZE, DEDUP 10 % each, images 5 %). */
START_TEST(test_performance)
{
	struct world w = {.heap = 16,
			  .slru = 0,
			  .headers = true,
			  .seed = 77,
			  .heap_only = true,
			  .noracles = 1};
	double t0 = now_s();
	world_build(&w, 16 * 10000);
	double t1 = now_s();
	uint64_t sum = 0;
	double random = bench(&w, 0, 160000, &sum);
	double sweeps = bench(&w, 1, 160000, &sum);
	double ordered = bench(&w, 2, 160000, &sum);
	struct pn_oracle_stats st;
	pn_oracle_stats(w.os[0], &st);
	fprintf(stderr,
		"oracle: %llu records (%llu page changes) logged, with the test's own "
		"replay, in %.2f s; pn_oracle_page: random %.0f pages/s, sweeps %.0f pages/s, "
		"ordered sweeps %.0f pages/s; weight %u, %llu checkpoints (%.1f MiB), "
		"payload %.1f MiB [%u]\n",
		(unsigned long long)st.records, (unsigned long long)st.ops, t1 - t0, random, sweeps,
		ordered, st.ckpt_weight, (unsigned long long)st.ckpts, st.ckpt_bytes / 1048576.0,
		st.payload_bytes / 1048576.0, (unsigned)(sum & 0xF));
	ck_assert_uint_eq(st.records, 160000);
	check_world(&w, 20);
	world_free(&w);
}
END_TEST

/* ---- runner ------------------------------------------------------------------------------- */

static Suite *oracle_replay_suite(void)
{
	Suite *s = suite_create("oracle_replay");
	TCase *prop = tcase_create("property");
	TCase *perf = tcase_create("performance");

	tcase_add_loop_test(prop, test_property_naive_replay, 0, 6);
	tcase_add_test(perf, test_performance);
	TCase *all[] = {prop, perf};
	for (size_t i = 0; i < PN_ARRAY_LEN(all); i++) {
		tcase_set_timeout(all[i], 300);
		suite_add_tcase(s, all[i]);
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(oracle_replay_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

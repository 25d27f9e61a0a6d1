/*
 * test_crashstate.c: Check suite for the crash states of one point (model/crashstate.c; label
 * unit), on a device holding n unsynced writes of d_r new sectors each (P_r = 2^d_r - 2 tear
 * patterns, tear: sectors):
 *   - crash.torn_writes 1 (and not given) gives today's states: S1 = 2^n + 2 sum(P_r), at
 *     most one torn write a state, the others all lost or all persisted;
 *   - 2 gives those first, in the same order, then S2 - S1 more, S2 = 2^n + 2^(n-1) sum(P_r)
 *     + 2^(n-2) sum_{r<s} P_r P_s, every state distinct, at most two torn writes;
 *   - beyond crash.max_unsynced, or with tear: none, 2 adds nothing;
 *   - PN_CRASH_MIXED_MAX stops the added states and sets ce.capped;
 *   - SP2: a point drawing fewer samples than crash.samples draws the same stream's first
 *     ones and keeps its singles, tears and SP1's whole space;
 *   - a state with two tears encodes and decodes to itself and is one the crash model allows;
 *   - the replay of fpw-off's violation (a torn page) in a state that also tears another
 *     write reproduces it: replay applies both tears;
 *   - checker.h H8 (a point's crashes inside recovery judge an image once per first WAL
 *     end) keeps the points, states and verdicts of each crash alone, with fewer recoveries.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "crashstate.h"
#include "load.h"
#include "world.h"

struct states {
	uint64_t n;
	uint64_t *keys;
	uint32_t *torn;                /* torn writes a state */
	uint64_t lost_persisted_mixed; /* single-tear states whose others are mixed */
	bool capped;
};

static void write_units(struct pn_device *d, uint64_t off, uint32_t units, uint32_t index)
{
	uint32_t len = units * 512;
	uint8_t *buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	for (uint32_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(1 + (index * 37 + k / 512) % 255); /* never 0: each unit new */
	struct pn_io io = {.file = PN_FILE_DATA,
			   .offset = off,
			   .len = len,
			   .buf = buf,
			   .index = index};
	pn_device_write(d, &io, index);
	pn_device_write_done(d, index);
	free(buf);
}

/* A device with writes of units[0..n-1] new sectors each, 64 KiB apart. */
static void device_with(struct pn_device *d, const uint32_t *units, uint32_t n)
{
	pn_device_init(d, true, 512);
	for (uint32_t i = 0; i < n; i++)
		write_units(d, (uint64_t)i * 65536, units[i], i + 1);
}

/* Every state of the device's crash point at torn_writes tw (0: not given), with
 * crash.samples `samples` and `drawn` random states drawn beyond the bound (SP2). */
static void enumerate_drawn(const struct pn_device *d, uint32_t tw, uint32_t max_unsynced,
			    enum pn_tear tear, uint32_t samples, uint32_t drawn, struct states *out)
{
	struct pn_scenario sc;
	struct pn_crash_enum ce;
	uint64_t cap = 1024;
	pn_scenario_defaults(&sc);
	sc.crash.torn_writes = tw;
	sc.crash.max_unsynced = max_unsynced;
	sc.crash.tear = tear;
	sc.crash.samples = samples;
	memset(out, 0, sizeof(*out));
	out->keys = malloc(cap * sizeof(*out->keys));
	out->torn = malloc(cap * sizeof(*out->torn));
	pn_crash_enum_init(&ce);
	pn_crash_enum_begin(&ce, d, &sc, 1);
	pn_crash_enum_samples(&ce, drawn);
	while (pn_crash_enum_next(&ce)) {
		if (out->n == cap) {
			cap *= 2;
			out->keys = realloc(out->keys, cap * sizeof(*out->keys));
			out->torn = realloc(out->torn, cap * sizeof(*out->torn));
		}
		ck_assert(out->keys && out->torn);
		uint32_t torn = 0, persisted = 0;
		for (uint32_t i = 0; i < d->nunsynced; i++) {
			torn += ce.fates[i].fate == PN_FATE_TORN;
			persisted += ce.fates[i].fate == PN_FATE_PERSISTED;
		}
		if (torn == 1 && persisted && persisted + 1 < d->nunsynced)
			out->lost_persisted_mixed++;
		out->keys[out->n] = pn_crash_enum_key(&ce);
		out->torn[out->n++] = torn;
	}
	out->capped = ce.capped;
	pn_crash_enum_free(&ce);
	pn_scenario_free(&sc);
}

static void enumerate_sampled(const struct pn_device *d, uint32_t tw, uint32_t max_unsynced,
			      enum pn_tear tear, uint32_t samples, struct states *out)
{
	enumerate_drawn(d, tw, max_unsynced, tear, samples, samples, out);
}

static void enumerate(const struct pn_device *d, uint32_t tw, uint32_t max_unsynced,
		      enum pn_tear tear, struct states *out)
{
	enumerate_sampled(d, tw, max_unsynced, tear, 16, out);
}

static void states_free(struct states *s)
{
	free(s->keys);
	free(s->torn);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t patterns(uint32_t d) { return (1ull << d) - 2; }

static uint64_t s1(const uint32_t *units, uint32_t n)
{
	uint64_t sum = 0;
	for (uint32_t r = 0; r < n; r++)
		sum += patterns(units[r]);
	return (1ull << n) + 2 * sum;
}

static uint64_t s2(const uint32_t *units, uint32_t n)
{
	uint64_t sum = 0, pairs = 0;
	for (uint32_t r = 0; r < n; r++) {
		sum += patterns(units[r]);
		for (uint32_t s = r + 1; s < n; s++)
			pairs += patterns(units[r]) * patterns(units[s]);
	}
	return (1ull << n) + (1ull << (n - 1)) * sum + (n >= 2 ? (1ull << (n - 2)) * pairs : 0);
}

/* The counts of both settings, on each (n, d) and on writes of unequal sizes. */
START_TEST(test_counts_follow_the_formula)
{
	static const uint32_t cases[][7] = {
		/* n, then d_1..d_n */
		{2, 5, 5},          {3, 2, 2, 2},          {3, 4, 1, 3},       {4, 4, 4, 4, 4},
		{5, 3, 3, 3, 3, 3}, {6, 5, 5, 5, 5, 5, 5}, {5, 2, 6, 1, 3, 4},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint32_t n = cases[c][0];
		const uint32_t *units = &cases[c][1];
		struct pn_device d;
		struct states one, none, two;
		device_with(&d, units, n);
		enumerate(&d, 1, 6, PN_TEAR_SECTORS, &one);
		enumerate(&d, 0, 6, PN_TEAR_SECTORS, &none);
		enumerate(&d, 2, 6, PN_TEAR_SECTORS, &two);
		ck_assert_uint_eq(one.n, s1(units, n));
		ck_assert_uint_eq(two.n, s2(units, n));
		/* 1 is what a scenario without the key gets; 2 begins with exactly those */
		ck_assert_uint_eq(none.n, one.n);
		ck_assert(!memcmp(none.keys, one.keys, one.n * sizeof(*one.keys)));
		ck_assert(!memcmp(two.keys, one.keys, one.n * sizeof(*one.keys)));
		ck_assert_uint_eq(one.lost_persisted_mixed, 0);
		ck_assert(!one.capped && !two.capped);
		for (uint64_t i = 0; i < one.n; i++)
			ck_assert_uint_le(one.torn[i], 1);
		uint64_t doubles = 0;
		for (uint64_t i = 0; i < two.n; i++) {
			ck_assert_uint_le(two.torn[i], 2);
			doubles += two.torn[i] == 2;
		}
		ck_assert_uint_eq(doubles, two.n - (1ull << n) -
						   (1ull << (n - 1)) * ((one.n - (1ull << n)) / 2));
		if (n >= 3)
			ck_assert_uint_gt(two.lost_persisted_mixed, 0);
		/* every state at 2 is distinct (and so at 1, which is its prefix) */
		qsort(two.keys, two.n, sizeof(*two.keys), cmp_u64);
		for (uint64_t i = 1; i < two.n; i++)
			ck_assert_msg(two.keys[i] != two.keys[i - 1], "case %zu: state met twice",
				      c);
		states_free(&one);
		states_free(&none);
		states_free(&two);
		pn_device_free(&d);
	}
}
END_TEST

/* The examples docs/checker.md section 3 quotes. */
START_TEST(test_counts_of_the_docs)
{
	static const uint32_t five[6] = {5, 5, 5, 5, 5, 5}, four[4] = {4, 4, 4, 4};
	ck_assert_uint_eq(s1(five, 2), 124);
	ck_assert_uint_eq(s2(five, 2), 1024);
	ck_assert_uint_eq(s1(four, 4), 128);
	ck_assert_uint_eq(s2(four, 4), 5168);
	ck_assert_uint_eq(s1(five, 6), 424);
	ck_assert_uint_eq(s2(five, 6), 221824);
}
END_TEST

/* Beyond the bound, and with tear: none, 2 is 1. */
START_TEST(test_two_adds_nothing_outside_the_bound)
{
	static const uint32_t units[5] = {3, 3, 3, 3, 3};
	struct pn_device d;
	struct states one, two;
	device_with(&d, units, 5);
	enumerate(&d, 1, 4, PN_TEAR_SECTORS, &one); /* 5 writes > max_unsynced 4: samples */
	enumerate(&d, 2, 4, PN_TEAR_SECTORS, &two);
	ck_assert_uint_eq(one.n, two.n);
	ck_assert(!memcmp(one.keys, two.keys, one.n * sizeof(*one.keys)));
	states_free(&one);
	states_free(&two);
	enumerate(&d, 1, 6, PN_TEAR_NONE, &one);
	enumerate(&d, 2, 6, PN_TEAR_NONE, &two);
	ck_assert_uint_eq(one.n, 32);
	ck_assert_uint_eq(two.n, 32);
	states_free(&one);
	states_free(&two);
	pn_device_free(&d);
}
END_TEST

/* The number of distinct keys of s (sorts them). */
static uint64_t distinct(struct states *s)
{
	qsort(s->keys, s->n, sizeof(*s->keys), cmp_u64);
	uint64_t d = s->n ? 1 : 0;
	for (uint64_t i = 1; i < s->n; i++)
		d += s->keys[i] != s->keys[i - 1];
	return d;
}

/* SP1: beyond the bound, a point whose whole space is no larger than the singles and samples
 * (3n + 1 + samples) is enumerated whole, each state once: the 2^n subsets under tear none
 * (the same keys the exhaustive bound gives), (2 + P_r) fates a write under sectors, 4 under
 * halves; a larger space is sampled as before (3n + 1 singles and prefixes, then the
 * samples, then the tears). */
START_TEST(test_whole_space_replaces_samples)
{
	static const uint32_t ones[] = {1, 1, 1, 1, 1}, mixed[] = {3, 2}, fours[] = {4, 4, 4};
	struct pn_device d;
	struct states space, bound;
	device_with(&d, ones, 5);
	enumerate_sampled(&d, 1, 2, PN_TEAR_NONE, 1000, &space);
	enumerate_sampled(&d, 1, 5, PN_TEAR_NONE, 1000, &bound); /* 5 <= bound: 2^5 subsets */
	ck_assert_uint_eq(space.n, 32);
	ck_assert_uint_eq(distinct(&space), 32);
	ck_assert_uint_eq(distinct(&bound), 32);
	ck_assert(!memcmp(space.keys, bound.keys, 32 * sizeof(*space.keys)));
	states_free(&space);
	states_free(&bound);
	enumerate_sampled(&d, 1, 2, PN_TEAR_NONE, 15, &space); /* 3*5 + 1 + 15 < 32: sampled */
	ck_assert_uint_eq(space.n, 3 * 5 + 1 + 15);
	ck_assert_uint_lt(distinct(&space), 32);
	states_free(&space);
	pn_device_free(&d);

	device_with(&d, fours, 3); /* writes that could tear, under tear: none: 2 fates each */
	enumerate_sampled(&d, 1, 1, PN_TEAR_NONE, 1000, &space);
	ck_assert_uint_eq(space.n, 8);
	ck_assert_uint_eq(distinct(&space), 8);
	states_free(&space);
	pn_device_free(&d);

	device_with(&d, mixed, 2);
	enumerate_sampled(&d, 1, 1, PN_TEAR_SECTORS, 1000, &space);
	ck_assert_uint_eq(space.n, (2 + patterns(3)) * (2 + patterns(2)));
	ck_assert_uint_eq(distinct(&space), space.n);
	states_free(&space);
	pn_device_free(&d);

	device_with(&d, fours, 3);
	enumerate_sampled(&d, 1, 1, PN_TEAR_HALVES, 1000, &space);
	ck_assert_uint_eq(space.n, 4 * 4 * 4);
	ck_assert_uint_eq(distinct(&space), space.n);
	states_free(&space);
	pn_device_free(&d);
}
END_TEST

/* SP2: a point told to draw another number of samples draws exactly that many, the same
 * stream's first ones, and keeps everything else: the singles and prefixes, the tears, and
 * SP1's whole space (decided by crash.samples, not by the samples drawn). */
START_TEST(test_drawn_samples_change_only_the_samples)
{
	static const uint32_t ones[] = {1, 1, 1, 1, 1}, fours[] = {4, 4, 4};
	struct pn_device d;
	struct states all, none, some;
	device_with(&d, ones, 5);
	enumerate_drawn(&d, 1, 2, PN_TEAR_NONE, 1000, 0, &none); /* SP1: whole, 32 states */
	ck_assert_uint_eq(none.n, 32);
	ck_assert_uint_eq(distinct(&none), 32);
	states_free(&none);
	enumerate_drawn(&d, 1, 2, PN_TEAR_NONE, 12, 12, &all); /* 3*5 + 1 + 12 < 32: sampled */
	enumerate_drawn(&d, 1, 2, PN_TEAR_NONE, 12, 0, &none);
	enumerate_drawn(&d, 1, 2, PN_TEAR_NONE, 12, 7, &some);
	ck_assert_uint_eq(all.n, 3 * 5 + 1 + 12);
	ck_assert_uint_eq(none.n, 3 * 5 + 1);
	ck_assert_uint_eq(some.n, 3 * 5 + 1 + 7);
	ck_assert(!memcmp(all.keys, some.keys, some.n * sizeof(*all.keys))); /* a prefix */
	ck_assert(!memcmp(all.keys, none.keys, none.n * sizeof(*all.keys)));
	states_free(&all);
	states_free(&none);
	states_free(&some);
	pn_device_free(&d);

	device_with(&d, fours, 3); /* sectors: (2 + 14)^3 > 3*3 + 1 + 50, sampled; 3 * 14 tears */
	enumerate_drawn(&d, 1, 1, PN_TEAR_SECTORS, 50, 50, &all);
	enumerate_drawn(&d, 1, 1, PN_TEAR_SECTORS, 50, 0, &none);
	ck_assert_uint_eq(all.n, 3 * 3 + 1 + 50 + 2 * 3 * patterns(4));
	ck_assert_uint_eq(none.n, all.n - 50);
	ck_assert(!memcmp(all.keys, none.keys, 10 * sizeof(*all.keys))); /* singles, prefixes */
	ck_assert(!memcmp(all.keys + 60, none.keys + 10, (none.n - 10) * sizeof(*all.keys)));
	states_free(&all);
	states_free(&none);
	pn_device_free(&d);
}
END_TEST

/* Six writes of 8 new sectors (254 patterns each): 2 would add about 15.5 million states; it
 * adds PN_CRASH_MIXED_MAX and says so. */
START_TEST(test_cap_is_reported)
{
	static const uint32_t units[6] = {8, 8, 8, 8, 8, 8};
	struct pn_device d;
	struct states one, two;
	device_with(&d, units, 6);
	enumerate(&d, 1, 6, PN_TEAR_SECTORS, &one);
	enumerate(&d, 2, 6, PN_TEAR_SECTORS, &two);
	ck_assert(!one.capped);
	ck_assert(two.capped);
	ck_assert_uint_gt(s2(units, 6), one.n + PN_CRASH_MIXED_MAX);
	ck_assert_uint_eq(two.n, one.n + PN_CRASH_MIXED_MAX);
	states_free(&one);
	states_free(&two);
	pn_device_free(&d);
}
END_TEST

/* A state with two torn writes is a state of the crash model, and its compact form (what a
 * trace's replay.state holds) names both tears and decodes to the same fates. */
START_TEST(test_double_tear_round_trips)
{
	static const uint32_t units[3] = {4, 3, 2};
	struct pn_device d;
	struct pn_scenario sc;
	struct pn_crash_enum ce;
	struct pn_write_fate back[3];
	char buf[256], why[256];
	uint64_t doubles = 0;
	device_with(&d, units, 3);
	pn_scenario_defaults(&sc);
	sc.crash.torn_writes = 2;
	pn_crash_enum_init(&ce);
	pn_crash_enum_begin(&ce, &d, &sc, 1);
	while (pn_crash_enum_next(&ce)) {
		uint32_t torn = 0;
		for (uint32_t i = 0; i < d.nunsynced; i++)
			torn += ce.fates[i].fate == PN_FATE_TORN;
		if (torn < 2)
			continue;
		doubles++;
		ck_assert_msg(pn_crash_fates_allowed(&d, &sc, ce.fates, why, sizeof(why)), "%s",
			      why);
		pn_crash_enum_encode(&ce, buf, sizeof(buf));
		ck_assert_msg(pn_crash_fates_decode(&d, buf, back, why, sizeof(why)), "%s: %s", buf,
			      why);
		for (uint32_t i = 0; i < d.nunsynced; i++) {
			ck_assert_int_eq(back[i].fate, ce.fates[i].fate);
			if (back[i].fate == PN_FATE_TORN)
				ck_assert_uint_eq(back[i].sectors, ce.fates[i].sectors);
		}
	}
	ck_assert_uint_eq(doubles, 2 * (14 * 6 + 14 * 2 + 6 * 2)); /* 2^(n-2) sum P_r P_s */
	pn_crash_enum_free(&ce);
	pn_scenario_free(&sc);
	pn_device_free(&d);
}
END_TEST

/* scenarios/mutants/fpw-off.yaml with crash.torn_writes: 2 */
static const char fpw_off_text[] =
	"name: fpw-off\nseed: 7\nprotocol: {mode: fpw, mutations: [fpw_off]}\n"
	"storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}\n"
	"checkpoint: {interval: 0s, every_transactions: 5, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 8, pages_per_transaction: 2}\n"
	"crash: {points: all, max_unsynced: 4, tear: sectors, torn_writes: 2}\n"
	"expect: {verdict: violation}\n";

/* The first state at crash point `point` of sc's schedule 0 that tears the write `first`
 * tears (its compact form "t7:1") and one more; "" when there is none. */
static void double_tear_with(const struct pn_scenario *sc, uint64_t point, const char *first,
			     char *out, size_t len)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.track = true, .check_each_event = true};
	struct pn_crash_enum ce;
	char buf[256];
	out[0] = 0;
	ck_assert(w != NULL && pn_world_init(w, sc, &o, NULL));
	pn_engine_start(w->e);
	while (w->events < point && pn_world_step(w) == PN_STEP_EVENT)
		;
	ck_assert_uint_eq(w->events, point);
	pn_crash_enum_init(&ce);
	pn_crash_enum_begin(&ce, &w->dev, sc, point);
	while (!out[0] && pn_crash_enum_next(&ce)) {
		uint32_t torn = 0;
		for (uint32_t i = 0; i < w->dev.nunsynced; i++)
			torn += ce.fates[i].fate == PN_FATE_TORN;
		pn_crash_enum_encode(&ce, buf, sizeof(buf));
		if (torn == 2 && strstr(buf, first))
			snprintf(out, len, "%s", buf);
	}
	pn_crash_enum_free(&ce);
	pn_world_free(w);
	free(w);
}

START_TEST(test_double_tear_replays)
{
	struct pn_scenario sc;
	struct pn_check_result *res = calloc(1, sizeof(*res));
	char err[512], state[256], first[256];
	ck_assert(res != NULL);
	ck_assert_msg(pn_scenario_load_string("fpw-off.yaml", fpw_off_text, strlen(fpw_off_text),
					      &sc, err, sizeof(err)),
		      "%s", err);
	struct pn_check_options o = {0};
	ck_assert_int_eq(pn_check_scenario(&sc, &o, res), 0);
	ck_assert(res->violation && res->state[0] == 't' && !strchr(res->state, ','));
	snprintf(first, sizeof(first), "%s", res->state);
	double_tear_with(&sc, res->crash_point, first, state, sizeof(state));
	ck_assert_msg(state[0], "no state tears %s and another write", first);
	sc.replay.present = true;
	sc.replay.schedule = 0;
	sc.replay.crash_point = res->crash_point;
	snprintf(sc.replay.state, sizeof(sc.replay.state), "%s", state);
	o = pn_check_replay_options(&sc);
	int rc = pn_check_scenario(&sc, &o, res);
	ck_assert_msg(rc != 2 && res->violation && !res->error, "%s: %s", state, res->detail);
	ck_assert_int_eq(res->kind, PN_VIOL_CHECKSUM);
	ck_assert_str_eq(res->state, state);
	pn_scenario_free(&sc);
	free(res);
}
END_TEST

/* checker.h H8: the crashes inside recovery of one point judge an image once per first WAL
 * end: torn states of a small Umbra run, every new state crashed inside its recovery, pass
 * with the same points and states as with each crash alone, and fewer recoveries; a mutant
 * caught by a crash inside recovery is caught at the same crash, event and state. */
static const char h8_text[] =
	"name: h8\n"
	"seed: 2\n"
	"protocol: {mode: umbra, generations: 3}\n"
	"storage: {pages: 4, buffers: 3, wal_segment_size: 64KiB}\n"
	"checkpoint: {interval: 0s, every_transactions: 2, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 1, transactions: 3, pages_per_transaction: 2}\n"
	"crash: {points: all, max_unsynced: 4, tear: sectors}\n"
	"schedules: {strategy: seeded}\n"
	"expect: {verdict: pass}\n";

static void check_both(struct pn_scenario *sc, struct pn_check_result *res)
{
	for (int alone = 0; alone < 2; alone++) {
		struct pn_check_options o = {.nested_every = 1,
					     .derive = true,
					     .nested_alone = alone};
		memset(&res[alone], 0, sizeof(res[alone]));
		ck_assert_int_ne(pn_check_scenario(sc, &o, &res[alone]), 2);
	}
}

START_TEST(test_point_shares_nested_images)
{
	struct pn_scenario sc;
	struct pn_check_result *res = calloc(2, sizeof(*res));
	char err[512];
	ck_assert(res != NULL);
	ck_assert_msg(pn_scenario_load_string("h8.yaml", h8_text, strlen(h8_text), &sc, err,
					      sizeof(err)),
		      "%s", err);
	check_both(&sc, res);
	ck_assert(!res[0].violation && !res[1].violation);
	ck_assert_uint_eq(res[0].crash_points, res[1].crash_points);
	ck_assert_uint_eq(res[0].crash_states, res[1].crash_states);
	ck_assert_uint_lt(res[0].recoveries, res[1].recoveries);
	pn_scenario_free(&sc);
	char path[1024];
	snprintf(path, sizeof(path), "%s/scenarios/less-space/mutant-pool-map-unsynced.yaml",
		 getenv("PN_SOURCE_DIR"));
	ck_assert_msg(pn_scenario_load(path, &sc, err, sizeof(err)), "%s", err);
	check_both(&sc, res);
	ck_assert(res[0].violation && res[1].violation && res[0].in_recovery);
	ck_assert_int_eq(res[0].kind, res[1].kind);
	ck_assert_uint_eq(res[0].crash_point, res[1].crash_point);
	ck_assert_str_eq(res[0].state, res[1].state);
	ck_assert_uint_eq(res[0].recovery_point, res[1].recovery_point);
	ck_assert_str_eq(res[0].recovery_state, res[1].recovery_state);
	pn_scenario_free(&sc);
	free(res);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("crashstate");
	TCase *tc = tcase_create("torn_writes");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_counts_follow_the_formula);
	tcase_add_test(tc, test_counts_of_the_docs);
	tcase_add_test(tc, test_two_adds_nothing_outside_the_bound);
	tcase_add_test(tc, test_cap_is_reported);
	tcase_add_test(tc, test_whole_space_replaces_samples);
	tcase_add_test(tc, test_drawn_samples_change_only_the_samples);
	tcase_add_test(tc, test_double_tear_round_trips);
	tcase_add_test(tc, test_double_tear_replays);
	tcase_add_test(tc, test_point_shares_nested_images);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

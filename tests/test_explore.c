/*
 * test_explore.c: Check suite for the world's choice points and the search over schedules
 * (sim/world.c, model/explore.c, model/check.c, model/run.c, model/trace.c; label unit).
 *   - a world whose chooser always takes candidate 0 has the seeded history, event by event
 *     (the determinism twin compares them), and `strategy: bounded` with bound 0 checks
 *     exactly what the seeded schedule checks;
 *   - bound 1 without reduction runs one schedule per alternative candidate of the seeded
 *     run's events, plus the seeded one; with reduction no more, some cut short;
 *   - a violation only a preemption reaches (shift_split) is missed by the seeded schedule,
 *     found at bound 1, written to a trace with its choices, and replayed from it; without
 *     its choices the same trace does not reproduce;
 *   - schedules.choice_width widens the window: more candidates, more schedules at bound 1;
 *   - a schedule's text round-trips and malformed text is refused (a trailing comma too);
 *   - the independence rule (pn_touch_independent): other actors, not both the engine's
 *     memory, no byte in common; on a run's real candidates it is symmetric, steps and
 *     completions touch the engine's memory, the WAL writer polls only with the WAL flushed,
 *     and some pairs commute;
 *   - reduction keeps the verdict: shift_split at bound 1 with and without it;
 *   - SP2: a sampled point draws crash.samples until its run has taken a preemption and
 *     crash.search_samples after (bound 0 the same whatever it is; linear in it at bound 1
 *     and in pct runs);
 *   - pct runs are deterministic and count as schedules; pct finds shift_split and its trace
 *     (hundreds of preemptions) replays;
 *   - the fingerprint sees the engine's memory inside a phase: no_delay_chkpt's selection
 *     before a shift's publication and after it are two states, and two orders of
 *     commuting events one;
 *   - the chooser skipped where it is not needed (opt.choice_needed): a bounded search runs
 *     the same events and queues the same children as one that asks it at every event, and
 *     a hook that skips the preemptions is caught.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "explore.h"
#include "load.h"
#include "result_fixture.h"
#include "trace.h"
#include "world.h"

static char tmp_dir[256];

/* 12 transactions, 2 clients, Umbra with shift_split: the seeded schedule misses it. */
static const char split_text[] =
	"name: split\nseed: 1\nprotocol: {mode: umbra, mutations: [shift_split]}\n"
	"storage: {pages: 12, buffers: 8, wal_segment_size: 64KiB}\n"
	"checkpoint: {interval: 0s, every_transactions: 2, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 12, pages_per_transaction: 2}\n"
	"%s";

static const char tiny_text[] =
	"name: tiny\nseed: 5\nstorage: {pages: 8, buffers: 4}\n"
	"checkpoint: {interval: 0s, every_transactions: 3, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: %u, pages_per_transaction: 2}\n"
	"%s";

static void load_text(struct pn_scenario *sc, const char *text)
{
	char err[512];
	ck_assert_msg(pn_scenario_load_string("test.yaml", text, strlen(text), sc, err,
					      sizeof(err)),
		      "%s", err);
}

static void load_split(struct pn_scenario *sc, const char *tail)
{
	char text[2048];
	snprintf(text, sizeof(text), split_text, tail);
	load_text(sc, text);
}

static void load_tiny(struct pn_scenario *sc, uint32_t transactions, const char *tail)
{
	char text[2048];
	snprintf(text, sizeof(text), tiny_text, transactions, tail);
	load_text(sc, text);
}

static int check(const struct pn_scenario *sc, struct pn_check_result *r)
{
	struct pn_check_options o = {0};
	return pn_check_scenario(sc, &o, r);
}

/* A chooser that takes the seeded order and adds up the alternatives it was offered. */
static uint32_t count_alternatives(void *arg, struct pn_world *w, const struct pn_event *cand,
				   uint32_t n)
{
	(void)cand;
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_le(n, w->sc->schedules.choice_width);
	*(uint64_t *)arg += n - 1;
	return 0;
}

/* Runs sc to its end; with count set, under the counting chooser. */
static int run_world(const struct pn_scenario *sc, struct pn_world_twin *twin, uint64_t *count)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.twin = twin,
				     .check_each_event = true,
				     .track = true,
				     .choose = count ? count_alternatives : NULL,
				     .choose_arg = count};
	char msg[512];
	ck_assert(w != NULL);
	ck_assert(pn_world_init(w, sc, &o, NULL));
	pn_engine_start(w->e);
	int rc = pn_world_run(w);
	bool same = twin ? pn_world_twin_end(twin, w, msg, sizeof(msg)) : true;
	ck_assert_msg(same, "%s", msg);
	pn_world_free(w);
	free(w);
	return rc;
}

START_TEST(test_candidate_zero_is_the_seeded_history)
{
	struct pn_scenario sc;
	struct pn_world_twin twin = {0};
	uint64_t alternatives = 0;
	load_tiny(&sc, 4, "crash: {points: all, max_unsynced: 3, tear: halves}\n");
	ck_assert_int_eq(run_world(&sc, &twin, NULL), 0);
	ck_assert_int_eq(run_world(&sc, &twin, &alternatives), 0); /* compared event by event */
	ck_assert_uint_gt(twin.events[1], 20);
	ck_assert_uint_gt(alternatives, 0); /* there were choices, and 0 took the seeded one */
	pn_world_twin_free(&twin);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_bound_zero_checks_the_seeded_schedule)
{
	struct pn_scenario seeded, bounded;
	struct pn_check_result a, b;
	load_tiny(&seeded, 6, "crash: {points: all, max_unsynced: 3, tear: halves}\n");
	load_tiny(&bounded, 6,
		  "crash: {points: all, max_unsynced: 3, tear: halves}\n"
		  "schedules: {strategy: bounded, preemption_bound: 0}\n");
	ck_assert_int_eq(check(&seeded, &a), 0);
	ck_assert_int_eq(check(&bounded, &b), 0);
	ck_assert_uint_gt(a.crash_points, 5);
	ck_assert_uint_eq(a.events, b.events);
	ck_assert_uint_eq(a.crash_points, b.crash_points);
	ck_assert_uint_eq(a.crash_states, b.crash_states);
	ck_assert_uint_eq(a.recoveries, b.recoveries);
	ck_assert_uint_eq(b.schedules_explored, 1);
	ck_assert_uint_eq(b.schedules_pruned, 0);
	ck_assert_int_eq(b.strategy, PN_STRATEGY_BOUNDED);
	pn_scenario_free(&seeded);
	pn_scenario_free(&bounded);
}
END_TEST

/* RD1: the default (reduce, no prune) runs every schedule to its end, as reduce: false does;
 * RD3: prune cuts runs at states met before. */
START_TEST(test_bound_one_counts)
{
	struct pn_scenario seeded, full, reduced, sound;
	struct pn_check_result a, b, c;
	uint64_t alternatives = 0;
	load_tiny(&seeded, 3, "");
	load_tiny(&full, 3, "schedules: {preemption_bound: 1, reduce: false}\n");
	load_tiny(&reduced, 3, "schedules: {preemption_bound: 1, prune: true}\n");
	load_tiny(&sound, 3, "schedules: {preemption_bound: 1}\n");
	ck_assert_int_eq(full.schedules.strategy, PN_STRATEGY_BOUNDED); /* a bound asks for it */
	ck_assert_int_eq(run_world(&seeded, NULL, &alternatives), 0);
	ck_assert_int_eq(check(&full, &a), 0);
	ck_assert_uint_eq(a.schedules_explored, 1 + alternatives);
	ck_assert_uint_eq(a.schedules_pruned, 0);
	ck_assert_int_eq(check(&reduced, &b), 0);
	ck_assert_uint_le(b.schedules_explored, a.schedules_explored);
	ck_assert_uint_gt(b.schedules_pruned, 0);
	ck_assert_uint_lt(b.events, a.events); /* the cut runs stopped early */
	ck_assert_uint_gt(b.distinct_states, 0);
	ck_assert_int_eq(check(&sound, &c), 0);
	ck_assert_uint_eq(c.schedules_explored, a.schedules_explored);
	ck_assert_uint_eq(c.schedules_pruned, 0);
	ck_assert_uint_eq(c.events, a.events);
	pn_scenario_free(&seeded);
	pn_scenario_free(&full);
	pn_scenario_free(&reduced);
	pn_scenario_free(&sound);
}
END_TEST

/* schedules.choice_width: a wider window offers more candidates (the counting chooser sees
 * them), each a schedule of bound 1 without reduction; a pick past the width is refused. */
START_TEST(test_choice_width_setting)
{
	struct pn_scenario narrow, wide, full;
	struct pn_check_result r;
	uint64_t three = 0, five = 0;
	load_tiny(&narrow, 3, "");
	load_tiny(&wide, 3, "schedules: {choice_width: 5}\n");
	load_tiny(&full, 3, "schedules: {preemption_bound: 1, reduce: false, choice_width: 5}\n");
	ck_assert_uint_eq(narrow.schedules.choice_width, PN_CHOICE_WIDTH);
	ck_assert_int_eq(run_world(&narrow, NULL, &three), 0);
	ck_assert_int_eq(run_world(&wide, NULL, &five), 0);
	ck_assert_uint_gt(five, three);
	ck_assert_int_eq(check(&full, &r), 0);
	ck_assert_uint_eq(r.schedules_explored, 1 + five);
	struct pn_check_options o = {.choices = "5:4"};
	ck_assert_int_eq(pn_check_scenario(&narrow, &o, &r), 2); /* candidate 4 of 3 */
	pn_scenario_free(&narrow);
	pn_scenario_free(&wide);
	pn_scenario_free(&full);
}
END_TEST

START_TEST(test_preemption_finds_and_replays)
{
	struct pn_scenario seeded, bounded, trace;
	static struct pn_check_result a, b, r;
	char path[1024], err[512];
	load_split(&seeded, "expect: {verdict: violation}\n");
	load_split(&bounded, "schedules: {preemption_bound: 1}\nexpect: {verdict: violation}\n");
	ck_assert_int_eq(check(&seeded, &a), 1); /* missed: expected a violation */
	ck_assert(!a.violation);
	ck_assert_int_eq(check(&bounded, &b), 0);
	ck_assert(b.violation);
	ck_assert_str_ne(b.choices, "");
	ck_assert_uint_gt(b.schedules_explored, 1);
	ck_assert_msg(pn_trace_write(&bounded, &b, tmp_dir, path, sizeof(path), err, sizeof(err)),
		      "%s", err);
	ck_assert_msg(pn_scenario_load(path, &trace, err, sizeof(err)), "%s", err);
	ck_assert_str_eq(trace.replay.choices, b.choices);
	char now[24];
	ck_assert_int_eq(pn_trace_edited(&trace, now, sizeof(now)), 0);
	struct pn_check_options o = pn_check_replay_options(&trace);
	pn_check_scenario(&trace, &o, &r);
	ck_assert_msg(r.violation && !r.error, "%s", r.detail);
	ck_assert_int_eq(r.kind, b.kind);
	ck_assert_uint_eq(r.crash_point, b.crash_point);
	ck_assert_str_eq(r.choices, b.choices);
	o.replay_choices = ""; /* the seeded order up to the same event: no violation */
	pn_check_scenario(&trace, &o, &r);
	ck_assert_msg(!r.violation && !r.error, "%s", r.detail);
	/* the schedule alone, checked as a scenario's only schedule, shows it too */
	struct pn_check_options only = {.choices = b.choices};
	pn_check_scenario(&seeded, &only, &r);
	ck_assert(r.violation);
	ck_assert_uint_eq(r.schedules_explored, 1);
	unlink(path);
	pn_scenario_free(&seeded);
	pn_scenario_free(&bounded);
	pn_scenario_free(&trace);
}
END_TEST

START_TEST(test_schedule_text)
{
	struct pn_schedule s;
	char why[160], buf[64];
	ck_assert(pn_schedule_parse("3:1,17:2", &s, why, sizeof(why)));
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.c[1].event, 17);
	ck_assert_uint_eq(s.c[1].pick, 2);
	ck_assert(pn_schedule_format(&s, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "3:1,17:2");
	ck_assert(!pn_schedule_format(&s, buf, 5)); /* does not fit */
	pn_schedule_free(&s);
	ck_assert(pn_schedule_parse("", &s, why, sizeof(why)));
	ck_assert_uint_eq(s.n, 0);
	pn_schedule_free(&s);
	const char *bad[] = {"3",   "3:0",   "3:16", "5:1,5:2",  "0:1", "4:1;5:1",
			     "x:1", "4:1,x", "4:1,", "4:1,,5:1", ",4:1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!pn_schedule_parse(bad[i], &s, why, sizeof(why)), "%s", bad[i]);
}
END_TEST

/* A step, a dispatch and a completion as pn_world_touch describes them. */
static struct pn_touch touch_of(uint32_t actor, bool engine, int32_t file, uint64_t off,
				uint64_t len, bool whole)
{
	return (struct pn_touch){.actor = actor,
				 .engine = engine,
				 .file = file,
				 .off = off,
				 .len = len,
				 .whole = whole};
}

START_TEST(test_touch_rule)
{
	struct pn_touch step0 = touch_of(0, true, -1, 0, 0, false),
			step1 = touch_of(1, true, -1, 0, 0, false),
			write_a = touch_of(10, false, PN_FILE_DATA, 0, 8192, false),
			write_b = touch_of(11, false, PN_FILE_DATA, 8192, 8192, false),
			write_c = touch_of(12, false, PN_FILE_DATA, 4096, 8192, false),
			fsync = touch_of(13, false, PN_FILE_DATA, 0, 0, true),
			wal = touch_of(14, false, PN_FILE_WAL, 0, 8192, false),
			done_a = touch_of(15, true, PN_FILE_DATA, 0, 8192, false), recovery = step1;
	recovery.device = true;
	ck_assert(!pn_touch_independent(&step0, &step1));     /* both the engine's memory */
	ck_assert(!pn_touch_independent(&step0, &step0));     /* one actor */
	ck_assert(pn_touch_independent(&step0, &write_a));    /* a dispatch from its own buffer */
	ck_assert(pn_touch_independent(&write_a, &write_b));  /* adjacent bytes */
	ck_assert(!pn_touch_independent(&write_a, &write_c)); /* overlapping bytes */
	ck_assert(!pn_touch_independent(&write_c, &write_b));
	ck_assert(!pn_touch_independent(&fsync, &write_b)); /* an fsync takes the whole file */
	ck_assert(pn_touch_independent(&fsync, &wal));      /* another file */
	ck_assert(!pn_touch_independent(&done_a, &step0));  /* a completion calls the engine */
	ck_assert(pn_touch_independent(&done_a, &write_b));
	ck_assert(!pn_touch_independent(&done_a, &write_c));
	ck_assert(!pn_touch_independent(&recovery, &wal)); /* reads the files synchronously */
	ck_assert(!pn_touch_independent(&wal, &recovery));
}
END_TEST

struct touch_count {
	uint64_t pairs, independent, polls;
};

/* A chooser that takes the seeded order and checks what each candidate touches. */
static uint32_t check_touches(void *arg, struct pn_world *w, const struct pn_event *cand,
			      uint32_t n)
{
	struct touch_count *k = arg;
	struct pn_touch t[PN_CHOICE_WIDTH];
	for (uint32_t i = 0; i < n; i++) {
		pn_world_touch(w, &cand[i], &t[i]);
		ck_assert_uint_eq(t[i].seq, cand[i].seq);
		if (cand[i].kind != PN_EV_DISPATCH)
			ck_assert(t[i].engine);
		if (t[i].poll) {
			k->polls++;
			ck_assert_uint_eq(pn_engine_wal_insert_lsn(w->e),
					  pn_engine_wal_flushed(w->e));
			ck_assert_uint_eq(t[i].reads, pn_world_poll_reads(w));
		}
	}
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++) {
			bool ij = pn_touch_independent(&t[i], &t[j]);
			ck_assert(ij == pn_touch_independent(&t[j], &t[i]));
			k->pairs++;
			k->independent += ij;
		}
	return 0;
}

START_TEST(test_touch_of_events)
{
	struct pn_scenario sc;
	struct touch_count k = {0};
	load_tiny(&sc, 4, "");
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.track = true, .choose = check_touches, .choose_arg = &k};
	ck_assert(w != NULL);
	ck_assert(pn_world_init(w, &sc, &o, NULL));
	pn_engine_start(w->e);
	ck_assert_int_eq(pn_world_run(w), 0);
	pn_world_free(w);
	free(w);
	ck_assert_uint_gt(k.pairs, 0);
	ck_assert_uint_gt(k.independent, 0);       /* some candidates commute */
	ck_assert_uint_lt(k.independent, k.pairs); /* not all */
	ck_assert_uint_gt(k.polls, 0);             /* the WAL writer idles */
	pn_scenario_free(&sc);
}
END_TEST

/* A crash point an earlier schedule met is skipped with reduce (never without, never in the
 * first schedule), with fewer crash states checked and the same verdict. */
START_TEST(test_points_met_are_skipped)
{
	struct pn_scenario full, reduced, first;
	static struct pn_check_result a, b, c;
	const char *crash = "crash: {points: all, max_unsynced: 2, tear: none}\n";
	char tail[256];
	snprintf(tail, sizeof(tail), "%sschedules: {preemption_bound: 1, reduce: false}\n", crash);
	load_tiny(&full, 4, tail);
	snprintf(tail, sizeof(tail), "%sschedules: {preemption_bound: 1}\n", crash);
	load_tiny(&reduced, 4, tail);
	snprintf(tail, sizeof(tail), "%sschedules: {preemption_bound: 0}\n", crash);
	load_tiny(&first, 4, tail);
	ck_assert_int_eq(check(&full, &a), 0);
	ck_assert_int_eq(check(&reduced, &b), 0);
	ck_assert_int_eq(check(&first, &c), 0);
	ck_assert(!a.violation && !b.violation);
	ck_assert_uint_eq(a.points_met, 0);
	ck_assert_uint_eq(c.points_met, 0);
	ck_assert_uint_gt(b.points_met, 0);
	ck_assert_uint_lt(b.crash_states, a.crash_states);
	pn_scenario_free(&full);
	pn_scenario_free(&reduced);
	pn_scenario_free(&first);
}
END_TEST

START_TEST(test_reduction_keeps_the_verdict)
{
	struct pn_scenario full, reduced;
	static struct pn_check_result a, b;
	load_split(&full, "schedules: {preemption_bound: 1, reduce: false}\n"
			  "expect: {verdict: violation}\n");
	load_split(&reduced, "schedules: {preemption_bound: 1}\nexpect: {verdict: violation}\n");
	ck_assert_int_eq(check(&full, &a), 0);
	ck_assert_int_eq(check(&reduced, &b), 0);
	ck_assert(a.violation && b.violation);
	ck_assert_int_eq(a.kind, b.kind);
	ck_assert_uint_le(b.schedules_explored, a.schedules_explored);
	pn_scenario_free(&full);
	pn_scenario_free(&reduced);
}
END_TEST

/* RD4: a bounded search whose schedules do not check the runtime invariants before their
 * last preemption (their parents checked those states) finds what the search that checks
 * every event finds, at the same event of the same schedule, with the same counts. Umbra's
 * R4 hook over 8 frames checks 4 a call: the rotation's place at the first checked event
 * decides which event a shifted frame is caught at. */
static void search_checked_both_ways(struct pn_scenario *sc)
{
	static struct pn_check_result all, skipped;
	struct pn_check_options every = {.check_prefix = true}, rd4 = {0};
	int rc_all = pn_check_scenario(sc, &every, &all);
	int rc_rd4 = pn_check_scenario(sc, &rd4, &skipped);
	ck_assert_int_eq(rc_all, rc_rd4);
	same_result(&all, &skipped);
}

/* A tiny Umbra search with crash points at bound 1 (load_tiny's tail), which passes. */
#define TINY_UMBRA_CRASH_K1                                   \
	"protocol: {mode: umbra, generations: 3}\n"           \
	"crash: {points: all, max_unsynced: 2, tear: none}\n" \
	"schedules: {preemption_bound: 1}\nexpect: {verdict: pass}\n"

/* cache.h V5: a search whose verdict cache empties itself every 512 verdicts judges the
 * same crash states to the same verdict; it recovers more of them. */
START_TEST(test_bounded_cache_keeps_the_search)
{
	struct pn_scenario sc;
	static struct pn_check_result free_run, bounded;
	struct pn_check_options deflt = {0}, small = {.cache_limit = 512};
	load_tiny(&sc, 4, TINY_UMBRA_CRASH_K1);
	ck_assert_int_eq(pn_check_scenario(&sc, &deflt, &free_run), 0);
	ck_assert_int_eq(pn_check_scenario(&sc, &small, &bounded), 0);
	ck_assert(!free_run.violation && !bounded.violation);
	ck_assert_uint_eq(free_run.crash_states, bounded.crash_states);
	ck_assert_uint_eq(free_run.crash_points, bounded.crash_points);
	ck_assert_uint_eq(free_run.schedules_explored, bounded.schedules_explored);
	ck_assert_uint_gt(bounded.recoveries, free_run.recoveries);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_prefix_unchecked_keeps_the_search)
{
	struct pn_scenario sc;
	load_split(&sc, "schedules: {preemption_bound: 1}\nexpect: {verdict: violation}\n");
	search_checked_both_ways(&sc);
	pn_scenario_free(&sc);
	load_tiny(&sc, 4, TINY_UMBRA_CRASH_K1);
	search_checked_both_ways(&sc);
	pn_scenario_free(&sc);
}
END_TEST

/* The schedule `choices` run by a world whose check starts at event check_from (world.h):
 * pn_world_run's status, and the events it ran. */
static int run_checked_from(const struct pn_scenario *sc, const char *choices, uint64_t check_from,
			    uint64_t *events)
{
	struct pn_explore x;
	ck_assert_msg(pn_explore_init_fixed(&x, sc, choices), "%s", x.error);
	ck_assert(pn_explore_next(&x));
	ck_assert_uint_eq(pn_explore_checked_before(&x), 0); /* nothing ran a fixed list before */
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.check_each_event = true,
				     .check_from = check_from,
				     .choose = pn_explore_choose,
				     .choose_arg = &x};
	ck_assert(w != NULL);
	ck_assert(pn_world_init(w, sc, &o, NULL));
	pn_engine_start(w->e);
	int rc = pn_world_run(w);
	*events = w->events;
	pn_world_free(w);
	free(w);
	pn_explore_free(&x);
	return rc;
}

START_TEST(test_pct_is_deterministic)
{
	struct pn_scenario sc;
	struct pn_check_result a, b;
	load_tiny(&sc, 4, "schedules: {strategy: pct, runs: 5, depth: 3}\n");
	ck_assert_int_eq(check(&sc, &a), 0);
	ck_assert_int_eq(check(&sc, &b), 0);
	ck_assert_uint_eq(a.schedules_explored, 5);
	ck_assert_uint_eq(a.events, b.events);
	ck_assert_uint_eq(a.schedules_explored, b.schedules_explored);
	pn_scenario_free(&sc);
}
END_TEST

/* The check of the tiny scenario, 4 transactions, torn sectors, under `schedules` with
 * crash.samples 40 and crash.search_samples n, into *r: its crash states; r->search_sampled
 * the points past a preemption that drew n samples instead of 40 (none when n is 40). */
static uint64_t states_drawing(const char *schedules, uint32_t n, struct pn_check_result *r)
{
	struct pn_scenario sc;
	char tail[512];
	snprintf(tail, sizeof(tail),
		 "crash: {points: all, max_unsynced: 1, tear: sectors, samples: 40, "
		 "search_samples: %u}\nschedules: %s\n",
		 n, schedules);
	load_tiny(&sc, 4, tail);
	ck_assert_uint_eq(sc.crash.search_samples, n);
	ck_assert_int_eq(check(&sc, r), 0);
	ck_assert_uint_gt(r->crash_states, 0);
	pn_scenario_free(&sc);
	if (n == 40)
		ck_assert_uint_eq(r->search_sampled, 0);
	return r->crash_states;
}

/* SP2: a sampled point draws crash.samples until its run has taken a preemption and
 * crash.search_samples after. At bound 0 (the seeded schedule alone) the states are the same
 * whatever search_samples; at bound 1 and in pct runs each sampled point past a preemption
 * draws search_samples, so the states grow by 10 for each such point and each 10 more (the
 * check crashes nothing inside recovery, whose count would follow the new states). RD2 skips
 * a point met before with at least as many samples: at bound 1 the same points whatever
 * search_samples (those met first in the seeded schedule, which drew 40, among them). */
START_TEST(test_search_samples_past_a_preemption)
{
	static const char *const searches[] = {"{strategy: bounded, preemption_bound: 1}",
					       "{strategy: pct, runs: 4, depth: 3}"};
	struct pn_check_result none, r;
	ck_assert_uint_eq(states_drawing("{strategy: bounded, preemption_bound: 0}", 0, &none),
			  states_drawing("{strategy: bounded, preemption_bound: 0}", 40, &r));
	ck_assert_uint_eq(none.search_sampled, 0); /* the seeded schedule alone */
	for (size_t i = 0; i < PN_ARRAY_LEN(searches); i++) {
		states_drawing(searches[i], 0, &none);
		uint64_t points = none.search_sampled;
		ck_assert_msg(points > 0, "%s: no sampled point past a preemption", searches[i]);
		if (i == 0) /* RD2 skipped points at bound 1: the rule below was tried */
			ck_assert_uint_gt(none.points_met, 0);
		for (uint32_t n = 10; n <= 40; n += 10) {
			uint64_t states = states_drawing(searches[i], n, &r);
			ck_assert_uint_eq(states - none.crash_states, n * points);
			ck_assert_uint_eq(r.points_met, none.points_met);
			ck_assert_uint_eq(r.search_sampled, n == 40 ? 0 : points);
		}
	}
}
END_TEST

/* pct finds what the seeded schedule misses, and its many preemptions replay from the trace */
START_TEST(test_pct_finds_and_replays)
{
	struct pn_scenario sc, trace;
	static struct pn_check_result a, r;
	char path[1024], err[512];
	load_split(&sc, "schedules: {strategy: pct, runs: 20, depth: 2}\n");
	check(&sc, &a);
	ck_assert(a.violation);
	ck_assert_uint_gt(a.schedules_explored, 1);
	ck_assert_uint_gt(strlen(a.choices), 1023); /* more than the old 1 KiB field held */
	ck_assert_msg(pn_trace_write(&sc, &a, tmp_dir, path, sizeof(path), err, sizeof(err)), "%s",
		      err);
	ck_assert_msg(pn_scenario_load(path, &trace, err, sizeof(err)), "%s", err);
	struct pn_check_options o = pn_check_replay_options(&trace);
	pn_check_scenario(&trace, &o, &r);
	ck_assert_msg(r.violation && !r.error, "%s", r.detail);
	ck_assert_uint_eq(r.crash_point, a.crash_point);
	unlink(path);
	pn_scenario_free(&sc);
	pn_scenario_free(&trace);
}
END_TEST

/* no_delay_chkpt's configuration (docs/checker.md section 13): Umbra l4, 12 transactions. */
static const char nodelay_text[] =
	"name: nodelay\nseed: 2\nprotocol: {mode: umbra, policy: l4, mutations: [no_delay_chkpt]}\n"
	"storage: {pages: 6, buffers: 5, wal_segment_size: 64KiB}\n"
	"checkpoint: {interval: 0s, every_transactions: 2, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 12, pages_per_transaction: 2}\n";

/* The fingerprint after `events` events of the schedule `choices`. */
static uint64_t fingerprint_after(const struct pn_scenario *sc, const char *choices,
				  uint64_t events)
{
	struct pn_explore x;
	ck_assert_msg(pn_explore_init_fixed(&x, sc, choices), "%s", x.error);
	ck_assert(pn_explore_next(&x));
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.track = true,
				     .check_each_event = true,
				     .stop_at_event = events,
				     .choose = pn_explore_choose,
				     .choose_arg = &x};
	ck_assert(w != NULL);
	ck_assert(pn_world_init(w, sc, &o, NULL));
	pn_engine_start(w->e);
	ck_assert_int_eq(pn_world_run(w), 0);
	ck_assert_uint_eq(w->events, events);
	ck_assert(!x.mismatch);
	uint64_t fp = pn_world_fingerprint(w);
	pn_world_free(w);
	free(w);
	pn_explore_free(&x);
	return fp;
}

/* The checkpoint's selection and a backend's publication of its shift in either order leave
 * the device, the WAL, the processes' steps and the pending events alike; only the engine's
 * memory (a selected frame's slot, the pending publication) tells them apart, and the two
 * have other futures (the first is no_delay_chkpt's counterexample). Two orders of events
 * that commute (the selector write's dispatch, the backend's next step) stay one state. */
START_TEST(test_fingerprint_sees_select_before_publish)
{
	struct pn_scenario sc;
	load_text(&sc, nodelay_text);
	uint64_t select_first = fingerprint_after(&sc, "237:2,243:2", 246);
	uint64_t publish_first = fingerprint_after(&sc, "237:2,244:2", 246);
	ck_assert_uint_ne(select_first, publish_first);
	ck_assert_uint_eq(select_first, fingerprint_after(&sc, "237:2,243:2", 246));
	ck_assert_uint_eq(fingerprint_after(&sc, "237:2", 246),
			  fingerprint_after(&sc, "237:2,244:1", 246));
	pn_scenario_free(&sc);
}
END_TEST

/* A wrong opt.choice_needed, for the test below to catch: it asks the chooser only past the
 * schedule's last preemption, so the preemptions themselves are never taken. */
static bool needed_past_the_last(void *arg, const struct pn_world *w, uint64_t event)
{
	const struct pn_explore *x = arg;
	(void)w;
	(void)event;
	return x->next >= x->cur.n;
}

/* Runs the explorer's schedule as check.c does (to its end, or until the explorer stops it)
 * with `needed` as the world's opt.choice_needed; returns the fingerprint where it stopped. */
static uint64_t run_schedule(const struct pn_scenario *sc, struct pn_explore *x,
			     pn_world_needed_fn needed, struct pn_world_twin *twin, bool *same,
			     char *msg, size_t len)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.twin = twin,
				     .check_each_event = true,
				     .choose = pn_explore_choose,
				     .choose_arg = x,
				     .choice_needed = needed};
	ck_assert(w != NULL);
	ck_assert(pn_world_init(w, sc, &o, NULL));
	pn_engine_start(w->e);
	while (pn_world_step(w) == PN_STEP_EVENT && !x->stop && !x->mismatch)
		;
	ck_assert(!x->mismatch);
	uint64_t fp = pn_world_fingerprint(w);
	*same = pn_world_twin_end(twin, w, msg, len);
	pn_world_free(w);
	free(w);
	return fp;
}

/* Two searches of sc in step, one asking the chooser at every event, the other with `needed`:
 * each schedule's two runs are compared event by event (the twin) and by the fingerprint
 * where they stop, and the explorers by the preemptions taken and the children queued.
 * Returns the schedules run, 0 at the first that differs (why in msg). */
static uint64_t search_both_ways(const struct pn_scenario *sc, pn_world_needed_fn needed, char *msg,
				 size_t len)
{
	struct pn_explore every, fast;
	struct pn_world_twin twin = {0};
	uint64_t ran = 0;
	bool same = true;
	char a[256], b[256];
	pn_explore_init(&every, sc, 0);
	pn_explore_init(&fast, sc, 0);
	while (same && pn_explore_next(&every)) {
		ck_assert(pn_explore_next(&fast));
		pn_world_twin_reset(&twin);
		uint64_t fp = run_schedule(sc, &every, NULL, &twin, &same, msg, len);
		ck_assert(same); /* the first run of a twin only logs */
		uint64_t fast_fp = run_schedule(sc, &fast, needed, &twin, &same, msg, len);
		ck_assert(pn_schedule_format(&every.taken, a, sizeof(a)));
		ck_assert(pn_schedule_format(&fast.taken, b, sizeof(b)));
		if (same && (fp != fast_fp || strcmp(a, b) || every.len != fast.len ||
			     every.stop != fast.stop || every.pruned != fast.pruned ||
			     pn_explore_states(&every) != pn_explore_states(&fast))) {
			snprintf(msg, len,
				 "schedule %llu: took %.60s and %.60s, queued %llu and %llu",
				 (unsigned long long)every.explored, a, b,
				 (unsigned long long)every.len, (unsigned long long)fast.len);
			same = false;
		}
		ran += same;
	}
	same = same && !pn_explore_next(&fast);
	pn_explore_free(&every);
	pn_explore_free(&fast);
	pn_world_twin_free(&twin);
	return same ? ran : 0;
}

/* opt.choice_needed (pn_explore_choice_needed): a bounded search that skips the chooser before
 * each schedule's next preemption runs the same events, reaches the same states and queues
 * the same children as one that asks it at every event, with fingerprints and sleep sets
 * (prune) and without; a hook that skips the preemptions' events is caught. */
/* check_from's edge: the event it names is checked, the one before it is not. The shifted
 * page of the split scenario's counterexample is caught at event v; from v on it still is,
 * from v + 1 it is caught later. And in a bounded search, a child's checks start at its
 * preemption's event, the first that differs from its parent's run. */
START_TEST(test_check_from_edge)
{
	struct pn_scenario sc;
	static struct pn_check_result r;
	load_split(&sc, "schedules: {preemption_bound: 1}\nexpect: {verdict: violation}\n");
	ck_assert_int_eq(check(&sc, &r), 0);
	ck_assert(r.violation && r.choices[0]);
	uint64_t v = r.crash_point, events = 0;
	ck_assert_int_eq(run_checked_from(&sc, r.choices, 0, &events), 1);
	ck_assert_uint_eq(events, v);
	ck_assert_int_eq(run_checked_from(&sc, r.choices, v, &events), 1);
	ck_assert_uint_eq(events, v);
	ck_assert_int_eq(run_checked_from(&sc, r.choices, v + 1, &events), 1);
	ck_assert_uint_gt(events, v);

	struct pn_explore x;
	bool same;
	char msg[512];
	struct pn_world_twin twin = {0};
	pn_explore_init(&x, &sc, 0);
	ck_assert(pn_explore_next(&x));
	ck_assert_uint_eq(pn_explore_checked_before(&x), 0); /* the seeded schedule */
	run_schedule(&sc, &x, NULL, &twin, &same, msg, sizeof(msg));
	ck_assert(pn_explore_next(&x));
	ck_assert_uint_eq(x.cur.n, 1);
	ck_assert_uint_eq(pn_explore_checked_before(&x), x.cur.c[0].event);
	pn_explore_free(&x);
	pn_world_twin_free(&twin);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_choice_needed_keeps_the_search)
{
	struct pn_scenario full, pruned;
	char msg[512];
	load_tiny(&full, 2, "schedules: {preemption_bound: 2, reduce: false}\n");
	load_tiny(&pruned, 2, "schedules: {preemption_bound: 2, prune: true}\n");
	uint64_t n = search_both_ways(&full, pn_explore_choice_needed, msg, sizeof(msg));
	ck_assert_msg(n > 0, "%s", msg);
	ck_assert_uint_gt(n, 100); /* schedules of two preemptions among them */
	n = search_both_ways(&pruned, pn_explore_choice_needed, msg, sizeof(msg));
	ck_assert_msg(n > 0, "%s", msg);
	ck_assert_uint_gt(n, 20);
	ck_assert_uint_eq(search_both_ways(&full, needed_past_the_last, msg, sizeof(msg)), 0);
	ck_assert_msg(strstr(msg, "diverge") != NULL, "%s", msg);
	pn_scenario_free(&full);
	pn_scenario_free(&pruned);
}
END_TEST

static Suite *explore_suite(void)
{
	Suite *s = suite_create("explore");
	TCase *tc = tcase_create("explore");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_candidate_zero_is_the_seeded_history);
	tcase_add_test(tc, test_bound_zero_checks_the_seeded_schedule);
	tcase_add_test(tc, test_bound_one_counts);
	tcase_add_test(tc, test_choice_width_setting);
	tcase_add_test(tc, test_preemption_finds_and_replays);
	tcase_add_test(tc, test_schedule_text);
	tcase_add_test(tc, test_touch_rule);
	tcase_add_test(tc, test_touch_of_events);
	tcase_add_test(tc, test_points_met_are_skipped);
	tcase_add_test(tc, test_reduction_keeps_the_verdict);
	tcase_add_test(tc, test_prefix_unchecked_keeps_the_search);
	tcase_add_test(tc, test_bounded_cache_keeps_the_search);
	tcase_add_test(tc, test_check_from_edge);
	tcase_add_test(tc, test_pct_is_deterministic);
	tcase_add_test(tc, test_search_samples_past_a_preemption);
	tcase_add_test(tc, test_pct_finds_and_replays);
	tcase_add_test(tc, test_fingerprint_sees_select_before_publish);
	tcase_add_test(tc, test_choice_needed_keeps_the_search);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/pn_test_explore.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(explore_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rmdir(tmp_dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_replay.c: Check suite for replay, crashes inside recovery, traces and the determinism
 * self-check (model/replay.c, model/check.c, model/crashstate.c, model/trace.c, sim/world.c;
 * label unit).
 *   - replay of any trace runs or refuses (error, exit 2) with a reason, never crashes: a
 *     scenario without crash:, a crash point past the end of the run (UINT64_MAX too), a
 *     recovery crash point past the end of the recovery, a crash state the crash model
 *     does not allow;
 *   - every crash state the checker enumerates, at a crash point and inside recovery, is
 *     one the scenario's crash model allows (tear none: no tears; halves: one half);
 *   - fpw-off with tear: none has no torn write found by --nested;
 *   - a crash state too long for a trace is refused by the decoder, not replayed shorter;
 *   - a trace records a hash that every scenario of scenarios/ round-trips, and an edit of
 *     any value shows;
 *   - `replay --json -` writes JSON alone to stdout (the report and the first line, which
 *     names an edited trace, go to stderr);
 *   - --twice agrees on a deterministic run and finds a deliberate divergence (the twin's
 *     test hook) at the first event that differs.
 */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checker.h"
#include "cli.h"
#include "crashstate.h"
#include "load.h"
#include "trace.h"
#include "world.h"

static const char crash_text[] =
	"name: tiny-crash\nseed: 5\nstorage: {pages: 8, buffers: 4}\n"
	"checkpoint: {interval: 0s, every_transactions: 3, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 6, pages_per_transaction: 2}\n"
	"crash: {points: all, max_unsynced: 4, tear: sectors}\n";

/* scenarios/mutants/fpw-off.yaml, whose violation needs a torn page */
static const char fpw_off_text[] =
	"name: fpw-off\nseed: 7\nprotocol: {mode: fpw, mutations: [fpw_off]}\n"
	"storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}\n"
	"checkpoint: {interval: 0s, every_transactions: 5, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 8, pages_per_transaction: 2}\n"
	"crash: {points: all, max_unsynced: 4, tear: %s}\n";

static struct pn_check_result res;

static void load_text(const char *text, struct pn_scenario *sc)
{
	char err[512];
	ck_assert_msg(pn_scenario_load_string("test.yaml", text, strlen(text), sc, err,
					      sizeof(err)),
		      "%s", err);
}

/* Replays sc (its replay: section as given) with no timeline. */
static int replay(const struct pn_scenario *sc)
{
	struct pn_check_options o = pn_check_replay_options(sc);
	return pn_check_scenario(sc, &o, &res);
}

static void load_trace(const char *scenario, const char *replay_section, struct pn_scenario *sc)
{
	char text[4096];
	snprintf(text, sizeof(text), "%sreplay:\n%s", scenario, replay_section);
	load_text(text, sc);
}

START_TEST(test_replay_without_crash_section)
{
	/* a cost scenario (no crash:): the run up to the point, no crash, no oracle */
	struct pn_scenario sc;
	load_trace("name: cost\nseed: 3\nstorage: {pages: 16, buffers: 4}\n"
		   "workload: {kind: random, clients: 2, transactions: 10}\n",
		   "  schedule: 0\n  crash_point: 40\n  state: \"none\"\n", &sc);
	ck_assert_int_eq(replay(&sc), 0);
	ck_assert(!res.error && !res.violation);
	ck_assert_msg(strstr(res.detail, "no crash: section") != NULL, "%s", res.detail);
	/* it names no crash state: one that does is refused, not crashed */
	snprintf(sc.replay.state, sizeof(sc.replay.state), "p1");
	ck_assert_int_eq(replay(&sc), 2);
	ck_assert(res.error);
	ck_assert_msg(strstr(res.detail, "no crash: section") != NULL, "%s", res.detail);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_replay_past_the_end)
{
	struct pn_scenario sc;
	load_trace(crash_text, "  schedule: 0\n  crash_point: 99999\n  state: \"none\"\n", &sc);
	ck_assert_int_eq(replay(&sc), 2);
	ck_assert(res.error);
	ck_assert_msg(strstr(res.detail, "past the end of the run") != NULL, "%s", res.detail);
	sc.replay.crash_point = UINT64_MAX;
	ck_assert_int_eq(replay(&sc), 2);
	ck_assert_msg(strstr(res.detail, "18446744073709551615 is past the end") != NULL, "%s",
		      res.detail);
	/* a crash inside recovery past the end of that recovery */
	sc.replay.crash_point = 30;
	sc.replay.recovery_crash_point = 1000000000ull;
	ck_assert_int_eq(replay(&sc), 2);
	ck_assert_msg(strstr(res.detail, "past the end of the recovery") != NULL, "%s", res.detail);
	/* and the real end of the run is still a crash point */
	sc.replay.recovery_crash_point = 0;
	ck_assert_int_eq(replay(&sc), 0);
	pn_scenario_free(&sc);
}
END_TEST

/* Steps a tracking world of sc until an unsynced write of 2 or more units differs from the
 * durable image; returns its event count and the write's sequence number. */
static uint64_t point_with_tearable_write(const struct pn_scenario *sc, uint64_t *seq)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.track = true, .check_each_event = true};
	struct pn_crash_enum ce;
	uint64_t point = 0;
	ck_assert(w != NULL && pn_world_init(w, sc, &o, NULL));
	pn_engine_start(w->e);
	pn_crash_enum_init(&ce);
	while (!point && pn_world_step(w) == PN_STEP_EVENT) {
		pn_crash_enum_begin(&ce, &w->dev, sc, 0);
		for (uint32_t r = 0; r < ce.nrel && !point; r++) {
			if (__builtin_popcountll(ce.diff[r]) < 2)
				continue;
			point = w->events;
			*seq = w->dev.unsynced[ce.rel[r]].seq;
		}
	}
	pn_crash_enum_free(&ce);
	pn_world_free(w);
	free(w);
	ck_assert_msg(point != 0, "no crash point with a write that can tear");
	return point;
}

/* A trace's file name is the scenario's name made safe: it was used as it is, so "../x"
 * wrote outside --traces and "a/b" into a directory that need not exist. */
START_TEST(test_trace_file_name)
{
	char buf[PN_TRACE_NAME_MAX + 1], a[PN_TRACE_NAME_MAX + 1], longname[400];
	pn_trace_file_name("fpw-off_2.v1", buf, sizeof buf);
	ck_assert_str_eq(buf, "fpw-off_2.v1"); /* a safe name stays as it is */
	const char *hostile[] = {"../x", "..", "a/b", "a\tb", ".hidden", "", "caf\xc3\xa9", "a b"};
	for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
		pn_trace_file_name(hostile[i], buf, sizeof buf);
		ck_assert_msg(buf[0] != '.' && strchr(buf, '/') == NULL && strlen(buf) > 17, "%s",
			      buf);
		for (const char *c = buf; *c; c++)
			ck_assert_msg(*c > 0x20 && *c < 0x7f, "'%s' -> '%s'", hostile[i], buf);
	}
	pn_trace_file_name("a/b", a, sizeof a);
	pn_trace_file_name("a_b", buf, sizeof buf);
	ck_assert_str_ne(a, buf); /* two names, two files */
	ck_assert_str_eq(buf, "a_b");
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	pn_trace_file_name(longname, a, sizeof a);
	ck_assert_uint_le(strlen(a), PN_TRACE_NAME_MAX);
	longname[300] = 'm'; /* differs past the cut: another file all the same */
	pn_trace_file_name(longname, buf, sizeof buf);
	ck_assert_str_ne(a, buf);
}
END_TEST

START_TEST(test_replay_state_outside_the_crash_model)
{
	struct pn_scenario sc;
	char text[2048];
	uint64_t seq;
	snprintf(text, sizeof(text), fpw_off_text, "none");
	load_trace(text, "  schedule: 0\n  crash_point: 1\n  state: \"none\"\n", &sc);
	sc.replay.crash_point = point_with_tearable_write(&sc, &seq);
	snprintf(sc.replay.state, sizeof(sc.replay.state), "t%llu:1", (unsigned long long)seq);
	ck_assert_int_eq(replay(&sc), 2);
	ck_assert_msg(strstr(res.detail, "crash.tear is none") != NULL, "%s", res.detail);
	sc.crash.tear = PN_TEAR_SECTORS; /* the same state under a model that tears sectors */
	ck_assert_int_ne(replay(&sc), 2);
	/* units past the write's last: refused under any model */
	snprintf(sc.replay.state, sizeof(sc.replay.state), "t%llu:8000000000000000",
		 (unsigned long long)seq);
	ck_assert_int_eq(replay(&sc), 2);
	ck_assert_msg(strstr(res.detail, "past the write's last") != NULL, "%s", res.detail);
	pn_scenario_free(&sc);
}
END_TEST

/* Every state both enumerations give at every crash point of a run is allowed by the model. */
static void check_states_allowed(enum pn_tear tear)
{
	struct pn_scenario sc;
	char text[2048], why[256];
	uint64_t tears = 0;
	snprintf(text, sizeof(text), fpw_off_text, "sectors");
	load_text(text, &sc);
	sc.crash.tear = tear;
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.track = true, .check_each_event = true};
	struct pn_crash_enum ce;
	ck_assert(w != NULL && pn_world_init(w, &sc, &o, NULL));
	pn_engine_start(w->e);
	pn_crash_enum_init(&ce);
	while (pn_world_step(w) == PN_STEP_EVENT) {
		for (int nested = 0; nested < 2; nested++) {
			if (nested)
				pn_crash_enum_begin_nested(&ce, &w->dev, &sc);
			else
				pn_crash_enum_begin(&ce, &w->dev, &sc, w->events);
			while (pn_crash_enum_next(&ce)) {
				ck_assert_msg(pn_crash_fates_allowed(&w->dev, &sc, ce.fates, why,
								     sizeof(why)),
					      "event %llu (%s): %s", (unsigned long long)w->events,
					      nested ? "nested" : "crash point", why);
				for (uint32_t i = 0; i < w->dev.nunsynced; i++)
					tears += ce.fates[i].fate == PN_FATE_TORN;
			}
		}
	}
	if (tear == PN_TEAR_NONE)
		ck_assert_uint_eq(tears, 0);
	else
		ck_assert_uint_gt(tears, 0);
	pn_crash_enum_free(&ce);
	pn_world_free(w);
	free(w);
	pn_scenario_free(&sc);
}

START_TEST(test_states_obey_the_crash_model)
{
	check_states_allowed(PN_TEAR_NONE);
	check_states_allowed(PN_TEAR_HALVES);
	check_states_allowed(PN_TEAR_SECTORS);
}
END_TEST

START_TEST(test_long_state_is_not_replayed_short)
{
	/* 100 persisted writes do not fit a trace's state: the encoding must not decode to
	 * fewer persisted writes (a different crash state) */
	struct pn_unsynced u[100];
	struct pn_write_fate fates[100], back[100];
	struct pn_device dev = {.track = true, .atomic_unit = 512, .unsynced = u, .nunsynced = 100};
	char state[256], why[256];
	memset(u, 0, sizeof(u));
	for (uint32_t i = 0; i < 100; i++) {
		u[i].seq = 1000 + i;
		u[i].len = 8192;
		fates[i] = (struct pn_write_fate){PN_FATE_PERSISTED, 0};
	}
	pn_crash_fates_encode(&dev, fates, state, sizeof(state));
	ck_assert_uint_lt(strlen(state), sizeof(state));
	ck_assert_msg(!pn_crash_fates_decode(&dev, state, back, why, sizeof(why)), "'%s' decoded",
		      state);
	/* one that fits round-trips */
	dev.nunsynced = 3;
	pn_crash_fates_encode(&dev, fates, state, sizeof(state));
	ck_assert_str_eq(state, "p1000,p1001,p1002");
	ck_assert(pn_crash_fates_decode(&dev, state, back, why, sizeof(why)));
	ck_assert_int_eq(back[2].fate, PN_FATE_PERSISTED);
}
END_TEST

START_TEST(test_nested_obeys_tear_none)
{
	struct pn_scenario sc;
	char text[2048];
	struct pn_check_options o = {.nested_every = 16};
	snprintf(text, sizeof(text), fpw_off_text, "none");
	load_text(text, &sc);
	pn_check_scenario(&sc, &o, &res);
	ck_assert_msg(!res.violation, "tear: none, yet %s found: state %s, recovery state %s: %s",
		      res.in_recovery ? "a crash inside recovery" : "a crash", res.state,
		      res.recovery_state, res.detail);
	pn_scenario_free(&sc);
	/* the control: the same mutant with torn sectors is caught */
	snprintf(text, sizeof(text), fpw_off_text, "sectors");
	load_text(text, &sc);
	pn_check_scenario(&sc, &o, &res);
	ck_assert(res.violation);
	pn_scenario_free(&sc);
}
END_TEST

static char tmp_dir[256];

/* Writes a trace of sc (a made-up result), loads it back into out. */
static void trace_round_trip(const struct pn_scenario *sc, const struct pn_check_result *r,
			     struct pn_scenario *out)
{
	char path[1024], err[512];
	ck_assert_msg(pn_trace_write(sc, r, tmp_dir, path, sizeof(path), err, sizeof(err)), "%s",
		      err);
	ck_assert_msg(pn_scenario_load(path, out, err, sizeof(err)), "%s", err);
	unlink(path);
}

static void hash_round_trip(const char *path)
{
	struct pn_scenario sc, t;
	char err[512], now[24];
	struct pn_check_result r = {.schedule = 0, .crash_point = 17};
	ck_assert_msg(pn_scenario_load(path, &sc, err, sizeof(err)), "%s", err);
	/* what check could write: a scenario without crash: only a runtime invariant, no crash
	 * state (the loader refuses one: src/scenario/load.c, validate_replay) */
	r.in_recovery = sc.crash.present;
	r.recovery_point = sc.crash.present ? 5 : 0;
	snprintf(r.state, sizeof(r.state), "%s", sc.crash.present ? "p3,t4:f0" : "none");
	snprintf(r.recovery_state, sizeof(r.recovery_state), "none");
	trace_round_trip(&sc, &r, &t);
	ck_assert_msg(pn_trace_edited(&t, now, sizeof(now)) == 0, "%s: hash %s, recorded %s", path,
		      now, t.replay.scenario_hash);
	ck_assert_uint_eq(t.replay.crash_point, 17);
	t.seed++; /* any value edited shows */
	ck_assert_int_eq(pn_trace_edited(&t, now, sizeof(now)), 1);
	t.seed--;
	t.replay.crash_point++;
	ck_assert_int_eq(pn_trace_edited(&t, now, sizeof(now)), 1);
	t.replay.crash_point--;
	t.replay.scenario_hash[0] = 0; /* a trace written before the hash */
	ck_assert_int_eq(pn_trace_edited(&t, now, sizeof(now)), -1);
	pn_scenario_free(&t);
	pn_scenario_free(&sc);
}

static unsigned hash_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;
	ck_assert_msg(d != NULL, "cannot read %s", dir);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[1024];
		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		int w = snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ck_assert_msg(w > 0 && (size_t)w < sizeof(path), "path too long: %s/%s", dir,
			      de->d_name);
		hash_round_trip(path);
		n++;
	}
	closedir(d);
	return n;
}

START_TEST(test_trace_hash_round_trips)
{
	static const char *dirs[] = {"protocols", "mutants", "peer-umbra", "results", "bench"};
	const char *src = getenv("PN_SOURCE_DIR");
	unsigned n = 0;
	ck_assert_msg(src != NULL, "PN_SOURCE_DIR is not set");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char dir[1024];
		snprintf(dir, sizeof(dir), "%s/scenarios/%s", src, dirs[i]);
		n += hash_dir(dir);
	}
	ck_assert_uint_gt(n, 50);
}
END_TEST

/* A trace of scenarios/mutants/ckpt-active-only.yaml, as check writes it, at path. */
static void write_mutant_trace(char *path, size_t len)
{
	char src[1024], err[512];
	struct pn_scenario sc;
	struct pn_check_options o = {0};
	ck_assert(getenv("PN_SOURCE_DIR") != NULL);
	snprintf(src, sizeof(src), "%s/scenarios/mutants/ckpt-active-only.yaml",
		 getenv("PN_SOURCE_DIR"));
	ck_assert_msg(pn_scenario_load(src, &sc, err, sizeof(err)), "%s", err);
	pn_check_scenario(&sc, &o, &res);
	ck_assert(res.violation);
	ck_assert_msg(pn_trace_write(&sc, &res, tmp_dir, path, len, err, sizeof(err)), "%s", err);
	pn_scenario_free(&sc);
}

/* `penumbra replay TRACE --json -` in this (forked) test process: stdout must parse as one
 * JSON value and nothing else; stderr's text goes to err. */
static json_t *replay_json(const char *trace, int *rc, char *err, size_t err_len)
{
	char out_path[512], err_path[512];
	char *argv[] = {"penumbra", "replay", (char *)trace, "--json", "-", NULL};
	json_error_t e;
	snprintf(out_path, sizeof(out_path), "%s/stdout", tmp_dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", tmp_dir);
	fflush(NULL);
	ck_assert(freopen(out_path, "w", stdout) && freopen(err_path, "w", stderr));
	*rc = pn_cli_main(5, argv);
	fflush(NULL);
	json_t *j = json_load_file(out_path, 0, &e);
	ck_assert_msg(j != NULL, "stdout is not JSON alone: line %d: %s", e.line, e.text);
	FILE *f = fopen(err_path, "r");
	ck_assert(f != NULL);
	size_t n = fread(err, 1, err_len - 1, f);
	err[n] = 0;
	fclose(f);
	return j;
}

START_TEST(test_replay_json_stdout)
{
	char trace[1024], edited[1100], err[16384], line[512];
	int rc;
	write_mutant_trace(trace, sizeof(trace));
	json_t *j = replay_json(trace, &rc, err, sizeof(err));
	ck_assert_int_eq(rc, 1);
	ck_assert(json_is_true(json_object_get(j, "reproduced")));
	ck_assert(json_is_false(json_object_get(j, "edited")));
	ck_assert_msg(strncmp(err, "replaying ckpt-active-only:", 27) == 0, "%s", err);
	ck_assert(strstr(err, "the violation reproduces") != NULL);
	json_decref(j);
	/* the same trace with one value edited: the first line says so */
	snprintf(edited, sizeof(edited), "%s.edited.yaml", trace);
	FILE *in = fopen(trace, "r"), *out = fopen(edited, "w");
	ck_assert(in && out);
	while (fgets(line, sizeof(line), in))
		fputs(strncmp(line, "seed:", 5) == 0 ? "seed: 8\n" : line, out);
	fclose(in);
	fclose(out);
	j = replay_json(edited, &rc, err, sizeof(err));
	ck_assert(json_is_true(json_object_get(j, "edited")));
	ck_assert_msg(strncmp(err, "EDITED TRACE: ", 14) == 0, "%s", err);
	json_decref(j);
	unlink(edited);
	unlink(trace);
}
END_TEST

START_TEST(test_twice_agrees)
{
	struct pn_scenario sc;
	struct pn_check_options o = {.twice = true, .nested_every = 500};
	load_text(crash_text, &sc);
	sc.schedules.runs = 2;
	sc.crash.points = PN_POINTS_EVERY; /* a quarter of the points: quick under ASan too */
	sc.crash.every = 4;
	ck_assert_int_eq(pn_check_scenario(&sc, &o, &res), 0);
	ck_assert_msg(!res.diverged, "%s", res.divergence);
	ck_assert_uint_gt(res.crash_states, 0);
	/* --twice reports what one run found */
	uint64_t states = res.crash_states;
	o.twice = false;
	ck_assert_int_eq(pn_check_scenario(&sc, &o, &res), 0);
	ck_assert_uint_eq(res.crash_states, states);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_twice_finds_a_divergence)
{
	struct pn_scenario sc;
	struct pn_check_options o = {.twice = true, .twice_perturb_at = 20};
	load_text(crash_text, &sc);
	sc.crash.points = PN_POINTS_EVERY;
	sc.crash.every = 4;
	ck_assert_int_eq(pn_check_scenario(&sc, &o, &res), 1);
	ck_assert(res.diverged && !res.ok);
	ck_assert_msg(strstr(res.divergence, "nondeterminism: schedule 0: the two runs diverge") !=
			      NULL,
		      "%s", res.divergence);
	const char *at = strstr(res.divergence, "at event ");
	ck_assert_msg(at != NULL, "%s", res.divergence);
	/* the first event that differs comes after the perturbation, not before */
	ck_assert_uint_gt(strtoull(at + 9, NULL, 10), 20);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_sim_twice)
{
	struct pn_scenario sc;
	char msg[512];
	load_text("name: r\nseed: 3\nstorage: {pages: 16, buffers: 6}\n"
		  "workload: {kind: random, clients: 3, transactions: 30}\n",
		  &sc);
	ck_assert_msg(pn_sim_twice(&sc, 0, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_msg(strstr(msg, "agree on all") != NULL, "%s", msg);
	ck_assert_int_eq(pn_sim_twice(&sc, 50, msg, sizeof(msg)), 1);
	ck_assert_msg(strstr(msg, "diverge") != NULL, "%s", msg);
	pn_scenario_free(&sc);
}
END_TEST

static Suite *replay_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("replay");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_replay_without_crash_section);
	tcase_add_test(tc, test_replay_past_the_end);
	tcase_add_test(tc, test_replay_state_outside_the_crash_model);
	tcase_add_test(tc, test_trace_file_name);
	tcase_add_test(tc, test_states_obey_the_crash_model);
	tcase_add_test(tc, test_nested_obeys_tear_none);
	tcase_add_test(tc, test_long_state_is_not_replayed_short);
	tcase_add_test(tc, test_trace_hash_round_trips);
	tcase_add_test(tc, test_replay_json_stdout);
	tcase_add_test(tc, test_twice_agrees);
	tcase_add_test(tc, test_twice_finds_a_divergence);
	tcase_add_test(tc, test_sim_twice);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/pn_test_replay.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(replay_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	char path[512];
	snprintf(path, sizeof(path), "%s/stdout", tmp_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stderr", tmp_dir);
	unlink(path);
	rmdir(tmp_dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

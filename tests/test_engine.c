/*
 * test_engine.c: Check suite for the engine as the simulator drives it (src/, sim/, model/;
 * label unit). Every test asserts numbers the engine produced, on small scenarios built
 * from YAML text here or read from scenarios/ (PN_SOURCE_DIR, set by CTest):
 *
 *   determinism  one scenario and seed = identical metrics and event counts, per mode;
 *                another seed = other metrics;
 *   invariants   R1-R4 fire with their bug, with the expected violation kind, and stay
 *                silent without it;
 *   recovery     crash images at several events (every unsynced write lost, every one
 *                persisted) recover, and every acknowledged commit is in the replayed WAL;
 *                nofpw with torn data writes fails its checksum;
 *   WAL sizes    fpw pays full-page images (hole removed), umbra costs what nofpw does,
 *                within its space bound;
 *   checker      verdicts of scenarios/mutants files, and the checker's determinism.
 *   checkpoints  count-triggered checkpoints spread their writes over the count interval
 *                and keep up: K * N transactions make K, each ended; a hot page's
 *                checkpoint ends (the frame is held across its WAL flush, B7); a request
 *                made while a checkpoint runs begins after it, even at the workload's end.
 *   accessors    what sim/, disk/, model/ and cli/ read through engine.h's accessors is the
 *                field it names, at every event; an ack drain hands over the log in order.
 */
#include "checker.h"
#include "engine.h"
#include "load.h"
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define YAML_LEN 1024
#define R4_SCHEDULES 200u

/* The parameters of a random-workload scenario. */
struct spec {
	const char *mode;
	uint64_t seed;
	uint32_t pages, buffers, clients, transactions, every;
	uint32_t generations;
	uint32_t sector_size;
	const char *mutation; /* NULL: none */
};

static const char *const all_modes[] = {"fpw", "nofpw", "umbra", "doublewrite"};
static const char *const crash_modes[] = {"fpw", "umbra", "doublewrite"};

/* ---- scenarios ------------------------------------------------------------------------- */

static struct spec base_spec(const char *mode)
{
	return (struct spec){
		.mode = mode,
		.seed = 42,
		.pages = 32,
		.buffers = 8,
		.clients = 3,
		.transactions = 200,
		.every = 20,
		.generations = 3,
		.sector_size = 512,
	};
}

/* generations: written for umbra alone (the only mode that reads it; the loader refuses a
 * key the protocol does not read). */
static void spec_yaml(const struct spec *s, char *buf, size_t len)
{
	char gen[32] = "";
	if (strcmp(s->mode, "umbra") == 0)
		snprintf(gen, sizeof gen, "generations: %u, ", s->generations);
	int n = snprintf(
		buf, len,
		"name: engine-%s\n"
		"seed: %llu\n"
		"storage: {pages: %u, buffers: %u, sector_size: %u, wal_segment_size: 64KiB}\n"
		"protocol: {mode: %s, %schecksums: true, mutations: [%s]}\n"
		"checkpoint: {interval: 0s, every_transactions: %u, max_wal_size: 0}\n"
		"workload: {kind: random, clients: %u, transactions: %u, "
		"pages_per_transaction: 2}\n",
		s->mode, (unsigned long long)s->seed, s->pages, s->buffers, s->sector_size, s->mode,
		gen, s->mutation ? s->mutation : "", s->every, s->clients, s->transactions);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (int)len);
}

static void load_spec(const struct spec *s, struct pn_scenario *sc)
{
	char yaml[YAML_LEN], err[PN_ERROR_LEN];
	spec_yaml(s, yaml, sizeof(yaml));
	bool ok = pn_scenario_load_string("engine.yaml", yaml, strlen(yaml), sc, err, sizeof(err));
	ck_assert_msg(ok, "scenario refused: %s\n%s", err, yaml);
}

static void load_file(const char *rel, struct pn_scenario *sc)
{
	const char *root = getenv("PN_SOURCE_DIR");
	char path[1024], err[PN_ERROR_LEN];
	snprintf(path, sizeof(path), "%s/%s", root ? root : ".", rel);
	ck_assert_msg(pn_scenario_load(path, sc, err, sizeof(err)), "%s", err);
}

/* One whole simulated run of the spec. */
static void run_spec(const struct spec *s, struct pn_sim_result *out)
{
	struct pn_scenario sc;
	load_spec(s, &sc);
	pn_sim_run(&sc, out);
	pn_scenario_free(&sc);
}

static void assert_clean_run(const struct pn_sim_result *r, const struct spec *s)
{
	ck_assert_msg(r->status == 0, "%s: status %d, %s: %s %s", s->mode, r->status,
		      pn_violation_name(r->viol.kind), r->viol.detail, r->error);
	ck_assert_int_eq(r->viol.kind, PN_VIOL_NONE);
	ck_assert_uint_eq(r->m.transactions, s->transactions);
	ck_assert_uint_eq(r->m.commits, s->transactions);
}

static void world_drop(struct pn_world *w)
{
	pn_world_free(w);
	free(w);
}

/* ---- a. determinism -------------------------------------------------------------------- */

START_TEST(test_determinism)
{
	struct spec s = base_spec(all_modes[_i]);
	static struct pn_sim_result a, b, c;
	run_spec(&s, &a);
	run_spec(&s, &b);
	assert_clean_run(&a, &s);
	assert_clean_run(&b, &s);
	ck_assert_uint_gt(a.events, 1000);
	ck_assert_uint_eq(a.events, b.events);
	ck_assert_uint_eq(a.m.wal_bytes, b.m.wal_bytes);
	ck_assert_int_eq(memcmp(&a.m, &b.m, sizeof(a.m)), 0);

	s.seed = 43;
	run_spec(&s, &c);
	assert_clean_run(&c, &s);
	ck_assert_int_ne(memcmp(&a.m, &c.m, sizeof(a.m)), 0);
	ck_assert_uint_ne(a.m.elapsed_ns, c.m.elapsed_ns);
}
END_TEST

/* ---- b. runtime invariants ------------------------------------------------------------- */

/* The spec with its bug fires `kind`; the same spec without it runs clean. */
static void assert_fires(struct spec s, enum pn_violation_kind kind)
{
	static struct pn_sim_result bug, clean;
	run_spec(&s, &bug);
	ck_assert_msg(bug.status == 1, "%s: no violation (status %d)", s.mutation, bug.status);
	ck_assert_msg(bug.viol.kind == kind, "%s: %s, expected %s: %s", s.mutation,
		      pn_violation_name(bug.viol.kind), pn_violation_name(kind), bug.viol.detail);
	ck_assert_uint_lt(bug.m.commits, s.transactions);
	s.mutation = NULL;
	run_spec(&s, &clean);
	assert_clean_run(&clean, &s);
}

START_TEST(test_r1_wal_before_data)
{
	struct spec s = base_spec("fpw");
	s.mutation = "no_wal_before_data";
	assert_fires(s, PN_VIOL_WAL_BEFORE_DATA);
}
END_TEST

START_TEST(test_r2_durability)
{
	struct spec s = base_spec("fpw");
	s.mutation = "ack_before_flush";
	assert_fires(s, PN_VIOL_DURABILITY);
}
END_TEST

/*
 * Umbra's prototype policy with two generations: a page changed in two consecutive
 * checkpoint cycles finds no free slot and rotates onto the completed checkpoint's
 * baseline. The engine catches that at the shift itself (R4, PN_VIOL_MAPPING), before
 * any write could reach the slot (R3); three generations run clean.
 */
START_TEST(test_r3_two_generations)
{
	static struct pn_sim_result two, three;
	struct spec s = base_spec("umbra");
	s.every = 3;
	s.generations = 2;
	run_spec(&s, &two);
	ck_assert_msg(two.status == 1, "generations 2: no violation");
	ck_assert_msg(two.viol.kind == PN_VIOL_MAPPING, "%s: %s", pn_violation_name(two.viol.kind),
		      two.viol.detail);
	ck_assert_uint_lt(two.viol.page, s.pages);
	ck_assert_uint_gt(two.m.checkpoints, 0);
	s.generations = 3;
	run_spec(&s, &three);
	assert_clean_run(&three, &s);
	ck_assert_uint_ge(three.m.checkpoints, s.transactions / s.every / 4);
	ck_assert_uint_gt(three.m.shifts, 0);
}
END_TEST

/* An engine on a freshly formatted device, not started; sc is loaded here. */
static struct pn_world *fresh_world(const char *mode, struct pn_scenario *sc)
{
	struct spec s = base_spec(mode);
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {0};
	ck_assert_ptr_nonnull(w);
	load_spec(&s, sc);
	ck_assert_msg(pn_world_init(w, sc, &o, NULL), "%s", w->error);
	return w;
}

/* R3 itself, the write-time guard: a data write bound to a page's baseline slot is a
 * PN_VIOL_PROTECTED_SLOT in umbra; any other slot (or any slot in fpw) is not. */
START_TEST(test_r3_protected_slot)
{
	struct pn_scenario sc;
	struct pn_world *w = fresh_world("umbra", &sc);
	struct pn_engine *e = w->e;
	pn_lsn stamped = e->ckpt.redo_done + 1; /* a page a record changed after the redo */
	ck_assert_uint_eq(e->store.base_done[5], 0);
	pn_store_check_write(&e->store, 5, 1, stamped, e->ckpt.seq_done);
	pn_store_check_write(&e->store, 5, 2, stamped, e->ckpt.seq_done);
	ck_assert(!e->svc.failed);
	ck_assert_int_eq(e->svc.viol.kind, PN_VIOL_NONE);
	pn_store_check_write(&e->store, 5, e->store.base_done[5], stamped, e->ckpt.seq_done);
	ck_assert(e->svc.failed);
	ck_assert_int_eq(e->svc.viol.kind, PN_VIOL_PROTECTED_SLOT);
	ck_assert_uint_eq(e->svc.viol.page, 5);
	world_drop(w);
	pn_scenario_free(&sc);

	w = fresh_world("fpw", &sc);
	pn_store_check_write(&w->e->store, 5, 0, UINT64_MAX, w->e->ckpt.seq_done);
	ck_assert(!w->e->svc.failed);
	ck_assert_int_eq(w->e->svc.viol.kind, PN_VIOL_NONE);
	world_drop(w);
	pn_scenario_free(&sc);
}
END_TEST

/* Runs schedule `schedule` of sc; returns pn_world_run's status and the violation. */
static int run_schedule(const struct pn_scenario *sc, uint32_t schedule, struct pn_violation *v)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.check_each_event = true, .schedule = schedule};
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(pn_world_init(w, sc, &o, NULL), "%s", w->error);
	pn_engine_start(w->e);
	int rc = pn_world_run(w);
	*v = w->e->svc.viol;
	world_drop(w);
	return rc;
}

/* The first schedule below R4_SCHEDULES with a violation, or R4_SCHEDULES. */
static uint32_t first_violation(const struct spec *s, struct pn_violation *v)
{
	struct pn_scenario sc;
	uint32_t i;
	load_spec(s, &sc);
	for (i = 0; i < R4_SCHEDULES; i++) {
		int rc = run_schedule(&sc, i, v);
		ck_assert_int_ne(rc, 2);
		if (rc == 1)
			break;
	}
	pn_scenario_free(&sc);
	return i;
}

START_TEST(test_r4_mapping)
{
	struct spec s = {
		.mode = "umbra",
		.seed = 7,
		.pages = 12,
		.buffers = 8,
		.clients = 4,
		.transactions = 60,
		.every = 2,
		.generations = 3,
		.sector_size = 512,
		.mutation = "shift_split",
	};
	struct pn_violation v;
	uint32_t at = first_violation(&s, &v);
	ck_assert_msg(at < R4_SCHEDULES, "shift_split: no violation in %u schedules", R4_SCHEDULES);
	ck_assert_msg(v.kind == PN_VIOL_MAPPING, "schedule %u: %s: %s", at,
		      pn_violation_name(v.kind), v.detail);
	ck_assert_uint_lt(v.page, s.pages);
	s.mutation = NULL;
	ck_assert_uint_eq(first_violation(&s, &v), R4_SCHEDULES);
}
END_TEST

/* ---- c. recovery round trip ------------------------------------------------------------ */

/* A tracked world stopped after event k. */
static struct pn_world *world_at(const struct pn_scenario *sc, uint64_t k)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.track = true, .check_each_event = true, .stop_at_event = k};
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(pn_world_init(w, sc, &o, NULL), "%s", w->error);
	pn_engine_start(w->e);
	ck_assert_int_eq(pn_world_run(w), 0);
	ck_assert_uint_eq(w->events, k);
	return w;
}

/* Recovers a new world from w's crash image under `fates`; returns pn_world_recover's rc. */
static int recover(const struct pn_world *w, const struct pn_write_fate *fates,
		   struct pn_world **out)
{
	struct pn_world *r = calloc(1, sizeof(*r));
	struct pn_world_options o = {.check_each_event = true, .blank = true};
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(pn_world_init(r, w->sc, &o, NULL), "%s", r->error);
	pn_device_crash_image(&w->dev, fates, &r->dev);
	*out = r;
	return pn_world_recover(r);
}

static struct pn_write_fate *all_fates(const struct pn_device *d, enum pn_fate fate)
{
	struct pn_write_fate *f = calloc(d->nunsynced + 1u, sizeof(*f));
	ck_assert_ptr_nonnull(f);
	for (uint32_t i = 0; i < d->nunsynced; i++)
		f[i].fate = fate;
	return f;
}

/* Recovery of w's crash under one uniform fate: clean, with every acknowledged commit and
 * all the WAL flushed before the crash replayed. */
static void assert_round_trip(const struct pn_world *w, enum pn_fate fate, uint64_t k)
{
	struct pn_write_fate *f = all_fates(&w->dev, fate);
	struct pn_world *r;
	int rc = recover(w, f, &r);
	ck_assert_msg(rc == 0, "%s k=%llu fate %d: recovery rc %d: %s %s", w->sc->name,
		      (unsigned long long)k, fate, rc, r->e->svc.viol.detail, r->error);
	ck_assert_int_eq(r->e->svc.viol.kind, PN_VIOL_NONE);
	ck_assert_uint_ge(r->e->rcv.replay_end, pn_wal_flushed(&w->e->wal));
	for (uint64_t i = 0; i < w->e->bk.nacked; i++)
		ck_assert_msg(w->e->bk.acked_lsns[i] <= r->e->rcv.replay_end,
			      "%s k=%llu: commit %llu at %llX lost (replay ends at %llX)",
			      w->sc->name, (unsigned long long)k, (unsigned long long)i,
			      (unsigned long long)w->e->bk.acked_lsns[i],
			      (unsigned long long)r->e->rcv.replay_end);
	world_drop(r);
	free(f);
}

#define CRASH_POINTS 10u

/* Crash points spread over the whole run: j/(CRASH_POINTS+1) of its events. */
static void crash_events(const struct pn_scenario *sc, uint64_t *k)
{
	static struct pn_sim_result r;
	ck_assert_int_eq(pn_sim_run(sc, &r), 0);
	ck_assert_uint_gt(r.events, 10u * CRASH_POINTS);
	for (uint32_t j = 0; j < CRASH_POINTS; j++)
		k[j] = r.events * (j + 1) / (CRASH_POINTS + 1);
}

static struct spec crash_spec(const char *mode)
{
	struct spec s = base_spec(mode);
	s.pages = 16;
	s.buffers = 6;
	s.clients = 2;
	s.transactions = 60;
	s.every = 8;
	return s;
}

START_TEST(test_recovery_round_trip)
{
	struct spec s = crash_spec(crash_modes[_i]);
	struct pn_scenario sc;
	uint64_t acked = 0, unsynced = 0, k[CRASH_POINTS];
	load_spec(&s, &sc);
	crash_events(&sc, k);
	for (uint32_t i = 0; i < CRASH_POINTS; i++) {
		struct pn_world *w = world_at(&sc, k[i]);
		acked += w->e->bk.nacked;
		unsynced += w->dev.nunsynced;
		assert_round_trip(w, PN_FATE_LOST, k[i]);
		assert_round_trip(w, PN_FATE_PERSISTED, k[i]);
		world_drop(w);
	}
	ck_assert_uint_gt(acked, 0);
	ck_assert_uint_gt(unsynced, 0);
	pn_scenario_free(&sc);
}
END_TEST

/* nofpw: every data write torn (its first sector new), every other write persisted. */
static int recover_torn(const struct pn_world *w, enum pn_violation_kind *kind)
{
	struct pn_write_fate *f = all_fates(&w->dev, PN_FATE_PERSISTED);
	struct pn_world *r;
	for (uint32_t i = 0; i < w->dev.nunsynced; i++)
		if (w->dev.unsynced[i].file == PN_FILE_DATA)
			f[i] = (struct pn_write_fate){PN_FATE_TORN, 0x1};
	int rc = recover(w, f, &r);
	*kind = r->e->svc.viol.kind;
	world_drop(r);
	free(f);
	return rc;
}

START_TEST(test_recovery_nofpw_torn)
{
	struct spec s = crash_spec("nofpw");
	struct pn_scenario sc;
	uint32_t checksum = 0;
	uint64_t k[CRASH_POINTS];
	load_spec(&s, &sc);
	crash_events(&sc, k);
	for (uint32_t i = 0; i < CRASH_POINTS; i++) {
		struct pn_world *w = world_at(&sc, k[i]);
		enum pn_violation_kind kind;
		assert_round_trip(w, PN_FATE_PERSISTED, k[i]);
		int rc = recover_torn(w, &kind);
		ck_assert_int_ne(rc, 2);
		ck_assert_msg(rc == 0 || kind == PN_VIOL_CHECKSUM, "k=%llu: %s",
			      (unsigned long long)k[i], pn_violation_name(kind));
		checksum += rc == 1;
		world_drop(w);
	}
	ck_assert_uint_ge(checksum, 1);
	pn_scenario_free(&sc);
}
END_TEST

/* ---- d. WAL sizes ---------------------------------------------------------------------- */

static struct spec wal_spec(const char *mode)
{
	struct spec s = base_spec(mode);
	s.pages = 64;
	s.buffers = 16;
	s.clients = 2;
	s.transactions = 400;
	s.every = 50;
	return s;
}

static void run_mode(const char *mode, struct pn_sim_result *r)
{
	struct spec s = wal_spec(mode);
	run_spec(&s, r);
	assert_clean_run(r, &s);
	ck_assert_uint_ge(r->m.checkpoints, 4);
}

/* What an FPI of a page as pn_page_init() lays it out costs: the page without its hole. */
static uint64_t image_bytes(uint32_t page_size)
{
	uint8_t *page = malloc(page_size);
	uint16_t off, len;
	ck_assert_ptr_nonnull(page);
	pn_page_init(page, page_size, 1, false);
	pn_page_hole(page, page_size, &off, &len);
	free(page);
	ck_assert_uint_gt(len, 0);
	return page_size - len;
}

START_TEST(test_wal_sizes)
{
	static struct pn_sim_result fpw, nofpw, umbra;
	run_mode("fpw", &fpw);
	run_mode("nofpw", &nofpw);
	run_mode("umbra", &umbra);
	double per_fpw = (double)fpw.m.wal_bytes / (double)fpw.m.transactions;
	double per_nofpw = (double)nofpw.m.wal_bytes / (double)nofpw.m.transactions;
	double per_umbra = (double)umbra.m.wal_bytes / (double)umbra.m.transactions;
	ck_assert_double_ge(per_fpw, 2.0 * per_nofpw);
	ck_assert_double_le(per_umbra, 1.05 * per_nofpw);
	ck_assert_double_ge(per_umbra, 0.95 * per_nofpw);

	ck_assert_uint_eq(nofpw.m.fpi_count, 0);
	ck_assert_uint_eq(umbra.m.fpi_count, 0);
	ck_assert_uint_gt(umbra.m.shifts, 0);
	ck_assert_uint_gt(umbra.m.slots_used, umbra.pages);
	ck_assert_uint_le(umbra.m.slots_used, (uint64_t)umbra.pages * umbra.generations);
	ck_assert_uint_eq(umbra.generations, 3);

	ck_assert_uint_gt(fpw.m.fpi_count, 0);
	ck_assert_uint_eq(fpw.m.fpi_bytes % fpw.m.fpi_count, 0);
	ck_assert_uint_eq(fpw.m.fpi_bytes / fpw.m.fpi_count, image_bytes(8192));
}
END_TEST

/* ---- e. the checker -------------------------------------------------------------------- */

static int check_file(const char *rel, struct pn_check_result *res)
{
	struct pn_scenario sc;
	struct pn_check_options opt = {0};
	load_file(rel, &sc);
	memset(res, 0, sizeof(*res));
	int rc = pn_check_scenario(&sc, &opt, res);
	pn_scenario_free(&sc);
	return rc;
}

static void assert_verdict(const char *rel, bool violation, enum pn_violation_kind kind)
{
	static struct pn_check_result res;
	int rc = check_file(rel, &res);
	ck_assert_msg(rc == 0, "%s: rc %d: %s", rel, rc, res.detail);
	ck_assert(res.ok);
	ck_assert(!res.error);
	ck_assert_int_eq(res.violation, violation);
	ck_assert_int_eq(res.expected_violation, violation);
	ck_assert_uint_gt(res.crash_points, 0);
	ck_assert_uint_gt(res.crash_states, 0);
	ck_assert_uint_gt(res.recoveries, 0);
	if (violation)
		ck_assert_msg(res.kind == kind, "%s: %s, expected %s: %s", rel,
			      pn_violation_name(res.kind), pn_violation_name(kind), res.detail);
}

START_TEST(test_checker_verdicts)
{
	assert_verdict("scenarios/mutants/hint-no-fpi.yaml", true, PN_VIOL_CHECKSUM);
	assert_verdict("scenarios/mutants/hint-no-fpi-control.yaml", false, PN_VIOL_NONE);
	assert_verdict("scenarios/mutants/selector-unsynced.yaml", true, PN_VIOL_RECOVERY);
}
END_TEST

START_TEST(test_checker_deterministic)
{
	static struct pn_check_result a, b;
	const char *rel = "scenarios/mutants/ckpt-active-only.yaml";
	ck_assert_int_eq(check_file(rel, &a), 0);
	ck_assert_int_eq(check_file(rel, &b), 0);
	ck_assert(a.violation);
	ck_assert_uint_gt(a.crash_states, 0);
	ck_assert_uint_eq(a.crash_states, b.crash_states);
	ck_assert_uint_eq(a.crash_points, b.crash_points);
	ck_assert_uint_eq(a.recoveries, b.recoveries);
	ck_assert_uint_eq(a.crash_point, b.crash_point);
	ck_assert_uint_eq(a.schedule, b.schedule);
	ck_assert_int_eq(a.kind, b.kind);
	ck_assert_uint_eq(a.page, b.page);
	ck_assert_str_ne(a.state, "");
	ck_assert_str_eq(a.state, b.state);
}
END_TEST

/* ---- f. the accessors for the layers above ------------------------------------------- */

/* What an ack drain saw, in order. */
struct drained {
	uint32_t xids[256];
	pn_lsn lsns[256];
	uint32_t n;
};

static void drain_one(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns)
{
	struct drained *d = arg;
	(void)latency_ns;
	ck_assert_uint_lt(d->n, PN_ARRAY_LEN(d->xids));
	d->xids[d->n] = xid;
	d->lsns[d->n++] = lsn;
}

/* Each accessor reads the field it names, at every event of a run (the world and the
 * checker see the engine only through them), and a drain empties the ack log in order. */
START_TEST(test_accessors)
{
	struct pn_scenario sc;
	struct pn_world *w = fresh_world(all_modes[_i], &sc);
	struct pn_engine *e = w->e;
	struct pn_geometry geo = pn_engine_geometry(e);
	ck_assert_uint_eq(geo.page_size, e->page_size);
	ck_assert_uint_eq(geo.pages, e->heap_pages + e->slru_pages);
	ck_assert_uint_eq(geo.heap_pages, e->heap_pages);
	ck_assert_uint_eq(geo.generations, e->generations);
	ck_assert_uint_eq(geo.sysid, e->sysid);
	ck_assert_ptr_eq(pn_engine_scenario(e), &sc);
	ck_assert_uint_eq(pn_engine_io_count(e), e->svc.nios);
	for (uint32_t i = 0; i < pn_engine_io_count(e); i++) /* SV1: untouched until used */
		ck_assert_ptr_eq(pn_engine_io(e, i), &e->svc.ios[i]);
	ck_assert_uint_eq(pn_engine_proc_count(e), e->nprocs);
	pn_engine_start(e);
	struct drained d = {0};
	uint64_t acked = 0;
	int step;
	while ((step = pn_world_step(w)) == PN_STEP_EVENT) {
		for (uint32_t p = 0; p < pn_engine_proc_count(e); p++) {
			struct pn_proc_info info;
			pn_engine_proc_info(e, p, &info);
			ck_assert_int_eq(info.kind, e->procs[p].kind);
			ck_assert_int_eq(info.state, e->procs[p].state);
			ck_assert_int_eq(info.op.op, e->procs[p].op.op);
			ck_assert_uint_eq(info.xid, e->procs[p].xid);
			ck_assert_uint_eq(info.wake_token, e->svc.wakes[p].token);
		}
		struct pn_acks_view v;
		pn_engine_acks(e, &v);
		ck_assert_uint_eq(v.n, e->bk.nacked);
		if (v.n > 2) { /* drain now and then: what it hands over is the log, in order */
			uint32_t first = d.n;
			uint32_t xid0 = v.xids[0];
			pn_lsn lsn_last = v.lsns[v.n - 1];
			acked += v.n;
			pn_engine_drain_acks(e, drain_one, &d);
			ck_assert_uint_eq(d.n - first, v.n);
			ck_assert_uint_eq(d.xids[first], xid0);
			ck_assert_uint_eq(d.lsns[d.n - 1], lsn_last);
			ck_assert_uint_eq(e->bk.nacked, 0);
			ck_assert_uint_eq(e->bk.nlat, 0);
			d.n = 0;
		}
		ck_assert(pn_engine_wal_flushed(e) == pn_wal_flushed(&e->wal));
		ck_assert(pn_engine_wal_keep_from(e) == pn_wal_keep_from(&e->wal));
	}
	ck_assert_int_eq(step, PN_STEP_FINISHED);
	acked += e->bk.nacked;
	ck_assert_uint_eq(acked, pn_engine_metrics(e)->commits);
	ck_assert_uint_gt(acked, 0);
	ck_assert_ptr_eq(pn_engine_metrics(e), &e->m);
	ck_assert(!pn_engine_failed(e));
	ck_assert_int_eq(pn_engine_violation_of(e)->kind, PN_VIOL_NONE);
	ck_assert_ptr_eq(pn_engine_error(e), e->svc.error);
	world_drop(w);
	pn_scenario_free(&sc);
}
END_TEST

/* ---- g. checkpoints ---------------------------------------------------------------------- */

/* What each checkpoint of a run did: commits when it began and when it ended. */
struct ckpt_log {
	uint64_t begun, done;
	uint64_t commits_begin[64], commits_end[64];
};

/* Runs sc to its end, noting each checkpoint's begin and end; returns the world's status. */
static int run_logged(const struct pn_scenario *sc, struct ckpt_log *log, struct pn_metrics *m)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.check_each_event = true};
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(pn_world_init(w, sc, &o, NULL), "%s", w->error);
	struct pn_engine *e = w->e;
	memset(log, 0, sizeof(*log));
	pn_engine_start(e);
	int step;
	while ((step = pn_world_step(w)) == PN_STEP_EVENT) {
		for (; log->begun < e->ckpt.seq_begun && log->begun < 64; log->begun++)
			log->commits_begin[log->begun] = e->m.commits;
		for (; log->done < e->ckpt.seq_done && log->done < 64; log->done++)
			log->commits_end[log->done] = e->m.commits;
	}
	*m = e->m;
	world_drop(w);
	return step;
}

static int run_logged_yaml(const char *yaml, struct ckpt_log *log, struct pn_metrics *m)
{
	struct pn_scenario sc;
	char err[PN_ERROR_LEN];
	ck_assert_msg(pn_scenario_load_string("ckpt.yaml", yaml, strlen(yaml), &sc, err,
					      sizeof(err)),
		      "%s", err);
	int step = run_logged(&sc, log, m);
	pn_scenario_free(&sc);
	return step;
}

/* every_transactions N, 4 * N transactions, WAL pacing loose (max_wal_size): 4 checkpoints,
 * at N, 2N, 3N, 4N commits; each of the first three spreads its writes over about
 * completion_target (0.9) of the next N commits, and ends before the next is due; the
 * fourth, requested by the last commit, runs after the workload (no nap: shutdown) and ends.
 * Before the count interval paced them, the writes went out at the I/O rate (a nap ended
 * at its own write's completion): each ended a few commits after its begin. */
START_TEST(test_count_paced)
{
	const uint32_t every = 100;
	char yaml[YAML_LEN];
	snprintf(
		yaml, sizeof(yaml),
		"name: count-paced\nseed: 5\n"
		"storage: {pages: 64, buffers: 16, wal_segment_size: 1MiB}\n"
		"protocol: {mode: fpw, checksums: true}\n"
		"checkpoint: {interval: 0s, every_transactions: %u, max_wal_size: 256MiB}\n"
		"workload: {kind: random, clients: 2, transactions: %u, pages_per_transaction: 2}\n",
		every, 4 * every);
	static struct ckpt_log log;
	struct pn_metrics m;
	ck_assert_int_eq(run_logged_yaml(yaml, &log, &m), PN_STEP_FINISHED);
	ck_assert_uint_eq(m.commits, 4 * every);
	ck_assert_uint_eq(m.checkpoints, 4);
	ck_assert_uint_eq(m.ckpt_xact, 4);
	ck_assert_uint_eq(log.begun, 4);
	ck_assert_uint_eq(log.done, 4);
	ck_assert_uint_eq(m.rec_count[PN_REC_XLOG_CHECKPOINT_ONLINE], 4);
	for (uint32_t i = 0; i < 3; i++) {
		uint64_t span = log.commits_end[i] - log.commits_begin[i];
		ck_assert_uint_ge(log.commits_begin[i], (i + 1) * every);
		ck_assert_uint_le(log.commits_begin[i], (i + 1) * every + 2);
		ck_assert_msg(span >= every / 2 && span <= every,
			      "checkpoint %u: %llu commits from begin to end, expected %u to %u",
			      i + 1, (unsigned long long)span, every / 2, every);
	}
	ck_assert_uint_eq(log.commits_begin[3], 4 * every);
	ck_assert_uint_eq(log.commits_end[3], 4 * every);
}
END_TEST

/* The smallest hot-page run (scenarios/protocols/fpw-hot-page.yaml): one page, two clients,
 * a checkpoint every 10 commits. Before B7 the first checkpoint's write of the page waited
 * for a WAL flush, found the page changed again by then, and waited again, until the
 * workload ended: 1 checkpoint in 40 commits. */
START_TEST(test_hot_page_checkpoint)
{
	struct pn_scenario sc;
	load_file("scenarios/protocols/fpw-hot-page.yaml", &sc);
	ck_assert_uint_eq(sc.storage.pages, 1);
	uint32_t every = sc.checkpoint.every_transactions;
	uint64_t n = sc.workload.transactions;
	ck_assert_uint_eq(n, 4 * every);
	static struct ckpt_log log;
	struct pn_metrics m;
	ck_assert_int_eq(run_logged(&sc, &log, &m), PN_STEP_FINISHED);
	pn_scenario_free(&sc);
	ck_assert_uint_eq(m.commits, n);
	ck_assert_uint_eq(m.checkpoints, 4);
	ck_assert_uint_eq(log.done, 4);
	/* Each ends about an interval after its begin (its nap to 0.9 of it, then the fsyncs
	 * and the control file: a few commits), and the next begins then. */
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_uint_le(log.commits_end[i], log.commits_begin[i] + every + every / 2);
	ck_assert_uint_lt(log.commits_end[1], n);
	ck_assert_uint_eq(m.rec_count[PN_REC_XLOG_CHECKPOINT_ONLINE], 4);
	ck_assert_uint_ge(m.fpi_count, 4); /* the page's first change after each redo point */
}
END_TEST

/* A count-triggered request made while a script's checkpoint is paused is kept and begins
 * when that checkpoint ends, though every client is done by then (checkpoint_resume does
 * not wait for it; the run waits for the request). Before, the request was dropped at the
 * end of the workload: 1 checkpoint. */
START_TEST(test_request_kept)
{
	const char *yaml = "name: request-kept\nseed: 3\n"
			   "storage: {pages: 4, buffers: 4, wal_segment_size: 64KiB}\n"
			   "protocol: {mode: fpw, checksums: true}\n"
			   "checkpoint: {interval: 0s, every_transactions: 1, max_wal_size: 0}\n"
			   "workload:\n  kind: script\n  clients: 2\n  script:\n"
			   "    - {op: checkpoint_begin, client: 0}\n"
			   "    - {op: update, page: 1, client: 1}\n"
			   "    - {op: commit, client: 1}\n"
			   "    - {op: checkpoint_resume, client: 0}\n";
	static struct ckpt_log log;
	struct pn_metrics m;
	ck_assert_int_eq(run_logged_yaml(yaml, &log, &m), PN_STEP_FINISHED);
	ck_assert_uint_eq(m.commits, 1);
	ck_assert_uint_eq(m.checkpoints, 2);
	ck_assert_uint_eq(m.ckpt_request, 1);
	ck_assert_uint_eq(m.ckpt_xact, 1);
	ck_assert_uint_eq(log.begun, 2);
	ck_assert_uint_eq(log.done, 2);
	ck_assert_uint_eq(log.commits_begin[1], 1);
	ck_assert_uint_eq(m.rec_count[PN_REC_XLOG_CHECKPOINT_ONLINE], 2);
}
END_TEST

/* ---- the suite ------------------------------------------------------------------------- */

static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase(s, "determinism");
	tcase_add_loop_test(tc, test_determinism, 0, (int)PN_ARRAY_LEN(all_modes));
	tc = tcase(s, "invariants");
	tcase_add_test(tc, test_r1_wal_before_data);
	tcase_add_test(tc, test_r2_durability);
	tcase_add_test(tc, test_r3_two_generations);
	tcase_add_test(tc, test_r3_protected_slot);
	tcase_add_test(tc, test_r4_mapping);
	tc = tcase(s, "recovery");
	tcase_add_loop_test(tc, test_recovery_round_trip, 0, (int)PN_ARRAY_LEN(crash_modes));
	tcase_add_test(tc, test_recovery_nofpw_torn);
	tc = tcase(s, "wal");
	tcase_add_test(tc, test_wal_sizes);
	tc = tcase(s, "checker");
	tcase_add_test(tc, test_checker_verdicts);
	tcase_add_test(tc, test_checker_deterministic);
	tc = tcase(s, "checkpoints");
	tcase_add_test(tc, test_count_paced);
	tcase_add_test(tc, test_hot_page_checkpoint);
	tcase_add_test(tc, test_request_kept);
	tc = tcase(s, "accessors");
	tcase_add_loop_test(tc, test_accessors, 0, (int)PN_ARRAY_LEN(all_modes));
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(engine_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

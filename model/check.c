/*
 * check.c: the crash-point model checker's driver (model layer). See checker.h.
 */
#include "checker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crashstate.h"
#include "oracle.h"

/* A recovered crash state's outcome, cached by its key. */
struct verdict {
	uint64_t key;
	pn_lsn end;             /* end of the recovered valid WAL */
	uint32_t kind;          /* enum pn_violation_kind; PN_VIOL_NONE if it passed C2/C3 */
	uint32_t page;
	bool used;
};

struct checker {
	const struct pn_scenario *sc;
	const struct pn_check_options *opt;
	struct pn_check_result *res;
	struct pn_world *w;
	struct pn_oracle *oracle;
	struct pn_crash_enum ce;
	struct verdict *cache;
	uint64_t cache_cap, cache_len;
	uint8_t *expected, *found;
	char detail[2048];
	double t0;
	uint32_t schedule;
	uint64_t new_states;
	uint64_t events_done;   /* events of the schedules already run */
	bool interrupted;       /* opt->stop was seen set */
};

static double wall_seconds(void)
{
	/* Wall time for the report only; nothing simulated depends on it. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_wal(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	struct checker *c = arg;
	char why[256];
	if (c->oracle && !pn_oracle_add_why(c->oracle, rec, len, start, end, why, sizeof(why))) {
		fprintf(stderr, "oracle: %s\n", why);
		PN_ASSERT(!"the oracle cannot decode a record the engine wrote");
	}
}

static struct verdict *cache_slot(struct checker *c, uint64_t key)
{
	if (c->cache_len * 2 >= c->cache_cap) {
		uint64_t ncap = c->cache_cap ? c->cache_cap * 2 : 4096;
		struct verdict *n = calloc(ncap, sizeof(*n));
		PN_ASSERT(n != NULL);
		for (uint64_t i = 0; i < c->cache_cap; i++) {
			if (!c->cache[i].used)
				continue;
			uint64_t j = c->cache[i].key & (ncap - 1);
			while (n[j].used)
				j = (j + 1) & (ncap - 1);
			n[j] = c->cache[i];
		}
		free(c->cache);
		c->cache = n;
		c->cache_cap = ncap;
	}
	uint64_t j = key & (c->cache_cap - 1);
	while (c->cache[j].used && c->cache[j].key != key)
		j = (j + 1) & (c->cache_cap - 1);
	return &c->cache[j];
}

static void hex(char *buf, size_t len, const uint8_t *p, uint32_t n)
{
	size_t at = 0;
	for (uint32_t i = 0; i < n && at + 3 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%02x", p[i]);
}

bool pn_check_recovered_pages(struct pn_engine *e, struct pn_oracle *o, pn_lsn end,
			      uint8_t *expected, uint8_t *found, char *detail, size_t detail_len,
			      uint32_t *bad_page)
{
	const struct pn_scenario *sc = e->sc;
	for (uint32_t p = 0; p < e->pages; p++) {
		pn_oracle_page(o, p, end, expected);
		/* the recovered engine's bytes, read through its own seam (the simulated device,
		 * or a real file); pushdown: what the page server reconstructs at the recovered
		 * end (C2 for pushdown). Its page server checked its images' CRCs; the page it
		 * rebuilds is not checksummed until the compute writes it, which it never does */
		bool resident;
		pn_engine_read_page(e, p, end, found, &resident);
		bool headerless = pn_store_is_slru(e, p) && !sc->protocol.slru_headers;
		bool sums = pn_store_is_slru(e, p) ? sc->protocol.slru_headers : sc->protocol.checksums;
		if (!resident && !headerless && !pn_page_verify(found, e->page_size, p, sums)) {
			snprintf(detail, detail_len,
				 "after recovery page %u fails verification (%s): the next read of it "
				 "is an error", p, sums ? "checksum or header" : "header");
			*bad_page = p;
			return false;
		}
		int off = pn_oracle_compare(o, p, expected, found);
		if (off < 0)
			continue;
		char exp[40], got[40];
		uint32_t n = PN_MIN(16u, e->page_size - (uint32_t)off);
		hex(exp, sizeof(exp), expected + off, n);
		hex(got, sizeof(got), found + off, n);
		bool slru = pn_store_is_slru(e, p);
		snprintf(detail, detail_len,
			 "page %u%s differs from the oracle at byte %d: expected %s, found %s; "
			 "expected page LSN %llX, found %llX (recovered WAL ends at %llX)",
			 p, slru ? " (SLRU)" : "", off, exp, got,
			 (unsigned long long)pn_page_lsn(expected),
			 (unsigned long long)pn_page_lsn(found), (unsigned long long)end);
		*bad_page = p;
		return false;
	}
	return true;
}

/* C2: every page against the oracle at the recovered end. */
static bool compare_pages(struct checker *c, struct pn_world *r, pn_lsn end, uint32_t *bad_page)
{
	return pn_check_recovered_pages(&r->e, c->oracle, end, c->expected, c->found, c->detail,
					sizeof(c->detail), bad_page);
}

/* A new world whose device is the crash image of dev under fates (recovery not begun). */
static struct pn_world *crashed_world(struct checker *c, const struct pn_device *dev,
				      const struct pn_write_fate *fates, bool track)
{
	struct pn_world *r = calloc(1, sizeof(*r));
	struct pn_world_options o = {.track = track, .check_each_event = true, .blank = true,
				     .schedule = c->schedule};
	PN_ASSERT(r != NULL);
	if (!pn_world_init(r, c->sc, &o, NULL))
		PN_ASSERT(!"a scenario that ran cannot be recovered from");
	pn_device_crash_image(dev, fates, &r->dev);
	return r;
}

static struct pn_world *recover_image(struct checker *c, const struct pn_device *dev,
				      const struct pn_write_fate *fates, bool track, int *rc)
{
	struct pn_world *r = crashed_world(c, dev, fates, track);
	*rc = pn_world_recover(r);
	pn_assert_context(NULL, NULL);
	return r;
}

static void free_world(struct pn_world *r)
{
	pn_world_free(r);
	free(r);
}

/* C3 and C2 for a recovered world; upto bounds the oracle (nested crashes). */
static void judge(struct checker *c, struct pn_world *r, int rc, pn_lsn upto, struct verdict *v)
{
	v->end = r->e.replay_end;
	v->kind = PN_VIOL_NONE;
	if (rc == 1) {
		v->kind = r->e.viol.kind;
		v->page = r->e.viol.page;
		snprintf(c->detail, sizeof(c->detail), "recovery failed: %s", r->e.viol.detail);
	} else if (rc == 2) {
		v->kind = PN_VIOL_RECOVERY;
		v->page = UINT32_MAX;
		snprintf(c->detail, sizeof(c->detail), "recovery did not finish: %s", r->error);
	} else if (!compare_pages(c, r, PN_MIN(upto, v->end), &v->page)) {
		v->kind = strstr(c->detail, "fails verification") ? PN_VIOL_CHECKSUM : PN_VIOL_EXACTNESS;
	}
}

bool pn_check_acked(const uint32_t *xids, const pn_lsn *lsns, uint64_t n, pn_lsn end,
		    char *detail, size_t detail_len)
{
	for (uint64_t i = 0; i < n; i++) {
		if (lsns[i] <= end)
			continue;
		snprintf(detail, detail_len,
			 "commit of xid %u was acknowledged (its record ends at %llX) but the "
			 "recovered WAL ends at %llX",
			 xids[i], (unsigned long long)lsns[i], (unsigned long long)end);
		return false;
	}
	return true;
}

/* C1: every commit acknowledged by the crash point is in the recovered WAL. */
static bool check_acks(struct checker *c, pn_lsn end)
{
	const struct pn_engine *e = &c->w->e;
	return pn_check_acked(e->acked_xids, e->acked_lsns, e->nacked, end, c->detail, sizeof(c->detail));
}

/* Whether the caller asked the check to stop (a signal); remembered once seen. */
static bool stopping(struct checker *c)
{
	if (c->opt->stop && *c->opt->stop)
		c->interrupted = true;
	return c->interrupted;
}

static void report(struct checker *c, enum pn_violation_kind kind, uint32_t page, uint64_t point,
		   bool in_recovery)
{
	struct pn_check_result *res = c->res;
	res->violation = true;
	res->kind = kind;
	res->page = page;
	res->crash_point = point;
	res->schedule = c->schedule;
	res->in_recovery = in_recovery;
	res->seconds_to_violation = wall_seconds() - c->t0;
	snprintf(res->detail, sizeof(res->detail), "%s", c->detail);
	FILE *f = fmemopen(res->timeline, sizeof(res->timeline) - 1, "w");
	if (f) {
		pn_world_print_trace(c->w, f);
		fclose(f);
	}
}

/*
 * Crash inside recovery: recover the same image again one event at a time; wherever the
 * recovering world's device changed, crash it (all its unsynced writes lost, all
 * persisted, each torn in halves with the rest persisted), recover that, and judge it
 * against the first recovery's expectations.
 */
static bool nested(struct checker *c, const struct pn_write_fate *fates, pn_lsn first_end,
		   uint64_t point)
{
	struct pn_world *r = crashed_world(c, &c->w->dev, fates, true);
	bool ok = pn_recovery_begin(&r->e);
	uint64_t version = r->dev.version;
	struct pn_write_fate *f = NULL;
	while (ok) {
		int step = pn_world_step(r);
		if (step != PN_STEP_EVENT)
			break;
		if (r->dev.version == version)
			continue;
		version = r->dev.version;
		uint32_t n = r->dev.nunsynced;
		f = realloc(f, (n + 1) * sizeof(*f));
		for (uint32_t variant = 0; variant < n + 2 && ok; variant++) {
			for (uint32_t i = 0; i < n; i++)
				f[i] = (struct pn_write_fate){variant == 0 ? PN_FATE_LOST : PN_FATE_PERSISTED, 0};
			if (variant >= 2) {
				/* the first half of the write's units new, the rest old */
				uint32_t units;
				pn_device_unit(&r->dev, r->dev.unsynced[variant - 2].len, &units);
				uint32_t half = (units + 1) / 2;
				f[variant - 2] = (struct pn_write_fate){
					PN_FATE_TORN, half >= 64 ? UINT64_MAX : (1ull << half) - 1};
			}
			int rc;
			struct pn_world *r2 = recover_image(c, &r->dev, f, false, &rc);
			struct verdict v;
			judge(c, r2, rc, first_end, &v);
			c->res->crash_states++;
			c->res->recoveries++;
			if (v.kind == PN_VIOL_NONE && !check_acks(c, v.end))
				v.kind = PN_VIOL_DURABILITY;
			if (v.kind != PN_VIOL_NONE) {
				c->res->recovery_point = r->events;
				pn_crash_fates_encode(&r->dev, f, c->res->recovery_state,
						      sizeof(c->res->recovery_state));
				size_t l = strlen(c->detail);
				snprintf(c->detail + l, sizeof(c->detail) - l,
					 " [after a crash at event %llu of recovery]",
					 (unsigned long long)r->events);
				report(c, (enum pn_violation_kind)v.kind, v.page, point, true);
				ok = false;
			}
			free_world(r2);
		}
	}
	free(f);
	free_world(r);
	return ok;
}

/* All crash states of the current point. Returns false at the first violation. */
static bool explore_point(struct checker *c, uint64_t point)
{
	struct pn_check_result *res = c->res;
	pn_crash_enum_begin(&c->ce, &c->w->dev, c->sc, point ^ ((uint64_t)c->schedule << 40));
	res->crash_points++;
	bool between = pn_engine_ckpt_phase(&c->w->e) == PN_CKPT_PHASE_AFTER_FSYNC;
	PN_TESTCASE("crash between a checkpoint's data fsync and its control-file update", between);
	while (!stopping(c) && pn_crash_enum_next(&c->ce)) {
		uint64_t key = pn_crash_enum_key(&c->ce);
		struct verdict *slot = cache_slot(c, key);
		bool torn_wal = false;
		for (uint32_t r = 0; r < c->ce.nrel; r++)
			torn_wal |= c->ce.fates[c->ce.rel[r]].fate == PN_FATE_TORN &&
				    c->w->dev.unsynced[c->ce.rel[r]].file == PN_FILE_WAL;
		PN_TESTCASE("a crash state tears a WAL write (torn WAL tail)", torn_wal);
		res->crash_states++;
		if (!slot->used) {
			int rc;
			struct pn_world *r = recover_image(c, &c->w->dev, c->ce.fates, false, &rc);
			struct verdict v = {.key = key, .used = true};
			judge(c, r, rc, UINT64_MAX, &v);
			free_world(r);
			res->recoveries++;
			c->new_states++;
			*slot = v;
			c->cache_len++;
			if (v.kind == PN_VIOL_NONE && c->opt->nested_every &&
			    c->new_states % c->opt->nested_every == 0 &&
			    !nested(c, c->ce.fates, v.end, point)) {
				pn_crash_enum_encode(&c->ce, res->state, sizeof(res->state));
				pn_crash_enum_describe(&c->ce, res->state_text, sizeof(res->state_text));
				return false;
			}
		}
		struct verdict v = *slot; /* a failing state stops the search: cached ones pass C2/C3 */
		if (v.kind == PN_VIOL_NONE && !check_acks(c, v.end))
			v.kind = PN_VIOL_DURABILITY;
		if (v.kind != PN_VIOL_NONE) {
			pn_crash_enum_encode(&c->ce, res->state, sizeof(res->state));
			pn_crash_enum_describe(&c->ce, res->state_text, sizeof(res->state_text));
			report(c, (enum pn_violation_kind)v.kind, v.page, point, false);
			return false;
		}
	}
	return !c->interrupted;
}

static bool point_selected(const struct pn_scenario *sc, uint64_t point)
{
	switch (sc->crash.points) {
	case PN_POINTS_EVERY: return point % sc->crash.every == 0;
	case PN_POINTS_LIST:
		for (uint32_t i = 0; i < sc->crash.list_len; i++)
			if (sc->crash.list[i] == point)
				return true;
		return false;
	default: return true;
	}
}

/* The caller's progress hook sees only the result's counts, never the world (which may
 * already be freed when the last report is due). */
static void progress(struct checker *c)
{
	if (c->opt->progress)
		c->opt->progress(c->opt->progress_arg, c->res);
}

struct pn_oracle *pn_check_oracle_new(const struct pn_engine *e)
{
	uint8_t *initial = malloc((size_t)e->pages * e->page_size);
	PN_ASSERT(initial != NULL);
	for (uint32_t p = 0; p < e->pages; p++)
		pn_engine_initial_page(e, p, initial + (size_t)p * e->page_size);
	struct pn_oracle *o = pn_oracle_new(e->heap_pages, e->slru_pages, e->page_size,
					    e->sc->protocol.slru_headers, initial);
	free(initial);
	PN_ASSERT(o != NULL);
	return o;
}

static void oracle_start(struct checker *c)
{
	c->oracle = pn_check_oracle_new(&c->w->e);
	c->w->on_wal = on_wal;
	c->w->on_wal_arg = c;
}

/* Replay of a crash inside recovery: recover again up to the recorded event, crash there in
 * the recorded state, recover that, judge it against the first recovery's end. */
static bool replay_nested(struct checker *c, const struct pn_write_fate *fates, pn_lsn first_end,
			  struct verdict *v)
{
	const struct pn_check_options *opt = c->opt;
	struct pn_world *r = crashed_world(c, &c->w->dev, fates, true);
	bool ok = pn_recovery_begin(&r->e);
	while (ok && r->events < opt->replay_recovery_point && pn_world_step(r) == PN_STEP_EVENT)
		;
	struct pn_write_fate *f = calloc(r->dev.nunsynced + 1, sizeof(*f));
	PN_ASSERT(f != NULL);
	if (!pn_crash_fates_decode(&r->dev, opt->replay_recovery_state, f)) {
		snprintf(c->res->detail, sizeof(c->res->detail),
			 "replay.recovery_state '%s' does not name unsynced writes of recovery event %llu",
			 opt->replay_recovery_state, (unsigned long long)opt->replay_recovery_point);
		free(f);
		free_world(r);
		return false;
	}
	if (opt->timeline) {
		fprintf(opt->timeline, "recovery, up to its crash:\n");
		pn_world_print_trace(r, opt->timeline);
	}
	int rc;
	struct pn_world *r2 = recover_image(c, &r->dev, f, false, &rc);
	judge(c, r2, rc, first_end, v);
	c->res->in_recovery = true;
	c->res->recovery_point = opt->replay_recovery_point;
	snprintf(c->res->recovery_state, sizeof(c->res->recovery_state), "%s", opt->replay_recovery_state);
	free_world(r2);
	free_world(r);
	free(f);
	return true;
}

/* Replay: one point, one state, with the timeline printed. */
static int replay_point(struct checker *c)
{
	struct pn_check_result *res = c->res;
	const struct pn_check_options *opt = c->opt;
	while (c->w->events < opt->replay_point) {
		int step = pn_world_step(c->w);
		if (step == PN_STEP_VIOLATION) {
			snprintf(c->detail, sizeof(c->detail), "%s", c->w->e.viol.detail);
			report(c, c->w->e.viol.kind, c->w->e.viol.page, c->w->events, false);
			return 1;
		}
		if (step != PN_STEP_EVENT)
			break;
	}
	struct pn_write_fate *f = calloc(c->w->dev.nunsynced + 1, sizeof(*f));
	PN_ASSERT(f != NULL);
	if (!pn_crash_fates_decode(&c->w->dev, opt->replay_state, f)) {
		snprintf(res->detail, sizeof(res->detail),
			 "replay.state '%s' does not name unsynced writes of crash point %llu",
			 opt->replay_state, (unsigned long long)opt->replay_point);
		free(f);
		res->error = true;
		return 2;
	}
	if (opt->timeline)
		pn_world_print_trace(c->w, opt->timeline);
	int rc;
	struct pn_world *r = recover_image(c, &c->w->dev, f, false, &rc);
	struct verdict v;
	judge(c, r, rc, UINT64_MAX, &v);
	free_world(r);
	if (v.kind == PN_VIOL_NONE && opt->replay_recovery_point && !replay_nested(c, f, v.end, &v)) {
		free(f);
		res->error = true;
		return 2;
	}
	free(f);
	res->crash_points = res->crash_states = res->recoveries = 1;
	if (v.kind == PN_VIOL_NONE && !check_acks(c, v.end))
		v.kind = PN_VIOL_DURABILITY;
	snprintf(res->state, sizeof(res->state), "%s", opt->replay_state);
	if (v.kind != PN_VIOL_NONE)
		report(c, (enum pn_violation_kind)v.kind, v.page, opt->replay_point, false);
	return v.kind != PN_VIOL_NONE;
}

/* One schedule run: 0 passed, 1 violation found, 2 could not run. */
static int run_schedule(struct checker *c)
{
	struct pn_check_result *res = c->res;
	struct pn_world_options o = {.track = c->sc->crash.present || c->opt->replay,
				     .check_each_event = true, .schedule = c->schedule};
	c->w = calloc(1, sizeof(*c->w));
	PN_ASSERT(c->w != NULL);
	if (!pn_world_init(c->w, c->sc, &o, NULL)) {
		snprintf(res->detail, sizeof(res->detail), "%s", c->w->error);
		free(c->w);
		c->w = NULL;
		return 2;
	}
	if (c->sc->crash.present)
		oracle_start(c);
	pn_engine_start(&c->w->e);
	if (c->opt->replay)
		return replay_point(c);
	uint64_t version = UINT64_MAX, acked = UINT64_MAX;
	for (;;) {
		int step = pn_world_step(c->w);
		uint64_t point = c->w->events;
		if (step == PN_STEP_VIOLATION) {
			snprintf(c->detail, sizeof(c->detail), "%s (a runtime invariant)", c->w->e.viol.detail);
			report(c, c->w->e.viol.kind, c->w->e.viol.page, point, false);
			return 1;
		}
		if (step == PN_STEP_STALL) {
			snprintf(res->detail, sizeof(res->detail), "%s", c->w->error);
			return 2;
		}
		bool changed = c->w->dev.version != version || c->w->e.nacked != acked;
		res->events = c->events_done + point;
		if (c->sc->crash.present && changed && point_selected(c->sc, point)) {
			version = c->w->dev.version;
			acked = c->w->e.nacked;
			if (!explore_point(c, point))
				return c->interrupted ? 3 : 1;
			progress(c);
		} else if (point % PN_CHECK_PROGRESS_EVENTS == 0) {
			progress(c);
		}
		if (stopping(c))
			return 3;
		if (step == PN_STEP_FINISHED)
			return 0;
	}
}

static void checker_free(struct checker *c)
{
	if (c->w) {
		pn_world_free(c->w);
		free(c->w);
		c->w = NULL;
	}
	if (c->oracle)
		pn_oracle_free(c->oracle);
	c->oracle = NULL;
}

int pn_check_scenario(const struct pn_scenario *sc, const struct pn_check_options *opt,
		      struct pn_check_result *res)
{
	struct checker c = {.sc = sc, .opt = opt, .res = res};
	memset(res, 0, sizeof(*res));
	snprintf(res->name, sizeof(res->name), "%s", sc->name);
	res->expected_violation = sc->expect.violation;
	c.t0 = wall_seconds();
	c.expected = malloc(sc->storage.page_size);
	c.found = malloc(sc->storage.page_size);
	pn_crash_enum_init(&c.ce);
	int rc = 0;
	uint32_t first = opt->replay ? opt->replay_schedule : 0;
	uint32_t last = opt->replay ? opt->replay_schedule + 1 : sc->schedules.runs;
	for (c.schedule = first; c.schedule < last && rc == 0; c.schedule++) {
		/* keys name durable-image versions of one run: a new run starts a new cache */
		if (c.cache)
			memset(c.cache, 0, c.cache_cap * sizeof(*c.cache));
		c.cache_len = 0;
		rc = run_schedule(&c);
		if (c.w)
			res->events = c.events_done + c.w->events;
		c.events_done = res->events;
		checker_free(&c);
		progress(&c);
	}
	pn_crash_enum_free(&c.ce);
	free(c.cache);
	free(c.expected);
	free(c.found);
	res->seconds = wall_seconds() - c.t0;
	if (rc == 3) {
		res->interrupted = true;
		return 3;
	}
	if (rc == 2) {
		res->error = true;
		return 2;
	}
	res->ok = res->violation == res->expected_violation;
	return res->ok ? 0 : 1;
}

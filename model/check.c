/*
 * check.c: the crash-point model checker's driver (model layer). See checker.h.
 */
#include "checker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "crashstate.h"
#include "explore.h"
#include "oracle.h"
#include "unit.h"

/* A recovered crash state's outcome, cached by its key. */
struct verdict {
	uint64_t key;
	pn_lsn end;    /* end of the recovered valid WAL */
	uint32_t kind; /* enum pn_violation_kind; PN_VIOL_NONE if it passed C2/C3 */
	uint32_t page;
	bool used;
	bool known; /* verdict computed (false: key met in a unit's survey only) */
};

/* A fully recovered state of the current crash point kept for derivation (docs/checker.md,
 * "Derived crash states"): its recovered world (judged, otherwise untouched), its fates, the
 * ranges its recovery read from the crash image and wrote (sorted, merged; R and W), those
 * its judgement read (J), recovery's outcome and the coverage hits recovery added; when its
 * judgement passed, its WAL end and the coverage hits the judgement added. */
#define BASES_MAX 8u
/* After this many states of a point in a row that no base fitted, the point's remaining
 * states are recovered without keeping bases (where recovery reads every unsynced write,
 * keeping them costs without a gain). A function of the point's states alone:
 * deterministic. */
#define REFUSED_MAX 64u
struct base {
	struct pn_world *r;
	struct pn_write_fate *fates;
	struct pn_range *reads, *writes, *judged;
	uint32_t nreads, nwrites, njudged, nfates;
	struct pn_summary_read *sums; /* recovery's summarized reads (sim/device.h DV8) */
	uint32_t nsums;
	int rc;
	uint64_t (*cov)[2];
	size_t ncov;
	bool passed; /* its judgement passed, at WAL end `end`, adding the hits jcov */
	pn_lsn end;
	uint64_t (*jcov)[2];
	size_t njcov;
};

/* A range of a base's recovered image replaced by the derived state's bytes; saved holds
 * what it held, then the state's bytes (len each). */
struct patch {
	struct pn_range at;
	uint8_t *saved;
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
	/* the oracle's pages at one recovered end, for the states of one crash point (the
	 * oracle changes only between points): exp_have[p] is an enum exp_state; from
	 * EXP_FILLED on, page p of exp_pages is filled, from EXP_PASSED on page p of
	 * pass_pages holds recovered bytes that passed C2 against it (compare_pages) */
	uint8_t *exp_pages, *pass_pages;
	uint8_t *exp_have;
	uint32_t exp_npages;
	pn_lsn exp_end;
	bool exp_valid;
	uint64_t cross_checked; /* states judged twice (--cross-check) */
	char detail[2048];
	double t0;
	uint32_t schedule;
	uint64_t new_states;
	uint64_t events_done;       /* events of the schedules already run */
	bool interrupted;           /* opt->stop was seen set */
	struct pn_world_twin *twin; /* --twice: the determinism self-check */
	/* exploring one work unit (unit.h); NULL: the whole scenario */
	const struct pn_unit *unit;
	struct pn_unit_result *ur;
	bool surveying; /* past the unit's range (a head's budget): keys only */
	bool cov_taken; /* ur->cov holds the range's coverage hits (U4) */
	/* the search over schedules (explore.h); NULL: the seeded schedule alone */
	struct pn_explore *x;
	uint64_t *write_hash; /* x set: each unsynced write's place and bytes, at this point */
	uint32_t write_hash_cap;
	/* derivation (opt->derive): the point's bases, the next to replace, scratch */
	struct base bases[BASES_MAX];
	uint32_t nbases, base_next;
	uint32_t refused;           /* states of this point no base fitted, in a row */
	struct pn_range_log log[3]; /* a base's recovery reads, writes, judgement reads */
	struct pn_summary_log slog; /* a base's recovery summarized reads (DV8) */
	uint8_t *cmp[2];
	uint32_t cmp_cap;
	struct patch *patch;
	uint32_t npatch, patch_cap;
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

/* C2 for page p of a recovered engine whose bytes `found` were just read (resident: from its
 * buffer pool) against the oracle's page `expected`. */
static bool judge_page(struct pn_engine *e, const struct pn_oracle *o, uint32_t p, pn_lsn end,
		       const uint8_t *expected, const uint8_t *found, bool resident, char *detail,
		       size_t detail_len)
{
	const struct pn_scenario *sc = pn_engine_scenario(e);
	struct pn_geometry geo = pn_engine_geometry(e);
	bool headerless = pn_engine_is_slru(e, p) && !sc->protocol.slru_headers;
	bool sums = pn_engine_is_slru(e, p) ? sc->protocol.slru_headers : sc->protocol.checksums;
	if (!resident && !headerless && !pn_page_verify(found, geo.page_size, p, sums)) {
		snprintf(detail, detail_len,
			 "after recovery page %u fails verification (%s): the next read of it is "
			 "an error",
			 p, sums ? "checksum or header" : "header");
		return false;
	}
	int off = pn_oracle_compare(o, p, expected, found);
	if (off < 0)
		return true;
	char exp[40], got[40];
	uint32_t n = PN_MIN(16u, geo.page_size - (uint32_t)off);
	hex(exp, sizeof(exp), expected + off, n);
	hex(got, sizeof(got), found + off, n);
	snprintf(detail, detail_len,
		 "page %u%s differs from the oracle at byte %d: expected %s, found %s; expected "
		 "page LSN %llX, found %llX (recovered WAL ends at %llX)",
		 p, pn_engine_is_slru(e, p) ? " (SLRU)" : "", off, exp, got,
		 (unsigned long long)pn_page_lsn(expected), (unsigned long long)pn_page_lsn(found),
		 (unsigned long long)end);
	return false;
}

/* C2 for page p of a recovered engine against the oracle's page `expected`. */
static bool recovered_page(struct pn_engine *e, const struct pn_oracle *o, uint32_t p, pn_lsn end,
			   const uint8_t *expected, uint8_t *found, char *detail, size_t detail_len)
{
	/* the recovered engine's bytes, read through its own seam (the simulated device, or a
	 * real file); pushdown: what the page server reconstructs at the recovered end (C2 for
	 * pushdown). Its page server checked its images' CRCs; the page it rebuilds is not
	 * checksummed until the compute writes it, which it never does */
	bool resident;
	pn_engine_read_page(e, p, end, found, &resident);
	return judge_page(e, o, p, end, expected, found, resident, detail, detail_len);
}

/* I5 after recovery: the relation's size is the oracle's (a page that should not exist,
 * or one missing, is a C2 difference: PN_VIOL_EXACTNESS); pages at or past it are not
 * compared. */
static bool recovered_size(struct pn_engine *e, const struct pn_oracle *o, pn_lsn end,
			   uint32_t *nblocks, char *detail, size_t detail_len, uint32_t *bad_page)
{
	uint32_t want = pn_oracle_rel_blocks(o, end), got = pn_engine_rel_blocks(e);
	*nblocks = want;
	if (want == got)
		return true;
	snprintf(detail, detail_len,
		 "after recovery the relation has %u blocks, the oracle expects %u (recovered WAL "
		 "ends at %llX)",
		 got, want, (unsigned long long)end);
	*bad_page = PN_MIN(want, got);
	return false;
}

bool pn_check_recovered_pages(struct pn_engine *e, struct pn_oracle *o, pn_lsn end,
			      uint8_t *expected, uint8_t *found, char *detail, size_t detail_len,
			      uint32_t *bad_page)
{
	struct pn_geometry geo = pn_engine_geometry(e);
	uint32_t nblocks;
	if (!recovered_size(e, o, end, &nblocks, detail, detail_len, bad_page))
		return false;
	for (uint32_t p = 0; p < geo.pages; p++) {
		if (p >= nblocks && p < geo.heap_pages)
			continue; /* truncated: no page to compare */
		pn_oracle_page(o, p, end, expected);
		if (!recovered_page(e, o, p, end, expected, found, detail, detail_len)) {
			*bad_page = p;
			return false;
		}
	}
	return true;
}

enum exp_state {
	EXP_NONE,
	EXP_FILLED,
	EXP_PASSED,          /* passed from the buffer pool (not verified) */
	EXP_PASSED_VERIFIED, /* passed as read back from storage (checksum and header verified) */
};

/* The oracle's page p at end, from the point's table (filled on first use). Valid while
 * the oracle takes no record: within one crash point (explore_point clears the table). */
static const uint8_t *expected_page(struct checker *c, uint32_t p, pn_lsn end)
{
	size_t size = c->sc->storage.page_size;
	if (!c->exp_valid || c->exp_end != end) {
		memset(c->exp_have, 0, c->exp_npages * sizeof(*c->exp_have));
		c->exp_end = end;
		c->exp_valid = true;
	}
	PN_ASSERT(p < c->exp_npages);
	if (c->exp_have[p] == EXP_NONE) {
		pn_oracle_page(c->oracle, p, end, c->exp_pages + p * size);
		c->exp_have[p] = EXP_FILLED;
	}
	return c->exp_pages + p * size;
}

/*
 * C2: every page against the oracle at the recovered end; fast: the oracle's pages from the
 * point's table (the same bytes as pn_oracle_page's, --cross-check compares), and a page
 * whose recovered bytes equal, byte for byte, bytes that already passed C2 for the same page
 * at the same end within this crash point passes without the checksum and the masked
 * comparison. That cannot change a verdict: judge_page is a function of the page's number,
 * the end, the oracle's page there (fixed within a point: the oracle takes no record while
 * its states are judged, and the table is cleared when the end changes), the scenario's
 * checksum settings, whether the bytes came from the buffer pool (resident pages are not
 * verified) and the bytes; equal inputs give the equal result. Bytes that passed only from
 * the pool (EXP_PASSED, never verified) stand for a resident page only; bytes that passed
 * verification (EXP_PASSED_VERIFIED) stand for either.
 */
static bool compare_pages(struct checker *c, struct pn_world *r, pn_lsn end, uint32_t *bad_page,
			  bool fast)
{
	if (!fast)
		return pn_check_recovered_pages(r->e, c->oracle, end, c->expected, c->found,
						c->detail, sizeof(c->detail), bad_page);
	uint32_t pages = pn_engine_geometry(r->e).pages;
	size_t size = c->sc->storage.page_size;
	if (c->exp_npages < pages) {
		free(c->exp_pages);
		free(c->pass_pages);
		free(c->exp_have);
		c->exp_pages = malloc((size_t)pages * size);
		c->pass_pages = malloc((size_t)pages * size);
		c->exp_have = calloc(pages, sizeof(*c->exp_have));
		PN_ASSERT(c->exp_pages != NULL && c->pass_pages != NULL && c->exp_have != NULL);
		c->exp_npages = pages;
		c->exp_valid = false;
	}
	uint32_t nblocks, heap = pn_engine_geometry(r->e).heap_pages;
	if (!recovered_size(r->e, c->oracle, end, &nblocks, c->detail, sizeof(c->detail), bad_page))
		return false;
	for (uint32_t p = 0; p < pages; p++) {
		if (p >= nblocks && p < heap)
			continue; /* truncated: no page to compare */
		const uint8_t *exp = expected_page(c, p, end);
		uint8_t *passed = c->pass_pages + p * size;
		bool resident;
		pn_engine_read_page(r->e, p, end, c->found, &resident);
		uint8_t st = c->exp_have[p];
		if ((st == EXP_PASSED_VERIFIED || (st == EXP_PASSED && resident)) &&
		    memcmp(c->found, passed, size) == 0)
			continue;
		if (!judge_page(r->e, c->oracle, p, end, exp, c->found, resident, c->detail,
				sizeof(c->detail))) {
			memcpy(c->expected, exp, size);
			*bad_page = p;
			return false;
		}
		if (st != EXP_PASSED_VERIFIED) {
			memcpy(passed, c->found, size);
			c->exp_have[p] = resident ? EXP_PASSED : EXP_PASSED_VERIFIED;
		}
	}
	return true;
}

/* A new world whose device is the crash image of dev under fates (recovery not begun). */
static struct pn_world *crashed_world(struct checker *c, const struct pn_device *dev,
				      const struct pn_write_fate *fates, bool track)
{
	struct pn_world *r = calloc(1, sizeof(*r));
	struct pn_world_options o = {.track = track,
				     .check_each_event = true,
				     .blank = true,
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

/* C3 and C2 for a recovered world; upto bounds the oracle (nested crashes); fast: C2 from
 * the point's table of oracle pages. */
static void judge(struct checker *c, struct pn_world *r, int rc, pn_lsn upto, struct verdict *v,
		  bool fast)
{
	v->end = pn_engine_recovery_end(r->e);
	v->kind = PN_VIOL_NONE;
	if (rc == 1) {
		const struct pn_violation *viol = pn_engine_violation_of(r->e);
		v->kind = viol->kind;
		v->page = viol->page;
		snprintf(c->detail, sizeof(c->detail), "recovery failed: %s", viol->detail);
	} else if (rc == 2) {
		v->kind = PN_VIOL_RECOVERY;
		v->page = UINT32_MAX;
		snprintf(c->detail, sizeof(c->detail), "recovery did not finish: %s", r->error);
	} else if (!compare_pages(c, r, PN_MIN(upto, v->end), &v->page, fast)) {
		v->kind = strstr(c->detail, "fails verification") ? PN_VIOL_CHECKSUM
								  : PN_VIOL_EXACTNESS;
	}
}

bool pn_check_acked(const uint32_t *xids, const pn_lsn *lsns, uint64_t n, pn_lsn end, char *detail,
		    size_t detail_len)
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
	struct pn_acks_view acks;
	pn_engine_acks(c->w->e, &acks);
	return pn_check_acked(acks.xids, acks.lsns, acks.n, end, c->detail, sizeof(c->detail));
}

/* C1 after C2/C3: a state that passed them fails when an acknowledged commit is lost. Every
 * verdict, of a crash of the run or of one inside recovery, in check and in replay alike, is
 * complete only after this; a crash inside recovery is tried only on a state that passed it. */
static void judge_acks(struct checker *c, struct verdict *v)
{
	if (v->kind == PN_VIOL_NONE && !check_acks(c, v->end))
		v->kind = PN_VIOL_DURABILITY;
}

/* A violation found by a crash at event `event` of the recovery, in crash state `state`: the
 * result records that crash and the detail says so (check and replay alike). */
static void nested_found(struct checker *c, uint64_t event, const char *state)
{
	c->res->recovery_point = event;
	snprintf(c->res->recovery_state, sizeof(c->res->recovery_state), "%s", state);
	size_t l = strlen(c->detail);
	snprintf(c->detail + l, sizeof(c->detail) - l, " [after a crash at event %llu of recovery]",
		 (unsigned long long)event);
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
	res->choices[0] = 0;
	if (c->x && !pn_schedule_format(&c->x->taken, res->choices, sizeof(res->choices)))
		snprintf(res->choices, sizeof(res->choices), "%s", "...");
	res->seconds_to_violation = wall_seconds() - c->t0;
	snprintf(res->detail, sizeof(res->detail), "%s", c->detail);
	FILE *f = fmemopen(res->timeline, sizeof(res->timeline) - 1, "w");
	if (f) {
		pn_world_print_trace(c->w, f);
		fclose(f);
	}
}

/*
 * --cross-check N: every Nth state judged (and every state whose verdict is a violation) is
 * recovered again in a new world from its fates and judged the full way (C2 with the
 * oracle's pages made afresh, no verdict cache: the reference path); any difference from
 * the verdict the check uses (v: cached, or judged with the point's table of oracle pages)
 * aborts the check, exit 3. Neither counted nor seen by coverage (its hits are undone), so
 * the results are those of a check without it. rec_event: the event of the recovery
 * crashed in (0: a crash of the run).
 */
static size_t cov_copy(uint64_t (*out)[2], bool restore);

/* A verdict as the cross-check reports it. */
static void verdict_text(const struct verdict *v, char *buf, size_t len)
{
	if (v->kind == PN_VIOL_NONE)
		snprintf(buf, len, "pass, recovered WAL end %llX", (unsigned long long)v->end);
	else
		snprintf(buf, len, "%s at page %u, recovered WAL end %llX",
			 pn_violation_name((enum pn_violation_kind)v->kind), v->page,
			 (unsigned long long)v->end);
}
static void cross_check(struct checker *c, const struct pn_device *dev,
			const struct pn_write_fate *fates, pn_lsn upto, struct verdict *v,
			uint64_t point, uint64_t rec_event)
{
	uint64_t every = c->opt->cross_check_every, n = ++c->cross_checked;
	if (c->opt->cross_check_fault && n == c->opt->cross_check_fault)
		v->end++; /* test hook: a fast path that is wrong */
	if (!every || (n % every != 0 && v->kind == PN_VIOL_NONE))
		return;
	struct pn_testcase_site *const *sites;
	size_t nsites = pn_testcase_all(&sites);
	uint64_t(*saved)[2] = calloc(nsites + 1, sizeof(*saved));
	char *detail = malloc(sizeof(c->detail));
	PN_ASSERT(saved != NULL && detail != NULL);
	cov_copy(saved, false);
	memcpy(detail, c->detail, sizeof(c->detail));
	int rc;
	struct verdict full = {0};
	struct pn_world *r = recover_image(c, dev, fates, false, &rc);
	judge(c, r, rc, upto, &full, false);
	free_world(r);
	cov_copy(saved, true);
	bool same = full.kind == v->kind && full.end == v->end &&
		    (full.kind == PN_VIOL_NONE || full.page == v->page);
	if (!same) {
		char in_rec[64] = "";
		if (rec_event)
			snprintf(in_rec, sizeof(in_rec),
				 ", crash inside recovery at its event %llu",
				 (unsigned long long)rec_event);
		char fast[128], slow[128];
		verdict_text(v, fast, sizeof(fast));
		verdict_text(&full, slow, sizeof(slow));
		fprintf(stderr,
			"penumbra check: cross-check failed: %s, schedule %u, crash point %llu%s, "
			"judged state %llu: the fast path says %s, the full path %s%s%s\n",
			c->sc->name, c->schedule, (unsigned long long)point, in_rec,
			(unsigned long long)n, fast, slow, full.kind ? ": " : "",
			full.kind ? c->detail : "");
		exit(3);
	}
	memcpy(c->detail, detail, sizeof(c->detail));
	free(detail);
	free(saved);
}

/* One crash state inside recovery (r: the recovering world, stopped after an event): recover
 * it, judge it against the first recovery's end. Returns false at a violation (reported). */
static bool nested_state(struct checker *c, const struct pn_world *r,
			 const struct pn_crash_enum *ce, pn_lsn first_end, uint64_t point)
{
	int rc;
	struct verdict v;
	struct pn_world *r2 = recover_image(c, &r->dev, ce->fates, false, &rc);
	judge(c, r2, rc, first_end, &v, true);
	free_world(r2);
	cross_check(c, &r->dev, ce->fates, first_end, &v, point, r->events);
	c->res->crash_states++;
	c->res->recoveries++;
	judge_acks(c, &v);
	if (v.kind == PN_VIOL_NONE)
		return true;
	char state[sizeof(c->res->recovery_state)];
	pn_crash_enum_encode(ce, state, sizeof(state));
	nested_found(c, r->events, state);
	report(c, (enum pn_violation_kind)v.kind, v.page, point, true);
	return false;
}

/*
 * Crash inside recovery: recover the same image again one event at a time; wherever the
 * recovering world's device changed, crash it in the states of the scenario's crash model
 * that pn_crash_enum_begin_nested() lists (all lost, all persisted, each write torn as
 * crash.tear allows), recover each, and judge it against the first recovery's expectations.
 */
static bool nested(struct checker *c, const struct pn_write_fate *fates, pn_lsn first_end,
		   uint64_t point)
{
	struct pn_world *r = crashed_world(c, &c->w->dev, fates, true);
	struct pn_crash_enum ce;
	bool ok = true, begun = pn_engine_recover(r->e); /* it began once: it does again */
	uint64_t version = r->dev.version;
	pn_crash_enum_init(&ce);
	while (begun && ok && pn_world_step(r) == PN_STEP_EVENT) {
		if (r->dev.version == version)
			continue;
		version = r->dev.version;
		pn_crash_enum_begin_nested(&ce, &r->dev, c->sc);
		while (ok && pn_crash_enum_next(&ce))
			ok = nested_state(c, r, &ce, first_end, point);
	}
	pn_crash_enum_free(&ce);
	free_world(r);
	return ok;
}

/* ---- coverage hits of a unit (unit.h U2, U4) ---- */
/* The hits of every site into out (n of them), or, restore, out back into the sites. */
static size_t cov_copy(uint64_t (*out)[2], bool restore)
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites);
	for (size_t i = 0; i < n; i++) {
		if (restore) {
			sites[i]->hits_true = out[i][0];
			sites[i]->hits_false = out[i][1];
		} else {
			out[i][0] = sites[i]->hits_true;
			out[i][1] = sites[i]->hits_false;
		}
	}
	return n;
}

static void cov_zero(void)
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites);
	for (size_t i = 0; i < n; i++)
		sites[i]->hits_true = sites[i]->hits_false = 0;
}

/* The unit's range ends: its hits so far are its coverage (U4). */
static void cov_take(struct checker *c)
{
	struct pn_unit_result *ur = c->ur;
	if (c->cov_taken)
		return;
	struct pn_testcase_site *const *sites;
	ur->ncov = (uint32_t)pn_testcase_all(&sites);
	ur->cov = calloc(ur->ncov + 1, sizeof(*ur->cov));
	PN_ASSERT(ur->cov != NULL);
	cov_copy(ur->cov, false);
	c->cov_taken = true;
}

/* A state a unit's survey met before its range (U2): recovered again for its verdict (the WAL
 * end C1 needs), neither counted nor crashed inside recovery, its coverage hits undone. */
static void relearn(struct checker *c, struct verdict *slot)
{
	struct pn_testcase_site *const *sites;
	size_t n = pn_testcase_all(&sites);
	uint64_t(*saved)[2] = calloc(n + 1, sizeof(*saved));
	PN_ASSERT(saved != NULL && c->unit != NULL);
	cov_copy(saved, false);
	int rc;
	struct pn_world *r = recover_image(c, &c->w->dev, c->ce.fates, false, &rc);
	judge(c, r, rc, UINT64_MAX, slot, true);
	free_world(r);
	slot->known = true;
	cov_copy(saved, true);
	free(saved);
	c->ur->relearned++;
	pn_unit_keys_add(&c->ur->relearnt, slot->key, slot->end);
}

/* U6: a state met before the unit's range, its C1 check deferred: its key and the end C1
 * needs (every acknowledged commit at or before it) kept for the unit's lookups. */
static void defer_acks(struct checker *c, uint64_t key)
{
	struct pn_acks_view acks;
	pn_lsn need = 0;
	pn_engine_acks(c->w->e, &acks);
	for (uint64_t i = 0; i < acks.n; i++)
		need = PN_MAX(need, acks.lsns[i]);
	pn_unit_keys_add(&c->ur->asked, key, need);
}

/* The keys of a crash point's states, none recovered (U2); record: a surveyed point. */
static void survey_point(struct checker *c, uint64_t point, bool record)
{
	struct pn_unit_result *ur = c->ur;
	uint64_t states = 0, fresh = 0;
	pn_crash_enum_begin(&c->ce, &c->w->dev, c->sc, point ^ ((uint64_t)c->schedule << 40));
	while (pn_crash_enum_next(&c->ce)) {
		uint64_t key = pn_crash_enum_key(&c->ce);
		struct verdict *slot = cache_slot(c, key);
		states++;
		if (slot->used)
			continue;
		*slot = (struct verdict){.key = key, .used = true};
		c->cache_len++;
		c->new_states++;
		fresh++;
	}
	if (!record)
		return;
	if ((ur->npoints & (ur->npoints - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to twice */
		ur->points = realloc(ur->points,
				     (ur->npoints ? 2 * ur->npoints : 1) * sizeof(*ur->points));
		PN_ASSERT(ur->points != NULL);
	}
	ur->points[ur->npoints++] = (struct pn_unit_point){point, states, fresh};
}

/* Before each step of a unit's run: at lo the range begins (its coverage starts, its count
 * of distinct states is checked), at hi it ends. True: stop the run here. */
static bool unit_edge(struct checker *c)
{
	const struct pn_unit *u = c->unit;
	uint64_t next = c->w->events + 1;
	if (next == u->lo) {
		cov_zero();
		if (c->new_states != u->fresh_lo) {
			snprintf(
				c->res->detail, sizeof(c->res->detail),
				"unit of schedule %u from crash point %llu: its survey met %llu distinct "
				"states before it, the plan %llu (a nondeterministic run)",
				u->schedule, (unsigned long long)u->lo,
				(unsigned long long)c->new_states, (unsigned long long)u->fresh_lo);
			return true;
		}
	}
	if (next == u->hi && !c->surveying) {
		c->ur->end = u->hi;
		c->ur->fresh_end = c->new_states;
		cov_take(c);
		return true;
	}
	return false;
}

/* A crash point of a unit's run: surveyed before or after its range, explored inside it. */
static bool explore_point(struct checker *c, uint64_t point);
static bool unit_point(struct checker *c, uint64_t point)
{
	const struct pn_unit *u = c->unit;
	if (c->surveying || point < u->lo) {
		survey_point(c, point, c->surveying);
		return !stopping(c);
	}
	if (!explore_point(c, point))
		return false;
	if (u->budget && c->new_states - u->fresh_base >= u->budget) { /* U3 */
		c->surveying = true;
		c->ur->end = point + 1;
		c->ur->fresh_end = c->new_states;
		cov_take(c);
	}
	return true;
}

/* A crash state's key. The enumeration's names the durable image by its version and the
 * writes kept by their sequence numbers, which mean something within one run only; across
 * the schedules of a search the durable image's history by content (world.h, dur_chain) and
 * the place and bytes of every write kept join it, so one image is recovered once per
 * search whichever schedule meets it, and two that only share numbers never pass for one.
 * Within a run both are functions of what the enumeration's key holds: no state that was
 * one before becomes two. */
static uint64_t state_key(const struct checker *c)
{
	uint64_t key = pn_crash_enum_key(&c->ce);
	if (!c->x)
		return key;
	key = XXH3_64bits_withSeed(&key, sizeof(key), c->w->dur_chain);
	for (uint32_t r = 0; r < c->ce.nrel; r++) {
		const struct pn_write_fate *f = &c->ce.fates[c->ce.rel[r]];
		uint64_t units = f->fate == PN_FATE_PERSISTED ? c->ce.diff[r]
				 : f->fate == PN_FATE_TORN    ? f->sectors & c->ce.diff[r]
							      : 0;
		if (units) /* a write the enumeration's key counts (no new unit: as lost) */
			key = XXH3_64bits_withSeed(&c->write_hash[c->ce.rel[r]], sizeof(key), key);
	}
	return key;
}

/* At a crash point of a search: the content hash of each unsynced write (state_key). */
static void hash_writes(struct checker *c)
{
	const struct pn_device *d = &c->w->dev;
	if (d->nunsynced >= c->write_hash_cap) {
		c->write_hash_cap = 2 * d->nunsynced + 16;
		c->write_hash = realloc(c->write_hash, c->write_hash_cap * sizeof(uint64_t));
		PN_ASSERT(c->write_hash != NULL);
	}
	for (uint32_t i = 0; i < d->nunsynced; i++)
		c->write_hash[i] = pn_world_write_hash(&d->unsynced[i]);
}

/* A search's crash point whose device (durable image by history, every unsynced write by
 * place and bytes, in order) and world (pn_world_fingerprint: what the oracle and the acks
 * judge by) an earlier point of the search had: its crash states were judged there. */
static bool point_met(struct checker *c)
{
	if (!c->x->reduce)
		return false;
	uint64_t key = XXH3_64bits_withSeed(c->write_hash, c->w->dev.nunsynced * sizeof(uint64_t),
					    c->w->dur_chain ^ pn_world_fingerprint(c->w));
	/* the first schedule checks every point, as the seeded one does (bound 0 = seeded) */
	if (!pn_explore_point_seen(c->x, key) || c->x->explored <= 1)
		return false;
	c->x->points_skipped++;
	return true;
}

/* ---- derived crash states (docs/checker.md "Derived crash states") ---- */
#define PATCH_BLOCK 512u /* the unit in which two crash images are compared for patches */

static void base_free(struct base *b)
{
	if (b->r)
		free_world(b->r);
	free(b->fates);
	free(b->reads);
	free(b->writes);
	free(b->judged);
	free(b->sums);
	free(b->cov);
	free(b->jcov);
	*b = (struct base){0};
}

static void bases_clear(struct checker *c)
{
	for (uint32_t i = 0; i < c->nbases; i++)
		base_free(&c->bases[i]);
	c->nbases = c->base_next = 0;
}

static int range_order(const void *a, const void *b)
{
	const struct pn_range *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* A copy of the log's ranges sorted by file and offset, overlapping and adjacent ones merged
 * (into *n of them); the log is emptied. */
static struct pn_range *ranges_keep(struct pn_range_log *log, uint32_t *n)
{
	uint32_t m = 0;
	if (log->n)
		qsort(log->r, log->n, sizeof(*log->r), range_order);
	for (uint32_t i = 1; i < log->n; i++) {
		struct pn_range *a = &log->r[m], *x = &log->r[i];
		uint64_t end = a->off + a->len, xend = x->off + x->len;
		if (x->file == a->file && x->off <= end) {
			if (xend > end)
				a->len = (uint32_t)(xend - a->off);
		} else {
			log->r[++m] = *x;
		}
	}
	*n = log->n ? m + 1 : 0;
	struct pn_range *out = malloc((*n + 1) * sizeof(*out));
	PN_ASSERT(out != NULL);
	memcpy(out, log->r, *n * sizeof(*out));
	log->n = 0;
	return out;
}

static void cmp_room(struct checker *c, uint32_t n)
{
	if (n <= c->cmp_cap)
		return;
	c->cmp_cap = 2 * n;
	for (int j = 0; j < 2; j++) {
		c->cmp[j] = realloc(c->cmp[j], c->cmp_cap);
		PN_ASSERT(c->cmp[j] != NULL);
	}
}

/* Reads [off, off + n) of file f of the current state's crash image into c->cmp[0] and of
 * base b's into c->cmp[1]. */
static void both_images(struct checker *c, const struct base *b, uint32_t f, uint64_t off,
			uint32_t n)
{
	const struct pn_device *d = &c->w->dev;
	cmp_room(c, n);
	pn_device_crash_read(d, c->ce.fates, (enum pn_file)f, off, n, c->cmp[0]);
	pn_device_crash_read(d, b->fates, (enum pn_file)f, off, n, c->cmp[1]);
}

bool pn_check_reads_same(const struct pn_device *d, const struct pn_write_fate *a,
			 const struct pn_write_fate *b, const struct pn_range *reads, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (!pn_device_crash_same(d, a, b, (enum pn_file)reads[k].file, reads[k].off,
					  reads[k].len))
			return false;
	return true;
}

/* Whether recovery of the current state would read what base b's read: the same bytes, and
 * the same value of every summarized read (DV8). */
static bool reads_same(struct checker *c, const struct base *b)
{
	PN_ASSERT(b->nfates == c->w->dev.nunsynced);
	if (!pn_check_reads_same(&c->w->dev, c->ce.fates, b->fates, b->reads, b->nreads))
		return false;
	for (uint32_t k = 0; k < b->nsums; k++) {
		cmp_room(c, b->sums[k].len);
		if (!pn_device_crash_summary_same(&c->w->dev, c->ce.fates, b->fates, &b->sums[k],
						  c->cmp[0]))
			return false;
	}
	return true;
}

/* Adds a patch of [lo, hi) of file f (the current state's bytes at cmp[0] + (lo - at)). */
static void patch_add(struct checker *c, uint32_t f, uint64_t lo, uint64_t hi, uint64_t at)
{
	if (c->npatch == c->patch_cap) {
		c->patch_cap = c->patch_cap ? 2 * c->patch_cap : 16;
		c->patch = realloc(c->patch, c->patch_cap * sizeof(*c->patch));
		PN_ASSERT(c->patch != NULL);
	}
	uint32_t n = (uint32_t)(hi - lo);
	struct patch *p = &c->patch[c->npatch++];
	p->at = (struct pn_range){.file = f, .len = n, .off = lo};
	p->saved = malloc(2 * (size_t)n); /* the base's bytes, then the state's */
	PN_ASSERT(p->saved != NULL);
	memcpy(p->saved + n, c->cmp[0] + (lo - at), n);
}

/* The part of [lo, hi) of file f that recovery did not write (there both recovered images
 * hold recovery's bytes) and the judgement read, as patches (the state's bytes of file
 * offset at are at cmp[0]). */
static void patch_block(struct checker *c, const struct base *b, uint32_t f, uint64_t lo,
			uint64_t hi, uint64_t at)
{
	for (uint32_t k = 0; k <= b->nwrites && lo < hi; k++) {
		const struct pn_range *w = k < b->nwrites ? &b->writes[k] : NULL;
		if (w && (w->file != f || w->off + w->len <= lo))
			continue;
		uint64_t to = w ? PN_MIN(hi, PN_MAX(lo, w->off)) : hi;
		for (uint32_t j = 0; j < b->njudged && lo < to; j++) { /* [lo, to) not written */
			const struct pn_range *r = &b->judged[j];
			uint64_t a = PN_MAX(lo, r->off), e = PN_MIN(to, r->off + r->len);
			if (r->file == f && a < e)
				patch_add(c, f, a, e, at);
		}
		lo = w ? PN_MAX(lo, w->off + w->len) : hi;
	}
}

static void patches_drop(struct checker *c)
{
	for (uint32_t i = 0; i < c->npatch; i++)
		free(c->patch[i].saved);
	c->npatch = 0;
}

/* Whether [off, off + len) of file f may need a patch for base b: the judgement read some of
 * it (J) and recovery did not write all of it (W, sorted and merged). */
static bool patch_may(const struct base *b, uint32_t f, uint64_t off, uint64_t len)
{
	bool judged = false;
	for (uint32_t j = 0; j < b->njudged && !judged; j++)
		judged = pn_range_meets(&b->judged[j], f, off, len);
	for (uint32_t k = 0; k < b->nwrites && judged; k++)
		judged = !(b->writes[k].file == f && b->writes[k].off <= off &&
			   off + len <= b->writes[k].off + b->writes[k].len);
	return judged;
}

/* The patches that make base b's recovered image the current state's wherever the judgement
 * reads. False: patches are needed where the judgement may not read them again (a page
 * server keeps what it reconstructed). */
static bool patches_find(struct checker *c, const struct base *b)
{
	const struct pn_device *d = &c->w->dev;
	patches_drop(c);
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		if (pn_device_fate_same(d, i, &c->ce.fates[i], &b->fates[i]) ||
		    !patch_may(b, u->file, u->offset, u->len))
			continue; /* DV6: the images differ only inside the other writes */
		both_images(c, b, u->file, u->offset, u->len); /* the write at once, then blocks */
		for (uint64_t lo = u->offset; lo < u->offset + u->len; lo += PATCH_BLOCK) {
			uint64_t hi = PN_MIN(lo + PATCH_BLOCK, u->offset + u->len);
			if (memcmp(c->cmp[0] + (lo - u->offset), c->cmp[1] + (lo - u->offset),
				   hi - lo) != 0)
				patch_block(c, b, u->file, lo, hi, u->offset);
		}
	}
	return !c->npatch || c->sc->protocol.mode != PN_MODE_PUSHDOWN;
}

/* Applies the patches to base b's device (apply), or undoes them, in reverse order. */
static void patches_apply(struct checker *c, struct base *b, bool apply)
{
	struct pn_device *d = &b->r->dev;
	for (uint32_t k = 0; k < c->npatch; k++) {
		struct patch *p = &c->patch[apply ? k : c->npatch - 1 - k];
		enum pn_file f = (enum pn_file)p->at.file;
		if (apply)
			pn_device_read(d, f, p->at.off, p->at.len, p->saved);
		pn_device_format_write(d, f, p->at.off, p->saved + (apply ? p->at.len : 0),
				       p->at.len);
	}
}

/* Adds n sites' hits (from cov_since) to the sites. */
static void cov_add(const uint64_t (*cov)[2], size_t n)
{
	struct pn_testcase_site *const *sites;
	PN_ASSERT(pn_testcase_all(&sites) >= n);
	for (size_t s = 0; s < n; s++) {
		sites[s]->hits_true += cov[s][0];
		sites[s]->hits_false += cov[s][1];
	}
}

/* The coverage hits since `before` (n0 sites then), per site now registered (*n). */
static uint64_t (*cov_since(const uint64_t (*before)[2], size_t n0, size_t *n))[2]
{
	struct pn_testcase_site *const *sites;
	*n = pn_testcase_all(&sites);
	uint64_t(*cov)[2] = calloc(*n + 1, sizeof(*cov));
	PN_ASSERT(cov != NULL && *n >= n0);
	for (size_t s = 0; s < *n; s++) {
		cov[s][0] = sites[s]->hits_true - (s < n0 ? before[s][0] : 0);
		cov[s][1] = sites[s]->hits_false - (s < n0 ? before[s][1] : 0);
	}
	return cov;
}

/* The verdict of the current state without recovering it, from a base whose recovery read
 * the same bytes: recovery's coverage hits added, the base's recovered world, patched with
 * the state's bytes wherever they differ, were not recovery's and the judgement reads,
 * judged (what a recovery of this state would judge). False: no base fits. */
static bool derive_state(struct checker *c, struct verdict *v)
{
	if (c->refused >= REFUSED_MAX)
		return false;
	for (uint32_t i = 0; i < c->nbases; i++) {
		struct base *b = &c->bases[i];
		if (!reads_same(c, b) || !patches_find(c, b))
			continue; /* no marker here: --coverage is the same with derivation off */
		cov_add(b->cov, b->ncov);
		if (!c->npatch && b->passed) {
			/* no patch: the world to judge is the base's as it was judged, so the
			 * judgement is the base's (its hits added, as a judgement adds them) */
			cov_add(b->jcov, b->njcov);
			v->end = b->end;
			v->kind = PN_VIOL_NONE;
		} else {
			patches_apply(c, b, true);
			judge(c, b->r, b->rc, UINT64_MAX, v, true);
			patches_apply(c, b, false);
		}
		patches_drop(c);
		c->res->derived++;
		c->refused = 0;
		return true;
	}
	patches_drop(c);
	c->refused++;
	return false;
}

/* A full recovery of the current state, judged; kept as a base when derivation is on. */
static void recover_state(struct checker *c, struct verdict *v)
{
	int rc;
	if (!c->opt->derive || c->refused >= REFUSED_MAX) {
		struct pn_world *r = recover_image(c, &c->w->dev, c->ce.fates, false, &rc);
		judge(c, r, rc, UINT64_MAX, v, true);
		free_world(r);
		return;
	}
	struct pn_testcase_site *const *sites;
	size_t n0 = pn_testcase_all(&sites), n;
	uint64_t(*before)[2] = calloc(n0 + 1, sizeof(*before));
	PN_ASSERT(before != NULL);
	cov_copy(before, false);
	struct pn_world *r = crashed_world(c, &c->w->dev, c->ce.fates, false);
	r->dev.reads = &c->log[0];
	r->dev.writes = &c->log[1];
	r->dev.summaries = &c->slog;
	rc = pn_world_recover(r);
	r->dev.summaries = NULL;
	pn_assert_context(NULL, NULL);
	uint64_t(*cov)[2] = cov_since(before, n0, &n);
	free(before);
	n0 = n;
	before = calloc(n0 + 1, sizeof(*before));
	PN_ASSERT(before != NULL);
	cov_copy(before, false);
	r->dev.reads = &c->log[2];
	r->dev.writes = NULL;
	judge(c, r, rc, UINT64_MAX, v, true);
	r->dev.reads = NULL;
	size_t nj;
	uint64_t(*jcov)[2] = cov_since(before, n0, &nj);
	free(before);
	if (rc == 0 && v->kind != PN_VIOL_NONE) {
		/* C2 stopped at a page: J does not hold the pages after it, which a state that
		 * passes there would read (and the search stops here anyway) */
		free(cov);
		free(jcov);
		c->log[0].n = c->log[1].n = c->log[2].n = c->slog.n = 0;
		free_world(r);
		return;
	}
	struct base *b = &c->bases[c->base_next];
	base_free(b);
	c->base_next = (c->base_next + 1) % BASES_MAX;
	c->nbases = PN_MIN(c->nbases + 1, BASES_MAX);
	uint32_t nf = c->w->dev.nunsynced;
	*b = (struct base){.r = r,
			   .rc = rc,
			   .cov = cov,
			   .ncov = n,
			   .nfates = nf,
			   .passed = v->kind == PN_VIOL_NONE,
			   .end = v->end,
			   .jcov = jcov,
			   .njcov = nj};
	b->fates = malloc((nf + 1) * sizeof(*b->fates));
	PN_ASSERT(b->fates != NULL);
	memcpy(b->fates, c->ce.fates, nf * sizeof(*b->fates));
	b->reads = ranges_keep(&c->log[0], &b->nreads);
	b->writes = ranges_keep(&c->log[1], &b->nwrites);
	b->judged = ranges_keep(&c->log[2], &b->njudged);
	b->nsums = c->slog.n;
	b->sums = malloc((b->nsums + 1) * sizeof(*b->sums));
	PN_ASSERT(b->sums != NULL);
	memcpy(b->sums, c->slog.r, b->nsums * sizeof(*b->sums));
	c->slog.n = 0;
}

/* All crash states of the current point. Returns false at the first violation. */
static bool explore_point(struct checker *c, uint64_t point)
{
	struct pn_check_result *res = c->res;
	pn_crash_enum_begin(&c->ce, &c->w->dev, c->sc, point ^ ((uint64_t)c->schedule << 40));
	res->crash_points++;
	c->exp_valid = false; /* the oracle took records since the last point */
	bases_clear(c);       /* bases hold for the unsynced writes of one point */
	c->refused = 0;
	bool between = pn_engine_ckpt_phase(c->w->e) == PN_CKPT_PHASE_AFTER_FSYNC;
	PN_TESTCASE("crash between a checkpoint's data fsync and its control-file update", between);
	while (!stopping(c) && pn_crash_enum_next(&c->ce)) {
		uint64_t key = state_key(c);
		struct verdict *slot = cache_slot(c, key);
		bool torn_wal = false;
		for (uint32_t r = 0; r < c->ce.nrel; r++)
			torn_wal |= c->ce.fates[c->ce.rel[r]].fate == PN_FATE_TORN &&
				    c->w->dev.unsynced[c->ce.rel[r]].file == PN_FILE_WAL;
		PN_TESTCASE("a crash state tears a WAL write (torn WAL tail)", torn_wal);
		res->crash_states++;
		bool fresh = !slot->used;
		if (!slot->used) {
			struct verdict v = {.key = key, .used = true, .known = true};
			if (!c->opt->derive || !derive_state(c, &v))
				recover_state(c, &v);
			res->recoveries++;
			c->new_states++;
			*slot = v;
			c->cache_len++;
			if (c->unit && c->unit->lookups) /* U6: for the owners */
				pn_unit_keys_add(&c->ur->recovered, key, v.end);
		} else if (!slot->known && c->unit && c->unit->lookups) {
			defer_acks(c, key); /* U6: judged once the run is over */
			continue;
		} else if (!slot->known) {
			relearn(c, slot);
		}
		struct verdict v =
			*slot; /* a failing state stops the search: cached ones pass C2/C3 */
		cross_check(c, &c->w->dev, c->ce.fates, UINT64_MAX, &v, point, 0);
		judge_acks(c, &v);
		pn_world_hash_mix(c->w, key,
				  v.end * 64 + v.kind); /* --twice compares verdicts too */
		if (v.kind != PN_VIOL_NONE) {
			pn_crash_enum_encode(&c->ce, res->state, sizeof(res->state));
			pn_crash_enum_describe(&c->ce, res->state_text, sizeof(res->state_text));
			report(c, (enum pn_violation_kind)v.kind, v.page, point, false);
			return false;
		}
		/* the state passed C1-C3 (a failing one is the violation, whatever a crash inside
		 * its recovery would do): every Nth new one is crashed inside its recovery too */
		if (fresh && c->opt->nested_every && c->new_states % c->opt->nested_every == 0 &&
		    !nested(c, c->ce.fates, v.end, point)) {
			pn_crash_enum_encode(&c->ce, res->state, sizeof(res->state));
			pn_crash_enum_describe(&c->ce, res->state_text, sizeof(res->state_text));
			return false;
		}
	}
	res->capped_points += c->ce.capped; /* crash.torn_writes: 2 left states out here */
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
	struct pn_geometry geo = pn_engine_geometry(e);
	uint8_t *initial = malloc((size_t)geo.pages * geo.page_size);
	PN_ASSERT(initial != NULL);
	for (uint32_t p = 0; p < geo.pages; p++)
		pn_engine_initial_page(e, p, initial + (size_t)p * geo.page_size);
	struct pn_oracle *o = pn_oracle_new(geo.heap_pages, geo.slru_pages, geo.page_size,
					    pn_engine_scenario(e)->protocol.slru_headers, initial);
	free(initial);
	PN_ASSERT(o != NULL);
	const struct pn_scenario *sc = pn_engine_scenario(e);
	pn_oracle_set_hints_logged(o, sc->protocol.checksums || sc->protocol.wal_log_hints);
	return o;
}

static void oracle_start(struct checker *c)
{
	c->oracle = pn_check_oracle_new(c->w->e);
	c->w->on_wal = on_wal;
	c->w->on_wal_arg = c;
}

/* The replay: keys as replay's refusals name them. */
static const char *const replay_key_names[PN_REPLAY_KEYS] = {
	[PN_REPLAY_CRASH_POINT] = "replay.crash_point",
	[PN_REPLAY_STATE] = "replay.state",
	[PN_REPLAY_RECOVERY_POINT] = "replay.recovery_crash_point",
	[PN_REPLAY_RECOVERY_STATE] = "replay.recovery_state",
	[PN_REPLAY_CHOICES] = "replay.choices",
};

/* Replay: the trace does not fit its run, and key (enum pn_replay_key) is the one whose value
 * does not: res says which, so that the refusal names its position (checker.h). */
static void replay_misfit(struct checker *c, enum pn_replay_key key)
{
	c->res->error = true;
	c->res->error_key = key;
}

/* Replay: the crash state `state` of dev, decoded and held to the scenario's crash model;
 * false with the reason in res->detail (key names the key, where names the point). */
static bool replay_fates(struct checker *c, const struct pn_device *dev, const char *state,
			 enum pn_replay_key key, const char *where, uint64_t point,
			 struct pn_write_fate *f)
{
	char why[256];
	struct pn_check_result *res = c->res;
	const char *what = replay_key_names[key];
	if (!pn_crash_fates_decode(dev, state, f, why, sizeof(why))) {
		snprintf(res->detail, sizeof(res->detail),
			 "%s '%s' does not name unsynced writes of %s %llu: %s", what, state, where,
			 (unsigned long long)point, why);
		replay_misfit(c, key);
		return false;
	}
	if (!pn_crash_fates_allowed(dev, c->sc, f, why, sizeof(why))) {
		snprintf(res->detail, sizeof(res->detail),
			 "%s '%s' is not a state of the scenario's "
			 "crash model: %s",
			 what, state, why);
		replay_misfit(c, key);
		return false;
	}
	return true;
}

/* Replay: steps w until it has run `point` events. False with the reason in res->detail when
 * it finishes or stalls first (key names the key, whose the run). A runtime invariant that
 * breaks on the way stops it early (true; the caller looks at pn_engine_failed). */
static bool replay_run_to(struct checker *c, struct pn_world *w, uint64_t point,
			  enum pn_replay_key key, const char *whose)
{
	struct pn_check_result *res = c->res;
	const char *what = replay_key_names[key];
	while (w->events < point) {
		int step = pn_world_step(w);
		if (step == PN_STEP_VIOLATION)
			return true;
		if (step == PN_STEP_EVENT)
			continue;
		if (step == PN_STEP_STALL)
			snprintf(res->detail, sizeof(res->detail),
				 "%s %llu is never reached, %s "
				 "stalls first: %s",
				 what, (unsigned long long)point, whose, w->error);
		else
			snprintf(res->detail, sizeof(res->detail),
				 "%s %llu is past the end of %s, which ends after event %llu", what,
				 (unsigned long long)point, whose, (unsigned long long)w->events);
		replay_misfit(c, key);
		return false;
	}
	return true;
}

/* Replay of a crash inside recovery, as nested() and nested_state() judge it: recover again up
 * to the recorded event, crash there in the recorded state, recover that, judge it (C1-C3)
 * against the first recovery's end. False (the reason in res->detail) when the trace does not
 * fit the recovery. */
static bool replay_nested(struct checker *c, const struct pn_write_fate *fates, pn_lsn first_end,
			  struct verdict *v)
{
	const struct pn_check_options *opt = c->opt;
	struct pn_world *r = crashed_world(c, &c->w->dev, fates, true);
	bool ok = pn_engine_recover(r->e) &&
		  replay_run_to(c, r, opt->replay_recovery_point, PN_REPLAY_RECOVERY_POINT,
				"the recovery") &&
		  !pn_engine_failed(r->e);
	if (!ok && !c->res->detail[0]) {
		snprintf(c->res->detail, sizeof(c->res->detail),
			 "the recovery fails before replay.recovery_crash_point %llu",
			 (unsigned long long)opt->replay_recovery_point);
		replay_misfit(c, PN_REPLAY_RECOVERY_POINT);
	}
	struct pn_write_fate *f = calloc(r->dev.nunsynced + 1, sizeof(*f));
	PN_ASSERT(f != NULL);
	ok = ok && replay_fates(c, &r->dev, opt->replay_recovery_state, PN_REPLAY_RECOVERY_STATE,
				"recovery event", opt->replay_recovery_point, f);
	if (ok && opt->timeline) {
		fprintf(opt->timeline, "recovery, up to its crash:\n");
		pn_world_print_trace(r, opt->timeline);
	}
	if (ok) {
		int rc;
		struct pn_world *r2 = recover_image(c, &r->dev, f, false, &rc);
		judge(c, r2, rc, first_end, v, false);
		free_world(r2);
		judge_acks(c, v);
		if (v->kind != PN_VIOL_NONE)
			nested_found(c, opt->replay_recovery_point, opt->replay_recovery_state);
	}
	free_world(r);
	free(f);
	return ok;
}

/* Replay of a scenario without crash: (no crash model): the run up to the point, which is
 * where a runtime invariant broke when the trace was written. */
static int replay_uncrashed(struct checker *c)
{
	const struct pn_check_options *opt = c->opt;
	struct pn_check_result *res = c->res;
	if (strcmp(opt->replay_state, "none") != 0 || opt->replay_recovery_point) {
		snprintf(
			res->detail, sizeof(res->detail),
			"replay.%s names a crash state, but the scenario has no crash: section, so no "
			"crash is simulated (a trace of it can only replay a runtime invariant)",
			opt->replay_recovery_point ? "recovery_crash_point" : "state");
		replay_misfit(c, opt->replay_recovery_point ? PN_REPLAY_RECOVERY_POINT
							    : PN_REPLAY_STATE);
		return 2;
	}
	if (opt->timeline)
		pn_world_print_trace(c->w, opt->timeline);
	snprintf(res->detail, sizeof(res->detail),
		 "the run reached event %llu and no runtime invariant broke (the scenario has no "
		 "crash: section: nothing is crashed)",
		 (unsigned long long)c->w->events);
	return 0;
}

/* Replay: one point, one state, with the timeline printed. */
static int replay_point(struct checker *c)
{
	struct pn_check_result *res = c->res;
	const struct pn_check_options *opt = c->opt;
	if (!replay_run_to(c, c->w, opt->replay_point, PN_REPLAY_CRASH_POINT, "the run"))
		return 2;
	if (pn_engine_failed(c->w->e)) {
		const struct pn_violation *viol = pn_engine_violation_of(c->w->e);
		if (opt->timeline)
			pn_world_print_trace(c->w, opt->timeline);
		if (opt->replay_crash)
			opt->replay_crash(opt->replay_arg, c->w, NULL); /* no crash: no fates */
		snprintf(c->detail, sizeof(c->detail), "%s", viol->detail);
		report(c, viol->kind, viol->page, c->w->events, false);
		return 1;
	}
	if (!c->sc->crash.present)
		return replay_uncrashed(c);
	struct pn_write_fate *f = calloc(c->w->dev.nunsynced + 1, sizeof(*f));
	PN_ASSERT(f != NULL);
	if (!replay_fates(c, &c->w->dev, opt->replay_state, PN_REPLAY_STATE, "crash point",
			  opt->replay_point, f)) {
		free(f);
		return 2;
	}
	if (opt->timeline)
		pn_world_print_trace(c->w, opt->timeline);
	if (opt->replay_crash)
		opt->replay_crash(opt->replay_arg, c->w, f);
	int rc;
	struct pn_world *r = recover_image(c, &c->w->dev, f, false, &rc);
	struct verdict v;
	judge(c, r, rc, UINT64_MAX, &v, false);
	/* C2 compared the pages (recovery finished): the bytes are the failing page's */
	if (opt->replay_page && rc == 0 &&
	    (v.kind == PN_VIOL_EXACTNESS || v.kind == PN_VIOL_CHECKSUM))
		opt->replay_page(opt->replay_arg, v.page, c->expected, c->found,
				 pn_engine_geometry(r->e).page_size);
	free_world(r);
	/* as explore_point: the crash inside recovery only when the first recovery passed C1-C3 */
	judge_acks(c, &v);
	bool in_recovery = v.kind == PN_VIOL_NONE && opt->replay_recovery_point;
	if (in_recovery && !replay_nested(c, f, v.end, &v)) {
		free(f);
		res->error = true;
		return 2;
	}
	free(f);
	res->crash_points = res->crash_states = res->recoveries = 1;
	snprintf(res->state, sizeof(res->state), "%s", opt->replay_state);
	if (v.kind != PN_VIOL_NONE)
		report(c, (enum pn_violation_kind)v.kind, v.page, opt->replay_point, in_recovery);
	return v.kind != PN_VIOL_NONE;
}

/* One schedule run: 0 passed, 1 violation found, 2 could not run. */
static int run_schedule(struct checker *c)
{
	struct pn_check_result *res = c->res;
	struct pn_world_options o = {.track = c->sc->crash.present || c->opt->replay,
				     .check_each_event = true,
				     .schedule = c->schedule,
				     .twin = c->twin,
				     .choose = c->x ? pn_explore_choose : NULL,
				     .choose_arg = c->x};
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
	pn_engine_start(c->w->e);
	if (c->opt->replay) {
		int rc = replay_point(c);
		if (c->x && c->x->mismatch) {
			snprintf(res->detail, sizeof(res->detail), "replay.choices: %s",
				 c->x->error);
			replay_misfit(c, PN_REPLAY_CHOICES);
			return 2;
		}
		return rc;
	}
	uint64_t version = UINT64_MAX, acked = UINT64_MAX;
	uint64_t from = c->x ? pn_explore_first_new_point(c->x) : 0; /* earlier: as its parent */
	for (;;) {
		if (c->unit && unit_edge(c))
			return c->res->detail[0] ? 2 : 0;
		int step = pn_world_step(c->w);
		uint64_t point = c->w->events;
		if (c->x && c->x->mismatch) {
			snprintf(res->detail, sizeof(res->detail), "replay.choices: %s",
				 c->x->error);
			return 2;
		}
		if (c->surveying && (step == PN_STEP_VIOLATION || step == PN_STEP_STALL))
			return 0; /* past the head's range: a later unit finds it */
		if (step == PN_STEP_VIOLATION) {
			const struct pn_violation *viol = pn_engine_violation_of(c->w->e);
			snprintf(c->detail, sizeof(c->detail), "%s (a runtime invariant)",
				 viol->detail);
			report(c, viol->kind, viol->page, point, false);
			return 1;
		}
		if (step == PN_STEP_STALL) {
			snprintf(res->detail, sizeof(res->detail), "%s", c->w->error);
			return 2;
		}
		struct pn_acks_view acks;
		pn_engine_acks(c->w->e, &acks);
		bool changed = c->w->dev.version != version || acks.n != acked;
		res->events = c->events_done + point;
		if (c->sc->crash.present && changed && point_selected(c->sc, point)) {
			version = c->w->dev.version;
			acked = acks.n;
			if (c->x && point >= from)
				hash_writes(c);
			if (point >= from && !(c->x && point_met(c)) &&
			    !(c->unit ? unit_point(c, point) : explore_point(c, point)))
				return c->interrupted ? 3 : 1;
			progress(c);
		} else if (point % PN_CHECK_PROGRESS_EVENTS == 0) {
			progress(c);
		}
		if (stopping(c))
			return 3;
		if (c->x && c->x->stop)
			return 0; /* a state an earlier schedule reached: explored from there */
		if (step == PN_STEP_FINISHED) {
			if (c->ur && !c->surveying)
				c->ur->finished = true;
			return 0;
		}
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

/* One schedule run's outcome, as --twice compares it. */
static void outcome_text(const struct pn_check_result *r, int rc, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s",
			 rc == 2        ? "could not run"
			 : r->violation ? "violation"
					: "pass");
	if (r->violation && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " %s at crash point %llu, state %s%s%s",
			      pn_violation_name(r->kind), (unsigned long long)r->crash_point,
			      r->state[0] ? r->state : "none",
			      r->in_recovery ? ", recovery state " : "",
			      r->in_recovery ? r->recovery_state : "");
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 ", %llu crash points, %llu states, %llu recovered",
			 (unsigned long long)r->crash_points, (unsigned long long)r->crash_states,
			 (unsigned long long)r->recoveries);
}

/*
 * --twice: the schedule run twice from the same start (an empty verdict cache, the same
 * count of new states), each event's hash and the verdicts compared (sim/world.h); the first
 * difference goes to res->divergence. res keeps the first run's outcome, c->w the second
 * run's world. Returns 1 on a divergence, else run_schedule()'s status.
 */
static int run_twice(struct checker *c)
{
	struct pn_check_result *res = c->res, *before = malloc(2 * sizeof(*res)),
			       *first = before + 1;
	uint64_t new_states = c->new_states;
	char msg[900] = "", a[300], b[300];
	PN_ASSERT(before != NULL);
	pn_world_twin_reset(c->twin);
	*before = *res;
	int rc = run_schedule(c);
	if (!c->w) { /* the world could not be made: nothing ran */
		free(before);
		return rc;
	}
	bool same = pn_world_twin_end(c->twin, c->w, msg, sizeof(msg));
	*first = *res;
	*res = *before;
	checker_free(c);
	if (c->cache)
		memset(c->cache, 0, c->cache_cap * sizeof(*c->cache));
	c->cache_len = 0;
	c->new_states = new_states;
	int rc2 = run_schedule(c);
	if (same && c->w)
		same = pn_world_twin_end(c->twin, c->w, msg, sizeof(msg));
	outcome_text(first, rc, a, sizeof(a));
	outcome_text(res, rc2, b, sizeof(b));
	if (same && (rc != rc2 || strcmp(a, b) || first->page != res->page))
		snprintf(msg, sizeof(msg),
			 "the two runs agree on every event but not on the outcome: "
			 "the first run: %s; the second: %s",
			 a, b);
	*res = *first;
	if (msg[0]) {
		res->diverged = true;
		snprintf(res->divergence, sizeof(res->divergence),
			 "nondeterminism: schedule %u: %s", c->schedule, msg);
		if (!res->violation)
			snprintf(res->detail, sizeof(res->detail), "%s", res->divergence);
		rc = 1;
	}
	free(before);
	return rc;
}

static void checker_open(struct checker *c, const struct pn_scenario *sc,
			 const struct pn_check_options *opt, struct pn_check_result *res)
{
	*c = (struct checker){.sc = sc, .opt = opt, .res = res};
	memset(res, 0, sizeof(*res));
	snprintf(res->name, sizeof(res->name), "%s", sc->name);
	res->expected_violation = sc->expect.violation;
	c->t0 = wall_seconds();
	c->expected = malloc(sc->storage.page_size);
	c->found = malloc(sc->storage.page_size);
	PN_ASSERT(c->expected != NULL && c->found != NULL);
	pn_crash_enum_init(&c->ce);
}

static void checker_close(struct checker *c)
{
	bases_clear(c);
	for (int i = 0; i < 3; i++)
		free(c->log[i].r);
	free(c->slog.r);
	free(c->patch);
	free(c->cmp[0]);
	free(c->cmp[1]);
	pn_crash_enum_free(&c->ce);
	free(c->write_hash);
	free(c->cache);
	free(c->expected);
	free(c->found);
	free(c->exp_pages);
	free(c->pass_pages);
	free(c->exp_have);
	c->res->seconds = wall_seconds() - c->t0;
}

static enum pn_unit_status unit_status(int rc, const struct pn_check_result *res)
{
	return rc == 3                           ? PN_UNIT_INTERRUPTED
	       : rc == 2                         ? PN_UNIT_ERROR
	       : res->violation || res->diverged ? PN_UNIT_VIOLATION
						 : PN_UNIT_DONE;
}

enum pn_unit_status pn_check_unit(const struct pn_scenario *sc, const struct pn_check_options *opt,
				  const struct pn_unit *u, struct pn_unit_result *out)
{
	struct checker c;
	memset(out, 0, sizeof(*out));
	PN_ASSERT(!opt->replay && (u->whole || !opt->twice)); /* --twice: whole scenarios only */
	cov_zero();
	if (u->whole) {
		int rc = pn_check_scenario(sc, opt, &out->res);
		out->status = unit_status(rc, &out->res);
		out->events = out->res.events;
		out->finished = true;
		out->end = UINT64_MAX;
		struct checker whole = {.ur = out};
		cov_take(&whole);
		return out->status;
	}
	PN_ASSERT(u->schedule < sc->schedules.runs && u->lo <= u->hi);
	checker_open(&c, sc, opt, &out->res);
	c.unit = u;
	c.ur = out;
	c.schedule = u->schedule;
	c.new_states = u->fresh_base;
	out->end = u->hi;
	int rc = run_schedule(&c);
	out->events = c.w ? c.w->events : 0;
	out->res.events = out->events;
	if (out->finished || rc != 0) {
		out->end = out->finished ? UINT64_MAX : out->end;
		out->fresh_end = c.new_states;
	}
	cov_take(&c);
	checker_free(&c);
	checker_close(&c);
	if (rc == 2)
		out->res.error = true;
	if (rc == 3)
		out->res.interrupted = true;
	out->status = unit_status(rc, &out->res);
	return out->status;
}

void pn_unit_result_free(struct pn_unit_result *r)
{
	free(r->points);
	free(r->cov);
	free(r->recovered.v);
	free(r->asked.v);
	free(r->relearnt.v);
	r->recovered = r->asked = r->relearnt = (struct pn_unit_keys){0};
	r->points = NULL;
	r->cov = NULL;
	r->npoints = r->ncov = 0;
}

struct pn_check_options pn_check_replay_options(const struct pn_scenario *sc)
{
	return (struct pn_check_options){
		.replay = true,
		.replay_schedule = sc->replay.schedule,
		.replay_point = sc->replay.crash_point,
		.replay_state = sc->replay.state,
		.replay_recovery_point = sc->replay.recovery_crash_point,
		.replay_recovery_state = sc->replay.recovery_state,
		.replay_choices = sc->replay.choices,
	};
}

/* The schedules of one seeded index that the search (explore.h) or the replay's choices
 * name, each with its crash points: 0 passed, else run_schedule()'s status. */
static int run_search(struct checker *c)
{
	struct pn_explore x;
	struct pn_check_result *res = c->res;
	const char *given = c->opt->replay ? c->opt->replay_choices : c->opt->choices;
	if (given && !pn_explore_init_fixed(&x, c->sc, given)) {
		snprintf(res->detail, sizeof(res->detail), "replay.choices: %s", x.error);
		if (c->opt->replay)
			replay_misfit(c, PN_REPLAY_CHOICES);
		pn_explore_free(&x);
		return 2;
	}
	if (!given)
		pn_explore_init(&x, c->sc, c->schedule);
	c->x = &x;
	int rc = 0;
	while (rc == 0 && pn_explore_next(&x)) {
		rc = run_schedule(c);
		if (c->w)
			res->events = c->events_done + c->w->events;
		c->events_done = res->events;
		res->schedules_explored += 1;
		res->schedules_pruned = x.pruned;
		res->distinct_states = pn_explore_states(&x);
		res->points_met = x.points_skipped;
		checker_free(c);
		progress(c);
	}
	c->x = NULL;
	pn_explore_free(&x);
	return rc;
}

int pn_check_scenario(const struct pn_scenario *sc, const struct pn_check_options *opt,
		      struct pn_check_result *res)
{
	struct checker c;
	checker_open(&c, sc, opt, res);
	bool search = opt->replay ? opt->replay_choices && opt->replay_choices[0]
				  : opt->choices || sc->schedules.strategy != PN_STRATEGY_SEEDED;
	struct pn_world_twin twin = {.perturb_at = opt->twice_perturb_at};
	c.twin = opt->twice && !opt->replay && !search ? &twin : NULL;
	res->strategy = sc->schedules.strategy;
	res->preemption_bound = sc->schedules.preemption_bound;
	int rc = 0;
	bool pct = sc->schedules.strategy == PN_STRATEGY_PCT;
	uint32_t first = opt->replay || opt->choices ? opt->replay_schedule : 0;
	uint32_t last = opt->replay || opt->choices ? first + 1 : pct ? 1 : sc->schedules.runs;
	for (c.schedule = first; c.schedule < last && rc == 0; c.schedule++) {
		/* keys name durable-image versions of one run: a new run starts a new cache */
		if (c.cache)
			memset(c.cache, 0, c.cache_cap * sizeof(*c.cache));
		c.cache_len = 0;
		if (search) {
			rc = run_search(&c);
			continue;
		}
		rc = c.twin ? run_twice(&c) : run_schedule(&c);
		if (c.w)
			res->events = c.events_done + c.w->events;
		c.events_done = res->events;
		res->schedules_explored++;
		checker_free(&c);
		progress(&c);
	}
	pn_world_twin_free(&twin);
	checker_close(&c);
	if (rc == 3) {
		res->interrupted = true;
		return 3;
	}
	if (rc == 2) {
		res->error = true;
		return 2;
	}
	res->ok = res->violation == res->expected_violation && !res->diverged;
	return res->ok ? 0 : 1;
}

/*
 * unitdata.c: a work unit and its result as bytes, the growing arrays of keys, a result's
 * release (model layer; unitdata.h).
 *
 * The bytes of a unit result, every integer little-endian:
 *   u32 magic "PNU2" (0x32554e50), u32 count of check-result fields that follow (F);
 *   u32 status, u64 end, u64 events, u32 finished, u64 fresh_end;
 *   u64 relearned, lookups, hits, reruns (U6);
 *   the check result: u32 flags (violation, expected_violation, ok, error, interrupted,
 *     in_recovery, diverged, budget_cut: bits 0-7), u64 crash_points, crash_states, recoveries, derived,
 *     capped_points, search_sampled, events,
 *     f64 seconds, seconds_to_violation (their IEEE-754 bits as u64), u32 kind, page,
 *     schedule, u64 crash_point, recovery_point, u64 schedules_explored, schedules_pruned,
 *     distinct_states, points_met, u32 strategy, preemption_bound,
 *     u64 schedules_default, u32 budget, u64 pct_runs, u32 pct_depth, pct_actors,
 *     u64 pct_events, then the strings name, recovery_state,
 *     state, state_text, detail, timeline, trace_path, shrunk, divergence, choices, each a u32 length
 *     and its bytes (no NUL; longer than its field in struct pn_check_result: refused);
 *   u32 npoints, then per point u64 event, states, fresh;
 *   u32 ncov, then per site u64 true hits, u64 false hits; and nothing after.
 * A unit (pn_unit_encode): u32 schedule, u32 kind (0 a range, 1 whole, 2 a split search's
 * part, 3 a part of the default exploration), u64 lo, hi, budget, fresh_base, fresh_lo.
 */
#include "unitdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_MAGIC 0x32554e50u
#define RESULT_FIELDS 42u

/* ---- bytes ---- */
struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *src, size_t n)
{
	PN_ASSERT(src != NULL && b->len <= b->cap);
	if (b->len + n > b->cap) {
		b->cap = PN_MAX(b->cap * 2, b->len + n + 256);
		b->p = realloc(b->p, b->cap);
		PN_ASSERT(b->p != NULL);
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
	PN_ASSERT(b->len <= b->cap);
}

static void put_u64(struct buf *b, uint64_t v)
{
	uint8_t le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	put(b, le, 8);
}

static void put_u32(struct buf *b, uint32_t v)
{
	uint8_t le[4];
	for (int i = 0; i < 4; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	put(b, le, 4);
}

static void put_f64(struct buf *b, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	put_u64(b, v);
}

static void put_str(struct buf *b, const char *s)
{
	size_t len = strlen(s);
	PN_ASSERT(len <= UINT32_MAX);
	uint32_t n = (uint32_t)len;
	put_u32(b, n);
	put(b, s, n);
}

struct rd {
	const uint8_t *p;
	size_t len, at;
	bool bad;
};

static uint64_t get_le(struct rd *r, int bytes)
{
	uint64_t v = 0;
	PN_ASSERT((bytes == 4 || bytes == 8) && r->at <= r->len);
	if (r->bad || r->len - r->at < (size_t)bytes) {
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[r->at + (size_t)i] << (8 * i);
	r->at += (size_t)bytes;
	return v;
}

static uint64_t get_u64(struct rd *r) { return get_le(r, 8); }
static uint32_t get_u32(struct rd *r) { return (uint32_t)get_le(r, 4); }

static double get_f64(struct rd *r)
{
	uint64_t v = get_u64(r);
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

static void get_str(struct rd *r, char *dst, size_t cap)
{
	uint32_t n = get_u32(r);
	PN_ASSERT(cap > 0 && r->at <= r->len);
	if (r->bad || n >= cap || r->len - r->at < n) {
		r->bad = true;
		dst[0] = '\0';
		return;
	}
	memcpy(dst, r->p + r->at, n);
	dst[n] = '\0';
	r->at += n;
}

static void put_check_result(struct buf *b, const struct pn_check_result *c)
{
	put_u32(b, (uint32_t)c->violation | (uint32_t)c->expected_violation << 1 |
			   (uint32_t)c->ok << 2 | (uint32_t)c->error << 3 |
			   (uint32_t)c->interrupted << 4 | (uint32_t)c->in_recovery << 5 |
			   (uint32_t)c->diverged << 6 | (uint32_t)c->budget_cut << 7);
	put_u64(b, c->crash_points);
	put_u64(b, c->crash_states);
	put_u64(b, c->recoveries);
	put_u64(b, c->derived);
	put_u64(b, c->capped_points);
	put_u64(b, c->search_sampled);
	put_u64(b, c->events);
	put_f64(b, c->seconds);
	put_f64(b, c->seconds_to_violation);
	put_u32(b, (uint32_t)c->kind);
	put_u32(b, c->page);
	put_u32(b, c->schedule);
	put_u64(b, c->crash_point);
	put_u64(b, c->recovery_point);
	put_u64(b, c->schedules_explored);
	put_u64(b, c->schedules_pruned);
	put_u64(b, c->distinct_states);
	put_u64(b, c->points_met);
	put_u32(b, (uint32_t)c->strategy);
	put_u32(b, c->preemption_bound);
	put_u64(b, c->schedules_default);
	put_u32(b, c->budget);
	put_u64(b, c->pct_runs);
	put_u32(b, c->pct_depth);
	put_u32(b, c->pct_actors);
	put_u64(b, c->pct_events);
	const char *s[] = {c->name,     c->recovery_state, c->state,  c->state_text, c->detail,
			   c->timeline, c->trace_path,     c->shrunk, c->divergence, c->choices};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		put_str(b, s[i]);
}

static void get_check_result(struct rd *r, struct pn_check_result *c)
{
	uint32_t f = get_u32(r);
	c->violation = f & 1;
	c->expected_violation = f >> 1 & 1;
	c->ok = f >> 2 & 1;
	c->error = f >> 3 & 1;
	c->interrupted = f >> 4 & 1;
	c->in_recovery = f >> 5 & 1;
	c->diverged = f >> 6 & 1;
	c->budget_cut = f >> 7 & 1;
	c->crash_points = get_u64(r);
	c->crash_states = get_u64(r);
	c->recoveries = get_u64(r);
	c->derived = get_u64(r);
	c->capped_points = get_u64(r);
	c->search_sampled = get_u64(r);
	c->events = get_u64(r);
	c->seconds = get_f64(r);
	c->seconds_to_violation = get_f64(r);
	c->kind = (enum pn_violation_kind)get_u32(r);
	c->page = get_u32(r);
	c->schedule = get_u32(r);
	c->crash_point = get_u64(r);
	c->recovery_point = get_u64(r);
	c->schedules_explored = get_u64(r);
	c->schedules_pruned = get_u64(r);
	c->distinct_states = get_u64(r);
	c->points_met = get_u64(r);
	c->strategy = (enum pn_strategy)get_u32(r);
	c->preemption_bound = get_u32(r);
	c->schedules_default = get_u64(r);
	c->budget = get_u32(r);
	c->pct_runs = get_u64(r);
	c->pct_depth = get_u32(r);
	c->pct_actors = get_u32(r);
	c->pct_events = get_u64(r);
	get_str(r, c->name, sizeof(c->name));
	get_str(r, c->recovery_state, sizeof(c->recovery_state));
	get_str(r, c->state, sizeof(c->state));
	get_str(r, c->state_text, sizeof(c->state_text));
	get_str(r, c->detail, sizeof(c->detail));
	get_str(r, c->timeline, sizeof(c->timeline));
	get_str(r, c->trace_path, sizeof(c->trace_path));
	get_str(r, c->shrunk, sizeof(c->shrunk));
	get_str(r, c->divergence, sizeof(c->divergence));
	get_str(r, c->choices, sizeof(c->choices));
}

uint8_t *pn_unit_result_encode(const struct pn_unit_result *u, size_t *len)
{
	struct buf b = {0};
	PN_ASSERT(u->npoints == 0 || u->points != NULL);
	PN_ASSERT(u->ncov == 0 || u->cov != NULL);
	put_u32(&b, UNIT_MAGIC);
	put_u32(&b, RESULT_FIELDS);
	put_u32(&b, (uint32_t)u->status);
	put_u64(&b, u->end);
	put_u64(&b, u->events);
	put_u32(&b, u->finished);
	put_u64(&b, u->fresh_end);
	put_u64(&b, u->relearned);
	put_u64(&b, u->lookups);
	put_u64(&b, u->hits);
	put_u64(&b, u->reruns);
	put_check_result(&b, &u->res);
	put_u32(&b, u->npoints);
	for (uint32_t i = 0; i < u->npoints; i++) {
		put_u64(&b, u->points[i].event);
		put_u64(&b, u->points[i].states);
		put_u64(&b, u->points[i].fresh);
	}
	put_u32(&b, u->ncov);
	for (uint32_t i = 0; i < u->ncov; i++) {
		put_u64(&b, u->cov[i][0]);
		put_u64(&b, u->cov[i][1]);
	}
	/* header, fields, the two counts and their entries: the layout above */
	PN_ASSERT(b.p != NULL && b.len >= 16 + 24 * (size_t)u->npoints + 16 * (size_t)u->ncov);
	*len = b.len;
	return b.p;
}

bool pn_unit_result_decode(const uint8_t *bytes, size_t len, struct pn_unit_result *u, char *why,
			   size_t why_len)
{
	struct rd r = {.p = bytes, .len = len};
	memset(u, 0, sizeof(*u));
	if (get_u32(&r) != UNIT_MAGIC || get_u32(&r) != RESULT_FIELDS) {
		snprintf(why, why_len, "not a unit result of this build (magic or field count)");
		return false;
	}
	uint32_t status = get_u32(&r);
	u->status = (enum pn_unit_status)status;
	u->end = get_u64(&r);
	u->events = get_u64(&r);
	u->finished = get_u32(&r) != 0;
	u->fresh_end = get_u64(&r);
	u->relearned = get_u64(&r);
	u->lookups = get_u64(&r);
	u->hits = get_u64(&r);
	u->reruns = get_u64(&r);
	get_check_result(&r, &u->res);
	u->npoints = get_u32(&r);
	if (!r.bad && u->npoints > (len - r.at) / 24)
		r.bad = true;
	u->points = r.bad ? NULL : calloc(u->npoints + 1, sizeof(*u->points));
	for (uint32_t i = 0; !r.bad && i < u->npoints; i++)
		u->points[i] = (struct pn_unit_point){get_u64(&r), get_u64(&r), get_u64(&r)};
	u->ncov = r.bad ? 0 : get_u32(&r);
	if (!r.bad && u->ncov > (len - r.at) / 16)
		r.bad = true;
	u->cov = r.bad ? NULL : calloc(u->ncov + 1, sizeof(*u->cov));
	for (uint32_t i = 0; !r.bad && i < u->ncov; i++) {
		u->cov[i][0] = get_u64(&r);
		u->cov[i][1] = get_u64(&r);
	}
	if (r.bad || r.at != len || status > PN_UNIT_INTERRUPTED) {
		snprintf(why, why_len,
			 "a unit result of %zu bytes is cut short, has bytes left over "
			 "or an unknown status (at byte %zu)",
			 len, r.at);
		pn_unit_result_free(u);
		return false;
	}
	PN_ASSERT(r.at == len && u->points != NULL && u->cov != NULL);
	return true;
}

void pn_unit_encode(const struct pn_unit *u, uint8_t out[PN_UNIT_BYTES])
{
	struct buf b = {0};
	PN_ASSERT(!(u->whole && u->search));
	put_u32(&b, u->schedule);
	put_u32(&b, u->whole ? 1 : u->search ? 2 : u->defaults ? 3 : 0);
	put_u64(&b, u->lo);
	put_u64(&b, u->hi);
	put_u64(&b, u->budget);
	put_u64(&b, u->fresh_base);
	put_u64(&b, u->fresh_lo);
	PN_ASSERT(b.len == PN_UNIT_BYTES);
	memcpy(out, b.p, PN_UNIT_BYTES);
	free(b.p);
}

void pn_unit_decode(const uint8_t in[PN_UNIT_BYTES], struct pn_unit *u)
{
	struct rd r = {.p = in, .len = PN_UNIT_BYTES};
	u->schedule = get_u32(&r);
	uint32_t kind = get_u32(&r);
	u->whole = kind == 1;
	u->search = kind == 2;
	u->defaults = kind == 3;
	u->lo = get_u64(&r);
	u->hi = get_u64(&r);
	u->budget = get_u64(&r);
	u->fresh_base = get_u64(&r);
	u->fresh_lo = get_u64(&r);
	u->lookups = false;
	PN_ASSERT(!r.bad && r.at == PN_UNIT_BYTES);
	PN_ASSERT(kind <= 3); /* the encoder's four kinds: this process's own bytes */
}

void pn_unit_keys_add(struct pn_unit_keys *k, uint64_t key, uint64_t lsn)
{
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->v = realloc(k->v, k->cap * sizeof(*k->v));
		PN_ASSERT(k->v != NULL);
	}
	PN_ASSERT(k->n < k->cap);
	k->v[k->n++] = (struct pn_unit_key){key, lsn};
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
	PN_ASSERT(r->recovered.n == 0 && r->asked.n == 0 && r->relearnt.n == 0);
}

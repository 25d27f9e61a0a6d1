/*
 * run.c: the crash states of one crash point, each looked up in the verdict cache, derived
 * or recovered, judged, and crashed inside its recovery when its turn comes (model layer;
 * run.h; the driver's rules H1-H5 are in checker.h).
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "xxh.h"

#include "cover.h"

double pn_run_wall_seconds(void)
{
	/* Wall time for the report only; nothing simulated depends on it. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

bool pn_run_stopping(struct pn_run *c)
{
	if (c->opt->stop && *c->opt->stop)
		c->interrupted = true;
	return c->interrupted;
}

void pn_run_report(struct pn_run *c, enum pn_violation_kind kind, uint32_t page, uint64_t point,
		   bool in_recovery)
{
	struct pn_check_result *res = c->res;
	PN_ASSERT(kind != PN_VIOL_NONE && kind < PN_VIOL_COUNT && c->w != NULL);
	res->violation = true;
	res->kind = kind;
	res->page = page;
	res->crash_point = point;
	res->schedule = c->schedule;
	res->in_recovery = in_recovery;
	res->choices[0] = 0;
	if (c->x && !pn_schedule_format(&c->x->taken, res->choices, sizeof(res->choices)))
		snprintf(res->choices, sizeof(res->choices), "%s", "...");
	res->seconds_to_violation = pn_run_wall_seconds() - c->t0;
	snprintf(res->detail, sizeof(res->detail), "%s", c->j.detail);
	FILE *f = fmemopen(res->timeline, sizeof(res->timeline) - 1, "w");
	if (f) {
		pn_world_print_trace(c->w, f);
		fclose(f);
	}
}

void pn_run_nested_found(struct pn_run *c, uint64_t event, const char *state)
{
	c->res->recovery_point = event;
	snprintf(c->res->recovery_state, sizeof(c->res->recovery_state), "%s", state);
	size_t l = strlen(c->j.detail);
	PN_ASSERT(l < sizeof(c->j.detail));
	snprintf(c->j.detail + l, sizeof(c->j.detail) - l,
		 " [after a crash at event %llu of recovery]", (unsigned long long)event);
}

/* A verdict as the cross-check reports it. */
static void verdict_text(const struct pn_verdict *v, char *buf, size_t len)
{
	if (v->kind == PN_VIOL_NONE)
		snprintf(buf, len, "pass, recovered WAL end %llX", (unsigned long long)v->end);
	else
		snprintf(buf, len, "%s at page %u, recovered WAL end %llX",
			 pn_violation_name((enum pn_violation_kind)v->kind), v->page,
			 (unsigned long long)v->end);
}

/* The cross-check found the fast verdict v and the full one differ: said, exit 3. */
static _Noreturn void cross_check_failed(struct pn_run *c, const struct pn_verdict *v,
					 const struct pn_verdict *full, uint64_t point,
					 uint64_t rec_event, uint64_t n)
{
	char in_rec[64] = "";
	if (rec_event)
		snprintf(in_rec, sizeof(in_rec), ", crash inside recovery at its event %llu",
			 (unsigned long long)rec_event);
	char fast[128], slow[128];
	verdict_text(v, fast, sizeof(fast));
	verdict_text(full, slow, sizeof(slow));
	fprintf(stderr,
		"penumbra check: cross-check failed: %s, schedule %u, crash point %llu%s, "
		"judged state %llu: the fast path says %s, the full path %s%s%s\n",
		c->sc->name, c->schedule, (unsigned long long)point, in_rec, (unsigned long long)n,
		fast, slow, full->kind ? ": " : "", full->kind ? c->j.detail : "");
	exit(3);
}

/*
 * --cross-check N: every Nth state judged (and every state whose verdict is a violation) is
 * recovered again in a new world from its fates and judged the full way (C2 with the
 * oracle's pages made afresh, no verdict cache: the reference path); any difference from
 * the verdict the check uses (v: cached, or judged with the point's table of oracle pages,
 * judge.h J3) aborts the check, exit 3. Neither counted nor seen by coverage (its hits are
 * undone: H4), so the results are those of a check without it. rec_event: the event of the
 * recovery crashed in (0: a crash of the run).
 */
static void cross_check(struct pn_run *c, const struct pn_device *dev,
			const struct pn_write_fate *fates, pn_lsn upto, struct pn_verdict *v,
			uint64_t point, uint64_t rec_event)
{
	uint64_t every = c->opt->cross_check_every, n = ++c->cross_checked;
	if (c->opt->cross_check_fault && n == c->opt->cross_check_fault)
		v->end++; /* test hook: a fast path that is wrong */
	if (!every || (n % every != 0 && v->kind == PN_VIOL_NONE))
		return;
	size_t nsites;
	uint64_t(*saved)[2] = pn_cover_save(&nsites);
	char *detail = malloc(sizeof(c->j.detail));
	PN_ASSERT(detail != NULL);
	memcpy(detail, c->j.detail, sizeof(c->j.detail));
	int rc;
	struct pn_verdict full = {0};
	struct pn_world *r = pn_judge_recover(&c->j, dev, fates, c->schedule, false, &rc);
	pn_judge_recovered(&c->j, r, rc, upto, &full, false);
	pn_judge_world_free(r);
	pn_cover_restore(saved, nsites);
	bool same = full.kind == v->kind && full.end == v->end &&
		    (full.kind == PN_VIOL_NONE || full.page == v->page);
	if (!same)
		cross_check_failed(c, v, &full, point, rec_event, n);
	memcpy(c->j.detail, detail, sizeof(c->j.detail));
	free(detail);
	free(saved);
}

/* The verdict of the state of dev under fates, judged up to upto (judge.h): derived from a
 * base of d (derive.h; d's point was given the same upto), or recovered (and kept as a base
 * of d), or with d NULL (derivation off) recovered. */
static void recover_state(struct pn_run *c, struct pn_derive *d, const struct pn_device *dev,
			  const struct pn_write_fate *fates, pn_lsn upto, struct pn_verdict *v)
{
	if (d && pn_derive_state(d, &c->j, dev, fates, v)) {
		c->res->derived++;
	} else if (d) {
		pn_derive_recover(d, &c->j, dev, fates, c->schedule, v);
	} else {
		int rc;
		struct pn_world *r = pn_judge_recover(&c->j, dev, fates, c->schedule, false, &rc);
		pn_judge_recovered(&c->j, r, rc, upto, v, true);
		pn_judge_world_free(r);
	}
}

/* One crash state inside recovery (r: the recovering world, stopped after an event): recover
 * it, judge it against the first recovery's end. Returns false at a violation (reported). */
static bool nested_state(struct pn_run *c, const struct pn_world *r, const struct pn_crash_enum *ce,
			 pn_lsn first_end, uint64_t point)
{
	struct pn_verdict v;
	recover_state(c, c->derive_nested, &r->dev, ce->fates, first_end, &v);
	cross_check(c, &r->dev, ce->fates, first_end, &v, point, r->events);
	c->res->crash_states++;
	c->res->recoveries++;
	pn_judge_acks(&c->j, c->w->e, &v);
	if (v.kind == PN_VIOL_NONE)
		return true;
	char state[sizeof(c->res->recovery_state)];
	pn_crash_enum_encode(ce, state, sizeof(state));
	pn_run_nested_found(c, r->events, state);
	pn_run_report(c, (enum pn_violation_kind)v.kind, v.page, point, true);
	return false;
}

/* Adds image to m (H7: one crash inside recovery's images, a few dozen; H8: one crash
 * point's, a few hundred): true when it is new. */
static bool met_add(struct pn_met *m, uint64_t image)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->v[i] == image)
			return false;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 32;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		PN_ASSERT(m->v != NULL);
	}
	m->v[m->n++] = image;
	return true;
}

/*
 * Crash inside recovery (H5): recover the same image again one event at a time; wherever the
 * recovering world's device changed, crash it in the states of the scenario's crash model
 * that pn_crash_enum_begin_nested() lists (all lost, all persisted, each write torn as
 * crash.tear allows), recover each, and judge it against the first recovery's expectations.
 * As checker.h H7 says, a state whose crash image this crash has met is not recovered again.
 */
static bool nested(struct pn_run *c, const struct pn_write_fate *fates, pn_lsn first_end,
		   uint64_t point)
{
	struct pn_world *r = pn_judge_crashed(&c->j, &c->w->dev, fates, c->schedule, true);
	struct pn_crash_enum ce;
	struct pn_met met = {0};
	met_add(&met, pn_world_dur_digest(r)); /* the image it starts from: passed */
	if (c->derive_nested) /* DR8: the base the state's recovery stands for, then its own */
		pn_derive_lend(c->derive_nested, c->derive, &r->dev, first_end);
	bool ok = true, begun = pn_engine_recover(r->e); /* it began once: it does again */
	uint64_t version = r->dev.version;
	pn_crash_enum_init(&ce);
	while (begun && ok && pn_world_step(r) == PN_STEP_EVENT) {
		if (r->dev.version == version)
			continue;
		version = r->dev.version;
		pn_crash_enum_begin_nested(&ce, &r->dev, c->sc);
		if (c->derive_nested) /* DR1, DR6: a point of r, its states judged to first_end */
			pn_derive_point(c->derive_nested, &r->dev, first_end);
		while (ok && pn_crash_enum_next(&ce)) {
			uint64_t image = pn_device_crash_digest(&r->dev, ce.fates,
								pn_world_dur_digest(r));
			uint64_t judged[2] = {image, first_end}; /* H8: what its verdict is of */
			if (met_add(&met, image) &&
			    (c->opt->nested_alone ||
			     met_add(&c->point_met, XXH3_64bits(judged, sizeof(judged)))))
				ok = nested_state(c, r, &ce, first_end, point);
			else
				c->res->crash_states++; /* H7, H8 */
		}
	}
	if (c->derive_nested) /* DR8: the lent base given back */
		pn_derive_point(c->derive_nested, NULL, first_end);
	free(met.v);
	pn_crash_enum_free(&ce);
	pn_judge_world_free(r);
	return ok;
}

/* A state a unit's survey met before its range (unit.h U2): recovered again for its verdict
 * (the WAL end C1 needs), neither counted nor crashed inside recovery, its coverage hits
 * undone (H4). */
static void relearn(struct pn_run *c, struct pn_verdict *slot)
{
	size_t n;
	uint64_t(*saved)[2] = pn_cover_save(&n);
	PN_ASSERT(c->unit != NULL && slot->used && !slot->known);
	int rc;
	struct pn_world *r = pn_judge_recover(&c->j, &c->w->dev, c->ce.fates, c->schedule, false,
					      &rc);
	pn_judge_recovered(&c->j, r, rc, UINT64_MAX, slot, true);
	pn_judge_world_free(r);
	slot->known = true;
	pn_cover_restore(saved, n);
	free(saved);
	c->ur->relearned++;
	pn_unit_keys_add(&c->ur->relearnt, slot->key, slot->end);
}

/* U6: a state met before the unit's range, its C1 check deferred: its key and the end C1
 * needs (every acknowledged commit at or before it) kept for the unit's lookups. */
static void defer_acks(struct pn_run *c, uint64_t key)
{
	pn_unit_keys_add(&c->ur->asked, key, pn_run_acks_need(c));
}

pn_lsn pn_run_acks_need(const struct pn_run *c)
{
	struct pn_acks_view acks;
	pn_lsn need = 0;
	pn_engine_acks(c->w->e, &acks);
	for (uint64_t i = 0; i < acks.n; i++)
		need = PN_MAX(need, acks.lsns[i]);
	return need;
}

/* H3: a crash state's key: the crash image's content (sim/device.h DV10: the digest of the
 * image the state would build, by its bytes alone), so one image is recovered once per cache
 * scope whichever schedule, crash point and fates give it: a write persisted before an fsync
 * and the same write durable after it, a write whose bytes the durable image already holds
 * and the same write lost. It is exact: recovery reads only the disk. */
uint64_t pn_run_state_key(const struct pn_run *c)
{
	return pn_device_crash_digest(&c->w->dev, c->ce.fates, pn_world_dur_digest(c->w));
}

/* The current state's verdict: the cache's (H2) or a new one. False: none to judge here (a
 * unit's lookup deferred its C1 check, U6). *fresh: the state is new. */
static bool state_verdict(struct pn_run *c, uint64_t key, struct pn_verdict *out, bool *fresh)
{
#ifndef NDEBUG
	PN_ASSERT(key == pn_run_state_key(c)); /* the key taken ahead is the state's */
#endif
	struct pn_verdict *slot = pn_cache_slot(&c->cache, key);
	*fresh = !slot->used;
	if (!slot->used) {
		struct pn_verdict v = {.key = key, .used = true, .known = true};
		recover_state(c, c->derive, &c->w->dev, c->ce.fates, UINT64_MAX, &v);
		c->res->recoveries++;
		c->new_states++;
		pn_cache_fill(&c->cache, slot, &v);
		if (c->opt->list_states)
			fprintf(c->opt->list_states, "%016llx\n", (unsigned long long)key);
		if (c->unit && c->unit->lookups) /* U6: for the owners */
			pn_unit_keys_add(&c->ur->recovered, key, v.end);
	} else if (!slot->known && c->unit && c->unit->lookups) {
		defer_acks(c, key); /* U6: judged once the run is over */
		return false;
	} else if (!slot->known) {
		relearn(c, slot);
	}
	PN_ASSERT(slot->key == key && slot->known);
	*out = *slot; /* a failing state stops the search: cached ones pass C2/C3 */
	return true;
}

/* The state's crash point and fates into the result (replay.state and its readable form). */
static void record_state(struct pn_run *c)
{
	pn_crash_enum_encode(&c->ce, c->res->state, sizeof(c->res->state));
	pn_crash_enum_describe(&c->ce, c->res->state_text, sizeof(c->res->state_text));
}

uint32_t pn_run_samples(const struct pn_run *c)
{
	if (c->x && pn_explore_preempted(c->x) > 0)
		return c->sc->crash.search_samples;
	return c->sc->crash.samples;
}

#define AHEAD 8u /* states whose keys are taken before they are judged */

bool pn_run_point(struct pn_run *c, uint64_t point)
{
	struct pn_check_result *res = c->res;
	PN_ASSERT(c->w != NULL && c->j.oracle != NULL);
	uint64_t seed = point ^ ((uint64_t)c->schedule << 40);
	pn_crash_enum_begin(&c->ce, &c->w->dev, c->sc, seed);
	/* the same states AHEAD on: their keys' slots are asked for while this one is judged */
	pn_crash_enum_begin(&c->ahead, &c->w->dev, c->sc, seed);
	uint32_t samples = pn_run_samples(c);
	pn_crash_enum_samples(&c->ce, samples);
	pn_crash_enum_samples(&c->ahead, samples);
	/* SP2: a sampled point drawing other samples than crash.samples */
	res->search_sampled += pn_crash_enum_sampled(&c->ce) && samples != c->sc->crash.samples;
	/* the keys of the next AHEAD states, their slots asked for (a slot is a miss of the
	 * memory in a big table: asked for several states early, the misses overlap) */
	uint64_t dur = pn_world_dur_digest(c->w), ring[AHEAD];
	uint32_t head = 0;
	for (uint32_t i = 0; i < AHEAD && pn_crash_enum_next(&c->ahead); i++) {
		ring[i] = pn_device_crash_digest(&c->w->dev, c->ahead.fates, dur);
		pn_cache_prefetch(&c->cache, ring[i]);
	}
	res->crash_points++;
	c->point_met.n = 0;    /* H8: a point's crashes inside recovery share their images */
	pn_judge_point(&c->j); /* the oracle took records since the last point */
	if (c->derive)         /* DR1: bases hold for one point; DR6: a search's run carries them */
		pn_derive_point(c->derive, c->x ? &c->w->dev : NULL, UINT64_MAX);
	bool between = pn_engine_ckpt_phase(c->w->e) == PN_CKPT_PHASE_AFTER_FSYNC;
	PN_TESTCASE("crash between a checkpoint's data fsync and its control-file update", between);
	while (!pn_run_stopping(c) && pn_crash_enum_next(&c->ce)) {
		bool torn_wal = false, fresh;
		for (uint32_t r = 0; r < c->ce.nrel; r++)
			torn_wal |= c->ce.fates[c->ce.rel[r]].fate == PN_FATE_TORN &&
				    c->w->dev.unsynced[c->ce.rel[r]].file == PN_FILE_WAL;
		PN_TESTCASE("a crash state tears a WAL write (torn WAL tail)", torn_wal);
		res->crash_states++;
		uint64_t key = ring[head]; /* ce's state: ahead enumerates the same ones */
		if (pn_crash_enum_next(&c->ahead)) {
			ring[head] = pn_device_crash_digest(&c->w->dev, c->ahead.fates, dur);
			pn_cache_prefetch(&c->cache, ring[head]);
		}
		head = (head + 1) % AHEAD;
		struct pn_verdict v;
		if (!state_verdict(c, key, &v, &fresh))
			continue;
		cross_check(c, &c->w->dev, c->ce.fates, UINT64_MAX, &v, point, 0);
		pn_judge_acks(&c->j, c->w->e, &v);
		pn_world_hash_mix(c->w, v.key,
				  v.end * 64 + v.kind); /* --twice compares verdicts too */
		if (v.kind != PN_VIOL_NONE) {
			record_state(c);
			pn_run_report(c, (enum pn_violation_kind)v.kind, v.page, point, false);
			return false;
		}
		/* H5: the state passed C1-C3 (a failing one is the violation, whatever a crash
		 * inside its recovery would do): every Nth new one is crashed inside it too */
		if (fresh && c->opt->nested_every && c->new_states % c->opt->nested_every == 0 &&
		    !nested(c, c->ce.fates, v.end, point)) {
			record_state(c);
			return false;
		}
	}
	res->capped_points += c->ce.capped; /* crash.torn_writes: 2 left states out here */
	return !c->interrupted;
}

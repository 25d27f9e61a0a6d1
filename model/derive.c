/*
 * derive.c: derived crash states (model layer; derive.h has rules DR1-DR5). The bases of the
 * current crash point, the test that one fits a state (DR2), the patches that make its
 * recovered image the state's where the judgement reads (DR3), and the full recovery that
 * keeps a new base.
 */
#include "derive.h"

#include <stdlib.h>
#include <string.h>
#include "xxh.h"

#include "cover.h"

#define PATCH_BLOCK 512u /* the unit in which two crash images are compared for patches */

/* A fully recovered state of the current crash point (derive.h). */
struct base {
	struct pn_world *r;
	struct pn_write_fate *fates;
	struct pn_range *reads, *writes, *judged; /* R, W, J */
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
	bool lent; /* DR8: another object's base, lent for one crash inside recovery; only its
		    * fates are this object's */
};

/* A range of a base's recovered image replaced by the derived state's bytes; saved holds
 * what it held, then the state's bytes (len each). */
struct patch {
	struct pn_range at;
	uint8_t *saved;
};

#define MEMO_CAP 4096u /* a point's summaries kept at most, half of the table */

struct summary_memo {
	uint64_t key; /* the read's place and arguments and the fates that meet it, hashed */
	struct pn_summary_value (*fn)(const uint8_t *, uint32_t, const uint64_t *); /* compared */
	uint32_t gen;
	struct pn_summary_value v;
};

struct pn_derive {
	const struct pn_scenario *sc;
	struct base bases[DERIVE_BASES_MAX];
	uint32_t nbases, base_next;
	uint32_t refused; /* states of this point no base fitted, in a row (DR5) */
	int stands;       /* DR8: the base whose recovery the last state's stands for, or -1 */
	/* DR6: the point the bases' fates index (valid: a run that carries is under way) */
	bool valid;
	pn_lsn upto; /* the point's states are judged up to it (judge.h; UINT64_MAX: no bound) */
	uint64_t dur_version;
	struct pn_unsynced *old; /* its unsynced writes (place and seq), nold of them */
	uint32_t *map;           /* carries(): where each is now */
	uint32_t nold, old_cap;
	uint32_t synced;            /* carries(): how many of them were made durable since */
	struct pn_range_log log[3]; /* a base's recovery reads, writes, judgement reads */
	struct pn_summary_log slog; /* a base's recovery summarized reads (DV8) */
	/* the state being derived: the run's device and the state's fates */
	const struct pn_device *dev;
	const struct pn_write_fate *fates;
	uint8_t *cmp[2]; /* the state's bytes, a base's */
	uint32_t cmp_cap;
	struct patch *patch;
	/* the point's crash images' summaries taken for the bases' summarized reads (DV8), by
	 * the read and the fates of the writes that meet it; entries of an older point's
	 * generation are free */
	struct summary_memo *memo;
	uint32_t memo_gen, memo_len;
	uint32_t npatch, patch_cap;
};

struct pn_derive *pn_derive_new(const struct pn_scenario *sc)
{
	struct pn_derive *d = calloc(1, sizeof(*d));
	PN_ASSERT(d != NULL && sc != NULL);
	d->sc = sc;
	d->upto = UINT64_MAX;
	d->stands = -1;
	d->memo_gen = 1; /* the table's zeroed entries are generation 0's: free */
	return d;
}

static void base_free(struct base *b)
{
	if (b->lent) { /* the lender's to free */
		free(b->fates);
		*b = (struct base){0};
		return;
	}
	if (b->r)
		pn_judge_world_free(b->r);
	free(b->fates);
	free(b->reads);
	free(b->writes);
	free(b->judged);
	free(b->sums);
	free(b->cov);
	free(b->jcov);
	*b = (struct base){0};
}

/* DR6, DR7: maps the bases' point's writes onto dev's unsynced ones (d->map[i]: dev's index,
 * or UINT32_MAX for a write made durable since). False when dev's point cannot take the
 * bases: not the same run and bound, a durable change other than those writes, a write
 * neither kept nor made durable, or (DR7) one made durable that an earlier write still
 * unsynced overlaps (the durable image lays it first, the bases' images last). */
static bool carries(struct pn_derive *d, const struct pn_device *dev, pn_lsn upto)
{
	if (!d->valid || upto != d->upto)
		return false;
	uint32_t j = 0, synced = 0;
	for (uint32_t i = 0; i < d->nold; i++) {
		bool kept = j < dev->nunsynced && dev->unsynced[j].seq == d->old[i].seq;
		d->map[i] = kept ? j++ : UINT32_MAX;
		synced += !kept;
	}
	for (uint32_t k = j; k < dev->nunsynced; k++) /* the rest: dispatched since */
		if (d->nold && dev->unsynced[k].seq <= d->old[d->nold - 1].seq)
			return false;
	if (dev->dur_version - d->dur_version != synced) /* one step a write made durable */
		return false;
	d->synced = synced;
	for (uint32_t i = 0; i < d->nold && synced; i++) {
		if (d->map[i] != UINT32_MAX)
			continue;
		const struct pn_unsynced *g = &d->old[i]; /* made durable since */
		for (uint32_t r = 0; r < i; r++) {
			const struct pn_unsynced *e = &d->old[r];
			if (d->map[r] != UINT32_MAX && e->file == g->file &&
			    e->offset < g->offset + g->len && g->offset < e->offset + e->len)
				return false;
		}
	}
	return true;
}

/* DR6, DR7: each base's fates over dev's unsynced writes: a kept write's fate as it was, the
 * ones dispatched since lost; a base that did not persist a write made durable since is
 * dropped (its image is no crash image of dev). */
static void bases_carry(struct pn_derive *d, const struct pn_device *dev)
{
	uint32_t nf = dev->nunsynced, kept = 0;
	for (uint32_t k = 0; k < d->nbases; k++) {
		struct base *b = &d->bases[k];
		PN_ASSERT(b->nfates == d->nold);
		bool fits = true;
		for (uint32_t i = 0; i < d->nold && fits; i++)
			fits = d->map[i] != UINT32_MAX || b->fates[i].fate == PN_FATE_PERSISTED;
		if (!fits) {
			base_free(b);
			continue;
		}
		/* none made durable: every write keeps its index, the new ones follow */
		struct pn_write_fate *f = d->synced ? malloc((nf + 1) * sizeof(*f))
						    : realloc(b->fates, (nf + 1) * sizeof(*f));
		PN_ASSERT(f != NULL);
		for (uint32_t i = d->synced ? 0 : d->nold; i < nf; i++)
			f[i] = (struct pn_write_fate){.fate = PN_FATE_LOST};
		for (uint32_t i = 0; i < d->nold && d->synced; i++)
			if (d->map[i] != UINT32_MAX)
				f[d->map[i]] = b->fates[i];
		if (d->synced)
			free(b->fates);
		b->fates = f;
		b->nfates = nf;
		if (kept != k) {
			d->bases[kept] = *b;
			*b = (struct base){0};
		}
		kept++;
	}
	d->nbases = kept;
	d->base_next = kept % DERIVE_BASES_MAX;
}

/* The point dev is at, for DR6's next test. */
static void point_note(struct pn_derive *d, const struct pn_device *dev, pn_lsn upto)
{
	d->valid = true;
	d->upto = upto;
	d->dur_version = dev->dur_version;
	if (dev->nunsynced > d->old_cap) {
		d->old_cap = 2 * dev->nunsynced;
		d->old = realloc(d->old, d->old_cap * sizeof(*d->old));
		d->map = realloc(d->map, d->old_cap * sizeof(*d->map));
		PN_ASSERT(d->old != NULL && d->map != NULL);
	}
	for (uint32_t i = 0; i < dev->nunsynced; i++) {
		d->old[i] = dev->unsynced[i];
		d->old[i].data = NULL; /* place and order only: the bytes stay the device's */
	}
	d->nold = dev->nunsynced;
}

void pn_derive_point(struct pn_derive *d, const struct pn_device *dev, pn_lsn upto)
{
	PN_ASSERT(d->nbases <= DERIVE_BASES_MAX && d->npatch == 0);
	d->refused = 0;
	d->stands = -1;           /* carrying moves the bases */
	if (++d->memo_gen == 0) { /* wrapped: every entry freed, as at the start */
		if (d->memo)
			memset(d->memo, 0, 2 * MEMO_CAP * sizeof(*d->memo));
		d->memo_gen = 1;
	}
	d->memo_len = 0; /* a new device: the summaries kept are another point's */
	if (dev && carries(d, dev, upto)) {
		bases_carry(d, dev);
		point_note(d, dev, upto);
		return;
	}
	for (uint32_t i = 0; i < d->nbases; i++)
		base_free(&d->bases[i]);
	d->nbases = d->base_next = 0;
	d->valid = false;
	d->upto = upto;
	if (dev)
		point_note(d, dev, upto);
}

void pn_derive_free(struct pn_derive *d)
{
	if (!d)
		return;
	pn_derive_point(d, NULL, UINT64_MAX);
	free(d->old);
	free(d->map);
	for (int i = 0; i < 3; i++)
		free(d->log[i].r);
	free(d->slog.r);
	free(d->patch);
	free(d->memo);
	free(d->cmp[0]);
	free(d->cmp[1]);
	free(d);
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
	if (*n > 0) /* an empty log may have no array yet (memcpy's source must not be NULL) */
		memcpy(out, log->r, *n * sizeof(*out));
	for (uint32_t i = 1; i < *n; i++) /* sorted, disjoint, not adjacent */
		PN_ASSERT(out[i - 1].file < out[i].file ||
			  out[i - 1].off + out[i - 1].len < out[i].off);
	log->n = 0;
	return out;
}

static void cmp_room(struct pn_derive *d, uint32_t n)
{
	if (n <= d->cmp_cap)
		return;
	d->cmp_cap = 2 * n;
	for (int j = 0; j < 2; j++) {
		d->cmp[j] = realloc(d->cmp[j], d->cmp_cap);
		PN_ASSERT(d->cmp[j] != NULL);
	}
}

/* Reads [off, off + n) of file f of the current state's crash image into cmp[0] and of base
 * b's into cmp[1]. */
static void both_images(struct pn_derive *d, const struct base *b, uint32_t f, uint64_t off,
			uint32_t n)
{
	cmp_room(d, n);
	pn_device_crash_read(d->dev, d->fates, (enum pn_file)f, off, n, d->cmp[0]);
	pn_device_crash_read(d->dev, b->fates, (enum pn_file)f, off, n, d->cmp[1]);
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

/* The current state's value of summarized read r (DV8). Within a point (the device fixed) the
 * bytes it summarizes are a function of the fates of the writes that meet its range, so the
 * value is kept by those and the read, for the point's other states and bases. */
static struct pn_summary_value my_summary(struct pn_derive *d, const struct pn_summary_read *r)
{
	const struct pn_device *dev = d->dev;
	uint64_t place[2 + PN_SUMMARY_ARGS] = {((uint64_t)r->file << 32) | r->len, r->off};
	memcpy(place + 2, r->s.arg, sizeof(r->s.arg)); /* the function: compared, not hashed */
	uint64_t key = XXH3_64bits(place, sizeof(place));
	for (uint32_t i = 0; i < dev->nunsynced; i++) {
		const struct pn_unsynced *u = &dev->unsynced[i];
		if (u->file != r->file || u->offset >= r->off + r->len ||
		    r->off >= u->offset + u->len)
			continue;
		const struct pn_write_fate *f = &d->fates[i];
		uint64_t fate[3] = {i, f->fate, f->fate == PN_FATE_TORN ? f->sectors : 0};
		key = XXH3_64bits_withSeed(fate, sizeof(fate), key);
	}
	if (!d->memo) {
		d->memo = calloc(2 * MEMO_CAP, sizeof(*d->memo));
		PN_ASSERT(d->memo != NULL);
	}
	uint32_t j = (uint32_t)key & (2 * MEMO_CAP - 1);
	while (d->memo[j].gen == d->memo_gen && (d->memo[j].key != key || d->memo[j].fn != r->s.fn))
		j = (j + 1) & (2 * MEMO_CAP - 1);
	if (d->memo[j].gen == d->memo_gen)
		return d->memo[j].v;
	cmp_room(d, r->len);
	pn_device_crash_read(dev, d->fates, (enum pn_file)r->file, r->off, r->len, d->cmp[0]);
	struct pn_summary_value v = r->s.fn(d->cmp[0], r->len, r->s.arg);
	if (d->memo_len < MEMO_CAP) { /* else the table stays at most half full: not kept */
		d->memo[j] = (struct summary_memo){.key = key,
						   .fn = r->s.fn,
						   .gen = d->memo_gen,
						   .v = v};
		d->memo_len++;
	}
	return v;
}

/* DR2: whether recovery of the current state would read what base b's read: the same bytes,
 * and the same value of every summarized read (DV8: where a write whose fates differ meets
 * it, the state's own summary, kept for the point by my_summary). */
static bool reads_same(struct pn_derive *d, const struct base *b)
{
	PN_ASSERT(b->nfates == d->dev->nunsynced); /* DR1 */
	if (!pn_check_reads_same(d->dev, d->fates, b->fates, b->reads, b->nreads))
		return false;
	for (uint32_t k = 0; k < b->nsums; k++) {
		const struct pn_summary_read *r = &b->sums[k];
		if (!pn_device_fates_differ_in(d->dev, d->fates, b->fates, (enum pn_file)r->file,
					       r->off, r->len))
			continue; /* DV6: the same bytes there */
		struct pn_summary_value v = my_summary(d, r);
		if (v.v[0] != r->v.v[0] || v.v[1] != r->v.v[1])
			return false;
	}
	return true;
}

/* Adds a patch of [lo, hi) of file f (the current state's bytes at cmp[0] + (lo - at)). */
static void patch_add(struct pn_derive *d, uint32_t f, uint64_t lo, uint64_t hi, uint64_t at)
{
	PN_ASSERT(at <= lo && lo < hi && hi - at <= d->cmp_cap);
	if (d->npatch == d->patch_cap) {
		d->patch_cap = d->patch_cap ? 2 * d->patch_cap : 16;
		d->patch = realloc(d->patch, d->patch_cap * sizeof(*d->patch));
		PN_ASSERT(d->patch != NULL);
	}
	uint32_t n = (uint32_t)(hi - lo);
	struct patch *p = &d->patch[d->npatch++];
	p->at = (struct pn_range){.file = f, .len = n, .off = lo};
	p->saved = malloc(2 * (size_t)n); /* the base's bytes, then the state's */
	PN_ASSERT(p->saved != NULL);
	memcpy(p->saved + n, d->cmp[0] + (lo - at), n);
}

/* The part of [lo, hi) of file f that recovery did not write (there both recovered images
 * hold recovery's bytes) and the judgement read, as patches (the state's bytes of file
 * offset at are at cmp[0]). */
static void patch_block(struct pn_derive *d, const struct base *b, uint32_t f, uint64_t lo,
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
				patch_add(d, f, a, e, at);
		}
		lo = w ? PN_MAX(lo, w->off + w->len) : hi;
	}
}

static void patches_drop(struct pn_derive *d)
{
	for (uint32_t i = 0; i < d->npatch; i++)
		free(d->patch[i].saved);
	d->npatch = 0;
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

/* DR3, DR4: the patches that make base b's recovered image the current state's wherever the
 * judgement reads. False: patches are needed where the judgement may not read them again. */
static bool patches_find(struct pn_derive *d, const struct base *b)
{
	const struct pn_device *dev = d->dev;
	patches_drop(d);
	for (uint32_t i = 0; i < dev->nunsynced; i++) {
		const struct pn_unsynced *u = &dev->unsynced[i];
		if (pn_device_fate_same(dev, i, &d->fates[i], &b->fates[i]) ||
		    !patch_may(b, u->file, u->offset, u->len))
			continue; /* DV6: the images differ only inside the other writes */
		both_images(d, b, u->file, u->offset, u->len); /* the write at once, then blocks */
		for (uint64_t lo = u->offset; lo < u->offset + u->len; lo += PATCH_BLOCK) {
			uint64_t hi = PN_MIN(lo + PATCH_BLOCK, u->offset + u->len);
			if (memcmp(d->cmp[0] + (lo - u->offset), d->cmp[1] + (lo - u->offset),
				   hi - lo) != 0)
				patch_block(d, b, u->file, lo, hi, u->offset);
		}
	}
	return !d->npatch || d->sc->protocol.mode != PN_MODE_PUSHDOWN;
}

/* Applies the patches to base b's device (apply), or undoes them, in reverse order. */
static void patches_apply(struct pn_derive *d, struct base *b, bool apply)
{
	struct pn_device *dev = &b->r->dev;
	for (uint32_t k = 0; k < d->npatch; k++) {
		struct patch *p = &d->patch[apply ? k : d->npatch - 1 - k];
		enum pn_file f = (enum pn_file)p->at.file;
		if (apply)
			pn_device_read(dev, f, p->at.off, p->at.len, p->saved);
		pn_device_format_write(dev, f, p->at.off, p->saved + (apply ? p->at.len : 0),
				       p->at.len);
	}
}

bool pn_derive_state(struct pn_derive *d, struct pn_judge *j, const struct pn_device *dev,
		     const struct pn_write_fate *fates, struct pn_verdict *v)
{
	if (d->refused >= DERIVE_REFUSED_MAX)
		return false;
	d->stands = -1;
	d->dev = dev;
	d->fates = fates;
	for (uint32_t i = 0; i < d->nbases; i++) {
		struct base *b = &d->bases[i];
		if (!reads_same(d, b) || !patches_find(d, b))
			continue; /* no marker here: --coverage is the same with derivation off */
		pn_cover_add(b->cov, b->ncov);
		if (!d->npatch && b->passed) {
			/* no patch: the world to judge is the base's as it was judged, so the
			 * judgement is the base's (its hits added, as a judgement adds them) */
			pn_cover_add(b->jcov, b->njcov);
			v->end = b->end;
			v->kind = PN_VIOL_NONE;
		} else {
			patches_apply(d, b, true);
			pn_judge_recovered(j, b->r, b->rc, d->upto, v, true);
			patches_apply(d, b, false);
		}
		if (!d->npatch) /* DR8: the state's recovered world is the base's where judged */
			d->stands = (int)i;
		patches_drop(d);
		d->refused = 0;
		return true;
	}
	patches_drop(d);
	d->refused++;
	return false;
}

/* Where recovery's device logs what it reads (DV5, DV9) and its summarized reads (DV8): all
 * three set or cleared in one call, summaries only beside both range logs (DV8). */
static void device_logs(struct pn_device *dev, struct pn_range_log *reads,
			struct pn_range_log *writes, struct pn_summary_log *sums)
{
	PN_ASSERT(!sums || (reads && writes));
	dev->reads = reads;
	dev->writes = writes;
	dev->summaries = sums;
}

/* Base b becomes what recovery r of the state (judged into v) read, wrote and hit. */
static void base_keep(struct pn_derive *d, struct base *b, struct pn_world *r, int rc,
		      const struct pn_verdict *v)
{
	uint32_t nf = d->dev->nunsynced;
	b->r = r;
	b->rc = rc;
	b->nfates = nf;
	b->passed = v->kind == PN_VIOL_NONE;
	b->end = v->end;
	b->fates = malloc((nf + 1) * sizeof(*b->fates));
	PN_ASSERT(b->fates != NULL);
	memcpy(b->fates, d->fates, nf * sizeof(*b->fates));
	b->reads = ranges_keep(&d->log[0], &b->nreads);
	b->writes = ranges_keep(&d->log[1], &b->nwrites);
	b->judged = ranges_keep(&d->log[2], &b->njudged);
	b->nsums = d->slog.n;
	b->sums = malloc((b->nsums + 1) * sizeof(*b->sums));
	PN_ASSERT(b->sums != NULL);
	memcpy(b->sums, d->slog.r, b->nsums * sizeof(*b->sums));
	d->slog.n = 0;
}

void pn_derive_recover(struct pn_derive *d, struct pn_judge *j, const struct pn_device *dev,
		       const struct pn_write_fate *fates, uint32_t schedule, struct pn_verdict *v)
{
	int rc;
	d->stands = -1;
	if (d->refused >= DERIVE_REFUSED_MAX) { /* DR5 */
		struct pn_world *r = pn_judge_recover(j, dev, fates, schedule, false, &rc);
		pn_judge_recovered(j, r, rc, d->upto, v, true);
		pn_judge_world_free(r);
		return;
	}
	d->dev = dev;
	d->fates = fates;
	size_t n0, n, nj;
	uint64_t(*before)[2] = pn_cover_save(&n0);
	struct pn_world *r = pn_judge_crashed(j, dev, fates, schedule, false);
	device_logs(&r->dev, &d->log[0], &d->log[1], &d->slog); /* R, W, summaries */
	rc = pn_world_recover(r);
	pn_assert_context(NULL, NULL);
	uint64_t(*cov)[2] = pn_cover_since(before, n0, &n);
	free(before);
	before = pn_cover_save(&n0);
	device_logs(&r->dev, &d->log[2], NULL, NULL); /* J */
	pn_judge_recovered(j, r, rc, d->upto, v, true);
	device_logs(&r->dev, NULL, NULL, NULL);
	uint64_t(*jcov)[2] = pn_cover_since(before, n0, &nj);
	free(before);
	if (rc == 0 && v->kind != PN_VIOL_NONE) {
		/* DR5: C2 stopped at a page: J does not hold the pages after it, which a state
		 * that passes there would read (and the search stops here anyway) */
		free(cov);
		free(jcov);
		d->log[0].n = d->log[1].n = d->log[2].n = d->slog.n = 0;
		pn_judge_world_free(r);
		return;
	}
	d->stands = (int)d->base_next;
	struct base *b = &d->bases[d->base_next];
	base_free(b);
	d->base_next = (d->base_next + 1) % DERIVE_BASES_MAX;
	d->nbases = PN_MIN(d->nbases + 1, DERIVE_BASES_MAX);
	base_keep(d, b, r, rc, v);
	b->cov = cov;
	b->ncov = n;
	b->jcov = jcov;
	b->njcov = nj;
}

void pn_derive_lend(struct pn_derive *d, const struct pn_derive *from, const struct pn_device *dev,
		    pn_lsn upto)
{
	PN_ASSERT(from && d != from && dev->nunsynced == 0); /* crashed, not yet recovering */
	pn_derive_point(d, NULL, upto);
	if (from->stands < 0)
		return;
	const struct base *b = &from->bases[from->stands];
	PN_ASSERT(from->stands < (int)from->nbases && b->r != NULL);
	if (!b->passed || b->end != upto)
		return; /* judged to another end: its verdict is not this recovery's */
	struct base *l = &d->bases[0];
	*l = *b;
	l->lent = true;
	l->nfates = 0;
	l->fates = malloc(sizeof(*l->fates)); /* none yet: recovery's writes come lost */
	PN_ASSERT(l->fates != NULL);
	d->nbases = d->base_next = 1;
	point_note(d, dev, upto);
}

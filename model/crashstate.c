/*
 * crashstate.c: enumeration of the crash states of one crash point (model layer).
 * What is enumerated, and in which order, is described in crashstate.h.
 */
#include "crashstate.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

/* The phases of a crash point's enumeration, then those of a crash inside recovery. */
enum {
	PH_SUBSETS,
	PH_SINGLES,
	PH_SAMPLES,
	PH_TEARS,
	PH_MIXED,
	PH_PAIRS,
	PH_SPACE,
	PH_DONE,
	PH_N_EDGES,
	PH_N_TEARS,
	PH_N_DONE
};

void pn_crash_enum_init(struct pn_crash_enum *ce) { memset(ce, 0, sizeof(*ce)); }

void pn_crash_enum_free(struct pn_crash_enum *ce)
{
	free(ce->rel);
	free(ce->diff);
	free(ce->full);
	free(ce->fates);
	free(ce->radix);
	free(ce->digit);
	free(ce->pat);
	memset(ce, 0, sizeof(*ce));
}

static void reserve(struct pn_crash_enum *ce, uint32_t n)
{
	if (n <= ce->cap)
		return;
	ce->cap = n * 2;
	ce->rel = realloc(ce->rel, ce->cap * sizeof(*ce->rel));
	ce->diff = realloc(ce->diff, ce->cap * sizeof(*ce->diff));
	ce->full = realloc(ce->full, ce->cap * sizeof(*ce->full));
	ce->fates = realloc(ce->fates, ce->cap * sizeof(*ce->fates));
	ce->radix = realloc(ce->radix, ce->cap * sizeof(*ce->radix));
	ce->digit = realloc(ce->digit, ce->cap * sizeof(*ce->digit));
	ce->pat = realloc(ce->pat, ce->cap * sizeof(*ce->pat));
	PN_ASSERT(ce->rel && ce->diff && ce->full && ce->fates && ce->radix && ce->digit &&
		  ce->pat);
}

bool pn_crash_writes_meet(const struct pn_unsynced *a, const struct pn_unsynced *b)
{
	return a->file == b->file && a->offset < b->offset + b->len &&
	       b->offset < a->offset + a->len;
}

/* The units of write i whose bytes differ from the durable image (all, if another
 * unsynced write overlaps it: then what lies under it depends on that write's fate). */
static uint64_t differing_units(const struct pn_device *d, uint32_t i, uint64_t *full)
{
	const struct pn_unsynced *u = &d->unsynced[i];
	uint32_t nunits;
	PN_ASSERT(i < d->nunsynced);
	pn_device_unit(d, u->offset, u->len, &nunits);
	*full = nunits >= 64 ? UINT64_MAX : (1ull << nunits) - 1;
	for (uint32_t j = 0; j < d->nunsynced; j++)
		if (j != i && pn_crash_writes_meet(u, &d->unsynced[j]))
			return *full;
	uint64_t mask = pn_device_units_differ(d, i); /* DV13: kept while dur stays */
	PN_ASSERT((mask & ~*full) == 0);              /* only units the write covers */
	return mask;
}

/* The unsynced writes that can change something, and their differing units. */
static void relevant(struct pn_crash_enum *ce, const struct pn_device *dev,
		     const struct pn_scenario *sc)
{
	ce->dev = dev;
	ce->sc = sc;
	reserve(ce, dev->nunsynced + 1);
	ce->nrel = 0;
	for (uint32_t i = 0; i < dev->nunsynced; i++) {
		uint64_t full, diff = differing_units(dev, i, &full);
		if (!diff)
			continue;
		PN_ASSERT(ce->nrel == 0 || ce->rel[ce->nrel - 1] < i); /* dispatch order */
		ce->rel[ce->nrel] = i;
		ce->diff[ce->nrel] = diff;
		ce->full[ce->nrel] = full;
		ce->nrel++;
	}
	ce->i = ce->j = ce->k = 0;
	ce->produced = 0;
	ce->exhaustive = false;
	ce->mixed = 0;
	ce->capped = false;
}

static uint64_t whole_space(struct pn_crash_enum *ce);

void pn_crash_enum_begin(struct pn_crash_enum *ce, const struct pn_device *dev,
			 const struct pn_scenario *sc, uint64_t seed)
{
	relevant(ce, dev, sc);
	/* 2^n subsets: exhaustive up to max_unsynced, and never past 2^20 states a point */
	ce->exhaustive = ce->nrel <= PN_MIN(sc->crash.max_unsynced, 20u);
	ce->phase = ce->exhaustive ? PH_SUBSETS : PH_SINGLES;
	ce->space = ce->exhaustive ? 0 : whole_space(ce);
	if (ce->space > 3ull * ce->nrel + 1 + sc->crash.samples)
		ce->space = 0; /* SP1: sampled, as the space is larger */
	if (ce->space)
		ce->phase = PH_SPACE; /* SP1: no sample where every state costs less */
	pn_prng_seed(&ce->rng, sc->seed, PN_STREAM_CRASH, seed);
	ce->samples = sc->crash.samples;
}

void pn_crash_enum_samples(struct pn_crash_enum *ce, uint32_t n)
{
	PN_ASSERT(ce->produced == 0 && ce->i == 0); /* SP2: before the point's first state */
	ce->samples = n;
}

bool pn_crash_enum_sampled(const struct pn_crash_enum *ce) { return !ce->exhaustive && !ce->space; }

void pn_crash_enum_begin_nested(struct pn_crash_enum *ce, const struct pn_device *dev,
				const struct pn_scenario *sc)
{
	relevant(ce, dev, sc);
	ce->phase = PH_N_EDGES;
}

static void set_all(struct pn_crash_enum *ce, enum pn_fate f)
{
	for (uint32_t i = 0; i < ce->dev->nunsynced; i++)
		ce->fates[i] = (struct pn_write_fate){PN_FATE_LOST, 0};
	for (uint32_t r = 0; r < ce->nrel; r++)
		ce->fates[ce->rel[r]].fate = f;
}

static void set_subset(struct pn_crash_enum *ce, uint64_t mask)
{
	set_all(ce, PN_FATE_LOST);
	for (uint32_t r = 0; r < ce->nrel && r < 64; r++)
		if (mask & (1ull << r))
			ce->fates[ce->rel[r]].fate = PN_FATE_PERSISTED;
}

/* Beyond the bound: singles persisted, singles lost, prefixes, then samples. */
static bool next_singles(struct pn_crash_enum *ce)
{
	uint32_t n = ce->nrel;
	if (ce->i < n) {
		set_all(ce, PN_FATE_LOST);
		ce->fates[ce->rel[ce->i++]].fate = PN_FATE_PERSISTED;
		return true;
	}
	if (ce->i < 2ull * n) {
		set_all(ce, PN_FATE_PERSISTED);
		ce->fates[ce->rel[ce->i++ - n]].fate = PN_FATE_LOST;
		return true;
	}
	if (ce->i < 3ull * n + 1) {
		uint64_t k = ce->i++ - 2ull * n; /* prefix of k writes persisted, 0..n */
		set_all(ce, PN_FATE_LOST);
		for (uint64_t r = 0; r < k; r++)
			ce->fates[ce->rel[r]].fate = PN_FATE_PERSISTED;
		return true;
	}
	return false;
}

static bool next_sample(struct pn_crash_enum *ce)
{
	if (ce->i++ >= ce->samples)
		return false;
	set_all(ce, PN_FATE_LOST);
	for (uint32_t r = 0; r < ce->nrel; r++) {
		uint64_t x = pn_prng_next(&ce->rng);
		struct pn_write_fate *f = &ce->fates[ce->rel[r]];
		f->fate = (enum pn_fate)(x % 3);
		if (ce->sc->crash.tear == PN_TEAR_NONE && f->fate == PN_FATE_TORN)
			f->fate = PN_FATE_PERSISTED;
		f->sectors = pn_prng_next(&ce->rng) & ce->diff[r];
		if (ce->sc->crash.tear == PN_TEAR_HALVES) {
			uint32_t n = (uint32_t)__builtin_popcountll(ce->full[r]),
				 half = (n + 1) / 2;
			uint64_t lower = half >= 64 ? UINT64_MAX : (1ull << half) - 1;
			f->sectors = (x & 8 ? lower : ce->full[r] & ~lower) & ce->diff[r];
		}
		PN_ASSERT((f->sectors & ~ce->diff[r]) == 0); /* a tear only of units that differ */
	}
	return true;
}

/* The number of tear patterns of relevant write r, and pattern p as a unit mask. */
static uint64_t tear_patterns(const struct pn_crash_enum *ce, uint32_t r)
{
	uint32_t d = (uint32_t)__builtin_popcountll(ce->diff[r]);
	if (d < 2)
		return 0;
	if (ce->sc->crash.tear == PN_TEAR_HALVES)
		return 2;
	return d <= 8 ? (1ull << d) - 2 : 2ull * (d - 1);
}

#ifndef NDEBUG /* the reference of tear_pattern: Debug builds */
static uint64_t nth_unit(uint64_t mask, uint32_t n)
{
	PN_ASSERT(n < (uint32_t)__builtin_popcountll(mask));
	for (uint32_t b = 0; b < 64; b++)
		if ((mask & (1ull << b)) && n-- == 0)
			return 1ull << b;
	return 0;
}

/* Pattern p of a write whose differing units are diff (d of them), unit by unit. */
static uint64_t tear_pattern_ref(uint64_t diff, uint32_t d, uint64_t p)
{
	uint64_t out = 0;
	if (d <= 8) {
		for (uint32_t b = 0; b < d; b++)
			if ((p + 1) & (1ull << b))
				out |= nth_unit(diff, b);
		return out;
	}
	uint32_t k = (uint32_t)(p % (d - 1)) + 1;
	for (uint32_t b = 0; b < k; b++)
		out |= nth_unit(diff, p < d - 1 ? b : d - 1 - b);
	return out;
}
#endif

/* The units of mask laid out by the bits of x: the b-th unit of mask (lowest first) when bit
 * b of x is set (a parallel bit deposit). */
static uint64_t deposit(uint64_t x, uint64_t mask)
{
	uint64_t out = 0;
	for (; mask && x; x >>= 1, mask &= mask - 1)
		if (x & 1)
			out |= mask & -mask;
	return out;
}

/* mask less its lowest n units. */
static uint64_t drop_low(uint64_t mask, uint32_t n)
{
	for (; n && mask; n--)
		mask &= mask - 1;
	return mask;
}

static uint64_t tear_pattern(const struct pn_crash_enum *ce, uint32_t r, uint64_t p)
{
	uint64_t diff = ce->diff[r], out;
	uint32_t d = (uint32_t)__builtin_popcountll(diff);
	if (ce->sc->crash.tear == PN_TEAR_HALVES) {
		uint32_t n = (uint32_t)__builtin_popcountll(ce->full[r]), half = (n + 1) / 2;
		uint64_t lower = half >= 64 ? UINT64_MAX : (1ull << half) - 1;
		return (p == 0 ? lower : ce->full[r] & ~lower) & diff;
	}
	if (d <= 8) {
		out = deposit(p + 1, diff); /* every subset but none and all */
	} else {
		uint32_t k = (uint32_t)(p % (d - 1)) + 1; /* 1..d-1 units */
		PN_ASSERT(p < 2ull * (d - 1)); /* tear_patterns: prefixes, then suffixes */
		out = p < d - 1 ? diff & ~drop_low(diff, k) : drop_low(diff, d - k);
		PN_ASSERT((out & ~diff) == 0 && (uint32_t)__builtin_popcountll(out) == k);
	}
#ifndef NDEBUG
	PN_ASSERT(out == tear_pattern_ref(diff, d, p));
#endif
	return out;
}

/* SP1: the number of distinct states the crash model allows at this point, every write lost,
 * persisted or torn in each pattern a sample could draw (radix[r] fates for write r), or
 * UINT64_MAX when that is more than 2^32 or a sample could draw a tear the patterns do not
 * list (sectors with more than 8 differing units: samples take any subset of them). */
static uint64_t whole_space(struct pn_crash_enum *ce)
{
	uint64_t space = 1;
	for (uint32_t r = 0; r < ce->nrel; r++) {
		uint32_t d = (uint32_t)__builtin_popcountll(ce->diff[r]);
		if (ce->sc->crash.tear == PN_TEAR_SECTORS && d > 8)
			return UINT64_MAX;
		uint64_t tears = 0;
		uint64_t n = ce->sc->crash.tear == PN_TEAR_NONE ? 0 : tear_patterns(ce, r);
		for (uint64_t p = 0; p < n; p++) {
			uint64_t mask = tear_pattern(ce, r, p);
			tears += mask && mask != ce->diff[r];
		}
		ce->radix[r] = (uint32_t)(2 + tears);
		space *= ce->radix[r];
		if (space > (1ull << 32))
			return UINT64_MAX;
	}
	return space;
}

#ifndef NDEBUG /* the reference of next_space: Debug builds */
/* The k-th tear pattern of write r that is a tear (neither none nor all of its differing
 * units), as a unit mask; 0 when it has fewer. */
static uint64_t nth_real_tear(const struct pn_crash_enum *ce, uint32_t r, uint64_t k)
{
	for (uint64_t p = 0, n = tear_patterns(ce, r); p < n; p++) {
		uint64_t mask = tear_pattern(ce, r, p);
		if (mask && mask != ce->diff[r] && k-- == 0)
			return mask;
	}
	return 0;
}

/* SP1: write r's fate for digit v of its radix: 0 lost, 1 persisted, 2 + k torn in its k-th
 * real pattern. */
static struct pn_write_fate space_fate(const struct pn_crash_enum *ce, uint32_t r, uint64_t v)
{
	struct pn_write_fate f = {v == 0   ? PN_FATE_LOST
				  : v == 1 ? PN_FATE_PERSISTED
					   : PN_FATE_TORN,
				  v >= 2 ? nth_real_tear(ce, r, v - 2) : 0};
	PN_ASSERT(v < 2 || f.sectors != 0);
	return f;
}

/* SP1, the slow path kept as the reference: whether ce->fates is state i of the whole
 * space, write r's fate the r-th digit of i in radix[] (space_fate), every other write lost. */
static bool space_state_is(const struct pn_crash_enum *ce, uint64_t i)
{
	uint32_t kept = 0;
	for (uint32_t w = 0; w < ce->dev->nunsynced; w++)
		kept += ce->fates[w].fate != PN_FATE_LOST;
	for (uint32_t r = 0; r < ce->nrel; r++) {
		struct pn_write_fate want = space_fate(ce, r, i % ce->radix[r]);
		const struct pn_write_fate *f = &ce->fates[ce->rel[r]];
		if (f->fate != want.fate || f->sectors != want.sectors)
			return false;
		kept -= f->fate != PN_FATE_LOST;
		i /= ce->radix[r];
	}
	return i == 0 && kept == 0; /* no write but the relevant ones kept */
}
#endif

/* SP1: write r's digit one up (its next fate); false when it wrapped to 0 (lost), which
 * carries into write r + 1. A torn digit takes the next real tear pattern after its last,
 * so a state costs the digits it moves, not a division and a pattern search a write. */
static bool space_digit_up(struct pn_crash_enum *ce, uint32_t r)
{
	PN_ASSERT(r < ce->nrel); /* the state before the last wraps no digit past the top */
	struct pn_write_fate *f = &ce->fates[ce->rel[r]];
	uint32_t v = ++ce->digit[r];
	if (v == ce->radix[r]) {
		ce->digit[r] = 0;
		*f = (struct pn_write_fate){PN_FATE_LOST, 0};
		return false;
	}
	if (v == 1) {
		*f = (struct pn_write_fate){PN_FATE_PERSISTED, 0};
		return true;
	}
	uint64_t n = tear_patterns(ce, r), p = v == 2 ? 0 : ce->pat[r] + 1, mask = 0;
	for (; p < n; p++) {
		mask = tear_pattern(ce, r, p);
		if (mask && mask != ce->diff[r])
			break;
	}
	PN_ASSERT(p < n); /* radix[r] counted the real tears (whole_space) */
	ce->pat[r] = p;
	*f = (struct pn_write_fate){PN_FATE_TORN, mask};
	return true;
}

/* SP1: state i of the whole space (space_state_is), in the order of i, as an odometer:
 * state 0 every write lost, each next one the lowest digit up with its carries. Debug
 * builds check every state against the division's. */
static bool next_space(struct pn_crash_enum *ce)
{
	if (ce->i >= ce->space)
		return false;
	if (ce->i == 0) {
		set_all(ce, PN_FATE_LOST);
		memset(ce->digit, 0, ce->nrel * sizeof(*ce->digit));
	} else {
		uint32_t r = 0;
		while (!space_digit_up(ce, r))
			r++;
	}
#ifndef NDEBUG
	PN_ASSERT(space_state_is(ce, ce->i));
#endif
	ce->i++;
	return true;
}

static bool next_tear(struct pn_crash_enum *ce)
{
	if (ce->sc->crash.tear == PN_TEAR_NONE)
		return false;
	while (ce->j < ce->nrel) {
		uint64_t n = tear_patterns(ce, (uint32_t)ce->j);
		if (ce->k >= 2 * n) {
			ce->j++;
			ce->k = 0;
			continue;
		}
		uint64_t p = ce->k / 2, ctx = ce->k % 2;
		ce->k++;
		uint64_t mask = tear_pattern(ce, (uint32_t)ce->j, p);
		if (!mask || mask == ce->diff[ce->j])
			continue;
		set_all(ce, ctx ? PN_FATE_PERSISTED : PN_FATE_LOST);
		struct pn_write_fate *f = &ce->fates[ce->rel[ce->j]];
		f->fate = PN_FATE_TORN;
		f->sectors = mask;
		return true;
	}
	return false;
}

static bool mixed_on(const struct pn_crash_enum *ce)
{
	return ce->exhaustive && ce->sc->crash.tear != PN_TEAR_NONE &&
	       pn_scenario_torn_writes(ce->sc) >= 2;
}

/* Writes other than a and b (UINT32_MAX: none) persisted as the bits of m, in order. */
static void set_others(struct pn_crash_enum *ce, uint32_t a, uint32_t b, uint64_t m)
{
	set_all(ce, PN_FATE_LOST);
	for (uint32_t r = 0, bit = 0; r < ce->nrel; r++) {
		if (r == a || r == b)
			continue;
		if (m & (1ull << bit++))
			ce->fates[ce->rel[r]].fate = PN_FATE_PERSISTED;
	}
}

/* A tear pattern of write r that is a tear (neither none nor all of its differing units). */
static bool real_tear(const struct pn_crash_enum *ce, uint32_t r, uint64_t p, uint64_t *mask)
{
	*mask = tear_pattern(ce, r, p);
	return *mask && *mask != ce->diff[r];
}

/* The next state of phase 3: write a torn in ma, b (UINT32_MAX: none) in mb, the others
 * persisted as the bits of m; false, and ce->capped, when phase 3 is full. */
static bool emit_tears(struct pn_crash_enum *ce, uint32_t a, uint64_t ma, uint32_t b, uint64_t mb,
		       uint64_t m)
{
	PN_ASSERT(a < ce->nrel && (b == UINT32_MAX || (b < ce->nrel && b != a)));
	PN_ASSERT((ma & ~ce->diff[a]) == 0 && (b == UINT32_MAX || (mb & ~ce->diff[b]) == 0));
	if (ce->mixed >= PN_CRASH_MIXED_MAX) {
		ce->capped = true;
		return false;
	}
	ce->k++;
	ce->mixed++;
	set_others(ce, a, b, m);
	ce->fates[ce->rel[a]] = (struct pn_write_fate){PN_FATE_TORN, ma};
	if (b != UINT32_MAX)
		ce->fates[ce->rel[b]] = (struct pn_write_fate){PN_FATE_TORN, mb};
	return true;
}

/* Phase 3a: write j torn in pattern p, the others persisted as the mixed subset m (1 ..
 * 2^(n-1) - 2; phase 2 had 0 and all); k counts p * mixes + m - 1. */
static bool next_mixed(struct pn_crash_enum *ce)
{
	if (!mixed_on(ce) || ce->nrel < 3)
		return false;
	uint64_t mixes = (1ull << (ce->nrel - 1)) - 2;
	while (ce->j < ce->nrel) {
		uint32_t r = (uint32_t)ce->j;
		if (ce->k >= tear_patterns(ce, r) * mixes) {
			ce->j++;
			ce->k = 0;
			continue;
		}
		uint64_t p = ce->k / mixes, m = ce->k % mixes + 1, mask;
		if (!real_tear(ce, r, p, &mask)) {
			ce->k = (p + 1) * mixes; /* the pattern's other mixes: skipped too */
			continue;
		}
		return emit_tears(ce, r, mask, UINT32_MAX, 0, m);
	}
	return false;
}

/* Phase 3b: writes j < i both torn, in patterns pj and pi, the other n - 2 persisted as the
 * subset m (all 2^(n-2)); k counts (pj * patterns(i) + pi) * 2^(n-2) + m. */
static bool next_pair(struct pn_crash_enum *ce)
{
	if (!mixed_on(ce) || ce->nrel < 2)
		return false;
	uint64_t subs = 1ull << (ce->nrel - 2);
	if (ce->i <= ce->j)
		ce->i = ce->j + 1;
	while (ce->j + 1 < ce->nrel) {
		if (ce->i >= ce->nrel) {
			ce->j++;
			ce->i = ce->j + 1;
			continue;
		}
		uint32_t a = (uint32_t)ce->j, b = (uint32_t)ce->i;
		uint64_t pb = tear_patterns(ce, b);
		if (ce->k >= tear_patterns(ce, a) * pb * subs) {
			ce->i++;
			ce->k = 0;
			continue;
		}
		uint64_t m = ce->k % subs, q = ce->k / subs, ma, mb;
		if (!real_tear(ce, a, q / pb, &ma) || !real_tear(ce, b, q % pb, &mb)) {
			ce->k = (q + 1) * subs;
			continue;
		}
		return emit_tears(ce, a, ma, b, mb, m);
	}
	return false;
}

/* A crash inside recovery: all lost, then all persisted (one state if nothing matters). */
static bool next_nested_edge(struct pn_crash_enum *ce)
{
	if (ce->i >= (ce->nrel ? 2u : 1u))
		return false;
	set_all(ce, ce->i++ ? PN_FATE_PERSISTED : PN_FATE_LOST);
	return true;
}

/* Then each write torn, the others persisted, in one pattern the crash model allows: halves,
 * its first half new; sectors, the first half of its differing units new; none, no tear. */
static bool next_nested_tear(struct pn_crash_enum *ce)
{
	while (ce->sc->crash.tear != PN_TEAR_NONE && ce->j < ce->nrel) {
		uint32_t r = (uint32_t)ce->j++;
		uint32_t d = (uint32_t)__builtin_popcountll(ce->diff[r]);
		if (d < 2)
			continue;
		uint64_t mask = 0;
		if (ce->sc->crash.tear == PN_TEAR_HALVES)
			mask = tear_pattern(ce, r, 0);
		else /* the lowest (d + 1) / 2 units */
			mask = ce->diff[r] & ~drop_low(ce->diff[r], (d + 1) / 2);
		if (!mask || mask == ce->diff[r])
			continue;
		set_all(ce, PN_FATE_PERSISTED);
		ce->fates[ce->rel[r]] = (struct pn_write_fate){PN_FATE_TORN, mask};
		return true;
	}
	return false;
}

bool pn_crash_enum_next(struct pn_crash_enum *ce)
{
	for (;;) {
		bool got = false;
		switch (ce->phase) {
		case PH_SUBSETS:
			PN_ASSERT(ce->exhaustive && ce->nrel <= 20); /* at most 2^20 a point */
			if (ce->i < (1ull << ce->nrel)) {
				set_subset(ce, ce->i++);
				got = true;
			}
			break;
		case PH_SINGLES: got = next_singles(ce); break;
		case PH_SAMPLES: got = next_sample(ce); break;
		case PH_SPACE: got = next_space(ce); break;
		case PH_TEARS: got = next_tear(ce); break;
		case PH_MIXED: got = next_mixed(ce); break;
		case PH_PAIRS: got = next_pair(ce); break;
		case PH_N_EDGES: got = next_nested_edge(ce); break;
		case PH_N_TEARS: got = next_nested_tear(ce); break;
		default: return false;
		}
		if (got) {
			ce->produced++;
			return true;
		}
		ce->phase = ce->phase == PH_SUBSETS ? PH_TEARS : ce->phase + 1;
		ce->i = ce->j = ce->k = 0;
	}
}

uint64_t pn_crash_enum_kept(const struct pn_crash_enum *ce, uint32_t r)
{
	const struct pn_write_fate *f = &ce->fates[ce->rel[r]];
	return f->fate == PN_FATE_PERSISTED ? ce->diff[r]
	       : f->fate == PN_FATE_TORN    ? f->sectors & ce->diff[r]
					    : 0;
}

uint64_t pn_crash_enum_key(const struct pn_crash_enum *ce)
{
	XXH64_state_t st;
	XXH64_reset(&st, ce->dev->dur_version);
	for (uint32_t r = 0; r < ce->nrel; r++) {
		uint64_t eff = pn_crash_enum_kept(ce, r);
		if (!eff)
			continue;
		uint64_t item[2] = {ce->dev->unsynced[ce->rel[r]].seq, eff};
		XXH64_update(&st, item, sizeof(item));
	}
	return XXH64_digest(&st);
}

void pn_crash_enum_describe(const struct pn_crash_enum *ce, char *buf, size_t len)
{
	size_t at = 0;
	uint32_t lost = 0;
	buf[0] = 0;
	for (uint32_t r = 0; r < ce->nrel && at < len; r++) {
		const struct pn_unsynced *u = &ce->dev->unsynced[ce->rel[r]];
		const struct pn_write_fate *f = &ce->fates[ce->rel[r]];
		if (f->fate == PN_FATE_LOST) {
			lost++;
			continue;
		}
		int n = snprintf(buf + at, len - at, "%s%s write #%llu (%s %s", at ? "; " : "",
				 f->fate == PN_FATE_TORN ? "torn" : "persisted",
				 (unsigned long long)u->seq, pn_file_name(u->file),
				 pn_io_why_name((enum pn_io_why)u->why));
		at += n > 0 ? (size_t)n : 0;
		if (at < len && u->file == PN_FILE_DATA && u->page != UINT32_MAX)
			at += (size_t)snprintf(buf + at, len - at, " page %u slot %u", u->page,
					       u->slot);
		if (at < len && f->fate == PN_FATE_TORN)
			at += (size_t)snprintf(buf + at, len - at, ", new units 0x%llx of 0x%llx",
					       (unsigned long long)f->sectors,
					       (unsigned long long)ce->diff[r]);
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, ")");
	}
	if (at < len)
		snprintf(buf + at, len - at, "%s%u unsynced write%s lost", at ? "; " : "", lost,
			 lost == 1 ? "" : "s");
}

/* The compact form of a state that did not fit marks itself so that no decoder takes the
 * writes it lost for lost writes: "p1,p2,...". An empty one is "none". */
static void truncated(char *buf, size_t len, size_t at)
{
	if (!at)
		snprintf(buf, len, "none");
	else if (at >= len && len > 4)
		memcpy(buf + len - 5, ",...", 5);
}

void pn_crash_enum_encode(const struct pn_crash_enum *ce, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (uint32_t r = 0; r < ce->nrel && at < len; r++) {
		const struct pn_write_fate *f = &ce->fates[ce->rel[r]];
		uint64_t seq = ce->dev->unsynced[ce->rel[r]].seq;
		int n = 0;
		if (f->fate == PN_FATE_PERSISTED)
			n = snprintf(buf + at, len - at, "%sp%llu", at ? "," : "",
				     (unsigned long long)seq);
		else if (f->fate == PN_FATE_TORN)
			n = snprintf(buf + at, len - at, "%st%llu:%llx", at ? "," : "",
				     (unsigned long long)seq, (unsigned long long)f->sectors);
		at += n > 0 ? (size_t)n : 0;
	}
	truncated(buf, len, at);
}

/* An unsigned number of base 10 or 16 at *p, digits only (no space, sign or 0x) and no
 * overflow; moves *p past it. */
static bool state_number(const char **p, int base, unsigned long long *v)
{
	char *end;
	if (!(base == 10 ? isdigit((unsigned char)**p) : isxdigit((unsigned char)**p)))
		return false;
	errno = 0;
	*v = strtoull(*p, &end, base);
	*p = end;
	return errno == 0;
}

/* "p12,t13:3": each element 'p' or 't', a write's sequence number, for 't' ':' and a hex mask
 * of the write's units; elements separated by single commas, each write at most once. */
bool pn_crash_fates_decode(const struct pn_device *dev, const char *state,
			   struct pn_write_fate *fates, char *why, size_t len)
{
	for (uint32_t i = 0; i < dev->nunsynced; i++)
		fates[i] = (struct pn_write_fate){PN_FATE_LOST, 0};
	if (!state[0] || !strcmp(state, "none")) /* empty: replay.state left out */
		return true;
	const char *p = state;
	do {
		char kind = *p++;
		unsigned long long seq, mask = 0;
		if (kind != 'p' && kind != 't') {
			snprintf(why, len, "expected 'p' or 't' at character %zu",
				 (size_t)(p - state));
			return false;
		}
		if (!state_number(&p, 10, &seq)) {
			snprintf(why, len,
				 "expected a write's sequence number (decimal digits) at "
				 "character %zu",
				 (size_t)(p - state) + 1);
			return false;
		}
		if (kind == 't' && (*p++ != ':' || !state_number(&p, 16, &mask))) {
			snprintf(why, len, "torn write #%llu needs ':' and a hex mask of its units",
				 seq);
			return false;
		}
		uint32_t i = 0;
		while (i < dev->nunsynced && dev->unsynced[i].seq != seq)
			i++;
		if (i == dev->nunsynced) {
			snprintf(why, len, "write #%llu is not unsynced at this point", seq);
			return false;
		}
		if (fates[i].fate != PN_FATE_LOST) {
			snprintf(why, len, "write #%llu is named twice", seq);
			return false;
		}
		uint32_t nunits;
		pn_device_unit(dev, dev->unsynced[i].offset, dev->unsynced[i].len, &nunits);
		if (kind == 't' && nunits < 64 && (mask >> nunits) != 0) {
			snprintf(why, len,
				 "torn write #%llu has %u units, but its mask 0x%llx names "
				 "units past the write's last",
				 seq, nunits, mask);
			return false;
		}
		fates[i] = (struct pn_write_fate){kind == 'p' ? PN_FATE_PERSISTED : PN_FATE_TORN,
						  mask};
		if (*p && *p != ',') {
			snprintf(why, len, "expected ',' or the end at character %zu",
				 (size_t)(p - state) + 1);
			return false;
		}
	} while (*p++ == ',');
	return true;
}

void pn_crash_fates_encode(const struct pn_device *dev, const struct pn_write_fate *fates,
			   char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < dev->nunsynced && at < len; i++) {
		unsigned long long seq = (unsigned long long)dev->unsynced[i].seq;
		int n = 0;
		if (fates[i].fate == PN_FATE_PERSISTED)
			n = snprintf(buf + at, len - at, "%sp%llu", at ? "," : "", seq);
		else if (fates[i].fate == PN_FATE_TORN)
			n = snprintf(buf + at, len - at, "%st%llu:%llx", at ? "," : "", seq,
				     (unsigned long long)fates[i].sectors);
		at += n > 0 ? (size_t)n : 0;
	}
	truncated(buf, len, at);
}

bool pn_crash_fates_allowed(const struct pn_device *dev, const struct pn_scenario *sc,
			    const struct pn_write_fate *fates, char *why, size_t len)
{
	for (uint32_t i = 0; i < dev->nunsynced; i++) {
		if (fates[i].fate != PN_FATE_TORN)
			continue;
		uint32_t nunits;
		pn_device_unit(dev, dev->unsynced[i].offset, dev->unsynced[i].len, &nunits);
		uint64_t full = nunits >= 64 ? UINT64_MAX : (1ull << nunits) - 1,
			 m = fates[i].sectors;
		uint64_t lower = ((nunits + 1) / 2 >= 64) ? UINT64_MAX
							  : (1ull << (nunits + 1) / 2) - 1;
		const char *bad = NULL;
		if (sc->crash.tear == PN_TEAR_NONE || nunits < 2)
			bad = nunits < 2 ? "it is one unit, which cannot tear"
					 : "crash.tear is none";
		else if (m & ~full)
			bad = "it names units past the write's last";
		else if (sc->crash.tear == PN_TEAR_HALVES && (m & lower) && (m & ~lower))
			bad = "it mixes units of both halves and crash.tear is halves";
		if (!bad)
			continue;
		snprintf(why, len, "write #%llu is torn (units 0x%llx of %u) but %s",
			 (unsigned long long)dev->unsynced[i].seq, (unsigned long long)m, nunits,
			 bad);
		return false;
	}
	return true;
}

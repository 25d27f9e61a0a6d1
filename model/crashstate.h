/*
 * crashstate.h: the crash states of one crash point (model layer; docs/checker.md).
 *
 * At a crash point the device holds a durable image and a list of unsynced writes. A
 * crash state gives each unsynced write a fate: lost, persisted, or torn (some of its
 * sectors new). Writes whose bytes all equal what is durable under them, and that overlap
 * no other unsynced write, cannot change anything and are left out; tear patterns range
 * over the sectors that really differ. Enumerated, in order:
 *   1. subsets persisted: all 2^n when n <= crash.max_unsynced; beyond that, every single
 *      write persisted or lost alone, the dispatch-order prefixes, all, none, and then
 *      crash.samples random subsets;
 *   2. tears (crash.tear): each write torn in each pattern (halves: either half new;
 *      sectors: every pattern when it has <= 8 differing sectors, else every prefix and
 *      suffix), with the other writes all lost and all persisted;
 *   SP1. Beyond the bound, when the point's whole space (every write lost, persisted, or
 *      torn in each pattern a sample could draw) has no more states than the singles and
 *      the samples would take (3n + 1 + crash.samples), that whole space replaces 1 and 2,
 *      each state once (a sample draws states again where they are few, and misses some).
 *   SP2. A point draws crash.samples samples unless its caller sets another count before
 *      the first state (pn_crash_enum_samples: a searched schedule's points draw
 *      crash.search_samples, docs/checker.md section 13); SP1 decides by crash.samples
 *      either way, so the exhaustive part of a point is the same whatever it samples.
 * A crash inside recovery (pn_crash_enum_begin_nested, docs/checker.md section 7) takes fewer
 * states, within the same crash model: all lost, all persisted, and each relevant write torn
 * in one pattern that crash.tear allows (none: no tears) with the others persisted.
 * Each state has a canonical key (the durable image's version and the effective new
 * sectors of every write), so states that leave identical bytes are recovered once.
 */
#ifndef PN_CRASHSTATE_H
#define PN_CRASHSTATE_H

#include "device.h"
#include "prng.h"
#include "scenario.h"

/* The most states phase 3 adds at one crash point (crash.torn_writes: 2). */
#define PN_CRASH_MIXED_MAX (1ull << 20)

struct pn_crash_enum {
	const struct pn_device *dev;
	const struct pn_scenario *sc;
	uint32_t nrel;
	uint32_t *rel;               /* indexes into dev->unsynced of the writes that matter */
	uint64_t *diff;              /* per relevant write: its units that differ */
	uint64_t *full;              /* per relevant write: all its units */
	uint32_t *radix;             /* SP1: per relevant write, its fates in the whole space */
	uint32_t *digit;             /* SP1: per relevant write, its digit of the current state */
	uint64_t *pat;               /* SP1: per relevant write torn, its tear pattern's index */
	struct pn_write_fate *fates; /* per unsynced write */
	uint32_t cap;
	int phase;
	uint64_t i, j, k;
	struct pn_prng rng;
	uint64_t produced;
	uint32_t samples; /* SP2: the random states this point draws */
	bool exhaustive;  /* phase 1 enumerated all 2^n subsets */
	uint64_t space;   /* SP1: the whole space's states when it replaces phases 1-2, or 0 */
	uint64_t mixed;   /* states of phase 3 so far */
	bool capped;      /* phase 3 stopped at PN_CRASH_MIXED_MAX: states left out */
};

void pn_crash_enum_init(struct pn_crash_enum *ce);
void pn_crash_enum_free(struct pn_crash_enum *ce);
/* Prepares the states of `dev` now; seed varies the samples by crash point. */
void pn_crash_enum_begin(struct pn_crash_enum *ce, const struct pn_device *dev,
			 const struct pn_scenario *sc, uint64_t seed);
/* SP2: the point draws n random states instead of crash.samples (before its first state). */
void pn_crash_enum_samples(struct pn_crash_enum *ce, uint32_t n);
/* Whether the point draws random samples: beyond the bound, and not SP1's whole space. */
bool pn_crash_enum_sampled(const struct pn_crash_enum *ce);
/* Prepares the states of a crash inside recovery (dev: the recovering world's device). */
void pn_crash_enum_begin_nested(struct pn_crash_enum *ce, const struct pn_device *dev,
				const struct pn_scenario *sc);
/* Fills ce->fates with the next state; false when there are no more. */
bool pn_crash_enum_next(struct pn_crash_enum *ce);
uint64_t pn_crash_enum_key(const struct pn_crash_enum *ce);
/* The units of relevant write r (ce->rel[r]) the current state keeps beyond the durable
 * image: all its differing units persisted, the torn ones of them, or 0 (lost). */
uint64_t pn_crash_enum_kept(const struct pn_crash_enum *ce, uint32_t r);
/* Whether two writes cover a byte in common (the same file, overlapping ranges). */
bool pn_crash_writes_meet(const struct pn_unsynced *a, const struct pn_unsynced *b);
/* "persisted #12 (data evict page 3 slot 1); torn #13 (wal) units 0x3 of 0xf; lost 2 more" */
void pn_crash_enum_describe(const struct pn_crash_enum *ce, char *buf, size_t len);
/* The compact form a trace's replay.state holds: "p12,t13:3" (seq numbers; others lost).
 * One that does not fit in len ends in ",...", which pn_crash_fates_decode() refuses. */
void pn_crash_enum_encode(const struct pn_crash_enum *ce, char *buf, size_t len);
/* The compact form of any fates of dev's unsynced writes. */
void pn_crash_fates_encode(const struct pn_device *dev, const struct pn_write_fate *fates,
			   char *buf, size_t len);
/* Sets fates for `dev` from the compact form; false with the reason in why if it is not
 * that form exactly (no spaces, no empty element), names a write twice, a write that is not
 * unsynced, or a torn write's units past its last. */
bool pn_crash_fates_decode(const struct pn_device *dev, const char *state,
			   struct pn_write_fate *fates, char *why, size_t len);
/* Whether fates are a state of sc's crash model (a tear only where crash.tear allows it, and
 * only of the write's units); false with the reason in why. */
bool pn_crash_fates_allowed(const struct pn_device *dev, const struct pn_scenario *sc,
			    const struct pn_write_fate *fates, char *why, size_t len);

#endif

/*
 * unitdata.h: a work unit and its result, as data and as bytes (model layer; unit.h has the
 * rules U1-U6 that units keep, docs/checker.md section 12).
 *
 * The driver (checker.h, pn_check_unit) fills a result; the plan (unit.h) merges results; a
 * result crosses a pipe or a network as bytes (pn_unit_result_encode / _decode; the format is
 * at the top of unitdata.c).
 */
#ifndef PN_UNITDATA_H
#define PN_UNITDATA_H

#include "checkio.h"

struct pn_unit {
	uint32_t schedule;
	bool whole;      /* the whole scenario, pn_check_scenario() (--twice) */
	bool search;     /* part lo of a split search (explore_split.h), hi = lo + 1 */
	bool defaults;   /* part lo of the default exploration (explore_split.h D1-D3), hi =
			  * lo + 1, schedule = the scenario's runs (after every seeded one) */
	uint64_t lo, hi; /* crash points explored: lo <= p < hi (hi UINT64_MAX: to the end) */
	uint64_t budget; /* head: distinct states met before it surveys the rest (0: no limit) */
	uint64_t fresh_base; /* distinct states met by the schedules before this one */
	uint64_t fresh_lo;   /* distinct states met before lo (the unit checks it reaches this) */
	bool lookups;        /* U6: C1 of states met before lo deferred (not in the bytes) */
};

/* A state's key and a WAL end: its recovered end (recovered, relearnt), or the end its C1
 * check needs (asked). A growing array of them. */
struct pn_unit_key {
	uint64_t key, lsn;
};
struct pn_unit_keys {
	struct pn_unit_key *v;
	uint32_t n, cap;
};
void pn_unit_keys_add(struct pn_unit_keys *k, uint64_t key, uint64_t lsn);

/* A surveyed crash point: its event, its states, the states of it met for the first time. */
struct pn_unit_point {
	uint64_t event, states, fresh;
};

enum pn_unit_status { PN_UNIT_DONE, PN_UNIT_VIOLATION, PN_UNIT_ERROR, PN_UNIT_INTERRUPTED };

struct pn_unit_result {
	enum pn_unit_status status;
	struct pn_check_result res; /* the unit's counts; its violation, or error (detail) */
	uint64_t end;               /* points explored were < end (a head's budget stop), else hi */
	uint64_t events;    /* events the run had when it stopped (its total when finished) */
	bool finished;      /* the run ended inside the explored range */
	uint64_t fresh_end; /* distinct states met (scenario-wide) before `end` */
	uint32_t npoints;   /* head past its budget: the surveyed points from end on */
	struct pn_unit_point *points;
	uint32_t ncov; /* coverage hits (true, false) per pn_testcase_all() site (U4) */
	uint64_t (*cov)[2];
	/* U6: states relearned (U2), keys asked for, of them answered, runs again (0 or 1) */
	uint64_t relearned, lookups, hits, reruns;
	/* U6, in the checking process only (not in the bytes): the states recovered first, the
	 * deferred C1 checks (a key once per meeting), the states relearned */
	struct pn_unit_keys recovered, asked, relearnt;
};

void pn_unit_result_free(struct pn_unit_result *r);

/* The bytes of a result (malloc'd, *len set; format in unit.c) and back. decode: false with
 * the reason in why when the bytes are not one whole result of this build. */
uint8_t *pn_unit_result_encode(const struct pn_unit_result *r, size_t *len);
bool pn_unit_result_decode(const uint8_t *bytes, size_t len, struct pn_unit_result *r, char *why,
			   size_t why_len);
#define PN_UNIT_BYTES 48 /* pn_unit_encode's */
void pn_unit_encode(const struct pn_unit *u, uint8_t out[PN_UNIT_BYTES]);
void pn_unit_decode(const uint8_t in[PN_UNIT_BYTES], struct pn_unit *u);

#endif

/*
 * explore.h: the search over schedules (model layer; docs/checker.md section 13).
 *
 * A schedule is its list of preemptions: (event number, candidate) pairs in event order,
 * each a choice against the seeded order at one of the world's choice points (sim/world.h).
 * The empty list is the seeded schedule. The explorer is the world's chooser
 * (pn_explore_choose) and decides which schedule runs next:
 *
 *   bounded  every schedule with at most schedules.preemption_bound preemptions, fewest
 *            first (iterative context bounding): a schedule's children add one preemption
 *            at an event after its last one, each candidate of that event in turn, so each
 *            list is generated once.
 *            RD1. Every schedule runs to its end (the default): the search is sound.
 *            RD2. With schedules.reduce (the default), a crash point whose content (the
 *                 durable image's digest, the unsynced writes by place and bytes in order,
 *                 the highest acknowledged commit) an earlier point of the part had,
 *                 drawing at least as many samples (SP2), is skipped: its states and
 *                 their verdicts are those judged there.
 *            RD3. With schedules.prune (and reduce; never by default, not sound: it misses
 *                 crash states, docs/checker.md section 13), a run that reaches a state
 *                 (pn_world_fingerprint) already reached with as many preemptions left is
 *                 cut there (pruned), and sleep sets: a child does not run, first or by
 *                 preempting, an event that commutes with its preempting one and that an
 *                 earlier sibling or the parent ran from the same state
 *                 (pn_touch_independent), until an event that does not commute with it
 *                 runs; a run whose next seeded event is asleep ends there (pruned), a
 *                 child whose preempting event is asleep is never queued.
 *            RD4. A schedule's events before its last preemption are its parent's, from the
 *                 same start: the parent (or, for a split search's roots, part 0's seeded
 *                 run) checked the runtime invariants after each of them, and ended the
 *                 search had one failed. They run again without the check
 *                 (pn_explore_checked_before, world.h check_from), the frames' rotation
 *                 moved as if checked, so each later event checks the frames it did and a
 *                 violation is found at the same event. (The I/O table's and the store's
 *                 own assertions, which report no violation, keep their own rotation.)
 *   pct      schedules.runs runs: the first the seeded one, then each with random actor
 *            priorities and depth - 1 priority change points (Burckhardt et al.), the
 *            highest-priority candidate running at each event (but never more than
 *            PCT_PASSED_MAX events in a row past the seeded order's next one: polling
 *            processes would starve the rest); the preemptions it took are recorded as a
 *            list like any other.
 *   fixed    one given list (replay, shrinking).
 *
 * Everything is ordered by event number and candidate index; the PRNG of pct is seeded from
 * the scenario's seed and the run's number.
 */
#ifndef PN_EXPLORE_H
#define PN_EXPLORE_H

#include "world.h"

struct pn_schedule {
	struct pn_choice *c;
	uint32_t n;
	/* bounded with reduce: the events asleep where its last preemption ran (sleep sets) */
	struct pn_touch *sleep;
	uint32_t nsleep;
};

enum pn_explore_mode { PN_EXPLORE_BOUNDED, PN_EXPLORE_PCT, PN_EXPLORE_FIXED };

struct pn_explore {
	const struct pn_scenario *sc;
	enum pn_explore_mode mode;
	uint32_t bound; /* bounded: the preemption bound */
	bool reduce;    /* RD2: crash points met before skipped (check.c point_met) */
	bool prune;     /* RD3: schedules cut by fingerprint and sleep sets (not sound) */
	struct pn_schedule *queue; /* bounded: schedules still to run, FIFO */
	uint64_t head, len, cap;
	struct pn_schedule cur;   /* the schedule running (bounded, fixed) */
	struct pn_schedule taken; /* the preemptions the running schedule took, in order */
	uint32_t next;            /* the index in cur of the next preemption to take */
	bool started;
	bool stop;     /* the run reached a state met before: the caller ends it (pruned) */
	bool mismatch; /* a choice named a candidate the event does not have */
	char error[160];
	/* state fingerprints met, with the most preemptions left at them (open addressing) */
	uint64_t *seen_fp;
	uint8_t *seen_left;
	uint64_t *seen_run; /* the run (x->explored) that recorded it */
	uint64_t seen_cap, seen_len;
	/* crash points checked (reduce): their keys, open addressing (pn_explore_point_seen) */
	uint64_t *point_key;
	uint64_t point_cap, point_len;
	uint64_t points_skipped;
	/* the running schedule's sleep set past its last preemption (reduce) */
	struct pn_touch *live;
	uint32_t nlive, live_cap;
	struct pn_touch touch[PN_CHOICE_WIDTH_MAX]; /* the event's candidates' */
	/* pct */
	struct pn_prng rng;
	uint32_t run, runs, depth;
	uint64_t horizon;    /* events of the seeded run: change points fall below it */
	uint64_t change[16]; /* this run's priority change points (event numbers) */
	uint64_t *prio;      /* per actor, 0: not drawn yet */
	uint32_t nprio;
	uint32_t passed; /* events in a row that passed over candidate 0 */
	/* counts */
	uint64_t explored, pruned;
	uint64_t slept;   /* of the pruned: runs whose next event was asleep */
	uint64_t skipped; /* children never queued: their preempting event was asleep */
};

/* A bounded or pct search of sc (its schedules: section), for the seeded schedule `index`. */
void pn_explore_init(struct pn_explore *x, const struct pn_scenario *sc, uint32_t index);
/* One given list (text as pn_schedule_format writes it). False with x->error when it does
 * not parse. */
bool pn_explore_init_fixed(struct pn_explore *x, const struct pn_scenario *sc, const char *text);
void pn_explore_free(struct pn_explore *x);
/* Readies the next schedule; false when the search is done. */
bool pn_explore_next(struct pn_explore *x);
/* The chooser to give the world (world.h, pn_world_choose_fn; arg: the explorer). */
uint32_t pn_explore_choose(void *arg, struct pn_world *w, const struct pn_event *cand, uint32_t n);
/* Its opt.choice_needed (world.h, pn_world_needed_fn): false only in a bounded search, for
 * the events before the running schedule's next preemption, and past its last when it has
 * schedules.preemption_bound of them and prune is off: there pn_explore_choose takes
 * candidate 0 and does nothing else. */
bool pn_explore_choice_needed(void *arg, const struct pn_world *w, uint64_t event);
/* The first crash point that the running schedule can reach differently from the one it
 * was derived from: its last preemption's event (1 when it has none). */
uint64_t pn_explore_first_new_point(const struct pn_explore *x);
/* RD4: the running schedule's events numbered below this one are states an earlier run of
 * the search checked: a bounded search's last preemption's event; 0 for pct and a fixed list
 * (a replay, shrinking, --choices: no run checked their prefixes). */
uint64_t pn_explore_checked_before(const struct pn_explore *x);
/* The preemptions the running schedule has taken so far (0: its events are the seeded
 * order's; crash points draw crash.samples there, crash.search_samples after: SP2). */
uint32_t pn_explore_preempted(const struct pn_explore *x);
/* Distinct state fingerprints met so far. */
uint64_t pn_explore_states(const struct pn_explore *x);
bool pn_explore_point_seen(struct pn_explore *x, uint64_t key);
/* Whether a crash point's key was recorded, recording nothing. */
bool pn_explore_point_known(const struct pn_explore *x, uint64_t key);
/* A split search's part (explore_split.h): the schedules queued now (after the seeded run:
 * the roots, one preemption each, in the order they run), the event of queued schedule i's
 * last preemption, and keeping only the queued lo .. hi - 1 (the others freed, never run). */
uint64_t pn_explore_queued(const struct pn_explore *x);
uint64_t pn_explore_queued_event(const struct pn_explore *x, uint64_t i);
void pn_explore_keep(struct pn_explore *x, uint64_t lo, uint64_t hi);

/* "E:I,E:I" ("" for none); false when it does not fit in len. */
bool pn_schedule_format(const struct pn_schedule *s, char *buf, size_t len);
/* Parses what pn_schedule_format writes (events increasing, candidates 1 to
 * PN_CHOICE_WIDTH_MAX - 1: the run refuses one past its scenario's width); false
 * with the reason in why. s->c is allocated (pn_schedule_free). */
bool pn_schedule_parse(const char *text, struct pn_schedule *s, char *why, size_t why_len);
void pn_schedule_free(struct pn_schedule *s);

#endif

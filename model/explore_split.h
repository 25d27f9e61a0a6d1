/*
 * explore_split.h: a bounded search cut into parts (model layer; docs/checker.md section 13,
 * "A search over N processes"). The parts are work units (unit.h) like a seeded schedule's
 * ranges, so `--jobs N`, MPI and one process run the same parts and merge them in the same
 * order.
 *
 * The search around seeded schedule index s (explore.h, bounded) is cut into
 * PN_SPLIT_PARTS + 1 parts, a function of the scenario only (never of the processes):
 *
 *   part 0     the seeded schedule alone, with every crash point (what a search's first
 *              schedule checks);
 *   part k     the seeded run again, surveyed: no crash point checked (part 0 did), its
 *   (1..P)     fingerprints recorded and its children queued as the whole search queues them
 *              (the roots: one preemption each, in event order); the roots cut into P shares
 *              of about equal weight (pn_split_range), share k kept, and the search goes on
 *              from them as explore.h says, the schedules under those roots only.
 *
 * Rules:
 *   S1 A part is a function of (scenario, s, k): it runs in a fresh scope, its own state
 *      fingerprints, crash points met and verdict cache (checker.h H3 holds per part), its
 *      count of distinct states for crashes inside recovery from 0 (H5). Nothing is shared
 *      between parts, so nothing depends on which process runs which part, or when.
 *   S2 Order: (s, k). The result is the parts' in that order, merged as unit.h U1 says: counts
 *      summed over the parts up to the first that ends with a violation or an error, which
 *      decides (its counterexample, its choices); the parts after it are cancelled.
 *   S3 Coverage: every root queued by the seeded run is in exactly one part, and within a
 *      part the search is explore.h's: the schedules of at most K preemptions the parts run
 *      together are those the unsplit search queues. Reduction prunes within a part only
 *      (each part has the seeded run's fingerprints, from its survey, and its own).
 *   S4 Weight: a root whose preemption is at event e, in a seeded run of n events, weighs
 *      (n - e + 1)^min(K, 2) (its subtree has about (n - e)^(K-1) schedules, each checking
 *      about n - e crash points); share k holds the roots whose weight before them, divided
 *      by ceil(total / P), is k - 1.
 *
 * The default exploration (docs/checker.md section 13, "The default"): a scenario whose
 * schedules: section names no strategy and no preemption_bound is checked with its seeded
 * schedules and then, unless told not to, with parts 1..P of a bounded search at K = 1 around
 * seeded index 0 (part 0 is the seeded schedule the seeded runs checked):
 *   D1 It runs when the scenario names no strategy (schedules.named false), its workload has
 *      at most PN_DEFAULT_TRANSACTIONS_MAX transactions (a larger one, a cost or results
 *      workload, would pay its budget in whole runs of it) and at least 2 clients (with one client the only races are the checkpointer's and the
 *      I/O's against one backend: the seeded schedule's order stands for them), and neither
 *      --seeded-only, a replay nor a given list of choices asks otherwise.
 *   D2 Its budget is schedules.budget, else PN_DEFAULT_BUDGET (crash points) or
 *      PN_DEFAULT_BUDGET_NOCRASH (runtime invariants only): schedules at most. Each part
 *      runs at most ceil(budget / P) of its schedules, the first in its order (S1: a
 *      function of the part, so the split does not change what runs); a part that stops
 *      with schedules still queued cuts the search short of its bound (budget_cut).
 *   D4 Then pct runs (explore.h) of depth PN_DEFAULT_PCT_DEPTH around seeded index 0, as
 *      many as PN_DEFAULT_PCT_RUNS(budget): 8 budget with crash points, budget / 16 without
 *      (128 and 256 at the default budgets; with 2 budget, 58 of 64 seeds of
 *      default-no-delay-chkpt.yaml were caught, with 8 budget all 64: docs/checker.md). They are cut into parts P + 1 .. 2P of their own,
 *      part P + k running the k-th share of the runs (pn_split_pct_runs; a part with none is
 *      not made): the seeded run surveyed (it gives the horizon n), then its runs, each drawn
 *      from the part's own stream of the schedule PRNG (pn_split_pct_stream), so a part is
 *      a function of (scenario, part) as S1 asks. The bounded search at K = 1 cannot catch a
 *      race that needs two preemptions (no_delay_chkpt); pct runs preempt anywhere.
 *   D3 Its parts run after every seeded schedule and merge as S2 says; the result counts its
 *      schedules apart (schedules_default) beside the seeded ones. Under --jobs and MPI each
 *      part is a work unit (unit.h: schedule = the scenario's runs, ready at once beside the
 *      seeded schedules' units), so the default uses every worker as a bounded search does.
 */
#ifndef PN_EXPLORE_SPLIT_H
#define PN_EXPLORE_SPLIT_H

#include "explore.h"

#define PN_SPLIT_PARTS 16         /* shares of the roots: parts 1..16, part 0 the seeded schedule */
#define PN_SPLIT_WHOLE UINT32_MAX /* not a part: the whole search (pct, given choices) */
#define PN_DEFAULT_BUDGET 16      /* D2: schedules, a scenario with crash points */
#define PN_DEFAULT_BUDGET_NOCRASH 4096 /* D2: schedules, runtime invariants only */
#define PN_DEFAULT_TRANSACTIONS_MAX 64 /* D1: larger workloads keep their seeded schedules */
#define PN_DEFAULT_PCT_DEPTH 3         /* D4: two priority change points a run */
#define PN_DEFAULT_PCT_RUNS(budget, crash) ((crash) ? 8 * (budget) : (budget) / 16) /* D4 */

/* Whether the search of sc is split (bounded strategy). */
bool pn_split_search(const struct pn_scenario *sc);
/* S4: share `part` (1..PN_SPLIT_PARTS) of the nroots roots whose preemptions are at events
 * root_event[0..nroots-1] (nondecreasing) in a seeded run of `events` events, at bound K: the
 * roots lo .. hi - 1. */
void pn_split_range(const uint64_t *root_event, uint64_t nroots, uint64_t events, uint32_t bound,
		    uint32_t part, uint64_t *lo, uint64_t *hi);
/* D1: whether sc's check adds the default exploration; true with search (a shallow copy of
 * sc: strategy bounded, preemption_bound 1, reduce, its budget, D2) filled. */
bool pn_split_default(const struct pn_scenario *sc, bool seeded_only, bool replay,
		      const char *choices, struct pn_scenario *search);
/* D2: the schedules each part of the default's search runs at most. */
uint64_t pn_split_part_cap(const struct pn_scenario *search);
/* D4: the pct runs of the default's part P + k (k = 1..P) of search (pn_split_default's): 0
 * when the part has none. pct: search as that part's pct search (runs: the seeded one and
 * the part's), filled when the result is not 0. */
uint32_t pn_split_pct_runs(const struct pn_scenario *search, uint32_t k, struct pn_scenario *pct);
/* D4: x (a pct search of part P + k) draws from part k's own stream. */
void pn_split_pct_stream(struct pn_explore *x, uint32_t k);
/* D4: the probability that one pct run of depth d finds a bug of depth d in a program of
 * `actors` actors and `events` events is at least 1 / (actors events^(d-1)) (Burckhardt et
 * al.'s bound, docs/checker.md section 13): that bound, and the probability that `runs` runs
 * all miss it, at most (1 - that)^runs. */
double pn_split_pct_find(uint32_t depth, uint32_t actors, uint64_t events);
double pn_split_pct_miss(uint64_t runs, uint32_t depth, uint32_t actors, uint64_t events);
/* After the survey of part `part` (1..P): only its share of x's queued roots kept. */
void pn_split_keep(struct pn_explore *x, uint64_t events, uint32_t part);

#endif

/*
 * checker.h: the crash-point model checker's driver (model layer; docs/checker.md).
 *
 * For one scenario and each schedule run: run the world one event at a time with the crash
 * model on; at every selected crash point whose device state (or set of acknowledged
 * commits) changed, enumerate the crash states (crashstate.h), recover each in a fresh
 * world running the engine's own recovery, and judge it against the oracle (oracle.h):
 *   C1 every commit acknowledged before the crash is in the recovered WAL;
 *   C2 every page equals the oracle's page for the recovered WAL prefix (masked);
 *   C3 recovery completes (no checksum failure, missing baseline, replay error);
 *   C4/R1-R5 the runtime invariants held in the run and in recovery.
 * Identical crash states (same durable image and same surviving writes) are recovered
 * once. The first violation stops the scenario and is reported with a replayable trace.
 *
 * The parts, lowest first: checkio.h (options, result), cache.h (the verdict cache), judge.h
 * (recovery of a state and C1-C3), derive.h (verdicts without recovery), run.h (one check's
 * state and the states of one crash point), span.h (a work unit's range), replay.h, and check.c,
 * the driver (schedules, searches, --twice, units); unit.h cuts a scenario into units
 * and merges them, above it.
 *
 * Rules of the driver:
 *   H1 Order: schedules in order (the seeded runs, or the schedules of a search, explore.h);
 *      within a run events in order; a crash point is an event after which the device (its
 *      version) or the set of acknowledged commits changed and that crash.points selects; its
 *      states in the enumeration's order (crashstate.h). The first violation stops the
 *      scenario.
 *   H2 A state is recovered once per cache scope (cache.h V2): a state met again takes its
 *      cached verdict, then C1 against the acknowledgements of this point (a cached verdict
 *      passed C2/C3: a failing one stopped the check).
 *   H3 Keys: the crash image's digest by content (sim/device.h DV10; run.c, pn_run_state_key), so
 *      an image is recovered once per cache scope (a seeded run; a part of a search, which
 *      a bounded search is cut into, explore_split.h S1) whichever schedule, point and
 *      fates give it.
 *   H4 Counts and coverage are those of the states checked: crash_states every state met,
 *      recoveries every new one (derived ones too, also counted in derived). A cross-check
 *      counts nothing, a relearned state (unit.h U2) no recovery; both undo their coverage
 *      hits.
 *   H5 A crash inside recovery is tried only on a new state that passed C1-C3, every
 *      nested_every-th new state (counted over the scenario); check and replay judge and
 *      record it with the same functions (run.h), so a trace replays with check's verdict.
 *   H6 --twice runs each seeded schedule twice from the same start (an empty cache, the same
 *      count of new states) and compares each event's hash and each verdict (world.h).
 *   H7 Within one crash inside recovery (H5), a state whose crash image (by content,
 *      sim/device.h DV10) was met before, at an earlier event of that recovery or as the
 *      image it recovers from, is not recovered again: its recovery, its judgement against
 *      the same first WAL end and C1 against the same acknowledgements are those of the
 *      image met, which passed (a failure stops the check). It counts as a crash state, not
 *      as a recovery, and is not cross-checked. The scope is one crash, so the count does
 *      not depend on how --jobs or MPI cut the search.
 *   H8 So too across the crashes inside recovery of one crash point: a state whose crash
 *      image another crash of the point judged against the same first WAL end takes its
 *      verdict (the recovery is the image's; the judgement is against the same oracle, as
 *      the point's oracle takes no record while its states are judged, at the same end; C1
 *      against the point's acknowledgements, the same), counted as H7 counts. Torn states of
 *      one point meet the same images once recovery has rewritten what they tore. A unit
 *      of --jobs or MPI holds whole points, so the count does not depend on the cut.
 */
#ifndef PN_CHECKER_H
#define PN_CHECKER_H

#include "checkio.h"
#include "judge.h"
#include "unitdata.h"

/* Checks one scenario. Returns 0 when the verdict is as expected, 1 when not, 2 when the
 * scenario could not be run, 3 when opt->stop stopped it (res->interrupted; the counts are
 * those reached, the verdict is not one). */
int pn_check_scenario(const struct pn_scenario *sc, const struct pn_check_options *opt,
		      struct pn_check_result *res);
/* The options that replay a trace as its replay: section says (schedule, crash point and
 * state, the crash inside recovery); the caller adds a timeline or observers. */
struct pn_check_options pn_check_replay_options(const struct pn_scenario *sc);
/* Explores one unit of sc (unit.h U1-U4). Returns the status; out is filled
 * (pn_unit_result_free it). */
enum pn_unit_status pn_check_unit(const struct pn_scenario *sc, const struct pn_check_options *opt,
				  const struct pn_unit *u, struct pn_unit_result *out);

#endif

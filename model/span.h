/*
 * span.h: a work unit's range within its schedule run (model layer; the rules are unit.h's
 * U2-U4).
 *
 * A unit runs its schedule from event 0. Before lo every crash point is surveyed: its states'
 * keys enter the verdict cache unrecovered (U2), so the cache holds what the whole scenario's
 * check has met by lo. From lo to hi the points are explored (pn_run_point). A head unit
 * (lo 0) explores until it has met its budget of distinct states, then surveys the rest of
 * the run, every point recorded for the plan to cut (U3). The unit's coverage hits are those
 * of its range (U4).
 */
#ifndef PN_SPAN_H
#define PN_SPAN_H

#include "run.h"

/* Before each step of a unit's run: at lo the range begins (coverage from zero; the count of
 * distinct states met is the plan's, else the detail says the run is not deterministic), at
 * hi it ends. True: stop the run here. */
bool pn_span_edge(struct pn_run *c);
/* A selected crash point of a unit's run: surveyed before or after the range, explored in
 * it. False as pn_run_point. */
bool pn_span_point(struct pn_run *c, uint64_t point);
/* U4: the range is over: its hits so far become the unit's coverage (once). */
void pn_span_cover(struct pn_run *c);

#endif

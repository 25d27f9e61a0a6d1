/*
 * replay.h: the replay of a trace, one crash point and one state (model layer; checker.h H5;
 * docs/checker.md).
 *
 * The trace's replay: section names a schedule, a crash point, a crash state and, for a
 * crash inside recovery, the recovery's event and state. The replay runs to the point,
 * crashes in the state, recovers and judges it with the functions check uses (judge.h,
 * run.h), so it gives the verdict check gave. A key whose value does not fit the run is a
 * refusal naming that key (res->error_key).
 */
#ifndef PN_REPLAY_H
#define PN_REPLAY_H

#include "run.h"

/* The replay of c's options at c's running world (started, nothing stepped): 0 passed, 1 a
 * violation (reported), 2 the trace does not fit (the detail says why). */
int pn_replay_point(struct pn_run *c);
/* Replay: the trace does not fit its run, and key (enum pn_replay_key) is the one whose value
 * does not: the result says which, so that the refusal names its position. */
void pn_replay_misfit(struct pn_run *c, enum pn_replay_key key);

#endif

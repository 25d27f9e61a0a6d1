/*
 * rowstate.h: test_protocol's reach into the rows' own state (tests/rowstate_*.c each compile
 * one row's file, so its static state struct is visible there). Each function changes every
 * field of the row's state that a state's future depends on, one at a time, and calls
 * `moved` after each: test_protocol's test_row_memory checks that the fingerprint moved
 * (docs/checker.md section 13: every row's state is in the fingerprint).
 */
#ifndef PN_TEST_ROWSTATE_H
#define PN_TEST_ROWSTATE_H

#include "engine.h"

typedef void (*rowstate_moved_fn)(struct pn_engine *e, const char *field);

void rowstate_doublewrite(struct pn_engine *e, rowstate_moved_fn moved);
void rowstate_pool(struct pn_engine *e, rowstate_moved_fn moved);
void rowstate_gen2(struct pn_engine *e, rowstate_moved_fn moved);
void rowstate_pushdown(struct pn_engine *e, rowstate_moved_fn moved);
void rowstate_remap(struct pn_engine *e, rowstate_moved_fn moved);

#endif

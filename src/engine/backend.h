/*
 * backend.h: the client backends (engine layer, owned by backend.c): the steps of an update,
 * a commit, script steps. The process struct, its kinds and a backend's states are procs.h's.
 */
#ifndef PN_BACKEND_H
#define PN_BACKEND_H

#include "procs.h"

struct pn_engine;

/* One step of backend p (its state, procs.h's enum pn_bstate). */
void pn_backend_step(struct pn_engine *e, struct pn_proc *p);
/* The one writer of a backend's (and the startup process's) state after init: asserts the
 * edge (procs.h's diagram; legal[][] in backend.c). */
void pn_backend_set_state(struct pn_proc *p, enum pn_bstate to);
/* Field relationships of the backends, asserted (pn_engine_check): a backend between its
 * DECIDE and the end of its op holds its page pinned, and locked after DECIDE. */
void pn_backend_check(const struct pn_engine *e);

#endif

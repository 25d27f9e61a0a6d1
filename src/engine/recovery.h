/*
 * recovery.h: the startup process (engine layer, owned by recovery.c, whose header draws its
 * five steps): control file -> checkpoint -> baselines -> redo. Its state is in struct
 * pn_engine (reader, rec, replay_end, dw_restore, recovering).
 */
#ifndef PN_RECOVERY_H
#define PN_RECOVERY_H

#include "pn.h"

struct pn_engine;
struct pn_proc;

bool pn_recovery_begin(struct pn_engine *e);
void pn_recovery_step(struct pn_engine *e, struct pn_proc *p);

#endif

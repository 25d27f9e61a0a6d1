/*
 * exec_serial.h: the serial executor (model layer; exec.h E1-E6): every unit in this
 * process, one at a time, in the order the work list gives them.
 */
#ifndef PN_EXEC_SERIAL_H
#define PN_EXEC_SERIAL_H

#include "exec.h"

extern const struct pn_exec_ops pn_exec_serial_ops;

/* Runs u in this process (ctx: its progress, its lookups) and hands its bytes to w (done, or
 * failed when they do not decode): what the serial executor does for every unit, and the
 * others for a leader unit they keep (E4). */
void pn_exec_serial_unit(const struct pn_exec_work *w, const struct pn_exec_unit *u,
			 const struct pn_exec_ctx *ctx);

#endif

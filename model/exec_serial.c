/*
 * exec_serial.c: the serial executor (model layer; exec_serial.h, exec.h E1-E6). No child,
 * no pipe: run() and done() in this process, the unit's progress straight to tick().
 */
#include "exec_serial.h"

#include <stdio.h>
#include <stdlib.h>

void pn_exec_serial_unit(const struct pn_exec_work *w, const struct pn_exec_unit *u,
			 const struct pn_exec_ctx *ctx)
{
	size_t len = 0;
	char why[256] = "";
	uint8_t *bytes = w->run(w->arg, u, ctx, &len);
	PN_ASSERT(bytes != NULL || len == 0);
	if (!w->done(w->arg, u, bytes, len, why, sizeof(why))) {
		char line[300];
		snprintf(line, sizeof(line), "its result does not decode: %s", why);
		w->failed(w->arg, u, line); /* E6 */
	}
	free(bytes);
}

/* The unit's progress, as it goes: the states and schedules it has so far. */
static void serial_progress(void *arg, const struct pn_check_result *res)
{
	const struct pn_exec_work *w = arg;
	if (w->tick)
		w->tick(w->arg, res->crash_states, res->schedules_explored);
}

static void serial_lead(struct pn_exec *x, const struct pn_exec_work *w)
{
	struct pn_exec_unit u;
	struct pn_exec_ctx ctx = {.progress = serial_progress,
				  .progress_arg = (void *)w,
				  .stop = x->stop};
	while (!*x->stop && w->next(w->arg, &u)) {
		pn_exec_serial_unit(w, &u, &ctx);
		if (w->tick)
			w->tick(w->arg, 0, 0);
	}
}

const struct pn_exec_ops pn_exec_serial_ops = {
	.name = "serial",
	.lead = serial_lead,
};

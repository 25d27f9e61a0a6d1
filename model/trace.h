/*
 * trace.h: counterexample traces (model layer). A trace is the (shrunk) scenario written out
 * in full, every key, followed by a replay: section naming the schedule, the crash point and
 * the crash state (and a second crash inside recovery, if any); `penumbra replay`, `run` and
 * `check` all read it.
 */
#ifndef PN_TRACE_H
#define PN_TRACE_H

#include "checker.h"

/* Writes DIR/<name>.trace.yaml; returns false with a message in err. */
bool pn_trace_write(const struct pn_scenario *sc, const struct pn_check_result *r, const char *dir,
		    char *path_out, size_t path_len, char *err, size_t err_len);
/* Prints the readable counterexample report. */
void pn_trace_report(FILE *out, const struct pn_scenario *sc, const struct pn_check_result *r);

#endif

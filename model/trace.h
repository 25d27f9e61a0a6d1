/*
 * trace.h: counterexample traces (model layer). A trace is the (shrunk) scenario written out
 * in full, every key, followed by a replay: section naming the schedule, the crash point and
 * the crash state (and a second crash inside recovery, if any), and scenario_hash: the hash
 * (XXH3-64, 16 hex digits) of the scenario's text as pn_scenario_write() prints it followed by
 * the other replay keys, so that `penumbra replay` can tell a trace edited after check wrote
 * it (the text is canonical: comments, spacing and key order do not count, every value does).
 * `penumbra replay`, `run` and `check` all read a trace.
 */
#ifndef PN_TRACE_H
#define PN_TRACE_H

#include "checker.h"

/* Writes DIR/<pn_trace_file_name>.trace.yaml; returns false with a message in err. */
/* The file name (before ".trace.yaml") of a scenario's trace: the name with every byte but
 * ASCII letters, digits, '-', '_' and a '.' not first replaced by '_', cut to fit; when that
 * changed anything (or the name is empty), "-" and the name's 16-hex-digit XXH3 follow, so
 * that two names never share a file. At most PN_TRACE_NAME_MAX bytes; buf holds one more. */
#define PN_TRACE_NAME_MAX 100
void pn_trace_file_name(const char *name, char *buf, size_t len);
bool pn_trace_write(const struct pn_scenario *sc, const struct pn_check_result *r, const char *dir,
		    char *path_out, size_t path_len, char *err, size_t err_len);
/* Whether a loaded trace's scenario differs from the one check wrote: 1 edited, 0 not, -1 the
 * trace records no hash (written before scenario_hash). `now` gets the hash it has now. */
int pn_trace_edited(const struct pn_scenario *sc, char *now, size_t len);
/* Prints the readable counterexample report. */
void pn_trace_report(FILE *out, const struct pn_scenario *sc, const struct pn_check_result *r);

#endif

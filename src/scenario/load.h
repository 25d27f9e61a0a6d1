/*
 * load.h: the YAML scenario loader (scenario layer, owned by load.c; the only user of
 * libyaml, linked PRIVATE to the pn_scenario library). Fills the struct pn_scenario of
 * src/base/scenario.h from a file or a string; the format is docs/scenarios.md.
 */
#ifndef PN_LOAD_H
#define PN_LOAD_H

#include "scenario.h"

/*
 * Loads and validates a scenario file. On error returns false and writes one message of
 * the form "FILE:LINE:COLUMN: what was found; what was expected" into err (never crashes,
 * whatever the input). The caller exits 2 on false.
 */
bool pn_scenario_load(const char *path, struct pn_scenario *out, char *err, size_t err_len);
/* The same, from a string in memory; `name` stands for the file name in messages. */
bool pn_scenario_load_string(const char *name, const char *text, size_t len,
			     struct pn_scenario *out, char *err, size_t err_len);

#endif

/*
 * load_workload.h: workload.script, and what the engine can run (scenario layer, owned by
 * load_workload.c; private to the loader, included only by the load*.c files).
 */
#ifndef PN_LOAD_WORKLOAD_H
#define PN_LOAD_WORKLOAD_H

#include "loader.h"

/* workload.script, a list of steps (the schema's reader for it). */
bool load_read_script(struct loader *L, const struct field *f, void *base, const char *path);
/* Once the document is read: the script against the other sections; the scenario
 * against the engine's limits and the memory it may use (LD6). */
bool load_validate_script(struct loader *L);
bool load_validate_engine(struct loader *L);

#endif

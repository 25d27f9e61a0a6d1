/*
 * load_schema.h: the scenario format as data, and the document read against it (scenario
 * layer, owned by load_schema.c; private to the loader, included only by the load*.c files).
 */
#ifndef PN_LOAD_SCHEMA_H
#define PN_LOAD_SCHEMA_H

#include "loader.h"

/* The second pass (LD3): the one document, a mapping read against the top table. */
bool load_document(struct loader *L);

#endif

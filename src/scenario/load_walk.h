/*
 * load_walk.h: the walk of a mapping against its table, and scalar values (scenario layer,
 * owned by load_walk.c; private to the loader, included only by the load*.c files).
 */
#ifndef PN_LOAD_WALK_H
#define PN_LOAD_WALK_H

#include "loader.h"

/* 64MiB, 8KiB, 800B: a size as the format writes it, in the largest exact unit. */
void load_format_size(char *buf, size_t len, uint64_t v);
/* The value of one key, by its field; the index of the name matched for an enum. */
bool load_read_number(struct loader *L, const struct field *f, void *dst, const char *path);
bool load_read_enum(struct loader *L, const struct field *f, void *dst, const char *path);
/* The mapping whose MAPPING-START is the current event, through its end (LD2); seen says
 * which keys it held and where. */
bool load_read_mapping(struct loader *L, const struct table *t, void *base, const char *where,
		       struct seen *seen);
/* Room for one more element of a list the scenario owns (LD4). */
bool load_grow(struct loader *L, void **array, size_t *cap, size_t len, size_t size);

#endif

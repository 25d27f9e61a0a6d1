/*
 * load_sections.h: the protocol, crash, expect, schedules and replay sections (scenario layer,
 * owned by load_sections.c; private to the loader, included only by the load*.c files).
 */
#ifndef PN_LOAD_SECTIONS_H
#define PN_LOAD_SECTIONS_H

#include "loader.h"

/* The schema's readers of protocol.mutations, crash.points, expect.verdict,
 * protocol.spare_slots and protocol.mode/policy. */
bool load_read_mutations(struct loader *L, const struct field *f, void *base, const char *path);
bool load_read_points(struct loader *L, const struct field *f, void *base, const char *path);
bool load_read_verdict(struct loader *L, const struct field *f, void *base, const char *path);
bool load_read_spare_slots(struct loader *L, const struct field *f, void *base, const char *path);
bool load_read_spelling(struct loader *L, const struct field *f, void *base, const char *path);
/* Once the document is read: the row spelled and what it refuses, the schedules and the
 * replay keys; then the positions kept for messages given later (load_key_positions). */
bool load_validate_protocol(struct loader *L);
bool load_validate_schedules(struct loader *L);
bool load_validate_replay(struct loader *L);
bool load_key_positions(struct loader *L);

#endif

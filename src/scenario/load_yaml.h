/*
 * load_yaml.h: the loader's view of libyaml: messages, positions, events (scenario layer,
 * owned by load_yaml.c; private to the loader, included only by the load*.c files).
 */
#ifndef PN_LOAD_YAML_H
#define PN_LOAD_YAML_H

#include "loader.h"

/* "NAME:LINE:COL: what" into err outside a load (the file could not be read); false. */
bool load_message(char *err, size_t err_len, const char *name, size_t line, size_t col,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The first failure of a load, at LINE:COL, or at a position; later ones are dropped. */
bool load_fail_at(struct loader *L, size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool load_fail_pos(struct loader *L, struct pos p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define load_fail(L, mark, ...) load_fail_pos(L, load_position(L, mark), __VA_ARGS__)
/* Where mark m is as an editor counts (LD1); marks mostly come in order, so it walks on. */
struct pos load_position(struct loader *L, yaml_mark_t m);
/* Input made safe to echo (LD4); what the current event is, for "X is <found>". */
const char *load_show(struct loader *L, const char *s);
bool load_is_null(const struct loader *L);
const char *load_found(struct loader *L);
/* " (did you mean 'x'?)" (LD2), a list of names, a NULL-terminated list's length. */
void load_suggest(char *buf, size_t len, const char *s, const char *const *names, size_t n);
void load_join_names(char *buf, size_t len, const char *const *names, size_t n);
size_t load_count_names(const char *const *names);
/* UTF-16/32 and a mid-file byte-order mark, refused before parsing (LD5). */
bool load_check_encoding(struct loader *L);
/* The next event, aliases refused; the first pass (LD3); a scalar's text, or a failure. */
bool load_next(struct loader *L);
bool load_check_syntax(struct loader *L);
bool load_scalar(struct loader *L, const char *path, const char *want, const char **text);
bool load_plain(const struct loader *L);
/* Where a field of the scenario was given (outside the script); the cross-checks ask. */
void load_remember(struct loader *L, const void *ptr, yaml_mark_t mark);
bool load_given(const struct loader *L, const void *ptr, yaml_mark_t *mark);
yaml_mark_t load_mark_of(const struct loader *L, const void *a, const void *b);

#endif

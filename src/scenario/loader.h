/*
 * loader.h: the YAML scenario loader's private parts (scenario layer; included only by the
 * load*.c files, never installed beside load.h). The state of one load (struct loader), the
 * schema's types (a table of fields per mapping) and the macros that build the tables, the
 * bounds of an input. What each part offers the others is in its own header (load_yaml.h,
 * load_walk.h, load_schema.h, load_workload.h, load_sections.h). The rules LD1-LD6 are
 * stated in the file that keeps each one (load.c's header says which).
 */
#ifndef PN_LOADER_H
#define PN_LOADER_H

#include "scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#define MAX_FILE_BYTES (16u << 20)
#define MAX_FIELDS 16       /* keys in one mapping of the schema */
#define MAX_GIVEN 64        /* keys remembered for cross-checks (outside the script) */
#define MAX_STEPS 1000000u  /* workload.script */
#define MAX_POINTS 1000000u /* crash.points as a list */
#define SHOW_MAX 60         /* bytes of input echoed in one message */
#define PATH_LEN 96         /* "workload.script[999999].client" */
#define WANT_LEN 400        /* the "expected ..." part of a message */
#define MAX_DEPTH 32        /* nesting of mappings and lists in any input */

/* Enumerations are stored through an unsigned *; make sure that is their size. */
_Static_assert(sizeof(enum pn_mode) == sizeof(unsigned), "enum size");
_Static_assert(sizeof(enum pn_op) == sizeof(unsigned), "enum size");

enum vtype {
	V_U32,
	V_U64,
	V_SIZE32,
	V_SIZE64,
	V_DURATION,
	V_FRACTION,
	V_BOOL,
	V_ENUM,
	V_STRING,
	V_SECTION,
	V_CUSTOM
};

struct loader;
struct field;
struct table;
typedef bool (*read_fn)(struct loader *L, const struct field *f, void *base, const char *path);

/* One key of a mapping: where its value goes (base + off) and what it may be. */
struct field {
	const char *key;
	enum vtype type;
	size_t off;
	uint64_t min, max;           /* numbers: range; V_STRING: min length, buffer size */
	bool pow2;                   /* sizes: must be a power of two */
	const char *const *names;    /* V_ENUM: value i is names[i]; NULL-terminated */
	const struct table *section; /* V_SECTION */
	read_fn read;                /* V_CUSTOM */
};

struct table {
	const struct field *fields;
	size_t count;
	bool has_present;
	size_t present; /* offset of the bool the section sets when it appears */
};

/* Keys a mapping held, and where each key was. */
struct seen {
	uint32_t mask;
	yaml_mark_t key[MAX_FIELDS];
};

struct loader {
	yaml_parser_t parser;
	yaml_event_t ev; /* the current event, when has_ev */
	bool has_ev;
	bool failed;
	const char *name; /* file name for messages */
	const char *text;
	size_t len;
	struct pn_scenario *s;
	char *err;
	size_t err_len;
	yaml_mark_t top; /* the top-level mapping */
	struct {
		const void *ptr;  /* field of *s */
		yaml_mark_t mark; /* its value */
	} given[MAX_GIVEN];
	size_t given_len;
	size_t script_cap, list_cap;
	char mode[32], policy[32]; /* protocol.mode and .policy as given ("": not given) */
	char show[3][SHOW_MAX + 8];
	unsigned show_next;
	char found[SHOW_MAX + 16];
	struct { /* where position() last stopped: marks come mostly in order */
		size_t index, off, line, col;
	} at;
};

/* A 1-based position in the text as an editor shows it. */
struct pos {
	size_t line, col;
};
/* ---- the schema ---- */

/* Building the schema tables: a field of the scenario, a table of fields, a number's field
 * (load_schema.c has the rest of the builders; load_workload.c, load_sections.c these). */
#define OFF(m) offsetof(struct pn_scenario, m)
/* clang-format off */
#define TABLE(f) {f, PN_ARRAY_LEN(f), false, 0}
#define NUM(k, t, m, lo, hi) {.key = k, .type = t, .off = OFF(m), .min = lo, .max = hi}
/* clang-format on */

#endif

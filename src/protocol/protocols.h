/*
 * protocols.h: the protocol table and the rows' declarations (protocol layer, owned by
 * protocols.c), all from one list (list.h): enum pn_protocol_id is a row's identity (a
 * scenario's protocol.row), pn_protocols[] its hooks, pn_protocol_decls[] what it reads and
 * can do, pn_protocol_names[] its name. pn_protocol_of(sc) is the row for pn_engine_init.
 */
#ifndef PN_PROTOCOLS_H
#define PN_PROTOCOLS_H

#include "engine.h"
#include "list.h"
#include "protocol.h"

#define PN_PROTOCOL_ID_(id, name, ops, decl) PN_PROTOCOL_##id,
enum pn_protocol_id { PN_PROTOCOL_LIST(PN_PROTOCOL_ID_) PN_PROTOCOL_COUNT };

/* The protocol keys a row may read beyond those every row reads (mode, checksums,
 * wal_log_hints, slru_headers, mutations), one bit each: X(BIT, "key"). */
#define PN_PROTOCOL_KEY_LIST(X)       \
	X(GENERATIONS, "generations") \
	X(LAYOUT, "layout")           \
	X(POLICY, "policy") X(IMAGE_THRESHOLD, "image_threshold") X(SPARE_SLOTS, "spare_slots")
#define PN_KEY_BIT_(k, name) PN_KEY_BIT_##k,
#define PN_KEY_MASK_(k, name) PN_KEY_##k = 1u << PN_KEY_BIT_##k,
enum { PN_PROTOCOL_KEY_LIST(PN_KEY_BIT_) PN_KEY_COUNT };
enum pn_protocol_key { PN_PROTOCOL_KEY_LIST(PN_KEY_MASK_) };
extern const char *const pn_protocol_key_names[PN_KEY_COUNT + 1];

/* What a row can do, one bit each (the loader refuses a script step that needs what the
 * file's row cannot; the CLI does for a row --mode picks). */
enum pn_protocol_cap {
	/* op truncate: the row keeps a relation size (not a page server, a pool, second slots) */
	PN_CAP_TRUNCATE = 1u << 0,
	/* checkpoint_epoch, update_hold, release: selection after begin, a publish step */
	PN_CAP_PUBLISH = 1u << 1,
	/* pages come from a page server (GetPage@LSN), not from the data file */
	PN_CAP_PAGE_SERVER = 1u << 2,
};

/* One of a row's own figures (its counters, metrics.h struct pn_row_figures): what the CLI
 * prints it as. The list's order is the figures' index, and their order in JSON and text. */
enum pn_figure_place {
	/* a section of the row's own: JSON object `section` of its results, text rows at the
	 * end of the table (after "WAL vs fpw"), "-" in the other results' columns */
	PN_FIGURE_SECTION,
	/* bytes the row writes besides the data file's pages: a figure every result carries
	 * (0 where its row has no such figure), after "shifts" in JSON and after "data bytes
	 * written" in text, and part of write amplification */
	PN_FIGURE_WRITTEN,
};
struct pn_figure_decl {
	const char *key;   /* its JSON key */
	const char *label; /* its text row; NULL: JSON only */
	const char *fmt;   /* NULL: an integer (u); else a real (v) printed with fmt */
	enum pn_figure_place place;
};

/* A row's declaration: data, appended to its file and named by its line in list.h. */
struct pn_protocol_decl {
	/* the scenario value's protocol.mode and .policy of the row (what hooks, the simulator
	 * and the checker read of a scenario's family) */
	enum pn_mode mode;
	enum pn_policy policy;
	unsigned keys;            /* PN_KEY_*: the keys it reads (a trace writes only these) */
	unsigned fixed;           /* PN_KEY_*: keys it decides itself, refused where given */
	const char *fixed_why;    /* why, for that refusal ("two slots a page") */
	uint32_t generations_max; /* protocol.generations at most (0: the loader's bound) */
	bool interleaved_only;    /* protocol.layout must be interleaved */
	unsigned caps;            /* enum pn_protocol_cap bits */
	uint32_t mutants;         /* enum pn_mutation bits its own rules own (protocol.md 5) */
	/* its own figures (at most PN_ROW_FIGURES_MAX), set by its metrics.finish hook */
	const struct pn_figure_decl *figures;
	uint32_t nfigures;
	const char *section; /* the JSON object of its PN_FIGURE_SECTION figures */
};

/* The rows and their declarations, each defined in its own file. */
#define PN_PROTOCOL_EXTERN_(id, name, ops, decl) \
	extern const struct pn_protocol_ops ops; \
	extern const struct pn_protocol_decl decl;
PN_PROTOCOL_LIST(PN_PROTOCOL_EXTERN_)

/* Indexed by enum pn_protocol_id; names NULL-terminated. */
extern const struct pn_protocol_ops *const pn_protocols[PN_PROTOCOL_COUNT];
extern const struct pn_protocol_decl *const pn_protocol_decls[PN_PROTOCOL_COUNT];
extern const char *const pn_protocol_names[PN_PROTOCOL_COUNT + 1];

/* The row of sc's protocol.row (what the assembly passes to pn_engine_init), and its
 * declaration. */
const struct pn_protocol_ops *pn_protocol_of(const struct pn_scenario *sc);
const struct pn_protocol_decl *pn_protocol_decl_of(const struct pn_scenario *sc);
/* Makes `row` sc's protocol: protocol.row and the family fields of its declaration. */
void pn_protocol_set(struct pn_scenario *sc, enum pn_protocol_id row);
/* The row a name picks for sc: a row's NAME, or a MODE (the part of names before '-'):
 * sc's own row when it is of that mode, else the mode's first row. False: no such name. */
bool pn_protocol_pick(const struct pn_scenario *sc, const char *name, enum pn_protocol_id *out);
/* The row a scenario spells {mode: MODE, policy: POLICY} (policy NULL: not given): the row
 * named MODE-POLICY, else the row named MODE (which reads no policy), else with no policy
 * the mode's first row. False: no such row. */
bool pn_protocol_spelled(const char *mode, const char *policy, enum pn_protocol_id *out);
/* The length of row's MODE (its name before '-'), and its POLICY (after it; NULL: none). */
size_t pn_protocol_mode_len(enum pn_protocol_id row);
const char *pn_protocol_policy(enum pn_protocol_id row);
/* The names into buf, joined by ", ": every row's, the modes (each once), or the modes that
 * are no row's name ("umbra": a mode alone). */
enum pn_protocol_names { PN_NAMES_ROWS, PN_NAMES_MODES, PN_NAMES_MODES_ALONE };
void pn_protocol_list_names(char *buf, size_t len, enum pn_protocol_names which);
/* The names of the rows with cap (joined by " or "), for a refusal. */
void pn_protocol_names_with(unsigned cap, char *buf, size_t len);
/* Which protocol keys sc's row refuses, from its declaration alone (the one place that
 * decides it): the first key of `given` (PN_KEY_* bits the file gives) that the row does not
 * read (all_unread: the loader, for the file's own row) or that it decides itself (a row
 * --mode picked for a file of another row, whose keys it otherwise leaves alone), else a
 * value past its bounds (generations_max, interleaved_only). Returns that key's bit and why
 * into msg (no position: the caller has the key's); 0 when it refuses none. */
unsigned pn_protocol_key_refusal(const struct pn_scenario *sc, unsigned given, bool all_unread,
				 char *msg, size_t len);
/* The first script step sc's row cannot run (its capabilities): what it is into err (no
 * position: the step's line and column say it) and the step; NULL when it runs every step. */
const struct pn_step *pn_protocol_refusal(const struct pn_scenario *sc, char *err, size_t len);

#endif

/*
 * load.c: the YAML scenario loader (scenario layer; the only user of libyaml).
 * Reads a file or a string, walks libyaml's event stream against the schema tables below,
 * fills a struct pn_scenario, then checks the relations between keys (a script's pages
 * below storage.pages, sector_size <= page_size, ...). The format is docs/scenarios.md;
 * defaults are in src/base/scenario.c, the scalar parsers in parse.c.
 *
 * Rules it keeps:
 *   1. The first problem found is the one reported, as one line "FILE:LINE:COL: what was
 *      found; what was expected", LINE and COL 1-based at the offending node, counted as an
 *      editor does from the node's character index (position()), not from libyaml's line,
 *      which also breaks at U+0085, U+2028 and U+2029. err never ends in a newline.
 *   2. Unknown keys and duplicate keys are errors in every mapping; an unknown key or name
 *      within Levenshtein distance 2 of a known one gets "(did you mean 'x'?)".
 *   3. Two passes over libyaml's events, one event held at a time. The first only checks
 *      that the whole input is YAML (syntax errors come before errors of meaning) and bounds
 *      its nesting to MAX_DEPTH, which keeps libyaml's own stacks small. The second follows
 *      the schema, not the input: mappings nest at most three deep (top, section, script
 *      step or crash.points), and it stops at the first node whose shape the schema does not
 *      expect. Aliases are refused, so nothing expands.
 *   4. Everything allocated (script steps, crash points) belongs to the scenario; on failure
 *      pn_scenario_free() has released it before the loader returns. Input echoed in a
 *      message is cut to SHOW_MAX bytes with control characters replaced.
 *   5. Only a regular file is read (opened O_NONBLOCK, so a FIFO cannot block); inputs above
 *      MAX_FILE_BYTES, UTF-16/32 and a byte-order mark past the start are refused before
 *      parsing.
 *   6. What the engine cannot run is refused at its key, with what it would need
 *      (validate_engine(), validate_memory(); docs/scenarios.md, "Limits").
 */
#include "files.h"
#include "load.h"
#include "parse.h"
#include "protocols.h"
#include "walfmt.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
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

static bool read_script(struct loader *L, const struct field *f, void *base, const char *path);
static bool read_mutations(struct loader *L, const struct field *f, void *base, const char *path);
static bool read_points(struct loader *L, const struct field *f, void *base, const char *path);
static bool read_verdict(struct loader *L, const struct field *f, void *base, const char *path);
static bool read_spare_slots(struct loader *L, const struct field *f, void *base, const char *path);
static bool read_spelling(struct loader *L, const struct field *f, void *base, const char *path);

/* ---- the schema ---- */

#define OFF(m) offsetof(struct pn_scenario, m)
/* clang-format off */
#define TABLE(f) {f, PN_ARRAY_LEN(f), false, 0}
#define NUM(k, t, m, lo, hi) {.key = k, .type = t, .off = OFF(m), .min = lo, .max = hi}
#define POW2(k, m, lo, hi) {.key = k, .type = V_SIZE32, .off = OFF(m), .min = lo, .max = hi, .pow2 = true}
#define FLAG(k, m) {.key = k, .type = V_BOOL, .off = OFF(m)}
#define ENUM(k, m, n) {.key = k, .type = V_ENUM, .off = OFF(m), .names = n}
#define STR(k, m, lo) {.key = k, .type = V_STRING, .off = OFF(m), .min = lo, .max = sizeof(((struct pn_scenario *)0)->m)}
#define CUSTOM(k, m, fn) {.key = k, .type = V_CUSTOM, .off = OFF(m), .read = fn}
#define SECTION(k, t) {.key = k, .type = V_SECTION, .section = &t}
/* clang-format on */

static const char *const verdict_names[] = {"pass", "violation", NULL};

static const struct field storage_fields[] = {
	NUM("pages", V_U32, storage.pages, 1, 16777216),
	POW2("page_size", storage.page_size, 1024, 32768),
	POW2("sector_size", storage.sector_size, 512, 32768),
	NUM("buffers", V_U32, storage.buffers, 2, 1048576),
	POW2("wal_segment_size", storage.wal_segment_size, 64u << 10, 1u << 30),
};
static const struct field protocol_fields[] = {
	CUSTOM("mode", protocol.mode, read_spelling),
	NUM("generations", V_U32, protocol.generations, 2, 8),
	ENUM("layout", protocol.layout, pn_layout_names),
	CUSTOM("policy", protocol.policy, read_spelling),
	FLAG("checksums", protocol.checksums),
	FLAG("wal_log_hints", protocol.wal_log_hints),
	FLAG("slru_headers", protocol.slru_headers),
	NUM("image_threshold", V_U32, protocol.image_threshold, 1, UINT32_MAX),
	CUSTOM("spare_slots", protocol.spare_slots, read_spare_slots),
	CUSTOM("mutations", protocol.mutations, read_mutations),
};
static const struct field checkpoint_fields[] = {
	NUM("interval", V_DURATION, checkpoint.interval_ns, 0, UINT64_MAX),
	NUM("every_transactions", V_U32, checkpoint.every_transactions, 0, UINT32_MAX),
	{.key = "completion_target", .type = V_FRACTION, .off = OFF(checkpoint.completion_target)},
	NUM("max_wal_size", V_SIZE64, checkpoint.max_wal_size, 0, UINT64_MAX),
	FLAG("overlap", checkpoint.overlap),
};
static const struct field aio_fields[] = {
	NUM("queue_depth", V_U32, aio.queue_depth, 1, 1024),
	FLAG("reorder", aio.reorder),
};
static const struct field workload_fields[] = {
	ENUM("kind", workload.kind, pn_workload_kind_names),
	NUM("clients", V_U32, workload.clients, 1, 1024),
	NUM("transactions", V_U64, workload.transactions, 0, 1000000000000ull),
	NUM("pages_per_transaction", V_U32, workload.pages_per_transaction, 1, PN_WAL_MAX_BLOCKS),
	NUM("scale", V_U32, workload.scale, 1, 100000),
	NUM("warehouses", V_U32, workload.warehouses, 1, 1000),
	NUM("rows", V_U64, workload.rows, 0, 1000000000000ull),
	NUM("inserts", V_U64, workload.inserts, 0, 1000000000000ull),
	NUM("distinct_keys", V_U32, workload.distinct_keys, 1, UINT32_MAX),
	CUSTOM("script", workload.script, read_script),
	STR("trace", workload.trace, 1),
};
static const struct field schedules_fields[] = {
	NUM("runs", V_U32, schedules.runs, 1, 100000),
	ENUM("strategy", schedules.strategy, pn_strategy_names),
	NUM("preemption_bound", V_U32, schedules.preemption_bound, 0, 8),
	NUM("depth", V_U32, schedules.depth, 1, 16),
	FLAG("reduce", schedules.reduce),
	NUM("choice_width", V_U32, schedules.choice_width, 2, 16),
	NUM("budget", V_U32, schedules.budget, 1, 1000000),
};
static const struct field crash_fields[] = {
	CUSTOM("points", crash.points, read_points),
	NUM("max_unsynced", V_U32, crash.max_unsynced, 0, 64),
	ENUM("tear", crash.tear, pn_tear_names),
	NUM("samples", V_U32, crash.samples, 0, 1000000000),
	POW2("atomic_unit", crash.atomic_unit, 512, 32768),
	NUM("torn_writes", V_U32, crash.torn_writes, 1, 2),
};
static const struct field every_fields[] = {
	NUM("every", V_U64, crash.every, 1, UINT64_MAX),
};
static const struct field expect_fields[] = {
	CUSTOM("verdict", expect.violation, read_verdict),
};
static const struct field replay_fields[] = {
	NUM("schedule", V_U32, replay.schedule, 0, UINT32_MAX),
	/* crash points are after an event: check never crashes before the first */
	NUM("crash_point", V_U64, replay.crash_point, 1, UINT64_MAX),
	STR("state", replay.state, 0), /* empty strings: validate_replay says what to write */
	NUM("recovery_crash_point", V_U64, replay.recovery_crash_point, 1, UINT64_MAX),
	STR("recovery_state", replay.recovery_state, 0),
	STR("choices", replay.choices, 0),
	STR("scenario_hash", replay.scenario_hash, 0),
};

static const struct table storage_table = TABLE(storage_fields);
static const struct table protocol_table = TABLE(protocol_fields);
static const struct table checkpoint_table = TABLE(checkpoint_fields);
static const struct table aio_table = TABLE(aio_fields);
static const struct table workload_table = TABLE(workload_fields);
static const struct table schedules_table = TABLE(schedules_fields);
static const struct table crash_table = {crash_fields, PN_ARRAY_LEN(crash_fields), true,
					 OFF(crash.present)};
static const struct table every_table = TABLE(every_fields);
static const struct table expect_table = TABLE(expect_fields);
static const struct table replay_table = {replay_fields, PN_ARRAY_LEN(replay_fields), true,
					  OFF(replay.present)};

static const struct field top_fields[] = {
	STR("name", name, 1),
	STR("description", description, 0),
	NUM("seed", V_U64, seed, 0, UINT64_MAX),
	ENUM("postgres", postgres, pn_pg_version_names),
	SECTION("storage", storage_table),
	SECTION("protocol", protocol_table),
	SECTION("checkpoint", checkpoint_table),
	SECTION("aio", aio_table),
	SECTION("workload", workload_table),
	SECTION("schedules", schedules_table),
	SECTION("crash", crash_table),
	SECTION("expect", expect_table),
	SECTION("replay", replay_table),
};
static const struct table top_table = TABLE(top_fields);

/* A script step's keys; their indices are the STEP_* bits of check_step(). */
enum { STEP_OP, STEP_PAGE, STEP_XID, STEP_CLIENT };
/* clang-format off */
static const struct field step_fields[] = {
	{.key = "op", .type = V_ENUM, .off = offsetof(struct pn_step, op), .names = pn_script_op_names},
	{.key = "page", .type = V_U32, .off = offsetof(struct pn_step, page), .max = UINT32_MAX},
	{.key = "xid", .type = V_U32, .off = offsetof(struct pn_step, xid), .max = UINT32_MAX},
	{.key = "client", .type = V_U32, .off = offsetof(struct pn_step, client), .max = UINT32_MAX},
};
/* clang-format on */
static const struct table step_table = TABLE(step_fields);

/* ---- messages ---- */

/* Writes "NAME:LINE:COL: what" into err, on one line. Returns false, for `return message()`. */
static bool vmessage(char *err, size_t err_len, const char *name, size_t line, size_t col,
		     const char *fmt, va_list ap)
{
	int n;

	if (!err || err_len == 0)
		return false;
	n = snprintf(err, err_len, "%s:%zu:%zu: ", name, line, col);
	if (n >= 0 && (size_t)n < err_len)
		vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
	for (char *p = err; *p; p++) {
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	}
	return false;
}

__attribute__((format(printf, 6, 7))) static bool
message(char *err, size_t err_len, const char *name, size_t line, size_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(err, err_len, name, line, col, fmt, ap);
	va_end(ap);
	return false;
}

/* Records the first failure only: later ones are consequences. */
__attribute__((format(printf, 4, 5))) static bool fail_at(struct loader *L, size_t line, size_t col,
							  const char *fmt, ...)
{
	va_list ap;

	if (L->failed)
		return false;
	L->failed = true;
	va_start(ap, fmt);
	vmessage(L->err, L->err_len, L->name, line, col, fmt, ap);
	va_end(ap);
	return false;
}

/*
 * The position of a libyaml mark, recomputed from its character index: libyaml (YAML 1.1)
 * also ends lines at U+0085, U+2028 and U+2029, which editors do not, so its own line and
 * column would be wrong after one. Lines end at \n, \r\n or a lone \r; columns count
 * UTF-8 characters (libyaml's index counts characters, \r\n as two).
 */
static struct pos position(struct loader *L, yaml_mark_t m)
{
	if (m.index < L->at.index || L->at.line == 0)
		L->at.index = 0, L->at.off = 0, L->at.line = 1, L->at.col = 1;
	while (L->at.index < m.index && L->at.off < L->len) {
		unsigned char c = (unsigned char)L->text[L->at.off];
		size_t n = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
		bool crlf = c == '\r' && L->at.off + 1 < L->len && L->text[L->at.off + 1] == '\n';
		if (c == '\n' || (c == '\r' && !crlf)) {
			L->at.line++;
			L->at.col = 1;
		} else if (!crlf) {
			L->at.col++;
		}
		L->at.off += PN_MIN(n, L->len - L->at.off);
		L->at.index++;
	}
	return (struct pos){L->at.line, L->at.col};
}

static bool fail_pos(struct loader *L, struct pos p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define fail(L, mark, ...) fail_pos(L, position(L, mark), __VA_ARGS__)

static bool fail_pos(struct loader *L, struct pos p, const char *fmt, ...)
{
	va_list ap;

	if (L->failed)
		return false;
	L->failed = true;
	va_start(ap, fmt);
	vmessage(L->err, L->err_len, L->name, p.line, p.col, fmt, ap);
	va_end(ap);
	return false;
}

/* Input text made safe to echo: at most SHOW_MAX bytes, control characters as '?'. */
static const char *show(struct loader *L, const char *s)
{
	char *out = L->show[L->show_next++ % PN_ARRAY_LEN(L->show)];
	size_t n = 0;

	for (; s[n] && n < SHOW_MAX; n++) {
		unsigned char c = (unsigned char)s[n];
		out[n] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (!s[n]) {
		out[n] = '\0';
		return out;
	}
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--; /* do not cut a UTF-8 sequence */
	memcpy(out + n, "...", 4);
	return out;
}

static bool is_null(const struct loader *L)
{
	const char *v = (const char *)L->ev.data.scalar.value;

	if (L->ev.type != YAML_SCALAR_EVENT || L->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	       strcmp(v, "NULL") == 0;
}

/* What the current event is, for "X is <found>; expected Y". */
static const char *found(struct loader *L)
{
	switch (L->ev.type) {
	case YAML_MAPPING_START_EVENT: return "a mapping";
	case YAML_SEQUENCE_START_EVENT: return "a list";
	case YAML_SCALAR_EVENT:
		if (is_null(L))
			return "empty";
		snprintf(L->found, sizeof L->found, "'%s'",
			 show(L, (const char *)L->ev.data.scalar.value));
		return L->found;
	default: return "not a value";
	}
}

static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33];

	if (la >= PN_ARRAY_LEN(row) || lb >= PN_ARRAY_LEN(row))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			best = PN_MIN(best, up + 1);
			best = PN_MIN(best, row[j - 1] + 1);
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* " (did you mean 'x'?)" for the closest of names[0..n) within distance 2, else "". */
static void suggest(char *buf, size_t len, const char *s, const char *const *names, size_t n)
{
	size_t best = SIZE_MAX, at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t d = distance(s, names[i]);
		if (d < best && d < strlen(names[i])) {
			best = d;
			at = i;
		}
	}
	if (best <= 2)
		snprintf(buf, len, " (did you mean '%s'?)", names[at]);
}

static void join_names(char *buf, size_t len, const char *const *names, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static size_t count_names(const char *const *names)
{
	size_t n = 0;

	while (names[n])
		n++;
	return n;
}

/* ---- events ---- */

/*
 * LINE:COL of byte offset off, as an editor shows it: lines end at \n, \r\n or a lone \r
 * (as libyaml counts them too), columns count UTF-8 characters, both 1-based.
 */
static void byte_position(const struct loader *L, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < L->len; i++) {
		unsigned char c = (unsigned char)L->text[i];
		if (c == '\n' || (c == '\r' && (i + 1 >= L->len || L->text[i + 1] != '\n'))) {
			(*line)++;
			*col = 1;
		} else if (c != '\r' && (c & 0xC0) != 0x80) {
			(*col)++;
		}
	}
}

/*
 * A byte-order mark past the start (two files joined, or an editor's stray U+FEFF):
 * refused before parsing with what it is (libyaml would say "did not find expected key").
 */
static bool check_encoding(struct loader *L)
{
	const unsigned char *t = (const unsigned char *)L->text;
	size_t line, col;

	/* UTF-16 or UTF-32, by its byte-order mark or by a NUL beside the first character */
	if (L->len >= 2 &&
	    ((t[0] == 0xFF && t[1] == 0xFE) || (t[0] == 0xFE && t[1] == 0xFF) ||
	     (t[0] == 0 && t[1] != 0) || (t[0] != 0 && t[1] == 0) || (t[0] == 0 && t[1] == 0)))
		return fail_at(
			L, 1, 1,
			"the file looks like UTF-16 or UTF-32 (bytes 0x%02X 0x%02X); expected UTF-8 YAML text",
			t[0], t[1]);

	for (size_t i = 0; i + 3 <= L->len; i++) {
		if (memcmp(L->text + i, "\xEF\xBB\xBF", 3) != 0)
			continue;
		byte_position(L, i, &line, &col);
		return fail_at(
			L, line, col,
			"a byte-order mark (U+FEFF) in mid-file (two files joined?); expected one only at the very start of the file, or none");
	}
	return true;
}

/* The first tab in the indentation of the line of m, if any (libyaml says "cannot start any
 * token"); *col is its column. */
static bool tab_in_indent(struct loader *L, yaml_mark_t m, size_t *col)
{
	size_t i;

	position(L, m);
	i = L->at.off;
	while (i > 0 && L->text[i - 1] != '\n' && L->text[i - 1] != '\r')
		i--;
	for (size_t c = 0; i + c < L->len; c++) {
		if (L->text[i + c] == '\t') {
			*col = c + 1;
			return true;
		}
		if (L->text[i + c] != ' ')
			break;
	}
	return false;
}

/*
 * A syntax error after U+0085, U+2028 or U+2029 is most likely that character's doing:
 * libyaml (YAML 1.1) breaks the line there, an editor does not. Says where the first one
 * on the error's line or its context's is.
 */
static bool odd_break(struct loader *L, yaml_mark_t m, yaml_mark_t context, char *buf, size_t len)
{
	size_t lines[2] = {position(L, context).line, position(L, m).line};
	static const char *const breaks[][2] = {
		{"\xC2\x85", "U+0085 (NEL)"},
		{"\xE2\x80\xA8", "U+2028 (line separator)"},
		{"\xE2\x80\xA9", "U+2029 (paragraph separator)"},
	};
	size_t end, line, col;

	position(L, m);
	end = PN_MIN(L->at.off + 1, L->len);
	for (size_t i = 0; i < end; i++) {
		for (size_t b = 0; b < PN_ARRAY_LEN(breaks); b++) {
			size_t n = strlen(breaks[b][0]);
			if (i + n > L->len || memcmp(L->text + i, breaks[b][0], n) != 0)
				continue;
			byte_position(L, i, &line, &col);
			if (line != lines[0] && line != lines[1])
				continue;
			snprintf(
				buf, len,
				"; %s at %zu:%zu ends a line for YAML 1.1 though not in an editor: expected \\n line breaks only",
				breaks[b][1], line, col);
			return true;
		}
	}
	return false;
}

static bool syntax_error(struct loader *L)
{
	const yaml_parser_t *p = &L->parser;
	const char *problem = p->problem ? p->problem : "unknown error";
	const char *hint = "";
	char hint_buf[160];
	size_t line = 1, col = 1;

	if (p->error == YAML_MEMORY_ERROR)
		return fail_at(L, 1, 1, "out of memory while parsing");
	if (p->error == YAML_READER_ERROR) {
		byte_position(L, p->problem_offset, &line, &col);
		if (p->problem_offset < L->len)
			return fail_at(L, line, col, "%s (byte 0x%02X); expected UTF-8 YAML text",
				       problem, (unsigned char)L->text[p->problem_offset]);
		return fail_at(L, line, col, "%s; expected UTF-8 YAML text", problem);
	}
	if (tab_in_indent(L, p->problem_mark, &col))
		return fail_at(
			L, position(L, p->problem_mark).line, col,
			"tab character in indentation; expected spaces (YAML forbids tabs there)");
	if (strstr(problem, "expected key") || strstr(problem, "mapping values are not allowed"))
		hint = "; check the indentation";
	if (odd_break(L, p->problem_mark, p->context ? p->context_mark : p->problem_mark, hint_buf,
		      sizeof hint_buf))
		hint = hint_buf;
	if (p->context)
		return fail(L, p->problem_mark, "YAML syntax error: %s (%s at line %zu)%s", problem,
			    p->context, position(L, p->context_mark).line, hint);
	return fail(L, p->problem_mark, "YAML syntax error: %s%s", problem, hint);
}

/* Moves to the next event. */
static bool raw_next(struct loader *L)
{
	if (L->has_ev) {
		yaml_event_delete(&L->ev);
		L->has_ev = false;
	}
	if (!yaml_parser_parse(&L->parser, &L->ev))
		return syntax_error(L);
	L->has_ev = true;
	return true;
}

/* Moves to the next event; refuses aliases. */
static bool next(struct loader *L)
{
	if (!raw_next(L))
		return false;
	if (L->ev.type == YAML_ALIAS_EVENT)
		return fail(L, L->ev.start_mark,
			    "alias '*%s' is not supported; expected the value written out",
			    show(L, (const char *)L->ev.data.alias.anchor));
	return true;
}

/*
 * The first pass: is the whole input well-formed YAML? Syntax errors are reported before
 * any error of meaning. Nesting is bounded here, so libyaml's stacks stay small whatever
 * the input (a scenario nests four levels at most).
 */
static bool check_syntax(struct loader *L)
{
	size_t depth = 0;

	do {
		if (!raw_next(L))
			return false;
		if (L->ev.type == YAML_MAPPING_START_EVENT ||
		    L->ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		if (L->ev.type == YAML_MAPPING_END_EVENT || L->ev.type == YAML_SEQUENCE_END_EVENT)
			depth--;
		if (depth > MAX_DEPTH)
			return fail(
				L, L->ev.start_mark,
				"nesting deeper than %d levels; expected a scenario (4 levels at most)",
				MAX_DEPTH);
	} while (L->ev.type != YAML_STREAM_END_EVENT);
	return true;
}

/* The current event's text: fails unless it is a scalar with a value and no NUL inside. */
static bool scalar(struct loader *L, const char *path, const char *want, const char **text)
{
	const char *v = (const char *)L->ev.data.scalar.value;

	if (L->ev.type != YAML_SCALAR_EVENT || is_null(L))
		return fail(L, L->ev.start_mark, "%s is %s; expected %s", path, found(L), want);
	if (strlen(v) != L->ev.data.scalar.length)
		return fail(L, L->ev.start_mark, "%s contains a NUL character; expected %s", path,
			    want);
	*text = v;
	return true;
}

static bool plain(const struct loader *L)
{
	return L->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static void remember(struct loader *L, const void *ptr, yaml_mark_t mark)
{
	if (L->given_len < MAX_GIVEN) {
		L->given[L->given_len].ptr = ptr;
		L->given[L->given_len].mark = mark;
		L->given_len++;
	}
}

static bool given(const struct loader *L, const void *ptr, yaml_mark_t *mark)
{
	for (size_t i = 0; i < L->given_len; i++) {
		if (L->given[i].ptr == ptr) {
			if (mark)
				*mark = L->given[i].mark;
			return true;
		}
	}
	return false;
}

/* Where the value of field a was, else field b's, else the top-level mapping. */
static yaml_mark_t mark_of(const struct loader *L, const void *a, const void *b)
{
	yaml_mark_t m = L->top;

	if (!given(L, a, &m))
		given(L, b, &m);
	return m;
}

/* ---- scalars ---- */

static void format_size(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;

	while (u + 1 < PN_ARRAY_LEN(units) && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)v, units[u]);
}

/* The "expected ..." text for a field. */
static void expected(const struct field *f, char *buf, size_t len)
{
	char lo[32], hi[32];

	format_size(lo, sizeof lo, f->min);
	format_size(hi, sizeof hi, f->max);
	switch (f->type) {
	case V_U32:
	case V_U64:
		snprintf(buf, len, "an integer from %llu to %llu", (unsigned long long)f->min,
			 (unsigned long long)f->max);
		break;
	case V_SIZE32:
	case V_SIZE64:
		if (f->pow2)
			snprintf(buf, len, "a size that is a power of two from %s to %s", lo, hi);
		else
			snprintf(buf, len,
				 "a size like 64MiB (units B, kB, KiB, MB, MiB, GB, GiB, TB, TiB)");
		break;
	case V_DURATION:
		snprintf(buf, len, "a duration like 250ms or 4min (units us, ms, s, min, h, d)");
		break;
	case V_FRACTION: snprintf(buf, len, "a number greater than 0 and at most 1"); break;
	case V_BOOL: snprintf(buf, len, "true or false"); break;
	case V_ENUM:
		snprintf(buf, len, "one of ");
		join_names(buf + 7, len - 7, f->names, count_names(f->names));
		break;
	default:
		snprintf(buf, len, "a string of at most %llu bytes",
			 (unsigned long long)f->max - 1);
		break;
	}
}

static bool bad_number(struct loader *L, const struct field *f, const char *path, const char *text,
		       enum pn_parse_status st, const char *want)
{
	const char *what = "is not a number";

	switch (st) {
	case PN_PARSE_NEGATIVE: what = "is negative"; break;
	case PN_PARSE_SIGN: what = "has a sign"; break;
	case PN_PARSE_FRACTION: what = "is not a whole number"; break;
	case PN_PARSE_OVERFLOW: what = "is too large"; break;
	case PN_PARSE_NO_UNIT: what = "has no unit"; break;
	case PN_PARSE_BAD_UNIT: what = "has an unknown unit"; break;
	default:
		if (f->type == V_SIZE32 || f->type == V_SIZE64)
			what = "is not a size";
		else if (f->type == V_DURATION)
			what = "is not a duration";
		break;
	}
	return fail(L, L->ev.start_mark, "%s %s ('%s'); expected %s", path, what, show(L, text),
		    want);
}

static bool read_number(struct loader *L, const struct field *f, void *dst, const char *path)
{
	char want[WANT_LEN];
	const char *text = NULL;
	uint64_t v = 0;
	enum pn_parse_status st;

	expected(f, want, sizeof want);
	if (!scalar(L, path, want, &text))
		return false;
	if (f->type == V_SIZE32 || f->type == V_SIZE64)
		st = pn_parse_size_status(text, &v);
	else if (f->type == V_DURATION)
		st = pn_parse_duration_status(text, &v);
	else if (!plain(L))
		return fail(L, L->ev.start_mark, "%s is the quoted string '%s'; expected %s", path,
			    show(L, text), want);
	else
		st = pn_parse_uint(text, &v);
	if (st != PN_PARSE_OK)
		return bad_number(L, f, path, text, st, want);
	if (v < f->min || v > f->max)
		return fail(L, L->ev.start_mark, "%s is %s, out of range; expected %s", path,
			    show(L, text), want);
	if (f->pow2 && (v & (v - 1)) != 0)
		return fail(L, L->ev.start_mark, "%s is %s, not a power of two; expected %s", path,
			    show(L, text), want);
	if (f->type == V_U32 || f->type == V_SIZE32)
		*(uint32_t *)dst = (uint32_t)v;
	else
		*(uint64_t *)dst = v;
	return true;
}

/* digits [. digits], as a double (strtod: correctly rounded, so that the trace writer's
 * text reads back as the same value); no sign, no exponent. */
static enum pn_parse_status parse_fraction(const char *s, double *out)
{
	size_t n = 0;
	const char *p = s;

	if (*p == '-')
		return PN_PARSE_NEGATIVE;
	if (*p == '+')
		return PN_PARSE_SIGN;
	for (; *p >= '0' && *p <= '9'; p++, n++)
		;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, n++)
			;
	}
	if (n == 0 || *p || n > 30)
		return PN_PARSE_SYNTAX;
	*out = strtod(s, NULL);
	return PN_PARSE_OK;
}

static bool read_fraction(struct loader *L, const struct field *f, void *dst, const char *path)
{
	char want[WANT_LEN];
	const char *text;
	double v = 0;
	enum pn_parse_status st;

	expected(f, want, sizeof want);
	if (!scalar(L, path, want, &text))
		return false;
	if (!plain(L))
		return fail(L, L->ev.start_mark, "%s is the quoted string '%s'; expected %s", path,
			    show(L, text), want);
	st = parse_fraction(text, &v);
	if (st != PN_PARSE_OK)
		return bad_number(L, f, path, text, st, want);
	if (!(v > 0 && v <= 1))
		return fail(L, L->ev.start_mark, "%s is %s, out of range; expected %s", path,
			    show(L, text), want);
	*(double *)dst = v;
	return true;
}

static bool read_bool(struct loader *L, const struct field *f, void *dst, const char *path)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off"};
	const char *text;

	if (!scalar(L, path, "true or false", &text))
		return false;
	for (size_t i = 0; plain(L) && i < PN_ARRAY_LEN(words); i++) {
		if (strcasecmp(text, words[i]) == 0) {
			*(bool *)dst = i % 2 == 0;
			return true;
		}
	}
	return fail(L, L->ev.start_mark, "%s is %s%s; expected true or false (or yes/no, on/off)",
		    path, plain(L) ? "" : "the quoted string ", found(L));
}

/* Stores the index of the name matched into *(unsigned *)dst. */
static bool read_enum(struct loader *L, const struct field *f, void *dst, const char *path)
{
	char want[WANT_LEN], hint[80];
	size_t n = count_names(f->names);
	const char *text;

	expected(f, want, sizeof want);
	if (!scalar(L, path, want, &text))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(text, f->names[i]) == 0) {
			*(unsigned *)dst = (unsigned)i;
			return true;
		}
	}
	suggest(hint, sizeof hint, text, f->names, n);
	return fail(L, L->ev.start_mark, "unknown %s '%s'%s; expected %s", path, show(L, text),
		    hint, want);
}

static bool read_string(struct loader *L, const struct field *f, void *dst, const char *path)
{
	char want[WANT_LEN];
	const char *text;
	size_t n;

	if (f->min == 0 && is_null(L)) {
		*(char *)dst = '\0';
		return true;
	}
	expected(f, want, sizeof want);
	if (!scalar(L, path, want, &text))
		return false;
	n = L->ev.data.scalar.length;
	while (n > 0 && text[n - 1] == '\n')
		n--; /* a block scalar's final line break */
	if (n < f->min)
		return fail(L, L->ev.start_mark, "%s is empty; expected a non-empty string", path);
	if (n >= f->max)
		return fail(L, L->ev.start_mark, "%s is %zu bytes long; expected %s", path, n,
			    want);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(
				L, L->ev.start_mark,
				"%s contains a line break or control character; expected one line of text",
				path);
	}
	memcpy(dst, text, n);
	((char *)dst)[n] = '\0';
	return true;
}

/* ---- mappings ---- */

static bool read_value(struct loader *L, const struct field *f, void *base, const char *path);

/* " in storage" or " at the top level" */
static const char *place(char *buf, size_t len, const char *where)
{
	if (*where)
		snprintf(buf, len, " in %s", where);
	else
		snprintf(buf, len, " at the top level");
	return buf;
}

/* Looks the current key up in t; fails with a suggestion when it is not there. */
static int find_key(struct loader *L, const struct table *t, const char *where)
{
	const char *names[MAX_FIELDS];
	const char *key = (const char *)L->ev.data.scalar.value;
	char hint[80], in[PATH_LEN + 20], list[WANT_LEN];

	for (size_t i = 0; i < t->count; i++) {
		names[i] = t->fields[i].key;
		if (strcmp(key, names[i]) == 0 && strlen(key) == L->ev.data.scalar.length)
			return (int)i;
	}
	place(in, sizeof in, where);
	suggest(hint, sizeof hint, key, names, t->count);
	if (hint[0]) {
		fail(L, L->ev.start_mark, "unknown key '%s'%s%s", show(L, key), in, hint);
		return -1;
	}
	join_names(list, sizeof list, names, t->count);
	fail(L, L->ev.start_mark, "unknown key '%s'%s; expected one of %s", show(L, key), in, list);
	return -1;
}

/* Reads the mapping whose MAPPING-START is the current event, through the end. */
static bool read_mapping(struct loader *L, const struct table *t, void *base, const char *where,
			 struct seen *seen)
{
	char path[PATH_LEN], in[PATH_LEN + 20];
	int i;

	PN_ASSERT(t->count <= MAX_FIELDS);
	memset(seen, 0, sizeof *seen);
	for (;;) {
		if (!next(L))
			return false;
		if (L->ev.type == YAML_MAPPING_END_EVENT)
			return true;
		if (L->ev.type != YAML_SCALAR_EVENT)
			return fail(L, L->ev.start_mark, "a key%s is %s; expected a key name",
				    place(in, sizeof in, where), found(L));
		i = find_key(L, t, where);
		if (i < 0)
			return false;
		if (seen->mask & (1u << i))
			return fail(
				L, L->ev.start_mark,
				"duplicate key '%s'%s (first at %zu:%zu); expected each key once",
				t->fields[i].key, place(in, sizeof in, where),
				position(L, seen->key[i]).line, position(L, seen->key[i]).col);
		seen->mask |= 1u << i;
		seen->key[i] = L->ev.start_mark;
		snprintf(path, sizeof path, "%s%s%s", where, *where ? "." : "", t->fields[i].key);
		if (!next(L))
			return false;
		if (base == L->s && t->fields[i].type != V_SECTION)
			remember(L, (char *)base + t->fields[i].off, L->ev.start_mark);
		else if (base == L->s && t->fields[i].section->has_present)
			remember(L, (char *)base + t->fields[i].section->present, seen->key[i]);
		if (!read_value(L, &t->fields[i], base, path))
			return false;
	}
}

/* A section: a mapping, or nothing at all (all defaults). Nesting is bounded by the schema. */
static bool read_section(struct loader *L, const struct table *t, void *base, const char *path)
{
	struct seen seen;

	if (t->has_present)
		*(bool *)((char *)base + t->present) = true;
	if (is_null(L))
		return true;
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return fail(L, L->ev.start_mark, "%s is %s; expected a mapping", path, found(L));
	return read_mapping(L, t, base, path, &seen);
}

static bool read_value(struct loader *L, const struct field *f, void *base, const char *path)
{
	void *dst = (char *)base + f->off;

	switch (f->type) {
	case V_U32:
	case V_U64:
	case V_SIZE32:
	case V_SIZE64:
	case V_DURATION: return read_number(L, f, dst, path);
	case V_FRACTION: return read_fraction(L, f, dst, path);
	case V_BOOL: return read_bool(L, f, dst, path);
	case V_ENUM: return read_enum(L, f, dst, path);
	case V_STRING: return read_string(L, f, dst, path);
	case V_SECTION: return read_section(L, f->section, base, path);
	case V_CUSTOM: return f->read(L, f, base, path);
	}
	return fail(L, L->ev.start_mark, "%s: internal error: no reader", path);
}

/* ---- custom values ---- */

/* Makes room for one more element of size `size` in *array (len used, *cap allocated). */
static bool grow(struct loader *L, void **array, size_t *cap, size_t len, size_t size)
{
	size_t want;
	void *p;

	if (len < *cap)
		return true;
	want = *cap ? *cap * 2 : 16;
	p = realloc(*array, want * size);
	if (!p)
		return fail(L, L->ev.start_mark, "out of memory");
	*array = p;
	*cap = want;
	return true;
}

/* Which keys an op takes besides op and client: page, xid. */
static bool op_has_page(enum pn_op op)
{
	return op == PN_OP_UPDATE || op == PN_OP_EVICT || op == PN_OP_HINT || op == PN_OP_VACUUM ||
	       op == PN_OP_DEDUP || op == PN_OP_UPDATE_HOLD || op == PN_OP_TRUNCATE;
}

/* The step of `client` next after step i (dir +1) or before it (dir -1), or NULL. */
static const struct pn_step *client_step(const struct pn_scenario *s, uint32_t i, int dir)
{
	for (int64_t j = (int64_t)i + dir; j >= 0 && j < (int64_t)s->workload.script_len; j += dir)
		if (s->workload.script[j].client == s->workload.script[i].client)
			return &s->workload.script[j];
	return NULL;
}

/* Each update_hold paired with a release (whether the row runs them: validate_protocol). */
static bool validate_hold(struct loader *L, uint32_t i)
{
	const struct pn_scenario *s = L->s;
	const struct pn_step *st = &s->workload.script[i], *o;
	/* the row runs these steps: validate_protocol */
	if (st->op == PN_OP_UPDATE_HOLD && (!(o = client_step(s, i, 1)) || o->op != PN_OP_RELEASE))
		return fail_at(
			L, (size_t)st->line, (size_t)st->column,
			"workload.script[%u] is an update_hold of client %u whose next step is %s; expected {op: release, client: %u} as that client's next step",
			i, st->client, o ? pn_op_names[o->op] : "missing", st->client);
	if (st->op == PN_OP_RELEASE && (!(o = client_step(s, i, -1)) || o->op != PN_OP_UPDATE_HOLD))
		return fail_at(
			L, (size_t)st->line, (size_t)st->column,
			"workload.script[%u] releases client %u, which holds nothing (its step before is %s); expected an update_hold of client %u before it",
			i, st->client, o ? pn_op_names[o->op] : "missing", st->client);
	return true;
}

static bool check_step(struct loader *L, const struct pn_step *st, const struct seen *seen,
		       yaml_mark_t m, const char *where)
{
	uint32_t allowed = 1u << STEP_OP | 1u << STEP_CLIENT;
	char list[WANT_LEN];
	const char *op;

	if (!(seen->mask & 1u << STEP_OP)) {
		join_names(list, sizeof list, pn_script_op_names, PN_OP_SCRIPT_COUNT);
		return fail(L, m, "%s has no 'op'; expected op: one of %s", where, list);
	}
	op = pn_op_names[st->op];
	if (op_has_page(st->op))
		allowed |= 1u << STEP_PAGE;
	if (st->op == PN_OP_SLRU_SET)
		allowed |= 1u << STEP_XID;
	for (size_t i = 0; i < step_table.count; i++) {
		if ((seen->mask & 1u << i) && !(allowed & 1u << i))
			return fail(L, seen->key[i],
				    "key '%s' is not used by op '%s' in %s; expected %s",
				    step_fields[i].key, op, where,
				    st->op == PN_OP_SLRU_SET ? "op, xid, client"
				    : op_has_page(st->op)    ? "op, page, client"
							     : "op, client");
	}
	if ((allowed & 1u << STEP_PAGE) && !(seen->mask & 1u << STEP_PAGE))
		return fail(L, m, "%s has op '%s' but no 'page'; expected page: N", where, op);
	if ((allowed & 1u << STEP_XID) && !(seen->mask & 1u << STEP_XID))
		return fail(L, m, "%s has op '%s' but no 'xid'; expected xid: N", where, op);
	return true;
}

static bool read_step(struct loader *L, struct pn_step *st, const char *where)
{
	yaml_mark_t m = L->ev.start_mark;
	struct seen seen;

	memset(st, 0, sizeof *st);
	st->line = (int)position(L, m).line;
	st->column = (int)position(L, m).col;
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return fail(L, m, "%s is %s; expected a step like {op: update, page: 3}", where,
			    found(L));
	if (!read_mapping(L, &step_table, st, where, &seen))
		return false;
	return check_step(L, st, &seen, m, where);
}

static bool read_script(struct loader *L, const struct field *f, void *base, const char *path)
{
	struct pn_scenario *s = L->s;
	char where[PATH_LEN];

	if (is_null(L))
		return true;
	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail(
			L, L->ev.start_mark,
			"%s is %s; expected a list of steps like [{op: update, page: 3}, {op: commit}]",
			path, found(L));
	for (;;) {
		if (!next(L))
			return false;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			return true;
		if (s->workload.script_len >= MAX_STEPS)
			return fail(L, L->ev.start_mark,
				    "%s has more than %u steps; expected at most %u", path,
				    MAX_STEPS, MAX_STEPS);
		if (!grow(L, (void **)&s->workload.script, &L->script_cap, s->workload.script_len,
			  sizeof *s->workload.script))
			return false;
		snprintf(where, sizeof where, "%s[%u]", path, s->workload.script_len);
		if (!read_step(L, &s->workload.script[s->workload.script_len++], where))
			return false;
	}
}

static bool read_mutations(struct loader *L, const struct field *f, void *base, const char *path)
{
	const char *const *names = pn_mutation_names, *text;
	char where[PATH_LEN], hint[80], list[WANT_LEN];
	uint32_t *bits = &L->s->protocol.mutations;

	join_names(list, sizeof list, names, PN_MUT_COUNT);
	if (is_null(L))
		return true;
	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail(L, L->ev.start_mark,
			    "%s is %s; expected a list of mutation names like [fpw_off]", path,
			    found(L));
	for (size_t i = 0;; i++) {
		int k = 0;
		if (!next(L))
			return false;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			return true;
		snprintf(where, sizeof where, "%s[%zu]", path, i);
		if (!scalar(L, where, "a mutation name", &text))
			return false;
		while (k < PN_MUT_COUNT && strcmp(text, names[k]) != 0)
			k++;
		if (k == PN_MUT_COUNT) {
			suggest(hint, sizeof hint, text, names, PN_MUT_COUNT);
			return fail(L, L->ev.start_mark,
				    "unknown mutation '%s' in %s%s; expected one of %s",
				    show(L, text), path, hint, list);
		}
		if (*bits & 1u << k)
			return fail(L, L->ev.start_mark,
				    "mutation '%s' is listed twice in %s; expected each once",
				    names[k], path);
		*bits |= 1u << k;
	}
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* crash.points as a list: event numbers, kept sorted and without repeats. */
static bool read_point_list(struct loader *L, const char *path)
{
	static const struct field point = {.key = "point", .type = V_U64, .max = UINT64_MAX};
	struct pn_scenario *s = L->s;
	yaml_mark_t m = L->ev.start_mark;
	char where[PATH_LEN];
	uint32_t n = 0;

	for (;;) {
		uint64_t v = 0;
		if (!next(L))
			return false;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (s->crash.list_len >= MAX_POINTS)
			return fail(L, L->ev.start_mark,
				    "%s lists more than %u event numbers; expected at most %u",
				    path, MAX_POINTS, MAX_POINTS);
		snprintf(where, sizeof where, "%s[%u]", path, s->crash.list_len);
		if (!read_number(L, &point, &v, where))
			return false;
		if (!grow(L, (void **)&s->crash.list, &L->list_cap, s->crash.list_len, sizeof v))
			return false;
		s->crash.list[s->crash.list_len++] = v;
	}
	if (s->crash.list_len == 0)
		return fail(
			L, m,
			"%s is an empty list; expected all, {every: N} or a list of event numbers",
			path);
	qsort(s->crash.list, s->crash.list_len, sizeof *s->crash.list, compare_u64);
	for (uint32_t i = 0; i < s->crash.list_len; i++) {
		if (n == 0 || s->crash.list[i] != s->crash.list[n - 1])
			s->crash.list[n++] = s->crash.list[i];
	}
	s->crash.list_len = n;
	s->crash.points = PN_POINTS_LIST;
	return true;
}

static bool read_points(struct loader *L, const struct field *f, void *base, const char *path)
{
	struct seen seen;
	yaml_mark_t m = L->ev.start_mark;

	if (L->ev.type == YAML_SCALAR_EVENT && plain(L) &&
	    strcmp((const char *)L->ev.data.scalar.value, "all") == 0) {
		L->s->crash.points = PN_POINTS_ALL;
		return true;
	}
	if (L->ev.type == YAML_SEQUENCE_START_EVENT)
		return read_point_list(L, path);
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return fail(L, m, "%s is %s; expected all, {every: N} or a list of event numbers",
			    path, found(L));
	if (!read_mapping(L, &every_table, L->s, path, &seen))
		return false;
	if (!seen.mask)
		return fail(L, m, "%s has no 'every'; expected {every: N}", path);
	L->s->crash.points = PN_POINTS_EVERY;
	return true;
}

static bool read_verdict(struct loader *L, const struct field *f, void *base, const char *path)
{
	static const struct field verdict = {.key = "verdict",
					     .type = V_ENUM,
					     .names = verdict_names};
	unsigned v = 0;

	if (!read_enum(L, &verdict, &v, path))
		return false;
	L->s->expect.violation = v == 1;
	return true;
}

/* protocol.spare_slots: a count of slots, or P% of storage.pages (0 to 200: two a page). */
static bool read_spare_slots(struct loader *L, const struct field *f, void *base, const char *path)
{
	static const char want[] = "a count of slots or a percentage of the pages such as 10%";
	const char *text = NULL;
	uint64_t v = 0;
	char digits[32];
	(void)f;
	(void)base;
	if (!scalar(L, path, want, &text))
		return false;
	size_t n = strlen(text);
	bool pct = n > 0 && text[n - 1] == '%';
	if (pct)
		n--;
	if (n == 0 || n >= sizeof digits)
		return fail(L, L->ev.start_mark, "%s is '%s'; expected %s", path, show(L, text),
			    want);
	memcpy(digits, text, n);
	digits[n] = 0;
	if (pn_parse_uint(digits, &v) != PN_PARSE_OK || v > (pct ? 200u : UINT32_MAX))
		return fail(L, L->ev.start_mark,
			    "%s is '%s', not a count or a percentage up to 200%%; expected %s",
			    path, show(L, text), want);
	L->s->protocol.spare_slots = (uint32_t)v;
	L->s->protocol.spare_percent = pct;
	return true;
}

/* protocol.mode and protocol.policy: the names the list of protocols spells (a row's name
 * is MODE or MODE-POLICY, src/protocol/list.h); resolve_row picks the row. */
static bool read_spelling(struct loader *L, const struct field *f, void *base, const char *path)
{
	bool mode = f->off == OFF(protocol.mode);
	char text[PN_PROTOCOL_COUNT][sizeof L->mode];
	const char *names[PN_PROTOCOL_COUNT + 1];
	unsigned n = 0, v = 0;
	(void)base;
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++) {
		const char *p = pn_protocol_policy(r);
		if (!mode && !p)
			continue;
		snprintf(text[n], sizeof text[n], "%.*s",
			 mode ? (int)pn_protocol_mode_len(r) : (int)strlen(p),
			 mode ? pn_protocol_names[r] : p);
		bool known = false;
		for (unsigned i = 0; i < n; i++)
			known |= strcmp(names[i], text[n]) == 0;
		if (!known) {
			names[n] = text[n];
			n++;
		}
	}
	names[n] = NULL;
	struct field e = {.key = f->key, .type = V_ENUM, .names = names};
	if (!read_enum(L, &e, &v, path))
		return false;
	snprintf(mode ? L->mode : L->policy, sizeof L->mode, "%s", names[v]);
	return true;
}

/* ---- the document ---- */

static bool load_document(struct loader *L)
{
	struct seen seen;

	if (!next(L) || !next(L)) /* STREAM-START, then DOCUMENT-START or STREAM-END */
		return false;
	if (L->ev.type == YAML_STREAM_END_EVENT)
		return fail_at(
			L, 1, 1,
			"the file is empty (or only comments); expected a mapping with at least 'name'");
	if (!next(L))
		return false;
	L->top = L->ev.start_mark;
	if (is_null(L))
		return fail(L, L->top,
			    "the document is empty; expected a mapping with at least 'name'");
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return fail(
			L, L->top,
			"the top level is %s; expected a mapping of scenario keys (name, storage, protocol, ...)",
			found(L));
	if (!read_mapping(L, &top_table, L->s, "", &seen))
		return false;
	if (!next(L) || !next(L)) /* DOCUMENT-END, then STREAM-END */
		return false;
	if (L->ev.type != YAML_STREAM_END_EVENT)
		return fail(L, L->ev.start_mark,
			    "a second YAML document starts here; expected one scenario per file");
	return true;
}

/* Steps against storage.pages and workload.clients, known only once the document is read. */
static bool validate_script(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	yaml_mark_t m;
	bool has_script = given(L, &s->workload.script, &m);

	if (s->workload.kind == PN_WL_SCRIPT && s->workload.script_len == 0)
		return fail(
			L, mark_of(L, &s->workload.script, &s->workload.kind),
			"workload.kind is script but workload.script %s; expected a non-empty list of steps",
			has_script ? "is empty" : "is missing");
	if (s->workload.kind != PN_WL_SCRIPT && has_script)
		return fail(
			L, m,
			"workload.script is given but workload.kind is %s; expected kind: script",
			pn_workload_kind_name(s->workload.kind));
	if (s->workload.kind == PN_WL_IMPORT && !given(L, &s->workload.trace, &m))
		return fail(
			L, mark_of(L, &s->workload.kind, NULL),
			"workload.kind is import but workload.trace is missing; expected the trace file penumbra import --out wrote");
	if (s->workload.kind != PN_WL_IMPORT && given(L, &s->workload.trace, &m))
		return fail(
			L, m,
			"workload.trace is given but workload.kind is %s; expected kind: import",
			pn_workload_kind_name(s->workload.kind));
	for (uint32_t i = 0; i < s->workload.script_len; i++) {
		const struct pn_step *st = &s->workload.script[i];
		if (op_has_page(st->op) && st->page >= s->storage.pages)
			return fail_at(
				L, (size_t)st->line, (size_t)st->column,
				"workload.script[%u].page is %u, out of range; expected a page below storage.pages (%u)",
				i, st->page, s->storage.pages);
		if (st->client >= s->workload.clients)
			return fail_at(
				L, (size_t)st->line, (size_t)st->column,
				"workload.script[%u].client is %u, out of range; expected a client below workload.clients (%u)",
				i, st->client, s->workload.clients);
		if (!validate_hold(L, i))
			return false;
	}
	return true;
}

/* 1.5GiB, 12.0MiB, 800B: a memory size for messages, one decimal. */
static void format_memory(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double x = (double)v;
	size_t u = 0;

	while (u + 1 < PN_ARRAY_LEN(units) && x >= 1024) {
		x /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lluB", (unsigned long long)v);
	else
		snprintf(buf, len, "%.1f%s", x, units[u]);
}

/* "128.0GiB of page images on the device, 64.0KiB of buffers": the parts that are not 0. */
static void memory_parts(char *buf, size_t len, const struct pn_scenario_memory *m)
{
	const struct {
		uint64_t bytes;
		const char *what;
	} parts[] = {
		{m->device, "of page images on the device"},
		{m->oracle, "for the oracle's three images of each page"},
		{m->buffers, "of buffers"},
		{m->logs, "of per-transaction logs"},
	};
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < PN_ARRAY_LEN(parts) && at < len; i++) {
		char v[32];
		if (!parts[i].bytes)
			continue;
		format_memory(v, sizeof v, parts[i].bytes);
		at += (size_t)snprintf(buf + at, len - at, "%s%s %s", at ? ", " : "", v,
				       parts[i].what);
	}
}

/* The memory a scenario may need: PENUMBRA_MEMORY_LIMIT if set, else physical memory. */
static bool memory_limit(struct loader *L, uint64_t *limit, const char **source)
{
	const char *env = getenv("PENUMBRA_MEMORY_LIMIT");
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (env) {
		*source = "PENUMBRA_MEMORY_LIMIT";
		if (pn_parse_size(env, limit) && *limit > 0)
			return true;
		return fail_at(
			L, 1, 1,
			"the environment variable PENUMBRA_MEMORY_LIMIT is '%s'; expected a size like 16GiB",
			show(L, env));
	}
	*source = "this machine's physical memory; PENUMBRA_MEMORY_LIMIT sets another";
	*limit = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
	return true;
}

/*
 * The memory a simulated run needs (pn_scenario_memory) against the limit, blamed on the
 * key whose part is the largest, with the most that key may be.
 */
static bool validate_memory(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	struct pn_scenario_memory m;
	const char *source, *key, *unit;
	const void *field;
	char need[32], lim[32], parts[256];
	uint64_t limit, per, rest, given_v, most;

	pn_scenario_memory(s, &m);
	if (!memory_limit(L, &limit, &source))
		return false;
	if (m.total <= limit)
		return true;
	if (m.device + m.oracle >= PN_MAX(m.buffers, m.logs)) {
		bool rows = s->workload.kind == PN_WL_VACUUM;
		per = pn_scenario_page_bytes(s);
		rest = m.buffers + m.logs + 2 * per;
		field = rows ? (const void *)&s->workload.rows : &s->storage.pages;
		key = rows ? "workload.rows" : "storage.pages";
		given_v = rows ? s->workload.rows : s->storage.pages;
		most = limit > rest ? (limit - rest) / per : 0;
		if (rows)
			most *= s->storage.page_size > 24 ? (s->storage.page_size - 24) / 36 : 1;
		unit = rows ? "rows" : "pages";
	} else if (m.buffers >= m.logs) {
		field = &s->storage.buffers;
		key = "storage.buffers";
		given_v = s->storage.buffers;
		rest = m.total - m.buffers;
		most = limit > rest ? (limit - rest) / s->storage.page_size : 0;
		unit = "buffers";
	} else {
		bool script = s->workload.kind == PN_WL_SCRIPT;
		field = script ? (const void *)&s->workload.script : &s->workload.transactions;
		key = script ? "workload.script" : "workload.transactions";
		given_v = script ? s->workload.script_len : s->workload.transactions;
		rest = m.total - m.logs;
		most = limit > rest ? (limit - rest) / 20 : 0;
		unit = script ? "steps" : "transactions";
	}
	format_memory(need, sizeof need, m.total);
	format_memory(lim, sizeof lim, limit);
	memory_parts(parts, sizeof parts, &m);
	return fail(
		L, mark_of(L, field, NULL),
		"%s is %llu: a simulated run needs at least %s of memory (%s), more than the limit of %s (%s); expected at most %llu %s",
		key, (unsigned long long)given_v, need, parts, lim, source,
		(unsigned long long)most, unit);
}

/* btree_dedup's bounds (src/workload/wl_btree.c, its init): the leaves
 * (pn_scenario_btree_leaves) number at most a quarter of 2^32, and a transaction exists to
 * carry them.
 * A key may have any number of inserts: a leaf of one key's duplicates splits as nbtree's
 * single-value strategy does. */
static bool validate_btree(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	uint64_t n = s->workload.inserts;
	uint64_t leaves = pn_scenario_btree_leaves(s);

	if (s->workload.kind != PN_WL_BTREE_DEDUP)
		return true;
	if (leaves > UINT32_MAX / 4)
		return fail(
			L, mark_of(L, &s->workload.inserts, &s->workload.kind),
			"workload.inserts is %llu: the btree_dedup model's index would need %llu leaf pages; expected at most %u",
			(unsigned long long)n, (unsigned long long)leaves, UINT32_MAX / 4);
	if (s->workload.transactions == 0)
		return fail(
			L, mark_of(L, &s->workload.transactions, &s->workload.kind),
			"workload.transactions is 0: btree_dedup's inserts are made by transactions; expected at least 1");
	return true;
}

/* pgbench and tpcc lay their tables out on storage.pages: the engine's own sizing
 * (pn_scenario_layout_pages), refused at storage.pages, or the workload's kind if absent. */
static bool validate_pages(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	uint32_t need = pn_scenario_layout_pages(s);
	char what[64];

	if (s->storage.pages >= need)
		return true;
	if (s->workload.kind == PN_WL_TPCC)
		snprintf(what, sizeof what, "tpcc with %u warehouses", s->workload.warehouses);
	else
		snprintf(what, sizeof what, "pgbench at scale %u", s->workload.scale);
	return fail(
		L, mark_of(L, &s->storage.pages, &s->workload.kind),
		"storage.pages is %u; %s and %llu transactions needs %u pages (its tables, indexes and room to grow); expected storage.pages: %u or more",
		s->storage.pages, what, (unsigned long long)s->workload.transactions, need, need);
}

/* What the engine refuses at its start (src/engine/engine.c, src/wl_*.c), refused here at its key. */
static bool validate_engine(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	enum pn_workload_kind k = s->workload.kind;
	uint32_t buffers = (k == PN_WL_PGBENCH || k == PN_WL_TPCC) ? 2 * s->workload.clients + 2
								   : s->workload.clients + 2;
	uint64_t per = s->storage.page_size > 24 ? (s->storage.page_size - 24) / 36 : 1;

	if (s->storage.buffers < buffers)
		return fail(
			L, mark_of(L, &s->storage.buffers, &s->workload.clients),
			"storage.buffers (%u) is too few for %u clients%s; expected at least %u (%sworkload.clients + 2)",
			s->storage.buffers, s->workload.clients,
			buffers > s->workload.clients + 2 ? " of a pgbench or tpcc workload" : "",
			buffers, buffers > s->workload.clients + 2 ? "2 x " : "");
	if (k == PN_WL_TPCC && s->workload.transactions > 50000000)
		return fail(
			L, mark_of(L, &s->workload.transactions, &s->workload.kind),
			"workload.transactions is %llu; the tpcc model runs at most 50000000 transactions",
			(unsigned long long)s->workload.transactions);
	if (k == PN_WL_PGBENCH && s->workload.scale > UINT32_MAX / 100000)
		return fail(
			L, mark_of(L, &s->workload.scale, &s->workload.kind),
			"workload.scale is %u; the pgbench model has at most %u (100000 accounts each, counted in 32 bits)",
			s->workload.scale, UINT32_MAX / 100000);
	if (k == PN_WL_PGBENCH && s->workload.transactions > UINT32_MAX)
		return fail(
			L, mark_of(L, &s->workload.transactions, &s->workload.kind),
			"workload.transactions is %llu; the pgbench model runs at most %u transactions",
			(unsigned long long)s->workload.transactions, UINT32_MAX);
	if (k == PN_WL_VACUUM &&
	    (s->workload.rows == 0 || s->workload.rows / per >= UINT32_MAX / 2))
		return fail(
			L, mark_of(L, &s->workload.rows, &s->workload.kind),
			"workload.rows is %llu; the vacuum workload needs 1 to %llu rows at this page_size",
			(unsigned long long)s->workload.rows,
			(unsigned long long)((UINT32_MAX / 2 - 1) * per));
	return validate_btree(L) && validate_pages(L) && validate_memory(L);
}

/* The positions the refusal of a row --mode picks names (cli.c, protocols.h
 * pn_protocol_key_refusal: the keys a row decides itself), and replay's (a trace that does not fit its run: model/replay.c). */
static bool key_positions(struct loader *L)
{
	struct pn_scenario *s = L->s;
	const struct {
		const void *field;
		uint32_t *at;
	} keys[] = {
		{&s->protocol.generations, s->protocol.generations_at},
		{&s->protocol.layout, s->protocol.layout_at},
		{&s->replay.crash_point, s->replay.at[PN_REPLAY_CRASH_POINT]},
		{s->replay.state, s->replay.at[PN_REPLAY_STATE]},
		{&s->replay.recovery_crash_point, s->replay.at[PN_REPLAY_RECOVERY_POINT]},
		{s->replay.recovery_state, s->replay.at[PN_REPLAY_RECOVERY_STATE]},
		{s->replay.choices, s->replay.at[PN_REPLAY_CHOICES]},
	};
	for (size_t i = 0; i < PN_ARRAY_LEN(keys); i++) {
		yaml_mark_t m;
		if (!given(L, keys[i].field, &m))
			continue;
		struct pos p = position(L, m);
		keys[i].at[0] = (uint32_t)p.line;
		keys[i].at[1] = (uint32_t)p.col;
	}
	return true;
}

/* Relations between keys, checked once everything is read (any order of sections). */
/* schedules: a preemption bound alone asks for the bounded search; with another strategy
 * named it is an error. */
static bool validate_schedules(struct loader *L)
{
	struct pn_scenario *s = L->s;
	bool named = given(L, &s->schedules.strategy, NULL);
	s->schedules.named = named || s->schedules.preemption_bound;
	if (s->schedules.preemption_bound && !named)
		s->schedules.strategy = PN_STRATEGY_BOUNDED;
	if (s->schedules.preemption_bound && s->schedules.strategy != PN_STRATEGY_BOUNDED)
		return fail(
			L, mark_of(L, &s->schedules.preemption_bound, NULL),
			"schedules.preemption_bound is %u with strategy %s; expected strategy: bounded (or no strategy), or no preemption_bound",
			s->schedules.preemption_bound, pn_strategy_name(s->schedules.strategy));
	if (s->schedules.strategy == PN_STRATEGY_PCT && s->schedules.runs < 2)
		return fail(
			L, mark_of(L, &s->schedules.runs, &s->schedules.strategy),
			"schedules.runs is %u with strategy pct; expected 2 or more (the seeded run, then the pct runs)",
			s->schedules.runs);
	size_t n = strlen(s->replay.choices);
	if (n && s->replay.choices[n - 1] == ',')
		return fail(
			L, mark_of(L, &s->replay.choices, NULL),
			"replay.choices \"%s\" ends in a comma; expected EVENT:CANDIDATE pairs with a comma between two, none after the last",
			s->replay.choices);
	return true;
}

/* replay: (a counterexample trace, docs/checker.md section 9): the keys penumbra check writes,
 * each with a value it could have written; the crash inside recovery both of its keys or
 * neither; a scenario without crash: crashes nothing. */
static bool validate_replay(struct loader *L)
{
	struct pn_scenario *s = L->s;
	const struct {
		const void *field;
		const char *key, *want;
	} required[] = {
		{&s->replay.schedule, "schedule", "the schedule's number, from 0"},
		{&s->replay.crash_point, "crash_point", "the event the run crashed after, from 1"},
		{s->replay.state, "state", "the crash state, \"none\" or elements pN and tN:MASK"},
	};
	const struct {
		const char *value, *key, *want;
	} strings[] = {
		{s->replay.state, "state", "\"none\" or the crash state's elements pN and tN:MASK"},
		{s->replay.recovery_state, "recovery_state",
		 "\"none\" or the crash state's elements pN and tN:MASK"},
		{s->replay.choices, "choices",
		 "EVENT:CANDIDATE pairs (no choices key for the seeded order)"},
		{s->replay.scenario_hash, "scenario_hash",
		 "16 lowercase hex digits (no scenario_hash key for a trace without one)"},
	};
	yaml_mark_t at, m;
	if (!s->replay.present)
		return true;
	at = mark_of(L, &s->replay.present, NULL);
	for (size_t i = 0; i < PN_ARRAY_LEN(required); i++)
		if (!given(L, required[i].field, NULL))
			return fail(
				L, at,
				"replay has no %s; expected %s: <%s>, as penumbra check writes it (keys schedule, crash_point and state)",
				required[i].key, required[i].key, required[i].want);
	for (size_t i = 0; i < PN_ARRAY_LEN(strings); i++)
		if (given(L, strings[i].value, &m) && !strings[i].value[0])
			return fail(L, m, "replay.%s is empty; expected %s", strings[i].key,
				    strings[i].want);
	bool point = given(L, &s->replay.recovery_crash_point, &m);
	if (point != given(L, s->replay.recovery_state, point ? NULL : &m))
		return fail(
			L, m,
			"replay.%s is given without replay.%s; expected both (the event of the recovery crashed after and the state crashed in) or neither",
			point ? "recovery_crash_point" : "recovery_state",
			point ? "recovery_state" : "recovery_crash_point");
	if (given(L, s->replay.scenario_hash, &m) &&
	    (strlen(s->replay.scenario_hash) != 16 ||
	     strspn(s->replay.scenario_hash, "0123456789abcdef") != 16))
		return fail(
			L, m,
			"replay.scenario_hash is \"%s\"; expected 16 lowercase hex digits, as penumbra check writes it",
			show(L, s->replay.scenario_hash));
	if (s->crash.present)
		return true;
	if (point)
		return fail(
			L, mark_of(L, &s->replay.recovery_crash_point, NULL),
			"replay.recovery_crash_point names a crash state, but the scenario has no crash: section, so nothing is crashed; expected no recovery_crash_point (a trace of it can only replay a runtime invariant)");
	if (strcmp(s->replay.state, "none") != 0)
		return fail(
			L, mark_of(L, s->replay.state, NULL),
			"replay.state names a crash state, but the scenario has no crash: section, so nothing is crashed; expected state: \"none\" (a trace of it can only replay a runtime invariant)");
	return true;
}

/* The field of protocol key bit k (enum pn_protocol_key). */
static const void *key_field(const struct pn_scenario *s, unsigned k)
{
	switch (k) {
	case PN_KEY_GENERATIONS: return &s->protocol.generations;
	case PN_KEY_LAYOUT: return &s->protocol.layout;
	case PN_KEY_POLICY: return &s->protocol.policy;
	case PN_KEY_IMAGE_THRESHOLD: return &s->protocol.image_threshold;
	case PN_KEY_SPARE_SLOTS: return &s->protocol.spare_slots;
	}
	PN_ASSERT(!"a protocol key without a field");
	return NULL;
}

/* The row protocol.mode and protocol.policy spell (src/protocol/list.h), made the
 * scenario's; then what its declaration refuses (protocols.h pn_protocol_key_refusal,
 * pn_protocol_refusal): every protocol key it does not read (those it decides itself say
 * why), values past its bounds, script steps it cannot run, each at its position. */
static bool validate_protocol(struct loader *L)
{
	struct pn_scenario *s = L->s;
	enum pn_protocol_id row;
	char rows[256];
	if (!pn_protocol_spelled(L->mode[0] ? L->mode : pn_protocol_names[s->protocol.row],
				 L->policy[0] ? L->policy : NULL, &row)) {
		pn_protocol_list_names(rows, sizeof rows, PN_NAMES_ROWS);
		return fail(L, mark_of(L, &s->protocol.policy, NULL),
			    "protocol.mode %s has no policy %s; expected one of the protocols %s",
			    L->mode, L->policy, rows);
	}
	pn_protocol_set(s, row);
	unsigned given_keys = 0;
	for (unsigned k = 0; k < PN_KEY_COUNT; k++)
		given_keys |= given(L, key_field(s, 1u << k), NULL) ? 1u << k : 0;
	unsigned refused = pn_protocol_key_refusal(s, given_keys, true, rows, sizeof rows);
	if (refused)
		return fail(L, mark_of(L, key_field(s, refused), &s->protocol.policy), "%s", rows);
	const struct pn_step *st = pn_protocol_refusal(s, rows, sizeof rows);
	return !st || fail_at(L, (size_t)st->line, (size_t)st->column, "%s", rows);
}

static bool validate(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	char a[32], b[32];

	if (!given(L, s->name, NULL))
		return fail(
			L, L->top,
			"missing required key 'name'; expected name: <scenario name> at the top level");
	if (s->storage.sector_size > s->storage.page_size)
		return fail(
			L, mark_of(L, &s->storage.sector_size, &s->storage.page_size),
			"storage.sector_size (%u) is larger than storage.page_size (%u); expected a power of two that divides page_size",
			s->storage.sector_size, s->storage.page_size);
	if (given(L, &s->crash.atomic_unit, NULL) &&
	    (s->crash.atomic_unit < s->storage.sector_size ||
	     s->crash.atomic_unit > s->storage.page_size))
		return fail(
			L, mark_of(L, &s->crash.atomic_unit, &s->storage.page_size),
			"crash.atomic_unit (%u) is not between storage.sector_size (%u) and storage.page_size (%u); expected a power of two from the sector to the page",
			s->crash.atomic_unit, s->storage.sector_size, s->storage.page_size);
	if (s->workload.pages_per_transaction > s->storage.pages)
		return fail(
			L, mark_of(L, &s->workload.pages_per_transaction, &s->storage.pages),
			"workload.pages_per_transaction (%u) is more than storage.pages (%u); expected at most storage.pages",
			s->workload.pages_per_transaction, s->storage.pages);
	if (s->checkpoint.max_wal_size != 0 &&
	    s->checkpoint.max_wal_size / 2 < s->storage.wal_segment_size) {
		format_size(a, sizeof a, s->checkpoint.max_wal_size);
		format_size(b, sizeof b, 2ull * s->storage.wal_segment_size);
		return fail(
			L, mark_of(L, &s->checkpoint.max_wal_size, &s->storage.wal_segment_size),
			"checkpoint.max_wal_size (%s) is less than two WAL segments; expected 0 (off) or at least %s",
			a, b);
	}
	if (s->replay.present && s->replay.schedule >= s->schedules.runs)
		return fail(
			L, mark_of(L, &s->replay.schedule, &s->schedules.runs),
			"replay.schedule (%u) is not below schedules.runs (%u); expected a schedule number from 0 to %u",
			s->replay.schedule, s->schedules.runs, s->schedules.runs - 1);
	return validate_protocol(L) && validate_schedules(L) && validate_replay(L) &&
	       validate_script(L) && validate_engine(L) && key_positions(L);
}

/* One walk over the input with a fresh parser. */
static bool run_pass(struct loader *L, bool (*pass)(struct loader *L))
{
	bool ok;

	if (!yaml_parser_initialize(&L->parser))
		return fail_at(L, 1, 1, "out of memory");
	yaml_parser_set_encoding(&L->parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&L->parser, (const unsigned char *)L->text, L->len);
	ok = pass(L);
	if (L->has_ev)
		yaml_event_delete(&L->ev);
	L->has_ev = false;
	yaml_parser_delete(&L->parser);
	return ok;
}

bool pn_scenario_load_string(const char *name, const char *text, size_t len,
			     struct pn_scenario *out, char *err, size_t err_len)
{
	struct loader L;
	bool ok;

	pn_scenario_defaults(out);
	if (err && err_len)
		err[0] = '\0';
	name = name ? name : "<string>";
	text = text ? text : "";
	snprintf(out->path, sizeof out->path, "%s", name);
	if (len > MAX_FILE_BYTES)
		return message(err, err_len, name, 1, 1,
			       "the file is %zu bytes; expected a scenario of at most 16 MiB", len);
	memset(&L, 0, sizeof L);
	L.name = name;
	L.text = text;
	L.len = len;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		L.text += 3; /* a UTF-8 byte-order mark: libyaml skips it only when it guesses */
		L.len -= 3;
	}
	L.s = out;
	L.err = err;
	L.err_len = err_len;
	ok = check_encoding(&L) && run_pass(&L, check_syntax) && run_pass(&L, load_document) &&
	     validate(&L);
	if (!ok)
		pn_scenario_free(out);
	return ok;
}

/*
 * Reads a whole regular file of at most MAX_FILE_BYTES, opened by pn_file_open_in (files.h
 * F1: anything but a regular file is refused before a byte is read; a FIFO, a terminal or
 * a device could block or never end). Returns 0, an errno, or -1 when too large; `why`
 * says what is wrong with a file that could not be opened (errno EINVAL).
 */
static int read_file(const char *path, char **out, size_t *out_len, char *why, size_t why_len)
{
	struct stat st;
	size_t cap, len = 0;
	char *buf = NULL;
	int e = 0, fd = pn_file_open_in(path, "a regular scenario file", why, why_len);

	if (fd < 0)
		return EINVAL;
	if (fstat(fd, &st) != 0) {
		e = errno;
		goto out;
	}
	if (st.st_size > (off_t)MAX_FILE_BYTES) {
		e = -1;
		goto out;
	}
	/* one byte more than the size: a file that grows past MAX_FILE_BYTES is seen to */
	cap = PN_MIN((size_t)st.st_size + 1, (size_t)MAX_FILE_BYTES + 1);
	for (;;) {
		ssize_t n;
		if (!buf || len == cap) {
			char *p;
			if (len > MAX_FILE_BYTES) {
				e = -1;
				goto out;
			}
			cap = buf ? PN_MIN(cap * 2, (size_t)MAX_FILE_BYTES + 1) : cap;
			p = realloc(buf, cap);
			if (!p) {
				e = ENOMEM;
				goto out;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > MAX_FILE_BYTES)
		e = -1;
out:
	close(fd);
	if (e) {
		free(buf);
		return e;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

bool pn_scenario_load(const char *path, struct pn_scenario *out, char *err, size_t err_len)
{
	char *text = NULL, why[PN_ERROR_LEN / 2] = "";
	size_t len = 0;
	int e;
	bool ok;

	pn_scenario_defaults(out);
	if (err && err_len)
		err[0] = '\0';
	if (!path)
		return message(err, err_len, "<none>", 1, 1, "cannot read: no file name given");
	e = read_file(path, &text, &len, why, sizeof why);
	if (why[0])
		return message(err, err_len, path, 1, 1, "cannot read: %s", why);
	if (e == -1)
		return message(
			err, err_len, path, 1, 1,
			"the file is larger than 16 MiB; expected a scenario of at most 16 MiB");
	if (e)
		return message(err, err_len, path, 1, 1, "cannot read: %s", strerror(e));
	ok = pn_scenario_load_string(path, text, len, out, err, err_len);
	free(text);
	return ok;
}

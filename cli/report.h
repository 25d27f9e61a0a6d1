/*
 * report.h: the sections of `penumbra report` (cli layer), one file each, all writing into
 * the one HTML page that cli/cmd_report.c opens and closes:
 *   report_json.c   a JSON input's bytes: its bounds (RP1-RP3 below), the kind it is, and the
 *                   readers through which the sections take every value from it;
 *   report_costs.c  a run or compare JSON: costs, WAL over time, record types, the FPI
 *                   sawtooth, side-by-side costs, published figures, Umbra's generations;
 *   report_check.c  a check JSON: verdicts, crash points and states, coverage markers;
 *   report_trace.c  a counterexample trace, re-run: swimlanes, crash state, page bytes.
 * `src` is the input's index (0-based, in command-line order): each section's element carries
 * it as data-src, so a number's data-j path (report_svg.h) is read in that input.
 * Each returns 0, or 2 with FILE: message on stderr.
 *
 * What an input may hold (docs/cli.md, `penumbra report`, "Bounds"):
 *   RP1 A file of at most PN_REPORT_INPUT_MAX bytes; a UTF-8 byte-order mark at its start is
 *      skipped; an empty or blank file is refused as such, not handed to the YAML loader.
 *   RP2 Every value a section reads is read through pn_rep_*() below, which checks its type and
 *      range where it is read: counts, sizes, times and event numbers are integers from 0 to
 *      2^63 - 1, other figures numbers from 0 below 2^63, a slot below `series.slots`, strings
 *      at most PN_REP_STRING_MAX bytes, arrays at most their bound (16 results, 16 sampled
 *      pages, PN_REP_ROWS_MAX scenarios or markers), a series column `samples` long and never
 *      falling. The first value out of range is refused with "FILE: KEY is V; expected ...",
 *      exit 2; nothing is clamped.
 *   RP3 What is drawn is bounded whatever the input: a line through at most PN_REP_POINTS_MAX
 *      of its samples and at most PN_REP_MARKS_MAX checkpoints per mode (evenly spaced, first
 *      and last kept; the page says so where it happens).
 */
#ifndef PN_REPORT_H
#define PN_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#define PN_REPORT_INPUT_MAX (16u << 20) /* RP1 */
#define PN_REP_STRING_MAX 1024          /* RP2 */
#define PN_REP_ROWS_MAX 4096
#define PN_REP_POINTS_MAX 256 /* RP3: a run's own series never has more (sim/series.h SE1) */
#define PN_REP_MARKS_MAX 128  /* RP3: nor checkpoints (sim/series.h SE2) */

/* An input being read: its name, its index, where its refusal goes, and whether it was made
 * (only the first value out of range is named; the readers then return values in range). */
struct pn_rep_in {
	const char *path;
	int src;
	FILE *err;
	bool refused;
	/* The check JSONs given to the same report ("scenarios"; NULL where an input is not
	 * one): a compare's "crash-safe?" row looks up its scenario and modes in them. */
	const json_t *const *checks;
	int nchecks;
	/* The report's inputs, in order: a check's violation links to the section of its trace
	 * when that trace (the same file) is one of them. */
	char *const *inputs;
	int ninputs;
};

/* An input's bytes (at most PN_REPORT_INPUT_MAX, else refused): 0 drawn, 2 refused, or
 * PN_REP_NOT_JSON when its first character (after a byte-order mark and white space) opens
 * no JSON document: a trace, for the scenario loader. */
#define PN_REP_NOT_JSON (-1)
int pn_report_json(FILE *page, struct pn_rep_in *in, const char *text, size_t len);

int pn_report_costs(FILE *f, struct pn_rep_in *in, const json_t *doc);
int pn_report_check(FILE *f, struct pn_rep_in *in, const json_t *doc);
int pn_report_trace(FILE *f, const char *path, int src);
/* report_pgcrash.c: a trace of `penumbra pgcrash` (its first line "pgcrash: 1"). */
bool pn_report_is_pgcrash(const char *path);
int pn_report_pgcrash(FILE *f, const char *path, int src);

/* ---- the readers (RP2); KEY is a printf format of the value's path, for the message ---- */
/* A number: NULL when absent or null, else v when an integer from lo to hi (whole) or any
 * number from lo up to hi (not whole); refused otherwise (NULL). */
const json_t *pn_rep_number(struct pn_rep_in *in, const json_t *v, bool whole, double lo, double hi,
			    const char *key, ...) __attribute__((format(printf, 6, 7)));
/* pn_rep_number as a count (integer from 0 to 2^63 - 1) or a figure (number from 0 below
 * 2^63), given as a double (0 when absent, null or refused). */
double pn_rep_count(struct pn_rep_in *in, const json_t *v, const char *key, ...)
	__attribute__((format(printf, 3, 4)));
double pn_rep_figure(struct pn_rep_in *in, const json_t *v, const char *key, ...)
	__attribute__((format(printf, 3, 4)));
/* A string of at most PN_REP_STRING_MAX bytes: NULL when absent or null (refused when
 * `required`), refused when not a string. */
const char *pn_rep_string(struct pn_rep_in *in, const json_t *v, bool required, const char *key,
			  ...) __attribute__((format(printf, 4, 5)));
/* An array of at most max elements, or an object: NULL when absent or null (or refused). */
const json_t *pn_rep_array(struct pn_rep_in *in, const json_t *v, size_t max, const char *key, ...)
	__attribute__((format(printf, 4, 5)));
const json_t *pn_rep_object(struct pn_rep_in *in, const json_t *v, const char *key, ...)
	__attribute__((format(printf, 3, 4)));
/* true, false, or absent or null (false); refused otherwise. */
bool pn_rep_bool(struct pn_rep_in *in, const json_t *v, const char *key, ...)
	__attribute__((format(printf, 3, 4)));
/* Refuses the input with "FILE: KEY ..." (the first refusal only). */
void pn_rep_refuse(struct pn_rep_in *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* RP3: how many of n are drawn (at most max), and which index the k-th drawn is (evenly
 * spaced, the first and the last kept). */
size_t pn_rep_drawn(size_t n, size_t max);
size_t pn_rep_pick(size_t n, size_t drawn, size_t k);

#endif

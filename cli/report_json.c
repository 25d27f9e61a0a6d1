/*
 * report_json.c: a JSON input of `penumbra report` (cli layer): from its bytes to a section,
 * and the readers through which the sections take every value from it (report.h RP1-RP3).
 * A refusal is one line on in->err: "FILE:LINE:COL: ..." where there is a position (the
 * bytes, jansson's parse), "FILE: KEY is V; expected ..." for a value (jansson keeps no
 * position of a value, its path names it).
 */
#include "report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pn.h"

#define TWO_63 9223372036854775808.0

/* A refusal is one line: a key or value from the input (a JSON key may hold any character)
 * has each control byte written as \xNN. */
void pn_rep_refuse(struct pn_rep_in *in, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (in->refused)
		return;
	in->refused = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(in->err, "%s: ", in->path);
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			fprintf(in->err, "\\x%02X", *c);
		else
			fputc(*c, in->err);
	fputc('\n', in->err);
}

/* "KEY is WHAT; expected EXPECT" for v, refused. */
static void refuse_value(struct pn_rep_in *in, const json_t *v, const char *expect, const char *key,
			 va_list ap)
{
	char path[256], what[64];
	if (in->refused)
		return;
	vsnprintf(path, sizeof(path), key, ap);
	if (json_is_integer(v))
		snprintf(what, sizeof(what), "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v)) { /* the fewest digits that read back the same, "2.0" not "2" */
		for (int sig = 15; sig <= 17; sig++)
			if (snprintf(what, sizeof(what), "%.*g", sig, json_real_value(v)) > 0 &&
			    strtod(what, NULL) == json_real_value(v))
				break;
		if (!strpbrk(what, ".e"))
			strcat(what, ".0");
	} else if (json_is_string(v))
		snprintf(what, sizeof(what), "a string of %zu bytes", json_string_length(v));
	else
		snprintf(what, sizeof(what), "%s",
			 json_is_object(v)  ? "an object"
			 : json_is_array(v) ? "an array"
			 : json_is_true(v)  ? "true"
					    : "false");
	pn_rep_refuse(in, "%s is %s; expected %s", path, what, expect);
}

static bool absent(const json_t *v) { return !v || json_is_null(v); }

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static const json_t *number(struct pn_rep_in *in, const json_t *v, bool whole, double lo, double hi,
			    const char *key, va_list ap)
{
	char expect[96];
	if (absent(v) || in->refused)
		return NULL;
	if (whole && json_is_integer(v) && (double)json_integer_value(v) >= lo &&
	    (double)json_integer_value(v) <= hi)
		return v;
	if (!whole && json_is_number(v) && json_number_value(v) >= lo && json_number_value(v) < hi)
		return v;
	if (whole && hi >= TWO_63)
		snprintf(expect, sizeof(expect), "null or an integer from %.0f to %lld", lo,
			 (long long)INT64_MAX);
	else if (whole)
		snprintf(expect, sizeof(expect), "null or an integer from %.0f to %.0f", lo, hi);
	else
		snprintf(expect, sizeof(expect), "null or a number from %g below %.0f", lo, hi);
	refuse_value(in, v, expect, key, ap);
	return NULL;
}

const json_t *pn_rep_number(struct pn_rep_in *in, const json_t *v, bool whole, double lo, double hi,
			    const char *key, ...)
{
	va_list ap;
	va_start(ap, key);
	const json_t *r = number(in, v, whole, lo, hi, key, ap);
	va_end(ap);
	return r;
}

double pn_rep_count(struct pn_rep_in *in, const json_t *v, const char *key, ...)
{
	va_list ap;
	va_start(ap, key);
	const json_t *r = number(in, v, true, 0, TWO_63, key, ap);
	va_end(ap);
	return r ? (double)json_integer_value(r) : 0;
}

double pn_rep_figure(struct pn_rep_in *in, const json_t *v, const char *key, ...)
{
	va_list ap;
	va_start(ap, key);
	const json_t *r = number(in, v, false, 0, TWO_63, key, ap);
	va_end(ap);
	return r ? json_number_value(r) : 0;
}

const char *pn_rep_string(struct pn_rep_in *in, const json_t *v, bool required, const char *key,
			  ...)
{
	va_list ap;
	char expect[64];
	snprintf(expect, sizeof(expect), "%sa string of at most %d bytes",
		 required ? "" : "null or ", PN_REP_STRING_MAX);
	if (in->refused || (absent(v) && !required))
		return NULL;
	if (json_is_string(v) && json_string_length(v) <= PN_REP_STRING_MAX &&
	    strlen(json_string_value(v)) == json_string_length(v))
		return json_string_value(v);
	va_start(ap, key);
	if (absent(v)) {
		char path[256];
		vsnprintf(path, sizeof(path), key, ap);
		pn_rep_refuse(in, "%s is missing; expected %s", path, expect);
	} else {
		refuse_value(in, v, expect, key, ap);
	}
	va_end(ap);
	return NULL;
}

const json_t *pn_rep_array(struct pn_rep_in *in, const json_t *v, size_t max, const char *key, ...)
{
	va_list ap;
	char expect[64];
	if (in->refused || absent(v) || (json_is_array(v) && json_array_size(v) <= max))
		return in->refused || absent(v) ? NULL : v;
	va_start(ap, key);
	if (json_is_array(v)) {
		char path[256];
		vsnprintf(path, sizeof(path), key, ap);
		pn_rep_refuse(in, "%s has %zu elements; expected at most %zu", path,
			      json_array_size(v), max);
	} else {
		snprintf(expect, sizeof(expect), "null or an array of at most %zu elements", max);
		refuse_value(in, v, expect, key, ap);
	}
	va_end(ap);
	return NULL;
}

const json_t *pn_rep_object(struct pn_rep_in *in, const json_t *v, const char *key, ...)
{
	va_list ap;
	if (in->refused || absent(v) || json_is_object(v))
		return in->refused || absent(v) ? NULL : v;
	va_start(ap, key);
	refuse_value(in, v, "null or an object", key, ap);
	va_end(ap);
	return NULL;
}

bool pn_rep_bool(struct pn_rep_in *in, const json_t *v, const char *key, ...)
{
	va_list ap;
	if (in->refused || absent(v) || json_is_boolean(v))
		return !in->refused && json_is_true(v);
	va_start(ap, key);
	refuse_value(in, v, "null, true or false", key, ap);
	va_end(ap);
	return false;
}

size_t pn_rep_drawn(size_t n, size_t max)
{
	PN_ASSERT(max >= 2);
	return n < max ? n : max;
}

size_t pn_rep_pick(size_t n, size_t drawn, size_t k)
{
	PN_ASSERT(k < drawn && drawn <= n);
	return drawn == n ? k : k * (n - 1) / (drawn - 1);
}

/* RP1: the byte-order mark skipped, an empty or blank file refused; *at is the first byte of
 * the document. Returns false when refused. */
static bool not_blank(struct pn_rep_in *in, const char *text, size_t len, size_t *at)
{
	static const char expect[] = "expected a run, compare or check JSON (an object with "
				     "\"results\" or \"scenarios\") or a counterexample trace";
	size_t i = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	*at = i;
	if (len > PN_REPORT_INPUT_MAX) {
		fprintf(in->err, "%s:1:1: the file is larger than %u MiB; %s of at most %u MiB\n",
			in->path, PN_REPORT_INPUT_MAX >> 20, expect, PN_REPORT_INPUT_MAX >> 20);
		return false;
	}
	while (i < len && blank(text[i]))
		i++;
	if (i < len)
		return true;
	fprintf(in->err, "%s:1:1: the file is %s; %s\n", in->path,
		len == 0               ? "empty"
		: *at == 3 && len == 3 ? "empty but for a byte-order mark"
				       : "blank (only white space)",
		expect);
	return false;
}

/* jansson's refusal, on one line: the input it quotes ("near '...'") may hold a line break
 * or other control characters, written as \n or \xNN. */
static void parse_error(struct pn_rep_in *in, const json_error_t *err)
{
	fprintf(in->err, "%s:%d:%d: ", in->path, err->line < 1 ? 1 : err->line,
		err->column < 1 ? 1 : err->column);
	for (const unsigned char *c = (const unsigned char *)err->text; *c; c++)
		if (*c == '\n')
			fputs("\\n", in->err);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(in->err, "\\x%02x", *c);
		else
			fputc(*c, in->err);
	fputc('\n', in->err);
}

int pn_report_json(FILE *page, struct pn_rep_in *in, const char *text, size_t len)
{
	size_t at, first;
	if (!not_blank(in, text, len, &at))
		return 2;
	for (first = at; blank(text[first]);) /* not_blank() saw a byte that is not */
		first++;
	if (text[first] != '{' && text[first] != '[')
		return PN_REP_NOT_JSON;
	json_error_t err;
	json_t *doc = json_loadb(text + at, len - at, JSON_REJECT_DUPLICATES, &err);
	int rc = 2;
	if (!doc) /* jansson says column 0 for a line's first byte, -1 where it has no position */
		parse_error(in, &err);
	else if (json_is_array(json_object_get(doc, "results")))
		rc = pn_report_costs(page, in, doc);
	else if (json_is_array(json_object_get(doc, "scenarios")))
		rc = pn_report_check(page, in, doc);
	else
		fprintf(in->err,
			"%s:1:1: a JSON document with neither \"results\" (run, compare) nor "
			"\"scenarios\" (check)\n",
			in->path);
	json_decref(doc);
	return rc;
}

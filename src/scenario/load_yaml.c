/*
 * load_yaml.c: the scenario loader's view of libyaml (scenario layer; part of the loader,
 * load.c). Messages and where they point, the event stream and its first pass, the keys
 * remembered for the cross-checks.
 *
 * Rules it keeps:
 *   LD1 The first problem found is the one reported, as one line "FILE:LINE:COL: what was
 *       found; what was expected", LINE and COL 1-based at the offending node, counted as an
 *       editor does from the node's character index (load_position()), not from libyaml's
 *       line, which also breaks at U+0085, U+2028 and U+2029. err never ends in a newline.
 *   LD3 Two passes over libyaml's events, one event held at a time. The first
 *       (load_check_syntax) only checks that the whole input is YAML (syntax errors come
 *       before errors of meaning) and bounds its nesting to MAX_DEPTH, which keeps libyaml's
 *       own stacks small. The second (load_document, load_schema.c) follows the schema, not
 *       the input: mappings nest at most three deep (top, section, script step or
 *       crash.points), and it stops at the first node whose shape the schema does not
 *       expect. Aliases are refused (load_next), so nothing expands.
 */
#include "load_yaml.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- messages ---- */

/* Writes "NAME:LINE:COL: what" into err, on one line. Returns false, for `return load_message()`. */
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

__attribute__((format(printf, 6, 7))) bool load_message(char *err, size_t err_len, const char *name,
							size_t line, size_t col, const char *fmt,
							...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(err, err_len, name, line, col, fmt, ap);
	va_end(ap);
	return false;
}

/* Records the first failure only: later ones are consequences. */
__attribute__((format(printf, 4, 5))) bool load_fail_at(struct loader *L, size_t line, size_t col,
							const char *fmt, ...)
{
	va_list ap;

	PN_ASSERT(line >= 1 && col >= 1 && fmt != NULL);
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
struct pos load_position(struct loader *L, yaml_mark_t m)
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
	PN_ASSERT(L->at.line >= 1 && L->at.col >= 1 && L->at.off <= L->len);
	return (struct pos){L->at.line, L->at.col};
}

bool load_fail_pos(struct loader *L, struct pos p, const char *fmt, ...)
{
	va_list ap;

	PN_ASSERT(p.line >= 1 && p.col >= 1 && fmt != NULL);
	if (L->failed)
		return false;
	L->failed = true;
	va_start(ap, fmt);
	vmessage(L->err, L->err_len, L->name, p.line, p.col, fmt, ap);
	va_end(ap);
	return false;
}

/* Input text made safe to echo: at most SHOW_MAX bytes, control characters as '?'. */
const char *load_show(struct loader *L, const char *s)
{
	char *out = L->show[L->show_next++ % PN_ARRAY_LEN(L->show)];
	size_t n = 0;

	PN_ASSERT(s != NULL);

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
	PN_ASSERT(n + sizeof "..." <= sizeof L->show[0]);
	memcpy(out + n, "...", 4);
	return out;
}

bool load_is_null(const struct loader *L)
{
	const char *v = (const char *)L->ev.data.scalar.value;

	PN_ASSERT(L->has_ev);
	if (L->ev.type != YAML_SCALAR_EVENT || L->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	       strcmp(v, "NULL") == 0;
}

/* What the current event is, for "X is <found>; expected Y". */
const char *load_found(struct loader *L)
{
	PN_ASSERT(L->has_ev);
	switch (L->ev.type) {
	case YAML_MAPPING_START_EVENT: return "a mapping";
	case YAML_SEQUENCE_START_EVENT: return "a list";
	case YAML_SCALAR_EVENT:
		if (load_is_null(L))
			return "empty";
		snprintf(L->found, sizeof L->found, "'%s'",
			 load_show(L, (const char *)L->ev.data.scalar.value));
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
void load_suggest(char *buf, size_t len, const char *s, const char *const *names, size_t n)
{
	size_t best = SIZE_MAX, at = 0;

	PN_ASSERT(buf != NULL && len > 0 && s != NULL);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t d = distance(s, names[i]);
		if (d < best && d < strlen(names[i])) {
			best = d;
			at = i;
		}
	}
	if (best <= 2) {
		PN_ASSERT(at < n);
		snprintf(buf, len, " (did you mean '%s'?)", names[at]);
	}
}

void load_join_names(char *buf, size_t len, const char *const *names, size_t n)
{
	size_t used = 0;

	PN_ASSERT(buf != NULL && len > 0);
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

size_t load_count_names(const char *const *names)
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
bool load_check_encoding(struct loader *L)
{
	const unsigned char *t = (const unsigned char *)L->text;
	size_t line, col;

	/* UTF-16 or UTF-32, by its byte-order mark or by a NUL beside the first character */
	if (L->len >= 2 &&
	    ((t[0] == 0xFF && t[1] == 0xFE) || (t[0] == 0xFE && t[1] == 0xFF) ||
	     (t[0] == 0 && t[1] != 0) || (t[0] != 0 && t[1] == 0) || (t[0] == 0 && t[1] == 0)))
		return load_fail_at(
			L, 1, 1,
			"the file looks like UTF-16 or UTF-32 (bytes 0x%02X 0x%02X); expected UTF-8 YAML text",
			t[0], t[1]);

	for (size_t i = 0; i + 3 <= L->len; i++) {
		if (memcmp(L->text + i, "\xEF\xBB\xBF", 3) != 0)
			continue;
		byte_position(L, i, &line, &col);
		return load_fail_at(
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

	load_position(L, m);
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
	size_t lines[2] = {load_position(L, context).line, load_position(L, m).line};
	static const char *const breaks[][2] = {
		{"\xC2\x85", "U+0085 (NEL)"},
		{"\xE2\x80\xA8", "U+2028 (line separator)"},
		{"\xE2\x80\xA9", "U+2029 (paragraph separator)"},
	};
	size_t end, line, col;

	load_position(L, m);
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
		return load_fail_at(L, 1, 1, "out of memory while parsing");
	if (p->error == YAML_READER_ERROR) {
		byte_position(L, p->problem_offset, &line, &col);
		if (p->problem_offset < L->len)
			return load_fail_at(L, line, col,
					    "%s (byte 0x%02X); expected UTF-8 YAML text", problem,
					    (unsigned char)L->text[p->problem_offset]);
		return load_fail_at(L, line, col, "%s; expected UTF-8 YAML text", problem);
	}
	if (tab_in_indent(L, p->problem_mark, &col))
		return load_fail_at(
			L, load_position(L, p->problem_mark).line, col,
			"tab character in indentation; expected spaces (YAML forbids tabs there)");
	if (strstr(problem, "expected key") || strstr(problem, "mapping values are not allowed"))
		hint = "; check the indentation";
	if (odd_break(L, p->problem_mark, p->context ? p->context_mark : p->problem_mark, hint_buf,
		      sizeof hint_buf))
		hint = hint_buf;
	if (p->context)
		return load_fail(L, p->problem_mark, "YAML syntax error: %s (%s at line %zu)%s",
				 problem, p->context, load_position(L, p->context_mark).line, hint);
	return load_fail(L, p->problem_mark, "YAML syntax error: %s%s", problem, hint);
}

/* Moves to the next event. */
static bool raw_next(struct loader *L)
{
	if (L->has_ev) {
		yaml_event_delete(&L->ev);
		L->has_ev = false;
	}
	PN_ASSERT(!L->has_ev && !L->failed);
	if (!yaml_parser_parse(&L->parser, &L->ev))
		return syntax_error(L);
	L->has_ev = true;
	return true;
}

/* Moves to the next event; refuses aliases. */
bool load_next(struct loader *L)
{
	if (!raw_next(L))
		return false;
	if (L->ev.type == YAML_ALIAS_EVENT)
		return load_fail(L, L->ev.start_mark,
				 "alias '*%s' is not supported; expected the value written out",
				 load_show(L, (const char *)L->ev.data.alias.anchor));
	return true;
}

/*
 * The first pass: is the whole input well-formed YAML? Syntax errors are reported before
 * any error of meaning. Nesting is bounded here, so libyaml's stacks stay small whatever
 * the input (a scenario nests four levels at most).
 */
bool load_check_syntax(struct loader *L)
{
	size_t depth = 0;

	do {
		if (!raw_next(L))
			return false;
		if (L->ev.type == YAML_MAPPING_START_EVENT ||
		    L->ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		if (L->ev.type == YAML_MAPPING_END_EVENT || L->ev.type == YAML_SEQUENCE_END_EVENT) {
			PN_ASSERT(depth > 0); /* libyaml closes only what it opened */
			depth--;
		}
		if (depth > MAX_DEPTH)
			return load_fail(
				L, L->ev.start_mark,
				"nesting deeper than %d levels; expected a scenario (4 levels at most)",
				MAX_DEPTH);
	} while (L->ev.type != YAML_STREAM_END_EVENT);
	return true;
}

/* The current event's text: fails unless it is a scalar with a value and no NUL inside. */
bool load_scalar(struct loader *L, const char *path, const char *want, const char **text)
{
	const char *v = (const char *)L->ev.data.scalar.value;

	if (L->ev.type != YAML_SCALAR_EVENT || load_is_null(L))
		return load_fail(L, L->ev.start_mark, "%s is %s; expected %s", path, load_found(L),
				 want);
	if (strlen(v) != L->ev.data.scalar.length)
		return load_fail(L, L->ev.start_mark, "%s contains a NUL character; expected %s",
				 path, want);
	PN_ASSERT(v != NULL);
	*text = v;
	return true;
}

bool load_plain(const struct loader *L)
{
	return L->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

void load_remember(struct loader *L, const void *ptr, yaml_mark_t mark)
{
	PN_ASSERT(L->given_len <= MAX_GIVEN && ptr != NULL);
	if (L->given_len < MAX_GIVEN) {
		L->given[L->given_len].ptr = ptr;
		L->given[L->given_len].mark = mark;
		L->given_len++;
	}
}

bool load_given(const struct loader *L, const void *ptr, yaml_mark_t *mark)
{
	PN_ASSERT(L->given_len <= MAX_GIVEN);
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
yaml_mark_t load_mark_of(const struct loader *L, const void *a, const void *b)
{
	yaml_mark_t m = L->top;

	if (!load_given(L, a, &m))
		load_given(L, b, &m);
	return m;
}

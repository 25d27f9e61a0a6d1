/*
 * load_walk.c: the walk of one mapping against its table of fields, and the values of its
 * keys (scenario layer; part of the loader, load.c): numbers, sizes, durations, fractions,
 * booleans, names from a list, strings (the scalar parsers are parse.c). A field that is
 * a section is walked in turn; a field whose value is not one scalar is read by its own
 * function (load_workload.c, load_sections.c), reached through the table.
 *
 * Rules it keeps:
 *   LD2 Unknown keys and duplicate keys are errors in every mapping; an unknown key or name
 *       within Levenshtein distance 2 of a known one gets "(did you mean 'x'?)".
 */
#include "load_walk.h"
#include "load_yaml.h"
#include "parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- scalars ---- */

void load_format_size(char *buf, size_t len, uint64_t v)
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

	load_format_size(lo, sizeof lo, f->min);
	load_format_size(hi, sizeof hi, f->max);
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
		load_join_names(buf + 7, len - 7, f->names, load_count_names(f->names));
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
	return load_fail(L, L->ev.start_mark, "%s %s ('%s'); expected %s", path, what,
			 load_show(L, text), want);
}

bool load_read_number(struct loader *L, const struct field *f, void *dst, const char *path)
{
	char want[WANT_LEN];
	const char *text = NULL;
	uint64_t v = 0;
	enum pn_parse_status st;

	expected(f, want, sizeof want);
	if (!load_scalar(L, path, want, &text))
		return false;
	if (f->type == V_SIZE32 || f->type == V_SIZE64)
		st = pn_parse_size_status(text, &v);
	else if (f->type == V_DURATION)
		st = pn_parse_duration_status(text, &v);
	else if (!load_plain(L))
		return load_fail(L, L->ev.start_mark, "%s is the quoted string '%s'; expected %s",
				 path, load_show(L, text), want);
	else
		st = pn_parse_uint(text, &v);
	if (st != PN_PARSE_OK)
		return bad_number(L, f, path, text, st, want);
	if (v < f->min || v > f->max)
		return load_fail(L, L->ev.start_mark, "%s is %s, out of range; expected %s", path,
				 load_show(L, text), want);
	if (f->pow2 && (v & (v - 1)) != 0)
		return load_fail(L, L->ev.start_mark, "%s is %s, not a power of two; expected %s",
				 path, load_show(L, text), want);
	PN_ASSERT(v >= f->min && v <= f->max);
	PN_ASSERT((f->type != V_U32 && f->type != V_SIZE32) || v <= UINT32_MAX);
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
	if (!load_scalar(L, path, want, &text))
		return false;
	if (!load_plain(L))
		return load_fail(L, L->ev.start_mark, "%s is the quoted string '%s'; expected %s",
				 path, load_show(L, text), want);
	st = parse_fraction(text, &v);
	if (st != PN_PARSE_OK)
		return bad_number(L, f, path, text, st, want);
	if (!(v > 0 && v <= 1))
		return load_fail(L, L->ev.start_mark, "%s is %s, out of range; expected %s", path,
				 load_show(L, text), want);
	*(double *)dst = v;
	return true;
}

static bool read_bool(struct loader *L, const struct field *f, void *dst, const char *path)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off"};
	const char *text;

	if (!load_scalar(L, path, "true or false", &text))
		return false;
	for (size_t i = 0; load_plain(L) && i < PN_ARRAY_LEN(words); i++) {
		if (strcasecmp(text, words[i]) == 0) {
			*(bool *)dst = i % 2 == 0;
			return true;
		}
	}
	return load_fail(L, L->ev.start_mark,
			 "%s is %s%s; expected true or false (or yes/no, on/off)", path,
			 load_plain(L) ? "" : "the quoted string ", load_found(L));
}

/* Stores the index of the name matched into *(unsigned *)dst. */
bool load_read_enum(struct loader *L, const struct field *f, void *dst, const char *path)
{
	char want[WANT_LEN], hint[80];
	size_t n = load_count_names(f->names);
	const char *text;

	PN_ASSERT(f->type == V_ENUM && n > 0);
	expected(f, want, sizeof want);
	if (!load_scalar(L, path, want, &text))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(text, f->names[i]) == 0) {
			*(unsigned *)dst = (unsigned)i;
			return true;
		}
	}
	load_suggest(hint, sizeof hint, text, f->names, n);
	return load_fail(L, L->ev.start_mark, "unknown %s '%s'%s; expected %s", path,
			 load_show(L, text), hint, want);
}

static bool read_string(struct loader *L, const struct field *f, void *dst, const char *path)
{
	char want[WANT_LEN];
	const char *text;
	size_t n;

	if (f->min == 0 && load_is_null(L)) {
		*(char *)dst = '\0';
		return true;
	}
	expected(f, want, sizeof want);
	if (!load_scalar(L, path, want, &text))
		return false;
	n = L->ev.data.scalar.length;
	while (n > 0 && text[n - 1] == '\n')
		n--; /* a block scalar's final line break */
	if (n < f->min)
		return load_fail(L, L->ev.start_mark, "%s is empty; expected a non-empty string",
				 path);
	if (n >= f->max)
		return load_fail(L, L->ev.start_mark, "%s is %zu bytes long; expected %s", path, n,
				 want);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return load_fail(
				L, L->ev.start_mark,
				"%s contains a line break or control character; expected one line of text",
				path);
	}
	PN_ASSERT(n >= f->min && n < f->max); /* f->max is the buffer's size */
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

	PN_ASSERT(t->count <= PN_ARRAY_LEN(names) && L->ev.type == YAML_SCALAR_EVENT);
	for (size_t i = 0; i < t->count; i++) {
		names[i] = t->fields[i].key;
		if (strcmp(key, names[i]) == 0 && strlen(key) == L->ev.data.scalar.length)
			return (int)i;
	}
	place(in, sizeof in, where);
	load_suggest(hint, sizeof hint, key, names, t->count);
	if (hint[0]) {
		load_fail(L, L->ev.start_mark, "unknown key '%s'%s%s", load_show(L, key), in, hint);
		return -1;
	}
	load_join_names(list, sizeof list, names, t->count);
	load_fail(L, L->ev.start_mark, "unknown key '%s'%s; expected one of %s", load_show(L, key),
		  in, list);
	return -1;
}

/* Reads the mapping whose MAPPING-START is the current event, through the end. */
bool load_read_mapping(struct loader *L, const struct table *t, void *base, const char *where,
		       struct seen *seen)
{
	char path[PATH_LEN], in[PATH_LEN + 20];
	int i;

	PN_ASSERT(t->count <= MAX_FIELDS);
	memset(seen, 0, sizeof *seen);
	for (;;) {
		if (!load_next(L))
			return false;
		if (L->ev.type == YAML_MAPPING_END_EVENT)
			return true;
		if (L->ev.type != YAML_SCALAR_EVENT)
			return load_fail(L, L->ev.start_mark, "a key%s is %s; expected a key name",
					 place(in, sizeof in, where), load_found(L));
		i = find_key(L, t, where);
		if (i < 0)
			return false;
		if (seen->mask & (1u << i))
			return load_fail(
				L, L->ev.start_mark,
				"duplicate key '%s'%s (first at %zu:%zu); expected each key once",
				t->fields[i].key, place(in, sizeof in, where),
				load_position(L, seen->key[i]).line,
				load_position(L, seen->key[i]).col);
		seen->mask |= 1u << i;
		seen->key[i] = L->ev.start_mark;
		snprintf(path, sizeof path, "%s%s%s", where, *where ? "." : "", t->fields[i].key);
		if (!load_next(L))
			return false;
		if (base == L->s && t->fields[i].type != V_SECTION)
			load_remember(L, (char *)base + t->fields[i].off, L->ev.start_mark);
		else if (base == L->s && t->fields[i].section->has_present)
			load_remember(L, (char *)base + t->fields[i].section->present,
				      seen->key[i]);
		if (!read_value(L, &t->fields[i], base, path))
			return false;
	}
}

/* A section: a mapping, or nothing at all (all defaults). Nesting is bounded by the schema. */
static bool read_section(struct loader *L, const struct table *t, void *base, const char *path)
{
	struct seen seen;

	PN_ASSERT(!t->has_present || base == L->s);
	if (t->has_present)
		*(bool *)((char *)base + t->present) = true;
	if (load_is_null(L))
		return true;
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return load_fail(L, L->ev.start_mark, "%s is %s; expected a mapping", path,
				 load_found(L));
	return load_read_mapping(L, t, base, path, &seen);
}

static bool read_value(struct loader *L, const struct field *f, void *base, const char *path)
{
	void *dst = (char *)base + f->off;

	switch (f->type) {
	case V_U32:
	case V_U64:
	case V_SIZE32:
	case V_SIZE64:
	case V_DURATION: return load_read_number(L, f, dst, path);
	case V_FRACTION: return read_fraction(L, f, dst, path);
	case V_BOOL: return read_bool(L, f, dst, path);
	case V_ENUM: return load_read_enum(L, f, dst, path);
	case V_STRING: return read_string(L, f, dst, path);
	case V_SECTION: return read_section(L, f->section, base, path);
	case V_CUSTOM: return f->read(L, f, base, path);
	}
	return load_fail(L, L->ev.start_mark, "%s: internal error: no reader", path);
}

/* ---- room for lists ---- */

/* Makes room for one more element of size `size` in *array (len used, *cap allocated). */
bool load_grow(struct loader *L, void **array, size_t *cap, size_t len, size_t size)
{
	size_t want;
	void *p;

	PN_ASSERT(len <= *cap && size > 0);
	if (len < *cap)
		return true;
	want = *cap ? *cap * 2 : 16;
	p = realloc(*array, want * size);
	if (!p)
		return load_fail(L, L->ev.start_mark, "out of memory");
	*array = p;
	*cap = want;
	PN_ASSERT(len < *cap);
	return true;
}

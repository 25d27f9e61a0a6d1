/*
 * parse.c: the parsers of the scalar forms the scenario format and the command line use
 * (scenario layer; pure functions, no I/O, no state). The loader (load.c) and cli/ call
 * them; docs/scenarios.md and docs/cli.md name the forms.
 *
 * Scalar forms it owns:
 *   - integer:  decimal digits only. No sign, no fraction, no exponent, no 0x, no spaces;
 *               at most UINT64_MAX.
 *   - size:     an integer, optionally followed by spaces and a unit: B, kB, KiB, MB, MiB,
 *               GB, GiB, TB, TiB. As in PostgreSQL, kB/MB/GB/TB are powers of 1024, so
 *               kB == KiB. No unit means bytes. Units are case-sensitive.
 *   - duration: an integer, optionally followed by spaces, then a unit that is required:
 *               us, ms, s, min, h, d. The result is in nanoseconds.
 * Both refuse fractions ("1.5GiB": write 1536MiB) and results above UINT64_MAX.
 */
#include "parse.h"

#include <string.h>

struct unit {
	const char *name;
	uint64_t factor;
};

static const struct unit size_units[] = {
	{"B", 1},
	{"kB", 1ull << 10},
	{"KiB", 1ull << 10},
	{"MB", 1ull << 20},
	{"MiB", 1ull << 20},
	{"GB", 1ull << 30},
	{"GiB", 1ull << 30},
	{"TB", 1ull << 40},
	{"TiB", 1ull << 40},
};

static const struct unit duration_units[] = {
	{"us", 1000ull},
	{"ms", 1000ull * 1000},
	{"s", 1000ull * 1000 * 1000},
	{"min", 60ull * 1000 * 1000 * 1000},
	{"h", 3600ull * 1000 * 1000 * 1000},
	{"d", 86400ull * 1000 * 1000 * 1000},
};

/* Reads the leading digits of s into *out; *end is the first byte after them. */
static enum pn_parse_status digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p == '-')
		return PN_PARSE_NEGATIVE;
	if (*p == '+')
		return PN_PARSE_SIGN;
	if (*p < '0' || *p > '9')
		return *p == '.' ? PN_PARSE_FRACTION : PN_PARSE_SYNTAX;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return PN_PARSE_OVERFLOW;
		v = v * 10 + d;
	}
	if (*p == '.' && p[1] >= '0' && p[1] <= '9')
		return PN_PARSE_FRACTION;
	*out = v;
	*end = p;
	return PN_PARSE_OK;
}

enum pn_parse_status pn_parse_uint(const char *s, uint64_t *out)
{
	const char *end;
	uint64_t v;
	enum pn_parse_status st;

	if (!s || !*s)
		return PN_PARSE_EMPTY;
	st = digits(s, &v, &end);
	if (st != PN_PARSE_OK)
		return st;
	if (*end == '.')
		return PN_PARSE_FRACTION; /* "3." */
	if (*end)
		return PN_PARSE_SYNTAX;
	*out = v;
	return PN_PARSE_OK;
}

/* number [spaces] unit, the unit looked up in units[0..n). */
static enum pn_parse_status with_unit(const char *s, const struct unit *units, size_t n,
				      bool unit_required, uint64_t *out)
{
	const char *p;
	uint64_t v;
	enum pn_parse_status st;

	if (!s || !*s)
		return PN_PARSE_EMPTY;
	st = digits(s, &v, &p);
	if (st != PN_PARSE_OK)
		return st;
	while (*p == ' ')
		p++;
	if (!*p) {
		if (unit_required)
			return PN_PARSE_NO_UNIT;
		*out = v;
		return PN_PARSE_OK;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p, units[i].name) != 0)
			continue;
		if (v > UINT64_MAX / units[i].factor)
			return PN_PARSE_OVERFLOW;
		*out = v * units[i].factor;
		return PN_PARSE_OK;
	}
	return PN_PARSE_BAD_UNIT;
}

enum pn_parse_status pn_parse_size_status(const char *s, uint64_t *out)
{
	return with_unit(s, size_units, PN_ARRAY_LEN(size_units), false, out);
}

enum pn_parse_status pn_parse_duration_status(const char *s, uint64_t *out_ns)
{
	return with_unit(s, duration_units, PN_ARRAY_LEN(duration_units), true, out_ns);
}

bool pn_parse_size(const char *s, uint64_t *out)
{
	return pn_parse_size_status(s, out) == PN_PARSE_OK;
}

bool pn_parse_duration(const char *s, uint64_t *out_ns)
{
	return pn_parse_duration_status(s, out_ns) == PN_PARSE_OK;
}

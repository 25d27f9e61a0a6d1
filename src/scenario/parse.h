/*
 * parse.h: the scalar forms of the scenario format and the command line (scenario layer,
 * owned by parse.c, which documents the forms): integers, sizes, durations.
 */
#ifndef PN_PARSE_H
#define PN_PARSE_H

#include "pn.h"

/* Parses "64MiB", "8kB", "8192" into bytes; "4min", "250ms", "30s", "1h" into ns. */
bool pn_parse_size(const char *s, uint64_t *out);
bool pn_parse_duration(const char *s, uint64_t *out_ns);

/*
 * The same parsers, saying why a string was refused (for messages naming what was found
 * and what was expected). pn_parse_uint takes an unsigned decimal integer: no sign, no
 * fraction, no exponent, no other base, no surrounding space.
 */
enum pn_parse_status {
	PN_PARSE_OK,
	PN_PARSE_EMPTY,    /* "" */
	PN_PARSE_NEGATIVE, /* "-3" */
	PN_PARSE_SIGN,     /* "+3" */
	PN_PARSE_FRACTION, /* "1.5", "1.5GiB" */
	PN_PARSE_OVERFLOW, /* more than UINT64_MAX (after the unit) */
	PN_PARSE_NO_UNIT,  /* a duration without its unit: "10" */
	PN_PARSE_BAD_UNIT, /* "64MB3", "10m" */
	PN_PARSE_SYNTAX,   /* not a number at all */
};
enum pn_parse_status pn_parse_uint(const char *s, uint64_t *out);
enum pn_parse_status pn_parse_size_status(const char *s, uint64_t *out);
enum pn_parse_status pn_parse_duration_status(const char *s, uint64_t *out_ns);

#endif

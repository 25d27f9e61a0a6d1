/*
 * fuzz.c: what the libFuzzer harnesses share (fuzz.h).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pn_fuzz_init(void) { setenv("PENUMBRA_MEMORY_LIMIT", "8GiB", 1); }

/* Reads a decimal number of at least 1 at *p, moving past it. */
static bool positive(const char **p)
{
	unsigned long long v = 0;
	const char *s = *p;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned long long)(*s++ - '0');
	if (s == *p || v == 0)
		return false;
	*p = s;
	return true;
}

void pn_fuzz_check_message(const char *msg, const char *name)
{
	size_t n = strlen(name);
	const char *p = msg + n;

	if (strncmp(msg, name, n) == 0 && *p++ == ':' && positive(&p) && *p++ == ':' &&
	    positive(&p) && *p++ == ':' && *p == ' ' && p[1] != '\0' && !strchr(msg, '\n'))
		return;
	fprintf(stderr, "a refusal not of the form '%s:LINE:COL: what': '%s'\n", name, msg);
	abort();
}

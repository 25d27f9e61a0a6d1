/*
 * fuzz.c: what the libFuzzer harnesses share (fuzz.h).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pn.h"

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

const char *pn_fuzz_write_segment(const char *dir, const uint8_t *data, size_t len)
{
	static char path[320];
	uint64_t addr = 0, segno = 1, per_id = 1;
	uint32_t seg = 0;
	FILE *f;

	if (path[0])
		unlink(path);
	if (len >= 36) {
		memcpy(&addr, data + 8, sizeof addr);
		memcpy(&seg, data + 32, sizeof seg);
	}
	if (seg && (seg & (seg - 1)) == 0) {
		segno = addr / seg;
		per_id = ((uint64_t)1 << 32) / seg;
	}
	snprintf(path, sizeof path, "%s/00000001%08X%08X", dir, (unsigned)(segno / per_id),
		 (unsigned)(segno % per_id));
	f = fopen(path, "wb");
	PN_ASSERT(f != NULL);
	PN_ASSERT(fwrite(data, 1, len, f) == len);
	PN_ASSERT(fclose(f) == 0);
	return path;
}

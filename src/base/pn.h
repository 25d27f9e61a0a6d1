/*
 * pn.h: the base layer every other file includes. Fixed-width types, the assertion and
 * coverage macros, and the few helpers with no dependency of their own.
 *
 * PN_ASSERT is always on, in every build: a broken invariant stops the process with the
 * expression, the file and line, and the context that pn_assert_context() registered
 * (the simulator registers the seed and the event number, so a failure is a one-line
 * reproduction). PN_TESTCASE(cond) counts how often a protocol boundary was seen true and
 * false; `check --coverage` reports the markers never seen both ways.
 */
#ifndef PN_H
#define PN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define PN_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PN_MAX(a, b) ((a) > (b) ? (a) : (b))
#define PN_ERROR_LEN 1024 /* room for a path and a sentence */
#define PN_ALIGN8(x) (((x) + 7u) & ~(uint64_t)7u)

/* Expansions of an X-macro list X(ENUMERATOR, "name"): the enumerator, its designated
 * initializer in a name table, a count (scenario.h, env.h). */
#define PN_ENUM_VALUE(e, name) e,
#define PN_ENUM_NAME(e, name) [e] = name,
#define PN_ENUM_ONE(e, name) +1

typedef uint64_t pn_lsn; /* a WAL byte position; 0 is invalid */

_Noreturn void pn_assert_fail(const char *expr, const char *file, int line);
/* Registers a callback that prints context (seed, event) when an assertion fails. */
void pn_assert_context(void (*print)(void *arg), void *arg);

#define PN_ASSERT(expr)                                            \
	do {                                                       \
		if (__builtin_expect(!(expr), 0))                  \
			pn_assert_fail(#expr, __FILE__, __LINE__); \
	} while (0)

/* Coverage markers: a static table of sites, each counting true and false hits. */
struct pn_testcase_site {
	const char *name;
	const char *file;
	int line;
	uint64_t hits_true;
	uint64_t hits_false;
	bool registered;
	struct pn_testcase_site *next;
};
void pn_testcase_register(struct pn_testcase_site *site);
struct pn_testcase_site *pn_testcase_sites(void);
/* Every site linked into the program, reached or not (each PN_TESTCASE also leaves a pointer
 * to its site in the section pn_testcase_sites); returns how many, in link order. */
size_t pn_testcase_all(struct pn_testcase_site *const **out);

/* "No page" (PN_NO_PAGE, UINT32_MAX) is "-" in human text everywhere, and JSON null (cli/cli.h
 * C5): pn_page_text gives "N" or "-" in buf (at least 12 bytes) and returns buf. */
#define PN_NO_PAGE UINT32_MAX
const char *pn_page_text(uint32_t page, char *buf, size_t len);

/* Zeroed memory in its own mapping, 2 MiB aligned and advised for transparent huge pages,
 * so that first touching it costs a fault per 2 MiB rather than per 4 KiB (the device's
 * chunk slabs, a big buffer pool's frames). Size it in multiples of 2 MiB: the mapping is
 * rounded up. For large regions only: each call is a system call. pn_huge_free takes the
 * size that was asked for. On a system without madvise(MADV_HUGEPAGE), ordinary pages. */
#define PN_HUGE_PAGE ((size_t)2 << 20)
void *pn_huge_alloc(size_t bytes);
void pn_huge_free(void *p, size_t bytes);

/* Big blocks (PN_BIG_MIN bytes and more) kept for the next request of the same size. A
 * checker makes and drops an engine for each crash state it judges, and each engine takes
 * the same few big buffers (the I/O buffers, the WAL ring and record buffer, a WAL reader's
 * images); under AddressSanitizer each was a fresh mapping, faulted in page by page and
 * unmapped again (645,000 faults for one mutant's check, most of the sanitizer run's time).
 * Content is indeterminate, as malloc's. A block waiting here is poisoned under the
 * sanitizer, so a use after pn_big_free is still caught. At most PN_BIG_KEPT blocks wait,
 * the oldest freed first (64 blocks: an engine in recovery holds about a dozen). pn_big_free takes the size that was asked for (NULL: nothing). */
#define PN_BIG_MIN ((size_t)64 << 10)
#define PN_BIG_KEPT 64
void *pn_big_alloc(size_t bytes);
void *pn_big_zalloc(size_t bytes); /* zeroed, as calloc's, but never by calloc (pn.c) */
void pn_big_free(void *p, size_t bytes);

#define PN_TESTCASE(name_, cond)                                                         \
	do {                                                                             \
		static struct pn_testcase_site pn__site = {name_, __FILE__, __LINE__, 0, \
							   0,     false,    NULL};       \
		static struct pn_testcase_site *pn__site_ref                             \
			__attribute__((used, section("pn_testcase_sites"))) = &pn__site; \
		(void)pn__site_ref;                                                      \
		if (!pn__site.registered)                                                \
			pn_testcase_register(&pn__site);                                 \
		if (cond)                                                                \
			pn__site.hits_true++;                                            \
		else                                                                     \
			pn__site.hits_false++;                                           \
	} while (0)

static inline void pn_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void pn_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void pn_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t pn_get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t pn_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}
static inline uint64_t pn_get64(const uint8_t *p)
{
	return (uint64_t)pn_get32(p) | ((uint64_t)pn_get32(p + 4) << 32);
}

#endif

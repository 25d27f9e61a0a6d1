/* pn.c: the base layer's assertion failure path and the coverage-marker registry. */
#include "pn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void (*context_print)(void *arg);
static void *context_arg;
static struct pn_testcase_site *sites_head;

void pn_assert_context(void (*print)(void *arg), void *arg)
{
	context_print = print;
	context_arg = arg;
}

_Noreturn void pn_assert_fail(const char *expr, const char *file, int line)
{
	fprintf(stderr, "penumbra: assertion failed: %s (%s:%d)\n", expr, file, line);
	if (context_print)
		context_print(context_arg);
	fflush(stderr);
	abort();
}

void pn_testcase_register(struct pn_testcase_site *site)
{
	site->registered = true;
	site->next = sites_head;
	sites_head = site;
}

struct pn_testcase_site *pn_testcase_sites(void) { return sites_head; }

/* The linker defines these for the section PN_TESTCASE fills; weak: a program without any
 * marker has no such section and sees NULL. */
extern struct pn_testcase_site *const __start_pn_testcase_sites[] __attribute__((weak));
extern struct pn_testcase_site *const __stop_pn_testcase_sites[] __attribute__((weak));

size_t pn_testcase_all(struct pn_testcase_site *const **out)
{
	*out = __start_pn_testcase_sites;
	if (!__start_pn_testcase_sites || !__stop_pn_testcase_sites)
		return 0;
	return (size_t)(__stop_pn_testcase_sites - __start_pn_testcase_sites);
}

const char *pn_page_text(uint32_t page, char *buf, size_t len)
{
	PN_ASSERT(len >= 12);
	if (page == PN_NO_PAGE)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIu32, page);
	return buf;
}

void *pn_huge_alloc(size_t bytes)
{
	size_t len = (bytes + PN_HUGE_PAGE - 1) / PN_HUGE_PAGE * PN_HUGE_PAGE;
	/* map one huge page more, then unmap the unaligned head and the tail */
	uint8_t *m = mmap(NULL, len + PN_HUGE_PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	size_t head = (PN_HUGE_PAGE - (uintptr_t)m % PN_HUGE_PAGE) % PN_HUGE_PAGE;
	if (head)
		munmap(m, head);
	if (PN_HUGE_PAGE - head)
		munmap(m + head + len, PN_HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
	madvise(m + head, len, MADV_HUGEPAGE); /* advice only: no error to handle */
#endif
	return m + head;
}

void pn_huge_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, (bytes + PN_HUGE_PAGE - 1) / PN_HUGE_PAGE * PN_HUGE_PAGE);
}

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define BIG_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define BIG_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define BIG_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define BIG_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#endif
#endif
#ifndef BIG_POISON
#define BIG_POISON(p, n) ((void)(p), (void)(n))
#define BIG_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* the blocks waiting, oldest first (a process's own: a forked worker has its copy) */
static struct {
	void *p;
	size_t bytes;
} big_kept[PN_BIG_KEPT];
static uint32_t big_nkept;

static void big_drop(uint32_t i)
{
	PN_ASSERT(i < big_nkept);
	memmove(&big_kept[i], &big_kept[i + 1], (big_nkept - i - 1) * sizeof(big_kept[0]));
	big_nkept--;
}

void *pn_big_alloc(size_t bytes)
{
	PN_ASSERT(big_nkept <= PN_BIG_KEPT);
	if (bytes >= PN_BIG_MIN)
		for (uint32_t i = big_nkept; i-- > 0;)
			if (big_kept[i].bytes == bytes) {
				void *p = big_kept[i].p;
				big_drop(i);
				BIG_UNPOISON(p, bytes);
				return p;
			}
	return malloc(bytes);
}

void *pn_big_zalloc(size_t bytes)
{
	/* malloc and memset, not calloc: jemalloc hands a calloc of a large size class (16 KiB
	 * and up) zeroed pages by giving a dirty extent's pages back to the kernel first
	 * (madvise), and every page of it then faults in again when written */
	void *p = pn_big_alloc(bytes);
	if (p)
		memset(p, 0, bytes);
	return p;
}

void pn_big_free(void *p, size_t bytes)
{
	if (p == NULL)
		return;
	if (bytes < PN_BIG_MIN) {
		free(p);
		return;
	}
	if (big_nkept == PN_BIG_KEPT) {
		BIG_UNPOISON(big_kept[0].p, big_kept[0].bytes);
		free(big_kept[0].p);
		big_drop(0);
	}
	BIG_POISON(p, bytes);
	big_kept[big_nkept].p = p;
	big_kept[big_nkept].bytes = bytes;
	big_nkept++;
	PN_ASSERT(big_nkept <= PN_BIG_KEPT);
}

/* pn.c: the base layer's assertion failure path and the coverage-marker registry. */
#include "pn.h"

#include <stdio.h>
#include <stdlib.h>

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

/*
 * cover.c: the coverage hits of every PN_TESTCASE site, saved, restored, added (model layer;
 * cover.h). The sites are every marker linked into the program (pn_testcase_all), a number
 * fixed at link time: an array saved earlier has one entry per site now, which every function
 * asserts.
 */
#include "cover.h"

#include <stdlib.h>

#include "pn.h"

static size_t sites_now(struct pn_testcase_site *const **sites)
{
	size_t n = pn_testcase_all(sites);
	PN_ASSERT(n == 0 || *sites != NULL);
	return n;
}

uint64_t (*pn_cover_save(size_t *n))[2]
{
	struct pn_testcase_site *const *sites;
	*n = sites_now(&sites);
	uint64_t(*hits)[2] = calloc(*n + 1, sizeof(*hits));
	PN_ASSERT(hits != NULL);
	for (size_t i = 0; i < *n; i++) {
		hits[i][0] = sites[i]->hits_true;
		hits[i][1] = sites[i]->hits_false;
	}
	return hits;
}

void pn_cover_restore(const uint64_t (*hits)[2], size_t n)
{
	struct pn_testcase_site *const *sites;
	PN_ASSERT(sites_now(&sites) == n);
	for (size_t i = 0; i < n; i++) {
		sites[i]->hits_true = hits[i][0];
		sites[i]->hits_false = hits[i][1];
	}
}

void pn_cover_zero(void)
{
	struct pn_testcase_site *const *sites;
	size_t n = sites_now(&sites);
	for (size_t i = 0; i < n; i++)
		sites[i]->hits_true = sites[i]->hits_false = 0;
}

void pn_cover_add(const uint64_t (*hits)[2], size_t n)
{
	struct pn_testcase_site *const *sites;
	PN_ASSERT(sites_now(&sites) == n);
	for (size_t s = 0; s < n; s++) {
		sites[s]->hits_true += hits[s][0];
		sites[s]->hits_false += hits[s][1];
	}
}

uint64_t (*pn_cover_since(const uint64_t (*before)[2], size_t n0, size_t *n))[2]
{
	struct pn_testcase_site *const *sites;
	*n = sites_now(&sites);
	PN_ASSERT(*n == n0);
	uint64_t(*hits)[2] = calloc(*n + 1, sizeof(*hits));
	PN_ASSERT(hits != NULL);
	for (size_t s = 0; s < *n; s++) {
		PN_ASSERT(sites[s]->hits_true >= before[s][0]); /* hits only grow */
		PN_ASSERT(sites[s]->hits_false >= before[s][1]);
		hits[s][0] = sites[s]->hits_true - before[s][0];
		hits[s][1] = sites[s]->hits_false - before[s][1];
	}
	return hits;
}

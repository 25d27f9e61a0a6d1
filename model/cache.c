/*
 * cache.c: the verdict cache (model layer; cache.h has rules V1-V5). Linear probing over a
 * power-of-two table keyed by the state's key (a hash: its low bits spread).
 */
#include "cache.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CACHE_CAP_MIN 4096u

static struct pn_verdict *probe(struct pn_verdict *v, uint64_t cap, uint64_t key)
{
	uint64_t j = key & (cap - 1);
	while (v[j].used && v[j].key != key)
		j = (j + 1) & (cap - 1);
	return &v[j];
}

#define HUGE_PAGE (2u << 20)

/* A zeroed table of cap slots. From 2 MiB up it lies in whole huge pages and asks the kernel
 * for them (a probe lands anywhere in it: one TLB entry per 2 MiB instead of per 4 KiB). */
static struct pn_verdict *table_new(uint64_t cap)
{
	size_t bytes = cap * sizeof(struct pn_verdict);
	if (bytes < HUGE_PAGE)
		return calloc(cap, sizeof(struct pn_verdict));
	void *p = NULL;
	if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without it the table is the same */
	memset(p, 0, bytes);
	return p;
}

/* V4: twice the capacity, every used slot moved over. */
static void grow(struct pn_cache *c)
{
	uint64_t ncap = c->cap ? c->cap * 2 : CACHE_CAP_MIN;
	struct pn_verdict *n = table_new(ncap);
	PN_ASSERT(n != NULL && (ncap & (ncap - 1)) == 0);
	for (uint64_t i = 0; i < c->cap; i++)
		if (c->v[i].used)
			*probe(n, ncap, c->v[i].key) = c->v[i];
	free(c->v);
	c->v = n;
	c->cap = ncap;
}

struct pn_verdict *pn_cache_slot(struct pn_cache *c, uint64_t key)
{
	if (c->limit && c->len >= c->limit) { /* V5 */
		pn_cache_clear(c);
		c->clears++;
	}
	if (c->len * 2 >= c->cap)
		grow(c);
	PN_ASSERT(c->len * 2 < c->cap); /* V4: a free slot ends every probe */
	return probe(c->v, c->cap, key);
}

void pn_cache_fill(struct pn_cache *c, struct pn_verdict *s, const struct pn_verdict *v)
{
	PN_ASSERT(!s->used && v->used);              /* V1 */
	PN_ASSERT(s >= c->v && s < c->v + c->cap);   /* a slot of this table */
	PN_ASSERT(probe(c->v, c->cap, v->key) == s); /* the key's own slot */
	*s = *v;
	c->len++;
}

void pn_cache_clear(struct pn_cache *c)
{
	if (c->v)
		memset(c->v, 0, c->cap * sizeof(*c->v));
	c->len = 0;
}

void pn_cache_free(struct pn_cache *c)
{
	free(c->v);
	*c = (struct pn_cache){0};
}

void pn_cache_check(const struct pn_cache *c)
{
	uint64_t used = 0;
	PN_ASSERT(c->cap == 0 || (c->cap & (c->cap - 1)) == 0);
	PN_ASSERT(c->len * 2 <= c->cap);
	for (uint64_t i = 0; i < c->cap; i++)
		used += c->v[i].used;
	PN_ASSERT(used == c->len);
}

/*
 * cache.c: the verdict cache (model layer; cache.h has rules V1-V6). Linear probing over a
 * power-of-two table keyed by the state's key (a hash: its low bits spread).
 */
#include "cache.h"

#include <stdlib.h>
#include <string.h>

#define CACHE_CAP_MIN 4096u

/* V6: whether slot s holds a verdict of generation gen. */
static bool live(const struct pn_verdict *s, uint32_t gen) { return s->used && s->gen == gen; }

static struct pn_verdict *probe(struct pn_verdict *v, uint64_t cap, uint64_t key, uint32_t gen)
{
	uint64_t j = key & (cap - 1);
	while (live(&v[j], gen) && v[j].key != key)
		j = (j + 1) & (cap - 1);
	return &v[j];
}

/* A zeroed table of cap slots. From 2 MiB up it is mapped from the kernel (pn_huge_alloc),
 * which zeroes each page as it is first touched (no pass over it here), in whole huge pages
 * (a probe lands anywhere in it: one TLB entry per 2 MiB instead of per 4 KiB); *mapped is
 * then its length, for table_free. */
static struct pn_verdict *table_new(uint64_t cap, size_t *mapped)
{
	size_t bytes = cap * sizeof(struct pn_verdict);
	*mapped = 0;
	if (bytes < PN_HUGE_PAGE)
		return calloc(cap, sizeof(struct pn_verdict));
	*mapped = bytes;
	return pn_huge_alloc(bytes);
}

static void table_free(struct pn_verdict *v, size_t mapped)
{
	if (mapped)
		pn_huge_free(v, mapped);
	else
		free(v);
}

/* V6: the big table of the last cache freed, with its generation, for the next cache's first
 * lookup (a search's parts are units, each with a cache of its own: a process that runs
 * several takes one table over instead of growing each anew). A process's own. */
static struct {
	struct pn_verdict *v;
	uint64_t cap;
	size_t mapped;
	uint32_t gen;
} spare;

/* V4: twice the capacity, every slot of this generation moved over; or, for an empty cache
 * with no table, the spare table of a cache freed before, in a generation of its own. */
static void grow(struct pn_cache *c)
{
	if (!c->v && spare.v) {
		PN_ASSERT(c->len == 0);
		c->v = spare.v;
		c->cap = spare.cap;
		c->mapped = spare.mapped;
		c->gen = spare.gen;
		spare.v = NULL;
		pn_cache_clear(c); /* every slot of the table's earlier generations free */
		return;
	}
	uint64_t ncap = c->cap ? c->cap * 2 : CACHE_CAP_MIN;
	size_t mapped;
	struct pn_verdict *n = table_new(ncap, &mapped);
	PN_ASSERT(n != NULL && (ncap & (ncap - 1)) == 0);
	for (uint64_t i = 0; i < c->cap; i++)
		if (live(&c->v[i], c->gen))
			*probe(n, ncap, c->v[i].key, c->gen) = c->v[i];
	table_free(c->v, c->mapped);
	c->v = n;
	c->cap = ncap;
	c->mapped = mapped;
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
	struct pn_verdict *s = probe(c->v, c->cap, key, c->gen);
	if (!live(s, c->gen))
		memset(s, 0, sizeof(*s)); /* V6: a slot of an earlier generation is free */
	return s;
}

void pn_cache_fill(struct pn_cache *c, struct pn_verdict *s, const struct pn_verdict *v)
{
	PN_ASSERT(!s->used && v->used);                      /* V1 */
	PN_ASSERT(s >= c->v && s < c->v + c->cap);           /* a slot of this table */
	PN_ASSERT(probe(c->v, c->cap, v->key, c->gen) == s); /* the key's own slot */
	*s = *v;
	s->gen = c->gen;
	c->len++;
}

void pn_cache_clear(struct pn_cache *c)
{
	if (++c->gen == 0 && c->v) /* V6's generations wrapped: zero the table once */
		memset(c->v, 0, c->cap * sizeof(*c->v));
	c->len = 0;
}

void pn_cache_free(struct pn_cache *c)
{
	if (c->mapped && (!spare.v || spare.cap <= c->cap)) { /* V6: kept for the next cache */
		table_free(spare.v, spare.mapped);
		spare.v = c->v;
		spare.cap = c->cap;
		spare.mapped = c->mapped;
		spare.gen = c->gen;
	} else {
		table_free(c->v, c->mapped);
	}
	*c = (struct pn_cache){0};
}

void pn_cache_check(const struct pn_cache *c)
{
	uint64_t used = 0;
	PN_ASSERT(c->cap == 0 || (c->cap & (c->cap - 1)) == 0);
	PN_ASSERT(c->len * 2 <= c->cap);
	for (uint64_t i = 0; i < c->cap; i++)
		used += live(&c->v[i], c->gen);
	PN_ASSERT(used == c->len);
}

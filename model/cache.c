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

/* V6: big tables (mapped) that caches left, freed or grown out of: at most one per capacity,
 * each with the generation it was left in, for the next cache of this process that grows to
 * that capacity (a search's parts are units, each with a cache of its own, and a worker runs
 * part after part: each would grow its table anew, which the kernel zeroes page by page). A
 * part's table grows through the same capacities as the one before, so each is taken over
 * where it grew; a small part keeps a small table (a probe's miss in a table of a gigabyte is
 * a walk of the page tables). A process's own; at most twice the biggest table's bytes. */
/* V6: the generation after gen of table v (cap slots): a slot of an earlier one is free; when
 * the count wraps, the table is zeroed once. */
static uint32_t gen_next(struct pn_verdict *v, uint64_t cap, uint32_t gen)
{
	if (++gen == 0 && v)
		memset(v, 0, cap * sizeof(*v));
	return gen;
}

#define SPARE_CAPS 64
static struct spare {
	struct pn_verdict *v;
	size_t mapped;
	uint32_t gen;
} spares[SPARE_CAPS];

static struct spare *spare_of(uint64_t cap) { return &spares[__builtin_ctzll(cap)]; }

/* The table v of cap slots, left in generation gen: kept as its capacity's spare when it is
 * mapped and none is kept, else freed. */
static void table_leave(struct pn_verdict *v, uint64_t cap, size_t mapped, uint32_t gen)
{
	if (mapped && !spare_of(cap)->v) /* mapped: a big table, so cap is not 0 */
		*spare_of(cap) = (struct spare){.v = v, .mapped = mapped, .gen = gen};
	else
		table_free(v, mapped);
}

/* V4: twice the capacity (the spare of that capacity in its next generation, V6, or a new
 * table), every slot of this generation moved over. */
static void grow(struct pn_cache *c)
{
	uint64_t ncap = c->cap ? c->cap * 2 : CACHE_CAP_MIN;
	size_t mapped;
	uint32_t gen = c->gen;
	struct pn_verdict *n;
	struct spare *sp = spare_of(ncap);
	if (sp->v) {
		n = sp->v;
		mapped = sp->mapped;
		gen = gen_next(n, ncap, sp->gen);
		*sp = (struct spare){0};
	} else {
		n = table_new(ncap, &mapped);
	}
	PN_ASSERT(n != NULL && (ncap & (ncap - 1)) == 0);
	for (uint64_t i = 0; i < c->cap; i++) {
		if (live(&c->v[i], c->gen)) {
			struct pn_verdict *t = probe(n, ncap, c->v[i].key, gen);
			*t = c->v[i];
			t->gen = gen;
		}
	}
	table_leave(c->v, c->cap, c->mapped, c->gen);
	c->v = n;
	c->cap = ncap;
	c->mapped = mapped;
	c->gen = gen;
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
	c->gen = gen_next(c->v, c->cap, c->gen);
	c->len = 0;
}

void pn_cache_free(struct pn_cache *c)
{
	table_leave(c->v, c->cap, c->mapped, c->gen); /* V6: kept for the next cache */
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

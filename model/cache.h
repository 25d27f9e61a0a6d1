/*
 * cache.h: the verdict cache, a crash state's outcome by its key (model layer).
 *
 * Rules:
 *   V1 One verdict per key: pn_cache_slot gives the slot of a key, used (the key's verdict or
 *      a survey's mark) or free (the caller fills it and counts it in with pn_cache_fill);
 *      a key is never stored twice.
 *   V2 A verdict is a function of the state its key names (its crash image, by content:
 *      checker.h H3): a state met again is not recovered again (checker.h H2). The driver
 *      empties the cache at each seeded schedule run (pn_cache_clear: a unit of --jobs
 *      rebuilds one run's cache, unit.h U2); a search's cache lives across its schedules.
 *   V3 A slot marked by a unit's survey (known false: unit.h U2) holds a key only: its verdict
 *      is relearned or deferred (U6) before anything reads it.
 *   V4 The table is open addressing, its capacity a power of two, at most half full; from
 *      2 MiB up it asks for huge pages (a probe lands anywhere in it). pn_cache_prefetch
 *      asks early for the slot a probe begins at (the driver does it eight crash states ahead,
 *      run.c); a hint that changes nothing in the table.
 *   V5 A bounded table (limit, which the driver sets for a search: PN_SEARCH_CACHE_LIMIT)
 *      holds at most `limit` verdicts: a lookup that finds it full empties it first
 *      (clears counts it). A verdict is a memo (V2): a state met again after is judged
 *      again, to the same verdict, so only the work grows; the table stays at most
 *      2 * limit slots (limit a power of two). When it empties is a function of the keys
 *      looked up in order, so a search stays deterministic. A unit's survey marks (V3) live
 *      in seeded runs, which set no limit.
 *   V6 Emptying is one step: the cache's generation moves on, and a slot filled in an
 *      earlier one is free (pn_cache_slot zeroes it before handing it out), so a probe
 *      sees the table as if every slot had been zeroed. The table keeps its capacity; a
 *      lookup's slot and verdict do not depend on the capacity, only on the keys filled in
 *      this generation, so counts and verdicts are those of a table made anew (test_judge).
 *      So too a big table a cache leaves (freed, or grown out of) to the process's next
 *      cache that grows to its capacity (taken over in the table's next generation; one kept
 *      per capacity): a search's parts are units with a cache each, a worker process runs
 *      part after part (exec_procs.h EP5), and growing each one's table anew had the kernel
 *      zero its pages again.
 */
#ifndef PN_CACHE_H
#define PN_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "pn.h"

/* A recovered crash state's outcome. */
struct pn_verdict {
	uint64_t key;
	pn_lsn end;    /* end of the recovered valid WAL */
	uint32_t kind; /* enum pn_violation_kind; PN_VIOL_NONE if it passed C2/C3 */
	uint32_t page;
	uint32_t gen; /* V6: the table's generation it was filled in */
	bool used;
	bool known; /* verdict computed (false: key met in a unit's survey only, V3) */
};

struct pn_cache {
	struct pn_verdict *v;
	uint64_t cap, len;
	uint64_t limit;  /* V5: at most this many verdicts (0: no bound) */
	uint64_t clears; /* V5: times it was emptied for the bound */
	uint32_t gen;    /* V6: slots of another generation are free */
	size_t mapped;   /* bytes of v when the kernel mapped it (V4's huge pages), else 0 */
};

/* V5: a search's bound, 2^25 verdicts (a table of at most 2^26 slots, 2 GiB, per process);
 * a search of hundreds of millions of distinct states otherwise outgrew the memory. */
#define PN_SEARCH_CACHE_LIMIT (1ull << 25)

/* The slot of key (V1): used when the key is in, else free and ready to fill. */
struct pn_verdict *pn_cache_slot(struct pn_cache *c, uint64_t key);
/* Fills the free slot s (from pn_cache_slot) with v, whose key it is. */
void pn_cache_fill(struct pn_cache *c, struct pn_verdict *s, const struct pn_verdict *v);
/* Asks the memory for the slot where a probe for key begins (a hint: the table unchanged). */
static inline void pn_cache_prefetch(const struct pn_cache *c, uint64_t key)
{
	if (c->cap)
		__builtin_prefetch(&c->v[key & (c->cap - 1)]);
}
void pn_cache_clear(struct pn_cache *c);
void pn_cache_free(struct pn_cache *c);
/* V4 and the count of used slots (every slot visited: for tests). */
void pn_cache_check(const struct pn_cache *c);

#endif

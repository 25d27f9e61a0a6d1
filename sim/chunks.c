/*
 * chunks.c: the chunk store beneath the simulated device (sim layer). Its rules, CK1-CK4, and
 * its interface in chunks.h; the crash model over it in device.h.
 */
#include "chunks.h"

#include <stdlib.h>
#include <string.h>

#include "pn.h"

#include "xxh.h"

/* The removed marks (device.h DV1): a chunk entry, and a whole leaf of them. Compared by
 * identity only, never ordered. */
struct pn_chunk pn_chunk_removed_mark;
static struct pn_leaf removed_leaf;
#define REMOVED PN_CHUNK_REMOVED

static bool is_real(const struct pn_chunk *c) { return c && c != REMOVED; }

/*
 * CK1: chunk bytes come from slabs of SLAB_CHUNKS and go back to a free list (linked through the
 * free chunks' first bytes), not to malloc: jemalloc pads every large allocation by a page
 * (cache-oblivious placement), 25 % on a 16 KiB chunk. A slab is one huge page
 * (pn_huge_alloc): formatting a 160 MiB data file used to take 41,000 page faults, a fifth
 * of `run`'s time on pgbench scale 10 (docs/performance.md). The pool only grows, to the most
 * chunks alive at once; a run that follows another reuses its chunks. One pool per
 * process: the simulator is single-threaded (check --jobs forks). A lazy chunk written in one
 * half only (CK3) takes half a slot: the slot's other half waits in half_free for a chunk
 * that holds the other half.
 */
#define SLAB_CHUNKS (PN_HUGE_PAGE / PN_CHUNK_SIZE)
static struct {
	uint8_t *free; /* a free chunk; its first bytes point at the next */
	uint8_t *slab; /* the newest slab and how many of its chunks are handed out */
	uint32_t slab_used;
	uint8_t **slabs; /* every slab, so that all stay reachable */
	size_t nslabs, cap;
	uint8_t *half_free[2]; /* CK3: slots whose low (0) or high (1) half is free; the link is
				* in that half's first bytes */
	uint64_t live;         /* halves of chunks handed out and not yet back */
} pool;

#define HALF (PN_CHUNK_SIZE / 2u)

static uint8_t *bytes_get(void)
{
	pool.live += 2;
	uint8_t *b = pool.free;
	if (b) {
		memcpy(&pool.free, b, sizeof(pool.free));
		return b;
	}
	if (!pool.slab || pool.slab_used == SLAB_CHUNKS) {
		if (pool.nslabs == pool.cap) {
			pool.cap = pool.cap ? pool.cap * 2 : 64;
			pool.slabs = realloc(pool.slabs, pool.cap * sizeof(*pool.slabs));
			PN_ASSERT(pool.slabs != NULL);
		}
		pool.slab = pn_huge_alloc((size_t)SLAB_CHUNKS * PN_CHUNK_SIZE);
		PN_ASSERT(pool.slab != NULL);
		pool.slabs[pool.nslabs++] = pool.slab;
		pool.slab_used = 0;
	}
	return pool.slab + (size_t)pool.slab_used++ * PN_CHUNK_SIZE;
}

static void bytes_put(uint8_t *b)
{
	pool.live -= 2;
	memcpy(b, &pool.free, sizeof(pool.free));
	pool.free = b;
}

/* CK3: a slot of which half h (0 low, 1 high) is the caller's; the other half of a slot
 * split for it waits for a chunk holding that half. */
static uint8_t *half_get(uint32_t h)
{
	uint8_t *slot = pool.half_free[h];
	if (slot) {
		memcpy(&pool.half_free[h], slot + h * HALF, sizeof(slot));
		pool.live++;
		return slot;
	}
	slot = bytes_get();
	pool.live--;
	memcpy(slot + (1 - h) * HALF, &pool.half_free[1 - h], sizeof(slot));
	pool.half_free[1 - h] = slot;
	return slot;
}

static void half_put(uint8_t *slot, uint32_t h)
{
	pool.live--;
	memcpy(slot + h * HALF, &pool.half_free[h], sizeof(slot));
	pool.half_free[h] = slot;
}

/* CK5: the last serial given (one counter per process, as the pool). */
static uint64_t serial_last;

/* CK5: chunk c's bytes may be about to change: a serial of their own. */
static void renamed(struct pn_chunk *c)
{
	c->serial = ++serial_last;
	c->hash_serial = 0;
}

uint64_t pn_chunk_hash(const struct pn_chunk *c)
{
	PN_ASSERT(c != NULL && c != REMOVED && !c->unbuilt && !c->half);
	if (c->hash_serial != c->serial) {
		/* a cache of a function of the bytes, which the serial names: not a change */
		struct pn_chunk *m = (struct pn_chunk *)c;
		m->hash = XXH3_64bits(c->data, PN_CHUNK_SIZE);
		m->hash_serial = c->serial;
	}
	return c->hash;
}

static void chunk_put(struct pn_chunk *c)
{
	if (is_real(c) && --c->refs == 0) {
		if (c->half)
			half_put(c->data, c->half - 1u);
		else
			bytes_put(c->data);
		free(c);
	}
}

/* A new chunk holding from's bytes (NULL: zeros), except [skip, skip + skip_len), left as
 * the allocator had it: the caller is about to overwrite it (the WAL and the data file are
 * written once a page at a time: filling what is overwritten at once was a pass over every
 * byte). */
static struct pn_chunk *chunk_new_but(const uint8_t *from, uint32_t skip, uint32_t skip_len)
{
	struct pn_chunk *c = malloc(sizeof(*c));
	PN_ASSERT(c != NULL);
	PN_ASSERT(skip + skip_len <= PN_CHUNK_SIZE);
	c->data = bytes_get();
	uint32_t tail = skip + skip_len;
	if (from) {
		memcpy(c->data, from, skip);
		memcpy(c->data + tail, from + tail, PN_CHUNK_SIZE - tail);
	} else {
		memset(c->data, 0, skip);
		memset(c->data + tail, 0, PN_CHUNK_SIZE - tail);
	}
	c->refs = 1;
	c->unbuilt = 0;
	c->half = 0;
	renamed(c);
	return c;
}

static bool leaf_is_real(const struct pn_leaf *l) { return l && l != &removed_leaf; }

void pn_image_free(struct pn_file_image *im)
{
	for (uint64_t i = 0; i < im->nleaves; i++) {
		struct pn_leaf *l = im->leaves[i];
		if (!leaf_is_real(l))
			continue;
		for (uint32_t k = 0; k < PN_LEAF_CHUNKS; k++)
			chunk_put(l->chunk[k]);
		free(l);
	}
	free(im->leaves);
	memset(im, 0, sizeof(*im));
}

/* The chunk at idx: NULL (unwritten), REMOVED, or a chunk. */
static inline const struct pn_chunk *chunk_at(const struct pn_file_image *im, uint64_t idx)
{
	uint64_t li = idx / PN_LEAF_CHUNKS;
	if (li >= im->nleaves || !im->leaves[li])
		return NULL;
	if (im->leaves[li] == &removed_leaf)
		return REMOVED;
	return im->leaves[li]->chunk[idx % PN_LEAF_CHUNKS];
}

/* The leaf holding idx, allocated (a removed leaf becomes a leaf of REMOVED entries). */
static struct pn_leaf *leaf_for(struct pn_file_image *im, uint64_t idx)
{
	uint64_t li = idx / PN_LEAF_CHUNKS;
	if (li >= im->nleaves) {
		uint64_t n = PN_MAX(li + 1, im->nleaves * 2);
		struct pn_leaf **t = realloc(im->leaves, n * sizeof(*t));
		PN_ASSERT(t != NULL);
		memset(t + im->nleaves, 0, (n - im->nleaves) * sizeof(*t));
		im->leaves = t;
		im->nleaves = n;
	}
	struct pn_leaf *l = im->leaves[li];
	if (leaf_is_real(l))
		return l;
	struct pn_leaf *fresh = calloc(1, sizeof(*fresh));
	PN_ASSERT(fresh != NULL);
	if (l == &removed_leaf) {
		for (uint32_t k = 0; k < PN_LEAF_CHUNKS; k++)
			fresh->chunk[k] = REMOVED;
		fresh->removed = PN_LEAF_CHUNKS;
	}
	im->leaves[li] = fresh;
	return fresh;
}

/* A leaf that holds nothing, or only REMOVED entries, is freed. */
static void leaf_settle(struct pn_file_image *im, uint64_t idx)
{
	uint64_t li = idx / PN_LEAF_CHUNKS;
	struct pn_leaf *l = im->leaves[li];
	if (l->real || (l->removed && l->removed < PN_LEAF_CHUNKS))
		return;
	im->leaves[li] = l->removed ? &removed_leaf : NULL;
	free(l);
}

/* The chunk at idx, private to this image (copied first if shared), about to have
 * [in, in + n) overwritten: those bytes of a new or copied chunk are not filled first. */
static uint8_t *chunk_for(struct pn_file_image *im, uint64_t idx, uint32_t in, uint32_t n)
{
	struct pn_leaf *l = leaf_for(im, idx);
	struct pn_chunk **slot = &l->chunk[idx % PN_LEAF_CHUNKS];
	PN_ASSERT(*slot != REMOVED && "a write to a removed (recycled) region (DV1)");
	if (!*slot) {
		*slot = chunk_new_but(NULL, in, n);
		l->real++;
		im->chunks++;
		im->chunks_peak = PN_MAX(im->chunks_peak, im->chunks);
	} else if ((*slot)->refs > 1) {
		struct pn_chunk *copy = chunk_new_but((*slot)->data, in, n);
		(*slot)->refs--;
		*slot = copy;
	}
	renamed(*slot); /* CK5: about to be written */
	return (*slot)->data;
}

void pn_image_write(struct pn_file_image *im, uint64_t off, const uint8_t *buf, uint32_t len)
{
	while (len) {
		uint64_t idx = off / PN_CHUNK_SIZE;
		uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE), n = PN_MIN(len, PN_CHUNK_SIZE - in);
		memcpy(chunk_for(im, idx, in, n) + in, buf, n);
		off += n;
		buf += n;
		len -= n;
	}
}

void pn_image_read(const struct pn_file_image *im, uint64_t off, uint32_t len, uint8_t *out)
{
	while (len) {
		uint64_t idx = off / PN_CHUNK_SIZE;
		uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE), n = PN_MIN(len, PN_CHUNK_SIZE - in);
		const struct pn_chunk *c = chunk_at(im, idx);
		PN_ASSERT(c != REMOVED && "a read of a removed (recycled) region (DV1)");
		if (c)
			memcpy(out, c->data + in, n);
		else
			memset(out, 0, n);
		off += n;
		out += n;
		len -= n;
	}
}

/* CK3: one unwritten chunk's bytes as built, into out (false: the format wrote none there). */
static bool lazy_chunk(const struct pn_lazy *lz, uint64_t idx, uint8_t out[PN_CHUNK_SIZE])
{
	uint64_t off = idx * PN_CHUNK_SIZE;
	return off < lz->end && lz->fn(lz->ctx, lz->f, off, PN_CHUNK_SIZE, out);
}

/* CK3: a chunk's parts, PART bytes each, as bits of pn_chunk.unbuilt. */
#define PARTS 16u
#define PART (PN_CHUNK_SIZE / PARTS)
#define ALL_PARTS ((1u << PARTS) - 1)
#define HALF_PARTS ((1u << PARTS / 2) - 1) /* the low half's parts */

/* The parts that [in, end) of a chunk meets (end > in). */
static uint32_t parts_meeting(uint32_t in, uint32_t end)
{
	uint32_t first = in / PART, last = (end - 1) / PART;
	return ((1u << (last + 1)) - 1) & ~((1u << first) - 1);
}

/* CK3: a new chunk of which every part is unbuilt, holding bytes for the half of it that
 * [in, end) lies in (c->half), or for all of it when [in, end) meets both. */
static struct pn_chunk *chunk_unbuilt(uint32_t in, uint32_t end)
{
	uint32_t h = end <= HALF ? 1 : in >= HALF ? 2 : 0;
	struct pn_chunk *c = h ? malloc(sizeof(*c)) : chunk_new_but(NULL, 0, PN_CHUNK_SIZE);
	PN_ASSERT(c != NULL);
	if (h)
		c->data = half_get(h - 1);
	c->refs = 1;
	c->unbuilt = ALL_PARTS;
	c->half = (uint16_t)h;
	renamed(c);
	return c;
}

/* CK3: half chunk c, about to have its other half written, holds all its bytes from now on
 * (its other half still unbuilt). */
static void chunk_whole(struct pn_chunk *c)
{
	uint32_t h = c->half - 1u;
	PN_ASSERT(c->half &&
		  (c->unbuilt | (h ? HALF_PARTS : ALL_PARTS & ~HALF_PARTS)) == c->unbuilt);
	uint8_t *b = bytes_get();
	memcpy(b + h * HALF, c->data + h * HALF, HALF);
	half_put(c->data, h);
	c->data = b;
	c->half = 0;
	renamed(c);
}

/* CK3: [in, in + n) of real chunk c of lazy file f (at chunk index idx), as readers see it:
 * its bytes where built, the builder's where not. */
static void chunk_read(const struct pn_lazy *lz, uint64_t idx, const struct pn_chunk *c,
		       uint32_t in, uint32_t n, uint8_t *out)
{
	uint64_t at = idx * PN_CHUNK_SIZE;
	for (uint32_t end = in + n; in < end;) {
		bool unbuilt = (c->unbuilt >> (in / PART)) & 1;
		uint32_t to = (in / PART + 1) * PART; /* the run of parts alike from in */
		while (to < end && (((c->unbuilt >> (to / PART)) & 1) == unbuilt))
			to += PART;
		to = PN_MIN(to, end);
		if (unbuilt)
			(void)lz->fn(lz->ctx, lz->f, at + in, to - in, out); /* zeros where none */
		else
			memcpy(out, c->data + in, to - in);
		out += to - in;
		in = to;
	}
}

/* CK3: cur's reads of a lazy file, chunk by chunk: an unwritten chunk below its end, and the
 * unbuilt parts of a written one, are built. */
void pn_lazy_read(const struct pn_lazy *lz, const struct pn_file_image *im, uint64_t off,
		  uint32_t len, uint8_t *out)
{
	while (len) {
		uint64_t idx = off / PN_CHUNK_SIZE;
		uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE), n = PN_MIN(len, PN_CHUNK_SIZE - in);
		const struct pn_chunk *c = chunk_at(im, idx);
		if (is_real(c) && c->unbuilt)
			chunk_read(lz, idx, c, in, n, out);
		else if (c || off >= lz->end)
			pn_image_read(im, off, n, out);
		else
			(void)lz->fn(lz->ctx, lz->f, off, n, out); /* zeros where nothing was */
		off += n;
		out += n;
		len -= n;
	}
}

/* CK3: before a write to cur of [off, off + len), a chunk of a lazy file it touches is real,
 * and each unbuilt part of it that the write covers only in part is built; the parts it
 * touches are built from then on, and a new chunk's other parts stay unbuilt. */
void pn_lazy_fill(const struct pn_lazy *lz, struct pn_file_image *im, uint64_t off, uint32_t len)
{
	for (uint64_t idx = off / PN_CHUNK_SIZE; idx * PN_CHUNK_SIZE < off + len; idx++) {
		uint64_t at = idx * PN_CHUNK_SIZE;
		const struct pn_chunk *had = chunk_at(im, idx);
		if (had == REMOVED || (!had && at >= lz->end) || (had && !had->unbuilt))
			continue;
		struct pn_leaf *l = leaf_for(im, idx);
		struct pn_chunk *c = l->chunk[idx % PN_LEAF_CHUNKS];
		uint32_t in = (uint32_t)(PN_MAX(off, at) - at);
		uint32_t end = (uint32_t)(PN_MIN(off + len, at + PN_CHUNK_SIZE) - at);
		if (!c) {
			c = chunk_unbuilt(in, end); /* built below, or unbuilt */
			l->chunk[idx % PN_LEAF_CHUNKS] = c;
			l->real++;
			im->chunks++;
			im->chunks_peak = PN_MAX(im->chunks_peak, im->chunks);
		}
		PN_ASSERT(c->refs == 1 && "a chunk with unbuilt parts is never shared (CK3)");
		if (c->half && (c->half == 1 ? end > HALF : in < HALF))
			chunk_whole(c);
		uint32_t partial = (in % PART ? 1u << (in / PART) : 0) |
				   (end % PART ? 1u << ((end - 1) / PART) : 0);
		for (uint32_t p = 0; p < PARTS; p++)
			if ((c->unbuilt & partial) >> p & 1)
				(void)lz->fn(lz->ctx, lz->f, at + p * PART, PART,
					     c->data + p * PART);
		c->unbuilt = (uint16_t)(c->unbuilt & ~parts_meeting(in, end));
		renamed(c); /* CK5: parts built, and about to be written */
	}
}

/* CK2: the chunks of [off, off + len) in dur that hold the same bytes as cur's become cur's
 * (one copy, shared copy-on-write): what was synced is usually what reads see. */
void pn_image_share(const struct pn_file_image *cur, struct pn_file_image *dur, uint64_t off,
		    uint64_t len)
{
	for (uint64_t idx = off / PN_CHUNK_SIZE; idx * PN_CHUNK_SIZE < off + len; idx++) {
		const struct pn_chunk *c = chunk_at(cur, idx), *u = chunk_at(dur, idx);
		if (!is_real(c) || !is_real(u) || c == u ||
		    memcmp(c->data, u->data, PN_CHUNK_SIZE) != 0)
			continue;
		struct pn_chunk *shared = cur->leaves[idx / PN_LEAF_CHUNKS]
						  ->chunk[idx % PN_LEAF_CHUNKS];
		struct pn_chunk **slot = &dur->leaves[idx / PN_LEAF_CHUNKS]
						  ->chunk[idx % PN_LEAF_CHUNKS];
		chunk_put(*slot);
		shared->refs++;
		*slot = shared;
	}
}

uint64_t pn_chunks_pool_bytes(void) { return pool.live * HALF; }
/* DV1 (remove) and DV2 (create) on one image, chunk by chunk. */
void pn_image_mark(struct pn_file_image *im, uint64_t idx, bool remove)
{
	const struct pn_chunk *c = chunk_at(im, idx);
	if (remove ? c == REMOVED : c != REMOVED)
		return;
	struct pn_leaf *l = leaf_for(im, idx);
	struct pn_chunk **slot = &l->chunk[idx % PN_LEAF_CHUNKS];
	if (!remove) {
		*slot = NULL;
		l->removed--;
	} else {
		if (*slot) {
			chunk_put(*slot);
			l->real--;
			im->chunks--;
		}
		*slot = REMOVED;
		l->removed++;
	}
	leaf_settle(im, idx);
}
/* CK4: whether a lent half h (0 low, 1 high) can become the bytes of [off, off + len): one
 * aligned half of that parity whose chunk is absent (below the lazy end: a new half chunk)
 * or a half chunk of h of its own (refs 1). */
static bool lend_fits(const struct pn_lazy *lz, const struct pn_file_image *im, uint64_t off,
		      uint32_t len, uint32_t h)
{
	if (len != HALF || off % HALF || (off % PN_CHUNK_SIZE) / HALF != h)
		return false;
	uint64_t idx = off / PN_CHUNK_SIZE;
	const struct pn_chunk *c = chunk_at(im, idx);
	if (!c)
		return idx * PN_CHUNK_SIZE < lz->end;
	return c != REMOVED && c->half == h + 1 && c->refs == 1;
}

uint8_t *pn_chunks_lend(const struct pn_lazy *lz, const struct pn_file_image *im, uint64_t off,
			uint32_t len, uint32_t *half)
{
	uint32_t h = (uint32_t)(off % PN_CHUNK_SIZE / HALF);
	if (!lend_fits(lz, im, off, len, h))
		return NULL;
	*half = h + 1;
	return half_get(h) + h * HALF;
}

void pn_chunks_lend_back(uint8_t *buf, uint32_t half)
{
	PN_ASSERT(half == 1 || half == 2);
	half_put(buf - (half - 1) * HALF, half - 1);
}

bool pn_chunks_take_lent(const struct pn_lazy *lz, struct pn_file_image *im, uint64_t off,
			 uint32_t len, uint8_t *buf, uint32_t half)
{
	PN_ASSERT(half == 1 || half == 2);
	if (!lend_fits(lz, im, off, len, half - 1))
		return false;
	uint64_t idx = off / PN_CHUNK_SIZE;
	uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE);
	struct pn_leaf *l = leaf_for(im, idx);
	struct pn_chunk **at = &l->chunk[idx % PN_LEAF_CHUNKS];
	uint8_t *slot = buf - in;
	if (*at) { /* a half chunk of this half: the lent half replaces its bytes */
		half_put((*at)->data, half - 1);
		(*at)->data = slot;
		renamed(*at);
	} else { /* as pn_lazy_fill makes it (chunk_unbuilt), holding the lent half */
		struct pn_chunk *c = malloc(sizeof(*c));
		PN_ASSERT(c != NULL);
		c->data = slot;
		c->refs = 1;
		c->unbuilt = ALL_PARTS;
		c->half = (uint16_t)half;
		renamed(c);
		*at = c;
		l->real++;
		im->chunks++;
		im->chunks_peak = PN_MAX(im->chunks_peak, im->chunks);
	}
	(*at)->unbuilt = (uint16_t)((*at)->unbuilt & ~parts_meeting(in, in + HALF));
	return true;
}

/* CK3: chunk idx as readers see it, when that is not its own bytes alone. */
bool pn_lazy_chunk(const struct pn_lazy *lz, const struct pn_file_image *im, uint64_t idx,
		   uint8_t out[PN_CHUNK_SIZE])
{
	const struct pn_chunk *c = chunk_at(im, idx);
	if (is_real(c) && c->unbuilt) {
		chunk_read(lz, idx, c, 0, PN_CHUNK_SIZE, out);
		return true;
	}
	return !c && lz->end && lazy_chunk(lz, idx, out);
}

const struct pn_chunk *pn_image_chunk(const struct pn_file_image *im, uint64_t idx)
{
	return chunk_at(im, idx);
}

uint64_t pn_image_held(const struct pn_file_image *im, bool peak)
{
	return (peak ? im->chunks_peak : im->chunks) * PN_CHUNK_SIZE;
}

void pn_image_copy(const struct pn_file_image *src, struct pn_file_image *dst)
{
	pn_image_free(dst);
	if (!src->nleaves)
		return;
	dst->leaves = malloc(src->nleaves * sizeof(*dst->leaves));
	PN_ASSERT(dst->leaves != NULL);
	dst->nleaves = src->nleaves;
	dst->chunks = dst->chunks_peak = src->chunks;
	for (uint64_t i = 0; i < src->nleaves; i++) {
		const struct pn_leaf *l = src->leaves[i];
		dst->leaves[i] = src->leaves[i];
		if (!leaf_is_real(l))
			continue;
		struct pn_leaf *copy = malloc(sizeof(*copy));
		PN_ASSERT(copy != NULL);
		memcpy(copy, l, sizeof(*copy));
		for (uint32_t k = 0; k < PN_LEAF_CHUNKS; k++)
			if (is_real(copy->chunk[k]))
				copy->chunk[k]->refs++;
		dst->leaves[i] = copy;
	}
}
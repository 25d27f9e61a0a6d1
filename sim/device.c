/*
 * device.c: the simulated device (sim layer). Format and crash model in device.h.
 */
#include "device.h"

#include <stdlib.h>
#include <string.h>

#include "pn.h"
#include <xxhash.h>

void pn_device_init(struct pn_device *d, bool track, uint32_t atomic_unit)
{
	PN_ASSERT(atomic_unit >= 512 && (atomic_unit & (atomic_unit - 1)) == 0);
	memset(d, 0, sizeof(*d));
	d->track = track;
	d->atomic_unit = atomic_unit;
}

void pn_device_set_lazy(struct pn_device *d, enum pn_file f, uint64_t end, pn_device_lazy_fn fn,
			void *ctx)
{
	PN_ASSERT(!d->track && "a tracked device takes no lazy extents (D8)");
	PN_ASSERT(fn != NULL && (!d->lazy || (d->lazy == fn && d->lazy_ctx == ctx)));
	d->lazy = fn;
	d->lazy_ctx = ctx;
	d->lazy_end[f] = end;
}

void pn_device_set_sink(struct pn_device *d, enum pn_file f)
{
	PN_ASSERT(!d->track && "a tracked device keeps every write (D9)");
	d->sink[f] = true;
}

/* The REMOVED marks (D1): a chunk entry, and a whole leaf of them. Compared by identity
 * only, never ordered. */
static struct pn_chunk removed_chunk;
static struct pn_leaf removed_leaf;
#define REMOVED (&removed_chunk)

static bool is_real(const struct pn_chunk *c) { return c && c != REMOVED; }

/*
 * Chunk bytes come from slabs of SLAB_CHUNKS and go back to a free list (linked through the
 * free chunks' first bytes), not to malloc: jemalloc pads every large allocation by a page
 * (cache-oblivious placement), 25 % on a 16 KiB chunk. A slab is one huge page
 * (pn_huge_alloc): formatting a 160 MiB data file used to take 41,000 page faults, a fifth
 * of `run`'s time on pgbench scale 10 (docs/performance.md). The pool only grows, to the most
 * chunks alive at once; a run that follows another reuses its chunks. One pool per
 * process: the simulator is single-threaded (check --jobs forks). A lazy chunk written in one
 * half only (D8) takes half a slot: the slot's other half waits in half_free for a chunk
 * that holds the other half.
 */
#define SLAB_CHUNKS (PN_HUGE_PAGE / PN_CHUNK_SIZE)
static struct {
	uint8_t *free; /* a free chunk; its first bytes point at the next */
	uint8_t *slab; /* the newest slab and how many of its chunks are handed out */
	uint32_t slab_used;
	uint8_t **slabs; /* every slab, so that all stay reachable */
	size_t nslabs, cap;
	uint8_t *half_free[2]; /* D8: slots whose low (0) or high (1) half is free; the link is
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

/* D8: a slot of which half h (0 low, 1 high) is the caller's; the other half of a slot
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
	return c;
}

static bool leaf_is_real(const struct pn_leaf *l) { return l && l != &removed_leaf; }

static void image_free(struct pn_file_image *im)
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

void pn_device_free(struct pn_device *d)
{
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		image_free(&d->cur[f]);
		image_free(&d->dur[f]);
	}
	for (uint32_t i = 0; i < d->nunsynced; i++)
		free(d->unsynced[i].data);
	free(d->unsynced);
	free(d->summary_buf);
	memset(d, 0, sizeof(*d));
}

/* The chunk at idx: NULL (unwritten), REMOVED, or a chunk. */
static const struct pn_chunk *chunk_at(const struct pn_file_image *im, uint64_t idx)
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
	PN_ASSERT(*slot != REMOVED && "a write to a removed (recycled) region (D1)");
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
	return (*slot)->data;
}

static void image_write(struct pn_file_image *im, uint64_t off, const uint8_t *buf, uint32_t len)
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

static void image_read(const struct pn_file_image *im, uint64_t off, uint32_t len, uint8_t *out)
{
	while (len) {
		uint64_t idx = off / PN_CHUNK_SIZE;
		uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE), n = PN_MIN(len, PN_CHUNK_SIZE - in);
		const struct pn_chunk *c = chunk_at(im, idx);
		PN_ASSERT(c != REMOVED && "a read of a removed (recycled) region (D1)");
		if (c)
			memcpy(out, c->data + in, n);
		else
			memset(out, 0, n);
		off += n;
		out += n;
		len -= n;
	}
}

/* D8: one chunk's bytes as built, into out (false: the format wrote none there). */
static bool lazy_chunk(const struct pn_device *d, enum pn_file f, uint64_t idx,
		       uint8_t out[PN_CHUNK_SIZE])
{
	uint64_t off = idx * PN_CHUNK_SIZE;
	return off < d->lazy_end[f] && d->lazy(d->lazy_ctx, f, off, PN_CHUNK_SIZE, out);
}

/* D8: a chunk's parts, PART bytes each, as bits of pn_chunk.unbuilt. */
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

/* D8: a new chunk of which every part is unbuilt, holding bytes for the half of it that
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
	return c;
}

/* D8: half chunk c, about to have its other half written, holds all its bytes from now on
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
}

/* D8: [in, in + n) of real chunk c of lazy file f (at chunk index idx), as readers see it:
 * its bytes where built, the builder's where not. */
static void chunk_read(const struct pn_device *d, enum pn_file f, uint64_t idx,
		       const struct pn_chunk *c, uint32_t in, uint32_t n, uint8_t *out)
{
	uint64_t at = idx * PN_CHUNK_SIZE;
	for (uint32_t end = in + n; in < end;) {
		bool unbuilt = (c->unbuilt >> (in / PART)) & 1;
		uint32_t to = (in / PART + 1) * PART; /* the run of parts alike from in */
		while (to < end && (((c->unbuilt >> (to / PART)) & 1) == unbuilt))
			to += PART;
		to = PN_MIN(to, end);
		if (unbuilt)
			(void)d->lazy(d->lazy_ctx, f, at + in, to - in, out); /* zeros where none */
		else
			memcpy(out, c->data + in, to - in);
		out += to - in;
		in = to;
	}
}

/* D8: cur's reads of a lazy file, chunk by chunk: an unwritten chunk below its end, and the
 * unbuilt parts of a written one, are built. */
static void lazy_read(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		      uint8_t *out)
{
	const struct pn_file_image *im = &d->cur[f];
	while (len) {
		uint64_t idx = off / PN_CHUNK_SIZE;
		uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE), n = PN_MIN(len, PN_CHUNK_SIZE - in);
		const struct pn_chunk *c = chunk_at(im, idx);
		if (is_real(c) && c->unbuilt)
			chunk_read(d, f, idx, c, in, n, out);
		else if (c || off >= d->lazy_end[f])
			image_read(im, off, n, out);
		else
			(void)d->lazy(d->lazy_ctx, f, off, n, out); /* zeros where nothing was */
		off += n;
		out += n;
		len -= n;
	}
}

/* D8: before a write to cur of [off, off + len), a chunk of a lazy file it touches is real,
 * and each unbuilt part of it that the write covers only in part is built; the parts it
 * touches are built from then on, and a new chunk's other parts stay unbuilt. */
static void lazy_fill(struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len)
{
	struct pn_file_image *im = &d->cur[f];
	for (uint64_t idx = off / PN_CHUNK_SIZE; idx * PN_CHUNK_SIZE < off + len; idx++) {
		uint64_t at = idx * PN_CHUNK_SIZE;
		const struct pn_chunk *had = chunk_at(im, idx);
		if (had == REMOVED || (!had && at >= d->lazy_end[f]) || (had && !had->unbuilt))
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
		PN_ASSERT(c->refs == 1 && "a chunk with unbuilt parts is never shared (D8)");
		if (c->half && (c->half == 1 ? end > HALF : in < HALF))
			chunk_whole(c);
		uint32_t partial = (in % PART ? 1u << (in / PART) : 0) |
				   (end % PART ? 1u << ((end - 1) / PART) : 0);
		for (uint32_t p = 0; p < PARTS; p++)
			if ((c->unbuilt & partial) >> p & 1)
				(void)d->lazy(d->lazy_ctx, f, at + p * PART, PART,
					      c->data + p * PART);
		c->unbuilt = (uint16_t)(c->unbuilt & ~parts_meeting(in, end));
	}
}

/* D4: the chunks of [off, off + len) in dur that hold the same bytes as cur's become cur's
 * (one copy, shared copy-on-write): what was synced is usually what reads see. */
static void share_synced(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len)
{
	struct pn_file_image *cur = &d->cur[f], *dur = &d->dur[f];
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

uint64_t pn_device_pool_bytes(void) { return pool.live * HALF; }

/* D1 (remove) and D2 (create) on one image, chunk by chunk. */
static void image_mark(struct pn_file_image *im, uint64_t idx, bool remove)
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

static void mark_range(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len, bool remove)
{
	PN_ASSERT(off % PN_CHUNK_SIZE == 0 && len % PN_CHUNK_SIZE == 0);
	for (uint64_t idx = off / PN_CHUNK_SIZE; idx < (off + len) / PN_CHUNK_SIZE; idx++) {
		image_mark(&d->cur[f], idx, remove);
		if (d->track)
			image_mark(&d->dur[f], idx, remove);
	}
}

void pn_device_remove(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len)
{
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		PN_ASSERT(u->file != f || u->offset + u->len <= off || u->offset >= off + len);
	}
	mark_range(d, f, off, len, true);
}

void pn_device_create(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len)
{
	mark_range(d, f, off, len, false);
}

uint64_t pn_device_held(const struct pn_device *d, enum pn_file f, bool peak)
{
	const struct pn_file_image *im = &d->cur[f];
	return (peak ? im->chunks_peak : im->chunks) * PN_CHUNK_SIZE;
}

/* D6 */
static void range_log(struct pn_range_log *log, enum pn_file f, uint64_t off, uint32_t len)
{
	if (!log || !len)
		return;
	if (log->n == log->cap) {
		log->cap = log->cap ? 2 * log->cap : 256;
		log->r = realloc(log->r, log->cap * sizeof(*log->r));
		PN_ASSERT(log->r != NULL);
	}
	log->r[log->n++] = (struct pn_range){.file = (uint32_t)f, .len = len, .off = off};
}

static void cur_read(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		     uint8_t *out)
{
	PN_ASSERT(!d->sink[f] && "a write-only file is read (D9)");
	if (d->lazy_end[f])
		lazy_read(d, f, off, len, out);
	else
		image_read(&d->cur[f], off, len, out);
}

/* D11: logs to `reads` the parts of [off, off + len) of file f that no range of the write
 * log from index k on covers (those hold the tracked run's own bytes). */
static void read_log(const struct pn_device *d, uint32_t k, enum pn_file f, uint64_t off,
		     uint64_t end)
{
	for (; k < (d->writes ? d->writes->n : 0) && off < end; k++) {
		const struct pn_range *w = &d->writes->r[k];
		if (!pn_range_meets(w, (uint32_t)f, off, end - off))
			continue;
		if (off < w->off)
			read_log(d, k + 1, f, off, w->off);
		off = w->off + w->len; /* [w->off, off) is the run's own */
	}
	if (off < end)
		range_log(d->reads, f, off, (uint32_t)(end - off));
}

void pn_device_read(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		    uint8_t *out)
{
	if (d->reads)
		read_log(d, 0, f, off, off + len);
	cur_read(d, f, off, len, out);
}

/* D10: whether a write of the log meets [off, off + len) of file f. */
static bool written(const struct pn_range_log *log, enum pn_file f, uint64_t off, uint32_t len)
{
	for (uint32_t i = 0; i < log->n; i++)
		if (pn_range_meets(&log->r[i], (uint32_t)f, off, len))
			return true;
	return false;
}

static void summary_log(struct pn_summary_log *log, const struct pn_summary_read *r)
{
	if (log->n == log->cap) {
		log->cap = log->cap ? 2 * log->cap : 64;
		log->r = realloc(log->r, log->cap * sizeof(*log->r));
		PN_ASSERT(log->r != NULL);
	}
	log->r[log->n++] = *r;
}

struct pn_summary_value pn_device_read_summary(struct pn_device *d, enum pn_file f, uint64_t off,
					       uint32_t len, const struct pn_summary *s)
{
	PN_ASSERT(s->fn != NULL && len > 0);
	if (len > d->summary_cap) {
		d->summary_buf = realloc(d->summary_buf, len);
		PN_ASSERT(d->summary_buf != NULL);
		d->summary_cap = len;
	}
	cur_read(d, f, off, len, d->summary_buf);
	struct pn_summary_read r = {.file = (uint32_t)f, .len = len, .off = off, .s = *s};
	r.v = s->fn(d->summary_buf, len, s->arg);
	if (d->summaries && d->reads && d->writes && !written(d->writes, f, off, len))
		summary_log(d->summaries, &r);
	else if (d->reads)
		read_log(d, 0, f, off, off + len);
	return r.v;
}

void pn_device_read_dur(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint8_t *out)
{
	image_read(&d->dur[f], off, len, out);
}

void pn_device_format_write(struct pn_device *d, enum pn_file f, uint64_t off, const uint8_t *buf,
			    uint32_t len)
{
	range_log(d->writes, f, off, len);
	if (d->lazy_end[f])
		lazy_fill(d, f, off, len);
	if (!d->sink[f]) /* D9 */
		image_write(&d->cur[f], off, buf, len);
	if (d->track) {
		image_write(&d->dur[f], off, buf, len);
		share_synced(d, f, off, len);
	}
	d->version++;
	d->dur_version++;
}

void pn_device_write(struct pn_device *d, const struct pn_io *io, uint64_t event)
{
	range_log(d->writes, io->file, io->offset, io->len);
	if (d->lazy_end[io->file])
		lazy_fill(d, io->file, io->offset, io->len);
	if (!d->sink[io->file]) /* D9 */
		image_write(&d->cur[io->file], io->offset, io->buf, io->len);
	d->bytes_written[io->file] += io->len;
	d->version++;
	if (!d->track)
		return;
	if (d->nunsynced == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->unsynced = realloc(d->unsynced, d->cap * sizeof(*d->unsynced));
		PN_ASSERT(d->unsynced != NULL);
	}
	struct pn_unsynced *u = &d->unsynced[d->nunsynced++];
	memset(u, 0, sizeof(*u));
	u->file = io->file;
	u->offset = io->offset;
	u->len = io->len;
	u->data = malloc(io->len);
	PN_ASSERT(u->data != NULL);
	memcpy(u->data, io->buf, io->len);
	u->seq = ++d->seq;
	u->event = event;
	u->io_index = io->index;
	u->why = io->why;
	u->page = io->page;
	u->slot = io->slot;
}

/* D12: the chunk at idx of f, if a lent half h (0 low, 1 high) can become its bytes: absent
 * (below the lazy end: a new half chunk), or a half chunk of h of its own (refs 1). */
static bool lend_fits(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		      uint32_t h)
{
	if (d->track || d->sink[f] || len != HALF || off % HALF ||
	    (off % PN_CHUNK_SIZE) / HALF != h)
		return false;
	uint64_t idx = off / PN_CHUNK_SIZE;
	const struct pn_chunk *c = chunk_at(&d->cur[f], idx);
	if (!c)
		return idx * PN_CHUNK_SIZE < d->lazy_end[f];
	return c != REMOVED && c->half == h + 1 && c->refs == 1;
}

uint8_t *pn_device_lend(struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint32_t *half)
{
	uint32_t h = (uint32_t)(off % PN_CHUNK_SIZE / HALF);
	if (!lend_fits(d, f, off, len, h))
		return NULL;
	*half = h + 1;
	return half_get(h) + h * HALF;
}

void pn_device_lend_back(uint8_t *buf, uint32_t half)
{
	PN_ASSERT(half == 1 || half == 2);
	half_put(buf - (half - 1) * HALF, half - 1);
}

void pn_device_write_lent(struct pn_device *d, const struct pn_io *io, uint32_t half,
			  uint64_t event)
{
	PN_ASSERT(io->lent && (half == 1 || half == 2) && !d->track);
	if (!lend_fits(d, io->file, io->offset, io->len, half - 1)) {
		pn_device_write(d, io, event); /* as a copy; the half goes back */
		pn_device_lend_back(io->buf, half);
		d->lent_copied++;
		return;
	}
	struct pn_file_image *im = &d->cur[io->file];
	uint64_t idx = io->offset / PN_CHUNK_SIZE;
	uint32_t in = (uint32_t)(io->offset % PN_CHUNK_SIZE);
	struct pn_leaf *l = leaf_for(im, idx);
	struct pn_chunk **at = &l->chunk[idx % PN_LEAF_CHUNKS];
	uint8_t *slot = io->buf - in;
	if (*at) { /* a half chunk of this half: the lent half replaces its bytes */
		half_put((*at)->data, half - 1);
		(*at)->data = slot;
	} else { /* as lazy_fill makes it (chunk_unbuilt), holding the lent half */
		struct pn_chunk *c = malloc(sizeof(*c));
		PN_ASSERT(c != NULL);
		c->data = slot;
		c->refs = 1;
		c->unbuilt = ALL_PARTS;
		c->half = (uint16_t)half;
		*at = c;
		l->real++;
		im->chunks++;
		im->chunks_peak = PN_MAX(im->chunks_peak, im->chunks);
	}
	(*at)->unbuilt = (uint16_t)((*at)->unbuilt & ~parts_meeting(in, in + HALF));
	range_log(d->writes, io->file, io->offset, io->len);
	d->bytes_written[io->file] += io->len;
	d->version++;
	d->lent_taken++;
}

void pn_device_write_done(struct pn_device *d, uint32_t io_index)
{
	for (uint32_t i = d->nunsynced; i-- > 0;) {
		struct pn_unsynced *u = &d->unsynced[i];
		if (!u->completed && u->io_index == io_index) {
			u->completed = true;
			u->completed_seq = ++d->seq;
			return;
		}
	}
}

uint64_t pn_device_fsync_start(struct pn_device *d) { return ++d->seq; }

void pn_device_fsync_done(struct pn_device *d, enum pn_file f, uint64_t mark)
{
	uint32_t keep = 0;
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		struct pn_unsynced *u = &d->unsynced[i];
		if (u->file == f && u->completed && u->completed_seq < mark) {
			d->version++;
			d->dur_version++;
			image_write(&d->dur[u->file], u->offset, u->data, u->len);
			share_synced(d, u->file, u->offset, u->len);
			free(u->data);
			continue;
		}
		d->unsynced[keep++] = *u;
	}
	d->nunsynced = keep;
}

/* dst becomes a copy of src, sharing its chunks (each leaf is copied: a table copy). */
static void image_copy(const struct pn_file_image *src, struct pn_file_image *dst)
{
	image_free(dst);
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

/* D5: the aligned blocks [off, off + len) touches, and how many of them make one unit. */
static uint64_t blocks_of(const struct pn_device *d, uint64_t off, uint32_t len, uint32_t *per)
{
	PN_ASSERT(len > 0 && d->atomic_unit > 0);
	uint64_t first = off / d->atomic_unit, last = (off + len - 1) / d->atomic_unit;
	uint64_t blocks = last - first + 1;
	*per = (uint32_t)((blocks + 63) / 64);
	return blocks;
}

uint32_t pn_device_unit(const struct pn_device *d, uint64_t off, uint32_t len, uint32_t *nunits)
{
	uint32_t per;
	uint64_t blocks = blocks_of(d, off, len, &per);
	*nunits = (uint32_t)((blocks + per - 1) / per);
	PN_ASSERT(*nunits >= 1 && *nunits <= 64);
	return per * d->atomic_unit;
}

uint32_t pn_device_unit_span(const struct pn_device *d, uint64_t off, uint32_t len, uint32_t i,
			     uint32_t *at)
{
	uint32_t per;
	blocks_of(d, off, len, &per);
	uint64_t unit = (uint64_t)per * d->atomic_unit;
	uint64_t start = off / d->atomic_unit * d->atomic_unit + i * unit;
	uint64_t from = PN_MAX(off, start), to = PN_MIN(off + len, start + unit);
	PN_ASSERT(from < to);
	*at = (uint32_t)(from - off);
	return (uint32_t)(to - from);
}

/* The next run of write u's bytes that a crash under fate keeps, from unit *s on: its length
 * (0: none left) and its offset into the write (*at). PERSISTED: the whole write, once. */
static uint32_t kept_span(const struct pn_device *d, const struct pn_unsynced *u,
			  const struct pn_write_fate *fate, uint32_t *s, uint32_t *at)
{
	if (fate->fate == PN_FATE_LOST)
		return 0;
	if (fate->fate == PN_FATE_PERSISTED) {
		*at = 0;
		return (*s)++ ? 0 : u->len;
	}
	uint32_t nunits;
	pn_device_unit(d, u->offset, u->len, &nunits);
	for (; *s < nunits; (*s)++)
		if (fate->sectors & (1ull << *s))
			return pn_device_unit_span(d, u->offset, u->len, (*s)++, at);
	return 0;
}

void pn_device_crash_image(const struct pn_device *d, const struct pn_write_fate *fates,
			   struct pn_device *out)
{
	PN_ASSERT(d->track);
	for (int f = 0; f < PN_FILE_COUNT; f++)
		image_copy(&d->dur[f], &out->cur[f]);
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		uint32_t s = 0, at, n;
		while ((n = kept_span(d, u, &fates[i], &s, &at)) != 0)
			image_write(&out->cur[u->file], u->offset + at, u->data + at, n);
	}
	if (out->track)
		for (int f = 0; f < PN_FILE_COUNT; f++)
			image_copy(&out->cur[f], &out->dur[f]);
}

void pn_device_crash_read(const struct pn_device *d, const struct pn_write_fate *fates,
			  enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	PN_ASSERT(d->track);
	image_read(&d->dur[f], off, len, out);
	for (uint32_t i = 0; i < d->nunsynced; i++) { /* in the order crash_image applies them */
		const struct pn_unsynced *u = &d->unsynced[i];
		uint64_t end = PN_MIN(off + len, u->offset + u->len);
		if (u->file != f || u->offset >= end || off >= end)
			continue;
		uint32_t s = 0, at, n;
		while ((n = kept_span(d, u, &fates[i], &s, &at)) != 0) {
			/* [lo, hi) of the file, the part of this run inside [off, off + len) */
			uint64_t lo = PN_MAX(off, u->offset + at),
				 hi = PN_MIN(end, u->offset + at + n);
			if (lo < hi)
				memcpy(out + (lo - off), u->data + (lo - u->offset), hi - lo);
		}
	}
}

/* D7: the units of write u a crash under fate keeps, as a mask (bit i: unit i). */
static uint64_t kept_units(const struct pn_device *d, const struct pn_unsynced *u,
			   const struct pn_write_fate *fate)
{
	if (fate->fate == PN_FATE_LOST)
		return 0;
	uint32_t nunits;
	pn_device_unit(d, u->offset, u->len, &nunits);
	uint64_t all = nunits == 64 ? ~0ull : (1ull << nunits) - 1;
	return fate->fate == PN_FATE_PERSISTED ? all : fate->sectors & all;
}

bool pn_device_fate_same(const struct pn_device *d, uint32_t i, const struct pn_write_fate *a,
			 const struct pn_write_fate *b)
{
	PN_ASSERT(i < d->nunsynced);
	if (a->fate == b->fate && a->fate != PN_FATE_TORN)
		return true;
	const struct pn_unsynced *u = &d->unsynced[i];
	return kept_units(d, u, a) == kept_units(d, u, b);
}

bool pn_device_crash_same(const struct pn_device *d, const struct pn_write_fate *a,
			  const struct pn_write_fate *b, enum pn_file f, uint64_t off, uint64_t len)
{
	uint8_t x[4096], y[4096]; /* compared a piece at a time: each read visits every write */
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		uint64_t lo = PN_MAX(off, u->offset), hi = PN_MIN(off + len, u->offset + u->len);
		if (u->file != f || lo >= hi || pn_device_fate_same(d, i, &a[i], &b[i]))
			continue;
		for (; lo < hi; lo += sizeof(x)) {
			uint32_t m = (uint32_t)PN_MIN(hi - lo, sizeof(x));
			pn_device_crash_read(d, a, f, lo, m, x);
			pn_device_crash_read(d, b, f, lo, m, y);
			if (memcmp(x, y, m) != 0)
				return false;
		}
	}
	return true;
}

bool pn_device_crash_summary_same(const struct pn_device *d, const struct pn_write_fate *a,
				  const struct pn_write_fate *b, const struct pn_summary_read *r,
				  uint8_t *buf)
{
	enum pn_file f = (enum pn_file)r->file;
	bool differ = false; /* D7: the images differ only inside writes whose fates differ */
	for (uint32_t i = 0; i < d->nunsynced && !differ; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		differ = u->file == f && u->offset < r->off + r->len &&
			 r->off < u->offset + u->len && !pn_device_fate_same(d, i, &a[i], &b[i]);
	}
	if (!differ)
		return true;
	pn_device_crash_read(d, a, f, r->off, r->len, buf); /* b's bytes gave r->v */
	struct pn_summary_value v = r->s.fn(buf, r->len, r->s.arg);
	return v.v[0] == r->v.v[0] && v.v[1] == r->v.v[1];
}

void pn_device_copy(const struct pn_device *src, struct pn_device *dst)
{
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		PN_ASSERT(!src->sink[f] && "a write-only file is copied (D9)");
		image_copy(&src->cur[f], &dst->cur[f]);
		if (dst->track)
			image_copy(&src->cur[f], &dst->dur[f]);
		/* D8: the copy holds the lazy chunks as real ones, and its own built copy of each
		 * chunk with unbuilt parts (all below lazy_end; the shared one goes back to refs 1) */
		uint8_t lazy_buf[PN_CHUNK_SIZE];
		for (uint64_t idx = 0; idx * PN_CHUNK_SIZE < src->lazy_end[f]; idx++) {
			const struct pn_chunk *c = chunk_at(&src->cur[f], idx);
			if (is_real(c) && c->unbuilt)
				chunk_read(src, (enum pn_file)f, idx, c, 0, PN_CHUNK_SIZE,
					   lazy_buf);
			else if (c || !lazy_chunk(src, (enum pn_file)f, idx, lazy_buf))
				continue;
			image_write(&dst->cur[f], idx * PN_CHUNK_SIZE, lazy_buf, PN_CHUNK_SIZE);
			if (dst->track)
				image_write(&dst->dur[f], idx * PN_CHUNK_SIZE, lazy_buf,
					    PN_CHUNK_SIZE);
		}
	}
}

/* The whole device as one hash (the determinism self-check's end of run): every written chunk
 * of cur (and dur when tracked) with its place, a removed chunk as its place alone, then every
 * unsynced write with its bytes. The leaf layout does not show: only offsets and bytes do. */
uint64_t pn_device_hash(const struct pn_device *d, uint64_t seed)
{
	uint64_t h = seed;
	uint8_t lazy_buf[PN_CHUNK_SIZE]; /* D8: a chunk as built */
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		PN_ASSERT(!d->sink[f] && "a write-only file is hashed (D9)");
		for (int which = 0; which < (d->track ? 2 : 1); which++) {
			const struct pn_file_image *im = which ? &d->dur[f] : &d->cur[f];
			uint64_t lazy = (d->lazy_end[f] + PN_CHUNK_SIZE - 1) / PN_CHUNK_SIZE;
			for (uint64_t c = 0; c < PN_MAX(im->nleaves * PN_LEAF_CHUNKS, lazy); c++) {
				const struct pn_chunk *ch = chunk_at(im, c);
				bool built = !ch && lazy_chunk(d, (enum pn_file)f, c, lazy_buf);
				if (is_real(ch) && ch->unbuilt) {
					chunk_read(d, (enum pn_file)f, c, ch, 0, PN_CHUNK_SIZE,
						   lazy_buf);
					built = true;
				}
				if (!ch && !built)
					continue;
				uint64_t where[3] = {(uint64_t)f << 1 | (uint64_t)which, c,
						     ch == REMOVED};
				h = XXH3_64bits_withSeed(where, sizeof(where), h);
				if (ch != REMOVED)
					h = XXH3_64bits_withSeed(built ? lazy_buf : ch->data,
								 PN_CHUNK_SIZE, h);
			}
		}
	}
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		uint64_t v[4] = {u->file, u->offset, u->len, u->seq};
		h = XXH3_64bits_withSeed(v, sizeof(v), h);
		h = XXH3_64bits_withSeed(u->data, u->len, h);
	}
	return h;
}

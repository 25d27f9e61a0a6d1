/*
 * device.c: the simulated device's crash model (sim layer): the read image, the durable
 * image, the unsynced writes between them, and the crash images their fates build. Its rules,
 * DV1-DV9, in device.h; the bytes of every image live in the chunk store (chunks.h).
 */
#include "device.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pn.h"
#include "spans.h"
#include "xxh.h"

void pn_device_init(struct pn_device *d, bool track, uint32_t atomic_unit)
{
	PN_ASSERT(atomic_unit >= 512 && (atomic_unit & (atomic_unit - 1)) == 0);
	memset(d, 0, sizeof(*d));
	d->track = track;
	d->atomic_unit = atomic_unit;
}

void pn_device_set_lazy(struct pn_device *d, enum pn_file f, uint64_t end, pn_lazy_fn fn, void *ctx)
{
	PN_ASSERT(!d->track && "a tracked device takes no lazy extents (CK3)");
	PN_ASSERT(fn != NULL && (unsigned)f < PN_FILE_COUNT);
	d->lazy[f] = (struct pn_lazy){.fn = fn, .ctx = ctx, .f = f, .end = end};
}

void pn_device_set_sink(struct pn_device *d, enum pn_file f)
{
	PN_ASSERT(!d->track && "a tracked device keeps every write (DV7)");
	d->sink[f] = true;
}

void pn_device_free(struct pn_device *d)
{
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		pn_image_free(&d->cur[f]);
		pn_image_free(&d->dur[f]);
	}
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		free(d->unsynced[i].data);
		free(d->unsynced[i].delta);
	}
	free(d->unsynced);
	free(d->summary_buf);
	memset(d, 0, sizeof(*d));
}

static void dur_sum_drop(struct pn_device *d, enum pn_file f, uint64_t idx);

static void mark_range(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len, bool remove)
{
	PN_ASSERT(off % PN_CHUNK_SIZE == 0 && len % PN_CHUNK_SIZE == 0);
	for (uint64_t idx = off / PN_CHUNK_SIZE; idx < (off + len) / PN_CHUNK_SIZE; idx++) {
		pn_image_mark(&d->cur[f], idx, remove);
		if (!d->track)
			continue;
		if (remove)
			dur_sum_drop(d, f, idx);
		pn_image_mark(&d->dur[f], idx, remove);
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
	return pn_image_held(&d->cur[f], peak);
}

/* DV5 */
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
	PN_ASSERT(!d->sink[f] && "a write-only file is read (DV7)");
	if (d->lazy[f].end)
		pn_lazy_read(&d->lazy[f], &d->cur[f], off, len, out);
	else
		pn_image_read(&d->cur[f], off, len, out);
}

/* DV9: logs to `reads` the parts of [off, off + len) of file f that no range of the write
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

bool pn_device_peek(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		    uint8_t *out)
{
	if (d->sink[f])
		return false;
	for (uint64_t c = off / PN_CHUNK_SIZE; len && c <= (off + len - 1) / PN_CHUNK_SIZE; c++)
		if (pn_image_chunk(&d->cur[f], c) == PN_CHUNK_REMOVED)
			return false;
	cur_read(d, f, off, len, out);
	return true;
}

/* DV8: whether a write of the log meets [off, off + len) of file f. */
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

/* DV11: a summary taken, by what names its bytes (the serials of the chunks the range lies
 * in, where in the first it starts, its length) and the summary asked (function, arguments). */
#define MEMO_CHUNKS 4u
#define MEMO_SLOTS 4096u
struct summary_memo {
	struct pn_summary s;
	uint64_t serial[MEMO_CHUNKS];
	uint32_t in, len;
	struct pn_summary_value v; /* last: the key is what precedes it */
};
static struct summary_memo summary_memo[MEMO_SLOTS]; /* one per process, as the chunk pool */

/* DV11: the memo slot of summary s of [off, off + len) of file f of cur, and its key in *key
 * (zeroed first: compared as bytes); NULL where the bytes are not named by serials alone (a
 * lazy or write-only file, a removed chunk, a range over more than MEMO_CHUNKS chunks). */
static struct summary_memo *summary_memo_of(const struct pn_device *d, enum pn_file f, uint64_t off,
					    uint32_t len, const struct pn_summary *s,
					    struct summary_memo *key)
{
	uint64_t first = off / PN_CHUNK_SIZE, last = (off + len - 1) / PN_CHUNK_SIZE;
	if (d->lazy[f].end || d->sink[f] || last - first >= MEMO_CHUNKS)
		return NULL;
	memset(key, 0, sizeof(*key));
	key->s = *s;
	key->in = (uint32_t)(off % PN_CHUNK_SIZE);
	key->len = len;
	for (uint64_t c = first; c <= last; c++) {
		const struct pn_chunk *ch = pn_image_chunk(&d->cur[f], c);
		if (ch == PN_CHUNK_REMOVED || (ch && (ch->unbuilt || ch->half)))
			return NULL; /* the read's own assertion, or bytes not the chunk's alone */
		key->serial[c - first] = ch ? ch->serial : 0; /* 0: unwritten, zeros */
	}
	uint64_t h = XXH3_64bits(key, offsetof(struct summary_memo, v));
	return &summary_memo[h % MEMO_SLOTS];
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
	struct pn_summary_read r = {.file = (uint32_t)f, .len = len, .off = off, .s = *s};
	struct summary_memo key;
	struct summary_memo *m = summary_memo_of(d, f, off, len, s, &key);
	if (m && memcmp(m, &key, offsetof(struct summary_memo, v)) == 0) {
		r.v = m->v; /* DV11 */
	} else {
		cur_read(d, f, off, len, d->summary_buf);
		r.v = s->fn(d->summary_buf, len, s->arg);
		if (m) {
			*m = key;
			m->v = r.v;
		}
	}
	if (d->summaries && d->reads && d->writes && !written(d->writes, f, off, len))
		summary_log(d->summaries, &r);
	else if (d->reads)
		read_log(d, 0, f, off, off + len);
	return r.v;
}

void pn_device_read_dur(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint8_t *out)
{
	pn_image_read(&d->dur[f], off, len, out);
}

void pn_device_format_write(struct pn_device *d, enum pn_file f, uint64_t off, const uint8_t *buf,
			    uint32_t len)
{
	range_log(d->writes, f, off, len);
	if (d->lazy[f].end)
		pn_lazy_fill(&d->lazy[f], &d->cur[f], off, len);
	if (!d->sink[f]) /* DV7 */
		pn_image_write(&d->cur[f], off, buf, len);
	if (d->track) {
		pn_image_write(&d->dur[f], off, buf, len);
		pn_image_share(&d->cur[f], &d->dur[f], off, len);
		d->dur_sum_ok = false; /* DV14: taken whole next time */
	}
	d->version++;
	d->dur_version++;
}

void pn_device_write(struct pn_device *d, const struct pn_io *io, uint64_t event)
{
	range_log(d->writes, io->file, io->offset, io->len);
	if (d->lazy[io->file].end)
		pn_lazy_fill(&d->lazy[io->file], &d->cur[io->file], io->offset, io->len);
	if (!d->sink[io->file]) /* DV7 */
		pn_image_write(&d->cur[io->file], io->offset, io->buf, io->len);
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
	pn_spans_join(d, d->nunsynced - 1);
}

uint64_t pn_device_unsynced_hash(struct pn_device *d, uint32_t i)
{
	PN_ASSERT(i < d->nunsynced);
	struct pn_unsynced *u = &d->unsynced[i];
	if (!u->hashed) {
		uint64_t place[3] = {u->file, u->offset, u->len};
		u->hash = XXH3_64bits_withSeed(u->data, u->len, XXH3_64bits(place, sizeof(place)));
		u->hashed = true;
	}
	return u->hash;
}

uint8_t *pn_device_lend(struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint32_t *half)
{
	if (d->track || d->sink[f] || !d->lazy[f].end) /* CK4: untracked lazy files alone */
		return NULL;
	return pn_chunks_lend(&d->lazy[f], &d->cur[f], off, len, half);
}

void pn_device_lend_back(uint8_t *buf, uint32_t half) { pn_chunks_lend_back(buf, half); }

void pn_device_write_lent(struct pn_device *d, const struct pn_io *io, uint32_t half,
			  uint64_t event)
{
	PN_ASSERT(io->lent && (half == 1 || half == 2) && !d->track);
	if (d->sink[io->file] || !pn_chunks_take_lent(&d->lazy[io->file], &d->cur[io->file],
						      io->offset, io->len, io->buf, half)) {
		pn_device_write(d, io, event); /* as a copy; the half goes back */
		pn_chunks_lend_back(io->buf, half);
		d->lent_copied++;
		return;
	}
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

static void make_durable(struct pn_device *d, const struct pn_unsynced *u, bool fresh);
static bool overlapped(const struct pn_device *d, uint32_t i, int dir);

static bool made_durable(const struct pn_unsynced *u, enum pn_file f, uint64_t mark)
{
	return u->file == f && u->completed && u->completed_seq < mark;
}

/* The writes of f completed before mark become durable in list order, then leave the list.
 * DV14: a write's DV12 changes are fresh when they were taken over dur as the fsync found it
 * and no earlier write of the list shares a cell with it (one made durable before it here
 * may have changed those cells). */
void pn_device_fsync_done(struct pn_device *d, enum pn_file f, uint64_t mark)
{
	uint64_t v0 = d->dur_version;
	uint32_t gone = 0;
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		if (!made_durable(u, f, mark))
			continue;
		d->version++;
		d->dur_version++;
		gone++;
		make_durable(d, u, u->delta && u->delta_dur == v0 + 1 && !overlapped(d, i, -1));
	}
	if (gone == 0)
		return; /* the list and its spans (DV15) as they were */
	uint32_t keep = 0, n = d->nunsynced;
	uint32_t *kept_before = malloc((n + 1) * sizeof(*kept_before)); /* DV15: old -> new index */
	PN_ASSERT(kept_before != NULL);
	for (uint32_t i = 0; i < n; i++) {
		struct pn_unsynced *u = &d->unsynced[i];
		kept_before[i] = keep;
		if (made_durable(u, f, mark)) {
			free(u->data);
			free(u->delta);
		} else {
			d->unsynced[keep++] = *u;
		}
	}
	kept_before[n] = keep;
	d->nunsynced = keep;
	pn_spans_after_fsync(d, f, kept_before);
	free(kept_before);
}

/* DV4: the aligned blocks [off, off + len) touches, and how many of them make one unit. */
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

uint64_t pn_device_units_differ(const struct pn_device *d, uint32_t i)
{
	PN_ASSERT(d->track && i < d->nunsynced);
	struct pn_unsynced *u = (struct pn_unsynced *)&d->unsynced[i];
	if (u->differ_dur == d->dur_version + 1)
		return u->differ;
	uint32_t nunits, off;
	pn_device_unit(d, u->offset, u->len, &nunits);
	uint8_t buf[4096];
	uint64_t mask = 0;
	for (uint32_t s = 0; s < nunits; s++) {
		uint32_t len = pn_device_unit_span(d, u->offset, u->len, s, &off);
		for (uint32_t done = 0; done < len; done += sizeof(buf)) {
			uint32_t n = PN_MIN((uint32_t)sizeof(buf), len - done);
			pn_device_read_dur(d, u->file, u->offset + off + done, n, buf);
			if (memcmp(buf, u->data + off + done, n)) {
				mask |= 1ull << s;
				break;
			}
		}
	}
	u->differ = mask;
	u->differ_dur = d->dur_version + 1;
	return mask;
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
		pn_image_copy(&d->dur[f], &out->cur[f]);
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		uint32_t s = 0, at, n;
		while ((n = kept_span(d, u, &fates[i], &s, &at)) != 0)
			pn_image_write(&out->cur[u->file], u->offset + at, u->data + at, n);
	}
	if (out->track)
		for (int f = 0; f < PN_FILE_COUNT; f++)
			pn_image_copy(&out->cur[f], &out->dur[f]);
	out->dur_sum_ok = false; /* DV14: taken whole first */
}

void pn_device_crash_read(const struct pn_device *d, const struct pn_write_fate *fates,
			  enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	PN_ASSERT(d->track);
	pn_image_read(&d->dur[f], off, len, out);
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

/* DV6: the units of write u a crash under fate keeps, as a mask (bit i: unit i). */
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

bool pn_device_fates_differ_in(const struct pn_device *d, const struct pn_write_fate *a,
			       const struct pn_write_fate *b, enum pn_file f, uint64_t off,
			       uint64_t len)
{
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		if (u->file == f && u->offset < off + len && off < u->offset + u->len &&
		    !pn_device_fate_same(d, i, &a[i], &b[i]))
			return true;
	}
	return false;
}

bool pn_device_crash_summary_same(const struct pn_device *d, const struct pn_write_fate *a,
				  const struct pn_write_fate *b, const struct pn_summary_read *r,
				  uint8_t *buf)
{
	enum pn_file f = (enum pn_file)r->file;
	/* DV6: the images differ only inside writes whose fates differ */
	if (!pn_device_fates_differ_in(d, a, b, f, r->off, r->len))
		return true;
	pn_device_crash_read(d, a, f, r->off, r->len, buf); /* b's bytes gave r->v */
	struct pn_summary_value v = r->s.fn(buf, r->len, r->s.arg);
	return v.v[0] == r->v.v[0] && v.v[1] == r->v.v[1];
}

void pn_device_copy(const struct pn_device *src, struct pn_device *dst)
{
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		PN_ASSERT(!src->sink[f] && "a write-only file is copied (DV7)");
		pn_image_copy(&src->cur[f], &dst->cur[f]);
		if (dst->track)
			pn_image_copy(&src->cur[f], &dst->dur[f]);
		/* CK3: the copy holds the lazy chunks as real ones, and its own built copy of each
		 * chunk with unbuilt parts (all below the lazy end; the shared one goes back to
		 * refs 1) */
		uint8_t lazy_buf[PN_CHUNK_SIZE];
		for (uint64_t idx = 0; idx * PN_CHUNK_SIZE < src->lazy[f].end; idx++) {
			if (!pn_lazy_chunk(&src->lazy[f], &src->cur[f], idx, lazy_buf))
				continue;
			pn_image_write(&dst->cur[f], idx * PN_CHUNK_SIZE, lazy_buf, PN_CHUNK_SIZE);
			if (dst->track)
				pn_image_write(&dst->dur[f], idx * PN_CHUNK_SIZE, lazy_buf,
					       PN_CHUNK_SIZE);
		}
	}
	dst->dur_sum_ok = false; /* DV14: dur is cur's copy, taken whole first */
}

/* The whole device as one hash (the determinism self-check's end of run): every written chunk
 * of cur (and dur when tracked) with its place, a removed chunk as its place alone, then every
 * unsynced write with its bytes. The leaf layout does not show: only offsets and bytes do. */
uint64_t pn_device_hash(const struct pn_device *d, uint64_t seed)
{
	uint64_t h = seed;
	uint8_t lazy_buf[PN_CHUNK_SIZE]; /* CK3: a chunk as built */
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		PN_ASSERT(!d->sink[f] && "a write-only file is hashed (DV7)");
		for (int which = 0; which < (d->track ? 2 : 1); which++) {
			const struct pn_file_image *im = which ? &d->dur[f] : &d->cur[f];
			uint64_t lazy = (d->lazy[f].end + PN_CHUNK_SIZE - 1) / PN_CHUNK_SIZE;
			for (uint64_t c = 0; c < PN_MAX(im->nleaves * PN_LEAF_CHUNKS, lazy); c++) {
				const struct pn_chunk *ch = pn_image_chunk(im, c);
				bool built = pn_lazy_chunk(&d->lazy[f], im, c, lazy_buf);
				if (!ch && !built)
					continue;
				uint64_t where[3] = {(uint64_t)f << 1 | (uint64_t)which, c,
						     ch == PN_CHUNK_REMOVED};
				h = XXH3_64bits_withSeed(where, sizeof(where), h);
				if (ch != PN_CHUNK_REMOVED)
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

#define CELL PN_DEVICE_CELL
#define CHUNK_CELLS (PN_CHUNK_SIZE / CELL)

/* A cell's part of a digest by content: its file, its place (cell index g in the file) and the
 * hash h of its bytes; 0 for a cell of zeros, so a chunk's unwritten cells and written zeros
 * weigh the same. */
static uint64_t cell_term(int f, uint64_t g, uint64_t h)
{
	static uint64_t zeros_hash;
	if (!zeros_hash) { /* a function of a constant: the same in every process */
		static const uint8_t zeros[CELL];
		zeros_hash = XXH3_64bits(zeros, CELL);
	}
	if (h == zeros_hash)
		return 0;
	uint64_t v[3] = {(uint64_t)f, g, h};
	return XXH3_64bits(v, sizeof(v));
}

/* A written chunk's own part (besides its cells'), telling it from an unwritten one (a digest
 * may tell apart what reads the same, never the reverse): of four words, so never a cell's. */
static uint64_t chunk_mark(int f, uint64_t c)
{
	uint64_t v[4] = {(uint64_t)f, c, 0x4b4e554843ull, 0}; /* "CHUNK" */
	return XXH3_64bits(v, sizeof(v));
}

/* The terms of durable chunks, by place and serial (chunks.h CK5: a serial names the bytes):
 * each cell's and the whole chunk's (its mark and its cells'), one per process. */
#define DUR_SLOTS 2048u
struct dur_terms {
	uint64_t file, chunk, serial; /* serial 0: the slot is empty */
	uint64_t chunk_term;
	uint64_t cell[CHUNK_CELLS];
};
static struct dur_terms dur_memo[DUR_SLOTS];

/* The terms of chunk c of file f, from its bytes. */
static void chunk_terms(int f, uint64_t c, const struct pn_chunk *ch, struct dur_terms *m)
{
	m->file = (uint64_t)f;
	m->chunk = c;
	m->serial = ch->serial;
	m->chunk_term = chunk_mark(f, c);
	for (uint32_t k = 0; k < CHUNK_CELLS; k++) {
		uint64_t h = XXH3_64bits(ch->data + (size_t)k * CELL, CELL);
		m->cell[k] = cell_term(f, c * CHUNK_CELLS + k, h);
		m->chunk_term += m->cell[k];
	}
}

static struct dur_terms *dur_slot(int f, uint64_t c, uint64_t serial)
{
	uint64_t key[3] = {(uint64_t)f, c, serial};
	return &dur_memo[XXH3_64bits(key, sizeof(key)) % DUR_SLOTS];
}

static const struct dur_terms *dur_terms(int f, uint64_t c, const struct pn_chunk *ch)
{
	PN_ASSERT(ch != NULL && ch != PN_CHUNK_REMOVED && ch->serial != 0);
	PN_ASSERT(!ch->unbuilt && !ch->half); /* a tracked device has no lazy chunks (CK3) */
	struct dur_terms *m = dur_slot(f, c, ch->serial);
	if (m->file == (uint64_t)f && m->chunk == c && m->serial == ch->serial)
		return m;
	chunk_terms(f, c, ch, m);
	return m;
}

/* The durable term of cell g of file f (0: in no written chunk, or zeros). */
static uint64_t dur_cell(const struct pn_device *d, int f, uint64_t g)
{
	const struct pn_chunk *ch = pn_image_chunk(&d->dur[f], g / CHUNK_CELLS);
	PN_ASSERT(ch != PN_CHUNK_REMOVED); /* DV1: no write lies in a removed range */
	return ch ? dur_terms(f, g / CHUNK_CELLS, ch)->cell[g % CHUNK_CELLS] : 0;
}

/* The durable image by content (a search's crash-state keys, model/run.c; DV10): the sum of
 * every written chunk's mark and cells. Unsynced writes, sequence numbers and versions do not
 * show, so two devices whose durable images hold the same bytes get the same digest, however
 * their writes and fsyncs came. A removed chunk counts as unwritten (DV1: no reader reaches
 * it); a chunk written with zeros is told from an unwritten one by its mark. A tracked device
 * has no lazy extents (CK3, pn_device_set_lazy), so every chunk of dur holds its own bytes. */
static uint64_t dur_digest_whole(const struct pn_device *d, bool memo)
{
	PN_ASSERT(d->track);
	uint64_t h = 0;
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		const struct pn_file_image *im = &d->dur[f];
		PN_ASSERT(!d->lazy[f].end);
		for (uint64_t c = 0; c < im->nleaves * PN_LEAF_CHUNKS; c++) {
			const struct pn_chunk *ch = pn_image_chunk(im, c);
			if (!ch || ch == PN_CHUNK_REMOVED)
				continue;
			struct dur_terms t;
			if (!memo)
				chunk_terms(f, c, ch, &t);
			h += memo ? dur_terms(f, c, ch)->chunk_term : t.chunk_term;
		}
	}
	return h;
}

uint64_t pn_device_dur_digest(struct pn_device *d)
{
	if (!d->dur_sum_ok) {
		d->dur_sum = dur_digest_whole(d, true);
		d->dur_sum_ok = true;
	}
#ifndef NDEBUG
	static uint32_t calls; /* DV14 held against the digest from the bytes now and then */
	if (++calls % 16 == 0)
		PN_ASSERT(d->dur_sum == dur_digest_whole(d, false));
#endif
	return d->dur_sum;
}

/* DV14: chunk idx of dur's file f is removed: its terms leave the kept digest. */
static void dur_sum_drop(struct pn_device *d, enum pn_file f, uint64_t idx)
{
	const struct pn_chunk *ch = pn_image_chunk(&d->dur[f], idx);
	if (d->dur_sum_ok && ch && ch != PN_CHUNK_REMOVED)
		d->dur_sum -= dur_terms((int)f, idx, ch)->chunk_term;
}

/* Write u is laid in dur chunk by chunk (and each chunk shared with cur's where they hold the
 * same bytes, CK2); while the digest is kept (DV14), each chunk's new terms are its old ones
 * with the cells u lays replaced, by u's DV12 changes when fresh (pn_device_fsync_done), else
 * by their bytes. */
static void make_durable(struct pn_device *d, const struct pn_unsynced *u, bool fresh)
{
	int f = (int)u->file;
	uint64_t end = u->offset + u->len, first = u->offset / CELL;
	for (uint64_t c = u->offset / PN_CHUNK_SIZE; c * PN_CHUNK_SIZE < end; c++) {
		uint64_t lo = PN_MAX(u->offset, c * PN_CHUNK_SIZE);
		uint64_t hi = PN_MIN(end, (c + 1) * PN_CHUNK_SIZE);
		struct dur_terms old = {0};
		const struct pn_chunk *was = pn_image_chunk(&d->dur[f], c);
		PN_ASSERT(was != PN_CHUNK_REMOVED); /* DV1 */
		if (d->dur_sum_ok && was)
			old = *dur_terms(f, c, was);
		pn_image_write(&d->dur[f], lo, u->data + (lo - u->offset), (uint32_t)(hi - lo));
		pn_image_share(&d->cur[f], &d->dur[f], lo, hi - lo);
		if (!d->dur_sum_ok)
			continue;
		const struct pn_chunk *ch = pn_image_chunk(&d->dur[f], c);
		struct dur_terms *m = dur_slot(f, c, ch->serial);
		*m = old;
		m->file = (uint64_t)f;
		m->chunk = c;
		m->serial = ch->serial;
		for (uint64_t g = lo / CELL; g <= (hi - 1) / CELL; g++) {
			uint64_t k = g - c * CHUNK_CELLS;
			m->cell[k] = fresh ? old.cell[k] + u->delta[g - first]
					   : cell_term(f, g,
						       XXH3_64bits(ch->data + k * CELL, CELL));
		}
		m->chunk_term = chunk_mark(f, c);
		for (uint32_t k = 0; k < CHUNK_CELLS; k++)
			m->chunk_term += m->cell[k];
		d->dur_sum += m->chunk_term - (was ? old.chunk_term : 0);
	}
}

/* DV10 the long way: the crash image built, and its durable image digested. */
static uint64_t crash_digest_built(const struct pn_device *d, const struct pn_write_fate *fates)
{
	struct pn_device out;
	pn_device_init(&out, true, d->atomic_unit);
	pn_device_crash_image(d, fates, &out);
	uint64_t h = pn_device_dur_digest(&out);
	pn_device_free(&out);
	return h;
}

/* DV12: write u's cells' change to the digest over dur (its term minus dur's; a cell it fills
 * in part: dur's bytes with its own laid over), kept with the write until dur changes. A
 * cache of a function of the write's bytes and of dur, which dur_version names. */
static const uint64_t *write_deltas(const struct pn_device *d, const struct pn_unsynced *cu)
{
	struct pn_unsynced *u = (struct pn_unsynced *)cu;
	if (u->delta && u->delta_dur == d->dur_version + 1)
		return u->delta;
	uint64_t first = u->offset / CELL, last = (u->offset + u->len - 1) / CELL;
	uint64_t n = last - first + 1;
	if (!u->delta) /* the cells' changes, then their sums from the first (DV12) */
		u->delta = malloc((2 * n + 1) * sizeof(*u->delta));
	PN_ASSERT(u->delta != NULL);
	uint8_t buf[CELL];
	uint64_t *sum = u->delta + n;
	sum[0] = 0;
	for (uint64_t g = first; g <= last; g++) {
		uint64_t lo = PN_MAX(g * CELL, u->offset);
		uint64_t hi = PN_MIN((g + 1) * CELL, u->offset + u->len);
		const uint8_t *bytes = u->data + (lo - u->offset);
		if (hi - lo < CELL) { /* in part: over dur's bytes */
			pn_image_read(&d->dur[u->file], g * CELL, CELL, buf);
			memcpy(buf + (lo - g * CELL), bytes, hi - lo);
			bytes = buf;
		}
		uint64_t term = cell_term((int)u->file, g, XXH3_64bits(bytes, CELL));
		u->delta[g - first] = term - dur_cell(d, (int)u->file, g);
		sum[g - first + 1] = sum[g - first] + u->delta[g - first];
	}
	u->chunks_dur = true;
	for (uint64_t c = u->offset / PN_CHUNK_SIZE;
	     c <= (u->offset + u->len - 1) / PN_CHUNK_SIZE && u->chunks_dur; c++)
		u->chunks_dur = pn_image_chunk(&d->dur[u->file], c) != NULL;
	u->delta_dur = d->dur_version + 1;
	return u->delta;
}

/* Whether another write than i of d, before (dir -1) or after (+1) it, shares bytes of its
 * file with its cells (a cell's latest keeper then needs looking for): DV15. */
static bool overlapped(const struct pn_device *d, uint32_t i, int dir)
{
	const uint32_t *span = pn_spans_of(d, i, dir);
	return span[0] != span[1];
}

/* Whether write u under fate keeps bytes of cell g (a cell lies in one unit of it: DV4). */
static bool keeps_cell(const struct pn_device *d, const struct pn_unsynced *u,
		       const struct pn_write_fate *fate, enum pn_file f, uint64_t g)
{
	if (u->file != f || fate->fate == PN_FATE_LOST || u->offset >= (g + 1) * CELL ||
	    g * CELL >= u->offset + u->len)
		return false;
	if (fate->fate == PN_FATE_PERSISTED)
		return true;
	uint32_t per;
	blocks_of(d, u->offset, u->len, &per);
	uint64_t block = PN_MAX(g * CELL, u->offset) / d->atomic_unit;
	uint64_t unit = (block - u->offset / d->atomic_unit) / per;
	return (fate->sectors >> unit) & 1;
}

/* Whether some write of d before (dir -1) or after (+1) write i keeps bytes of cell g. */
static bool others_keep(const struct pn_device *d, const struct pn_write_fate *fates, uint32_t i,
			int dir, uint64_t g)
{
	const struct pn_unsynced *u = &d->unsynced[i];
	const uint32_t *span = pn_spans_of(d, i, dir); /* DV15: no keeper of g outside it */
	for (uint32_t k = span[0]; k < span[1]; k++)
		if (keeps_cell(d, &d->unsynced[k], &fates[k], u->file, g))
			return true;
	return false;
}

/* The chunks of dur's file f that kept bytes at [lo, hi) create (DV10: each one's mark taken
 * once, listed in created, *nc of them): false when more than CREATED_MAX would be listed. */
enum { CREATED_MAX = 64 };
static bool chunks_created(const struct pn_device *d, int f, uint64_t lo, uint64_t hi,
			   uint64_t (*created)[2], uint32_t *nc, uint64_t *digest)
{
	for (uint64_t c = lo / PN_CHUNK_SIZE; c <= (hi - 1) / PN_CHUNK_SIZE; c++) {
		bool met = pn_image_chunk(&d->dur[f], c) != NULL;
		for (uint32_t t = 0; t < *nc && !met; t++)
			met = created[t][0] == (uint64_t)f && created[t][1] == c;
		if (met)
			continue;
		if (*nc == CREATED_MAX)
			return false;
		created[*nc][0] = (uint64_t)f;
		created[(*nc)++][1] = c;
		*digest += chunk_mark(f, c);
	}
	return true;
}

/* DV12 for write u alone (no cell shared with another unsynced write): its changes summed
 * over the cells of each run of kept units (sum: their running sums; a cell lies in one unit,
 * DV4, so a run's cells are its units'), and the marks of the chunks those runs create
 * unless u->chunks_dur. False: too many chunks to list. */
static bool kept_sum(const struct pn_device *d, const struct pn_unsynced *u,
		     const struct pn_write_fate *fate, const uint64_t *sum, uint64_t (*created)[2],
		     uint32_t *nc, uint64_t *digest)
{
	uint64_t first = u->offset / CELL, end = u->offset + u->len;
	int f = (int)u->file;
	if (fate->fate == PN_FATE_PERSISTED) {
		*digest += sum[(end - 1) / CELL - first + 1] - sum[0];
		return u->chunks_dur || chunks_created(d, f, u->offset, end, created, nc, digest);
	}
	PN_ASSERT(fate->fate == PN_FATE_TORN);
	uint32_t nunits;
	uint64_t unit = pn_device_unit(d, u->offset, u->len, &nunits);
	uint64_t base = u->offset / d->atomic_unit * d->atomic_unit;
	uint64_t bits = fate->sectors & (nunits >= 64 ? ~0ull : (1ull << nunits) - 1);
	while (bits) {
		uint32_t i = (uint32_t)__builtin_ctzll(bits);
		uint64_t rest = ~(bits >> i);
		uint32_t j = rest ? i + (uint32_t)__builtin_ctzll(rest) : 64;
		uint64_t from = PN_MAX(u->offset, base + i * unit);
		uint64_t to = PN_MIN(end, base + j * unit);
		*digest += sum[(to - 1) / CELL - first + 1] - sum[from / CELL - first];
		if (!u->chunks_dur && !chunks_created(d, f, from, to, created, nc, digest))
			return false;
		bits = j >= 64 ? 0 : bits & (~0ull << j);
	}
	return true;
}

/* DV10, DV12: the durable digest with the terms of every cell a kept unit touches replaced,
 * each by its latest keeper (the crash image lays writes in list order), plus the mark of each
 * chunk that only the kept writes create. A cell kept whole by its latest keeper, or in part
 * by one and by no other write, takes that write's delta (write_deltas); a cell two writes
 * share in part is built. */
uint64_t pn_device_crash_digest(const struct pn_device *d, const struct pn_write_fate *fates,
				uint64_t dur_digest)
{
	PN_ASSERT(d->track);
	uint64_t created[CREATED_MAX][2];
	uint32_t nc = 0;
	uint8_t buf[CELL];
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		if (fates[i].fate == PN_FATE_LOST)
			continue;
		int f = (int)u->file;
		bool later = overlapped(d, i, 1), earlier = overlapped(d, i, -1);
		const uint64_t *delta = write_deltas(d, u);
		uint64_t first = u->offset / CELL;
		if (!later && !earlier) { /* its own cells: a difference of running sums each */
			const uint64_t *sum = delta + ((u->offset + u->len - 1) / CELL - first + 1);
			if (!kept_sum(d, u, &fates[i], sum, created, &nc, &dur_digest))
				return crash_digest_built(d, fates); /* too many chunks to list */
			continue;
		}
		uint32_t s = 0, at, n;
		while ((n = kept_span(d, u, &fates[i], &s, &at)) != 0) {
			uint64_t lo = u->offset + at, hi = lo + n;
			for (uint64_t g = lo / CELL; g <= (hi - 1) / CELL; g++) {
				if (later && others_keep(d, fates, i, 1, g))
					continue; /* a later write lays it: its part */
				bool whole = g * CELL >= u->offset &&
					     (g + 1) * CELL <= u->offset + u->len;
				if (whole || !earlier || !others_keep(d, fates, i, -1, g)) {
					dur_digest += delta[g - first];
				} else {
					pn_device_crash_read(d, fates, u->file, g * CELL, CELL,
							     buf);
					dur_digest += cell_term(f, g, XXH3_64bits(buf, CELL)) -
						      dur_cell(d, f, g);
				}
			}
			if (!chunks_created(d, f, lo, hi, created, &nc, &dur_digest))
				return crash_digest_built(d, fates); /* too many to list */
		}
	}
	return dur_digest;
}

/*
 * wal.c: WAL insertion and flushing (engine layer). Bytes are laid out by walfmt.c; this
 * file owns where they go and when they become durable.
 *
 * Rules:
 *   W1 LSN = byte position; a record starts MAXALIGNed in usable-byte space and its end LSN
 *      (the EndRecPtr stamped on pages) is pn_wal_bytepos_to_endrecptr(aligned end).
 *   W2 Inserting is one step: reserve, encode, copy (the world cannot interleave), as under
 *      PostgreSQL's insertion locks. RedoRecPtr (wal.redo) changes only in ckpt.c's
 *      ckpt_begin() (pn_wal_set_redo), another step, so an insert sees one value of it.
 *   W3 One flush at a time: write every page from the one holding `written` through the one
 *      holding the target, fsync the WAL file, then `flushed = target` and wake waiters
 *      (group commit: a flush takes everything inserted when it starts).
 *   W4 The WAL file is a ring of nsegs segments; segment n lives in slot n % nsegs. An insert
 *      may not enter a slot that still holds WAL from keep_from (the redo pointer of the last
 *      completed checkpoint) on: it waits for a checkpoint instead. Recycled slots keep
 *      their stale bytes, which recovery recognises by their page address.
 *   W5 The in-memory ring of WAL pages never drops a page before its write completed. A
 *      backend that finds it full of unwritten pages writes them out (a flush) and waits
 *      for it, as AdvanceXLInsertBuffer does; that asks for no checkpoint (a transaction
 *      longer than the ring gets none PostgreSQL would not take).
 *   W6 Segment life, as PostgreSQL's RemoveOldXlogFiles and XLogFileInit: when keep_from
 *      passes a segment (a checkpoint completed, or the page server's horizon moved), its
 *      slot is removed through env.fast->wal_segment (the simulated device frees it;
 *      reading it again is a broken invariant); when the insert position enters segment
 *      n, the slot of n + 1 is created, so that recovery may look past the end of the WAL
 *      into it. So the device holds the WAL from keep_from's segment to the insert
 *      position's, plus one segment, whatever the ring's size (max_wal_size).
 *
 *   W7 WAL no one reads (env.fast->wal_unread: the simulator's single run, whose device
 *      keeps none of the WAL (sim/device.h DV7) and where no observer, twin or page server
 *      sees a record): an insert lays out positions, sizes and counts as always but builds no
 *      bytes (no encoding, no CRC, no copy into the ring, no page header), and a flush
 *      writes the same ranges with no buffer (NULL). Every decision the engine takes
 *      depends on lengths and positions only, so every event, metric and output is the
 *      same (tests/test_wal.c unread_same, tests/test_workloads.c unread_wal_same).
 *
 * The module takes struct pn_wal (wal.h) and the handles it was given at init: services
 * (I/O, wakes), metrics, and the two callbacks the assembly installs (the checkpoint
 * trigger, the page server's horizon). It names no other engine module.
 */
#include "wal.h"

#include <stdlib.h>
#include <string.h>

#define WAL_RING_PAGES 1024u /* 8 MiB of WAL buffers */

static const bool legal[PN_WAL_FLUSH_STATES][PN_WAL_FLUSH_STATES] = {
	[PN_WAL_IDLE] = {[PN_WAL_WRITING] = true},
	[PN_WAL_WRITING] = {[PN_WAL_FSYNC] = true},
	[PN_WAL_FSYNC] = {[PN_WAL_IDLE] = true},
};

void pn_wal_set_state(struct pn_wal *w, enum pn_wal_flush_state to)
{
	PN_ASSERT((unsigned)to < PN_WAL_FLUSH_STATES);
	PN_ASSERT((unsigned)w->flush_state < PN_WAL_FLUSH_STATES);
	PN_ASSERT(legal[w->flush_state][to]);
	w->flush_state = to;
}

static uint8_t *ring_slot(struct pn_wal *w, pn_lsn page_addr, bool zero);

/* pn_wal_copy_record's pages: a page it enters it begins itself (walfmt.c W3: the header,
 * then zeroes what follows the record), so the ring does not zero it first; pn_wal_insert asserts that a
 * record starting past a page's header finds that page in the ring. */
static uint8_t *page_cb(void *arg, pn_lsn page_addr) { return ring_slot(arg, page_addr, false); }

static uint8_t *ring_page(struct pn_wal *w, pn_lsn page_addr)
{
	return ring_slot(w, page_addr, true);
}

/* The slot of page_addr: the page after the one last placed takes the next slot (the
 * insert path enters pages in order), any other is divided out. */
static uint32_t slot_of(struct pn_wal *w, pn_lsn page_addr)
{
	uint32_t slot;
	if (page_addr == w->slot_page)
		slot = w->slot_last;
	else if (page_addr == w->slot_page + PN_XLOG_BLCKSZ)
		slot = w->slot_last + 1 == w->npages ? 0 : w->slot_last + 1;
	else
		slot = (uint32_t)((page_addr / PN_XLOG_BLCKSZ) % w->npages);
	w->slot_page = page_addr;
	w->slot_last = slot;
	return slot;
}

/* The ring's page for page_addr, taking its slot over (zeroed, if zero) when it held
 * another page. */
static uint8_t *ring_slot(struct pn_wal *w, pn_lsn page_addr, bool zero)
{
	PN_ASSERT(page_addr % PN_XLOG_BLCKSZ == 0);
	uint32_t slot = slot_of(w, page_addr);
	uint64_t *tags = w->tags;
	uint8_t *p = w->pages + (size_t)slot * PN_XLOG_BLCKSZ;
	if (tags[slot] != page_addr) {
		PN_ASSERT(tags[slot] < w->ring_base || tags[slot] == UINT64_MAX); /* W5 */
		if (zero)
			memset(p, 0, PN_XLOG_BLCKSZ);
		tags[slot] = page_addr;
	}
	return p;
}

static bool in_ring(struct pn_wal *w, pn_lsn page_addr)
{
	return w->tags[slot_of(w, page_addr)] == page_addr;
}

const uint8_t *pn_wal_ring_page(const struct pn_wal *w, pn_lsn page_addr)
{
	if (w->unread) /* W7 */
		return NULL;
	uint32_t slot = (uint32_t)((page_addr / PN_XLOG_BLCKSZ) % w->npages);
	PN_ASSERT(page_addr % PN_XLOG_BLCKSZ == 0);
	PN_ASSERT(w->tags[slot] == page_addr);
	return w->pages + (size_t)slot * PN_XLOG_BLCKSZ;
}

/* PostgreSQL's CheckPointSegments; bounded so that the ring's segment count fits 32 bits
 * (a max_wal_size of 2^30 segments and more never triggers a checkpoint anyway). */
static uint32_t checkpoint_segments(const struct pn_scenario *sc, uint32_t seg_size)
{
	if (sc->checkpoint.max_wal_size == 0)
		return 0;
	double segs = (double)(sc->checkpoint.max_wal_size / seg_size) /
		      (1.0 + sc->checkpoint.completion_target);
	return segs < 1.0 ? 1u : segs > (double)(1u << 30) ? 1u << 30 : (uint32_t)segs;
}

static void segment_life(struct pn_wal *w, uint64_t segno, bool remove)
{
	const struct pn_env *env = &w->svc->env;
	if (pn_env_fast(env)->wal_segment)
		pn_env_fast(env)->wal_segment(env->ctx, pn_wal_file_offset(w, segno * w->seg_size),
					      w->seg_size, remove);
}

/* W6: removes the slots of the segments keep_from has passed, while they are still theirs
 * (segment s's slot is taken over by s + nsegs once that one is created). */
static void remove_old_segments(struct pn_wal *w)
{
	uint64_t keep = w->keep_from / w->seg_size;
	for (; w->seg_removed < keep; w->seg_removed++)
		if (w->seg_removed + w->nsegs > w->seg_entered + 1)
			segment_life(w, w->seg_removed, true);
}

/* W6: the insert position ends in segment `seg`: create the slots up to its successor. */
static void enter_segment(struct pn_wal *w, uint64_t seg)
{
	if (seg <= w->seg_entered)
		return;
	remove_old_segments(w);
	for (uint64_t n = w->seg_entered + 2; n <= seg + 1; n++)
		segment_life(w, n, false);
	w->seg_entered = seg;
}

/* No page held (init, and after recovery). */
static void forget_pages(struct pn_wal *w)
{
	for (uint32_t i = 0; i < w->npages; i++)
		w->tags[i] = UINT64_MAX;
}

/* the ring's pages and their tags, one block */
static size_t ring_bytes(const struct pn_wal *w)
{
	return (size_t)w->npages * PN_XLOG_BLCKSZ + w->npages * sizeof(uint64_t);
}

static bool alloc_ring(struct pn_wal *w, uint32_t buffers)
{
	/* Sized by the buffer pool: a larger pool dirties more WAL between flushes. */
	w->npages = PN_MAX(64u, PN_MIN(WAL_RING_PAGES, 4u * buffers));
	if ((uint64_t)w->npages * PN_XLOG_BLCKSZ > w->seg_size * (uint64_t)w->nsegs / 2)
		w->npages = (uint32_t)(w->seg_size * (uint64_t)w->nsegs / 2 / PN_XLOG_BLCKSZ);
	w->pages = pn_big_alloc(ring_bytes(w));
	w->rec_cap = PN_WAL_RECORD_HEADER + 64 + PN_WAL_MAX_BLOCKS * (w->page_size + 64) + 65536;
	w->rec_buf = pn_big_alloc(w->rec_cap);
	w->waiters = calloc(PN_MAX(w->nwaiters, 1u), sizeof(*w->waiters));
	if (!w->pages || !w->rec_buf || !w->waiters)
		return false;
	w->tags = (uint64_t *)(w->pages + (size_t)w->npages * PN_XLOG_BLCKSZ);
	w->slot_page = UINT64_MAX - PN_XLOG_BLCKSZ; /* none yet: no page follows it */
	forget_pages(w);
	return true;
}

/* W1: the insert position moves; its start and end LSNs with it. */
static void set_insert(struct pn_wal *w, uint64_t bytepos)
{
	w->insert_bytepos = bytepos;
	w->insert_start = pn_wal_bytepos_to_recptr(bytepos, w->seg_size);
	w->insert_end = pn_wal_bytepos_to_endrecptr(bytepos, w->seg_size);
}

bool pn_wal_init(struct pn_wal *w, const struct pn_scenario *sc, struct pn_services *svc,
		 struct pn_metrics *m, uint64_t sysid, uint32_t nprocs)
{
	PN_ASSERT(svc && m);
	PN_ASSERT(sc->storage.wal_segment_size % PN_XLOG_BLCKSZ == 0);
	memset(w, 0, sizeof(*w));
	w->svc = svc;
	w->m = m;
	w->unread = pn_env_fast(&svc->env)->wal_unread;
	w->sysid = sysid;
	w->page_size = sc->storage.page_size;
	w->nwaiters = nprocs;
	w->seg_size = sc->storage.wal_segment_size;
	w->ckpt_segments = checkpoint_segments(sc, w->seg_size);
	w->nsegs = w->ckpt_segments ? PN_MAX(8u, 3u * w->ckpt_segments + 4u) : 64u;
	if (!alloc_ring(w, sc->storage.buffers))
		return false;
	/* WAL starts in segment 1, as a fresh cluster's does, so that LSN 0 stays invalid. */
	pn_lsn start = (pn_lsn)w->seg_size + PN_WAL_LONG_PHD;
	set_insert(w, pn_wal_recptr_to_bytepos(start, w->seg_size));
	w->written = w->flushed = start;
	w->ring_base = start - PN_WAL_LONG_PHD;
	w->keep_from = start;
	w->seg_removed = w->seg_entered = 1;
	return true;
}

void pn_wal_free(struct pn_wal *w)
{
	pn_big_free(w->pages, ring_bytes(w));
	pn_big_free(w->rec_buf, w->rec_cap);
	free(w->waiters);
	w->pages = w->rec_buf = NULL;
	w->waiters = NULL;
}

void pn_wal_on_segments(struct pn_wal *w, void (*fn)(void *ctx), void *ctx)
{
	PN_ASSERT(fn);
	PN_ASSERT(!w->segments_due);
	w->segments_due = fn;
	w->segments_ctx = ctx;
}

void pn_wal_set_horizon(struct pn_wal *w, pn_lsn (*fn)(void *ctx), void *ctx)
{
	PN_ASSERT(fn);
	PN_ASSERT(!w->horizon);
	w->horizon = fn;
	w->horizon_ctx = ctx;
}

uint64_t pn_wal_file_offset(const struct pn_wal *w, pn_lsn addr)
{
	uint64_t segno = addr / w->seg_size;
	return (segno % w->nsegs) * w->seg_size + addr % w->seg_size;
}

enum pn_wal_room pn_wal_room(const struct pn_wal *w, uint32_t len)
{
	pn_lsn end, next;
	pn_wal_lsn_advance(w->insert_start, PN_ALIGN8((uint64_t)len) + PN_XLOG_BLCKSZ, w->seg_size,
			   &end, &next);
	PN_ASSERT(end >= w->ring_base);
	/* W5: the in-memory ring must not wrap onto pages not yet written. */
	if (end - w->ring_base >= (uint64_t)(w->npages - 2) * PN_XLOG_BLCKSZ)
		return PN_WAL_ROOM_RING;
	/* W4: keep one segment of slack for the checkpointer's own records. */
	uint64_t seg_end = end / w->seg_size, seg_keep = w->keep_from / w->seg_size;
	PN_ASSERT(seg_end >= seg_keep);
	return seg_end - seg_keep + 1 < w->nsegs ? PN_WAL_ROOM_OK : PN_WAL_ROOM_SEGMENTS;
}

static void count_record(struct pn_wal *w, const struct pn_wal_record *r, enum pn_rec kind,
			 uint32_t len)
{
	struct pn_metrics *m = w->m;
	uint32_t fpi = pn_wal_record_fpi_bytes(r, w->page_size);
	PN_ASSERT(fpi <= len);
	for (uint32_t i = 0; i < r->nblocks; i++)
		m->fpi_count += r->blocks[i].has_image;
	m->fpi_bytes += fpi;
	m->wal_bytes += len;
	m->wal_records++;
	m->rec_count[kind]++;
	m->rec_bytes[kind] += len - fpi;
	m->rec_fpi_bytes[kind] += fpi;
}

/* The record's bytes at s: encoded into rec_buf, then copied into the ring's pages (the pages
 * it enters begun). */
static void place_bytes(struct pn_wal *w, const struct pn_wal_record *r, uint32_t len, pn_lsn s)
{
	uint32_t encoded = pn_wal_record_encode(r, w->page_size, w->rec_buf);
	PN_ASSERT(encoded == len);
	pn_lsn page_addr = s - s % PN_XLOG_BLCKSZ;
	/* page_cb: a page entered mid-way must be in the ring (only its first record begins it) */
	PN_ASSERT(s % PN_XLOG_BLCKSZ == pn_wal_page_header_size(page_addr, w->seg_size) ||
		  in_ring(w, page_addr));
	pn_wal_copy_record(w->rec_buf, len, s, w->seg_size, w->sysid, page_cb, w);
}

pn_lsn pn_wal_insert(struct pn_wal *w, struct pn_wal_record *r, enum pn_rec kind, pn_lsn *start)
{
	PN_ASSERT((unsigned)kind < PN_REC_COUNT);
	uint32_t len = pn_wal_record_size(r, w->page_size);
	PN_ASSERT(len <= w->rec_cap);
	if (kind != PN_REC_IMPORTED) /* an imported record keeps its own (wl_import.c) */
		pn_rec_ids(kind, &r->rmid, &r->info);
	r->prev = w->prev_start;
	pn_lsn s = w->insert_start;
	if (!w->unread) /* W7 */
		place_bytes(w, r, len, s);
	w->insert_bytepos += PN_ALIGN8(len);
	pn_wal_lsn_advance(s, PN_ALIGN8(len), w->seg_size, &w->insert_end, &w->insert_start);
	w->prev_start = s;
	w->last_len = len;
	count_record(w, r, kind, len);
	if (start)
		*start = s;
	pn_lsn end = w->insert_end;
	if (end >= (w->seg_entered + 1) * (uint64_t)w->seg_size) /* W6, without dividing */
		enter_segment(w, end / w->seg_size);
	const struct pn_env *env = &w->svc->env;
	if (env->wal_inserted && !w->unread)
		env->wal_inserted(env->ctx, w->rec_buf, len, s, end);
	return end;
}

static bool wake_waiters(struct pn_wal *w)
{
	bool left = false;
	for (uint32_t i = 0; i < w->nwaiters; i++) {
		struct pn_wal_waiter *q = &w->waiters[i];
		if (q->waiting && q->lsn <= w->flushed) {
			q->waiting = false;
			pn_svc_wake(w->svc, i, 0);
		}
		left |= q->waiting;
	}
	return left;
}

static void wal_fsync_done(void *ctx, struct pn_io *io)
{
	struct pn_wal *w = ctx;
	pn_lsn target = io->lsn;
	PN_ASSERT(target == w->flush_target);
	PN_ASSERT(target >= w->flushed);
	uint64_t old_seg = w->flushed / w->seg_size;
	w->flushed = target;
	pn_wal_set_state(w, PN_WAL_IDLE);
	w->m->wal_flushes++;
	/* PostgreSQL's XLogCheckpointNeeded(openLogSegNo), tested as each segment is finished:
	 * the last one this flush finished is new_seg - 1, and a checkpoint is due once it is
	 * CheckPointSegments - 1 past the redo pointer's segment (so after CheckPointSegments
	 * segments at least, not one fewer). */
	uint32_t cps = w->ckpt_segments;
	uint64_t new_seg = target / w->seg_size;
	if (cps && new_seg != old_seg && new_seg - 1 >= w->redo / w->seg_size + cps - 1 &&
	    w->segments_due)
		w->segments_due(w->segments_ctx);
	if (wake_waiters(w) && pn_wal_insert_lsn(w) > w->flushed)
		pn_wal_start_flush(w, pn_wal_insert_lsn(w));
}

static void wal_write_done(void *ctx, struct pn_io *io)
{
	struct pn_wal *w = ctx;
	(void)io;
	PN_ASSERT(w->flush_state == PN_WAL_WRITING);
	PN_ASSERT(w->flush_ios > 0);
	if (--w->flush_ios > 0)
		return;
	w->written = w->flush_target;
	w->ring_base = w->written - w->written % PN_XLOG_BLCKSZ;
	pn_wal_set_state(w, PN_WAL_FSYNC);
	struct pn_io *f = pn_io_fsync(w->svc, PN_FILE_WAL, PN_WHY_WAL, wal_fsync_done, w);
	f->lsn = w->flush_target;
	pn_io_issue(w->svc, f);
}

static void issue_wal_write(struct pn_wal *w, pn_lsn from, pn_lsn to)
{
	/* [from, to) is page aligned and within one segment, so contiguous in the file. */
	PN_ASSERT(from < to && from % PN_XLOG_BLCKSZ == 0);
	PN_ASSERT((to - 1) / w->seg_size == from / w->seg_size);
	struct pn_io *io = pn_io_get(w->svc);
	io->op = PN_IO_WRITE;
	io->file = PN_FILE_WAL;
	io->why = PN_WHY_WAL;
	io->offset = pn_wal_file_offset(w, from);
	io->len = (uint32_t)(to - from);
	io->buf = w->unread ? NULL : ring_page(w, from); /* W7: no bytes were built */
	io->lsn = w->flush_target;
	io->done = wal_write_done;
	io->ctx = w;
	w->flush_ios++;
	w->m->wal_write_bytes += io->len;
	pn_io_issue(w->svc, io);
}

void pn_wal_start_flush(struct pn_wal *w, pn_lsn upto)
{
	if (w->flush_state != PN_WAL_IDLE || upto <= w->flushed)
		return;
	PN_ASSERT(upto <= pn_wal_insert_lsn(w));
	pn_wal_set_state(w, PN_WAL_WRITING);
	w->flush_target = upto;
	pn_lsn from = w->written - w->written % PN_XLOG_BLCKSZ;
	pn_lsn end = upto - 1 - (upto - 1) % PN_XLOG_BLCKSZ + PN_XLOG_BLCKSZ;
	w->flush_ios = 1; /* hold until every write is issued */
	pn_lsn run = from;
	uint32_t slot = (uint32_t)((from / PN_XLOG_BLCKSZ) % w->npages);
	for (pn_lsn a = from; a < end; a += PN_XLOG_BLCKSZ) {
		bool seg_start = a % w->seg_size == 0;
		if (a != run && (seg_start || slot == 0)) { /* a segment or the ring starts anew */
			issue_wal_write(w, run, a);
			run = a;
		}
		slot = slot + 1 == w->npages ? 0 : slot + 1;
	}
	issue_wal_write(w, run, end);
	wal_write_done(w, NULL);
}

bool pn_wal_flush_request(struct pn_wal *w, pn_lsn lsn, uint32_t proc)
{
	if (lsn <= w->flushed)
		return true;
	PN_ASSERT(proc < w->nwaiters);
	w->waiters[proc].waiting = true;
	w->waiters[proc].lsn = lsn;
	pn_wal_start_flush(w, pn_wal_insert_lsn(w));
	return false;
}

void pn_wal_rewait(struct pn_wal *w, uint32_t proc, pn_lsn lsn)
{
	PN_ASSERT(proc < w->nwaiters);
	PN_ASSERT(lsn > 0);
	if (w->waiters[proc].waiting)
		w->waiters[proc].lsn = lsn;
}

void pn_wal_checkpoint_done(struct pn_wal *w, pn_lsn redo)
{
	PN_ASSERT(redo <= pn_wal_insert_lsn(w));
	pn_lsn horizon = w->horizon ? w->horizon(w->horizon_ctx) : UINT64_MAX;
	w->keep_from = PN_MIN(redo, horizon); /* pushdown: the page server's too */
	remove_old_segments(w);
}

void pn_wal_set_redo(struct pn_wal *w, pn_lsn redo)
{
	PN_ASSERT(redo > 0);
	PN_ASSERT(redo >= w->redo); /* RedoRecPtr only moves forward (recovery starts at 0) */
	w->redo = redo;
}

void pn_wal_set_keep_from(struct pn_wal *w, pn_lsn lsn)
{
	PN_ASSERT(lsn > 0);
	w->keep_from = lsn;
}

void pn_wal_set_durable(struct pn_wal *w, pn_lsn end)
{
	PN_ASSERT(w->flush_state == PN_WAL_IDLE);
	PN_ASSERT(end > 0);
	w->written = w->flushed = end;
}

void pn_wal_start_at(struct pn_wal *w, pn_lsn end, pn_lsn prev_start)
{
	PN_ASSERT(w->flush_state == PN_WAL_IDLE);
	PN_ASSERT(prev_start < end);
	/* After recovery: continue at the end of valid WAL, keeping the valid part of its page
	 * and zeroing the rest, as PostgreSQL does at the end of recovery. */
	PN_ASSERT(!w->unread); /* W7: recovery reads WAL */
	forget_pages(w);
	pn_lsn page_addr = end - end % PN_XLOG_BLCKSZ;
	w->ring_base = page_addr;
	uint8_t *p = ring_page(w, page_addr);
	if (end % PN_XLOG_BLCKSZ) {
		const struct pn_env *env = &w->svc->env;
		/* only the part kept: the bytes past the end are not recovery's inputs */
		bool ok = env->read_sync(env->ctx, PN_FILE_WAL, pn_wal_file_offset(w, page_addr),
					 (uint32_t)(end % PN_XLOG_BLCKSZ), p);
		PN_ASSERT(ok);
		memset(p + end % PN_XLOG_BLCKSZ, 0, PN_XLOG_BLCKSZ - end % PN_XLOG_BLCKSZ);
	}
	set_insert(w, pn_wal_recptr_to_bytepos(end, w->seg_size));
	/* An end exactly at a page boundary: the next record starts past the next header. */
	w->written = w->flushed = end;
	w->prev_start = prev_start;
	/* W6 from here: what lies before keep_from is the crashed run's business. */
	w->seg_removed = w->keep_from / w->seg_size;
	w->seg_entered = end / w->seg_size - 1;
	enter_segment(w, end / w->seg_size);
}

void pn_wal_check(const struct pn_wal *w, bool recovering)
{
	PN_ASSERT((unsigned)w->flush_state < PN_WAL_FLUSH_STATES);
	PN_ASSERT(w->flush_state != PN_WAL_IDLE || w->flush_ios == 0);
	PN_ASSERT(w->flush_state != PN_WAL_FSYNC || w->written == w->flush_target);
	PN_ASSERT(w->ring_base <= w->written || recovering);
	PN_ASSERT(w->flushed <= w->written || recovering);
	PN_ASSERT(recovering || w->flushed <= pn_wal_insert_lsn(w));
	PN_ASSERT(w->keep_from <= w->redo || recovering);
	PN_ASSERT(w->nwaiters == 0 || w->waiters);
	PN_ASSERT(w->insert_start == pn_wal_bytepos_to_recptr(w->insert_bytepos, w->seg_size));
	PN_ASSERT(w->insert_end == pn_wal_bytepos_to_endrecptr(w->insert_bytepos, w->seg_size));
}

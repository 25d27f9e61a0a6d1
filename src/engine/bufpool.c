/*
 * bufpool.c: the buffer pool (engine layer): frames, clock-sweep eviction, reads, and
 * write-outs that keep the WAL-before-data rule.
 *
 * A frame's life:
 *   empty --pn_buf_pin() miss--> reading --read done--> valid (clean)
 *   valid --a change (backend.c)--> dirty --pn_buf_write()--> writing --done--> clean
 *   clean, unpinned, usage 0 --clock sweep--> reused for another page
 * A frame written while being changed again stays dirty (redirtied). At most one
 * write-out of a frame runs at a time (it may be two I/Os in Umbra, see below).
 *
 * Rules:
 *   B1 (R1) before a data write is issued, the WAL is flushed up to the frame's last LSN.
 *   B2 a write binds its slot and copies the page when issued (5.3); the checksum is
 *      computed on the copy, as PostgreSQL's PageSetChecksumCopy() does.
 *   B3 Umbra: a frame that a running checkpoint must write to a source slot other than the
 *      current one (it shifted after the redo pointer) is written to both when evicted, so
 *      the checkpoint's baseline gets the pre-redo changes (5.2's sharp case).
 *   B4 Umbra: a frame dirtied only by unlogged hint bits whose current slot is a baseline
 *      (page LSN <= RedoRecPtr) is not written: the hint is dropped, as PostgreSQL may.
 *   B5 doublewrite: the page goes to the doublewrite file, which is fsynced, before the
 *      in-place write is issued (the row's write_reserve and write_image hooks).
 *   B6 pushdown: a dirty frame is never written; writing it out drops it (the row's
 *      drop_write keeps its last-written LSN) and a miss is a GetPage@LSN request to the
 *      page server (page_ready, page_read).
 *   B7 a writer that must wait for the WAL flush (B1) holds the frame until it issues the
 *      write, as FlushBuffer() holds the buffer's content lock across XLogFlush(): nothing
 *      changes a held frame (a backend's DECIDE waits, backend.c), evicts it or writes it
 *      for another proc, so the write the flush was for is the one that goes out. Without
 *      the hold a hot page changes after every flush and its checkpoint never ends.
 *        not held --pn_buf_write() returns PN_WRITE_WAL (hold_take)--> held by proc
 *        held --proc's pn_buf_write() issues the write (hold_release)--> not held
 *      The checkpointer comes back to its frame (its scan stays); an evicting backend to
 *      its victim (b->victims[proc]); the background writer never waits (no hold).
 *   B8 a read whose bytes the lazy builder made, a whole page (pn_buf_note_built: a
 *      device chunk never written, sim/chunks.h CK3), is not verified: the builder sets the
 *      checksum of exactly those bytes and nothing changes a frame while its read is in
 *      flight, so the verification cannot fail. Release builds skip it (it was a tenth of
 *      `run`'s instructions); every other build asserts that it passes.
 *   B9 a write's completion clears run r's need of the frame (bit r of ckpt_needed; in a
 *      slotted row only for a write to ckpt_slot[r]) when its image holds every WAL-logged
 *      change run r needs. One checkpoint at a time (PostgreSQL's case) it counts unless
 *      it was issued before r began and the frame changed while it was in flight, as
 *      before. With checkpoint.overlap it counts unless a logged change reached the frame
 *      after the image was copied and before r began (redirtied_seq): every change made
 *      before r began (its redo pointer) is what r needs; a later change, or an unlogged
 *      hint, does not matter to r. Crediting only writes issued after r began, or a frame not changed
 *      until the write completed, left run r to write the frame again even when its
 *      image had all r needs; with two checkpoints at once (checkpoint.overlap) that
 *      second write went to a slot the older run's control file names by then, and a
 *      tear of it broke recovery from that checkpoint (docs/umbra-findings.md section 10).
 *   B10 a read that completes in an event an earlier run of the same search ran from the same
 *      start (b->seen, set by the engine for a schedule's events before its last
 *      preemption: model/explore.h RD4) is not verified: the verification only reports a
 *      violation, and that run verified the same bytes and found none (it would have ended
 *      the search). Release builds skip it; every other build asserts that it passes.
 *   B11 a write of a slotted frame's home slot leaves it dirty while a running checkpoint
 *      still needs it written to another slot (source_owed): that run's write is still
 *      to come. The newer of two overlapping runs selected the frame at the page's new
 *      slot and its write completed first; the frame, taken as clean, made the older run's
 *      checkpointer drop its need (PN_WRITE_NONE), and its control file named a source
 *      slot never written (docs/umbra-findings.md 9.2).
 * Umbra-like rows (PN_STORE_SLOTTED) write a heap page to the slot each write binds (B3,
 * B4 below); the protocol's hooks are protocol.h's.
 */
#include "bufpool.h"

#include "metrics.h"
#include "page.h"
#include "protocol.h"
#include "store.h"
#include "wal.h"

#include <stdlib.h>
#include <string.h>

#define POLL_NS 20000u

/* The frames of a pool of 32 MiB or more (a simulation's shared buffers, not a checker's
 * recovering world, which allocates its small pool per crash state) are a huge-page
 * mapping: pgbench scale 10's 16,384 frames took 32,768 page faults as they were first
 * read into (docs/performance.md). */
#define FRAMES_HUGE_BYTES ((size_t)32 << 20)
static size_t frames_bytes(const struct pn_bufpool *b)
{
	return (size_t)b->nframes * b->h.page_size;
}
static bool frames_huge(const struct pn_bufpool *b) { return frames_bytes(b) >= FRAMES_HUGE_BYTES; }
static uint8_t *frames_alloc(const struct pn_bufpool *b)
{
	return frames_huge(b) ? pn_huge_alloc(frames_bytes(b)) : pn_big_zalloc(frames_bytes(b));
}

bool pn_buf_init(struct pn_bufpool *b, const struct pn_buf_handles *h, uint32_t nframes)
{
	PN_ASSERT(h->sc != NULL);
	PN_ASSERT(h->svc != NULL);
	PN_ASSERT(h->wal != NULL);
	PN_ASSERT(h->store != NULL);
	PN_ASSERT(h->proto != NULL);
	PN_ASSERT(h->pctx != NULL);
	PN_ASSERT(h->m != NULL);
	PN_ASSERT(h->ckpt_seq_begun != NULL);
	PN_ASSERT(h->ckpt_seq_done != NULL);
	PN_ASSERT(h->recovering != NULL);
	PN_ASSERT(nframes > 0);
	memset(b, 0, sizeof(*b));
	b->h = *h;
	b->nframes = nframes;
	b->frames = calloc(b->nframes, sizeof(*b->frames));
	b->frame_data = frames_alloc(b);
	b->page_frame = malloc(sizeof(uint32_t) * b->h.pages);
	b->victims = calloc(b->h.nprocs ? b->h.nprocs : 1, sizeof(*b->victims));
	if (!b->frames || !b->frame_data || !b->page_frame || !b->victims)
		return false;
	for (uint32_t i = 0; i < b->nframes; i++)
		b->frames[i].page = PN_NO_FRAME;
	for (uint32_t p = 0; p < b->h.pages; p++)
		b->page_frame[p] = PN_NO_FRAME;
	return true;
}

void pn_buf_free(struct pn_bufpool *b)
{
	free(b->frames);
	if (frames_huge(b))
		pn_huge_free(b->frame_data, frames_bytes(b));
	else
		pn_big_free(b->frame_data, frames_bytes(b));
	free(b->page_frame);
	free(b->victims);
	memset(b, 0, sizeof(*b));
}

uint8_t *pn_frame_page(struct pn_bufpool *b, uint32_t frame)
{
	return b->frame_data + (size_t)frame * b->h.page_size;
}

void pn_buf_note_built(struct pn_bufpool *b, const uint8_t *page)
{
	size_t at = (size_t)(page - b->frame_data), size = b->h.page_size;
	if (page < b->frame_data || at >= b->nframes * size || at % size)
		return; /* not a frame: another reader's buffer */
	struct pn_frame *f = &b->frames[at / size];
	if (f->io_reads)
		f->built = true;
}

bool pn_buf_idle(const struct pn_bufpool *b, uint32_t frame)
{
	const struct pn_frame *f = &b->frames[frame];
	return f->pins == 0 && !f->locked && !f->held && f->io_reads == 0 && f->io_writes == 0;
}

bool pn_buf_drop(struct pn_bufpool *b, uint32_t page)
{
	uint32_t fi = b->page_frame[page];
	if (fi == PN_NO_FRAME)
		return true;
	if (!pn_buf_idle(b, fi))
		return false;
	memset(&b->frames[fi], 0, sizeof(b->frames[fi]));
	b->frames[fi].page = PN_NO_FRAME;
	b->page_frame[page] = PN_NO_FRAME;
	return true;
}

static bool page_checksummed(const struct pn_bufpool *b, uint32_t page)
{
	if (pn_store_is_slru(b->h.store, page))
		return b->h.sc->protocol.slru_headers;
	return b->h.sc->protocol.checksums;
}

static void read_done(void *ctx, struct pn_io *io)
{
	struct pn_bufpool *b = ctx;
	struct pn_frame *f = &b->frames[io->frame];
	uint8_t *page = pn_frame_page(b, io->frame);
	PN_ASSERT(io->buf == page); /* read straight into the frame (start_read) */
	pn_buf_touch(b, io->frame);
	f->io_reads = 0;
	f->valid = true;
	f->last_lsn = pn_store_is_slru(b->h.store, io->page) && !b->h.sc->protocol.slru_headers
			      ? 0
			      : pn_page_lsn(page);
	bool headerless = pn_store_is_slru(b->h.store, io->page) && !b->h.sc->protocol.slru_headers;
	/* B8: a page the builder made verifies by construction; B10: an earlier run verified
	 * this very read. Debug builds check that it does. */
#ifdef NDEBUG
	bool verify = !headerless && !f->built && !b->seen;
#else
	PN_ASSERT(!f->built ||
		  pn_page_verify(page, b->h.page_size, io->page, page_checksummed(b, io->page)));
	PN_ASSERT(!b->seen || headerless ||
		  pn_page_verify(page, b->h.page_size, io->page, page_checksummed(b, io->page)));
	bool verify = !headerless;
#endif
	f->built = false;
	if (verify &&
	    !pn_page_verify(page, b->h.page_size, io->page, page_checksummed(b, io->page)))
		pn_svc_violation(b->h.svc, PN_VIOL_CHECKSUM, io->page,
				 "page %u read from slot %u fails verification", io->page,
				 io->slot);
	b->h.m->data_reads++;
	b->h.m->data_bytes_read += b->h.page_size;
	if (*b->h.recovering)
		b->h.m->recovery_pages_read++;
	if (io->proc != UINT32_MAX)
		pn_svc_wake(b->h.svc, io->proc, 0);
}

static void start_read(struct pn_bufpool *b, uint32_t frame, uint32_t page, uint32_t proc)
{
	struct pn_frame *f = &b->frames[frame];
	if (f->page != PN_NO_FRAME)
		b->page_frame[f->page] = PN_NO_FRAME;
	pn_buf_touch(b, frame);
	memset(f, 0, sizeof(*f));
	f->page = page;
	f->io_reads = 1;
	b->page_frame[page] = frame;
	if (b->h.proto->buffer.page_read) { /* pushdown: GetPage@LSN from the page server */
		b->h.proto->buffer.page_read(b->h.pctx, frame, page, proc);
		return;
	}
	struct pn_io *io = pn_io_get(b->h.svc);
	io->op = PN_IO_READ;
	io->file = PN_FILE_DATA;
	io->why = PN_WHY_READ_PAGE;
	io->frame = frame;
	io->page = page;
	io->slot = pn_store_is_slru(b->h.store, page) ? 0 : pn_store_slot(b->h.store, page);
	io->offset = pn_store_offset(b->h.store, page, io->slot);
	io->len = b->h.page_size;
	io->buf = pn_frame_page(b, frame); /* no bounce buffer: the frame is the read's own */
	io->proc = proc;
	io->done = read_done;
	io->ctx = b;
	pn_io_issue(b->h.svc, io);
}

/* Clock sweep: the next unpinned frame with usage 0, decrementing usage on the way. */
static uint32_t find_victim(struct pn_bufpool *b)
{
	for (uint32_t n = 0; n < 6 * b->nframes; n++) {
		uint32_t i = b->clock_hand;
		b->clock_hand = (b->clock_hand + 1) % b->nframes;
		struct pn_frame *f = &b->frames[i];
		if (!pn_buf_idle(b, i) || f->ckpt_needed)
			continue;
		if (f->usage > 0) {
			f->usage--;
			continue;
		}
		return i;
	}
	return PN_NO_FRAME;
}

static void start_zero(struct pn_bufpool *b, uint32_t frame, uint32_t page)
{
	struct pn_frame *f = &b->frames[frame];
	if (f->page != PN_NO_FRAME)
		b->page_frame[f->page] = PN_NO_FRAME;
	pn_buf_touch(b, frame);
	memset(f, 0, sizeof(*f));
	f->page = page;
	f->valid = true;
	b->page_frame[page] = frame;
	memset(pn_frame_page(b, frame), 0, b->h.page_size);
}

uint32_t pn_buf_pin(struct pn_bufpool *b, uint32_t page, uint32_t proc, bool no_read)
{
	PN_ASSERT(proc < b->h.nprocs);
	struct pn_buf_victim *vic = &b->victims[proc];
	uint32_t fi = b->page_frame[page];
	if (fi != PN_NO_FRAME && !vic->held) {
		struct pn_frame *f = &b->frames[fi];
		if (!f->valid) {
			pn_svc_wake(b->h.svc, proc, POLL_NS);
			return PN_NO_FRAME;
		}
		f->pins++;
		if (f->usage < 5)
			f->usage++;
		pn_buf_touch(b, fi);
		return fi;
	}
	if (b->h.proto->buffer.page_ready && !no_read &&
	    !b->h.proto->buffer.page_ready(b->h.pctx, page, proc))
		return PN_NO_FRAME; /* pushdown: woken once the page server can serve it */
	uint32_t v = vic->held ? vic->frame : find_victim(b); /* B7: its held victim first */
	if (v == PN_NO_FRAME) {
		pn_svc_wake(b->h.svc, proc, POLL_NS);
		return PN_NO_FRAME;
	}
	struct pn_frame *f = &b->frames[v];
	PN_ASSERT(!vic->held || (f->held && f->holder == proc));
	if (f->page != PN_NO_FRAME && f->dirty) {
		enum pn_write_result w = pn_buf_write(b, v, PN_WHY_EVICT, proc, -1, NULL);
		PN_ASSERT(!f->held || f->holder == proc);
		vic->held = f->held;
		vic->frame = v;
		if (w == PN_WRITE_STARTED)
			b->h.m->evictions++;
		if (w != PN_WRITE_WAL)
			pn_svc_wake(b->h.svc, proc, w == PN_WRITE_STARTED ? 0 : POLL_NS);
		if (w != PN_WRITE_NONE)
			return PN_NO_FRAME;
		/* B4: an unlogged hint was dropped; the frame is clean now. */
	}
	if (no_read) {
		start_zero(b, v, page);
		f->pins = 1;
		f->usage = 1;
		return v;
	}
	start_read(b, v, page, proc);
	return PN_NO_FRAME;
}

void pn_buf_unpin(struct pn_bufpool *b, uint32_t frame)
{
	PN_ASSERT(b->frames[frame].pins > 0);
	b->frames[frame].pins--;
	pn_buf_touch(b, frame);
}

/* A heap page of a row whose pages move between slots (its store_flags). */
static bool is_slotted_heap(const struct pn_bufpool *b, uint32_t page)
{
	return (b->h.proto->store_flags & PN_STORE_SLOTTED) && !pn_store_is_slru(b->h.store, page);
}

static void write_done(void *ctx, struct pn_io *io);

static uint64_t late_bind(void *ctx, struct pn_io *io)
{
	struct pn_bufpool *b = ctx; /* the issuer's, io->ctx, as the environment passes it */
	PN_ASSERT(ctx == io->ctx);
	PN_ASSERT(io->done == write_done);
	/* aio_late_bind: the device offset is looked up in the mapping when the I/O is
	 * dispatched; the engine still believes it wrote io->slot (the bug of 5.3). */
	uint32_t slot = pn_store_slot(b->h.store, io->page);
	PN_TESTCASE("late-bound write lands on another slot", slot != io->slot);
	pn_store_check_write(b->h.store, io->page, slot, pn_page_lsn(io->buf), *b->h.ckpt_seq_done);
	return pn_store_offset(b->h.store, io->page, slot);
}

/* The write of frame's page to slot, its offset bound (late-bound: at dispatch), its bytes
 * not yet in its buffer, not yet issued (write_issue). */
static struct pn_io *write_io(struct pn_bufpool *b, uint32_t frame, uint32_t slot,
			      enum pn_io_why why, uint32_t proc, pn_lsn lsn,
			      const struct pn_io_then *then)
{
	struct pn_frame *f = &b->frames[frame];
	struct pn_io *io = pn_io_get(b->h.svc);
	io->op = PN_IO_WRITE;
	io->file = PN_FILE_DATA;
	io->why = why;
	io->frame = frame;
	io->page = f->page;
	io->slot = slot;
	io->len = b->h.page_size;
	io->proc = proc;
	io->ckpt_seq = *b->h.ckpt_seq_begun;
	io->lsn = lsn;
	/* R1, checked on every data write whatever path issued it. */
	if (io->lsn > pn_wal_flushed(b->h.wal))
		pn_svc_violation(b->h.svc, PN_VIOL_WAL_BEFORE_DATA, f->page,
				 "page %u written with LSN %llX beyond the flushed WAL %llX (R1)",
				 f->page, (unsigned long long)io->lsn,
				 (unsigned long long)pn_wal_flushed(b->h.wal));
	io->done = write_done;
	io->ctx = b;
	if (then) {
		io->then = then->fn;
		io->then_ctx = then->ctx;
	}
	bool late = b->h.proto->buffer.bind_late &&
		    b->h.proto->buffer.bind_late(b->h.pctx, f->page);
	if (late) {
		io->bind = late_bind;
	} else {
		io->offset = pn_store_offset(b->h.store, f->page, slot);
		pn_store_check_write(b->h.store, f->page, slot,
				     pn_page_lsn(pn_frame_page(b, frame)), *b->h.ckpt_seq_done);
	}
	return io; /* the offset bound first: env.h write_buf may lend by it */
}

static void write_issue(struct pn_bufpool *b, struct pn_io *io)
{
	struct pn_frame *f = &b->frames[io->frame];
	pn_store_note_written(b->h.store, f->page, io->slot);
	f->io_writes++;
	b->data_writes_inflight++;
	b->h.m->data_writes++;
	b->h.m->data_bytes_written += b->h.page_size;
	pn_io_issue(b->h.svc, io);
}

struct pn_io *pn_buf_issue_write(struct pn_bufpool *b, uint32_t frame, uint32_t slot,
				 enum pn_io_why why, uint32_t proc, const uint8_t *image,
				 pn_lsn lsn, const struct pn_io_then *then)
{
	struct pn_io *io = write_io(b, frame, slot, why, proc, lsn, then);
	pn_io_fill(b->h.svc, io, image);
	write_issue(b, io);
	return io;
}

/* B11: whether a running checkpoint still needs f written to a slot other than home (a
 * shifted page's source, B3): the frame stays dirty until it is, or the checkpointer would
 * find it clean and take its need as met. With overlapping checkpoints the newer run's
 * write of home completes first when the page shifted after the older run selected it. */
static bool source_owed(const struct pn_frame *f, uint32_t home)
{
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		if ((f->ckpt_needed & (1u << r)) && f->ckpt_slot[r] != home)
			return true;
	return false;
}

static void write_done(void *ctx, struct pn_io *io)
{
	struct pn_bufpool *b = ctx;
	struct pn_frame *f = &b->frames[io->frame];
	PN_ASSERT(f->io_writes > 0 && f->page == io->page);
	pn_buf_touch(b, io->frame);
	f->io_writes--;
	b->data_writes_inflight--;
	bool slotted = is_slotted_heap(b, io->page);
	bool active_only = (b->h.sc->protocol.mutations & PN_MUT_CKPT_ACTIVE_ONLY) != 0;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		/* bit r is set only while run r runs (pn_engine_check asserts it) */
		if (!(f->ckpt_needed & (1u << r)))
			continue;
		/* B9: with overlapping runs, not when it misses a logged change made before run
		 * r began; one run at a time, not when issued before r began and changed since */
		bool misses = b->h.sc->checkpoint.overlap
				      ? f->redirtied_seq && f->redirtied_seq <= f->ckpt_run_seq[r]
				      : io->ckpt_seq < f->ckpt_run_seq[r] && f->redirtied;
		if (misses)
			continue;
		if (!slotted || active_only || io->slot == f->ckpt_slot[r])
			f->ckpt_needed &= (uint8_t) ~(1u << r);
	}
	uint32_t home = slotted ? pn_store_slot(b->h.store, io->page) : 0;
	if (io->slot == home && !f->redirtied && f->io_writes == 0 &&
	    !(slotted && !active_only && source_owed(f, home))) {
		f->dirty = false;
		f->dirty_hint_only = false;
	}
	if (io->then)
		io->then(io->then_ctx, io);
	if (io->proc != UINT32_MAX)
		pn_svc_wake(b->h.svc, io->proc, 0);
}

/* ---- write-out ---- */

/* B7: the frame stays as it is until proc writes it. */
static void hold_take(struct pn_bufpool *b, struct pn_frame *f, uint32_t proc)
{
	PN_ASSERT(proc < b->h.nprocs);
	PN_ASSERT(f->valid && f->dirty && !f->locked && f->io_writes == 0 && f->io_reads == 0);
	PN_ASSERT(!f->held || (f->holder == proc && f->held_lsn == f->last_lsn));
	f->held = true;
	f->holder = proc;
	f->held_lsn = f->last_lsn;
	pn_buf_touch(b, (uint32_t)(f - b->frames));
}

/* B7: proc issues the write it held the frame for; nothing changed the frame meanwhile. */
static void hold_release(struct pn_bufpool *b, struct pn_frame *f, uint32_t proc)
{
	PN_ASSERT(f->held && f->holder == proc);
	PN_ASSERT(f->last_lsn == f->held_lsn && f->held_lsn <= pn_wal_flushed(b->h.wal));
	PN_ASSERT(!f->locked && f->io_writes == 0);
	f->held = false;
	pn_buf_touch(b, (uint32_t)(f - b->frames));
}

/* The frame's bytes were copied for a write: no change since. */
static void image_copied(struct pn_frame *f)
{
	f->redirtied = false;
	f->redirtied_seq = 0;
}

static void prepare_image(struct pn_bufpool *b, uint32_t frame, uint8_t *out)
{
	struct pn_frame *f = &b->frames[frame];
	memcpy(out, pn_frame_page(b, frame), b->h.page_size);
	if (page_checksummed(b, f->page))
		pn_page_set_checksum(out, b->h.page_size, f->page);
}

/* Where run r's write of f goes: the slot its selection bound, as the row brings it up to
 * date (l4). */
static uint32_t write_slot(const struct pn_bufpool *b, struct pn_frame *f, int r)
{
	PN_ASSERT(r >= 0 && r < PN_MAX_CKPT_RUNS);
	return b->h.proto->buffer.write_slot ? b->h.proto->buffer.write_slot(b->h.pctx, f, r)
					     : f->ckpt_slot[r];
}

enum pn_write_result pn_buf_write(struct pn_bufpool *b, uint32_t frame, enum pn_io_why why,
				  uint32_t proc, int run, const struct pn_io_then *then)
{
	struct pn_frame *f = &b->frames[frame];
	if (!f->valid || !f->dirty)
		return PN_WRITE_NONE;
	if (f->locked || f->io_writes || f->io_reads || (f->held && f->holder != proc))
		return PN_WRITE_BUSY;
	if (b->h.proto->buffer.drop_write && b->h.proto->buffer.drop_write(b->h.pctx, frame))
		return PN_WRITE_NONE; /* B6 pushdown: the page server rebuilds the page */
	bool slotted = is_slotted_heap(b, f->page);
	if (slotted && f->dirty_hint_only &&
	    pn_page_lsn(pn_frame_page(b, frame)) <= pn_wal_redo(b->h.wal)) {
		f->dirty = f->dirty_hint_only = false; /* B4 */
		f->held = false; /* B7: a redo pointer that moved past it leaves nothing to write */
		return PN_WRITE_NONE;
	}
	if (f->last_lsn > pn_wal_flushed(b->h.wal)) {
		if (!(b->h.sc->protocol.mutations & PN_MUT_NO_WAL_BEFORE_DATA)) {
			if (proc == UINT32_MAX) /* the background writer does not wait */
				return PN_WRITE_BUSY;
			hold_take(b, f, proc);
			bool flushed = pn_wal_flush_request(b->h.wal, f->last_lsn, proc);
			PN_ASSERT(!flushed);
			return PN_WRITE_WAL;
		}
	}
	uint8_t *img = pn_svc_scratch(b->h.svc, PN_SCRATCH_WRITE_IMAGE);
	if (b->h.proto->buffer.write_reserve &&
	    !b->h.proto->buffer.write_reserve(b->h.pctx, frame, why))
		return PN_WRITE_BUSY; /* before the copy and checksum: they would be thrown away */
	PN_TESTCASE("a write issued after a WAL flush it held its frame for (B7)", f->held);
	if (f->held)
		hold_release(b, f, proc);
	if (!slotted &&
	    !b->h.proto->buffer.write_image) { /* one write: its image straight into its buffer */
		struct pn_io *io = write_io(b, frame, 0, why, proc, f->last_lsn, then);
		prepare_image(b, frame, pn_io_buffer(b->h.svc, io));
		image_copied(f);
		write_issue(b, io);
		return PN_WRITE_STARTED;
	}
	prepare_image(b, frame, img);
	image_copied(f);
	if (b->h.proto->buffer.write_image &&
	    b->h.proto->buffer.write_image(b->h.pctx, frame, why, proc, img, then))
		return PN_WRITE_STARTED; /* B5: through the doublewrite area */
	if (!slotted) {
		pn_buf_issue_write(b, frame, 0, why, proc, img, f->last_lsn, then);
		return PN_WRITE_STARTED;
	}
	bool active_only = (b->h.sc->protocol.mutations & PN_MUT_CKPT_ACTIVE_ONLY) != 0;
	uint32_t cur = pn_store_slot(b->h.store, f->page);
	if (why == PN_WHY_CKPT) {
		uint32_t slot = active_only ? cur : write_slot(b, f, run);
		PN_TESTCASE("checkpoint writes a shifted page's source slot", slot != cur);
		pn_buf_issue_write(b, frame, slot, why, proc, img, f->last_lsn, then);
		return PN_WRITE_STARTED;
	}
	for (int r = 0; r < PN_MAX_CKPT_RUNS && !active_only; r++) {
		bool both = (f->ckpt_needed & (1u << r)) && write_slot(b, f, r) != cur;
		PN_TESTCASE("eviction of a shifted page the checkpoint still needs (B3)", both);
		if (both)
			pn_buf_issue_write(b, frame, f->ckpt_slot[r], PN_WHY_EVICT_SOURCE, proc,
					   img, f->last_lsn, then);
	}
	pn_buf_issue_write(b, frame, cur, why, proc, img, f->last_lsn, then);
	return PN_WRITE_STARTED;
}

/* ---- the frame's flag edges (bufpool.h) ---- */

static struct pn_frame *pinned_frame(struct pn_bufpool *b, uint32_t frame)
{
	PN_ASSERT(frame < b->nframes);
	struct pn_frame *f = &b->frames[frame];
	PN_ASSERT(f->pins > 0);
	PN_ASSERT(f->valid);
	pn_buf_touch(b, frame);
	return f;
}

/* A change of f while its write is in flight; logged: WAL covers it (B9). */
static void changed_in_write(const struct pn_bufpool *b, struct pn_frame *f, bool logged)
{
	if (!f->io_writes)
		return;
	f->redirtied = true;
	if (logged && !f->redirtied_seq)
		f->redirtied_seq = *b->h.ckpt_seq_begun + 1;
}

void pn_buf_set_dirty(struct pn_bufpool *b, uint32_t frame)
{
	struct pn_frame *f = pinned_frame(b, frame);
	f->dirty = true;
	f->dirty_hint_only = false;
	changed_in_write(b, f, true);
}

void pn_buf_set_last_lsn(struct pn_bufpool *b, uint32_t frame, pn_lsn lsn)
{
	struct pn_frame *f = pinned_frame(b, frame);
	PN_ASSERT(f->dirty);
	f->last_lsn = lsn;
}

void pn_buf_set_hint_dirty(struct pn_bufpool *b, uint32_t frame)
{
	struct pn_frame *f = pinned_frame(b, frame);
	if (!f->dirty)
		f->dirty_hint_only = true;
	f->dirty = true;
	changed_in_write(b, f, false);
}

void pn_buf_set_redo_dirty(struct pn_bufpool *b, uint32_t frame)
{
	struct pn_frame *f = pinned_frame(b, frame);
	f->dirty = true;
	changed_in_write(b, f, true);
}

void pn_buf_set_clean(struct pn_bufpool *b, uint32_t frame)
{
	PN_ASSERT(frame < b->nframes);
	struct pn_frame *f = &b->frames[frame];
	pn_buf_touch(b, frame);
	PN_ASSERT(f->valid && f->dirty);
	PN_ASSERT(f->io_writes == 0 && !f->locked);
	f->dirty = f->dirty_hint_only = false;
	image_copied(f); /* no write in flight left to miss a change */
}

void pn_buf_set_read_done(struct pn_bufpool *b, uint32_t frame, pn_lsn lsn)
{
	PN_ASSERT(frame < b->nframes);
	struct pn_frame *f = &b->frames[frame];
	pn_buf_touch(b, frame);
	PN_ASSERT(f->io_reads == 1);
	PN_ASSERT(!f->valid && f->page != PN_NO_FRAME);
	f->io_reads = 0;
	f->valid = true;
	f->last_lsn = lsn;
}

void pn_buf_lock(struct pn_bufpool *b, uint32_t frame)
{
	struct pn_frame *f = pinned_frame(b, frame);
	PN_ASSERT(!f->locked);
	PN_ASSERT(!f->held);
	f->locked = true;
}

void pn_buf_unlock(struct pn_bufpool *b, uint32_t frame)
{
	PN_ASSERT(frame < b->nframes);
	struct pn_frame *f = &b->frames[frame];
	pn_buf_touch(b, frame);
	PN_ASSERT(f->locked);
	PN_ASSERT(f->pins > 0);
	f->locked = false;
}

void pn_buf_write_begun(struct pn_bufpool *b, uint32_t frame)
{
	PN_ASSERT(frame < b->nframes);
	struct pn_frame *f = &b->frames[frame];
	pn_buf_touch(b, frame);
	PN_ASSERT(f->valid && f->io_writes < UINT8_MAX);
	f->io_writes++;
	b->data_writes_inflight++;
}

void pn_buf_write_ended(struct pn_bufpool *b, uint32_t frame)
{
	PN_ASSERT(frame < b->nframes);
	struct pn_frame *f = &b->frames[frame];
	pn_buf_touch(b, frame);
	PN_ASSERT(f->io_writes > 0);
	PN_ASSERT(b->data_writes_inflight > 0);
	f->io_writes--;
	b->data_writes_inflight--;
}

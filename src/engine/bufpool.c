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
 *      its victim (pn_proc.victim_held); the background writer never waits (no hold).
 * Umbra-like rows (PN_STORE_SLOTTED) write a heap page to the slot each write binds (B3,
 * B4 below); the protocol's hooks are protocol.h's.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define POLL_NS 20000u

bool pn_buf_init(struct pn_engine *e)
{
	e->nframes = e->sc->storage.buffers;
	e->frames = calloc(e->nframes, sizeof(*e->frames));
	e->frame_data = calloc(e->nframes, e->page_size);
	e->page_frame = malloc(sizeof(uint32_t) * e->pages);
	if (!e->frames || !e->frame_data || !e->page_frame)
		return false;
	for (uint32_t i = 0; i < e->nframes; i++)
		e->frames[i].page = PN_NO_FRAME;
	for (uint32_t p = 0; p < e->pages; p++)
		e->page_frame[p] = PN_NO_FRAME;
	return true;
}

void pn_buf_free(struct pn_engine *e)
{
	free(e->frames);
	free(e->frame_data);
	free(e->page_frame);
}

uint8_t *pn_frame_page(struct pn_engine *e, uint32_t frame)
{
	return e->frame_data + (size_t)frame * e->page_size;
}

bool pn_buf_idle(const struct pn_engine *e, uint32_t frame)
{
	const struct pn_frame *f = &e->frames[frame];
	return f->pins == 0 && !f->locked && !f->held && f->io_reads == 0 && f->io_writes == 0;
}

static bool page_checksummed(const struct pn_engine *e, uint32_t page)
{
	if (pn_store_is_slru(&e->store, page))
		return e->sc->protocol.slru_headers;
	return e->sc->protocol.checksums;
}

static void read_done(void *ctx, struct pn_io *io)
{
	struct pn_engine *e = ctx;
	struct pn_frame *f = &e->frames[io->frame];
	uint8_t *page = pn_frame_page(e, io->frame);
	memcpy(page, io->buf, e->page_size);
	f->io_reads = 0;
	f->valid = true;
	f->last_lsn = pn_store_is_slru(&e->store, io->page) && !e->sc->protocol.slru_headers
			      ? 0
			      : pn_page_lsn(page);
	bool headerless = pn_store_is_slru(&e->store, io->page) && !e->sc->protocol.slru_headers;
	if (!headerless &&
	    !pn_page_verify(page, e->page_size, io->page, page_checksummed(e, io->page)))
		pn_svc_violation(&e->svc, PN_VIOL_CHECKSUM, io->page,
				 "page %u read from slot %u fails verification", io->page,
				 io->slot);
	e->m.data_reads++;
	e->m.data_bytes_read += e->page_size;
	if (e->recovering)
		e->m.recovery_pages_read++;
	if (io->proc != UINT32_MAX)
		pn_svc_wake(&e->svc, io->proc, 0);
}

static void start_read(struct pn_engine *e, uint32_t frame, uint32_t page, uint32_t proc)
{
	struct pn_frame *f = &e->frames[frame];
	if (f->page != PN_NO_FRAME)
		e->page_frame[f->page] = PN_NO_FRAME;
	memset(f, 0, sizeof(*f));
	f->page = page;
	f->io_reads = 1;
	e->page_frame[page] = frame;
	if (e->proto->page_read) { /* pushdown: GetPage@LSN from the page server */
		e->proto->page_read(&e->pctx, frame, page, proc);
		return;
	}
	struct pn_io *io = pn_io_get(&e->svc);
	io->op = PN_IO_READ;
	io->file = PN_FILE_DATA;
	io->why = PN_WHY_READ_PAGE;
	io->frame = frame;
	io->page = page;
	io->slot = pn_store_is_slru(&e->store, page) ? 0 : pn_store_slot(&e->store, page);
	io->offset = pn_store_offset(&e->store, page, io->slot);
	io->len = e->page_size;
	io->proc = proc;
	io->done = read_done;
	io->ctx = e;
	pn_io_issue(&e->svc, io);
}

/* Clock sweep: the next unpinned frame with usage 0, decrementing usage on the way. */
static uint32_t find_victim(struct pn_engine *e)
{
	for (uint32_t n = 0; n < 6 * e->nframes; n++) {
		uint32_t i = e->clock_hand;
		e->clock_hand = (e->clock_hand + 1) % e->nframes;
		struct pn_frame *f = &e->frames[i];
		if (!pn_buf_idle(e, i) || f->ckpt_needed)
			continue;
		if (f->usage > 0) {
			f->usage--;
			continue;
		}
		return i;
	}
	return PN_NO_FRAME;
}

static void start_zero(struct pn_engine *e, uint32_t frame, uint32_t page)
{
	struct pn_frame *f = &e->frames[frame];
	if (f->page != PN_NO_FRAME)
		e->page_frame[f->page] = PN_NO_FRAME;
	memset(f, 0, sizeof(*f));
	f->page = page;
	f->valid = true;
	e->page_frame[page] = frame;
	memset(pn_frame_page(e, frame), 0, e->page_size);
}

uint32_t pn_buf_pin(struct pn_engine *e, uint32_t page, uint32_t proc, bool no_read)
{
	PN_ASSERT(proc < e->nprocs);
	struct pn_proc *p = &e->procs[proc];
	uint32_t fi = e->page_frame[page];
	if (fi != PN_NO_FRAME && !p->victim_held) {
		struct pn_frame *f = &e->frames[fi];
		if (!f->valid) {
			pn_svc_wake(&e->svc, proc, POLL_NS);
			return PN_NO_FRAME;
		}
		f->pins++;
		if (f->usage < 5)
			f->usage++;
		return fi;
	}
	if (e->proto->page_ready && !no_read && !e->proto->page_ready(&e->pctx, page, proc))
		return PN_NO_FRAME; /* pushdown: woken once the page server can serve it */
	uint32_t v = p->victim_held ? p->victim : find_victim(e); /* B7: its held victim first */
	if (v == PN_NO_FRAME) {
		pn_svc_wake(&e->svc, proc, POLL_NS);
		return PN_NO_FRAME;
	}
	struct pn_frame *f = &e->frames[v];
	PN_ASSERT(!p->victim_held || (f->held && f->holder == proc));
	if (f->page != PN_NO_FRAME && f->dirty) {
		enum pn_write_result w = pn_buf_write(e, v, PN_WHY_EVICT, proc, -1, NULL);
		PN_ASSERT(!f->held || f->holder == proc);
		p->victim_held = f->held;
		p->victim = v;
		if (w == PN_WRITE_STARTED)
			e->m.evictions++;
		if (w != PN_WRITE_WAL)
			pn_svc_wake(&e->svc, proc, w == PN_WRITE_STARTED ? 0 : POLL_NS);
		if (w != PN_WRITE_NONE)
			return PN_NO_FRAME;
		/* B4: an unlogged hint was dropped; the frame is clean now. */
	}
	if (no_read) {
		start_zero(e, v, page);
		f->pins = 1;
		f->usage = 1;
		return v;
	}
	start_read(e, v, page, proc);
	return PN_NO_FRAME;
}

void pn_buf_unpin(struct pn_engine *e, uint32_t frame)
{
	PN_ASSERT(e->frames[frame].pins > 0);
	e->frames[frame].pins--;
}

/* A heap page of a row whose pages move between slots (umbra). */
static bool is_umbra_heap(const struct pn_engine *e, uint32_t page)
{
	return (e->proto->store_flags & PN_STORE_SLOTTED) && !pn_store_is_slru(&e->store, page);
}

static void write_done(void *ctx, struct pn_io *io);

static uint64_t late_bind(void *ctx, struct pn_io *io)
{
	struct pn_engine *e = ctx;
	/* aio_late_bind: the device offset is looked up in the mapping when the I/O is
	 * dispatched; the engine still believes it wrote io->slot (the bug of 5.3). */
	uint32_t slot = pn_store_slot(&e->store, io->page);
	PN_TESTCASE("late-bound write lands on another slot", slot != io->slot);
	pn_store_check_write(&e->store, io->page, slot, e->ckpt_seq_done);
	return pn_store_offset(&e->store, io->page, slot);
}

struct pn_io *pn_buf_issue_write(struct pn_engine *e, uint32_t frame, uint32_t slot,
				 enum pn_io_why why, uint32_t proc, const uint8_t *image,
				 pn_lsn lsn, const struct pn_io_then *then)
{
	struct pn_frame *f = &e->frames[frame];
	struct pn_io *io = pn_io_get(&e->svc);
	io->op = PN_IO_WRITE;
	io->file = PN_FILE_DATA;
	io->why = why;
	io->frame = frame;
	io->page = f->page;
	io->slot = slot;
	io->len = e->page_size;
	io->proc = proc;
	io->ckpt_seq = e->ckpt_seq_begun;
	io->lsn = lsn;
	/* R1, checked on every data write whatever path issued it. */
	if (io->lsn > pn_wal_flushed(&e->wal))
		pn_svc_violation(&e->svc, PN_VIOL_WAL_BEFORE_DATA, f->page,
				 "page %u written with LSN %llX beyond the flushed WAL %llX (R1)",
				 f->page, (unsigned long long)io->lsn,
				 (unsigned long long)pn_wal_flushed(&e->wal));
	if (io->buf != image)
		memcpy(io->buf, image, e->page_size);
	io->done = write_done;
	io->ctx = e;
	if (then) {
		io->then = then->fn;
		io->then_ctx = then->ctx;
	}
	bool late = e->proto->bind_late && e->proto->bind_late(&e->pctx, f->page);
	if (late) {
		io->bind = late_bind;
	} else {
		io->offset = pn_store_offset(&e->store, f->page, slot);
		pn_store_check_write(&e->store, f->page, slot, e->ckpt_seq_done);
	}
	pn_store_note_written(&e->store, f->page, slot);
	f->io_writes++;
	e->data_writes_inflight++;
	e->m.data_writes++;
	e->m.data_bytes_written += e->page_size;
	pn_io_issue(&e->svc, io);
	return io;
}

static void write_done(void *ctx, struct pn_io *io)
{
	struct pn_engine *e = ctx;
	struct pn_frame *f = &e->frames[io->frame];
	PN_ASSERT(f->io_writes > 0 && f->page == io->page);
	f->io_writes--;
	e->data_writes_inflight--;
	bool umbra = is_umbra_heap(e, io->page);
	bool active_only = (e->sc->protocol.mutations & PN_MUT_CKPT_ACTIVE_ONLY) != 0;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		/* bit r is set only while run r runs (pn_engine_check asserts it) */
		if (!(f->ckpt_needed & (1u << r)))
			continue;
		/* Issued after the run began, or carrying the frame's current bytes. */
		if (io->ckpt_seq < f->ckpt_run_seq[r] && f->redirtied)
			continue;
		if (!umbra || active_only || io->slot == f->ckpt_slot[r])
			f->ckpt_needed &= (uint8_t) ~(1u << r);
	}
	uint32_t home = umbra ? pn_store_slot(&e->store, io->page) : 0;
	if (io->slot == home && !f->redirtied && f->io_writes == 0) {
		f->dirty = false;
		f->dirty_hint_only = false;
	}
	if (io->then)
		io->then(io->then_ctx, io);
	if (io->proc != UINT32_MAX)
		pn_svc_wake(&e->svc, io->proc, 0);
}

/* ---- write-out ---- */

/* B7: the frame stays as it is until proc writes it. */
static void hold_take(struct pn_engine *e, struct pn_frame *f, uint32_t proc)
{
	PN_ASSERT(proc < e->nprocs);
	PN_ASSERT(f->valid && f->dirty && !f->locked && f->io_writes == 0 && f->io_reads == 0);
	PN_ASSERT(!f->held || (f->holder == proc && f->held_lsn == f->last_lsn));
	f->held = true;
	f->holder = proc;
	f->held_lsn = f->last_lsn;
}

/* B7: proc issues the write it held the frame for; nothing changed the frame meanwhile. */
static void hold_release(struct pn_engine *e, struct pn_frame *f, uint32_t proc)
{
	PN_ASSERT(f->held && f->holder == proc);
	PN_ASSERT(f->last_lsn == f->held_lsn && f->held_lsn <= pn_wal_flushed(&e->wal));
	PN_ASSERT(!f->locked && f->io_writes == 0);
	f->held = false;
}

static void prepare_image(struct pn_engine *e, uint32_t frame, uint8_t *out)
{
	struct pn_frame *f = &e->frames[frame];
	memcpy(out, pn_frame_page(e, frame), e->page_size);
	if (page_checksummed(e, f->page))
		pn_page_set_checksum(out, e->page_size, f->page);
}

/* Where run r's write of f goes: the slot its selection bound, as the row brings it up to
 * date (l4). */
static uint32_t write_slot(const struct pn_engine *e, struct pn_frame *f, int r)
{
	PN_ASSERT(r >= 0 && r < PN_MAX_CKPT_RUNS);
	return e->proto->write_slot ? e->proto->write_slot(&e->pctx, f, r) : f->ckpt_slot[r];
}

enum pn_write_result pn_buf_write(struct pn_engine *e, uint32_t frame, enum pn_io_why why,
				  uint32_t proc, int run, const struct pn_io_then *then)
{
	struct pn_frame *f = &e->frames[frame];
	if (!f->valid || !f->dirty)
		return PN_WRITE_NONE;
	if (f->locked || f->io_writes || f->io_reads || (f->held && f->holder != proc))
		return PN_WRITE_BUSY;
	if (e->proto->drop_write && e->proto->drop_write(&e->pctx, frame))
		return PN_WRITE_NONE; /* B6 pushdown: the page server rebuilds the page */
	bool umbra = is_umbra_heap(e, f->page);
	if (umbra && f->dirty_hint_only &&
	    pn_page_lsn(pn_frame_page(e, frame)) <= pn_wal_redo(&e->wal)) {
		f->dirty = f->dirty_hint_only = false; /* B4 */
		f->held = false; /* B7: a redo pointer that moved past it leaves nothing to write */
		return PN_WRITE_NONE;
	}
	if (f->last_lsn > pn_wal_flushed(&e->wal)) {
		if (!(e->sc->protocol.mutations & PN_MUT_NO_WAL_BEFORE_DATA)) {
			if (proc == UINT32_MAX) /* the background writer does not wait */
				return PN_WRITE_BUSY;
			hold_take(e, f, proc);
			bool flushed = pn_wal_flush_request(&e->wal, f->last_lsn, proc);
			PN_ASSERT(!flushed);
			return PN_WRITE_WAL;
		}
	}
	uint8_t *img = e->svc.io_bufs + (size_t)e->svc.nios * 2u * e->page_size; /* spare buffer */
	if (e->proto->write_reserve && !e->proto->write_reserve(&e->pctx, frame, why))
		return PN_WRITE_BUSY; /* before the copy and checksum: they would be thrown away */
	PN_TESTCASE("a write issued after a WAL flush it held its frame for (B7)", f->held);
	if (f->held)
		hold_release(e, f, proc);
	prepare_image(e, frame, img);
	f->redirtied = false;
	if (e->proto->write_image && e->proto->write_image(&e->pctx, frame, why, proc, img, then))
		return PN_WRITE_STARTED; /* B5: through the doublewrite area */
	if (!umbra) {
		pn_buf_issue_write(e, frame, 0, why, proc, img, f->last_lsn, then);
		return PN_WRITE_STARTED;
	}
	bool active_only = (e->sc->protocol.mutations & PN_MUT_CKPT_ACTIVE_ONLY) != 0;
	uint32_t cur = pn_store_slot(&e->store, f->page);
	if (why == PN_WHY_CKPT) {
		uint32_t slot = active_only ? cur : write_slot(e, f, run);
		PN_TESTCASE("checkpoint writes a shifted page's source slot", slot != cur);
		pn_buf_issue_write(e, frame, slot, why, proc, img, f->last_lsn, then);
		return PN_WRITE_STARTED;
	}
	for (int r = 0; r < PN_MAX_CKPT_RUNS && !active_only; r++) {
		bool both = (f->ckpt_needed & (1u << r)) && write_slot(e, f, r) != cur;
		PN_TESTCASE("eviction of a shifted page the checkpoint still needs (B3)", both);
		if (both)
			pn_buf_issue_write(e, frame, f->ckpt_slot[r], PN_WHY_EVICT_SOURCE, proc,
					   img, f->last_lsn, then);
	}
	pn_buf_issue_write(e, frame, cur, why, proc, img, f->last_lsn, then);
	return PN_WRITE_STARTED;
}

/*
 * wal.c: WAL insertion and flushing (engine layer). Bytes are laid out by walfmt.c; this
 * file owns where they go and when they become durable.
 *
 * Rules:
 *   W1 LSN = byte position; a record starts MAXALIGNed in usable-byte space and its end LSN
 *      (the EndRecPtr stamped on pages) is pn_wal_bytepos_to_endrecptr(aligned end).
 *   W2 Inserting is one step: reserve, encode, copy (the world cannot interleave), as under
 *      PostgreSQL's insertion locks. RedoRecPtr (wal.redo) changes only in ckpt.c's
 *      ckpt_begin(), another step, so an insert sees one value of it.
 *   W3 One flush at a time: write every page from the one holding `written` through the one
 *      holding the target, fsync the WAL file, then `flushed = target` and wake waiters
 *      (group commit: a flush takes everything inserted when it starts).
 *   W4 The WAL file is a ring of nsegs segments; segment n lives in slot n % nsegs. An insert
 *      may not enter a slot that still holds WAL from keep_from (the redo pointer of the last
 *      completed checkpoint) on: it waits for a checkpoint instead. Recycled slots keep
 *      their stale bytes, which recovery recognises by their page address.
 *   W5 The in-memory ring of WAL pages never drops a page before its write completed.
 *   W6 Segment life, as PostgreSQL's RemoveOldXlogFiles and XLogFileInit: when keep_from
 *      passes a segment (a checkpoint completed, or the page server's horizon moved), its
 *      slot is removed through env.wal_segment (the simulated device frees it; reading it
 *      again is a broken invariant); when the insert position enters segment n, the slot of
 *      n + 1 is created, so that recovery may look past the end of the WAL into it. So the
 *      device holds the WAL from keep_from's segment to the insert position's, plus one
 *      segment, whatever the ring's size (max_wal_size).
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define WAL_RING_PAGES 1024u /* 8 MiB of WAL buffers */

static uint8_t *ring_page(struct pn_engine *e, pn_lsn page_addr, uint64_t **tagp);

static uint8_t *page_cb(void *arg, pn_lsn page_addr)
{
	return ring_page(arg, page_addr, NULL);
}

static uint8_t *ring_page(struct pn_engine *e, pn_lsn page_addr, uint64_t **tagp)
{
	uint32_t slot = (uint32_t)((page_addr / PN_XLOG_BLCKSZ) % e->wal.npages);
	uint64_t *tags = e->wal.tags;
	uint8_t *p = e->wal.pages + (size_t)slot * PN_XLOG_BLCKSZ;
	if (tags[slot] != page_addr) {
		PN_ASSERT(tags[slot] < e->wal.ring_base || tags[slot] == UINT64_MAX); /* W5 */
		memset(p, 0, PN_XLOG_BLCKSZ);
		tags[slot] = page_addr;
	}
	if (tagp)
		*tagp = &tags[slot];
	return p;
}

/* PostgreSQL's CheckPointSegments; bounded so that the ring's segment count fits 32 bits
 * (a max_wal_size of 2^30 segments and more never triggers a checkpoint anyway). */
static uint32_t checkpoint_segments(const struct pn_engine *e)
{
	const struct pn_scenario *sc = e->sc;
	if (sc->checkpoint.max_wal_size == 0)
		return 0;
	double segs = (double)(sc->checkpoint.max_wal_size / e->wal.seg_size) /
		      (1.0 + sc->checkpoint.completion_target);
	return segs < 1.0 ? 1u : segs > (double)(1u << 30) ? 1u << 30 : (uint32_t)segs;
}

static void segment_life(struct pn_engine *e, uint64_t segno, bool remove)
{
	if (e->env.wal_segment)
		e->env.wal_segment(e->env.ctx, pn_wal_file_offset(e, segno * e->wal.seg_size),
				   e->wal.seg_size, remove);
}

/* W6: removes the slots of the segments keep_from has passed, while they are still theirs
 * (segment s's slot is taken over by s + nsegs once that one is created). */
static void remove_old_segments(struct pn_engine *e)
{
	uint64_t keep = e->wal.keep_from / e->wal.seg_size;
	for (; e->wal.seg_removed < keep; e->wal.seg_removed++)
		if (e->wal.seg_removed + e->wal.nsegs > e->wal.seg_entered + 1)
			segment_life(e, e->wal.seg_removed, true);
}

/* W6: the insert position ends in segment `seg`: create the slots up to its successor. */
static void enter_segment(struct pn_engine *e, uint64_t seg)
{
	if (seg <= e->wal.seg_entered)
		return;
	remove_old_segments(e);
	for (uint64_t n = e->wal.seg_entered + 2; n <= seg + 1; n++)
		segment_life(e, n, false);
	e->wal.seg_entered = seg;
}

bool pn_wal_init(struct pn_engine *e)
{
	e->wal.seg_size = e->sc->storage.wal_segment_size;
	uint32_t cps = checkpoint_segments(e);
	e->wal.nsegs = cps ? PN_MAX(8u, 3u * cps + 4u) : 64u;
	/* Sized by the buffer pool: a larger pool dirties more WAL between flushes. */
	e->wal.npages = PN_MAX(64u, PN_MIN(WAL_RING_PAGES, 4u * e->sc->storage.buffers));
	if ((uint64_t)e->wal.npages * PN_XLOG_BLCKSZ > e->wal.seg_size * (uint64_t)e->wal.nsegs / 2)
		e->wal.npages = (uint32_t)(e->wal.seg_size * (uint64_t)e->wal.nsegs / 2 / PN_XLOG_BLCKSZ);
	size_t bytes = (size_t)e->wal.npages * PN_XLOG_BLCKSZ + e->wal.npages * sizeof(uint64_t);
	e->wal.pages = malloc(bytes);
	e->wal.rec_cap = PN_WAL_RECORD_HEADER + 64 + PN_WAL_MAX_BLOCKS * (e->page_size + 64) + 65536;
	e->wal.rec_buf = malloc(e->wal.rec_cap);
	if (!e->wal.pages || !e->wal.rec_buf)
		return false;
	e->wal.tags = (uint64_t *)(e->wal.pages + (size_t)e->wal.npages * PN_XLOG_BLCKSZ);
	for (uint32_t i = 0; i < e->wal.npages; i++)
		e->wal.tags[i] = UINT64_MAX;
	/* WAL starts in segment 1, as a fresh cluster's does, so that LSN 0 stays invalid. */
	pn_lsn start = (pn_lsn)e->wal.seg_size + PN_WAL_LONG_PHD;
	e->wal.insert_bytepos = pn_wal_recptr_to_bytepos(start, e->wal.seg_size);
	e->wal.written = e->wal.flushed = start;
	e->wal.ring_base = start - PN_WAL_LONG_PHD;
	e->wal.keep_from = start;
	e->wal.seg_removed = e->wal.seg_entered = 1;
	return true;
}

void pn_wal_free(struct pn_engine *e)
{
	free(e->wal.pages);
	free(e->wal.rec_buf);
}

pn_lsn pn_wal_insert_lsn(const struct pn_engine *e)
{
	return pn_wal_bytepos_to_endrecptr(e->wal.insert_bytepos, e->wal.seg_size);
}

uint64_t pn_wal_file_offset(const struct pn_engine *e, pn_lsn addr)
{
	uint64_t segno = addr / e->wal.seg_size;
	return (segno % e->wal.nsegs) * e->wal.seg_size + addr % e->wal.seg_size;
}

bool pn_wal_has_room(struct pn_engine *e, uint32_t len)
{
	uint64_t end_pos = e->wal.insert_bytepos + PN_ALIGN8(len) + PN_XLOG_BLCKSZ;
	pn_lsn end = pn_wal_bytepos_to_endrecptr(end_pos, e->wal.seg_size);
	/* W5: the in-memory ring must not wrap onto pages not yet written. */
	if (end - e->wal.ring_base >= (uint64_t)(e->wal.npages - 2) * PN_XLOG_BLCKSZ)
		return false;
	/* W4: keep one segment of slack for the checkpointer's own records. */
	uint64_t seg_end = end / e->wal.seg_size, seg_keep = e->wal.keep_from / e->wal.seg_size;
	return seg_end - seg_keep + 1 < e->wal.nsegs;
}

pn_lsn pn_wal_insert(struct pn_engine *e, struct pn_wal_record *r, enum pn_rec kind, pn_lsn *start)
{
	uint32_t len = pn_wal_record_size(r, e->page_size);
	PN_ASSERT(len <= e->wal.rec_cap);
	if (kind != PN_REC_IMPORTED) /* an imported record keeps its own (wl_import.c) */
		pn_rec_ids(kind, &r->rmid, &r->info);
	r->prev = e->wal.prev_start;
	pn_wal_record_encode(r, e->page_size, e->wal.rec_buf);
	uint64_t pos = e->wal.insert_bytepos;
	pn_lsn s = pn_wal_bytepos_to_recptr(pos, e->wal.seg_size);
	pn_wal_copy_record(e->wal.rec_buf, len, s, e->wal.seg_size, e->sysid, page_cb, e);
	e->wal.insert_bytepos = pos + PN_ALIGN8(len);
	e->wal.prev_start = s;
	uint32_t fpi = pn_wal_record_fpi_bytes(r, e->page_size);
	e->m.wal_bytes += len;
	e->m.wal_records++;
	e->m.rec_count[kind]++;
	e->m.rec_bytes[kind] += len - fpi;
	e->m.rec_fpi_bytes[kind] += fpi;
	for (uint32_t i = 0; i < r->nblocks; i++) {
		if (r->blocks[i].has_image) {
			e->m.fpi_count++;
			e->m.fpi_bytes += e->page_size - r->blocks[i].hole_length;
		}
	}
	if (start)
		*start = s;
	pn_lsn end = pn_wal_insert_lsn(e);
	enter_segment(e, end / e->wal.seg_size);
	if (e->env.wal_inserted)
		e->env.wal_inserted(e->env.ctx, e->wal.rec_buf, len, s, end);
	return end;
}

static void wake_waiters(struct pn_engine *e)
{
	for (uint32_t i = 0; i < e->nprocs; i++) {
		struct pn_proc *p = &e->procs[i];
		if (p->waiting_flush && p->wait_lsn <= e->wal.flushed) {
			p->waiting_flush = false;
			pn_wake(e, i, 0);
		}
	}
}

static bool any_waiter(const struct pn_engine *e)
{
	for (uint32_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].waiting_flush)
			return true;
	return false;
}

static void wal_fsync_done(struct pn_engine *e, struct pn_io *io)
{
	pn_lsn target = io->lsn;
	uint64_t old_seg = e->wal.flushed / e->wal.seg_size;
	e->wal.flushed = target;
	e->wal.flush_in_flight = false;
	e->m.wal_flushes++;
	/* PostgreSQL's XLogCheckpointNeeded(), tested as each segment is finished. */
	uint32_t cps = checkpoint_segments(e);
	uint64_t new_seg = target / e->wal.seg_size;
	if (cps && new_seg != old_seg &&
	    new_seg >= e->wal.redo / e->wal.seg_size + cps - 1)
		pn_ckpt_request(e, PN_CKPT_WAL, false);
	wake_waiters(e);
	if (any_waiter(e) && pn_wal_insert_lsn(e) > e->wal.flushed)
		pn_wal_start_flush(e, pn_wal_insert_lsn(e));
}

static void wal_write_done(struct pn_engine *e, struct pn_io *io)
{
	PN_ASSERT(e->wal.flush_ios > 0);
	if (--e->wal.flush_ios > 0)
		return;
	e->wal.written = e->wal.flush_target;
	e->wal.ring_base = e->wal.written - e->wal.written % PN_XLOG_BLCKSZ;
	struct pn_io *f = pn_io_get(e);
	f->op = PN_IO_FSYNC;
	f->file = PN_FILE_WAL;
	f->why = PN_WHY_WAL;
	f->lsn = e->wal.flush_target;
	f->done = wal_fsync_done;
	pn_io_issue(e, f);
}

static void issue_wal_write(struct pn_engine *e, pn_lsn from, pn_lsn to)
{
	/* [from, to) is page aligned and within one segment, so contiguous in the file. */
	struct pn_io *io = pn_io_get(e);
	io->op = PN_IO_WRITE;
	io->file = PN_FILE_WAL;
	io->why = PN_WHY_WAL;
	io->offset = pn_wal_file_offset(e, from);
	io->len = (uint32_t)(to - from);
	io->buf = ring_page(e, from, NULL);
	io->lsn = e->wal.flush_target;
	io->done = wal_write_done;
	e->wal.flush_ios++;
	e->m.wal_write_bytes += io->len;
	pn_io_issue(e, io);
}

void pn_wal_start_flush(struct pn_engine *e, pn_lsn upto)
{
	if (e->wal.flush_in_flight || upto <= e->wal.flushed)
		return;
	e->wal.flush_in_flight = true;
	e->wal.flush_target = upto;
	pn_lsn from = e->wal.written - e->wal.written % PN_XLOG_BLCKSZ;
	pn_lsn end = upto - 1 - (upto - 1) % PN_XLOG_BLCKSZ + PN_XLOG_BLCKSZ;
	e->wal.flush_ios = 1; /* hold until every write is issued */
	pn_lsn run = from;
	uint32_t slot_prev = UINT32_MAX;
	for (pn_lsn a = from; a < end; a += PN_XLOG_BLCKSZ) {
		uint32_t slot = (uint32_t)((a / PN_XLOG_BLCKSZ) % e->wal.npages);
		bool seg_start = a % e->wal.seg_size == 0;
		if (a != run && (seg_start || slot != slot_prev + 1)) {
			issue_wal_write(e, run, a);
			run = a;
		}
		slot_prev = slot;
	}
	issue_wal_write(e, run, end);
	wal_write_done(e, NULL);
}

bool pn_wal_flush_request(struct pn_engine *e, pn_lsn lsn, uint32_t proc)
{
	if (lsn <= e->wal.flushed)
		return true;
	struct pn_proc *p = &e->procs[proc];
	p->waiting_flush = true;
	p->wait_lsn = lsn;
	pn_wal_start_flush(e, pn_wal_insert_lsn(e));
	return false;
}

void pn_wal_checkpoint_done(struct pn_engine *e, pn_lsn redo)
{
	e->wal.keep_from = PN_MIN(redo, pn_ps_horizon(e)); /* pushdown: the page server's too */
	remove_old_segments(e);
}

void pn_wal_set_end(struct pn_engine *e, pn_lsn end, pn_lsn prev_start)
{
	/* After recovery: continue at the end of valid WAL, keeping the valid part of its page
	 * and zeroing the rest, as PostgreSQL does at the end of recovery. */
	for (uint32_t i = 0; i < e->wal.npages; i++)
		e->wal.tags[i] = UINT64_MAX;
	pn_lsn page_addr = end - end % PN_XLOG_BLCKSZ;
	e->wal.ring_base = page_addr;
	uint8_t *p = ring_page(e, page_addr, NULL);
	if (end % PN_XLOG_BLCKSZ) {
		bool ok = e->env.read_sync(e->env.ctx, PN_FILE_WAL, pn_wal_file_offset(e, page_addr),
					   PN_XLOG_BLCKSZ, p);
		PN_ASSERT(ok);
		memset(p + end % PN_XLOG_BLCKSZ, 0, PN_XLOG_BLCKSZ - end % PN_XLOG_BLCKSZ);
	}
	e->wal.insert_bytepos = pn_wal_recptr_to_bytepos(end, e->wal.seg_size);
	/* An end exactly at a page boundary: the next record starts past the next header. */
	e->wal.written = e->wal.flushed = end;
	e->wal.prev_start = prev_start;
	/* W6 from here: what lies before keep_from is the crashed run's business. */
	e->wal.seg_removed = e->wal.keep_from / e->wal.seg_size;
	e->wal.seg_entered = end / e->wal.seg_size - 1;
	enter_segment(e, end / e->wal.seg_size);
}

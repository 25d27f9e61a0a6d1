/*
 * recovery.c: the startup process (engine layer): crash recovery as PostgreSQL's
 * StartupXLOG does it, through the same buffer pool and the same record meanings.
 *
 *   1. read the control file (one atomic sector); its checkpoint and redo pointer;
 *   2. read the checkpoint record at the control file's location (PANIC-worthy if absent);
 *   3. Umbra: read the selector area the control file names; each page's baseline slot
 *      becomes its current slot (the generation recovery reads it from); l3/l4 read their
 *      selector pages instead, and an image-free shift first sets the page's slot to the
 *      shift's source (umbra_policy.c, pn_umbra_redo_source);
 *   4. replay from redo to the end of valid WAL (walfmt.c's reader: CRC, prev-link, page
 *      headers): for each block, an image is restored without reading the disk
 *      (RBM_ZERO_AND_LOCK); otherwise the page is read, verified (checksum: a torn page is
 *      an error here, rule C3) and the record applied if its end LSN is past the page LSN
 *      (BLK_NEEDS_REDO) and skipped otherwise (BLK_DONE); a block's slot shift moves the
 *      page to the shift's target after the change, as at run time;
 *   5. continue the WAL after the last valid record and run an end-of-recovery checkpoint
 *      (immediate, recorded as CHECKPOINT_SHUTDOWN); recovery is over when it completes.
 * Pushdown: step 3 is the page server's (pn_ps_recover: its metadata and images); step 4
 * reads from min(redo, the page server's horizon) and hands every record to the page
 * server (pn_ps_ingest_record) instead of the buffer pool: the compute replays nothing.
 * A crash at any point of this is recovered from again: until the end-of-recovery
 * checkpoint's control-file update, the old checkpoint, its baselines and its WAL are
 * untouched (Umbra writes recovered pages only to shift targets).
 */
#include "engine.h"

#include <stdio.h>
#include <string.h>

#define STEP_NS 1000u

static bool wal_read_cb(void *arg, pn_lsn addr, uint8_t *out)
{
	struct pn_engine *e = arg;
	return e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_WAL, pn_wal_file_offset(&e->wal, addr),
				PN_XLOG_BLCKSZ, out);
}

static bool reader_at(struct pn_engine *e, pn_lsn start)
{
	return pn_wal_reader_init(&e->reader, start, 0, pn_wal_seg_size(&e->wal), e->page_size,
				  pn_wal_rec_cap(&e->wal), e->sysid, wal_read_cb, e);
}

static bool read_checkpoint_record(struct pn_engine *e, const struct pn_control *c)
{
	pn_lsn s, end;
	enum pn_rec kind;
	bool ok = reader_at(e, c->checkpoint) && pn_wal_read_next(&e->reader, &e->rec, &s, &end) &&
		  pn_rec_from_ids(e->rec.rmid, e->rec.info, &kind) &&
		  (kind == PN_REC_XLOG_CHECKPOINT_ONLINE || kind == PN_REC_XLOG_CHECKPOINT_SHUTDOWN) &&
		  e->rec.main_len == 88 && pn_get64(e->rec.main_data) == c->redo;
	if (ok)
		e->next_xid = (uint32_t)pn_get64(e->rec.main_data + 24);
	else
		pn_engine_violation(e, PN_VIOL_RECOVERY, UINT32_MAX,
				    "could not locate a valid checkpoint record at %X/%08X (%s)",
				    (unsigned)(c->checkpoint >> 32), (unsigned)c->checkpoint,
				    e->reader.why[0] ? e->reader.why : "not a checkpoint");
	pn_wal_reader_free(&e->reader);
	return ok;
}

static bool read_selector(struct pn_engine *e, const struct pn_control *c)
{
	uint32_t len = pn_store_selector_bytes(&e->store);
	uint8_t *buf = e->runs[0].selbuf;
	if (!e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_SELECTOR, (uint64_t)c->selector_area * len, len,
			      buf) ||
	    !pn_store_decode_selector(&e->store, buf, c->ckpt_seq, e->store.base_done)) {
		pn_engine_violation(e, PN_VIOL_RECOVERY, UINT32_MAX,
				    "the selector snapshot of checkpoint %llu (area %u) is missing or "
				    "torn: no baselines to recover from",
				    (unsigned long long)c->ckpt_seq, c->selector_area);
		return false;
	}
	for (uint32_t p = 0; p < e->heap_pages; p++)
		pn_store_set_slot(&e->store, p, e->store.base_done[p]);
	return true;
}

/*
 * Doublewrite: before replay, every page whose newest valid doublewrite entry is at least
 * as new as its home copy, or whose home copy fails verification, is restored from that
 * entry (InnoDB's buf_dblwr recovery). The entry was fsynced before the in-place write
 * began (B5), so a torn home page always has an intact copy there.
 */
static uint32_t dw_entry_len(const struct pn_engine *e)
{
	return e->sc->storage.sector_size + e->page_size;
}

static bool dw_entry(struct pn_engine *e, uint32_t i, uint8_t *buf, uint32_t *page, pn_lsn *lsn)
{
	uint32_t sec = e->sc->storage.sector_size;
	e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_DW, (uint64_t)i * dw_entry_len(e), dw_entry_len(e), buf);
	*page = pn_get32(buf + 4);
	*lsn = pn_get64(buf + 8);
	return pn_get32(buf) == 0x57444E50u && *page < e->heap_pages &&
	       pn_get32(buf + 16) == pn_crc32c(buf + sec, e->page_size);
}

static void plan_dw_restore(struct pn_engine *e)
{
	uint8_t *buf = e->svc.io_bufs + (size_t)e->svc.nios * 2u * e->page_size;
	uint32_t sec = e->sc->storage.sector_size;
	e->dw_restore_len = e->dw_restore_pos = 0;
	for (uint32_t i = 0; i < e->store.dw_slots; i++) {
		uint32_t page, other_page;
		pn_lsn lsn, other_lsn;
		if (!dw_entry(e, i, buf, &page, &lsn))
			continue;
		bool newest = true;
		for (uint32_t j = 0; j < e->store.dw_slots && newest; j++)
			if (j != i && dw_entry(e, j, buf, &other_page, &other_lsn) && other_page == page &&
			    (other_lsn > lsn || (other_lsn == lsn && j > i)))
				newest = false;
		dw_entry(e, i, buf, &page, &lsn);
		uint8_t *home = buf + sec + e->page_size; /* the spare buffer holds two pages */
		e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_DATA, pn_store_offset(&e->store, page, 0), e->page_size, home);
		bool torn = !pn_page_verify(home, e->page_size, page, e->sc->protocol.checksums);
		if (newest && (torn || pn_page_lsn(home) <= lsn))
			e->dw_restore[e->dw_restore_len++] = i;
	}
}

/*
 * One restore at a time: the entry's page goes into the buffer pool and is written in
 * place at once (not through the doublewrite area, whose entries other torn pages may
 * still need); when every restored page is written, the data file is fsynced. Only then
 * may the doublewrite area be reused, so a crash during this phase finds every entry it
 * needs intact. Returns true when the phase is over.
 */
static void dw_fsync_done(void *ctx, struct pn_io *io)
{
	struct pn_engine *e = ctx;
	e->dw_restore_len = 0;
	pn_wake(e, e->proc_startup, 0);
}

static bool dw_restore_step(struct pn_engine *e, struct pn_proc *p)
{
	uint8_t *buf = e->svc.io_bufs + (size_t)e->svc.nios * 2u * e->page_size;
	uint32_t page;
	pn_lsn lsn;
	if (e->dw_restore_pos == e->dw_restore_len) {
		if (e->data_writes_inflight)
			return false; /* woken by the last write's completion */
		struct pn_io *io = pn_io_fsync(&e->svc, PN_FILE_DATA, PN_WHY_RECOVERY, dw_fsync_done, e);
		e->m.fsyncs++;
		e->dw_restore_pos = UINT32_MAX; /* the fsync is in flight */
		pn_io_issue(&e->svc, io);
		return false;
	}
	dw_entry(e, e->dw_restore[e->dw_restore_pos], buf, &page, &lsn);
	uint32_t fi = pn_buf_pin(e, page, p->id, true);
	if (fi == PN_NO_FRAME)
		return false;
	memcpy(pn_frame_page(e, fi), buf + e->sc->storage.sector_size, e->page_size);
	e->frames[fi].dirty = true;
	e->frames[fi].last_lsn = lsn;
	pn_buf_unpin(e, fi);
	enum pn_write_result w = pn_buf_write(e, fi, PN_WHY_RECOVERY, p->id, -1, NULL);
	PN_ASSERT(w == PN_WRITE_STARTED);
	e->dw_restore_pos++;
	return false; /* woken when the write completes */
}

bool pn_recovery_begin(struct pn_engine *e)
{
	uint8_t buf[PN_CONTROL_SIZE];
	struct pn_control c;
	e->recovering = true;
	for (uint32_t i = 0; i < e->nbackends; i++)
		e->procs[i].state = PN_B_DONE;
	if (!e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_CONTROL, 0, PN_CONTROL_SIZE, buf) ||
	    !pn_engine_decode_control(buf, &c)) {
		pn_engine_violation(e, PN_VIOL_RECOVERY, UINT32_MAX,
				    "control file unreadable (bad magic or CRC)");
		return false;
	}
	e->control = c;
	if (!read_checkpoint_record(e, &c))
		return false;
	if (pn_umbra_policy(e) ? !pn_umbra_read_map(e)
			       : e->sc->protocol.mode == PN_MODE_UMBRA && !read_selector(e, &c))
		return false;
	pn_wal_set_redo(&e->wal, c.redo);
	pn_wal_set_keep_from(&e->wal, c.redo);
	e->redo_done = c.redo;
	e->ckpt_seq_begun = e->ckpt_seq_done = c.ckpt_seq;
	pn_wal_set_durable(&e->wal, UINT64_MAX / 2); /* no WAL is written while replaying */
	pn_lsn from = c.redo;
	if (e->ps && !pn_ps_recover(e, c.redo, &from))
		return false; /* pushdown: the page server's metadata, images, and its horizon */
	if (!reader_at(e, from)) {
		snprintf(e->svc.error, sizeof(e->svc.error), "out of memory");
		return false;
	}
	if (e->sc->protocol.mode == PN_MODE_DOUBLEWRITE)
		plan_dw_restore(e);
	struct pn_proc *p = &e->procs[e->proc_startup];
	p->state = PN_B_NEXT;
	pn_wake(e, e->proc_startup, 0);
	return true;
}

static void apply_block(struct pn_engine *e, uint32_t fi, const struct pn_wal_block *b)
{
	struct pn_frame *f = &e->frames[fi];
	uint8_t *page = pn_frame_page(e, fi);
	uint32_t pg = b->blkno;
	bool headerless = pn_store_is_slru(&e->store, pg) && !e->sc->protocol.slru_headers;
	bool image = b->has_image && b->image_apply;
	bool done = !image && !headerless && pn_page_lsn(page) >= e->rec_end;
	PN_TESTCASE("redo finds the page already current (BLK_DONE)", done);
	if (!done) {
		if (!pn_redo_apply(page, e->page_size, &e->rec, b)) {
			pn_engine_violation(e, PN_VIOL_RECOVERY, pg,
					    "record at %X/%08X does not apply to page %u",
					    (unsigned)(e->rec_start >> 32), (unsigned)e->rec_start, pg);
			return;
		}
		if (!headerless)
			pn_page_set_lsn(page, e->rec_end);
		f->dirty = true;
		f->redirtied |= f->io_writes > 0;
		f->last_lsn = e->rec_end;
	}
	if (b->has_shift && !pn_store_is_slru(&e->store, pg)) {
		uint32_t target = b->shift_target & 0x7fu;
		if (target >= e->generations) {
			pn_engine_violation(e, PN_VIOL_RECOVERY, pg, "shift to slot %u of %u", target,
					    e->generations);
			return;
		}
		/* The page now lives in the target slot, which may hold nothing yet: even when
		 * the change was already in the baseline (BLK_DONE), the page must be written
		 * to its new slot, so it is dirty. */
		PN_TESTCASE("redo shifts a page whose change was already applied", done);
		pn_store_set_slot(&e->store, pg, target);
		if (pn_umbra_policy(e))
			pn_umbra_map_dirty(e, pg, 0); /* MapRedoSetActiveSlot: dirty, no LSN */
		f->dirty = true;
		f->redirtied |= f->io_writes > 0;
		if (f->last_lsn < pn_page_lsn(page))
			f->last_lsn = pn_page_lsn(page);
	}
}

static void end_of_wal(struct pn_engine *e, struct pn_proc *p)
{
	snprintf(e->svc.error, sizeof(e->svc.error), "redo done at %X/%08X: %s",
		 (unsigned)(e->replay_end >> 32), (unsigned)e->replay_end, e->reader.why);
	pn_wal_reader_free(&e->reader);
	pn_wal_start_at(&e->wal, e->replay_end, e->replay_last_start);
	if (e->ps)
		pn_ps_recovery_end(e, e->replay_end, e->replay_last_start);
	e->next_xid++;
	e->eor_seq = e->ckpt_seq_begun + 1;
	pn_ckpt_request(e, PN_CKPT_END_OF_RECOVERY, true);
	p->state = PN_B_WAIT_CKPT;
}

void pn_recovery_step(struct pn_engine *e, struct pn_proc *p)
{
	if (p->state == PN_B_WAIT_CKPT) {
		if (e->ckpt_seq_done >= e->eor_seq) {
			e->recovering = false;
			p->state = PN_B_DONE;
		}
		return;
	}
	if (p->state != PN_B_NEXT)
		return;
	if (e->dw_restore_len) {
		if (e->dw_restore_pos != UINT32_MAX && dw_restore_step(e, p))
			pn_wake(e, p->id, STEP_NS);
		return;
	}
	if (!e->rec_valid) {
		if (!pn_wal_read_next(&e->reader, &e->rec, &e->rec_start, &e->rec_end)) {
			end_of_wal(e, p);
			return;
		}
		e->rec_valid = true;
		e->rec_block = 0;
		e->replay_end = e->rec_end;
		e->replay_last_start = e->rec_start;
		if (e->rec.xid > e->next_xid)
			e->next_xid = e->rec.xid;
		e->m.recovery_records++;
		if (e->ps) { /* pushdown: the page server re-ingests; the compute replays nothing */
			pn_ps_ingest_record(e, &e->rec, e->rec_start, e->rec_end);
			e->rec_valid = false;
			pn_wake(e, p->id, STEP_NS);
			return;
		}
	}
	if (e->rec_block >= e->rec.nblocks) {
		e->rec_valid = false;
		pn_wake(e, p->id, STEP_NS);
		return;
	}
	const struct pn_wal_block *b = &e->rec.blocks[e->rec_block];
	if (b->blkno >= e->pages) {
		pn_engine_violation(e, PN_VIOL_RECOVERY, b->blkno, "record names page %u of %u",
				    b->blkno, e->pages);
		return;
	}
	/* an image, or a page the record rebuilds (WILL_INIT): RBM_ZERO_AND_LOCK, no read */
	bool full = (b->has_image && b->image_apply) || b->will_init;
	if (b->has_shift && !full && pn_umbra_policy(e) && !pn_store_is_slru(&e->store, b->blkno) &&
	    !pn_umbra_redo_source(e, b, p->id))
		return; /* woken when the resident page is flushed to the source */
	uint32_t fi = pn_buf_pin(e, b->blkno, p->id, full);
	if (fi == PN_NO_FRAME)
		return; /* woken when the read (or a victim's write) completes */
	apply_block(e, fi, b);
	pn_buf_unpin(e, fi);
	e->rec_block++;
	pn_wake(e, p->id, STEP_NS);
}

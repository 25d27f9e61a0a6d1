/*
 * recovery.c: the startup process (engine layer): crash recovery as PostgreSQL's
 * StartupXLOG does it, through the same buffer pool and the same record meanings.
 *
 *   1. read the control file (one atomic sector); its checkpoint and redo pointer;
 *   2. read the checkpoint record at the control file's location (PANIC-worthy if absent);
 *   3. the protocol's map of slots (its row's recovery_begin): Umbra reads the selector
 *      area the control file names, each page's baseline slot becoming its current slot
 *      (the generation recovery reads it from); l3/l4 read their selector pages instead,
 *      and an image-free shift first sets the page's slot to the shift's source (the
 *      row's redo_source);
 *   4. replay from redo to the end of valid WAL (walfmt.c's reader: CRC, prev-link, page
 *      headers): for each block, an image is restored without reading the disk
 *      (RBM_ZERO_AND_LOCK); otherwise the page is read, verified (checksum: a torn page is
 *      an error here, rule C3) and the record applied if its end LSN is past the page LSN
 *      (BLK_NEEDS_REDO) and skipped otherwise (BLK_DONE); a block's slot shift moves the
 *      page to the shift's target after the change, as at run time;
 *   5. continue the WAL after the last valid record and run an end-of-recovery checkpoint
 *      (immediate, recorded as CHECKPOINT_SHUTDOWN); recovery is over when it completes.
 * Pushdown: the row's recovery_from loads the page server's metadata and images; step 4
 * reads from min(redo, the page server's horizon) and hands every record to the page
 * server (the row's redo_record) instead of the buffer pool: the compute replays nothing.
 * Doublewrite: recovery_from plans the restores of torn pages from the doublewrite area,
 * which the row's redo_step carries out before any record is replayed.
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
		  (kind == PN_REC_XLOG_CHECKPOINT_ONLINE ||
		   kind == PN_REC_XLOG_CHECKPOINT_SHUTDOWN) &&
		  e->rec.main_len == 88 && pn_get64(e->rec.main_data) == c->redo;
	if (ok)
		e->next_xid = (uint32_t)pn_get64(e->rec.main_data + 24);
	else
		pn_svc_violation(&e->svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "could not locate a valid checkpoint record at %X/%08X (%s)",
				 (unsigned)(c->checkpoint >> 32), (unsigned)c->checkpoint,
				 e->reader.why[0] ? e->reader.why : "not a checkpoint");
	pn_wal_reader_free(&e->reader);
	return ok;
}

bool pn_recovery_begin(struct pn_engine *e)
{
	uint8_t buf[PN_CONTROL_SIZE];
	struct pn_control c;
	e->recovering = true;
	for (uint32_t i = 0; i < e->nbackends; i++)
		pn_backend_set_state(&e->procs[i], PN_B_DONE);
	if (!e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_CONTROL, 0, PN_CONTROL_SIZE, buf) ||
	    !pn_ckpt_decode_control(buf, &c)) {
		pn_svc_violation(&e->svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "control file unreadable (bad magic or CRC)");
		return false;
	}
	e->ckpt.control = c;
	if (!read_checkpoint_record(e, &c))
		return false;
	if (e->proto->recovery_begin && !e->proto->recovery_begin(&e->pctx, &c))
		return false;
	pn_wal_set_redo(&e->wal, c.redo);
	pn_wal_set_keep_from(&e->wal, c.redo);
	e->ckpt.redo_done = c.redo;
	e->ckpt.seq_begun = e->ckpt.seq_done = c.ckpt_seq;
	pn_wal_set_durable(&e->wal, UINT64_MAX / 2); /* no WAL is written while replaying */
	pn_lsn from = c.redo;
	if (e->proto->recovery_from && !e->proto->recovery_from(&e->pctx, c.redo, &from))
		return false; /* pushdown: the page server's metadata, images, and its horizon */
	if (!reader_at(e, from)) {
		snprintf(e->svc.error, sizeof(e->svc.error), "out of memory");
		return false;
	}
	struct pn_proc *p = &e->procs[e->proc_startup];
	pn_backend_set_state(p, PN_B_NEXT);
	pn_svc_wake(&e->svc, e->proc_startup, 0);
	return true;
}

static void apply_block(struct pn_engine *e, uint32_t fi, const struct pn_wal_block *b)
{
	struct pn_frame *f = pn_buf_frame(&e->buf, fi);
	uint8_t *page = pn_frame_page(&e->buf, fi);
	uint32_t pg = b->blkno;
	bool headerless = pn_store_is_slru(&e->store, pg) && !e->sc->protocol.slru_headers;
	bool image = b->has_image && b->image_apply;
	bool done = !image && !headerless && pn_page_lsn(page) >= e->rec_end;
	PN_TESTCASE("redo finds the page already current (BLK_DONE)", done);
	if (!done) {
		if (!pn_redo_apply(page, e->page_size, &e->rec, b)) {
			pn_svc_violation(&e->svc, PN_VIOL_RECOVERY, pg,
					 "record at %X/%08X does not apply to page %u",
					 (unsigned)(e->rec_start >> 32), (unsigned)e->rec_start,
					 pg);
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
			pn_svc_violation(&e->svc, PN_VIOL_RECOVERY, pg, "shift to slot %u of %u",
					 target, e->generations);
			return;
		}
		/* The page now lives in the target slot, which may hold nothing yet: even when
		 * the change was already in the baseline (BLK_DONE), the page must be written
		 * to its new slot, so it is dirty. */
		PN_TESTCASE("redo shifts a page whose change was already applied", done);
		pn_store_set_slot(&e->store, pg, target);
		if (e->proto->redo_shifted)
			e->proto->redo_shifted(&e->pctx, pg);
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
	if (e->proto->recovery_end)
		e->proto->recovery_end(&e->pctx, e->replay_end, e->replay_last_start);
	e->next_xid++;
	e->eor_seq = e->ckpt.seq_begun + 1;
	pn_ckpt_request(&e->ckpt, PN_CKPT_END_OF_RECOVERY, true);
	pn_backend_set_state(p, PN_B_WAIT_CKPT);
}

void pn_recovery_step(struct pn_engine *e, struct pn_proc *p)
{
	if (p->state == PN_B_WAIT_CKPT) {
		if (e->ckpt.seq_done >= e->eor_seq) {
			e->recovering = false;
			pn_backend_set_state(p, PN_B_DONE);
		}
		return;
	}
	if (p->state != PN_B_NEXT)
		return;
	if (e->proto->redo_step && e->proto->redo_step(&e->pctx, p))
		return; /* doublewrite: a restore before replay */
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
		if (e->proto->redo_record) { /* pushdown: the page server re-ingests */
			e->proto->redo_record(&e->pctx, &e->rec, e->rec_start, e->rec_end);
			e->rec_valid = false;
			pn_svc_wake(&e->svc, p->id, STEP_NS);
			return;
		}
	}
	if (e->rec_block >= e->rec.nblocks) {
		e->rec_valid = false;
		pn_svc_wake(&e->svc, p->id, STEP_NS);
		return;
	}
	const struct pn_wal_block *b = &e->rec.blocks[e->rec_block];
	if (b->blkno >= e->pages) {
		pn_svc_violation(&e->svc, PN_VIOL_RECOVERY, b->blkno, "record names page %u of %u",
				 b->blkno, e->pages);
		return;
	}
	/* an image, or a page the record rebuilds (WILL_INIT): RBM_ZERO_AND_LOCK, no read */
	bool full = (b->has_image && b->image_apply) || b->will_init;
	if (b->has_shift && !full && e->proto->redo_source &&
	    !pn_store_is_slru(&e->store, b->blkno) && !e->proto->redo_source(&e->pctx, b, p->id))
		return; /* woken when the resident page is flushed to the source */
	uint32_t fi = pn_buf_pin(&e->buf, b->blkno, p->id, full);
	if (fi == PN_NO_FRAME)
		return; /* woken when the read (or a victim's write) completes */
	apply_block(e, fi, b);
	pn_buf_unpin(&e->buf, fi);
	e->rec_block++;
	pn_svc_wake(&e->svc, p->id, STEP_NS);
}

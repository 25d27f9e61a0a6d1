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
 *   4. replay from redo to the end of valid WAL (walread.c's reader: CRC, prev-link, page
 *      headers): for each block, an image is restored without reading the disk
 *      (RBM_ZERO_AND_LOCK); otherwise the page is read, verified (checksum: a torn page is
 *      an error here, rule C3) and the record applied if its end LSN is past the page LSN
 *      (BLK_NEEDS_REDO) and skipped otherwise (BLK_DONE); a block's slot shift moves the
 *      page to the shift's target after the change, as at run time;
 *   The relation's size: the control file's (its size at the redo pointer, when it was
 *   truncated), applied after step 3 (the truncated pages' slots are 0 again); a
 *   Storage/TRUNCATE record shrinks it as at run time (DropRelationBuffers, the slot reset,
 *   the row's truncated hook); a block past the size extends it, which only an image or a
 *   will-init block may do (otherwise: an invalid page, a recovery failure);
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
#include "recovery.h"

#include "bufpool.h"
#include "ckpt.h"
#include "metrics.h"
#include "page.h"
#include "protocol.h"
#include "redo.h"
#include "redo_xlog.h"
#include "scenario.h"
#include "services.h"
#include "store.h"
#include "wal.h"

#include <stdio.h>
#include <string.h>

#define STEP_NS 1000u

static bool wal_read_cb(void *arg, pn_lsn addr, uint8_t *out)
{
	struct pn_recovery *rv = arg;
	return rv->h.svc->env.read_sync(rv->h.svc->env.ctx, PN_FILE_WAL,
					pn_wal_file_offset(rv->h.wal, addr), PN_XLOG_BLCKSZ, out);
}

/* Parts of a page and summaries of them (DV8): the bytes past the last valid record are
 * summarized, never read (walread.h pn_wal_reader_parts). */
static bool wal_part_cb(void *arg, pn_lsn addr, uint32_t len, uint8_t *out)
{
	struct pn_recovery *rv = arg;
	return rv->h.svc->env.read_sync(rv->h.svc->env.ctx, PN_FILE_WAL,
					pn_wal_file_offset(rv->h.wal, addr), len, out);
}

static bool wal_summary_cb(void *arg, pn_lsn addr, uint32_t len, const struct pn_summary *s,
			   struct pn_summary_value *out)
{
	struct pn_recovery *rv = arg;
	return pn_svc_read_summary(rv->h.svc, PN_FILE_WAL, pn_wal_file_offset(rv->h.wal, addr), len,
				   s, out);
}

/* The startup process's states (procs.h's enum, the numbers the world's trace shows):
 * DONE --pn_recovery_begin--> NEXT (replay) --end of WAL--> WAIT_CKPT
 * --the end-of-recovery checkpoint has happened--> DONE. */
static const bool startup_legal[PN_B_COUNT][PN_B_COUNT] = {
	[PN_B_DONE] = {[PN_B_NEXT] = true},
	[PN_B_NEXT] = {[PN_B_WAIT_CKPT] = true},
	[PN_B_WAIT_CKPT] = {[PN_B_DONE] = true},
};

static void startup_set_state(struct pn_proc *p, enum pn_bstate to)
{
	PN_ASSERT(p->kind == PN_PROC_STARTUP);
	PN_ASSERT(p->state < PN_B_COUNT);
	PN_ASSERT(to < PN_B_COUNT);
	PN_ASSERT(startup_legal[p->state][to]);
	p->state = to;
}

void pn_recovery_init(struct pn_recovery *rv, const struct pn_recovery_handles *h)
{
	PN_ASSERT(h->sc != NULL);
	PN_ASSERT(h->svc != NULL);
	PN_ASSERT(h->wal != NULL);
	PN_ASSERT(h->buf != NULL);
	PN_ASSERT(h->store != NULL);
	PN_ASSERT(h->ckpt != NULL);
	PN_ASSERT(h->proto != NULL);
	PN_ASSERT(h->pctx != NULL);
	PN_ASSERT(h->next_xid != NULL);
	memset(rv, 0, sizeof(*rv));
	rv->h = *h;
}

void pn_recovery_free(struct pn_recovery *rv)
{
	pn_wal_reader_free(&rv->reader); /* recovery may stop mid-way (a violation) */
}

static bool reader_at(struct pn_recovery *rv, pn_lsn start)
{
	if (!pn_wal_reader_init(&rv->reader, start, 0, pn_wal_seg_size(rv->h.wal), rv->h.page_size,
				pn_wal_rec_cap(rv->h.wal), rv->h.sysid, wal_read_cb, rv))
		return false;
	pn_wal_reader_parts(&rv->reader, wal_part_cb, wal_summary_cb);
	return true;
}

static bool read_checkpoint_record(struct pn_recovery *rv, const struct pn_control *c)
{
	pn_lsn s, end;
	enum pn_rec kind;
	bool ok = reader_at(rv, c->checkpoint) &&
		  pn_wal_read_next(&rv->reader, &rv->rec, &s, &end) &&
		  pn_rec_from_ids(rv->rec.rmid, rv->rec.info, &kind) &&
		  (kind == PN_REC_XLOG_CHECKPOINT_ONLINE ||
		   kind == PN_REC_XLOG_CHECKPOINT_SHUTDOWN) &&
		  rv->rec.main_len == 88 && pn_get64(rv->rec.main_data) == c->redo;
	if (ok)
		*rv->h.next_xid = (uint32_t)pn_get64(rv->rec.main_data + 24);
	else
		pn_svc_violation(rv->h.svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "could not locate a valid checkpoint record at %X/%08X (%s)",
				 (unsigned)(c->checkpoint >> 32), (unsigned)c->checkpoint,
				 rv->reader.why[0] ? rv->reader.why : "not a checkpoint");
	pn_wal_reader_free(&rv->reader);
	return ok;
}

bool pn_recovery_begin(struct pn_recovery *rv)
{
	uint8_t buf[PN_CONTROL_SIZE];
	struct pn_control c;
	rv->active = true;
	if (!rv->h.svc->env.read_sync(rv->h.svc->env.ctx, PN_FILE_CONTROL, 0, PN_CONTROL_SIZE,
				      buf) ||
	    !pn_ckpt_decode_control(buf, &c)) {
		pn_svc_violation(rv->h.svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "control file unreadable (bad magic or CRC)");
		return false;
	}
	if (!read_checkpoint_record(rv, &c))
		return false;
	if (rv->h.proto->recovery.begin && !rv->h.proto->recovery.begin(rv->h.pctx, &c))
		return false;
	if (c.sized && c.rel_blocks <= rv->h.store->heap_pages) {
		uint32_t old = pn_store_truncate(rv->h.store, c.rel_blocks);
		if (rv->h.proto->write.truncated && c.rel_blocks < old)
			rv->h.proto->write.truncated(rv->h.pctx, c.rel_blocks, old, 0);
	}
	pn_wal_set_redo(rv->h.wal, c.redo);
	pn_wal_set_keep_from(rv->h.wal, c.redo);
	pn_ckpt_recovered(rv->h.ckpt, &c);
	pn_wal_set_durable(rv->h.wal, UINT64_MAX / 2); /* no WAL is written while replaying */
	pn_lsn from = c.redo;
	if (rv->h.proto->recovery.from && !rv->h.proto->recovery.from(rv->h.pctx, c.redo, &from))
		return false; /* pushdown: the page server's metadata, images, and its horizon */
	if (!reader_at(rv, from)) {
		snprintf(rv->h.svc->error, sizeof(rv->h.svc->error), "out of memory");
		return false;
	}
	struct pn_proc *p = &rv->h.procs[rv->h.proc_startup];
	startup_set_state(p, PN_B_NEXT);
	pn_svc_wake(rv->h.svc, rv->h.proc_startup, 0);
	return true;
}

/* XLogHintBitIsNeeded(): the cluster's, which redo reads as the insert did. */
static bool hints_logged(const struct pn_recovery *rv)
{
	return rv->h.sc->protocol.checksums || rv->h.sc->protocol.wal_log_hints;
}

static void apply_block(struct pn_recovery *rv, uint32_t fi, const struct pn_wal_block *b)
{
	struct pn_frame *f = pn_buf_frame(rv->h.buf, fi);
	uint8_t *page = pn_frame_page(rv->h.buf, fi);
	uint32_t pg = b->blkno;
	bool headerless = pn_store_is_slru(rv->h.store, pg) && !rv->h.sc->protocol.slru_headers;
	bool image = b->has_image && b->image_apply;
	bool done = !image && !headerless && pn_page_lsn(page) >= rv->rec_end;
	PN_TESTCASE("redo finds the page already current (BLK_DONE)", done);
	if (!done) {
		if (!pn_redo_apply(page, rv->h.page_size, &rv->rec, b)) {
			pn_svc_violation(rv->h.svc, PN_VIOL_RECOVERY, pg,
					 "record at %X/%08X does not apply to page %u",
					 (unsigned)(rv->rec_start >> 32), (unsigned)rv->rec_start,
					 pg);
			return;
		}
		if (!headerless && pn_redo_sets_lsn(&rv->rec, b, hints_logged(rv)))
			pn_page_set_lsn(page, rv->rec_end);
		pn_buf_set_redo_dirty(rv->h.buf, fi);
		pn_buf_set_last_lsn(rv->h.buf, fi, rv->rec_end);
	}
	if (b->has_shift && !pn_store_is_slru(rv->h.store, pg)) {
		uint32_t target = b->shift_target & 0x7fu;
		if (target >= rv->h.generations) {
			pn_svc_violation(rv->h.svc, PN_VIOL_RECOVERY, pg, "shift to slot %u of %u",
					 target, rv->h.generations);
			return;
		}
		/* The page now lives in the target slot, which may hold nothing yet: even when
		 * the change was already in the baseline (BLK_DONE), the page must be written
		 * to its new slot, so it is dirty. */
		PN_TESTCASE("redo shifts a page whose change was already applied", done);
		pn_store_set_slot(rv->h.store, pg, target);
		if (rv->h.proto->recovery.redo_shifted)
			rv->h.proto->recovery.redo_shifted(rv->h.pctx, pg);
		pn_buf_set_redo_dirty(rv->h.buf, fi);
		if (f->last_lsn < pn_page_lsn(page))
			pn_buf_set_last_lsn(rv->h.buf, fi, pn_page_lsn(page));
	}
}

static void end_of_wal(struct pn_recovery *rv, struct pn_proc *p)
{
	snprintf(rv->h.svc->error, sizeof(rv->h.svc->error), "redo done at %X/%08X: %s",
		 (unsigned)(rv->replay_end >> 32), (unsigned)rv->replay_end, rv->reader.why);
	pn_wal_reader_free(&rv->reader);
	pn_wal_start_at(rv->h.wal, rv->replay_end, rv->replay_last_start);
	if (rv->h.proto->recovery.end)
		rv->h.proto->recovery.end(rv->h.pctx, rv->replay_end, rv->replay_last_start);
	(*rv->h.next_xid)++;
	rv->eor_seq = rv->h.ckpt->seq_begun + 1;
	pn_ckpt_request(rv->h.ckpt, PN_CKPT_END_OF_RECOVERY, true);
	startup_set_state(p, PN_B_WAIT_CKPT);
}

/* Redo of Storage/TRUNCATE (false: a truncated page's frame is busy; proc is woken). */
static bool redo_truncate(struct pn_recovery *rv, uint32_t n, uint32_t proc)
{
	uint32_t old = rv->h.store->nblocks;
	for (uint32_t pg = n; pg < old; pg++) {
		uint32_t fi = pn_buf_frame_of(rv->h.buf, pg);
		if (fi != PN_NO_FRAME && !pn_buf_idle(rv->h.buf, fi)) {
			pn_svc_wake(rv->h.svc, proc, STEP_NS);
			return false;
		}
	}
	for (uint32_t pg = n; pg < old; pg++)
		PN_ASSERT(pn_buf_drop(rv->h.buf, pg));
	pn_store_truncate(rv->h.store, n);
	if (rv->h.proto->write.truncated && n < old)
		rv->h.proto->write.truncated(rv->h.pctx, n, old, 0);
	return true;
}

void pn_recovery_step(struct pn_recovery *rv, struct pn_proc *p)
{
	if (p->state == PN_B_WAIT_CKPT) {
		if (rv->h.ckpt->seq_done >= rv->eor_seq) {
			rv->active = false;
			startup_set_state(p, PN_B_DONE);
		}
		return;
	}
	if (p->state != PN_B_NEXT)
		return;
	if (rv->h.proto->recovery.redo_step && rv->h.proto->recovery.redo_step(rv->h.pctx, p))
		return; /* doublewrite: a restore before replay */
	if (!rv->rec_valid) {
		if (!pn_wal_read_next(&rv->reader, &rv->rec, &rv->rec_start, &rv->rec_end)) {
			end_of_wal(rv, p);
			return;
		}
		rv->rec_valid = true;
		rv->rec_block = 0;
		rv->replay_end = rv->rec_end;
		rv->replay_last_start = rv->rec_start;
		if (rv->rec.xid > *rv->h.next_xid)
			*rv->h.next_xid = rv->rec.xid;
		rv->h.m->recovery_records++;
		if (rv->h.proto->recovery.redo_record) { /* pushdown: the page server re-ingests */
			rv->h.proto->recovery.redo_record(rv->h.pctx, &rv->rec, rv->rec_start,
							  rv->rec_end);
			rv->rec_valid = false;
			pn_svc_wake(rv->h.svc, p->id, STEP_NS);
			return;
		}
	}
	uint32_t n;
	if (rv->rec.nblocks == 0 && pn_smgr_truncate_decode(&rv->rec, &n) &&
	    !redo_truncate(rv, n, p->id))
		return;
	if (rv->rec_block >= rv->rec.nblocks) {
		rv->rec_valid = false;
		pn_svc_wake(rv->h.svc, p->id, STEP_NS);
		return;
	}
	const struct pn_wal_block *b = &rv->rec.blocks[rv->rec_block];
	if (b->blkno >= rv->h.pages) {
		pn_svc_violation(rv->h.svc, PN_VIOL_RECOVERY, b->blkno,
				 "record names page %u of %u", b->blkno, rv->h.pages);
		return;
	}
	/* an image, or a page the record rebuilds (WILL_INIT): RBM_ZERO_AND_LOCK, no read */
	bool full = (b->has_image && b->image_apply) || b->will_init;
	if (!pn_store_exists(rv->h.store, b->blkno)) {
		if (!full) {
			pn_svc_violation(rv->h.svc, PN_VIOL_RECOVERY, b->blkno,
					 "record at %X/%08X names page %u, past the relation's %u "
					 "blocks, without an image (an invalid page)",
					 (unsigned)(rv->rec_start >> 32), (unsigned)rv->rec_start,
					 b->blkno, rv->h.store->nblocks);
			return;
		}
		pn_store_extend(rv->h.store, b->blkno);
	}
	if (b->ext_len && rv->h.proto->recovery.redo_ext)
		rv->h.proto->recovery.redo_ext(rv->h.pctx, b);
	if (b->has_shift && !full && rv->h.proto->recovery.redo_source &&
	    !pn_store_is_slru(rv->h.store, b->blkno) &&
	    !rv->h.proto->recovery.redo_source(rv->h.pctx, b, p->id))
		return; /* woken when the resident page is flushed to the source */
	uint32_t fi = pn_buf_pin(rv->h.buf, b->blkno, p->id, full);
	if (fi == PN_NO_FRAME)
		return; /* woken when the read (or a victim's write) completes */
	apply_block(rv, fi, b);
	pn_buf_unpin(rv->h.buf, fi);
	rv->rec_block++;
	pn_svc_wake(rv->h.svc, p->id, STEP_NS);
}

/*
 * wl_record.c: how the workload generators' own changes (wl_vacuum.c, wl_btree.c) register
 * their blocks and insert their records (engine layer). A workload change may write several
 * records and a record may name two pages, so backend.c's one-page DECIDE/INSERT pair does
 * not fit it; these two helpers give it the same rules:
 *
 *   pn_wl_protect  the image or shift of one block, decided against RedoRecPtr at insert
 *                  time (the whole change is one INSERT step, so nothing can move the redo
 *                  pointer between the decision and the record: 5.1 holds by construction):
 *                    ordinary block (XLogRecordAssemble): fpw -> image iff page LSN <=
 *                    RedoRecPtr (not under fpw_off); umbra -> a shift instead; nofpw and
 *                    doublewrite -> neither; PN_REG_PLAIN images keep the whole page;
 *                    hint block (XLogSaveBufferForHint, only when checksums or
 *                    wal_log_hints): the same test, an image kept under umbra as well
 *                    (Umbra keeps FPI_FOR_HINT images) plus its shift; never under
 *                    hint_no_fpi;
 *                    will-init block (REGBUF_WILL_INIT, a new btree page): never an image;
 *                    under umbra a shift when the page is on its baseline (Umbra remaps a
 *                    page's birth too), so the new page is not written over a baseline.
 *   pn_wl_mark     a block's image (without the page's hole unless `whole`) and shift, once
 *                  decided (also backend.c's, for its own ops and PN_OP_CHANGE's blocks).
 *   pn_wl_pin_extra / pn_wl_unpin_extra  the op's other pages, pinned before its own page in
 *                  the PIN step (pn_wl_extra_pages names them), unpinned after the change.
 *   pn_wl_insert   inserts the record, then for each block: page LSN = end of the record,
 *                  frame dirty (WAL-logged), its last LSN, and the shift published (R4)
 *                  (also backend.c's for PN_OP_CHANGE's records).
 */
#include "engine.h"

void pn_wl_mark(struct pn_engine *e, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		bool image, bool whole, bool shift)
{
	if (image) {
		b->data = NULL; /* an image replaces the block data (needs_data = !needs_backup) */
		b->data_len = 0;
		b->has_image = b->image_apply = true;
		b->image = page;
		b->hole_offset = b->hole_length = 0;
		if (!whole)
			pn_page_hole(page, e->page_size, &b->hole_offset, &b->hole_length);
	}
	if (shift) {
		b->has_shift = true;
		b->shift_source = e->cur[pg];
		b->shift_target = (uint8_t)pn_store_shift_target(e, pg);
	}
}

void pn_wl_protect(struct pn_engine *e, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		   enum pn_wl_reg reg)
{
	const struct pn_scenario *sc = e->sc;
	enum pn_mode mode = sc->protocol.mode;
	uint32_t mut = sc->protocol.mutations;
	bool before = pn_page_lsn(page) <= e->wal.redo;
	bool image = false, shift = false;
	if (reg == PN_REG_WILL_INIT) {
		b->will_init = true;
		shift = before && mode == PN_MODE_UMBRA;
	} else if (reg == PN_REG_HINT) {
		image = before && !(mut & PN_MUT_HINT_NO_FPI) &&
			(mode == PN_MODE_FPW || mode == PN_MODE_UMBRA);
		shift = image && mode == PN_MODE_UMBRA;
	} else if (mode == PN_MODE_FPW) {
		image = before && !(mut & PN_MUT_FPW_OFF);
	} else if (mode == PN_MODE_UMBRA) {
		shift = before;
	}
	pn_wl_mark(e, b, pg, page, image, reg == PN_REG_PLAIN, shift);
}

pn_lsn pn_wl_insert(struct pn_engine *e, struct pn_wal_record *r, enum pn_rec kind,
		    const uint32_t *frames)
{
	bool policy = pn_umbra_policy(e);
	for (uint32_t i = 0; i < r->nblocks && policy; i++)
		if (r->blocks[i].has_shift) /* l3/l4: the shift header, l3's image (umbra_policy.c) */
			pn_umbra_assemble_block(e, frames[i], &r->blocks[i],
						pn_frame_page(e, frames[i]), r->blocks[i].data_len != 0);
	pn_lsn end = pn_wal_insert(e, r, kind, NULL);
	for (uint32_t i = 0; i < r->nblocks; i++) {
		struct pn_frame *f = &e->frames[frames[i]];
		PN_ASSERT(f->page == r->blocks[i].blkno && f->pins > 0);
		pn_page_set_lsn(pn_frame_page(e, frames[i]), end);
		f->dirty = true;
		f->dirty_hint_only = false;
		f->redirtied |= f->io_writes > 0;
		f->last_lsn = end;
		/* l3/l4 publish in this same step: no DELAY_CHKPT_START window (the script
		 * workloads' update_hold explores that window; docs/protocol.md 4a) */
		if (r->blocks[i].has_shift && policy)
			pn_umbra_publish_page(e, frames[i], r->blocks[i].shift_target, end);
		else if (r->blocks[i].has_shift)
			pn_backend_publish_shift(e, f->page, r->blocks[i].shift_target);
	}
	return end;
}

bool pn_wl_pin_extra(struct pn_engine *e, struct pn_proc *p)
{
	uint32_t pages[2], n = pn_wl_extra_pages(e, p, pages);
	while (p->nextra < n) {
		uint32_t f = pn_buf_pin(e, pages[p->nextra], p->id, false);
		if (f == PN_NO_FRAME)
			return false; /* woken when the read or a victim's write completes */
		p->extra_frames[p->nextra++] = f;
	}
	return true;
}

void pn_wl_unpin_extra(struct pn_engine *e, struct pn_proc *p)
{
	while (p->nextra > 0)
		pn_buf_unpin(e, p->extra_frames[--p->nextra]);
}

uint32_t pn_wl_extra_pages(struct pn_engine *e, struct pn_proc *p, uint32_t *pages)
{
	if (p->op.op == PN_OP_VACUUM_PAGE)
		return pn_wl_vacuum_vm_page(e, p->op.page, &pages[0]) ? 1 : 0;
	if (p->op.op == PN_OP_BT_SPLIT)
		return pn_wl_btree_split_pages(e, p, pages);
	if (p->op.op == PN_OP_IMPORT)
		return pn_wl_import_extra_pages(e, pages);
	return 0;
}

void pn_wl_hint_dirty(struct pn_engine *e, uint32_t frame)
{
	struct pn_frame *f = &e->frames[frame];
	if (!f->dirty)
		f->dirty_hint_only = true;
	f->dirty = true;
	f->redirtied |= f->io_writes > 0;
}

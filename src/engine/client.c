/*
 * client.c: the services a workload's change uses (engine layer; client.h is the interface).
 * A workload change (src/workload/wl_vacuum.c, wl_btree.c) may write several records and a
 * record may name two pages, so backend.c's one-page DECIDE/INSERT pair does not fit it;
 * these helpers give it the same rules:
 *
 *   pn_client_protect  the image or shift of one block, decided against RedoRecPtr at
 *                  insert time (the whole change is one INSERT step, so nothing can move the
 *                  redo pointer between the decision and the record: 5.1 holds by
 *                  construction):
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
 *   pn_client_hint  a hint-bit change (MarkBufferDirtyHint): FPI_FOR_HINT when hints are
 *                  logged and the page is unchanged since the redo pointer, with or without
 *                  its image (pn_client_protect's PN_REG_HINT decision), else hint-dirty
 *                  only; never logged under the hint_no_fpi mutant.
 *   pn_client_mark  a block's image (without the page's hole unless `whole`) and shift,
 *                  once decided (also backend.c's, for PN_OP_CHANGE's blocks).
 *   pn_client_pin_extra / pn_client_unpin_extra  the op's other pages, pinned before its own
 *                  page in the PIN step (the workload's extra_pages names them), unpinned
 *                  after the change.
 *   pn_client_insert  inserts the record, then for each block: page LSN = end of the
 *                  record (unless pn_redo_sets_lsn says the record leaves it: VISIBLE's
 *                  heap page without logged hints), frame dirty (WAL-logged), its last
 *                  LSN = end of the record (the write waits for the WAL flush, also where
 *                  PostgreSQL's waits only for the unchanged page LSN), and the shift reported
 *                  to the protocol row's shifted hook (publication, R4) (also
 *                  backend.c's for PN_OP_CHANGE's records).
 */
#include "client.h"

#include "bufpool.h"
#include "ckpt.h"
#include "metrics.h"
#include "page.h"
#include "protocol.h"
#include "redo.h"
#include "services.h"
#include "store.h"
#include "wal.h"

struct pn_client pn_client_of(const struct pn_client_handles *h, struct pn_proc *p)
{
	PN_ASSERT(p->kind == PN_PROC_BACKEND);
	return (struct pn_client){.h = h,
				  .p = p,
				  .id = p->id,
				  .xid = p->xid,
				  .ops_in_txn = p->ops_in_txn,
				  .op = &p->op};
}

enum pn_client_next pn_client_next(const struct pn_client_handles *h, struct pn_proc *p,
				   struct pn_step *out)
{
	struct pn_client c = pn_client_of(h, p);
	return h->ops->next(h->state, &c, out);
}

uint32_t pn_client_pinned(const struct pn_client *c) { return 1 + c->p->nextra; }

uint32_t pn_client_frame(const struct pn_client *c, uint32_t i)
{
	PN_ASSERT(i <= c->p->nextra);
	return i == 0 ? c->p->frame : c->p->extra_frames[i - 1];
}

uint8_t *pn_client_page(const struct pn_client *c, uint32_t i)
{
	return pn_frame_page(c->h->buf, pn_client_frame(c, i));
}

uint32_t pn_client_blkno(const struct pn_client *c, uint32_t i)
{
	return pn_buf_frame(c->h->buf, pn_client_frame(c, i))->page;
}

void pn_client_mark(const struct pn_client *c, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		    bool image, bool whole, bool shift)
{
	const struct pn_client_handles *h = c->h;
	PN_ASSERT(pg < h->pages);
	uint32_t target = shift && h->proto->write.shift_target
				  ? h->proto->write.shift_target(h->pctx, pg)
				  : 0;
	if (target == PN_SHIFT_IMAGE) {
		shift = false; /* no slot to shift to: an image instead */
		image = true;
	}
	PN_ASSERT(!image || page != NULL);
	if (image) {
		b->data = NULL; /* an image replaces the block data (needs_data = !needs_backup) */
		b->data_len = 0;
		b->has_image = b->image_apply = true;
		b->image = page;
		b->hole_offset = b->hole_length = 0;
		if (!whole)
			pn_page_hole(page, h->page_size, &b->hole_offset, &b->hole_length);
	}
	if (shift) {
		b->has_shift = true;
		b->shift_source = pn_store_slot(h->store, pg);
		if (!h->proto->write.shift_target)
			target = pn_store_shift_target(h->store, pg,
						       pn_ckpt_baselines_busy(h->ckpt, pg));
		b->shift_target = (uint8_t)target;
	}
}

void pn_client_protect(const struct pn_client *c, struct pn_wal_block *b, uint32_t pg,
		       uint8_t *page, enum pn_client_reg reg)
{
	const struct pn_client_handles *h = c->h;
	PN_ASSERT(reg <= PN_REG_WILL_INIT);
	PN_ASSERT(b->blkno == pg);
	bool before = pn_page_lsn(page) <= pn_wal_redo(h->wal);
	enum pn_block_use use = reg == PN_REG_WILL_INIT ? PN_USE_WILL_INIT
				: reg == PN_REG_HINT    ? PN_USE_HINT_BLOCK
							: PN_USE_CHANGE;
	if (reg == PN_REG_WILL_INIT)
		b->will_init = true;
	unsigned protect = h->proto->write.decide(h->pctx, use, before);
	pn_client_mark(c, b, pg, page, (protect & PN_PROTECT_IMAGE) != 0, reg == PN_REG_PLAIN,
		       (protect & PN_PROTECT_SHIFT) != 0);
}

pn_lsn pn_client_insert(const struct pn_client *c, struct pn_wal_record *r, enum pn_rec kind,
			const uint32_t *frames)
{
	const struct pn_client_handles *h = c->h;
	PN_ASSERT(r->nblocks <= PN_WAL_MAX_BLOCKS);
	PN_ASSERT(r->nblocks == 0 || frames != NULL);
	for (uint32_t i = 0; i < r->nblocks && h->proto->write.assemble; i++)
		if (r->blocks[i].has_shift) /* l3/l4: the shift header, l3's image (umbra_map.c) */
			h->proto->write.assemble(h->pctx, frames[i], &r->blocks[i],
						 pn_frame_page(h->buf, frames[i]),
						 r->blocks[i].data_len != 0);
	pn_lsn end = pn_wal_insert(h->wal, r, kind, NULL);
	bool hints_logged = h->sc->protocol.checksums || h->sc->protocol.wal_log_hints;
	for (uint32_t i = 0; i < r->nblocks; i++) {
		struct pn_frame *f = pn_buf_frame(h->buf, frames[i]);
		PN_ASSERT(f->page == r->blocks[i].blkno && f->pins > 0);
		/* VISIBLE's unlogged-hint heap page keeps its LSN (redo.h pn_redo_sets_lsn): R4
		 * and the next change's image or shift decision see it unchanged, as
		 * PostgreSQL's do; its write still waits for the record's flush (last_lsn) */
		if (pn_redo_sets_lsn(r, &r->blocks[i], hints_logged))
			pn_page_set_lsn(pn_frame_page(h->buf, frames[i]), end);
		pn_buf_set_dirty(h->buf, frames[i]);
		pn_buf_set_last_lsn(h->buf, frames[i], end);
		/* published in this same step: no DELAY_CHKPT_START window for l3/l4 (the script
		 * workloads' update_hold explores that window; docs/protocol.md 4a) */
		if (r->blocks[i].has_shift)
			h->proto->write.shifted(h->pctx, frames[i], r->blocks[i].shift_target, end);
	}
	return end;
}

bool pn_client_pin_extra(const struct pn_client_handles *h, struct pn_proc *p)
{
	uint32_t pages[2], n = 0;
	if (h->ops->extra_pages) {
		struct pn_client c = pn_client_of(h, p);
		n = h->ops->extra_pages(h->state, &c, pages);
	}
	PN_ASSERT(n <= PN_ARRAY_LEN(p->extra_frames));
	while (p->nextra < n) {
		uint32_t f = pn_buf_pin(h->buf, pages[p->nextra], p->id, false);
		if (f == PN_NO_FRAME)
			return false; /* woken when the read or a victim's write completes */
		p->extra_frames[p->nextra++] = f;
	}
	return true;
}

void pn_client_unpin_extra(const struct pn_client_handles *h, struct pn_proc *p)
{
	while (p->nextra > 0)
		pn_buf_unpin(h->buf, p->extra_frames[--p->nextra]);
}

bool pn_client_hint(const struct pn_client *c, uint32_t frame, uint32_t pg, uint8_t *page)
{
	const struct pn_scenario *sc = c->h->sc;
	bool logged = (sc->protocol.checksums || sc->protocol.wal_log_hints) &&
		      !(sc->protocol.mutations & PN_MUT_HINT_NO_FPI);
	PN_ASSERT(pn_frame_page(c->h->buf, frame) == page);
	if (!logged || pn_page_lsn(page) > pn_wal_redo(c->h->wal)) {
		pn_client_hint_dirty(c, frame);
		return false;
	}
	struct pn_wal_record rec = {.nblocks = 1};
	rec.blocks[0].blkno = pg;
	pn_client_protect(c, &rec.blocks[0], pg, page, PN_REG_HINT);
	pn_client_insert(c, &rec, PN_REC_XLOG_FPI_FOR_HINT, &frame);
	return rec.blocks[0].has_image;
}

void pn_client_hint_dirty(const struct pn_client *c, uint32_t frame)
{
	PN_ASSERT(frame < c->h->buf->nframes);
	PN_ASSERT(pn_buf_frame(c->h->buf, frame)->pins > 0);
	pn_buf_set_hint_dirty(c->h->buf, frame);
}

void pn_client_changed(const struct pn_client *c, uint64_t bytes)
{
	c->h->m->logical_bytes_changed += bytes;
}

void pn_client_count_wal_from_here(const struct pn_client *c) { pn_metrics_wal_baseline(c->h->m); }

uint64_t pn_client_random(const struct pn_client *c, uint64_t lo, uint64_t hi)
{
	PN_ASSERT(lo <= hi);
	return lo + c->h->svc->env.random(c->h->svc->env.ctx) % (hi - lo + 1);
}

void pn_client_wake(const struct pn_client *c, uint32_t client, uint64_t delay_ns)
{
	PN_ASSERT(client < c->h->nbackends);
	pn_svc_wake(c->h->svc, client, delay_ns);
}

struct pn_change *pn_client_change_slot(const struct pn_client *c) { return &c->p->chg; }

void pn_client_begin_txn(const struct pn_client *c, int type) { c->p->txn_type = type; }

/* page_init (or page_init_fixed when fixed) of page p, checksummed as formatting does. */
static void initial(const struct pn_client_handles *h, uint32_t p, uint8_t *page, bool fixed)
{
	PN_ASSERT(p < h->pages);
	PN_ASSERT(page != NULL);
	bool slru = pn_store_is_slru(h->store, p);
	if (slru)
		pn_page_init(page, h->page_size, p, true);
	else if (fixed)
		h->ops->page_init_fixed(h->state, p, page);
	else if (h->ops->page_init)
		h->ops->page_init(h->state, p, page);
	else
		pn_page_init(page, h->page_size, p, false);
	if (!slru && h->sc->protocol.checksums && !pn_page_is_new(page))
		pn_page_set_checksum(page, h->page_size, p);
}

void pn_client_initial_page(const struct pn_client_handles *h, uint32_t p, uint8_t *page)
{
	initial(h, p, page, false);
}

bool pn_client_initial_fixed(const struct pn_client_handles *h, uint32_t p, uint8_t *page)
{
	if (!h->ops->page_init_fixed)
		return false;
	initial(h, p, page, true);
	return true;
}

/*
 * backend.c: client backends (engine layer). State diagram in engine.h (enum pn_bstate).
 *
 * A change to a page is three steps, so that a checkpoint's begin can fall between them
 * (the races of seed 000 section 5 must be reachable for the checker to see them):
 *   PIN     find or read the page (eviction and WAL flush on the way);
 *   DECIDE  take the content lock, read RedoRecPtr, decide image (fpw) or shift (umbra),
 *           as XLogRecordAssemble() does with the value GetFullPageWriteInfo() gave it;
 *   INSERT  recheck RedoRecPtr (XLogInsertRecord's recheck, the row's recheck hook; the shift_split mutant skips
 *           it) and, in one step: change the page, mark it dirty, insert the record, stamp
 *           the page LSN, publish the shift (5.1: the shift and its record are atomic with
 *           respect to the redo pointer), unlock.
 * A commit inserts its record and waits for the WAL flush before it is acknowledged (R2).
 */
#include "backend.h"

#include "btree.h"
#include "bufpool.h"
#include "ckpt.h"
#include "client.h"
#include "metrics.h"
#include "page.h"
#include "protocol.h"
#include "redo.h"
#include "redo_btree.h"
#include "redo_heap.h"
#include "redo_xlog.h"
#include "services.h"
#include "slru.h"
#include "store.h"
#include "wal.h"

#include <stdlib.h>
#include <string.h>

#define STEP_NS 2000u
#define POLL_NS 20000u

/* The ops a workload changes itself (its client table's change: vacuum, btree_dedup). */
static bool client_op(enum pn_op op)
{
	return op == PN_OP_VACUUM_PAGE || op == PN_OP_BT_INSERT || op == PN_OP_BT_SPLIT ||
	       op == PN_OP_IMPORT;
}

static bool hint_logged(const struct pn_backends *bk)
{
	return bk->cl->sc->protocol.checksums || bk->cl->sc->protocol.wal_log_hints;
}

static uint32_t op_page(const struct pn_backends *bk, const struct pn_step *op)
{
	if (op->op == PN_OP_SLRU_SET)
		return bk->heap_pages + pn_slru_page_of(op->xid, bk->cl->page_size,
							bk->cl->sc->protocol.slru_headers,
							bk->slru_pages);
	return op->page;
}

/* The image / shift decision for the op against redo pointer `redo` (the protocol's). */
static void decide(struct pn_backends *bk, struct pn_proc *p, pn_lsn redo)
{
	const struct pn_scenario *sc = bk->cl->sc;
	uint8_t *page = pn_frame_page(bk->cl->buf, p->frame);
	uint32_t pg = op_page(bk, &p->op);
	bool before_redo = pn_page_lsn(page) <= redo;
	enum pn_block_use use = PN_USE_CHANGE;
	if (pn_store_is_slru(bk->cl->store, pg)) {
		use = PN_USE_SLRU;
		before_redo = before_redo && sc->protocol.slru_headers;
	} else if (p->op.op == PN_OP_HINT) {
		use = PN_USE_HINT;
		before_redo = before_redo && hint_logged(bk);
	} else if (p->op.op == PN_OP_DEDUP) {
		use = PN_USE_DEDUP;
	}
	if (p->extended) /* a new block (XLOG_HEAP_INIT_PAGE's WILL_INIT: it leaves its slot) */
		use = PN_USE_WILL_INIT;
	unsigned protect = bk->cl->proto->write.decide(bk->cl->pctx, use, before_redo);
	PN_ASSERT(use != PN_USE_SLRU || !(protect & PN_PROTECT_SHIFT)); /* ST1 */
	p->decided_redo = redo;
	p->decided_image = (protect & PN_PROTECT_IMAGE) != 0;
	p->decided_shift = (protect & PN_PROTECT_SHIFT) != 0;
	p->decided_image |= p->extended; /* and carries an image (the oracle's base, I5) */
}

static uint32_t change_bytes(const struct pn_backends *bk, enum pn_op op, uint32_t nitems)
{
	switch (op) {
	case PN_OP_UPDATE: return 4;
	case PN_OP_VACUUM: return 2 * nitems;
	case PN_OP_DEDUP: return nitems * (PN_TUPLE_LEN - PN_TUPLE_HEADER);
	default: return 1;
	}
}

/* Builds the op's record into rec (main data into `main`, block data into `data`). */
static enum pn_rec build_record(struct pn_backends *bk, struct pn_proc *p,
				struct pn_wal_record *rec, uint8_t *main, uint8_t *data,
				uint32_t nitems)
{
	struct pn_wal_block *b = &rec->blocks[0];
	rec->nblocks = 1;
	b->blkno = op_page(bk, &p->op);
	switch (p->op.op) {
	case PN_OP_UPDATE:
		pn_put32(main, p->xid);                       /* old_xmax */
		pn_put16(main + 4, (uint16_t)(p->item + 1));  /* old_offnum */
		main[6] = 0;                                  /* old_infobits_set */
		main[7] = 0;                                  /* flags */
		pn_put32(main + 8, 0);                        /* new_xmax */
		pn_put16(main + 12, (uint16_t)(p->item + 1)); /* new_offnum */
		rec->main_len = 14;
		pn_put16(data, 1);          /* xl_heap_header t_infomask2 */
		pn_put16(data + 2, 0x0800); /* t_infomask: HEAP_XMAX_INVALID */
		data[4] = PN_TUPLE_HEADER;  /* t_hoff */
		pn_put32(data + 5, (uint32_t)(p->xid * 2654435761u) ^ p->ops_in_txn);
		b->data_len = 9;
		rec->main_data = main;
		b->data = data;
		return PN_REC_HEAP_HOT_UPDATE;
	case PN_OP_VACUUM:              /* PostgreSQL 15's layout: the tuples are block 0's data */
		pn_put32(main, p->xid); /* cutoff xid */
		pn_put16(main + 4, (uint16_t)nitems);
		rec->main_len = PN_FREEZE_MAIN_PG15;
		rec->main_data = main;
		b->data = data;
		b->data_len = pn_heap_freeze_tuples(pn_frame_page(bk->cl->buf, p->frame),
						    bk->cl->page_size, nitems, PN_HINT_FROZEN,
						    data);
		return PN_REC_HEAP2_FREEZE_PAGE;
	case PN_OP_DEDUP:
		pn_put16(main, 1); /* nintervals */
		rec->main_len = 2;
		rec->main_data = main;
		pn_put16(data, 1);                    /* baseoff */
		pn_put16(data + 2, (uint16_t)nitems); /* nitems */
		data[0] = (uint8_t)(p->xid | 1);
		b->data = data;
		b->data_len = 4;
		return PN_REC_BTREE_DEDUP;
	case PN_OP_SLRU_SET:
		pn_put32(main, p->op.xid);
		main[4] = bk->cl->sc->protocol.slru_headers;
		rec->main_len = 5;
		rec->main_data = main;
		return PN_REC_CLOG_SET;
	default: /* hint with FPI_FOR_HINT: the image alone */ return PN_REC_XLOG_FPI_FOR_HINT;
	}
}

/* INSERT: the change, its record and the shift, in one step (rule 5.1). */
static void do_change(struct pn_backends *bk, struct pn_proc *p)
{
	uint8_t *page = pn_frame_page(bk->cl->buf, p->frame);
	uint32_t pg = op_page(bk, &p->op);
	uint32_t nitems = pn_store_is_slru(bk->cl->store, pg) ? 0 : pn_page_nitems(page);
	uint8_t main[16], data[PN_FREEZE_TUPLE * 512];
	struct pn_wal_record rec = {.xid = p->xid};
	if (client_op(p->op.op)) { /* the workload's own records (client.h change) */
		struct pn_client c = pn_client_of(bk->cl, p);
		PN_ASSERT(bk->cl->ops->change != NULL);
		bk->cl->ops->change(bk->cl->state, &c);
		for (uint32_t i = 0; i < p->nextra; i++) /* locked with its page at DECIDE */
			pn_buf_unlock(bk->cl->buf, p->extra_frames[i]);
		pn_client_unpin_extra(bk->cl, p);
		return;
	}
	PN_ASSERT(nitems <= 512);
	p->item = nitems ? (uint32_t)(bk->cl->svc->env.random(bk->cl->svc->env.ctx) % nitems) : 0;
	bool unlogged_hint = p->op.op == PN_OP_HINT && !p->decided_image && !p->decided_shift;
	uint8_t *before = NULL; /* l4 hint delta: the page before the hint */
	if (p->op.op == PN_OP_HINT && !unlogged_hint && bk->cl->proto->hint_delta)
		before = memcpy(pn_svc_scratch(bk->cl->svc, PN_SCRATCH_HINT_BEFORE), page,
				bk->cl->page_size);
	if (p->op.op == PN_OP_HINT)
		pn_page_set_hint(page, p->item);
	if (unlogged_hint) {
		pn_buf_set_hint_dirty(bk->cl->buf, p->frame);
		return;
	}
	enum pn_rec kind = build_record(bk, p, &rec, main, data, nitems);
	struct pn_wal_block *b = &rec.blocks[0];
	if (before) {
		kind = PN_REC_XLOG2_HINT_DELTA;
		b->data = data;
		b->data_len = pn_hint_delta_encode(before, page, bk->cl->page_size, data,
						   sizeof(data));
	}
	pn_rec_ids(kind, &rec.rmid, &rec.info);
	if (p->op.op != PN_OP_HINT && !pn_redo_apply(page, bk->cl->page_size, &rec, b))
		PN_ASSERT(!"a record that does not fit its page");
	uint32_t target = 0;
	if (p->decided_shift && bk->cl->proto->write.shift_target &&
	    (target = bk->cl->proto->write.shift_target(bk->cl->pctx, pg)) == PN_SHIFT_IMAGE) {
		p->decided_shift = false; /* no slot to shift to: an image instead */
		p->decided_image = true;
	}
	if (p->decided_image) {
		b->data = NULL; /* an image replaces the block data (needs_data = !needs_backup) */
		b->data_len = 0;
		b->has_image = b->image_apply = true;
		b->image = page;
		pn_page_hole(page, bk->cl->page_size, &b->hole_offset, &b->hole_length);
	}
	if (p->decided_shift) {
		if (!bk->cl->proto->write.shift_target)
			target = pn_store_shift_target(bk->cl->store, pg,
						       pn_ckpt_baselines_busy(bk->cl->ckpt, pg));
		b->has_shift = true;
		b->shift_source = pn_store_slot(bk->cl->store, pg);
		b->shift_target = (uint8_t)target;
		if (bk->cl->proto->write.assemble)
			bk->cl->proto->write.assemble(bk->cl->pctx, p->frame, b, page,
						      b->data_len != 0 || p->op.op != PN_OP_HINT);
	}
	pn_buf_set_dirty(bk->cl->buf, p->frame);
	pn_lsn end = pn_wal_insert(bk->cl->wal, &rec, kind, NULL);
	bool headerless = pn_store_is_slru(bk->cl->store, pg) && !bk->cl->sc->protocol.slru_headers;
	if (!headerless)
		pn_page_set_lsn(page, end);
	pn_buf_set_last_lsn(bk->cl->buf, p->frame, end);
	if (p->decided_shift && bk->cl->proto->write.defer_shift) {
		bk->cl->proto->write.defer_shift(bk->cl->pctx, p, target,
						 end); /* published in its own step */
	} else if (p->decided_shift) {
		bk->cl->proto->write.shifted(bk->cl->pctx, p->frame, target, end);
	}
	bk->cl->m->logical_bytes_changed += change_bytes(bk, p->op.op, nitems);
}

/* ---- PN_OP_CHANGE: the records of the realistic workloads, over one or two blocks ---- */

/* A block the record initializes: a split's new right page; the page a heap insert or
 * update puts its tuple on when that page is new, or reused by the workload's growth and
 * not yet re-initialized (layout.h Growth). */
static bool change_block_init(const struct pn_backends *bk, const struct pn_change *c, uint32_t i,
			      const uint8_t *page)
{
	if (c->kind == PN_REC_BTREE_SPLIT_R)
		return i == 1;
	return i == 0 && (c->kind == PN_REC_HEAP_INSERT || c->kind == PN_REC_HEAP_UPDATE) &&
	       (pn_page_is_new(page) ||
		(bk->cl->ops->page_stale && bk->cl->ops->page_stale(bk->cl->state, c->pages[0])));
}

/* Per block: image (fpw) or shift (umbra) from page LSN <= redo; a block the record
 * initializes (REGBUF_WILL_INIT) takes no image, but in umbra it still leaves its baseline. */
static void decide_change(struct pn_backends *bk, struct pn_proc *p, pn_lsn redo)
{
	struct pn_change *c = &p->chg;
	p->decided_redo = redo;
	p->chg_image = p->chg_shift = p->chg_init = 0;
	for (uint32_t i = 0; i < c->nblocks; i++) {
		const uint8_t *page = pn_frame_page(bk->cl->buf, p->chg_frames[i]);
		bool before_redo = pn_page_lsn(page) <= redo;
		bool init = change_block_init(bk, c, i, page);
		p->chg_init |= (uint8_t)(init << i);
		unsigned protect = bk->cl->proto->write.decide(bk->cl->pctx,
							       init ? PN_USE_WILL_INIT
								    : PN_USE_CHANGE,
							       before_redo);
		p->chg_image |= (uint8_t)(((protect & PN_PROTECT_IMAGE) != 0) << i);
		p->chg_shift |= (uint8_t)(((protect & PN_PROTECT_SHIFT) != 0) << i);
	}
}

/* Tuple bytes of a new heap version: deterministic from the xid and where it goes. */
static void tuple_bytes(uint8_t *out, uint32_t n, uint32_t xid, uint32_t salt)
{
	uint64_t x = ((uint64_t)xid << 32) ^ salt;
	for (uint32_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		out[i] = (uint8_t)(x >> 56);
	}
}

/* xl_heap_header {t_infomask2, t_infomask, t_hoff} + the tuple's bytes from offset 23. */
static uint16_t heap_tuple_data(uint8_t *data, const struct pn_change *c, uint32_t xid)
{
	pn_put16(data, 4);          /* t_infomask2: natts */
	pn_put16(data + 2, 0x0800); /* t_infomask: HEAP_XMAX_INVALID */
	data[4] = PN_TUPLE_HEADER;  /* t_hoff */
	data[5] = 0;                /* byte 23: padding before the data */
	tuple_bytes(data + 6, c->t_len - PN_TUPLE_HEADER, xid, c->offnum);
	return (uint16_t)(5 + c->t_len - 23);
}

static void put_update_main(uint8_t *main, uint32_t xid, uint16_t old_off, uint8_t flags,
			    uint16_t new_off)
{
	pn_put32(main, xid); /* old_xmax */
	pn_put16(main + 4, old_off);
	main[6] = 0; /* old_infobits_set */
	main[7] = flags;
	pn_put32(main + 8, 0); /* new_xmax */
	pn_put16(main + 12, new_off);
}

/* Btree split: the record of redo_btree.c's pn_btree_split_record, over the change's blocks. */
static enum pn_rec build_split(struct pn_backends *bk, struct pn_proc *p, struct pn_wal_record *rec,
			       uint8_t *main, uint8_t *data0, uint8_t *data1)
{
	struct pn_change *c = &p->chg;
	uint8_t itup[64];
	pn_itup_make(itup, c->itup_len, c->key, c->heap_blk, c->heap_off);
	return pn_btree_split_record(pn_frame_page(bk->cl->buf, p->chg_frames[0]),
				     bk->cl->page_size, itup, c->itup_len, c->split_key, rec, main,
				     data0, data1);
}

static enum pn_rec build_change(struct pn_backends *bk, struct pn_proc *p,
				struct pn_wal_record *rec, uint8_t *main, uint8_t *data0,
				uint8_t *data1)
{
	struct pn_change *c = &p->chg;
	bool init = p->chg_init & 1;
	struct pn_wal_block *b = &rec->blocks[0];
	rec->main_data = main;
	switch (c->kind) {
	case PN_REC_HEAP_INSERT:
		pn_put16(main, c->offnum);
		main[2] = 0;
		rec->main_len = 3;
		b->data_len = heap_tuple_data(data0, c, p->xid);
		return init ? PN_REC_HEAP_INSERT_INIT : PN_REC_HEAP_INSERT;
	case PN_REC_HEAP_UPDATE:
		put_update_main(main, p->xid, c->old_offnum, 0, c->offnum);
		rec->main_len = 14;
		b->data_len = heap_tuple_data(data0, c, p->xid);
		return init ? PN_REC_HEAP_UPDATE_INIT : PN_REC_HEAP_UPDATE;
	case PN_REC_HEAP_HOT_UPDATE: {
		uint8_t flags = (uint8_t)((c->prefix ? 0x20 : 0) | (c->suffix ? 0x40 : 0));
		put_update_main(main, p->xid, c->offnum, flags, c->offnum);
		rec->main_len = 14;
		uint16_t n = 0;
		if (c->prefix) {
			pn_put16(data0, c->prefix);
			n += 2;
		}
		if (c->suffix) {
			pn_put16(data0 + n, c->suffix);
			n += 2;
		}
		pn_put16(data0 + n, 4);
		pn_put16(data0 + n + 2, 0x0800);
		data0[n + 4] = PN_TUPLE_HEADER;
		n += 5;
		if (flags)
			data0[n++] = 0; /* bytes 23 .. t_hoff */
		tuple_bytes(data0 + n, c->change_len, p->xid, c->offnum);
		b->data_len = (uint16_t)(n + c->change_len);
		return PN_REC_HEAP_HOT_UPDATE;
	}
	case PN_REC_HEAP_LOCK:
	case PN_REC_HEAP_DELETE:
		pn_put32(main, p->xid);
		pn_put16(main + 4, c->offnum);
		main[6] = 0;
		main[7] = c->kind == PN_REC_HEAP_LOCK ? 0x01
						      : 0x00; /* XLH_LOCK_ALL_FROZEN_CLEARED */
		rec->main_len = 8;
		return c->kind;
	case PN_REC_HEAP2_PRUNE: {
		uint32_t n = 2u * c->nredirected + c->ndead + c->nunused;
		PN_ASSERT(n <= 4000);
		pn_put32(main, p->xid); /* latestRemovedXid */
		pn_put16(main + 4, c->nredirected);
		pn_put16(main + 6, c->ndead);
		rec->main_len = 8;
		for (uint32_t i = 0; i < n; i++)
			pn_put16(data0 + 2 * i, (uint16_t)(i + 1));
		b->data_len = (uint16_t)(2 * n);
		return PN_REC_HEAP2_PRUNE;
	}
	case PN_REC_BTREE_INSERT_LEAF: {
		const uint8_t *page = pn_frame_page(bk->cl->buf, p->chg_frames[0]);
		pn_put16(main, pn_btree_insert_offnum(page, c->key));
		rec->main_len = 2;
		pn_itup_make(data0, c->itup_len, c->key, c->heap_blk, c->heap_off);
		b->data_len = c->itup_len;
		return PN_REC_BTREE_INSERT_LEAF;
	}
	case PN_REC_BTREE_SPLIT_R: return build_split(bk, p, rec, main, data0, data1);
	default: PN_ASSERT(!"a change of no kind"); return PN_REC_COUNT;
	}
}

/* INSERT for PN_OP_CHANGE: every block changed, one record, shifts published (5.1). */
static void do_change_blocks(struct pn_backends *bk, struct pn_proc *p)
{
	struct pn_change *c = &p->chg;
	uint8_t main[16], data0[64 + 8192], data1[32768 + 64];
	PN_ASSERT(bk->cl->page_size <= 32768 && c->t_len <= 8192 && c->change_len <= 8192);
	struct pn_wal_record rec = {.xid = p->xid, .nblocks = c->nblocks};
	for (uint32_t i = 0; i < c->nblocks; i++) {
		rec.blocks[i].blkno = c->pages[i];
		rec.blocks[i].will_init = (p->chg_init >> i) & 1;
	}
	rec.blocks[0].data = data0;
	enum pn_rec kind = build_change(bk, p, &rec, main, data0, data1);
	pn_rec_ids(kind, &rec.rmid, &rec.info);
	struct pn_client cl = pn_client_of(bk->cl, p);
	for (uint32_t i = 0; i < c->nblocks; i++) {
		struct pn_wal_block *b = &rec.blocks[i];
		uint8_t *page = pn_frame_page(bk->cl->buf, p->chg_frames[i]);
		if (!pn_redo_apply(page, bk->cl->page_size, &rec, b))
			PN_ASSERT(!"a record that does not fit its page");
		if (b->will_init && bk->cl->ops->page_inited)
			bk->cl->ops->page_inited(bk->cl->state, c->pages[i]);
		pn_client_mark(&cl, b, c->pages[i], page, (p->chg_image >> i) & 1, false,
			       (p->chg_shift >> i) & 1);
	}
	/* counted as built: l3/l4's assemble (a shifted block's) may still change the record */
	bool shifted = false;
	for (uint32_t i = 0; i < c->nblocks; i++)
		shifted |= rec.blocks[i].has_shift;
	uint32_t built = shifted ? pn_wal_record_size(&rec, bk->cl->page_size) : 0;
	pn_client_insert(&cl, &rec, kind, p->chg_frames);
	p->txn_wal += shifted ? built : pn_wal_last_len(bk->cl->wal);
	bk->cl->m->logical_bytes_changed += c->kind == PN_REC_HEAP_HOT_UPDATE ? c->change_len
					    : c->t_len                        ? c->t_len
									      : c->itup_len;
	if (bk->cl->ops->change_done)
		bk->cl->ops->change_done(bk->cl->state, &cl, c);
}

static bool pin_change(struct pn_backends *bk, struct pn_proc *p)
{
	struct pn_change *c = &p->chg;
	while (p->chg_pinned < c->nblocks) {
		uint32_t i = p->chg_pinned;
		bool fresh = c->kind == PN_REC_BTREE_SPLIT_R && i == 1; /* the new right page */
		uint32_t fi = pn_buf_pin(bk->cl->buf, c->pages[i], p->id, fresh);
		if (fi == PN_NO_FRAME)
			return false;
		p->chg_frames[i] = fi;
		p->chg_pinned++;
	}
	return true;
}

static void release_change(struct pn_backends *bk, struct pn_proc *p)
{
	for (uint32_t i = 0; i < p->chg_pinned; i++) {
		pn_buf_unlock(bk->cl->buf, p->chg_frames[i]);
		pn_buf_unpin(bk->cl->buf, p->chg_frames[i]);
	}
	p->chg_pinned = 0;
}

static void txn_begin_write(struct pn_backends *bk, struct pn_proc *p)
{
	if (p->xid == 0)
		p->xid = ++*bk->next_xid;
	p->ops_in_txn++;
}

static void txn_end(struct pn_backends *bk, struct pn_proc *p)
{
	if (bk->cl->ops->txn_name && bk->cl->ops->txn_name(p->txn_type) != NULL) {
		bk->cl->m->txn_type_count[p->txn_type]++;
		bk->cl->m->txn_type_wal[p->txn_type] += p->txn_wal;
	}
	p->txn_type = -1;
	p->txn_wal = 0;
	p->xid = 0;
	p->ops_in_txn = 0;
	bk->cl->m->transactions++;
}

static void acknowledge(struct pn_backends *bk, struct pn_proc *p, pn_lsn lsn)
{
	if (lsn > pn_wal_flushed(bk->cl->wal))
		pn_svc_violation(
			bk->cl->svc, PN_VIOL_DURABILITY, UINT32_MAX,
			"commit of xid %u acknowledged at LSN %llX, WAL flushed to %llX (R2)",
			p->xid, (unsigned long long)lsn,
			(unsigned long long)pn_wal_flushed(bk->cl->wal));
	if (bk->nacked == bk->acked_cap) {
		PN_ASSERT(!"acknowledged-commit log full");
	}
	bk->acked_xids[bk->nacked] = p->xid;
	bk->acked_lsns[bk->nacked] = lsn;
	bk->nacked++;
	uint64_t lat = bk->cl->svc->env.now_ns(bk->cl->svc->env.ctx) - p->commit_start_ns;
	if (bk->nlat < bk->lat_cap)
		bk->latencies[bk->nlat++] = lat;
	bk->cl->m->commits++;
	txn_end(bk, p);
	pn_ckpt_commit(bk->cl->ckpt);
}

static void commit(struct pn_backends *bk, struct pn_proc *p)
{
	p->commit_start_ns = bk->cl->svc->env.now_ns(bk->cl->svc->env.ctx);
	if (p->xid == 0) { /* read-only: nothing to log */
		txn_end(bk, p);
		return;
	}
	uint8_t main[8];
	pn_put64(main, p->commit_start_ns); /* xact_time */
	struct pn_wal_record rec = {.xid = p->xid, .main_data = main, .main_len = 8};
	p->txn_wal += pn_wal_record_size(&rec, bk->cl->page_size);
	p->wait_lsn = pn_wal_insert(bk->cl->wal, &rec, PN_REC_XACT_COMMIT, NULL);
	pn_wal_rewait(bk->cl->wal, p->id, p->wait_lsn);
	if (bk->cl->sc->protocol.mutations & PN_MUT_ACK_BEFORE_FLUSH) {
		acknowledge(bk, p, p->wait_lsn);
		return;
	}
	pn_backend_set_state(p, PN_B_COMMIT_WAIT);
}

static void abort_txn(struct pn_backends *bk, struct pn_proc *p)
{
	if (p->xid) {
		struct pn_wal_record rec = {.xid = p->xid};
		uint8_t main[8] = {0};
		rec.main_data = main;
		rec.main_len = 8;
		pn_wal_insert(bk->cl->wal, &rec, PN_REC_XACT_ABORT, NULL);
		bk->cl->m->aborts++;
	}
	txn_end(bk, p);
}

static bool needs_page(enum pn_op op)
{
	return op == PN_OP_UPDATE || op == PN_OP_HINT || op == PN_OP_VACUUM || op == PN_OP_DEDUP ||
	       op == PN_OP_SLRU_SET || op == PN_OP_CHANGE || client_op(op);
}

static void finish_op(struct pn_backends *bk, struct pn_proc *p);

/* legal[from][to]: procs.h's diagram; the startup process (recovery.c) goes DONE --> NEXT
 * --> WAIT_CKPT --> DONE, the backends NEXT --> DONE when recovery begins. */
static const bool legal[PN_B_COUNT][PN_B_COUNT] = {
	[PN_B_NEXT] = {[PN_B_NEXT] = true,
		       [PN_B_PIN] = true,
		       [PN_B_COMMIT_WAIT] = true,
		       [PN_B_WAIT_CKPT] = true,
		       [PN_B_EVICT_WAIT] = true,
		       [PN_B_DONE] = true},
	[PN_B_PIN] = {[PN_B_DECIDE] = true},
	[PN_B_DECIDE] = {[PN_B_INSERT] = true},
	[PN_B_INSERT] = {[PN_B_NEXT] = true, [PN_B_PROTO] = true},
	[PN_B_PROTO] = {[PN_B_NEXT] = true},
	[PN_B_COMMIT_WAIT] = {[PN_B_NEXT] = true},
	[PN_B_WAIT_CKPT] = {[PN_B_NEXT] = true, [PN_B_DONE] = true},
	[PN_B_EVICT_WAIT] = {[PN_B_NEXT] = true},
	[PN_B_DONE] = {[PN_B_NEXT] = true},
};

void pn_backend_set_state(struct pn_proc *p, enum pn_bstate to)
{
	PN_ASSERT(p->state < PN_B_COUNT);
	PN_ASSERT(to < PN_B_COUNT);
	PN_ASSERT(legal[p->state][to]);
	p->state = to;
}

/* NEXT: take the next operation and start it. */
static void start_op(struct pn_backends *bk, struct pn_proc *p)
{
	enum pn_client_next n = pn_client_next(bk->cl, p, &p->op);
	if (n == PN_CLIENT_DONE) {
		pn_backend_set_state(p, PN_B_DONE);
		return;
	}
	if (n == PN_CLIENT_WAIT)
		return; /* woken when there is something */
	p->hold = p->op.op == PN_OP_UPDATE_HOLD;
	p->extended = false;
	if (p->hold)
		p->op.op = PN_OP_UPDATE;
	if (needs_page(p->op.op)) {
		if (p->op.op != PN_OP_HINT && p->op.op != PN_OP_VACUUM_PAGE) /* VACUUM: no xid */
			txn_begin_write(bk, p);
		pn_backend_set_state(p, PN_B_PIN);
		pn_svc_wake(bk->cl->svc, p->id, STEP_NS);
		return;
	}
	switch (p->op.op) {
	case PN_OP_COMMIT:
		commit(bk, p);
		if (p->state != PN_B_COMMIT_WAIT)
			finish_op(bk,
				  p); /* read-only, or acknowledged at once (ack_before_flush) */
		else
			pn_svc_wake(bk->cl->svc, p->id, STEP_NS);
		return;
	case PN_OP_ABORT:
		abort_txn(bk, p);
		finish_op(bk, p);
		return;
	case PN_OP_CHECKPOINT:
	case PN_OP_CHECKPOINT_BEGIN:
	case PN_OP_CHECKPOINT_EPOCH: /* l3/l4: a begin that pauses before selection */
		bk->cl->ckpt->pause_next = p->op.op == PN_OP_CHECKPOINT_BEGIN;
		bk->cl->ckpt->pause_select_next = p->op.op == PN_OP_CHECKPOINT_EPOCH;
		if (p->op.op == PN_OP_CHECKPOINT_EPOCH)
			p->op.op = PN_OP_CHECKPOINT_BEGIN; /* finished once begun */
		p->ckpt_wait_seq = bk->cl->ckpt->seq_begun + 1;
		pn_ckpt_request(bk->cl->ckpt, PN_CKPT_REQUEST, true);
		pn_backend_set_state(p, PN_B_WAIT_CKPT);
		break;
	case PN_OP_CHECKPOINT_END:
		p->op.op = PN_OP_CHECKPOINT; /* wait for completion below */
		p->ckpt_wait_seq = bk->cl->ckpt->seq_begun;
		pn_ckpt_release_pause(bk->cl->ckpt);
		pn_backend_set_state(p, PN_B_WAIT_CKPT);
		break;
	case PN_OP_EVICT:
	case PN_OP_TRUNCATE: pn_backend_set_state(p, PN_B_EVICT_WAIT); break;
	case PN_OP_RELEASE: /* nothing held (taken by a HELD backend otherwise) */
		finish_op(bk, p);
		return;
	case PN_OP_CHECKPOINT_RESUME:
		pn_ckpt_release_pause(bk->cl->ckpt);
		p->ckpt_wait_seq = bk->cl->ckpt->seq_begun;
		pn_backend_set_state(p, PN_B_WAIT_CKPT);
		break;
	default: PN_ASSERT(!"unknown op");
	}
	pn_svc_wake(bk->cl->svc, p->id, STEP_NS);
}

/* The workload's step_done (a script's next step may start). */
static void step_done(struct pn_backends *bk, struct pn_proc *p)
{
	if (bk->cl->ops->step_done) {
		struct pn_client c = pn_client_of(bk->cl, p);
		bk->cl->ops->step_done(bk->cl->state, &c);
	}
}

static void finish_op(struct pn_backends *bk, struct pn_proc *p)
{
	pn_backend_set_state(p, PN_B_NEXT);
	step_done(bk, p);
	pn_svc_wake(bk->cl->svc, p->id, STEP_NS);
}

#define OP_FRAMES_MAX (PN_CHANGE_MAX_BLOCKS + 3) /* a change's blocks, or a page and 2 extra */

/* The frames the op changes: a change's blocks, or its page and a workload op's others. */
static uint32_t op_frames(const struct pn_proc *p, uint32_t *out)
{
	uint32_t n = 0;
	if (p->op.op == PN_OP_CHANGE) {
		for (uint32_t i = 0; i < p->chg.nblocks; i++)
			out[n++] = p->chg_frames[i];
		return n;
	}
	out[n++] = p->frame;
	for (uint32_t i = 0; i < p->nextra; i++)
		out[n++] = p->extra_frames[i];
	PN_ASSERT(n <= OP_FRAMES_MAX);
	return n;
}

/* Another backend holds a frame's content lock, or a writer holds the frame while it waits
 * for its WAL flush (bufpool.c B7): DECIDE waits for both alike. */
static bool frames_busy(const struct pn_backends *bk, const struct pn_proc *p)
{
	uint32_t frames[OP_FRAMES_MAX];
	bool locked = false, held = false;
	for (uint32_t i = 0, n = op_frames(p, frames); i < n; i++) {
		locked |= pn_buf_frame(bk->cl->buf, frames[i])->locked;
		held |= pn_buf_frame(bk->cl->buf, frames[i])->held;
	}
	PN_TESTCASE("a change waits for a frame held across a WAL flush (B7)", held);
	return locked || held;
}

static void lock_frames(struct pn_backends *bk, const struct pn_proc *p)
{
	uint32_t frames[OP_FRAMES_MAX];
	for (uint32_t i = 0, n = op_frames(p, frames); i < n; i++) {
		pn_buf_lock(bk->cl->buf, frames[i]); /* asserts it is pinned and not held */
	}
}

static void step_decide(struct pn_backends *bk, struct pn_proc *p)
{
	if (frames_busy(bk, p)) {
		pn_svc_wake(bk->cl->svc, p->id, POLL_NS);
		return;
	}
	enum pn_wal_room room = pn_wal_room(bk->cl->wal, 3 * bk->cl->page_size + 8192);
	if (room != PN_WAL_ROOM_OK) {
		/* W5: write the ring out and go on; W4: only a checkpoint frees segments */
		bk->cl->m->stalls_wal++;
		pn_wal_start_flush(bk->cl->wal, pn_wal_insert_lsn(bk->cl->wal));
		if (room == PN_WAL_ROOM_SEGMENTS && !pn_ckpt_active(bk->cl->ckpt))
			pn_ckpt_request(bk->cl->ckpt, PN_CKPT_WAL, false);
		pn_svc_wake(bk->cl->svc, p->id, POLL_NS * 5);
		return;
	}
	lock_frames(bk, p);
	if (p->op.op == PN_OP_CHANGE)
		decide_change(bk, p, pn_wal_redo(bk->cl->wal));
	else
		decide(bk, p, pn_wal_redo(bk->cl->wal));
	pn_backend_set_state(p, PN_B_INSERT);
	pn_svc_wake(bk->cl->svc, p->id, STEP_NS);
}

static void step_insert(struct pn_backends *bk, struct pn_proc *p)
{
	bool moved = pn_wal_redo(bk->cl->wal) != p->decided_redo;
	PN_TESTCASE("redo pointer moved between decide and insert", moved);
	bool recheck = moved && (!bk->cl->proto->write.recheck ||
				 bk->cl->proto->write.recheck(bk->cl->pctx));
	if (p->op.op == PN_OP_CHANGE) {
		if (recheck)
			decide_change(bk, p, pn_wal_redo(bk->cl->wal));
		do_change_blocks(bk, p);
		release_change(bk, p);
		finish_op(bk, p);
		return;
	}
	if (recheck)
		decide(bk, p, pn_wal_redo(bk->cl->wal)); /* XLogInsertRecord's recheck */
	do_change(bk, p);
	if (bk->cl->proto->write.after_insert &&
	    bk->cl->proto->write.after_insert(bk->cl->pctx, p, p->hold)) {
		/* l3/l4: publication is the next step; an update_hold lets the script go on */
		pn_backend_set_state(p, PN_B_PROTO);
		if (p->hold)
			step_done(bk, p);
		else
			pn_svc_wake(bk->cl->svc, p->id, STEP_NS);
		return;
	}
	pn_buf_unlock(bk->cl->buf, p->frame);
	pn_buf_unpin(bk->cl->buf, p->frame);
	finish_op(bk, p);
}

static void step_evict(struct pn_backends *bk, struct pn_proc *p)
{
	uint32_t fi = bk->cl->buf->page_frame[p->op.page];
	if (fi == PN_NO_FRAME || (!pn_buf_frame(bk->cl->buf, fi)->dirty &&
				  pn_buf_frame(bk->cl->buf, fi)->io_writes == 0)) {
		finish_op(bk, p);
		return;
	}
	if (pn_buf_frame(bk->cl->buf, fi)->io_writes) {
		pn_svc_wake(bk->cl->svc, p->id, POLL_NS);
		return;
	}
	enum pn_write_result w = pn_buf_write(bk->cl->buf, fi, PN_WHY_EVICT, p->id, -1, NULL);
	if (w == PN_WRITE_BUSY)
		pn_svc_wake(bk->cl->svc, p->id, POLL_NS);
	else if (w == PN_WRITE_NONE)
		finish_op(bk, p);
}

/* RelationTruncate: the Storage/TRUNCATE record, then DropRelationBuffers (waits while a
 * frame of a truncated page is busy), then the store's size and slot reset and the row's
 * hook. No WAL flush here: the row orders its selector write after the record (or not:
 * truncate_reset_no_wal); the file's size is the control file's (ckpt.c). */
static void step_truncate(struct pn_backends *bk, struct pn_proc *p)
{
	const struct pn_client_handles *h = bk->cl;
	uint32_t n = p->op.page, old = h->store->nblocks;
	PN_ASSERT(p->op.op == PN_OP_TRUNCATE);
	PN_ASSERT(p->state == PN_B_EVICT_WAIT);
	for (uint32_t pg = n; pg < old; pg++) {
		uint32_t fi = pn_buf_frame_of(h->buf, pg);
		if (fi != PN_NO_FRAME && !pn_buf_idle(h->buf, fi)) {
			pn_svc_wake(h->svc, p->id, POLL_NS);
			return;
		}
	}
	if (n < old) {
		uint8_t main[PN_SMGR_TRUNCATE_BYTES];
		pn_smgr_truncate_encode(n, main);
		struct pn_wal_record rec = {.main_data = main, .main_len = sizeof(main)};
		pn_lsn lsn = pn_wal_insert(h->wal, &rec, PN_REC_SMGR_TRUNCATE, NULL);
		for (uint32_t pg = n; pg < old; pg++)
			PN_ASSERT(pn_buf_drop(h->buf, pg));
		pn_store_truncate(h->store, n);
		if (h->proto->write.truncated)
			h->proto->write.truncated(h->pctx, n, old, lsn);
	}
	finish_op(bk, p);
}

void pn_backend_step(struct pn_backends *bk, struct pn_proc *p)
{
	switch (p->state) {
	case PN_B_NEXT: start_op(bk, p); break;
	case PN_B_PIN: {
		if (p->op.op == PN_OP_CHANGE) {
			if (!pin_change(bk, p))
				return; /* woken when the read (or a victim's write) completes */
			pn_backend_set_state(p, PN_B_DECIDE);
			step_decide(bk, p);
			break;
		}
		if (!pn_client_pin_extra(bk->cl, p)) /* a workload op's other pages first */
			return;
		uint32_t pg = op_page(bk, &p->op);
		bool extend = !pn_store_exists(bk->cl->store, pg); /* smgrextend: a zero page */
		uint32_t fi = pn_buf_pin(bk->cl->buf, pg, p->id, extend);
		if (fi == PN_NO_FRAME)
			return; /* woken when the read or the victim's write completes */
		p->frame = fi;
		if (extend) { /* the table's new page, as the workload lays one out */
			pn_client_initial_page(bk->cl, pg, pn_frame_page(bk->cl->buf, fi));
			pn_store_extend(bk->cl->store, pg);
			p->extended = true;
		}
		pn_backend_set_state(p, PN_B_DECIDE);
		step_decide(bk, p);
		break;
	}
	case PN_B_DECIDE: step_decide(bk, p); break;
	case PN_B_INSERT: step_insert(bk, p); break;
	case PN_B_COMMIT_WAIT:
		if (pn_wal_flush_request(bk->cl->wal, p->wait_lsn, p->id)) {
			acknowledge(bk, p, p->wait_lsn);
			finish_op(bk, p);
		}
		break;
	case PN_B_WAIT_CKPT: {
		bool begun = bk->cl->ckpt->seq_begun >= p->ckpt_wait_seq;
		bool ok = p->op.op == PN_OP_CHECKPOINT
				  ? bk->cl->ckpt->seq_done >= p->ckpt_wait_seq
				  : begun && (!bk->cl->proto->write.script_reached ||
					      bk->cl->proto->write.script_reached(
						      bk->cl->pctx, p->ckpt_wait_seq,
						      p->op.op == PN_OP_CHECKPOINT_RESUME));
		if (ok)
			finish_op(bk, p);
		else if (begun && p->op.op != PN_OP_CHECKPOINT)
			pn_svc_wake(bk->cl->svc, p->id,
				    POLL_NS); /* l3/l4: until it reaches its next wait */
		break;
	}
	case PN_B_EVICT_WAIT:
		if (p->op.op == PN_OP_TRUNCATE)
			step_truncate(bk, p);
		else
			step_evict(bk, p);
		break;
	case PN_B_PROTO:
		PN_ASSERT(bk->cl->proto->write.proc_step != NULL);
		if (!bk->cl->proto->write.proc_step(bk->cl->pctx, p))
			break; /* woken when it can go on (a hold: its release is next) */
		pn_buf_unlock(bk->cl->buf, p->frame);
		pn_buf_unpin(bk->cl->buf, p->frame);
		finish_op(bk, p);
		break;
	default: break;
	}
}

void pn_backends_bind(struct pn_backends *bk, const struct pn_backend_handles *h)
{
	PN_ASSERT(h->cl != NULL && h->cl->sc != NULL);
	PN_ASSERT(h->procs != NULL && h->next_xid != NULL);
	PN_ASSERT(h->heap_pages + h->slru_pages == h->cl->pages);
	bk->cl = h->cl;
	bk->procs = h->procs;
	bk->next_xid = h->next_xid;
	bk->heap_pages = h->heap_pages;
	bk->slru_pages = h->slru_pages;
}

bool pn_backends_init(struct pn_backends *bk, uint64_t commits)
{
	PN_ASSERT(bk->acked_xids == NULL);
	PN_ASSERT(bk->latencies == NULL);
	bk->acked_cap = commits + 16;
	bk->lat_cap = bk->acked_cap;
	bk->acked_xids = malloc(sizeof(uint32_t) * bk->acked_cap);
	bk->acked_lsns = malloc(sizeof(pn_lsn) * bk->acked_cap);
	bk->latencies = malloc(sizeof(uint64_t) * bk->lat_cap);
	return bk->acked_xids && bk->acked_lsns && bk->latencies;
}

void pn_backends_free(struct pn_backends *bk)
{
	free(bk->acked_xids);
	free(bk->acked_lsns);
	free(bk->latencies);
	*bk = (struct pn_backends){0};
}

void pn_backends_acks(const struct pn_backends *bk, struct pn_acks_view *out)
{
	PN_ASSERT(bk->nacked <= bk->acked_cap);
	PN_ASSERT(bk->nlat <= bk->nacked);
	*out = (struct pn_acks_view){.xids = bk->acked_xids,
				     .lsns = bk->acked_lsns,
				     .n = bk->nacked,
				     .latencies = bk->latencies,
				     .nlat = bk->nlat};
}

void pn_backends_drain(struct pn_backends *bk, pn_ack_fn fn, void *arg)
{
	PN_ASSERT(bk->nacked <= bk->acked_cap);
	PN_ASSERT(bk->nlat <= bk->nacked);
	for (uint64_t i = 0; i < bk->nacked && fn; i++)
		fn(arg, bk->acked_xids[i], bk->acked_lsns[i], i < bk->nlat ? bk->latencies[i] : 0);
	bk->nacked = bk->nlat = 0;
}

static void swap_u64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;
	*a = *b;
	*b = t;
}

/* Reorders a[lo, hi) so that a[k] holds the value it would hold sorted, with nothing larger
 * before it and nothing smaller after it (lo <= k < hi): Hoare's selection, the pivot the
 * median of the first, middle and last, O(n) expected. */
static void select_u64(uint64_t *a, size_t lo, size_t hi, size_t k)
{
	PN_ASSERT(lo <= k && k < hi);
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, last = hi - 1;
		if (a[mid] < a[lo])
			swap_u64(&a[mid], &a[lo]);
		if (a[last] < a[lo])
			swap_u64(&a[last], &a[lo]);
		if (a[last] < a[mid])
			swap_u64(&a[last], &a[mid]);
		uint64_t pivot = a[mid];
		size_t i = lo, j = last;
		while (i <= j) { /* a[lo] <= pivot <= a[last]: neither scan leaves the range */
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				swap_u64(&a[i], &a[j]);
				i++;
				j--;
			}
		}
		/* now a[lo, j] <= pivot <= a[i, hi), and a[j + 1, i) == pivot */
		if (k <= j)
			hi = j + 1;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* The latencies' p50, p99 and max, as a sort would give them. The latencies are reordered
 * (selected, not sorted: the end of a run is their one reader). */
bool pn_backends_latency(struct pn_backends *bk, uint64_t *p50, uint64_t *p99, uint64_t *max)
{
	PN_ASSERT(bk->nlat <= bk->lat_cap);
	PN_ASSERT(p50 && p99);
	PN_ASSERT(max != NULL);
	if (bk->nlat == 0)
		return false;
	uint64_t *a = bk->latencies;
	size_t n = bk->nlat, k50 = n / 2, k99 = (n * 99) / 100;
	select_u64(a, 0, n, k99);
	if (k50 < k99) /* a[0, k99) holds the k99 smallest */
		select_u64(a, 0, k99, k50);
	*p50 = a[k50];
	*p99 = a[k99];
	*max = a[k99];
	for (size_t i = k99 + 1; i < n; i++)
		*max = PN_MAX(*max, a[i]);
	return true;
}

void pn_backend_check(const struct pn_backends *bk)
{
	PN_ASSERT(bk->nacked <= bk->acked_cap);
	PN_ASSERT(bk->nlat <= bk->nacked);
	for (uint32_t i = 0; i < bk->cl->nbackends; i++) {
		const struct pn_proc *p = &bk->procs[i];
		PN_ASSERT(p->kind == PN_PROC_BACKEND);
		PN_ASSERT(p->state < PN_B_COUNT);
		bool holds = p->state == PN_B_DECIDE || p->state == PN_B_INSERT ||
			     p->state == PN_B_PROTO;
		if (!holds || p->op.op == PN_OP_CHANGE)
			continue;
		/* from the pin to the end of the op its page stays pinned (and, after DECIDE
		 * took the content lock, locked) */
		PN_ASSERT(p->frame < bk->cl->buf->nframes);
		PN_ASSERT(pn_buf_frame(bk->cl->buf, p->frame)->pins > 0);
		PN_ASSERT(p->state == PN_B_DECIDE || pn_buf_frame(bk->cl->buf, p->frame)->locked);
	}
}

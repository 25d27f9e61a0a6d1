/*
 * backend.c: client backends (engine layer). State diagram in engine.h (enum pn_bstate).
 *
 * A change to a page is three steps, so that a checkpoint's begin can fall between them
 * (the races of seed 000 section 5 must be reachable for the checker to see them):
 *   PIN     find or read the page (eviction and WAL flush on the way);
 *   DECIDE  take the content lock, read RedoRecPtr, decide image (fpw) or shift (umbra),
 *           as XLogRecordAssemble() does with the value GetFullPageWriteInfo() gave it;
 *   INSERT  recheck RedoRecPtr (XLogInsertRecord's recheck; the shift_split mutant skips
 *           it) and, in one step: change the page, mark it dirty, insert the record, stamp
 *           the page LSN, publish the shift (5.1: the shift and its record are atomic with
 *           respect to the redo pointer), unlock.
 * A commit inserts its record and waits for the WAL flush before it is acknowledged (R2).
 */
#include "engine.h"

#include <string.h>

#define STEP_NS 2000u
#define POLL_NS 20000u

/* The seed workloads' ops, changed by their own functions (src/wl_vacuum.c, wl_btree.c). */
static bool wl_op(enum pn_op op)
{
	return op == PN_OP_VACUUM_PAGE || op == PN_OP_BT_INSERT || op == PN_OP_BT_SPLIT;
}

static bool hint_logged(const struct pn_engine *e)
{
	return e->sc->protocol.checksums || e->sc->protocol.wal_log_hints;
}

static uint32_t op_page(const struct pn_engine *e, const struct pn_step *op)
{
	if (op->op == PN_OP_SLRU_SET)
		return e->heap_pages + pn_slru_page_of(op->xid, e->page_size,
						       e->sc->protocol.slru_headers, e->slru_pages);
	return op->page;
}

/* The image / shift decision for the op against redo pointer `redo`. */
static void decide(struct pn_engine *e, struct pn_proc *p, pn_lsn redo)
{
	const struct pn_scenario *sc = e->sc;
	uint8_t *page = pn_frame_page(e, p->frame);
	uint32_t pg = op_page(e, &p->op);
	bool slru = pn_store_is_slru(e, pg);
	bool before_redo = pn_page_lsn(page) <= redo;
	enum pn_mode mode = sc->protocol.mode;
	uint32_t mut = sc->protocol.mutations;
	p->decided_redo = redo;
	p->decided_image = p->decided_shift = false;
	if (slru) {
		p->decided_image = sc->protocol.slru_headers && before_redo && mode != PN_MODE_NOFPW &&
				   !(mut & PN_MUT_SLRU_HEADER_UNPROTECTED);
		return;
	}
	if (p->op.op == PN_OP_HINT) {
		bool fpi = hint_logged(e) && before_redo && !(mut & PN_MUT_HINT_NO_FPI) &&
			   (mode == PN_MODE_FPW || mode == PN_MODE_UMBRA);
		p->decided_image = fpi;
		p->decided_shift = fpi && mode == PN_MODE_UMBRA;
		return;
	}
	if (p->op.op == PN_OP_DEDUP && (mut & PN_MUT_DEDUP_NO_IMAGE))
		return; /* REGBUF_NO_IMAGE: neither image nor shift */
	if (mode == PN_MODE_FPW)
		p->decided_image = before_redo && !(mut & PN_MUT_FPW_OFF);
	else if (mode == PN_MODE_UMBRA)
		p->decided_shift = before_redo;
}

static uint32_t change_bytes(const struct pn_engine *e, enum pn_op op, uint32_t nitems)
{
	switch (op) {
	case PN_OP_UPDATE: return 4;
	case PN_OP_VACUUM: return 2 * nitems;
	case PN_OP_DEDUP: return nitems * (PN_TUPLE_LEN - PN_TUPLE_HEADER);
	default: return 1;
	}
}

/* Builds the op's record into rec (main data into `main`, block data into `data`). */
static enum pn_rec build_record(struct pn_engine *e, struct pn_proc *p, struct pn_wal_record *rec,
				uint8_t *main, uint8_t *data, uint32_t nitems)
{
	struct pn_wal_block *b = &rec->blocks[0];
	rec->nblocks = 1;
	b->blkno = op_page(e, &p->op);
	switch (p->op.op) {
	case PN_OP_UPDATE:
		pn_put32(main, p->xid);                          /* old_xmax */
		pn_put16(main + 4, (uint16_t)(p->item + 1));     /* old_offnum */
		main[6] = 0;                                     /* old_infobits_set */
		main[7] = 0;                                     /* flags */
		pn_put32(main + 8, 0);                           /* new_xmax */
		pn_put16(main + 12, (uint16_t)(p->item + 1));    /* new_offnum */
		rec->main_len = 14;
		pn_put16(data, 1);                               /* xl_heap_header t_infomask2 */
		pn_put16(data + 2, 0x0800);                      /* t_infomask: HEAP_XMAX_INVALID */
		data[4] = PN_TUPLE_HEADER;                       /* t_hoff */
		pn_put32(data + 5, (uint32_t)(p->xid * 2654435761u) ^ p->ops_in_txn);
		b->data_len = 9;
		rec->main_data = main;
		b->data = data;
		return PN_REC_HEAP_HOT_UPDATE;
	case PN_OP_VACUUM:
		pn_put32(main, p->xid);                          /* cutoff xid */
		pn_put16(main + 4, (uint16_t)nitems);
		for (uint32_t i = 0; i < nitems; i++) {
			uint8_t *f = main + 6 + 12 * i;
			memset(f, 0, 12);
			pn_put16(f, (uint16_t)(i + 1));
			pn_put16(f + 8, PN_HINT_FROZEN);
		}
		rec->main_len = 6 + 12 * nitems;
		rec->main_data = main;
		return PN_REC_HEAP2_FREEZE_PAGE;
	case PN_OP_DEDUP:
		pn_put16(main, 1);                               /* nintervals */
		rec->main_len = 2;
		rec->main_data = main;
		pn_put16(data, 1);                               /* baseoff */
		pn_put16(data + 2, (uint16_t)nitems);            /* nitems */
		data[0] = (uint8_t)(p->xid | 1);
		b->data = data;
		b->data_len = 4;
		return PN_REC_BTREE_DEDUP;
	case PN_OP_SLRU_SET:
		pn_put32(main, p->op.xid);
		main[4] = e->sc->protocol.slru_headers;
		rec->main_len = 5;
		rec->main_data = main;
		return PN_REC_CLOG_SET;
	default: /* hint with FPI_FOR_HINT: the image alone */
		return PN_REC_XLOG_FPI_FOR_HINT;
	}
}

void pn_backend_publish_shift(struct pn_engine *e, uint32_t page, uint32_t target)
{
	e->cur[page] = (uint8_t)target;
	e->m.shifts++;
	/* R4: a page changed after the completed checkpoint's redo is off its baseline. */
	if (target == e->base_done[page])
		pn_engine_violation(e, PN_VIOL_MAPPING, page,
				    "page %u shifted onto slot %u, its recovery baseline (R4)",
				    page, target);
}

/* INSERT: the change, its record and the shift, in one step (rule 5.1). */
static void do_change(struct pn_engine *e, struct pn_proc *p)
{
	struct pn_frame *f = &e->frames[p->frame];
	uint8_t *page = pn_frame_page(e, p->frame);
	uint32_t pg = op_page(e, &p->op);
	uint32_t nitems = pn_store_is_slru(e, pg) ? 0 : pn_page_nitems(page);
	uint8_t main[6 + 12 * 512], data[16];
	struct pn_wal_record rec = {.xid = p->xid};
	if (wl_op(p->op.op)) { /* workload ops: their own records (src/wl_*.c) */
		if (p->op.op == PN_OP_VACUUM_PAGE)
			pn_wl_vacuum_change(e, p);
		else if (p->op.op == PN_OP_BT_INSERT)
			pn_wl_btree_change(e, p);
		else
			pn_wl_btree_split(e, p);
		pn_wl_unpin_extra(e, p);
		return;
	}
	PN_ASSERT(nitems <= 512);
	p->item = nitems ? (uint32_t)(e->env.random(e->env.ctx) % nitems) : 0;
	bool unlogged_hint = p->op.op == PN_OP_HINT && !p->decided_image;
	if (p->op.op == PN_OP_HINT)
		pn_page_set_hint(page, p->item);
	if (unlogged_hint) {
		if (!f->dirty)
			f->dirty_hint_only = true;
		f->dirty = true;
		f->redirtied |= f->io_writes > 0;
		return;
	}
	enum pn_rec kind = build_record(e, p, &rec, main, data, nitems);
	pn_rec_ids(kind, &rec.rmid, &rec.info);
	struct pn_wal_block *b = &rec.blocks[0];
	if (p->op.op != PN_OP_HINT && !pn_page_apply(page, e->page_size, &rec, b))
		PN_ASSERT(!"a record that does not fit its page");
	if (p->decided_image) {
		b->data = NULL; /* an image replaces the block data (needs_data = !needs_backup) */
		b->data_len = 0;
		b->has_image = b->image_apply = true;
		b->image = page;
		pn_page_hole(page, e->page_size, &b->hole_offset, &b->hole_length);
	}
	uint32_t target = 0;
	if (p->decided_shift) {
		target = pn_store_shift_target(e, pg);
		b->has_shift = true;
		b->shift_source = e->cur[pg];
		b->shift_target = (uint8_t)target;
	}
	f->dirty = true;
	f->dirty_hint_only = false;
	f->redirtied |= f->io_writes > 0;
	pn_lsn end = pn_wal_insert(e, &rec, kind, NULL);
	bool headerless = pn_store_is_slru(e, pg) && !e->sc->protocol.slru_headers;
	if (!headerless)
		pn_page_set_lsn(page, end);
	f->last_lsn = end;
	if (p->decided_shift)
		pn_backend_publish_shift(e, pg, target);
	e->m.logical_bytes_changed += change_bytes(e, p->op.op, nitems);
}

static void txn_begin_write(struct pn_engine *e, struct pn_proc *p)
{
	if (p->xid == 0)
		p->xid = ++e->next_xid;
	p->ops_in_txn++;
}

static void txn_end(struct pn_engine *e, struct pn_proc *p)
{
	p->xid = 0;
	p->ops_in_txn = 0;
	e->m.transactions++;
}

static void acknowledge(struct pn_engine *e, struct pn_proc *p, pn_lsn lsn)
{
	if (lsn > e->wal.flushed)
		pn_engine_violation(e, PN_VIOL_DURABILITY, UINT32_MAX,
				    "commit of xid %u acknowledged at LSN %llX, WAL flushed to %llX (R2)",
				    p->xid, (unsigned long long)lsn, (unsigned long long)e->wal.flushed);
	if (e->nacked == e->acked_cap) {
		PN_ASSERT(!"acknowledged-commit log full");
	}
	e->acked_xids[e->nacked] = p->xid;
	e->acked_lsns[e->nacked] = lsn;
	e->nacked++;
	uint64_t lat = e->env.now_ns(e->env.ctx) - p->commit_start_ns;
	if (e->nlat < e->lat_cap)
		e->latencies[e->nlat++] = lat;
	e->m.commits++;
	txn_end(e, p);
	uint32_t every = e->sc->checkpoint.every_transactions;
	if (every && e->m.commits - e->commits_at_ckpt >= every && !e->ckpt_requested)
		pn_ckpt_request(e, PN_CKPT_XACT, false);
}

static void commit(struct pn_engine *e, struct pn_proc *p)
{
	p->commit_start_ns = e->env.now_ns(e->env.ctx);
	if (p->xid == 0) { /* read-only: nothing to log */
		txn_end(e, p);
		return;
	}
	uint8_t main[8];
	pn_put64(main, p->commit_start_ns); /* xact_time */
	struct pn_wal_record rec = {.xid = p->xid, .main_data = main, .main_len = 8};
	p->wait_lsn = pn_wal_insert(e, &rec, PN_REC_XACT_COMMIT, NULL);
	if (e->sc->protocol.mutations & PN_MUT_ACK_BEFORE_FLUSH) {
		acknowledge(e, p, p->wait_lsn);
		return;
	}
	p->state = PN_B_COMMIT_WAIT;
}

static void abort_txn(struct pn_engine *e, struct pn_proc *p)
{
	if (p->xid) {
		struct pn_wal_record rec = {.xid = p->xid};
		uint8_t main[8] = {0};
		rec.main_data = main;
		rec.main_len = 8;
		pn_wal_insert(e, &rec, PN_REC_XACT_ABORT, NULL);
		e->m.aborts++;
	}
	txn_end(e, p);
}

static bool needs_page(enum pn_op op)
{
	return op == PN_OP_UPDATE || op == PN_OP_HINT || op == PN_OP_VACUUM || op == PN_OP_DEDUP ||
	       op == PN_OP_SLRU_SET || wl_op(op);
}

static void finish_op(struct pn_engine *e, struct pn_proc *p);

/* NEXT: take the next operation and start it. */
static void start_op(struct pn_engine *e, struct pn_proc *p)
{
	enum pn_wl_next n = pn_workload_next(e, p->id, &p->op);
	if (n == PN_WL_DONE) {
		p->state = PN_B_DONE;
		return;
	}
	if (n == PN_WL_WAIT)
		return; /* woken when there is something */
	if (needs_page(p->op.op)) {
		if (p->op.op != PN_OP_HINT && p->op.op != PN_OP_VACUUM_PAGE) /* VACUUM: no xid */
			txn_begin_write(e, p);
		p->state = PN_B_PIN;
		pn_wake(e, p->id, STEP_NS);
		return;
	}
	switch (p->op.op) {
	case PN_OP_COMMIT:
		commit(e, p);
		if (p->state != PN_B_COMMIT_WAIT)
			finish_op(e, p); /* read-only, or acknowledged at once (ack_before_flush) */
		else
			pn_wake(e, p->id, STEP_NS);
		return;
	case PN_OP_ABORT:
		abort_txn(e, p);
		finish_op(e, p);
		return;
	case PN_OP_CHECKPOINT:
	case PN_OP_CHECKPOINT_BEGIN:
		e->ckpt_pause_next = p->op.op == PN_OP_CHECKPOINT_BEGIN;
		p->ckpt_wait_seq = e->ckpt_seq_begun + 1;
		pn_ckpt_request(e, PN_CKPT_REQUEST, true);
		p->state = PN_B_WAIT_CKPT;
		break;
	case PN_OP_CHECKPOINT_END:
		p->op.op = PN_OP_CHECKPOINT; /* wait for completion below */
		p->ckpt_wait_seq = e->ckpt_seq_begun;
		pn_ckpt_release_pause(e);
		p->state = PN_B_WAIT_CKPT;
		break;
	case PN_OP_EVICT:
		p->state = PN_B_EVICT_WAIT;
		break;
	default:
		PN_ASSERT(!"unknown op");
	}
	pn_wake(e, p->id, STEP_NS);
}

static void finish_op(struct pn_engine *e, struct pn_proc *p)
{
	p->state = PN_B_NEXT;
	if (e->sc->workload.kind == PN_WL_SCRIPT)
		pn_workload_step_done(e, p->id);
	pn_wake(e, p->id, STEP_NS);
}

static void step_decide(struct pn_engine *e, struct pn_proc *p)
{
	struct pn_frame *f = &e->frames[p->frame];
	if (f->locked) {
		pn_wake(e, p->id, POLL_NS);
		return;
	}
	if (!pn_wal_has_room(e, 2 * e->page_size + 8192)) {
		e->m.stalls_wal++;
		pn_wal_start_flush(e, pn_wal_insert_lsn(e));
		if (!pn_ckpt_active(e))
			pn_ckpt_request(e, PN_CKPT_WAL, false);
		pn_wake(e, p->id, POLL_NS * 5);
		return;
	}
	f->locked = true;
	decide(e, p, e->wal.redo);
	p->state = PN_B_INSERT;
	pn_wake(e, p->id, STEP_NS);
}

static void step_insert(struct pn_engine *e, struct pn_proc *p)
{
	bool moved = e->wal.redo != p->decided_redo;
	PN_TESTCASE("redo pointer moved between decide and insert", moved);
	if (moved && !(e->sc->protocol.mutations & PN_MUT_SHIFT_SPLIT))
		decide(e, p, e->wal.redo); /* XLogInsertRecord's recheck */
	do_change(e, p);
	e->frames[p->frame].locked = false;
	pn_buf_unpin(e, p->frame);
	finish_op(e, p);
}

static void step_evict(struct pn_engine *e, struct pn_proc *p)
{
	uint32_t fi = e->page_frame[p->op.page];
	if (fi == PN_NO_FRAME || (!e->frames[fi].dirty && e->frames[fi].io_writes == 0)) {
		finish_op(e, p);
		return;
	}
	if (e->frames[fi].io_writes) {
		pn_wake(e, p->id, POLL_NS);
		return;
	}
	enum pn_write_result w = pn_buf_write(e, fi, PN_WHY_EVICT, p->id, -1);
	if (w == PN_WRITE_BUSY)
		pn_wake(e, p->id, POLL_NS);
	else if (w == PN_WRITE_NONE)
		finish_op(e, p);
}

void pn_backend_step(struct pn_engine *e, struct pn_proc *p)
{
	switch (p->state) {
	case PN_B_NEXT: start_op(e, p); break;
	case PN_B_PIN: {
		if (!pn_wl_pin_extra(e, p)) /* a workload op's other pages first */
			return;
		uint32_t fi = pn_buf_pin(e, op_page(e, &p->op), p->id, false);
		if (fi == PN_NO_FRAME)
			return; /* woken when the read or the victim's write completes */
		p->frame = fi;
		p->state = PN_B_DECIDE;
		step_decide(e, p);
		break;
	}
	case PN_B_DECIDE: step_decide(e, p); break;
	case PN_B_INSERT: step_insert(e, p); break;
	case PN_B_COMMIT_WAIT:
		if (pn_wal_flush_request(e, p->wait_lsn, p->id)) {
			acknowledge(e, p, p->wait_lsn);
			finish_op(e, p);
		}
		break;
	case PN_B_WAIT_CKPT: {
		bool begun = e->ckpt_seq_begun >= p->ckpt_wait_seq;
		bool done = e->ckpt_seq_done >= p->ckpt_wait_seq;
		if (p->op.op == PN_OP_CHECKPOINT_BEGIN ? begun : done)
			finish_op(e, p);
		break;
	}
	case PN_B_EVICT_WAIT: step_evict(e, p); break;
	default: break;
	}
}

/*
 * umbra.c: the umbra-prototype row of the protocol table (protocol layer; seed 000's
 * policy, docs/protocol.md section 4), and what the umbra rows share (umbra.h).
 *
 * A heap page lives in one of `generations` slots; its first change after the redo pointer
 * shifts it to a free slot instead of logging an image (store.c's pn_store_shift_target).
 * The checkpoint snapshots the slot map at its begin (each page's baseline), writes that
 * snapshot to the selector file after the data fsync and fsyncs it (R5), and when it has
 * happened the snapshot becomes the recovery baselines (base_done), which no write may hit
 * (R3, store.c) and which no page changed after the redo pointer may stay on (R4, here).
 * Recovery reads the selector area the control file names. Mutants owned here:
 * shift_split (backend.c's recheck), aio_late_bind, early_reclaim, selector_unsynced.
 */
#include "umbra.h"

#include <stdio.h>
#include <string.h>

uint32_t pn_umbra_generations(const struct pn_scenario *sc)
{
	PN_ASSERT(sc->protocol.mode == PN_MODE_UMBRA);
	PN_ASSERT(sc->protocol.generations >= 1);
	return sc->protocol.generations;
}

uint64_t pn_umbra_file_size(const struct pn_proto_ctx *pc, enum pn_file f)
{
	const struct pn_engine *e = pn_proto_engine_const(pc);
	PN_ASSERT(f < PN_FILE_COUNT);
	return f == PN_FILE_SELECTOR ? PN_SELECTOR_AREAS * pn_store_selector_bytes(&e->store) : 0;
}

unsigned pn_umbra_decide(const struct pn_proto_ctx *pc, enum pn_block_use use, bool before_redo)
{
	const struct pn_engine *e = pn_proto_engine_const(pc);
	uint32_t mut = pc->sc->protocol.mutations;
	PN_ASSERT(use <= PN_USE_SLRU);
	switch (use) {
	case PN_USE_SLRU: return pn_protocol_slru_image(pc, before_redo);
	case PN_USE_HINT: {
		bool fpi = before_redo && !(mut & PN_MUT_HINT_NO_FPI);
		/* l4: HINT_DELTA, no image; l3's eligibility excludes a MAIN FPI_FOR_HINT (it
		 * keeps its plain image) */
		return (fpi && !e->proto->hint_delta ? PN_PROTECT_IMAGE : 0) |
		       (fpi && e->sc->protocol.policy != PN_POLICY_L3 ? PN_PROTECT_SHIFT : 0);
	}
	case PN_USE_HINT_BLOCK:
		return before_redo && !(mut & PN_MUT_HINT_NO_FPI)
			       ? PN_PROTECT_IMAGE | PN_PROTECT_SHIFT
			       : 0;
	case PN_USE_DEDUP:
		if (mut & PN_MUT_DEDUP_NO_IMAGE)
			return 0; /* the bug: REGBUF_NO_IMAGE, neither image nor shift */
				  /* fall through */
	case PN_USE_WILL_INIT:    /* no image, but the block still leaves its baseline */
	case PN_USE_CHANGE: return before_redo ? PN_PROTECT_SHIFT : 0;
	}
	return 0;
}

bool pn_umbra_bind_late(const struct pn_proto_ctx *pc, uint32_t page)
{
	const struct pn_engine *e = pn_proto_engine_const(pc);
	/* aio_late_bind: the device offset is looked up when the I/O is dispatched (5.3) */
	return (e->sc->protocol.mutations & PN_MUT_AIO_LATE_BIND) &&
	       !pn_store_is_slru(&e->store, page);
}

bool pn_umbra_refuse_key(struct pn_proto_ctx *pc, const uint32_t at[2], const char *what)
{
	const struct pn_scenario *sc = pc->sc;
	if (at[0]) {
		snprintf(pc->svc->error, sizeof(pc->svc->error), "%s:%u:%u: %s", sc->path, at[0],
			 at[1], what);
		return true;
	}
	return pn_protocol_refuse_publish_steps(pc);
}

/* ---- the prototype ---- */

/* R4 at publication: a page changed after the completed checkpoint's redo is off its
 * baseline. */
static void shifted(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target, pn_lsn lsn)
{
	struct pn_engine *e = pn_proto_engine(pc);
	uint32_t page = pn_buf_frame(&e->buf, frame)->page;
	PN_ASSERT(page < e->heap_pages);
	PN_ASSERT(lsn > 0);
	pn_store_set_slot(&e->store, page, target);
	e->m.shifts++;
	if (target == e->store.base_done[page])
		pn_svc_violation(&e->svc, PN_VIOL_MAPPING, page,
				 "page %u shifted onto slot %u, its recovery baseline (R4)", page,
				 target);
}

static void ckpt_begin(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	struct pn_engine *e = pn_proto_engine(pc);
	PN_ASSERT(run->state == PN_C_WRITING);
	memcpy(run->snapshot, pn_store_slots(&e->store), e->heap_pages);
	if (e->sc->protocol.mutations & PN_MUT_EARLY_RECLAIM)
		pn_store_set_baselines_done(&e->store, pn_store_slots(&e->store),
					    e->ckpt.redo_done); /* the bug: reclaim at begin */
	pn_ckpt_select(&e->ckpt, run);
}

/* After the data fsync: the snapshot into the selector area seq % 3, then its fsync. */
static uint64_t ckpt_durable_step(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	struct pn_engine *e = pn_proto_engine(pc);
	uint32_t len = pn_store_selector_bytes(&e->store);
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	if (run->proto_sub == UC_SELECTOR_FSYNC) {
		pn_ckpt_run_io(&e->ckpt, run, PN_IO_FSYNC, PN_FILE_SELECTOR, 0, NULL, 0);
		return UINT64_MAX;
	}
	PN_ASSERT(run->proto_sub == 0); /* the first sub-state: SELECTOR_WRITE */
	pn_store_encode_selector(&e->store, run->snapshot, run->seq, run->redo, run->selbuf);
	pn_ckpt_run_io(&e->ckpt, run, PN_IO_WRITE, PN_FILE_SELECTOR,
		       (run->seq % PN_SELECTOR_AREAS) * len, run->selbuf, len);
	return UINT64_MAX;
}

static void ckpt_io_done(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	struct pn_engine *e = pn_proto_engine(pc);
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	if (run->proto_sub == UC_SELECTOR_FSYNC ||
	    (e->sc->protocol.mutations & PN_MUT_SELECTOR_UNSYNCED))
		pn_ckpt_set_state(run, PN_C_RECORD);
	else
		run->proto_sub = UC_SELECTOR_FSYNC;
}

static void ckpt_control(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	struct pn_engine *e = pn_proto_engine(pc);
	PN_ASSERT(run->state == PN_C_CONTROL_WRITE);
	pn_store_set_baselines_inflight(&e->store, run->snapshot, run->redo);
}

static void ckpt_end(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	struct pn_engine *e = pn_proto_engine(pc);
	PN_ASSERT(run->seq > 0);
	pn_store_set_baselines_done(&e->store, run->snapshot, run->redo);
}

/* Selector area 0: every baseline slot 0. */
static void format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx)
{
	struct pn_engine *e = pn_proto_engine(pc);
	struct pn_ckpt_run *run = &e->ckpt.runs[0];
	pn_store_encode_selector(&e->store, e->store.base_done, 0, pn_wal_redo(&e->wal),
				 run->selbuf);
	pn_store_set_baselines_done(&e->store, e->store.base_done, pn_wal_redo(&e->wal));
	write(ctx, PN_FILE_SELECTOR, 0, run->selbuf, pn_store_selector_bytes(&e->store));
}

static bool recovery_begin(struct pn_proto_ctx *pc, const struct pn_control *c)
{
	struct pn_engine *e = pn_proto_engine(pc);
	uint32_t len = pn_store_selector_bytes(&e->store);
	uint8_t *buf = e->ckpt.runs[0].selbuf;
	if (!e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_SELECTOR,
				  (uint64_t)c->selector_area * len, len, buf) ||
	    !pn_store_decode_selector(&e->store, buf, c->ckpt_seq, e->store.base_done)) {
		pn_svc_violation(&e->svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "the selector snapshot of checkpoint %llu (area %u) is missing or "
				 "torn: no baselines to recover from",
				 (unsigned long long)c->ckpt_seq, c->selector_area);
		return false;
	}
	pn_store_set_baselines_done(&e->store, e->store.base_done, c->redo);
	for (uint32_t p = 0; p < e->heap_pages; p++)
		pn_store_set_slot(&e->store, p, e->store.base_done[p]);
	return true;
}

/* R4 on a resident frame: changed after the completed checkpoint's redo => off its
 * baseline slot. */
static void check_frame(struct pn_proto_ctx *pc, uint32_t i)
{
	struct pn_engine *e = pn_proto_engine(pc);
	const struct pn_frame *f = pn_buf_frame(&e->buf, i);
	PN_ASSERT(f->page < e->pages);
	if (pn_store_is_slru(&e->store, f->page) || !f->valid)
		return;
	if (pn_page_lsn(pn_frame_page(&e->buf, i)) > e->ckpt.redo_done &&
	    pn_store_slot(&e->store, f->page) == e->store.base_done[f->page] && !e->rcv.active)
		pn_svc_violation(&e->svc, PN_VIOL_MAPPING, f->page,
				 "page %u changed after redo %llX but still mapped to its baseline "
				 "slot %u (R4)",
				 f->page, (unsigned long long)e->ckpt.redo_done,
				 pn_store_slot(&e->store, f->page));
}

void pn_umbra_check_frame_imaged(struct pn_proto_ctx *pc, uint32_t frame, const pn_lsn *image_redo)
{
	struct pn_engine *e = pn_proto_engine(pc);
	const struct pn_frame *f = pn_buf_frame(&e->buf, frame);
	if (f->page >= e->heap_pages || image_redo[f->page] <= e->ckpt.redo_done)
		check_frame(pc, frame);
}

const struct pn_protocol_ops pn_protocol_umbra = {
	.name = "umbra-prototype",
	.store_flags = PN_STORE_SLOTTED,
	.generations = pn_umbra_generations,
	.unsupported = pn_protocol_refuse_publish_steps,
	.recheck = pn_protocol_recheck,
	.file_size = pn_umbra_file_size,
	.decide = pn_umbra_decide,
	.bind_late = pn_umbra_bind_late,
	.check_frame = check_frame,
	PN_UMBRA_PROTOTYPE_HOOKS,
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
#include "protocols.h"

const struct pn_protocol_decl pn_decl_umbra = {
	.mode = PN_MODE_UMBRA,
	.policy = PN_POLICY_PROTOTYPE,
	.keys = PN_KEY_POLICY | PN_KEY_GENERATIONS | PN_KEY_LAYOUT,
	.caps = PN_CAP_TRUNCATE,
	.mutants = PN_MUT_AIO_LATE_BIND | PN_MUT_EARLY_RECLAIM | PN_MUT_SELECTOR_UNSYNCED |
		   PN_MUT_HINT_NO_FPI | PN_MUT_DEDUP_NO_IMAGE,
};

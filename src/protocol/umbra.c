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
	PN_ASSERT(f < PN_FILE_COUNT);
	return f == PN_FILE_SELECTOR ? PN_SELECTOR_AREAS * pn_store_selector_bytes(pc->store) : 0;
}

unsigned pn_umbra_decide(const struct pn_proto_ctx *pc, enum pn_block_use use, bool before_redo)
{
	uint32_t mut = pc->sc->protocol.mutations;
	PN_ASSERT(use <= PN_USE_SLRU);
	switch (use) {
	case PN_USE_SLRU: return pn_protocol_slru_image(pc, before_redo);
	case PN_USE_HINT: {
		bool fpi = before_redo && !(mut & PN_MUT_HINT_NO_FPI);
		/* l4: HINT_DELTA, no image; l3's eligibility excludes a MAIN FPI_FOR_HINT (it
		 * keeps its plain image) */
		return (fpi && !pc->row->hint_delta ? PN_PROTECT_IMAGE : 0) |
		       (fpi && pc->sc->protocol.policy != PN_POLICY_L3 ? PN_PROTECT_SHIFT : 0);
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
	/* aio_late_bind: the device offset is looked up when the I/O is dispatched (5.3) */
	return (pc->sc->protocol.mutations & PN_MUT_AIO_LATE_BIND) &&
	       !pn_store_is_slru(pc->store, page);
}

/* ---- the prototype ---- */

/* R4 at publication: a page changed after the completed checkpoint's redo is off its
 * baseline. */
void pn_umbra_shifted(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target, pn_lsn lsn)
{
	uint32_t page = pn_buf_frame(pn_proto_buf(pc), frame)->page;
	PN_ASSERT(page < pc->store->heap_pages);
	PN_ASSERT(lsn > 0);
	pn_store_set_slot(pc->store, page, target);
	pc->m->shifts++;
	if (target == pc->store->base_done[page])
		pn_svc_violation(pc->svc, PN_VIOL_MAPPING, page,
				 "page %u shifted onto slot %u, its recovery baseline (R4)", page,
				 target);
}

void pn_umbra_ckpt_begin(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_WRITING);
	memcpy(run->snapshot, pn_store_slots(pc->store), pc->store->heap_pages);
	if (pc->sc->protocol.mutations & PN_MUT_EARLY_RECLAIM)
		pn_store_set_baselines_done(pc->store, pn_store_slots(pc->store),
					    pn_proto_ckpt(pc)
						    ->redo_done); /* the bug: reclaim at begin */
	pn_ckpt_select(pn_proto_ckpt(pc), run);
}

/* After the data fsync: the snapshot into the selector area seq % 3, then its fsync. */
uint64_t pn_umbra_ckpt_durable_step(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	uint32_t len = pn_store_selector_bytes(pc->store);
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	if (run->proto_sub == UC_SELECTOR_FSYNC) {
		pn_ckpt_run_io(pn_proto_ckpt(pc), run, PN_IO_FSYNC, PN_FILE_SELECTOR, 0, NULL, 0);
		return UINT64_MAX;
	}
	PN_ASSERT(run->proto_sub == 0); /* the first sub-state: SELECTOR_WRITE */
	pn_store_encode_selector(pc->store, run->snapshot, run->seq, run->redo, run->selbuf);
	pn_ckpt_run_io(pn_proto_ckpt(pc), run, PN_IO_WRITE, PN_FILE_SELECTOR,
		       (run->seq % PN_SELECTOR_AREAS) * len, run->selbuf, len);
	return UINT64_MAX;
}

void pn_umbra_ckpt_io_done(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	if (run->proto_sub == UC_SELECTOR_FSYNC ||
	    (pc->sc->protocol.mutations & PN_MUT_SELECTOR_UNSYNCED))
		pn_ckpt_set_state(run, PN_C_RECORD);
	else
		run->proto_sub = UC_SELECTOR_FSYNC;
}

void pn_umbra_ckpt_control(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_CONTROL_WRITE);
	pn_store_set_baselines_inflight(pc->store, run->snapshot, run->redo);
}

void pn_umbra_ckpt_end(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	PN_ASSERT(run->seq > 0);
	pn_store_set_baselines_done(pc->store, run->snapshot, run->redo);
}

/* Selector area 0: every baseline slot 0. */
void pn_umbra_format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx)
{
	struct pn_ckpt_run *run = &pn_proto_ckpt(pc)->runs[0];
	pn_store_encode_selector(pc->store, pc->store->base_done, 0, pn_wal_redo(pc->wal),
				 run->selbuf);
	pn_store_set_baselines_done(pc->store, pc->store->base_done, pn_wal_redo(pc->wal));
	write(ctx, PN_FILE_SELECTOR, 0, run->selbuf, pn_store_selector_bytes(pc->store));
}

bool pn_umbra_recovery_begin(struct pn_proto_ctx *pc, const struct pn_control *c)
{
	uint32_t len = pn_store_selector_bytes(pc->store);
	uint8_t *buf = pn_proto_ckpt(pc)->runs[0].selbuf;
	if (!pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_SELECTOR,
				    (uint64_t)c->selector_area * len, len, buf) ||
	    !pn_store_decode_selector(pc->store, buf, c->ckpt_seq, pc->store->base_done)) {
		pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "the selector snapshot of checkpoint %llu (area %u) is missing or "
				 "torn: no baselines to recover from",
				 (unsigned long long)c->ckpt_seq, c->selector_area);
		return false;
	}
	pn_store_set_baselines_done(pc->store, pc->store->base_done, c->redo);
	for (uint32_t p = 0; p < pc->store->heap_pages; p++)
		pn_store_set_slot(pc->store, p, pc->store->base_done[p]);
	return true;
}

/* R4 on a resident frame: changed after the completed checkpoint's redo => off its
 * baseline slot. */
void pn_umbra_check_frame(struct pn_proto_ctx *pc, uint32_t i)
{
	const struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), i);
	PN_ASSERT(f->page < pc->store->pages);
	if (pn_store_is_slru(pc->store, f->page) || !f->valid)
		return;
	if (pn_page_lsn(pn_frame_page(pn_proto_buf(pc), i)) > pn_proto_ckpt(pc)->redo_done &&
	    pn_store_slot(pc->store, f->page) == pc->store->base_done[f->page] && !*pc->recovering)
		pn_svc_violation(pc->svc, PN_VIOL_MAPPING, f->page,
				 "page %u changed after redo %llX but still mapped to its baseline "
				 "slot %u (R4)",
				 f->page, (unsigned long long)pn_proto_ckpt(pc)->redo_done,
				 pn_store_slot(pc->store, f->page));
}

void pn_umbra_check_frame_imaged(struct pn_proto_ctx *pc, uint32_t frame, const pn_lsn *image_redo)
{
	const struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), frame);
	if (f->page >= pc->store->heap_pages || image_redo[f->page] <= pn_proto_ckpt(pc)->redo_done)
		pn_umbra_check_frame(pc, frame);
}

/* The base row: the variants (umbra_gen2.c, umbra_pool.c) name its hooks in their tables. */
const struct pn_protocol_ops pn_protocol_umbra = {
	.name = "umbra-prototype",
	.store_flags = PN_STORE_SLOTTED,
	.setup = {.generations = pn_umbra_generations,
		  .format = pn_umbra_format,
		  .file_size = pn_umbra_file_size},
	.write = {.decide = pn_umbra_decide,
		  .shifted = pn_umbra_shifted,
		  .recheck = pn_protocol_recheck},
	.buffer = {.bind_late = pn_umbra_bind_late},
	.ckpt = PN_UMBRA_BASE_CKPT,
	.recovery = {.begin = pn_umbra_recovery_begin},
	.state = {.memory = pn_protocol_memory_none, .check_frame = pn_umbra_check_frame},
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

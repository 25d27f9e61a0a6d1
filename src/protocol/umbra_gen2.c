/*
 * umbra_gen2.c: the umbra-gen2 row of the protocol table (protocol layer; issue 17's second
 * space-saving policy, docs/protocol.md section 4e). Umbra with two generations a page and
 * a full-page-image fallback.
 *
 * Every heap page has two slots: its home (slot 0, data file index = the page) and its
 * second slot (index heap_pages + page), so a logical scan of the pages at home is one run
 * and the second half of the file holds only the pages that shifted (a sparse file). The
 * prototype with `generations: 2` rotates onto the other slot even when that slot may still
 * be a recovery baseline (docs/umbra-findings.md F3). This row shifts only when the other
 * slot is free for every possible recovery; otherwise the change takes a full-page image and
 * the page stays where it is, as in fpw (shift_target, in the step of the record). That
 * happens when a page changes after a checkpoint's redo pointer while the completed
 * checkpoint and the running one (or its in-flight control write) name its two slots. The
 * checkpoint, the selector (one byte a page, three areas, seq + CRC, R5) and recovery are
 * the base row's (umbra.c, named in this row's table); the row adds no metadata of its own.
 *
 * Rules (each names the mutant that breaks it; the scenarios are scenarios/less-space/):
 *   G1 a shift goes to the other slot only when no possible recovery may read it: it is not
 *      the page's current slot, the completed checkpoint's baseline, the in-flight control
 *      write's baseline or any running checkpoint's snapshot; else the change carries its
 *      full-page image (gen2_no_fallback rotates onto the other slot anyway, the
 *      prototype's `generations: 2`). Checked at run time: shift_target reports a target
 *      that is a baseline (protected_slot).
 *   G2 the completed checkpoint's baseline becomes free only when the control file of a
 *      checkpoint whose baselines do not name it is durable (ckpt_end), not when the next
 *      checkpoint begins (gen2_early_reuse reclaims it at checkpoint begin: a page that
 *      shifted in the last cycle shifts back over the baseline a crash before the running
 *      checkpoint ends recovers from; G1's check reports it)
 *   G3 a page that found no free slot takes its image in the record that changes it and
 *      stays on its slot, which may be a baseline; its writes may tear it, redo restores the
 *      image first (gen2_no_image stays without the image: R4 reports the page changed on
 *      its baseline, and a torn write loses the change)
 *   G4 R4 exempts exactly the pages of G3: a page with an image since the completed
 *      checkpoint's redo pointer; every other page changed after it is off its baseline
 *      (check_frame; umbra.c's R4 at publication). R3 is the checker's oracle here: the row
 *      places the slots, so store.c's R3 does not apply (a G3 page writes its baseline).
 *   G5 the selector is the prototype's: written and fsynced after the data fsync, before the
 *      checkpoint record and the control file, in an area the completed checkpoint does not
 *      name (selector_unsynced breaks it; the prototype's scenarios own that mutant)
 *
 * Keys: the row has two generations and places them itself; protocol.generations,
 * protocol.layout and protocol.spare_slots are refused (its declaration below: the loader,
 * and the CLI when --mode picks this policy for a file that names them).
 */
#include "umbra.h"

#include "protocols.h"

#include <stdlib.h>

struct gen2 {
	pn_lsn *image_redo; /* page -> 1 + the redo pointer of its last fallback image */
	uint8_t *second;    /* page -> its second slot was ever taken (the space metric) */
	uint64_t seconds;   /* how many pages have */
};

static struct gen2 *gen2_of(const struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state != NULL);
	return pc->state;
}

static uint32_t generations(const struct pn_scenario *sc)
{
	PN_ASSERT(sc->protocol.policy == PN_POLICY_GEN2);
	return 2;
}

/* Page p's home slot is p, its second slot heap_pages + p. */
static uint64_t place(void *ctx, uint32_t page, uint32_t slot)
{
	const struct pn_proto_ctx *pc = ctx;
	PN_ASSERT(slot < 2 && page < pc->store->heap_pages);
	return (uint64_t)slot * pc->store->heap_pages + page;
}

/* The slots some possible recovery may read for page p (G1, G2): its current slot, the
 * completed checkpoint's baseline, every running checkpoint's snapshot and the in-flight
 * control write's baseline. early: as gen2_early_reuse sees them, the completed
 * checkpoint's baseline reclaimed as soon as a checkpoint is running. */
static uint32_t needed(const struct pn_proto_ctx *pc, uint32_t p, bool early)
{
	uint32_t busy = pn_ckpt_baselines_busy(pn_proto_ckpt(pc), p);
	uint32_t mask = 1u << pn_store_slot(pc->store, p) | busy;
	if (!early || !busy)
		mask |= 1u << pc->store->base_done[p];
	if (pc->store->inflight_valid)
		mask |= 1u << pc->store->base_inflight[p];
	return mask;
}

static uint32_t fallback(struct pn_proto_ctx *pc, uint32_t page)
{
	PN_TESTCASE("a gen2 shift falls back to a full-page image", true);
	gen2_of(pc)->image_redo[page] = pn_wal_redo(pc->wal) + 1;
	return PN_SHIFT_IMAGE;
}

/* G1: the other slot when no recovery needs it, else an image (G3). */
static uint32_t shift_target(struct pn_proto_ctx *pc, uint32_t page)
{
	uint32_t mut = pc->sc->protocol.mutations;
	PN_ASSERT(page < pc->store->heap_pages);
	uint32_t other = 1u - pn_store_slot(pc->store, page);
	uint32_t mask = needed(pc, page, (mut & PN_MUT_GEN2_EARLY_REUSE) != 0);
	if ((mask & (1u << other)) && !(mut & PN_MUT_GEN2_NO_FALLBACK)) {
		if (!(mut & PN_MUT_GEN2_NO_IMAGE))
			return fallback(pc, page);
		return pn_store_slot(pc->store, page); /* the bug: stays, without an image */
	}
	if (needed(pc, page, false) & (1u << other)) /* G1's check */
		pn_svc_violation(pc->svc, PN_VIOL_PROTECTED_SLOT, page,
				 "page %u shifts onto slot %u, still a recovery baseline (G1)",
				 page, other);
	return other;
}

/* G4: R4, except for a page with an image since the completed checkpoint's redo. */
static void check_frame(struct pn_proto_ctx *pc, uint32_t i)
{
	pn_umbra_check_frame_imaged(pc, i, gen2_of(pc)->image_redo);
}

/* The fingerprint's share of the row (protocol.h memory): each page's last fallback image
 * (G4's exemption). Not the second slots ever taken: they count for the space metric only. */
static void memory(const struct pn_proto_ctx *pc, const struct pn_hasher *h)
{
	const struct gen2 *g = pc->state;
	PN_ASSERT(g != NULL && g->image_redo != NULL);
	h->feed(h->ctx, g->image_redo, sizeof(pn_lsn) * pc->store->heap_pages);
}

static bool init(struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state == NULL);
	struct gen2 *g = calloc(1, sizeof *g);
	if (!g)
		return false;
	pc->state = g;
	if (!(g->image_redo = calloc(pc->store->heap_pages, sizeof(pn_lsn))) ||
	    !(g->second = calloc(pc->store->heap_pages, 1)))
		return false;
	pn_store_set_placement(pc->store, 2ull * pc->store->heap_pages, place, pc);
	return true;
}

static void gen2_free(struct pn_proto_ctx *pc)
{
	struct gen2 *g = pc->state;
	if (!g)
		return;
	free(g->image_redo);
	free(g->second);
	free(g);
	pc->state = NULL;
}

/* ---- the base row's hooks (umbra.c) this row adds to ---- */

static void shifted(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target, pn_lsn lsn)
{
	struct gen2 *g = gen2_of(pc);
	uint32_t page = pn_buf_frame(pn_proto_buf(pc), frame)->page;
	if (target == 1 && page < pc->store->heap_pages && !g->second[page]) {
		g->second[page] = 1;
		g->seconds++;
	}
	pn_umbra_shifted(pc, frame, target, lsn);
}

/* Space as the pool counts it: the home slots and the second slots ever taken (not only
 * those written by the end of the run). */
static void finish_metrics(struct pn_proto_ctx *pc)
{
	pc->m->slots_used = (uint64_t)pc->store->heap_pages + gen2_of(pc)->seconds;
}

/* The base row (umbra.c) with its own slot choice, placement, fallback and metrics; its
 * checkpoint, selector and recovery are the base's (G2: the other slot is free once the
 * base's ckpt end has made the new baselines the completed ones). */
const struct pn_protocol_ops pn_protocol_umbra_gen2 = {
	.name = "umbra-gen2",
	.store_flags = PN_STORE_SLOTTED,
	.setup = {.generations = generations,
		  .init = init,
		  .free = gen2_free,
		  .format = pn_umbra_format,
		  .file_size = pn_umbra_file_size},
	.write = {.decide = pn_umbra_decide,
		  .shift_target = shift_target,
		  .shifted = shifted,
		  .recheck = pn_protocol_recheck},
	.buffer = {.bind_late = pn_umbra_bind_late},
	.ckpt = PN_UMBRA_BASE_CKPT,
	.recovery = {.begin = pn_umbra_recovery_begin},
	.state = {.memory = memory, .check_frame = check_frame},
	.metrics = {.finish = finish_metrics},
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
#include "protocols.h"

const struct pn_protocol_decl pn_decl_umbra_gen2 = {
	.mode = PN_MODE_UMBRA,
	.policy = PN_POLICY_GEN2,
	.keys = PN_KEY_POLICY,
	.fixed = PN_KEY_GENERATIONS | PN_KEY_LAYOUT | PN_KEY_SPARE_SLOTS,
	.fixed_why = "two slots a page, the home slots first",
	.caps = 0,
	.mutants = PN_MUT_GEN2_NO_FALLBACK | PN_MUT_GEN2_EARLY_REUSE | PN_MUT_GEN2_NO_IMAGE,
};

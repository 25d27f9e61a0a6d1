/*
 * umbra_pool.c: the umbra-pool row of the protocol table (protocol layer; issue 17's
 * space-saving policy, docs/protocol.md section 4d). Umbra with a shared pool of spare
 * slots instead of three generations per page.
 *
 * Every heap page has its home slot (slot 0, data file index = the page: a logical scan of
 * pages at home is one run) and may hold up to two spares (slots 1 and 2) from a pool of
 * protocol.spare_slots entries after the home slots (index heap_pages + entry). A shift off
 * a baseline takes the lowest slot no possible recovery needs: home when it is free, else a
 * spare from the pool. When no slot is free, or the pool is empty, the change takes a
 * full-page image instead and the page stays where it is, as in fpw (shift_target, in the
 * step of the record). Two spares a page (200%) never fall back. The checkpoint, the selector and R4 are the
 * base row's (umbra.c, its hooks called from this row's); this row adds the pool and its map.
 *
 * Rules (each names the mutant that breaks it; the scenarios are scenarios/less-space/):
 *   P1 a page holds its spare while any possible recovery may read it: its current slot,
 *      the completed checkpoint's baseline, the in-flight control write's baseline and every
 *      running checkpoint's snapshot; a spare returns to the pool only in ckpt_end, once the
 *      control file naming a baseline without it is durable (pool_early_return returns
 *      spares at checkpoint begin, and another page overwrites a baseline)
 *   P2 a change before redo either moves the page to a slot no recovery needs or carries
 *      its full-page image; never neither (pool_no_fallback shifts onto a slot that is
 *      still a baseline, or takes the spare of a page whose baseline it still is)
 *   P3 the map page -> spare of a checkpoint's baselines is written and fsynced with the
 *      selector, before the checkpoint record and the control file that names it; recovery
 *      reads the map of the checkpoint the control file names and checks its seq and CRC
 *      (pool_map_unsynced skips the fsync, and a crash leaves the control file naming a map
 *      that is not on the device)
 *   P4 shifts after the redo pointer are not in the map: replay takes a spare from the
 *      pool for each shift onto slot 1 or 2 (any entry that is no baseline of the checkpoint it
 *      recovers from: what the crashed run wrote there is not needed, replay rebuilds the
 *      page from its baseline), and the end-of-recovery checkpoint writes the new map
 *   P5 a page that took an image stays on its baseline slot; its writes may tear it, redo
 *      restores the image first (R4 exempts a page with an image since the completed
 *      checkpoint's redo; R3 is judged by the checker's oracle: the slots are placed by
 *      this row, so store.c's R3 does not apply)
 *
 * Map area (PN_FILE_SELECTOR after the prototype's three selector areas; area seq % 3):
 * 0 magic 'PNPL' u32 | 4 heap pages u32 | 8 seq u64 | 16 spares u32 | 20 crc32c u32 over
 * [24, end) and [0, 20) | 24 one u32 a page: 1 + the entry of its baseline slot when that
 * is a spare, else 0; rounded up to a sector.
 */
#include "umbra.h"

#include "crc32c.h"
#include "protocols.h"

#include <stdlib.h>
#include <string.h>

#define POOL_MAGIC 0x4C504E50u /* "PNPL" */
#define MAP_HEADER 24u
#define NO_ENTRY UINT32_MAX

/* A run's sub-states after the prototype's selector (umbra.h's UC_SELECTOR_FSYNC). */
enum { PC_MAP_WRITE = UC_SELECTOR_FSYNC + 1, PC_MAP_FSYNC };

struct pool {
	uint32_t spares;        /* protocol.spare_slots, as a count */
	uint32_t *entry_of;     /* 2 * page + slot - 1 -> its entry, or NO_ENTRY */
	uint32_t *owner;        /* entry -> 2 * page + slot - 1, or NO_ENTRY */
	uint32_t *stack, nfree; /* returned entries, taken last-in first */
	uint32_t next_new;      /* entries [next_new, spares) never taken */
	pn_lsn *image_redo;     /* page -> 1 + redo pointer of its last fallback image */
	/* entry -> the handle whose baseline it is for the completed checkpoint ([0]) and the
	 * one whose control write is in flight ([1]), or NO_ENTRY: what P1's check reads */
	uint32_t *base_owner[2];
	uint8_t *mapbuf[PN_MAX_CKPT_RUNS + 1]; /* a run's map area; the last: recovery's */
};

static struct pool *pool_of(const struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state != NULL);
	return pc->state;
}

static uint32_t spare_count(const struct pn_scenario *sc, uint32_t heap_pages)
{
	if (!sc->protocol.spare_percent)
		return sc->protocol.spare_slots;
	PN_ASSERT(sc->protocol.spare_slots <= 200);
	return (uint32_t)((uint64_t)heap_pages * sc->protocol.spare_slots / 100);
}

static uint32_t map_bytes(const struct pn_proto_ctx *pc)
{
	uint32_t sec = pc->store->sector_size;
	return (MAP_HEADER + 4u * pc->store->heap_pages + sec - 1) / sec * sec;
}

static uint64_t map_offset(const struct pn_proto_ctx *pc, uint32_t area)
{
	PN_ASSERT(area < PN_SELECTOR_AREAS);
	return (uint64_t)PN_SELECTOR_AREAS * pn_store_selector_bytes(pc->store) +
	       (uint64_t)area * map_bytes(pc);
}

/* The index of page p's slot s in entry_of. */
static uint32_t handle(uint32_t page, uint32_t slot)
{
	PN_ASSERT(slot == 1 || slot == 2);
	return 2 * page + slot - 1;
}

/* Slot 0: home (the page's own index); slots 1 and 2: its spares, after the home slots. A
 * slot without a spare does not exist (the data file's size asks for it: home). */
static uint64_t place(void *ctx, uint32_t page, uint32_t slot)
{
	const struct pn_proto_ctx *pc = ctx;
	const struct pool *pl = pool_of(pc);
	PN_ASSERT(slot < 3);
	if (slot == 0 || pl->entry_of[handle(page, slot)] == NO_ENTRY)
		return page;
	return (uint64_t)pc->store->heap_pages + pl->entry_of[handle(page, slot)];
}

/* The slots some possible recovery may read for page p (P1); early: as pool_early_return
 * sees them, without the completed and the in-flight checkpoints' baselines. */
static uint32_t needed(const struct pn_proto_ctx *pc, uint32_t p, bool early)
{
	uint32_t mask = 1u << pn_store_slot(pc->store, p) |
			pn_ckpt_baselines_busy(pn_proto_ckpt(pc), p);
	if (!early) {
		mask |= 1u << pc->store->base_done[p];
		if (pc->store->inflight_valid)
			mask |= 1u << pc->store->base_inflight[p];
	}
	return mask;
}

static uint32_t take(struct pool *pl)
{
	if (pl->nfree)
		return pl->stack[--pl->nfree];
	return pl->next_new < pl->spares ? pl->next_new++ : NO_ENTRY;
}

static void give(struct pool *pl, uint32_t h)
{
	uint32_t entry = pl->entry_of[h];
	PN_ASSERT(entry < pl->spares && pl->owner[entry] == h);
	PN_ASSERT(pl->nfree < pl->spares);
	pl->owner[entry] = NO_ENTRY;
	pl->entry_of[h] = NO_ENTRY;
	pl->stack[pl->nfree++] = entry;
}

static void hold(struct pool *pl, uint32_t h, uint32_t entry)
{
	PN_ASSERT(entry < pl->spares && pl->owner[entry] == NO_ENTRY);
	PN_ASSERT(pl->entry_of[h] == NO_ENTRY);
	pl->owner[entry] = h;
	pl->entry_of[h] = entry;
}

/* Returns every spare no possible recovery needs (P1). */
static void release(struct pn_proto_ctx *pc, bool early)
{
	struct pool *pl = pool_of(pc);
	for (uint32_t p = 0; p < pc->store->heap_pages; p++)
		for (uint32_t s = 1; s <= 2; s++)
			if (pl->entry_of[handle(p, s)] != NO_ENTRY &&
			    !(needed(pc, p, early) & (1u << s))) {
				give(pl, handle(p, s));
			}
}

static uint32_t fallback(struct pn_proto_ctx *pc, uint32_t page)
{
	PN_TESTCASE("a pool shift falls back to a full-page image", true);
	pool_of(pc)->image_redo[page] = pn_wal_redo(pc->wal) + 1;
	return PN_SHIFT_IMAGE;
}

/* P2: the lowest slot no recovery needs (a spare is taken for slot 1 or 2), else an image. */
static uint32_t shift_target(struct pn_proto_ctx *pc, uint32_t page)
{
	struct pool *pl = pool_of(pc);
	bool bug = (pc->sc->protocol.mutations & PN_MUT_POOL_NO_FALLBACK) != 0;
	PN_ASSERT(page < pc->store->heap_pages);
	uint32_t mask = needed(pc, page, false), target = 0;
	while (target < 3 && (mask & (1u << target)))
		target++;
	if (target == 3) /* every slot is a baseline; the bug: rotate onto one */
		return bug ? (pn_store_slot(pc->store, page) + 1) % 3 : fallback(pc, page);
	if (target != 0 && !pl->nfree && pl->next_new == pl->spares && bug)
		return pn_store_slot(pc->store, page); /* the bug: stay on the baseline, no image */
	if (target == 0)
		return 0;
	/* P1: a spare no one needs was returned */
	PN_ASSERT(pl->entry_of[handle(page, target)] == NO_ENTRY);
	uint32_t en = take(pl), h = handle(page, target);
	if (en == NO_ENTRY)
		return fallback(pc, page);
	for (int i = 0; i < 2; i++) {
		uint32_t o = pl->base_owner[i][en];
		if (o != NO_ENTRY && o != h && (i == 0 || pc->store->inflight_valid))
			pn_svc_violation(pc->svc, PN_VIOL_PROTECTED_SLOT, page,
					 "page %u takes spare %u, still the recovery baseline of "
					 "page %u (P1)",
					 page, en, o / 2);
	}
	hold(pl, h, en);
	return target;
}

static void shifted(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target, pn_lsn lsn)
{
	uint32_t page = pn_buf_frame(pn_proto_buf(pc), frame)->page;
	PN_ASSERT(target == 0 || pool_of(pc)->entry_of[handle(page, target)] != NO_ENTRY ||
		  (pc->sc->protocol.mutations & PN_MUT_POOL_NO_FALLBACK));
	pn_umbra_shifted(pc, frame, target, lsn);
}

static void ckpt_begin(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	pn_umbra_ckpt_begin(pc, run);
	if (pc->sc->protocol.mutations & PN_MUT_POOL_EARLY_RETURN)
		release(pc, true); /* the bug: before the control file names the new baselines */
}

/* The entries the run's snapshot names become the in-flight baselines (for P1's check). */
static void ckpt_control(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	struct pool *pl = pool_of(pc);
	pn_umbra_ckpt_control(pc, run);
	memset(pl->base_owner[1], 0xff, sizeof(uint32_t) * (pl->spares + 1u));
	for (uint32_t p = 0; p < pc->store->heap_pages; p++) {
		uint32_t h = run->snapshot[p] ? handle(p, run->snapshot[p]) : NO_ENTRY;
		if (h != NO_ENTRY && pl->entry_of[h] != NO_ENTRY)
			pl->base_owner[1][pl->entry_of[h]] = h;
	}
}

static void ckpt_end(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	struct pool *pl = pool_of(pc);
	memcpy(pl->base_owner[0], pl->base_owner[1], sizeof(uint32_t) * (pl->spares + 1u));
	pn_umbra_ckpt_end(pc, run);
	release(pc, false); /* P1: the control file is durable */
}

static uint32_t map_crc(const struct pn_proto_ctx *pc, const uint8_t *buf)
{
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), buf + MAP_HEADER,
					4u * pc->store->heap_pages);
	return pn_crc32c_final(pn_crc32c_update(crc, buf, 20));
}

static void encode_map(const struct pn_proto_ctx *pc, const uint8_t *baselines, uint64_t seq,
		       uint8_t *out)
{
	const struct pool *pl = pool_of(pc);
	memset(out, 0, map_bytes(pc));
	pn_put32(out, POOL_MAGIC);
	pn_put32(out + 4, pc->store->heap_pages);
	pn_put64(out + 8, seq);
	pn_put32(out + 16, pl->spares);
	for (uint32_t p = 0; p < pc->store->heap_pages; p++) {
		if (baselines[p] == 0)
			continue;
		uint32_t en = pl->entry_of[handle(p, baselines[p])];
		/* P1: a running snapshot holds it (pool_no_fallback may have taken it) */
		PN_ASSERT(en != NO_ENTRY || (pc->sc->protocol.mutations & PN_MUT_POOL_NO_FALLBACK));
		pn_put32(out + MAP_HEADER + 4u * p, en + 1);
	}
	pn_put32(out + 20, map_crc(pc, out));
}

/* The prototype's selector write and fsync, then the map's (P3). */
static uint64_t ckpt_durable_step(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	if (run->proto_sub < PC_MAP_WRITE)
		return pn_umbra_ckpt_durable_step(pc, run);
	uint32_t area = (uint32_t)(run->seq % PN_SELECTOR_AREAS);
	if (run->proto_sub == PC_MAP_FSYNC) {
		pn_ckpt_run_io(pn_proto_ckpt(pc), run, PN_IO_FSYNC, PN_FILE_SELECTOR, 0, NULL, 0);
		return UINT64_MAX;
	}
	uint8_t *buf = pool_of(pc)->mapbuf[run - pn_proto_ckpt(pc)->runs];
	encode_map(pc, run->snapshot, run->seq, buf);
	pn_ckpt_run_io(pn_proto_ckpt(pc), run, PN_IO_WRITE, PN_FILE_SELECTOR, map_offset(pc, area),
		       buf, map_bytes(pc));
	return UINT64_MAX;
}

static void ckpt_io_done(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	uint32_t mut = pc->sc->protocol.mutations;
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	switch (run->proto_sub) {
	case 0: /* the selector written */
		run->proto_sub = mut & PN_MUT_SELECTOR_UNSYNCED ? PC_MAP_WRITE : UC_SELECTOR_FSYNC;
		break;
	case UC_SELECTOR_FSYNC: run->proto_sub = PC_MAP_WRITE; break;
	case PC_MAP_WRITE:
		if (mut & PN_MUT_POOL_MAP_UNSYNCED)
			pn_ckpt_set_state(run, PN_C_RECORD); /* the bug: no fsync */
		else
			run->proto_sub = PC_MAP_FSYNC;
		break;
	default: PN_ASSERT(run->proto_sub == PC_MAP_FSYNC); pn_ckpt_set_state(run, PN_C_RECORD);
	}
}

static uint32_t generations(const struct pn_scenario *sc)
{
	PN_ASSERT(sc->protocol.policy == PN_POLICY_POOL);
	return 3; /* home and two spares */
}

static bool init(struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state == NULL);
	struct pool *pl = calloc(1, sizeof *pl);
	if (!pl)
		return false;
	pc->state = pl;
	pl->spares = spare_count(pc->sc, pc->store->heap_pages);
	pl->entry_of = malloc(sizeof(uint32_t) * 2 * pc->store->heap_pages);
	pl->owner = malloc(sizeof(uint32_t) * (pl->spares + 1u));
	pl->stack = malloc(sizeof(uint32_t) * (pl->spares + 1u));
	pl->image_redo = calloc(pc->store->heap_pages, sizeof(pn_lsn));
	pl->base_owner[0] = malloc(sizeof(uint32_t) * 2 * (pl->spares + 1u));
	if (!pl->entry_of || !pl->owner || !pl->stack || !pl->image_redo || !pl->base_owner[0])
		return false;
	pl->base_owner[1] = pl->base_owner[0] + pl->spares + 1u;
	memset(pl->entry_of, 0xff, sizeof(uint32_t) * 2 * pc->store->heap_pages);
	memset(pl->owner, 0xff, sizeof(uint32_t) * (pl->spares + 1u));
	memset(pl->base_owner[0], 0xff, sizeof(uint32_t) * 2 * (pl->spares + 1u));
	for (int r = 0; r <= PN_MAX_CKPT_RUNS; r++)
		if (!(pl->mapbuf[r] = malloc(map_bytes(pc))))
			return false;
	pn_store_set_placement(pc->store, (uint64_t)pc->store->heap_pages + pl->spares, place, pc);
	return true;
}

static void pool_free(struct pn_proto_ctx *pc)
{
	struct pool *pl = pc->state;
	if (!pl)
		return;
	free(pl->entry_of);
	free(pl->owner);
	free(pl->stack);
	free(pl->image_redo);
	free(pl->base_owner[0]);
	for (int r = 0; r <= PN_MAX_CKPT_RUNS; r++)
		free(pl->mapbuf[r]);
	free(pl);
	pc->state = NULL;
}

static uint64_t file_size(const struct pn_proto_ctx *pc, enum pn_file f)
{
	return f == PN_FILE_SELECTOR ? map_offset(pc, PN_SELECTOR_AREAS - 1) + map_bytes(pc) : 0;
}

/* The prototype's selector area 0, then map area 0: no page on a spare. */
static void format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx)
{
	uint8_t *buf = pool_of(pc)->mapbuf[PN_MAX_CKPT_RUNS];
	pn_umbra_format(pc, write, ctx);
	encode_map(pc, pc->store->base_done, 0, buf);
	write(ctx, PN_FILE_SELECTOR, map_offset(pc, 0), buf, map_bytes(pc));
}

static bool decode_map(struct pn_proto_ctx *pc, const uint8_t *buf, uint64_t seq)
{
	struct pool *pl = pool_of(pc);
	if (pn_get32(buf) != POOL_MAGIC || pn_get32(buf + 4) != pc->store->heap_pages ||
	    pn_get64(buf + 8) != seq || pn_get32(buf + 16) != pl->spares ||
	    pn_get32(buf + 20) != map_crc(pc, buf))
		return false;
	for (uint32_t p = 0; p < pc->store->heap_pages; p++) {
		uint32_t v = pn_get32(buf + MAP_HEADER + 4u * p);
		if ((v != 0) != (pc->store->base_done[p] != 0) ||
		    (v != 0 && (v > pl->spares || pl->owner[v - 1] != NO_ENTRY)))
			return false;
		if (v != 0) {
			hold(pl, handle(p, pc->store->base_done[p]), v - 1);
			pl->base_owner[0][v - 1] = handle(p, pc->store->base_done[p]);
			pl->next_new = PN_MAX(pl->next_new, v);
		}
	}
	for (uint32_t en = pl->next_new; en-- > 0;) /* the lowest is taken first */
		if (pl->owner[en] == NO_ENTRY)
			pl->stack[pl->nfree++] = en;
	return true;
}

/* The prototype's selector, then the map of the same checkpoint (P3). */
static bool recovery_begin(struct pn_proto_ctx *pc, const struct pn_control *c)
{
	uint8_t *buf = pool_of(pc)->mapbuf[PN_MAX_CKPT_RUNS];
	if (!pn_umbra_recovery_begin(pc, c))
		return false;
	if (!pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_SELECTOR,
				    map_offset(pc, c->selector_area), map_bytes(pc), buf) ||
	    !decode_map(pc, buf, c->ckpt_seq)) {
		pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "the pool map of checkpoint %llu (area %u) is missing, torn or "
				 "disagrees with its selector: no spare slots to recover from (P3)",
				 (unsigned long long)c->ckpt_seq, c->selector_area);
		return false;
	}
	return true;
}

/* P4: a shift onto a spare slot in replay takes a spare. */
static void redo_shifted(struct pn_proto_ctx *pc, uint32_t page)
{
	struct pool *pl = pool_of(pc);
	uint32_t slot = pn_store_slot(pc->store, page);
	if (slot == 0 || pl->entry_of[handle(page, slot)] != NO_ENTRY)
		return;
	uint32_t en = take(pl);
	if (en == NO_ENTRY) {
		pn_svc_violation(
			pc->svc, PN_VIOL_RECOVERY, page,
			"replay shifts page %u onto a spare, and the pool of %u is empty (P4)",
			page, pl->spares);
		return;
	}
	hold(pl, handle(page, slot), en);
}

/* R4, except for a page with an image since the completed checkpoint's redo (P5). */
static void check_frame(struct pn_proto_ctx *pc, uint32_t i)
{
	pn_umbra_check_frame_imaged(pc, i, pool_of(pc)->image_redo);
}

/* The fingerprint's share of the row (protocol.h memory): which spare each page's slot holds
 * (and so which entries are taken), the free entries in the order they will be taken, the
 * never-taken bound, each page's last fallback image (P5) and the baselines' owners (P1).
 * Not the map buffers: a run's is encoded from this state when it is written. */
static void memory(const struct pn_proto_ctx *pc, const struct pn_hasher *h)
{
	const struct pool *pl = pc->state;
	uint32_t heap_pages = pc->store->heap_pages;
	PN_ASSERT(pl != NULL && pl->nfree <= pl->spares);
	uint64_t v = (uint64_t)pl->nfree << 32 | pl->next_new;
	h->feed(h->ctx, &v, sizeof(v));
	h->feed(h->ctx, pl->entry_of, sizeof(uint32_t) * 2u * heap_pages);
	h->feed(h->ctx, pl->stack, sizeof(uint32_t) * pl->nfree);
	h->feed(h->ctx, pl->image_redo, sizeof(pn_lsn) * heap_pages);
	for (int i = 0; i < 2; i++)
		h->feed(h->ctx, pl->base_owner[i], sizeof(uint32_t) * (pl->spares + 1u));
}

/* Space: the home slots and the spares ever taken (the pool a run needed). */
static void finish_metrics(struct pn_proto_ctx *pc)
{
	pc->m->slots_used = (uint64_t)pc->store->heap_pages + pool_of(pc)->next_new;
}

/* The base row (umbra.c) with a pool of spares: each phase of the base's it changes calls
 * the base's hook and adds the pool's part. */
const struct pn_protocol_ops pn_protocol_umbra_pool = {
	.name = "umbra-pool",
	.store_flags = PN_STORE_SLOTTED,
	.setup = {.generations = generations,
		  .init = init,
		  .free = pool_free,
		  .format = format,
		  .file_size = file_size},
	.write = {.decide = pn_umbra_decide,
		  .shift_target = shift_target,
		  .shifted = shifted,
		  .recheck = pn_protocol_recheck},
	.buffer = {.bind_late = pn_umbra_bind_late},
	.ckpt = {.begin = ckpt_begin,
		 .durable_step = ckpt_durable_step,
		 .io_done = ckpt_io_done,
		 .control = ckpt_control,
		 .end = ckpt_end},
	.recovery = {.begin = recovery_begin, .redo_shifted = redo_shifted},
	.state = {.memory = memory, .check_frame = check_frame},
	.metrics = {.finish = finish_metrics},
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
#include "protocols.h"

const struct pn_protocol_decl pn_decl_umbra_pool = {
	.mode = PN_MODE_UMBRA,
	.policy = PN_POLICY_POOL,
	.keys = PN_KEY_POLICY | PN_KEY_LAYOUT | PN_KEY_SPARE_SLOTS,
	.fixed = PN_KEY_GENERATIONS,
	.fixed_why = "a home slot and two spares a page",
	.caps = 0,
	.mutants = PN_MUT_POOL_EARLY_RETURN | PN_MUT_POOL_NO_FALLBACK | PN_MUT_POOL_MAP_UNSYNCED |
		   PN_MUT_SELECTOR_UNSYNCED,
};

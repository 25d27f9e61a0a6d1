/*
 * umbra_remap.c: the umbra-remap row of the protocol table (protocol layer; issue 32, the
 * remap lineage of the public implementation, docs/protocol.md section 4g). Umbra as the RFC
 * v2 series describes it: a logical block lives in a physical block that an lblk -> pblk map
 * names, and its first change after a checkpoint's redo pointer moves it to a new physical
 * block instead of logging a full-page image.
 *
 * The map lives in a metadata fork (PN_FILE_SELECTOR): block 0 is a 512-byte superblock
 * holding the allocator frontier next_free_pblkno; blocks 1.. are MAP pages, one u32 entry
 * (the physical block) a logical page, with no full-page images of their own. A remapping
 * record's block header carries {old_pblkno, new_pblkno, logical_nblocks, next_free_pblkno}
 * (BKPBLOCK_HAS_REMAP: pn_wal_block.ext, 16 bytes). The new mapping is published after the
 * insert (shifted); MAP pages are written by the checkpoint after the data fsync, each once
 * the WAL up to its last remap is flushed, then the superblock, then one fsync, before the
 * checkpoint record. Recovery reads the superblock and the MAP pages, and replays each remap
 * as the RFC's redo does: it reads the page through the old physical block, applies the
 * record, and publishes the new one (redo_ext, then the engine's shift to the target).
 *
 * The model's runtime names a page's physical blocks through 2 + PN_MAX_CKPT_RUNS handles
 * (the engine's slots: the current one, the completed checkpoint's baseline, each running
 * checkpoint's snapshot), each bound to a physical block; a remap binds a free handle to the
 * block it allocates, so a remap never lacks a handle (with one fewer, two running
 * checkpoints made it take an image where the RFC remaps). Handles are the model's, not the
 * RFC's: recovery rebuilds them from the map.
 *
 * Rules (each names the mutant that breaks it; the scenarios are scenarios/mutants/remap-*):
 *   M1 an old physical block is reclaimed one checkpoint later: when a checkpoint that
 *      began after the remap has completed (remap_early_reclaim frees it when the checkpoint
 *      running at the remap completes, or at once when none runs)
 *   M2 a MAP page is written only after the WAL up to its last remap is flushed
 *      (remap_map_before_wal writes it at once: a crash keeps a mapping whose record is lost)
 *   M3 a MAP page holds whole 4-byte entries that sectors never split and no page-wide
 *      checksum: a torn MAP write leaves each sector old or new, each entry the durable
 *      checkpoint's value or one a replayed record sets again (remap_map_torn checks a
 *      page-wide CRC, as for a data page, with no image or other torn-write protection: a
 *      torn MAP page is unreadable)
 *   M4 the remap header logs next_free_pblkno and redo advances the frontier to it
 *      (remap_next_free_unlogged logs the 12-byte header without it: after recovery the
 *      frontier is the superblock's, behind blocks replay published; checked at the end of
 *      recovery)
 *   M5 compaction (a freed block taken before the frontier grows) takes only blocks no
 *      possible recovery names: not a running checkpoint's snapshot (remap_compact_unsafe
 *      frees an old block at once unless the completed checkpoint names it)
 *   M6 one write of a metadata block (the superblock, a MAP page) in flight at a time: a
 *      checkpoint waits while another running checkpoint's write of the same block is in
 *      flight, as a buffer's I/O lock makes PostgreSQL do (remap_meta_concurrent writes at
 *      once: with overlapping checkpoints, the first one's superblock, encoded before the
 *      second one's remaps and held in the I/O queue, lands after the second one's and takes
 *      the frontier back behind a block the durable MAP names, past the redo pointer that
 *      would have replayed it)
 *   M7 a MAP page another running checkpoint is writing counts as written for this one only
 *      once that write completes: then this run's fsync covers it. A page is clean for
 *      every run once one run has written it (dirty[] is shared), so the older of two
 *      overlapping checkpoints skipped a MAP page the newer one had in flight, fsynced
 *      without it, and wrote its control file over the format's MAP (no mutant: the
 *      wait is the rule; docs/umbra-findings.md 9.2)
 * Runtime check: an allocated block is no page's current block, completed baseline or
 * running snapshot (protected_slot), which M1 and M5's mutants break before any crash.
 * Compaction is modelled as the allocation order (the lowest freed block first, then the
 * frontier): the background relocation of live tail blocks is not modelled.
 *
 * Metadata fork: superblock 0 magic 'PNSB' u32 | 4 next_free u32 | 8 heap pages u32 | 12
 * crc32c of [0, 12) u32; MAP page k at (1 + k) * page_size: 0 magic 'PNMP' u32 | 4 crc32c of
 * [8, page_size) u32 (remap_map_torn only; else 0) | 8 k u32 | 12 0 | 16 one u32 a logical page.
 */
#include "umbra.h"

#include "crc32c.h"
#include "protocols.h"

#include <stdlib.h>
#include <string.h>

/* A page's handles: its current block, the completed baseline, each running snapshot. */
#define HANDLES (2u + PN_MAX_CKPT_RUNS)
#define UNBOUND UINT32_MAX
#define SB_MAGIC 0x42534E50u  /* "PNSB" */
#define MAP_MAGIC 0x504D4E50u /* "PNMP" */
#define SB_BYTES 512u
#define MAP_HEADER 16u
#define EXT_FULL 16u /* {old, new, logical_nblocks, next_free} */
#define EXT_SLIM 12u /* remap_next_free_unlogged: without next_free */
#define IN_USE UINT64_MAX
#define POLL_NS 20000u
#define NO_WRITE UINT32_MAX /* remap_run.writing: no metadata write in flight */

/* A block's uses, for the runtime check (derived from the rest of the state). */
enum { USE_CURRENT = 1, USE_BASE = 2, USE_SNAP = 4 };

/* A running checkpoint: its snapshot of the map at begin and its durable step. */
struct remap_run {
	bool valid;
	uint64_t seq;
	uint32_t step;    /* MAP page k, then the superblock, then the fsync */
	uint32_t writing; /* M6: the metadata block its write in flight lays, or NO_WRITE */
	uint8_t *snap_h;  /* page -> handle at begin */
	uint32_t *snap_pblk;
	uint8_t *buf; /* the write in flight (scratch) */
};

struct remap {
	uint32_t heap_pages, cap, npages, per_page;
	uint32_t *pblk;      /* page * HANDLES + handle -> physical block, or UNBOUND */
	uint8_t *base_h;     /* page -> the completed checkpoint's handle */
	uint32_t *base_pblk; /* and its physical block */
	uint64_t *release;   /* block -> IN_USE, 0 (free), or the seq whose end frees it */
	uint8_t *uses;       /* block -> USE_* */
	uint8_t *dirty;      /* MAP page -> written since its last write */
	pn_lsn *lsn;         /* MAP page -> its last remap's end (WAL before MAP) */
	uint32_t next_free;  /* the allocator frontier */
	uint32_t nfree, low; /* free blocks below it, and none free below low (derived) */
	uint64_t seq_begun, seq_done;
	uint32_t high; /* the frontier's high-water mark (space metric) */
	struct remap_run runs[PN_MAX_CKPT_RUNS];
};

static struct remap *remap_of(const struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state != NULL);
	return pc->state;
}

static uint32_t mut(const struct pn_proto_ctx *pc) { return pc->sc->protocol.mutations; }

static uint32_t generations(const struct pn_scenario *sc)
{
	PN_ASSERT(sc->protocol.policy == PN_POLICY_REMAP);
	return HANDLES;
}

static uint64_t place(void *ctx, uint32_t page, uint32_t slot)
{
	const struct remap *r = ctx;
	PN_ASSERT(page < r->heap_pages && slot < HANDLES);
	PN_ASSERT(r->pblk[page * HANDLES + slot] != UNBOUND);
	return r->pblk[page * HANDLES + slot];
}

static uint32_t current(const struct pn_proto_ctx *pc, uint32_t page)
{
	return remap_of(pc)->pblk[page * HANDLES + pn_store_slot(pc->store, page)];
}

/* The checkpoints' bits of uses[], from the baselines and the running snapshots. */
static void recount_uses(const struct pn_proto_ctx *pc)
{
	struct remap *r = remap_of(pc);
	for (uint32_t b = 0; b < r->cap; b++)
		r->uses[b] = 0;
	for (uint32_t p = 0; p < r->heap_pages; p++) {
		r->uses[current(pc, p)] |= USE_CURRENT;
		r->uses[r->base_pblk[p]] |= USE_BASE;
		for (int i = 0; i < PN_MAX_CKPT_RUNS; i++)
			if (r->runs[i].valid)
				r->uses[r->runs[i].snap_pblk[p]] |= USE_SNAP;
	}
}

/* Block b's release; the count of free blocks below the frontier follows. */
static void set_release(struct remap *r, uint32_t b, uint64_t v)
{
	PN_ASSERT(b < r->cap);
	bool was = r->release[b] == 0 && b < r->next_free, is = v == 0 && b < r->next_free;
	r->release[b] = v;
	r->nfree = r->nfree + is - was;
	if (is && b < r->low)
		r->low = b;
}

static void recount_free(struct remap *r)
{
	r->nfree = 0;
	r->low = r->next_free;
	for (uint32_t b = r->next_free; b-- > 0;)
		if (r->release[b] == 0) {
			r->nfree++;
			r->low = b;
		}
}

/* Blocks that are free now: below the frontier and released, or past it. */
static uint32_t free_blocks(const struct remap *r) { return r->cap - r->next_free + r->nfree; }

/* The lowest freed block (compaction: holes before growth), else the frontier. */
static uint32_t allocate(struct pn_proto_ctx *pc, uint32_t page)
{
	struct remap *r = remap_of(pc);
	uint32_t b = r->low;
	while (b < r->next_free && r->release[b] != 0)
		b++;
	PN_ASSERT(b < r->cap);
	if (b == r->next_free)
		r->next_free++;
	if (r->next_free > r->high)
		r->high = r->next_free;
	if (r->uses[b])
		pn_svc_violation(pc->svc, PN_VIOL_PROTECTED_SLOT, page,
				 "page %u takes physical block %u, still %s (M1, M5)", page, b,
				 r->uses[b] & USE_BASE   ? "the completed checkpoint's baseline"
				 : r->uses[b] & USE_SNAP ? "a running checkpoint's snapshot"
							 : "another page's current block");
	set_release(r, b, IN_USE);
	r->low = b + 1;
	return b;
}

/* M1, M5: when `old`, which page left, becomes free. */
static void release_old(struct pn_proto_ctx *pc, uint32_t page, uint32_t old)
{
	struct remap *r = remap_of(pc);
	uint64_t at = r->seq_begun + 1;
	if (mut(pc) & PN_MUT_REMAP_EARLY_RECLAIM)
		at = r->seq_begun; /* the bug: the checkpoint running now still began before */
	if ((mut(pc) & PN_MUT_REMAP_COMPACT_UNSAFE) && old != r->base_pblk[page])
		at = 0; /* the bug: a running checkpoint's snapshot is not asked */
	set_release(r, old, at <= r->seq_done ? 0 : at);
}

static void map_dirty(struct remap *r, uint32_t page, pn_lsn lsn)
{
	uint32_t k = page / r->per_page;
	r->dirty[k] = 1;
	if (lsn > r->lsn[k])
		r->lsn[k] = lsn;
}

/* ---- write path ---- */

/* The first change after the redo pointer remaps; a hint keeps md's image (WAL_AND_REDO
 * 2.1: XLOG_FPI_FOR_HINT, no remap). */
static unsigned decide(const struct pn_proto_ctx *pc, enum pn_block_use use, bool before_redo)
{
	PN_ASSERT(use <= PN_USE_SLRU);
	switch (use) {
	case PN_USE_SLRU: return pn_protocol_slru_image(pc, before_redo);
	case PN_USE_HINT:
	case PN_USE_HINT_BLOCK:
		return before_redo && !(mut(pc) & PN_MUT_HINT_NO_FPI) ? PN_PROTECT_IMAGE : 0;
	case PN_USE_DEDUP:
		if (mut(pc) & PN_MUT_DEDUP_NO_IMAGE)
			return 0; /* REGBUF_NO_IMAGE: no image, no automatic remap */
				  /* fall through */
	case PN_USE_WILL_INIT:
	case PN_USE_CHANGE: return before_redo ? PN_PROTECT_SHIFT : 0;
	}
	return 0;
}

/* A handle no checkpoint names (the current one, the completed baseline, a running
 * snapshot), with blocks to spare for every block of a record; else an image. */
static uint32_t shift_target(struct pn_proto_ctx *pc, uint32_t page)
{
	struct remap *r = remap_of(pc);
	PN_ASSERT(page < r->heap_pages);
	uint32_t busy = 1u << pn_store_slot(pc->store, page) | 1u << r->base_h[page];
	for (int i = 0; i < PN_MAX_CKPT_RUNS; i++)
		if (r->runs[i].valid)
			busy |= 1u << r->runs[i].snap_h[page];
	if (free_blocks(r) < PN_WAL_MAX_BLOCKS)
		return PN_SHIFT_IMAGE;
	for (uint32_t h = 0; h < HANDLES; h++)
		if (!(busy & (1u << h)))
			return h;
	return PN_SHIFT_IMAGE;
}

/* BKPBLOCK_HAS_REMAP: the new block is allocated here, before the insert, and published
 * after it (shifted). */
static void assemble(struct pn_proto_ctx *pc, uint32_t frame, struct pn_wal_block *b, uint8_t *page,
		     bool rdata)
{
	struct remap *r = remap_of(pc);
	(void)frame;
	(void)page;
	(void)rdata;
	PN_ASSERT(b->has_shift && b->blkno < r->heap_pages && b->shift_target < HANDLES);
	uint32_t old = r->pblk[b->blkno * HANDLES + b->shift_source];
	uint32_t nb = allocate(pc, b->blkno);
	r->pblk[b->blkno * HANDLES + b->shift_target] = nb;
	pn_put32(b->ext, old);
	pn_put32(b->ext + 4, nb);
	pn_put32(b->ext + 8, pc->store->nblocks);
	pn_put32(b->ext + 12, r->next_free);
	b->ext_len = mut(pc) & PN_MUT_REMAP_NEXT_FREE_UNLOGGED ? EXT_SLIM : EXT_FULL;
}

/* Publication after the insert: the map names the new block, the MAP page is dirty with
 * the record's end, the old block waits for its reclaim (M1). */
static void shifted(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target, pn_lsn lsn)
{
	struct remap *r = remap_of(pc);
	uint32_t page = pn_buf_frame(pn_proto_buf(pc), frame)->page;
	PN_ASSERT(page < r->heap_pages && lsn > 0);
	uint32_t old = current(pc, page);
	pn_store_set_slot(pc->store, page, target);
	r->uses[old] &= (uint8_t)~USE_CURRENT;
	r->uses[current(pc, page)] |= USE_CURRENT;
	release_old(pc, page, old);
	map_dirty(r, page, lsn);
	pc->m->shifts++;
}

/* ---- the metadata fork ---- */

static void encode_super(const struct remap *r, uint8_t *out)
{
	memset(out, 0, SB_BYTES);
	pn_put32(out, SB_MAGIC);
	pn_put32(out + 4, r->next_free);
	pn_put32(out + 8, r->heap_pages);
	pn_put32(out + 12, pn_crc32c(out, 12));
}

static void encode_map(const struct pn_proto_ctx *pc, uint32_t k, uint8_t *out)
{
	const struct remap *r = remap_of(pc);
	uint32_t ps = pc->store->page_size;
	memset(out, 0, ps);
	pn_put32(out, MAP_MAGIC);
	pn_put32(out + 8, k);
	for (uint32_t i = 0; i < r->per_page && k * r->per_page + i < r->heap_pages; i++)
		pn_put32(out + MAP_HEADER + 4 * i, current(pc, k * r->per_page + i));
	if (mut(pc) & PN_MUT_REMAP_MAP_TORN)
		pn_put32(out + 4, pn_crc32c(out + 8, ps - 8));
}

static uint64_t file_size(const struct pn_proto_ctx *pc, enum pn_file f)
{
	PN_ASSERT(f < PN_FILE_COUNT);
	return f == PN_FILE_SELECTOR ? (uint64_t)(1 + remap_of(pc)->npages) * pc->store->page_size
				     : 0;
}

static void format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx)
{
	struct remap *r = remap_of(pc);
	uint8_t *buf = r->runs[0].buf;
	encode_super(r, buf);
	write(ctx, PN_FILE_SELECTOR, 0, buf, SB_BYTES);
	for (uint32_t k = 0; k < r->npages; k++) {
		encode_map(pc, k, buf);
		write(ctx, PN_FILE_SELECTOR, (uint64_t)(1 + k) * pc->store->page_size, buf,
		      pc->store->page_size);
	}
}

/* ---- checkpoint ---- */

static struct remap_run *run_of(const struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	struct remap_run *rr = &remap_of(pc)->runs[run->seq % PN_MAX_CKPT_RUNS];
	PN_ASSERT(run->seq > 0);
	return rr;
}

static void ckpt_begin(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	struct remap *r = remap_of(pc);
	struct remap_run *rr = run_of(pc, run);
	PN_ASSERT(!rr->valid);
	rr->valid = true;
	rr->seq = run->seq;
	rr->step = 0;
	rr->writing = NO_WRITE;
	for (uint32_t p = 0; p < r->heap_pages; p++) {
		rr->snap_h[p] = (uint8_t)pn_store_slot(pc->store, p);
		rr->snap_pblk[p] = current(pc, p);
	}
	r->seq_begun = run->seq;
	recount_uses(pc);
	pn_ckpt_select(pn_proto_ckpt(pc), run);
}

/* Whether a running checkpoint other than rr has a write of metadata block `block` (0 the
 * superblock, 1 + k MAP page k) in flight. */
static bool meta_in_flight(const struct pn_proto_ctx *pc, const struct remap_run *rr,
			   uint32_t block)
{
	const struct remap *r = remap_of(pc);
	for (int i = 0; i < PN_MAX_CKPT_RUNS; i++)
		if (&r->runs[i] != rr && r->runs[i].valid && r->runs[i].writing == block)
			return true;
	return false;
}

/* M6: rr waits to write `block` while another checkpoint's write of it is in flight. */
static bool meta_busy(const struct pn_proto_ctx *pc, const struct remap_run *rr, uint32_t block)
{
	return !(mut(pc) & PN_MUT_REMAP_META_CONCURRENT) && meta_in_flight(pc, rr, block);
}

/* Writes metadata block `block` of rr's checkpoint from rr->buf (len bytes; M6: marked in
 * flight until its completion, ckpt_io_done). */
static void meta_write(struct pn_proto_ctx *pc, struct pn_ckpt_run *run, struct remap_run *rr,
		       uint32_t block, uint32_t len)
{
	PN_ASSERT(rr->writing == NO_WRITE);
	rr->writing = block;
	pn_ckpt_run_io(pn_proto_ckpt(pc), run, PN_IO_WRITE, PN_FILE_SELECTOR,
		       (uint64_t)block * pc->store->page_size, rr->buf, len);
}

/* After the data fsync: each dirty MAP page once its WAL is flushed (M2), the superblock,
 * one fsync; then the checkpoint record. A block another checkpoint is writing waits for
 * that write to complete (M6). */
static uint64_t ckpt_durable_step(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	struct remap *r = remap_of(pc);
	struct remap_run *rr = run_of(pc, run);
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	while (rr->step < r->npages && !r->dirty[rr->step]) {
		if (meta_in_flight(pc, rr, 1 + rr->step))
			return POLL_NS; /* M7: its write must complete before this run's fsync */
		rr->step++;
	}
	if (rr->step < r->npages) {
		uint32_t k = rr->step;
		if (r->lsn[k] > pn_wal_flushed(pc->wal) &&
		    !(mut(pc) & PN_MUT_REMAP_MAP_BEFORE_WAL)) {
			pn_wal_start_flush(pc->wal, r->lsn[k]);
			return POLL_NS;
		}
		if (meta_busy(pc, rr, 1 + k))
			return POLL_NS;
		encode_map(pc, k, rr->buf);
		r->dirty[k] = 0;
		rr->step++;
		meta_write(pc, run, rr, 1 + k, pc->store->page_size);
	} else if (rr->step == r->npages) {
		if (meta_busy(pc, rr, 0))
			return POLL_NS;
		encode_super(r, rr->buf);
		rr->step++;
		meta_write(pc, run, rr, 0, SB_BYTES);
	} else {
		PN_ASSERT(rr->step == r->npages + 1);
		rr->step++;
		pn_ckpt_run_io(pn_proto_ckpt(pc), run, PN_IO_FSYNC, PN_FILE_SELECTOR, 0, NULL, 0);
	}
	return UINT64_MAX;
}

static void ckpt_io_done(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	run_of(pc, run)->writing = NO_WRITE; /* M6: its write, or its fsync, completed */
	if (run_of(pc, run)->step == remap_of(pc)->npages + 2)
		pn_ckpt_set_state(run, PN_C_RECORD);
}

/* The control file is durable: the snapshot is the baseline, and the blocks left before
 * this checkpoint began are free (M1). */
static void ckpt_end(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run)
{
	struct remap *r = remap_of(pc);
	struct remap_run *rr = run_of(pc, run);
	PN_ASSERT(rr->valid && rr->seq == run->seq);
	memcpy(r->base_h, rr->snap_h, r->heap_pages);
	memcpy(r->base_pblk, rr->snap_pblk, sizeof(uint32_t) * r->heap_pages);
	rr->valid = false;
	r->seq_done = run->seq;
	for (uint32_t b = 0; b < r->next_free; b++)
		if (r->release[b] != IN_USE && r->release[b] <= r->seq_done)
			set_release(r, b, 0);
	recount_uses(pc);
}

/* ---- recovery ---- */

static bool read_fork(struct pn_proto_ctx *pc, uint64_t off, uint32_t len, uint8_t *buf)
{
	return pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_SELECTOR, off, len, buf);
}

static bool fork_broken(struct pn_proto_ctx *pc, const char *what, uint32_t k)
{
	pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, UINT32_MAX,
			 "the metadata fork's %s %u is missing or unreadable: no map to recover "
			 "from",
			 what, k);
	return false;
}

/* Reads one MAP page's entries into handle 0 of its pages (M3). */
static bool read_map_page(struct pn_proto_ctx *pc, uint32_t k, uint8_t *buf)
{
	struct remap *r = remap_of(pc);
	uint32_t ps = pc->store->page_size;
	if (!read_fork(pc, (uint64_t)(1 + k) * ps, ps, buf) || pn_get32(buf) != MAP_MAGIC)
		return fork_broken(pc, "MAP page", k);
	if ((mut(pc) & PN_MUT_REMAP_MAP_TORN) && pn_get32(buf + 4) != pn_crc32c(buf + 8, ps - 8))
		return fork_broken(pc, "MAP page (its page checksum fails: torn)", k);
	for (uint32_t i = 0; i < r->per_page && k * r->per_page + i < r->heap_pages; i++) {
		uint32_t p = k * r->per_page + i, b = pn_get32(buf + MAP_HEADER + 4 * i);
		if (b >= r->cap)
			return fork_broken(pc, "MAP entry of page", p);
		r->pblk[p * HANDLES] = r->base_pblk[p] = b;
		for (uint32_t h = 1; h < HANDLES; h++)
			r->pblk[p * HANDLES + h] = UNBOUND;
		r->base_h[p] = 0;
		pn_store_set_slot(pc->store, p, 0);
	}
	return true;
}

/* The superblock and the MAP pages; every block no page maps waits for the end-of-recovery
 * checkpoint (a replayed remap's old block may be read until then). */
static bool recovery_begin(struct pn_proto_ctx *pc, const struct pn_control *ctl)
{
	struct remap *r = remap_of(pc);
	uint8_t *buf = r->runs[0].buf;
	if (!read_fork(pc, 0, SB_BYTES, buf) || pn_get32(buf) != SB_MAGIC ||
	    pn_get32(buf + 12) != pn_crc32c(buf, 12) || pn_get32(buf + 4) > r->cap)
		return fork_broken(pc, "superblock", 0);
	r->next_free = pn_get32(buf + 4);
	for (uint32_t k = 0; k < r->npages; k++)
		if (!read_map_page(pc, k, buf))
			return false;
	r->seq_begun = r->seq_done = ctl->ckpt_seq;
	for (int i = 0; i < PN_MAX_CKPT_RUNS; i++)
		r->runs[i].valid = false;
	memset(r->dirty, 0, r->npages);
	memset(r->lsn, 0, sizeof(pn_lsn) * r->npages);
	for (uint32_t b = 0; b < r->cap; b++)
		r->release[b] = b < r->next_free ? r->seq_done + 1 : 0;
	for (uint32_t p = 0; p < r->heap_pages; p++)
		r->release[r->base_pblk[p]] = IN_USE;
	recount_free(r);
	recount_uses(pc);
	return true;
}

/* Whether replay has published a remap of page p in this recovery: read_map_page binds
 * handle 0 only, and each replayed remap binds two handles (the old block and the new). */
static bool replayed(const struct remap *r, uint32_t p)
{
	for (uint32_t h = 1; h < HANDLES; h++)
		if (r->pblk[p * HANDLES + h] != UNBOUND)
			return true;
	return false;
}

/* A replayed remap (WAL_AND_REDO 7.2-7.4): the page is read through the old block, the
 * engine then moves it to the target handle, bound here to the new block. A page already
 * in a buffer is not read again: its bytes are what replay made of them.
 *
 * RR1 (the remap chain): once a remap of the page has been replayed, the next one's old
 * block is the block that one published. Before the first, the MAP's entry is not
 * compared: it may name a block newer than the record (a MAP page written by a checkpoint
 * that did not complete, after M2's WAL flush), which is harmless when the page is in a
 * buffer already, restored there from an earlier record's image (a hint's
 * XLOG_FPI_FOR_HINT after the redo pointer), and not read otherwise. */
static void redo_ext(struct pn_proto_ctx *pc, const struct pn_wal_block *b)
{
	struct remap *r = remap_of(pc);
	uint32_t p = b->blkno, t = b->shift_target;
	if (p >= r->heap_pages || t >= HANDLES || b->ext_len < EXT_SLIM)
		return;
	uint32_t old = pn_get32(b->ext), nb = pn_get32(b->ext + 4);
	uint32_t cur = pn_store_slot(pc->store, p);
	if (old >= r->cap || nb >= r->cap) {
		pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, p,
				 "remap of page %u names physical blocks %u -> %u of %u", p, old,
				 nb, r->cap);
		return;
	}
	if (replayed(r, p) && r->pblk[p * HANDLES + cur] != old)
		pn_svc_violation(pc->svc, PN_VIOL_MAPPING, p,
				 "redo of page %u's remap from block %u, but the remap replayed "
				 "before it moved the page to block %u (RR1)",
				 p, old, r->pblk[p * HANDLES + cur]);
	uint32_t src = cur != t ? cur : (t + 1) % HANDLES;
	r->pblk[p * HANDLES + src] = old;
	if (src != cur)
		pn_store_set_slot(pc->store, p, src);
	r->pblk[p * HANDLES + t] = nb;
	r->uses[old] &= (uint8_t)~USE_CURRENT;
	r->uses[nb] |= USE_CURRENT;
	r->release[old] = r->seq_done + 1;
	r->release[nb] = IN_USE;
	if (b->ext_len >= EXT_FULL && pn_get32(b->ext + 12) > r->next_free)
		r->next_free = pn_get32(b->ext + 12);
	recount_free(r);
	map_dirty(r, p, 0);
}

/* M4: replay has published every block it read a remap of; the frontier is past them. */
static void recovery_end(struct pn_proto_ctx *pc, pn_lsn end, pn_lsn last_start)
{
	struct remap *r = remap_of(pc);
	(void)end;
	(void)last_start;
	for (uint32_t p = 0; p < r->heap_pages; p++)
		if (current(pc, p) >= r->next_free) {
			pn_svc_violation(pc->svc, PN_VIOL_MAPPING, p,
					 "page %u maps to physical block %u, at or past the "
					 "allocator frontier %u after recovery (M2, M4)",
					 p, current(pc, p), r->next_free);
			return;
		}
}

/* ---- set-up, state, metrics ---- */

static bool init(struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state == NULL);
	struct remap *r = calloc(1, sizeof *r);
	if (!r)
		return false;
	pc->state = r;
	uint32_t n = pc->store->heap_pages, ps = pc->store->page_size;
	r->heap_pages = n;
	r->cap = HANDLES * n + 2 * PN_WAL_MAX_BLOCKS + n; /* what M1 can keep, and room */
	r->per_page = (ps - MAP_HEADER) / 4;
	r->npages = (n + r->per_page - 1) / r->per_page;
	r->next_free = r->high = r->low = n;
	if (!(r->pblk = malloc(sizeof(uint32_t) * HANDLES * n)) || !(r->base_h = calloc(n, 1)) ||
	    !(r->base_pblk = calloc(n, sizeof(uint32_t))) ||
	    !(r->release = calloc(r->cap, sizeof(uint64_t))) || !(r->uses = calloc(r->cap, 1)) ||
	    !(r->dirty = calloc(r->npages, 1)) || !(r->lsn = calloc(r->npages, sizeof(pn_lsn))))
		return false;
	for (int i = 0; i < PN_MAX_CKPT_RUNS; i++) {
		struct remap_run *rr = &r->runs[i];
		if (!(rr->snap_h = calloc(n, 1)) ||
		    !(rr->snap_pblk = calloc(n, sizeof(uint32_t))) ||
		    !(rr->buf = calloc(1, ps > SB_BYTES ? ps : SB_BYTES)))
			return false;
		rr->writing = NO_WRITE;
	}
	for (uint32_t p = 0; p < n; p++) {
		r->pblk[p * HANDLES] = r->base_pblk[p] = p;
		for (uint32_t h = 1; h < HANDLES; h++)
			r->pblk[p * HANDLES + h] = UNBOUND;
		r->release[p] = IN_USE;
		r->uses[p] = USE_CURRENT | USE_BASE;
	}
	pn_store_set_placement(pc->store, r->cap, place, r);
	return true;
}

static void remap_free(struct pn_proto_ctx *pc)
{
	struct remap *r = pc->state;
	if (!r)
		return;
	for (int i = 0; i < PN_MAX_CKPT_RUNS; i++) {
		free(r->runs[i].snap_h);
		free(r->runs[i].snap_pblk);
		free(r->runs[i].buf);
	}
	free(r->pblk);
	free(r->base_h);
	free(r->base_pblk);
	free(r->release);
	free(r->uses);
	free(r->dirty);
	free(r->lsn);
	free(r);
	pc->state = NULL;
}

/* The fingerprint's share (protocol.h memory): the handles' blocks, the baselines, each
 * block's release, the MAP pages' dirt and WAL-before-MAP LSNs, the frontier, the
 * checkpoint sequence numbers and each running checkpoint's snapshot, step and metadata write
 * in flight (M6). Not needed:
 * uses[], nfree and low (derived from those), high (a metric), the runs' buffers (scratch). */
static void memory(const struct pn_proto_ctx *pc, const struct pn_hasher *h)
{
	const struct remap *r = remap_of(pc);
	h->feed(h->ctx, r->pblk, sizeof(uint32_t) * HANDLES * r->heap_pages);
	h->feed(h->ctx, r->base_h, r->heap_pages);
	h->feed(h->ctx, r->base_pblk, sizeof(uint32_t) * r->heap_pages);
	h->feed(h->ctx, r->release, sizeof(uint64_t) * r->cap);
	h->feed(h->ctx, r->dirty, r->npages);
	h->feed(h->ctx, r->lsn, sizeof(pn_lsn) * r->npages);
	h->feed(h->ctx, &r->next_free, sizeof r->next_free);
	h->feed(h->ctx, &r->seq_begun, sizeof r->seq_begun);
	h->feed(h->ctx, &r->seq_done, sizeof r->seq_done);
	for (int i = 0; i < PN_MAX_CKPT_RUNS; i++) {
		const struct remap_run *rr = &r->runs[i];
		h->feed(h->ctx, &rr->valid, sizeof rr->valid);
		if (!rr->valid)
			continue;
		h->feed(h->ctx, &rr->seq, sizeof rr->seq);
		h->feed(h->ctx, &rr->step, sizeof rr->step);
		h->feed(h->ctx, &rr->writing, sizeof rr->writing);
		h->feed(h->ctx, rr->snap_h, r->heap_pages);
		h->feed(h->ctx, rr->snap_pblk, sizeof(uint32_t) * r->heap_pages);
	}
}

/* Space: the most physical blocks the heap ever spanned (the frontier's high-water mark). */
static void finish_metrics(struct pn_proto_ctx *pc) { pc->m->slots_used = remap_of(pc)->high; }

const struct pn_protocol_ops pn_protocol_umbra_remap = {
	.name = "umbra-remap",
	.store_flags = PN_STORE_SLOTTED,
	.setup = {.generations = generations,
		  .init = init,
		  .free = remap_free,
		  .format = format,
		  .file_size = file_size},
	.write = {.decide = decide,
		  .assemble = assemble,
		  .shift_target = shift_target,
		  .shifted = shifted,
		  .recheck = pn_protocol_recheck},
	.ckpt = {.begin = ckpt_begin,
		 .durable_step = ckpt_durable_step,
		 .io_done = ckpt_io_done,
		 .end = ckpt_end},
	.recovery = {.begin = recovery_begin, .redo_ext = redo_ext, .end = recovery_end},
	.state = {.memory = memory},
	.metrics = {.finish = finish_metrics},
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
const struct pn_protocol_decl pn_decl_umbra_remap = {
	.mode = PN_MODE_UMBRA,
	.policy = PN_POLICY_REMAP,
	.keys = PN_KEY_POLICY,
	.fixed = PN_KEY_GENERATIONS | PN_KEY_LAYOUT | PN_KEY_SPARE_SLOTS,
	.fixed_why = "the map names each page's physical blocks",
	.caps = 0,
	.mutants = PN_MUT_REMAP_EARLY_RECLAIM | PN_MUT_REMAP_MAP_BEFORE_WAL |
		   PN_MUT_REMAP_MAP_TORN | PN_MUT_REMAP_NEXT_FREE_UNLOGGED |
		   PN_MUT_REMAP_COMPACT_UNSAFE | PN_MUT_REMAP_META_CONCURRENT,
};

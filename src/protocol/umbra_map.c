/*
 * umbra_map.c: the umbra-l3 and umbra-l4 rows of the protocol table (protocol layer):
 * Umbra's two slot-shift lineages of the public implementation, as policies of mode umbra. docs/protocol.md section 4b says what each follows and
 * which readings were chosen where the implementation summary leaves a choice open.
 *
 *   l3  32-page chunks (pblk = (L/32)*32G + s*32 + L%32), a root page at selector block 0;
 *       a shift carries an image unless a running checkpoint has already selected the
 *       buffer (then it is image-free and its header says captured_source, 0x80), and that
 *       checkpoint writes the buffer's current bytes to the source slot;
 *   l4  P = G*L + s, no root; every ordinary shift is image-free; a shift after a running
 *       checkpoint's redo tags the buffer with that checkpoint's epoch, and a tagged buffer
 *       the checkpoint selected is written to the previous slot (the source).
 * Both: target = (source + 1) mod G; the shift is published (selector := target) in a step
 * after its WAL insert, under DELAY_CHKPT_START, which the checkpoint waits out before it
 * selects buffers; the selector lives in pages of 2-bit entries (4 per byte, no header, no
 * checksum, no torn-write protection), written after the WAL up to the last shift they
 * carry is flushed: by the checkpoint after selection and before the data writes, and by
 * the background writer (mapwriter); recovery reads them, and an image-free shift in redo
 * sets the selector to its source, reads the page there, then moves it to the target.
 *
 * Selector file (PN_FILE_SELECTOR), blocks of page_size bytes: MAP page k (heap pages
 * [4*page_size*k, 4*page_size*(k+1))) is block (k/256)*258 + 2 + k%256, plus 1 in l3 (the
 * FSM and VM selector pages of each 258-page group are left unused: the model has no FSM or
 * VM fork). Entry i of a page: bits 2*(i%4) of byte i/4; values >= generations are invalid.
 * Truncation (Storage/TRUNCATE to n): the store resets the entries of pages n and up to slot
 * 0 (MapResetActiveSlots, in both lineages here: L4 061's "regrowth restores the selector
 * default (slot 0)"; L3 070's retained nonzero slot is not modelled) and their MAP pages
 * are dirtied with the record's end as their WAL-before-MAP LSN, so the map writer or the
 * checkpoint flushes the record first. Mutation truncate_reset_no_wal: with LSN 0, the
 * implementation's InvalidXLogRecPtr, so the reset may reach the disk before the record.
 * Redo of the record dirties them with no LSN (the record is durable).
 * l3 root (block 0): 0 magic 'PNRT' u32 | 8 crc32c u32 over [16, page_size) | 16 flags u32
 * = 0x3 (MAIN_SLOT0 | 0x1) | 20 heap pages u32; written at format, never rewritten.
 */
#include "umbra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOT_MAGIC 0x54524E50u /* "PNRT" */
#define CHUNK 32u
#define POLL_NS 20000u
#define STEP_NS 5000u
#define GUTS_NS 200000u /* 200 us from the redo pointer to the buffer selection */

/* The selector (MAP) pages, 2 bits per heap page: pc->state. */
struct umbra_map {
	uint32_t npages;
	uint8_t *dirty, *busy, *ckpt_needed; /* per MAP page */
	pn_lsn *lsn;                         /* wal_flush_lsn: WAL before the MAP page */
	struct umbra_pub *pubs;              /* per backend */
	uint32_t npubs;
};

/* A backend's shift between its WAL and its publication (DELAY_CHKPT_START: a checkpoint
 * does not select while one is pending). */
struct umbra_pub {
	bool pending;
	uint32_t target;
	pn_lsn lsn;
};

/*
 * A backend's protocol step (its PN_B_PROTO sub-state, pn_proc.proto_sub; the numbers after
 * PN_B_PROTO are what the world's trace shows: publish, held):
 *   INSERT --a pending shift (after_insert)--> PUBLISH --published (proc_step)--> NEXT
 *   INSERT --an update_hold (after_insert)--> HELD --its release is the script's next
 *   step: published (proc_step)--> NEXT
 */
enum umbra_pub_state { UMBRA_PUB_PUBLISH, UMBRA_PUB_HELD, UMBRA_PUB_COUNT };

static uint64_t pn_umbra_slot_index(const struct pn_proto_ctx *pc, uint32_t page, uint32_t slot);
static uint64_t pn_umbra_heap_slots(const struct pn_proto_ctx *pc);
static void pn_umbra_publish_page(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target,
				  pn_lsn lsn);

static struct umbra_map *map_of(const struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state != NULL);
	return pc->state;
}

static void map_ckpt_begin(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	run->pause_select = pn_proto_ckpt(pc)->pause_select_next;
	pn_proto_ckpt(pc)->pause_select_next = false;
	run->select_ns = run->start_ns + GUTS_NS;
	pn_ckpt_set_state(run, PN_C_PROTO_SELECT);
	run->proto_sub = UC_SELECT;
}

static bool is_l3(const struct pn_proto_ctx *pc) { return pc->sc->protocol.policy == PN_POLICY_L3; }

static uint32_t entries_per_map_page(const struct pn_proto_ctx *pc)
{
	return pc->store->page_size * 4u;
}

static uint64_t map_block(const struct pn_proto_ctx *pc, uint32_t k)
{
	return (is_l3(pc) ? 1u : 0u) + (uint64_t)(k / 256u) * 258u + 2u + k % 256u;
}

static uint64_t place(void *ctx, uint32_t page, uint32_t slot)
{
	return pn_umbra_slot_index(ctx, page, slot);
}

static bool map_init(struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state == NULL);
	pc->state = calloc(1, sizeof(struct umbra_map));
	if (!pc->state)
		return false;
	/* l3/l4 give every page all its generations (the store asks only for a home each) */
	PN_ASSERT(pn_umbra_heap_slots(pc) >=
		  (uint64_t)pc->store->heap_pages * pc->store->generations);
	pn_store_set_placement(pc->store, pn_umbra_heap_slots(pc), place, pc);
	uint32_t n = (pc->store->heap_pages + entries_per_map_page(pc) - 1) /
		     entries_per_map_page(pc);
	map_of(pc)->npages = n;
	map_of(pc)->dirty = calloc(3, n);
	map_of(pc)->lsn = calloc(n, sizeof(pn_lsn));
	if (!map_of(pc)->dirty || !map_of(pc)->lsn)
		return false;
	map_of(pc)->npubs = pc->nbackends;
	map_of(pc)->pubs = calloc(pc->nbackends ? pc->nbackends : 1, sizeof(struct umbra_pub));
	if (!map_of(pc)->pubs)
		return false;
	map_of(pc)->busy = map_of(pc)->dirty + n;
	map_of(pc)->ckpt_needed = map_of(pc)->dirty + 2u * n;
	return true;
}

static void map_free(struct pn_proto_ctx *pc)
{
	if (!pc->state)
		return;
	free(map_of(pc)->dirty);
	free(map_of(pc)->lsn);
	free(map_of(pc)->pubs);
	free(pc->state);
	pc->state = NULL;
}

static uint64_t pn_umbra_slot_index(const struct pn_proto_ctx *pc, uint32_t page, uint32_t slot)
{
	if (!is_l3(pc))
		return (uint64_t)page * pc->store->generations + slot;
	return (uint64_t)(page / CHUNK) * CHUNK * pc->store->generations + (uint64_t)slot * CHUNK +
	       page % CHUNK;
}

static uint64_t pn_umbra_heap_slots(const struct pn_proto_ctx *pc)
{
	if (!is_l3(pc))
		return (uint64_t)pc->store->heap_pages * pc->store->generations;
	return (uint64_t)((pc->store->heap_pages + CHUNK - 1) / CHUNK) * CHUNK *
	       pc->store->generations;
}

/* ---- selector (MAP) pages ---- */

static void encode_map(const struct pn_proto_ctx *pc, uint32_t k, uint8_t *out)
{
	uint32_t per = entries_per_map_page(pc), first = k * per;
	memset(out, 0, pc->store->page_size);
	for (uint32_t i = 0; i < per && first + i < pc->store->heap_pages; i++)
		out[i / 4] |= (uint8_t)(pn_store_slot(pc->store, first + i) << (2 * (i % 4)));
}

static void encode_root(const struct pn_proto_ctx *pc, uint8_t *out)
{
	memset(out, 0, pc->store->page_size);
	pn_put32(out, ROOT_MAGIC);
	pn_put32(out + 16, 0x3);
	pn_put32(out + 20, pc->store->heap_pages);
	pn_put32(out + 8, pn_crc32c(out + 16, pc->store->page_size - 16));
}

static void map_format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx)
{
	uint8_t *buf = pc->svc->io_bufs +
		       (size_t)pc->svc->nios * 2u * pc->store->page_size; /* spare buffer */
	if (is_l3(pc)) {
		encode_root(pc, buf);
		write(ctx, PN_FILE_SELECTOR, 0, buf, pc->store->page_size);
	}
	/* A new relation's _map holds its first selector page (t/053: 3 pages, FSM, VM, MAIN);
	 * the others appear when first written (MapPublishSlotShift extends the file). */
	for (uint32_t k = 0; k < PN_MIN(map_of(pc)->npages, 1u); k++) {
		encode_map(pc, k, buf);
		write(ctx, PN_FILE_SELECTOR, map_block(pc, k) * pc->store->page_size, buf,
		      pc->store->page_size);
	}
}

static void pn_umbra_map_dirty(struct pn_proto_ctx *pc, uint32_t page, pn_lsn lsn)
{
	uint32_t k = page / entries_per_map_page(pc);
	map_of(pc)->dirty[k] = 1;
	if (lsn > map_of(pc)->lsn[k])
		map_of(pc)->lsn[k] = lsn;
}

static void map_write_done(void *ctx, struct pn_io *io)
{
	struct pn_proto_ctx *pc = ctx;
	map_of(pc)->busy[io->aux] = 0;
	if (io->proc != UINT32_MAX)
		pn_svc_wake(pc->svc, io->proc, 0);
}

/* MapPageFlushBuffer: the caller has flushed the WAL to lsn[k]. The bytes are bound at
 * issue; a publication during the write dirties the page again (JUST_DIRTIED). */
static void map_write(struct pn_proto_ctx *pc, uint32_t k, uint32_t proc)
{
	PN_ASSERT(map_of(pc)->lsn[k] <= pn_wal_flushed(pc->wal));
	struct pn_io *io = pn_io_get(pc->svc);
	io->op = PN_IO_WRITE;
	io->file = PN_FILE_SELECTOR;
	io->why = PN_WHY_SELECTOR;
	io->offset = map_block(pc, k) * pc->store->page_size;
	io->len = pc->store->page_size;
	io->aux = k;
	io->proc = proc;
	io->done = map_write_done;
	io->ctx = pc;
	encode_map(pc, k, io->buf);
	map_of(pc)->dirty[k] = 0;
	map_of(pc)->busy[k] = 1;
	pn_io_issue(pc->svc, io);
}

static void pn_umbra_mapwriter(struct pn_proto_ctx *pc)
{
	for (uint32_t k = 0; k < map_of(pc)->npages; k++) {
		if (!map_of(pc)->dirty[k] || map_of(pc)->busy[k])
			continue;
		if (map_of(pc)->lsn[k] <= pn_wal_flushed(pc->wal))
			map_write(pc, k, UINT32_MAX);
		else
			pn_wal_start_flush(pc->wal, pn_wal_insert_lsn(pc->wal));
	}
}

/* ---- backends: assembly and publication ---- */

/* A run that has not selected its buffers yet. */
static bool selecting(const struct pn_ckpt_run *run)
{
	return run->state == PN_C_PROTO_SELECT && run->proto_sub == UC_SELECT;
}

/* BufferCheckpointSourceSlotCaptureIsPossible: a running checkpoint has selected the
 * buffer and not written it yet, and will write it to the shift's source (the current
 * slot). With two checkpoints at once a page may shift twice while the older one still
 * holds the buffer: that run writes the first shift's source, and the second shift's
 * source, which no run wrote, needs the image (docs/umbra-findings.md section 10). Not
 * while a write of the buffer is in flight: its image was copied before the changes since,
 * and the run it completes for need not write again (bufpool.c B9), so the source would
 * miss a change made before a newer run's redo pointer, which recovery from that run does
 * not replay (section 10, 2026-12-07). */
static int capture_run(const struct pn_proto_ctx *pc, const struct pn_frame *f)
{
	uint32_t source = pn_store_slot(pc->store, f->page);
	if (f->io_writes)
		return -1;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		const struct pn_ckpt_run *run = &pn_proto_ckpt(pc)->runs[r];
		if (run->state != PN_C_IDLE && !selecting(run) && (f->ckpt_needed & (1u << r)) &&
		    f->ckpt_slot[r] == source)
			return r;
	}
	return -1;
}

static void pn_umbra_assemble_block(struct pn_proto_ctx *pc, uint32_t frame, struct pn_wal_block *b,
				    uint8_t *page, bool rdata)
{
	if (!is_l3(pc)) {
		/* XLogRecordBlockUmbraHeader{flags = XLOG_UMBRA_BLOCK_HAS_SLOT_SHIFT} + target:
		 * the same two bytes; redo derives the source, previous(target). */
		b->shift_source = 0x01u;
		return;
	}
	if (b->has_image || b->will_init)
		return;
	bool captured = capture_run(pc, pn_buf_frame(pn_proto_buf(pc), frame)) >= 0 && rdata;
	PN_TESTCASE("l3: image-free shift of a buffer the checkpoint selected (captured_source)",
		    captured);
	if (captured) {
		b->shift_source |= 0x80u; /* XLR_SLOT_SHIFT_CAPTURED_SOURCE */
		return;
	}
	/* FPI-backed shift: the image replaces the block data, as an FPI does. */
	b->data = NULL;
	b->data_len = 0;
	b->has_image = b->image_apply = true;
	b->image = page;
	pn_page_hole(page, pc->store->page_size, &b->hole_offset, &b->hole_length);
}

static struct umbra_pub *pub_of(struct pn_proto_ctx *pc, const struct pn_proc *p)
{
	PN_ASSERT(p->kind == PN_PROC_BACKEND);
	PN_ASSERT(p->id < map_of(pc)->npubs);
	return &map_of(pc)->pubs[p->id];
}

static void defer_shift(struct pn_proto_ctx *pc, const struct pn_proc *p, uint32_t target,
			pn_lsn lsn)
{
	struct umbra_pub *u = pub_of(pc, p);
	PN_ASSERT(!u->pending);
	u->pending = true;
	u->target = target;
	u->lsn = lsn;
}

static bool after_insert(struct pn_proto_ctx *pc, struct pn_proc *p, bool hold)
{
	const struct umbra_pub *u = pub_of(pc, p);
	PN_ASSERT(p->state == PN_B_INSERT);
	if (!u->pending && !hold)
		return false;
	p->proto_sub = hold ? UMBRA_PUB_HELD : UMBRA_PUB_PUBLISH;
	return true;
}

/* A HELD backend: true when its release step is the script's next (it is taken). */
static bool take_release(struct pn_proto_ctx *pc, struct pn_proc *p)
{
	struct pn_step st;
	PN_ASSERT(p->proto_sub == UMBRA_PUB_HELD);
	if (pn_client_next(pn_proto_client(pc), p, &st) != PN_CLIENT_OP)
		return false;
	PN_ASSERT(st.op == PN_OP_RELEASE); /* the loader pairs each hold with its release */
	p->op = st;
	return true;
}

static bool proc_step(struct pn_proto_ctx *pc, struct pn_proc *p)
{
	struct umbra_pub *u = pub_of(pc, p);
	PN_ASSERT(p->state == PN_B_PROTO);
	PN_ASSERT(p->proto_sub >= 0 && p->proto_sub < UMBRA_PUB_COUNT);
	if (p->proto_sub == UMBRA_PUB_HELD && !take_release(pc, p))
		return false; /* woken when its release is the script's next step */
	if (!u->pending)
		return true; /* a held update that did not shift */
	pn_umbra_publish_page(pc, p->frame, u->target, u->lsn);
	u->pending = false;
	return true;
}

static void pn_umbra_publish_page(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target,
				  pn_lsn lsn)
{
	struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), frame);
	uint32_t pg = f->page;
	uint32_t source = pn_store_slot(pc->store, pg);
	if ((source + 1u) % pc->store->generations != target) {
		pn_svc_violation(pc->svc, PN_VIOL_MAPPING, pg,
				 "MapPublishSlotShift: page %u is on slot "
				 "%u, not the source of its shift to %u",
				 pg, source, target);
		return;
	}
	if (!is_l3(pc)) {
		/* BufferPublishUmbraSlotShift: tag with the newest epoch whose redo precedes it. */
		const struct pn_ckpt_run *tag = NULL;
		for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
			const struct pn_ckpt_run *run = &pn_proto_ckpt(pc)->runs[r];
			if (run->state != PN_C_IDLE && lsn > run->redo &&
			    (!tag || run->seq > tag->seq))
				tag = run;
		}
		if (tag && f->shift_epoch == tag->seq) {
			pn_svc_violation(pc->svc, PN_VIOL_MAPPING, pg,
					 "page %u shifted twice in checkpoint "
					 "epoch %llu",
					 pg, (unsigned long long)tag->seq);
			return;
		}
		PN_TESTCASE("l4: a shift tags its buffer with the running checkpoint's epoch",
			    tag != NULL);
		if (tag)
			f->shift_epoch = tag->seq;
	}
	pn_store_set_slot(pc->store, pg, target);
	pc->m->shifts++;
	pn_umbra_map_dirty(pc, pg, lsn);
}

static void truncated(struct pn_proto_ctx *pc, uint32_t from, uint32_t to, pn_lsn lsn)
{
	bool no_wal = (pc->sc->protocol.mutations & PN_MUT_TRUNCATE_RESET_NO_WAL) != 0;
	PN_TESTCASE("l3/l4: a truncate's selector reset with no WAL-before-MAP", no_wal && lsn);
	for (uint32_t pg = from; pg < to; pg++)
		pn_umbra_map_dirty(pc, pg, no_wal ? 0 : lsn);
}

/* ---- checkpointer ---- */

static uint8_t pn_umbra_ckpt_slot(const struct pn_proto_ctx *pc, const struct pn_frame *f,
				  const struct pn_ckpt_run *run)
{
	uint8_t cur = pn_store_slot(pc->store, f->page);
	/* l4 FlushBuffer: a buffer tagged with this epoch goes to previous(active), its source. */
	if (!is_l3(pc) && f->shift_epoch == run->seq)
		return (uint8_t)((cur + pc->store->generations - 1u) % pc->store->generations);
	return cur;
}

static bool delay_chkpt(const struct pn_proto_ctx *pc)
{
	const struct umbra_map *m = map_of(pc);
	for (uint32_t i = 0; i < m->npubs; i++)
		if (m->pubs[i].pending)
			return true;
	return false;
}

static uint64_t pn_umbra_ckpt_select(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	uint32_t r = (uint32_t)(run - pn_proto_ckpt(pc)->runs);
	/* CheckPointGuts flushes the SLRUs and the rest before the buffers: a window between
	 * the redo pointer and the selection that backends and evictions use. */
	uint64_t now = pc->svc->env.now_ns(pc->svc->env.ctx);
	if (now < run->select_ns)
		return run->select_ns - now;
	if (run->pause_select)
		return UINT64_MAX; /* umbra-checkpoint-after-capture / -after-shift-epoch */
	bool waiting = run->delay_wait = delay_chkpt(pc) &&
					 !(pc->sc->protocol.mutations & PN_MUT_NO_DELAY_CHKPT);
	PN_TESTCASE("checkpoint waits for a shift between its WAL and its publication", waiting);
	if (waiting)
		return POLL_NS; /* the fresh DELAY_CHKPT_START wait */
	pn_ckpt_select(pn_proto_ckpt(pc), run);
	for (uint32_t k = 0; k < map_of(pc)->npages; k++)
		if (map_of(pc)->dirty[k])
			map_of(pc)->ckpt_needed[k] |= (uint8_t)(1u << r);
	run->proto_sub = UC_MAP_WRITE;
	return STEP_NS;
}

static uint8_t pn_umbra_write_slot(const struct pn_proto_ctx *pc, struct pn_frame *f, int r)
{
	/* l4's FlushBuffer decides at each write (tagged: previous(active), else active); l3
	 * writes where selection and a captured shift put it (the prototype's rule). */
	if (!is_l3(pc))
		f->ckpt_slot[r] = pn_umbra_ckpt_slot(pc, f, &pn_proto_ckpt(pc)->runs[r]);
	return f->ckpt_slot[r];
}

static bool pn_umbra_ckpt_reached(const struct pn_proto_ctx *pc, uint64_t seq, bool resumed)
{
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		const struct pn_ckpt_run *run = &pn_proto_ckpt(pc)->runs[r];
		if (run->state == PN_C_IDLE || run->seq != seq)
			continue;
		if (run->state != PN_C_PROTO_SELECT)
			return true;
		if (!selecting(run))
			return false; /* writing its selector pages */
		if (resumed)          /* blocked in its fresh DELAY_CHKPT_START wait */
			return run->delay_wait;
		return run->pause_select && pc->svc->env.now_ns(pc->svc->env.ctx) >= run->select_ns;
	}
	return true;
}

static uint64_t pn_umbra_ckpt_map_write(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	uint8_t bit = (uint8_t)(1u << (run - pn_proto_ckpt(pc)->runs));
	bool busy = false;
	for (uint32_t k = 0; k < map_of(pc)->npages; k++) {
		if (!(map_of(pc)->ckpt_needed[k] & bit))
			continue;
		if (map_of(pc)->busy[k]) {
			busy = true;
			continue;
		}
		if (map_of(pc)->dirty[k]) {
			if (!pn_wal_flush_request(pc->wal, map_of(pc)->lsn[k], pc->proc_ckpt))
				return UINT64_MAX;
			map_write(pc, k, pc->proc_ckpt);
			busy = true;
		}
		map_of(pc)->ckpt_needed[k] &= (uint8_t)~bit;
	}
	for (uint32_t k = 0; k < map_of(pc)->npages; k++)
		busy |= map_of(pc)->busy[k] != 0;
	if (busy)
		return POLL_NS;
	pn_ckpt_set_state(run,
			  PN_C_WRITING); /* a checkpoint_begin pause holds it here: after-map */
	return STEP_NS;
}

/* ---- recovery ---- */

static bool pn_umbra_read_map(struct pn_proto_ctx *pc)
{
	uint8_t *buf = pc->svc->io_bufs + (size_t)pc->svc->nios * 2u * pc->store->page_size;
	if (is_l3(pc)) {
		if (!pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_SELECTOR, 0,
					    pc->store->page_size, buf) ||
		    pn_get32(buf) != ROOT_MAGIC ||
		    pn_get32(buf + 8) != pn_crc32c(buf + 16, pc->store->page_size - 16)) {
			pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, UINT32_MAX,
					 "the Umbra map root page is unreadable (magic or CRC)");
			return false;
		}
	}
	uint32_t per = entries_per_map_page(pc);
	for (uint32_t k = 0; k < map_of(pc)->npages; k++) {
		if (!pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_SELECTOR,
					    map_block(pc, k) * pc->store->page_size,
					    pc->store->page_size, buf))
			memset(buf, 0,
			       pc->store
				       ->page_size); /* a missing selector page: every entry slot 0 */
		for (uint32_t i = 0; i < per && k * per + i < pc->store->heap_pages; i++) {
			uint8_t v = (uint8_t)((buf[i / 4] >> (2 * (i % 4))) & 3u);
			if (v >= pc->store->generations) {
				pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, k * per + i,
						 "invalid Umbra active slot %u of page %u", v,
						 k * per + i);
				return false;
			}
			pn_store_set_slot(pc->store, k * per + i, v);
		}
	}
	/* no redo: R3 does not judge a row that places its slots */
	pn_store_set_baselines_done(pc->store, pn_store_slots(pc->store), 0);
	return true;
}

static bool pn_umbra_redo_source(struct pn_proto_ctx *pc, const struct pn_wal_block *b,
				 uint32_t proc)
{
	uint32_t pg = b->blkno;
	uint8_t source = is_l3(pc) ? b->shift_source & 0x03u /* XLR_SLOT_SHIFT_SOURCE_SLOT_MASK */
				   : (uint8_t)((b->shift_target + pc->store->generations - 1u) %
					       pc->store->generations);
	uint32_t fi = pn_proto_buf(pc)->page_frame[pg];
	if (source >= pc->store->generations || b->shift_target >= pc->store->generations) {
		pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, pg,
				 "shift of page %u from slot %u to %u of %u", pg, source,
				 b->shift_target, pc->store->generations);
		return false;
	}
	/* UmRedoSetActiveSlot(source); a resident page changed by earlier records is flushed
	 * there first (FlushOneBuffer). A page just read is clean: flushing it would write
	 * the bytes it was read from, so no I/O is issued for it. */
	pn_store_set_slot(pc->store, pg, source);
	pn_umbra_map_dirty(pc, pg, 0);
	bool changed = fi != PN_NO_FRAME && pn_buf_frame(pn_proto_buf(pc), fi)->valid &&
		       (pn_buf_frame(pn_proto_buf(pc), fi)->dirty ||
			pn_buf_frame(pn_proto_buf(pc), fi)->io_writes);
	PN_TESTCASE("l3/l4 redo of an image-free shift finds its page resident and changed",
		    changed);
	if (!changed)
		return true;
	if (pn_buf_frame(pn_proto_buf(pc), fi)->io_writes) {
		pn_svc_wake(pc->svc, proc, POLL_NS);
		return false;
	}
	enum pn_write_result w = pn_buf_write(pn_proto_buf(pc), fi, PN_WHY_RECOVERY, proc, -1,
					      NULL);
	if (w == PN_WRITE_BUSY)
		pn_svc_wake(pc->svc, proc, POLL_NS);
	return w == PN_WRITE_NONE;
}

/* ---- the checkpoint run's protocol steps ---- */

static uint64_t select_step(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_PROTO_SELECT);
	PN_ASSERT(run->proto_sub == UC_SELECT || run->proto_sub == UC_MAP_WRITE);
	return run->proto_sub == UC_SELECT ? pn_umbra_ckpt_select(pc, run)
					   : pn_umbra_ckpt_map_write(pc, run);
}

/* After the data fsync: the MAP pages' fsync. */
static uint64_t durable_step(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	PN_ASSERT(run->proto_sub == 0);
	pn_ckpt_run_io(pn_proto_ckpt(pc), run, PN_IO_FSYNC, PN_FILE_SELECTOR, 0, NULL, 0);
	return UINT64_MAX;
}

static void durable_io_done(struct pn_proto_ctx *pc, struct pn_ckpt_run *run)
{
	PN_ASSERT(pc->state != NULL);
	PN_ASSERT(run->state == PN_C_PROTO_DURABLE);
	pn_ckpt_set_state(run, PN_C_RECORD);
}

static void assemble(struct pn_proto_ctx *pc, uint32_t frame, struct pn_wal_block *b, uint8_t *page,
		     bool rdata)
{
	pn_umbra_assemble_block(pc, frame, b, page, rdata);
}

static bool recovery_begin(struct pn_proto_ctx *pc, const struct pn_control *c)
{
	PN_ASSERT(c != NULL);
	PN_ASSERT(pc->state != NULL);
	return pn_umbra_read_map(pc); /* the MAP pages name every page's slot; no area to pick */
}

static void redo_shifted(struct pn_proto_ctx *pc, uint32_t page)
{
	pn_umbra_map_dirty(pc, page, 0); /* MapRedoSetActiveSlot: dirty, no LSN */
}

static void map_check(struct pn_proto_ctx *pc)
{
	const struct umbra_map *m = map_of(pc);
	PN_ASSERT(m->npages * entries_per_map_page(pc) >= pc->store->heap_pages);
	PN_ASSERT(m->npages == 0 || m->dirty != NULL);
}

/* The fingerprint's share of the row (protocol.h memory): each MAP page's dirty, busy and
 * ckpt-needed bits and its WAL-before-MAP LSN, each backend's pending publication, and each
 * frame's l4 epoch tag (which slot a selected buffer's write goes to). */
static void map_memory(const struct pn_proto_ctx *pc, const struct pn_hasher *h)
{
	const struct umbra_map *m = map_of(pc);
	for (uint32_t k = 0; k < m->npages; k++) {
		uint64_t v[2] = {(uint64_t)m->dirty[k] << 16 | (uint64_t)m->busy[k] << 8 |
					 m->ckpt_needed[k],
				 m->lsn[k]};
		h->feed(h->ctx, v, sizeof(v));
	}
	for (uint32_t i = 0; i < m->npubs; i++) {
		const struct umbra_pub *u = &m->pubs[i];
		uint64_t v[2] = {(uint64_t)u->pending << 32 | u->target, u->lsn};
		h->feed(h->ctx, v, sizeof(v));
	}
	for (uint32_t i = 0; i < pn_proto_buf(pc)->nframes; i++) {
		uint64_t tag = pn_buf_frame(pn_proto_buf(pc), i)->shift_epoch;
		h->feed(h->ctx, &tag, sizeof(tag));
	}
}

/* l3 and l4 differ in slot placement (pn_umbra_slot_index), assembly, the checkpoint's
 * write slot, hint handling (l4: HINT_DELTA) and redo's source: read from is_l3(). */
/* The phases l3 and l4 share (l4 differs in its hints and where a checkpoint writes). */
#define MAP_SETUP                                                                        \
	{                                                                                \
		.generations = pn_umbra_generations, .init = map_init, .free = map_free, \
		.format = map_format, .file_size = pn_umbra_file_size                    \
	}
#define MAP_WRITE                                                                                  \
	{                                                                                          \
		.decide = pn_umbra_decide, .assemble = assemble, .shifted = pn_umbra_publish_page, \
		.truncated = truncated, .defer_shift = defer_shift, .after_insert = after_insert,  \
		.proc_step = proc_step, .recheck = pn_protocol_recheck,                            \
		.script_reached = pn_umbra_ckpt_reached                                            \
	}
#define MAP_CKPT                                                                                 \
	{                                                                                        \
		.begin = map_ckpt_begin, .slot = pn_umbra_ckpt_slot, .select_step = select_step, \
		.durable_step = durable_step, .io_done = durable_io_done,                        \
		.background = pn_umbra_mapwriter                                                 \
	}
#define MAP_RECOVERY                                                          \
	{                                                                     \
		.begin = recovery_begin, .redo_source = pn_umbra_redo_source, \
		.redo_shifted = redo_shifted                                  \
	}
#define MAP_STATE                                        \
	{                                                \
		.memory = map_memory, .check = map_check \
	}

const struct pn_protocol_ops pn_protocol_umbra_l3 = {
	.name = "umbra-l3",
	.store_flags = PN_STORE_SLOTTED,
	.setup = MAP_SETUP,
	.write = MAP_WRITE,
	.buffer = {.bind_late = pn_umbra_bind_late},
	.ckpt = MAP_CKPT,
	.recovery = MAP_RECOVERY,
	.state = MAP_STATE,
};

const struct pn_protocol_ops pn_protocol_umbra_l4 = {
	.name = "umbra-l4",
	.hint_delta = true,
	.store_flags = PN_STORE_SLOTTED,
	.setup = MAP_SETUP,
	.write = MAP_WRITE,
	.buffer = {.bind_late = pn_umbra_bind_late, .write_slot = pn_umbra_write_slot},
	.ckpt = MAP_CKPT,
	.recovery = MAP_RECOVERY,
	.state = MAP_STATE,
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
#include "protocols.h"

/* l3 and l4 declare the same but their policy. */
#define UMBRA_MAP_DECL                                                                            \
	.mode = PN_MODE_UMBRA, .keys = PN_KEY_POLICY | PN_KEY_GENERATIONS | PN_KEY_LAYOUT,        \
	.fixed_why = "a 2-bit selector entry a page, the slots placed by the row",                \
	.generations_max = 4, .interleaved_only = true, .caps = PN_CAP_TRUNCATE | PN_CAP_PUBLISH, \
	.mutants = PN_MUT_NO_DELAY_CHKPT | PN_MUT_TRUNCATE_RESET_NO_WAL | PN_MUT_AIO_LATE_BIND |  \
		   PN_MUT_EARLY_RECLAIM | PN_MUT_SELECTOR_UNSYNCED | PN_MUT_HINT_NO_FPI |         \
		   PN_MUT_DEDUP_NO_IMAGE

const struct pn_protocol_decl pn_decl_umbra_l3 = {
	.policy = PN_POLICY_L3,
	UMBRA_MAP_DECL,
};

const struct pn_protocol_decl pn_decl_umbra_l4 = {
	.policy = PN_POLICY_L4,
	UMBRA_MAP_DECL,
};

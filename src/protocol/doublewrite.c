/*
 * doublewrite.c: the doublewrite row of the protocol table (protocol layer), InnoDB's
 * doublewrite buffer: no page images in the WAL; every heap page write-out goes first to
 * the doublewrite file (PN_FILE_DW), which is fsynced, and only then in place (bufpool.c's
 * rule B5); recovery restores a torn home page from its copy before replay. SLRU pages
 * with headers are protected by images, as in fpw. Mutant owned here: doublewrite_no_fsync.
 *
 * Doublewrite file (PN_FILE_DW): DW_SLOTS entries of sector_size + page_size bytes: a
 * header sector {magic u32 'PNDW', page u32, lsn u64, crc32c of the page u32} and the
 * page. An entry is reused only after the data file was fsynced since its in-place write.
 *
 * State machine of the area: FILLING --all entries used--> SYNCING (a data-file fsync in
 * flight; dw_reserve refuses) --dw_sync_done--> FILLING (every entry free again).
 */
#include "rows.h"

#include <stdlib.h>
#include <string.h>

#define DW_MAGIC 0x57444E50u /* "PNDW" */
#define DW_SLOTS 32u         /* entries of the area, each a slot in the space metric */
#define RESTORE_CAP 64u
enum dw_figure { DW_FIGURE_BYTES, DW_FIGURES }; /* the declaration's figures (dw_figures) */

struct dw_state {
	uint32_t next, used_since_sync;
	bool sync_in_flight;
	uint32_t restore[RESTORE_CAP]; /* entries to restore before replay */
	uint32_t restore_len, restore_pos;
	uint64_t bytes_written; /* to the area (its figure; a metric, not in the fingerprint) */
};

static struct dw_state *dw_of(const struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state != NULL);
	return pc->state;
}

static bool dw_init(struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state == NULL);
	PN_ASSERT(DW_SLOTS <= RESTORE_CAP);
	pc->state = calloc(1, sizeof(struct dw_state));
	return pc->state != NULL;
}

static void dw_free(struct pn_proto_ctx *pc)
{
	free(pc->state);
	pc->state = NULL;
}

static unsigned dw_decide(const struct pn_proto_ctx *pc, enum pn_block_use use, bool before_redo)
{
	PN_ASSERT(use <= PN_USE_SLRU);
	return use == PN_USE_SLRU ? pn_protocol_slru_image(pc, before_redo) : 0;
}

static uint64_t dw_file_size(const struct pn_proto_ctx *pc, enum pn_file f)
{
	PN_ASSERT(f < PN_FILE_COUNT);
	if (f == PN_FILE_SELECTOR)
		return 0;
	return (uint64_t)DW_SLOTS * (pc->sc->storage.sector_size + pc->store->page_size);
}

/* ---- write-out (B5): DW write -> DW fsync -> in-place write ---- */

static bool uses_dw(const struct pn_proto_ctx *pc, uint32_t frame, enum pn_io_why why)
{
	return !pn_store_is_slru(pc->store, pn_buf_frame(pn_proto_buf(pc), frame)->page) &&
	       why != PN_WHY_RECOVERY;
}

static void dw_fsync_done(void *ctx, struct pn_io *io)
{
	struct pn_proto_ctx *pc = ctx;
	struct pn_io *dw = pn_io_at(pc->svc, io->aux);
	uint32_t sec = pc->sc->storage.sector_size;
	struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), dw->frame);
	PN_ASSERT(f->io_writes > 0);
	pn_buf_write_ended(pn_proto_buf(pc),
			   dw->frame); /* the in-place write below counts itself */
	/* The bytes are the doublewrite copy's: as old as that write's issue (checkpoint
	 * bookkeeping in write_done depends on it). */
	struct pn_io_then then = {dw->then, dw->then_ctx};
	pn_buf_issue_write(pn_proto_buf(pc), dw->frame, 0, dw->why, dw->proc, dw->buf + sec,
			   dw->lsn, &then)
		->ckpt_seq = dw->ckpt_seq;
	pn_io_release(pc->svc, dw);
}

static void dw_write_done(void *ctx, struct pn_io *io)
{
	struct pn_proto_ctx *pc = ctx;
	if (pc->sc->protocol.mutations & PN_MUT_DOUBLEWRITE_NO_FSYNC) {
		/* the bug: the in-place write does not wait for the doublewrite fsync */
		struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), io->frame);
		PN_ASSERT(f->io_writes > 0);
		pn_buf_write_ended(pn_proto_buf(pc), io->frame);
		struct pn_io_then then = {io->then, io->then_ctx};
		pn_buf_issue_write(pn_proto_buf(pc), io->frame, 0, io->why, io->proc,
				   io->buf + pc->sc->storage.sector_size, io->lsn, &then)
			->ckpt_seq = io->ckpt_seq;
		return;
	}
	io->keep = true; /* its buffer feeds the in-place write */
	struct pn_io *s = pn_io_fsync(pc->svc, PN_FILE_DW, PN_WHY_DW, dw_fsync_done, pc);
	s->aux = io->index;
	pc->m->fsyncs++;
	pn_io_issue(pc->svc, s);
}

static void dw_sync_done(void *ctx, struct pn_io *io)
{
	struct pn_proto_ctx *pc = ctx;
	struct dw_state *d = dw_of(pc);
	PN_ASSERT(io->file == PN_FILE_DATA);
	PN_ASSERT(d->sync_in_flight);
	d->sync_in_flight = false; /* SYNCING --> FILLING */
	d->used_since_sync = 0;
}

/* Reusing doublewrite entries needs their in-place writes durable: fsync the data file. */
static bool dw_reserve(struct pn_proto_ctx *pc, uint32_t frame, enum pn_io_why why)
{
	struct dw_state *d = dw_of(pc);
	if (!uses_dw(pc, frame, why))
		return true;
	if (d->sync_in_flight)
		return false;
	if (d->used_since_sync < DW_SLOTS)
		return true;
	if (pn_proto_buf(pc)->data_writes_inflight > 0)
		return false;
	struct pn_io *s = pn_io_fsync(pc->svc, PN_FILE_DATA, PN_WHY_DW, dw_sync_done, pc);
	d->sync_in_flight = true; /* FILLING --> SYNCING */
	pc->m->fsyncs++;
	pn_io_issue(pc->svc, s);
	return false;
}

static bool dw_write(struct pn_proto_ctx *pc, uint32_t frame, enum pn_io_why why, uint32_t proc,
		     const uint8_t *image, const struct pn_io_then *then)
{
	if (!uses_dw(pc, frame, why))
		return false;
	struct dw_state *d = dw_of(pc);
	struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), frame);
	uint32_t sec = pc->sc->storage.sector_size;
	PN_ASSERT(!d->sync_in_flight);
	PN_ASSERT(d->used_since_sync < DW_SLOTS);
	struct pn_io *io = pn_io_get(pc->svc);
	io->op = PN_IO_WRITE;
	io->file = PN_FILE_DW;
	io->why = why;
	io->frame = frame;
	io->page = f->page;
	io->proc = proc;
	io->len = sec + pc->store->page_size;
	io->offset = (uint64_t)d->next * io->len;
	memset(io->buf, 0, sec);
	pn_put32(io->buf, DW_MAGIC);
	pn_put32(io->buf + 4, f->page);
	pn_put64(io->buf + 8, f->last_lsn);
	memcpy(io->buf + sec, image, pc->store->page_size);
	pn_put32(io->buf + 16, pn_crc32c(io->buf + sec, pc->store->page_size));
	io->done = dw_write_done;
	io->ctx = pc;
	if (then) {
		io->then = then->fn;
		io->then_ctx = then->ctx;
	}
	io->ckpt_seq = pn_proto_ckpt(pc)->seq_begun;
	io->lsn = f->last_lsn;
	d->next = (d->next + 1) % DW_SLOTS;
	d->used_since_sync++;
	pn_buf_write_begun(pn_proto_buf(pc), frame);
	d->bytes_written += io->len;
	pn_io_issue(pc->svc, io);
	return true;
}

/*
 * ---- recovery ----
 * Before replay, every page whose newest valid doublewrite entry is at least as new as its
 * home copy, or whose home copy fails verification, is restored from that entry (InnoDB's
 * buf_dblwr recovery). The entry was fsynced before the in-place write began (B5), so a
 * torn home page always has an intact copy there.
 *
 * The plan reads entries and home pages as summaries (sim/device.h DV8): an entry as valid
 * or not and, if valid, its page and LSN; a home page as "restore it from an entry of LSN
 * x" or not. So a torn, lost or persisted entry or home page counts (for the checker's
 * derivation) only through what the plan does with it. restore_step reads a restored
 * entry's bytes in full (it writes them home).
 */
static uint32_t dw_entry_len(const struct pn_proto_ctx *pc)
{
	return pc->sc->storage.sector_size + pc->store->page_size;
}

/* Reads entry i into buf: its page and LSN, unchecked. */
static void dw_read(struct pn_proto_ctx *pc, uint32_t i, uint8_t *buf, uint32_t *page, pn_lsn *lsn)
{
	PN_ASSERT(i < DW_SLOTS);
	pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_DW, (uint64_t)i * dw_entry_len(pc),
			       dw_entry_len(pc), buf);
	*page = pn_get32(buf + 4);
	*lsn = pn_get64(buf + 8);
}

/* DV8 summary of an entry (arg: sector size, heap pages): {page + 1, LSN} when it is valid
 * (magic, page in range, the page's CRC-32C), {0, 0} when not. */
static struct pn_summary_value entry_summary(const uint8_t *buf, uint32_t len, const uint64_t *arg)
{
	uint32_t sec = (uint32_t)arg[0], page = pn_get32(buf + 4);
	PN_ASSERT(len > sec && sec >= 20);
	if (pn_get32(buf) != DW_MAGIC || page >= arg[1] ||
	    pn_get32(buf + 16) != pn_crc32c(buf + sec, len - sec))
		return (struct pn_summary_value){{0, 0}};
	return (struct pn_summary_value){{(uint64_t)page + 1, pn_get64(buf + 8)}};
}

/* DV8 summary of a home page (arg: its page number, checksums on, the LSN of its newest
 * valid entry): {1} when it must be restored from that entry (it fails verification, or
 * the entry is at least as new), {0} when not. */
static struct pn_summary_value home_summary(const uint8_t *home, uint32_t len, const uint64_t *arg)
{
	bool torn = !pn_page_verify(home, len, (uint32_t)arg[0], arg[1] != 0);
	return (struct pn_summary_value){{torn || pn_page_lsn(home) <= arg[2], 0}};
}

/* Whether entry i is valid, and its page and LSN if so, as a summary (the bytes are read
 * again, by restore_step, only for an entry that is restored). */
static bool dw_entry(struct pn_proto_ctx *pc, uint32_t i, uint32_t *page, pn_lsn *lsn)
{
	struct pn_summary s = {.fn = entry_summary,
			       .arg = {pc->sc->storage.sector_size, pc->store->heap_pages}};
	struct pn_summary_value v;
	PN_ASSERT(i < DW_SLOTS);
	if (!pn_svc_read_summary(pc->svc, PN_FILE_DW, (uint64_t)i * dw_entry_len(pc),
				 dw_entry_len(pc), &s, &v) ||
	    !v.v[0])
		return false;
	*page = (uint32_t)(v.v[0] - 1);
	*lsn = v.v[1];
	return true;
}

/* Whether home page `page` must be restored from an entry of LSN lsn, as a summary. */
static bool home_restore(struct pn_proto_ctx *pc, uint32_t page, pn_lsn lsn)
{
	struct pn_summary s = {.fn = home_summary, .arg = {page, pc->sc->protocol.checksums, lsn}};
	struct pn_summary_value v = {{1, 0}}; /* a failed read: restore */
	pn_svc_read_summary(pc->svc, PN_FILE_DATA, pn_store_offset(pc->store, page, 0),
			    pc->store->page_size, &s, &v);
	return v.v[0] != 0;
}

static bool plan_restore(struct pn_proto_ctx *pc, pn_lsn redo, pn_lsn *from)
{
	struct dw_state *d = dw_of(pc);
	/* every entry read and its CRC computed once, not once per pair of entries (1,056
	 * CRC-32Cs of a page with 32 entries: over half of a crash state's recovery) */
	struct {
		uint32_t page;
		pn_lsn lsn;
		bool valid;
	} ent[RESTORE_CAP];
	PN_ASSERT(*from == redo);
	PN_ASSERT(DW_SLOTS <= RESTORE_CAP);
	d->restore_len = d->restore_pos = 0;
	for (uint32_t i = 0; i < DW_SLOTS; i++)
		ent[i].valid = dw_entry(pc, i, &ent[i].page, &ent[i].lsn);
	for (uint32_t i = 0; i < DW_SLOTS; i++) {
		if (!ent[i].valid)
			continue;
		bool newest = true;
		for (uint32_t j = 0; j < DW_SLOTS && newest; j++)
			if (j != i && ent[j].valid && ent[j].page == ent[i].page &&
			    (ent[j].lsn > ent[i].lsn || (ent[j].lsn == ent[i].lsn && j > i)))
				newest = false;
		if (!newest)
			continue; /* its home page is read for the newest entry only */
		if (home_restore(pc, ent[i].page, ent[i].lsn))
			d->restore[d->restore_len++] = i;
	}
	return true;
}

/*
 * One restore at a time: the entry's page goes into the buffer pool and is written in
 * place at once (not through the doublewrite area, whose entries other torn pages may
 * still need); when every restored page is written, the data file is fsynced. Only then
 * may the doublewrite area be reused, so a crash during this phase finds every entry it
 * needs intact.
 */
static void restore_fsync_done(void *ctx, struct pn_io *io)
{
	struct pn_proto_ctx *pc = ctx;
	PN_ASSERT(io->file == PN_FILE_DATA);
	dw_of(pc)->restore_len = 0;
	pn_svc_wake(pc->svc, pc->proc_startup, 0);
}

static bool restore_step(struct pn_proto_ctx *pc, struct pn_proc *p)
{
	struct dw_state *d = dw_of(pc);
	uint8_t *buf = pc->svc->io_bufs + (size_t)pc->svc->nios * 2u * pc->store->page_size;
	uint32_t page;
	pn_lsn lsn;
	if (!d->restore_len)
		return false;
	if (d->restore_pos == UINT32_MAX)
		return true; /* the fsync is in flight */
	if (d->restore_pos == d->restore_len) {
		if (pn_proto_buf(pc)->data_writes_inflight)
			return true; /* woken by the last write's completion */
		struct pn_io *io = pn_io_fsync(pc->svc, PN_FILE_DATA, PN_WHY_RECOVERY,
					       restore_fsync_done, pc);
		pc->m->fsyncs++;
		d->restore_pos = UINT32_MAX; /* the fsync is in flight */
		pn_io_issue(pc->svc, io);
		return true;
	}
	/* plan_restore found it valid; its CRC is not computed again (it was computed here
	 * and its result unused: a sixth of doublewrite's recovery time) */
	dw_read(pc, d->restore[d->restore_pos], buf, &page, &lsn);
	uint32_t fi = pn_buf_pin(pn_proto_buf(pc), page, p->id, true);
	if (fi == PN_NO_FRAME)
		return true;
	memcpy(pn_frame_page(pn_proto_buf(pc), fi), buf + pc->sc->storage.sector_size,
	       pc->store->page_size);
	pn_buf_set_redo_dirty(pn_proto_buf(pc), fi);
	pn_buf_set_last_lsn(pn_proto_buf(pc), fi, lsn);
	pn_buf_unpin(pn_proto_buf(pc), fi);
	enum pn_write_result w = pn_buf_write(pn_proto_buf(pc), fi, PN_WHY_RECOVERY, p->id, -1,
					      NULL);
	PN_ASSERT(w == PN_WRITE_STARTED);
	d->restore_pos++;
	return true; /* woken when the write completes */
}

/* The fingerprint's share of the row (protocol.h memory): the area's next entry, the entries
 * used since the data fsync, whether that fsync is in flight, and the restores to come; not
 * bytes_written (a metric). */
static void dw_memory(const struct pn_proto_ctx *pc, const struct pn_hasher *h)
{
	const struct dw_state *d = pc->state;
	PN_ASSERT(d != NULL && d->restore_len <= RESTORE_CAP);
	uint64_t v[2] = {(uint64_t)d->next << 32 | d->used_since_sync,
			 (uint64_t)d->sync_in_flight << 48 | (uint64_t)d->restore_len << 24 |
				 d->restore_pos};
	h->feed(h->ctx, v, sizeof(v));
	h->feed(h->ctx, d->restore, sizeof(uint32_t) * d->restore_len);
}

/* Space: the area's entries are slots beside the data file's; its figure: the bytes written
 * to the area. */
static void dw_finish_metrics(struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->m->slots_used >= pc->store->heap_pages);
	pc->m->slots_used += DW_SLOTS;
	pn_figure_u64(&pc->m->row, DW_FIGURE_BYTES, dw_of(pc)->bytes_written);
}

static void dw_check(struct pn_proto_ctx *pc)
{
	const struct dw_state *d = dw_of(pc);
	PN_ASSERT(d->next < DW_SLOTS);
	PN_ASSERT(d->used_since_sync <= DW_SLOTS);
	PN_ASSERT(d->restore_len <= DW_SLOTS);
}

const struct pn_protocol_ops pn_protocol_doublewrite = {
	.name = "doublewrite",
	.setup = {.init = dw_init, .free = dw_free, .file_size = dw_file_size},
	.write = {.decide = dw_decide, .recheck = pn_protocol_recheck},
	.buffer = {.write_reserve = dw_reserve, .write_image = dw_write},
	.recovery = {.from = plan_restore, .redo_step = restore_step},
	.state = {.memory = dw_memory, .check = dw_check},
	.metrics = {.finish = dw_finish_metrics},
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
#include "protocols.h"

static const struct pn_figure_decl dw_figures[DW_FIGURES] = {
	[DW_FIGURE_BYTES] = {"dw_bytes_written", "doublewrite bytes", NULL, PN_FIGURE_WRITTEN},
};

const struct pn_protocol_decl pn_decl_doublewrite = {
	.mode = PN_MODE_DOUBLEWRITE,
	.policy = PN_POLICY_PROTOTYPE,
	.keys = 0,
	.caps = PN_CAP_TRUNCATE,
	.mutants = PN_MUT_DOUBLEWRITE_NO_FSYNC,
	.figures = dw_figures,
	.nfigures = DW_FIGURES,
};

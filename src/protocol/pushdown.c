/*
 * pushdown.c: the pushdown row of the protocol table, the mode's page server (protocol layer; seed 002, Neon's
 * "image generation pushdown"; docs/protocol.md section 7 says what Neon does and what we
 * model).
 *
 * The compute writes WAL without full-page images; the WAL file, flushed, is the durable log
 * (Neon's safekeepers). The compute never writes a data page: a dirty buffer is dropped when
 * evicted (pn_ps_drop), remembering its last-written LSN, and a buffer miss asks the page
 * server for the page at that LSN (GetPage@LSN). The page server is its own process
 * (proc_row), stepped like the others through the seam:
 *
 *   ingest     read the durable WAL (up to wal.flushed) from the WAL file; every block
 *              reference of a record becomes a delta on that page's chain;
 *   serve      a GetPage@LSN request: the page's image plus its deltas up to the LSN,
 *              replayed with pn_redo_apply() (the same meaning of a record as redo);
 *   images     a page with image_threshold deltas since its image gets a new image
 *              (a "round" materialises up to BATCH pages), written to its storage.
 *
 * Storage: its format and recovery's reading of it are pushdown_store.c's (pushdown_store.h
 * documents them byte by byte, with the page server's state both files share).
 *
 * Rules (docs/protocol.md section 7):
 *   PD1 A round writes its images to the slot the durable metadata does not name, fsyncs
 *      them, and only then writes the metadata naming them and fsyncs it (the
 *      pushdown_image_unsynced mutant skips the first fsync).
 *   PD2 The durable metadata's horizon is at or before the start of every delta that a page
 *      has after its durable image; the compute keeps WAL from min(redo, horizon) (W4), so
 *      recovery can re-ingest every delta an image lacks (the pushdown_horizon_early mutant
 *      puts the horizon at the ingest position).
 *   PD3 Only durable WAL is ingested: an image never holds a change that a crash can lose
 *      (the pushdown_ingest_unflushed mutant ingests WAL written but not fsynced; recovery
 *      reports a page server ahead of the end of the WAL).
 *   PD4 One round at a time; the next image of a page goes to the other slot only after the
 *      metadata naming its last image is durable.
 *
 * A round:
 *   IDLE --round_begin()--> WRITING --last image write done--> FSYNC_IMAGES --fsync done-->
 *   META_WRITE --write done--> META_FSYNC --fsync done: round_commit()--> IDLE
 *
 * Recovery (recovery.c calls in): pn_ps_recover() loads the newest valid snapshot and the
 * log after it, and verifies each image they name (a CRC mismatch is a recovery failure,
 * C3); replay then
 * re-ingests the WAL from min(redo, horizon) (pn_ps_ingest_record, skipping deltas an image
 * holds); the compute's buffer pool stays empty, and every later read reconstructs.
 */
#include "pushdown.h"
#include "pushdown_store.h"

#include <stdlib.h>
#include <string.h>

static bool pushdown(const struct pn_proto_ctx *pc) { return pc->state != NULL; }

static bool wal_read(void *arg, pn_lsn addr, uint8_t *out)
{
	struct pn_proto_ctx *pc = arg;
	return pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_WAL,
				      pn_wal_file_offset(pc->wal, addr), PN_XLOG_BLCKSZ, out);
}

bool pn_ps_init(struct pn_proto_ctx *pc)
{
	if (pc->sc->protocol.mode != PN_MODE_PUSHDOWN)
		return true;
	struct pn_pageserver *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return false;
	pc->state = ps;
	ps->meta_len = pn_ps_meta_len(pc);
	ps->log_len = pn_ps_log_len(pc);
	ps->pages = calloc(pc->store->pages, sizeof(*ps->pages));
	ps->queue = malloc(sizeof(uint32_t) * pc->store->pages);
	ps->req = malloc(sizeof(*ps->req) * pn_proto_buf(pc)->nframes);
	ps->last_written = calloc(pc->store->pages, sizeof(pn_lsn));
	ps->meta = malloc(PN_MAX(ps->meta_len, ps->log_len));
	ps->enc_bytes = pn_wal_rec_cap(pc->wal);
	ps->images_bytes = (size_t)PN_WAL_MAX_BLOCKS * pc->store->page_size;
	ps->enc = pn_big_alloc(ps->enc_bytes);
	ps->images = pn_big_alloc(ps->images_bytes);
	pn_lsn start = (pn_lsn)pn_wal_seg_size(pc->wal) + PN_WAL_LONG_PHD; /* as pn_wal_init */
	ps->next = ps->horizon = start;
	return ps->pages && ps->queue && ps->req && ps->last_written && ps->meta && ps->enc &&
	       ps->images &&
	       pn_wal_reader_init(&ps->reader, start, 0, pn_wal_seg_size(pc->wal),
				  pc->store->page_size, pn_wal_rec_cap(pc->wal), pc->sysid,
				  wal_read, pc);
}

void pn_ps_free(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	if (!ps)
		return;
	for (uint32_t p = 0; ps->pages && p < pc->store->pages; p++)
		free(ps->pages[p].chain);
	pn_wal_reader_free(&ps->reader);
	free(ps->pages);
	free(ps->queue);
	free(ps->req);
	free(ps->last_written);
	free(ps->meta);
	pn_big_free(ps->enc, ps->enc_bytes);
	pn_big_free(ps->images, ps->images_bytes);
	free(ps);
	pc->state = NULL;
}

pn_lsn pn_ps_horizon(const struct pn_proto_ctx *pc)
{
	return pushdown(pc) ? pn_ps_of(pc)->horizon : UINT64_MAX;
}

/* ---- delta chains ---- */

static void chain_append(struct ps_page *pg, const uint8_t *rec, uint32_t len, pn_lsn start,
			 pn_lsn end)
{
	if (pg->len + DELTA_HEADER + len > pg->cap) {
		/* chains grow with how far image rounds lag: amortised, not per event */
		uint32_t ncap = PN_MAX(pg->cap * 2, pg->len + DELTA_HEADER + len + 256);
		uint8_t *n = realloc(pg->chain, ncap);
		PN_ASSERT(n != NULL);
		pg->chain = n;
		pg->cap = ncap;
	}
	uint8_t *d = pg->chain + pg->len;
	pn_put32(d, len);
	pn_put64(d + 4, start);
	pn_put64(d + 12, end);
	memcpy(d + DELTA_HEADER, rec, len);
	pg->len += DELTA_HEADER + len;
	pg->ndeltas++;
	pg->last_end = end;
}

/* Drops the deltas an image at `lsn` holds (it is on the device now: reads start there). */
static void chain_trim(struct ps_page *pg, pn_lsn lsn)
{
	uint32_t at = 0;
	while (at < pg->len && pn_get64(pg->chain + at + 12) <= lsn) {
		at += DELTA_HEADER + pn_get32(pg->chain + at);
		pg->ndeltas--;
	}
	memmove(pg->chain, pg->chain + at, pg->len - at);
	pg->len -= at;
}

static void maybe_queue(struct pn_proto_ctx *pc, uint32_t page)
{
	struct ps_page *pg = &pn_ps_of(pc)->pages[page];
	if (pg->ndeltas >= pc->sc->protocol.image_threshold && !pg->queued && !pg->in_round) {
		pg->queued = true;
		pn_ps_of(pc)->queue[pn_ps_of(pc)->queue_len++] = page;
	}
}

void pn_ps_ingest_record(struct pn_proto_ctx *pc, const struct pn_wal_record *r, pn_lsn start,
			 pn_lsn end)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	uint32_t len = 0;
	for (uint32_t i = 0; i < r->nblocks; i++) {
		uint32_t page = r->blocks[i].blkno;
		bool seen = false;
		for (uint32_t j = 0; j < i; j++)
			seen |= r->blocks[j].blkno == page;
		if (page >= pc->store->pages) {
			pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, page,
					 "record at %llX names page %u of %u",
					 (unsigned long long)start, page, pc->store->pages);
			return;
		}
		struct ps_page *pg = &ps->pages[page];
		if (seen || end <= pg->img_lsn)
			continue; /* the page's image already holds it (re-ingestion) */
		if (len == 0)
			len = pn_wal_record_encode(r, pc->store->page_size, ps->enc);
		chain_append(pg, ps->enc, len, start, end);
		if (pg->hold == 0)
			pg->hold = start;
		ps->count.delta_records++;
		ps->count.delta_bytes += len;
		maybe_queue(pc, page);
	}
	ps->ingested = end;
}

/* ---- reconstruct ---- */

static bool apply_delta(struct pn_proto_ctx *pc, uint32_t page, const uint8_t *d, uint8_t *out)
{
	struct pn_wal_record rec;
	char why[128];
	uint32_t len = pn_get32(d);
	pn_lsn end = pn_get64(d + 12);
	bool ok = pn_wal_record_decode(d + DELTA_HEADER, len, pc->store->page_size,
				       pn_ps_of(pc)->images, &rec, why, sizeof(why));
	PN_ASSERT(ok); /* the page server's own copy of a record it decoded once */
	bool headerless = pn_store_is_slru(pc->store, page) && !pc->sc->protocol.slru_headers;
	for (uint32_t i = 0; i < rec.nblocks; i++) {
		if (rec.blocks[i].blkno != page)
			continue;
		if (!pn_redo_apply(out, pc->store->page_size, &rec, &rec.blocks[i])) {
			pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, page,
					 "the delta at %llX does not apply to page %u",
					 (unsigned long long)pn_get64(d + 4), page);
			return false;
		}
	}
	if (!headerless)
		pn_page_set_lsn(out, end);
	return true;
}

uint32_t pn_ps_reconstruct(struct pn_proto_ctx *pc, uint32_t page, pn_lsn lsn, uint8_t *out)
{
	const struct ps_page *pg = &pn_ps_of(pc)->pages[page];
	/* The page server reads its own storage (another machine's disk in Neon). */
	bool ok = pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_PAGESERVER,
					 pn_ps_image_offset(pc, page, pg->img_slot),
					 pc->store->page_size, out);
	PN_ASSERT(ok);
	uint32_t n = 0;
	for (uint32_t at = 0; at < pg->len; at += DELTA_HEADER + pn_get32(pg->chain + at)) {
		if (pn_get64(pg->chain + at + 12) > lsn)
			break;
		if (!apply_delta(pc, page, pg->chain + at, out))
			break;
		n++;
	}
	return n;
}

/* ---- the compute's side: drop on eviction, GetPage@LSN on a miss ---- */

void pn_ps_drop(struct pn_proto_ctx *pc, uint32_t frame)
{
	struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), frame);
	pn_lsn *lw = &pn_ps_of(pc)->last_written[f->page];
	*lw = PN_MAX(*lw, f->last_lsn);
	pn_buf_set_clean(pn_proto_buf(pc), frame);
}

bool pn_ps_page_ready(struct pn_proto_ctx *pc, uint32_t page, uint32_t proc)
{
	pn_lsn lsn = pn_ps_of(pc)->last_written[page];
	if (lsn <= pn_ps_of(pc)->ingested)
		return true;
	/* Neon flushes the WAL up to the request LSN first: the page server sees only
	 * durable WAL (PD3). */
	if (!pn_wal_flush_request(pc->wal, lsn, proc))
		return false;
	pn_svc_wake(pc->svc, pc->proc_row, 0);
	pn_svc_wake(pc->svc, proc, PS_POLL_NS);
	return false;
}

void pn_ps_request(struct pn_proto_ctx *pc, uint32_t frame, uint32_t page, uint32_t proc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	PN_ASSERT(ps->nreq < pn_proto_buf(pc)->nframes); /* one read in flight per frame at most */
	ps->req[ps->nreq++] = (struct ps_request){frame, page, proc, ps->last_written[page]};
	pn_svc_wake(pc->svc, pc->proc_row, PS_GETPAGE_NS);
}

static void serve(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	for (uint32_t i = 0; i < ps->nreq; i++) {
		const struct ps_request *q = &ps->req[i];
		struct pn_frame *f = pn_buf_frame(pn_proto_buf(pc), q->frame);
		PN_ASSERT(f->page == q->page && f->io_reads == 1 && q->lsn <= ps->ingested);
		uint8_t *page = pn_frame_page(pn_proto_buf(pc), q->frame);
		uint32_t n = pn_ps_reconstruct(pc, q->page, q->lsn, page);
		/* Every change of the page is at or before its last-written LSN. */
		PN_ASSERT(n == ps->pages[q->page].ndeltas || pc->svc->failed);
		ps->hist[PN_MIN(n, HIST_LEN - 1)]++;
		ps->count.reads++;
		ps->count.deltas_replayed += n;
		ps->count.replay_max = PN_MAX(ps->count.replay_max, n);
		bool headerless = pn_store_is_slru(pc->store, q->page) &&
				  !pc->sc->protocol.slru_headers;
		pn_buf_set_read_done(pn_proto_buf(pc), q->frame,
				     headerless ? 0 : pn_page_lsn(page));
		pn_svc_wake(pc->svc, q->proc, 0);
	}
	ps->nreq = 0;
}

/* ---- ingestion: the durable WAL, from the WAL file ---- */

static void ingest(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	/* PD3: durable WAL only; the mutant also takes what is written but not yet fsynced */
	bool mutant = (pc->sc->protocol.mutations & PN_MUT_PUSHDOWN_INGEST_UNFLUSHED) != 0;
	pn_lsn limit = mutant ? pn_wal_written(pc->wal) : pn_wal_flushed(pc->wal);
	if (ps->next >= limit)
		return;
	/* the reader's cached WAL page may have grown since: read it again */
	pn_wal_reader_seek(&ps->reader, ps->next, ps->prev);
	struct pn_wal_record rec;
	pn_lsn start, end;
	while (ps->reader.next < limit && !pc->svc->failed) {
		bool ok = pn_wal_read_next(&ps->reader, &rec, &start, &end);
		PN_ASSERT(ok); /* flushed WAL is whole */
		pn_ps_ingest_record(pc, &rec, start, end);
		ps->next = ps->reader.next;
		ps->prev = start;
	}
}

/* ---- image rounds ---- */

static void round_io_done(void *ctx, struct pn_io *io);

static void round_io(struct pn_proto_ctx *pc, enum pn_io_op op, uint64_t off, const uint8_t *buf,
		     uint32_t len)
{
	struct pn_io *io = pn_io_get(pc->svc);
	io->op = op;
	io->file = PN_FILE_PAGESERVER;
	io->why = op == PN_IO_FSYNC ? PN_WHY_FSYNC : PN_WHY_PS_META;
	io->offset = off;
	io->len = len;
	if (buf)
		io->buf = (uint8_t *)buf;
	io->done = round_io_done;
	io->ctx = pc;
	struct pn_pageserver *ps = pn_ps_of(pc);
	if (op == PN_IO_FSYNC)
		ps->count.fsyncs++;
	else
		ps->count.meta_bytes += len;
	ps->io_pending = true;
	pn_io_issue(pc->svc, io);
}

/* WAL held back beyond a quarter of the ring: force images of the pages holding it. */
static bool holds_too_much(const struct pn_proto_ctx *pc, pn_lsn hold)
{
	uint64_t ring = (uint64_t)pn_wal_nsegs(pc->wal) * pn_wal_seg_size(pc->wal);
	return hold != 0 && pn_wal_insert_lsn(pc->wal) - hold > ring / 4;
}

static void pick(struct pn_proto_ctx *pc, uint32_t page)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	ps->pages[page].in_round = true;
	ps->pages[page].queued = false;
	ps->batch[ps->batch_len++] = page;
}

static void choose_batch(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	uint32_t keep = 0;
	ps->batch_len = 0;
	for (uint32_t i = 0; i < ps->queue_len; i++) {
		if (ps->batch_len < PS_BATCH)
			pick(pc, ps->queue[i]);
		else
			ps->queue[keep++] = ps->queue[i];
	}
	ps->queue_len = keep;
	bool force = holds_too_much(pc, ps->horizon);
	PN_TESTCASE("the page server forces images to release WAL", force);
	for (uint32_t p = 0; force && p < pc->store->pages && ps->batch_len < PS_BATCH; p++) {
		const struct ps_page *pg = &ps->pages[p];
		if (!pg->in_round && !pg->queued && pg->ndeltas && holds_too_much(pc, pg->hold))
			pick(pc, p);
	}
}

static void image_done(void *ctx, struct pn_io *io)
{
	struct pn_proto_ctx *pc = ctx;
	struct pn_pageserver *ps = pn_ps_of(pc);
	struct ps_page *pg = &ps->pages[io->page];
	/* On the device now: reads start from it (the durable metadata still names the old) */
	pg->img_slot = (uint8_t)(1u - pg->dur_slot);
	pg->img_lsn = pg->new_lsn;
	pg->img_crc = pg->new_crc;
	chain_trim(pg, pg->img_lsn);
	PN_ASSERT(ps->round == PS_WRITING && ps->writes > 0);
	if (--ps->writes)
		return;
	bool mutant = (pc->sc->protocol.mutations & PN_MUT_PUSHDOWN_IMAGE_UNSYNCED) != 0;
	ps->round = mutant ? PS_META_WRITE : PS_FSYNC_IMAGES; /* PD1; the mutant skips the fsync */
	pn_svc_wake(pc->svc, pc->proc_row, 0);
}

/* IDLE -> WRITING: each chosen page, rebuilt from everything ingested, goes to the slot the
 * durable metadata does not name (PD1, PD4). */
static void round_begin(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	choose_batch(pc);
	if (ps->batch_len == 0)
		return;
	ps->count.rounds++;
	ps->round = PS_WRITING;
	ps->writes = ps->batch_len;
	for (uint32_t i = 0; i < ps->batch_len; i++) {
		uint32_t page = ps->batch[i];
		struct ps_page *pg = &ps->pages[page];
		PN_ASSERT(pg->img_slot == pg->dur_slot && pg->ndeltas > 0);
		struct pn_io *io = pn_io_get(pc->svc);
		pn_ps_reconstruct(pc, page, UINT64_MAX, io->buf);
		pg->new_lsn = pg->last_end;
		pg->new_crc = pn_crc32c(io->buf, pc->store->page_size);
		io->op = PN_IO_WRITE;
		io->file = PN_FILE_PAGESERVER;
		io->why = PN_WHY_PS_IMAGE;
		io->offset = pn_ps_image_offset(pc, page, 1u - pg->dur_slot);
		io->len = pc->store->page_size;
		io->page = page;
		io->slot = 1u - pg->dur_slot;
		io->lsn = pg->new_lsn;
		io->done = image_done;
		io->ctx = pc;
		ps->count.images++;
		ps->count.image_bytes += pc->store->page_size;
		pn_io_issue(pc->svc, io);
	}
}

/* The horizon of the metadata round `seq` writes: the oldest delta start any page still
 * needs once the round's images are durable (PD2). The true value never decreases (holds are
 * set at the ingest position and only move forward), so the durable one is always safe: a
 * scan of every page is made for up to PS_SCAN_PAGES pages, else only at snapshots and when
 * the WAL held back calls for forced images. */
static pn_lsn next_horizon(const struct pn_proto_ctx *pc, uint64_t seq)
{
	const struct pn_pageserver *ps = pn_ps_of(pc);
	pn_lsn h = ps->next;
	if (pc->sc->protocol.mutations & PN_MUT_PUSHDOWN_HORIZON_EARLY)
		return h; /* the bug: WAL is released though pages without images still need it */
	bool scan = pc->store->pages <= PS_SCAN_PAGES || seq % pn_ps_log_slots(pc) == 0 ||
		    holds_too_much(pc, ps->horizon);
	if (!scan)
		return ps->horizon;
	for (uint32_t p = 0; p < pc->store->pages; p++) {
		const struct ps_page *pg = &ps->pages[p];
		pn_lsn hold = pg->in_round ? (pg->len ? pn_get64(pg->chain + 4) : 0) : pg->hold;
		if (hold && hold < h)
			h = hold;
	}
	return h;
}

/* META_FSYNC done: the round's images are what recovery starts from. */
static void round_commit(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	for (uint32_t i = 0; i < ps->batch_len; i++) {
		uint32_t page = ps->batch[i];
		struct ps_page *pg = &ps->pages[page];
		pg->dur_slot = pg->img_slot;
		pg->dur_lsn = pg->img_lsn;
		pg->dur_crc = pg->img_crc;
		pg->in_round = false;
		pg->hold = pg->len ? pn_get64(pg->chain + 4) : 0;
		maybe_queue(pc, page);
	}
	ps->batch_len = 0;
	ps->seq++;
	PN_ASSERT(ps->horizon_next >= ps->horizon);
	ps->horizon = ps->horizon_next;
	pn_wal_set_keep_from(pc->wal, PN_MIN(pn_proto_ckpt(pc)->redo_done, ps->horizon));
	ps->round = PS_IDLE;
}

static void round_io_done(void *ctx, struct pn_io *io)
{
	struct pn_proto_ctx *pc = ctx;
	struct pn_pageserver *ps = pn_ps_of(pc);
	ps->io_pending = false;
	switch (ps->round) {
	case PS_FSYNC_IMAGES: ps->round = PS_META_WRITE; break;
	case PS_META_WRITE: ps->round = PS_META_FSYNC; break;
	case PS_META_FSYNC: round_commit(pc); break;
	default: PN_ASSERT(!"unexpected page server I/O");
	}
	pn_svc_wake(pc->svc, pc->proc_row, 0);
}

static void round_advance(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	if (ps->io_pending)
		return;
	switch (ps->round) {
	case PS_IDLE: round_begin(pc); break;
	case PS_WRITING: break; /* image_done moves on */
	case PS_FSYNC_IMAGES: round_io(pc, PN_IO_FSYNC, 0, NULL, 0); break;
	case PS_META_WRITE: {
		uint64_t seq = ps->seq + 1;
		uint32_t k = pn_ps_log_slots(pc);
		ps->horizon_next = next_horizon(pc, seq);
		PN_TESTCASE("the page server writes a snapshot", seq % k == 0);
		if (seq % k == 0) { /* a snapshot: the log starts again after it */
			pn_ps_encode_meta(pc, seq, ps->horizon_next, true);
			round_io(pc, PN_IO_WRITE, ((seq / k) % 2) * ps->meta_len, ps->meta,
				 ps->meta_len);
		} else {
			pn_ps_encode_log(pc, seq, ps->horizon_next);
			round_io(pc, PN_IO_WRITE, pn_ps_log_offset(pc, seq), ps->meta, ps->log_len);
		}
		break;
	}
	case PS_META_FSYNC: round_io(pc, PN_IO_FSYNC, 0, NULL, 0); break;
	}
}

/* ---- the process ---- */

void pn_ps_start(struct pn_proto_ctx *pc)
{
	if (pushdown(pc)) {
		pn_ps_of(pc)->running = true;
		pn_svc_wake(pc->svc, pc->proc_row, PS_TICK_NS);
	}
}

void pn_ps_step(struct pn_proto_ctx *pc)
{
	PN_ASSERT(!*pc->recovering); /* recovery feeds it (pn_ps_ingest_record) */
	ingest(pc);
	serve(pc);
	round_advance(pc);
	/* After the workload, it goes on until what it ingested has its images. */
	if (!*pc->stopping || !pn_ps_idle(pc))
		pn_svc_wake(pc->svc, pc->proc_row, PS_TICK_NS);
}

/*
 * After every event (pn_engine_fire, pn_engine_io_done). While the workload runs the page
 * server ticks without pause; once it is stopping it sleeps as soon as it is idle, and its
 * idleness depends on other processes: a WAL flush after that (the checkpointer's record,
 * the WAL writer's flush of the last commits) leaves it WAL to ingest that nobody told it
 * about, and the run stalls with every commit done. Whoever makes it not idle need not know:
 * a sleeping page server that is not idle is woken here for its next tick.
 */
void pn_ps_rearm(struct pn_proto_ctx *pc)
{
	if (!pushdown(pc) || pn_ps_idle(pc) || *pc->recovering || pc->svc->failed)
		return;
	PN_TESTCASE("a stopping page server is woken by WAL flushed after it slept",
		    !pn_svc_scheduled(pc->svc, pc->proc_row));
	pn_svc_wake(pc->svc, pc->proc_row, PS_TICK_NS); /* a no-op while its tick is pending */
}

bool pn_ps_idle(const struct pn_proto_ctx *pc)
{
	const struct pn_pageserver *ps = pn_ps_of(pc);
	return !ps || !ps->running ||
	       (ps->round == PS_IDLE && ps->queue_len == 0 && ps->nreq == 0 &&
		ps->next >= pn_wal_flushed(pc->wal));
}

/* Field relationships (pn_engine_check): the global ones, and one page's chain a call. */
void pn_ps_check(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	if (!ps)
		return;
	PN_ASSERT(ps->horizon <= ps->next || *pc->recovering);
	PN_ASSERT(ps->ingested <= pn_wal_written(pc->wal) || *pc->recovering);
	PN_ASSERT(ps->queue_len <= pc->store->pages && ps->nreq <= pn_proto_buf(pc)->nframes);
	PN_ASSERT(ps->writes <= ps->batch_len && ps->batch_len <= PS_BATCH);
	PN_ASSERT((ps->round == PS_IDLE) == (ps->batch_len == 0));
	PN_ASSERT(*pc->recovering || pn_wal_keep_from(pc->wal) <= ps->horizon);
	const struct ps_page *pg = &ps->pages[ps->check_next];
	ps->check_next = (ps->check_next + 1) % pc->store->pages;
	uint32_t n = 0;
	pn_lsn prev = pg->img_lsn;
	for (uint32_t at = 0; at < pg->len; at += DELTA_HEADER + pn_get32(pg->chain + at), n++) {
		PN_ASSERT(pn_get64(pg->chain + at + 12) > prev);
		prev = pn_get64(pg->chain + at + 12);
	}
	PN_ASSERT(n == pg->ndeltas && pg->img_slot < 2 && pg->dur_slot < 2);
	PN_ASSERT(pg->dur_lsn <= pg->img_lsn && (pg->in_round || pg->img_slot == pg->dur_slot));
	PN_ASSERT(pg->ndeltas == 0 || pg->hold != 0 || pg->in_round);
}

pn_lsn pn_ps_ingested(const struct pn_proto_ctx *pc)
{
	return pushdown(pc) ? pn_ps_of(pc)->ingested : 0;
}

/* ---- recovery ---- */

bool pn_ps_recover(struct pn_proto_ctx *pc, pn_lsn redo, pn_lsn *replay_from)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	if (!pn_ps_load_meta(pc))
		return false;
	pn_ps_replay_log(pc);
	uint8_t *page = ps->images;
	for (uint32_t p = 0; p < pc->store->pages; p++) {
		struct ps_page *pg = &ps->pages[p];
		pg->img_lsn = pg->dur_lsn;
		pg->img_crc = pg->dur_crc;
		pg->img_slot = pg->dur_slot;
		pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_PAGESERVER,
				       pn_ps_image_offset(pc, p, pg->img_slot),
				       pc->store->page_size, page);
		if (pn_crc32c(page, pc->store->page_size) != pg->img_crc) {
			pn_svc_violation(
				pc->svc, PN_VIOL_RECOVERY, p,
				"the page server's image of page %u (slot %u, LSN %llX) that "
				"its metadata %llu names is torn or missing",
				p, pg->img_slot, (unsigned long long)pg->img_lsn,
				(unsigned long long)ps->seq);
			return false;
		}
	}
	*replay_from = PN_MIN(redo, ps->horizon);
	pn_wal_set_keep_from(pc->wal, *replay_from);
	return true;
}

/* The page server's durable state must not be ahead of the durable WAL (PD3): an image or a
 * horizon past the end of the log holds changes that the crash took back. */
static bool ahead_of_wal(struct pn_proto_ctx *pc, pn_lsn end)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	for (uint32_t p = 0; p < pc->store->pages; p++) {
		if (ps->pages[p].dur_lsn > end) {
			pn_svc_violation(
				pc->svc, PN_VIOL_RECOVERY, p,
				"the page server's image of page %u is at LSN %llX, past the end "
				"of the WAL at %llX (P3)",
				p, (unsigned long long)ps->pages[p].dur_lsn,
				(unsigned long long)end);
			return true;
		}
	}
	if (ps->horizon > end) {
		pn_svc_violation(
			pc->svc, PN_VIOL_RECOVERY, UINT32_MAX,
			"the page server's horizon %llX is past the end of the WAL at %llX (P3)",
			(unsigned long long)ps->horizon, (unsigned long long)end);
		return true;
	}
	return false;
}

void pn_ps_recovery_end(struct pn_proto_ctx *pc, pn_lsn end, pn_lsn last_start)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	if (ahead_of_wal(pc, end))
		return;
	ps->next = end;
	ps->prev = last_start;
	ps->ingested = PN_MAX(ps->ingested, end);
}

/* Deltas replayed per read at the two percentiles, from the histogram (n reads, n > 0). */
static void replay_percentiles(const struct pn_pageserver *ps, uint64_t *p50, uint64_t *p99)
{
	uint64_t n = ps->count.reads, r50 = n / 2, r99 = (n * 99) / 100, seen = 0;
	bool got50 = false;
	PN_ASSERT(n > 0);
	for (uint32_t v = 0; v < HIST_LEN; v++) {
		seen += ps->hist[v];
		if (!got50 && seen > r50) {
			*p50 = v;
			got50 = true;
		}
		if (seen > r99) {
			*p99 = v;
			break;
		}
	}
}

/* The figures (enum pn_ps_figure, the declaration's list): the per-read ones have no value
 * without a read; what the page server writes (images, metadata) and, with the deltas, what
 * Neon's page server would also write as delta layers (ours keep them in the WAL:
 * docs/protocol.md 7). */
void pn_ps_finish_metrics(struct pn_proto_ctx *pc)
{
	if (!pushdown(pc))
		return;
	const struct pn_pageserver *ps = pn_ps_of(pc);
	const struct ps_counters *c = &ps->count;
	struct pn_row_figures *f = &pc->m->row;
	uint64_t p50 = 0, p99 = 0, written = c->image_bytes + c->meta_bytes;
	bool read = c->reads != 0;
	if (read)
		replay_percentiles(ps, &p50, &p99);
	pn_figure_u64(f, PN_PS_READS, c->reads);
	pn_figure_u64(f, PN_PS_DELTAS_REPLAYED, c->deltas_replayed);
	pn_figure_real(f, PN_PS_REPLAY_MEAN,
		       read ? (double)c->deltas_replayed / (double)c->reads : 0.0, read);
	pn_figure_real(f, PN_PS_REPLAY_P50, (double)p50, read);
	pn_figure_real(f, PN_PS_REPLAY_P99, (double)p99, read);
	pn_figure_real(f, PN_PS_REPLAY_MAX, (double)c->replay_max, read);
	pn_figure_u64(f, PN_PS_DELTA_RECORDS, c->delta_records);
	pn_figure_u64(f, PN_PS_DELTA_BYTES, c->delta_bytes);
	pn_figure_u64(f, PN_PS_IMAGES, c->images);
	pn_figure_u64(f, PN_PS_IMAGE_BYTES, c->image_bytes);
	pn_figure_u64(f, PN_PS_META_BYTES, c->meta_bytes);
	pn_figure_u64(f, PN_PS_BYTES_WRITTEN, written);
	pn_figure_u64(f, PN_PS_BYTES_WITH_DELTAS, written + c->delta_bytes);
	pn_figure_u64(f, PN_PS_FSYNCS, c->fsyncs);
	pn_figure_u64(f, PN_PS_ROUNDS, c->rounds);
}

/* ---- the row ---- */

/* The fingerprint's share of the row (protocol.h memory): ingestion's position, the durable
 * and the next metadata, the round and its batch, the queue, the requests waiting, every
 * page's images, hold and chain (its length and newest LSN: the bytes are the WAL's, which
 * the fingerprint has) and the compute's last-written LSNs. Not the histogram (a metric) nor
 * the scratch buffers a round encodes from this state, nor the counters (metrics). */
static void ps_memory(const struct pn_proto_ctx *pc, const struct pn_hasher *h)
{
	const struct pn_pageserver *ps = pc->state;
	uint32_t pages = pc->store->pages;
	PN_ASSERT(ps != NULL && ps->batch_len <= PS_BATCH);
	uint64_t v[8] = {ps->next,
			 ps->prev,
			 ps->ingested,
			 ps->horizon,
			 ps->horizon_next,
			 ps->seq,
			 (uint64_t)ps->round << 40 | (uint64_t)ps->running << 33 |
				 (uint64_t)ps->io_pending << 32 | ps->writes,
			 (uint64_t)ps->queue_len << 32 | ps->nreq};
	h->feed(h->ctx, v, sizeof(v));
	h->feed(h->ctx, ps->queue, sizeof(uint32_t) * ps->queue_len);
	h->feed(h->ctx, ps->batch, sizeof(uint32_t) * ps->batch_len);
	for (uint32_t i = 0; i < ps->nreq; i++) {
		const struct ps_request *r = &ps->req[i];
		uint64_t q[2] = {(uint64_t)r->frame << 32 | r->page, (uint64_t)r->proc};
		h->feed(h->ctx, q, sizeof(q));
		h->feed(h->ctx, &r->lsn, sizeof(r->lsn));
	}
	for (uint32_t p = 0; p < pages; p++) {
		const struct ps_page *pg = &ps->pages[p];
		uint64_t g[8] = {pg->img_lsn,
				 pg->dur_lsn,
				 pg->new_lsn,
				 pg->hold,
				 (uint64_t)pg->img_crc << 32 | pg->dur_crc,
				 (uint64_t)pg->new_crc << 32 | (uint64_t)pg->img_slot << 24 |
					 (uint64_t)pg->dur_slot << 16 | (uint64_t)pg->queued << 8 |
					 pg->in_round,
				 pg->last_end,
				 (uint64_t)pg->ndeltas << 32 | pg->len};
		h->feed(h->ctx, g, sizeof(g));
	}
	h->feed(h->ctx, ps->last_written, sizeof(pn_lsn) * pages);
}

static pn_lsn horizon_of(void *ctx) { return pn_ps_horizon(ctx); }

static bool ps_init(struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc->state == NULL);
	PN_ASSERT(pc->sc->protocol.mode == PN_MODE_PUSHDOWN);
	if (!pn_ps_init(pc))
		return false;
	pn_wal_set_horizon(pc->wal, horizon_of, pc);
	return true;
}

static bool drop_write(struct pn_proto_ctx *pc, uint32_t frame)
{
	pn_ps_drop(pc, frame);
	return true;
}

static void read_page(struct pn_proto_ctx *pc, uint32_t page, pn_lsn lsn, uint8_t *out)
{
	pn_ps_reconstruct(pc, page, lsn, out);
}

const struct pn_protocol_ops pn_protocol_pushdown = {
	.name = "pushdown",
	.setup = {.init = ps_init, .free = pn_ps_free, .format_pages = pn_ps_format},
	.write = {.decide = pn_protocol_decide_none, .recheck = pn_protocol_recheck},
	.buffer = {.page_ready = pn_ps_page_ready,
		   .page_read = pn_ps_request,
		   .drop_write = drop_write},
	.recovery = {.from = pn_ps_recover,
		     .redo_record = pn_ps_ingest_record,
		     .end = pn_ps_recovery_end},
	.process = {.start = pn_ps_start,
		    .step = pn_ps_step,
		    .idle = pn_ps_idle,
		    .after_event = pn_ps_rearm,
		    .read_page = read_page},
	.state = {.memory = ps_memory, .check = pn_ps_check},
	.metrics = {.finish = pn_ps_finish_metrics},
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
#include "protocols.h"

/* The page server's figures, in enum pn_ps_figure's order (the JSON object "pushdown"). */
static const struct pn_figure_decl ps_figures[PN_PS_FIGURES] = {
	[PN_PS_READS] = {"reads", "page server reads", NULL, PN_FIGURE_SECTION},
	[PN_PS_DELTAS_REPLAYED] = {"deltas_replayed", NULL, NULL, PN_FIGURE_SECTION},
	[PN_PS_REPLAY_MEAN] = {"deltas_per_read_mean", "deltas replayed/read mean", "%.2f",
			       PN_FIGURE_SECTION},
	[PN_PS_REPLAY_P50] = {"deltas_per_read_p50", "deltas replayed/read p50", "%.0f",
			      PN_FIGURE_SECTION},
	[PN_PS_REPLAY_P99] = {"deltas_per_read_p99", "deltas replayed/read p99", "%.0f",
			      PN_FIGURE_SECTION},
	[PN_PS_REPLAY_MAX] = {"deltas_per_read_max", "deltas replayed/read max", "%.0f",
			      PN_FIGURE_SECTION},
	[PN_PS_DELTA_RECORDS] = {"delta_records", "page server deltas", NULL, PN_FIGURE_SECTION},
	[PN_PS_DELTA_BYTES] = {"delta_bytes", "page server delta bytes", NULL, PN_FIGURE_SECTION},
	[PN_PS_IMAGES] = {"images", "page server images", NULL, PN_FIGURE_SECTION},
	[PN_PS_IMAGE_BYTES] = {"image_bytes", "page server image bytes", NULL, PN_FIGURE_SECTION},
	[PN_PS_META_BYTES] = {"metadata_bytes", "page server metadata bytes", NULL,
			      PN_FIGURE_SECTION},
	[PN_PS_BYTES_WRITTEN] = {"bytes_written", "page server bytes written", NULL,
				 PN_FIGURE_SECTION},
	[PN_PS_BYTES_WITH_DELTAS] = {"bytes_written_with_deltas", "  with the deltas", NULL,
				     PN_FIGURE_SECTION},
	[PN_PS_FSYNCS] = {"fsyncs", "page server fsyncs", NULL, PN_FIGURE_SECTION},
	[PN_PS_ROUNDS] = {"rounds", NULL, NULL, PN_FIGURE_SECTION},
};

const struct pn_protocol_decl pn_decl_pushdown = {
	.mode = PN_MODE_PUSHDOWN,
	.policy = PN_POLICY_PROTOTYPE,
	.keys = PN_KEY_IMAGE_THRESHOLD,
	.caps = PN_CAP_PAGE_SERVER,
	.mutants = PN_MUT_PUSHDOWN_IMAGE_UNSYNCED | PN_MUT_PUSHDOWN_HORIZON_EARLY |
		   PN_MUT_PUSHDOWN_INGEST_UNFLUSHED,
	.figures = ps_figures,
	.nfigures = PN_PS_FIGURES,
	.section = "pushdown",
};

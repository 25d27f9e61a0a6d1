/*
 * engine.c: the engine's assembly (engine layer): init and format, processes and their
 * scheduling, the I/O table, the background writer and the WAL writer, violations, the
 * full consistency check, and the final metrics.
 *
 * Processes: backends 0..clients-1, then the checkpointer, the background writer, the WAL
 * writer and the startup process (recovery). A process runs only through pn_engine_fire():
 * the world calls it at the time pn_svc_wake() asked for; a later pn_svc_wake() for an earlier time
 * supersedes the pending one (tokens), so no process runs twice for one wake.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BGWRITER_DELAY_NS 200000000ull /* bgwriter_delay = 200ms */
#define WALWRITER_DELAY_NS 200000000ull
#define BGWRITER_MAXPAGES 100u
#define CHECK_SLICE 4u
#define CHECK_EVERY 8u
/* A pool of at most this many frames is checked in rotation every call (it is in cache);
 * a bigger one, in a protocol without a check_frame hook, every CHECK_EVERY calls, with
 * the frames an event changed checked after it. */
#define CHECK_FRAMES_EACH_CALL 256u

static bool unsupported(struct pn_engine *e)
{
	const struct pn_scenario *sc = e->sc;
	const char *what = NULL;
	if (sc->storage.buffers < sc->workload.clients + 2)
		what = "storage.buffers must be at least workload.clients + 2";
	/* what a row cannot run (keys it does not read, truncation, a publish step) is refused
	 * from its declaration by the loader and the CLI (src/protocol/protocols.h) */
	if (what)
		snprintf(e->svc.error, sizeof(e->svc.error), "%s: %s", sc->path, what);
	return what != NULL;
}

static bool alloc_procs(struct pn_engine *e)
{
	e->nbackends = e->sc->workload.clients;
	e->nprocs = e->nbackends + 5;
	e->procs = calloc(e->nprocs, sizeof(*e->procs));
	if (!e->procs)
		return false;
	e->proc_ckpt = e->nbackends;
	e->proc_bgw = e->nbackends + 1;
	e->proc_walw = e->nbackends + 2;
	e->proc_startup = e->nbackends + 3;
	e->proc_row = e->nbackends + 4;
	e->pctx.nbackends = e->nbackends;
	e->pctx.proc_ckpt = e->proc_ckpt;
	e->pctx.proc_startup = e->proc_startup;
	e->pctx.proc_row = e->proc_row;
	for (uint32_t i = 0; i < e->nprocs; i++) {
		e->procs[i].id = i;
		e->procs[i].kind = i < e->nbackends       ? PN_PROC_BACKEND
				   : i == e->proc_ckpt    ? PN_PROC_CHECKPOINTER
				   : i == e->proc_bgw     ? PN_PROC_BGWRITER
				   : i == e->proc_walw    ? PN_PROC_WALWRITER
				   : i == e->proc_startup ? PN_PROC_STARTUP
							  : PN_PROC_ROW;
		e->procs[i].state = i < e->nbackends ? PN_B_NEXT : PN_B_DONE;
	}
	return true;
}

static bool init_ckpt(struct pn_engine *e)
{
	struct pn_ckpt_handles h = {
		.sc = e->sc,
		.svc = &e->svc,
		.wal = &e->wal,
		.buf = &e->buf,
		.store = &e->store,
		.m = &e->m,
		.proto = e->proto,
		.pctx = &e->pctx,
		.procs = e->procs,
		.nprocs = e->nprocs,
		.proc_ckpt = e->proc_ckpt,
		.stopping = &e->stopping,
		.recovering = &e->rcv.active,
		.next_xid = &e->next_xid,
		.sysid = e->sysid,
		.heap_pages = e->heap_pages,
		.generations = e->generations,
	};
	pn_ckpt_init(&e->ckpt, &h);
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		e->ckpt.runs[r].snapshot = calloc(1, e->heap_pages);
		e->ckpt.runs[r].selbuf = calloc(1, pn_store_selector_bytes(&e->store));
		if (!e->ckpt.runs[r].snapshot || !e->ckpt.runs[r].selbuf)
			return false;
	}
	return true;
}

static bool alloc_logs(struct pn_engine *e)
{
	const struct pn_scenario *sc = e->sc;
	uint64_t n = sc->workload.kind == PN_WL_SCRIPT ? sc->workload.script_len
						       : sc->workload.transactions;
	return pn_backends_init(&e->bk, n);
}

/* The WAL passed checkpoint_segments (wal.c's XLogCheckpointNeeded). */
static void wal_segments_due(void *ctx) { pn_ckpt_request(ctx, PN_CKPT_WAL, false); }

static bool init_buf(struct pn_engine *e, uint32_t nframes)
{
	struct pn_buf_handles h = {
		.sc = e->sc,
		.svc = &e->svc,
		.wal = &e->wal,
		.store = &e->store,
		.m = &e->m,
		.proto = e->proto,
		.pctx = &e->pctx,
		.ckpt_seq_begun = &e->ckpt.seq_begun,
		.ckpt_seq_done = &e->ckpt.seq_done,
		.recovering = &e->rcv.active,
		.page_size = e->page_size,
		.pages = e->pages,
		.nprocs = e->nprocs,
	};
	return pn_buf_init(&e->buf, &h, nframes);
}

static void init_rcv(struct pn_engine *e)
{
	struct pn_recovery_handles h = {
		.sc = e->sc,
		.svc = &e->svc,
		.wal = &e->wal,
		.buf = &e->buf,
		.store = &e->store,
		.ckpt = &e->ckpt,
		.m = &e->m,
		.proto = e->proto,
		.pctx = &e->pctx,
		.procs = e->procs,
		.proc_startup = e->proc_startup,
		.next_xid = &e->next_xid,
		.sysid = e->sysid,
		.page_size = e->page_size,
		.pages = e->pages,
		.generations = e->generations,
	};
	pn_recovery_init(&e->rcv, &h);
}

/* The workload's init, over what it reads; it may size the relation. */
static bool init_client(struct pn_engine *e)
{
	struct pn_client_setup s = {
		.sc = e->sc,
		.error = e->svc.error,
		.error_size = sizeof(e->svc.error),
		.page_size = e->page_size,
		.slru_pages = e->slru_pages,
		.heap_pages = e->heap_pages,
		.pages = e->pages,
	};
	if (!e->client->init(&s, &e->client_state)) {
		if (e->client_state && e->client->free)
			e->client->free(e->client_state);
		e->client_state = NULL;
		return false;
	}
	PN_ASSERT(s.pages == s.heap_pages + s.slru_pages);
	PN_ASSERT(s.slru_pages == e->slru_pages);
	e->heap_pages = s.heap_pages;
	e->pages = s.pages;
	return true;
}

/* The client services' and the backends' handles. */
static void init_client_handles(struct pn_engine *e)
{
	e->cl = (struct pn_client_handles){
		.sc = e->sc,
		.svc = &e->svc,
		.wal = &e->wal,
		.buf = &e->buf,
		.store = &e->store,
		.ckpt = &e->ckpt,
		.m = &e->m,
		.proto = e->proto,
		.pctx = &e->pctx,
		.ops = e->client,
		.state = e->client_state,
		.page_size = e->page_size,
		.pages = e->pages,
		.nbackends = e->nbackends,
	};
	struct pn_backend_handles h = {
		.cl = &e->cl,
		.procs = e->procs,
		.next_xid = &e->next_xid,
		.heap_pages = e->heap_pages,
		.slru_pages = e->slru_pages,
	};
	pn_backends_bind(&e->bk, &h);
}

bool pn_engine_recover(struct pn_engine *e)
{
	for (uint32_t i = 0; i < e->nbackends; i++) /* crash recovery: no client runs */
		pn_backend_set_state(&e->procs[i], PN_B_DONE);
	return pn_recovery_begin(&e->rcv);
}

bool pn_engine_init(struct pn_engine *e, const struct pn_scenario *sc, const struct pn_env *env,
		    bool fresh, const struct pn_client_ops *client,
		    const struct pn_protocol_ops *proto)
{
	PN_ASSERT(client != NULL);
	PN_ASSERT(client->init != NULL);
	PN_ASSERT(client->next != NULL);
	PN_ASSERT(proto != NULL);
	PN_ASSERT(proto->write.decide != NULL);
	PN_ASSERT(proto->state.memory != NULL); /* docs/checker.md 13: every row's state */
	memset(e, 0, sizeof(*e));
	e->sc = sc;
	e->svc.env = *env;
	e->client = client;
	e->proto = proto;
	e->pctx = (struct pn_proto_ctx){.sc = sc,
					.svc = &e->svc,
					.wal = &e->wal,
					.store = &e->store,
					.m = &e->m,
					.buf_handle = &e->buf,
					.ckpt_handle = &e->ckpt,
					.client_handle = &e->cl,
					.recovering = &e->rcv.active,
					.stopping = &e->stopping,
					.row = proto};
	e->page_size = sc->storage.page_size;
	e->heap_pages = sc->storage.pages;
	e->slru_pages = 2;
	e->pages = e->heap_pages + e->slru_pages;
	e->generations = proto->setup.generations ? proto->setup.generations(sc) : 1;
	e->sysid = 7300000000000000000ull + sc->seed % 1000000;
	e->pctx.sysid = e->sysid;
	if (unsupported(e))
		return false;
	if (!init_client(e))
		return false;
	uint32_t nframes = sc->storage.buffers;
	if (!alloc_procs(e) || !init_buf(e, nframes) ||
	    !pn_svc_init(&e->svc, env, 4 * nframes + 64, 2u * e->page_size, e->nprocs) ||
	    !pn_store_init(&e->store, sc, &e->svc, e->heap_pages, e->pages, e->generations,
			   proto->store_flags) ||
	    !init_ckpt(e) || !pn_wal_init(&e->wal, sc, &e->svc, &e->m, e->sysid, e->nprocs) ||
	    !alloc_logs(e) || (proto->setup.init && !proto->setup.init(&e->pctx))) {
		snprintf(e->svc.error, sizeof(e->svc.error), "%s: out of memory", sc->path);
		return false;
	}
	init_rcv(e);
	init_client_handles(e);
	pn_wal_on_segments(&e->wal, wal_segments_due, &e->ckpt);
	(void)fresh;
	return true;
}

void pn_engine_free(struct pn_engine *e)
{
	if (e->client && e->client->free && e->client_state)
		e->client->free(e->client_state);
	e->client_state = NULL;
	pn_recovery_free(&e->rcv);
	pn_wal_free(&e->wal);
	pn_buf_free(&e->buf);
	pn_store_free(&e->store);
	if (e->proto && e->proto->setup.free)
		e->proto->setup.free(&e->pctx);
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		free(e->ckpt.runs[r].snapshot);
		free(e->ckpt.runs[r].selbuf);
	}
	free(e->procs);
	pn_svc_free(&e->svc);
	pn_backends_free(&e->bk);
}

void pn_engine_initial_page(const struct pn_engine *e, uint32_t p, uint8_t *page)
{
	pn_client_initial_page(&e->cl, p, page);
}

/* What formatting writes besides the pages: a shutdown checkpoint as the only WAL record,
 * the control file naming it, and the protocol's own (selector area 0: every baseline = slot
 * 0). */
static void format_rest(struct pn_engine *e, pn_format_write_fn write, void *ctx)
{
	struct pn_ckpt_run *run = &e->ckpt.runs[0];
	uint8_t main[88] = {0};
	pn_lsn start = pn_wal_insert_start(&e->wal);
	pn_put64(main, start);
	pn_put32(main + 8, 1);
	pn_put32(main + 12, 1);
	struct pn_wal_record rec = {.main_data = main, .main_len = sizeof(main)};
	pn_lsn s, end = pn_wal_insert(&e->wal, &rec, PN_REC_XLOG_CHECKPOINT_SHUTDOWN, &s);
	PN_ASSERT(s == start);
	pn_lsn page_addr = start - start % PN_XLOG_BLCKSZ;
	write(ctx, PN_FILE_WAL, pn_wal_file_offset(&e->wal, page_addr),
	      pn_wal_ring_page(&e->wal, page_addr), PN_XLOG_BLCKSZ);
	pn_wal_set_durable(&e->wal, end);
	pn_wal_set_redo(&e->wal, start);
	pn_wal_set_keep_from(&e->wal, start);
	e->ckpt.redo_done = start;
	e->ckpt.control = (struct pn_control){.checkpoint = start, .redo = start, .state = 1};
	pn_ckpt_encode_control(&e->ckpt, &e->ckpt.control, run->ctlbuf);
	write(ctx, PN_FILE_CONTROL, 0, run->ctlbuf, PN_CONTROL_SIZE);
	if (e->proto->setup.format)
		e->proto->setup.format(&e->pctx, write, ctx);
	memset(e->m.rec_count, 0, sizeof(e->m.rec_count));
	memset(e->m.rec_bytes, 0, sizeof(e->m.rec_bytes));
	memset(e->m.rec_fpi_bytes, 0, sizeof(e->m.rec_fpi_bytes));
	e->m.wal_bytes = e->m.wal_records = 0;
}

/* Formats a fresh device: every page at slot 0 (pushdown: the page server's images), then
 * format_rest. */
void pn_engine_format(struct pn_engine *e, pn_format_write_fn write, void *ctx)
{
	uint8_t *page = e->svc.io_bufs;
	for (uint32_t p = 0; p < e->pages && !e->proto->setup.format_pages; p++) {
		pn_engine_initial_page(e, p, page);
		write(ctx, PN_FILE_DATA, pn_store_offset(&e->store, p, 0), page, e->page_size);
	}
	if (e->proto->setup.format_pages)
		e->proto->setup.format_pages(&e->pctx, write, ctx);
	format_rest(e, write, ctx);
}

uint64_t pn_engine_lazy_end(const struct pn_engine *e)
{
	if (e->proto->setup.format_pages || e->store.place || !e->client->page_init_fixed)
		return 0;
	uint64_t end = 0;
	for (uint32_t p = 0; p < e->pages; p++)
		end = PN_MAX(end, pn_store_offset(&e->store, p, 0) + e->page_size);
	return end;
}

void pn_engine_format_lazy(struct pn_engine *e, pn_format_write_fn write, void *ctx)
{
	PN_ASSERT(pn_engine_lazy_end(e) != 0);
	format_rest(e, write, ctx);
}

/* The page whose slot 0 is at data file offset off, or UINT32_MAX (pn_store_offset's
 * inverse; no placement policy). */
static uint32_t page_at(const struct pn_store *s, uint64_t off)
{
	uint64_t idx = off / s->page_size, heap = (uint64_t)s->heap_pages * s->generations;
	uint64_t p = idx >= heap                      ? s->heap_pages + (idx - heap)
		     : s->layout == PN_LAYOUT_STRIPED ? idx
		     : idx % s->generations == 0      ? idx / s->generations
						      : UINT64_MAX;
	if (p >= s->pages || pn_store_offset(s, (uint32_t)p, 0) != off)
		return UINT32_MAX;
	return (uint32_t)p;
}

bool pn_engine_lazy_read(struct pn_engine *e, uint64_t off, uint32_t len, uint8_t *out)
{
	PN_ASSERT(e->client->page_init_fixed && !e->store.place);
	/* a page only partly read is built in the second spare's second page (backend.c's
	 * copy takes its first) */
	uint8_t *part = e->svc.io_bufs + (size_t)(e->svc.nios + 2) * e->svc.io_buf_bytes -
			e->page_size;
	bool any = false;
	for (uint64_t at = off - off % e->page_size; at < off + len; at += e->page_size) {
		uint64_t lo = PN_MAX(at, off), hi = PN_MIN(at + e->page_size, off + len);
		uint32_t p = page_at(&e->store, at);
		if (p == UINT32_MAX) {
			memset(out + (lo - off), 0, hi - lo);
			continue;
		}
		bool whole = hi - lo == e->page_size;
		uint8_t *page = whole ? out + (lo - off) : part;
		PN_ASSERT(pn_client_initial_fixed(&e->cl, p, page));
		if (!whole)
			memcpy(out + (lo - off), page + (lo - at), hi - lo);
		else
			pn_buf_note_built(&e->buf, page); /* B8 */
		any = true;
	}
	return any;
}

void pn_engine_start(struct pn_engine *e)
{
	for (uint32_t i = 0; i < e->nbackends; i++)
		pn_svc_wake(&e->svc, i, 1000u * (i + 1));
	pn_svc_wake(&e->svc, e->proc_ckpt, 1);
	pn_svc_wake(&e->svc, e->proc_bgw, BGWRITER_DELAY_NS);
	pn_svc_wake(&e->svc, e->proc_walw, WALWRITER_DELAY_NS);
	if (e->proto->process.start)
		e->proto->process.start(&e->pctx);
}

static bool backends_done(const struct pn_engine *e)
{
	for (uint32_t i = 0; i < e->nbackends; i++)
		if (e->procs[i].state != PN_B_DONE)
			return false;
	return true;
}

static void bgwriter_step(struct pn_engine *e)
{
	uint32_t written = 0;
	for (uint32_t n = 0, i = e->buf.clock_hand;
	     n < e->buf.nframes && written < BGWRITER_MAXPAGES;
	     n++, i = i + 1 == e->buf.nframes ? 0 : i + 1) { /* no division a frame */
		struct pn_frame *f = pn_buf_frame(&e->buf, i);
		if (!f->valid || !f->dirty || f->usage || !pn_buf_idle(&e->buf, i))
			continue;
		enum pn_write_result w = pn_buf_write(&e->buf, i, PN_WHY_BGWRITER, UINT32_MAX, -1,
						      NULL);
		if (w == PN_WRITE_STARTED) {
			written++;
			e->m.bgwriter_writes++;
		} else if (w == PN_WRITE_BUSY && f->last_lsn > pn_wal_flushed(&e->wal)) {
			pn_wal_start_flush(&e->wal, pn_wal_insert_lsn(&e->wal));
		}
	}
	if (e->proto->ckpt.background)
		e->proto->ckpt.background(&e->pctx);
	if (!e->stopping)
		pn_svc_wake(&e->svc, e->proc_bgw, BGWRITER_DELAY_NS);
}

static void walwriter_step(struct pn_engine *e)
{
	if (pn_wal_insert_lsn(&e->wal) > pn_wal_flushed(&e->wal))
		pn_wal_start_flush(&e->wal, pn_wal_insert_lsn(&e->wal));
	if (!e->stopping)
		pn_svc_wake(&e->svc, e->proc_walw, WALWRITER_DELAY_NS);
}

void pn_engine_fire(struct pn_engine *e, uint32_t proc, uint64_t token)
{
	PN_ASSERT(proc < e->nprocs);
	struct pn_proc *p = &e->procs[proc];
	if (!pn_svc_fire(&e->svc, proc, token))
		return;
	switch (p->kind) {
	case PN_PROC_BACKEND: pn_backend_step(&e->bk, p); break;
	case PN_PROC_CHECKPOINTER: pn_ckpt_step(&e->ckpt); break;
	case PN_PROC_BGWRITER: bgwriter_step(e); break;
	case PN_PROC_WALWRITER: walwriter_step(e); break;
	case PN_PROC_STARTUP: pn_recovery_step(&e->rcv, p); break;
	case PN_PROC_ROW:
		PN_ASSERT(e->proto->process.step != NULL);
		e->proto->process.step(&e->pctx);
		break;
	}
	if (!e->stopping && !e->rcv.active && backends_done(e)) {
		e->stopping = true;
		pn_ckpt_release_pause(&e->ckpt);
	}
	if (e->proto->process.after_event)
		e->proto->process.after_event(&e->pctx);
}

bool pn_engine_finished(const struct pn_engine *e)
{
	if (e->svc.failed)
		return true;
	if (e->rcv.active || !backends_done(e) || pn_ckpt_active(&e->ckpt) ||
	    pn_ckpt_pending(&e->ckpt) || pn_wal_flushing(&e->wal) ||
	    (e->proto->process.idle && !e->proto->process.idle(&e->pctx)))
		return false;
	return pn_io_all_free(&e->svc);
}

void pn_engine_io_done(struct pn_engine *e, struct pn_io *io)
{
	pn_io_complete(&e->svc, io);
	if (e->proto->process.after_event)
		e->proto->process.after_event(&e->pctx);
}

static void check_frame(struct pn_engine *e, uint32_t i)
{
	const struct pn_frame *f = pn_buf_frame(&e->buf, i);
	PN_ASSERT(f->usage <= 5);
	PN_ASSERT(!f->locked || f->pins > 0);
	PN_ASSERT(f->pins <= e->nprocs);
	if (f->page == PN_NO_FRAME) {
		PN_ASSERT(!f->valid && !f->dirty && f->pins == 0);
		return;
	}
	PN_ASSERT(f->page < e->pages && e->buf.page_frame[f->page] == i);
	PN_ASSERT(!f->dirty || f->valid);
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		if (!(f->ckpt_needed & (1u << r)))
			continue;
		PN_ASSERT(e->ckpt.runs[r].state != PN_C_IDLE); /* bit r only while run r runs */
		PN_ASSERT(f->ckpt_run_seq[r] == e->ckpt.runs[r].seq);
	}
	if (e->proto->state.check_frame)
		e->proto->state.check_frame(&e->pctx, i);
}

/* One call of the check: its rotation (the call count, the touched frames taken, the next
 * frame) moves the same whether `verify` or not, so the calls after a skipped one check the
 * frames they would have (pn_engine_check_skip). The modules' checks are not called when
 * skipped: pn_svc_check's and pn_store_check's own rotations (pure assertions, no violation
 * reported) then stay where they were. */
static void check_turn(struct pn_engine *e, bool verify)
{
	PN_ASSERT(e->nbackends < e->nprocs);
	/* The modules' own checks (pure assertions) every CHECK_EVERY calls: a broken field
	 * relationship stops the run within CHECK_EVERY events, at a fraction of the per-event
	 * cost (docs/ARCHITECTURE.md section 5). */
	if (++e->check_calls == CHECK_EVERY) {
		e->check_calls = 0;
		if (verify) {
			pn_wal_check(&e->wal, e->rcv.active);
			pn_svc_check(&e->svc);
			if (e->proto->state.check)
				e->proto->state.check(&e->pctx);
			pn_store_check(&e->store);
			pn_ckpt_check(&e->ckpt);
			pn_backend_check(&e->bk);
		}
	}
	/* Frames in rotation, CHECK_SLICE a turn: every call for a small pool or a row with a
	 * check_frame hook (it may report R4, and the event a violation is found at is part of
	 * the result). A big pool without one checks the frames the event changed, while they
	 * are in cache (bufpool.h PN_BUF_TOUCHED), and takes a turn every CHECK_EVERY calls:
	 * the rotation's cache misses were the check's cost (docs/performance.md). Every event
	 * stays O(1), and every frame is checked at least every nframes / CHECK_SLICE
	 * (* CHECK_EVERY) events. */
	uint32_t ntouched = 0;
	const uint32_t *touched = pn_buf_take_touched(&e->buf, &ntouched);
	bool each_call = e->proto->state.check_frame != NULL ||
			 e->buf.nframes <= CHECK_FRAMES_EACH_CALL;
	if (!each_call) {
		for (uint32_t n = 0; verify && n < ntouched; n++)
			check_frame(e, touched[n]);
		if (e->check_calls != 0)
			return;
	}
	uint32_t turn = PN_MIN(e->buf.nframes, CHECK_SLICE);
	if (!verify) {                       /* the same place, without the frames' cache misses */
		e->check_frame_next += turn; /* turn <= nframes: one subtraction at most */
		if (e->check_frame_next >= e->buf.nframes)
			e->check_frame_next -= e->buf.nframes;
		return;
	}
	for (uint32_t n = 0; n < turn; n++) {
		check_frame(e, e->check_frame_next);
		if (++e->check_frame_next == e->buf.nframes) /* no division on the per-event path */
			e->check_frame_next = 0;
	}
}

void pn_engine_check(struct pn_engine *e) { check_turn(e, true); }

void pn_engine_check_skip(struct pn_engine *e) { check_turn(e, false); }

void pn_engine_event_seen(struct pn_engine *e, bool seen) { e->buf.seen = seen; }

void pn_engine_finish_metrics(struct pn_engine *e)
{
	e->m.elapsed_ns = e->svc.env.now_ns(e->svc.env.ctx);
	e->m.slots_used = pn_store_slots_used(&e->store);
	e->m.read_runs = pn_store_read_runs(&e->store);
	if (e->proto->metrics.finish)
		e->proto->metrics.finish(&e->pctx);
	pn_backends_latency(&e->bk, &e->m.commit_latency_ns_p50, &e->m.commit_latency_ns_p99,
			    &e->m.commit_latency_ns_max);
}

/* ---- Accessors for the layers above ----
 * engine.h's accessor section: thin reads for sim/, disk/, model/, cli/, fuzz/ and the tests,
 * so that nothing above the engine reads a field of struct pn_engine or struct pn_proc. */

struct pn_engine *pn_engine_new(void)
{
	struct pn_engine *e = calloc(1, sizeof(*e));
	PN_ASSERT(e != NULL);
	return e;
}

void pn_engine_delete(struct pn_engine *e)
{
	if (!e)
		return;
	pn_engine_free(e);
	free(e);
}

struct pn_geometry pn_engine_geometry(const struct pn_engine *e)
{
	return (struct pn_geometry){.page_size = e->page_size,
				    .heap_pages = e->heap_pages,
				    .slru_pages = e->slru_pages,
				    .pages = e->pages,
				    .generations = e->generations,
				    .sysid = e->sysid};
}

uint32_t pn_engine_rel_blocks(const struct pn_engine *e) { return e->store.nblocks; }

const struct pn_scenario *pn_engine_scenario(const struct pn_engine *e) { return e->sc; }

uint32_t pn_engine_io_count(const struct pn_engine *e) { return e->svc.nios; }

struct pn_io *pn_engine_io(struct pn_engine *e, uint32_t index)
{
	PN_ASSERT(index < e->svc.nios);
	return &e->svc.ios[index];
}

const struct pn_client_ops *pn_engine_client(const struct pn_engine *e, void **state)
{
	PN_ASSERT(state != NULL);
	*state = e->client_state;
	return e->client;
}

uint32_t pn_engine_proc_count(const struct pn_engine *e) { return e->nprocs; }

void pn_engine_proc_info(const struct pn_engine *e, uint32_t proc, struct pn_proc_info *out)
{
	PN_ASSERT(proc < e->nprocs);
	const struct pn_proc *p = &e->procs[proc];
	*out = (struct pn_proc_info){.kind = p->kind,
				     .state = p->state == PN_B_PROTO
						      ? PN_B_PROTO + (uint32_t)p->proto_sub
						      : (uint32_t)p->state,
				     .op = p->op,
				     .xid = p->xid,
				     .wake_token = e->svc.wakes[proc].token};
}

uint64_t pn_engine_wake_token(const struct pn_engine *e, uint32_t proc)
{
	PN_ASSERT(proc < e->nprocs);
	return e->svc.wakes[proc].token;
}

void pn_engine_acks(const struct pn_engine *e, struct pn_acks_view *out)
{
	pn_backends_acks(&e->bk, out);
}

void pn_engine_drain_acks(struct pn_engine *e, pn_ack_fn fn, void *arg)
{
	pn_backends_drain(&e->bk, fn, arg);
}

bool pn_engine_failed(const struct pn_engine *e) { return e->svc.failed; }

const struct pn_violation *pn_engine_violation_of(const struct pn_engine *e)
{
	return &e->svc.viol;
}

const char *pn_engine_error(const struct pn_engine *e) { return e->svc.error; }

const struct pn_metrics *pn_engine_metrics(const struct pn_engine *e) { return &e->m; }

pn_lsn pn_engine_recovery_end(const struct pn_engine *e) { return e->rcv.replay_end; }

pn_lsn pn_engine_wal_flushed(const struct pn_engine *e) { return pn_wal_flushed(&e->wal); }

pn_lsn pn_engine_wal_keep_from(const struct pn_engine *e) { return pn_wal_keep_from(&e->wal); }

pn_lsn pn_engine_wal_insert_lsn(const struct pn_engine *e) { return pn_wal_insert_lsn(&e->wal); }

bool pn_engine_is_slru(const struct pn_engine *e, uint32_t p)
{
	return pn_store_is_slru(&e->store, p);
}

uint32_t pn_engine_wal_seg_size(const struct pn_engine *e) { return pn_wal_seg_size(&e->wal); }

uint64_t pn_engine_wal_file_offset(const struct pn_engine *e, pn_lsn lsn)
{
	return pn_wal_file_offset(&e->wal, lsn);
}

const uint8_t *pn_engine_wal_ring_page(const struct pn_engine *e, pn_lsn page_addr)
{
	return pn_wal_ring_page(&e->wal, page_addr);
}

pn_lsn pn_engine_format_redo(const struct pn_engine *e) { return e->ckpt.redo_done; }

void pn_engine_ckpt_seqs(const struct pn_engine *e, uint64_t *begun, uint64_t *done)
{
	*begun = e->ckpt.seq_begun;
	*done = e->ckpt.seq_done;
}

bool pn_engine_page_slots(const struct pn_engine *e, uint32_t p, uint8_t *active, uint8_t *baseline)
{
	PN_ASSERT(p < e->heap_pages);
	if (e->generations <= 1 || !e->store.slot_of || !e->store.base_done)
		return false;
	*active = pn_store_slot(&e->store, p);
	*baseline = e->store.base_done[p];
	return true;
}

uint64_t pn_engine_file_size(const struct pn_engine *e, enum pn_file f)
{
	uint64_t end = 0;
	switch (f) {
	case PN_FILE_DATA:
		for (uint32_t p = 0; p < e->pages; p++)
			for (uint32_t s = 0;
			     s < (pn_store_is_slru(&e->store, p) ? 1 : e->generations); s++)
				end = PN_MAX(end, pn_store_offset(&e->store, p, s) + e->page_size);
		return end;
	case PN_FILE_WAL: return (uint64_t)pn_wal_nsegs(&e->wal) * pn_wal_seg_size(&e->wal);
	case PN_FILE_CONTROL: return PN_CONTROL_SIZE;
	default: return e->proto->setup.file_size ? e->proto->setup.file_size(&e->pctx, f) : 0;
	}
}

void pn_engine_read_page(struct pn_engine *e, uint32_t page, pn_lsn lsn, uint8_t *out,
			 bool *in_memory)
{
	PN_ASSERT(page < e->pages);
	PN_ASSERT(out);
	uint32_t fi = e->buf.page_frame[page];
	bool resident = fi != PN_NO_FRAME && pn_buf_frame(&e->buf, fi)->valid;
	if (in_memory)
		*in_memory = resident || e->proto->process.read_page;
	if (e->proto->process.read_page) {
		e->proto->process.read_page(&e->pctx, page, lsn, out);
		return;
	}
	if (resident) {
		memcpy(out, pn_frame_page(&e->buf, fi), e->page_size);
		return;
	}
	uint32_t slot = pn_store_is_slru(&e->store, page) ? 0 : pn_store_slot(&e->store, page);
	if (!e->svc.env.read_sync(e->svc.env.ctx, PN_FILE_DATA,
				  pn_store_offset(&e->store, page, slot), e->page_size, out))
		memset(out, 0, e->page_size);
}

bool pn_engine_page_in_buffer(const struct pn_engine *e, uint32_t page)
{
	PN_ASSERT(page < e->pages);
	uint32_t fi = e->buf.page_frame[page];
	return !e->proto->process.read_page && fi != PN_NO_FRAME &&
	       pn_buf_frame(&e->buf, fi)->valid;
}

const uint8_t *pn_engine_page_view(struct pn_engine *e, uint32_t page)
{
	if (!pn_engine_page_in_buffer(e, page))
		return NULL;
	return pn_frame_page(&e->buf, e->buf.page_frame[page]);
}

enum pn_ckpt_phase pn_engine_ckpt_phase(const struct pn_engine *e)
{
	enum pn_ckpt_phase phase = PN_CKPT_PHASE_IDLE;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		phase = PN_MAX(phase, pn_ckpt_run_phase(&e->ckpt.runs[r]));
	return phase;
}

/* Every field of struct pn_frame is fed below: a new one changes its size and stops the build
 * here until it is fed too (and changed alone in test_protocol's test_frame_memory). */
_Static_assert(sizeof(struct pn_frame) == 56 + 8 * PN_MAX_CKPT_RUNS,
	       "a field of struct pn_frame is not in pn_engine_memory");

/* The buffer pool's whole state: each frame's fields and, when it holds a page, its bytes;
 * the clock sweep's hand; each process's victim; the data writes in flight. */
static void memory_buffers(const struct pn_bufpool *b, const struct pn_hasher *h)
{
	for (uint32_t i = 0; i < b->nframes; i++) {
		const struct pn_frame *f = pn_buf_frame(b, i);
		uint64_t v[7 + PN_MAX_CKPT_RUNS] =
			{(uint64_t)f->page << 32 | (uint64_t)f->built << 8 |
				 (uint64_t)f->valid << 7 | (uint64_t)f->dirty << 6 |
				 (uint64_t)f->dirty_hint_only << 5 | (uint64_t)f->redirtied << 4 |
				 (uint64_t)f->locked << 3 | (uint64_t)f->held << 2,
			 (uint64_t)f->pins << 48 | (uint64_t)f->io_reads << 40 |
				 (uint64_t)f->io_writes << 32 | (uint64_t)f->usage << 24 |
				 (uint64_t)f->ckpt_needed << 16 | (uint64_t)f->ckpt_slot[0] << 8 |
				 f->ckpt_slot[1],
			 f->last_lsn,
			 (uint64_t)f->holder,
			 f->held_lsn,
			 f->shift_epoch,
			 f->redirtied_seq};
		_Static_assert(PN_MAX_CKPT_RUNS == 2, "ckpt_slot fed as two bytes above");
		for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
			v[7 + r] = f->ckpt_run_seq[r];
		h->feed(h->ctx, v, sizeof(v));
		if (f->valid)
			h->feed(h->ctx, b->frame_data + (size_t)i * b->h.page_size, b->h.page_size);
	}
	uint64_t pool[2] = {b->clock_hand, b->data_writes_inflight};
	h->feed(h->ctx, pool, sizeof(pool));
	for (uint32_t p = 0; p < b->h.nprocs; p++) {
		uint64_t vic = (uint64_t)b->victims[p].held << 32 | b->victims[p].frame;
		h->feed(h->ctx, &vic, sizeof(vic));
	}
}

void pn_engine_memory(const struct pn_engine *e, const struct pn_hasher *h)
{
	const struct pn_ckpt *k = &e->ckpt;
	uint64_t q[4] = {(uint64_t)k->requested << 8 | (uint64_t)k->request_immediate << 4 |
				 (uint64_t)k->pause_next << 2 | (uint64_t)k->pause_select_next,
			 k->request_cause, k->commits_at, k->redo_done};
	h->feed(h->ctx, q, sizeof(q));
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		const struct pn_ckpt_run *run = &k->runs[r];
		uint64_t v[8] = {(uint64_t)run->state << 32 | (uint32_t)run->proto_sub,
				 run->seq,
				 run->redo,
				 (uint64_t)run->scan << 32 | run->cause,
				 (uint64_t)run->to_write << 32 | run->written,
				 (uint64_t)run->paused << 5 | (uint64_t)run->pause_select << 4 |
					 (uint64_t)run->delay_wait << 3 |
					 (uint64_t)run->immediate << 2 |
					 (uint64_t)run->io_pending << 1 | run->sized,
				 run->record,
				 run->start_commits};
		h->feed(h->ctx, v, sizeof(v));
		if (run->state != PN_C_IDLE && run->snapshot)
			h->feed(h->ctx, run->snapshot, e->heap_pages);
	}
	memory_buffers(&e->buf, h);
	e->proto->state.memory(&e->pctx, h); /* required: every row's state is in it */
}

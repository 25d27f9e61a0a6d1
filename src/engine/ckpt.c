/*
 * ckpt.c: the checkpointer (engine layer). See the run's state diagram in engine.h.
 *
 * Begin (ckpt_begin, one step, like CreateCheckPoint under all insertion locks):
 *   redo = the current insert position; RedoRecPtr = redo, so every later change of a page
 *   with LSN <= redo takes an FPI (fpw) or shifts (umbra); every dirty buffer is flagged
 *   (BufferSync's BM_CHECKPOINT_NEEDED) with, in Umbra, the slot it had at the redo point;
 *   Umbra snapshots cur[] (each page's baseline for this checkpoint).
 * Writes are paced like CheckpointWriteDelay(): after each write the run sleeps 100 ms
 * while it is ahead of schedule (IsCheckpointOnSchedule: progress * completion_target
 * against the elapsed fraction of the interval, of the count interval every_transactions,
 * the model's stand-in for checkpoint_timeout, and of CheckPointSegments). A wake in the
 * nap (its own write completing) does not end it. No nap when immediate, when an immediate
 * checkpoint is requested (ImmediateCheckpointRequested), once the workload is done
 * (ShutdownRequestPending), or with nothing to pace against.
 * Requests (pn_ckpt_request, RequestCheckpoint's ckpt_flags): one is kept while a run is in
 * progress and begins when the runs allow (can_begin), even after the workload is done
 * (pn_ckpt_pending keeps the simulation going until it has).
 * Then (rule R5): wait for the flagged writes, fsync the data file, [Umbra: write the
 * selector snapshot, fsync it], insert the checkpoint record and flush the WAL, write the
 * control file and fsync it. Only then has the checkpoint happened: ckpt_end() moves
 * the baselines and lets the WAL before redo be recycled. Runs complete in order.
 * A protocol's own steps run in PROTO_SELECT (before WRITING: Umbra l3/l4 select the
 * buffers there, after the DELAY_CHKPT_START wait, and write the selector pages before the
 * data) and PROTO_DURABLE (after the data fsync: the prototype's selector snapshot, l3/l4's
 * selector fsync), through the protocol table (protocol.h).
 *
 * The control file (PN_FILE_CONTROL, one 512-byte sector, written atomically), little-endian:
 *   0 magic u32 'PNCT' | 4 version u32 = 1 | 8 ckpt_seq u64 | 16 checkpoint u64 (start LSN
 *   of the checkpoint record) | 24 redo u64 | 32 selector_area u32 | 36 state u32 |
 *   40 sysid u64 | 48 crc32c u32 over bytes [0, 48) | zeros to 512.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define CKPT_POLL_NS 100000000ull /* 100 ms: the checkpointer's nap */
#define CKPT_STEP_NS 5000ull
#define CONTROL_MAGIC 0x54434E50u /* "PNCT" */

static const uint64_t poll_busy_ns = 20000;

static uint32_t run_index(const struct pn_engine *e, const struct pn_ckpt_run *r)
{
	return (uint32_t)(r - e->runs);
}

void pn_ckpt_request(struct pn_engine *e, enum pn_ckpt_cause cause, bool immediate)
{
	if (!e->ckpt_requested) {
		e->ckpt_request_cause = cause;
		/* The count interval runs from the request: a run of K * every_transactions
		 * requests K, however long the checkpointer takes to wake and begin. */
		e->commits_at_ckpt = e->m.commits;
	}
	e->ckpt_requested = true;
	e->ckpt_request_immediate |= immediate;
	pn_svc_wake(&e->svc, e->proc_ckpt, 0);
}

uint32_t pn_ckpt_baselines_busy(const struct pn_engine *e, uint32_t page)
{
	PN_ASSERT(page < e->heap_pages);
	uint32_t mask = 0;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		if (e->runs[r].state != PN_C_IDLE && e->runs[r].snapshot)
			mask |= 1u << e->runs[r].snapshot[page];
	PN_ASSERT(mask < 1u << e->generations);
	return mask;
}

bool pn_ckpt_pending(const struct pn_engine *e)
{
	PN_ASSERT(!e->ckpt_requested || e->ckpt_request_cause <= PN_CKPT_END_OF_RECOVERY);
	return e->ckpt_requested;
}

bool pn_ckpt_active(const struct pn_engine *e)
{
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		if (e->runs[r].state != PN_C_IDLE)
			return true;
	return false;
}

/* legal[from][to]: the edges of ckpt.h's diagram. */
static const bool legal[PN_C_COUNT][PN_C_COUNT] = {
	[PN_C_IDLE] = {[PN_C_WRITING] = true},
	[PN_C_WRITING] = {[PN_C_WAIT_WRITES] = true, [PN_C_PROTO_SELECT] = true},
	[PN_C_PROTO_SELECT] = {[PN_C_WRITING] = true},
	[PN_C_WAIT_WRITES] = {[PN_C_WRITING] = true, [PN_C_FSYNC_DATA] = true},
	[PN_C_FSYNC_DATA] = {[PN_C_PROTO_DURABLE] = true, [PN_C_RECORD] = true},
	[PN_C_PROTO_DURABLE] = {[PN_C_RECORD] = true},
	[PN_C_RECORD] = {[PN_C_RECORD_FLUSH] = true},
	[PN_C_RECORD_FLUSH] = {[PN_C_CONTROL_WRITE] = true},
	[PN_C_CONTROL_WRITE] = {[PN_C_CONTROL_FSYNC] = true},
	[PN_C_CONTROL_FSYNC] = {[PN_C_IDLE] = true},
};

void pn_ckpt_set_state(struct pn_ckpt_run *run, enum pn_cstate to)
{
	PN_ASSERT(run->state < PN_C_COUNT);
	PN_ASSERT(to < PN_C_COUNT);
	PN_ASSERT(legal[run->state][to]);
	run->state = to;
	if (to == PN_C_PROTO_SELECT || to == PN_C_PROTO_DURABLE)
		run->proto_sub = 0;
}

enum pn_ckpt_phase pn_ckpt_run_phase(const struct pn_ckpt_run *run)
{
	switch (run->state) {
	case PN_C_IDLE: return PN_CKPT_PHASE_IDLE;
	case PN_C_PROTO_SELECT:
	case PN_C_WRITING:
	case PN_C_WAIT_WRITES:
	case PN_C_FSYNC_DATA: return PN_CKPT_PHASE_BEFORE_FSYNC;
	case PN_C_PROTO_DURABLE:
	case PN_C_RECORD:
	case PN_C_RECORD_FLUSH:
	case PN_C_CONTROL_WRITE:
	case PN_C_CONTROL_FSYNC: return PN_CKPT_PHASE_AFTER_FSYNC;
	case PN_C_COUNT: break;
	}
	PN_ASSERT(!"a checkpoint run state without a phase");
	return PN_CKPT_PHASE_IDLE;
}

void pn_ckpt_release_pause(struct pn_engine *e)
{
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		e->runs[r].paused = e->runs[r].pause_select = false;
	pn_svc_wake(&e->svc, e->proc_ckpt, 0);
}

static void count_cause(struct pn_engine *e, enum pn_ckpt_cause c)
{
	e->m.checkpoints++;
	switch (c) {
	case PN_CKPT_TIME: e->m.ckpt_time++; break;
	case PN_CKPT_XACT: e->m.ckpt_xact++; break;
	case PN_CKPT_WAL: e->m.ckpt_wal++; break;
	default: e->m.ckpt_request++; break;
	}
}

static void ckpt_begin(struct pn_engine *e, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_IDLE);
	memset(run, 0, offsetof(struct pn_ckpt_run, snapshot));
	run->seq = ++e->ckpt_seq_begun;
	run->cause = e->ckpt_request_cause;
	run->immediate = e->ckpt_request_immediate || e->recovering;
	run->paused = e->ckpt_pause_next;
	e->ckpt_pause_next = false;
	run->redo = pn_wal_insert_start(&e->wal);
	run->start_ns = e->svc.env.now_ns(e->svc.env.ctx);
	run->start_commits = e->m.commits;
	pn_ckpt_set_state(run, PN_C_WRITING);
	e->ckpt_requested = false;
	e->ckpt_request_immediate = false;
	pn_wal_set_redo(&e->wal, run->redo);
	e->last_ckpt_ns = run->start_ns;
	count_cause(e, run->cause);
	if (e->proto->ckpt_begin) /* the prototype's snapshot; l3/l4 select later */
		e->proto->ckpt_begin(&e->pctx, run);
	else
		pn_ckpt_select(e, run);
}

void pn_ckpt_select(struct pn_engine *e, struct pn_ckpt_run *run)
{
	uint32_t r = run_index(e, run);
	PN_ASSERT(r < PN_MAX_CKPT_RUNS);
	PN_ASSERT(run->state == PN_C_WRITING || run->state == PN_C_PROTO_SELECT);
	for (uint32_t i = 0; i < e->buf.nframes; i++) {
		struct pn_frame *f = pn_buf_frame(&e->buf, i);
		if (!f->valid || !f->dirty)
			continue;
		f->ckpt_needed |= (uint8_t)(1u << r);
		f->ckpt_run_seq[r] = run->seq;
		f->ckpt_slot[r] = pn_store_is_slru(&e->store, f->page) ? 0
				  : e->proto->ckpt_slot ? e->proto->ckpt_slot(&e->pctx, f, run)
							: pn_store_slot(&e->store, f->page);
		run->to_write++;
	}
}

static bool on_schedule(struct pn_engine *e, const struct pn_ckpt_run *run)
{
	const struct pn_scenario *sc = e->sc;
	bool paced = sc->checkpoint.interval_ns || sc->checkpoint.every_transactions ||
		     sc->checkpoint.max_wal_size;
	/* The model's WAL is a ring of pn_wal_nsegs segments (PostgreSQL's pg_wal grows past
	 * max_wal_size instead): with three quarters of it kept for recovery, backends are about
	 * to wait for this checkpoint's end, and commits, its count interval, stop. */
	uint64_t seg = pn_wal_seg_size(&e->wal);
	uint64_t kept = pn_wal_insert_lsn(&e->wal) / seg - pn_wal_keep_from(&e->wal) / seg + 1;
	bool wal_short = 4 * kept >= 3 * (uint64_t)pn_wal_nsegs(&e->wal);
	PN_TESTCASE("a paced checkpoint hurries for the WAL ring", wal_short);
	bool hurry = (e->ckpt_requested && e->ckpt_request_immediate) || e->stopping || wal_short;
	PN_TESTCASE("a paced checkpoint hurries for a request or the end",
		    hurry && !run->immediate);
	if (run->immediate || hurry || !paced || run->to_write == 0)
		return false;
	double progress = (double)run->written / run->to_write * sc->checkpoint.completion_target;
	uint64_t now = e->svc.env.now_ns(e->svc.env.ctx);
	if (sc->checkpoint.interval_ns &&
	    progress < (double)(now - run->start_ns) / (double)sc->checkpoint.interval_ns)
		return false;
	PN_ASSERT(e->m.commits >= run->start_commits);
	if (sc->checkpoint.every_transactions &&
	    progress <
		    (double)(e->m.commits - run->start_commits) / sc->checkpoint.every_transactions)
		return false;
	if (e->sc->checkpoint.max_wal_size) {
		double segs = (double)(pn_wal_insert_lsn(&e->wal) - run->redo) /
			      pn_wal_seg_size(&e->wal);
		double cps = (double)(e->sc->checkpoint.max_wal_size / pn_wal_seg_size(&e->wal)) /
			     (1.0 + e->sc->checkpoint.completion_target);
		if (progress < segs / (cps < 1.0 ? 1.0 : cps))
			return false;
	}
	return true;
}

void pn_ckpt_commit(struct pn_engine *e)
{
	uint32_t every = e->sc->checkpoint.every_transactions;
	if (!every)
		return;
	PN_ASSERT(e->m.commits > e->commits_at_ckpt);
	if (e->m.commits - e->commits_at_ckpt >= every && !e->ckpt_requested)
		pn_ckpt_request(e, PN_CKPT_XACT, false);
	uint64_t now = e->svc.env.now_ns(e->svc.env.ctx);
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		const struct pn_ckpt_run *run = &e->runs[r];
		bool behind = run->state == PN_C_WRITING && now < run->nap_until_ns &&
			      !on_schedule(e, run);
		PN_TESTCASE("commits put a napping checkpoint behind its count interval", behind);
		if (behind)
			pn_svc_wake(&e->svc, e->proc_ckpt, 0);
	}
}

/* A checkpoint write completed (called by the buffer pool after its own bookkeeping, the
 * completion the run installs when it issues): the checkpointer looks again. */
static void write_done(void *ctx, struct pn_io *io)
{
	struct pn_engine *e = ctx;
	PN_ASSERT(io->why == PN_WHY_CKPT);
	PN_ASSERT(io->file == PN_FILE_DATA);
	pn_svc_wake(&e->svc, e->proc_ckpt, 0);
}

/* WRITING: write the next flagged frame. Returns the delay before the next step, or
 * UINT64_MAX when the run waits to be woken. */
static uint64_t ckpt_write_some(struct pn_engine *e, struct pn_ckpt_run *run)
{
	uint32_t r = run_index(e, run);
	uint64_t now = e->svc.env.now_ns(e->svc.env.ctx);
	if (run->paused)
		return UINT64_MAX;
	bool napping = now < run->nap_until_ns && on_schedule(e, run);
	PN_TESTCASE("a checkpoint woken in its nap naps on", napping);
	if (napping)
		return run->nap_until_ns - now;
	for (; run->scan < e->buf.nframes; run->scan++) {
		struct pn_frame *f = pn_buf_frame(&e->buf, run->scan);
		if (!(f->ckpt_needed & (1u << r)))
			continue;
		struct pn_io_then then = {write_done, e};
		enum pn_write_result w = pn_buf_write(&e->buf, run->scan, PN_WHY_CKPT, e->proc_ckpt,
						      (int)r, &then);
		switch (w) {
		case PN_WRITE_NONE: f->ckpt_needed &= (uint8_t) ~(1u << r); continue;
		case PN_WRITE_WAL: return UINT64_MAX;
		case PN_WRITE_BUSY: return poll_busy_ns;
		case PN_WRITE_STARTED:
			run->written++;
			e->m.ckpt_writes++;
			run->scan++;
			if (!on_schedule(e, run))
				return CKPT_STEP_NS;
			run->nap_until_ns = now + CKPT_POLL_NS;
			return CKPT_POLL_NS;
		}
	}
	pn_ckpt_set_state(run, PN_C_WAIT_WRITES);
	return CKPT_STEP_NS;
}

static bool frames_pending(const struct pn_engine *e, uint32_t r, bool *in_flight)
{
	bool pending = false;
	*in_flight = false;
	for (uint32_t i = 0; i < e->buf.nframes; i++) {
		if (pn_buf_frame(&e->buf, i)->ckpt_needed & (1u << r)) {
			pending = true;
			if (pn_buf_frame(&e->buf, i)->io_writes)
				*in_flight = true;
		}
	}
	return pending;
}

static void ckpt_end(struct pn_engine *e, struct pn_ckpt_run *run);

static void run_io_done(void *ctx, struct pn_io *io)
{
	struct pn_engine *e = ctx;
	struct pn_ckpt_run *run = &e->runs[io->aux];
	run->io_pending = false;
	switch (run->state) {
	case PN_C_FSYNC_DATA:
		pn_ckpt_set_state(run,
				  e->proto->ckpt_durable_step ? PN_C_PROTO_DURABLE : PN_C_RECORD);
		break;
	case PN_C_PROTO_SELECT:
	case PN_C_PROTO_DURABLE:
		PN_ASSERT(e->proto->ckpt_io_done != NULL);
		e->proto->ckpt_io_done(&e->pctx, run);
		break;
	case PN_C_CONTROL_WRITE: pn_ckpt_set_state(run, PN_C_CONTROL_FSYNC); break;
	case PN_C_CONTROL_FSYNC: ckpt_end(e, run); break;
	default: PN_ASSERT(!"unexpected checkpoint I/O");
	}
	pn_svc_wake(&e->svc, e->proc_ckpt, 0);
}

void pn_ckpt_run_io(struct pn_engine *e, struct pn_ckpt_run *run, enum pn_io_op op,
		    enum pn_file file, uint64_t off, const uint8_t *data, uint32_t len)
{
	PN_ASSERT(!run->io_pending);
	PN_ASSERT(run->state != PN_C_IDLE);
	struct pn_io *io = pn_io_get(&e->svc);
	io->op = op;
	io->file = file;
	io->why = op == PN_IO_FSYNC         ? PN_WHY_FSYNC
		  : file == PN_FILE_CONTROL ? PN_WHY_CONTROL
					    : PN_WHY_SELECTOR;
	io->offset = off;
	io->len = len;
	if (data)
		io->buf = (uint8_t *)data;
	io->aux = run_index(e, run);
	io->done = run_io_done;
	io->ctx = e;
	if (op == PN_IO_FSYNC)
		e->m.fsyncs++;
	run->io_pending = true;
	pn_io_issue(&e->svc, io);
}

void pn_engine_encode_control(const struct pn_engine *e, const struct pn_control *c, uint8_t *out)
{
	memset(out, 0, PN_CONTROL_SIZE);
	pn_put32(out, CONTROL_MAGIC);
	pn_put32(out + 4, 1);
	pn_put64(out + 8, c->ckpt_seq);
	pn_put64(out + 16, c->checkpoint);
	pn_put64(out + 24, c->redo);
	pn_put32(out + 32, c->selector_area);
	pn_put32(out + 36, c->state);
	pn_put64(out + 40, e->sysid);
	pn_put32(out + 48, pn_crc32c(out, 48));
}

bool pn_engine_decode_control(const uint8_t *in, struct pn_control *c)
{
	if (pn_get32(in) != CONTROL_MAGIC || pn_get32(in + 48) != pn_crc32c(in, 48))
		return false;
	c->ckpt_seq = pn_get64(in + 8);
	c->checkpoint = pn_get64(in + 16);
	c->redo = pn_get64(in + 24);
	c->selector_area = pn_get32(in + 32);
	c->state = pn_get32(in + 36);
	return true;
}

static void ckpt_end(struct pn_engine *e, struct pn_ckpt_run *run)
{
	e->control.ckpt_seq = run->seq;
	e->control.checkpoint = run->record;
	e->control.redo = run->redo;
	e->control.selector_area = (uint32_t)(run->seq % PN_SELECTOR_AREAS);
	if (e->proto->ckpt_end) /* the prototype's baselines */
		e->proto->ckpt_end(&e->pctx, run);
	e->store.inflight_valid = false;
	e->redo_done = run->redo;
	e->ckpt_seq_done = run->seq;
	pn_wal_checkpoint_done(&e->wal, run->redo);
	pn_ckpt_set_state(run, PN_C_IDLE);
	for (uint32_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].kind == PN_PROC_BACKEND || e->procs[i].kind == PN_PROC_STARTUP)
			pn_svc_wake(&e->svc, i, 0);
}

static void insert_record(struct pn_engine *e, struct pn_ckpt_run *run)
{
	uint8_t main[88] = {0};
	pn_put64(main, run->redo);
	pn_put32(main + 8, 1);  /* ThisTimeLineID */
	pn_put32(main + 12, 1); /* PrevTimeLineID */
	main[16] = e->proto->fpw_byte;
	pn_put64(main + 24, e->next_xid);
	pn_put64(main + 80, run->seq); /* the checkpoint's number, in CheckPoint's padding */
	struct pn_wal_record rec = {.main_data = main, .main_len = sizeof(main)};
	enum pn_rec kind = e->recovering ? PN_REC_XLOG_CHECKPOINT_SHUTDOWN
					 : PN_REC_XLOG_CHECKPOINT_ONLINE;
	run->record_end = pn_wal_insert(&e->wal, &rec, kind, &run->record);
}

/* Advances a run by one step; returns the delay before its next, or UINT64_MAX to wait. */
static uint64_t advance(struct pn_engine *e, struct pn_ckpt_run *run)
{
	uint32_t r = run_index(e, run);
	bool in_flight;
	if (run->io_pending)
		return UINT64_MAX;
	switch (run->state) {
	case PN_C_PROTO_SELECT: return e->proto->ckpt_select_step(&e->pctx, run);
	case PN_C_WRITING: return ckpt_write_some(e, run);
	case PN_C_WAIT_WRITES:
		if (!frames_pending(e, r, &in_flight)) {
			pn_ckpt_set_state(run, PN_C_FSYNC_DATA);
			return CKPT_STEP_NS;
		}
		if (in_flight)
			return poll_busy_ns;
		pn_ckpt_set_state(run, PN_C_WRITING);
		run->scan = 0;
		return CKPT_STEP_NS;
	case PN_C_FSYNC_DATA:
		pn_ckpt_run_io(e, run, PN_IO_FSYNC, PN_FILE_DATA, 0, NULL, 0);
		return UINT64_MAX;
	case PN_C_PROTO_DURABLE: return e->proto->ckpt_durable_step(&e->pctx, run);
	case PN_C_RECORD:
		insert_record(e, run);
		pn_ckpt_set_state(run, PN_C_RECORD_FLUSH);
		/* fall through */
	case PN_C_RECORD_FLUSH:
		if (!pn_wal_flush_request(&e->wal, run->record_end, e->proc_ckpt))
			return UINT64_MAX;
		pn_ckpt_set_state(run, PN_C_CONTROL_WRITE);
		/* fall through */
	case PN_C_CONTROL_WRITE:
		for (int o = 0; o < PN_MAX_CKPT_RUNS; o++)
			if (e->runs[o].state != PN_C_IDLE && e->runs[o].seq < run->seq)
				return UINT64_MAX; /* complete in order (R5) */
		if (e->proto->ckpt_control)        /* the prototype's baselines in flight */
			e->proto->ckpt_control(&e->pctx, run);
		struct pn_control c = e->control;
		c.ckpt_seq = run->seq;
		c.checkpoint = run->record;
		c.redo = run->redo;
		c.selector_area = (uint32_t)(run->seq % PN_SELECTOR_AREAS);
		c.state = 1;
		pn_engine_encode_control(e, &c, run->ctlbuf);
		pn_ckpt_run_io(e, run, PN_IO_WRITE, PN_FILE_CONTROL, 0, run->ctlbuf,
			       PN_CONTROL_SIZE);
		return UINT64_MAX;
	case PN_C_CONTROL_FSYNC:
		pn_ckpt_run_io(e, run, PN_IO_FSYNC, PN_FILE_CONTROL, 0, NULL, 0);
		return UINT64_MAX;
	default: return UINT64_MAX;
	}
}

static bool can_begin(const struct pn_engine *e, struct pn_ckpt_run **slot)
{
	int active = 0;
	*slot = NULL;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		if (e->runs[r].state != PN_C_IDLE)
			active++;
		else if (!*slot)
			*slot = (struct pn_ckpt_run *)&e->runs[r];
	}
	return *slot && (active == 0 || e->sc->checkpoint.overlap);
}

void pn_ckpt_step(struct pn_engine *e)
{
	uint64_t now = e->svc.env.now_ns(e->svc.env.ctx);
	uint64_t interval = e->sc->checkpoint.interval_ns;
	struct pn_ckpt_run *slot;
	if (interval && !e->ckpt_requested && !e->stopping && now - e->last_ckpt_ns >= interval)
		pn_ckpt_request(e, PN_CKPT_TIME, false);
	if (e->ckpt_requested && can_begin(e, &slot))
		ckpt_begin(e, slot);
	uint64_t delay = UINT64_MAX;
	for (uint64_t seq = 0;;) {
		struct pn_ckpt_run *next = NULL;
		for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
			if (e->runs[r].state != PN_C_IDLE && e->runs[r].seq > seq &&
			    (!next || e->runs[r].seq < next->seq))
				next = &e->runs[r];
		if (!next)
			break;
		seq = next->seq;
		uint64_t d = advance(e, next);
		delay = PN_MIN(delay, d);
	}
	if (!pn_ckpt_active(e) && interval && !e->stopping)
		delay = PN_MIN(delay, e->last_ckpt_ns + interval -
					      PN_MIN(now, e->last_ckpt_ns + interval) + 1);
	if (delay != UINT64_MAX)
		pn_svc_wake(&e->svc, e->proc_ckpt, delay);
}

void pn_ckpt_check(const struct pn_engine *e)
{
	uint32_t active = 0;
	PN_ASSERT(e->ckpt_seq_done <= e->ckpt_seq_begun);
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		const struct pn_ckpt_run *run = &e->runs[r];
		PN_ASSERT(run->state < PN_C_COUNT);
		if (run->state == PN_C_IDLE) {
			PN_ASSERT(!run->io_pending);
			continue;
		}
		active++;
		/* a run in progress was begun and has not completed (R5: in order) */
		PN_ASSERT(run->seq > e->ckpt_seq_done);
		PN_ASSERT(run->seq <= e->ckpt_seq_begun);
		PN_ASSERT(run->scan <= e->buf.nframes);
		for (int o = 0; o < r; o++)
			PN_ASSERT(e->runs[o].state == PN_C_IDLE || e->runs[o].seq != run->seq);
	}
	PN_ASSERT(active <= 1 || e->sc->checkpoint.overlap);
}

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
 *   40 sysid u64 | 48 crc32c u32 over bytes [0, 48) | 52 sized u32 (1: the relation was
 *   truncated) | 56 rel_blocks u32 (its size at the redo pointer: the model's stand-in for
 *   the data file's length) | 60 crc32c u32 over [52, 60) | zeros to 512. A relation that
 *   never shrank leaves 52.. zero (the bytes of a control file before truncation existed).
 */
#include "ckpt.h"

#include "crc32c.h"
#include "metrics.h"
#include "protocol.h"
#include "redo.h"
#include "scenario.h"
#include "services.h"
#include "store.h"
#include "wal.h"

#include <stdlib.h>
#include <string.h>

#define CKPT_POLL_NS 100000000ull /* 100 ms: the checkpointer's nap */
#define CKPT_STEP_NS 5000ull
#define CONTROL_MAGIC 0x54434E50u /* "PNCT" */

static const uint64_t poll_busy_ns = 20000;

void pn_ckpt_init(struct pn_ckpt *k, const struct pn_ckpt_handles *h)
{
	PN_ASSERT(h->sc != NULL);
	PN_ASSERT(h->svc != NULL);
	PN_ASSERT(h->wal != NULL);
	PN_ASSERT(h->buf != NULL);
	PN_ASSERT(h->store != NULL);
	PN_ASSERT(h->proto != NULL);
	PN_ASSERT(h->pctx != NULL);
	PN_ASSERT(h->stopping != NULL);
	PN_ASSERT(h->recovering != NULL);
	PN_ASSERT(h->next_xid != NULL);
	PN_ASSERT(h->proc_ckpt < h->nprocs);
	memset(k, 0, sizeof(*k));
	k->h = *h;
}

void pn_ckpt_recovered(struct pn_ckpt *k, const struct pn_control *c)
{
	PN_ASSERT(!pn_ckpt_active(k));
	PN_ASSERT(k->h.svc != NULL); /* initialised */
	k->control = *c;
	k->redo_done = c->redo;
	k->seq_begun = k->seq_done = c->ckpt_seq;
}

static uint32_t run_index(const struct pn_ckpt *k, const struct pn_ckpt_run *r)
{
	return (uint32_t)(r - k->runs);
}

void pn_ckpt_request(struct pn_ckpt *k, enum pn_ckpt_cause cause, bool immediate)
{
	if (!k->requested) {
		k->request_cause = cause;
		/* The count interval runs from the request: a run of K * every_transactions
		 * requests K, however long the checkpointer takes to wake and begin. */
		k->commits_at = k->h.m->commits;
	}
	k->requested = true;
	k->request_immediate |= immediate;
	pn_svc_wake(k->h.svc, k->h.proc_ckpt, 0);
}

uint32_t pn_ckpt_baselines_busy(const struct pn_ckpt *k, uint32_t page)
{
	PN_ASSERT(page < k->h.heap_pages);
	uint32_t mask = 0;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		if (k->runs[r].state != PN_C_IDLE && k->runs[r].snapshot)
			mask |= 1u << k->runs[r].snapshot[page];
	PN_ASSERT(mask < 1u << k->h.generations);
	return mask;
}

bool pn_ckpt_pending(const struct pn_ckpt *k)
{
	PN_ASSERT(!k->requested || k->request_cause <= PN_CKPT_END_OF_RECOVERY);
	return k->requested;
}

bool pn_ckpt_active(const struct pn_ckpt *k)
{
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		if (k->runs[r].state != PN_C_IDLE)
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

void pn_ckpt_release_pause(struct pn_ckpt *k)
{
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		k->runs[r].paused = k->runs[r].pause_select = false;
	pn_svc_wake(k->h.svc, k->h.proc_ckpt, 0);
}

static void count_cause(struct pn_ckpt *k, enum pn_ckpt_cause c)
{
	k->h.m->checkpoints++;
	switch (c) {
	case PN_CKPT_TIME: k->h.m->ckpt_time++; break;
	case PN_CKPT_XACT: k->h.m->ckpt_xact++; break;
	case PN_CKPT_WAL: k->h.m->ckpt_wal++; break;
	default: k->h.m->ckpt_request++; break;
	}
}

/* CheckPoint.oldestActiveXid as CreateCheckPoint sets it (wal_level replica, the default):
 * for an online checkpoint the oldest xid a backend is running, or the next one to be
 * assigned when none runs (GetOldestActiveTransactionId); 0 (InvalidTransactionId) for a
 * shutdown or end-of-recovery one. So an online checkpoint's record never equals an
 * end-of-recovery one's, which a torn write of the rewritten WAL tail could otherwise splice
 * onto the lost history's records after it. */
static uint32_t oldest_active(const struct pn_ckpt *k)
{
	if (*k->h.recovering)
		return 0;
	uint32_t oldest = *k->h.next_xid + 1;
	for (uint32_t i = 0; i < k->h.nprocs; i++)
		if (k->h.procs[i].xid != 0 && k->h.procs[i].xid < oldest)
			oldest = k->h.procs[i].xid;
	return oldest;
}

static void ckpt_begin(struct pn_ckpt *k, struct pn_ckpt_run *run)
{
	PN_ASSERT(run->state == PN_C_IDLE);
	memset(run, 0, offsetof(struct pn_ckpt_run, snapshot));
	run->seq = ++k->seq_begun;
	run->cause = k->request_cause;
	run->immediate = k->request_immediate || *k->h.recovering;
	run->paused = k->pause_next;
	k->pause_next = false;
	run->redo = pn_wal_insert_start(k->h.wal);
	run->oldest_active = oldest_active(k);
	run->sized = k->h.store->nblocks < k->h.store->heap_pages;
	run->rel_blocks = run->sized ? k->h.store->nblocks : 0;
	run->start_ns = k->h.svc->env.now_ns(k->h.svc->env.ctx);
	run->start_commits = k->h.m->commits;
	pn_ckpt_set_state(run, PN_C_WRITING);
	k->requested = false;
	k->request_immediate = false;
	pn_wal_set_redo(k->h.wal, run->redo);
	k->last_ns = run->start_ns;
	count_cause(k, run->cause);
	if (k->h.proto->ckpt.begin) /* the prototype's snapshot; l3/l4 select later */
		k->h.proto->ckpt.begin(k->h.pctx, run);
	else
		pn_ckpt_select(k, run);
}

void pn_ckpt_select(struct pn_ckpt *k, struct pn_ckpt_run *run)
{
	uint32_t r = run_index(k, run);
	PN_ASSERT(r < PN_MAX_CKPT_RUNS);
	PN_ASSERT(run->state == PN_C_WRITING || run->state == PN_C_PROTO_SELECT);
	for (uint32_t i = 0; i < k->h.buf->nframes; i++) {
		struct pn_frame *f = pn_buf_frame(k->h.buf, i);
		if (!f->valid || !f->dirty)
			continue;
		f->ckpt_needed |= (uint8_t)(1u << r);
		f->ckpt_run_seq[r] = run->seq;
		f->ckpt_slot[r] = pn_store_is_slru(k->h.store, f->page) ? 0
				  : k->h.proto->ckpt.slot ? k->h.proto->ckpt.slot(k->h.pctx, f, run)
							  : pn_store_slot(k->h.store, f->page);
		run->to_write++;
	}
}

static bool on_schedule(struct pn_ckpt *k, const struct pn_ckpt_run *run)
{
	const struct pn_scenario *sc = k->h.sc;
	bool paced = sc->checkpoint.interval_ns || sc->checkpoint.every_transactions ||
		     sc->checkpoint.max_wal_size;
	/* The model's WAL is a ring of pn_wal_nsegs segments (PostgreSQL's pg_wal grows past
	 * max_wal_size instead): with three quarters of it kept for recovery, backends are about
	 * to wait for this checkpoint's end, and commits, its count interval, stop. */
	uint64_t seg = pn_wal_seg_size(k->h.wal);
	uint64_t kept = pn_wal_insert_lsn(k->h.wal) / seg - pn_wal_keep_from(k->h.wal) / seg + 1;
	bool wal_short = 4 * kept >= 3 * (uint64_t)pn_wal_nsegs(k->h.wal);
	PN_TESTCASE("a paced checkpoint hurries for the WAL ring", wal_short);
	bool hurry = (k->requested && k->request_immediate) || *k->h.stopping || wal_short;
	PN_TESTCASE("a paced checkpoint hurries for a request or the end",
		    hurry && !run->immediate);
	if (run->immediate || hurry || !paced || run->to_write == 0)
		return false;
	double progress = (double)run->written / run->to_write * sc->checkpoint.completion_target;
	uint64_t now = k->h.svc->env.now_ns(k->h.svc->env.ctx);
	if (sc->checkpoint.interval_ns &&
	    progress < (double)(now - run->start_ns) / (double)sc->checkpoint.interval_ns)
		return false;
	PN_ASSERT(k->h.m->commits >= run->start_commits);
	if (sc->checkpoint.every_transactions &&
	    progress < (double)(k->h.m->commits - run->start_commits) /
			       sc->checkpoint.every_transactions)
		return false;
	if (k->h.sc->checkpoint.max_wal_size) {
		double segs = (double)(pn_wal_insert_lsn(k->h.wal) - run->redo) /
			      pn_wal_seg_size(k->h.wal);
		double cps = (double)(k->h.sc->checkpoint.max_wal_size /
				      pn_wal_seg_size(k->h.wal)) /
			     (1.0 + k->h.sc->checkpoint.completion_target);
		if (progress < segs / (cps < 1.0 ? 1.0 : cps))
			return false;
	}
	return true;
}

void pn_ckpt_commit(struct pn_ckpt *k)
{
	uint32_t every = k->h.sc->checkpoint.every_transactions;
	if (!every)
		return;
	PN_ASSERT(k->h.m->commits > k->commits_at);
	if (k->h.m->commits - k->commits_at >= every && !k->requested)
		pn_ckpt_request(k, PN_CKPT_XACT, false);
	uint64_t now = k->h.svc->env.now_ns(k->h.svc->env.ctx);
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		const struct pn_ckpt_run *run = &k->runs[r];
		bool behind = run->state == PN_C_WRITING && now < run->nap_until_ns &&
			      !on_schedule(k, run);
		PN_TESTCASE("commits put a napping checkpoint behind its count interval", behind);
		if (behind)
			pn_svc_wake(k->h.svc, k->h.proc_ckpt, 0);
	}
}

/* A checkpoint write completed (called by the buffer pool after its own bookkeeping, the
 * completion the run installs when it issues): the checkpointer looks again. */
static void write_done(void *ctx, struct pn_io *io)
{
	struct pn_ckpt *k = ctx;
	PN_ASSERT(io->why == PN_WHY_CKPT);
	PN_ASSERT(io->file == PN_FILE_DATA);
	pn_svc_wake(k->h.svc, k->h.proc_ckpt, 0);
}

/* WRITING: write the next flagged frame. Returns the delay before the next step, or
 * UINT64_MAX when the run waits to be woken. */
static uint64_t ckpt_write_some(struct pn_ckpt *k, struct pn_ckpt_run *run)
{
	uint32_t r = run_index(k, run);
	uint64_t now = k->h.svc->env.now_ns(k->h.svc->env.ctx);
	if (run->paused)
		return UINT64_MAX;
	bool napping = now < run->nap_until_ns && on_schedule(k, run);
	PN_TESTCASE("a checkpoint woken in its nap naps on", napping);
	if (napping)
		return run->nap_until_ns - now;
	for (; run->scan < k->h.buf->nframes; run->scan++) {
		struct pn_frame *f = pn_buf_frame(k->h.buf, run->scan);
		if (!(f->ckpt_needed & (1u << r)))
			continue;
		struct pn_io_then then = {write_done, k};
		enum pn_write_result w = pn_buf_write(k->h.buf, run->scan, PN_WHY_CKPT,
						      k->h.proc_ckpt, (int)r, &then);
		switch (w) {
		case PN_WRITE_NONE: f->ckpt_needed &= (uint8_t) ~(1u << r); continue;
		case PN_WRITE_WAL: return UINT64_MAX;
		case PN_WRITE_BUSY: return poll_busy_ns;
		case PN_WRITE_STARTED:
			run->written++;
			k->h.m->ckpt_writes++;
			run->scan++;
			if (!on_schedule(k, run))
				return CKPT_STEP_NS;
			run->nap_until_ns = now + CKPT_POLL_NS;
			return CKPT_POLL_NS;
		}
	}
	pn_ckpt_set_state(run, PN_C_WAIT_WRITES);
	return CKPT_STEP_NS;
}

static bool frames_pending(const struct pn_ckpt *k, uint32_t r, bool *in_flight)
{
	bool pending = false;
	*in_flight = false;
	for (uint32_t i = 0; i < k->h.buf->nframes; i++) {
		if (pn_buf_frame(k->h.buf, i)->ckpt_needed & (1u << r)) {
			pending = true;
			if (pn_buf_frame(k->h.buf, i)->io_writes)
				*in_flight = true;
		}
	}
	return pending;
}

static void ckpt_end(struct pn_ckpt *k, struct pn_ckpt_run *run);

static void run_io_done(void *ctx, struct pn_io *io)
{
	struct pn_ckpt *k = ctx;
	struct pn_ckpt_run *run = &k->runs[io->aux];
	run->io_pending = false;
	switch (run->state) {
	case PN_C_FSYNC_DATA:
		pn_ckpt_set_state(run,
				  k->h.proto->ckpt.durable_step ? PN_C_PROTO_DURABLE : PN_C_RECORD);
		break;
	case PN_C_PROTO_SELECT:
	case PN_C_PROTO_DURABLE:
		PN_ASSERT(k->h.proto->ckpt.io_done != NULL);
		k->h.proto->ckpt.io_done(k->h.pctx, run);
		break;
	case PN_C_CONTROL_WRITE: pn_ckpt_set_state(run, PN_C_CONTROL_FSYNC); break;
	case PN_C_CONTROL_FSYNC: ckpt_end(k, run); break;
	default: PN_ASSERT(!"unexpected checkpoint I/O");
	}
	pn_svc_wake(k->h.svc, k->h.proc_ckpt, 0);
}

void pn_ckpt_run_io(struct pn_ckpt *k, struct pn_ckpt_run *run, enum pn_io_op op, enum pn_file file,
		    uint64_t off, const uint8_t *data, uint32_t len)
{
	PN_ASSERT(!run->io_pending);
	PN_ASSERT(run->state != PN_C_IDLE);
	struct pn_io *io = pn_io_get(k->h.svc);
	io->op = op;
	io->file = file;
	io->why = op == PN_IO_FSYNC         ? PN_WHY_FSYNC
		  : file == PN_FILE_CONTROL ? PN_WHY_CONTROL
					    : PN_WHY_SELECTOR;
	io->offset = off;
	io->len = len;
	if (data)
		io->buf = (uint8_t *)data;
	io->aux = run_index(k, run);
	io->done = run_io_done;
	io->ctx = k;
	if (op == PN_IO_FSYNC)
		k->h.m->fsyncs++;
	run->io_pending = true;
	pn_io_issue(k->h.svc, io);
}

void pn_ckpt_encode_control(const struct pn_ckpt *k, const struct pn_control *c, uint8_t *out)
{
	memset(out, 0, PN_CONTROL_SIZE);
	pn_put32(out, CONTROL_MAGIC);
	pn_put32(out + 4, 1);
	pn_put64(out + 8, c->ckpt_seq);
	pn_put64(out + 16, c->checkpoint);
	pn_put64(out + 24, c->redo);
	pn_put32(out + 32, c->selector_area);
	pn_put32(out + 36, c->state);
	pn_put64(out + 40, k->h.sysid);
	pn_put32(out + 48, pn_crc32c(out, 48));
	if (c->sized) {
		pn_put32(out + 52, 1);
		pn_put32(out + 56, c->rel_blocks);
		pn_put32(out + 60, pn_crc32c(out + 52, 8));
	}
}

bool pn_ckpt_decode_control(const uint8_t *in, struct pn_control *c)
{
	if (pn_get32(in) != CONTROL_MAGIC || pn_get32(in + 48) != pn_crc32c(in, 48))
		return false;
	c->ckpt_seq = pn_get64(in + 8);
	c->checkpoint = pn_get64(in + 16);
	c->redo = pn_get64(in + 24);
	c->selector_area = pn_get32(in + 32);
	c->state = pn_get32(in + 36);
	c->sized = pn_get32(in + 52) == 1;
	c->rel_blocks = c->sized ? pn_get32(in + 56) : 0;
	if (pn_get32(in + 52) > 1 || (c->sized && pn_get32(in + 60) != pn_crc32c(in + 52, 8)))
		return false;
	return true;
}

static void ckpt_end(struct pn_ckpt *k, struct pn_ckpt_run *run)
{
	k->control.ckpt_seq = run->seq;
	k->control.checkpoint = run->record;
	k->control.redo = run->redo;
	k->control.sized = run->sized;
	k->control.rel_blocks = run->rel_blocks;
	k->control.selector_area = (uint32_t)(run->seq % PN_SELECTOR_AREAS);
	if (k->h.proto->ckpt.end) /* the prototype's baselines */
		k->h.proto->ckpt.end(k->h.pctx, run);
	pn_store_drop_baselines_inflight(k->h.store);
	k->redo_done = run->redo;
	k->seq_done = run->seq;
	pn_wal_checkpoint_done(k->h.wal, run->redo);
	pn_ckpt_set_state(run, PN_C_IDLE);
	for (uint32_t i = 0; i < k->h.nprocs; i++)
		if (k->h.procs[i].kind == PN_PROC_BACKEND || k->h.procs[i].kind == PN_PROC_STARTUP)
			pn_svc_wake(k->h.svc, i, 0);
}

static void insert_record(struct pn_ckpt *k, struct pn_ckpt_run *run)
{
	uint8_t main[88] = {0};
	pn_put64(main, run->redo);
	pn_put32(main + 8, 1);  /* ThisTimeLineID */
	pn_put32(main + 12, 1); /* PrevTimeLineID */
	main[16] = k->h.proto->fpw_byte;
	pn_put64(main + 24, *k->h.next_xid);
	pn_put32(main + 80, run->oldest_active);
	pn_put32(main + 84, (uint32_t)run->seq); /* the checkpoint's number, in the padding */
	struct pn_wal_record rec = {.main_data = main, .main_len = sizeof(main)};
	enum pn_rec kind = *k->h.recovering ? PN_REC_XLOG_CHECKPOINT_SHUTDOWN
					    : PN_REC_XLOG_CHECKPOINT_ONLINE;
	run->record_end = pn_wal_insert(k->h.wal, &rec, kind, &run->record);
}

/* Advances a run by one step; returns the delay before its next, or UINT64_MAX to wait. */
static uint64_t advance(struct pn_ckpt *k, struct pn_ckpt_run *run)
{
	uint32_t r = run_index(k, run);
	bool in_flight;
	if (run->io_pending)
		return UINT64_MAX;
	switch (run->state) {
	case PN_C_PROTO_SELECT: return k->h.proto->ckpt.select_step(k->h.pctx, run);
	case PN_C_WRITING: return ckpt_write_some(k, run);
	case PN_C_WAIT_WRITES:
		if (!frames_pending(k, r, &in_flight)) {
			pn_ckpt_set_state(run, PN_C_FSYNC_DATA);
			return CKPT_STEP_NS;
		}
		if (in_flight)
			return poll_busy_ns;
		pn_ckpt_set_state(run, PN_C_WRITING);
		run->scan = 0;
		return CKPT_STEP_NS;
	case PN_C_FSYNC_DATA:
		pn_ckpt_run_io(k, run, PN_IO_FSYNC, PN_FILE_DATA, 0, NULL, 0);
		return UINT64_MAX;
	case PN_C_PROTO_DURABLE: return k->h.proto->ckpt.durable_step(k->h.pctx, run);
	case PN_C_RECORD:
		insert_record(k, run);
		pn_ckpt_set_state(run, PN_C_RECORD_FLUSH);
		/* fall through */
	case PN_C_RECORD_FLUSH:
		if (!pn_wal_flush_request(k->h.wal, run->record_end, k->h.proc_ckpt))
			return UINT64_MAX;
		pn_ckpt_set_state(run, PN_C_CONTROL_WRITE);
		/* fall through */
	case PN_C_CONTROL_WRITE:
		for (int o = 0; o < PN_MAX_CKPT_RUNS; o++)
			if (k->runs[o].state != PN_C_IDLE && k->runs[o].seq < run->seq)
				return UINT64_MAX; /* complete in order (R5) */
		if (k->h.proto->ckpt.control)      /* the prototype's baselines in flight */
			k->h.proto->ckpt.control(k->h.pctx, run);
		struct pn_control c = k->control;
		c.ckpt_seq = run->seq;
		c.checkpoint = run->record;
		c.redo = run->redo;
		c.sized = run->sized;
		c.rel_blocks = run->rel_blocks;
		c.selector_area = (uint32_t)(run->seq % PN_SELECTOR_AREAS);
		c.state = 1;
		pn_ckpt_encode_control(k, &c, run->ctlbuf);
		pn_ckpt_run_io(k, run, PN_IO_WRITE, PN_FILE_CONTROL, 0, run->ctlbuf,
			       PN_CONTROL_SIZE);
		return UINT64_MAX;
	case PN_C_CONTROL_FSYNC:
		pn_ckpt_run_io(k, run, PN_IO_FSYNC, PN_FILE_CONTROL, 0, NULL, 0);
		return UINT64_MAX;
	default: return UINT64_MAX;
	}
}

static bool can_begin(const struct pn_ckpt *k, struct pn_ckpt_run **slot)
{
	int active = 0;
	*slot = NULL;
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		if (k->runs[r].state != PN_C_IDLE)
			active++;
		else if (!*slot)
			*slot = (struct pn_ckpt_run *)&k->runs[r];
	}
	return *slot && (active == 0 || k->h.sc->checkpoint.overlap);
}

void pn_ckpt_step(struct pn_ckpt *k)
{
	uint64_t now = k->h.svc->env.now_ns(k->h.svc->env.ctx);
	uint64_t interval = k->h.sc->checkpoint.interval_ns;
	struct pn_ckpt_run *slot;
	if (interval && !k->requested && !*k->h.stopping && now - k->last_ns >= interval)
		pn_ckpt_request(k, PN_CKPT_TIME, false);
	if (k->requested && can_begin(k, &slot))
		ckpt_begin(k, slot);
	uint64_t delay = UINT64_MAX;
	for (uint64_t seq = 0;;) {
		struct pn_ckpt_run *next = NULL;
		for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
			if (k->runs[r].state != PN_C_IDLE && k->runs[r].seq > seq &&
			    (!next || k->runs[r].seq < next->seq))
				next = &k->runs[r];
		if (!next)
			break;
		seq = next->seq;
		uint64_t d = advance(k, next);
		delay = PN_MIN(delay, d);
	}
	if (!pn_ckpt_active(k) && interval && !*k->h.stopping)
		delay = PN_MIN(delay,
			       k->last_ns + interval - PN_MIN(now, k->last_ns + interval) + 1);
	if (delay != UINT64_MAX)
		pn_svc_wake(k->h.svc, k->h.proc_ckpt, delay);
}

void pn_ckpt_check(const struct pn_ckpt *k)
{
	uint32_t active = 0;
	PN_ASSERT(k->seq_done <= k->seq_begun);
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++) {
		const struct pn_ckpt_run *run = &k->runs[r];
		PN_ASSERT(run->state < PN_C_COUNT);
		if (run->state == PN_C_IDLE) {
			PN_ASSERT(!run->io_pending);
			continue;
		}
		active++;
		/* a run in progress was begun and has not completed (R5: in order) */
		PN_ASSERT(run->seq > k->seq_done);
		PN_ASSERT(run->seq <= k->seq_begun);
		PN_ASSERT(run->scan <= k->h.buf->nframes);
		for (int o = 0; o < r; o++)
			PN_ASSERT(k->runs[o].state == PN_C_IDLE || k->runs[o].seq != run->seq);
	}
	PN_ASSERT(active <= 1 || k->h.sc->checkpoint.overlap);
}

/*
 * world.c: the discrete-event world (sim layer). See world.h.
 *
 * Event kinds, each one step of something:
 *   STEP      a process runs one step (pn_engine_fire), at the time it asked for plus jitter;
 *   DISPATCH  an issued I/O reaches the device (a write lands in `cur`, an fsync marks
 *             what it covers, a read copies bytes); at most aio.queue_depth are in flight;
 *   COMPLETE  the device reports it done; the engine's completion callback runs.
 * Latencies (virtual): dispatch 1-3 us; read 60-150 us; data write 15-80 us; WAL write
 * 10-40 us; fsync 200-1500 us. With aio.reorder off, completions keep dispatch order.
 * With a chooser (world.h, choice points) the next event is picked among the first
 * schedules.choice_width pending ones; without one the loop is the seeded order, unchanged.
 */
#include "world.h"
#include "protocols.h"
#include "workload.h"

#include <stdlib.h>
#include <string.h>
#include "xxh.h"

/* ---- event heap, ordered by (time, seq) ---- */

static bool ev_less(const struct pn_event *a, const struct pn_event *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* Places ev in the hole at the root, moving the smaller child up until ev is no greater
 * than both children (pop, and a push into an open top). */
static void sift_down(struct pn_world *w, struct pn_event ev)
{
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= w->heap_len)
			break;
		if (c + 1 < w->heap_len && ev_less(&w->heap[c + 1], &w->heap[c]))
			c++;
		if (!ev_less(&w->heap[c], &ev))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	w->heap[i] = ev;
}

/* Inserts ev as it is (its seq kept: a candidate not chosen goes back where it was). An open
 * top (the running event's place, next_event) takes it instead: one sift down replaces the
 * pop's and the push's two sifts, and the events leave in the same order ((time, seq) is a
 * total order: any heap of the same events pops them alike). */
static void heap_insert(struct pn_world *w, struct pn_event ev)
{
	if (w->top_open) {
		PN_ASSERT(w->heap_len > 0);
		w->top_open = false;
		sift_down(w, ev);
		return;
	}
	if (w->heap_len == w->heap_cap) { /* past the live bound: superseded wakes (world.h) */
		PN_ASSERT(w->heap_cap < w->max_events && "the event heap outgrew the run's bound");
		w->heap_cap = w->heap_cap ? 2 * w->heap_cap : 256;
		w->heap = realloc(w->heap, w->heap_cap * sizeof(*w->heap));
		PN_ASSERT(w->heap != NULL);
	}
	uint32_t i = w->heap_len++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!ev_less(&ev, &w->heap[parent]))
			break;
		w->heap[i] = w->heap[parent];
		i = parent;
	}
	w->heap[i] = ev;
}

static void push(struct pn_world *w, uint64_t time, uint32_t kind, uint32_t arg, uint64_t token)
{
	heap_insert(w, (struct pn_event){time, ++w->seq, kind, arg, token});
}

static struct pn_event pop(struct pn_world *w)
{
	PN_ASSERT(w->heap_len > 0 && !w->top_open);
	struct pn_event top = w->heap[0], last = w->heap[--w->heap_len];
	if (w->heap_len)
		sift_down(w, last);
	return top;
}

/* The running event's place, if no push took it: removed as pop removes the root. */
static void close_top(struct pn_world *w)
{
	if (!w->top_open)
		return;
	w->top_open = false;
	(void)pop(w);
}

/* ---- the running hash of the history (the determinism self-check) ---- */

static void hash_bytes(struct pn_world *w, const void *p, size_t len)
{
	if (w->opt.twin)
		w->hash = XXH3_64bits_withSeed(p, len, w->hash);
}

void pn_world_hash_mix(struct pn_world *w, uint64_t a, uint64_t b)
{
	uint64_t v[2] = {a, b};
	hash_bytes(w, v, sizeof(v));
}

/* What one event did, after it ran (every field an integer: no padding is hashed). */
static void hash_event(struct pn_world *w, const struct pn_event *ev)
{
	struct pn_acks_view acks;
	pn_engine_acks(w->e, &acks);
	uint64_t v[12] = {w->events, ev->time,      ev->kind,
			  ev->arg,   ev->token,     pn_engine_wal_insert_lsn(w->e),
			  acks.n,    w->dev.version};
	if (ev->kind == PN_EV_STEP) {
		struct pn_proc_info p;
		pn_engine_proc_info(w->e, ev->arg, &p);
		v[8] = p.state;
		v[9] = p.op.op;
		v[10] = (uint64_t)p.op.page << 32 | p.xid;
		v[11] = p.wake_token;
	} else {
		const struct pn_io *io = pn_engine_io(w->e, ev->arg);
		v[8] = (uint64_t)io->op << 32 | io->file;
		v[9] = io->offset;
		v[10] = (uint64_t)io->len << 32 | io->state;
		v[11] = (uint64_t)io->page << 32 | io->slot;
	}
	hash_bytes(w, v, sizeof(v));
}

static void twin_text(const struct pn_world *w, struct pn_world_twin *t)
{
	const struct pn_trace_entry *e = &w->trace[(w->events - 1) % PN_TRACE_LEN];
	char text[160];
	pn_world_trace_text(w, e, text, sizeof(text));
	snprintf(t->what, sizeof(t->what), "%s, at %.6f ms", text, (double)e->time / 1e6);
}

/* The twin takes the hash as of the last event (before the next one runs, or at the end, so
 * that what the caller mixed in after an event counts for it). */
static void twin_take(struct pn_world *w)
{
	struct pn_world_twin *t = w->opt.twin;
	if (!t || w->hash_logged == w->events)
		return;
	uint64_t i = w->events - 1;
	w->hash_logged = w->events;
	if (!t->second) {
		if (t->len == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 4096;
			t->log = realloc(t->log, t->cap * sizeof(*t->log));
			PN_ASSERT(t->log != NULL);
		}
		PN_ASSERT(t->len == i);
		t->log[t->len++] = w->hash;
		return;
	}
	if (!t->diverged_at && (i >= t->len || t->log[i] != w->hash)) {
		t->diverged_at = w->events;
		twin_text(w, t);
	}
	if (w->events == t->perturb_at)
		pn_prng_next(&w->rng_sched);
}

uint64_t pn_world_device_hash(const struct pn_device *d)
{
	return pn_device_hash(d,
			      XXH3_64bits_withSeed(&d->nunsynced, sizeof(d->nunsynced), d->track));
}

void pn_world_twin_reset(struct pn_world_twin *t)
{
	t->second = false;
	t->len = 0;
	t->diverged_at = 0;
	t->what[0] = 0;
	t->events[0] = t->events[1] = t->device[0] = t->device[1] = 0;
}

void pn_world_twin_free(struct pn_world_twin *t)
{
	free(t->log);
	t->log = NULL;
	t->len = t->cap = 0;
}

bool pn_world_twin_end(struct pn_world_twin *t, struct pn_world *w, char *msg, size_t len)
{
	PN_ASSERT(w->opt.twin == t);
	twin_take(w);
	int run = t->second ? 1 : 0;
	t->events[run] = w->events;
	t->device[run] = pn_world_device_hash(&w->dev) ^ w->hash;
	msg[0] = 0;
	if (!run) {
		t->second = true;
		return true;
	}
	if (t->diverged_at && t->diverged_at <= t->events[0])
		snprintf(msg, len, "the two runs diverge at event %llu (in the second run: %s)",
			 (unsigned long long)t->diverged_at, t->what);
	else if (t->events[0] != t->events[1])
		snprintf(msg, len,
			 "the two runs diverge after event %llu: the first run ends there, "
			 "the second goes on to event %llu",
			 (unsigned long long)PN_MIN(t->events[0], t->events[1]),
			 (unsigned long long)PN_MAX(t->events[0], t->events[1]));
	else if (t->device[0] != t->device[1])
		snprintf(msg, len,
			 "the two runs agree on all %llu events but leave different devices",
			 (unsigned long long)t->events[1]);
	return msg[0] == 0;
}

/* ---- the seam ---- */

static uint64_t env_now(void *ctx) { return ((struct pn_world *)ctx)->now; }

static void env_wal_inserted(void *ctx, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	struct pn_world *w = ctx;
	pn_lsn at[2] = {start, end};
	hash_bytes(w, at, sizeof(at));
	hash_bytes(w, rec, len);
	if (w->opt.choose)
		w->wal_hash = XXH3_64bits_withSeed(rec, len, w->wal_hash ^ start);
	if (w->on_wal)
		w->on_wal(w->on_wal_arg, rec, len, start, end);
}

uint64_t pn_world_dur_digest(struct pn_world *w)
{
	if (w->dur_content_version != w->dev.dur_version || !w->dur_content_known) {
		w->dur_content = pn_device_dur_digest(&w->dev);
		w->dur_content_version = w->dev.dur_version;
		w->dur_content_known = true;
	}
	return w->dur_content;
}

static void env_wal_segment(void *ctx, uint64_t off, uint64_t len, bool remove)
{
	struct pn_world *w = ctx;
	if (remove)
		pn_device_remove(&w->dev, PN_FILE_WAL, off, len);
	else
		pn_device_create(&w->dev, PN_FILE_WAL, off, len);
}

static uint64_t env_random(void *ctx)
{
	return pn_prng_next(&((struct pn_world *)ctx)->rng_workload);
}

static void env_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	struct pn_world *w = ctx;
	uint64_t jitter = pn_prng_range(&w->rng_sched, 0, delay_ns / 2 + 200);
	push(w, w->now + delay_ns + jitter, PN_EV_STEP, proc, token);
}

static bool env_read_sync(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	pn_device_read(&((struct pn_world *)ctx)->dev, f, off, len, out);
	return true;
}

static bool env_read_summary(void *ctx, enum pn_file f, uint64_t off, uint32_t len,
			     const struct pn_summary *s, struct pn_summary_value *out)
{
	*out = pn_device_read_summary(&((struct pn_world *)ctx)->dev, f, off, len, s);
	return true;
}

/* CK4 (chunks.h): a data write's bytes go into half a slot of the device's pool. */
static uint8_t *env_write_buf(void *ctx, const struct pn_io *io)
{
	struct pn_world *w = ctx;
	uint32_t half;
	uint8_t *buf = pn_device_lend(&w->dev, io->file, io->offset, io->len, &half);
	if (buf)
		w->lent[io->index] = (uint8_t)half;
	return buf;
}

static void dispatch_later(struct pn_world *w, uint32_t io)
{
	push(w, w->now + pn_prng_range(&w->rng_io, 1000, 3000), PN_EV_DISPATCH, io, 0);
	w->aio_inflight++;
}

static void env_submit(void *ctx, struct pn_io *io)
{
	struct pn_world *w = ctx;
	if (w->aio_inflight < w->sc->aio.queue_depth) {
		dispatch_later(w, io->index);
		return;
	}
	PN_ASSERT(w->aio_len < w->aio_cap); /* each waiting entry is another issued I/O */
	w->aio_pending[(w->aio_head + w->aio_len++) % w->aio_cap] = io->index;
}

static uint64_t io_latency(struct pn_world *w, const struct pn_io *io)
{
	if (io->op == PN_IO_FSYNC)
		return pn_prng_range(&w->rng_io, 200000, 1500000);
	if (io->op == PN_IO_READ)
		return pn_prng_range(&w->rng_io, 60000, 150000);
	if (io->file == PN_FILE_WAL)
		return pn_prng_range(&w->rng_io, 10000, 40000);
	return pn_prng_range(&w->rng_io, 15000, 80000);
}

static void on_dispatch(struct pn_world *w, uint32_t index)
{
	struct pn_io *io = pn_engine_io(w->e, index);
	PN_ASSERT(io->state == PN_IO_ISSUED);
	pn_io_dispatched(io);
	if (io->bind)
		io->offset = io->bind(io->ctx, io);
	switch (io->op) {
	case PN_IO_WRITE:
		/* before a lent half that the device does not take goes back */
		hash_bytes(w, io->buf, io->len);
		if (!io->lent) {
			PN_ASSERT(!w->lent || !w->lent[index]); /* CK4: the engine's io->buf */
			pn_device_write(&w->dev, io, w->events);
			break;
		}
		PN_ASSERT(w->lent && w->lent[index]); /* CK4: the device's, lent at issue */
		pn_device_write_lent(&w->dev, io, w->lent[index], w->events);
		w->lent[index] = 0;
		break;
	case PN_IO_READ: pn_device_read(&w->dev, io->file, io->offset, io->len, io->buf); break;
	case PN_IO_FSYNC: w->fsync_of_io[index] = pn_device_fsync_start(&w->dev); break;
	}
	uint64_t at = w->now + io_latency(w, io);
	if (!w->sc->aio.reorder) {
		at = PN_MAX(at, w->last_completion + 1);
		w->last_completion = at;
	}
	push(w, at, PN_EV_COMPLETE, index, 0);
}

static void on_complete(struct pn_world *w, uint32_t index)
{
	struct pn_io *io = pn_engine_io(w->e, index);
	PN_ASSERT(!w->lent || !w->lent[index]); /* CK4: the device took the lent half */
	if (io->op == PN_IO_WRITE)
		pn_device_write_done(&w->dev, index);
	else if (io->op == PN_IO_FSYNC)
		pn_device_fsync_done(&w->dev, io->file, w->fsync_of_io[index]);
	w->aio_inflight--;
	if (w->aio_len) {
		uint32_t next = w->aio_pending[w->aio_head];
		w->aio_head = (w->aio_head + 1) % w->aio_cap;
		w->aio_len--;
		dispatch_later(w, next);
	}
	pn_engine_io_done(w->e, io);
}

/* ---- trace of the last events ---- */

static void record_trace(struct pn_world *w, const struct pn_event *ev,
			 const struct pn_proc_info *p)
{
	struct pn_trace_entry *t = &w->trace[w->events % PN_TRACE_LEN];
	t->event = w->events;
	t->time = ev->time;
	t->kind = ev->kind;
	t->arg = ev->arg;
	if (ev->kind == PN_EV_STEP) {
		t->state = (uint8_t)p->state;
		t->op = (uint8_t)p->op.op;
		t->page = p->op.page;
		t->value = p->op.op == PN_OP_SLRU_SET ? p->op.xid : p->xid;
		return;
	}
	const struct pn_io *io = pn_engine_io(w->e, ev->arg);
	t->op = (uint8_t)io->op;
	t->file = (uint8_t)io->file;
	t->why = (uint8_t)io->why;
	t->page = io->page;
	t->slot = io->slot;
	t->offset = io->offset;
}

static const char *bstate_names[] = {
	"next",       "pin",  "decide",  "insert", "commit-wait", "wait-checkpoint",
	"evict-wait", "done", "publish", "held",
};

static void step_text(const struct pn_world *w, const struct pn_trace_entry *t, char *buf,
		      size_t len)
{
	struct pn_proc_info p;
	pn_engine_proc_info(w->e, t->arg, &p);
	static const char *kinds[] = {"backend",   "checkpointer", "bgwriter",
				      "walwriter", "startup",      "pageserver"};
	if (p.kind != PN_PROC_BACKEND) {
		snprintf(buf, len, "step %s", kinds[p.kind]);
		return;
	}
	const char *state = t->state < PN_ARRAY_LEN(bstate_names) ? bstate_names[t->state] : "?";
	if (t->state == PN_B_NEXT || t->state == PN_B_DONE) {
		snprintf(buf, len, "step backend %u (%s)", t->arg, state);
		return;
	}
	const char *op = pn_op_name((enum pn_op)t->op);
	bool paged = t->op == PN_OP_UPDATE || t->op == PN_OP_HINT || t->op == PN_OP_VACUUM ||
		     t->op == PN_OP_DEDUP || t->op == PN_OP_EVICT;
	if (paged)
		snprintf(buf, len, "step backend %u: %s page %u (%s)", t->arg, op, t->page, state);
	else
		snprintf(buf, len, "step backend %u: %s xid %u (%s)", t->arg, op, t->value, state);
}

void pn_world_trace_text(const struct pn_world *w, const struct pn_trace_entry *t, char *buf,
			 size_t len)
{
	static const char *ops[] = {"read", "write", "fsync"};
	if (t->kind == PN_EV_STEP) {
		step_text(w, t, buf, len);
		return;
	}
	int n = snprintf(buf, len, "%s %s %s (%s)",
			 t->kind == PN_EV_DISPATCH ? "dispatch" : "complete", ops[t->op],
			 pn_file_name((enum pn_file)t->file),
			 pn_io_why_name((enum pn_io_why)t->why));
	if (t->page != UINT32_MAX && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " page %u slot %u offset %llu", t->page, t->slot,
			 (unsigned long long)t->offset);
}

void pn_world_print_trace(const struct pn_world *w, FILE *out)
{
	uint64_t first = w->events > PN_TRACE_LEN ? w->events - PN_TRACE_LEN : 0;
	for (uint64_t i = first; i < w->events; i++) {
		const struct pn_trace_entry *t = &w->trace[i % PN_TRACE_LEN];
		char text[160];
		pn_world_trace_text(w, t, text, sizeof(text));
		fprintf(out, "  #%-8llu %12.6f ms  %s\n", (unsigned long long)t->event + 1,
			(double)t->time / 1e6, text);
	}
}

static void print_context(void *arg)
{
	const struct pn_world *w = arg;
	fprintf(stderr, "penumbra: scenario %s, seed %llu, schedule %u, event %llu, time %llu ns\n",
		w->sc->path, (unsigned long long)w->sc->seed, w->opt.schedule,
		(unsigned long long)w->events, (unsigned long long)w->now);
	pn_world_print_trace(w, stderr);
}

/* ---- the loop ---- */

static void format_write(void *ctx, enum pn_file f, uint64_t off, const uint8_t *buf, uint32_t len)
{
	pn_device_format_write(&((struct pn_world *)ctx)->dev, f, off, buf, len);
}

/* CK3 (chunks.h): the data file's pages as formatting writes them, built when read. Under a
 * search (opt.choose) each block of a page's size is built once and kept (w->lazy, which the
 * worlds of one search share through opt.lazy): the fingerprint reads and hashes every page
 * at every event, and a page as formatting writes it depends on its place alone
 * (pn_engine_lazy_read: page_init_fixed). */
static bool lazy_read(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	struct pn_world *w = ctx;
	struct pn_world_lazy *l = w->lazy;
	PN_ASSERT(f == PN_FILE_DATA);
	/* past the memo (a file grown beyond the formatted pages: slots, a page server's
	 * areas): built each time, as without a search */
	if (!l || off + len > l->end)
		return pn_engine_lazy_read(w->e, off, len, out);
	uint32_t size = pn_engine_geometry(w->e).page_size;
	PN_ASSERT(len > 0);
	bool any = false;
	for (uint64_t b = off / size; b * size < off + len; b++) {
		if (!(l->built[b / 8] >> (b % 8) & 1)) {
			bool page = pn_engine_lazy_read(w->e, b * size, size, l->memo + b * size);
			l->built[b / 8] |= (uint8_t)(1u << (b % 8));
			l->page[b / 8] |= (uint8_t)((unsigned)page << (b % 8));
		}
		any |= l->page[b / 8] >> (b % 8) & 1;
	}
	memcpy(out, l->memo + off, len);
	return any;
}

void pn_world_lazy_free(struct pn_world_lazy *l)
{
	free(l->memo);
	free(l->built);
	free(l->page);
	memset(l, 0, sizeof(*l));
}

/* The largest data file whose pages a search's world keeps as built (lazy_read). */
#define LAZY_MEMO_MAX ((uint64_t)64 << 20)

/* A fresh device: an untracked one (`run`) lazily (CK3), unless the engine cannot. */
static void format(struct pn_world *w)
{
	if (w->opt.wal_sink && !w->opt.track)
		pn_device_set_sink(&w->dev, PN_FILE_WAL);
	uint64_t end = w->opt.track || w->opt.eager ? 0 : pn_engine_lazy_end(w->e);
	if (!end) {
		pn_engine_format(w->e, format_write, w);
		return;
	}
	if (w->opt.choose && end <= LAZY_MEMO_MAX) {
		uint32_t size = pn_engine_geometry(w->e).page_size;
		uint64_t blocks = (end + size - 1) / size;
		w->lazy = w->opt.lazy ? w->opt.lazy : &w->own_lazy;
		if (!w->lazy->memo) {
			w->lazy->end = blocks * size;
			w->lazy->memo = malloc(w->lazy->end);
			w->lazy->built = calloc(blocks / 8 + 1, 1);
			w->lazy->page = calloc(blocks / 8 + 1, 1);
			PN_ASSERT(w->lazy->memo && w->lazy->built && w->lazy->page);
		}
		PN_ASSERT(w->lazy->end == blocks * size); /* one search, one scenario */
	}
	pn_device_set_lazy(&w->dev, PN_FILE_DATA, end, lazy_read, w);
	pn_engine_format_lazy(w->e, format_write, w);
}

bool pn_world_init(struct pn_world *w, const struct pn_scenario *sc,
		   const struct pn_world_options *opt, const struct pn_device *from)
{
	memset(w, 0, sizeof(*w));
	w->sc = sc;
	w->opt = *opt;
	pn_prng_seed(&w->rng_workload, sc->seed, PN_STREAM_WORKLOAD, 0);
	pn_prng_seed(&w->rng_sched, sc->seed, PN_STREAM_SCHEDULE, opt->schedule);
	pn_prng_seed(&w->rng_io, sc->seed, PN_STREAM_IO, opt->schedule);
	pn_device_init(&w->dev, opt->track, pn_scenario_atomic_unit(sc));
	/* W7: the WAL's bytes go nowhere and nothing (twin, oracle) looks at a record */
	PN_ASSERT(!opt->wal_unread || (opt->wal_sink && !opt->track && !opt->twin));
	bool lend = !from && !opt->track && !opt->eager && !opt->blank; /* CK4: lazy devices */
	w->fast = (struct pn_env_fast){
		.write_buf = lend ? env_write_buf : NULL,
		.read_summary = env_read_summary,
		.wal_segment = env_wal_segment,
		.wal_unread = opt->wal_unread,
	};
	struct pn_env env = {
		.ctx = w,
		.submit = env_submit,
		.read_sync = env_read_sync,
		.now_ns = env_now,
		.schedule = env_schedule,
		.random = env_random,
		.wal_inserted = env_wal_inserted,
		.fast = opt->plain ? NULL : &w->fast,
	};
	lend = lend && !opt->plain;
	uint64_t work = sc->workload.kind == PN_WL_SCRIPT
				? sc->workload.script_len
				: sc->workload.transactions *
					  (sc->workload.pages_per_transaction + 1);
	w->max_events = 20000ull * (work + 100) + 10000000ull;
	w->e = pn_engine_new();
	if (!pn_engine_init(w->e, sc, &env, from == NULL, pn_workload_of(sc), pn_protocol_of(sc))) {
		snprintf(w->error, sizeof(w->error), "%s", pn_engine_error(w->e));
		pn_engine_delete(w->e); /* the caller frees w alone */
		w->e = NULL;
		return false;
	}
	/* Sized up front: the AIO ring holds each issued I/O at most once, so the engine's I/O
	 * count bounds it; the heap holds at most one event per I/O and one live wake per
	 * process, plus the wakes a later, earlier wake superseded (popped when due). */
	w->aio_cap = pn_engine_io_count(w->e);
	w->aio_pending = malloc(w->aio_cap * sizeof(*w->aio_pending));
	w->heap_cap = PN_MAX(w->heap_cap, pn_engine_io_count(w->e) + pn_engine_proc_count(w->e));
	w->heap = realloc(w->heap, w->heap_cap * sizeof(*w->heap)); /* init may have pushed */
	PN_ASSERT(w->aio_pending != NULL && w->heap != NULL);
	w->fsync_of_io = calloc(pn_engine_io_count(w->e), sizeof(uint64_t));
	w->lent = lend ? calloc(pn_engine_io_count(w->e), 1) : NULL;
	PN_ASSERT(w->fsync_of_io != NULL && (w->lent || !lend));
	if (from)
		pn_device_copy(from, &w->dev);
	else if (!opt->blank)
		format(w);
	pn_assert_context(print_context, w);
	return true;
}

void pn_world_free(struct pn_world *w)
{
	pn_assert_context(NULL, NULL);
	if (w->lent) { /* CK4: a write never dispatched gives its half back */
		for (uint32_t i = 0; i < pn_engine_io_count(w->e); i++)
			if (w->lent[i])
				pn_device_lend_back(pn_engine_io(w->e, i)->buf, w->lent[i]);
		free(w->lent);
	}
	pn_engine_delete(w->e);
	pn_device_free(&w->dev);
	free(w->heap);
	free(w->aio_pending);
	free(w->fsync_of_io);
	free(w->fp_order);
	free(w->fp_page);
	pn_world_lazy_free(&w->own_lazy);
}

/* ---- choice points (world.h) ---- */

static bool stale(struct pn_world *w, const struct pn_event *ev)
{
	/* superseded by a later wake: never an event (the token alone, not the whole
	 * pn_proc_info: this runs for every popped event) */
	return ev->kind == PN_EV_STEP && ev->token != pn_engine_wake_token(w->e, ev->arg);
}

/* Pops the event the chooser picks among the candidates; the others go back as they were.
 * Each pending event is its own actor's (a process has one live wake, an I/O one event). */
static bool choose_event(struct pn_world *w, struct pn_event *out)
{
	struct pn_event cand[2 * PN_CHOICE_WIDTH_MAX], *rest = cand + PN_CHOICE_WIDTH_MAX;
	uint32_t n = 0, nrest = 0, width = w->sc->schedules.choice_width;
	bool completion = false;
	PN_ASSERT(width >= 1 && width <= PN_CHOICE_WIDTH_MAX);
	while (w->heap_len && n < width && nrest < width) {
		struct pn_event ev = pop(w);
		if (stale(w, &ev))
			continue;
		bool behind = ev.kind == PN_EV_COMPLETE && completion && !w->sc->aio.reorder;
		completion |= ev.kind == PN_EV_COMPLETE;
		if (behind)
			rest[nrest++] = ev; /* FIFO completions: never before an earlier one */
		else
			cand[n++] = ev;
	}
	if (n == 0) {
		for (uint32_t i = 0; i < nrest; i++)
			heap_insert(w, rest[i]);
		return false;
	}
	memmove(cand + n, rest, nrest * sizeof(*rest)); /* the popped ones, for fingerprints */
	w->held = cand;
	w->nheld = n + nrest;
	uint32_t pick = w->opt.choose(w->opt.choose_arg, w, cand, n);
	w->nheld = 0;
	rest = cand + n;
	PN_ASSERT(pick < n);
	*out = cand[pick];
	for (uint32_t i = 0; i < n; i++)
		if (i != pick)
			heap_insert(w, cand[i]);
	for (uint32_t i = 0; i < nrest; i++)
		heap_insert(w, rest[i]);
	return true;
}

/* The next event in the seeded order, or the chooser's; false when none is pending. Where the
 * chooser needs no candidates (opt.choice_needed) it would take candidate 0, the seeded
 * order's next event: the first event by (time, seq) that is not stale, which this pops too.
 * The stale events choose_event would have dropped below it stay until they come up (the
 * fingerprint skips them), and the event's first push takes the open top, as without a
 * chooser. */
static bool next_event(struct pn_world *w, struct pn_event *out)
{
	if (w->opt.choose &&
	    (!w->opt.choice_needed || w->opt.choice_needed(w->opt.choose_arg, w, w->events + 1)))
		return choose_event(w, out);
	while (w->heap_len) {
		if (stale(w, &w->heap[0])) {
			(void)pop(w);
			continue;
		}
		*out = w->heap[0]; /* its place stays open for the event's first push */
		w->top_open = true;
		return true;
	}
	return false;
}

static int event_order(const void *a, const void *b)
{
	const struct pn_event *x = a, *y = b;
	return ev_less(x, y) ? -1 : ev_less(y, x);
}

static void fp_feed(void *ctx, const void *bytes, size_t len)
{
	uint64_t *h = ctx;
	*h = XXH3_64bits_withSeed(bytes, len, *h);
}

uint64_t pn_world_fingerprint(struct pn_world *w)
{
	struct pn_acks_view acks;
	uint64_t begun, done;
	if (w->fp_version != w->dev.version || !w->fp_device) {
		w->fp_device = pn_world_device_hash(&w->dev) | 1;
		w->fp_version = w->dev.version;
	}
	pn_engine_acks(w->e, &acks);
	pn_engine_ckpt_seqs(w->e, &begun, &done);
	uint64_t v[7] = {w->fp_device,
			 w->wal_hash,
			 pn_engine_wal_insert_lsn(w->e),
			 acks.n,
			 begun << 32 | done,
			 pn_engine_ckpt_phase(w->e),
			 pn_engine_wal_flushed(w->e)};
	uint64_t h = XXH3_64bits(v, sizeof(v));
	for (uint32_t i = 0; i < pn_engine_proc_count(w->e); i++) {
		struct pn_proc_info p;
		pn_engine_proc_info(w->e, i, &p);
		uint64_t q[3] = {(uint64_t)p.kind << 32 | p.state,
				 (uint64_t)p.op.op << 32 | p.op.page, p.xid};
		h = XXH3_64bits_withSeed(q, sizeof(q), h);
	}
	/* the pending events in the order they would run, by kind and actor (not their times) */
	if (w->fp_cap < w->heap_len + w->nheld + 1) { /* grows with the heap, then stays */
		w->fp_cap = 2 * (w->heap_len + w->nheld + 1);
		w->fp_order = realloc(w->fp_order, w->fp_cap * sizeof(*w->fp_order));
		PN_ASSERT(w->fp_order != NULL);
	}
	struct pn_event *order = w->fp_order;
	uint32_t n = 0;
	for (uint32_t i = 0; i < w->heap_len; i++)
		if (!stale(w, &w->heap[i]))
			order[n++] = w->heap[i];
	for (uint32_t i = 0; i < w->nheld; i++) /* popped for the chooser: still pending */
		order[n++] = w->held[i];
	qsort(order, n, sizeof(*order), event_order);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t q = (uint64_t)order[i].kind << 32 | order[i].arg;
		h = XXH3_64bits_withSeed(&q, sizeof(q), h);
	}
	/* every page's header as the engine would read it now (LSN, flags, free-space bounds;
	 * a resident page's whole bytes are pn_engine_memory's, below) and its slots */
	struct pn_geometry geo = pn_engine_geometry(w->e);
	if (w->sc->protocol.mode != PN_MODE_PUSHDOWN) { /* pushdown would rebuild each page */
		if (!w->fp_page)
			w->fp_page = malloc(geo.page_size);
		uint8_t *page = w->fp_page;
		PN_ASSERT(page != NULL);
		for (uint32_t p = 0; p < geo.pages; p++) {
			uint8_t slots[2] = {0, 0};
			if (pn_engine_page_in_buffer(w->e,
						     p)) /* pn_engine_memory feeds its bytes */
				memset(page, 0, PN_MIN(geo.page_size, 24u));
			else
				pn_engine_read_page(w->e, p, UINT64_MAX, page, NULL);
			if (p < geo.heap_pages)
				pn_engine_page_slots(w->e, p, &slots[0], &slots[1]);
			h = XXH3_64bits_withSeed(page, PN_MIN(geo.page_size, 24u), h);
			h = XXH3_64bits_withSeed(slots, sizeof(slots), h);
		}
	}
	/* and the workload the world will draw next (not the scheduling and I/O streams: they
	 * draw only delays, times to come, which a fingerprint is blind to like the times of
	 * the pending events; two orders of commuting events differ in which event drew which
	 * delay, and are one state) */
	h = XXH3_64bits_withSeed(w->rng_workload.s, sizeof(w->rng_workload.s), h);
	/* and the engine's memory inside a phase (the checkpoint's progress, the frames' bits,
	 * the protocol row's: l3/l4's pending publications) */
	pn_engine_memory(w->e, &(struct pn_hasher){fp_feed, &h});
	return h;
}

uint64_t pn_world_poll_reads(const struct pn_world *w)
{
	uint64_t v[3] = {pn_engine_wal_insert_lsn(w->e), pn_engine_wal_flushed(w->e), 0};
	for (uint32_t i = 0; i < pn_engine_proc_count(w->e); i++) {
		struct pn_proc_info p;
		pn_engine_proc_info(w->e, i, &p);
		v[2] += p.kind == PN_PROC_BACKEND && p.state == PN_B_DONE;
	}
	return XXH3_64bits(v, sizeof(v));
}

void pn_world_touch(struct pn_world *w, const struct pn_event *ev, struct pn_touch *out)
{
	uint32_t procs = pn_engine_proc_count(w->e);
	*out = (struct pn_touch){.seq = ev->seq, .file = -1};
	if (ev->kind == PN_EV_STEP) {
		struct pn_proc_info p;
		pn_engine_proc_info(w->e, ev->arg, &p);
		out->actor = ev->arg;
		out->engine = true;
		out->device = p.kind == PN_PROC_STARTUP || p.kind == PN_PROC_ROW ||
			      w->sc->protocol.mode == PN_MODE_PUSHDOWN;
		out->poll = p.kind == PN_PROC_WALWRITER && !out->device &&
			    pn_engine_wal_insert_lsn(w->e) == pn_engine_wal_flushed(w->e);
		if (out->poll)
			out->reads = pn_world_poll_reads(w);
		return;
	}
	const struct pn_io *io = pn_engine_io(w->e, ev->arg);
	out->actor = procs + ev->arg;
	out->file = (int32_t)io->file;
	out->whole = io->op == PN_IO_FSYNC;
	out->off = io->offset;
	out->len = io->len;
	if (ev->kind == PN_EV_COMPLETE) {
		out->engine = true;
		if (io->op == PN_IO_READ)
			out->file = -1; /* its bytes were copied at dispatch */
		return;
	}
	bool shared = io->why == PN_WHY_WAL || io->why == PN_WHY_CONTROL ||
		      io->why == PN_WHY_SELECTOR || io->why == PN_WHY_PS_META;
	out->engine = io->bind != NULL || (io->op == PN_IO_WRITE && shared);
}

bool pn_touch_independent(const struct pn_touch *a, const struct pn_touch *b)
{
	if (a->actor == b->actor || (a->engine && b->engine))
		return false;
	if ((a->device && (b->device || b->file >= 0)) || (b->device && a->file >= 0))
		return false;
	if (a->file < 0 || b->file < 0 || a->file != b->file)
		return true;
	if (a->whole || b->whole)
		return false;
	return a->off + a->len <= b->off || b->off + b->len <= a->off;
}

static bool series_due(const struct pn_world *w)
{
	uint64_t begun, done;
	pn_engine_ckpt_seqs(w->e, &begun, &done);
	return pn_series_due(w->series, w->events, begun, done);
}

int pn_world_step(struct pn_world *w)
{
	struct pn_engine *e = w->e;
	if (pn_engine_finished(e))
		return pn_engine_failed(e) ? PN_STEP_VIOLATION : PN_STEP_FINISHED;
	struct pn_event ev;
	if (w->events >= w->max_events || !next_event(w, &ev)) {
		snprintf(w->error, sizeof(w->error),
			 "the simulation made no progress after %llu events (a stall)",
			 (unsigned long long)w->events);
		return PN_STEP_STALL;
	}
	struct pn_proc_info proc = {0};
	if (ev.kind == PN_EV_STEP)
		pn_engine_proc_info(e, ev.arg, &proc);
	twin_take(w);
	ev.time = PN_MAX(ev.time, w->now); /* a preempting event ran early: time stays */
	w->now = ev.time;
	record_trace(w, &ev, &proc);
	w->events++;
	if (w->opt.check_each_event && w->opt.check_from)
		pn_engine_event_seen(e, w->events < w->opt.check_from);
	switch (ev.kind) {
	case PN_EV_STEP: pn_engine_fire(e, ev.arg, ev.token); break;
	case PN_EV_DISPATCH: on_dispatch(w, ev.arg); break;
	case PN_EV_COMPLETE: on_complete(w, ev.arg); break;
	}
	close_top(w);
	if (w->opt.check_each_event && !pn_engine_failed(e)) {
		if (w->events >= w->opt.check_from)
			pn_engine_check(e);
		else
			pn_engine_check_skip(e);
	}
	if (w->opt.twin)
		hash_event(w, &ev);
	if (w->series && series_due(w))
		pn_series_observe(w->series, e, w->now, w->events);
	return pn_engine_failed(e) ? PN_STEP_VIOLATION : PN_STEP_EVENT;
}

int pn_world_run(struct pn_world *w)
{
	PN_ASSERT(!w->opt.wal_unread || !w->on_wal); /* W7: no record has a reader */
	for (;;) {
		if (w->opt.stop_at_event && w->events >= w->opt.stop_at_event)
			return 0;
		switch (pn_world_step(w)) {
		case PN_STEP_EVENT: continue;
		case PN_STEP_FINISHED: return 0;
		case PN_STEP_VIOLATION: return 1;
		default: return 2;
		}
	}
}

int pn_world_recover(struct pn_world *w)
{
	if (!pn_engine_recover(w->e))
		return 1;
	return pn_world_run(w);
}

/* One whole run; with a twin, ends that twin's run (its verdict in twin_msg). */
static void observe(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	struct pn_sim_wal_observer *o = arg;
	o->record(o, rec, len, start, end);
}

static int sim_run(const struct pn_scenario *sc, struct pn_sim_result *out,
		   struct pn_world_twin *twin, char *twin_msg, size_t twin_len, bool *same,
		   struct pn_sim_wal_observer *obs)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	/* DV7: a single run reads no WAL back unless a page server replays it (pushdown) */
	struct pn_world_options opt = {.track = false,
				       .check_each_event = true,
				       .twin = twin,
				       .wal_sink = !twin && sc->protocol.mode != PN_MODE_PUSHDOWN};
	opt.wal_unread = opt.wal_sink && !obs; /* W7: no observer reads a record either */
	memset(out, 0, sizeof(*out));
	PN_ASSERT(w != NULL);
	if (!pn_world_init(w, sc, &opt, NULL)) {
		snprintf(out->error, sizeof(out->error), "%s", w->error);
		free(w);
		out->status = 2;
		return 2;
	}
	pn_series_init(&out->series, w->e);
	w->series = &out->series;
	if (obs) { /* the page the format's checkpoint record is on, then every record */
		pn_lsn first = pn_engine_format_redo(w->e);
		first -= first % PN_XLOG_BLCKSZ;
		obs->sysid = pn_engine_geometry(w->e).sysid;
		obs->seg_size = pn_engine_wal_seg_size(w->e);
		obs->page(obs, first, pn_engine_wal_ring_page(w->e, first));
		w->on_wal = observe;
		w->on_wal_arg = obs;
	}
	pn_engine_start(w->e);
	int rc = pn_world_run(w);
	pn_engine_finish_metrics(w->e);
	pn_series_finish(&out->series, w->e, w->now, w->events);
	struct pn_geometry geo = pn_engine_geometry(w->e);
	out->m = *pn_engine_metrics(w->e);
	out->viol = *pn_engine_violation_of(w->e);
	out->events = w->events;
	out->pages = geo.heap_pages;
	out->generations = geo.generations;
	if (rc == 2)
		snprintf(out->error, sizeof(out->error), "%s", w->error);
	out->status = rc == 0 ? 0 : 1;
	if (twin)
		*same = pn_world_twin_end(twin, w, twin_msg, twin_len);
	pn_world_free(w);
	free(w);
	return out->status;
}

int pn_sim_run(const struct pn_scenario *sc, struct pn_sim_result *out)
{
	return sim_run(sc, out, NULL, NULL, 0, NULL, NULL);
}

int pn_sim_run_observed(const struct pn_scenario *sc, struct pn_sim_result *out,
			struct pn_sim_wal_observer *obs)
{
	return sim_run(sc, out, NULL, NULL, 0, NULL, obs);
}

int pn_sim_twice(const struct pn_scenario *sc, uint64_t perturb_at, char *msg, size_t len)
{
	struct pn_world_twin twin = {.perturb_at = perturb_at};
	struct pn_sim_result *r = malloc(sizeof(*r));
	bool same = true;
	int rc = 0;
	PN_ASSERT(r != NULL);
	for (int run = 0; run < 2 && rc == 0; run++) {
		if (sim_run(sc, r, &twin, msg, len, &same, NULL) == 2) {
			snprintf(msg, len, "%s", r->error);
			rc = 2;
		}
	}
	if (rc == 0 && same)
		snprintf(msg, len, "the two runs agree on all %llu events and on the device",
			 (unsigned long long)twin.events[1]);
	else if (rc == 0)
		rc = 1;
	pn_world_twin_free(&twin);
	free(r);
	return rc;
}

/*
 * services.c: the engine's services to its modules (engine layer; services.h draws the I/O
 * state machine). Rules:
 *   SV1 An I/O below io_high (handed out at least once) is on the free list iff its state is
 *       PN_IO_FREE; io_free_len counts them. Those from io_high on are free and untouched
 *       (pn_svc_init writes none of the table: most of it is never used, and it was a
 *       fifth of `run`'s page faults), handed out in index order once the list is empty.
 *       So the order is that of a list holding every index, lowest on top.
 *   SV2 Every state change of an I/O is one edge of the legal[][] table below.
 *   SV3 A completion calls exactly the issuer's io->done, once, with the issuer's io->ctx.
 *   SV4 The first violation is the one reported: failed is set once and never cleared.
 */
#include "services.h"
#include "walfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *viol_names[PN_VIOL_COUNT] = {
	"none",     "wal_before_data", "protected_slot", "mapping", "checksum",
	"recovery", "durability",      "exactness",      "space",
};
const char *pn_violation_name(enum pn_violation_kind k)
{
	PN_ASSERT((unsigned)k < PN_VIOL_COUNT);
	return viol_names[k];
}

#define IO_STATES 3
static const bool legal[IO_STATES][IO_STATES] = {
	[PN_IO_FREE] = {[PN_IO_ISSUED] = true},
	[PN_IO_ISSUED] = {[PN_IO_DISPATCHED] = true},
	[PN_IO_DISPATCHED] = {[PN_IO_FREE] = true},
};

static size_t io_bufs_bytes(const struct pn_services *s)
{
	return (size_t)(s->nios + 2) * s->io_buf_bytes;
}

bool pn_svc_init(struct pn_services *s, const struct pn_env *env, uint32_t nios,
		 uint32_t io_buf_bytes, uint32_t nwakes)
{
	PN_ASSERT(env && env->submit && env->now_ns && env->schedule);
	PN_ASSERT(nios > 0);
	memset(s, 0, sizeof(*s));
	s->env = *env;
	s->nios = nios;
	s->io_buf_bytes = io_buf_bytes;
	s->ios = calloc(nios, sizeof(*s->ios));
	s->io_bufs = pn_big_alloc(io_bufs_bytes(s)); /* + spares */
	s->io_free = malloc(sizeof(uint32_t) * nios);
	s->nwakes = nwakes;
	s->wakes = calloc(PN_MAX(nwakes, 1u), sizeof(*s->wakes));
	s->summary_cap = PN_MAX(io_buf_bytes, PN_XLOG_BLCKSZ); /* a page, a WAL page, a dw entry */
	if (!pn_env_fast(env)->read_summary) /* the fallback's bytes, allocated up front */
		s->summary_buf = malloc(s->summary_cap);
	if (!s->ios || !s->io_bufs || !s->io_free || !s->wakes ||
	    (!pn_env_fast(env)->read_summary && !s->summary_buf))
		return false;
	return true;
}

void pn_svc_free(struct pn_services *s)
{
	free(s->ios);
	pn_big_free(s->io_bufs, io_bufs_bytes(s));
	free(s->io_free);
	free(s->wakes);
	free(s->summary_buf);
	s->summary_buf = NULL;
	s->ios = NULL;
	s->io_bufs = NULL;
	s->io_free = NULL;
	s->wakes = NULL;
}

void pn_io_set_state(struct pn_io *io, enum pn_io_state to)
{
	PN_ASSERT((unsigned)to < IO_STATES);
	PN_ASSERT((unsigned)io->state < IO_STATES);
	PN_ASSERT(legal[io->state][to]); /* SV2 */
	io->state = to;
}

struct pn_io *pn_io_get(struct pn_services *s)
{
	PN_ASSERT(s->io_free_len > 0 || s->io_high < s->nios); /* bounded: 4 per frame + 64 */
	uint32_t i = s->io_free_len ? s->io_free[--s->io_free_len] : s->io_high; /* SV1 */
	PN_ASSERT(i < s->nios);
	struct pn_io *io = &s->ios[i];
	PN_ASSERT(io->state == PN_IO_FREE); /* SV1 */
	s->io_high = PN_MAX(s->io_high, i + 1);
	memset(io, 0, sizeof(*io));
	io->index = i;
	io->buf = s->io_bufs + (size_t)i * s->io_buf_bytes;
	io->frame = io->page = io->proc = UINT32_MAX;
	return io;
}

struct pn_io *pn_io_fsync(struct pn_services *s, enum pn_file file, enum pn_io_why why,
			  void (*done)(void *ctx, struct pn_io *io), void *ctx)
{
	PN_ASSERT(done != NULL);
	PN_ASSERT((unsigned)file < PN_FILE_COUNT);
	struct pn_io *io = pn_io_get(s);
	io->op = PN_IO_FSYNC;
	io->file = file;
	io->why = why;
	io->done = done;
	io->ctx = ctx;
	return io;
}

void pn_io_issue(struct pn_services *s, struct pn_io *io)
{
	PN_ASSERT(io->done); /* SV3: every completion has its issuer's callback */
	PN_ASSERT(io->index < s->nios && &s->ios[io->index] == io);
	pn_io_set_state(io, PN_IO_ISSUED);
	s->env.submit(s->env.ctx, io);
}

void pn_io_dispatched(struct pn_io *io) { pn_io_set_state(io, PN_IO_DISPATCHED); }

static void put_free(struct pn_services *s, struct pn_io *io)
{
	PN_ASSERT(s->io_free_len < s->io_high);
	pn_io_set_state(io, PN_IO_FREE);
	s->io_free[s->io_free_len++] = io->index;
}

void pn_io_complete(struct pn_services *s, struct pn_io *io)
{
	PN_ASSERT(io->state == PN_IO_DISPATCHED);
	PN_ASSERT(io->done);
	io->keep = false;
	io->done(io->ctx, io);
	if (!io->keep)
		put_free(s, io);
}

void pn_io_release(struct pn_services *s, struct pn_io *io)
{
	PN_ASSERT(io->keep);
	PN_ASSERT(io->state == PN_IO_DISPATCHED);
	io->keep = false;
	put_free(s, io);
}

struct pn_io *pn_io_at(struct pn_services *s, uint32_t index)
{
	PN_ASSERT(index < s->io_high);
	PN_ASSERT(s->ios[index].index == index);
	return &s->ios[index];
}

uint32_t pn_io_free_count(const struct pn_services *s)
{
	PN_ASSERT(s->io_free_len <= s->io_high && s->io_high <= s->nios);
	return s->io_free_len + (s->nios - s->io_high); /* SV1 */
}

bool pn_io_all_free(const struct pn_services *s)
{
	PN_ASSERT(s->io_free_len <= s->io_high);
	return s->io_free_len == s->io_high; /* SV1: the rest never left */
}

uint64_t pn_svc_now(const struct pn_services *s) { return s->env.now_ns(s->env.ctx); }

bool pn_svc_read_summary(struct pn_services *s, enum pn_file f, uint64_t off, uint32_t len,
			 const struct pn_summary *sum, struct pn_summary_value *out)
{
	PN_ASSERT(sum->fn != NULL && len > 0);
	const struct pn_env_fast *fast = pn_env_fast(&s->env);
	if (fast->read_summary)
		return fast->read_summary(s->env.ctx, f, off, len, sum, out);
	PN_ASSERT(s->summary_buf != NULL && len <= s->summary_cap);
	if (!s->env.read_sync(s->env.ctx, f, off, len, s->summary_buf))
		return false;
	*out = sum->fn(s->summary_buf, len, sum->arg);
	return true;
}

void pn_svc_wake(struct pn_services *s, uint32_t proc, uint64_t delay_ns)
{
	PN_ASSERT(proc < s->nwakes);
	struct pn_wake *w = &s->wakes[proc];
	uint64_t at = s->env.now_ns(s->env.ctx) + delay_ns;
	if (w->scheduled && w->at_ns <= at)
		return;
	w->scheduled = true;
	w->at_ns = at;
	w->token++;
	PN_ASSERT(w->token > 0);
	s->env.schedule(s->env.ctx, proc, delay_ns, w->token);
}

uint64_t pn_svc_wake_token(const struct pn_services *s, uint32_t proc)
{
	PN_ASSERT(proc < s->nwakes);
	return s->wakes[proc].token;
}

bool pn_svc_scheduled(const struct pn_services *s, uint32_t proc)
{
	PN_ASSERT(proc < s->nwakes);
	return s->wakes[proc].scheduled;
}

bool pn_svc_fire(struct pn_services *s, uint32_t proc, uint64_t token)
{
	PN_ASSERT(proc < s->nwakes);
	struct pn_wake *w = &s->wakes[proc];
	if (token != w->token || s->failed)
		return false;
	w->scheduled = false;
	return true;
}

void pn_svc_vviolation(struct pn_services *s, enum pn_violation_kind k, uint32_t page,
		       const char *fmt, va_list ap)
{
	PN_ASSERT(k != PN_VIOL_NONE);
	PN_ASSERT((unsigned)k < PN_VIOL_COUNT);
	if (s->failed)
		return; /* SV4 */
	s->failed = true;
	s->viol.kind = k;
	s->viol.page = page;
	vsnprintf(s->viol.detail, sizeof(s->viol.detail), fmt, ap);
}

void pn_svc_violation(struct pn_services *s, enum pn_violation_kind k, uint32_t page,
		      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pn_svc_vviolation(s, k, page, fmt, ap);
	va_end(ap);
}

/* O(1) a call: the counts each time, CHECK_SLICE entries of the table in rotation, over the
 * entries ever handed out (io_high): the others are as pn_svc_init left them, and the free
 * list hands out low indices first, so a big table (4 per frame + 64) is mostly never used. */
#define CHECK_SLICE 4u
void pn_svc_check(struct pn_services *s)
{
	PN_ASSERT(s->io_free_len <= s->io_high);                /* SV1 */
	PN_ASSERT(s->failed == (s->viol.kind != PN_VIOL_NONE)); /* SV4 */
	PN_ASSERT(s->io_high <= s->nios && (s->check_next < s->io_high || s->check_next == 0));
	for (uint32_t n = 0; n < PN_MIN(s->io_high, CHECK_SLICE); n++) {
		const struct pn_io *io = &s->ios[s->check_next];
		PN_ASSERT(io->index == s->check_next);
		PN_ASSERT((unsigned)io->state < IO_STATES);
		PN_ASSERT(io->state == PN_IO_FREE || io->done); /* SV3 */
		if (++s->check_next >= s->io_high) /* no division on the per-event path */
			s->check_next = 0;
	}
}

/*
 * services.h: what every engine module uses of the world and of each other, without naming
 * struct pn_engine (engine layer, owned by services.c): the environment (struct pn_env), the
 * I/O table, process wakes, the violation report and the error text. struct pn_engine holds
 * one (e->svc); a module keeps a `struct pn_services *` handle set at its init.
 *
 * An I/O's state changes only in pn_io_set_state(), which asserts each edge:
 *
 *   PN_IO_FREE --pn_io_issue()--> PN_IO_ISSUED --pn_io_dispatched()--> PN_IO_DISPATCHED
 *        ^                          (the world, when it starts it)             |
 *        +--- pn_io_complete() (after io->done), or pn_io_release() of a kept one
 *
 * A completion reaches its issuer only through io->done(io->ctx, io): the issuer sets both.
 */
#ifndef PN_SERVICES_H
#define PN_SERVICES_H

#include <stdarg.h>
#include <string.h>

#include "env.h"

/* ---- violations (protocol invariants; the run stops, the checker reports) ---- */
enum pn_violation_kind {
	PN_VIOL_NONE,
	PN_VIOL_WAL_BEFORE_DATA,
	PN_VIOL_PROTECTED_SLOT,
	PN_VIOL_MAPPING,
	PN_VIOL_CHECKSUM,
	PN_VIOL_RECOVERY,
	PN_VIOL_DURABILITY,
	PN_VIOL_EXACTNESS,
	PN_VIOL_SPACE,
	PN_VIOL_COUNT
};
const char *pn_violation_name(enum pn_violation_kind k);

struct pn_violation {
	enum pn_violation_kind kind;
	uint32_t page;
	char detail[256];
};

/* A process's pending wake: only the step scheduled last runs (its token). */
struct pn_wake {
	bool scheduled;
	uint64_t at_ns;
	uint64_t token;
};

/* What an issuer asks to be called with when a module it issued through completes the I/O
 * (io->then, io->then_ctx). */
struct pn_io_then {
	void (*fn)(void *ctx, struct pn_io *io);
	void *ctx;
};

struct pn_services {
	struct pn_env env;
	/* I/O table: nios entries, each with a bounce buffer of io_buf_bytes */
	struct pn_io *ios;
	uint8_t *io_bufs;
	uint32_t io_buf_bytes;
	uint32_t nios, *io_free, io_free_len;
	uint32_t io_high;     /* 1 + the highest index pn_io_get() has handed out */
	uint8_t *summary_buf; /* pn_svc_read_summary's bytes when env has no read_summary */
	uint32_t summary_cap; /* the most bytes a summarized read takes */
	uint32_t check_next;  /* pn_svc_check()'s rotation, over [0, io_high) */
	/* wakes, one per process */
	struct pn_wake *wakes;
	uint32_t nwakes;
	struct pn_violation viol; /* the first one; the run stops there */
	bool failed;
	char error[PN_ERROR_LEN];
};

/* Allocates the table (nios I/Os with buffers of io_buf_bytes plus two spares, nwakes wakes);
 * false when out of memory (pn_svc_free frees what was allocated). */
bool pn_svc_init(struct pn_services *s, const struct pn_env *env, uint32_t nios,
		 uint32_t io_buf_bytes, uint32_t nwakes);
void pn_svc_free(struct pn_services *s);
/* Field relationships, asserted; O(1) a call (the table in rotation). */
void pn_svc_check(struct pn_services *s);

/* I/O: take a free one (zeroed, its buffer attached), hand it to the world. */
struct pn_io *pn_io_get(struct pn_services *s);
void pn_io_issue(struct pn_services *s, struct pn_io *io);
/* The buffer a write's len bytes go in, before pn_io_issue: memory the environment lends
 * (env.h pn_env_fast write_buf; io->lent set, the engine reads it no more) when the offset is
 * bound (no io->bind) and it gives some, else the engine's io->buf. Called once a write. */
static inline uint8_t *pn_io_buffer(struct pn_services *s, struct pn_io *io)
{
	PN_ASSERT(!io->lent);
	const struct pn_env_fast *fast = pn_env_fast(&s->env);
	uint8_t *lent = fast->write_buf && !io->bind ? fast->write_buf(s->env.ctx, io) : NULL;
	if (lent) {
		io->buf = lent;
		io->lent = true;
	}
	return io->buf;
}
/* The two scratch buffers past the I/O table's (pn_svc_init's spares, io_buf_bytes each), by
 * what each holds, so that no two users share one. */
enum pn_scratch {
	PN_SCRATCH_WRITE_IMAGE, /* bufpool.c: a page's image before its write is chosen */
	PN_SCRATCH_HINT_BEFORE, /* backend.c: a page before a logged hint (its delta) */
};
static inline uint8_t *pn_svc_scratch(struct pn_services *s, enum pn_scratch which)
{
	PN_ASSERT(which == PN_SCRATCH_WRITE_IMAGE || which == PN_SCRATCH_HINT_BEFORE);
	return s->io_bufs + (size_t)(s->nios + (uint32_t)which) * s->io_buf_bytes;
}
/* Copies a write's len bytes into its buffer (pn_io_buffer). */
static inline void pn_io_fill(struct pn_services *s, struct pn_io *io, const uint8_t *bytes)
{
	uint8_t *buf = pn_io_buffer(s, io);
	if (buf != bytes)
		memcpy(buf, bytes, io->len);
}
/* A free one made an fsync of file (why, completing through done(ctx, io)), not yet issued:
 * the caller sets what else it needs (aux, lsn) and issues it. */
struct pn_io *pn_io_fsync(struct pn_services *s, enum pn_file file, enum pn_io_why why,
			  void (*done)(void *ctx, struct pn_io *io), void *ctx);
void pn_io_set_state(struct pn_io *io, enum pn_io_state to);
/* The world started it (the late-binding offset is chosen by the caller after this). */
void pn_io_dispatched(struct pn_io *io);
/* The world finished it: io->done(io->ctx, io); freed unless the callback set io->keep. */
void pn_io_complete(struct pn_services *s, struct pn_io *io);
/* Frees an I/O its done callback kept. */
void pn_io_release(struct pn_services *s, struct pn_io *io);
struct pn_io *pn_io_at(struct pn_services *s, uint32_t index);
/* How many I/Os pn_io_get can still hand out (SV1: on the free list, or never used). */
uint32_t pn_io_free_count(const struct pn_services *s);
/* No I/O in flight or kept. */
bool pn_io_all_free(const struct pn_services *s);

uint64_t pn_svc_now(const struct pn_services *s);
/* The summary s of [off, off + len) of file f (len at most summary_cap): the extension's
 * read_summary, or its fallback, read_sync into the engine's own buffer and s->fn of it.
 * False when the read fails (*out untouched). */
bool pn_svc_read_summary(struct pn_services *s, enum pn_file f, uint64_t off, uint32_t len,
			 const struct pn_summary *sum, struct pn_summary_value *out);
/* Asks the world to run proc after about delay_ns; an earlier pending wake stands. */
void pn_svc_wake(struct pn_services *s, uint32_t proc, uint64_t delay_ns);
uint64_t pn_svc_wake_token(const struct pn_services *s, uint32_t proc);
bool pn_svc_scheduled(const struct pn_services *s, uint32_t proc);
/* proc runs now (pn_engine_fire): true if token is its pending wake's. */
bool pn_svc_fire(struct pn_services *s, uint32_t proc, uint64_t token);

/* The first violation stops the run; later ones are ignored. */
void pn_svc_violation(struct pn_services *s, enum pn_violation_kind k, uint32_t page,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void pn_svc_vviolation(struct pn_services *s, enum pn_violation_kind k, uint32_t page,
		       const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

#endif

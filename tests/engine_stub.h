/*
 * engine_stub.h: what the engine modules' own suites (test_bufpool.c, test_ckpt.c,
 * test_recovery.c) share, so that each builds its module with the handles it needs and no
 * engine: a stub world that holds every submitted I/O until the test completes it and
 * counts the wakes, a protocol row whose hooks are all the in-place defaults, and the
 * modules below (services, WAL, store, the hooks' context) over them.
 *   stub_begin()  the scenario's defaults (stub.sc), which the test may change, then
 *   stub_open()   services, WAL (its redo pointer at the insert start) and store;
 *   stub_close()  frees them.
 */
#ifndef PN_ENGINE_STUB_H
#define PN_ENGINE_STUB_H

#include "bufpool.h"
#include "ckpt.h"
#include "metrics.h"
#include "protocol.h"
#include "store.h"
#include "wal.h"

#include <check.h>
#include <string.h>

#define STUB_PS 8192u
#define STUB_HEAP 6u
#define STUB_PAGES (STUB_HEAP + 2u)
#define STUB_PROCS 2u
#define STUB_MAXIO 32

struct stub {
	struct pn_io *ios[STUB_MAXIO];
	uint32_t nios;
	uint32_t woken[STUB_PROCS];
	/* read_sync: the files' bytes at offset 0 (NULL: the read fails) */
	const uint8_t *files[PN_FILE_COUNT];
	uint64_t file_len[PN_FILE_COUNT];
	struct pn_scenario sc;
	struct pn_services svc;
	struct pn_metrics m;
	struct pn_wal wal;
	struct pn_store st;
	struct pn_proto_ctx pctx;
};
static struct stub stub;

static inline void stub_submit(void *ctx, struct pn_io *io)
{
	(void)ctx;
	ck_assert_uint_lt(stub.nios, STUB_MAXIO);
	stub.ios[stub.nios++] = io;
}
static inline uint64_t stub_now(void *ctx)
{
	(void)ctx;
	return 1000;
}
static inline void stub_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	(void)ctx;
	(void)delay_ns;
	(void)token;
	ck_assert_uint_lt(proc, STUB_PROCS);
	stub.woken[proc]++;
}
static inline bool stub_read(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	(void)ctx;
	ck_assert_int_lt(f, PN_FILE_COUNT);
	if (!stub.files[f] || off + len > stub.file_len[f])
		return false;
	memcpy(out, stub.files[f] + off, len);
	return true;
}

static inline unsigned stub_decide(const struct pn_proto_ctx *c, enum pn_block_use use, bool before)
{
	(void)c;
	(void)use;
	(void)before;
	return 0;
}
static const struct pn_protocol_ops stub_row = {.name = "stub", .write = {.decide = stub_decide}};

static inline void stub_begin(void)
{
	memset(&stub, 0, sizeof(stub));
	pn_scenario_defaults(&stub.sc);
	stub.sc.storage.page_size = STUB_PS;
	stub.sc.checkpoint.interval_ns = 0;
	stub.sc.checkpoint.every_transactions = 0;
}

static inline void stub_open(uint32_t nios)
{
	struct pn_env env = {.submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule,
			     .read_sync = stub_read}; /* no extension: the engine's fallbacks */
	ck_assert(pn_svc_init(&stub.svc, &env, nios, 2 * STUB_PS, STUB_PROCS));
	ck_assert(pn_wal_init(&stub.wal, &stub.sc, &stub.svc, &stub.m, 42, STUB_PROCS));
	pn_wal_set_redo(&stub.wal, pn_wal_insert_start(&stub.wal));
	ck_assert(pn_store_init(&stub.st, &stub.sc, &stub.svc, STUB_HEAP, STUB_PAGES, 1, 0));
	stub.pctx = (struct pn_proto_ctx){.sc = &stub.sc,
					  .svc = &stub.svc,
					  .wal = &stub.wal,
					  .store = &stub.st};
}

static inline void stub_close(void)
{
	pn_store_free(&stub.st);
	pn_wal_free(&stub.wal);
	pn_svc_free(&stub.svc);
	pn_scenario_free(&stub.sc);
}

/* The handles a buffer pool over the stub's modules takes (row: the protocol's). */
static inline struct pn_buf_handles stub_buf_handles(const struct pn_protocol_ops *row,
						     const uint64_t *seq_begun,
						     const uint64_t *seq_done,
						     const bool *recovering)
{
	return (struct pn_buf_handles){.sc = &stub.sc,
				       .svc = &stub.svc,
				       .wal = &stub.wal,
				       .store = &stub.st,
				       .m = &stub.m,
				       .proto = row,
				       .pctx = &stub.pctx,
				       .ckpt_seq_begun = seq_begun,
				       .ckpt_seq_done = seq_done,
				       .recovering = recovering,
				       .page_size = STUB_PS,
				       .pages = STUB_PAGES,
				       .nprocs = STUB_PROCS};
}

/* A checkpointer's handles over the stub's modules and pool bp. */
static inline struct pn_ckpt_handles stub_ckpt_handles(struct pn_bufpool *bp,
						       const struct pn_protocol_ops *row,
						       const struct pn_proc *procs,
						       uint32_t proc_ckpt, const bool *stopping,
						       const bool *recovering, uint32_t *next_xid)
{
	return (struct pn_ckpt_handles){.sc = &stub.sc,
					.svc = &stub.svc,
					.wal = &stub.wal,
					.buf = bp,
					.store = &stub.st,
					.m = &stub.m,
					.proto = row,
					.pctx = &stub.pctx,
					.procs = procs,
					.nprocs = STUB_PROCS,
					.proc_ckpt = proc_ckpt,
					.stopping = stopping,
					.recovering = recovering,
					.next_xid = next_xid,
					.sysid = 42,
					.heap_pages = STUB_HEAP,
					.generations = 1};
}

/* Takes submitted I/O i out of the list, dispatched (the world starting it). */
static inline struct pn_io *stub_take(uint32_t i)
{
	ck_assert_uint_lt(i, stub.nios);
	struct pn_io *io = stub.ios[i];
	memmove(stub.ios + i, stub.ios + i + 1, (--stub.nios - i) * sizeof(stub.ios[0]));
	pn_io_dispatched(io);
	return io;
}

/* The first submitted I/O on file f, or -1. */
static inline int stub_find(enum pn_file f)
{
	for (uint32_t i = 0; i < stub.nios; i++)
		if (stub.ios[i]->file == f)
			return (int)i;
	return -1;
}

/* Completes the I/Os on file f, including those their completions submit. */
static inline void stub_complete_file(enum pn_file f)
{
	while (stub_find(f) >= 0)
		pn_io_complete(&stub.svc, stub_take((uint32_t)stub_find(f)));
}

#endif

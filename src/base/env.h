/*
 * env.h: the engine's one way out to the world (docs/ARCHITECTURE.md, "The seam").
 *
 * The engine in src/ never calls the OS, a clock or a PRNG itself. Everything goes through
 * struct pn_env, which a backend fills: the simulator (sim/world.c: virtual time, a
 * crash-model device, seeded PRNG streams) or a real device (io_uring, monotonic clock).
 *
 * An I/O is a struct pn_io the engine owns. Its life (PN_IO_FREE -> PN_IO_ISSUED ->
 * PN_IO_DISPATCHED -> PN_IO_FREE) is drawn in src/engine/services.h, whose pn_io_set_state()
 * makes every change; the world calls pn_io_dispatched() when it starts one and
 * pn_engine_io_done() when it finishes.
 *
 * "Issued" means the engine has bound the request: buffer contents copied, physical offset
 * chosen (5.3 of the Umbra seed: an asynchronous write captures its slot when issued). The
 * environment may dispatch it later (queue depth) and complete it in any order (reorder).
 * An fsync covers every write to its file that completed before the fsync was dispatched.
 */
#ifndef PN_ENV_H
#define PN_ENV_H

#include "pn.h"

/* PN_FILE_PAGESERVER: the pushdown mode's page server storage (images and its metadata,
 * src/protocol/pushdown.c); another machine's disk in Neon, another file on the simulated device. */
/* The one list of files: X(ENUMERATOR, name in timelines and crash states, name of the
 * file in a bench/crashtest directory). */
/* clang-format off */
#define PN_FILE_LIST(X)                                                                    \
	X(PN_FILE_DATA, "data", "data") X(PN_FILE_WAL, "wal", "wal")                           \
	X(PN_FILE_CONTROL, "control", "control") X(PN_FILE_SELECTOR, "selector", "selector")   \
	X(PN_FILE_DW, "dw", "doublewrite") X(PN_FILE_PAGESERVER, "pageserver", "pageserver")
/* clang-format on */
#define PN_FILE_VALUE_(e, shown, file) e,
#define PN_FILE_SHOWN_(e, shown, file) [e] = shown,
#define PN_FILE_DISK_(e, shown, file) [e] = file,
enum pn_file { PN_FILE_LIST(PN_FILE_VALUE_) PN_FILE_COUNT };

/* A file's short name ("dw"); "?" out of range. */
static inline const char *pn_file_name(enum pn_file f)
{
	static const char *const names[PN_FILE_COUNT] = {PN_FILE_LIST(PN_FILE_SHOWN_)};
	return (unsigned)f < PN_FILE_COUNT ? names[f] : "?";
}

/* A file's name on a real disk ("doublewrite"); "?" out of range. */
static inline const char *pn_file_disk_name(enum pn_file f)
{
	static const char *const names[PN_FILE_COUNT] = {PN_FILE_LIST(PN_FILE_DISK_)};
	return (unsigned)f < PN_FILE_COUNT ? names[f] : "?";
}
enum pn_io_op { PN_IO_READ, PN_IO_WRITE, PN_IO_FSYNC };
enum pn_io_state { PN_IO_FREE, PN_IO_ISSUED, PN_IO_DISPATCHED };

struct pn_io;

/* Why the engine issued an I/O (traces, metrics, and the crash model's event names). */
enum pn_io_why {
	PN_WHY_READ_PAGE,
	PN_WHY_EVICT,
	PN_WHY_CKPT,
	PN_WHY_BGWRITER,
	PN_WHY_EVICT_SOURCE,
	PN_WHY_WAL,
	PN_WHY_CONTROL,
	PN_WHY_SELECTOR,
	PN_WHY_DW,
	PN_WHY_RECOVERY,
	PN_WHY_FSYNC,
	PN_WHY_PS_IMAGE,
	PN_WHY_PS_META,
	PN_WHY_COUNT
};
/* A why's name in traces and crash states ("checkpoint"); "?" out of range. */
static inline const char *pn_io_why_name(enum pn_io_why w)
{
	static const char *const names[PN_WHY_COUNT] = {
		"read",  "evict",    "checkpoint",  "bgwriter",    "evict-source",
		"wal",   "control",  "selector",    "doublewrite", "recovery",
		"fsync", "ps-image", "ps-metadata",
	};
	return (unsigned)w < PN_WHY_COUNT ? names[w] : "?";
}

struct pn_io {
	enum pn_io_op op;
	enum pn_io_state state;
	enum pn_file file;
	enum pn_io_why why;
	uint64_t offset;
	uint32_t len;
	uint8_t *buf;
	/* Late binding (the aio_late_bind mutant only): when set, the environment calls it at
	 * dispatch, with the issuer's ctx (io->ctx, as done gets), and uses the offset it
	 * returns. */
	uint64_t (*bind)(void *ctx, struct pn_io *io);
	/* The issuer's completion, called with its own ctx (its module's struct). */
	void (*done)(void *ctx, struct pn_io *io);
	void *ctx;
	/* A module that issues through another (a checkpoint's write through the buffer pool):
	 * the other's done calls it last, with then_ctx. NULL: none. */
	void (*then)(void *then_ctx, struct pn_io *io);
	void *then_ctx;
	uint32_t index;    /* position in the engine's I/O table */
	uint32_t frame;    /* buffer frame, or UINT32_MAX */
	uint32_t page;     /* logical page, or UINT32_MAX */
	uint32_t slot;     /* physical slot of a data write */
	uint32_t proc;     /* process to wake on completion, or UINT32_MAX */
	uint64_t ckpt_seq; /* checkpoints begun when a data write was issued */
	pn_lsn lsn;        /* WAL: the flush target this write serves; data: page LSN */
	uint32_t aux;      /* per-why detail */
	bool keep;         /* set by a done callback: the engine frees it later itself */
	bool lent;         /* buf is the environment's (pn_env_fast write_buf), not the engine's */
};

/* A summarized read (the extension's read_summary): what a caller that
 * needs only a summary of some bytes asks for instead of the bytes. fn is a pure function of
 * the bytes (len of them) and arg, which stay in the summary by value, so that the same
 * summary can be taken again over other bytes (the checker's derivation, over another crash
 * image). */
#define PN_SUMMARY_ARGS 3u
struct pn_summary_value {
	uint64_t v[2];
};
struct pn_summary {
	struct pn_summary_value (*fn)(const uint8_t *bytes, uint32_t len, const uint64_t *arg);
	uint64_t arg[PN_SUMMARY_ARGS];
};

/*
 * The seam's one optional extension: what a backend can do better than the plain operations
 * say, each with the plain behaviour a caller falls back to when the backend has none (the
 * real-disk backend has none: env.fast NULL). No result may depend on whether a backend
 * fills it: only memory and time do.
 */
struct pn_env_fast {
	/* Memory for the bytes of data write io (not yet issued, its offset bound), which the
	 * environment owns from then on and takes them from at dispatch (the simulator: half a
	 * slot of its device's chunk pool). The engine fills it and reads it
	 * no more. Fallback (NULL, or a NULL return): the engine's own io->buf. */
	uint8_t *(*write_buf)(void *ctx, const struct pn_io *io);
	/* Synchronous summarized read: reads [offset, offset + len) of file into the backend's
	 * own buffer and sets *out to s->fn of those bytes; the caller never sees them (the
	 * simulator logs the read as a summary for the checker's derivation). Fallback:
	 * read_sync into the engine's buffer, then s->fn (pn_svc_read_summary). */
	bool (*read_summary)(void *ctx, enum pn_file file, uint64_t offset, uint32_t len,
			     const struct pn_summary *s, struct pn_summary_value *out);
	/* The life of the WAL file's bytes [offset, offset + len), one segment's slot, as
	 * PostgreSQL's RemoveOldXlogFiles and XLogFileInit see it (wal.c W6). remove: no reader
	 * will need them again (the simulator frees them, and a read of them is a broken
	 * invariant); !remove: a removed slot becomes a new segment that reads as zeros.
	 * Fallback: nothing; the bytes stay in the file, as recycled segments' do. */
	void (*wal_segment)(void *ctx, uint64_t offset, uint64_t len, bool remove);
	/* No one will read the WAL's bytes (the device keeps none of them, and wal_inserted
	 * shows no record to anyone): the engine builds none (wal.c W7); a WAL write's buffer is
	 * then NULL. The simulator's single run only. Fallback (false): the engine builds them. */
	bool wal_unread;
};

struct pn_env {
	void *ctx;
	/* Hands an issued I/O to the world; it calls pn_engine_io_done() later. */
	void (*submit)(void *ctx, struct pn_io *io);
	/* Synchronous read, for recovery's start-up reads (control file, WAL, selector). */
	bool (*read_sync)(void *ctx, enum pn_file file, uint64_t offset, uint32_t len,
			  uint8_t *out);
	/* Now, in nanoseconds (virtual in the simulator). */
	uint64_t (*now_ns)(void *ctx);
	/* Call pn_engine_fire(e, proc, token) after about delay_ns (the world may add jitter). */
	void (*schedule)(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token);
	/* The engine's PRNG stream (workload choices). */
	uint64_t (*random)(void *ctx);
	/* Optional observer: every record as inserted (the checker's oracle reads these). */
	void (*wal_inserted)(void *ctx, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end);
	/* The optional extension, or NULL; it must outlive the engine (the engine keeps the
	 * pointer). Read it through pn_env_fast(). */
	const struct pn_env_fast *fast;
};

/* env's extension, or one with no operation (every caller's fallback) when it has none. */
static inline const struct pn_env_fast *pn_env_fast(const struct pn_env *env)
{
	static const struct pn_env_fast none = {0};
	return env->fast ? env->fast : &none;
}

#endif

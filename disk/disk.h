/*
 * disk.h: the real-disk backend of the engine's seam (disk layer, beside sim/: it depends on
 * pn_engine only). The same engine code as the simulator runs on real files, in real time
 * (FoundationDB's sim2 / Net2 split: the simulator is one backend, this is the other):
 *
 *   submit       an io_uring SQE (or a worker thread's pread / pwrite / fdatasync, aio.h)
 *                on the file enum pn_file names, once fewer than aio.queue_depth are out;
 *   read_sync    pread (recovery's start-up reads);
 *   now_ns       CLOCK_MONOTONIC, from the backend's creation;
 *   schedule     a timer per process, served by the same single-threaded loop that reaps
 *                completions and calls pn_engine_fire / pn_engine_io_done;
 *   random       splitmix64 seeded from the scenario's seed (the workload draws the same
 *                pages in the same order, but real timing decides which client draws them,
 *                so runs are not reproducible: real time is the point of this backend);
 *   wal_inserted forwarded to an observer (the crash test's oracle);
 *   fast         NULL: no extension (env.h pn_env_fast); the engine falls back on read_sync.
 *
 * Files, in one directory (`pn_disk_dir_lock`, then `pn_disk_open`): data, wal, control,
 * selector, doublewrite, pageserver, and the marker PENUMBRA that says penumbra created the
 * directory. The marker's format, byte by byte: the line "penumbra-dir 1\n" (the magic, a
 * space, the directory format's version in decimal, a newline), then free text for a human
 * reader; any other file named PENUMBRA is not ours. Every file is opened relative to the
 * directory's descriptor with O_NOFOLLOW and must be a regular file (a symbolic link named
 * `wal` is refused, never followed). They are opened with
 * O_DIRECT when the filesystem allows it (else buffered, and said so); the data, WAL and
 * doublewrite files are written in full with zeros when formatted, as PostgreSQL zero-fills
 * a WAL segment, so that no later write allocates blocks.
 *
 * Rules:
 *   DK1 A write's bytes are copied into the backend's own aligned buffer when it is
 *      dispatched, as the simulated device applies a write at dispatch: later changes to the
 *      engine's buffer (the WAL ring page being filled) are never on disk by accident.
 *   DK2 At most aio.queue_depth I/Os are dispatched; the rest wait in FIFO order.
 *   DK3 An fsync is fdatasync of the file, dispatched after the writes it must cover have
 *      completed (the engine issues it so); it covers them.
 *   DK4 A commit is handed to the observer (on_ack) only after the engine acknowledged it.
 *   DK5 One penumbra at a time uses a directory: the marker is flock'ed by pn_disk_dir_lock
 *      for the whole command (every bench mode, every crash test run and recovery; a crash
 *      test's child shares its parent's lock), and pn_disk_open requires it held.
 *   DK6 Atomic page writes (bench --atomic, pn_disk_use_atomic): taken only where statx
 *      (STATX_WRITE_ATOMIC, Linux 6.11+) reports for the data file an atomic write unit
 *      range that holds the page size, with O_DIRECT; then every page-sized, page-aligned
 *      write of the data file is sent with RWF_ATOMIC (aio.h A2), so no page can tear.
 *      Elsewhere the request is refused before anything runs.
 */
#ifndef PN_DISK_H
#define PN_DISK_H

#include "aio.h"
#include "engine.h"

#define PN_DISK_MARKER "PENUMBRA"
#define PN_DISK_MARKER_MAGIC "penumbra-dir"
#define PN_DISK_MARKER_VERSION 1

/* DK5: a directory locked for a whole command. */
struct pn_disk_dir {
	char path[512];
	int fd;      /* O_DIRECTORY: the files are opened relative to it (openat, O_NOFOLLOW) */
	int lock_fd; /* the marker, flock'ed */
};

/* Device-level counters (every file, every I/O the backend dispatched). */
struct pn_disk_counters {
	uint64_t writes, write_bytes, reads, read_bytes, fsyncs;
	uint64_t atomic_writes; /* DK6: data page writes sent with RWF_ATOMIC */
	uint64_t file_writes[PN_FILE_COUNT], file_write_bytes[PN_FILE_COUNT],
		file_fsyncs[PN_FILE_COUNT];
};

/* DK6: what statx says of a file's atomic writes. */
struct pn_disk_atomic {
	bool reported;           /* the kernel filled the fields (STATX_WRITE_ATOMIC in stx_mask) */
	bool supported;          /* STATX_ATTR_WRITE_ATOMIC: this file takes RWF_ATOMIC */
	uint32_t unit_min_bytes; /* stx_atomic_write_unit_min, _max: 0 = none */
	uint32_t unit_max_bytes;
};

/* A process's pending wake (one a process: a later one supersedes it). */
struct pn_disk_timer {
	uint64_t at_ns, token;
	bool armed;
};

struct pn_disk {
	struct pn_scenario sc;         /* shallow copy the engine points at (see pn_disk_open) */
	struct pn_engine *e;           /* opaque here: the engine's accessors (engine.h) */
	const struct pn_disk_dir *dir; /* locked by the caller, for longer than d is open */
	int fd[PN_FILE_COUNT];         /* O_DIRECT when the filesystem allows it */
	int bfd[PN_FILE_COUNT];        /* buffered: start-up reads and unaligned I/O */
	bool direct;
	uint32_t align;                    /* O_DIRECT alignment of offsets, lengths and memory */
	bool atomic;                       /* DK6: page writes of the data file with RWF_ATOMIC */
	struct pn_disk_atomic atomic_unit; /* DK6: what statx reported, when atomic */
	struct pn_aio *aio;                /* opened at the first run (after a fork) */
	char method_note[256];
	struct pn_disk_timer *timers; /* one per engine process */
	uint32_t *pending;            /* DK2: I/O indexes waiting for a slot, FIFO */
	uint32_t pending_head, pending_len, inflight, depth;
	uint8_t **bounce; /* DK1: one aligned buffer per engine I/O */
	uint32_t *bounce_cap;
	uint64_t t0_ns, rng;
	struct pn_disk_counters c;
	/* Observers (may be NULL); arg is theirs. */
	void (*on_ack)(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns);
	void (*on_wal)(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end);
	void (*on_tick)(void *arg, uint64_t now_ns); /* about twice a second */
	void *arg;
	uint64_t next_tick_ns;
	char error[PN_ERROR_LEN];
};

/*
 * DK5: locks `path` for a command: creates the directory when absent, and the marker in it
 * when the directory is empty (or with force); refuses a path that is not a directory, a
 * directory holding files but no marker, a marker that is not ours or of another format
 * (unless force: then it is rewritten), a marker that is a symbolic link, and a directory
 * another penumbra holds. Returns false with the reason in err (bad input: exit 2).
 */
bool pn_disk_dir_lock(struct pn_disk_dir *dir, const char *path, bool force, char *err,
		      size_t err_len);
void pn_disk_dir_unlock(struct pn_disk_dir *dir);
/*
 * Opens the files of the locked directory `dir` for scenario sc: fresh = create (or
 * truncate) and format them; else open the files already there (recovery). unbounded: the
 * workload never runs out of transactions (bench, crashtest): `workload.transactions` is
 * ignored and the run is stopped by pn_disk_run's duration or by a signal. Returns false
 * with d->error set.
 */
bool pn_disk_open(struct pn_disk *d, const struct pn_scenario *sc, const struct pn_disk_dir *dir,
		  bool fresh, bool unbounded);
void pn_disk_close(struct pn_disk *d);
/* Runs the started engine until it finishes, or for duration_ns (0: no limit): then the
 * workload stops drawing transactions, the counters are final, and the I/Os in flight are
 * waited for. Returns 0 ok, 1 a violation (pn_engine_violation_of), 2 an I/O error or a stall
 * (d->error). */
int pn_disk_run(struct pn_disk *d, uint64_t duration_ns);
/* Recovery on the files, to its end (the end-of-recovery checkpoint included). */
int pn_disk_recover(struct pn_disk *d);
/* statx of an open file; false (errno) if the call failed. */
bool pn_disk_atomic_probe(int fd, struct pn_disk_atomic *a);
/* Whether writes of page_size bytes may go with RWF_ATOMIC on a file statx described as a
 * (direct: opened O_DIRECT); false with the reason, and what it needs, in why. Pure. */
bool pn_disk_atomic_allows(const struct pn_disk_atomic *a, bool direct, uint32_t page_size,
			   char *why, size_t why_len);
/* DK6: turns atomic page writes on for the opened d; false (d->error: the file, what statx
 * reported, the kernel and what it needs) where they cannot be had. */
bool pn_disk_use_atomic(struct pn_disk *d);
/* The I/O method in use ("io_uring", "worker"), after the first run; NULL before. */
const char *pn_disk_method(const struct pn_disk *d);
/* The backend's clock (the engine's env.now_ns): ns since pn_disk_open. */
uint64_t pn_disk_now_ns(const struct pn_disk *d);

#endif

/*
 * disk.c: the real-disk backend (disk layer). See disk.h for the seam it fills and rules
 * D1-D4. In order: the directory and its files, the seam's functions, dispatch and
 * completion, the loop.
 *
 * The loop, single-threaded (the worker method's threads only run system calls):
 *
 *   +-> reap completions (no wait) --> pn_engine_io_done, dispatch a waiting I/O (D2)
 *   |   fire every process whose timer is due (within SLACK_NS) --> pn_engine_fire
 *   |   submit what was dispatched
 *   +-- nothing happened: wait for a completion, or sleep, until the next timer is due
 *
 * A process has at most one live timer (the engine's wake tokens supersede older ones), so
 * timers are one slot per process, not a heap.
 */
#define _GNU_SOURCE /* O_DIRECT, statx */
#include "disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SLACK_NS 50000ull          /* a timer due this soon fires now */
#define WAIT_MAX_NS 100000000ull   /* wake at least every 100 ms (ticks, deadlines) */
#define TICK_NS 500000000ull
#define ZERO_CHUNK (1u << 20)
#define LOG_CAP 4096u              /* acknowledged-commit log between two drains (D4) */
#define MEM_ALIGN 4096u

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the directory and its files ---- */

bool pn_disk_dir_ok(const char *dir, bool force, char *err, size_t err_len)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return true; /* created when opened */
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s is not a directory (penumbra runs on a directory of files "
			 "it creates; block devices are not supported)", dir);
		return false;
	}
	char marker[600];
	snprintf(marker, sizeof(marker), "%s/%s", dir, PN_DISK_MARKER);
	if (force || access(marker, F_OK) == 0)
		return true;
	DIR *dp = opendir(dir);
	struct dirent *de;
	bool empty = true;
	while (dp && (de = readdir(dp)) != NULL)
		empty &= strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	if (dp)
		closedir(dp);
	if (!empty)
		snprintf(err, err_len, "%s holds files penumbra did not create (no %s marker); "
			 "refusing to overwrite them without --force", dir, PN_DISK_MARKER);
	return empty;
}

static bool fail(struct pn_disk *d, const char *what, const char *name)
{
	snprintf(d->error, sizeof(d->error), "%s %s/%s: %s", what, d->dir, name, strerror(errno));
	return false;
}

static bool make_dir(struct pn_disk *d)
{
	if (mkdir(d->dir, 0755) != 0 && errno != EEXIST)
		return fail(d, "cannot create", "");
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", d->dir, PN_DISK_MARKER);
	FILE *f = fopen(path, "w");
	if (!f)
		return fail(d, "cannot create", PN_DISK_MARKER);
	fputs("penumbra: this directory holds files written by penumbra bench / crashtest;\n"
	      "they may be overwritten by the next run.\n", f);
	fclose(f);
	return true;
}

/* One penumbra at a time in a directory: an exclusive lock on the marker, held while the
 * files are open (a crash test's child shares its parent's). */
static bool lock_dir(struct pn_disk *d)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", d->dir, PN_DISK_MARKER);
	d->lock_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->lock_fd < 0)
		return fail(d, "cannot open", PN_DISK_MARKER);
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return true;
	snprintf(d->error, sizeof(d->error), "%s is in use by another penumbra (its %s is locked)",
		 d->dir, PN_DISK_MARKER);
	return false;
}

static bool open_files(struct pn_disk *d, bool fresh)
{
	int create = fresh ? O_CREAT | O_TRUNC : 0;
	if (!lock_dir(d))
		return false;
	d->direct = true;
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", d->dir, pn_file_disk_name(f));
		d->bfd[f] = open(path, O_RDWR | O_CLOEXEC | create, 0644);
		if (d->bfd[f] < 0)
			return fail(d, "cannot open", pn_file_disk_name(f));
		d->fd[f] = open(path, O_RDWR | O_CLOEXEC | O_DIRECT);
		if (d->fd[f] < 0 && errno == EINVAL) { /* the filesystem has no O_DIRECT */
			d->direct = false;
			d->fd[f] = open(path, O_RDWR | O_CLOEXEC);
		}
		if (d->fd[f] < 0)
			return fail(d, "cannot open", pn_file_disk_name(f));
	}
	struct statx sx;
	d->align = MEM_ALIGN;
	if (statx(d->fd[PN_FILE_DATA], "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align)
		d->align = sx.stx_dio_offset_align;
	return true;
}

/* The bytes each file needs: every slot of every page, the WAL segment ring, the
 * doublewrite area, three selector areas. */
static uint64_t file_size(const struct pn_engine *e, enum pn_file f)
{
	uint64_t end = 0;
	switch (f) {
	case PN_FILE_DATA:
		for (uint32_t p = 0; p < e->pages; p++)
			for (uint32_t s = 0; s < (pn_store_is_slru(e, p) ? 1 : e->generations); s++)
				end = PN_MAX(end, pn_store_offset(e, p, s) + e->page_size);
		return end;
	case PN_FILE_WAL: return (uint64_t)e->wal.nsegs * e->wal.seg_size;
	case PN_FILE_CONTROL: return PN_CONTROL_SIZE;
	case PN_FILE_SELECTOR:
		return e->sc->protocol.mode == PN_MODE_UMBRA ? PN_SELECTOR_AREAS * pn_store_selector_bytes(e) : 0;
	default:
		return e->sc->protocol.mode == PN_MODE_DOUBLEWRITE
			       ? (uint64_t)e->dw_slots * (e->sc->storage.sector_size + e->page_size) : 0;
	}
}

static bool write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return true;
}

static void format_write(void *ctx, enum pn_file f, uint64_t off, const uint8_t *buf, uint32_t len)
{
	struct pn_disk *d = ctx;
	if (!d->error[0] && !write_all(d->bfd[f], buf, len, off))
		fail(d, "cannot write", pn_file_disk_name(f));
}

/* Zero-fills every file to its size, formats, and makes it all durable. */
static bool format(struct pn_disk *d)
{
	uint8_t *zero = calloc(1, ZERO_CHUNK);
	if (!zero)
		return fail(d, "out of memory for", "");
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		uint64_t size = file_size(&d->e, (enum pn_file)f);
		for (uint64_t at = 0; at < size && !d->error[0]; at += ZERO_CHUNK)
			if (!write_all(d->bfd[f], zero, (size_t)PN_MIN((uint64_t)ZERO_CHUNK, size - at), at))
				fail(d, "cannot write", pn_file_disk_name(f));
	}
	free(zero);
	if (d->error[0])
		return false;
	pn_engine_format(&d->e, format_write, d);
	for (int f = 0; f < PN_FILE_COUNT && !d->error[0]; f++)
		if (fdatasync(d->bfd[f]) != 0)
			fail(d, "cannot fdatasync", pn_file_disk_name(f));
	int dfd = open(d->dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return !d->error[0];
}

/* ---- the seam ---- */

static uint64_t env_now(void *ctx) { return mono_ns() - ((struct pn_disk *)ctx)->t0_ns; }

static uint64_t env_random(void *ctx)
{
	struct pn_disk *d = ctx;
	uint64_t z = d->rng += 0x9e3779b97f4a7c15ull; /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void env_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	struct pn_disk *d = ctx;
	d->timers[proc] = (struct pn_disk_timer){env_now(d) + delay_ns, token, true};
}

static bool env_read_sync(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	struct pn_disk *d = ctx;
	ssize_t n = pread(d->bfd[f], out, len, (off_t)off);
	if (n < 0)
		return false;
	memset(out + n, 0, len - (size_t)n); /* past the end of the file reads as zeros */
	return true;
}

static void env_wal_inserted(void *ctx, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	struct pn_disk *d = ctx;
	if (d->on_wal)
		d->on_wal(d->arg, rec, len, start, end);
}

static void dispatch(struct pn_disk *d, struct pn_io *io);

static void env_submit(void *ctx, struct pn_io *io)
{
	struct pn_disk *d = ctx;
	if (d->inflight < d->depth) {
		dispatch(d, io);
		return;
	}
	PN_ASSERT(d->pending_len < d->e.nios);
	d->pending[(d->pending_head + d->pending_len++) % d->e.nios] = io->index;
}

/* ---- dispatch and completion ---- */

static uint8_t *bounce(struct pn_disk *d, uint32_t index, uint32_t len)
{
	if (d->bounce_cap[index] < len) {
		free(d->bounce[index]);
		uint32_t cap = PN_MAX(len, 2 * d->e.page_size);
		if (posix_memalign((void **)&d->bounce[index], MEM_ALIGN, cap) != 0)
			PN_ASSERT(!"out of memory for an I/O buffer");
		d->bounce_cap[index] = cap;
	}
	return d->bounce[index];
}

static void dispatch(struct pn_disk *d, struct pn_io *io)
{
	PN_ASSERT(io->state == PN_IO_ISSUED && d->inflight < d->depth);
	io->state = PN_IO_DISPATCHED;
	if (io->bind)
		io->offset = io->bind(&d->e, io);
	d->inflight++;
	if (io->op == PN_IO_FSYNC) { /* D3 */
		d->c.fsyncs++;
		d->c.file_fsyncs[io->file]++;
		pn_aio_prep(d->aio, PN_AIO_FDATASYNC, d->fd[io->file], NULL, 0, 0, io->index);
		return;
	}
	uint8_t *buf = bounce(d, io->index, io->len);
	bool aligned = d->direct && io->offset % d->align == 0 && io->len % d->align == 0;
	int fd = aligned ? d->fd[io->file] : d->bfd[io->file];
	if (io->op == PN_IO_WRITE) {
		memcpy(buf, io->buf, io->len); /* D1 */
		d->c.writes++;
		d->c.write_bytes += io->len;
		d->c.file_writes[io->file]++;
		d->c.file_write_bytes[io->file] += io->len;
	} else {
		d->c.reads++;
		d->c.read_bytes += io->len;
	}
	pn_aio_prep(d->aio, io->op == PN_IO_WRITE ? PN_AIO_WRITE : PN_AIO_READ, fd, buf, io->len,
		    io->offset, io->index);
}

/* D4: hands the commits the engine acknowledged to the observer, and empties its log. */
static void drain_acks(struct pn_disk *d)
{
	struct pn_engine *e = &d->e;
	for (uint64_t i = 0; i < e->nacked && d->on_ack; i++)
		d->on_ack(d->arg, e->acked_xids[i], e->acked_lsns[i], i < e->nlat ? e->latencies[i] : 0);
	e->nacked = 0;
	e->nlat = 0;
}

static bool complete(struct pn_disk *d, const struct pn_aio_done *c)
{
	struct pn_io *io = &d->e.ios[c->tag];
	int64_t want = io->op == PN_IO_FSYNC ? 0 : io->len;
	d->inflight--;
	if (d->error[0])
		return false; /* an earlier I/O failed: only counted, so that close can wait */
	if (c->res != want) {
		static const char *ops[] = {"read", "write", "fdatasync"};
		snprintf(d->error, sizeof(d->error), "%s of %u bytes at offset %llu of %s/%s: %s",
			 ops[io->op], io->len, (unsigned long long)io->offset, d->dir,
			 pn_file_disk_name(io->file), c->res < 0 ? strerror((int)-c->res) : "short transfer");
		return false;
	}
	if (io->op == PN_IO_READ)
		memcpy(io->buf, d->bounce[c->tag], io->len);
	if (d->pending_len) {
		uint32_t next = d->pending[d->pending_head];
		d->pending_head = (d->pending_head + 1) % d->e.nios;
		d->pending_len--;
		dispatch(d, &d->e.ios[next]);
	}
	pn_engine_io_done(&d->e, io);
	drain_acks(d);
	return true;
}

/* ---- the loop ---- */

static int reap(struct pn_disk *d, uint64_t wait_ns, uint32_t *count)
{
	struct pn_aio_done done[64];
	uint32_t n = pn_aio_reap(d->aio, done, 64, wait_ns);
	bool ok = true;
	for (uint32_t i = 0; i < n; i++) /* every one, even after a failure (inflight) */
		ok &= complete(d, &done[i]);
	*count = n;
	return ok ? 0 : 2;
}

/* Fires every process whose timer is due by `limit`, starting at a rotating one. */
static uint32_t fire_due(struct pn_disk *d, uint64_t limit, uint32_t start)
{
	uint32_t fired = 0;
	for (uint32_t k = 0; k < d->e.nprocs && !d->e.failed; k++) {
		uint32_t proc = (start + k) % d->e.nprocs;
		struct pn_disk_timer *t = &d->timers[proc];
		if (!t->armed || t->at_ns > limit)
			continue;
		t->armed = false;
		pn_engine_fire(&d->e, proc, t->token);
		drain_acks(d);
		fired++;
	}
	return fired;
}

static uint64_t next_timer(const struct pn_disk *d)
{
	uint64_t next = UINT64_MAX;
	for (uint32_t i = 0; i < d->e.nprocs; i++)
		if (d->timers[i].armed)
			next = PN_MIN(next, d->timers[i].at_ns);
	return next;
}

static int submit(struct pn_disk *d)
{
	int err = 0;
	if (pn_aio_submit(d->aio, &err))
		return 0;
	snprintf(d->error, sizeof(d->error), "%s submit: %s", pn_aio_method_name(pn_aio_method_of(d->aio)),
		 strerror(-err));
	return 2;
}

/* Waits, when nothing was ready, until a completion or the next timer. */
static int idle(struct pn_disk *d, uint64_t now, uint64_t deadline)
{
	uint64_t next = next_timer(d);
	if (next == UINT64_MAX && d->inflight == 0) {
		snprintf(d->error, sizeof(d->error),
			 "the engine is not finished but waits for no timer and no I/O (a stall)");
		return 2;
	}
	uint64_t wait = next > now + SLACK_NS ? next - now - SLACK_NS : 0;
	wait = PN_MIN(wait, WAIT_MAX_NS);
	if (deadline)
		wait = PN_MIN(wait, deadline > now ? deadline - now : 0);
	if (wait == 0)
		return 0;
	if (d->inflight) {
		uint32_t n;
		return reap(d, wait, &n);
	}
	struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
	nanosleep(&ts, NULL);
	return 0;
}

/* After a duration: no more dispatches; wait for the I/Os in flight, then stop. */
static void quiesce(struct pn_disk *d)
{
	struct pn_aio_done done[64];
	int err;
	d->pending_len = 0;
	if (!pn_aio_submit(d->aio, &err))
		return; /* what was prepared never reached the kernel */
	while (d->inflight)
		d->inflight -= pn_aio_reap(d->aio, done, 64, WAIT_MAX_NS);
}

static int loop(struct pn_disk *d, uint64_t deadline)
{
	for (uint32_t turn = 0;; turn++) {
		if (d->e.failed)
			return 1;
		uint64_t now = env_now(d);
		if (deadline && now >= deadline) {
			quiesce(d);
			return 0;
		}
		if (pn_engine_finished(&d->e))
			return 0;
		if (d->on_tick && now >= d->next_tick_ns) {
			d->next_tick_ns = now + TICK_NS;
			d->on_tick(d->arg, now);
		}
		uint32_t reaped;
		if (reap(d, 0, &reaped) != 0)
			return 2;
		uint32_t fired = fire_due(d, now + SLACK_NS, turn % d->e.nprocs);
		if (submit(d) != 0)
			return 2;
		if (!reaped && !fired && !d->e.failed && idle(d, now, deadline) != 0)
			return 2;
	}
}

static bool open_aio(struct pn_disk *d)
{
	if (d->aio)
		return true;
	d->aio = pn_aio_open(d->depth, d->method_note, sizeof(d->method_note));
	if (!d->aio) {
		snprintf(d->error, sizeof(d->error), "no I/O method: %s", d->method_note);
		return false;
	}
	if (pn_aio_method_of(d->aio) != PN_AIO_URING) /* said once per run, on stderr */
		fprintf(stderr, "penumbra: not using io_uring: %s\n", d->method_note);
	return true;
}

int pn_disk_run(struct pn_disk *d, uint64_t duration_ns)
{
	if (!open_aio(d))
		return 2;
	return loop(d, duration_ns ? env_now(d) + duration_ns : 0);
}

int pn_disk_recover(struct pn_disk *d)
{
	if (!open_aio(d))
		return 2;
	if (!pn_recovery_begin(&d->e))
		return 1;
	return loop(d, 0);
}

const char *pn_disk_method(const struct pn_disk *d)
{
	return d->aio ? pn_aio_method_name(pn_aio_method_of(d->aio)) : NULL;
}

/* ---- open and close ---- */

static bool alloc_state(struct pn_disk *d)
{
	uint32_t n = d->e.nios;
	d->timers = calloc(d->e.nprocs, sizeof(*d->timers));
	d->pending = calloc(n, sizeof(uint32_t));
	d->bounce = calloc(n, sizeof(uint8_t *));
	d->bounce_cap = calloc(n, sizeof(uint32_t));
	if (d->timers && d->pending && d->bounce && d->bounce_cap)
		return true;
	snprintf(d->error, sizeof(d->error), "out of memory");
	return false;
}

bool pn_disk_open(struct pn_disk *d, const struct pn_scenario *sc, const char *dir, bool fresh,
		  bool force, bool unbounded)
{
	memset(d, 0, sizeof(*d));
	for (int f = 0; f < PN_FILE_COUNT; f++)
		d->fd[f] = d->bfd[f] = -1;
	d->lock_fd = -1;
	d->sc = *sc;
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	if (fresh && (!pn_disk_dir_ok(dir, force, d->error, sizeof(d->error)) || !make_dir(d)))
		return false;
	if (unbounded) /* the log is drained at every event (D4): a small one is enough */
		d->sc.workload.transactions = LOG_CAP;
	struct pn_env env = {
		.ctx = d, .submit = env_submit, .read_sync = env_read_sync, .now_ns = env_now,
		.schedule = env_schedule, .random = env_random, .wal_inserted = env_wal_inserted,
	};
	d->t0_ns = mono_ns();
	d->engine_init = true;
	if (!pn_engine_init(&d->e, &d->sc, &env, fresh)) {
		snprintf(d->error, sizeof(d->error), "%s", d->e.error);
		return false;
	}
	if (unbounded)
		d->sc.workload.transactions = UINT64_MAX;
	d->depth = PN_MAX(1u, d->sc.aio.queue_depth);
	d->rng = sc->seed;
	if (!alloc_state(d) || !open_files(d, fresh) || (fresh && !format(d)))
		return false;
	d->t0_ns = mono_ns();
	return true;
}

void pn_disk_close(struct pn_disk *d)
{
	if (d->aio && d->inflight)
		quiesce(d);
	pn_aio_close(d->aio);
	d->aio = NULL;
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		if (d->fd[f] >= 0)
			close(d->fd[f]);
		if (d->bfd[f] >= 0)
			close(d->bfd[f]);
	}
	for (uint32_t i = 0; d->bounce && i < d->e.nios; i++)
		free(d->bounce[i]);
	if (d->engine_init)
		pn_engine_free(&d->e);
	free(d->bounce);
	free(d->bounce_cap);
	free(d->timers);
	free(d->pending);
}

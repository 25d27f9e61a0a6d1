/*
 * disk.c: the real-disk backend (disk layer). See disk.h for the seam it fills and rules
 * DK1-DK5. In order: the directory (its marker and lock) and its files, the seam's functions, dispatch and
 * completion, the loop.
 *
 * The loop, single-threaded (the worker method's threads only run system calls):
 *
 *   +-> reap completions (no wait) --> pn_engine_io_done, dispatch a waiting I/O (DK2)
 *   |   fire every process whose timer is due (within SLACK_NS) --> pn_engine_fire
 *   |   submit what was dispatched
 *   +-- nothing happened: wait for a completion, or sleep, until the next timer is due
 *
 * A process has at most one live timer (the engine's wake tokens supersede older ones), so
 * timers are one slot per process, not a heap.
 */
#define _GNU_SOURCE /* O_DIRECT, statx */
#include "disk.h"
#include "protocols.h"
#include "workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define SLACK_NS 50000ull        /* a timer due this soon fires now */
#define WAIT_MAX_NS 100000000ull /* wake at least every 100 ms (ticks, deadlines) */
#define TICK_NS 500000000ull
#define ZERO_CHUNK (1u << 20)
#define LOG_CAP 4096u /* acknowledged-commit log between two drains (DK4) */
#define MEM_ALIGN 4096u

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the directory and its files ---- */

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

static bool dir_fail(char *err, size_t err_len, const char *dir, const char *what)
{
	snprintf(err, err_len, "%s %s: %s", what, dir, strerror(errno));
	return false;
}

/* Whether the directory (open as dfd) holds nothing but "." and "..". */
static bool dir_empty(int dfd)
{
	int fd = dup(dfd);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	bool empty = true;
	if (!dp) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	rewinddir(dp);
	while ((de = readdir(dp)) != NULL)
		empty &= strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(dp);
	return empty;
}

/* The marker's format (disk.h): its header line, then a sentence for a reader. */
static bool marker_write(int fd)
{
	char text[256];
	int n = snprintf(text, sizeof(text), "%s %d\n%s", PN_DISK_MARKER_MAGIC,
			 PN_DISK_MARKER_VERSION,
			 "This directory holds files written by penumbra bench / crashtest;\n"
			 "the next run may overwrite them.\n");
	return ftruncate(fd, 0) == 0 && write_all(fd, (const uint8_t *)text, (size_t)n, 0) &&
	       fdatasync(fd) == 0;
}

/* Whether fd holds our marker header at our version; else why not, in err. */
static bool marker_ours(int fd, const char *dir, char *err, size_t err_len)
{
	char head[64] = "";
	size_t magic_len = strlen(PN_DISK_MARKER_MAGIC);
	ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
	char *end;
	long version;
	if (n < 0)
		return dir_fail(err, err_len, dir, "cannot read the marker of");
	head[n] = '\0';
	if (strncmp(head, PN_DISK_MARKER_MAGIC " ", magic_len + 1) != 0) {
		snprintf(err, err_len,
			 "%s/%s is not penumbra's marker (it does not begin '%s %d'); "
			 "refusing to overwrite the directory without --force",
			 dir, PN_DISK_MARKER, PN_DISK_MARKER_MAGIC, PN_DISK_MARKER_VERSION);
		return false;
	}
	version = strtol(head + magic_len + 1, &end, 10);
	if (version != PN_DISK_MARKER_VERSION || *end != '\n') {
		snprintf(err, err_len,
			 "%s/%s is of directory format '%.*s'; this penumbra writes "
			 "format %d (use --force to overwrite it)",
			 dir, PN_DISK_MARKER, (int)strcspn(head + magic_len + 1, "\n"),
			 head + magic_len + 1, PN_DISK_MARKER_VERSION);
		return false;
	}
	return true;
}

/* Opens (or creates, in a directory penumbra may use) the marker; -1 with err. */
static int marker_open(int dfd, const char *dir, bool force, bool *created, char *err,
		       size_t err_len)
{
	int fd = openat(dfd, PN_DISK_MARKER, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	*created = false;
	if (fd < 0 && errno == ENOENT) {
		if (!force && !dir_empty(dfd)) {
			snprintf(err, err_len,
				 "%s holds files penumbra did not create (no %s marker); "
				 "refusing to overwrite them without --force",
				 dir, PN_DISK_MARKER);
			return -1;
		}
		fd = openat(dfd, PN_DISK_MARKER, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_CREAT | O_EXCL,
			    0644);
		*created = fd >= 0;
		if (fd < 0 && errno == EEXIST) /* another penumbra made it: its lock decides */
			fd = openat(dfd, PN_DISK_MARKER, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0 && errno == ELOOP)
		snprintf(err, err_len, "%s/%s is a symbolic link; refusing to follow it", dir,
			 PN_DISK_MARKER);
	else if (fd < 0)
		dir_fail(err, err_len, dir, "cannot open the marker of");
	return fd;
}

bool pn_disk_dir_lock(struct pn_disk_dir *dd, const char *dir, bool force, char *err,
		      size_t err_len)
{
	struct stat st;
	bool created;

	dd->fd = dd->lock_fd = -1;
	snprintf(dd->path, sizeof(dd->path), "%s", dir);
	if (stat(dir, &st) != 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
		return dir_fail(err, err_len, dir, "cannot create");
	dd->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dd->fd < 0 && errno == ENOTDIR)
		snprintf(err, err_len,
			 "%s is not a directory (penumbra runs on a directory of "
			 "files it creates; block devices are not supported)",
			 dir);
	else if (dd->fd < 0)
		dir_fail(err, err_len, dir, "cannot open");
	if (dd->fd < 0)
		return false;
	dd->lock_fd = marker_open(dd->fd, dir, force, &created, err, err_len);
	if (dd->lock_fd < 0)
		goto refused;
	if (flock(dd->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, err_len, "%s is in use by another penumbra (its %s is locked)", dir,
			 PN_DISK_MARKER);
		goto refused;
	}
	if (!created && !marker_ours(dd->lock_fd, dir, err, err_len) && !force)
		goto refused;
	if ((created || force) && !marker_write(dd->lock_fd)) {
		dir_fail(err, err_len, dir, "cannot write the marker of");
		goto refused;
	}
	PN_ASSERT(dd->fd >= 0 && dd->lock_fd >= 0);
	return true;
refused:
	pn_disk_dir_unlock(dd);
	return false;
}

void pn_disk_dir_unlock(struct pn_disk_dir *dd)
{
	if (dd->lock_fd >= 0)
		close(dd->lock_fd); /* the last descriptor of the lock: flock is released */
	if (dd->fd >= 0)
		close(dd->fd);
	dd->fd = dd->lock_fd = -1;
}

static bool fail(struct pn_disk *d, const char *what, const char *name)
{
	snprintf(d->error, sizeof(d->error), "%s %s/%s: %s", what, d->dir->path, name,
		 strerror(errno));
	return false;
}

/* Opens one of the files in the locked directory, never through a symbolic link and never
 * anything but a regular file (a FIFO or a device named `wal` is refused). */
static int open_file(struct pn_disk *d, const char *name, int flags)
{
	struct stat st;
	int fd = openat(d->dir->fd, name, flags | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno == ELOOP) {
		snprintf(d->error, sizeof(d->error),
			 "%s/%s is a symbolic link; refusing to follow it", d->dir->path, name);
		return -1;
	}
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		snprintf(d->error, sizeof(d->error),
			 "%s/%s is not a regular file; refusing to use it", d->dir->path, name);
		return -1;
	}
	return fd;
}

static bool open_files(struct pn_disk *d, bool fresh)
{
	d->direct = true;
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		char name[64];
		snprintf(name, sizeof(name), "%s", pn_file_disk_name(f));
		/* the first open does the checks (O_NOFOLLOW, a regular file) before any O_TRUNC;
		 * O_NONBLOCK: the open of a FIFO never waits */
		d->bfd[f] = open_file(d, name, O_NONBLOCK | (fresh ? O_CREAT : 0));
		if (d->bfd[f] < 0)
			return d->error[0] ? false : fail(d, "cannot open", name);
		if (fcntl(d->bfd[f], F_SETFL, 0) != 0 || (fresh && ftruncate(d->bfd[f], 0) != 0))
			return fail(d, "cannot open", name);
		d->fd[f] = open_file(d, name, O_DIRECT);
		if (d->fd[f] < 0 && errno == EINVAL && !d->error[0]) { /* no O_DIRECT here */
			d->direct = false;
			d->fd[f] = open_file(d, name, 0);
		}
		if (d->fd[f] < 0)
			return d->error[0] ? false : fail(d, "cannot open", name);
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
static void format_write(void *ctx, enum pn_file f, uint64_t off, const uint8_t *buf, uint32_t len)
{
	struct pn_disk *d = ctx;
	if (!d->error[0] && !write_all(d->bfd[f], buf, len, off))
		fail(d, "cannot write", pn_file_disk_name(f));
}

/*
 * Before a fresh directory's files are created: the bytes they need (pn_engine_file_size,
 * written out in full by format) against the space free in the directory's file system
 * (fstatvfs, the blocks an unprivileged writer may use), plus what the files there now hold (truncated
 * first), less a margin of DISK_MARGIN: a scenario that would fill the disk is refused before
 * anything is written.
 */
#define DISK_MARGIN (64ull << 20)

static bool room_for_files(struct pn_disk *d)
{
	struct statvfs vfs;
	struct stat st;
	uint64_t need = 0, reclaim = 0;
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		uint64_t size = pn_engine_file_size(d->e, (enum pn_file)f);
		need = size > UINT64_MAX - need ? UINT64_MAX : need + size;
		if (fstatat(d->dir->fd, pn_file_disk_name(f), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			reclaim += (uint64_t)st.st_blocks * 512u;
	}
	if (fstatvfs(d->dir->fd, &vfs) != 0)
		return true; /* no figure: the writes themselves will say */
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize + reclaim;
	if (need <= avail && avail - need >= DISK_MARGIN)
		return true;
	snprintf(d->error, sizeof(d->error),
		 "%s: the files of this scenario need %llu bytes (%.1f GiB: %.1f GiB of WAL ring, "
		 "checkpoint.max_wal_size; %.1f GiB of pages), but its file system has %llu bytes "
		 "(%.1f GiB) free, and %llu MiB is kept free; lower checkpoint.max_wal_size or "
		 "storage.pages, or use a --path with more room",
		 d->dir->path, (unsigned long long)need, (double)need / (1u << 30),
		 (double)pn_engine_file_size(d->e, PN_FILE_WAL) / (1u << 30),
		 (double)pn_engine_file_size(d->e, PN_FILE_DATA) / (1u << 30),
		 (unsigned long long)avail, (double)avail / (1u << 30), DISK_MARGIN >> 20);
	return false;
}

/* Zero-fills every file to its size, formats, and makes it all durable. */
static bool format(struct pn_disk *d)
{
	uint8_t *zero = calloc(1, ZERO_CHUNK);
	if (!zero)
		return fail(d, "out of memory for", "");
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		uint64_t size = pn_engine_file_size(d->e, (enum pn_file)f);
		for (uint64_t at = 0; at < size && !d->error[0]; at += ZERO_CHUNK)
			if (!write_all(d->bfd[f], zero,
				       (size_t)PN_MIN((uint64_t)ZERO_CHUNK, size - at), at))
				fail(d, "cannot write", pn_file_disk_name(f));
	}
	free(zero);
	if (d->error[0])
		return false;
	pn_engine_format(d->e, format_write, d);
	for (int f = 0; f < PN_FILE_COUNT && !d->error[0]; f++)
		if (fdatasync(d->bfd[f]) != 0)
			fail(d, "cannot fdatasync", pn_file_disk_name(f));
	fsync(d->dir->fd); /* the files' names are durable too */
	return !d->error[0];
}

/* ---- the seam ---- */

uint64_t pn_disk_now_ns(const struct pn_disk *d) { return mono_ns() - d->t0_ns; }

static uint64_t env_now(void *ctx) { return pn_disk_now_ns(ctx); }

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
	PN_ASSERT(d->pending_len < pn_engine_io_count(d->e));
	d->pending[(d->pending_head + d->pending_len++) % pn_engine_io_count(d->e)] = io->index;
}

/* ---- dispatch and completion ---- */

static uint8_t *bounce(struct pn_disk *d, uint32_t index, uint32_t len)
{
	if (d->bounce_cap[index] < len) {
		free(d->bounce[index]);
		uint32_t cap = PN_MAX(len, 2 * pn_engine_geometry(d->e).page_size);
		if (posix_memalign((void **)&d->bounce[index], MEM_ALIGN, cap) != 0)
			PN_ASSERT(!"out of memory for an I/O buffer");
		d->bounce_cap[index] = cap;
	}
	return d->bounce[index];
}

static void dispatch(struct pn_disk *d, struct pn_io *io)
{
	PN_ASSERT(io->state == PN_IO_ISSUED && d->inflight < d->depth);
	pn_io_dispatched(io);
	if (io->bind)
		io->offset = io->bind(io->ctx, io);
	d->inflight++;
	if (io->op == PN_IO_FSYNC) { /* DK3 */
		d->c.fsyncs++;
		d->c.file_fsyncs[io->file]++;
		pn_aio_prep(d->aio, PN_AIO_FDATASYNC, d->fd[io->file], NULL, 0, 0, io->index);
		return;
	}
	uint8_t *buf = bounce(d, io->index, io->len);
	bool aligned = d->direct && io->offset % d->align == 0 && io->len % d->align == 0;
	int fd = aligned ? d->fd[io->file] : d->bfd[io->file];
	if (io->op == PN_IO_WRITE) {
		memcpy(buf, io->buf, io->len); /* DK1 */
		d->c.writes++;
		d->c.write_bytes += io->len;
		d->c.file_writes[io->file]++;
		d->c.file_write_bytes[io->file] += io->len;
	} else {
		d->c.reads++;
		d->c.read_bytes += io->len;
	}
	enum pn_aio_op op = io->op == PN_IO_WRITE ? PN_AIO_WRITE : PN_AIO_READ;
	if (d->atomic && op == PN_AIO_WRITE && aligned && io->file == PN_FILE_DATA &&
	    io->len == pn_engine_geometry(d->e).page_size && io->offset % io->len == 0) { /* DK6 */
		op = PN_AIO_WRITE_ATOMIC;
		d->c.atomic_writes++;
	}
	pn_aio_prep(d->aio, op, fd, buf, io->len, io->offset, io->index);
}

/* DK4: hands the commits the engine acknowledged to the observer, and empties its log. */
static void drain_acks(struct pn_disk *d) { pn_engine_drain_acks(d->e, d->on_ack, d->arg); }

static bool complete(struct pn_disk *d, const struct pn_aio_done *c)
{
	struct pn_io *io = pn_engine_io(d->e, c->tag);
	int64_t want = io->op == PN_IO_FSYNC ? 0 : io->len;
	d->inflight--;
	if (d->error[0])
		return false; /* an earlier I/O failed: only counted, so that close can wait */
	if (c->res != want) {
		static const char *ops[] = {"read", "write", "fdatasync"};
		snprintf(d->error, sizeof(d->error), "%s of %u bytes at offset %llu of %s/%s: %s",
			 ops[io->op], io->len, (unsigned long long)io->offset, d->dir->path,
			 pn_file_disk_name(io->file),
			 c->res < 0 ? strerror((int)-c->res) : "short transfer");
		return false;
	}
	if (io->op == PN_IO_READ)
		memcpy(io->buf, d->bounce[c->tag], io->len);
	if (d->pending_len) {
		uint32_t next = d->pending[d->pending_head];
		d->pending_head = (d->pending_head + 1) % pn_engine_io_count(d->e);
		d->pending_len--;
		dispatch(d, pn_engine_io(d->e, next));
	}
	pn_engine_io_done(d->e, io);
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
	uint32_t nprocs = pn_engine_proc_count(d->e);
	for (uint32_t k = 0; k < nprocs && !pn_engine_failed(d->e); k++) {
		uint32_t proc = (start + k) % nprocs;
		struct pn_disk_timer *t = &d->timers[proc];
		if (!t->armed || t->at_ns > limit)
			continue;
		t->armed = false;
		pn_engine_fire(d->e, proc, t->token);
		drain_acks(d);
		fired++;
	}
	return fired;
}

static uint64_t next_timer(const struct pn_disk *d)
{
	uint64_t next = UINT64_MAX;
	for (uint32_t i = 0; i < pn_engine_proc_count(d->e); i++)
		if (d->timers[i].armed)
			next = PN_MIN(next, d->timers[i].at_ns);
	return next;
}

static int submit(struct pn_disk *d)
{
	int err = 0;
	if (pn_aio_submit(d->aio, &err))
		return 0;
	snprintf(d->error, sizeof(d->error), "%s submit: %s",
		 pn_aio_method_name(pn_aio_method_of(d->aio)), strerror(-err));
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
		if (pn_engine_failed(d->e))
			return 1;
		uint64_t now = env_now(d);
		if (deadline && now >= deadline) {
			quiesce(d);
			return 0;
		}
		if (pn_engine_finished(d->e))
			return 0;
		if (d->on_tick && now >= d->next_tick_ns) {
			d->next_tick_ns = now + TICK_NS;
			d->on_tick(d->arg, now);
		}
		uint32_t reaped;
		if (reap(d, 0, &reaped) != 0)
			return 2;
		uint32_t fired = fire_due(d, now + SLACK_NS, turn % pn_engine_proc_count(d->e));
		if (submit(d) != 0)
			return 2;
		if (!reaped && !fired && !pn_engine_failed(d->e) && idle(d, now, deadline) != 0)
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
	if (!pn_engine_recover(d->e))
		return 1;
	return loop(d, 0);
}

const char *pn_disk_method(const struct pn_disk *d)
{
	return d->aio ? pn_aio_method_name(pn_aio_method_of(d->aio)) : NULL;
}

/* ---- atomic writes (DK6) ---- */

/*
 * statx's atomic write fields (the kernel's UAPI, Linux 6.11). Debian 12's headers
 * (linux-libc-dev 6.1, glibc 2.36) stop at stx_dio_offset_align, so the constants and the
 * layout of struct statx up to the fields used are written out here; the kernel says at run
 * time whether it filled them (stx_mask), and an older kernel leaves them zero.
 */
#ifndef STATX_WRITE_ATOMIC
#define STATX_WRITE_ATOMIC 0x00010000U
#endif
#ifndef STATX_ATTR_WRITE_ATOMIC
#define STATX_ATTR_WRITE_ATOMIC 0x00400000ULL
#endif
struct statx_atomic {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint8_t other[0xa8 - 0x10]; /* nlink .. stx_subvol */
	uint32_t unit_min, unit_max, segments_max;
	uint8_t spare[0x100 - 0xb4];
};
_Static_assert(offsetof(struct statx_atomic, unit_min) == 0xa8, "stx_atomic_write_unit_min");
_Static_assert(sizeof(struct statx_atomic) == 0x100, "struct statx is 256 bytes");

bool pn_disk_atomic_probe(int fd, struct pn_disk_atomic *a)
{
	struct statx_atomic sx;
	memset(&sx, 0, sizeof sx);
	memset(a, 0, sizeof *a);
	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_WRITE_ATOMIC, &sx) != 0)
		return false;
	a->reported = (sx.mask & STATX_WRITE_ATOMIC) != 0;
	a->supported = a->reported && (sx.attributes & STATX_ATTR_WRITE_ATOMIC) != 0;
	a->unit_min_bytes = a->reported ? sx.unit_min : 0;
	a->unit_max_bytes = a->reported ? sx.unit_max : 0;
	return true;
}

bool pn_disk_atomic_allows(const struct pn_disk_atomic *a, bool direct, uint32_t page_size,
			   char *why, size_t why_len)
{
	static const char needs[] =
		"RWF_ATOMIC needs Linux 6.11 or later, a block device that writes atomically "
		"(NVMe, SCSI) and, for a file, ext4 or XFS on Linux 6.13 or later, with O_DIRECT";
	if (!direct)
		snprintf(why, why_len, "the file system refuses O_DIRECT; %s", needs);
	else if (!a->reported)
		snprintf(why, why_len,
			 "statx reports no atomic write unit (STATX_WRITE_ATOMIC not in stx_mask: "
			 "the kernel predates it, or the file system does not report it); %s",
			 needs);
	else if (!a->supported || a->unit_max_bytes == 0)
		snprintf(why, why_len,
			 "statx reports no atomic write unit (stx_atomic_write_unit_max 0: the "
			 "device or file system cannot write atomically); %s",
			 needs);
	else if (page_size < a->unit_min_bytes || page_size > a->unit_max_bytes)
		snprintf(why, why_len,
			 "statx reports atomic write units of %u to %u bytes, which do not hold "
			 "the %u-byte page; %s",
			 a->unit_min_bytes, a->unit_max_bytes, page_size, needs);
	else
		return true;
	return false;
}

bool pn_disk_use_atomic(struct pn_disk *d)
{
	struct pn_disk_atomic a;
	struct utsname un;
	char why[400];
	uint32_t page = pn_engine_geometry(d->e).page_size;
	const char *name = pn_file_disk_name(PN_FILE_DATA);
	if (!pn_disk_atomic_probe(d->fd[PN_FILE_DATA], &a)) {
		snprintf(d->error, sizeof(d->error), "--atomic: %s/%s: statx failed: %s",
			 d->dir->path, name, strerror(errno));
		return false;
	}
	if (!pn_disk_atomic_allows(&a, d->direct, page, why, sizeof why)) {
		if (uname(&un) != 0)
			snprintf(un.release, sizeof un.release, "unknown");
		snprintf(
			d->error, sizeof(d->error),
			"--atomic: %.400s/%s: %.400s (this kernel: Linux %.64s); run without --atomic",
			d->dir->path, name, why, un.release);
		return false;
	}
	d->atomic = true;
	d->atomic_unit = a;
	return true;
}

/* ---- open and close ---- */

static bool alloc_state(struct pn_disk *d)
{
	uint32_t n = pn_engine_io_count(d->e);
	d->timers = calloc(pn_engine_proc_count(d->e), sizeof(*d->timers));
	d->pending = calloc(n, sizeof(uint32_t));
	d->bounce = calloc(n, sizeof(uint8_t *));
	d->bounce_cap = calloc(n, sizeof(uint32_t));
	if (d->timers && d->pending && d->bounce && d->bounce_cap)
		return true;
	snprintf(d->error, sizeof(d->error), "out of memory");
	return false;
}

bool pn_disk_open(struct pn_disk *d, const struct pn_scenario *sc, const struct pn_disk_dir *dir,
		  bool fresh, bool unbounded)
{
	PN_ASSERT(dir->fd >= 0 && dir->lock_fd >= 0); /* DK5: the caller holds the lock */
	memset(d, 0, sizeof(*d));
	for (int f = 0; f < PN_FILE_COUNT; f++)
		d->fd[f] = d->bfd[f] = -1;
	d->sc = *sc;
	d->dir = dir;
	if (unbounded) /* the log is drained at every event (DK4): a small one is enough */
		d->sc.workload.transactions = LOG_CAP;
	struct pn_env env = {
		.ctx = d,
		.submit = env_submit,
		.read_sync = env_read_sync,
		.now_ns = env_now,
		.schedule = env_schedule,
		.random = env_random,
		.wal_inserted = env_wal_inserted,
	};
	d->t0_ns = mono_ns();
	d->e = pn_engine_new(); /* pn_disk_close deletes it, whatever happens below */
	if (!pn_engine_init(d->e, &d->sc, &env, fresh, pn_workload_of(&d->sc),
			    pn_protocol_of(&d->sc))) {
		snprintf(d->error, sizeof(d->error), "%s", pn_engine_error(d->e));
		return false;
	}
	if (unbounded)
		d->sc.workload.transactions = UINT64_MAX;
	d->depth = PN_MAX(1u, d->sc.aio.queue_depth);
	d->rng = sc->seed;
	if (!alloc_state(d) || (fresh && !room_for_files(d)) || !open_files(d, fresh) ||
	    (fresh && !format(d)))
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
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		if (d->fd[f] >= 0)
			close(d->fd[f]);
		if (d->bfd[f] >= 0)
			close(d->bfd[f]);
	}
	for (uint32_t i = 0; d->bounce && i < pn_engine_io_count(d->e); i++)
		free(d->bounce[i]);
	pn_engine_delete(d->e);
	free(d->bounce);
	free(d->bounce_cap);
	free(d->timers);
	free(d->pending);
}

/*
 * record.c: libpn_record.so, the recorder (pgcrash layer; docs/pgcrash.md section 1).
 *
 * Loaded with LD_PRELOAD into the PostgreSQL server (the postmaster and every process it
 * forks), it wraps the libc entry points PostgreSQL 15 calls to change files (found with
 * `nm -D postgres`: open, pwrite, pwritev, write, fsync, fdatasync, sync_file_range,
 * ftruncate, truncate, posix_fallocate, rename, link, unlink, mkdir, rmdir, fopen/fclose)
 * and appends a record (oplog.h) for each one on a path under PN_RECORD_DIR to the log
 * PN_RECORD_LOG. Unset, it records nothing.
 *   RC1 One order: the log's fcntl() write lock is held from before the operation until its
 *      record is written (fcntl locks belong to a process, so forked children exclude each
 *      other), so the log's order is an order the operations really happened in (oplog.h O1).
 *   RC2 The recording needs no durability of its own: fsync and fdatasync are logged and not
 *      performed (PN_RECORD_SYNC=1 performs them). The log, not the disk, is the truth.
 *   RC3 A stream from fopen() writes through libc's internal write, which no preload sees:
 *      at fclose() of a stream opened for writing, its file's whole content is logged as one
 *      write at 0 and a truncate to its size (PostgreSQL writes such files whole and renames
 *      them into place after fsyncing them by a new descriptor, which is logged).
 * The library must not call a wrapped function for its own I/O: it uses the next symbols.
 */
#define _GNU_SOURCE
#include "oplog.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define FD_MAX 4096
#define STREAMS_MAX 64

struct tracked {
	char *path; /* relative to the data directory; NULL = not tracked */
	bool sync;
};

static struct tracked fds[FD_MAX];
static struct {
	FILE *f;
	char *path;
} streams[STREAMS_MAX];
static char dir[PATH_MAX];
static size_t dir_len;
static const char *log_path; /* log_buf, or NULL: not recording */
static char log_buf[PATH_MAX];
static int log_fd = -1;
static pid_t log_pid;
static bool do_sync;

static int (*next_open)(const char *, int, ...);
static ssize_t (*next_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*next_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*next_write)(int, const void *, size_t);
static int (*next_fsync)(int);
static int (*next_fdatasync)(int);
static int (*next_sync_file_range)(int, off_t, off_t, unsigned int);
static int (*next_ftruncate)(int, off_t);
static int (*next_truncate)(const char *, off_t);
static int (*next_posix_fallocate)(int, off_t, off_t);
static int (*next_rename)(const char *, const char *);
static int (*next_link)(const char *, const char *);
static int (*next_unlink)(const char *);
static int (*next_mkdir)(const char *, mode_t);
static int (*next_rmdir)(const char *);
static int (*next_close)(int);
static FILE *(*next_fopen)(const char *, const char *);
static int (*next_fclose)(FILE *);

static bool ready;

__attribute__((constructor)) static void init(void)
{
	if (ready)
		return;
	ready = true;
	next_open = dlsym(RTLD_NEXT, "open");
	next_pwrite = dlsym(RTLD_NEXT, "pwrite");
	next_pwritev = dlsym(RTLD_NEXT, "pwritev");
	next_write = dlsym(RTLD_NEXT, "write");
	next_fsync = dlsym(RTLD_NEXT, "fsync");
	next_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
	next_sync_file_range = dlsym(RTLD_NEXT, "sync_file_range");
	next_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
	next_truncate = dlsym(RTLD_NEXT, "truncate");
	next_posix_fallocate = dlsym(RTLD_NEXT, "posix_fallocate");
	next_rename = dlsym(RTLD_NEXT, "rename");
	next_link = dlsym(RTLD_NEXT, "link");
	next_unlink = dlsym(RTLD_NEXT, "unlink");
	next_mkdir = dlsym(RTLD_NEXT, "mkdir");
	next_rmdir = dlsym(RTLD_NEXT, "rmdir");
	next_close = dlsym(RTLD_NEXT, "close");
	next_fopen = dlsym(RTLD_NEXT, "fopen");
	next_fclose = dlsym(RTLD_NEXT, "fclose");
	const char *d = getenv("PN_RECORD_DIR");
	log_path = getenv("PN_RECORD_LOG");
	do_sync = getenv("PN_RECORD_SYNC") && strcmp(getenv("PN_RECORD_SYNC"), "1") == 0;
	/* copied: the server overwrites its environment's memory for its ps display */
	if (!d || !log_path || strlen(d) >= sizeof(dir) - 1 ||
	    strlen(log_path) >= sizeof(log_buf)) {
		log_path = NULL;
		return;
	}
	strcpy(log_buf, log_path);
	log_path = log_buf;
	strcpy(dir, d);
	dir_len = strlen(dir);
	while (dir_len > 1 && dir[dir_len - 1] == '/')
		dir[--dir_len] = '\0';
}

/* The path relative to the data directory, lexically normalized, in out; false when it
 * is not under it. */
static bool relative(const char *path, char *out, size_t len)
{
	char abs[2 * PATH_MAX];
	if (!log_path || !path)
		return false;
	if (path[0] == '/') {
		snprintf(abs, sizeof(abs), "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return false;
		snprintf(abs, sizeof(abs), "%s/%s", cwd, path);
	}
	/* normalize: drop empty and "." components, resolve ".." */
	char norm[2 * PATH_MAX];
	size_t n = 0;
	for (char *s = abs, *e; *s; s = e) {
		while (*s == '/')
			s++;
		e = s;
		while (*e && *e != '/')
			e++;
		size_t c = (size_t)(e - s);
		if (c == 0 || (c == 1 && s[0] == '.'))
			continue;
		if (c == 2 && s[0] == '.' && s[1] == '.') {
			while (n > 0 && norm[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			continue;
		}
		if (n + c + 2 >= sizeof(norm))
			return false;
		norm[n++] = '/';
		memcpy(norm + n, s, c);
		n += c;
	}
	norm[n] = '\0';
	if (strncmp(norm, dir, dir_len) != 0 || (norm[dir_len] != '/' && norm[dir_len] != '\0'))
		return false;
	const char *rel = norm[dir_len] ? norm + dir_len + 1 : ".";
	if (strlen(rel) >= len)
		return false;
	strcpy(out, rel);
	return true;
}

/* A recording with a hole would lie: the process stops, naming why. */
static void die(const char *what)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "libpn_record: %s (pid %d, fd %d): %s\n", what,
			 (int)getpid(), log_fd, strerror(errno));
	if (n > 0)
		next_write(2, msg, (size_t)n);
	abort();
}

static void lock(bool on)
{
	if (getpid() != log_pid || log_fd < 0) {
		log_fd = next_open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		log_pid = getpid();
	}
	struct flock fl = {.l_type = on ? F_WRLCK : F_UNLCK, .l_whence = SEEK_SET};
	while (log_fd >= 0 && fcntl(log_fd, F_SETLKW, &fl) != 0 && errno == EINTR)
		;
}

static void put(const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n > 0) {
		ssize_t w = next_write(log_fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("cannot append to the log");
		b += w;
		n -= (size_t)w;
	}
}

/* Appends one record; the lock is held. */
static void emit(enum pn_fop_kind kind, uint32_t flags, const char *path, const char *path2,
		 uint64_t off, uint64_t len, const struct iovec *iov, int iovcnt)
{
	int saved = errno;
	struct pn_fop_head h = {
		.magic = PN_FOP_MAGIC,
		.kind = (uint16_t)kind,
		.flags = (uint16_t)flags,
		.pid = (uint32_t)getpid(),
		.path_len = (uint32_t)strlen(path),
		.path2_len = path2 ? (uint32_t)strlen(path2) : 0,
		.off = off,
		.len = len,
	};
	put(&h, sizeof(h));
	put(path, h.path_len);
	if (path2)
		put(path2, h.path2_len);
	for (int i = 0; i < iovcnt && len > 0; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;
		put(iov[i].iov_base, n);
		len -= n;
	}
	errno = saved;
}

static struct tracked *tracked(int fd)
{
	return fd >= 0 && fd < FD_MAX && fds[fd].path ? &fds[fd] : NULL;
}

int open(const char *path, int flags, ...)
{
	init();
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	char rel[256];
	if (!relative(path, rel, sizeof(rel)))
		return next_open(path, flags, mode);
	lock(true);
	int fd = next_open(path, flags, mode);
	if (fd >= 0 && fd < FD_MAX) {
		free(fds[fd].path);
		fds[fd].path = strdup(rel);
		fds[fd].sync = (flags & (O_SYNC | O_DSYNC)) != 0;
		if (flags & O_CREAT)
			emit(PN_FOP_CREATE, 0, rel, NULL, 0, 0, NULL, 0);
		if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY)
			emit(PN_FOP_TRUNCATE, 0, rel, NULL, 0, 0, NULL, 0);
	}
	lock(false);
	return fd;
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int close(int fd)
{
	init();
	if (fd == log_fd && log_fd >= 0 && getpid() == log_pid)
		log_fd = -1; /* the program closes every descriptor: lock() opens the log again */
	if (fd >= 0 && fd < FD_MAX && fds[fd].path) {
		free(fds[fd].path);
		fds[fd].path = NULL;
	}
	return next_close(fd);
}

static ssize_t written(struct tracked *t, ssize_t n, off_t off, const struct iovec *iov, int iovcnt)
{
	if (n > 0)
		emit(PN_FOP_WRITE, t->sync ? PN_FOPF_SYNC : 0, t->path, NULL, (uint64_t)off,
		     (uint64_t)n, iov, iovcnt);
	lock(false);
	return n;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t off)
{
	init();
	struct tracked *t = tracked(fd);
	if (!t)
		return next_pwrite(fd, buf, count, off);
	lock(true);
	struct iovec iov = {(void *)buf, count};
	return written(t, next_pwrite(fd, buf, count, off), off, &iov, 1);
}
ssize_t pwrite64(int fd, const void *buf, size_t count, off_t off) __attribute__((alias("pwrite")));

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off)
{
	init();
	struct tracked *t = tracked(fd);
	if (!t)
		return next_pwritev(fd, iov, iovcnt, off);
	lock(true);
	return written(t, next_pwritev(fd, iov, iovcnt, off), off, iov, iovcnt);
}
ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off_t off)
	__attribute__((alias("pwritev")));

ssize_t write(int fd, const void *buf, size_t count)
{
	init();
	struct tracked *t = tracked(fd);
	if (!t)
		return next_write(fd, buf, count);
	lock(true);
	off_t off = lseek(fd, 0, SEEK_CUR);
	if (fcntl(fd, F_GETFL) & O_APPEND) {
		struct stat st;
		off = fstat(fd, &st) == 0 ? st.st_size : off;
	}
	struct iovec iov = {(void *)buf, count};
	return written(t, next_write(fd, buf, count), off, &iov, 1);
}

static int synced(int fd, uint32_t flags, int (*next)(int))
{
	init();
	struct tracked *t = tracked(fd);
	if (!t)
		return next(fd);
	lock(true);
	int rc = do_sync ? next(fd) : 0;
	if (rc == 0)
		emit(PN_FOP_FSYNC, flags, t->path, NULL, 0, 0, NULL, 0);
	lock(false);
	return rc;
}

int fsync(int fd)
{
	init();
	return synced(fd, 0, next_fsync);
}

int fdatasync(int fd)
{
	init();
	return synced(fd, PN_FOPF_DATASYNC, next_fdatasync);
}

int sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
	init();
	struct tracked *t = tracked(fd);
	if (!t)
		return next_sync_file_range(fd, off, n, flags);
	lock(true);
	int rc = next_sync_file_range(fd, off, n, flags);
	if (rc == 0)
		emit(PN_FOP_SYNC_RANGE, 0, t->path, NULL, (uint64_t)off, (uint64_t)n, NULL, 0);
	lock(false);
	return rc;
}

int ftruncate(int fd, off_t len)
{
	init();
	struct tracked *t = tracked(fd);
	if (!t)
		return next_ftruncate(fd, len);
	lock(true);
	int rc = next_ftruncate(fd, len);
	if (rc == 0)
		emit(PN_FOP_TRUNCATE, 0, t->path, NULL, (uint64_t)len, 0, NULL, 0);
	lock(false);
	return rc;
}
int ftruncate64(int fd, off_t len) __attribute__((alias("ftruncate")));

int posix_fallocate(int fd, off_t off, off_t len)
{
	init();
	struct tracked *t = tracked(fd);
	if (!t)
		return next_posix_fallocate(fd, off, len);
	lock(true);
	int rc = next_posix_fallocate(fd, off, len);
	if (rc == 0)
		emit(PN_FOP_FALLOCATE, 0, t->path, NULL, (uint64_t)off, (uint64_t)len, NULL, 0);
	lock(false);
	return rc;
}
int posix_fallocate64(int fd, off_t off, off_t len) __attribute__((alias("posix_fallocate")));

/* A call on one path (truncate, unlink, mkdir, rmdir): logged when it succeeds. */
static int on_path(const char *path, enum pn_fop_kind kind, uint64_t off,
		   int (*call)(const char *path, uint64_t off))
{
	init();
	char rel[256];
	if (!relative(path, rel, sizeof(rel)))
		return call(path, off);
	lock(true);
	int rc = call(path, off);
	if (rc == 0)
		emit(kind, 0, rel, NULL, off, 0, NULL, 0);
	lock(false);
	return rc;
}

static int call_truncate(const char *p, uint64_t off) { return next_truncate(p, (off_t)off); }
static int call_unlink(const char *p, uint64_t off)
{
	(void)off;
	return next_unlink(p);
}
static int call_mkdir(const char *p, uint64_t mode) { return next_mkdir(p, (mode_t)mode); }
static int call_rmdir(const char *p, uint64_t off)
{
	(void)off;
	return next_rmdir(p);
}

int truncate(const char *path, off_t len)
{
	return on_path(path, PN_FOP_TRUNCATE, (uint64_t)len, call_truncate);
}
int truncate64(const char *path, off_t len) __attribute__((alias("truncate")));
int unlink(const char *path) { return on_path(path, PN_FOP_UNLINK, 0, call_unlink); }
int mkdir(const char *path, mode_t mode) { return on_path(path, PN_FOP_MKDIR, mode, call_mkdir); }
int rmdir(const char *path) { return on_path(path, PN_FOP_RMDIR, 0, call_rmdir); }

/* rename and link: logged when either path is under the data directory. */
static int two_paths(const char *from, const char *to, enum pn_fop_kind kind,
		     int (*next)(const char *, const char *))
{
	init();
	char a[256], b[256];
	bool in_a = relative(from, a, sizeof(a)), in_b = relative(to, b, sizeof(b));
	if (!in_a && !in_b)
		return next(from, to);
	lock(true);
	int rc = next(from, to);
	if (rc == 0)
		emit(kind, 0, in_a ? a : "", in_b ? b : "", 0, 0, NULL, 0);
	lock(false);
	return rc;
}

int rename(const char *from, const char *to)
{
	init();
	return two_paths(from, to, PN_FOP_RENAME, next_rename);
}
int link(const char *from, const char *to)
{
	init();
	return two_paths(from, to, PN_FOP_LINK, next_link);
}

FILE *fopen(const char *path, const char *mode)
{
	init();
	char rel[256];
	bool writes = strpbrk(mode, "wa+") != NULL;
	if (!writes || !relative(path, rel, sizeof(rel)))
		return next_fopen(path, mode);
	lock(true);
	FILE *f = next_fopen(path, mode);
	int slot = -1;
	for (int i = 0; f && i < STREAMS_MAX && slot < 0; i++)
		if (!streams[i].f)
			slot = i;
	if (slot >= 0) {
		streams[slot].f = f;
		streams[slot].path = strdup(rel);
		emit(PN_FOP_CREATE, 0, rel, NULL, 0, 0, NULL, 0);
	}
	lock(false);
	return f;
}
FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));

/* RC3: the file's whole content as one write and a truncate to its size. */
static void log_whole(const char *rel)
{
	char abs[PATH_MAX + 300];
	snprintf(abs, sizeof(abs), "%s/%s", dir, rel);
	int fd = next_open(abs, O_RDONLY | O_CLOEXEC, 0);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		die(abs);
	uint8_t *b = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (b && got < (size_t)st.st_size) {
		ssize_t r = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
		if (r <= 0)
			die(abs);
		got += (size_t)r;
	}
	next_close(fd);
	struct iovec iov = {b, got};
	emit(PN_FOP_WRITE, 0, rel, NULL, 0, got, &iov, 1);
	emit(PN_FOP_TRUNCATE, 0, rel, NULL, got, 0, NULL, 0);
	free(b);
}

int fclose(FILE *f)
{
	init();
	int slot = -1;
	for (int i = 0; f && i < STREAMS_MAX && slot < 0; i++)
		if (streams[i].f == f)
			slot = i;
	if (slot < 0)
		return next_fclose(f);
	lock(true);
	int rc = next_fclose(f);
	log_whole(streams[slot].path);
	free(streams[slot].path);
	streams[slot].f = NULL;
	streams[slot].path = NULL;
	lock(false);
	return rc;
}

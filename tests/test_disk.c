/*
 * test_disk.c: Check suite for the real-disk backend (disk/; label unit) and the commands
 * that use it. Each I/O method (io_uring, worker threads) is tested on its own, PN_IO_METHOD
 * choosing it:
 *   - aio.c: an O_DIRECT write, fdatasync and read back of the same bytes, out-of-order
 *     tags, a refused method name, and the fallback to workers when a seccomp filter makes
 *     io_uring_setup fail;
 *   - disk.c: a whole workload on real files to its end (every commit acknowledged, fsyncs
 *     and writes counted), then the engine's recovery on the same files recovers every
 *     acknowledged commit; the directory rules (the marker's magic and version, --force,
 *     the lock held across opens, no symbolic links or FIFOs);
 *   - crashtest: SIGKILLed runs pass with a sound engine, and fail with ack_before_flush,
 *     whose acknowledged commits are not in the WAL a crash leaves (the test can fail);
 *   - atomic writes (disk.h DK6, aio.h A2): what statx reports decides, in each case, whether
 *     RWF_ATOMIC page writes are allowed; an RWF_ATOMIC write reaches the kernel with its
 *     flag (refused where statx reports no unit, written where it does), with each method;
 *     bench --atomic refuses, naming the file, what statx reported and what the kernel and
 *     file system need, before any mode runs (or, on a device that has them, runs and
 *     counts them);
 *   - bench: each mode's figures, as JSON with the contract's keys; a failed mode's cells;
 *     crashtest's and bench's `--json -` is pure JSON; both refuse a foreign marker and a
 *     symbolic link in the directory.
 * Files go to a temporary directory made by main().
 */
#define _GNU_SOURCE /* O_DIRECT */
#include "cli.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_contract.h"
#include "disk.h"
#include "load.h"

#define OUT_LEN (256 * 1024)

static const char small_scenario[] =
	"name: d\nseed: 9\nstorage: {pages: 64, buffers: 16, wal_segment_size: 1MiB}\n"
	"checkpoint: {interval: 50ms, max_wal_size: 4MiB}\naio: {queue_depth: 8}\n"
	"workload: {kind: random, transactions: 300, clients: 3, pages_per_transaction: 2}\n";

/* The same engine with commits acknowledged before their WAL is flushed (protocol.md 5). */
static const char broken_scenario[] =
	"name: b\nseed: 9\nstorage: {pages: 64, buffers: 16, wal_segment_size: 1MiB}\n"
	"protocol: {mutations: [ack_before_flush]}\n"
	"checkpoint: {interval: 50ms, max_wal_size: 4MiB}\naio: {queue_depth: 8}\n"
	"workload: {kind: random, transactions: 300, clients: 3, pages_per_transaction: 2}\n";

static char tmp_dir[256], good[320], broken[320];
static char out[OUT_LEN], err[OUT_LEN];
static const char *const methods[] = {"io_uring", "worker"};

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* `penumbra ARGS...` in-process, stdout and stderr into out and err; returns its status. */
static int cli(const char *first, ...)
{
	char *argv[20] = {"penumbra"}, op[320], ep[320];
	int argc = 1;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && argc < 18; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	snprintf(op, sizeof op, "%s/stdout", tmp_dir);
	snprintf(ep, sizeof ep, "%s/stderr", tmp_dir);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2), fo = open(op, O_WRONLY | O_CREAT | O_TRUNC, 0600),
	    fe = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert(so >= 0 && se >= 0 && fo >= 0 && fe >= 0);
	dup2(fo, 1);
	dup2(fe, 2);
	close(fo);
	close(fe);
	int rc = pn_cli_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(op, out, sizeof out);
	slurp(ep, err, sizeof err);
	return rc;
}

static void load(const char *path, struct pn_scenario *sc)
{
	char msg[512];
	ck_assert_msg(pn_scenario_load(path, sc, msg, sizeof msg), "%s", msg);
}

/* aio.c alone: write a page with O_DIRECT, fdatasync it, read it back; two at a time, so
 * completions are matched by tag. */
START_TEST(test_aio_round_trip)
{
	char path[320], note[256];
	uint8_t *buf;
	setenv("PN_IO_METHOD", methods[_i], 1);
	struct pn_aio *a = pn_aio_open(4, note, sizeof note);
	ck_assert_msg(a != NULL, "%s", note);
	ck_assert_str_eq(pn_aio_method_name(pn_aio_method_of(a)), methods[_i]);
	snprintf(path, sizeof path, "%s/aio-%s", tmp_dir, methods[_i]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	ck_assert(fd >= 0);
	ck_assert_int_eq(posix_memalign((void **)&buf, 4096, 4 * 8192), 0);
	for (uint32_t i = 0; i < 2 * 8192; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	pn_aio_prep(a, PN_AIO_WRITE, fd, buf, 8192, 0, 10);
	pn_aio_prep(a, PN_AIO_WRITE, fd, buf + 8192, 8192, 8192, 11);
	int e = 0;
	ck_assert(pn_aio_submit(a, &e));
	struct pn_aio_done d[4];
	uint32_t got = 0, seen = 0;
	while (got < 2) {
		uint32_t n = pn_aio_reap(a, d, 4, 1000000000u);
		for (uint32_t i = 0; i < n; i++) {
			ck_assert(d[i].tag == 10 || d[i].tag == 11);
			ck_assert_int_eq(d[i].res, 8192);
			seen |= 1u << (d[i].tag - 10);
		}
		got += n;
	}
	ck_assert_uint_eq(seen, 3);
	pn_aio_prep(a, PN_AIO_FDATASYNC, fd, NULL, 0, 0, 12);
	ck_assert(pn_aio_submit(a, &e));
	while (pn_aio_reap(a, d, 4, 1000000000u) == 0)
		;
	ck_assert_uint_eq(d[0].tag, 12);
	ck_assert_int_eq(d[0].res, 0);
	pn_aio_prep(a, PN_AIO_READ, fd, buf + 2 * 8192, 2 * 8192, 0, 13);
	ck_assert(pn_aio_submit(a, &e));
	while (pn_aio_reap(a, d, 4, 1000000000u) == 0)
		;
	ck_assert_int_eq(d[0].res, 2 * 8192);
	ck_assert(memcmp(buf, buf + 2 * 8192, 2 * 8192) == 0);
	close(fd);
	free(buf);
	pn_aio_close(a);
	unsetenv("PN_IO_METHOD");
}
END_TEST

/* DK6: the decision from what statx reported, each way. */
START_TEST(test_atomic_allows)
{
	static const struct {
		struct pn_disk_atomic a;
		bool direct, ok;
		const char *why;
	} cases[] = {
		{{true, true, 4096, 65536}, false, false, "refuses O_DIRECT"},
		{{false, false, 0, 0}, true, false, "STATX_WRITE_ATOMIC not in stx_mask"},
		{{true, false, 0, 0}, true, false, "stx_atomic_write_unit_max 0"},
		{{true, true, 512, 4096},
		 true,
		 false,
		 "units of 512 to 4096 bytes, which do not hold the 8192-byte page"},
		{{true, true, 16384, 65536}, true, false, "units of 16384 to 65536 bytes"},
		{{true, true, 4096, 65536}, true, true, ""},
		{{true, true, 8192, 8192}, true, true, ""},
	};
	for (size_t i = 0; i < PN_ARRAY_LEN(cases); i++) {
		char why[512] = "";
		bool ok = pn_disk_atomic_allows(&cases[i].a, cases[i].direct, 8192, why,
						sizeof why);
		ck_assert_msg(ok == cases[i].ok, "case %zu: %s", i, why);
		ck_assert_msg(strstr(why, cases[i].why) != NULL, "case %zu: %s", i, why);
		if (!ok)
			ck_assert_msg(strstr(why, "Linux 6.11") && strstr(why, "ext4 or XFS"), "%s",
				      why);
	}
}
END_TEST

/* A2: an RWF_ATOMIC write goes to the kernel with its flag: written whole where statx
 * allows 8 KiB atomic writes, refused (an errno) where it does not, as a plain write is not. */
START_TEST(test_aio_atomic_write)
{
	char path[320], note[256], why[512];
	uint8_t *buf;
	struct pn_disk_atomic at;
	setenv("PN_IO_METHOD", methods[_i], 1);
	struct pn_aio *a = pn_aio_open(4, note, sizeof note);
	ck_assert_msg(a != NULL, "%s", note);
	snprintf(path, sizeof path, "%s/atomic-%s", tmp_dir, methods[_i]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	ck_assert(fd >= 0);
	ck_assert(pn_disk_atomic_probe(fd, &at));
	bool allowed = pn_disk_atomic_allows(&at, true, 8192, why, sizeof why);
	ck_assert_int_eq(posix_memalign((void **)&buf, 4096, 8192), 0);
	memset(buf, 0x5A, 8192);
	int e = 0;
	struct pn_aio_done d[2];
	pn_aio_prep(a, PN_AIO_WRITE, fd, buf, 8192, 0, 1);
	ck_assert(pn_aio_submit(a, &e));
	while (pn_aio_reap(a, d, 2, 1000000000u) == 0)
		;
	ck_assert_int_eq(d[0].res, 8192); /* the same write without the flag */
	pn_aio_prep(a, PN_AIO_WRITE_ATOMIC, fd, buf, 8192, 8192, 2);
	ck_assert(pn_aio_submit(a, &e));
	while (pn_aio_reap(a, d, 2, 1000000000u) == 0)
		;
	ck_assert_uint_eq(d[0].tag, 2);
	if (allowed)
		ck_assert_int_eq(d[0].res, 8192);
	else
		ck_assert_msg(d[0].res < 0, "an RWF_ATOMIC write where %s: %lld", why,
			      (long long)d[0].res);
	close(fd);
	free(buf);
	pn_aio_close(a);
	unsetenv("PN_IO_METHOD");
}
END_TEST

START_TEST(test_aio_bad_method)
{
	char note[256];
	setenv("PN_IO_METHOD", "posix", 1);
	ck_assert(pn_aio_open(4, note, sizeof note) == NULL);
	ck_assert_msg(strstr(note, "PN_IO_METHOD='posix' is not a method") != NULL, "%s", note);
	unsetenv("PN_IO_METHOD");
}
END_TEST

/* A seccomp filter that makes io_uring_setup fail with ENOSYS, as a sandbox's does. */
static bool forbid_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = PN_ARRAY_LEN(f), .filter = f};
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/* Where io_uring cannot be set up, the worker method takes over and the note says why. */
START_TEST(test_aio_fallback)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) { /* the filter cannot be removed: a child of our own */
		char note[256] = "cannot install the seccomp filter";
		struct pn_aio *a = NULL;
		if (forbid_io_uring())
			a = pn_aio_open(4, note, sizeof note);
		if (a && pn_aio_method_of(a) != PN_AIO_WORKER)
			snprintf(note, sizeof note, "still io_uring");
		if (write(fds[1], note, strlen(note) + 1) < 0)
			_exit(3);
		_exit(a ? 0 : 1);
	}
	char got[256] = "";
	int status;
	ck_assert(read(fds[0], got, sizeof got) > 0);
	waitpid(pid, &status, 0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", got);
	ck_assert_msg(strstr(got,
			     "io_uring_queue_init failed: Function not implemented; falling back "
			     "to worker") != NULL,
		      "%s", got);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

static void on_ack(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns)
{
	pn_lsn *last = arg;
	*last = PN_MAX(*last, lsn);
}

/* disk.c: the whole workload on real files, then recovery from them. */
START_TEST(test_disk_run_and_recover)
{
	struct pn_scenario sc;
	char dir[320];
	pn_lsn last = 0;
	setenv("PN_IO_METHOD", methods[_i], 1);
	load(good, &sc);
	/* checkpoints by count too: 300 commits can take less than checkpoint.interval (50 ms
	 * of real time) on a fast device */
	sc.checkpoint.every_transactions = 100;
	snprintf(dir, sizeof dir, "%s/run-%s", tmp_dir, methods[_i]);
	struct pn_disk *d = calloc(1, sizeof(*d));
	struct pn_disk_dir dd;
	char msg[512];
	ck_assert_msg(pn_disk_dir_lock(&dd, dir, false, msg, sizeof msg), "%s", msg);
	ck_assert_msg(pn_disk_open(d, &sc, &dd, true, false), "%s", d->error);
	d->on_ack = on_ack;
	d->arg = &last;
	pn_engine_start(d->e);
	ck_assert_int_eq(pn_disk_run(d, 0), 0);
	ck_assert_str_eq(pn_disk_method(d), methods[_i]);
	ck_assert_uint_eq(pn_engine_metrics(d->e)->commits, 300);
	ck_assert(d->c.fsyncs > 0 && d->c.writes > 0 && d->c.file_writes[PN_FILE_WAL] > 0);
	ck_assert(pn_engine_metrics(d->e)->checkpoints > 0);
	pn_disk_close(d);
	/* the files alone: recovery replays up to at least the last acknowledged commit */
	ck_assert_msg(pn_disk_open(d, &sc, &dd, false, false), "%s", d->error);
	ck_assert_int_eq(pn_disk_recover(d), 0);
	pn_lsn end = pn_engine_recovery_end(d->e);
	ck_assert_msg(end >= last, "recovered to %llX, last commit at %llX",
		      (unsigned long long)end, (unsigned long long)last);
	pn_disk_close(d);
	pn_disk_dir_unlock(&dd);
	free(d);
	pn_scenario_free(&sc);
	unsetenv("PN_IO_METHOD");
}
END_TEST

/* Whether `dir` can be locked now (a second penumbra would be let in); leaves it unlocked. */
static bool lockable(const char *dir, bool force, char *msg, size_t len)
{
	struct pn_disk_dir dd;
	if (!pn_disk_dir_lock(&dd, dir, force, msg, len))
		return false;
	pn_disk_dir_unlock(&dd);
	return true;
}

/* Every file of a disk directory is named from the one file list (src/base/env.h): none is
 * missing, none is "(null)" (the page server's file once was). */
START_TEST(test_disk_file_names)
{
	struct pn_scenario sc;
	struct pn_disk_dir dd;
	char dir[320], path[400], msg[512];
	struct stat st;
	load(good, &sc);
	snprintf(dir, sizeof dir, "%s/names", tmp_dir);
	struct pn_disk *d = calloc(1, sizeof(*d));
	ck_assert_msg(pn_disk_dir_lock(&dd, dir, false, msg, sizeof msg), "%s", msg);
	ck_assert_msg(pn_disk_open(d, &sc, &dd, true, false), "%s", d->error);
	pn_disk_close(d);
	pn_disk_dir_unlock(&dd);
	free(d);
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		const char *name = pn_file_disk_name((enum pn_file)f);
		ck_assert_str_ne(name, "?");
		for (int g = 0; g < f; g++)
			ck_assert_str_ne(name, pn_file_disk_name((enum pn_file)g));
		snprintf(path, sizeof path, "%s/%s", dir, name);
		ck_assert_msg(stat(path, &st) == 0, "%s is missing", path);
	}
	snprintf(path, sizeof path, "%s/(null)", dir);
	ck_assert_msg(stat(path, &st) != 0, "%s exists", path);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_disk_directory_rule)
{
	char dir[320], file[400], msg[512];
	snprintf(dir, sizeof dir, "%s/rule", tmp_dir);
	ck_assert_msg(lockable(dir, false, msg, sizeof msg), "%s", msg); /* absent: created */
	snprintf(file, sizeof file, "%s/%s", dir, PN_DISK_MARKER);
	slurp(file, out, sizeof out);
	ck_assert_msg(strncmp(out, "penumbra-dir 1\n", 15) == 0, "%s", out); /* magic, version */
	ck_assert_msg(lockable(dir, false, msg, sizeof msg), "%s", msg);     /* ours */
	snprintf(file, sizeof file, "%s/rule-other", tmp_dir);
	ck_assert_int_eq(mkdir(file, 0755), 0);
	snprintf(file, sizeof file, "%s/rule-other/someone-else", tmp_dir);
	write_file(file, "x");
	snprintf(dir, sizeof dir, "%s/rule-other", tmp_dir);
	ck_assert(!lockable(dir, false, msg, sizeof msg));
	ck_assert_msg(strstr(msg, "did not create") != NULL, "%s", msg);
	ck_assert_msg(lockable(dir, true, msg, sizeof msg), "%s", msg); /* --force */
	ck_assert(!lockable(good, false, msg, sizeof msg));             /* not a directory */
	ck_assert_msg(strstr(msg, "is not a directory") != NULL, "%s", msg);
}
END_TEST

/* Any file named PENUMBRA used to count as the marker: only ours, at our version, does. */
START_TEST(test_disk_foreign_marker)
{
	char dir[320], file[400], msg[512];
	snprintf(dir, sizeof dir, "%s/foreign", tmp_dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(file, sizeof file, "%s/%s", dir, PN_DISK_MARKER);
	write_file(file, "my own notes, nothing to do with penumbra\n");
	ck_assert(!lockable(dir, false, msg, sizeof msg));
	ck_assert_msg(strstr(msg, "is not penumbra's marker") != NULL, "%s", msg);
	slurp(file, out, sizeof out);
	ck_assert_str_eq(out, "my own notes, nothing to do with penumbra\n"); /* untouched */
	write_file(file, "penumbra-dir 2\n");
	ck_assert(!lockable(dir, false, msg, sizeof msg));
	ck_assert_msg(strstr(msg, "directory format '2'") != NULL, "%s", msg);
	ck_assert_msg(lockable(dir, true, msg, sizeof msg), "%s", msg); /* --force rewrites it */
	ck_assert_msg(lockable(dir, false, msg, sizeof msg), "%s", msg);
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(symlink(good, file), 0); /* a marker that is a symbolic link */
	ck_assert(!lockable(dir, true, msg, sizeof msg));
	ck_assert_msg(strstr(msg, "symbolic link") != NULL, "%s", msg);
}
END_TEST

/* DK5: the lock is the command's, not one open's: between two opens (bench modes, crash test
 * runs and their recoveries) no other penumbra gets in. */
START_TEST(test_disk_lock_held)
{
	struct pn_scenario sc;
	struct pn_disk_dir dd;
	char dir[320], msg[512];
	struct pn_disk *d = calloc(1, sizeof(*d));
	load(good, &sc);
	snprintf(dir, sizeof dir, "%s/held", tmp_dir);
	ck_assert_msg(pn_disk_dir_lock(&dd, dir, false, msg, sizeof msg), "%s", msg);
	ck_assert(!lockable(dir, false, msg, sizeof msg));
	ck_assert_msg(strstr(msg, "in use by another penumbra") != NULL, "%s", msg);
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(pn_disk_open(d, &sc, &dd, i == 0, true), "%s", d->error);
		pn_disk_close(d);
		ck_assert(!lockable(dir, false, msg, sizeof msg));
		ck_assert(!lockable(dir, true, msg, sizeof msg));
	}
	pn_disk_dir_unlock(&dd);
	ck_assert_msg(lockable(dir, false, msg, sizeof msg), "%s", msg);
	free(d);
	pn_scenario_free(&sc);
}
END_TEST

/* A symbolic link or a FIFO in the directory is refused, never followed or opened: a `wal`
 * link once overwrote the file it pointed at. */
START_TEST(test_disk_no_symlinks)
{
	struct pn_scenario sc;
	struct pn_disk_dir dd;
	char dir[320], file[400], victim[400], msg[512];
	struct pn_disk *d = calloc(1, sizeof(*d));
	load(good, &sc);
	snprintf(dir, sizeof dir, "%s/links", tmp_dir);
	snprintf(victim, sizeof victim, "%s/victim", tmp_dir);
	write_file(victim, "precious\n");
	ck_assert_msg(pn_disk_dir_lock(&dd, dir, false, msg, sizeof msg), "%s", msg);
	snprintf(file, sizeof file, "%s/wal", dir);
	ck_assert_int_eq(symlink(victim, file), 0);
	ck_assert(!pn_disk_open(d, &sc, &dd, true, true));
	ck_assert_msg(strstr(d->error, "/wal is a symbolic link") != NULL, "%s", d->error);
	pn_disk_close(d);
	slurp(victim, out, sizeof out);
	ck_assert_str_eq(out, "precious\n");
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(mkfifo(file, 0644), 0);
	ck_assert(!pn_disk_open(d, &sc, &dd, true, true));
	ck_assert_msg(strstr(d->error, "/wal is not a regular file") != NULL, "%s", d->error);
	pn_disk_close(d);
	pn_disk_dir_unlock(&dd);
	free(d);
	pn_scenario_free(&sc);
}
END_TEST

/* A sound engine survives SIGKILLs; ack_before_flush loses acknowledged commits. */
START_TEST(test_crashtest)
{
	char dir[320];
	setenv("PN_IO_METHOD", methods[_i], 1);
	snprintf(dir, sizeof dir, "%s/crash-%s", tmp_dir, methods[_i]);
	ck_assert_msg(cli("crashtest", good, "--path", dir, "--runs", "3", "--max-time", "150ms",
			  "--modes", "fpw,umbra", NULL) == 0,
		      "%s%s", out, err);
	ck_assert_msg(strstr(out, "fpw: 3 runs") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "umbra: 3 runs") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "0 runs lost an acknowledged commit, 0 failed") != NULL, "%s",
		      out);
	ck_assert_msg(strstr(out, methods[_i]) != NULL, "%s", out);
	/* a kill before the first acknowledgement loses nothing; later ones lose a commit */
	ck_assert_int_eq(cli("crashtest", broken, "--path", dir, "--runs", "3", "--max-time",
			     "300ms", NULL),
			 1);
	ck_assert_msg(strstr(out, "was acknowledged (its record ends at") != NULL, "%s", out);
	ck_assert_msg(strstr(out, " 0 runs lost an acknowledged commit") == NULL, "%s", out);
	ck_assert_msg(strstr(err, "LOST OR WRONG") != NULL, "%s", err);
	unsetenv("PN_IO_METHOD");
}
END_TEST

START_TEST(test_bench_json)
{
	char dir[320], json[320];
	snprintf(dir, sizeof dir, "%s/bench", tmp_dir);
	snprintf(json, sizeof json, "%s/bench.json", tmp_dir);
	ck_assert_msg(cli("bench", good, "--path", dir, "--duration", "300ms", "--json", json,
			  NULL) == 0,
		      "%s%s", out, err);
	ck_assert_msg(strstr(out, "WAL bytes/tx umbra vs nofpw") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "throughput umbra/fpw") != NULL, "%s", out);
	json_error_t je;
	json_t *root = json_load_file(json, 0, &je), *res = json_object_get(root, "results");
	ck_assert_msg(root != NULL, "%s", je.text);
	ck_assert_uint_eq(json_array_size(res), 3);
	static const char *const modes[] = {"fpw", "nofpw", "umbra"};
	for (size_t i = 0; i < 3; i++) {
		json_t *r = json_array_get(res, i);
		ck_assert_str_eq(json_string_value(json_object_get(r, "mode")), modes[i]);
		ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "ok");
		ck_assert(json_integer_value(json_object_get(r, "transactions")) > 0);
		ck_assert(json_integer_value(json_object_get(r, "fsyncs")) > 0);
		ck_assert(json_integer_value(json_object_get(r, "device_writes")) > 0);
		/* FPIs exist only with full-page writes */
		ck_assert((json_integer_value(json_object_get(r, "fpi_bytes")) > 0) == (i == 0));
	}
	json_decref(root);
}
END_TEST

static json_t *stdout_json(void) { return pure_json(out); }

START_TEST(test_bench_contract)
{
	char dir[320];
	size_t i;
	json_t *r;
	snprintf(dir, sizeof dir, "%s/bench-contract", tmp_dir);
	ck_assert_msg(cli("bench", good, "--path", dir, "--duration", "200ms", "--modes",
			  "fpw,pushdown", "--json", "-", NULL) == 0,
		      "%s%s", out, err);
	ck_assert_msg(strstr(err, "transactions/s") != NULL, "%s", err); /* the table: stderr */
	json_t *root = stdout_json(), *res = json_object_get(root, "results");
	ck_assert_uint_eq(json_array_size(res), 2);
	assert_contract(res);
	json_array_foreach(res, i, r)
	{
		ck_assert_str_eq(json_string_value(json_object_get(r, "scenario")), "d");
		ck_assert(json_integer_value(json_object_get(r, "commits")) > 0);
		ck_assert(json_integer_value(json_object_get(r, "wal_records")) > 0);
		double elapsed = json_real_value(json_object_get(r, "elapsed_seconds"));
		ck_assert(elapsed >= 0.2 && elapsed < 5);
		/* the documented alias */
		ck_assert(json_real_value(json_object_get(r, "seconds")) == elapsed);
		ck_assert(json_real_value(json_object_get(r, "space_amplification")) >= 1.0);
	}
	json_decref(root);
}
END_TEST

/* A mode whose run breaks an invariant has no figures: "failed" in its cells, not 0.0. */
START_TEST(test_bench_failed_mode)
{
	char dir[320];
	snprintf(dir, sizeof dir, "%s/bench-failed", tmp_dir);
	ck_assert_int_eq(cli("bench", broken, "--path", dir, "--duration", "300ms", "--modes",
			     "fpw", NULL),
			 1);
	ck_assert_msg(strstr(out, "\ntransactions/s                    failed\n") != NULL, "%s",
		      out);
	ck_assert_msg(strstr(out, "0.0") == NULL, "%s", out);
	ck_assert_msg(strstr(err, "penumbra bench: fpw: violation: durability page -: ") != NULL,
		      "%s", err);
}
END_TEST

/* bench --atomic: refused before any mode runs where statx reports no unit that holds the
 * page (this machine's virtio disk); where one does, every mode runs and counts them. */
START_TEST(test_bench_atomic)
{
	char dir[320], data[400], why[512];
	struct pn_disk_atomic at;
	snprintf(dir, sizeof dir, "%s/bench-atomic", tmp_dir);
	int rc = cli("bench", good, "--path", dir, "--duration", "200ms", "--modes", "nofpw,umbra",
		     "--atomic", NULL);
	snprintf(data, sizeof data, "%s/data", dir);
	int fd = open(data, O_RDONLY | O_DIRECT);
	ck_assert(fd >= 0 && pn_disk_atomic_probe(fd, &at));
	close(fd);
	if (pn_disk_atomic_allows(&at, true, 8192, why, sizeof why)) {
		ck_assert_msg(rc == 0, "%s%s", out, err);
		ck_assert_msg(strstr(out, "RWF_ATOMIC page writes (statx: units of ") != NULL, "%s",
			      out);
		ck_assert_msg(strstr(out, "\nRWF_ATOMIC page writes    ") != NULL, "%s", out);
		return;
	}
	ck_assert_int_eq(rc, 2);
	char want[700];
	snprintf(want, sizeof want, "penumbra bench: nofpw: --atomic: %s: statx reports ", data);
	ck_assert_msg(strstr(err, want) == err, "%s", err);
	ck_assert_msg(strstr(err, "RWF_ATOMIC needs Linux 6.11 or later") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "(this kernel: Linux ") != NULL, "%s", err);
	ck_assert_msg(strstr(err, " umbra: ") == NULL, "a second mode ran: %s", err);
	ck_assert_msg(strstr(out, "transactions/s") == NULL, "%s", out);
}
END_TEST

START_TEST(test_crashtest_json_stdout)
{
	char dir[320];
	snprintf(dir, sizeof dir, "%s/crash-json", tmp_dir);
	ck_assert_msg(cli("crashtest", good, "--path", dir, "--runs", "2", "--max-time", "100ms",
			  "--json", "-", NULL) == 0,
		      "%s%s", out, err);
	ck_assert_msg(strstr(err, "  run 2: killed at ") != NULL, "%s", err);
	json_t *root = stdout_json();
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_array_get(json_object_get(root, "results"), 0), "runs")),
			 2);
	json_decref(root);
}
END_TEST

/* The commands refuse what the directory rule refuses (exit 2), and touch nothing. */
START_TEST(test_realdisk_dir_refusals)
{
	char dir[320], file[400], victim[400];
	snprintf(dir, sizeof dir, "%s/refusals", tmp_dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(file, sizeof file, "%s/%s", dir, PN_DISK_MARKER);
	write_file(file, "not ours\n");
	ck_assert_int_eq(cli("bench", good, "--path", dir, "--duration", "100ms", NULL), 2);
	ck_assert_msg(strstr(err, "is not penumbra's marker") != NULL, "%s", err);
	ck_assert_int_eq(cli("crashtest", good, "--path", dir, "--runs", "1", NULL), 2);
	ck_assert_msg(strstr(err, "is not penumbra's marker") != NULL, "%s", err);
	write_file(file, "penumbra-dir 1\n");
	snprintf(victim, sizeof victim, "%s/victim", tmp_dir);
	write_file(victim, "precious\n");
	snprintf(file, sizeof file, "%s/wal", dir);
	ck_assert_int_eq(symlink(victim, file), 0);
	ck_assert_int_eq(cli("bench", good, "--path", dir, "--duration", "100ms", "--modes", "fpw",
			     NULL),
			 2);
	ck_assert_msg(strstr(err, "/wal is a symbolic link; refusing to follow it") != NULL, "%s",
		      err);
	ck_assert_int_eq(cli("crashtest", good, "--path", dir, "--runs", "1", NULL), 2);
	ck_assert_msg(strstr(err, "/wal is a symbolic link; refusing to follow it") != NULL, "%s",
		      err);
	slurp(victim, out, sizeof out);
	ck_assert_str_eq(out, "precious\n");
}
END_TEST

static Suite *disk_suite(void)
{
	Suite *s = suite_create("disk");
	TCase *io = tcase_create("io"), *runs = tcase_create("runs");
	tcase_add_loop_test(io, test_aio_round_trip, 0, 2);
	tcase_add_test(io, test_aio_bad_method);
	tcase_add_test(io, test_aio_fallback);
	tcase_add_test(io, test_atomic_allows);
	tcase_add_loop_test(io, test_aio_atomic_write, 0, 2);
	tcase_add_test(io, test_disk_directory_rule);
	tcase_add_test(io, test_disk_foreign_marker);
	tcase_add_test(io, test_disk_lock_held);
	tcase_add_test(io, test_disk_no_symlinks);
	suite_add_tcase(s, io);
	tcase_add_loop_test(runs, test_disk_run_and_recover, 0, 2);
	tcase_add_test(runs, test_disk_file_names);
	tcase_add_loop_test(runs, test_crashtest, 0, 2);
	tcase_add_test(runs, test_bench_json);
	tcase_add_test(runs, test_bench_contract);
	tcase_add_test(runs, test_bench_failed_mode);
	tcase_add_test(runs, test_bench_atomic);
	tcase_add_test(runs, test_crashtest_json_stdout);
	tcase_add_test(runs, test_realdisk_dir_refusals);
	tcase_set_timeout(runs, 120);
	suite_add_tcase(s, runs);
	return s;
}

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[700];
	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		if (e->d_type == DT_DIR)
			remove_tree(sub);
		else
			unlink(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

int main(void)
{
	/* not tmpfs: O_DIRECT needs a filesystem that has it (the backend falls back otherwise) */
	const char *base = getenv("PN_DISK_TEST_DIR") ? getenv("PN_DISK_TEST_DIR") : "/var/tmp";
	snprintf(tmp_dir, sizeof tmp_dir, "%s/pn_test_disk.XXXXXX", base);
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(good, sizeof good, "%s/good.yaml", tmp_dir);
	snprintf(broken, sizeof broken, "%s/broken.yaml", tmp_dir);
	FILE *f = fopen(good, "w");
	fputs(small_scenario, f);
	fclose(f);
	f = fopen(broken, "w");
	fputs(broken_scenario, f);
	fclose(f);
	SRunner *sr = srunner_create(disk_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_tree(tmp_dir);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * files.c: opening inputs and outputs (base layer). See files.h for the rules F1-F5.
 *
 * An output's life, each step in one function:
 *
 *   pn_file_open_out        pn_file_close_out                pn_file_close_out
 *   (F2 check, temporary) -> fflush, fsync, fclose -> (F2 again) -> rename -> done
 *          |                   | any failure          | refused
 *          +-- pn_file_abort_out, pn_file_reset ------+-----------+--> unlink temporary
 *
 * A stream is a stdio cookie over the temporary's descriptor, so that the first failed
 * write(2)'s errno is kept (stdio's error flag forgets it) and reported at the close.
 */
#define _GNU_SOURCE /* fopencookie */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_MAX 16 /* outputs open at once: json, junit, a trace, a segment... */
#define NOT_WHOLE "the content was not written whole" /* a writer's own failure, no errno */

struct input {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct output {
	FILE *f;    /* NULL: the slot is free */
	int fd;     /* the descriptor under f, -1 once closed */
	int err;    /* the first failed write's errno, 0 */
	char *path; /* the file replaced (a symbolic link's target) */
	char *tmp;  /* the temporary; NULL when written in place (F4) */
	pid_t pid;  /* the process that made it: a forked child never removes it (F5) */
};

static struct input *inputs;
static size_t ninputs, inputs_cap;
static struct output outputs[OUT_MAX] = {[0 ... OUT_MAX - 1] = {.fd = -1}};
static unsigned tmp_serial; /* the <n> of PATH.tmp<pid>_<n> */

const char *pn_file_kind(unsigned mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO (named pipe)";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/* ---- inputs ---- */

static const struct input *input_of(const struct stat *st)
{
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
			return &inputs[i];
	return NULL;
}

static void remember(const struct stat *st, const char *path)
{
	if (input_of(st))
		return;
	if (ninputs == inputs_cap) {
		inputs_cap = inputs_cap ? inputs_cap * 2 : 16;
		inputs = realloc(inputs, inputs_cap * sizeof *inputs);
		PN_ASSERT(inputs != NULL);
	}
	inputs[ninputs].dev = st->st_dev;
	inputs[ninputs].ino = st->st_ino;
	inputs[ninputs].path = strdup(path);
	PN_ASSERT(inputs[ninputs].path != NULL);
	ninputs++;
}

void pn_file_note_in(const char *path)
{
	struct stat st;
	if (path && strcmp(path, "-") != 0 && stat(path, &st) == 0)
		remember(&st, path);
}

int pn_file_open_in(const char *path, const char *expected, char *why, size_t why_len)
{
	struct stat st;
	int fd, flags;

	PN_ASSERT(path != NULL && expected != NULL);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) != 0 ||
	    (S_ISREG(st.st_mode) &&
	     ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0))) {
		snprintf(why, why_len, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "it is %s; expected %s", pn_file_kind(st.st_mode), expected);
		close(fd);
		return -1;
	}
	remember(&st, path);
	return fd;
}

FILE *pn_file_fopen_in(const char *path, const char *expected, char *why, size_t why_len)
{
	int fd = pn_file_open_in(path, expected, why, why_len);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (fd >= 0 && !f) {
		snprintf(why, why_len, "%s", strerror(errno));
		close(fd);
	}
	return f;
}

/* ---- outputs ---- */

/* F2: false with why when the file at path (followed) is an input. */
static bool not_an_input(const char *path, char *why, size_t why_len)
{
	struct stat st;
	const struct input *in = stat(path, &st) == 0 ? input_of(&st) : NULL;

	if (in)
		snprintf(why, why_len,
			 "it is the input '%s' of this command (the same file); an output never "
			 "replaces an input",
			 in->path);
	return in == NULL;
}

static ssize_t cookie_write(void *arg, const char *buf, size_t len)
{
	struct output *o = arg;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(o->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->err)
				o->err = n < 0 ? errno : EIO;
			/* the bytes written, never -1: stdio subtracts what a cookie returns from
			 * what it still has to write, and -1 sent fwrite reading past its buffer */
			return (ssize_t)done;
		}
		done += (size_t)n;
	}
	return (ssize_t)len;
}

static int cookie_close(void *arg)
{
	struct output *o = arg;
	int rc = o->fd >= 0 ? close(o->fd) : 0;

	if (rc != 0 && !o->err)
		o->err = errno;
	o->fd = -1;
	return rc;
}

static struct output *output_of(FILE *f)
{
	for (size_t i = 0; f && i < OUT_MAX; i++)
		if (outputs[i].f == f)
			return &outputs[i];
	return NULL;
}

static void release(struct output *o)
{
	char *path = o->path, *tmp = o->tmp;

	*(FILE *volatile *)&o->f = NULL; /* first: on_fatal_signal skips the slot from here */
	*o = (struct output){.fd = -1};
	free(path);
	free(tmp);
}

/* F4: whether path is written in place (it exists and is not a regular file, or names a
 * descriptor or device); the resolved path (a symbolic link's target) in *target. */
static bool in_place(const char *path, char **target, char *why, size_t why_len)
{
	struct stat st;
	char *real = realpath(path, NULL);

	*target = real ? real : strdup(path);
	PN_ASSERT(*target != NULL);
	if (stat(path, &st) != 0)
		return false;
	if (S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "it is a directory; expected a file to write");
		return false;
	}
	return !S_ISREG(st.st_mode) || strncmp(path, "/dev/", 5) == 0 ||
	       strncmp(path, "/proc/", 6) == 0 || strncmp(*target, "/proc/", 6) == 0;
}

/* Creates the temporary beside o->path (mode 0666 less the umask, or the replaced file's). */
static int create_tmp(struct output *o)
{
	struct stat st;
	size_t len = strlen(o->path) + 32;
	int fd = -1;

	PN_ASSERT(o->tmp == NULL && o->path != NULL);
	o->tmp = malloc(len);
	o->pid = getpid();
	PN_ASSERT(o->tmp != NULL);
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		snprintf(o->tmp, len, "%s.tmp%ld_%u", o->path, (long)getpid(), tmp_serial++);
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd >= 0 && stat(o->path, &st) == 0 && S_ISREG(st.st_mode))
		(void)fchmod(fd, st.st_mode & 07777);
	return fd;
}

FILE *pn_file_open_out(const char *path, char *why, size_t why_len)
{
	static const cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
	struct output *o = NULL;
	bool direct;

	why[0] = '\0';
	if (strcmp(path, "-") == 0)
		return stdout;
	for (size_t i = 0; !o && i < OUT_MAX; i++)
		if (!outputs[i].f)
			o = &outputs[i];
	PN_ASSERT(o != NULL); /* OUT_MAX outputs open at once is a program's bug */
	if (!not_an_input(path, why, why_len))
		return NULL;
	direct = in_place(path, &o->path, why, why_len);
	if (why[0]) {
		release(o);
		return NULL;
	}
	/* F5: a signal between the temporary's creation and its entry in the table (o->f, which
	 * on_fatal_signal looks for) would leave it behind; they wait until it is entered */
	sigset_t fatal, old;
	sigemptyset(&fatal);
	sigaddset(&fatal, SIGINT);
	sigaddset(&fatal, SIGTERM);
	sigaddset(&fatal, SIGHUP);
	sigprocmask(SIG_BLOCK, &fatal, &old);
	o->fd = direct ? open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY) : create_tmp(o);
	if (o->fd < 0 || !(o->f = fopencookie(o, "w", io))) {
		snprintf(why, why_len, "%s", strerror(errno));
		if (o->fd >= 0)
			close(o->fd);
		if (o->tmp)
			unlink(o->tmp);
		release(o);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return NULL;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return o->f;
}

bool pn_file_close_out(FILE *f, bool written, char *why, size_t why_len)
{
	struct output *o = output_of(f);
	bool ok;

	if (f == stdout) {
		errno = 0;
		ok = fflush(f) == 0 && !ferror(f) && written;
		if (!ok)
			snprintf(why, why_len, "%s", errno ? strerror(errno) : NOT_WHOLE);
		return ok;
	}
	PN_ASSERT(o != NULL);
	ok = fflush(f) == 0 && !ferror(f) && written;
	if (ok && o->tmp && fsync(o->fd) != 0 && !o->err)
		o->err = errno;
	ok = fclose(f) == 0 && ok && !o->err;
	if (!ok)
		snprintf(why, why_len, "%s", o->err ? strerror(o->err) : NOT_WHOLE);
	else if (o->tmp && !not_an_input(o->path, why, why_len))
		ok = false;
	else if (o->tmp && rename(o->tmp, o->path) != 0) {
		snprintf(why, why_len, "%s", strerror(errno));
		ok = false;
	}
	if (!ok && o->tmp)
		unlink(o->tmp);
	release(o);
	return ok;
}

void pn_file_abort_out(FILE *f)
{
	struct output *o = output_of(f);

	if (!o)
		return;
	fclose(f);
	if (o->tmp)
		unlink(o->tmp);
	release(o);
}

/* F5: the temporaries of this process go, then the signal does what it would have done. */
static void on_fatal_signal(int sig)
{
	pid_t self = getpid();

	for (size_t i = 0; i < OUT_MAX; i++)
		if (outputs[i].f && outputs[i].tmp && outputs[i].pid == self)
			unlink(outputs[i].tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

void pn_file_catch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction on = {.sa_handler = on_fatal_signal}, old;

	sigemptyset(&on.sa_mask);
	signal(SIGXFSZ, SIG_IGN);
	for (size_t i = 0; i < PN_ARRAY_LEN(sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &on, NULL);
}

void pn_file_reset(void)
{
	for (size_t i = 0; i < OUT_MAX; i++)
		if (outputs[i].f)
			pn_file_abort_out(outputs[i].f);
	for (size_t i = 0; i < ninputs; i++)
		free(inputs[i].path);
	free(inputs);
	inputs = NULL;
	ninputs = inputs_cap = 0;
}

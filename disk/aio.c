/*
 * aio.c: the two I/O methods of aio.h (disk layer), each a table of functions filled with
 * designated initializers; pn_aio_open() picks one.
 *
 * The worker method's queues (both bounded by `depth`, rule A1):
 *
 *   pn_aio_prep --> staged --pn_aio_submit--> queue --worker thread--> done --pn_aio_reap
 *                   (loop's thread only)      (mutex)  syscall         (mutex + eventfd)
 */
#define _GNU_SOURCE /* ppoll */
#include "aio.h"
#include "pn.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#define WORKERS_MAX 8u

/* RWF_ATOMIC (the kernel's UAPI, Linux 6.11): Debian 12's linux-libc-dev (6.1) lacks
 * it. A kernel without it refuses the write (EINVAL, EOPNOTSUPP): the run then fails on its
 * first atomic write, with that error. */
#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif

struct req {
	enum pn_aio_op op;
	int fd;
	void *buf;
	uint32_t len, tag;
	uint64_t offset;
};

struct ring_of_reqs {
	struct req *r;
	uint32_t head, len, cap;
};

struct pn_aio;
struct method {
	enum pn_aio_method id;
	bool (*open)(struct pn_aio *a, char *note, size_t note_len);
	void (*close)(struct pn_aio *a);
	void (*prep)(struct pn_aio *a, const struct req *r);
	bool (*submit)(struct pn_aio *a, int *err);
	uint32_t (*reap)(struct pn_aio *a, struct pn_aio_done *out, uint32_t n, uint64_t wait_ns);
};

struct pn_aio {
	const struct method *m;
	uint32_t depth;
	/* io_uring */
	struct io_uring ring;
	/* worker */
	struct ring_of_reqs staged, queue;
	struct pn_aio_done *done;
	uint32_t ndone;
	pthread_mutex_t lock;
	pthread_cond_t work;
	pthread_t threads[WORKERS_MAX];
	uint32_t nthreads;
	int efd;
	bool stop;
};

static void push_req(struct ring_of_reqs *q, const struct req *r)
{
	if (q->len == q->cap) { /* A1 bounds it; grow rather than lose an operation */
		uint32_t ncap = q->cap ? q->cap * 2 : 64;
		struct req *n = malloc(ncap * sizeof(*n));
		if (!n)
			abort();
		for (uint32_t i = 0; i < q->len; i++)
			n[i] = q->r[(q->head + i) % q->cap];
		free(q->r);
		q->r = n;
		q->head = 0;
		q->cap = ncap;
	}
	q->r[(q->head + q->len++) % q->cap] = *r;
	PN_ASSERT(q->len <= q->cap && q->head < q->cap);
}

static struct req pop_req(struct ring_of_reqs *q)
{
	PN_ASSERT(q->len > 0 && q->head < q->cap); /* callers pop only what they pushed */
	struct req r = q->r[q->head];
	q->head = (q->head + 1) % q->cap;
	q->len--;
	return r;
}

/* ---- io_uring ---- */

static bool uring_open(struct pn_aio *a, char *note, size_t note_len)
{
	uint32_t entries = 8;
	while (entries < a->depth && entries < 4096)
		entries *= 2;
	int rc = io_uring_queue_init(entries, &a->ring, 0);
	if (rc < 0) {
		snprintf(note, note_len, "io_uring_queue_init failed: %s", strerror(-rc));
		return false;
	}
	snprintf(note, note_len, "io_uring (%u entries)", entries);
	return true;
}

static void uring_close(struct pn_aio *a) { io_uring_queue_exit(&a->ring); }

static void uring_prep(struct pn_aio *a, const struct req *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&a->ring);
	if (!sqe) { /* full: send what is there, then there is room */
		io_uring_submit(&a->ring);
		sqe = io_uring_get_sqe(&a->ring);
		if (!sqe)
			abort();
	}
	switch (r->op) {
	case PN_AIO_READ: io_uring_prep_read(sqe, r->fd, r->buf, r->len, r->offset); break;
	case PN_AIO_WRITE: io_uring_prep_write(sqe, r->fd, r->buf, r->len, r->offset); break;
	case PN_AIO_FDATASYNC: io_uring_prep_fsync(sqe, r->fd, IORING_FSYNC_DATASYNC); break;
	case PN_AIO_WRITE_ATOMIC: /* A2 */
		io_uring_prep_write(sqe, r->fd, r->buf, r->len, r->offset);
		sqe->rw_flags = RWF_ATOMIC;
		break;
	}
	sqe->user_data = r->tag;
}

static bool uring_submit(struct pn_aio *a, int *err)
{
	for (;;) {
		int rc = io_uring_submit(&a->ring);
		if (rc >= 0)
			return true;
		if (rc != -EINTR && rc != -EAGAIN) {
			*err = rc;
			return false;
		}
	}
}

static uint32_t uring_take(struct pn_aio *a, struct pn_aio_done *out, uint32_t n)
{
	struct io_uring_cqe *cqes[64];
	uint32_t got = io_uring_peek_batch_cqe(&a->ring, cqes, n < 64 ? n : 64);
	for (uint32_t i = 0; i < got; i++)
		out[i] = (struct pn_aio_done){(uint32_t)cqes[i]->user_data, cqes[i]->res};
	io_uring_cq_advance(&a->ring, got);
	return got;
}

static uint32_t uring_reap(struct pn_aio *a, struct pn_aio_done *out, uint32_t n, uint64_t wait_ns)
{
	uint32_t got = uring_take(a, out, n);
	if (got || !wait_ns)
		return got;
	struct __kernel_timespec ts = {(long long)(wait_ns / 1000000000u),
				       (long long)(wait_ns % 1000000000u)};
	struct io_uring_cqe *cqe;
	if (io_uring_wait_cqe_timeout(&a->ring, &cqe, &ts) < 0)
		return 0; /* -ETIME, -EINTR: nothing yet */
	return uring_take(a, out, n);
}

static const struct method uring_method = {
	.id = PN_AIO_URING,
	.open = uring_open,
	.close = uring_close,
	.prep = uring_prep,
	.submit = uring_submit,
	.reap = uring_reap,
};

/* ---- worker threads ---- */

static int64_t do_syscall(const struct req *r)
{
	if (r->op == PN_AIO_FDATASYNC)
		return fdatasync(r->fd) == 0 ? 0 : -errno;
	if (r->op == PN_AIO_WRITE_ATOMIC) { /* A2: one system call, whole or an error */
		struct iovec iov = {.iov_base = r->buf, .iov_len = r->len};
		ssize_t n;
		do
			n = pwritev2(r->fd, &iov, 1, (off_t)r->offset, RWF_ATOMIC);
		while (n < 0 && errno == EINTR);
		return n < 0 ? -errno : n;
	}
	uint32_t at = 0;
	while (at < r->len) {
		ssize_t n = r->op == PN_AIO_READ ? pread(r->fd, (uint8_t *)r->buf + at, r->len - at,
							 (off_t)(r->offset + at))
						 : pwrite(r->fd, (uint8_t *)r->buf + at,
							  r->len - at, (off_t)(r->offset + at));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break; /* end of file: a short read */
		at += (uint32_t)n;
	}
	return at;
}

static void *worker_main(void *arg)
{
	struct pn_aio *a = arg;
	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->stop && a->queue.len == 0)
			pthread_cond_wait(&a->work, &a->lock);
		if (a->stop)
			break;
		struct req r = pop_req(&a->queue);
		pthread_mutex_unlock(&a->lock);
		int64_t res = do_syscall(&r);
		pthread_mutex_lock(&a->lock);
		a->done[a->ndone++] = (struct pn_aio_done){r.tag, res};
		uint64_t one = 1;
		if (write(a->efd, &one, sizeof(one)) < 0) { /* the counter cannot overflow here */
		}
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static bool worker_open(struct pn_aio *a, char *note, size_t note_len)
{
	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->done = malloc(a->depth * sizeof(*a->done));
	if (a->efd < 0 || !a->done) {
		snprintf(note, note_len, "worker: %s", strerror(errno));
		return false;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	uint32_t want = a->depth < WORKERS_MAX ? a->depth : WORKERS_MAX;
	for (a->nthreads = 0; a->nthreads < want; a->nthreads++)
		if (pthread_create(&a->threads[a->nthreads], NULL, worker_main, a) != 0)
			break;
	if (a->nthreads == 0) {
		snprintf(note, note_len, "worker: cannot start a thread");
		return false;
	}
	size_t l = strlen(note);
	snprintf(note + l, note_len - l, "worker (%u threads doing pread/pwrite/fdatasync)",
		 a->nthreads);
	return true;
}

static void worker_close(struct pn_aio *a)
{
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	for (uint32_t i = 0; i < a->nthreads; i++)
		pthread_join(a->threads[i], NULL);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->work);
	close(a->efd);
	free(a->done);
	free(a->staged.r);
	free(a->queue.r);
}

static void worker_prep(struct pn_aio *a, const struct req *r) { push_req(&a->staged, r); }

static bool worker_submit(struct pn_aio *a, int *err)
{
	if (a->staged.len == 0)
		return true;
	pthread_mutex_lock(&a->lock);
	while (a->staged.len) {
		struct req r = pop_req(&a->staged);
		push_req(&a->queue, &r);
	}
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	return true;
}

static uint32_t worker_take(struct pn_aio *a, struct pn_aio_done *out, uint32_t n)
{
	uint64_t count;
	if (read(a->efd, &count, sizeof(count)) < 0) { /* EAGAIN: nothing signalled */
	}
	pthread_mutex_lock(&a->lock);
	uint32_t got = a->ndone < n ? a->ndone : n;
	PN_ASSERT(got <= n && got <= a->ndone);
	memcpy(out, a->done, got * sizeof(*out));
	memmove(a->done, a->done + got, (a->ndone - got) * sizeof(*out));
	a->ndone -= got;
	pthread_mutex_unlock(&a->lock);
	return got;
}

static uint32_t worker_reap(struct pn_aio *a, struct pn_aio_done *out, uint32_t n, uint64_t wait_ns)
{
	uint32_t got = worker_take(a, out, n);
	if (got || !wait_ns)
		return got;
	struct pollfd p = {.fd = a->efd, .events = POLLIN};
	struct timespec ts = {(time_t)(wait_ns / 1000000000u), (long)(wait_ns % 1000000000u)};
	ppoll(&p, 1, &ts, NULL);
	return worker_take(a, out, n);
}

static const struct method worker_method = {
	.id = PN_AIO_WORKER,
	.open = worker_open,
	.close = worker_close,
	.prep = worker_prep,
	.submit = worker_submit,
	.reap = worker_reap,
};

/* ---- the table's users ---- */

struct pn_aio *pn_aio_open(uint32_t depth, char *note, size_t note_len)
{
	const char *force = getenv("PN_IO_METHOD");
	struct pn_aio *a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(note, note_len, "out of memory");
		return NULL;
	}
	a->depth = depth ? depth : 1;
	note[0] = '\0';
	if (force && strcmp(force, "worker") != 0 && strcmp(force, "io_uring") != 0) {
		snprintf(note, note_len, "PN_IO_METHOD='%s' is not a method (io_uring or worker)",
			 force);
		free(a);
		return NULL;
	}
	if (force && strcmp(force, "worker") == 0)
		snprintf(note, note_len, "PN_IO_METHOD=worker: ");
	else if (uring_open(a, note, note_len)) {
		a->m = &uring_method;
		return a;
	} else if (force) { /* io_uring was asked for by name: no fallback */
		free(a);
		return NULL;
	} else {
		size_t l = strlen(note);
		snprintf(note + l, note_len - l, "; falling back to ");
	}
	if (!worker_open(a, note, note_len)) {
		free(a);
		return NULL;
	}
	a->m = &worker_method;
	return a;
}

void pn_aio_close(struct pn_aio *a)
{
	if (!a)
		return;
	a->m->close(a);
	free(a);
}

enum pn_aio_method pn_aio_method_of(const struct pn_aio *a) { return a->m->id; }

const char *pn_aio_method_name(enum pn_aio_method m)
{
	return m == PN_AIO_URING ? "io_uring" : "worker";
}

void pn_aio_prep(struct pn_aio *a, enum pn_aio_op op, int fd, void *buf, uint32_t len,
		 uint64_t offset, uint32_t tag)
{
	struct req r = {.op = op, .fd = fd, .buf = buf, .len = len, .tag = tag, .offset = offset};
	PN_ASSERT(fd >= 0 && op <= PN_AIO_WRITE_ATOMIC); /* an open file, a known operation */
	a->m->prep(a, &r);
}

bool pn_aio_submit(struct pn_aio *a, int *err) { return a->m->submit(a, err); }

uint32_t pn_aio_reap(struct pn_aio *a, struct pn_aio_done *out, uint32_t n, uint64_t wait_ns)
{
	return a->m->reap(a, out, n, wait_ns);
}

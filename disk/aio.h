/*
 * aio.h: asynchronous I/O on real files (disk layer), two methods behind one table, as
 * PostgreSQL's io_method selects one:
 *
 *   io_uring  liburing: one ring, SQEs prepared as the engine dispatches, submitted once per
 *             turn of the loop, completions reaped without a system call when present;
 *   worker    a pool of threads doing pread / pwrite / fdatasync, for kernels or sandboxes
 *             where io_uring_queue_init() fails (or PN_IO_METHOD=worker forces it).
 *
 * An operation carries a tag (the engine's I/O index) and comes back once, with the result
 * of the system call (bytes, or -errno). An fsync is always fdatasync: the data and WAL files
 * are preallocated, so no metadata change needs a full fsync for the data to be found.
 * Rule A1: at most `depth` operations are outstanding; the caller counts them (disk.c).
 * Rule A2: PN_AIO_WRITE_ATOMIC is a write with RWF_ATOMIC (Linux 6.11+: the device stores it
 * whole or not at all): io_uring's rw_flags, or pwritev2 in a worker, sent once, never split
 * (a short one is an error). The caller checks first that the file takes it (disk.h
 * pn_disk_use_atomic: O_DIRECT, and a length within the unit statx reports).
 */
#ifndef PN_AIO_H
#define PN_AIO_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

enum pn_aio_method { PN_AIO_URING, PN_AIO_WORKER };
enum pn_aio_op { PN_AIO_READ, PN_AIO_WRITE, PN_AIO_FDATASYNC, PN_AIO_WRITE_ATOMIC };

struct pn_aio_done {
	uint32_t tag;
	int64_t res; /* bytes transferred, 0 for a sync, or -errno */
};

struct pn_aio;

/* Opens the method PN_IO_METHOD names ("io_uring", "worker"), or io_uring falling back to
 * worker when the ring cannot be set up. `note` says which and why (for stderr and reports).
 * NULL (note set) when neither works. */
struct pn_aio *pn_aio_open(uint32_t depth, char *note, size_t note_len);
void pn_aio_close(struct pn_aio *a);
enum pn_aio_method pn_aio_method_of(const struct pn_aio *a);
const char *pn_aio_method_name(enum pn_aio_method m);
/* Queues one operation (sent at the next pn_aio_submit). */
void pn_aio_prep(struct pn_aio *a, enum pn_aio_op op, int fd, void *buf, uint32_t len,
		 uint64_t offset, uint32_t tag);
/* Sends what was queued. Returns false (and -errno in *err) if the kernel refused. */
bool pn_aio_submit(struct pn_aio *a, int *err);
/* Up to n completions; waits at most wait_ns for the first when none is ready (0: no wait). */
uint32_t pn_aio_reap(struct pn_aio *a, struct pn_aio_done *out, uint32_t n, uint64_t wait_ns);

#endif

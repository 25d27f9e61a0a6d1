/*
 * mpirank.h: one `penumbra check` spread over the ranks of an MPI job (cli layer; docs/cluster.md).
 *
 * Rank 0 runs the check as --jobs does (cli/cmd_check.c K9): its plans hand out work units
 * (model/unit.h) and merge their results; here are only the wire and the other ranks. A rank
 * other than 0 serves: it takes one unit at a time, checks it in a child process of its own
 * (so that a unit that crashes costs the unit, not the rank), and sends back the unit's
 * pn_unit_result_encode() bytes, with a heartbeat every PN_MPI_BEAT_MS while it works.
 *
 * Rules:
 *   M1 Every unit sent to a rank gets exactly one answer from it, a result or a failure
 *      (the unit's child died or was cancelled), unless the rank is lost. A rank is busy
 *      from the unit sent to its answer; rank 0 sends only to a rank that is not busy.
 *   M2 A busy rank that sent nothing for the rank timeout is lost: it died or hangs. Its unit
 *      is the caller's to hand out again (model/unit.h U5); nothing is sent to it again and
 *      anything it sends later is dropped. A job that lost a rank ends with MPI_Abort (the
 *      lost rank may never reach MPI_Finalize), with the check's exit status.
 *   M3 Without MPI (PN_MPI=OFF) only pn_mpi_built() and pn_mpi_detected() may be called.
 *
 * Messages (tags), every integer little-endian:
 *   UNIT    0 -> r  u32 item, u32 unit id, PN_UNIT_BYTES of pn_unit_encode()
 *   CANCEL  0 -> r  nothing: drop the unit in work (its answer is a failure)
 *   STOP    0 -> r  nothing: the check is over
 *   HELLO   r -> 0  u32 pid, then the host name (once, at the start)
 *   BEAT    r -> 0  u32 item, u32 unit id (every PN_MPI_BEAT_MS of work on a unit)
 *   RESULT  r -> 0  u32 item, u32 unit id, the unit result's bytes
 *   FAILED  r -> 0  u32 item, u32 unit id, why (text, no NUL)
 */
#ifndef PN_MPIRANK_H
#define PN_MPIRANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unit.h"

#define PN_MPI_BEAT_MS 500

/* Whether this binary was built with MPI (CMake option PN_MPI). */
bool pn_mpi_built(void);
/* Whether the process was started by mpirun / srun (OMPI_COMM_WORLD_SIZE, PMIX_RANK or
 * PMI_RANK in the environment). */
bool pn_mpi_detected(void);

/* MPI_Init; the rank and the number of ranks. */
void pn_mpi_start(int *rank, int *size);
/* MPI_Finalize, or MPI_Abort(rc) when a rank was lost (M2) or abort is set (rank 0 stopped
 * by a signal: mpirun tears the job down). Returns rc. */
int pn_mpi_end(int rc, bool abort);

/* ---- a rank other than 0 ---- */
/* Checks one unit of item `item` in the calling (child) process: the result's bytes, malloc'd. */
typedef uint8_t *(*pn_mpi_unit_fn)(void *arg, uint32_t item, const struct pn_unit *u, size_t *len);
/* Serves units until STOP. Test hooks: PN_TEST_MPI_KILL=R (rank R's first unit's child is
 * killed, SIGKILL, before its result), PN_TEST_MPI_HANG=R (rank R hangs, in pause(), on its first
 * unit), PN_TEST_MPI_DIE=R (rank R kills itself, SIGKILL, on its first unit). */
void pn_mpi_serve(pn_mpi_unit_fn fn, void *arg);

/* ---- rank 0 ---- */
enum pn_mpi_kind { PN_MPI_RESULT, PN_MPI_FAILED, PN_MPI_LOST };

struct pn_mpi_event {
	enum pn_mpi_kind kind;
	int rank;
	uint32_t item, unit;
	uint8_t *bytes; /* RESULT: the unit result's bytes (malloc'd: the caller frees them) */
	size_t len;
	char why[320]; /* FAILED, LOST: why, naming the rank, its pid and host */
};

/* The rank table; timeout_s: M2's rank timeout. */
void pn_mpi_lead(int size, double timeout_s);
bool pn_mpi_idle(int rank); /* neither busy nor lost */
int pn_mpi_live(void);      /* ranks other than 0 not lost */
void pn_mpi_send_unit(int rank, uint32_t item, uint32_t unit, const struct pn_unit *u);
void pn_mpi_cancel(int rank); /* the unit in work on a busy rank is no longer needed (once) */
void pn_mpi_name(int rank, char *out, size_t len); /* "rank R (pid P on HOST)" */
/* The busy rank's unit: false when the rank is not busy. */
bool pn_mpi_busy(int rank, uint32_t *item, uint32_t *unit);
/* Waits at most wait_ms for the next answer or lost rank (M1, M2): true with it. */
bool pn_mpi_next(struct pn_mpi_event *ev, int wait_ms);
/* Rank 0 was busy itself (a trace): every busy rank's silence restarts from now. */
void pn_mpi_touch(void);
/* STOP to every rank not lost; the message and byte counts so far. */
void pn_mpi_stop(uint64_t *messages, uint64_t *bytes);

#endif

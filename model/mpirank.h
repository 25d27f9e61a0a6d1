/*
 * mpirank.h: the wire of the MPI executor (model layer, built with PN_MPI only;
 * docs/cluster.md): the ranks of one job and their messages.
 *
 * Rank 0 leads (exec_mpi.c): the work list (model/exec.h) hands out units and merges their
 * results; here are only the wire and the other ranks. A rank other than 0 serves: it takes
 * one unit at a time, runs it in a child process of its own (so that a unit that crashes
 * costs the unit, not the rank), and sends back the unit's result bytes (the list's run()),
 * with a heartbeat every PN_MPI_BEAT_MS while it works.
 *
 * Rules:
 *   MR1 Every unit sent to a rank gets exactly one answer from it, a result or a failure
 *      (the unit's child died or was cancelled), unless the rank is lost. A rank is busy
 *      from the unit sent to its answer; rank 0 sends only to a rank that is not busy.
 *   MR2 A busy rank that sent nothing for the rank timeout is lost: it died or hangs. Its unit
 *      is the caller's to hand out again (model/unit.h U5); nothing is sent to it again and
 *      anything it sends later is dropped. A job that lost a rank ends with MPI_Abort (the
 *      lost rank may never reach MPI_Finalize), with the check's exit status.
 *   MR3 Without MPI (PN_MPI=OFF) nothing here is compiled; with it, this file, mpilookup.c and
 *      exec_mpi.c are the module libpn_exec_mpi.so, the only code that links libmpi, loaded
 *      when MPI is asked for (model/executor.c): otherwise the table has no MPI row.
 *   MR4 Lookups (model/unit.h U6), with 2 ranks or more: the owner of a state key is rank
 *      1 + pn_unit_key_hash() mod (ranks - 1); it keeps a pn_unit_table. A unit's child talks
 *      to its rank over a channel (a pipe for its frames, a socket pair for the answers); the
 *      rank sends the child's recovered keys to their owners (one KEYS batch per owner) and
 *      its questions (one ASK per owner), and gives the child the answers once every owner
 *      asked has answered, or is lost, or PN_MPI_ASK_WAIT_S (+ 2 s) has passed; a key not
 *      answered is unknown (the unit runs again: never a wrong result). An owner answers at
 *      once the keys it knows, holds a question with unknown keys until they come or
 *      PN_MPI_ASK_WAIT_S has passed. A rank serves owners' messages while idle and while
 *      busy; rank 0 owns no key and passes its own child's frames on. Rank 0 tells every
 *      rank of a lost rank (LOST): its keys are unknown from then on. At STOP each rank
 *      sends rank 0 its TALLY, then every rank drains its sends and meets the others in a
 *      barrier before MPI_Finalize.
 *
 * Messages (tags), every integer little-endian:
 *   UNIT    0 -> r  u32 item, u32 unit id, PN_UNIT_BYTES of pn_unit_encode()
 *   CANCEL  0 -> r  nothing: drop the unit in work (its answer is a failure)
 *   STOP    0 -> r  nothing: the check is over
 *   HELLO   r -> 0  u32 pid, then the host name (once, at the start)
 *   BEAT    r -> 0  u32 item, u32 unit id (every PN_MPI_BEAT_MS of work on a unit)
 *   RESULT  r -> 0  u32 item, u32 unit id, the unit result's bytes
 *   FAILED  r -> 0  u32 item, u32 unit id, why (text, no NUL)
 *   KEYS    r -> o  u32 item, u32 schedule, then per state u64 key, u64 WAL end
 *   ASK     r -> o  u32 question id, u32 item, u32 schedule, then per state u64 key
 *   ANSWER  o -> r  u32 question id, then per key asked u64 WAL end (UINT64_MAX: unknown)
 *   LOST    0 -> r  u32 the rank lost
 *   TALLY   r -> 0  u64 keys asked, answered, relearned, units run again, lookup messages
 *                   and bytes the rank sent
 * A channel's frames (child -> rank): u32 type (1 KEYS, 2 ASK, 3 COUNTS), u32 length, the
 * body: KEYS and ASK as the messages above without the question id, COUNTS u64 relearned,
 * asked, answered, run again; the answer (rank -> child): u64 per key asked.
 */
#ifndef PN_MPIRANK_H
#define PN_MPIRANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec.h"
#include "mpilookup.h"

#define PN_MPI_BEAT_MS 500

/* MPI_Init; the rank and the number of ranks. */
void pn_mpi_start(int *rank, int *size);
/* MPI_Finalize, or MPI_Abort(rc) when a rank was lost (MR2) or abort is set (rank 0 stopped
 * by a signal: mpirun tears the job down). Returns rc. */
int pn_mpi_end(int rc, bool abort);

/* ---- a rank other than 0 ---- */
/* Serves units (and, MR4, owners' messages) until STOP: each run by w->run() in a child
 * process, with lookups (MR4) when they are on. Test hooks: PN_TEST_MPI_KILL=R (rank
 * R's first unit's child is killed, SIGKILL, before its result), PN_TEST_MPI_HANG=R (rank R
 * hangs, in pause(), on its first unit), PN_TEST_MPI_DIE=R (rank R kills itself, SIGKILL, on
 * its first unit), PN_TEST_MPI_WRONG_END=1 (every owner answers a WAL end one byte short). */
void pn_mpi_serve(const struct pn_exec_work *w);

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

/* The rank table; timeout_s: MR2's rank timeout. */
void pn_mpi_lead(int size, double timeout_s);
bool pn_mpi_idle(int rank); /* neither busy nor lost */
int pn_mpi_live(void);      /* ranks other than 0 not lost */
void pn_mpi_send_unit(int rank, const struct pn_exec_unit *u);
void pn_mpi_cancel(int rank); /* the unit in work on a busy rank is no longer needed (once) */
void pn_mpi_name(int rank, char *out, size_t len); /* "rank R (pid P on HOST)" */
/* The busy rank's unit: false when the rank is not busy. */
bool pn_mpi_busy(int rank, uint32_t *item, uint32_t *unit);
/* Waits at most wait_ms for the next answer or lost rank (MR1, MR2): true with it. */
bool pn_mpi_next(struct pn_mpi_event *ev, int wait_ms);
/* Rank 0 was busy itself (a trace): every busy rank's silence restarts from now. */
void pn_mpi_touch(void);
/* STOP to every rank not lost; the tally (each rank's TALLY awaited when wait is set). */
void pn_mpi_stop(struct pn_mpi_tally *t, bool wait);

#endif

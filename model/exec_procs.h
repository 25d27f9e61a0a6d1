/*
 * exec_procs.h: the process executor and its pool of children (model layer; exec.h E1-E6).
 *
 * --jobs N: N slots, each a child process running a unit at a time and sending its bytes back
 * on a pipe of its own. The pool is also what the MPI executor uses for rank 0's own unit (one
 * slot, with a channel for the lookups between ranks).
 *
 * Rules:
 *   EP1 The leader never blocks on one child without draining every child's pipe (one poll()
 *      over all of them); pipes are shrunk to one page (PN_POOL_PIPE_BYTES) so that a
 *      leader that stopped draining would deadlock in every test run, not only on big
 *      outputs.
 *   EP2 A child's messages, each a u32 type, a u32 length and that many bytes:
 *        PROGRESS  u64 crash states, u64 schedules, at most every PN_EXEC_TICK_MS
 *        RESULT    the unit's result bytes (run()'s), once, last
 *      A child that exits without a whole RESULT has none.
 *   EP3 A unit failed() once is handed out again, never to the process it failed in (that
 *      one is gone); a child whose unit the list cancelled is killed at once (SIGKILL), a
 *      worker too (EP5), and its bytes are dropped unread (E2).
 *   EP4 Test hook: with PN_TEST_KILL_UNIT=T in the environment, the child of entry 0's unit
 *      0 (not a leader unit) kills itself (SIGKILL) before its result, the first T times it
 *      is run (tests/jobs_death.sh).
 *   EP5 A child is a worker: after its RESULT it reads the next unit the leader sends on a
 *      request socket of its own (a struct pn_exec_unit, whole) and runs it, until the
 *      leader shuts the socket (the list has no unit left: pn_pool_retire, or a unit that
 *      needs a child of its own). So a process is forked per slot, not per unit, and what a
 *      unit leaves for the next in its process (the verdict cache's spare table, model/cache.h
 *      V6; warm allocator arenas) is kept. A unit's result is a function of the unit alone,
 *      whichever units ran in its process before (E1: another rank may run it; the serial
 *      executor runs all of them in one process). Not a worker, a child of its own: a
 *      leader unit (E4: the child sees the leader as it is when the unit is handed out), a
 *      unit with a channel (MPI), EP4's. A worker that died idle is reaped when it is next
 *      handed a unit (MSG_NOSIGNAL: no SIGPIPE), and the unit goes to a new child.
 */
#ifndef PN_EXEC_PROCS_H
#define PN_EXEC_PROCS_H

#include <poll.h>
#include <sys/types.h>

#include "exec.h"

extern const struct pn_exec_ops pn_exec_procs_ops;

#define PN_POOL_PIPE_BYTES 4096 /* EP1: one page */

/* MPI's lookups channel to rank 0's own unit's child (exec_mpi.c; mpirank.h MR4). */
struct pn_pool_channel {
	void (*open)(void);                                       /* before fork() */
	bool (*child)(struct pn_unit_lookup *lk, uint32_t entry); /* in the child: lookups on */
	void (*parent)(void);                                     /* in the leader after fork() */
	void (*close)(void);                                      /* once the child is reaped */
};

/* One child and what it sent so far. */
struct pn_pool_slot {
	struct pn_exec_unit unit; /* valid while busy */
	pid_t pid;                /* 0: no process */
	int fd;
	int req;      /* EP5: the worker's request socket; -1: a child of one unit, or none */
	bool busy;    /* a unit handed out and not handed back */
	uint8_t *buf; /* bytes read, not yet whole messages */
	size_t len, cap;
	uint8_t *result; /* RESULT's bytes, when it came whole */
	size_t result_len;
	bool got, cancelled, exited; /* exited: waited for (status); its pid may be reused */
	int status;
	uint64_t states_live, schedules_live; /* its last PROGRESS */
};

struct pn_pool {
	struct pn_pool_slot *slots;
	uint32_t n, running; /* slots, processes alive */
	uint32_t busy;       /* slots running a unit */
	const struct pn_exec_work *w;
	const volatile sig_atomic_t *stop;
	const struct pn_pool_channel *chan; /* NULL: none */
	struct pollfd *pfd;                 /* n of them: one poll() over every pipe (EP1) */
	uint32_t *who;                      /* pfd[k] is slot who[k] */
};

void pn_pool_init(struct pn_pool *p, uint32_t n, const struct pn_exec_work *w,
		  const volatile sig_atomic_t *stop, const struct pn_pool_channel *chan);
void pn_pool_free(struct pn_pool *p);
/* Starts u in slot i, which runs no unit: on its idle worker when u may go to one (EP5), else
 * in a new child. */
void pn_pool_spawn(struct pn_pool *p, uint32_t i, const struct pn_exec_unit *u);
/* Waits at most wait_ms for any child's bytes; reads them; a child whose pipe is closed is
 * reaped and its unit handed back (done or failed, E2), then the units the list cancelled
 * are killed (EP3). Returns how many pipes had something. */
int pn_pool_collect(struct pn_pool *p, int wait_ms);
/* EP3: kills the running children whose units the list no longer needs. */
void pn_pool_cancel(struct pn_pool *p);
/* E5: every child terminated and reaped, the results that had come whole handed back. */
void pn_pool_stop(struct pn_pool *p);
/* EP5: every idle worker ends (its request socket shut) and is reaped. */
void pn_pool_retire(struct pn_pool *p);
/* The crash states and schedules the running children last told of. */
void pn_pool_live(const struct pn_pool *p, uint64_t *states, uint64_t *schedules);

#endif

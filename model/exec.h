/*
 * exec.h: how units of work are run (model layer; docs/ARCHITECTURE.md "Executors"): the one
 * unit-of-work interface and the executor table's row type. No function is defined for this
 * header: the table and its entry points are model/executor.h, each row its own file.
 *
 * A work list (struct pn_exec_work, filled by its owner: `check`'s scenarios, a bounded
 * search's schedules, a crash checker's runs) is a set of entries, each cut into units. A
 * unit (struct pn_exec_unit) is an index into it, (entry, id), with the bytes a worker needs
 * to run it (desc, opaque to the executor). An executor asks the list for ready units
 * (next), has each run in a worker (run: in this process, in a child process or on another
 * MPI rank), brings the result's bytes back and hands them to the list (done), or says why
 * there are none (failed). The executors are rows of one table, chosen by one setting as
 * PostgreSQL chooses io_method:
 *
 *   method             worker                        row
 *   PN_EXEC_SERIAL     this process, one unit at a   exec_serial.c
 *                      time, in the list's order
 *   PN_EXEC_PROCESSES  N child processes (fork, one  exec_procs.c
 *                      pipe each, drained by poll)
 *   PN_EXEC_MPI        the ranks of an MPI job, each exec_mpi.c (built with PN_MPI only)
 *                      unit in a child of its rank
 *
 * Rules (every executor keeps them; the work list relies on nothing else):
 *   E1 next() is called only by the leading process (rank 0), and done(), failed(),
 *      cancelled(), tick() and note() too; run() is called in a worker, which may be a copy
 *      of the leader made by fork() (a child sees the list as it was when it was made) or
 *      another rank that built the same list from the same inputs.
 *   E2 Every unit handed out gets exactly one of done() or failed(), unless the list said
 *      it is cancelled (its result is then dropped unseen) or the stop flag was raised
 *      before its result came (it is then not finished: dropped).
 *   E3 Determinism is the list's order, not the workers': results may arrive in any order,
 *      so a list merges them by (entry, id) (model/unit.h U1); an executor never reorders,
 *      merges or reads a result's bytes. The serial executor runs units in the order next()
 *      gives them, so a list that gives whole entries (whole_units) gets pn_check_scenario's
 *      order as it is.
 *   E4 A unit marked leader runs where the leader's files are: in the leader's process or
 *      a child of it, never on another rank (a trace is written into the leader's folder).
 *   E5 When *stop becomes non-zero, no unit is handed out any more; the workers running are
 *      terminated (SIGTERM, then SIGKILL after PN_EXEC_KILL_GRACE_MS) and reaped, and the
 *      results that had come whole are still handed to done(). A child dies with its parent
 *      (PR_SET_PDEATHSIG).
 *   E6 A worker's bytes come back whole or not at all: a worker that dies, exits non-zero
 *      or sends bytes that do not decode is failed(), never half a result.
 */
#ifndef PN_EXEC_H
#define PN_EXEC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checker.h"
#include "unit.h"

#define PN_EXEC_DESC_BYTES 48      /* a unit's description: model/unit.h's PN_UNIT_BYTES */
#define PN_EXEC_TICK_MS 250        /* progress from a worker, tick() in the leader */
#define PN_EXEC_KILL_GRACE_MS 2000 /* E5: SIGTERM, then SIGKILL after this */

enum pn_exec_method { PN_EXEC_SERIAL, PN_EXEC_PROCESSES, PN_EXEC_MPI, PN_EXEC_METHODS };

/* One unit: an index into the work list and what a worker needs to run it. */
struct pn_exec_unit {
	uint32_t entry; /* which entry of the list (a scenario) */
	uint32_t id;    /* which unit of that entry */
	bool leader;    /* E4: runs in the leader's process or a child of it */
	uint8_t desc[PN_EXEC_DESC_BYTES];
};

/* What a worker is given with its unit: where its progress goes and, under MPI, the lookups
 * between ranks (model/unit.h U6). Either may be NULL. */
struct pn_exec_ctx {
	pn_check_progress_fn progress;
	void *progress_arg;
	struct pn_unit_lookup *lookup;
	const volatile sig_atomic_t *stop;
};

/* The work list: its owner's callbacks (E1). */
struct pn_exec_work {
	void *arg;
	/* A ready unit not handed out yet: true with it; false, none now (more may become
	 * ready once results come). */
	bool (*next)(void *arg, struct pn_exec_unit *u);
	/* In a worker: runs u, its result's bytes (malloc'd, *len set). */
	uint8_t *(*run)(void *arg, const struct pn_exec_unit *u, const struct pn_exec_ctx *ctx,
			size_t *len);
	/* u's result: true when merged; false when the bytes do not decode (why says why; the
	 * executor then calls failed()). */
	bool (*done)(void *arg, const struct pn_exec_unit *u, const uint8_t *bytes, size_t len,
		     char *why, size_t why_len);
	/* u gave no result: why (naming the worker when it is a rank). */
	void (*failed)(void *arg, const struct pn_exec_unit *u, const char *why);
	/* Whether a unit handed out is no longer needed (its worker is killed, E2). */
	bool (*cancelled)(void *arg, uint32_t entry, uint32_t id);
	/* About every PN_EXEC_TICK_MS and after results: crash states and schedules of the
	 * units running now, as their workers last said. */
	void (*tick)(void *arg, uint64_t states_live, uint64_t schedules_live);
	/* An entry's name, for the executor's messages. */
	const char *(*name)(void *arg, uint32_t entry);
	/* One line for stderr (the list clears its progress line first). */
	void (*note)(void *arg, const char *line);
};

struct pn_exec;

/* A row of the executor table (model/executor.c). */
struct pn_exec_ops {
	const char *name; /* "serial", "processes", "mpi" */
	/* Before anything else (MPI_Init): x->rank, x->ranks, x->workers set. NULL: nothing. */
	void (*start)(struct pn_exec *x);
	/* The leader: every unit of w run and handed back (or *stop). */
	void (*lead)(struct pn_exec *x, const struct pn_exec_work *w);
	/* A process that does not lead (an MPI rank other than 0): serves units until the
	 * leader is done. NULL: every process leads. */
	void (*serve)(struct pn_exec *x, const struct pn_exec_work *w);
	/* The end of the job; returns the exit status (MPI: MPI_Abort when a rank was lost or
	 * aborted is set). NULL: rc. */
	int (*end)(struct pn_exec *x, int rc, bool aborted);
};

/* One executor as chosen for one command. */
struct pn_exec {
	enum pn_exec_method method;
	const struct pn_exec_ops *ops;
	uint32_t workers;      /* processes: the children at once; MPI: ranks - 1 (at least 1) */
	double rank_timeout_s; /* MPI: a rank silent this long in a unit is lost (mpirank.h MR2) */
	const volatile sig_atomic_t *stop; /* E5 */
	int rank, ranks;                   /* MPI: this process's rank, the job's (else 0, 0) */
	bool whole_units;                  /* E3: the serial executor runs whole entries */
	char summary[640]; /* after lead(): a line about the run (MPI's ranks and messages) */
};

#endif

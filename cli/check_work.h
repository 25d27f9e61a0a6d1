/*
 * check_work.h: the work list of `penumbra check` (cli layer; model/exec.h is the interface
 * it fills, cmd_check.c the command that prints what it gives).
 *
 * Its entries are the scenarios named, in that order; an entry's units are, with an executor
 * that runs whole entries (the serial one), the whole scenario (pn_check_scenario() and its
 * trace), and otherwise its plan's work units (model/unit.h U1-U6) and then, for a
 * violation, its trace (a leader unit: written into the leader's folder, exec.h E4). A
 * scenario is finished when its plan's merged result is in and its trace written; the
 * printer (cmd_check.c) is told through `ready`.
 *
 * A result's bytes: a work unit's, pn_unit_result_encode()'s; a whole scenario's or a
 * trace's, its struct check_outcome then ncov pairs of u64 (coverage hits, true then false,
 * per pn_testcase_all() site) that the worker's process hit meanwhile.
 *
 * K8's test hook: with PN_TEST_CROSS_FAULT=K in the environment, the fast verdict of the Kth
 * state judged (in each process) is made wrong (cmd_check.c K8).
 */
#ifndef PN_CHECK_WORK_H
#define PN_CHECK_WORK_H

#include <stdio.h>

#include "exec.h"
#include "load.h"
#include "progress.h"

/* What the options ask of each scenario's checking. */
struct check_settings {
	const char *traces; /* where traces go */
	uint64_t nested, unit_states, cross_check;
	bool twice, derive, no_shrink, seeded_only;
	FILE *list_states; /* --list-states, opened (serial executor alone); NULL: none */
};

/* What checking one scenario produced; a worker sends it whole. */
struct check_outcome {
	int rc;                     /* 0 as expected, 1 not, 2 error, 3 interrupted */
	struct pn_check_result res; /* a violation: the shrunk scenario's, when shrunk (K6) */
	bool shrunk;                /* shrinking kept a variant: found_* is the first finding */
	uint64_t found_point;
	char found_state[256];
	double shrink_seconds;
	char error[2200]; /* could not be loaded or checked, or its trace not written */
};

struct check_item {
	char *path;
	char name[128]; /* the scenario's name, or the file's when it did not load */
	char mode[32];  /* the protocol checked (pn_cli_label), "" when it did not load */
	struct pn_scenario sc;
	bool loaded, done, printed;
	struct check_outcome out;
	struct pn_plan *plan; /* its work units (model/unit.h), while they run */
	bool tracing;         /* its trace unit is handed out */
	bool whole_out;       /* its whole-scenario unit is handed out */
	double t0;            /* when its first unit was handed out */
	uint32_t units_done;  /* of its plan's units (progress.h: its share of the work) */
};

struct check_run {
	struct check_settings set;
	struct check_item *items;
	size_t n, done;
	size_t done_drawn; /* done at the last progress line */
	uint32_t workers;  /* the executor's (plans cut for them) */
	bool whole;        /* one unit per scenario (exec.h E3) */
	bool halted;       /* a whole scenario stopped with 3: nothing more handed out */
	const volatile sig_atomic_t *stop;
	struct pn_progress prog;
	uint64_t states_done;    /* crash states of the finished scenarios (or units) */
	uint64_t schedules_done; /* schedules of the finished scenarios (or units) */
	uint64_t (*cov)[2];      /* per pn_testcase_all() site: true, false hits */
	size_t ncov;
	/* The printer: the finished scenarios at the head of the list printed. */
	void (*ready)(struct check_run *r);
};

/* The coverage totals allocated, every site at 0. */
void pn_check_work_cov_init(struct check_run *r);
/* A scenario is finished (counted, then printed in order by `ready`). */
void pn_check_work_mark_done(struct check_run *r, struct check_item *it);
/* The work list over r (its callbacks' arg is r). */
struct pn_exec_work pn_check_work(struct check_run *r);

#endif

/*
 * run.h: the whole check of a recording (pgcrash layer): every crash point, every state of
 * the model there, each distinct data directory judged once by real recovery, and a trace
 * per violation. The states are a work list of the executor table (model/exec.h E1-E6): the
 * leader materializes and deduplicates states (next), a worker judges one (run:
 * pn_pgc_judge, the unit of work), the leader counts its result (done); --jobs 1 is the
 * serial executor, --jobs N the process executor.
 *   RN1 Dedup: a state whose data directory hashes (fs.c FD2) like one judged before is counted
 *      and not judged again.
 *   RN2 SIGINT/SIGTERM stop handing out states; the executor terminates the judges running
 *      (E5), the leader stops the servers they started and removes their directories, and
 *      the counts so far are the result, marked interrupted.
 *   RN3 --jobs N gives the counts and verdicts of --jobs 1: states are numbered in the order
 *      the enumerator gives them (their unit id), and the violation reported for a class is
 *      the one with the lowest number, whatever order the results come in. (--fail-fast
 *      stops at a time, so its counts may differ.)
 *   RN4 A state's class is whether any unsynced write is torn in it: JUnit has one testcase
 *      per class of the cluster setting (cmd_pgcrash.c).
 *   RN5 States are made in a folder of the check's own on /dev/shm when it has room (else in
 *      the work folder), removed with it at the end.
 */
#ifndef PN_PGC_RUN_H
#define PN_PGC_RUN_H

#include "crash.h"

struct pn_pgc_opts {
	struct pn_scenario sc; /* crash.*: max_unsynced, tear, samples, atomic_unit */
	bool points_all;
	uint32_t jobs;
	bool progress;
	bool fail_fast; /* stop handing out states after the first violation */
};

enum pn_pgc_class { PN_PGC_WHOLE, PN_PGC_TORN, PN_PGC_CLASSES }; /* RN4 */
const char *pn_pgc_class_name(enum pn_pgc_class c);

/* One class's results (RN3, RN4). */
struct pn_pgc_class_sum {
	uint64_t judged, violations, errors;
	uint64_t first;    /* the unit id of the violation kept (UINT64_MAX: none) */
	char trace[600];   /* its trace ("" none) */
	char detail[1200]; /* its verdict and detail */
	char error[1200];  /* the first state the judge could not judge ("" none) */
};

struct pn_pgc_summary {
	struct pn_pgc_class_sum cls[PN_PGC_CLASSES];
	uint32_t points;
	uint64_t states, judged, deduped;
	uint64_t count[PN_PGC_ERROR + 1]; /* per verdict */
	bool interrupted;
	double seconds;
	char trace[600];   /* the first violation's trace, of the lower-numbered class one */
	char detail[1200]; /* its verdict and detail */
	char error[1200];  /* the first state the judge could not judge ("" none) */
};

/* The recording's configuration, WORK/recording.conf (key: value lines, the head of a
 * trace): written after the recording, read by --recording and a trace's replay. */
bool pn_pgc_config_write(const struct pn_pgc *pg, char *why, size_t len);
/* pg's configuration, user and work from the recording in work; false with why. */
bool pn_pgc_config_read(struct pn_pgc *pg, const char *work, char *why, size_t len);

/* Runs the check of pg's recording; false with why when it could not (exit 2). */
bool pn_pgc_check(const struct pn_pgc *pg, const struct pn_pgc_opts *o, struct pn_pgc_summary *s,
		  char *why, size_t len);
/* A trace opened: its configuration and crash model, its recording's log, its point
 * prepared (pt.dev: the unsynced writes over their durable bytes) and its state's fates in
 * pt.ce.fates. */
struct pn_pgc_trace {
	struct pn_pgc pg;
	struct pn_scenario sc;
	struct pn_pgc_log l;
	struct pn_pgc_point pt;
	uint32_t point;
	bool open; /* pt prepared */
	char state[256], verdict[32], detail[1200];
};
/* Opens trace into tr (large: static or heap); false with why (tr then closed). */
bool pn_pgc_trace_open(const char *trace, struct pn_pgc_trace *tr, char *why, size_t len);
void pn_pgc_trace_close(struct pn_pgc_trace *tr);
/* Replays a trace: the state rebuilt, judged again; false with why when the trace is bad. */
bool pn_pgc_replay(const char *trace, struct pn_pgc_result *r, char *dir_out, size_t dir_len,
		   char *why, size_t len);

#endif

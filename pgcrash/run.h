/*
 * run.h: the whole check of a recording (pgcrash layer): every crash point, every state of
 * the model there, each distinct data directory judged once by real recovery, in a pool of
 * forked jobs (pn_pgc_judge is the unit of work), and a trace per violation.
 *   W1 Dedup: a state whose data directory hashes (fs.c F2) like one judged before is counted
 *      and not judged again.
 *   W2 SIGINT/SIGTERM stop handing out states; the judges running finish (each bounded by
 *      the timeout) and the counts so far are the result, marked interrupted.
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

struct pn_pgc_summary {
	uint32_t points;
	uint64_t states, judged, deduped;
	uint64_t count[PN_PGC_ERROR + 1]; /* per verdict */
	bool interrupted;
	double seconds;
	char trace[600];   /* the first violation's trace ("" none) */
	char detail[1200]; /* its verdict and detail */
	char error[1200];  /* the first state the judge could not judge ("" none) */
};

/* Runs the check of pg's recording; false with why when it could not (exit 2). */
bool pn_pgc_check(const struct pn_pgc *pg, const struct pn_pgc_opts *o, struct pn_pgc_summary *s,
		  char *why, size_t len);
/* Replays a trace: the state rebuilt, judged again; false with why when the trace is bad. */
bool pn_pgc_replay(const char *trace, struct pn_pgc_result *r, char *dir_out, size_t dir_len,
		   char *why, size_t len);

#endif

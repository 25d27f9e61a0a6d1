/*
 * progress.h: one progress line on a terminal for a long command (cli layer).
 *
 * The line is drawn on stderr with a carriage return, only when stderr is a terminal (quiet
 * otherwise, so logs and pipes never see it), at most every PN_PROGRESS_INTERVAL_MS of wall
 * time; wall time is fine here: nothing simulated reads it. A command that prints anything
 * else to the terminal clears the line first (pn_progress_clear), and the next update draws it
 * again. Shape:
 *   check: 3/47 scenarios, 93780 states, 5353 states/s, 0:16 elapsed, ETA 2:05
 * and when `schedules` is set, ", 812 schedules" after the rate (docs/checker.md section 13:
 * the finished scenarios' or units' and the running units' reports, so it never falls);
 * when `parts_made` is set (a check cut into work units), ", 40/52 units" after the units.
 * Rate (P1, the one definition of check's rate; the summary prints the same,
 * pn_progress_rate()): the count (states judged) per second of wall time from init (checking
 * begins, the scenarios loaded) to now, or to pn_progress_finish() once the work is over: the
 * clock stops there, so the last line drawn and the summary divide the same count by the same
 * seconds. Wall time, not CPU time: with --jobs N it is the rate a user waits at.
 * ETA from the work done: `work` (in units, with a share of each unit begun: the caller's
 * measure, e.g. a scenario's work units done of those made) against `total`: the elapsed
 * time times (total - work) / work; with no `work` given, the finished units ("ETA ?"
 * before any).
 */
#ifndef PN_PROGRESS_H
#define PN_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PN_PROGRESS_INTERVAL_MS 250

struct pn_progress {
	const char *cmd;     /* "check" */
	const char *units;   /* "scenarios" */
	const char *counted; /* "states" */
	bool tty;            /* stderr is a terminal: draw; else every call is a no-op */
	bool drawn;          /* a line is on the terminal now */
	double t0_s, last_s; /* wall clock at init and at the last draw */
	double end_s;        /* wall clock at pn_progress_finish(); 0: still running */
	size_t total;
	uint64_t schedules;              /* check: schedules run so far; 0: not shown */
	uint64_t parts_done, parts_made; /* check: work units done and made; 0 made: not shown */
	double work; /* units' worth of work done, shares of the unfinished included; 0: none */
};

/* Starts the clock; tty from isatty(2). */
void pn_progress_init(struct pn_progress *p, const char *cmd, const char *units,
		      const char *counted, size_t total);
/* Draws "done/total units, count counted, rate, elapsed, ETA" unless one was drawn less than
 * the interval ago (force: draw anyway). */
void pn_progress_update(struct pn_progress *p, size_t done, uint64_t count, bool force);
/* The work is over: stops the clock (P1) and draws the last line (on a terminal). */
void pn_progress_finish(struct pn_progress *p, size_t done, uint64_t count);
/* P1: count per second of wall time since init (until finish); 0 before any time passed. */
double pn_progress_rate(const struct pn_progress *p, uint64_t count);
/* Erases the line, if one is drawn, so that other output starts at column 0. */
void pn_progress_clear(struct pn_progress *p);
/* The ETA in seconds after elapsed_s when `work` of `total` units is done; < 0: unknown. */
double pn_progress_eta_s(double elapsed_s, double work, size_t total);
/* Seconds of wall time since init (until finish, when finished). */
double pn_progress_elapsed(const struct pn_progress *p);
/* The monotonic wall clock in seconds (for throttling and timing reports, never simulation). */
double pn_progress_clock_s(void);

#endif

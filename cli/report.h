/*
 * report.h: the sections of `penumbra report` (cli layer), one file each, all writing into
 * the one HTML page that cli/cmd_report.c opens and closes:
 *   report_costs.c  a run or compare JSON: costs, WAL over time, record types, the FPI
 *                   sawtooth, side-by-side costs, published figures, Umbra's generations;
 *   report_check.c  a check JSON: verdicts, crash points and states, coverage markers;
 *   report_trace.c  a counterexample trace, re-run: swimlanes, crash state, page bytes.
 * `src` is the input's index (0-based, in command-line order): each section's element carries
 * it as data-src, so a number's data-j path (report_svg.h) is read in that input.
 * Each returns 0, or 2 with FILE: message on stderr.
 */
#ifndef PN_REPORT_H
#define PN_REPORT_H

#include <stdio.h>

#include <jansson.h>

int pn_report_costs(FILE *f, const char *path, int src, const json_t *doc);
int pn_report_check(FILE *f, const char *path, int src, const json_t *doc);
int pn_report_trace(FILE *f, const char *path, int src);

#endif

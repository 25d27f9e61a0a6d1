/*
 * report_costs.h: what the costs section's files share (cli layer, private to
 * report_costs.c and report_published.c): the results drawn, and the published figures.
 */
#ifndef PN_REPORT_COSTS_H
#define PN_REPORT_COSTS_H

#include <stdbool.h>
#include <stdio.h>

#include "report.h"

#define MAX_RESULTS 16
#define TWO_63 9223372036854775808.0 /* figures are numbers from 0 below 2^63 */

struct costs {
	FILE *f;
	struct pn_rep_in *in;
	const json_t *res[MAX_RESULTS];
	const char *mode[MAX_RESULTS];
	int idx[MAX_RESULTS]; /* its index in the JSON's results (refused runs are left out) */
	int n;
	bool thinned; /* a line or the checkpoints drawn through some of theirs (RP3) */
};

/* The seed's published figures that the scenario reproduces, beside its results' values
 * (report_published.c); nothing when it reproduces none. */
void pn_report_published(struct costs *c, const char *scenario);

#endif

/*
 * report_costs.c: the costs of a `run` or `compare` JSON in `penumbra report` (cli layer):
 * the metrics side by side, WAL over virtual time with the checkpoints, WAL by record type
 * (FPI bytes highlighted), FPIs per commit (the sawtooth after each checkpoint), data
 * writes, fsyncs, space and read amplification, the seed's published figure where the
 * scenario reproduces one (docs/results.md), and Umbra's generations of sampled pages.
 * The plots over time need the results' "series" (docs/cli.md); without it the section
 * says so and draws the rest.
 */
#include "report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pn.h"
#include "report_costs.h"
#include "report_svg.h"

#define MAX_PAGES 16 /* sampled pages of a series (sim/series.h SE3) */
#define MAX_SLOTS 8  /* physical slots per page (protocol.generations) */
#define MIB (1024.0 * 1024.0)

static const char *const type_colors[] = {
	"#4e79a7", "#59a14f", "#f28e2b", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
	"#bab0ac", "#86bcb6", "#8cd17d", "#f1ce63", "#a0cbe8", "#499894", "#d37295",
	"#fabfd2", "#79706e", "#d4a6c8", "#9d7660", "#b6992d", "#ffbe7d",
};

/* Result i's figure at key (a number from 0 below 2^63; 0 when absent or null). */
static double num(struct costs *c, int i, const char *key)
{
	return pn_rep_figure(c->in, json_object_get(c->res[i], key), "results[%d].%s", c->idx[i],
			     key);
}

/* Result i's series (an object; NULL when it has none). */
static const json_t *series_of(struct costs *c, int i)
{
	return pn_rep_object(c->in, json_object_get(c->res[i], "series"), "results[%d].series",
			     c->idx[i]);
}

/* Result i's series column col: `samples` counts, none below the one before (they are
 * cumulative); NULL when the result has no series. *n is its length. */
static const json_t *series_col(struct costs *c, int i, const char *col, size_t *n)
{
	const json_t *s = series_of(c, i);
	const json_t *a = s ? pn_rep_array(c->in, json_object_get(s, col), SIZE_MAX,
					   "results[%d].series.%s", c->idx[i], col)
			    : NULL;
	double samples = s ? pn_rep_count(c->in, json_object_get(s, "samples"),
					  "results[%d].series.samples", c->idx[i])
			   : 0;
	*n = 0;
	if (!a)
		return NULL;
	if ((double)json_array_size(a) != samples)
		pn_rep_refuse(c->in,
			      "results[%d].series.%s has %zu samples; expected %.0f "
			      "(series.samples)",
			      c->idx[i], col, json_array_size(a), samples);
	for (size_t j = 0, prev = 0; j < json_array_size(a) && !c->in->refused; j++) {
		double v = pn_rep_count(c->in, json_array_get(a, j), "results[%d].series.%s[%zu]",
					c->idx[i], col, j);
		if (j > 0 && v < json_number_value(json_array_get(a, prev)))
			pn_rep_refuse(c->in,
				      "results[%d].series.%s[%zu] is %.0f; expected at least "
				      "the sample before it (%.0f: the column is cumulative)",
				      c->idx[i], col, j, v,
				      json_number_value(json_array_get(a, prev)));
		prev = j;
	}
	if (c->in->refused)
		return NULL;
	*n = json_array_size(a);
	return a;
}

/* Sample j of a column series_col() accepted. */
static double at(const json_t *a, size_t j) { return json_number_value(json_array_get(a, j)); }

/* ---- the metrics side by side ---- */
static const struct row {
	const char *label, *key;
} rows[] = {
	{"transactions", "transactions"},
	{"commits", "commits"},
	{"WAL bytes", "wal_bytes"},
	{"WAL bytes / transaction", "wal_bytes_per_transaction"},
	{"WAL records", "wal_records"},
	{"FPI count", "fpi_count"},
	{"FPI bytes", "fpi_bytes"},
	{"shifts", "shifts"},
	{"data bytes written", "data_bytes_written"},
	{"doublewrite bytes", "dw_bytes_written"},
	{"fsyncs", "fsyncs"},
	{"checkpoints", "checkpoints"},
	{"write amplification", "write_amplification"},
	{"space amplification", "space_amplification"},
	{"read runs (logical scan)", "read_runs"},
	{"commit latency p99 (µs)", "commit_latency_us_p99"},
	{"elapsed (virtual s)", "elapsed_seconds"},
};

/* s's string at key when it is one of at most PN_REP_STRING_MAX bytes, else NULL (the check
 * section refuses its own input; here it is only looked up). */
static const char *check_string(const json_t *s, const char *key)
{
	const json_t *v = json_object_get(s, key);
	return json_is_string(v) && json_string_length(v) <= PN_REP_STRING_MAX &&
			       strlen(json_string_value(v)) == json_string_length(v)
		       ? json_string_value(v)
		       : NULL;
}

static bool same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The check of result i's scenario under its mode among the check JSONs given (check --modes
 * writes each scenario's "mode"): its entry, and in *src the input it is in; NULL if none. */
static const json_t *check_of(struct costs *c, int i, int *src)
{
	const char *scenario = json_string_value(json_object_get(c->res[i], "scenario"));
	for (int k = 0; k < c->in->nchecks; k++) {
		const json_t *arr = json_object_get(c->in->checks[k], "scenarios"), *s;
		size_t j;
		json_array_foreach(arr, j, s)
		{
			if (same(check_string(s, "name"), scenario) &&
			    same(check_string(s, "mode"), c->mode[i])) {
				*src = k;
				return s;
			}
		}
	}
	return NULL;
}

/* "crash-safe?": per mode, what check found for the same scenario and mode, linked to that
 * check's section; the row is left out when no check JSON has any of them. */
static void crash_safe_row(struct costs *c)
{
	int src, found = 0;
	for (int i = 0; i < c->n; i++)
		found += check_of(c, i, &src) != NULL;
	if (!found)
		return;
	fputs("<tr class=\"safe\"><td><b>crash-safe?</b> (check)</td>", c->f);
	for (int i = 0; i < c->n; i++) {
		const json_t *s = check_of(c, i, &src);
		const char *verdict = s ? check_string(s, "verdict") : NULL;
		const char *kind = check_string(json_object_get(s, "violation"), "kind");
		const json_t *states = json_object_get(s, "crash_states");
		if (!verdict) {
			fputs("<td class=\"num\">not checked</td>", c->f);
			continue;
		}
		bool pass = strcmp(verdict, "pass") == 0;
		fprintf(c->f, "<td class=\"num %s\"><a href=\"#check-%d\">", pass ? "ok" : "bad",
			src);
		fputs(pass ? "yes" : "NO", c->f);
		fputs(pass ? "</a>: " : "</a>: ", c->f);
		pn_rep_esc(c->f, PN_REP_TEXT, pass ? "pass" : kind ? kind : verdict);
		if (pass && json_is_integer(states) && json_integer_value(states) >= 0)
			fprintf(c->f, ", %lld states", (long long)json_integer_value(states));
		fputs("</td>", c->f);
	}
	fputs("</tr>\n", c->f);
}

static void table(struct costs *c)
{
	char path[128];
	fputs("<table><tr><th>metric</th>", c->f);
	for (int i = 0; i < c->n; i++) {
		fprintf(c->f, "<th class=\"num\" style=\"color:%s\">",
			pn_rep_mode_color(c->mode[i]));
		pn_rep_esc(c->f, PN_REP_TEXT, c->mode[i]);
		fputs("</th>", c->f);
	}
	fputs("</tr>\n", c->f);
	for (size_t r = 0; r < PN_ARRAY_LEN(rows); r++) {
		fprintf(c->f, "<tr><td>%s</td>", rows[r].label);
		for (int i = 0; i < c->n; i++) {
			snprintf(path, sizeof(path), ".results[%d].%s", c->idx[i], rows[r].key);
			num(c, i, rows[r].key);
			pn_rep_num(c->f, "td", path, json_object_get(c->res[i], rows[r].key));
		}
		fputs("</tr>\n", c->f);
	}
	crash_safe_row(c);
	fputs("</table>\n", c->f);
}

static void mode_legend(struct costs *c)
{
	const char *names[MAX_RESULTS], *colors[MAX_RESULTS];
	for (int i = 0; i < c->n; i++) {
		names[i] = c->mode[i];
		colors[i] = pn_rep_mode_color(c->mode[i]);
	}
	pn_rep_legend(c->f, names, colors, c->n);
}

/* A value axis from 0 to a little above hi, labelled with its unit; on a log scale (from the
 * power of ten at or below lo, the smallest value above 0) when the values span more than a
 * decade, so that the small ones are not flat against the axis. */
static struct pn_axis value_axis(double lo, double hi, const char *unit, char *label, size_t len)
{
	if (hi > 0 && lo < INFINITY && hi / lo > 10) {
		snprintf(label, len, "%s (log scale)", unit);
		return (struct pn_axis){pow(10, floor(log10(lo))), pow(10, ceil(log10(hi * 1.15))),
					true, label};
	}
	snprintf(label, len, "%s", unit);
	return (struct pn_axis){0, hi > 0 ? hi * 1.15 : 1, false, label};
}

/* ---- over virtual time ---- */
static double max_col(struct costs *c, const char *col, double scale)
{
	double m = 0;
	for (int i = 0; i < c->n; i++) {
		size_t n;
		const json_t *a = series_col(c, i, col, &n);
		m = fmax(m, n ? at(a, n - 1) / scale : 0); /* cumulative: the last is the largest */
	}
	return m;
}

/* Result i's checkpoint_marks (objects; NULL when none): *n of them, *drawn of those drawn
 * (RP3). */
static const json_t *marks_of(struct costs *c, int i, size_t *n, size_t *drawn)
{
	const json_t *s = series_of(c, i);
	const json_t *marks = s ? pn_rep_array(c->in, json_object_get(s, "checkpoint_marks"),
					       SIZE_MAX, "results[%d].series.checkpoint_marks",
					       c->idx[i])
				: NULL;
	for (size_t k = 0; k < json_array_size(marks); k++)
		pn_rep_object(c->in, json_array_get(marks, k),
			      "results[%d].series.checkpoint_marks[%zu]", c->idx[i], k);
	*n = c->in->refused ? 0 : json_array_size(marks);
	*drawn = pn_rep_drawn(*n, PN_REP_MARKS_MAX);
	c->thinned |= *drawn < *n;
	return marks;
}

/* Checkpoint mark k's count at key. */
static double mark_count(struct costs *c, int i, size_t k, const char *key)
{
	const json_t *s = json_object_get(c->res[i], "series");
	const json_t *m = json_array_get(json_object_get(s, "checkpoint_marks"), k);
	return pn_rep_count(c->in, json_object_get(m, key),
			    "results[%d].series.checkpoint_marks[%zu].%s", c->idx[i], k, key);
}

/* Each checkpoint held in the series: a dashed line in its mode's colour at its begin or
 * its end. */
static void ckpt_marks(struct costs *c, struct pn_plot *p, int i, bool at_begin)
{
	size_t n = 0, drawn = 0;
	marks_of(c, i, &n, &drawn);
	for (size_t d = 0; d < drawn; d++) {
		size_t k = pn_rep_pick(n, drawn, d);
		double b = mark_count(c, i, k, "begin_ns") / 1e9,
		       e = mark_count(c, i, k, "end_ns") / 1e9;
		char tip[160];
		snprintf(tip, sizeof(tip),
			 "%s: checkpoint %.0f, %.4f s to %.4f s, WAL %.2f MiB at its end",
			 c->mode[i], mark_count(c, i, k, "number"), b, e,
			 mark_count(c, i, k, "wal_bytes") / MIB);
		pn_plot_vline(p, at_begin ? b : e, pn_rep_mode_color(c->mode[i]), tip);
	}
}

/* A full-width plot over virtual time, h pixels high, both axes ticked. */
static struct pn_plot timeline(struct costs *c, int h)
{
	return (struct pn_plot){.f = c->f,
				.w = 1100,
				.h = h,
				.ml = 70,
				.mr = 20,
				.mt = 14,
				.mb = 44,
				.x_ticks = true,
				.y_ticks = true};
}

/* Result i's column col (scaled) over virtual time through at most PN_REP_POINTS_MAX of its
 * samples (RP3); returns how many, with x and y filled. */
static size_t over_time(struct costs *c, int i, const char *col, double scale, double *x, double *y)
{
	size_t nt, n;
	const json_t *t = series_col(c, i, "time_ns", &nt), *v = series_col(c, i, col, &n);
	size_t drawn = pn_rep_drawn(n == nt ? n : 0, PN_REP_POINTS_MAX);
	for (size_t d = 0; d < drawn; d++) {
		size_t j = pn_rep_pick(n, drawn, d);
		x[d] = at(t, j) / 1e9;
		y[d] = at(v, j) / scale;
	}
	c->thinned |= drawn < n;
	return drawn;
}

/* Each mode's name at the end of its line, in its colour, so the lines read without the
 * legend; a label that would overlap the one above is moved down. */
static void line_labels(struct costs *c, struct pn_plot *p, const double *x, const double *y,
			const bool *drawn)
{
	double taken[MAX_RESULTS];
	int ntaken = 0;
	for (int i = 0; i < c->n; i++) {
		if (!drawn[i])
			continue;
		double px = pn_plot_px(p, x[i]) - 4, py = pn_plot_py(p, y[i]) - 5;
		for (bool moved = true; moved;) { /* each move is down: it ends */
			moved = false;
			for (int k = 0; k < ntaken; k++)
				if (fabs(taken[k] - py) < 12) {
					py = taken[k] + 12;
					moved = true;
				}
		}
		taken[ntaken++] = py;
		fprintf(c->f,
			"<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
			"fill=\"%s\">",
			px, py, pn_rep_mode_color(c->mode[i]));
		pn_rep_esc(c->f, PN_REP_TEXT, c->mode[i]);
		fputs("</text>", c->f);
	}
}

/* The y axis of a plot of cumulative lines: log scale when the modes' totals span more than a
 * decade (the smaller ones would lie on the axis). */
static struct pn_axis totals_axis(struct costs *c, const char *col, double scale, const char *unit,
				  char *label, size_t len)
{
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < c->n; i++) {
		size_t n;
		const json_t *a = series_col(c, i, col, &n);
		double v = n ? at(a, n - 1) / scale : 0;
		hi = fmax(hi, v);
		lo = v > 0 ? fmin(lo, v) : lo;
	}
	struct pn_axis y = value_axis(lo / 10, hi, unit, label, len);
	if (!y.log)
		y.hi = hi > 0 ? hi * 1.05 : 1;
	return y;
}

static void wal_over_time(struct costs *c)
{
	struct pn_plot p = timeline(c, 330);
	double x[PN_REP_POINTS_MAX], y[PN_REP_POINTS_MAX], lx[MAX_RESULTS], ly[MAX_RESULTS];
	bool drawn[MAX_RESULTS] = {false};
	char label[64];
	p.x = (struct pn_axis){0, max_col(c, "time_ns", 1e9), false, "virtual time (s)"};
	p.y = totals_axis(c, "wal_bytes", MIB, "WAL inserted (MiB)", label, sizeof(label));
	fputs("<h3>WAL bytes by mode over virtual time</h3><p class=\"note\">Cumulative WAL inserted "
	      "(records and images), each line named at its end; on a log scale when the modes "
	      "differ by more than ten times. Dashed lines: each checkpoint's end, in its mode's "
	      "colour.</p>\n",
	      c->f);
	pn_plot_begin(&p, "WAL bytes by mode over virtual time");
	for (int i = 0; i < c->n; i++) {
		size_t n = over_time(c, i, "wal_bytes", MIB, x, y);
		ckpt_marks(c, &p, i, false);
		pn_plot_line(&p, x, y, (uint32_t)n, pn_rep_mode_color(c->mode[i]), c->mode[i], "s",
			     "MiB");
		drawn[i] = n > 0;
		lx[i] = n ? x[n - 1] : 0;
		ly[i] = n ? y[n - 1] : 0;
	}
	line_labels(c, &p, lx, ly, drawn);
	pn_plot_end(&p);
	mode_legend(c);
}

/* Result i's commits per second of virtual time over each interval between the samples
 * drawn; returns how many points, with x and y filled. */
static size_t commits_per_second(struct costs *c, int i, double *x, double *y)
{
	double t[PN_REP_POINTS_MAX], cm[PN_REP_POINTS_MAX];
	size_t n = over_time(c, i, "commits", 1, t, cm), k = 0;
	for (size_t j = 1; j < n; j++) {
		if (t[j] <= t[j - 1])
			continue;
		x[k] = t[j];
		y[k++] = (cm[j] - cm[j - 1]) / (t[j] - t[j - 1]);
	}
	return k;
}

/* Result i's FPIs per commit between the samples drawn (RP3: over the wider interval when
 * some are left out); returns how many points, with x and y filled. */
static size_t fpis_per_commit(struct costs *c, int i, double *x, double *y)
{
	double t[PN_REP_POINTS_MAX], fp[PN_REP_POINTS_MAX], cm[PN_REP_POINTS_MAX];
	size_t n = over_time(c, i, "fpi_count", 1, t, fp), k = 0;
	if (over_time(c, i, "commits", 1, t, cm) != n)
		return 0;
	for (size_t j = 1; j < n; j++) {
		double dc = cm[j] - cm[j - 1], df = fp[j] - fp[j - 1];
		if (dc <= 0)
			continue;
		x[k] = t[j];
		y[k++] = df / dc;
	}
	return k;
}

/* A rate over each sample interval, one line per mode, over virtual time: rate(c, i, x, y)
 * fills mode i's points; each checkpoint's begin is marked when `marks`. */
typedef size_t (*rate_fn)(struct costs *c, int i, double *x, double *y);

static void rate_plot(struct costs *c, int h, const char *title, const char *ylabel,
		      const char *yunit, rate_fn rate, bool marks)
{
	struct pn_plot p = timeline(c, h);
	double ymax = 0, x[PN_REP_POINTS_MAX], y[PN_REP_POINTS_MAX];
	for (int i = 0; i < c->n; i++)
		for (size_t k = 0, n = rate(c, i, x, y); k < n; k++)
			ymax = fmax(ymax, y[k]);
	p.x = (struct pn_axis){0, max_col(c, "time_ns", 1e9), false, "virtual time (s)"};
	p.y = (struct pn_axis){0, ymax > 0 ? ymax * 1.08 : 1, false, ylabel};
	pn_plot_begin(&p, title);
	for (int i = 0; i < c->n; i++) {
		size_t n = rate(c, i, x, y);
		if (marks)
			ckpt_marks(c, &p, i, true);
		pn_plot_line(&p, x, y, (uint32_t)n, pn_rep_mode_color(c->mode[i]), c->mode[i], "s",
			     yunit);
	}
	pn_plot_end(&p);
	mode_legend(c);
}

/* FPIs per commit over each sample interval: the images after a checkpoint's redo pointer
 * moved, falling as the pages get their first change of the interval. */
static void sawtooth(struct costs *c)
{
	fputs("<h3>FPIs per commit after each checkpoint</h3><p class=\"note\">Full-page images "
	      "per commit over each sample interval: high right after a checkpoint starts (dashed, "
	      "its redo point), falling as the interval's pages get their first change.</p>\n",
	      c->f);
	rate_plot(c, 300, "FPIs per commit after each checkpoint", "FPIs per commit", "FPIs/commit",
		  fpis_per_commit, true);
}

/* Whether result i's series has column col (a JSON of an older penumbra may lack it). */
static bool has_col(struct costs *c, int i, const char *col)
{
	const json_t *s = series_of(c, i);
	return s && json_object_get(s, col) != NULL;
}

/* Result i's average commit latency (ms) over each interval between the samples drawn
 * (series.h SE4: the latencies' sum over their count, both differenced); returns how many
 * points, with x and y filled. */
static size_t latency_ms(struct costs *c, int i, double *x, double *y)
{
	double t[PN_REP_POINTS_MAX], sum[PN_REP_POINTS_MAX], cnt[PN_REP_POINTS_MAX];
	if (!has_col(c, i, "commit_latency_ns") || !has_col(c, i, "commits_timed"))
		return 0;
	size_t n = over_time(c, i, "commit_latency_ns", 1e6, t, sum), k = 0;
	if (over_time(c, i, "commits_timed", 1, t, cnt) != n)
		return 0;
	for (size_t j = 1; j < n; j++) {
		if (cnt[j] <= cnt[j - 1])
			continue; /* no commit acknowledged in the interval: no average */
		x[k] = t[j];
		y[k++] = (sum[j] - sum[j - 1]) / (cnt[j] - cnt[j - 1]);
	}
	return k;
}

/* Throughput and commit latency over virtual time, as pgbench --progress prints them (tps,
 * lat): commits per second and their average latency over each sample interval, per mode. */
static void throughput(struct costs *c)
{
	fputs("<h3>Throughput over virtual time</h3><p class=\"note\">Commits per second of "
	      "virtual time over each sample interval (as pgbench --progress prints tps).</p>\n",
	      c->f);
	rate_plot(c, 260, "throughput: commits per second over virtual time", "commits / s",
		  "commits/s", commits_per_second, false);
	bool any = false;
	for (int i = 0; i < c->n; i++)
		any |= has_col(c, i, "commit_latency_ns");
	fputs("<h3>Commit latency over virtual time</h3>", c->f);
	if (!any) {
		fputs("<p class=\"note\">This JSON's series has no commit latency (written by an "
		      "older penumbra): the table has its p50 and p99.</p>\n",
		      c->f);
		return;
	}
	fputs("<p class=\"note\">The average latency of the commits acknowledged in each sample "
	      "interval, each from its commit record's insertion to its acknowledgement, as "
	      "pgbench --progress prints lat; the whole run's p50 and p99 are in the table.</p>\n",
	      c->f);
	rate_plot(c, 260, "commit latency over virtual time", "average commit latency (ms)", "ms",
		  latency_ms, false);
}

/* ---- WAL by record type, stacked, FPI bytes highlighted ---- */
/* Result i's record bytes of a record type (0 when it has none). */
static double record_bytes(struct costs *c, int i, const char *type)
{
	const json_t *recs = pn_rep_object(c->in, json_object_get(c->res[i], "records"),
					   "results[%d].records", c->idx[i]);
	const json_t *r = pn_rep_object(c->in, json_object_get(recs, type),
					"results[%d].records[\"%s\"]", c->idx[i], type);
	return pn_rep_count(c->in, json_object_get(r, "record_bytes"),
			    "results[%d].records[\"%s\"].record_bytes", c->idx[i], type);
}

/* The record types of the first result that any result has bytes of, at most cap. */
static int record_types(struct costs *c, const char **names, int cap)
{
	int n = 0;
	const json_t *recs = pn_rep_object(c->in, json_object_get(c->res[0], "records"),
					   "results[%d].records", c->idx[0]);
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)recs, key, v)
	{
		bool any = false;
		if (strlen(key) > PN_REP_STRING_MAX)
			pn_rep_refuse(
				c->in,
				"results[%d].records has a key of %zu bytes; expected a record "
				"type of at most %d bytes",
				c->idx[0], strlen(key), PN_REP_STRING_MAX);
		for (int i = 0; i < c->n && !c->in->refused; i++)
			any |= record_bytes(c, i, key) > 0;
		if (any && n < cap)
			names[n++] = key;
	}
	return n;
}

static void by_record_type(struct costs *c)
{
	const char *types[24], *legend[25], *colors[25];
	int nt = record_types(c, types, 24);
	int bar = 26, gap = 12;
	struct pn_plot p =
		{.f = c->f, .w = 1100, .ml = 110, .mr = 110, .mt = 10, .mb = 44, .x_ticks = true};
	p.h = p.mt + p.mb + c->n * (bar + gap);
	double xmax = 0;
	for (int i = 0; i < c->n; i++)
		xmax = fmax(xmax, num(c, i, "wal_bytes") / MIB);
	p.x = (struct pn_axis){0, xmax > 0 ? xmax * 1.02 : 1, false, "WAL (MiB)"};
	p.y = (struct pn_axis){0, p.h - p.mt - p.mb, false, NULL};
	fputs("<h3>WAL by record type, per mode</h3><p class=\"note\">Record bytes of each type, "
	      "then the full-page images of all types (red) with their share of the mode's WAL.</p>\n",
	      c->f);
	pn_plot_begin(&p, "WAL by record type per mode, FPI share highlighted");
	for (int i = 0; i < c->n; i++) {
		double y1 = p.h - p.mt - p.mb - i * (bar + gap) - gap / 2.0, y0 = y1 - bar, x = 0;
		char tip[192], n[48];
		for (int t = 0; t < nt; t++) {
			double b = record_bytes(c, i, types[t]);
			snprintf(tip, sizeof(tip), "%s %s: %s record bytes (%.2f MiB)", c->mode[i],
				 types[t], pn_rep_fmt(n, sizeof(n), b, 0), b / MIB);
			pn_plot_rect(&p, x, y0, x + b / MIB, y1,
				     type_colors[t % PN_ARRAY_LEN(type_colors)], tip);
			x += b / MIB;
		}
		double fpi = num(c, i, "fpi_bytes"), wal = num(c, i, "wal_bytes");
		snprintf(tip, sizeof(tip), "%s full-page images: %s bytes, %.1f %% of its WAL",
			 c->mode[i], pn_rep_fmt(n, sizeof(n), fpi, 0),
			 wal > 0 ? 100 * fpi / wal : 0);
		pn_plot_rect(&p, x, y0, x + fpi / MIB, y1, PN_REP_FPI_COLOR, tip);
		pn_plot_text(&p, p.ml - 6, pn_plot_py(&p, (y0 + y1) / 2) + 4, "end", "axis",
			     c->mode[i]);
		snprintf(tip, sizeof(tip), "FPI %.1f %%", wal > 0 ? 100 * fpi / wal : 0);
		pn_plot_text(&p, pn_plot_px(&p, x + fpi / MIB) + 6,
			     pn_plot_py(&p, (y0 + y1) / 2) + 4, "start", "tick", tip);
	}
	pn_plot_end(&p);
	for (int t = 0; t < nt; t++) {
		legend[t] = types[t];
		colors[t] = type_colors[t % PN_ARRAY_LEN(type_colors)];
	}
	legend[nt] = "full-page images (all types)";
	colors[nt] = PN_REP_FPI_COLOR;
	pn_rep_legend(c->f, legend, colors, nt + 1);
}

/* ---- side by side: one small bar chart per cost ---- */

static void small_bars(struct costs *c, const char *title, const char *key, const char *unit,
		       double scale)
{
	struct pn_plot p = {.f = c->f,
			    .w = 70 + 72 * (c->n > 3 ? c->n : 3), /* a label's room per mode */
			    .h = 230,
			    .ml = 62,
			    .mr = 8,
			    .mt = 22,
			    .mb = 52,
			    .y_ticks = true};
	double ymax = 0, ymin = INFINITY;
	char path[128], ylabel[64];
	for (int i = 0; i < c->n; i++) {
		double v = num(c, i, key) / scale;
		ymax = fmax(ymax, v);
		ymin = v > 0 ? fmin(ymin, v) : ymin;
	}
	p.y = value_axis(ymin, ymax, unit, ylabel, sizeof(ylabel));
	p.x = (struct pn_axis){0, (double)c->n, false, NULL};
	fputs("<div>", c->f);
	pn_plot_begin(&p, title);
	pn_plot_text(&p, p.w / 2.0, 14, "middle", "axis", title);
	for (int i = 0; i < c->n; i++) {
		double v = num(c, i, key) / scale;
		char tip[128];
		snprintf(tip, sizeof(tip), "%s: %s %.6g %s", c->mode[i], title, v, unit);
		pn_plot_rect(&p, i + 0.15, p.y.lo, i + 0.85, v, pn_rep_mode_color(c->mode[i]), tip);
		snprintf(path, sizeof(path), ".results[%d].%s", c->idx[i], key);
		pn_plot_num(&p, pn_plot_px(&p, i + 0.5), pn_plot_py(&p, v) - 4, "middle", path,
			    json_object_get(c->res[i], key), scale, 4);
		pn_plot_text(&p, pn_plot_px(&p, i + 0.5), p.h - p.mb + 14, "middle", "tick",
			     c->mode[i]);
	}
	pn_plot_end(&p);
	fputs("</div>", c->f);
}

static void side_by_side(struct costs *c)
{
	fputs("<h3>Data writes, fsyncs, space and read amplification</h3><div class=\"row\">",
	      c->f);
	small_bars(c, "data bytes written", "data_bytes_written", "MiB", MIB);
	small_bars(c, "fsyncs", "fsyncs", "fsyncs", 1);
	small_bars(c, "space amplification", "space_amplification", "slots / page", 1);
	small_bars(c, "read runs (logical scan)", "read_runs", "runs", 1);
	fputs("</div>\n", c->f);
}

/* ---- Umbra's generations ---- */
/* When the shifts happen: mode i's cumulative shifts over virtual time, checkpoints marked. */
static void shifts_over_time(struct costs *c, int i)
{
	double x[PN_REP_POINTS_MAX], y[PN_REP_POINTS_MAX];
	size_t n = over_time(c, i, "shifts", 1, x, y);
	struct pn_plot p = timeline(c, 220);
	p.x = (struct pn_axis){0, n ? x[n - 1] : 1, false, "virtual time (s)"};
	p.y = (struct pn_axis){0, fmax(1, n ? y[n - 1] : 0) * 1.05, false, "shifts (cumulative)"};
	pn_plot_begin(&p, "Umbra shifts over virtual time");
	ckpt_marks(c, &p, i, false);
	pn_plot_line(&p, x, y, (uint32_t)n, pn_rep_mode_color(c->mode[i]), c->mode[i], "s",
		     "shifts");
	pn_plot_end(&p);
}

#define CELL_W 48 /* a generations cell, px */
#define CELL_H 20
static const char *const slot_colors[MAX_SLOTS] = {"#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb",
						   "#fcbba1", "#d9d9d9", "#fee391", "#bcbddc"};

/* What the generations grid's colours and marks mean. */
static void slot_legend(struct costs *c, int slots)
{
	static const char *const names[MAX_SLOTS] = {"slot 0", "slot 1", "slot 2", "slot 3",
						     "slot 4", "slot 5", "slot 6", "slot 7"};
	const char *legend[MAX_SLOTS + 1], *colors[MAX_SLOTS + 1];
	int n = 0;
	for (; n < slots && n < MAX_SLOTS; n++) {
		legend[n] = names[n];
		colors[n] = slot_colors[n];
	}
	legend[n] = "not sampled yet";
	colors[n++] = "#eeeeee";
	pn_rep_legend(c->f, legend, colors, n);
	fputs("<p class=\"note\">The digit is the active slot; <b>B</b> beside it: that slot is the "
	      "checkpoint's recovery baseline; a thick outline: the page shifted since the column "
	      "before.</p>\n",
	      c->f);
}

/* Result i's sampled pages (at most MAX_PAGES page numbers) and slots per page. */
static const json_t *sampled_pages(struct costs *c, int i, int *slots)
{
	const json_t *s = series_of(c, i);
	const json_t *pages = s ? pn_rep_array(c->in, json_object_get(s, "pages"), MAX_PAGES,
					       "results[%d].series.pages", c->idx[i])
				: NULL;
	const json_t *v = pn_rep_number(c->in, s ? json_object_get(s, "slots") : NULL, true, 1,
					MAX_SLOTS, "results[%d].series.slots", c->idx[i]);
	*slots = v ? (int)json_integer_value(v) : 0;
	if (json_array_size(pages) && !*slots)
		pn_rep_refuse(c->in,
			      "results[%d].series.slots is missing; expected an integer from "
			      "1 to %d beside sampled pages",
			      c->idx[i], MAX_SLOTS);
	for (size_t j = 0; j < json_array_size(pages); j++)
		pn_rep_number(c->in, json_array_get(pages, j), true, 0, UINT32_MAX,
			      "results[%d].series.pages[%zu]", c->idx[i], j);
	return c->in->refused ? NULL : pages;
}

/* Page j's slot in checkpoint mark k's `key` (active or baseline): -1 when not yet sampled. */
static int slot_at(struct costs *c, int i, size_t k, const char *key, size_t j, int slots)
{
	const json_t *s = json_object_get(c->res[i], "series");
	const json_t *m = json_array_get(json_object_get(s, "checkpoint_marks"), k);
	const json_t *a = pn_rep_array(c->in, json_object_get(m, key), MAX_PAGES,
				       "results[%d].series.checkpoint_marks[%zu].%s", c->idx[i], k,
				       key);
	size_t np = json_array_size(json_object_get(s, "pages"));
	if (a && json_array_size(a) != np)
		pn_rep_refuse(c->in,
			      "results[%d].series.checkpoint_marks[%zu].%s has %zu elements; "
			      "expected %zu (one per sampled page)",
			      c->idx[i], k, key, json_array_size(a), np);
	const json_t *v = pn_rep_number(c->in, json_array_get(a, j), true, 0, slots - 1,
					"results[%d].series.checkpoint_marks[%zu].%s[%zu]",
					c->idx[i], k, key, j);
	return v ? (int)json_integer_value(v) : -1;
}

/* One column of the generations grid: checkpoint mark k at column d, prev the mark drawn
 * before it (or SIZE_MAX). */
static void generation_column(struct costs *c, struct pn_plot *p, int i, size_t d, size_t k,
			      size_t prev, const json_t *pages, int slots)
{
	size_t np = json_array_size(pages);
	char lab[32];
	snprintf(lab, sizeof(lab), "%.0f", mark_count(c, i, k, "number"));
	pn_plot_text(p, p->ml + (d + 0.5) * CELL_W, p->h - p->mb + 14, "middle", "tick", lab);
	for (size_t j = 0; j < np; j++) {
		int slot = slot_at(c, i, k, "active", j, slots);
		int base = slot_at(c, i, k, "baseline", j, slots);
		int before = prev == SIZE_MAX ? -1 : slot_at(c, i, prev, "active", j, slots);
		bool shifted = slot >= 0 && before >= 0 && before != slot;
		double y = np - j;
		char tip[160], digit[16];
		snprintf(tip, sizeof(tip),
			 "page %lld, checkpoint %.0f: active slot %d, baseline %d%s",
			 (long long)json_integer_value(json_array_get(pages, j)),
			 mark_count(c, i, k, "number"), slot, base, shifted ? " (shifted)" : "");
		pn_plot_rect(p, d + 0.04, y - 0.92, d + 0.96, y - 0.08,
			     slot >= 0 ? slot_colors[slot % MAX_SLOTS] : "#eeeeee",
			     slot >= 0 ? tip : "not sampled yet");
		if (shifted)
			fprintf(c->f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"none\" stroke=\"#333\" stroke-width=\"2\"/>",
				pn_plot_px(p, d + 0.04), pn_plot_py(p, y - 0.08), CELL_W * 0.92,
				CELL_H * 0.84);
		if (slot < 0)
			continue;
		snprintf(digit, sizeof(digit), "%d%s", slot, base == slot ? " B" : "");
		pn_plot_text(p, pn_plot_px(p, d + 0.5), pn_plot_py(p, y - 0.5) + 4, "middle",
			     "tick", digit);
	}
}

static void generations(struct costs *c, int i)
{
	int slots;
	size_t nc, drawn;
	const json_t *pages = sampled_pages(c, i, &slots);
	size_t np = json_array_size(pages);
	marks_of(c, i, &nc, &drawn);
	if (np == 0 || drawn == 0)
		return;
	struct pn_plot p = {.f = c->f, .ml = 80, .mr = 10, .mt = 10, .mb = 44};
	p.w = p.ml + p.mr + (int)drawn * CELL_W;
	p.w = p.w < 420 ? 420 : p.w;
	p.h = p.mt + p.mb + (int)np * CELL_H;
	p.x = (struct pn_axis){0, (double)(p.w - p.ml - p.mr) / CELL_W, false,
			       "checkpoint (number, at its end)"};
	p.y = (struct pn_axis){0, (double)np, false, NULL};
	fputs("<h3>Umbra's generations: ", c->f);
	pn_rep_esc(c->f, PN_REP_TEXT, c->mode[i]);
	fputs("</h3><p class=\"note\">Shifts (a page's change written to another slot) over time, "
	      "dashed at each checkpoint's end; then each row a sampled page (the lowest-numbered "
	      "that shifted), each column a checkpoint's end: the colour and digit are the active "
	      "slot; <b>B</b> marks the slot that is the checkpoint's recovery baseline; a thick "
	      "outline is a shift since the previous column; grey: not yet sampled.</p>\n",
	      c->f);
	shifts_over_time(c, i);
	pn_plot_begin(&p, "Umbra generations per sampled page");
	for (size_t d = 0; d < drawn; d++)
		generation_column(c, &p, i, d, pn_rep_pick(nc, drawn, d),
				  d ? pn_rep_pick(nc, drawn, d - 1) : SIZE_MAX, pages, slots);
	for (size_t j = 0; j < np; j++) {
		char lab[32];
		snprintf(lab, sizeof(lab), "page %lld",
			 (long long)json_integer_value(json_array_get(pages, j)));
		pn_plot_text(&p, p.ml - 6, pn_plot_py(&p, np - j - 0.5) + 4, "end", "tick", lab);
	}
	pn_plot_end(&p);
	slot_legend(c, slots);
}

/* The results with figures (a refused run, wal_bytes null, has none to draw). */
static void take_results(struct costs *c, const json_t *doc)
{
	const json_t *results = pn_rep_array(c->in, json_object_get(doc, "results"), SIZE_MAX,
					     "results"),
		     *r;
	size_t i;
	json_array_foreach(results, i, r)
	{
		const json_t *o = pn_rep_object(c->in, r, "results[%zu]", i);
		const char *mode = pn_rep_string(c->in, json_object_get(o, "mode"), true,
						 "results[%zu].mode", i);
		pn_rep_string(c->in, json_object_get(o, "scenario"), true, "results[%zu].scenario",
			      i);
		if (!o && !c->in->refused)
			pn_rep_refuse(c->in,
				      "results[%zu] is null; expected a result (an object "
				      "with \"scenario\" and \"mode\")",
				      i);
		if (c->in->refused || json_is_null(json_object_get(o, "wal_bytes")))
			continue;
		if (c->n == MAX_RESULTS) {
			pn_rep_refuse(c->in,
				      "results has more than %d results with figures; expected "
				      "at most %d",
				      MAX_RESULTS, MAX_RESULTS);
			return;
		}
		c->idx[c->n] = (int)i;
		c->mode[c->n] = mode;
		c->res[c->n++] = o;
	}
}

int pn_report_costs(FILE *f, struct pn_rep_in *in, const json_t *doc)
{
	struct costs c = {.f = f, .in = in};
	size_t n;
	take_results(&c, doc);
	if (in->refused)
		return 2;
	const char *scenario = c.n ? json_string_value(json_object_get(c.res[0], "scenario")) : "?";
	fprintf(f, "<section data-src=\"%d\" data-kind=\"costs\"><h2>Costs: ", in->src);
	pn_rep_esc(f, PN_REP_TEXT, scenario);
	fputs(" <small>(", f);
	pn_rep_esc(f, PN_REP_TEXT, in->path);
	fputs(")</small></h2>\n", f);
	if (c.n == 0) {
		fputs("<p class=\"note\">No result with figures (every run was refused).</p></section>\n",
		      f);
		return 0;
	}
	table(&c);
	for (int k = 0; k < c.n; k++) {
		size_t nc, drawn;
		c.thinned |= series_col(&c, k, "time_ns", &n) && n > PN_REP_POINTS_MAX;
		marks_of(&c, k, &nc, &drawn);
	}
	if (c.thinned)
		fprintf(f,
			"<p class=\"note\">Long series are thinned (docs/cli.md, <code>penumbra "
			"report</code>): a line is drawn through at most %d of its samples and at most "
			"%d checkpoints per mode, evenly spaced, the first and last kept.</p>\n",
			PN_REP_POINTS_MAX, PN_REP_MARKS_MAX);
	if (series_col(&c, 0, "time_ns", &n)) {
		wal_over_time(&c);
		throughput(&c);
		by_record_type(&c);
		sawtooth(&c);
	} else {
		fputs("<p class=\"note\">This JSON has no \"series\" (written by an older penumbra): the "
		      "plots over time are left out.</p>\n",
		      f);
		by_record_type(&c);
	}
	side_by_side(&c);
	pn_report_published(&c, scenario);
	for (int k = 0; k < c.n; k++)
		generations(&c, k);
	fputs("</section>\n", f);
	return in->refused ? 2 : 0;
}

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
#include <stdlib.h>
#include <string.h>

#include "pn.h"
#include "report_svg.h"

#define MAX_RESULTS 16
#define MIB (1024.0 * 1024.0)

/* The published figures of docs/results.md that a scenario reproduces: its result's value
 * at `key` (a path inside the result) beside the seed's. */
static const struct published {
	const char *scenario, *mode, *key, *what, *source;
	double value;
} published[] = {
	{"seed000-tpcc", "fpw", ".transaction_types.NewOrder.all_wal_bytes_per_transaction",
	 "WAL per NewOrder (bytes)", "seed 000 section 7", 38318.65},
	{"seed000-tpcc", "nofpw", ".transaction_types.NewOrder.all_wal_bytes_per_transaction",
	 "WAL per NewOrder (bytes)", "seed 000 section 7", 8056.66},
	{"seed000-tpcc", "umbra", ".transaction_types.NewOrder.all_wal_bytes_per_transaction",
	 "WAL per NewOrder (bytes)", "seed 000 section 7", 8002.68},
};

static const char *const type_colors[] = {
	"#4e79a7", "#59a14f", "#f28e2b", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
	"#bab0ac", "#86bcb6", "#8cd17d", "#f1ce63", "#a0cbe8", "#499894", "#d37295",
	"#fabfd2", "#79706e", "#d4a6c8", "#9d7660", "#b6992d", "#ffbe7d",
};

struct costs {
	FILE *f;
	int src;
	const json_t *res[MAX_RESULTS];
	char mode[MAX_RESULTS][32];
	int n;
};

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static const json_t *series_col(const json_t *r, const char *col)
{
	const json_t *s = json_object_get(r, "series");
	const json_t *a = s ? json_object_get(s, col) : NULL;
	return json_is_array(a) ? a : NULL;
}

static double at(const json_t *a, size_t i) { return json_number_value(json_array_get(a, i)); }

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

static void table(struct costs *c)
{
	char path[128];
	fputs("<table><tr><th>metric</th>", c->f);
	for (int i = 0; i < c->n; i++) {
		fprintf(c->f, "<th class=\"num\" style=\"color:%s\">",
			pn_rep_mode_color(c->mode[i]));
		pn_rep_esc(c->f, c->mode[i]);
		fputs("</th>", c->f);
	}
	fputs("</tr>\n", c->f);
	for (size_t r = 0; r < PN_ARRAY_LEN(rows); r++) {
		fprintf(c->f, "<tr><td>%s</td>", rows[r].label);
		for (int i = 0; i < c->n; i++) {
			snprintf(path, sizeof(path), ".results[%d].%s", i, rows[r].key);
			pn_rep_num(c->f, "td", path, json_object_get(c->res[i], rows[r].key));
		}
		fputs("</tr>\n", c->f);
	}
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

/* ---- over virtual time ---- */
static double max_col(struct costs *c, const char *col, double scale)
{
	double m = 0;
	for (int i = 0; i < c->n; i++) {
		const json_t *a = series_col(c->res[i], col);
		for (size_t j = 0; a && j < json_array_size(a); j++)
			m = fmax(m, at(a, j) / scale);
	}
	return m;
}

/* Each checkpoint held in the series: a dashed line in its mode's colour at its begin or
 * its end. */
static void ckpt_marks(struct costs *c, struct pn_plot *p, int i, bool at_begin)
{
	const json_t *s = json_object_get(c->res[i], "series");
	const json_t *marks = s ? json_object_get(s, "checkpoint_marks") : NULL;
	for (size_t k = 0; k < json_array_size(marks); k++) {
		const json_t *m = json_array_get(marks, k);
		double b = num(m, "begin_ns") / 1e9, e = num(m, "end_ns") / 1e9;
		char tip[160];
		snprintf(tip, sizeof(tip),
			 "%s: checkpoint %.0f, %.4f s to %.4f s, WAL %.2f MiB at its end",
			 c->mode[i], num(m, "number"), b, e, num(m, "wal_bytes") / MIB);
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

static void wal_over_time(struct costs *c)
{
	struct pn_plot p = timeline(c, 330);
	p.x = (struct pn_axis){0, max_col(c, "time_ns", 1e9), false, "virtual time (s)"};
	p.y = (struct pn_axis){0, max_col(c, "wal_bytes", MIB) * 1.05, false, "WAL inserted (MiB)"};
	fputs("<h3>WAL bytes by mode over virtual time</h3><p class=\"note\">Cumulative WAL inserted "
	      "(records and images). Dashed lines: each checkpoint's end, in its mode's colour.</p>\n",
	      c->f);
	pn_plot_begin(&p, "WAL bytes by mode over virtual time");
	for (int i = 0; i < c->n; i++) {
		const json_t *t = series_col(c->res[i], "time_ns"),
			     *w = series_col(c->res[i], "wal_bytes");
		size_t n = t && w ? json_array_size(t) : 0;
		double *x = calloc(n + 1, sizeof(double)), *y = calloc(n + 1, sizeof(double));
		PN_ASSERT(x != NULL && y != NULL);
		for (size_t j = 0; j < n; j++) {
			x[j] = at(t, j) / 1e9;
			y[j] = at(w, j) / MIB;
		}
		ckpt_marks(c, &p, i, false);
		pn_plot_line(&p, x, y, (uint32_t)n, pn_rep_mode_color(c->mode[i]), c->mode[i], "s",
			     "MiB");
		free(x);
		free(y);
	}
	pn_plot_end(&p);
	mode_legend(c);
}

/* FPIs per commit over each sample interval: the images after a checkpoint's redo pointer
 * moved, falling as the pages get their first change of the interval. */
static void sawtooth(struct costs *c)
{
	struct pn_plot p = timeline(c, 300);
	double ymax = 0;
	fputs("<h3>FPIs per commit after each checkpoint</h3><p class=\"note\">Full-page images "
	      "per commit over each sample interval: high right after a checkpoint starts (dashed, "
	      "its redo point), falling as the interval's pages get their first change.</p>\n",
	      c->f);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			p.x = (struct pn_axis){0, max_col(c, "time_ns", 1e9), false,
					       "virtual time (s)"};
			p.y = (struct pn_axis){0, ymax > 0 ? ymax * 1.08 : 1, false,
					       "FPIs per commit"};
			pn_plot_begin(&p, "FPIs per commit after each checkpoint");
		}
		for (int i = 0; i < c->n; i++) {
			const json_t *t = series_col(c->res[i], "time_ns");
			const json_t *fp = series_col(c->res[i], "fpi_count");
			const json_t *cm = series_col(c->res[i], "commits");
			size_t n = t && fp && cm ? json_array_size(t) : 0;
			double *x = calloc(n + 1, sizeof(double)),
			       *y = calloc(n + 1, sizeof(double));
			uint32_t k = 0;
			PN_ASSERT(x != NULL && y != NULL);
			for (size_t j = 1; j < n; j++) {
				double dc = at(cm, j) - at(cm, j - 1),
				       df = at(fp, j) - at(fp, j - 1);
				if (dc <= 0)
					continue;
				x[k] = at(t, j) / 1e9;
				y[k++] = df / dc;
				ymax = fmax(ymax, df / dc);
			}
			if (pass == 1) {
				ckpt_marks(c, &p, i, true);
				pn_plot_line(&p, x, y, k, pn_rep_mode_color(c->mode[i]), c->mode[i],
					     "s", "FPIs/commit");
			}
			free(x);
			free(y);
		}
	}
	pn_plot_end(&p);
	mode_legend(c);
}

/* ---- WAL by record type, stacked, FPI bytes highlighted ---- */
static int record_types(struct costs *c, const char **names, int cap)
{
	int n = 0;
	const json_t *recs = json_object_get(c->res[0], "records");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)recs, key, v)
	{
		bool any = false;
		for (int i = 0; i < c->n; i++) {
			const json_t *r = json_object_get(json_object_get(c->res[i], "records"),
							  key);
			any |= num(r, "record_bytes") > 0;
		}
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
		xmax = fmax(xmax, num(c->res[i], "wal_bytes") / MIB);
	p.x = (struct pn_axis){0, xmax > 0 ? xmax * 1.02 : 1, false, "WAL (MiB)"};
	p.y = (struct pn_axis){0, p.h - p.mt - p.mb, false, NULL};
	fputs("<h3>WAL by record type, per mode</h3><p class=\"note\">Record bytes of each type, "
	      "then the full-page images of all types (red) with their share of the mode's WAL.</p>\n",
	      c->f);
	pn_plot_begin(&p, "WAL by record type per mode, FPI share highlighted");
	for (int i = 0; i < c->n; i++) {
		const json_t *recs = json_object_get(c->res[i], "records");
		double y1 = p.h - p.mt - p.mb - i * (bar + gap) - gap / 2.0, y0 = y1 - bar, x = 0;
		char tip[192], path[160];
		for (int t = 0; t < nt; t++) {
			double b = num(json_object_get(recs, types[t]), "record_bytes");
			snprintf(tip, sizeof(tip), "%s %s: %.0f record bytes (%.2f MiB)",
				 c->mode[i], types[t], b, b / MIB);
			pn_plot_rect(&p, x, y0, x + b / MIB, y1,
				     type_colors[t % PN_ARRAY_LEN(type_colors)], tip);
			x += b / MIB;
		}
		double fpi = num(c->res[i], "fpi_bytes"), wal = num(c->res[i], "wal_bytes");
		snprintf(tip, sizeof(tip), "%s full-page images: %.0f bytes, %.1f %% of its WAL",
			 c->mode[i], fpi, wal > 0 ? 100 * fpi / wal : 0);
		pn_plot_rect(&p, x, y0, x + fpi / MIB, y1, PN_REP_FPI_COLOR, tip);
		pn_plot_text(&p, p.ml - 6, pn_plot_py(&p, (y0 + y1) / 2) + 4, "end", "axis",
			     c->mode[i]);
		snprintf(path, sizeof(path), ".results[%d].fpi_bytes", i);
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
			    .w = 265,
			    .h = 230,
			    .ml = 62,
			    .mr = 8,
			    .mt = 22,
			    .mb = 52,
			    .y_ticks = true};
	double ymax = 0;
	char path[128], ylabel[64];
	for (int i = 0; i < c->n; i++)
		ymax = fmax(ymax, num(c->res[i], key) / scale);
	snprintf(ylabel, sizeof(ylabel), "%s", unit);
	p.x = (struct pn_axis){0, (double)c->n, false, NULL};
	p.y = (struct pn_axis){0, ymax > 0 ? ymax * 1.15 : 1, false, ylabel};
	fputs("<div>", c->f);
	pn_plot_begin(&p, title);
	pn_plot_text(&p, p.w / 2.0, 14, "middle", "axis", title);
	for (int i = 0; i < c->n; i++) {
		double v = num(c->res[i], key) / scale;
		char tip[128];
		snprintf(tip, sizeof(tip), "%s: %s %.6g %s", c->mode[i], title, v, unit);
		pn_plot_rect(&p, i + 0.15, 0, i + 0.85, v, pn_rep_mode_color(c->mode[i]), tip);
		snprintf(path, sizeof(path), ".results[%d].%s", i, key);
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

/* ---- the published figure ---- */
static const json_t *path_get(const json_t *o, const char *path)
{
	char key[64];
	while (o && *path == '.') {
		size_t n = strcspn(path + 1, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path + 1, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		path += 1 + n;
	}
	return o;
}

struct pub_row {
	const struct published *pb;
	int result;
	const json_t *ours;
};

/* Published beside ours: a pair of bars per figure (published grey, ours in its mode's colour). */
static void published_bars(struct costs *c, const struct pub_row *pubs, int n)
{
	struct pn_plot p = {.f = c->f,
			    .w = 150 + 110 * n,
			    .h = 250,
			    .ml = 70,
			    .mr = 10,
			    .mt = 14,
			    .mb = 44,
			    .y_ticks = true};
	double ymax = 0;
	for (int k = 0; k < n; k++)
		ymax = fmax(ymax, fmax(pubs[k].pb->value, json_number_value(pubs[k].ours)));
	p.x = (struct pn_axis){0, (double)n, false, NULL};
	p.y = (struct pn_axis){0, ymax * 1.15, false, pubs[0].pb->what};
	pn_plot_begin(&p, "published figure beside ours");
	for (int k = 0; k < n; k++) {
		char tip[160], path[192], buf[32];
		double pub = pubs[k].pb->value, ours = json_number_value(pubs[k].ours);
		snprintf(tip, sizeof(tip), "%s published (%s): %.2f", pubs[k].pb->mode,
			 pubs[k].pb->source, pub);
		pn_plot_rect(&p, k + 0.12, 0, k + 0.48, pub, "#dddddd", tip);
		snprintf(tip, sizeof(tip), "%s ours: %.2f (%.3f of published)", pubs[k].pb->mode,
			 ours, ours / pub);
		pn_plot_rect(&p, k + 0.52, 0, k + 0.88, ours, pn_rep_mode_color(pubs[k].pb->mode),
			     tip);
		pn_plot_text(&p, pn_plot_px(&p, k + 0.3), pn_plot_py(&p, pub) - 4, "middle", "tick",
			     pn_rep_real(buf, sizeof(buf), pub, 4));
		snprintf(path, sizeof(path), ".results[%d]%s", pubs[k].result, pubs[k].pb->key);
		pn_plot_num(&p, pn_plot_px(&p, k + 0.7), pn_plot_py(&p, ours) - 4, "middle", path,
			    pubs[k].ours, 1, 4);
		pn_plot_text(&p, pn_plot_px(&p, k + 0.5), p.h - p.mb + 14, "middle", "tick",
			     pubs[k].pb->mode);
	}
	pn_plot_end(&p);
	static const char *const names[] = {"published", "ours (in the mode's colour)"};
	static const char *const colors[] = {"#dddddd", "#2ca02c"};
	pn_rep_legend(c->f, names, colors, 2);
}

static void published_figures(struct costs *c, const char *scenario)
{
	struct pub_row pubs[PN_ARRAY_LEN(published)];
	int n = 0;
	char path[192], buf[32];
	for (size_t k = 0; k < PN_ARRAY_LEN(published); k++) {
		for (int i = 0; i < c->n && strcmp(published[k].scenario, scenario) == 0; i++) {
			const json_t *ours = path_get(c->res[i], published[k].key);
			if (strcmp(c->mode[i], published[k].mode) == 0 && json_is_number(ours))
				pubs[n++] = (struct pub_row){&published[k], i, ours};
		}
	}
	if (n == 0)
		return;
	fputs("<h3>Beside the published figure</h3><p class=\"note\">The seed's numbers "
	      "(docs/results.md) next to this run's.</p>\n",
	      c->f);
	published_bars(c, pubs, n);
	fputs("<table><tr><th>mode</th><th>figure</th><th class=\"num\">published</th>"
	      "<th class=\"num\">ours</th><th class=\"num\">ours / published</th><th>source</th>"
	      "</tr>\n",
	      c->f);
	for (int k = 0; k < n; k++) {
		const struct published *pb = pubs[k].pb;
		fprintf(c->f, "<tr><td>%s</td><td>%s</td><td class=\"num\">%s</td>", pb->mode,
			pb->what, pn_rep_real(buf, sizeof(buf), pb->value, 7));
		snprintf(path, sizeof(path), ".results[%d]%s", pubs[k].result, pb->key);
		pn_rep_num(c->f, "td", path, pubs[k].ours);
		fprintf(c->f, "<td class=\"num\">%.3f</td><td>%s</td></tr>\n",
			json_number_value(pubs[k].ours) / pb->value, pb->source);
	}
	fputs("</table>\n", c->f);
}

/* ---- Umbra's generations ---- */
/* When the shifts happen: mode i's cumulative shifts over virtual time, checkpoints marked. */
static void shifts_over_time(struct costs *c, int i)
{
	const json_t *t = series_col(c->res[i], "time_ns"), *sh = series_col(c->res[i], "shifts");
	size_t n = t && sh ? json_array_size(t) : 0;
	struct pn_plot p = timeline(c, 220);
	double *x = calloc(n + 1, sizeof(double)), *y = calloc(n + 1, sizeof(double)), ymax = 1;
	PN_ASSERT(x != NULL && y != NULL);
	for (size_t j = 0; j < n; j++) {
		x[j] = at(t, j) / 1e9;
		y[j] = at(sh, j);
		ymax = fmax(ymax, y[j]);
	}
	p.x = (struct pn_axis){0, n ? x[n - 1] : 1, false, "virtual time (s)"};
	p.y = (struct pn_axis){0, ymax * 1.05, false, "shifts (cumulative)"};
	pn_plot_begin(&p, "Umbra shifts over virtual time");
	ckpt_marks(c, &p, i, false);
	pn_plot_line(&p, x, y, (uint32_t)n, pn_rep_mode_color(c->mode[i]), c->mode[i], "s",
		     "shifts");
	pn_plot_end(&p);
	free(x);
	free(y);
}

static const char *const slot_colors[] = {"#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb",
					  "#fcbba1", "#d9d9d9", "#fee391", "#bcbddc"};

static void generations(struct costs *c, int i)
{
	const json_t *s = json_object_get(c->res[i], "series");
	const json_t *pages = json_object_get(s, "pages");
	const json_t *marks = json_object_get(s, "checkpoint_marks");
	size_t np = json_array_size(pages), nc = json_array_size(marks);
	int cell_w = 48, cell_h = 20;
	if (np == 0 || nc == 0)
		return;
	struct pn_plot p = {.f = c->f, .ml = 80, .mr = 10, .mt = 10, .mb = 44};
	p.w = p.ml + p.mr + (int)nc * cell_w;
	p.w = p.w < 420 ? 420 : p.w;
	p.h = p.mt + p.mb + (int)np * cell_h;
	p.x = (struct pn_axis){0, (double)(p.w - p.ml - p.mr) / cell_w, false,
			       "checkpoint (number, at its end)"};
	p.y = (struct pn_axis){0, (double)np, false, NULL};
	fprintf(c->f,
		"<h3>Umbra's generations: %s</h3><p class=\"note\">Shifts (a page's change "
		"written to another slot) over time, dashed at each checkpoint's end; then each row a "
		"sampled page "
		"(the lowest-numbered that shifted), each column a checkpoint's end: the colour and "
		"digit are the active slot; <b>B</b> marks the slot that is the checkpoint's "
		"recovery baseline; a thick outline is a shift since the previous checkpoint; grey: "
		"not yet sampled.</p>\n",
		c->mode[i]);
	shifts_over_time(c, i);
	pn_plot_begin(&p, "Umbra generations per sampled page");
	for (size_t k = 0; k < nc; k++) {
		const json_t *m = json_array_get(marks, k);
		const json_t *act = json_object_get(m, "active"),
			     *base = json_object_get(m, "baseline");
		const json_t *prev = k ? json_object_get(json_array_get(marks, k - 1), "active")
				       : NULL;
		char lab[32];
		snprintf(lab, sizeof(lab), "%.0f", num(m, "number"));
		pn_plot_text(&p, p.ml + (k + 0.5) * cell_w, p.h - p.mb + 14, "middle", "tick", lab);
		for (size_t j = 0; j < np; j++) {
			const json_t *a = json_array_get(act, j), *b = json_array_get(base, j);
			double y = np - j;
			char tip[160], digit[8];
			bool known = json_is_integer(a);
			long slot = known ? (long)json_integer_value(a) : -1;
			bool shifted = known && prev && json_is_integer(json_array_get(prev, j)) &&
				       json_integer_value(json_array_get(prev, j)) != slot;
			snprintf(tip, sizeof(tip),
				 "page %lld, checkpoint %.0f: active slot %ld, baseline %lld%s",
				 (long long)json_integer_value(json_array_get(pages, j)),
				 num(m, "number"), slot,
				 json_is_integer(b) ? (long long)json_integer_value(b) : -1LL,
				 shifted ? " (shifted)" : "");
			pn_plot_rect(&p, k + 0.04, y - 0.92, k + 0.96, y - 0.08,
				     known ? slot_colors[slot % 8] : "#eeeeee",
				     known ? tip : "not sampled yet");
			if (shifted)
				fprintf(c->f,
					"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
					"fill=\"none\" stroke=\"#333\" stroke-width=\"2\"/>",
					pn_plot_px(&p, k + 0.04), pn_plot_py(&p, y - 0.08),
					cell_w * 0.92, cell_h * 0.84);
			if (!known)
				continue;
			snprintf(digit, sizeof(digit), "%ld%s", slot,
				 json_is_integer(b) && json_integer_value(b) == slot ? " B" : "");
			pn_plot_text(&p, pn_plot_px(&p, k + 0.5), pn_plot_py(&p, y - 0.5) + 4,
				     "middle", "tick", digit);
		}
	}
	for (size_t j = 0; j < np; j++) {
		char lab[32];
		snprintf(lab, sizeof(lab), "page %lld",
			 (long long)json_integer_value(json_array_get(pages, j)));
		pn_plot_text(&p, p.ml - 6, pn_plot_py(&p, np - j - 0.5) + 4, "end", "tick", lab);
	}
	pn_plot_end(&p);
}

int pn_report_costs(FILE *f, const char *path, int src, const json_t *doc)
{
	struct costs c = {.f = f, .src = src};
	const json_t *results = json_object_get(doc, "results"), *r;
	size_t i;
	json_array_foreach(results, i, r)
	{
		const char *mode = json_string_value(json_object_get(r, "mode"));
		if (c.n == MAX_RESULTS || !json_is_object(r) || !mode ||
		    !json_is_string(json_object_get(r, "scenario"))) {
			fprintf(stderr, "%s: results[%zu]: %s\n", path, i,
				c.n == MAX_RESULTS
					? "more than 16 results"
					: "not a result (it needs \"scenario\" and \"mode\")");
			return 2;
		}
		if (json_is_null(json_object_get(r, "wal_bytes")))
			continue; /* a refused run: nothing to draw */
		c.res[c.n] = r;
		snprintf(c.mode[c.n++], sizeof(c.mode[0]), "%s", mode);
	}
	const char *scenario = c.n ? json_string_value(json_object_get(c.res[0], "scenario")) : "?";
	fprintf(f, "<section data-src=\"%d\" data-kind=\"costs\"><h2>Costs: ", src);
	pn_rep_esc(f, scenario);
	fputs(" <small>(", f);
	pn_rep_esc(f, path);
	fputs(")</small></h2>\n", f);
	if (c.n == 0) {
		fputs("<p class=\"note\">No result with figures (every run was refused).</p></section>\n",
		      f);
		return 0;
	}
	table(&c);
	bool series = series_col(c.res[0], "time_ns") != NULL;
	if (series) {
		wal_over_time(&c);
		by_record_type(&c);
		sawtooth(&c);
	} else {
		fputs("<p class=\"note\">This JSON has no \"series\" (written by an older penumbra): the "
		      "plots over time are left out.</p>\n",
		      f);
		by_record_type(&c);
	}
	side_by_side(&c);
	published_figures(&c, scenario);
	for (int k = 0; k < c.n; k++)
		generations(&c, k);
	fputs("</section>\n", f);
	return 0;
}

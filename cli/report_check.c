/*
 * report_check.c: a `check` JSON in `penumbra report` (cli layer): per scenario its verdict
 * against the expected one, crash points, crash states, recoveries and wall time (a table,
 * and the states as log-scale bars), the violations found, and, when the check ran with
 * --coverage, every coverage marker: seen both ways, one way only, or never.
 */
#include "report.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "pn.h"
#include "report_svg.h"

static void cell_text(FILE *f, const char *s, const char *cls)
{
	fprintf(f, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	pn_rep_esc(f, PN_REP_TEXT, s ? s : "-");
	fputs("</td>", f);
}

/* Scenario i's string at key (NULL when absent or null). */
static const char *text_of(struct pn_rep_in *in, const json_t *s, size_t i, const char *key)
{
	return pn_rep_string(in, json_object_get(s, key), false, "scenarios[%zu].%s", i, key);
}

/* Scenario i's counts and figures, each checked (RP2) before it is drawn. */
static const json_t *counts_of(struct pn_rep_in *in, const json_t *s, size_t i, const char *key)
{
	if (strcmp(key, "seconds") == 0)
		pn_rep_figure(in, json_object_get(s, key), "scenarios[%zu].%s", i, key);
	else
		pn_rep_count(in, json_object_get(s, key), "scenarios[%zu].%s", i, key);
	return json_object_get(s, key);
}

/* The report's input that is the file `trace` names (the same file, however named), or -1. */
static int trace_input(const struct pn_rep_in *in, const char *trace)
{
	struct stat a, b;
	if (!trace || stat(trace, &a) != 0)
		return -1;
	for (int k = 0; k < in->ninputs; k++)
		if (stat(in->inputs[k], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return k;
	return -1;
}

static void scenario_row(FILE *f, struct pn_rep_in *in, size_t i, const json_t *s)
{
	char path[96];
	const json_t *v = pn_rep_object(in, json_object_get(s, "violation"),
					"scenarios[%zu].violation", i);
	bool ok = pn_rep_bool(in, json_object_get(s, "ok"), "scenarios[%zu].ok", i);
	const char *mode = text_of(in, s, i, "mode"); /* check --modes: the protocol checked */
	char name[2 * PN_REP_STRING_MAX + 4];
	const char *scenario = text_of(in, s, i, "name");
	snprintf(name, sizeof(name), mode ? "%s (%s)" : "%s", scenario ? scenario : "?",
		 mode ? mode : "");
	fputs("<tr>", f);
	cell_text(f, name, NULL);
	cell_text(f, text_of(in, s, i, "verdict"), NULL);
	cell_text(f, text_of(in, s, i, "expected"), NULL);
	cell_text(f, ok ? "as expected" : "NOT as expected", ok ? "ok" : "bad");
	static const char *const keys[] = {"crash_points", "crash_states", "recoveries", "seconds"};
	for (size_t k = 0; k < PN_ARRAY_LEN(keys); k++) {
		snprintf(path, sizeof(path), ".scenarios[%zu].%s", i, keys[k]);
		pn_rep_num(f, "td", path, counts_of(in, s, i, keys[k]));
	}
	if (v) {
		const char *kind = pn_rep_string(in, json_object_get(v, "kind"), false,
						 "scenarios[%zu].violation.kind", i);
		const char *trace = pn_rep_string(in, json_object_get(v, "trace"), false,
						  "scenarios[%zu].violation.trace", i);
		int at = trace_input(in, trace);
		if (at < 0) { /* its trace not among the inputs: where it is, to add it */
			fputs("<td>", f);
			pn_rep_esc(f, PN_REP_TEXT, kind ? kind : "-");
			if (trace) {
				fputs(" <small>(trace ", f);
				pn_rep_esc(f, PN_REP_TEXT, trace);
				fputs(", not among this report's inputs)</small>", f);
			}
			fputs("</td>", f);
		} else {
			fprintf(f, "<td><a href=\"#trace-%d\">", at);
			pn_rep_esc(f, PN_REP_TEXT, kind ? kind : "-");
			fputs("</a></td>", f);
		}
		snprintf(path, sizeof(path), ".scenarios[%zu].violation.page", i);
		pn_rep_num(f, "td", path,
			   pn_rep_number(in, json_object_get(v, "page"), true, 0, UINT32_MAX,
					 "scenarios[%zu].violation.page", i));
		snprintf(path, sizeof(path), ".scenarios[%zu].violation.crash_point", i);
		pn_rep_count(in, json_object_get(v, "crash_point"),
			     "scenarios[%zu].violation.crash_point", i);
		pn_rep_num(f, "td", path, json_object_get(v, "crash_point"));
	} else {
		fputs("<td>-</td><td>-</td><td>-</td>", f);
	}
	fputs("</tr>\n", f);
}

#define STATE_PASS "#6a9fd4"
#define STATE_FOUND "#f28e2b"
#define STATE_BAD "#d62728"
#define STATE_RECOVERED "#1b3a5c"

/* Scenario i's two bars in the states plot: its crash states, and its recovered ones over
 * them; each count beside its bar's end with its JSON path. */
static void state_bars(struct pn_plot *p, struct pn_rep_in *in, size_t i, const json_t *s, int bar,
		       int gap)
{
	double states = pn_rep_count(in, json_object_get(s, "crash_states"),
				     "scenarios[%zu].crash_states", i);
	double rec = pn_rep_count(in, json_object_get(s, "recoveries"), "scenarios[%zu].recoveries",
				  i);
	double y1 = p->h - p->mt - p->mb - (double)i * (bar + gap) - gap / 2.0, y0 = y1 - bar;
	bool ok = pn_rep_bool(in, json_object_get(s, "ok"), "scenarios[%zu].ok", i);
	const char *name = text_of(in, s, i, "name");
	const char *verdict = text_of(in, s, i, "verdict");
	const char *expected = text_of(in, s, i, "expected");
	char tip[320], path[96], a[48], b[48];
	snprintf(tip, sizeof(tip), "%s: %s (expected %s), %s crash states, %s recovered",
		 name ? name : "?", verdict ? verdict : "?", expected ? expected : "-",
		 pn_rep_int(a, sizeof(a), (uint64_t)states),
		 pn_rep_int(b, sizeof(b), (uint64_t)rec));
	bool found = verdict && strcmp(verdict, "violation") == 0;
	pn_plot_rect(p, 1, y0, states > 1 ? states : 1.05, y1,
		     !ok     ? STATE_BAD
		     : found ? STATE_FOUND
			     : STATE_PASS,
		     tip);
	if (rec >= 1)
		pn_plot_rect(p, 1, y0 + bar / 4.0, rec > 1 ? rec : 1.05, y1 - bar / 4.0,
			     STATE_RECOVERED, tip);
	pn_plot_text(p, p->ml - 6, pn_plot_py(p, y0) - 3, "end", "tick", name ? name : "?");
	snprintf(path, sizeof(path), ".scenarios[%zu].crash_states", i);
	pn_plot_num(p, pn_plot_px(p, states > 1 ? states : 1) + 4, pn_plot_py(p, y0) - 3, "start",
		    path, json_object_get(s, "crash_states"), 1, 4);
}

/* States per scenario, log scale: a bar of the crash states enumerated, coloured by whether
 * the verdict was as expected, and over it a narrower dark bar of those recovered (the rest
 * were derived from a recovered base or judged without a recovery: docs/checker.md). */
static void states_plot(FILE *f, struct pn_rep_in *in, const json_t *arr)
{
	size_t n = json_array_size(arr), i;
	const json_t *s;
	int bar = 16, gap = 6;
	double hi = 10;
	json_array_foreach(arr, i, s)
		hi = fmax(hi, pn_rep_count(in, json_object_get(s, "crash_states"),
					   "scenarios[%zu].crash_states", i));
	struct pn_plot p =
		{.f = f, .w = 1100, .ml = 270, .mr = 80, .mt = 8, .mb = 40, .x_ticks = false};
	p.h = p.mt + p.mb + (int)n * (bar + gap);
	p.x = (struct pn_axis){1, pow(10, ceil(log10(hi))), true,
			       "states per scenario (log scale): crash states enumerated, of them "
			       "recovered"};
	p.y = (struct pn_axis){0, (double)(p.h - p.mt - p.mb), false, NULL};
	pn_plot_begin(&p, "crash states enumerated and recovered per scenario");
	for (double v = 1; v <= p.x.hi * 1.0001; v *= 10) {
		char lab[48];
		double x = pn_plot_px(&p, v);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
			p.mt, x, p.h - p.mb);
		pn_plot_text(&p, x, p.h - p.mb + 14, "middle", "tick",
			     pn_plot_log_tick(lab, sizeof(lab), v));
	}
	json_array_foreach(arr, i, s) state_bars(&p, in, i, s, bar, gap);
	pn_plot_end(&p);
	static const char *const names[] = {"crash states: pass, as expected",
					    "crash states: violation found, as expected",
					    "crash states: verdict NOT as expected",
					    "of them recovered"};
	static const char *const colors[] = {STATE_PASS, STATE_FOUND, STATE_BAD, STATE_RECOVERED};
	pn_rep_legend(f, names, colors, 4);
}

/* A marker's file from the repository's top folder on ("src/engine/wal.c"), as the build named it. */
static const char *source_path(const char *file)
{
	static const char *const tops[] = {"/src/", "/model/", "/sim/", "/cli/", "/disk/"};
	const char *best = NULL;
	for (size_t i = 0; file && i < PN_ARRAY_LEN(tops); i++) {
		const char *at = strstr(file, tops[i]);
		if (at && (!best || at < best))
			best = at;
	}
	return best ? best + 1 : file ? file : "?";
}

/* Marker i's count of key ("true", "false"). */
static double marker_count(struct pn_rep_in *in, const json_t *m, size_t i, const char *key)
{
	return pn_rep_count(in, json_object_get(m, key), "coverage.markers[%zu].%s", i, key);
}

static void coverage(FILE *f, struct pn_rep_in *in, const json_t *cov)
{
	const json_t *markers = pn_rep_array(in, json_object_get(cov, "markers"), PN_REP_ROWS_MAX,
					     "coverage.markers"),
		     *m;
	size_t i, counts[3] = {0};
	int src = in->src;
	static const char *const what[] = {"both", "one way", "never"};
	json_array_foreach(markers, i, m)
	{
		pn_rep_object(in, m, "coverage.markers[%zu]", i);
		bool t = marker_count(in, m, i, "true") > 0;
		bool fl = marker_count(in, m, i, "false") > 0;
		counts[t && fl ? 0 : t || fl ? 1 : 2]++;
	}
	fprintf(f,
		"<h3>Coverage markers</h3><p class=\"note\">The PN_TESTCASE boundaries of "
		"input %d's check: reached both ways (true and false), one way only, or never.</p>\n",
		src + 1);
	struct pn_plot p = {.f = f, .w = 1100, .h = 70, .ml = 10, .mr = 10, .mt = 8, .mb = 28};
	double total = (double)json_array_size(markers), x = 0;
	static const char *const colors[] = {"#59a14f", "#edc948", "#d62728"};
	p.x = (struct pn_axis){0, total > 0 ? total : 1, false, NULL};
	p.y = (struct pn_axis){0, 1, false, NULL};
	pn_plot_begin(&p, "coverage markers: both ways, one way, never");
	for (int k = 0; k < 3; k++) {
		char tip[96], path[96];
		snprintf(tip, sizeof(tip), "%zu markers seen %s", counts[k], what[k]);
		pn_plot_rect(&p, x, 0, x + (double)counts[k], 1, colors[k], tip);
		snprintf(path, sizeof(path), ".coverage.%s",
			 k == 0   ? "both"
			 : k == 1 ? "one_way"
				  : "never");
		const char *key = k == 0 ? "both" : k == 1 ? "one_way" : "never";
		pn_rep_count(in, json_object_get(cov, key), "coverage.%s", key);
		if (counts[k])
			pn_plot_num(&p, pn_plot_px(&p, x + counts[k] / 2.0),
				    pn_plot_py(&p, 0.5) + 4, "middle", path,
				    json_object_get(cov, key), 1, 4);
		x += (double)counts[k];
	}
	pn_plot_end(&p);
	pn_rep_legend(f, what, colors, 3);
	fputs("<table><tr><th>seen</th><th>marker</th><th class=\"num\">true</th>"
	      "<th class=\"num\">false</th><th>where</th></tr>\n",
	      f);
	json_array_foreach(markers, i, m)
	{
		char path[96], where[160];
		bool t = marker_count(in, m, i, "true") > 0;
		bool fl = marker_count(in, m, i, "false") > 0;
		fputs("<tr>", f);
		cell_text(f,
			  t && fl ? "both"
			  : t     ? "ONLY TRUE"
			  : fl    ? "ONLY FALSE"
				  : "NEVER",
			  t && fl   ? "ok"
			  : t || fl ? "warn"
				    : "bad");
		cell_text(f,
			  pn_rep_string(in, json_object_get(m, "name"), false,
					"coverage.markers[%zu].name", i),
			  NULL);
		snprintf(path, sizeof(path), ".coverage.markers[%zu].true", i);
		pn_rep_num(f, "td", path, json_object_get(m, "true"));
		snprintf(path, sizeof(path), ".coverage.markers[%zu].false", i);
		pn_rep_num(f, "td", path, json_object_get(m, "false"));
		snprintf(where, sizeof(where), "%s:%.0f",
			 source_path(pn_rep_string(in, json_object_get(m, "file"), false,
						   "coverage.markers[%zu].file", i)),
			 marker_count(in, m, i, "line"));
		cell_text(f, where, NULL);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

int pn_report_check(FILE *f, struct pn_rep_in *in, const json_t *doc)
{
	const json_t *arr = pn_rep_array(in, json_object_get(doc, "scenarios"), PN_REP_ROWS_MAX,
					 "scenarios"),
		     *s;
	size_t i, ok = 0;
	json_array_foreach(arr, i, s)
	{
		pn_rep_object(in, s, "scenarios[%zu]", i);
		pn_rep_string(in, json_object_get(s, "name"), true, "scenarios[%zu].name", i);
		ok += pn_rep_bool(in, json_object_get(s, "ok"), "scenarios[%zu].ok", i);
	}
	bool interrupted = pn_rep_bool(in, json_object_get(doc, "interrupted"), "interrupted");
	const json_t *cov = pn_rep_object(in, json_object_get(doc, "coverage"), "coverage");
	if (in->refused)
		return 2;
	fprintf(f,
		"<section data-src=\"%d\" data-kind=\"check\" id=\"check-%d\"><h2>Check: %zu "
		"scenarios, %zu as expected <small>(",
		in->src, in->src, json_array_size(arr), ok);
	pn_rep_esc(f, PN_REP_TEXT, in->path);
	fputs(")</small></h2>\n", f);
	if (interrupted)
		fputs("<p class=\"bad\">The check was interrupted: only the scenarios that finished "
		      "are here.</p>\n",
		      f);
	if (json_array_size(arr))
		states_plot(f, in, arr);
	fputs("<table><tr><th>scenario</th><th>verdict</th><th>expected</th><th>result</th>"
	      "<th class=\"num\">crash points</th><th class=\"num\">crash states</th>"
	      "<th class=\"num\">recoveries</th><th class=\"num\">seconds</th><th>violation</th>"
	      "<th class=\"num\">page</th><th class=\"num\">at event</th></tr>\n",
	      f);
	json_array_foreach(arr, i, s) scenario_row(f, in, i, s);
	fputs("</table>\n", f);
	if (cov)
		coverage(f, in, cov);
	else
		fputs("<p class=\"note\">No coverage markers in this JSON (run check with --coverage "
		      "to have them).</p>\n",
		      f);
	fputs("</section>\n", f);
	return in->refused ? 2 : 0;
}

/*
 * report_trace.c: a counterexample trace in `penumbra report` (cli layer). The trace is
 * re-run exactly as `penumbra replay` does (pn_check_scenario with its replay options), with
 * the checker's replay observers (checker.h) collecting what is drawn: the last events before
 * the crash as swimlanes (one lane per process, one per file for the AIO queue, each I/O a
 * bar from its dispatch to its completion), the crash state as a sector map of each unsynced
 * write (lost, persisted, torn: which units), the page that differs (expected and found bytes
 * around the first difference, both page LSNs), and the replay command. Figures that
 * `penumbra replay --json` also prints carry that JSON's paths (data-j; the section's
 * data-json="replay").
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "cli.h"
#include "report_svg.h"

#define MAX_WRITES 48 /* sector-map rows drawn; the rest are counted */

struct lane_event {
	uint64_t event, time;
	uint32_t kind, arg, lane;
	char text[160];
};

struct write_row {
	uint64_t seq, event, offset;
	uint32_t len, nunits, page, slot;
	uint64_t unit_from[64], unit_to[64]; /* each unit's bytes in the file (device.h DV4) */
	const char *file, *why;
	bool completed;
	struct pn_write_fate fate;
};

struct view {
	bool crashed, seen; /* the crash observer ran; with fates (not an invariant) */
	uint32_t nev;
	struct lane_event ev[PN_TRACE_LEN];
	uint32_t nlanes;
	char lanes[PN_TRACE_LEN][32]; /* at most one per event of the window */
	uint32_t nwrites, more_writes;
	struct write_row writes[MAX_WRITES];
	bool page_differs;
	uint32_t page, page_size;
	uint8_t *expected, *found;
};

static uint32_t lane_of(struct view *v, const char *name)
{
	for (uint32_t i = 0; i < v->nlanes; i++)
		if (strcmp(v->lanes[i], name) == 0)
			return i;
	PN_ASSERT(v->nlanes < PN_ARRAY_LEN(v->lanes));
	snprintf(v->lanes[v->nlanes], sizeof(v->lanes[0]), "%s", name);
	return v->nlanes++;
}

static const char *proc_name(const struct pn_world *w, uint32_t i, char *buf, size_t len)
{
	static const char *const kinds[] = {"backend",   "checkpointer", "bgwriter",
					    "walwriter", "startup",      "pageserver"};
	struct pn_proc_info p;
	pn_engine_proc_info(w->e, i, &p);
	if (p.kind == PN_PROC_BACKEND)
		snprintf(buf, len, "backend %u", i);
	else
		snprintf(buf, len, "%s",
			 (unsigned)p.kind < PN_ARRAY_LEN(kinds) ? kinds[p.kind] : "?");
	return buf;
}

/* The lanes of the processes and files the window's events are in, in a fixed order:
 * processes by index, then the AIO queue by file; then each event and its lane. */
static void take_events(struct view *v, const struct pn_world *w)
{
	uint64_t first = w->events > PN_TRACE_LEN ? w->events - PN_TRACE_LEN : 0;
	bool file_used[PN_FILE_COUNT] = {false};
	char name[32];
	for (uint32_t i = 0; i < pn_engine_proc_count(w->e); i++) {
		bool used = false;
		for (uint64_t k = first; k < w->events && !used; k++) {
			const struct pn_trace_entry *t = &w->trace[k % PN_TRACE_LEN];
			used = t->kind == PN_EV_STEP && t->arg == i;
		}
		if (used)
			lane_of(v, proc_name(w, i, name, sizeof(name)));
	}
	for (uint64_t k = first; k < w->events; k++) {
		const struct pn_trace_entry *t = &w->trace[k % PN_TRACE_LEN];
		if (t->kind != PN_EV_STEP && t->file < PN_FILE_COUNT)
			file_used[t->file] = true;
	}
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		snprintf(name, sizeof(name), "AIO %s", pn_file_name((enum pn_file)f));
		if (file_used[f])
			lane_of(v, name);
	}
	for (uint64_t i = first; i < w->events; i++) {
		const struct pn_trace_entry *t = &w->trace[i % PN_TRACE_LEN];
		struct lane_event *e = &v->ev[v->nev++];
		e->event = t->event + 1; /* as replay's timeline numbers them */
		e->time = t->time;
		e->kind = t->kind;
		e->arg = t->arg;
		pn_world_trace_text(w, t, e->text, sizeof(e->text));
		if (t->kind == PN_EV_STEP)
			e->lane = lane_of(v, proc_name(w, t->arg, name, sizeof(name)));
		else {
			snprintf(name, sizeof(name), "AIO %s", pn_file_name((enum pn_file)t->file));
			e->lane = lane_of(v, name);
		}
	}
}

static void take_writes(struct view *v, const struct pn_world *w, const struct pn_write_fate *f)
{
	for (uint32_t i = 0; i < w->dev.nunsynced; i++) {
		const struct pn_unsynced *u = &w->dev.unsynced[i];
		if (v->nwrites == MAX_WRITES) {
			v->more_writes++;
			continue;
		}
		struct write_row *r = &v->writes[v->nwrites++];
		r->seq = u->seq;
		r->event = u->event;
		r->offset = u->offset;
		r->len = u->len;
		pn_device_unit(&w->dev, u->offset, u->len, &r->nunits);
		for (uint32_t k = 0, at; k < r->nunits; k++) {
			uint32_t n = pn_device_unit_span(&w->dev, u->offset, u->len, k, &at);
			r->unit_from[k] = u->offset + at;
			r->unit_to[k] = u->offset + at + n - 1;
		}
		r->page = u->page;
		r->slot = u->slot;
		r->file = pn_file_name(u->file);
		r->why = pn_io_why_name((enum pn_io_why)u->why);
		r->completed = u->completed;
		r->fate = f[i];
	}
}

static void on_crash(void *arg, const struct pn_world *run, const struct pn_write_fate *fates)
{
	struct view *v = arg;
	v->seen = true;
	v->crashed = fates != NULL;
	take_events(v, run);
	if (fates)
		take_writes(v, run, fates);
}

static void on_page(void *arg, uint32_t page, const uint8_t *expected, const uint8_t *found,
		    uint32_t page_size)
{
	struct view *v = arg;
	v->page_differs = true;
	v->page = page;
	v->page_size = page_size;
	v->expected = malloc(page_size);
	v->found = malloc(page_size);
	PN_ASSERT(v->expected != NULL && v->found != NULL);
	memcpy(v->expected, expected, page_size);
	memcpy(v->found, found, page_size);
}

/* ---- swimlanes ---- */
static const char *lane_color(const char *lane)
{
	if (strncmp(lane, "AIO ", 4) == 0)
		return strstr(lane, "wal") ? "#f28e2b" : "#4e79a7";
	return strncmp(lane, "backend", 7) == 0 ? "#59a14f" : "#b07aa1";
}

static void io_bars(struct pn_plot *p, const struct view *v, double crash_x)
{
	for (uint32_t i = 0; i < v->nev; i++) {
		const struct lane_event *e = &v->ev[i];
		bool dispatch = e->kind == PN_EV_DISPATCH;
		if (e->kind == PN_EV_STEP)
			continue;
		/* its partner: the completion after a dispatch, the dispatch before a completion */
		int j = -1;
		for (int k = (int)i + (dispatch ? 1 : -1); k >= 0 && k < (int)v->nev && j < 0;
		     k += dispatch ? 1 : -1)
			if (v->ev[k].arg == e->arg &&
			    v->ev[k].kind == (dispatch ? PN_EV_COMPLETE : PN_EV_DISPATCH))
				j = k;
		if (!dispatch && j >= 0)
			continue; /* drawn from its dispatch */
		double x0 = dispatch ? i : -0.5, x1 = j >= 0 ? j : dispatch ? crash_x : i;
		double y = v->nlanes - e->lane;
		char tip[256];
		snprintf(tip, sizeof(tip), "I/O %u: %s%s", e->arg, e->text,
			 dispatch && j < 0 ? " - still in flight at the crash"
			 : !dispatch       ? " (dispatched before this window)"
					   : "");
		pn_plot_rect(p, x0, y - 0.75, x1 > x0 + 0.3 ? x1 : x0 + 0.3, y - 0.25,
			     dispatch && j < 0 ? PN_REP_FPI_COLOR : lane_color(v->lanes[e->lane]),
			     tip);
	}
}

static void swimlanes(FILE *f, const struct view *v, const char *crash_tip)
{
	int lane_h = 22;
	struct pn_plot p = {.f = f, .w = 1100, .ml = 110, .mr = 20, .mt = 10, .mb = 44};
	p.h = p.mt + p.mb + (int)v->nlanes * lane_h;
	p.x = (struct pn_axis){-0.5, v->nev + 0.5, false,
			       "event (the last events before the crash; hover for each)"};
	p.y = (struct pn_axis){0, (double)v->nlanes, false, NULL};
	pn_plot_begin(&p, "swimlanes of the events before the crash");
	for (uint32_t l = 0; l < v->nlanes; l++) {
		double y = pn_plot_py(&p, v->nlanes - l - 0.5);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>",
			p.ml, y, p.w - p.mr, y);
		pn_plot_text(&p, p.ml - 6, y + 4, "end", "lane", v->lanes[l]);
	}
	for (uint32_t i = 0; i < v->nev; i += 8) {
		char lab[48];
		snprintf(lab, sizeof(lab), "#%llu (%.3f ms)", (unsigned long long)v->ev[i].event,
			 (double)v->ev[i].time / 1e6);
		pn_plot_text(&p, pn_plot_px(&p, i), p.h - p.mb + 14, "middle", "tick", lab);
	}
	io_bars(&p, v, v->nev - 0.5);
	for (uint32_t i = 0; i < v->nev; i++) {
		const struct lane_event *e = &v->ev[i];
		if (e->kind != PN_EV_STEP)
			continue;
		char tip[224];
		snprintf(tip, sizeof(tip), "#%llu at %.6f ms: %s", (unsigned long long)e->event,
			 (double)e->time / 1e6, e->text);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" data-tip=\"",
			pn_plot_px(&p, i), pn_plot_py(&p, v->nlanes - e->lane - 0.5),
			lane_color(v->lanes[e->lane]));
		pn_rep_esc(f, PN_REP_ATTR, tip);
		fputs("\"/>", f);
	}
	pn_plot_vline(&p, v->nev - 0.5, PN_REP_FPI_COLOR, crash_tip);
	pn_plot_text(&p, pn_plot_px(&p, v->nev - 0.5) - 4, p.h - p.mb - 4, "end", "axis", "crash");
	pn_plot_end(&p);
	static const char *const names[] = {"backend step", "background process step",
					    "data I/O (dispatch to completion)", "WAL I/O",
					    "I/O in flight at the crash"};
	static const char *const colors[] = {"#59a14f", "#b07aa1", "#4e79a7", "#f28e2b",
					     PN_REP_FPI_COLOR};
	pn_rep_legend(f, names, colors, 5);
}

/* ---- the crash state: a sector map per unsynced write ---- */
static void sector_map(FILE *f, const struct view *v)
{
	int row_h = 18, label_w = 420, cell = 12;
	uint32_t maxu = 1;
	for (uint32_t i = 0; i < v->nwrites; i++)
		maxu = v->writes[i].nunits > maxu ? v->writes[i].nunits : maxu;
	struct pn_plot p = {.f = f, .ml = label_w, .mr = 90, .mt = 6, .mb = 30};
	p.w = label_w + 90 + (int)maxu * cell;
	p.w = p.w < 700 ? 700 : p.w;
	p.h = p.mt + p.mb + (int)(v->nwrites ? v->nwrites : 1) * row_h;
	p.x = (struct pn_axis){0, (double)(p.w - p.ml - p.mr) / cell, false,
			       "units of the write (sectors, or the tearing unit)"};
	p.y = (struct pn_axis){0, (double)(v->nwrites ? v->nwrites : 1), false, NULL};
	pn_plot_begin(&p, "crash state: sector map per unsynced write");
	for (uint32_t i = 0; i < v->nwrites; i++) {
		const struct write_row *r = &v->writes[i];
		double y = v->nwrites - i;
		char lab[200], tip[240];
		const char *fate = r->fate.fate == PN_FATE_PERSISTED ? "persisted"
				   : r->fate.fate == PN_FATE_TORN    ? "torn"
								     : "lost";
		if (r->page != UINT32_MAX)
			snprintf(lab, sizeof(lab),
				 "#%llu %s (%s) page %u slot %u, %u B at %llu: %s",
				 (unsigned long long)r->seq, r->file, r->why, r->page, r->slot,
				 r->len, (unsigned long long)r->offset, fate);
		else
			snprintf(lab, sizeof(lab), "#%llu %s (%s), %u B at %llu: %s",
				 (unsigned long long)r->seq, r->file, r->why, r->len,
				 (unsigned long long)r->offset, fate);
		pn_plot_text(&p, p.ml - 6, pn_plot_py(&p, y - 0.5) + 4, "end", "tick", lab);
		for (uint32_t u = 0; u < r->nunits; u++) {
			bool is_new = r->fate.fate == PN_FATE_PERSISTED ||
				      (r->fate.fate == PN_FATE_TORN && (r->fate.sectors >> u & 1));
			snprintf(tip, sizeof(tip),
				 "write #%llu unit %u (bytes %llu-%llu of the file): %s",
				 (unsigned long long)r->seq, u, (unsigned long long)r->unit_from[u],
				 (unsigned long long)r->unit_to[u],
				 is_new ? "new bytes reach the disk" : "old bytes stay");
			pn_plot_rect(&p, u + 0.08, y - 0.85, u + 0.92, y - 0.15,
				     is_new                         ? "#59a14f"
				     : r->fate.fate == PN_FATE_TORN ? "#f1ce63"
								    : "#cccccc",
				     tip);
		}
	}
	pn_plot_end(&p);
	static const char *const names[] = {"unit persisted (new bytes)",
					    "unit of a torn write left old",
					    "unit of a lost write (old bytes)"};
	static const char *const colors[] = {"#59a14f", "#f1ce63", "#cccccc"};
	pn_rep_legend(f, names, colors, 3);
	if (v->more_writes)
		fprintf(f, "<p class=\"note\">and %u more unsynced writes (not drawn).</p>\n",
			v->more_writes);
}

/* ---- the page that differs ---- */
static void hex_row(FILE *f, const uint8_t *a, const uint8_t *b, uint32_t from, uint32_t n)
{
	fputs("<td><code>", f);
	for (uint32_t i = from; i < from + n; i++)
		fprintf(f, a[i] != b[i] ? "<b class=\"bad\">%02x</b> " : "%02x ", a[i]);
	fputs("</code></td>", f);
}

static void page_bytes(FILE *f, const struct view *v)
{
	uint32_t off = 0;
	while (off < v->page_size && v->expected[off] == v->found[off])
		off++;
	bool same = off == v->page_size;
	uint32_t start = same ? 0 : (off & ~15u) >= 16 ? (off & ~15u) - 16 : 0;
	uint32_t end = start + 64 < v->page_size ? start + 64 : v->page_size;
	fprintf(f,
		"<h3>The page that differs: page %u</h3>\n<p>Expected page LSN <code>%llX</code>, "
		"found <code>%llX</code>; ",
		v->page, (unsigned long long)pn_page_lsn(v->expected),
		(unsigned long long)pn_page_lsn(v->found));
	if (same)
		fputs("the bytes are equal (the page fails verification: checksum or header).</p>\n",
		      f);
	else
		fprintf(f,
			"first difference at byte %u (bytes that differ in <b class=\"bad\">red</b>; "
			"the oracle may mask some, such as hint bits).</p>\n",
			off);
	fputs("<table><tr><th class=\"num\">offset</th><th>expected (oracle)</th><th>found "
	      "(recovered)</th></tr>\n",
	      f);
	for (uint32_t r = start; r < end; r += 16) {
		uint32_t n = end - r < 16 ? end - r : 16;
		fprintf(f, "<tr><td class=\"num\">%u</td>", r);
		hex_row(f, v->expected, v->found, r, n);
		hex_row(f, v->found, v->expected, r, n);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void header(FILE *f, const char *path, const struct pn_scenario *sc,
		   const struct pn_check_result *r, int rc)
{
	fprintf(f, "<p>Seed <code>%llu</code>, schedule ", (unsigned long long)sc->seed);
	json_t *sch = json_integer(sc->replay.schedule),
	       *cp = json_integer((json_int_t)sc->replay.crash_point);
	pn_rep_num(f, "code", ".schedule", sch);
	fputs(sc->crash.present ? ", crash after event " : ", the run up to event ", f);
	pn_rep_num(f, "code", ".crash_point", cp);
	if (sc->crash.present) {
		fputs(" in state <code>", f);
		pn_rep_esc(f, PN_REP_TEXT, sc->replay.state);
		fputs("</code>.</p>\n", f);
	} else {
		fputs(" (no crash: section: a runtime invariant).</p>\n", f);
	}
	json_decref(sch);
	json_decref(cp);
	if (rc == 1) {
		fprintf(f, "<p class=\"bad\">The violation reproduces: %s, page ",
			pn_violation_name(r->kind));
		json_t *pg = pn_cli_page_json(r->page);
		pn_rep_num(f, "code", ".page", pg);
		json_decref(pg);
		fputs(".</p>\n<pre>", f);
	} else {
		fputs("<p class=\"ok\">No violation: the trace does not reproduce one.</p>\n<pre>",
		      f);
	}
	pn_rep_esc(f, PN_REP_TEXT, r->detail);
	fputs("</pre>\n<p>Replay it: <code>penumbra replay ", f);
	pn_rep_esc(f, PN_REP_TEXT, path);
	fputs("</code></p>\n", f);
}

static int draw(FILE *f, const char *path, int src, const struct pn_scenario *sc)
{
	static struct pn_check_result r;
	struct view *v = calloc(1, sizeof(*v));
	PN_ASSERT(v != NULL);
	struct pn_check_options o = pn_check_replay_options(sc);
	o.replay_crash = on_crash;
	o.replay_page = on_page;
	o.replay_arg = v;
	int rc = pn_check_scenario(sc, &o, &r);
	if (r.error) {
		fprintf(stderr, "%s: %s\n", path, r.detail);
		rc = 2;
	} else {
		rc = r.violation ? 1 : 0;
		fprintf(f,
			"<section data-src=\"%d\" data-kind=\"trace\" data-json=\"replay\"><h2>"
			"Counterexample: ",
			src);
		pn_rep_esc(f, PN_REP_TEXT, sc->name);
		fputs(" <small>(", f);
		pn_rep_esc(f, PN_REP_TEXT, path);
		fputs(")</small></h2>\n", f);
		header(f, path, sc, &r, rc);
		char tip[96];
		snprintf(tip, sizeof(tip), "crash after event %llu",
			 (unsigned long long)sc->replay.crash_point);
		fputs("<h3>The events before the crash</h3>\n", f);
		if (v->seen)
			swimlanes(f, v,
				  v->crashed ? tip : "a runtime invariant broke here (no crash)");
		if (v->crashed) {
			fputs("<h3>The crash state</h3><p class=\"note\">Every write not yet synced at the "
			      "crash, in dispatch order, and what of it reached the disk.</p>\n",
			      f);
			sector_map(f, v);
		}
		if (v->page_differs)
			page_bytes(f, v);
		fputs("</section>\n", f);
		rc = 0;
	}
	free(v->expected);
	free(v->found);
	free(v);
	return rc;
}

int pn_report_trace(FILE *f, const char *path, int src)
{
	struct pn_scenario sc;
	if (!pn_cli_load(path, &sc))
		return 2;
	int rc = 2;
	if (!sc.replay.present)
		fprintf(stderr,
			"%s:1:1: not a trace (no replay: section) nor a run, compare or check "
			"JSON\n",
			path);
	else
		rc = draw(f, path, src, &sc);
	pn_scenario_free(&sc);
	return rc;
}

/*
 * report_trace.c: a counterexample trace in `penumbra report` (cli layer). The trace is
 * re-run exactly as `penumbra replay` does (pn_check_scenario with its replay options), with
 * the checker's replay observers (checkio.h) collecting what is shown. First the story in
 * text, readable without hovering (a screenshot or a mailing-list post carries it): the run's
 * last events before the crash, the crash and what of each unsynced write reached the disk,
 * what recovery did and read, for a crash inside recovery that crash and the recovery of it,
 * and the violation. Then the failing page's history over the whole run (each event that
 * touched it: updates, images logged, shifts, reads and writes with their slots, and the
 * checkpoints), the same events as swimlanes (one lane per process, one per file for the AIO
 * queue, each I/O a bar from its dispatch to its completion), each crash state as a sector
 * map of each unsynced write (lost, persisted, torn: which units), the page that differs
 * (its header decoded beside the bytes around the first difference, expected and found), and
 * the replay command. Figures that `penumbra replay --json` also prints carry that JSON's
 * paths (data-j; the section's data-json="replay").
 */
#include "report.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "cli.h"
#include "report_svg.h"
#include "trace.h"

#define MAX_WRITES 48      /* sector-map rows drawn per crash; the rest are counted */
#define HISTORY_KEPT 16384 /* the run's events that touched a page, the newest kept */
#define HISTORY_SHOWN 64   /* of the failing page's history, the newest shown */

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

/* A crash: the run's (or, crash 1, the recovery's) last events, and its unsynced writes. */
struct crash_view {
	bool crashed; /* with fates (not a runtime invariant) */
	uint32_t nev;
	struct lane_event ev[PN_TRACE_LEN];
	uint32_t nlanes;
	char lanes[PN_TRACE_LEN][32]; /* at most one per event of the window */
	uint32_t nwrites, more_writes;
	struct write_row writes[MAX_WRITES];
};

/* A recovery the replay judged: how many events it ran, its last ones, where its WAL ended. */
struct recovery_view {
	bool seen;
	uint64_t events, records, pages_read;
	pn_lsn end;
	uint32_t nev;
	struct lane_event ev[PN_TRACE_LEN];
};

/* An event of the run that touched a page (page set) or a checkpoint's begin or end. */
struct history_row {
	uint64_t event, time;
	pn_lsn insert; /* the WAL insert position after it */
	uint32_t page; /* UINT32_MAX: a checkpoint */
	bool image, shift;
	char text[224]; /* an event's text (160) and what a checkpoint says of it */
};

struct view {
	int src;         /* the input's index: the ids of its parts */
	uint32_t ncrash; /* 2: a crash inside recovery */
	struct crash_view crash[2];
	struct recovery_view rec[2]; /* of the crash; of the crash inside recovery */
	struct history_row *hist;    /* a ring of HISTORY_KEPT */
	uint64_t nhist;              /* rows taken (the ring holds the newest) */
	uint64_t fpis, shifts, begun, done;
	bool page_differs;
	uint32_t page, page_size;
	uint8_t *expected, *found;
};

static uint32_t lane_of(struct crash_view *v, const char *name)
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

/* The lane an event is drawn in: its process, or the AIO queue of its file. */
static void lane_name(const struct pn_world *w, const struct pn_trace_entry *t, char *buf,
		      size_t len)
{
	if (t->kind == PN_EV_STEP)
		proc_name(w, t->arg, buf, len);
	else
		snprintf(buf, len, "AIO %s", pn_file_name((enum pn_file)t->file));
}

/* w's last events (at most PN_TRACE_LEN) into ev, as replay's timeline numbers them. */
static uint32_t take_timeline(const struct pn_world *w, struct lane_event *ev)
{
	uint64_t first = w->events > PN_TRACE_LEN ? w->events - PN_TRACE_LEN : 0;
	uint32_t n = 0;
	for (uint64_t i = first; i < w->events; i++) {
		const struct pn_trace_entry *t = &w->trace[i % PN_TRACE_LEN];
		struct lane_event *e = &ev[n++];
		e->event = t->event + 1;
		e->time = t->time;
		e->kind = t->kind;
		e->arg = t->arg;
		pn_world_trace_text(w, t, e->text, sizeof(e->text));
	}
	PN_ASSERT(n <= PN_TRACE_LEN);
	return n;
}

/* The lanes of the processes and files the window's events are in, in a fixed order:
 * processes by index, then the AIO queue by file; then each event's lane. */
static void take_events(struct crash_view *v, const struct pn_world *w)
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
	v->nev = take_timeline(w, v->ev);
	for (uint64_t i = first; i < w->events; i++) {
		lane_name(w, &w->trace[i % PN_TRACE_LEN], name, sizeof(name));
		v->ev[i - first].lane = lane_of(v, name);
	}
}

static void take_writes(struct crash_view *v, const struct pn_world *w,
			const struct pn_write_fate *f)
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
	PN_ASSERT(v->ncrash < PN_ARRAY_LEN(v->crash));
	struct crash_view *c = &v->crash[v->ncrash++];
	c->crashed = fates != NULL;
	take_events(c, run);
	if (fates)
		take_writes(c, run, fates);
}

static void on_recovery(void *arg, const struct pn_world *r, bool nested)
{
	struct recovery_view *rv = &((struct view *)arg)->rec[nested];
	rv->seen = true;
	rv->events = r->events;
	rv->end = pn_engine_recovery_end(r->e);
	rv->records = pn_engine_metrics(r->e)->recovery_records;
	rv->pages_read = pn_engine_metrics(r->e)->recovery_pages_read;
	rv->nev = take_timeline(r, rv->ev);
}

/* The page an event's text names ("update page 2 (insert)", "write data (checkpoint) page 2
 * slot 1 ..."): the world's own words, so every kind of event that has one is seen. */
static uint32_t page_named(const char *text)
{
	const char *at = strstr(text, " page ");
	char *end;
	unsigned long p = at ? strtoul(at + 6, &end, 10) : ULONG_MAX;
	return at && end != at + 6 && p < UINT32_MAX ? (uint32_t)p : UINT32_MAX;
}

static struct history_row *history_take(struct view *v, const struct pn_trace_entry *t,
					pn_lsn insert)
{
	struct history_row *h = &v->hist[v->nhist++ % HISTORY_KEPT];
	memset(h, 0, sizeof(*h));
	h->event = t->event + 1;
	h->time = t->time;
	h->insert = insert;
	h->page = UINT32_MAX;
	return h;
}

/* After each event of the run: the page it touched (its text names one), whether it logged
 * an image or shifted, and each checkpoint begun or completed. */
static void on_event(void *arg, const struct pn_world *w)
{
	struct view *v = arg;
	const struct pn_trace_entry *t = &w->trace[(w->events - 1) % PN_TRACE_LEN];
	const struct pn_metrics *m = pn_engine_metrics(w->e);
	pn_lsn insert = pn_engine_wal_insert_lsn(w->e);
	uint64_t begun, done;
	char text[160];
	pn_engine_ckpt_seqs(w->e, &begun, &done);
	pn_world_trace_text(w, t, text, sizeof(text));
	uint32_t page = page_named(text);
	if (page != UINT32_MAX) {
		struct history_row *h = history_take(v, t, insert);
		h->page = page;
		h->image = t->kind == PN_EV_STEP && m->fpi_count > v->fpis;
		h->shift = t->kind == PN_EV_STEP && m->shifts > v->shifts;
		snprintf(h->text, sizeof(h->text), "%s", text);
	}
	for (uint64_t k = v->begun + 1; k <= begun; k++) {
		struct history_row *h = history_take(v, t, insert);
		snprintf(h->text, sizeof(h->text), "checkpoint %llu begins (%s)",
			 (unsigned long long)k, text);
	}
	for (uint64_t k = v->done + 1; k <= done; k++) {
		struct history_row *h = history_take(v, t, insert);
		snprintf(h->text, sizeof(h->text), "checkpoint %llu completes (%s)",
			 (unsigned long long)k, text);
	}
	v->fpis = m->fpi_count;
	v->shifts = m->shifts;
	v->begun = begun;
	v->done = done;
}

static void on_page(void *arg, uint32_t page, const uint8_t *expected, const uint8_t *found,
		    uint32_t page_size)
{
	struct view *v = arg;
	if (v->page_differs) { /* the first recovery's, then the nested one's: the last shown */
		free(v->expected);
		free(v->found);
	}
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

static void io_bars(struct pn_plot *p, const struct crash_view *v, double crash_x)
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

static void swimlanes(FILE *f, const struct crash_view *v, const char *crash_tip)
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
static void sector_map(FILE *f, const struct crash_view *v)
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

/* The 24-byte header as PostgreSQL lays it out (PageHeaderData), expected beside found; a field
 * that differs in red. pd_checksum is followed by what the found bytes' checksum is. */
static void page_header(FILE *f, const struct view *v)
{
	static const struct {
		const char *name;
		uint32_t at, len;
	} fields[] = {
		{"pd_lsn", 0, 8},
		{"pd_checksum", 8, 2},
		{"pd_flags", 10, 2},
		{"pd_lower", 12, 2},
		{"pd_upper", 14, 2},
		{"pd_special", 16, 2},
		{"pd_pagesize_version", 18, 2},
		{"pd_prune_xid", 20, 4},
	};
	const uint8_t *pages[2] = {v->expected, v->found};
	fputs("<table class=\"header\"><tr><th>header field</th><th class=\"num\">expected</th>"
	      "<th class=\"num\">found</th></tr>\n",
	      f);
	for (size_t i = 0; i < PN_ARRAY_LEN(fields); i++) {
		uint64_t val[2];
		for (int k = 0; k < 2; k++) {
			const uint8_t *at = pages[k] + fields[i].at;
			val[k] = fields[i].len == 8   ? pn_page_lsn(pages[k])
				 : fields[i].len == 4 ? pn_get32(at)
						      : pn_get16(at);
		}
		fprintf(f, "<tr><td><code>%s</code></td>", fields[i].name);
		for (int k = 0; k < 2; k++)
			fprintf(f, "<td class=\"num%s\">%s%llX</td>",
				val[0] != val[1] ? " bad" : "", fields[i].len == 8 ? "" : "0x",
				(unsigned long long)val[k]);
		fputs("</tr>\n", f);
	}
	uint16_t sum = pn_page_checksum(v->found, v->page_size, v->page);
	fprintf(f,
		"</table>\n<p class=\"note\">The found bytes' checksum is <code>0x%X</code>: "
		"pd_checksum %s it. pd_lower and pd_upper bound the free space; pd_lsn is the "
		"page LSN (the end of the last record applied to it).</p>\n",
		sum, pn_get16(v->found + 8) == sum ? "matches" : "does NOT match");
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
		"<h3 id=\"page-%d\">The page that differs: page %u</h3>\n<p>Expected page LSN "
		"<code>%llX</code>, found <code>%llX</code>; ",
		v->src, v->page, (unsigned long long)pn_page_lsn(v->expected),
		(unsigned long long)pn_page_lsn(v->found));
	if (same)
		fputs("the bytes are equal (the page fails verification: checksum or header).</p>\n",
		      f);
	else
		fprintf(f,
			"first difference at byte %u (bytes that differ in <b class=\"bad\">red</b>; "
			"the oracle may mask some, such as hint bits).</p>\n",
			off);
	page_header(f, v);
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

/* ---- the story, in text ---- */
/* Events as a table: number, virtual time, lane, what; a read in bold when `reads`. */
static void event_table(FILE *f, const struct lane_event *ev, uint32_t n, const char (*lanes)[32],
			bool reads)
{
	fputs("<table class=\"events\"><tr><th class=\"num\">event</th><th class=\"num\">"
	      "time (ms)</th>",
	      f);
	fputs(lanes ? "<th>who</th><th>what</th></tr>\n" : "<th>what</th></tr>\n", f);
	for (uint32_t i = 0; i < n; i++) {
		bool bold = reads && strstr(ev[i].text, " read ") != NULL;
		fprintf(f, "<tr><td class=\"num\">#%llu</td><td class=\"num\">%.6f</td>",
			(unsigned long long)ev[i].event, (double)ev[i].time / 1e6);
		if (lanes) {
			fputs("<td>", f);
			pn_rep_esc(f, PN_REP_TEXT, lanes[ev[i].lane]);
			fputs("</td>", f);
		}
		fputs(bold ? "<td><b>" : "<td>", f);
		pn_rep_esc(f, PN_REP_TEXT, ev[i].text);
		fputs(bold ? "</b></td></tr>\n" : "</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* What of write r reached the disk, in words. */
static void fate_text(const struct write_row *r, char *buf, size_t len)
{
	size_t at = 0;
	if (r->fate.fate != PN_FATE_TORN) {
		snprintf(buf, len, "%s",
			 r->fate.fate == PN_FATE_PERSISTED ? "persisted (every unit new)"
							   : "lost (every unit old)");
		return;
	}
	at += (size_t)snprintf(buf, len, "torn: of its %u units, new:", r->nunits);
	for (uint32_t u = 0; u < r->nunits && at < len; u++)
		if (r->fate.sectors >> u & 1)
			at += (size_t)snprintf(buf + at, len - at, " %u", u);
	if (at < len)
		snprintf(buf + at, len - at, "; the others old");
}

static void writes_list(FILE *f, const struct crash_view *c)
{
	fputs("<ul>", f);
	for (uint32_t i = 0; i < c->nwrites; i++) {
		const struct write_row *r = &c->writes[i];
		char what[200], fate[256];
		if (r->page != UINT32_MAX)
			snprintf(what, sizeof(what), "write #%llu to %s (%s) of page %u, slot %u",
				 (unsigned long long)r->seq, r->file, r->why, r->page, r->slot);
		else
			snprintf(what, sizeof(what), "write #%llu to %s (%s)",
				 (unsigned long long)r->seq, r->file, r->why);
		fate_text(r, fate, sizeof(fate));
		fprintf(f,
			"<li>%s, %u B at offset %llu, dispatched at event %llu%s: <b>%s</b></li>\n",
			what, r->len, (unsigned long long)r->offset, (unsigned long long)r->event,
			r->completed ? ", completed" : ", in flight", fate);
	}
	if (c->more_writes)
		fprintf(f, "<li>and %u more</li>", c->more_writes);
	fputs(c->nwrites ? "</ul>\n" : "<li>none</li></ul>\n", f);
}

static void recovery_item(FILE *f, const struct recovery_view *rv, const char *title)
{
	fprintf(f,
		"<li><b>%s</b> read the control file and its checkpoint, replayed %llu WAL records "
		"up to LSN <code>%llX</code> (the end of the WAL it could read) and read %llu "
		"pages, in %llu events; its last %u (an I/O read in bold):\n",
		title, (unsigned long long)rv->records, (unsigned long long)rv->end,
		(unsigned long long)rv->pages_read, (unsigned long long)rv->events, rv->nev);
	event_table(f, rv->ev, rv->nev, NULL, true);
	fputs("</li>\n", f);
}

static void crash_item(FILE *f, const struct crash_view *c, const char *title, uint64_t point,
		       const char *state)
{
	fprintf(f, "<li><b>%s</b> after event %llu, in state <code>", title,
		(unsigned long long)point);
	pn_rep_esc(f, PN_REP_TEXT, state);
	fprintf(f, "</code>: %u writes were not yet synced; what of each reached the disk:\n",
		c->nwrites + c->more_writes);
	writes_list(f, c);
	fputs("</li>\n", f);
}

static void story(FILE *f, const struct view *v, const struct pn_scenario *sc,
		  const struct pn_check_result *r, int rc)
{
	const struct crash_view *c = &v->crash[0];
	fprintf(f, "<h3 id=\"story-%d\">What happened</h3>\n<ol class=\"story\">\n", v->src);
	if (v->ncrash) {
		fprintf(f, "<li><b>The run</b>: its last %u events up to event %llu:\n", c->nev,
			(unsigned long long)sc->replay.crash_point);
		event_table(f, c->ev, c->nev, c->lanes, false);
		fputs("</li>\n", f);
	}
	if (c->crashed)
		crash_item(f, c, "The crash", sc->replay.crash_point, sc->replay.state);
	else if (v->ncrash)
		fputs("<li><b>No crash</b>: a runtime invariant broke at the last event.</li>\n",
		      f);
	if (v->rec[0].seen)
		recovery_item(f, &v->rec[0], "Recovery");
	if (v->ncrash > 1) {
		crash_item(f, &v->crash[1], "The crash inside recovery (its own events numbered)",
			   sc->replay.recovery_crash_point, sc->replay.recovery_state);
		fputs("<li><b>Its last events before that crash</b>:\n", f);
		event_table(f, v->crash[1].ev, v->crash[1].nev, v->crash[1].lanes, true);
		fputs("</li>\n", f);
	}
	if (v->rec[1].seen)
		recovery_item(f, &v->rec[1], "The recovery of the crash inside recovery");
	if (rc == 1) {
		fprintf(f, "<li class=\"bad\"><b>The violation</b>: %s%s, page ",
			pn_violation_name(r->kind),
			r->in_recovery ? " (after a crash inside recovery)" : "");
		char page[16];
		pn_rep_esc(f, PN_REP_TEXT, pn_cli_page_text(r->page, page, sizeof(page)));
		fputs(": ", f);
		pn_rep_esc(f, PN_REP_TEXT, r->detail);
		fputs("</li>\n", f);
	} else {
		fputs("<li class=\"ok\"><b>No violation</b>: the trace does not reproduce one.</li>\n",
		      f);
	}
	fputs("</ol>\n", f);
}

/* ---- the failing page's history over the run ---- */
static bool history_shown(const struct history_row *h, uint32_t page)
{
	return h->page == page || h->page == UINT32_MAX;
}

static void history(FILE *f, const struct view *v, uint32_t page)
{
	uint64_t from = v->nhist > HISTORY_KEPT ? v->nhist - HISTORY_KEPT : 0, n = 0, skip;
	for (uint64_t k = from; k < v->nhist; k++)
		n += history_shown(&v->hist[k % HISTORY_KEPT], page);
	skip = n > HISTORY_SHOWN ? n - HISTORY_SHOWN : 0;
	fprintf(f,
		"<h3>The history of page %u</h3>\n<p class=\"note\">Every event of the run that "
		"touched page %u (its updates, the images logged for it, its shifts, its reads and "
		"writes with the slot), and every checkpoint's begin and end%s%s.</p>\n",
		page, page, skip || from ? "; the newest shown" : "",
		from ? " (the run's oldest events are not kept)" : "");
	fputs("<table class=\"history\"><tr><th class=\"num\">event</th><th class=\"num\">"
	      "time (ms)</th><th>what</th><th class=\"num\">WAL insert LSN after</th><th></th>"
	      "</tr>\n",
	      f);
	for (uint64_t k = from; k < v->nhist; k++) {
		const struct history_row *h = &v->hist[k % HISTORY_KEPT];
		if (!history_shown(h, page) || (skip && skip--))
			continue;
		fprintf(f, "<tr%s><td class=\"num\">#%llu</td><td class=\"num\">%.6f</td><td>",
			h->page == UINT32_MAX ? " class=\"ckpt\"" : "",
			(unsigned long long)h->event, (double)h->time / 1e6);
		pn_rep_esc(f, PN_REP_TEXT, h->text);
		fprintf(f, "</td><td class=\"num\"><code>%llX</code></td><td>%s%s</td></tr>\n",
			(unsigned long long)h->insert, h->image ? "image logged " : "",
			h->shift ? "shift" : "");
	}
	fputs("</table>\n", f);
	if (n == 0)
		fputs("<p class=\"note\">No event of the run touched it.</p>\n", f);
}

static void header(FILE *f, const char *path, const struct pn_scenario *sc,
		   const struct pn_check_result *r, int rc)
{
	char hash[24];
	int edited = pn_trace_edited(sc, hash, sizeof(hash));
	fputs("<p>Scenario hash <code>", f);
	pn_rep_esc(f, PN_REP_TEXT, hash);
	fputs(edited < 0 ? "</code> (the trace records none).</p>\n"
	      : edited > 0
		      ? "</code>: <b class=\"bad\">edited</b> since the trace was written.</p>\n"
		      : "</code>, as the trace records it.</p>\n",
	      f);
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
	if (sc->replay.recovery_crash_point) {
		json_t *rp = json_integer((json_int_t)sc->replay.recovery_crash_point);
		fputs("<p>Then a crash inside recovery, after its event ", f);
		pn_rep_num(f, "code", ".recovery_crash_point", rp);
		fputs(" in state <code>", f);
		pn_rep_esc(f, PN_REP_TEXT, sc->replay.recovery_state);
		fputs("</code>.</p>\n", f);
		json_decref(rp);
	}
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

/* The pictures: the swimlanes and sector map of each crash, and the page that differs. */
static void pictures(FILE *f, const struct view *v, const struct pn_scenario *sc)
{
	char tip[96];
	const struct crash_view *c = &v->crash[0];
	snprintf(tip, sizeof(tip), "crash after event %llu",
		 (unsigned long long)sc->replay.crash_point);
	fputs("<h3>The events before the crash</h3>\n", f);
	if (v->ncrash)
		swimlanes(f, c, c->crashed ? tip : "a runtime invariant broke here (no crash)");
	if (c->crashed) {
		fputs("<h3>The crash state</h3><p class=\"note\">Every write not yet synced at the "
		      "crash, in dispatch order, and what of it reached the disk.</p>\n",
		      f);
		sector_map(f, c);
	}
	if (v->ncrash > 1) {
		snprintf(tip, sizeof(tip), "crash after recovery event %llu",
			 (unsigned long long)sc->replay.recovery_crash_point);
		fputs("<h3>The recovery's events before the crash inside it</h3>\n", f);
		swimlanes(f, &v->crash[1], tip);
		fputs("<h3>The crash state inside recovery</h3>\n", f);
		sector_map(f, &v->crash[1]);
	}
	if (v->page_differs)
		page_bytes(f, v);
}

static void section(FILE *f, const char *path, const struct view *v, const struct pn_scenario *sc,
		    const struct pn_check_result *r, int rc)
{
	fprintf(f,
		"<section data-src=\"%d\" data-kind=\"trace\" data-json=\"replay\" id=\"trace-%d\">"
		"<h2>Counterexample: ",
		v->src, v->src);
	pn_rep_esc(f, PN_REP_TEXT, sc->name);
	fputs(" <small>(", f);
	pn_rep_esc(f, PN_REP_TEXT, path);
	fputs(")</small></h2>\n", f);
	header(f, path, sc, r, rc);
	story(f, v, sc, r, rc);
	uint32_t page = v->page_differs ? v->page : rc == 1 ? r->page : PN_CLI_NO_PAGE;
	if (page != PN_CLI_NO_PAGE)
		history(f, v, page);
	pictures(f, v, sc);
	fputs("</section>\n", f);
}

static int draw(FILE *f, const char *path, int src, const struct pn_scenario *sc)
{
	static struct pn_check_result r;
	struct view *v = calloc(1, sizeof(*v));
	PN_ASSERT(v != NULL);
	v->src = src;
	v->hist = calloc(HISTORY_KEPT, sizeof(*v->hist));
	PN_ASSERT(v->hist != NULL);
	struct pn_check_options o = pn_check_replay_options(sc);
	o.replay_crash = on_crash;
	o.replay_page = on_page;
	o.replay_event = on_event;
	o.replay_recovery = on_recovery;
	o.replay_arg = v;
	int rc = pn_check_scenario(sc, &o, &r);
	if (r.error) {
		fprintf(stderr, "%s: %s\n", path, r.detail);
		rc = 2;
	} else {
		section(f, path, v, sc, &r, r.violation ? 1 : 0);
		rc = 0;
	}
	free(v->expected);
	free(v->found);
	free(v->hist);
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

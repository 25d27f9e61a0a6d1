/*
 * report_pgcrash.c: a trace of `penumbra pgcrash` in `penumbra report` (cli layer;
 * docs/pgcrash.md section 4). Nothing is re-run and no server is started: the trace names its
 * recording, whose log is read and whose crash point is prepared as the replay prepares it
 * (pn_pgc_trace_open), so what is drawn is the state the replay rebuilds:
 *   - the verdict and PostgreSQL's own words (the judge's detail), the configuration;
 *   - the operations before the crash (the last OPS_SHOWN), each with what it is at the
 *     crash: durable, its file gone, or the unsynced write's fate in this state;
 *   - the crash state: every unsynced write and its fate (lost, persisted, torn: which
 *     units are new);
 *   - the page that differs: of the writes the state does not keep whole, the first 8 KiB
 *     block (the one PostgreSQL named in the detail, when it names one) whose bytes differ
 *     from the bytes the server wrote: its header decoded and its bytes around the first
 *     difference, written and found. A row that differs is named by the detail (the judge
 *     read it from the recovered server, which a report does not start).
 */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report_svg.h"
#include "run.h"

#define OPS_SHOWN 32
#define WRITES_SHOWN 48
#define BLOCK 8192u

bool pn_report_is_pgcrash(const char *path)
{
	char line[16] = "";
	FILE *f = fopen(path, "r");
	bool is = f && fgets(line, sizeof(line), f) && strcmp(line, "pgcrash: 1\n") == 0;
	if (f)
		fclose(f);
	return is;
}

/* The index in pt.unsynced of op i, or UINT32_MAX. */
static uint32_t unsynced_of(const struct pn_pgc_point *pt, uint32_t i)
{
	for (uint32_t k = 0; k < pt->nunsynced; k++)
		if (pt->unsynced[k] == i)
			return k;
	return UINT32_MAX;
}

/* A fate in words: torn writes show their units, n new, o old. */
static void fate_words(const struct pn_pgc_trace *tr, uint32_t k, char *buf, size_t len)
{
	const struct pn_write_fate *w = &tr->pt.ce.fates[k];
	const struct pn_unsynced *u = &tr->pt.dev.unsynced[k];
	uint32_t n, at;
	if (w->fate != PN_FATE_TORN) {
		snprintf(buf, len, "%s", w->fate == PN_FATE_LOST ? "lost" : "persisted");
		return;
	}
	pn_device_unit(&tr->pt.dev, u->offset, u->len, &n);
	at = (uint32_t)snprintf(buf, len, "torn: units ");
	for (uint32_t i = 0; i < n && i < 64 && at + 2 < len; i++)
		buf[at++] = (w->sectors >> i) & 1 ? 'n' : 'o';
	snprintf(buf + at, len - at, " (n new, o old; %u-byte units)",
		 pn_scenario_atomic_unit(&tr->sc));
}

static void op_words(const struct pn_fop *op, char *buf, size_t len)
{
	if (op->kind == PN_FOP_WRITE)
		snprintf(buf, len, "write %s [%" PRIu64 ", +%" PRIu64 ")%s", op->path, op->off,
			 op->len, op->flags & PN_FOPF_SYNC ? " O_SYNC" : "");
	else if (op->kind == PN_FOP_ACK)
		snprintf(buf, len, "commit %" PRIu64 " acknowledged to the client", op->off);
	else if (op->path2[0])
		snprintf(buf, len, "%s %s %s", pn_fop_name(op->kind), op->path, op->path2);
	else
		snprintf(buf, len, "%s %s", pn_fop_name(op->kind), op->path);
}

static void ops_before(FILE *f, const struct pn_pgc_trace *tr)
{
	uint32_t from = tr->point > OPS_SHOWN ? tr->point - OPS_SHOWN : 0;
	fprintf(f,
		"<h3>The operations before the crash</h3>\n<p>Operations %u to %u of the %u "
		"recorded, in the order they happened; the crash is before operation %u.</p>\n"
		"<table class=\"events\"><tr><th class=\"num\">op</th><th class=\"num\">pid</th>"
		"<th>what</th><th>at the crash</th></tr>\n",
		from, tr->point ? tr->point - 1 : 0, tr->l.log.n, tr->point);
	for (uint32_t i = from; i < tr->point; i++) {
		const struct pn_fop *op = &tr->l.log.ops[i];
		char what[600], fate[160] = "";
		op_words(op, what, sizeof(what));
		uint32_t k = op->kind == PN_FOP_WRITE ? unsynced_of(&tr->pt, i) : UINT32_MAX;
		if (k != UINT32_MAX)
			fate_words(tr, k, fate, sizeof(fate));
		else if (op->kind == PN_FOP_WRITE)
			snprintf(fate, sizeof(fate), "%s",
				 tr->pt.w[i] == PN_W_DEAD ? "its file is gone" : "durable");
		fprintf(f, "<tr><td class=\"num\">%u</td><td class=\"num\">%u</td><td>", i,
			op->pid);
		pn_rep_esc(f, PN_REP_TEXT, what);
		fputs(k != UINT32_MAX && tr->pt.ce.fates[k].fate != PN_FATE_PERSISTED
			      ? "</td><td><b class=\"bad\">"
			      : "</td><td><b>",
		      f);
		pn_rep_esc(f, PN_REP_TEXT, fate);
		fputs("</b></td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void state_writes(FILE *f, const struct pn_pgc_trace *tr)
{
	fprintf(f,
		"<h3>The crash state: its unsynced writes</h3>\n<p>State <code>%s</code>: %u "
		"writes not yet made durable by an fsync at the crash point; what of each reached "
		"the disk in this state.</p>\n<table><tr><th class=\"num\">op</th><th>file</th>"
		"<th class=\"num\">offset</th><th class=\"num\">bytes</th><th>fate</th></tr>\n",
		tr->state, tr->pt.nunsynced);
	for (uint32_t k = 0; k < tr->pt.nunsynced && k < WRITES_SHOWN; k++) {
		const struct pn_fop *op = &tr->l.log.ops[tr->pt.unsynced[k]];
		char fate[160];
		fate_words(tr, k, fate, sizeof(fate));
		fprintf(f, "<tr><td class=\"num\">%u</td><td>", tr->pt.unsynced[k]);
		pn_rep_esc(f, PN_REP_TEXT, op->path);
		fprintf(f,
			"</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%" PRIu64
			"</td><td>",
			op->off, op->len);
		pn_rep_esc(f, PN_REP_TEXT, fate);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (tr->pt.nunsynced > WRITES_SHOWN)
		fprintf(f, "<p class=\"note\">%u more not shown.</p>\n",
			tr->pt.nunsynced - WRITES_SHOWN);
}

/* The page to show: unsynced write *k's block at file offset *at whose bytes under the state
 * (found) differ from the bytes written (written); the block the detail names first. */
static bool pick_block(const struct pn_pgc_trace *tr, const struct pn_write_fate *all,
		       uint8_t *written, uint8_t *found, uint32_t *k_out, uint64_t *at_out)
{
	const char *named = strstr(tr->detail, "block ");
	unsigned block = UINT32_MAX;
	char rel[256] = "";
	if (named && sscanf(named, "block %u of relation %255s", &block, rel) != 2)
		block = UINT32_MAX;
	for (int pass = block == UINT32_MAX; pass < 2; pass++)
		for (uint32_t k = 0; k < tr->pt.nunsynced; k++) {
			const struct pn_fop *op = &tr->l.log.ops[tr->pt.unsynced[k]];
			uint64_t base = tr->pt.dev.unsynced[k].offset - op->off;
			for (uint64_t b = op->off / BLOCK * BLOCK; b < op->off + op->len;
			     b += BLOCK) {
				if (pass == 0 && (b / BLOCK != block || strcmp(op->path, rel) != 0))
					continue;
				uint64_t lo = b > op->off ? b : op->off;
				uint32_t n = (uint32_t)((b + BLOCK < op->off + op->len
								 ? b + BLOCK
								 : op->off + op->len) -
							lo);
				pn_device_crash_read(&tr->pt.dev, all, PN_FILE_DATA, base + lo, n,
						     written + (lo - b));
				pn_device_crash_read(&tr->pt.dev, tr->pt.ce.fates, PN_FILE_DATA,
						     base + lo, n, found + (lo - b));
				if (memcmp(written + (lo - b), found + (lo - b), n) != 0) {
					*k_out = k;
					*at_out = b;
					return true;
				}
			}
		}
	return false;
}

static void hex_cells(FILE *f, const uint8_t *a, const uint8_t *b, uint32_t from, uint32_t n)
{
	fputs("<td><code>", f);
	for (uint32_t i = from; i < from + n; i++)
		fprintf(f, a[i] != b[i] ? "<b class=\"bad\">%02x</b> " : "%02x ", a[i]);
	fputs("</code></td>", f);
}

/* PostgreSQL's page header (PageHeaderData), written beside found. */
static void header_rows(FILE *f, const uint8_t *written, const uint8_t *found)
{
	static const struct {
		const char *name;
		uint32_t at, len;
	} fields[] = {{"pd_lsn", 0, 8},    {"pd_checksum", 8, 2}, {"pd_flags", 10, 2},
		      {"pd_lower", 12, 2}, {"pd_upper", 14, 2},   {"pd_special", 16, 2}};
	fputs("<table class=\"header\"><tr><th>header field</th><th class=\"num\">written</th>"
	      "<th class=\"num\">found</th></tr>\n",
	      f);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint64_t v[2] = {0, 0};
		const uint8_t *p[2] = {written, found};
		for (int s = 0; s < 2; s++) {
			uint32_t hi = 0, lo = 0;
			uint16_t h = 0;
			if (fields[i].len == 8) {
				memcpy(&hi, p[s], 4);
				memcpy(&lo, p[s] + 4, 4);
				v[s] = (uint64_t)hi << 32 | lo;
			} else {
				memcpy(&h, p[s] + fields[i].at, 2);
				v[s] = h;
			}
		}
		fprintf(f, "<tr><td><code>%s</code></td>", fields[i].name);
		for (int s = 0; s < 2; s++)
			fprintf(f, "<td class=\"num%s\">0x%" PRIX64 "</td>",
				v[0] != v[1] ? " bad" : "", v[s]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void page_differs(FILE *f, const struct pn_pgc_trace *tr)
{
	static uint8_t written[BLOCK], found[BLOCK];
	struct pn_write_fate *all = calloc(tr->pt.nunsynced + 1, sizeof(*all));
	uint32_t k = 0;
	uint64_t at = 0;
	memset(written, 0, sizeof(written));
	memset(found, 0, sizeof(found));
	for (uint32_t i = 0; all && i < tr->pt.nunsynced; i++)
		all[i].fate = PN_FATE_PERSISTED;
	fputs("<h3>The page that differs</h3>\n", f);
	if (!all || !pick_block(tr, all, written, found, &k, &at)) {
		fputs("<p>Every unsynced write is whole in this state: no page differs from what "
		      "the server wrote; the detail above says what recovery got wrong.</p>\n",
		      f);
		free(all);
		return;
	}
	const struct pn_fop *op = &tr->l.log.ops[tr->pt.unsynced[k]];
	uint32_t first = 0;
	while (first < BLOCK && written[first] == found[first])
		first++;
	fprintf(f, "<p>Block %" PRIu64 " of <code>", at / BLOCK);
	pn_rep_esc(f, PN_REP_TEXT, op->path);
	fprintf(f,
		"</code> (operation %u's write): first difference at byte %u; bytes that differ in "
		"<b class=\"bad\">red</b>. Written: what the server wrote; found: the state's bytes "
		"(what recovery started from).</p>\n",
		tr->pt.unsynced[k], first);
	if (strncmp(op->path, "pg_wal/", 7) != 0)
		header_rows(f, written, found);
	uint32_t start = (first & ~15u) >= 16 ? (first & ~15u) - 16 : 0;
	fputs("<table><tr><th class=\"num\">offset</th><th>written</th><th>found</th></tr>\n", f);
	for (uint32_t r = start; r < start + 64 && r < BLOCK; r += 16) {
		fprintf(f, "<tr><td class=\"num\">%u</td>", r);
		hex_cells(f, written, found, r, 16);
		hex_cells(f, found, written, r, 16);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	free(all);
}

static void head(FILE *f, const char *path, const struct pn_pgc_trace *tr, int src)
{
	const struct pn_pgc_config *c = &tr->pg.cfg;
	fprintf(f,
		"<section data-src=\"%d\" data-kind=\"pgcrash\" id=\"trace-%d\"><h2>Real "
		"PostgreSQL counterexample <small>(",
		src, src);
	pn_rep_esc(f, PN_REP_TEXT, path);
	fputs(")</small></h2>\n<p>Verdict <b class=\"bad\">", f);
	pn_rep_esc(f, PN_REP_TEXT, tr->verdict);
	fputs("</b>: ", f);
	pn_rep_esc(f, PN_REP_TEXT, tr->detail);
	fprintf(f,
		"</p>\n<p>full_page_writes %s, data checksums %s, wal_log_hints %s; crash model: "
		"tear %s, %u-byte units, max_unsynced %u. Crash point %u of %u "
		"operations, %u commits acknowledged before it. Recording <code>",
		c->fpw ? "on" : "off", c->checksums ? "on" : "off", c->wal_log_hints ? "on" : "off",
		pn_tear_name(tr->sc.crash.tear), pn_scenario_atomic_unit(&tr->sc),
		tr->sc.crash.max_unsynced, tr->point, tr->l.log.n, tr->pt.acked);
	pn_rep_esc(f, PN_REP_TEXT, tr->pg.work);
	fputs("</code>, PostgreSQL <code>", f);
	pn_rep_esc(f, PN_REP_TEXT, c->bindir);
	fputs("</code>.</p>\n", f);
}

int pn_report_pgcrash(FILE *f, const char *path, int src)
{
	static struct pn_pgc_trace tr;
	char why[1600] = "";
	if (!pn_pgc_trace_open(path, &tr, why, sizeof(why))) {
		fprintf(stderr, "%s\n", why);
		return 2;
	}
	head(f, path, &tr, src);
	ops_before(f, &tr);
	state_writes(f, &tr);
	page_differs(f, &tr);
	fputs("<p>Rebuild this state and run real recovery on it again: <code>penumbra pgcrash "
	      "--replay ",
	      f);
	pn_rep_esc(f, PN_REP_TEXT, path);
	fputs("</code></p>\n</section>\n", f);
	pn_pgc_trace_close(&tr);
	return 0;
}

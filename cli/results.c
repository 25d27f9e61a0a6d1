/*
 * results.c: a run's result as the commands show it (cli layer; results.h). In order:
 *   1. its status and the explanation of a failed run
 *   2. the metrics derived from its counters (ratios, latencies) and its row's own figures
 *      (protocols.h struct pn_figure_decl: the CLI prints them without knowing the row)
 *   3. the metrics table, one column per result
 *   4. the per-record-type breakdown, in pg_waldump --stats=record's format
 *   5. the JSON document {"results": [...]}
 * It keeps cli.h's CL3 (keys in a fixed order), CL5 (no page) and CL6 (product.md's keys).
 */
#include "cli.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. status ---- */

/* A stall: the run stopped (status 1) without a protocol violation. */
static bool stalled(const struct pn_cli_result *r)
{
	return r->sim.status == 1 && r->sim.viol.kind == PN_VIOL_NONE && !r->failed;
}

json_t *pn_cli_page_json(uint32_t page)
{
	return page == PN_CLI_NO_PAGE ? json_null() : json_integer((json_int_t)page);
}

const char *pn_cli_page_text(uint32_t page, char *buf, size_t len)
{
	return pn_page_text(page, buf, len);
}

void pn_cli_report_failure(const struct pn_cli_result *r, bool with_mode)
{
	const char *mode = with_mode ? r->label : "";
	const char *sep = with_mode ? ": " : "";
	char page[16];

	if (r->sim.status == 2 || r->failed)
		fprintf(stderr, "%s%s%s\n", mode, sep, r->sim.error);
	else if (stalled(r))
		fprintf(stderr, "%s%sstall: %s\n", mode, sep, r->sim.error);
	else if (r->sim.status == 1)
		fprintf(stderr, "%s%sviolation: %s page %s: %s\n", mode, sep,
			pn_violation_name(r->sim.viol.kind),
			pn_cli_page_text(r->sim.viol.page, page, sizeof page), r->sim.viol.detail);
}

int pn_cli_worst(int a, int b) { return a > b ? a : b; }

void pn_cli_xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
	}
}

/* RS1: the one place a result's status gets its name. */
static const char *status_name(const struct pn_cli_result *r)
{
	PN_ASSERT(r->sim.status >= 0 && r->sim.status <= 2);
	if (r->sim.status == 2)
		return "refused";
	if (r->failed)
		return "failed";
	if (stalled(r))
		return "stall";
	return r->sim.status == 1 ? "violation" : "ok";
}

/* ---- 2. derived metrics ---- */

/* Derived metrics: each is false when its denominator is zero (RS2). */
static bool ratio(uint64_t num, uint64_t den, double *v)
{
	*v = den ? (double)num / (double)den : 0.0;
	return den != 0;
}

static bool wal_per_txn(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	return ratio(r->sim.m.wal_bytes, r->sim.m.transactions, v);
}

/* The declaration of r's row: its label is the row's name, or its mode's (the mode's first
 * row); NULL for none. */
static const struct pn_protocol_decl *decl_of(const struct pn_cli_result *r)
{
	enum pn_protocol_id row;
	for (unsigned k = 0; k < PN_PROTOCOL_COUNT; k++)
		if (strcmp(r->label, pn_protocol_names[k]) == 0)
			return pn_protocol_decls[k];
	return pn_protocol_spelled(r->label, NULL, &row) ? pn_protocol_decls[row] : NULL;
}

/* r's value of the PN_FIGURE_WRITTEN figure `key` (0 when its row has no such figure). */
static uint64_t written_figure(const struct pn_cli_result *r, const char *key)
{
	const struct pn_protocol_decl *d = decl_of(r);
	for (uint32_t i = 0; d && i < d->nfigures; i++)
		if (d->figures[i].place == PN_FIGURE_WRITTEN && strcmp(d->figures[i].key, key) == 0)
			return r->sim.m.row.u[i];
	return 0;
}

/* Bytes r's row writes besides the data file's pages (its PN_FIGURE_WRITTEN figures). */
static uint64_t written_besides(const struct pn_cli_result *r)
{
	const struct pn_protocol_decl *d = decl_of(r);
	uint64_t sum = 0;
	for (uint32_t i = 0; d && i < d->nfigures; i++)
		if (d->figures[i].place == PN_FIGURE_WRITTEN)
			sum += r->sim.m.row.u[i];
	return sum;
}

static bool write_amp(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	const struct pn_metrics *m = &r->sim.m;
	return ratio(m->data_bytes_written + written_besides(r), m->logical_bytes_changed, v);
}

static bool space_amp(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	return ratio(r->sim.m.slots_used, r->sim.pages, v);
}

static bool latency_p50(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	*v = (double)r->sim.m.commit_latency_ns_p50 / 1e3;
	return r->sim.m.commits != 0;
}

static bool latency_p99(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	*v = (double)r->sim.m.commit_latency_ns_p99 / 1e3;
	return r->sim.m.commits != 0;
}

static bool throughput(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	bool ok = ratio(r->sim.m.commits, r->sim.m.elapsed_ns, v);
	*v *= 1e9;
	return ok;
}

static bool latency_max(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	*v = (double)r->sim.m.commit_latency_ns_max / 1e3;
	return r->sim.m.commits != 0;
}

static bool elapsed_s(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	*v = (double)r->sim.m.elapsed_ns / 1e9;
	return true;
}

static bool events(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	*v = (double)r->sim.events;
	return true;
}

static bool wal_vs_ref(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	return ratio(r->sim.m.wal_bytes, ref->sim.m.wal_bytes, v);
}

/* What the table being printed holds beyond `ref` (pn_cli_print_metrics sets it): its fpw
 * result, whether a result's row has a section of figures of its own (the "WAL vs fpw" row
 * opens them), and its rows. */
static struct {
	const struct pn_cli_result *fpw;
	bool section;
} table;

static bool wal_vs_fpw(const struct pn_cli_result *r, const struct pn_cli_result *ref, double *v)
{
	return table.fpw && table.fpw->sim.status != 2 &&
	       ratio(r->sim.m.wal_bytes, table.fpw->sim.m.wal_bytes, v);
}

/* ---- 3. the metrics table ---- */

#define NO_FIELD SIZE_MAX
#define CELL_LEN 48
#define M(f) offsetof(struct pn_metrics, f)

typedef bool (*derived_fn)(const struct pn_cli_result *r, const struct pn_cli_result *ref,
			   double *v);

struct metric_row {
	const char *label;
	size_t field;       /* offsetof(struct pn_metrics, a uint64_t), or NO_FIELD */
	derived_fn derived; /* when field is NO_FIELD */
	const char *fmt;    /* printf format of the derived value */
	bool gap;           /* a blank line before the row */
	bool section;       /* shown only when a result's row has a section of figures */
	/* a row's own figure instead (field NO_FIELD, derived NULL): figure `fig` of `owner` */
	const struct pn_protocol_decl *owner;
	uint32_t fig;
};

static const struct metric_row metric_rows[] = {
	{"transactions", M(transactions), NULL, NULL, true},
	{"commits", M(commits), NULL, NULL, false},
	{"aborts", M(aborts), NULL, NULL, false},
	{"WAL bytes", M(wal_bytes), NULL, NULL, true},
	{"WAL bytes/transaction", NO_FIELD, wal_per_txn, "%.1f", false},
	{"WAL vs ", NO_FIELD, wal_vs_ref, "%.2fx", false}, /* + the reference mode */
	{"WAL records", M(wal_records), NULL, NULL, false},
	{"FPI count", M(fpi_count), NULL, NULL, false},
	{"FPI bytes", M(fpi_bytes), NULL, NULL, false},
	{"shifts", M(shifts), NULL, NULL, false},
	{"data bytes written", M(data_bytes_written), NULL, NULL, true},
	{"fsyncs", M(fsyncs), NULL, NULL, false},
	{"WAL flushes", M(wal_flushes), NULL, NULL, false},
	{"checkpoints", M(checkpoints), NULL, NULL, false},
	{"  by time", M(ckpt_time), NULL, NULL, false},
	{"  by transactions", M(ckpt_xact), NULL, NULL, false},
	{"  by WAL volume", M(ckpt_wal), NULL, NULL, false},
	{"  requested", M(ckpt_request), NULL, NULL, false},
	{"write amplification", NO_FIELD, write_amp, "%.2f", true},
	{"space amplification", NO_FIELD, space_amp, "%.2f", false},
	{"read runs (logical scan)", M(read_runs), NULL, NULL, false},
	{"commit latency p50 (µs)", NO_FIELD, latency_p50, "%.1f", true},
	{"commit latency p99 (µs)", NO_FIELD, latency_p99, "%.1f", false},
	{"throughput (commits/s)", NO_FIELD, throughput, "%.1f", false},
	{"elapsed (virtual s)", NO_FIELD, elapsed_s, "%.3f", false},
	{"events simulated", NO_FIELD, events, "%.0f", false},
	{"WAL vs fpw", NO_FIELD, wal_vs_fpw, "%.3fx", true, true},
};

/* The table's rows: metric_rows with every row's PN_FIGURE_WRITTEN figures after "data
 * bytes written", then the PN_FIGURE_SECTION figures (with a label) of the rows of the
 * table's results (pn_cli_print_metrics builds it). */
#define TABLE_ROWS_MAX (PN_ARRAY_LEN(metric_rows) + PN_PROTOCOL_COUNT * PN_ROW_FIGURES_MAX)
static struct metric_row table_rows[TABLE_ROWS_MAX];
static size_t table_nrows;

static void add_row(struct metric_row row)
{
	PN_ASSERT(table_nrows < TABLE_ROWS_MAX);
	table_rows[table_nrows++] = row;
}

/* The figures of `place` of declaration d (section: those of a result's row only). */
static void add_figures(const struct pn_protocol_decl *d, enum pn_figure_place place)
{
	for (uint32_t i = 0; i < d->nfigures; i++)
		if (d->figures[i].place == place && d->figures[i].label)
			add_row((struct metric_row){.label = d->figures[i].label,
						    .field = NO_FIELD,
						    .owner = d,
						    .fig = i});
}

static void build_rows(const struct pn_cli_result *res, size_t n)
{
	table_nrows = 0;
	for (size_t k = 0; k < PN_ARRAY_LEN(metric_rows); k++) {
		add_row(metric_rows[k]);
		if (metric_rows[k].field == M(data_bytes_written))
			for (unsigned p = 0; p < PN_PROTOCOL_COUNT; p++)
				add_figures(pn_protocol_decls[p], PN_FIGURE_WRITTEN);
	}
	for (unsigned p = 0; p < PN_PROTOCOL_COUNT; p++) {
		bool in_table = false;
		for (size_t i = 0; i < n; i++)
			in_table |= decl_of(&res[i]) == pn_protocol_decls[p];
		if (in_table)
			add_figures(pn_protocol_decls[p], PN_FIGURE_SECTION);
	}
}

static bool is_ref_row(const struct metric_row *row) { return row->derived == wal_vs_ref; }

/* Display width of UTF-8 text: bytes that do not continue a character. */
static int text_width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void pad(FILE *out, const char *s, int width, bool right)
{
	int fill = width - text_width(s);
	if (!right)
		fputs(s, out);
	for (; fill > 0; fill--)
		fputc(' ', out);
	if (right)
		fputs(s, out);
}

static void row_label(const struct metric_row *row, const struct pn_cli_result *ref, char *buf)
{
	snprintf(buf, CELL_LEN, "%s%s", row->label, is_ref_row(row) ? ref->label : "");
}

/* A row's own figure: a written one every result has (0 where its row has none), a section
 * one only the owner's results ("-" in the others' and where it has no value). */
static void figure_cell(const struct metric_row *row, const struct pn_cli_result *r, char *buf)
{
	const struct pn_figure_decl *f = &row->owner->figures[row->fig];
	const struct pn_row_figures *v = &r->sim.m.row;

	if (f->place == PN_FIGURE_WRITTEN)
		snprintf(buf, CELL_LEN, "%" PRIu64, written_figure(r, f->key));
	else if (decl_of(r) != row->owner)
		snprintf(buf, CELL_LEN, "-");
	else if (!f->fmt)
		snprintf(buf, CELL_LEN, "%" PRIu64, v->u[row->fig]);
	else if (v->valid[row->fig])
		snprintf(buf, CELL_LEN, f->fmt, v->v[row->fig]);
	else
		snprintf(buf, CELL_LEN, "-");
}

static void row_cell(const struct metric_row *row, const struct pn_cli_result *r,
		     const struct pn_cli_result *ref, char *buf)
{
	double v;

	if (r->sim.status == 2 || (is_ref_row(row) && ref->sim.status == 2))
		snprintf(buf, CELL_LEN, "-");
	else if (row->owner)
		figure_cell(row, r, buf);
	else if (row->field != NO_FIELD)
		snprintf(buf, CELL_LEN, "%" PRIu64,
			 *(const uint64_t *)((const char *)&r->sim.m + row->field));
	else if (row->derived(r, ref, &v))
		snprintf(buf, CELL_LEN, row->fmt, v);
	else
		snprintf(buf, CELL_LEN, "-");
}

static bool row_shown(const struct metric_row *row, const struct pn_cli_result *ref)
{
	return (ref != NULL || !is_ref_row(row)) && (table.section || !row->section);
}

/* Widths: the label column, then one per result. */
static void widths(const struct pn_cli_result *res, size_t n, const struct pn_cli_result *ref,
		   int *label_w, int *col_w)
{
	char buf[CELL_LEN];

	*label_w = (int)strlen(res[0].txn_names[0] ? "  its WAL bytes/OrderStatus" : "scenario");
	for (size_t i = 0; i < n; i++)
		col_w[i] = PN_MAX(text_width(res[i].label), text_width(status_name(&res[i])));
	for (size_t k = 0; k < table_nrows; k++) {
		const struct metric_row *row = &table_rows[k];
		if (!row_shown(row, ref))
			continue;
		row_label(row, ref, buf);
		*label_w = PN_MAX(*label_w, text_width(buf));
		for (size_t i = 0; i < n; i++) {
			row_cell(row, &res[i], ref, buf);
			col_w[i] = PN_MAX(col_w[i], text_width(buf));
		}
	}
}

static void text_row(FILE *out, const char *label, int label_w, const char *const *cells,
		     const int *col_w, size_t n)
{
	pad(out, label, label_w, false);
	for (size_t i = 0; i < n; i++) {
		fputs("  ", out);
		pad(out, cells[i], col_w[i], true);
	}
	fputc('\n', out);
}

/* Per transaction type of the workload (pgbench, tpcc): count, the WAL of its own records
 * per transaction, and all WAL per transaction of the first type (seed 000's "WAL per
 * NewOrder"). */
static void print_txn_types(FILE *out, const struct pn_cli_result *res, size_t n, int label_w,
			    const int *col_w)
{
	char label[CELL_LEN], buf[PN_CLI_MAX_MODES][CELL_LEN];
	const char *cells[PN_CLI_MAX_MODES];
	const char *const *names = res[0].txn_names;
	if (names[0] == NULL)
		return;
	fputc('\n', out);
	for (int t = 0; t < PN_TXN_TYPES && names[t]; t++) {
		for (int k = 0; k < 2; k++) {
			if (k == 0)
				snprintf(label, sizeof label, "%s transactions", names[t]);
			else
				snprintf(label, sizeof label, "  its WAL bytes/%s", names[t]);
			for (size_t i = 0; i < n; i++) {
				const struct pn_metrics *m = &res[i].sim.m;
				double v;
				if (res[i].sim.status == 2)
					snprintf(buf[i], CELL_LEN, "-");
				else if (k == 0)
					snprintf(buf[i], CELL_LEN, "%" PRIu64,
						 m->txn_type_count[t]);
				else if (ratio(m->txn_type_wal[t], m->txn_type_count[t], &v))
					snprintf(buf[i], CELL_LEN, "%.1f", v);
				else
					snprintf(buf[i], CELL_LEN, "-");
				cells[i] = buf[i];
			}
			text_row(out, label, label_w, cells, col_w, n);
		}
	}
	snprintf(label, sizeof label, "WAL bytes per %s", names[0]);
	for (size_t i = 0; i < n; i++) {
		double v;
		const struct pn_metrics *m = &res[i].sim.m;
		if (res[i].sim.status != 2 && ratio(m->wal_bytes, m->txn_type_count[0], &v))
			snprintf(buf[i], CELL_LEN, "%.2f", v);
		else
			snprintf(buf[i], CELL_LEN, "-");
		cells[i] = buf[i];
	}
	text_row(out, label, label_w, cells, col_w, n);
}

void pn_cli_print_metrics(FILE *out, const struct pn_cli_result *res, size_t n,
			  const struct pn_cli_result *ref)
{
	int label_w, col_w[PN_CLI_MAX_MODES];
	const char *cells[PN_CLI_MAX_MODES];
	char label[CELL_LEN], buf[PN_CLI_MAX_MODES][CELL_LEN];

	PN_ASSERT(n >= 1 && n <= PN_CLI_MAX_MODES);
	table.fpw = NULL;
	table.section = false;
	for (size_t i = 0; i < n; i++) {
		const struct pn_protocol_decl *d = decl_of(&res[i]);
		table.section |= d && d->section;
		if (res[i].mode == PN_MODE_FPW)
			table.fpw = &res[i];
	}
	build_rows(res, n);
	widths(res, n, ref, &label_w, col_w);
	pad(out, "scenario", label_w, false);
	fprintf(out, "  %s (seed %" PRIu64 ")\n", res[0].scenario, res[0].seed);
	for (size_t i = 0; i < n; i++)
		cells[i] = res[i].label;
	text_row(out, "mode", label_w, cells, col_w, n);
	for (size_t i = 0; i < n; i++)
		cells[i] = status_name(&res[i]);
	text_row(out, "status", label_w, cells, col_w, n);
	for (size_t k = 0; k < table_nrows; k++) {
		const struct metric_row *row = &table_rows[k];
		if (!row_shown(row, ref))
			continue;
		if (row->gap)
			fputc('\n', out);
		row_label(row, ref, label);
		for (size_t i = 0; i < n; i++) {
			row_cell(row, &res[i], ref, buf[i]);
			cells[i] = buf[i];
		}
		text_row(out, label, label_w, cells, col_w, n);
	}
	print_txn_types(out, res, n, label_w, col_w);
}

/* ---- 4. records by type, as pg_waldump --stats=record prints them ---- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void records_header(FILE *out)
{
	static const char fmt[] = "%-27s %20s %8s %20s %8s %20s %8s %20s %8s\n";

	fprintf(out, fmt, "Type", "N", "(%)", "Record size", "(%)", "FPI size", "(%)",
		"Combined size", "(%)");
	fprintf(out, fmt, "----", "-", "---", "-----------", "---", "--------", "---",
		"-------------", "---");
}

void pn_cli_print_record_rows(FILE *out, const struct pn_cli_record_row *rows, size_t nrows)
{
	uint64_t n = 0, rec = 0, fpi = 0, all;
	char rec_pct[16], fpi_pct[16];

	for (size_t i = 0; i < nrows; i++) {
		n += rows[i].count;
		rec += rows[i].rec_bytes;
		fpi += rows[i].fpi_bytes;
	}
	all = rec + fpi;
	records_header(out);
	for (size_t i = 0; i < nrows; i++) {
		uint64_t tn = rows[i].count, tr = rows[i].rec_bytes, tf = rows[i].fpi_bytes;
		fprintf(out,
			"%-27s %20" PRIu64 " (%6.02f) %20" PRIu64 " (%6.02f) %20" PRIu64
			" (%6.02f) %20" PRIu64 " (%6.02f)\n",
			rows[i].name, tn, pct(tn, n), tr, pct(tr, rec), tf, pct(tf, fpi), tr + tf,
			pct(tr + tf, all));
	}
	fprintf(out, "%-27s %20s %8s %20s %8s %20s %8s %20s\n", "", "--------", "", "--------", "",
		"--------", "", "--------");
	snprintf(rec_pct, sizeof rec_pct, "[%.02f%%]", pct(rec, all));
	snprintf(fpi_pct, sizeof fpi_pct, "[%.02f%%]", pct(fpi, all));
	fprintf(out,
		"%-27s %20" PRIu64 " %-9s%20" PRIu64 " %-9s%20" PRIu64 " %-9s%20" PRIu64 " %-6s\n",
		"Total", n, "", rec, rec_pct, fpi, fpi_pct, all, "[100%]");
}

/* pg_waldump's order of the rows: by resource manager id, then by the record's info bits */
static unsigned record_order(enum pn_rec t)
{
	uint8_t rmid, info;
	pn_rec_ids(t, &rmid, &info);
	return (unsigned)rmid << 8 | info;
}

void pn_cli_print_records(FILE *out, const struct pn_metrics *m)
{
	struct pn_cli_record_row rows[PN_REC_COUNT];
	enum pn_rec kinds[PN_REC_COUNT];
	size_t n = 0;

	/* an insertion sort of the kinds written (at most PN_REC_COUNT of them) */
	for (int t = 0; t < PN_REC_COUNT; t++) {
		if (m->rec_count[t] == 0)
			continue;
		size_t at = n++;
		for (; at > 0 && record_order(kinds[at - 1]) > record_order((enum pn_rec)t); at--)
			kinds[at] = kinds[at - 1];
		kinds[at] = (enum pn_rec)t;
	}
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct pn_cli_record_row){pn_rec_name(kinds[i]), m->rec_count[kinds[i]],
						     m->rec_bytes[kinds[i]],
						     m->rec_fpi_bytes[kinds[i]]};
	pn_cli_print_record_rows(out, rows, n);
}

/* ---- 5. JSON ---- */

static void set_u64(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)v));
}

static void set_str(json_t *o, const char *key, const char *s)
{
	json_object_set_new(o, key, json_string(s));
}

/* A derived value, or null when it is undefined (a zero denominator). */
static void set_derived(json_t *o, const char *key, derived_fn fn, const struct pn_cli_result *r)
{
	double v;
	json_object_set_new(o, key, fn(r, NULL, &v) ? json_real(v) : json_null());
}

static json_t *checkpoints_json(const struct pn_metrics *m)
{
	json_t *o = json_object();
	set_u64(o, "time", m->ckpt_time);
	set_u64(o, "xact", m->ckpt_xact);
	set_u64(o, "wal", m->ckpt_wal);
	set_u64(o, "request", m->ckpt_request);
	return o;
}

/* Every record type, zero counts included, so scripts can index any of them. */
static json_t *records_json(const struct pn_metrics *m)
{
	json_t *o = json_object();
	for (int t = 0; t < PN_REC_COUNT; t++) {
		json_t *rec = json_object();
		set_u64(rec, "count", m->rec_count[t]);
		set_u64(rec, "record_bytes", m->rec_bytes[t]);
		set_u64(rec, "fpi_bytes", m->rec_fpi_bytes[t]);
		json_object_set_new(o, pn_rec_name((enum pn_rec)t), rec);
	}
	return o;
}

/* {"NewOrder": {"count", "wal_bytes", "wal_bytes_per_transaction",
 * "all_wal_bytes_per_transaction"}, ...}: the last is all WAL / this type's count (seed
 * 000's "WAL per NewOrder"). Empty for workloads without types. */
static json_t *txn_types_json(const struct pn_cli_result *r)
{
	json_t *o = json_object();
	const struct pn_metrics *m = &r->sim.m;
	for (int t = 0; t < PN_TXN_TYPES && r->txn_names[t]; t++) {
		json_t *x = json_object();
		double v;
		set_u64(x, "count", m->txn_type_count[t]);
		set_u64(x, "wal_bytes", m->txn_type_wal[t]);
		json_object_set_new(x, "wal_bytes_per_transaction",
				    ratio(m->txn_type_wal[t], m->txn_type_count[t], &v)
					    ? json_real(v)
					    : json_null());
		json_object_set_new(x, "all_wal_bytes_per_transaction",
				    ratio(m->wal_bytes, m->txn_type_count[t], &v) ? json_real(v)
										  : json_null());
		json_object_set_new(o, r->txn_names[t], x);
	}
	return o;
}

static json_t *violation_json(const struct pn_cli_result *r)
{
	json_t *o;

	if (r->sim.status != 1 || r->failed)
		return json_null();
	o = json_object();
	if (stalled(r)) {
		set_str(o, "kind", "stall");
		json_object_set_new(o, "page", json_null());
		set_str(o, "detail", r->sim.error);
		return o;
	}
	set_str(o, "kind", pn_violation_name(r->sim.viol.kind));
	json_object_set_new(o, "page", pn_cli_page_json(r->sim.viol.page));
	set_str(o, "detail", r->sim.viol.detail);
	return o;
}

/* CL6: the keys product.md promises, in its order; a run the engine refused has no figures. */
static const char *const contract_figures[] = {
	"transactions",        "commits",         "wal_bytes",
	"wal_records",         "fpi_count",       "fpi_bytes",
	"data_bytes_written",  "fsyncs",          "checkpoints",
	"space_amplification", "elapsed_seconds",
};

static void contract_keys(json_t *o, const struct pn_cli_result *r)
{
	const struct pn_metrics *m = &r->sim.m;
	set_str(o, "scenario", r->scenario);
	set_str(o, "mode", r->label);
	if (r->sim.status == 2) {
		for (size_t i = 0; i < PN_ARRAY_LEN(contract_figures); i++)
			json_object_set_new(o, contract_figures[i], json_null());
		return;
	}
	set_u64(o, "transactions", m->transactions);
	set_u64(o, "commits", m->commits);
	set_u64(o, "wal_bytes", m->wal_bytes);
	set_u64(o, "wal_records", m->wal_records);
	set_u64(o, "fpi_count", m->fpi_count);
	set_u64(o, "fpi_bytes", m->fpi_bytes);
	set_u64(o, "data_bytes_written", m->data_bytes_written);
	set_u64(o, "fsyncs", m->fsyncs);
	set_u64(o, "checkpoints", m->checkpoints);
	set_derived(o, "space_amplification", space_amp, r);
	set_derived(o, "elapsed_seconds", elapsed_s, r);
}

static void cost_keys(json_t *o, const struct pn_cli_result *r)
{
	const struct pn_metrics *m = &r->sim.m;
	set_derived(o, "wal_bytes_per_transaction", wal_per_txn, r);
	set_u64(o, "shifts", m->shifts);
	for (unsigned p = 0; p < PN_PROTOCOL_COUNT; p++) {
		const struct pn_protocol_decl *d = pn_protocol_decls[p];
		for (uint32_t i = 0; i < d->nfigures; i++)
			if (d->figures[i].place == PN_FIGURE_WRITTEN)
				set_u64(o, d->figures[i].key, written_figure(r, d->figures[i].key));
	}
	set_derived(o, "write_amplification", write_amp, r);
	set_u64(o, "read_runs", m->read_runs);
	set_derived(o, "commit_latency_us_p50", latency_p50, r);
	set_derived(o, "commit_latency_us_p99", latency_p99, r);
	json_object_set_new(o, "checkpoints_by_cause", checkpoints_json(m));
	json_object_set_new(o, "records", records_json(m));
	json_object_set_new(o, "transaction_types", txn_types_json(r));
}

static void extra_keys(json_t *o, const struct pn_cli_result *r)
{
	const struct pn_metrics *m = &r->sim.m;
	set_u64(o, "aborts", m->aborts);
	set_derived(o, "throughput_commits_per_second", throughput, r);
	set_derived(o, "commit_latency_us_max", latency_max, r);
	set_u64(o, "wal_flushes", m->wal_flushes);
	set_u64(o, "logical_bytes_changed", m->logical_bytes_changed);
	set_u64(o, "slots_used", m->slots_used);
	set_u64(o, "pages", r->sim.pages);
	set_u64(o, "generations", r->sim.generations);
	set_u64(o, "events", r->sim.events);
}

/* The section of r's row (its PN_FIGURE_SECTION figures; null where a real has no value). */
static json_t *section_json(const struct pn_cli_result *r, const struct pn_protocol_decl *d)
{
	const struct pn_row_figures *v = &r->sim.m.row;
	json_t *o = json_object();
	for (uint32_t i = 0; i < d->nfigures; i++) {
		const struct pn_figure_decl *f = &d->figures[i];
		if (f->place != PN_FIGURE_SECTION)
			continue;
		if (!f->fmt)
			set_u64(o, f->key, v->u[i]);
		else
			json_object_set_new(o, f->key,
					    v->valid[i] ? json_real(v->v[i]) : json_null());
	}
	return o;
}

json_t *pn_cli_result_json(const struct pn_cli_result *r)
{
	json_t *o = json_object();
	const struct pn_protocol_decl *d = decl_of(r);

	contract_keys(o, r);
	if (r->sim.status != 2)
		cost_keys(o, r);
	json_object_set_new(o, "violation", violation_json(r));
	if (r->sim.status != 2)
		extra_keys(o, r);
	if (r->sim.status != 2 && d && d->section)
		json_object_set_new(o, d->section, section_json(r, d));
	set_u64(o, "seed", r->seed);
	set_str(o, "status", status_name(r));
	if (r->sim.status == 2 || r->failed)
		set_str(o, "error", r->sim.error);
	if (r->sim.status != 2 && r->sim.series.n)
		json_object_set_new(o, "series", pn_cli_series_json(&r->sim.series));
	return o;
}

static int write_text(const char *cmd, FILE *f, const char *path, const char *text)
{
	bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
	return pn_cli_close_output(cmd, f, path, ok);
}

int pn_cli_write_json(const char *cmd, FILE *f, const char *path, const struct pn_cli_result *res,
		      size_t n)
{
	json_t *root = json_object(), *results = json_array();
	char *text;
	int rc;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(results, pn_cli_result_json(&res[i]));
	json_object_set_new(root, "results", results);
	root = pn_cli_json_stamped(root);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(root);
	if (!text) {
		return pn_cli_close_output(cmd, f, path, false);
	}
	rc = write_text(cmd, f, path, text);
	free(text);
	return rc;
}

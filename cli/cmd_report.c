/*
 * cmd_report.c: `penumbra report INPUT... -o FILE.html` (cli layer): one self-contained
 * HTML file (inline SVG and CSS, one small inline script for hover values, nothing fetched)
 * with a section per input, in order: a run or compare JSON (report_costs.c), a check JSON
 * (report_check.c), or a counterexample trace, re-run (report_trace.c). What an input is
 * follows from its content: a JSON object with "results" or "scenarios", else a YAML
 * scenario with a replay: section (report.h RP1-RP3: what an input may hold). Every input is
 * read first, so that a compare's section can say what a check JSON given with it found; the
 * page opens with its provenance (version.c: penumbra's version and commit, the command line)
 * and ends with each input's hash and the provenance it carries. The page is built
 * in memory and the output opened only when every input was read, so bad input leaves no
 * file behind.
 * Exit: 0 written, 2 bad input or an output that cannot be written.
 */
#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "files.h"
#include "report.h"
#include "report_svg.h"

struct report_opts {
	const char *output;
};

static const struct pn_opt report_opts[] = {
	{.name = "output",
	 .short_name = 'o',
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct report_opts, output),
	 .complete = PN_COMPLETE_FILE,
	 .required = "name the HTML file to write with -o FILE",
	 .help = "the HTML file to write ('-' = stdout)"},
};

const struct pn_cmd_spec pn_report_spec = {
	.name = "report",
	.args = "INPUT...",
	.args_help = "run, compare or check JSON files (--json) and counterexample traces",
	.args_min = 1,
	.args_max = -1,
	.args_missing = "name at least one input (a JSON or a trace)",
	.description =
		"Writes one self-contained HTML file (inline SVG and CSS, nothing fetched) with "
		"the plots of each INPUT, in the order given. An INPUT is one of:\n"
		"* a run or compare JSON (--json): the metrics side by side (and whether each "
		"mode is crash-safe when a check JSON of the same scenario is given), WAL over "
		"virtual time with the checkpoints, throughput, WAL by record type (FPIs "
		"highlighted), FPIs per "
		"commit, data writes, fsyncs, space and read amplification, the seed's published "
		"figure, Umbra's generations of sampled pages\n"
		"* a check JSON (--json): verdicts, crash points, states, time, and with check "
		"--coverage the coverage markers\n"
		"* a counterexample trace (as check writes it): re-run; its story in text (the "
		"events, the crash, what recovery read, a crash inside recovery, the violation), "
		"the failing page's history, its last events as swimlanes, the crash state's "
		"sectors, the page that differs with its header decoded, the replay",
	.opts = report_opts,
	.nopts = PN_ARRAY_LEN(report_opts),
	.notes = "Each INPUT is at most 16 MiB (a UTF-8 byte-order mark at its start is "
		 "skipped); a line is drawn through at most 256 of its samples and 128 "
		 "checkpoints. The page names the penumbra that wrote it, its command line and "
		 "each input's hash (no date: the same command writes the same bytes).",
	.exits = "0 written, 2 bad input (an input that is none of these or holds a value out of "
		 "its range, a trace that does not replay) or an output that cannot be written",
};

/* The input's bytes, at most PN_REPORT_INPUT_MAX + 1 of them (one more than report.h RP1
 * allows, so that a larger file is seen to be larger); NULL when it cannot be read. */
static char *read_input(const char *path, size_t *len)
{
	char why[PN_ERROR_LEN];
	FILE *f = pn_file_fopen_in(path, "a run, compare or check JSON, or a trace", why,
				   sizeof why); /* files.h F1 */
	char *buf = f ? malloc(PN_REPORT_INPUT_MAX + 2) : NULL;
	if (!f || !buf) {
		fprintf(stderr, "%s:1:1: cannot read: %s\n", path, f ? strerror(ENOMEM) : why);
		if (f)
			fclose(f);
		return NULL;
	}
	errno = 0;
	*len = fread(buf, 1, PN_REPORT_INPUT_MAX + 1, f);
	buf[*len] = '\0';
	int e = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	if (e) {
		fprintf(stderr, "%s:1:1: cannot read: %s\n", path, strerror(e));
		free(buf);
		return NULL;
	}
	return buf;
}

/* What the provenance says of an input: the hash of its bytes, and for a JSON that penumbra
 * wrote, the "penumbra" object it carries (version.c; NULL when it has none). */
struct input_note {
	uint64_t hash;
	json_t *made_by;
};

/* A JSON input's "penumbra": kept only when every value in it is what version.c writes (a
 * string of at most PN_REP_STRING_MAX bytes, or an integer or a boolean); an input is not
 * refused for it: it was read for its figures, and this is what it says of itself. */
static json_t *made_by(const char *text, size_t len)
{
	json_t *doc = json_loadb(text, len, 0, NULL);
	json_t *p = json_object_get(doc, "penumbra"), *v, *out = NULL;
	const char *key;
	bool ok = json_is_object(p);
	json_object_foreach(json_is_object(p) ? p : NULL, key, v)
	{
		json_t *a = json_is_array(v) ? v : NULL, *e;
		size_t i;
		ok &= !json_is_object(v) &&
		      (!json_is_string(v) || json_string_length(v) <= PN_REP_STRING_MAX);
		json_array_foreach(a, i, e) ok &= json_is_string(e) &&
						  json_string_length(e) <= PN_REP_STRING_MAX &&
						  i < PN_REP_ROWS_MAX;
	}
	if (ok)
		out = json_incref(p);
	json_decref(doc);
	return out;
}

/* An input read, and what the other sections may take from it. */
struct input {
	char *text; /* NULL: it could not be read */
	size_t len;
	json_t *check; /* a check JSON's document ("scenarios"), else NULL */
};

static void read_inputs(char **paths, int n, struct input *in, const json_t **checks)
{
	for (int i = 0; i < n; i++) {
		in[i].text = read_input(paths[i], &in[i].len);
		json_t *doc = in[i].text ? json_loadb(in[i].text, in[i].len, 0, NULL) : NULL;
		if (json_is_array(json_object_get(doc, "scenarios")))
			in[i].check = json_incref(doc);
		checks[i] = in[i].check;
		json_decref(doc);
	}
}

static int one_input(FILE *page, char **paths, int src, const struct input *input,
		     const json_t *const *checks, int n, struct input_note *note)
{
	const char *path = paths[src];
	struct pn_rep_in in = {.path = path,
			       .src = src,
			       .err = stderr,
			       .checks = checks,
			       .nchecks = n,
			       .inputs = paths,
			       .ninputs = n};
	int rc = input->text ? pn_report_json(page, &in, input->text, input->len) : 2;
	if (input->text) {
		note->hash = XXH3_64bits(input->text, input->len);
		note->made_by = rc == 0 ? made_by(input->text, input->len) : NULL;
	}
	if (rc == PN_REP_NOT_JSON && pn_report_is_pgcrash(path))
		return pn_report_pgcrash(page, path, src);
	return rc == PN_REP_NOT_JSON ? pn_report_trace(page, path, src) : rc;
}

/* A command line from a "command" array, each argument quoted for a POSIX shell when it
 * holds anything but letters, digits and _./,=:+@%- (a null one: "?"). */
static void command_text(FILE *f, const json_t *argv)
{
	const json_t *a;
	size_t i;
	json_array_foreach(argv, i, a)
	{
		const char *s = json_is_string(a) ? json_string_value(a) : "?";
		bool plain = *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789_./,=:+@%-") == strlen(s);
		fputs(i ? " " : "", f);
		if (plain) {
			pn_rep_esc(f, PN_REP_TEXT, s);
			continue;
		}
		fputc('\'', f);
		for (const char *c = s; *c; c++) {
			char one[2] = {*c, 0};
			if (*c == '\'')
				fputs("'\\''", f);
			else
				pn_rep_esc(f, PN_REP_TEXT, one);
		}
		fputc('\'', f);
	}
}

/* The page's provenance, at its top: the penumbra that wrote it and its command line. */
static void provenance_head(FILE *page)
{
	json_t *p = pn_cli_provenance_json();
	fputs("<p class=\"note\" id=\"provenance\">Written by penumbra ", page);
	pn_rep_esc(page, PN_REP_TEXT, pn_cli_version());
	fputs(" with <code>", page);
	command_text(page, json_object_get(p, "command"));
	fputs("</code> (no date: the same inputs make the same page).</p>\n", page);
	json_decref(p);
}

/* At its end: each input's hash and what made it. */
static void provenance_inputs(FILE *page, char **inputs, const struct input_note *notes, int n)
{
	fputs("<h3>Inputs</h3><table class=\"inputs\"><tr><th>input</th><th>XXH3-64 of its "
	      "bytes</th><th>written by</th></tr>\n",
	      page);
	for (int i = 0; i < n; i++) {
		const json_t *m = notes[i].made_by;
		fputs("<tr><td><code>", page);
		pn_rep_esc(page, PN_REP_TEXT, inputs[i]);
		fprintf(page, "</code></td><td><code>%016llx</code></td><td>",
			(unsigned long long)notes[i].hash);
		if (m) {
			fputs("penumbra ", page);
			pn_rep_esc(page, PN_REP_TEXT,
				   json_string_value(json_object_get(m, "version")));
			fputs(" (commit ", page);
			pn_rep_esc(page, PN_REP_TEXT,
				   json_is_string(json_object_get(m, "commit"))
					   ? json_string_value(json_object_get(m, "commit"))
					   : "unknown");
			fputs(json_is_true(json_object_get(m, "dirty")) ? ", dirty" : "", page);
			fputs("): <code>", page);
			command_text(page, json_object_get(m, "command"));
			fputs("</code>", page);
		} else {
			fputs("-", page);
		}
		fputs("</td></tr>\n", page);
	}
	fputs("</table>\n", page);
}

static int write_page(const char *out, FILE *f, const char *buf, size_t len)
{
	return pn_cli_close_output("report", f, out, fwrite(buf, 1, len, f) == len);
}

static int report(char **inputs, int n, const char *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *page = open_memstream(&buf, &len);
	PN_ASSERT(page != NULL);
	struct input_note *notes = calloc((size_t)n, sizeof(*notes));
	struct input *ins = calloc((size_t)n, sizeof(*ins));
	const json_t **checks = calloc((size_t)n, sizeof(*checks));
	PN_ASSERT(notes != NULL && ins != NULL && checks != NULL);
	read_inputs(inputs, n, ins, checks);
	pn_rep_page_begin(page, "penumbra report");
	fputs("<h1>penumbra report</h1>", page);
	provenance_head(page);
	fputs("<p class=\"note\">Inputs:", page);
	for (int i = 0; i < n; i++) {
		fputs(i ? ", <code>" : " <code>", page);
		pn_rep_esc(page, PN_REP_TEXT, inputs[i]);
		fputs("</code>", page);
	}
	fputs(". Hover over a plot for its values.</p>\n", page);
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = one_input(page, inputs, i, &ins[i], checks, n, &notes[i]);
	provenance_inputs(page, inputs, notes, n);
	for (int i = 0; i < n; i++) {
		json_decref(notes[i].made_by);
		json_decref(ins[i].check);
		free(ins[i].text);
	}
	free(notes);
	free(ins);
	free(checks);
	pn_rep_page_end(page);
	fclose(page);
	FILE *f = rc == 0 ? pn_cli_open_output("report", out) : NULL;
	if (f)
		rc = write_page(out, f, buf, len);
	else
		rc = 2;
	free(buf);
	return rc;
}

int pn_cmd_report(int argc, char **argv)
{
	struct report_opts o = {0};
	int at, rc = pn_opts_parse(&pn_report_spec, argc, argv, &o, &at);

	if (rc >= 0)
		return rc;
	return report(argv + at, argc - at, o.output);
}

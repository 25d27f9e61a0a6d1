/*
 * cmd_report.c: `penumbra report INPUT... -o FILE.html` (cli layer): one self-contained
 * HTML file (inline SVG and CSS, one small inline script for hover values, nothing fetched)
 * with a section per input, in order: a run or compare JSON (report_costs.c), a check JSON
 * (report_check.c), or a counterexample trace, re-run (report_trace.c). What an input is
 * follows from its content: a JSON object with "results" or "scenarios", else a YAML
 * scenario with a replay: section (report.h R1-R3: what an input may hold). The page is built
 * in memory and the output opened only when every input was read, so bad input leaves no
 * file behind.
 * Exit: 0 written, 2 bad input or an output that cannot be written.
 */
#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
		"* a run or compare JSON (--json): the metrics side by side, WAL over virtual "
		"time with the checkpoints, WAL by record type (FPIs highlighted), FPIs per "
		"commit, data writes, fsyncs, space and read amplification, the seed's published "
		"figure, Umbra's generations of sampled pages\n"
		"* a check JSON (--json): verdicts, crash points, states, time, and with check "
		"--coverage the coverage markers\n"
		"* a counterexample trace (as check writes it): re-run; its last events as "
		"swimlanes, the crash state's sectors, the page that differs, the replay",
	.opts = report_opts,
	.nopts = PN_ARRAY_LEN(report_opts),
	.notes = "Each INPUT is at most 16 MiB (a UTF-8 byte-order mark at its start is "
		 "skipped); a line is drawn through at most 256 of its samples and 128 "
		 "checkpoints.",
	.exits = "0 written, 2 bad input (an input that is none of these or holds a value out of "
		 "its range, a trace that does not replay) or an output that cannot be written",
};

/* The input's bytes, at most PN_REPORT_INPUT_MAX + 1 of them (one more than report.h R1
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

static int one_input(FILE *page, const char *path, int src)
{
	struct pn_rep_in in = {.path = path, .src = src, .err = stderr};
	size_t len = 0;
	char *text = read_input(path, &len);
	int rc = text ? pn_report_json(page, &in, text, len) : 2;
	free(text);
	return rc == PN_REP_NOT_JSON ? pn_report_trace(page, path, src) : rc;
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
	pn_rep_page_begin(page, "penumbra report");
	fputs("<h1>penumbra report</h1><p class=\"note\">Inputs:", page);
	for (int i = 0; i < n; i++) {
		fputs(i ? ", <code>" : " <code>", page);
		pn_rep_esc(page, PN_REP_TEXT, inputs[i]);
		fputs("</code>", page);
	}
	fputs(". Hover over a plot for its values.</p>\n", page);
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = one_input(page, inputs[i], i);
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

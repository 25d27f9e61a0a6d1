/*
 * test_cli.c: Check suite for the command line (cli/; label unit), its usage half (the runs:
 * test_cli_runs.c; what both share: cli_fixture.h). Calls the dispatcher
 * and the command functions in-process (pn_cli_main), with stdout and stderr redirected to
 * files so that their output can be checked: the command table, --help and --version exit
 * codes, usage errors (exit 2, one line ending "try 'penumbra --help'"), what bench and
 * crashtest refuse before touching a file, run's table and the pg_waldump-shaped breakdown, JSON keys,
 * order and byte-identical output across runs, the seed and mode overrides, and compare's
 * one result per mode. A tiny scenario is written to a temporary directory by main().
 */
#include "cli_fixture.h"
#include "report_svg.h"

START_TEST(test_command_table)
{
	static const char *const names[] = {"run",       "check",  "replay", "compare", "bench",
					    "crashtest", "report", "import", "pgcrash"};

	ck_assert_uint_eq(pn_commands_len, PN_ARRAY_LEN(names));
	for (size_t i = 0; i < PN_ARRAY_LEN(names); i++) {
		const struct pn_command *c = pn_cli_find(names[i]);
		ck_assert_msg(c != NULL, "no command %s", names[i]);
		ck_assert_str_eq(c->name, names[i]);
		ck_assert(c->fn != NULL && c->summary[0] != '\0');
	}
	ck_assert(pn_cli_find("nope") == NULL);
	ck_assert(pn_cli_find("") == NULL);
	ck_assert(pn_cli_find(NULL) == NULL);
	ck_assert(pn_cli_find("help") == NULL); /* the dispatcher's own */
}
END_TEST

/* import's usage errors (its reading of real WAL is CTest postgres's, against pg_waldump). */
START_TEST(test_import_usage)
{
	ck_assert_int_eq(cli("import", "--stats", NULL), 2);
	assert_usage_error("no WAL given");
	ck_assert_int_eq(cli("import", "pg_wal", NULL), 2);
	assert_usage_error("nothing to do");
	ck_assert_int_eq(cli("import", "pg_wal", "--stats", "--from", "12", NULL), 2);
	assert_usage_error("--from wants an LSN");
	ck_assert_int_eq(cli("import", "pg_wal", "--stats", "--to", "0/1G", NULL), 2);
	assert_usage_error("--to wants an LSN");
	ck_assert_int_eq(cli("import", "pg_wal", "--stats", "--from", "0/20", "--to", "0/10", NULL),
			 2);
	assert_usage_error("--to must be above --from");
	ck_assert_int_eq(cli("import", "no-such-pg_wal", "--stats", NULL), 2);
	ck_assert_msg(strstr(cap.err, "no-such-pg_wal: No such file") != NULL, "%s", cap.err);
	ck_assert_int_eq(cli("import", "/dev/null", "--stats", NULL), 2);
	ck_assert_msg(strstr(cap.err, "not a WAL segment file name") != NULL, "%s", cap.err);
}
END_TEST

/* "penumbra 0.1.0 (commit abcdef1)", ", dirty" before the ')' from a changed tree, or
 * "(commit unknown)" without git. */
static void assert_version(void)
{
	static const char head[] = "penumbra " PN_VERSION " (commit ";
	const char *commit = cap.out + strlen(head);
	size_t n = strspn(commit, "0123456789abcdef");

	ck_assert_msg(strncmp(cap.out, head, strlen(head)) == 0, "%s", cap.out);
	ck_assert_msg(strcmp(commit, "unknown)\n") == 0 ||
			      (n == 7 && (strcmp(commit + n, ")\n") == 0 ||
					  strcmp(commit + n, ", dirty)\n") == 0)),
		      "%s", cap.out);
}

START_TEST(test_top_level_help)
{
	ck_assert_int_eq(cli("--help", NULL), 0);
	ck_assert(strncmp(cap.out, "usage: penumbra", 15) == 0);
	for (size_t i = 0; i < pn_commands_len; i++)
		ck_assert_msg(strstr(cap.out, pn_commands[i].summary), "%s", pn_commands[i].name);
	ck_assert_int_eq(cli("-h", NULL), 0);
	ck_assert_int_eq(cli("help", NULL), 0);
	ck_assert(strncmp(cap.out, "usage: penumbra", 15) == 0);
	/* help's own help (it used to be "unknown command '--help'", exit 2) */
	static const char *const help_of_help[] = {"--help", "-h", "help"};
	for (size_t i = 0; i < PN_ARRAY_LEN(help_of_help); i++) {
		ck_assert_int_eq(cli("help", help_of_help[i], NULL), 0);
		ck_assert(strncmp(cap.out, "usage: penumbra", 15) == 0);
		ck_assert_str_eq(cap.err, "");
	}
	ck_assert_int_eq(cli("--version", NULL), 0);
	assert_version();
	ck_assert_int_eq(cli("-V", NULL), 0);
	assert_version();
	ck_assert_int_eq(cli(NULL), 2); /* no command: usage on stderr */
	ck_assert(strncmp(cap.err, "usage: penumbra", 15) == 0);
	ck_assert_str_eq(cap.out, "");
}
END_TEST

START_TEST(test_command_help)
{
	for (size_t i = 0; i < pn_commands_len; i++) {
		const char *name = pn_commands[i].name;
		char want[64];

		snprintf(want, sizeof want, "usage: penumbra %s ", name);
		ck_assert_int_eq(cli(name, "--help", NULL), 0);
		ck_assert_msg(strncmp(cap.out, want, strlen(want)) == 0, "%s", cap.out);
		/* one space between words, with or without arguments (pgcrash has none) */
		ck_assert_msg(strstr(cap.out, "  ") == NULL ||
				      strstr(cap.out, "  ") > strchr(cap.out, '\n'),
			      "%s", cap.out);
		ck_assert_str_eq(cap.err, "");
		ck_assert_int_eq(cli(name, "-h", NULL), 0);
		ck_assert_int_eq(cli("help", name, NULL), 0);
		ck_assert_msg(strncmp(cap.out, want, strlen(want)) == 0, "%s", cap.out);
		/* --help wins wherever it is */
		ck_assert_int_eq(cli(name, "x.yaml", "--help", NULL), 0);
		/* each option's row of the Markdown table is 3 cells: 4 bare '|' (GFM) */
		ck_assert_int_eq(cli("help", "--markdown", name, NULL), 0);
		for (const char *l = strstr(cap.out, "\n| `"); l; l = strstr(l + 1, "\n| `")) {
			int bars = 0;
			for (const char *c = l + 1; *c && *c != '\n'; c++)
				bars += *c == '|' && c[-1] != '\\';
			ck_assert_msg(bars == 4, "%s: %.80s", name, l + 1);
		}
	}
}
END_TEST

/* A value each option of every spec takes (opts.h OP2), by its kind or its value's name. */
static const char *sample_value(const struct pn_opt *o)
{
	if (o->def)
		return o->def;
	switch (o->kind) {
	case PN_OPT_UINT: return o->min ? "1" : "0";
	case PN_OPT_SIZE: return "8kB";
	case PN_OPT_DURATION: return "1s";
	case PN_OPT_ONOFF: return "off";
	case PN_OPT_CUSTOM: return strcmp(o->value, "LSN") == 0 ? "0/10" : "fpw";
	default: return "x";
	}
}

/* Every option of every spec: parsed (followed by --help, so that nothing runs), named in
 * --help, the man page and the Markdown table; names unique, -h reserved (OP1). */
START_TEST(test_option_specs)
{
	for (size_t i = 0; i < pn_commands_len; i++) {
		const struct pn_cmd_spec *spec = pn_commands[i].spec;
		const char *name = pn_commands[i].name;
		char label[64], help[OUT_LEN], man[OUT_LEN], md[OUT_LEN], opt[64], esc[128];

		ck_assert_str_eq(spec->name, name);
		ck_assert_int_eq(cli("help", name, NULL), 0);
		snprintf(help, sizeof help, "%s", cap.out);
		ck_assert_int_eq(cli("help", "--man", name, NULL), 0);
		snprintf(man, sizeof man, "%s", cap.out);
		ck_assert_msg(strncmp(man, ".\\\" generated", 13) == 0, "%s", man);
		ck_assert_int_eq(cli("help", "--markdown", name, NULL), 0);
		snprintf(md, sizeof md, "%s", cap.out);
		for (size_t k = 0; k < spec->nopts; k++) {
			const struct pn_opt *o = &spec->opts[k];
			for (size_t j = 0; j < k; j++)
				ck_assert_str_ne(spec->opts[j].name, o->name);
			ck_assert(o->short_name != 'h' && o->help && o->help[0]);
			snprintf(opt, sizeof opt, "--%s", o->name);
			if (o->value)
				ck_assert_int_eq(cli(name, opt, sample_value(o), "--help", NULL),
						 0);
			else
				ck_assert_int_eq(cli(name, opt, "--help", NULL), 0);
			ck_assert_msg(strncmp(cap.out, "usage: penumbra ", 16) == 0, "%s %s: %s",
				      name, opt, cap.err);
			pn_opts_label(o, true, label, sizeof label);
			ck_assert_msg(strstr(help, label), "%s --help lacks %s", name, label);
			ck_assert_msg(strstr(md, label), "%s's Markdown lacks %s", name, label);
			/* the option's own paragraph: ".TP", then its name, hyphens escaped */
			if (o->short_name)
				snprintf(esc, sizeof esc, ".TP\n\\fB\\-%c\\fR, \\fB\\-\\-%s\\fR",
					 o->short_name, o->name);
			else
				snprintf(esc, sizeof esc, ".TP\n\\fB\\-\\-%s\\fR", o->name);
			for (char *p = strstr(esc, o->name); (p = strchr(p, '-')) != NULL; p += 2) {
				memmove(p + 1, p, strlen(p) + 1);
				*p = '\\';
			}
			ck_assert_msg(strstr(man, esc), "%s's man page lacks %s", name, esc);
		}
	}
}
END_TEST

/* The parser itself on a spec of its own: abbreviations, "--name=value", "--", options
 * after the arguments, `given`, a required option, the count of arguments, defaults. */
struct probe {
	const char *path;
	uint64_t n;
	bool n_given, flag;
};

static const struct pn_opt probe_opts[] = {
	{.name = "number",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct probe, n),
	 .given = PN_OPT_GIVEN(struct probe, n_given),
	 .min = 2,
	 .max = 9,
	 .def = "3",
	 .help = "a number"},
	{.name = "path",
	 .short_name = 'p',
	 .kind = PN_OPT_STRING,
	 .value = "P",
	 .at = offsetof(struct probe, path),
	 .required = "missing --path P",
	 .help = "a path"},
	{.name = "flag", .kind = PN_OPT_FLAG, .at = offsetof(struct probe, flag), .help = "a flag"},
};

static const struct pn_cmd_spec probe_spec = {
	.name = "probe",
	.args = "A B",
	.args_min = 1,
	.args_max = 2,
	.args_missing = "missing A",
	.description = "probes",
	.opts = probe_opts,
	.nopts = PN_ARRAY_LEN(probe_opts),
	.exits = "0",
};

static int probe(struct probe *o, int *at, ...)
{
	char *argv[MAX_ARGS] = {"probe"};
	int argc = 1, rc;
	va_list ap;

	va_start(ap, at);
	for (char *a; (a = va_arg(ap, char *)) != NULL;)
		argv[argc++] = a;
	va_end(ap);
	memset(o, 0, sizeof *o);
	fflush(stdout);
	fflush(stderr);
	rc = pn_opts_parse(&probe_spec, argc, argv, o, at);
	return rc;
}

START_TEST(test_opts_parse)
{
	struct probe o;
	int at;

	ck_assert_int_eq(probe(&o, &at, "a", "-p", "x", NULL), -1);
	ck_assert(o.n == 3 && !o.n_given && !o.flag && strcmp(o.path, "x") == 0 && at == 3);
	ck_assert_int_eq(probe(&o, &at, "--num=7", "a", "--pa", "y", "b", "--fl", NULL), -1);
	ck_assert(o.n == 7 && o.n_given && o.flag && strcmp(o.path, "y") == 0);
	ck_assert_int_eq(probe(&o, &at, "-p", "x", "--", "--flag", NULL), -1);
	ck_assert(!o.flag && at == 4);
	ck_assert_int_eq(probe(&o, &at, "a", NULL), 2);                          /* required */
	ck_assert_int_eq(probe(&o, &at, "-p", "x", NULL), 2);                    /* too few */
	ck_assert_int_eq(probe(&o, &at, "-px", "a", "b", "c", NULL), 2);         /* too many */
	ck_assert_int_eq(probe(&o, &at, "-px", "a", "--number", "1", NULL), 2);  /* below min */
	ck_assert_int_eq(probe(&o, &at, "-px", "a", "--number", "10", NULL), 2); /* above max */
	ck_assert_int_eq(probe(&o, &at, "-px", "a", "--flag=1", NULL), 2);
}
END_TEST

/* The usage errors of the parser, as a user sees them. */
START_TEST(test_opts_messages)
{
	cli("check", "x.yaml", "--jobs", "0", NULL);
	assert_usage_error("--jobs takes 1 to 256, not 0");
	cli("check", "x.yaml", "--torn-writes", "3", NULL);
	assert_usage_error("--torn-writes takes 1 or 2, not 3");
	cli("check", "x.yaml", "--derive", "maybe", NULL);
	assert_usage_error("--derive takes on or off, not maybe");
	cli("report", "x.json", "-x", NULL);
	assert_usage_error("unknown option '-x'");
	cli("report", "x.json", "-o", NULL);
	assert_usage_error("option '-o' needs a value");
	cli("compare", "x.yaml", "--stats=1", NULL);
	assert_usage_error("option '--stats' takes no value");
	cli("help", "--man", "nope", NULL);
	assert_usage_error("unknown command 'nope'");
	cli("help", "--completion", "fish", NULL);
	assert_usage_error("no completion for shell 'fish'");
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(cli("help", "--completion", i ? "zsh" : "bash", NULL), 0);
		for (size_t k = 0; k < pn_commands_len; k++)
			ck_assert(strstr(cap.out, pn_commands[k].name) != NULL);
	}
	ck_assert_int_eq(cli("help", "--commands", NULL), 0);
	ck_assert(strncmp(cap.out, "run\ncheck\n", 10) == 0);
}
END_TEST

START_TEST(test_bad_usage)
{
	cli("--bogus", NULL);
	assert_usage_error("unknown option '--bogus'");
	cli("-x", NULL);
	assert_usage_error("unknown option '-x'");
	cli("frobnicate", NULL);
	assert_usage_error("unknown command 'frobnicate'");
	cli("help", "nope", NULL);
	assert_usage_error("unknown command 'nope'");
	cli("run", "--bogus", scenario, NULL);
	assert_usage_error("unknown option '--bogus'");
	cli("run", scenario, "--json", NULL);
	assert_usage_error("option '--json' needs a value");
	cli("run", "--help=yes", NULL);
	assert_usage_error("option '--help' takes no value");
	cli("run", NULL);
	assert_usage_error("missing the scenario file");
	cli("run", scenario, "extra", NULL);
	assert_usage_error("unexpected argument 'extra'");
	cli("run", scenario, "--seed", "-3", NULL);
	assert_usage_error("--seed '-3'");
	cli("run", scenario, "--seed", "12x", NULL);
	assert_usage_error("--seed '12x'");
	cli("run", scenario, "--mode", "umbrella", NULL);
	assert_usage_error("unknown mode 'umbrella'");
	cli("compare", scenario, "--nope", NULL);
	assert_usage_error("unknown option '--nope'");
	cli("compare", scenario, "--modes", "fpw,umbrella", NULL);
	assert_usage_error("unknown mode 'umbrella'");
	cli("compare", scenario, "--modes", "fpw,,umbra", NULL);
	assert_usage_error("empty mode name");
	cli("compare", scenario, "--modes", "fpw,umbra,fpw", NULL);
	assert_usage_error("mode 'fpw' given twice");
	cli("check", "--bogus", NULL);
	assert_usage_error("unknown option '--bogus'");
	cli("check", "--jobs", "many", NULL);
	assert_usage_error("--jobs 'many'");
	cli("bench", scenario, "--duration", "10", NULL);
	assert_usage_error("--duration '10'");
	cli("crashtest", "-q", NULL);
	assert_usage_error("unknown option '-q'");
	cli("replay", "--json", NULL);
	assert_usage_error("option '--json' needs a value");
}
END_TEST

/* bench and crashtest (they run on real files: tests/test_disk.c) refuse bad input before
 * touching any file: a missing --path, a zero duration or run count, a directory holding
 * files penumbra did not create. */
START_TEST(test_real_disk_usage)
{
	char dir[320], other[400];

	cli("bench", scenario, NULL);
	assert_usage_error("missing --path DIR");
	cli("crashtest", scenario, NULL);
	assert_usage_error("missing --path DIR");
	cli("bench", scenario, "--path", tmp_dir, "--duration", "0s", NULL);
	assert_usage_error("--duration takes more than 0, not 0s");
	cli("crashtest", scenario, "--path", tmp_dir, "--runs", "0", NULL);
	assert_usage_error("--runs takes 1 or more, not 0");
	cli("crashtest", scenario, "--path", tmp_dir, "--max-time", "1", NULL);
	assert_usage_error("--max-time '1'");
	/* tmp_dir holds the test's own files, not penumbra's */
	tmp_path(dir, sizeof dir, "not-ours");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(other, sizeof other, "%s/precious", dir);
	FILE *f = fopen(other, "w");
	ck_assert(f != NULL);
	fclose(f);
	ck_assert_int_eq(cli("bench", scenario, "--path", dir, "--duration", "1s", NULL), 2);
	ck_assert_msg(strstr(cap.err, "holds files penumbra did not create") != NULL, "%s",
		      cap.err);
	ck_assert_int_eq(cli("crashtest", scenario, "--path", dir, "--runs", "1", NULL), 2);
	ck_assert_msg(strstr(cap.err, "without --force") != NULL, "%s", cap.err);
	unlink(other);
	rmdir(dir);
}
END_TEST

/* check: a mutant found as expected, a trace written and replayed; a wrong expectation is
 * exit 1; JSON and JUnit written. */
START_TEST(test_check_and_replay)
{
	char src[512], traces[320], trace[400], json[320], junit[320], wrong[320];
	const char *root = getenv("PN_SOURCE_DIR");

	ck_assert_msg(root != NULL, "PN_SOURCE_DIR is not set");
	snprintf(src, sizeof src, "%s/scenarios/mutants/ckpt-active-only.yaml", root);
	tmp_path(traces, sizeof traces, "traces");
	tmp_path(json, sizeof json, "check.json");
	tmp_path(junit, sizeof junit, "check.xml");
	ck_assert_int_eq(cli("check", src, "--traces", traces, "--json", json, "--junit", junit,
			     NULL),
			 0);
	ck_assert_msg(strstr(cap.out, "VIOLATION in ckpt-active-only") != NULL, "no report: %s",
		      cap.out);
	ck_assert_msg(strstr(cap.out, "check: 1 passed, 0 failed") != NULL, "no summary: %s",
		      cap.out);
	slurp(json, cap.err, sizeof cap.err);
	ck_assert_msg(strstr(cap.err, "\"verdict\": \"violation\"") != NULL, "json: %s", cap.err);
	slurp(junit, cap.err, sizeof cap.err);
	ck_assert_msg(strstr(cap.err,
			     "<testcase classname=\"penumbra.check\" name=\"ckpt-active-only\"") !=
			      NULL,
		      "junit: %s", cap.err);
	const char *const check[] = {"check",  src,  "--traces", traces,
				     "--json", json, "--junit",  junit};
	assert_provenance(json, check, PN_ARRAY_LEN(check));
	snprintf(trace, sizeof trace, "%s/ckpt-active-only.trace.yaml", traces);
	ck_assert_int_eq(cli("replay", trace, "--json", json, NULL), 1);
	const char *const replay[] = {"replay", trace, "--json", json};
	assert_provenance(json, replay, PN_ARRAY_LEN(replay));
	ck_assert_int_eq(cli("replay", trace, NULL), 1);
	ck_assert_msg(strstr(cap.out, "the violation reproduces") != NULL, "replay: %s", cap.out);
	/* the same scenario expecting a pass does not pass */
	tmp_path(wrong, sizeof wrong, "wrong.yaml");
	FILE *f = fopen(wrong, "w");
	ck_assert(f != NULL);
	slurp(src, cap.err, sizeof cap.err);
	char *e = strstr(cap.err, "expect: {verdict: violation}");
	ck_assert(e != NULL);
	*e = 0;
	fprintf(f, "%sexpect: {verdict: pass}\n", cap.err);
	fclose(f);
	ck_assert_int_eq(cli("check", wrong, "--traces", traces, "--quiet", NULL), 1);
	ck_assert_msg(strstr(cap.out, "check: 0 passed, 1 failed") != NULL, "summary: %s", cap.out);
}
END_TEST

/* check --torn-writes takes 1 or 2 only. */
START_TEST(test_torn_writes_usage)
{
	cli("check", scenario, "--torn-writes", "3", NULL);
	assert_usage_error("--torn-writes takes 1 or 2, not 3");
	cli("check", scenario, "--torn-writes", "0", NULL);
	assert_usage_error("--torn-writes takes 1 or 2, not 0");
	cli("check", scenario, "--torn-writes", "two", NULL);
	assert_usage_error("--torn-writes 'two'");
}
END_TEST

/* check --search-samples takes 0 to 10^9 only. */
START_TEST(test_search_samples_usage)
{
	cli("check", scenario, "--search-samples", "1000000001", NULL);
	assert_usage_error("--search-samples takes 0 to 1000000000, not 1000000001");
	cli("check", scenario, "--search-samples", "-1", NULL);
	assert_usage_error("--search-samples '-1': negative");
	cli("check", scenario, "--search-samples", "some", NULL);
	assert_usage_error("--search-samples 'some': not a number");
}
END_TEST

START_TEST(test_loader_error)
{
	char missing[320], want[340];

	tmp_path(missing, sizeof missing, "missing.yaml");
	snprintf(want, sizeof want, "%s:", missing);
	ck_assert_int_eq(cli("run", missing, NULL), 2);
	ck_assert_msg(strncmp(cap.err, want, strlen(want)) == 0, "%s", cap.err);
	ck_assert_str_eq(cap.out, "");
	ck_assert_int_eq(cli("compare", missing, NULL), 2);
	ck_assert_msg(strncmp(cap.err, want, strlen(want)) == 0, "%s", cap.err);
}
END_TEST

START_TEST(test_value_parsers)
{
	enum pn_mode modes[PN_CLI_MAX_MODES];
	int saved_err;
	uint64_t v;

	ck_assert(pn_cli_parse_size("t", "--size", "64MiB", &v));
	ck_assert_uint_eq(v, 64u << 20);
	ck_assert(pn_cli_parse_duration("t", "--duration", "250ms", &v));
	ck_assert_uint_eq(v, 250000000u);
	ck_assert(pn_cli_parse_uint("t", "--seed", "18446744073709551615", &v));
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(pn_cli_parse_modes("t", "doublewrite,nofpw", modes), 2);
	ck_assert(modes[0] == PN_MODE_DOUBLEWRITE && modes[1] == PN_MODE_NOFPW);
	ck_assert_int_eq(pn_cli_parse_modes("t", "fpw,nofpw,umbra,doublewrite,pushdown", modes), 5);
	/* the refusals print to stderr; silence them */
	fflush(stderr);
	saved_err = redirect(STDERR_FILENO, "/dev/null");
	ck_assert(!pn_cli_parse_size("t", "--size", "1.5GiB", &v));
	ck_assert(!pn_cli_parse_duration("t", "--duration", "10", &v));
	ck_assert(!pn_cli_parse_uint("t", "--seed", "18446744073709551616", &v));
	ck_assert_int_eq(pn_cli_parse_modes("t", "", modes), -1);
	ck_assert_int_eq(pn_cli_parse_modes("t", "fpw,", modes), -1);
	fflush(stderr);
	restore(STDERR_FILENO, saved_err);
}
END_TEST

/* The breakdown reproduces pg_waldump's column layout and row order (by rmgr id: Transaction 1 before
 * Heap 10) exactly. */
START_TEST(test_records_format)
{
	struct pn_metrics m;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	memset(&m, 0, sizeof m);
	m.rec_count[PN_REC_HEAP_HOT_UPDATE] = 3;
	m.rec_bytes[PN_REC_HEAP_HOT_UPDATE] = 207;
	m.rec_fpi_bytes[PN_REC_HEAP_HOT_UPDATE] = 8192;
	m.rec_count[PN_REC_XACT_COMMIT] = 1;
	m.rec_bytes[PN_REC_XACT_COMMIT] = 34;
	pn_cli_print_records(f, &m);
	fclose(f);
	ck_assert_str_eq(
		text,
		"Type                                           N      (%)          Record size      (%)"
		"             FPI size      (%)        Combined size      (%)\n"
		"----                                           -      ---          -----------      ---"
		"             --------      ---        -------------      ---\n"
		"Transaction/COMMIT                             1 ( 25.00)                   34 ( 14.11)"
		"                    0 (  0.00)                   34 (  0.40)\n"
		"Heap/HOT_UPDATE                                3 ( 75.00)                  207 ( 85.89)"
		"                 8192 (100.00)                 8399 ( 99.60)\n"
		"                                        --------                      --------"
		"                      --------                      --------\n"
		"Total                                          4                           241 [2.86%]"
		"                  8192 [97.14%]                 8433 [100%]\n");
	free(text);
}
END_TEST

/* `--json -` of the last command: its stdout must be pure JSON. */

START_TEST(test_progress_eta)
{
	ck_assert(pn_progress_eta_s(10.0, 0.0, 4) < 0);     /* nothing done: ETA ? */
	ck_assert(pn_progress_eta_s(10.0, 2.5, 5) == 10.0); /* half done in 10 s */
	ck_assert(pn_progress_eta_s(3.0, 0.25, 1) == 9.0);  /* a quarter of one scenario */
	ck_assert(pn_progress_eta_s(7.0, 4.0, 4) == 0.0);   /* all done */
}
END_TEST

/* progress.h P1: once finished, the clock stands: the rate is the same however late it is
 * asked (the last progress line and check's summary divide by the same seconds). */
START_TEST(test_progress_rate)
{
	struct pn_progress p;
	pn_progress_init(&p, "check", "scenarios", "states", 1);
	pn_progress_finish(&p, 1, 1000);
	double r = pn_progress_rate(&p, 1000), e = pn_progress_elapsed(&p);
	for (volatile int spin = 0; spin < 2000000; spin++)
		;
	ck_assert(pn_progress_elapsed(&p) == e && pn_progress_rate(&p, 1000) == r);
	ck_assert(e <= 0 || r == 1000 / e);
}
END_TEST

/* report_svg.h R4: one number format, thousands grouped, fixed point, the exponent only at
 * the extremes; ticks of a log axis in it too (no "1e+06"). */
START_TEST(test_report_numbers)
{
	char b[48];
	ck_assert_str_eq(pn_rep_int(b, sizeof(b), 0), "0");
	ck_assert_str_eq(pn_rep_int(b, sizeof(b), 999), "999");
	ck_assert_str_eq(pn_rep_int(b, sizeof(b), 1234567), "1,234,567");
	ck_assert_str_eq(pn_rep_int(b, sizeof(b), UINT64_MAX), "18,446,744,073,709,551,615");
	ck_assert_str_eq(pn_rep_real(b, sizeof(b), 12345.678, 4), "12,346");
	ck_assert_str_eq(pn_rep_real(b, sizeof(b), 2.5, 4), "2.5");
	ck_assert_str_eq(pn_rep_real(b, sizeof(b), 0.6598, 4), "0.6598");
	ck_assert_str_eq(pn_rep_real(b, sizeof(b), 1000.0, 4), "1,000");
	ck_assert_str_eq(pn_rep_real(b, sizeof(b), -4321.5, 5), "-4,321.5");
	ck_assert_str_eq(pn_rep_real(b, sizeof(b), 1e16, 4), "1.000e+16");
	ck_assert_str_eq(pn_rep_real(b, sizeof(b), 0.00001234, 3), "1.23e-05");
	ck_assert_str_eq(pn_rep_fmt(b, sizeof(b), 1234.5, 1), "1,234.5");
	ck_assert_str_eq(pn_plot_log_tick(b, sizeof(b), 1e6), "1,000,000");
	ck_assert_str_eq(pn_plot_log_tick(b, sizeof(b), 0.01), "0.01");
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *usage = tcase_create("usage");

	tcase_add_test(usage, test_command_table);
	tcase_add_test(usage, test_progress_eta);
	tcase_add_test(usage, test_progress_rate);
	tcase_add_test(usage, test_report_numbers);
	tcase_add_test(usage, test_top_level_help);
	tcase_add_test(usage, test_import_usage);
	tcase_add_test(usage, test_command_help);
	tcase_add_test(usage, test_bad_usage);
	tcase_add_test(usage, test_option_specs);
	tcase_add_test(usage, test_opts_parse);
	tcase_add_test(usage, test_opts_messages);
	tcase_add_test(usage, test_real_disk_usage);
	tcase_add_test(usage, test_loader_error);
	tcase_add_test(usage, test_check_and_replay);
	tcase_add_test(usage, test_torn_writes_usage);
	tcase_add_test(usage, test_search_samples_usage);
	tcase_add_test(usage, test_value_parsers);
	tcase_add_test(usage, test_records_format);
	suite_add_tcase(s, usage);
	return s;
}

int main(void) { return run_with_fixture(cli_suite()); }

/*
 * test_cli.c: Check suite for the command line (cli/; label unit). Calls the dispatcher
 * and the command functions in-process (pn_cli_main), with stdout and stderr redirected to
 * files so that their output can be checked: the command table, --help and --version exit
 * codes, usage errors (exit 2, one line ending "try 'penumbra --help'"), what bench and
 * crashtest refuse before touching a file, run's table and the pg_waldump-shaped breakdown, JSON keys,
 * order and byte-identical output across runs, the seed and mode overrides, and compare's
 * one result per mode. A tiny scenario is written to a temporary directory by main().
 */
#include "cli.h"
#include "cli_contract.h"
#include "progress.h"
#include "report_svg.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ARGS 16
#define OUT_LEN (256 * 1024)

static const char tiny_scenario[] = "name: t\nseed: 3\nstorage: {pages: 64, buffers: 8}\n"
				    "workload: {kind: random, transactions: 200, clients: 2}\n";

/* Commits acknowledged before their WAL is durable: a violation of no page (R2). */
static const char no_page_scenario[] = "name: np\nseed: 3\nstorage: {pages: 64, buffers: 8}\n"
				       "protocol: {mutations: [ack_before_flush]}\n"
				       "workload: {kind: random, transactions: 200, clients: 2}\n";

/* The loader accepts it (umbra l4 runs its epoch step); the engine refuses it in fpw or
 * nofpw (the step needs l3 or l4), at the step's position. */
static const char refused_scenario[] =
	"name: rf\nseed: 3\nstorage: {pages: 8, buffers: 4}\nprotocol: {mode: umbra, policy: l4}\n"
	"workload:\n  kind: script\n  script:\n    - {op: checkpoint}\n"
	"    - {op: checkpoint_epoch}\n    - {op: update, page: 4}\n    - {op: commit}\n"
	"    - {op: checkpoint_end}\n";

/* The same with a deliberate bug (protocol.md section 5): pages written before their WAL. */
static const char mutated_scenario[] = "name: m\nseed: 3\nstorage: {pages: 64, buffers: 8}\n"
				       "protocol: {mutations: [no_wal_before_data]}\n"
				       "workload: {kind: random, transactions: 200, clients: 2}\n";

/* Two or more writes that can tear at some crash points: crash.torn_writes 2 adds states. */
static const char torn_scenario[] =
	"name: tw\nseed: 7\nprotocol: {mode: fpw}\n"
	"storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}\n"
	"checkpoint: {interval: 0s, every_transactions: 3, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 3, pages_per_transaction: 2}\n"
	"crash: {points: all, max_unsynced: 4, tear: sectors}\n";

static char tmp_dir[256];
static char scenario[320], mutated[320], no_page[320], refused[320], torn[320];

struct capture {
	int status;
	char out[OUT_LEN];
	char err[OUT_LEN];
};

static struct capture cap;

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_msg(f != NULL, "cannot read %s", path);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp_dir, name);
}

/* Redirects fd to a new file at path; returns a copy of the old fd. */
static int redirect(int fd, const char *path)
{
	int saved = dup(fd), f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert(saved >= 0 && f >= 0);
	dup2(f, fd);
	close(f);
	return saved;
}

static void restore(int fd, int saved)
{
	dup2(saved, fd);
	close(saved);
}

/* Runs `penumbra ARGS...` (NULL-terminated) in-process into cap; returns its status. */
static int cli(const char *first, ...)
{
	char *argv[MAX_ARGS + 2] = {"penumbra"};
	char out_path[320], err_path[320];
	int argc = 1, saved_out, saved_err;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *)) {
		ck_assert(argc <= MAX_ARGS);
		argv[argc++] = (char *)a;
	}
	va_end(ap);
	argv[argc] = NULL;
	tmp_path(out_path, sizeof out_path, "stdout");
	tmp_path(err_path, sizeof err_path, "stderr");
	fflush(stdout);
	fflush(stderr);
	saved_out = redirect(STDOUT_FILENO, out_path);
	saved_err = redirect(STDERR_FILENO, err_path);
	cap.status = pn_cli_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	restore(STDOUT_FILENO, saved_out);
	restore(STDERR_FILENO, saved_err);
	slurp(out_path, cap.out, sizeof cap.out);
	slurp(err_path, cap.err, sizeof cap.err);
	return cap.status;
}

static json_t *load_json_file(const char *path)
{
	json_error_t error;
	json_t *root = json_load_file(path, 0, &error);

	ck_assert_msg(root != NULL, "%s:%d: %s", path, error.line, error.text);
	return root;
}

static json_t *results_of(json_t *root, size_t n)
{
	json_t *results = json_object_get(root, "results");

	ck_assert(json_is_array(results));
	ck_assert_uint_eq(json_array_size(results), n);
	return results;
}

/* A usage error: status 2, one line on stderr naming `what`, ending with the hint. */
static void assert_usage_error(const char *what)
{
	ck_assert_int_eq(cap.status, 2);
	ck_assert_msg(strstr(cap.err, what) != NULL, "stderr does not name '%s': %s", what,
		      cap.err);
	ck_assert_msg(strstr(cap.err, "try 'penumbra --help'\n") != NULL, "no hint: %s", cap.err);
	ck_assert_msg(strchr(cap.err, '\n') == cap.err + strlen(cap.err) - 1, "not one line: %s",
		      cap.err);
	ck_assert_str_eq(cap.out, "");
}

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

/* The JSON at path without its "penumbra" key (asserted first, an object), dumped into buf. */
static void without_provenance(const char *path, char *buf, size_t len)
{
	json_t *root = load_json_file(path);
	void *first = json_object_iter(root);
	ck_assert(first != NULL);
	ck_assert_str_eq(json_object_iter_key(first), "penumbra");
	ck_assert(json_is_object(json_object_iter_value(first)));
	json_object_del(root, "penumbra");
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	ck_assert(text != NULL && strlen(text) < len);
	snprintf(buf, len, "%s", text);
	free(text);
	json_decref(root);
}

/* The provenance of a JSON output (docs/cli.md "Provenance"): its schema, penumbra's version,
 * its commit, and the command line as given (not as getopt_long permuted it). */
static void assert_provenance(const char *path, const char *const *argv, size_t argc)
{
	json_t *root = load_json_file(path);
	json_t *p = json_object_get(root, "penumbra"), *cmd = json_object_get(p, "command");
	ck_assert_str_eq(json_object_iter_key(json_object_iter(root)), "penumbra");
	ck_assert_int_eq(json_integer_value(json_object_get(p, "schema")), PN_CLI_JSON_SCHEMA);
	ck_assert_str_eq(json_string_value(json_object_get(p, "version")), PN_VERSION);
	ck_assert(json_is_string(json_object_get(p, "commit")) ||
		  json_is_null(json_object_get(p, "commit")));
	ck_assert(json_is_boolean(json_object_get(p, "dirty")));
	ck_assert_uint_eq(json_array_size(cmd), argc + 1);
	ck_assert_str_eq(json_string_value(json_array_get(cmd, 0)), "penumbra");
	for (size_t i = 0; i < argc; i++)
		ck_assert_str_eq(json_string_value(json_array_get(cmd, i + 1)), argv[i]);
	json_decref(root);
}

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

static json_int_t scenario_count(const char *path, const char *key)
{
	json_t *root = load_json_file(path);
	json_t *sc = json_array_get(json_object_get(root, "scenarios"), 0);
	ck_assert_ptr_nonnull(sc);
	ck_assert_ptr_null(json_object_get(sc, "capped_points")); /* present only when cut */
	json_int_t v = json_integer_value(json_object_get(sc, key));
	json_decref(root);
	return v;
}

/* --torn-writes 2: more states, the same verdicts; a mutant's trace keeps the key and
 * replays without the option; a check without it writes no key. */
START_TEST(test_torn_writes_check)
{
	char j1[320], j2[320], traces[320], trace[400], src[512];
	const char *root = getenv("PN_SOURCE_DIR");

	ck_assert_msg(root != NULL, "PN_SOURCE_DIR is not set");
	tmp_path(j1, sizeof j1, "tw1.json");
	tmp_path(j2, sizeof j2, "tw2.json");
	tmp_path(traces, sizeof traces, "traces-tw");
	ck_assert_int_eq(cli("check", torn, "--nested", "0", "--json", j1, NULL), 0);
	ck_assert_int_eq(cli("check", torn, "--nested", "0", "--torn-writes", "2", "--json", j2,
			     NULL),
			 0);
	ck_assert_int_gt(scenario_count(j2, "crash_states"), scenario_count(j1, "crash_states"));
	ck_assert_int_gt(scenario_count(j2, "recoveries"), scenario_count(j1, "recoveries"));
	snprintf(src, sizeof src, "%s/scenarios/mutants/fpw-off.yaml", root);
	snprintf(trace, sizeof trace, "%s/fpw-off.trace.yaml", traces);
	ck_assert_int_eq(cli("check", src, "--quiet", "--traces", traces, NULL), 0);
	slurp(trace, cap.err, sizeof cap.err);
	ck_assert_ptr_null(strstr(cap.err, "torn_writes"));
	ck_assert_int_eq(cli("check", src, "--quiet", "--torn-writes", "2", "--traces", traces,
			     NULL),
			 0);
	ck_assert_msg(strstr(cap.out, "check: 1 passed, 0 failed") != NULL, "%s", cap.out);
	slurp(trace, cap.err, sizeof cap.err);
	ck_assert_msg(strstr(cap.err, "torn_writes: 2}") != NULL, "trace: %s", cap.err);
	ck_assert_int_eq(cli("replay", trace, NULL), 1);
	ck_assert_msg(strstr(cap.out, "the violation reproduces") != NULL, "replay: %s", cap.out);
	ck_assert_ptr_null(strstr(cap.out, "EDITED TRACE"));
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

START_TEST(test_run_table)
{
	ck_assert_int_eq(cli("run", scenario, NULL), 0);
	ck_assert_str_eq(cap.err, "");
	ck_assert(strncmp(cap.out, "scenario ", 9) == 0);
	ck_assert(strstr(cap.out, "\nmode ") && strstr(cap.out, " fpw\n"));
	ck_assert(strstr(cap.out, "\nWAL bytes/transaction "));
	ck_assert(strstr(cap.out, "\nwrite amplification "));
	ck_assert(strstr(cap.out, "\ncommit latency p99 (µs) "));
	ck_assert(strstr(cap.out, "\nType                                           N      (%)"));
	ck_assert(strstr(cap.out, "\nHeap/HOT_UPDATE "));
	ck_assert(strstr(cap.out, "\nTransaction/COMMIT "));
	ck_assert(!strstr(cap.out, "Btree/DEDUP")); /* N == 0: not shown */
	ck_assert(strstr(cap.out, "\nTotal "));
	ck_assert(!strstr(cap.out, "WAL vs"));
}
END_TEST

/* The keys of a result, in order: product.md's, then the ones the brief added. */
static const char *const result_keys[] = {
	"scenario",
	"mode",
	"transactions",
	"commits",
	"wal_bytes",
	"wal_records",
	"fpi_count",
	"fpi_bytes",
	"data_bytes_written",
	"fsyncs",
	"checkpoints",
	"space_amplification",
	"elapsed_seconds",
	"wal_bytes_per_transaction",
	"shifts",
	"dw_bytes_written",
	"write_amplification",
	"read_runs",
	"commit_latency_us_p50",
	"commit_latency_us_p99",
	"checkpoints_by_cause",
	"records",
	"transaction_types",
	"violation",
};

static void assert_key_order(json_t *result)
{
	void *it = json_object_iter(result);

	for (size_t i = 0; i < PN_ARRAY_LEN(result_keys); i++) {
		ck_assert_msg(it != NULL, "result ends before '%s'", result_keys[i]);
		ck_assert_str_eq(json_object_iter_key(it), result_keys[i]);
		it = json_object_iter_next(result, it);
	}
}

START_TEST(test_json_provenance)
{
	char a[320];
	tmp_path(a, sizeof a, "p.json");
	ck_assert_int_eq(cli("run", scenario, "--json", a, "--seed", "4", NULL), 0);
	const char *const run[] = {"run", scenario, "--json", a, "--seed", "4"};
	assert_provenance(a, run, PN_ARRAY_LEN(run));
	ck_assert_int_eq(cli("compare", "--json", a, scenario, "--modes", "fpw,umbra", NULL), 0);
	const char *const compare[] = {"compare", "--json", a, scenario, "--modes", "fpw,umbra"};
	assert_provenance(a, compare, PN_ARRAY_LEN(compare));
}
END_TEST

START_TEST(test_json_deterministic)
{
	char a[320], b[320], text_a[OUT_LEN], text_b[OUT_LEN];
	json_t *root, *r;

	tmp_path(a, sizeof a, "a.json");
	tmp_path(b, sizeof b, "b.json");
	ck_assert_int_eq(cli("run", scenario, "--json", a, NULL), 0);
	ck_assert_int_eq(cli("run", "--json", b, scenario, NULL), 0); /* options first */
	/* the same but for the provenance, which names each command line */
	without_provenance(a, text_a, sizeof text_a);
	without_provenance(b, text_b, sizeof text_b);
	ck_assert(strlen(text_a) > 100);
	ck_assert_str_eq(text_a, text_b);

	root = load_json_file(a);
	r = json_array_get(results_of(root, 1), 0);
	assert_key_order(r);
	ck_assert_str_eq(json_string_value(json_object_get(r, "scenario")), "t");
	ck_assert_str_eq(json_string_value(json_object_get(r, "mode")), "fpw");
	ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "ok");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "seed")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "transactions")), 200);
	ck_assert(json_is_null(json_object_get(r, "violation")));
	ck_assert(
		json_is_object(json_object_get(json_object_get(r, "records"), "Heap/HOT_UPDATE")));
	json_decref(root);
}
END_TEST

START_TEST(test_json_stdout)
{
	json_error_t error;
	json_t *root;

	ck_assert_int_eq(cli("run", scenario, "--json", "-", NULL), 0);
	root = json_loads(cap.out, 0, &error);
	ck_assert_msg(root != NULL, "stdout is not JSON: %s", error.text);
	results_of(root, 1);
	json_decref(root);
	ck_assert(strstr(cap.err, "\nWAL bytes ")); /* the table went to stderr */
}
END_TEST

START_TEST(test_overrides)
{
	char path[320];
	json_t *root, *r;

	tmp_path(path, sizeof path, "o.json");
	ck_assert_int_eq(cli("run", "--seed", "9", scenario, "--mode", "umbra", "--json", path,
			     NULL),
			 0);
	root = load_json_file(path);
	r = json_array_get(results_of(root, 1), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "seed")), 9);
	ck_assert_str_eq(json_string_value(json_object_get(r, "mode")), "umbra");
	json_decref(root);
}
END_TEST

START_TEST(test_run_violation)
{
	char path[320];
	json_t *root, *viol;

	tmp_path(path, sizeof path, "v.json");
	ck_assert_int_eq(cli("run", mutated, "--json", path, NULL), 1);
	ck_assert_msg(strncmp(cap.err, "violation: wal_before_data page ", 32) == 0, "%s", cap.err);
	ck_assert(strstr(cap.out, "\nstatus ") && strstr(cap.out, " violation\n"));
	root = load_json_file(path);
	viol = json_object_get(json_array_get(results_of(root, 1), 0), "violation");
	ck_assert_str_eq(json_string_value(json_object_get(viol, "kind")), "wal_before_data");
	ck_assert(json_is_integer(json_object_get(viol, "page")));
	ck_assert(json_is_string(json_object_get(viol, "detail")));
	json_decref(root);
	ck_assert_int_eq(cli("compare", mutated, "--modes", "fpw,umbra", NULL), 1);
	ck_assert(strncmp(cap.err, "fpw: violation: ", 16) == 0);
}
END_TEST

static void assert_modes(json_t *results, const char *const *modes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(results, i);
		ck_assert_str_eq(json_string_value(json_object_get(r, "mode")), modes[i]);
		ck_assert_str_eq(json_string_value(json_object_get(r, "scenario")), "t");
		assert_key_order(r);
	}
}

START_TEST(test_compare_default_modes)
{
	static const char *const modes[] = {"fpw", "nofpw", "umbra", "doublewrite"};
	char path[320];
	json_t *root;

	tmp_path(path, sizeof path, "c.json");
	ck_assert_int_eq(cli("compare", scenario, "--json", path, NULL), 0);
	ck_assert(strstr(cap.out, "\nWAL vs nofpw "));
	ck_assert(strstr(cap.out, " fpw  ") && strstr(cap.out, " doublewrite\n"));
	root = load_json_file(path);
	assert_modes(results_of(root, 4), modes, 4);
	json_decref(root);
}
END_TEST

START_TEST(test_compare_some_modes)
{
	static const char *const modes[] = {"umbra", "fpw"};
	char path[320];
	json_t *root;

	tmp_path(path, sizeof path, "c2.json");
	ck_assert_int_eq(cli("compare", "--modes", "umbra,fpw", "--seed", "5", scenario, "--json",
			     path, NULL),
			 0);
	ck_assert(!strstr(cap.out, "WAL vs"));
	ck_assert(!strstr(cap.out, "WAL records of mode"));
	root = load_json_file(path);
	assert_modes(results_of(root, 2), modes, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_array_get(json_object_get(root, "results"), 1), "seed")),
			 5);
	json_decref(root);
}
END_TEST

START_TEST(test_compare_stats)
{
	ck_assert_int_eq(cli("compare", "--modes", "fpw,nofpw", "--stats", scenario, NULL), 0);
	const char *fpw = strstr(cap.out, "WAL records of mode fpw:\nType ");
	const char *nofpw = strstr(cap.out, "WAL records of mode nofpw:\nType ");
	ck_assert(fpw != NULL && nofpw != NULL && fpw < nofpw);
	ck_assert(strstr(fpw, "Heap/HOT_UPDATE") != NULL);
	ck_assert(strstr(nofpw, "[100.00%]") != NULL); /* nofpw: no image bytes */
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
static json_t *stdout_json(void) { return pure_json(cap.out); }

START_TEST(test_contract_keys)
{
	json_t *root;

	ck_assert_int_eq(cli("run", scenario, "--json", "-", NULL), 0);
	root = stdout_json();
	assert_contract(results_of(root, 1));
	json_decref(root);
	ck_assert_int_eq(cli("compare", scenario, "--modes", "fpw,umbra,pushdown", "--stats",
			     "--json", "-", NULL),
			 0);
	ck_assert(strstr(cap.err, "WAL records of mode umbra:") != NULL);
	root = stdout_json();
	assert_contract(results_of(root, 3));
	json_decref(root);
	/* a run the engine refused keeps every key, null where there is no figure */
	ck_assert_int_eq(cli("run", refused, "--mode", "fpw", "--json", "-", NULL), 2);
	root = stdout_json();
	assert_contract(results_of(root, 1));
	ck_assert(
		strstr(json_string_value(
			       json_object_get(json_array_get(json_object_get(root, "results"), 0),
					       "error")),
		       "rf.yaml:9:7: ") != NULL); /* the step's FILE:LINE:COL */
	ck_assert(json_is_null(
		json_object_get(json_array_get(json_object_get(root, "results"), 0), "wal_bytes")));
	json_decref(root);
	ck_assert_int_eq(cli("compare", refused, "--modes", "fpw,nofpw", "--json", "-", NULL), 2);
	root = stdout_json();
	assert_contract(results_of(root, 2));
	json_decref(root);
}
END_TEST

static void write_file(const char *path, const char *text);

/* What the loader checked against the scenario's own policy but --mode changes (umbra l4
 * with generations 5, or a striped layout) was refused without a position. */
START_TEST(test_mode_refusal_position)
{
	static const struct {
		const char *protocol, *cmd, *opt, *modes, *at, *why;
	} cases[] = {
		{"{mode: umbra, generations: 5}", "run", "--mode", "umbra-l4",
		 "gen.yaml:3:38: ", "protocol.generations is 5 with policy l4"},
		{"{mode: umbra, layout: striped}", "compare", "--modes", "fpw,umbra-l3",
		 "gen.yaml:3:33: ", "protocol.layout is striped with policy l3"},
	};
	char path[340], text[256], want[128];
	snprintf(path, sizeof path, "%s/gen.yaml", tmp_dir);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text,
			 "name: gen\nstorage: {pages: 8, buffers: 4}\nprotocol: %s\n"
			 "workload: {kind: random, transactions: 5}\n",
			 cases[i].protocol);
		write_file(path, text);
		ck_assert_int_eq(cli(cases[i].cmd, path, cases[i].opt, cases[i].modes, NULL), 2);
		snprintf(want, sizeof want, "%s%s", cases[i].at, cases[i].why);
		ck_assert_msg(strstr(cap.err, want) != NULL, "%s", cap.err);
	}
	unlink(path);
}
END_TEST

/* bench and crashtest never run a truncate under pushdown (whose declaration has no truncate
 * capability), as run and check refuse it: truncate is a script step, and both refuse a
 * script workload before any mode runs, with exit 2 and why, touching no file. */
START_TEST(test_realdisk_refuses_truncate)
{
	static const char *const cmds[] = {"bench", "crashtest"};
	char src[512], dir[320];
	const char *root = getenv("PN_SOURCE_DIR");

	ck_assert_msg(root != NULL, "PN_SOURCE_DIR is not set");
	snprintf(src, sizeof src, "%s/scenarios/truncate/truncate-regrow-fpw.yaml", root);
	tmp_path(dir, sizeof dir, "realdisk");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		ck_assert_int_eq(cli(cmds[i], src, "--path", dir, "--modes", "pushdown", NULL), 2);
		ck_assert_msg(strstr(cap.err, "a script workload ends by itself") != NULL, "%s",
			      cap.err);
		ck_assert_int_eq(access(dir, F_OK), -1);
	}
}
END_TEST

/* C5: a violation of no page (R2: a commit acknowledged too early) used to say
 * "page 4294967295" in text and in JSON. */
START_TEST(test_no_page)
{
	json_t *root, *v;

	ck_assert_int_eq(cli("run", no_page, "--json", "-", NULL), 1);
	ck_assert_msg(strstr(cap.err, "violation: durability page -: commit of xid") != NULL, "%s",
		      cap.err);
	ck_assert(strstr(cap.err, "4294967295") == NULL && strstr(cap.out, "4294967295") == NULL);
	root = stdout_json();
	v = json_object_get(json_array_get(results_of(root, 1), 0), "violation");
	ck_assert(json_is_object(v));
	ck_assert(json_is_null(json_object_get(v, "page")));
	json_decref(root);
	ck_assert_int_eq(cli("compare", no_page, "--modes", "fpw,umbra", NULL), 1);
	ck_assert_msg(strstr(cap.err, "umbra: violation: durability page -: ") != NULL, "%s",
		      cap.err);
	/* check's report left the page line out; replay's trace says '-' as well */
	char traces[300], trace[340];
	snprintf(traces, sizeof traces, "%s/np-traces", tmp_dir);
	snprintf(trace, sizeof trace, "%s/np.trace.yaml", traces);
	ck_assert_int_eq(cli("check", no_page, "--traces", traces, "--json", "-", NULL), 1);
	ck_assert_msg(strstr(cap.err, "\n  page:        -\n") != NULL, "%s", cap.err);
	root = stdout_json();
	v = json_object_get(json_array_get(json_object_get(root, "scenarios"), 0), "violation");
	ck_assert(json_is_object(v) && json_is_null(json_object_get(v, "page")));
	json_decref(root);
	ck_assert_int_eq(cli("replay", trace, NULL), 1);
	ck_assert_msg(strstr(cap.out, "\n  page: -\n") != NULL, "%s", cap.out);
	unlink(trace);
	rmdir(traces);
}
END_TEST

/* Each column is named as asked: umbra-prototype used to be labelled plain umbra, and a
 * plain umbra after umbra-l3 ran (and was labelled) l3. */
START_TEST(test_compare_labels)
{
	static const char *const both[] = {"umbra", "umbra-prototype"};
	static const char *const after[] = {"umbra-l4", "umbra"};
	json_t *root;

	ck_assert_int_eq(cli("compare", scenario, "--modes", "umbra,umbra-prototype", "--json", "-",
			     NULL),
			 0);
	root = stdout_json();
	assert_modes(results_of(root, 2), both, 2);
	json_decref(root);
	ck_assert(strstr(cap.err, "  umbra  umbra-prototype\n") != NULL);
	cli("compare", scenario, "--modes", "umbra-l4,umbra", "--json", "-", NULL);
	root = stdout_json();
	assert_modes(results_of(root, 2), after, 2);
	json_decref(root);
	ck_assert_int_eq(cli("run", scenario, "--mode", "umbra-prototype", "--json", "-", NULL), 0);
	root = stdout_json();
	assert_modes(results_of(root, 1), both + 1, 1);
	json_decref(root);
}
END_TEST

/* progress.h: the ETA from the work done, shares of running scenarios included; unknown
 * before any work. */
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
	TCase *runs = tcase_create("runs");

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
	tcase_add_test(usage, test_value_parsers);
	tcase_add_test(usage, test_records_format);
	suite_add_tcase(s, usage);
	tcase_add_test(runs, test_run_table);
	tcase_add_test(runs, test_json_deterministic);
	tcase_add_test(runs, test_json_provenance);
	tcase_add_test(runs, test_json_stdout);
	tcase_add_test(runs, test_overrides);
	tcase_add_test(runs, test_run_violation);
	tcase_add_test(runs, test_compare_default_modes);
	tcase_add_test(runs, test_compare_some_modes);
	tcase_add_test(runs, test_compare_stats);
	tcase_add_test(runs, test_contract_keys);
	tcase_add_test(runs, test_no_page);
	tcase_add_test(runs, test_mode_refusal_position);
	tcase_add_test(runs, test_realdisk_refuses_truncate);
	tcase_add_test(runs, test_compare_labels);
	tcase_add_test(runs, test_torn_writes_check);
	tcase_set_timeout(runs, 120);
	suite_add_tcase(s, runs);
	return s;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static void make_fixture(void)
{
	snprintf(tmp_dir, sizeof tmp_dir, "%s/pn_test_cli.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(scenario, sizeof scenario, "%s/t.yaml", tmp_dir);
	write_file(scenario, tiny_scenario);
	snprintf(mutated, sizeof mutated, "%s/m.yaml", tmp_dir);
	write_file(mutated, mutated_scenario);
	snprintf(no_page, sizeof no_page, "%s/np.yaml", tmp_dir);
	write_file(no_page, no_page_scenario);
	snprintf(refused, sizeof refused, "%s/rf.yaml", tmp_dir);
	write_file(refused, refused_scenario);
	snprintf(torn, sizeof torn, "%s/tw.yaml", tmp_dir);
	write_file(torn, torn_scenario);
}

static void remove_fixture(void)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	char path[600];

	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(tmp_dir);
}

int main(void)
{
	SRunner *sr = srunner_create(cli_suite());
	int failed;

	make_fixture();
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_fixture();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

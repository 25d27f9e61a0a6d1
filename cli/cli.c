/*
 * cli.c: the dispatcher and the helpers every command shares to get to a result (cli layer).
 * In order:
 *   1. the command table, penumbra's own option spec, pn_cli_main() (--help, --version,
 *      help CMD, help --man / --markdown / --completion / --commands)
 *   2. option values: integers, sizes, durations, modes (the options: opts.h)
 *   3. scenarios and runs: loading, one simulated run
 * What a run's result looks like once it is there (the metrics table, the records table,
 * the JSON) is results.c's. The rules the commands keep (exit statuses, message form, JSON
 * determinism) are CL1..CL6 in cli.h.
 */
#include "cli.h"
#include "files.h"
#include "load.h"
#include "parse.h"
#include "workload.h"
#include "waldir.h"

#include <errno.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. commands ---- */

const struct pn_command pn_commands[] = {
	{"run", pn_cmd_run, "simulate one scenario once and print its metrics", &pn_run_spec},
	{"check", pn_cmd_check,
	 "enumerate crash points and states, recover, verify with the oracle", &pn_check_spec},
	{"replay", pn_cmd_replay, "re-run a counterexample trace exactly, print its timeline",
	 &pn_replay_spec},
	{"compare", pn_cmd_compare,
	 "run one scenario under several protocols, metrics side by side", &pn_compare_spec},
	{"bench", pn_cmd_bench, "run a scenario on real files in a directory through io_uring",
	 &pn_bench_spec},
	{"crashtest", pn_cmd_crashtest, "SIGKILL real runs at seeded moments, verify recovery",
	 &pn_crashtest_spec},
	{"report", pn_cmd_report,
	 "one self-contained HTML file of plots from JSON results or traces", &pn_report_spec},
	{"import", pn_cmd_import, "read a real PostgreSQL 15 WAL, print pg_waldump's statistics",
	 &pn_import_spec},
	{"pgcrash", pn_cmd_pgcrash, "real PostgreSQL recovered from the model's crash states",
	 &pn_pgcrash_spec},
};
const size_t pn_commands_len = PN_ARRAY_LEN(pn_commands);

struct top_opts {
	bool version;
};

static const struct pn_opt top_opts[] = {
	{.name = "version",
	 .short_name = 'V',
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct top_opts, version),
	 .help = "print the version, the commit it was built from and whether that tree had "
		 "changes (\"dirty\"), then exit"},
};

const struct pn_cmd_spec pn_cli_spec = {
	.args = "<command> [options] [arguments]",
	.args_max = -1,
	.description = "A deterministic simulator and crash-point model checker for "
		       "PostgreSQL-like page crash-safety protocols: full-page writes, Umbra, "
		       "doublewrite, pushdown.",
	.opts = top_opts,
	.nopts = PN_ARRAY_LEN(top_opts),
	.notes = "'penumbra <command> --help' describes a command's options. Options may come "
		 "before or after the arguments.",
	.exits = "0 ok, 1 a violation or failed verification, 2 bad input or usage, 3 a "
		 "cross-check failed (check), 130 interrupted (check)",
};

const struct pn_command *pn_cli_find(const char *name)
{
	for (size_t i = 0; name && i < pn_commands_len; i++) {
		if (strcmp(pn_commands[i].name, name) == 0)
			return &pn_commands[i];
	}
	return NULL;
}

/* `penumbra help --FORMAT ...`: the outputs made from the specs (opts_doc.c). */
static int help_format(int argc, char **argv)
{
	const char *format = argv[1];
	const struct pn_command *cmd = argc == 3 ? pn_cli_find(argv[2]) : NULL;

	if (strcmp(format, "--commands") == 0 && argc == 2) {
		for (size_t i = 0; i < pn_commands_len; i++)
			printf("%s\n", pn_commands[i].name);
		return 0;
	}
	if (strcmp(format, "--completion") == 0 && argc == 3)
		return pn_opts_completion(stdout, argv[2])
			       ? 0
			       : pn_cli_usage_error("help",
						    "no completion for shell '%s' "
						    "(expected bash or zsh)",
						    argv[2]);
	if (strcmp(format, "--man") == 0 && argc == 2) {
		pn_opts_man(stdout, &pn_cli_spec);
		return 0;
	}
	if ((strcmp(format, "--man") == 0 || strcmp(format, "--markdown") == 0) && argc == 3) {
		if (!cmd)
			return pn_cli_usage_error("help", "unknown command '%s'", argv[2]);
		if (strcmp(format, "--man") == 0)
			pn_opts_man(stdout, cmd->spec);
		else
			pn_opts_markdown(stdout, cmd->spec);
		return 0;
	}
	return pn_cli_usage_error("help",
				  "unknown option '%s' or wrong arguments; expected "
				  "--man [COMMAND], --markdown COMMAND, --completion "
				  "bash|zsh or --commands",
				  format);
}

/* Appends the names of the bits of mask (names[i] for bit i), joined by ", ", or "-". */
static void bit_names(FILE *out, unsigned mask, const char *const *names, int count)
{
	int n = 0;
	for (int i = 0; i < count; i++)
		if (mask & (1u << i))
			fprintf(out, "%s%s", n++ ? ", " : "", names[i]);
	if (!n)
		fputc('-', out);
}

/* `penumbra help protocols`: a row a protocol of src/protocol/list.h, from its declaration
 * (docs/protocol.md shows it; doc_tables holds it there). */
static int help_protocols(FILE *out)
{
	static const char *const caps[] = {"truncate", "publish step", "page server"};
	fputs("| protocol | scenario | reads | refuses | can | its mutants |\n"
	      "| --- | --- | --- | --- | --- | --- |\n",
	      out);
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++) {
		const struct pn_protocol_decl *d = pn_protocol_decls[r];
		const char *policy = pn_protocol_policy(r);
		fprintf(out, "| `%s` | `mode: %.*s", pn_protocol_names[r],
			(int)pn_protocol_mode_len(r), pn_protocol_names[r]);
		if (policy && (d->keys & PN_KEY_POLICY))
			fprintf(out, ", policy: %s", policy);
		fputs("` | ", out);
		bit_names(out, d->keys, pn_protocol_key_names, PN_KEY_COUNT);
		if (d->generations_max)
			fprintf(out, " (generations at most %u)", d->generations_max);
		if (d->interleaved_only)
			fputs(" (layout interleaved)", out);
		fputs(" | ", out);
		bit_names(out, d->fixed, pn_protocol_key_names, PN_KEY_COUNT);
		fputs(" | ", out);
		bit_names(out, d->caps, caps, (int)PN_ARRAY_LEN(caps));
		fputs(" | ", out);
		bit_names(out, d->mutants, pn_mutation_names, PN_MUT_COUNT);
		fputs(" |\n", out);
	}
	return 0;
}

/* `penumbra help [COMMAND]`: argv[0] is "help". */
static int help(int argc, char **argv)
{
	const struct pn_command *cmd;

	if (argc == 1 ||
	    (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
			   strcmp(argv[1], "help") == 0))) {
		pn_opts_help(stdout, &pn_cli_spec); /* help's own help is the top-level one */
		return 0;
	}
	if (argv[1][0] == '-')
		return help_format(argc, argv);
	if (argc > 2)
		return pn_cli_usage_error("help", "unexpected argument '%s'", argv[2]);
	if (strcmp(argv[1], "protocols") == 0)
		return help_protocols(stdout);
	cmd = pn_cli_find(argv[1]);
	if (!cmd)
		return pn_cli_usage_error("help", "unknown command '%s'", argv[1]);
	pn_opts_help(stdout, cmd->spec);
	return 0;
}

int pn_cli_main(int argc, char **argv)
{
	struct top_opts o = {0};
	const struct pn_command *cmd;
	int at, rc;

	pn_cli_set_command(argc, argv); /* the provenance of its JSON (version.c) */
	rc = pn_opts_parse(&pn_cli_spec, argc, argv, &o, &at);
	if (rc >= 0)
		return rc;
	if (o.version) {
		printf("penumbra %s\n", pn_cli_version());
		return 0;
	}
	if (at >= argc) {
		pn_opts_help(stderr, &pn_cli_spec);
		return 2;
	}
	if (strcmp(argv[at], "help") == 0)
		return help(argc - at, argv + at);
	cmd = pn_cli_find(argv[at]);
	if (!cmd)
		return pn_cli_usage_error(NULL, "unknown command '%s'", argv[at]);
	pn_file_catch_signals(); /* files.h F5: EFBIG and a message, not signal 25 */
	pn_file_reset();
	rc = cmd->fn(argc - at, argv + at);
	pn_file_reset(); /* an output a command left open is removed, never half-written */
	return rc;
}

/* ---- 2. option values ---- */

int pn_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	if (cmd)
		fprintf(stderr, "penumbra %s: ", cmd);
	else
		fputs("penumbra: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; try 'penumbra --help'\n", stderr);
	return 2;
}

static const char *parse_reason(enum pn_parse_status st)
{
	switch (st) {
	case PN_PARSE_OK: return "ok";
	case PN_PARSE_EMPTY: return "empty";
	case PN_PARSE_NEGATIVE: return "negative";
	case PN_PARSE_SIGN: return "a sign";
	case PN_PARSE_FRACTION: return "a fraction";
	case PN_PARSE_OVERFLOW: return "too large";
	case PN_PARSE_NO_UNIT: return "no unit";
	case PN_PARSE_BAD_UNIT: return "an unknown unit";
	case PN_PARSE_SYNTAX: return "not a number";
	}
	return "?";
}

static bool parsed(const char *cmd, const char *opt, const char *s, enum pn_parse_status st,
		   const char *expected)
{
	if (st == PN_PARSE_OK)
		return true;
	pn_cli_usage_error(cmd, "%s '%s': %s; expected %s", opt, s, parse_reason(st), expected);
	return false;
}

bool pn_cli_parse_uint(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
	return parsed(cmd, opt, s, pn_parse_uint(s, out), "an unsigned decimal integer");
}

bool pn_cli_parse_size(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
	return parsed(cmd, opt, s, pn_parse_size_status(s, out),
		      "a size such as 8192, 64kB or 16MiB");
}

bool pn_cli_parse_duration(const char *cmd, const char *opt, const char *s, uint64_t *out_ns)
{
	return parsed(cmd, opt, s, pn_parse_duration_status(s, out_ns),
		      "a duration such as 250ms, 30s or 4min");
}

void pn_cli_mode_names(enum pn_cli_names what, char *names, size_t len)
{
	size_t at;

	if (what == PN_CLI_MODES || what == PN_CLI_ROWS || what == PN_CLI_ALONE) {
		pn_protocol_list_names(names, len,
				       what == PN_CLI_MODES  ? PN_NAMES_MODES
				       : what == PN_CLI_ROWS ? PN_NAMES_ROWS
							     : PN_NAMES_MODES_ALONE);
		return;
	}
	if (what == PN_CLI_MODES_POLICIES) { /* every row's name, then the modes alone */
		pn_protocol_list_names(names, len, PN_NAMES_ROWS);
		at = strlen(names);
		if (at + 2 < len) {
			snprintf(names + at, len - at, ", ");
			pn_protocol_list_names(names + at + 2, len - at - 2, PN_NAMES_MODES_ALONE);
		}
		return;
	}
	/* the rows that are a mode with a policy ("umbra-l3") */
	at = 0;
	names[0] = '\0';
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT && at < len; r++)
		if (pn_protocol_policy(r))
			at += (size_t)snprintf(names + at, len - at, "%s%s", at ? ", " : "",
					       pn_protocol_names[r]);
}

bool pn_cli_parse_mode(const char *cmd, const char *s, enum pn_mode *out)
{
	char names[160];

	if (pn_mode_parse(s, out))
		return true;
	pn_cli_mode_names(PN_CLI_MODES, names, sizeof names);
	pn_cli_usage_error(cmd, "unknown mode '%s' (expected one of %s)", s, names);
	return false;
}

bool pn_cli_parse_mode_spec(const char *cmd, const char *s, struct pn_cli_mode *out)
{
	enum pn_protocol_id row;
	char modes[160], rows[256];
	bool named = false;

	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++)
		named |= strcmp(s, pn_protocol_names[r]) == 0;
	if (strlen(s) < sizeof out->name &&
	    (named || (!strchr(s, '-') && pn_protocol_spelled(s, NULL, &row)))) {
		snprintf(out->name, sizeof out->name, "%s", s);
		return true;
	}
	pn_protocol_list_names(modes, sizeof modes, PN_NAMES_MODES_ALONE);
	pn_protocol_list_names(rows, sizeof rows, PN_NAMES_ROWS);
	pn_cli_usage_error(cmd, "unknown mode '%s' (expected one of %s, or a mode alone: %s)", s,
			   rows, modes);
	return false;
}

int pn_cli_parse_mode_specs(const char *cmd, const char *list,
			    struct pn_cli_mode out[PN_CLI_MAX_MODES])
{
	char buf[PN_CLI_MAX_MODES * 32];
	char *word = buf;
	int n = 0;

	if (strlen(list) >= sizeof buf) {
		pn_cli_usage_error(cmd, "mode list '%.20s...' is too long", list);
		return -1;
	}
	memcpy(buf, list, strlen(list) + 1);
	for (;;) {
		char *comma = strchr(word, ',');
		if (comma)
			*comma = '\0';
		if (*word == '\0') {
			pn_cli_usage_error(cmd, "empty mode name in '%s'", list);
			return -1;
		}
		if (n == PN_CLI_MAX_MODES) {
			pn_cli_usage_error(cmd, "more than %d modes in '%s'", PN_CLI_MAX_MODES,
					   list);
			return -1;
		}
		if (!pn_cli_parse_mode_spec(cmd, word, &out[n]))
			return -1;
		for (int i = 0; i < n; i++) {
			if (strcmp(out[i].name, out[n].name) == 0) {
				pn_cli_usage_error(cmd, "mode '%s' given twice in '%s'", word,
						   list);
				return -1;
			}
		}
		n++;
		if (!comma)
			return n;
		word = comma + 1;
	}
}

void pn_cli_apply_mode(struct pn_scenario *sc, const struct pn_cli_mode *m)
{
	enum pn_protocol_id row;
	bool ok = pn_protocol_pick(sc, m->name, &row);
	PN_ASSERT(ok); /* pn_cli_parse_mode_spec took only names that pick a row */
	pn_protocol_set(sc, row);
}

void pn_cli_set_mode(struct pn_scenario *sc, enum pn_mode m)
{
	struct pn_cli_mode spec;
	snprintf(spec.name, sizeof spec.name, "%s", pn_mode_name(m));
	pn_cli_apply_mode(sc, &spec);
}

int pn_cli_parse_modes(const char *cmd, const char *list, enum pn_mode out[PN_CLI_MAX_MODES])
{
	struct pn_cli_mode specs[PN_CLI_MAX_MODES];
	int n = pn_cli_parse_mode_specs(cmd, list, specs);
	for (int i = 0; i < n; i++) {
		if (!pn_mode_parse(specs[i].name, &out[i])) {
			pn_cli_usage_error(cmd, "'%s' in '%s' names a policy; expected plain modes",
					   specs[i].name, list);
			return -1;
		}
	}
	return n;
}

/* ---- 3. scenarios and runs ---- */

bool pn_cli_load(const char *path, struct pn_scenario *sc)
{
	char err[PN_ERROR_LEN];

	if (pn_scenario_load(path, sc, err, sizeof err))
		return true;
	fprintf(stderr, "%s\n", err[0] ? err : "cannot load the scenario");
	pn_scenario_free(sc);
	return false;
}

void pn_cli_label(const struct pn_scenario *sc, const struct pn_cli_mode *m, char *out, size_t len)
{
	enum pn_protocol_id row = (enum pn_protocol_id)sc->protocol.row, first;
	size_t n = pn_protocol_mode_len(row);
	char mode[32];
	bool named = m && strchr(m->name, '-');

	/* a mode alone, on its first row, is labelled by the mode ("umbra") */
	snprintf(mode, sizeof mode, "%.*s", (int)n, pn_protocol_names[row]);
	if (!named && pn_protocol_spelled(mode, NULL, &first) && first == row)
		snprintf(out, len, "%s", mode);
	else
		snprintf(out, len, "%s", pn_protocol_names[row]);
}

int pn_cli_simulate(const struct pn_scenario *sc, const struct pn_cli_mode *m,
		    struct pn_cli_result *out)
{
	return pn_cli_simulate_wal(sc, m, out, NULL);
}

/* What the scenario's row refuses (its declaration), when --mode picked it for a file of
 * another row: a key it decides itself at the key's position, or a script step it cannot
 * run; status 2 and why. */
static bool refused(const struct pn_scenario *sc, struct pn_cli_result *out)
{
	char why[PN_ERROR_LEN / 2];
	const uint32_t *at[] = {sc->protocol.generations_at, sc->protocol.layout_at};
	unsigned given = (at[0][0] ? PN_KEY_GENERATIONS : 0) | (at[1][0] ? PN_KEY_LAYOUT : 0);
	unsigned key = pn_protocol_key_refusal(sc, given, false, why, sizeof why);
	const struct pn_step *st = key ? NULL : pn_protocol_refusal(sc, why, sizeof why);
	if (!key && !st)
		return false;
	const uint32_t *pos = key == PN_KEY_LAYOUT ? at[1] : at[0];
	if (key && pos[0])
		snprintf(out->sim.error, sizeof out->sim.error, "%.400s:%u:%u: %.500s", sc->path,
			 pos[0], pos[1], why);
	else if (key)
		snprintf(out->sim.error, sizeof out->sim.error, "%.400s: %.500s", sc->path, why);
	else
		snprintf(out->sim.error, sizeof out->sim.error, "%.400s:%d:%d: %.500s", sc->path,
			 st->line, st->column, why);
	out->sim.status = 2;
	return true;
}

/* wal_dir: the run's WAL as segment files there (waldir.c); a file that cannot be written
 * makes the run's status 2, its metrics kept. */
int pn_cli_simulate_wal(const struct pn_scenario *sc, const struct pn_cli_mode *m,
			struct pn_cli_result *out, const char *wal_dir)
{
	struct pn_waldir *d = wal_dir ? malloc(sizeof *d) : NULL;

	memset(out, 0, sizeof *out);
	snprintf(out->scenario, sizeof out->scenario, "%s", sc->name);
	out->mode = sc->protocol.mode;
	pn_cli_label(sc, m, out->label, sizeof out->label);
	out->seed = sc->seed;
	for (int t = 0; t < PN_TXN_TYPES; t++)
		out->txn_names[t] = pn_workload_txn_name(sc, t);
	if (refused(sc, out)) { /* a step the row --mode picked cannot run */
		free(d);
		return out->sim.status;
	}
	if (!d) {
		PN_ASSERT(!wal_dir);
		pn_sim_run(sc, &out->sim);
		return out->sim.status;
	}
	if (!pn_waldir_open(d, wal_dir, sc->storage.wal_segment_size, out->sim.error,
			    sizeof out->sim.error)) {
		out->sim.status = 2;
	} else {
		pn_sim_run_observed(sc, &out->sim, &d->obs);
		if (!pn_waldir_close(d) || d->failed) {
			snprintf(out->sim.error, sizeof out->sim.error, "--wal-dir: %.1000s",
				 d->error);
			out->sim.status = 2;
		}
	}
	free(d);
	return out->sim.status;
}

bool pn_cli_writable_dir(const char *dir, char *why, size_t why_len)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			snprintf(why, why_len, "not a directory");
		else if (access(dir, W_OK | X_OK) != 0)
			snprintf(why, why_len, "%s", strerror(errno));
		else
			return true;
		return false;
	}
	if (errno != ENOENT) {
		snprintf(why, why_len, "%s", strerror(errno));
		return false;
	}
	char *copy = strdup(dir);
	PN_ASSERT(copy != NULL);
	const char *parent = dirname(copy);
	bool ok = stat(parent, &st) == 0 && S_ISDIR(st.st_mode) && access(parent, W_OK | X_OK) == 0;
	if (!ok)
		snprintf(why, why_len, "cannot be created in %s: %s", parent,
			 errno ? strerror(errno) : "not a directory");
	free(copy);
	return ok;
}

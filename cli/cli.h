/*
 * cli.h: the command line (cli layer, the top of the stack: it may use model/, sim/ and
 * src/, nothing uses it). One table names every command; each command is one function
 * `int pn_cmd_<name>(int argc, char **argv)` in cli/cmd_<name>.c, called with argv[0] the
 * command's name. The helpers here are what the commands share: option parsing, scenario
 * loading and running a scenario in the simulator (cli.c); the two outputs of a run (the
 * readable metrics table and the JSON document) are results.h's. docs/cli.md is the user's
 * reference.
 *
 * Rules every command keeps:
 *   CL1 Exit status: 0 ok; 1 the thing checked went wrong (a violation, a lost commit);
 *      2 bad input or usage (unknown command or option, bad value, a scenario the loader or
 *      the engine refuses). Commands return it; only main() exits.
 *   CL2 Usage errors are one line on stderr naming what was wrong, ending with
 *      "try 'penumbra --help'".
 *   CL3 Machine-readable output is byte-identical across runs of the same input: JSON keys
 *      are inserted in a fixed order and dumped with JSON_PRESERVE_ORDER.
 *   CL4 When JSON goes to stdout (`--json -`), everything readable goes to stderr.
 *   CL5 "No page" is JSON null and "-" in text (pn_cli_page_json, pn_cli_page_text).
 *   CL6 Every result of run, compare and bench has product.md's keys, in its order, refused
 *      and failed runs included (null where there is no figure).
 */
#ifndef PN_CLI_H
#define PN_CLI_H

#include <stdio.h>

#include <jansson.h>

#include "opts.h"
#include "protocols.h"
#include "results.h"
#include "world.h"

#ifndef PN_VERSION /* the version of CMakeLists.txt's project, a compile definition */
#error "PN_VERSION is not defined"
#endif
/* columns of a compare: every protocol of src/protocol/list.h, and a mode alone ("umbra")
 * for each (a mode has at most as many names as rows) */
#define PN_CLI_MAX_MODES (2 * PN_PROTOCOL_COUNT)

/* ---- commands ---- */
typedef int (*pn_cmd_fn)(int argc, char **argv);

struct pn_command {
	const char *name;
	pn_cmd_fn fn;
	const char *summary;            /* one line, for `penumbra --help` */
	const struct pn_cmd_spec *spec; /* its options (opts.h), beside its code */
};

extern const struct pn_command pn_commands[];
extern const size_t pn_commands_len;
/* penumbra itself: --help, --version (penumbra(1)). */
extern const struct pn_cmd_spec pn_cli_spec;
extern const struct pn_cmd_spec pn_run_spec, pn_check_spec, pn_replay_spec, pn_compare_spec,
	pn_bench_spec, pn_crashtest_spec, pn_report_spec, pn_import_spec, pn_pgcrash_spec;
/* "0.1.0 (commit abcdef1)", ", dirty" before the ')' when the tree had changes, "commit
 * unknown" when it was built without git (cli/version.c, from the build's git at build
 * time). */
const char *pn_cli_version(void);
/* The provenance of every JSON output (cli/version.c): pn_cli_main() records its command
 * line; pn_cli_provenance_json() is {"schema", "version", "commit", "dirty", "command"};
 * pn_cli_json_stamped(root) returns a new object, "penumbra": that provenance, then root's
 * keys in their order (root is released). PN_CLI_JSON_SCHEMA grows when a key of any JSON
 * output changes meaning or goes away (docs/cli.md, "Provenance"). */
#define PN_CLI_JSON_SCHEMA 1
void pn_cli_set_command(int argc, char **argv);
json_t *pn_cli_provenance_json(void);
json_t *pn_cli_json_stamped(json_t *root);

/* The command called `name`, or NULL. */
const struct pn_command *pn_cli_find(const char *name);
/* The whole command line: argv[0] is the program, argv[1] the command. Returns the exit
 * status (CL1). */
int pn_cli_main(int argc, char **argv);

int pn_cmd_run(int argc, char **argv);
int pn_cmd_check(int argc, char **argv);
int pn_cmd_replay(int argc, char **argv);
int pn_cmd_compare(int argc, char **argv);
int pn_cmd_bench(int argc, char **argv);
int pn_cmd_crashtest(int argc, char **argv);
int pn_cmd_report(int argc, char **argv);
int pn_cmd_import(int argc, char **argv);
int pn_cmd_pgcrash(int argc, char **argv);
/* A trace pgcrash wrote (its first line "pgcrash: 1"), and its replay (cmd_pgcrash.c). */
bool pn_pgcrash_is_trace(const char *path);
int pn_pgcrash_replay(const char *trace);
/* import --out (cli/import_scenario.c): the scenario and trace of a WAL range; exit status. */
struct pn_xlr;
int pn_import_scenario(struct pn_xlr *r, pn_lsn from, pn_lsn to, const char *out);
/* The end-of-range rule of every import path (xlogread.h XR6), after a read loop: 0 when the
 * range was read whole (where PostgreSQL's reader stopped noted on stderr when note or
 * --to), else 2 with the reason and its LSN (or file and offset) on stderr. first: what
 * pn_xlr_begin returned (0: no record in the range). */
int pn_import_end(const struct pn_xlr *r, pn_lsn from, pn_lsn to, pn_lsn first, bool note);

/* ---- option values (each prints its own message and returns false / 2); the options
 * themselves are parsed by their spec, opts.h ---- */
/* Prints "penumbra CMD: MESSAGE; try 'penumbra --help'"; returns 2. */
int pn_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Values of options: an unsigned decimal integer, a size ("64MiB"), a duration ("250ms"). */
bool pn_cli_parse_uint(const char *cmd, const char *opt, const char *s, uint64_t *out);
bool pn_cli_parse_size(const char *cmd, const char *opt, const char *s, uint64_t *out);
bool pn_cli_parse_duration(const char *cmd, const char *opt, const char *s, uint64_t *out_ns);
bool pn_cli_parse_mode(const char *cmd, const char *s, enum pn_mode *out);
/* The names a mode option takes, comma-separated: the modes ("fpw, nofpw, ..."), the rows
 * of a mode with a policy ("umbra-prototype, ..."), every row's name and the modes alone, the
 * rows, or the modes alone ("umbra"); for messages, --help and completion. */
enum pn_cli_names {
	PN_CLI_MODES,
	PN_CLI_POLICIES,
	PN_CLI_MODES_POLICIES,
	PN_CLI_ROWS,
	PN_CLI_ALONE
};
void pn_cli_mode_names(enum pn_cli_names what, char *buf, size_t len);
/* A comma-separated list of distinct modes; returns how many, or -1. */
int pn_cli_parse_modes(const char *cmd, const char *list, enum pn_mode out[PN_CLI_MAX_MODES]);
/* A protocol as --mode and --modes name it: a row's name ("umbra-l3"), or a mode alone
 * ("umbra"), which keeps the scenario's row when it is of that mode and is else the mode's
 * first row (protocols.h pn_protocol_pick). */
struct pn_cli_mode {
	char name[32];
};
bool pn_cli_parse_mode_spec(const char *cmd, const char *s, struct pn_cli_mode *out);
int pn_cli_parse_mode_specs(const char *cmd, const char *list,
			    struct pn_cli_mode out[PN_CLI_MAX_MODES]);
/* Applies a mode override to a scenario: its row. */
void pn_cli_apply_mode(struct pn_scenario *sc, const struct pn_cli_mode *m);
/* Sets a plain mode's row (bench, crashtest): sc's own when of that mode. */
void pn_cli_set_mode(struct pn_scenario *sc, enum pn_mode m);

/* ---- scenarios and runs ---- */
/* Writes check's trace (model/trace.h pn_trace_write) and replays it: a trace that does not
 * load or reproduce r's violation ends the process, exit 3 (cli/trace_replay.c). */
struct pn_check_result;
bool pn_cli_trace_write(const struct pn_scenario *sc, const struct pn_check_result *r,
			const char *dir, char *path_out, size_t path_len, char *err,
			size_t err_len);
/* Loads a scenario; on error prints the loader's "FILE:LINE:COL: message" to stderr. */
bool pn_cli_load(const char *path, struct pn_scenario *sc);

/* One simulated run of sc as it stands (after overrides; m, may be NULL, is the mode spec
 * that was applied: it names the result, pn_cli_label). Returns sim.status. */
int pn_cli_simulate(const struct pn_scenario *sc, const struct pn_cli_mode *m,
		    struct pn_cli_result *out);
/* The same with the run's WAL written as PostgreSQL segment files in wal_dir (created if
 * absent; NULL: none), for `run` / `compare --wal-dir`. */
int pn_cli_simulate_wal(const struct pn_scenario *sc, const struct pn_cli_mode *m,
			struct pn_cli_result *out, const char *wal_dir);
/* The label of a run of sc under m (NULL m: sc as it stands): the name given in --mode(s)
 * for umbra with a policy named ("umbra-prototype"), "umbra-l3" / "umbra-l4" for umbra
 * under those policies however set, else the mode's name. */
void pn_cli_label(const struct pn_scenario *sc, const struct pn_cli_mode *m, char *out, size_t len);

/* ---- output ---- */
/* Every output file goes through these (src/base/files.h F1-F5: a temporary beside it,
 * renamed into place when every write succeeded, removed otherwise; never onto an input).
 * Opens an output file before the work starts ("-" = stdout); NULL (message printed:
 * "penumbra CMD: cannot write 'PATH': WHY") when it cannot be created or is one of the
 * command's inputs, so a long run does not end in an unwritable path. */
/* Whether dir is a directory that can be written, or can be created (its parent is one);
 * false with the reason in why. */
bool pn_cli_writable_dir(const char *dir, char *why, size_t why_len);
FILE *pn_cli_open_output(const char *cmd, const char *path);
/* Closes f (from pn_cli_open_output(path)) and puts it in place when `written` (the caller's
 * writes all succeeded) and the flush, fsync and close succeed; else removes it. Returns 0,
 * or 2 with the message printed, naming the file and the errno's text. */
int pn_cli_close_output(const char *cmd, FILE *f, const char *path, bool written);

#endif

/*
 * opts.h: the option spec of every command (cli layer). A command describes its options once,
 * as a table of struct pn_opt beside the struct they fill; from that table come
 *   - the parsing (pn_opts_parse: getopt_long underneath, every value checked as the spec
 *     says, the usage errors of cli.h CL2),
 *   - `penumbra CMD --help` (pn_opts_help),
 *   - the man page penumbra-CMD(1), docs/cli.md's option table and the bash and zsh
 *     completion (opts_doc.c: `penumbra help --man | --markdown | --completion`),
 * so that none of them can say what the parser does not do.
 *
 * Rules the spec keeps:
 *   OP1 One table per command, its rows in the order --help lists them; -h / --help is every
 *       command's and is not in the table.
 *   OP2 A value is checked where it is parsed, by its kind: an unsigned integer within
 *       [min, max], a size, a duration of at least min, on or off, or the row's own
 *       function; a bad one is exit 2 with one line naming the option and the value.
 *   OP3 A default is given once, as text (`def`): it is parsed like a value given on the line
 *       before the line is read, and --help, the man page and docs/cli.md print it.
 *   OP4 Text in the spec is unwrapped prose: a '\n' starts a paragraph, a paragraph that starts
 *       with "* " is a list item. Each output wraps it its own way. "{modes}", "{policies}",
 *       "{rows}" and "{alone}" in it stand for the modes, the rows of a mode with a policy,
 *       every row (src/protocol/list.h) and the modes that are no row's name
 *       (pn_cli_mode_names), never written out.
 *   OP5 A row may name an environment variable (`env`): where the line does not give the
 *       option and the variable is set and not empty, its value is parsed as OP2 parses a
 *       value given (a bad one is exit 2, the message naming the variable), over `def`; the
 *       row's help says so. --help is answered whatever the variable holds.
 */
#ifndef PN_OPTS_H
#define PN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pn_opt_kind {
	PN_OPT_FLAG,     /* no value: bool at `at` set to true */
	PN_OPT_STRING,   /* const char * at `at` */
	PN_OPT_UINT,     /* uint64_t at `at`, in [min, max] (max 0: no bound) */
	PN_OPT_SIZE,     /* uint64_t bytes at `at` ("64MiB") */
	PN_OPT_DURATION, /* uint64_t ns at `at` ("250ms"), at least `min` ns */
	PN_OPT_ONOFF,    /* "on" or "off": bool at `at` */
	PN_OPT_CUSTOM,   /* parse(): prints its own message, false on a bad value */
};

/* How a shell completes the value (opts_doc.c). */
enum pn_opt_complete {
	PN_COMPLETE_NONE,
	PN_COMPLETE_FILE,
	PN_COMPLETE_DIR,
	PN_COMPLETE_MODE,        /* one mode name (policies included) */
	PN_COMPLETE_MODES,       /* a comma-separated list of them */
	PN_COMPLETE_PLAIN_MODES, /* a list of modes, no policy */
	PN_COMPLETE_ONOFF,
};

struct pn_opt;
typedef bool (*pn_opt_parse_fn)(const char *cmd, const struct pn_opt *o, const char *value,
				void *into);

struct pn_opt {
	const char *name; /* the long name, without "--" */
	char short_name;  /* its one-letter form, or 0 */
	enum pn_opt_kind kind;
	const char *value;    /* the value's name in the help ("FILE", "N"); NULL for a flag */
	size_t at;            /* offset of the value in the command's options struct */
	size_t given;         /* PN_OPT_GIVEN(): a bool set when the option is given; 0: none */
	uint64_t min, max;    /* PN_OPT_UINT's bounds; PN_OPT_DURATION's least (0 or 1 ns) */
	const char *def;      /* OP3: the default as it would be given, or NULL */
	const char *env;      /* OP5: an environment variable whose value is the default, or NULL */
	const char *required; /* NULL, or the usage error when it is not given */
	enum pn_opt_complete complete;
	pn_opt_parse_fn parse; /* PN_OPT_CUSTOM */
	const char *help;      /* OP4 */
};

/* The `given` flag of a field: offset + 1, so that 0 means none. */
#define PN_OPT_GIVEN(type, field) (offsetof(type, field) + 1)

struct pn_cmd_spec {
	const char *name;         /* "run"; NULL for the top level (penumbra itself) */
	const char *args;         /* the arguments in the usage line: "S.yaml" */
	const char *args_help;    /* what they are, for the man page and docs */
	int args_min, args_max;   /* how many arguments (args_max -1: any number) */
	const char *args_missing; /* the usage error when there are fewer than args_min */
	const char *description;  /* OP4 */
	const struct pn_opt *opts;
	size_t nopts;
	const char *notes; /* OP4, after the options (may be NULL) */
	const char *exits; /* the exit statuses, one line of prose */
};

#define PN_OPTS_MAX 32   /* rows of one table */
#define PN_OPTS_WIDTH 80 /* the columns --help fills */

/*
 * Parses argv (argv[0] the command's name) by spec into `into`, defaults first (OP3).
 * Options may come before, between and after the arguments; "--" ends them. Returns -1 to go
 * on, with *args_at the index of the first argument (they are argv[*args_at..argc-1], their
 * count checked against args_min / args_max); 0 after --help (printed to stdout); 2 after a
 * usage error (printed, cli.h CL2).
 */
int pn_opts_parse(const struct pn_cmd_spec *spec, int argc, char **argv, void *into, int *args_at);
/* The usage line(s) that begin --help. */
void pn_opts_usage(FILE *out, const struct pn_cmd_spec *spec);
/* The command's --help, wrapped to PN_OPTS_WIDTH. */
void pn_opts_help(FILE *out, const struct pn_cmd_spec *spec);
/* The spec text `text` with {modes}, {policies}, {rows} and {alone} expanded, into buf. Returns buf. */
const char *pn_opts_expand(const char *text, char *buf, size_t len);
/* "--name VALUE" (or "-x, --name VALUE" when `with_short`) into buf. Returns buf. */
const char *pn_opts_label(const struct pn_opt *o, bool with_short, char *buf, size_t len);

/* opts_doc.c: the outputs made from every spec, for `penumbra help FORMAT`. */
/* The man page (troff, man(7)) of one command, or penumbra(1) when spec->name is NULL. */
void pn_opts_man(FILE *out, const struct pn_cmd_spec *spec);
/* A command's usage, options and exit statuses as Markdown, for docs/cli.md. */
void pn_opts_markdown(FILE *out, const struct pn_cmd_spec *spec);
/* The completion script of shell "bash" or "zsh" for every command; false for another. */
bool pn_opts_completion(FILE *out, const char *shell);
/* Word-wraps one paragraph to `width` columns, the cursor being at column `col`, each new
 * line indented by `indent`. Returns the column after the last word. */
int pn_opts_wrap(FILE *out, const char *text, int col, int indent, int width);

#endif

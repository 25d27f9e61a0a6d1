/*
 * opts.c: parsing a command line by its option spec, and the spec's --help (cli layer).
 * The spec and its rules OP1-OP4 are in opts.h; the man page, the Markdown table and the
 * shell completion made from the same spec are in opts_doc.c.
 *
 * getopt_long does the reading (abbreviations, "--name=value", "--", options after the
 * arguments); its table is built from the spec, each row's `val` being its short name or
 * 256 + its index, so that a returned value finds its row.
 */
#include "opts.h"
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define ROW_VAL_BASE 256
#define LABEL_WIDTH_MAX 20 /* a longer option name moves its text, not the column */

/* ---- parsing ---- */

struct table {
	struct option longs[PN_OPTS_MAX + 2];
	char shorts[2 * PN_OPTS_MAX + 8];
};

static bool takes_value(const struct pn_opt *o) { return o->kind != PN_OPT_FLAG; }

static int row_val(const struct pn_opt *o, size_t i)
{
	return o->short_name ? o->short_name : ROW_VAL_BASE + (int)i;
}

/* The getopt_long table of a spec: -h / --help first, then its rows. The top level stops
 * at its first argument, the command ('+'). */
static void table_build(const struct pn_cmd_spec *spec, struct table *t)
{
	size_t k = 0;

	PN_ASSERT(spec->nopts <= PN_OPTS_MAX);
	if (!spec->name)
		t->shorts[k++] = '+';
	t->shorts[k++] = ':';
	t->shorts[k++] = 'h';
	t->longs[0] = (struct option){"help", no_argument, NULL, 'h'};
	for (size_t i = 0; i < spec->nopts; i++) {
		const struct pn_opt *o = &spec->opts[i];
		PN_ASSERT(o->short_name != 'h' && strcmp(o->name, "help") != 0);
		t->longs[i + 1] = (struct option){o->name,
						  takes_value(o) ? required_argument : no_argument,
						  NULL, row_val(o, i)};
		if (o->short_name) {
			t->shorts[k++] = o->short_name;
			if (takes_value(o))
				t->shorts[k++] = ':';
		}
	}
	t->longs[spec->nopts + 1] = (struct option){NULL, 0, NULL, 0};
	t->shorts[k] = '\0';
	PN_ASSERT(k < sizeof t->shorts);
}

static const struct pn_opt *row_of(const struct pn_cmd_spec *spec, int c)
{
	for (size_t i = 0; i < spec->nopts; i++) {
		if (row_val(&spec->opts[i], i) == c)
			return &spec->opts[i];
	}
	return NULL;
}

/*
 * What getopt_long's '?' or ':' (`c`) was about. optopt is the short option's letter for an
 * unknown or value-less short option, the row's val for a long option given a value it does
 * not take, and 0 for an unknown long option; argv[optind - 1] is the element read.
 */
static int bad_option(const char *cmd, const struct table *t, int c, char **argv)
{
	const char *elem = optind > 0 ? argv[optind - 1] : "?";
	const char *eq = strchr(elem, '=');
	bool is_long = elem[0] == '-' && elem[1] == '-';
	int len = eq && is_long ? (int)(eq - elem) : (int)strlen(elem);
	bool known_short = optopt > 0 && optopt < 128 && strchr(t->shorts + 1, optopt) != NULL;

	if (c == ':')
		return pn_cli_usage_error(cmd, "option '%s' needs a value", elem);
	if (optopt > 0 && optopt < 128 && !known_short)
		return pn_cli_usage_error(cmd, "unknown option '-%c'", optopt);
	if (eq && is_long && optopt != 0)
		return pn_cli_usage_error(cmd, "option '%.*s' takes no value", len, elem);
	return pn_cli_usage_error(cmd, "unknown option '%.*s'", len, elem);
}

static bool uint_in_range(const char *cmd, const char *opt, const struct pn_opt *o, const char *s,
			  uint64_t v)
{
	if (v >= o->min && (o->max == 0 || v <= o->max))
		return true;
	if (o->max == 0)
		pn_cli_usage_error(cmd, "%s takes %llu or more, not %s", opt,
				   (unsigned long long)o->min, s);
	else
		pn_cli_usage_error(cmd, "%s takes %llu %s %llu, not %s", opt,
				   (unsigned long long)o->min, o->max == o->min + 1 ? "or" : "to",
				   (unsigned long long)o->max, s);
	return false;
}

/* OP2: one value, checked by its kind, stored at the row's offset; `opt` names where it came
 * from in a message ("--jobs", or OP5's variable). */
static bool apply_from(const char *cmd, const struct pn_opt *o, const char *opt, const char *s,
		       void *into)
{
	void *at = (char *)into + o->at;
	uint64_t *u = at;

	switch (o->kind) {
	case PN_OPT_FLAG: *(bool *)at = true; return true;
	case PN_OPT_STRING: *(const char **)at = s; return true;
	case PN_OPT_UINT:
		return pn_cli_parse_uint(cmd, opt, s, u) && uint_in_range(cmd, opt, o, s, *u);
	case PN_OPT_SIZE: return pn_cli_parse_size(cmd, opt, s, u);
	case PN_OPT_DURATION:
		if (!pn_cli_parse_duration(cmd, opt, s, u))
			return false;
		PN_ASSERT(o->min <= 1); /* the message below says so */
		if (*u >= o->min)
			return true;
		pn_cli_usage_error(cmd, "%s takes more than 0, not %s", opt, s);
		return false;
	case PN_OPT_ONOFF:
		if (strcmp(s, "on") == 0 || strcmp(s, "off") == 0) {
			*(bool *)at = strcmp(s, "on") == 0;
			return true;
		}
		pn_cli_usage_error(cmd, "%s takes on or off, not %s", opt, s);
		return false;
	case PN_OPT_CUSTOM: return o->parse(cmd, o, s, into);
	}
	PN_ASSERT(!"unknown option kind");
	return false;
}

static bool apply(const char *cmd, const struct pn_opt *o, const char *s, void *into)
{
	char opt[48];
	snprintf(opt, sizeof opt, "--%s", o->name);
	return apply_from(cmd, o, opt, s, into);
}

static void mark_given(const struct pn_opt *o, void *into)
{
	if (o->given)
		*(bool *)((char *)into + o->given - 1) = true;
}

/* OP3: every default, parsed as if given (a default that does not parse is the spec's bug). */
static void apply_defaults(const struct pn_cmd_spec *spec, void *into)
{
	for (size_t i = 0; i < spec->nopts; i++) {
		const struct pn_opt *o = &spec->opts[i];
		if (o->def) {
			bool ok = apply(spec->name, o, o->def, into);
			PN_ASSERT(ok);
		}
	}
}

/* After the line: the required options and the count of arguments. */
static int check_line(const struct pn_cmd_spec *spec, int argc, char **argv, const bool *seen)
{
	int n = argc - optind;

	if (n < spec->args_min)
		return pn_cli_usage_error(spec->name, "%s", spec->args_missing);
	if (spec->args_max >= 0 && n > spec->args_max)
		return pn_cli_usage_error(spec->name, "unexpected argument '%s'",
					  argv[optind + spec->args_max]);
	for (size_t i = 0; i < spec->nopts; i++) {
		if (spec->opts[i].required && !seen[i])
			return pn_cli_usage_error(spec->name, "%s", spec->opts[i].required);
	}
	return -1;
}

int pn_opts_parse(const struct pn_cmd_spec *spec, int argc, char **argv, void *into, int *args_at)
{
	struct table t;
	bool seen[PN_OPTS_MAX] = {false};
	int c, rc;

	table_build(spec, &t);
	apply_defaults(spec, into);
	optind = 0; /* glibc: 0 also resets its internal state (a half-read "-abc") */
	opterr = 0; /* the messages are ours (cli.h CL2) */
	while ((c = getopt_long(argc, argv, t.shorts, t.longs, NULL)) != -1) {
		const struct pn_opt *o = c == 'h' ? NULL : row_of(spec, c);
		if (c == 'h') {
			pn_opts_help(stdout, spec);
			return 0;
		}
		if (!o)
			return bad_option(spec->name, &t, c, argv);
		if (!apply(spec->name, o, optarg, into))
			return 2;
		mark_given(o, into);
		seen[o - spec->opts] = true;
	}
	for (size_t i = 0; i < spec->nopts; i++) { /* OP5: after --help, under the line */
		const struct pn_opt *o = &spec->opts[i];
		const char *v = o->env && !seen[i] ? getenv(o->env) : NULL;
		if (v && *v && !apply_from(spec->name, o, o->env, v, into))
			return 2;
	}
	rc = check_line(spec, argc, argv, seen);
	*args_at = optind;
	return rc;
}

/* ---- --help ---- */

int pn_opts_wrap(FILE *out, const char *text, int col, int indent, int width)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " ");
		if (col > indent && col + 1 + (int)word > width) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, word, out);
		col += (int)word;
		p += word;
		p += strspn(p, " ");
	}
	return col;
}

const char *pn_opts_expand(const char *text, char *buf, size_t len)
{
	static const struct {
		const char *key;
		enum pn_cli_names what;
	} keys[] = {{"{modes}", PN_CLI_MODES},
		    {"{policies}", PN_CLI_POLICIES},
		    {"{rows}", PN_CLI_ROWS},
		    {"{alone}", PN_CLI_ALONE}};
	size_t at = 0;

	buf[0] = '\0';
	while (*text && at + 1 < len) {
		size_t k = 0;
		while (k < PN_ARRAY_LEN(keys) && strncmp(text, keys[k].key, strlen(keys[k].key)))
			k++;
		if (k == PN_ARRAY_LEN(keys)) {
			buf[at++] = *text++;
			buf[at] = '\0';
			continue;
		}
		pn_cli_mode_names(keys[k].what, buf + at, len - at);
		at += strlen(buf + at);
		text += strlen(keys[k].key);
	}
	PN_ASSERT(at + 1 < len); /* the buffer holds the whole text */
	return buf;
}

const char *pn_opts_label(const struct pn_opt *o, bool with_short, char *buf, size_t len)
{
	int n = 0;

	if (with_short && o->short_name)
		n = snprintf(buf, len, "-%c, ", o->short_name);
	snprintf(buf + n, len - (size_t)n, "--%s%s%s", o->name, o->value ? " " : "",
		 o->value ? o->value : "");
	return buf;
}

/* OP4 text: each '\n'-separated paragraph wrapped at `indent`; "* " items indented twice. */
static void help_text(FILE *out, const char *text, int indent)
{
	char buf[4096], *line;

	pn_opts_expand(text, buf, sizeof buf);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		bool item = strncmp(line, "* ", 2) == 0;
		fprintf(out, "%*s", indent + (item ? 2 : 0), "");
		pn_opts_wrap(out, item ? line + 2 : line, indent + (item ? 2 : 0),
			     indent + (item ? 6 : 0), PN_OPTS_WIDTH);
		fputc('\n', out);
	}
}

/* "usage: penumbra CMD ARGS [--opt V] ...", wrapped under its arguments. */
void pn_opts_usage(FILE *out, const struct pn_cmd_spec *spec)
{
	char word[80], label[64];
	int col, indent;

	if (!spec->name) {
		fprintf(out,
			"usage: penumbra %s\n       penumbra --help | --version | help "
			"[<command>]\n",
			spec->args);
		return;
	}
	col = fprintf(out, "usage: penumbra %s", spec->name);
	indent = col + 1;
	if (spec->args[0]) { /* a command without arguments: one space before its options */
		fputc(' ', out);
		col = pn_opts_wrap(out, spec->args, indent, indent, PN_OPTS_WIDTH);
	}
	for (size_t i = 0; i < spec->nopts; i++) {
		const struct pn_opt *o = &spec->opts[i];
		if (o->short_name)
			snprintf(label, sizeof label, "-%c%s%s", o->short_name, o->value ? " " : "",
				 o->value ? o->value : "");
		else
			pn_opts_label(o, false, label, sizeof label);
		snprintf(word, sizeof word, o->required ? "%s" : "[%s]", label);
		for (char *sp = word; (sp = strchr(sp, ' ')); sp++)
			*sp = '\x01'; /* an option and its value stay on one line */
		char *w = word;
		if (col + 1 + (int)strlen(w) > PN_OPTS_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else {
			fputc(' ', out);
			col++;
		}
		for (; *w; w++)
			fputc(*w == '\x01' ? ' ' : *w, out);
		col += (int)strlen(word);
	}
	fputc('\n', out);
}

static void option_lines(FILE *out, const struct pn_cmd_spec *spec)
{
	static const struct pn_opt help = {.name = "help",
					   .short_name = 'h',
					   .help = "show this help"};
	char label[64], text[1024];
	int width = (int)strlen("-h, --help");

	for (size_t i = 0; i < spec->nopts; i++) {
		int w = (int)strlen(pn_opts_label(&spec->opts[i], true, label, sizeof label));
		width = PN_MAX(width, PN_MIN(w, LABEL_WIDTH_MAX));
	}
	fputs("\noptions:\n", out);
	for (size_t i = 0; i <= spec->nopts; i++) {
		const struct pn_opt *o = i < spec->nopts ? &spec->opts[i] : &help;
		int col = fprintf(out, "  %s", pn_opts_label(o, true, label, sizeof label));
		if (col + 2 <= width + 4) {
			fprintf(out, "%*s", width + 4 - col, "");
			col = width + 4;
		} else {
			col += fprintf(out, " "); /* a long name: its text follows it */
		}
		pn_opts_expand(o->help, text, sizeof text);
		if (o->def) {
			size_t n = strlen(text);
			snprintf(text + n, sizeof text - n, " (default %s)", o->def);
		}
		pn_opts_wrap(out, text, col, width + 4, PN_OPTS_WIDTH);
		fputc('\n', out);
	}
}

static void command_lines(FILE *out)
{
	fputs("\ncommands:\n", out);
	for (size_t i = 0; i < pn_commands_len; i++)
		fprintf(out, "  %-10s %s\n", pn_commands[i].name, pn_commands[i].summary);
	fprintf(out, "  %-10s %s\n", "help", "this help, or a command's: penumbra help <command>");
}

void pn_opts_help(FILE *out, const struct pn_cmd_spec *spec)
{
	pn_opts_usage(out, spec);
	fputc('\n', out);
	help_text(out, spec->description, 0);
	if (!spec->name)
		command_lines(out);
	option_lines(out, spec);
	if (spec->notes) {
		fputc('\n', out);
		help_text(out, spec->notes, 0);
	}
	fputc('\n', out);
	pn_opts_wrap(out, spec->exits, fprintf(out, "exit status:"), 0, PN_OPTS_WIDTH);
	fputc('\n', out);
}

/*
 * script_check.c: a user's workload checked before initdb (pgcrash layer; workload.c reads
 * the forms, docs/pgcrash.md section 1 says them). What pgbench 15 or the server would refuse
 * only after the cluster is made and the base image taken is refused here first, with
 * FILE:LINE:COL (1-based; a column counts bytes).
 *
 * Rules:
 *   SC1 SQL text: every quote ('...', E'...', "...", $tag$...$tag$) and block comment is
 *       closed; in an SQL workload the setup's are closed before the '-- transactions' line,
 *       and each transaction line closes its own and balances its parentheses (one psql -c).
 *   SC2 A pgbench script as pgbench 15 parses it: SQL commands end at ';' outside quotes and
 *       parentheses, or at a backslash; a meta-command is one line (a backslash before the
 *       newline continues it); the meta-commands are pgbench 15's: set, setshell, shell,
 *       sleep, if, elif, else, endif, gset, aset; startpipeline and endpipeline are refused
 *       (pgcrash runs pgbench with the simple query protocol, where pipelines fail); \if
 *       blocks close; \gset and \aset follow an SQL command; at least one command.
 *   SC3 Variables: :name in SQL (outside quotes; '::' is a cast) and in meta-command
 *       arguments and expressions must be set by an earlier \set or \setshell, or be one of
 *       pgbench's own (scale, client_id, random_seed, default_seed). After a \gset or \aset the
 *       query's columns define names that only the server knows: later uses are not checked.
 *   SC4 Expressions (\set, \if, \elif): a function is one of pgbench 15's, a bare word one of
 *       its keywords, parentheses balance, no character outside its operators.
 */
#define _GNU_SOURCE
#include "pgcrash.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define VARS_MAX 256u
#define VAR_BYTES 64u
#define IF_DEPTH_MAX 64u
#define ARGS_MAX 16u

struct chk {
	const char *path, *t; /* the file and its text */
	char *why;
	size_t len;
	char vars[VARS_MAX][VAR_BYTES]; /* SC3: defined so far */
	uint32_t nvars;
	bool vars_open; /* SC3: after \gset or \aset */
};

/* False, with why = "path:LINE:COL: message" for the byte at off. */
static bool fail_at(const struct chk *c, size_t off, const char *fmt, ...)
{
	uint32_t line = 1, col = 1;
	for (size_t i = 0; i < off && c->t[i]; i++, col++)
		if (c->t[i] == '\n') {
			line++;
			col = 0;
		}
	int n = snprintf(c->why, c->len, "%s:%u:%u: ", c->path, line, col);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->len)
		vsnprintf(c->why + n, c->len - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

static bool ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_' || (ch & 0x80); }

static bool ident_start(char ch) { return isalpha((unsigned char)ch) || ch == '_' || (ch & 0x80); }

/* SC1: if t[i] opens a quote or comment, the offset after its end (SIZE_MAX when it does not
 * close before end); i itself when it opens none. */
static size_t skip_quoted(const char *t, size_t i, size_t end)
{
	if (t[i] == '-' && i + 1 < end && t[i + 1] == '-') {
		const char *nl = memchr(t + i, '\n', end - i);
		return nl ? (size_t)(nl - t) : end;
	}
	if (t[i] == '/' && i + 1 < end && t[i + 1] == '*') {
		uint32_t depth = 0;
		for (size_t j = i; j + 1 < end; j++)
			if (t[j] == '/' && t[j + 1] == '*')
				depth++, j++;
			else if (t[j] == '*' && t[j + 1] == '/' && --depth == 0)
				return j + 2;
		return SIZE_MAX;
	}
	bool after_ident = i > 0 && ident_char(t[i - 1]);
	if (t[i] == '\'' || t[i] == '"') {
		bool escapes = t[i] == '\'' && i > 0 && (t[i - 1] == 'E' || t[i - 1] == 'e') &&
			       !(i > 1 && ident_char(t[i - 2]));
		for (size_t j = i + 1; j < end; j++)
			if (escapes && t[j] == '\\')
				j++;
			else if (t[j] == t[i] && j + 1 < end && t[j + 1] == t[i])
				j++;
			else if (t[j] == t[i])
				return j + 1;
		return SIZE_MAX;
	}
	if (t[i] != '$' || after_ident)
		return i;
	size_t k = i + 1;
	if (k < end && ident_start(t[k]) && !(t[k] & 0x80))
		while (k < end && ident_char(t[k]) && t[k] != '$')
			k++;
	if (k >= end || t[k] != '$')
		return i; /* $1, a parameter */
	size_t tag = k + 1 - i;
	for (size_t j = k + 1; j + tag <= end; j++)
		if (memcmp(t + j, t + i, tag) == 0)
			return j + tag;
	return SIZE_MAX;
}

/* SC3: whether the variable name (n bytes) at t is defined. */
static bool defined(const struct chk *c, const char *name, size_t n)
{
	static const char *const own[] = {"scale", "client_id", "random_seed", "default_seed"};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strlen(own[i]) == n && memcmp(own[i], name, n) == 0)
			return true;
	for (uint32_t i = 0; i < c->nvars; i++)
		if (strlen(c->vars[i]) == n && memcmp(c->vars[i], name, n) == 0)
			return true;
	return c->vars_open;
}

/* SC3: the reference ":name" at t[i] (t[i] == ':'), its end in *next; false if undefined. */
static bool var_ref(const struct chk *c, size_t i, size_t *next)
{
	size_t j = i + 1;
	while (ident_char(c->t[j]))
		j++;
	*next = j;
	if (j == i + 1 || defined(c, c->t + i + 1, j - i - 1))
		return true;
	return fail_at(c, i, "undefined variable ':%.*s' (set it with \\set before its use)",
		       (int)(j - i - 1), c->t + i + 1);
}

/* SC1: the SQL text t[i, end) closes its quotes and comments; with parens, its parentheses
 * balance too. */
static bool sql_closed(const struct chk *c, size_t i, size_t end, bool parens)
{
	size_t open[IF_DEPTH_MAX];
	uint32_t depth = 0;
	for (; i < end; i++) {
		size_t q = skip_quoted(c->t, i, end);
		if (q == SIZE_MAX)
			return fail_at(c, i, "%c not closed%s", c->t[i],
				       parens ? " on its line (a transaction is one line)" : "");
		if (q != i) {
			i = q - 1;
		} else if (parens && c->t[i] == '(') {
			open[depth < IF_DEPTH_MAX ? depth : IF_DEPTH_MAX - 1] = i;
			depth++;
		} else if (parens && c->t[i] == ')' && depth-- == 0) {
			return fail_at(c, i, "')' without its '('");
		}
	}
	if (depth > 0)
		return fail_at(c, open[depth <= IF_DEPTH_MAX ? depth - 1 : IF_DEPTH_MAX - 1],
			       "'(' not closed on its line (a transaction is one line)");
	return true;
}

bool pn_pgc_sql_check(const char *path, const char *text, char *why, size_t len)
{
	struct chk c = {.path = path, .t = text, .why = why, .len = len};
	size_t n = strlen(text), at = 0;
	bool marker = false;
	for (size_t i = 0; i < n && !marker;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - text) : n;
		marker = strncmp(text + i, "-- transactions", 15) == 0 &&
			 strspn(text + i + 15, " \t\r") == e - i - 15;
		at = marker ? i : e + 1;
		i = e + 1;
	}
	if (!sql_closed(&c, 0, marker ? at : n, false))
		return false;
	for (size_t i = at; marker && i < n;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - text) : n;
		if (i > at && !sql_closed(&c, i, e, true))
			return false;
		i = e + 1;
	}
	return true;
}

/* SC4: the expression t[i, end) of \set, \if or \elif. */
static bool expr_ok(const struct chk *c, size_t i, size_t end)
{
	static const char *const funcs[] = {"abs",
					    "debug",
					    "double",
					    "exp",
					    "greatest",
					    "hash",
					    "hash_fnv1a",
					    "hash_murmur2",
					    "int",
					    "least",
					    "ln",
					    "mod",
					    "permute",
					    "pi",
					    "pow",
					    "power",
					    "random",
					    "random_exponential",
					    "random_gaussian",
					    "random_zipfian",
					    "sqrt"};
	static const char *const words[] = {"true", "false", "null",   "and",     "or",
					    "not",  "is",    "isnull", "notnull", "case",
					    "when", "then",  "else",   "end"};
	size_t open = SIZE_MAX, start = i;
	uint32_t depth = 0;
	for (size_t j; i < end; i = j) {
		j = i + 1;
		char ch = c->t[i];
		if (ch == ':' && !var_ref(c, i, &j))
			return false;
		if (ch == '\\' && c->t[j] == '\n')
			j++;
		if (ch == ':' || ch == '\\' || isspace((unsigned char)ch))
			continue;
		if (isdigit((unsigned char)ch) || (ch == '.' && isdigit((unsigned char)c->t[j]))) {
			while (j < end && (isalnum((unsigned char)c->t[j]) || c->t[j] == '.' ||
					   ((c->t[j] == '+' || c->t[j] == '-') &&
					    (c->t[j - 1] == 'e' || c->t[j - 1] == 'E'))))
				j++;
			continue;
		}
		if (ident_start(ch)) {
			while (j < end && ident_char(c->t[j]))
				j++;
			size_t k = j + strspn(c->t + j, " \t");
			bool call = k < end && c->t[k] == '(';
			const char *const *list = call ? funcs : words;
			size_t nlist = call ? sizeof(funcs) / sizeof(funcs[0])
					    : sizeof(words) / sizeof(words[0]);
			bool known = false;
			for (size_t w = 0; w < nlist && !known; w++)
				known = strlen(list[w]) == j - i &&
					strncasecmp(list[w], c->t + i, j - i) == 0;
			if (!known)
				return fail_at(c, i, "%s '%.*s' is not pgbench 15's",
					       call ? "function" : "word", (int)(j - i), c->t + i);
			continue;
		}
		if (ch == '(' && depth++ == 0)
			open = i;
		else if (ch == ')' && depth-- == 0)
			return fail_at(c, i, "')' without its '('");
		else if (!strchr("+-*/%(),=<>!&|#~", ch))
			return fail_at(c, i, "'%c' is not in pgbench's expressions", ch);
	}
	if (depth > 0)
		return fail_at(c, open, "'(' not closed");
	if (start + strspn(c->t + start, " \t") >= end)
		return fail_at(c, start, "an expression is missing");
	return true;
}

/* A meta-command's arguments: words split at blanks (a continued line is a blank). */
struct args {
	size_t at[ARGS_MAX], end[ARGS_MAX];
	uint32_t n;
};

static void split(const char *t, size_t i, size_t end, struct args *a)
{
	a->n = 0;
	while (i < end) {
		while (i < end &&
		       (isspace((unsigned char)t[i]) || (t[i] == '\\' && t[i + 1] == '\n')))
			i++;
		if (i >= end)
			break;
		size_t s = i;
		while (i < end && !isspace((unsigned char)t[i]) &&
		       !(t[i] == '\\' && t[i + 1] == '\n'))
			i++;
		if (a->n < ARGS_MAX) {
			a->at[a->n] = s;
			a->end[a->n++] = i;
		}
	}
}

static bool word_is(const struct chk *c, const struct args *a, uint32_t k, const char *s)
{
	return a->end[k] - a->at[k] == strlen(s) && memcmp(c->t + a->at[k], s, strlen(s)) == 0;
}

/* SC3: the words from the k-th on: a word ":name" is a variable. */
static bool words_ok(const struct chk *c, const struct args *a, uint32_t k)
{
	size_t next;
	for (; k < a->n; k++)
		if (c->t[a->at[k]] == ':' && !var_ref(c, a->at[k], &next))
			return false;
	return true;
}

/* SC3: name (the word a->at[0]) defined from here on. */
static bool define(struct chk *c, const struct args *a)
{
	size_t n = a->end[0] - a->at[0];
	const char *name = c->t + a->at[0];
	bool valid = ident_start(name[0]);
	for (size_t i = 1; i < n; i++)
		valid = valid && ident_char(name[i]);
	if (!valid || n >= VAR_BYTES)
		return fail_at(c, a->at[0], "'%.*s' is not a variable name", (int)n, name);
	if (c->nvars < VARS_MAX)
		snprintf(c->vars[c->nvars++], VAR_BYTES, "%.*s", (int)n, name);
	return true;
}

struct block {
	size_t at[IF_DEPTH_MAX]; /* the open \if's offsets */
	bool seen_else[IF_DEPTH_MAX];
	uint32_t depth;
	bool after_sql; /* the last command was SQL */
};

/* SC2: the meta-command name (n bytes) at i, its arguments up to end. */
static bool meta_ok(struct chk *c, struct block *b, size_t i, size_t n, size_t end)
{
	const char *name = c->t + i + 1;
	struct args a;
	split(c->t, i + 1 + n, end, &a);
	bool after_sql = b->after_sql;
	b->after_sql = false;
#define IS(s) (n == strlen(s) && strncasecmp(name, s, n) == 0)
	if (IS("set") || IS("setshell"))
		return (a.n >= 2 ||
			fail_at(c, i, "\\%.*s needs a variable and a value", (int)n, name)) &&
		       (IS("set") ? expr_ok(c, a.at[1], end) : words_ok(c, &a, 1)) && define(c, &a);
	if (IS("shell"))
		return (a.n >= 1 || fail_at(c, i, "\\shell needs a command")) && words_ok(c, &a, 0);
	if (IS("sleep")) {
		bool unit = a.n < 2 || word_is(c, &a, 1, "us") || word_is(c, &a, 1, "ms") ||
			    word_is(c, &a, 1, "s");
		if (a.n < 1 || a.n > 2 || !unit)
			return fail_at(c, i, "\\sleep takes a number or :variable and us, ms or s");
		return words_ok(c, &a, 0);
	}
	if (IS("if") || IS("elif")) {
		if (IS("elif") && (b->depth == 0 || b->seen_else[b->depth - 1]))
			return fail_at(c, i, "\\elif without its \\if, or after \\else");
		if (IS("if") && b->depth == IF_DEPTH_MAX)
			return fail_at(c, i, "\\if nested deeper than %u", IF_DEPTH_MAX);
		if (IS("if")) {
			b->seen_else[b->depth] = false;
			b->at[b->depth++] = i;
		}
		return expr_ok(c, i + 1 + n, end);
	}
	if (IS("else") || IS("endif")) {
		if (b->depth == 0 || (IS("else") && b->seen_else[b->depth - 1]))
			return fail_at(c, i, "\\%.*s without its \\if", (int)n, name);
		if (a.n > 0)
			return fail_at(c, a.at[0], "\\%.*s takes no argument", (int)n, name);
		if (IS("else"))
			b->seen_else[b->depth - 1] = true;
		else
			b->depth--;
		return true;
	}
	if (IS("gset") || IS("aset")) {
		if (!after_sql)
			return fail_at(c, i, "\\%.*s must follow an SQL command", (int)n, name);
		c->vars_open = true;
		return a.n <= 1 ||
		       fail_at(c, a.at[1], "\\%.*s takes one prefix at most", (int)n, name);
	}
	if (IS("startpipeline") || IS("endpipeline"))
		return fail_at(c, i,
			       "\\%.*s: pgcrash runs pgbench's simple query protocol, where "
			       "pipelines fail",
			       (int)n, name);
#undef IS
	return fail_at(c, i, "invalid command \\%.*s (not one of pgbench 15's meta-commands)",
		       (int)n, name);
}

/* SC2, SC3: the SQL command from i: its end (after ';', or at a backslash or the text's end)
 * in *next; false with why. */
static bool sql_ok(const struct chk *c, size_t i, size_t *next)
{
	size_t n = strlen(c->t), open = 0;
	uint32_t depth = 0;
	for (; i < n; i++) {
		size_t q = skip_quoted(c->t, i, n);
		if (q == SIZE_MAX)
			return fail_at(c, i, "%c not closed", c->t[i]);
		if (q != i) {
			i = q - 1;
		} else if (c->t[i] == ':' && c->t[i + 1] == ':') {
			i += strspn(c->t + i, ":") - 1;
		} else if (c->t[i] == ':' && ident_start(c->t[i + 1])) {
			size_t j;
			if (!var_ref(c, i, &j))
				return false;
			i = j - 1;
		} else if (c->t[i] == '(' && depth++ == 0) {
			open = i;
		} else if (c->t[i] == ')' && depth > 0) {
			depth--;
		} else if ((c->t[i] == ';' && depth == 0) || c->t[i] == '\\') {
			break;
		}
	}
	if (depth > 0 && i >= n)
		return fail_at(c, open, "'(' not closed");
	*next = i < n && c->t[i] == ';' ? i + 1 : i;
	return true;
}

bool pn_pgc_pgbench_check(const char *path, const char *text, char *why, size_t len)
{
	struct chk c = {.path = path, .t = text, .why = why, .len = len};
	struct block b = {0};
	uint32_t commands = 0;
	for (size_t i = 0, next = 0; text[i]; i = next) {
		size_t q = skip_quoted(text, i, strlen(text));
		bool comment = q != i && (text[i] == '-' || text[i] == '/');
		if (comment && q == SIZE_MAX)
			return fail_at(&c, i, "/* not closed");
		if (isspace((unsigned char)text[i]) || comment) {
			next = comment ? q : i + 1;
			continue;
		}
		commands++;
		if (text[i] != '\\') {
			if (!sql_ok(&c, i, &next))
				return false;
			b.after_sql = true;
			continue;
		}
		size_t n = 0, end = i + 1;
		while (isalpha((unsigned char)text[i + 1 + n]))
			n++;
		while (text[end] && !(text[end] == '\n' && text[end - 1] != '\\'))
			end++;
		if (!meta_ok(&c, &b, i, n, end))
			return false;
		next = end;
	}
	if (b.depth > 0)
		return fail_at(&c, b.at[b.depth - 1], "\\if without its \\endif");
	if (commands == 0)
		return fail_at(&c, 0, "no command in it (pgbench refuses an empty script)");
	return true;
}

/*
 * cli_fixture.h: what the command line's two suites share (test_cli.c: usage, help, options,
 * what is refused before a run; test_cli_runs.c: run, compare and check outputs): the
 * scenarios main() writes to a temporary directory, pn_cli_main called in-process with
 * stdout and stderr captured to files, the JSON read back. Label: unit.
 */
#ifndef PN_TEST_CLI_FIXTURE_H
#define PN_TEST_CLI_FIXTURE_H

#include "cli.h"
#include "cli_contract.h"
#include "progress.h"

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

static __attribute__((unused))
const char tiny_scenario[] = "name: t\nseed: 3\nstorage: {pages: 64, buffers: 8}\n"
			     "workload: {kind: random, transactions: 200, clients: 2}\n";

/* Commits acknowledged before their WAL is durable: a violation of no page (R2). */
static __attribute__((unused))
const char no_page_scenario[] = "name: np\nseed: 3\nstorage: {pages: 64, buffers: 8}\n"
				"protocol: {mutations: [ack_before_flush]}\n"
				"workload: {kind: random, transactions: 200, clients: 2}\n";

/* The loader accepts it (umbra l4 runs its epoch step); the engine refuses it in fpw or
 * nofpw (the step needs l3 or l4), at the step's position. */
static __attribute__((unused)) const char refused_scenario[] =
	"name: rf\nseed: 3\nstorage: {pages: 8, buffers: 4}\nprotocol: {mode: umbra, policy: l4}\n"
	"workload:\n  kind: script\n  script:\n    - {op: checkpoint}\n"
	"    - {op: checkpoint_epoch}\n    - {op: update, page: 4}\n    - {op: commit}\n"
	"    - {op: checkpoint_end}\n";

/* The same with a deliberate bug (protocol.md section 5): pages written before their WAL. */
static __attribute__((unused))
const char mutated_scenario[] = "name: m\nseed: 3\nstorage: {pages: 64, buffers: 8}\n"
				"protocol: {mutations: [no_wal_before_data]}\n"
				"workload: {kind: random, transactions: 200, clients: 2}\n";

/* Two or more writes that can tear at some crash points: crash.torn_writes 2 adds states. */
static __attribute__((unused)) const char torn_scenario[] =
	"name: tw\nseed: 7\nprotocol: {mode: fpw}\n"
	"storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}\n"
	"checkpoint: {interval: 0s, every_transactions: 3, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 3, pages_per_transaction: 2}\n"
	"crash: {points: all, max_unsynced: 4, tear: sectors}\n";

static __attribute__((unused)) char tmp_dir[256];
static __attribute__((unused)) char scenario[320], mutated[320], no_page[320], refused[320],
	torn[320];

struct capture {
	int status;
	char out[OUT_LEN];
	char err[OUT_LEN];
};

static __attribute__((unused)) struct capture cap;

static inline void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_msg(f != NULL, "cannot read %s", path);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static inline void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp_dir, name);
}

/* Redirects fd to a new file at path; returns a copy of the old fd. */
static inline int redirect(int fd, const char *path)
{
	int saved = dup(fd), f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert(saved >= 0 && f >= 0);
	dup2(f, fd);
	close(f);
	return saved;
}

static inline void restore(int fd, int saved)
{
	dup2(saved, fd);
	close(saved);
}

/* Runs `penumbra ARGS...` (NULL-terminated) in-process into cap; returns its status. */
static inline int cli(const char *first, ...)
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

static inline json_t *load_json_file(const char *path)
{
	json_error_t error;
	json_t *root = json_load_file(path, 0, &error);

	ck_assert_msg(root != NULL, "%s:%d: %s", path, error.line, error.text);
	return root;
}

static inline json_t *results_of(json_t *root, size_t n)
{
	json_t *results = json_object_get(root, "results");

	ck_assert(json_is_array(results));
	ck_assert_uint_eq(json_array_size(results), n);
	return results;
}

/* A usage error: status 2, one line on stderr naming `what`, ending with the hint. */
static inline void assert_usage_error(const char *what)
{
	ck_assert_int_eq(cap.status, 2);
	ck_assert_msg(strstr(cap.err, what) != NULL, "stderr does not name '%s': %s", what,
		      cap.err);
	ck_assert_msg(strstr(cap.err, "try 'penumbra --help'\n") != NULL, "no hint: %s", cap.err);
	ck_assert_msg(strchr(cap.err, '\n') == cap.err + strlen(cap.err) - 1, "not one line: %s",
		      cap.err);
	ck_assert_str_eq(cap.out, "");
}

/* The JSON at path without its "penumbra" key (asserted first, an object), dumped into buf. */
static inline void without_provenance(const char *path, char *buf, size_t len)
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
static inline void assert_provenance(const char *path, const char *const *argv, size_t argc)
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

static inline void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static inline void make_fixture(void)
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

static inline void remove_fixture(void)
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

/* Runs a suite over the scenarios of make_fixture(), removed after; the exit status. */
static inline int run_with_fixture(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	int failed;

	make_fixture();
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_fixture();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif

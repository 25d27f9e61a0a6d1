/*
 * version.c: pn_cli_version() (cli layer): the version of the CMake project and the git
 * commit the build was made from. Its generated header, written into the build tree by
 * scripts/version.cmake at every build, is rewritten only when the commit or its "dirty"
 * changed, so that only this file is compiled again.
 *
 * And the provenance every JSON output carries (docs/cli.md, "Provenance"): its first key,
 *   "penumbra": {"schema": PN_CLI_JSON_SCHEMA, "version": "0.1.0", "commit": "abcdef1" or
 *                null, "dirty": bool, "command": ["penumbra", ARG...]}
 * the command line as pn_cli_main() was given it, its program name written "penumbra" (a
 * build's path is not the user's command; an argument that is not UTF-8 is null). Nothing in it is a date: two runs of one command
 * line write the same bytes.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "pn_version.h" /* generated: PN_GIT_COMMIT */

/* The command line as given: a copy of argv's pointers, taken before getopt_long permutes
 * argv (the strings are the caller's and outlive the command); grown, never freed (still
 * reachable: one per process). */
static struct {
	int argc;
	const char **argv;
	size_t cap;
} command;

const char *pn_cli_version(void) { return PN_VERSION " (commit " PN_GIT_COMMIT ")"; }

void pn_cli_set_command(int argc, char **argv)
{
	PN_ASSERT(argc >= 0 && (argc == 0 || argv != NULL));
	if ((size_t)argc > command.cap) {
		command.argv = realloc(command.argv, (size_t)argc * sizeof(*command.argv));
		PN_ASSERT(command.argv != NULL);
		command.cap = (size_t)argc;
	}
	for (int i = 0; i < argc; i++)
		command.argv[i] = argv[i];
	command.argc = argc;
}

json_t *pn_cli_provenance_json(void)
{
	static const char commit[] = PN_GIT_COMMIT;
	size_t len = strcspn(commit, ",");
	bool known = strcmp(commit, "unknown") != 0;
	json_t *o = json_object(), *argv = json_array();
	PN_ASSERT(len < sizeof(commit));
	json_array_append_new(argv, json_string("penumbra"));
	for (int i = 1; i < command.argc; i++) {
		json_t *arg = json_string(command.argv[i]); /* NULL: not UTF-8 */
		json_array_append_new(argv, arg ? arg : json_null());
	}
	json_object_set_new(o, "schema", json_integer(PN_CLI_JSON_SCHEMA));
	json_object_set_new(o, "version", json_string(PN_VERSION));
	json_object_set_new(o, "commit", known ? json_stringn(commit, len) : json_null());
	json_object_set_new(o, "dirty", json_boolean(strstr(commit, ", dirty") != NULL));
	json_object_set_new(o, "command", argv);
	return o;
}

json_t *pn_cli_json_stamped(json_t *root)
{
	json_t *out = json_object();
	PN_ASSERT(json_is_object(root) && json_object_get(root, "penumbra") == NULL);
	json_object_set_new(out, "penumbra", pn_cli_provenance_json());
	int rc = json_object_update(out, root);
	PN_ASSERT(rc == 0);
	json_decref(root);
	return out;
}

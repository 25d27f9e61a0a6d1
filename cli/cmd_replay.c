/*
 * cmd_replay.c: `penumbra replay T.yaml` (cli layer): re-run a counterexample trace (a
 * scenario with a replay: section, as `check` writes them) exactly: the same seed and
 * schedule up to the same crash point, the same crash state, the engine's recovery, the
 * oracle; print the timeline and the violation. A trace whose violation is a runtime
 * invariant replays as the run up to it. Exit: 1 the violation reproduces, 0 it does not,
 * 2 bad input.
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

#include "checker.h"
#include "trace.h"

static const char usage[] =
	"usage: penumbra replay T.yaml [--json FILE]\n"
	"\n"
	"Re-runs a counterexample trace exactly (the same seed, schedule, crash point and\n"
	"crash state), then prints its timeline and the violation.\n"
	"\n"
	"options:\n"
	"  --json FILE   write the outcome as JSON to FILE ('-' = stdout)\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 1 the violation reproduces, 0 it does not, 2 bad input\n";

enum { OPT_JSON = 256 };

static int write_json(const char *path, const struct pn_scenario *sc, const struct pn_check_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(sc->name));
	json_object_set_new(o, "reproduced", json_boolean(r->violation));
	json_object_set_new(o, "kind", json_string(pn_violation_name(r->kind)));
	json_object_set_new(o, "page", r->page == UINT32_MAX ? json_null() : json_integer(r->page));
	json_object_set_new(o, "schedule", json_integer(r->schedule));
	json_object_set_new(o, "crash_point", json_integer((json_int_t)r->crash_point));
	json_object_set_new(o, "state", json_string(sc->replay.state));
	json_object_set_new(o, "detail", json_string(r->detail));
	int rc = strcmp(path, "-") == 0 ? json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
					  : json_dump_file(o, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return rc ? 2 : 0;
}

int pn_cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"json", required_argument, NULL, OPT_JSON},
		{NULL, 0, NULL, 0},
	};
	const char *json = NULL;
	int c;
	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c == OPT_JSON)
			json = optarg;
		else
			return pn_cli_bad_option("replay", c, argv);
	}
	if (optind != argc - 1)
		return pn_cli_usage_error("replay", "name exactly one trace file");
	struct pn_scenario sc;
	if (!pn_cli_load(argv[optind], &sc))
		return 2;
	if (!sc.replay.present) {
		fprintf(stderr, "%s:1:1: not a trace: it has no replay: section (penumbra check writes "
			"traces)\n", argv[optind]);
		pn_scenario_free(&sc);
		return 2;
	}
	struct pn_check_options o = {
		.replay = true, .replay_schedule = sc.replay.schedule,
		.replay_point = sc.replay.crash_point, .replay_state = sc.replay.state,
		.timeline = stdout,
		.replay_recovery_point = sc.replay.recovery_crash_point,
		.replay_recovery_state = sc.replay.recovery_state,
	};
	static struct pn_check_result r;
	printf("replaying %s: seed %llu, schedule %u, crash at event %llu, state %s\n",
	       sc.name, (unsigned long long)sc.seed, sc.replay.schedule,
	       (unsigned long long)sc.replay.crash_point, sc.replay.state);
	int rc = pn_check_scenario(&sc, &o, &r);
	if (r.error) {
		fprintf(stderr, "penumbra replay: %s\n", r.detail);
		rc = 2;
	} else if (r.violation) {
		printf("the violation reproduces:\n  kind: %s\n  page: %d\n  what: %s\n",
		       pn_violation_name(r.kind), r.page == UINT32_MAX ? -1 : (int)r.page, r.detail);
		rc = 1;
	} else {
		printf("no violation: the trace does not reproduce one\n");
		rc = 0;
	}
	if (json && rc != 2)
		rc = pn_cli_worst(rc, write_json(json, &sc, &r));
	pn_scenario_free(&sc);
	return rc;
}

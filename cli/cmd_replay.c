/*
 * cmd_replay.c: `penumbra replay T.yaml` (cli layer): re-run a counterexample trace (a
 * scenario with a replay: section, as `check` writes them) exactly: the same seed and
 * schedule up to the same crash point, the same crash state, the engine's recovery, the
 * oracle; print the timeline and the violation. A trace whose violation is a runtime
 * invariant replays as the run up to it (the only kind a scenario without crash: has). The
 * first line says when the trace was edited after check wrote it (replay.scenario_hash,
 * model/trace.h). With --json -, the JSON alone goes to stdout, the rest to stderr.
 * Exit: 1 the violation reproduces, 0 it does not, 2 bad input (also a trace that does not
 * fit its run: a crash point past its end, a state its device or crash model does not have).
 */
#include "cli.h"

#include <stddef.h>
#include <string.h>

#include "checker.h"
#include "trace.h"

struct replay_opts {
	const char *json;
};

static const struct pn_opt replay_opts[] = {
	{.name = "json",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct replay_opts, json),
	 .complete = PN_COMPLETE_FILE,
	 .help = "write the outcome as JSON to FILE ('-' = stdout, and the human-readable output "
		 "to stderr)"},
};

const struct pn_cmd_spec pn_replay_spec = {
	.name = "replay",
	.args = "T.yaml",
	.args_help = "a counterexample trace, as penumbra check writes them",
	.args_min = 1,
	.args_max = 1,
	.args_missing = "name exactly one trace file",
	.description = "Re-runs a counterexample trace exactly (the same seed, schedule, crash "
		       "point and crash state), then prints its timeline and the violation. The "
		       "first line says so when the trace's scenario was edited after penumbra "
		       "check wrote it.",
	.opts = replay_opts,
	.nopts = PN_ARRAY_LEN(replay_opts),
	.exits =
		"1 the violation reproduces, 0 it does not, 2 bad input (a trace that does not "
		"fit its scenario: a crash point past the end of the run, a crash state the device "
		"does not have or the crash model does not allow)",
};

/* An event number as JSON: null past what JSON integers hold (the error then says why). */
static json_t *event_json(uint64_t n)
{
	return n > (uint64_t)INT64_MAX ? json_null() : json_integer((json_int_t)n);
}

static int write_json(FILE *f, const char *path, const struct pn_scenario *sc,
		      const struct pn_check_result *r, int rc, int edited)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(sc->name));
	json_object_set_new(o, "reproduced", json_boolean(rc == 1));
	json_object_set_new(o, "edited", edited < 0 ? json_null() : json_boolean(edited));
	json_object_set_new(o, "kind",
			    rc == 1 ? json_string(pn_violation_name(r->kind)) : json_null());
	json_object_set_new(o, "page", rc != 1 ? json_null() : pn_cli_page_json(r->page));
	json_object_set_new(o, "schedule", json_integer(sc->replay.schedule));
	json_object_set_new(o, "crash_point", event_json(sc->replay.crash_point));
	json_object_set_new(o, "state", json_string(sc->replay.state));
	json_object_set_new(o, "recovery_crash_point",
			    sc->replay.recovery_crash_point
				    ? event_json(sc->replay.recovery_crash_point)
				    : json_null());
	json_object_set_new(o, "recovery_state",
			    sc->replay.recovery_crash_point ? json_string(sc->replay.recovery_state)
							    : json_null());
	/* where the violation reproduced: the event of the run (the crash point, or an earlier
	 * one where a runtime invariant broke) and whether the crash inside recovery was needed */
	json_object_set_new(o, "broke_at", rc == 1 ? event_json(r->crash_point) : json_null());
	json_object_set_new(o, "in_recovery", rc == 1 ? json_boolean(r->in_recovery) : json_null());
	json_object_set_new(o, "detail", rc == 1 || rc == 0 ? json_string(r->detail) : json_null());
	json_object_set_new(o, "error", rc == 2 ? json_string(r->detail) : json_null());
	o = pn_cli_json_stamped(o);
	bool ok = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
		  fputc('\n', f) != EOF;
	json_decref(o);
	return pn_cli_close_output("replay", f, path, ok);
}

/* The first line: the scenario edited or not, what is replayed. */
static int print_head(FILE *out, const char *path, const struct pn_scenario *sc)
{
	char now[24];
	int edited = pn_trace_edited(sc, now, sizeof(now));
	if (edited == 1)
		fprintf(out,
			"EDITED TRACE: %s was changed after penumbra check wrote it (it now "
			"hashes to %s, the trace recorded %s): what replays is the edited trace\n",
			path, now, sc->replay.scenario_hash);
	fprintf(out, "replaying %s: seed %llu, schedule %u, ", sc->name,
		(unsigned long long)sc->seed, sc->replay.schedule);
	if (sc->replay.choices[0])
		fprintf(out, "preemptions %s, ", sc->replay.choices);
	if (sc->crash.present)
		fprintf(out, "crash after event %llu in state %s",
			(unsigned long long)sc->replay.crash_point, sc->replay.state);
	else
		fprintf(out, "the run up to event %llu (no crash: section: a runtime invariant)",
			(unsigned long long)sc->replay.crash_point);
	if (sc->replay.recovery_crash_point)
		fprintf(out, ", then after event %llu of its recovery in state %s",
			(unsigned long long)sc->replay.recovery_crash_point,
			sc->replay.recovery_state);
	fprintf(out, "%s\n",
		edited < 0 ? " (the trace records no scenario_hash: an edit would not show)" : "");
	return edited;
}

static int replay(const char *path, const struct pn_scenario *sc, const char *json)
{
	FILE *jf = NULL;
	if (json && !(jf = pn_cli_open_output("replay", json)))
		return 2;
	FILE *out = jf == stdout ? stderr : stdout;
	int edited = print_head(out, path, sc);
	struct pn_check_options o = pn_check_replay_options(sc);
	o.timeline = out;
	static struct pn_check_result r;
	int rc = pn_check_scenario(sc, &o, &r);
	if (r.error) {
		/* a value that does not fit the run: at its position in the trace */
		const uint32_t *at = r.error_key < PN_REPLAY_KEYS ? sc->replay.at[r.error_key]
								  : NULL;
		if (r.error_key != PN_REPLAY_NO_KEY && at && at[0])
			fprintf(stderr, "%s:%u:%u: %s\n", path, at[0], at[1], r.detail);
		else
			fprintf(stderr, "penumbra replay: %s: %s\n", path, r.detail);
		rc = 2;
	} else if (r.violation) {
		char page[16];
		fprintf(out, "the violation reproduces:\n  kind: %s%s\n  page: %s\n  what: %s\n",
			pn_violation_name(r.kind),
			r.in_recovery ? " (after a crash inside recovery)" : "",
			pn_cli_page_text(r.page, page, sizeof(page)), r.detail);
		if (r.crash_point != sc->replay.crash_point)
			fprintf(out,
				"  note: a runtime invariant broke at event %llu, before the trace's "
				"crash point %llu: the run does not match the trace exactly\n",
				(unsigned long long)r.crash_point,
				(unsigned long long)sc->replay.crash_point);
		if (sc->replay.recovery_crash_point && !r.in_recovery)
			fprintf(out,
				"  note: the first recovery already fails, so the crash inside it "
				"(replay.recovery_crash_point %llu) is not replayed\n",
				(unsigned long long)sc->replay.recovery_crash_point);
		rc = 1;
	} else {
		fprintf(out, "no violation: the trace does not reproduce one%s%s\n",
			r.detail[0] ? ": " : "", r.detail);
		rc = 0;
	}
	fflush(out);
	if (jf)
		rc = pn_cli_worst(rc, write_json(jf, json, sc, &r, rc, edited));
	return rc;
}

int pn_cmd_replay(int argc, char **argv)
{
	struct replay_opts o = {0};
	int at, rc = pn_opts_parse(&pn_replay_spec, argc, argv, &o, &at);
	if (rc >= 0)
		return rc;
	if (pn_pgcrash_is_trace(argv[at])) /* pgcrash's traces: real recovery again */
		return pn_pgcrash_replay(argv[at]);
	struct pn_scenario sc;
	if (!pn_cli_load(argv[at], &sc))
		return 2;
	rc = 2;
	if (!sc.replay.present)
		fprintf(stderr,
			"%s:1:1: not a trace: it has no replay: section (penumbra check writes "
			"traces)\n",
			argv[at]);
	else
		rc = replay(argv[at], &sc, o.json);
	pn_scenario_free(&sc);
	return rc;
}

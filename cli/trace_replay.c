/*
 * trace_replay.c: check's traces are replayed before they are reported (cli layer). A trace
 * is the promise that `penumbra replay` re-runs the violation check found; pn_cli_trace_write
 * writes it (model/trace.c) and then loads it as replay does (the loader, which the model
 * layer has not) and replays it (pn_check_replay_options). A trace that does not load, or
 * that replays to another verdict, is a bug of ours (the trace writer, the shrinker, the
 * loader or a run that is not deterministic), never a finding: check stops at once with
 * "penumbra check: internal error: ..." and exit 3, as a failed cross-check does.
 * Test hook: with PN_TEST_TRACE_FAULT=1 in the environment, the trace is written with no
 * protocol.mutations (a writer that drops a key), so a mutant's violation does not replay.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "load.h"
#include "trace.h"

/* Whether the trace at path loads and replays to want's violation; why not into why. */
static bool reproduces(const char *path, const struct pn_check_result *want, char *why, size_t len)
{
	static struct pn_scenario sc;
	static struct pn_check_result got;
	char err[PN_ERROR_LEN];
	if (!pn_scenario_load(path, &sc, err, sizeof err)) {
		snprintf(why, len, "it does not load: %.900s", err);
		return false;
	}
	struct pn_check_options o = pn_check_replay_options(&sc);
	pn_check_scenario(&sc, &o, &got);
	bool same = !got.error && got.violation && got.kind == want->kind && got.page == want->page;
	char a[16], b[16];
	if (got.error)
		snprintf(why, len, "it replays to an error: %.900s", got.detail);
	else if (!same)
		snprintf(why, len, "it replays to %s%s%s; check found %s on page %s",
			 got.violation ? pn_violation_name(got.kind) : "no violation",
			 got.violation ? " on page " : "",
			 got.violation ? pn_page_text(got.page, a, sizeof a) : "",
			 pn_violation_name(want->kind), pn_page_text(want->page, b, sizeof b));
	pn_scenario_free(&sc);
	return same;
}

bool pn_cli_trace_write(const struct pn_scenario *sc, const struct pn_check_result *r,
			const char *dir, char *path_out, size_t path_len, char *err, size_t err_len)
{
	struct pn_scenario faulty;
	const char *fault = getenv("PN_TEST_TRACE_FAULT");
	if (fault && strcmp(fault, "1") == 0) { /* the test hook: a key dropped */
		faulty = *sc;                   /* shallow: only written */
		faulty.protocol.mutations = 0;
		sc = &faulty;
	}
	if (!pn_trace_write(sc, r, dir, path_out, path_len, err, err_len))
		return false;
	char why[PN_ERROR_LEN];
	if (reproduces(path_out, r, why, sizeof why))
		return true;
	fprintf(stderr,
		"penumbra check: internal error: the trace %s that check wrote for %s does not "
		"reproduce its violation: %s; a bug of penumbra's, not of the protocol\n",
		path_out, sc->name, why);
	exit(3);
}

/*
 * trace.c: counterexample traces and reports (model layer). See trace.h.
 */
#include "trace.h"

#include "shrink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

/* The replay: section, without its scenario_hash (schedule, point, state, and when rpoint is
 * not 0 the crash inside recovery). */
static void write_replay(FILE *f, uint32_t schedule, uint64_t point, const char *state,
			 uint64_t rpoint, const char *rstate)
{
	fprintf(f, "replay:\n  schedule: %u\n  crash_point: %llu\n  state: \"%s\"\n", schedule,
		(unsigned long long)point, state);
	if (rpoint)
		fprintf(f, "  recovery_crash_point: %llu\n  recovery_state: \"%s\"\n",
			(unsigned long long)rpoint, rstate);
}

/* The hash a trace records: of the scenario as pn_scenario_write() prints it and of the
 * replay keys, so any edit to a value shows. */
static uint64_t trace_hash(const struct pn_scenario *sc, uint32_t schedule, uint64_t point,
			   const char *state, uint64_t rpoint, const char *rstate)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	PN_ASSERT(f != NULL);
	pn_scenario_write(f, sc);
	write_replay(f, schedule, point, state, rpoint, rstate);
	PN_ASSERT(fclose(f) == 0);
	uint64_t h = XXH3_64bits(text, len);
	free(text);
	return h;
}

int pn_trace_edited(const struct pn_scenario *sc, char *now, size_t len)
{
	const typeof(sc->replay) *r = &sc->replay;
	snprintf(now, len, "%016llx", (unsigned long long)trace_hash(sc, r->schedule, r->crash_point,
		 r->state, r->recovery_crash_point, r->recovery_state));
	if (!r->scenario_hash[0])
		return -1;
	return strcmp(now, r->scenario_hash) != 0;
}

bool pn_trace_write(const struct pn_scenario *sc, const struct pn_check_result *r, const char *dir,
		    char *path_out, size_t path_len, char *err, size_t err_len)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(err, err_len, "%s: cannot create: %s", dir, strerror(errno));
		return false;
	}
	snprintf(path_out, path_len, "%s/%s.trace.yaml", dir, sc->name);
	FILE *f = fopen(path_out, "w");
	if (!f) {
		snprintf(err, err_len, "%s: cannot write: %s", path_out, strerror(errno));
		return false;
	}
	fprintf(f, "# A counterexample written by penumbra check from %s: %s%s.\n", sc->path,
		pn_violation_name(r->kind), r->in_recovery ? ", found by a crash inside recovery" : "");
	fprintf(f, "# Re-run it with: penumbra replay %s\n", path_out);
	pn_scenario_write(f, sc);
	const char *state = r->state[0] ? r->state : "none";
	uint64_t rpoint = r->in_recovery ? r->recovery_point : 0;
	write_replay(f, r->schedule, r->crash_point, state, rpoint, r->recovery_state);
	fprintf(f, "  scenario_hash: \"%016llx\"\n",
		(unsigned long long)trace_hash(sc, r->schedule, r->crash_point, state, rpoint,
					       r->recovery_state));
	if (fclose(f) != 0) {
		snprintf(err, err_len, "%s: cannot write: %s", path_out, strerror(errno));
		return false;
	}
	return true;
}

void pn_trace_report(FILE *out, const struct pn_scenario *sc, const struct pn_check_result *r)
{
	fprintf(out, "VIOLATION in %s (%s)\n", sc->name, sc->path);
	fprintf(out, "  kind:        %s%s\n", pn_violation_name(r->kind),
		r->in_recovery ? " (after a crash inside recovery)" : "");
	fprintf(out, "  seed:        %llu   schedule: %u   crash point: event %llu\n",
		(unsigned long long)sc->seed, r->schedule, (unsigned long long)r->crash_point);
	if (r->state[0])
		fprintf(out, "  crash state: %s\n               (%s)\n", r->state_text, r->state);
	if (r->in_recovery)
		fprintf(out, "  then a crash at event %llu of the recovery, state %s\n",
			(unsigned long long)r->recovery_point, r->recovery_state);
	char page[16];
	fprintf(out, "  page:        %s\n", pn_page_text(r->page, page, sizeof page));
	fprintf(out, "  what:        %s\n", r->detail);
	fprintf(out, "  the last events before the crash:\n%s", r->timeline);
	if (r->trace_path[0])
		fprintf(out, "  trace:       %s   (penumbra replay %s)\n", r->trace_path, r->trace_path);
	if (r->shrunk[0])
		fprintf(out, "  shrunk:      %s\n", r->shrunk);
}

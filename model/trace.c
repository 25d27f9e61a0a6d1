/*
 * trace.c: counterexample traces and reports (model layer). See trace.h.
 */
#include "trace.h"

#include "files.h"
#include "shrink.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

/* The keys of a replay: section (its scenario_hash aside). */
struct replay_keys {
	uint32_t schedule;
	uint64_t point;
	const char *state;
	uint64_t rpoint; /* 0: no crash inside recovery */
	const char *rstate;
	const char *choices; /* "": the seeded order */
};

/* The replay: section, without its scenario_hash (schedule, point, state, when rpoint is
 * not 0 the crash inside recovery, and the schedule's preemptions when it has any). */
static void write_replay(FILE *f, const struct replay_keys *k)
{
	fprintf(f, "replay:\n  schedule: %u\n  crash_point: %llu\n  state: \"%s\"\n", k->schedule,
		(unsigned long long)k->point, k->state);
	if (k->rpoint)
		fprintf(f, "  recovery_crash_point: %llu\n  recovery_state: \"%s\"\n",
			(unsigned long long)k->rpoint, k->rstate);
	if (k->choices[0])
		fprintf(f, "  choices: \"%s\"\n", k->choices);
}

/* The hash a trace records: of the scenario as pn_scenario_write() prints it and of the
 * replay keys, so any edit to a value shows. */
static uint64_t trace_hash(const struct pn_scenario *sc, const struct replay_keys *k)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	PN_ASSERT(f != NULL);
	pn_scenario_write(f, sc);
	write_replay(f, k);
	PN_ASSERT(fclose(f) == 0);
	uint64_t h = XXH3_64bits(text, len);
	free(text);
	return h;
}

int pn_trace_edited(const struct pn_scenario *sc, char *now, size_t len)
{
	const typeof(sc->replay) *r = &sc->replay;
	struct replay_keys k = {r->schedule,       r->crash_point,
				r->state,          r->recovery_crash_point,
				r->recovery_state, r->choices};
	snprintf(now, len, "%016llx", (unsigned long long)trace_hash(sc, &k));
	if (!r->scenario_hash[0])
		return -1;
	return strcmp(now, r->scenario_hash) != 0;
}

void pn_trace_file_name(const char *name, char *buf, size_t len)
{
	size_t n = 0, max = PN_MIN(len - 1, (size_t)PN_TRACE_NAME_MAX);
	bool changed = false;
	PN_ASSERT(len > 18);
	for (const char *c = name; *c; c++) {
		bool safe = isalnum((unsigned char)*c) || *c == '-' || *c == '_' ||
			    (*c == '.' && c != name);
		if (n + 17 >= max) { /* room for "-" and 16 hex digits */
			changed = true;
			break;
		}
		buf[n++] = safe && (unsigned char)*c < 0x80 ? *c : '_';
		changed |= buf[n - 1] != *c;
	}
	if (n == 0) {
		buf[n++] = '_';
		changed = true;
	}
	if (changed)
		n += (size_t)snprintf(buf + n, len - n, "-%016llx",
				      (unsigned long long)XXH3_64bits(name, strlen(name)));
	buf[n] = '\0';
}

/* A path in a comment line: a control character (a newline would end the comment) as '?'. */
static void put_comment_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

bool pn_trace_write(const struct pn_scenario *sc, const struct pn_check_result *r, const char *dir,
		    char *path_out, size_t path_len, char *err, size_t err_len)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(err, err_len, "%s: cannot create: %s", dir, strerror(errno));
		return false;
	}
	char file[PN_TRACE_NAME_MAX + 1];
	pn_trace_file_name(sc->name, file, sizeof file);
	snprintf(path_out, path_len, "%s/%s.trace.yaml", dir, file);
	char why[PN_ERROR_LEN / 2];
	FILE *f = pn_file_open_out(path_out, why, sizeof why); /* files.h F2-F4 */
	if (!f) {
		snprintf(err, err_len, "%s: cannot write: %s", path_out, why);
		return false;
	}
	fputs("# A counterexample written by penumbra check from ", f);
	put_comment_text(f, sc->path);
	fprintf(f, ": %s%s.\n", pn_violation_name(r->kind),
		r->in_recovery ? ", found by a crash inside recovery" : "");
	fputs("# Re-run it with: penumbra replay ", f);
	put_comment_text(f, path_out);
	fputc('\n', f);
	pn_scenario_write(f, sc);
	struct replay_keys k = {r->schedule,
				r->crash_point,
				r->state[0] ? r->state : "none",
				r->in_recovery ? r->recovery_point : 0,
				r->recovery_state,
				r->choices};
	write_replay(f, &k);
	fprintf(f, "  scenario_hash: \"%016llx\"\n", (unsigned long long)trace_hash(sc, &k));
	if (!pn_file_close_out(f, true, why, sizeof why)) {
		snprintf(err, err_len, "%s: cannot write: %s", path_out, why);
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
	if (r->choices[0])
		fprintf(out, "  preemptions: %s (event:candidate)\n", r->choices);
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
		fprintf(out, "  trace:       %s   (penumbra replay %s)\n", r->trace_path,
			r->trace_path);
	if (r->shrunk[0])
		fprintf(out, "  shrunk:      %s\n", r->shrunk);
}

/*
 * trace.c: counterexample traces and reports (model layer). See trace.h.
 */
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *b = realloc(buf, cap *= 2);
			if (!b) {
				free(buf);
				buf = NULL;
			}
			buf = b;
		}
	}
	fclose(f);
	if (buf)
		*len = n;
	return buf;
}

/* Copies the scenario text, leaving out a top-level replay: block. */
static void copy_without_replay(FILE *out, const char *text, size_t len)
{
	bool skipping = false;
	for (size_t at = 0; at < len;) {
		const char *eol = memchr(text + at, '\n', len - at);
		size_t n = eol ? (size_t)(eol - (text + at)) + 1 : len - at;
		const char *line = text + at;
		bool top = n > 0 && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && line[0] != '\n';
		/* the seed is written again below: the one the check ran with (--seed) */
		if (top)
			skipping = (n >= 7 && strncmp(line, "replay:", 7) == 0) ||
				   (n >= 5 && strncmp(line, "seed:", 5) == 0);
		if (!skipping)
			fwrite(line, 1, n, out);
		at += n;
	}
	if (len && text[len - 1] != '\n')
		fputc('\n', out);
}

bool pn_trace_write(const struct pn_scenario *sc, const struct pn_check_result *r, const char *dir,
		    char *path_out, size_t path_len, char *err, size_t err_len)
{
	size_t len = 0;
	char *text = read_all(sc->path, &len);
	if (!text) {
		snprintf(err, err_len, "%s: cannot read: %s", sc->path, strerror(errno));
		return false;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(err, err_len, "%s: cannot create: %s", dir, strerror(errno));
		free(text);
		return false;
	}
	snprintf(path_out, path_len, "%s/%s.trace.yaml", dir, sc->name);
	FILE *f = fopen(path_out, "w");
	if (!f) {
		snprintf(err, err_len, "%s: cannot write: %s", path_out, strerror(errno));
		free(text);
		return false;
	}
	copy_without_replay(f, text, len);
	fprintf(f, "seed: %llu\n", (unsigned long long)sc->seed);
	fprintf(f, "replay:                 # written by penumbra check: %s", pn_violation_name(r->kind));
	fprintf(f, "%s\n", r->in_recovery ? ", found by a crash inside recovery" : "");
	fprintf(f, "  schedule: %u\n  crash_point: %llu\n  state: \"%s\"\n", r->schedule,
		(unsigned long long)r->crash_point, r->state[0] ? r->state : "none");
	if (r->in_recovery)
		fprintf(f, "  recovery_crash_point: %llu\n  recovery_state: \"%s\"\n",
			(unsigned long long)r->recovery_point, r->recovery_state);
	free(text);
	return fclose(f) == 0;
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
	if (r->page != UINT32_MAX)
		fprintf(out, "  page:        %u\n", r->page);
	fprintf(out, "  what:        %s\n", r->detail);
	fprintf(out, "  the last events before the crash:\n%s", r->timeline);
	if (r->trace_path[0])
		fprintf(out, "  trace:       %s   (penumbra replay %s)\n", r->trace_path, r->trace_path);
}

/*
 * run.c: the check of a recording and the replay of a trace (pgcrash layer; rules W1-W2 in
 * run.h). A trace is key: value lines (YAML): the configuration, the log's identity
 * (its path and XXH64), the crash point and the state in model/crashstate.h's compact form.
 */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#define JOBS_MAX 64

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct job {
	pid_t pid;
	uint32_t point;
	char state[256];
	char dir[640];
};

struct ctx {
	const struct pn_pgc *pg;
	const struct pn_pgc_opts *o;
	const struct pn_pgc_log *l;
	uint64_t log_hash;
	struct pn_pgc_summary *s;
	struct job jobs[JOBS_MAX];
	char (*paths)[256]; /* every path the log names, sorted, once (fs.c F2) */
	uint32_t npaths;
	uint64_t *seen;
	uint64_t nseen, capseen;
	uint64_t serial;
};

static bool seen_before(struct ctx *c, uint64_t h)
{
	for (uint64_t i = 0; i < c->nseen; i++)
		if (c->seen[i] == h)
			return true;
	if (c->nseen == c->capseen) {
		c->capseen = c->capseen ? c->capseen * 2 : 1024;
		uint64_t *n = realloc(c->seen, c->capseen * sizeof(uint64_t));
		if (!n)
			return false;
		c->seen = n;
	}
	c->seen[c->nseen++] = h;
	return false;
}

static void write_trace(struct ctx *c, const struct job *j, const struct pn_pgc_result *r)
{
	const struct pn_pgc_config *g = &c->pg->cfg;
	const struct pn_scenario *sc = &c->o->sc;
	snprintf(c->s->trace, sizeof(c->s->trace), "%s/violation-%" PRIu32 ".trace", c->pg->work,
		 j->point);
	FILE *f = fopen(c->s->trace, "w");
	if (!f)
		return;
	fprintf(f,
		"pgcrash: 1\nwork: %s\nbindir: %s\nchecksums: %d\nfpw: %d\nwal_log_hints: %d\n"
		"rows: %" PRIu32 "\ntransactions: %" PRIu32 "\nupdates: %" PRIu32
		"\ncheckpoint_every: %" PRIu32 "\npad: %" PRIu32 "\nseed: %" PRIu64
		"\ntimeout: %" PRIu32 "\natomic_unit: %" PRIu32 "\ntear: %s\nmax_unsynced: %" PRIu32
		"\nsamples: %" PRIu32 "\nlog_xxh64: %016" PRIx64 "\npoint: %" PRIu32
		"\nstate: \"%s\"\nverdict: %s\ndetail: \"",
		c->pg->work, g->bindir, g->checksums, g->fpw, g->wal_log_hints, g->rows,
		g->transactions, g->updates, g->checkpoint_every, g->pad, g->seed, g->timeout_s,
		pn_scenario_atomic_unit(sc), pn_tear_name(sc->crash.tear), sc->crash.max_unsynced,
		sc->crash.samples, c->log_hash, j->point, j->state,
		pn_pgc_verdict_name(r->verdict));
	for (const char *p = r->detail; *p; p++)
		fputs(*p == '"' ? "'" : (char[]){*p, 0}, f);
	fputs("\"\n", f);
	fclose(f);
}

/* A finished job: its result read, counted, a trace for the first violation. */
static void reap(struct ctx *c, struct job *j, int st)
{
	struct pn_pgc_result r = {.verdict = PN_PGC_ERROR};
	char path[700];
	snprintf(path, sizeof(path), "%s.result", j->dir);
	FILE *f = fopen(path, "rb");
	if (!f || fread(&r, sizeof(r), 1, f) != 1 || !WIFEXITED(st))
		snprintf(r.detail, sizeof(r.detail), "the judge's process ended without a result");
	if (f)
		fclose(f);
	remove(path);
	c->s->count[r.verdict <= PN_PGC_ERROR ? r.verdict : PN_PGC_ERROR]++;
	c->s->judged++;
	if (r.verdict == PN_PGC_ERROR && !c->s->error[0])
		snprintf(c->s->error, sizeof(c->s->error), "point %" PRIu32 " state %s: %s",
			 j->point, j->state, r.detail);
	if (r.verdict != PN_PGC_PASS && r.verdict != PN_PGC_ERROR && !c->s->trace[0]) {
		write_trace(c, j, &r);
		snprintf(c->s->detail, sizeof(c->s->detail), "%s at point %" PRIu32 " state %s: %s",
			 pn_pgc_verdict_name(r.verdict), j->point, j->state, r.detail);
	}
	pn_pgc_remove_tree(j->dir);
	snprintf(path, sizeof(path), "%s.log", j->dir);
	remove(path);
	j->pid = 0;
}

static void wait_one(struct ctx *c)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
		;
	for (uint32_t i = 0; pid > 0 && i < c->o->jobs; i++)
		if (c->jobs[i].pid == pid)
			reap(c, &c->jobs[i], st);
}

/* The unit of work in a child: judge dir, write the result beside it. */
static void judge_child(const struct ctx *c, const struct job *j, uint32_t acked)
{
	setpgid(0, 0); /* W2: a terminal's Ctrl-C reaches the parent alone */
	struct pn_pgc_result r;
	char sock[700], path[700];
	snprintf(sock, sizeof(sock), "%s.s", j->dir);
	mkdir(sock, 0700);
	if (chown(sock, c->pg->uid, c->pg->gid) != 0)
		_exit(3);
	pn_pgc_judge(c->pg, j->dir, sock, acked, &r);
	rmdir(sock);
	snprintf(path, sizeof(path), "%s.result", j->dir);
	FILE *f = fopen(path, "wb");
	_exit(f && fwrite(&r, sizeof(r), 1, f) == 1 && fclose(f) == 0 ? 0 : 3);
}

static struct job *free_job(struct ctx *c)
{
	for (;;) {
		for (uint32_t i = 0; i < c->o->jobs; i++)
			if (!c->jobs[i].pid)
				return &c->jobs[i];
		wait_one(c);
	}
}

/* One state: materialized, deduplicated (W1), handed to a job. */
static bool state(struct ctx *c, struct pn_pgc_point *pt, char *why, size_t len)
{
	struct job *j = free_job(c);
	snprintf(j->dir, sizeof(j->dir), "%s/st%" PRIu64, c->pg->work, c->serial++);
	j->point = pt->point;
	pn_crash_enum_encode(&pt->ce, j->state, sizeof(j->state));
	uint64_t h;
	c->s->states++;
	if (!pn_pgc_materialize(c->pg, c->l, pt, pt->ce.fates, j->dir, why, len)) {
		pn_pgc_remove_tree(j->dir);
		return false;
	}
	h = pn_pgc_hash_paths(j->dir, c->paths, c->npaths);
	if (seen_before(c, h)) {
		c->s->deduped++;
		pn_pgc_remove_tree(j->dir);
		return true;
	}
	pid_t pid = fork();
	if (pid == 0)
		judge_child(c, j, pt->acked);
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return false;
	}
	j->pid = pid;
	return true;
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

/* The paths the log names, sorted, each once; false when out of memory. */
static bool named_paths(struct ctx *c)
{
	const struct pn_pgc_log *l = c->l;
	c->paths = malloc((2 * (size_t)l->log.n + 1) * 256);
	if (!c->paths)
		return false;
	for (uint32_t i = 0; i < l->log.n; i++) {
		const struct pn_fop *op = &l->log.ops[i];
		if (op->kind == PN_FOP_ACK || op->kind == PN_FOP_MARK)
			continue;
		for (const char *p = op->path; p; p = p == op->path ? op->path2 : NULL)
			if (p[0])
				memcpy(c->paths[c->npaths++], p, 256);
	}
	qsort(c->paths, c->npaths, 256, by_name);
	uint32_t k = 0;
	for (uint32_t i = 0; i < c->npaths; i++)
		if (k == 0 || strcmp(c->paths[k - 1], c->paths[i]))
			memmove(c->paths[k++], c->paths[i], 256);
	c->npaths = k;
	return true;
}

static double now_s(void)
{
	struct timespec ts; /* the states per second shown, never a verdict */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const struct ctx *c, uint32_t i, double t0)
{
	if (!c->o->progress)
		return;
	double dt = now_s() - t0;
	fprintf(stderr,
		"\rpoint %" PRIu32 "/%" PRIu32 ", %" PRIu64 " states, %" PRIu64 " judged, %" PRIu64
		" deduplicated, %.1f states/s   ",
		i, c->s->points, c->s->states, c->s->judged, c->s->deduped,
		dt > 0 ? (double)c->s->states / dt : 0.0);
}

/* W2, and --fail-fast after a violation. */
static bool stopped(const struct ctx *c)
{
	return stop_flag || (c->o->fail_fast && c->s->trace[0]);
}

static bool points(struct ctx *c, const uint32_t *pts, char *why, size_t len)
{
	char dur[600];
	snprintf(dur, sizeof(dur), "%s/durable", c->pg->work);
	double t0 = now_s();
	bool ok = true;
	for (uint32_t i = 0; ok && i < c->s->points && !stopped(c); i++) {
		struct pn_pgc_point pt;
		ok = pn_pgc_point_begin(c->pg, c->l, &c->o->sc, pts[i], &pt, dur, why, len);
		pn_pgc_remove_tree(dur);
		while (ok && !stopped(c) && pn_crash_enum_next(&pt.ce))
			ok = state(c, &pt, why, len);
		pn_pgc_point_end(&pt);
		progress(c, i + 1, t0);
	}
	for (uint32_t i = 0; i < c->o->jobs; i++)
		while (c->jobs[i].pid)
			wait_one(c);
	if (c->o->progress)
		fputc('\n', stderr);
	return ok;
}

bool pn_pgc_check(const struct pn_pgc *pg, const struct pn_pgc_opts *o, struct pn_pgc_summary *s,
		  char *why, size_t len)
{
	struct pn_pgc_log l;
	char path[600];
	uint32_t *pts = NULL;
	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/ops.log", pg->work);
	if (!pn_pgc_log_load(&l, path, why, len))
		return false;
	struct ctx *c = calloc(1, sizeof(*c));
	bool ok = c != NULL;
	if (ok) {
		*c = (struct ctx){.pg = pg, .o = o, .l = &l, .s = s};
		c->log_hash = XXH64(l.log.buf, l.log.size, 0);
		if (!named_paths(c)) {
			snprintf(why, len, "out of memory");
			free(c);
			pn_pgc_log_free(&l);
			return false;
		}
		s->points = pn_pgc_points(&l, o->points_all, &pts);
		struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		stop_flag = 0;
		double t0 = now_s();
		ok = points(c, pts, why, len);
		s->seconds = now_s() - t0;
		s->interrupted = stop_flag != 0;
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		free(c->seen);
		free(c->paths);
	}
	free(c);
	free(pts);
	pn_pgc_log_free(&l);
	return ok;
}

/* ---- replay ---- */

/* The value of key in the trace text t (quotes stripped) into out; false when absent. */
static bool key(const char *t, const char *k, char *out, size_t len)
{
	size_t kl = strlen(k);
	for (const char *p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, k, kl) != 0 || p[kl] != ':')
			continue;
		p += kl + 1;
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, "\n");
		if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
			p++;
			n -= 2;
		}
		snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
		return true;
	}
	return false;
}

static bool key_u64(const char *t, const char *k, uint64_t *v, const char *trace, char *why,
		    size_t len)
{
	char s[64], *end;
	if (!key(t, k, s, sizeof(s))) {
		snprintf(why, len, "%s: no key '%s'", trace, k);
		return false;
	}
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end || end == s) {
		snprintf(why, len, "%s: '%s' is not a number: %s", trace, k, s);
		return false;
	}
	return true;
}

/* The trace's configuration and crash model; false with why. */
static bool read_trace(const char *t, const char *trace, struct pn_pgc *pg, struct pn_scenario *sc,
		       uint64_t *v, char *why, size_t len)
{
	static const char *const keys[] =
		{"checksums",    "fpw",     "wal_log_hints",    "rows",
		 "transactions", "updates", "checkpoint_every", "pad",
		 "seed",         "timeout", "atomic_unit",      "max_unsynced",
		 "samples",      "point"};
	char tear[32];
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!key_u64(t, keys[i], &v[i], trace, why, len))
			return false;
	if (!key(t, "work", pg->work, sizeof(pg->work)) ||
	    !key(t, "bindir", pg->cfg.bindir, sizeof(pg->cfg.bindir)) ||
	    !key(t, "tear", tear, sizeof(tear))) {
		snprintf(why, len, "%s: not a pgcrash trace (work, bindir, tear)", trace);
		return false;
	}
	pg->cfg = (struct pn_pgc_config){.checksums = v[0],
					 .fpw = v[1],
					 .wal_log_hints = v[2],
					 .rows = (uint32_t)v[3],
					 .transactions = (uint32_t)v[4],
					 .updates = (uint32_t)v[5],
					 .checkpoint_every = (uint32_t)v[6],
					 .pad = (uint32_t)v[7],
					 .seed = v[8],
					 .timeout_s = (uint32_t)v[9]};
	key(t, "bindir", pg->cfg.bindir, sizeof(pg->cfg.bindir));
	pn_scenario_defaults(sc);
	sc->crash.present = true;
	sc->crash.atomic_unit = (uint32_t)v[10];
	sc->crash.max_unsynced = (uint32_t)v[11];
	sc->crash.samples = (uint32_t)v[12];
	for (int i = 0; i < PN_TEAR_COUNT; i++)
		if (strcmp(tear, pn_tear_name((enum pn_tear)i)) == 0)
			sc->crash.tear = (enum pn_tear)i;
	struct stat st;
	if (stat(pg->work, &st) != 0) {
		snprintf(why, len, "%s: %s", pg->work, strerror(errno));
		return false;
	}
	pg->uid = st.st_uid;
	pg->gid = st.st_gid;
	pg->as_user = geteuid() == 0;
	return true;
}

bool pn_pgc_replay(const char *trace, struct pn_pgc_result *r, char *dir_out, size_t dir_len,
		   char *why, size_t len)
{
	static char t[16384];
	FILE *f = fopen(trace, "r");
	size_t n = f ? fread(t, 1, sizeof(t) - 1, f) : 0;
	if (f)
		fclose(f);
	t[n] = '\0';
	struct pn_pgc pg = {0};
	struct pn_scenario sc;
	uint64_t v[14];
	char state[256], hash[32], path[700];
	if (!f || !strstr(t, "pgcrash: 1")) {
		snprintf(why, len, "%s: %s", trace, f ? "not a pgcrash trace" : strerror(errno));
		return false;
	}
	if (!read_trace(t, trace, &pg, &sc, v, why, len) ||
	    !key(t, "state", state, sizeof(state)) || !key(t, "log_xxh64", hash, sizeof(hash)))
		return why[0] ? false : (snprintf(why, len, "%s: no state", trace), false);
	struct pn_pgc_log l;
	snprintf(path, sizeof(path), "%s/ops.log", pg.work);
	if (!pn_pgc_log_load(&l, path, why, len))
		return false;
	char h[32];
	snprintf(h, sizeof(h), "%016" PRIx64, XXH64(l.log.buf, l.log.size, 0));
	bool ok = strcmp(h, hash) == 0 && v[13] <= l.log.n;
	if (!ok)
		snprintf(why, len, "%s: the log %s is not the one the trace was taken of", trace,
			 path);
	struct pn_pgc_point pt;
	char dur[700];
	snprintf(dur, sizeof(dur), "%s/durable", pg.work);
	snprintf(dir_out, dir_len, "%s/replay-%" PRIu64, pg.work, v[13]);
	pn_pgc_remove_tree(dir_out);
	ok = ok && pn_pgc_point_begin(&pg, &l, &sc, (uint32_t)v[13], &pt, dur, why, len);
	pn_pgc_remove_tree(dur);
	if (ok) {
		char reason[256];
		ok = pn_crash_fates_decode(&pt.dev, state, pt.ce.fates, reason, sizeof(reason));
		if (!ok)
			snprintf(why, len, "%s: state \"%s\": %s", trace, state, reason);
		ok = ok && pn_pgc_materialize(&pg, &l, &pt, pt.ce.fates, dir_out, why, len);
		if (ok) {
			char sock[720];
			snprintf(sock, sizeof(sock), "%s.s", dir_out);
			mkdir(sock, 0700);
			ok = chown(sock, pg.uid, pg.gid) == 0;
			pn_pgc_judge(&pg, dir_out, sock, pt.acked, r);
			rmdir(sock);
		}
		pn_pgc_point_end(&pt);
	}
	pn_pgc_log_free(&l);
	return ok;
}

/*
 * run.c: the check of a recording and the replay of a trace (pgcrash layer; rules RN1-RN2 in
 * run.h). A trace is key: value lines (YAML): the configuration, the log's identity
 * (its path and XXH64), the crash point and the state in model/crashstate.h's compact form.
 */
#define _GNU_SOURCE
#include "run.h"

#include "executor.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

static const char *const class_names[PN_PGC_CLASSES] = {"whole writes", "torn writes"};

const char *pn_pgc_class_name(enum pn_pgc_class c)
{
	return c < PN_PGC_CLASSES ? class_names[c] : "?";
}

/* A state handed out and not yet back (the leader's record of it). */
struct job {
	bool used;
	uint32_t id; /* the unit id: the state's number (RN3) */
	uint32_t point;
	enum pn_pgc_class cls;
	char state[256];
};

/* The work list (model/exec.h): the leader's walk over points and states. */
struct ctx {
	const struct pn_pgc *pg;
	const struct pn_pgc_opts *o;
	const struct pn_pgc_log *l;
	uint64_t log_hash;
	struct pn_pgc_summary *s;
	struct job jobs[JOBS_MAX];
	char (*paths)[256]; /* every path the log names, sorted, once (fs.c FD2) */
	uint32_t npaths;
	uint64_t *seen;
	uint64_t nseen, capseen;
	uint32_t serial;   /* states materialized so far: the next unit id */
	char scratch[600]; /* RN5: where states are made */
	const uint32_t *pts;
	uint32_t ipt; /* the point being enumerated */
	bool open;    /* pt is begun */
	struct pn_pgc_point pt;
	double t0;
	char *why; /* the first error of the walk: the check could not run */
	size_t why_len;
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

static void state_dir(const struct ctx *c, uint32_t id, char *out, size_t len)
{
	snprintf(out, len, "%s/st%" PRIu32, c->scratch, id);
}

/* RN5: the folder states are made in: one of this check's own on /dev/shm (a tmpfs; the
 * environment's PN_PGCRASH_SCRATCH names another parent) when it has room for jobs + 2
 * copies of the base image, else the work folder. On ext4, creating
 * a state's few hundred files right after the last state's were deleted is slow (the inode
 * allocator passes over recently deleted inodes): it was half of a state's time. */
static void scratch_open(struct ctx *c)
{
	const char *env = getenv("PN_PGCRASH_SCRATCH"), *parent = env ? env : "/dev/shm";
	char base[640], dir[600];
	struct statvfs fs;
	snprintf(c->scratch, sizeof(c->scratch), "%s", c->pg->work);
	snprintf(base, sizeof(base), "%s/base", c->pg->work);
	snprintf(dir, sizeof(dir), "%.500s/pn-pgcrash.XXXXXX", parent);
	uint64_t need = (uint64_t)(c->o->jobs + 2) * pn_pgc_tree_bytes(base);
	if (statvfs(parent, &fs) != 0 || (uint64_t)fs.f_bavail * fs.f_frsize < need ||
	    !mkdtemp(dir))
		return;
	if (c->pg->as_user && chown(dir, c->pg->uid, c->pg->gid) != 0) {
		rmdir(dir);
		return;
	}
	snprintf(c->scratch, sizeof(c->scratch), "%s", dir);
}

static void scratch_close(const struct ctx *c)
{
	if (strcmp(c->scratch, c->pg->work) != 0)
		pn_pgc_remove_tree(c->scratch);
}

/* The configuration's lines (the head of recording.conf and of a trace). */
static void config_lines(FILE *f, const struct pn_pgc *pg)
{
	const struct pn_pgc_config *g = &pg->cfg;
	fprintf(f,
		"work: %s\nbindir: %s\nchecksums: %d\nfpw: %d\nwal_log_hints: %d\n"
		"rows: %" PRIu32 "\ntransactions: %" PRIu32 "\nupdates: %" PRIu32
		"\ncheckpoint_every: %" PRIu32 "\npad: %" PRIu32 "\nseed: %" PRIu64
		"\ntimeout: %" PRIu32 "\nworkload: %d\nscript: %s\n",
		pg->work, g->bindir, g->checksums, g->fpw, g->wal_log_hints, g->rows,
		g->transactions, g->updates, g->checkpoint_every, g->pad, g->seed, g->timeout_s,
		(int)g->workload, g->script);
}

bool pn_pgc_config_write(const struct pn_pgc *pg, char *why, size_t len)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/recording.conf", pg->work);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("pgcrash-recording: 1\n", f);
		config_lines(f, pg);
	}
	if (!f || fclose(f) != 0) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

/* The trace of j's violation r, in the work folder; its path into out. */
static void write_trace(const struct ctx *c, const struct job *j, const struct pn_pgc_result *r,
			char *out, size_t len)
{
	const struct pn_scenario *sc = &c->o->sc;
	snprintf(out, len, "%s/violation-%" PRIu32 "-%" PRIu32 ".trace", c->pg->work, j->point,
		 j->id);
	FILE *f = fopen(out, "w");
	if (!f)
		return;
	fputs("pgcrash: 1\n", f);
	config_lines(f, c->pg);
	fprintf(f,
		"atomic_unit: %" PRIu32 "\ntear: %s\nmax_unsynced: %" PRIu32 "\nsamples: %" PRIu32
		"\nlog_xxh64: %016" PRIx64 "\npoint: %" PRIu32 "\nstate: \"%s\"\nverdict: %s\n"
		"detail: \"",
		pn_scenario_atomic_unit(sc), pn_tear_name(sc->crash.tear), sc->crash.max_unsynced,
		sc->crash.samples, c->log_hash, j->point, j->state,
		pn_pgc_verdict_name(r->verdict));
	for (const char *p = r->detail; *p; p++)
		fputs(*p == '"' ? "'" : (char[]){*p, 0}, f);
	fputs("\"\n", f);
	fclose(f);
}

/* RN3: j's violation kept when it is its class's lowest-numbered so far. */
static void violation(struct ctx *c, const struct job *j, const struct pn_pgc_result *r)
{
	struct pn_pgc_class_sum *k = &c->s->cls[j->cls];
	k->violations++;
	if (k->first != UINT64_MAX && k->first < j->id)
		return;
	if (k->trace[0])
		remove(k->trace);
	k->first = j->id;
	write_trace(c, j, r, k->trace, sizeof(k->trace));
	snprintf(k->detail, sizeof(k->detail), "%s at point %" PRIu32 " state %s: %s",
		 pn_pgc_verdict_name(r->verdict), j->point, j->state, r->detail);
}

static struct job *job_of(struct ctx *c, uint32_t id)
{
	for (uint32_t i = 0; i < JOBS_MAX; i++)
		if (c->jobs[i].used && c->jobs[i].id == id)
			return &c->jobs[i];
	return NULL;
}

/* A job's directory, socket folder, log and result gone; server stopped when asked. */
static void job_end(struct ctx *c, struct job *j, bool stop_server)
{
	char dir[640], path[700];
	state_dir(c, j->id, dir, sizeof(dir));
	if (stop_server)
		pn_pgc_stop(c->pg, dir);
	pn_pgc_remove_tree(dir);
	snprintf(path, sizeof(path), "%s.log", dir);
	remove(path);
	snprintf(path, sizeof(path), "%s.s", dir);
	pn_pgc_remove_tree(path);
	j->used = false;
}

static void count(struct ctx *c, struct job *j, const struct pn_pgc_result *r)
{
	struct pn_pgc_class_sum *k = &c->s->cls[j->cls];
	enum pn_pgc_verdict v = r->verdict <= PN_PGC_ERROR ? r->verdict : PN_PGC_ERROR;
	c->s->count[v]++;
	c->s->judged++;
	k->judged++;
	if (v == PN_PGC_ERROR) {
		k->errors++;
		if (!k->error[0])
			snprintf(k->error, sizeof(k->error), "point %" PRIu32 " state %s: %s",
				 j->point, j->state, r->detail);
	} else if (v != PN_PGC_PASS) {
		violation(c, j, r);
	}
}

/* RN3, and --fail-fast after a violation. */
static bool stopped(const struct ctx *c)
{
	return stop_flag ||
	       (c->o->fail_fast && (c->s->cls[0].violations || c->s->cls[1].violations));
}

static double now_s(void)
{
	struct timespec ts; /* the states per second shown, never a verdict */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the work list's callbacks (model/exec.h E1) ---- */

/* The point's durable folder (crash.h CS5), kept while the point is open. */
static void durable_dir(const struct ctx *c, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/durable", c->scratch);
	PN_ASSERT(n > 0 && (size_t)n < len); /* scratch is bounded below the callers' buffers */
}

/* One state of the point being enumerated: materialized, deduplicated (RN1); true when it
 * is a new one, handed out as u. */
static bool one_state(struct ctx *c, struct pn_exec_unit *u)
{
	struct pn_pgc_point *pt = &c->pt;
	struct job *j = NULL;
	for (uint32_t i = 0; i < JOBS_MAX && !j; i++)
		j = c->jobs[i].used ? NULL : &c->jobs[i];
	PN_ASSERT(j != NULL); /* the executor asks only with a worker free */
	*j = (struct job){.id = c->serial++, .point = pt->point, .cls = PN_PGC_WHOLE};
	for (uint32_t i = 0; i < pt->dev.nunsynced; i++)
		if (pt->ce.fates[i].fate == PN_FATE_TORN)
			j->cls = PN_PGC_TORN;
	pn_crash_enum_encode(&pt->ce, j->state, sizeof(j->state));
	c->s->states++;
	char dir[640], dur[600];
	uint64_t hash = 0;
	state_dir(c, j->id, dir, sizeof(dir));
	durable_dir(c, dur, sizeof(dur));
	/* RN1 without a directory where crash.h CS5 holds: a state seen before costs no copy */
	bool known = pn_pgc_state_hash(c->l, pt, pt->ce.fates, dur, c->paths, c->npaths, &hash);
	if (known && seen_before(c, hash)) {
		c->s->deduped++;
		return false;
	}
	if (!pn_pgc_materialize(c->pg, c->l, pt, pt->ce.fates, dir, c->why, c->why_len)) {
		pn_pgc_remove_tree(dir);
		return false;
	}
	uint64_t made = pn_pgc_hash_paths(dir, c->paths, c->npaths);
	PN_ASSERT(!known || made == hash); /* CS5: the directory is the one hashed */
	if (!known && seen_before(c, made)) {
		c->s->deduped++;
		pn_pgc_remove_tree(dir);
		return false;
	}
	j->used = true;
	*u = (struct pn_exec_unit){.entry = 0, .id = j->id};
	memcpy(u->desc, &pt->acked, sizeof(pt->acked));
	return true;
}

static bool next(void *arg, struct pn_exec_unit *u)
{
	struct ctx *c = arg;
	char dur[600];
	durable_dir(c, dur, sizeof(dur));
	while (!c->why[0] && !stopped(c)) {
		if (!c->open && c->ipt == c->s->points)
			return false;
		if (!c->open) {
			c->open = pn_pgc_point_begin(c->pg, c->l, &c->o->sc, c->pts[c->ipt], &c->pt,
						     dur, c->why, c->why_len);
			if (!c->open)
				pn_pgc_remove_tree(dur);
			continue;
		}
		if (pn_crash_enum_next(&c->pt.ce)) {
			if (one_state(c, u))
				return true;
			continue;
		}
		pn_pgc_point_end(&c->pt);
		pn_pgc_remove_tree(dur);
		c->open = false;
		c->ipt++;
	}
	return false;
}

/* In a worker: the unit of work, one state judged by real recovery. */
static uint8_t *run_unit(void *arg, const struct pn_exec_unit *u, const struct pn_exec_ctx *x,
			 size_t *len)
{
	const struct ctx *c = arg;
	struct pn_pgc_result *r = calloc(1, sizeof(*r));
	char dir[640], sock[700];
	uint32_t acked;
	(void)x;
	PN_ASSERT(r != NULL);
	memcpy(&acked, u->desc, sizeof(acked));
	state_dir(c, u->id, dir, sizeof(dir));
	snprintf(sock, sizeof(sock), "%s.s", dir);
	mkdir(sock, 0700);
	if (chown(sock, c->pg->uid, c->pg->gid) != 0) {
		r->verdict = PN_PGC_ERROR;
		snprintf(r->detail, sizeof(r->detail), "%.400s: chown: %s", sock, strerror(errno));
	} else {
		pn_pgc_judge(c->pg, dir, sock, acked, r);
	}
	rmdir(sock);
	*len = sizeof(*r);
	return (uint8_t *)r;
}

static bool done(void *arg, const struct pn_exec_unit *u, const uint8_t *bytes, size_t len,
		 char *why, size_t why_len)
{
	struct ctx *c = arg;
	struct job *j = job_of(c, u->id);
	struct pn_pgc_result r;
	PN_ASSERT(j != NULL);
	if (len != sizeof(r)) {
		snprintf(why, why_len, "%zu bytes, not a result's %zu", len, sizeof(r));
		return false;
	}
	memcpy(&r, bytes, sizeof(r));
	r.detail[sizeof(r.detail) - 1] = '\0';
	count(c, j, &r);
	job_end(c, j, false);
	return true;
}

static void failed(void *arg, const struct pn_exec_unit *u, const char *why)
{
	struct ctx *c = arg;
	struct job *j = job_of(c, u->id);
	struct pn_pgc_result r = {.verdict = PN_PGC_ERROR};
	PN_ASSERT(j != NULL);
	snprintf(r.detail, sizeof(r.detail), "the judge gave no result: %s", why);
	count(c, j, &r);
	job_end(c, j, true); /* the judge may have died with its server running */
}

static bool cancelled(void *arg, uint32_t entry, uint32_t id)
{
	(void)arg, (void)entry, (void)id;
	return false; /* every state handed out is judged to its end (bounded) */
}

static void tick(void *arg, uint64_t states_live, uint64_t schedules_live)
{
	const struct ctx *c = arg;
	(void)states_live, (void)schedules_live;
	if (!c->o->progress)
		return;
	double dt = now_s() - c->t0;
	fprintf(stderr,
		"\rpoint %" PRIu32 "/%" PRIu32 ", %" PRIu64 " states, %" PRIu64 " judged, %" PRIu64
		" deduplicated, %.1f states/s   ",
		c->ipt, c->s->points, c->s->states, c->s->judged, c->s->deduped,
		dt > 0 ? (double)c->s->states / dt : 0.0);
}

static const char *name(void *arg, uint32_t entry)
{
	(void)arg, (void)entry;
	return "pgcrash";
}

static void note(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "\n%s\n", line);
}

/* The paths the log names, sorted, each once; false when out of memory. */
static int by_name(const void *a, const void *b) { return strcmp(a, b); }

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

/* Every point and state through the executor; RN2's leftovers stopped and removed. */
static void walk(struct ctx *c)
{
	struct pn_exec x;
	struct pn_exec_work w = {.arg = c,
				 .next = next,
				 .run = run_unit,
				 .done = done,
				 .failed = failed,
				 .cancelled = cancelled,
				 .tick = tick,
				 .name = name,
				 .note = note};
	pn_exec_start(&x, c->o->jobs > 1 ? PN_EXEC_PROCESSES : PN_EXEC_SERIAL, c->o->jobs,
		      &stop_flag, 60);
	pn_exec_run(&x, &w);
	pn_exec_end(&x, 0, false);
	for (uint32_t i = 0; i < JOBS_MAX; i++)
		if (c->jobs[i].used)
			job_end(c, &c->jobs[i], true); /* RN2: dropped by the executor (E5) */
	if (c->open) {
		char dur[600];
		durable_dir(c, dur, sizeof(dur));
		pn_pgc_point_end(&c->pt);
		pn_pgc_remove_tree(dur);
	}
	if (c->o->progress)
		fputc('\n', stderr);
}

/* The summary's first violation and error: the lower class's (RN3). */
static void summary_first(struct pn_pgc_summary *s)
{
	for (int k = PN_PGC_CLASSES - 1; k >= 0; k--) {
		const struct pn_pgc_class_sum *cs = &s->cls[k];
		if (cs->trace[0] && (!s->trace[0] || cs->first < s->cls[!k].first)) {
			snprintf(s->trace, sizeof(s->trace), "%s", cs->trace);
			snprintf(s->detail, sizeof(s->detail), "%s", cs->detail);
		}
		if (cs->error[0] && !s->error[0])
			snprintf(s->error, sizeof(s->error), "%s", cs->error);
	}
}

bool pn_pgc_check(const struct pn_pgc *pg, const struct pn_pgc_opts *o, struct pn_pgc_summary *s,
		  char *why, size_t len)
{
	struct pn_pgc_log l;
	char path[600];
	uint32_t *pts = NULL;
	memset(s, 0, sizeof(*s));
	for (int k = 0; k < PN_PGC_CLASSES; k++)
		s->cls[k].first = UINT64_MAX;
	PN_ASSERT(o->jobs >= 1 && o->jobs <= JOBS_MAX);
	snprintf(path, sizeof(path), "%s/ops.log", pg->work);
	if (!pn_pgc_log_load(&l, path, why, len))
		return false;
	why[0] = '\0';
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c ||
	    !(*c = (struct ctx){.pg = pg, .o = o, .l = &l, .s = s, .why = why, .why_len = len},
	      named_paths(c))) {
		snprintf(why, len, "out of memory");
		free(c);
		pn_pgc_log_free(&l);
		return false;
	}
	c->log_hash = XXH64(l.log.buf, l.log.size, 0);
	s->points = pn_pgc_points(&l, o->points_all, &pts);
	c->pts = pts;
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	stop_flag = 0;
	c->t0 = now_s();
	scratch_open(c);
	walk(c);
	scratch_close(c);
	s->seconds = now_s() - c->t0;
	s->interrupted = stop_flag != 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	summary_first(s);
	bool ok = why[0] == '\0';
	free(c->seen);
	free(c->paths);
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

/* The configuration in the text t (of the file src) into pg, its user the work folder's
 * owner; false with why. */
static bool read_config(const char *t, const char *src, struct pn_pgc *pg, char *why, size_t len)
{
	static const char *const keys[] = {"checksums",    "fpw",     "wal_log_hints",    "rows",
					   "transactions", "updates", "checkpoint_every", "pad",
					   "seed",         "timeout"};
	uint64_t v[10];
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!key_u64(t, keys[i], &v[i], src, why, len))
			return false;
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
	uint64_t w = 0; /* a recording from before the user's workloads: the built-in */
	if (key(t, "workload", pg->cfg.script, sizeof(pg->cfg.script)))
		w = strtoull(pg->cfg.script, NULL, 10);
	pg->cfg.workload = w <= PN_PGC_PGBENCH ? (enum pn_pgc_workload)w : PN_PGC_BUILTIN;
	pg->cfg.script[0] = '\0';
	key(t, "script", pg->cfg.script, sizeof(pg->cfg.script));
	if (!key(t, "work", pg->work, sizeof(pg->work)) ||
	    !key(t, "bindir", pg->cfg.bindir, sizeof(pg->cfg.bindir))) {
		snprintf(why, len, "%s: no work or bindir", src);
		return false;
	}
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

/* The file path into t (size len), NUL-terminated; false with why. */
static bool slurp(const char *path, char *t, size_t len, char *why, size_t why_len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(t, 1, len - 1, f) : 0;
	t[n] = '\0';
	if (!f)
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
	else
		fclose(f);
	return f != NULL;
}

bool pn_pgc_config_read(struct pn_pgc *pg, const char *work, char *why, size_t len)
{
	char path[700], t[4096];
	snprintf(path, sizeof(path), "%s/recording.conf", work);
	if (!slurp(path, t, sizeof(t), why, len))
		return false;
	if (strncmp(t, "pgcrash-recording: 1\n", 21) != 0) {
		snprintf(why, len, "%s: not a pgcrash recording's configuration", path);
		return false;
	}
	*pg = (struct pn_pgc){0};
	if (!read_config(t, path, pg, why, len))
		return false;
	if (strcmp(pg->work, work) != 0) /* moved since: the folder named is the recording */
		snprintf(pg->work, sizeof(pg->work), "%s", work);
	snprintf(pg->recorder, sizeof(pg->recorder), "%s/libpn_record.so", pg->work);
	return true;
}

/* The trace's configuration and crash model; false with why. */
static bool read_trace(const char *t, const char *trace, struct pn_pgc *pg, struct pn_scenario *sc,
		       uint64_t *v, char *why, size_t len)
{
	static const char *const keys[] = {"atomic_unit", "max_unsynced", "samples", "point"};
	char tear[32];
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!key_u64(t, keys[i], &v[i], trace, why, len))
			return false;
	if (!key(t, "tear", tear, sizeof(tear))) {
		snprintf(why, len, "%s: not a pgcrash trace (no tear)", trace);
		return false;
	}
	if (!read_config(t, trace, pg, why, len))
		return false;
	pn_scenario_defaults(sc);
	sc->crash.present = true;
	sc->crash.atomic_unit = (uint32_t)v[0];
	sc->crash.max_unsynced = (uint32_t)v[1];
	sc->crash.samples = (uint32_t)v[2];
	for (int i = 0; i < PN_TEAR_COUNT; i++)
		if (strcmp(tear, pn_tear_name((enum pn_tear)i)) == 0)
			sc->crash.tear = (enum pn_tear)i;
	return true;
}

bool pn_pgc_trace_open(const char *trace, struct pn_pgc_trace *tr, char *why, size_t len)
{
	static char t[16384];
	uint64_t v[4];
	char hash[32], path[700], dur[700];
	*tr = (struct pn_pgc_trace){0};
	if (!slurp(trace, t, sizeof(t), why, len))
		return false;
	if (!strstr(t, "pgcrash: 1")) {
		snprintf(why, len, "%s: not a pgcrash trace", trace);
		return false;
	}
	if (!read_trace(t, trace, &tr->pg, &tr->sc, v, why, len) ||
	    !key(t, "state", tr->state, sizeof(tr->state)) ||
	    !key(t, "log_xxh64", hash, sizeof(hash)))
		return why[0] ? false : (snprintf(why, len, "%s: no state", trace), false);
	key(t, "verdict", tr->verdict, sizeof(tr->verdict));
	key(t, "detail", tr->detail, sizeof(tr->detail));
	tr->point = (uint32_t)v[3];
	snprintf(path, sizeof(path), "%s/ops.log", tr->pg.work);
	if (!pn_pgc_log_load(&tr->l, path, why, len))
		return false;
	char h[32];
	snprintf(h, sizeof(h), "%016" PRIx64, XXH64(tr->l.log.buf, tr->l.log.size, 0));
	bool ok = strcmp(h, hash) == 0 && v[3] <= tr->l.log.n;
	if (!ok)
		snprintf(why, len, "%s: the log %s is not the one the trace was taken of", trace,
			 path);
	snprintf(dur, sizeof(dur), "%s/durable", tr->pg.work);
	ok = ok && pn_pgc_point_begin(&tr->pg, &tr->l, &tr->sc, tr->point, &tr->pt, dur, why, len);
	pn_pgc_remove_tree(dur);
	tr->open = ok;
	char reason[256];
	if (ok && !pn_crash_fates_decode(&tr->pt.dev, tr->state, tr->pt.ce.fates, reason,
					 sizeof(reason))) {
		snprintf(why, len, "%s: state \"%s\": %s", trace, tr->state, reason);
		ok = false;
	}
	if (!ok)
		pn_pgc_trace_close(tr);
	return ok;
}

void pn_pgc_trace_close(struct pn_pgc_trace *tr)
{
	if (tr->open)
		pn_pgc_point_end(&tr->pt);
	pn_pgc_log_free(&tr->l);
	tr->open = false;
}

bool pn_pgc_replay(const char *trace, struct pn_pgc_result *r, char *dir_out, size_t dir_len,
		   char *why, size_t len)
{
	static struct pn_pgc_trace tr;
	if (!pn_pgc_trace_open(trace, &tr, why, len))
		return false;
	snprintf(dir_out, dir_len, "%s/replay-%" PRIu32, tr.pg.work, tr.point);
	pn_pgc_remove_tree(dir_out);
	bool ok = pn_pgc_materialize(&tr.pg, &tr.l, &tr.pt, tr.pt.ce.fates, dir_out, why, len);
	if (ok) {
		char sock[720];
		snprintf(sock, sizeof(sock), "%s.s", dir_out);
		mkdir(sock, 0700);
		ok = chown(sock, tr.pg.uid, tr.pg.gid) == 0;
		pn_pgc_judge(&tr.pg, dir_out, sock, tr.pt.acked, r);
		rmdir(sock);
	}
	pn_pgc_trace_close(&tr);
	return ok;
}

/*
 * cmd_crashtest.c: `penumbra crashtest S.yaml --path DIR --runs N` (cli layer): real
 * crashes of the same engine on real files (disk/disk.h).
 *
 * One run, per mode:
 *   1. the parent formats fresh files in DIR; the oracle's base is the formatted pages
 *      (the checker's pn_check_oracle_new), and the files must hold them (C2 as formatted);
 *   2. a child process runs the workload on them without end; over a pipe it reports every
 *      WAL record as inserted and every commit only after the engine acknowledged it (disk.h DK4);
 *   3. the parent SIGKILLs it at a moment drawn from a PRNG seeded by --seed (uniform in
 *      [0, --max-time] after the child started), and reads what was reported before it died;
 *   4. the parent recovers from the files through the same backend (the engine's recovery,
 *      the end-of-recovery checkpoint included) and judges the result with the checker's own
 *      functions (model/judge.h): C3 recovery completes, C1 every acknowledged commit is in
 *      the recovered WAL, C2 every page equals the oracle's page for the recovered WAL.
 * A child that stops on a runtime invariant (R1-R5) is a failure too; its files are still
 * recovered and judged, which shows what the bug loses.
 *
 * What a SIGKILL can show: the process dies, the kernel does not. Every write the kernel
 * accepted survives (in the page cache or on the device), an O_DIRECT write in flight
 * completes, and no fsync is skipped by the crash, so torn pages and unsynced-but-written
 * data are never lost: only what the process had not yet handed to the kernel is. A power
 * loss is what `penumbra check` models.
 */
#define _GNU_SOURCE /* pipe2, F_SETPIPE_SZ */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checker.h"
#include "disk.h"
#include "realdisk.h"
#include "oracle.h"
#include "prng.h"

struct crash_opts {
	const char *scenario, *path, *json, *modes_arg;
	uint64_t runs, seed, max_time_ns;
	bool seed_set, force;
	enum pn_mode modes[PN_CLI_MAX_MODES];
	int nmodes;
};

static const struct pn_opt crash_opts[] = {
	{.name = "path",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = offsetof(struct crash_opts, path),
	 .complete = PN_COMPLETE_DIR,
	 .required = "missing --path DIR (the directory to run on)",
	 .help = "the directory of files to run on; created if absent, and refused if it holds "
		 "files penumbra did not create"},
	{.name = "runs",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct crash_opts, runs),
	 .min = 1,
	 .def = "50",
	 .help = "crashes per mode"},
	{.name = "modes",
	 .kind = PN_OPT_STRING,
	 .value = "LIST",
	 .at = offsetof(struct crash_opts, modes_arg),
	 .complete = PN_COMPLETE_PLAIN_MODES,
	 .help = "comma-separated, distinct modes: {modes} (default: the scenario's)"},
	{.name = "max-time",
	 .kind = PN_OPT_DURATION,
	 .value = "D",
	 .at = offsetof(struct crash_opts, max_time_ns),
	 .def = "1s",
	 .help = "the kill comes within D of the child's start, at a moment drawn uniformly "
		 "from the seeded PRNG"},
	{.name = "seed",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct crash_opts, seed),
	 .given = PN_OPT_GIVEN(struct crash_opts, seed_set),
	 .help = "seed of the kill moments and the workload (default: the scenario's)"},
	{.name = "json",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct crash_opts, json),
	 .complete = PN_COMPLETE_FILE,
	 .help = "write the outcome as JSON to FILE ('-' = stdout)"},
	{.name = "force",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct crash_opts, force),
	 .help = "use DIR even if it holds other files (penumbra's are overwritten)"},
};

const struct pn_cmd_spec pn_crashtest_spec = {
	.name = "crashtest",
	.args = "S.yaml",
	.args_help = "the scenario file",
	.args_min = 1,
	.args_max = 1,
	.args_missing = "missing the scenario file",
	.description = "Runs the workload on real files in a child process, kills it with "
		       "SIGKILL at a seeded moment, recovers from the files and verifies every "
		       "acknowledged commit and every page against the checker's oracle; repeats.",
	.opts = crash_opts,
	.nopts = PN_ARRAY_LEN(crash_opts),
	.exits = "0 nothing lost, 1 a commit lost, a page wrong, recovery or the run failed, 2 "
		 "bad input",
};

/* Messages from the child: a header, then `len` bytes. */
enum { MSG_WAL = 'W', MSG_ACK = 'A', MSG_ERROR = 'E' };
struct msg {
	uint32_t type, len;
	uint64_t a, b; /* WAL: start, end LSN; ACK: xid, commit LSN */
};

/* What the parent learns of one child. */
struct run_state {
	struct pn_oracle *oracle;
	uint32_t *xids;
	pn_lsn *lsns;
	uint64_t nacked, cap;
	uint8_t *buf;
	size_t len, cap_buf;
	bool truncated;
	char child_error[PN_ERROR_LEN];
	char detail[2048];
	char method[300];            /* the recovery's I/O method */
	enum pn_violation_kind kind; /* the judgement's (judge.h J1); NONE: ok, or no verdict */
};

/* One mode's outcome. */
struct mode_result {
	enum pn_mode mode;
	uint64_t runs, failed, acked, lost;
	char method[300];
	char first_failure[2300];
	enum pn_violation_kind first_kind; /* the first failure's, PN_VIOL_NONE: no verdict */
};

static int parse(int argc, char **argv, struct crash_opts *o)
{
	int at, rc = pn_opts_parse(&pn_crashtest_spec, argc, argv, o, &at);

	if (rc >= 0)
		return rc;
	o->scenario = argv[at];
	if (o->modes_arg) {
		o->nmodes = pn_cli_parse_modes("crashtest", o->modes_arg, o->modes);
		return o->nmodes < 0 ? 2 : -1;
	}
	return -1;
}

/* ---- the child ---- */

static int child_fd = -1;
static FILE *report; /* stdout, or stderr when JSON goes to stdout (cli.h CL4) */

static void send_msg(uint32_t type, uint64_t a, uint64_t b, const void *data, uint32_t len)
{
	struct msg m = {type, len, a, b};
	struct iovec iov[2] = {{&m, sizeof(m)}, {(void *)data, len}};
	size_t left = sizeof(m) + len;
	while (left) {
		ssize_t n = writev(child_fd, iov, 2);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			_exit(4); /* the parent is gone */
		left -= (size_t)n;
		for (int i = 0; i < 2 && n > 0; i++) {
			size_t k = PN_MIN((size_t)n, iov[i].iov_len);
			iov[i].iov_base = (uint8_t *)iov[i].iov_base + k;
			iov[i].iov_len -= k;
			n -= (ssize_t)k;
		}
	}
}

static void child_wal(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	send_msg(MSG_WAL, start, end, rec, len);
}

static void child_ack(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns)
{
	send_msg(MSG_ACK, xid, lsn, NULL, 0);
}

static void child_main(struct pn_disk *d, int fd)
{
	child_fd = fd;
	d->on_wal = child_wal;
	d->on_ack = child_ack;
	pn_engine_start(d->e);
	int rc = pn_disk_run(d, 0); /* the workload has no end: only the kill stops it */
	char text[PN_ERROR_LEN + 300], page[16];
	const struct pn_violation *viol = pn_engine_violation_of(d->e);
	if (rc == 1)
		snprintf(text, sizeof(text), "runtime invariant broken: %s page %s: %s",
			 pn_violation_name(viol->kind),
			 pn_cli_page_text(viol->page, page, sizeof(page)), viol->detail);
	else
		snprintf(text, sizeof(text), "%s", rc == 2 ? d->error : "the workload ended");
	send_msg(MSG_ERROR, 0, 0, text, (uint32_t)strlen(text));
	_exit(1);
}

/* ---- the parent ---- */

/* A commit the child acknowledged: xid, the end LSN of its record. */
static void add_ack(struct run_state *s, uint32_t xid, pn_lsn lsn)
{
	if (s->nacked == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->xids = realloc(s->xids, s->cap * sizeof(uint32_t));
		s->lsns = realloc(s->lsns, s->cap * sizeof(pn_lsn));
		PN_ASSERT(s->xids && s->lsns);
	}
	s->xids[s->nacked] = xid;
	s->lsns[s->nacked++] = lsn;
}

static bool take_msg(struct run_state *s, size_t *at)
{
	struct msg m;
	if (s->len - *at < sizeof(m))
		return false;
	memcpy(&m, s->buf + *at, sizeof(m));
	if (s->len - *at - sizeof(m) < m.len)
		return false;
	const uint8_t *data = s->buf + *at + sizeof(m);
	*at += sizeof(m) + m.len;
	if (m.type == MSG_WAL && !pn_oracle_add(s->oracle, data, m.len, m.a, m.b))
		snprintf(s->detail, sizeof(s->detail),
			 "the oracle cannot decode the record at %llX", (unsigned long long)m.a);
	if (m.type == MSG_ERROR)
		snprintf(s->child_error, sizeof(s->child_error), "%.*s", (int)m.len,
			 (const char *)data);
	if (m.type == MSG_ACK)
		add_ack(s, (uint32_t)m.a, m.b);
	return true;
}

/* Reads what the pipe holds (waiting at most wait_ms); false at end of file. */
static bool read_pipe(struct run_state *s, int fd, int wait_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, wait_ms) <= 0)
		return true;
	if (s->cap_buf - s->len < 65536) {
		s->cap_buf = PN_MAX(2 * s->cap_buf, s->len + 65536);
		s->buf = realloc(s->buf, s->cap_buf);
		PN_ASSERT(s->buf != NULL);
	}
	ssize_t n = read(fd, s->buf + s->len, s->cap_buf - s->len);
	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	s->len += (size_t)n;
	size_t at = 0;
	while (take_msg(s, &at))
		;
	memmove(s->buf, s->buf + at, s->len - at);
	s->len -= at;
	return true;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Forks the child, kills it after kill_ms, collects its messages. False: no child. */
static bool crash_child(struct pn_disk *d, struct run_state *s, uint64_t kill_ms)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return false;
	fcntl(fds[1], F_SETPIPE_SZ, 1 << 20); /* rarely a blocked child (best effort) */
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		close(fds[0]);
		child_main(d, fds[1]);
	}
	close(fds[1]);
	uint64_t start = mono_ms(), at = start + kill_ms;
	bool open = true;
	for (uint64_t now = start; open && now < at; now = mono_ms())
		open = read_pipe(s, fds[0], (int)(at - now));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	while (open)
		open = read_pipe(s, fds[0], -1);
	s->truncated = s->len != 0;
	close(fds[0]);
	return true;
}

/* Recovers from the files and judges the result; false (s->detail) when it fails. */
static bool recover_and_judge(const struct pn_scenario *sc, const struct pn_disk_dir *dir,
			      struct run_state *s, pn_lsn *end_out)
{
	struct pn_disk *r = calloc(1, sizeof(*r));
	PN_ASSERT(r != NULL);
	bool ok = false;
	if (!pn_disk_open(r, sc, dir, false, false)) {
		snprintf(s->detail, sizeof(s->detail), "cannot open the files: %s", r->error);
		goto out;
	}
	int rc = pn_disk_recover(r);
	*end_out = pn_engine_recovery_end(r->e);
	snprintf(s->method, sizeof(s->method), "%s, %s", r->method_note,
		 r->direct ? "O_DIRECT" : "buffered");
	if (rc != 0) { /* C3 */
		snprintf(s->detail, sizeof(s->detail), "recovery %s: %s",
			 rc == 1 ? "failed" : "did not finish",
			 rc == 1 ? pn_engine_violation_of(r->e)->detail : r->error);
		s->kind = rc == 1 ? pn_engine_violation_of(r->e)->kind : PN_VIOL_RECOVERY;
		goto out;
	}
	uint32_t page_size = pn_engine_geometry(r->e).page_size;
	uint8_t *expected = malloc(page_size), *found = malloc(page_size);
	uint32_t page;
	PN_ASSERT(expected && found);
	if (!pn_check_acked(s->xids, s->lsns, s->nacked, *end_out, s->detail, sizeof(s->detail)))
		s->kind = PN_VIOL_DURABILITY; /* C1 */
	else                                  /* C2 */
		s->kind = pn_judge_pages(r->e, s->oracle, *end_out, expected, found, s->detail,
					 sizeof(s->detail), &page);
	ok = s->kind == PN_VIOL_NONE;
	free(expected);
	free(found);
out:
	pn_disk_close(r);
	free(r);
	return ok;
}

/* The test hook (tests/crashtest_kind.sh): with PN_TEST_LOST_ACK=N in the environment, run
 * N (from 1) takes one more acknowledged commit than the child reported, past every record:
 * a commit that recovery must lose, judged C1 (durability). */
static bool lost_ack_hook(uint64_t run)
{
	const char *env = getenv("PN_TEST_LOST_ACK");
	return env && strtoull(env, NULL, 10) == run + 1;
}

/* The oracle, the checker's own (pn_check_oracle_new), and C2 on the freshly formatted
 * files: each mode's storage must hold the pages the oracle starts from, read as the
 * judgement reads them (pushdown keeps them in the page server's file, not in `data`). */
static bool oracle_of(struct pn_disk *d, struct run_state *s)
{
	struct pn_engine *e = d->e;
	uint32_t page_size = pn_engine_geometry(e).page_size;
	uint8_t *expected = malloc(page_size), *found = malloc(page_size);
	uint32_t page;
	PN_ASSERT(expected && found);
	s->oracle = pn_check_oracle_new(e);
	bool ok = pn_check_recovered_pages(e, s->oracle, pn_engine_wal_flushed(e), expected, found,
					   s->detail, sizeof(s->detail), &page);
	if (!ok) {
		size_t l = strlen(s->detail);
		snprintf(s->detail + l, sizeof(s->detail) - l, " (in the files as formatted)");
	}
	free(expected);
	free(found);
	return ok;
}

static void free_state(struct run_state *s)
{
	pn_oracle_free(s->oracle);
	free(s->xids);
	free(s->lsns);
	free(s->buf);
}

/* One crash and its verdict; 2 when the files could not be made. */
static int one_run(const struct pn_scenario *sc, const struct pn_disk_dir *dir, uint64_t kill_ms,
		   uint64_t run, struct mode_result *res)
{
	struct pn_disk *d = calloc(1, sizeof(*d));
	struct run_state s = {0};
	pn_lsn end = 0;
	PN_ASSERT(d != NULL);
	if (!pn_disk_open(d, sc, dir, true, true)) {
		fprintf(stderr, "penumbra crashtest: %s\n", d->error);
		pn_disk_close(d);
		free(d);
		return 2;
	}
	bool formatted = oracle_of(d, &s);
	bool forked = formatted && crash_child(d, &s, kill_ms);
	pn_disk_close(d);
	free(d);
	if (forked && lost_ack_hook(run))
		add_ack(&s, 0, UINT64_MAX); /* after every record the child wrote */
	bool ok = forked && !s.detail[0] && recover_and_judge(sc, dir, &s, &end);
	if (formatted && !forked)
		snprintf(s.detail, sizeof(s.detail), "cannot start the child: %s", strerror(errno));
	if (ok && s.child_error[0]) {
		snprintf(s.detail, sizeof(s.detail), "the child stopped before the kill: %s",
			 s.child_error);
		ok = false;
	} else if (!ok && s.child_error[0]) {
		size_t l = strlen(s.detail);
		snprintf(s.detail + l, sizeof(s.detail) - l, " (the child had stopped: %s)",
			 s.child_error);
	}
	res->runs++;
	res->acked += s.nacked;
	if (!res->method[0])
		snprintf(res->method, sizeof(res->method), "%s", s.method);
	fprintf(report,
		"  run %llu: killed at %llu ms, %llu commits acknowledged, recovered WAL ends at %llX%s: %s\n",
		(unsigned long long)run + 1, (unsigned long long)kill_ms,
		(unsigned long long)s.nacked, (unsigned long long)end,
		s.truncated ? " (last message cut by the kill)" : "", ok ? "ok" : s.detail);
	if (!ok) {
		res->failed++;
		res->lost += s.kind == PN_VIOL_DURABILITY;
		if (!res->first_failure[0]) {
			snprintf(res->first_failure, sizeof(res->first_failure), "run %llu: %s",
				 (unsigned long long)run + 1, s.detail);
			res->first_kind = s.kind;
		}
	}
	free_state(&s);
	return 0;
}

static int crash_mode(struct pn_scenario *sc, const struct crash_opts *o,
		      const struct pn_disk_dir *dir, struct mode_result *res)
{
	struct pn_prng rng;
	pn_prng_seed(&rng, sc->seed, PN_STREAM_CRASH, res->mode);
	fprintf(report, "crashtest: %s, mode %s, %llu runs on %s\n", o->scenario,
		pn_mode_name(res->mode), (unsigned long long)o->runs, o->path);
	for (uint64_t i = 0; i < o->runs; i++) {
		uint64_t kill_ms = pn_prng_range(&rng, 0, o->max_time_ns / 1000000u);
		if (one_run(sc, dir, kill_ms, i, res) == 2)
			return 2;
		fflush(report);
	}
	fprintf(report,
		"%s: %llu runs, %llu commits acknowledged, %llu runs lost an acknowledged "
		"commit, %llu failed (I/O: %s)\n",
		pn_mode_name(res->mode), (unsigned long long)res->runs,
		(unsigned long long)res->acked, (unsigned long long)res->lost,
		(unsigned long long)res->failed, res->method[0] ? res->method : "-");
	return res->failed ? 1 : 0;
}

static int write_json(const struct crash_opts *o, FILE *f, const struct mode_result *res, int n)
{
	json_t *root = json_object(), *arr = json_array();
	json_object_set_new(root, "scenario", json_string(o->scenario));
	for (int i = 0; i < n; i++) {
		json_t *j = json_object();
		json_object_set_new(j, "mode", json_string(pn_mode_name(res[i].mode)));
		json_object_set_new(j, "runs", json_integer((json_int_t)res[i].runs));
		json_object_set_new(j, "commits_acknowledged",
				    json_integer((json_int_t)res[i].acked));
		json_object_set_new(j, "runs_losing_a_commit",
				    json_integer((json_int_t)res[i].lost));
		json_object_set_new(j, "runs_failed", json_integer((json_int_t)res[i].failed));
		json_object_set_new(j, "first_failure", json_string(res[i].first_failure));
		json_object_set_new(j, "first_failure_kind",
				    res[i].first_kind != PN_VIOL_NONE
					    ? json_string(pn_violation_name(res[i].first_kind))
					    : json_null());
		json_object_set_new(j, "io", json_string(res[i].method));
		json_array_append_new(arr, j);
	}
	json_object_set_new(root, "results", arr);
	return pn_realdisk_write_json("crashtest", root, f, o->json);
}

int pn_cmd_crashtest(int argc, char **argv)
{
	struct crash_opts o = {0};
	struct mode_result res[PN_CLI_MAX_MODES] = {0};
	struct pn_scenario sc;
	struct pn_disk_dir dir;
	FILE *json = NULL;
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	rc = pn_realdisk_prepare("crashtest", o.scenario, o.path, o.force, o.json, &sc, &json,
				 &dir);
	if (rc >= 0)
		return rc;
	if (o.seed_set)
		sc.seed = o.seed;
	report = json == stdout ? stderr : stdout;
	if (o.nmodes == 0)
		o.modes[o.nmodes++] = sc.protocol.mode;
	rc = 0;
	for (int i = 0; i < o.nmodes && rc != 2; i++) { /* locked throughout (disk.h DK5) */
		pn_cli_set_mode(&sc, res[i].mode = o.modes[i]);
		rc = pn_cli_worst(rc, crash_mode(&sc, &o, &dir, &res[i]));
	}
	for (int i = 0; i < o.nmodes; i++)
		if (res[i].first_failure[0])
			fprintf(stderr, "penumbra crashtest: %s: LOST OR WRONG after a crash: %s\n",
				pn_mode_name(res[i].mode), res[i].first_failure);
	if (json)
		rc = pn_cli_worst(rc, write_json(&o, json, res, o.nmodes));
	pn_scenario_free(&sc);
	pn_disk_dir_unlock(&dir); /* last: the command is over */
	return rc;
}

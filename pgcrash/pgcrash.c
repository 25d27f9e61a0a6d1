/*
 * pgcrash.c: the cluster, the workload and its oracle, and the recording (pgcrash layer;
 * pgcrash.h says the phases, docs/pgcrash.md why they are so).
 *
 * Rules:
 *   PG1 Every program of PostgreSQL runs through pn_pgc_exec: as the server's user, in its
 *      own process group, with a timeout after which the whole group is killed. No call
 *      waits without a bound.
 *   PG2 A server this file started is stopped (-m immediate) on every path out, and killed by
 *      its postmaster.pid when pg_ctl cannot stop it (pn_pgc_stop).
 *   PG3 The oracle is the seed: transaction k's statements and the table after any prefix of
 *      the commits come from the same PRNG stream, never from PostgreSQL.
 *   PG4 A server judging a crash state runs with fsync=off: nothing crashes it again, so its
 *      own flushes are never needed, and PostgreSQL then skips the fsync of every file of
 *      the data directory it does before crash recovery and the flushes of its end-of-
 *      recovery checkpoint. Recovery reads and replays exactly as with fsync=on.
 */
#define _GNU_SOURCE
#include "pgcrash.h"

#include "prng.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PORT PN_PGC_PORT

static const char *const verdict_names[] = {"pass",    "no_start", "lost_commit", "not_prefix",
					    "amcheck", "read",     "error"};

const char *pn_pgc_verdict_name(enum pn_pgc_verdict v)
{
	return (unsigned)v <= PN_PGC_ERROR ? verdict_names[v] : "?";
}

static bool is_program(const char *bindir, const char *name, char *why, size_t len)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/%s", bindir, name);
	if (access(p, X_OK) != 0) {
		snprintf(why, len, "%s: %s (--pg-bindir must hold PostgreSQL's programs)", p,
			 strerror(errno));
		return false;
	}
	return true;
}

static bool copy_file(const char *from, const char *to, char *why, size_t len)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
	bool ok = in >= 0;
	if (ok)
		out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ok = ok && out >= 0;
	for (ssize_t n; ok && (n = read(in, buf, sizeof(buf))) != 0;)
		ok = n > 0 && write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		ok = false;
	if (!ok)
		snprintf(why, len, "cannot copy %s to %s: %s", from, to, strerror(errno));
	return ok;
}

bool pn_pgc_init(struct pn_pgc *pg, const struct pn_pgc_config *cfg, const char *work,
		 const char *recorder, char *why, size_t len)
{
	memset(pg, 0, sizeof(*pg));
	pg->cfg = *cfg;
	static const char *const programs[] = {"initdb", "pg_ctl", "postgres", "psql"};
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		if (!is_program(cfg->bindir, programs[i], why, len))
			return false;
	if (!realpath(work, pg->work) && errno != ENOENT) {
		snprintf(why, len, "%s: %s", work, strerror(errno));
		return false;
	}
	if (mkdir(work, 0700) != 0 || !realpath(work, pg->work)) {
		snprintf(why, len, "%s: %s (the work folder must not exist)", work,
			 strerror(errno));
		return false;
	}
	pg->uid = (uint32_t)getuid();
	pg->gid = (uint32_t)getgid();
	if (geteuid() == 0) {
		const struct passwd *pw = getpwnam("postgres");
		if (!pw) {
			snprintf(why, len,
				 "running as root and there is no postgres user to run "
				 "the server");
			return false;
		}
		pg->uid = pw->pw_uid;
		pg->gid = pw->pw_gid;
		pg->as_user = true;
		if (chown(pg->work, pg->uid, pg->gid) != 0) {
			snprintf(why, len, "%s: chown: %s", pg->work, strerror(errno));
			return false;
		}
	}
	char out[256], *test[] = {"/usr/bin/test", "-w", pg->work, NULL};
	if (pn_pgc_exec(pg, test, NULL, 10, out, sizeof(out)) != 0) {
		snprintf(why, len,
			 "%s: the server's user cannot write it (a parent folder closed "
			 "to it?)",
			 pg->work);
		return false;
	}
	snprintf(pg->recorder, sizeof(pg->recorder), "%s/libpn_record.so", pg->work);
	return copy_file(recorder, pg->recorder, why, len);
}

/* The child of pn_pgc_exec: never returns. */
static void child(const struct pn_pgc *pg, char *const argv[], char *const envp[], int out)
{
	setpgid(0, 0);
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0)
		dup2(null, 0);
	dup2(out, 1);
	dup2(out, 2);
	/* nothing else of ours reaches PostgreSQL: a server left holding an executor's pipe
	 * (model/exec_procs.h) would keep its reader waiting for the end of it */
	close_range(3, ~0u, 0);
	if (pg->as_user &&
	    (setgid(pg->gid) != 0 || initgroups("postgres", pg->gid) != 0 || setuid(pg->uid) != 0))
		_exit(126);
	if (chdir(pg->work) != 0)
		_exit(126);
	for (size_t i = 0; envp && envp[i]; i++)
		putenv(envp[i]);
	execv(argv[0], argv);
	dprintf(1, "%s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int64_t now_ms(void)
{
	struct timespec ts; /* real time bounds a real program, never a verdict */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int pn_pgc_exec(const struct pn_pgc *pg, char *const argv[], char *const envp[], uint32_t timeout_s,
		char *out, size_t len)
{
	int p[2];
	size_t n = 0;
	if (pipe2(p, O_CLOEXEC) != 0)
		return -2;
	pid_t pid = fork();
	if (pid == 0)
		child(pg, argv, envp, p[1]);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -2;
	}
	int64_t end = now_ms() + (int64_t)timeout_s * 1000;
	bool late = false;
	for (;;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int64_t left = end - now_ms();
		if (left <= 0) {
			late = true;
			break;
		}
		int r = poll(&pf, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		char buf[4096];
		ssize_t got = r > 0 ? read(p[0], buf, sizeof(buf)) : 0;
		if (got <= 0 && r != 0)
			break;
		for (ssize_t i = 0; i < got && n + 1 < len; i++)
			out[n++] = buf[i];
	}
	if (len)
		out[n] = '\0';
	close(p[0]);
	if (late)
		kill(-pid, SIGKILL);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (late)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* pg_ctl ARGS... on dir: exit status, output in out. */
static int pg_ctl(const struct pn_pgc *pg, const char *dir, const char *action, const char *mode,
		  const char *extra, char *const envp[], char *out, size_t len)
{
	char prog[600], t[16], log[600], opts[900];
	snprintf(prog, sizeof(prog), "%s/pg_ctl", pg->cfg.bindir);
	snprintf(t, sizeof(t), "%" PRIu32, pg->cfg.timeout_s);
	snprintf(log, sizeof(log), "%s.log", dir);
	snprintf(opts, sizeof(opts), "-c listen_addresses= -p " PORT " %s", extra ? extra : "");
	char *argv[] = {prog, "-D", (char *)dir,  "-l", log,  "-w",           "-t",
			t,    "-m", (char *)mode, "-o", opts, (char *)action, NULL};
	return pn_pgc_exec(pg, argv, envp, pg->cfg.timeout_s + 10, out, len);
}

/* What dir's server log says went wrong, into why: its first PANIC or FATAL line with the
 * line before it (the checksum warning, say), else its last line. */
static void log_tail(const char *dir, char *why, size_t len)
{
	char path[600], line[1024], prev[1024] = "", last[1024] = "";
	snprintf(path, sizeof(path), "%s.log", dir);
	FILE *f = fopen(path, "r");
	why[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "FATAL:") || strstr(line, "PANIC:")) {
			snprintf(why, len, "%s%s%s", strstr(prev, "WARNING:") ? prev : "",
				 strstr(prev, "WARNING:") ? " / " : "", line);
			break;
		}
		if (!strstr(line, "CONTEXT:"))
			memcpy(prev, line, sizeof(prev));
		memcpy(last, line, sizeof(last));
	}
	if (f)
		fclose(f);
	if (!why[0])
		snprintf(why, len, "%s", last);
}

enum pn_pgc_start pn_pgc_start(const struct pn_pgc *pg, const char *dir, const char *sock,
			       bool judging, char *why, size_t len)
{
	char out[2048], extra[700], log[600];
	/* PG4: a judging server's own durability is never asked for */
	snprintf(extra, sizeof(extra), "-k %s%s", sock, judging ? " -c fsync=off" : "");
	snprintf(log, sizeof(log), "%s.log", dir);
	unlink(log); /* this start's log alone (pg_ctl -l appends) */
	int rc = pg_ctl(pg, dir, "start", "fast", extra, NULL, out, sizeof(out));
	if (rc == 0)
		return PN_PGC_STARTED;
	log_tail(dir, why, len);
	if (!why[0])
		snprintf(why, len, "%.400s", out);
	if (rc != -1 && !strstr(out, "did not start in time"))
		return PN_PGC_EXITED;
	snprintf(why + strlen(why), len - strlen(why), " (not ready within %" PRIu32 " s)",
		 pg->cfg.timeout_s);
	return PN_PGC_LATE;
}

/* Whether process pid (of the server's user) has dir as one of its arguments. */
static bool runs_on(pid_t pid, uint32_t uid, const char *dir)
{
	char path[64], args[4096];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (stat(path, &st) != 0 || st.st_uid != uid)
		return false;
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(args, 1, sizeof(args) - 1, f) : 0;
	if (f)
		fclose(f);
	args[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(args + i) + 1)
		if (strcmp(args + i, dir) == 0)
			return true;
	return false;
}

/* PG2: a server that never wrote its postmaster.pid (pg_ctl starts it in a session of its
 * own) is found by its -D argument, this data directory, and killed. */
static void kill_strays(const struct pn_pgc *pg, const char *dir)
{
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end == '\0' && pid > 1 && pid != getpid() && runs_on((pid_t)pid, pg->uid, dir))
			kill((pid_t)pid, SIGKILL);
	}
	if (d)
		closedir(d);
}

void pn_pgc_stop(const struct pn_pgc *pg, const char *dir)
{
	char out[1024], pidfile[600];
	pg_ctl(pg, dir, "stop", "immediate", NULL, NULL, out, sizeof(out));
	snprintf(pidfile, sizeof(pidfile), "%s/postmaster.pid", dir);
	FILE *f = fopen(pidfile, "r");
	long pid = 0;
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (pid > 1 && kill((pid_t)pid, 0) == 0) { /* PG2: pg_ctl could not stop it */
		kill((pid_t)pid, SIGKILL);
		for (int i = 0; i < 100 && kill((pid_t)pid, 0) == 0; i++)
			usleep(20000);
	}
	kill_strays(pg, dir);
}

int pn_pgc_sql_steps(const struct pn_pgc *pg, const char *sock, const char *const *sql, uint32_t n,
		     char *out, size_t len)
{
	char prog[600];
	char *argv[14 + 2 * PN_PGC_STEPS_MAX + 1] = {prog, "-X",         "-At",
						     "-q", "-v",         "ON_ERROR_STOP=1",
						     "-h", (char *)sock, "-p",
						     PORT, "-U",         "postgres",
						     "-d", "postgres"};
	size_t k = 14;
	snprintf(prog, sizeof(prog), "%s/psql", pg->cfg.bindir);
	for (uint32_t i = 0; i < n && i < PN_PGC_STEPS_MAX; i++) {
		argv[k++] = "-c";
		argv[k++] = (char *)sql[i];
	}
	argv[k] = NULL;
	return pn_pgc_exec(pg, argv, NULL, pg->cfg.timeout_s, out, len);
}

int pn_pgc_sql(const struct pn_pgc *pg, const char *sock, const char *sql, char *out, size_t len)
{
	return pn_pgc_sql_steps(pg, sock, &sql, 1, out, len);
}

/* ---- the workload and its oracle (PG3) ---- */

/* Transaction k's statements, each as (kind, id, value): what both the SQL and the oracle
 * are made of. kind: 'u' update, 'i' insert, 'd' delete. */
struct stmt {
	char kind;
	uint32_t id;
	int64_t v;
};

static uint32_t txn_stmts(const struct pn_pgc_config *cfg, uint32_t k, struct stmt *s, uint32_t cap)
{
	struct pn_prng r;
	uint32_t n = 0;
	pn_prng_seed(&r, cfg->seed, PN_STREAM_WORKLOAD, k);
	for (uint32_t u = 0; u < cfg->updates && n < cap; u++)
		s[n++] = (struct stmt){'u', (uint32_t)pn_prng_range(&r, 1, cfg->rows),
				       (int64_t)k * 100 + u};
	if (k % 3 == 0 && n < cap)
		s[n++] = (struct stmt){'i', cfg->rows + k, k};
	if (k % 5 == 0 && n < cap)
		s[n++] = (struct stmt){'d', (uint32_t)pn_prng_range(&r, 1, cfg->rows), 0};
	return n;
}

void pn_pgc_txn_sql(const struct pn_pgc_config *cfg, uint32_t k, char *out, size_t len)
{
	struct stmt s[64];
	uint32_t n = txn_stmts(cfg, k, s, 64);
	size_t at = (size_t)snprintf(out, len, "BEGIN;");
	for (uint32_t i = 0; i < n && at < len; i++) {
		if (s[i].kind == 'u')
			at += (size_t)snprintf(out + at, len - at,
					       " UPDATE pn SET v = %" PRId64 " WHERE id = %" PRIu32
					       ";",
					       s[i].v, s[i].id);
		else if (s[i].kind == 'i')
			at += (size_t)snprintf(out + at, len - at,
					       " INSERT INTO pn VALUES (%" PRIu32 ", %" PRId64
					       ", repeat('y', %" PRIu32 "));",
					       s[i].id, s[i].v, cfg->pad);
		else
			at += (size_t)snprintf(out + at, len - at,
					       " DELETE FROM pn WHERE id = %" PRIu32 ";", s[i].id);
	}
	if (at < len)
		snprintf(out + at, len - at, " COMMIT;");
}

void pn_pgc_oracle(const struct pn_pgc_config *cfg, uint32_t commits, int64_t *v)
{
	for (uint32_t id = 1; id <= cfg->rows + cfg->transactions; id++)
		v[id] = id <= cfg->rows ? 0 : -1;
	for (uint32_t k = 1; k <= commits; k++) {
		struct stmt s[64];
		uint32_t n = txn_stmts(cfg, k, s, 64);
		for (uint32_t i = 0; i < n; i++) {
			if (s[i].kind == 'u' && v[s[i].id] >= 0)
				v[s[i].id] = s[i].v;
			else if (s[i].kind == 'i')
				v[s[i].id] = s[i].v;
			else if (s[i].kind == 'd')
				v[s[i].id] = -1;
		}
	}
}

/* ---- the recording ---- */

/* Appends a client record (ACK, MARK) under the recorder's lock (oplog.h O1). */
static bool client_record(const char *log, enum pn_fop_kind kind, uint64_t off)
{
	int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	bool ok = fcntl(fd, F_SETLKW, &fl) == 0;
	struct pn_fop_head h = {.magic = PN_FOP_MAGIC,
				.kind = (uint16_t)kind,
				.pid = (uint32_t)getpid(),
				.path_len = 1,
				.off = off};
	ok = ok && write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) && write(fd, ".", 1) == 1;
	return close(fd) == 0 && ok; /* closing drops the lock */
}

static bool setup_conf(const struct pn_pgc *pg, const char *data, char *why, size_t len)
{
	char path[640]; /* data (at most 599) and the file name */
	snprintf(path, sizeof(path), "%s/postgresql.conf", data);
	FILE *f = fopen(path, "a");
	if (!f) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return false;
	}
	fprintf(f,
		"\n# penumbra pgcrash\nfull_page_writes = %s\nwal_log_hints = %s\n"
		"shared_buffers = 1MB\nmin_wal_size = 2MB\nmax_wal_size = 1GB\ncheckpoint_timeout = 1d\n"
		"autovacuum = off\nfsync = on\nsynchronous_commit = on\n",
		pg->cfg.fpw ? "on" : "off", pg->cfg.wal_log_hints ? "on" : "off");
	return fclose(f) == 0;
}

static bool initdb(const struct pn_pgc *pg, const char *data, char *why, size_t len)
{
	char prog[600], out[4096];
	snprintf(prog, sizeof(prog), "%s/initdb", pg->cfg.bindir);
	char *argv[] = {prog,         "-D",
			(char *)data, "-U",
			"postgres",   "-A",
			"trust",      "--wal-segsize=1",
			"--no-sync",  pg->cfg.checksums ? "-k" : "-N",
			NULL};
	int rc = pn_pgc_exec(pg, argv, NULL, 120, out, sizeof(out));
	if (rc != 0) {
		size_t n = strlen(out);
		snprintf(why, len, "%s failed (status %d): ...%s", prog, rc,
			 out + (n > 400 ? n - 400 : 0)); /* its last lines say why */
		return false;
	}
	return setup_conf(pg, data, why, len);
}

/* The steps of the setup before the workload's own: the templates dropped (each state's
 * copy is then a third of the cluster), the extensions the judge uses. */
static bool setup_common(const struct pn_pgc *pg, const char *sock, char *out, size_t len)
{
	const char *const steps[] = {"UPDATE pg_database SET datistemplate = false WHERE datname "
				     "IN ('template0', 'template1')",
				     "DROP DATABASE template0", "DROP DATABASE template1",
				     "CREATE EXTENSION amcheck; CREATE EXTENSION pg_prewarm"};
	int rc = 0;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && rc == 0; i++)
		rc = pn_pgc_sql(pg, sock, steps[i], out, len);
	return rc == 0;
}

/* The built-in table, or the user's setup and its first digest (workload.c WL1). */
static bool setup_workload(const struct pn_pgc *pg, const char *sock, char *out, size_t len)
{
	char sql[512];
	if (pg->cfg.workload != PN_PGC_BUILTIN)
		return pn_pgc_user_setup(pg, sock, out, len) &&
		       pn_pgc_sql(pg, sock, "VACUUM ANALYZE", out, len) == 0 &&
		       pn_pgc_digest_log(pg, sock, out, len);
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE pn (id int PRIMARY KEY, v bigint NOT NULL, pad text NOT NULL); "
		 "INSERT INTO pn SELECT i, 0, repeat('x', %" PRIu32
		 ") FROM generate_series(1, %" PRIu32 ") i;",
		 pg->cfg.pad, pg->cfg.rows);
	return pn_pgc_sql(pg, sock, sql, out, len) == 0 &&
	       pn_pgc_sql(pg, sock, "VACUUM ANALYZE pn", out, len) == 0;
}

/* The setup, then a checkpoint and a clean stop. */
static bool setup(const struct pn_pgc *pg, const char *data, const char *sock, char *why,
		  size_t len)
{
	static char out[4096];
	out[0] = '\0';
	if (pn_pgc_start(pg, data, sock, false, why, len) != PN_PGC_STARTED) {
		pn_pgc_stop(pg, data);
		return false;
	}
	bool ok = setup_common(pg, sock, out, sizeof(out)) &&
		  setup_workload(pg, sock, out, sizeof(out)) &&
		  pn_pgc_sql(pg, sock, "CHECKPOINT", out, sizeof(out)) == 0;
	char stop[1024];
	int st = pg_ctl(pg, data, "stop", "fast", NULL, NULL, stop, sizeof(stop));
	if (!ok || st != 0) {
		snprintf(why, len, "the setup failed (stop %d): %.600s%.200s", st, out, stop);
		pn_pgc_stop(pg, data);
		return false;
	}
	return true;
}

/* Transaction k on the recorded server: the built-in's SQL or the user's (workload.c). */
static int transaction(const struct pn_pgc *pg, const struct pn_pgc_script *s, const char *sock,
		       uint32_t k, char *out, size_t len)
{
	static char sql[8192];
	if (pg->cfg.workload != PN_PGC_BUILTIN)
		return pn_pgc_user_txn(pg, s, sock, k, out, len);
	pn_pgc_txn_sql(&pg->cfg, k, sql, sizeof(sql));
	return pn_pgc_sql(pg, sock, sql, out, len);
}

/* The workload on the recorded server: each commit logged as acknowledged when psql (or
 * pgbench) exits 0; a user's workload's digest after each (workload.c WL1). */
static bool workload(const struct pn_pgc *pg, const char *sock, const char *log, char *why,
		     size_t len)
{
	static char out[4096];
	struct pn_pgc_script s = {0};
	if (pg->cfg.workload == PN_PGC_SQL && !pn_pgc_script_load(pg->cfg.script, &s, why, len))
		return false;
	bool ok = true;
	for (uint32_t k = 1; ok && k <= pg->cfg.transactions; k++) {
		int rc = transaction(pg, &s, sock, k, out, sizeof(out));
		if (rc != 0 || !client_record(log, PN_FOP_ACK, k)) {
			snprintf(why, len, "transaction %" PRIu32 " failed (status %d): %.600s", k,
				 rc, out);
			ok = false;
		} else if (pg->cfg.workload != PN_PGC_BUILTIN) {
			ok = pn_pgc_digest_log(pg, sock, why, len);
		}
		if (ok && pg->cfg.checkpoint_every && k % pg->cfg.checkpoint_every == 0 &&
		    (rc = pn_pgc_sql(pg, sock, "CHECKPOINT", out, sizeof(out))) != 0) {
			snprintf(why, len, "CHECKPOINT failed (psql %d): %.300s", rc, out);
			ok = false;
		}
	}
	pn_pgc_script_free(&s);
	return ok;
}

/* A user's script file copied into the work folder (a recording keeps what it ran), the
 * configuration then naming the copy. */
static bool keep_script(struct pn_pgc *pg, char *why, size_t len)
{
	char copy[700];
	if (pg->cfg.workload == PN_PGC_BUILTIN ||
	    (pg->cfg.workload == PN_PGC_PGBENCH && pn_pgc_pgbench_builtin(pg->cfg.script)))
		return true;
	snprintf(copy, sizeof(copy), "%s/workload.%s", pg->work,
		 pg->cfg.workload == PN_PGC_SQL ? "sql" : "pgbench");
	if (!copy_file(pg->cfg.script, copy, why, len))
		return false;
	if (snprintf(pg->cfg.script, sizeof(pg->cfg.script), "%s", copy) >=
	    (int)sizeof(pg->cfg.script)) {
		snprintf(why, len, "%s: the path is too long", copy);
		return false;
	}
	return true;
}

bool pn_pgc_record(struct pn_pgc *pg, char *why, size_t len)
{
	char data[600], base[600], sock[600], log[600], env_dir[700], env_log[700], env_pre[700];
	snprintf(data, sizeof(data), "%s/data", pg->work);
	snprintf(base, sizeof(base), "%s/base", pg->work);
	snprintf(sock, sizeof(sock), "%s", pg->work);
	snprintf(log, sizeof(log), "%s/ops.log", pg->work);
	if (!keep_script(pg, why, len) || !initdb(pg, data, why, len) ||
	    !setup(pg, data, sock, why, len) || !pn_pgc_copy_tree(pg, data, base, why, len))
		return false;
	int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || fchown(fd, pg->uid, pg->gid) != 0 || close(fd) != 0) {
		snprintf(why, len, "%s: %s", log, strerror(errno));
		return false;
	}
	snprintf(env_dir, sizeof(env_dir), "PN_RECORD_DIR=%s", data);
	snprintf(env_log, sizeof(env_log), "PN_RECORD_LOG=%s", log);
	snprintf(env_pre, sizeof(env_pre), "LD_PRELOAD=%s", pg->recorder);
	char *envp[] = {env_dir, env_log, env_pre, NULL};
	char out[2048], extra[700];
	snprintf(extra, sizeof(extra), "-k %s", sock);
	int rc = pg_ctl(pg, data, "start", "fast", extra, envp, out, sizeof(out));
	bool ok = rc == 0 && client_record(log, PN_FOP_MARK, PN_MARK_WORKLOAD) &&
		  workload(pg, sock, log, why, len) && client_record(log, PN_FOP_MARK, PN_MARK_END);
	if (rc != 0)
		log_tail(data, why, len);
	if (ok && (rc = pg_ctl(pg, data, "stop", "fast", NULL, NULL, out, sizeof(out))) != 0) {
		snprintf(why, len, "the recorded server did not stop (status %d): %.300s", rc, out);
		ok = false;
	}
	if (!ok)
		pn_pgc_stop(pg, data);
	return ok;
}

/*
 * workload.c: the workloads users bring (pgcrash layer; pgcrash.h says the phases,
 * docs/pgcrash.md section 1 the forms): an SQL file, or pgbench with a built-in script or a
 * script file of the user's.
 *
 *   SQL file   text up to a line "-- transactions" is the setup (one psql call, before the
 *              base image); each later non-empty line that is not a "--" comment is one
 *              transaction, one psql -c call (its statements run as one transaction).
 *   pgbench    the setup is `pgbench -i -s 1`; transaction k is `pgbench -n -t 1
 *              --random-seed SEED+k`, with -b NAME or -f FILE: one transaction of the script.
 *
 * Rules:
 *   WL1 The oracle of a user's workload is what the client read: after the setup and after
 *      each acknowledged commit, the client asks the recorded server for pn_digest(), an
 *      MD5 over every table of schema public (each table's rows as text, sorted), and keeps
 *      it as line k of work/digests. A recovered database passes PC2/PC3 when its digest is
 *      one of those of k >= acknowledged commits. The query is part of the recorded run
 *      (it reads pages, and may set hint bits, as any reader does).
 *   WL2 A script is checked before anything runs: a file that cannot be read, an empty
 *      one, an SQL file without its marker or without a transaction, or a script that
 *      script_check.c refuses (SC1-SC4, FILE:LINE:COL) is an error naming it (exit 2).
 */
#define _GNU_SOURCE
#include "pgcrash.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SCRIPT_BYTES_MAX (1u << 20)
#define SCRIPT_LINES_MAX 10000u

static const char *const builtins[] = {"tpcb-like", "simple-update", "select-only"};

bool pn_pgc_pgbench_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strcmp(name, builtins[i]) == 0)
			return true;
	return false;
}

/* The whole of a regular file path (at most SCRIPT_BYTES_MAX), NUL-terminated; NULL with why. */
static char *read_whole(const char *path, char *why, size_t len)
{
	struct stat st;
	FILE *f = fopen(path, "r");
	char *t = NULL;
	if (!f || fstat(fileno(f), &st) != 0) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode) || st.st_size > SCRIPT_BYTES_MAX) {
		snprintf(why, len, "%s: not a regular file of at most %u bytes", path,
			 SCRIPT_BYTES_MAX);
	} else if ((t = malloc((size_t)st.st_size + 1)) != NULL) {
		size_t n = fread(t, 1, (size_t)st.st_size, f);
		t[n] = '\0';
		if (strlen(t) != n) {
			snprintf(why, len, "%s: a NUL byte in it: not a script", path);
			free(t);
			t = NULL;
		}
	}
	if (f)
		fclose(f);
	return t;
}

/* read_whole, and NULL with why when the text is only blanks. */
static char *read_script(const char *path, char *why, size_t len)
{
	char *t = read_whole(path, why, len);
	if (t && !t[strspn(t, " \t\r\n")]) {
		snprintf(why, len, "%s: empty", path);
		free(t);
		t = NULL;
	}
	return t;
}

bool pn_pgc_pgbench_load(const char *path, char *why, size_t len)
{
	char *t = read_script(path, why, len);
	bool ok = t && pn_pgc_pgbench_check(path, t, why, len);
	free(t);
	return ok;
}

/* Whether line (NUL-terminated, no newline) is blank or a "--" comment. */
static bool blank(const char *line)
{
	line += strspn(line, " \t\r");
	return line[0] == '\0' || strncmp(line, "--", 2) == 0;
}

bool pn_pgc_script_load(const char *path, struct pn_pgc_script *s, char *why, size_t len)
{
	*s = (struct pn_pgc_script){0};
	if (!(s->text = read_script(path, why, len)) ||
	    !pn_pgc_sql_check(path, s->text, why, len)) {
		pn_pgc_script_free(s);
		return false;
	}
	s->lines = calloc(SCRIPT_LINES_MAX, sizeof(char *));
	bool marker = false;
	for (char *p = s->text, *nl; s->lines && p && *p; p = nl ? nl + 1 : NULL) {
		if ((nl = strchr(p, '\n')))
			*nl = '\0';
		if (!marker) {
			marker = strncmp(p, "-- transactions", 15) == 0 && blank(p + 15);
			if (marker) /* the setup ends where the marker line began */
				*p = '\0';
			else if (nl)
				*nl = '\n';
			continue;
		}
		if (blank(p))
			continue;
		if (s->nlines == SCRIPT_LINES_MAX) {
			snprintf(why, len, "%s: more than %u transactions", path, SCRIPT_LINES_MAX);
			pn_pgc_script_free(s);
			return false;
		}
		s->lines[s->nlines++] = p;
	}
	s->setup = s->text;
	if (!s->lines || !marker || s->nlines == 0) {
		snprintf(why, len,
			 "%s: %s (an SQL workload is its setup, a line '-- transactions', then one "
			 "transaction a line)",
			 path,
			 !s->lines ? "out of memory"
			 : !marker ? "no line '-- transactions'"
				   : "no transaction after it");
		pn_pgc_script_free(s);
		return false;
	}
	return true;
}

void pn_pgc_script_free(struct pn_pgc_script *s)
{
	free(s->text);
	free(s->lines);
	*s = (struct pn_pgc_script){0};
}

/* WL1: pn_digest(), created by the setup in every user's workload. */
static const char digest_fn[] =
	"CREATE FUNCTION pn_digest() RETURNS text LANGUAGE plpgsql AS $f$ "
	"DECLARE r record; h text; d text := ''; BEGIN "
	"FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_namespace n ON n.oid = "
	"c.relnamespace WHERE c.relkind = 'r' AND n.nspname = 'public' ORDER BY c.relname LOOP "
	"EXECUTE format('SELECT md5(coalesce(string_agg(x::text, chr(10) ORDER BY x::text), "
	"'''')) FROM %s x', r.t) INTO h; d := d || r.t::text || ':' || h || chr(10); END LOOP; "
	"RETURN md5(d); END $f$";

static int pgbench(const struct pn_pgc *pg, const char *sock, const char *const *args, char *out,
		   size_t len)
{
	char prog[600];
	char *argv[24] = {prog, "-h", (char *)sock, "-p", PN_PGC_PORT, "-U", "postgres"};
	size_t n = 7;
	snprintf(prog, sizeof(prog), "%s/pgbench", pg->cfg.bindir);
	for (size_t i = 0; args[i] && n < 22; i++)
		argv[n++] = (char *)args[i];
	argv[n++] = "postgres";
	argv[n] = NULL;
	return pn_pgc_exec(pg, argv, NULL, pg->cfg.timeout_s * 10, out, len);
}

bool pn_pgc_user_setup(const struct pn_pgc *pg, const char *sock, char *why, size_t len)
{
	static char out[4096];
	struct pn_pgc_script s = {0};
	int rc = pn_pgc_sql(pg, sock, digest_fn, out, sizeof(out));
	const char *what = "pn_digest()";
	if (rc == 0 && pg->cfg.workload == PN_PGC_PGBENCH) {
		static const char *const init[] = {"-i", "-s", "1", "-q", NULL};
		what = "pgbench -i";
		rc = pgbench(pg, sock, init, out, sizeof(out));
	} else if (rc == 0) {
		what = "the SQL workload's setup";
		rc = pn_pgc_script_load(pg->cfg.script, &s, out, sizeof(out)) ? 0 : -2;
		if (rc == 0 && s.setup[strspn(s.setup, " \t\r\n")])
			rc = pn_pgc_sql(pg, sock, s.setup, out, sizeof(out));
		pn_pgc_script_free(&s);
	}
	if (rc != 0) {
		snprintf(why, len, "%s failed (status %d): %.600s", what, rc, out);
		return false;
	}
	return true;
}

int pn_pgc_user_txn(const struct pn_pgc *pg, const struct pn_pgc_script *s, const char *sock,
		    uint32_t k, char *out, size_t len)
{
	if (pg->cfg.workload == PN_PGC_SQL)
		return pn_pgc_sql(pg, sock, s->lines[k - 1], out, len);
	char seed[32];
	bool builtin = pn_pgc_pgbench_builtin(pg->cfg.script);
	snprintf(seed, sizeof(seed), "--random-seed=%" PRIu64, pg->cfg.seed + k);
	const char *const args[] = {"-n",           "-t", "1", seed, builtin ? "-b" : "-f",
				    pg->cfg.script, NULL};
	return pgbench(pg, sock, args, out, len);
}

bool pn_pgc_digest_log(const struct pn_pgc *pg, const char *sock, char *why, size_t len)
{
	char out[1024], path[640];
	int rc = pn_pgc_sql(pg, sock, "SELECT pn_digest()", out, sizeof(out));
	out[strcspn(out, "\n")] = '\0';
	if (rc != 0 || strlen(out) != 32) {
		snprintf(why, len, "pn_digest() failed (psql %d): %.400s", rc, out);
		return false;
	}
	snprintf(path, sizeof(path), "%s/digests", pg->work);
	FILE *f = fopen(path, "a");
	bool ok = f && fprintf(f, "%s\n", out) == 33;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		snprintf(why, len, "%s: %s", path, strerror(errno));
	return ok;
}

uint32_t pn_pgc_digests(const struct pn_pgc *pg, char (**out)[33])
{
	char path[640], line[64];
	uint32_t n = 0, cap = pg->cfg.transactions + 1;
	snprintf(path, sizeof(path), "%s/digests", pg->work);
	FILE *f = fopen(path, "r");
	*out = malloc(cap * sizeof(**out));
	while (f && *out && n < cap && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf((*out)[n++], 33, "%.32s", line);
	}
	if (f)
		fclose(f);
	return *out ? n : 0;
}

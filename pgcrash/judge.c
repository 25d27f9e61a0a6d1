/*
 * judge.c: real recovery of one crash state, judged (pgcrash layer; PC1-PC5 in pgcrash.h).
 *   PJ1 The oracle is the seed (pgcrash.c PG3): the table must equal the oracle's table after
 *      j commits for some acked <= j <= transactions (PC2, PC3); a table that equals one after
 *      fewer commits lost an acknowledged commit (PC2), one that equals none is PC3.
 *   PJ2 The server is stopped on every path out (pgcrash.c PG2).
 *   PJ3 postmaster.pid is removed before the start (not data; see pn_pgc_judge).
 *   PJ4 A user's workload (workload.c WL1): the database's pn_digest() must be the digest the
 *      client read after j commits for some j >= acked (PC2, PC3); an earlier one only is PC2.
 *   PJ5 amcheck covers every table (verify_heapam) and B-tree index (bt_index_check with
 *      heapallindexed) of schema public, of either workload (PC4).
 *   PJ6 The structure checks (PC4, PC5) run in one psql session, each step announced by an
 *      \echo marker: the last marker printed names the step that failed (their output is
 *      a few lines, printed at psql's exit after any error text).
 */
#define _GNU_SOURCE
#include "pgcrash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void say(struct pn_pgc_result *r, enum pn_pgc_verdict v, const char *fmt, const char *s)
{
	r->verdict = v;
	snprintf(r->detail, sizeof(r->detail), fmt, s);
	for (char *c = r->detail; *c; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
}

/* Parses "id|v" lines into v (-1: no row); false when a line is not one. */
static bool parse_rows(const char *out, int64_t *v, uint32_t ids)
{
	for (uint32_t i = 0; i <= ids; i++)
		v[i] = -1;
	for (const char *p = out; *p;) {
		uint32_t id;
		int64_t val;
		int used;
		if (sscanf(p, "%" SCNu32 "|%" SCNd64 "%n", &id, &val, &used) != 2 || id > ids)
			return false;
		v[id] = val;
		p += used;
		while (*p == '\n')
			p++;
	}
	return true;
}

/* PJ1: which prefix the table is (or -1), and the first row that differs from acked's. */
static void compare(const struct pn_pgc *pg, const int64_t *got, uint32_t acked,
		    struct pn_pgc_result *r)
{
	uint32_t ids = pg->cfg.rows + pg->cfg.transactions;
	int64_t *want = malloc((ids + 1) * sizeof(int64_t));
	int64_t match = -1;
	for (uint32_t j = 0; want && j <= pg->cfg.transactions && match < 0; j++) {
		pn_pgc_oracle(&pg->cfg, j, want);
		if (memcmp(want + 1, got + 1, ids * sizeof(int64_t)) == 0)
			match = j;
	}
	if (match >= (int64_t)acked) {
		r->verdict = PN_PGC_PASS;
		r->prefix = (uint32_t)match;
	} else if (want) {
		pn_pgc_oracle(&pg->cfg, acked, want);
		uint32_t id = 1;
		while (id < ids && want[id] == got[id])
			id++;
		r->verdict = match >= 0 ? PN_PGC_LOST : PN_PGC_PREFIX;
		r->prefix = match >= 0 ? (uint32_t)match : 0;
		snprintf(r->detail, sizeof(r->detail),
			 "%s: row id %" PRIu32 " has v %" PRId64 ", after the %" PRIu32
			 " acknowledged commits it has v %" PRId64 " (-1: no row)",
			 match >= 0 ? "the table is an earlier prefix" : "the table is no prefix",
			 id, got[id], acked, want[id]);
	}
	free(want);
}

static bool unreadable(const char *out)
{
	return strstr(out, "checksum") || strstr(out, "invalid page") ||
	       strstr(out, "could not read block");
}

/* PC2, PC3 of the built-in workload: the table against the seed's oracle (PJ1). */
static void table(const struct pn_pgc *pg, const char *sock, uint32_t acked,
		  struct pn_pgc_result *r, char *out, size_t len)
{
	uint32_t ids = pg->cfg.rows + pg->cfg.transactions;
	int64_t *got = malloc((ids + 1) * sizeof(int64_t));
	int rc = pn_pgc_sql(pg, sock, "SELECT id, v FROM pn ORDER BY id", out, len);
	if (rc != 0 || !got || !parse_rows(out, got, ids))
		say(r, rc != 0 && unreadable(out) ? PN_PGC_READ : PN_PGC_PREFIX,
		    "reading the table: %.400s", out);
	else
		compare(pg, got, acked, r);
	free(got);
}

/* PC2, PC3 of a user's workload: the database's digest against the client's (PJ4). */
static void digest(const struct pn_pgc *pg, const char *sock, uint32_t acked,
		   struct pn_pgc_result *r, char *out, size_t len)
{
	char(*d)[33] = NULL;
	uint32_t n = pn_pgc_digests(pg, &d);
	int rc = pn_pgc_sql(pg, sock, "SELECT pn_digest()", out, len);
	out[strcspn(out, "\n")] = '\0';
	int64_t match = -1;
	for (uint32_t j = 0; rc == 0 && j < n && (match < (int64_t)acked); j++)
		if (strcmp(d[j], out) == 0)
			match = j;
	if (rc != 0 || n == 0)
		say(r,
		    rc != 0 && unreadable(out) ? PN_PGC_READ
		    : n                        ? PN_PGC_PREFIX
					       : PN_PGC_ERROR,
		    "the digest of the database: %.400s", n ? out : "no digests in the recording");
	else if (match >= (int64_t)acked)
		r->prefix = (uint32_t)match;
	else {
		r->verdict = match >= 0 ? PN_PGC_LOST : PN_PGC_PREFIX;
		r->prefix = match >= 0 ? (uint32_t)match : 0;
		snprintf(r->detail, sizeof(r->detail),
			 "%s: its digest %.32s is that after %" PRId64 " commits, and %" PRIu32
			 " were acknowledged",
			 match >= 0 ? "the database is an earlier prefix"
				    : "the database is no prefix",
			 out, match, acked);
	}
	free(d);
}

/* PJ6: how many steps psql began (the marker lines "pn-step K" in out), and out without
 * them in text; what step 0 printed (its rows) into heap when step 1 began. */
static uint32_t steps(const char *out, char *text, size_t len, char *heap, size_t heap_len)
{
	uint32_t reached = 0;
	size_t n = 0, at0 = 0;
	text[0] = heap[0] = '\0';
	for (const char *p = out; *p;) {
		uint32_t k;
		int used = 0;
		const char *nl = strchr(p, '\n');
		size_t line = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (sscanf(p, "pn-step %" SCNu32 "%n", &k, &used) == 1 &&
		    (size_t)used + 1 == line) {
			reached = k + 1 > reached ? k + 1 : reached;
			if (k == 0)
				at0 = n;
			else if (k == 1)
				snprintf(heap, heap_len, "%.*s", (int)(n - at0), text + at0);
		} else if (n + line < len) {
			memcpy(text + n, p, line);
			text[n += line] = '\0';
		}
		p += line;
	}
	return reached;
}

/* PC4, PC5 on a running server, in one psql session (PJ6): amcheck on every table and B-tree
 * index of schema public, every page of every relation read. */
static void structure(const struct pn_pgc *pg, const char *sock, struct pn_pgc_result *r, char *out,
		      size_t len)
{
	static const char *const name[] = {"verify_heapam", "bt_index_check",
					   "pg_prewarm of every relation"};
	static const char *const sql[] = {
		"\\echo pn-step 0",
		"SELECT c.relname, v.blkno, v.offnum, v.msg FROM pg_class c JOIN pg_namespace n ON "
		"n.oid = c.relnamespace, verify_heapam(c.oid) v WHERE c.relkind = 'r' AND "
		"n.nspname = 'public' LIMIT 1",
		"\\echo pn-step 1",
		"SELECT count(bt_index_check(c.oid, true)) FROM pg_class c JOIN pg_am a ON a.oid = "
		"c.relam JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'i' AND "
		"a.amname = 'btree' AND n.nspname = 'public'",
		"\\echo pn-step 2",
		"SELECT count(pg_prewarm(c.oid)) FROM pg_class c WHERE c.relkind IN "
		"('r','i','t','m','S') AND c.relpersistence = 'p'"};
	static char text[4096], heap[1024];
	int rc = pn_pgc_sql_steps(pg, sock, sql, 6, out, len);
	uint32_t reached = steps(out, text, sizeof(text), heap, sizeof(heap));
	if (heap[0]) { /* rows of verify_heapam: corruption found (psql goes on) */
		say(r, PN_PGC_AMCHECK, "verify_heapam: %.400s", heap);
	} else if (rc != 0) {
		char what[640];
		snprintf(what, sizeof(what), "%s: %.400s", reached ? name[reached - 1] : "amcheck",
			 text);
		say(r, reached == 3 || unreadable(text) ? PN_PGC_READ : PN_PGC_AMCHECK, "%.480s",
		    what);
	}
}

/* PC2-PC5 on a running server. */
static void checks(const struct pn_pgc *pg, const char *sock, uint32_t acked,
		   struct pn_pgc_result *r)
{
	static char out[1 << 20];
	if (pg->cfg.workload == PN_PGC_BUILTIN)
		table(pg, sock, acked, r, out, sizeof(out));
	else
		digest(pg, sock, acked, r, out, sizeof(out));
	if (r->verdict == PN_PGC_PASS)
		structure(pg, sock, r, out, sizeof(out));
}

void pn_pgc_judge(const struct pn_pgc *pg, const char *dir, const char *sock, uint32_t acked,
		  struct pn_pgc_result *r)
{
	char why[512];
	char pid[700];
	memset(r, 0, sizeof(*r));
	/* PJ3 the lock file is the runtime's, not data: a crash may leave it empty, and
	 * PostgreSQL then refuses to start until someone removes it, as an operator does */
	snprintf(pid, sizeof(pid), "%s/postmaster.pid", dir);
	unlink(pid);
	enum pn_pgc_start st = pn_pgc_start(pg, dir, sock, true, why, sizeof(why));
	if (st != PN_PGC_STARTED) {
		say(r, st == PN_PGC_LATE ? PN_PGC_ERROR : PN_PGC_NO_START,
		    "the server did not start: %.480s", why);
		pn_pgc_stop(pg, dir);
		return;
	}
	checks(pg, sock, acked, r);
	pn_pgc_stop(pg, dir);
}

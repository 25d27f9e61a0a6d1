/*
 * pgcrash.h: real PostgreSQL in the model's crash states (pgcrash layer, between model/ and
 * cli/: it calls model/ and src/, only cli/ calls it; docs/pgcrash.md).
 *
 *   record   initdb a cluster (the configuration's options), set up the table, CHECKPOINT,
 *            stop: the base image. Start it again with libpn_record.so preloaded, run the
 *            workload (each transaction one psql call: its exit 0 is the acknowledgement,
 *            logged as ACK), stop it: the operation log (oplog.h).
 *   points   every durability boundary (an fsync of a file with unsynced writes), the start
 *            and the end; or every operation.
 *   states   at a point, the writes not yet durable become a pn_device's unsynced writes
 *            (crash.c: each file of the cluster is a 1 GiB window of one device file) and
 *            model/crashstate.c's enumerator gives their fates: the model's crash states.
 *   judge    a state's data directory, materialized from the base image and the log, is
 *            started with the real server and judged (judge.c): PC1..PC5 below.
 *
 * Verdicts of one state (judge.c):
 *   PC1 the server starts: recovery finishes within the timeout;
 *   PC2 every commit acknowledged before the crash point is in the table;
 *   PC3 the table equals the oracle's table after some prefix of the commits;
 *   PC4 amcheck: verify_heapam finds nothing, bt_index_check (heapallindexed) passes;
 *   PC5 every page of every relation of the database reads (pg_prewarm), so with checksums
 *      no page fails its checksum.
 */
#ifndef PN_PGCRASH_H
#define PN_PGCRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oplog.h"
#include "scenario.h"

/* The workload's form (workload.c): the built-in one, whose oracle is the seed (pgcrash.c
 * PG3), or one the user brings, whose oracle is the digest of the database the client read
 * after each acknowledged commit (workload.c WL1). */
enum pn_pgc_workload {
	PN_PGC_BUILTIN, /* the table pn: --rows, --updates, --pad, --seed */
	PN_PGC_SQL,     /* --sql FILE: a setup, then one transaction a line */
	PN_PGC_PGBENCH, /* --pgbench SCRIPT: pgbench -i -s 1, then one pgbench -t 1 a transaction */
};

/* The workload and cluster configuration: the key of a recording. */
struct pn_pgc_config {
	char bindir[512];
	enum pn_pgc_workload workload;
	char script[512]; /* SQL, or pgbench with a file: its copy in the work folder; pgbench
			     built-in: its name (tpcb-like, simple-update, select-only) */
	bool checksums, fpw, wal_log_hints;
	uint32_t rows;             /* rows the setup inserts (ids 1..rows) */
	uint32_t transactions;     /* acknowledged one by one */
	uint32_t updates;          /* per transaction */
	uint32_t checkpoint_every; /* a CHECKPOINT after every N transactions (0: none) */
	uint32_t pad;              /* bytes of each row's text column */
	uint64_t seed;
	uint32_t timeout_s; /* a server start or a query */
};

#define PN_PGC_PORT "54330" /* every server's port; each has its own socket folder */

/* A work folder and what the commands need to run PostgreSQL there. */
struct pn_pgc {
	struct pn_pgc_config cfg;
	char work[512];     /* owned by the postgres user when penumbra runs as root */
	char recorder[600]; /* libpn_record.so, copied into work */
	uint32_t uid, gid;  /* the server's user (the postgres user when root) */
	bool as_user;       /* setuid before exec */
};

enum pn_pgc_verdict {
	PN_PGC_PASS,
	PN_PGC_NO_START, /* PC1 */
	PN_PGC_LOST,     /* PC2 */
	PN_PGC_PREFIX,   /* PC3 */
	PN_PGC_AMCHECK,  /* PC4 */
	PN_PGC_READ,     /* PC5 */
	PN_PGC_ERROR,    /* the judge itself failed (not a verdict on PostgreSQL) */
};
const char *pn_pgc_verdict_name(enum pn_pgc_verdict v);

struct pn_pgc_result {
	enum pn_pgc_verdict verdict;
	uint32_t prefix; /* PC3: the commits the table holds */
	char detail[512];
};

/* ---- pgcrash.c: the cluster and the recording ---- */
/* Prepares work (created, must not exist) and checks bindir; false with why (exit 2). */
bool pn_pgc_init(struct pn_pgc *pg, const struct pn_pgc_config *cfg, const char *work,
		 const char *recorder, char *why, size_t len);
/* Runs argv (argv[0] a path) as the server's user, output (stdout and stderr) into out;
 * the exit status, or -1 when it ran past timeout_s (its process group is killed). */
int pn_pgc_exec(const struct pn_pgc *pg, char *const argv[], char *const envp[], uint32_t timeout_s,
		char *out, size_t len);
/* Records the base image (work/base) and the log (work/ops.log); false with why. */
bool pn_pgc_record(struct pn_pgc *pg, char *why, size_t len);
/* Starts the server on dir with its socket in sock: PN_PGC_STARTED, or PN_PGC_EXITED (it
 * ended: the log's FATAL line in why) or PN_PGC_LATE (not ready within the timeout; not a
 * verdict on PostgreSQL: a loaded machine is slow too). pn_pgc_stop stops it whatever
 * happened. judging: a crash state's server, started with fsync=off (PG4). */
enum pn_pgc_start { PN_PGC_STARTED, PN_PGC_EXITED, PN_PGC_LATE };
enum pn_pgc_start pn_pgc_start(const struct pn_pgc *pg, const char *dir, const char *sock,
			       bool judging, char *why, size_t len);
void pn_pgc_stop(const struct pn_pgc *pg, const char *dir);
/* One SQL command through psql on the server at sock; exit status, output in out. */
int pn_pgc_sql(const struct pn_pgc *pg, const char *sock, const char *sql, char *out, size_t len);
/* psql with each of sql[0..n) as its own -c, in one session, stopping at the first error. */
#define PN_PGC_STEPS_MAX 8u
int pn_pgc_sql_steps(const struct pn_pgc *pg, const char *sock, const char *const *sql, uint32_t n,
		     char *out, size_t len);
/* The oracle: the value column of ids 1..rows+transactions after `commits` commits (-1:
 * no row), computed from the seed alone. */
void pn_pgc_oracle(const struct pn_pgc_config *cfg, uint32_t commits, int64_t *v);
/* The SQL of transaction k (1-based). */
void pn_pgc_txn_sql(const struct pn_pgc_config *cfg, uint32_t k, char *out, size_t len);

/* ---- fs.c: directories ---- */
bool pn_pgc_copy_tree(const struct pn_pgc *pg, const char *from, const char *to, char *why,
		      size_t len);
bool pn_pgc_remove_tree(const char *dir);
/* The bytes of the regular files under dir. */
uint64_t pn_pgc_tree_bytes(const char *dir);
/* XXH64 of the n files paths (relative to dir): each one's path and bytes or absence
 * (fs.c FD2). */
uint64_t pn_pgc_hash_paths(const char *dir, char (*const paths)[256], uint32_t n);
/* Applies op to dir (new files owned by the data directory's owner); why on failure. */
bool pn_pgc_apply(const char *dir, const struct pn_fop *op, const uint8_t *data, uint64_t off,
		  uint64_t len, char *why, size_t why_len);

/* ---- workload.c: the forms users bring ---- */
/* An SQL workload file: the text before a line "-- transactions" is the setup, each
 * non-empty line after it that is not a comment is one transaction. */
struct pn_pgc_script {
	char *text;      /* the file, NUL at the marker and at each line's end */
	char *setup;     /* into text */
	char **lines;    /* the transactions, into text */
	uint32_t nlines; /* at least 1 */
};
/* Loads and checks path; false with why (a missing file, no marker, no transaction). */
bool pn_pgc_script_load(const char *path, struct pn_pgc_script *s, char *why, size_t len);
void pn_pgc_script_free(struct pn_pgc_script *s);
/* Whether path is a pgbench script that can be read and that pn_pgc_pgbench_check passes;
 * false with why. */
bool pn_pgc_pgbench_load(const char *path, char *why, size_t len);

/* ---- script_check.c: a workload checked before initdb (SC1-SC4) ---- */
/* An SQL workload's text (path names it in why as PATH:LINE:COL: ...). */
bool pn_pgc_sql_check(const char *path, const char *text, char *why, size_t len);
/* A pgbench script's text, as pgbench 15 parses it, its variables defined. */
bool pn_pgc_pgbench_check(const char *path, const char *text, char *why, size_t len);
/* Whether name is one of pgbench's built-in scripts. */
bool pn_pgc_pgbench_builtin(const char *name);
/* The setup of a user's workload on the running server at sock (the digest function, the
 * user's setup or pgbench -i), false with why. */
bool pn_pgc_user_setup(const struct pn_pgc *pg, const char *sock, char *why, size_t len);
/* Transaction k (1-based) of a user's workload on the server at sock: psql's or pgbench's
 * exit status, its output in out. */
int pn_pgc_user_txn(const struct pn_pgc *pg, const struct pn_pgc_script *s, const char *sock,
		    uint32_t k, char *out, size_t len);
/* WL1: the digest of the database at sock (every table of schema public) appended to
 * work/digests as line k; false with why. */
bool pn_pgc_digest_log(const struct pn_pgc *pg, const char *sock, char *why, size_t len);
/* The digests after 0..transactions commits, read back (malloc'd, 33 bytes each); the
 * count, 0 when the file cannot be read. */
uint32_t pn_pgc_digests(const struct pn_pgc *pg, char (**out)[33]);

/* ---- judge.c ---- */
/* Starts the server on the state in dir (sock: its socket folder), judges PC1..PC5, stops it.
 * acked: commits acknowledged before the crash point. The unit of work of --jobs. */
void pn_pgc_judge(const struct pn_pgc *pg, const char *dir, const char *sock, uint32_t acked,
		  struct pn_pgc_result *r);

#endif

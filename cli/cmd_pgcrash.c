/*
 * cmd_pgcrash.c: `penumbra pgcrash`, real PostgreSQL in the model's crash states (cli layer;
 * the work is pgcrash/, docs/pgcrash.md; the reference is docs/cli.md).
 *   record (initdb, setup, base image, the recorded workload), then every crash point and
 *   state judged by real recovery; --record-only stops after the recording; --rebuild OUT
 *   applies a recording's whole log to its base image; --replay TRACE re-runs a violation.
 * Exit: 0 every state passed, 1 a violation (a trace written), 2 bad input or a check that
 * could not run (PostgreSQL not found, a server that never starts in the setup, no space),
 * 130 interrupted (run.h RN2) before a violation.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "files.h"
#include "run.h"

#include <stddef.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The options as given (the spec fills them, defaults first); parse() turns them into the
 * configuration and the checker's options. */
struct pgcrash_opts {
	const char *bindir, *work, *json, *junit, *replay, *rebuild, *recording, *tear, *points,
		*sql, *pgbench;
	bool fpw, checksums, wal_log_hints, record_only, fail_fast;
	uint64_t sector, max_unsynced, samples, transactions, rows, updates, checkpoint_every, pad,
		seed, jobs, timeout_ns;
};

#define PG_OPT(field) offsetof(struct pgcrash_opts, field)

static const struct pn_opt pgcrash_opts[] = {
	{.name = "pg-bindir",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = PG_OPT(bindir),
	 .def = "/usr/lib/postgresql/15/bin",
	 .complete = PN_COMPLETE_DIR,
	 .help = "PostgreSQL's programs (initdb, pg_ctl, postgres, psql): Debian's 15, or a build "
		 "of your own"},
	{.name = "work",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = PG_OPT(work),
	 .complete = PN_COMPLETE_DIR,
	 .help = "the work folder, created (default: a new one in $TMPDIR)"},
	{.name = "fpw",
	 .kind = PN_OPT_ONOFF,
	 .value = "on|off",
	 .at = PG_OPT(fpw),
	 .def = "on",
	 .complete = PN_COMPLETE_ONOFF,
	 .help = "full_page_writes"},
	{.name = "checksums",
	 .kind = PN_OPT_ONOFF,
	 .value = "on|off",
	 .at = PG_OPT(checksums),
	 .def = "on",
	 .complete = PN_COMPLETE_ONOFF,
	 .help = "initdb --data-checksums"},
	{.name = "wal-log-hints",
	 .kind = PN_OPT_ONOFF,
	 .value = "on|off",
	 .at = PG_OPT(wal_log_hints),
	 .def = "off",
	 .complete = PN_COMPLETE_ONOFF,
	 .help = "wal_log_hints"},
	{.name = "sector",
	 .kind = PN_OPT_UINT,
	 .value = "BYTES",
	 .at = PG_OPT(sector),
	 .min = 512,
	 .max = 1u << 20,
	 .def = "512",
	 .help = "the atomic write unit: a write tears only between such blocks"},
	{.name = "tear",
	 .kind = PN_OPT_STRING,
	 .value = "none|halves|sectors",
	 .at = PG_OPT(tear),
	 .def = "sectors",
	 .help = "how a write may tear"},
	{.name = "max-unsynced",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(max_unsynced),
	 .max = 20,
	 .def = "4",
	 .help = "all subsets of up to N unsynced writes"},
	{.name = "samples",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(samples),
	 .max = 1u << 20,
	 .def = "0",
	 .help = "random subsets beyond that"},
	{.name = "points",
	 .kind = PN_OPT_STRING,
	 .value = "fsync|all",
	 .at = PG_OPT(points),
	 .def = "fsync",
	 .help = "crash before every fsync with unsynced writes, or before every operation"},
	{.name = "sql",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = PG_OPT(sql),
	 .complete = PN_COMPLETE_FILE,
	 .help = "the workload: an SQL file, its setup, a line '-- transactions', then one "
		 "transaction a line (instead of the built-in table)"},
	{.name = "pgbench",
	 .kind = PN_OPT_STRING,
	 .value = "SCRIPT",
	 .at = PG_OPT(pgbench),
	 .complete = PN_COMPLETE_FILE,
	 .help = "the workload: pgbench -i -s 1, then --transactions runs of one transaction of "
		 "SCRIPT, a built-in (tpcb-like, simple-update, select-only) or a script file"},
	{.name = "transactions",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(transactions),
	 .min = 1,
	 .max = 10000,
	 .def = "8",
	 .help = "the workload's transactions (the built-in's or pgbench's; an SQL file's are "
		 "its lines)"},
	{.name = "rows",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(rows),
	 .min = 1,
	 .max = 1000000,
	 .def = "60",
	 .help = "the built-in workload: the rows its table starts with"},
	{.name = "updates",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(updates),
	 .max = 60,
	 .def = "2",
	 .help = "the built-in workload: the updates of each transaction"},
	{.name = "checkpoint-every",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(checkpoint_every),
	 .max = 10000,
	 .def = "4",
	 .help = "a CHECKPOINT after every Nth transaction (0: none)"},
	{.name = "pad",
	 .kind = PN_OPT_UINT,
	 .value = "BYTES",
	 .at = PG_OPT(pad),
	 .max = 2000,
	 .def = "200",
	 .help = "the built-in workload: the bytes of padding in each row"},
	{.name = "seed",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(seed),
	 .def = "1",
	 .help = "the built-in workload's seed; pgbench's is SEED+k for transaction k"},
	{.name = "timeout",
	 .kind = PN_OPT_DURATION,
	 .value = "DURATION",
	 .at = PG_OPT(timeout_ns),
	 .min = 1,
	 .def = "30s",
	 .help = "the longest a server start or a query may take"},
	{.name = "jobs",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = PG_OPT(jobs),
	 .min = 1,
	 .max = 64,
	 .def = "1",
	 .help = "states judged at once: --jobs 1 judges them in this process, N in N child "
		 "processes (the executor table of check); the counts and verdicts are those of "
		 "--jobs 1"},
	{.name = "json",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = PG_OPT(json),
	 .complete = PN_COMPLETE_FILE,
	 .help = "the result as JSON ('-': stdout)"},
	{.name = "junit",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = PG_OPT(junit),
	 .complete = PN_COMPLETE_FILE,
	 .help = "the result as JUnit XML, for CI systems: a testcase per class of crash state "
		 "(whole writes, torn writes) of the cluster setting"},
	{.name = "recording",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = PG_OPT(recording),
	 .complete = PN_COMPLETE_DIR,
	 .help = "check the recording in DIR (the --work of an earlier run or of --record-only) "
		 "again, with its own workload and cluster setting, instead of recording anew"},
	{.name = "replay",
	 .kind = PN_OPT_STRING,
	 .value = "TRACE",
	 .at = PG_OPT(replay),
	 .complete = PN_COMPLETE_FILE,
	 .help = "rebuild a violation's data directory from its trace and run real recovery on it "
		 "again"},
	{.name = "rebuild",
	 .kind = PN_OPT_STRING,
	 .value = "OUT",
	 .at = PG_OPT(rebuild),
	 .complete = PN_COMPLETE_DIR,
	 .help = "apply the whole log of the recording in --work to its base image, into OUT"},
	{.name = "record-only",
	 .kind = PN_OPT_FLAG,
	 .at = PG_OPT(record_only),
	 .help = "stop after the recording"},
	{.name = "fail-fast",
	 .kind = PN_OPT_FLAG,
	 .at = PG_OPT(fail_fast),
	 .help = "stop at the first violation"},
};

const struct pn_cmd_spec pn_pgcrash_spec = {
	.name = "pgcrash",
	.args = "",
	.args_min = 0,
	.args_max = 0,
	.description =
		"Records a small workload on a real PostgreSQL (every file operation of every "
		"server process, through an LD_PRELOAD recorder), then puts the cluster into "
		"every crash state of penumbra's crash model at every durability boundary, "
		"starts the real server on each and judges recovery: the server starts, every "
		"acknowledged commit is there, the database is the one after a prefix of the "
		"commits (the seed's table, or the digests the client read), amcheck passes, "
		"every page reads.",
	.opts = pgcrash_opts,
	.nopts = PN_ARRAY_LEN(pgcrash_opts),
	.exits = "0 every state recovered, 1 a violation (its trace is in the work folder), 2 bad "
		 "input or a check that could not run, 130 interrupted by SIGINT or SIGTERM before "
		 "a violation (what was judged is printed and written)",
};

struct args {
	struct pn_pgc_config cfg;
	struct pn_pgc_opts o;
	const char *work, *json, *junit, *replay, *rebuild, *recording;
	bool record_only;
};

/* --sql / --pgbench into the configuration, the script checked first (workload.c WL2);
 * false with the message printed (exit 2). */
static bool workload(struct args *a, const struct pgcrash_opts *g)
{
	struct pn_pgc_script s;
	char why[1024], *path = NULL;
	const char *script = g->sql ? g->sql : g->pgbench;
	if (g->sql && g->pgbench) {
		pn_cli_usage_error("pgcrash", "--sql and --pgbench are two workloads: give one");
		return false;
	}
	if (!script)
		return true;
	a->cfg.workload = g->sql ? PN_PGC_SQL : PN_PGC_PGBENCH;
	bool builtin = g->pgbench && pn_pgc_pgbench_builtin(g->pgbench);
	bool ok = builtin || (g->sql ? pn_pgc_script_load(g->sql, &s, why, sizeof(why))
				     : pn_pgc_pgbench_load(g->pgbench, why, sizeof(why)));
	if (ok && g->sql) {
		a->cfg.transactions = s.nlines;
		pn_pgc_script_free(&s);
	}
	if (ok && !builtin && !(path = realpath(script, NULL))) {
		snprintf(why, sizeof(why), "%s: %s", script, strerror(errno));
		ok = false;
	}
	if (ok && snprintf(a->cfg.script, sizeof(a->cfg.script), "%s", path ? path : script) >=
			  (int)sizeof(a->cfg.script)) {
		snprintf(why, sizeof(why), "%.900s: the path is too long", script);
		ok = false;
	}
	free(path);
	if (!ok)
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
	return ok;
}

static int parse(struct args *a, int argc, char **argv)
{
	struct pgcrash_opts g = {0};
	int at, rc = pn_opts_parse(&pn_pgcrash_spec, argc, argv, &g, &at);
	if (rc >= 0)
		return rc;
	*a = (struct args){.cfg = {.fpw = g.fpw,
				   .checksums = g.checksums,
				   .wal_log_hints = g.wal_log_hints,
				   .rows = (uint32_t)g.rows,
				   .transactions = (uint32_t)g.transactions,
				   .updates = (uint32_t)g.updates,
				   .checkpoint_every = (uint32_t)g.checkpoint_every,
				   .pad = (uint32_t)g.pad,
				   .seed = g.seed,
				   .timeout_s = g.timeout_ns >= 1000000000u
							? (uint32_t)(g.timeout_ns / 1000000000u)
							: 1},
			   .o = {.jobs = (uint32_t)g.jobs,
				 .progress = isatty(2),
				 .fail_fast = g.fail_fast,
				 .points_all = strcmp(g.points, "all") == 0},
			   .work = g.work,
			   .json = g.json,
			   .junit = g.junit,
			   .recording = g.recording,
			   .replay = g.replay,
			   .rebuild = g.rebuild,
			   .record_only = g.record_only};
	if (snprintf(a->cfg.bindir, sizeof(a->cfg.bindir), "%s", g.bindir) >=
	    (int)sizeof(a->cfg.bindir))
		return pn_cli_usage_error("pgcrash", "--pg-bindir is longer than %zu bytes",
					  sizeof(a->cfg.bindir) - 1);
	if (strcmp(g.points, "fsync") && strcmp(g.points, "all"))
		return pn_cli_usage_error("pgcrash", "--points takes fsync or all, not '%s'",
					  g.points);
	pn_scenario_defaults(&a->o.sc);
	a->o.sc.crash.present = true;
	a->o.sc.crash.atomic_unit = (uint32_t)g.sector;
	a->o.sc.crash.max_unsynced = (uint32_t)g.max_unsynced;
	a->o.sc.crash.samples = (uint32_t)g.samples;
	int t = 0;
	while (t < PN_TEAR_COUNT && strcmp(g.tear, pn_tear_name((enum pn_tear)t)))
		t++;
	if (t == PN_TEAR_COUNT)
		return pn_cli_usage_error("pgcrash",
					  "--tear takes none, halves or sectors, not '%s'", g.tear);
	a->o.sc.crash.tear = (enum pn_tear)t;
	if (a->rebuild && !a->work)
		return pn_cli_usage_error("pgcrash", "--rebuild needs the --work of a recording");
	if (a->recording && (a->work || a->record_only || g.sql || g.pgbench))
		return pn_cli_usage_error("pgcrash", "--recording checks a recording made before, "
						     "with its own workload: not with --work, "
						     "--record-only, --sql or --pgbench");
	if (!workload(a, &g))
		return 2;
	return -1;
}

bool pn_pgcrash_is_trace(const char *path)
{
	char line[16] = "", why[160];
	/* opened as every input is (files.h F1): a FIFO or a device is no trace, at once */
	FILE *f = pn_file_fopen_in(path, "a trace", why, sizeof why);
	bool yes = f && fgets(line, sizeof(line), f) && strcmp(line, "pgcrash: 1\n") == 0;
	if (f)
		fclose(f);
	return yes;
}

int pn_pgcrash_replay(const char *trace)
{
	struct pn_pgc_result r;
	char dir[700], why[1024] = "";
	if (!pn_pgc_replay(trace, &r, dir, sizeof(dir), why, sizeof(why))) {
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
		return 2;
	}
	printf("replayed %s in %s: %s%s%s\n", trace, dir, pn_pgc_verdict_name(r.verdict),
	       r.detail[0] ? ": " : "", r.detail);
	return r.verdict == PN_PGC_PASS ? 0 : r.verdict == PN_PGC_ERROR ? 2 : 1;
}

/* The whole log applied to the base image, every write kept: the cluster at the end. */
static int rebuild(const char *work, const char *out)
{
	struct pn_pgc pg = {0};
	struct pn_pgc_log l;
	char path[700], why[1024] = "";
	snprintf(pg.work, sizeof(pg.work), "%s", work);
	snprintf(path, sizeof(path), "%s/ops.log", work);
	if (!pn_pgc_log_load(&l, path, why, sizeof(why))) {
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
		return 2;
	}
	struct pn_pgc_point pt = {.point = l.log.n, .w = calloc(l.log.n + 1, 1)};
	bool ok = pt.w && pn_pgc_materialize(&pg, &l, &pt, NULL, out, why, sizeof(why));
	free(pt.w);
	pn_pgc_log_free(&l);
	if (!ok)
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
	return ok ? 0 : 2;
}

/* The cluster setting, one line: "fpw=off checksums=on wal_log_hints=off, 512 B halves". */
static void setting(const struct pn_pgc_config *g, const struct pn_pgc_opts *o, char *out,
		    size_t len)
{
	snprintf(out, len, "fpw=%s checksums=%s wal_log_hints=%s, %" PRIu32 " B units %s",
		 g->fpw ? "on" : "off", g->checksums ? "on" : "off",
		 g->wal_log_hints ? "on" : "off", pn_scenario_atomic_unit(&o->sc),
		 pn_tear_name(o->sc.crash.tear));
}

static int write_json(const struct pn_pgc_config *g, const struct args *a,
		      const struct pn_pgc_summary *s, FILE *f)
{
	json_t *v = json_object(), *counts = json_object(), *classes = json_array();
	bool violation = s->trace[0] != '\0';
	json_object_set_new(v, "fpw", json_boolean(g->fpw));
	json_object_set_new(v, "checksums", json_boolean(g->checksums));
	json_object_set_new(v, "wal_log_hints", json_boolean(g->wal_log_hints));
	json_object_set_new(v, "atomic_unit", json_integer(pn_scenario_atomic_unit(&a->o.sc)));
	json_object_set_new(v, "tear", json_string(pn_tear_name(a->o.sc.crash.tear)));
	json_object_set_new(v, "jobs", json_integer(a->o.jobs));
	json_object_set_new(v, "verdict", json_string(violation ? "violation" : "pass"));
	json_object_set_new(v, "crash_points", json_integer(s->points));
	json_object_set_new(v, "crash_states", json_integer((json_int_t)s->states));
	json_object_set_new(v, "judged", json_integer((json_int_t)s->judged));
	json_object_set_new(v, "deduplicated", json_integer((json_int_t)s->deduped));
	for (int i = 0; i <= PN_PGC_ERROR; i++)
		json_object_set_new(counts, pn_pgc_verdict_name((enum pn_pgc_verdict)i),
				    json_integer((json_int_t)s->count[i]));
	json_object_set_new(v, "verdicts", counts);
	for (int k = 0; k < PN_PGC_CLASSES; k++) {
		const struct pn_pgc_class_sum *c = &s->cls[k];
		json_array_append_new(classes,
				      json_pack("{s:s, s:I, s:I, s:I, s:o}", "class",
						pn_pgc_class_name((enum pn_pgc_class)k), "judged",
						(json_int_t)c->judged, "violations",
						(json_int_t)c->violations, "errors",
						(json_int_t)c->errors, "trace",
						c->trace[0] ? json_string(c->trace) : json_null()));
	}
	json_object_set_new(v, "classes", classes);
	json_object_set_new(v, "interrupted", json_boolean(s->interrupted));
	json_object_set_new(v, "seconds", json_real(s->seconds));
	json_object_set_new(v, "violation",
			    violation ? json_pack("{s:s, s:s}", "trace", s->trace, "detail",
						  s->detail)
				      : json_null());
	v = pn_cli_json_stamped(v);
	bool ok = json_dumpf(v, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
		  fputc('\n', f) != EOF;
	json_decref(v);
	return pn_cli_close_output("pgcrash", f, a->json, ok);
}

/* One class of crash state of the setting: a testcase, its failure the kept violation and
 * how to reproduce it, its error the first state that could not be judged. */
static void junit_case(FILE *f, const char *name, const struct pn_pgc_class_sum *c,
		       bool interrupted)
{
	fputs("    <testcase classname=\"penumbra.pgcrash\" name=\"", f);
	pn_cli_xml_text(f, name);
	fputs("\">", f);
	if (c->trace[0]) {
		fprintf(f,
			"\n      <failure message=\"%" PRIu64 " of %" PRIu64
			" states judged are violations\">",
			c->violations, c->judged);
		pn_cli_xml_text(f, c->detail);
		fputs("\ntrace: ", f);
		pn_cli_xml_text(f, c->trace);
		fputs("\nreproduce: penumbra pgcrash --replay ", f);
		pn_cli_xml_text(f, c->trace);
		fputs(" (or penumbra replay TRACE)</failure>\n    ", f);
	} else if (c->errors) {
		fprintf(f, "\n      <error message=\"%" PRIu64 " states could not be judged\">",
			c->errors);
		pn_cli_xml_text(f, c->error);
		fputs("</error>\n    ", f);
	} else if (!c->judged) {
		fprintf(f, "<skipped message=\"%s\"/>",
			interrupted ? "interrupted before a state of this class was judged"
				    : "the crash model gave no state of this class");
	}
	fputs("</testcase>\n", f);
}

static int write_junit(const struct pn_pgc_config *g, const struct args *a,
		       const struct pn_pgc_summary *s, FILE *f)
{
	char set[200], name[300];
	size_t failures = 0, errors = 0, skipped = 0;
	setting(g, &a->o, set, sizeof(set));
	for (int k = 0; k < PN_PGC_CLASSES; k++) {
		failures += s->cls[k].trace[0] != '\0';
		errors += !s->cls[k].trace[0] && s->cls[k].errors;
		skipped += !s->cls[k].judged;
	}
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
		"name=\"penumbra pgcrash\" tests=\"%d\" failures=\"%zu\" errors=\"%zu\" "
		"skipped=\"%zu\" time=\"%.3f\">\n",
		PN_PGC_CLASSES, failures, errors, skipped, s->seconds);
	fprintf(f,
		"    <properties><property name=\"interrupted\" value=\"%s\"/><property "
		"name=\"crash_states\" value=\"%" PRIu64 "\"/><property name=\"judged\" "
		"value=\"%" PRIu64 "\"/></properties>\n",
		s->interrupted ? "true" : "false", s->states, s->judged);
	for (int k = 0; k < PN_PGC_CLASSES; k++) {
		snprintf(name, sizeof(name), "%s: %s", set,
			 pn_pgc_class_name((enum pn_pgc_class)k));
		junit_case(f, name, &s->cls[k], s->interrupted);
	}
	bool ok = fprintf(f, "  </testsuite>\n</testsuites>\n") > 0;
	return pn_cli_close_output("pgcrash", f, a->junit, ok);
}

static void default_recorder(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	const char *dir = n > 0 ? dirname(exe) : ".";
	snprintf(out, len, "%s/libpn_record.so", dir); /* a build tree: beside the binary */
	if (access(out, R_OK) != 0) /* installed: LIBDIR/penumbra, relative to BINDIR */
		snprintf(out, len, "%s/%s/libpn_record.so", dir, PN_LIB_DIR);
}

/* The recording: a new one in --work (or a new folder), or --recording's. */
static bool recording(struct args *a, struct pn_pgc *pg, char *why, size_t len)
{
	char recorder[PATH_MAX + 32], tmp[600];
	const char *env = getenv("PN_RECORDER");
	if (a->recording)
		return pn_pgc_config_read(pg, a->recording, why, len);
	default_recorder(recorder, sizeof(recorder));
	if (!a->work) {
		snprintf(tmp, sizeof(tmp), "%s/pn_pgcrash.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(tmp) || rmdir(tmp) != 0) {
			snprintf(why, len, "cannot make a work folder %s", tmp);
			return false;
		}
		a->work = tmp;
	}
	bool ok = pn_pgc_init(pg, &a->cfg, a->work, env ? env : recorder, why, len) &&
		  pn_pgc_record(pg, why, len) && pn_pgc_config_write(pg, why, len);
	if (ok)
		fprintf(stderr, "recorded in %s\n", pg->work);
	return ok;
}

static void print_summary(FILE *say, const struct pn_pgc_summary *s)
{
	bool violation = s->trace[0] != '\0';
	fprintf(say,
		"%s: %" PRIu32 " crash points, %" PRIu64 " states, %" PRIu64 " judged, %" PRIu64
		" deduplicated (%.0f %%), %.1f states/s%s\n",
		violation ? "violation" : "pass", s->points, s->states, s->judged, s->deduped,
		s->states ? 100.0 * (double)s->deduped / (double)s->states : 0.0,
		s->seconds > 0 ? (double)s->states / s->seconds : 0.0,
		s->interrupted ? " (interrupted)" : "");
	if (violation)
		fprintf(say, "%s\ntrace: %s\n", s->detail, s->trace);
	if (s->count[PN_PGC_ERROR])
		fprintf(stderr,
			"penumbra pgcrash: %" PRIu64 " states could not be judged; the first: %s\n",
			s->count[PN_PGC_ERROR], s->error);
}

static int check(struct args *a)
{
	struct pn_pgc pg;
	struct pn_pgc_summary s;
	char why[1024] = "";
	FILE *json = NULL, *junit = NULL;
	int rc = 2;
	/* outputs first: a path that cannot be written ends the command before minutes of work */
	if ((a->json && !(json = pn_cli_open_output("pgcrash", a->json))) ||
	    (a->junit && !(junit = pn_cli_open_output("pgcrash", a->junit))))
		goto out;
	if (!recording(a, &pg, why, sizeof(why))) {
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
		goto out;
	}
	rc = 0;
	if (a->record_only)
		goto out;
	if (!pn_pgc_check(&pg, &a->o, &s, why, sizeof(why))) {
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
		rc = 2;
		goto out;
	}
	bool violation = s.trace[0] != '\0';
	print_summary(json && strcmp(a->json, "-") == 0 ? stderr : stdout, &s); /* cli.h CL4 */
	rc = s.count[PN_PGC_ERROR] && !violation ? 2 : violation ? 1 : s.interrupted ? 130 : 0;
	if (json)
		rc = pn_cli_worst(rc, write_json(&pg.cfg, a, &s, json));
	if (junit)
		rc = pn_cli_worst(rc, write_junit(&pg.cfg, a, &s, junit));
	return rc;
out:
	if (json)
		pn_cli_close_output("pgcrash", json, a->json, false);
	if (junit)
		pn_cli_close_output("pgcrash", junit, a->junit, false);
	return rc;
}

int pn_cmd_pgcrash(int argc, char **argv)
{
	struct args a;
	int rc = parse(&a, argc, argv);
	if (rc >= 0)
		return rc;
	if (a.replay)
		return pn_pgcrash_replay(a.replay);
	if (a.rebuild)
		return rebuild(a.work, a.rebuild);
	return check(&a);
}

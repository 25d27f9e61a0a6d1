/*
 * cmd_pgcrash.c: `penumbra pgcrash`, real PostgreSQL in the model's crash states (cli layer;
 * the work is pgcrash/, docs/pgcrash.md; the reference is docs/cli.md).
 *   record (initdb, setup, base image, the recorded workload), then every crash point and
 *   state judged by real recovery; --record-only stops after the recording; --rebuild OUT
 *   applies a recording's whole log to its base image; --replay TRACE re-runs a violation.
 * Exit: 0 every state passed, 1 a violation (a trace written), 2 bad input or a check that
 * could not run (PostgreSQL not found, a server that never starts in the setup, no space).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "run.h"

#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: penumbra pgcrash [options]\n"
	"       penumbra pgcrash --replay TRACE\n"
	"       penumbra pgcrash --rebuild OUT --work DIR\n"
	"\n"
	"Records a small workload on a real PostgreSQL (every file operation of every server\n"
	"process, through an LD_PRELOAD recorder), then puts the cluster into every crash state\n"
	"of penumbra's crash model at every durability boundary, starts the real server on each\n"
	"and judges recovery: the server starts, every acknowledged commit is there, the table\n"
	"is the oracle's after a prefix of the commits, amcheck passes, every page reads.\n"
	"\n"
	"options:\n"
	"  --pg-bindir DIR        PostgreSQL's programs (default /usr/lib/postgresql/15/bin)\n"
	"  --work DIR             the work folder, created (default: a new one in $TMPDIR)\n"
	"  --fpw on|off           full_page_writes (default on)\n"
	"  --checksums on|off     initdb --data-checksums (default on)\n"
	"  --wal-log-hints on|off (default off)\n"
	"  --sector BYTES         the atomic write unit: tears only between such blocks (512)\n"
	"  --tear none|halves|sectors  how a write may tear (default sectors)\n"
	"  --max-unsynced N       all subsets of up to N unsynced writes (default 4)\n"
	"  --samples N            random subsets beyond that (default 0)\n"
	"  --points fsync|all     crash before every fsync with unsynced writes (default), or\n"
	"                         before every operation\n"
	"  --transactions N --rows N --updates N --checkpoint-every N --pad BYTES --seed N\n"
	"                         the workload (defaults 8, 60, 2, 4, 200, 1)\n"
	"  --timeout DURATION     a server start or a query (default 30s)\n"
	"  --jobs N               states judged at once (default 1)\n"
	"  --json FILE            the result as JSON ('-': stdout)\n"
	"  --record-only          stop after the recording\n"
	"  --fail-fast            stop at the first violation\n"
	"  -h, --help             this help\n"
	"\n"
	"exit status: 0 every state recovered, 1 a violation (its trace is in the work folder),\n"
	"2 bad input or a check that could not run\n";

struct args {
	struct pn_pgc_config cfg;
	struct pn_pgc_opts o;
	const char *work, *json, *replay, *rebuild;
	bool record_only;
};

static bool on_off(const char *opt, const char *s, bool *out)
{
	if (strcmp(s, "on") && strcmp(s, "off")) {
		pn_cli_usage_error("pgcrash", "%s takes on or off, not '%s'", opt, s);
		return false;
	}
	*out = strcmp(s, "on") == 0;
	return true;
}

static bool uint_opt(const char *opt, const char *s, uint32_t *out, uint64_t lo, uint64_t hi)
{
	uint64_t v;
	if (!pn_cli_parse_uint("pgcrash", opt, s, &v))
		return false;
	if (v < lo || v > hi) {
		pn_cli_usage_error("pgcrash", "%s must be %" PRIu64 "..%" PRIu64, opt, lo, hi);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

static bool tear(const char *s, enum pn_tear *out)
{
	for (int i = 0; i < PN_TEAR_COUNT; i++)
		if (strcmp(s, pn_tear_name((enum pn_tear)i)) == 0) {
			*out = (enum pn_tear)i;
			return true;
		}
	pn_cli_usage_error("pgcrash", "--tear takes none, halves or sectors, not '%s'", s);
	return false;
}

/* One option (getopt's c and optarg); false after its message. */
static bool option(struct args *a, int c, const char *v)
{
	uint64_t ns;
	switch (c) {
	case 'b': return snprintf(a->cfg.bindir, sizeof(a->cfg.bindir), "%s", v) > 0;
	case 'w': a->work = v; return true;
	case 'f': return on_off("--fpw", v, &a->cfg.fpw);
	case 'k': return on_off("--checksums", v, &a->cfg.checksums);
	case 'H': return on_off("--wal-log-hints", v, &a->cfg.wal_log_hints);
	case 's': return uint_opt("--sector", v, &a->o.sc.crash.atomic_unit, 512, 1u << 20);
	case 't': return tear(v, &a->o.sc.crash.tear);
	case 'm': return uint_opt("--max-unsynced", v, &a->o.sc.crash.max_unsynced, 0, 20);
	case 'S': return uint_opt("--samples", v, &a->o.sc.crash.samples, 0, 1u << 20);
	case 'T': return uint_opt("--transactions", v, &a->cfg.transactions, 1, 10000);
	case 'r': return uint_opt("--rows", v, &a->cfg.rows, 1, 1000000);
	case 'u': return uint_opt("--updates", v, &a->cfg.updates, 0, 60);
	case 'c': return uint_opt("--checkpoint-every", v, &a->cfg.checkpoint_every, 0, 10000);
	case 'P': return uint_opt("--pad", v, &a->cfg.pad, 0, 2000);
	case 'j': return uint_opt("--jobs", v, &a->o.jobs, 1, 64);
	case 'J': a->json = v; return true;
	case 'R': a->replay = v; return true;
	case 'B': a->rebuild = v; return true;
	case 'F': a->o.fail_fast = true; return true;
	case 'O': a->record_only = true; return true;
	case 'e': return pn_cli_parse_uint("pgcrash", "--seed", v, &a->cfg.seed);
	case 'x':
		if (!pn_cli_parse_duration("pgcrash", "--timeout", v, &ns))
			return false;
		a->cfg.timeout_s = (uint32_t)(ns / 1000000000u) ? (uint32_t)(ns / 1000000000u) : 1;
		return true;
	case 'p':
		if (strcmp(v, "fsync") && strcmp(v, "all")) {
			pn_cli_usage_error("pgcrash", "--points takes fsync or all, not '%s'", v);
			return false;
		}
		a->o.points_all = strcmp(v, "all") == 0;
		return true;
	default: return false;
	}
}

static int parse(struct args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{"pg-bindir", required_argument, NULL, 'b'},
		{"work", required_argument, NULL, 'w'},
		{"fpw", required_argument, NULL, 'f'},
		{"checksums", required_argument, NULL, 'k'},
		{"wal-log-hints", required_argument, NULL, 'H'},
		{"sector", required_argument, NULL, 's'},
		{"tear", required_argument, NULL, 't'},
		{"max-unsynced", required_argument, NULL, 'm'},
		{"samples", required_argument, NULL, 'S'},
		{"points", required_argument, NULL, 'p'},
		{"transactions", required_argument, NULL, 'T'},
		{"rows", required_argument, NULL, 'r'},
		{"updates", required_argument, NULL, 'u'},
		{"checkpoint-every", required_argument, NULL, 'c'},
		{"pad", required_argument, NULL, 'P'},
		{"seed", required_argument, NULL, 'e'},
		{"timeout", required_argument, NULL, 'x'},
		{"jobs", required_argument, NULL, 'j'},
		{"json", required_argument, NULL, 'J'},
		{"replay", required_argument, NULL, 'R'},
		{"rebuild", required_argument, NULL, 'B'},
		{"record-only", no_argument, NULL, 'O'},
		{"fail-fast", no_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	*a = (struct args){.cfg = {.bindir = "/usr/lib/postgresql/15/bin",
				   .fpw = true,
				   .checksums = true,
				   .rows = 60,
				   .transactions = 8,
				   .updates = 2,
				   .checkpoint_every = 4,
				   .pad = 200,
				   .seed = 1,
				   .timeout_s = 30},
			   .o = {.jobs = 1, .progress = isatty(2)}};
	pn_scenario_defaults(&a->o.sc);
	a->o.sc.crash.present = true;
	a->o.sc.crash.atomic_unit = 512;
	a->o.sc.crash.tear = PN_TEAR_SECTORS;
	a->o.sc.crash.max_unsynced = 4;
	a->o.sc.crash.samples = 0;
	pn_cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		if (c == '?' || c == ':')
			return pn_cli_bad_option("pgcrash", c, argv);
		if (!option(a, c, optarg))
			return 2;
	}
	if (optind != argc)
		return pn_cli_usage_error("pgcrash", "unexpected argument '%s'", argv[optind]);
	if (a->rebuild && !a->work)
		return pn_cli_usage_error("pgcrash", "--rebuild needs the --work of a recording");
	return -1;
}

bool pn_pgcrash_is_trace(const char *path)
{
	char line[16] = "";
	FILE *f = fopen(path, "r");
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

static int write_json(const struct args *a, const struct pn_pgc_summary *s, bool violation)
{
	json_t *v = json_object(), *counts = json_object();
	json_object_set_new(v, "fpw", json_boolean(a->cfg.fpw));
	json_object_set_new(v, "checksums", json_boolean(a->cfg.checksums));
	json_object_set_new(v, "wal_log_hints", json_boolean(a->cfg.wal_log_hints));
	json_object_set_new(v, "atomic_unit", json_integer(pn_scenario_atomic_unit(&a->o.sc)));
	json_object_set_new(v, "tear", json_string(pn_tear_name(a->o.sc.crash.tear)));
	json_object_set_new(v, "verdict", json_string(violation ? "violation" : "pass"));
	json_object_set_new(v, "crash_points", json_integer(s->points));
	json_object_set_new(v, "crash_states", json_integer((json_int_t)s->states));
	json_object_set_new(v, "judged", json_integer((json_int_t)s->judged));
	json_object_set_new(v, "deduplicated", json_integer((json_int_t)s->deduped));
	for (int i = 0; i <= PN_PGC_ERROR; i++)
		json_object_set_new(counts, pn_pgc_verdict_name((enum pn_pgc_verdict)i),
				    json_integer((json_int_t)s->count[i]));
	json_object_set_new(v, "verdicts", counts);
	json_object_set_new(v, "interrupted", json_boolean(s->interrupted));
	json_object_set_new(v, "seconds", json_real(s->seconds));
	json_object_set_new(v, "violation",
			    s->trace[0] ? json_pack("{s:s, s:s}", "trace", s->trace, "detail",
						    s->detail)
					: json_null());
	FILE *f = pn_cli_open_output("pgcrash", a->json);
	if (!f) {
		json_decref(v);
		return 2;
	}
	bool ok = json_dumpf(v, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
		  fputc('\n', f) != EOF;
	json_decref(v);
	return pn_cli_close_output("pgcrash", f, a->json, ok);
}

static void default_recorder(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(out, len, "%s/libpn_record.so", n > 0 ? dirname(exe) : ".");
}

static int check(struct args *a)
{
	struct pn_pgc pg;
	struct pn_pgc_summary s;
	char why[1024] = "", recorder[PATH_MAX + 32], tmp[600];
	const char *env = getenv("PN_RECORDER");
	default_recorder(recorder, sizeof(recorder));
	if (!a->work) {
		snprintf(tmp, sizeof(tmp), "%s/pn_pgcrash.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(tmp) || rmdir(tmp) != 0)
			return pn_cli_usage_error("pgcrash", "cannot make a work folder %s", tmp);
		a->work = tmp;
	}
	if (!pn_pgc_init(&pg, &a->cfg, a->work, env ? env : recorder, why, sizeof(why)) ||
	    !pn_pgc_record(&pg, why, sizeof(why))) {
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
		return 2;
	}
	fprintf(stderr, "recorded in %s\n", pg.work);
	if (a->record_only)
		return 0;
	if (!pn_pgc_check(&pg, &a->o, &s, why, sizeof(why))) {
		fprintf(stderr, "penumbra pgcrash: %s\n", why);
		return 2;
	}
	bool violation = s.trace[0] != '\0';
	FILE *say = a->json && strcmp(a->json, "-") == 0 ? stderr : stdout; /* cli.h C4 */
	fprintf(say,
		"%s: %" PRIu32 " crash points, %" PRIu64 " states, %" PRIu64 " judged, %" PRIu64
		" deduplicated (%.0f %%), %.1f states/s%s\n",
		violation ? "violation" : "pass", s.points, s.states, s.judged, s.deduped,
		s.states ? 100.0 * (double)s.deduped / (double)s.states : 0.0,
		s.seconds > 0 ? (double)s.states / s.seconds : 0.0,
		s.interrupted ? " (interrupted)" : "");
	if (violation)
		fprintf(say, "%s\ntrace: %s\n", s.detail, s.trace);
	if (s.count[PN_PGC_ERROR])
		fprintf(stderr,
			"penumbra pgcrash: %" PRIu64 " states could not be judged; the first: %s\n",
			s.count[PN_PGC_ERROR], s.error);
	int rc = a->json ? write_json(a, &s, violation) : 0;
	if (rc)
		return rc;
	return s.count[PN_PGC_ERROR] && !violation ? 2 : violation ? 1 : 0;
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

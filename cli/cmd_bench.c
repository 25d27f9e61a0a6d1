/*
 * cmd_bench.c: `penumbra bench S.yaml --path DIR` (cli layer): the same engine and workload
 * on real files through the disk backend (disk/disk.h: io_uring, or worker threads where
 * io_uring is unavailable), in real time, for --duration per mode; the metrics side by side.
 *
 * The workload never runs out: `workload.transactions` is ignored and each mode runs for the
 * duration, its clients drawing transactions as fast as the device lets them commit. The
 * figures are taken when the duration is over; I/Os then in flight are waited for, not
 * counted. Every mode starts on freshly formatted files in DIR, which penumbra creates and
 * marks (refusing a directory that holds other files unless --force).
 *
 * --atomic sends the data file's page writes with RWF_ATOMIC (disk.h DK6), where statx reports
 * an atomic write unit range that holds the page; where it does not, the first mode is
 * refused with what statx reported and what the kernel and file system need, and no mode
 * runs (exit 2).
 */
#include "cli.h"
#include "workload.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disk.h"
#include "realdisk.h"
#include "waldir.h"

struct bench_opts {
	const char *scenario, *path, *json, *modes_arg, *wal_dir;
	uint64_t duration_ns, seed;
	bool seed_set, force, atomic;
	enum pn_mode modes[PN_CLI_MAX_MODES];
	int nmodes;
};

static const struct pn_opt bench_opts[] = {
	{.name = "path",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = offsetof(struct bench_opts, path),
	 .complete = PN_COMPLETE_DIR,
	 .required = "missing --path DIR (the directory to run on)",
	 .help = "the directory of files to run on; created if absent, and refused if it holds "
		 "files penumbra did not create"},
	{.name = "modes",
	 .kind = PN_OPT_STRING,
	 .value = "LIST",
	 .at = offsetof(struct bench_opts, modes_arg),
	 .def = "fpw,nofpw,umbra",
	 .complete = PN_COMPLETE_PLAIN_MODES,
	 .help = "comma-separated, distinct modes: {modes}"},
	{.name = "duration",
	 .kind = PN_OPT_DURATION,
	 .value = "D",
	 .at = offsetof(struct bench_opts, duration_ns),
	 .min = 1,
	 .def = "30s",
	 .help = "how long to run each mode, e.g. 30s or 4min"},
	{.name = "json",
	 .kind = PN_OPT_STRING,
	 .value = "FILE",
	 .at = offsetof(struct bench_opts, json),
	 .complete = PN_COMPLETE_FILE,
	 .help = "also write one result per mode as JSON to FILE ('-' = stdout)"},
	{.name = "seed",
	 .kind = PN_OPT_UINT,
	 .value = "N",
	 .at = offsetof(struct bench_opts, seed),
	 .given = PN_OPT_GIVEN(struct bench_opts, seed_set),
	 .help = "override the scenario's seed"},
	{.name = "force",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct bench_opts, force),
	 .help = "use DIR even if it holds other files (penumbra's are overwritten)"},
	{.name = "wal-dir",
	 .kind = PN_OPT_STRING,
	 .value = "DIR",
	 .at = offsetof(struct bench_opts, wal_dir),
	 .complete = PN_COMPLETE_DIR,
	 .help = "also write each mode's WAL into DIR/MODE as PostgreSQL segment files, which "
		 "pg_waldump reads (a second copy of every WAL byte: it costs the run time)"},
	{.name = "atomic",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct bench_opts, atomic),
	 .help = "write data pages with RWF_ATOMIC (Linux 6.11+, O_DIRECT), so that none can "
		 "tear; refused unless statx reports an atomic write unit range for DIR's data "
		 "file that holds the page size"},
};

const struct pn_cmd_spec pn_bench_spec = {
	.name = "bench",
	.args = "S.yaml",
	.args_help = "the scenario file (its workload.transactions is ignored)",
	.args_min = 1,
	.args_max = 1,
	.args_missing = "missing the scenario file",
	.description = "Runs the scenario's workload on real files in a directory through "
		       "io_uring (or worker threads where io_uring is unavailable; "
		       "PN_IO_METHOD=worker forces them), in real time, for the duration once "
		       "per mode, and prints the metrics side by side.",
	.opts = bench_opts,
	.nopts = PN_ARRAY_LEN(bench_opts),
	.exits = "0 ok, 1 a run broke a runtime invariant or hit an I/O error, 2 bad input",
};

/* One mode's figures: the engine's, as every command reports them (cli.h: the table's
 * `status`, JSON's contract keys), and the device's. */
struct bench_result {
	struct pn_cli_result r; /* sim.m.elapsed_ns: real time; sim.status as pn_disk_run's */
	struct pn_disk_counters c;
	char method[256];
	bool direct;
	struct pn_disk_atomic atomic; /* --atomic: what statx reported */
};

/* What the observers see during one run. */
struct bench_run {
	uint64_t *lat_ns;
	uint64_t nlat, cap;
	bool tty;
	const char *mode;
	uint64_t duration_ns;
	struct pn_disk *d;
	struct pn_waldir *waldir; /* --wal-dir, or NULL */
};

static int parse(int argc, char **argv, struct bench_opts *o)
{
	int at, rc = pn_opts_parse(&pn_bench_spec, argc, argv, o, &at);

	if (rc >= 0)
		return rc;
	o->scenario = argv[at];
	o->nmodes = pn_cli_parse_modes("bench", o->modes_arg, o->modes);
	return o->nmodes < 0 ? 2 : -1;
}

static void on_ack(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns)
{
	struct bench_run *r = arg;
	if (r->nlat == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 65536;
		r->lat_ns = realloc(r->lat_ns, r->cap * sizeof(uint64_t));
		PN_ASSERT(r->lat_ns != NULL);
	}
	r->lat_ns[r->nlat++] = latency_ns;
}

static void on_tick(void *arg, uint64_t now_ns)
{
	struct bench_run *r = arg;
	if (!r->tty)
		return;
	fprintf(stderr, "\rbench: %s %.1f / %.1f s, %llu commits\033[K", r->mode, now_ns / 1e9,
		r->duration_ns / 1e9, (unsigned long long)r->nlat);
	fflush(stderr);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void collect(struct bench_result *res, struct bench_run *run, struct pn_disk *d, uint64_t t0)
{
	struct pn_metrics *m = &res->r.sim.m;
	pn_engine_finish_metrics(d->e);
	struct pn_geometry geo = pn_engine_geometry(d->e);
	*m = *pn_engine_metrics(d->e);
	m->elapsed_ns = pn_disk_now_ns(d) - t0;
	res->r.sim.pages = geo.heap_pages;
	res->r.sim.generations = geo.generations;
	res->c = d->c;
	if (run->nlat) { /* the engine's own log is drained at every step (disk.h DK4) */
		qsort(run->lat_ns, run->nlat, sizeof(uint64_t), cmp_u64);
		m->commit_latency_ns_p50 = run->lat_ns[run->nlat / 2];
		m->commit_latency_ns_p99 = run->lat_ns[run->nlat * 99 / 100];
		m->commit_latency_ns_max = run->lat_ns[run->nlat - 1];
	}
}

/* The result's identity, before it runs. */
static void result_init(struct bench_result *res, const struct pn_scenario *sc)
{
	struct pn_cli_result *r = &res->r;
	snprintf(r->scenario, sizeof(r->scenario), "%s", sc->name);
	r->mode = sc->protocol.mode;
	snprintf(r->label, sizeof(r->label), "%s", pn_mode_name(sc->protocol.mode));
	r->seed = sc->seed;
	for (int t = 0; t < PN_TXN_TYPES; t++)
		r->txn_names[t] = pn_workload_txn_name(sc, t);
}

static void on_wal(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	struct bench_run *run = arg;
	run->waldir->obs.record(&run->waldir->obs, rec, len, start, end);
}

/* --wal-dir: DIR/MODE readied on the formatted engine; false (sim->error) if it cannot. */
static bool wal_dir_start(const struct bench_opts *o, struct bench_run *run,
			  struct pn_sim_result *sim)
{
	char path[PN_ERROR_LEN];
	if (!o->wal_dir)
		return true;
	snprintf(path, sizeof path, "%.900s/%s", o->wal_dir, run->mode);
	run->waldir = malloc(sizeof *run->waldir);
	PN_ASSERT(run->waldir != NULL);
	if (!pn_waldir_open(run->waldir, path, pn_engine_wal_seg_size(run->d->e), sim->error,
			    sizeof sim->error))
		return false;
	pn_waldir_begin(run->waldir, run->d->e);
	run->d->on_wal = on_wal;
	return true;
}

/* One mode on freshly formatted files of the locked directory. */
static void bench_mode(const struct pn_scenario *sc, const struct bench_opts *o,
		       const struct pn_disk_dir *dir, struct bench_result *res)
{
	struct pn_disk *d = calloc(1, sizeof(*d));
	struct pn_sim_result *sim = &res->r.sim;
	struct bench_run run = {.tty = isatty(STDERR_FILENO),
				.mode = pn_mode_name(sc->protocol.mode),
				.duration_ns = o->duration_ns,
				.d = d};
	PN_ASSERT(d != NULL);
	result_init(res, sc);
	if (!pn_disk_open(d, sc, dir, true, true) || (o->atomic && !pn_disk_use_atomic(d))) {
		sim->status = 2;
		snprintf(sim->error, sizeof(sim->error), "%s", d->error);
		goto out;
	}
	d->on_ack = on_ack;
	d->on_tick = on_tick;
	d->arg = &run;
	if (!wal_dir_start(o, &run, sim)) {
		sim->status = 2;
		goto out;
	}
	uint64_t t0 = pn_disk_now_ns(d);
	pn_engine_start(d->e);
	sim->status = pn_disk_run(d, o->duration_ns);
	collect(res, &run, d, t0);
	res->direct = d->direct;
	res->atomic = d->atomic_unit;
	snprintf(res->method, sizeof(res->method), "%s", d->method_note);
	sim->viol = *pn_engine_violation_of(d->e);
	if (sim->status == 2) { /* the scenario was fine: the run failed */
		snprintf(sim->error, sizeof(sim->error), "%s", d->error);
		sim->status = 1;
		res->r.failed = true;
	}
out:
	if (run.tty)
		fputs("\r\033[K", stderr);
	if (run.waldir && !pn_waldir_close(run.waldir) && sim->status != 2) {
		snprintf(sim->error, sizeof(sim->error), "--wal-dir: %.1000s", run.waldir->error);
		sim->status = 2;
	}
	free(run.waldir);
	pn_disk_close(d);
	free(d);
	free(run.lat_ns);
}

static double per_s(uint64_t n, double s) { return s > 0 ? n / s : 0; }

static double per_tx(uint64_t n, uint64_t tx) { return tx ? (double)n / tx : 0; }

static const struct pn_metrics *met(const struct bench_result *r) { return &r->r.sim.m; }
static double secs(const struct bench_result *r) { return met(r)->elapsed_ns / 1e9; }
static double v_tps(const struct bench_result *r) { return per_s(met(r)->commits, secs(r)); }
static double v_p50(const struct bench_result *r) { return met(r)->commit_latency_ns_p50 / 1e3; }
static double v_p99(const struct bench_result *r) { return met(r)->commit_latency_ns_p99 / 1e3; }
static double v_wal(const struct bench_result *r)
{
	return per_tx(met(r)->wal_bytes, met(r)->commits);
}
static double v_fpi(const struct bench_result *r) { return (double)met(r)->fpi_bytes; }
static double v_data(const struct bench_result *r) { return (double)met(r)->data_bytes_written; }
static double v_fsync(const struct bench_result *r) { return per_s(r->c.fsyncs, secs(r)); }
static double v_iops(const struct bench_result *r) { return per_s(r->c.writes, secs(r)); }
static double v_mbs(const struct bench_result *r) { return per_s(r->c.write_bytes, secs(r)) / 1e6; }
static double v_tx(const struct bench_result *r) { return (double)met(r)->commits; }
static double v_ckpt(const struct bench_result *r) { return (double)met(r)->checkpoints; }
static double v_atomic(const struct bench_result *r) { return (double)r->c.atomic_writes; }

/* A mode that did not run to its end has no figures: its cells say so. */
static const char *no_figures(const struct bench_result *r)
{
	if (r->r.sim.status == 2)
		return "refused";
	return r->r.sim.status != 0 ? "failed" : NULL;
}

static void row(FILE *out, const char *name, const struct bench_result *res, int n,
		double (*value)(const struct bench_result *), const char *fmt)
{
	fprintf(out, "%-26s", name);
	for (int i = 0; i < n; i++) {
		if (no_figures(&res[i]))
			fprintf(out, "%14s", no_figures(&res[i]));
		else
			fprintf(out, fmt, value(&res[i]));
	}
	fputc('\n', out);
}

static const struct bench_result *find(const struct bench_result *res, int n, enum pn_mode m)
{
	for (int i = 0; i < n; i++)
		if (res[i].r.mode == m && res[i].r.sim.status == 0 && res[i].r.sim.m.commits)
			return &res[i];
	return NULL;
}

static void print_errors(const struct bench_result *res, int n)
{
	for (int i = 0; i < n; i++) {
		if (res[i].r.sim.status == 0)
			continue;
		fputs("penumbra bench: ", stderr);
		pn_cli_report_failure(&res[i].r, true);
	}
}

/* The table of the modes that ran (none when every mode was refused). */
static void print_table(FILE *out, const struct bench_opts *o, const struct bench_result *res,
			int n)
{
	const struct bench_result *first = NULL;
	for (int i = n - 1; i >= 0; i--)
		if (res[i].method[0])
			first = &res[i];
	if (!first) {
		print_errors(res, n);
		return;
	}
	fprintf(out, "bench: %s on %s, %.1f s per mode; I/O: %s, %s", o->scenario, o->path,
		o->duration_ns / 1e9, first->method,
		first->direct ? "O_DIRECT" : "buffered (the filesystem refused O_DIRECT)");
	if (o->atomic)
		fprintf(out, ", RWF_ATOMIC page writes (statx: units of %u to %u bytes)",
			first->atomic.unit_min_bytes, first->atomic.unit_max_bytes);
	fputc('\n', out);
	fprintf(out, "%-26s", "");
	for (int i = 0; i < n; i++)
		fprintf(out, "%14s", res[i].r.label);
	fputc('\n', out);
	row(out, "transactions/s", res, n, v_tps, "%14.1f");
	row(out, "commit latency p50 (us)", res, n, v_p50, "%14.1f");
	row(out, "commit latency p99 (us)", res, n, v_p99, "%14.1f");
	row(out, "WAL bytes/tx", res, n, v_wal, "%14.1f");
	row(out, "FPI bytes", res, n, v_fpi, "%14.0f");
	row(out, "data bytes written", res, n, v_data, "%14.0f");
	row(out, "fsyncs/s", res, n, v_fsync, "%14.1f");
	row(out, "device write IOPS", res, n, v_iops, "%14.1f");
	row(out, "device write MB/s", res, n, v_mbs, "%14.2f");
	row(out, "transactions", res, n, v_tx, "%14.0f");
	row(out, "checkpoints", res, n, v_ckpt, "%14.0f");
	if (o->atomic)
		row(out, "RWF_ATOMIC page writes", res, n, v_atomic, "%14.0f");
	const struct bench_result *fpw = find(res, n, PN_MODE_FPW),
				  *nofpw = find(res, n, PN_MODE_NOFPW),
				  *umbra = find(res, n, PN_MODE_UMBRA);
	if (umbra && nofpw)
		fprintf(out, "WAL bytes/tx umbra vs nofpw: %+.2f%%\n",
			100.0 * (v_wal(umbra) / v_wal(nofpw) - 1));
	if (umbra && fpw)
		fprintf(out, "throughput umbra/fpw: %.2fx\n", v_tps(umbra) / v_tps(fpw));
	print_errors(res, n);
}

/* run's result (cli.h: the contract keys first), then the real run's own figures. */
static json_t *result_json(const struct bench_result *r)
{
	json_t *j = pn_cli_result_json(&r->r);
	if (r->r.sim.status == 2)
		return j;
	json_object_set_new(j, "seconds", json_real(secs(r))); /* = elapsed_seconds (docs/cli.md) */
	json_object_set_new(j, "transactions_per_s", json_real(v_tps(r)));
	json_object_set_new(j, "wal_bytes_per_tx", json_real(v_wal(r)));
	json_object_set_new(j, "device_fsyncs", json_integer((json_int_t)r->c.fsyncs));
	json_object_set_new(j, "fsyncs_per_s", json_real(v_fsync(r)));
	json_object_set_new(j, "wal_fsyncs",
			    json_integer((json_int_t)r->c.file_fsyncs[PN_FILE_WAL]));
	json_object_set_new(j, "wal_write_bytes",
			    json_integer((json_int_t)r->c.file_write_bytes[PN_FILE_WAL]));
	json_object_set_new(j, "device_writes", json_integer((json_int_t)r->c.writes));
	json_object_set_new(j, "device_write_iops", json_real(v_iops(r)));
	json_object_set_new(j, "device_write_bytes", json_integer((json_int_t)r->c.write_bytes));
	json_object_set_new(j, "device_write_mb_per_s", json_real(v_mbs(r)));
	json_object_set_new(j, "io_method", json_string(r->method));
	json_object_set_new(j, "o_direct", json_boolean(r->direct));
	if (r->atomic.unit_max_bytes) /* --atomic */
		json_object_set_new(j, "rwf_atomic_writes",
				    json_integer((json_int_t)r->c.atomic_writes));
	return j;
}

static int write_json(const struct bench_opts *o, FILE *f, const struct bench_result *res, int n)
{
	json_t *root = json_object(), *arr = json_array();
	json_object_set_new(root, "scenario", json_string(o->scenario));
	json_object_set_new(root, "duration_s", json_real(o->duration_ns / 1e9));
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, result_json(&res[i]));
	json_object_set_new(root, "results", arr);
	return pn_realdisk_write_json("bench", root, f, o->json);
}

int pn_cmd_bench(int argc, char **argv)
{
	struct bench_opts o = {0};
	struct bench_result res[PN_CLI_MAX_MODES] = {0};
	struct pn_scenario sc;
	struct pn_disk_dir dir;
	FILE *json = NULL;
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	rc = pn_realdisk_prepare("bench", o.scenario, o.path, o.force, o.json, &sc, &json, &dir);
	if (rc >= 0)
		return rc;
	if (o.seed_set)
		sc.seed = o.seed;
	rc = 0;
	for (int i = 0; i < o.nmodes; i++) { /* the directory stays locked between modes (DK5) */
		pn_cli_set_mode(&sc, o.modes[i]);
		bench_mode(&sc, &o, &dir, &res[i]);
		rc = pn_cli_worst(rc, res[i].r.sim.status);
		if (o.atomic && res[i].r.sim.status == 2) { /* DK6: every mode would be refused */
			o.nmodes = i + 1;
			break;
		}
	}
	print_table(json == stdout ? stderr : stdout, &o, res, o.nmodes);
	if (json)
		rc = pn_cli_worst(rc, write_json(&o, json, res, o.nmodes));
	pn_scenario_free(&sc);
	pn_disk_dir_unlock(&dir); /* last: the command is over */
	return rc;
}

/*
 * cmd_import.c: `penumbra import PATH... [--from LSN] [--to LSN] --stats` (cli layer): read
 * a real PostgreSQL 15, 16 or 17 WAL (segment files, or the directories holding them) with
 * src/format/xlogread.c and print what pg_waldump --stats=record prints for the same range,
 * row for row; with --out, write a scenario whose workload replays it (src/workload/wl_import.c reads
 * the trace; its header says what the lines mean).
 *
 * The conversion reads the WAL three times (memory: the page map, the pages' layouts and a
 * few tables, never the WAL): 1. from the WAL's first record, on past --to while a
 * checkpoint record of a redo point in the range may come: the checkpoints' redo points,
 * each record type's mean block data when it carries no image, whether hint bits were
 * logged; 2. from the replay's start (the last redo point at or before the range's first
 * record, else the range's first) on, the page map: each (relation, fork, block) a page,
 * each relation's pages one range, in order of first use; 3. the pages' layouts up to the
 * start, then the trace: K at each redo point, C per commit, R per other record
 * (checkpoint records are the engine's own), with PostgreSQL's pd_lower / pd_upper where
 * its image showed them or, at a change fpw would image and PostgreSQL did not, as the
 * records show them, F before the range's first record when records before it are replayed
 * (the run counts from there); and PostgreSQL's own figures for --from .. --to.
 *
 * Exit status (cli.h CL1): 0 the range was read; 2 bad input (usage, no segment file, no
 * record in the range, a corrupt record whose CRC is right (xlogread.h XR5), the WAL ends
 * before --to, no checkpoint to start a replay at, an output that cannot be written). Both
 * --stats and --out judge where the range ended with pn_import_end (xlogread.h XR6).
 */
#include "cli.h"

#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "xlogread.h"

struct import_opts {
	char **paths;
	int npaths;
	pn_lsn from, to;
	bool stats;
	const char *out;
};

/* --from, --to: an LSN as PostgreSQL prints it. */
static bool parse_lsn(const char *cmd, const struct pn_opt *o, const char *s, void *into)
{
	if (pn_xlr_parse_lsn(s, (pn_lsn *)((char *)into + o->at)))
		return true;
	pn_cli_usage_error(cmd, "--%s wants an LSN like 0/1A2B3C8, got '%s'", o->name, s);
	return false;
}

static const struct pn_opt import_opts[] = {
	{.name = "from",
	 .kind = PN_OPT_CUSTOM,
	 .value = "LSN",
	 .parse = parse_lsn,
	 .at = offsetof(struct import_opts, from),
	 .help = "start at the first record at or after LSN (X/Y, as pg_current_wal_insert_lsn() "
		 "prints it); default: the first segment's start"},
	{.name = "to",
	 .kind = PN_OPT_CUSTOM,
	 .value = "LSN",
	 .parse = parse_lsn,
	 .at = offsetof(struct import_opts, to),
	 .help = "read no byte at or past LSN; default: to the end of valid WAL"},
	{.name = "stats",
	 .kind = PN_OPT_FLAG,
	 .at = offsetof(struct import_opts, stats),
	 .help = "print the WAL's records by type, as pg_waldump --stats=record does"},
	{.name = "out",
	 .kind = PN_OPT_STRING,
	 .value = "S.yaml",
	 .at = offsetof(struct import_opts, out),
	 .complete = PN_COMPLETE_FILE,
	 .help = "write a scenario that replays the WAL from the redo point of the checkpoint at "
		 "or before --from (and its trace, S.trace, beside it), whose run counts --from .. "
		 "--to alone; prints the PostgreSQL version, what it took from the WAL and "
		 "PostgreSQL's own figures for --from .. --to"},
};

const struct pn_cmd_spec pn_import_spec = {
	.name = "import",
	.args = "PATH...",
	.args_help = "WAL segment files, or the directories that hold them (a cluster's pg_wal)",
	.args_min = 1,
	.args_max = -1,
	.args_missing = "no WAL given (segment files or pg_wal)",
	.description = "Reads real PostgreSQL 15, 16 or 17 WAL (the version from its page magic): "
		       "segment files (000000010000000000000001 ...) or the directories that hold "
		       "them (a cluster's pg_wal), any power-of-two segment size.",
	.opts = import_opts,
	.nopts = PN_ARRAY_LEN(import_opts),
	.exits = "0 ok, 2 bad input (a corrupt record, or the WAL ends before --to)",
};

static int parse(int argc, char **argv, struct import_opts *o)
{
	int at, rc = pn_opts_parse(&pn_import_spec, argc, argv, o, &at);

	if (rc >= 0)
		return rc;
	o->paths = argv + at;
	o->npaths = argc - at;
	if (!o->stats && !o->out)
		return pn_cli_usage_error("import", "nothing to do: give --stats or --out");
	if (o->to && o->to <= o->from)
		return pn_cli_usage_error("import", "--to must be above --from");
	return -1;
}

static void print_stats(FILE *out, const struct pn_xlr_stats *s, uint32_t version)
{
	struct pn_cli_record_row *rows = calloc(256 * 16, sizeof *rows);
	char(*names)[48] = calloc(256 * 16, sizeof *names);
	size_t n = 0;

	PN_ASSERT(rows && names);
	for (int rm = 0; rm < 256; rm++) {
		for (int id = 0; id < 16; id++) {
			const struct pn_xlr_stat *c = &s->rec[rm][id];
			if (c->count == 0)
				continue;
			pn_xlr_stats_name(version, (uint8_t)rm, (uint8_t)id, names[n],
					  sizeof names[n]);
			rows[n] = (struct pn_cli_record_row){names[n], c->count, c->rec_len,
							     c->fpi_len};
			n++;
		}
	}
	fprintf(out, "WAL statistics between %X/%X and %X/%X:\n", (unsigned)(s->start >> 32),
		(unsigned)s->start, (unsigned)(s->end >> 32), (unsigned)s->end);
	pn_cli_print_record_rows(out, rows, n);
	free(names);
	free(rows);
}

static int import(const struct import_opts *o, struct pn_xlr *r)
{
	struct pn_xlr_stats *stats = calloc(1, sizeof *stats);
	struct pn_xlr_record *rec = malloc(sizeof *rec);
	pn_lsn first = pn_xlr_begin(r, o->from, o->to);
	int rc;

	PN_ASSERT(stats && rec);
	if (first && first != o->from && o->from % r->seg_size != 0) /* as pg_waldump says it */
		printf("first record is after %X/%X, at %X/%X, skipping "
		       "over %" PRIu64 " bytes\n",
		       (unsigned)(o->from >> 32), (unsigned)o->from, (unsigned)(first >> 32),
		       (unsigned)first, first - o->from);
	while (first && pn_xlr_read(r, rec))
		pn_xlr_stats_add(stats, rec);
	if (first)
		print_stats(stdout, stats, r->pg_version);
	/* the end after the table, as pg_waldump prints it; --out notes it itself */
	rc = pn_import_end(r, o->from, o->to, first, !o->out);
	free(rec);
	free(stats);
	return rc;
}

int pn_cmd_import(int argc, char **argv)
{
	struct import_opts o = {0};
	struct pn_xlr r;
	char err[PN_ERROR_LEN];
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (!pn_xlr_open(&r, o.paths, (size_t)o.npaths, err, sizeof err)) {
		fprintf(stderr, "penumbra import: %s\n", err);
		return 2;
	}
	rc = o.stats ? import(&o, &r) : 0;
	if (rc == 0 && o.out)
		rc = pn_import_scenario(&r, o.from, o.to, o.out);
	pn_xlr_close(&r);
	return rc;
}

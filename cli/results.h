/*
 * results.h: a run's result and the two ways the commands show it, the readable metrics table
 * and the JSON document (cli layer, owned by results.c; included by cli.h). run, compare and
 * bench make results (cli.h pn_cli_simulate, disk/ for bench); check, report and import
 * print through the same tables.
 *
 * It keeps three of the rules every command keeps (cli.h):
 *   cli.h CL3: JSON keys are inserted in a fixed order (pn_cli_result_json) and dumped with
 *      JSON_PRESERVE_ORDER (pn_cli_write_json);
 *   cli.h CL5: "no page" is JSON null and "-" in text (pn_cli_page_json, pn_cli_page_text);
 *   cli.h CL6: every result has product.md's keys, in its order, refused and failed runs included
 *      (null where there is no figure).
 * And its own:
 *   RS1 a result's status is one of ok, violation, stall, failed, refused, named in one
 *       place (status_name) from sim.status (0, 1, 2), the violation's kind and `failed`;
 *       pn_cli_report_failure explains the same cases in the same order;
 *   RS2 a derived metric with a zero denominator is no figure: "-" in the table, null in JSON.
 */
#ifndef PN_CLI_RESULTS_H
#define PN_CLI_RESULTS_H

#include <stdio.h>

#include <jansson.h>

#include "world.h"

struct pn_cli_result {
	char scenario[128];
	enum pn_mode mode;
	char label[24]; /* the mode's name, "umbra-l3" / "umbra-l4" for the policies */
	uint64_t seed;
	struct pn_sim_result sim; /* sim.status: 0 ok, 1 violation or stall, 2 refused */
	bool failed;              /* bench: status 1 from an I/O error or a stall (sim.error) */
	const char *txn_names[PN_TXN_TYPES]; /* the workload's transaction types, or NULL */
};

/* CL5 "No page" (a violation of the run as a whole: pn_svc_violation's UINT32_MAX) is
 * JSON null and "-" in text, in every command. */
#define PN_CLI_NO_PAGE PN_NO_PAGE
json_t *pn_cli_page_json(uint32_t page);
/* "N", or "-" for PN_CLI_NO_PAGE; buf holds at least 12 bytes. Returns buf. */
const char *pn_cli_page_text(uint32_t page, char *buf, size_t len);
/* Explains a failed run on stderr: "violation: KIND page N: DETAIL", "stall: WHY", or the
 * engine's refusal; prefixed with "MODE: " when with_mode. Nothing for a run that was ok. */
void pn_cli_report_failure(const struct pn_cli_result *r, bool with_mode);
/* The worse of two exit statuses (2 > 1 > 0). */
int pn_cli_worst(int a, int b);
/* s as XML text (JUnit): the five markup characters escaped, control characters but
 * newline and tab dropped. */
void pn_cli_xml_text(FILE *f, const char *s);

/* ---- output ---- */
/* The metrics table, one column per result; `ref` (may be NULL) adds "WAL vs <ref mode>". */
void pn_cli_print_metrics(FILE *out, const struct pn_cli_result *res, size_t n,
			  const struct pn_cli_result *ref);
/* The per-record-type breakdown, shaped like `pg_waldump --stats=record` (types with N > 0). */
void pn_cli_print_records(FILE *out, const struct pn_metrics *m);
/* The same table from rows (import prints real WAL's through it): every row is printed. */
struct pn_cli_record_row {
	const char *name;
	uint64_t count, rec_bytes, fpi_bytes;
};
void pn_cli_print_record_rows(FILE *out, const struct pn_cli_record_row *rows, size_t n);
/* One result as a JSON object (keys in a fixed order). */
json_t *pn_cli_result_json(const struct pn_cli_result *r);
/* Its "series" key: the run's time series, column-wise (cli/series_json.c). */
json_t *pn_cli_series_json(const struct pn_series *s);
/* Writes {"results": [...]} to f (from pn_cli_open_output(path)) and closes it
 * (pn_cli_close_output). Returns 0, or 2 when it cannot be written. */
int pn_cli_write_json(const char *cmd, FILE *f, const char *path, const struct pn_cli_result *res,
		      size_t n);

#endif

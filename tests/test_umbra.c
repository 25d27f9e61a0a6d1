/*
 * test_umbra.c: Check suite for Umbra's l3 and l4 policies (src/protocol/umbra_map.c; label unit).
 * Every test asserts numbers the engine or the checker produced:
 *
 *   WAL         l4 costs exactly nofpw plus the 2-byte shift header per shift; l3 pays an
 *               image per shift but the captured ones, near fpw; hints: l4 logs
 *               XLOG2/HINT_DELTA without an image, l3 FPI_FOR_HINT;
 *   verdicts    the hazard scenarios of scenarios/peer-umbra and their l3 controls;
 *   no image    seed 001's VACUUM without checksums runs clean under every Umbra row (its
 *               REGBUF_NO_IMAGE heap page keeps its LSN and is written in place);
 *   CLI         umbra-l3 / umbra-l4 as mode names, and their refusals.
 */
#include "checker.h"
#include "cli.h"
#include "engine.h"
#include "load.h"
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void load_text(const char *yaml, struct pn_scenario *sc)
{
	char err[PN_ERROR_LEN];
	ck_assert_msg(pn_scenario_load_string("umbra.yaml", yaml, strlen(yaml), sc, err,
					      sizeof(err)),
		      "%s", err);
}

/* A random workload in `mode` (and policy), run once; asserts it ran clean. */
static void run_random(const char *protocol, struct pn_sim_result *out)
{
	char yaml[1024];
	struct pn_scenario sc;
	snprintf(
		yaml, sizeof(yaml),
		"name: umbra-wal\nseed: 7\n"
		"storage: {pages: 64, buffers: 16, wal_segment_size: 64KiB}\n"
		"protocol: %s\n"
		"checkpoint: {interval: 0s, every_transactions: 25, max_wal_size: 0}\n"
		"workload: {kind: random, clients: 3, transactions: 300, pages_per_transaction: 2}\n",
		protocol);
	load_text(yaml, &sc);
	pn_sim_run(&sc, out);
	pn_scenario_free(&sc);
	ck_assert_msg(out->status == 0, "%s: %s %s", protocol, out->viol.detail, out->error);
	ck_assert_uint_eq(out->m.commits, 300);
}

START_TEST(test_wal_per_policy)
{
	static struct pn_sim_result fpw, nofpw, l3, l4;
	run_random("{mode: fpw, checksums: true}", &fpw);
	run_random("{mode: nofpw, checksums: true}", &nofpw);
	run_random("{mode: umbra, policy: l3, checksums: true}", &l3);
	run_random("{mode: umbra, policy: l4, checksums: true}", &l4);
	/* l4: every shift image-free, 2 bytes of XLogRecordBlockUmbraHeader + target each */
	ck_assert_uint_gt(l4.m.shifts, 0);
	ck_assert_uint_eq(l4.m.fpi_count, 0);
	ck_assert_uint_eq(l4.m.wal_bytes, nofpw.m.wal_bytes + 2 * l4.m.shifts);
	/* l3: an image per shift unless captured; the images make it cost what fpw does */
	ck_assert_uint_gt(l3.m.fpi_count, 0);
	ck_assert_uint_le(l3.m.fpi_count, l3.m.shifts);
	ck_assert_double_ge((double)l3.m.wal_bytes, 0.9 * (double)fpw.m.wal_bytes);
	ck_assert_double_ge((double)l3.m.wal_bytes, 4.0 * (double)nofpw.m.wal_bytes);
	/* three slots reserved per page, every one used once pages have rotated */
	ck_assert_uint_le(l4.m.slots_used, 3u * 64u);
	ck_assert_uint_gt(l4.m.slots_used, 64u);
}
END_TEST

static const char hint_script[] =
	"name: umbra-hint\nseed: 3\n"
	"storage: {pages: 8, buffers: 4, wal_segment_size: 64KiB}\n"
	"protocol: {mode: umbra, policy: %s, checksums: true}\n"
	"checkpoint: {interval: 0s, max_wal_size: 0}\n"
	"workload:\n  kind: script\n  script:\n"
	"    - {op: update, page: 2}\n    - {op: commit}\n    - {op: checkpoint}\n"
	"    - {op: hint, page: 2}\n    - {op: update, page: 2}\n    - {op: commit}\n";

static void run_hint(const char *policy, struct pn_sim_result *out)
{
	char yaml[1024];
	struct pn_scenario sc;
	snprintf(yaml, sizeof(yaml), hint_script, policy);
	load_text(yaml, &sc);
	pn_sim_run(&sc, out);
	pn_scenario_free(&sc);
	ck_assert_int_eq(out->status, 0);
}

START_TEST(test_hints)
{
	static struct pn_sim_result l3, l4;
	run_hint("l3", &l3);
	run_hint("l4", &l4);
	ck_assert_uint_eq(l4.m.rec_count[PN_REC_XLOG2_HINT_DELTA], 1);
	ck_assert_uint_eq(l4.m.rec_count[PN_REC_XLOG_FPI_FOR_HINT], 0);
	ck_assert_uint_eq(l4.m.fpi_count, 0);
	ck_assert_uint_eq(l4.m.shifts, 2); /* the first update, then the hint */
	ck_assert_uint_eq(l3.m.rec_count[PN_REC_XLOG2_HINT_DELTA], 0);
	ck_assert_uint_eq(l3.m.rec_count[PN_REC_XLOG_FPI_FOR_HINT], 1);
	ck_assert_uint_eq(l3.m.shifts, 1); /* the hint's image keeps the page on its slot */
	ck_assert_uint_eq(l3.m.fpi_count, 2);
}
END_TEST

/* Seed 001's VACUUM without checksums under every Umbra row: VISIBLE registers the heap page
 * REGBUF_NO_IMAGE and leaves its LSN (PostgreSQL's visibilitymap_set), so only the VM page
 * shifts and the heap pages, evicted from 8 buffers, are written in place onto their
 * baselines; no runtime invariant breaks (R4 reported every heap page while VISIBLE stamped
 * it, R3 its in-place write). */
START_TEST(test_vacuum_no_image)
{
	static const char *const rows[] = {"", "policy: l3, ", "policy: l4, ", "policy: pool, ",
					   "policy: gen2, "};
	for (size_t i = 0; i < PN_ARRAY_LEN(rows); i++) {
		char yaml[512];
		struct pn_scenario sc;
		static struct pn_sim_result r;
		snprintf(yaml, sizeof(yaml),
			 "name: umbra-vacuum\nstorage: {buffers: 8}\n"
			 "protocol: {mode: umbra, %schecksums: false}\n"
			 "checkpoint: {interval: 0s, max_wal_size: 1GiB}\n"
			 "workload: {kind: vacuum, rows: 20000}\n",
			 rows[i]);
		load_text(yaml, &sc);
		pn_sim_run(&sc, &r);
		pn_scenario_free(&sc);
		ck_assert_msg(r.status == 0, "%s: %s %s", rows[i], r.viol.detail, r.error);
		ck_assert_uint_eq(r.m.rec_count[PN_REC_HEAP2_VISIBLE], 89); /* 20,000 / 226 */
		ck_assert_uint_eq(r.m.shifts, 1);                           /* the VM page */
		ck_assert_uint_eq(r.m.fpi_count,
				  i == 1);              /* l3's first-touch shift keeps its image */
		ck_assert_uint_ge(r.m.data_writes, 80); /* heap pages evicted mid-vacuum */
	}
}
END_TEST

static void assert_verdict(const char *rel, bool violation, enum pn_violation_kind kind)
{
	static struct pn_check_result res;
	const char *root = getenv("PN_SOURCE_DIR");
	char path[1024], err[PN_ERROR_LEN];
	struct pn_scenario sc;
	struct pn_check_options opt = {0};
	snprintf(path, sizeof(path), "%s/%s", root ? root : ".", rel);
	ck_assert_msg(pn_scenario_load(path, &sc, err, sizeof(err)), "%s", err);
	memset(&res, 0, sizeof(res));
	int rc = pn_check_scenario(&sc, &opt, &res);
	pn_scenario_free(&sc);
	ck_assert_msg(rc == 0 && res.ok && !res.error, "%s: rc %d: %s", rel, rc, res.detail);
	ck_assert_int_eq(res.violation, violation);
	ck_assert_uint_gt(res.recoveries, 0);
	if (violation)
		ck_assert_msg(res.kind == kind, "%s: %s, expected %s: %s", rel,
			      pn_violation_name(res.kind), pn_violation_name(kind), res.detail);
}

START_TEST(test_hazard_verdicts)
{
	assert_verdict("scenarios/peer-umbra/hazard-evict-before-select-l4.yaml", true,
		       PN_VIOL_RECOVERY);
	assert_verdict("scenarios/peer-umbra/hazard-evict-before-select-l3.yaml", false,
		       PN_VIOL_NONE);
	assert_verdict("scenarios/peer-umbra/hazard-source-rewrite-l4.yaml", true,
		       PN_VIOL_CHECKSUM);
	assert_verdict("scenarios/peer-umbra/hazard-source-rewrite-l3.yaml", false, PN_VIOL_NONE);
	assert_verdict("scenarios/peer-umbra/062-slot-checkpoint-publication.yaml", false,
		       PN_VIOL_NONE);
	/* F5: a page dirtied without a stamp is still on its baseline when a checkpoint
	 * writes its source */
	assert_verdict("scenarios/peer-umbra/hazard-unstamped-source-l3.yaml", true,
		       PN_VIOL_EXACTNESS);
	assert_verdict("scenarios/peer-umbra/hazard-unstamped-source-l4.yaml", true,
		       PN_VIOL_EXACTNESS);
	assert_verdict("scenarios/peer-umbra/hazard-unstamped-source-prototype.yaml", true,
		       PN_VIOL_PROTECTED_SLOT);
	assert_verdict("scenarios/peer-umbra/hazard-unstamped-source-l3-checksums.yaml", false,
		       PN_VIOL_NONE);
}
END_TEST

START_TEST(test_mode_specs)
{
	struct pn_cli_mode m[PN_CLI_MAX_MODES];
	enum pn_mode plain[PN_CLI_MAX_MODES];
	ck_assert_int_eq(pn_cli_parse_mode_specs("t", "nofpw,umbra,umbra-l3,umbra-l4", m), 4);
	ck_assert_str_eq(m[1].name, "umbra");
	ck_assert_str_eq(m[2].name, "umbra-l3");
	ck_assert_str_eq(m[3].name, "umbra-l4");
	struct pn_scenario sc;
	pn_scenario_defaults(&sc);
	pn_cli_apply_mode(&sc, &m[3]);
	ck_assert(sc.protocol.mode == PN_MODE_UMBRA && sc.protocol.policy == PN_POLICY_L4);
	pn_cli_apply_mode(&sc, &m[1]); /* plain umbra keeps the policy */
	ck_assert(sc.protocol.policy == PN_POLICY_L4 && sc.protocol.row == PN_PROTOCOL_UMBRA_L4);
	pn_cli_apply_mode(&sc, &m[0]); /* then a mode alone of another mode: its first row */
	ck_assert(sc.protocol.mode == PN_MODE_NOFPW && sc.protocol.row == PN_PROTOCOL_NOFPW);
	pn_cli_apply_mode(&sc, &m[1]);
	ck_assert(sc.protocol.row == PN_PROTOCOL_UMBRA);
	fflush(stderr);
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	ck_assert_int_eq(pn_cli_parse_mode_specs("t", "umbra-l4,umbra-l4", m), -1);
	ck_assert_int_eq(pn_cli_parse_mode_specs("t", "umbra-l5", m), -1);
	ck_assert_int_eq(pn_cli_parse_modes("t", "fpw,umbra-l3", plain), -1);
	fclose(stderr);
	stderr = saved;
}
END_TEST

static Suite *umbra_suite(void)
{
	Suite *s = suite_create("umbra");
	TCase *tc = tcase_create("policies");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_wal_per_policy);
	tcase_add_test(tc, test_hints);
	tcase_add_test(tc, test_vacuum_no_image);
	tcase_add_test(tc, test_hazard_verdicts);
	tcase_add_test(tc, test_mode_specs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(umbra_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_pushdown.c: Check suite for the pushdown mode's page server (src/protocol/pushdown.c; label
 * unit). Every test asserts what the engine produced on small scenarios written here or read
 * from scenarios/ (PN_SOURCE_DIR, set by CTest):
 *
 *   reconstruct   the page server's page at the compute's LSN equals the compute's buffer,
 *                 now (images on) and at earlier LSNs (GetPage@LSN of an old version);
 *   images        a page gets an image once it has image_threshold deltas, and a read after
 *                 it replays none; below the threshold the read replays every delta;
 *   distribution  deltas replayed per read: count, sum, p50, p99, max of a known script;
 *   WAL           pushdown writes the WAL nofpw writes (no image), and no data page;
 *   checker       the three mutant pairs and the forced-horizon scenario get their verdicts.
 */
#include "checker.h"
#include "engine.h"
#include "load.h"
#include "pushdown.h"
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define YAML_LEN 2048
#define MAX_SNAPSHOTS 32

static void load_text(const char *yaml, struct pn_scenario *sc)
{
	char err[PN_ERROR_LEN];
	bool ok = pn_scenario_load_string("pushdown.yaml", yaml, strlen(yaml), sc, err,
					  sizeof(err));
	ck_assert_msg(ok, "scenario refused: %s\n%s", err, yaml);
}

/* threshold: pushdown's image_threshold (the other modes do not read it: not written). */
static void random_yaml(const char *mode, uint32_t threshold, char *buf, size_t len)
{
	char key[48] = "";
	if (strcmp(mode, "pushdown") == 0)
		snprintf(key, sizeof key, ", image_threshold: %u", threshold);
	int n = snprintf(buf, len,
			 "name: pushdown-%s\n"
			 "seed: 9\n"
			 "storage: {pages: 24, buffers: 6, wal_segment_size: 64KiB}\n"
			 "protocol: {mode: %s%s}\n"
			 "checkpoint: {interval: 0s, every_transactions: 40, max_wal_size: 0}\n"
			 "aio: {reorder: true}\n"
			 "workload: {kind: random, clients: 3, transactions: 300, "
			 "pages_per_transaction: 2}\n",
			 mode, mode, key);
	ck_assert(n > 0 && n < (int)len);
}

static struct pn_world *start_world(const struct pn_scenario *sc)
{
	struct pn_world *w = calloc(1, sizeof(*w));
	struct pn_world_options o = {.check_each_event = true};
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(pn_world_init(w, sc, &o, NULL), "%s", w->error);
	pn_engine_start(w->e);
	return w;
}

static void drop_world(struct pn_world *w)
{
	pn_world_free(w);
	free(w);
}

/* A valid frame whose every change the page server has ingested. */
static bool comparable(struct pn_engine *e, uint32_t fi)
{
	const struct pn_frame *f = pn_buf_frame(&e->buf, fi);
	return f->page != PN_NO_FRAME && f->valid && f->io_reads == 0 && !f->locked &&
	       !pn_store_is_slru(&e->store, f->page) && f->last_lsn <= pn_ps_ingested(&e->pctx);
}

/* ---- reconstruct ----------------------------------------------------------------------- */

START_TEST(test_reconstruct_equals_buffer)
{
	char yaml[YAML_LEN];
	struct pn_scenario sc;
	random_yaml("pushdown", 4, yaml, sizeof(yaml));
	load_text(yaml, &sc);
	struct pn_world *w = start_world(&sc);
	struct pn_engine *e = w->e;
	uint8_t *page = malloc(e->page_size);
	uint64_t compared = 0, with_deltas = 0;
	int step;
	while ((step = pn_world_step(w)) == PN_STEP_EVENT) {
		for (uint32_t fi = 0; fi < e->buf.nframes; fi++) {
			if (!comparable(e, fi))
				continue;
			uint32_t pg = pn_buf_frame(&e->buf, fi)->page;
			uint32_t n = pn_ps_reconstruct(&e->pctx, pg, pn_ps_ingested(&e->pctx),
						       page);
			ck_assert_msg(memcmp(page, pn_frame_page(&e->buf, fi), e->page_size) == 0,
				      "page %u at event %llu: the page server's copy (%u deltas) "
				      "differs from the buffer",
				      pg, (unsigned long long)w->events, n);
			compared++;
			with_deltas += n > 0;
		}
	}
	ck_assert_int_eq(step, PN_STEP_FINISHED);
	pn_engine_finish_metrics(e); /* the row's figures */
	ck_assert_uint_gt(e->m.row.u[PN_PS_IMAGES], 10);
	ck_assert_uint_gt(compared, 1000);
	ck_assert_uint_gt(with_deltas, 100);
	free(page);
	drop_world(w);
	pn_scenario_free(&sc);
}
END_TEST

struct snapshot {
	uint32_t page;
	pn_lsn lsn;
	uint8_t *bytes;
};

/* No images: every delta stays, so an old LSN must give the page as the compute had it. */
START_TEST(test_reconstruct_at_old_lsn)
{
	char yaml[YAML_LEN];
	struct pn_scenario sc;
	static struct snapshot snaps[MAX_SNAPSHOTS];
	random_yaml("pushdown", 100000, yaml, sizeof(yaml));
	load_text(yaml, &sc);
	struct pn_world *w = start_world(&sc);
	struct pn_engine *e = w->e;
	uint32_t nsnaps = 0;
	while (pn_world_step(w) == PN_STEP_EVENT) {
		if (w->events % 41 != 0 || nsnaps == MAX_SNAPSHOTS)
			continue;
		for (uint32_t fi = 0; fi < e->buf.nframes && nsnaps < MAX_SNAPSHOTS; fi++) {
			if (!comparable(e, fi) || pn_page_lsn(pn_frame_page(&e->buf, fi)) == 0)
				continue;
			struct snapshot *s = &snaps[nsnaps++];
			s->page = pn_buf_frame(&e->buf, fi)->page;
			s->lsn = pn_page_lsn(pn_frame_page(&e->buf, fi));
			s->bytes = malloc(e->page_size);
			memcpy(s->bytes, pn_frame_page(&e->buf, fi), e->page_size);
			break;
		}
	}
	ck_assert_uint_eq(nsnaps, MAX_SNAPSHOTS);
	pn_engine_finish_metrics(e); /* the row's figures */
	ck_assert_uint_eq(e->m.row.u[PN_PS_IMAGES], 0);
	uint8_t *page = malloc(e->page_size);
	uint32_t older = 0;
	for (uint32_t i = 0; i < nsnaps; i++) {
		pn_ps_reconstruct(&e->pctx, snaps[i].page, snaps[i].lsn, page);
		ck_assert_msg(memcmp(page, snaps[i].bytes, e->page_size) == 0,
			      "page %u at LSN %llX differs", snaps[i].page,
			      (unsigned long long)snaps[i].lsn);
		/* the page changed later: the same call at the end gives another page */
		pn_ps_reconstruct(&e->pctx, snaps[i].page, UINT64_MAX, page);
		older += memcmp(page, snaps[i].bytes, e->page_size) != 0;
		free(snaps[i].bytes);
	}
	ck_assert_uint_gt(older, nsnaps / 2);
	free(page);
	drop_world(w);
	pn_scenario_free(&sc);
}
END_TEST

/* ---- images and the cost of reads ------------------------------------------------------- */

/* A script: page 3 changed `n` times, time for the page server, then page 3 read again
 * after other pages pushed it out of the 3 buffers. */
static void script_yaml(uint32_t threshold, uint32_t n, char *buf, size_t len)
{
	int at = snprintf(buf, len,
			  "name: pushdown-script\n"
			  "seed: 4\n"
			  "storage: {pages: 24, buffers: 3, wal_segment_size: 64KiB}\n"
			  "protocol: {mode: pushdown, image_threshold: %u}\n"
			  "checkpoint: {interval: 0s, max_wal_size: 0}\n"
			  "workload:\n  kind: script\n  script:\n",
			  threshold);
	for (uint32_t i = 0; i < n; i++)
		at += snprintf(buf + at, len - (size_t)at,
			       "    - {op: update, page: 3}\n    - {op: commit}\n");
	at += snprintf(buf + at, len - (size_t)at, "    - {op: checkpoint}\n");
	for (uint32_t p = 10; p < 20; p++)
		at += snprintf(buf + at, len - (size_t)at,
			       "    - {op: update, page: %u}\n    - {op: commit}\n", p);
	at += snprintf(buf + at, len - (size_t)at,
		       "    - {op: update, page: 3}\n    - {op: commit}\n");
	ck_assert(at > 0 && at < (int)len);
}

static void run_script(uint32_t threshold, uint32_t n, struct pn_sim_result *r)
{
	char yaml[YAML_LEN];
	struct pn_scenario sc;
	script_yaml(threshold, n, yaml, sizeof(yaml));
	load_text(yaml, &sc);
	pn_sim_run(&sc, r);
	pn_scenario_free(&sc);
	ck_assert_msg(r->status == 0, "status %d: %s %s", r->status, r->viol.detail, r->error);
	/* page 3 read twice, pages 10..19 once each */
	ck_assert_uint_eq(r->m.row.u[PN_PS_READS], 12);
}

START_TEST(test_image_after_threshold)
{
	static struct pn_sim_result at, below;
	run_script(4, 4, &at);    /* 4 deltas, threshold 4: an image before the read */
	run_script(6, 4, &below); /* 4 deltas (5 at the end), threshold 6: none */
	ck_assert_uint_eq(at.m.row.u[PN_PS_IMAGES], 1);
	ck_assert_uint_eq(at.m.row.u[PN_PS_IMAGE_BYTES], 8192);
	ck_assert_uint_eq((uint64_t)at.m.row.v[PN_PS_REPLAY_MAX], 0);
	ck_assert_uint_eq(at.m.row.u[PN_PS_DELTAS_REPLAYED], 0);
	ck_assert_uint_eq(below.m.row.u[PN_PS_IMAGES], 0);
	ck_assert_uint_eq((uint64_t)below.m.row.v[PN_PS_REPLAY_MAX], 4);
	ck_assert_uint_eq(below.m.row.u[PN_PS_DELTAS_REPLAYED], 4);
	/* 4 page-3 deltas and one per other page, each a 69-byte HOT_UPDATE */
	ck_assert_uint_eq(at.m.row.u[PN_PS_DELTA_RECORDS], 4 + 10 + 1);
	ck_assert_uint_eq(at.m.row.u[PN_PS_DELTA_BYTES], 69 * (4 + 10 + 1));
	ck_assert_uint_gt(at.m.row.u[PN_PS_META_BYTES], 0);
	ck_assert_uint_eq(at.m.row.u[PN_PS_FSYNCS], 2 * at.m.row.u[PN_PS_ROUNDS]);
}
END_TEST

START_TEST(test_replay_distribution)
{
	static struct pn_sim_result r;
	run_script(100, 7, &r);
	/* reads: page 3 (0 deltas), pages 10..19 (0 each), page 3 again (7) */
	ck_assert_uint_eq(r.m.row.u[PN_PS_DELTAS_REPLAYED], 7);
	ck_assert_uint_eq((uint64_t)r.m.row.v[PN_PS_REPLAY_P50], 0);
	ck_assert_uint_eq((uint64_t)r.m.row.v[PN_PS_REPLAY_P99], 7);
	ck_assert_uint_eq((uint64_t)r.m.row.v[PN_PS_REPLAY_MAX], 7);
	ck_assert_uint_eq(r.m.row.u[PN_PS_IMAGES], 0);
}
END_TEST

/* ---- WAL: no images, no data writes ---------------------------------------------------- */

START_TEST(test_wal_without_images)
{
	static struct pn_sim_result pd, nofpw, fpw;
	const char *modes[] = {"pushdown", "nofpw", "fpw"};
	struct pn_sim_result *out[] = {&pd, &nofpw, &fpw};
	for (int i = 0; i < 3; i++) {
		char yaml[YAML_LEN];
		struct pn_scenario sc;
		random_yaml(modes[i], 8, yaml, sizeof(yaml));
		load_text(yaml, &sc);
		pn_sim_run(&sc, out[i]);
		pn_scenario_free(&sc);
		ck_assert_msg(out[i]->status == 0, "%s: %s", modes[i], out[i]->viol.detail);
	}
	ck_assert_uint_eq(pd.m.fpi_count, 0);
	ck_assert_uint_eq(pd.m.data_bytes_written, 0);
	ck_assert_uint_eq(pd.m.data_writes, 0);
	ck_assert_uint_eq(pd.m.wal_records, nofpw.m.wal_records);
	ck_assert_uint_eq(pd.m.wal_bytes, nofpw.m.wal_bytes);
	ck_assert_uint_gt(fpw.m.wal_bytes, 2 * pd.m.wal_bytes);
	ck_assert_uint_gt(pd.m.row.u[PN_PS_READS], 0);
	ck_assert_uint_eq(nofpw.m.row.u[PN_PS_READS], 0);
	/* every (record, page) change of the WAL is a delta on the page server */
	ck_assert_uint_eq(pd.m.row.u[PN_PS_DELTA_RECORDS], pd.m.rec_count[PN_REC_HEAP_HOT_UPDATE]);
}
END_TEST

/* ---- the checker ----------------------------------------------------------------------- */

static void assert_verdict(const char *rel, bool violation, enum pn_violation_kind kind,
			   const char *what)
{
	const char *root = getenv("PN_SOURCE_DIR");
	char path[1024], err[PN_ERROR_LEN];
	struct pn_scenario sc;
	struct pn_check_options opt = {.nested_every = 16};
	static struct pn_check_result res;
	snprintf(path, sizeof(path), "%s/%s", root ? root : ".", rel);
	ck_assert_msg(pn_scenario_load(path, &sc, err, sizeof(err)), "%s", err);
	int rc = pn_check_scenario(&sc, &opt, &res);
	pn_scenario_free(&sc);
	ck_assert_msg(rc == 0 && res.ok && !res.error, "%s: rc %d: %s", rel, rc, res.detail);
	ck_assert_int_eq(res.violation, violation);
	ck_assert_uint_gt(res.crash_states, 100); /* it checked states (recoveries: fewer, H3) */
	if (violation)
		ck_assert_msg(res.kind == kind && strstr(res.detail, what), "%s: %s: %s", rel,
			      pn_violation_name(res.kind), res.detail);
}

START_TEST(test_checker_verdicts)
{
	assert_verdict("scenarios/mutants/pushdown-image-unsynced.yaml", true, PN_VIOL_RECOVERY,
		       "the page server's image of page");
	assert_verdict("scenarios/mutants/pushdown-image-unsynced-control.yaml", false,
		       PN_VIOL_NONE, NULL);
	assert_verdict("scenarios/mutants/pushdown-horizon-early.yaml", true, PN_VIOL_EXACTNESS,
		       "differs from the oracle");
	assert_verdict("scenarios/mutants/pushdown-horizon-early-control.yaml", false, PN_VIOL_NONE,
		       NULL);
	assert_verdict("scenarios/mutants/pushdown-ingest-unflushed.yaml", true, PN_VIOL_RECOVERY,
		       "past the end of the WAL");
	assert_verdict("scenarios/mutants/pushdown-ingest-unflushed-control.yaml", false,
		       PN_VIOL_NONE, NULL);
	assert_verdict("scenarios/protocols/pushdown-horizon.yaml", false, PN_VIOL_NONE, NULL);
}
END_TEST

static Suite *pushdown_suite(void)
{
	Suite *s = suite_create("pushdown");
	TCase *tc = tcase_create("pageserver");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_reconstruct_equals_buffer);
	tcase_add_test(tc, test_reconstruct_at_old_lsn);
	tcase_add_test(tc, test_image_after_threshold);
	tcase_add_test(tc, test_replay_distribution);
	tcase_add_test(tc, test_wal_without_images);
	tcase_add_test(tc, test_checker_verdicts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pushdown_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

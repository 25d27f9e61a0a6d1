/*
 * test_store.c: the page store (src/engine/store.c) through its own interface: struct
 * pn_store over real services with a stub environment. Slot offsets for each layout and for
 * a policy's placement, the slot map's single writer and its bounds (ST1), the prototype's
 * shift target, R3 on writes, the selector codec, the space figures, and the relation's
 * size (truncation resets the truncated pages' slots, extension regrows; ST3).
 */
#include "store.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define HEAP 10u
#define PAGES (HEAP + 2u)
#define PS 8192u

static struct pn_scenario sc;
static struct pn_services svc;
static struct pn_store st;

static void stub_submit(void *ctx, struct pn_io *io)
{
	(void)ctx;
	(void)io;
}
static uint64_t stub_now(void *ctx)
{
	(void)ctx;
	return 0;
}
static void stub_schedule(void *ctx, uint32_t p, uint64_t d, uint64_t t)
{
	(void)ctx;
	(void)p;
	(void)d;
	(void)t;
}

static void open_store(enum pn_mode mode, uint32_t generations, enum pn_layout layout)
{
	pn_scenario_defaults(&sc);
	sc.storage.page_size = PS;
	sc.protocol.mode = mode;
	sc.protocol.layout = layout;
	struct pn_env env = {.submit = stub_submit, .now_ns = stub_now, .schedule = stub_schedule};
	ck_assert(pn_svc_init(&svc, &env, 4, PS, 1));
	unsigned flags = mode == PN_MODE_UMBRA ? PN_STORE_SLOTTED : 0;
	ck_assert(pn_store_init(&st, &sc, &svc, HEAP, PAGES, generations, flags));
}

static void teardown(void)
{
	pn_store_free(&st);
	pn_svc_free(&svc);
	pn_scenario_free(&sc);
}

START_TEST(test_in_place_offsets)
{
	open_store(PN_MODE_FPW, 1, PN_LAYOUT_INTERLEAVED);
	ck_assert_uint_eq(pn_store_offset(&st, 0, 0), 0);
	ck_assert_uint_eq(pn_store_offset(&st, 7, 0), 7ull * PS);
	ck_assert(!pn_store_is_slru(&st, HEAP - 1));
	ck_assert(pn_store_is_slru(&st, HEAP));
	ck_assert_uint_eq(pn_store_offset(&st, HEAP + 1, 0), (HEAP + 1ull) * PS); /* SLRU after */
	ck_assert_uint_eq(pn_store_read_runs(&st), 1); /* one contiguous run */
	ck_assert_uint_eq(pn_store_slots_used(&st), HEAP);
	pn_store_check_write(&st, 3, 0, 1, 0); /* not umbra: R3 does not apply */
	ck_assert(!svc.failed);
	pn_store_check(&st);
	teardown();
}
END_TEST

START_TEST(test_umbra_layouts)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	ck_assert_uint_eq(pn_store_offset(&st, 2, 1), (2ull * 3 + 1) * PS); /* a1 a2 a3 b1 ... */
	ck_assert_uint_eq(pn_store_offset(&st, HEAP, 0), (uint64_t)HEAP * 3 * PS);
	ck_assert_uint_eq(pn_store_read_runs(&st), HEAP); /* slot 0 of each page: gaps */
	teardown();
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_STRIPED);
	ck_assert_uint_eq(pn_store_offset(&st, 2, 1), (1ull * HEAP + 2) * PS); /* g * pages + p */
	ck_assert_uint_eq(pn_store_read_runs(&st), 1);
	pn_store_set_slot(&st, 4, 2);
	ck_assert_uint_eq(pn_store_read_runs(&st), 3); /* 0-3, 4 elsewhere, 5-9 */
	teardown();
}
END_TEST

static uint64_t place_calls;
static uint64_t reversed(void *ctx, uint32_t page, uint32_t slot)
{
	ck_assert_ptr_eq(ctx, &place_calls);
	place_calls++;
	return (uint64_t)(HEAP - 1 - page) * 3 + slot;
}

START_TEST(test_policy_placement)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	pn_store_set_placement(&st, 40, reversed, &place_calls);
	ck_assert_uint_eq(pn_store_offset(&st, 0, 2), ((HEAP - 1ull) * 3 + 2) * PS);
	ck_assert_uint_eq(place_calls, 1);
	ck_assert_uint_eq(pn_store_offset(&st, HEAP, 0), 40ull * PS); /* SLRU past its slots */
	/* l3/l4: strict rotation, no baselines, no R3 */
	pn_store_set_slot(&st, 5, 2);
	ck_assert_uint_eq(pn_store_shift_target(&st, 5, 0x7), 0);
	pn_store_check_write(&st, 5, 0, 1, 1);
	ck_assert(!svc.failed);
	teardown();
}
END_TEST

START_TEST(test_shift_target_prototype)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	/* slot 0 current and baseline: the lowest free is 1 */
	ck_assert_uint_eq(pn_store_shift_target(&st, 1, 0), 1);
	/* a checkpoint in progress holds 1: 2 */
	ck_assert_uint_eq(pn_store_shift_target(&st, 1, 1u << 1), 2);
	/* the in-flight checkpoint's baseline counts too */
	st.base_inflight[1] = 2;
	st.inflight_valid = true;
	ck_assert_uint_eq(pn_store_shift_target(&st, 1, 1u << 1), 1); /* none free: rotate */
	pn_store_set_slot(&st, 1, 1); /* 1 current, 0 completed, 2 in flight: rotate to 2 */
	ck_assert_uint_eq(pn_store_shift_target(&st, 1, 0), 2);
	st.inflight_valid = false; /* 2 free again */
	ck_assert_uint_eq(pn_store_shift_target(&st, 1, 0), 2);
	ck_assert_uint_eq(pn_store_shift_target(&st, 1, 1u << 2), 2); /* held: rotate */
	teardown();
}
END_TEST

START_TEST(test_r3_protected_slot)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	pn_store_set_slot(&st, 5, 1);
	pn_store_check_write(&st, 5, 1, 1, 4);    /* its current slot: allowed */
	pn_store_check_write(&st, HEAP, 0, 1, 4); /* SLRU: in place */
	ck_assert(!svc.failed);
	pn_store_check_write(&st, 5, 0, 1, 4); /* base_done[5] = 0 */
	ck_assert(svc.failed);
	ck_assert_int_eq(svc.viol.kind, PN_VIOL_PROTECTED_SLOT);
	ck_assert_uint_eq(svc.viol.page, 5);
	ck_assert_ptr_nonnull(strstr(svc.viol.detail, "checkpoint 4 (R3)"));
	teardown();
}
END_TEST

/* R3's in-place case: a page no record stamped since a baseline's redo pointer (page LSN <=
 * that redo) is written onto its baseline slot as PostgreSQL writes it in place (its changes
 * since are hint-like: VISIBLE's PD_ALL_VISIBLE, hint bits); one LSN past it is not, nor one
 * past the in-flight checkpoint's redo while that one's baselines are valid. */
START_TEST(test_r3_unstamped_in_place)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	uint8_t done[HEAP] = {0}, inflight[HEAP] = {0};
	pn_store_set_baselines_done(&st, done, 100);
	pn_store_check_write(&st, 5, 0, 100, 1); /* unstamped since redo 100 */
	pn_store_check_write(&st, 5, 0, 40, 1);
	/* page 5 shifted to 1 after redo 100; the in-flight checkpoint (redo 200) wrote it */
	inflight[5] = 1;
	pn_store_set_slot(&st, 5, 1);
	pn_store_set_baselines_inflight(&st, inflight, 200);
	pn_store_check_write(&st, 5, 1, 150, 1); /* unstamped since redo 200 */
	ck_assert(!svc.failed);
	pn_store_check_write(&st, 5, 1, 201, 1); /* stamped after it */
	ck_assert(svc.failed);
	ck_assert_int_eq(svc.viol.kind, PN_VIOL_PROTECTED_SLOT);
	teardown();
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	pn_store_set_baselines_done(&st, st.base_done, 100); /* its own map: only the redo */
	ck_assert_uint_eq(st.redo_done, 100);
	pn_store_check_write(&st, 5, 0, 101, 1); /* stamped after redo 100, onto its baseline */
	ck_assert(svc.failed);
	ck_assert_int_eq(svc.viol.kind, PN_VIOL_PROTECTED_SLOT);
	teardown();
}
END_TEST

START_TEST(test_r3_inflight_baseline)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	st.base_inflight[2] = 2;
	pn_store_check_write(&st, 2, 2, 1, 1);
	ck_assert(!svc.failed); /* not valid yet */
	st.inflight_valid = true;
	pn_store_check_write(&st, 2, 2, 1, 1);
	ck_assert(svc.failed);
	teardown();
}
END_TEST

START_TEST(test_set_slot_bounds)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	pn_store_set_slot(&st, 0, 3); /* ST1: no generation 3 */
}
END_TEST

START_TEST(test_set_slot_slru)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	pn_store_set_slot(&st, HEAP, 1); /* SLRU pages never move */
}
END_TEST

START_TEST(test_selector_codec)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	uint32_t len = pn_store_selector_bytes(&st);
	ck_assert_uint_eq(len % sc.storage.sector_size, 0);
	ck_assert_uint_ge(len, 32 + HEAP);
	uint8_t map[HEAP] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0}, out[HEAP];
	uint8_t *buf = malloc(len);
	pn_store_encode_selector(&st, map, 9, 0x1234, buf);
	ck_assert(pn_store_decode_selector(&st, buf, 9, out));
	ck_assert_mem_eq(out, map, HEAP);
	ck_assert(!pn_store_decode_selector(&st, buf, 8, out)); /* another checkpoint's */
	buf[32 + 3] ^= 1;                                       /* torn: CRC */
	ck_assert(!pn_store_decode_selector(&st, buf, 9, out));
	map[3] = 3; /* a generation that does not exist, with a valid CRC */
	pn_store_encode_selector(&st, map, 9, 0x1234, buf);
	ck_assert(!pn_store_decode_selector(&st, buf, 9, out));
	free(buf);
	teardown();
}
END_TEST

START_TEST(test_truncate_regrow)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	ck_assert_uint_eq(st.nblocks, HEAP);
	pn_store_set_slot(&st, 8, 2);
	pn_store_set_slot(&st, 3, 1);
	ck_assert_uint_eq(pn_store_truncate(&st, 5), HEAP);
	ck_assert_uint_eq(st.nblocks, 5);
	ck_assert(pn_store_exists(&st, 4));
	ck_assert(!pn_store_exists(&st, 5));
	ck_assert(!pn_store_exists(&st, HEAP - 1));
	ck_assert(pn_store_exists(&st, HEAP));           /* SLRU pages always exist */
	ck_assert_uint_eq(pn_store_slot(&st, 8), 0);     /* the selector reset */
	ck_assert_uint_eq(pn_store_slot(&st, 3), 1);     /* kept below the new size */
	ck_assert_uint_eq(pn_store_truncate(&st, 7), 5); /* larger: no effect */
	ck_assert_uint_eq(st.nblocks, 5);
	pn_store_extend(&st, 7);
	ck_assert_uint_eq(st.nblocks, 8);
	ck_assert(pn_store_exists(&st, 6));
	pn_store_extend(&st, 2); /* an existing page: no effect */
	ck_assert_uint_eq(st.nblocks, 8);
	for (int i = 0; i < 8; i++)
		pn_store_check(&st); /* ST3 holds */
	teardown();
}
END_TEST

START_TEST(test_slots_used)
{
	open_store(PN_MODE_UMBRA, 3, PN_LAYOUT_INTERLEAVED);
	ck_assert_uint_eq(pn_store_slots_used(&st), HEAP);
	pn_store_note_written(&st, 1, 2);
	pn_store_note_written(&st, 1, 2);
	pn_store_note_written(&st, 2, 1);
	ck_assert_uint_eq(pn_store_slots_used(&st), HEAP + 2);
	teardown();
	open_store(PN_MODE_DOUBLEWRITE, 1, PN_LAYOUT_INTERLEAVED);
	ck_assert_uint_eq(pn_store_slots_used(&st),
			  HEAP); /* the row adds its area (doublewrite.c) */
	teardown();
}
END_TEST

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");
	tcase_add_test(tc, test_in_place_offsets);
	tcase_add_test(tc, test_umbra_layouts);
	tcase_add_test(tc, test_policy_placement);
	tcase_add_test(tc, test_shift_target_prototype);
	tcase_add_test(tc, test_r3_protected_slot);
	tcase_add_test(tc, test_r3_inflight_baseline);
	tcase_add_test(tc, test_r3_unstamped_in_place);
	tcase_add_test_raise_signal(tc, test_set_slot_bounds, SIGABRT);
	tcase_add_test_raise_signal(tc, test_set_slot_slru, SIGABRT);
	tcase_add_test(tc, test_selector_codec);
	tcase_add_test(tc, test_slots_used);
	tcase_add_test(tc, test_truncate_regrow);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(store_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

/*
 * test_judge.c: the judgement of a recovered crash state (model/judge.h), the kind of each
 * violation as data (J1), C1 only after C2/C3 (J2), the fast path's verdict the full path's
 * (J3); and the verdict cache (model/cache.h V1-V4).
 *
 * A freshly formatted engine (the pages as formatting writes them, as the real-disk crash
 * test judges its files before the child starts) passes C2; a byte changed in a page on the
 * device is a checksum failure when checksums verify it, else a difference from the oracle;
 * a recovery that did not finish is PN_VIOL_RECOVERY; a run's acknowledged commit past the
 * recovered end is PN_VIOL_DURABILITY, but only for a state that passed C2/C3. Before the
 * split the kind of a C2 failure was read back from its message (strstr "fails
 * verification"); these tests hold each kind to the failure that makes it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "load.h"
#include "oracle.h"

static const char *const scenario_text =
	"name: judged\n"
	"seed: 11\n"
	"storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}\n"
	"protocol: {mode: fpw, checksums: %s}\n"
	"checkpoint: {interval: 0s, every_transactions: 5, max_wal_size: 0}\n"
	"workload: {kind: random, clients: 2, transactions: 10, pages_per_transaction: 2}\n";

struct fixture {
	struct pn_scenario sc;
	struct pn_world w;
	struct pn_oracle *o;
	struct pn_judge j;
	uint32_t page_size;
};

static void open_fixture(struct fixture *f, bool checksums)
{
	char text[1024], err[PN_ERROR_LEN] = "";
	int n = snprintf(text, sizeof(text), scenario_text, checksums ? "true" : "false");
	ck_assert(n > 0 && (size_t)n < sizeof(text));
	memset(f, 0, sizeof(*f));
	ck_assert_msg(pn_scenario_load_string("judged.yaml", text, (size_t)n, &f->sc, err,
					      sizeof(err)),
		      "%s", err);
	struct pn_world_options opt = {.check_each_event = true, .track = true};
	ck_assert_msg(pn_world_init(&f->w, &f->sc, &opt, NULL), "%s", f->w.error);
	f->o = pn_check_oracle_new(f->w.e);
	pn_judge_init(&f->j, &f->sc);
	f->j.oracle = f->o;
	f->page_size = pn_engine_geometry(f->w.e).page_size;
}

static void close_fixture(struct fixture *f)
{
	pn_judge_free(&f->j);
	pn_oracle_free(f->o);
	pn_world_free(&f->w);
}

/* Changes one byte of page p (fpw keeps page p at p * page_size of the data file). */
static void damage(struct fixture *f, uint32_t p, uint32_t at)
{
	uint64_t off = (uint64_t)p * f->page_size + at;
	uint8_t b;
	pn_device_read(&f->w.dev, PN_FILE_DATA, off, 1, &b);
	b ^= 0x5A;
	pn_device_format_write(&f->w.dev, PN_FILE_DATA, off, &b, 1);
}

static enum pn_violation_kind pages_kind(struct fixture *f, uint32_t *page, char *detail,
					 size_t len)
{
	*page = UINT32_MAX;
	return pn_judge_pages(f->w.e, f->o, pn_engine_wal_flushed(f->w.e), f->j.expected,
			      f->j.found, detail, len, page);
}

START_TEST(formatted_pages_pass)
{
	for (int sums = 0; sums < 2; sums++) {
		struct fixture f;
		char detail[2048] = "";
		uint32_t page;
		open_fixture(&f, sums);
		ck_assert_int_eq(pages_kind(&f, &page, detail, sizeof(detail)), PN_VIOL_NONE);
		ck_assert(pn_check_recovered_pages(f.w.e, f.o, pn_engine_wal_flushed(f.w.e),
						   f.j.expected, f.j.found, detail, sizeof(detail),
						   &page));
		close_fixture(&f);
	}
}
END_TEST

START_TEST(damaged_page_with_checksums_is_checksum)
{
	struct fixture f;
	char detail[2048] = "";
	uint32_t page;
	open_fixture(&f, true);
	damage(&f, 3, f.page_size - 1);
	ck_assert_int_eq(pages_kind(&f, &page, detail, sizeof(detail)), PN_VIOL_CHECKSUM);
	ck_assert_uint_eq(page, 3);
	ck_assert_ptr_nonnull(strstr(detail, "page 3 fails verification"));
	close_fixture(&f);
}
END_TEST

START_TEST(damaged_page_without_checksums_is_exactness)
{
	struct fixture f;
	char detail[2048] = "";
	uint32_t page;
	open_fixture(&f, false);
	damage(&f, 5, f.page_size - 1); /* past the header: verification passes */
	ck_assert_int_eq(pages_kind(&f, &page, detail, sizeof(detail)), PN_VIOL_EXACTNESS);
	ck_assert_uint_eq(page, 5);
	ck_assert_ptr_nonnull(strstr(detail, "page 5 differs from the oracle"));
	ck_assert_ptr_null(strstr(detail, "fails verification"));
	close_fixture(&f);
}
END_TEST

/* J3: the fast path (the point's table of oracle pages, bytes that passed) and the full one
 * give one verdict, for a clean state and a damaged one, judged twice at one point. */
START_TEST(fast_path_is_full_path)
{
	for (int sums = 0; sums < 2; sums++) {
		struct fixture f;
		open_fixture(&f, sums);
		for (int round = 0; round < 3; round++) {
			if (round == 2)
				damage(&f, 7, f.page_size - 2);
			struct pn_verdict fast = {0}, full = {0};
			pn_judge_point(&f.j);
			pn_judge_recovered(&f.j, &f.w, 0, UINT64_MAX, &fast, true);
			pn_judge_recovered(&f.j, &f.w, 0, UINT64_MAX, &full, false);
			ck_assert_uint_eq(fast.kind, full.kind);
			ck_assert_uint_eq(fast.end, full.end);
			if (round < 2) {
				ck_assert_uint_eq(fast.kind, PN_VIOL_NONE);
				continue;
			}
			enum pn_violation_kind want = sums ? PN_VIOL_CHECKSUM : PN_VIOL_EXACTNESS;
			ck_assert_uint_eq(fast.kind, want);
			ck_assert_uint_eq(fast.page, 7);
			ck_assert_uint_eq(full.page, 7);
		}
		close_fixture(&f);
	}
}
END_TEST

START_TEST(unfinished_recovery_is_recovery)
{
	struct fixture f;
	struct pn_verdict v = {0};
	open_fixture(&f, true);
	snprintf(f.w.error, sizeof(f.w.error), "stalled");
	pn_judge_recovered(&f.j, &f.w, 2, UINT64_MAX, &v, true);
	ck_assert_uint_eq(v.kind, PN_VIOL_RECOVERY);
	ck_assert_uint_eq(v.page, UINT32_MAX);
	ck_assert_str_eq(f.j.detail, "recovery did not finish: stalled");
	close_fixture(&f);
}
END_TEST

/* J2: C1 fails a state that passed C2/C3 when an acknowledged commit is past its end, and
 * leaves a failed one as it was. */
START_TEST(lost_commit_is_durability)
{
	struct fixture f;
	open_fixture(&f, true);
	pn_engine_start(f.w.e);
	ck_assert_int_eq(pn_world_run(&f.w), 0);
	struct pn_acks_view acks;
	pn_engine_acks(f.w.e, &acks);
	ck_assert_uint_gt(acks.n, 0);
	pn_lsn last = 0;
	for (uint64_t i = 0; i < acks.n; i++)
		last = PN_MAX(last, acks.lsns[i]);
	struct pn_verdict kept = {.end = last}, lost = {.end = last - 1},
			  failed = {.end = 0, .kind = PN_VIOL_EXACTNESS, .page = 2};
	pn_judge_acks(&f.j, f.w.e, &kept);
	ck_assert_uint_eq(kept.kind, PN_VIOL_NONE);
	pn_judge_acks(&f.j, f.w.e, &lost);
	ck_assert_uint_eq(lost.kind, PN_VIOL_DURABILITY);
	ck_assert_ptr_nonnull(strstr(f.j.detail, "was acknowledged"));
	pn_judge_acks(&f.j, f.w.e, &failed);
	ck_assert_uint_eq(failed.kind, PN_VIOL_EXACTNESS);
	ck_assert_uint_eq(failed.page, 2);
	close_fixture(&f);
}
END_TEST

/* V5: a bounded table empties itself when a lookup finds it full, and keeps V1 and V4. */
START_TEST(cache_bound)
{
	struct pn_cache c = {.limit = 4096};
	for (uint64_t k = 0; k < 10000; k++) {
		uint64_t key = (k + 1) * 0x9E3779B97F4A7C15ull;
		struct pn_verdict *s = pn_cache_slot(&c, key);
		ck_assert(!s->used);
		pn_cache_fill(&c, s, &(struct pn_verdict){.key = key, .used = true, .known = true});
		ck_assert_uint_le(c.len, c.limit);
		ck_assert_uint_le(c.cap, 2 * c.limit);
	}
	pn_cache_check(&c);
	ck_assert_uint_eq(c.clears, 2);
	ck_assert_uint_eq(c.len, 10000 - 2 * 4096);
	ck_assert(pn_cache_slot(&c, 10000 * 0x9E3779B97F4A7C15ull)->used); /* kept since */
	ck_assert(!pn_cache_slot(&c, 4096 * 0x9E3779B97F4A7C15ull)->used); /* emptied */
	pn_cache_free(&c);
}
END_TEST

/* V1-V4: one slot per key, filled once, found again after the table grows, emptied. */
START_TEST(cache_keys)
{
	struct pn_cache c = {0};
	enum { KEYS = 10000 };
	for (uint64_t k = 0; k < KEYS; k++) {
		uint64_t key = k * 0x9E3779B97F4A7C15ull;
		struct pn_verdict *s = pn_cache_slot(&c, key);
		ck_assert(!s->used);
		struct pn_verdict v = {.key = key, .end = k, .used = true, .known = k % 2};
		pn_cache_fill(&c, s, &v);
	}
	pn_cache_check(&c);
	ck_assert_uint_eq(c.len, KEYS);
	for (uint64_t k = 0; k < KEYS; k++) {
		const struct pn_verdict *s = pn_cache_slot(&c, k * 0x9E3779B97F4A7C15ull);
		ck_assert(s->used);
		ck_assert_uint_eq(s->end, k);
		ck_assert_uint_eq(s->known, k % 2);
	}
	pn_cache_clear(&c);
	pn_cache_check(&c);
	ck_assert(!pn_cache_slot(&c, 0x9E3779B97F4A7C15ull)->used);
	pn_cache_free(&c);
}
END_TEST

/* Fills keys first .. first + n - 1 (key k: k * step, its verdict's end k); each key new. */
static void cache_fill_keys(struct pn_cache *c, uint64_t first, uint64_t n, uint64_t step)
{
	for (uint64_t k = first; k < first + n; k++) {
		struct pn_verdict *s = pn_cache_slot(c, k * step);
		ck_assert(!s->used);
		pn_cache_fill(c, s, &(struct pn_verdict){.key = k * step, .end = k, .used = true});
	}
}

/* V6: a cache emptied by its generation answers as a table made anew: a big table (mapped,
 * V4) full of one generation's keys, emptied, then filled with keys whose probes run through
 * the old ones' slots (the same low bits), against a fresh cache given the same keys; the
 * generation's wrap; and the big table taken over by the next cache. */
START_TEST(cache_generations)
{
	const uint64_t step = 0x9E3779B97F4A7C15ull, near = 1ull << 32; /* near: low bits 0 */
	struct pn_cache old = {0}, fresh = {0};
	cache_fill_keys(&old, 1, 40000, step);
	ck_assert_uint_gt(old.mapped, 0);
	for (int round = 0; round < 3; round++) {
		if (round == 2)
			old.gen = UINT32_MAX; /* the next clear wraps */
		pn_cache_clear(&old);
		pn_cache_clear(&fresh);
		pn_cache_check(&old);
		ck_assert_uint_eq(old.len, 0);
		cache_fill_keys(&old, 1, 300, near); /* one probe chain from slot 0 */
		cache_fill_keys(&old, 50000, 1000, step);
		cache_fill_keys(&fresh, 1, 300, near);
		cache_fill_keys(&fresh, 50000, 1000, step);
		pn_cache_check(&old);
		ck_assert_uint_eq(old.len, fresh.len);
		for (uint64_t k = 1; k <= 40000; k += 7) { /* the earlier generation's: gone */
			ck_assert(!pn_cache_slot(&old, k * step)->used);
			ck_assert(!pn_cache_slot(&fresh, k * step)->used);
		}
		for (uint64_t k = 1; k <= 300; k++) {
			const struct pn_verdict *a = pn_cache_slot(&old, k * near);
			ck_assert(a->used && a->end == k);
		}
		for (uint64_t k = 50000; k < 51000; k++) {
			const struct pn_verdict *a = pn_cache_slot(&old, k * step);
			ck_assert(a->used && a->end == k);
		}
	}
	ck_assert_uint_eq(old.gen, 0);
	/* a big table freed is the table of the next cache that grows to its capacity, and
	 * the one it grew out of is the next's at that one: their keys all free there; a
	 * small cache keeps a small table */
	struct pn_verdict *table = old.v;
	uint64_t cap = old.cap;
	pn_cache_free(&old);
	struct pn_cache small = {0}, next = {0};
	cache_fill_keys(&small, 60000, 10, step);
	ck_assert_ptr_ne(small.v, table);
	ck_assert_uint_eq(small.mapped, 0);
	cache_fill_keys(&next, 60000, 30000, step);
	ck_assert_uint_eq(next.cap, cap / 2);
	ck_assert_uint_gt(next.mapped, 0); /* the table old grew out of */
	cache_fill_keys(&next, 100000, 10000, step);
	ck_assert_ptr_eq(next.v, table);
	ck_assert_uint_eq(next.cap, cap);
	for (uint64_t k = 50000; k < 51000; k++)
		ck_assert(!pn_cache_slot(&next, k * step)->used);
	for (uint64_t k = 1; k <= 300; k++)
		ck_assert(!pn_cache_slot(&next, k * near)->used);
	for (uint64_t k = 60000; k < 60000 + 30000; k += 11) {
		const struct pn_verdict *a = pn_cache_slot(&next, k * step);
		ck_assert(a->used && a->end == k);
	}
	pn_cache_check(&next);
	ck_assert_uint_eq(next.len, 40000);
	pn_cache_free(&small);
	pn_cache_free(&next);
	pn_cache_free(&fresh);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("judge");
	TCase *tc = tcase_create("judge");
	tcase_add_test(tc, formatted_pages_pass);
	tcase_add_test(tc, damaged_page_with_checksums_is_checksum);
	tcase_add_test(tc, damaged_page_without_checksums_is_exactness);
	tcase_add_test(tc, fast_path_is_full_path);
	tcase_add_test(tc, unfinished_recovery_is_recovery);
	tcase_add_test(tc, lost_commit_is_durability);
	tcase_add_test(tc, cache_keys);
	tcase_add_test(tc, cache_bound);
	tcase_add_test(tc, cache_generations);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

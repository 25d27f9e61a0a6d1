/*
 * test_services.c: the engine's services (src/engine/services.c) through their own interface,
 * with a stub environment that records what the engine asks of the world: the I/O life and
 * its legal edges (SV1-SV3), completions through io->done with the issuer's ctx, wakes and
 * their tokens, the first violation (SV4); the seam's extension (env.h pn_env_fast) and the
 * fallbacks a caller takes without one: a summarized read through read_sync, a write into the
 * engine's own buffer.
 */
#include "services.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct stub {
	uint64_t now;
	struct pn_io *submitted[8];
	uint32_t nsubmitted;
	uint32_t sched_proc[8];
	uint64_t sched_delay[8], sched_token[8];
	uint32_t nsched;
};

static void stub_submit(void *ctx, struct pn_io *io)
{
	struct stub *s = ctx;
	ck_assert_uint_lt(s->nsubmitted, 8);
	s->submitted[s->nsubmitted++] = io;
}

static uint64_t stub_now(void *ctx) { return ((struct stub *)ctx)->now; }

static void stub_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	struct stub *s = ctx;
	ck_assert_uint_lt(s->nsched, 8);
	s->sched_proc[s->nsched] = proc;
	s->sched_delay[s->nsched] = delay_ns;
	s->sched_token[s->nsched++] = token;
}

static struct stub stub;
static struct pn_services svc;

static void setup(void)
{
	memset(&stub, 0, sizeof(stub));
	struct pn_env env = {.ctx = &stub,
			     .submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule};
	ck_assert(pn_svc_init(&svc, &env, 4, 64, 3));
}

static void teardown(void) { pn_svc_free(&svc); }

struct seen {
	int calls;
	void *ctx;
	bool keep;
};

static void record_done(void *ctx, struct pn_io *io)
{
	struct seen *s = ctx;
	s->calls++;
	s->ctx = ctx;
	io->keep = s->keep;
}

static struct pn_io *issue_one(struct seen *seen)
{
	struct pn_io *io = pn_io_get(&svc);
	io->op = PN_IO_WRITE;
	io->done = record_done;
	io->ctx = seen;
	pn_io_issue(&svc, io);
	return io;
}

START_TEST(test_io_life)
{
	struct seen seen = {0};
	struct pn_io *io = pn_io_get(&svc);
	ck_assert_uint_eq(pn_io_free_count(&svc), 3);
	ck_assert_uint_eq(io->frame, UINT32_MAX);
	ck_assert_ptr_eq(io->buf, svc.io_bufs + (size_t)io->index * 64);
	io->done = record_done;
	io->ctx = &seen;
	pn_io_issue(&svc, io);
	ck_assert_int_eq(io->state, PN_IO_ISSUED);
	ck_assert_uint_eq(stub.nsubmitted, 1);
	ck_assert_ptr_eq(stub.submitted[0], io);
	ck_assert(!pn_io_all_free(&svc));
	pn_io_dispatched(io);
	ck_assert_int_eq(io->state, PN_IO_DISPATCHED);
	pn_io_complete(&svc, io);
	ck_assert_int_eq(seen.calls, 1);
	ck_assert_ptr_eq(seen.ctx, &seen);
	ck_assert_int_eq(io->state, PN_IO_FREE);
	ck_assert(pn_io_all_free(&svc));
	pn_svc_check(&svc);
}
END_TEST

START_TEST(test_io_keep_release)
{
	struct seen seen = {.keep = true};
	struct pn_io *io = issue_one(&seen);
	pn_io_dispatched(io);
	pn_io_complete(&svc, io);
	ck_assert_int_eq(seen.calls, 1);
	ck_assert_int_eq(io->state, PN_IO_DISPATCHED); /* kept: not on the free list */
	ck_assert_uint_eq(pn_io_free_count(&svc), 3);
	ck_assert_ptr_eq(pn_io_at(&svc, io->index), io);
	pn_io_release(&svc, io);
	ck_assert_int_eq(io->state, PN_IO_FREE);
	ck_assert(pn_io_all_free(&svc));
}
END_TEST

START_TEST(test_io_table_bounded)
{
	struct seen seen = {0};
	for (int i = 0; i < 4; i++)
		issue_one(&seen);
	ck_assert_uint_eq(pn_io_free_count(&svc), 0);
	pn_io_get(&svc); /* a fifth: the bound is asserted */
}
END_TEST

/* SV1: I/Os are handed out as from a list of every index with the lowest on top (freed ones
 * pushed back on it): the ones given back, last first, then the next never used; the table
 * beyond the highest handed out is untouched (zeros, as calloc left it). */
START_TEST(test_io_order_lowest_first)
{
	struct seen seen = {0};
	struct pn_io *io[3];
	for (uint32_t i = 0; i < 3; i++) {
		io[i] = issue_one(&seen);
		ck_assert_uint_eq(io[i]->index, i);
		pn_io_dispatched(io[i]);
	}
	ck_assert_uint_eq(svc.ios[3].index, 0); /* never handed out: not written */
	pn_io_complete(&svc, io[1]);
	pn_io_complete(&svc, io[0]);
	ck_assert_uint_eq(pn_io_free_count(&svc), 3);
	static const uint32_t want[3] = {0, 1, 3};
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(pn_io_get(&svc)->index, want[i]);
	ck_assert_uint_eq(pn_io_free_count(&svc), 0);
	ck_assert_uint_eq(svc.io_high, 4);
}
END_TEST

/* pn_svc_check's rotation covers the entries ever handed out (io_high), lowest first: one
 * I/O taken and a broken entry behind it is found at once, wherever the rotation stood. */
START_TEST(test_check_rotation_high_water)
{
	pn_svc_check(&svc); /* nothing handed out: nothing in rotation */
	ck_assert_uint_eq(svc.io_high, 0);
	struct pn_io *io = pn_io_get(&svc);
	ck_assert_uint_eq(io->index, 0);
	ck_assert_uint_eq(svc.io_high, 1);
	pn_svc_check(&svc);
	io->state = 7; /* no such state */
	pn_svc_check(&svc);
}
END_TEST

START_TEST(test_io_complete_before_dispatch)
{
	struct seen seen = {0};
	struct pn_io *io = issue_one(&seen);
	pn_io_complete(&svc, io); /* ISSUED -> FREE is no edge */
}
END_TEST

START_TEST(test_io_dispatch_twice)
{
	struct seen seen = {0};
	struct pn_io *io = issue_one(&seen);
	pn_io_dispatched(io);
	pn_io_dispatched(io);
}
END_TEST

START_TEST(test_io_issue_without_done)
{
	struct pn_io *io = pn_io_get(&svc);
	pn_io_issue(&svc, io); /* SV3: no completion to call */
}
END_TEST

START_TEST(test_release_not_kept)
{
	struct seen seen = {0};
	struct pn_io *io = issue_one(&seen);
	pn_io_dispatched(io);
	pn_io_release(&svc, io);
}
END_TEST

START_TEST(test_wake_tokens)
{
	stub.now = 1000;
	pn_svc_wake(&svc, 1, 50);
	ck_assert_uint_eq(stub.nsched, 1);
	ck_assert_uint_eq(stub.sched_proc[0], 1);
	ck_assert_uint_eq(stub.sched_delay[0], 50);
	ck_assert(pn_svc_scheduled(&svc, 1));
	pn_svc_wake(&svc, 1, 80); /* later than the pending one: stands */
	ck_assert_uint_eq(stub.nsched, 1);
	pn_svc_wake(&svc, 1, 10); /* earlier: supersedes it */
	ck_assert_uint_eq(stub.nsched, 2);
	ck_assert_uint_eq(pn_svc_wake_token(&svc, 1), stub.sched_token[1]);
	ck_assert_uint_gt(stub.sched_token[1], stub.sched_token[0]);
	ck_assert(!pn_svc_fire(&svc, 1, stub.sched_token[0])); /* superseded */
	ck_assert(pn_svc_scheduled(&svc, 1));
	ck_assert(pn_svc_fire(&svc, 1, stub.sched_token[1]));
	ck_assert(!pn_svc_scheduled(&svc, 1));
	ck_assert(!pn_svc_scheduled(&svc, 0));
	ck_assert_uint_eq(pn_svc_now(&svc), 1000);
}
END_TEST

START_TEST(test_violation_first_wins)
{
	ck_assert(!svc.failed);
	pn_svc_violation(&svc, PN_VIOL_MAPPING, 7, "page %u at %d", 7u, 3);
	pn_svc_violation(&svc, PN_VIOL_CHECKSUM, 9, "later");
	ck_assert(svc.failed);
	ck_assert_int_eq(svc.viol.kind, PN_VIOL_MAPPING);
	ck_assert_uint_eq(svc.viol.page, 7);
	ck_assert_str_eq(svc.viol.detail, "page 7 at 3");
	ck_assert_str_eq(pn_violation_name(svc.viol.kind), "mapping");
	/* a failed run fires no process */
	pn_svc_wake(&svc, 2, 5);
	ck_assert(!pn_svc_fire(&svc, 2, pn_svc_wake_token(&svc, 2)));
	pn_svc_check(&svc);
}
END_TEST

/* ---- the extension and its fallbacks ---- */

static uint8_t file_bytes[256]; /* what the stubs' file holds */
static uint32_t fast_calls;

static bool stub_read(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	(void)ctx;
	ck_assert_int_eq(f, PN_FILE_WAL);
	if (off + len > sizeof(file_bytes))
		return false;
	memcpy(out, file_bytes + off, len);
	return true;
}

static bool stub_fast_summary(void *ctx, enum pn_file f, uint64_t off, uint32_t len,
			      const struct pn_summary *s, struct pn_summary_value *out)
{
	uint8_t buf[sizeof(file_bytes)];
	fast_calls++;
	if (!stub_read(ctx, f, off, len, buf))
		return false;
	*out = s->fn(buf, len, s->arg);
	return true;
}

static uint8_t lent_bytes[64];
static uint8_t *stub_write_buf(void *ctx, const struct pn_io *io)
{
	(void)ctx;
	fast_calls++;
	return io->len <= sizeof(lent_bytes) ? lent_bytes : NULL;
}

/* The sum of the bytes, plus arg[0]. */
static struct pn_summary_value byte_sum(const uint8_t *bytes, uint32_t len, const uint64_t *arg)
{
	struct pn_summary_value v = {{arg[0], len}};
	for (uint32_t i = 0; i < len; i++)
		v.v[0] += bytes[i];
	return v;
}

/* A services table over the stubs, with the extension fast (NULL: none). */
static void open_with(struct pn_services *s, const struct pn_env_fast *fast)
{
	struct pn_env env = {.ctx = &stub,
			     .submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule,
			     .read_sync = stub_read,
			     .fast = fast};
	ck_assert(pn_svc_init(s, &env, 4, 64, 3));
}

/* A summarized read gives the same value with the extension's read_summary and without it
 * (read_sync into the engine's buffer, then the summary), and fails alike past the end. */
START_TEST(test_read_summary_fallback)
{
	for (uint32_t i = 0; i < sizeof(file_bytes); i++)
		file_bytes[i] = (uint8_t)(i * 7 + 3);
	static const struct pn_env_fast fast = {.read_summary = stub_fast_summary};
	struct pn_services plain, quick;
	open_with(&plain, NULL);
	open_with(&quick, &fast);
	ck_assert_ptr_nonnull(plain.summary_buf); /* the fallback's bytes, up front */
	ck_assert_ptr_null(quick.summary_buf);
	struct pn_summary s = {.fn = byte_sum, .arg = {1000}};
	fast_calls = 0;
	for (uint32_t off = 0; off < 200; off += 37) {
		struct pn_summary_value a = {{0}}, b = {{0}};
		ck_assert(pn_svc_read_summary(&plain, PN_FILE_WAL, off, 56, &s, &a));
		ck_assert(pn_svc_read_summary(&quick, PN_FILE_WAL, off, 56, &s, &b));
		ck_assert_uint_eq(a.v[0], b.v[0]);
		ck_assert_uint_eq(a.v[1], 56);
		ck_assert_uint_gt(a.v[0], 1000);
	}
	ck_assert_uint_eq(fast_calls, 6); /* the extension was used where there was one */
	struct pn_summary_value v = {{7, 7}};
	ck_assert(!pn_svc_read_summary(&plain, PN_FILE_WAL, 250, 56, &s, &v));
	ck_assert(!pn_svc_read_summary(&quick, PN_FILE_WAL, 250, 56, &s, &v));
	ck_assert_uint_eq(v.v[0], 7); /* a failed read leaves the value */
	pn_svc_free(&plain);
	pn_svc_free(&quick);
}
END_TEST

/* A write's buffer is the extension's lent memory when it gives some, else (no extension, no
 * write_buf, or a NULL answer, or a late-bound offset) the engine's own io->buf. */
START_TEST(test_write_buf_fallback)
{
	static const struct pn_env_fast none = {0}, lend = {.write_buf = stub_write_buf};
	const struct pn_env_fast *fasts[3] = {NULL, &none, &lend};
	for (int k = 0; k < 3; k++) {
		struct pn_services s;
		open_with(&s, fasts[k]);
		for (uint32_t len = 32; len <= 128; len *= 4) {
			struct pn_io *io = pn_io_get(&s);
			uint8_t *own = io->buf;
			io->op = PN_IO_WRITE;
			io->len = len;
			bool lent = k == 2 && len <= sizeof(lent_bytes);
			ck_assert_ptr_eq(pn_io_buffer(&s, io), lent ? lent_bytes : own);
			ck_assert(io->lent == lent);
			io->buf = own; /* back to the engine's, to be freed with the table */
			io->lent = false;
		}
		pn_svc_free(&s);
	}
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(pn_io_why_name(PN_WHY_CKPT), "checkpoint");
	ck_assert_str_eq(pn_io_why_name(PN_WHY_PS_META), "ps-metadata");
	ck_assert_str_eq(pn_violation_name(PN_VIOL_WAL_BEFORE_DATA), "wal_before_data");
	ck_assert_str_eq(pn_violation_name(PN_VIOL_SPACE), "space");
}
END_TEST

static Suite *services_suite(void)
{
	Suite *s = suite_create("services");
	TCase *io = tcase_create("io"), *rest = tcase_create("wake-violation");
	tcase_add_checked_fixture(io, setup, teardown);
	tcase_add_checked_fixture(rest, setup, teardown);
	tcase_add_test(io, test_io_life);
	tcase_add_test(io, test_io_keep_release);
	tcase_add_test(io, test_io_order_lowest_first);
	tcase_add_test_raise_signal(io, test_io_table_bounded, SIGABRT);
	tcase_add_test_raise_signal(io, test_check_rotation_high_water, SIGABRT);
	tcase_add_test_raise_signal(io, test_io_complete_before_dispatch, SIGABRT);
	tcase_add_test_raise_signal(io, test_io_dispatch_twice, SIGABRT);
	tcase_add_test_raise_signal(io, test_io_issue_without_done, SIGABRT);
	tcase_add_test_raise_signal(io, test_release_not_kept, SIGABRT);
	tcase_add_test(rest, test_wake_tokens);
	tcase_add_test(rest, test_violation_first_wins);
	tcase_add_test(rest, test_names);
	tcase_add_test(rest, test_read_summary_fallback);
	tcase_add_test(rest, test_write_buf_fallback);
	suite_add_tcase(s, io);
	suite_add_tcase(s, rest);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(services_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

/*
 * test_procs.c: the state machine of a backend and of the startup process (src/engine/procs.h
 * enum pn_bstate, backend.c pn_backend_set_state; label unit): every path of the diagram is
 * walked, and edges the diagram does not have stop the process.
 */
#include "backend.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>

static void walk(struct pn_proc *p, const enum pn_bstate *to, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		pn_backend_set_state(p, to[i]);
		ck_assert_int_eq(p->state, to[i]);
	}
}

START_TEST(test_paths)
{
	struct pn_proc p = {.kind = PN_PROC_BACKEND, .state = PN_B_NEXT};
	static const enum pn_bstate update[] = {PN_B_PIN, PN_B_DECIDE, PN_B_INSERT, PN_B_NEXT};
	/* the protocol's step (umbra l3/l4: publish, held: the row's sub-state) */
	static const enum pn_bstate proto[] = {PN_B_PIN, PN_B_DECIDE, PN_B_INSERT, PN_B_PROTO,
					       PN_B_NEXT};
	static const enum pn_bstate waits[] = {PN_B_COMMIT_WAIT, PN_B_NEXT,       PN_B_WAIT_CKPT,
					       PN_B_NEXT,        PN_B_EVICT_WAIT, PN_B_NEXT,
					       PN_B_NEXT,        PN_B_DONE};
	walk(&p, update, PN_ARRAY_LEN(update));
	walk(&p, proto, PN_ARRAY_LEN(proto));
	walk(&p, waits, PN_ARRAY_LEN(waits));
	struct pn_proc startup = {.kind = PN_PROC_STARTUP, .state = PN_B_DONE};
	static const enum pn_bstate recovery[] = {PN_B_NEXT, PN_B_WAIT_CKPT, PN_B_DONE};
	walk(&startup, recovery, PN_ARRAY_LEN(recovery));
}
END_TEST

/* A change is never inserted without its image / shift decision (DECIDE). */
START_TEST(test_insert_without_decide)
{
	struct pn_proc p = {.state = PN_B_PIN};
	pn_backend_set_state(&p, PN_B_INSERT);
}
END_TEST

/* A commit is acknowledged (NEXT) only from COMMIT_WAIT or at once: never from PIN. */
START_TEST(test_pin_to_next)
{
	struct pn_proc p = {.state = PN_B_PIN};
	pn_backend_set_state(&p, PN_B_NEXT);
}
END_TEST

START_TEST(test_done_is_final_for_a_backend)
{
	struct pn_proc p = {.state = PN_B_DONE};
	pn_backend_set_state(&p, PN_B_PIN);
}
END_TEST

static Suite *procs_suite(void)
{
	Suite *s = suite_create("procs");
	TCase *tc = tcase_create("bstate");
	tcase_add_test(tc, test_paths);
	tcase_add_test_raise_signal(tc, test_insert_without_decide, SIGABRT);
	tcase_add_test_raise_signal(tc, test_pin_to_next, SIGABRT);
	tcase_add_test_raise_signal(tc, test_done_is_final_for_a_backend, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(procs_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * test_exec.c: the executors (model/exec.h E1-E6, model/exec_procs.h EP1-EP5) over a toy work
 * list, with no checker in it: every unit handed back once, in any order but merged by index
 * to the serial executor's result; a worker that dies or sends bytes that do not decode is
 * failed(); a unit the list cancels is killed and never handed back; the stop flag ends the
 * run at once; a child runs unit after unit, and one that died is replaced. The table: one row
 * per method, named.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "executor.h"

#define ENTRIES 3
#define UNITS 6
#define ALL (ENTRIES * UNITS)

struct toy {
	int next; /* the next index handed out */
	int done[ALL], failed[ALL];
	char why[ALL][400];
	uint64_t value[ALL]; /* merged by index (E3) */
	int64_t pid[ALL];    /* the process that ran it */
	int order[ALL], norder;
	int die, bad, slow; /* an index whose worker _exits(5), sends 3 bytes, sleeps */
	int cancel_after;   /* when this index is done, `slow` is cancelled (-1: never) */
	bool cancel;
	int stop_after; /* when this index is done, the stop flag is raised (-1) */
	volatile sig_atomic_t stop;
};

static int index_of(const struct pn_exec_unit *u) { return (int)(u->entry * UNITS + u->id); }

static bool toy_next(void *arg, struct pn_exec_unit *u)
{
	struct toy *t = arg;
	if (t->next >= ALL)
		return false;
	*u = (struct pn_exec_unit){.entry = (uint32_t)(t->next / UNITS),
				   .id = (uint32_t)(t->next % UNITS)};
	u->desc[0] = (uint8_t)(t->next * 3 + 1);
	t->next++;
	return true;
}

static uint8_t *toy_run(void *arg, const struct pn_exec_unit *u, const struct pn_exec_ctx *ctx,
			size_t *len)
{
	struct toy *t = arg;
	int i = index_of(u);
	if (i == t->die)
		_exit(5);
	if (i == t->slow)
		sleep(30);
	*len = i == t->bad ? 3 : 16;
	uint8_t *b = calloc(1, 16);
	uint64_t v = u->entry * 1000u + u->id * 7u + u->desc[0], pid = (uint64_t)getpid();
	memcpy(b, &v, 8);
	memcpy(b + 8, &pid, 8);
	return b;
}

static bool toy_done(void *arg, const struct pn_exec_unit *u, const uint8_t *b, size_t len,
		     char *why, size_t why_len)
{
	struct toy *t = arg;
	int i = index_of(u);
	if (len != 16) {
		snprintf(why, why_len, "%zu bytes", len);
		return false;
	}
	t->done[i]++;
	memcpy(&t->value[i], b, 8);
	memcpy(&t->pid[i], b + 8, 8);
	t->order[t->norder++] = i;
	t->cancel |= i == t->cancel_after;
	if (i == t->stop_after)
		t->stop = 1;
	return true;
}

static void toy_failed(void *arg, const struct pn_exec_unit *u, const char *why)
{
	struct toy *t = arg;
	int i = index_of(u);
	t->failed[i]++;
	snprintf(t->why[i], sizeof(t->why[i]), "%s", why);
}

static bool toy_cancelled(void *arg, uint32_t entry, uint32_t id)
{
	struct toy *t = arg;
	return t->cancel && (int)(entry * UNITS + id) == t->slow;
}

static const char *toy_name(void *arg, uint32_t entry) { return "toy"; }

static struct pn_exec_work toy_work(struct toy *t)
{
	*t = (struct toy){.die = -1, .bad = -1, .slow = -1, .cancel_after = -1, .stop_after = -1};
	return (struct pn_exec_work){.arg = t,
				     .next = toy_next,
				     .run = toy_run,
				     .done = toy_done,
				     .failed = toy_failed,
				     .cancelled = toy_cancelled,
				     .name = toy_name};
}

/* How many processes ran t's units that were done. */
static int processes(const struct toy *t)
{
	int n = 0;
	for (int i = 0; i < ALL; i++) {
		bool first = t->done[i] > 0;
		for (int j = 0; j < i && first; j++)
			first = !(t->done[j] > 0 && t->pid[j] == t->pid[i]);
		n += first;
	}
	return n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run(struct toy *t, const struct pn_exec_work *w, enum pn_exec_method m,
		uint32_t workers)
{
	struct pn_exec x;
	pn_exec_start(&x, m, workers, &t->stop, 60);
	ck_assert(pn_exec_leads(&x));
	pn_exec_run(&x, w);
	ck_assert_int_eq(pn_exec_end(&x, 0, false), 0);
}

START_TEST(serial_in_order)
{
	struct toy t;
	struct pn_exec_work w = toy_work(&t);
	run(&t, &w, PN_EXEC_SERIAL, 1);
	ck_assert_int_eq(t.norder, ALL);
	for (int i = 0; i < ALL; i++) {
		ck_assert_int_eq(t.order[i], i); /* E3: the list's order */
		ck_assert_int_eq(t.done[i], 1);
		ck_assert_int_eq(t.pid[i], getpid()); /* in this process */
		ck_assert_uint_eq(t.value[i], (i / UNITS) * 1000u + (i % UNITS) * 7u + i * 3 + 1);
	}
}
END_TEST

START_TEST(processes_same_as_serial)
{
	struct toy s, p;
	struct pn_exec_work ws = toy_work(&s), wp = toy_work(&p);
	run(&s, &ws, PN_EXEC_SERIAL, 1);
	run(&p, &wp, PN_EXEC_PROCESSES, 3);
	ck_assert_int_eq(p.norder, ALL);
	for (int i = 0; i < ALL; i++) {
		ck_assert_int_eq(p.done[i], 1); /* E2: once each */
		ck_assert_int_eq(p.failed[i], 0);
		ck_assert_int_ne(p.pid[i], getpid()); /* in a child */
		ck_assert_uint_eq(p.value[i], s.value[i]);
	}
	ck_assert_int_le(processes(&p), 3); /* EP5: a child per slot, not per unit */
}
END_TEST

START_TEST(processes_failures)
{
	struct toy t;
	struct pn_exec_work w = toy_work(&t);
	t.die = 4;
	t.bad = 7;
	run(&t, &w, PN_EXEC_PROCESSES, 2);
	for (int i = 0; i < ALL; i++) {
		bool fails = i == 4 || i == 7;
		ck_assert_int_eq(t.done[i], !fails);
		ck_assert_int_eq(t.failed[i], fails); /* E6: whole or nothing */
	}
	ck_assert_str_eq(t.why[4], "the checking process exited with status 5 before its result");
	ck_assert_str_eq(t.why[7], "its result does not decode: 3 bytes");
	/* EP5: the worker that died is replaced once; the one whose bytes did not decode goes on */
	ck_assert_int_le(processes(&t), 3);
}
END_TEST

START_TEST(processes_cancel)
{
	struct toy t;
	struct pn_exec_work w = toy_work(&t);
	t.slow = 2;
	t.cancel_after = 1;
	double t0 = now_s();
	run(&t, &w, PN_EXEC_PROCESSES, 3);
	ck_assert_msg(now_s() - t0 < 20, "the cancelled unit's child was not killed");
	ck_assert_int_eq(t.done[2], 0); /* E2: dropped unseen */
	ck_assert_int_eq(t.failed[2], 0);
	ck_assert_int_eq(t.norder, ALL - 1);
}
END_TEST

START_TEST(processes_stop)
{
	struct toy t;
	struct pn_exec_work w = toy_work(&t);
	t.slow = 1;
	t.stop_after = 0;
	double t0 = now_s();
	run(&t, &w, PN_EXEC_PROCESSES, 2);
	ck_assert_msg(now_s() - t0 < 20, "the stop flag did not end the run");
	ck_assert_int_eq(t.done[1], 0); /* E5: terminated, not finished */
	ck_assert_int_eq(t.failed[1], 0);
	ck_assert_int_lt(t.next, ALL); /* nothing handed out after the stop */
}
END_TEST

START_TEST(table)
{
	enum pn_exec_method m;
	ck_assert(pn_exec_method_parse("serial", &m) && m == PN_EXEC_SERIAL);
	ck_assert(pn_exec_method_parse("processes", &m) && m == PN_EXEC_PROCESSES);
	ck_assert(pn_exec_method_parse("mpi", &m) && m == PN_EXEC_MPI);
	ck_assert(!pn_exec_method_parse("threads", &m));
	ck_assert(pn_exec_method_built(PN_EXEC_SERIAL) && pn_exec_method_built(PN_EXEC_PROCESSES));
	ck_assert(!pn_exec_method_built(PN_EXEC_METHODS));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exec");
	TCase *tc = tcase_create("exec");
	tcase_add_test(tc, serial_in_order);
	tcase_add_test(tc, processes_same_as_serial);
	tcase_add_test(tc, processes_failures);
	tcase_add_test(tc, processes_cancel);
	tcase_add_test(tc, processes_stop);
	tcase_add_test(tc, table);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

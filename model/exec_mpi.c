/*
 * exec_mpi.c: the MPI executor's rank 0 and its row (model layer, compiled only with
 * PN_MPI; exec_mpi.h, the wire in mpirank.c).
 */
#include "exec_mpi.h"

#include <stdio.h>
#include <stdlib.h>

#include "exec_procs.h"
#include "exec_serial.h"
#include "mpirank.h"

/* Rank 0's own unit's child talks to the ranks' lookups over this channel (mpirank.h MR4). */
static const struct pn_pool_channel lookups = {
	.open = pn_mpi_chan_open,
	.child = pn_mpi_chan_child,
	.parent = pn_mpi_chan_parent,
	.close = pn_mpi_chan_close,
};

struct lead {
	struct pn_exec *x;
	const struct pn_exec_work *w;
	struct pn_pool own;        /* rank 0's own unit: one slot */
	uint64_t units, own_units; /* handed out, of them run by rank 0 */
};

static bool lead_checks(const struct lead *L)
{
	return L->x->ranks <= PN_MPI_LEAD_CHECKS_UPTO || pn_mpi_live() == 0;
}

static void note(const struct lead *L, const char *line)
{
	if (L->w->note)
		L->w->note(L->w->arg, line);
}

static void tick(const struct lead *L)
{
	uint64_t states, schedules;
	pn_pool_live(&L->own, &states, &schedules);
	if (L->w->tick)
		L->w->tick(L->w->arg, states, schedules);
}

/* E4: a leader unit (a trace) in rank 0's own process; every busy rank's silence restarts
 * from its end (rank 0 did not listen meanwhile). */
static void run_here(struct lead *L, const struct pn_exec_unit *u)
{
	struct pn_exec_ctx ctx = {.stop = L->x->stop};
	pn_exec_serial_unit(L->w, u, &ctx);
	pn_mpi_touch();
}

/* E2 after a result: the units the list no longer needs cancelled on their ranks and on
 * rank 0. */
static void cancel(struct lead *L)
{
	for (int k = 1; k < L->x->ranks; k++) {
		uint32_t entry, id;
		if (pn_mpi_busy(k, &entry, &id) && L->w->cancelled(L->w->arg, entry, id))
			pn_mpi_cancel(k);
	}
	pn_pool_cancel(&L->own);
}

/* A unit's answer, or its rank lost: handed to the list (done or failed), or dropped. */
static void answer(struct lead *L, struct pn_mpi_event *ev)
{
	const struct pn_exec_work *w = L->w;
	struct pn_exec_unit u = {.entry = ev->item, .id = ev->unit};
	char why[400], bad[256] = "";
	if (w->cancelled(w->arg, ev->item, ev->unit)) {
		free(ev->bytes);
		return; /* dropped (E2) */
	}
	bool ok = ev->kind == PN_MPI_RESULT &&
		  w->done(w->arg, &u, ev->bytes, ev->len, bad, sizeof(bad));
	free(ev->bytes);
	if (!ok) {
		char line[600];
		if (ev->kind == PN_MPI_RESULT)
			snprintf(why, sizeof(why), "rank %d: its result does not decode: %s",
				 ev->rank, bad);
		else
			snprintf(why, sizeof(why), "%s", ev->why);
		snprintf(line, sizeof(line), "%s; unit %u of %s%s", why, ev->unit,
			 w->name(w->arg, ev->item),
			 ev->kind == PN_MPI_LOST ? " is handed to another rank"
						 : " is handed out again (once)");
		note(L, line);
		w->failed(w->arg, &u, why);
	}
	cancel(L);
}

/* Hands a unit to every idle rank, and to rank 0's own child when it runs units; false when
 * no rank and no child of rank 0 is busy. */
static bool dispatch(struct lead *L)
{
	const struct pn_exec_work *w = L->w;
	const volatile sig_atomic_t *stop = L->x->stop;
	struct pn_exec_unit u;
	bool busy = false;
	for (int k = 1; k < L->x->ranks; k++) {
		while (!*stop && pn_mpi_idle(k) && w->next(w->arg, &u)) {
			if (u.leader) {
				run_here(L, &u);
				continue;
			}
			pn_mpi_send_unit(k, &u);
			L->units++;
		}
		uint32_t entry, id;
		busy |= pn_mpi_busy(k, &entry, &id);
	}
	while (!*stop && L->own.running == 0 && lead_checks(L) && w->next(w->arg, &u)) {
		if (u.leader) {
			run_here(L, &u);
			continue;
		}
		pn_pool_spawn(&L->own, 0, &u);
		L->units++;
		L->own_units++;
	}
	return busy || L->own.running > 0;
}

/* The end: the units still in work when it stopped (E5), the message counts. */
static void end_run(struct lead *L)
{
	struct pn_exec *x = L->x;
	for (int k = 1; k < x->ranks; k++) {
		uint32_t entry, id;
		char who[128], line[400];
		pn_mpi_name(k, who, sizeof(who));
		if (pn_mpi_busy(k, &entry, &id)) {
			snprintf(line, sizeof(line), "stopped while %s checked unit %u of %s", who,
				 id, L->w->name(L->w->arg, entry));
			note(L, line);
		}
	}
	struct pn_mpi_tally t;
	pn_mpi_stop(&t, !*x->stop);
	snprintf(x->summary, sizeof(x->summary),
		 "mpi: %d ranks (%d checking at the end), %llu units (%llu on rank 0), %llu "
		 "messages, %llu bytes through rank 0; lookups: %llu keys asked, %llu answered, "
		 "%llu relearned, %llu units run again, %llu messages, %llu bytes between ranks",
		 x->ranks, pn_mpi_live(), (unsigned long long)L->units,
		 (unsigned long long)L->own_units, (unsigned long long)t.messages,
		 (unsigned long long)t.bytes, (unsigned long long)t.asked,
		 (unsigned long long)t.answered, (unsigned long long)t.relearned,
		 (unsigned long long)t.reruns, (unsigned long long)t.lk_messages,
		 (unsigned long long)t.lk_bytes);
}

static void mpi_lead(struct pn_exec *x, const struct pn_exec_work *w)
{
	if (x->ranks <= 1) {
		pn_exec_serial_ops.lead(x, w);
		return;
	}
	struct lead L = {.x = x, .w = w};
	pn_mpi_lead(x->ranks, x->rank_timeout_s);
	pn_pool_init(&L.own, 1, w, x->stop, &lookups);
	while (dispatch(&L) && !*x->stop) {
		struct pn_mpi_event ev;
		tick(&L);
		if (pn_mpi_next(&ev, L.own.running ? 2 : PN_EXEC_TICK_MS))
			answer(&L, &ev);
		while (L.own.running && pn_pool_collect(&L.own, 0) > 0)
			;
		cancel(&L);
		tick(&L);
	}
	if (*x->stop)
		pn_pool_stop(&L.own);
	tick(&L);
	end_run(&L);
	pn_pool_free(&L.own);
}

static void mpi_start(struct pn_exec *x)
{
	pn_mpi_start(&x->rank, &x->ranks);
	x->workers = x->ranks > 1 ? (uint32_t)x->ranks - 1 : 1;
	x->whole_units = x->ranks <= 1;
}

static void mpi_serve(struct pn_exec *x, const struct pn_exec_work *w) { pn_mpi_serve(w); }

static int mpi_end(struct pn_exec *x, int rc, bool aborted)
{
	return pn_mpi_end(rc, x->rank == 0 && aborted);
}

const struct pn_exec_ops pn_exec_mpi_ops = {
	.name = "mpi",
	.start = mpi_start,
	.lead = mpi_lead,
	.serve = mpi_serve,
	.end = mpi_end,
};

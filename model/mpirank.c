/*
 * mpirank.c: the ranks of an MPI job and their messages (model layer, compiled only with
 * PN_MPI; mpirank.h has rules MR1-MR4 and the message table, docs/cluster.md the user's view).
 */
#include "mpirank.h"

#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOST_LEN 64
#define WHY_LEN 256

struct rank {
	bool busy, lost, hello, cancelled;
	uint32_t item, unit;
	double heard_s; /* when it was last heard from (MR2) */
	uint32_t pid;
	char host[HOST_LEN];
};

static struct {
	int rank, size; /* this process's, the job's (pn_mpi_start) */
	bool stopped;   /* rank 0 sent STOP */
	double timeout_s;
	struct rank *ranks;
	bool lost_any;
	uint64_t messages, bytes; /* sent and received by rank 0 */
} lead;

static void send_to(int rank, int tag, const uint8_t *bytes, size_t len)
{
	PN_ASSERT(len <= INT32_MAX);
	MPI_Send(bytes, (int)len, MPI_BYTE, rank, tag, MPI_COMM_WORLD);
	lead.messages++;
	lead.bytes += len;
}

/* A message's bytes: u32 item, u32 unit, then `len` bytes of body. */
static void send_answer(int tag, uint32_t item, uint32_t unit, const void *body, size_t len)
{
	uint8_t *m = malloc(8 + len);
	PN_ASSERT(m != NULL);
	pn_put32(m, item);
	pn_put32(m + 4, unit);
	if (len)
		memcpy(m + 8, body, len);
	send_to(0, tag, m, 8 + len);
	free(m);
}

/* ---- the end of the job (MR4): the tally, then sends drained and a barrier ---- */
static void tally_bytes(const struct pn_mpi_tally *t, uint8_t out[48])
{
	const uint64_t v[6] = {t->asked,  t->answered,    t->relearned,
			       t->reruns, t->lk_messages, t->lk_bytes};
	for (int i = 0; i < 6; i++)
		pn_put64(out + 8 * i, v[i]);
}

static void tally_add(struct pn_mpi_tally *t, const uint8_t *m)
{
	t->asked += pn_get64(m);
	t->answered += pn_get64(m + 8);
	t->relearned += pn_get64(m + 16);
	t->reruns += pn_get64(m + 24);
	t->lk_messages += pn_get64(m + 32);
	t->lk_bytes += pn_get64(m + 40);
}

/* Every rank: what is still sent to it read (and dropped), its own sends finished, then the
 * barrier; nothing is left in flight at MPI_Finalize. */
static void quiesce(void)
{
	MPI_Request bar;
	bool entered = false;
	for (;;) {
		int flag = 0, n;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (flag) {
			MPI_Get_count(&st, MPI_BYTE, &n);
			uint8_t *m = malloc((size_t)n + 1);
			PN_ASSERT(m != NULL);
			MPI_Recv(m, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			free(m);
			continue;
		}
		bool done = pn_mpi_lk_sends_done();
		if (done && !entered) {
			MPI_Ibarrier(MPI_COMM_WORLD, &bar);
			entered = true;
		}
		if (entered) {
			MPI_Test(&bar, &flag, MPI_STATUS_IGNORE);
			if (flag)
				return;
		}
		usleep(1000);
	}
}

void pn_mpi_start(int *rank, int *size)
{
	MPI_Init(NULL, NULL);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	lead.rank = *rank;
	lead.size = *size;
	pn_mpi_lk_start(*rank, *size);
}

int pn_mpi_end(int rc, bool abort)
{
	struct pn_mpi_tally t;
	if (lead.rank == 0 && !lead.stopped)
		pn_mpi_stop(&t, false); /* rank 0 ended before its check (MR1) */
	fflush(NULL);
	if (lead.lost_any || abort)
		MPI_Abort(MPI_COMM_WORLD, rc); /* MR2 */
	quiesce();                             /* MR4 */
	MPI_Finalize();
	pn_mpi_lk_free();
	free(lead.ranks);
	lead.ranks = NULL;
	return rc;
}

/* ---- a rank other than 0 ---- */
static bool hook(const char *name)
{
	int rank;
	const char *env = getenv(name);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	return env && atoi(env) == rank;
}

/* The unit's child: its result's bytes on fd, then exit. */
static _Noreturn void unit_child(const struct pn_exec_work *w, const struct pn_exec_unit *u, int fd,
				 bool die)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (die)
		raise(SIGKILL);
	size_t len;
	struct pn_unit_lookup lk;
	bool on = pn_mpi_chan_child(&lk, u->entry);
	struct pn_exec_ctx ctx = {.lookup = on ? &lk : NULL};
	uint8_t *bytes = w->run(w->arg, u, &ctx, &len);
	for (size_t at = 0; at < len;) {
		ssize_t n = write(fd, bytes + at, len - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(2);
		at += (size_t)n;
	}
	_exit(0);
}

struct work {
	pid_t pid;
	int fd;
	uint8_t *buf;
	size_t len, cap;
	bool cancelled;
};

/* Reads what the child's pipe holds; false at end of file. */
static bool take(struct work *w)
{
	if (w->len + 65536 > w->cap) {
		w->cap = w->cap * 2 + 65536;
		w->buf = realloc(w->buf, w->cap);
		PN_ASSERT(w->buf != NULL);
	}
	ssize_t n = read(w->fd, w->buf + w->len, w->cap - w->len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	w->len += (size_t)n;
	return n > 0;
}

/* While the child works: its pipe drained, a BEAT every PN_MPI_BEAT_MS, CANCEL obeyed, its
 * channel and the owners' messages served (MR4). */
static void watch(struct work *w, uint32_t item, uint32_t unit)
{
	double beat_s = pn_mpi_clock_s();
	for (;;) {
		struct pollfd p[2] = {{.fd = w->fd, .events = POLLIN},
				      {.fd = pn_mpi_lk_frames_fd(), .events = POLLIN}};
		int ready = poll(p, pn_mpi_lk_frames_fd() >= 0 ? 2 : 1,
				 pn_mpi_lk_on() ? 1 : PN_MPI_BEAT_MS / 5);
		if (ready > 0 && (p[0].revents & (POLLIN | POLLHUP)) && !take(w))
			return;
		pn_mpi_lk_chan_poll(false);
		pn_mpi_lk_pump();
		int flag = 0;
		MPI_Iprobe(0, PN_MPI_TAG_CANCEL, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		if (flag) {
			MPI_Recv(NULL, 0, MPI_BYTE, 0, PN_MPI_TAG_CANCEL, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			w->cancelled = true;
			kill(w->pid, SIGKILL);
		}
		if ((pn_mpi_clock_s() - beat_s) * 1000 >= PN_MPI_BEAT_MS) {
			beat_s = pn_mpi_clock_s();
			send_answer(PN_MPI_TAG_BEAT, item, unit, NULL, 0);
		}
	}
}

static void serve_unit(const struct pn_exec_work *list, const uint8_t *m, bool *first)
{
	uint32_t item = pn_get32(m), unit = pn_get32(m + 4);
	struct pn_exec_unit u = {.entry = item, .id = unit};
	memcpy(u.desc, m + 8, sizeof(u.desc));
	bool die = *first && hook("PN_TEST_MPI_KILL");
	while (*first && hook("PN_TEST_MPI_HANG"))
		pause(); /* a hang: no answer, no beat (a SIGSTOP'd rank makes mpirun 4.1 hang) */
	if (*first && hook("PN_TEST_MPI_DIE"))
		raise(SIGKILL);
	*first = false;
	int p[2];
	PN_ASSERT(pipe(p) == 0);
	pn_mpi_chan_open();
	fflush(NULL);
	struct work w = {.pid = fork(), .fd = p[0]};
	PN_ASSERT(w.pid >= 0);
	if (w.pid == 0) {
		close(p[0]);
		unit_child(list, &u, p[1], die);
	}
	close(p[1]);
	pn_mpi_chan_parent();
	watch(&w, item, unit);
	close(w.fd);
	pn_mpi_chan_close();
	int status = 0;
	while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR)
		;
	char why[WHY_LEN];
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !w.cancelled) {
		send_answer(PN_MPI_TAG_RESULT, item, unit, w.buf, w.len);
	} else {
		if (w.cancelled)
			snprintf(why, sizeof(why), "cancelled");
		else if (WIFSIGNALED(status))
			snprintf(why, sizeof(why), "its checking process died of signal %d",
				 WTERMSIG(status));
		else
			snprintf(why, sizeof(why), "its checking process exited with status %d",
				 WEXITSTATUS(status));
		send_answer(PN_MPI_TAG_FAILED, item, unit, why, strlen(why));
	}
	free(w.buf);
}

void pn_mpi_serve(const struct pn_exec_work *w)
{
	uint8_t hello[4 + HOST_LEN] = {0};
	pn_put32(hello, (uint32_t)getpid());
	gethostname((char *)hello + 4, HOST_LEN - 1);
	send_to(0, PN_MPI_TAG_HELLO, hello, 4 + strlen((char *)hello + 4));
	bool first = true;
	for (;;) {
		MPI_Status st;
		int n, flag = 0;
		pn_mpi_lk_pump(); /* MR4: owners' messages while idle */
		MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag) {
			usleep(pn_mpi_lk_on() ? 1000 : 10000);
			continue;
		}
		MPI_Get_count(&st, MPI_BYTE, &n);
		uint8_t *m = malloc((size_t)n + 1);
		PN_ASSERT(m != NULL);
		MPI_Recv(m, n, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (!pn_mpi_lk_route(0, st.MPI_TAG, m, (size_t)n) &&
		    st.MPI_TAG == PN_MPI_TAG_UNIT && n == 8 + PN_EXEC_DESC_BYTES)
			serve_unit(w, m, &first);
		free(m);
		if (st.MPI_TAG == PN_MPI_TAG_STOP) {
			uint8_t *t = malloc(48);
			PN_ASSERT(t != NULL);
			tally_bytes(pn_mpi_lk_tally(), t);
			pn_mpi_lk_send(0, PN_MPI_TAG_TALLY, t, 48);
			return;
		}
	}
}

/* ---- rank 0 ---- */
void pn_mpi_lead(int size, double timeout_s)
{
	lead.size = size;
	lead.timeout_s = timeout_s;
	lead.ranks = calloc((size_t)size, sizeof(*lead.ranks));
	PN_ASSERT(lead.ranks != NULL);
	lead.ranks[0].lost = true; /* rank 0 leads; it sends itself nothing */
}

bool pn_mpi_idle(int rank) { return !lead.ranks[rank].busy && !lead.ranks[rank].lost; }

int pn_mpi_live(void)
{
	int n = 0;
	for (int k = 1; k < lead.size; k++)
		n += !lead.ranks[k].lost;
	return n;
}

void pn_mpi_send_unit(int rank, const struct pn_exec_unit *u)
{
	struct rank *k = &lead.ranks[rank];
	uint8_t m[8 + PN_EXEC_DESC_BYTES];
	PN_ASSERT(pn_mpi_idle(rank) && !u->leader); /* exec.h E4 */
	pn_put32(m, u->entry);
	pn_put32(m + 4, u->id);
	memcpy(m + 8, u->desc, PN_EXEC_DESC_BYTES);
	send_to(rank, PN_MPI_TAG_UNIT, m, sizeof(m));
	k->busy = true;
	k->cancelled = false;
	k->item = u->entry;
	k->unit = u->id;
	k->heard_s = pn_mpi_clock_s();
}

void pn_mpi_cancel(int rank)
{
	struct rank *k = &lead.ranks[rank];
	if (k->busy && !k->cancelled)
		send_to(rank, PN_MPI_TAG_CANCEL, NULL, 0);
	k->cancelled = true;
}

bool pn_mpi_busy(int rank, uint32_t *item, uint32_t *unit)
{
	const struct rank *k = &lead.ranks[rank];
	*item = k->item;
	*unit = k->unit;
	return k->busy;
}

void pn_mpi_touch(void)
{
	double now = pn_mpi_clock_s();
	for (int k = 1; k < lead.size; k++)
		lead.ranks[k].heard_s = now;
}

void pn_mpi_name(int rank, char *out, size_t len)
{
	const struct rank *k = &lead.ranks[rank];
	if (k->hello)
		snprintf(out, len, "rank %d (pid %u on %s)", rank, k->pid, k->host);
	else
		snprintf(out, len, "rank %d", rank);
}

/* MR2: the first busy rank silent for longer than the timeout. */
static bool find_lost(struct pn_mpi_event *ev)
{
	double now = pn_mpi_clock_s();
	for (int r = 1; r < lead.size; r++) {
		struct rank *k = &lead.ranks[r];
		if (!k->busy || now - k->heard_s < lead.timeout_s)
			continue;
		char who[128];
		pn_mpi_name(r, who, sizeof(who));
		*ev = (struct pn_mpi_event){.kind = PN_MPI_LOST,
					    .rank = r,
					    .item = k->item,
					    .unit = k->unit};
		snprintf(ev->why, sizeof(ev->why), "%s sent nothing for %.0f s: it died or hangs",
			 who, lead.timeout_s);
		k->busy = false;
		k->lost = true;
		lead.lost_any = true;
		pn_mpi_lk_lost(r);
		for (int o = 1; o < lead.size; o++) { /* MR4: its keys are unknown */
			uint8_t *m = malloc(4);
			PN_ASSERT(m != NULL);
			pn_put32(m, (uint32_t)r);
			if (!lead.ranks[o].lost)
				pn_mpi_lk_send(o, PN_MPI_TAG_LOST, m, 4);
			else
				free(m);
		}
		return true;
	}
	return false;
}

/* One message from rank `from`: true when it is an answer (ev filled). */
static bool receive(int from, int tag, uint8_t *m, size_t n, struct pn_mpi_event *ev)
{
	struct rank *k = &lead.ranks[from];
	k->heard_s = pn_mpi_clock_s();
	if (tag == PN_MPI_TAG_HELLO && n >= 4) {
		k->pid = pn_get32(m);
		snprintf(k->host, sizeof(k->host), "%.*s", (int)PN_MIN(n - 4, HOST_LEN - 1),
			 (const char *)m + 4);
		k->hello = true;
		return false;
	}
	if ((tag != PN_MPI_TAG_RESULT && tag != PN_MPI_TAG_FAILED) || n < 8 || k->lost || !k->busy)
		return false; /* a BEAT, or a lost rank's late word (MR2) */
	uint32_t item = pn_get32(m), unit = pn_get32(m + 4);
	if (item != k->item || unit != k->unit)
		return false;
	k->busy = false;
	*ev = (struct pn_mpi_event){.kind = tag == PN_MPI_TAG_RESULT ? PN_MPI_RESULT
								     : PN_MPI_FAILED,
				    .rank = from,
				    .item = item,
				    .unit = unit};
	if (tag == PN_MPI_TAG_RESULT) {
		ev->len = n - 8;
		ev->bytes = malloc(ev->len + 1);
		PN_ASSERT(ev->bytes != NULL);
		memcpy(ev->bytes, m + 8, ev->len);
	} else {
		char who[128];
		pn_mpi_name(from, who, sizeof(who));
		snprintf(ev->why, sizeof(ev->why), "%s: %.*s", who, (int)PN_MIN(n - 8, WHY_LEN),
			 (const char *)m + 8);
	}
	return true;
}

bool pn_mpi_next(struct pn_mpi_event *ev, int wait_ms)
{
	double until_s = pn_mpi_clock_s() + wait_ms / 1000.0;
	do {
		int flag = 0, n;
		MPI_Status st;
		pn_mpi_lk_chan_poll(false); /* MR4: rank 0's own child's frames */
		pn_mpi_lk_pump();
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag) {
			if (find_lost(ev))
				return true;
			usleep(1000);
			continue;
		}
		MPI_Get_count(&st, MPI_BYTE, &n);
		uint8_t *m = malloc((size_t)n + 1);
		PN_ASSERT(m != NULL);
		MPI_Recv(m, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		if (pn_mpi_lk_route(st.MPI_SOURCE, st.MPI_TAG, m, (size_t)n)) {
			free(m);
			continue;
		}
		lead.messages++;
		lead.bytes += (uint64_t)n;
		bool answer = receive(st.MPI_SOURCE, st.MPI_TAG, m, (size_t)n, ev);
		free(m);
		if (answer)
			return true;
	} while (pn_mpi_clock_s() < until_s);
	return false;
}

/* MR4: each rank's TALLY after STOP, at most 10 s (lookups served meanwhile). */
static void tallies(struct pn_mpi_tally *t)
{
	int left = pn_mpi_live();
	double until_s = pn_mpi_clock_s() + 10;
	while (left > 0 && pn_mpi_clock_s() < until_s) {
		int flag = 0, n;
		MPI_Status st;
		pn_mpi_lk_pump();
		MPI_Iprobe(MPI_ANY_SOURCE, PN_MPI_TAG_TALLY, MPI_COMM_WORLD, &flag, &st);
		if (!flag) {
			usleep(1000);
			continue;
		}
		uint8_t m[48] = {0};
		MPI_Get_count(&st, MPI_BYTE, &n);
		MPI_Recv(m, PN_MIN(n, 48), MPI_BYTE, st.MPI_SOURCE, PN_MPI_TAG_TALLY,
			 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (n == 48 && !lead.ranks[st.MPI_SOURCE].lost) {
			tally_add(t, m);
			left--;
		}
	}
}

void pn_mpi_stop(struct pn_mpi_tally *t, bool wait)
{
	for (int k = 1; k < lead.size; k++)
		if (!lead.ranks || !lead.ranks[k].lost)
			send_to(k, PN_MPI_TAG_STOP, NULL, 0);
	lead.stopped = true;
	*t = *pn_mpi_lk_tally(); /* rank 0's own child's lookups */
	if (wait && lead.ranks)
		tallies(t);
	t->messages = lead.messages;
	t->bytes = lead.bytes;
}

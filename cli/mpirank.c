/*
 * mpirank.c: the ranks of an MPI check and their messages (cli layer; mpirank.h has rules
 * M1-M3 and the message table, docs/cluster.md the user's view). Built against MPI only with
 * PN_HAVE_MPI (CMake option PN_MPI); otherwise only pn_mpi_built() and pn_mpi_detected()
 * exist in a meaningful form and the rest assert (M3).
 */
#include "mpirank.h"

#include <stdio.h>
#include <stdlib.h>

bool pn_mpi_detected(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

#ifndef PN_HAVE_MPI
bool pn_mpi_built(void) { return false; }
void pn_mpi_start(int *rank, int *size) { PN_ASSERT(!"built without MPI"); }
int pn_mpi_end(int rc, bool abort) { return rc; }
void pn_mpi_serve(pn_mpi_unit_fn fn, void *arg) { PN_ASSERT(!"built without MPI"); }
void pn_mpi_lead(int size, double timeout_s) { PN_ASSERT(!"built without MPI"); }
bool pn_mpi_idle(int rank) { return false; }
int pn_mpi_live(void) { return 0; }
void pn_mpi_send_unit(int rank, uint32_t item, uint32_t unit, const struct pn_unit *u) {}
void pn_mpi_cancel(int rank) {}
void pn_mpi_name(int rank, char *out, size_t len) { snprintf(out, len, "rank %d", rank); }
bool pn_mpi_busy(int rank, uint32_t *item, uint32_t *unit) { return false; }
bool pn_mpi_next(struct pn_mpi_event *ev, int wait_ms) { return false; }
void pn_mpi_touch(void) {}
void pn_mpi_stop(uint64_t *messages, uint64_t *bytes) { *messages = *bytes = 0; }
#else
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { TAG_UNIT = 1, TAG_CANCEL, TAG_STOP, TAG_HELLO, TAG_BEAT, TAG_RESULT, TAG_FAILED };

#define HOST_LEN 64
#define WHY_LEN 256

struct rank {
	bool busy, lost, hello, cancelled;
	uint32_t item, unit;
	double heard_s; /* when it was last heard from (M2) */
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

bool pn_mpi_built(void) { return true; }

static double clock_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

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
	le32(m, item);
	le32(m + 4, unit);
	if (len)
		memcpy(m + 8, body, len);
	send_to(0, tag, m, 8 + len);
	free(m);
}

void pn_mpi_start(int *rank, int *size)
{
	MPI_Init(NULL, NULL);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	lead.rank = *rank;
	lead.size = *size;
}

int pn_mpi_end(int rc, bool abort)
{
	uint64_t messages, bytes;
	if (lead.rank == 0 && !lead.stopped)
		pn_mpi_stop(&messages, &bytes); /* rank 0 ended before its check (M1) */
	fflush(NULL);
	if (lead.lost_any || abort)
		MPI_Abort(MPI_COMM_WORLD, rc); /* M2 */
	MPI_Finalize();
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
static _Noreturn void unit_child(pn_mpi_unit_fn fn, void *arg, uint32_t item,
				 const struct pn_unit *u, int fd, bool die)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (die)
		raise(SIGKILL);
	size_t len;
	uint8_t *bytes = fn(arg, item, u, &len);
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

/* While the child works: its pipe drained, a BEAT every PN_MPI_BEAT_MS, CANCEL obeyed. */
static void watch(struct work *w, uint32_t item, uint32_t unit)
{
	double beat_s = clock_s();
	for (;;) {
		struct pollfd p = {.fd = w->fd, .events = POLLIN};
		if (poll(&p, 1, PN_MPI_BEAT_MS / 5) > 0 && !take(w))
			return;
		int flag = 0;
		MPI_Iprobe(0, TAG_CANCEL, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		if (flag) {
			MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_CANCEL, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			w->cancelled = true;
			kill(w->pid, SIGKILL);
		}
		if ((clock_s() - beat_s) * 1000 >= PN_MPI_BEAT_MS) {
			beat_s = clock_s();
			send_answer(TAG_BEAT, item, unit, NULL, 0);
		}
	}
}

static void serve_unit(pn_mpi_unit_fn fn, void *arg, const uint8_t *m, bool *first)
{
	uint32_t item = get32(m), unit = get32(m + 4);
	struct pn_unit u;
	pn_unit_decode(m + 8, &u);
	bool die = *first && hook("PN_TEST_MPI_KILL");
	while (*first && hook("PN_TEST_MPI_HANG"))
		pause(); /* a hang: no answer, no beat (a SIGSTOP'd rank makes mpirun 4.1 hang) */
	if (*first && hook("PN_TEST_MPI_DIE"))
		raise(SIGKILL);
	*first = false;
	int p[2];
	PN_ASSERT(pipe(p) == 0);
	fflush(NULL);
	struct work w = {.pid = fork(), .fd = p[0]};
	PN_ASSERT(w.pid >= 0);
	if (w.pid == 0) {
		close(p[0]);
		unit_child(fn, arg, item, &u, p[1], die);
	}
	close(p[1]);
	watch(&w, item, unit);
	close(w.fd);
	int status = 0;
	while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR)
		;
	char why[WHY_LEN];
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !w.cancelled) {
		send_answer(TAG_RESULT, item, unit, w.buf, w.len);
	} else {
		if (w.cancelled)
			snprintf(why, sizeof(why), "cancelled");
		else if (WIFSIGNALED(status))
			snprintf(why, sizeof(why), "its checking process died of signal %d",
				 WTERMSIG(status));
		else
			snprintf(why, sizeof(why), "its checking process exited with status %d",
				 WEXITSTATUS(status));
		send_answer(TAG_FAILED, item, unit, why, strlen(why));
	}
	free(w.buf);
}

void pn_mpi_serve(pn_mpi_unit_fn fn, void *arg)
{
	uint8_t hello[4 + HOST_LEN] = {0};
	le32(hello, (uint32_t)getpid());
	gethostname((char *)hello + 4, HOST_LEN - 1);
	send_to(0, TAG_HELLO, hello, 4 + strlen((char *)hello + 4));
	bool first = true;
	for (;;) {
		MPI_Status st;
		int n;
		MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &n);
		uint8_t *m = malloc((size_t)n + 1);
		PN_ASSERT(m != NULL);
		MPI_Recv(m, n, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (st.MPI_TAG == TAG_UNIT && n == 8 + PN_UNIT_BYTES)
			serve_unit(fn, arg, m, &first);
		free(m);
		if (st.MPI_TAG == TAG_STOP)
			return;
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

void pn_mpi_send_unit(int rank, uint32_t item, uint32_t unit, const struct pn_unit *u)
{
	struct rank *k = &lead.ranks[rank];
	uint8_t m[8 + PN_UNIT_BYTES];
	PN_ASSERT(pn_mpi_idle(rank));
	le32(m, item);
	le32(m + 4, unit);
	pn_unit_encode(u, m + 8);
	send_to(rank, TAG_UNIT, m, sizeof(m));
	k->busy = true;
	k->cancelled = false;
	k->item = item;
	k->unit = unit;
	k->heard_s = clock_s();
}

void pn_mpi_cancel(int rank)
{
	struct rank *k = &lead.ranks[rank];
	if (k->busy && !k->cancelled)
		send_to(rank, TAG_CANCEL, NULL, 0);
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
	double now = clock_s();
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

/* M2: the first busy rank silent for longer than the timeout. */
static bool find_lost(struct pn_mpi_event *ev)
{
	double now = clock_s();
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
		return true;
	}
	return false;
}

/* One message from rank `from`: true when it is an answer (ev filled). */
static bool receive(int from, int tag, uint8_t *m, size_t n, struct pn_mpi_event *ev)
{
	struct rank *k = &lead.ranks[from];
	k->heard_s = clock_s();
	if (tag == TAG_HELLO && n >= 4) {
		k->pid = get32(m);
		snprintf(k->host, sizeof(k->host), "%.*s", (int)PN_MIN(n - 4, HOST_LEN - 1),
			 (const char *)m + 4);
		k->hello = true;
		return false;
	}
	if ((tag != TAG_RESULT && tag != TAG_FAILED) || n < 8 || k->lost || !k->busy)
		return false; /* a BEAT, or a lost rank's late word (M2) */
	uint32_t item = get32(m), unit = get32(m + 4);
	if (item != k->item || unit != k->unit)
		return false;
	k->busy = false;
	*ev = (struct pn_mpi_event){.kind = tag == TAG_RESULT ? PN_MPI_RESULT : PN_MPI_FAILED,
				    .rank = from,
				    .item = item,
				    .unit = unit};
	if (tag == TAG_RESULT) {
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
	double until_s = clock_s() + wait_ms / 1000.0;
	do {
		int flag = 0, n;
		MPI_Status st;
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
		lead.messages++;
		lead.bytes += (uint64_t)n;
		bool answer = receive(st.MPI_SOURCE, st.MPI_TAG, m, (size_t)n, ev);
		free(m);
		if (answer)
			return true;
	} while (clock_s() < until_s);
	return false;
}

void pn_mpi_stop(uint64_t *messages, uint64_t *bytes)
{
	for (int k = 1; k < lead.size; k++)
		if (!lead.ranks || !lead.ranks[k].lost)
			send_to(k, TAG_STOP, NULL, 0);
	lead.stopped = true;
	*messages = lead.messages;
	*bytes = lead.bytes;
}
#endif
